/*
 * shm_impl.h: what shm/ files share among themselves and nobody else: the
 * layout of the arena in memory and the process-local handles.  Never
 * include this outside shm/ (tests may, to scribble on cells on purpose).
 *
 * Everything in the arena is read as untrusted: offsets and sizes are read
 * once, validated, and copied into the process-local handle (the header's
 * at attach, a mailbox's descriptor at the mailbox's first use); per-message
 * lengths and sequence numbers are checked on every use.
 */
#ifndef ACTORD_SHM_IMPL_H
#define ACTORD_SHM_IMPL_H

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"

#define SHM_CL			64	/* cache line */
#define SHM_PAGE		4096	/* where each mailbox begins */
/*
 * The kernel's fault-around window (fault_around_bytes' default): a read
 * fault on a file mapping maps with its page every page of the file that
 * exists in the window of this many bytes, aligned in the address space,
 * around it.  A mailbox begins such a window in every process, its
 * control block then its main lane's first cells: it is aligned so in
 * the data memfd (arena.c, place_mailbox), and the data memfd is mapped
 * at an address aligned so (map_data).
 */
#define SHM_FAULT_BLOCK		65536
/*
 * The pages of cells a consumer makes at once ahead of its senders (wait.c,
 * map_ahead), in chunks aligned so in the address space: two a window.
 */
#define SHM_AHEAD_CHUNK		8
/* shm_send's timeout from shm_offer: no room, no wait, no dead letter. */
#define SHM_TIMEOUT_OFFER	(-3)
#define SHM_ALIGN(x, a)		(((x) + (a) - 1) & ~((uint64_t)(a) - 1))

/*
 * Cell sequence numbers (Vyukov): for position p, seq == p means free for
 * p (or claimed and not yet published), p + 1 published, p + capacity
 * consumed (free for the next lap).  SEQ_RELEASED marks a claim released by
 * shm_reap: (p + 1) | SEQ_RELEASED is skipped by the consumer.  Positions
 * are 64-bit and never come near bit 63.
 */
#define SEQ_RELEASED		(1ULL << 63)
#define SEQ_TAKEN		(1ULL << 62)	/* drop_oldest: taken off the head */
/*
 * drop_oldest: taken by the consumer, which has not yet handed it over:
 * nobody else frees such a cell, and if the consumer dies holding it,
 * shm_consumer_recover publishes it again (ring.c, drain_take).
 */
#define SEQ_CONSUMING		(1ULL << 61)
/*
 * drop_oldest: taken off the head by a sender that drops it and has not
 * yet written its dead letter: nobody else frees such a cell, and if the
 * sender dies holding it, shm_reap writes the dead letter (producer.c).
 */
#define SEQ_STEALING		(1ULL << 60)
#define SEQ_FLAGS		(SEQ_RELEASED | SEQ_TAKEN | SEQ_CONSUMING | \
				 SEQ_STEALING)
#define SEQ_HELD		(SEQ_CONSUMING | SEQ_STEALING)	/* hands off */

/*
 * A main lane's tail with this bit is owned by one producer (express.c):
 * it appends with plain stores, and every other claim's CAS, expecting
 * a position without it, fails.  Every reader of tail masks it
 * (lane_tail).
 */
#define TAIL_OWNED		(1ULL << 62)

/* Claim records: rec_ring = ring id << 2 | kind. */
#define REC_NONE		0u
#define REC_INTENT		1u	/* claiming rec_pos of that ring */
#define REC_STEAL		2u	/* drop_oldest: taking rec_pos off the head */
#define REC_STOLE		3u	/* ... and its dead letter is written */
#define REC_KIND(r)		((unsigned)((r) & 3))
#define REC_RING(r)		((r) >> 2)

/* Producer slot states. */
#define SLOT_FREE		0u
#define SLOT_LIVE		1u
#define SLOT_DEAD		2u	/* its process died; being reaped */

/*
 * Blocked senders' queue (turns.c): futex cells per mailbox, ticket t on
 * cell t % SHM_TURN_CELLS with bit (t / SHM_TURN_CELLS) % 32, so that
 * SHM_TURN_CELLS * 32 waiters each have a cell and bit of their own: a
 * wake-up for one turn wakes no other sender in a line of up to 1,024
 * (with 8 cells, a line of 1,000 woke some 4 senders per turn, 3 of
 * which slept again: two thirds of the blocked senders' sleeps).
 */
#define SHM_TURN_CELLS		32
#define SHM_TURN_WAITERS	(SHM_TURN_CELLS * 32)
#define SHM_TURN_LEFT		16	/* senders gone from the line at once */

/* The consumer's "sleeping" word: lane bits, plus how to wake it. */
#define SLEEP_DOORBELL		0x100u	/* ring the doorbell, not the futex */

/*
 * The arena is two memfds.  The layout memfd holds what actord writes and
 * every other process only reads: this header, the descriptors and the
 * actor table.  actord maps it writable, then seals it with
 * F_SEAL_FUTURE_WRITE: no other mapping of it can ever be writable, and it
 * can be neither written, truncated nor punched, so a child validates
 * against what actord wrote.  The data memfd holds everything workers
 * write: producer slots, dead letters, mailboxes.  Offsets named "in the
 * layout" are from the start of the layout memfd, the others from the
 * start of the data memfd.
 */
