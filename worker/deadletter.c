/*
 * deadletter.c: dead letters as anyone reads them: recipient, reason, the
 * message header and the first bytes of its payload, and the counters.
 * Owns nothing: a thin, checked view of shm's dead-letter ring.  Must never
 * write a dead letter (senders and actord do, through shm).
 */
#include <string.h>

#include "worker/actor_impl.h"

int
actor_dl_read(struct shm_arena *a, uint64_t *cursor,
    struct actor_dead_letter *out)
{
	struct shm_dead_letter d;
	int rc;

	if ((rc = shm_dl_read(a, cursor, &d)) <= 0)
		return rc;
	memset(out, 0, sizeof(*out));
	out->seq = d.seq;
	out->time_ns = d.time_ns;
	out->recipient = d.recipient;
	out->reason = d.reason;
	out->reason_name = shm_reason_name((enum shm_dl_reason)d.reason);
	out->lane = d.lane;
	out->tag = d.msg.tag;
	out->len = d.msg.len;
	out->flags = d.msg.flags;
	out->sender.index = d.msg.sender.index;
	out->sender.incarnation = d.msg.sender.incarnation;
	out->corr = d.msg.corr;
	out->attempts = d.msg.attempts;
	out->payload_len = d.payload_len <= sizeof(out->payload) ?
	    d.payload_len : sizeof(out->payload);
	memcpy(out->payload, d.payload, out->payload_len);
	return 1;
}

void
actor_dl_counters(struct shm_arena *a, struct actor_dl_counters *c)
{
	c->total = shm_dl_total(a);
	c->lost = shm_dl_lost(a);
	c->head = shm_dl_head(a);
}
