/*
 * sup.c: what a supervisor does when its children start, stop and die:
 * OTP's strategies (one_for_one, one_for_all, rest_for_one), restart types,
 * restart intensity and escalation, backoff, ordered start and reverse
 * ordered stop.  Instances groups are one_for_one supervisors that stop
 * their children in parallel, under one kill timer (the group's op_timer).
 *
 * A supervisor runs at most one operation at a time (boot, a set restart,
 * stop, boot failure, give up), each a short sequence of phases: stop the
 * set one child at a time from the last, wait the backoff, start the set in
 * order, each child after the previous one is ready.  one_for_one restarts
 * run per child, beside that operation.
 *
 * It owns the restart decisions of a supervisor.  It must never touch a
 * process: workers are started and stopped through node_start/node_stop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

static void	sup_boot(struct node *);
static void	sup_stop(struct node *);
static void	boot_next(struct node *);
static void	set_start_next(struct node *);
static void	stop_all(struct node *, enum sup_op);
static void	stop_next(struct node *);
static void	stop_done(struct node *);
static bool	decide(struct node *, struct node *);
static void	giveup(struct node *, struct node *, const char *);
static void	schedule_restart(struct node *, struct node *);
static void	set_restart(struct node *, struct node *);
static void	remove_child(struct node *, struct node *);
static void	on_backoff(void *);
static void	on_op_timer(void *);
static void	sup_child_started(struct node *, struct node *, bool,
		    const char *);
static void	sup_child_stopped(struct node *, struct node *);
static void	sup_child_exited(struct node *, struct node *, bool,
		    const char *);
static bool	in_stop_phase(const struct node *);

void
node_start(struct node *n, enum start_why why)
{
	n->why = why;
	if (n->kind == NODE_WORKER)
		worker_event(n, WEV_START);
	else
		sup_boot(n);
}

void
node_stop(struct node *n)
{
	if (timer_pending(&n->backoff))
		timer_cancel(&n->ad->loop, &n->backoff);
	if (n->state == NS_RESTARTING)
		n->state = NS_STOPPED;
	if (n->kind == NODE_WORKER)
		worker_event(n, WEV_STOP);
	else
		sup_stop(n);
}

void
node_started(struct node *n, bool ok, const char *cause)
{
	if (n->parent != NULL)
		sup_child_started(n->parent, n, ok, cause);
	else
		actord_root_started(n->ad, ok, cause);
}

void
node_stopped(struct node *n)
{
	if (n->parent != NULL)
		sup_child_stopped(n->parent, n);
	else
		actord_root_stopped(n->ad);
}

void
node_exited(struct node *n, bool clean, const char *cause)
{
	if (n->parent != NULL)
		sup_child_exited(n->parent, n, clean, cause);
	else
		actord_root_exited(n->ad, cause);
}

/* Finish an API operation on n: call its completion once. */
void
node_api_done(struct node *n, int error, const char *msg)
{
	done_fn fn = n->done;
	void *arg = n->done_arg;

	n->done = NULL;
	n->done_arg = NULL;
	n->api_restart = false;
	if (fn != NULL)
		fn(arg, error, msg);
}

static bool
in_stop_phase(const struct node *s)
{
	switch (s->op) {
	case OP_STOP:
	case OP_BOOTFAIL:
	case OP_GIVEUP:
		return true;
	case OP_RESTART:
		return s->phase == PH_STOP;
	default:
		return false;
	}
}

size_t
sup_decisions_in_period(struct node *s)
{
	if (s->ss == NULL)
		return 0;
	s->ndecisions = window_prune(s->decisions, s->ndecisions, now_ms(),
	    (uint64_t)s->ss->period * 1000);
	return s->ndecisions;
}

/* --- supervisor operations --------------------------------------------------- */

static void
sup_boot(struct node *s)
{
	if (s->op_timer.fn == NULL)
		timer_init(&s->op_timer, on_op_timer, s);
	timer_cancel(&s->ad->loop, &s->op_timer);
	s->state = NS_STARTING;
	s->op = OP_BOOT;
	s->cursor = 0;
	s->from = 0;
	s->report_start = true;
	s->cause[0] = '\0';
	s->ndecisions = 0;	/* a new incarnation has a fresh history */
	s->incarnation++;
	log_debug("%s: starting %zu children", s->path, s->nkids);
	boot_next(s);
}

