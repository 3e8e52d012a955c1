/*
 * check_e2e.c: actorctl ($ACTORD_BUILD/actorctl) against the real actord
 * ($ACTORD_BUILD/actord), end to end: every command with the OTP results
 * of issue 5, --json parsed with tools/json.c and checked field by field,
 * exit statuses, -f follows, a client as uid nobody refused, a table of
 * malformed requests that leaves actord answering, the metrics listener,
 * and `top` under a pseudo-terminal.
 *
 * Each test runs its own actord (tests/lib/tsup.c) in a private
 * mkdtemp'd runtime_dir, and kills what it started by pid.
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>
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
#include <termios.h>
#include <unistd.h>

#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
#include "tools/actorctl.h"
#include "tools/json.h"

#define WAIT		10000	/* ms for anything to happen */
#define NOBODY		CTLTEST_NOBODY
#define RUN(o, ...)	ctltest_actorctl(&srv, NULL, o, __VA_ARGS__, (char *)NULL)

/* One actord per test, built in the fixture (each test is forked). */
static struct ts_daemon	 d;
static struct ctltest_server srv;	/* only .sock is used */
static int		 metrics_port;
static const char	*run_dir = "run";	/* runtime_dir, in d.dir */

static void	 write_conf(const char *extra_child, const char *top);
static void	 start_daemon(const char *extra_child, const char *top);
static const struct json *node(const struct json *, const char *);
static const char *nstr(const struct json *, const char *, const char *);
static double	 nnum(const struct json *, const char *, const char *);
static bool	 nnull(const struct json *, const char *, const char *);
static bool	 wait_state(const char *, const char *);
static pid_t	 follow(const char *const *, int *);
static bool	 read_until(int, const char *, char *, size_t);
static bool	 read_until_n(int, const char *, int, char *, size_t);
static void	 stop_follower(pid_t, int);
static void	 stays_stopped(const char *, double);
static bool	 metrics_get(int, char *, size_t);
static int	 test_port(int);

static void
write_conf(const char *extra_child, const char *top)
{
	char ok[128];
	int fd;

	snprintf(ok, sizeof(ok), "%s/ok", d.dir);
	if ((fd = open(ok, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) != -1)
		close(fd);
	ts_daemon_conf(&d,
	    "runtime_dir = \"%s/%s\";\n"
	    "shutdown_timeout = 3000;\n"
	    "%s\n"
	    "supervisor = {\n"
	    "  intensity = 50; period = 10; backoff_min = 20; backoff_max = 40;\n"
	    "  children = (\n"
	    "    { name = \"a\"; exec = [\"%s\", \"run\"];\n"
	    "      mailbox = { capacity = 4; overflow = \"reject\"; }; },\n"
	    "    { name = \"api\"; instances = 2; exec = [\"%s\", \"run\"];\n"
	    "      mailbox = { capacity = 8; }; },\n"
	    "    { name = \"loop\"; supervisor = {\n"
	    "        intensity = 100; period = 10;\n"
	    "        backoff_min = 1500; backoff_max = 3000;\n"
	    "        children = ( { name = \"flaky\";\n"
	    "          exec = [\"/bin/sh\", \"-c\", \"exit 1\"]; } ); }; },\n"
	    "    { name = \"tmp\"; restart = \"temporary\";\n"
	    "      exec = [\"/bin/sh\", \"-c\", \"sleep 0.2\"]; },\n"
	    "    { name = \"gated\"; ready = \"fd\"; exec = [\"/bin/sh\", \"-c\",\n"
	    "      \"test -f %s || { echo gated: no ok file >&2; exit 4; }; "
	    "echo >&$ACTORD_NOTIFY_FD; exec sleep 3600\"]; }%s\n"
	    "  );\n"
	    "};\n",
	    d.dir, run_dir, top != NULL ? top : "", ts_progs("tworker"),
	    ts_progs("tworker"), ok, extra_child != NULL ? extra_child : "");
}

static void
start_daemon(const char *extra_child, const char *top)
{
	write_conf(extra_child, top);
	ts_daemon_up(&d, WAIT, srv.sock, sizeof(srv.sock));
}

static void
setup(void)
{
	ts_daemon_init(&d);
	memset(&srv, 0, sizeof(srv));
	metrics_port = 0;
	run_dir = "run";
}

static void
teardown(void)
{
	ts_daemon_cleanup(&d);
}

static const struct json *
node(const struct json *doc, const char *path)
{
	const struct json *nodes = json_get(doc, "nodes"), *n, *p;
	size_t i;

	ck_assert_ptr_nonnull(nodes);
	for (i = 0; (n = json_at(nodes, i)) != NULL; i++)
		if ((p = json_get(n, "path")) != NULL &&
		    p->type == JSON_STRING && strcmp(p->str, path) == 0)
			return n;
	return NULL;
}

/* A string field of node path; fails the test if absent. */
static const char *
nstr(const struct json *doc, const char *path, const char *key)
{
	const struct json *n = node(doc, path), *v;

	ck_assert_msg(n != NULL, "no node %s", path);
	v = json_get(n, key);
	ck_assert_msg(v != NULL && v->type == JSON_STRING, "%s: %s not a "
	    "string", path, key);
	return v->str;
}

static double
nnum(const struct json *doc, const char *path, const char *key)
{
	const struct json *n = node(doc, path), *v;

	ck_assert_msg(n != NULL, "no node %s", path);
	v = json_get(n, key);
	ck_assert_msg(v != NULL && v->type == JSON_NUMBER, "%s: %s not a "
	    "number", path, key);
	return v->num;
}

static bool
nnull(const struct json *doc, const char *path, const char *key)
{
	const struct json *n = node(doc, path), *v;

	ck_assert_msg(n != NULL, "no node %s", path);
	v = json_get(n, key);
	ck_assert_msg(v != NULL, "%s: no %s", path, key);
	return v->type == JSON_NULL;
}

/* Poll status until path is in state (NULL: gone). */
static bool
wait_state(const char *path, const char *state)
{
	struct json *doc;
	const struct json *n;
	bool ok;
	int waited;

	for (waited = 0; waited < WAIT; waited += 20) {
		doc = ctltest_status(&srv);
		n = node(doc, path);
		if (state == NULL)
			ok = n == NULL;
		else
			ok = n != NULL && strcmp(nstr(doc, path, "state"),
			    state) == 0;
		json_free(doc);
		if (ok)
			return true;
		ts_sleep_ms(20);
	}
	return false;
}

/*
 * After a manual start failed: path is stopped, and stays so with no
 * retry (same incarnation, same restarts) past several root backoffs.
 */
static void
stays_stopped(const char *path, double restarts)
{
	struct json *doc;
	double inc;

	doc = ctltest_status(&srv);
	ck_assert_str_eq(nstr(doc, path, "state"), "stopped");
	inc = nnum(doc, path, "incarnation");
	json_free(doc);
	ts_sleep_ms(300);	/* root's backoff is 20-40 ms: time to retry */
	doc = ctltest_status(&srv);
	ck_assert_str_eq(nstr(doc, path, "state"), "stopped");
	ck_assert(nnum(doc, path, "incarnation") == inc);
	ck_assert(nnum(doc, path, "restarts") == restarts);
	json_free(doc);
}

/* actorctl -S sock ARGS... in the background; its stdout in *fd. */
static pid_t
follow(const char *const *args, int *fd)
{
	char prog[512];
	const char *argv[16];
	int p[2], n = 0;
	pid_t pid;

	snprintf(prog, sizeof(prog), "%s/actorctl", ctltest_build());
	argv[n++] = prog;
	argv[n++] = "-S";
	argv[n++] = srv.sock;
	while (*args != NULL && n < 15)
		argv[n++] = *args++;
	argv[n] = NULL;
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], 1);
		execv(prog, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

/* Read fd into buf until it holds what; false on EOF or timeout. */
static bool
read_until(int fd, const char *what, char *buf, size_t len)
{
	struct pollfd pfd;
	size_t got = strlen(buf);
	ssize_t r;

	while (strstr(buf, what) == NULL) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, WAIT) != 1 || got + 1 >= len)
			return false;
		if ((r = read(fd, buf + got, len - 1 - got)) <= 0)
			return false;
		got += (size_t)r;
		buf[got] = '\0';
	}
	return true;
}

