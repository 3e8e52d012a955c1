/*
 * check_attach_cost.c: what a process pays to become an actor
 * (actor_attach) must not grow with the arena, and it maps only the
 * pages it uses (issue 13: a one_for_all restart of N actors is N such
 * starts in a row).  Each case attaches in a forked child, as actord's
 * workers do (the environment names the arena's descriptors), and the
 * child reports what its attach cost: its minor page faults
 * (getrusage), and the pages of the arena's two memfds that its own
 * mappings hold (Rss in /proc/self/smaps).  A read fault on a file
 * mapping maps every page around it that exists (the kernel's fault-
 * around, up to 16): attach reads its own entries of the layout with
 * pread and claims its producer slot with a write, so that it maps
 * neither its neighbours' entries nor their slots.  A mailbox used for
 * more than a lap costs the same as a fresh one: actord recovers a dead
 * consumer's cells when it reaps it (actor_reaped), not the next
 * incarnation at its attach.  And it asks the CPU nothing: a CPUID traps
 * in a VM, so what the hot paths may use is read from what the dynamic
 * loader found at exec; CPUIDs are counted by making them fault
 * (arch_prctl ARCH_SET_CPUID), where the CPU can.  Closing the actor
 * unmaps none of the arena: the worker is about to exit, which unmaps it
 * anyway (munmaps are made to trap, with seccomp).  And SIGTERM stops
 * actor_run without a message: the actor writes no page of the arena to
 * stop, and it stops whenever the signal lands, asleep, spinning or busy.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#if defined(__x86_64__)
#include <asm/prctl.h>
#include <ucontext.h>
#endif

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"
#include "worker/actor.h"

#define USED	1000		/* the mailbox the child attaches to */

/* What the child of attach_child measured, written on a pipe. */
struct cost {
	long	 faults;	/* minor faults of actor_attach */
	long	 data_kb;	/* Rss of its mapping of the data memfd */
	long	 layout_kb;	/* ... of the layout memfd */
	int	 rc;		/* actor_attach's */
};

/*
 * An arena of n small mailboxes and actord's producer pool, mailbox idx
 * configured as actord configures an actor's (the others lazy: never
 * written, as spares).  Every page of the layout and of the producer
 * slots is written, as when every mailbox has a worker that attached.
 */
static struct shm_arena *
arena_of(uint32_t n, uint32_t idx, uint32_t cap)
{
	struct shm_mailbox_layout *mb;
	struct shm_layout l;
	struct shm_arena *a;
	struct shm_producer *p;
	char err[SHM_ERRBUF], path[32];
	uint32_t i;

	ck_assert_ptr_nonnull(mb = calloc(n, sizeof(*mb)));
	for (i = 0; i < n; i++) {
		mb[i].capacity = i == idx ? cap : 16;
		mb[i].cell = 256;
		mb[i].sys_capacity = 16;
		mb[i].reply_capacity = 16;
		mb[i].overflow = SHM_OVERFLOW_BLOCK;
		mb[i].block_timeout_ms = 1000;
		mb[i].state_size = (uint32_t)actor_region_size(0, ACTOR_WATCHERS, 16);
		mb[i].lazy = i != idx;
	}
	memset(&l, 0, sizeof(l));
	l.nmailboxes = n;
	l.mailboxes = mb;
	l.nproducers = SHM_MAX_PRODUCERS;
	l.dl_capacity = 64;
	ck_assert_msg(shm_create(&l, "attach-cost", &a, err, sizeof(err)) ==
	    0, "shm_create: %s", err);
	free(mb);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/m%u", i);
		ck_assert_int_eq(shm_actor_set_path(a, i, path), 0);
	}
	ck_assert_int_eq(actor_configure(a, idx, NULL), 0);
	ck_assert_uint_eq(actor_prepare_start(a, idx), 1);
	shm_actor_set_state(a, idx, SHM_ACTOR_UP);
	/* Each slot taken once: its page exists. */
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(shm_producer_open_own(a, i, &p), 0);
		shm_producer_close(p);
	}
	return a;
}

static int
drop(void *arg, enum shm_lane lane, const struct shm_msg *m, const void *pl)
{
	(void)arg;
	(void)lane;
	(void)m;
	(void)pl;
	return 0;
}

