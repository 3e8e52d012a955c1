/*
 * mailboxes.c: actord's side of the shared-memory arena (shm/shm.h): the
 * layout computed from the tree's mailbox specs, the arena created before
 * anything is forked, the actor table kept true at spawn, readiness, stop
 * and reap, and shm_reap() for every pid actord reaps.
 *
 * Mailbox indexes: the tree's mailboxes in tree order, then actord's own
 * (ASKS_SELF_PATH, opened by asks.c), then spare_mailboxes spares.  The
 * arena's size is fixed at creation (sealed), so a node that appears
 * later (reload, actorctl add) takes a spare whose geometry fits (each
 * spare has the largest capacity, cell and state of the configuration
 * or the defaults), and the spare is then configured as the node's
 * mailbox spec says (shm_mailbox_configure: its capacity, rounded up to a
 * power of two as at boot, however large the ring; its overflow policy
 * and block_timeout) before the node is named or started.  A removed
 * node's slot goes back to the pool, its incarnation bumped so old
 * references are stale.  No spare fits (cell size, state region, reply
 * lane, capacity): the node is not created (ENOSPC), never started
 * without its mailbox.  Spares are laid out lazy: their rings are set up
 * only when a node takes one, so an unused spare costs no memory (the
 * memfd's pages are never touched).
 *
 * It owns the arena handle of the daemon, the mailbox index of each node
 * and the spare pool.  It must never read or write messages: that is
 * libactor's business (asks.c for actord's own).
 *
 * The read-once rule (shm/shm.h): nothing here reads the arena itself;
 * what actord does to it at a reap (actor_reaped, shm_reap,
 * shm_mailbox_repair, shm_sweep) and before a start (actor_restore) goes
 * through shm/ and worker/, whose files that read worker-writable values
 * say so at their top.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "supervisor/actord.h"
#include "supervisor/config.h"
#include "worker/actor.h"
#include "supervisor/log.h"

#define SELF_CAPACITY		16	/* actord's main lane: nobody writes */
#define SELF_REPLY_CELLS	256	/* asks actord can have in flight */
#define SYS_LANE_CELLS		16
#define DEAD_LETTERS		1024
#define SWEEP_SLOTS		64	/* producer slots looked at per reap */
#define REAP_RETRY_MS		5	/* first retry of an ambiguous claim */
#define REAP_RETRY_MAX_MS	1000	/* ... doubling up to this, for ever */
#define REAP_WARN_TRIES		8	/* about a second: say so in the log */
#define REAP_REWARN_TRIES	300	/* then again every five minutes */
#define REAP_ROOM		16	/* retries with room at first */
#define OWED_RETRY_MS		5	/* Terminated for a full system lane */
#define OWED_RETRY_MAX_MS	100	/* ... while their watcher reads nothing */

static uint32_t	pow2_at_least(uint32_t);
static void	on_reap_retry(void *);
static void	on_owed_retry(void *);
static void	owed_later(struct actord *);
static struct actor_owed **owed_list(struct actord *);
static bool	wants_mailbox(const struct node *);
static int	reap_once(struct actord *, pid_t);
static void	reap_later(struct actord *, pid_t);
static uint64_t	reap_delay(unsigned);
static void	reap_arm(struct actord *);
static void	repair(struct actord *, int32_t, const char *);
static void	fill(struct shm_mailbox_layout *, const struct mailbox_spec *);
static void	widen(struct shm_mailbox_layout *,
		    const struct shm_mailbox_layout *);
static bool	fits(const struct shm_mailbox_layout *,
		    const struct shm_mailbox_layout *);
static void	configure(struct actord *, uint32_t, const char *,
		    const struct mailbox_spec *, uint32_t);
static void	policy_of(const struct mailbox_spec *, uint32_t,
		    struct actor_policy *);
static void	sweep(struct actord *);
static int	self_setup(struct actord *, uint32_t, char *, size_t);
static void	self_policy(struct actor_policy *);
static void	self_restore(struct actord *);
static int	take_spare(struct actord *, const struct mailbox_spec *);
static int	drop_cb(void *, enum shm_lane, const struct shm_msg *,
		    const void *);
static void	count_needed(struct actord *, const struct node_spec *,
		    const struct sup_spec *,
		    const char *, bool *, size_t *, size_t *);

static uint32_t
pow2_at_least(uint32_t v)
{
	uint32_t p = 2;

	while (p < v && p < SHM_CAPACITY_MAX)
		p <<= 1;
	return p;
}

