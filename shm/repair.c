/*
 * repair.c: a mailbox whose consumer died, made usable again before its
 * next incarnation receives (shm.h, shm_mailbox_repair).  A worker may
 * have written anything anywhere in the arena: a tail moved by 2^40 (every
 * send "full" for ever), a cell marked as being stolen by nobody, a claim
 * made without its record (the consumer waits for ever for a publish that
 * never comes).  The ring's own paths treat such states as transient, and
 * they would last for ever; this is where they end.
 *
 * Owns: nothing of its own; the positions and cells are ring.c's, the claim
 * records producer.c's.  Must never change a cell a live producer owns (a
 * claim it is writing, a steal it is dead-lettering), and must never change
 * anything but by a CAS from the value it checked: live producers go on
 * sending while it runs, and drop_oldest senders move head.
 *
 * The read-once rule (shm.h): everything here is read from the arena with
 * SHM_ONCE or an atomic load into a local, checked, and only the local is
 * used; an index into the cells is always masked.
 *
 * Per lane, in two steps:
 *
 *   ends   head and tail must satisfy head <= tail <= head + capacity, far
 *          below the flag bits of a sequence number.  If not, the end whose
 *          cell agrees with it is kept and the other one found from the
 *          cells: from a plausible tail, head is the first of the cells
 *          still queued below it (t - capacity when tail's own cell still
 *          holds that position: a consumer that died after freeing a
 *          batch, before moving head, its cells all refilled since); from
 *          a plausible head, tail is the first
 *          cell after it that was never published.  If neither agrees, the
 *          lane starts again empty at a sane position, and every cell is
 *          then renumbered by the second step.
 *
 *   cells  each cell once, as position p in [head, head + capacity):
 *          below tail it must hold a message of p (published, released,
 *          taken, or claimed by a live producer), or be consumed, or belong
 *          to the next lap already (others went on meanwhile); at or above
 *          tail it must be free for p (a cell on a page of the memfd never
 *          written reads as free for its first lap: not read at all, see
 *          unwritten).  A claim (seq == p) or a steal mark
 *          that no live producer's record names is released; a consumer's
 *          mark (it died handing over) is published again; any other
 *          state is impossible and is reset.  A queued message lost that
 *          way is a dead letter "garbled".
 *
 * Why a live owner is seen: a producer writes its record (ring, p) before
 * its CAS on tail (release, then seq_cst), and changes it only after it
 * published p (release); the repair reads tail first, then the cell, then
 * the records (acquire).  So a record not found means the cell was
 * published before the records were read, and the CAS from seq == p that
 * releases it fails.  The same holds for a steal mark, set by CAS after the
 * record.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "shm/shm_impl.h"

/*
 * Positions grow by one per message and start at 0: far below this bound
 * for centuries of traffic, and far below the flag bits (SEQ_FLAGS).
 */
#define POS_MAX		(1ULL << 56)
#define ENDS_TRIES	8	/* CAS races with stealers moving head */

/*
 * What lseek(2) said of the arena's memfd during one repair: [data_from,
 * data_to) is written, [hole_from, hole_to) is not (hole_to: the next
 * data, or OFF_END: none up to the end of the file).  A mailbox's lanes
 * lie next to each other, so that one answer serves the next lane too:
 * the three lanes of an actor that heard a little took 8 seeks at each
 * death, each lane asking again what the one before had learnt, and
 * actord's own mailbox 7 more; 5 and 3 now, one per boundary between
 * written and unwritten pages.
 */
struct fmap {
	off_t		 data_from, data_to;
	off_t		 hole_from, hole_to;
};
#define OFF_END		((off_t)INT64_MAX)

struct lane_fix {
	struct shm_arena *a;
	uint32_t	 idx;
	unsigned	 lane;
	struct shm_lane_local *l;
	struct shm_repair *r;
	pid_t		 self;		/* 0 until owned() needs it */
	uint64_t	 data_until;	/* positions below: on written pages */
	struct fmap	*map;		/* the memfd's extents seen so far */
};

static int	 fix_ends(struct lane_fix *);
static void	 new_ends(struct lane_fix *, uint64_t, uint64_t, uint64_t *,
		    uint64_t *);
