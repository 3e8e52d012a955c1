/*
 * sup.c: what a supervisor does when its children start, stop and die:
 * OTP's strategies (one_for_one, one_for_all, rest_for_one), restart types,
 * restart intensity and escalation, backoff, ordered start and reverse
 * ordered stop.  Instances groups are one_for_one supervisors whose
 * children are independent siblings: they stop in parallel, under one kill
 * timer (the group's op_timer), and start in parallel too, at most
 * START_AT_ONCE at a time (unless the group says start = "ordered"), so a
 * group of N starts in about the time of its slowest instance, not N
 * times that.  A supervisor's own children start in order, each after the
 * one before is ready, and stop last first, each after the one after it
 * is down, as OTP's do: a child may depend on an earlier one.  A
 * supervisor that says start = "parallel" has independent children: they
 * start and stop as a group's instances do (sup_parallel), at its boot,
 * in a set restart (one_for_all, rest_for_one) and when it stops.
 *
 * A supervisor decides as supervisor.erl does: when a child dies, fails
 * to start or the supervisor must stop, it computes at once the children
 * affected, as a plan (plan.c): the list to stop (last first) and the
 * list to start (in order), each child named by identity.  Then it runs
 * the plan one step at a time, each step waiting for the completion of
 * the one before (a child stopped, a child ready, the backoff).  A new
 * decision while a plan is in flight merges into it.  one_for_one
 * restarts run per child (each its own backoff timer), beside any plan.
 * A child that dies while it is on a stop list was going down anyway:
 * its death decides nothing.
 *
 * It owns the restart decisions of a supervisor.  It must never touch a
 * process (workers are started and stopped through worker.c) and never
 * change kids itself: edits go through edit.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"
#include "worker/actor.h"

/*
 * Instances of a group starting at once: enough to keep forks, execs and
 * readiness overlapped on a few CPUs, few enough that a starting child's
 * descriptors (readiness pipe, output pipe) never crowd out
 * actord's own, and that one loop turn never forks for long.
 */
#define START_AT_ONCE	32

static void	sup_boot(struct node *);
static void	sup_stop(struct node *);
static void	plan_stop_all(struct node *, enum plan_kind);
static void	plan_restart(struct node *, struct node *, const char *);
static void	restart(struct node *, struct node *, const char *);
static bool	run_step(struct node *);
static bool	stop_step(struct node *);
static bool	start_step(struct node *);
static void	stop_done(struct node *);
static void	start_done(struct node *);
static void	kids_cancel(struct node *, const char *);
static bool	decide(struct node *);
static void	giveup(struct node *, struct node *, const char *);
static uint32_t	next_backoff(struct node *, struct node *);
static void	end_restarting(struct node *);
static void	schedule_restart(struct node *, struct node *);
static void	on_backoff(void *);
static void	on_op_timer(void *);
static bool	stop_kind(enum plan_kind);
static bool	sup_parallel(const struct node *);
static bool	stop_asked(const struct node *, const struct node *);
static void	after_stopped(struct node *, struct node *);
static void	child_started(struct node *, struct node *, bool,
		    const char *);
static void	child_stopped(struct node *, struct node *);
static void	child_exited(struct node *, struct node *, bool,
		    const char *);

void
node_start(struct node *n, enum start_why why)
{
	n->why = why;
	n->manual_stopped = false;
	/* A reload's new spec takes effect at the next start. */
	if (n->pending_cs != NULL && n->after_stop != AFTER_REPLACE) {
		n->cs = n->pending_cs;
		n->pending_cs = NULL;
	}
	/* Every restart counts, whatever decided it (issue 16). */
	if ((why == WHY_PLAN || why == WHY_RESTART) && n->incarnation > 0)
		n->restarts++;
	if (n->kind == NODE_WORKER)
		worker_event(n, WEV_START);
	else
		sup_boot(n);
}

void
node_stop(struct node *n)
{
	end_restarting(n);
	if (n->kind == NODE_WORKER)
		worker_event(n, WEV_STOP);
	else
		sup_stop(n);
}

void
node_started(struct node *n, bool ok, const char *cause)
{
	if (!ok && n->ad->sim_seen != NULL)
		n->ad->sim_seen(n, false, false, n->ad->sim_arg);
	if (n->parent != NULL)
		child_started(n->parent, n, ok, cause);
	else
		actord_root_started(n->ad, ok, cause);
}