/* Until buf holds what n times. */
static bool
read_until_n(int fd, const char *what, int n, char *buf, size_t len)
{
	const char *p;
	int k;

	for (;;) {
		for (k = 0, p = buf; (p = strstr(p, what)) != NULL; k++)
			p += strlen(what);
		if (k >= n)
			return true;
		/* Wait for one more byte of anything, then count again. */
		{
			struct pollfd pfd = { fd, POLLIN, 0 };
			size_t got = strlen(buf);
			ssize_t r;

			if (poll(&pfd, 1, WAIT) != 1 || got + 1 >= len)
				return false;
			if ((r = read(fd, buf + got, len - 1 - got)) <= 0)
				return false;
			buf[got + (size_t)r] = '\0';
		}
	}
}

static void
stop_follower(pid_t pid, int fd)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
}

/* --- status ------------------------------------------------------------------ */

START_TEST(status_in_start_order)
{
	static const char *const order[] = { "/", "/a", "/api", "/api/0",
	    "/api/1", "/loop", "/loop/flaky", "/gated" };
	struct ctltest_out o;
	struct json *doc;
	const struct json *nodes, *n, *c;
	size_t i, k = 0;
	pid_t pid;

	start_daemon(NULL, NULL);
	ck_assert(wait_state("/tmp", NULL));	/* temporary, exited, gone */
	ck_assert(wait_state("/loop/flaky", "restarting"));
	doc = ctltest_status(&srv);
	nodes = json_get(doc, "nodes");
	/* Start order: the configured order, depth first. */
	for (i = 0; (n = json_at(nodes, i)) != NULL; i++)
		if (k < 8 && strcmp(json_get(n, "path")->str, order[k]) == 0)
			k++;
	ck_assert_uint_eq(k, 8);
	ck_assert_uint_eq(json_count(nodes), 8);
	ck_assert_str_eq(nstr(doc, "/", "kind"), "supervisor");
	ck_assert_str_eq(nstr(doc, "/", "strategy"), "one_for_one");
	ck_assert(nnum(doc, "/", "intensity") == 50);
	ck_assert(nnum(doc, "/", "period") == 10);
	ck_assert(nnull(doc, "/", "pid"));
	ck_assert_str_eq(nstr(doc, "/api", "kind"), "group");
	ck_assert_str_eq(nstr(doc, "/a", "kind"), "worker");
	ck_assert_str_eq(nstr(doc, "/a", "state"), "running");
	pid = (pid_t)nnum(doc, "/a", "pid");
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(kill(pid, 0), 0);
	ck_assert(nnum(doc, "/a", "restarts") == 0);
	ck_assert(nnum(doc, "/a", "incarnation") >= 1);
	ck_assert(nnull(doc, "/a", "last_exit"));
	ck_assert(nnum(doc, "/a", "mailbox_depth") == 0);
	ck_assert(nnull(doc, "/gated", "mailbox_depth"));
	/*
	 * The restart loop shows as restarting, with its cause; RESTARTS
	 * counts the restarts made (none yet during the first backoff), the
	 * supervisor's count the decisions.
	 */
	ck_assert_str_eq(nstr(doc, "/loop/flaky", "state"), "restarting");
	ck_assert(nnull(doc, "/loop/flaky", "pid"));
	ck_assert(nnum(doc, "/loop/flaky", "restarts") <=
	    nnum(doc, "/loop", "restarts_in_period"));
	ck_assert_str_eq(nstr(doc, "/loop/flaky", "last_exit"), "exited 1");
	ck_assert(nnum(doc, "/loop", "restarts_in_period") >= 1);
	c = json_get(doc, "counts");
	ck_assert_ptr_nonnull(c);
	ck_assert(json_get(c, "specs")->num == 8);
	ck_assert(json_get(c, "running")->num == 7);
	ck_assert(json_get(c, "restarting")->num == 1);
	ck_assert(json_get(c, "supervisors")->num == 3);
	ck_assert(json_get(c, "workers")->num == 5);
	json_free(doc);
	/* Human form: a count line; a subtree; an unknown path. */
	RUN(&o, "status");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "8 specs: 7 running, 1 restarting, "
	    "3 supervisors, 5 workers") != NULL, "%s", o.out);
	ctltest_out_free(&o);
	RUN(&o, "status", "--json", "/api");
	ctltest_expect(&o, 0, NULL);
	doc = ctltest_json(&o);
	ck_assert_uint_eq(json_count(json_get(doc, "nodes")), 3);
	json_free(doc);
	ctltest_out_free(&o);
	RUN(&o, "status", "/nope");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, "no such path");
	ctltest_out_free(&o);
}
END_TEST

