/*
 * shm.h: the shared-memory arena and its mailboxes, the whole public API of
 * shm/.  One arena is two sealed memfds that actord creates before it
 * forks anything: the layout (header, descriptors, actor table), which
 * only actord can write, and the data (producer slots, dead letters,
 * mailboxes), which every process of the tree maps and talks through.
 *
 * Who owns what (one file per responsibility):
 *   arena.c     create, attach, validate, detach; the actor table
 *   ring.c      the lanes: claim, publish, consume, overflow policies
 *   wait.c      futex wait/wake, spin-then-sleep, the epoll doorbell
 *   turns.c     blocked senders' queue: tickets, turns, one wake per cell
 *   express.c   a hot producer's main lane, owned: claims without a CAS
 *   producer.c  producer slots, claim records, shm_reap()
 *   deadletter.c the dead-letter ring
 *   counters.c  per-mailbox counters, the wait histogram
 *   repair.c    a dead consumer's mailbox made whole again
 *   shm_err.c   error and reason names
 *
 * Nothing here logs, allocates on the hot path, takes a lock or makes a
 * system call while the peer is awake.  Every length, index and offset read
 * from shared memory is checked before use: another process may scribble
 * on the arena, and the reader must survive it.
 *
 * Design in one paragraph: each lane is a Vyukov bounded MPSC ring of
 * fixed-size cells with 64-bit per-cell sequence numbers; a producer writes
 * a claim record in its slot before claiming, so shm_reap() can release
 * exactly a dead process's unpublished cells (ring.c, producer.c); a
 * producer that sends many in a row to one mailbox takes its main lane
 * and claims with plain stores, no CAS, until another sender takes the
 * lane back (express.c).  The consumer drains in batches and publishes
 * its head once per batch.  A producer makes a system call only to wake a
 * consumer whose "sleeping" word names the lane; the store/load race with
 * a sleeper is closed by a membarrier the sleeper issues (producers register for it), or by fences
 * when the consumer sleeps often (wait.c).  Senders blocked on a full lane
 * queue for their turn with tickets and are woken one per free cell, in
 * the order they blocked (turns.c).  Producers must run on the same
 * machine (the futexes are shared, not private).
 *
 * Return values: functions returning int return 0 (or a count) on success,
 * or a negative SHM_E* code.  SHM_ESYS means a system call failed and errno
 * says why.  shm_strerror() names each code.
 */
#ifndef ACTORD_SHM_H
#define ACTORD_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/*
 * The read-once rule.  On actord's side (and in any process that must
 * survive what others write), every value of the arena that a worker can
 * write is read exactly once, into a local, with SHM_ONCE (or an atomic
 * load); the local is checked, and only the local is used afterwards.  A
 * second read of the same field may see another value than the one
 * checked: a length checked against a bound and then read again to copy
 * is the bug this rule exists to prevent.  SHM_ONCE_COPY does the same
 * for a struct (a message header, a snapshot header).  The compiler may
 * not read the field again in place of the local: the read is volatile,
 * and the copy is followed by a compiler barrier on the copy alone: as
 * far as the compiler knows the copy may have changed, so every later
 * read is of the copy, while the rest of memory stays in registers (a
 * full barrier would make the consumer's loop reload it).  Files that
 * read the arena on actord's side say so at their top.
 */
#define SHM_ONCE(x) \
	(*(const volatile __typeof__((void)0, (x)) *)(uintptr_t)&(x))
#define SHM_ONCE_COPY(dst, src) do {					\
	_Static_assert(sizeof(dst) == sizeof(src), "SHM_ONCE_COPY");	\
	memcpy(&(dst), (const void *)(uintptr_t)&(src), sizeof(dst));	\
	__asm__ __volatile__("" : "+m"(dst));				\
} while (0)

/*
 * On the path of every message, sent or taken (a declaration's mark):
 * such functions are laid out together (.text.hot), so that a process
 * woken after a long sleep, its code gone from the caches and the TLB,
 * touches a few code pages rather than one per function.
 */
#define SHM_HOT	__attribute__((hot))
/*
 * On the path of a consumer's wake-up (take, wait, sleep, and libactor's
 * receive): laid out together, not among the sends', so that an actor
 * woken after a long sleep runs its wake-up in three pages of code, not
 * four or five (tools/bench/bench_scale.c, sparse: each page a page walk,
 * measured by tools/bench/bench_pagewalk.c on a 2-vCPU VM at about 0.04
 * us with the page tables' lines still in cache and 0.25 to 0.3 us with
 * the TLB, L1 and L2 cold).  GNU ld sorts the .text.sorted.* sections
 * of every object file by name, after .text.hot: one section name gathers
 * them across shm/ and worker/, with or without link-time optimization.
 */
#define SHM_RECV	__attribute__((hot, section(".text.sorted.shm_recv")))

