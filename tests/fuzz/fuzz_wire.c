/*
 * fuzz_wire.c: libFuzzer target for the frame decoder of worker/wire.c,
 * the first code that touches what a peer or a client sends.  Any bytes
 * must be either refused with a WIRE_E* code or decoded into a frame that
 * encodes back to exactly the same bytes; never a crash, a read past the
 * input or a hang.
 *
 * fuzz-deps: worker/wire.c
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/remote.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_frame f;
	struct wire_msg m;
	struct wire_buf w;
	uint32_t n = 0;
	int rc;

	memset(&w, 0, sizeof(w));
	rc = wire_decode(data, size, 1 << 20, &f);
	if (rc < 0) {
		assert(wire_strerror(rc) != NULL);
		return 0;
	}
	switch (f.type) {
	case WIRE_HELLO:
	case WIRE_WELCOME:
		assert(wire_hello(&w, f.type, &f.u.hello) == 0);
		break;
	case WIRE_PING:
	case WIRE_PONG:
		assert(wire_ping(&w, f.type, f.u.nonce) == 0);
		break;
	case WIRE_ERROR:
		/* The text may hold a NUL: compare what precedes it. */
		if (memchr(f.u.error.text, '\0', f.u.error.text_len) != NULL) {
			wire_buf_free(&w);
			return 0;
		} else {
			char text[WIRE_TEXT_MAX + 1];

			memcpy(text, f.u.error.text, f.u.error.text_len);
			text[f.u.error.text_len] = '\0';
			assert(wire_error(&w, f.u.error.code, text) == 0);
		}
		break;
	case WIRE_BATCH:
		assert(wire_batch_begin(&w, f.u.batch.epoch) == 0);
		while (wire_next(&f, &m) == 1) {
			assert(m.len <= size && m.path_len <= WIRE_PATH_MAX);
			assert(wire_batch_add(&w, &m) == 0);
			n++;
		}
		assert(n == f.u.batch.count);
		wire_batch_end(&w);
		break;
	default:
		assert(0);
	}
	assert(w.len == size && memcmp(w.p, data, size) == 0);
	wire_buf_free(&w);
	return 0;
}
