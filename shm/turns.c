/*
 * turns.c: senders blocked on a full main lane (policies block and
 * coalesce) queue for their turn, and are let in in the order they
 * blocked, at most one per free cell; a sender let in then sends on while
 * there is room, so that a line costs a sleep and a wake-up per burst,
 * not per message.
 *
 * Owns: a mailbox's queue (turn_next, turn_grant, turn_out and the futex
 * cells of struct shm_mbox), the "queued" hint on the main lane's
 * producers' line, the turn noted in a producer slot, and a producer's
 * pass (struct shm_producer).  Must never make a system call for a send
 * that does not block, never wake more senders than there are free cells
 * (but one: the next in line, told it is next), never let a sender sleep
 * past its deadline, and never let a dead or lying party wedge the queue.
 *
 * The protocol (tickets are 32-bit, compared by signed difference):
 *
 *   sender, on a full lane (or "queued" set and it may not pass, below):
 *   t := fetch_add(turn_next, 1); note (mailbox, t) in its slot;
 *   queued := 1; grant().  Then sleep on turn_cell[t % C] with bit
 *   (t / C) % 32 until turn_grant > t; the front of the queue (t ==
 *   turn_grant) sleeps 1 ms at a time and grants when it wakes.  Its
 *   turn come, it claims a cell as any sender; done, turn_out -= 1, the
 *   note is cleared, and it holds a pass for its next lim/2 sends.
 *
 *   grant() (the consumer once the lane is half empty, a sender after it
 *   took its ticket, the front's poll, a sender that leaves, a reaper):
 *       k := min(free cells - turn_out, TURN_BATCH - turn_out,
 *                turn_next - turn_grant)
 *       CAS turn_grant g -> g + k; turn_out += k
 *       wake tickets g .. g + k - 1, and g + k (the new front) if any
 *       and the free cells bounded k, or the lane is over half full
 *       (not if TURN_BATCH bounded k below the mark, where the consumer
 *       grants the next): one FUTEX_WAKE_BITSET per cell, each waking
 *       only its bits and asking for as many sleepers (a line of up to
 *       SHM_TURN_WAITERS has a cell and bit per ticket).
 *
 *   passing (shm_turns_may_pass, while "queued" is set): a sender with a
 *   pass claims while more cells are free than turns are owed (the cell
 *   that many past tail is free); any other only while the lane is less
 *   than half full (turns owed besides).
 *
 * Why passes: with more senders in line than free cells, a sender let in
 * for one message used to queue again behind the whole line for the
 * next, one sleep and one wake-up per message (a lock convoy: 66,000
 * messages/s from 1,000 senders into one mailbox).  Now the few let in
 * (TURN_BATCH at a time) fill the lane in a burst, and sleep once it is
 * full; the consumer lets in the next few when it is half empty.  The
 * wake-ups stay in ticket order, at most one per free cell, and nobody
 * starves: a sender without a pass cannot take the upper half of the
 * lane, so the consumer always gets to half empty and lets the line in.
 *
 * No sender is left asleep by a consumer: a sender takes its ticket (a
 * seq_cst RMW) and then grants, which reads head and tail; the consumer
 * frees cells, publishes head, fences and reads turn_next.  Either the
 * consumer sees the ticket or the sender sees the free cells (Dekker, as
 * in wait.c).  The consumer looks every WAKE_EVERY cells it frees, when
 * the lane is empty and before it sleeps (ring.c); cells it freed in
 * between are found by the front's poll.
 *
 * Turns given up: a sender out of time whose turn was granted gives it
 * back (turn_out -= 1, grant(): the next one gets it).  One whose turn
 * has not come cannot leave the middle of the queue, so it gives its turn
 * back ahead: turn_out -= 1 now, and the turn its ticket is granted later
 * (to nobody) balances it.  A sender killed while it holds a ticket is
 * given up the same way by whoever reaps its slot (shm_turn_reaped, from
 * producer.c).  Killed in the two instructions between its ticket and
 * its note, a ticket is lost: one turn granted to nobody, which the
 * front forgets after TURN_STUCK polls that found room nobody took.
 * Out of time, a sender has one last look for a free cell outside the
 * line before it fails; a send that may not wait (an offer, a timeout
 * of 0) never queues at all.
 *
 * Hostile words (the read-once rule, shm.h): each word is read once into
 * a local and checked.  A queue longer than TURN_MAX (more than any
 * number of senders could make) is not trusted: nothing is granted from
 * it, and a sender whose ticket is that far from turn_grant claims as if
 * there were no queue.  turn_out is clamped to [-waiting, capacity] (to
 * TURN_BATCH when passing), and the front forgets it when it sees room
 * nobody takes for TURN_STUCK polls in a row.  A sender in line looks at
 * least every TURN_LOST_NS, and TURN_LOST_PER_NS later per ticket ahead
 * of it (lost_look: at most 166 ms): a line that has not moved for
 * TURN_LOST_NS while the lane has room (its front a ticket nobody holds)
 * is left, to claim outside it.  The repair at a consumer's reap
 * (repair.c) resets a queue nobody stands in, whatever its words say,
 * and one that makes no sense.  A lie costs fairness or a wait of at most
 * TURN_LOST_NS and a look (230 ms in all), never a crash, and every sleep
 * ends at the sender's deadline.
 */