/*
 * memcpy that calls nothing for a small payload, on the path of every
 * message.  A process woken after a long sleep has lost its TLB entries,
 * and a call to libc's memcpy costs it three page walks (the PLT's page,
 * the GOT's, libc's code) of the 11 pages or so it touches a message
 * (tools/bench/bench_scale.c, sparse, at 10,000 actors).  From 16 to 64
 * bytes, two or four 16-byte moves that overlap as the length needs (SSE2,
 * in every x86-64): a send of 64 bytes on one CPU took 27 ns with them
 * against 29.5 with REP MOVSB.  REP MOVSB is one instruction; warm, on a
 * host with fast short REP MOV (FSRM), it took 5.7 ns for 64 bytes
 * against memcpy's 5.5, but 10 to 14 for 200 against 9: up to 128 bytes
 * it, above, memcpy.  Under the sanitizers, memcpy, which they check.
 */
static inline void
shm_copy(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
	unsigned char *d = dst, a[16], b[16], c[16], e[16];
	const unsigned char *s = src;

	if (n >= 16 && n <= 64) {
		/* Constant sizes: each is one unaligned 16-byte move. */
		__builtin_memcpy(a, s, 16);
		__builtin_memcpy(b, s + n - 16, 16);
		if (n > 32) {
			__builtin_memcpy(c, s + 16, 16);
			__builtin_memcpy(e, s + n - 32, 16);
			__builtin_memcpy(d + 16, c, 16);
			__builtin_memcpy(d + n - 32, e, 16);
		}
		__builtin_memcpy(d, a, 16);
		__builtin_memcpy(d + n - 16, b, 16);
		return;
	}
	if (n <= 128) {
		__asm__ __volatile__("rep movsb" : "+D"(dst), "+S"(src),
		    "+c"(n) : : "memory");
		return;
	}
#endif
	memcpy(dst, src, n);
}

/*
 * a + b, or UINT64_MAX where that would wrap: every sum of counters that a
 * worker can write (it may set any of them to 2^64 - 1) saturates instead.
 */
static inline uint64_t
shm_sat_add(uint64_t a, uint64_t b)
{
	uint64_t s;

	return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

#define SHM_MAGIC		0x4d52414452544341ULL	/* "ACTRDARM" */
#define SHM_VERSION		14
#define SHM_ENV_FD		"ACTORD_ARENA_FD"	/* decimal fd number */
#define SHM_ENV_LAYOUT_FD	"ACTORD_LAYOUT_FD"	/* decimal fd number */
#define SHM_PATH_MAX		256	/* actor path, NUL included */
#define SHM_ERRBUF		256	/* size of an error-text buffer */
#define SHM_MAX_MAILBOXES	65536
#define SHM_MAX_PRODUCERS	4096	/* the shared pool; besides, per mailbox: */
#define SHM_OWN_SLOTS		1	/* its consumer's own (shm_producer_open_own) */
#define SHM_CELL_MIN		64	/* smallest cell, header included */
#define SHM_CELL_MAX		(1u << 20)
#define SHM_MESSAGE_MAX		(1u << 24)	/* largest max_message */
/*
 * A main lane's large slots (see struct shm_mailbox_layout): at most this
 * many large messages queued at once; the next one waits for the oldest.
 */
#define SHM_BIG_MAIN		16
#define SHM_CAPACITY_MAX	(1u << 24)
#define SHM_HIST_BUCKETS	40	/* log2 buckets of ns: [2^i, 2^(i+1)) */
#define SHM_DL_PAYLOAD		64	/* payload bytes kept in a dead letter */
#define SHM_NO_TIMEOUT		(-1)	/* timeout_ns: wait for ever */
#define SHM_TIMEOUT_DEFAULT	(-2)	/* shm_send: the mailbox's block_timeout */

/* Errors: always negative. */
enum shm_err {
	SHM_OK		= 0,
	SHM_EFULL	= -1,	/* the lane is full (reject, or block timed out) */
	SHM_EEMPTY	= -2,	/* nothing to receive */
	SHM_ETIMEDOUT	= -3,	/* a wait ran out of time */
	SHM_EOVERSIZE	= -4,	/* payload larger than the cell */
	SHM_EGARBLED	= -5,	/* a garbled cell or record was refused */
	SHM_ECORRUPT	= -6,	/* the arena is foreign, truncated or corrupt */
	SHM_EBADINDEX	= -7,	/* no such mailbox, lane or slot */
	SHM_ESYS	= -8,	/* a system call failed: see errno */
	SHM_EAGAIN	= -9,	/* shm_reap: ambiguous claim, call again later */
	SHM_ENOSLOT	= -10,	/* every producer slot is taken */
	SHM_EINVAL	= -11,	/* bad argument (layout, path, ...) */
	SHM_EDROPPED	= -12,	/* drop_newest: this message was dropped */
	SHM_ENOENT	= -13,	/* no actor has that path */
	SHM_ELOST	= -14,	/* reserved: a claim released before publish */
	SHM_ENOTREADY	= -15,	/* a spare mailbox not prepared: no actor */
	SHM_EFORKED	= -16	/* the producer is the parent's (a fork child) */
};

/*
 * Overflow policies: the values map 1:1 to enum mailbox_overflow in
 * supervisor/spec.h (OVERFLOW_BLOCK, _REJECT, _DROP_OLDEST, _DROP_NEWEST,
 * _COALESCE).
 */
enum shm_overflow {
	SHM_OVERFLOW_BLOCK = 0,		/* the sender waits, with a timeout */
	SHM_OVERFLOW_REJECT = 1,	/* SHM_EFULL at once */
	SHM_OVERFLOW_DROP_OLDEST = 2,	/* the oldest queued message goes */
	SHM_OVERFLOW_DROP_NEWEST = 3,	/* the message being sent goes */
	/*
	 * A message flagged SHM_MSG_COALESCE replaces in place the queued
	 * one with the same corr (its key); a full lane blocks (ring.c).
	 */
	SHM_OVERFLOW_COALESCE = 4
};
#define SHM_OVERFLOW_MAX	SHM_OVERFLOW_COALESCE

/* Lanes of a mailbox.  The masks select lanes in receive and wait calls. */
enum shm_lane {
	SHM_LANE_MAIN = 0,		/* ordinary traffic; the overflow policy */
	SHM_LANE_SYSTEM = 1,		/* Terminated, Stop, ...: drained first */
	SHM_LANE_REPLY = 2,		/* answers to this actor's asks */
	SHM_NLANES = 3
};
#define SHM_LANE_BIT(l)		(1u << (l))
#define SHM_LANES_INBOX		(SHM_LANE_BIT(SHM_LANE_MAIN) | \
				 SHM_LANE_BIT(SHM_LANE_SYSTEM))
