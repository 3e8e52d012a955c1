/*
 * ready.c: how actord learns that a child is ready.
 *
 *   exec	ready once execve succeeded (worker.c: spawn_child returns
 *		once the child has exec'd)
 *   fd		a newline on the pipe named by ACTORD_NOTIFY_FD (s6's way):
 *		a pipe of its own per start, so that whatever holds its end
 *		counts (a helper that writes and exits, as s6-notifyoncheck)
 *   sd_notify	READY=1 on NOTIFY_SOCKET (systemd's protocol): one
 *		datagram socket in the abstract namespace, shared by every
 *		child; SO_PASSCRED tells the senders apart by pid
 *   actor	the libactor worker says so (actor_ready): READY=1 on the
 *		same socket, named to it by ACTORD_NOTIFY_SOCKET, so that a
 *		start costs actord no pipe, no epoll entry and no descriptor
 *		(issue 13: eight system calls of actord's per start, where
 *		the actor makes one more, its socket); a pipe as in the fd
 *		mode if actord has no socket
 *
 * On the socket a child is known by the pid the kernel writes in the
 * datagram's credentials, never by what it sends: the child's own pid,
 * or that of a process of its process group still there when actord
 * reads (getpgid).  So no child can declare another one ready: naming
 * another pid takes CAP_SYS_ADMIN (unix(7)), which is also enough to
 * ptrace actord.  A datagram is read before its sender's pid can be
 * reused: while a child waits on the socket, every reap reads it first
 * (ready_socket_drain, called by actord.c's reap_one).
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

#define RECV_BATCH	8	/* datagrams per recvmmsg */
#define RECV_LEN	4096	/* of each: the rest of a longer one is cut */

static void	on_notify_pipe(void *, uint32_t);
static void	on_notify_socket(void *, uint32_t);
static void	socket_drain(struct actord *);
static void	datagram(struct actord *, struct msghdr *, size_t);
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
 * Before reaping: a READY=1 sent right before a death is read first, and
 * a dead sender's pid is never taken for a new child's.  The socket is
 * read only while a child waits on it: without one, nothing is read (a
 * recvmmsg of every death, which would say EAGAIN); the loop reads what
 * comes anyway.
 */
void
ready_socket_drain(struct actord *ad)
{
	if (ad->nsock_waiting > 0)
		socket_drain(ad);
}

/*
 * Read every queued datagram: a batch per system call, and a batch not
 * filled says the socket is empty, with no last call to hear EAGAIN.
 */
static void
socket_drain(struct actord *ad)
{
	char buf[RECV_BATCH][RECV_LEN];
	char cbuf[RECV_BATCH][CMSG_SPACE(sizeof(struct ucred))];
	struct mmsghdr mm[RECV_BATCH];
	struct iovec iov[RECV_BATCH];
	int i, r;

	if (ad->notify_sock == -1)
		return;
	do {
		memset(mm, 0, sizeof(mm));
		for (i = 0; i < RECV_BATCH; i++) {
			iov[i].iov_base = buf[i];
			iov[i].iov_len = sizeof(buf[i]);
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
			mm[i].msg_hdr.msg_control = cbuf[i];
			mm[i].msg_hdr.msg_controllen = sizeof(cbuf[i]);
		}
		r = recvmmsg(ad->notify_sock, mm, RECV_BATCH, MSG_DONTWAIT |
		    MSG_CMSG_CLOEXEC, NULL);
		for (i = 0; i < r; i++)
			datagram(ad, &mm[i].msg_hdr, mm[i].msg_len);
	} while (r == RECV_BATCH);
}

/* One datagram: its sender's node, if it waits on the socket, is ready. */
static void
datagram(struct actord *ad, struct msghdr *msg, size_t len)
{
	struct cmsghdr *cm;
	struct ucred cred;
	struct node *n;
	pid_t pgid;

	if (len > msg->msg_iov[0].iov_len)
		len = msg->msg_iov[0].iov_len;	/* cut (MSG_TRUNC) */
	cred.pid = 0;
	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_CREDENTIALS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(cred)))
			memcpy(&cred, CMSG_DATA(cm), sizeof(cred));
	if (cred.pid <= 0 || !has_ready(msg->msg_iov[0].iov_base, len))
		return;
	/* The main process, or anything in its process group. */
	if ((n = node_by_pid(ad, cred.pid)) == NULL &&
	    (pgid = getpgid(cred.pid)) > 0)
		n = node_by_pid(ad, pgid);
	if (n == NULL || !n->sock_waiting) {
		log_debug("%s: READY=1 from pid %d, which no child waiting "
		    "for it is", __func__, (int)cred.pid);
		return;
	}
	worker_event(n, WEV_READY);
}

static void
on_notify_socket(void *arg, uint32_t events)
{
	(void)events;
	socket_drain(arg);
}

/*
 * Before a start: what the child is given as ACTORD_NOTIFY_FD, *notify_w
 * (-1: none), closed by the caller once the child has it.  A child whose
 * readiness comes on the socket (sd_notify, actor) is counted waiting.
 */
int
ready_prepare(struct node *n, int *notify_w)
{
	int p[2];

	*notify_w = -1;
	if (ready_by_socket(n)) {
		if (!n->sock_waiting) {
			n->sock_waiting = true;
			n->ad->nsock_waiting++;
		}
		return 0;
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

/* The readiness of n's next start comes on the socket (spawn.c's env). */
bool
ready_by_socket(const struct node *n)
{
	return n->ad->notify_sock != -1 && (n->cs->ready == READY_SD_NOTIFY ||
	    n->cs->ready == READY_ACTOR);
}

/* Started, or failed to: nothing more to wait for. */
void
ready_release(struct node *n)
{
	if (n->sock_waiting) {
		n->sock_waiting = false;
		n->ad->nsock_waiting--;
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

/*
 * Read what the child wrote on its pipe before its death was noticed;
 * the socket is read before every reap while a child waits on it
 * (ready_socket_drain).
 */
void
ready_drain(struct node *n)
{
	if (n->notify_fd != -1)
		on_notify_pipe(n, 0);
}
