/*
 * check_sup_tree.c: the supervision core with real processes (function
 * children, forked by the core itself, running in the test process's
 * actord): strategies, restart types, clean exits, intensity at and past
 * its limit, escalation through a nested supervisor, boot failure, stop
 * and start order, shutdown rules, grandchildren, readiness, and the API.
 *
 * Children append "start /path" and "stop /path" to a record file, so the
 * order of events is read back from the file, never from timings.
 */
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT	10000		/* ms: a bound, never an expectation */

static void
setup(void)
{
	ts_record_open();
}

static void
teardown(void)
{
	ts_record_close();
}

/* Boot the tree and wait until every child runs. */
static struct actord *
boot(struct actord_spec *spec)
{
	struct actord *ad = ts_actord(spec);

	actord_boot(ad);
	ck_assert_msg(ts_wait_state(ad, "/", NS_RUNNING, WAIT),
	    "root not running: %s", ad->message);
	return ad;
}

/* The record file from the first occurrence of `from` on. */
static const char *
record_after(const char *from)
{
	const char *r = ts_record_read(), *p;

	p = strstr(r, from);
	return p != NULL ? p : "";
}

/* One ts_fn_run child of s per letter of names, named so, in order. */
static void
add_runs(struct sup_spec *s, const char *names)
{
	char name[2] = { 0, 0 };

	for (; *names != '\0'; names++) {
		name[0] = *names;
		ts_add_fn(s, name, ts_fn_run, NULL);
	}
}

static void
kill_and_wait_restart(struct actord *ad, const char *path)
{
	pid_t pid = ts_pid(ad, path);

	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_msg(ts_wait_new_pid(ad, path, pid, WAIT),
	    "%s not restarted", path);
}

START_TEST(one_for_one_restarts_only_the_dead)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	pid_t a, c;

	add_runs(&spec->root, "abc");
	ad = boot(spec);
	a = ts_pid(ad, "/a");
	c = ts_pid(ad, "/c");
	kill_and_wait_restart(ad, "/b");
	ck_assert_int_eq(ts_pid(ad, "/a"), a);
	ck_assert_int_eq(ts_pid(ad, "/c"), c);
	ck_assert_uint_eq(actord_find(ad, "/b")->restarts, 1);
	ck_assert_str_eq(actord_find(ad, "/b")->last_exit,
	    "killed by signal 9 (Killed)");
	ck_assert_int_eq(ts_record_count("start /b"), 2);
	ck_assert_int_eq(ts_record_count("start /a"), 1);
	actord_free(ad);
}
END_TEST

START_TEST(one_for_all_stops_in_reverse_starts_in_order)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	pid_t a;

	spec->root.strategy = STRATEGY_ONE_FOR_ALL;
	add_runs(&spec->root, "abc");
	ts_add_fn(&spec->root, "d", ts_fn_slowstop, NULL);
	ad = boot(spec);
	a = ts_pid(ad, "/a");
	ck_assert_str_eq(ts_record_read(),
	    "start /a\nstart /b\nstart /c\nstart /d\n");
	ck_assert_int_eq(kill(ts_pid(ad, "/b"), SIGKILL), 0);
	ck_assert(ts_wait_new_pid(ad, "/a", a, WAIT));
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert(ts_wait_state(ad, "/d", NS_RUNNING, WAIT));
	ck_assert_str_eq(record_after("stop"),
	    "stop /d\nstop /c\nstop /a\n"
	    "start /a\nstart /b\nstart /c\nstart /d\n");
	/* One decision, however many siblings it cycled. */
	ck_assert_uint_eq(sup_decisions_in_period(ad->root), 1);
	actord_free(ad);
}
END_TEST

START_TEST(rest_for_one_restarts_the_rest)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	pid_t a, c;

	spec->root.strategy = STRATEGY_REST_FOR_ONE;
	add_runs(&spec->root, "abcd");
	ad = boot(spec);
	a = ts_pid(ad, "/a");
	c = ts_pid(ad, "/c");
	ck_assert_int_eq(kill(ts_pid(ad, "/b"), SIGKILL), 0);
	ck_assert(ts_wait_new_pid(ad, "/c", c, WAIT));
	ck_assert(ts_wait_state(ad, "/d", NS_RUNNING, WAIT));
	ck_assert_int_eq(ts_pid(ad, "/a"), a);
	ck_assert_str_eq(record_after("stop"),
	    "stop /d\nstop /c\nstart /b\nstart /c\nstart /d\n");
	actord_free(ad);
}
END_TEST

START_TEST(temporary_sibling_removed_under_one_for_all)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	pid_t a;

	spec->root.strategy = STRATEGY_ONE_FOR_ALL;
	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	ts_add_fn(&spec->root, "t", ts_fn_run, NULL)->restart =
	    RESTART_TEMPORARY;
	ts_add_fn(&spec->root, "c", ts_fn_run, NULL);
	ad = boot(spec);
	a = ts_pid(ad, "/a");
	ck_assert_int_eq(kill(ts_pid(ad, "/c"), SIGKILL), 0);
	ck_assert(ts_wait_new_pid(ad, "/a", a, WAIT));
	ck_assert(ts_wait_state(ad, "/c", NS_RUNNING, WAIT));
	ck_assert_ptr_null(actord_find(ad, "/t"));
	ck_assert_int_eq(ts_record_count("stop /t"), 1);
	ck_assert_int_eq(ts_record_count("start /t"), 1);
	actord_free(ad);
}
END_TEST

/* Issue 3: under one_for_all, a sibling stopped by hand starts again. */
START_TEST(hand_stopped_sibling_restarts_with_its_set)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	pid_t a;

	spec->root.strategy = STRATEGY_ONE_FOR_ALL;
	add_runs(&spec->root, "abc");
	ad = boot(spec);
	ck_assert_int_eq(actord_stop_node(ad, "/b", NULL, NULL), 0);
	ck_assert(ts_wait_state(ad, "/b", NS_STOPPED, WAIT));
	ck_assert(actord_find(ad, "/b")->manual_stopped);
	a = ts_pid(ad, "/a");
	ck_assert_int_eq(kill(ts_pid(ad, "/c"), SIGKILL), 0);
	ck_assert(ts_wait_new_pid(ad, "/a", a, WAIT));
	ck_assert(ts_wait_state(ad, "/c", NS_RUNNING, WAIT));
	ck_assert_int_eq(ts_state(ad, "/b"), NS_RUNNING);
	ck_assert(!actord_find(ad, "/b")->manual_stopped);
	ck_assert_int_eq(ts_record_count("start /b"), 2);
	actord_free(ad);
}
END_TEST