static void
boot_next(struct node *s)
{
	struct node *c;

	if (s->cursor >= s->nkids) {
		s->op = OP_NONE;
		s->state = NS_RUNNING;
		s->started_ms = now_ms();
		s->started_at = time(NULL);
		if (s->report_start) {
			s->report_start = false;
			node_started(s, true, NULL);
		}
		return;
	}
	c = s->kids[s->cursor];
	c->manual_stopped = false;
	node_start(c, WHY_BOOT);
}

static void
set_start_next(struct node *s)
{
	struct node *c;

	if (s->cursor >= s->nkids) {
		s->op = OP_NONE;
		s->state = NS_RUNNING;
		if (s->started_ms == 0)
			s->started_ms = now_ms();
		if (s->report_start) {
			s->report_start = false;
			s->started_at = time(NULL);
			node_started(s, true, NULL);
		}
		return;
	}
	c = s->kids[s->cursor];
	/* A sibling stopped by hand is started again with its set. */
	c->manual_stopped = false;
	node_start(c, WHY_SET);
}

static void
sup_stop(struct node *s)
{
	if (s->op_timer.fn == NULL)
		timer_init(&s->op_timer, on_op_timer, s);
	timer_cancel(&s->ad->loop, &s->op_timer);
	if (node_is_down(s) && s->op == OP_NONE) {
		if (s->state == NS_RESTARTING)
			s->state = NS_STOPPED;
		node_stopped(s);
		return;
	}
	s->report_start = false;
	stop_all(s, OP_STOP);
}

/*
 * Begin operation op (stop, give up, boot failure) by stopping every
 * child: s is stopping from here on.  report_start is the caller's.
 */
static void
stop_all(struct node *s, enum sup_op op)
{
	s->op = op;
	s->from = 0;
	s->phase = PH_STOP;
	s->state = NS_STOPPING;
	stop_next(s);
}

/*
 * Stop the children from the last down to s->from, one at a time (each by
 * its own shutdown rule), or all at once in a group.  Re-entered from the
 * completions of the stops it makes; the flags turn that into a loop.
 */
static void
stop_next(struct node *s)
{
	struct node *c;
	size_t i;
	bool busy = false;

	if (s->in_stop_next) {
		s->stop_again = true;
		return;
	}
	s->in_stop_next = true;
	do {
		s->stop_again = false;
		busy = false;
		for (i = s->nkids; i-- > s->from;) {
			if (i >= s->nkids)
				continue;
			c = s->kids[i];
			if (timer_pending(&c->backoff))
				timer_cancel(&s->ad->loop, &c->backoff);
			if (c->state == NS_RESTARTING)
				c->state = NS_STOPPED;
			if (node_is_down(c))
				continue;
			busy = true;
			if (c->state != NS_STOPPING)
				node_stop(c);
			if (s->kind != NODE_GROUP)
				break;
		}
	} while (s->stop_again);
	s->in_stop_next = false;
	/* A group's instances stop in parallel under one timer. */
	if (busy && s->kind == NODE_GROUP && s->cs->shutdown >= 0 &&
	    !timer_pending(&s->op_timer))
		timer_after(&s->ad->loop, &s->op_timer,
		    (uint64_t)s->cs->shutdown);
	if (!busy)
		stop_done(s);
}

static void
stop_done(struct node *s)
{
	struct node *c;
	uint32_t delay;
	size_t i;

	timer_cancel(&s->ad->loop, &s->op_timer);	/* a group's kill timer */
	switch (s->op) {
	case OP_STOP:
		s->op = OP_NONE;
		s->state = NS_STOPPED;
		s->started_ms = 0;
		log_debug("%s: stopped", s->path);
		node_stopped(s);
		break;
	case OP_BOOTFAIL:
		s->op = OP_NONE;
		s->state = NS_FAILED;
		snprintf(s->last_exit, sizeof(s->last_exit), "%s", s->cause);
		node_started(s, false, s->cause);
		break;
	case OP_GIVEUP:
		s->op = OP_NONE;
		s->state = NS_FAILED;
		s->started_ms = 0;
		snprintf(s->last_exit, sizeof(s->last_exit), "gave up: %s",
		    s->cause);
		if (s->giveup_in_boot) {
			s->giveup_in_boot = false;
			node_started(s, false, s->last_exit);
		} else
			node_exited(s, false, s->last_exit);
		break;
	case OP_RESTART:
		c = s->trigger;
		delay = backoff_delay(s->ss->backoff_min, s->ss->backoff_max,
		    c != NULL ? c->backoff_attempt : 0, rng_next(&s->ad->rng));
		if (c != NULL && c->backoff_attempt < 32)
			c->backoff_attempt++;
		s->trigger = NULL;
		/* Temporaries in the set are removed, not restarted. */
		for (i = s->nkids; i-- > s->from;) {
			c = s->kids[i];
			if (c->cs != NULL && c->cs->restart == RESTART_TEMPORARY) {
				log_info("%s: temporary, removed", c->path);
				remove_child(s, c);
			}
		}
		for (i = s->from; i < s->nkids; i++)
			s->kids[i]->state = NS_RESTARTING;
		s->phase = PH_WAIT;
		log_info("%s: restarting %zu children in %u ms", s->path,
		    s->nkids - s->from, delay);
		timer_after(&s->ad->loop, &s->op_timer, delay);
		break;
	default:
		break;
	}
}

