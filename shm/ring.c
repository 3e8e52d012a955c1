/*
 * ring.c: the lanes of a mailbox: bounded multi-producer single-consumer
 * rings of fixed-size cells with per-cell sequence numbers (Vyukov), the
 * overflow policies, and the consumer's batched drain.
 *
 * Owns: claiming, writing, publishing, consuming and freeing cells.  Must
 * never take a lock, never make a system call on the hot path (only to wake
 * a consumer that is really asleep, or to sleep when the lane is full), and
 * never use a length or sequence number read from a cell without checking
 * it first.
 *
 * The read-once rule (shm.h): actord drains its own mailbox and a dead
 * actor's (on_down = fail, a gone actor), and reads a lane's head message
 * at a reap: a cell's header is copied out once (SHM_ONCE_COPY) and only
 * the checked copy is used; head, tail, limit and sequence numbers are
 * atomic loads into locals, and every change made from them is a CAS from
 * the value read or a store into a cell the reader owns.
 *
 * The protocol (positions are 64-bit and never wrap):
 *
 *   producer: rec := (ring, P, INTENT)    (release stores: pos, then ring)
 *             CAS tail P -> P + 1          (seq_cst)
 *             write header and payload
 *             cell.seq := P + 1            (release: publish)
 *             rec := NONE                  (release)
 *             if consumer.sleeping has this lane: wake it (wait.c)
 *
 *   express:  a producer whose last SHM_OWN_STREAK claims on a main lane
 *             followed one another owns it (express.c): its claim is a
 *             look at tail's line (still its own), its slot's
 *             own_busy := P + 1, a second look (no revoke, the cell
 *             free), tail := (P + 1) | TAIL_OWNED: plain stores; then
 *             write and publish as above, and own_busy := 0 in place of
 *             rec := NONE.  No locked instruction.  Any other sender
 *             takes the lane back first (one membarrier).  A full lane:
 *             the owner polls for room keeping the lane, where and as
 *             long as a blocked sender would (own_room), own_busy 0.
 *
 *   consumer: while cell(head).seq == head + 1: copy the header, check it,
 *             hand it over, cell.seq := head + capacity, head++;
 *             then publish head once for the batch.
 *
 * The cache lines a message touches (a 64-byte tell on a main lane of
 * 128-byte cells, one producer P, a consumer C awake; "moves" counts the
 * transfers between the two CPUs in a steady stream):
 *
 *   line                        written by          read by        moves
 *   cell 1: seq, header,        P per message; C    C per message;    2
 *     payload[0, 16)            frees it            P's claim
 *   cell 2: payload[16, 64)     P per message       C per message     1
 *   tail, limit, queued;        P: CAS per message  P                 0
 *     sleeping, fence_mode;     (owner: a plain
 *     own_slot, own_revoke      store); C when it
 *                               sleeps
 *   head, dequeued, depth_hwm   C per batch         P: limit only     0
 *   claim record (P's slot)     P twice a message   a reaper,         0
 *                               (owner: own_busy)   a revoker
 *   actor entry (prepared)      actord              P per message     0
 *   wait histogram              C per message       metrics           0
 *   turn words, space_waiters   blocked senders     C, fenced, when   0
 *                                                   it finds none
 *   system lane head, cell      system senders      C per drain       0
 *
 * (cell 2 also costs P an invalidation, a lap later; tail moves between
 * producers at every message when several send; the main lane's tail
 * shares its line with the consumer's wake-up words (shm_impl.h, struct
 * shm_mbox), which moves to C and back once per sleep; "P: limit
 * only": a lane with an effective capacity below its cells, large
 * messages and coalesce read head too.)  So a message moves
 * the lines the bare ring's moves (tools/bench/bench_ring.c: its cell is
 * a sequence number and 64 bytes in 128, two lines as well).  What it
 * costs more is measured there rung by rung (tput_ladder_*): the locked
 * CAS on tail, which waits for the previous message's stores to reach the
 * lines the consumer polls (the bare ring's producer runs ahead of its
 * stores), the claim record, the header, and the instructions around
 * them.  The express path (express.c) takes the CAS away from a single
 * hot producer: its claim is a plain store on tail's line, which it holds
 * anyway, and its record two plain stores on its own slot's line, so
 * that it runs ahead of its stores as the bare ring's producer does
 * (bench_ring: the
 * mailbox row, one producer, is the express path; "2 producers" claims
 * by CAS).  The clock (RDTSC, 11 to 25 ns on the hosts measured: as much as
 * the rest of a message) is read by both sides for one message in
 * SHM_STAMP_EVERY only (shm.h, SHM_ENQ_UNTIMED).
 *
 * Why the claim record makes shm_reap() safe (producer.c does the release):
 * the record is written before the CAS on tail (release, then seq_cst RMW),
 * so whoever reads tail > P also sees the record; the owner's record stays
 * (ring, P, INTENT) from before its CAS until after its publishing CAS.  The
 * reaper releases a cell only with a CAS seq P -> (P + 1) | RELEASED, which
 * fails if the owner published first; and only if no live slot records the
 * same (ring, P): a live owner must still show it, since it reads seq == P
 * first and the owner clears its record only after publishing (so a
 * reaper that sees the record cleared also sees seq == P + 1, and its CAS
 * fails).  Publishing is a plain store, not a CAS: a locked instruction on
 * the line the consumer polls would stall the producer for a whole cache
 * line transfer per message (measured: about 20% of throughput).  The
 * price: a cell whose sequence number is scribbled on during the few
 * instructions between claim and publish can be skipped by the consumer and
 * then published anyway, which holds that lane as full until the consumer
 * recovery runs; this needs a scribbling process, not just a dead one.
 *
 * drop_oldest: a sender that finds the main lane full takes the head cell:
 * it copies it (for the dead letter), marks it seq | TAKEN by CAS (only if
 * still published for that position, so the copy was stable), advances head
 * by CAS and frees the cell by CAS.  The consumer of such a lane takes cells
 * the same way (mark, copy, advance, free) so the two never hand the same
 * cell out twice; every free of a marked cell is a CAS, so a reaper or a
 * helper freeing it too is harmless.
 *
 * coalesce: a main lane taken like a drop_oldest one (the consumer marks
 * a cell CONSUMING before it copies it), whose senders, before they
 * claim, look from tail back to head for a published cell of a message
 * flagged SHM_MSG_COALESCE with the same corr (the key; a tell's corr
 * also names the incarnation it is for).  Found, the cell is marked
 * TAKEN | STEALING by CAS from exactly "published for p" (so neither the
 * consumer nor another sender has it), rewritten with the new message,
 * and published again for the same p: the message keeps its place in
 * the queue, and the consumer, which only ever copies a cell it marked
 * CONSUMING itself, never sees half of it.  The sender's slot records
 * (ring, p, STEAL) meanwhile: killed with the mark on, shm_reap
 * dead-letters the cell and frees it (producer.c), as for a drop_oldest
 * sender: the old value was replaced anyway, and the new one's send never
 * returned.  Not found (or lost to the consumer's take), the message is
 * claimed as any other, and a full lane blocks its sender.
 *
 * Large messages (max_message, shm.h): a payload larger than its cell
 * goes into the large slot of its cell's position (cell_data), which is
 * the cell's while the message is queued: every step above (claim,
 * publish, release by shm_reap, republish, steal, rewrite, repair) is
 * the cell's and covers its slot.  The reply lane has a slot per cell;
 * the main lane fewer, so a large message at p first makes sure that the
 * one at p - big_count, which may hold its slot, was taken: drop_oldest
 * drops the oldest before the claim (big_make_room), and after the claim
 * it waits for head (big_room) or gives its cell up, released.  The small
 * path pays one branch on each side: send_large, and cell_data_at.
 *
 * Effective capacity (shm_mailbox_configure): a main lane may hold fewer
 * messages than it has cells.  The limit sits on tail's line; when set, a
 * claim of position P also needs P - head < limit.  head only grows and
 * the claim is a CAS on tail == P, so the lane never holds more than the
 * limit; every policy then treats the lane as full exactly as when the
 * cell is not free (steal takes the head once tail - head reaches the
 * limit, a blocked sender sleeps only after reading head too, and the
 * consumer wakes senders by the same half-the-limit rule).  The policies
 * are read from the arena when the lane is full, never from the
 * process-local layout, so a configuration made before the mailbox's actor
 * was made known is seen by senders that attached earlier.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shm/shm_impl.h"

#define STEAL_OK	0
#define STEAL_RETRY	1
#define STEAL_WAIT	2
#define STEAL_SPINS	8	/* races with a freeing consumer, yielded */
#define COPYBUF_STACK	4096
#define SPACE_SLICE_NS	1000000		/* a blocked sender looks every 1 ms */
#define CLOCK_EVERY	8	/* timed takes (of 64) against one reading */
#define WAKE_EVERY	32	/* cells freed between looks for senders */
#define BIG_SPINS	8	/* yields before a large message sleeps */
#define FENCE_LOOK	16	/* the cell the batch drain looks at ahead */
#define ROOM_SPIN_NS	5000	/* a blocked sender's poll before its line */
#define ROOM_POLLS	16	/* polls between two looks at the clock */

struct room_wait;

static inline int claim(struct shm_producer *, struct shm_mbox_local *,
		    struct shm_lane_local *,
		    unsigned, const struct shm_msg *, const void *, int64_t,
		    uint64_t *, int64_t *);
static int	 overflow(struct shm_producer *, struct shm_mbox_local *,
		    unsigned, uint64_t, const struct shm_msg *, const void *,
		    int64_t, struct room_wait *);
static int	 drop_newest(struct shm_arena *, struct shm_mbox_local *,
		    unsigned, const struct shm_msg *, const void *);
static int	 steal(struct shm_producer *, struct shm_mbox_local *);
static int	 steal_head(struct shm_producer *, struct shm_mbox_local *,
		    bool);
static void	 big_make_room(struct shm_producer *, struct shm_mbox_local *,
		    unsigned);
static int	 wait_space(struct shm_producer *, struct shm_mbox_local *,
		    struct shm_lane_local *, uint64_t, int64_t);
static bool	 room_soon(struct shm_producer *, struct shm_mbox_local *,
		    unsigned, uint64_t, struct room_wait *);
static int	 join_queue(struct shm_producer *, struct shm_mbox_local *,
		    unsigned, const struct shm_msg *, const void *, int64_t,
		    struct room_wait *);
static void	 wait_begin(struct shm_arena *, struct shm_mbox_local *,
		    int64_t, struct room_wait *);
static int	 full(struct shm_arena *, struct shm_mbox_local *, unsigned,
		    const struct shm_msg *, const void *);
static void	 wake_after_take(struct shm_mbox_local *);
static int	 drain_inplace(struct shm_arena *, uint32_t, unsigned,
		    unsigned, shm_handler, void *, int *);
static int	 drain_take(struct shm_arena *, uint32_t, unsigned, unsigned,
		    shm_handler, void *, int *);
static int	 msg_sane(const struct shm_msg *, uint32_t);
static void	 count_wait(struct shm_mbox *, uint64_t, uint64_t);
static inline void clock_before_copy(struct shm_arena *,
		    struct shm_lane_local *, unsigned, uint64_t);
static inline bool sampled(unsigned, uint64_t);
static inline bool sleeps_on_futex(const struct shm_arena *,
		    struct shm_mbox *, uint32_t);
static inline int send_msg(struct shm_producer *, uint32_t, enum shm_lane,
		    const struct shm_msg *, const void *, int64_t, uint64_t *,
		    bool);
static inline void prefetch_cell(struct shm_lane_local *, uint64_t);
static inline void prefetch_ahead(struct shm_lane_local *, uint64_t);
static inline void fence_unless_behind(unsigned char *, uint64_t, uint32_t,
		    uint64_t);
static inline void prefetch_answer(struct shm_arena *,
		    const struct shm_msg *);
static inline void nap_judged(struct shm_mbox_local *, uint64_t);
static inline unsigned lane_order(unsigned);
static inline bool sys_idle(const struct shm_lane_local *, unsigned,
		    uint64_t);
static inline void busy(struct shm_mbox_local *, uint32_t);
static inline void time_taken(struct shm_arena *, struct shm_mbox_local *,
		    struct shm_lane_local *, unsigned, const struct shm_msg *,
		    uint64_t);
static inline void time_sampled(struct shm_arena *, struct shm_mbox_local *,
		    struct shm_lane_local *, unsigned, const struct shm_msg *,
		    uint64_t);
static inline struct shm_cell *cell_at(unsigned char *, uint64_t, uint32_t,
		    uint64_t);
static void	 garbled(struct shm_arena *, uint32_t, unsigned,
		    const struct shm_msg *);
static int	 free_flagged(const struct shm_lane_local *, uint64_t, uint64_t,
		    uint64_t);
static int	 republish(const struct shm_lane_local *, uint64_t, uint64_t);
static void	 catch_up_head(struct shm_lane_local *);
static int	 copy_handler(void *, enum shm_lane, const struct shm_msg *,
		    const void *);
static int	 uses_take(const struct shm_mbox_local *, unsigned);
static unsigned char *take_buf(struct shm_arena *, size_t);
static int	 coalesce(struct shm_producer *, struct shm_mbox_local *,
		    const struct shm_msg *, const void *, uint64_t);
static int	 rewrite(struct shm_producer *, struct shm_mbox_local *,
		    uint64_t, const struct shm_msg *, const void *, uint64_t);
static inline void publish(struct shm_lane_local *, uint64_t,
		    const struct shm_msg *, const void *, uint64_t,
		    unsigned char *, _Atomic uint64_t *);
