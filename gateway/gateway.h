/*
 * gateway.h: actord-gateway, the network side of a node (issue 14).
 * actord starts it as the worker /@gateway when actord.conf has a node
 * block, with the node's settings in ACTORD_NODE; it is an actor of the
 * tree (its own mailbox, restarted with backoff, shown in status), and the
 * only process of the tree that reads from the network.
 *
 * One thread, one loop (main.c): poll over the mailbox's doorbell and
 * the ZMQ_FD of the listener, of one connection per peer with its
 * monitor, and of the ZAP handler, with one deadline (the next
 * heartbeat).  Whoever sends on a socket, or stops receiving from it
 * before it said EAGAIN, sets its used flag: the loop then looks at it
 * before sleeping (a send may take the signal of a message that came).
 * So does whoever opens a socket: a pipe never read raises no signal.  Every connection is
 * CurveZMQ with the node's key pair; the ZAP handler admits only the keys
 * the node block lists.
 *
 * Who owns what:
 *   main.c      settings, keys, the loop, shutdown
 *   zap.c       the ZAP handler: which public keys may connect
 *   listener.c  the ROUTER socket: connections of peers and clients,
 *               HELLO/WELCOME, PING/PONG, frames refused and counted
 *   peer.c      the DEALER socket to each peer: its state (connecting,
 *               up, down), heartbeats, the send queue while down, batches
 *   local.c     the mailbox: envelopes from local actors out to peers,
 *               messages from peers and clients in to local actors, and
 *               the asks both ways
 *   watch.c     death watch across nodes, both ways
 *   shards.c    the shards of groups spanning nodes: to the node that
 *               runs each
 *   status.c    the peer table as others read it (the committed state)
 */
#ifndef ACTORD_GATEWAY_H
#define ACTORD_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/map.h"
#include "shm/shm.h"
#include "supervisor/spec.h"
#include "worker/actor.h"
#include "worker/remote.h"

#define GW_ZAP_ENDPOINT		"inproc://zeromq.zap.01"
#define GW_ZAP_DOMAIN		"actord"
#define GW_BATCH_TAKE		256	/* mailbox messages per round */
#define GW_ASK_TIMEOUT_NS	(60LL * 1000000000)	/* asks from afar */
#define GW_WATCHES_PER_PEER	4096	/* a peer's watches of our actors */
#define GW_RID_MAX		64	/* a ZeroMQ routing id */

enum peer_state {
	PEER_CONNECTING = 0,	/* never up yet: HELLO sent, no WELCOME */
	PEER_UP,		/* WELCOME came, frames flow */
	PEER_DOWN		/* was up; lost; reconnecting */
};

/* A message kept for a peer that is not up (the send queue). */
struct gw_queued {
	struct gw_queued *next;
	int		 gen;		/* REMOTE_GEN of the epoch it was meant
					   for; -1: any */
	struct wire_msg	 m;		/* path and data point into buf */
	uint8_t		 buf[];
};

struct peer {
	const struct peer_spec *spec;
	unsigned	 slot;		/* in the node block's peers */
	uint8_t		 pub[KEY_BYTES];
	enum peer_state	 state;
	void		*dealer;	/* our connection to it */
	void		*monitor;	/* its events (PAIR, inproc) */
	bool		 dealer_used;	/* since the loop looked (main.c) */
	bool		 monitor_used;
	uint64_t	 session;	/* of the dealer */
	uint64_t	 epoch;		/* from its WELCOME; 0: none yet */
	uint32_t	 max_frame;	/* from its WELCOME */
	int64_t		 last_rx;	/* ns: the last frame from it */
	int64_t		 next_ping;	/* ns */
	int64_t		 pinged;	/* ns: our last PING */
	int64_t		 opened;	/* ns: the dealer's creation */
	uint64_t	 ping_nonce;
	int64_t		 ping_sent;	/* ns, 0: none waiting */
	struct wire_buf	 out;		/* the batch being filled, if count */
	struct gw_queued *qhead, *qtail;
	uint32_t	 qlen;
	uint64_t	 rx_session;	/* newest session seen on the listener */
	uint64_t	 rx_epoch;	/* its epoch as its HELLO said */
	/* Counters (actorctl nodes). */
	uint64_t	 msgs_out, msgs_in, bytes_out, bytes_in;
	uint64_t	 dropped;	/* dead letters for it */
	uint64_t	 refused;	/* handshakes it refused */
	bool		 auth_refused;	/* the last one, and no WELCOME since */
	uint64_t	 downs;
	int64_t		 rtt_ns;	/* the last PING's round trip */
	uint32_t	 watches_in;	/* its watches of ours (watch.c) */
};

/* A connection on the listener: a peer's dealer, or a client. */
struct conn {
	struct conn	*next;
	uint8_t		 rid[GW_RID_MAX];
	size_t		 rid_len;
	char		 name[WIRE_NAME_MAX + 1];	/* its key's, by ZAP */
	int		 peer;		/* slot, or -1: a client */
	bool		 hello;		/* HELLO came */
	bool		 closed;	/* too many bad frames: ignored */
	uint64_t	 session;
	uint64_t	 epoch;
	unsigned	 bad;		/* frames refused */
	int64_t		 last_rx;
};