void
node_stopped(struct node *n)
{
	if (n->parent != NULL)
		child_stopped(n->parent, n);
	else
		actord_root_stopped(n->ad);
}

void
node_exited(struct node *n, bool clean, const char *cause)
{
	if (n->ad->sim_seen != NULL)
		n->ad->sim_seen(n, true, clean, n->ad->sim_arg);
	if (n->parent != NULL)
		child_exited(n->parent, n, clean, cause);
	else
		actord_root_exited(n->ad, cause);
}

size_t
sup_decisions_in_period(struct node *s)
{
	if (s->ss == NULL)
		return 0;
	s->ndecisions = window_prune(s->decisions, s->ndecisions,
	    loop_now(&s->ad->loop),
	    (uint64_t)s->ss->period * 1000);
	return s->ndecisions;
}

/*
 * Are s's children independent siblings, started (and stopped) all at
 * once?  A group's instances unless it says start = "ordered"; a
 * supervisor's children if it says start = "parallel".
 */
static bool
sup_parallel(const struct node *s)
{
	if (s->kind == NODE_GROUP)
		return s->cs != NULL && s->cs->start == START_PARALLEL;
	return s->ss != NULL && s->ss->start == START_PARALLEL;
}

static bool
stop_kind(enum plan_kind k)
{
	return k == PLAN_STOP || k == PLAN_BOOTFAIL || k == PLAN_GIVEUP;
}

/*
 * c was asked to go down: by its supervisor's plan, by hand, or by a
 * reload.  OTP's terminate_child decides nothing whatever the death.
 */
static bool
stop_asked(const struct node *s, const struct node *c)
{
	return stop_kind(s->plan.kind) || plan_has(&s->plan.stop, c) ||
	    c->manual_stopped || c->after_stop != AFTER_NONE;
}

/* --- what the API asks of a supervisor (api.c, reload.c) -------------------- */

/* s is stopping everything: nothing it stops starts again. */
bool
sup_stopping(const struct node *s)
{
	return stop_kind(s->plan.kind);
}

/* A child of s may be started now (by hand, or as new). */
bool
sup_can_start(const struct node *s)
{
	if (s->ad->shutting_down || stop_kind(s->plan.kind))
		return false;
	return s->state == NS_RUNNING || s->plan.kind == PLAN_BOOT ||
	    s->plan.kind == PLAN_RESTART;
}

/* c waits in its supervisor's plan to be started. */
bool
sup_will_start(const struct node *c)
{
	const struct plan *p;

	if (c->parent == NULL)
		return false;
	p = &c->parent->plan;
	return (p->kind == PLAN_BOOT || p->kind == PLAN_RESTART) &&
	    plan_has(&p->start, c);
}

/*
 * c is in a restart loop: waiting out its backoff, in a one_for_one
 * restart, or part of a set restart in flight.  actorctl says
 * "restarting" for all of them.
 */
bool
sup_in_loop(const struct node *c)
{
	const struct plan *p;

	if (c->state == NS_RESTARTING ||
	    (c->state == NS_STARTING && c->why == WHY_RESTART))
		return true;
	if (c->parent == NULL)
		return false;
	p = &c->parent->plan;
	return p->kind == PLAN_RESTART && (plan_has(&p->start, c) ||
	    plan_has(&p->stop, c));
}

/*
 * End c's restart loop for good (a stop by hand, a reload): no backoff
 * left, and no plan of its supervisor starts it again.  The plan does not
 * run here: the caller acts on c first (running it could decide a set
 * restart that stops and removes c under the caller), then calls
 * sup_resume on c's supervisor.
 */
void
sup_end_loop(struct node *c)
{
	end_restarting(c);
	if (c->parent != NULL)
		plan_del(&c->parent->plan.start, c);
}

/*
 * s's plan goes on after a call acted on one of its children, unless what
 * the call set off took s itself out of the tree.
 */
void
sup_resume(struct node *s)
{
	if (s != NULL && !s->gone && s->plan.kind != PLAN_NONE)
		sup_run(s);
}

