/*
 * client_local.c: the client's local transport: actord's control socket,
 * the one actorctl uses (actorctl(8), PROTOCOL).  A tell is a "send"
 * request, an ask an "ask" request that actord's own actor asks for the
 * client (supervisor/asks.c); the answer carries libactor's code and, for
 * an error of the application's own, its code and text, so a client gets
 * what an actor in the tree would.  Only actord's user, root and the
 * control_group may use the socket.
 *
 * actord drops a connection idle for its request timeout (control.c), so
 * one idle for a while is replaced before it is used, and a reused one
 * found closed is replaced once (actord answers every request it reads,
 * so a request that met a closed connection was never handled).
 *
 * Owns: the connection.  Must never wait past the ask's timeout plus
 * ASK_SLACK_MS, or REQUEST_MS for anything else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/ctlproto.h"
#include "worker/actor_impl.h"

#define IDLE_MS		1000	/* reconnect before using one idle longer */
#define REQUEST_MS	10000	/* a tell's round trip */
#define ASK_SLACK_MS	5000	/* actord answers an ask by its timeout */

struct local_conn {
	int		 fd;		/* -1: not connected */
	int64_t		 used_ms;	/* when the last round trip ended */
	char		 sock[108];	/* sun_path */
};

static int	 local_open(struct actor_client *, const char *, char *,
		    size_t);
static int	 local_tell(struct actor_client *, const char *, uint32_t,
		    const void *, size_t);
static int	 local_ask(struct actor_client *, const char *, uint32_t,
		    const void *, size_t, int64_t, struct actor_msg *);
static void	 local_close(struct actor_client *);
static int	 dial(struct local_conn *, char *, size_t);
static void	 hang_up(struct local_conn *);
static int	 call(struct actor_client *, const struct ctl_request *,
		    struct ctl_response *, int64_t);
static int	 outcome(struct actor_client *, const struct ctl_request *,
		    const struct ctl_response *);
static int	 request(struct actor_client *, struct ctl_request *,
		    uint16_t, const char *, uint32_t, const void *, size_t);
static int	 error_answer(struct actor_client *, int,
		    const struct ctl_response *, struct actor_msg *);

const struct client_transport client_local = {
	.scheme = "unix",
	.open = local_open,
	.tell = local_tell,
	.ask = local_ask,
	.close = local_close,
};

static int
dial(struct local_conn *lc, char *err, size_t errlen)
{
	if ((lc->fd = ctl_connect(lc->sock)) == -1) {
		snprintf(err, errlen, "cannot connect to %s: %s%s", lc->sock,
		    strerror(errno), errno == ENOENT || errno == ECONNREFUSED ?
		    " (is actord running?)" : "");
		return ACTOR_ESYS;
	}
	lc->used_ms = ctl_mono_ms();
	return 0;
}

static void
hang_up(struct local_conn *lc)
{
	if (lc->fd != -1)
		close(lc->fd);
	lc->fd = -1;
}

static int
local_open(struct actor_client *c, const char *where, char *err,
    size_t errlen)
{
	struct local_conn *lc;
	int rc;

	if ((lc = calloc(1, sizeof(*lc))) == NULL) {
		snprintf(err, errlen, "calloc: %s", strerror(errno));
		return ACTOR_ESYS;
	}
	lc->fd = -1;
	if (where == NULL || *where == '\0') {
		if (ctl_default_socket(lc->sock, sizeof(lc->sock)) == -1) {
			snprintf(err, errlen, "the default control socket's "
			    "path is too long");
			free(lc);
			return ACTOR_EINVAL;
		}
	} else if (strlen(where) >= sizeof(lc->sock)) {
		snprintf(err, errlen, "%s: socket path too long", where);
		free(lc);
		return ACTOR_EINVAL;
	} else
		memcpy(lc->sock, where, strlen(where) + 1);
	/* At once: "actord is not running" belongs to actor_connect. */
	if ((rc = dial(lc, err, errlen)) < 0) {
		free(lc);
		return rc;
	}
	c->conn = lc;
	return 0;
}

