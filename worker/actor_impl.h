/*
 * actor_impl.h: what worker/ files share among themselves and nobody else:
 * the libactor region of each actor (kept at the start of its shm state
 * region), the in-hand slot's layout, and the process-local handle.  Never
 * include this outside worker/ (tests may, to inject faults).
 *
 * The libactor region of actor i (shm_state(arena, i)):
 *
 *   struct ar_hdr      policies, in-hand bookkeeping, last death, counters,
 *                      the two snapshot headers
 *   watchers           watch_cap entries (watch.c)
 *   reply slots        ask_cap entries (replyslots.c)
 *   deferred answers   ask_cap entries (defer.c)
 *   slot 0, slot 1     snapshot data, snap_cap bytes each (64-aligned)
 *
 * The in-hand slot: its head (shm_inhand(arena, i)), a cell's bytes, on
 * the control block's page:
 *
 *   [0, 40)   struct shm_msg of the message being handled
 *   [40, 44)  its lane
 *   [48, ...) its payload, if it fits here (a cell's payload)
 *
 * and its far part (shm_inhand_far(arena, i), when the mailbox takes
 * payloads larger than a cell): a larger payload, from its start.  Where
 * a payload lies is a function of its length alone (inhand_at), so the
 * header says where to find it after a crash too (reaped.c).
 *
 * Everything read from the arena is checked before use, as in shm/.
 */
#ifndef ACTORD_ACTOR_IMPL_H
#define ACTORD_ACTOR_IMPL_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "shm/shm.h"
#include "worker/actor.h"

#define AR_MAGIC		0x32524f544341424cULL	/* "LBACTOR2" */
#define AR_ALIGN(x)		(((x) + 63) & ~(size_t)63)
#define INHAND_PAYLOAD		48

/* In-hand states. */
#define IH_EMPTY		0u	/* nothing in hand */
#define IH_HELD			1u	/* a live handler has it */
#define IH_PENDING		2u	/* the next incarnation gets it first */

/*
 * corr of a main-lane message: the high 24 bits name the incarnation it is
 * addressed to (0: the live one), the low 40 bits the asker's counter.
 */
#define CORR_INC_SHIFT		40
#define CORR_INC_MASK		0xffffffu
#define CORR_ID_MASK		((1ULL << CORR_INC_SHIFT) - 1)

/*
 * A watcher entry (64 bits, 0: free): bit 63 set, watcher index in bits
 * 47..62 (16 bits), watcher incarnation's low 23 bits in 24..46, the
 * watched incarnation's low 24 bits in 0..23.
 */
#define W_VALID			(1ULL << 63)
#define W_MAKE(wi, winc, tinc)	(W_VALID | ((uint64_t)((wi) & 0xffff) << 47) \
				 | ((uint64_t)((winc) & 0x7fffff) << 24) | \
				 ((uint64_t)(tinc) & 0xffffff))
/* A Terminated's corr: for which incarnation of its watcher (never 0). */
#define TERM_FOR(inc)		((uint64_t)((inc) & 0x7fffff) | 1ULL << 23)
#define W_IDX(w)		((uint32_t)(((w) >> 47) & 0xffff))
#define W_WINC(w)		((uint32_t)(((w) >> 24) & 0x7fffff))
#define W_TINC(w)		((uint32_t)((w) & 0xffffff))

struct ar_snap {
	_Atomic uint64_t gen;		/* 0: never written */
	uint64_t	 handled;	/* delivery id in hand at commit, or 0 */
	uint32_t	 len;
	uint32_t	 crc;		/* CRC32C of gen, handled, len, data */
	uint8_t		 pad[40];
};

/*
 * Cache lines by writer, so that senders reading the policies never share a
 * line the consumer writes on every message.
 */
