/*
 * actorctl_client.c: actorctl's side of the control socket: connect,
 * send one request, read one answer, each bounded in time, and turn what
 * went wrong into a message on stderr and an exit status.
 *
 * It owns the connection in struct actorctl.  It must never trust the
 * length of an answer beyond CTL_MAX_RESPONSE, and never print to stdout.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/actorctl.h"

static int	 xconnect(struct actorctl *);
static int	 io_all(int, void *, size_t, bool, int64_t);
static int64_t	 mono_ms(void);

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	struct sockaddr_un	 sun;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(a->socket) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "actorctl: %s: socket path too long\n",
		    a->socket);
		return ACTORCTL_EXIT_USAGE;
	}
	strcpy(sun.sun_path, a->socket);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		fprintf(stderr, "actorctl: socket: %s\n", strerror(errno));
		return ACTORCTL_EXIT_FAILED;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		int e = errno;

		close(fd);
		if (e == EACCES || e == EPERM) {
			fprintf(stderr, "actorctl: %s: permission denied\n",
			    a->socket);
			return ACTORCTL_EXIT_PERM;
		}
		fprintf(stderr, "actorctl: actord not running "
		    "(cannot connect to %s: %s)\n", a->socket, strerror(e));
		return ACTORCTL_EXIT_NOTRUNNING;
	}
	a->fd = fd;
	return 0;
}

void
actorctl_disconnect(struct actorctl *a)
{
	if (a->fd != -1)
		close(a->fd);
	a->fd = -1;
}

/*
 * Read or write exactly n bytes before the deadline (ms, monotonic; -1:
 * none).  0, or -1 with errno (ETIMEDOUT, EPIPE at end of file).
 */
static int
io_all(int fd, void *buf, size_t n, bool wr, int64_t deadline)
{
	struct pollfd	 pfd;
	uint8_t		*p = buf;
	ssize_t		 r;
	int		 wait, pr;

	while (n > 0) {
		pfd.fd = fd;
		pfd.events = wr ? POLLOUT : POLLIN;
		wait = deadline < 0 ? -1 : (int)(deadline - mono_ms());
		if (deadline >= 0 && wait < 0)
			wait = 0;
		if ((pr = poll(&pfd, 1, wait)) == -1) {
			if (errno == EINTR)
				return -1;
			return -1;
		}
		if (pr == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = wr ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
		if (r == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EPIPE;
			return -1;
		}
		p += r;
		n -= r;
	}
	return 0;
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
	struct ctl_buf	 b;
	uint8_t		 hdr[4], *frame = NULL;
	uint32_t	 total;
	int64_t		 deadline;
	char		 err[256], what[CTL_PATH_MAX + 32];
	int		 rc;

	memset(resp, 0, sizeof(*resp));
	if (CTL_HAS(q, CTL_F_PATH))
		snprintf(what, sizeof(what), "%s %s", a->cmd, q->path);
	else
		snprintf(what, sizeof(what), "%s", a->cmd);
	if (a->fd == -1 && (rc = xconnect(a)) != 0)
		return rc;
	deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
	ctl_buf_init(&b, CTL_MAX_REQUEST);
	if (ctl_request_encode(&b, q) == -1) {
		ctl_buf_free(&b);
		fprintf(stderr, "actorctl: %s: request too large (at most "
		    "%d bytes)\n", what, CTL_MAX_REQUEST);
		return ACTORCTL_EXIT_USAGE;
	}
	/*
	 * A refused peer gets its error and the connection closed at once,
	 * perhaps before our request is written: read the answer even when
	 * the write failed, it says why.
	 */
	(void)io_all(a->fd, b.data, b.len, true, deadline);
	ctl_buf_free(&b);
	rc = io_all(a->fd, hdr, 4, false, deadline);
	if (rc == 0) {
		rc = ctl_frame_length(hdr, 4, CTL_MAX_RESPONSE, &total);
		if (rc != 1) {
			fprintf(stderr, "actorctl: %s: malformed answer from "
			    "actord\n", what);
			actorctl_disconnect(a);
			return ACTORCTL_EXIT_PROTO;
		}
		if ((frame = malloc(total)) == NULL) {
			fprintf(stderr, "actorctl: %s\n", strerror(errno));
			return ACTORCTL_EXIT_FAILED;
		}
		memcpy(frame, hdr, 4);
		rc = io_all(a->fd, frame + 4, total - 4, false, deadline);
	}
	if (rc == -1) {
		int e = errno;

		free(frame);
		actorctl_disconnect(a);
		if (e == ETIMEDOUT) {
			fprintf(stderr, "actorctl: %s: no answer from actord "
			    "within %d ms\n", what, timeout_ms);
			return ACTORCTL_EXIT_TIMEOUT;
		}
		fprintf(stderr, "actorctl: %s: connection to actord lost: "
		    "%s\n", what, e == EPIPE ? "closed" : strerror(e));
		return ACTORCTL_EXIT_FAILED;
	}
	rc = ctl_response_decode(frame, total, resp, err, sizeof(err));
	free(frame);
	if (rc == -1) {
		fprintf(stderr, "actorctl: %s: %s\n", what, err);
		actorctl_disconnect(a);
		return ACTORCTL_EXIT_PROTO;
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
