/*
 * tsup.c: helpers for the supervisor tests (tsup.h).  Specs are built with
 * spec.c's constructors; actord runs inside the test process (Check forks
 * one per test), and every wait is bounded by a deadline.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/log.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

static char	record_path[64];
static int	record_fd = -1;

void
ts_small(struct sup_spec *s)
{
	s->backoff_min = 1;
	s->backoff_max = 10;
	s->intensity = 5;
	s->period = 10;
	s->min_uptime = 5000;
}

struct actord_spec *
ts_spec(void)
{
	struct actord_spec *spec;

	log_init("test", getenv("TS_VERBOSE") != NULL ? 2 : -1);
	spec = spec_new();
	ck_assert_ptr_nonnull(spec);
	spec->shutdown_timeout = 5000;
	ts_small(&spec->root);
	return spec;
}

/* The pointer is good until the next child is added to s. */
struct child_spec *
ts_add(struct sup_spec *s, const char *name)
{
	struct child_spec *c;

	c = reallocarray(s->children, s->nchildren + 1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	s->children = c;
	c = &s->children[s->nchildren++];
	spec_child_init(c);
	c->name = strdup(name);
	c->shutdown = 2000;
	c->start_timeout = 5000;
	return c;
}

struct child_spec *
ts_add_fn(struct sup_spec *s, const char *name, child_fn fn, void *arg)
{
	struct child_spec *c = ts_add(s, name);

	c->fn = fn;
	c->fn_arg = arg;
	/* Ready once it recorded its start: the record is then in order. */
	c->ready = READY_FD;
	return c;
}

struct child_spec *
ts_add_exec(struct sup_spec *s, const char *name, const char *prog, ...)
{
	struct child_spec *c = ts_add(s, name);
	const char *a;
	va_list ap;
	size_t n = 1;

	c->argv = calloc(16, sizeof(*c->argv));
	ck_assert_ptr_nonnull(c->argv);
	c->argv[0] = strdup(prog);
	va_start(ap, prog);
	while ((a = va_arg(ap, const char *)) != NULL && n < 15)
		c->argv[n++] = strdup(a);
	va_end(ap);
	return c;
}

struct sup_spec *
ts_add_sup(struct sup_spec *s, const char *name, enum strategy st)
{
	struct child_spec *c = ts_add(s, name);

	c->kind = CHILD_SUPERVISOR;
	c->sup = calloc(1, sizeof(*c->sup));
	ck_assert_ptr_nonnull(c->sup);
	spec_sup_init(c->sup);
	ts_small(c->sup);
	c->sup->strategy = st;
	return c->sup;
}

struct actord *
ts_actord(struct actord_spec *spec)
{
	struct actord *ad;
	char err[256];

	ad = actord_new(spec, err, sizeof(err));
	ck_assert_msg(ad != NULL, "actord_new: %s", err);
	ad->free_spec = spec_free;
	return ad;
}

static uint64_t
mono_ms(void)
{
	return now_ms();
}

bool
ts_run_until(struct actord *ad, ts_pred pred, void *arg, int ms)
{
	uint64_t end = mono_ms() + (uint64_t)ms, now;

	while (!pred(ad, arg)) {
		now = mono_ms();
		if (now >= end)
			return false;
		if (loop_once(&ad->loop, (int)(end - now)) == -1)
			return false;
		tree_release(ad);
	}
	return true;
}

/*
 * Run actord until pred holds.  The loop sleeps until an event of its own
 * (idle actord never wakes), and a shared-page flag is no event: so it
 * runs in short slices and pred is read between them.
 */
bool
ts_run_sliced(struct actord *ad, ts_pred pred, void *arg, int ms)
{
	int i;

	for (i = 0; i < ms / 5; i++)
		if (ts_run_until(ad, pred, arg, 5))
			return true;
	return pred(ad, arg);
}

void
ts_run_for(struct actord *ad, int ms)
{
	uint64_t end = mono_ms() + (uint64_t)ms, now;

	while ((now = mono_ms()) < end) {
		(void)loop_once(&ad->loop, (int)(end - now));
		tree_release(ad);
	}
}

struct state_arg {
	const char	*path;
	enum node_state	 state;
	pid_t		 old;
};

static bool
state_pred(struct actord *ad, void *arg)
{
	struct state_arg *sa = arg;
	struct node *n = actord_find(ad, sa->path);

	return n != NULL && n->state == sa->state;
}

bool
ts_wait_state(struct actord *ad, const char *path, enum node_state st, int ms)
{
	struct state_arg sa = { path, st, 0 };

	return ts_run_until(ad, state_pred, &sa, ms);
}

static bool
newpid_pred(struct actord *ad, void *arg)
{
	struct state_arg *sa = arg;
	struct node *n = actord_find(ad, sa->path);

	return n != NULL && n->state == NS_RUNNING && n->pid > 0 &&
	    n->pid != sa->old;
}

bool
ts_wait_new_pid(struct actord *ad, const char *path, pid_t old, int ms)
{
	struct state_arg sa = { path, NS_RUNNING, old };

	return ts_run_until(ad, newpid_pred, &sa, ms);
}

static bool
done_pred(struct actord *ad, void *arg)
{
	(void)arg;
	return ad->done;
}

bool
ts_wait_done(struct actord *ad, int ms)
{
	return ts_run_until(ad, done_pred, NULL, ms);
}

pid_t
ts_pid(struct actord *ad, const char *path)
{
	struct node *n = actord_find(ad, path);

	return n != NULL ? n->pid : -1;
}

enum node_state
ts_state(struct actord *ad, const char *path)
{
	struct node *n = actord_find(ad, path);

	return n != NULL ? n->state : NS__COUNT;
}

const char *
ts_build(const char *name)
{
	static char buf[4][512];
	static int i;
	const char *b = getenv("ACTORD_BUILD");
	char *p = buf[i++ % 4];

	snprintf(p, 512, "%s/%s", b != NULL ? b : "build", name);
	if (p[0] != '/') {
		char cwd[256];

		if (getcwd(cwd, sizeof(cwd)) != NULL) {
			char tmp[512];

			snprintf(tmp, sizeof(tmp), "%s/%s", cwd, p);
			snprintf(p, 512, "%s", tmp);
		}
	}
	return p;
}

const char *
ts_progs(const char *name)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "tests/progs/%s", name);
	return ts_build(rel);
}

