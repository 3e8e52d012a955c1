/*
 * check_sup_actord.c: the real actord binary ($ACTORD_BUILD/actord) with
 * exec'd workers ($ACTORD_BUILD/tests/progs/tworker): exit statuses as a
 * contract, the exec failure message, -n, readiness modes and
 * start_timeout, actord's own READY=1, output capture, SIGTERM with no
 * survivor, reload (an unchanged child keeps its pid; a bad file is
 * refused), and an idle actord making no context switch.
 */
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT	10000		/* ms: a bound, never an expectation */

static struct ts_daemon d;

static void
setup(void)
{
	ts_daemon_init(&d);
}

static void
teardown(void)
{
	ts_daemon_cleanup(&d);
}

static bool	 cgroup2_mount(char *, size_t);
static bool	 log_count_reaches(struct ts_daemon *, const char *, int, int);

/*
 * The cgroup a test of this runner made: root/actord-test-<runner pid>.
 * A failed check ends the test's process at once, with no teardown, so
 * the runner itself (an unchecked fixture, after the tests) kills what is
 * left in it and removes it.
 */
static void
test_cgroup(char *buf, size_t len, pid_t runner)
{
	char root[512];

	buf[0] = '\0';
	if (cgroup2_mount(root, sizeof(root)))
		snprintf(buf, len, "%s/actord-test-%d", root, (int)runner);
}

static void
cgroup_leftovers(void)
{
	char base[600], leaf[700], kill_file[720];
	int fd, waited;

	test_cgroup(base, sizeof(base), getpid());
	if (base[0] == '\0')
		return;
	snprintf(leaf, sizeof(leaf), "%s/w", base);
	snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", leaf);
	if ((fd = open(kill_file, O_WRONLY | O_CLOEXEC)) != -1) {
		(void)!write(fd, "1", 1);
		close(fd);
	}
	for (waited = 0; rmdir(leaf) == -1 && errno == EBUSY &&
	    waited < 2000; waited += 10)
		ts_sleep_ms(10);
	(void)rmdir(base);
}

/* A pid a shell child wrote to path (0 after ms without one). */
static pid_t
pid_from(const char *path, int ms)
{
	char buf[32];
	ssize_t n;
	int fd, waited;

	for (waited = 0; waited < ms; waited += 20) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			buf[n > 0 ? n : 0] = '\0';
			if (atoi(buf) > 0)
				return (pid_t)atoi(buf);
		}
		ts_sleep_ms(20);
	}
	return 0;
}

/* Until pid is gone (true), or ms passed. */
static bool
gone_within(pid_t pid, int ms)
{
	int waited;

	for (waited = 0; waited < ms; waited += 10) {
		if (!ts_alive(pid))
			return true;
		ts_sleep_ms(10);
	}
	return false;
}

/* A writable cgroup v2 mount into buf: false if there is none. */
static bool
cgroup2_mount(char *buf, size_t len)
{
	char line[1024], mnt[512];
	bool found = false;
	FILE *f;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, " - cgroup2 ") != NULL &&
		    sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1) {
			snprintf(buf, len, "%s", mnt);
			found = true;
		}
	fclose(f);
	return found && access(buf, W_OK) == 0;
}

/* The part of every configuration that names the helper and its dir. */
/* How many times what occurs in s. */
static int
count_in(const char *s, const char *what)
{
	int n = 0;

	while ((s = strstr(s, what)) != NULL) {
		n++;
		s += strlen(what);
	}
	return n;
}

#define HEAD \
	"shutdown_timeout = 5000;\n" \
	"supervisor = {\n" \
	"  intensity = 3; period = 10; backoff_min = 1; backoff_max = 10;\n" \
	"  children = (\n"
#define TAIL "  );\n};\n"

/* A cgroup that is no cgroup v2 directory: refused at start, exit 1. */
START_TEST(cgroup_not_cgroup2_exits_1)
{
	ts_daemon_conf(&d, "cgroup = \"%s\";\n" HEAD
	    "    { name = \"ok\"; exec = [\"%s\", \"run\"]; }\n"
	    TAIL, d.dir, ts_progs("tworker"));
	ts_daemon_start(&d, NULL);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 1);
	ck_assert_msg(strstr(ts_daemon_log(&d), "not a cgroup v2 directory") !=
	    NULL, "log:\n%s", ts_daemon_log(&d));
}
END_TEST