/* A stop that worker.c makes for a group is timed by the group. */
bool
sup_times_stop(const struct node *n)
{
	return n->parent != NULL && n->parent->kind == NODE_GROUP &&
	    n->parent->plan.in_stop;
}

/*
 * k is new under its supervisor (a reload, a rebuilt group): started as
 * the supervisor's state wants.  Returns whether it will be started.
 */
bool
sup_adopt(struct node *k)
{
	struct node *s = k->parent;

	if (s->ad->shutting_down)
		return false;
	if (s->plan.kind == PLAN_BOOT || s->plan.kind == PLAN_RESTART) {
		plan_add(&s->plan.start, k);
		plan_sort(&s->plan.start, false);
		sup_run(s);
		return true;
	}
	if (s->plan.kind == PLAN_NONE && s->state == NS_RUNNING) {
		node_start(k, WHY_MANUAL);
		return true;
	}
	return false;
}

/* --- running a plan ------------------------------------------------------------ */

/*
 * Run s's plan as far as it goes without waiting.  Completions re-enter
 * from the stops and starts it makes; the flags turn that into a loop.
 */
void
sup_run(struct node *s)
{
	struct plan *p = &s->plan;

	if (s->ad->plans_held) {
		p->held = true;
		return;
	}
	if (p->in_run) {
		p->run_again = true;
		return;
	}
	p->in_run = true;
	do {
		p->run_again = false;
		while (p->kind != PLAN_NONE && run_step(s))
			;
	} while (p->run_again);
	p->in_run = false;
}

/*
 * A reload holds every plan while it applies the new spec, as OTP's
 * supervisor changes its specs in one step: a plan that ran in the middle
 * would decide with half of it (a strategy new, a child's restart type
 * still old).  Once the spec is in, the plans asked to run meanwhile run,
 * one at a time, since each may change the tree.
 */
void
sup_hold(struct actord *ad)
{
	ad->plans_held = true;
}

void
sup_release(struct actord *ad)
{
	struct node *n;

	ad->plans_held = false;
	for (;;) {
		for (n = ad->all; n != NULL && !n->plan.held; n = n->next_all)
			;
		if (n == NULL)
			return;
		n->plan.held = false;
		if (n->plan.kind != PLAN_NONE)
			sup_run(n);
	}
}

/* One step; true when something changed and the plan may go on. */
static bool
run_step(struct node *s)
{
	switch (s->plan.phase) {
	case PH_STOP:
		return stop_step(s);
	case PH_START:
		return start_step(s);
	case PH_WAIT:
	default:
		return false;
	}
}

/*
 * Stop the children of the stop list, last first: one at a time, each
 * after the one before is down, or (parallel) all at once.  Each call
 * costs O(1) over time: the list's head moves past the children down, and
 * a parallel stop goes on from where it left (scan) to ask the others.
 */
static bool
stop_step(struct node *s)
{
	struct plan *p = &s->plan;
	struct plan_list *l = &p->stop;
	struct node *c;
	size_t i;

	plan_tidy(l);
	i = plan_next(l, p->parallel && l->scan > l->first ? l->scan :
	    l->first);
	for (; i < l->n; i = plan_next(l, i + 1)) {
		c = l->v[i].n;
		if (!plan_ref_live(&l->v[i]) || node_is_down(c)) {
			plan_del_at(l, i);
			continue;
		}
		if (c->state != NS_STOPPING) {
			l->scan = i + 1;
			p->in_stop = true;
			node_stop(c);
			p->in_stop = false;
			return true;
		}
		if (!p->parallel)
			return false;	/* the one before is not down yet */
		l->scan = i + 1;
	}
	/* Every child asked (parallel): those down leave from the head. */
	for (i = l->first; i < l->n; i = plan_next(l, i + 1)) {
		c = l->v[i].n;
		if (plan_ref_live(&l->v[i]) && !node_is_down(c))
			break;
		plan_del_at(l, i);
	}
	if (plan_count(l) == 0) {
		stop_done(s);
		return true;
	}
	c = l->v[l->first].n;
	if (c->state != NS_STOPPING) {	/* asked, and up again: ask again */
		p->in_stop = true;
		node_stop(c);
		p->in_stop = false;
		return true;
	}
	/* A group's instances stop in parallel under one timer. */
	if (p->parallel && s->kind == NODE_GROUP && s->cs->shutdown >= 0 &&
	    !timer_pending(&s->op_timer))
		timer_after(&s->ad->loop, &s->op_timer,
		    (uint64_t)s->cs->shutdown);
	return false;
}

