/*
 * status.c: the gateway's peer table as others read it.  The gateway
 * commits it as its state snapshot (actor_commit), in the text format of
 * supervisor/nodestatus.h, which actord reads with actor_snapshot_read
 * for `actorctl nodes` and its metrics.  It is committed when something
 * changed, at most once per loop round, and with the heartbeats, so an
 * idle gateway wakes for nothing else.
 *
 * Owns: writing the text.  Must never commit more than the state region
 * holds (a table cut short ends at a whole line).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"

#define STATUS_MAX	65536

static const char *const state_names[] = { "connecting", "up", "down" };

void
status_changed(struct gateway *gw)
{
	if (gw->status_due == 0)
		gw->status_due = gw_now();
}

void
status_commit(struct gateway *gw, int64_t now)
{
	const struct peer *p;
	char *buf;
	size_t len, max = actor_snapshot_max(gw->self), i;
	int n;

	if (gw->status_due == 0 || now < gw->status_due)
		return;
	gw->status_due = 0;
	if (gw->status_text == NULL &&
	    (gw->status_text = malloc(STATUS_MAX)) == NULL)
		return;
	buf = gw->status_text;
	if (max > STATUS_MAX)
		max = STATUS_MAX;
	n = snprintf(buf, max, "node %s %016llx %llu %llu %llu\n",
	    gw->ns->name, (unsigned long long)gw->epoch,
	    (unsigned long long)gw->keys_refused,
	    (unsigned long long)gw->frames_refused,
	    (unsigned long long)gw->stale);
	if (n < 0 || (size_t)n >= max)
		return;
	len = (size_t)n;
	for (i = 0; i < gw->npeers; i++) {
		p = &gw->peers[i];
		n = snprintf(buf + len, max - len, "peer %s %s %016llx %s %lld "
		    "%llu %llu %llu %llu %u %llu %llu %llu\n", p->spec->name,
		    state_names[p->state], (unsigned long long)p->epoch,
		    p->spec->endpoint, (long long)(p->rtt_ns / 1000),
		    (unsigned long long)p->msgs_out,
		    (unsigned long long)p->msgs_in,
		    (unsigned long long)p->bytes_out,
		    (unsigned long long)p->bytes_in, p->qlen,
		    (unsigned long long)p->dropped,
		    (unsigned long long)p->refused,
		    (unsigned long long)p->downs);
		if (n < 0 || (size_t)n >= max - len)
			break;
		len += (size_t)n;
	}
	(void)actor_commit(gw->self, buf, len);
}