static bool
wants_mailbox(const struct node *n)
{
	return n->kind == NODE_WORKER && n->cs != NULL &&
	    (n->cs->has_mailbox || n->cs->ready == READY_ACTOR);
}

static void
fill(struct shm_mailbox_layout *l, const struct mailbox_spec *ms)
{
	memset(l, 0, sizeof(*l));
	l->capacity = pow2_at_least(ms->capacity);
	l->cell = (ms->cell + 63) / 64 * 64;
	if (l->cell < SHM_CELL_MIN)
		l->cell = SHM_CELL_MIN;
	l->sys_capacity = SYS_LANE_CELLS;
	/*
	 * The reply lane holds answers to the asks this actor sends, not
	 * to those queued for it: room for each ask it may have in flight.
	 */
	l->reply_capacity = pow2_at_least(ms->asks > 0 ? ms->asks :
	    DEFAULT_ASKS);
	l->overflow = (enum shm_overflow)ms->overflow;
	l->block_timeout_ms = ms->block_timeout;
	l->max_message = ms->max_message;
	/* libactor's region: policies, watchers, reply slots, snapshots. */
	l->state_size = (uint32_t)actor_region_size(ms->state, ms->watchers,
	    l->reply_capacity);
}

/* w grows to hold l's geometry (not its policies). */
static void
widen(struct shm_mailbox_layout *w, const struct shm_mailbox_layout *l)
{
	if (l->capacity > w->capacity)
		w->capacity = l->capacity;
	if (l->cell > w->cell)
		w->cell = l->cell;
	if (l->reply_capacity > w->reply_capacity)
		w->reply_capacity = l->reply_capacity;
	if (l->max_message > w->max_message)
		w->max_message = l->max_message;
	if (l->state_size > w->state_size)
		w->state_size = l->state_size;
}

/*
 * A slot of geometry have serves a mailbox configured as want: the
 * policies and a smaller capacity are set on the slot when it is taken
 * (mailboxes_assign).
 */
static bool
fits(const struct shm_mailbox_layout *have,
    const struct shm_mailbox_layout *want)
{
	return have->capacity >= want->capacity && have->cell >= want->cell &&
	    have->reply_capacity >= want->reply_capacity &&
	    have->max_message >= want->max_message &&
	    have->state_size >= want->state_size;
}

/* asks: its reply slots, as fill() sized them (0: its reply lane's). */
static void
policy_of(const struct mailbox_spec *ms, uint32_t asks,
    struct actor_policy *pol)
{
	struct shm_mailbox_layout l;

	pol->max_attempts = ms->max_attempts;
	pol->on_down = (enum actor_on_down)ms->on_down;
	pol->while_down = (enum actor_while_down)ms->while_down;
	pol->watchers = ms->watchers;
	if (asks == 0) {
		fill(&l, ms);
		asks = l.reply_capacity;
	}
	pol->asks = asks;
}

static void
configure(struct actord *ad, uint32_t idx, const char *path,
    const struct mailbox_spec *ms, uint32_t asks)
{
	struct actor_policy pol;

	if (shm_actor_set_path(ad->arena, idx, path) < 0)
		log_warnx("%s: cannot name its mailbox", path);
	policy_of(ms, asks, &pol);
	if (actor_configure(ad->arena, idx, &pol) < 0)
		log_warnx("%s: cannot configure its mailbox", path);
}

/* The policies of actord's own mailbox: the defaults, its reply cells. */
static void
self_policy(struct actor_policy *pol)
{
	struct mailbox_spec ms;

	spec_mailbox_init(&ms);
	policy_of(&ms, SELF_REPLY_CELLS, pol);
}

/*
 * actord's own region, whatever a worker wrote over its policies and
 * sizes: repliers find actord's reply slots by its ask_cap, and one
 * rewritten would make every answer to actord miss its slot (dropped as
 * late) for as long as actord runs.  No process of it is ever started,
 * so this is its mailboxes_prespawn.
 */
static void
self_restore(struct actord *ad)
{
	struct actor_policy pol;

	if (ad->self_mbox < 0)
		return;
	self_policy(&pol);
	if (actor_restore(ad->arena, (uint32_t)ad->self_mbox, &pol) < 0)
		log_warnx("actord: cannot restore its mailbox's policies");
}