bool
ts_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	if (pid <= 0 || kill(pid, 0) == -1)
		return false;
	/* A zombie is not alive. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return true;
	return p[2] != 'Z';
}

/* --- the record file ---------------------------------------------------------- */

void
ts_record_open(void)
{
	snprintf(record_path, sizeof(record_path), "/tmp/ts-record-XXXXXX");
	record_fd = mkstemp(record_path);
	ck_assert_int_ne(record_fd, -1);
}

void
ts_record_close(void)
{
	if (record_fd != -1) {
		close(record_fd);
		unlink(record_path);
	}
	record_fd = -1;
}

/* One write(2) with O_APPEND semantics: safe in a signal handler. */
void
ts_record(const char *what)
{
	char line[256];
	const char *path = getenv("ACTORD_PATH");
	size_t n = 0, k;
	int fd;

	for (k = 0; what[k] != '\0' && n < 100; k++)
		line[n++] = what[k];
	line[n++] = ' ';
	for (k = 0; path != NULL && path[k] != '\0' && n < 250; k++)
		line[n++] = path[k];
	line[n++] = '\n';
	fd = open(record_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd != -1) {
		(void)!write(fd, line, n);
		close(fd);
	}
}

char *
ts_record_read(void)
{
	static char buf[16384];
	ssize_t r;
	int fd;

	buf[0] = '\0';
	if ((fd = open(record_path, O_RDONLY | O_CLOEXEC)) == -1)
		return buf;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	return buf;
}

int
ts_record_count(const char *line)
{
	char *p = ts_record_read(), *q;
	size_t len = strlen(line);
	int n = 0;

	while ((q = strstr(p, line)) != NULL) {
		if ((q == p || q[-1] == '\n') && (q[len] == '\n' ||
		    q[len] == '\0'))
			n++;
		p = q + len;
	}
	return n;
}

/* --- function children ------------------------------------------------------- */

/*
 * Tell actord we are ready, as it asked: READY=1 on the socket
 * ACTORD_NOTIFY_SOCKET names (ready = "actor"), else a newline on
 * ACTORD_NOTIFY_FD (ready = "fd").
 */
void
ts_ready(void)
{
	const char *s = getenv("ACTORD_NOTIFY_SOCKET");

	if (s != NULL)
		ts_sd_send(s, "READY=1");
	else if ((s = getenv("ACTORD_NOTIFY_FD")) != NULL)
		(void)!write(atoi(s), "\n", 1);
}

