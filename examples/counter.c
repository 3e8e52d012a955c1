/*
 * counter.c: one shard of the seeds' counter service, as an actord worker.
 * Run it as a shard group (instances = 16): every process that routes a key
 * with actor_shard() reaches the shard that owns it, and each shard keeps
 * its keys' counts in committed state, so a crash loses no increment and
 * counts none twice.
 *
 *   tell INC, payload: the key          add one to the key's count
 *   ask  GET, payload: the key          answer: the count, a uint64_t
 *   tell ROUTE, payload: the key        INC to the shard that owns the key,
 *                                       on whichever node runs it
 *   ask  WHERE, payload: the key        answer: that shard's path, text
 *
 * actord.conf:
 *   { name = "counter"; exec = ["/usr/local/libexec/counter"];
 *     ready = "actor"; instances = 16;
 *     mailbox = { capacity = 4096; state = 8192; }; }
 */
#include <err.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "worker/actor.h"

#define KEYS	128		/* keys one shard keeps */
#define KEYLEN	48

enum { INC = 1, GET = 2, ROUTE = 3, WHERE = 4 };

struct entry {
	char		 key[KEYLEN];
	uint64_t	 count;
};

struct shard {
	struct entry	 e[KEYS];	/* the committed state, as is */
};

static struct entry *
find(struct shard *s, const void *key, size_t len, int create)
{
	uint32_t i, h;

	if (len == 0 || len >= KEYLEN)
		return NULL;
	h = (uint32_t)actor_shard_hash(key, len);
	for (i = 0; i < KEYS; i++) {
		struct entry *e = &s->e[(h + i) % KEYS];

		if (e->key[0] == '\0') {
			if (!create)
				return NULL;
			memcpy(e->key, key, len);
			return e;
		}
		if (strlen(e->key) == len && memcmp(e->key, key, len) == 0)
			return e;
	}
	return NULL;
}

/* The group this shard is of: its path without "/N". */
static int
group_of(struct actor *a, char *group, size_t len)
{
	const char *name = actor_name(a), *slash = strrchr(name, '/');

	if (slash == NULL || slash == name || (size_t)(slash - name) >= len)
		return -1;
	memcpy(group, name, (size_t)(slash - name));
	group[slash - name] = '\0';
	return 0;
}

/* ROUTE and WHERE: the owner of the key, by actor_shard(). */
static void
route(struct actor *a, const struct actor_msg *m)
{
	char group[ACTOR_PATH_MAX], path[ACTOR_PATH_MAX + 16];
	struct actor_ref ref;
	int s, len;

	if (group_of(a, group, sizeof(group)) < 0 ||
	    (s = actor_shard(a, group, m->data, m->len, &ref)) < 0) {
		if (m->tag == WHERE)
			(void)actor_reply_error(a, 1, "no shard group");
		return;
	}
	if (m->tag == ROUTE) {
		(void)actor_tell(a, ref, INC, m->data, m->len);
		return;
	}
	len = snprintf(path, sizeof(path), "%s/%d", group, s);
	(void)actor_reply(a, WHERE, path, (size_t)len);
}

static int
handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	struct shard *s = arg;
	struct entry *e;
	uint64_t n;

	switch (m->tag) {
	case INC:
		if ((e = find(s, m->data, m->len, 1)) == NULL)
			break;		/* full, or a bad key: dropped */
		e->count++;
		/* With the message in hand: counted exactly once. */
		if (actor_commit(a, s, sizeof(*s)) < 0)
			errx(1, "commit: the state region is too small");
		break;
	case GET:
		e = find(s, m->data, m->len, 0);
		n = e != NULL ? e->count : 0;
		(void)actor_reply(a, GET, &n, sizeof(n));
		break;
	case ROUTE:
	case WHERE:
		route(a, m);
		break;
	default:
		break;
	}
	return 0;
}

int
main(void)
{
	static struct shard s;
	struct actor *a;
	char err[ACTOR_ERRBUF];
	size_t len = 0;
	int rc;

	if (actor_attach(&a, err, sizeof(err)) < 0)
		errx(1, "%s", err);
	/* No snapshot yet: zero.  A load that failed is no reason to. */
	if ((rc = actor_load(a, &s, sizeof(s), &len)) == ACTOR_ENOSTATE)
		memset(&s, 0, sizeof(s));
	else if (rc < 0 || len != sizeof(s))
		errx(1, "load: %s (%zu bytes of %zu)", actor_strerror(rc), len,
		    sizeof(s));
	if (actor_ready(a) < 0)
		errx(1, "cannot say ready");
	(void)actor_run(a, handle, NULL, &s);
	actor_close(a);
	return 0;
}