/*
 * Start the children of the start list in order: one at a time, each
 * after the one before is running, or (parallel) START_AT_ONCE at a time.
 */
static bool
start_step(struct node *s)
{
	struct plan *p = &s->plan;
	struct plan_list *l = &p->start;
	struct node *c;
	size_t i, starting = 0;

	plan_tidy(l);
	for (i = l->first; i < l->n; i = plan_next(l, i + 1)) {
		c = l->v[i].n;
		if (!plan_ref_live(&l->v[i]) || c->state == NS_RUNNING ||
		    (p->kind == PLAN_BOOT && timer_pending(&c->backoff))) {
			/* Up, or (it ran and died) its own restart is due. */
			plan_del_at(l, i);
			continue;
		}
		if (c->state == NS_STARTING || c->state == NS_STOPPING)
			starting++;
		else if (starting < START_AT_ONCE) {
			node_start(c, WHY_PLAN);
			return true;
		}
		if (!p->parallel || starting >= START_AT_ONCE)
			break;
	}
	if (starting > 0)
		return false;
	start_done(s);
	return true;
}

/* Every child of a boot or a restart runs: so does s. */
static void
start_done(struct node *s)
{
	bool report = s->plan.report;

	plan_clear(&s->plan);
	s->state = NS_RUNNING;
	if (s->started_ms == 0)
		s->started_ms = loop_now(&s->ad->loop);
	if (report) {
		s->started_at = time(NULL);
		log_debug("%s: running", s->path);
		node_started(s, true, NULL);
	}
}

/* The stop list is done: what comes next depends on the plan's kind. */
static void
stop_done(struct node *s)
{
	struct plan *p = &s->plan;
	bool report = p->report;
	uint32_t delay;
	size_t i;

	timer_cancel(&s->ad->loop, &s->op_timer);	/* a group's kill timer */
	switch (p->kind) {
	case PLAN_STOP:
		plan_clear(p);
		s->state = NS_STOPPED;
		s->started_ms = 0;
		log_debug("%s: stopped", s->path);
		kids_cancel(s, "its supervisor stopped");
		node_stopped(s);
		break;
	case PLAN_BOOTFAIL:
		plan_clear(p);
		s->state = NS_FAILED;
		snprintf(s->last_exit, sizeof(s->last_exit), "%s", s->cause);
		kids_cancel(s, "its supervisor failed to start");
		node_started(s, false, s->cause);
		break;
	case PLAN_GIVEUP:
		plan_clear(p);
		s->state = NS_FAILED;
		s->started_ms = 0;
		snprintf(s->last_exit, sizeof(s->last_exit), "gave up: %s",
		    s->cause);
		kids_cancel(s, "its supervisor gave up");
		mailboxes_gone(s, ACTOR_GONE_GAVE_UP);
		if (report)	/* its parent still waits for the start */
			node_started(s, false, s->last_exit);
		else
			node_exited(s, false, s->last_exit);
		break;
	case PLAN_RESTART:
		if (plan_count(&p->start) == 0) {
			start_done(s);
			break;
		}
		for (i = plan_next(&p->start, p->start.first); i < p->start.n;
		    i = plan_next(&p->start, i + 1))
			if (node_is_down(p->start.v[i].n))
				p->start.v[i].n->state = NS_RESTARTING;
		delay = next_backoff(s, plan_ref_live(&p->trigger) ?
		    p->trigger.n : NULL);
		p->phase = PH_WAIT;
		log_info("%s: restarting %zu children in %u ms", s->path,
		    plan_count(&p->start), delay);
		timer_after(&s->ad->loop, &s->op_timer, delay);
		break;
	default:
		break;
	}
}

/* s stopped for good: what its children owed to callers is cancelled. */
static void
kids_cancel(struct node *s, const char *why)
{
	size_t i;

	for (i = 0; i < s->nkids; i++)
		api_settle(s->kids[i], true, ECANCELED, why);
}