static inline int owned_claim(struct shm_producer *, struct shm_lane_local *,
		    uint32_t, int64_t, uint64_t *, int64_t *);
static inline int express_send(struct shm_producer *, uint32_t,
		    const struct shm_msg *, const void *, int64_t);
static int	 own_room_claim(struct shm_producer *, struct shm_lane_ctl *,
		    const struct shm_cell *, uint64_t, uint64_t);
static int	 own_room(struct shm_producer *, uint32_t, int64_t,
		    int64_t *);
static int	 send_any(struct shm_producer *, uint32_t, enum shm_lane,
		    const struct shm_msg *, const void *, int64_t);
static inline void streak(struct shm_producer *, struct shm_lane_local *,
		    uint64_t, uint64_t);
static inline uint64_t claim_want(struct shm_producer *,
		    struct shm_lane_local *, uint64_t);
static inline bool still_owned(const struct shm_producer *,
		    const struct shm_lane_local *, const struct shm_mbox *,
		    uint64_t);
static int	 owned_elsewhere(struct shm_producer *, struct shm_mbox_local *,
		    struct shm_lane_local *, unsigned, const struct shm_msg *,
		    const void *, int64_t);
static int	 send_large(struct shm_producer *, struct shm_mbox_local *,
		    uint32_t, unsigned, const struct shm_msg *, const void *,
		    int64_t, uint64_t *);
static inline void send_lane(const struct shm_send_view *, uint32_t,
		    struct shm_lane_local *);
static struct shm_mbox_local *made(struct shm_arena *,
		    struct shm_mbox_local *);
static inline void wake_after_publish(struct shm_producer *,
		    struct shm_mbox *, uint32_t, unsigned);
static int	 over_limit(const struct shm_lane_local *, uint32_t, uint64_t);
static void	 wake_blocked(struct shm_mbox_local *, struct shm_lane_local *,
		    uint64_t) SHM_RECV;
static int	 big_room(struct shm_producer *, struct shm_mbox_local *,
		    unsigned, uint64_t, const struct shm_msg *, const void *,
		    int64_t);
static inline bool big_free(struct shm_lane_local *, uint64_t, uint32_t);
static int64_t	 send_deadline(struct shm_mbox_local *, int64_t);

/*
 * The order lanes are taken in: system, reply, main.  Computed, not a
 * table: a table is one more page for a consumer woken cold.
 */
static inline unsigned
lane_order(unsigned i)
{
	return i == 0 ? SHM_LANE_SYSTEM : i == 1 ? SHM_LANE_REPLY :
	    SHM_LANE_MAIN;
}

/* A sender's wait for room, across the retries of one claim. */
struct room_wait {
	int64_t		 deadline;	/* CLOCK_MONOTONIC ns; 0: not started */
	int64_t		 since;		/* arena clock: when the wait began */
	unsigned	 races;		/* drop_oldest: steals that lost a race */
	int64_t		 spin_until;	/* block, coalesce: room_soon's end */
	struct shm_turn	 turn;		/* block, coalesce: its place in line */
};

struct copy_arg {
	struct shm_msg	*msg;
	void		*buf;
	size_t		 buflen;
	enum shm_lane	*lane;
};

uint64_t
shm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int
uses_take(const struct shm_mbox_local *mb, unsigned lane)
{
	return lane == SHM_LANE_MAIN && mb->takes;
}

/*
 * Claiming pos would put more than lim (non-zero) messages in the lane.
 * head only grows, so a stale reading only errs on the full side; a pos
 * already below head is not "full": its CAS on tail will fail anyway.
 */
static int
over_limit(const struct shm_lane_local *l, uint32_t lim, uint64_t pos)
{
	uint64_t h = atomic_load(&l->ctl->head);

	return (int64_t)(pos - h) >= (int64_t)lim;
}

static int
msg_sane(const struct shm_msg *m, uint32_t payload_max)
{
	return m->len <= payload_max && (m->flags & ~SHM_MSG_USER_MASK) == 0;
}

/* --- sending ------------------------------------------------------------ */

int
shm_send_default(struct shm_producer *p, uint32_t idx,
    const struct shm_msg *msg, const void *payload)
{
	return shm_send(p, idx, SHM_LANE_MAIN, msg, payload,
	    SHM_TIMEOUT_DEFAULT);
}

int
shm_send(struct shm_producer *p, uint32_t idx, enum shm_lane lane,
    const struct shm_msg *msg, const void *payload, int64_t timeout_ns)
{
	/*
	 * The lane's owner (express.c).  The lane first: a ring id is
	 * idx * SHM_NLANES + lane + 1, so lane SHM_NLANES of idx would name
	 * the main lane of idx + 1.  A fork child's copy owns nothing
	 * (producer.c took its own_ring), and send_msg refuses it.
	 */
	if (lane == SHM_LANE_MAIN && p->own_ring == (uint64_t)idx *
	    SHM_NLANES + SHM_LANE_MAIN + 1 && express_send(p, idx, msg,
	    payload, timeout_ns) == 0)
		return 0;
	return send_any(p, idx, lane, msg, payload, timeout_ns);
}

/*
 * shm_send but for the owner's express_send: out of line, so that the
 * owner's send neither saves the registers nor makes the stack frame of
 * send_msg's many paths.
 */
static __attribute__((noinline)) int
send_any(struct shm_producer *p, uint32_t idx, enum shm_lane lane,
    const struct shm_msg *msg, const void *payload, int64_t timeout_ns)
{
	uint64_t started;

	return send_msg(p, idx, lane, msg, payload, timeout_ns, &started,
	    false);
}

/* shm_send if a cell is free now; else SHM_EFULL and nothing else. */
int
shm_offer(struct shm_producer *p, uint32_t idx, enum shm_lane lane,
    const struct shm_msg *msg, const void *payload)
{
	return shm_send(p, idx, lane, msg, payload, SHM_TIMEOUT_OFFER);
}

/* shm_send, and *started says when it began (see shm.h). */
int
shm_send_stamped(struct shm_producer *p, uint32_t idx, enum shm_lane lane,
    const struct shm_msg *msg, const void *payload, int64_t timeout_ns,
    uint64_t *started)
{
	return send_msg(p, idx, lane, msg, payload, timeout_ns, started, true);
}

/*
 * Both sends, inlined in each: shm_send_stamped (want_start) says in
 * *started when it began; shm_send does not, and reads no clock for it.
 */
static inline __attribute__((always_inline)) int
send_msg(struct shm_producer *p, uint32_t idx, enum shm_lane lane,
    const struct shm_msg *msg, const void *payload, int64_t timeout_ns,
    uint64_t *started, bool want_start)
{
	struct shm_arena *a = p->a;
	struct shm_mbox_local *mb;
	struct shm_lane_local ml, *l;
	struct shm_send_view *sv;
	struct shm_mbox	*m;
	_Atomic uint64_t *rec;
	uint64_t	 pos, now;
	int64_t		 waited_from = 0;
	uint32_t	 sleeping;
	bool		 stamp;
	int		 rc;

	*started = 0;
	if (__builtin_expect(p->forked, 0))
		return SHM_EFORKED;
	if (idx >= a->n || (unsigned)lane >= SHM_NLANES)
		return SHM_EBADINDEX;
	if (msg == NULL || (msg->len > 0 && payload == NULL))
		return SHM_EINVAL;
	/*
	 * The main lane from the dense send view (struct shm_send_view),
	 * the others from the full view.  The full view of a main lane's
	 * mailbox is made only by a slow path that reads it (a full lane,
	 * a large message, coalesce: made), so that a sender to many
	 * mailboxes neither writes nor faults in a page of full views per
	 * target.
	 */
	if (lane == SHM_LANE_MAIN) {
		sv = shm_sv(a, idx);
		if (__builtin_expect(sv->bad, 0))
			return SHM_ECORRUPT;
		send_lane(sv, idx, &ml);
		l = &ml;
		m = sv->m;
		mb = shm_mb_slot(a, idx);
	} else {
		mb = shm_mb(a, idx);
		/* Its descriptor is corrupt: it has no place in the arena. */
		if (__builtin_expect(mb->bad, 0))
			return SHM_ECORRUPT;
		l = &mb->lane[lane];
		m = mb->m;
	}
	if (msg->len > l->max) {
		shm_dl_put(a, idx, lane, SHM_DL_OVERSIZE, msg, payload);
		return SHM_EOVERSIZE;
	}
	/*
	 * A spare nobody prepared has cells whose numbers mean nothing: a
	 * claim there would wedge the lane.  The word is in the layout, on
	 * the line of the actor's incarnation that libactor's send reads.
	 */
	if (__builtin_expect(!atomic_load_explicit(&a->actors[idx].prepared,
	    memory_order_acquire), 0)) {
		shm_dl_put(a, idx, lane, SHM_DL_NO_ACTOR, msg, payload);
		return SHM_ENOTREADY;
	}
	/*
	 * A consumer that sleeps after every message (fence_mode) and is
	 * asleep on this lane is woken before the claim and the copy: its
	 * wake-up takes microseconds, and the cache misses of the claim and
	 * the copy then overlap it instead of preceding it.  If it wakes
	 * before the publish it finds nothing and sleeps again, and the look
	 * after the publish below wakes it once more: never a lost wake-up.
	 * Not a doorbell user: its ring is one epoll round and a datagram,
	 * with no wake-up latency to hide, and a ring that finds nothing
	 * would cost it a whole extra round (test_doorbell).  Nor one that
	 * sleeps on this CPU (sleeps_on_futex).
	 */
	sleeping = atomic_load_explicit(&m->sleeping, memory_order_relaxed);
	if ((sleeping & SHM_LANE_BIT(lane)) && sleeps_on_futex(a, m,
	    sleeping))
		shm_wake_consumer(a, idx, m, lane, &p->bellfd);
	if (__builtin_expect((msg->flags & SHM_MSG_COALESCE) != 0, 0) &&
	    lane == SHM_LANE_MAIN && (rc = coalesce(p, mb = made(a, mb), msg,
	    payload, shm_clock(a))) != 0) {
		if (rc < 0)
			return rc;
		*started = shm_clock(a);
		wake_after_publish(p, m, idx, lane);
		return 0;
	}
	/* Larger than its cell: the one branch the small path pays. */
	if (__builtin_expect(msg->len > l->inl, 0))
		return send_large(p, made(a, mb), idx, lane, msg, payload,
		    timeout_ns, started);
	/*
	 * The clock: RDTSC takes 11 to 25 ns on the hosts measured, as much
	 * as the rest of a send, so only the messages shm.h says are timed
	 * read it (SHM_ENQ_UNTIMED).  A receiver asleep on the lane gets a
	 * timed message (its wake-up costs far more than the clock, and
	 * after a nap the first message's time says whether spinning would
	 * have paid: nap_judged), read before the claim: read after it, the
	 * store of enq_ns waits for it and the claim's locked CAS for that
	 * store.  Any other message is timed only at every
	 * SHM_STAMP_EVERY-th position, read after the claim: one send in 8
	 * pays it.  A send that waited for room reads it again (enq_ns is
	 * when the message went in), and began when its wait did.
	 */
	stamp = (sleeping & SHM_LANE_BIT(lane)) != 0;
	now = stamp ? shm_clock(a) : 0;
	/*
	 * The express path (express.c): the lane's owner claims with plain
	 * stores, its record in its own slot; any other claims by CAS.
	 */
	rec = &p->slot->rec_ring;
	if (p->own_ring == l->ring_id && (rc = owned_claim(p, l, idx,
	    timeout_ns, &pos, &waited_from)) >= 0) {
		rec = &p->slot->own_busy;
	} else if ((rc = claim(p, mb, l, lane, msg, payload, timeout_ns, &pos,
	    &waited_from)) < 0)
		return rc;
	if (__builtin_expect(rc == 1, 0) && stamp)
		now = shm_clock(a);
	if (!stamp)
		now = (pos & (SHM_STAMP_EVERY - 1)) == 0 ? shm_clock(a) :
		    SHM_ENQ_UNTIMED | pos;
	if (p->hook != NULL)
		p->hook(p->hook_arg);		/* tests: die here */
	publish(l, pos, msg, payload, now, lane_cell(l, pos)->payload, rec);
	wake_after_publish(p, m, idx, lane);
	if ((msg->flags & (SHM_MSG_ASK | SHM_MSG_REPLY)) == 0 && a->prefetchw)
		prefetch_ahead(l, pos);
	/*
	 * When it began, for a timed send (libactor's ask deadline): its
	 * wait for room, or the clock read now unless enq_ns is a time
	 * already: after the publish, where an asker's reading overlaps its
	 * answer's coming instead of delaying its ask.
	 */
	if (want_start)
		*started = rc == 1 ? (uint64_t)waited_from :
		    shm_enq_timed(now) ? now : shm_clock(a);
	return 0;
}

/*
 * The main lane's geometry as a send's fast path reads it, from the dense
 * view: what the full view's lane holds (arena.c, localize_desc), without
 * large slots (send_large reads the full view) and without the consumer's
 * own fields, which a sender never reads.
 */
_Static_assert(sizeof(struct shm_lane_local) == 88,
    "send_lane sets every field of a lane's view");

static inline void
send_lane(const struct shm_send_view *sv, uint32_t idx,
    struct shm_lane_local *l)
{
	/*
	 * Field by field, not a memset first: GCC makes that a REP STOSQ,
	 * whose start-up cost some 6% of a stream of sends (perf, bench_ring's
	 * mailbox busy-poll).
	 */
	l->ctl = &sv->m->lane[SHM_LANE_MAIN];
	l->cells = sv->cells;
	l->mask = (uint64_t)sv->cap - 1;
	l->cap = sv->cap;
	l->cell = sv->cell;
	l->inl = sv->cell - SHM_CELL_HDR;
	l->max = sv->max;
	l->ring_id = (uint64_t)idx * SHM_NLANES + SHM_LANE_MAIN + 1;
	l->big = NULL;
	l->big_mask = 0;
	l->big_size = 0;
	l->big_count = 0;
	l->now = 0;
	l->clock_left = 0;
	l->unchecked = 0;
}

