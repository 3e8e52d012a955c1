/*
 * ctl_abuser.c: a peer that tries to keep actord's owner off the control
 * socket (issue 11, item 6), for the tests of control.c's limits.
 *
 *	ctl_abuser -s SOCK -n N [-p] [-r] [-U UID:GID]
 *
 * Opens N connections to SOCK and holds them without ever finishing a
 * request: idle, or with -p half-sent (two bytes of a frame's length).
 * With -r, every connection that actord closes (or that its full backlog
 * refused) is opened again at once, for as long as it runs.  With -U, it
 * first becomes UID:GID (run as root).  Prints "ready" once N connections
 * were opened, and on SIGTERM "opened X closed Y" (connections it opened,
 * and those actord closed) and exits 0.  It exits so too when its parent
 * dies or the socket is gone (actord stopped), so that a test that fails
 * never leaves it spinning.
 *
 * It owns its connections and nothing else.
 */
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXCONN		4096
#define RETRY_MS	1	/* a full backlog is tried again this soon */

struct abuser {
	struct sockaddr_un sun;
	int		 fds[MAXCONN];
	int		 n;
	bool		 half;		/* -p */
	bool		 reopen;	/* -r */
	int		 epfd;
	uint64_t	 opened, closed;
	bool		 ready;
	bool		 gone;		/* the socket no longer exists */
};

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void
usage(void)
{
	fprintf(stderr, "usage: ctl_abuser -s SOCK -n N [-p] [-r] "
	    "[-U UID:GID]\n");
	exit(2);
}

/* Become uid:gid, or exit. */
static void
become(const char *spec)
{
	unsigned uid, gid;

	if (sscanf(spec, "%u:%u", &uid, &gid) != 2)
		usage();
	if (setgroups(0, NULL) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1) {
		perror("ctl_abuser: becoming UID:GID");
		exit(1);
	}
}

/* Connection i: opened (true), or refused by a full backlog (false). */
static bool
open_one(struct abuser *a, int i)
{
	struct epoll_event ev;
	static const uint8_t half[2] = { 0, 0 };
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return false;
	if (connect(fd, (struct sockaddr *)&a->sun, sizeof(a->sun)) == -1 &&
	    errno != EINPROGRESS) {
		if (errno == ENOENT || errno == ECONNREFUSED)
			a->gone = true;
		close(fd);
		return false;
	}
	if (a->half)
		(void)!send(fd, half, sizeof(half), MSG_NOSIGNAL);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLRDHUP;
	ev.data.u32 = (uint32_t)i;
	if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev) == -1) {
		close(fd);
		return false;
	}
	a->fds[i] = fd;
	a->opened++;
	return true;
}

/* Open what is closed (all of them once; again only with -r). */
static bool
open_all(struct abuser *a)
{
	bool missing = false;
	int i;

	for (i = 0; i < a->n; i++)
		if (a->fds[i] == -1 && !open_one(a, i))
			missing = true;
	if (!a->ready && a->opened >= (uint64_t)a->n) {
		printf("ready\n");
		fflush(stdout);
		a->ready = true;
	}
	return missing;
}

/* Read what actord sent (an error frame at most); close at its EOF. */
static void
drain(struct abuser *a, int i)
{
	uint8_t buf[4096];
	ssize_t k;

	while ((k = recv(a->fds[i], buf, sizeof(buf), 0)) > 0)
		;
	if (k == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	epoll_ctl(a->epfd, EPOLL_CTL_DEL, a->fds[i], NULL);
	close(a->fds[i]);
	a->fds[i] = -1;
	a->closed++;
}

int
main(int argc, char **argv)
{
	static struct abuser a;
	struct epoll_event evs[64];
	struct sigaction sa;
	struct rlimit rl;
	const char *sock = NULL;
	pid_t parent = getppid();
	bool missing;
	int ch, i, k;

	while ((ch = getopt(argc, argv, "s:n:prU:")) != -1) {
		switch (ch) {
		case 's': sock = optarg; break;
		case 'n': a.n = atoi(optarg); break;
		case 'p': a.half = true; break;
		case 'r': a.reopen = true; break;
		case 'U': become(optarg); break;
		default: usage();
		}
	}
	if (sock == NULL || a.n <= 0 || a.n > MAXCONN ||
	    strlen(sock) >= sizeof(a.sun.sun_path))
		usage();
	a.sun.sun_family = AF_UNIX;
	memcpy(a.sun.sun_path, sock, strlen(sock));
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur <
	    (rlim_t)a.n + 32) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)a.n + 32 ? rl.rlim_max :
		    (rlim_t)a.n + 32;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* After -U, which clears it: a parent's death ends us. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 || getppid() != parent)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < a.n; i++)
		a.fds[i] = -1;
	if ((a.epfd = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		perror("ctl_abuser: epoll_create1");
		return 1;
	}
	missing = true;
	while (!stop && !a.gone) {
		if (missing && (a.reopen || !a.ready))
			missing = open_all(&a);
		k = epoll_wait(a.epfd, evs, 64, missing ? RETRY_MS : 100);
		for (i = 0; i < k; i++)
			drain(&a, (int)evs[i].data.u32);
		if (k > 0)
			missing = true;
	}
	printf("opened %llu closed %llu\n", (unsigned long long)a.opened,
	    (unsigned long long)a.closed);
	return 0;
}
