/*
 * actor_echo.c: a libactor worker for the messaging tests (ready =
 * "actor").  Each tag does one thing:
 *
 *	1  ask: answer with the payload
 *	2  never answer (the asker times out)
 *	3  exit 1 while handling it (the actor crashes with it in hand)
 *	4  tell: append "PATH got PAYLOAD" to $TW_DIR/seen
 *	5  ask: answer with the payload after 400 ms (too late for a short ask)
 *	6  ask: an error of the application's own: code 42, "no such key: "
 *	   and the payload
 *	7  ask: the number of shards of the group named by the payload, as
 *	   this long-lived handle sees it (actor_shard_group), in decimal
 *	8  ask: payload "PATH N": ask PATH N times (tag 1, 1 s each), as a
 *	   caller retrying through a restart would; answer how many failed
 *	   at once with ACTOR_EDOWN, in decimal
 *	9  ask: payload "PATH N": N keyed tells to PATH (actor_tell_keyed,
 *	   tag 10, key i % 4, payload "KEY=i" for i in [0, N)); answer how
 *	   many failed, in decimal
 *	10 tell: a slow handler: 1 ms, then as tag 4
 *	37 tell: tell the sender back, tag 38, the same payload (a sender on
 *	   another node is a remote reference: it goes through the gateways)
 *	38 tell: as 4
 *	41 ask: payload "PATH N": N tells to PATH (tag 99: ignored), none
 *	   waiting for room, back to back: a hot producer, which takes
 *	   the main lane (shm/express.c); answer how many failed, in decimal
 *
 * and, for the gateway tests, asks answered "rc=N" (N: what libactor
 * returned) and, after an ask, " " and the answer's payload:
 *
 *	30  actor_lookup(payload, such as "b:/echo"): keep the reference
 *	31  actor_tell(the reference, tag 4, "via-ref")
 *	32  actor_ask(the reference, tag 1, "via-ref"), 5 s
 *	33  actor_ask_path(payload, tag 1, "by-path"), 5 s
 *	34  actor_tell_path(payload, tag 37, "ping"): the echo there tells
 *	    us back, tag 38
 *	35  actor_watch(the reference): its Terminated is appended to
 *	    $TW_DIR/seen as "PATH got terminated gone=N"
 *
 * and, for tools/bench/bench_gateway, a sink: tag 39 (tell) counts, tag
 * 40 (ask) answers the count so far, a uint64_t.
 *
 * Anything else is ignored.
 */
#include <err.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/actor.h"

static int	handle(struct actor *, const struct actor_msg *, void *);
static void	seen(struct actor *, const struct actor_msg *);
static void	shards(struct actor *, const struct actor_msg *);
static void	retry(struct actor *, const struct actor_msg *);
static void	keyed(struct actor *, const struct actor_msg *);
static void	flood(struct actor *, const struct actor_msg *);
static bool	path_count(struct actor *, const struct actor_msg *,
		    struct actor_ref *, int *);
struct echo {
	struct actor_ref kept;		/* the reference of tag 10 */
	uint64_t	 count;		/* tag 19 */
};

static void	remote(struct actor *, const struct actor_msg *,
		    struct actor_ref *);
static void	answer(struct actor *, int, const struct actor_msg *);

/* A payload "PATH N", looked up; else answered "bad request". */
static bool
path_count(struct actor *a, const struct actor_msg *m, struct actor_ref *to,
    int *n)
{
	char req[ACTOR_PATH_MAX + 16], path[ACTOR_PATH_MAX];
	int len;

	len = snprintf(req, sizeof(req), "%.*s", (int)(m->len <
	    sizeof(req) - 1 ? m->len : sizeof(req) - 1),
	    (const char *)m->data);
	if (len <= 0 || sscanf(req, "%255s %d", path, n) != 2 ||
	    actor_lookup(a, path, to) < 0) {
		(void)actor_reply_error(a, 1, "bad request");
		return false;
	}
	return true;
}

static void
keyed(struct actor *a, const struct actor_msg *m)
{
	char text[32];
	struct actor_ref to;
	int i, n = 0, failed = 0, len;

	if (!path_count(a, m, &to, &n))
		return;
	to.incarnation = ACTOR_ANY;
	for (i = 0; i < n; i++) {
		len = snprintf(text, sizeof(text), "%d=%d", i % 4, i);
		failed += actor_tell_keyed(a, to, 10, (uint64_t)(i % 4),
		    text, (size_t)len) < 0;
	}
	len = snprintf(text, sizeof(text), "%d", failed);
	(void)actor_reply(a, 9, text, (size_t)len);
}

static void
flood(struct actor *a, const struct actor_msg *m)
{
	char text[32];
	struct actor_ref to;
	int i, n = 0, failed = 0, len;

	if (!path_count(a, m, &to, &n))
		return;
	for (i = 0; i < n; i++)
		failed += actor_tell_timeout(a, to, 99, &i, sizeof(i), 0) < 0;
	len = snprintf(text, sizeof(text), "%d", failed);
	(void)actor_reply(a, 41, text, (size_t)len);
}