/* More than a lap of messages through mailbox idx's main lane. */
static void
use(struct shm_arena *a, uint32_t idx, uint32_t cap)
{
	struct shm_producer *p;
	struct shm_msg m;
	uint64_t body = 0;
	uint32_t i, sent = 0;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	m.tag = 7;
	m.len = sizeof(body);
	while (sent < cap + cap / 2) {
		for (i = 0; i < cap / 2; i++, sent++)
			ck_assert_int_eq(shm_send(p, idx, SHM_LANE_MAIN, &m,
			    &body, 0), 0);
		ck_assert_int_eq(shm_drain(a, idx, SHM_LANES_ALL, 0, drop,
		    NULL), (int)(cap / 2));
	}
	shm_producer_close(p);
}

/* Rss in kB of this process's mapping that starts at base, or -1. */
static long
rss_kb(const void *base)
{
	char line[512];
	unsigned long lo;
	long kb = -1;
	bool in = false;
	FILE *f;

	if ((f = fopen("/proc/self/smaps", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-", &lo) == 1 && strchr(line, '-') !=
		    NULL && strstr(line, " kB") == NULL) {
			in = lo == (unsigned long)(uintptr_t)base;
			continue;
		}
		if (in && sscanf(line, "Rss: %ld", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static long
faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* The environment actord gives a worker of mailbox idx of ar. */
static void
attach_env(struct shm_arena *ar, uint32_t idx)
{
	char num[16];

	snprintf(num, sizeof(num), "%d", shm_fd(ar));
	setenv(ACTOR_ENV_ARENA, num, 1);
	snprintf(num, sizeof(num), "%d", shm_layout_fd(ar));
	setenv(SHM_ENV_LAYOUT_FD, num, 1);
	snprintf(num, sizeof(num), "%u", idx);
	setenv(ACTOR_ENV_INDEX, num, 1);
}

/* actor_attach to mailbox idx in a child, as actord starts one. */
static struct cost
attach_child(struct shm_arena *ar, uint32_t idx)
{
	struct cost c;
	struct actor *a;
	char err[ACTOR_ERRBUF];
	int p[2];
	long f0;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	if ((pid = fork()) == 0) {
		memset(&c, 0, sizeof(c));
		attach_env(ar, idx);
		f0 = faults();
		c.rc = actor_attach(&a, err, sizeof(err));
		c.faults = faults() - f0;
		if (c.rc == 0) {
			c.data_kb = rss_kb(actor_arena(a)->base);
			c.layout_kb = rss_kb(actor_arena(a)->lbase);
		}
		if (write(p[1], &c, sizeof(c)) != (ssize_t)sizeof(c))
			_exit(1);
		_exit(0);
	}
	ck_assert_int_ge(pid, 0);
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, sizeof(c)), (ssize_t)sizeof(c));
	close(p[0]);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	ck_assert_int_eq(c.rc, 0);
	return c;
}

/*
 * Attaching faults in as many pages with 10,000 mailboxes as with 16:
 * what attach allocates for the arena's slots (4,096 + 2 a mailbox, 4
 * bytes each) is faulted in only as it is written, never cleared whole.
 */
START_TEST(attach_faults_flat_in_mailboxes)
{
	struct shm_arena *small = arena_of(16, 0, 16);
	struct shm_arena *big = arena_of(10000, 0, 16);
	struct cost s, b;

	s = attach_child(small, 0);
	b = attach_child(big, 0);
	ck_assert_msg(b.faults <= s.faults + 4, "attach faulted %ld pages "
	    "in with 10,000 mailboxes, %ld with 16", b.faults, s.faults);
	shm_detach(small);
	shm_detach(big);
}
END_TEST

/*
 * Attached to a mailbox used for more than a lap, with every slot's page
 * and every page of the layout written: the child maps its mailbox's
 * control page, its slot's page, and one read's worth of the layout
 * (its entry of the actor table, which its sends read).
 */
START_TEST(attach_maps_only_what_it_uses)
{
	struct shm_arena *ar = arena_of(2000, USED, 1024);
	struct cost c;

	use(ar, USED, 1024);
	c = attach_child(ar, USED);
	ck_assert_msg(c.data_kb >= 0 && c.data_kb <= 16 && c.layout_kb >= 0 &&
	    c.layout_kb <= 64, "attach mapped %ld kB of the arena, %ld kB of "
	    "the layout", c.data_kb, c.layout_kb);
	shm_detach(ar);
}
END_TEST

/* Pages of the arena's data memfd that exist (written or read once). */
static long
arena_pages(const struct shm_arena *ar)
{
	struct stat st;

	ck_assert_int_eq(fstat(shm_fd(ar), &st), 0);
	return (long)(st.st_blocks * 512 / 4096);
}

/*
 * An actor that waits for its first message and times out allocates no
 * page of the arena: reading a memfd hole allocates one, and a lane that
 * nothing was ever sent to has only holes for cells (its first look
 * before a sleep, shm_pending, goes by its tail instead).  Before, every
 * idle actor held a page of its main lane's cells and one of its reply
 * lane's that nobody had written.
 */
START_TEST(idle_actor_allocates_no_cells)
{
	struct shm_arena *ar = arena_of(16, 0, 1024);
	struct actor *a;
	struct actor_msg m;
	char err[ACTOR_ERRBUF];
	long before;
	pid_t pid;
	int rc;

	before = arena_pages(ar);
	if ((pid = fork()) == 0) {
		attach_env(ar, 0);
		if (actor_attach(&a, err, sizeof(err)) != 0)
			_exit(10);
		rc = actor_recv(a, &m, 20 * 1000 * 1000);
		_exit(rc == ACTOR_ETIMEDOUT ? 0 : 11);
	}
	ck_assert_int_ge(pid, 0);
	rc = shm_test_wait_exit(pid);
	ck_assert_msg(rc == 0, "child: %d", rc);
	ck_assert_msg(arena_pages(ar) == before, "an idle actor's wait made "
	    "%ld pages of the arena", arena_pages(ar) - before);
	shm_detach(ar);
}
END_TEST

#if defined(__x86_64__)
static volatile sig_atomic_t cpuids;

/* A faulting CPUID: counted, answered "nothing" (all zero), skipped. */
static void
on_cpuid(int sig, siginfo_t *si, void *uc)
{
	greg_t *r = ((ucontext_t *)uc)->uc_mcontext.gregs;

	(void)sig;
	(void)si;
	cpuids++;
	r[REG_RAX] = r[REG_RBX] = r[REG_RCX] = r[REG_RDX] = 0;
	r[REG_RIP] += 2;		/* 0f a2 */
}
#endif

/* Attaching (shm_attach_fds: what actor_attach does first) runs no CPUID. */
START_TEST(attach_asks_the_cpu_nothing)
{
#if defined(__x86_64__)
	struct shm_arena *ar = arena_of(16, 0, 16), *b;
	struct sigaction sa;
	char err[SHM_ERRBUF];
	pid_t pid;
	int rc;

	if ((pid = fork()) == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_cpuid;
		sa.sa_flags = SA_SIGINFO;
		if (sigaction(SIGSEGV, &sa, NULL) == -1)
			_exit(10);
		if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) == -1)
			_exit(0);	/* no CPUID faulting here */
		__asm__ __volatile__("cpuid" : : "a"(0) : "rbx", "rcx",
		    "rdx", "memory");
		if (cpuids != 1)
			_exit(11);	/* the trap does not count */
		cpuids = 0;
		rc = shm_attach_fds(shm_layout_fd(ar), shm_fd(ar), &b, err,
		    sizeof(err));
		_exit(rc != 0 ? 12 : cpuids > 0 ? 20 + (cpuids < 9 ? cpuids :
		    9) : 0);
	}
	ck_assert_int_ge(pid, 0);
	rc = shm_test_wait_exit(pid);
	ck_assert_msg(rc == 0, "child: %d (2x: attach ran x CPUIDs)", rc);
	shm_detach(ar);
#endif
}
END_TEST

#if defined(__x86_64__)
static const void *maps[3];		/* the arena's mappings in the child */
static volatile sig_atomic_t unmapped;	/* munmaps of one of them */

/* A trapped munmap: counted if it is of the arena, skipped either way. */
static void
on_munmap(int sig, siginfo_t *si, void *uc)
{
	greg_t *r = ((ucontext_t *)uc)->uc_mcontext.gregs;
	size_t i;

	(void)sig;
	(void)si;
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if ((const void *)(uintptr_t)r[REG_RDI] == maps[i])
			unmapped++;
	r[REG_RAX] = 0;
}
#endif

/*
 * An attached actor closed (as a worker does before it exits) leaves the
 * arena's three mappings (data, layout, its own views) to the exit:
 * munmap of each cost its stop about 6 us more (bench-scale, one_for_all).
 */
START_TEST(close_unmaps_nothing)
{
#if defined(__x86_64__)
	struct shm_arena *ar = arena_of(16, 0, 16);
	struct actor *a;
	char err[ACTOR_ERRBUF];
	pid_t pid;
	int rc;

	if ((pid = fork()) == 0) {
		attach_env(ar, 0);
		if (actor_attach(&a, err, sizeof(err)) != 0)
			_exit(10);
		maps[0] = actor_arena(a)->base;
		maps[1] = actor_arena(a)->lbase;
		maps[2] = actor_arena(a)->mb;
		if (shm_test_trap_syscall(SYS_munmap, on_munmap) == -1)
			_exit(11);
		actor_close(a);
		_exit(unmapped < 9 ? (int)unmapped : 9);
	}
	ck_assert_int_ge(pid, 0);
	rc = shm_test_wait_exit(pid);
	ck_assert_msg(rc == 0, "child: %d (< 10: munmaps of the arena)", rc);
	shm_detach(ar);
#endif
}
END_TEST

/* --- SIGTERM in actor_run ------------------------------------------------ */

/* What the test and its actor child both see (MAP_SHARED). */
struct term_shared {
	_Atomic int	 running;	/* the handler has run */
	_Atomic int	 stopped;	/* on_stop ran */
};

static struct term_shared *tsh;

static int
term_handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	(void)a;
	(void)m;
	(void)arg;
	atomic_store(&tsh->running, 1);
	return 0;
}