#define SHM_LANES_ALL		(SHM_LANES_INBOX | SHM_LANE_BIT(SHM_LANE_REPLY))

/*
 * How a receiver waits.  SPIN polls for ever (benchmarks, dedicated CPUs);
 * SPIN_SLEEP polls for spin_ns then sleeps on the futex; SLEEP goes to the
 * futex at once.
 */
enum shm_wait_mode {
	SHM_WAIT_SPIN = 0,
	SHM_WAIT_SPIN_SLEEP = 1,
	SHM_WAIT_SLEEP = 2
};
#define SHM_SPIN_NS_DEFAULT	20000	/* 20 us of polling before a sleep */

/* The layout of one mailbox, fixed when the arena is created. */
struct shm_mailbox_layout {
	uint32_t	 capacity;	/* cells in the main lane, a power of two */
	uint32_t	 cell;		/* bytes per cell, header included; x 64 */
	uint32_t	 sys_capacity;	/* cells in the system lane, power of two */
	uint32_t	 reply_capacity;/* cells in the reply lane, power of two */
	enum shm_overflow overflow;	/* main lane; the other lanes reject */
	uint32_t	 block_timeout_ms; /* default wait of a blocked sender */
	uint32_t	 state_size;	/* bytes of the state region; 0: none */
	uint32_t	 lazy;		/* 1: rings set up by shm_mailbox_prepare */
	/*
	 * The largest payload of the main and reply lanes, bytes (0, or
	 * not above the cell's payload: the cell's payload).  A payload
	 * larger than the cell's goes whole into a large slot that belongs
	 * to its cell's position: the reply lane has one per cell, the main
	 * lane min(capacity, SHM_BIG_MAIN), so a large message at position
	 * p waits (shm_send) until the consumer has taken the message at
	 * p - SHM_BIG_MAIN.  The slots are address space of the arena,
	 * memory only once a large message has used them.  The system lane
	 * holds only what fits its cells.
	 */
	uint32_t	 max_message;
};

/* The layout of a whole arena. */
struct shm_layout {
	uint32_t	 nmailboxes;	/* also the size of the actor table */
	const struct shm_mailbox_layout *mailboxes;	/* nmailboxes of them */
	uint32_t	 nproducers;	/* shared producer slots (one per thread) */
	uint32_t	 dl_capacity;	/* dead-letter entries, a power of two */
};

/*
 * The first of the arena clock's two readings (shm_create), taken by the
 * creator before it does what else it must before shm_create_marked:
 * that time counts toward the calibration's window, and only the rest of
 * it is waited for.  ok false: the TSC is not used (no clock pair is
 * read).
 */
struct shm_clock_mark {
	uint64_t	 ns, tsc, width;
	bool		 ok;
};

/* A reference to an actor: index in the table and its incarnation. */
struct shm_ref {
	uint32_t	 index;
	uint32_t	 incarnation;
};

/* Message flags.  The high byte is reserved for shm itself. */
#define SHM_MSG_ASK		0x0001u	/* the sender waits for a reply */
#define SHM_MSG_REPLY		0x0002u	/* an answer; corr names the ask */
#define SHM_MSG_ERROR		0x0004u	/* a reply that reports an error */
#define SHM_MSG_REDELIVERED	0x0008u	/* taken from an in-hand slot */
#define SHM_MSG_COALESCE	0x0010u	/* corr is a coalesce key (main lane) */
#define SHM_MSG_USER_MASK	0x00ffffffu

/* The header of every message: 40 bytes, followed by the payload. */
struct shm_msg {
	uint32_t	 tag;		/* application message type */
	uint32_t	 len;		/* payload bytes */
	struct shm_ref	 sender;	/* who sent it; {0, 0} for actord */
	uint64_t	 corr;		/* correlation id of an ask, or 0 */
	uint64_t	 enq_ns;	/* set by shm: see SHM_ENQ_UNTIMED */
	uint32_t	 attempts;	/* deliveries so far */
	uint32_t	 flags;		/* SHM_MSG_* */
};
#define SHM_CELL_HDR		48	/* sequence number + struct shm_msg */