START_TEST(exec_failure_exits_2_naming_the_child)
{
	ts_daemon_conf(&d, HEAD
	    "    { name = \"ok\"; exec = [\"%s\", \"run\"]; env = { TW_DIR = \"%s\"; }; },\n"
	    "    { name = \"nope\"; exec = [\"/usr/bin/nope\"]; }\n"
	    TAIL, ts_progs("tworker"), d.dir);
	ts_daemon_start(&d, NULL);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 2);
	ck_assert_msg(strstr(ts_daemon_log(&d), "/nope: failed to start: exec "
	    "/usr/bin/nope: No such file or directory\n") != NULL,
	    "log:\n%s", ts_daemon_log(&d));
	/* Said once, with its cause: not once per layer it went through. */
	ck_assert_msg(count_in(ts_daemon_log(&d), "No such file") == 1,
	    "log:\n%s", ts_daemon_log(&d));
	ck_assert_msg(strstr(ts_daemon_log(&d), "exiting with status 2: a "
	    "child failed to start\n") != NULL, "log:\n%s", ts_daemon_log(&d));
}
END_TEST

/*
 * actord -n: "configuration OK" only when every program can run: it
 * exists, is a file, its user may execute it; a bare name is found in the
 * fixed search path, or refused.
 */
START_TEST(check_only_finds_programs_that_cannot_run)
{
	char prog[128], want[512];
	int fd;

	ts_daemon_conf(&d, HEAD
	    "    { name = \"a\"; exec = [\"/usr/bin/nope\"]; },\n"
	    "    { name = \"b\"; exec = [\"sleep\", \"1\"]; }\n" TAIL);
	ts_daemon_start(&d, "-n");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 1);
	snprintf(want, sizeof(want), "actord: %s:6: /a: exec /usr/bin/nope: "
	    "No such file or directory\n", d.conf);
	ck_assert_msg(strstr(ts_daemon_log(&d), want) != NULL, "log:\n%s",
	    ts_daemon_log(&d));
	ck_assert(strstr(ts_daemon_log(&d), "1 program cannot run") != NULL);
	ck_assert(strstr(ts_daemon_log(&d), "/b:") == NULL);	/* found */
	ck_assert(strstr(ts_daemon_log(&d), "configuration OK") == NULL);

	ts_daemon_conf(&d, HEAD
	    "    { name = \"a\"; exec = [\"no-such-program-here\"]; }\n"
	    TAIL);
	ts_daemon_start(&d, "-n");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 1);
	ck_assert_msg(strstr(ts_daemon_log(&d), ":6: supervisor.children[0]."
	    "exec[0]: no program \"no-such-program-here\" in /usr/local/sbin:")
	    != NULL, "log:\n%s", ts_daemon_log(&d));

	/* A file that is not executable. */
	snprintf(prog, sizeof(prog), "%s/notexec", d.dir);
	fd = open(prog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ne(fd, -1);
	close(fd);
	ts_daemon_conf(&d, HEAD "    { name = \"a\"; exec = [\"%s\"]; }\n" TAIL,
	    prog);
	ts_daemon_start(&d, "-n");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 1);
	ck_assert_msg(strstr(ts_daemon_log(&d), "notexec: Permission denied")
	    != NULL, "log:\n%s", ts_daemon_log(&d));
	if (geteuid() != 0)
		return;
	/* Executable by root, not by the user it runs as. */
	snprintf(prog, sizeof(prog), "%s", ts_daemon_prog_public(&d,
	    "tworker"));
	ck_assert_int_eq(chmod(prog, 0700), 0);
	ts_daemon_conf(&d, HEAD "    { name = \"a\"; exec = [\"%s\"]; "
	    "user = \"nobody\"; }\n" TAIL, prog);
	ts_daemon_start(&d, "-n");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 1);
	ck_assert_msg(strstr(ts_daemon_log(&d), "tworker: Permission denied as "
	    "user nobody") != NULL, "log:\n%s", ts_daemon_log(&d));
	ck_assert_int_eq(chmod(prog, 0755), 0);
	ts_daemon_start(&d, "-n");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
}
END_TEST