/* --- start, stop, remove, add: OTP's results ------------------------------- */

START_TEST(start_stop_remove_add)
{
	struct ctltest_out o;
	struct json *doc;
	double inc, restarts;

	start_daemon(NULL, NULL);
	RUN(&o, "start", "/a");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "start /a: running");
	ctltest_out_free(&o);
	ck_assert(wait_state("/loop/flaky", "restarting"));
	RUN(&o, "start", "/loop/flaky");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED,
	    "start /loop/flaky: restarting");
	ctltest_out_free(&o);
	RUN(&o, "remove", "/loop/flaky");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED,
	    "remove /loop/flaky: restarting");
	ctltest_out_free(&o);
	RUN(&o, "remove", "/a");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "remove /a: running");
	ctltest_out_free(&o);

	/* stop ends the restart loop for good, and is idempotent. */
	RUN(&o, "stop", "/loop/flaky");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	doc = ctltest_status(&srv);
	ck_assert_str_eq(nstr(doc, "/loop/flaky", "state"), "stopped");
	inc = nnum(doc, "/loop/flaky", "incarnation");
	json_free(doc);
	ts_sleep_ms(3200);	/* past the longest backoff */
	doc = ctltest_status(&srv);
	ck_assert_str_eq(nstr(doc, "/loop/flaky", "state"), "stopped");
	ck_assert(nnum(doc, "/loop/flaky", "incarnation") == inc);
	json_free(doc);
	RUN(&o, "stop", "/loop/flaky");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);

	/* A manual start is not a restart. */
	RUN(&o, "stop", "/a");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	doc = ctltest_status(&srv);
	ck_assert_str_eq(nstr(doc, "/a", "state"), "stopped");
	ck_assert_str_eq(nstr(doc, "/a", "last_exit"),
	    "killed by signal 15 (Terminated)");
	inc = nnum(doc, "/a", "incarnation");
	json_free(doc);
	RUN(&o, "add", "/a");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "add /a: exists, not running");
	ctltest_out_free(&o);
	RUN(&o, "start", "/a");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	doc = ctltest_status(&srv);
	ck_assert_str_eq(nstr(doc, "/a", "state"), "running");
	ck_assert(nnum(doc, "/a", "restarts") == 0);
	ck_assert(nnum(doc, "/a", "incarnation") == inc + 1);
	json_free(doc);
	RUN(&o, "add", "/a");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "add /a: exists, running");
	ctltest_out_free(&o);

	/* A manual start that fails: the cause, stopped, no retry loop. */
	RUN(&o, "stop", "/gated");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	{
		char ok[128];

		snprintf(ok, sizeof(ok), "%s/ok", d.dir);
		ck_assert_int_eq(unlink(ok), 0);
	}
	doc = ctltest_status(&srv);
	restarts = nnum(doc, "/gated", "restarts");
	json_free(doc);
	RUN(&o, "start", "/gated");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED,
	    "start /gated: exited 4 before it "
	    "was ready");
	ctltest_out_free(&o);
	stays_stopped("/gated", restarts);
	ck_assert(ts_daemon_log_has(&d, "gated: no ok file", WAIT));

	/* remove: a stopped child goes; an exited temporary is gone. */
	RUN(&o, "remove", "/gated");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert(wait_state("/gated", NULL));
	ck_assert(wait_state("/tmp", NULL));
	RUN(&o, "remove", "/tmp");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, "remove /tmp: no such path");
	ctltest_out_free(&o);

	/* add: the next instance of a worker with instances. */
	RUN(&o, "add", "/api/2");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "added /api/2") != NULL, "%s", o.out);
	ctltest_out_free(&o);
	ck_assert(wait_state("/api/2", "running"));
	RUN(&o, "add", "/api/7");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "add /api/7");
	ctltest_out_free(&o);
	RUN(&o, "add", "/nope/1");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, "add /nope/1");
	ctltest_out_free(&o);
	RUN(&o, "start", "/nope");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, "start /nope: no such path");
	ctltest_out_free(&o);
}
END_TEST

/*
 * Issue 3: an instance added at run time survives a restart of its
 * supervisor (here a one_for_all set restarted by a sibling's death); a
 * manual start whose exec fails says the real exec error, and leaves the
 * child stopped with no retry loop.
 */
START_TEST(added_instance_survives_and_exec_error_on_start)
{
	struct ctltest_out o;
	struct json *doc;
	char extra[1024], bin[128];
	double inc, restarts;
	pid_t w, added;
	int waited;

	snprintf(bin, sizeof(bin), "%s/sleeper", d.dir);
	ck_assert_int_eq(symlink("/bin/sleep", bin), 0);
	snprintf(extra, sizeof(extra), ",\n"
	    "    { name = \"set\"; supervisor = { strategy = \"one_for_all\";\n"
	    "        intensity = 10; period = 10; backoff_min = 1; "
	    "backoff_max = 5;\n"
	    "        children = (\n"
	    "          { name = \"w\"; exec = [\"%s\", \"run\"]; },\n"
	    "          { name = \"g\"; instances = 1; "
	    "exec = [\"%s\", \"run\"]; } ); }; },\n"
	    "    { name = \"sl\"; exec = [\"%s\", \"3600\"]; }",
	    ts_progs("tworker"), ts_progs("tworker"), bin);
	start_daemon(extra, NULL);

	RUN(&o, "add", "/set/g");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "added /set/g/1") != NULL, "%s", o.out);
	ctltest_out_free(&o);
	ck_assert(wait_state("/set/g/1", "running"));
	doc = ctltest_status(&srv);
	w = (pid_t)nnum(doc, "/set/w", "pid");
	added = (pid_t)nnum(doc, "/set/g/1", "pid");
	inc = nnum(doc, "/set/g/1", "incarnation");
	json_free(doc);
	/* /set/w dies: one_for_all stops and starts the whole set again. */
	ck_assert_int_eq(kill(w, SIGKILL), 0);
	for (waited = 0; waited < WAIT; waited += 20) {
		doc = ctltest_status(&srv);
		if (node(doc, "/set/g/1") != NULL &&
		    nnum(doc, "/set/g/1", "incarnation") > inc &&
		    strcmp(nstr(doc, "/set", "state"), "running") == 0 &&
		    strcmp(nstr(doc, "/set/g/1", "state"), "running") == 0)
			break;
		json_free(doc);
		doc = NULL;
		ts_sleep_ms(20);
	}
	ck_assert_msg(doc != NULL, "/set/g/1 did not come back");
	ck_assert_int_ne((pid_t)nnum(doc, "/set/g/1", "pid"), added);
	ck_assert_int_ne((pid_t)nnum(doc, "/set/w", "pid"), w);
	ck_assert_str_eq(nstr(doc, "/set/g/0", "state"), "running");
	json_free(doc);
	ck_assert_int_eq(kill(added, 0), -1);

	/* The program is gone: a start by hand fails with the exec error. */
	RUN(&o, "stop", "/sl");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert_int_eq(unlink(bin), 0);
	doc = ctltest_status(&srv);
	restarts = nnum(doc, "/sl", "restarts");
	json_free(doc);
	RUN(&o, "start", "/sl");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, NULL);
	ck_assert_msg(strstr(o.err, "start /sl: exec ") != NULL &&
	    strstr(o.err, "sleeper: No such file or directory") != NULL,
	    "stderr: %s", o.err);
	ctltest_out_free(&o);
	stays_stopped("/sl", restarts);
}
END_TEST