static void
local_close(struct actor_client *c)
{
	struct local_conn *lc = c->conn;

	if (lc == NULL)
		return;
	hang_up(lc);
	free(lc);
	c->conn = NULL;
}

/*
 * One round trip before deadline, on a fresh connection if the last one
 * idled too long or turns out closed.  0 with *resp, or an ACTOR_E* code
 * with c->err.
 */
static int
call(struct actor_client *c, const struct ctl_request *q,
    struct ctl_response *resp, int64_t deadline)
{
	struct local_conn *lc = c->conn;
	char err[256];
	bool fresh;
	int rc, e, tries;

	for (tries = 0; tries < 2; tries++) {
		if (lc->fd != -1 && ctl_mono_ms() - lc->used_ms > IDLE_MS)
			hang_up(lc);
		fresh = lc->fd == -1;
		if (fresh && (rc = dial(lc, c->err, sizeof(c->err))) < 0)
			return rc;
		rc = ctl_roundtrip(lc->fd, q, resp, deadline, err, sizeof(err));
		lc->used_ms = ctl_mono_ms();
		if (rc == 0)
			return 0;
		e = errno;
		hang_up(lc);
		if (!fresh && (e == EPIPE || e == ECONNRESET))
			continue;	/* closed while idle: never handled */
		switch (e) {
		case ETIMEDOUT:
			snprintf(c->err, sizeof(c->err), "%s %s: no answer from "
			    "actord in time", ctl_cmd_name(q->cmd), q->path);
			return ACTOR_ETIMEDOUT;
		case EPROTO:
			snprintf(c->err, sizeof(c->err), "%s %s: %s",
			    ctl_cmd_name(q->cmd), q->path, err);
			return ACTOR_EPROTO;
		case E2BIG:
			snprintf(c->err, sizeof(c->err), "%s %s: request too "
			    "large", ctl_cmd_name(q->cmd), q->path);
			return ACTOR_EOVERSIZE;
		default:
			snprintf(c->err, sizeof(c->err), "%s %s: connection to "
			    "actord lost: %s", ctl_cmd_name(q->cmd), q->path,
			    e == EPIPE ? "closed" : strerror(e));
			errno = e;
			return ACTOR_ESYS;
		}
	}
	errno = EPIPE;
	return ACTOR_ESYS;
}

/* What a response's status means to the caller (c->err says it too). */
static int
outcome(struct actor_client *c, const struct ctl_request *q,
    const struct ctl_response *r)
{
	if (r->status == CTL_OK)
		return 0;
	snprintf(c->err, sizeof(c->err), "%s %s: %s", ctl_cmd_name(q->cmd),
	    q->path, r->error[0] != '\0' ? r->error :
	    ctl_status_name(r->status));
	if (r->has_code && r->code < 0 && r->code >= ACTOR_ELAST)
		return r->code;
	switch (r->status) {
	case CTL_E_NOENT:
		return ACTOR_ENOENT;
	case CTL_E_DOWN:
		return ACTOR_EDOWN;
	case CTL_E_TIMEOUT:
		return ACTOR_ETIMEDOUT;
	case CTL_E_TOOBIG:
		return ACTOR_EOVERSIZE;
	case CTL_E_INVAL:
		return ACTOR_EINVAL;		/* e.g. "has no mailbox" */
	case CTL_E_PERM:
		errno = EACCES;
		return ACTOR_ESYS;
	case CTL_E_BUSY:
		errno = EAGAIN;
		return ACTOR_ESYS;
	case CTL_E_PROTO:
	case CTL_E_VERSION:
	case CTL_E_UNKNOWN:
	case CTL_E_UNSUPPORTED:
		return ACTOR_EPROTO;
	default:
		return ACTOR_EREPLY;
	}
}

