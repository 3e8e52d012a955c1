/*
 * asks.c: actord's own actor.  One mailbox of the arena, named
 * ASKS_SELF_PATH, is actord's: it is opened as a libactor actor (so the
 * tells and asks of actorctl carry actord's reference as their sender),
 * its doorbell sits in actord's epoll loop, and the answers to its asks
 * are collected with actor_ask_next(.., 0, ..) when the doorbell rings.
 * Each ask has a timer in actord's timer heap at its deadline, so a
 * timeout needs no polling, and an idle actord makes no system call.
 *
 * It owns ad->self_actor, the doorbell and the asks in flight.  It must
 * never wait (every libactor call here either has a zero timeout or, for
 * an ask, ACTOR_ASK_NO_WAIT: a full mailbox refuses the ask at once, as
 * it refuses actorctl's tell, and its timeout bounds only the answer)
 * and never decide what an answer means to a client: the callback does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "shm/shm.h"
#include "supervisor/actord.h"
#include "supervisor/log.h"
#include "worker/actor.h"
#include "worker/remote.h"

#define BELL_RETRY_MS	1	/* the doorbell could not be armed */
#define ASK_SLACK_MS	1	/* the timer fires after libactor's deadline */

struct pending_ask {
	struct pending_ask *next;
	struct actord	*ad;
	uint64_t	 corr;
	struct timer	 timer;		/* at the ask's deadline */
	ask_done_fn	 fn;		/* NULL once forgotten */
	void		*arg;
};

static void	on_bell(void *, uint32_t);
static void	on_bell_timer(void *);
static void	on_deadline(void *);
static void	collect(struct actord *);
static void	complete(struct actord *, uint64_t, int,
		    const struct actor_msg *);
static void	unlink_ask(struct actord *, struct pending_ask *);
static int	track(struct actord *, uint64_t, uint32_t, ask_done_fn, void *,
		    struct pending_ask **);

/* Open actord's actor on its reserved mailbox and put its doorbell in the loop. */
int
asks_open(struct actord *ad, uint32_t mbox, char *err, size_t errlen)
{
	int fd;

	if (actor_open(ad->arena, (int32_t)mbox, &ad->self_actor, err,
	    errlen) < 0)
		return -1;
	ad->self_mbox = (int32_t)mbox;
	timer_init(&ad->bell_timer, on_bell_timer, ad);
	if ((fd = shm_doorbell_open(ad->arena, mbox)) < 0) {
		snprintf(err, errlen, "actord's doorbell: %s%s%s",
		    shm_strerror(fd), fd == SHM_ESYS ? ": " : "",
		    fd == SHM_ESYS ? strerror(errno) : "");
		return -1;
	}
	ad->bell_fd = fd;
	if (loop_add(&ad->loop, &ad->bell_ev, fd, EPOLLIN, on_bell, ad) ==
	    -1) {
		snprintf(err, errlen, "actord's doorbell: epoll: %s",
		    strerror(errno));
		return -1;
	}
	collect(ad);		/* arms the doorbell */
	return 0;
}

/* Forget every ask (no callback) and close the actor. */
void
asks_close(struct actord *ad)
{
	struct pending_ask *p;

	if (ad->self_actor == NULL)
		return;		/* never opened: nothing of it to close */
	while ((p = ad->asks) != NULL) {
		ad->asks = p->next;
		timer_cancel(&ad->loop, &p->timer);
		free(p);
	}
	timer_cancel(&ad->loop, &ad->bell_timer);
	if (ad->bell_fd >= 0) {
		if (ad->bell_ev.fn != NULL)
			loop_del(&ad->loop, &ad->bell_ev);
		if (ad->arena != NULL && ad->self_mbox >= 0)
			shm_doorbell_disarm(ad->arena, (uint32_t)ad->self_mbox,
			    -1);
		close(ad->bell_fd);
		ad->bell_fd = -1;
	}
	actor_close(ad->self_actor);
	ad->self_actor = NULL;
}

/*
 * Send an ask to mailbox mbox (its live incarnation).  0: it is in flight
 * and fn will be called once, later; or the ACTOR_E* code it failed with
 * at once (down, full, ...), and fn is never called.
 */
int
asks_send(struct actord *ad, uint32_t mbox, uint32_t tag, const void *data,
    size_t len, uint32_t timeout_ms, ask_done_fn fn, void *arg,
    struct pending_ask **out)
{
	struct actor_ref ref;
	uint64_t corr;
	int rc;

	if (ad->self_actor == NULL)
		return ACTOR_ENOMAILBOX;
	ref.index = mbox;
	ref.incarnation = ACTOR_ANY;
	rc = actor_ask_send_with(ad->self_actor, ref, tag, data, len,
	    (int64_t)timeout_ms * 1000000, ACTOR_ASK_NO_WAIT, &corr);
	if (rc < 0)
		return rc;
	return track(ad, corr, timeout_ms, fn, arg, out);
}

