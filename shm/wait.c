/*
 * wait.c: sleeping and waking: the consumer's futex word and "sleeping"
 * word, blocked senders' futex, spin-then-sleep, and the epoll doorbell.
 *
 * Owns: every futex and doorbell system call of shm/ (turns.c's included:
 * it calls the futex helpers here).  Must never make one
 * unless somebody is really asleep (producers look at "sleeping" first).
 * Futexes are shared between processes, so FUTEX_PRIVATE_FLAG is never
 * used.
 *
 * The read-once rule (shm.h): actord arms and disarms its own doorbell
 * and wakes a dead actor's waiters; "sleeping", the futex words and
 * fence_mode are atomic loads into locals, and a wrong value a worker
 * wrote costs at most a wake-up (a spurious one, or one found at the
 * next look), never a read out of bounds.
 *
 * No lost wake-up (consumer C, producer P):
 *   C: w = wake_word; sleeping = lanes; BARRIER; if (pending) stop;
 *      futex_wait(w)
 *   P: publish (store seq); FENCE; if (sleeping & lane) { CAS sleeping
 *      -> 0; wake_word++; FUTEX_WAKE }
 * (A producer may also wake a pure sleeper before it claims, to overlap
 * the wake-up with its copy (ring.c, shm_send_stamped); the look after
 * the publish is still made, so the early wake-up is only a hint.)
 * This is Dekker's pattern: each side stores, then loads what the other
 * stored, so each needs a StoreLoad barrier.  To keep it off the hot path
 * it is asymmetric: BARRIER is membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED),
 * which runs a full memory barrier on every CPU that runs a process
 * registered for it (every producer registers in shm_producer_open), and
 * FENCE is then only a compiler barrier.  After BARRIER either P's publish
 * is visible to C's pending check, or P's load of sleeping comes after the
 * barrier on P's CPU and sees the lanes.  A producer that could not
 * register uses a real fence (seq_cst).
 *
 * A membarrier costs the sleeper ~1-10 us and interrupts the producers'
 * CPUs, which is cheap next to a sleep that follows 20 us of fruitless
 * spinning, but not in pure-sleep mode where the consumer sleeps after
 * every message.  So a pure sleeper (or a doorbell user) switches its
 * mailbox to fence_mode: it sets the flag, issues one membarrier (after
 * which every producer either has its publish visible or reads the flag
 * and fences), and from then on sleeps with an ordinary fence; producers
 * pay a fence per message to that mailbox.  A spin-then-sleep consumer
 * does the same once its spins stop paying (SHM_NAPS_FENCE naps in a row:
 * then it no longer spins either), and clears the flag when it is busy
 * again (no barrier needed to stop fences): the cost of a sparse sleeper
 * then does not grow with the number of sleepers.
 *
 * A consumer that cannot issue membarrier while producers rely on it
 * sleeps in slices of 1 ms (a doorbell user is told to poll again), so a
 * wake-up is at worst late, never lost.  If P sees the lane bit, it bumps
 * wake_word after C read w, so futex_wait either returns at once (the word
 * changed) or is woken.  Only the producer that clears "sleeping" makes
 * the system call.
 *
 * A signal handler of the consumer's process wakes its wait without a
 * message (shm_poke): it sets the arena handle's poked, then moves
 * wake_word (and FUTEX_WAKEs if "sleeping" says so, for a handler run on
 * another thread).  C looks at poked wherever it looks at its lanes, each
 * look after it read w: a poke before a look is seen, one after it moved
 * the word FUTEX_WAIT compares (EAGAIN), one during the sleep interrupts
 * it (EINTR) or wakes it.
 *
 * The doorbell: a consumer waiting in epoll binds an abstract AF_UNIX
 * datagram socket named after the arena id and its mailbox index, arms
 * "sleeping" with SLEEP_DOORBELL, and a producer that finds it asleep sends
 * it one byte (non-blocking; errors are ignored because the consumer looks
 * at its lanes after every wake-up anyway).
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <linux/futex.h>
#include <linux/membarrier.h>

#if defined(__x86_64__)
#include <cpuid.h>
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define HAVE_X86_PLATFORM	1
#endif
#endif
#endif
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm_impl.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22	/* Linux 5.14 */
#endif

#define SPIN_CLOCK_EVERY	64	/* polls between clock reads */
/* A wait shorter than this reads the clock before its first poll. */
#define UNCLOCKED_MIN_NS	100000

static socklen_t bell_name(const struct shm_arena *, uint32_t,
		    struct sockaddr_un *);