/* actord's own mailbox: an actor that is up while actord runs. */
static int
self_setup(struct actord *ad, uint32_t idx, char *err, size_t errlen)
{
	struct actor_policy pol;

	if (shm_actor_set_path(ad->arena, idx, ASKS_SELF_PATH) < 0)
		log_warnx("%s: cannot name its mailbox", ASKS_SELF_PATH);
	self_policy(&pol);
	if (actor_configure(ad->arena, idx, &pol) < 0)
		log_warnx("%s: cannot configure its mailbox", ASKS_SELF_PATH);
	(void)actor_prepare_start(ad->arena, idx);
	shm_actor_set_pid(ad->arena, idx, getpid());
	shm_actor_set_state(ad->arena, idx, SHM_ACTOR_UP);
	return asks_open(ad, idx, err, errlen);
}

/* Build the layout from the tree, create the arena, name its actors. */
int
mailboxes_setup(struct actord *ad, char *err, size_t errlen)
{
	struct shm_mailbox_layout *mb = NULL, spare;
	struct mailbox_spec defaults;
	struct shm_layout l;
	struct node *n;
	uint32_t count = 0, total, i, nspare = ad->spec->spare_mailboxes;
	int rc;

	for (n = ad->all; n != NULL; n = n->next_all)
		if (wants_mailbox(n))
			count++;
	total = count + 1 + nspare;
	if ((mb = calloc(total, sizeof(*mb))) == NULL ||
	    (ad->spares = calloc(count + nspare + 1,
	    sizeof(*ad->spares))) == NULL) {
		free(mb);
		snprintf(err, errlen, "arena layout: %s", strerror(errno));
		return -1;
	}
	spec_mailbox_init(&defaults);
	fill(&spare, &defaults);
	/* ad->all is newest first: number in tree order, from the end. */
	i = count;
	for (n = ad->all; n != NULL; n = n->next_all) {
		if (!wants_mailbox(n))
			continue;
		n->mbox = (int32_t)--i;
		fill(&mb[i], &n->cs->mailbox);
		widen(&spare, &mb[i]);
	}
	/* actord's: answers as large as any actor's cell. */
	mb[count] = spare;
	mb[count].capacity = SELF_CAPACITY;
	mb[count].reply_capacity = SELF_REPLY_CELLS;
	mb[count].overflow = SHM_OVERFLOW_REJECT;
	mb[count].state_size = (uint32_t)actor_region_size(0,
	    DEFAULT_WATCHERS, SELF_REPLY_CELLS);
	for (i = 0; i < nspare; i++) {
		mb[count + 1 + i] = spare;
		/* No memory until a child takes it (mailboxes_assign). */
		mb[count + 1 + i].lazy = 1;
		ad->spares[i] = (int32_t)(count + nspare - i);
	}
	ad->nspares = nspare;
	ad->spec_spares = count + nspare;	/* every slot may come back */
	memset(&l, 0, sizeof(l));
	l.nmailboxes = total;
	l.mailboxes = mb;
	/*
	 * Every actor has its own two slots besides (shm.h): the pool is
	 * for everything else (actord's reaps, an actor's threads and
	 * children, programs that attach to the arena).  Its pages are
	 * touched only as far as slots are taken.
	 */
	l.nproducers = SHM_MAX_PRODUCERS;
	l.dl_capacity = DEAD_LETTERS;
	/* The clock's first reading was taken as actord started. */
	rc = shm_create_marked(&l, &ad->clock_mark, "actord", &ad->arena, err,
	    errlen);
	free(mb);
	if (rc < 0)
		return -1;
	ad->arena_fd = shm_fd(ad->arena);
	ad->layout_fd = shm_layout_fd(ad->arena);
	/*
	 * A spare is configured when a node takes it (mailboxes_assign):
	 * until then its state region is never written, so it costs neither
	 * a page of memory nor the time to touch one before the first child.
	 */
	for (n = ad->all; n != NULL; n = n->next_all)
		if (n->mbox >= 0)
			configure(ad, (uint32_t)n->mbox, n->path,
			    &n->cs->mailbox, 0);
	timer_init(&ad->reap_timer, on_reap_retry, ad);
	timer_init(&ad->owed_timer, on_owed_retry, ad);
	if ((ad->reap_pending = calloc(REAP_ROOM, sizeof(*ad->reap_pending)))
	    == NULL) {
		snprintf(err, errlen, "reap retries: %s", strerror(errno));
		return -1;
	}
	ad->reap_cap = REAP_ROOM;
	if (self_setup(ad, count, err, errlen) == -1)
		return -1;
	log_debug("arena: %u mailboxes (%u spare), %zu bytes", total, nspare,
	    shm_size(ad->arena));
	return 0;
}

