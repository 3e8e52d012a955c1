/*
 * check_restart_cost.c: the system calls of a one_for_all restart, per
 * child (issue 13: N stops and N starts in a row, against the two of a
 * bare fork/exec loop).  actord runs in a child of the test, with a
 * one_for_all group of K actors (tests/progs/actor_echo, ready =
 * "actor"); the test traces it (ptrace) from its SIGKILL of one of them
 * to the group running again, counting each system call of actord's
 * thread by number, and those of each child it clones until that
 * child's execve, apart.  What each bound stands for, and what it was
 * before (about 61 calls of actord per child stopped and started):
 *
 *   readiness	an actor's READY=1 comes on actord's one socket, read with
 *		a recvmmsg (supervisor/ready.c), not on a pipe of its own:
 *		no pipe2, epoll_ctl (2), dup3 (2), close (2) and read of
 *		each start; one pipe2, two epoll_ctl and three closes left
 *		(the output pipe, and the pidfd)
 *   lseek	the repair of a dead actor's mailbox, and of actord's own
 *		after each death, asks where the written pages are
 *		(shm/repair.c): one seek per boundary between written and
 *		unwritten pages, 8 per death here, not 15
 *   getpid	read once per repair only if a claim record is looked at,
 *		never per spawn (actord's pid is known): 3 per child, not 6
 *   membarrier	a process registers for the barriers once, not at every
 *		producer slot it opens (one per reap)
 *   dup3	the arena's two descriptors stay staged from one start to
 *		the next (supervisor/spawn.c): 4 per start, not 8
 *   pidfd_open	the pidfd comes with the clone (CLONE_PIDFD)
 *   recvmsg	the notify socket is read before a reap only while a
 *		child whose readiness comes on it is starting: never here
 *   read	one read of the signalfd takes every signal pending: none
 *		ends in one more that finds nothing (EAGAIN)
 *   rt_sigprocmask  no signal is blocked around a start: actord's process
 *		has no handler that could run in its child (spawn.c)
 *   fcntl	an output pipe's read end blocks like the child's end
 *		(supervisor/output.c): no fcntl to make the child's block
 *   timerfd_settime  armed once per turn of the loop at most, not at
 *		each change (supervisor/loop.c)
 *   the child	before its execve, no open of /dev/null and no copy of
 *		each descriptor above the fixed numbers: 15 calls, not 21
 *		(besides its resets of this process's signal dispositions;
 *		one of them the getpid of its record for the warden)
 *
 * In all, actord's thread made about 59 calls per child here, then 40,
 * 31 now (epoll_wait and the reads of each turn of the loop vary from
 * run to run: the bound on the whole leaves them out; without them, 55,
 * then 36, 28.5 now).
 *
 * A sanitized build starts children with vfork (spawn.c), without the
 * staging and the pidfd of the clone: those bounds are left out there.
 * Where ptrace is not allowed (a seccomp profile, yama), the test says so
 * and checks nothing.
 */
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <linux/ptrace.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define K	12		/* children of the group */
#define WAIT	20000		/* ms: a bound, never an expectation */
#define NSYS	512		/* system call numbers counted */

/* What the child running actord tells the test. */
struct hello {
	int	 report_fd;	/* its write end of the report pipe */
	int	 sigfd;		/* actord's signalfd */
	int	 cloned;	/* children are cloned (staging, CLONE_PIDFD) */
};

struct result {
	int	 back;		/* children running again, with a new pid */
	int	 ok;
};

/* Counts of actord's thread, and of its cloned children before exec. */
struct counts {
	unsigned long	 actord[NSYS];
	unsigned long	 child[NSYS];
	int		 children;	/* that reached their execve */
	unsigned long	 sig_empty;	/* reads of the signalfd: EAGAIN */
};

static bool
group_back(struct actord *ad, void *arg)
{
	const pid_t *old = arg;
	struct node *g = actord_find(ad, "/g"), *k;
	size_t i;

	if (g == NULL || g->state != NS_RUNNING || g->plan.kind != PLAN_NONE)
		return false;
	for (i = 0; i < g->nkids; i++) {
		k = g->kids[i];
		if (k->state != NS_RUNNING || k->pid == old[i])
			return false;
	}
	return true;
}

