/*
 * nodestatus.c: reading back the status text of a node's gateway
 * (nodestatus.h), for actorctl nodes and the metrics.  It is a worker's
 * text: every line is parsed whole or skipped, and nothing in it is
 * trusted beyond the fields it fills.
 *
 * Owns: the parser.  Must never read past len.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/nodestatus.h"

int
nodestatus_parse(const void *text, size_t len, struct nodestatus_self *self,
    struct nodestatus_peer **peers, size_t *n)
{
	struct nodestatus_peer p, *t;
	char *copy, *line, *save = NULL;

	memset(self, 0, sizeof(*self));
	*peers = NULL;
	*n = 0;
	if ((copy = malloc(len + 1)) == NULL)
		return -1;
	memcpy(copy, text, len);
	copy[len] = '\0';
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "node %127s %127s %llu %llu %llu", self->name,
		    self->epoch, &self->keys_refused, &self->frames_refused,
		    &self->stale) == 5)
			continue;
		memset(&p, 0, sizeof(p));
		if (sscanf(line, "peer %127s %127s %127s %127s %lld %llu %llu "
		    "%llu %llu %u %llu %llu %llu", p.name, p.state, p.epoch,
		    p.address, &p.rtt_us, &p.msgs_out, &p.msgs_in,
		    &p.bytes_out, &p.bytes_in, &p.queued, &p.dropped,
		    &p.refused, &p.downs) != 13)
			continue;
		if ((t = reallocarray(*peers, *n + 1, sizeof(**peers))) ==
		    NULL) {
			free(copy);
			free(*peers);
			*peers = NULL;
			*n = 0;
			return -1;
		}
		*peers = t;
		(*peers)[(*n)++] = p;
	}
	free(copy);
	return 0;
}
