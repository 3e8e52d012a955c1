/*
 * client_zmq.c: the client's network transport, "tcp": a node's gateway
 * over CurveZMQ, as actord-wire(7) specifies it.  The address names the
 * node and the keys:
 *
 *	tcp://HOST:PORT?server=PUBFILE&key=SECFILE&name=NAME
 *
 * PUBFILE is the node's public key file, SECFILE this client's secret key
 * (mode 0600, as actorctl keygen writes it), NAME the name the node's
 * clients list gives its public key.  libzmq is opened with dlopen when
 * the first such client connects, so libactor itself needs no libzmq (a
 * program that never uses "tcp" never loads it).
 *
 * Owns: the DEALER socket, the session (HELLO, WELCOME), the asks' corr.
 * Must never wait past an ask's timeout (or OPEN_MS to connect), nor
 * trust a frame wire_decode refused.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "worker/actor_impl.h"
#include "worker/remote.h"

#define OPEN_MS		5000	/* for WELCOME */
#define MAX_FRAME	(1 << 20)	/* what we accept */
#define LIBZMQ		"libzmq.so.5"

/* The libzmq functions we use, found by dlopen. */
struct zapi {
	void	*(*ctx_new)(void);
	int	 (*ctx_term)(void *);
	void	*(*socket)(void *, int);
	int	 (*close)(void *);
	int	 (*setsockopt)(void *, int, const void *, size_t);
	int	 (*connect)(void *, const char *);
	int	 (*send)(void *, const void *, size_t, int);
	int	 (*msg_init)(zmq_msg_t *);
	int	 (*msg_recv)(zmq_msg_t *, void *, int);
	int	 (*msg_close)(zmq_msg_t *);
	void	*(*msg_data)(zmq_msg_t *);
	size_t	 (*msg_size)(const zmq_msg_t *);
	int	 (*curve_public)(char *, const char *);
	const char *(*strerror)(int);
};

struct zconn {
	void		*lib;		/* dlopen's handle */
	struct zapi	 z;
	void		*ctx;
	void		*sock;
	uint64_t	 corr;		/* the last ask's */
	uint32_t	 max_frame;	/* the node's */
	struct wire_buf	 out;
};

static int	 z_open(struct actor_client *, const char *, char *, size_t);
static int	 z_tell(struct actor_client *, const char *, uint32_t,
		    const void *, size_t);
static int	 z_ask(struct actor_client *, const char *, uint32_t,
		    const void *, size_t, int64_t, struct actor_msg *);
static void	 z_close(struct actor_client *);
static int	 load(struct zconn *, char *, size_t);
static int	 param(const char *, const char *, char *, size_t);
static int	 recv_frame(struct zconn *, int64_t, zmq_msg_t *);
static int	 send_msg(struct actor_client *, uint8_t, const char *,
		    uint32_t, const void *, size_t);
static int	 answer(struct actor_client *, const struct wire_msg *,
		    struct actor_msg *);

const struct client_transport client_zmq = {
	.scheme = "tcp",
	.open = z_open,
	.tell = z_tell,
	.ask = z_ask,
	.close = z_close,
};