static void
term_on_stop(struct actor *a, void *arg)
{
	(void)a;
	(void)arg;
	atomic_store(&tsh->stopped, 1);
}

/* An actor of mailbox 0 in actor_run, in a child: 0 once it stopped. */
static pid_t
term_child(struct shm_arena *ar, enum actor_wait w)
{
	struct actor *a;
	char err[ACTOR_ERRBUF];
	pid_t pid;
	int rc;

	atomic_store(&tsh->running, 0);
	atomic_store(&tsh->stopped, 0);
	if ((pid = fork()) == 0) {
		attach_env(ar, 0);
		if (actor_attach(&a, err, sizeof(err)) != 0)
			_exit(10);
		actor_set_wait(a, w, -1);
		rc = actor_run(a, term_handle, term_on_stop, NULL);
		actor_close(a);
		_exit(rc != 0 ? 11 : atomic_load(&tsh->stopped) ? 0 : 12);
	}
	ck_assert_int_ge(pid, 0);
	return pid;
}

static void
term_shared_map(void)
{
	tsh = mmap(NULL, sizeof(*tsh), PROT_READ | PROT_WRITE, MAP_SHARED |
	    MAP_ANONYMOUS, -1, 0);
	ck_assert(tsh != MAP_FAILED);
}

/* Until pid exits, within ms: its status (shm_test_wait_exit), or -1. */
static int
term_wait(pid_t pid, int ms)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	for (i = 0; i < ms; i++) {
		if (shm_test_exited(pid))
			return shm_test_wait_exit(pid);
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	(void)shm_test_wait_exit(pid);
	return -1;
}

