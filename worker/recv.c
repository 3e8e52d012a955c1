/*
 * recv.c: receiving, one message at a time, and the run loop.
 *
 * A message is copied from its cell into the actor's in-hand slot in the
 * arena (its header, and a payload that fits, to the slot's head beside
 * the control block; a payload larger than a cell to the slot's far
 * part: actor_impl.h, inhand_at) and marked held (IH_HELD) before the
 * cell is freed, so that if the worker dies while handling it actord
 * finds it there (reaped.c) and either redelivers it first to the next
 * incarnation (IH_PENDING) or, at max_attempts, dead-letters it as
 * poison.  Order: a pending redelivery,
 * then the system lane, then the main lane.  A main-lane message addressed
 * to an incarnation that is not ours is a dead letter "stale reference".
 *
 * A worker killed between marking the copy held and freeing the cell is
 * told apart by actord (shm_head_msg: the message is still published), so
 * the message is delivered once.  On a drop_oldest lane the taken cell
 * stays marked CONSUMING until the copy is held, so a worker killed in
 * between loses nothing either (shm_consumer_recover publishes it again).
 *
 * A deliberate exit (actor_exit) finishes the message in hand first, so
 * that it is not taken for a crash: the message is not given again.
 *
 * Owns: the in-hand slot while the worker lives, the run loop, SIGTERM in
 * the run loop.  Must never block without a deadline, nor call a handler
 * with a message that is not marked held.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "worker/actor_impl.h"

static int	 take_cb(void *, enum shm_lane, const struct shm_msg *,
		    const void *) SHM_RECV;
static int	 take_pending(struct actor *) SHM_RECV;
static void	 fill(struct actor *, struct actor_msg *) SHM_RECV;
static bool	 refuse_stale(struct actor *) SHM_RECV;
static void	 on_term(int);

static bool	 stale_system(struct actor *) SHM_RECV;
static void	 term_stop(struct actor *, struct actor_msg *);

/*
 * The only global of libactor: a signal handler can reach nothing else.
 * While actor_run() runs, SIGTERM sets term_seen and the running actor's
 * stop and term_stop, and pokes its wait (shm_poke: no message, no
 * producer slot, no page of the arena written): a sleeping run loop
 * wakes at once, and actor_recv hands it a Stop for this incarnation
 * (term_stop) after the system lane's messages, before the main lane's,
 * where the Stop a handler used to send itself came.  The loop reads the
 * actor's stop, not term_seen: a woken actor then touches no page of
 * libactor's data (one page walk more per message:
 * tools/bench/bench_scale.c, sparse).
 */
static struct {
	volatile sig_atomic_t term_seen;
	struct actor	*a;		/* whose stop SIGTERM sets */
	struct shm_arena *arena;	/* ... and whose wait it pokes */
	uint32_t	 idx;
} run_sig;
#define term_seen	run_sig.term_seen

struct take_arg {
	struct actor	*a;
	int		 took;
};

/* Copy into the in-hand slot, mark it held; then shm frees the cell. */
static int
take_cb(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	struct take_arg *ta = arg;
	struct actor *a = ta->a;
	struct ar_hdr *h = a->hdr;
	struct shm_msg *c = &a->cur;
	uint32_t l = (uint32_t)lane;
	uint64_t id;

	/*
	 * Whole copies first, then the few fields to change, in place:
	 * changing them on a copy and copying that again would load wide
	 * what was just stored narrow, which stalls store forwarding.
	 */
	if (m->flags & SHM_MSG_ASK)
		slot_prefetch(a->arena, m);	/* for actor_reply's claim */
	*c = *m;
	if (c->len > a->inhand_max)
		c->len = a->inhand_max;
	c->attempts = 1;
	c->flags &= ~(uint32_t)SHM_MSG_REDELIVERED;
	shm_copy(inhand_at(a->inhand, a->inhand_room, a->inhand_far, c->len),
	    payload, c->len);
	memcpy(a->inhand, m, sizeof(*m));
	memcpy(a->inhand + offsetof(struct shm_msg, len), &c->len,
	    sizeof(c->len));
	memcpy(a->inhand + offsetof(struct shm_msg, attempts), &c->attempts,
	    sizeof(c->attempts));
	memcpy(a->inhand + offsetof(struct shm_msg, flags), &c->flags,
	    sizeof(c->flags));
	memcpy(a->inhand + sizeof(*m), &l, sizeof(l));
	/* Only the consumer writes these: no read-modify-write needed. */
	id = atomic_load_explicit(&h->next_delivery, memory_order_relaxed) + 1;
	atomic_store_explicit(&h->next_delivery, id, memory_order_relaxed);
	atomic_store_explicit(&h->inhand_id, id, memory_order_relaxed);
	/*
	 * Release: the copy is in the slot before it is marked held, and
	 * marked held before shm frees the cell (a later release store).
	 */
	atomic_store_explicit(&h->inhand, IH_HELD, memory_order_release);
	ta->took = 1;
	return 1;
}