struct shm_hdr {
	uint64_t	 magic;
	uint32_t	 version;
	uint32_t	 hdr_size;	/* sizeof(struct shm_hdr) */
	uint64_t	 total_size;	/* bytes of the data memfd */
	uint64_t	 arena_id;	/* random: doorbell names */
	uint64_t	 checksum;	/* FNV-1a of the header (this zero) */
	uint32_t	 nmailboxes;
	uint32_t	 nproducers;
	uint32_t	 dl_capacity;
	uint32_t	 pad0;
	uint64_t	 desc_off;	/* in the layout */
	uint64_t	 actors_off;	/* in the layout */
	uint64_t	 paths_off;	/* in the layout: the actors' paths */
	uint64_t	 slots_off;
	uint64_t	 dl_off;
	uint64_t	 dl_entries_off;
	uint64_t	 mbox_off;	/* first mailbox region */
	/* The arena clock: CLOCK_MONOTONIC extrapolated from the TSC. */
	uint64_t	 tsc_base;	/* TSC at calibration */
	uint64_t	 ns_base;	/* CLOCK_MONOTONIC ns at calibration */
	uint64_t	 tsc_mult;	/* ns per tick, 32.32 fixed point */
	uint32_t	 tsc_ok;	/* 0: use clock_gettime */
	uint32_t	 pad1;
	uint64_t	 layout_size;	/* bytes of the layout memfd */
	/*
	 * Bumped (atomically, by the creator) after every change of a path
	 * in the actor table; not in the checksum.  Readers of the table
	 * that cache what they found (libactor's shard groups) compare it.
	 */
	uint64_t	 paths_gen;
	uint64_t	 pool_off;	/* struct shm_pool: the slots' counter */
	uint64_t	 index_off;	/* in the layout: the path index */
	uint32_t	 index_size;	/* its buckets, a power of two */
	uint8_t		 pad2[12];
};

/*
 * One mailbox descriptor, in the layout: immutable after create, checked
 * by each process at the mailbox's first use (arena.c, shm_localize).
 */
struct shm_desc {
	uint32_t	 capacity[SHM_NLANES];
	uint32_t	 cell;
	uint32_t	 overflow;
	uint32_t	 block_timeout_ms;
	uint32_t	 state_size;
	uint32_t	 check;		/* FNV-1a of the descriptor (this zero) */
	uint64_t	 ctl_off;
	uint64_t	 cells_off[SHM_NLANES];
	uint64_t	 inhand_off;
	uint64_t	 state_off;
	/* Large slots (ring.c): big_count[l] of big_size bytes each. */
	uint64_t	 big_off[SHM_NLANES];
	uint32_t	 big_count[SHM_NLANES];
	uint32_t	 big_size;
	/*
	 * The in-hand slot's head, at inhand_off (a cell's bytes).  Its far
	 * part, when big_size is not 0, is not named here: it is the
	 * big_size bytes after the reply lane's large slots (place_slots).
	 */
	uint32_t	 inhand_size;
	uint32_t	 max_message;	/* payload bytes (0: the cell's) */
};

/*
 * One entry of the actor table, in the layout: only actord writes it.
 * The actor's life, its mailbox's main-lane policies as actord configured
 * them (shm_mailbox_configure), read on slow paths only, and whether its
 * lanes were prepared: what a libactor send reads (incarnation, state,
 * prepared) on one line.  Its path is apart (struct shm_path), so that
 * the entries are dense, 128 to a page: a sender to 10,000 actors at
 * random touched a page of the table per send, with the 256-byte path in
 * each entry (12 to a page), and now one per 128 actors, whose entries'
 * page stays in its TLB and cache (tools/bench/bench_scale.c, send).
 */
struct shm_actor {
	_Atomic uint32_t incarnation;
	_Atomic int32_t	 pid;
	_Atomic uint32_t state;
	_Atomic uint32_t prepared;	/* 1: cells have their sequence numbers */
	_Atomic uint32_t cfg_capacity;	/* effective */
	_Atomic uint32_t cfg_overflow;	/* enum shm_overflow */
	_Atomic uint32_t cfg_timeout_ms;	/* block_timeout_ms */
	uint32_t	 pad;
};

/* An actor's path, in the layout after the actor table, by index. */
struct shm_path {
	char		 path[SHM_PATH_MAX];
};

/*
 * The path index, in the layout after the actor table: open addressing,
 * linear probing from the FNV-1a hash of a path, each bucket a mailbox
 * index + 1 (INDEX_EMPTY ends a probe, INDEX_GONE is a path renamed away,
 * passed over).  Only actord writes it, as it names mailboxes; a reader
 * checks every candidate against the actor's path, so a lookup
 * racing a rename finds the old name or nothing, never another mailbox.
 */
#define INDEX_EMPTY		0u
#define INDEX_GONE		UINT32_MAX