/* -h and --help print the usage on stdout; errors say "actord:". */
START_TEST(help_and_errors_name_actord)
{
	const char *log;

	ts_daemon_start(&d, "-h");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	ts_daemon_start(&d, "--help");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	log = ts_daemon_log(&d);
	ck_assert_int_eq(count_in(log, "usage: actord [-hnv]"), 2);
	ck_assert(strstr(log, "  -n  ") != NULL);
	ts_daemon_start(&d, "-x");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 1);
	ck_assert_msg(strstr(ts_daemon_log(&d), "\nactord: unknown option -x\n")
	    != NULL, "log:\n%s", ts_daemon_log(&d));
}
END_TEST

START_TEST(check_only)
{
	char want[512];

	ts_daemon_conf(&d, HEAD
	    "    { name = \"a\"; exec = [\"/bin/true\"]; }\n" TAIL);
	ts_daemon_start(&d, "-n");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	ts_daemon_conf(&d, HEAD
	    "    { name = \"a\"; exec = [\"/bin/true\"]; restart = \"permanant\"; }\n"
	    TAIL);
	ts_daemon_start(&d, "-n");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 1);
	/*
	 * The error names the file, the line (6: ts_daemon_conf puts
	 * runtime_dir first), the key and what was expected.
	 */
	snprintf(want, sizeof(want), "actord: %s:6: supervisor.children[0]."
	    "restart: expected permanent, transient or temporary, got "
	    "\"permanant\"\n", d.conf);
	ck_assert_msg(strstr(ts_daemon_log(&d), want) != NULL,
	    "log:\n%s", ts_daemon_log(&d));
	/* A missing file and a bad option are errors too. */
	unlink(d.conf);
	ts_daemon_start(&d, NULL);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 1);
	ts_daemon_start(&d, "-x");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 1);
	ck_assert(strstr(ts_daemon_log(&d), "usage: actord") != NULL);
}
END_TEST

START_TEST(escalation_to_root_exits_3)
{
	ts_daemon_conf(&d,
	    "supervisor = {\n"
	    "  intensity = 1; period = 10; backoff_min = 1; backoff_max = 5;\n"
	    "  children = (\n"
	    "    { name = \"mid\"; supervisor = {\n"
	    "        intensity = 1; period = 10; backoff_min = 1; backoff_max = 5;\n"
	    "        children = ( { name = \"w\"; exec = [\"%s\", \"crash\", \"5\"]; } );\n"
	    "    }; }\n"
	    TAIL, ts_progs("tworker"));
	ts_daemon_start(&d, NULL);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 3);
	ck_assert_msg(strstr(ts_daemon_log(&d), "root supervisor gave up: /mid "
	    "gave up: /mid/w exited 1") != NULL, "log:\n%s", ts_daemon_log(&d));
}
END_TEST

/*
 * A descendant that left its worker's process group (setsid) escapes the
 * group kill and comes back to actord, the subreaper: it must not
 * outlive actord.
 */
START_TEST(no_orphan_outlives_actord)
{
	char file[128], buf[32];
	pid_t orphan = 0;
	int waited, fd;
	ssize_t n;

	snprintf(file, sizeof(file), "%s/orphan", d.dir);
	ts_daemon_conf(&d, HEAD
	    "    { name = \"w\"; exec = [\"/bin/sh\", \"-c\",\n"
	    "      \"setsid sleep 3600 & echo $! > %s.tmp; mv %s.tmp %s; "
	    "exec sleep 3600\"]; }\n"
	    TAIL, file, file, file);
	ts_daemon_start(&d, NULL);
	ck_assert_msg(ts_daemon_ready(&d, WAIT), "log:\n%s",
	    ts_daemon_log(&d));
	for (waited = 0; waited < WAIT && orphan <= 0; waited += 20) {
		if ((fd = open(file, O_RDONLY | O_CLOEXEC)) != -1) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			buf[n > 0 ? n : 0] = '\0';
			orphan = (pid_t)atoi(buf);
		}
		if (orphan <= 0)
			ts_sleep_ms(20);
	}
	ck_assert_int_gt(orphan, 0);
	ck_assert(ts_alive(orphan));
	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	waited = ts_alive(orphan);
	if (waited)
		kill(orphan, SIGKILL);	/* not ours to leave behind either */
	ck_assert_msg(!waited, "orphan %d outlived actord; log:\n%s",
	    (int)orphan, ts_daemon_log(&d));
	ck_assert(strstr(ts_daemon_log(&d), "orphan pid") != NULL);
}
END_TEST