/* The message a dead incarnation held: ours first, one attempt more. */
static int
take_pending(struct actor *a)
{
	struct ar_hdr *h = a->hdr;
	struct shm_msg c;

	if (atomic_load(&h->inhand) != IH_PENDING)
		return 0;
	memcpy(&c, a->inhand, sizeof(c));
	if (c.len > a->inhand_max) {
		/* Scribbled on: refuse it, never trust the length. */
		c.len = 0;
		shm_dl_put(a->arena, (uint32_t)a->idx, SHM_LANE_MAIN,
		    SHM_DL_GARBLED, &c, NULL);
		atomic_store(&h->inhand, IH_EMPTY);
		return 0;
	}
	c.attempts++;
	c.flags |= SHM_MSG_REDELIVERED;
	memcpy(a->inhand, &c, sizeof(c));
	atomic_store(&h->inhand, IH_HELD);
	atomic_fetch_add(&h->redelivered, 1);
	a->cur = c;
	return 1;
}

static void
fill(struct actor *a, struct actor_msg *out)
{
	uint32_t lane;

	memcpy(&lane, a->inhand + sizeof(struct shm_msg), sizeof(lane));
	out->tag = a->cur.tag;
	out->len = a->cur.len;
	out->data = inhand_at(a->inhand, a->inhand_room, a->inhand_far,
	    a->cur.len);
	out->sender.index = a->cur.sender.index;
	out->sender.incarnation = a->cur.sender.incarnation;
	out->corr = a->cur.corr;
	out->attempts = a->cur.attempts;
	out->flags = a->cur.flags & (ACTOR_MSG_ASK | ACTOR_MSG_REPLY |
	    ACTOR_MSG_ERROR | ACTOR_MSG_REDELIVERED | ACTOR_MSG_KEYED);
	if (out->flags & ACTOR_MSG_KEYED)
		out->corr = a->cur.corr & CORR_ID_MASK;	/* the key */
	if (lane == SHM_LANE_SYSTEM)
		out->flags |= ACTOR_MSG_SYSTEM;
	out->enq_ns = shm_enq_timed(a->cur.enq_ns) ? a->cur.enq_ns : 0;
}

/* A main-lane message for another incarnation: dead letter, never handled. */
static bool
refuse_stale(struct actor *a)
{
	uint32_t lane;

	memcpy(&lane, a->inhand + sizeof(struct shm_msg), sizeof(lane));
	if (lane != SHM_LANE_MAIN || !inc_stale(a->incarnation, a->cur.corr))
		return false;
	shm_dl_put(a->arena, (uint32_t)a->idx, SHM_LANE_MAIN,
	    SHM_DL_STALE_REF, &a->cur, inhand_at(a->inhand, a->inhand_room,
	    a->inhand_far, a->cur.len));
	atomic_fetch_add(&a->hdr->stale, 1);
	if (a->cur.flags & SHM_MSG_ASK)
		(void)send_error_reply(a->prod, a->arena, &a->cur,
		    ACTOR_ESTALE, "stale reference", &a->owed);
	atomic_store(&a->hdr->inhand, IH_EMPTY);
	return true;
}

