/*
 * check_death_cost.c: what one death costs actord must not grow with the
 * number of actors (issue 13).  Each death is an event of its own, its
 * pidfd held by a ring and not in actord's descriptor table, so that
 * deaths whose SIGCHLDs merged need no walk of every child (a sweep)
 * soon after.  A reap wakes only who sleeps.  A
 * FUTEX_WAKE walks a bucket of the kernel's futex hash, which every
 * shared futex sleeper of the machine shares, even for a word nobody
 * waits on: shm_wake_all and actor_reaped make none on an idle mailbox.
 * FUTEX_WAKEs are counted by a seccomp filter that traps them (SIGSYS),
 * in a child of the test: a trapped wake wakes nobody, so only code with
 * nobody asleep runs under it.  The filter tells a wake that asks for
 * every waiter from one that asks for a few: asked for every one, the
 * kernel walks all the word's waiters, so a grant of turns to a line of
 * blocked senders asks for as many as it wakes.  The producer slot a
 * reap opens is found reading the pid once (getpid trapped and counted
 * the same way), not once per taken slot.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
#include "worker/actor.h"

static volatile sig_atomic_t wakes;	/* FUTEX_WAKEs trapped in the child */
static volatile sig_atomic_t wakes_all;	/* those asking for every waiter */

#define TRAP_ALL	1	/* si_errno of a wake asking for INT_MAX */

static void
on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	wakes++;
	if (si->si_errno == TRAP_ALL)
		wakes_all++;
}

/* A seccomp filter for this process and what it forks from now on. */
static int
install_filter(struct sock_filter *f, unsigned short n)
{
	struct sock_fprog prog = { n, f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
		return -1;
	return 0;
}

/*
 * From now on, this process's FUTEX_WAKE and FUTEX_WAKE_BITSET trap, those
 * asking for INT_MAX waiters (all) with TRAP_ALL in si_errno.
 */
static void
trap_futex_wakes(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 8),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[1])),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, FUTEX_CMD_MASK),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FUTEX_WAKE, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FUTEX_WAKE_BITSET, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, INT_MAX, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | TRAP_ALL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSYS, &sa, NULL) == -1 ||
	    install_filter(f, sizeof(f) / sizeof(f[0])) == -1)
		_exit(90);
}

/* Exit with the line of the first check that failed, 0 if none. */
#define CHILD_CHECK(c) do {						\
	if (!(c))							\
		_exit(__LINE__ % 256 == 0 ? 1 : __LINE__ % 256);	\
} while (0)

/* Run fn in a child under the trap; its exit status. */
static int
in_trapped_child(void (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		trap_futex_wakes();
		fn(arg);
		_exit(0);		/* no exit handlers: they may wake */
	}
	return shm_test_wait_exit(pid);
}

static void
wake_all_scenario(void *arg)
{
	struct shm_arena *a = arg;
	struct shm_mbox *m = shm_mb(a, 0)->m;
	uint32_t w = atomic_load(&m->wake_word);

	/* The trap works: a wake is counted. */
	shm_futex_wake(&m->wake_word, 1);
	CHILD_CHECK(wakes == 1);
	/* Nobody asleep: no wake at all, but the word moves. */
	wakes = 0;
	shm_wake_all(a, 0);
	CHILD_CHECK(wakes == 0);
	CHILD_CHECK(atomic_load(&m->wake_word) != w);
	/* A consumer asleep: one. */
	atomic_store(&m->sleeping, SHM_LANE_BIT(SHM_LANE_MAIN));
	shm_wake_all(a, 0);
	CHILD_CHECK(wakes == 1);
	CHILD_CHECK(atomic_load(&m->sleeping) == 0);
	/* A drop_oldest sender waiting for room: one. */
	wakes = 0;
	atomic_store(&m->space_waiters, 1);
	shm_wake_all(a, 0);
	CHILD_CHECK(wakes == 1);
	atomic_store(&m->space_waiters, 0);
	/* A sender in line for a turn: every cell of the line. */
	wakes = 0;
	atomic_fetch_add(&m->turn_next, 1);
	shm_wake_all(a, 0);
	CHILD_CHECK(wakes == SHM_TURN_CELLS);
	atomic_fetch_add(&m->turn_grant, 1);
	/* Its turn granted, not yet used (still asleep?): the same. */
	wakes = 0;
	atomic_store(&m->turn_out, 1);
	shm_wake_all(a, 0);
	CHILD_CHECK(wakes == SHM_TURN_CELLS);
}

