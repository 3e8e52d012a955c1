/*
 * bench_common.h: what bench_ring and bench_actor both need to measure the
 * same thing the same way: the bare ring (single producer, per-cell
 * sequence numbers, busy-polling, no wake-ups: the physical limit of this
 * machine that every mailbox figure is read against), CPU pinning, a
 * microsecond clock and the quantiles of samples, shared by every
 * benchmark program.  Each benchmark is one program, so this
 * is a header of static functions marked BENCH_FN (unused ones are fine).
 * It must never depend on shm/ or libactor: it is the baseline.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <sys/resource.h>

#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define BENCH_FN	static __attribute__((unused))
#define PAYLOAD		64	/* bytes of every benchmark message */
#define BARE_CAP	1024	/* cells of the bare ring */

struct bare_cell {
	_Atomic uint64_t seq;
	unsigned char	 payload[PAYLOAD];
	unsigned char	 pad[128 - 8 - PAYLOAD];
};

struct bare_ring {
	_Alignas(64) struct bare_cell cells[BARE_CAP];
};

BENCH_FN void
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

BENCH_FN int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* CPU seconds this process used so far, user and system. */
BENCH_FN double
cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

BENCH_FN uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The p-th quantile of v (us), in ms; sorts v. */
BENCH_FN double
pct(uint64_t *v, size_t n, double p)
{
	size_t i;

	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i] / 1000.0;
}

BENCH_FN void
bare_put(struct bare_ring *r, uint64_t pos, const void *p)
{
	struct bare_cell *c = &r->cells[pos & (BARE_CAP - 1)];

	while (atomic_load_explicit(&c->seq, memory_order_acquire) != pos)
		__builtin_ia32_pause();
	memcpy(c->payload, p, PAYLOAD);
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
}

BENCH_FN void
bare_get(struct bare_ring *r, uint64_t pos, void *p)
{
	struct bare_cell *c = &r->cells[pos & (BARE_CAP - 1)];

	while (atomic_load_explicit(&c->seq, memory_order_acquire) != pos + 1)
		__builtin_ia32_pause();
	memcpy(p, c->payload, PAYLOAD);
	atomic_store_explicit(&c->seq, pos + BARE_CAP, memory_order_release);
}

#endif /* BENCH_COMMON_H */
