/*
 * actorctl_client.c: actorctl's side of the control socket: connect and
 * make one round trip (supervisor/ctlclient.c does the I/O, bounded in
 * time), and turn what went wrong into a message on stderr and an exit
 * status, keeping its text for the commands that print it as JSON.
 *
 * It owns the connection in struct actorctl.  It must never print to
 * stdout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools/actorctl.h"

static int	 xconnect(struct actorctl *);
static int	 fail(struct actorctl *, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/*
 * A failure: its text kept in a->error (for --json outputs), printed as
 * "actorctl: TEXT" on stderr; returns the exit status rc.
 */
static int
fail(struct actorctl *a, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->error, sizeof(a->error), fmt, ap);
	va_end(ap);
	a->error_status = rc;
	fprintf(stderr, "actorctl: %s\n", a->error);
	return rc;
}

int
actorctl_exit_status(unsigned st)
{
	switch (st) {
	case CTL_OK:
		return ACTORCTL_EXIT_OK;
	case CTL_E_NOENT:
		return ACTORCTL_EXIT_NOENT;
	case CTL_E_PERM:
		return ACTORCTL_EXIT_PERM;
	case CTL_E_TIMEOUT:
		return ACTORCTL_EXIT_TIMEOUT;
	case CTL_E_PROTO:
	case CTL_E_VERSION:
	case CTL_E_UNKNOWN:
		return ACTORCTL_EXIT_PROTO;
	default:
		return ACTORCTL_EXIT_FAILED;
	}
}

static int
xconnect(struct actorctl *a)
{
	int fd, e;

	if ((fd = ctl_connect(a->socket)) != -1) {
		a->fd = fd;
		return 0;
	}
	e = errno;
	if (e == ENAMETOOLONG)
		return fail(a, ACTORCTL_EXIT_USAGE, "%s: socket path too long",
		    a->socket);
	if (e == EACCES || e == EPERM)
		return fail(a, ACTORCTL_EXIT_PERM, "%s: permission denied",
		    a->socket);
	return fail(a, ACTORCTL_EXIT_NOTRUNNING, "actord not running (cannot "
	    "connect to %s: %s)", a->socket, strerror(e));
}

void
actorctl_disconnect(struct actorctl *a)
{
	if (a->fd != -1)
		close(a->fd);
	a->fd = -1;
}

/*
 * One round trip.  0 with *resp decoded and its status CTL_OK; otherwise
 * a message on stderr and the exit status (*resp is then empty).
 * timeout_ms < 0: wait for ever (follow).
 */
int
actorctl_call(struct actorctl *a, const struct ctl_request *q,
    struct ctl_response *resp, int timeout_ms)
{
	int64_t		 deadline;
	char		 err[256], what[CTL_PATH_MAX + 32];
	int		 rc, e;

	memset(resp, 0, sizeof(*resp));
	if (CTL_HAS(q, CTL_F_PATH))
		snprintf(what, sizeof(what), "%s %s", a->cmd, q->path);
	else
		snprintf(what, sizeof(what), "%s", a->cmd);
	if (a->fd == -1 && (rc = xconnect(a)) != 0)
		return rc;
	deadline = timeout_ms < 0 ? -1 : ctl_mono_ms() + timeout_ms;
	if (ctl_roundtrip(a->fd, q, resp, deadline, err, sizeof(err)) == -1) {
		e = errno;
		actorctl_disconnect(a);
		switch (e) {
		case E2BIG:
			return fail(a, ACTORCTL_EXIT_USAGE, "%s: request too "
			    "large (at most %d bytes)", what, CTL_MAX_REQUEST);
		case EPROTO:
			return fail(a, ACTORCTL_EXIT_PROTO, "%s: %s", what, err);
		case ETIMEDOUT:
			return fail(a, ACTORCTL_EXIT_TIMEOUT, "%s: no answer "
			    "from actord within %d ms", what, timeout_ms);
		case EPIPE:
			return fail(a, ACTORCTL_EXIT_FAILED, "%s: connection "
			    "to actord lost: closed", what);
		default:
			return fail(a, ACTORCTL_EXIT_FAILED, "%s: connection "
			    "to actord lost: %s", what, strerror(e));
		}
	}
	if (resp->status != CTL_OK) {
		rc = fail(a, actorctl_exit_status(resp->status), "%s: %s",
		    what, resp->error[0] ? resp->error :
		    ctl_status_name(resp->status));
		ctl_response_free(resp);
		return rc;
	}
	return 0;
}
