/*
 * mailboxes.c: actord's side of the shared-memory arena (shm/shm.h): the
 * layout computed from the tree's mailbox specs, the arena created before
 * anything is forked, the actor table kept true at spawn, readiness, stop
 * and reap, and shm_reap() for every pid actord reaps.
 *
 * It owns the arena handle of the daemon and the mailbox index of each
 * node.  The arena's size is fixed at creation (sealed): a node that
 * appears later (reload, actorctl add) gets no mailbox, and says so.  It
 * must never read or write messages: that is libactor's business.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm.h"
#include "supervisor/actord.h"
#include "worker/actor.h"
#include "supervisor/log.h"

#define SYS_LANE_CELLS		16
#define REPLY_LANE_CELLS	64
#define DEAD_LETTERS		1024
#define REAP_RETRY_MS		5
#define REAP_RETRIES		200	/* a second of ambiguous claims at most */

static uint32_t	pow2_at_least(uint32_t);
static void	on_reap_retry(void *);
static bool	wants_mailbox(const struct node *);
static int	reap_once(struct actord *, pid_t);

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

/* Build the layout from the tree, create the arena, name its actors. */
int
mailboxes_setup(struct actord *ad, char *err, size_t errlen)
{
	struct shm_mailbox_layout *mb = NULL;
	struct shm_layout l;
	struct node *n;
	uint32_t count = 0, i;
	const struct mailbox_spec *ms;
	int rc;

	for (n = ad->all; n != NULL; n = n->next_all)
		if (wants_mailbox(n))
			count++;
	if (count > 0 && (mb = calloc(count, sizeof(*mb))) == NULL) {
		snprintf(err, errlen, "arena layout: %s", strerror(errno));
		return -1;
	}
	/* ad->all is newest first: number in tree order, from the end. */
	i = count;
	for (n = ad->all; n != NULL; n = n->next_all) {
		if (!wants_mailbox(n))
			continue;
		n->mbox = (int32_t)--i;
		ms = &n->cs->mailbox;
		mb[i].capacity = pow2_at_least(ms->capacity);
		mb[i].cell = (ms->cell + 63) / 64 * 64;
		if (mb[i].cell < SHM_CELL_MIN)
			mb[i].cell = SHM_CELL_MIN;
		mb[i].sys_capacity = SYS_LANE_CELLS;
		/* Room for an answer to each ask a full mailbox can hold. */
		mb[i].reply_capacity = pow2_at_least(ms->capacity >
		    REPLY_LANE_CELLS ? ms->capacity : REPLY_LANE_CELLS);
		mb[i].overflow = (enum shm_overflow)ms->overflow;
		mb[i].block_timeout_ms = ms->block_timeout;
		/* libactor's region: policies, watchers, two snapshots. */
		mb[i].state_size = (uint32_t)actor_region_size(ms->state);
	}
	memset(&l, 0, sizeof(l));
	l.nmailboxes = count;
	l.mailboxes = mb;
	l.nproducers = count * 4 + 64 > SHM_MAX_PRODUCERS ?
	    SHM_MAX_PRODUCERS : count * 4 + 64;
	l.dl_capacity = DEAD_LETTERS;
	rc = shm_create(&l, "actord", &ad->arena, err, errlen);
	free(mb);
	if (rc < 0)
		return -1;
	ad->arena_fd = shm_fd(ad->arena);
	for (n = ad->all; n != NULL; n = n->next_all) {
		struct actor_policy pol;

		if (n->mbox < 0)
			continue;
		if (shm_actor_set_path(ad->arena, (uint32_t)n->mbox, n->path) < 0)
			log_warnx("%s: cannot name its mailbox", n->path);
		pol.max_attempts = n->cs->mailbox.max_attempts;
		pol.on_down = (enum actor_on_down)n->cs->mailbox.on_down;
		pol.while_down = (enum actor_while_down)
		    n->cs->mailbox.while_down;
		if (actor_configure(ad->arena, (uint32_t)n->mbox, &pol) < 0)
			log_warnx("%s: cannot configure its mailbox", n->path);
	}
	timer_init(&ad->reap_timer, on_reap_retry, ad);
	log_debug("arena: %u mailboxes, %zu bytes", count, shm_size(ad->arena));
	return 0;
}

void
mailboxes_close(struct actord *ad)
{
	if (ad->arena == NULL)
		return;
	timer_cancel(&ad->loop, &ad->reap_timer);
	free(ad->reap_pending);
	ad->reap_pending = NULL;
	ad->nreap_pending = 0;
	shm_detach(ad->arena);
	ad->arena = NULL;
	ad->arena_fd = -1;
}

/* Before fork: the arena's next incarnation, and the table says starting. */
void
mailboxes_prespawn(struct node *n)
{
	struct shm_arena *a = n->ad->arena;

	if (a == NULL)
		return;
	if (n->mbox < 0) {
		if (wants_mailbox(n) && n->incarnation == 1)
			log_warnx("%s: added after the arena was sized: no "
			    "mailbox", n->path);
		return;
	}
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
 * Every reaped pid: its claims are released; an actor's death is handled
 * by libactor (actor_reaped: incarnation, in-hand message, on_down,
 * Terminated to its watchers).
 */
void
mailboxes_reaped(struct actord *ad, pid_t pid, int wstatus, struct node *n)
{
	struct reap_retry *r;
	int rc;

	if (ad->arena == NULL)
		return;
	if (n != NULL && n->mbox >= 0)
		rc = actor_reaped(ad->arena, (uint32_t)n->mbox, pid, wstatus)
		    == ACTOR_EAGAIN ? SHM_EAGAIN : 0;
	else
		rc = reap_once(ad, pid);
	if (rc != SHM_EAGAIN)
		return;
	/* An ambiguous claim: try again a little later, a bounded number. */
	r = reallocarray(ad->reap_pending, ad->nreap_pending + 1, sizeof(*r));
	if (r == NULL)
		return;
	ad->reap_pending = r;
	r[ad->nreap_pending].pid = pid;
	r[ad->nreap_pending].tries = 0;
	ad->nreap_pending++;
	if (!timer_pending(&ad->reap_timer))
		timer_after(&ad->loop, &ad->reap_timer, REAP_RETRY_MS);
}

static void
on_reap_retry(void *arg)
{
	struct actord *ad = arg;
	size_t i = 0;

	while (i < ad->nreap_pending) {
		struct reap_retry *r = &ad->reap_pending[i];

		if (reap_once(ad, r->pid) == SHM_EAGAIN &&
		    ++r->tries < REAP_RETRIES) {
			i++;
			continue;
		}
		*r = ad->reap_pending[--ad->nreap_pending];
	}
	if (ad->nreap_pending > 0)
		timer_after(&ad->loop, &ad->reap_timer, REAP_RETRY_MS);
}
