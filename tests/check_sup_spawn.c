/*
 * check_sup_spawn.c: a child's spawn (supervisor/spawn.c) at the worst
 * moments, under the real actord (in this process) and real children:
 *
 *   - a child is in a process group of its own as soon as its spawn
 *     returns, before actord could signal the group: a program child set
 *     it itself before exec (its spawn returns once it has exec'd), a
 *     forked function child has it set by actord too;
 *   - a program child whose exec fails in a one_for_all restart, again
 *     and again, for one reason and then another: each failure is known
 *     by its own cause (the {stage, errno} the child left in actord's
 *     memory), never a previous incarnation's, and a start that succeeds
 *     after them says none;
 *   - the same failing restarts while actord stops the tree: it stops;
 *   - a child resets the dispositions actord's process does not leave at
 *     the default (ignored or caught), and those alone: it starts with no
 *     signal ignored, and never resets one that is at the default.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <check.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT	10000	/* ms: a bound, never an expectation */

/*
 * One CPU for this test's process and what it forks, and (where it may:
 * CAP_SYS_NICE) a real-time priority its children do not inherit: a
 * forked child then waits for its parent to give the CPU up, as it may
 * behind a busy actord, rather than run at once on a CPU of its own.
 * Without the priority the scheduler most often runs the parent on.
 */
static void
parent_first(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	cpu_set_t set;
	int i, first = -1;

	CPU_ZERO(&set);
	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &set))
			continue;
		if (first == -1)
			first = i;
		else
			CPU_CLR(i, &set);
	}
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	(void)sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp);
}

static void
parent_as_before(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	(void)sched_setscheduler(0, SCHED_OTHER, &sp);
}

/*
 * Right when actord_boot returns (its spawns done, no turn of the loop),
 * each child leads a process group of its own, which a killpg reaches.
 * Without the program child's own setpgid before exec (the spawn's
 * setpgid after exec fails: EACCES), or the function child's by actord,
 * the child is still in actord's group.
 */
START_TEST(child_in_its_group_when_spawned)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	const char *paths[] = { "/prog", "/fn" };
	pid_t pid;
	size_t i;

	parent_first();
	ts_add_exec(&spec->root, "prog", ts_progs("tworker"), "run", NULL);
	ts_add_fn(&spec->root, "fn", ts_fn_run, NULL);
	spec->root.children[1].ready = READY_EXEC;
	ad = ts_actord(spec);
	actord_boot(ad);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		pid = ts_pid(ad, paths[i]);
		ck_assert_int_gt(pid, 0);
		ck_assert_msg(getpgid(pid) == pid, "%s: pid %d in group %d",
		    paths[i], (int)pid, (int)getpgid(pid));
		ck_assert_int_eq(killpg(pid, 0), 0);
	}
	parent_as_before();
	actord_free(ad);
}
END_TEST

/* --- exec failures in one_for_all restarts ------------------------------------ */

static char	 dir[64];
static char	 prog[128];

/* /p's last exit says text. */
static bool
last_exit_has(struct actord *ad, void *text)
{
	struct node *n = actord_find(ad, "/p");

	return n != NULL && strstr(n->last_exit, text) != NULL;
}

/* The text of an exec failure of prog with errno's text e. */
static char *
exec_failed(const char *e)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "exec %s: %s", prog, e);
	return buf;
}

/*
 * A one_for_all root of a function child /a and /p, a copy of tworker in
 * a directory of our own, restarted at once however often it fails.
 */
static struct actord *
tree_up(void)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;

	snprintf(dir, sizeof(dir), "%s/check-spawn.XXXXXX", P_tmpdir);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	tcheck_copy_public(ts_progs("tworker"), dir, prog, sizeof(prog));
	spec->root.strategy = STRATEGY_ONE_FOR_ALL;
	spec->root.intensity = 100000;
	spec->root.period = 1;
	spec->root.backoff_min = 1;
	spec->root.backoff_max = 5;
	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	ts_add_exec(&spec->root, "p", prog, "run", NULL);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	return ad;
}

/* /p's program gone, and /a killed: the restarts fail at /p's exec. */
static void
exec_failing(struct actord *ad)
{
	ck_assert_int_eq(unlink(prog), 0);
	ck_assert_int_eq(kill(ts_pid(ad, "/a"), SIGKILL), 0);
	ck_assert_msg(ts_run_until(ad, last_exit_has, exec_failed(
	    "No such file or directory"), WAIT), "/p: %s",
	    actord_find(ad, "/p")->last_exit);
}

static void
tree_gone(struct actord *ad)
{
	actord_free(ad);
	(void)unlink(prog);
	(void)rmdir(dir);
}

/*
 * Each failed start of /p is known by its own cause: no such program,
 * then a program that may not be run (mode 0644), and once it may, /p
 * runs and its start says no cause at all.  A report left over from a
 * previous spawn would name the previous cause, or fail the start that
 * succeeds.
 */
START_TEST(exec_failure_fresh_in_one_for_all_restarts)
{
	struct actord *ad = tree_up();
	struct node *p;

	exec_failing(ad);
	tcheck_copy_public(ts_progs("tworker"), dir, prog, sizeof(prog));
	ck_assert_int_eq(chmod(prog, 0644), 0);
	ck_assert_msg(ts_run_until(ad, last_exit_has, exec_failed(
	    "Permission denied"), WAIT), "/p: %s",
	    actord_find(ad, "/p")->last_exit);
	ck_assert_int_eq(chmod(prog, 0755), 0);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert(ts_wait_state(ad, "/p", NS_RUNNING, WAIT));
	p = actord_find(ad, "/p");
	ck_assert_msg(p->start_cause[0] == '\0', "/p runs, yet its start "
	    "says: %s", p->start_cause);
	ck_assert_int_gt(ts_pid(ad, "/p"), 0);
	tree_gone(ad);
}
END_TEST