/*
 * enq_ns is shm_clock_ns() when the send published the message, for the
 * messages a send times: every SHM_STAMP_EVERY-th position of a lane (the
 * sample the wait histogram counts), every send whose receiver was asleep
 * on that lane when it began, every shm_send_stamped, large message and
 * coalesced tell.  The others carry SHM_ENQ_UNTIMED | their position in
 * the lane, which is not a time: reading the clock costs a send as much
 * as the rest of it on some hosts (RDTSC: 11 to 25 ns in VMs, against
 * some 30 ns for a whole message of the bare ring,
 * tools/bench/bench_ring.c).  Either way the value is unique in its lane,
 * which a header compared for identity relies on (libactor's reap).
 */
#define SHM_ENQ_UNTIMED		(1ULL << 63)
#define SHM_STAMP_EVERY		8	/* a power of two */

/* Whether enq_ns is a time (shm_clock_ns), not a position. */
static inline int
shm_enq_timed(uint64_t enq_ns)
{
	return (enq_ns & SHM_ENQ_UNTIMED) == 0;
}

/* Actor states in the actor table. */
enum shm_actor_state {
	SHM_ACTOR_DOWN = 0,
	SHM_ACTOR_STARTING = 1,
	SHM_ACTOR_UP = 2,
	SHM_ACTOR_STOPPING = 3
};

/* Why a message became a dead letter. */
enum shm_dl_reason {
	SHM_DL_NO_ACTOR = 0,		/* no such actor */
	SHM_DL_STALE_REF = 1,		/* reference to a stopped incarnation */
	SHM_DL_FULL = 2,		/* mailbox full (reject, block timed out) */
	SHM_DL_DROPPED_OLDEST = 3,	/* dropped as oldest */
	SHM_DL_DROPPED_NEWEST = 4,	/* dropped as newest */
	SHM_DL_POISON = 5,		/* too many delivery attempts */
	SHM_DL_SENDER_DIED = 6,		/* sender died mid-send */
	SHM_DL_SHUTDOWN = 7,		/* system shutting down */
	SHM_DL_OVERSIZE = 8,		/* payload larger than the cell */
	SHM_DL_UNREACHABLE = 9,		/* node unreachable */
	SHM_DL_GARBLED = 10,		/* garbled cell */
	SHM_DL_ASK_FAILED = 11,		/* ask failed: the actor is down */
	SHM_DL_ACTOR_DOWN = 12,		/* its actor died (on_down) or is down */
	SHM_DL_STALE_NODE = 13,		/* for a past epoch of its node */
	SHM_DL_REFUSED = 14,		/* refused by the peer node */
	SHM_DL_OWED_FULL = 15,		/* actord's (a sender's) owed list full */
	SHM_DL_NREASONS = 16
};

/* One dead letter, as read back. */
struct shm_dead_letter {
	uint64_t	 seq;		/* position in the dead-letter ring */
	uint64_t	 time_ns;	/* CLOCK_MONOTONIC when it was written */
	struct shm_msg	 msg;		/* the message header */
	uint32_t	 recipient;	/* intended mailbox index */
	uint32_t	 reason;	/* enum shm_dl_reason */
	uint32_t	 lane;		/* enum shm_lane it was meant for */
	uint32_t	 payload_len;	/* bytes of payload kept below */
	uint8_t		 payload[SHM_DL_PAYLOAD];
};

/* Per-mailbox counters: a consistent-enough snapshot, read lock-free. */
struct shm_counters {
	uint64_t	 enqueued;	/* published into any lane */
	uint64_t	 dequeued;	/* handed to the consumer */
	uint64_t	 depth;		/* claimed but not yet consumed, all lanes */
	uint64_t	 depth_hwm;	/* most messages found waiting in one batch */
	uint64_t	 dropped;	/* by the overflow policy */
	uint64_t	 dead_lettered;	/* every message of this mailbox dead-lettered */
	uint64_t	 garbled;	/* cells refused as garbled */
	uint64_t	 released;	/* claims released by shm_reap */
	uint64_t	 full;		/* sends refused or timed out as full */
	uint64_t	 wakeups;	/* futex wakes or doorbells sent */
	uint64_t	 replaced;	/* coalesce: queued messages replaced */
	uint64_t	 sender_wakeups; /* blocked senders woken for their turn */
	/*
	 * Enqueue to dequeue, ns, log2: main and system lanes (not replies),
	 * a sample: the messages at every SHM_STAMP_EVERY-th position.
	 */
	uint64_t	 wait_hist[SHM_HIST_BUCKETS];
};

struct shm_arena;		/* process-local handle of a mapped arena */
struct shm_producer;		/* a claimed producer slot (one thread) */

/*
 * The handler of shm_drain(): called once per message; payload is valid only
 * during the call (the cell is reused afterwards).  Return 0 to go on, non-0
 * to stop after this message (the message counts as consumed).
 */
typedef int (*shm_handler)(void *arg, enum shm_lane lane,
    const struct shm_msg *msg, const void *payload);

