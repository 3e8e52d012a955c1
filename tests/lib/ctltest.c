/*
 * ctltest.c: see ctltest.h.  Failures to set up are test failures
 * (ck_abort_msg), never silent skips.
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/ctltest.h"
#include "tools/json.h"

#define IO_TIMEOUT	20000	/* ms: generous, a noisy machine */

const char *
ctltest_build(void)
{
	const char *b = getenv("ACTORD_BUILD");

	return b != NULL && b[0] != '\0' ? b : "build";
}

static void
child_setup(void)
{
	sigset_t none;

	/* Dies with the test process, whatever happens to it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
}

void
ctltest_start(struct ctltest_server *s, const char *const *extra)
{
	ctltest_start_in(s, NULL, extra);
}

/*
 * Start the fake server in a fresh runtime directory, or in dir (a
 * server's dir, reused).  Fails the test unless it says it is ready.
 */
void
ctltest_start_in(struct ctltest_server *s, const char *dir,
    const char *const *extra)
{
	char		 prog[512], line[64];
	const char	*argv[32];
	int		 p[2], n = 0, i;
	struct pollfd	 pfd;
	ssize_t		 r;
	size_t		 got = 0;

	memset(s, 0, sizeof(*s));
	if (dir != NULL) {
		snprintf(s->dir, sizeof(s->dir), "%s", dir);
		snprintf(s->log, sizeof(s->log), "%s.log", dir);
	} else {
		strcpy(s->dir, "/tmp/ctltest.XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(s->dir));
		/* Traversable, so tests running as nobody reach the socket. */
		ck_assert_int_eq(chmod(s->dir, 0711), 0);
		snprintf(s->log, sizeof(s->log), "%s/server.log", s->dir);
		/* The server creates its runtime directory: a subdirectory. */
		strcat(s->dir, "/rt");
	}
	snprintf(s->sock, sizeof(s->sock), "%s/control.sock", s->dir);
	snprintf(prog, sizeof(prog), "%s/tests/progs/ctl_fake_server",
	    ctltest_build());
	argv[n++] = prog;
	argv[n++] = "-d";
	argv[n++] = s->dir;
	for (i = 0; extra != NULL && extra[i] != NULL && n < 30; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	s->pid = fork();
	ck_assert_int_ne(s->pid, -1);
	if (s->pid == 0) {
		child_setup();
		dup2(p[1], STDOUT_FILENO);
		i = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (i != -1)
			dup2(i, STDERR_FILENO);
		execv(prog, (char *const *)(uintptr_t)argv);
		fprintf(stderr, "exec %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	/* Wait for "ready PORT\n". */
	while (got < sizeof(line) - 1 && memchr(line, '\n', got) == NULL) {
		pfd.fd = p[0];
		pfd.events = POLLIN;
		ck_assert_msg(poll(&pfd, 1, IO_TIMEOUT) == 1,
		    "fake server not ready");
		r = read(p[0], line + got, sizeof(line) - 1 - got);
		ck_assert_msg(r > 0, "fake server exited before ready");
		got += r;
	}
	line[got] = '\0';
	close(p[0]);
	ck_assert_int_eq(sscanf(line, "ready %d", &s->port), 1);
}

void
ctltest_stop(struct ctltest_server *s)
{
	char	 top[64], *slash;
	int	 st;

	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, &st, 0);
		s->pid = 0;
	}
	unlink(s->sock);
	{
		char f[160];

		snprintf(f, sizeof(f), "%s/reload-error", s->dir);
		unlink(f);
	}
	rmdir(s->dir);
	snprintf(top, sizeof(top), "%s", s->dir);
	if ((slash = strrchr(top, '/')) != NULL) {
		*slash = '\0';
		unlink(s->log);
		rmdir(top);
	}
}

int
ctltest_connect(const char *sock)
{
	struct sockaddr_un	 sun;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A connection to sock made by a forked child as nobody in group gid,
 * handed back (SCM_RIGHTS): actord sees nobody (and the child's pid) as
 * its peer, for SO_PEERCRED is taken at connect.  -1 on failure.
 */
int
ctltest_connect_as_nobody(const char *sock, gid_t gid)
{
	char		 cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr	 m;
	struct cmsghdr	*cm;
	struct iovec	 iov;
	char		 byte = 0;
	int		 sp[2], fd = -1, st;
	pid_t		 pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sp), 0);
	memset(&m, 0, sizeof(m));
	memset(cbuf, 0, sizeof(cbuf));
	iov.iov_base = &byte;
	iov.iov_len = 1;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		if (setgroups(0, NULL) == -1 || setresgid(gid, gid, gid) ==
		    -1 || setresuid(CTLTEST_NOBODY, CTLTEST_NOBODY,
		    CTLTEST_NOBODY) == -1 || (fd = ctltest_connect(sock)) == -1)
			_exit(1);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		_exit(sendmsg(sp[1], &m, 0) == 1 ? 0 : 1);
	}
	close(sp[1]);
	if (recvmsg(sp[0], &m, 0) == 1 && (cm = CMSG_FIRSTHDR(&m)) != NULL &&
	    cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	close(sp[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return fd;
}

static int
read_full(int fd, uint8_t *p, size_t n)
{
	struct pollfd	 pfd;
	ssize_t		 r;

	while (n > 0) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, IO_TIMEOUT) != 1)
			return -1;
		if ((r = read(fd, p, n)) <= 0)
			return -1;
		p += r;
		n -= r;
	}
	return 0;
}

int
ctltest_exchange(int fd, const void *req, size_t len, struct ctl_response *resp)
{
	uint8_t		 hdr[4], *frame;
	uint32_t	 total;
	char		 err[128];
	int		 rc;

	if (len > 0)
		(void)!send(fd, req, len, MSG_NOSIGNAL);
	if (read_full(fd, hdr, 4) == -1)
		return -1;
	if (ctl_frame_length(hdr, 4, CTL_MAX_RESPONSE, &total) != 1)
		return -1;
	frame = malloc(total);
	memcpy(frame, hdr, 4);
	rc = read_full(fd, frame + 4, total - 4);
	if (rc == 0)
		rc = ctl_response_decode(frame, total, resp, err, sizeof(err));
	free(frame);
	return rc;
}

int
ctltest_request(const char *sock, const struct ctl_request *q,
    struct ctl_response *resp)
{
	struct ctl_buf	 b;
	int		 fd, rc;

	if ((fd = ctltest_connect(sock)) == -1)
		return -1;
	ctl_buf_init(&b, CTL_MAX_REQUEST);
	ctl_request_encode(&b, q);
	rc = ctltest_exchange(fd, b.data, b.len, resp);
	ctl_buf_free(&b);
	close(fd);
	return rc;
}

int
ctltest_counters(const char *sock, struct ctl_counters *c)
{
	struct ctl_request	 q;
	struct ctl_response	 r;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATS;
	if (ctltest_request(sock, &q, &r) == -1 || r.status != CTL_OK ||
	    !r.has_control) {
		ctl_response_free(&r);
		return -1;
	}
	*c = r.control;
	ctl_response_free(&r);
	return 0;
}

static void
slurp(int fd, char **buf, size_t *len, size_t *cap)
{
	ssize_t r;

	if (*len + 4096 + 1 > *cap) {
		*cap = (*cap + 4096) * 2;
		*buf = realloc(*buf, *cap);
	}
	r = read(fd, *buf + *len, *cap - *len - 1);
	if (r > 0)
		*len += r;
	(*buf)[*len] = '\0';
}

void
ctltest_actorctl(const struct ctltest_server *s, const char *input,
    struct ctltest_out *o, ...)
{
	char		 prog[512];
	const char	*argv[32];
	va_list		 ap;
	int		 in[2], out[2], err[2], n = 0, st, open_fds;
	size_t		 ocap = 0, ecap = 0, elen = 0;
	struct pollfd	 pfd[2];
	pid_t		 pid;
	const char	*a;

	memset(o, 0, sizeof(*o));
	snprintf(prog, sizeof(prog), "%s/actorctl", ctltest_build());
	argv[n++] = prog;
	argv[n++] = "-S";
	argv[n++] = s->sock;
	va_start(ap, o);
	while ((a = va_arg(ap, const char *)) != NULL && n < 30)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		child_setup();
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		execv(prog, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	if (input != NULL)
		(void)!write(in[1], input, strlen(input));
	close(in[1]);
	o->out = calloc(1, 1);
	o->err = calloc(1, 1);
	for (open_fds = 2; open_fds > 0;) {
		pfd[0].fd = out[0];
		pfd[0].events = POLLIN;
		pfd[1].fd = err[0];
		pfd[1].events = POLLIN;
		ck_assert_msg(poll(pfd, 2, IO_TIMEOUT) > 0, "actorctl hangs");
		if (pfd[0].revents) {
			size_t before = o->outlen;

			slurp(out[0], &o->out, &o->outlen, &ocap);
			if (o->outlen == before) {
				close(out[0]);
				out[0] = -1;
				open_fds--;
			}
		}
		if (pfd[1].revents) {
			size_t before = elen;

			slurp(err[0], &o->err, &elen, &ecap);
			if (elen == before) {
				close(err[0]);
				err[0] = -1;
				open_fds--;
			}
		}
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void
ctltest_out_free(struct ctltest_out *o)
{
	free(o->out);
	free(o->err);
	memset(o, 0, sizeof(*o));
}

/* --- actorctl top on a pseudo-terminal ---------------------------------- */

#define TOP_BUF	(1 << 20)

static size_t
count_in(const char *buf, size_t len, const char *what)
{
	const char *p = buf, *end = buf + len;
	size_t n = 0, wl = strlen(what);

	while ((p = memmem(p, (size_t)(end - p), what, wl)) != NULL) {
		n++;
		p += wl;
	}
	return n;
}

/* Run actorctl -S sock top as the session leader of a new terminal. */
void
ctltest_top_start(struct ctltest_top *t, const char *sock)
{
	static const char *const top[] = { "top", NULL };

	ctltest_pty_start(t, sock, 100, top);
}

/*
 * Run actorctl -S sock args... as the session leader of a new terminal
 * cols columns wide (24 lines).
 */
void
ctltest_pty_start(struct ctltest_top *t, const char *sock,
    unsigned short cols, const char *const *args)
{
	struct winsize	 ws = { 24, cols, 0, 0 };
	char		*argv[16], prog[512];
	size_t		 i;

	memset(t, 0, sizeof(*t));
	snprintf(prog, sizeof(prog), "%s/actorctl", ctltest_build());
	ck_assert_int_eq(openpty(&t->master, &t->slave, NULL, NULL, &ws), 0);
	ck_assert_int_eq(tcgetattr(t->slave, &t->before), 0);
	t->buf = calloc(1, TOP_BUF);
	ck_assert_ptr_nonnull(t->buf);
	t->pid = fork();
	ck_assert_int_ne(t->pid, -1);
	if (t->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setsid();
		ioctl(t->slave, TIOCSCTTY, 0);
		dup2(t->slave, 0);
		dup2(t->slave, 1);
		dup2(t->slave, 2);
		close(t->master);
		/* Copies: execv takes them as not const. */
		argv[0] = prog;
		argv[1] = strdup("-S");
		argv[2] = strdup(sock);
		for (i = 0; args[i] != NULL && i + 4 < 16; i++)
			argv[i + 3] = strdup(args[i]);
		argv[i + 3] = NULL;
		execv(prog, argv);
		_exit(127);
	}
}

/*
 * Read what a command started by ctltest_pty_start prints until it exits
 * (ms at most), reap it and return its exit status; its output is in
 * t->buf (NUL-terminated), t->len bytes.
 */
int
ctltest_pty_end(struct ctltest_top *t, int ms)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	pid_t		 w = 0;
	int		 st = 0, waited;

	for (waited = 0; waited < ms; waited += 20) {
		pfd.fd = t->master;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 20) == 1 && t->len + 1 < TOP_BUF &&
		    (n = read(t->master, t->buf + t->len,
		    TOP_BUF - 1 - t->len)) > 0) {
			t->len += (size_t)n;
			continue;
		}
		if (w == t->pid)
			break;		/* exited, and nothing left to read */
		w = waitpid(t->pid, &st, WNOHANG);
	}
	ck_assert_msg(w == t->pid, "the command did not end within %d ms", ms);
	t->buf[t->len] = '\0';
	close(t->master);
	close(t->slave);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * The widest line of a terminal's output, in columns: escape sequences
 * and carriage returns take none, a UTF-8 character takes one.
 */
size_t
ctltest_widest_line(const char *buf, size_t len)
{
	size_t	 i, w = 0, max = 0;

	for (i = 0; i < len; i++) {
		if (buf[i] == '\033' && i + 1 < len && buf[i + 1] == '[') {
			for (i += 2; i < len && !(buf[i] >= 0x40 &&
			    buf[i] <= 0x7e); i++)
				continue;
			continue;
		}
		if (buf[i] == '\n') {
			w = 0;
			continue;
		}
		if (buf[i] == '\r' || ((unsigned char)buf[i] & 0xc0) == 0x80)
			continue;
		if (++w > max)
			max = w;
	}
	return max;
}

/* Read top's screens until what appeared `times` times. */
void
ctltest_top_until(struct ctltest_top *t, const char *what, int times,
    int ms)
{
	struct pollfd	 pfd;
	ssize_t		 n;

	while (count_in(t->buf, t->len, what) < (size_t)times) {
		pfd.fd = t->master;
		pfd.events = POLLIN;
		ck_assert_msg(poll(&pfd, 1, ms) == 1, "top shows no \"%s\"",
		    what);
		n = read(t->master, t->buf + t->len, TOP_BUF - t->len);
		ck_assert_int_gt(n, 0);
		t->len += (size_t)n;
	}
}

/*
 * After q or a signal: drain the terminal until top left its screen (so
 * it never blocks writing), reap it, and check the terminal is as it was.
 * Returns its exit status (128 + n for signal n).
 */
int
ctltest_top_end(struct ctltest_top *t, int ms)
{
	struct termios	 after;
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 st;

	for (;;) {
		pfd.fd = t->master;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, ms) != 1)
			break;
		n = read(t->master, t->buf + t->len, TOP_BUF - t->len);
		if (n <= 0)
			break;
		t->len += (size_t)n;
		if (memmem(t->buf, t->len, "\033[?1049l", 8) != NULL)
			break;
	}
	ck_assert_int_eq(waitpid(t->pid, &st, 0), t->pid);
	ck_assert_msg(memmem(t->buf, t->len, "\033[?25h", 6) != NULL,
	    "top left the cursor hidden");
	ck_assert_int_eq(tcgetattr(t->slave, &after), 0);
	ck_assert_uint_eq(after.c_lflag, t->before.c_lflag);
	ck_assert_uint_eq(after.c_iflag, t->before.c_iflag);
	ck_assert_uint_eq(after.c_oflag, t->before.c_oflag);
	ck_assert_mem_eq(after.c_cc, t->before.c_cc, sizeof(after.c_cc));
	free(t->buf);
	t->buf = NULL;
	close(t->master);
	close(t->slave);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Fail the test unless o exited with status and, if in_err, said it. */
void
ctltest_expect(const struct ctltest_out *o, int status, const char *in_err)
{
	ck_assert_msg(o->status == status, "exit %d, expected %d; stderr: %s",
	    o->status, status, o->err);
	if (in_err != NULL)
		ck_assert_msg(strstr(o->err, in_err) != NULL,
		    "stderr lacks \"%s\": %s", in_err, o->err);
}

/* The standard output of o, parsed (json_free it); fails if not JSON. */
struct json *
ctltest_json(const struct ctltest_out *o)
{
	struct json	*v;
	char		 err[128];

	v = json_parse(o->out, o->outlen, err, sizeof(err));
	ck_assert_msg(v != NULL, "bad JSON (%s): %s", err, o->out);
	return v;
}

/* actorctl status --json against s, parsed; json_free it. */
struct json *
ctltest_status(const struct ctltest_server *s)
{
	struct ctltest_out	 o;
	struct json		*v;

	ctltest_actorctl(s, NULL, &o, "status", "--json", (char *)NULL);
	ck_assert_msg(o.status == 0, "status: %d %s", o.status, o.err);
	v = ctltest_json(&o);
	ctltest_out_free(&o);
	return v;
}

/* A number field (pid, restarts, ...) of path in status, or -1. */
double
ctltest_node_num(const struct ctltest_server *s, const char *path,
    const char *key)
{
	struct json		*doc = ctltest_status(s);
	const struct json	*nodes, *n, *p, *v;
	double			 num = -1;
	size_t			 i;

	nodes = json_get(doc, "nodes");
	for (i = 0; nodes != NULL && (n = json_at(nodes, i)) != NULL; i++)
		if ((p = json_get(n, "path")) != NULL &&
		    p->type == JSON_STRING && strcmp(p->str, path) == 0 &&
		    (v = json_get(n, key)) != NULL && v->type == JSON_NUMBER)
			num = v->num;
	json_free(doc);
	return num;
}

/*
 * Wait up to ms for path to be running with a pid other than old: that
 * pid, or 0 if it never happened.
 */
pid_t
ctltest_wait_new_pid(const struct ctltest_server *s, const char *path,
    pid_t old, int ms)
{
	struct json		*doc;
	const struct json	*nodes, *n, *p, *st, *pid;
	struct timespec		 ts = { 0, 20000000 };
	pid_t			 found = 0;
	size_t			 i;
	int			 waited;

	for (waited = 0; waited < ms && found == 0; waited += 20) {
		doc = ctltest_status(s);
		nodes = json_get(doc, "nodes");
		for (i = 0; nodes != NULL && (n = json_at(nodes, i)) != NULL;
		    i++) {
			p = json_get(n, "path");
			st = json_get(n, "state");
			pid = json_get(n, "pid");
			if (p == NULL || p->type != JSON_STRING ||
			    strcmp(p->str, path) != 0 || st == NULL ||
			    st->type != JSON_STRING || pid == NULL ||
			    pid->type != JSON_NUMBER)
				continue;
			if (strcmp(st->str, "running") == 0 && pid->num > 0 &&
			    (pid_t)pid->num != old)
				found = (pid_t)pid->num;
		}
		json_free(doc);
		if (found == 0)
			nanosleep(&ts, NULL);
	}
	return found;
}

/*
 * In a child running as nobody: connect and ask for status.  Exit 0 if
 * refused (CTL_E_PERM, with the error text refusal unless it is NULL), 1
 * if answered, 2 if connect failed with EACCES, 3 otherwise.
 */
static int
as_nobody(const char *sock, gid_t gid, const char *refusal)
{
	struct ctl_request	 q;
	struct ctl_response	 r;
	struct ctl_buf		 b;
	int			 fd;

	if (setgroups(0, NULL) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(CTLTEST_NOBODY, CTLTEST_NOBODY, CTLTEST_NOBODY) == -1)
		return 3;
	if ((fd = ctltest_connect(sock)) == -1)
		return errno == EACCES ? 2 : 3;
	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATUS;
	ctl_buf_init(&b, CTL_MAX_REQUEST);
	ctl_request_encode(&b, &q);
	if (ctltest_exchange(fd, b.data, b.len, &r) == -1)
		return 3;
	if (r.status == CTL_E_PERM &&
	    (refusal == NULL || strcmp(r.error, refusal) == 0))
		return 0;
	return r.status == CTL_OK ? 1 : 3;
}

/*
 * Status on sock from a forked child as nobody in group gid: what
 * as_nobody says; the child's pid in *pidp if not NULL.
 */
int
ctltest_as_nobody(const char *sock, gid_t gid, const char *refusal,
    pid_t *pidp)
{
	pid_t	 pid;
	int	 st;

	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0)
		_exit(as_nobody(sock, gid, refusal));
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	if (pidp != NULL)
		*pidp = pid;
	return WEXITSTATUS(st);
}
