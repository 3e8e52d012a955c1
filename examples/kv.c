/*
 * kv.c: the seeds' key-value store as an actord worker, and its command
 * line client in the same program.
 *
 * Started by actord (ACTORD_INDEX is set), it is an actor whose table is
 * committed state: every change is committed with the message in hand,
 * so a SIGKILL at any point loses no acknowledged write and applies none
 * twice, and the next incarnation starts from the table as it was.
 *
 *   ask PUT  payload: u16 key length, key, value    answer: empty
 *   ask GET  payload: key                            answer: the value
 *   ask DEL  payload: key                            answer: empty
 *   ask KEYS                                         answer: u32 count
 *
 * GET and DEL of a missing key answer an error of the application's own,
 * KV_NOKEY ("no such key: KEY"); a PUT that does not fit in the state
 * region answers KV_FULL.  Values are as large as a message may be: the
 * mailbox's max_message (64 KiB by default) for a PUT, the asker's for a
 * GET's answer, less the request's key and its 2-byte length.
 *
 * Run by hand, it is a client (actor_connect(3)) of the local actord:
 *
 *	kv [-S socket] [-p path] put KEY VALUE | get KEY | del KEY | keys
 *
 * exit status 0, 1 for KV_NOKEY, 2 for usage, 3 for anything else.
 *
 * actord.conf:
 *   { name = "kv"; exec = ["/usr/local/libexec/kv"]; ready = "actor";
 *     mailbox = { capacity = 256; cell = 4096; state = 262144;
 *       max_message = 65536; }; }
 */
#include <err.h>
#include <err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/actor.h"

enum { PUT = 1, GET = 2, DEL = 3, KEYS = 4 };
enum { KV_NOKEY = 1, KV_FULL = 2, KV_BADREQ = 3 };	/* our error codes */

#define HDR		4		/* u32 count */
#define ENTRY_HDR	6		/* u16 key length, u32 value length */
#define ASK_NS		5000000000LL

struct entry {
	unsigned char	*key;
	size_t		 klen;
	unsigned char	*val;
	size_t		 vlen;
};

/* The one state of a kv actor: its table and the bytes it commits. */
struct kv {
	struct entry	*e;
	size_t		 n, cap;
	size_t		 bytes;		/* the table's encoded length */
	unsigned char	*snap;		/* room for the encoding */
	size_t		 snap_max;
};

static int	 serve(void);
static int	 client(int, char **);
static int	 handle(struct actor *, const struct actor_msg *, void *);
static struct entry *lookup(struct kv *, const void *, size_t);
static int	 set(struct kv *, const void *, size_t, const void *, size_t);
static void	 del(struct kv *, struct entry *);
static size_t	 encode(const struct kv *, unsigned char *);
static int	 decode(struct kv *, const unsigned char *, size_t);
static void	 do_put(struct actor *, struct kv *, const struct actor_msg *);
static void	 do_get_del(struct actor *, struct kv *,
		    const struct actor_msg *);
static void	 usage(void) __attribute__((noreturn));

static struct entry *
lookup(struct kv *kv, const void *key, size_t klen)
{
	size_t i;

	for (i = 0; i < kv->n; i++)
		if (kv->e[i].klen == klen && memcmp(kv->e[i].key, key,
		    klen) == 0)
			return &kv->e[i];
	return NULL;
}

/* key := value in memory: 0, or -1 without memory. */
static int
set(struct kv *kv, const void *key, size_t klen, const void *val,
    size_t vlen)
{
	struct entry *e = lookup(kv, key, klen), *ne;
	unsigned char *v;
	size_t cap;

	if ((v = malloc(vlen + 1)) == NULL)
		return -1;
	memcpy(v, val, vlen);
	if (e == NULL) {
		if (kv->n == kv->cap) {
			cap = kv->cap ? kv->cap * 2 : 16;
			if ((ne = reallocarray(kv->e, cap, sizeof(*ne))) ==
			    NULL) {
				free(v);
				return -1;
			}
			kv->e = ne;
			kv->cap = cap;
		}
		e = &kv->e[kv->n];
		if ((e->key = malloc(klen + 1)) == NULL) {
			free(v);
			return -1;
		}
		memcpy(e->key, key, klen);
		e->klen = klen;
		e->val = NULL;
		e->vlen = 0;
		kv->n++;
		kv->bytes += ENTRY_HDR + klen;
	}
	kv->bytes += vlen - e->vlen;
	free(e->val);
	e->val = v;
	e->vlen = vlen;
	return 0;
}

