/*
 * ask.c: request-reply.  An ask goes to the target's main lane with
 * SHM_MSG_ASK and a correlation id; the answer comes back on the asker's
 * own reply lane with the same id.  Every ask has a deadline.  The ids
 * start at a random number per process, so an answer meant for an ask that
 * timed out, or for a dead incarnation of the asker, matches nothing: it
 * is dropped and counted (late_replies), never handed to a later ask.
 *
 * An ask to an actor that is down fails at once (ACTOR_EDOWN); actord fails
 * the asks a dying actor held or had queued (reaped.c), so none waits for
 * its timeout because of a death.
 *
 * A caller has at most as many asks in flight as it has reply slots
 * (replyslots.c, never more than its reply lane holds answers): one more
 * is refused (ACTOR_EFULL) before it is sent.  An ask that timed out
 * keeps its slot until its late answer, if one was sent, is off the lane,
 * so late answers never crowd out live ones.
 *
 * Owns: the process-local table of asks in flight (open addressing, keyed
 * by corr) and the queue of answers taken early.  Must never block past
 * the earliest deadline of the caller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/actor_impl.h"
#include "worker/remote.h"

static struct pending *find(struct actor *, uint64_t);
static int	 make_room(struct actor *);
static void	 insert(struct actor *, uint64_t, int64_t);
static int	 ask_post(struct actor *, struct actor_ref, uint32_t,
		    const void *, size_t, int64_t, unsigned, uint64_t *,
		    int64_t *);
static void	 remove_at(struct actor *, struct pending *);
static int	 grow(struct actor *);
static int	 take_reply(struct actor *, struct shm_msg *);
static int	 reply_rc(const struct shm_msg *, const void *);
static int	 expired(struct actor *, int64_t, uint64_t *);
static uint32_t	 slot_of(uint64_t, uint32_t);
static void	 to_user(const struct shm_msg *, const void *,
		    struct actor_msg *);
static int	 stash(struct actor *, const struct shm_msg *);
static int64_t	 earliest(const struct actor *);

static uint32_t
slot_of(uint64_t corr, uint32_t cap)
{
	corr ^= corr >> 29;
	corr *= 0xbf58476d1ce4e5b9ULL;
	corr ^= corr >> 32;
	return (uint32_t)corr & (cap - 1);
}

static struct pending *
find(struct actor *a, uint64_t corr)
{
	uint32_t i;

	if (a->pend == NULL || corr == 0)
		return NULL;
	for (i = slot_of(corr, a->pend_cap); a->pend[i].corr != 0;
	    i = (i + 1) & (a->pend_cap - 1))
		if (a->pend[i].corr == corr)
			return &a->pend[i];
	return NULL;
}

static int
grow(struct actor *a)
{
	struct pending *old = a->pend, *np;
	uint32_t ocap = a->pend_cap, cap = ocap == 0 ? 64 : ocap * 2, i, j;

	if ((np = calloc(cap, sizeof(*np))) == NULL)
		return ACTOR_ESYS;
	for (i = 0; i < ocap; i++) {
		if (old[i].corr == 0)
			continue;
		for (j = slot_of(old[i].corr, cap); np[j].corr != 0;
		    j = (j + 1) & (cap - 1))
			;
		np[j] = old[i];
	}
	free(old);
	a->pend = np;
	a->pend_cap = cap;
	return 0;
}

/* Room for one more ask in the table (kept at most half full). */
static int
make_room(struct actor *a)
{
	if ((a->npend + 1) * 2 > a->pend_cap)
		return grow(a);
	return 0;
}

/* Enter an ask in the table; make_room() has made room for it. */
static void
insert(struct actor *a, uint64_t corr, int64_t deadline)
{
	uint32_t i;

	for (i = slot_of(corr, a->pend_cap); a->pend[i].corr != 0;
	    i = (i + 1) & (a->pend_cap - 1))
		;
	memset(&a->pend[i], 0, sizeof(a->pend[i]));
	a->pend[i].corr = corr;
	a->pend[i].deadline = deadline;
	a->npend++;
	if (a->npend == 1 || deadline < a->min_deadline)
		a->min_deadline = deadline;
}