static bool
count_pred(struct actord *ad, void *arg)
{
	const char **want = arg;

	(void)ad;
	return ts_record_count(want[0]) >= atoi(want[1]);
}

START_TEST(clean_exit_rules)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;
	const char *want[2];
	static int ok3[] = { 3 };

	/* transient exit 0: clean, stays down. */
	ts_add_fn(&spec->root, "t0", ts_fn_exit, (void *)0)->restart =
	    RESTART_TRANSIENT;
	/* transient exit 3 listed in success_exit: clean. */
	c = ts_add_fn(&spec->root, "t3", ts_fn_exit, (void *)3);
	c->restart = RESTART_TRANSIENT;
	c->success_exit = malloc(sizeof(int));
	c->success_exit[0] = ok3[0];
	c->nsuccess_exit = 1;
	/* transient killed by an outside SIGTERM: clean. */
	ts_add_fn(&spec->root, "tterm", ts_fn_run, NULL)->restart =
	    RESTART_TRANSIENT;
	/* transient exit 2: abnormal, restarted. */
	ts_add_fn(&spec->root, "t2", ts_fn_crash_later,
	    (void *)(intptr_t)300)->restart = RESTART_TRANSIENT;
	/* permanent exit 0: restarted anyway. */
	ts_add_fn(&spec->root, "p0", ts_fn_exit, (void *)0)->restart =
	    RESTART_PERMANENT;
	/* temporary: removed when it exits, even abnormally. */
	ts_add_fn(&spec->root, "tmp", ts_fn_exit, (void *)1)->restart =
	    RESTART_TEMPORARY;
	spec->root.intensity = 100;
	spec->root.backoff_min = 20;
	spec->root.backoff_max = 40;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/tterm", NS_RUNNING, WAIT));
	ck_assert_int_eq(kill(ts_pid(ad, "/tterm"), SIGTERM), 0);
	ck_assert(ts_wait_state(ad, "/tterm", NS_STOPPED, WAIT));
	want[0] = "start /t2";
	want[1] = "2";
	ck_assert(ts_run_until(ad, count_pred, want, WAIT));
	want[0] = "start /p0";
	ck_assert(ts_run_until(ad, count_pred, want, WAIT));
	ck_assert_int_eq(ts_record_count("start /t0"), 1);
	ck_assert_int_eq(ts_record_count("start /t3"), 1);
	ck_assert_int_eq(ts_record_count("start /tterm"), 1);
	ck_assert_int_eq(ts_record_count("start /tmp"), 1);
	ck_assert_int_eq(ts_state(ad, "/t0"), NS_STOPPED);
	ck_assert_int_eq(ts_state(ad, "/t3"), NS_STOPPED);
	ck_assert_str_eq(actord_find(ad, "/t3")->last_exit, "exited 3");
	ck_assert_int_eq(ts_state(ad, "/tterm"), NS_STOPPED);
	ck_assert_ptr_null(actord_find(ad, "/tmp"));
	actord_free(ad);
}
END_TEST

/*
 * Backoff starts over once a child stayed up min_uptime.  The spec is
 * changed between the phases, so no timing decides the outcome.
 */
START_TEST(backoff_starts_over_after_min_uptime)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	struct node *w;
	int i;

	spec->root.intensity = 100;
	spec->root.backoff_min = 5;
	spec->root.backoff_max = 40;
	spec->root.min_uptime = 600000;	/* never, for now */
	ts_add_fn(&spec->root, "w", ts_fn_run, NULL);
	ad = boot(spec);
	w = actord_find(ad, "/w");
	for (i = 0; i < 3; i++)
		kill_and_wait_restart(ad, "/w");
	ck_assert_uint_eq(w->backoff_attempt, 3);
	ad->spec->root.min_uptime = 50;
	ts_run_for(ad, 100);		/* up longer than min_uptime */
	kill_and_wait_restart(ad, "/w");
	ck_assert_uint_eq(w->backoff_attempt, 1);
	actord_free(ad);
}
END_TEST

START_TEST(intensity_exactly_at_limit)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	int i;

	spec->root.intensity = 3;
	ts_add_fn(&spec->root, "w", ts_fn_run, NULL);
	ad = boot(spec);
	for (i = 0; i < 3; i++)
		kill_and_wait_restart(ad, "/w");
	ck_assert(!ad->done);
	ck_assert_int_eq(ts_state(ad, "/"), NS_RUNNING);
	ck_assert_uint_eq(sup_decisions_in_period(ad->root), 3);
	ck_assert_uint_eq(actord_find(ad, "/w")->restarts, 3);
	actord_free(ad);
}
END_TEST

START_TEST(intensity_one_past_escalates_with_cause)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	int i;

	spec->root.intensity = 3;
	add_runs(&spec->root, "aw");
	ad = boot(spec);
	for (i = 0; i < 3; i++)
		kill_and_wait_restart(ad, "/w");
	ck_assert_int_eq(kill(ts_pid(ad, "/w"), SIGKILL), 0);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert_int_eq(ad->status, ACTORD_EXIT_GAVEUP);
	ck_assert_msg(strstr(ad->message,
	    "/w killed by signal 9 (Killed); more than 3 restarts in 10 s")
	    != NULL, "message: %s", ad->message);
	ck_assert_int_eq(ts_state(ad, "/"), NS_FAILED);
	ck_assert_msg(strstr(ad->root->cause, "/w killed by signal 9") != NULL,
	    "cause: %s", ad->root->cause);
	/* It stopped its children before failing. */
	ck_assert_int_eq(ts_record_count("stop /a"), 1);
	ck_assert_int_eq(ts_pid(ad, "/a"), 0);
	actord_free(ad);
}
END_TEST