static void	 ring_bell(struct shm_arena *, uint32_t, int *);
static void	 wake_blocked(struct shm_mbox *);
static int	 polls(struct shm_arena *, uint32_t, unsigned) SHM_HOT;
static int	 spin(struct shm_arena *, uint32_t, unsigned, int64_t)
	    SHM_RECV;
static int	 barrier_all(struct shm_arena *);
static int	 set_fence_mode(struct shm_arena *, struct shm_mbox *, uint32_t)
	    SHM_RECV;
static void	 map_ahead(struct shm_mbox_local *, uint64_t) SHM_RECV;
static void	 zmm_give_back(const struct shm_arena *) SHM_RECV;
static int	 nap(struct shm_arena *, uint32_t, unsigned, int, int64_t)
	    SHM_RECV;
static inline bool poked(struct shm_arena *);

#define SLICE_NS		1000000	/* sleep slice without membarrier */
/* XSAVE components: AVX-512 opmask, ZMM0-15's upper halves, ZMM16-31. */
#define XSTATE_AVX512		0xe0u
#define AHEAD_PAGES		1	/* pages of cells made past head's */
#define AHEAD_CHUNK		SHM_AHEAD_CHUNK	/* ... in chunks of this many */
#define WAKE_TRIES		64	/* CASes of "sleeping" before waking anyway */

/* May this process use the global expedited membarrier? */
void
shm_membarrier_init(struct shm_arena *a)
{
	long	 q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	a->membarrier = q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0;
}

/*
 * What this CPU offers the hot paths, once per attach.  RDPID for
 * shm_cpu: the CPU must have it (leaf 7, ECX bit 22) and the kernel must
 * keep the CPU number in TSC_AUX, which one reading against sched_getcpu
 * shows (a migration in between only costs RDPID).  PREFETCHW for a send
 * (leaf 0x80000001, ECX bit 8; shm_impl.h, prefetch_own).  AVX-512 and
 * XGETBV 1 for a sleeper's zmm_give_back.  Read from
 * what the dynamic loader found at exec (glibc's <sys/platform/x86.h>)
 * where it says: the four CPUIDs that asking the CPU takes trap in a VM,
 * a few microseconds of every actor's start (tests/check_attach_cost.c).
 */
void
shm_cpu_init(struct shm_arena *a)
{
#if defined(__x86_64__)
	uint64_t v;
	int	 cpu;
#ifdef HAVE_X86_PLATFORM
	a->zmm_reset = CPU_FEATURE_ACTIVE(AVX512F) &&
	    CPU_FEATURE_ACTIVE(XGETBV_ECX_1);
	a->prefetchw = CPU_FEATURE_ACTIVE(PREFETCHW);
	a->rdpid = false;
	if (!CPU_FEATURE_ACTIVE(RDPID))
		return;
#else
	unsigned eax, ebx, ecx, edx;

	a->prefetchw = __get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) != 0 &&
	    (ecx & (1u << 8)) != 0;
	a->rdpid = false;
	if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0 ||
	    (ecx & (1u << 22)) == 0)
		return;
#endif
	cpu = sched_getcpu();
	__asm__ __volatile__("rdpid %0" : "=r"(v));
	a->rdpid = cpu >= 0 && (uint64_t)cpu == (v & 0xfff);
#else
	a->rdpid = false;
	a->prefetchw = true;	/* __builtin_prefetch(p, 1): harmless */
#endif
}

/* Register this process for the consumers' barriers: 0, or -1. */
int
shm_membarrier_register(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED,
	    0, 0) == -1)
		return -1;
	return 0;
}

/*
 * The consumer's half of the barrier, after it stored "sleeping": 0 if
 * every registered producer is now fenced, -1 if it must sleep in slices.
 */
static int
barrier_all(struct shm_arena *a)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (a->membarrier && syscall(SYS_membarrier,
	    MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0)
		return 0;
	return -1;
}

/*
 * The futex system call: its result, or -errno.  On x86_64 the
 * instruction itself rather than libc's syscall(): a sleeper woken cold,
 * and a sender waking one, would otherwise touch libc's page of it (and
 * the PLT and GOT on the way) on every message.
 */
static inline long
futex_call(_Atomic uint32_t *w, int op, uint32_t val,
    const struct timespec *ts, uint32_t bits)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = (long)ts;
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = (long)bits;
	long ret;

	__asm__ __volatile__("syscall" : "=a"(ret) : "0"((long)SYS_futex),
	    "D"(w), "S"((long)op), "d"((long)val), "r"(r10), "r"(r8),
	    "r"(r9) : "rcx", "r11", "memory");
	return ret;
