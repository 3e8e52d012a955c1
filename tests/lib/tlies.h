/*
 * tlies.h: plausible lies a hostile worker writes into a mailbox (its
 * ends, cells, turn queue, producer slots' line notes, and any word of
 * its control block, as tests/progs/scribbler.c's values), drawn from a
 * seeded schedule, for the tests of the repair at a consumer's reap:
 * tests/check_adv_repair.c writes them itself, tests/progs/liar.c into a
 * live actor's mailbox under actord.  Static, so each user has its own
 * copy; tests only.  Includes shm/shm_impl.h: it knows the layout.
 */
#ifndef ACTORD_TESTS_TLIES_H
#define ACTORD_TESTS_TLIES_H

#include <stdint.h>

#include "shm/shm_impl.h"

#define TLIES_UNUSED	__attribute__((unused))

static uint64_t	 tlies_state = 88172645463325252ULL;

/* The schedule starts again from seed. */
static TLIES_UNUSED void
tlies_seed(uint64_t seed)
{
	tlies_state = 0x9e3779b97f4a7c15ULL * (seed + 1);
}

/* xorshift64, as tcheck_rnd (not linked into the test programs). */
static uint64_t
tlies_rnd(void)
{
	tlies_state ^= tlies_state << 13;
	tlies_state ^= tlies_state >> 7;
	tlies_state ^= tlies_state << 17;
	return tlies_state;
}

/* A state a cell of position p could plausibly be in, or not. */
static uint64_t
tlies_cell(uint64_t p, uint64_t cap)
{
	static const uint64_t flags[] = { SEQ_RELEASED, SEQ_TAKEN,
	    SEQ_TAKEN | SEQ_CONSUMING, SEQ_TAKEN | SEQ_STEALING, SEQ_STEALING,
	    SEQ_CONSUMING };

	switch (tlies_rnd() % 10) {
	case 0:
		return p;
	case 1:
		return p + 1;
	case 2:
		return p + cap;
	case 3:
		return p - cap;
	case 4:
		return p + 1 - cap;
	case 5:
		return (p + 1) | flags[tlies_rnd() % 6];
	case 6:
		return (p + 1 - cap) | flags[tlies_rnd() % 6];
	case 7:
		return p + 1 + cap;
	case 8:
		return tlies_rnd() % 3 == 0 ? 0 : p - 1;
	default:
		return (p + 1 + cap) | flags[tlies_rnd() % 6];
	}
}

/* A value near v a reader may take for true. */
static uint64_t
tlies_near(uint64_t v, uint64_t cap)
{
	switch (tlies_rnd() % 6) {
	case 0:
		return v + tlies_rnd() % (cap + 2);
	case 1:
		return v - tlies_rnd() % (cap + 2);
	case 2:
		return v + cap;
	case 3:
		return v - cap;
	case 4:
		return tlies_rnd() % 2 ? 0 : v + (1ULL << 40);
	default:
		return v;
	}
}

/* As tests/progs/scribbler.c: a value a reader checks badly. */
static uint64_t
tlies_nasty(uint64_t v)
{
	switch (tlies_rnd() % 12) {
	case 0:
		return 0;
	case 1:
		return ~0ULL;
	case 2:
		return v + (1ULL << 40);
	case 3:
		return v - 1;
	case 4:
		return v + 1;
	case 5:
		return (v + 1) | SEQ_TAKEN | SEQ_STEALING;
	case 6:
		return (v + 1) | SEQ_TAKEN | SEQ_CONSUMING;
	case 7:
		return 1ULL << 31;
	case 8:
		return 0x7fffffffULL;
	case 9:
		return v + tlies_rnd() % 40;
	case 10:
		return v;
	default:
		return tlies_rnd();
	}
}

/*
 * As the scribbler's hostile mode does to a mailbox: ends, cells near
 * tail, and any word of the mailbox's control block (wake-up words, the
 * turn queue, counters), with values near tail.
 */
static void
tlies_scribble(struct shm_arena *a, uint32_t idx)
{
	struct shm_mbox *m = shm_mb(a, idx)->m;
	struct shm_lane_local *l = &shm_mb(a, idx)->lane[tlies_rnd() % SHM_NLANES];
	uint64_t t = atomic_load(&l->ctl->tail), p;
	size_t off;

	switch (tlies_rnd() % 5) {
	case 0:
		atomic_store(&l->ctl->tail, tlies_nasty(t));
		break;
	case 1:
		atomic_store(&l->ctl->head, tlies_nasty(t));
		break;
	case 2:
	case 3:
		p = t + tlies_rnd() % 4 - 2;
		cell_seq_set(l, p, tlies_nasty(t), memory_order_seq_cst);
		break;
	default:
		off = (size_t)(tlies_rnd() % (sizeof(*m) / 8)) * 8;
		__atomic_store_n((uint64_t *)(void *)((unsigned char *)m + off),
		    tlies_nasty(t), __ATOMIC_RELAXED);
		break;
	}
}

/*
 * One plausible lie written into mailbox idx: mode 0 into its main lane,
 * 1 into any lane, 2 also as tlies_scribble.
 */
static TLIES_UNUSED void
tlies_lie(struct shm_arena *a, uint32_t idx, int mode)
{
	struct shm_mbox *m = shm_mb(a, idx)->m;
	struct shm_lane_local *l = &shm_mb(a, idx)->lane[mode > 0 ?
	    (unsigned)(tlies_rnd() % SHM_NLANES) : SHM_LANE_MAIN];
	struct shm_slot *s = &a->slots[a->nslots - 1 - tlies_rnd() % 2];
	uint64_t t = atomic_load(&l->ctl->tail), h = atomic_load(&l->ctl->head);
	uint64_t p, cap = l->cap;

	if (mode == 2 && tlies_rnd() % 2 == 0) {
		tlies_scribble(a, idx);
		return;
	}
	switch (tlies_rnd() % 12) {
	case 0:
		atomic_store(&l->ctl->tail, tlies_near(t, cap));
		break;
	case 1:
		atomic_store(&l->ctl->head, tlies_near(h, cap));
		break;
	case 2:
	case 3:
	case 4:
	case 5:
		p = h - 2 + tlies_rnd() % (2 * cap + 4);
		cell_seq_set(l, p, tlies_cell(p, cap), memory_order_seq_cst);
		break;
	case 6:
		atomic_store(&l->ctl->queued, (uint32_t)(tlies_rnd() % 3));
		break;
	case 7:
		atomic_store(&l->ctl->limit, (uint32_t)(tlies_rnd() % (cap + 2)));
		break;
	case 8:
		atomic_fetch_add(&m->turn_next, (uint32_t)(tlies_rnd() % 40));
		break;
	case 9:
		atomic_store(&m->turn_out, (uint32_t)(int32_t)(tlies_rnd() % 40 -
		    20));
		break;
	case 10:
		atomic_store(&m->turn_left[tlies_rnd() % SHM_TURN_LEFT],
		    atomic_load(&m->turn_grant) + (uint32_t)(tlies_rnd() % 8));
		break;
	default:
		/* A slot (free, or ours) says it stands in line here. */
		atomic_store(&s->turn_mbox, idx + 1);
		atomic_store(&s->turn_ticket, atomic_load(&m->turn_grant) +
		    (uint32_t)(tlies_rnd() % 8));
		break;
	}
}

#endif /* ACTORD_TESTS_TLIES_H */