/* actord(8), EXIT STATUS 1: the control socket is a live actord's. */
START_TEST(second_actord_on_same_socket_exits_1)
{
	struct ctltest_out o;
	struct ts_daemon d2;

	start_daemon(NULL, NULL);
	ts_daemon_init(&d2);
	snprintf(d2.conf, sizeof(d2.conf), "%s", d.conf);	/* same dir */
	ts_daemon_start(&d2, NULL);
	ck_assert_int_eq(ts_daemon_wait(&d2, WAIT), 1);
	ck_assert_msg(strstr(ts_daemon_log(&d2), "another actord is listening")
	    != NULL, "log:\n%s", ts_daemon_log(&d2));
	ts_daemon_cleanup(&d2);
	RUN(&o, "status", "/a");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
}
END_TEST

/* --- restart and kill ------------------------------------------------------- */

/*
 * actorctl restart /a, which was pid before: as soon as it returns, the
 * new incarnation runs, with another pid (returned); the old one is gone.
 */
static pid_t
restart_a(pid_t before)
{
	struct ctltest_out o;
	struct json *doc;
	pid_t pid;

	RUN(&o, "restart", "/a");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	doc = ctltest_status(&srv);
	ck_assert_str_eq(nstr(doc, "/a", "state"), "running");
	pid = (pid_t)nnum(doc, "/a", "pid");
	json_free(doc);
	ck_assert_int_ne(pid, before);
	ck_assert_int_eq(kill(pid, 0), 0);
	ck_assert_int_eq(kill(before, 0), -1);
	return pid;
}

/* The pid of /a now. */
static pid_t
pid_of_a(void)
{
	struct json *doc = ctltest_status(&srv);
	pid_t pid = (pid_t)nnum(doc, "/a", "pid");

	json_free(doc);
	return pid;
}

START_TEST(restart_and_kill)
{
	struct ctltest_out o;
	struct json *doc;
	const char *le;
	double inc;
	pid_t pid2, pid3;
	int waited;

	start_daemon(NULL, NULL);
	doc = ctltest_status(&srv);
	inc = nnum(doc, "/a", "incarnation");
	json_free(doc);
	pid2 = restart_a(pid_of_a());
	doc = ctltest_status(&srv);
	ck_assert(nnum(doc, "/a", "incarnation") == inc + 1);
	ck_assert(nnum(doc, "/a", "restarts") == 0);
	json_free(doc);

	/* kill: a signal to its process group; the supervisor restarts it. */
	RUN(&o, "kill", "-s", "KILL", "/a");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	for (waited = 0; waited < WAIT; waited += 20) {
		doc = ctltest_status(&srv);
		pid3 = nnull(doc, "/a", "pid") ? 0 :
		    (pid_t)nnum(doc, "/a", "pid");
		if (pid3 != 0 && pid3 != pid2 &&
		    strcmp(nstr(doc, "/a", "state"), "running") == 0)
			break;
		json_free(doc);
		doc = NULL;
		ts_sleep_ms(20);
	}
	ck_assert_ptr_nonnull(doc);
	ck_assert(nnum(doc, "/a", "restarts") == 1);
	le = nstr(doc, "/a", "last_exit");
	ck_assert_msg(strstr(le, "signal 9") != NULL, "%s", le);
	json_free(doc);
	RUN(&o, "kill", "/nope");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, "kill /nope");
	ctltest_out_free(&o);
	/*
	 * A supervisor's path reaches every worker under it ("/" all of
	 * them): refused unless --tree says so; the answer says how many.
	 * (SIGCONT: harmless to every worker.)
	 */
	RUN(&o, "kill", "-s", "CONT", "/");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "kill /: / is a supervisor: "
	    "give --tree");
	ctltest_out_free(&o);
	RUN(&o, "kill", "--tree", "-s", "CONT", "/");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "signal 18 (CONT) sent to ") != NULL &&
	    strstr(o.out, " workers under /\n") != NULL, "%s", o.out);
	ctltest_out_free(&o);
	RUN(&o, "kill", "-s", "CONT", "/a");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strncmp(o.out, "signal 18 (CONT) sent to /a (pid ", 33)
	    == 0, "%s", o.out);
	ctltest_out_free(&o);
	RUN(&o, "restart", "/nope");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, "restart /nope");
	ctltest_out_free(&o);
	RUN(&o, "kill", "-s", "NOTASIGNAL", "/a");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, NULL);
	ctltest_out_free(&o);
}
END_TEST

/* --- log ------------------------------------------------------------------------ */

START_TEST(log_and_follow)
{
	static const char *const args[] = { "log", "/a", "-f", NULL };
	struct ctltest_out o;
	char buf[16384];
	pid_t f;
	int fd;

	start_daemon(NULL, NULL);
	ck_assert(ts_daemon_log_has(&d, "tworker run up", WAIT));
	RUN(&o, "log", "/a");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "tworker run up") != NULL, "%s", o.out);
	ctltest_out_free(&o);
	f = follow(args, &fd);
	buf[0] = '\0';
	ck_assert(read_until(fd, "tworker run up\n", buf, sizeof(buf)));
	/* The next incarnation prints again: the follower sees it. */
	RUN(&o, "restart", "/a");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert_msg(read_until_n(fd, "tworker run up\n", 2, buf,
	    sizeof(buf)), "follower saw: %s", buf);
	stop_follower(f, fd);
	RUN(&o, "log", "/");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, NULL);
	ctltest_out_free(&o);
	RUN(&o, "log", "/nope");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, NULL);
	ctltest_out_free(&o);
}
END_TEST