/* A spare whose geometry fits ms, or -1. */
static int
take_spare(struct actord *ad, const struct mailbox_spec *ms)
{
	struct shm_mailbox_layout want, have;
	size_t i;
	int32_t idx;

	fill(&want, ms);
	for (i = ad->nspares; i-- > 0; ) {
		idx = ad->spares[i];
		if (shm_mailbox_layout(ad->arena, (uint32_t)idx, &have) != 0 ||
		    !fits(&have, &want))
			continue;
		ad->spares[i] = ad->spares[--ad->nspares];
		return idx;
	}
	return -1;
}

/*
 * A node created after the arena: a spare mailbox if it wants one.  -1
 * with errno ENOSPC when none fits.
 */
int
mailboxes_assign(struct node *n)
{
	struct actord *ad = n->ad;
	struct shm_mailbox_layout want;
	int idx, rc;

	if (ad->arena == NULL || n->mbox >= 0 || !wants_mailbox(n))
		return 0;
	if ((idx = take_spare(ad, &n->cs->mailbox)) < 0) {
		errno = ENOSPC;
		return -1;
	}
	/*
	 * Nobody sends to the slot now (unnamed, down) and no consumer
	 * runs: set its capacity and policies before it is named below
	 * and before its process starts (shm.h, shm_mailbox_configure).
	 */
	fill(&want, &n->cs->mailbox);
	if ((rc = shm_mailbox_configure(ad->arena, (uint32_t)idx,
	    want.capacity, want.overflow, want.block_timeout_ms)) < 0) {
		log_warnx("%s: spare mailbox %d: %s", n->path, idx,
		    shm_strerror(rc));
		ad->spares[ad->nspares++] = idx;
		errno = ENOSPC;
		return -1;
	}
	n->mbox = idx;
	(void)shm_mailbox_prepare(ad->arena, (uint32_t)idx);
	/* A pooled spare is anybody's to scribble on: whole again first. */
	repair(ad, idx, n->path);
	configure(ad, (uint32_t)idx, n->path, &n->cs->mailbox, 0);
	log_info("%s: spare mailbox %d", n->path, idx);
	return 0;
}

/* What a removed node left queued: dead letters, never its successor's. */
static int
drop_cb(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	struct node *n = arg;

	shm_dl_put(n->ad->arena, (uint32_t)n->mbox, lane, SHM_DL_ACTOR_DOWN,
	    m, payload);
	return 0;
}

/*
 * n is gone for good (a worker, or every worker under a supervisor that
 * gave up; why: ACTOR_GONE_*): libactor fails what waits for it and
 * tells the watchers of its name (actor_gone).  Its next start, if an
 * operator or a reload makes one, clears that.
 */
void
mailboxes_gone(struct node *n, uint32_t why)
{
	size_t i;

	if (n->ad->arena == NULL)
		return;
	if (n->kind != NODE_WORKER) {
		for (i = 0; i < n->nkids; i++)
			mailboxes_gone(n->kids[i], why);
		return;
	}
	if (n->mbox < 0)
		return;
	(void)actor_gone(n->ad->arena, (uint32_t)n->mbox, why,
	    owed_list(n->ad));
	owed_later(n->ad);
}

/*
 * A node is freed (removed, stopped: no process of it runs): its mailbox
 * goes back to the pool, unnamed, down, emptied, its incarnation bumped so
 * references to it reach nobody.  Not while actord stops.
 */
void
mailboxes_release(struct node *n)
{
	struct actord *ad = n->ad;
	uint32_t idx = (uint32_t)n->mbox;

	if (ad->arena == NULL || n->mbox < 0 || ad->spares == NULL ||
	    ad->nspares >= ad->spec_spares || ad->shutting_down || ad->done)
		goto out;
	mailboxes_gone(n, ACTOR_GONE_REMOVED);
	(void)shm_actor_set_path(ad->arena, idx, "");
	(void)shm_actor_bump_incarnation(ad->arena, idx);
	shm_actor_set_state(ad->arena, idx, SHM_ACTOR_DOWN);
	shm_actor_set_pid(ad->arena, idx, 0);
	(void)shm_consumer_recover(ad->arena, idx);
	repair(ad, n->mbox, n->path);
	(void)shm_drain(ad->arena, idx, SHM_LANES_ALL, 0, drop_cb, n);
	ad->spares[ad->nspares++] = n->mbox;
	log_debug("%s: mailbox %d back to the spares", n->path, n->mbox);
out:
	n->mbox = -1;
}

