/*
 * send.c: looking actors up, telling them, and replying to the message in
 * hand.  A reference (index, incarnation) reaches that incarnation only:
 * sent to another, the message is a dead letter "stale reference" (checked
 * here, and again by the receiver, because the actor may die between the
 * two: the target incarnation travels in the high 24 bits of corr).  A
 * path, or the incarnation ACTOR_ANY, always reaches the live one.
 *
 * Owns: building message headers.  Must never wait longer than the
 * mailbox policy (tell) or at all (reply: the reply lane rejects).
 *
 * The read-once rule (shm/shm.h): actord sends through here too; a
 * target's policies (while_down, gone) are each loaded once.
 */
#include <stdio.h>
#include <string.h>

#include "worker/actor_impl.h"
#include "worker/remote.h"

static int	 check_target(struct actor *, struct actor_ref, bool,
		    unsigned, const struct shm_msg *, const void *) SHM_HOT;
static int	 reply_to(struct shm_producer *, struct shm_arena *,
		    const struct shm_msg *, struct shm_msg *, const void *);

int
actor_lookup(struct actor *a, const char *path, struct actor_ref *ref)
{
	int idx;

	if (path == NULL || ref == NULL)
		return ACTOR_EINVAL;
	if (path[0] != '/')		/* "node:/path" */
		return remote_lookup(a, path, ref);
	if ((idx = shm_lookup(a->arena, path)) < 0)
		return idx == SHM_ENOENT ? ACTOR_ENOENT : idx;
	ref->index = (uint32_t)idx;
	ref->incarnation = shm_actor_incarnation(a->arena, (uint32_t)idx);
	return 0;
}

/*
 * Before a send: the handle is this process's (not a fork child's copy),
 * the target exists, the reference is not stale, and a
 * down target takes the message by its policy.  0, or a negative code
 * after the message was dead-lettered.  An ask to a down actor fails at
 * once (ACTOR_EDOWN), counted but no dead letter: its asker has the
 * error in hand, and a caller retrying through a restart would otherwise
 * flood the dead-letter ring and push the real ones out.  With
 * ACTOR_ASK_WAIT_UP it is queued for the next incarnation instead,
 * unless the actor is gone for good.
 */
static int
check_target(struct actor *a, struct actor_ref ref, bool ask, unsigned flags,
    const struct shm_msg *m, const void *data)
{
	struct ar_hdr *h;
	uint32_t cur;

	if (actor_forked(a))
		return ACTOR_EFORKED;	/* before any dead letter */
	if (ref.index >= shm_nmailboxes(a->arena)) {
		shm_dl_put(a->arena, ref.index, SHM_LANE_MAIN,
		    SHM_DL_NO_ACTOR, m, data);
		return ACTOR_ENOENT;
	}
	cur = shm_actor_incarnation(a->arena, ref.index);
	if (ref.incarnation != ACTOR_ANY && ref.incarnation != cur) {
		shm_dl_put(a->arena, ref.index, SHM_LANE_MAIN,
		    SHM_DL_STALE_REF, m, data);
		if ((h = ar_hdr(a->arena, ref.index, NULL)) != NULL)
			atomic_fetch_add(&h->stale, 1);
		return ACTOR_ESTALE;
	}
	/* The fast path ends here: the policies matter only when down. */
	if (shm_actor_state(a->arena, ref.index) != SHM_ACTOR_DOWN)
		return 0;
	h = ar_hdr(a->arena, ref.index, NULL);
	if (ask) {
		if ((flags & ACTOR_ASK_WAIT_UP) && h != NULL &&
		    atomic_load(&h->gone) == 0)
			return 0;
		if (h != NULL)
			atomic_fetch_add(&h->asks_failed, 1);
		return ACTOR_EDOWN;
	}
	if (h != NULL && SHM_ONCE(h->while_down) == ACTOR_WHILE_DOWN_REJECT) {
		shm_dl_put(a->arena, ref.index, SHM_LANE_MAIN,
		    SHM_DL_ACTOR_DOWN, m, data);
		return ACTOR_EDOWN;
	}
	return 0;
}

int
send_raw(struct actor *a, struct actor_ref ref, enum shm_lane lane,
    struct shm_msg *m, const void *data, int64_t timeout_ns)
{
	int rc;

	if ((rc = check_target(a, ref, (m->flags & SHM_MSG_ASK) != 0, 0, m,
	    data)) < 0)
		return rc;
	return shm_send(a->prod, ref.index, lane, m, data, timeout_ns);
}

/*
 * send_raw, with an ask's ACTOR_ASK_* flags, and *started is when the
 * send began (shm_send_stamped).
 */
int
send_stamped(struct actor *a, struct actor_ref ref, enum shm_lane lane,
    struct shm_msg *m, const void *data, int64_t timeout_ns,
    unsigned flags, uint64_t *started)
{
	int rc;

	if ((rc = check_target(a, ref, (m->flags & SHM_MSG_ASK) != 0, flags,
	    m, data)) < 0)
		return rc;
	return shm_send_stamped(a->prod, ref.index, lane, m, data, timeout_ns,
	    started);
}