static void
del(struct kv *kv, struct entry *e)
{
	kv->bytes -= ENTRY_HDR + e->klen + e->vlen;
	free(e->key);
	free(e->val);
	*e = kv->e[--kv->n];
}

/*
 * The table as bytes, kv->bytes of them: u32 count, then per entry u16 key
 * length, u32 value length, the key, the value (host byte order: only the
 * next incarnation on this machine reads it).
 */
static size_t
encode(const struct kv *kv, unsigned char *out)
{
	size_t i, off = HDR;
	uint32_t n = (uint32_t)kv->n, vl;
	uint16_t kl;

	memcpy(out, &n, sizeof(n));
	for (i = 0; i < kv->n; i++) {
		kl = (uint16_t)kv->e[i].klen;
		vl = (uint32_t)kv->e[i].vlen;
		memcpy(out + off, &kl, sizeof(kl));
		memcpy(out + off + 2, &vl, sizeof(vl));
		memcpy(out + off + ENTRY_HDR, kv->e[i].key, kl);
		memcpy(out + off + ENTRY_HDR + kl, kv->e[i].val, vl);
		off += ENTRY_HDR + (size_t)kl + vl;
	}
	return off;
}

/* The table from its committed bytes, checked like any input. */
static int
decode(struct kv *kv, const unsigned char *in, size_t len)
{
	size_t off = HDR;
	uint32_t n, i, vl;
	uint16_t kl;

	if (len < HDR)
		return -1;
	memcpy(&n, in, sizeof(n));
	for (i = 0; i < n; i++) {
		if (len - off < ENTRY_HDR)
			return -1;
		memcpy(&kl, in + off, sizeof(kl));
		memcpy(&vl, in + off + 2, sizeof(vl));
		if (len - off - ENTRY_HDR < (size_t)kl + vl ||
		    set(kv, in + off + ENTRY_HDR, kl, in + off + ENTRY_HDR + kl,
		    vl) == -1)
			return -1;
		off += ENTRY_HDR + (size_t)kl + vl;
	}
	return 0;
}

/*
 * PUT: the new table must fit in the state region before anything
 * changes; then it is committed with the message in hand, so the write
 * is applied exactly once whatever kills the worker, and answered.
 */
static void
do_put(struct actor *a, struct kv *kv, const struct actor_msg *m)
{
	const unsigned char *p = m->data;
	struct entry *e;
	size_t after;
	uint16_t kl;

	if (m->len < 2 || (memcpy(&kl, p, 2), (size_t)kl + 2 > m->len)) {
		(void)actor_reply_error(a, KV_BADREQ, "put: malformed request");
		return;
	}
	e = lookup(kv, p + 2, kl);
	after = kv->bytes + (m->len - 2 - kl);
	after = e != NULL ? after - e->vlen : after + ENTRY_HDR + kl;
	if (after > kv->snap_max) {
		(void)actor_reply_error(a, KV_FULL, "store full");
		return;
	}
	if (set(kv, p + 2, kl, p + 2 + kl, m->len - 2 - kl) == -1)
		errx(3, "out of memory");	/* a crash: given again */
	if (actor_commit(a, kv->snap, encode(kv, kv->snap)) < 0)
		errx(3, "commit failed");
	(void)actor_reply(a, PUT, NULL, 0);
}

static void
do_get_del(struct actor *a, struct kv *kv, const struct actor_msg *m)
{
	char text[ACTOR_ERRTEXT_MAX];
	struct entry *e;

	if ((e = lookup(kv, m->data, m->len)) == NULL) {
		snprintf(text, sizeof(text), "no such key: %.*s",
		    (int)(m->len < 200 ? m->len : 200), (const char *)m->data);
		(void)actor_reply_error(a, KV_NOKEY, text);
		return;
	}
	if (m->tag == GET) {
		(void)actor_reply(a, GET, e->val, e->vlen);
		return;
	}
	del(kv, e);
	if (actor_commit(a, kv->snap, encode(kv, kv->snap)) < 0)
		errx(3, "commit failed");
	(void)actor_reply(a, DEL, NULL, 0);
}