/*
 * shm_send_stamped of a payload larger than its cell (and within the
 * lane's max): the same steps, with the large slot's own before and after
 * the claim (big_make_room, big_room), and the payload written there.
 */
static int
send_large(struct shm_producer *p, struct shm_mbox_local *mb, uint32_t idx,
    unsigned lane, const struct shm_msg *msg, const void *payload,
    int64_t timeout_ns, uint64_t *started)
{
	struct shm_lane_local *l = &mb->lane[lane];
	uint64_t	 pos, now;
	int64_t		 waited_from;
	int		 rc, waited;

	big_make_room(p, mb, lane);
	if ((rc = claim(p, mb, l, lane, msg, payload, timeout_ns, &pos,
	    &waited_from)) < 0)
		return rc;
	waited = rc;
	if ((rc = big_room(p, mb, lane, pos, msg, payload, timeout_ns)) < 0)
		return rc;
	now = shm_clock(p->a);
	*started = waited == 1 ? (uint64_t)waited_from : now;
	if (p->hook != NULL)
		p->hook(p->hook_arg);		/* tests: die here */
	publish(l, pos, msg, payload, now, cell_data(l, pos, msg->len),
	    &p->slot->rec_ring);
	wake_after_publish(p, mb->m, idx, lane);
	return 0;
}

/*
 * Write msg into the cell we hold for pos (its payload at dst: the cell's,
 * or its large slot), publish it, drop our record.
 */
static inline void
publish(struct shm_lane_local *l, uint64_t pos, const struct shm_msg *msg,
    const void *payload, uint64_t now, unsigned char *dst,
    _Atomic uint64_t *rec)
{
	struct shm_cell	*c = lane_cell(l, pos);
	struct shm_msg	 hdr;

	if (msg->len > 0)
		shm_copy(dst, payload, msg->len);
	hdr = *msg;
	hdr.enq_ns = now;
	hdr.flags &= SHM_MSG_USER_MASK;
	c->msg = hdr;
	cell_seq_set(l, pos, pos + 1, memory_order_release);
	atomic_store_explicit(rec, 0, memory_order_release);
}

/*
 * Publish, then look at "sleeping": a store then a load, which the CPU
 * may reorder.  A producer registered for membarrier needs no fence here
 * (the consumer issues one on every CPU before it sleeps, see wait.c),
 * unless the consumer asked for fences because it sleeps often
 * (fence_mode); an unregistered one always fences.
 */
static inline void
wake_after_publish(struct shm_producer *p, struct shm_mbox *m, uint32_t idx,
    unsigned lane)
{
	uint32_t sleeping;

	atomic_signal_fence(memory_order_seq_cst);
	if (p->fence || atomic_load_explicit(&m->fence_mode,
	    memory_order_relaxed))
		atomic_thread_fence(memory_order_seq_cst);
	sleeping = atomic_load_explicit(&m->sleeping, memory_order_relaxed);
	if (sleeping & SHM_LANE_BIT(lane))
		shm_wake_consumer(p->a, idx, m, lane, &p->bellfd);
}

/* A queued tell (never an ask) with the key of msg. */
static inline bool
same_key(const struct shm_msg *queued, const struct shm_msg *msg)
{
	return (queued->flags & (SHM_MSG_COALESCE | SHM_MSG_ASK)) ==
	    SHM_MSG_COALESCE && queued->corr == msg->corr;
}

/*
 * coalesce: the newest queued message with msg's key, replaced in place
 * by msg (see the top of this file).  1 if one was, 0 if none was found
 * (the caller claims a cell as for any message).  Asks are never
 * coalesced: their corr is their id.
 */
static int
coalesce(struct shm_producer *p, struct shm_mbox_local *mb,
    const struct shm_msg *msg, const void *payload, uint64_t now)
{
	struct shm_lane_local *l = &mb->lane[SHM_LANE_MAIN];
	struct shm_msg	 m;
	uint64_t	 h, t, pos;

	if ((msg->flags & SHM_MSG_ASK) != 0 || atomic_load_explicit(
	    &mb->actor->cfg_overflow, memory_order_relaxed) !=
	    SHM_OVERFLOW_COALESCE)
		return 0;
	h = atomic_load(&l->ctl->head);
	t = lane_tail(l->ctl, memory_order_seq_cst);
	if (t < h || t - h > l->cap)
		return 0;		/* moved meanwhile, or scribbled on */
	for (pos = t; pos-- > h;) {
		if (cell_seq(l, pos, memory_order_acquire) != pos + 1)
			continue;	/* being written, taken or replaced */
		SHM_ONCE_COPY(m, lane_cell(l, pos)->msg);
		if (!same_key(&m, msg))
			continue;
		if (rewrite(p, mb, pos, msg, payload, now))
			return 1;
	}
	return 0;
}

/*
 * Replace the message published for pos, if it is still published for
 * pos and still carries msg's key once marked ours.  1 if replaced.
 */
static int
rewrite(struct shm_producer *p, struct shm_mbox_local *mb, uint64_t pos,
    const struct shm_msg *msg, const void *payload, uint64_t now)
{
	struct shm_lane_local *l = &mb->lane[SHM_LANE_MAIN];
	struct shm_cell	*c = lane_cell(l, pos);
	struct shm_msg	 hdr;
	uint64_t	 expect = pos + 1, held = (pos + 1) | SEQ_TAKEN |
			    SEQ_STEALING;

	atomic_store_explicit(&p->slot->rec_pos, pos, memory_order_release);
	atomic_store_explicit(&p->slot->rec_ring, l->ring_id << 2 | REC_STEAL,
	    memory_order_release);
	if (!cell_seq_cas(l, pos, &expect, held)) {
		atomic_store_explicit(&p->slot->rec_ring, 0,
		    memory_order_release);
		return 0;
	}
	SHM_ONCE_COPY(hdr, c->msg);
	if (!same_key(&hdr, msg) || !big_free(l, pos, msg->len)) {
		/*
		 * Replaced by another key's sender before we looked, or a
		 * large message whose slot an older one still holds: keep.
		 */
		cell_seq_set(l, pos, pos + 1, memory_order_release);
		atomic_store_explicit(&p->slot->rec_ring, 0,
		    memory_order_release);
		return 0;
	}
	if (p->steal_hook != NULL)
		p->steal_hook(p->steal_hook_arg);	/* tests: die here */
	publish(l, pos, msg, payload, now, cell_data(l, pos, msg->len),
	    &p->slot->rec_ring);
	atomic_fetch_add_explicit(&mb->m->replaced, 1, memory_order_relaxed);
	return 1;
}

/*
 * The full view of a mailbox a send reached through its dense view only
 * (shm_send_stamped): made now, for a slow path.  A sender that never
 * needs it never writes it, nor faults its page in.
 */
static struct shm_mbox_local *
made(struct shm_arena *a, struct shm_mbox_local *mb)
{
	if (mb->m == NULL)
		shm_localize(a, shm_mb_index(a, mb));
	return mb;
}

/*
 * Inlined in both its callers (shm_send_stamped, send_large): out of line,
 * the small path's send pays a call and its spills (about 40 instructions
 * a message, measured with callgrind).
 */
static inline __attribute__((always_inline)) int
claim(struct shm_producer *p, struct shm_mbox_local *mb,
    struct shm_lane_local *l, unsigned lane, const struct shm_msg *msg,
    const void *payload, int64_t timeout_ns, uint64_t *posp,
    int64_t *waited_from)
{
	struct shm_slot	*slot = p->slot;
	uint64_t	 intent = l->ring_id << 2 | REC_INTENT;
	struct room_wait w = { 0 };
	uint64_t	 pos, seq, again, want;
	int64_t		 diff;
	uint32_t	 lim;
	int		 rc, waited = 0;

	/*
	 * The limit sits on tail's line: 0 (no effective capacity below the
	 * physical one) costs one predictable branch and no cache miss.  So
	 * does "queued": senders wait their turn (turns.c), and this one
	 * queues behind them rather than take the cell they are woken for.
	 */
	pos = atomic_load_explicit(&l->ctl->tail, memory_order_relaxed);
	lim = atomic_load_explicit(&l->ctl->limit, memory_order_relaxed);
	if (__builtin_expect(lim >= l->cap, 0))
		lim = 0;
	if (__builtin_expect(atomic_load_explicit(&l->ctl->queued,
	    memory_order_relaxed) != 0, 0) && (rc = join_queue(p,
	    mb = made(p->a, mb), lane, msg, payload, timeout_ns, &w)) != 0) {
		if (rc < 0)
			return rc;
		waited = 1;
		pos = atomic_load_explicit(&l->ctl->tail, memory_order_relaxed);
	}
	for (;;) {
		if (__builtin_expect((pos & TAIL_OWNED) != 0, 0)) {
			atomic_store_explicit(&slot->rec_ring, 0,
			    memory_order_release);
			if ((rc = owned_elsewhere(p, mb = made(p->a, mb), l,
			    lane, msg, payload, timeout_ns)) < 0) {
				shm_turn_leave(p, mb, &w.turn);
				return rc;
			}
			pos = atomic_load_explicit(&l->ctl->tail,
			    memory_order_relaxed);
			continue;
		}
		seq = cell_seq(l, pos, memory_order_acquire) & ~SEQ_FLAGS;
		diff = (int64_t)(seq - pos);
		if (__builtin_expect(lim != 0, 0) && diff == 0 &&
		    over_limit(l, lim, pos))
			diff = -1;	/* full under the effective capacity */
		if (diff == 0) {
			atomic_store_explicit(&slot->rec_pos, pos,
			    memory_order_release);
			if (atomic_load_explicit(&slot->rec_ring,
			    memory_order_relaxed) != intent)
				atomic_store_explicit(&slot->rec_ring, intent,
				    memory_order_release);
			want = claim_want(p, l, pos);
			if (atomic_compare_exchange_weak(&l->ctl->tail, &pos,
			    want)) {
				streak(p, l, pos, want);
				if (__builtin_expect(w.turn.held, 0))
					shm_turn_done(p, mb, &w.turn);
				*posp = pos;
				*waited_from = w.since;
				return waited;
			}
			continue;
		}
		if (diff > 0) {
			again = atomic_load_explicit(&l->ctl->tail,
			    memory_order_relaxed);
			if (again == pos) {
				/* A free cell with a wild sequence number. */
				atomic_store_explicit(&slot->rec_ring, 0,
				    memory_order_release);
				mb = made(p->a, mb);
				atomic_fetch_add(&mb->m->garbled, 1);
				shm_turn_leave(p, mb, &w.turn);
				return SHM_EGARBLED;
			}
			pos = again;
			continue;
		}
		atomic_store_explicit(&slot->rec_ring, 0, memory_order_release);
		mb = made(p->a, mb);
		rc = overflow(p, mb, lane, pos, msg, payload, timeout_ns, &w);
		if (rc < 0) {
			shm_turn_leave(p, mb, &w.turn);
			return rc;
		}
		waited = 1;
		pos = atomic_load_explicit(&l->ctl->tail, memory_order_relaxed);
	}
}

/*
 * The express path (express.c).  A main lane's mailbox: its lane[0]
 * begins it (the union in struct shm_mbox).
 */
_Static_assert(SHM_LANE_MAIN == 0 && offsetof(struct shm_mbox, lane) == 0,
    "a main lane's control block begins its mailbox");

static inline struct shm_mbox *
lane_mbox(const struct shm_lane_local *l)
{
	return (struct shm_mbox *)(void *)l->ctl;
}

/* The lane is still this owner's, as it left it (tail's line only). */
static inline bool
still_owned(const struct shm_producer *p, const struct shm_lane_local *l,
    const struct shm_mbox *m, uint64_t pos)
{
	return atomic_load_explicit(&l->ctl->tail, memory_order_relaxed) ==
	    (pos | TAIL_OWNED) && atomic_load_explicit(&m->own_slot,
	    memory_order_relaxed) == p->slot_no + 1;
}

/*
 * The owner's claim of its next position, with plain stores: 0 and *posp
 * (1 if it waited for room first: *waited_from says since when, in the
 * arena clock), or -1 if anything is not as it left it (a revoke, another
 * owner, blocked senders, a full lane it may not or no longer wait on:
 * own_room): then it has given the lane back, and claims by CAS as
 * anyone.  Its record (own_busy, its slot's) is stored after a first look
 * that the lane is still its and before the look for a revoke, which the
 * revoker's membarrier orders; the second look at tail catches a revoke
 * that ended in between (express.c).
 */