/* One datagram msg to the socket name ("@..." abstract), from a new one. */
int
ts_sd_send(const char *name, const char *msg)
{
	struct sockaddr_un sun;
	size_t len = strlen(name);
	ssize_t n;
	int fd;

	if (len == 0 || len >= sizeof(sun.sun_path))
		return -1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, name, len);
	if (name[0] == '@')
		sun.sun_path[0] = '\0';
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	n = sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&sun,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	close(fd);
	return n == (ssize_t)strlen(msg) ? 0 : -1;
}

static void
on_term(int sig)
{
	(void)sig;
	ts_record("stop");
	_exit(0);
}

static void
on_term_slow(int sig)
{
	struct timespec ts = { 0, 100 * 1000000 };

	(void)sig;
	nanosleep(&ts, NULL);
	ts_record("stop");
	_exit(0);
}

/* Like ts_fn_run, but takes 100 ms to stop: a sibling stopped in parallel
 * would record its stop first. */
int
ts_fn_slowstop(void *arg)
{
	(void)arg;
	signal(SIGTERM, on_term_slow);
	ts_record("start");
	ts_ready();
	for (;;)
		pause();
}

int
ts_fn_run(void *arg)
{
	(void)arg;
	signal(SIGTERM, on_term);
	ts_record("start");
	ts_ready();
	for (;;)
		pause();
}

int
ts_fn_exit(void *arg)
{
	ts_record("start");
	ts_ready();
	return (int)(intptr_t)arg;
}

int
ts_fn_ignterm(void *arg)
{
	(void)arg;
	signal(SIGTERM, SIG_IGN);
	ts_record("start");
	ts_ready();
	for (;;)
		pause();
}

int
ts_fn_grandchild(void *arg)
{
	char what[64];
	pid_t pid;

	(void)arg;
	if ((pid = fork()) == 0) {
		signal(SIGTERM, SIG_IGN);	/* it must die by the group kill */
		for (;;)
			pause();
	}
	snprintf(what, sizeof(what), "gc %d", (int)pid);
	ts_record(what);
	ts_ready();
	for (;;)
		pause();
}

int
ts_fn_fdready(void *arg)
{
	struct timespec ts = { 0, 20 * 1000000 };

	(void)arg;
	ts_record("start");
	nanosleep(&ts, NULL);
	ts_ready();
	for (;;)
		pause();
}

int
ts_fn_crash_later(void *arg)
{
	long ms = (long)(intptr_t)arg;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	ts_record("start");
	ts_ready();
	nanosleep(&ts, NULL);
	return 1;
}

int
ts_fn_mute(void *arg)
{
	(void)arg;
	ts_record("start");
	for (;;)
		pause();
}

/* --- the real actord --------------------------------------------------------- */

void
ts_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1)
		;
}

const char *
ts_daemon_prog_public(struct ts_daemon *d, const char *name)
{
	static char dst[128];

	return tcheck_copy_public(ts_progs(name), d->dir, dst, sizeof(dst));
}

