/*
 * check_wake_pages.c: what an actor asleep in actor_run touches when one
 * message wakes it.  After a long sleep its TLB and caches are cold, and
 * each page it touches costs a page walk (0.04 to 0.3 us on a VM, as the
 * page tables' lines are cached or not: tools/bench/bench_pagewalk.c; in
 * tools/bench/bench_scale.c, sparse, 10,000 actors each wake ten times a
 * second), so the wake-up path keeps to its stack, its heap (the
 * handle and the arena handle), its mailbox's pages in the arena and its
 * thread block (where the kernel keeps rseq), and never reads:
 *
 *   - the process-local views of other mailboxes (shm/'s mb[]): its own
 *     view is kept beside the arena handle (shm_consume);
 *   - the program's data or bss: the run loop reads the actor's stop, not
 *     libactor's global that SIGTERM sets.
 *
 * A view page read is caught by making mb[] unreadable; the rest by the
 * kernel's accessed bits: /proc/PID/clear_refs, one message, then the
 * Referenced pages of each mapping in /proc/PID/smaps.
 *
 * And what a sleeper makes for its senders: the pages of cells ahead of
 * its head, which a sender then maps with the page it faults on (mincore
 * of the lane), none before a message came.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm_impl.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"
#include "worker/actor.h"

#define NBOX		4
#define ME		2	/* the mailbox the sleeper consumes */
#define WAIT_MS		5000

/* What the sleeper and the test share (MAP_SHARED). */
struct seen {
	_Atomic uint32_t handled;
	_Atomic uintptr_t tls;		/* &errno in the sleeper */
};

/* Pages of the sleeper's memory a wake-up referenced, by kind. */
struct refs {
	long	 data;		/* the program's data and bss */
	long	 anon;		/* anonymous: neither stack, heap nor TLS */
	char	 what[512];	/* the first such mapping */
};

static struct shm_arena *
arena(void)
{
	return shm_test_actors_up(&(struct shm_test_actors){ .n = NBOX,
	    .cap = 64, .rcap = 16, .ov = SHM_OVERFLOW_REJECT, .watchers = 16 });
}

static void
tell(struct actor *c, uint32_t tag)
{
	struct actor_ref to = { ME, ACTOR_ANY };

	ck_assert_int_eq(actor_tell(c, to, tag, "wake", 4), 0);
}

/*
 * A consumer's wake-up never reads mb[], where the views of the mailboxes
 * it sends to are: its own is beside the arena handle.  With mb[] made
 * unreadable, it still takes its message, and waits and times out.
 */