START_TEST(readiness_modes_and_sigterm)
{
	pid_t ex, fd, sd, ad;

	ts_daemon_conf(&d, HEAD
	    "    { name = \"ex\"; exec = [\"%s\", \"run\"]; env = { TW_DIR = \"%s\"; }; },\n"
	    "    { name = \"fd\"; exec = [\"%s\", \"fd\", \"30\"]; ready = \"fd\"; env = { TW_DIR = \"%s\"; }; },\n"
	    "    { name = \"sd\"; exec = [\"%s\", \"sd_notify\", \"30\"]; ready = \"sd_notify\"; env = { TW_DIR = \"%s\"; }; }\n"
	    TAIL, ts_progs("tworker"), d.dir, ts_progs("tworker"), d.dir,
	    ts_progs("tworker"), d.dir);
	ts_daemon_start(&d, NULL);
	ck_assert_msg(ts_daemon_ready(&d, WAIT), "no READY=1; log:\n%s",
	    ts_daemon_log(&d));
	ex = ts_daemon_child(&d, "ex", WAIT);
	fd = ts_daemon_child(&d, "fd", WAIT);
	sd = ts_daemon_child(&d, "sd", WAIT);
	ck_assert(ts_alive(ex) && ts_alive(fd) && ts_alive(sd));
	/* Started in order, each after the previous one was ready. */
	ck_assert_msg(ts_daemon_log_has(&d, "/sd: running", WAIT), "log:\n%s",
	    ts_daemon_log(&d));
	ck_assert(strstr(ts_daemon_log(&d), "/fd: running") <
	    strstr(ts_daemon_log(&d), "/sd: running"));
	/* Output is captured, prefixed with path[pid]. */
	{
		char want[64];

		snprintf(want, sizeof(want), "/fd[%d]: tworker fd up", (int)fd);
		ck_assert_msg(ts_daemon_log_has(&d, want, WAIT), "log:\n%s",
		    ts_daemon_log(&d));
	}
	ad = d.pid;
	ck_assert_int_eq(kill(ad, SIGTERM), 0);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	ck_assert(!ts_alive(ex) && !ts_alive(fd) && !ts_alive(sd));
	ck_assert(strstr(ts_daemon_log(&d), "/sd: pid") <
	    strstr(ts_daemon_log(&d), "/ex: pid"));
}
END_TEST