#include <limits.h>
#include <stdint.h>

#include "shm/shm_impl.h"

#define TURN_MAX	(1u << 20)	/* more waiters than slots could make */
#define TURN_SLICE_NS	1000000		/* the front looks every 1 ms */
#define TURN_BATCH	2		/* turns out at once */
#define TURN_LOST_NS	64000000	/* a line that has not moved: lost */
#define TURN_LOST_PER_NS 100000		/* a look later per ticket ahead */
#define TURN_STUCK	16		/* front polls with room nobody took */
#define TURN_NOBODY	UINT64_MAX	/* grant(): no sender of our own */

static unsigned	 grant(struct shm_mbox_local *, uint64_t);
static unsigned	 grant_once(struct shm_mbox_local *, uint64_t, bool *);
static bool	 left(const uint32_t *, uint32_t);
static void	 take(struct shm_producer *, struct shm_mbox_local *,
		    struct shm_turn *);
static void	 wake(struct shm_mbox *, uint32_t, uint32_t, uint64_t, bool);
static void	 give_back(struct shm_mbox_local *, uint32_t);
static void	 unqueue(struct shm_mbox_local *);
static void	 front_stuck(struct shm_mbox_local *, struct shm_turn *);
static uint64_t	 room(struct shm_mbox_local *);
static bool	 room_beyond(struct shm_mbox_local *, uint64_t);
static bool	 line_lost(struct shm_mbox_local *, struct shm_turn *,
		    uint32_t, int64_t);
static int64_t	 lost_look(int32_t);

/* Free cells of the main lane now (0 if head and tail make no sense). */
static uint64_t
room(struct shm_mbox_local *mb)
{
	struct shm_lane_local *l = &mb->lane[SHM_LANE_MAIN];
	uint64_t	 h, t, lim;

	h = atomic_load(&l->ctl->head);
	t = lane_tail(l->ctl, memory_order_seq_cst);
	lim = shm_lane_limit(l);
	if (t < h || t - h >= lim)
		return 0;
	return lim - (t - h);
}

/*
 * More than n cells free (n at most TURN_BATCH), as a sender with a pass
 * asks on every send while senders are in line: the cell n places past
 * tail is free for its lap (the consumer frees cells in order, so the
 * ones before it are free too).  Not room(): head is on the consumer's
 * line, which it writes for every message it takes, and a sender reading
 * it on every send pulled that line away from the consumer each time
 * (that one load was 3.5% of the CPU samples of bench-scale's fan-in at
 * P = 1,000).  The cell is one the next few claims write anyway (and one
 * prefetch_ahead asks for).  Under an effective capacity (a limit below
 * the cells) the count needs head: room().
 */
static bool
room_beyond(struct shm_mbox_local *mb, uint64_t n)
{
	struct shm_lane_local *l = &mb->lane[SHM_LANE_MAIN];
	uint64_t	 t;

	if (shm_lane_limit(l) < l->cap)
		return room(mb) > n;
	if (n >= l->cap)
		return false;
	t = lane_tail(l->ctl, memory_order_relaxed) + n;
	return cell_seq(l, t, memory_order_acquire) == t;
}

bool
shm_turns_waiting(struct shm_mbox *m)
{
	return atomic_load(&m->turn_next) != atomic_load(&m->turn_grant);
}