#else
	long ret = syscall(SYS_futex, w, op, val, ts, NULL, bits);

	return ret == -1 ? -errno : ret;
#endif
}

int
shm_futex_wait(_Atomic uint32_t *w, uint32_t val, int64_t timeout_ns)
{
	struct timespec ts, *tp = NULL;
	long	 rc;

	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		tp = &ts;
	}
	rc = futex_call(w, FUTEX_WAIT, val, tp, 0);
	return rc < 0 ? (int)rc : 0;
}

void
shm_futex_wake(_Atomic uint32_t *w, int n)
{
	(void)futex_call(w, FUTEX_WAKE, (uint32_t)n, NULL, 0);
}

/*
 * Sleep on w while it holds val, as a waiter of the bits given, until
 * deadline_ns (CLOCK_MONOTONIC, absolute; INT64_MAX: no deadline): 0 when
 * woken, or -errno (-ETIMEDOUT, -EAGAIN, -EINTR).
 */
int
shm_futex_wait_bits(_Atomic uint32_t *w, uint32_t val, uint32_t bits,
    int64_t deadline_ns)
{
	struct timespec ts, *tp = NULL;

	if (deadline_ns != INT64_MAX) {
		ts.tv_sec = deadline_ns / 1000000000;
		ts.tv_nsec = deadline_ns % 1000000000;
		tp = &ts;
	}
	if (syscall(SYS_futex, w, FUTEX_WAIT_BITSET, val, tp, NULL,
	    bits) == -1)
		return -errno;
	return 0;
}

/*
 * Wake up to n of the waiters on w whose bits meet these (INT_MAX: all).
 * The kernel walks w's hash bucket, oldest waiter first, until it has
 * woken n: asked for all, it walks every waiter on w (each another
 * sleeper's kernel stack, cold), whatever the bits.
 */
void
shm_futex_wake_bits(_Atomic uint32_t *w, uint32_t bits, int n)
{
	syscall(SYS_futex, w, FUTEX_WAKE_BITSET, n, NULL, NULL, bits);
}

/*
 * Wake the consumer of m if "sleeping" says it sleeps on lane, clearing
 * the word so that one sender makes the system call.  Its consumer writes
 * the word only as it falls asleep or wakes, so a compare-and-swap fails
 * a few times at most; a word that changes under every one is a worker's
 * lie (the word is in the arena), and after WAKE_TRIES the wake goes out
 * without clearing it, so that no worker holds a sender here, actord
 * included (tests/check_hostile_wake.c).  A wake nobody needed costs the
 * consumer a look at its lanes.
 */
void
shm_wake_consumer(struct shm_arena *a, uint32_t idx, struct shm_mbox *m,
    unsigned lane, int *bellfd)
{
	uint32_t	 s = atomic_load(&m->sleeping);
	unsigned	 tries;

	for (tries = 0; s & SHM_LANE_BIT(lane); tries++) {
		if (tries < WAKE_TRIES &&
		    !atomic_compare_exchange_weak(&m->sleeping, &s, 0))
			continue;
		/*
		 * One waiter, not every one: only the consumer's thread
		 * sleeps on wake_word (one thread at a time waits on a
		 * mailbox), and FUTEX_WAKE walks its hash bucket until it has
		 * woken as many as asked.  Asked for INT_MAX it walks the
		 * whole chain, each entry another sleeper's kernel stack,
		 * cold: with 10,000 actors asleep and 512 buckets (a host of
		 * 2 CPUs) some 20 of them, which was most of a sparse
		 * sender's CPU (bench-scale, sparse).
		 */
		if (s & SLEEP_DOORBELL) {
			ring_bell(a, idx, bellfd);
		} else {
			atomic_fetch_add(&m->wake_word, 1);
			shm_futex_wake(&m->wake_word, 1);
		}
		/* Counted after the wake, on the line of "sleeping". */
		atomic_fetch_add_explicit(&m->wakeups, 1, memory_order_relaxed);
		return;
	}
}

/*
 * After freeing cells: wake drop_oldest senders waiting for a head cell,
 * if there are any.  (Queued senders get their turns from ring.c.)
 */
void
shm_wake_senders(struct shm_mbox *m)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&m->space_waiters) > 0)
		shm_wake_space(m);
}

/* Every sender waiting on space_word (drop_oldest's) looks again. */
void
shm_wake_space(struct shm_mbox *m)
{
	atomic_fetch_add(&m->space_word, 1);
	shm_futex_wake(&m->space_word, INT_MAX);
}

/*
 * Every blocked sender looks again, queued or not: after a repair, a
 * recovery or a new configuration, when what they wait for may have
 * changed under them.  Rare; never per message.
 */