/*
 * Before a reload: a spare that fits for each of the new configuration's
 * workers that want a mailbox and have none yet (given greedily, as they
 * will be).  0, or -1 with the error.
 */
static void
count_needed(struct actord *ad, const struct node_spec *node,
    const struct sup_spec *ss, const char *prefix,
    bool *used, size_t *need, size_t *missing)
{
	const struct child_spec *cs;
	struct shm_mailbox_layout want, have;
	struct node *k;
	char path[SPEC_PATH_MAX], ipath[SPEC_PATH_MAX + 16];
	size_t i, s;
	unsigned j;

	for (i = 0; i < ss->nchildren; i++) {
		cs = &ss->children[i];
		snprintf(path, sizeof(path), "%s/%s", prefix, cs->name);
		if (cs->kind == CHILD_SUPERVISOR) {
			if (cs->sup != NULL)
				count_needed(ad, node, cs->sup, path, used, need,
				    missing);
			continue;
		}
		if (!cs->has_mailbox && cs->ready != READY_ACTOR)
			continue;
		fill(&want, &cs->mailbox);
		for (j = 0; j < (cs->instances > 0 ? cs->instances : 1); j++) {
			if (!node_spec_local(node, path, cs, j))
				continue;	/* another node's shard */
			if (cs->instances > 0)
				snprintf(ipath, sizeof(ipath), "%s/%u", path, j);
			else
				snprintf(ipath, sizeof(ipath), "%s", path);
			k = actord_find(ad, ipath);
			if (k != NULL && k->mbox >= 0)
				continue;
			(*need)++;
			for (s = 0; s < ad->nspares; s++)
				if (!used[s] && shm_mailbox_layout(ad->arena,
				    (uint32_t)ad->spares[s], &have) == 0 &&
				    fits(&have, &want))
					break;
			if (s < ad->nspares)
				used[s] = true;
			else
				(*missing)++;
		}
	}
}