START_TEST(test_own_view_beside_handle)
{
	struct shm_arena *ar = arena();
	struct actor *me = shm_test_open(ar, ME), *c = shm_test_open(ar, -1);
	struct actor_msg m;
	size_t views = (size_t)((unsigned char *)ar->sv -
	    (unsigned char *)ar->mb);

	tell(c, 1);
	tell(c, 2);
	ck_assert_int_eq(actor_recv(me, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 1);
	ck_assert_int_eq(mprotect(ar->mb, views, PROT_NONE), 0);
	ck_assert_int_eq(actor_recv(me, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 2);
	ck_assert_int_eq(actor_recv(me, &m, 1000000), ACTOR_ETIMEDOUT);
	ck_assert_int_eq(mprotect(ar->mb, views, PROT_READ | PROT_WRITE), 0);
	actor_close(c);
	actor_close(me);
	shm_detach(ar);
}
END_TEST

static int
count(struct actor *a, const struct actor_msg *m, void *arg)
{
	struct seen *s = arg;

	(void)a;
	(void)m;
	atomic_fetch_add(&s->handled, 1);
	return 0;
}

/* Until the sleeper has handled n and sleeps again: bounded. */
static void
until_handled(pid_t pid, struct seen *s, uint32_t n)
{
	int	 i;

	for (i = 0; i < WAIT_MS; i++) {
		if (atomic_load(&s->handled) >= n &&
		    tcheck_proc_state(pid) == 'S')
			return;
		usleep(1000);
	}
	ck_abort_msg("sleeper %d handled %u of %u", (int)pid,
	    atomic_load(&s->handled), n);
}

/*
 * A process asleep in actor_run on mailbox ME of ar, counting what it
 * handles in *sp (shared with the test, which unmaps it).
 */
static pid_t
sleeper(struct shm_arena *ar, struct seen **sp)
{
	struct actor *me;
	struct seen *s;
	pid_t	 pid;

	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED |
	    MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(s, MAP_FAILED);
	memset(s, 0, sizeof(*s));
	if ((pid = fork()) == 0) {
		me = shm_test_open(ar, ME);
		atomic_store(&s->tls, (uintptr_t)&errno);
		(void)actor_run(me, count, NULL, s);
		_exit(0);
	}
	ck_assert_int_gt(pid, 0);
	*sp = s;
	return pid;
}

static void
clear_refs(pid_t pid)
{
	char	 path[64];
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	f = fopen(path, "we");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fputs("1", f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

/*
 * The pages pid referenced since clear_refs, in the mappings that a
 * wake-up must leave alone: the program's (exe) writable ones and the
 * anonymous one right after them (its bss), and any other private
 * anonymous mapping but the stack, the heap and the one holding tls.
 */
static void
read_refs(pid_t pid, const char *exe, uintptr_t tls, struct refs *r)
{
	char	 path[64], line[512], hdr[512] = "", perm[8], name[PATH_MAX];
	unsigned long lo, hi, prog_end = 0, kb;
	long	 page = sysconf(_SC_PAGESIZE);
	int	 kind = 0;	/* 1: data, 2: anon, 0: neither */
	FILE	*f;

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		name[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &lo, &hi,
		    perm, name) >= 3) {
			kind = 0;
			if (strcmp(name, exe) == 0) {
				prog_end = hi;
				kind = perm[1] == 'w' ? 1 : 0;
			} else if (name[0] == '\0' && perm[3] == 'p') {
				if (lo == prog_end)
					kind = 1;	/* the bss */
				else if (tls < lo || tls >= hi)
					kind = 2;
			}
			snprintf(hdr, sizeof(hdr), "%s", line);
			continue;
		}
		if (kind == 0 || sscanf(line, "Referenced: %lu kB", &kb) != 1)
			continue;
		if (kb > 0 && r->what[0] == '\0')
			snprintf(r->what, sizeof(r->what), "%s", hdr);
		if (kind == 1)
			r->data += (long)kb * 1024 / page;
		else
			r->anon += (long)kb * 1024 / page;
	}
	fclose(f);
}

/*
 * A sleeper in actor_run, woken by one message at a time: it reads no
 * page of the program's data or bss, and no anonymous page but its stack,
 * heap and thread block (no view in mb[]).  The least of a few wake-ups,
 * so that nothing else the process might do once is counted.
 */
START_TEST(test_wake_touches_no_data)
{
	struct shm_arena *ar = arena();
	struct actor *c = shm_test_open(ar, -1);
	struct seen *s;
	struct refs r, least;
	char	 exe[PATH_MAX];
	ssize_t	 n;
	pid_t	 pid;
	int	 i, st;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	pid = sleeper(ar, &s);
	/* Its first messages make what it keeps (views, cell pages). */
	for (i = 1; i <= 3; i++) {
		tell(c, 1);
		until_handled(pid, s, (uint32_t)i);
	}
	for (i = 4; i <= 8; i++) {
		clear_refs(pid);
		tell(c, 1);
		until_handled(pid, s, (uint32_t)i);
		read_refs(pid, exe, atomic_load(&s->tls), &r);
		if (i == 4 || r.data + r.anon < least.data + least.anon)
			least = r;
	}
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
#if defined(__SANITIZE_ADDRESS__)
	/* ASan's shadow memory, anonymous, is read on every access. */
	least.data = least.anon = 0;
#endif
	ck_assert_msg(least.data == 0 && least.anon == 0, "a wake-up "
	    "referenced %ld pages of data, %ld anonymous: %s", least.data,
	    least.anon, least.what);
	actor_close(c);
	shm_detach(ar);
	munmap(s, sizeof(*s));
}
END_TEST

/*
 * The wake-up's code lies together (SHM_RECV), no send function among it:
 * the sends' hot code (SHM_HOT) took some 6 KiB between its functions.
 */
START_TEST(test_wake_code_together)
{
	const uintptr_t recv[] = {
		(uintptr_t)shm_pending, (uintptr_t)shm_take_one,
		(uintptr_t)shm_wait, (uintptr_t)actor_recv,
		(uintptr_t)actor_done, (uintptr_t)actor_run,
	};
	const uintptr_t send[] = {
		(uintptr_t)shm_send_stamped, (uintptr_t)shm_send,
		(uintptr_t)shm_wake_consumer, (uintptr_t)actor_tell,
		(uintptr_t)actor_tell_timeout,
	};
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	size_t	 i;

	for (i = 0; i < sizeof(recv) / sizeof(recv[0]); i++) {
		lo = recv[i] < lo ? recv[i] : lo;
		hi = recv[i] > hi ? recv[i] : hi;
	}
	for (i = 0; i < sizeof(send) / sizeof(send[0]); i++)
		ck_assert_msg(send[i] < lo || send[i] > hi, "send function "
		    "%zu at %#lx, among the wake-up's [%#lx, %#lx]", i,
		    (unsigned long)send[i], (unsigned long)lo,
		    (unsigned long)hi);
}
END_TEST

/* Which of the first n pages of mailbox idx's main lane exist. */
static void
lane_pages(struct shm_arena *ar, uint32_t idx, unsigned char *vec, size_t n)
{
	const struct shm_lane_local *l = &shm_mb(ar, idx)->lane[SHM_LANE_MAIN];
	size_t	 i;

	ck_assert_uint_ge((size_t)l->cap * l->cell, n * SHM_PAGE);
	ck_assert_int_eq(mincore(l->cells, n * SHM_PAGE, vec), 0);
	for (i = 0; i < n; i++)
		vec[i] &= 1;
}

/*
 * The pages of mailbox idx's main lane that the first chunk of map_ahead
 * makes (wait.c): up to one past head's, when head is on the first page,
 * to the end of the chunk of eight pages, chunks aligned in the address
 * space (the windows of the kernel's fault-around hold two), where the
 * lane's cells begin after the control block's page.
 */
static size_t
first_chunk(struct shm_arena *ar, uint32_t idx)
{
	uintptr_t cells = (uintptr_t)shm_mb(ar, idx)->lane[SHM_LANE_MAIN].cells;

	return (SHM_ALIGN(cells + 2 * SHM_PAGE, 8 * SHM_PAGE) - cells) /
	    SHM_PAGE;
}

/*
 * A consumer about to sleep makes the pages of cells up to one past its
 * head's, a chunk of eight pages at a time (wait.c, map_ahead), so that
 * a sender faulting on head's page maps them with it; but only once a
 * message came: an idle actor's lane has no page but head's.
 */
START_TEST(test_map_ahead)
{
	struct shm_arena *ar = shm_test_actors_up(&(struct shm_test_actors){
	    .n = NBOX, .cap = 1024, .rcap = 16, .ov = SHM_OVERFLOW_REJECT,
	    .watchers = 16 });
	struct actor *c = shm_test_open(ar, -1);
	struct seen *s;
	unsigned char vec[16];
	size_t	 first = first_chunk(ar, ME), i;
	pid_t	 pid;
	int	 st;

	ck_assert_uint_ge(first, 2);
	ck_assert_uint_le(first, 9);
	pid = sleeper(ar, &s);
	until_handled(pid, s, 0);
	lane_pages(ar, ME, vec, 16);
	/* Head's page only: every look at the lane reads its cell. */
	ck_assert_msg(memcmp(vec + 1, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
	    15) == 0, "an idle actor's lane has pages: %d %d %d %d", vec[0],
	    vec[1], vec[2], vec[3]);
	tell(c, 1);
	until_handled(pid, s, 1);
	lane_pages(ar, ME, vec, 16);
	for (i = 0; i < 16; i++)
		ck_assert_msg(vec[i] == (i < first), "page %zu of the lane: "
		    "%d (the first chunk: %zu pages)", i, vec[i], first);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	actor_close(c);
	shm_detach(ar);
	munmap(s, sizeof(*s));
}
END_TEST

/* Is the page at p mapped in this process's page table (pagemap)? */
static int
page_present(int fd, const void *p)
{
	uint64_t e;
	off_t	 at = (off_t)((uintptr_t)p / SHM_PAGE * sizeof(e));

	if (pread(fd, &e, sizeof(e), at) != (ssize_t)sizeof(e))
		return -1;
	return (int)(e >> 63);
}

/*
 * A mailbox's control block and its main lane's first cells share a
 * window of the kernel's fault-around (the arena mapped at an address
 * aligned to SHM_FAULT_BLOCK, the mailbox beginning one in the memfd:
 * arena.c), and map_ahead makes its chunks aligned as the windows are,
 * so that a sender's one fault maps every page its consumer made ahead,
 * not just those the window happened to hold: in a process that never
 * touched the lane, after one send, the pages of cells of the first
 * chunk are in its page table (/proc/self/pagemap), the next ones not.
 * Before, a sender faulted again every three or four pages.  (The
 * kernel's default window, 64 KiB, is assumed.)
 */
START_TEST(test_sender_maps_chunk)
{
	struct shm_arena *ar = shm_test_actors_up(&(struct shm_test_actors){
	    .n = NBOX, .cap = 1024, .rcap = 16, .ov = SHM_OVERFLOW_REJECT,
	    .watchers = 16 });
	struct actor *c = shm_test_open(ar, -1), *d;
	const struct shm_lane_local *l = &shm_mb(ar, ME)->lane[SHM_LANE_MAIN];
	struct seen *s;
	size_t	 first = first_chunk(ar, ME);
	pid_t	 pid, snd;
	int	 st, fd, i, bad;

	ck_assert_uint_eq((uintptr_t)ar->base % SHM_FAULT_BLOCK, 0);
	ck_assert_uint_eq((uintptr_t)l->cells / SHM_FAULT_BLOCK,
	    (uintptr_t)shm_mb(ar, ME)->m / SHM_FAULT_BLOCK);
	pid = sleeper(ar, &s);
	until_handled(pid, s, 0);
	tell(c, 1);
	until_handled(pid, s, 1);
	/* A fork child maps no page of the arena's memfd it did not touch. */
	if ((snd = fork()) == 0) {
		d = shm_test_open(ar, -1);
		tell(d, 2);
		if ((fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0)
			_exit(2);
		bad = 0;
		for (i = 0; i < 16; i++)
			if (page_present(fd, l->cells + (size_t)i * SHM_PAGE) !=
			    ((size_t)i < first))
				bad |= 1 << i;
		_exit(bad == 0 ? 0 : 3);
	}
	ck_assert_int_gt(snd, 0);
	ck_assert_int_eq(shm_test_wait_exit(snd), 0);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	actor_close(c);
	shm_detach(ar);
	munmap(s, sizeof(*s));
}
END_TEST

/* This process's minor page faults so far. */
static long
minflt(void)
{
	struct rusage ru;

	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_minflt;
}

/*
 * A sender's first message to a mailbox it never touched costs it one
 * page fault, not two: the control block's page and the main lane's
 * first cells lie in one window of the kernel's fault-around (arena.c,
 * place_mailbox), so the fault on the first maps the other, even with
 * the default max_message, whose in-hand slot (16 pages and more) once
 * lay between them.  Mailboxes of the defaults (256-byte cells, 1,024 of
 * them, max_message 65,536), each with a message queued (its pages
 * exist, as a used mailbox's do); a fork child, whose page tables hold
 * no page of the arena, sends one message to each of NCOLD of them, its
 * process-local memory (views, handle) touched first.  Before: two
 * faults a mailbox (tools/bench/bench_scale.c, sparse: 0.09 faults a
 * message at 100 actors, against the bare futex floor's 0.04).
 */
#define NCOLD		24
#ifdef __SANITIZE_ADDRESS__
/* ASan's shadow of the pages touched faults too: a few more. */
#define COLD_FAULTS	(NCOLD + NCOLD / 2)
#else
#define COLD_FAULTS	NCOLD
#endif
START_TEST(test_sender_one_fault)
{
	struct shm_arena *ar = shm_test_actors_up(&(struct shm_test_actors){
	    .n = NCOLD + 1, .cap = 1024, .rcap = 64, .cell = 256,
	    .max_message = 65536, .ov = SHM_OVERFLOW_REJECT, .watchers = 64 });
	struct actor *c = shm_test_open(ar, -1), *d;
	struct shm_mbox_local *mb;
	struct actor_ref to;
	long	 before, faults;
	pid_t	 pid;
	uint32_t i;
	int	 ok;

	for (i = 0; i <= NCOLD; i++) {
		to = (struct actor_ref){ i, ACTOR_ANY };
		ck_assert_int_eq(actor_tell(c, to, 1, "used", 4), 0);
	}
	if ((pid = fork()) == 0) {
		d = shm_test_open(ar, -1);
		/* Its handle and code, on a mailbox not counted. */
		to = (struct actor_ref){ NCOLD, ACTOR_ANY };
		ok = actor_tell(d, to, 2, "warm", 4) == 0;
		/* What is this process's own: written (copied on write). */
		for (i = 0; i < NCOLD; i++) {
			mb = shm_mb(ar, i);
			mb->ahead = mb->ahead;
			mb->bad = mb->bad;
			ar->sv[i] = ar->sv[i];
			(void)shm_actor_state(ar, i);
		}
		before = minflt();
		for (i = 0; i < NCOLD; i++) {
			to = (struct actor_ref){ i, ACTOR_ANY };
			ok &= actor_tell(d, to, 2, "cold", 4) == 0;
		}
		faults = minflt() - before;
		if (!ok)
			_exit(2);
		fprintf(stderr, "sender_one_fault: %ld faults for %d "
		    "mailboxes\n", faults, NCOLD);
		_exit(faults <= COLD_FAULTS ? 0 : 3);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

static Suite *
wake_suite(void)
{
	Suite	*s = suite_create("wake_pages");
	TCase	*tc = tcase_create("wake");

	tcase_add_test(tc, test_own_view_beside_handle);
	tcase_add_test(tc, test_wake_touches_no_data);
	tcase_add_test(tc, test_wake_code_together);
	tcase_add_test(tc, test_map_ahead);
	tcase_add_test(tc, test_sender_maps_chunk);
	tcase_add_test(tc, test_sender_one_fault);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(wake_suite());
}