/* A tell's header: corr names the incarnation it is for (and a key). */
static int
tell_msg(struct actor *a, struct actor_ref ref, uint32_t tag, size_t len,
    const void *data, struct shm_msg *m)
{
	if (len > UINT32_MAX || (data == NULL && len > 0))
		return ACTOR_EINVAL;
	memset(m, 0, sizeof(*m));
	m->tag = tag;
	m->len = (uint32_t)len;
	m->sender.index = a->idx < 0 ? UINT32_MAX : (uint32_t)a->idx;
	m->sender.incarnation = a->idx < 0 ? 0 : a->incarnation;
	m->corr = (uint64_t)(ref.incarnation & CORR_INC_MASK) <<
	    CORR_INC_SHIFT;
	return 0;
}

int
actor_tell_timeout(struct actor *a, struct actor_ref ref, uint32_t tag,
    const void *data, size_t len, int64_t timeout_ns)
{
	struct remote_env env;
	struct actor_ref me;

	if (len > UINT32_MAX || (data == NULL && len > 0))
		return ACTOR_EINVAL;
	if (REMOTE_IS(ref.index)) {
		remote_env_ref(&env, ref, WK_TELL, tag, data, len);
		return remote_tell(a, &env, timeout_ns);
	}
	me.index = a->idx < 0 ? UINT32_MAX : (uint32_t)a->idx;
	me.incarnation = a->idx < 0 ? 0 : a->incarnation;
	return send_tell(a, ref, me, tag, data, len, timeout_ns);
}

/*
 * A tell to ref whose sender is from: ourselves, or, for the gateway,
 * the remote actor it carries the tell for.
 */
int
send_tell(struct actor *a, struct actor_ref ref, struct actor_ref from,
    uint32_t tag, const void *data, size_t len, int64_t timeout_ns)
{
	struct shm_msg m;
	int rc;

	if ((rc = tell_msg(a, ref, tag, len, data, &m)) < 0)
		return rc;
	m.sender.index = from.index;
	m.sender.incarnation = from.incarnation;
	return send_raw(a, ref, SHM_LANE_MAIN, &m, data, timeout_ns);
}

/*
 * A tell that a coalesce mailbox keeps once per key: it replaces in place
 * the queued tell with the same key (shm/ring.c).  Elsewhere an ordinary
 * tell.  The key shares corr with the incarnation the tell is for.
 */
int
actor_tell_keyed(struct actor *a, struct actor_ref ref, uint32_t tag,
    uint64_t key, const void *data, size_t len)
{
	struct shm_msg m;
	int rc;

	if (key > ACTOR_KEY_MAX)
		return ACTOR_EINVAL;
	if ((rc = tell_msg(a, ref, tag, len, data, &m)) < 0)
		return rc;
	m.corr |= key;
	m.flags = SHM_MSG_COALESCE;
	return send_raw(a, ref, SHM_LANE_MAIN, &m, data, SHM_TIMEOUT_DEFAULT);
}

int
actor_tell(struct actor *a, struct actor_ref ref, uint32_t tag,
    const void *data, size_t len)
{
	return actor_tell_timeout(a, ref, tag, data, len, SHM_TIMEOUT_DEFAULT);
}

int
actor_tell_path(struct actor *a, const char *path, uint32_t tag,
    const void *data, size_t len)
{
	struct remote_env env;
	struct actor_ref ref;
	int rc;

	if ((rc = remote_path_env(path, tag, data, len, &env)) != 0)
		return rc < 0 ? rc : remote_tell(a, &env, SHM_TIMEOUT_DEFAULT);
	if ((rc = actor_lookup(a, path, &ref)) < 0)
		return rc;
	ref.incarnation = ACTOR_ANY;
	return actor_tell(a, ref, tag, data, len);
}

/*
 * An answer on the asker's reply lane, if that asker still lives and its
 * ask still waits: the answer takes a cell only once it claimed the ask's
 * reply slot (replyslots.c); one for an ask that is over is dropped and
 * counted late there.  m->sender names the replier.
 */
static int
reply_to(struct shm_producer *p, struct shm_arena *arena,
    const struct shm_msg *ask, struct shm_msg *m, const void *data)
{
	uint32_t to = ask->sender.index;
	int rc;

	m->corr = ask->corr;
	if (to >= shm_nmailboxes(arena) ||
	    shm_actor_incarnation(arena, to) != ask->sender.incarnation) {
		shm_dl_put(arena, to, SHM_LANE_REPLY, SHM_DL_STALE_REF, m,
		    data);
		return ACTOR_ESTALE;
	}
	if (!slot_claim(arena, ask, m->sender.index, m->sender.incarnation))
		return 0;
	if ((rc = shm_send(p, to, SHM_LANE_REPLY, m, data, 0)) < 0)
		slot_unclaim(arena, ask);
	return rc;
}

/*
 * An error answer to an ask.  With an owed list (actord at a death, a
 * worker refusing a stale ask), an answer that finds the asker's reply
 * lane full is owed (owed.c) instead of dead-lettered, so that the ask
 * fails at once rather than by its timeout.
 */