static uint64_t	 seq_at(const struct shm_lane_local *, uint64_t);
static bool	 queued_for(uint64_t, uint64_t);
static bool	 plausible_for(uint64_t, uint64_t, uint64_t);
static void	 fix_cells(struct lane_fix *);
static void	 fix_queued(struct lane_fix *, uint64_t, uint64_t);
static void	 fix_free(struct lane_fix *, uint64_t, uint64_t);
static bool	 owned(struct lane_fix *, uint64_t, unsigned, unsigned);
static void	 lose(struct lane_fix *, uint64_t, const struct shm_msg *);
static bool	 cas_seq(struct lane_fix *, uint64_t, uint64_t, uint64_t);
static void	 fix_limit(struct lane_fix *);
static uint64_t	 unwritten(struct lane_fix *, uint64_t, uint64_t);
static off_t	 next_data(struct lane_fix *, off_t);
static off_t	 data_end(struct lane_fix *, off_t);
static pid_t	 self_pid(struct lane_fix *);

static uint64_t
seq_at(const struct shm_lane_local *l, uint64_t p)
{
	return cell_seq(l, p, memory_order_acquire);
}

/* seq says position p holds a message (claimed, published, marked). */
static bool
queued_for(uint64_t seq, uint64_t p)
{
	return seq == p || (seq & ~SEQ_FLAGS) == p + 1;
}

/* seq is a state some producer or consumer could leave position p in. */
static bool
plausible_for(uint64_t seq, uint64_t p, uint64_t cap)
{
	return queued_for(seq, p) || seq == p + cap;
}

/* The caller's pid, asked once per repair and only if a record is read. */
static pid_t
self_pid(struct lane_fix *f)
{
	if (f->self == 0)
		f->self = getpid();
	return f->self;
}

/*
 * Does slot s record a claim of position p of this lane, with one of the
 * kinds k1, k2?  A claim is recorded in rec_ring and rec_pos, or, by the
 * owner of a main lane (express.c), in own_mbox and own_busy (p + 1):
 * an owner stopped between its claim and its publish was not seen, and
 * its cell was released under it (the message lost as "garbled", then
 * published all the same).
 */
static bool
records(const struct lane_fix *f, struct shm_slot *s, uint64_t p,
    unsigned k1, unsigned k2)
{
	uint64_t	 rr;

	rr = atomic_load_explicit(&s->rec_ring, memory_order_acquire);
	if (REC_RING(rr) == f->l->ring_id && (REC_KIND(rr) == k1 ||
	    REC_KIND(rr) == k2) && atomic_load_explicit(&s->rec_pos,
	    memory_order_acquire) == p)
		return true;
	return k1 == REC_INTENT && f->lane == SHM_LANE_MAIN &&
	    atomic_load_explicit(&s->own_mbox, memory_order_acquire) ==
	    f->idx + 1 && atomic_load_explicit(&s->own_busy,
	    memory_order_acquire) == p + 1;
}

/*
 * Does a live producer's record name position p of this lane, with one
 * of the kinds k1, k2?  The caller's own slots never do (it is not
 * sending while it repairs).
 */
static bool
owned(struct lane_fix *f, uint64_t p, unsigned k1, unsigned k2)
{
	struct shm_arena *a = f->a;
	struct shm_slot	*s;
	int32_t		 pid;
	uint32_t	 i;

	for (i = 0; i < a->nslots; i++) {
		s = &a->slots[i];
		if (!records(f, s, p, k1, k2))
			continue;
		pid = SHM_ONCE(s->pid);
		if (pid <= 0 || SHM_ONCE(s->state) != SLOT_LIVE ||
		    pid == self_pid(f))
			continue;
		if (shm_pid_exists(pid))
			return true;
	}
	return false;
}

/* A queued message of position p is lost: its dead letter, counted. */
static void
lose(struct lane_fix *f, uint64_t p, const struct shm_msg *hint)
{
	struct shm_msg	 m;

	(void)p;
	m = *hint;
	m.len = 0;			/* never trust it for a copy */
	atomic_fetch_add(&shm_mb(f->a, f->idx)->m->garbled, 1);
	shm_dl_put(f->a, f->idx, (enum shm_lane)f->lane, SHM_DL_GARBLED, &m,
	    NULL);
	f->r->lost++;
}

