/*
 * ctlclient.c: the client side of the control socket, shared by actorctl
 * (tools/actorctl_client.c) and libactor's local client transport
 * (worker/client_local.c): connect to the socket, and one round trip,
 * a request written and its answer read, both before one deadline.
 *
 * It owns no state: the caller keeps the descriptor.  It must never
 * print, never wait past the deadline, and never trust the length of an
 * answer beyond CTL_MAX_RESPONSE.
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

#include "supervisor/ctlproto.h"

static int	 io_all(int, void *, size_t, bool, int64_t);

int64_t
ctl_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A connected descriptor (close-on-exec), or -1 with errno. */
int
ctl_connect(const char *sock)
{
	struct sockaddr_un sun;
	int fd, e;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(sock) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, sock, strlen(sock));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * Read or write exactly n bytes before the deadline (ms, monotonic; -1:
 * none).  0, or -1 with errno (ETIMEDOUT, EPIPE at end of file).
 */
static int
io_all(int fd, void *buf, size_t n, bool wr, int64_t deadline)
{
	struct pollfd pfd;
	uint8_t *p = buf;
	ssize_t r;
	int wait, pr;

	while (n > 0) {
		pfd.fd = fd;
		pfd.events = wr ? POLLOUT : POLLIN;
		wait = deadline < 0 ? -1 : (int)(deadline - ctl_mono_ms());
		if (deadline >= 0 && wait < 0)
			wait = 0;
		if ((pr = poll(&pfd, 1, wait)) == -1)
			return -1;
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
		n -= (size_t)r;
	}
	return 0;
}

/*
 * One request and its answer, before deadline (ms, ctl_mono_ms(); -1:
 * none).  0 with *resp decoded (any status: the caller reads it), or -1
 * with errno: E2BIG (the request is over CTL_MAX_REQUEST), ETIMEDOUT,
 * EPIPE (closed), EPROTO (a malformed answer: err says how), ENOMEM or
 * what the socket said.  After -1 the connection is unusable.
 */
int
ctl_roundtrip(int fd, const struct ctl_request *q, struct ctl_response *resp,
    int64_t deadline, char *err, size_t errlen)
{
	struct ctl_buf b;
	uint8_t hdr[4], *frame = NULL;
	uint32_t total;
	int rc, e;

	memset(resp, 0, sizeof(*resp));
	if (errlen > 0)
		err[0] = '\0';
	ctl_buf_init(&b, CTL_MAX_REQUEST);
	if (ctl_request_encode(&b, q) == -1) {
		ctl_buf_free(&b);
		errno = b.err == ENOMEM ? ENOMEM : E2BIG;
		return -1;
	}
	/*
	 * A refused peer gets its error and the connection closed at once,
	 * perhaps before our request is written: read the answer even when
	 * the write failed, it says why.
	 */
	(void)io_all(fd, b.data, b.len, true, deadline);
	ctl_buf_free(&b);
	if (io_all(fd, hdr, sizeof(hdr), false, deadline) == -1)
		return -1;
	if (ctl_frame_length(hdr, sizeof(hdr), CTL_MAX_RESPONSE, &total) != 1) {
		snprintf(err, errlen, "malformed answer from actord");
		errno = EPROTO;
		return -1;
	}
	if ((frame = malloc(total)) == NULL)
		return -1;
	memcpy(frame, hdr, sizeof(hdr));
	if (io_all(fd, frame + sizeof(hdr), total - sizeof(hdr), false,
	    deadline) == -1) {
		e = errno;
		free(frame);
		errno = e;
		return -1;
	}
	rc = ctl_response_decode(frame, total, resp, err, errlen);
	free(frame);
	if (rc == -1) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}