static int
load(struct zconn *zc, char *err, size_t errlen)
{
	struct { const char *name; void **fn; } sym[] = {
		{ "zmq_ctx_new", (void **)&zc->z.ctx_new },
		{ "zmq_ctx_term", (void **)&zc->z.ctx_term },
		{ "zmq_socket", (void **)&zc->z.socket },
		{ "zmq_close", (void **)&zc->z.close },
		{ "zmq_setsockopt", (void **)&zc->z.setsockopt },
		{ "zmq_connect", (void **)&zc->z.connect },
		{ "zmq_send", (void **)&zc->z.send },
		{ "zmq_msg_init", (void **)&zc->z.msg_init },
		{ "zmq_msg_recv", (void **)&zc->z.msg_recv },
		{ "zmq_msg_close", (void **)&zc->z.msg_close },
		{ "zmq_msg_data", (void **)&zc->z.msg_data },
		{ "zmq_msg_size", (void **)&zc->z.msg_size },
		{ "zmq_curve_public", (void **)&zc->z.curve_public },
		{ "zmq_strerror", (void **)&zc->z.strerror },
	};
	size_t i;

	if ((zc->lib = dlopen(LIBZMQ, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(err, errlen, "tcp: cannot load %s: %s", LIBZMQ,
		    dlerror());
		return ACTOR_EINVAL;
	}
	for (i = 0; i < sizeof(sym) / sizeof(sym[0]); i++)
		if ((*sym[i].fn = dlsym(zc->lib, sym[i].name)) == NULL) {
			snprintf(err, errlen, "tcp: %s: no %s", LIBZMQ,
			    sym[i].name);
			return ACTOR_EINVAL;
		}
	return 0;
}

/* The value of ?NAME=VALUE or &NAME=VALUE in the address.  0, or -1. */
static int
param(const char *query, const char *name, char *out, size_t outlen)
{
	size_t n = strlen(name), len;
	const char *p = query, *end;

	while (p != NULL && *p != '\0') {
		p++;				/* the ? or & */
		end = strchr(p, '&');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		if (len > n && strncmp(p, name, n) == 0 && p[n] == '=') {
			if (len - n - 1 >= outlen)
				return -1;
			memcpy(out, p + n + 1, len - n - 1);
			out[len - n - 1] = '\0';
			return 0;
		}
		p = end;
	}
	return -1;
}

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One frame before the deadline (ms): 0, ACTOR_ETIMEDOUT or ACTOR_ESYS. */
static int
recv_frame(struct zconn *zc, int64_t deadline, zmq_msg_t *m)
{
	int left = (int)(deadline - mono_ms());

	if (left < 0)
		left = 0;
	(void)zc->z.setsockopt(zc->sock, ZMQ_RCVTIMEO, &left, sizeof(left));
	zc->z.msg_init(m);
	if (zc->z.msg_recv(m, zc->sock, 0) == -1) {
		zc->z.msg_close(m);
		return errno == EAGAIN ? ACTOR_ETIMEDOUT : ACTOR_ESYS;
	}
	return 0;
}

static int
z_open(struct actor_client *c, const char *where, char *err, size_t errlen)
{
	char server[512], keyfile[512], name[WIRE_NAME_MAX + 2], ep[512];
	char spub[KEY_Z85_LEN + 1], sec[KEY_Z85_LEN + 1];
	char pub[KEY_Z85_LEN + 1];
	const char *q;
	struct wire_hello h;
	struct wire_frame f;
	struct zconn *zc;
	zmq_msg_t m;
	int zero = 0, rc;

	if (strncmp(where, "tcp://", 6) == 0)
		where += 6;
	q = strchr(where, '?');
	if (q == NULL || param(q, "server", server, sizeof(server)) == -1 ||
	    param(q, "key", keyfile, sizeof(keyfile)) == -1 ||
	    param(q, "name", name, sizeof(name)) == -1 ||
	    !wire_name_ok(name, strlen(name)) ||
	    (size_t)(q - where) + 7 > sizeof(ep)) {
		snprintf(err, errlen, "tcp://%s: expected tcp://HOST:PORT?"
		    "server=PUBFILE&key=SECFILE&name=NAME", where);
		return ACTOR_EINVAL;
	}
	snprintf(ep, sizeof(ep), "tcp://%.*s", (int)(q - where), where);
	if (key_file_read(server, false, spub, err, errlen) == -1 ||
	    key_file_read(keyfile, true, sec, err, errlen) == -1)
		return ACTOR_EINVAL;
	if ((zc = calloc(1, sizeof(*zc))) == NULL) {
		snprintf(err, errlen, "calloc: %s", strerror(errno));
		return ACTOR_ESYS;
	}
	c->conn = zc;
	if ((rc = load(zc, err, errlen)) < 0)
		goto fail;
	rc = ACTOR_ESYS;
	if (zc->z.curve_public(pub, sec) != 0 ||
	    (zc->ctx = zc->z.ctx_new()) == NULL ||
	    (zc->sock = zc->z.socket(zc->ctx, ZMQ_DEALER)) == NULL ||
	    zc->z.setsockopt(zc->sock, ZMQ_CURVE_SERVERKEY, spub, 41) == -1 ||
	    zc->z.setsockopt(zc->sock, ZMQ_CURVE_PUBLICKEY, pub, 41) == -1 ||
	    zc->z.setsockopt(zc->sock, ZMQ_CURVE_SECRETKEY, sec, 41) == -1 ||
	    zc->z.setsockopt(zc->sock, ZMQ_LINGER, &zero, sizeof(zero)) ==
	    -1 || zc->z.connect(zc->sock, ep) == -1) {
		snprintf(err, errlen, "%s: %s", ep, zc->z.strerror(errno));
		goto fail;
	}
	explicit_bzero(sec, sizeof(sec));
	memset(&h, 0, sizeof(h));
	h.session = (uint64_t)time(NULL) << 20 ^ (uint64_t)(uintptr_t)zc;
	h.max_frame = MAX_FRAME;
	memcpy(h.name, name, strlen(name) + 1);	/* wire_name_ok: <= 32 */
	if (wire_hello(&zc->out, WIRE_HELLO, &h) == -1 ||
	    zc->z.send(zc->sock, zc->out.p, zc->out.len, 0) == -1) {
		snprintf(err, errlen, "%s: HELLO: %s", ep, zc->z.strerror(
		    errno));
		goto fail;
	}
	if ((rc = recv_frame(zc, mono_ms() + OPEN_MS, &m)) < 0) {
		snprintf(err, errlen, "%s: no WELCOME within %d ms (is this "
		    "client's key among the node's clients?)", ep, OPEN_MS);
		goto fail;
	}
	rc = wire_decode(zc->z.msg_data(&m), zc->z.msg_size(&m), MAX_FRAME,
	    &f);
	if (rc < 0 || f.type != WIRE_WELCOME) {
		snprintf(err, errlen, "%s: refused: %s", ep, rc < 0 ?
		    wire_strerror(rc) : f.type == WIRE_ERROR ? "ERROR" :
		    "not a WELCOME");
		zc->z.msg_close(&m);
		rc = ACTOR_EPROTO;
		goto fail;
	}
	zc->max_frame = f.u.hello.max_frame;
	zc->z.msg_close(&m);
	return 0;
fail:
	explicit_bzero(sec, sizeof(sec));
	z_close(c);
	c->conn = NULL;
	return rc;
}

static void
z_close(struct actor_client *c)
{
	struct zconn *zc = c->conn;

	if (zc == NULL)
		return;
	if (zc->sock != NULL)
		zc->z.close(zc->sock);
	if (zc->ctx != NULL)
		zc->z.ctx_term(zc->ctx);
	/* The library stays loaded: ZeroMQ's threads are gone, but a
	 * dlclose under a program that loaded it too would not be safe. */
	wire_buf_free(&zc->out);
	free(zc);
	c->conn = NULL;
}

/* One message (TELL or ASK) by path, in a BATCH of its own. */
static int
send_msg(struct actor_client *c, uint8_t kind, const char *path,
    uint32_t tag, const void *data, size_t len)
{
	struct zconn *zc = c->conn;
	struct wire_msg w;

	if (!wire_path_ok(path, strlen(path))) {
		snprintf(c->err, sizeof(c->err), "%s: not a path", path);
		return ACTOR_EINVAL;
	}
	memset(&w, 0, sizeof(w));
	w.kind = kind;
	w.flags = WF_PATH;
	w.path = path;
	w.path_len = (uint16_t)strlen(path);
	w.tag = tag;
	w.from_index = WIRE_NOBODY;
	w.corr = kind == WK_ASK ? ++zc->corr : 0;
	w.len = (uint32_t)len;
	w.data = data;
	if (len > UINT32_MAX || WIRE_HDR + 12 + wire_msg_size(&w) >
	    zc->max_frame) {
		snprintf(c->err, sizeof(c->err), "%s: larger than the node's "
		    "frames (%u bytes)", path, zc->max_frame);
		return ACTOR_EOVERSIZE;
	}
	if (wire_batch_begin(&zc->out, 0) == -1 ||
	    wire_batch_add(&zc->out, &w) == -1) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		return ACTOR_ESYS;
	}
	wire_batch_end(&zc->out);
	if (zc->z.send(zc->sock, zc->out.p, zc->out.len, 0) == -1) {
		snprintf(c->err, sizeof(c->err), "%s: %s", path,
		    zc->z.strerror(errno));
		return ACTOR_ESYS;
	}
	return 0;
}

static int
z_tell(struct actor_client *c, const char *path, uint32_t tag,
    const void *data, size_t len)
{
	return send_msg(c, WK_TELL, path, tag, data, len);
}

/* The REPLY w as the ask's result, its bytes kept in c->reply. */
static int
answer(struct actor_client *c, const struct wire_msg *w,
    struct actor_msg *reply)
{
	int32_t code;

	if ((c->reply = malloc((size_t)w->len + 1)) == NULL) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		return ACTOR_ESYS;
	}
	memcpy(c->reply, w->data, w->len);
	c->reply[w->len] = '\0';
	reply->tag = w->tag;
	reply->len = w->len;
	reply->data = c->reply;
	reply->corr = w->corr;
	reply->sender.index = UINT32_MAX;
	reply->flags = ACTOR_MSG_REPLY;
	if (!(w->flags & WF_ERROR))
		return 0;
	reply->flags |= ACTOR_MSG_ERROR;
	snprintf(c->err, sizeof(c->err), "%s", actor_error_text(reply));
	code = actor_error_code(reply);
	return code < 0 && code >= ACTOR_ELAST ? code : ACTOR_EREPLY;
}