void
shm_wake_senders_force(struct shm_mbox *m)
{
	shm_wake_space(m);
	shm_turns_wake_all(m);
}

/*
 * The consumer and the blocked senders of a mailbox look again (a reap,
 * a dead sender's claim released): a FUTEX_WAKE only on a word somebody
 * may sleep on, as "sleeping", space_waiters and the line of turns tell.
 * A wake costs a walk of one bucket of the kernel's futex hash, which
 * every shared futex sleeper of the machine shares (256 buckets a
 * possible CPU): about 3 us at 10,000 sleeping actors on 2 CPUs, even on
 * a word nobody waits on, and a death used to make ten of them.  A
 * queue's words a worker scribbled on cost at most a wake-up missed
 * here, which the repair that follows a reap makes up for (it wakes
 * every sender of a queue it resets), or a sender's next look.
 */
void
shm_wake_all(struct shm_arena *a, uint32_t idx)
{
	struct shm_mbox	*m;
	uint32_t	 s;
	int		 fd = -1;

	if (idx >= a->n)
		return;
	m = shm_mb(a, idx)->m;
	s = atomic_exchange(&m->sleeping, 0);
	atomic_fetch_add(&m->wake_word, 1);
	if (s & SLEEP_DOORBELL)
		ring_bell(a, idx, &fd);
	else if (s != 0)
		shm_futex_wake(&m->wake_word, INT_MAX);
	wake_blocked(m);
	if (fd >= 0)
		close(fd);
}

/*
 * A mailbox whose consumer died (a reap): only its blocked senders may
 * sleep.  Its "sleeping" word, still set if it died asleep, is left for
 * the next sender, which then makes one FUTEX_WAKE nobody needs; a reap
 * makes none.
 */
void
shm_wake_blocked(struct shm_arena *a, uint32_t idx)
{
	if (idx < a->n)
		wake_blocked(shm_mb(a, idx)->m);
}

/* Blocked senders look again, where one may sleep. */
static void
wake_blocked(struct shm_mbox *m)
{
	shm_wake_senders(m);
	if (shm_turns_waiting(m) || atomic_load(&m->turn_out) != 0)
		shm_turns_wake_all(m);
}

/*
 * Switch a mailbox's fence mode.  Returns -1 if the consumer must sleep in
 * slices (no membarrier to make producers see the switch).
 */
static int
set_fence_mode(struct shm_arena *a, struct shm_mbox *m, uint32_t on)
{
	if (atomic_load_explicit(&m->fence_mode, memory_order_relaxed) == on)
		return 0;
	atomic_store(&m->fence_mode, on);
	if (on)
		return barrier_all(a);
	return 0;
}

/* SPIN_CLOCK_EVERY polls of the lanes, no clock: 1 when something came. */
static int
polls(struct shm_arena *a, uint32_t idx, unsigned lanes)
{
	unsigned i;

	for (i = 0; i < SPIN_CLOCK_EVERY; i++) {
		if (shm_pending(a, idx, lanes))
			return 1;
		cpu_relax();
	}
	return 0;
}

/*
 * Poll the lanes; 0 when something came, SHM_ETIMEDOUT at deadline (arena
 * clock).  The clock is read only every SPIN_CLOCK_EVERY polls.
 */
static int
spin(struct shm_arena *a, uint32_t idx, unsigned lanes, int64_t deadline)
{
	unsigned i;

	for (;;) {
		for (i = 0; i < SPIN_CLOCK_EVERY; i++) {
			if (shm_pending(a, idx, lanes))
				return 0;
			cpu_relax();
		}
		if (poked(a))
			return 0;
		if ((int64_t)shm_clock(a) >= deadline)
			return SHM_ETIMEDOUT;
	}
}

/*
 * Poked (shm_poke) since the last look: true once, and the poke is
 * taken.  The handler runs on this thread or on another, which makes a
 * system call (a barrier) before it could be seen asleep.
 */
static inline bool
poked(struct shm_arena *a)
{
	if (__builtin_expect(a->poked == 0, 1))
		return false;
	a->poked = 0;
	return true;
}

/*
 * A signal handler's wake-up, without a message (async-signal-safe: two
 * stores, and FUTEX_WAKE if the consumer may be asleep): the poke is
 * stored first, then wake_word moves, so that shm_wait either sees the
 * poke at its next look (each of its looks before a sleep comes after it
 * read wake_word) or finds the word changed at FUTEX_WAIT (EAGAIN), or is
 * interrupted in it (EINTR) or woken.  No view of idx here: its consumer
 * never waited, and will see the poke when it does.
 */