struct ar_hdr {
	/* Read-mostly: written by actord at configure, start and reap. */
	_Atomic uint64_t magic;		/* AR_MAGIC once configured */
	uint32_t	 max_attempts;
	uint32_t	 on_down;
	uint32_t	 while_down;
	uint32_t	 snap_cap;	/* bytes of each snapshot slot */
	uint32_t	 watch_cap;	/* entries of the watcher set */
	uint32_t	 ask_cap;	/* reply slots, a power of two */
	_Atomic uint32_t launched;	/* incarnation last given a process */
	_Atomic uint32_t last_dead;	/* incarnation that died last */
	_Atomic uint32_t gone;		/* ACTOR_GONE_*: not coming back */
	_Atomic int32_t	 last_wstatus;
	/* Written by the consumer on every message. */
	_Alignas(64) _Atomic uint32_t inhand;	/* IH_* */
	_Atomic uint64_t inhand_id;	/* delivery id of the in-hand message */
	_Atomic uint64_t answered;	/* delivery id of the last ask answered */
	_Atomic uint64_t next_delivery;
	_Atomic uint64_t handled;
	_Atomic uint64_t late_replies;
	_Atomic uint64_t commits;
	/* Written by the consumer, one message in 8. */
	_Alignas(64) _Atomic uint64_t handler_hist[ACTOR_HIST_BUCKETS];
	/* Written by others, rarely. */
	_Alignas(64) _Atomic uint64_t deaths;
	_Atomic uint64_t redelivered;
	_Atomic uint64_t poison;
	_Atomic uint64_t asks_failed;
	_Atomic uint64_t stale;
	/* Written by senders that route by key: a line of its own. */
	_Alignas(64) _Atomic uint64_t shard_msgs;
	struct ar_snap	 snap[2];
	/* Then: the watcher set (watch_cap entries), the snapshot slots. */
};

/*
 * A main-lane message addressed to another incarnation than live, the
 * receiver's own: the receiver compares with the incarnation it was
 * started as, not with the actor table's (the same while it lives, and
 * a page the wake-up need not touch).
 */
static inline bool
inc_stale(uint32_t live, uint64_t corr)
{
	uint32_t to = (uint32_t)(corr >> CORR_INC_SHIFT) & CORR_INC_MASK;

	return to != 0 && to != (live & CORR_INC_MASK);
}

/*
 * Where a payload of len bytes lies in hand: after the header in the
 * slot's head when it fits there (room bytes), else at the start of its
 * far part.  The caller has checked len against the largest the slot
 * holds (inhand_max), so the far part exists when len needs it.
 */
static inline unsigned char *
inhand_at(unsigned char *head, uint32_t room, unsigned char *far,
    uint64_t len)
{
	return len <= room || far == NULL ? head + INHAND_PAYLOAD : far;
}

/*
 * A region's sizes, read once from its header and checked (ar_hdr): every
 * offset into the region and every loop bound comes from here, never from
 * the header again, which any worker can rewrite at any moment (the
 * read-once rule, shm/shm.h).
 */
struct ar_caps {
	uint32_t	 watch_cap;
	uint32_t	 ask_cap;	/* a power of two */
	uint32_t	 snap_cap;
};

/* A deferred answer (defer.c): the ask's corr (0: free) and its asker. */
struct ar_defer {
	_Atomic uint64_t corr;
	_Atomic uint64_t who;		/* index << 32 | incarnation */
};

/* A reply slot as its asker sees it (replyslots.c). */
#define SLOT_FREE		0
#define SLOT_ASK		1	/* an ask in flight waits in it */
#define SLOT_GHOST		2	/* timed out; its answer still to come */
/* A ghost older than this is freed: no honest answer is that late. */
#define GHOST_MAX_MS		1000

/* One ask in flight (process-local). */
struct pending {
	uint64_t	 corr;		/* 0: free */
	int64_t		 deadline;	/* CLOCK_MONOTONIC ns */
	int		 done;		/* 1: answered, rc below */
	int		 rc;
	struct shm_msg	 msg;
	void		*data;		/* malloc'd copy of the answer */
};

struct shard_cache {
	char		 group[ACTOR_PATH_MAX];
	uint64_t	 gen;		/* shm_paths_gen when it was looked up */
	uint32_t	 n;
	uint32_t	*idx;		/* n mailbox indexes */
};