/* An ask of an actor of another node, "node:/path", through the gateway. */
int
asks_send_remote(struct actord *ad, const char *path, uint32_t tag,
    const void *data, size_t len, uint32_t timeout_ms, ask_done_fn fn,
    void *arg, struct pending_ask **out)
{
	struct remote_env env;
	uint64_t corr;
	int rc;

	if (ad->self_actor == NULL)
		return ACTOR_ENOMAILBOX;
	if ((rc = remote_path_env(path, tag, data, len, &env)) <= 0)
		return rc == 0 ? ACTOR_EINVAL : rc;
	rc = remote_ask_send(ad->self_actor, &env,
	    (int64_t)timeout_ms * 1000000, ACTOR_ASK_NO_WAIT, &corr);
	if (rc < 0)
		return rc;
	return track(ad, corr, timeout_ms, fn, arg, out);
}

/* An ask sent: its timer, its callback.  0, or ACTOR_ESYS (forgotten). */
static int
track(struct actord *ad, uint64_t corr, uint32_t timeout_ms, ask_done_fn fn,
    void *arg, struct pending_ask **out)
{
	struct pending_ask *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return ACTOR_ESYS;
	p->corr = corr;
	p->ad = ad;
	p->fn = fn;
	p->arg = arg;
	timer_init(&p->timer, on_deadline, p);
	timer_after(&ad->loop, &p->timer, timeout_ms + ASK_SLACK_MS);
	p->next = ad->asks;
	ad->asks = p;
	if (out != NULL)
		*out = p;
	return 0;
}

/*
 * The caller lost interest (its client went away): no callback, but the
 * ask stays until libactor completes it, so its entry there is freed.
 */
void
asks_forget(struct actord *ad, struct pending_ask *p)
{
	(void)ad;
	if (p != NULL) {
		p->fn = NULL;
		p->arg = NULL;
	}
}

static void
unlink_ask(struct actord *ad, struct pending_ask *p)
{
	struct pending_ask **pp;

	for (pp = &ad->asks; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			return;
		}
}

static void
complete(struct actord *ad, uint64_t corr, int rc,
    const struct actor_msg *m)
{
	struct pending_ask *p;

	for (p = ad->asks; p != NULL; p = p->next)
		if (p->corr == corr)
			break;
	if (p == NULL)
		return;
	unlink_ask(ad, p);
	timer_cancel(&ad->loop, &p->timer);
	if (p->fn != NULL)
		p->fn(p->arg, rc, m);
	free(p);
}

/*
 * Every ask that completed (answered, failed, past its deadline), then arm
 * the doorbell; an answer that came meanwhile is collected at once.
 */
static void
collect(struct actord *ad)
{
	struct actor_msg m;
	uint64_t corr;
	unsigned round;
	int rc, armed;

	for (round = 0; round < 64; round++) {
		for (;;) {
			corr = 0;
			memset(&m, 0, sizeof(m));
			rc = actor_ask_next(ad->self_actor, &m, 0, &corr);
			if (rc == ACTOR_EAGAIN || rc == ACTOR_EEMPTY ||
			    corr == 0)
				break;
			complete(ad, corr, rc, &m);
		}
		armed = shm_doorbell_arm(ad->arena, (uint32_t)ad->self_mbox,
		    SHM_LANE_BIT(SHM_LANE_REPLY));
		if (armed == 0)
			return;
		if (armed < 0)
			break;
	}
	/*
	 * Producers cannot fence, or answers keep coming: look again soon,
	 * while an ask waits (idle, nothing is looked at).
	 */
	if (ad->asks != NULL && !timer_pending(&ad->bell_timer))
		timer_after(&ad->loop, &ad->bell_timer, BELL_RETRY_MS);
}

/*
 * A worker was reaped, and actord's mailbox repaired: any worker may have
 * written its "sleeping" word too, so that no answer rings the doorbell
 * (actord then saw its answers only at each ask's deadline, however long
 * the worker had been gone).  Answers already there are collected and
 * the doorbell armed again: a store, and a barrier only if its fence_mode
 * was written too.
 */
void
asks_rearm(struct actord *ad)
{
	if (ad->self_actor != NULL && ad->bell_fd >= 0)
		collect(ad);
}

static void
on_bell(void *arg, uint32_t events)
{
	struct actord *ad = arg;

	(void)events;
	shm_doorbell_disarm(ad->arena, (uint32_t)ad->self_mbox, ad->bell_fd);
	collect(ad);
}

static void
on_bell_timer(void *arg)
{
	collect(arg);
}

/* Past the deadline: libactor reports the timeout (or the answer). */
static void
on_deadline(void *arg)
{
	struct pending_ask *p = arg;
	struct actord *ad = p->ad;
	struct pending_ask *q;

	shm_doorbell_disarm(ad->arena, (uint32_t)ad->self_mbox, -1);
	collect(ad);
	/* Still there: libactor's clock says not yet; look again shortly. */
	for (q = ad->asks; q != NULL; q = q->next)
		if (q == p) {
			timer_after(&ad->loop, &p->timer, ASK_SLACK_MS);
			break;
		}
}