void
shm_poke(struct shm_arena *a, uint32_t idx)
{
	struct shm_mbox_local *mb;
	struct shm_mbox	*m;

	if (idx >= a->n)
		return;
	a->poked = 1;
	atomic_signal_fence(memory_order_seq_cst);
	mb = shm_mb_slot(a, idx);
	if ((m = mb->m) == NULL)
		return;
	atomic_fetch_add(&m->wake_word, 1);
	if (atomic_load(&m->sleeping) != 0)
		shm_futex_wake(&m->wake_word, 1);
}

/*
 * What a woken consumer reads first, asked for at once, from addresses
 * kept in registers across the sleep: after a long sleep each line is a
 * cache miss behind a page walk (the arena handle's page, the control
 * block's, the next cell's), and the reads that follow (shm_pending,
 * shm_take_one) would make them one after the other, each waiting for
 * the address the one before gave.  Asked for together, the walks
 * overlap: 6% of the receivers' CPU at 1,000 sparse actors
 * (tools/bench/bench_scale.c, sparse).  Asking also for the owner's
 * header and in-hand slot (libactor's lines, their addresses read from
 * the view before the sleep) cost more than it saved: some 2 us a
 * message more, the receivers' samples in shm_pending five times as
 * many (perf record -e cpu-clock).  A prefetch never faults: a cell page
 * not yet mapped here is left to the read.
 */
static inline void
woken(const struct shm_arena *a, const struct shm_mbox_local *mb,
    const struct shm_mbox *m, const struct shm_cell *next)
{
	__builtin_prefetch(a);
	__builtin_prefetch(&mb->lane[SHM_LANE_SYSTEM]);
	__builtin_prefetch(&mb->lane[SHM_LANE_MAIN]);
	__builtin_prefetch(&m->lane[SHM_LANE_SYSTEM].tail);
	__builtin_prefetch(&m->lane[SHM_LANE_SYSTEM].head);
	__builtin_prefetch(&m->lane[SHM_LANE_MAIN].head);
	__builtin_prefetch(next);
	/*
	 * The nap's bookkeeping (naps, nap_from, awake), which shm_wait
	 * writes as soon as nap returns and the first take reads (ring.c,
	 * nap_judged): a line of the view the reads above do not bring,
	 * else a miss of its own after the lanes' (5% of shm_wait's
	 * samples at 1,000 sparse actors).
	 */
	__builtin_prefetch(&mb->naps, 1);
	/*
	 * The blocked senders' words, which the take that finds the lane
	 * empty again after the message reads (ring.c, wake_blocked), on
	 * the control block's page: that read was a miss of its own, 40 to
	 * 50 samples of wake_blocked in 8 s at 1,000 sparse actors, 7 to 11
	 * with this (perf record -e cpu-clock, the same samples elsewhere).
	 */
	__builtin_prefetch(&m->space_waiters);
}

/*
 * Before a consumer sleeps, in its main lane's first lap: the pages of
 * cells from head's to AHEAD_PAGES past it made, so that they exist (a
 * page never written is made zeroed, and every cell on it still reads
 * free for its first lap: shm_impl.h, cell_seq).  Each sender process
 * maps for itself every page of cells it writes, one fault a page
 * (bench-scale, sparse: with 256-byte cells and 4 senders, a fault per 4
 * messages); the kernel maps with the page of a read fault those that
 * exist in its window of SHM_FAULT_BLOCK bytes (aligned in the address
 * space: the arena is mapped so, arena.c, map_data), which holds the
 * control block's page and the lane's first cells (place_mailbox), so
 * the pages are made a chunk of AHEAD_CHUNK at a time, chunks aligned in
 * the address space as the windows are: a sender then faults once a
 * chunk, the first on the chunk holding head's page (or on the control
 * block's, which shares the first chunk's window) maps every page it
 * will write there.  The next chunk is made once head reaches
 * its last page but AHEAD_PAGES: a page of cells (16 messages of the
 * default 256 bytes) before a sender needs it, not earlier, so that what a lane has not yet
 * used costs no memory, and a burst that outruns the consumer costs its
 * senders a fault or two more.  A chunk is made in one
 * MADV_POPULATE_READ (a read of each page where the kernel has none: one
 * fault each).  The cost: up to AHEAD_CHUNK pages of cells resident before
 * messages use them, only in a lane that has had a message (head above
 * 0: an idle actor's mailbox costs no page more), and nothing once head
 * has made a lap, when every page exists.  head is the arena's word: a
 * wild one only moves where the pages are made, within the lane.
 * tests/check_wake_pages.c, test_map_ahead and test_sender_maps_chunk.
 */