/*
 * SIGTERM to an actor asleep in actor_run: it stops (on_stop runs, exit
 * 0) and wrote nothing to stop: no page of the arena is made.  The Stop
 * it used to send itself wrote a cell of its system lane, a page of the
 * memfd made for it, which actord's repair then read after every death.
 */
START_TEST(sigterm_stop_writes_nothing)
{
	struct shm_arena *ar = arena_of(16, 0, 16);
	struct shm_mbox *m;
	long before;
	pid_t pid;
	int i, rc;

	term_shared_map();
	pid = term_child(ar, ACTOR_WAIT_SLEEP);
	m = shm_mb(ar, 0)->m;
	for (i = 0; i < 5000 && atomic_load(&m->sleeping) == 0; i++)
		usleep(1000);
	ck_assert_msg(atomic_load(&m->sleeping) != 0, "never asleep");
	before = arena_pages(ar);
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	rc = term_wait(pid, 10000);
	ck_assert_msg(rc == 0, "child: %d", rc);
	ck_assert_msg(arena_pages(ar) == before, "its stop made %ld pages of "
	    "the arena", arena_pages(ar) - before);
	munmap(tsh, sizeof(*tsh));
	shm_detach(ar);
}
END_TEST

#if defined(__x86_64__)
static volatile sig_atomic_t raised;

/*
 * A trapped FUTEX_WAIT: SIGTERM lands first (the first time), right
 * before the sleep, after every look the wait makes; then the wait is
 * made (FUTEX_PRIVATE_FLAG: not trapped; the same check of the word,
 * though no other process could wake it) and its result given back as
 * the system call's.
 */
static void
on_futex_wait(int sig, siginfo_t *si, void *uc)
{
	greg_t *r = ((ucontext_t *)uc)->uc_mcontext.gregs;
	long rc;

	(void)sig;
	(void)si;
	if (!raised) {
		raised = 1;
		raise(SIGTERM);
	}
	rc = syscall(SYS_futex, r[REG_RDI], FUTEX_WAIT | FUTEX_PRIVATE_FLAG,
	    r[REG_RDX], r[REG_R10], NULL, 0);
	r[REG_RAX] = rc == -1 ? -errno : rc;
}