int
actor_recv(struct actor *a, struct actor_msg *out, int64_t timeout_ns)
{
	struct take_arg ta;
	int64_t deadline, until, now;
	unsigned lanes;
	int rc;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if (actor_forked(a))
		return ACTOR_EFORKED;
	if (a->holding)
		actor_done(a);
	/* What our sends found no room for (owed.c). */
	if (a->owed != NULL)
		(void)owed_flush(a->prod, a->arena, &a->owed);
	deadline = timeout_ns < 0 ? INT64_MAX :
	    (int64_t)shm_clock_ns(a->arena) + timeout_ns;
again:
	for (;;) {
		if (take_pending(a))
			break;
		/* Answers to our asks, as messages (actor_recv_answers). */
		if (a->answers && ask_poll(a, out))
			return 0;
		ta.a = a;
		ta.took = 0;
		/* SIGTERM's Stop: after the system lane, before the main. */
		rc = shm_take_one(a->arena, (uint32_t)a->idx, a->term_stop ?
		    SHM_LANE_BIT(SHM_LANE_SYSTEM) : SHM_LANES_INBOX, take_cb,
		    &ta);
		if (rc < 0)
			return rc;
		if (ta.took) {
			if (refuse_stale(a))
				continue;
			break;
		}
		if (a->term_stop) {
			term_stop(a, out);
			return 0;
		}
		until = deadline;
		lanes = SHM_LANES_INBOX;
		if (a->answers && a->npend > 0) {
			/* Wake for an answer, or for an ask's deadline. */
			lanes |= SHM_LANE_BIT(SHM_LANE_REPLY);
			if (a->min_deadline < until)
				until = a->min_deadline;
		}
		now = until == INT64_MAX ? 0 : (int64_t)shm_clock_ns(a->arena);
		if (now >= deadline)
			return ACTOR_ETIMEDOUT;
		if (now >= until)
			continue;	/* an ask's deadline: ask_poll says so */
		rc = shm_wait(a->arena, (uint32_t)a->idx, lanes,
		    (enum shm_wait_mode)a->wait, a->spin_ns,
		    until == INT64_MAX ? SHM_NO_TIMEOUT : until - now);
		if (rc == SHM_ETIMEDOUT && until == deadline)
			return ACTOR_ETIMEDOUT;
		if (rc < 0 && rc != SHM_ETIMEDOUT)
			return rc;
	}
	a->holding = true;
	if (stale_system(a)) {
		actor_done(a);
		goto again;
	}
	a->recv_ns = (++a->nrecv & 7) == 0 ? shm_clock_ns(a->arena) : 0;
	atomic_store_explicit(&a->hdr->handled, atomic_load_explicit(
	    &a->hdr->handled, memory_order_relaxed) + 1, memory_order_relaxed);
	fill(a, out);
	if (out->tag == ACTOR_SYS_STOP && (out->flags & ACTOR_MSG_SYSTEM))
		a->stop = 1;
	return 0;
}

/* The message in hand is finished with: nothing to redeliver any more. */
void
actor_done(struct actor *a)
{
	_Atomic uint64_t *b;
	uint64_t d;
	unsigned k;

	if (!a->holding)
		return;
	a->holding = false;
	if (actor_forked(a))
		return;		/* the parent's message: it stays in hand */
	if (a->recv_ns != 0) {
		/* Handler duration: a sample, kept like shm's wait histogram. */
		d = shm_clock_ns(a->arena) - a->recv_ns;
		k = d == 0 ? 0 : 63 - (unsigned)__builtin_clzll(d);
		if (k >= ACTOR_HIST_BUCKETS)
			k = ACTOR_HIST_BUCKETS - 1;
		b = &a->hdr->handler_hist[k];
		atomic_store_explicit(b, atomic_load_explicit(b,
		    memory_order_relaxed) + 1, memory_order_relaxed);
	}
	a->recv_ns = 0;
	atomic_store_explicit(&a->hdr->inhand, IH_EMPTY, memory_order_release);
}