static void
map_ahead(struct shm_mbox_local *mb, uint64_t head)
{
	const struct shm_lane_local *l = &mb->lane[SHM_LANE_MAIN];
	uint64_t lane = (uint64_t)l->cap * l->cell, at, need, end;
	uint64_t from = (uintptr_t)l->cells;	/* the chunks' alignment */

	at = head * l->cell / SHM_PAGE * SHM_PAGE;
	need = at + (AHEAD_PAGES + 1) * SHM_PAGE;
	if (mb->ahead >= need || mb->ahead >= lane)
		return;
	end = SHM_ALIGN(from + need, AHEAD_CHUNK * SHM_PAGE) - from;
	if (end > lane)
		end = lane;
	if (mb->ahead > at)
		at = mb->ahead;
	if (madvise(l->cells + at, end - at, MADV_POPULATE_READ) != 0)
		for (; at < end; at += SHM_PAGE)
			(void)atomic_load_explicit((_Atomic uint64_t *)
			    (void *)(l->cells + at), memory_order_relaxed);
	mb->ahead = end;
}

/*
 * Before a sleep: the AVX-512 registers set back to their initial state
 * if anything used them (XGETBV 1 says which state components are in
 * use).  glibc's string functions on a CPU with AVX-512 use ZMM16-31 and
 * nothing ever gives them back, so every process that called one carries
 * that state for good, and the kernel saves and restores it (some 2 KiB)
 * at every context switch: for a sleeper woken once a message, cold lines
 * on each wake-up.  An XRSTOR of those components from a header that says
 * "initial" drops them (the registers are the caller's to save under the
 * ABI, and nothing of libactor keeps a value in them: the function is
 * never inlined, so no caller keeps one across it either).  bench-scale
 * sparse at 1,000 actors: actors / pipes 1.21x -> 1.11x (medians of three
 * alternated runs).  Where glibc cannot say the CPU has the instruction
 * without a CPUID (which traps in a VM), it is not done.
 */
static __attribute__((noinline)) void
zmm_give_back(const struct shm_arena *a)
{
#if defined(__x86_64__)
	/* The legacy area and an all-zero header: nothing in use. */
	static const struct {
		unsigned char	 legacy[512];
		uint64_t	 xstate_bv, xcomp_bv, reserved[6];
	} __attribute__((aligned(64))) initial;
	uint32_t	 in_use, hi;

	if (!a->zmm_reset)
		return;
	__asm__ __volatile__("xgetbv" : "=a"(in_use), "=d"(hi) : "c"(1));
	if ((in_use & XSTATE_AVX512) == 0)
		return;
	__asm__ __volatile__("xrstor %0" : : "m"(initial), "a"(XSTATE_AVX512),
	    "d"(0) : "memory");
#else
	(void)a;
#endif
}

/*
 * Asleep until a message on lanes, the deadline or an error; fenced: the
 * mailbox is in fence_mode, so no membarrier before sleeping.
 */
