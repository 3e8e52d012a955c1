/*
 * fuzz_ctl_response.c: libFuzzer target for the control answer decoder
 * (what actorctl reads), and for the Prometheus text made from whatever
 * it accepts.
 *
 * fuzz-deps: supervisor/ctlproto.c supervisor/spec.c supervisor/metrics.c supervisor/control.c supervisor/log.c supervisor/loop.c supervisor/nodestatus.c
 */
#include <stdint.h>
#include <stdlib.h>

#include "supervisor/ctlproto.h"
#include "supervisor/metrics.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_response	 r;
	struct ctl_buf		 text;
	char			 err[256];

	if (ctl_response_decode(data, size, &r, err, sizeof(err)) != 0)
		return 0;
	ctl_buf_init(&text, CTL_MAX_RESPONSE * 8);
	(void)metrics_write(&text, &r);
	ctl_buf_free(&text);
	ctl_response_free(&r);
	return 0;
}