static inline __attribute__((always_inline)) int
owned_claim(struct shm_producer *p, struct shm_lane_local *l, uint32_t idx,
    int64_t timeout_ns, uint64_t *posp, int64_t *waited_from)
{
	struct shm_mbox	*m = lane_mbox(l);
	uint64_t	 pos = p->own_next;
	uint32_t	 lim;
	bool		 bad;

	if (__builtin_expect(!still_owned(p, l, m, pos), 0)) {
		shm_own_drop(p, l);
		return -1;
	}
	atomic_store_explicit(&p->slot->own_busy, pos + 1,
	    memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	lim = atomic_load_explicit(&l->ctl->limit, memory_order_relaxed);
	bad = atomic_load_explicit(&m->own_revoke, memory_order_relaxed) != 0 ||
	    !still_owned(p, l, m, pos) || atomic_load_explicit(&l->ctl->queued,
	    memory_order_relaxed) != 0 || (lim != 0 && lim < l->cap &&
	    over_limit(l, lim, pos));
	if (__builtin_expect(bad || (cell_seq(l, pos, memory_order_acquire) &
	    ~SEQ_FLAGS) != pos, 0)) {
		atomic_store_explicit(&p->slot->own_busy, 0,
		    memory_order_release);
		/* A full lane: room waited for, owning it still. */
		if (bad || own_room(p, idx, timeout_ns, waited_from) != 0) {
			shm_own_drop(p, l);
			return -1;
		}
		*posp = pos;
		return 1;
	}
	atomic_store_explicit(&l->ctl->tail, (pos + 1) | TAIL_OWNED,
	    memory_order_relaxed);
	p->own_next = pos + 1;
	*posp = pos;
	return 0;
}

/*
 * own_room's claim of pos, once its cell looked free: owned_claim's
 * steps (record, a look for a revoke and at the lane, the cell, tail).
 * 0 with the record set, or 1 with it cleared.
 */
static int
own_room_claim(struct shm_producer *p, struct shm_lane_ctl *ctl,
    const struct shm_cell *c, uint64_t k, uint64_t pos)
{
	struct shm_mbox	*m = (struct shm_mbox *)(void *)ctl;
	uint32_t	 lim;

	atomic_store_explicit(&p->slot->own_busy, pos + 1,
	    memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	lim = atomic_load_explicit(&ctl->limit, memory_order_relaxed);
	if (atomic_load_explicit(&m->own_revoke, memory_order_relaxed) != 0 ||
	    (lim != 0 && lim < p->own_cap && (int64_t)(pos -
	    atomic_load(&ctl->head)) >= (int64_t)lim) ||
	    atomic_load_explicit(&ctl->tail, memory_order_relaxed) !=
	    (pos | TAIL_OWNED) || atomic_load_explicit(&m->own_slot,
	    memory_order_relaxed) != p->slot_no + 1 || atomic_load_explicit(
	    &ctl->queued, memory_order_relaxed) != 0 ||
	    ((atomic_load_explicit(&c->seq, memory_order_acquire) ^ k) &
	    ~SEQ_FLAGS) != pos) {
		atomic_store_explicit(&p->slot->own_busy, 0,
		    memory_order_release);
		return 1;
	}
	atomic_store_explicit(&ctl->tail, (pos + 1) | TAIL_OWNED,
	    memory_order_relaxed);
	p->own_next = pos + 1;
	return 0;
}

/*
 * The owner found its next cell (at own_next) not yet freed, all else
 * as it left it: a full lane.  Giving the lane back there cost a
 * producer that outruns its consumer the express path whenever the lane
 * filled: SHM_OWN_STREAK claims by CAS to take it again, each slower than
 * the consumer, which then caught up (tools/bench/bench_ring.c, the pairs
 * far behind).  So, where a sender that claims by CAS would poll for room
 * (room_soon: the policy blocks, the send may wait, the consumer is awake
 * and no effective capacity limits the lane), the owner polls the cell
 * while keeping the lane, for as long as room_soon would (ROOM_SPIN_NS
 * after its first ROOM_POLLS polls, and within the send's timeout).  Its
 * record is 0 meanwhile: a revoker takes the lane back at once, as
 * between sends, and a sender in line (queued) or a revoke in progress
 * ends the wait, as does the consumer going to sleep.  The cell freed,
 * it claims pos as owned_claim does (its record, both looks, tail): 0,
 * with its record set.  1 to give up, its record 0 (the caller gives the
 * lane back: the policy then acts on a claim by CAS, and a sender that
 * must block waits its turn in line as any other, without polling the
 * same cell again: room_spent).  *since (if not NULL):
 * when the wait began, in the arena clock.  Every word read is a hint:
 * the cell is free only for exactly pos, and the clock bounds the rest.
 * Out of line, and given what the producer's handle holds (its lane's
 * geometry, its next position) rather than passed: the owner's send
 * keeps fewer registers for the call it makes only on a full lane
 * (callgrind, bench_ring's one_cpu: 155 instructions a send, 158 with
 * the cell, its index and the position passed, 153 before own_room).
 */
static __attribute__((noinline)) int
own_room(struct shm_producer *p, uint32_t idx, int64_t timeout_ns,
    int64_t *since)
{
	struct shm_lane_ctl *ctl = p->own_ctl;
	uint64_t	 pos = p->own_next, k = pos & p->own_mask;
	const struct shm_cell *c = (const struct shm_cell *)(const void *)
	    (p->own_cells + k * p->own_cell);
	struct shm_arena *a = p->a;
	struct shm_mbox	*m = (struct shm_mbox *)(void *)ctl;
	struct shm_actor *act = &a->actors[idx];
	uint64_t	 owned = pos | TAIL_OWNED;
	uint32_t	 pol, lim, me = p->slot_no + 1;
	int64_t		 spin, until = 0, now;
	unsigned	 i;

	if (timeout_ns == SHM_TIMEOUT_OFFER)
		return 1;
	pol = atomic_load_explicit(&act->cfg_overflow, memory_order_acquire);
	lim = atomic_load_explicit(&ctl->limit, memory_order_relaxed);
	spin = timeout_ns == SHM_TIMEOUT_DEFAULT ? (int64_t)atomic_load_explicit(
	    &act->cfg_timeout_ms, memory_order_relaxed) * 1000000 :
	    timeout_ns < 0 ? ROOM_SPIN_NS : timeout_ns;
	if ((pol != SHM_OVERFLOW_BLOCK && pol != SHM_OVERFLOW_COALESCE) ||
	    (lim != 0 && lim < p->own_cap) || spin <= 0)
		return 1;
	if (spin > ROOM_SPIN_NS)
		spin = ROOM_SPIN_NS;
	if (since != NULL)
		*since = (int64_t)shm_clock(a);
	for (i = 1; ; i++) {
		if (p->room_hook != NULL)
			p->room_hook(p->room_hook_arg);	/* tests */
		if (((atomic_load_explicit(&c->seq, memory_order_acquire) ^ k) &
		    ~SEQ_FLAGS) == pos)
			return own_room_claim(p, ctl, c, k, pos);
		if (atomic_load_explicit(&m->own_revoke,
		    memory_order_relaxed) != 0 || atomic_load_explicit(
		    &ctl->tail, memory_order_relaxed) != owned ||
		    atomic_load_explicit(&m->own_slot, memory_order_relaxed) !=
		    me || atomic_load_explicit(&ctl->queued,
		    memory_order_relaxed) != 0 || (atomic_load_explicit(
		    &m->sleeping, memory_order_relaxed) &
		    SHM_LANE_BIT(SHM_LANE_MAIN)) != 0)
			return 1;
		cpu_relax();
		if (i % ROOM_POLLS != 0)
			continue;
		/* The clock only once the cell did not come at once. */
		now = (int64_t)shm_now_ns();
		if (until == 0)
			until = now + spin;
		else if (now >= until) {
			p->room_spent = pos + 1;	/* room_soon's too */
			return 1;
		}
	}
}

/*
 * The owner's send of a small message (shm_send; own_ring says idx's main
 * lane is this producer's): send_msg's steps for that case, over the
 * lane's geometry kept in the producer's handle (shm_own_took) instead of
 * a view built per send, and with what ownership makes certain left out
 * (the index and the lane are the owned one's, its view was good, a
 * payload within a cell is within the lane's max).  Everything else is
 * checked as send_msg checks it; whatever asks for more than a claim and
 * a publish (the consumer asleep on the lane, coalesce, a large payload,
 * a lane that is not as its owner left it, limited or queued for, full
 * once own_room gave up) returns 1 before anything was written but the
 * owner's own record, cleared again, and send_msg does the send.
 * Measured on one CPU (512 sends of 64 bytes, then a drain, over and
 * over): 19.6 ns and 258 instructions (callgrind) a send through
 * send_msg, 11.6 ns and 155 here (153 before own_room: the registers
 * its call keeps); the bare ring's producer (tools/bench/bench_ring.c)
 * 5.3 ns.
 */
static inline __attribute__((always_inline)) int
express_send(struct shm_producer *p, uint32_t idx, const struct shm_msg *msg,
    const void *payload, int64_t timeout_ns)
{
	struct shm_arena *a = p->a;
	struct shm_lane_ctl *ctl = p->own_ctl;
	struct shm_mbox	*m = (struct shm_mbox *)(void *)ctl;
	struct shm_cell	*c;
	uint64_t	 pos = p->own_next, k = pos & p->own_mask, now;
	uint64_t	 owned = pos | TAIL_OWNED;
	uint32_t	 lim, me = p->slot_no + 1;
	bool		 bad, waited = false;

	if (__builtin_expect(msg == NULL || msg->len > p->own_inl ||
	    (msg->len > 0 && payload == NULL) ||
	    (msg->flags & SHM_MSG_COALESCE) != 0, 0))
		return 1;
	if (__builtin_expect(!atomic_load_explicit(&a->actors[idx].prepared,
	    memory_order_acquire) || (atomic_load_explicit(&m->sleeping,
	    memory_order_relaxed) & SHM_LANE_BIT(SHM_LANE_MAIN)) != 0, 0))
		return 1;
	/* owned_claim's two looks, its record between them. */
	if (__builtin_expect(atomic_load_explicit(&ctl->tail,
	    memory_order_relaxed) != owned || atomic_load_explicit(&m->own_slot,
	    memory_order_relaxed) != me, 0))
		return 1;
	c = (struct shm_cell *)(void *)(p->own_cells + k * p->own_cell);
	atomic_store_explicit(&p->slot->own_busy, pos + 1,
	    memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	lim = atomic_load_explicit(&ctl->limit, memory_order_relaxed);
	bad = atomic_load_explicit(&m->own_revoke, memory_order_relaxed) != 0 ||
	    atomic_load_explicit(&ctl->tail, memory_order_relaxed) != owned ||
	    atomic_load_explicit(&m->own_slot, memory_order_relaxed) != me ||
	    atomic_load_explicit(&ctl->queued, memory_order_relaxed) != 0 ||
	    (lim != 0 && lim < p->own_cap && (int64_t)(pos -
	    atomic_load(&ctl->head)) >= (int64_t)lim);
	if (__builtin_expect(bad || ((atomic_load_explicit(&c->seq,
	    memory_order_acquire) ^ k) & ~SEQ_FLAGS) != pos, 0)) {
		atomic_store_explicit(&p->slot->own_busy, 0,
		    memory_order_release);
		if (bad)
			return 1;
		/*
		 * A full lane: room waited for, owning it still.  Given
		 * up, the lane goes back here, so that send_msg does not
		 * wait again before it claims by CAS.
		 */
		if (own_room(p, idx, timeout_ns, NULL) != 0) {
			shm_own_release(p);
			return 1;
		}
		waited = true;
	} else {
		atomic_store_explicit(&ctl->tail, (pos + 1) | TAIL_OWNED,
		    memory_order_relaxed);
		p->own_next = pos + 1;
	}
	now = (pos & (SHM_STAMP_EVERY - 1)) == 0 ? shm_clock(a) :
	    SHM_ENQ_UNTIMED | pos;
	if (__builtin_expect(p->hook != NULL, 0))
		p->hook(p->hook_arg);		/* tests: die here */
	/*
	 * publish's, the header field by field: a copy of *msg then changed
	 * in a local was some 20 instructions of shuffles.
	 */
	if (msg->len > 0)
		shm_copy(c->payload, payload, msg->len);
	memcpy(&c->msg, msg, offsetof(struct shm_msg, enq_ns));
	c->msg.enq_ns = now;
	c->msg.attempts = msg->attempts;
	c->msg.flags = msg->flags & SHM_MSG_USER_MASK;
	atomic_store_explicit(&c->seq, (pos + 1) ^ k, memory_order_release);
	atomic_store_explicit(&p->slot->own_busy, 0, memory_order_release);
	wake_after_publish(p, m, idx, SHM_LANE_MAIN);
	if ((msg->flags & (SHM_MSG_ASK | SHM_MSG_REPLY)) == 0 && a->prefetchw &&
	    !waited) {
		c = (struct shm_cell *)(void *)(p->own_cells +
		    ((pos + 2) & p->own_mask) * p->own_cell);
		prefetch_own(c);
		prefetch_own((char *)c + SHM_CL);
	}
	return 0;
}

/*
 * What a claim of pos CASes tail to: pos + 1, with TAIL_OWNED when this
 * producer's last SHM_OWN_STREAK claims on the main lane followed one
 * another and nobody is taking the lane back.  A producer that must fence
 * (not registered for membarrier) never owns: a revoker's barrier would
 * not order its sends.
 */
static inline uint64_t
claim_want(struct shm_producer *p, struct shm_lane_local *l, uint64_t pos)
{
	struct shm_mbox	*m;

	if (__builtin_expect(p->streak < SHM_OWN_STREAK, 1) || p->fence ||
	    p->hot_ring != l->ring_id ||
	    (l->ring_id - 1) % SHM_NLANES != SHM_LANE_MAIN)
		return pos + 1;
	m = lane_mbox(l);
	if (atomic_load(&m->own_revoke) != 0)
		return pos + 1;
	return (pos + 1) | TAIL_OWNED;
}

/* After a claim of pos by CAS to want: the streak, or the lane taken. */
static inline void
streak(struct shm_producer *p, struct shm_lane_local *l, uint64_t pos,
    uint64_t want)
{
	if (__builtin_expect((want & TAIL_OWNED) != 0, 0)) {
		shm_own_took(p, l, pos + 1);
		return;
	}
	if (p->hot_ring == l->ring_id && p->hot_next == pos)
		p->streak++;
	else {
		p->hot_ring = l->ring_id;
		p->streak = 0;
	}
	p->hot_next = pos + 1;
}

/*
 * A claim found the main lane owned by another producer: taken back
 * (express.c), or, if its owner stayed busy past the send's deadline,
 * the send fails as on a full lane.
 */
static int
owned_elsewhere(struct shm_producer *p, struct shm_mbox_local *mb,
    struct shm_lane_local *l, unsigned lane, const struct shm_msg *msg,
    const void *payload, int64_t timeout_ns)
{
	if (shm_own_revoke(p, l, mb->m, send_deadline(mb, timeout_ns)) == 0)
		return 0;
	if (timeout_ns == SHM_TIMEOUT_OFFER)
		return SHM_EFULL;
	return full(p->a, mb, lane, msg, payload);
}

/* drop_newest, or a drop_oldest sender out of time: this message goes. */
static int
drop_newest(struct shm_arena *a, struct shm_mbox_local *mb, unsigned lane,
    const struct shm_msg *msg, const void *payload)
{
	atomic_fetch_add(&mb->m->dropped, 1);
	shm_dl_put(a, shm_mb_index(a, mb), lane, SHM_DL_DROPPED_NEWEST, msg,
	    payload);
	return SHM_EDROPPED;
}

/*
 * The lane looked full at pos.  Returns 0 to retry the claim, or the error
 * to give the sender (with the dead letter written).
 *
 * A drop_oldest sender that finds no head cell it may take (a consumer is
 * handing it over, or freeing it, or another sender is dropping it) waits
 * like a blocked sender: yields for a few races that end at once, then
 * sleeps a slice at a time until room appears or its deadline passes, and
 * then drops its own message.  Spinning instead would burn a CPU for as
 * long as the consumer stays stopped between its steps, deadline or not.
 */
static int
overflow(struct shm_producer *p, struct shm_mbox_local *mb, unsigned lane,
    uint64_t pos, const struct shm_msg *msg, const void *payload,
    int64_t timeout_ns, struct room_wait *w)
{
	struct shm_arena *a = p->a;
	enum shm_overflow pol;
	int64_t		 now, rem;
	int		 rc;

	if (timeout_ns == SHM_TIMEOUT_OFFER)
		return SHM_EFULL;	/* the caller keeps the message */
	/* The policies as configured now (arena.c, shm_mailbox_configure). */
	pol = lane == SHM_LANE_MAIN ? (enum shm_overflow)atomic_load_explicit(
	    &mb->actor->cfg_overflow, memory_order_acquire) : SHM_OVERFLOW_REJECT;
	wait_begin(a, mb, timeout_ns, w);
	switch (pol) {
	case SHM_OVERFLOW_DROP_NEWEST:
		return drop_newest(a, mb, lane, msg, payload);
	case SHM_OVERFLOW_DROP_OLDEST:
		rc = steal(p, mb);
		if (rc == STEAL_OK)
			return 0;
		if (rc == STEAL_RETRY && ++w->races <= STEAL_SPINS) {
			sched_yield();
			return 0;
		}
		/* No head cell to take now: wait, within the deadline. */
		now = (int64_t)shm_now_ns();
		if (now >= w->deadline)
			return drop_newest(a, mb, lane, msg, payload);
		rem = w->deadline - now;
		wait_space(p, mb, &mb->lane[lane], pos, rem < SPACE_SLICE_NS ?
		    rem : SPACE_SLICE_NS);
		return 0;
	case SHM_OVERFLOW_BLOCK:
	case SHM_OVERFLOW_COALESCE:	/* no such key queued: as block */
		/* A consumer at work frees the cell soon: no line, no sleep. */
		if (room_soon(p, mb, lane, pos, w))
			return 0;
		/* In line, woken in turn (turns.c). */
		if (shm_turn_wait(p, mb, &w->turn, w->deadline) == 0)
			return 0;
		/* FALLTHROUGH */
	case SHM_OVERFLOW_REJECT:
	default:
		return full(a, mb, lane, msg, payload);
	}
}

/* The lane is full for this message: counted, dead-lettered, SHM_EFULL. */
static int
full(struct shm_arena *a, struct shm_mbox_local *mb, unsigned lane,
    const struct shm_msg *msg, const void *payload)
{
	atomic_fetch_add(&mb->m->full, 1);
	shm_dl_put(a, shm_mb_index(a, mb), lane, SHM_DL_FULL, msg,
	    payload);
	return SHM_EFULL;
}

/* When a wait for room began, and its deadline: once per send. */
static void
wait_begin(struct shm_arena *a, struct shm_mbox_local *mb, int64_t timeout_ns,
    struct room_wait *w)
{
	if (w->deadline != 0)
		return;
	/* For shm_send_stamped, in the arena clock like enq_ns. */
	w->since = (int64_t)shm_clock(a);
	w->deadline = send_deadline(mb, timeout_ns);
}

/*
 * The main lane has senders waiting their turn ("queued"): a sender of a
 * policy that blocks passes them if it may (turns.c, shm_turns_may_pass:
 * one just let in sends on while no cell it takes is owed to a turn, any
 * other only while the lane is less than half full), else it queues
 * behind them.  A send that may not wait (an offer, timeout 0) never
 * queues: it takes a free cell or fails.  1 when its turn came (claim
 * now), 0 if it need not queue, or SHM_EFULL (with its dead letter) when
 * its deadline passed first.
 */
static int
join_queue(struct shm_producer *p, struct shm_mbox_local *mb, unsigned lane,
    const struct shm_msg *msg, const void *payload, int64_t timeout_ns,
    struct room_wait *w)
{
	uint32_t pol;

	if (lane != SHM_LANE_MAIN || timeout_ns == SHM_TIMEOUT_OFFER ||
	    timeout_ns == 0)
		return 0;
	pol = atomic_load_explicit(&mb->actor->cfg_overflow,
	    memory_order_acquire);
	if ((pol != SHM_OVERFLOW_BLOCK && pol != SHM_OVERFLOW_COALESCE) ||
	    shm_turns_may_pass(p, mb))
		return 0;
	wait_begin(p->a, mb, timeout_ns, w);
	if (shm_turn_wait(p, mb, &w->turn, w->deadline) == 0)
		return 1;
	return full(p->a, mb, lane, msg, payload);
}

/*
 * A sender of a policy that blocks found the lane full at pos: while its
 * consumer is awake (not asleep on the lane), nobody is in line and the
 * lane has no effective capacity below its cells, it polls the cell for
 * up to ROOM_SPIN_NS (within its deadline; once a send, however often it
 * comes back here) before it joins the line.  A consumer at work frees a
 * cell per message, within some nanoseconds; in line, the sender slept
 * until the lane was half empty, and its wake-up (tens of microseconds
 * here) left the consumer with nothing to take: a stream of sends into a
 * mailbox whose consumer was a little slower than its producer ran at a
 * third of the consumer's speed (tools/bench/bench_ring.c: one sleep and
 * one wake-up per half lane, "sleeps" in its regime column).  A consumer
 * on this sender's CPU frees nothing while it polls: that costs the poll,
 * ROOM_SPIN_NS once per full lane (a sender let in from the line then
 * sends on for half a lane: turns.c).  Not again for the position its
 * owner polled for in vain just before it gave the lane back (own_room,
 * room_spent): the wait is one poll long, owner or not.  true when the
 * cell was freed or tail moved on (claim again), false to queue.
 */
static bool
room_soon(struct shm_producer *p, struct shm_mbox_local *mb, unsigned lane,
    uint64_t pos, struct room_wait *w)
{
	struct shm_lane_local *l = &mb->lane[lane];
	struct shm_lane_ctl *ctl = l->ctl;
	int64_t		 now;
	unsigned	 i;

	if (w->turn.held || w->deadline <= 0 || shm_lane_limit(l) < l->cap ||
	    (atomic_load_explicit(&mb->m->sleeping, memory_order_relaxed) &
	    SHM_LANE_BIT(lane)) != 0 || p->room_spent == pos + 1)
		return false;
	now = (int64_t)shm_now_ns();
	if (w->spin_until == 0)
		w->spin_until = now + ROOM_SPIN_NS < w->deadline ?
		    now + ROOM_SPIN_NS : w->deadline;
	for (i = 1; now < w->spin_until; i++) {
		if (p->room_hook != NULL)
			p->room_hook(p->room_hook_arg);	/* tests */
		if ((int64_t)((cell_seq(l, pos, memory_order_acquire) &
		    ~SEQ_FLAGS) - pos) >= 0 || atomic_load_explicit(
		    &ctl->tail, memory_order_relaxed) != pos)
			return true;
		if (atomic_load_explicit(&ctl->queued,
		    memory_order_relaxed) != 0)
			return false;
		cpu_relax();
		if (i % ROOM_POLLS == 0)
			now = (int64_t)shm_now_ns();
	}
	return false;
}

/*
 * Sleep until the consumer frees cells, for at most timeout_ns (-1: no
 * limit) and at most one slice: the consumer wakes blocked senders only
 * once the lane is half empty (see wake_blocked), so a sender looks again
 * every SPACE_SLICE_NS in case a consumer took a few and then stopped.
 * The waiter count is raised before the last look at the cell and at head
 * (the effective capacity), and the consumer reads it after freeing cells
 * and publishing head (both seq_cst): no lost wake-up.
 */
static int
wait_space(struct shm_producer *p, struct shm_mbox_local *mb,
    struct shm_lane_local *l, uint64_t pos, int64_t timeout_ns)
{
	struct shm_mbox	*m = mb->m;
	uint64_t	 seq;
	uint32_t	 w, lim;

	if (timeout_ns < 0 || timeout_ns > SPACE_SLICE_NS)
		timeout_ns = SPACE_SLICE_NS;
	atomic_fetch_add(&m->space_waiters, 1);
	/* If we die asleep, shm_reap takes our count back (producer.c). */
	atomic_store(&p->slot->waiting, shm_mb_index(p->a, mb) + 1);
	w = atomic_load(&m->space_word);
	seq = cell_seq(l, pos, memory_order_seq_cst) & ~SEQ_FLAGS;
	lim = (uint32_t)shm_lane_limit(l);
	if (((int64_t)(seq - pos) < 0 || (lim < l->cap &&
	    over_limit(l, lim, pos))) &&
	    lane_tail(l->ctl, memory_order_seq_cst) == pos)
		shm_futex_wait(&m->space_word, w, timeout_ns);
	atomic_store(&p->slot->waiting, 0);
	atomic_fetch_sub(&m->space_waiters, 1);
	return 0;
}

/*
 * After the consumer freed cells of the main lane (head now h): once the
 * lane is at most half full, senders queued for their turn get a few
 * turns, oldest first, each a free cell (turns.c; a sender let in sends
 * on while there is room), and drop_oldest senders waiting for a head
 * cell look again.  Letting them in only at half empty gives each a
 * burst of room: let in for every freed cell, each would sleep and wake
 * (two system calls, ~10 us) per message while the lane stays full.
 * Cells freed above the mark are found by the front of the queue, which
 * looks every millisecond.  The fence orders the frees before the look
 * at the queue and the waiter count (a sender takes its ticket or raises
 * the count, then looks at the cells: Dekker, no lost wake-up).
 */
static void
wake_blocked(struct shm_mbox_local *mb, struct shm_lane_local *l, uint64_t h)
{
	uint64_t t;

	atomic_thread_fence(memory_order_seq_cst);
	if (!shm_turns_waiting(mb->m) &&
	    atomic_load(&mb->m->space_waiters) == 0)
		return;
	t = lane_tail(l->ctl, memory_order_seq_cst);
	if (t >= h && t - h > shm_lane_limit(l) / 2)
		return;
	if (shm_turns_waiting(mb->m))
		(void)shm_turns_grant(mb);
	if (atomic_load(&mb->m->space_waiters) > 0)
		shm_wake_space(mb->m);
}

/*
 * drain_take, after a cell is freed: queued senders get their turns and
 * drop_oldest senders waiting for a head cell look again (they race the
 * consumer for it, so every freed cell counts).
 */
static void
wake_after_take(struct shm_mbox_local *mb)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (shm_turns_waiting(mb->m))
		(void)shm_turns_grant(mb);
	if (atomic_load(&mb->m->space_waiters) > 0)
		shm_wake_space(mb->m);
}

/*
 * The large slot of pos may take a payload of len bytes: it fits in the
 * cell, or the slot is the cell's own (big_count == cap: the reply lane),
 * or the consumer has taken every message up to pos - big_count, the
 * last that may have used it (head only grows; a head beyond pos, which
 * only a scribbler makes, says free: the copy stays in the slot's bounds).
 */
static inline bool
big_free(struct shm_lane_local *l, uint64_t pos, uint32_t len)
{
	if (len <= l->inl || l->big_count >= l->cap)
		return true;
	return (int64_t)(pos - atomic_load(&l->ctl->head)) <
	    (int64_t)l->big_count;
}

/*
 * drop_oldest, before a large message's claim: the oldest messages are
 * dropped (dead letters "dropped oldest") until fewer than big_count are
 * queued, so that the claim finds its slot free and the newest goes in
 * however stopped the consumer is.  Done before the claim, because a
 * steal uses the claim record that the claim needs; senders racing in
 * between may still make the claim wait (big_room).
 */
static void
big_make_room(struct shm_producer *p, struct shm_mbox_local *mb,
    unsigned lane)
{
	struct shm_lane_local *l = &mb->lane[lane];
	uint64_t h, t;
	uint32_t i;

	if (lane != SHM_LANE_MAIN || l->big_count >= l->cap ||
	    atomic_load_explicit(&mb->actor->cfg_overflow,
	    memory_order_relaxed) != SHM_OVERFLOW_DROP_OLDEST)
		return;
	for (i = 0; i < l->cap; i++) {
		h = atomic_load(&l->ctl->head);
		t = lane_tail(l->ctl, memory_order_seq_cst);
		if (t < h || t - h < l->big_count)
			return;
		if (steal_head(p, mb, true) == STEAL_WAIT)
			return;
	}
}

/* When a send given timeout_ns gives up (CLOCK_MONOTONIC ns). */
static int64_t
send_deadline(struct shm_mbox_local *mb, int64_t timeout_ns)
{
	if (timeout_ns == SHM_TIMEOUT_OFFER)
		timeout_ns = 0;
	else if (timeout_ns == SHM_TIMEOUT_DEFAULT)
		timeout_ns = (int64_t)atomic_load_explicit(
		    &mb->actor->cfg_timeout_ms, memory_order_relaxed) * 1000000;
	return timeout_ns < 0 ? INT64_MAX : (int64_t)shm_now_ns() + timeout_ns;
}

/*
 * A large message claimed pos: its large slot may still hold the payload
 * of the message big_count positions before it.  Wait, holding the
 * claim, until the consumer has taken that one (big_free), for up to the
 * send's timeout under every policy: what holds it is not a full lane,
 * and the consumer, taking the messages before pos, always gets there.
 * Blocked senders' wait: a few yields, then slices on the space futex
 * (the consumer wakes it once the lane is half empty; else a slice ends).
 * Out of time, the claim is given up as shm_reap gives up a dead
 * sender's (the cell marked released: the consumer skips it), the
 * message is a dead letter "full" (not for shm_offer), and SHM_EFULL; under
 * drop_oldest, "dropped newest" and SHM_EDROPPED, as a drop_oldest sender
 * out of time.
 * Killed while it waits, its claim record makes shm_reap release the cell.
 */
static int
big_room(struct shm_producer *p, struct shm_mbox_local *mb, unsigned lane,
    uint64_t pos, const struct shm_msg *msg, const void *payload,
    int64_t timeout_ns)
{
	struct shm_lane_local *l = &mb->lane[lane];
	struct shm_mbox	*m = mb->m;
	uint32_t	 idx = shm_mb_index(p->a, mb), w;
	int64_t		 deadline, now;
	unsigned	 spins;

	if (big_free(l, pos, msg->len))
		return 0;
	deadline = send_deadline(mb, timeout_ns);
	for (spins = 0; ; spins++) {
		if (spins < BIG_SPINS && timeout_ns != 0 &&
		    timeout_ns != SHM_TIMEOUT_OFFER) {
			sched_yield();
		} else {
			if ((now = (int64_t)shm_now_ns()) >= deadline)
				break;
			atomic_fetch_add(&m->space_waiters, 1);
			atomic_store(&p->slot->waiting, idx + 1);
			w = atomic_load(&m->space_word);
			if (!big_free(l, pos, msg->len))
				shm_futex_wait(&m->space_word, w,
				    deadline - now < SPACE_SLICE_NS ?
				    deadline - now : SPACE_SLICE_NS);
			atomic_store(&p->slot->waiting, 0);
			atomic_fetch_sub(&m->space_waiters, 1);
		}
		if (big_free(l, pos, msg->len))
			return 0;
	}
	cell_seq_set(l, pos, (pos + 1) | SEQ_RELEASED, memory_order_release);
	atomic_store_explicit(&p->slot->rec_ring, 0, memory_order_release);
	wake_after_publish(p, mb->m, idx, lane);
	if (timeout_ns == SHM_TIMEOUT_OFFER)
		return SHM_EFULL;
	if (lane == SHM_LANE_MAIN && atomic_load_explicit(
	    &mb->actor->cfg_overflow, memory_order_relaxed) ==
	    SHM_OVERFLOW_DROP_OLDEST)
		return drop_newest(p->a, mb, lane, msg, payload);
	atomic_fetch_add(&m->full, 1);
	shm_dl_put(p->a, idx, lane, SHM_DL_FULL, msg, payload);
	return SHM_EFULL;
}

/* Free a cell marked TAKEN or RELEASED for position pos; a CAS, so idempotent. */
static int
free_flagged(const struct shm_lane_local *l, uint64_t pos, uint64_t seq,
    uint64_t next)
{
	return cell_seq_cas(l, pos, &seq, next);
}

/*
 * A drop_oldest cell at head position h, read as seq, that a consumer
 * took and died before handing over (marked CONSUMING): published again,
 * so it is delivered, never lost.  1 if it was such a cell.  The plain
 * comparison first: a CAS on every other cell would pull its line over.
 */
static int
republish(const struct shm_lane_local *l, uint64_t seq, uint64_t h)
{
	if (seq != ((h + 1) | SEQ_TAKEN | SEQ_CONSUMING))
		return 0;
	return free_flagged(l, h, seq, h + 1);
}

/* drop_oldest: take the head cell of the full main lane off the ring. */
static int
steal(struct shm_producer *p, struct shm_mbox_local *mb)
{
	return steal_head(p, mb, false);
}

/* The same, however full the lane (any), or only when full. */
static int
steal_head(struct shm_producer *p, struct shm_mbox_local *mb, bool any)
{
	struct shm_arena *a = p->a;
	struct shm_lane_local *l = &mb->lane[SHM_LANE_MAIN];
	struct shm_cell	*c;
	struct shm_msg	 m;
	unsigned char	 pfx[SHM_DL_PAYLOAD];
	uint64_t	 h, t, seq, expect, hh, held;
	size_t		 n;

	h = atomic_load(&l->ctl->head);
	t = lane_tail(l->ctl, memory_order_seq_cst);
	if (!any && t - h < shm_lane_limit(l))
		return STEAL_RETRY;	/* the consumer is freeing a cell */
	if (t <= h)
		return STEAL_WAIT;	/* empty (any): nothing to take */
	c = lane_cell(l, h);
	seq = cell_seq(l, h, memory_order_seq_cst);
	if ((seq & ~SEQ_FLAGS) == h + 1 && (seq & SEQ_HELD) != 0)
		return STEAL_WAIT;	/* being handed over or dead-lettered */
	if ((seq & ~SEQ_FLAGS) == h + 1 && (seq & SEQ_FLAGS) != 0) {
		/* Someone took it but has not moved head yet: help. */
		hh = h;
		atomic_compare_exchange_strong(&l->ctl->head, &hh, h + 1);
		free_flagged(l, h, seq, h + l->cap);
		return STEAL_RETRY;
	}
	if (seq != h + 1)
		return STEAL_WAIT;
	SHM_ONCE_COPY(m, c->msg);
	n = m.len < sizeof(pfx) ? m.len : sizeof(pfx);
	memcpy(pfx, cell_data(l, h, m.len), n);
	atomic_store_explicit(&p->slot->rec_pos, h, memory_order_release);
	atomic_store_explicit(&p->slot->rec_ring, l->ring_id << 2 | REC_STEAL,
	    memory_order_release);
	/*
	 * Marked STEALING, the cell is ours alone until its dead letter is
	 * written: killed before that, we leave it marked with our STEAL
	 * record, and shm_reap writes the dead letter (producer.c); after
	 * it, the record says STOLE and shm_reap only frees the cell.  (Killed
	 * between the dead letter and the STOLE store, one instruction, it
	 * would be written twice: never lost.)
	 */
	expect = h + 1;
	held = (h + 1) | SEQ_TAKEN | SEQ_STEALING;
	if (!cell_seq_cas(l, h, &expect, held)) {
		atomic_store_explicit(&p->slot->rec_ring, 0,
		    memory_order_release);
		return STEAL_RETRY;
	}
	if (p->steal_hook != NULL)
		p->steal_hook(p->steal_hook_arg);	/* tests: die here */
	atomic_fetch_add(&mb->m->dropped, 1);
	if (m.len > sizeof(pfx))
		m.len = (uint32_t)n;
	shm_dl_put(a, shm_mb_index(a, mb), SHM_LANE_MAIN,
	    SHM_DL_DROPPED_OLDEST, &m, pfx);
	atomic_store_explicit(&p->slot->rec_ring, l->ring_id << 2 | REC_STOLE,
	    memory_order_release);
	hh = h;
	atomic_compare_exchange_strong(&l->ctl->head, &hh, h + 1);
	free_flagged(l, h, held, h + l->cap);
	atomic_store_explicit(&p->slot->rec_ring, 0, memory_order_release);
	return STEAL_OK;
}

/* --- receiving ---------------------------------------------------------- */

/*
 * Nothing claimed on the system lane: its tail, on the page of the
 * control block, says so without a look at its cells, another page that
 * a consumer woken cold would otherwise walk to on every message for the
 * rare Stop or Terminated.  Claimed is not yet published: then the cell
 * says, as for any lane.  In the sleep protocol (wait.c) the tail is as
 * good as the cell: a producer claims before it publishes, so a consumer
 * that finds the claim not visible after its barrier finds no publish
 * either, and the producer then sees "sleeping".
 */
static inline bool
sys_idle(const struct shm_lane_local *l, unsigned k, uint64_t h)
{
	return k == SHM_LANE_SYSTEM &&
	    lane_tail(l->ctl, memory_order_seq_cst) == h;
}

/*
 * Nothing ever claimed on a lane (head still 0, and tail too): its first
 * cell is a hole of the arena's memfd, and reading a hole allocates a
 * page, one for every idle actor's first look (shm_take_one, then
 * shm_pending before it sleeps: tests/check_attach_cost.c,
 * idle_actor_allocates_no_cells).  Its tail says so instead, by
 * sys_idle's argument.  Only at head 0: a consumer at work never reads
 * the producers' line here.
 */
static inline bool
never_claimed(const struct shm_lane_local *l, uint64_t h)
{
	return h == 0 && lane_tail(l->ctl, memory_order_seq_cst) == 0;
}

bool
shm_pending(struct shm_arena *a, uint32_t idx, unsigned lanes)
{
	struct shm_lane_local *l;
	uint64_t h, seq;
	unsigned k;

	if (idx >= a->n)
		return false;
	for (k = 0; k < SHM_NLANES; k++) {
		if ((lanes & SHM_LANE_BIT(k)) == 0)
			continue;
		l = &shm_mb(a, idx)->lane[k];
		h = atomic_load(&l->ctl->head);
		if (sys_idle(l, k, h) || never_claimed(l, h))
			continue;
		seq = cell_seq(l, h, memory_order_seq_cst);
		if (seq == h)
			continue;
		/* Last lap's cell, taken and not yet freed: nothing yet. */
		if ((seq & SEQ_FLAGS) != 0 && (seq & ~SEQ_FLAGS) + l->cap ==
		    h + 1)
			continue;
		prefetch_cell(l, h);
		return true;
	}
	return false;
}

void
shm_prefetch_own(const struct shm_arena *a, const void *p)
{
	if (a->prefetchw)
		prefetch_own(p);
}

int
shm_head_msg(struct shm_arena *a, uint32_t idx, enum shm_lane lane,
    struct shm_msg *msg)
{
	struct shm_lane_local *l;
	struct shm_cell	*c;
	uint64_t h;

	if (idx >= a->n || (unsigned)lane >= SHM_NLANES)
		return SHM_EBADINDEX;
	l = &shm_mb(a, idx)->lane[lane];
	h = atomic_load(&l->ctl->head);
	c = lane_cell(l, h);
	if (cell_seq(l, h, memory_order_acquire) != h + 1)
		return 0;
	SHM_ONCE_COPY(*msg, c->msg);
	return cell_seq(l, h, memory_order_seq_cst) == h + 1 ? 1 : 0;
}

/*
 * Scan the messages published in one lane and not taken, head first;
 * stop at the first whose header match() accepts.  The consumer may take
 * cells meanwhile: a message it took is no longer in the lane, and a
 * cell is read only while it stays published for its position.
 */
int
shm_lane_holds(struct shm_arena *a, uint32_t idx, enum shm_lane lane,
    bool (*match)(void *, const struct shm_msg *), void *arg)
{
	struct shm_lane_local *l;
	struct shm_msg	 m;
	uint64_t	 h, t, pos;

	if (idx >= a->n || (unsigned)lane >= SHM_NLANES || match == NULL)
		return SHM_EINVAL;
	l = &shm_mb(a, idx)->lane[lane];
	h = atomic_load(&l->ctl->head);
	t = lane_tail(l->ctl, memory_order_seq_cst);
	if (t < h || t - h > l->cap)
		t = h + l->cap;		/* scribbled on: look at one lap */
	for (pos = h; pos < t; pos++) {
		if (cell_seq(l, pos, memory_order_acquire) != pos + 1)
			continue;	/* being written, or taken */
		SHM_ONCE_COPY(m, lane_cell(l, pos)->msg);
		if (cell_seq(l, pos, memory_order_seq_cst) == pos + 1 &&
		    match(arg, &m))
			return 1;
	}
	return 0;
}

int
shm_drain(struct shm_arena *a, uint32_t idx, unsigned lanes, unsigned max,
    shm_handler fn, void *arg)
{
	unsigned i, k, left, total = 0;
	int	 n, stop = 0;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	if (fn == NULL)
		return SHM_EINVAL;
	for (i = 0; i < SHM_NLANES && !stop; i++) {
		k = lane_order(i);
		if ((lanes & SHM_LANE_BIT(k)) == 0)
			continue;
		left = max == 0 ? shm_mb(a, idx)->lane[k].cap : max - total;
		if (left == 0)
			break;
		if (uses_take(shm_mb(a, idx), k))
			n = drain_take(a, idx, k, left, fn, arg, &stop);
		else
			n = drain_inplace(a, idx, k, left, fn, arg, &stop);
		total += (unsigned)n;
		if (max != 0 && total >= max)
			break;
	}
	return (int)total;
}

static void
count_wait(struct shm_mbox *m, uint64_t now, uint64_t enq)
{
	uint64_t d = now > enq ? now - enq : 0;
	unsigned b = d == 0 ? 0 : 63 - (unsigned)__builtin_clzll(d);

	if (b >= SHM_HIST_BUCKETS)
		b = SHM_HIST_BUCKETS - 1;
	/* Only the consumer writes: a relaxed load and store suffice. */
	atomic_store_explicit(&m->hist[b], atomic_load_explicit(&m->hist[b],
	    memory_order_relaxed) + 1, memory_order_relaxed);
}

/*
 * Whether the message at h of lane is in the wait histogram's sample:
 * every SHM_STAMP_EVERY-th position of a main or system lane, whose send
 * timed it (shm.h, SHM_ENQ_UNTIMED).  Answers on the reply lane are not
 * timed.
 */
static inline bool
sampled(unsigned lane, uint64_t h)
{
	return lane != SHM_LANE_REPLY && (h & (SHM_STAMP_EVERY - 1)) == 0;
}

/*
 * The clock for the wait histogram, as drain_inplace explains: read before
 * the copy of a sampled cell after an idle spell (its latency then
 * overlaps the wait for the cell's lines), and again for a message newer
 * than the reading.
 */
static inline void
clock_before_copy(struct shm_arena *a, struct shm_lane_local *l,
    unsigned lane, uint64_t h)
{
	if (sampled(lane, h) && l->clock_left == 0) {
		l->now = shm_clock(a);
		l->clock_left = CLOCK_EVERY;
	}
}

/*
 * A pure sleeper (fence_mode) asleep (its sleeping word s, with the lane's
 * bit: the caller looks) in a futex, not a doorbell, on another CPU than
 * this producer's.  One that sleeps on this CPU gains
 * nothing from an early wake-up: it can only run when the producer stops
 * (or preempts it, finds nothing and sleeps again: two context switches
 * more on every message, measured on an ask across nodes, whose gateway
 * and asker share a CPU).  sleep_cpu is a hint: a wrong one costs at most
 * the overlap, never a wake-up (the look after the publish is made).
 */
static inline bool
sleeps_on_futex(const struct shm_arena *a, struct shm_mbox *m, uint32_t s)
{
	return !(s & SLEEP_DOORBELL) &&
	    atomic_load_explicit(&m->fence_mode, memory_order_relaxed) &&
	    atomic_load_explicit(&m->sleep_cpu, memory_order_relaxed) !=
	    (uint32_t)(shm_cpu(a) + 1);
}

/*
 * A published cell's payload line, asked for as soon as the cell is seen:
 * after a sleep the caches are cold, and the header and the payload then
 * arrive together instead of one after the other.  Only a published cell:
 * asking for a line its producer is about to write would take it away.
 */
static inline void
prefetch_cell(struct shm_lane_local *l, uint64_t h)
{
	__builtin_prefetch((const char *)lane_cell(l, h) + SHM_CL, 0);
}

/*
 * After publishing pos: the lines of the cell two ahead, owned, for the
 * claim that will write it.  The consumer freed that cell a lap ago, so
 * its lines sit in the consumer's cache: a claim storing into them then
 * waits for each to come over, and the next claim's locked CAS waits for
 * those stores, so a stream of sends paid a transfer per message; asked
 * for here, it overlaps the next send.  Two ahead, not one: a consumer
 * that keeps up polls the next cell, and taking that line from it would
 * cost both sides a transfer more.  After the publish, not before the
 * copy: in a round trip the request would otherwise be held up behind it
 * (rtt p50 1.24x -> 1.36x the bare ring's; a stream of 64-byte tells on
 * this host: 2.5 -> 5 M msg/s).  Tells only: an ask's or an answer's
 * receiver is waiting for it, and the transfer asked for here then
 * competes with the one it waits for (rtt p50 about 1.2x of without).
 */
static inline void
prefetch_ahead(struct shm_lane_local *l, uint64_t pos)
{
	prefetch_own(lane_cell(l, pos + 2));
	prefetch_own((char *)lane_cell(l, pos + 2) + SHM_CL);
}

/*
 * An ask's answer goes to the asker's mailbox, and its sender looks there
 * at the asker's wake-up line (and claims it if the asker sleeps).  Ask
 * for that line now, while the ask is copied and handled, not after.
 */
static inline void
prefetch_answer(struct shm_arena *a, const struct shm_msg *m)
{
	if ((m->flags & SHM_MSG_ASK) && m->sender.index < a->n)
		__builtin_prefetch(&shm_mb(a, m->sender.index)->m->sleeping, 1);
}

/*
 * The batch drain, at h, a published cell, before it copies it:
 * cell_fence (shm_impl.h) unless the cell FENCE_LOOK ahead is published
 * too, and then that cell's payload line asked for instead.  The fence
 * keeps a consumer close behind its producer from reading lines still
 * being written; one that has fallen behind reads lines written long
 * ago, and there the fence only kept the loads of one cell from
 * overlapping those of the next: a cache miss after another (perf: two
 * thirds of the drain's time on the load of each cell's number; a stream
 * 500 messages behind taken at 90 ns a message, the bare ring's consumer
 * 10 to 20 times faster: tools/bench/bench_ring.c, batch in its regime
 * column).  The look ahead is itself the first line's prefetch.  Close
 * behind, it loads a line this consumer freed a lap ago, still in its own
 * cache (the producer asks only for the lines two cells ahead of its
 * own: prefetch_ahead), and fences.  A cell in between still being
 * written (several producers) is found so by its own number, as ever:
 * only the fence is skipped, never a check.
 */
/* A cell's address from a lane's geometry held in locals. */
static inline struct shm_cell *
cell_at(unsigned char *cells, uint64_t mask, uint32_t cell, uint64_t pos)
{
	return (struct shm_cell *)(void *)(cells + (pos & mask) * cell);
}

static inline void
fence_unless_behind(unsigned char *cells, uint64_t mask, uint32_t cell,
    uint64_t h)
{
	struct shm_cell *ahead = cell_at(cells, mask, cell, h + FENCE_LOOK);

	if ((atomic_load_explicit(&ahead->seq, memory_order_relaxed) ^
	    ((h + FENCE_LOOK) & mask)) == h + FENCE_LOOK + 1) {
		__builtin_prefetch((const char *)ahead + SHM_CL, 0);
		return;
	}
	cell_fence();
}

/*
 * The first message taken after a nap in fence_mode (wait.c): enqueued
 * within the spin the nap skipped, so spinning would have caught it
 * however long the wake-up took: the consumer spins again at its next
 * wait, and producers stop fencing then.  (Judged by the wake-up alone, a
 * saturated consumer whose wake-ups are slower than its spin napped, in
 * fence_mode, for ever.)  enq_ns is the sender's word: a wrong one only
 * changes when the consumer spins.
 */
static inline void
nap_judged(struct shm_mbox_local *mb, uint64_t enq_ns)
{
	if (__builtin_expect(mb->nap_from == 0, 1))
		return;
	if (!shm_enq_timed(enq_ns))
		return;		/* not a time: the next timed one judges */
	if ((int64_t)(enq_ns - mb->nap_from) <= mb->nap_spin)
		mb->naps = 0;
	mb->nap_from = 0;
}

/*
 * Busy again after naps (n more messages taken): producers need not
 * fence any more.  The batch drain counts its messages once a batch.
 */
static inline void
busy(struct shm_mbox_local *mb, uint32_t n)
{
	uint32_t w = mb->awake;

	mb->awake = w + n;
	if (__builtin_expect(w < SHM_AWAKE_UNFENCE && w + n >=
	    SHM_AWAKE_UNFENCE, 0) && mb->nap_fenced) {
		mb->nap_fenced = false;
		mb->naps = 0;
		atomic_store_explicit(&mb->m->fence_mode, 0,
		    memory_order_relaxed);
	}
}

static inline void
time_taken(struct shm_arena *a, struct shm_mbox_local *mb,
    struct shm_lane_local *l, unsigned lane, const struct shm_msg *m,
    uint64_t h)
{
	nap_judged(mb, m->enq_ns);
	if (lane == SHM_LANE_REPLY)
		return;
	busy(mb, 1);
	time_sampled(a, mb, l, lane, m, h);
}

/* time_taken's histogram part, alone for the batch drain. */
static inline void
time_sampled(struct shm_arena *a, struct shm_mbox_local *mb,
    struct shm_lane_local *l, unsigned lane, const struct shm_msg *m,
    uint64_t h)
{
	if (!sampled(lane, h) || !shm_enq_timed(m->enq_ns))
		return;
	if (m->enq_ns > l->now) {
		l->now = shm_clock(a);
		l->clock_left = CLOCK_EVERY;
	}
	l->clock_left--;
	count_wait(mb->m, l->now, m->enq_ns);
}

static void
garbled(struct shm_arena *a, uint32_t idx, unsigned lane,
    const struct shm_msg *m)
{
	struct shm_msg c = *m;

	atomic_fetch_add(&shm_mb(a, idx)->m->garbled, 1);
	c.len = 0;			/* never trust it for a copy */
	shm_dl_put(a, idx, lane, SHM_DL_GARBLED, &c, NULL);
}

/*
 * The ordinary consumer: cells published for this position are its own
 * until it frees them, so it hands them over in place and publishes head
 * once for the batch.
 *
 * Two costs that a batch pays once are paid once per several messages
 * even when the caller takes one message per call (libactor's receive):
 *
 * - the clock read for the wait histogram, which times only its sample
 *   (every SHM_STAMP_EVERY-th position, sampled): the reading is kept in
 *   the lane's process-local view and reused for up to CLOCK_EVERY
 *   sampled messages taken back to back, as within one batch (the other
 *   messages read no clock at all); it is read again when the
 *   lane was found empty since (an idle spell), or for a message enqueued
 *   after the reading (so a message that came while the consumer was busy
 *   elsewhere is never timed against an older reading).  The accuracy is
 *   a batch's: a queued message's wait may be short by the time the
 *   consumer spent on the messages taken since the reading.  Answers on
 *   the reply lane are not timed at all: the histogram is the wait of
 *   what the mailbox's owner handles (main and system lanes); how long an
 *   answer sat is the asker's own doing, and timing it would put a clock
 *   read on every ask's return path.
 * - the look for blocked senders (a full fence): made when the lane is
 *   found empty, every WAKE_EVERY freed cells, or by shm_wait before it
 *   sleeps (shm_settle), not per call.  A sender is woken at most
 *   WAKE_EVERY cells late (it is woken only once the lane is half empty
 *   anyway), and a blocked sender looks again every SPACE_SLICE_NS
 *   whatever happens (wait_space).
 *
 * The count of messages taken since the last sleep (busy) is kept once a
 * batch, not per message.
 */
static int
drain_inplace(struct shm_arena *a, uint32_t idx, unsigned lane, unsigned max,
    shm_handler fn, void *arg, int *stop)
{
	struct shm_mbox_local *mb = shm_mb(a, idx);
	struct shm_lane_local *l = &mb->lane[lane];
	struct shm_lane_ctl *ctl = l->ctl;
	struct shm_cell	*c;
	struct shm_msg	 m;
	/*
	 * The lane's geometry in locals: through l, every atomic access
	 * made the compiler load it again for each cell's address (some 30
	 * instructions a message, callgrind).
	 */
	unsigned char	*cells = l->cells;
	uint64_t	 mask = l->mask, cap = l->cap;
	uint64_t	 h, h0, seq, t, d, k;
	uint32_t	 inl = l->inl, lmax = l->max, csz = l->cell;
	unsigned	 n = 0;
	int		 empty = 0, halt = 0;

	h0 = h = atomic_load_explicit(&ctl->head, memory_order_relaxed);
	while (n < max && !halt) {
		c = cell_at(cells, mask, csz, h);
		k = h & mask;
		seq = atomic_load_explicit(&c->seq, memory_order_acquire) ^ k;
		if (seq == h + 1) {
			/*
			 * After an idle spell, read the clock before the
			 * copy: the read then overlaps the wait for the
			 * cell's lines instead of following it.
			 */
			clock_before_copy(a, l, lane, h);
			fence_unless_behind(cells, mask, csz, h);
			SHM_ONCE_COPY(m, c->msg);	/* checked, used */
			if (!msg_sane(&m, lmax)) {
				garbled(a, idx, lane, &m);
			} else {
				prefetch_answer(a, &m);
				nap_judged(mb, m.enq_ns);
				time_sampled(a, mb, l, lane, &m, h);
				halt = fn(arg, (enum shm_lane)lane, &m,
				    cell_data_at(l, c, h, m.len, inl)) != 0;
				n++;
			}
			atomic_store_explicit(&c->seq, (h + cap) ^ k,
			    memory_order_release);
			h++;
			continue;
		}
		if (republish(l, seq, h))
			continue;	/* a dead consumer's, not recovered */
		if ((seq & SEQ_STEALING) != 0 && (seq & ~SEQ_FLAGS) == h + 1)
			break;	/* a drop_oldest sender is dead-lettering it */
		if ((seq & SEQ_FLAGS) != 0 && (seq & ~SEQ_FLAGS) == h + 1) {
			free_flagged(l, h, seq, h + l->cap);
			h++;
			continue;
		}
		if (seq == h + l->cap) {
			/* Freed by a consumer that died before moving head. */
			h++;
			continue;
		}
		empty = 1;
		if (seq == h)
			break;		/* empty, or being written */
		t = lane_tail(ctl, memory_order_seq_cst);
		if (t <= h) {
			/* A free cell with a wild number: repair it. */
			if (cell_seq_cas(l, h, &seq, h))
				atomic_fetch_add(&mb->m->garbled, 1);
			break;
		}
		empty = 0;
		SHM_ONCE_COPY(m, c->msg);
		garbled(a, idx, lane, &m);
		cell_seq_set(l, h, h + l->cap, memory_order_release);
		h++;
	}
	if (halt)
		*stop = 1;
	if (n > 0 && lane != SHM_LANE_REPLY)
		busy(mb, n);
	if (empty)
		l->clock_left = 0;	/* idle: the next message reads it */
	if (h != h0) {
		atomic_store_explicit(&ctl->head, h, memory_order_release);
		atomic_store_explicit(&ctl->dequeued, atomic_load_explicit(
		    &ctl->dequeued, memory_order_relaxed) + n,
		    memory_order_relaxed);
		/*
		 * The depth seen by the consumer: what it found published
		 * in one batch.  Not tail - head: reading tail would pull
		 * the producers' line over on every batch.
		 */
		d = h - h0;
		if (d > atomic_load_explicit(&ctl->depth_hwm,
		    memory_order_relaxed))
			atomic_store_explicit(&ctl->depth_hwm, d,
			    memory_order_relaxed);
		if (lane == SHM_LANE_MAIN)
			l->unchecked += (uint32_t)d;
	}
	if (l->unchecked > 0 && (empty || l->unchecked >= WAKE_EVERY)) {
		l->unchecked = 0;
		wake_blocked(mb, l, h);
	}
	return (int)n;
}

void
shm_consumer_set_hook(struct shm_arena *a, void (*hook)(void *, int),
    void *arg)
{
	a->take_hook = hook;
	a->take_hook_arg = arg;
}

/*
 * Before the consumer sleeps or stops taking: look for blocked senders it
 * has not looked for since it last freed cells (see drain_inplace).
 */
void
shm_settle(struct shm_arena *a, uint32_t idx)
{
	struct shm_lane_local *l;

	if (idx >= a->n)
		return;
	l = &shm_mb(a, idx)->lane[SHM_LANE_MAIN];
	l->clock_left = 0;
	if (l->unchecked > 0) {
		l->unchecked = 0;
		wake_blocked(shm_mb(a, idx), l, atomic_load_explicit(
		    &l->ctl->head, memory_order_relaxed));
	}
}

/*
 * drain_take's copy of a payload too large for its stack: one buffer per
 * process, grown to the largest taken so far, freed at shm_detach.
 */
static unsigned char *
take_buf(struct shm_arena *a, size_t len)
{
	unsigned char *b;

	if (len <= a->takebuf_len)
		return a->takebuf;
	if ((b = realloc(a->takebuf, len)) == NULL)
		return NULL;
	a->takebuf = b;
	a->takebuf_len = len;
	return b;
}

/*
 * The consumer of a drop_oldest or coalesce lane: senders may take the
 * head cell too (or rewrite it), so each cell is marked TAKEN | CONSUMING
 * by CAS (which fails if a sender took it first) and then copied.  The
 * handler gets the copy while the cell still holds the message and no sender may free it (libactor marks
 * it in hand there); only then is head advanced and the cell freed.  A
 * consumer killed between its CAS and the free leaves the cell marked at
 * the head: shm_consumer_recover publishes it again, and libactor's reaper
 * finds it still queued if it was marked in hand, so it is delivered once
 * more and never lost.
 */
static int
drain_take(struct shm_arena *a, uint32_t idx, unsigned lane, unsigned max,
    shm_handler fn, void *arg, int *stop)
{
	struct shm_mbox_local *mb = shm_mb(a, idx);
	struct shm_lane_local *l = &mb->lane[lane];
	struct shm_lane_ctl *ctl = l->ctl;
	struct shm_cell	*c;
	struct shm_msg	 m;
	unsigned char	 stackbuf[COPYBUF_STACK], *buf;
	uint64_t	 h, seq, expect, hh, t, now, taking;
	unsigned	 n = 0, moved = 0;
	int		 sane;

	while (n < max && !*stop) {
		h = atomic_load(&ctl->head);
		c = lane_cell(l, h);
		seq = cell_seq(l, h, memory_order_seq_cst);
		if (atomic_load(&ctl->head) != h)
			continue;	/* a sender took it meanwhile */
		if (republish(l, seq, h))
			continue;	/* a dead consumer's, not recovered */
		if ((seq & SEQ_STEALING) != 0 && (seq & ~SEQ_FLAGS) == h + 1)
			break;	/* a sender is dead-lettering it */
		if ((seq & SEQ_FLAGS) != 0 && (seq & ~SEQ_FLAGS) == h + 1) {
			hh = h;
			atomic_compare_exchange_strong(&ctl->head, &hh, h + 1);
			free_flagged(l, h, seq, h + l->cap);
			moved++;
			continue;
		}
		if (seq == h + l->cap) {
			hh = h;
			atomic_compare_exchange_strong(&ctl->head, &hh, h + 1);
			continue;
		}
		if (seq == h)
			break;
		if ((seq & SEQ_FLAGS) != 0 && (seq & ~SEQ_FLAGS) + l->cap ==
		    h + 1)
			break;		/* last lap's taker has yet to free it */
		if (seq != h + 1) {
			t = lane_tail(ctl, memory_order_seq_cst);
			if (t <= h) {
				if (cell_seq_cas(l, h,
				    &seq, h))
					atomic_fetch_add(&mb->m->garbled, 1);
				break;
			}
			SHM_ONCE_COPY(m, c->msg);
			expect = seq;
			if (cell_seq_cas(l, h, &expect,
			    (h + 1) | SEQ_TAKEN))
				garbled(a, idx, lane, &m);
			continue;	/* the flagged path frees it */
		}
		expect = h + 1;
		taking = (h + 1) | SEQ_TAKEN | SEQ_CONSUMING;
		if (!cell_seq_cas(l, h, &expect, taking))
			continue;	/* a sender took it first */
		/*
		 * Copied once marked ours: no sender changes it now (a
		 * coalesce sender rewrites only a cell published for its
		 * position, and would otherwise leave the same number).
		 */
		SHM_ONCE_COPY(m, c->msg);
		sane = msg_sane(&m, l->max);
		buf = !sane || m.len <= sizeof(stackbuf) ? stackbuf :
		    take_buf(a, m.len);
		if (sane && buf == NULL) {
			/* No memory for it now: published again, as it was. */
			free_flagged(l, h, taking, h + 1);
			break;
		}
		if (sane)
			memcpy(buf, cell_data(l, h, m.len), m.len);
		if (a->take_hook != NULL)
			a->take_hook(a->take_hook_arg, SHM_HOOK_TAKEN);
		if (sane) {
			nap_judged(mb, m.enq_ns);
			busy(mb, 1);
			if (sampled(lane, h) && shm_enq_timed(m.enq_ns)) {
				now = shm_clock(a);
				count_wait(mb->m, now, m.enq_ns);
			}
			n++;
			atomic_store_explicit(&ctl->dequeued,
			    atomic_load_explicit(&ctl->dequeued,
			    memory_order_relaxed) + 1, memory_order_relaxed);
			if (fn(arg, (enum shm_lane)lane, &m, buf) != 0)
				*stop = 1;
		}
		if (a->take_hook != NULL)
			a->take_hook(a->take_hook_arg, SHM_HOOK_HANDED);
		hh = h;
		atomic_compare_exchange_strong(&ctl->head, &hh, h + 1);
		free_flagged(l, h, taking, h + l->cap);
		moved++;
		wake_after_take(mb);
		if (!sane)
			garbled(a, idx, lane, &m);
	}
	if (moved > 0)
		wake_after_take(mb);
	return (int)n;
}

/*
 * One message, system lane first, for a consumer that takes one per call
 * (libactor's receive keeps exactly one in hand).  The common case, a
 * published and sane cell at the head of an in-place lane, is taken here
 * with exactly drain_inplace's effects but without its batch bookkeeping
 * (about half of a one-message shm_drain); anything else (a flagged or
 * garbled cell, a drop_oldest lane) goes to shm_drain.
 */
int
shm_take_one(struct shm_arena *a, uint32_t idx, unsigned lanes,
    shm_handler fn, void *arg)
{
	struct shm_mbox_local *mb;
	struct shm_lane_local *l;
	struct shm_cell	*c;
	struct shm_msg	 m;
	uint64_t	 h, seq;
	uint32_t	 inl;
	unsigned	 i, k;

	if (idx >= a->n || fn == NULL)
		return shm_drain(a, idx, lanes, 1, fn, arg);
	mb = shm_mb(a, idx);
	for (i = 0; i < SHM_NLANES; i++) {
		k = lane_order(i);
		if ((lanes & SHM_LANE_BIT(k)) == 0)
			continue;
		l = &mb->lane[k];
		h = atomic_load_explicit(&l->ctl->head, memory_order_relaxed);
		if (sys_idle(l, k, h) || never_claimed(l, h))
			continue;
		c = lane_cell(l, h);
		inl = l->inl;
		seq = cell_seq(l, h, memory_order_acquire);
		if (seq == h) {
			/* Empty: what drain_inplace does on finding it so. */
			l->clock_left = 0;
			if (l->unchecked > 0) {
				l->unchecked = 0;
				wake_blocked(mb, l, h);
			}
			continue;
		}
		if (seq != h + 1 || uses_take(mb, k))
			break;
		prefetch_cell(l, h);
		clock_before_copy(a, l, k, h);
		SHM_ONCE_COPY(m, c->msg);
		if (!msg_sane(&m, l->max))
			break;
		prefetch_answer(a, &m);
		time_taken(a, mb, l, k, &m, h);
		(void)fn(arg, (enum shm_lane)k, &m, cell_data_at(l, c, h, m.len,
		    inl));
		cell_seq_set(l, h, h + l->cap, memory_order_release);
		atomic_store_explicit(&l->ctl->head, h + 1, memory_order_release);
		atomic_store_explicit(&l->ctl->dequeued, atomic_load_explicit(
		    &l->ctl->dequeued, memory_order_relaxed) + 1,
		    memory_order_relaxed);
		if (atomic_load_explicit(&l->ctl->depth_hwm,
		    memory_order_relaxed) == 0)
			atomic_store_explicit(&l->ctl->depth_hwm, 1,
			    memory_order_relaxed);
		if (k == SHM_LANE_MAIN && ++l->unchecked >= WAKE_EVERY) {
			l->unchecked = 0;
			wake_blocked(mb, l, h + 1);
		}
		return 1;
	}
	if (i == SHM_NLANES)
		return 0;
	return shm_drain(a, idx, lanes, 1, fn, arg);
}

static int
copy_handler(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	struct copy_arg *ca = arg;
	size_t	 n = m->len < ca->buflen ? m->len : ca->buflen;

	*ca->msg = *m;
	if (n > 0)
		memcpy(ca->buf, payload, n);
	if (ca->lane != NULL)
		*ca->lane = lane;
	return 1;
}

int
shm_recv(struct shm_arena *a, uint32_t idx, unsigned lanes,
    struct shm_msg *msg, void *buf, size_t buflen, enum shm_lane *lane)
{
	struct copy_arg ca = { msg, buf, buflen, lane };
	int	 n;

	if (buf == NULL && buflen > 0)
		return SHM_EINVAL;
	n = shm_take_one(a, idx, lanes, copy_handler, &ca);
	if (n < 0)
		return n;
	return n == 0 ? SHM_EEMPTY : 0;
}

/*
 * Head moved past the positions below tail whose cells already belong to
 * the next lap (freed for it, claimed or published in it): each was
 * taken.  By CAS from the value checked, at most a lap; a drop_oldest
 * sender moving head meanwhile ends it.
 */
static void
catch_up_head(struct shm_lane_local *l)
{
	uint64_t h, seq, n;

	h = atomic_load(&l->ctl->head);
	for (n = 0; n < l->cap &&
	    h < lane_tail(l->ctl, memory_order_seq_cst); n++) {
		seq = cell_seq(l, h, memory_order_seq_cst);
		if (seq != h + l->cap && (seq & ~SEQ_FLAGS) != h + l->cap + 1)
			break;
		if (!atomic_compare_exchange_strong(&l->ctl->head, &h, h + 1))
			break;
		h++;
	}
}

/*
 * Free what a dead consumer took and did not free: cells below head still
 * holding the number of their own lap.  And move head past what it took
 * and freed: a consumer frees a batch's cells before it stores head
 * (drain_inplace), so one that died in between left head behind them,
 * and producers may have refilled them for the next lap since.  Its next
 * incarnation would take such a cell for garbage and lose the message
 * in it.  Only while no consumer runs.
 */
int
shm_consumer_recover(struct shm_arena *a, uint32_t idx)
{
	struct shm_lane_local *l;
	uint64_t	 h, p, seq;
	unsigned	 k;
	int		 fixed = 0;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	for (k = 0; k < SHM_NLANES; k++) {
		l = &shm_mb(a, idx)->lane[k];
		catch_up_head(l);
		h = atomic_load(&l->ctl->head);
		if (republish(l, cell_seq(l, h, memory_order_seq_cst), h))
			fixed++;
		for (p = h > l->cap ? h - l->cap : 0; p < h; p++) {
			seq = cell_seq(l, p, memory_order_seq_cst);
			if ((seq & ~SEQ_FLAGS) == p + 1 &&
			    free_flagged(l, p, seq, p + l->cap))
				fixed++;
		}
	}
	if (fixed > 0)
		shm_wake_senders_force(shm_mb(a, idx)->m);
	return fixed;
}