/*
 * A Stop, or a Terminated for a watch, of an earlier incarnation: not for
 * us.  Both carry that incarnation in corr (0: any).
 */
static bool
stale_system(struct actor *a)
{
	uint32_t lane;

	memcpy(&lane, a->inhand + sizeof(struct shm_msg), sizeof(lane));
	if (lane != SHM_LANE_SYSTEM || a->cur.corr == 0)
		return false;
	if (a->cur.tag == ACTOR_SYS_STOP)
		return a->cur.corr != a->incarnation;
	if (a->cur.tag == ACTOR_SYS_TERMINATED || a->cur.tag == ACTOR_SYS_GONE)
		return a->cur.corr != TERM_FOR(a->incarnation);
	return false;
}

/*
 * SIGTERM's Stop, as a Stop this incarnation sent itself would read: it
 * is in no lane, so nothing is held (a crash now redelivers nothing) and
 * the mailbox's counters do not count it.
 */
static void
term_stop(struct actor *a, struct actor_msg *out)
{
	a->term_stop = 0;
	a->stop = 1;
	memset(out, 0, sizeof(*out));
	out->tag = ACTOR_SYS_STOP;
	out->flags = ACTOR_MSG_SYSTEM;
	out->sender.index = (uint32_t)a->idx;
	out->sender.incarnation = a->incarnation;
	out->corr = a->incarnation;
	out->attempts = 1;
	out->data = a->inhand + INHAND_PAYLOAD;
}

static void
on_term(int sig)
{
	int saved = errno;

	(void)sig;
	term_seen = 1;
	if (run_sig.a != NULL) {
		run_sig.a->stop = 1;
		run_sig.a->term_stop = 1;
		shm_poke(run_sig.arena, run_sig.idx);
	}
	errno = saved;
}

/*
 * Handle messages until the handler says stop, actor_stop() is called, a
 * Stop arrives on the system lane, or SIGTERM: the message in hand is
 * finished first, then on_stop runs.  Returns 0 after a graceful stop.
 */
int
actor_run(struct actor *a, actor_handler fn, actor_stop_fn on_stop,
    void *arg)
{
	struct sigaction sa, old;
	struct actor_msg m;
	int rc = 0, r;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if (term_seen)
		a->stop = 1;		/* an earlier run's SIGTERM */
	run_sig.idx = (uint32_t)a->idx;
	run_sig.arena = a->arena;
	run_sig.a = a;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, &old) == -1) {
		run_sig.a = NULL;
		return ACTOR_ESYS;
	}
	while (!a->stop) {
		r = actor_recv(a, &m, ACTOR_FOREVER);
		if (r == ACTOR_ETIMEDOUT)
			continue;
		if (r < 0) {
			rc = r;
			break;
		}
		if (m.tag == ACTOR_SYS_STOP && (m.flags & ACTOR_MSG_SYSTEM)) {
			actor_done(a);
			break;
		}
		r = fn(a, &m, arg);
		actor_done(a);
		if (r != 0)
			break;
	}
	if (on_stop != NULL)
		on_stop(a, arg);
	(void)sigaction(SIGTERM, &old, NULL);
	run_sig.a = NULL;
	return rc;
}

void
actor_stop(struct actor *a)
{
	a->stop = 1;
}

bool
actor_stopping(const struct actor *a)
{
	return a->stop || term_seen;
}

/*
 * Leave on purpose, from a handler or anywhere: the message in hand is
 * finished with (a crash would give it again, up to max_attempts), what
 * we owe goes out, the handle is closed, and the process exits with
 * status, which its restart type judges (0: a clean exit).  Deferred
 * answers still held fail at once when actord reaps us.
 */
void
actor_exit(struct actor *a, int status)
{
	if (a != NULL)
		actor_close(a);		/* finishes the message in hand */
	exit(status);
}