struct shm_slot {
	_Atomic int32_t	 pid;		/* the claim: 0 when free */
	_Atomic uint32_t state;		/* SLOT_* */
	_Atomic uint64_t rec_ring;	/* ring id << 2 | REC_* */
	_Atomic uint64_t rec_pos;
	_Atomic uint32_t waiting;	/* mailbox + 1 while counted a waiter */
	/*
	 * A blocked sender's turn (turns.c): the mailbox + 1 while it holds
	 * a ticket of that mailbox's queue, and the ticket, so that whoever
	 * reaps it gives the turn back.
	 */
	_Atomic uint32_t turn_mbox;
	_Atomic uint32_t turn_ticket;
	/*
	 * The express path (express.c): the mailbox + 1 whose main lane
	 * this slot took, and the one it is taking back from its owner
	 * (counted in that mailbox's own_revoke), so that whoever reaps it
	 * gives both back; and the owner's claim record, the position it is
	 * writing + 1 (0 between sends), on its own line: only it writes
	 * there, so an owner that lost the lane and does not know it yet
	 * cannot overwrite the record of the next one.
	 */
	_Atomic uint32_t own_mbox;
	_Atomic uint32_t revoking;
	_Atomic uint64_t own_busy;	/* after 4 bytes of padding */
	uint8_t		 pad[8];
};

/*
 * Before the slots: one past the highest pool slot ever taken, so that a
 * scan for a pid stops there.  Only ever raised (a CAS), and read clamped
 * to the pool's size: a worker's scribble can only make scans longer.
 */
struct shm_pool {
	_Alignas(SHM_CL) _Atomic uint32_t hwm;
};

struct shm_cell {
	_Atomic uint64_t seq;
	struct shm_msg	 msg;
	unsigned char	 payload[];
};

/*
 * One lane's control block: producers' line, consumer's line.  The main
 * lane's producers' line also holds the consumer's wake-up words (struct
 * shm_mbox, SHM_WAKE_OFF): the rest of that line in the other lanes is
 * never used.
 */
struct shm_lane_ctl {
	_Alignas(SHM_CL) _Atomic uint64_t tail;	/* next position to claim */
	/*
	 * On the producers' line, read with tail: the effective capacity
	 * of the lane when it is below the physical one, 0 when they are
	 * equal (then the claim costs nothing more).  Set by
	 * shm_mailbox_configure (arena.c) on the main lane only.
	 */
	_Atomic uint32_t limit;
	/*
	 * Also on the producers' line, read by every claim of the main lane:
	 * non-zero while blocked senders queue for their turn (turns.c), so
	 * that a new sender looks whether it may pass them (it may not take
	 * a cell the oldest is being woken for).  A hint: a wrong value
	 * costs a sender a look at head, or an old one its place.
	 */
	_Atomic uint32_t queued;
	_Alignas(SHM_CL) _Atomic uint64_t head;	/* next position to consume */
	_Atomic uint64_t dequeued;	/* written by the consumer only */
	_Atomic uint64_t depth_hwm;
};

/* Where the wake-up words begin: after the main lane's tail, limit, queued. */
#define SHM_WAKE_OFF		16

struct shm_mbox {
	union {
		struct shm_lane_ctl lane[SHM_NLANES];
		/*
		 * The consumer's wake-up words, on the main lane's producers'
		 * line, after tail, limit and queued (the union only names
		 * them there): every send reads "sleeping" and fence_mode and
		 * claims tail, and with the two on one line a send to a
		 * consumer asleep since long ago misses one line, not two
		 * (tools/bench/bench_scale.c, sparse).  The consumer writes
		 * them only as it falls asleep, never while it drains: a
		 * stream of sends keeps the line in the producers' caches as
		 * before.
		 */
		struct {
			unsigned char	 wake_off[SHM_WAKE_OFF];
			_Atomic uint32_t wake_word;	/* futex */
			/* lane bits | SLEEP_DOORBELL, 0: awake */
			_Atomic uint32_t sleeping;
			/* 1: producers fence after publishing */
			_Atomic uint32_t fence_mode;
			/* 1 + the CPU it last slept on; 0: unknown */
			_Atomic uint32_t sleep_cpu;
			/*
			 * FUTEX_WAKEs and doorbells sent: counted by the
			 * producer that woke the consumer, on the line it
			 * just wrote "sleeping" on, not on a line of its own
			 * (one cache miss more on every wake-up).
			 */
			_Atomic uint64_t wakeups;
			/*
			 * The express path (express.c): while tail carries
			 * TAIL_OWNED, the producer slot own_slot - 1 owns
			 * the main lane and appends with plain stores (its
			 * claim record is its slot's own_busy); own_revoke
			 * counts the senders taking the lane back.  On this
			 * line, which the owner reads with tail anyway.
			 */
			_Atomic uint32_t own_slot;
			_Atomic uint32_t own_revoke;
		};
	};
	/*
	 * Blocked senders: drop_oldest's, which wait for a head cell to take
	 * (space_word), and the queue of block and coalesce senders in
	 * turns (turns.c): tickets below turn_grant may claim a cell, those
	 * in [turn_grant, turn_next) wait, each on turn_cell[ticket %
	 * SHM_TURN_CELLS] with its own bit; turn_out counts turns granted
	 * and not yet used (below 0: given back ahead, by senders that left
	 * before their turn came).
	 */
	_Alignas(SHM_CL) _Atomic uint32_t space_word;	/* futex */
	_Atomic uint32_t space_waiters;
	_Atomic uint32_t turn_next;
	_Atomic uint32_t turn_grant;
	_Atomic uint32_t turn_out;	/* int32_t, stored as its bits */
	_Atomic uint32_t turn_cell[SHM_TURN_CELLS];	/* futexes */
	/*
	 * Tickets (+ 1) whose sender left before its turn came (0: free):
	 * whoever grants a turn to such a ticket gives it back (turns.c).
	 */
	_Alignas(SHM_CL) _Atomic uint32_t turn_left[SHM_TURN_LEFT];
	/* Rare-path counters (atomic adds). */
	_Alignas(SHM_CL) _Atomic uint64_t dropped;
	_Atomic uint64_t dead_lettered;
	_Atomic uint64_t garbled;
	_Atomic uint64_t released;
	_Atomic uint64_t full;
	_Atomic uint64_t replaced;	/* coalesce: replaced in place */
	_Atomic uint64_t turn_wakes;	/* blocked senders woken for a turn */
	/* Written by the consumer only. */
	_Alignas(SHM_CL) _Atomic uint64_t hist[SHM_HIST_BUCKETS];
};