/* FUTEX_WAIT (op 0, no flag) traps. */
static int
trap_futex_wait(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FUTEX_WAIT, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { sizeof(f) / sizeof(f[0]), f };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_futex_wait;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSYS, &sa, NULL) == -1 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) == -1)
		return -1;
	return 0;
}
#endif

/*
 * SIGTERM between the wait's last look and its sleep (made to land there:
 * the FUTEX_WAIT traps, and raises it first): the sleep does not begin,
 * for the poke moved the futex word, and the actor stops.  A poke that
 * only set a flag would leave it asleep for ever.
 */
START_TEST(sigterm_right_before_the_sleep_stops)
{
#if defined(__x86_64__)
	struct shm_arena *ar = arena_of(16, 0, 16);
	struct actor *a;
	char err[ACTOR_ERRBUF];
	pid_t pid;
	int rc;

	term_shared_map();
	if ((pid = fork()) == 0) {
		attach_env(ar, 0);
		if (actor_attach(&a, err, sizeof(err)) != 0)
			_exit(10);
		actor_set_wait(a, ACTOR_WAIT_SLEEP, -1);
		if (trap_futex_wait() == -1)
			_exit(11);
		rc = actor_run(a, term_handle, term_on_stop, NULL);
		_exit(rc != 0 ? 12 : !raised ? 13 : atomic_load(&tsh->stopped) ?
		    0 : 14);
	}
	ck_assert_int_ge(pid, 0);
	rc = term_wait(pid, 10000);
	ck_assert_msg(rc == 0, "child: %d (-1: still asleep)", rc);
	munmap(tsh, sizeof(*tsh));
	shm_detach(ar);
#endif
}
END_TEST

/*
 * SIGTERM at any moment of actor_run, under a stream of messages: asleep,
 * spinning, taking, in its handler, or between two of those (the poke
 * before the futex word is read, after, in the wait): it always stops,
 * within a bound.  Spin-then-sleep and sleep-only waits, in turn.
 */
START_TEST(sigterm_at_any_moment_stops)
{
	struct shm_arena *ar = arena_of(16, 0, 1024);
	struct shm_producer *p;
	struct shm_msg msg;
	struct timespec ts;
	pid_t pid;
	int i, k, st, rc;

	term_shared_map();
	ck_assert_int_eq(shm_producer_open(ar, &p), 0);
	memset(&msg, 0, sizeof(msg));
	msg.tag = 7;
	srandom(1);
	for (i = 0; i < 60; i++) {
		pid = term_child(ar, i % 2 ? ACTOR_WAIT_SLEEP :
		    ACTOR_WAIT_SPIN_SLEEP);
		for (k = 0; k < 5000 && !atomic_load(&tsh->running); k++) {
			(void)shm_offer(p, 0, SHM_LANE_MAIN, &msg, NULL);
			usleep(1000);
		}
		ck_assert_msg(atomic_load(&tsh->running), "never ran");
		/* A few messages, a random pause, then the signal. */
		for (k = random() % 8; k > 0; k--)
			(void)shm_offer(p, 0, SHM_LANE_MAIN, &msg, NULL);
		ts.tv_sec = 0;
		ts.tv_nsec = random() % 300000;
		nanosleep(&ts, NULL);
		ck_assert_int_eq(kill(pid, SIGTERM), 0);
		for (k = random() % 4; k > 0; k--)
			(void)shm_offer(p, 0, SHM_LANE_MAIN, &msg, NULL);
		rc = term_wait(pid, 10000);
		ck_assert_msg(rc == 0, "round %d: child %d", i, rc);
		st = 0;
		(void)actor_reaped(ar, 0, pid, st, NULL);
		(void)shm_drain(ar, 0, SHM_LANES_ALL, 0, drop, NULL);
	}
	shm_producer_close(p);
	munmap(tsh, sizeof(*tsh));
	shm_detach(ar);
}
END_TEST

static Suite *
attach_cost_suite(void)
{
	Suite *s = suite_create("attach_cost");
	TCase *tc = tcase_create("attach");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, attach_faults_flat_in_mailboxes);
	tcase_add_test(tc, attach_maps_only_what_it_uses);
	tcase_add_test(tc, attach_asks_the_cpu_nothing);
	tcase_add_test(tc, idle_actor_allocates_no_cells);
	tcase_add_test(tc, close_unmaps_nothing);
	tcase_add_test(tc, sigterm_stop_writes_nothing);
	tcase_add_test(tc, sigterm_right_before_the_sleep_stops);
	tcase_add_test(tc, sigterm_at_any_moment_stops);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(attach_cost_suite());
}