static void
retry(struct actor *a, const struct actor_msg *m)
{
	char text[32];
	struct actor_msg r;
	struct actor_ref to;
	int i, n = 0, down = 0, len;

	if (!path_count(a, m, &to, &n))
		return;
	for (i = 0; i < n; i++)
		down += actor_ask(a, to, 1, "x", 1, 1000000000LL, &r) ==
		    ACTOR_EDOWN;
	len = snprintf(text, sizeof(text), "%d", down);
	(void)actor_reply(a, 8, text, (size_t)len);
}

static void
shards(struct actor *a, const struct actor_msg *m)
{
	char group[ACTOR_PATH_MAX], text[32];
	uint32_t n = 0;
	int rc, len;

	len = snprintf(group, sizeof(group), "%.*s", (int)(m->len <
	    sizeof(group) - 1 ? m->len : sizeof(group) - 1),
	    (const char *)m->data);
	if ((rc = actor_shard_group(a, group, &n)) < 0) {
		(void)actor_reply_error(a, 1, actor_strerror(rc));
		return;
	}
	len = snprintf(text, sizeof(text), "%u", n);
	(void)actor_reply(a, 7, text, (size_t)len);
}

static void
seen(struct actor *a, const struct actor_msg *m)
{
	const char *dir = getenv("TW_DIR");
	char path[512], line[512];
	int fd, n;

	if (dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/seen", dir);
	n = snprintf(line, sizeof(line), "%s got %.*s\n", actor_name(a),
	    (int)(m->len < 200 ? m->len : 200), (const char *)m->data);
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) == -1)
		return;
	(void)write(fd, line, (size_t)n);
	close(fd);
}

static void
answer(struct actor *a, int rc, const struct actor_msg *r)
{
	char out[512];
	int n;

	n = snprintf(out, sizeof(out), "rc=%d", rc);
	if (r != NULL && rc == 0)
		n += snprintf(out + n, sizeof(out) - (size_t)n, " %.*s",
		    (int)(r->len < 400 ? r->len : 400),
		    (const char *)r->data);
	(void)actor_reply(a, 0, out, (size_t)n);
}

/* Tags 30 to 35: through the gateway; kept is the reference of tag 30. */
static void
remote(struct actor *a, const struct actor_msg *m, struct actor_ref *kept)
{
	struct actor_msg r;
	char path[256];
	int rc;

	snprintf(path, sizeof(path), "%.*s", (int)(m->len < 255 ? m->len :
	    255), (const char *)m->data);
	switch (m->tag) {
	case 30:
		answer(a, actor_lookup(a, path, kept), NULL);
		break;
	case 31:
		answer(a, actor_tell(a, *kept, 4, "via-ref", 7), NULL);
		break;
	case 32:
		rc = actor_ask(a, *kept, 1, "via-ref", 7, 5000000000LL, &r);
		answer(a, rc, &r);
		break;
	case 33:
		rc = actor_ask_path(a, path, 1, "by-path", 7, 5000000000LL, &r);
		answer(a, rc, &r);
		break;
	case 34:
		answer(a, actor_tell_path(a, path, 37, "ping", 4), NULL);
		break;
	default:
		answer(a, actor_watch(a, *kept), NULL);
		break;
	}
}

static int
handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	char text[ACTOR_ERRTEXT_MAX];
	struct echo *e = arg;

	if (m->tag == 39) {
		e->count++;
		return 0;
	}
	if (m->tag == 40) {
		(void)actor_reply(a, 40, &e->count, sizeof(e->count));
		return 0;
	}
	if (m->tag == ACTOR_SYS_TERMINATED && m->len ==
	    sizeof(struct actor_terminated)) {
		struct actor_terminated t;
		struct actor_msg fake = *m;
		char line[64];

		memcpy(&t, m->data, sizeof(t));
		fake.len = (uint32_t)snprintf(line, sizeof(line),
		    "terminated gone=%u", t.gone);
		fake.data = line;
		seen(a, &fake);
		return 0;
	}
	if (m->tag >= 30 && m->tag <= 35) {
		remote(a, m, &e->kept);
		return 0;
	}
	switch (m->tag) {
	case 1:
		(void)actor_reply(a, 1, m->data, m->len);
		break;
	case 3:
		_exit(1);
	case 4:
	case 38:
		seen(a, m);
		break;
	case 37:
		(void)actor_tell(a, m->sender, 38, m->data, m->len);
		break;
	case 5:
		usleep(400 * 1000);
		(void)actor_reply(a, 5, m->data, m->len);
		break;
	case 6:
		snprintf(text, sizeof(text), "no such key: %.*s",
		    (int)(m->len < 200 ? m->len : 200), (const char *)m->data);
		(void)actor_reply_error(a, 42, text);
		break;
	case 7:
		shards(a, m);
		break;
	case 8:
		retry(a, m);
		break;
	case 9:
		keyed(a, m);
		break;
	case 41:
		flood(a, m);
		break;
	case 10:
		usleep(1000);
		seen(a, m);
		break;
	default:
		break;
	}
	return 0;
}

int
main(void)
{
	struct actor *a;
	struct echo e;
	char err[ACTOR_ERRBUF];

	if (actor_attach(&a, err, sizeof(err)) < 0)
		errx(1, "%s", err);
	if (actor_ready(a) < 0)
		errx(1, "cannot say ready");
	memset(&e, 0, sizeof(e));
	(void)actor_run(a, handle, NULL, &e);
	actor_close(a);
	return 0;
}
