/*
 * ready.c: how actord learns that a child is ready.
 *
 *   exec	ready once execve succeeded (worker.c reads the exec pipe)
 *   fd		a newline on the pipe named by ACTORD_NOTIFY_FD (s6's way)
 *   sd_notify	READY=1 on NOTIFY_SOCKET (systemd's protocol): one
 *		datagram socket in the abstract namespace, shared by every
 *		child; SO_PASSCRED tells the senders apart by pid
 *   actor	the libactor worker says so: for now through the same fd as
 *		the fd mode, and ready_mark() is the hook the arena side
 *		calls once it can tell actord directly
 *
 * It owns the notification descriptors.  It must never decide what a
 * readiness means: it only raises WEV_READY on the node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

static void	on_notify_pipe(void *, uint32_t);
static void	on_notify_socket(void *, uint32_t);
static void	socket_drain(struct actord *);
static bool	has_ready(const char *, size_t);

int
ready_socket_open(struct actord *ad)
{
	struct sockaddr_un sun;
	socklen_t len;
	int fd, one = 1;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) == -1)
		goto fail;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	/* Abstract: nothing to clean up in the file system. */
	snprintf(ad->notify_name, sizeof(ad->notify_name),
	    "@actord/%d/%llx/notify", (int)getpid(),
	    (unsigned long long)rng_next(&ad->rng));
	len = strlen(ad->notify_name);
	memcpy(sun.sun_path, ad->notify_name, len);
	sun.sun_path[0] = '\0';
	if (bind(fd, (struct sockaddr *)&sun,
	    offsetof(struct sockaddr_un, sun_path) + len) == -1)
		goto fail;
	if (loop_add(&ad->loop, &ad->notify_ev, fd, EPOLLIN, on_notify_socket,
	    ad) == -1)
		goto fail;
	ad->notify_sock = fd;
	return 0;
fail:
	close(fd);
	ad->notify_name[0] = '\0';
	return -1;
}

void
ready_socket_close(struct actord *ad)
{
	if (ad->notify_sock == -1)
		return;
	loop_del(&ad->loop, &ad->notify_ev);
	close(ad->notify_sock);
	ad->notify_sock = -1;
}

static bool
has_ready(const char *buf, size_t len)
{
	size_t i = 0, j;

	while (i < len) {
		for (j = i; j < len && buf[j] != '\n'; j++)
			;
		if (j - i == 7 && memcmp(buf + i, "READY=1", 7) == 0)
			return true;
		i = j + 1;
	}
	return false;
}

/*
 * Before reaping: a READY=1 sent right before a death is read first.  A
 * READY=1 means something only from a child still starting with ready =
 * "sd_notify": without one, nothing is read (a recvmsg of every death,
 * which would say EAGAIN); the loop reads what comes anyway.
 */
void
ready_socket_drain(struct actord *ad)
{
	if (ad->nsd_waiting > 0)
		socket_drain(ad);
}

/* Read every queued datagram. */
static void
socket_drain(struct actord *ad)
{
	char buf[4096], cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct msghdr msg;
	struct iovec iov;
	struct cmsghdr *cm;
	struct ucred cred;
	struct node *n;
	ssize_t r;
	pid_t pgid;

	if (ad->notify_sock == -1)
		return;
	for (;;) {
		memset(&msg, 0, sizeof(msg));
		iov.iov_base = buf;
		iov.iov_len = sizeof(buf);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		r = recvmsg(ad->notify_sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (r == -1)
			return;
		cred.pid = 0;
		for (cm = CMSG_FIRSTHDR(&msg); cm != NULL;
		    cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_CREDENTIALS &&
			    cm->cmsg_len == CMSG_LEN(sizeof(cred)))
				memcpy(&cred, CMSG_DATA(cm), sizeof(cred));
		if (cred.pid <= 0 || !has_ready(buf, (size_t)r))
			continue;
		/* The main process, or anything in its process group. */
		if ((n = node_by_pid(ad, cred.pid)) == NULL &&
		    (pgid = getpgid(cred.pid)) > 0)
			n = node_by_pid(ad, pgid);
		if (n == NULL || n->cs == NULL || n->cs->ready != READY_SD_NOTIFY) {
			log_debug("%s: READY=1 from unknown pid %d", __func__,
			    (int)cred.pid);
			continue;
		}
		worker_event(n, WEV_READY);
	}
}

static void
on_notify_socket(void *arg, uint32_t events)
{
	(void)events;
	socket_drain(arg);
}

/* The fd and actor modes: a pipe whose write end the child gets. */
int
ready_prepare(struct node *n, int *notify_w)
{
	int p[2];

	*notify_w = -1;
	if (n->cs->ready == READY_SD_NOTIFY && !n->sd_waiting) {
		n->sd_waiting = true;
		n->ad->nsd_waiting++;
	}
	if (n->cs->ready != READY_FD && n->cs->ready != READY_ACTOR)
		return 0;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == -1)
		return -1;
	if (loop_add(&n->ad->loop, &n->notify_ev, p[0], EPOLLIN,
	    on_notify_pipe, n) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	n->notify_fd = p[0];
	*notify_w = p[1];
	return 0;
}

/* Started, or failed to: nothing more to wait for. */
void
ready_release(struct node *n)
{
	if (n->sd_waiting) {
		n->sd_waiting = false;
		n->ad->nsd_waiting--;
	}
	if (n->notify_fd == -1)
		return;
	loop_del(&n->ad->loop, &n->notify_ev);
	close(n->notify_fd);
	n->notify_fd = -1;
}

/* A newline means ready; EOF without one means nothing more will come. */
static void
on_notify_pipe(void *arg, uint32_t events)
{
	struct node *n = arg;
	char buf[256];
	ssize_t r;

	(void)events;
	for (;;) {
		r = read(n->notify_fd, buf, sizeof(buf));
		if (r > 0) {
			if (memchr(buf, '\n', (size_t)r) != NULL) {
				ready_release(n);
				worker_event(n, WEV_READY);
				return;
			}
			continue;
		}
		if (r == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		ready_release(n);	/* EOF or error: stop watching */
		return;
	}
}

/* The hook for the actor mode, called by the arena side. */
void
ready_mark(struct node *n)
{
	if (n != NULL && n->kind == NODE_WORKER)
		worker_event(n, WEV_READY);
}

/* Read what the child wrote before its death was noticed. */
void
ready_drain(struct node *n)
{
	if (n->notify_fd != -1)
		on_notify_pipe(n, 0);
}