/* actorctl -S sock ARGS...: its exit status (-1 if it did not run). */
static int
actorctl(const char *sock, const char *a1, const char *a2, const char *a3,
    const char *a4)
{
	int st;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(ts_build("actorctl"), "actorctl", "-S", sock, a1, a2, a3,
		    a4, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/*
 * With `cgroup`, a descendant that left its worker's process group
 * (setsid) gets the signals sent to its worker (actorctl kill) and is
 * killed when the worker dies, not only when actord exits (the restart
 * waits 20 s of backoff: the death alone must do it); each worker runs in
 * BASE/path, removed at exit.
 */
START_TEST(escaped_descendant_dies_with_its_worker)
{
	char test_cg[600], esc_f[128], main_f[128], leaf[700], line[64];
	char sock[160];
	pid_t esc, main1;
	int i;
	struct stat st;
	FILE *f;
	bool listed = false;

	test_cgroup(test_cg, sizeof(test_cg), getppid());
	if (test_cg[0] == '\0') {
		fprintf(stderr, "escaped_descendant_dies_with_its_worker: "
		    "skipped, no writable cgroup v2 mount\n");
		return;
	}
	snprintf(esc_f, sizeof(esc_f), "%s/escaped", d.dir);
	snprintf(main_f, sizeof(main_f), "%s/main", d.dir);
	snprintf(sock, sizeof(sock), "%s/run/control.sock", d.dir);
	ts_daemon_conf(&d, "cgroup = \"%s\";\n"
	    "runtime_dir = \"%s/run\";\n"
	    "shutdown_timeout = 5000;\n"
	    "supervisor = {\n"
	    "  intensity = 3; period = 10;\n"
	    "  backoff_min = 20000; backoff_max = 20000;\n"
	    "  children = (\n"
	    "    { name = \"w\"; exec = [\"/bin/sh\", \"-c\",\n"
	    "      \"setsid sleep 60 & echo $! > %s.tmp; mv %s.tmp %s; "
	    "echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 3600\"]; }\n"
	    TAIL, test_cg, d.dir, esc_f, esc_f, esc_f, main_f, main_f,
	    main_f);
	ts_daemon_start(&d, NULL);
	ck_assert_msg(ts_daemon_ready(&d, WAIT), "log:\n%s",
	    ts_daemon_log(&d));
	ck_assert_int_gt(esc = pid_from(esc_f, WAIT), 0);
	ck_assert_int_gt(main1 = pid_from(main_f, WAIT), 0);
	ck_assert(ts_alive(esc));
	ck_assert_int_ne(getpgid(esc), main1);	/* it escaped the group */
	snprintf(leaf, sizeof(leaf), "%s/w/cgroup.procs", test_cg);
	ck_assert_ptr_nonnull(f = fopen(leaf, "re"));
	while (fgets(line, sizeof(line), f) != NULL)
		listed = listed || atoi(line) == esc;
	fclose(f);
	ck_assert_msg(listed, "pid %d is not in %s", (int)esc, leaf);

	/* A signal to the worker reaches it. */
	ck_assert_int_eq(actorctl(sock, "kill", "-s", "STOP", "/w"), 0);
	for (i = 0; i < WAIT && tcheck_proc_state(esc) != 'T'; i += 10)
		ts_sleep_ms(10);
	ck_assert_int_eq(tcheck_proc_state(esc), 'T');

	/* The worker dies: its escaped descendant with it. */
	ck_assert_int_eq(kill(main1, SIGKILL), 0);
	if (!(listed = gone_within(esc, WAIT)))
		(void)kill(esc, SIGKILL);	/* a failed test leaves nothing */
	ck_assert_msg(listed, "pid %d outlived its worker; log:\n%s",
	    (int)esc, ts_daemon_log(&d));

	/* actord exits: the cgroup of w is gone too. */
	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	snprintf(leaf, sizeof(leaf), "%s/w", test_cg);
	ck_assert_int_eq(lstat(leaf, &st), -1);
}
END_TEST

START_TEST(sd_notify_start_timeout)
{
	ts_daemon_conf(&d, HEAD
	    "    { name = \"quiet\"; exec = [\"%s\", \"mute\"]; ready = \"sd_notify\"; start_timeout = 100; }\n"
	    TAIL, ts_progs("tworker"));
	ts_daemon_start(&d, NULL);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 2);
	ck_assert_msg(strstr(ts_daemon_log(&d),
	    "/quiet: failed to start: not ready within 100 ms") != NULL,
	    "log:\n%s", ts_daemon_log(&d));
}
END_TEST

#define RELOAD_CONF HEAD \
	"    { name = \"a\"; exec = [\"%s\", \"run\"]; env = { TW_DIR = \"%s\"; }; },\n" \
	"    { name = \"b\"; exec = [\"%s\", \"run\", \"%d\"]; env = { TW_DIR = \"%s\"; }; },\n" \
	"    { name = \"%s\"; exec = [\"%s\", \"run\"]; env = { TW_DIR = \"%s\"; }; }\n" \
	TAIL

static void
reload_conf(int b_arg, const char *third)
{
	const char *w = ts_progs("tworker");

	ts_daemon_conf(&d, RELOAD_CONF, w, d.dir, w, b_arg, d.dir, third, w,
	    d.dir);
}

START_TEST(reload_diffs_the_tree)
{
	pid_t a, b, c, b2, dd;
	char path[256];

	reload_conf(1, "c");
	ts_daemon_start(&d, NULL);
	ck_assert(ts_daemon_ready(&d, WAIT));
	a = ts_daemon_child(&d, "a", WAIT);
	b = ts_daemon_child(&d, "b", WAIT);
	c = ts_daemon_child(&d, "c", WAIT);
	snprintf(path, sizeof(path), "%s/b.pid", d.dir);
	unlink(path);
	/* a unchanged, b changed, c removed, d new. */
	reload_conf(2, "d");
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	dd = ts_daemon_child(&d, "d", WAIT);
	b2 = ts_daemon_child(&d, "b", WAIT);
	ck_assert_int_gt(dd, 0);
	ck_assert_int_gt(b2, 0);
	ck_assert_int_ne(b2, b);
	ck_assert(ts_alive(a));
	ck_assert_int_eq(ts_daemon_child(&d, "a", 0), a);
	ck_assert(ts_daemon_log_has(&d, "/c: pid", WAIT));
	while (ts_alive(c))
		ts_sleep_ms(5);
	/* A bad file is refused; the tree stays. */
	ts_daemon_conf(&d, "supervisor = { strategy = \"one_for_none\"; };\n");
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	ck_assert_msg(ts_daemon_log_has(&d, "reload refused", WAIT),
	    "log:\n%s", ts_daemon_log(&d));
	ck_assert(ts_alive(a) && ts_alive(b2) && ts_alive(dd));
	kill(d.pid, SIGTERM);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	ck_assert(!ts_alive(a) && !ts_alive(b2) && !ts_alive(dd));
}
END_TEST

static bool
exists(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

START_TEST(child_log_file_rotates)
{
	char path[256], want[64], buf[4096];
	FILE *f;
	size_t n;
	pid_t pid;

	ts_daemon_conf(&d,
	    "log = { path = \"%s/own.log\"; max_size = 4000; keep = 1; };\n"
	    HEAD
	    "    { name = \"spam\"; exec = [\"%s\", \"spam\", \"400\"];\n"
	    "      env = { TW_DIR = \"%s\"; };\n"
	    "      log = { path = \"%s/spam.log\"; max_size = 2000; keep = 2; }; }\n"
	    TAIL, d.dir, ts_progs("tworker"), d.dir, d.dir);
	ts_daemon_start(&d, NULL);
	ck_assert(ts_daemon_ready(&d, WAIT));
	pid = ts_daemon_child(&d, "spam", WAIT);
	snprintf(path, sizeof(path), "%s/spam.log", d.dir);
	snprintf(want, sizeof(want), "/spam[%d]: spam line 399", (int)pid);
	for (;;) {
		buf[0] = '\0';
		if ((f = fopen(path, "r")) != NULL) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			buf[n] = '\0';
			fclose(f);
		}
		if (strstr(buf, want) != NULL)
			break;
		ts_sleep_ms(5);
	}
	ck_assert(exists(d.dir, "spam.log.1"));
	ck_assert(exists(d.dir, "spam.log.2"));
	ck_assert(!exists(d.dir, "spam.log.3"));
	ck_assert_uint_le(strlen(buf), 2000);
	kill(d.pid, SIGTERM);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	/* actord's own log went to its file, not to stderr. */
	ck_assert(exists(d.dir, "own.log"));
	ck_assert(strstr(ts_daemon_log(&d), "tree started") == NULL);
}
END_TEST

static int
proc_status_field(pid_t pid, const char *field, char *out, size_t len)
{
	char path[64], line[256];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, strlen(field)) == 0) {
			snprintf(out, len, "%s", line + strlen(field));
			found = 1;
			break;
		}
	fclose(f);
	return found;
}