static void
on_op_timer(void *arg)
{
	struct node *s = arg;
	size_t i;

	/* A group's shutdown time is up: SIGKILL to the instances left. */
	if (s->kind == NODE_GROUP && s->plan.phase == PH_STOP) {
		for (i = 0; i < s->nkids; i++)
			if (s->kids[i]->state == NS_STOPPING)
				worker_event(s->kids[i], WEV_TIMER);
		return;
	}
	if (s->plan.kind != PLAN_RESTART || s->plan.phase != PH_WAIT)
		return;
	s->plan.phase = PH_START;
	sup_run(s);
}

/* --- decisions ----------------------------------------------------------------- */

static void
sup_boot(struct node *s)
{
	struct plan *p = &s->plan;
	size_t i;

	if (s->op_timer.fn == NULL)
		timer_init(&s->op_timer, on_op_timer, s);
	timer_cancel(&s->ad->loop, &s->op_timer);
	s->state = NS_STARTING;
	s->cause[0] = '\0';
	s->started_ms = 0;
	s->ndecisions = 0;	/* a new incarnation has a fresh history */
	s->incarnation++;
	plan_clear(p);
	p->kind = PLAN_BOOT;
	p->phase = PH_START;
	p->report = true;
	/* Independent children: all at once (top of file). */
	p->parallel = sup_parallel(s);
	for (i = 0; i < s->nkids; i++)
		plan_add(&p->start, s->kids[i]);
	log_debug("%s: starting %zu children", s->path, s->nkids);
	sup_run(s);
}

static void
sup_stop(struct node *s)
{
	if (s->op_timer.fn == NULL)
		timer_init(&s->op_timer, on_op_timer, s);
	if (node_is_down(s) && s->plan.kind == PLAN_NONE) {
		node_stopped(s);
		return;
	}
	s->plan.report = false;		/* whoever stops it waits for that */
	plan_stop_all(s, PLAN_STOP);
}

/*
 * Stop every child, last first (a group's all at once), then end as kind
 * says (stopped, failed to start, gave up).  report is the caller's.
 */
static void
plan_stop_all(struct node *s, enum plan_kind kind)
{
	struct plan *p = &s->plan;
	struct node *c;
	size_t i;

	timer_cancel(&s->ad->loop, &s->op_timer);
	p->kind = kind;
	p->phase = PH_STOP;
	plan_list_clear(&p->stop);
	plan_list_clear(&p->start);
	p->parallel = s->kind == NODE_GROUP || sup_parallel(s);
	for (i = s->nkids; i-- > 0;) {
		c = s->kids[i];
		end_restarting(c);
		if (!node_is_down(c))
			plan_add(&p->stop, c);
	}
	s->state = NS_STOPPING;
	sup_run(s);
}

/*
 * one_for_all / rest_for_one: c died or failed to start.  The set is
 * every child (one_for_all) or c and those after it (rest_for_one), as
 * supervisor.erl computes it; it merges with a plan in flight (a boot, a
 * restart): what is up in the set is stopped, last first, then the set
 * is started in order after c's backoff.  A temporary child of the set
 * is stopped and removed, never started again.
 */
static void
plan_restart(struct node *s, struct node *c, const char *cause)
{
	struct plan *p = &s->plan;
	struct node *k;
	size_t i, from;

	from = s->ss->strategy == STRATEGY_ONE_FOR_ALL ? 0 : node_index(c);
	if (p->kind == PLAN_NONE)
		p->report = false;
	/* A death during a boot: the boot ends with the restart. */
	p->kind = PLAN_RESTART;
	p->phase = PH_STOP;
	p->parallel = sup_parallel(s);
	timer_cancel(&s->ad->loop, &s->op_timer);
	for (i = from; i < s->nkids; i++) {
		k = s->kids[i];
		end_restarting(k);	/* a one_for_one backoff of before */
		if (!node_is_down(k))
			plan_add(&p->stop, k);
		if (k->cs != NULL && k->cs->restart == RESTART_TEMPORARY) {
			if (node_is_down(k))
				continue;
			k->after_stop = AFTER_REMOVE;
		}
		if (k->after_stop == AFTER_REMOVE ||
		    k->after_stop == AFTER_REPLACE)
			continue;	/* on its way out */
		plan_add(&p->start, k);
	}
	plan_sort(&p->start, false);
	plan_sort(&p->stop, true);
	p->trigger.n = c;
	p->trigger.id = c->id;
	snprintf(p->why, sizeof(p->why), "%s %.200s", c->path, cause);
	sup_run(s);
}