static int
nap(struct shm_arena *a, uint32_t idx, unsigned lanes, int fenced,
    int64_t deadline)
{
	struct shm_mbox_local *mb = shm_mb(a, idx);
	struct shm_mbox	*m = mb->m;
	const struct shm_lane_local *ml = &mb->lane[SHM_LANE_MAIN];
	const struct shm_cell *next;
	int64_t		 now, rem;
	uint64_t	 head;
	uint32_t	 w;
	int		 rc, sliced;

	/* Where it sleeps, for the producers' early wake-up (ring.c). */
	atomic_store_explicit(&m->sleep_cpu, (uint32_t)(shm_cpu(a) + 1),
	    memory_order_relaxed);
	/* Before "sleeping" says so: a fault here makes no sender wake it. */
	head = atomic_load_explicit(&ml->ctl->head, memory_order_relaxed);
	if ((lanes & SHM_LANE_BIT(SHM_LANE_MAIN)) && head > 0 &&
	    head < ml->cap)
		map_ahead(mb, head);
	for (;;) {
		w = atomic_load(&m->wake_word);
		atomic_store(&m->sleeping, lanes & SHM_LANES_ALL);
		/*
		 * A cheap look first: most near-misses end here.  In
		 * fence_mode it is the only look: the seq_cst store of
		 * "sleeping" (an XCHG on x86) is the consumer's fence.
		 */
		if (poked(a) || shm_pending(a, idx, lanes)) {
			atomic_store(&m->sleeping, 0);
			return 0;
		}
		sliced = 0;
		if (!fenced) {
			sliced = barrier_all(a) < 0;
			if (shm_pending(a, idx, lanes)) {
				atomic_store(&m->sleeping, 0);
				return 0;
			}
		}
		/* No deadline (an actor's run loop): no clock to read. */
		rem = -1;
		if (deadline != INT64_MAX) {
			now = (int64_t)shm_clock(a);
			if (now >= deadline) {
				atomic_store(&m->sleeping, 0);
				return SHM_ETIMEDOUT;
			}
			rem = deadline - now;
		}
		if (sliced && (rem < 0 || rem > SLICE_NS))
			rem = SLICE_NS;
		/* Where the next message will be: head's cell, in the lane. */
		next = lane_cell(ml, atomic_load_explicit(&ml->ctl->head,
		    memory_order_relaxed));
		zmm_give_back(a);
		rc = shm_futex_wait(&m->wake_word, w, rem);
		woken(a, mb, m, next);
		/*
		 * Awake.  A wake-up (rc 0) comes from the producer that
		 * cleared "sleeping" (shm_wake_consumer, shm_wake_all), so
		 * the word is left alone: touching it would wait for that
		 * producer's cache line, a transfer added to every wake-up
		 * before the lanes are even looked at.  After a timeout or a
		 * signal it is cleared, without a fence.  A producer that
		 * sees a stale value (a spurious wake-up) only makes a
		 * FUTEX_WAKE nobody needs, and clears the word.
		 */
		if (rc != 0)
			atomic_store_explicit(&m->sleeping, 0,
			    memory_order_relaxed);
		if (rc == -EINTR || rc == -EAGAIN || rc == -ETIMEDOUT ||
		    rc == 0) {
			if (poked(a)) {
				/* Woken by shm_poke, which clears nothing. */
				atomic_store_explicit(&m->sleeping, 0,
				    memory_order_relaxed);
				return 0;
			}
			if (shm_pending(a, idx, lanes))
				return 0;
			continue;
		}
		errno = -rc;
		return SHM_ESYS;
	}
}

/*
 * A spin-then-sleep consumer whose spins do not pay (it slept longer than
 * it would have spun, SHM_NAPS_FENCE times in a row) sleeps at once, in
 * fence_mode: one membarrier to switch, none per sleep after, so that many
 * sparse sleepers cost no global barrier each and no spinning.  A wake-up
 * sooner than the spin would have lasted, a message that came within the
 * spin it skipped however late the wake-up (ring.c, nap_judged), or a busy
 * spell (ring.c, time_taken) puts it back, and out of fence_mode.
 *
 * A consumer starts as a sparse one (its view is made with naps at
 * SHM_NAPS_FENCE: arena.c), so that its first messages cost no spin and
 * no membarrier each: most of 10,000 actors hear little, and one told
 * once spun 20 us and issued a global barrier for it, on the sender's CPU
 * as often as not.  The first message that comes within the spin puts it
 * back to spinning.
 */
int
shm_wait(struct shm_arena *a, uint32_t idx, unsigned lanes,
    enum shm_wait_mode mode, int64_t spin_ns, int64_t timeout_ns)
{
	struct shm_mbox_local *mb;
	int64_t		 now, deadline, sd;
	int		 rc, fenced, adaptive;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	if ((lanes & SHM_LANES_ALL) == 0)
		return SHM_EINVAL;
	if (shm_pending(a, idx, lanes) || poked(a))
		return 0;
	/* Senders the consumer has yet to look for (ring.c) first. */
	if (lanes & SHM_LANE_BIT(SHM_LANE_MAIN))
		shm_settle(a, idx);
	mb = shm_mb(a, idx);
	adaptive = mode == SHM_WAIT_SPIN_SLEEP;
	if (adaptive && mb->naps < SHM_NAPS_FENCE && mb->nap_fenced) {
		/*
		 * Spinning again (its messages came sooner than its spin:
		 * ring.c, nap_judged): producers stop fencing now, not after
		 * SHM_AWAKE_UNFENCE more messages.  A nap after the spin
		 * issues its barrier.
		 */
		mb->nap_fenced = false;
		(void)set_fence_mode(a, mb->m, 0);
	}
	/*
	 * A consumer about to spin polls first, and reads the clock for its
	 * deadlines only if nothing came: RDTSC costs 11 to 25 ns on the
	 * hosts measured, which a consumer that keeps up with its producer
	 * (one wait per message) or a round trip paid on every message.
	 */
	if ((mode == SHM_WAIT_SPIN || (adaptive && mb->naps <
	    SHM_NAPS_FENCE)) && (timeout_ns < 0 || timeout_ns >=
	    UNCLOCKED_MIN_NS) && polls(a, idx, lanes)) {
		if (adaptive)
			mb->naps = 0;
		return 0;
	}
	now = (int64_t)shm_clock(a);
	deadline = timeout_ns < 0 ? INT64_MAX : now + timeout_ns;
	if (mode == SHM_WAIT_SPIN)
		return spin(a, idx, lanes, deadline);
	if (adaptive) {
		if (spin_ns < 0)
			spin_ns = SHM_SPIN_NS_DEFAULT;
		if (mb->naps < SHM_NAPS_FENCE) {
			sd = now + spin_ns < deadline ? now + spin_ns :
			    deadline;
			if (spin(a, idx, lanes, sd) == 0) {
				mb->naps = 0;
				return 0;
			}
			now = (int64_t)shm_clock(a);
		}
	}
	fenced = mode == SHM_WAIT_SLEEP || (adaptive &&
	    mb->naps >= SHM_NAPS_FENCE);
	if (set_fence_mode(a, mb->m, fenced) < 0)
		fenced = 0;
	mb->nap_fenced = adaptive && fenced;
	mb->awake = 0;
	mb->nap_from = adaptive && fenced ? (uint64_t)now : 0;
	mb->nap_spin = spin_ns;
	rc = nap(a, idx, lanes, fenced, deadline);
	if (adaptive) {
		if ((int64_t)shm_clock(a) - now > spin_ns)
			mb->naps += mb->naps < SHM_NAPS_FENCE;
		else
			mb->naps = 0;
	}
	return rc;
}