/*
 * Output that cannot be written (here to /dev/full; max_size = 0, so it
 * is never rotated) is counted and reported, and actord goes on.
 */
START_TEST(dropped_output_is_reported)
{
	if (access("/dev/full", W_OK) == -1)
		return;		/* no such device here: nothing to test with */
	ts_daemon_conf(&d, HEAD
	    "    { name = \"w\"; restart = \"temporary\";\n"
	    "      exec = [\"/bin/sh\", \"-c\", \"echo hello; echo world\"];\n"
	    "      log = { path = \"/dev/full\"; max_size = 0; keep = 0; }; },\n"
	    "    { name = \"x\"; exec = [\"/bin/sleep\", \"3600\"]; }\n"
	    TAIL);
	ts_daemon_start(&d, NULL);
	ck_assert_msg(ts_daemon_ready(&d, WAIT), "log:\n%s", ts_daemon_log(&d));
	ck_assert_msg(ts_daemon_log_has(&d, "bytes of output dropped", WAIT),
	    "log:\n%s", ts_daemon_log(&d));
	ck_assert(strstr(ts_daemon_log(&d), "hello") == NULL);
	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
}
END_TEST

/* The child's credentials, limits, umask, cwd and environment. */
/*
 * Ignore signals 32 and 33, as make leaves them, in this process and so in
 * the actord it starts: sigaction(3) refuses them, so use the system call.
 * A worker must still start with them at their default.
 */
static void
ignore_glibc_reserved_signals(void)
{
	struct {
		void		(*handler)(int);
		unsigned long	 flags;
		void		(*restorer)(void);
		uint64_t	 mask;
	} ksa;

	memset(&ksa, 0, sizeof(ksa));
	ksa.handler = SIG_IGN;
	ck_assert_int_eq(syscall(SYS_rt_sigaction, 32, &ksa, NULL, 8), 0);
	ck_assert_int_eq(syscall(SYS_rt_sigaction, 33, &ksa, NULL, 8), 0);
}

