/*
 * check_adv_warden.c: actord killed in the middle of a worker's spawn,
 * found by tests/check_adv_soak.c (a worker's child left running after
 * the test SIGKILLed actord).  A program worker runs as soon as it has
 * exec'd, and may fork at once; actord recorded the worker's process
 * group for the warden (supervisor/warden.c) only after its spawn
 * returned, so an actord killed in between left that group to nobody:
 * its children outlived actord.
 *
 * The moment is made exact: setrlimit is wrapped (as check_sup_procs.c
 * wraps setresuid), and in the new worker, between its setpgid and its
 * exec (spawn.c, child_exec), it forks a grandchild into the worker's
 * group, SIGKILLs actord (which waits for the exec, vfork's way, so never
 * records the group itself) and waits to be orphaned.  The warden must
 * kill the grandchild all the same.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT	10000		/* ms: a bound, never an expectation */

/* Shared with the forked actord and its worker: the grandchild's pid. */
static volatile pid_t *gc_pid;
static pid_t	 actord_pid;	/* set in the actord under test */

int
setrlimit(__rlimit_resource_t res, const struct rlimit *rl)
{
	pid_t pp, gc;
	int waited;

	/* Only in the new worker of the actord under test. */
	if (actord_pid != 0 && getpid() != actord_pid &&
	    getppid() == actord_pid) {
		pp = getppid();
		gc = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
		if (gc == 0) {
			*gc_pid = (pid_t)syscall(SYS_getpid);
			for (;;)
				(void)syscall(SYS_pause);
		}
		while (*gc_pid == 0)
			(void)syscall(SYS_sched_yield);
		(void)kill(pp, SIGKILL);
		for (waited = 0; getppid() == pp && waited < WAIT; waited++)
			usleep(1000);
	}
	return (int)syscall(SYS_setrlimit, res, rl);
}

START_TEST(killed_mid_spawn_leaves_nothing)
{
	struct actord_spec *spec;
	struct actord *ad;
	pid_t p, gc;
	int st, waited;
	char state;

	gc_pid = mmap(NULL, sizeof(*gc_pid), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne((void *)(uintptr_t)gc_pid, MAP_FAILED);
	*gc_pid = 0;
	p = fork();
	ck_assert_int_ne(p, -1);
	if (p == 0) {
		spec = ts_spec();
		ts_add_exec(&spec->root, "w", ts_progs("tworker"), "run",
		    (char *)NULL);
		ad = ts_actord(spec);
		actord_pid = getpid();
		actord_boot(ad);
		ts_run_for(ad, WAIT);	/* its worker kills it meanwhile */
		_exit(0);
	}
	ck_assert_int_eq(waitpid(p, &st, 0), p);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "actord "
	    "was not killed mid-spawn: status %#x", st);
	gc = *gc_pid;
	ck_assert_int_gt(gc, 0);
	for (waited = 0; waited < WAIT; waited += 10) {
		state = tcheck_proc_state(gc);
		if (state == '?' || state == 'Z')
			break;
		ts_sleep_ms(10);
	}
	if (waited >= WAIT)
		(void)kill(gc, SIGKILL);	/* before the assertion ends us */
	ck_assert_msg(waited < WAIT, "pid %d, forked by a worker before "
	    "actord's spawn of it returned, outlived actord", (int)gc);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("adv_warden");
	TCase *tc = tcase_create("warden");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, killed_mid_spawn_leaves_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