struct shm_dl_ctl {
	_Alignas(SHM_CL) _Atomic uint64_t tail;
	_Atomic uint64_t total;
};

struct shm_dl_entry {
	_Atomic uint64_t seq;		/* 2p + 1 writing, 2p + 2 written */
	uint64_t	 check;		/* FNV-1a of the body below */
	uint64_t	 time_ns;
	struct shm_msg	 msg;
	uint32_t	 recipient;
	uint32_t	 reason;
	uint32_t	 lane;
	uint32_t	 payload_len;
	uint8_t		 payload[SHM_DL_PAYLOAD];
	uint8_t		 pad[48];
};

/* Process-local, validated view of one lane and one mailbox. */
struct shm_lane_local {
	struct shm_lane_ctl *ctl;
	unsigned char	*cells;
	uint64_t	 mask;
	uint32_t	 cap;
	uint32_t	 cell;
	uint32_t	 inl;		/* payload bytes a cell holds */
	uint32_t	 max;		/* payload bytes the lane takes */
	uint64_t	 ring_id;	/* idx * SHM_NLANES + lane + 1 */
	/*
	 * Large slots: the payload of a message at pos larger than inl is
	 * at big + (pos & big_mask) * big_size (cell_data); big_count 0:
	 * none (max == inl).
	 */
	unsigned char	*big;
	uint64_t	 big_mask;
	uint32_t	 big_size;
	uint32_t	 big_count;
	/*
	 * The consumer's own, across drain calls (ring.c, drain_inplace):
	 * the clock reading reused for clock_left more takes, and the cells
	 * freed since blocked senders were last looked for.
	 */
	uint64_t	 now;
	uint32_t	 clock_left;
	uint32_t	 unchecked;
};

/*
 * What a send to a mailbox's main lane reads of its process-local view,
 * dense: 32 bytes a mailbox, 128 to a page, beside the full views (struct
 * shm_mbox_local, 376 bytes, 10 to a page), which sends to the main lane
 * read only on their slow paths (full lane, large message, coalesce).  A
 * sender to 10,000 actors at random touched a page of its views per send
 * (and, the first time, faulted it in), and now one per 128 mailboxes,
 * which stays in its TLB; the full view is
 * made only if a slow path needs it.  Made from the checked descriptor
 * (shm_localize_send, or with the full view: shm_localize), never changed
 * after: what the full view holds or would hold, never a second truth.
 */
struct shm_send_view {
	struct shm_mbox	*m;		/* NULL until the view is made */
	unsigned char	*cells;		/* the main lane's */
	uint32_t	 cap;		/* its cells, a power of two */
	uint32_t	 cell;		/* bytes per cell */
	uint32_t	 max;		/* the payload bytes it takes */
	uint32_t	 bad;		/* the full view's bad */
};

/* A sender's place in a mailbox's queue, across the retries of one claim. */
struct shm_turn {
	uint32_t	 ticket;
	bool		 held;		/* ticket taken, turn not yet used */
	bool		 tried;		/* granted, and a claim was tried */
	bool		 expired;	/* out of line: one last look was had */
	uint32_t	 stuck;		/* front polls that found room nobody got */
	uint32_t	 seen_grant;	/* turn_grant when last seen to move */
	int64_t		 seen_at;	/* and when (CLOCK_MONOTONIC ns) */
};

