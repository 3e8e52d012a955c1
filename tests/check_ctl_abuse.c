/*
 * check_ctl_abuse.c: the control socket serves its owner under abuse
 * (issue 11, item 6), with the real actord and actorctl.
 *
 * A peer (tests/progs/ctl_abuser) holds 1,000 connections that never
 * finish a request, and opens again every one actord closes: idle ones or
 * half-sent ones, of actord's own uid (any default worker could) or of
 * another uid allowed by control_group.  Meanwhile `actorctl status` must
 * succeed every time.  Its latency (fork and exec included) is printed,
 * p50, p99 and max, never asserted; so are actord's counts of evicted and
 * refused connections.  Without per-uid limits and eviction, 64 idle
 * connections made every status fail with "busy".
 *
 * The abuser is killed by pid at teardown; actord by ts_daemon_cleanup.
 */
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/control.h"
#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT		10000	/* ms: a bound, never an expectation */
#define CONNS		1000	/* the abuser's connections */
#define TRIES		200	/* actorctl status runs under abuse */

static struct ts_daemon	 d;
static struct ctltest_server srv;	/* only .sock is used */
static pid_t		 abuser = -1;
static int		 abuser_out = -1;

enum variant { V_IDLE, V_HALF, V_OTHER_UID };

static const char *variant_names[] = {
	"idle, actord's uid", "half-sent, actord's uid", "idle, another uid"
};

static void
setup(void)
{
	ts_daemon_init(&d);
	memset(&srv, 0, sizeof(srv));
	abuser = -1;
	abuser_out = -1;
}

static void
teardown(void)
{
	if (abuser > 0) {
		(void)kill(abuser, SIGKILL);
		(void)waitpid(abuser, NULL, 0);
	}
	if (abuser_out != -1)
		close(abuser_out);
	ts_daemon_cleanup(&d);
}

/* Read a line from the abuser's output into buf, within ms. */
static bool
abuser_line(char *buf, size_t len, int ms)
{
	struct pollfd pfd = { .fd = abuser_out, .events = POLLIN };
	size_t n = 0;
	ssize_t k;

	while (n + 1 < len) {
		if (poll(&pfd, 1, ms) != 1)
			break;
		if ((k = read(abuser_out, buf + n, 1)) != 1)
			break;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return n > 0;
}

/* Start the abuser (args: its options after -s SOCK -n CONNS). */
static void
abuser_start(const char *prog, const char *opt1, const char *opt2)
{
	char n[16];
	int out[2];

	snprintf(n, sizeof(n), "%d", CONNS);
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	abuser = fork();
	ck_assert_int_ne(abuser, -1);
	if (abuser == 0) {
		dup2(out[1], 1);
		execl(prog, prog, "-s", srv.sock, "-n", n, "-r", opt1, opt2,
		    (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	abuser_out = out[0];
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) /
	    1e6;
}

START_TEST(owner_served_under_abuse)
{
	static double lat[TRIES];
	enum variant v = (enum variant)_i;
	struct ctltest_out o;
	struct ctl_counters c;
	struct timespec t0;
	struct group *gr = getgrnam("nogroup");
	char line[128], as[32] = "";
	const char *prog;
	int i;

	if (v == V_OTHER_UID && (geteuid() != 0 || gr == NULL)) {
		fprintf(stderr, "owner_served_under_abuse (%s): skipped, not "
		    "root or no group nogroup\n", variant_names[v]);
		return;
	}
	ts_daemon_conf(&d,
	    "runtime_dir = \"%s/run\";\n"
	    "%s"
	    "shutdown_timeout = 3000;\n"
	    "supervisor = {\n"
	    "  children = (\n"
	    "    { name = \"w\"; exec = [\"/bin/sh\", \"-c\", "
	    "\"exec sleep 3600\"]; }\n"
	    "  );\n"
	    "};\n", d.dir, v == V_OTHER_UID ?
	    "control_group = \"nogroup\";\n" : "");
	/* A copy any uid can run, in a directory any uid can walk into. */
	prog = ts_daemon_prog_public(&d, "ctl_abuser");
	ts_daemon_up(&d, WAIT, srv.sock, sizeof(srv.sock));
	if (v == V_OTHER_UID)
		snprintf(as, sizeof(as), "%d:%d", CTLTEST_NOBODY,
		    (int)gr->gr_gid);
	abuser_start(prog, v == V_HALF ? "-p" : v == V_OTHER_UID ? "-U" :
	    NULL, v == V_OTHER_UID ? as : NULL);
	ck_assert_msg(abuser_line(line, sizeof(line), WAIT) &&
	    strcmp(line, "ready") == 0, "abuser: \"%s\"", line);

	for (i = 0; i < TRIES; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ctltest_actorctl(&srv, NULL, &o, "status", (char *)NULL);
		lat[i] = elapsed_ms(&t0);
		if (o.status != 0)
			fprintf(stderr, "actord's log:\n%s", ts_daemon_log(&d));
		ck_assert_msg(o.status == 0, "status %d of %d failed (%d): %s",
		    i + 1, TRIES, o.status, o.err);
		ck_assert_ptr_nonnull(strstr(o.out, "/w"));
		ctltest_out_free(&o);
	}
	ck_assert_int_eq(ctltest_counters(srv.sock, &c), 0);
	/*
	 * The last status connection's close may not have reached actord
	 * when it counts: look again (bounded) before judging the share.
	 */
	for (i = 0; v == V_OTHER_UID && c.clients > CONTROL_MAX_PER_UID + 1 &&
	    i < 100; i++) {
		ts_sleep_ms(10);
		ck_assert_int_eq(ctltest_counters(srv.sock, &c), 0);
	}
	ck_assert_int_eq(kill(abuser, SIGTERM), 0);
	ck_assert(abuser_line(line, sizeof(line), WAIT));
	qsort(lat, TRIES, sizeof(lat[0]), cmp_double);
	fprintf(stderr, "owner_served_under_abuse (%s): %d of %d actorctl "
	    "status succeeded beside %d abusive connections; latency p50 "
	    "%.1f ms, p99 %.1f ms, max %.1f ms; actord evicted %llu and "
	    "refused %llu busy, %llu clients now; abuser: %s\n",
	    variant_names[v], TRIES, TRIES, CONNS, lat[TRIES / 2],
	    lat[TRIES * 99 / 100], lat[TRIES - 1],
	    (unsigned long long)c.evicted, (unsigned long long)c.refused_busy,
	    (unsigned long long)c.clients, line);
	/* The abuser did press: actord had to close its connections. */
	ck_assert_uint_gt(c.evicted, 0);
	if (v == V_OTHER_UID)
		/* Another uid holds its share at most (and our stats). */
		ck_assert_uint_le(c.clients, CONTROL_MAX_PER_UID + 1);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("ctl_abuse");
	TCase *tc = tcase_create("abuse");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, owner_served_under_abuse, V_IDLE,
	    V_OTHER_UID + 1);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