/* Linear probing: delete by shifting back the entries that follow. */
static void
remove_at(struct actor *a, struct pending *p)
{
	uint32_t mask = a->pend_cap - 1, i = (uint32_t)(p - a->pend), j, k;

	free(p->data);
	p->data = NULL;
	p->corr = 0;
	if (p->done)
		a->ndone--;
	p->done = 0;
	a->npend--;
	j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (a->pend[j].corr == 0)
			return;
		k = slot_of(a->pend[j].corr, a->pend_cap);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			a->pend[i] = a->pend[j];
			a->pend[j].corr = 0;
			a->pend[j].done = 0;
			a->pend[j].data = NULL;
			i = j;
		}
	}
}

/* One answer off the reply lane into rbuf; ACTOR_EEMPTY if none. */
static int
take_reply(struct actor *a, struct shm_msg *m)
{
	enum shm_lane lane;
	int rc;

	rc = shm_recv(a->arena, (uint32_t)a->idx, SHM_LANE_BIT(SHM_LANE_REPLY),
	    m, a->rbuf, a->rbuf_len, &lane);
	if (rc < 0)
		return rc;
	if (m->len > a->rbuf_len)
		m->len = (uint32_t)a->rbuf_len;
	a->rbuf[m->len] = '\0';	/* an error's text ends (actor_error_text) */
	return 0;
}

/*
 * What an answer means to its ask: 0, the runtime's ACTOR_E* code it
 * carries, or ACTOR_EREPLY for an application's own code (>= 0).
 */
static int
reply_rc(const struct shm_msg *m, const void *data)
{
	int32_t code;

	if ((m->flags & SHM_MSG_ERROR) == 0)
		return 0;
	if (m->len < sizeof(code))
		return ACTOR_EREPLY;
	memcpy(&code, data, sizeof(code));
	if (code < ACTOR_ELAST || code >= 0)
		return ACTOR_EREPLY;
	return code;
}

static void
to_user(const struct shm_msg *m, const void *data, struct actor_msg *out)
{
	if (out == NULL)
		return;
	memset(out, 0, sizeof(*out));
	out->tag = m->tag;
	out->len = m->len;
	out->data = data;
	out->sender.index = m->sender.index;
	out->sender.incarnation = m->sender.incarnation;
	out->corr = m->corr;
	out->attempts = m->attempts;
	out->flags = m->flags & (ACTOR_MSG_REPLY | ACTOR_MSG_ERROR);
	out->enq_ns = shm_enq_timed(m->enq_ns) ? m->enq_ns : 0;
}

int
actor_ask_send(struct actor *a, struct actor_ref ref, uint32_t tag,
    const void *data, size_t len, int64_t timeout_ns, uint64_t *corr)
{
	return actor_ask_send_with(a, ref, tag, data, len, timeout_ns, 0,
	    corr);
}

/*
 * An ask whose answer actor_ask_next() returns.  Room in the table comes
 * first: once the ask is sent, its answer must find it.
 */
int
actor_ask_send_with(struct actor *a, struct actor_ref ref, uint32_t tag,
    const void *data, size_t len, int64_t timeout_ns, unsigned flags,
    uint64_t *corr)
{
	uint64_t c;
	int64_t deadline;
	int rc;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if ((rc = make_room(a)) < 0)
		return rc;
	if ((rc = ask_post(a, ref, tag, data, len, timeout_ns, flags, &c,
	    &deadline)) < 0)
		return rc;
	insert(a, c, deadline);
	if (corr != NULL)
		*corr = c;
	return 0;
}

/*
 * Send an ask; *corr is its correlation id and *deadline when it times
 * out: the send's own clock reading plus timeout_ns, so a send that
 * waits for room in a full mailbox counts against the ask's timeout, and
 * an ask costs no clock reading of its own.  With ACTOR_ASK_NO_WAIT the
 * send never waits for room (timeout 0); timeout_ns bounds the answer.
 */