int
mailboxes_reload_check(struct actord *ad, const struct actord_spec *ns,
    char *err, size_t errlen)
{
	size_t need = 0, missing = 0;
	bool *used;

	if (ad->arena == NULL)
		return 0;
	if (ns->spare_mailboxes != ad->spec->spare_mailboxes)
		log_warnx("spare_mailboxes is read at start only: still %zu "
		    "free", ad->nspares);
	if ((used = calloc(ad->nspares + 1, sizeof(*used))) == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	count_needed(ad, ns->node, &ns->root, "", used, &need, &missing);
	free(used);
	if (missing == 0)
		return 0;
	snprintf(err, errlen, "no spare mailbox: %zu new worker%s with a "
	    "mailbox, %zu without a spare that fits (capacity, cell, state "
	    "or reply lane): raise spare_mailboxes", need, need == 1 ? "" : "s",
	    missing);
	return -1;
}

void
mailboxes_close(struct actord *ad)
{
	asks_close(ad);
	free(ad->spares);
	ad->spares = NULL;
	ad->nspares = 0;
	if (ad->arena == NULL)
		return;
	timer_cancel(&ad->loop, &ad->reap_timer);
	timer_cancel(&ad->loop, &ad->owed_timer);
	actor_owed_free(&ad->owed);
	ad->owed_over = 0;
	free(ad->reap_pending);
	ad->reap_pending = NULL;
	ad->nreap_pending = ad->reap_cap = 0;
	shm_detach(ad->arena);
	ad->arena = NULL;
	ad->arena_fd = -1;
	ad->layout_fd = -1;
}

/* Before fork: the arena's next incarnation, and the table says starting. */
void
mailboxes_prespawn(struct node *n)
{
	struct shm_arena *a = n->ad->arena;
	struct actor_policy pol;

	if (a == NULL)
		return;
	if (n->mbox < 0)
		return;
	/* Whatever a worker wrote over its policies, the next one reads ours. */
	policy_of(&n->cs->mailbox, 0, &pol);
	if (actor_restore(a, (uint32_t)n->mbox, &pol) < 0)
		log_warnx("%s: cannot restore its mailbox's policies", n->path);
	n->incarnation = actor_prepare_start(a, (uint32_t)n->mbox);
}

void
mailboxes_state(struct node *n, int state)
{
	struct shm_arena *a = n->ad->arena;

	if (a == NULL || n->mbox < 0)
		return;
	switch (state) {
	case NS_STARTING:
		shm_actor_set_pid(a, (uint32_t)n->mbox, n->pid);
		break;
	case NS_RUNNING:
		shm_actor_set_state(a, (uint32_t)n->mbox, SHM_ACTOR_UP);
		break;
	case NS_STOPPING:
		shm_actor_set_state(a, (uint32_t)n->mbox, SHM_ACTOR_STOPPING);
		break;
	default:
		break;
	}
}

static int
reap_once(struct actord *ad, pid_t pid)
{
	unsigned released = 0;
	int rc;

	rc = shm_reap(ad->arena, pid, &released);
	if (rc > 0 || released > 0)
		log_debug("arena: pid %d: %d producer slots freed, %u claims "
		    "released", (int)pid, rc, released);
	return rc;
}

/*
 * Producer slots whose process is gone (a worker wrote a pid there, or a
 * process actord never reaps, a worker's child, died): free again, or
 * the slots run out and no worker can attach.  A few at every reap, in
 * turn, so that a reap costs the same whatever the number of slots.
 */
static void
sweep(struct actord *ad)
{
	unsigned released = 0;
	int n;

	if ((n = shm_sweep_some(ad->arena, SWEEP_SLOTS, &released)) > 0)
		log_info("arena: %d producer slots of processes that are gone "
		    "freed, %u claims released", n, released);
}

/*
 * A mailbox nobody consumes now, made usable again whatever a worker
 * wrote in it (shm_mailbox_repair); what that cost is logged.
 */
static void
repair(struct actord *ad, int32_t idx, const char *who)
{
	struct shm_repair r;

	if (idx < 0 || shm_mailbox_repair(ad->arena, (uint32_t)idx, &r) <= 0)
		return;
	log_warnx("%s: mailbox repaired: %u ends moved back, %u claims "
	    "nobody owned released, %u cells reset; %u messages lost (dead "
	    "letters \"garbled\")", who, r.ends, r.released, r.reset, r.lost);
}

/*
 * Every reaped pid: its claims are released; an actor's death is handled
 * by libactor (actor_reaped: incarnation, in-hand message, on_down,
 * Terminated to its watchers), and then its mailbox is repaired before
 * its next incarnation starts.  actord's own is looked at too: between
 * two of its receives, nothing of it is in flight; and its doorbell is
 * armed again (asks_rearm), for the worker may have cleared that too.
 */
void
mailboxes_reaped(struct actord *ad, pid_t pid, int wstatus, struct node *n)
{
	int rc;

	if (ad->arena == NULL)
		return;
	if (n != NULL && n->mbox >= 0) {
		rc = actor_reaped(ad->arena, (uint32_t)n->mbox, pid, wstatus,
		    owed_list(ad)) == ACTOR_EAGAIN ? SHM_EAGAIN : 0;
		repair(ad, n->mbox, n->path);
		owed_later(ad);
	} else
		rc = reap_once(ad, pid);
	sweep(ad);
	repair(ad, ad->self_mbox, "actord");
	self_restore(ad);
	asks_rearm(ad);
	if (rc == SHM_EAGAIN)
		reap_later(ad, pid);
}

/*
 * An ambiguous claim (a live producer records the same cell): the pid is
 * tried again, 5 ms later and then twice as late each time up to a
 * second, until its slots are free: never given up, since a slot left
 * dead is a producer slot lost for good and perhaps a lane left wedged.
 * A retry that lasts is logged.  Room for the next retry is reserved
 * ahead, so that running out of memory is said when it happens, and a
 * retry already due is never the one lost.
 */
static void
reap_later(struct actord *ad, pid_t pid)
{
	struct reap_retry *r;
	size_t cap;

	if (ad->nreap_pending == ad->reap_cap) {
		log_warnx("arena: pid %d: out of memory for its reap retry: "
		    "its producer slots stay taken", (int)pid);
		return;
	}
	r = &ad->reap_pending[ad->nreap_pending++];
	r->pid = pid;
	r->tries = 0;
	r->due = now_ms() + reap_delay(0);
	reap_arm(ad);
	if (ad->nreap_pending < ad->reap_cap)
		return;
	cap = ad->reap_cap * 2;
	if ((r = reallocarray(ad->reap_pending, cap, sizeof(*r))) == NULL) {
		log_warn("arena: room for reap retries after pid %d",
		    (int)pid);
		return;
	}
	ad->reap_pending = r;
	ad->reap_cap = cap;
}

static uint64_t
reap_delay(unsigned tries)
{
	uint64_t ms = REAP_RETRY_MS;

	while (tries-- > 0 && ms < REAP_RETRY_MAX_MS)
		ms *= 2;
	return ms < REAP_RETRY_MAX_MS ? ms : REAP_RETRY_MAX_MS;
}

/* The retry timer at the earliest due retry, or off. */
static void
reap_arm(struct actord *ad)
{
	uint64_t when = 0;
	size_t i;

	for (i = 0; i < ad->nreap_pending; i++)
		if (when == 0 || ad->reap_pending[i].due < when)
			when = ad->reap_pending[i].due;
	if (when == 0)
		timer_cancel(&ad->loop, &ad->reap_timer);
	else
		timer_at(&ad->loop, &ad->reap_timer, when);
}

/*
 * actord's owed list, capped at owed_max as the configuration says now
 * (a reload may change it): what is owed over the cap becomes a dead
 * letter "owed list full" at once (worker/owed.c), so that a recipient
 * that stopped reading never makes actord block or grow.
 */
static struct actor_owed **
owed_list(struct actord *ad)
{
	(void)actor_owed_init(&ad->owed, ad->spec->owed_max);
	return &ad->owed;
}

/*
 * Terminated owed to watchers with a full system lane: offer them again
 * in 5 ms, and then twice as late each time none of them went out (up to
 * 100 ms), so that a watcher stuck in a handler costs actord little.
 * Messages dead-lettered over the cap since the last look are logged.
 */
static void
owed_later(struct actord *ad)
{
	uint64_t over = actor_owed_over(ad->owed);

	if (over != ad->owed_over) {
		log_warnx("arena: %llu Terminated or error answers owed to "
		    "full lanes over owed_max (%u) became dead letters "
		    "\"owed list full\"", (unsigned long long)(over -
		    ad->owed_over), ad->spec->owed_max);
		ad->owed_over = over;
	}
	if (actor_owed_count(ad->owed) > 0 &&
	    !timer_pending(&ad->owed_timer)) {
		log_debug("arena: Terminated messages wait for room on a "
		    "watcher's system lane");
		ad->owed_ms = OWED_RETRY_MS;
		ad->owed_n = INT_MAX;
		timer_after(&ad->loop, &ad->owed_timer, ad->owed_ms);
	}
}

static void
on_owed_retry(void *arg)
{
	struct actord *ad = arg;
	int n = actor_deliver_owed(ad->arena, &ad->owed);

	if (n <= 0)
		return;
	if (n >= ad->owed_n)
		ad->owed_ms = ad->owed_ms * 2 > OWED_RETRY_MAX_MS ?
		    OWED_RETRY_MAX_MS : ad->owed_ms * 2;
	else
		ad->owed_ms = OWED_RETRY_MS;
	ad->owed_n = n;
	timer_after(&ad->loop, &ad->owed_timer, ad->owed_ms);
}

static void
on_reap_retry(void *arg)
{
	struct actord *ad = arg;
	struct reap_retry *r;
	uint64_t now = now_ms();
	size_t i = 0;

	while (i < ad->nreap_pending) {
		r = &ad->reap_pending[i];
		if (r->due > now) {
			i++;
			continue;
		}
		if (reap_once(ad, r->pid) != SHM_EAGAIN) {
			if (r->tries >= REAP_WARN_TRIES)
				log_info("arena: pid %d reaped after %u "
				    "retries", (int)r->pid, r->tries + 1);
			*r = ad->reap_pending[--ad->nreap_pending];
			continue;
		}
		r->tries++;
		if (r->tries % REAP_REWARN_TRIES == REAP_WARN_TRIES)
			log_warnx("arena: pid %d: a claim it left is still "
			    "ambiguous after %u retries; retrying every %d ms",
			    (int)r->pid, r->tries, REAP_RETRY_MAX_MS);
		r->due = now + reap_delay(r->tries);
		i++;
	}
	reap_arm(ad);
}