static int
z_ask(struct actor_client *c, const char *path, uint32_t tag,
    const void *data, size_t len, int64_t timeout_ns,
    struct actor_msg *reply)
{
	struct zconn *zc = c->conn;
	int64_t deadline = mono_ms() + timeout_ns / 1000000;
	struct wire_frame f;
	struct wire_msg w;
	zmq_msg_t m;
	int rc;

	if ((rc = send_msg(c, WK_ASK, path, tag, data, len)) < 0)
		return rc;
	for (;;) {
		if ((rc = recv_frame(zc, deadline, &m)) < 0) {
			snprintf(c->err, sizeof(c->err), "%s: %s", path,
			    rc == ACTOR_ETIMEDOUT ? "no answer in time" :
			    zc->z.strerror(errno));
			return rc;
		}
		rc = wire_decode(zc->z.msg_data(&m), zc->z.msg_size(&m),
		    MAX_FRAME, &f);
		if (rc == 0 && f.type == WIRE_ERROR) {
			snprintf(c->err, sizeof(c->err), "%s: refused: %.*s",
			    path, (int)f.u.error.text_len, f.u.error.text);
			zc->z.msg_close(&m);
			return ACTOR_EPROTO;
		}
		if (rc == 0 && f.type == WIRE_BATCH)
			while (wire_next(&f, &w))
				if (w.kind == WK_REPLY && w.corr == zc->corr) {
					rc = answer(c, &w, reply);
					zc->z.msg_close(&m);
					return rc;
				}
		zc->z.msg_close(&m);	/* late answers, others: dropped */
	}
}
