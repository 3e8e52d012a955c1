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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/log.h"
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

/* Tell actord we are ready, when it gave us a notification fd. */
void
ts_ready(void)
{
	const char *s = getenv("ACTORD_NOTIFY_FD");

	if (s != NULL)
		(void)!write(atoi(s), "\n", 1);
}

static void
on_term(int sig)
{
	(void)sig;
	ts_record("stop");
	_exit(0);
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
	const char *s = getenv("ACTORD_NOTIFY_FD");
	struct timespec ts = { 0, 20 * 1000000 };

	(void)arg;
	ts_record("start");
	nanosleep(&ts, NULL);
	if (s != NULL)
		(void)!write(atoi(s), "\n", 1);
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
