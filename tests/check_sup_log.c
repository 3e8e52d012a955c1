/*
 * check_sup_log.c: actord's log (supervisor/log.c) on a stderr that stops
 * taking lines: logging never blocks, what waits goes out in order, the
 * lines that did not fit are counted in a warning that follows them, what
 * waits at exit still goes out, and a reader that goes away makes later
 * lines vanish instead of failing.  Its time stamps are UTC computed by
 * hand, and the first line reads no time zone.
 * Each test runs forked (Check's default), so it may take over fd 2.
 */
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/log.h"
#include "tests/lib/tcheck.h"

#define LINES	3000		/* about 200 KB: more than pipe and queue */

static char	 got[1 << 20];
static size_t	 ngot;

/* stderr becomes a 4 KiB pipe nobody reads yet; the read end. */
static int
stall_stderr(void)
{
	int p[2];

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	(void)fcntl(p[0], F_SETPIPE_SZ, 4096);
	ck_assert_int_eq(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	close(p[1]);
	return p[0];
}

/* Read what the pipe holds, flushing the log, until nothing moves. */
static void
drain(int rfd)
{
	ssize_t r;
	int idle = 0;

	while (idle < 3) {
		log_flush();
		r = read(rfd, got + ngot, sizeof(got) - 1 - ngot);
		if (r > 0) {
			ngot += (size_t)r;
			idle = 0;
		} else {
			ck_assert(r == 0 || errno == EAGAIN);
			idle++;
		}
	}
	got[ngot] = '\0';
}

START_TEST(stalled_stderr_keeps_order_and_counts)
{
	unsigned long long dropped = 0;
	const char *p, *warn;
	int rfd = stall_stderr(), i, seen = 0, next = 0;

	log_init("t", 0);
	/* Would block for ever on the full pipe without the queue. */
	alarm(20);
	for (i = 0; i < LINES; i++)
		log_info("line %05d of the test", i);
	drain(rfd);
	log_info("after the drain");
	drain(rfd);
	alarm(0);
	/* Lines 0..seen-1 in order, then the warning, then the next line. */
	warn = strstr(got, "log: ");
	ck_assert_msg(warn != NULL, "no warning in %zu bytes", ngot);
	ck_assert_int_eq(sscanf(warn, "log: %llu lines dropped: the output "
	    "took no more", &dropped), 1);
	for (p = got; (p = strstr(p, "line ")) != NULL && p < warn; p++) {
		ck_assert_int_eq(sscanf(p, "line %05d", &i), 1);
		ck_assert_int_eq(i, next);
		next++;
		seen++;
	}
	ck_assert_int_gt(seen, 0);
	ck_assert_int_gt(dropped, 0);
	ck_assert_int_eq(seen + (int)dropped, LINES);
	ck_assert_ptr_nonnull(strstr(warn, "info: after the drain\n"));
	ck_assert_ptr_null(strstr(strstr(warn, "after the drain"), "line "));
	close(rfd);
}
END_TEST

START_TEST(reader_gone_loses_lines_not_actord)
{
	int rfd = stall_stderr(), i;

	signal(SIGPIPE, SIG_IGN);
	log_init("t", 0);
	alarm(20);
	for (i = 0; i < LINES; i++)
		log_info("line %05d of the test", i);
	close(rfd);			/* the collector dies */
	for (i = 0; i < LINES; i++)
		log_info("line %05d after the reader left", i);
	log_flush();
	log_drain(1000);		/* nothing to wait for: returns */
	alarm(0);
}
END_TEST

/*
 * Lines still waiting when actord exits go out if the reader comes back
 * within LOG_DRAIN_MS: the child logs 30 KB into a 4 KiB pipe and exits;
 * its reader starts 100 ms later and gets the last line.
 */
START_TEST(waiting_lines_go_out_at_exit)
{
	struct timespec ts = { 0, 100000000 };
	ssize_t r;
	pid_t pid;
	int p[2], i, st;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	(void)fcntl(p[0], F_SETPIPE_SZ, 4096);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (dup2(p[1], STDERR_FILENO) == -1)
			_exit(2);
		log_init("t", 0);
		for (i = 0; i < 500; i++)
			log_info("line %05d of the exit test", i);
		exit(0);
	}
	close(p[1]);
	nanosleep(&ts, NULL);
	while ((r = read(p[0], got + ngot, sizeof(got) - 1 - ngot)) > 0)
		ngot += (size_t)r;
	got[ngot] = '\0';
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_ptr_nonnull(strstr(got, "info: line 00499 of the exit test\n"));
	ck_assert_ptr_null(strstr(got, "dropped"));
}
END_TEST