struct actor {
	/*
	 * What every message reads, first and together, rather than spread
	 * past its name: 136 bytes from where calloc put the handle, so two
	 * or three cache lines.  Packing them into two lines of an aligned
	 * handle made an ask 60 ns slower (bench_actor), and was reverted.
	 */
	struct shm_arena *arena;
	int32_t		 idx;		/* -1: a client without mailbox */
	uint32_t	 incarnation;
	struct shm_producer *prod;
	struct ar_hdr	*hdr;		/* NULL without mailbox */
	unsigned char	*inhand;	/* the in-hand slot's head */
	uint32_t	 inhand_room;	/* payload bytes after its header */
	uint32_t	 inhand_max;	/* the largest payload it holds */
	enum actor_wait	 wait;
	bool		 holding;	/* a message is in hand */
	bool		 answers;	/* actor_recv returns answers too */
	volatile sig_atomic_t stop;
	volatile sig_atomic_t term_stop; /* SIGTERM's Stop, not yet received */
	uint32_t	 nrecv;
	uint32_t	 npend;
	int64_t		 spin_ns;
	uint64_t	 recv_ns;	/* when the sampled message came, or 0 */
	struct shm_msg	 cur;		/* its header (copy) */
	struct actor_owed *owed;	/* Terminated for our full system lane */
	/* The rest. */
	unsigned char	*inhand_far;	/* its far part, or NULL */
	bool		 own_arena;	/* attached by us: detach at close */
	struct ar_caps	 caps;		/* hdr's sizes, read once at attach */
	unsigned char	*snapdata[2];
	int		 notify_fd;	/* ACTORD_NOTIFY_FD, or -1 */
	char		*notify_sock;	/* ACTORD_NOTIFY_SOCKET, or NULL */
	/* asks */
	uint64_t	 corr_next;
	struct pending	*pend;
	uint32_t	 pend_cap;	/* a power of two */
	uint32_t	 reply_cap;	/* reply slots: asks in flight at most */
	uint8_t		*slot_st;	/* SLOT_* of each reply slot */
	int64_t		*ghost_at;	/* when each became a ghost (ns), or NULL */
	uint32_t	 nslots;	/* slots not free */
	uint32_t	 ndone;		/* answered, not yet returned */
	int64_t		 min_deadline;	/* <= every pending deadline */
	unsigned char	*rbuf;		/* a reply being read */
	size_t		 rbuf_len;
	void		*last_reply;	/* data of the last answer returned */
	/* snapshot */
	int		 snap_latest;	/* -2: unknown, -1: none, 0 or 1 */
	void		(*commit_hook)(void *);
	void		*commit_arg;
	struct shard_cache shard;
	uint32_t	 defer_next;	/* where actor_defer looks first */
	char		 name[ACTOR_PATH_MAX];
};

/*
 * A client's transport (client.c picks one by the address's scheme).
 * tell and ask return what actor_client_tell and actor_client_ask return
 * and put the reason of a failure in c->err; an answer's bytes live in
 * c->reply (malloc'd, one byte more than its length, a NUL).
 */
struct actor_client;
struct client_transport {
	const char	*scheme;	/* "unix", "tcp" */
	int	(*open)(struct actor_client *, const char *where, char *err,
		    size_t errlen);
	int	(*tell)(struct actor_client *, const char *path, uint32_t tag,
		    const void *data, size_t len);
	int	(*ask)(struct actor_client *, const char *path, uint32_t tag,
		    const void *data, size_t len, int64_t timeout_ns,
		    struct actor_msg *reply);
	void	(*close)(struct actor_client *);
};

struct actor_client {
	const struct client_transport *t;
	void		*conn;		/* the transport's own */
	unsigned char	*reply;		/* the last answer's bytes */
	char		 err[1536];	/* why the last call failed: path, text */
};

/* client_local.c */
extern const struct client_transport client_local;

/* client_zmq.c: a node's gateway, "tcp://" */
extern const struct client_transport client_zmq;

/* region.c */
struct ar_hdr	*ar_hdr(struct shm_arena *, uint32_t idx, struct ar_caps *);
unsigned char	*ar_snapdata(struct ar_hdr *, const struct ar_caps *,
		    int slot);
_Atomic uint64_t *ar_watchers(struct ar_hdr *);	/* watch_cap entries */
_Atomic uint64_t *ar_asks(struct ar_hdr *,	/* ask_cap reply slots */
		    const struct ar_caps *);
struct ar_defer	*ar_defers(struct ar_hdr *,	/* ask_cap entries */
		    const struct ar_caps *);

/* ask.c */
void	 ask_drain(struct actor *);
int	 ask_poll(struct actor *, struct actor_msg *);

