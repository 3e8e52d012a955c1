/*
 * shard.c: routing a key to the shard that owns it.  A shard group is a
 * worker configured with instances = N: actors GROUP/0 .. GROUP/N-1.  The
 * owner of a key is
 *
 *	h     = FNV-1a 64 over the key's bytes
 *		(offset basis 0xcbf29ce484222325, prime 0x100000001b3)
 *	shard = jump consistent hash of h into N buckets
 *		(Lamping and Veach, 2014: b = -1, j = 0; while j < N:
 *		 b = j; h = h * 2862933555777941757 + 1 (mod 2^64);
 *		 j = floor((b + 1) * 2^31 / ((h >> 33) + 1)) in IEEE doubles)
 *
 * so any process, in any language, computes the same shard; libactor(3)
 * documents it with test vectors.  A group that spans nodes (SHARDS_ENV)
 * has N shards wherever they run: a shard of another node is a remote
 * reference (REMOTE_SHARD_REF) the gateway routes to the node its
 * placement names (placement.c), so the caller tells or asks it as any.
 *
 * Owns: the per-handle cache of one group's mailbox indexes, refreshed
 * when the actor table's paths change (shm_paths_gen).  Must never route
 * by anything but the key's bytes and N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/actor_impl.h"
#include "worker/remote.h"

uint64_t
actor_shard_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint32_t
actor_shard_of(const void *key, size_t len, uint32_t nshards)
{
	uint64_t h = actor_shard_hash(key, len);
	int64_t b = -1, j = 0;

	if (nshards == 0)
		return 0;
	while (j < (int64_t)nshards) {
		b = j;
		h = h * 2862933555777941757ULL + 1;
		j = (int64_t)((double)(b + 1) * ((double)(1LL << 31) /
		    (double)((h >> 33) + 1)));
	}
	return (uint32_t)b;
}

/*
 * The instances of group if it spans nodes (SHARDS_ENV, which actord sets
 * on a node: "PATH=N PATH=N"), else 0.
 */
static uint32_t
spanning(const char *group)
{
	const char *e = getenv(SHARDS_ENV), *eq;
	size_t glen = strlen(group);
	unsigned long v;
	char *end;

	while (e != NULL && *e != '\0') {
		while (*e == ' ')
			e++;
		if ((eq = strchr(e, '=')) == NULL)
			return 0;
		v = strtoul(eq + 1, &end, 10);
		if ((size_t)(eq - e) == glen && strncmp(e, group, glen) == 0)
			return v <= 1024 ? (uint32_t)v : 0;
		e = end;
	}
	return 0;
}

/*
 * A group spanning nodes: its n shards, each this node's mailbox or, for
 * a shard the placement puts on another node, the remote reference the
 * gateway routes (REMOTE_SHARD_REF).  0 or ACTOR_ESYS.
 */
static int
group_spanning(struct actor *a, const char *group, uint32_t n,
    uint32_t **idxp)
{
	char path[ACTOR_PATH_MAX];
	uint32_t s, id = placement_group_id(group), *idx;
	int i;

	if ((idx = calloc(n, sizeof(*idx))) == NULL)
		return ACTOR_ESYS;
	for (s = 0; s < n; s++) {
		snprintf(path, sizeof(path), "%s/%u", group, s);
		i = shm_lookup(a->arena, path);
		idx[s] = i >= 0 ? (uint32_t)i : REMOTE_SHARD_REF(id, s);
	}
	*idxp = idx;
	return 0;
}

/*
 * The members GROUP/0 .. GROUP/N-1 as the actor table names them now, in
 * *idx (malloc'd) and *n.  0, ACTOR_ENOENT or ACTOR_ESYS.
 */
static int
group_lookup(struct actor *a, const char *group, uint32_t **idxp,
    uint32_t *np)
{
	char path[ACTOR_PATH_MAX];
	uint32_t n = 0, *idx = NULL, *t;
	int i;

	if ((n = spanning(group)) > 0) {
		*np = n;
		return group_spanning(a, group, n, idxp);
	}
	for (;;) {
		if (snprintf(path, sizeof(path), "%s/%u", group, n) >=
		    (int)sizeof(path))
			break;
		if ((i = shm_lookup(a->arena, path)) < 0)
			break;
		if ((t = realloc(idx, (n + 1) * sizeof(*idx))) == NULL) {
			free(idx);
			return ACTOR_ESYS;
		}
		idx = t;
		idx[n++] = (uint32_t)i;
	}
	if (n == 0)
		return ACTOR_ENOENT;
	*idxp = idx;
	*np = n;
	return 0;
}

/*
 * The members of a group, looked up again only when a path of the actor
 * table changed since (actorctl add or remove, a reload): one load of a
 * word that rarely changes per call.  A lookup that raced with a change
 * is kept under the number seen before it, so the next call looks again.
 */
int
actor_shard_group(struct actor *a, const char *group, uint32_t *nshards)
{
	struct shard_cache *c = &a->shard;
	uint32_t n, *idx;
	uint64_t gen;
	int rc;

	if (group == NULL || strlen(group) >= sizeof(c->group))
		return ACTOR_EINVAL;
	gen = shm_paths_gen(a->arena);
	if (c->idx != NULL && c->gen == gen && strcmp(c->group, group) == 0) {
		*nshards = c->n;
		return 0;
	}
	if ((rc = group_lookup(a, group, &idx, &n)) < 0)
		return rc;
	free(c->idx);
	c->idx = idx;
	c->n = n;
	c->gen = gen;
	snprintf(c->group, sizeof(c->group), "%s", group);
	*nshards = n;
	return 0;
}

/* The shard that owns the key, as a reference to whichever incarnation lives. */
int
actor_shard(struct actor *a, const char *group, const void *key, size_t len,
    struct actor_ref *ref)
{
	struct ar_hdr *h;
	uint32_t n, s;
	int rc;

	if ((rc = actor_shard_group(a, group, &n)) < 0)
		return rc;
	s = actor_shard_of(key, len, n);
	ref->index = a->shard.idx[s];
	ref->incarnation = ACTOR_ANY;
	/* Another node's shard: counted by its own node's gateway. */
	if (!REMOTE_IS(ref->index) &&
	    (h = ar_hdr(a->arena, ref->index, NULL)) != NULL)
		atomic_fetch_add_explicit(&h->shard_msgs, 1,
		    memory_order_relaxed);
	return (int)s;
}
