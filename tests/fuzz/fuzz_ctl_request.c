/*
 * fuzz_ctl_request.c: libFuzzer target for the control request decoder,
 * the parser actord runs on bytes from any local client.  Beyond "never
 * crash, never overread", it checks a round trip: whatever the decoder
 * accepts re-encodes into a request that decodes to the same thing.
 *
 * fuzz-deps: supervisor/ctlproto.c supervisor/spec.c
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/ctlproto.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_request	 a, b;
	struct ctl_buf		 buf;
	uint32_t		 total;
	char			 err[256];

	(void)ctl_frame_length(data, size, CTL_MAX_REQUEST, &total);
	if (ctl_request_decode(data, size, &a, err, sizeof(err)) != CTL_OK)
		return 0;
	ctl_buf_init(&buf, CTL_MAX_REQUEST);
	if (ctl_request_encode(&buf, &a) != 0)
		abort();
	if (ctl_request_decode(buf.data, buf.len, &b, err, sizeof(err)) !=
	    CTL_OK)
		abort();
	if (a.cmd != b.cmd || a.present != b.present ||
	    strcmp(a.path, b.path) != 0 || a.tag != b.tag ||
	    a.timeout_ms != b.timeout_ms || a.signo != b.signo ||
	    a.cursor != b.cursor || a.wait != b.wait ||
	    a.datalen != b.datalen ||
	    (a.datalen > 0 && memcmp(a.data, b.data, a.datalen) != 0))
		abort();
	ctl_buf_free(&buf);
	return 0;
}
