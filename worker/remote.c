/*
 * remote.c: libactor's side of other nodes.  A path "b:/counter" names the
 * actor /counter of node b; a reference with REMOTE_BIT (remote.h) names
 * an actor of a peer as actor_lookup() resolved it.  Neither is sent by
 * libactor to the network: a tell or an ask for another node goes, as an
 * envelope (remote_env_put), to the local gateway's mailbox (/@gateway),
 * which forwards it (gateway/).  An ask's answer comes back from the
 * gateway on the asker's reply lane, as any answer, so the caller cannot
 * tell the difference but in latency.
 *
 * Owns: the routing of a remote tell, ask or lookup to the gateway
 * (envelope.c owns the envelope's bytes).  Must never wait longer than
 * the caller's timeout.
 */
#include <stdlib.h>
#include <string.h>

#include "worker/actor_impl.h"
#include "worker/remote.h"

#define GATEWAY_PATH	"/@gateway"

static int	 wrap(struct actor *, const struct remote_env *,
		    struct actor_ref *, void **, size_t *, void *, size_t);
static int	 ask(struct actor *, struct remote_env *, int64_t, unsigned,
		    struct actor_msg *, uint64_t *);

/* The local gateway's mailbox, the live incarnation.  ACTOR_ENOENT: none. */
int
remote_gateway(struct actor *a, struct actor_ref *gw)
{
	int idx;

	if ((idx = shm_lookup(a->arena, GATEWAY_PATH)) < 0)
		return idx == SHM_ENOENT ? ACTOR_ENOENT : idx;
	gw->index = (uint32_t)idx;
	gw->incarnation = ACTOR_ANY;
	return 0;
}

/*
 * env as the envelope for the gateway: *gw its mailbox, *buf its bytes
 * (stack, or malloc'd: free it if not stack).  0 or an ACTOR_E* code.
 */
static int
wrap(struct actor *a, const struct remote_env *env, struct actor_ref *gw,
    void **buf, size_t *len, void *stack, size_t stacklen)
{
	int rc;

	if ((rc = remote_gateway(a, gw)) < 0)
		return rc;
	return remote_env_put(env, buf, len, stack, stacklen);
}

int
remote_tell(struct actor *a, struct remote_env *env, int64_t timeout_ns)
{
	struct actor_ref gw;
	uint8_t stack[1024];
	void *buf;
	size_t len;
	int rc;

	if (env->kind != WK_WATCH && env->kind != WK_UNWATCH)
		env->kind = WK_TELL;
	if ((rc = wrap(a, env, &gw, &buf, &len, stack, sizeof(stack))) < 0)
		return rc;
	rc = actor_tell_timeout(a, gw, REMOTE_TAG, buf, len, timeout_ns);
	if (buf != stack)
		free(buf);
	return rc;
}

/* An ask (or a lookup) of env; reply NULL: only sent, *corr its id. */
static int
ask(struct actor *a, struct remote_env *env, int64_t timeout_ns,
    unsigned flags, struct actor_msg *reply, uint64_t *corr)
{
	struct actor_ref gw;
	uint8_t stack[1024];
	void *buf;
	size_t len;
	int rc;

	if ((rc = wrap(a, env, &gw, &buf, &len, stack, sizeof(stack))) < 0)
		return rc;
	if (reply != NULL)
		rc = actor_ask(a, gw, REMOTE_TAG, buf, len, timeout_ns, reply);
	else
		rc = actor_ask_send_with(a, gw, REMOTE_TAG, buf, len,
		    timeout_ns, flags, corr);
	if (buf != stack)
		free(buf);
	return rc;
}

int
remote_ask(struct actor *a, struct remote_env *env, int64_t timeout_ns,
    struct actor_msg *reply)
{
	if (env->kind != WK_LOOKUP)
		env->kind = WK_ASK;
	return ask(a, env, timeout_ns, 0, reply, NULL);
}

int
remote_ask_send(struct actor *a, struct remote_env *env, int64_t timeout_ns,
    unsigned flags, uint64_t *corr)
{
	env->kind = WK_ASK;
	return ask(a, env, timeout_ns, flags, NULL, corr);
}

/*
 * path as an envelope with tag and data, if it names another node: 1,
 * 0 for a local path, or ACTOR_EINVAL.
 */
int
remote_path_env(const char *path, uint32_t tag, const void *data,
    size_t len, struct remote_env *env)
{
	int rc;

	if ((rc = remote_split(path, env)) <= 0)
		return rc;
	env->tag = tag;
	env->data = data;
	env->len = len;
	return 1;
}

/*
 * actor_lookup("b:/path"): the gateway asks node b and answers with the
 * remote reference (8 bytes: index, incarnation).
 */
int
remote_lookup(struct actor *a, const char *path, struct actor_ref *ref)
{
	struct remote_env env;
	struct actor_msg reply;
	int rc;

	if ((rc = remote_split(path, &env)) <= 0)
		return rc == 0 ? ACTOR_ENOENT : rc;
	env.kind = WK_LOOKUP;
	if ((rc = remote_ask(a, &env, REMOTE_LOOKUP_NS, &reply)) < 0)
		return rc;
	if (reply.len != sizeof(*ref))
		return ACTOR_EPROTO;
	memcpy(ref, reply.data, sizeof(*ref));
	if (!REMOTE_IS(ref->index))
		return ACTOR_EPROTO;
	return 0;
}

/*
 * The gateway's delivery of a tell from afar to a local actor, with the
 * sender it names (a remote reference, or {UINT32_MAX, 0} for a client):
 * never waits for room (a full mailbox makes a dead letter).
 */
int
remote_deliver(struct actor *a, struct actor_ref to, struct actor_ref from,
    uint32_t tag, const void *data, size_t len)
{
	return send_tell(a, to, from, tag, data, len, 0);
}

/* actor_watch or actor_unwatch (kind) of a remote reference. */
int
remote_watch(struct actor *a, struct actor_ref ref, uint8_t kind)
{
	struct remote_env env;

	/* A shard's placement is no actor to watch: look it up by path. */
	if (REMOTE_IS_SHARD(ref.index))
		return ACTOR_EINVAL;
	remote_env_ref(&env, ref, kind, 0, NULL, 0);
	return remote_tell(a, &env, SHM_TIMEOUT_DEFAULT);
}

/* The gateway's Terminated for a remote actor, to a local watcher. */
int
remote_terminated(struct actor *a, struct actor_ref watcher,
    const struct actor_terminated *t)
{
	return watch_terminated_to(a, watcher, t);
}
