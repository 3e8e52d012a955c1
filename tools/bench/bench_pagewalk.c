/*
 * bench_pagewalk.c: what one more page touched costs a process whose TLB
 * and caches went cold (an actor woken after a long sleep: the figure
 * that shm/shm.h's SHM_RECV and the wake-up's layout are weighed with).
 *
 * A memfd mapped shared, as the arena is, every page of it made.  Each
 * round first evicts, then follows a chain of NLOADS dependent loads, one
 * line each: either on NLOADS pages, or all on one page.  Both load the
 * same number of lines; the first also walks the page tables NLOADS - 1
 * times more.  Per extra page: the difference of the medians / (NLOADS -
 * 1).  Two evictions, by a load of each line of EVICT bytes elsewhere
 * (more pages than the TLB holds, more lines than L2: the TLB and the
 * per-core caches cold, as after a long sleep), or of one line a page of
 * them (the TLB cold, the lines and the page tables' lines still cached:
 * the walk alone).  The last-level cache is never evicted (it may be
 * hundreds of MiB on a server).
 *
 * Prints the table, and JSON to $BENCH_JSON.
 */
#include <sys/mman.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/bench/bench_common.h"

#define DATA		(64u << 20)	/* the memfd, like an arena's */
#define EVICT		(16u << 20)	/* 4,096 pages, four times L2 here */
#define NLOADS		16
#define ROUNDS		400
#define PAGE		4096u
#define LINE		64u

/* The one state of this program. */
struct bench {
	unsigned char	*data;
	unsigned char	*evict;
	uint64_t	 t[2][2][ROUNDS];	/* ns: [cold, TLB only][many, one] */
	unsigned	 seed;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A load of every line (or one a page) of the eviction buffer. */
static void
evict(struct bench *b, size_t stride)
{
	volatile unsigned char *p = b->evict;
	size_t i;

	for (i = 0; i < EVICT; i += stride)
		(void)p[i];
}

/*
 * A chain of NLOADS lines of data, each holding the address of the next:
 * on NLOADS distinct pages (spread), or NLOADS distinct lines of one page.
 * Returns its first line.
 */
static void **
make_chain(struct bench *b, int spread)
{
	void	**at[NLOADS];
	size_t	 page = (size_t)(rand_r(&b->seed) % (DATA / PAGE)), off;
	int	 i, j, again;

	for (i = 0; i < NLOADS; i++) {
		do {
			if (spread)
				page = (size_t)(rand_r(&b->seed) %
				    (DATA / PAGE));
			off = page * PAGE + (size_t)(rand_r(&b->seed) %
			    (PAGE / LINE)) * LINE;
			at[i] = (void **)(void *)(b->data + off);
			for (again = 0, j = 0; j < i; j++)
				again |= (unsigned char *)at[j] - b->data
				    == (ptrdiff_t)off ||
				    (spread && (size_t)((unsigned char *)
				    at[j] - b->data) / PAGE == page);
		} while (again);
	}
	for (i = 0; i < NLOADS - 1; i++)
		*at[i] = at[i + 1];
	*at[NLOADS - 1] = NULL;
	return at[0];
}

/* ns to follow the chain from p, after an eviction of that stride. */
static uint64_t
chase(struct bench *b, void **p, size_t stride)
{
	uint64_t t0;

	evict(b, stride);
	t0 = now_ns();
	while (p != NULL)
		p = *(void **volatile *)p;
	return now_ns() - t0;
}

static double
median_ns(uint64_t *v)
{
	qsort(v, ROUNDS, sizeof(*v), cmp_u64);
	return (double)v[ROUNDS / 2];
}

static void
report(struct bench *b)
{
	static const char *const name[2] = { "cold", "tlb" };
	static const char *const what[2] = { "TLB, L1 and L2 cold",
	    "TLB cold" };
	const char *path = getenv("BENCH_JSON");
	FILE	*json = path != NULL ? fopen(path, "w") : NULL;
	double	 many, one, extra;
	int	 k;

	printf("%-44s %8s %8s %8s\n", "ns (the LLC warm)", "16 pages",
	    "one page", "a page");
	if (json != NULL)
		fprintf(json, "{");
	for (k = 0; k < 2; k++) {
		many = median_ns(b->t[k][0]);
		one = median_ns(b->t[k][1]);
		extra = (many - one) / (NLOADS - 1);
		printf("%-44s %8.0f %8.0f %8.0f\n", what[k], many, one, extra);
		if (json != NULL)
			fprintf(json, "%s\"pagewalk_%s_extra_page_ns\": { "
			    "\"value\": %.0f, \"unit\": \"ns\", "
			    "\"lines_16_pages_ns\": %.0f, "
			    "\"lines_one_page_ns\": %.0f }", k ? ", " : "",
			    name[k], extra, many, one);
	}
	if (json != NULL) {
		fprintf(json, "}\n");
		fclose(json);
	}
}

int
main(void)
{
	struct bench b;
	int	 fd, r;

	memset(&b, 0, sizeof(b));
	b.seed = 13;
	if ((fd = memfd_create("bench-pagewalk", MFD_CLOEXEC)) == -1 ||
	    ftruncate(fd, DATA) == -1 ||
	    (b.data = mmap(NULL, DATA, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0)) == MAP_FAILED ||
	    (b.evict = mmap(NULL, EVICT, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0)) == MAP_FAILED) {
		perror("bench_pagewalk: memory");
		return 1;
	}
	close(fd);
	memset(b.data, 1, DATA);
	memset(b.evict, 1, EVICT);
	pin(0);
	for (r = 0; r < ROUNDS; r++) {
		b.t[0][0][r] = chase(&b, make_chain(&b, 1), LINE);
		b.t[0][1][r] = chase(&b, make_chain(&b, 0), LINE);
		b.t[1][0][r] = chase(&b, make_chain(&b, 1), PAGE);
		b.t[1][1][r] = chase(&b, make_chain(&b, 0), PAGE);
	}
	report(&b);
	return 0;
}