static int
ask_post(struct actor *a, struct actor_ref ref, uint32_t tag,
    const void *data, size_t len, int64_t timeout_ns, unsigned flags,
    uint64_t *corr, int64_t *deadline)
{
	struct remote_env env;
	struct actor_ref gw;
	struct shm_msg m;
	uint64_t started, id;
	uint8_t stack[1024];
	void *buf;
	size_t blen;
	int rc;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if (timeout_ns < 0 || len > UINT32_MAX || (data == NULL && len > 0))
		return ACTOR_EINVAL;
	if (REMOTE_IS(ref.index)) {
		/* Asked of the gateway, which answers for the remote actor. */
		remote_env_ref(&env, ref, WK_ASK, tag, data, len);
		if ((rc = remote_gateway(a, &gw)) < 0 || (rc = remote_env_put(
		    &env, &buf, &blen, stack, sizeof(stack))) < 0)
			return rc;
		rc = ask_post(a, gw, REMOTE_TAG, buf, blen, timeout_ns,
		    flags & ACTOR_ASK_NO_WAIT, corr, deadline);
		if (buf != stack)
			free(buf);
		return rc;
	}
	/* A slot first: its answer will have a cell (replyslots.c). */
	if ((rc = slot_take(a, &id)) < 0)
		return rc;
	memset(&m, 0, sizeof(m));
	m.tag = tag;
	m.len = (uint32_t)len;
	m.sender = (struct shm_ref){ (uint32_t)a->idx, a->incarnation };
	m.flags = SHM_MSG_ASK;
	m.corr = id | (uint64_t)(ref.incarnation & CORR_INC_MASK) <<
	    CORR_INC_SHIFT;
	if ((rc = send_stamped(a, ref, SHM_LANE_MAIN, &m, data,
	    (flags & ACTOR_ASK_NO_WAIT) ? 0 : timeout_ns, flags,
	    &started)) < 0) {
		slot_unsend(a, m.corr);
		return rc;
	}
	*corr = m.corr;
	*deadline = (int64_t)started + timeout_ns;
	return 0;
}

/*
 * The first ask in flight whose deadline passed: ACTOR_ETIMEDOUT for it.
 * min_deadline spares the scan until one may have passed.
 */
static int
expired(struct actor *a, int64_t now, uint64_t *corr)
{
	uint32_t i;

	if (now < a->min_deadline)
		return 0;
	a->min_deadline = earliest(a);
	if (now < a->min_deadline)
		return 0;
	for (i = 0; i < a->pend_cap; i++) {
		if (a->pend[i].corr == 0 || a->pend[i].done ||
		    a->pend[i].deadline > now)
			continue;
		if (corr != NULL)
			*corr = a->pend[i].corr;
		slot_expire(a, a->pend[i].corr);
		remove_at(a, &a->pend[i]);
		return 1;
	}
	return 0;
}

static int64_t
earliest(const struct actor *a)
{
	int64_t d = INT64_MAX;
	uint32_t i;

	for (i = 0; i < a->pend_cap; i++)
		if (a->pend[i].corr != 0 && !a->pend[i].done &&
		    a->pend[i].deadline < d)
			d = a->pend[i].deadline;
	return d;
}

/*
 * An answer that is not for the ask we wait on: keep it for its ask, or
 * drop it late.  Its slot is free again either way.
 */
static int
stash(struct actor *a, const struct shm_msg *m)
{
	struct pending *p;

	if (!slot_answered(a, m) || (p = find(a, m->corr)) == NULL ||
	    p->done) {
		atomic_fetch_add(&a->hdr->late_replies, 1);
		return 0;
	}
	p->msg = *m;
	p->rc = reply_rc(m, a->rbuf);
	/* One byte more: a NUL, so that an error's text ends. */
	if (m->len > 0 && (p->data = malloc(m->len + 1)) != NULL)
		memcpy(p->data, a->rbuf, m->len + 1);
	else if (m->len > 0)
		p->msg.len = 0;
	p->done = 1;
	a->ndone++;
	return 1;
}

