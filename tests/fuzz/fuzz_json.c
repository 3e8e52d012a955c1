/*
 * fuzz_json.c: libFuzzer target for the JSON parser in tools/json.c.
 *
 * fuzz-deps: tools/json.c supervisor/ctlproto.c supervisor/spec.c
 */
#include <stdint.h>
#include <stdlib.h>

#include "tools/json.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json *v;

	v = json_parse((const char *)data, size, NULL, 0);
	json_free(v);
	return 0;
}