START_TEST(escalation_through_nested_supervisor)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *mid;
	struct actord *ad;

	spec->root.intensity = 1;
	ts_add_fn(&spec->root, "first", ts_fn_run, NULL);
	mid = ts_add_sup(&spec->root, "mid", STRATEGY_ONE_FOR_ONE);
	mid->intensity = 1;
	ts_add_fn(mid, "w", ts_fn_crash_later, (void *)(intptr_t)5);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert_int_eq(ad->status, ACTORD_EXIT_GAVEUP);
	ck_assert_msg(strstr(ad->message, "/mid gave up: /mid/w exited 1")
	    != NULL, "message: %s", ad->message);
	/* mid was restarted once by the root, then the root gave up. */
	ck_assert_uint_eq(actord_find(ad, "/mid")->restarts, 1);
	ck_assert_int_eq(ts_record_count("start /mid/w"), 4);
	ck_assert_int_eq(ts_record_count("stop /first"), 1);
	actord_free(ad);
}
END_TEST

START_TEST(boot_failure_stops_started_skips_rest)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;

	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	ts_add_exec(&spec->root, "b", "/nonexistent/prog", NULL);
	ts_add_fn(&spec->root, "c", ts_fn_run, NULL);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert_int_eq(ad->status, ACTORD_EXIT_START);
	ck_assert_str_eq(ad->message, "failed to start: /b: exec "
	    "/nonexistent/prog: No such file or directory");
	ck_assert_str_eq(ts_record_read(), "start /a\nstop /a\n");
	actord_free(ad);
}
END_TEST

START_TEST(shutdown_in_reverse_order)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *s;
	struct actord *ad;

	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	s = ts_add_sup(&spec->root, "s", STRATEGY_ONE_FOR_ALL);
	ts_add_fn(s, "x", ts_fn_run, NULL);
	ts_add_fn(s, "y", ts_fn_slowstop, NULL);
	ts_add_fn(&spec->root, "c", ts_fn_slowstop, NULL);
	ad = boot(spec);
	ck_assert_str_eq(ts_record_read(),
	    "start /a\nstart /s/x\nstart /s/y\nstart /c\n");
	actord_shutdown(ad);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert_int_eq(ad->status, ACTORD_EXIT_OK);
	ck_assert_str_eq(record_after("stop"),
	    "stop /c\nstop /s/y\nstop /s/x\nstop /a\n");
	actord_free(ad);
}
END_TEST

START_TEST(sigterm_ignored_then_killed)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	pid_t pid;

	ts_add_fn(&spec->root, "stubborn", ts_fn_ignterm, NULL)->shutdown = 50;
	ad = boot(spec);
	pid = ts_pid(ad, "/stubborn");
	actord_shutdown(ad);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert_int_eq(ad->status, ACTORD_EXIT_OK);
	ck_assert(!ts_alive(pid));
	ck_assert_str_eq(actord_find(ad, "/stubborn")->last_exit,
	    "killed by signal 9 (Killed)");
	actord_free(ad);
}
END_TEST

START_TEST(brutal_kill_sends_no_sigterm)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;

	ts_add_fn(&spec->root, "b", ts_fn_run, NULL)->shutdown =
	    SHUTDOWN_BRUTAL_KILL;
	ad = boot(spec);
	actord_shutdown(ad);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert_int_eq(ts_record_count("stop /b"), 0);
	ck_assert_str_eq(actord_find(ad, "/b")->last_exit,
	    "killed by signal 9 (Killed)");
	actord_free(ad);
}
END_TEST

START_TEST(shutdown_timeout_bounds_infinity)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	pid_t pid;

	spec->shutdown_timeout = 100;
	ts_add_fn(&spec->root, "forever", ts_fn_ignterm, NULL)->shutdown =
	    SHUTDOWN_INFINITY;
	ad = boot(spec);
	pid = ts_pid(ad, "/forever");
	actord_shutdown(ad);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert(!ts_alive(pid));
	actord_free(ad);
}
END_TEST

static bool
gc_dead(struct actord *ad, void *arg)
{
	(void)ad;
	return !ts_alive(*(pid_t *)arg);
}

START_TEST(no_grandchild_survives)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	const char *r;
	pid_t gc = 0, gc2 = 0;

	ts_add_fn(&spec->root, "g", ts_fn_grandchild, NULL);
	ad = boot(spec);
	/* Wait for the "gc PID /g" line. */
	while (gc == 0) {
		ts_run_for(ad, 5);
		r = strstr(ts_record_read(), "gc ");
		if (r != NULL)
			gc = atoi(r + 3);
	}
	ck_assert(ts_alive(gc));
	kill_and_wait_restart(ad, "/g");
	ck_assert_msg(ts_run_until(ad, gc_dead, &gc, WAIT),
	    "grandchild %d survived its parent", (int)gc);
	/* And on shutdown, the new grandchild goes too. */
	while (gc2 == 0) {
		ts_run_for(ad, 5);
		r = strstr(ts_record_read(), "gc ");
		if (r != NULL && (r = strstr(r + 3, "gc ")) != NULL)
			gc2 = atoi(r + 3);
	}
	actord_shutdown(ad);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert(ts_run_until(ad, gc_dead, &gc2, WAIT));
	actord_free(ad);
}
END_TEST

START_TEST(ready_fd_and_start_timeout)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	c = ts_add_fn(&spec->root, "fd", ts_fn_fdready, NULL);
	c->ready = READY_FD;
	/* actor: READY=1 on ACTORD_NOTIFY_SOCKET, as libactor sends it. */
	c = ts_add_fn(&spec->root, "actor", ts_fn_fdready, NULL);
	c->ready = READY_ACTOR;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_int_eq(ts_state(ad, "/fd"), NS_STARTING);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert_int_eq(ts_state(ad, "/fd"), NS_RUNNING);
	ck_assert_int_eq(ts_state(ad, "/actor"), NS_RUNNING);
	/* ready = actor implies a mailbox. */
	ck_assert_int_eq(actord_find(ad, "/actor")->mbox, 0);
	actord_free(ad);

	spec = ts_spec();
	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	c = ts_add_fn(&spec->root, "mute", ts_fn_mute, NULL);
	c->ready = READY_FD;
	c->start_timeout = 50;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert_int_eq(ad->status, ACTORD_EXIT_START);
	ck_assert_str_eq(ad->message,
	    "failed to start: /mute: not ready within 50 ms");
	ck_assert_int_eq(ts_pid(ad, "/mute"), 0);
	actord_free(ad);
}
END_TEST

/* What the liar and the test share (MAP_SHARED, made before the fork). */
struct liar_page {
	volatile pid_t	 target;	/* the pid it says is ready */
	volatile int	 tries;		/* READY=1 sent as itself since */
	volatile int	 forged;	/* 0, 1 sent naming target, -errno */
};
static struct liar_page *liar;