/*
 * A sender that is not in line, with senders in line (ring.c, join_queue):
 * may it take a free cell now, passing them?  One just let in (its pass,
 * see shm_turn_done) may, for the rest of its burst, while more cells are
 * free than the turns granted and not yet used: it runs, and sends on
 * instead of sleeping and waking once per message behind the line.  Any
 * other only while the lane is less than half full (besides those turns):
 * the consumer lets the line in as soon as it is half empty (ring.c,
 * wake_blocked), so a line forms only when the lane is full and is let
 * in before it fills again: nobody waits in line for ever behind senders
 * that keep coming.  At most TURN_BATCH turns count: a larger turn_out is
 * a lie, not a reason to wait.
 */
bool
shm_turns_may_pass(struct shm_producer *p, struct shm_mbox_local *mb)
{
	int32_t	 out = (int32_t)atomic_load(&mb->m->turn_out);

	if (out < 0)
		out = 0;
	if (out > TURN_BATCH)
		out = TURN_BATCH;
	if (p->pass_mbox == shm_mb_index(p->a, mb) + 1 && p->pass_left > 0) {
		/* Nothing owed: the claim finds a full lane itself. */
		if (out == 0 || room_beyond(mb, (uint64_t)out)) {
			p->pass_left--;
			return true;
		}
		p->pass_left = 0;
		return false;
	}
	return room(mb) > (uint64_t)out +
	    shm_lane_limit(&mb->lane[SHM_LANE_MAIN]) / 2;
}

unsigned
shm_turns_grant(struct shm_mbox_local *mb)
{
	return grant(mb, TURN_NOBODY);
}

/*
 * Grant turns until no ticket that left is in the way: a round that
 * granted a turn to a ticket that left gives it back and grants again
 * (bounded: each round takes one such ticket off the list at least).
 */
static unsigned
grant(struct shm_mbox_local *mb, uint64_t self)
{
	unsigned	 total = 0, rounds;
	bool		 again = true;

	for (rounds = 0; again && rounds < SHM_TURN_LEFT + 2; rounds++)
		total += grant_once(mb, self, &again);
	return total;
}

/* Is ticket t one whose sender left (in the snapshot e of turn_left)? */
static bool
left(const uint32_t *e, uint32_t t)
{
	unsigned i;

	for (i = 0; i < SHM_TURN_LEFT; i++)
		if (e[i] != 0 && e[i] == t + 1)
			return true;
	return false;
}

/*
 * One round: grant the oldest waiting tickets as many turns as there are
 * free cells not already granted, passing over the tickets that left
 * (their turns cost no cell: they are given back at once), and wake them
 * and the new front.  self: the caller's own ticket (not woken: it is
 * awake), or TURN_NOBODY.  Whoever moves turn_grant past a ticket owes
 * its turn (turn_out += 1); whoever takes a ticket that left off the list
 * (this round, or the sender itself, see leave_line) gives it back.
 * *again: a ticket that left was granted a cell's turn, or is the new
 * front: another round.  Returns the turns granted to tickets still in
 * line.
 */