/* arena.c */
int	 shm_layout_check(const struct shm_layout *, char *err, size_t errlen);
size_t	 shm_layout_size(const struct shm_layout *); /* data; 0: invalid */
int	 shm_create(const struct shm_layout *, const char *name,
	    struct shm_arena **, char *err, size_t errlen);
int	 shm_create_marked(const struct shm_layout *,
	    const struct shm_clock_mark *, const char *name,
	    struct shm_arena **, char *err, size_t errlen);
void	 shm_clock_mark(struct shm_clock_mark *);
int	 shm_attach_fds(int layout_fd, int fd, struct shm_arena **,
	    char *err, size_t errlen);
int	 shm_attach_env(struct shm_arena **, char *err, size_t errlen);
/*
 * Attach checks the seals and the header only; each mailbox's descriptor
 * is checked at the mailbox's first use, and a mailbox whose descriptor
 * is corrupt refuses sends (SHM_ECORRUPT).  shm_mailbox_check makes that
 * check now: 0, SHM_EBADINDEX, or SHM_ECORRUPT with the reason in err.
 */
int	 shm_mailbox_check(struct shm_arena *, uint32_t idx, char *err,
	    size_t errlen);
void	 shm_detach(struct shm_arena *);	/* unmaps; closes the fds */
/* Closes the fds and frees the handle; the mappings stay until exit. */
void	 shm_release(struct shm_arena *);
int	 shm_fd(const struct shm_arena *);	/* the data memfd */
int	 shm_layout_fd(const struct shm_arena *);	/* the layout memfd */
size_t	 shm_size(const struct shm_arena *);	/* of the data memfd */
uint32_t shm_nmailboxes(const struct shm_arena *);
uint64_t shm_arena_id(const struct shm_arena *);
int	 shm_mailbox_layout(const struct shm_arena *, uint32_t idx,
	    struct shm_mailbox_layout *);
/*
 * The largest payload of a mailbox's main and reply lanes (its
 * max_message, or its cell's payload: see struct shm_mailbox_layout; 0:
 * bad idx); shm_cell_payload the largest that fits in one cell, which is
 * all the system lane takes.
 */
size_t	 shm_payload_max(const struct shm_arena *, uint32_t idx);
size_t	 shm_cell_payload(const struct shm_arena *, uint32_t idx);
/*
 * A mailbox's main lane as its owner (actord) configures it after create:
 * an effective capacity (1 to the physical capacity, any number) and the
 * overflow policy and block timeout, e.g. for a spare mailbox given to a
 * child added later.  Call it only while no producer is sending to that
 * mailbox and no consumer runs: when the slot is assigned, before its
 * actor is made known (actor table) and its consumer started.  The values
 * live in the arena, not in a process's copy of the layout, and every
 * sender reads them at each send (the limit on the line it already
 * reads, the policies when the lane is full): a configuration made before
 * the actor became known is seen by every process, however early it
 * attached.  Senders respect the effective capacity under every policy
 * (a lane holding that many messages is full); blocked senders are woken
 * as space appears under it.  SHM_EINVAL for a capacity of 0 or above the
 * physical one, or an unknown policy.  shm_mailbox_layout() reports the
 * physical geometry with the current policies; shm_mailbox_capacity()
 * the effective capacity (0: bad idx).
 */
int	 shm_mailbox_configure(struct shm_arena *, uint32_t idx,
	    uint32_t capacity, enum shm_overflow, uint32_t block_timeout_ms);
uint32_t shm_mailbox_capacity(const struct shm_arena *, uint32_t idx);

/* arena.c: the actor table (index = mailbox index) */
int	 shm_actor_set_path(struct shm_arena *, uint32_t idx, const char *path);
int	 shm_actor_path(const struct shm_arena *, uint32_t idx, char *buf,
	    size_t buflen);
int	 shm_lookup(const struct shm_arena *, const char *path); /* idx or <0 */
/*
 * A number that changes after every change of a path in the actor table
 * (shm_actor_set_path): whoever caches lookups compares it to know when
 * to look again.  A lookup made while it was g and that finds it still g
 * afterwards saw no change in between.
 */
uint64_t shm_paths_gen(const struct shm_arena *);
uint32_t shm_actor_incarnation(const struct shm_arena *, uint32_t idx);
uint32_t shm_actor_bump_incarnation(struct shm_arena *, uint32_t idx);
pid_t	 shm_actor_pid(const struct shm_arena *, uint32_t idx);
void	 shm_actor_set_pid(struct shm_arena *, uint32_t idx, pid_t);
enum shm_actor_state shm_actor_state(const struct shm_arena *, uint32_t idx);
void	 shm_actor_set_state(struct shm_arena *, uint32_t idx,
	    enum shm_actor_state);
struct shm_ref shm_actor_ref(const struct shm_arena *, uint32_t idx);
/*
 * Raw regions for libactor: the in-hand slot, the state region.  The
 * in-hand slot is in two parts: its head, a cell's bytes (SHM_CELL_HDR
 * bytes, then room for a cell's payload), on the control block's page,
 * which every message touches; and, when the mailbox takes payloads
 * larger than a cell (max_message), its far part, room for the largest
 * (shm_inhand_far: NULL and 0 when there is none), with the large slots
 * after every mailbox (arena.c, place_slots), so that the cells follow
 * the control block in one fault-around window.  libactor puts a payload
 * in the head when it fits there, else in the far part.
 */