/*
 * OTP's intensity rule: a decision is allowed while the decisions within
 * the last period, this one included, number at most intensity.
 */
static bool
decide(struct node *s)
{
	uint64_t now = loop_now(&s->ad->loop), *d;

	s->ndecisions = window_prune(s->decisions, s->ndecisions, now,
	    (uint64_t)s->ss->period * 1000);
	if (s->ndecisions + 1 > s->ss->intensity)
		return false;
	/* Sized by intensity, which a reload may raise. */
	if (s->decisions_cap < (size_t)s->ss->intensity + 1) {
		d = reallocarray(s->decisions, (size_t)s->ss->intensity + 1,
		    sizeof(*d));
		if (d == NULL)
			fatal("%s: reallocarray", __func__);
		s->decisions = d;
		s->decisions_cap = (size_t)s->ss->intensity + 1;
	}
	s->decisions[s->ndecisions++] = now;
	return true;
}

static void
giveup(struct node *s, struct node *c, const char *cause)
{
	snprintf(s->cause, sizeof(s->cause),
	    "%s %.200s; more than %u restarts in %u s", c->path, cause,
	    s->ss->intensity, s->ss->period);
	log_warnx("%s: giving up: %s", s->path, s->cause);
	/* Its parent may still wait for the start: report says so. */
	plan_stop_all(s, PLAN_GIVEUP);
}

/* The backoff before c's next restart (c NULL: the first one). */
static uint32_t
next_backoff(struct node *s, struct node *c)
{
	uint32_t delay;

	delay = backoff_delay(s->ss->backoff_min, s->ss->backoff_max,
	    c != NULL ? c->backoff_attempt : 0, rng_next(&s->ad->rng));
	if (c != NULL && c->backoff_attempt < 32)
		c->backoff_attempt++;
	return delay;
}

/* No backoff left for c: a node waiting for a restart is just stopped. */
static void
end_restarting(struct node *c)
{
	if (timer_pending(&c->backoff))
		timer_cancel(&c->ad->loop, &c->backoff);
	if (c->state == NS_RESTARTING)
		c->state = NS_STOPPED;
}

static void
schedule_restart(struct node *s, struct node *c)
{
	uint32_t delay = next_backoff(s, c);

	if (c->backoff.fn == NULL)
		timer_init(&c->backoff, on_backoff, c);
	c->state = NS_RESTARTING;
	log_info("%s: restarting in %u ms", c->path, delay);
	timer_after(&s->ad->loop, &c->backoff, delay);
}

static void
on_backoff(void *arg)
{
	struct node *c = arg;

	if (c->state != NS_RESTARTING)
		return;
	node_start(c, WHY_RESTART);
}

/* --- completions from children -------------------------------------------------- */

static void
child_started(struct node *s, struct node *c, bool ok, const char *cause)
{
	struct plan *p = &s->plan;
	enum start_why why = c->why;
	char failed[sizeof(c->last_exit) + 32];

	c->why = WHY_NONE;
	if (!ok && stop_asked(s, c)) {
		/*
		 * A start that failed while a stop was asked (a start
		 * timeout's kill, then a stop): the stop is done (the node
		 * stays failed, saying why), and what was to follow it (a
		 * restart by hand, a removal) follows.
		 */
		c->adding = false;
		child_stopped(s, c);
		return;
	}
	snprintf(failed, sizeof(failed), "failed to start: %s",
	    cause != NULL ? cause : "?");
	api_settle(c, true, ok ? 0 : EIO, ok ? NULL : cause);
	if (stop_kind(p->kind)) {
		sup_run(s);		/* it goes down with the others */
		return;
	}
	if (why == WHY_MANUAL && !ok) {
		/* A failed start by hand leaves it stopped: no retry loop. */
		if (c->state == NS_FAILED)
			c->state = NS_STOPPED;
		c->manual_stopped = true;
		if (c->adding) {	/* OTP's start_child adds nothing */
			log_info("%s: not added", c->path);
			edit_remove(c);
			return;
		}
	}
	c->adding = false;
	if (!ok && why == WHY_PLAN && p->kind == PLAN_BOOT) {
		/* OTP: a child that fails to start fails its supervisor. */
		snprintf(s->cause, sizeof(s->cause), "%s: %s", c->path, cause);
		plan_stop_all(s, PLAN_BOOTFAIL);
		return;
	}
	if (!ok && (why == WHY_RESTART || (why == WHY_PLAN &&
	    p->kind == PLAN_RESTART))) {
		/* A restart whose start fails counts, and is retried. */
		if (!decide(s)) {
			giveup(s, c, failed);
			return;
		}
		restart(s, c, failed);
		return;
	}
	if (p->kind != PLAN_NONE)
		sup_run(s);
}

