/*
 * check_sup_actord.c: the real actord binary ($ACTORD_BUILD/actord) with
 * exec'd workers ($ACTORD_BUILD/tests/progs/tworker): exit statuses as a
 * contract, the exec failure message, -n, readiness modes and
 * start_timeout, actord's own READY=1, output capture, SIGTERM with no
 * survivor, reload (an unchanged child keeps its pid; a bad file is
 * refused), and an idle actord making no context switch.
 */
#include <check.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The part of every configuration that names the helper and its dir. */
#define HEAD \
	"shutdown_timeout = 5000;\n" \
	"supervisor = {\n" \
	"  intensity = 3; period = 10; backoff_min = 1; backoff_max = 10;\n" \
	"  children = (\n"
#define TAIL "  );\n};\n"

START_TEST(exec_failure_exits_2_naming_the_child)
{
	ts_daemon_conf(&d, HEAD
	    "    { name = \"ok\"; exec = [\"%s\", \"run\"]; env = { TW_DIR = \"%s\"; }; },\n"
	    "    { name = \"nope\"; exec = [\"/usr/bin/nope\"]; }\n"
	    TAIL, ts_progs("tworker"), d.dir);
	ts_daemon_start(&d, NULL);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 2);
	ck_assert_msg(strstr(ts_daemon_log(&d), "failed to start: /nope: exec "
	    "/usr/bin/nope: No such file or directory") != NULL,
	    "log:\n%s", ts_daemon_log(&d));
}
END_TEST

START_TEST(check_only)
{
	ts_daemon_conf(&d, HEAD
	    "    { name = \"a\"; exec = [\"/bin/true\"]; }\n" TAIL);
	ts_daemon_start(&d, "-n");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
	ts_daemon_conf(&d, HEAD
	    "    { name = \"a\"; exec = [\"/bin/true\"]; restart = \"permanant\"; }\n"
	    TAIL);
	ts_daemon_start(&d, "-n");
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 1);
	ck_assert_msg(strstr(ts_daemon_log(&d), "permanant") != NULL,
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

START_TEST(sd_notify_start_timeout)
{
	ts_daemon_conf(&d, HEAD
	    "    { name = \"quiet\"; exec = [\"%s\", \"mute\"]; ready = \"sd_notify\"; start_timeout = 100; }\n"
	    TAIL, ts_progs("tworker"));
	ts_daemon_start(&d, NULL);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 2);
	ck_assert_msg(strstr(ts_daemon_log(&d),
	    "failed to start: /quiet: not ready within 100 ms") != NULL,
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

/* The child's credentials, limits, umask, cwd and environment. */
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
	    TAIL, ts_progs("tworker"), d.dir,
	    geteuid() == 0 ? "user = \"nobody\"; group = \"nogroup\";" : "");
	if (geteuid() == 0)
		chmod(d.dir, 0777);	/* nobody writes its pid file */
	ts_daemon_start(&d, NULL);
	ck_assert_msg(ts_daemon_ready(&d, WAIT), "log:\n%s", ts_daemon_log(&d));
	pid = ts_daemon_child(&d, "c", WAIT);
	ck_assert_int_gt(pid, 0);
	ck_assert(proc_status_field(pid, "Umask:", buf, sizeof(buf)));
	ck_assert_msg(strstr(buf, "0027") != NULL, "umask %s", buf);
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
	ck_assert(strstr(env, "ACTORD_ARENA_FD=4\n") != NULL);
	ck_assert_msg(strstr(env, "NOTIFY_SOCKET") == NULL, "env:\n%s", env);
	ck_assert(strstr(env, "HOME=") == NULL);
	/* Only stdio and the arena are open. */
	snprintf(path, sizeof(path), "/proc/%d/fd/5", (int)pid);
	ck_assert_int_eq(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "/proc/%d/fd/4", (int)pid);
	n = (size_t)readlink(path, buf, sizeof(buf) - 1);
	buf[n < sizeof(buf) ? n : 0] = '\0';
	ck_assert_msg(strstr(buf, "memfd:actord") != NULL, "fd 4: %s", buf);
	kill(d.pid, SIGTERM);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
}
END_TEST

static long
ctxt_switches(pid_t pid)
{
	char path[64], line[256];
	long v = 0, total = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			total += v;
	fclose(f);
	return total;
}

START_TEST(idle_actord_does_nothing)
{
	long before, after;

	ts_daemon_conf(&d, HEAD
	    "    { name = \"a\"; exec = [\"%s\", \"run\"]; },\n"
	    "    { name = \"b\"; exec = [\"%s\", \"run\"]; }\n"
	    TAIL, ts_progs("tworker"), ts_progs("tworker"));
	ts_daemon_start(&d, NULL);
	ck_assert(ts_daemon_ready(&d, WAIT));
	ck_assert(ts_daemon_log_has(&d, "tworker run up", WAIT));
	ts_sleep_ms(100);	/* let the last output lines drain */
	before = ctxt_switches(d.pid);
	ts_sleep_ms(500);
	after = ctxt_switches(d.pid);
	ck_assert_int_ge(before, 0);
	ck_assert_int_eq(after, before);
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
	tcase_add_test(tc, exec_failure_exits_2_naming_the_child);
	tcase_add_test(tc, check_only);
	tcase_add_test(tc, escalation_to_root_exits_3);
	tcase_add_test(tc, readiness_modes_and_sigterm);
	tcase_add_test(tc, sd_notify_start_timeout);
	tcase_add_test(tc, reload_diffs_the_tree);
	tcase_add_test(tc, idle_actord_does_nothing);
	tcase_add_test(tc, child_log_file_rotates);
	tcase_add_test(tc, child_environment_is_what_was_configured);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
