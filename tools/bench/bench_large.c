/*
 * bench_large.c: what messages larger than a cell cost (max_message, the
 * large slots of shm/ring.c): one-way throughput between two processes
 * pinned to CPUs 0 and 1, the consumer spinning then sleeping, of
 * payloads from 64 bytes (in the cell) to 64 KiB (a large slot), in
 * messages and in bytes per second, beside memcpy of the same sizes in
 * one process (two copies per message is the floor: into the slot, out
 * of it).
 *
 * The mailbox is actord's default (1,024 cells of 256 bytes, max_message
 * 65,536).  Every case runs ROUNDS times, interleaved, and the median is
 * reported; BENCH_QUICK=0.1 scales the counts down.  Writes each case as
 * JSON to $BENCH_JSON.
 */
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tools/bench/bench_common.h"

#define ROUNDS		5
#define MAXMSG		65536
#define NSIZES		5

static const uint32_t sizes[NSIZES] = { 64, 1024, 4096, 16384, MAXMSG };

/* The one state of this program. */
struct bench {
	struct shm_arena *arena;
	double		 scale;
	unsigned char	*buf;
	double		 rate[NSIZES][ROUNDS];
	double		 copy[NSIZES][ROUNDS];
};

static unsigned
count_for(const struct bench *b, uint32_t size)
{
	double n = (size <= 4096 ? 400000.0 : 8e9 / size / 4) * b->scale;

	return n < 1000 ? 1000 : (unsigned)n;
}

static void
arena_new(struct bench *b)
{
	struct shm_mailbox_layout m = {
		.capacity = 1024, .cell = 256, .sys_capacity = 16,
		.reply_capacity = 64, .overflow = SHM_OVERFLOW_BLOCK,
		.block_timeout_ms = 1000, .max_message = MAXMSG
	};
	struct shm_layout l = { 1, &m, 8, 64 };
	char	 err[SHM_ERRBUF];

	if (b->arena != NULL)
		shm_detach(b->arena);
	if (shm_create(&l, "bench-large", &b->arena, err, sizeof(err)) < 0) {
		printf("shm_create: %s\n", err);
		exit(1);
	}
}

/* n messages of size bytes, child to parent: messages per second. */
static double
one_way(struct bench *b, uint32_t size, unsigned n)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	uint64_t	 t0, t1;
	unsigned	 i;
	pid_t		 pid;

	arena_new(b);
	pid = fork();
	if (pid == -1)
		exit(1);
	if (pid == 0) {
		pin(1);
		if (shm_producer_open(b->arena, &p) < 0)
			_exit(1);
		memset(&m, 0, sizeof(m));
		m.len = size;
		for (i = 0; i < n; i++) {
			m.tag = i;
			if (shm_send(p, 0, SHM_LANE_MAIN, &m, b->buf,
			    SHM_NO_TIMEOUT) < 0)
				_exit(2);
		}
		_exit(0);
	}
	pin(0);
	t0 = 0;
	for (i = 0; i < n; i++) {
		if (shm_recv_wait(b->arena, 0, SHM_LANES_INBOX,
		    SHM_WAIT_SPIN_SLEEP, SHM_SPIN_NS_DEFAULT, -1, &m, b->buf,
		    MAXMSG, NULL) < 0 || m.len != size) {
			printf("bench_large: receive failed\n");
			exit(1);
		}
		if (i == 0)
			t0 = now_us();
	}
	t1 = now_us();
	waitpid(pid, NULL, 0);
	return t1 > t0 ? (double)(n - 1) * 1e6 / (double)(t1 - t0) : 0;
}

/* The floor: two copies of size bytes per message, in one process. */
static double
copies(struct bench *b, uint32_t size, unsigned n)
{
	static unsigned char slot[MAXMSG], out[MAXMSG];
	uint64_t t0, t1;
	unsigned i;

	t0 = now_us();
	for (i = 0; i < n; i++) {
		b->buf[0] = (unsigned char)i;
		memcpy(slot, b->buf, size);
		__asm__ __volatile__("" : : "r"(slot) : "memory");
		memcpy(out, slot, size);
		__asm__ __volatile__("" : : "r"(out) : "memory");
	}
	t1 = now_us();
	return t1 > t0 ? (double)n * 1e6 / (double)(t1 - t0) : 0;
}

static double
median(double *v)
{
	double s[ROUNDS], t;
	int i, j;

	memcpy(s, v, sizeof(s));
	for (i = 1; i < ROUNDS; i++)
		for (j = i; j > 0 && s[j - 1] > s[j]; j--) {
			t = s[j];
			s[j] = s[j - 1];
			s[j - 1] = t;
		}
	return s[ROUNDS / 2];
}

static void
report(struct bench *b)
{
	const char *path = getenv("BENCH_JSON");
	FILE	*json = path != NULL ? fopen(path, "w") : NULL;
	double	 r, c;
	int	 k;

	printf("%-28s %14s %12s %14s\n", "case", "messages/s", "MB/s",
	    "2 memcpy MB/s");
	if (json != NULL)
		fprintf(json, "{");
	for (k = 0; k < NSIZES; k++) {
		r = median(b->rate[k]);
		c = median(b->copy[k]);
		printf("tput %5u-byte payloads     %14.0f %12.1f %14.1f\n",
		    sizes[k], r, r * sizes[k] / 1e6, c * sizes[k] / 1e6);
		if (json != NULL)
			fprintf(json, "%s\"tput_large_%u\": { \"value\": %.0f, "
			    "\"unit\": \"msg/s\", \"mb_s\": %.1f, "
			    "\"memcpy2_mb_s\": %.1f }", k ? ", " : "",
			    sizes[k], r, r * sizes[k] / 1e6,
			    c * sizes[k] / 1e6);
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
	const char *q = getenv("BENCH_QUICK");
	int	 r, k;

	memset(&b, 0, sizeof(b));
	b.scale = q != NULL ? atof(q) : 1;
	if (b.scale <= 0 || b.scale > 1)
		b.scale = 1;
	if ((b.buf = malloc(MAXMSG)) == NULL)
		return 1;
	memset(b.buf, 0x5a, MAXMSG);
	printf("bench_large: payloads up to max_message (%u), parent on CPU 0, "
	    "child on CPU 1\n", MAXMSG);
	for (r = 0; r < ROUNDS; r++) {
		for (k = 0; k < NSIZES; k++) {
			b.rate[k][r] = one_way(&b, sizes[k],
			    count_for(&b, sizes[k]));
			b.copy[k][r] = copies(&b, sizes[k],
			    count_for(&b, sizes[k]));
		}
		printf("bench_large: round %d of %d done\n", r + 1, ROUNDS);
	}
	report(&b);
	if (b.arena != NULL)
		shm_detach(b.arena);
	free(b.buf);
	return 0;
}