/* --- a stalled stderr ------------------------------------------------------------ */

/* Until the pipe behind rfd holds at least n bytes: true, or false in ms. */
static bool
pipe_holds(int rfd, int n, int ms)
{
	int waited, queued;

	for (waited = 0; waited < ms; waited += 10) {
		if (ioctl(rfd, FIONREAD, &queued) == 0 && queued >= n)
			return true;
		ts_sleep_ms(10);
	}
	return false;
}

/* Read rfd until what came holds needle: true, or false in ms. */
static bool
pipe_says(int rfd, const char *needle, int ms)
{
	static char buf[1 << 20];
	struct pollfd pfd = { rfd, POLLIN, 0 };
	size_t len = 0;
	ssize_t r;
	int waited;

	for (waited = 0; waited < ms; waited += 10) {
		while (len < sizeof(buf) - 1 &&
		    (r = read(rfd, buf + len, sizeof(buf) - 1 - len)) > 0)
			len += (size_t)r;
		buf[len] = '\0';
		if (strstr(buf, needle) != NULL)
			return true;
		if (len == sizeof(buf) - 1) {
			len = 0;	/* only the newest matters */
			continue;
		}
		(void)poll(&pfd, 1, 10);
	}
	return false;
}

/*
 * actord's stderr is a pipe whose reader stopped reading (a log collector
 * that hangs): actord goes on supervising and answering instead of
 * blocking in write(2), drops the lines that do not fit, and says how many
 * once the pipe drains.
 */