/* Run fn on a mailbox of its own in a child under the trap: its status. */
static int
on_a_mailbox_trapped(void (*fn)(void *))
{
	struct shm_arena *a = shm_test_arena(1, 16, 64, SHM_OVERFLOW_BLOCK);
	int st = in_trapped_child(fn, a);

	shm_detach(a);
	return st;
}

/* shm_wake_all makes a FUTEX_WAKE only where somebody may sleep. */
START_TEST(wake_all_wakes_only_sleepers)
{
	ck_assert_int_eq(on_a_mailbox_trapped(wake_all_scenario), 0);
}
END_TEST

/*
 * A grant of turns to a line of blocked senders (held by nobody here:
 * only the wakes count) asks the kernel for as many sleepers as it has
 * bits in each wake, never for all: asked for all, the kernel walks every
 * sender asleep on the cell (some 31 in a line of 1,000), each a cold
 * line of another sleeper's stack, for the one or two whose turn it is.
 * A line longer than a cell and bit per ticket (two tickets share a bit)
 * asks for all, and so does the repair's wake of every sleeper.
 */
static void
grant_scenario(void *arg)
{
	struct shm_arena *a = arg;
	struct shm_mbox_local *mb = shm_mb(a, 0);
	uint32_t g;

	atomic_store(&mb->m->turn_next, 10);
	CHILD_CHECK(shm_turns_grant(mb) >= 1);
	CHILD_CHECK(wakes >= 1);
	CHILD_CHECK(wakes_all == 0);
	/* Longer than SHM_TURN_WAITERS: every sleeper of those bits. */
	wakes = 0;
	atomic_store(&mb->m->turn_out, 0);
	g = atomic_load(&mb->m->turn_grant);
	atomic_store(&mb->m->turn_next, g + SHM_TURN_WAITERS + 10);
	CHILD_CHECK(shm_turns_grant(mb) >= 1);
	CHILD_CHECK(wakes >= 1);
	CHILD_CHECK(wakes_all == wakes);
	/* Every sleeper of every cell (a repair, a reap). */
	wakes = wakes_all = 0;
	shm_turns_wake_all(mb->m);
	CHILD_CHECK(wakes == SHM_TURN_CELLS);
	CHILD_CHECK(wakes_all == SHM_TURN_CELLS);
}

START_TEST(grant_wakes_as_many_as_its_turns)
{
	ck_assert_int_eq(on_a_mailbox_trapped(grant_scenario), 0);
}
END_TEST

/* Two actors up, as actord makes them. */
static struct shm_arena *
actors(void)
{
	return shm_test_actors_up(&(struct shm_test_actors){ .n = 2,
	    .cap = 16, .rcap = 16, .ov = SHM_OVERFLOW_BLOCK, .block_ms = 10,
	    .watchers = 256 });
}

static void
reaped_scenario(void *arg)
{
	struct shm_arena *a = arg;

	/* It died asleep: the word says so, and nobody is asleep on it. */
	atomic_store(&shm_mb(a, 0)->m->sleeping, SHM_LANE_BIT(SHM_LANE_MAIN));
	CHILD_CHECK(actor_reaped(a, 0, 0, 9, NULL) == 0);
	CHILD_CHECK(wakes == 0);
	CHILD_CHECK(shm_actor_state(a, 0) == SHM_ACTOR_DOWN);
}

/*
 * An actor that dies asleep, nobody sending to it blocked, costs actord no
 * FUTEX_WAKE: its consumer is the one that died.
 */
START_TEST(reaped_idle_actor_wakes_nobody)
{
	struct shm_arena *a = actors();

	ck_assert_int_eq(in_trapped_child(reaped_scenario, a), 0);
	shm_detach(a);
}
END_TEST

/* --- reaps ------------------------------------------------------------------ */

#define WAIT		10000	/* ms: a bound, never an expectation */
#define NWORKERS	40
#define WALK_US		2000	/* what a walk of the children is said to cost */
#define SWEEP_LATE_MS	1000	/* actord.c: 1000 times that, at most 1 s */

/*
 * waitid is wrapped (this program's definition is the one libactord.a
 * links to): when actord first walked every child (a sweep's
 * waitid(P_ALL)), 0 if it has not since this was cleared.
 */
static uint64_t first_walk_ms;

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
waitid(idtype_t idtype, id_t id, siginfo_t *si, int options)
{
	if (idtype == P_ALL && first_walk_ms == 0)
		first_walk_ms = mono_ms();
	return (int)syscall(SYS_waitid, idtype, id, si, options, NULL);
}