static void
child_stopped(struct node *s, struct node *c)
{
	struct plan *p = &s->plan;

	/* A sibling stopped by a set restart: LAST EXIT says why. */
	if (p->kind == PLAN_RESTART && plan_has(&p->stop, c) &&
	    p->why[0] != '\0')
		snprintf(c->last_exit, sizeof(c->last_exit), "sibling %s",
		    p->why);
	after_stopped(s, c);
	if (p->kind != PLAN_NONE)
		sup_run(s);
}

/* c is down after a stop: what the API or a reload wanted next. */
static void
after_stopped(struct node *s, struct node *c)
{
	enum after_stop next = c->after_stop;

	c->after_stop = AFTER_NONE;
	api_settle(c, false, 0, NULL);
	switch (next) {
	case AFTER_REMOVE:
		log_info("%s: removed", c->path);
		edit_remove(c);
		return;
	case AFTER_REPLACE:
		edit_replace(c);
		return;
	case AFTER_START:
		if (sup_will_start(c))
			return;		/* its supervisor's plan starts it */
		if (sup_can_start(s)) {
			node_start(c, WHY_MANUAL);
			return;
		}
		api_settle(c, true, ECANCELED, "its supervisor is stopping");
		return;
	case AFTER_NONE:
	default:
		if (!sup_will_start(c))
			api_settle(c, true, ECANCELED, "stopped");
		return;
	}
}

static void
child_exited(struct node *s, struct node *c, bool clean, const char *cause)
{
	struct plan *p = &s->plan;
	bool want;

	if (stop_asked(s, c)) {
		/* It was going down anyway (a supervisor giving up). */
		c->started_ms = 0;
		after_stopped(s, c);
		sup_run(s);
		return;
	}
	/* Backoff starts over after the child stayed up min_uptime. */
	if (c->started_ms != 0 &&
	    loop_now(&s->ad->loop) - c->started_ms >= s->ss->min_uptime)
		c->backoff_attempt = 0;
	c->started_ms = 0;
	/*
	 * A supervisor that gave up is abnormal: restarted if permanent or
	 * transient, removed if temporary (OTP never restarts those).
	 */
	want = restart_wanted(c->cs->restart, c->kind == NODE_WORKER ? clean :
	    false);
	if (!want) {
		mailboxes_gone(c, ACTOR_GONE_EXITED);
		if (c->cs->restart == RESTART_TEMPORARY) {
			log_info("%s: temporary, %s, removed", c->path, cause);
			api_cancel(c, "removed");
			edit_remove(c);
			return;
		}
		api_settle(c, true, ECANCELED, cause);
		if (p->kind != PLAN_NONE)
			sup_run(s);
		return;
	}
	if (!decide(s)) {
		giveup(s, c, cause);
		return;
	}
	restart(s, c, cause);
}

/*
 * A decided restart of c, by the strategy s has now (a reload may have
 * changed it since c's loop began): c alone after its backoff, or a set.
 */
static void
restart(struct node *s, struct node *c, const char *cause)
{
	if (s->kind == NODE_GROUP || s->ss->strategy == STRATEGY_ONE_FOR_ONE) {
		plan_del(&s->plan.start, c);
		schedule_restart(s, c);
		if (s->plan.kind != PLAN_NONE)
			sup_run(s);
	} else {
		end_restarting(c);
		plan_restart(s, c, cause);
	}
}