START_TEST(stalled_stderr_blocks_nothing)
{
	char chatty[512];
	int rfd, i;

	ck_assert_int_eq(unlink(d.log) == 0 || errno == ENOENT, 1);
	ck_assert_int_eq(mkfifo(d.log, 0600), 0);
	rfd = open(d.log, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(rfd, 0);
	(void)fcntl(rfd, F_SETPIPE_SZ, 4096);
	/* 5000 lines of 80 bytes: far more than the pipe and the queue. */
	snprintf(chatty, sizeof(chatty), ",\n    { name = \"chatty\"; "
	    "exec = [\"%s\", \"spam\", \"5000\"]; }", ts_progs("tworker"));
	start_daemon(chatty, NULL);
	ck_assert_msg(pipe_holds(rfd, 4000, WAIT), "stderr never filled");
	for (i = 0; i < 3; i++)
		(void)restart_a(pid_of_a());
	/* The collector reads again: the count of what was dropped comes. */
	ck_assert(pipe_says(rfd, "lines dropped: the output took no more",
	    WAIT));
	close(rfd);
}
END_TEST

/* --- reload moves the listeners ------------------------------------------------ */

/* Until path is a socket (true), or ms passed. */
static bool
socket_appears(const char *path, int ms)
{
	struct stat st;
	int waited;

	for (waited = 0; waited < ms; waited += 10) {
		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			return true;
		ts_sleep_ms(10);
	}
	return false;
}

/*
 * A reload moves the control socket (runtime_dir), changes who may use it
 * (control_group) and moves the metrics listener, with no restart: the
 * reload's own answer comes back on the connection to the old socket.
 * One that cannot open its new listener is refused whole: the tree and
 * the listeners stay as they were.  SIGHUP does the same.
 */
START_TEST(reload_moves_listeners)
{
	struct ctltest_out o;
	struct group *gr = getgrnam("nogroup");
	struct sockaddr_in sin;
	struct stat st;
	char top[128], buf[65536], old[sizeof(srv.sock)];
	int busy, one = 1, p1 = test_port(0), p2 = test_port(1);

	ck_assert_ptr_nonnull(gr);
	snprintf(top, sizeof(top), "metrics_listen = \"127.0.0.1:%d\";", p1);
	start_daemon(NULL, top);
	ck_assert(metrics_get(p1, buf, sizeof(buf)));
	memcpy(old, srv.sock, sizeof(old));

	run_dir = "run2";
	snprintf(top, sizeof(top), "metrics_listen = \"127.0.0.1:%d\";\n"
	    "control_group = \"nogroup\";", p2);
	write_conf(NULL, top);
	RUN(&o, "reload");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "reloaded") != NULL, "%s", o.out);
	ctltest_out_free(&o);
	ck_assert_int_eq(lstat(old, &st), -1);
	snprintf(srv.sock, sizeof(srv.sock), "%s/run2/control.sock", d.dir);
	ck_assert_int_eq(stat(srv.sock, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0660);
	ck_assert_uint_eq(st.st_gid, gr->gr_gid);
	ck_assert(wait_state("/a", "running"));
	ck_assert(!metrics_get(p1, buf, sizeof(buf)));
	ck_assert(metrics_get(p2, buf, sizeof(buf)));
	ck_assert(strstr(buf, " 200 ") != NULL);

	/* The new metrics address is taken: nothing changes. */
	busy = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(setsockopt(busy, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)), 0);	/* p1's connections wait in TIME_WAIT */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)p1);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(busy, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(busy, 1), 0);
	run_dir = "run3";
	snprintf(top, sizeof(top), "metrics_listen = \"127.0.0.1:%d\";", p1);
	write_conf(",\n    { name = \"b\"; exec = [\"/bin/sh\", \"-c\", "
	    "\"exec sleep 3600\"]; }", top);
	RUN(&o, "reload");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "127.0.0.1");
	ctltest_out_free(&o);
	close(busy);
	snprintf(buf, sizeof(buf), "%s/run3/control.sock", d.dir);
	ck_assert_int_eq(lstat(buf, &st), -1);
	ck_assert_int_eq(stat(srv.sock, &st), 0);
	RUN(&o, "status", "/b");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, NULL);
	ctltest_out_free(&o);
	ck_assert(metrics_get(p2, buf, sizeof(buf)));

	/* SIGHUP: back to run, no group, no metrics. */
	run_dir = "run";
	write_conf(NULL, NULL);
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	ck_assert(socket_appears(old, WAIT));
	memcpy(srv.sock, old, sizeof(old));
	ck_assert_int_eq(stat(srv.sock, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert(wait_state("/a", "running"));
	snprintf(buf, sizeof(buf), "%s/run2/control.sock", d.dir);
	ck_assert_int_eq(lstat(buf, &st), -1);
	ck_assert(!metrics_get(p2, buf, sizeof(buf)));
}
END_TEST

/* --- send, dead letters, stats --------------------------------------------------- */

static const struct json *
find_by(const struct json *arr, const char *key, const char *val)
{
	const struct json *e, *v;
	size_t i;

	for (i = 0; (e = json_at(arr, i)) != NULL; i++)
		if ((v = json_get(e, key)) != NULL &&
		    v->type == JSON_STRING && strcmp(v->str, val) == 0)
			return e;
	return NULL;
}

START_TEST(send_deadletters_stats)
{
	static const char *const args[] = { "deadletters", "-f", "--json",
	    NULL };
	struct ctltest_out o;
	struct json *doc;
	const struct json *a, *dl, *g, *v;
	char buf[16384];
	pid_t f;
	int i, fd;

	start_daemon(NULL, NULL);
	/* None yet: the table's header, and a count that says so. */
	RUN(&o, "deadletters");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strncmp(o.out, "TIME ", 5) == 0 &&
	    strstr(o.out, "RECIPIENT") != NULL &&
	    strstr(o.out, "\n0 dead letters\n") != NULL, "%s", o.out);
	ctltest_out_free(&o);
	/* /a's mailbox holds 4 and rejects: the 5th is a dead letter. */
	for (i = 0; i < 4; i++) {
		RUN(&o, "send", "/a", "7", "hi");
		ctltest_expect(&o, 0, NULL);
		ctltest_out_free(&o);
	}
	RUN(&o, "send", "/a", "7", "hi");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "send /a: mailbox full");
	ctltest_out_free(&o);
	ctltest_actorctl(&srv, "from stdin", &o, "send", "/api/1", "3",
	    (char *)NULL);
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	RUN(&o, "send", "/gated", "1", "x");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "send /gated: has no mailbox");
	ctltest_out_free(&o);
	RUN(&o, "send", "/nope", "1", "x");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, NULL);
	ctltest_out_free(&o);

	RUN(&o, "deadletters", "--json");
	ctltest_expect(&o, 0, NULL);
	doc = ctltest_json(&o);
	dl = json_at(json_get(doc, "deadletters"), 0);
	ck_assert_ptr_nonnull(dl);
	ck_assert_msg(json_at(json_get(doc, "deadletters"), 1) == NULL,
	    "one dead letter expected: %s", o.out);
	ctltest_out_free(&o);
	ck_assert_str_eq(json_get(dl, "recipient")->str, "/a");
	ck_assert_str_eq(json_get(dl, "reason")->str, "mailbox full");
	ck_assert(json_get(dl, "tag")->num == 7);
	ck_assert(json_get(dl, "size")->num == 2);
	/* actorctl's messages come from actord's own mailbox. */
	ck_assert(json_get(dl, "sender")->type == JSON_STRING);
	ck_assert_str_eq(json_get(dl, "sender")->str, "/@actord");
	v = json_get(dl, "time_ms");
	ck_assert(v->num > 1.7e12);	/* wall clock, in ms */
	json_free(doc);

	/* -f: a new dead letter reaches the follower. */
	f = follow(args, &fd);
	buf[0] = '\0';
	ck_assert(read_until(fd, "\"tag\":7", buf, sizeof(buf)));
	RUN(&o, "send", "/a", "9", "again");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "mailbox full");
	ctltest_out_free(&o);
	ck_assert_msg(read_until(fd, "\"tag\":9", buf, sizeof(buf)),
	    "follower saw: %s", buf);
	stop_follower(f, fd);

	RUN(&o, "stats", "--json");
	ctltest_expect(&o, 0, NULL);
	doc = ctltest_json(&o);
	ctltest_out_free(&o);
	a = find_by(json_get(doc, "actors"), "path", "/a");
	ck_assert_ptr_nonnull(a);
	ck_assert(json_get(a, "mailbox_depth")->num == 4);
	ck_assert(json_get(a, "mailbox_capacity")->num == 4);
	ck_assert(json_get(a, "sent")->num == 4);
	ck_assert(json_get(a, "received")->num == 0);
	ck_assert(json_get(a, "deadlettered")->num == 2);
	ck_assert(json_get(a, "restarts")->num == 0);
	ck_assert(json_get(a, "handler_p50_us")->type == JSON_NULL);
	ck_assert(json_get(a, "wait_p99_us")->type == JSON_NUMBER);
	ck_assert_ptr_nonnull(find_by(json_get(doc, "actors"), "path",
	    "/api/0"));
	ck_assert_ptr_null(find_by(json_get(doc, "actors"), "path", "/gated"));
	g = json_at(json_get(doc, "shard_groups"), 0);
	ck_assert_ptr_nonnull(g);
	ck_assert_str_eq(json_get(g, "name")->str, "/api");
	ck_assert_uint_eq(json_count(json_get(g, "messages")), 2);
	ck_assert(json_at(json_get(g, "messages"), 0)->num == 0);
	ck_assert(json_at(json_get(g, "messages"), 1)->num == 1);
	ck_assert(json_get(g, "total")->num == 1);
	json_free(doc);
	RUN(&o, "stats", "--prometheus");
	ctltest_expect(&o, 0, NULL);
	ck_assert(strstr(o.out, "# TYPE actord_mailbox_wait_seconds "
	    "histogram") != NULL);
	ck_assert(strstr(o.out, "actord_mailbox_depth{path=\"/a\"} 4\n") !=
	    NULL);
	ck_assert(strstr(o.out, "actord_handler_duration") == NULL);
	ctltest_out_free(&o);
	RUN(&o, "stats", "/api");
	ctltest_expect(&o, 0, NULL);
	ck_assert(strstr(o.out, "/api/1") != NULL);
	ck_assert_msg(strstr(o.out, "\n/a ") == NULL, "%s", o.out);
	ctltest_out_free(&o);
}
END_TEST

/* --- reload and shutdown --------------------------------------------------------- */