static int
handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	struct kv *kv = arg;
	uint32_t n;

	if (m->flags & ACTOR_MSG_SYSTEM)
		return 0;
	switch (m->tag) {
	case PUT:
		do_put(a, kv, m);
		break;
	case GET:
	case DEL:
		do_get_del(a, kv, m);
		break;
	case KEYS:
		n = (uint32_t)kv->n;
		(void)actor_reply(a, KEYS, &n, sizeof(n));
		break;
	default:
		(void)actor_reply_error(a, KV_BADREQ, "unknown request");
		break;
	}
	return 0;
}

static int
serve(void)
{
	struct actor *a;
	struct kv kv;
	char why[ACTOR_ERRBUF];
	size_t len = 0;
	int rc;

	if (actor_attach(&a, why, sizeof(why)) < 0)
		errx(3, "%s", why);
	memset(&kv, 0, sizeof(kv));
	kv.bytes = HDR;
	if ((kv.snap_max = actor_snapshot_max(a)) < HDR)
		errx(3, "no state region: give the mailbox state = BYTES");
	if ((kv.snap = malloc(kv.snap_max)) == NULL)
		err(3, "malloc");
	/* The last table committed, if any. */
	if ((rc = actor_load(a, kv.snap, kv.snap_max, &len)) == 0) {
		if (decode(&kv, kv.snap, len) == -1)
			errx(3, "the committed table is garbled");
	} else if (rc != ACTOR_ENOSTATE)
		errx(3, "load: %s", actor_strerror(rc));
	fprintf(stderr, "kv: up, %zu keys\n", kv.n);
	if (actor_ready(a) < 0)
		errx(3, "cannot say ready");
	(void)actor_run(a, handle, NULL, &kv);
	actor_close(a);
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: kv [-S socket] [-p path] put KEY VALUE | "
	    "get KEY | del KEY | keys\n");
	exit(2);
}

/* The command line client: one ask through actord's control socket. */
static int
client(int argc, char **argv)
{
	struct actor_client *c;
	struct actor_msg r;
	const char *sock = NULL, *path = "/kv";
	unsigned char buf[65536];
	char why[ACTOR_ERRBUF];
	size_t klen, vlen, len;
	uint32_t tag, n;
	uint16_t kl;
	int ch, rc;

	while ((ch = getopt(argc, argv, "S:p:")) != -1) {
		if (ch == 'S')
			sock = optarg;
		else if (ch == 'p')
			path = optarg;
		else
			usage();
	}
	argc -= optind;
	argv += optind;
	if (argc == 3 && strcmp(argv[0], "put") == 0) {
		klen = strlen(argv[1]);
		vlen = strlen(argv[2]);
		if (klen > UINT16_MAX || 2 + klen + vlen > sizeof(buf))
			errx(2, "key or value too long");
		kl = (uint16_t)klen;
		memcpy(buf, &kl, 2);
		memcpy(buf + 2, argv[1], klen);
		memcpy(buf + 2 + klen, argv[2], vlen);
		tag = PUT;
		len = 2 + klen + vlen;
	} else if (argc == 2 && (strcmp(argv[0], "get") == 0 ||
	    strcmp(argv[0], "del") == 0)) {
		tag = argv[0][0] == 'g' ? GET : DEL;
		len = strlen(argv[1]);
		if (len > sizeof(buf))
			errx(2, "key too long");
		memcpy(buf, argv[1], len);
	} else if (argc == 1 && strcmp(argv[0], "keys") == 0) {
		tag = KEYS;
		len = 0;
	} else
		usage();
	if (actor_connect(&c, sock, why, sizeof(why)) < 0)
		errx(3, "%s", why);
	rc = actor_client_ask(c, path, tag, buf, len, ASK_NS, &r);
	if (rc == ACTOR_EREPLY && actor_error_code(&r) == KV_NOKEY) {
		fprintf(stderr, "kv: %s\n", actor_error_text(&r));
		actor_client_close(c);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "kv: %s\n", actor_client_error(c));
		actor_client_close(c);
		return 3;
	}
	if (tag == GET)
		fwrite(r.data, 1, r.len, stdout);
	else if (tag == KEYS && r.len == sizeof(n)) {
		memcpy(&n, r.data, sizeof(n));
		printf("%u\n", n);
	}
	actor_client_close(c);
	return 0;
}

int
main(int argc, char **argv)
{
	/* Started by actord: an actor; by hand: its client. */
	if (getenv(ACTOR_ENV_INDEX) != NULL)
		return serve();
	return client(argc, argv);
}