int
send_error_reply(struct shm_producer *p, struct shm_arena *arena,
    const struct shm_msg *ask, int code, const char *text,
    struct actor_owed **owed)
{
	struct actor_error_reply er;
	struct shm_msg m;
	uint32_t to = ask->sender.index;
	size_t len, max;
	int rc;

	if ((ask->flags & SHM_MSG_ASK) == 0)
		return ACTOR_ENOTASK;
	memset(&er, 0, sizeof(er));
	er.code = code;
	snprintf(er.text, sizeof(er.text), "%s", text != NULL ? text :
	    actor_strerror(code));
	/* The text up to its NUL, cut to what the asker's lane takes. */
	len = sizeof(er.code) + strlen(er.text) + 1;
	max = to < shm_nmailboxes(arena) ? shm_payload_max(arena, to) : len;
	if (len > max && max > sizeof(er.code)) {
		len = max;
		er.text[len - sizeof(er.code) - 1] = '\0';
	} else if (len > max)
		len = sizeof(er.code);
	memset(&m, 0, sizeof(m));
	m.tag = 0;
	m.len = (uint32_t)len;
	m.flags = SHM_MSG_REPLY | SHM_MSG_ERROR;
	if (owed == NULL || to >= shm_nmailboxes(arena) ||
	    shm_actor_incarnation(arena, to) != ask->sender.incarnation)
		return reply_to(p, arena, ask, &m, &er);
	m.corr = ask->corr;
	if (!slot_claim(arena, ask, 0, 0))
		return 0;		/* the ask is over: nobody waits */
	if ((rc = owed_send(p, arena, to, ask->sender.incarnation, UINT32_MAX,
	    SHM_LANE_REPLY, &m, &er, owed)) < 0)
		slot_unclaim(arena, ask);
	return rc;
}

/*
 * An answer to ask, from this actor.  One larger than the asker's
 * max_message cannot travel (a dead letter "oversize"): the
 * asker gets ACTOR_EOVERSIZE at once rather than waiting out its
 * timeout, and so does the caller.
 */
int
send_answer(struct actor *a, const struct shm_msg *ask, uint32_t tag,
    const void *data, size_t len)
{
	struct shm_msg m;
	int rc;

	if (len > UINT32_MAX || (data == NULL && len > 0))
		return ACTOR_EINVAL;
	memset(&m, 0, sizeof(m));
	m.tag = tag;
	m.len = (uint32_t)len;
	m.sender.index = (uint32_t)a->idx;	/* it has a mailbox */
	m.sender.incarnation = a->incarnation;
	m.flags = SHM_MSG_REPLY;
	rc = reply_to(a->prod, a->arena, ask, &m, data);
	if (rc == ACTOR_EOVERSIZE)
		(void)send_error_reply(a->prod, a->arena, ask, ACTOR_EOVERSIZE,
		    "the answer is larger than the asker's max_message", NULL);
	return rc;
}

int
actor_reply(struct actor *a, uint32_t tag, const void *data, size_t len)
{
	int rc;

	if (!a->holding)
		return ACTOR_EINVAL;
	if (actor_forked(a))
		return ACTOR_EFORKED;
	if ((a->cur.flags & SHM_MSG_ASK) == 0)
		return ACTOR_ENOTASK;
	if (len > UINT32_MAX || (data == NULL && len > 0))
		return ACTOR_EINVAL;
	rc = send_answer(a, &a->cur, tag, data, len);
	inhand_answered(a);	/* after: a death mid-send is actord's */
	return rc;
}

/*
 * The ask in hand has its answer (or never will from us): actord need
 * not fail it if we die before we are done with it (reaped.c).  Only the
 * consumer writes it, and actord reads it once the consumer is dead.
 */
void
inhand_answered(struct actor *a)
{
	atomic_store_explicit(&a->hdr->answered, atomic_load_explicit(
	    &a->hdr->inhand_id, memory_order_relaxed), memory_order_relaxed);
}

/*
 * An error answer to the ask in hand: code >= 0 is the application's own
 * (the asker's ask returns ACTOR_EREPLY and reads it with
 * actor_error_code), code < 0 one of the runtime's ACTOR_E* codes, which
 * the asker's ask returns as is.
 */
int
actor_reply_error(struct actor *a, int code, const char *text)
{
	int rc;

	if (!a->holding)
		return ACTOR_EINVAL;
	if (actor_forked(a))
		return ACTOR_EFORKED;
	if (code < 0 && code < ACTOR_ELAST)
		return ACTOR_EINVAL;
	rc = send_error_reply(a->prod, a->arena, &a->cur, code, text, NULL);
	if (a->cur.flags & SHM_MSG_ASK)
		inhand_answered(a);	/* after the send, as actor_reply */
	return rc;
}

_Static_assert(ACTOR_MSG_KEYED == SHM_MSG_COALESCE, "keyed flag");
_Static_assert(ACTOR_KEY_MAX == CORR_ID_MASK, "key bits");