static bool
cas_seq(struct lane_fix *f, uint64_t p, uint64_t expect, uint64_t to)
{
	return cell_seq_cas(f->l, p, &expect, to);
}

/*
 * The ends of a lane that make no sense, brought back: 1 if they are now
 * sane (moved or not), 0 if the lane could not be settled (a CAS kept
 * failing: a drop_oldest sender moving head the whole time).
 */
static int
fix_ends(struct lane_fix *f)
{
	struct shm_lane_ctl *ctl = f->l->ctl;
	uint64_t	 h, t, raw, nh, nt, cap = f->l->cap;
	int		 tries;

	for (tries = 0;; tries++) {
		/* Moved, it is unowned (express.c): its owner sees that. */
		raw = atomic_load(&ctl->tail);
		t = raw & ~TAIL_OWNED;
		h = atomic_load(&ctl->head);
		if (h <= t && t - h <= cap && t < POS_MAX)
			return 1;
		if (tries == ENDS_TRIES)
			return 0;
		new_ends(f, h, t, &nh, &nt);
		if (nt != t && !atomic_compare_exchange_strong(&ctl->tail,
		    &raw, nt))
			continue;
		if (nh != h && !atomic_compare_exchange_strong(&ctl->head, &h,
		    nh))
			continue;
		f->r->ends++;
	}
}

/* New ends *nh, *nt for head h and tail t that make no sense together. */
static void
new_ends(struct lane_fix *f, uint64_t h, uint64_t t, uint64_t *nh,
    uint64_t *nt)
{
	const struct shm_lane_local *l = f->l;
	uint64_t	 cap = l->cap, p, s;

	s = t < POS_MAX ? seq_at(l, t) : 0;
	if (t < POS_MAX && t >= cap && h < t - cap && queued_for(s, t - cap)) {
		/*
		 * Tail's cell holds position t - cap, still queued: head is
		 * there.  A consumer frees the cells of a batch before it
		 * stores head (ring.c, drain_inplace), and producers claim
		 * what it freed: one that died in between leaves head up to
		 * a batch behind, and once the producers refilled every cell
		 * it freed, tail is a whole lap past that head.  Every
		 * position below t - cap was consumed (its cell was freed
		 * for the next lap), so head is no lower than t - cap.
		 */
		*nh = t - cap;
		*nt = t;
		return;
	}
	if (t < POS_MAX && (s == t || ((s & SEQ_FLAGS) != 0 &&
	    (s & ~SEQ_FLAGS) + cap == t + 1))) {
		/* Tail's cell is free for tail: head is below it. */
		for (p = t; p > 0 && t - p < cap; p--)
			if (!queued_for(seq_at(l, p - 1), p - 1))
				break;
		*nh = p;
		*nt = t;
		return;
	}
	s = h < POS_MAX ? seq_at(l, h) : 0;
	if (h < POS_MAX && plausible_for(s, h, cap)) {
		/* Head's cell agrees with head: tail is above it. */
		for (p = h; p - h < cap; p++) {
			s = seq_at(l, p);
			if ((s & ~SEQ_FLAGS) != p + 1 && s != p + cap)
				break;
		}
		*nh = h;
		*nt = p;
		return;
	}
	/* Neither: start again empty; the cells are renumbered next. */
	*nh = *nt = h < POS_MAX ? h : t < POS_MAX ? t : 0;
}

/*
 * Position p below tail: cell state seq.  Handed-over marks of a dead
 * consumer are published again; claims and steal marks nobody live owns
 * are released; anything impossible is released too.
 */
