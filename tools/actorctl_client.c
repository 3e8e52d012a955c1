/*
 * actorctl_client.c: actorctl's side of the control socket: connect and
 * make one round trip (supervisor/ctlclient.c does the I/O, bounded in
 * time), and turn what went wrong into a message on stderr and an exit
 * status.
 *
 * It owns the connection in struct actorctl.  It must never print to
 * stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools/actorctl.h"

static int	 xconnect(struct actorctl *);

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
	if (e == ENAMETOOLONG) {
		fprintf(stderr, "actorctl: %s: socket path too long\n",
		    a->socket);
		return ACTORCTL_EXIT_USAGE;
	}
	if (e == EACCES || e == EPERM) {
		fprintf(stderr, "actorctl: %s: permission denied\n", a->socket);
		return ACTORCTL_EXIT_PERM;
	}
	fprintf(stderr, "actorctl: actord not running (cannot connect to "
	    "%s: %s)\n", a->socket, strerror(e));
	return ACTORCTL_EXIT_NOTRUNNING;
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
			fprintf(stderr, "actorctl: %s: request too large (at "
			    "most %d bytes)\n", what, CTL_MAX_REQUEST);
			return ACTORCTL_EXIT_USAGE;
		case EPROTO:
			fprintf(stderr, "actorctl: %s: %s\n", what, err);
			return ACTORCTL_EXIT_PROTO;
		case ETIMEDOUT:
			fprintf(stderr, "actorctl: %s: no answer from actord "
			    "within %d ms\n", what, timeout_ms);
			return ACTORCTL_EXIT_TIMEOUT;
		case EPIPE:
			fprintf(stderr, "actorctl: %s: connection to actord "
			    "lost: closed\n", what);
			return ACTORCTL_EXIT_FAILED;
		default:
			fprintf(stderr, "actorctl: %s: connection to actord "
			    "lost: %s\n", what, strerror(e));
			return ACTORCTL_EXIT_FAILED;
		}
	}
	if (resp->status != CTL_OK) {
		fprintf(stderr, "actorctl: %s: %s\n", what, resp->error[0] ?
		    resp->error : ctl_status_name(resp->status));
		rc = actorctl_exit_status(resp->status);
		ctl_response_free(resp);
		return rc;
	}
	return 0;
}