void	*shm_inhand(struct shm_arena *, uint32_t idx, size_t *len);
void	*shm_inhand_far(struct shm_arena *, uint32_t idx, size_t *len);
void	*shm_state(struct shm_arena *, uint32_t idx, size_t *len);

/*
 * producer.c.  A producer slot belongs to one thread of one process (its pid
 * is recorded); a forked child opens its own.  shm_reap() is called by
 * whoever reaped a process (actord, or a test after waitpid): it releases
 * that pid's claimed-but-unpublished cells (each one a dead letter "sender
 * died mid-send"), frees its slots and wakes waiters.  It returns the number
 * of slots freed, or SHM_EAGAIN when a claim is ambiguous (a live producer
 * records the same cell): call it again a little later (bounded).  Call it
 * only for a pid that is dead and reaped (it trusts that nothing of that
 * process runs any more), and before the pid can be reused.
 */
int	 shm_producer_open(struct shm_arena *, struct shm_producer **);
/*
 * Besides the shared pool (nproducers slots), each mailbox has
 * SHM_OWN_SLOTS slot of its own, for the process that consumes it
 * (libactor's sends; its SIGTERM handler sends nothing, it pokes the
 * wait): an actor never takes from the pool, however many actors there
 * are.  If that slot is taken (a fork child of the actor, or a dead owner
 * not reaped yet), a pool slot instead, as shm_producer_open.
 */
int	 shm_producer_open_own(struct shm_arena *, uint32_t idx,
	    struct shm_producer **);
void	 shm_producer_close(struct shm_producer *);
/* The process that opened p (a fork child holds a copy it must not use). */
pid_t	 shm_producer_opener(const struct shm_producer *);
/*
 * Is p a copy a fork(2) child inherited?  Its sends then fail with
 * SHM_EFORKED: the slot, its claim record and the lane it may own are the
 * parent's, and two processes writing them would corrupt both.  A
 * pthread_atfork handler marks the child's copies of the producers open
 * at the fork; a send reads the mark from the producer itself.
 */
bool	 shm_producer_forked(const struct shm_producer *);
int	 shm_reap(struct shm_arena *, pid_t pid, unsigned *released);
/*
 * shm_reap for the consumer of mailbox idx: only that mailbox's own slot
 * and the pool (up to the highest slot ever taken) are looked at, so its
 * cost does not grow with the number of mailboxes.  A pid that never
 * consumed idx needs shm_reap, which looks at every slot.
 */
int	 shm_reap_mailbox(struct shm_arena *, pid_t pid, uint32_t idx,
	    unsigned *released);
/*
 * Slots no process can own any more, freed as shm_reap frees a dead
 * process's: a pid that does not exist, or the caller's own on a slot it
 * did not open (a worker can write any pid into any slot).  Returns the
 * number freed.  shm_sweep looks at every slot; shm_sweep_some at the next
 * count slots after where its last call stopped (a mailbox's own slot held
 * by the pid the actor table names is taken as live without a system
 * call), so that a caller at every reap pays a bounded cost: actord does.
 */
int	 shm_sweep(struct shm_arena *, unsigned *released);
int	 shm_sweep_some(struct shm_arena *, uint32_t count, unsigned *released);
/* Test hook: called between claim and publish (NULL: none). */
void	 shm_producer_set_hook(struct shm_producer *,
	    void (*hook)(void *arg), void *arg);
/*
 * Test hook: called when a drop_oldest send has taken the oldest message
 * off the head and before its dead letter is written (NULL: none).
 */
void	 shm_producer_set_steal_hook(struct shm_producer *,
	    void (*hook)(void *arg), void *arg);

/*
 * ring.c: sending.  Copies the header (enq_ns is set here) and payload into
 * one cell of the lane (a payload larger than the cell's into the large
 * slot of the cell's position, up to max_message: SHM_EOVERSIZE and a
 * dead letter above it, or above a cell on the system lane) and publishes
 * it.  A large message on a main lane that already holds SHM_BIG_MAIN
 * messages or more waits for its slot, holding its claim, up to the
 * timeout under every policy, then fails SHM_EFULL (drop_oldest: drops
 * the oldest first, then SHM_EDROPPED).  The main lane follows the mailbox
 * overflow policy: block waits up to timeout_ns (SHM_TIMEOUT_DEFAULT: the
 * layout's block_timeout_ms, SHM_NO_TIMEOUT: for ever, 0: not at all) and
 * then fails SHM_EFULL; reject fails SHM_EFULL at once; drop_oldest
 * dead-letters the oldest queued message and returns 0; drop_newest
 * dead-letters this one and returns SHM_EDROPPED.  System and reply lanes
 * reject.  Every message not delivered is counted and dead-lettered, but
 * for SHM_EFORKED: a fork child's copy of p (shm_producer_forked) sends
 * nothing, and its caller still has the message.
 */