static void
on_op_timer(void *arg)
{
	struct node *s = arg;
	size_t i;

	/* A group's shutdown time is up: SIGKILL to the instances left. */
	if (s->kind == NODE_GROUP && in_stop_phase(s)) {
		for (i = 0; i < s->nkids; i++)
			if (s->kids[i]->state == NS_STOPPING)
				worker_event(s->kids[i], WEV_TIMER);
		return;
	}
	if (s->op != OP_RESTART || s->phase != PH_WAIT)
		return;
	s->phase = PH_START;
	s->cursor = s->from;
	set_start_next(s);
}

/*
 * OTP's intensity rule: a decision is allowed while the decisions within
 * the last period, this one included, number at most intensity.
 */
static bool
decide(struct node *s, struct node *c)
{
	uint64_t now = now_ms(), *d;

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
	c->restarts++;
	return true;
}

static void
giveup(struct node *s, struct node *c, const char *cause)
{
	snprintf(s->cause, sizeof(s->cause),
	    "%s %s; more than %u restarts in %u s", c->path, cause,
	    s->ss->intensity, s->ss->period);
	log_warnx("%s: giving up: %s", s->path, s->cause);
	timer_cancel(&s->ad->loop, &s->op_timer);
	/* Its parent still waits for the start: it fails, not exits. */
	s->giveup_in_boot = s->report_start;
	s->report_start = false;
	stop_all(s, OP_GIVEUP);
}