/* replyslots.c */
int	 slots_init(struct actor *);
int	 slot_take(struct actor *, uint64_t *id);
void	 slot_unsend(struct actor *, uint64_t corr);
void	 slot_expire(struct actor *, uint64_t corr);
int	 slot_answered(struct actor *, const struct shm_msg *);
int	 slots_reclaim(struct actor *);
bool	 slot_claim(struct shm_arena *, const struct shm_msg *ask,
	    uint32_t who, uint32_t inc);
void	 slot_prefetch(struct shm_arena *, const struct shm_msg *ask) SHM_HOT;
void	 slot_prefetch_mine(struct actor *, uint64_t corr) SHM_HOT;
void	 slot_unclaim(struct shm_arena *, const struct shm_msg *ask);
bool	 slot_release_dead(struct shm_arena *, const struct shm_msg *ask,
	    uint32_t who, uint32_t inc, unsigned *scans);

/* defer.c */
int	 defer_reaped(struct shm_producer *, struct shm_arena *, uint32_t,
	    uint32_t, struct ar_hdr *, const struct ar_caps *,
	    const struct shm_msg *handled, struct actor_owed **);

/* send.c */
void	 inhand_answered(struct actor *);
int	 send_answer(struct actor *, const struct shm_msg *ask, uint32_t tag,
	    const void *data, size_t len);
int	 send_error_reply(struct shm_producer *, struct shm_arena *,
	    const struct shm_msg *ask, int code, const char *text,
	    struct actor_owed **);
int	 send_raw(struct actor *, struct actor_ref, enum shm_lane,
	    struct shm_msg *, const void *data, int64_t timeout_ns)
	    SHM_HOT;
int	 send_tell(struct actor *, struct actor_ref to, struct actor_ref from,
	    uint32_t tag, const void *data, size_t len, int64_t timeout_ns)
	    SHM_HOT;
/* watch.c: a Terminated from another node, for the gateway */
int	 watch_terminated_to(struct actor *, struct actor_ref watcher,
	    const struct actor_terminated *);
/* send_stamped's flags: ACTOR_ASK_* of an ask (0 for a tell). */
int	 send_stamped(struct actor *, struct actor_ref, enum shm_lane,
	    struct shm_msg *, const void *, int64_t timeout_ns,
	    unsigned flags, uint64_t *started);

/*
 * The message path of libactor's API (actor.h), kept together: receiving
 * with shm's wake-up (SHM_RECV), sending with shm's sends (SHM_HOT).
 */
int	 actor_recv(struct actor *, struct actor_msg *, int64_t) SHM_RECV;
void	 actor_done(struct actor *) SHM_RECV;
int	 actor_run(struct actor *, actor_handler, actor_stop_fn, void *)
	    SHM_RECV;
int	 actor_tell(struct actor *, struct actor_ref, uint32_t, const void *,
	    size_t) SHM_HOT;
int	 actor_tell_timeout(struct actor *, struct actor_ref, uint32_t,
	    const void *, size_t, int64_t) SHM_HOT;

/* snapshot.c */
int	 snap_latest(struct ar_hdr *, const struct ar_caps *,
	    uint64_t *handled);

/* owed.c */
int	 owed_send(struct shm_producer *, struct shm_arena *, uint32_t to,
	    uint32_t inc, uint32_t inc_mask, enum shm_lane,
	    const struct shm_msg *, const void *, struct actor_owed **);
int	 owed_flush(struct shm_producer *, struct shm_arena *,
	    struct actor_owed **);
void	 owed_abandon(struct shm_arena *, struct actor_owed **);

/* watch.c */
int	 watch_notify(struct shm_producer *, struct shm_arena *,
	    uint32_t who, uint32_t dead_inc, int wstatus, struct actor_owed **);
void	 terminated_fill(struct actor_terminated *, uint32_t idx,
	    uint32_t inc, int wstatus);

/*
 * A fork child's copy of the handle: its mailbox, message in hand and
 * producer slot are the parent's (actor_attach(3)).
 */
static inline bool
actor_forked(const struct actor *a)
{
	return a->prod != NULL && shm_producer_forked(a->prod);
}

#endif /* ACTORD_ACTOR_IMPL_H */