START_TEST(regular_file_written_directly)
{
	char path[] = "/tmp/check-log-XXXXXX", buf[256];
	ssize_t r;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	log_init("t", 0);
	log_info("to a file");
	r = pread(fd, buf, sizeof(buf) - 1, 0);
	ck_assert_int_gt(r, 0);
	buf[r] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "t["));
	ck_assert_ptr_nonnull(strstr(buf, "info: to a file\n"));
	close(fd);
	unlink(path);
}
END_TEST

/* log_utc is gmtime_r, leap years and centuries too. */
START_TEST(utc_is_gmtime)
{
	static const time_t fixed[] = { 0, -1, -86401, 951782399, 951782400,
	    951868800, 4107542399LL, 4107542400LL, 1796186952, 253402300799LL };
	struct tm want, got1;
	uint64_t x = 88172645463325252ULL;
	time_t t;
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]) + 100000; i++) {
		if (i < sizeof(fixed) / sizeof(fixed[0]))
			t = fixed[i];
		else {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			t = (time_t)(x % 8000000000ULL) - 1000000000;
		}
		ck_assert_ptr_nonnull(gmtime_r(&t, &want));
		log_utc(t, &got1);
		ck_assert_msg(got1.tm_year == want.tm_year &&
		    got1.tm_mon == want.tm_mon &&
		    got1.tm_mday == want.tm_mday &&
		    got1.tm_hour == want.tm_hour &&
		    got1.tm_min == want.tm_min && got1.tm_sec == want.tm_sec,
		    "t=%lld: %d-%d-%d %d:%d:%d, gmtime %d-%d-%d %d:%d:%d",
		    (long long)t, got1.tm_year, got1.tm_mon, got1.tm_mday,
		    got1.tm_hour, got1.tm_min, got1.tm_sec, want.tm_year,
		    want.tm_mon, want.tm_mday, want.tm_hour, want.tm_min,
		    want.tm_sec);
	}
}
END_TEST

/*
 * The first line reads no time zone (actord logs before its first child
 * starts): TZ names a file watched for opens, in a process that never
 * read one (exec'd: a forked test inherits its parent's time zone).
 */
START_TEST(first_line_reads_no_time_zone)
{
	char dir[] = "/tmp/check-log-XXXXXX", tz[64], env[80], ev[4096];
	char *argv[] = { (char *)"/proc/self/exe", NULL };
	int ino, fd, st;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(tz, sizeof(tz), "%s/zone", dir);
	ck_assert_int_ge(fd = open(tz, O_WRONLY | O_CREAT, 0644), 0);
	close(fd);
	ck_assert_int_ge(ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), 0);
	ck_assert_int_ge(inotify_add_watch(ino, tz, IN_OPEN), 0);
	snprintf(env, sizeof(env), "TZ=:%s", tz);
	if ((pid = fork()) == 0) {
		char *envp[] = { env, (char *)"CHECK_LOG_ONE_LINE=1", NULL };

		fd = open("/dev/null", O_WRONLY);
		dup2(fd, STDERR_FILENO);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	ck_assert_msg(read(ino, ev, sizeof(ev)) == -1 && errno == EAGAIN,
	    "the time zone file was opened");
	close(ino);
	unlink(tz);
	rmdir(dir);
}
END_TEST

static Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("stalled");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, stalled_stderr_keeps_order_and_counts);
	tcase_add_test(tc, reader_gone_loses_lines_not_actord);
	tcase_add_test(tc, waiting_lines_go_out_at_exit);
	tcase_add_test(tc, regular_file_written_directly);
	tcase_add_test(tc, utc_is_gmtime);
	tcase_add_test(tc, first_line_reads_no_time_zone);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	/* first_line_reads_no_time_zone's child: one line, then exit. */
	if (getenv("CHECK_LOG_ONE_LINE") != NULL) {
		log_init("t", 0);
		log_info("one line");
		return 0;
	}
	return tcheck_run(log_suite());
}