/*
 * actord is told to stop the tree while /p's exec fails in one
 * one_for_all restart after another: the tree stops, and nothing of it
 * is left running.
 */
START_TEST(exec_failing_while_tree_stops)
{
	struct actord *ad = tree_up();

	exec_failing(ad);
	actord_shutdown(ad);
	ck_assert_msg(ts_wait_done(ad, WAIT), "the tree never stopped");
	ck_assert_int_le(ts_pid(ad, "/p"), 0);
	ck_assert_int_le(ts_pid(ad, "/a"), 0);
	tree_gone(ad);
}
END_TEST

/* --- signal dispositions ----------------------------------------------------- */

/* The kernel's struct sigaction, for rt_sigaction(2) on signals 32 and 33. */
struct ksigaction {
	void		(*handler)(int);
	unsigned long	 flags;
	void		(*restorer)(void);
	uint64_t	 mask;
};

static void
on_usr1(int sig)
{
	(void)sig;
}

/* SIGUSR1 caught, SIGUSR2 and 33 (glibc's, as make may leave it) ignored. */
static void
dispositions_set(void)
{
	struct ksigaction ksa;

	ck_assert(signal(SIGUSR1, on_usr1) != SIG_ERR);
	ck_assert(signal(SIGUSR2, SIG_IGN) != SIG_ERR);
	memset(&ksa, 0, sizeof(ksa));
	ksa.handler = SIG_IGN;
	ck_assert_int_eq(syscall(SYS_rt_sigaction, 33, &ksa, NULL, 8), 0);
}

/*
 * spawn_signals_set says exactly the signals whose disposition is not the
 * default, by rt_sigaction's own account of each.
 */
START_TEST(signals_set_is_what_is_not_default)
{
	struct ksigaction old;
	uint64_t set = 0, want = 0;
	int sig;

	dispositions_set();
	ck_assert_int_eq(spawn_signals_set(&set), 0);
	for (sig = 1; sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		ck_assert_int_eq(syscall(SYS_rt_sigaction, sig, NULL, &old, 8),
		    0);
		if (old.handler != SIG_DFL)
			want |= UINT64_C(1) << (sig - 1);
	}
	ck_assert_msg(set == want, "set %#llx, want %#llx",
	    (unsigned long long)set, (unsigned long long)want);
	ck_assert(set & (UINT64_C(1) << (SIGUSR1 - 1)));
	ck_assert(set & (UINT64_C(1) << (SIGUSR2 - 1)));
	ck_assert(set & (UINT64_C(1) << (33 - 1)));
	ck_assert(!(set & (UINT64_C(1) << (SIGWINCH - 1))));
}
END_TEST

/*
 * A process that sets SIGWINCH's disposition is killed (seccomp); one that
 * only reads it is not.
 */
static void
forbid_sigwinch_sigaction(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigaction, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SIGWINCH, 0, 5),
		/* The new action's pointer, both halves: NULL only reads. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[1]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { sizeof(f) / sizeof(f[0]), f };

	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	ck_assert_int_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp), 0);
}

/* The hexadecimal mask of /proc/PID/status's line "field". */
static uint64_t
status_mask(pid_t pid, const char *field)
{
	char path[64], buf[4096], *p;
	ssize_t k;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(k, 0);
	buf[k] = '\0';
	p = strstr(buf, field);
	ck_assert_ptr_nonnull(p);
	return strtoull(p + strlen(field), NULL, 16);
}

/*
 * With SIGUSR1 caught and SIGUSR2 and 33 ignored here, a program child
 * starts with nothing ignored and nothing caught; and its start never
 * resets SIGWINCH, at the default here: a child that did would be killed
 * by seccomp before its exec, and never run.  (Every start used to reset
 * all 64, an rt_sigaction each: about 30 us of every start.)
 */
START_TEST(child_resets_only_what_is_not_default)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	pid_t pid;

	dispositions_set();
	forbid_sigwinch_sigaction();
	ts_add_exec(&spec->root, "c", ts_progs("tworker"), "run", NULL);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_msg(ts_wait_state(ad, "/c", NS_RUNNING, WAIT),
	    "/c: %s", actord_find(ad, "/c")->last_exit);
	pid = ts_pid(ad, "/c");
	ck_assert_int_gt(pid, 0);
	ck_assert_msg(status_mask(pid, "SigIgn:") == 0, "/c ignores %#llx",
	    (unsigned long long)status_mask(pid, "SigIgn:"));
	ck_assert_msg(status_mask(pid, "SigCgt:") == 0, "/c catches %#llx",
	    (unsigned long long)status_mask(pid, "SigCgt:"));
	/* Still the same child: it was never killed and restarted. */
	ts_run_for(ad, 100);
	ck_assert_int_eq(ts_pid(ad, "/c"), pid);
	actord_free(ad);
}
END_TEST

static Suite *
spawn_suite(void)
{
	Suite	*s = suite_create("sup_spawn");
	TCase	*tc = tcase_create("spawn");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, child_in_its_group_when_spawned);
	tcase_add_test(tc, exec_failure_fresh_in_one_for_all_restarts);
	tcase_add_test(tc, exec_failing_while_tree_stops);
	tcase_add_test(tc, signals_set_is_what_is_not_default);
	tcase_add_test(tc, child_resets_only_what_is_not_default);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(spawn_suite());
}