START_TEST(reload_and_shutdown)
{
	struct ctltest_out o;
	struct stat st;
	FILE *fp;

	start_daemon(NULL, NULL);
	/* A refused configuration: the error reaches the caller. */
	ck_assert_ptr_nonnull(fp = fopen(d.conf, "a"));
	fputs("garbage {\n", fp);
	fclose(fp);
	RUN(&o, "reload");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "reload: ");
	ck_assert_msg(strstr(o.err, "actord.conf:") != NULL, "%s", o.err);
	ctltest_out_free(&o);
	ck_assert(wait_state("/a", "running"));
	/* An accepted one: the new child runs. */
	write_conf(",\n    { name = \"b\"; exec = [\"/bin/sh\", \"-c\", "
	    "\"exec sleep 3600\"]; }", NULL);
	RUN(&o, "reload");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "reloaded") != NULL, "%s", o.out);
	ctltest_out_free(&o);
	ck_assert(wait_state("/b", "running"));

	RUN(&o, "shutdown");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "shutting down") != NULL, "%s", o.out);
	ctltest_out_free(&o);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	ck_assert_int_eq(lstat(srv.sock, &st), -1);
	RUN(&o, "status");
	ctltest_expect(&o, ACTORCTL_EXIT_NOTRUNNING, "not running");
	ctltest_out_free(&o);
}
END_TEST

/* --- permissions ------------------------------------------------------------------- */

