/*
 * express_foe.c: a worker that attacks the express path (shm/express.c),
 * for tests/check_adv_express.c.  It runs under actord with a mailbox and
 * ready = "actor", attaches, says it is ready, and then:
 *
 *   express_foe ghost SEED PATH...
 *				for ever, as fast as it can: TAIL_OWNED set
 *				on each PATH's main lane with an owner that
 *				is no slot, a free one, actord's, its own or
 *				a wild number; own_revoke raised, dropped
 *				and wrapped; every slot's own_mbox, revoking
 *				and own_busy (the words actord's reap and a
 *				revoker read) set to what they check badly;
 *				and words of each PATH's large slots and
 *				in-hand copy
 *   express_foe stuck PATH REAP
 *				makes itself PATH's owner, busy in a send
 *				that never ends (own_busy its tail + 1), and
 *				says so again every millisecond; REAP 1 also
 *				names the mailbox in its slot's own_mbox, as
 *				an honest owner does (actord's reap then
 *				gives the lane back), REAP 0 leaves it to
 *				the next revoker; writes "stuck" to
 *				$TW_DIR/foe once the lane is held
 *   express_foe hot PATH SIG N LIVES
 *				an honest hot producer: N tells to PATH (tag
 *				39, timeout 0) back to back, which takes
 *				PATH's main lane; the first owned send of
 *				each incarnation raises SIG (a number:
 *				SIGSTOP, SIGKILL) between its claim and its
 *				publish, after "owner PID ok K failed F"
 *				to $TW_DIR/foe (its tells that went in
 *				before, and that did not); then "done ok K failed F" once the
 *				N are sent and SIG was raised.  An incarnation that finds LIVES
 *				"owner" lines there already sends nothing
 *   express_foe sleeping PATH	clears PATH's "sleeping" word once (its
 *				consumer, asleep on its doorbell, is then
 *				rung by nobody), writes "cleared" to
 *				$TW_DIR/foe, and sleeps
 *
 * It includes shm/ internals on purpose: it plays a worker that knows
 * the layout.  Every write goes through the mapping a worker gets.
 */
#include <err.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm_impl.h"
/* Both name their slot states; this program only uses shm's. */
#undef SLOT_FREE
#include "worker/actor_impl.h"
#include "tests/lib/tfoe.h"

#define MAX_TARGETS	8

static void
note(const char *what)
{
	tfoe_note("foe", what);
}

static uint32_t
target(struct shm_arena *a, const char *path)
{
	int idx;

	idx = (int)tfoe_target(a, path);
	if (shm_mb(a, (uint32_t)idx)->m == NULL)
		shm_localize(a, (uint32_t)idx);
	if (shm_mb(a, (uint32_t)idx)->m == NULL)
		errx(1, "%s: no view", path);
	return (uint32_t)idx;
}

/* An owner's slot number + 1 as a hostile worker would name it. */
static uint32_t
wild_owner(struct shm_arena *a, const struct shm_producer *self)
{
	switch (tfoe_rnd() % 7) {
	case 0:
		return 0;
	case 1:
		return a->nslots + 1 + (uint32_t)(tfoe_rnd() % 4);
	case 2:
		return UINT32_MAX;
	case 3:
		return self->slot_no + 1;
	case 4:
		return 1;			/* actord's, or the first */
	default:
		return (uint32_t)(tfoe_rnd() % a->nslots) + 1;
	}
}

/* A claim record: near tail, or anything. */
static uint64_t
wild_busy(uint64_t t)
{
	switch (tfoe_rnd() % 6) {
	case 0:
		return 0;
	case 1:
		return t;
	case 2:
		return t + 1;
	case 3:
		return ~0ULL;
	case 4:
		return t - 1;
	default:
		return tfoe_rnd();
	}
}

static void
scribble_bytes(unsigned char *base, size_t len)
{
	size_t off;

	if (base == NULL || len < 8)
		return;
	off = (size_t)(tfoe_rnd() % (len / 8)) * 8;
	__atomic_store_n((uint64_t *)(void *)(base + off), tfoe_rnd() % 3 == 0 ?
	    ~0ULL : tfoe_rnd(), __ATOMIC_RELAXED);
}

static void
ghost_one(struct shm_arena *a, const struct shm_producer *self, uint32_t idx)
{
	struct shm_mbox_local *mb = shm_mb(a, idx);
	struct shm_lane_local *l = &mb->lane[SHM_LANE_MAIN];
	struct shm_slot *s = &a->slots[tfoe_rnd() % a->nslots];
	uint64_t t = atomic_load(&l->ctl->tail) & ~TAIL_OWNED;
	unsigned lane;

	switch (tfoe_rnd() % 10) {
	case 0:
	case 1:
	case 2:
		atomic_store(&mb->m->own_slot, wild_owner(a, self));
		atomic_fetch_or(&l->ctl->tail, TAIL_OWNED);
		break;
	case 3:
		atomic_store(&s->own_busy, wild_busy(t));
		break;
	case 4:
		atomic_store(&mb->m->own_revoke, tfoe_rnd() % 2 ? 0 :
		    tfoe_rnd() % 2 ? UINT32_MAX : 1);
		break;
	case 5:
		atomic_store(&s->own_mbox, tfoe_rnd() % 2 ? idx + 1 :
		    (uint32_t)tfoe_rnd());
		atomic_store(&s->revoking, tfoe_rnd() % 2 ? idx + 1 :
		    (uint32_t)tfoe_rnd());
		break;
	case 6:
		/* A busy "owner" that is the foe itself, for a while. */
		atomic_store(&a->slots[self->slot_no].own_busy, t + 1);
		atomic_store(&mb->m->own_slot, self->slot_no + 1);
		atomic_fetch_or(&l->ctl->tail, TAIL_OWNED);
		break;
	case 7:
		atomic_store(&a->slots[self->slot_no].own_busy, 0);
		break;
	case 8:
		lane = (unsigned)(tfoe_rnd() % SHM_NLANES);
		scribble_bytes(mb->lane[lane].big, (size_t)mb->lane[lane].
		    big_size * mb->lane[lane].big_count);
		break;
	default:
		scribble_bytes(mb->inhand, mb->inhand_size);
		break;
	}
}