/* READY=1 to the socket name with credentials that name pid. */
static int
send_as(const char *name, pid_t pid)
{
	union {
		char		 buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr	 align;
	} u;
	struct ucred cr = { pid, getuid(), getgid() };
	struct sockaddr_un sun;
	struct cmsghdr *cm;
	struct msghdr msg;
	struct iovec iov = { (void *)"READY=1", 7 };
	size_t len = strlen(name);
	int fd, rc, e;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, name, len);
	sun.sun_path[0] = '\0';		/* "@...": abstract */
	memset(&msg, 0, sizeof(msg));
	memset(&u, 0, sizeof(u));
	msg.msg_name = &sun;
	msg.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    len);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof(cr));
	memcpy(CMSG_DATA(cm), &cr, sizeof(cr));
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -errno;
	rc = sendmsg(fd, &msg, 0) == 7 ? 1 : -errno;
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

/*
 * Ready itself, then says its sibling is: as itself, and with
 * credentials naming the sibling's pid, which only CAP_SYS_ADMIN may
 * (dropped first, as root: a worker with it could as well ptrace actord).
 */
static int
fn_liar(void *arg)
{
	const char *name = getenv("ACTORD_NOTIFY_SOCKET");
	struct timespec ts = { 0, 2 * 1000000 };

	(void)arg;
	ts_ready();
	if (name == NULL || (geteuid() == 0 && (setgroups(0, NULL) == -1 ||
	    setresgid(65534, 65534, 65534) == -1 ||
	    setresuid(65534, 65534, 65534) == -1)))
		_exit(3);
	for (;;) {
		if (liar->target > 0) {
			(void)ts_sd_send(name, "READY=1");
			if (liar->forged == 0)
				liar->forged = send_as(name, liar->target);
			liar->tries++;
		}
		nanosleep(&ts, NULL);
	}
}

static bool
liar_done(struct actord *ad, void *arg)
{
	(void)arg;
	if (liar->target == 0 && ts_state(ad, "/victim") == NS_STARTING)
		liar->target = ts_pid(ad, "/victim");
	return liar->tries >= 50 && liar->forged != 0;
}

/*
 * The readiness socket (ready = "actor", and "sd_notify") knows a child
 * by the pid in its credentials: a READY=1 from one child, as itself or
 * naming another's pid, makes no other child ready.
 */
START_TEST(no_child_declares_another_ready)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	liar = mmap(NULL, sizeof(*liar), PROT_READ | PROT_WRITE, MAP_SHARED |
	    MAP_ANONYMOUS, -1, 0);
	ck_assert(liar != MAP_FAILED);
	c = ts_add_fn(&spec->root, "liar", fn_liar, NULL);
	c->ready = READY_ACTOR;
	c = ts_add_fn(&spec->root, "victim", ts_fn_mute, NULL);
	c->ready = READY_ACTOR;
	c->start_timeout = 3 * WAIT;	/* the test ends before */
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/liar", NS_RUNNING, WAIT));
	ck_assert_msg(ts_run_until(ad, liar_done, NULL, WAIT),
	    "the liar sent %d, forged %d", liar->tries, liar->forged);
	ck_assert_int_eq(liar->forged, -EPERM);
	/* What the liar sent last is read before this turn ends. */
	ts_run_for(ad, 50);
	ck_assert_int_eq(ts_state(ad, "/victim"), NS_STARTING);
	ck_assert_int_eq(ts_state(ad, "/liar"), NS_RUNNING);
	actord_free(ad);
	munmap(liar, sizeof(*liar));
}
END_TEST

static bool
starts_pred(struct actord *ad, void *arg)
{
	(void)ad;
	return ts_record_count("start /f") >= (int)(intptr_t)arg;
}

START_TEST(stopped_by_hand_in_restart_loop_stays_stopped)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	int n;

	spec->root.intensity = 1000;
	spec->root.backoff_min = 20;
	spec->root.backoff_max = 40;
	ts_add_fn(&spec->root, "f", ts_fn_crash_later, (void *)(intptr_t)1);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_run_until(ad, starts_pred, (void *)3, WAIT));
	ck_assert_int_eq(actord_stop_node(ad, "/f", NULL, NULL), 0);
	ck_assert(ts_wait_state(ad, "/f", NS_STOPPED, WAIT));
	n = ts_record_count("start /f");
	ts_run_for(ad, 150);	/* several backoffs: nothing may happen */
	ck_assert_int_eq(ts_record_count("start /f"), n);
	ck_assert_int_eq(ts_state(ad, "/f"), NS_STOPPED);
	ck_assert(actord_find(ad, "/f")->manual_stopped);
	actord_free(ad);
}
END_TEST

struct done_rec {
	int	 calls;
	int	 error;
};

static void
on_done(void *arg, int error, const char *msg)
{
	struct done_rec *d = arg;

	(void)msg;
	d->calls++;
	d->error = error;
}

static bool
done_called(struct actord *ad, void *arg)
{
	(void)ad;
	return ((struct done_rec *)arg)->calls > 0;
}