int	 shm_send(struct shm_producer *, uint32_t idx, enum shm_lane,
	    const struct shm_msg *, const void *payload, int64_t timeout_ns)
	    SHM_HOT;
/*
 * The same, and *started_ns is when the send took place in the arena
 * clock: the message's enq_ns if timed, else a reading just after it was
 * published, or if it had to wait for room, when it began to wait (0 if
 * it failed first).  A caller timing something from the send (libactor's
 * ask deadline) needs no clock reading of its own.
 */
int	 shm_send_stamped(struct shm_producer *, uint32_t idx, enum shm_lane,
	    const struct shm_msg *, const void *payload, int64_t timeout_ns,
	    uint64_t *started_ns) SHM_HOT;
int	 shm_send_default(struct shm_producer *, uint32_t idx,
	    const struct shm_msg *, const void *payload);
/*
 * A send for a caller that keeps what does not fit and offers it again
 * later (actord's Terminated messages): the message goes in if a cell of
 * the lane is free now; if not, SHM_EFULL, and nothing else happens: no
 * wait, no drop by policy, no dead letter, no counter.
 */
int	 shm_offer(struct shm_producer *, uint32_t idx, enum shm_lane,
	    const struct shm_msg *, const void *payload);

/*
 * ring.c: receiving (one consumer per mailbox and lane).  The system lane is
 * always taken before the main lane.  shm_recv copies one message (payload
 * truncated to buflen; msg->len is the full length) and returns 0, or
 * SHM_EEMPTY.  shm_drain hands up to max messages (0: all published) to the
 * handler, straight from the cells, and returns how many it handled.
 */
int	 shm_recv(struct shm_arena *, uint32_t idx, unsigned lanes,
	    struct shm_msg *, void *buf, size_t buflen, enum shm_lane *lane);
int	 shm_drain(struct shm_arena *, uint32_t idx, unsigned lanes,
	    unsigned max, shm_handler, void *arg);
bool	 shm_pending(struct shm_arena *, uint32_t idx, unsigned lanes)
	    SHM_RECV;
/*
 * Ask for the cache line at p to be written soon: PREFETCHW where the CPU
 * has it, nothing elsewhere (a read prefetch would fetch a line another
 * CPU holds shared, and the write would pay the round trip again).
 */
void	 shm_prefetch_own(const struct shm_arena *, const void *p) SHM_HOT;
/*
 * shm_drain of one message (returns 1 or 0), for a consumer that takes one
 * per call: the same effects, with less bookkeeping per call.
 */
int	 shm_take_one(struct shm_arena *, uint32_t idx, unsigned lanes,
	    shm_handler, void *arg) SHM_RECV;
/*
 * Test hook: called inside the take of a message from a drop_oldest lane,
 * with SHM_HOOK_TAKEN once the cell is the consumer's and before the
 * handler runs, and SHM_HOOK_HANDED after the handler and before the cell
 * is freed (NULL: none).  A test dies there to check that nothing is lost.
 */
#define SHM_HOOK_TAKEN		1
#define SHM_HOOK_HANDED		2
void	 shm_consumer_set_hook(struct shm_arena *,
	    void (*hook)(void *arg, int where), void *arg);
/*
 * The header of the message published at the head of one lane, not taken:
 * 1 with *msg, 0 if none.  For whoever reaped the consumer (libactor's
 * actor_reaped: was the message marked in hand still in its cell?).
 */
int	 shm_head_msg(struct shm_arena *, uint32_t idx, enum shm_lane,
	    struct shm_msg *);
/*
 * 1 if a message published in the lane and not yet taken has a header
 * match(arg, header) accepts, else 0.  For whoever reaped a producer
 * (libactor's slot_release_dead: did a dead replier's answer reach the
 * asker's reply lane?).
 */
int	 shm_lane_holds(struct shm_arena *, uint32_t idx, enum shm_lane,
	    bool (*match)(void *, const struct shm_msg *), void *arg);
/*
 * A new consumer (the next incarnation, before it receives) or actord (after
 * it reaped the consumer) frees cells a dead consumer had taken and handed
 * over but not yet freed, and publishes again a drop_oldest cell it died
 * taking before its handler had it.  Only while no consumer of that
 * mailbox runs.
 */
int	 shm_consumer_recover(struct shm_arena *, uint32_t idx);
/*
 * This process consumes mailbox idx (libactor's attach, once, before it
 * receives): the mailbox's process-local view is kept beside the arena
 * handle, which its every wake-up reads anyway, not among the views of
 * the other mailboxes.  One mailbox per handle: a later call for another
 * changes nothing.  arena.c.
 */
void	 shm_consume(struct shm_arena *, uint32_t idx);
/*
 * A mailbox laid out lazy (a spare actord keeps for children added later)
 * costs no memory until it is prepared: its cells are not touched, so the
 * memfd's pages are never allocated.  shm_mailbox_prepare gives its lanes
 * their start (empty, every cell free for its position); only the process
 * that created the arena may do it (another gets SHM_EINVAL unless it is
 * already prepared), and it must run before any process receives from
 * that mailbox (actord calls it when it hands the spare to a child, before
 * the child starts).  Until then a send to it fails at once with
 * SHM_ENOTREADY and a dead letter "no such actor".  The creator keeps its
 * own word of which mailboxes it prepared: a worker that writes
 * "prepared" in the arena neither skips a preparation nor undoes one
 * (shm_mailbox_repair restores it).  Eager mailboxes are prepared by
 * shm_create.
 */