static int
request(struct actor_client *c, struct ctl_request *q, uint16_t cmd,
    const char *path, uint32_t tag, const void *data, size_t len)
{
	memset(q, 0, sizeof(*q));
	q->cmd = cmd;
	if (!ctl_path_valid(path) || strlen(path) >= sizeof(q->path)) {
		snprintf(c->err, sizeof(c->err), "%s: not a valid path", path);
		return ACTOR_EINVAL;
	}
	if (len > CTL_MAX_DATA) {
		snprintf(c->err, sizeof(c->err), "%s: %zu bytes: the control "
		    "socket carries at most %d", path, len, CTL_MAX_DATA);
		return ACTOR_EOVERSIZE;
	}
	memcpy(q->path, path, strlen(path) + 1);
	q->tag = tag;
	q->data = data;
	q->datalen = (uint32_t)len;
	q->present = 1u << CTL_F_PATH | 1u << CTL_F_TAG | 1u << CTL_F_DATA;
	return 0;
}

static int
local_tell(struct actor_client *c, const char *path, uint32_t tag,
    const void *data, size_t len)
{
	struct ctl_request q;
	struct ctl_response r;
	int rc;

	if ((rc = request(c, &q, CTL_CMD_SEND, path, tag, data, len)) < 0)
		return rc;
	if ((rc = call(c, &q, &r, ctl_mono_ms() + REQUEST_MS)) < 0)
		return rc;
	rc = outcome(c, &q, &r);
	ctl_response_free(&r);
	return rc;
}

/*
 * An error answer, as an ask in the tree sees it: flags REPLY | ERROR,
 * data the code (the application's for ACTOR_EREPLY, else rc) and the
 * answer's own text.
 */
static int
error_answer(struct actor_client *c, int rc, const struct ctl_response *r,
    struct actor_msg *reply)
{
	int32_t code = rc == ACTOR_EREPLY && r->has_appcode ? r->appcode : rc;
	const char *text = r->has_text ? r->text : "";
	size_t tlen = strlen(text);

	if (tlen >= ACTOR_ERRTEXT_MAX)
		tlen = ACTOR_ERRTEXT_MAX - 1;
	if ((c->reply = malloc(sizeof(code) + tlen + 1)) == NULL)
		return rc;
	memcpy(c->reply, &code, sizeof(code));
	memcpy(c->reply + sizeof(code), text, tlen);
	c->reply[sizeof(code) + tlen] = '\0';
	reply->flags = ACTOR_MSG_REPLY | ACTOR_MSG_ERROR;
	reply->len = (uint32_t)(sizeof(code) + tlen + 1);
	reply->data = c->reply;
	return rc;
}

static int
local_ask(struct actor_client *c, const char *path, uint32_t tag,
    const void *data, size_t len, int64_t timeout_ns,
    struct actor_msg *reply)
{
	struct ctl_request q;
	struct ctl_response r;
	int64_t ms = (timeout_ns + 999999) / 1000000;
	int rc;

	if ((rc = request(c, &q, CTL_CMD_ASK, path, tag, data, len)) < 0)
		return rc;
	if (ms > UINT32_MAX - ASK_SLACK_MS)
		ms = UINT32_MAX - ASK_SLACK_MS;
	q.timeout_ms = (uint32_t)ms;
	q.present |= 1u << CTL_F_TIMEOUT;
	if ((rc = call(c, &q, &r, ctl_mono_ms() + ms + ASK_SLACK_MS)) < 0)
		return rc;
	if ((rc = outcome(c, &q, &r)) < 0) {
		if (r.has_code)
			(void)error_answer(c, rc, &r, reply);
		ctl_response_free(&r);
		return rc;
	}
	/* Keep the answer's bytes: ctlproto ends them with a NUL. */
	reply->tag = r.tag;
	reply->flags = ACTOR_MSG_REPLY;
	reply->len = (uint32_t)r.datalen;
	c->reply = r.data;
	r.data = NULL;
	reply->data = c->reply != NULL ? c->reply : (const void *)"";
	ctl_response_free(&r);
	return 0;
}