START_TEST(api_restart_stop_start_add_remove)
{
	struct actord_spec *spec = ts_spec();
	struct done_rec d = { 0, -1 };
	struct actord *ad;
	char path[64];
	pid_t pid;

	ts_add_fn(&spec->root, "w", ts_fn_run, NULL);
	ts_add_fn(&spec->root, "g", ts_fn_run, NULL)->instances = 2;
	ad = boot(spec);
	ck_assert_int_eq(ts_state(ad, "/g/1"), NS_RUNNING);
	ck_assert_int_eq(actord_find(ad, "/g")->kind, NODE_GROUP);

	pid = ts_pid(ad, "/w");
	ck_assert_int_eq(actord_restart_node(ad, "/w", on_done, &d), 0);
	ck_assert(ts_run_until(ad, done_called, &d, WAIT));
	ck_assert_int_eq(d.error, 0);
	ck_assert_int_eq(ts_state(ad, "/w"), NS_RUNNING);
	ck_assert_int_ne(ts_pid(ad, "/w"), pid);
	/* A manual restart never counts toward intensity. */
	ck_assert_uint_eq(sup_decisions_in_period(ad->root), 0);

	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(actord_stop_node(ad, "/w", on_done, &d), 0);
	ck_assert(ts_run_until(ad, done_called, &d, WAIT));
	ck_assert_int_eq(ts_state(ad, "/w"), NS_STOPPED);
	ck_assert_int_eq(actord_stop_node(ad, "/nope", NULL, NULL), ENOENT);

	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(actord_start_node(ad, "/w", on_done, &d), 0);
	ck_assert(ts_run_until(ad, done_called, &d, WAIT));
	ck_assert_int_eq(ts_state(ad, "/w"), NS_RUNNING);
	ck_assert_int_eq(actord_start_node(ad, "/w", NULL, NULL), EALREADY);
	/* Nor do a stop and a start by hand. */
	ck_assert_uint_eq(sup_decisions_in_period(ad->root), 0);
	ck_assert_uint_eq(actord_find(ad, "/w")->restarts, 0);

	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(actord_add_instance(ad, "/g", on_done, &d, path,
	    sizeof(path)), 0);
	ck_assert_str_eq(path, "/g/2");
	ck_assert(ts_run_until(ad, done_called, &d, WAIT));
	ck_assert_int_eq(ts_state(ad, "/g/2"), NS_RUNNING);

	ck_assert_int_eq(actord_remove_node(ad, "/g/2"), EBUSY);
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(actord_stop_node(ad, "/g/2", on_done, &d), 0);
	ck_assert(ts_run_until(ad, done_called, &d, WAIT));
	ck_assert_int_eq(actord_remove_node(ad, "/g/2"), 0);
	ck_assert_ptr_null(actord_find(ad, "/g/2"));

	ck_assert_int_eq(actord_kill_node(ad, "/g", SIGKILL, NULL), 0);
	ck_assert(ts_wait_state(ad, "/g/0", NS_RUNNING, WAIT));
	actord_free(ad);
}
END_TEST

static void
count_nodes(const struct node_status *st, void *arg)
{
	char *buf = arg;
	char line[128];

	snprintf(line, sizeof(line), "%u %s %s %s\n", st->depth, st->path,
	    node_kind_name(st->kind), node_state_name(st->state));
	strcat(buf, line);
}

START_TEST(walk_reports_the_tree)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *s;
	struct actord *ad;
	static char buf[1024];

	s = ts_add_sup(&spec->root, "s", STRATEGY_REST_FOR_ONE);
	ts_add_fn(s, "x", ts_fn_run, NULL);
	ts_add_fn(&spec->root, "g", ts_fn_run, NULL)->instances = 1;
	ad = boot(spec);
	buf[0] = '\0';
	actord_walk(ad, count_nodes, buf);
	ck_assert_str_eq(buf, "0 / supervisor running\n"
	    "1 /s supervisor running\n2 /s/x worker running\n"
	    "1 /g group running\n2 /g/0 worker running\n");
	actord_free(ad);
}
END_TEST

static bool
terms_pred(struct actord *ad, void *arg)
{
	(void)ad;
	(void)arg;
	return ts_record_count("start /g/0") + ts_record_count("start /g/1") +
	    ts_record_count("start /g/2") >= 3 &&
	    strstr(ts_record_read(), "term") != NULL &&
	    ts_record_count("term /g/0") + ts_record_count("term /g/1") +
	    ts_record_count("term /g/2") == 3;
}

static void
on_term_record(int sig)
{
	(void)sig;
	ts_record("term");
}

static int
fn_note_term(void *arg)
{
	(void)arg;
	signal(SIGTERM, on_term_record);
	ts_record("start");
	ts_ready();
	for (;;)
		pause();
	return 0;
}

START_TEST(group_stops_in_parallel)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;
	struct node *g;
	size_t i;

	c = ts_add_fn(&spec->root, "g", fn_note_term, NULL);
	c->instances = 3;
	c->shutdown = 3000;
	spec->shutdown_timeout = 4000;
	ad = boot(spec);
	actord_shutdown(ad);
	/* One at a time, the second SIGTERM would wait 3 s for the first. */
	ck_assert(ts_run_until(ad, terms_pred, NULL, 2000));
	/* Under one timer: the group's, none of the instances' own. */
	g = actord_find(ad, "/g");
	ck_assert(timer_pending(&g->op_timer));
	for (i = 0; i < g->nkids; i++) {
		ck_assert_int_eq(g->kids[i]->state, NS_STOPPING);
		ck_assert_msg(!timer_pending(&g->kids[i]->timer),
		    "%s has its own kill timer", g->kids[i]->path);
	}
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert(!timer_pending(&g->op_timer));
	actord_free(ad);
}
END_TEST

/* A mailbox worker: the arena it inherited names it, at its incarnation. */
static int
fn_arena_check(void *arg)
{
	struct shm_arena *a;
	char err[256], path[SHM_PATH_MAX];
	const char *idx = getenv("ACTORD_INDEX");
	const char *inc = getenv("ACTORD_INCARNATION");

	(void)arg;
	if (idx == NULL || inc == NULL || shm_attach_env(&a, err,
	    sizeof(err)) < 0) {
		ts_record("arena missing");
		ts_ready();
	} else if (shm_actor_path(a, (uint32_t)atoi(idx), path,
	    sizeof(path)) < 0 || strcmp(path, getenv("ACTORD_PATH")) != 0 ||
	    shm_actor_incarnation(a, (uint32_t)atoi(idx)) !=
	    (uint32_t)atoi(inc)) {
		ts_record("arena wrong");
		ts_ready();
	} else {
		ts_record("arena ok");
		ts_ready();
	}
	for (;;)
		pause();
	return 0;
}

START_TEST(arena_table_follows_the_workers)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;
	struct node *n;
	uint32_t inc;

	ts_add_fn(&spec->root, "plain", ts_fn_run, NULL);
	c = ts_add_fn(&spec->root, "mb", fn_arena_check, NULL);
	c->has_mailbox = true;
	ad = boot(spec);
	ck_assert_ptr_nonnull(ad->arena);
	n = actord_find(ad, "/mb");
	ck_assert_int_eq(n->mbox, 0);
	ck_assert_int_eq(actord_find(ad, "/plain")->mbox, -1);
	ck_assert_int_eq(shm_actor_pid(ad->arena, 0), n->pid);
	ck_assert_int_eq(shm_actor_state(ad->arena, 0), SHM_ACTOR_UP);
	inc = shm_actor_incarnation(ad->arena, 0);
	ck_assert_uint_eq(inc, n->incarnation);
	kill_and_wait_restart(ad, "/mb");
	ck_assert_uint_eq(shm_actor_incarnation(ad->arena, 0), inc + 1);
	ck_assert_int_eq(shm_actor_pid(ad->arena, 0), n->pid);
	ck_assert_int_eq(ts_record_count("arena ok /mb"), 2);
	actord_free(ad);
}
END_TEST