static void
schedule_restart(struct node *s, struct node *c)
{
	uint32_t delay;

	delay = backoff_delay(s->ss->backoff_min, s->ss->backoff_max,
	    c->backoff_attempt, rng_next(&s->ad->rng));
	if (c->backoff_attempt < 32)
		c->backoff_attempt++;
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

/* one_for_all / rest_for_one: stop the set, wait, start it again. */
static void
set_restart(struct node *s, struct node *c)
{
	size_t from;

	from = s->ss->strategy == STRATEGY_ONE_FOR_ALL ? 0 : node_index(c);
	if (s->op == OP_RESTART) {
		if (from < s->from)
			s->from = from;
	} else {
		/* A death during boot: the boot ends with the restart. */
		s->report_start = s->op == OP_BOOT;
		s->from = from;
		s->op = OP_RESTART;
	}
	timer_cancel(&s->ad->loop, &s->op_timer);
	s->trigger = c;
	s->phase = PH_STOP;
	stop_next(s);
}

static void
remove_child(struct node *s, struct node *c)
{
	size_t i = node_index(c);

	if (i < s->cursor)
		s->cursor--;
	if (i < s->from)
		s->from--;
	if (s->trigger == c)
		s->trigger = NULL;
	node_unlink(c);
	node_free(c);
}

/*
 * Put a new node built from n->pending_cs in the place of n (stopped), and
 * start it if its supervisor runs.  Reload rebuilds groups this way.
 */
void
node_replace(struct node *n)
{
	struct node *s = n->parent, *k;
	const struct child_spec *cs = n->pending_cs;
	size_t at = node_index(n);

	n->pending_cs = NULL;
	remove_child(s, n);
	if ((k = node_new_child(s, cs, cs->name)) == NULL ||
	    node_insert(s, k, at) == -1) {
		log_warnx("%s/%s: cannot rebuild", s->parent == NULL ? "" :
		    s->path, cs->name);
		if (k != NULL)
			node_free(k);
		return;
	}
	if (s->state == NS_RUNNING && !s->ad->shutting_down)
		node_start(k, WHY_MANUAL);
}

/* --- completions from children ------------------------------------------------ */

static void
sup_child_started(struct node *s, struct node *c, bool ok, const char *cause)
{
	enum start_why why = c->why;
	char failed[sizeof(c->last_exit) + 32];

	c->why = WHY_NONE;
	snprintf(failed, sizeof(failed), "failed to start: %s",
	    cause != NULL ? cause : "?");
	if (why == WHY_MANUAL) {
		/* A failed start by hand leaves it stopped: no retry loop. */
		if (!ok && c->kind == NODE_WORKER && c->state == NS_FAILED) {
			c->state = NS_STOPPED;
			c->manual_stopped = true;
		}
		node_api_done(c, ok ? 0 : EIO, ok ? NULL : cause);
		if (in_stop_phase(s))
			stop_next(s);
		return;
	}
	if (why == WHY_BOOT && s->op == OP_BOOT && s->cursor < s->nkids &&
	    s->kids[s->cursor] == c) {
		if (ok) {
			s->cursor++;
			boot_next(s);
			return;
		}
		/* OTP: a child that fails to start fails its supervisor. */
		snprintf(s->cause, sizeof(s->cause), "%s: %s", c->path, cause);
		stop_all(s, OP_BOOTFAIL);
		return;
	}
	if (why == WHY_SET && s->op == OP_RESTART && s->phase == PH_START &&
	    s->cursor < s->nkids && s->kids[s->cursor] == c) {
		if (ok) {
			s->cursor++;
			set_start_next(s);
			return;
		}
		/* A restart whose start fails counts, and is retried. */
		if (!decide(s, c)) {
			giveup(s, c, failed);
			return;
		}
		s->trigger = c;
		s->phase = PH_STOP;
		stop_next(s);
		return;
	}
	if (why == WHY_RESTART && s->op != OP_GIVEUP && s->op != OP_STOP &&
	    s->op != OP_BOOTFAIL) {
		if (ok)
			return;
		if (!decide(s, c)) {
			giveup(s, c, failed);
			return;
		}
		schedule_restart(s, c);
		return;
	}
	/* A start that completed while the plan changed: stop in order. */
	if (in_stop_phase(s))
		stop_next(s);
}

static void
sup_child_stopped(struct node *s, struct node *c)
{
	if (c->api_stop) {
		c->api_stop = false;
		c->manual_stopped = true;
		if (c->api_remove) {
			c->api_remove = false;
			node_api_done(c, 0, NULL);
			if (c->pending_cs != NULL)
				node_replace(c);
			else
				remove_child(s, c);
			if (in_stop_phase(s))
				stop_next(s);
			return;
		}
		if (c->api_restart && !in_stop_phase(s) &&
		    s->op != OP_STOP) {
			c->api_restart = false;
			if (c->pending_cs != NULL) {
				c->cs = c->pending_cs;
				c->pending_cs = NULL;
			}
			c->manual_stopped = false;
			node_start(c, WHY_MANUAL);
			return;
		}
		if (c->api_restart)
			node_api_done(c, ECANCELED, "supervisor is stopping");
		else
			node_api_done(c, 0, NULL);
	}
	if (in_stop_phase(s))
		stop_next(s);
}

static void
sup_child_exited(struct node *s, struct node *c, bool clean,
    const char *cause)
{
	bool want;

	if (in_stop_phase(s) &&
	    (s->op != OP_RESTART || node_index(c) >= s->from)) {
		/* It was going down anyway. */
		stop_next(s);
		return;
	}
	/* Backoff starts over after the child stayed up min_uptime. */
	if (c->started_ms != 0 &&
	    now_ms() - c->started_ms >= s->ss->min_uptime)
		c->backoff_attempt = 0;
	c->started_ms = 0;
	/* A supervisor that gave up is abnormal, whatever its type. */
	if (c->kind != NODE_WORKER)
		want = true;
	else
		want = restart_wanted(c->cs->restart, clean);
	if (!want) {
		if (c->cs->restart == RESTART_TEMPORARY) {
			log_info("%s: temporary, %s, removed", c->path, cause);
			remove_child(s, c);
		}
		return;
	}
	if (!decide(s, c)) {
		giveup(s, c, cause);
		return;
	}
	if (s->kind == NODE_GROUP || s->ss->strategy == STRATEGY_ONE_FOR_ONE)
		schedule_restart(s, c);
	else
		set_restart(s, c);
}