static unsigned
grant_once(struct shm_mbox_local *mb, uint64_t self, bool *again)
{
	struct shm_mbox	*m = mb->m;
	uint32_t	 e[SHM_TURN_LEFT];
	uint32_t	 g, n, waiting, k, t, i, ngone = 0, v;
	uint64_t	 nfree, lim;
	int64_t		 out, budget;
	bool		 lie = false, any = false, front;

	*again = false;
	g = atomic_load(&m->turn_grant);
	n = atomic_load(&m->turn_next);
	waiting = n - g;
	if (waiting > TURN_MAX && self != TURN_NOBODY &&
	    (uint32_t)self - g < TURN_MAX) {
		/* turn_next lies: up to us, and wake who may be next. */
		waiting = (uint32_t)self - g + 1;
		lie = true;
	}
	if (waiting == 0 || waiting > TURN_MAX)
		return 0;
	for (i = 0; i < SHM_TURN_LEFT; i++) {
		e[i] = atomic_load(&m->turn_left[i]);
		any |= e[i] != 0;
	}
	out = (int32_t)atomic_load(&m->turn_out);
	if (out < -(int64_t)waiting)
		out = -(int64_t)waiting;
	nfree = room(mb);
	budget = (int64_t)nfree - out;
	/*
	 * A few out at once, who send on while there is room.  The new
	 * front polls for cells freed one at a time (the free cells bound
	 * the turns), or above the half mark, where the consumer grants
	 * none; not when TURN_BATCH bounds them below it: the consumer
	 * grants the next ones once these are used, and a front woken for
	 * nothing would only sleep again (a wake-up per batch).
	 */
	lim = shm_lane_limit(&mb->lane[SHM_LANE_MAIN]);
	front = budget <= TURN_BATCH - out || nfree < lim - lim / 2;
	if (budget > TURN_BATCH - out)
		budget = TURN_BATCH - out;
	for (k = 0; k < waiting && k < SHM_TURN_WAITERS; k++) {
		if (any && left(e, g + k))
			continue;	/* costs no cell */
		if (budget <= 0)
			break;
		budget--;
	}
	if (k == 0)
		return 0;
	if (!atomic_compare_exchange_strong(&m->turn_grant, &g, g + k))
		return 0;		/* another granter was first */
	atomic_fetch_add(&m->turn_out, k);
	/* Take the tickets that left off the list: their turns come back. */
	for (i = 0; i < SHM_TURN_LEFT; i++) {
		v = atomic_load(&m->turn_left[i]);
		t = v - 1;
		if (v == 0 || t - g >= k ||
		    !atomic_compare_exchange_strong(&m->turn_left[i], &v, 0))
			continue;
		ngone++;
		atomic_fetch_sub(&m->turn_out, 1);
		if (!left(e, t))
			*again = true;	/* it took a cell's turn: regrant */
	}
	if (g + k != n && !lie) {
		for (i = 0; i < SHM_TURN_LEFT; i++)
			if (atomic_load(&m->turn_left[i]) == g + k + 1)
				*again = true;	/* the new front left */
	}
	wake(m, g, (k < waiting && front) || lie ? k + 1 : k, self,
	    lie || waiting > SHM_TURN_WAITERS);
	return k - ngone;
}

/*
 * Wake count tickets from `from` on (but self): per cell, one
 * FUTEX_WAKE_BITSET with the bits of those tickets, so a sleeper with
 * other bits sleeps on.  Tickets that left are woken too: a ticket on
 * that list is a worker's word, and a sender still in line that a lie
 * put there must see that its turn was passed, not sleep on.  Counted as
 * turn wake-ups.
 *
 * In a line of up to SHM_TURN_WAITERS a bit has one sleeper, so each
 * wake asks for as many sleepers as it has bits: the kernel then stops
 * at the first waiter of each (the oldest on the cell, the next in
 * line), instead of walking every sender asleep on the cell (some 31 at
 * P = 1,000, each a cold line: that walk was a seventh of the consumer's
 * CPU time in bench-scale's fan-in).  Longer (two tickets a lap apart
 * share a bit) or lied about, every sleeper of those bits is woken, and
 * those whose turn it is not sleep again.
 */
static void
wake(struct shm_mbox *m, uint32_t from, uint32_t count, uint64_t self,
    bool all)
{
	uint32_t	 bits[SHM_TURN_CELLS] = { 0 }, i, t, woken = 0;
	int		 nbits[SHM_TURN_CELLS] = { 0 };

	if (count > SHM_TURN_WAITERS) {
		count = SHM_TURN_WAITERS;	/* every bit of every cell */
		all = true;
	}
	for (i = 0; i < count; i++) {
		t = from + i;
		if (self != TURN_NOBODY && t == (uint32_t)self)
			continue;
		bits[t % SHM_TURN_CELLS] |= shm_turn_bit(t);
		nbits[t % SHM_TURN_CELLS]++;
		woken++;
	}
	for (i = 0; i < SHM_TURN_CELLS; i++) {
		if (bits[i] == 0)
			continue;
		atomic_fetch_add(&m->turn_cell[i], 1);
		shm_futex_wake_bits(&m->turn_cell[i], bits[i], all ? INT_MAX :
		    nbits[i]);
	}
	if (woken > 0)
		atomic_fetch_add_explicit(&m->turn_wakes, woken,
		    memory_order_relaxed);
}

void
shm_turns_wake_all(struct shm_mbox *m)
{
	unsigned i;

	for (i = 0; i < SHM_TURN_CELLS; i++) {
		atomic_fetch_add(&m->turn_cell[i], 1);
		shm_futex_wake_bits(&m->turn_cell[i], UINT32_MAX, INT_MAX);
	}
}