struct shm_mbox_local {
	struct shm_mbox	*m;
	struct shm_lane_local lane[SHM_NLANES];
	struct shm_mailbox_layout lay;
	struct shm_actor *actor;	/* in the layout: read-only but for actord */
	void		*inhand;
	void		*state;
	uint32_t	 payload_max;	/* the main lane's max */
	uint32_t	 inhand_size;
	bool		 bad;		/* its descriptor failed: a quarantine */
	/*
	 * The main lane's consumer takes each cell by CAS (drop_oldest and
	 * coalesce: ring.c, uses_take): the actor table's policy when the
	 * view was made, or when its creator last configured it (arena.c,
	 * view_policy), read here so that a take does not touch the table's
	 * page.  Only actord configures, and only a mailbox whose consumer
	 * has not started.
	 */
	bool		 takes;
	/*
	 * The consumer's own (wait.c): waits in a row where spinning did
	 * not pay (it slept longer than it would have spun), messages taken
	 * since it last slept, and whether its naps switched the mailbox to
	 * fence_mode.  After a nap in fence_mode (no spin first), when it
	 * began and the spin it skipped: the first message taken after it
	 * says whether the spin would have paid (ring.c, nap_judged), which
	 * the nap's own length cannot say, a wake-up being slower than most
	 * spins.
	 */
	uint32_t	 naps;
	uint32_t	 awake;
	bool		 nap_fenced;
	uint64_t	 nap_from;	/* arena clock; 0: nothing to judge */
	int64_t		 nap_spin;
	/*
	 * In the main lane's first lap: the bytes of its cells, from the
	 * first, whose pages the consumer has made (wait.c, map_ahead).
	 */
	uint64_t	 ahead;
	/*
	 * The in-hand slot's far part (NULL: every payload fits in its
	 * head), last: only a large message reads it.
	 */
	void		*inhand_far;
	uint32_t	 inhand_far_size;
};

/* A spin-then-sleep consumer napping this many times in a row: fence_mode. */
#define SHM_NAPS_FENCE		4
/* ... and taking this many messages without a nap: out of it again. */
#define SHM_AWAKE_UNFENCE	4096

struct shm_arena {
	/* What every message reads, in its first line. */
	struct shm_mbox_local *mb;	/* n + 1 entries, made on first use */
	struct shm_send_view *sv;	/* n + 1, made with mb's */
	uint32_t	 n;
	uint32_t	 tsc_ok;
	uint64_t	 tsc_base;
	uint64_t	 ns_base;
	uint64_t	 tsc_mult;
	struct shm_actor *actors;	/* in the layout: the actor table */
	bool		 membarrier;	/* this process may use GLOBAL_EXPEDITED */
	pid_t		 registered;	/* whose producers registered for
					 * the barriers (claim): a fork's differs */
	bool		 rdpid;		/* shm_cpu may use RDPID (wait.c) */
	bool		 prefetchw;	/* the CPU has PREFETCHW (wait.c) */
	bool		 zmm_reset;	/* nap gives back AVX-512 state (wait.c) */
	bool		 creator;	/* shm_create's: writes the layout */
	uint32_t	 own;		/* own_mb's mailbox (shm_consume), or n */
	uint32_t	 nviews;	/* full views made in mb[] */
	/* The rest. */
	unsigned char	*base;		/* the data memfd, mapped writable */
	size_t		 size;
	/* The address space reserved around base (arena.c, map_data). */
	unsigned char	*span;
	size_t		 span_size;
	int		 fd;
	unsigned char	*lbase;		/* the layout memfd (writable: creator) */
	size_t		 lsize;
	int		 lfd;
	uint64_t	 id;
	size_t		 mb_size;
	const struct shm_desc *desc;	/* in the layout: checked at first use */
	uint64_t	 mbox_off;	/* the first mailbox's, from the header */
	const struct shm_path *paths;	/* in the layout, by index */
	unsigned char	*quarantine;	/* in mb's mapping: bad descriptors' mailbox */
	_Atomic uint32_t *index;	/* in the layout: the path index */
	uint32_t	 index_mask;
	struct shm_pool	*pool;
	struct shm_slot	*slots;		/* the pool, then SHM_OWN_SLOTS each */
	uint32_t	 nslots;	/* npool + SHM_OWN_SLOTS * n */
	uint32_t	 npool;
	uint32_t	 sweep_next;	/* shm_sweep_some's cursor */
	struct shm_dl_ctl *dl;
	struct shm_dl_entry *dl_entries;
	uint32_t	 dl_cap;
	pid_t		*mine;		/* nslots, in mb's mapping: who opened each */
	/* ring.c, drain_take: a large payload's copy (malloc'd). */
	unsigned char	*takebuf;
	size_t		 takebuf_len;
	/* Tests: called inside a drop_oldest take (shm_consumer_set_hook). */
	void		(*take_hook)(void *, int);
	void		*take_hook_arg;
	/* shm_poke (a signal handler's): shm_wait returns, once (wait.c). */
	volatile sig_atomic_t poked;
	/*
	 * The full view of the mailbox this process consumes (shm_consume),
	 * here rather than in mb[]: a consumer woken after a long sleep reads
	 * its view on every message, and in mb[] that was a page of its own
	 * (10 views to a page), one page walk more per wake-up than this
	 * handle's, which it reads anyway (tools/bench/bench_scale.c,
	 * sparse).  mb[own] is never used.
	 */
	struct shm_mbox_local own_mb;
};