int
shm_recv_wait(struct shm_arena *a, uint32_t idx, unsigned lanes,
    enum shm_wait_mode mode, int64_t spin_ns, int64_t timeout_ns,
    struct shm_msg *msg, void *buf, size_t buflen, enum shm_lane *lane)
{
	int64_t	 deadline, now;
	int	 rc;

	deadline = timeout_ns < 0 ? INT64_MAX :
	    (int64_t)shm_now_ns() + timeout_ns;
	for (;;) {
		rc = shm_recv(a, idx, lanes, msg, buf, buflen, lane);
		if (rc != SHM_EEMPTY)
			return rc;
		now = deadline == INT64_MAX ? 0 : (int64_t)shm_now_ns();
		if (deadline != INT64_MAX && now >= deadline)
			return SHM_ETIMEDOUT;
		rc = shm_wait(a, idx, lanes, mode, spin_ns,
		    deadline == INT64_MAX ? -1 : deadline - now);
		if (rc < 0 && rc != SHM_ETIMEDOUT)
			return rc;
	}
}

static socklen_t
bell_name(const struct shm_arena *a, uint32_t idx, struct sockaddr_un *sun)
{
	int	 n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	/* Abstract namespace: sun_path[0] stays NUL. */
	n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
	    "actord-%016llx-%u", (unsigned long long)a->id, idx);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static void
ring_bell(struct shm_arena *a, uint32_t idx, int *bellfd)
{
	struct sockaddr_un sun;
	socklen_t len;
	char	 b = 1;

	if (*bellfd < 0) {
		*bellfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		if (*bellfd < 0)
			return;
	}
	len = bell_name(a, idx, &sun);
	(void)sendto(*bellfd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, len);
}

int
shm_doorbell_open(struct shm_arena *a, uint32_t idx)
{
	struct sockaddr_un sun;
	socklen_t len;
	int	 fd, saved;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return SHM_ESYS;
	len = bell_name(a, idx, &sun);
	if (bind(fd, (struct sockaddr *)&sun, len) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return SHM_ESYS;
	}
	return fd;
}

int
shm_doorbell_arm(struct shm_arena *a, uint32_t idx, unsigned lanes)
{
	struct shm_mbox	*m;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	m = shm_mb(a, idx)->m;
	if (lanes & SHM_LANE_BIT(SHM_LANE_MAIN))
		shm_settle(a, idx);
	if (set_fence_mode(a, m, 1) < 0) {
		/* Producers may not fence: poll again, do not sleep. */
		return 1;
	}
	atomic_store(&m->sleeping, (lanes & SHM_LANES_ALL) | SLEEP_DOORBELL);
	atomic_thread_fence(memory_order_seq_cst);
	if (shm_pending(a, idx, lanes)) {
		atomic_store(&m->sleeping, 0);
		return 1;
	}
	return 0;
}

void
shm_doorbell_disarm(struct shm_arena *a, uint32_t idx, int fd)
{
	char	 buf[64];

	if (idx >= a->n)
		return;
	atomic_store(&shm_mb(a, idx)->m->sleeping, 0);
	if (fd >= 0)
		while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			continue;
}