/* Take a ticket, note it in our slot, and grant (see the top). */
static void
take(struct shm_producer *p, struct shm_mbox_local *mb, struct shm_turn *tu)
{
	_Atomic uint32_t *q = &mb->lane[SHM_LANE_MAIN].ctl->queued;

	tu->ticket = atomic_fetch_add(&mb->m->turn_next, 1);
	atomic_store(&p->slot->turn_ticket, tu->ticket);
	atomic_store(&p->slot->turn_mbox, shm_mb_index(p->a, mb) + 1);
	tu->held = true;
	tu->tried = false;
	tu->stuck = 0;
	tu->seen_grant = atomic_load(&mb->m->turn_grant);
	tu->seen_at = (int64_t)shm_now_ns();
	p->pass_left = 0;
	if (atomic_load_explicit(q, memory_order_relaxed) == 0)
		atomic_store(q, 1);
	(void)grant(mb, tu->ticket);
}

/*
 * Wait for our turn, until deadline (CLOCK_MONOTONIC ns; INT64_MAX: for
 * ever): 0 when it came (claim a cell now), SHM_ETIMEDOUT when the
 * deadline passed first (the turn is given up).  Called again after a
 * claim that found no cell although the turn came (a sender that did not
 * queue took it), it waits 1 ms and says 0 again.
 */
int
shm_turn_wait(struct shm_producer *p, struct shm_mbox_local *mb,
    struct shm_turn *tu, int64_t deadline)
{
	struct shm_mbox	*m = mb->m;
	_Atomic uint32_t *cell;
	uint32_t	 v, g;
	int32_t		 d;
	int64_t		 now, until, look;
	bool		 slice, again;

	/* Out of time: the last look was had. */
	if (tu->expired)
		return SHM_ETIMEDOUT;
	if (!tu->held) {
		/* A send that may not wait takes no ticket. */
		if ((int64_t)shm_now_ns() >= deadline)
			return SHM_ETIMEDOUT;
		take(p, mb, tu);
	}
	cell = shm_turn_cell(m, tu->ticket);
	for (;;) {
		v = atomic_load(cell);
		g = atomic_load(&m->turn_grant);
		d = (int32_t)(tu->ticket - g);
		again = false;
		if (d < 0 || d > (int32_t)TURN_MAX) {
			/* Our turn (or a queue nobody can trust: as ours). */
			if (!tu->tried) {
				tu->tried = true;
				return 0;
			}
			slice = again = true;
		} else if (d == 0) {
			/*
			 * The front: look for room ourselves.  A grant looks
			 * at the line again, but not past the deadline: a
			 * worker that keeps putting turn_grant back to our
			 * ticket would keep us granting here for ever.
			 */
			if (grant(mb, tu->ticket) > 0 &&
			    (int64_t)shm_now_ns() < deadline)
				continue;
			front_stuck(mb, tu);
			slice = true;
		} else
			slice = false;
		now = (int64_t)shm_now_ns();
		if (now >= deadline) {
			/* Out of line, one last look for a free cell. */
			shm_turn_leave(p, mb, tu);
			tu->expired = true;
			return 0;
		}
		if (line_lost(mb, tu, g, now)) {
			/* Out of line to claim; full, it queues again. */
			shm_turn_leave(p, mb, tu);
			return 0;
		}
		look = slice ? TURN_SLICE_NS : lost_look(d);
		until = deadline - now > look ? now + look : deadline;
		(void)shm_futex_wait_bits(cell, v, shm_turn_bit(tu->ticket),
		    until);
		if (again)
			return 0;
	}
}

/*
 * How long a sender d tickets behind the front sleeps before it looks
 * whether the line moved: TURN_LOST_NS, and TURN_LOST_PER_NS more per
 * ticket ahead of it (at most SHM_TURN_WAITERS of them: 166 ms).  Its
 * turn is that much further off: a sender far back that looked every
 * TURN_LOST_NS found the line moving and slept again, a sleep and a
 * wake-up for nothing per 64 ms in line (at P = 1,000 in bench-scale's
 * fan-in, once it ran slower than 64 ms, a third of the senders' sleeps).
 */
static int64_t
lost_look(int32_t d)
{
	uint32_t ahead = d < (int32_t)SHM_TURN_WAITERS ? (uint32_t)d :
	    SHM_TURN_WAITERS;

	return TURN_LOST_NS + (int64_t)ahead * TURN_LOST_PER_NS;
}