/* The tree of the reload test, as a spec. */
static struct actord_spec *
reload_spec(bool second)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *s;
	struct child_spec *c;

	ts_add_fn(&spec->root, "same", ts_fn_run, NULL);
	c = ts_add_fn(&spec->root, "changed", ts_fn_run, NULL);
	if (second)
		c->shutdown = 1234;
	if (!second)
		ts_add_fn(&spec->root, "gone", ts_fn_run, NULL);
	s = ts_add_sup(&spec->root, "sub", STRATEGY_ONE_FOR_ONE);
	ts_add_fn(s, "x", ts_fn_run, NULL);
	c = ts_add_fn(s, "y", ts_fn_run, NULL);
	if (second) {
		c->restart = RESTART_TRANSIENT;
		s->intensity = 7;
		ts_add_fn(&spec->root, "new", ts_fn_run, NULL);
	}
	ts_add_fn(&spec->root, "g", ts_fn_run, NULL)->instances = second ? 3 : 2;
	return spec;
}

/*
 * /gone's process is dead and its node removed.  Its death alone is not
 * enough: ts_alive says a zombie is dead before actord has reaped it, and
 * the node goes only once actord has.
 */
static bool
gone_removed(struct actord *ad, void *arg)
{
	return !ts_alive(*(pid_t *)arg) && actord_find(ad, "/gone") == NULL;
}

START_TEST(reload_in_process)
{
	struct actord *ad;
	struct actord_spec *next;
	char err[256];
	pid_t same, changed, gone, x, y, g0;

	ad = boot(reload_spec(false));
	g0 = ts_pid(ad, "/g/0");
	same = ts_pid(ad, "/same");
	changed = ts_pid(ad, "/changed");
	gone = ts_pid(ad, "/gone");
	x = ts_pid(ad, "/sub/x");
	y = ts_pid(ad, "/sub/y");
	next = reload_spec(true);
	ck_assert_int_eq(actord_reload(ad, next, err, sizeof(err)), 0);
	ck_assert(ts_wait_new_pid(ad, "/changed", changed, WAIT));
	ck_assert(ts_wait_new_pid(ad, "/sub/y", y, WAIT));
	ck_assert(ts_wait_state(ad, "/new", NS_RUNNING, WAIT));
	ck_assert(ts_run_until(ad, gone_removed, &gone, WAIT));
	ck_assert_int_eq(ts_pid(ad, "/same"), same);
	ck_assert_int_eq(ts_pid(ad, "/sub/x"), x);
	ck_assert_int_eq(actord_find(ad, "/changed")->cs->shutdown, 1234);
	ck_assert_uint_eq(actord_find(ad, "/sub")->ss->intensity, 7);
	/* Start order follows the new file. */
	ck_assert_ptr_eq(ad->root->kids[3], actord_find(ad, "/new"));
	/* A group with another instance count is rebuilt in its place. */
	ck_assert(ts_wait_state(ad, "/g/2", NS_RUNNING, WAIT));
	ck_assert(ts_wait_state(ad, "/g/0", NS_RUNNING, WAIT));
	ck_assert_int_ne(ts_pid(ad, "/g/0"), g0);
	ck_assert(!ts_alive(g0));
	ck_assert_uint_eq(ad->root->nkids, 5);
	ck_assert_ptr_eq(ad->root->kids[4], actord_find(ad, "/g"));
	/* Reload never counts as restarts. */
	ck_assert_uint_eq(sup_decisions_in_period(ad->root), 0);
	actord_free(ad);
}
END_TEST

/*
 * A supervisor that gives up while it is still starting (an early child
 * keeps dying while a later one is not ready yet) fails its start: its
 * parent's boot does not wait for ever.
 */
START_TEST(giving_up_during_boot_fails_the_start)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *mid;
	struct child_spec *c;
	struct actord *ad;

	mid = ts_add_sup(&spec->root, "mid", STRATEGY_ONE_FOR_ONE);
	mid->intensity = 2;
	ts_add_fn(mid, "crashy", ts_fn_crash_later, (void *)(intptr_t)1);
	c = ts_add_fn(mid, "slow", ts_fn_mute, NULL);
	c->start_timeout = 20000;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert_int_eq(ad->status, ACTORD_EXIT_START);
	ck_assert_msg(strstr(ad->message, "failed to start: /mid: gave up: "
	    "/mid/crashy exited 1; more than 2 restarts") != NULL,
	    "message: %s", ad->message);
	ck_assert_int_eq(ts_pid(ad, "/mid/slow"), 0);
	actord_free(ad);
}
END_TEST

static int
fn_print(void *arg)
{
	int i;

	for (i = 0; i < (int)(intptr_t)arg; i++)
		printf("line %d\n", i);
	fflush(stdout);
	ts_record("start");
	ts_ready();
	for (;;)
		pause();
	return 0;
}

static bool
printed(struct actord *ad, void *arg)
{
	struct node *n = actord_find(ad, "/p");

	return n->tail != NULL && memmem(n->tail, n->tail_len, arg,
	    strlen(arg)) != NULL;
}

START_TEST(output_tail_for_actorctl_log)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	struct node *n;
	char buf[8192], want[64];
	uint64_t next;
	size_t k;
	pid_t pid;

	ts_add_fn(&spec->root, "p", fn_print, (void *)(intptr_t)1000);
	ad = boot(spec);
	n = actord_find(ad, "/p");
	pid = n->pid;
	snprintf(want, sizeof(want), "/p[%d]: line 999\n", (int)pid);
	/* 1000 lines of about 16 bytes: more than the 4 kB kept. */
	ck_assert(ts_run_until(ad, printed, want, WAIT));
	k = output_read(n, 0, buf, sizeof(buf) - 1, &next);
	buf[k] = '\0';
	ck_assert_uint_le(k, 4096);
	ck_assert_uint_eq(next, n->tail_total);
	ck_assert_uint_gt(next, 10000);
	ck_assert_msg(k >= strlen(want) &&
	    strcmp(buf + k - strlen(want), want) == 0, "tail: %s", buf);
	/* From the end, nothing new; the last 10 bytes on request. */
	ck_assert_uint_eq(output_read(n, next, buf, sizeof(buf), &next), 0);
	ck_assert_uint_eq(output_read(n, UINT64_MAX, buf, 10, &next), 10);
	ck_assert_uint_eq(next, n->tail_total);
	actord_free(ad);
}
END_TEST