/* NWORKERS instances of a function child, running. */
static struct actord *
workers_up(void)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	spec->root.intensity = 4 * NWORKERS;	/* the group's too */
	c = ts_add_fn(&spec->root, "g", ts_fn_run, NULL);
	c->instances = NWORKERS;
	c->start_timeout = 60000;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_msg(ts_wait_state(ad, "/", NS_RUNNING, 40000),
	    "root not running: %s", ad->message);
	return ad;
}

/* Descriptors of this process that are pidfds. */
static int
count_pidfds(void)
{
	char path[300], link[64];
	struct dirent *de;
	DIR *d;
	ssize_t r;
	int n = 0;

	ck_assert_ptr_nonnull(d = opendir("/proc/self/fd"));
	while ((de = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		r = readlink(path, link, sizeof(link) - 1);
		if (r <= 0)
			continue;
		link[r] = '\0';
		if (strcmp(link, "anon_inode:[pidfd]") == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* Whether this process may make an io_uring ring. */
static bool
have_io_uring(void)
{
	struct io_uring_params p;
	int fd;

	memset(&p, 0, sizeof(p));
	if ((fd = (int)syscall(SYS_io_uring_setup, 2, &p)) == -1)
		return false;
	close(fd);
	return (p.features & IORING_FEAT_NODROP) != 0;
}

/*
 * Every worker's death is an event of its own, and none takes a
 * descriptor of actord's table: its pidfd is held by the ring
 * (deathwatch.c).  Without io_uring here, in the table.
 */
START_TEST(deaths_watched_without_descriptors)
{
	bool ring = have_io_uring();
	struct actord *ad = workers_up();

	ck_assert_uint_eq(ad->nwatched, NWORKERS);
	ck_assert(ring == (ad->dw != NULL));
	ck_assert_int_eq(count_pidfds(), (ring ? 0 : NWORKERS));
	actord_free(ad);
}
END_TEST

/*
 * All the workers killed at once: their SIGCHLDs merge, but each death is
 * an event of its own, reaped by its pid, and each comes back; no child
 * is left a zombie.  actord walks its children (a sweep) only for orphans
 * then: no sooner than 1000 times what a walk costs (said to be 2 ms
 * here), where it is 100 times while a worker is not watched.
 */
START_TEST(merged_deaths_reaped_without_a_sweep)
{
	struct actord *ad = workers_up();
	pid_t old[NWORKERS];
	char path[32];
	uint64_t t_kill;
	siginfo_t si;
	int i;

	for (i = 0; i < NWORKERS; i++) {
		snprintf(path, sizeof(path), "/g/%d", i);
		ck_assert_int_gt(old[i] = ts_pid(ad, path), 0);
	}
	ts_run_for(ad, 50);
	ad->sweep_us = WALK_US;
	first_walk_ms = 0;
	t_kill = mono_ms();
	for (i = 0; i < NWORKERS; i++)
		ck_assert_int_eq(kill(old[i], SIGKILL), 0);
	for (i = 0; i < NWORKERS; i++) {
		snprintf(path, sizeof(path), "/g/%d", i);
		ck_assert_msg(ts_wait_new_pid(ad, path, old[i], WAIT),
		    "%s did not come back", path);
	}
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	/* Past when a sweep paced at 100 times its cost would come. */
	if (mono_ms() < t_kill + SWEEP_LATE_MS / 2)
		ts_run_for(ad, (int)(t_kill + SWEEP_LATE_MS / 2 - mono_ms()));
	ck_assert_msg(first_walk_ms == 0 ||
	    first_walk_ms >= t_kill + SWEEP_LATE_MS, "a sweep %llu ms after "
	    "the deaths", (unsigned long long)(first_walk_ms - t_kill));
	for (i = 0; i < NWORKERS; i++) {
		memset(&si, 0, sizeof(si));
		ck_assert_int_eq((int)syscall(SYS_waitid, P_PID, old[i], &si,
		    WEXITED | WNOHANG | WNOWAIT | __WALL, NULL), -1);
		ck_assert_int_eq(errno, ECHILD);
	}
	ck_assert_uint_eq(ad->nwatched, NWORKERS);
	actord_free(ad);
}
END_TEST

/*
 * From now on, io_uring_setup fails here with ENOSYS, as under Docker's
 * default seccomp profile or kernel.io_uring_disabled.
 */
static void
refuse_io_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	ck_assert_int_eq(install_filter(f, sizeof(f) / sizeof(f[0])), 0);
}

/*
 * Where io_uring is refused, each worker's pidfd is watched in the loop
 * instead (worker.c), while the table has room: every death is still
 * reaped by its pid and comes back, no zombie left.  The filter stays
 * with the process: under CK_FORK=no this test runs last.
 */
START_TEST(deaths_watched_in_the_loop_without_io_uring)
{
	struct actord *ad;
	pid_t old[NWORKERS];
	char path[32];
	siginfo_t si;
	int i;

	refuse_io_uring();
	ck_assert(!have_io_uring());
	ad = workers_up();
	ck_assert_ptr_null(ad->dw);
	ck_assert_uint_eq(ad->nwatched, NWORKERS);
	ck_assert_int_eq(count_pidfds(), NWORKERS);
	for (i = 0; i < NWORKERS; i++) {
		snprintf(path, sizeof(path), "/g/%d", i);
		ck_assert_int_gt(old[i] = ts_pid(ad, path), 0);
		ck_assert_int_eq(kill(old[i], SIGKILL), 0);
	}
	for (i = 0; i < NWORKERS; i++) {
		snprintf(path, sizeof(path), "/g/%d", i);
		ck_assert_msg(ts_wait_new_pid(ad, path, old[i], WAIT),
		    "%s did not come back", path);
		memset(&si, 0, sizeof(si));
		ck_assert_int_eq((int)syscall(SYS_waitid, P_PID, old[i], &si,
		    WEXITED | WNOHANG | WNOWAIT | __WALL, NULL), -1);
		ck_assert_int_eq(errno, ECHILD);
	}
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert_uint_eq(ad->nwatched, NWORKERS);
	ck_assert_int_eq(count_pidfds(), NWORKERS);
	actord_free(ad);
}
END_TEST

static volatile sig_atomic_t getpids;	/* getpid()s trapped in the child */
static pid_t child_pid;

/* A trapped getpid: counted, and answered as the kernel would have. */
static void
on_getpid(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	getpids++;
#ifdef __x86_64__
	((ucontext_t *)uc)->uc_mcontext.gregs[REG_RAX] = child_pid;
#endif
}

static void
trap_getpid(void)
{
	child_pid = (pid_t)syscall(SYS_getpid);
	if (shm_test_trap_syscall(SYS_getpid, on_getpid) == -1)
		_exit(90);
}

/*
 * actord opens a producer slot at every reap (for the dead's error
 * answers and Terminateds); a client opens one per thread.  Finding a
 * free slot behind many taken ones reads the pid once, not once per
 * slot looked at (a system call each: a million for 1,000 producers).
 */
START_TEST(producer_open_reads_the_pid_once)
{
	struct shm_mailbox_layout mb;
	struct shm_layout l;
	struct shm_arena *a;
	struct shm_producer *p[60], *q;
	char err[SHM_ERRBUF];
	pid_t pid;
	int i;

#ifndef __x86_64__
	return;			/* the trap answers getpid through RAX */
#endif
	memset(&mb, 0, sizeof(mb));
	mb.capacity = 16;
	mb.cell = 128;
	mb.sys_capacity = 16;
	mb.reply_capacity = 16;
	mb.overflow = SHM_OVERFLOW_BLOCK;
	memset(&l, 0, sizeof(l));
	l.nmailboxes = 1;
	l.mailboxes = &mb;
	l.nproducers = 64;
	l.dl_capacity = 64;
	ck_assert_msg(shm_create(&l, "pid", &a, err, sizeof(err)) == 0, "%s",
	    err);
	for (i = 0; i < 60; i++)
		ck_assert_int_eq(shm_producer_open(a, &p[i]), 0);
	if ((pid = fork()) == 0) {
		trap_getpid();
		CHILD_CHECK(getpid() == child_pid && getpids == 1);
		getpids = 0;
		CHILD_CHECK(shm_producer_open(a, &q) == 0);
		CHILD_CHECK(getpids <= 1);
		_exit(0);
	}
	ck_assert_int_ge(pid, 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	for (i = 0; i < 60; i++)
		shm_producer_close(p[i]);
	shm_detach(a);
}
END_TEST

static Suite *
death_cost_suite(void)
{
	Suite *s = suite_create("death_cost");
	TCase *tc = tcase_create("wakes");

	tcase_add_test(tc, wake_all_wakes_only_sleepers);
	tcase_add_test(tc, grant_wakes_as_many_as_its_turns);
	tcase_add_test(tc, reaped_idle_actor_wakes_nobody);
	tcase_add_test(tc, producer_open_reads_the_pid_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("reaps");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, deaths_watched_without_descriptors);
	tcase_add_test(tc, merged_deaths_reaped_without_a_sweep);
	tcase_add_test(tc, deaths_watched_in_the_loop_without_io_uring);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(death_cost_suite());
}