START_TEST(child_environment_is_what_was_configured)
{
	char buf[256], path[128], env[4096];
	FILE *f;
	size_t n;
	pid_t pid;

	ts_daemon_conf(&d, HEAD
	    "    { name = \"c\"; exec = [\"%s\", \"run\"];\n"
	    "      env = { TW_DIR = \"%s\"; FOO = \"bar\"; };\n"
	    "      cwd = \"/tmp\"; umask = \"027\"; limits = { nofile = 77; };\n"
	    "      %s }\n"
	    TAIL, geteuid() == 0 ? ts_daemon_prog_public(&d, "tworker") :
	    ts_progs("tworker"), d.dir,
	    geteuid() == 0 ? "user = \"nobody\"; group = \"nogroup\";" : "");
	if (geteuid() == 0)
		chmod(d.dir, 0777);	/* nobody writes its pid file */
	ignore_glibc_reserved_signals();
	ts_daemon_start(&d, NULL);
	ck_assert_msg(ts_daemon_ready(&d, WAIT), "log:\n%s", ts_daemon_log(&d));
	pid = ts_daemon_child(&d, "c", WAIT);
	ck_assert_int_gt(pid, 0);
	ck_assert(proc_status_field(pid, "Umask:", buf, sizeof(buf)));
	ck_assert_msg(strstr(buf, "0027") != NULL, "umask %s", buf);
	/*
	 * Its own process group; no signal blocked or ignored (actord
	 * ignores SIGPIPE and blocks SIGCHLD, SIGTERM, SIGINT and SIGHUP).
	 */
	ck_assert_int_eq(getpgid(pid), pid);
	ck_assert(proc_status_field(pid, "SigBlk:", buf, sizeof(buf)));
	ck_assert_msg(strtoull(buf, NULL, 16) == 0, "blocked %s", buf);
	/* No signal ignored, 32 and 33 included (see above). */
	ck_assert(proc_status_field(pid, "SigIgn:", buf, sizeof(buf)));
	ck_assert_msg(strtoull(buf, NULL, 16) == 0, "ignored %s", buf);
	if (geteuid() == 0) {
		ck_assert(proc_status_field(pid, "Uid:", buf, sizeof(buf)));
		ck_assert_msg(strstr(buf, "65534") != NULL, "uid %s", buf);
		ck_assert(proc_status_field(pid, "Gid:", buf, sizeof(buf)));
		ck_assert_msg(strstr(buf, "65534") != NULL, "gid %s", buf);
	}
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	n = (size_t)readlink(path, buf, sizeof(buf) - 1);
	buf[n < sizeof(buf) ? n : 0] = '\0';
	ck_assert_str_eq(buf, "/tmp");
	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(env, 1, sizeof(env) - 1, f);
	env[n] = '\0';
	fclose(f);
	ck_assert_msg(strstr(env, "Max open files            77") != NULL,
	    "limits:\n%s", env);
	/* A clean environment: the configured variables and ACTORD_*. */
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(env, 1, sizeof(env) - 1, f);
	env[n] = '\0';
	fclose(f);
	for (size_t i = 0; i < n; i++)
		if (env[i] == '\0')
			env[i] = '\n';
	ck_assert_msg(strstr(env, "FOO=bar\n") != NULL, "env:\n%s", env);
	ck_assert(strstr(env, "ACTORD_PATH=/c\n") != NULL);
	ck_assert(strstr(env, "ACTORD_INCARNATION=1\n") != NULL);
	/* No mailbox: no arena (what it forks would keep it). */
	ck_assert_msg(strstr(env, "ACTORD_ARENA_FD") == NULL, "env:\n%s", env);
	ck_assert_msg(strstr(env, "ACTORD_LAYOUT_FD") == NULL, "env:\n%s", env);
	ck_assert_msg(strstr(env, "NOTIFY_SOCKET") == NULL, "env:\n%s", env);
	ck_assert(strstr(env, "HOME=") == NULL);
	/* Only stdio is open. */
	snprintf(path, sizeof(path), "/proc/%d/fd/5", (int)pid);
	ck_assert_int_eq(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "/proc/%d/fd/4", (int)pid);
	ck_assert_int_eq(access(path, F_OK), -1);
	kill(d.pid, SIGTERM);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
}
END_TEST