/*
 * The next ask that completed, in any order: 0 with its answer, the error
 * it failed with (ACTOR_ETIMEDOUT after its own deadline), and *corr says
 * which; ACTOR_EEMPTY with no ask in flight (answers left on the reply
 * lane are then dropped as late, so an event loop's doorbell can sleep);
 * ACTOR_EAGAIN if timeout_ns passed first.  The answer's data is good until the next call.
 */
int
actor_ask_next(struct actor *a, struct actor_msg *reply, int64_t timeout_ns,
    uint64_t *corr)
{
	struct shm_msg m;
	struct pending *p;
	uint32_t i;
	int64_t now, until, deadline;
	int rc;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if (actor_forked(a))
		return ACTOR_EFORKED;
	free(a->last_reply);
	a->last_reply = NULL;
	deadline = timeout_ns < 0 ? INT64_MAX :
	    (int64_t)shm_clock_ns(a->arena) + timeout_ns;
	for (;;) {
		if (a->npend == 0) {
			/* Answers nobody waits for: dropped and counted. */
			while (take_reply(a, &m) == 0) {
				(void)slot_answered(a, &m);
				atomic_fetch_add(&a->hdr->late_replies, 1);
			}
			return ACTOR_EEMPTY;
		}
		for (i = 0; a->ndone > 0 && i < a->pend_cap; i++) {
			p = &a->pend[i];
			if (p->corr == 0 || !p->done)
				continue;
			if (corr != NULL)
				*corr = p->corr;
			rc = p->rc;
			a->last_reply = p->data;
			p->data = NULL;
			to_user(&p->msg, a->last_reply, reply);
			remove_at(a, p);
			return rc;
		}
		while (take_reply(a, &m) == 0) {
			if (!slot_answered(a, &m) ||
			    (p = find(a, m.corr)) == NULL || p->done) {
				atomic_fetch_add(&a->hdr->late_replies, 1);
				continue;
			}
			if (corr != NULL)
				*corr = m.corr;
			remove_at(a, p);
			to_user(&m, a->rbuf, reply);
			return reply_rc(&m, a->rbuf);
		}
		now = (int64_t)shm_clock_ns(a->arena);
		if (expired(a, now, corr))
			return ACTOR_ETIMEDOUT;
		if (now >= deadline)
			return ACTOR_EAGAIN;
		until = a->min_deadline;
		if (deadline < until)
			until = deadline;
		rc = shm_wait(a->arena, (uint32_t)a->idx,
		    SHM_LANE_BIT(SHM_LANE_REPLY), (enum shm_wait_mode)a->wait,
		    a->spin_ns, until == INT64_MAX ? SHM_NO_TIMEOUT :
		    (until > now ? until - now : 0));
		if (rc < 0 && rc != SHM_ETIMEDOUT)
			return rc;
	}
}

/*
 * One ask, waited for: 0 with the answer in *reply (data good until the
 * next receive of answers), or the error it failed with.  It never enters
 * the table of asks in flight: nothing but this call takes answers while
 * it runs, so its answer is matched here, and one that comes after it
 * returned matches nothing in the table and is dropped as late.
 */
int
actor_ask(struct actor *a, struct actor_ref ref, uint32_t tag,
    const void *data, size_t len, int64_t timeout_ns,
    struct actor_msg *reply)
{
	return actor_ask_with(a, ref, tag, data, len, timeout_ns, 0, reply);
}

/*
 * actor_ask with options: ACTOR_ASK_WAIT_UP queues an ask to an actor
 * that is down (restarting) for its next incarnation instead of failing
 * it at once; its own timeout still bounds it.
 */
int
actor_ask_with(struct actor *a, struct actor_ref ref, uint32_t tag,
    const void *data, size_t len, int64_t timeout_ns, unsigned flags,
    struct actor_msg *reply)
{
	struct shm_msg m;
	uint64_t corr;
	int64_t deadline, now;
	int rc;