void
ts_daemon_init(struct ts_daemon *d)
{
	struct sockaddr_un sun;
	size_t len;

	memset(d, 0, sizeof(*d));
	d->pid = -1;
	snprintf(d->dir, sizeof(d->dir), "/tmp/ts-actord-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(d->dir));
	snprintf(d->conf, sizeof(d->conf), "%s/actord.conf", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/actord.log", d->dir);
	d->notify = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	ck_assert_int_ne(d->notify, -1);
	snprintf(d->notify_name, sizeof(d->notify_name), "@%s/notify", d->dir);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	len = strlen(d->notify_name);
	memcpy(sun.sun_path, d->notify_name, len);
	sun.sun_path[0] = '\0';
	ck_assert_int_eq(bind(d->notify, (struct sockaddr *)&sun,
	    offsetof(struct sockaddr_un, sun_path) + len), 0);
}

void
ts_daemon_conf(struct ts_daemon *d, const char *fmt, ...)
{
	va_list ap;
	FILE *f;

	f = fopen(d->conf, "w");
	ck_assert_ptr_nonnull(f);
	/* A private runtime_dir (control socket), unless the test sets one. */
	if (strstr(fmt, "runtime_dir") == NULL)
		fprintf(f, "runtime_dir = \"%s/run\";\n", d->dir);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* Fork and exec $ACTORD_BUILD/actord OPTS -c conf, stderr to the log. */
void
ts_daemon_start(struct ts_daemon *d, const char *opts)
{
	const char *bin = ts_build("actord");
	char *argv[8];
	int fd, i = 0;

	argv[i++] = (char *)(uintptr_t)bin;
	if (opts != NULL && opts[0] != '\0')
		argv[i++] = (char *)(uintptr_t)opts;
	argv[i++] = (char *)(uintptr_t)"-c";
	argv[i++] = d->conf;
	argv[i] = NULL;
	d->pid = fork();
	ck_assert_int_ne(d->pid, -1);
	if (d->pid == 0) {
		fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		setenv("NOTIFY_SOCKET", d->notify_name, 1);
		execv(bin, argv);
		_exit(127);
	}
}

bool
ts_daemon_ready(struct ts_daemon *d, int ms)
{
	char buf[512];
	ssize_t r;
	int waited = 0, st;

	for (;;) {
		r = recv(d->notify, buf, sizeof(buf) - 1, 0);
		if (r > 0) {
			buf[r] = '\0';
			if (strstr(buf, "READY=1") != NULL)
				return true;
			continue;
		}
		if (waited >= ms)
			return false;
		/* Gone before it was ready: no point waiting out the bound. */
		if (d->pid > 0 && waitpid(d->pid, &st, WNOHANG) == d->pid) {
			d->pid = -1;
			return false;
		}
		ts_sleep_ms(5);
		waited += 5;
	}
}

void
ts_daemon_up(struct ts_daemon *d, int ms, char *sock, size_t socklen)
{
	ts_daemon_start(d, NULL);
	ck_assert_msg(ts_daemon_ready(d, ms), "actord not ready: %s",
	    ts_daemon_log(d));
	snprintf(sock, socklen, "%s/run/control.sock", d->dir);
}

/* The exit status, or -1 if it did not exit within ms (then it is killed). */
int
ts_daemon_wait(struct ts_daemon *d, int ms)
{
	int st, waited = 0;
	pid_t r;

	if (d->pid <= 0)
		return -1;
	for (;;) {
		r = waitpid(d->pid, &st, WNOHANG);
		if (r == d->pid) {
			d->pid = -1;
			return WIFEXITED(st) ? WEXITSTATUS(st) :
			    128 + WTERMSIG(st);
		}
		if (waited >= ms) {
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &st, 0);
			d->pid = -1;
			return -1;
		}
		ts_sleep_ms(5);
		waited += 5;
	}
}

/* The pid a tworker named `name` wrote, waiting up to ms for the file. */
pid_t
ts_daemon_child(struct ts_daemon *d, const char *name, int ms)
{
	char path[256];
	int waited = 0, pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.pid", d->dir, name);
	for (;;) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fscanf(f, "%d", &pid) != 1)
				pid = 0;
			fclose(f);
			if (pid > 0)
				return pid;
		}
		if (waited >= ms)
			return -1;
		ts_sleep_ms(5);
		waited += 5;
	}
}

char *
ts_daemon_log(struct ts_daemon *d)
{
	static char buf[65536];
	ssize_t r;
	int fd;

	buf[0] = '\0';
	if ((fd = open(d->log, O_RDONLY | O_CLOEXEC)) == -1)
		return buf;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	return buf;
}

/*
 * Fail the test unless actord makes no context switch at all for ms: an
 * idle actord sleeps in one system call, woken by nothing.
 */
void
ts_daemon_idle(struct ts_daemon *d, int ms)
{
	long before, after;

	before = tcheck_ctxt_switches(d->pid);
	ts_sleep_ms(ms);
	after = tcheck_ctxt_switches(d->pid);
	ck_assert_int_ge(before, 0);
	ck_assert_int_eq(after, before);
}

bool
ts_daemon_log_has(struct ts_daemon *d, const char *what, int ms)
{
	int waited = 0;

	while (strstr(ts_daemon_log(d), what) == NULL) {
		if (waited >= ms)
			return false;
		ts_sleep_ms(5);
		waited += 5;
	}
	return true;
}

void
ts_daemon_cleanup(struct ts_daemon *d)
{
	char cmd[128];

	if (d->pid > 0) {
		kill(d->pid, SIGKILL);	/* its workers die with it */
		waitpid(d->pid, NULL, 0);
		d->pid = -1;
	}
	if (d->notify != -1)
		close(d->notify);
	d->notify = -1;
	if (getenv("TS_KEEP") == NULL && strncmp(d->dir, "/tmp/ts-", 8) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
		(void)!system(cmd);
	}
}