int	 shm_mailbox_prepare(struct shm_arena *, uint32_t idx);
bool	 shm_mailbox_prepared(const struct shm_arena *, uint32_t idx);

/*
 * wait.c.  shm_wait returns 0 once one of the lanes has a message, or
 * SHM_ETIMEDOUT.  One thread at a time waits on a mailbox (the "sleeping"
 * word holds one set of lanes).  A consumer in an event loop opens a doorbell (a datagram
 * socket, non-blocking, close-on-exec, to put in epoll), calls
 * shm_doorbell_arm before epoll_wait (1: messages are pending, do not
 * sleep; 0: armed), and shm_doorbell_disarm after waking.  shm_wake_all
 * wakes the consumer and blocked senders of a mailbox (actord, shutdown),
 * shm_wake_blocked its blocked senders only (its consumer died).
 */
int	 shm_wait(struct shm_arena *, uint32_t idx, unsigned lanes,
	    enum shm_wait_mode, int64_t spin_ns, int64_t timeout_ns)
	    SHM_RECV;
int	 shm_recv_wait(struct shm_arena *, uint32_t idx, unsigned lanes,
	    enum shm_wait_mode, int64_t spin_ns, int64_t timeout_ns,
	    struct shm_msg *, void *buf, size_t buflen, enum shm_lane *lane);
int	 shm_doorbell_open(struct shm_arena *, uint32_t idx);	/* an fd */
int	 shm_doorbell_arm(struct shm_arena *, uint32_t idx, unsigned lanes);
void	 shm_doorbell_disarm(struct shm_arena *, uint32_t idx, int fd);
void	 shm_wake_all(struct shm_arena *, uint32_t idx);
void	 shm_wake_blocked(struct shm_arena *, uint32_t idx);
/*
 * From a signal handler (async-signal-safe): the shm_wait of this
 * process's consumer of idx, under way, interrupted or about to begin,
 * returns 0 once, whatever its lanes hold, without a message sent.
 */
void	 shm_poke(struct shm_arena *, uint32_t idx);

/*
 * repair.c.  Whoever reaped a mailbox's consumer (actord, after shm_reap
 * and shm_consumer_recover, before the next incarnation starts) checks
 * each lane and makes it usable again, whatever a worker wrote there:
 * head and tail brought back into [head, head + capacity], claim and
 * steal marks that no live producer owns released, impossible cell
 * states reset.  Every queued message lost that way becomes a dead
 * letter "garbled" and is counted (garbled).  Only while no consumer of
 * that mailbox runs (actord may repair its own mailbox between two of its
 * own receives); live producers may go on sending.  A producer is live
 * when its slot says so and its process exists (the caller's own slots
 * never are: the caller is not sending while it repairs).  Returns the
 * number of changes made (0: nothing was wrong), or SHM_EBADINDEX.
 */
struct shm_repair {
	unsigned	 ends;		/* head or tail moved back into range */
	unsigned	 released;	/* claim or steal marks nobody owned */
	unsigned	 reset;		/* cells in an impossible state reset */
	unsigned	 lost;		/* queued messages lost: dead letters */
};
int	 shm_mailbox_repair(struct shm_arena *, uint32_t idx,
	    struct shm_repair *);

/* counters.c */
int	 shm_counters(const struct shm_arena *, uint32_t idx,
	    struct shm_counters *);

/*
 * deadletter.c.  Writers never block: a full ring overwrites its oldest
 * entry.  shm_dl_read reads the entry at *cursor and advances it; a cursor
 * that fell behind jumps to the oldest entry still kept.  Returns 1 with an
 * entry, 0 when the cursor has caught up.
 */
int	 shm_dl_put(struct shm_arena *, uint32_t recipient, enum shm_lane,
	    enum shm_dl_reason, const struct shm_msg *, const void *payload);
int	 shm_dl_read(const struct shm_arena *, uint64_t *cursor,
	    struct shm_dead_letter *);
uint64_t shm_dl_head(const struct shm_arena *);	/* next position written */
uint64_t shm_dl_lost(const struct shm_arena *);	/* overwritten unread */
uint64_t shm_dl_total(const struct shm_arena *);

/* shm_err.c */
const char *shm_strerror(int err);
const char *shm_reason_name(enum shm_dl_reason);
const char *shm_lane_name(enum shm_lane);
uint64_t shm_now_ns(void);		/* CLOCK_MONOTONIC in ns */
/*
 * arena.c: the arena clock, CLOCK_MONOTONIC ns extrapolated from the TSC
 * (calibrated at shm_create; a few ppm off at worst) when the kernel's
 * clock source is the TSC or the CPU says its TSC is invariant
 * (shm_tsc_trusted), else clock_gettime.  A timed enq_ns uses it.
 */
uint64_t shm_clock_ns(const struct shm_arena *);

#endif /* ACTORD_SHM_H */
