/*
 * fuzz_config.c: libFuzzer target for config.c and spec.c.  Any text must
 * give either a spec that copies into an equal spec, or exactly one line
 * of error; never a crash, a leak or a hang.
 *
 * fuzz-deps: supervisor/config.c supervisor/spec.c supervisor/ctlproto.c supervisor/nodespec.c supervisor/execpath.c worker/keys.c worker/placement.c -lconfig
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/config.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct actord_spec	*spec;
	struct child_spec	 copy;
	char			*text, err[1024];
	size_t			 i;

	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	spec = config_parse_string(text, "fuzz.conf", err, sizeof(err));
	if (spec == NULL) {
		if (err[0] == '\0' || strchr(err, '\n') != NULL)
			abort();
	} else {
		for (i = 0; i < spec->root.nchildren; i++) {
			if (spec_child_copy(&copy, &spec->root.children[i]) ==
			    -1)
				continue;
			if (!spec_child_equal(&copy, &spec->root.children[i]))
				abort();
			spec_child_clear(&copy);
		}
		spec_free(spec);
	}
	free(text);
	return 0;
}