/* An ask of a local actor, sent to a peer: answered when its REPLY comes. */
struct gw_fwd {
	uint64_t	 corr;		/* on the wire; 0: free */
	struct actor_caller caller;
	unsigned	 peer;
	uint8_t		 kind;		/* WK_ASK or WK_LOOKUP */
};

/* An ask from a peer or client, asked of a local actor by the gateway. */
struct gw_inask {
	uint64_t	 corr;		/* ours (actor_ask_send); 0: free */
	int		 peer;		/* slot, or -1: a client */
	uint8_t		 rid[GW_RID_MAX];	/* a client's connection */
	size_t		 rid_len;
	uint32_t	 from_index;
	uint32_t	 from_inc;
	uint64_t	 wcorr;		/* the asker's corr */
	uint8_t		 kind;
};

/* A watch across nodes: a watcher, an actor on the other side. */
struct gw_watch {
	unsigned	 peer;		/* the other node */
	uint32_t	 tidx, tinc;	/* the watched actor (0: any inc) */
	uint32_t	 widx, winc;	/* its watcher */
};

struct gw_watches {
	struct gw_watch	*w;
	size_t		 n, cap;
};

struct gateway {
	struct node_spec *ns;
	struct actor	*self;
	struct shm_arena *arena;
	uint32_t	 idx;		/* our mailbox */
	int		 bell;		/* its doorbell */
	uint64_t	 epoch;		/* this node's: the arena's id */
	uint64_t	 session;	/* the next dealer's */
	uint8_t		 pub[KEY_BYTES];
	char		 secret[KEY_Z85_LEN + 1];
	void		*zctx;
	void		*router;	/* the listener */
	void		*zap;		/* REP on GW_ZAP_ENDPOINT */
	bool		 router_used;	/* since the loop looked (main.c) */
	bool		 zap_used;
	struct peer	*peers;
	size_t		 npeers;
	struct conn	*conns;
	struct gw_map	 fwd;		/* struct gw_fwd by wire corr */
	uint64_t	*fwd_by_entry;	/* wire corr by deferred entry */
	uint32_t	 nentries;
	uint32_t	 fwd_seq;
	struct gw_map	 inask;		/* struct gw_inask by our corr */
	struct gw_watches wout;		/* ours of the peers' actors */
	struct gw_watches win;		/* the peers' of ours */
	struct wire_buf	 tmp;		/* frames other than batches */
	struct wire_buf	 cout;		/* a batch for one client */
	bool		 dirty;		/* a batch waits to be flushed */
	bool		 stop;
	/* Counters (actorctl nodes, the log). */
	uint64_t	 keys_refused;	/* unknown keys, by ZAP */
	uint64_t	 frames_refused;	/* bad frames on the listener */
	uint64_t	 stale;		/* messages for a past epoch */
	uint64_t	 status_gen;	/* committed state: bumped per change */
	int64_t		 status_due;	/* ns: commit the status then */
	char		*status_text;	/* status.c's buffer */
};

/* main.c */
int64_t	 gw_now(void);
void	 gw_zsend_error(const char *what, void *sock);

/* zap.c */
int	 zap_open(struct gateway *);
void	 zap_handle(struct gateway *);

/* listener.c */
int	 listener_open(struct gateway *);
void	 listener_recv(struct gateway *);
int	 listener_send(struct gateway *, const uint8_t *rid, size_t rid_len,
	    const void *frame, size_t len);
void	 listener_close(struct gateway *);

/* peer.c */
int	 peers_open(struct gateway *);
struct peer *peer_by_name(struct gateway *, const char *name);
void	 peer_recv(struct gateway *, struct peer *);
void	 peer_monitor(struct gateway *, struct peer *);
void	 peer_tick(struct gateway *, int64_t now);
void	 peer_pinged(struct gateway *, struct peer *, int64_t now);
int64_t	 peer_deadline(const struct gateway *);
int	 peer_send(struct gateway *, struct peer *, const struct wire_msg *,
	    int gen);
enum shm_dl_reason peer_unsent(const struct peer *, const struct wire_msg *);
void	 peers_flush(struct gateway *);
void	 peers_close(struct gateway *);

/* local.c */
int	 local_open(struct gateway *);
int	 local_take(struct gateway *);
void	 local_batch(struct gateway *, struct conn *, struct wire_frame *);
void	 local_peer_down(struct gateway *, struct peer *, int code);
void	 local_dead_letter(struct gateway *, const struct wire_msg *,
	    uint32_t recipient, enum shm_dl_reason);
void	 local_close(struct gateway *);

/* watch.c */
int	 watch_out(struct gateway *, struct peer *, const struct wire_msg *);
void	 watch_terminated_in(struct gateway *, struct conn *,
	    const struct wire_msg *);
void	 watch_in(struct gateway *, struct conn *, const struct wire_msg *);
void	 watch_local_death(struct gateway *, const void *, size_t);
void	 watch_peer_down(struct gateway *, struct peer *);
void	 watch_free(struct gateway *);

/* shards.c */
int	 shard_route(struct gateway *, struct remote_env *, char *path,
	    size_t pathlen);

/* status.c */
void	 status_changed(struct gateway *);
void	 status_commit(struct gateway *, int64_t now);

#endif /* ACTORD_GATEWAY_H */