static void
fix_queued(struct lane_fix *f, uint64_t p, uint64_t seq)
{
	struct shm_cell	*c = lane_cell(f->l, p);
	struct shm_msg	 m;
	uint64_t	 cap = f->l->cap, flags = seq & SEQ_FLAGS;

	if (seq == p + 1 || seq == p + cap)
		return;			/* published, or consumed */
	if (plausible_for(seq, p + cap, cap))
		return;			/* head and tail went past meanwhile */
	if (flags != 0 && (seq & ~SEQ_FLAGS) == p + 1) {
		if (flags & SEQ_CONSUMING) {
			/* Its consumer died handing it over: deliver it. */
			if (cas_seq(f, p, seq, p + 1))
				f->r->released++;
			return;
		}
		if ((flags & SEQ_STEALING) == 0 ||
		    owned(f, p, REC_STEAL, REC_STOLE))
			return;		/* released, taken, or a live steal */
		SHM_ONCE_COPY(m, c->msg);
		if (cas_seq(f, p, seq, (p + 1) | SEQ_TAKEN)) {
			f->r->released++;
			lose(f, p, &m);
		}
		return;
	}
	if (seq == p) {
		if (owned(f, p, REC_INTENT, REC_INTENT))
			return;		/* a live producer is writing it */
		SHM_ONCE_COPY(m, c->msg);
		if (cas_seq(f, p, seq, (p + 1) | SEQ_RELEASED)) {
			f->r->released++;
			lose(f, p, &m);
		}
		return;
	}
	/* Impossible for p: unless head went past it meanwhile, skip it. */
	if (atomic_load(&f->l->ctl->head) > p)
		return;
	SHM_ONCE_COPY(m, c->msg);
	if (cas_seq(f, p, seq, (p + 1) | SEQ_RELEASED)) {
		f->r->reset++;
		lose(f, p, &m);
	}
}

/*
 * Position p at or above tail: its cell must be free for p.  A mark of
 * the last lap that nobody holds is freed (a steal mark nobody owns is a
 * message lost); anything else is renumbered, and if it looked like a
 * published message (one that head skipped), that message is lost.
 */
static void
fix_free(struct lane_fix *f, uint64_t p, uint64_t seq)
{
	struct shm_cell	*c = lane_cell(f->l, p);
	struct shm_msg	 m;
	uint64_t	 cap = f->l->cap, mask = f->l->mask;
	bool		 message;

	if (seq == p)
		return;
	if (lane_tail(f->l->ctl, memory_order_seq_cst) > p)
		return;			/* claimed meanwhile: a live producer's */
	if ((seq & SEQ_FLAGS) != 0 && (seq & ~SEQ_FLAGS) + cap == p + 1) {
		/* Taken on the last lap and not freed yet. */
		if ((seq & SEQ_STEALING) != 0 && owned(f, p - cap, REC_STEAL,
		    REC_STOLE))
			return;
		message = (seq & SEQ_STEALING) != 0;
	} else
		message = (seq & SEQ_FLAGS) == 0 && seq != 0 &&
		    ((seq - 1) & mask) == (p & mask);
	SHM_ONCE_COPY(m, c->msg);
	if (!cas_seq(f, p, seq, p))
		return;
	f->r->reset++;
	if (message)
		lose(f, p, &m);
}

static void
fix_cells(struct lane_fix *f)
{
	struct shm_lane_ctl *ctl = f->l->ctl;
	uint64_t	 h, t, p, q, seq, cap = f->l->cap;

	t = lane_tail(ctl, memory_order_seq_cst);
	h = atomic_load(&ctl->head);
	if (h > t || t - h > cap || t >= POS_MAX)
		return;			/* still moving: fix_ends gave up */
	f->data_until = 0;
	for (p = h; p < h + cap; p++) {
		if (p >= t && p < cap && p >= f->data_until &&
		    (q = unwritten(f, p, cap)) > p) {
			p = q - 1;	/* free for their first lap, as fix_free */
			continue;	/* would find them: nothing to read */
		}
		seq = seq_at(f->l, p);
		if (p < t)
			fix_queued(f, p, seq);
		else
			fix_free(f, p, seq);
	}
}

/*
 * Positions p (of the first lap: p < end <= capacity) whose cells lie in
 * a hole of the arena's memfd: never written, they read as zero, which
 * is free for p (the number is stored XOR the place, shm_impl.h).  Returns
 * the first position from p whose number may have been written; a repair
 * reads no cell before it.  So a repair after each death neither reads
 * nor (a read of a hole of a memfd allocates it) makes resident the pages
 * a mailbox never used: most of them, for an actor that hears little.
 * Pages swapped out are data for SEEK_DATA, never holes.  Sets
 * f->data_until to the end of the data found, so that one seek serves a
 * run of written cells, and what each seek said is kept for the next
 * lanes (struct fmap).  In doubt (a quarantine's mapping, no memfd, an
 * error): p, every cell is read.
 */