struct shm_producer {
	struct shm_arena *a;
	struct shm_slot	*slot;
	pid_t		 pid;
	/*
	 * A copy a fork child inherited (set in the child by producer.c's
	 * atfork handler, which finds it on the process's list of open
	 * producers), which also takes its own_ring: its sends fail
	 * SHM_EFORKED in send_msg, off the owner's express path, from the
	 * producer they read anyway: no other page of the process.
	 */
	bool		 forked;
	struct shm_producer *next_open, **prev_open;
	int		 bellfd;	/* datagram socket for doorbells, or -1 */
	int		 fence;		/* not registered for membarrier: fence */
	void		(*hook)(void *);
	void		*hook_arg;
	void		(*steal_hook)(void *);	/* tests: inside a steal */
	void		*steal_hook_arg;
	/* tests: each poll for room (ring.c, own_room and room_soon) */
	void		(*room_hook)(void *);
	void		*room_hook_arg;
	/*
	 * Let in from a line (turns.c): the mailbox (its index + 1) whose
	 * free cells it may take for pass_left more sends, line or not.
	 */
	uint32_t	 pass_mbox;
	uint32_t	 pass_left;
	/*
	 * The express path (express.c): the ring id of the main lane this
	 * producer owns (0: none) and its next position there; the lane it
	 * last claimed on by CAS, the position after, and how many claims
	 * in a row found nobody else's in between (streak).
	 */
	uint64_t	 own_ring;
	uint64_t	 own_next;
	/*
	 * The owned lane's geometry, kept here by shm_own_took for the
	 * owner's send (ring.c, express_send), which then reads no view.
	 */
	struct shm_lane_ctl *own_ctl;
	unsigned char	*own_cells;
	uint64_t	 own_mask;
	uint32_t	 own_cell;	/* bytes a cell */
	uint32_t	 own_inl;	/* payload bytes a cell holds */
	uint32_t	 own_cap;
	uint64_t	 hot_ring;
	uint64_t	 hot_next;
	uint32_t	 streak;
	uint32_t	 slot_no;	/* its slot's index */
	/*
	 * The position + 1 whose cell own_room polled for its whole time
	 * before the owner gave its lane back: room_soon does not poll for
	 * it again (ring.c).
	 */
	uint64_t	 room_spent;
};

_Static_assert(sizeof(struct shm_hdr) % SHM_CL == 0, "hdr");
_Static_assert(sizeof(struct shm_desc) % SHM_CL == 0, "desc");
_Static_assert(sizeof(struct shm_actor) == 32, "actor: two to a line");
_Static_assert(sizeof(struct shm_path) % SHM_CL == 0, "path");
_Static_assert(sizeof(struct shm_slot) == SHM_CL, "slot");
_Static_assert(sizeof(struct shm_send_view) == 32, "send view: 128 a page");
_Static_assert(sizeof(struct shm_cell) == SHM_CELL_HDR, "cell");
_Static_assert(sizeof(struct shm_msg) == 40, "msg");
_Static_assert(sizeof(struct shm_dl_entry) % SHM_CL == 0, "dl entry");
_Static_assert(SHM_LANE_MAIN == 0 && offsetof(struct shm_mbox, wake_word) ==
    offsetof(struct shm_lane_ctl, queued) + sizeof(uint32_t) &&
    offsetof(struct shm_mbox, own_revoke) + sizeof(uint32_t) <= SHM_CL,
    "the wake-up and express words share the main lane's producers' line");

void	 shm_localize(struct shm_arena *, uint32_t idx);	/* arena.c */
void	 shm_localize_send(struct shm_arena *, uint32_t idx);

/*
 * Where mailbox idx's full view is kept (idx < a->n), made or not: beside
 * the handle for the mailbox this process consumes, else in mb[].
 */
static inline struct shm_mbox_local *
shm_mb_slot(struct shm_arena *a, uint32_t idx)
{
	return idx == a->own ? &a->own_mb : &a->mb[idx];
}

/* The mailbox of a full view (one that shm_mb_slot gave). */
static inline uint32_t
shm_mb_index(const struct shm_arena *a, const struct shm_mbox_local *mb)
{
	return mb == &a->own_mb ? a->own : (uint32_t)(mb - a->mb);
}

/*
 * Mailbox idx's process-local view (idx < a->n), made on first use, when
 * its descriptor is checked: one that fails makes a view that is "bad"
 * (sends refuse it) and points at a private, empty quarantine.
 */
static inline struct shm_mbox_local *
shm_mb(struct shm_arena *a, uint32_t idx)
{
	struct shm_mbox_local *mb = shm_mb_slot(a, idx);

	if (__builtin_expect(mb->m == NULL, 0))
		shm_localize(a, idx);
	return mb;
}

/*
 * Mailbox idx's send view (idx < a->n), made on first use, alone or with
 * its full view.
 */
static inline struct shm_send_view *
shm_sv(struct shm_arena *a, uint32_t idx)
{
	struct shm_send_view *sv = &a->sv[idx];

	if (__builtin_expect(sv->m == NULL, 0))
		shm_localize_send(a, idx);
	return sv;
}

/* The same for a reader: making the view is a cache fill, not a change. */
static inline struct shm_mbox_local *
shm_mb_c(const struct shm_arena *a, uint32_t idx)
{
	return shm_mb((struct shm_arena *)(uintptr_t)a, idx);
}

static inline struct shm_cell *
lane_cell(const struct shm_lane_local *l, uint64_t pos)
{
	return (struct shm_cell *)(void *)(l->cells + (pos & l->mask) * l->cell);
}