/* PR_SET_PDEATHSIG: if actord dies, its workers die with it. */
START_TEST(workers_die_with_actord)
{
	pid_t pid;
	int waited;

	ts_daemon_conf(&d, HEAD
	    "    { name = \"w\"; exec = [\"%s\", \"run\"];"
	    " env = { TW_DIR = \"%s\"; }; }\n"
	    TAIL, ts_progs("tworker"), d.dir);
	ts_daemon_start(&d, NULL);
	ck_assert_msg(ts_daemon_ready(&d, WAIT), "log:\n%s", ts_daemon_log(&d));
	pid = ts_daemon_child(&d, "w", WAIT);
	ck_assert(ts_alive(pid));
	ck_assert_int_eq(kill(d.pid, SIGKILL), 0);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 128 + SIGKILL);
	for (waited = 0; waited < WAIT && ts_alive(pid); waited += 20)
		ts_sleep_ms(20);
	if (ts_alive(pid))
		kill(pid, SIGKILL);
	ck_assert_msg(waited < WAIT, "worker %d outlived actord", (int)pid);
}
END_TEST

/* -p: the pid file holds actord's pid while it runs, and goes at exit. */
START_TEST(pid_file_written_and_removed)
{
	char opt[160], buf[32];
	int fd;
	ssize_t n;

	snprintf(opt, sizeof(opt), "-p%s/a.pid", d.dir);
	ts_daemon_conf(&d, HEAD
	    "    { name = \"w\"; exec = [\"/bin/sleep\", \"3600\"]; }\n"
	    TAIL);
	ts_daemon_start(&d, opt);
	ck_assert_msg(ts_daemon_ready(&d, WAIT), "log:\n%s", ts_daemon_log(&d));
	fd = open(opt + 2, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ne(fd, -1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	ck_assert_int_eq(atoi(buf), d.pid);
	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	ck_assert_int_eq(access(opt + 2, F_OK), -1);
}
END_TEST

/* Wait until what appears n times in actord's log. */
static bool
log_count_reaches(struct ts_daemon *dm, const char *what, int n, int ms)
{
	const char *p;
	int	 k, waited;

	for (waited = 0; waited <= ms; waited += 5) {
		k = 0;
		for (p = ts_daemon_log(dm); (p = strstr(p, what)) != NULL;
		    p += strlen(what))
			k++;
		if (k >= n)
			return true;
		ts_sleep_ms(5);
	}
	return false;
}

START_TEST(idle_actord_does_nothing)
{
	ts_daemon_conf(&d, HEAD
	    "    { name = \"a\"; exec = [\"%s\", \"run\"]; },\n"
	    "    { name = \"b\"; exec = [\"%s\", \"run\"]; }\n"
	    TAIL, ts_progs("tworker"), ts_progs("tworker"));
	ts_daemon_start(&d, NULL);
	ck_assert(ts_daemon_ready(&d, WAIT));
	/* Both lines: the second one, read late, would be a wake-up. */
	ck_assert(log_count_reaches(&d, "tworker run up", 2, WAIT));
	ts_sleep_ms(100);	/* let the last output lines drain */
	ts_daemon_idle(&d, 500);
	kill(d.pid, SIGTERM);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("sup_actord");
	TCase *tc = tcase_create("actord");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_unchecked_fixture(tc, NULL, cgroup_leftovers);
	tcase_add_test(tc, exec_failure_exits_2_naming_the_child);
	tcase_add_test(tc, cgroup_not_cgroup2_exits_1);
	tcase_add_test(tc, check_only);
	tcase_add_test(tc, escalation_to_root_exits_3);
	tcase_add_test(tc, readiness_modes_and_sigterm);
	tcase_add_test(tc, no_orphan_outlives_actord);
	tcase_add_test(tc, escaped_descendant_dies_with_its_worker);
	tcase_add_test(tc, sd_notify_start_timeout);
	tcase_add_test(tc, reload_diffs_the_tree);
	tcase_add_test(tc, workers_die_with_actord);
	tcase_add_test(tc, pid_file_written_and_removed);
	tcase_add_test(tc, idle_actord_does_nothing);
	tcase_add_test(tc, child_log_file_rotates);
	tcase_add_test(tc, dropped_output_is_reported);
	tcase_add_test(tc, child_environment_is_what_was_configured);
	tcase_add_test(tc, check_only_finds_programs_that_cannot_run);
	tcase_add_test(tc, help_and_errors_name_actord);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
