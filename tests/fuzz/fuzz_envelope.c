/*
 * fuzz_envelope.c: libFuzzer target for remote_env_get (worker/
 * envelope.c), which the gateway runs on whatever a process of the tree
 * wrote in its mailbox.  Any bytes must be either refused or decoded into
 * an envelope that encodes back to exactly the same bytes; never a crash
 * or a read past the input.
 *
 * fuzz-deps: worker/envelope.c worker/wire.c
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
	struct remote_env e;
	uint8_t stack[256];
	void *buf;
	size_t len;

	if (remote_env_get(data, size, &e) < 0)
		return 0;
	assert(e.len <= size);
	assert(remote_env_put(&e, &buf, &len, stack, sizeof(stack)) == 0);
	assert(len == size && memcmp(buf, data, size) == 0);
	if (buf != stack)
		free(buf);
	return 0;
}
