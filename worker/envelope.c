/*
 * envelope.c: the bytes of the envelope a local actor hands the gateway
 * for another node (remote.h), and the node:/path syntax.  Shared by
 * libactor (remote.c builds envelopes) and the gateway (which reads them
 * from its mailbox, where any process of the tree may have written
 * anything).
 *
 * Owns: the envelope's layout.  Must never trust an envelope it reads:
 * remote_env_get checks every length and name before anything is used.
 */
#include <stdlib.h>
#include <string.h>

#include "worker/remote.h"

/*
 * Is path "node:/path"?  1 with env's node and path (WF_PATH), 0 for a
 * local path, ACTOR_EINVAL for a bad node name or path after a colon.
 */
int
remote_split(const char *path, struct remote_env *env)
{
	const char *colon, *slash;
	size_t n;

	if (path == NULL || (colon = strchr(path, ':')) == NULL)
		return 0;
	if ((slash = strchr(path, '/')) != NULL && slash < colon)
		return 0;		/* a local path with a colon in it */
	n = (size_t)(colon - path);
	if (!wire_name_ok(path, n) || !wire_path_ok(colon + 1,
	    strlen(colon + 1)))
		return ACTOR_EINVAL;
	memset(env, 0, sizeof(*env));
	memcpy(env->node, path, n);
	env->node[n] = '\0';
	env->flags = WF_PATH;
	env->path = colon + 1;
	env->path_len = (uint16_t)strlen(colon + 1);
	return 1;
}

/* An envelope for a remote reference. */
void
remote_env_ref(struct remote_env *env, struct actor_ref ref, uint8_t kind,
    uint32_t tag, const void *data, size_t len)
{
	memset(env, 0, sizeof(*env));
	env->kind = kind;
	env->peer = (uint16_t)REMOTE_PEER(ref.index);
	env->gen = (uint8_t)REMOTE_GENOF(ref.index);
	env->to_index = REMOTE_INDEX(ref.index);
	env->to_inc = ref.incarnation;
	env->tag = tag;
	env->data = data;
	env->len = len;
}

/*
 * The envelope's bytes: in stack if they fit, else malloc'd (*buf is then
 * not stack: the caller frees it).  0 or ACTOR_EINVAL, ACTOR_ESYS.
 */
int
remote_env_put(const struct remote_env *env, void **buf, size_t *len,
    void *stack, size_t stacklen)
{
	size_t nlen = (env->flags & WF_PATH) ? strlen(env->node) : 0;
	size_t total = REMOTE_ENV + nlen + env->path_len + env->len;
	uint8_t *p;
	uint16_t u16;

	if (env->len > UINT32_MAX || (env->data == NULL && env->len > 0))
		return ACTOR_EINVAL;
	if (total <= stacklen)
		p = stack;
	else if ((p = malloc(total)) == NULL)
		return ACTOR_ESYS;
	p[0] = env->kind;
	p[1] = env->flags;
	p[2] = (uint8_t)nlen;
	p[3] = env->gen;
	u16 = env->path_len;
	memcpy(p + 4, &u16, 2);
	u16 = env->peer;
	memcpy(p + 6, &u16, 2);
	memcpy(p + 8, &env->tag, 4);
	memcpy(p + 12, &env->to_index, 4);
	memcpy(p + 16, &env->to_inc, 4);
	memcpy(p + REMOTE_ENV, env->node, nlen);
	if (env->path_len > 0)
		memcpy(p + REMOTE_ENV + nlen, env->path, env->path_len);
	if (env->len > 0)
		memcpy(p + REMOTE_ENV + nlen + env->path_len, env->data,
		    env->len);
	*buf = p;
	*len = total;
	return 0;
}

/* The envelope in buf, checked whole.  0, or ACTOR_EINVAL. */
int
remote_env_get(const void *buf, size_t len, struct remote_env *env)
{
	const uint8_t *p = buf;
	size_t nlen, off;

	memset(env, 0, sizeof(*env));
	if (buf == NULL || len < REMOTE_ENV)
		return ACTOR_EINVAL;
	env->kind = p[0];
	env->flags = p[1];
	nlen = p[2];
	env->gen = p[3];
	memcpy(&env->path_len, p + 4, 2);
	memcpy(&env->peer, p + 6, 2);
	memcpy(&env->tag, p + 8, 4);
	memcpy(&env->to_index, p + 12, 4);
	memcpy(&env->to_inc, p + 16, 4);
	if (env->kind != WK_TELL && env->kind != WK_ASK &&
	    env->kind != WK_LOOKUP && env->kind != WK_WATCH &&
	    env->kind != WK_UNWATCH)
		return ACTOR_EINVAL;
	if ((env->flags & ~WF_PATH) != 0)
		return ACTOR_EINVAL;
	if (env->flags & WF_PATH) {
		if (len - REMOTE_ENV < nlen + env->path_len ||
		    !wire_name_ok((const char *)p + REMOTE_ENV, nlen) ||
		    !wire_path_ok((const char *)p + REMOTE_ENV + nlen,
		    env->path_len))
			return ACTOR_EINVAL;
		memcpy(env->node, p + REMOTE_ENV, nlen);
		env->node[nlen] = '\0';
		env->path = (const char *)p + REMOTE_ENV + nlen;
	} else if (nlen != 0 || env->path_len != 0 ||
	    env->kind == WK_LOOKUP)
		return ACTOR_EINVAL;
	else if (env->peer == REMOTE_SHARD_PEER) {
		/* A shard of a group spanning nodes (REMOTE_SHARD_REF). */
		if (env->to_index > 0xffffu || env->kind == WK_WATCH ||
		    env->kind == WK_UNWATCH)
			return ACTOR_EINVAL;
	} else if (env->peer >= REMOTE_PEERS_MAX ||
	    env->to_index >= WIRE_INDEX_MAX)
		return ACTOR_EINVAL;
	if ((env->kind == WK_WATCH || env->kind == WK_UNWATCH) &&
	    (env->flags & WF_PATH))
		return ACTOR_EINVAL;
	off = REMOTE_ENV + nlen + env->path_len;
	env->data = p + off;
	env->len = len - off;
	return 0;
}