/* A restart whose start fails counts, and is retried as another decision. */
START_TEST(failed_restarts_count_and_escalate)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;
	char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/ts-cwd-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	spec->root.intensity = 3;
	c = ts_add_exec(&spec->root, "w", ts_progs("tworker"), "run", NULL);
	c->cwd = strdup(dir);
	ad = boot(spec);
	ck_assert_int_eq(rmdir(dir), 0);
	ck_assert_int_eq(kill(ts_pid(ad, "/w"), SIGKILL), 0);
	ck_assert(ts_wait_done(ad, WAIT));
	ck_assert_int_eq(ad->status, ACTORD_EXIT_GAVEUP);
	ck_assert_msg(strstr(ad->message, "/w failed to start: chdir: No such "
	    "file or directory; more than 3 restarts") != NULL, "message: %s",
	    ad->message);
	/* The death, then two failed starts counted; the third went over. */
	ck_assert_uint_eq(actord_find(ad, "/w")->restarts, 3);
	actord_free(ad);
}
END_TEST

/* Lines of the record file that begin with prefix. */
static int
record_count_prefix(const char *prefix)
{
	const char *p = ts_record_read(), *q;
	int n = 0;

	for (q = p; (q = strstr(q, prefix)) != NULL; q++)
		if (q == p || q[-1] == '\n')
			n++;
	return n;
}

/*
 * A child that waits for another: the one named first (arg, "first
 * then") says it is ready only once the one named second has started as
 * many times as it has, its own start included.  Only a supervisor that
 * starts its children together gets there; one at a time, the second
 * waits for the first, which fails its start ("alone").
 */
struct wait_for {
	const char	*first;
	const char	*then;
};

static int
fn_wait_for(void *arg)
{
	const struct wait_for *w = arg;
	const char *path = getenv("ACTORD_PATH");
	char mine[64], theirs[64];
	int i, n;

	ts_record("start");
	if (path != NULL && strcmp(path, w->first) == 0) {
		snprintf(mine, sizeof(mine), "start %s", w->first);
		snprintf(theirs, sizeof(theirs), "start %s", w->then);
		n = ts_record_count(mine);
		for (i = 0; i < 3000 && ts_record_count(theirs) < n; i++)
			usleep(10000);
		if (i == 3000)
			ts_record("alone");
	}
	ts_ready();
	for (;;)
		pause();
	return 0;
}

/* Instance 0 of the group waits for instance 2. */
static const struct wait_for g0_waits = { "/g/0", "/g/2" };

START_TEST(group_starts_in_parallel)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	c = ts_add_fn(&spec->root, "g", fn_wait_for,
	    (void *)(uintptr_t)&g0_waits);
	c->instances = 3;
	c->start_timeout = 60000;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_msg(ts_wait_state(ad, "/", NS_RUNNING, 40000),
	    "root not running: %s", ad->message);
	ck_assert_int_eq(ts_record_count("alone"), 0);
	ck_assert_int_eq(record_count_prefix("start /g/"), 3);
	actord_free(ad);
}
END_TEST

/* /a waits for /c. */
static const struct wait_for a_waits = { "/a", "/c" };

/*
 * A supervisor that says start = "parallel" starts its children together
 * at its boot and again in a one_for_all restart, after stopping them.
 */
START_TEST(parallel_supervisor_restarts_its_set_together)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	const char *k;
	pid_t a, b, c;

	spec->root.strategy = STRATEGY_ONE_FOR_ALL;
	spec->root.start = START_PARALLEL;
	for (k = "abc"; *k != '\0'; k++) {
		char name[2] = { *k, '\0' };

		ts_add_fn(&spec->root, name, fn_wait_for,
		    (void *)(uintptr_t)&a_waits)->start_timeout = 60000;
	}
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_msg(ts_wait_state(ad, "/", NS_RUNNING, 40000),
	    "root not running: %s", ad->message);
	a = ts_pid(ad, "/a");
	b = ts_pid(ad, "/b");
	c = ts_pid(ad, "/c");
	ck_assert_int_eq(kill(b, SIGKILL), 0);
	ck_assert(ts_wait_new_pid(ad, "/a", a, WAIT));
	ck_assert_msg(ts_wait_state(ad, "/", NS_RUNNING, 40000),
	    "root not running: %s", ad->message);
	/*
	 * Each started again and ready (it records its start before it says
	 * so): /a waits only for /c, and /b may be the last.
	 */
	ck_assert(ts_wait_new_pid(ad, "/b", b, WAIT));
	ck_assert(ts_wait_new_pid(ad, "/c", c, WAIT));
	ck_assert(ts_wait_state(ad, "/a", NS_RUNNING, 40000));
	ck_assert(ts_wait_state(ad, "/b", NS_RUNNING, 40000));
	ck_assert(ts_wait_state(ad, "/c", NS_RUNNING, 40000));
	ck_assert_int_eq(ts_record_count("alone"), 0);
	ck_assert_int_eq(ts_record_count("start /a"), 2);
	ck_assert_int_eq(ts_record_count("start /b"), 2);
	ck_assert_int_eq(ts_record_count("start /c"), 2);
	ck_assert_uint_eq(sup_decisions_in_period(ad->root), 1);
	actord_free(ad);
}
END_TEST

/*
 * 300 instances stopped at once die together, their SIGCHLDs merged.
 * Each is watched by a pidfd (_i == 0), its death an event of its own; or
 * (_i == 1, no pidfds: before Linux 5.3, a full descriptor table) the
 * sweep that finds them looks at each worker by its pid.  Either way, not
 * one waitid(P_ALL) per zombie (a walk of every child each: O(N^2)).
 */
START_TEST(mass_death_sweeps_in_few_walks)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	c = ts_add_fn(&spec->root, "g", ts_fn_run, NULL);
	c->instances = 300;
	c->start_timeout = 60000;
	ad = ts_actord(spec);
	ad->no_pidfds = _i == 1;
	actord_boot(ad);
	ck_assert_msg(ts_wait_state(ad, "/", NS_RUNNING, 40000),
	    "root not running: %s", ad->message);
	ck_assert_uint_eq(ad->nwatched, _i == 0 ? 300 : 0);
	actord_shutdown(ad);
	ck_assert(ts_wait_done(ad, 40000));
	ck_assert_int_eq(record_count_prefix("stop /g/"), 300);
	ck_assert_msg(ad->sweep_walks_max <= 8, "a sweep walked the children "
	    "%u times", ad->sweep_walks_max);
	ck_assert_uint_eq(ad->nwatched, 0);
	actord_free(ad);
}
END_TEST

