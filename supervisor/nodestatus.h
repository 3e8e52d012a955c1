/*
 * nodestatus.h: the text a node's gateway commits as its state
 * (gateway/status.c writes it), read back by actorctl nodes and by the
 * metrics (nodestatus.c parses it).  One line for the node, one per peer:
 *
 *	node NAME EPOCH KEYS_REFUSED FRAMES_REFUSED STALE
 *	peer NAME STATE EPOCH ENDPOINT RTT_US MSGS_OUT MSGS_IN BYTES_OUT
 *	     BYTES_IN QUEUED DROPPED REFUSED DOWNS
 *
 * (a peer is one line; EPOCH in hex, 0 when not known; STATE connecting,
 * up or down).
 */
#ifndef ACTORD_NODESTATUS_H
#define ACTORD_NODESTATUS_H

#include <stddef.h>

#define NODESTATUS_FIELD	128

struct nodestatus_self {
	char		 name[NODESTATUS_FIELD];
	char		 epoch[NODESTATUS_FIELD];
	unsigned long long keys_refused, frames_refused, stale;
};

struct nodestatus_peer {
	char		 name[NODESTATUS_FIELD];
	char		 state[NODESTATUS_FIELD];
	char		 epoch[NODESTATUS_FIELD];
	char		 address[NODESTATUS_FIELD];
	long long	 rtt_us;
	unsigned long long msgs_out, msgs_in, bytes_out, bytes_in;
	unsigned	 queued;
	unsigned long long dropped, refused, downs;
};

/* nodestatus.c: 0 with *peers (malloc'd, *n of them), or -1 (no memory). */
int	 nodestatus_parse(const void *text, size_t len,
	    struct nodestatus_self *, struct nodestatus_peer **peers,
	    size_t *n);

#endif /* ACTORD_NODESTATUS_H */