/* The child: actord with /g of K actors; one SIGKILLed when told. */
static void
run_actord(int hello_w, int go_r, int report_w)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *g;
	struct child_spec *c;
	struct actord *ad;
	struct hello h;
	struct result r = { 0, 0 };
	struct node *gn;
	pid_t old[K];
	char name[16], b;
	size_t i;

	/* No handler, as in actord's process (check's are not actord's). */
	signal(SIGALRM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	g = ts_add_sup(&spec->root, "g", STRATEGY_ONE_FOR_ALL);
	g->intensity = 1000;
	g->period = 1;
	g->backoff_min = g->backoff_max = 0;
	for (i = 0; i < K; i++) {
		snprintf(name, sizeof(name), "c%zu", i);
		c = ts_add_exec(g, name, ts_progs("actor_echo"), NULL);
		c->ready = READY_ACTOR;
		c->has_mailbox = true;
		c->start_timeout = WAIT;
		/*
		 * A sanitized actor's exit is LeakSanitizer's scan, which a
		 * busy machine can stretch past the default 2 s: a SIGKILL
		 * then, and its log line, would be counted as the restart's.
		 */
		c->shutdown = WAIT;
	}
	ad = ts_actord(spec);
	actord_boot(ad);
	if (!ts_wait_state(ad, "/g", NS_RUNNING, WAIT))
		_exit(10);
	gn = actord_find(ad, "/g");
	for (i = 0; i < K; i++)
		old[i] = gn->kids[i]->pid;
	h.report_fd = report_w;
	h.sigfd = ad->sigfd;
	h.cloned = ad->spawner.ok;
	if (write(hello_w, &h, sizeof(h)) != sizeof(h) ||
	    read(go_r, &b, 1) != 1)
		_exit(11);
	/* Traced from here. */
	kill(old[K / 2], SIGKILL);
	r.ok = ts_run_until(ad, group_back, old, WAIT);
	for (i = 0; i < K; i++)
		r.back += gn->kids[i]->pid != old[i];
	/* The end of what is counted: this write. */
	if (write(report_w, &r, sizeof(r)) != sizeof(r))
		_exit(12);
	actord_free(ad);
	_exit(0);
}

/*
 * The tracee tid is: 0 actord, 1 a cloned child.  Nothing else is traced:
 * a child is auto-attached by its vfork, and its first stop may come
 * before actord's PTRACE_EVENT_VFORK (waitpid picks either): a child
 * known only from that event would be left traced past its execve, and
 * actord would wait for ever for it to be reaped (by us, its tracer).
 */
static int
role_of(pid_t tid, pid_t actord)
{
	return tid == actord ? 0 : 1;
}

/*
 * Trace actord (pid) until it writes on report_fd, its cloned children
 * until their execve.  False if it could not be traced at all.
 */
static bool
trace(pid_t pid, const struct hello *h, int go_w, struct counts *c)
{
	struct ptrace_syscall_info si;
	pid_t tid;
	int st, role, sig, ev;
	bool done = false, sigread = false;

	/* A clone with CLONE_VFORK, as vfork, is a vfork: nothing else. */
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESYSGOOD |
	    PTRACE_O_TRACEVFORK) == -1)
		return false;
	ck_assert_int_eq(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
	ck_assert_int_eq(waitpid(pid, &st, __WALL), pid);
	ck_assert(WIFSTOPPED(st));
	ck_assert_int_eq(ptrace(PTRACE_SYSCALL, pid, 0, 0), 0);
	ck_assert_int_eq(write(go_w, "g", 1), 1);
	while (!done) {
		tid = waitpid(-1, &st, __WALL);
		ck_assert_int_gt(tid, 0);
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			ck_assert_msg(tid != pid, "actord's process ended, "
			    "status %#x", st);
			continue;
		}
		role = role_of(tid, pid);
		sig = WSTOPSIG(st);
		ev = st >> 16;
		if (sig == (SIGTRAP | 0x80)) {
			ck_assert_int_gt(ptrace(PTRACE_GET_SYSCALL_INFO, tid,
			    sizeof(si), &si), 0);
			if (role == 0 && si.op == PTRACE_SYSCALL_INFO_EXIT &&
			    sigread && si.exit.rval == -EAGAIN)
				c->sig_empty++;
			if (role == 0 && si.op == PTRACE_SYSCALL_INFO_ENTRY)
				sigread = si.entry.nr == SYS_read &&
				    (int)si.entry.args[0] == h->sigfd;
			if (si.op == PTRACE_SYSCALL_INFO_ENTRY &&
			    si.entry.nr < NSYS) {
				if (role == 0)
					c->actord[si.entry.nr]++;
				else
					c->child[si.entry.nr]++;
				if (role == 0 && si.entry.nr == SYS_write &&
				    (int)si.entry.args[0] == h->report_fd) {
					ck_assert_int_eq(ptrace(PTRACE_DETACH,
					    tid, 0, 0), 0);
					done = true;
					continue;
				}
				if (role == 1 && si.entry.nr == SYS_execve) {
					c->children++;
					(void)ptrace(PTRACE_DETACH, tid, 0, 0);
					continue;
				}
			}
			sig = 0;
		} else if (ev != 0 || role == 1)
			sig = 0;	/* a stop of ours, a new child's first */
		(void)ptrace(PTRACE_SYSCALL, tid, 0, sig);
	}
	return true;
}

/* Per child of the group, the calls of number nr. */
static double
per(const unsigned long *v, long nr)
{
	return (double)v[nr] / K;
}

static unsigned long
total(const unsigned long *v)
{
	unsigned long t = 0;
	int i;

	for (i = 0; i < NSYS; i++)
		t += v[i];
	return t;
}

