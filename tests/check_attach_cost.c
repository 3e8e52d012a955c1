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
 * anyway (munmaps are made to trap, with seccomp).
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#if defined(__x86_64__)
#include <asm/prctl.h>
#include <ucontext.h>
#endif

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
		ck_assert_int_eq(shm_producer_open_own(a, i, 0, &p), 0);
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

/* actor_attach to mailbox idx in a child, as actord starts one. */
static struct cost
attach_child(struct shm_arena *ar, uint32_t idx)
{
	struct cost c;
	struct actor *a;
	char err[ACTOR_ERRBUF], num[16];
	int p[2];
	long f0;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	if ((pid = fork()) == 0) {
		memset(&c, 0, sizeof(c));
		snprintf(num, sizeof(num), "%d", shm_fd(ar));
		setenv(ACTOR_ENV_ARENA, num, 1);
		snprintf(num, sizeof(num), "%d", shm_layout_fd(ar));
		setenv(SHM_ENV_LAYOUT_FD, num, 1);
		snprintf(num, sizeof(num), "%u", idx);
		setenv(ACTOR_ENV_INDEX, num, 1);
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
	char err[ACTOR_ERRBUF], num[16];
	long before;
	pid_t pid;
	int rc;

	before = arena_pages(ar);
	if ((pid = fork()) == 0) {
		snprintf(num, sizeof(num), "%d", shm_fd(ar));
		setenv(ACTOR_ENV_ARENA, num, 1);
		snprintf(num, sizeof(num), "%d", shm_layout_fd(ar));
		setenv(SHM_ENV_LAYOUT_FD, num, 1);
		setenv(ACTOR_ENV_INDEX, "0", 1);
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
	char err[ACTOR_ERRBUF], num[16];
	pid_t pid;
	int rc;

	if ((pid = fork()) == 0) {
		snprintf(num, sizeof(num), "%d", shm_fd(ar));
		setenv(ACTOR_ENV_ARENA, num, 1);
		snprintf(num, sizeof(num), "%d", shm_layout_fd(ar));
		setenv(SHM_ENV_LAYOUT_FD, num, 1);
		setenv(ACTOR_ENV_INDEX, "0", 1);
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
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(attach_cost_suite());
}