/*
 * Without pidfds, each death arms a sweep of every child; deaths one
 * after the other must not each pay for one: the sweep comes no sooner
 * than 100 times what a walk cost (here said to be 5 ms).
 */
START_TEST(sweeps_pace_themselves)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;
	pid_t pid;

	c = ts_add_fn(&spec->root, "g", ts_fn_run, NULL);
	c->instances = 2;
	ad = ts_actord(spec);
	ad->no_pidfds = true;
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ts_run_for(ad, 100);
	ad->sweep_us = 5000;
	pid = ts_pid(ad, "/g/1");
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert(ts_wait_new_pid(ad, "/g/1", pid, WAIT));
	ck_assert(timer_pending(&ad->sweep_timer));
	ck_assert_msg(ad->sweep_timer.when >= loop_now(&ad->loop) + 300,
	    "a sweep due in %lld ms", (long long)(ad->sweep_timer.when -
	    loop_now(&ad->loop)));
	actord_free(ad);
}
END_TEST

/* start = "ordered": /g/k starts only once /g/k-1 said it is ready. */
static int
fn_check_order(void *arg)
{
	const char *path = getenv("ACTORD_PATH"), *slash;
	char want[64];
	int k;

	(void)arg;
	ts_record("start");
	slash = path != NULL ? strrchr(path, '/') : NULL;
	k = slash != NULL ? atoi(slash + 1) : 0;
	snprintf(want, sizeof(want), "ready /g/%d\n", k - 1);
	if (k > 0 && strstr(ts_record_read(), want) == NULL)
		ts_record("early");
	ts_record("ready");
	ts_ready();
	for (;;)
		pause();
	return 0;
}

START_TEST(group_ordered_start_waits_for_each)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	c = ts_add_fn(&spec->root, "g", fn_check_order, NULL);
	c->instances = 5;
	c->start = START_ORDERED;
	ad = boot(spec);
	ck_assert_int_eq(record_count_prefix("ready /g/"), 5);
	ck_assert_int_eq(ts_record_count("early"), 0);
	actord_free(ad);
}
END_TEST

/*
 * The pid index (tree.c): each of 100 workers (past the first table's 64
 * buckets, so it grew) is found by its pid; after a restart the new pid
 * finds the node and the old one no longer does.
 */
START_TEST(pid_index_follows_restarts)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;
	struct node *g, *k, *o;
	pid_t old;
	size_t i;

	c = ts_add_fn(&spec->root, "g", ts_fn_run, NULL);
	c->instances = 100;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_msg(ts_wait_state(ad, "/", NS_RUNNING, 40000),
	    "root not running: %s", ad->message);
	g = actord_find(ad, "/g");
	ck_assert_uint_eq(g->nkids, 100);
	for (i = 0; i < g->nkids; i++) {
		k = g->kids[i];
		ck_assert_int_gt(k->pid, 0);
		ck_assert_ptr_eq(node_by_pid(ad, k->pid), k);
	}
	k = g->kids[77];
	old = k->pid;
	kill_and_wait_restart(ad, k->path);
	ck_assert_ptr_eq(node_by_pid(ad, k->pid), k);
	/* Unless the pid was given again (then to the node that has it). */
	o = node_by_pid(ad, old);
	ck_assert(o == NULL || o->pid == old);
	ck_assert_ptr_null(node_by_pid(ad, 0));
	actord_free(ad);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("sup_tree");
	TCase *tc;

	tc = tcase_create("strategies");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, one_for_one_restarts_only_the_dead);
	tcase_add_test(tc, one_for_all_stops_in_reverse_starts_in_order);
	tcase_add_test(tc, rest_for_one_restarts_the_rest);
	tcase_add_test(tc, temporary_sibling_removed_under_one_for_all);
	tcase_add_test(tc, hand_stopped_sibling_restarts_with_its_set);
	tcase_add_test(tc, clean_exit_rules);
	suite_add_tcase(s, tc);

	tc = tcase_create("intensity");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, backoff_starts_over_after_min_uptime);
	tcase_add_test(tc, intensity_exactly_at_limit);
	tcase_add_test(tc, intensity_one_past_escalates_with_cause);
	tcase_add_test(tc, escalation_through_nested_supervisor);
	tcase_add_test(tc, boot_failure_stops_started_skips_rest);
	tcase_add_test(tc, giving_up_during_boot_fails_the_start);
	tcase_add_test(tc, failed_restarts_count_and_escalate);
	tcase_add_test(tc, stopped_by_hand_in_restart_loop_stays_stopped);
	suite_add_tcase(s, tc);

	tc = tcase_create("stopping");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, shutdown_in_reverse_order);
	tcase_add_test(tc, sigterm_ignored_then_killed);
	tcase_add_test(tc, brutal_kill_sends_no_sigterm);
	tcase_add_test(tc, shutdown_timeout_bounds_infinity);
	tcase_add_test(tc, no_grandchild_survives);
	tcase_add_test(tc, group_stops_in_parallel);
	suite_add_tcase(s, tc);

	tc = tcase_create("ready_api");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ready_fd_and_start_timeout);
	tcase_add_test(tc, no_child_declares_another_ready);
	tcase_add_test(tc, api_restart_stop_start_add_remove);
	tcase_add_test(tc, walk_reports_the_tree);
	tcase_add_test(tc, arena_table_follows_the_workers);
	tcase_add_test(tc, reload_in_process);
	tcase_add_test(tc, output_tail_for_actorctl_log);
	suite_add_tcase(s, tc);

	tc = tcase_create("scale");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pid_index_follows_restarts);
	tcase_add_test(tc, group_starts_in_parallel);
	tcase_add_test(tc, group_ordered_start_waits_for_each);
	tcase_add_test(tc, parallel_supervisor_restarts_its_set_together);
	tcase_add_loop_test(tc, mass_death_sweeps_in_few_walks, 0, 2);
	tcase_add_test(tc, sweeps_pace_themselves);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