/*
 * Where the payload of a message of len bytes at pos is: in its cell, or
 * in the large slot of its position.  len is checked against l->max by
 * the caller; one larger than that (a scribbled length, read for a dead
 * letter's prefix of at most SHM_DL_PAYLOAD bytes) on a lane without
 * large slots gets the cell's payload, as before large slots.
 */
static inline unsigned char *
cell_data(const struct shm_lane_local *l, uint64_t pos, uint32_t len)
{
	if (__builtin_expect(len <= l->inl || l->big == NULL, 1))
		return lane_cell(l, pos)->payload;
	return l->big + (pos & l->big_mask) * l->big_size;
}

/*
 * The same for the consumer's hot paths, which hold the cell c of pos
 * and the lane's inl in a local already: one compare, no address computed
 * again (after the acquire load of the cell's number the compiler would
 * have to reload the lane's geometry to do it).
 */
static inline unsigned char *
cell_data_at(const struct shm_lane_local *l, struct shm_cell *c,
    uint64_t pos, uint32_t len, uint32_t inl)
{
	if (__builtin_expect(len <= inl, 1))
		return c->payload;
	return cell_data(l, pos, len);
}

/*
 * A cell's sequence number is stored XOR its place in the ring (pos &
 * mask: below the flag bits), so that a page never written reads as
 * every cell of it free for its first lap: a mailbox needs no start
 * (shm_mailbox_prepare writes no cell) and its cells cost memory only once
 * a message has used them.  Every access goes through these, with the
 * position the caller means (any of the cell's laps gives the same place).
 */
static inline uint64_t
cell_seq(const struct shm_lane_local *l, uint64_t pos, memory_order mo)
{
	return atomic_load_explicit(&lane_cell(l, pos)->seq, mo) ^
	    (pos & l->mask);
}

static inline void
cell_seq_set(const struct shm_lane_local *l, uint64_t pos, uint64_t seq,
    memory_order mo)
{
	atomic_store_explicit(&lane_cell(l, pos)->seq, seq ^ (pos & l->mask),
	    mo);
}

/* A strong seq_cst CAS; on failure *expect is what the cell holds. */
static inline bool
cell_seq_cas(const struct shm_lane_local *l, uint64_t pos, uint64_t *expect,
    uint64_t want)
{
	uint64_t k = pos & l->mask, e = *expect ^ k;

	if (atomic_compare_exchange_strong(&lane_cell(l, pos)->seq, &e,
	    want ^ k))
		return true;
	*expect = e ^ k;
	return false;
}

/*
 * Ask for a line to write: PREFETCHW (a line another CPU holds then moves
 * here owned, while this one works on).  Only where a->prefetchw says the
 * CPU has it: __builtin_prefetch(p, 1) is a plain read prefetch unless
 * the build targets such a CPU, and a line fetched shared costs the same
 * round trip again at the store.  The flag comes from one CPUID at attach
 * (shm_cpu_init), not from __builtin_cpu_supports, whose libgcc
 * constructor runs some 15 CPUIDs at every start of every process linked
 * with libactor: 15 to 25 us in a VM, where each one traps.
 */
static inline void
prefetch_own(const void *p)
{
#if defined(__x86_64__)
	__asm__ __volatile__("prefetchw %0" : : "m" (*(const char *)p));
#else
	__builtin_prefetch(p, 1);
#endif
}

/*
 * The consumer, after a cell's number said published and before it copies
 * the header: LFENCE, so that no later load issues before that number
 * came.  Not for ordering (the acquire load does that): without it, a
 * consumer that keeps up with its producer ran ahead speculatively, into
 * the header and the next cells, lines the producer was still writing,
 * and each such early read sent a line back and forth once more.  Measured
 * with bench_ring's ladder: the header rung at 0.62 to 0.85 of the rung
 * below, at 0.95 to 1.1 with it; the mailbox busy-poll 20% to 40% faster.
 * Only in the batch drain (drain_inplace), and only while it is close
 * behind its producer (ring.c, fence_unless_behind): one far behind reads
 * lines written long ago, and the fence only serialized its cache misses.
 * Not in shm_take_one: a round trip's receiver has no next cell being
 * written, and the fence only delayed it (bench_ring rtt p50 1.17x the
 * bare ring's without, 1.29x with).  Nothing on other CPUs: an acquire
 * load orders what follows on its own.
 */
static inline void
cell_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("lfence" ::: "memory");
#endif
}

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* A lane's tail without the express path's TAIL_OWNED. */
static inline uint64_t
lane_tail(const struct shm_lane_ctl *ctl, memory_order mo)
{
	return atomic_load_explicit(&ctl->tail, mo) & ~TAIL_OWNED;
}

/* arena.c */
uint64_t shm_fnv(uint64_t, const void *, size_t);
uint32_t shm_desc_sum(const struct shm_desc *);	/* its check field */
bool	 shm_tsc_trusted(const char *clocksource, const char *cpuflags);