	if ((rc = ask_post(a, ref, tag, data, len, timeout_ns, flags, &corr,
	    &deadline)) < 0)
		return rc;
	for (;;) {
		while (take_reply(a, &m) == 0) {
			if (m.corr != corr) {
				(void)stash(a, &m);
				continue;
			}
			(void)slot_answered(a, &m);
			to_user(&m, a->rbuf, reply);
			return reply_rc(&m, a->rbuf);
		}
		now = (int64_t)shm_clock_ns(a->arena);
		if (now >= deadline) {
			slot_expire(a, corr);
			return ACTOR_ETIMEDOUT;
		}
		rc = shm_wait(a->arena, (uint32_t)a->idx,
		    SHM_LANE_BIT(SHM_LANE_REPLY), (enum shm_wait_mode)a->wait,
		    a->spin_ns, deadline - now);
		if (rc < 0 && rc != SHM_ETIMEDOUT)
			return rc;
		if (rc == 0)
			slot_prefetch_mine(a, corr);	/* for slot_answered */
	}
}

int
actor_ask_path(struct actor *a, const char *path, uint32_t tag,
    const void *data, size_t len, int64_t timeout_ns,
    struct actor_msg *reply)
{
	struct remote_env env;
	struct actor_ref ref;
	int rc;

	if ((rc = remote_path_env(path, tag, data, len, &env)) != 0)
		return rc < 0 ? rc : remote_ask(a, &env, timeout_ns, reply);
	if ((rc = actor_lookup(a, path, &ref)) < 0)
		return rc;
	ref.incarnation = ACTOR_ANY;
	return actor_ask(a, ref, tag, data, len, timeout_ns, reply);
}

unsigned
actor_asks_pending(const struct actor *a)
{
	return a->npend;
}

/*
 * For actor_recv (actor_recv_answers): the next ask sent with
 * actor_ask_send that completed, now, as a message: 1 with *out (flags
 * ACTOR_MSG_REPLY, and ACTOR_MSG_ERROR with an error answer: its code and
 * text, ACTOR_ETIMEDOUT for an ask past its deadline), 0 if none.
 */
int
ask_poll(struct actor *a, struct actor_msg *out)
{
	struct actor_error_reply er;
	uint64_t corr = 0;
	size_t len;
	int rc;

	if (a->npend == 0)
		return 0;
	memset(out, 0, sizeof(*out));
	rc = actor_ask_next(a, out, 0, &corr);
	if (rc == ACTOR_EAGAIN || rc == ACTOR_EEMPTY || corr == 0)
		return 0;
	out->corr = corr;
	out->flags |= ACTOR_MSG_REPLY;
	if (rc == ACTOR_ETIMEDOUT) {
		/* No answer came: one of our own says so. */
		memset(&er, 0, sizeof(er));
		er.code = ACTOR_ETIMEDOUT;
		len = sizeof(er.code) + (size_t)snprintf(er.text,
		    sizeof(er.text), "no answer in time") + 1;
		free(a->last_reply);
		if ((a->last_reply = malloc(len)) == NULL)
			return 0;
		memcpy(a->last_reply, &er, len);
		out->data = a->last_reply;
		out->len = (uint32_t)len;
		out->flags |= ACTOR_MSG_ERROR;
	}
	return 1;
}

/* What an answer means to its ask: 0, an ACTOR_E* code or ACTOR_EREPLY. */
int
actor_reply_status(const struct actor_msg *m)
{
	int32_t code;

	if (m == NULL || (m->flags & ACTOR_MSG_ERROR) == 0)
		return 0;
	code = actor_error_code(m);
	return code < 0 && code >= ACTOR_ELAST ? code : ACTOR_EREPLY;
}

void
actor_recv_answers(struct actor *a, bool on)
{
	a->answers = on;
}

/*
 * Every answer on the reply lane, now: kept for its ask if it is still
 * waiting, else dropped late (replyslots.c, when it needs the slots of
 * answers that are in the lane).
 */
void
ask_drain(struct actor *a)
{
	struct shm_msg m;

	while (take_reply(a, &m) == 0)
		(void)stash(a, &m);
}