/*
 * The line has not moved for TURN_LOST_NS (turn_grant still g) although
 * the lane has room: whoever should let it in is not there (a front that
 * is a ticket nobody holds, turns owed to nobody, words a worker wrote).
 * A sender in line looks at this every TURN_LOST_NS at least.
 */
static bool
line_lost(struct shm_mbox_local *mb, struct shm_turn *tu, uint32_t g,
    int64_t now)
{
	if (g != tu->seen_grant) {
		tu->seen_grant = g;
		tu->seen_at = now;
		return false;
	}
	return now - tu->seen_at >= TURN_LOST_NS && room(mb) > 0;
}

/*
 * The front found room but could grant nothing: turns granted and not
 * used (senders slow to wake, a lost ticket, a turn_out scribbled on).
 * After TURN_STUCK polls in a row, they are forgotten.
 */
static void
front_stuck(struct shm_mbox_local *mb, struct shm_turn *tu)
{
	uint32_t out;

	if (room(mb) == 0) {
		tu->stuck = 0;
		return;
	}
	if (++tu->stuck < TURN_STUCK)
		return;
	tu->stuck = 0;
	out = atomic_load(&mb->m->turn_out);
	if ((int32_t)out > 0)
		(void)atomic_compare_exchange_strong(&mb->m->turn_out, &out,
		    0);
}

/*
 * Our turn used: a cell claimed.  turn_out never goes below 0 this way
 * (a repair may have forgotten our turn); a turn given back ahead and
 * counted twice is a positive excess, which front_stuck forgets.
 */
void
shm_turn_done(struct shm_producer *p, struct shm_mbox_local *mb,
    struct shm_turn *tu)
{
	uint32_t out = atomic_load(&mb->m->turn_out);

	while ((int32_t)out > 0 && !atomic_compare_exchange_weak(
	    &mb->m->turn_out, &out, out - 1))
		;
	/* Its next sends may follow this one while there is room. */
	p->pass_mbox = shm_mb_index(p->a, mb) + 1;
	p->pass_left = (uint32_t)shm_lane_limit(&mb->lane[SHM_LANE_MAIN]) / 2;
	atomic_store(&p->slot->turn_mbox, 0);
	tu->held = false;
	unqueue(mb);
}

/* Our turn given up (out of time, or an error): the next one gets it. */
void
shm_turn_leave(struct shm_producer *p, struct shm_mbox_local *mb,
    struct shm_turn *tu)
{
	if (!tu->held)
		return;
	give_back(mb, tu->ticket);
	atomic_store(&p->slot->turn_mbox, 0);
	tu->held = false;
	unqueue(mb);
}

/*
 * Ticket t's holder is gone without its cell (out of time, an error, or
 * killed and reaped).  Its turn granted, it is given back and granted
 * again: the cell goes to the next.  Not yet: the ticket is put on the
 * list of those that left, so that whoever grants it its turn gives the
 * turn back at once (and passes over it as the front); but if it was
 * granted meanwhile, by a granter that did not see it on the list, it is
 * taken off again here, and its turn given back.  Exactly one of the two
 * takes it off (a CAS), so the turn is given back once.  With the list
 * full, the turn is given back ahead (turn_out -= 1 now; its grant later
 * balances it).
 */
static void
give_back(struct shm_mbox_local *mb, uint32_t t)
{
	struct shm_mbox	*m = mb->m;
	uint32_t	 g = atomic_load(&m->turn_grant), zero, v = t + 1;
	unsigned	 i;

	if ((int32_t)(t - g) < 0 || v == 0) {
		atomic_fetch_sub(&m->turn_out, 1);
		(void)grant(mb, TURN_NOBODY);
		return;
	}
	for (i = 0; i < SHM_TURN_LEFT; i++) {
		zero = 0;
		if (atomic_compare_exchange_strong(&m->turn_left[i], &zero, v))
			break;
	}
	if (i == SHM_TURN_LEFT) {
		atomic_fetch_sub(&m->turn_out, 1);	/* ahead */
		(void)grant(mb, TURN_NOBODY);
		return;
	}
	g = atomic_load(&m->turn_grant);
	if ((int32_t)(t - g) < 0) {
		if (atomic_compare_exchange_strong(&m->turn_left[i], &v, 0)) {
			atomic_fetch_sub(&m->turn_out, 1);
			(void)grant(mb, TURN_NOBODY);
		}
		return;
	}
	if (t == g)
		(void)grant(mb, TURN_NOBODY);	/* the front: pass over it */
}