static uint64_t
unwritten(struct lane_fix *f, uint64_t p, uint64_t end)
{
	const struct shm_arena *a = f->a;
	const unsigned char *c = f->l->cells + p * f->l->cell;
	off_t o, d, e;
	uint64_t k;

	if (a->fd < 0 || c < a->base || c >= a->base + a->size)
		return p;
	o = (off_t)(c - a->base);
	if ((d = next_data(f, o)) == -1)
		return p;
	if (d == OFF_END)
		return end;			/* holes to the end */
	if (d <= o) {
		/* Written: the cells up to the next hole are read. */
		if ((e = data_end(f, o)) > o)
			f->data_until = p + ((uint64_t)(e - o) +
			    f->l->cell - 1) / f->l->cell;
		else
			f->data_until = p + 1;
		return p;
	}
	/* The cells whose number (the first 8 bytes) lies before d. */
	k = ((uint64_t)(d - o) - sizeof(uint64_t)) / f->l->cell + 1;
	return p + k < end ? p + k : end;
}

/*
 * The first written offset at or after o (o itself if written), OFF_END
 * if none, -1 in doubt: from the map if it knows, else lseek(SEEK_DATA).
 */
static off_t
next_data(struct lane_fix *f, off_t o)
{
	struct fmap *m = f->map;
	off_t d;

	if (o >= m->data_from && o < m->data_to)
		return o;
	/* hole_to is where a seek found data: o itself, if there. */
	if (o >= m->hole_from && o <= m->hole_to)
		return m->hole_to;
	if ((d = lseek(f->a->fd, o, SEEK_DATA)) == -1) {
		if (errno != ENXIO)
			return -1;
		d = OFF_END;
	}
	if (d > o) {
		m->hole_from = o;
		m->hole_to = d;
	}
	return d;
}

/* The end of the written extent at o (written): from the map, or a seek. */
static off_t
data_end(struct lane_fix *f, off_t o)
{
	struct fmap *m = f->map;
	off_t e;

	if (o >= m->data_from && o < m->data_to)
		return m->data_to;
	if ((e = lseek(f->a->fd, o, SEEK_HOLE)) > o) {
		m->data_from = o;
		m->data_to = e;
	}
	return e;
}

/*
 * The main lane's limit, as its configuration in the layout says (no
 * worker can change that one): a scribbled limit would shrink the lane,
 * or make it look full for ever.
 */
static void
fix_limit(struct lane_fix *f)
{
	uint32_t	 cfg, want, lim;

	if (f->lane != SHM_LANE_MAIN)
		return;
	cfg = shm_mailbox_capacity(f->a, f->idx);
	want = cfg == f->l->cap ? 0 : cfg;
	lim = SHM_ONCE(f->l->ctl->limit);
	if (lim != want && atomic_compare_exchange_strong(&f->l->ctl->limit,
	    &lim, want))
		f->r->reset++;
}

int
shm_mailbox_repair(struct shm_arena *a, uint32_t idx, struct shm_repair *out)
{
	struct shm_repair r = { 0, 0, 0, 0 };
	struct fmap	 map = { -1, -1, -1, -1 };	/* knows nothing */
	struct lane_fix	 f;
	unsigned	 k;

	if (out != NULL)
		*out = r;
	if (idx >= a->n)
		return SHM_EBADINDEX;
	/* A spare never handed out: its cells are set when it is prepared. */
	if (!shm_mailbox_prepared(a, idx))
		return 0;
	f.a = a;
	f.idx = idx;
	f.r = &r;
	f.self = 0;
	f.map = &map;
	for (k = 0; k < SHM_NLANES; k++) {
		f.lane = k;
		f.l = &shm_mb(a, idx)->lane[k];
		fix_limit(&f);
		if (fix_ends(&f))
			fix_cells(&f);
	}
	/* Blocked senders' queue (turns.c): reset, unless it is in use. */
	r.reset += (unsigned)shm_turns_repair(a, idx);
	if (r.ends + r.released + r.reset > 0)
		shm_wake_senders_force(shm_mb(a, idx)->m);
	if (out != NULL)
		*out = r;
	return (int)(r.ends + r.released + r.reset);
}