static void
ghost(struct shm_arena *a, const struct shm_producer *self, unsigned seed,
    const uint32_t *idx, int n)
{
	uint64_t i;

	tfoe_seed(seed);
	for (i = 1;; i++) {
		ghost_one(a, self, idx[tfoe_rnd() % (unsigned)n]);
		if (i % 1024 == 0)
			sched_yield();
	}
}

/* The lane held by a send of this slot that never ends. */
static void
stuck(struct shm_arena *a, const struct shm_producer *self, uint32_t idx,
    int reap)
{
	struct shm_mbox_local *mb = shm_mb(a, idx);
	struct shm_lane_local *l = &mb->lane[SHM_LANE_MAIN];
	struct shm_slot *me = &a->slots[self->slot_no];
	uint64_t t;
	bool said = false;

	for (;;) {
		t = atomic_load(&l->ctl->tail) & ~TAIL_OWNED;
		if (reap)
			atomic_store(&me->own_mbox, idx + 1);
		atomic_store(&me->own_busy, t + 1);
		atomic_store(&mb->m->own_slot, self->slot_no + 1);
		atomic_fetch_or(&l->ctl->tail, TAIL_OWNED);
		if (!said) {
			note("stuck");
			said = true;
		}
		tfoe_sleep_ms(1);
	}
}

static int	 hot_sig;
static bool	 hot_done;
static uint64_t	 hot_ok, hot_failed;
static struct shm_producer *hot_prod;

/* Between a claim and its publish: an owned send's raises hot_sig once. */
static void
hot_hook(void *arg)
{
	char	 line[64];

	(void)arg;
	if (hot_done || atomic_load(&hot_prod->slot->own_busy) == 0)
		return;
	hot_done = true;
	snprintf(line, sizeof(line), "owner %ld ok %llu failed %llu",
	    (long)getpid(), (unsigned long long)hot_ok,
	    (unsigned long long)hot_failed);
	note(line);
	raise(hot_sig);
}

/* Lines of $TW_DIR/foe that begin with what. */
static int
lines(const char *what)
{
	const char *dir = getenv("TW_DIR");
	char path[512], line[256];
	FILE *f;
	int n = 0;

	if (dir == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/foe", dir);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strncmp(line, what, strlen(what)) == 0;
	fclose(f);
	return n;
}

static void
hot(struct actor *act, const char *path, int sig, uint64_t n, int lives)
{
	struct actor_ref to;
	char	 line[64];
	uint64_t i;

	if (lines("owner") >= lives)
		return;
	while (actor_lookup(act, path, &to) != 0)
		tfoe_sleep_ms(5);
	hot_sig = sig;
	hot_prod = act->prod;
	shm_producer_set_hook(act->prod, hot_hook, NULL);
	/* n at least, and on until one owned send raised sig. */
	for (i = 0; i < n || !hot_done; i++) {
		if (actor_tell_timeout(act, to, 39, &i, sizeof(i), 0) == 0)
			hot_ok++;
		else
			hot_failed++;
	}
	snprintf(line, sizeof(line), "done ok %llu failed %llu",
	    (unsigned long long)hot_ok, (unsigned long long)hot_failed);
	note(line);
}

int
main(int argc, char **argv)
{
	struct actor *act;
	struct shm_arena *a;
	char err[ACTOR_ERRBUF];
	uint32_t idx[MAX_TARGETS];
	int i, n;

	tfoe_state = 0x2545f4914f6cdd1dULL;	/* its schedules, as ever */
	if (argc < 3)
		errx(2, "usage: express_foe MODE ARG...");
	if (actor_attach(&act, err, sizeof(err)) < 0)
		errx(1, "%s", err);
	a = act->arena;
	if (actor_ready(act) < 0)
		errx(1, "cannot say ready");
	if (strcmp(argv[1], "ghost") == 0 && argc >= 4 &&
	    argc - 3 <= MAX_TARGETS) {
		for (i = 3, n = 0; i < argc; i++)
			idx[n++] = target(a, argv[i]);
		ghost(a, act->prod, (unsigned)strtoul(argv[2], NULL, 10),
		    idx, n);
	} else if (strcmp(argv[1], "stuck") == 0 && argc == 4)
		stuck(a, act->prod, target(a, argv[2]), atoi(argv[3]));
	else if (strcmp(argv[1], "sleeping") == 0 && argc == 3) {
		atomic_store(&shm_mb(a, target(a, argv[2]))->m->sleeping, 0);
		note("cleared");
	} else if (strcmp(argv[1], "hot") == 0 && argc == 6)
		hot(act, argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 10),
		    atoi(argv[5]));
	else
		errx(2, "bad arguments");
	for (;;)
		pause();
}