/*
 * Nobody waits for a turn any more: new senders need not queue.  The
 * hint is cleared, then the queue looked at again (a store, a fence, a
 * load: a sender that took a ticket meanwhile sees the hint cleared and
 * sets it again, or is seen here).
 */
static void
unqueue(struct shm_mbox_local *mb)
{
	_Atomic uint32_t *q = &mb->lane[SHM_LANE_MAIN].ctl->queued;

	if (shm_turns_waiting(mb->m) ||
	    atomic_load_explicit(q, memory_order_relaxed) == 0)
		return;
	atomic_store(q, 0);
	atomic_thread_fence(memory_order_seq_cst);
	if (shm_turns_waiting(mb->m))
		atomic_store(q, 1);
}

/*
 * A dead process's slot (producer.c): the turn it held or waited for is
 * given up.  What the slot says is a worker's word: at worst a turn
 * given back that was never held, which costs fairness, not progress.
 */
void
shm_turn_reaped(struct shm_arena *a, struct shm_slot *s)
{
	uint32_t	 w = atomic_exchange(&s->turn_mbox, 0);
	uint32_t	 t = atomic_load(&s->turn_ticket);
	struct shm_mbox_local *mb;

	if (w == 0 || w > a->n)
		return;
	mb = shm_mb(a, w - 1);
	give_back(mb, t);
	unqueue(mb);
}

/*
 * Senders in line at mailbox w (its index + 1), as their slots say: only
 * a slot some live process holds.  A note in a free slot, or in one of a
 * process that is gone, is a worker's word that nobody stands behind,
 * and would keep a lie about the queue through every repair.
 */
static unsigned
in_line(struct shm_arena *a, uint32_t w)
{
	struct shm_slot *s;
	unsigned i, n = 0;
	int32_t pid;

	for (i = 0; i < a->nslots; i++) {
		s = &a->slots[i];
		if (atomic_load_explicit(&s->turn_mbox,
		    memory_order_acquire) != w)
			continue;
		pid = SHM_ONCE(s->pid);
		n += pid > 0 && SHM_ONCE(s->state) == SLOT_LIVE &&
		    shm_pid_exists(pid);
	}
	return n;
}

/*
 * The queue at its consumer's reap (repair.c).  With nobody in line (no
 * live process's slot notes a ticket here: the usual case, where this
 * costs a look at each slot only if a word is not at rest), whatever the
 * words say, the
 * queue starts again empty: every ticket taken is granted, nothing is
 * owed, nobody starved, the hint cleared.  Words a worker wrote may look
 * sane (a line of thousands nobody stands in, every free cell owed) and
 * would make the next senders wait behind nobody.  With senders in line,
 * it is kept, unless it makes no sense: then every ticket gets its turn
 * and every sleeper looks again (one loses its place, not its send).
 * 1 if anything was reset.
 */
int
shm_turns_repair(struct shm_arena *a, uint32_t idx)
{
	struct shm_mbox_local *mb = shm_mb(a, idx);
	struct shm_mbox	*m = mb->m;
	_Atomic uint32_t *q = &mb->lane[SHM_LANE_MAIN].ctl->queued;
	uint32_t	 n, g, o, waiting, i, dirty = 0;
	int64_t		 out;

	n = atomic_load(&m->turn_next);
	g = atomic_load(&m->turn_grant);
	o = atomic_load(&m->turn_out);
	for (i = 0; i < SHM_TURN_LEFT; i++)
		dirty |= atomic_load(&m->turn_left[i]);
	dirty |= (n ^ g) | o | atomic_load(q);
	if (dirty == 0)
		return 0;
	waiting = n - g;
	out = (int32_t)o;
	if (in_line(a, idx + 1) > 0 && waiting <= TURN_MAX &&
	    out >= -(int64_t)waiting &&
	    out <= (int64_t)mb->lane[SHM_LANE_MAIN].cap)
		return 0;
	(void)atomic_compare_exchange_strong(&m->turn_grant, &g, n);
	(void)atomic_compare_exchange_strong(&m->turn_out, &o, 0);
	for (i = 0; i < SHM_TURN_LEFT; i++)
		atomic_store(&m->turn_left[i], 0);
	unqueue(mb);
	shm_turns_wake_all(m);
	return 1;
}