/* The counts, for the log: number:calls per child. */
static void
show(const char *who, const unsigned long *v)
{
	int i;

	fprintf(stderr, "%s, per child (%.1f in all):", who,
	    (double)total(v) / K);
	for (i = 0; i < NSYS; i++)
		if (v[i] > 0)
			fprintf(stderr, " %d:%.2f", i, (double)v[i] / K);
	fprintf(stderr, "\n");
}

START_TEST(one_for_all_restart_syscalls)
{
	int hello[2], go[2], report[2];
	static struct counts c;
	struct hello h;
	struct result r;
	pid_t pid;
	int st;

	ck_assert_int_eq(pipe(hello), 0);
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(report), 0);
	if ((pid = fork()) == 0) {
		close(hello[0]);
		close(go[1]);
		close(report[0]);
		run_actord(hello[1], go[0], report[1]);
	}
	ck_assert_int_gt(pid, 0);
	close(hello[1]);
	close(go[0]);
	close(report[1]);
	ck_assert_int_eq(read(hello[0], &h, sizeof(h)), (ssize_t)sizeof(h));
	memset(&c, 0, sizeof(c));
	if (!trace(pid, &h, go[1], &c)) {
		fprintf(stderr, "ptrace: %s: nothing counted\n",
		    strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	ck_assert_int_eq(read(report[0], &r, sizeof(r)), (ssize_t)sizeof(r));
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	ck_assert_msg(r.ok && r.back == K, "%d of %d back", r.back, K);
	show("actord", c.actord);
	show("a child before its exec", c.child);
	ck_assert_int_eq(c.children, K);
	/*
	 * Each turn of the loop is an epoll_wait and its reads: left out.
	 * A sanitized build's vfork adds ASan's mmap and madvise calls, and
	 * a pidfd_open.
	 */
	ck_assert_msg((double)(total(c.actord) - c.actord[SYS_epoll_wait] -
	    c.actord[SYS_read]) / K <= (h.cloned ? 32.0 : 38.0),
	    "actord: %.2f calls", (double)total(c.actord) / K);
	ck_assert_msg(per(c.actord, SYS_lseek) <= 10.0, "lseek: %.2f",
	    per(c.actord, SYS_lseek));
	ck_assert_msg(per(c.actord, SYS_getpid) <= 4.5, "getpid: %.2f",
	    per(c.actord, SYS_getpid));
	ck_assert_msg(c.actord[SYS_membarrier] <= 1, "membarrier: %lu",
	    c.actord[SYS_membarrier]);
	ck_assert_msg(c.sig_empty == 0, "reads of the signalfd that found "
	    "nothing: %lu", c.sig_empty);
	ck_assert_msg(c.actord[SYS_recvmsg] == 0, "recvmsg: %lu",
	    c.actord[SYS_recvmsg]);
	/* Readiness: one batch read per start, and no pipe of its own. */
	ck_assert_msg(per(c.actord, SYS_recvmmsg) <= 1.0, "recvmmsg: %.2f",
	    per(c.actord, SYS_recvmmsg));
	ck_assert_msg(per(c.actord, SYS_pipe2) <= 1.0, "pipe2: %.2f",
	    per(c.actord, SYS_pipe2));
	ck_assert_msg(per(c.actord, SYS_epoll_ctl) <= 2.0, "epoll_ctl: %.2f",
	    per(c.actord, SYS_epoll_ctl));
	ck_assert_msg(per(c.actord, SYS_close) <= 3.0, "close: %.2f",
	    per(c.actord, SYS_close));
	ck_assert_msg(c.actord[SYS_fcntl] == 0, "fcntl: %lu",
	    c.actord[SYS_fcntl]);
	/* One per turn at most, however many timers the turn moved. */
	ck_assert_msg(c.actord[SYS_timerfd_settime] <=
	    c.actord[SYS_epoll_wait], "timerfd_settime: %.2f, turns: %.2f",
	    per(c.actord, SYS_timerfd_settime), per(c.actord,
	    SYS_epoll_wait));
	if (!h.cloned)
		return;
	ck_assert_msg(per(c.actord, SYS_dup3) <= 2.0, "dup3: %.2f",
	    per(c.actord, SYS_dup3));
	ck_assert_msg(c.actord[SYS_pidfd_open] == 0, "pidfd_open: %lu",
	    c.actord[SYS_pidfd_open]);
	ck_assert_msg(c.actord[SYS_rt_sigprocmask] == 0, "rt_sigprocmask: %lu",
	    c.actord[SYS_rt_sigprocmask]);
	ck_assert_msg(c.child[SYS_openat] == 0 && c.child[SYS_fcntl] == 0,
	    "a child opens %.2f, fcntl %.2f", per(c.child, SYS_openat),
	    per(c.child, SYS_fcntl));
	/* Its resets of signal dispositions are this process's count. */
	ck_assert_msg((double)(total(c.child) - c.child[SYS_rt_sigaction]) /
	    K <= 15.0, "a child: %.2f calls", (double)(total(c.child) -
	    c.child[SYS_rt_sigaction]) / K);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("restart_cost");
	TCase *tc = tcase_create("restart_cost");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, one_for_all_restart_syscalls);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