/*
 * The arena clock, read on the hot path: the TSC scaled by the factor
 * calibrated against CLOCK_MONOTONIC when the arena was created (only when
 * the kernel itself uses the TSC as its clock source, i.e. trusts it to be
 * constant and synchronized across CPUs); clock_gettime otherwise.  About
 * 10 ns instead of 25 ns for the vDSO call.
 */
static inline uint64_t
shm_clock(const struct shm_arena *a)
{
#if defined(__x86_64__)
	uint64_t t;

	if (a->tsc_ok) {
		t = __builtin_ia32_rdtsc();
		if (t >= a->tsc_base)
			return a->ns_base + (uint64_t)(((unsigned __int128)
			    (t - a->tsc_base) * a->tsc_mult) >> 32);
	}
#endif
	return shm_now_ns();
}

/*
 * The CPU this thread runs on, for the early wake-up's hint (sleep_cpu):
 * RDPID, where the CPU has it and it says what Linux keeps in TSC_AUX (the
 * CPU in the low 12 bits: shm_cpu_init checks), reads it without touching
 * memory or calling into libc, either of which costs a process woken cold
 * a page walk; sched_getcpu elsewhere.  -1: unknown.
 */
static inline int
shm_cpu(const struct shm_arena *a)
{
#if defined(__x86_64__)
	uint64_t v;

	if (a->rdpid) {
		__asm__ __volatile__("rdpid %0" : "=r"(v));
		return (int)(v & 0xfff);
	}
#endif
	return sched_getcpu();
}

/* ring.c: before a consumer sleeps, the look for blocked senders it put off */
void	 shm_settle(struct shm_arena *, uint32_t idx) SHM_RECV;

/*
 * The effective capacity of a lane (shm_mailbox_configure): its limit
 * when one is set below the physical capacity, else the physical one.
 */
static inline uint64_t
shm_lane_limit(const struct shm_lane_local *l)
{
	uint32_t lim = atomic_load_explicit(&l->ctl->limit,
	    memory_order_relaxed);

	return lim != 0 && lim < l->cap ? lim : l->cap;
}

/* turns.c: blocked senders of a main lane, woken in the order they came */
int	 shm_turn_wait(struct shm_producer *, struct shm_mbox_local *,
	    struct shm_turn *, int64_t deadline);
void	 shm_turn_done(struct shm_producer *, struct shm_mbox_local *,
	    struct shm_turn *);
void	 shm_turn_leave(struct shm_producer *, struct shm_mbox_local *,
	    struct shm_turn *);
bool	 shm_turns_waiting(struct shm_mbox *);
bool	 shm_turns_may_pass(struct shm_producer *, struct shm_mbox_local *);
unsigned shm_turns_grant(struct shm_mbox_local *);
void	 shm_turns_wake_all(struct shm_mbox *);
void	 shm_turn_reaped(struct shm_arena *, struct shm_slot *);
int	 shm_turns_repair(struct shm_arena *, uint32_t);

/* Where ticket t sleeps: its futex cell, and its bit there. */
static inline _Atomic uint32_t *
shm_turn_cell(struct shm_mbox *m, uint32_t t)
{
	return &m->turn_cell[t % SHM_TURN_CELLS];
}

static inline uint32_t
shm_turn_bit(uint32_t t)
{
	return 1u << ((t / SHM_TURN_CELLS) % 32);
}

/* wait.c */
void	 shm_membarrier_init(struct shm_arena *);
void	 shm_cpu_init(struct shm_arena *);
int	 shm_membarrier_register(void);
int	 shm_futex_wait(_Atomic uint32_t *, uint32_t, int64_t timeout_ns)
	    SHM_RECV;
void	 shm_futex_wake(_Atomic uint32_t *, int n);
void	 shm_wake_consumer(struct shm_arena *, uint32_t idx,
	    struct shm_mbox *, unsigned lane, int *bellfd) SHM_HOT;
void	 shm_wake_senders(struct shm_mbox *);
void	 shm_wake_space(struct shm_mbox *);
void	 shm_wake_senders_force(struct shm_mbox *);
int	 shm_futex_wait_bits(_Atomic uint32_t *, uint32_t, uint32_t bits,
	    int64_t deadline_ns);
void	 shm_futex_wake_bits(_Atomic uint32_t *, uint32_t bits, int n);


/* counters.c */
void	 shm_count_dl(struct shm_arena *, uint32_t idx);

/* producer.c */
bool	 shm_pid_exists(pid_t);		/* running or zombie */
int	 shm_release_claim(struct shm_arena *, struct shm_slot *,
	    uint64_t rr, uint64_t pos);

/* express.c: a hot producer's main lane, owned (see there) */
#define SHM_OWN_STREAK		256	/* claims in a row, then it owns */
int	 shm_own_revoke(struct shm_producer *, struct shm_lane_local *,
	    struct shm_mbox *, int64_t deadline);
void	 shm_own_drop(struct shm_producer *, struct shm_lane_local *);
void	 shm_own_release(struct shm_producer *);
void	 shm_own_took(struct shm_producer *, struct shm_lane_local *,
	    uint64_t next);
int	 shm_own_reaped(struct shm_arena *, struct shm_slot *);
void	 shm_own_close(struct shm_producer *);

#endif /* ACTORD_SHM_IMPL_H */
