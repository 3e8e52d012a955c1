/*
 * check_ctl_server.c: the control socket (control.c) and the metrics
 * listener (metrics.c) as a real server process: the fake-backend server
 * (tests/progs/ctl_fake_server) is started per test, and spoken to over
 * real sockets: malformed requests, other uids, silent clients, too many
 * clients, running out of descriptors, deferred answers, HTTP.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/ctlproto.h"
#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"

#define NOBODY	CTLTEST_NOBODY

/* The server answers a status of the whole tree. */
static void
assert_answers(const struct ctltest_server *s)
{
	struct ctl_request	 q;
	struct ctl_response	 r;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATUS;
	ck_assert_int_eq(ctltest_request(s->sock, &q, &r), 0);
	ck_assert_uint_eq(r.status, CTL_OK);
	ck_assert_uint_gt(r.nnodes, 3);
	ctl_response_free(&r);
}

START_TEST(socket_modes)
{
	struct ctltest_server	 s;
	struct stat		 st;

	ctltest_start(&s, NULL);
	ck_assert_int_eq(stat(s.dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_int_eq(lstat(s.sock, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	assert_answers(&s);
	ctltest_stop(&s);
	/* The socket is gone once the server has stopped. */
	ck_assert_int_eq(lstat(s.sock, &st), -1);
}
END_TEST

START_TEST(socket_modes_group)
{
	static const char *const extra[] = { "-g", "nogroup", NULL };
	struct ctltest_server	 s;
	struct stat		 st;
	struct group		*gr = getgrnam("nogroup");

	ck_assert_ptr_nonnull(gr);
	ctltest_start(&s, extra);
	ck_assert_int_eq(stat(s.dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0710);
	ck_assert_uint_eq(st.st_gid, gr->gr_gid);
	ck_assert_int_eq(lstat(s.sock, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	ck_assert_uint_eq(st.st_gid, gr->gr_gid);
	ctltest_stop(&s);
}
END_TEST

/* A socket left by a dead server is replaced; a live one is kept. */
START_TEST(stale_and_live_socket)
{
	struct ctltest_server	 s, t;
	char			 prog[512];
	pid_t			 pid;
	int			 st, devnull;

	ctltest_start(&s, NULL);
	kill(s.pid, SIGKILL);
	ck_assert_int_eq(waitpid(s.pid, &st, 0), s.pid);
	s.pid = 0;
	ck_assert_int_eq(access(s.sock, F_OK), 0);	/* left behind */
	ctltest_start_in(&t, s.dir, NULL);
	assert_answers(&t);
	/* A second server on the same directory refuses to start. */
	snprintf(prog, sizeof(prog), "%s/tests/progs/ctl_fake_server",
	    ctltest_build());
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execl(prog, prog, "-d", t.dir, (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	assert_answers(&t);
	kill(t.pid, SIGTERM);
	waitpid(t.pid, &st, 0);
	t.pid = 0;
	unlink(t.log);
	ctltest_stop(&s);
}
END_TEST

/* --- malformed requests -------------------------------------------------- */

enum ctr { C_MALFORMED, C_TRUNCATED, C_OVERSIZED, C_VERSION, C_UNKNOWN };

static const struct badreq {
	const char	*what;
	const char	*bytes;
	size_t		 len;
	bool		 half_close;	/* then EOF */
	int		 expect;	/* status, or -1: closed without one */
	enum ctr	 counter;
} badreqs[] = {
	{ "wrong version", "\0\0\0\4\0\2\0\1", 8, false, CTL_E_VERSION,
	    C_VERSION },
	{ "unknown command", "\0\0\0\4\0\1\0\x99", 8, false, CTL_E_UNKNOWN,
	    C_UNKNOWN },
	{ "oversized", "\0\x10\0\0\0\1\0\1", 8, false, CTL_E_TOOBIG,
	    C_OVERSIZED },
	{ "length below header", "\0\0\0\2\0\1", 6, false, CTL_E_PROTO,
	    C_MALFORMED },
	{ "truncated header", "\0\0\0\4\0", 5, true, CTL_E_PROTO, C_TRUNCATED },
	{ "truncated body", "\0\0\0\x0c\0\1\0\1\0\1\0\0", 12, true,
	    CTL_E_PROTO, C_TRUNCATED },
	{ "field past the end", "\0\0\0\x0c\0\1\0\1\0\1\0\0\0\x09\0\0", 16,
	    false, CTL_E_PROTO, C_MALFORMED },
	{ "missing path", "\0\0\0\4\0\1\0\2", 8, false, CTL_E_PROTO,
	    C_MALFORMED },
	{ "bad path", "\0\0\0\x0b\0\1\0\1\0\1\0\0\0\1x", 15, false,
	    CTL_E_PROTO, C_MALFORMED },
	{ "unknown field", "\0\0\0\x0a\0\1\0\1\0\x63\0\0\0\0", 14, false,
	    CTL_E_PROTO, C_MALFORMED },
	{ "text garbage", "GET / HTTP/1.1\r\n\r\n", 18, false, CTL_E_TOOBIG,
	    C_OVERSIZED },
	{ "binary garbage", "\0\0\0\x08\xff\xfe\xfd\xfc\1\2\3\4", 12, false,
	    CTL_E_VERSION, C_VERSION },
};

static uint64_t
counter_of(const struct ctl_counters *c, enum ctr which)
{
	switch (which) {
	case C_MALFORMED:	return c->malformed;
	case C_TRUNCATED:	return c->truncated;
	case C_OVERSIZED:	return c->oversized;
	case C_VERSION:		return c->bad_version;
	case C_UNKNOWN:		return c->unknown_command;
	}
	return 0;
}

START_TEST(malformed_requests)
{
	const struct badreq	*b = &badreqs[_i];
	struct ctltest_server	 s;
	struct ctl_counters	 before, after;
	struct ctl_response	 r;
	int			 fd, rc;

	ctltest_start(&s, NULL);
	ck_assert_int_eq(ctltest_counters(s.sock, &before), 0);
	fd = ctltest_connect(s.sock);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(send(fd, b->bytes, b->len, MSG_NOSIGNAL), (ssize_t)b->len);
	if (b->half_close)
		shutdown(fd, SHUT_WR);
	rc = ctltest_exchange(fd, NULL, 0, &r);
	if (b->expect == -1)
		ck_assert_msg(rc == -1, "%s: answered", b->what);
	else {
		ck_assert_msg(rc == 0, "%s: no answer", b->what);
		ck_assert_msg(r.status == b->expect, "%s: status %u, expected "
		    "%d (%s)", b->what, r.status, b->expect, r.error);
		ck_assert_msg(r.error[0] != '\0', "%s: no error text", b->what);
		ctl_response_free(&r);
		/* And the connection is closed after the error. */
		ck_assert_int_eq(ctltest_exchange(fd, NULL, 0, &r), -1);
	}
	close(fd);
	ck_assert_int_eq(ctltest_counters(s.sock, &after), 0);
	ck_assert_msg(counter_of(&after, b->counter) ==
	    counter_of(&before, b->counter) + 1, "%s: not counted", b->what);
	assert_answers(&s);
	ctltest_stop(&s);
}
END_TEST

/* Many requests on one connection, and a stats answer that counts them. */
START_TEST(several_requests_per_connection)
{
	struct ctltest_server	 s;
	struct ctl_request	 q;
	struct ctl_response	 r;
	struct ctl_buf		 b;
	int			 fd, i;

	ctltest_start(&s, NULL);
	fd = ctltest_connect(s.sock);
	ck_assert_int_ge(fd, 0);
	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATUS;
	for (i = 0; i < 5; i++) {
		ctl_buf_init(&b, CTL_MAX_REQUEST);
		ctl_request_encode(&b, &q);
		ck_assert_int_eq(ctltest_exchange(fd, b.data, b.len, &r), 0);
		ck_assert_uint_eq(r.status, CTL_OK);
		ctl_response_free(&r);
		ctl_buf_free(&b);
	}
	/* Two requests in one write are answered in order. */
	ctl_buf_init(&b, CTL_MAX_REQUEST);
	ctl_request_encode(&b, &q);
	q.cmd = CTL_CMD_RELOAD;
	ctl_request_encode(&b, &q);
	ck_assert_int_eq(ctltest_exchange(fd, b.data, b.len, &r), 0);
	ck_assert_uint_gt(r.nnodes, 0);
	ctl_response_free(&r);
	ck_assert_int_eq(ctltest_exchange(fd, NULL, 0, &r), 0);
	ck_assert_str_eq(r.message, "reloaded: 0 started, 0 stopped, 0 restarted");
	ctl_response_free(&r);
	ctl_buf_free(&b);
	close(fd);
	ctltest_stop(&s);
}
END_TEST

/* --- credentials --------------------------------------------------------- */

START_TEST(other_uid_refused)
{
	struct ctltest_server	 s;
	struct ctl_counters	 c;
	char			 dir[64], logbuf[8192], want[64];
	pid_t			 pid;
	ssize_t			 n;
	int			 fd;

	ck_assert_msg(geteuid() == 0, "this test needs root to setuid");
	ctltest_start(&s, NULL);
	/* The socket's mode keeps nobody out before actord even looks. */
	ck_assert_int_eq(ctltest_as_nobody(s.sock, NOBODY,
	    "permission denied", NULL), 2);
	/*
	 * Open the modes up, as a careless administrator might: the
	 * credentials check still refuses, answers, logs and counts.
	 */
	snprintf(dir, sizeof(dir), "%s", s.dir);
	ck_assert_int_eq(chmod(dir, 0711), 0);
	ck_assert_int_eq(chmod(s.sock, 0666), 0);
	ck_assert_int_eq(ctltest_as_nobody(s.sock, NOBODY,
	    "permission denied", &pid), 0);
	ck_assert_int_eq(ctltest_counters(s.sock, &c), 0);
	ck_assert_uint_eq(c.refused_perm, 1);
	assert_answers(&s);
	/* The refusal is logged with the peer's uid and pid. */
	fd = open(s.log, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, logbuf, sizeof(logbuf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	logbuf[n] = '\0';
	snprintf(want, sizeof(want), "refused uid %d pid %d", NOBODY, (int)pid);
	ck_assert_msg(strstr(logbuf, want) != NULL, "log lacks \"%s\": %s",
	    want, logbuf);
	ctltest_stop(&s);
}
END_TEST

START_TEST(group_member_allowed)
{
	static const char *const extra[] = { "-g", "nogroup", NULL };
	struct ctltest_server	 s;
	struct group		*gr = getgrnam("nogroup");

	ck_assert_msg(geteuid() == 0, "this test needs root to setuid");
	ck_assert_ptr_nonnull(gr);
	ctltest_start(&s, extra);
	/* nobody, in group nogroup, may use a socket for group nogroup. */
	ck_assert_int_eq(ctltest_as_nobody(s.sock, gr->gr_gid,
	    "permission denied", NULL), 1);
	ctltest_stop(&s);
}
END_TEST

/* --- slow, silent and too many clients ----------------------------------- */

START_TEST(silent_client_dropped)
{
	static const char *const extra[] = { "-t", "200", NULL };
	struct ctltest_server	 s;
	struct ctl_counters	 c;
	struct ctl_response	 r;
	int			 idle, partial;

	ctltest_start(&s, extra);
	idle = ctltest_connect(s.sock);
	partial = ctltest_connect(s.sock);
	ck_assert_int_ge(idle, 0);
	ck_assert_int_ge(partial, 0);
	ck_assert_int_eq(send(partial, "\0\0", 2, 0), 2);
	/* Both are closed by the server (ctltest_exchange sees EOF). */
	ck_assert_int_eq(ctltest_exchange(idle, NULL, 0, &r), -1);
	ck_assert_int_eq(ctltest_exchange(partial, NULL, 0, &r), -1);
	close(idle);
	close(partial);
	ck_assert_int_eq(ctltest_counters(s.sock, &c), 0);
	/* Only the one that stalled mid-request counts as a timeout. */
	ck_assert_uint_eq(c.timeouts, 1);
	ctltest_stop(&s);
}
END_TEST

static int
counters_retry(const char *sock, struct ctl_counters *c)
{
	int i;

	/* The server notices closed clients asynchronously: retry a while. */
	for (i = 0; i < 500; i++) {
		if (ctltest_counters(sock, c) == 0)
			return 0;
		usleep(10000);
	}
	return -1;
}

/* A status on fd answers OK. */
static bool
served(int fd)
{
	struct ctl_request	 q;
	struct ctl_response	 r;
	struct ctl_buf		 b;
	bool			 ok;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATUS;
	ctl_buf_init(&b, CTL_MAX_REQUEST);
	ctl_request_encode(&b, &q);
	ok = ctltest_exchange(fd, b.data, b.len, &r) == 0 &&
	    r.status == CTL_OK;
	ctl_buf_free(&b);
	ctl_response_free(&r);
	return ok;
}

/* fd was closed to make room: it says so, then end of file. */
static bool
was_evicted(int fd)
{
	struct ctl_response	 r;
	char			 c;
	bool			 ok;

	ok = ctltest_exchange(fd, NULL, 0, &r) == 0 &&
	    r.status == CTL_E_BUSY && strcmp(r.error,
	    "busy: closed to make room for another client") == 0 &&
	    read(fd, &c, 1) == 0;
	ctl_response_free(&r);
	return ok;
}

/* Nothing came on fd (no answer, no end of file) within 50 ms. */
static bool
left_alone(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 50) == 0;
}

/* A deferred request on fd: deadletters -f past every dead letter. */
static void
wait_deferred(int fd)
{
	struct ctl_request	 q;
	struct ctl_buf		 b;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_DEADLETTERS;
	q.present = 1u << CTL_F_CURSOR | 1u << CTL_F_WAIT;
	q.cursor = 1000000;
	q.wait = true;
	ctl_buf_init(&b, CTL_MAX_REQUEST);
	ctl_request_encode(&b, &q);
	ck_assert_int_eq(send(fd, b.data, b.len, MSG_NOSIGNAL), (ssize_t)b.len);
	ctl_buf_free(&b);
}

/* The server evicted and refused so many, then stops. */
static void
assert_room_made(struct ctltest_server *s, uint64_t evicted, uint64_t busy)
{
	struct ctl_counters c;

	ck_assert_int_eq(counters_retry(s->sock, &c), 0);
	ck_assert_uint_eq(c.evicted, evicted);
	ck_assert_uint_eq(c.refused_busy, busy);
	ctltest_stop(s);
}

/*
 * The table is full: the connection idle longest is closed (and told
 * why) to make room; one waiting for a deferred answer is kept while an
 * idle one is left.  Before, the newcomer was refused "busy".
 */
START_TEST(idle_client_makes_room)
{
	static const char *const extra[] = { "-c", "3", NULL };
	struct ctltest_server	 s;
	int			 waiting, a, b, d;

	ctltest_start(&s, extra);
	waiting = ctltest_connect(s.sock);
	ck_assert_int_ge(waiting, 0);
	wait_deferred(waiting);
	a = ctltest_connect(s.sock);
	ck_assert(served(a));
	b = ctltest_connect(s.sock);
	ck_assert(served(b));
	/* Full: a, idle longest, goes; waiting (older) stays. */
	d = ctltest_connect(s.sock);
	ck_assert(served(d));
	ck_assert(was_evicted(a));
	ck_assert(left_alone(waiting));
	/* Then b, then d: the waiting one stays while any is idle. */
	close(a);
	a = ctltest_connect(s.sock);
	ck_assert(served(a));
	ck_assert(was_evicted(b));
	close(b);
	b = ctltest_connect(s.sock);
	ck_assert(served(b));
	ck_assert(was_evicted(d));
	close(d);
	ck_assert(left_alone(waiting));
	close(a);
	close(b);
	close(waiting);
	assert_room_made(&s, 3, 0);
}
END_TEST

/*
 * Half a request is no better than none: a slow sender's connection is
 * closed in its turn, by when its request began, however it trickles.
 */
START_TEST(half_sent_client_makes_room)
{
	static const char *const extra[] = { "-c", "2", NULL };
	struct ctltest_server	 s;
	int			 half, a, b;

	ctltest_start(&s, extra);
	half = ctltest_connect(s.sock);
	ck_assert_int_eq(send(half, "\0", 1, MSG_NOSIGNAL), 1);
	a = ctltest_connect(s.sock);
	ck_assert(served(a));
	ck_assert_int_eq(send(half, "\0", 1, MSG_NOSIGNAL), 1);
	b = ctltest_connect(s.sock);
	ck_assert(served(b));
	ck_assert(was_evicted(half));
	ck_assert(left_alone(a));
	close(half);
	close(a);
	close(b);
	ctltest_stop(&s);
}
END_TEST

/*
 * Another uid (nobody, allowed by the control group) holds at most its
 * share (-u), giving up its own idlest connection beyond it; it never
 * takes the place of root's (actord's own uid here), and root takes the
 * place of anyone's.  Before, any uid could fill the table.
 */
START_TEST(other_uid_never_locks_out_the_owner)
{
	static const char *const extra[] = { "-g", "nogroup", "-c", "3",
	    "-u", "2", NULL };
	struct ctltest_server	 s;
	struct group		*gr = getgrnam("nogroup");
	struct ctl_response	 r;
	int			 n1, n2, n3, n4, r1, r2, r3;

	if (geteuid() != 0 || gr == NULL) {
		fprintf(stderr, "other_uid_never_locks_out_the_owner: skipped, "
		    "not root or no group nogroup\n");
		return;
	}
	ctltest_start(&s, extra);
	n1 = ctltest_connect_as_nobody(s.sock, gr->gr_gid);
	ck_assert(n1 >= 0 && served(n1));
	n2 = ctltest_connect_as_nobody(s.sock, gr->gr_gid);
	ck_assert(n2 >= 0 && served(n2));
	/* At its share: its third connection closes its own first. */
	n3 = ctltest_connect_as_nobody(s.sock, gr->gr_gid);
	ck_assert(n3 >= 0 && served(n3));
	ck_assert(was_evicted(n1));
	close(n1);
	/* root fills the table, each time in the place of nobody's. */
	r1 = ctltest_connect(s.sock);
	ck_assert(served(r1));
	r2 = ctltest_connect(s.sock);
	ck_assert(served(r2));
	ck_assert(was_evicted(n2));
	r3 = ctltest_connect(s.sock);
	ck_assert(served(r3));
	ck_assert(was_evicted(n3));
	close(n2);
	close(n3);
	/* A table of root's: nobody is refused, root's stay. */
	n4 = ctltest_connect_as_nobody(s.sock, gr->gr_gid);
	ck_assert_int_ge(n4, 0);
	ck_assert_int_eq(ctltest_exchange(n4, NULL, 0, &r), 0);
	ck_assert_uint_eq(r.status, CTL_E_BUSY);
	ck_assert_str_eq(r.error, "busy: too many clients");
	ctl_response_free(&r);
	close(n4);
	ck_assert(left_alone(r1) && left_alone(r2) && left_alone(r3));
	close(r1);
	close(r2);
	close(r3);
	assert_room_made(&s, 3, 1);
}
END_TEST

START_TEST(out_of_descriptors)
{
	/* Few descriptors: the listener, epoll, timerfd, ... and 2 spare. */
	static const char *const extra[] = { "-n", "14", NULL };
	struct ctltest_server	 s;
	struct ctl_counters	 c;
	struct ctl_response	 r;
	int			 fds[40], n, i, busy = 0;

	ctltest_start(&s, extra);
	for (n = 0; n < 40 && !busy; n++) {
		fds[n] = ctltest_connect(s.sock);
		ck_assert_int_ge(fds[n], 0);
		/* Each connection asks; the first refused one says why. */
		struct ctl_request q;
		struct ctl_buf b;

		memset(&q, 0, sizeof(q));
		q.cmd = CTL_CMD_STATUS;
		ctl_buf_init(&b, CTL_MAX_REQUEST);
		ctl_request_encode(&b, &q);
		ck_assert_int_eq(ctltest_exchange(fds[n], b.data, b.len, &r), 0);
		ctl_buf_free(&b);
		if (r.status == CTL_E_BUSY) {
			ck_assert_str_eq(r.error,
			    "busy: actord is out of file descriptors");
			busy = 1;
		} else
			ck_assert_uint_eq(r.status, CTL_OK);
		ctl_response_free(&r);
	}
	ck_assert_msg(busy, "never ran out of descriptors");
	for (i = 0; i < n; i++)
		close(fds[i]);
	/* Once clients leave, it answers again. */
	ck_assert_int_eq(counters_retry(s.sock, &c), 0);
	ck_assert_uint_ge(c.refused_busy, 1);
	assert_answers(&s);
	ctltest_stop(&s);
}
END_TEST

/* --- deferred answers ---------------------------------------------------- */

static const struct ctl_node *
node_of(const struct ctl_response *r, const char *path)
{
	size_t i;

	for (i = 0; i < r->nnodes; i++)
		if (strcmp(r->nodes[i].path, path) == 0)
			return &r->nodes[i];
	return NULL;
}

START_TEST(deferred_restart_and_cancel)
{
	struct ctltest_server	 s;
	struct ctl_request	 q;
	struct ctl_response	 r;
	struct ctl_buf		 b;
	uint64_t		 inc;
	int			 fd;

	ctltest_start(&s, NULL);
	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATUS;
	ck_assert_int_eq(ctltest_request(s.sock, &q, &r), 0);
	inc = node_of(&r, "/web/frontend")->incarnation;
	ctl_response_free(&r);
	/* restart answers once the new incarnation runs. */
	q.cmd = CTL_CMD_RESTART;
	strcpy(q.path, "/web/frontend");
	q.present = 1u << CTL_F_PATH;
	ck_assert_int_eq(ctltest_request(s.sock, &q, &r), 0);
	ck_assert_uint_eq(r.status, CTL_OK);
	ctl_response_free(&r);
	q.cmd = CTL_CMD_STATUS;
	q.present = 0;
	ck_assert_int_eq(ctltest_request(s.sock, &q, &r), 0);
	ck_assert_str_eq(node_of(&r, "/web/frontend")->state, "running");
	ck_assert_uint_eq(node_of(&r, "/web/frontend")->incarnation, inc + 1);
	ctl_response_free(&r);
	/* A client that leaves while its ask is pending: cancelled. */
	fd = ctltest_connect(s.sock);
	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_ASK;
	strcpy(q.path, "/web/frontend");
	q.tag = 2;
	q.timeout_ms = 600000;
	q.present = 1u << CTL_F_PATH | 1u << CTL_F_TAG | 1u << CTL_F_TIMEOUT;
	ctl_buf_init(&b, CTL_MAX_REQUEST);
	ctl_request_encode(&b, &q);
	ck_assert_int_eq(send(fd, b.data, b.len, 0), (ssize_t)b.len);
	ctl_buf_free(&b);
	close(fd);
	assert_answers(&s);
	/* An ask that times out in the backend is an error answer. */
	q.timeout_ms = 50;
	ck_assert_int_eq(ctltest_request(s.sock, &q, &r), 0);
	ck_assert_uint_eq(r.status, CTL_E_TIMEOUT);
	ctl_response_free(&r);
	ctltest_stop(&s);
}
END_TEST

/* --- HTTP /metrics ------------------------------------------------------- */

static char *
http(int port, const char *req, size_t len)
{
	struct sockaddr_in	 sin;
	char			*buf = malloc(1 << 20);
	size_t			 got = 0;
	ssize_t			 n;
	int			 fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	(void)!send(fd, req, len, MSG_NOSIGNAL);
	while (got < (1 << 20) - 1 &&
	    (n = read(fd, buf + got, (1 << 20) - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
	return buf;
}

START_TEST(metrics_http)
{
	static const char *const extra[] = { "-m", "127.0.0.1:0", NULL };
	struct ctltest_server	 s;
	char			*a, big[6000];

	ctltest_start(&s, extra);
	ck_assert_int_gt(s.port, 0);
	a = http(s.port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 35);
	ck_assert_msg(strncmp(a, "HTTP/1.0 200 OK\r\n", 17) == 0, "%.80s", a);
	ck_assert_ptr_nonnull(strstr(a, "Content-Type: text/plain; version=0.0.4"));
	ck_assert_ptr_nonnull(strstr(a,
	    "# TYPE actord_handler_duration_seconds histogram\n"));
	ck_assert_ptr_nonnull(strstr(a, "actord_control_connections_total "));
	free(a);
	a = http(s.port, "POST /metrics HTTP/1.1\r\n\r\n", 26);
	ck_assert_msg(strncmp(a, "HTTP/1.0 405 ", 13) == 0, "%.80s", a);
	free(a);
	a = http(s.port, "GET /secret HTTP/1.1\r\n\r\n", 24);
	ck_assert_msg(strncmp(a, "HTTP/1.0 404 ", 13) == 0, "%.80s", a);
	free(a);
	a = http(s.port, "HELLO\r\n\r\n", 9);
	ck_assert_msg(strncmp(a, "HTTP/1.0 400 ", 13) == 0, "%.80s", a);
	free(a);
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	a = http(s.port, big, sizeof(big));
	ck_assert_msg(strncmp(a, "HTTP/1.0 431 ", 13) == 0, "%.80s", a);
	free(a);
	assert_answers(&s);
	ctltest_stop(&s);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("ctl_server");
	TCase	*tc = tcase_create("server");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, socket_modes);
	tcase_add_test(tc, socket_modes_group);
	tcase_add_test(tc, stale_and_live_socket);
	tcase_add_loop_test(tc, malformed_requests, 0,
	    sizeof(badreqs) / sizeof(badreqs[0]));
	tcase_add_test(tc, several_requests_per_connection);
	tcase_add_test(tc, other_uid_refused);
	tcase_add_test(tc, group_member_allowed);
	tcase_add_test(tc, silent_client_dropped);
	tcase_add_test(tc, idle_client_makes_room);
	tcase_add_test(tc, half_sent_client_makes_room);
	tcase_add_test(tc, other_uid_never_locks_out_the_owner);
	tcase_add_test(tc, out_of_descriptors);
	tcase_add_test(tc, deferred_restart_and_cancel);
	tcase_add_test(tc, metrics_http);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