START_TEST(other_uid_refused)
{
	struct ctltest_out o;
	struct stat st;
	char dir[128], want[64];
	pid_t pid;

	ck_assert_msg(geteuid() == 0, "this test needs root to setuid");
	start_daemon(NULL, NULL);
	snprintf(dir, sizeof(dir), "%s/run", d.dir);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_int_eq(stat(srv.sock, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(ctltest_as_nobody(srv.sock, NOBODY, NULL, NULL), 2);
	/* Modes opened by hand: SO_PEERCRED still refuses, and logs it. */
	ck_assert_int_eq(chmod(d.dir, 0711), 0);
	ck_assert_int_eq(chmod(dir, 0711), 0);
	ck_assert_int_eq(chmod(srv.sock, 0666), 0);
	ck_assert_int_eq(ctltest_as_nobody(srv.sock, NOBODY, NULL, &pid), 0);
	snprintf(want, sizeof(want), "refused uid %d pid %d", NOBODY,
	    (int)pid);
	ck_assert_msg(ts_daemon_log_has(&d, want, WAIT), "%s",
	    ts_daemon_log(&d));
	RUN(&o, "status");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
}
END_TEST

START_TEST(control_group_allowed)
{
	struct group *gr = getgrnam("nogroup");
	struct stat st;
	char dir[128];

	ck_assert_msg(geteuid() == 0, "this test needs root to setuid");
	ck_assert_ptr_nonnull(gr);
	start_daemon(NULL, "control_group = \"nogroup\";");
	snprintf(dir, sizeof(dir), "%s/run", d.dir);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0710);
	ck_assert_uint_eq(st.st_gid, gr->gr_gid);
	ck_assert_int_eq(stat(srv.sock, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0660);
	ck_assert_uint_eq(st.st_gid, gr->gr_gid);
	/* /tmp/ts-actord-X is 0700: let nobody walk to the socket. */
	ck_assert_int_eq(chmod(d.dir, 0711), 0);
	ck_assert_int_eq(ctltest_as_nobody(srv.sock, gr->gr_gid, NULL, NULL),
	    1);
	/* Outside the group (gid 1), nobody cannot reach it. */
	ck_assert_int_eq(ctltest_as_nobody(srv.sock, 1, NULL, NULL), 2);
}
END_TEST

/* --- malformed requests ------------------------------------------------------------ */

static const struct badreq {
	const char	*what;
	const char	*bytes;
	size_t		 len;
	bool		 half_close;
	int		 expect;
} badreqs[] = {
	{ "wrong version", "\0\0\0\4\0\2\0\1", 8, false, CTL_E_VERSION },
	{ "unknown command", "\0\0\0\4\0\1\0\x99", 8, false, CTL_E_UNKNOWN },
	{ "oversized", "\0\x10\0\0\0\1\0\1", 8, false, CTL_E_TOOBIG },
	{ "length below header", "\0\0\0\2\0\1", 6, false, CTL_E_PROTO },
	{ "truncated header", "\0\0\0\4\0", 5, true, CTL_E_PROTO },
	{ "truncated body", "\0\0\0\x0c\0\1\0\1\0\1\0\0", 12, true,
	    CTL_E_PROTO },
	{ "field past the end", "\0\0\0\x0c\0\1\0\1\0\1\0\0\0\x09\0\0", 16,
	    false, CTL_E_PROTO },
	{ "missing path", "\0\0\0\4\0\1\0\2", 8, false, CTL_E_PROTO },
	{ "bad path", "\0\0\0\x0b\0\1\0\1\0\1\0\0\0\1x", 15, false,
	    CTL_E_PROTO },
	{ "unknown field", "\0\0\0\x0a\0\1\0\1\0\x63\0\0\0\0", 14, false,
	    CTL_E_PROTO },
	{ "text garbage", "GET / HTTP/1.1\r\n\r\n", 18, false, CTL_E_TOOBIG },
	{ "binary garbage", "\0\0\0\x08\xff\xfe\xfd\xfc\1\2\3\4", 12, false,
	    CTL_E_VERSION },
	{ "signal out of range", "\0\0\0\x16\0\1\0\5\0\1\0\0\0\2/a"
	    "\0\5\0\0\0\4\0\0\1\0", 26, false, CTL_E_PROTO },
};

START_TEST(malformed_requests)
{
	struct ctl_counters before, after;
	struct ctl_response r;
	struct json *doc;
	size_t i;
	int fd, rc;

	start_daemon(NULL, NULL);
	ck_assert_int_eq(ctltest_counters(srv.sock, &before), 0);
	for (i = 0; i < sizeof(badreqs) / sizeof(badreqs[0]); i++) {
		const struct badreq *b = &badreqs[i];

		fd = ctltest_connect(srv.sock);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(send(fd, b->bytes, b->len, MSG_NOSIGNAL),
		    (ssize_t)b->len);
		if (b->half_close)
			shutdown(fd, SHUT_WR);
		rc = ctltest_exchange(fd, NULL, 0, &r);
		ck_assert_msg(rc == 0, "%s: no answer", b->what);
		ck_assert_msg(r.status == b->expect, "%s: status %u, expected "
		    "%d (%s)", b->what, r.status, b->expect, r.error);
		ctl_response_free(&r);
		ck_assert_int_eq(ctltest_exchange(fd, NULL, 0, &r), -1);
		close(fd);
		/* actord is still there, and answers. */
		ck_assert_int_eq(kill(d.pid, 0), 0);
		doc = ctltest_status(&srv);
		ck_assert_str_eq(nstr(doc, "/a", "state"), "running");
		json_free(doc);
	}
	/* A silent client does not block the others. */
	fd = ctltest_connect(srv.sock);
	ck_assert_int_ge(fd, 0);
	doc = ctltest_status(&srv);
	json_free(doc);
	close(fd);
	ck_assert_int_eq(ctltest_counters(srv.sock, &after), 0);
	ck_assert_uint_ge(after.malformed + after.truncated + after.oversized +
	    after.bad_version + after.unknown_command,
	    before.malformed + before.truncated + before.oversized +
	    before.bad_version + before.unknown_command +
	    sizeof(badreqs) / sizeof(badreqs[0]));
}
END_TEST

/* --- metrics ------------------------------------------------------------------------- */

/*
 * GET /metrics from 127.0.0.1:port into buf: false if nothing listens
 * there (the connection is refused).
 */
static bool
metrics_get(int port, char *buf, size_t len)
{
	struct sockaddr_in sin;
	size_t got = 0;
	ssize_t r;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		ck_assert_int_eq(errno, ECONNREFUSED);
		close(fd);
		return false;
	}
	ck_assert_int_gt(write(fd, "GET /metrics HTTP/1.0\r\n\r\n", 25), 0);
	while (got < len - 1 &&
	    (r = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)r;
	buf[got] = '\0';
	close(fd);
	return true;
}

/* Two ports for this test process, unlikely to be taken. */
static int
test_port(int k)
{
	return 20000 + (int)(getpid() % 10000) * 2 + k;
}

START_TEST(metrics_listener)
{
	char top[64], buf[65536];
	int port;

	port = test_port(0);
	snprintf(top, sizeof(top), "metrics_listen = \"127.0.0.1:%d\";", port);
	start_daemon(NULL, top);
	ck_assert(metrics_get(port, buf, sizeof(buf)));
	ck_assert_msg(strncmp(buf, "HTTP/1.", 7) == 0 &&
	    strstr(buf, " 200 ") != NULL, "%s", buf);
	ck_assert(strstr(buf, "actord_mailbox_depth{path=\"/a\"} 0\n") !=
	    NULL);
	ck_assert(strstr(buf, "# TYPE actord_mailbox_wait_seconds "
	    "histogram") != NULL);
}
END_TEST

/* --- top ----------------------------------------------------------------------------- */

START_TEST(top_on_a_pty)
{
	struct ctltest_top t;
	struct termios during;

	start_daemon(NULL, NULL);
	ctltest_top_start(&t, srv.sock);
	ctltest_top_until(&t, "specs:", 2, WAIT);
	ck_assert_ptr_nonnull(memmem(t.buf, t.len, "/api/1", 6));
	ck_assert_ptr_nonnull(memmem(t.buf, t.len, "/loop/flaky", 11));
	ck_assert_int_eq(tcgetattr(t.slave, &during), 0);
	ck_assert_uint_eq(during.c_lflag & (ICANON | ECHO), 0);
	ck_assert_int_eq(write(t.master, "q", 1), 1);
	ck_assert_int_eq(ctltest_top_end(&t, WAIT), 0);
}
END_TEST

/* --- idle and cancelled clients ------------------------------------------------ */

/*
 * A restart whose client goes away is still carried out; followers that
 * quit leave no timer behind: actord, used then left alone, is idle.
 */
START_TEST(cancelled_clients_then_idle)
{
	static const char *const dl[] = { "deadletters", "-f", NULL };
	static const char *const rs[] = { "restart", "/slow", NULL };
	static const char *const lg[] = { "log", "-f", "/a", NULL };
	char child[256], buf[4096];
	struct ctltest_out o;
	struct json *doc;
	double inc;
	pid_t f1, f2, f3;
	int fd1, fd2, fd3;

	snprintf(child, sizeof(child), ",\n    { name = \"slow\"; ready = "
	    "\"fd\"; exec = [\"%s\", \"fd\", \"300\"]; }",
	    ts_progs("tworker"));
	start_daemon(child, NULL);
	ck_assert(wait_state("/slow", "running"));
	doc = ctltest_status(&srv);
	inc = nnum(doc, "/slow", "incarnation");
	json_free(doc);
	f1 = follow(dl, &fd1);
	f2 = follow(lg, &fd2);
	buf[0] = '\0';
	ck_assert(read_until(fd2, "tworker run up", buf, sizeof(buf)));
	f3 = follow(rs, &fd3);
	ck_assert(wait_state("/slow", "starting"));
	stop_follower(f3, fd3);		/* gone before the answer */
	stop_follower(f2, fd2);
	stop_follower(f1, fd1);
	ck_assert(wait_state("/slow", "running"));
	doc = ctltest_status(&srv);
	ck_assert(nnum(doc, "/slow", "incarnation") == inc + 1);
	json_free(doc);
	RUN(&o, "status", "/slow");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	/* Now leave it alone: no timer of the control side ticks. */
	ck_assert(wait_state("/loop/flaky", "restarting"));
	RUN(&o, "stop", "/loop");	/* the only thing that would tick */
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ts_sleep_ms(300);
	ts_daemon_idle(&d, 600);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("e2e");
	TCase *tc = tcase_create("real actord");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, status_in_start_order);
	tcase_add_test(tc, start_stop_remove_add);
	tcase_add_test(tc, added_instance_survives_and_exec_error_on_start);
	tcase_add_test(tc, second_actord_on_same_socket_exits_1);
	tcase_add_test(tc, restart_and_kill);
	tcase_add_test(tc, log_and_follow);
	tcase_add_test(tc, stalled_stderr_blocks_nothing);
	tcase_add_test(tc, send_deadletters_stats);
	tcase_add_test(tc, reload_and_shutdown);
	tcase_add_test(tc, reload_moves_listeners);
	tcase_add_test(tc, other_uid_refused);
	tcase_add_test(tc, control_group_allowed);
	tcase_add_test(tc, malformed_requests);
	tcase_add_test(tc, metrics_listener);
	tcase_add_test(tc, top_on_a_pty);
	tcase_add_test(tc, cancelled_clients_then_idle);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
