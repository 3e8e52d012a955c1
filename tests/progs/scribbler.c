/*
 * scribbler.c: a hostile worker for the tests of what a worker can do to
 * the arena (tests/check_e2e_hostile.c).  It runs under actord with a
 * mailbox (so it gets the arena) and ready = "actor", attaches, says it is
 * ready, and then writes where it should not:
 *
 *   scribbler wedge PATH KIND ...
 *				wedges each PATH's main lane once, then
 *				sleeps.  KIND: tail (moved by 2^40), claim (a
 *				CAS on tail without a record), steal (a cell
 *				queued as dropped by nobody), zero (cells and
 *				ends zeroed)
 *   scribbler flip PATH	flips PATH's libactor region (watch_cap,
 *				snap_cap, the snapshot lengths) between valid
 *				and huge values for ever, and SIGKILLs PATH's
 *				process every 20 ms
 *   scribbler counters PATH	sets PATH's counters and histograms to
 *				values whose sums wrap, then sleeps
 *   scribbler header		zeroes the first 8 bytes of the arena header
 *				and punches a hole in its first page, through
 *				whatever it can open, then punches one in the
 *				data's first page; writes what worked and what
 *				was refused to $TW_DIR/header; then sleeps
 *   scribbler hostile SEED	writes random and targeted values into every
 *				word of the arena it can write, for ever
 *
 * It includes shm/ and worker/ internals on purpose: it plays a worker
 * that knows the layout.  Every write goes through the mapping a worker
 * gets; nothing here is what a well-behaved worker would do.
 */
#include <sys/mman.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm_impl.h"
/* Both name their slot states; this program only uses shm's. */
#undef SLOT_FREE
#include "worker/actor_impl.h"
#include "tests/lib/tfoe.h"

static void	 wedge(struct shm_arena *, uint32_t, const char *);
static void	 flip(struct shm_arena *, uint32_t);
static void	 counters(struct shm_arena *, uint32_t);
static void	 header(struct shm_arena *);
static void	 hostile(struct shm_arena *, unsigned);
static uint64_t	 nasty(uint64_t);
static void	 scribble_word(unsigned char *, size_t, uint64_t);
static void	 scribble_mailbox(struct shm_arena *, uint32_t);

/* A value a reader checks badly: huge, negative, off by one, flagged. */
static uint64_t
nasty(uint64_t near)
{
	switch (tfoe_rnd() % 12) {
	case 0:
		return 0;
	case 1:
		return ~0ULL;
	case 2:
		return near + (1ULL << 40);
	case 3:
		return near - 1;
	case 4:
		return near + 1;
	case 5:
		return (near + 1) | SEQ_TAKEN | SEQ_STEALING;
	case 6:
		return (near + 1) | SEQ_TAKEN | SEQ_CONSUMING;
	case 7:
		return 1ULL << 31;
	case 8:
		return 0x7fffffffULL;
	case 9:
		return (uint64_t)getppid();
	case 10:
		return near;
	default:
		return tfoe_rnd();
	}
}

static void
wedge(struct shm_arena *a, uint32_t idx, const char *kind)
{
	struct shm_lane_local *l = &shm_mb(a, idx)->lane[SHM_LANE_MAIN];
	uint64_t h, p;

	h = atomic_load(&l->ctl->head);
	if (strcmp(kind, "tail") == 0)
		atomic_fetch_add(&l->ctl->tail, 1ULL << 40);
	else if (strcmp(kind, "claim") == 0)
		atomic_fetch_add(&l->ctl->tail, 1);
	else if (strcmp(kind, "steal") == 0) {
		/* The cell at tail, marked as the one being dropped. */
		p = atomic_load(&l->ctl->tail);
		cell_seq_set(l, p, (p + 1) | SEQ_TAKEN | SEQ_STEALING,
		    memory_order_seq_cst);
		atomic_store(&l->ctl->tail, p + 1);
	} else if (strcmp(kind, "zero") == 0) {
		/* Every cell's number 0, as written (not as read). */
		for (p = 0; p < l->cap; p++)
			cell_seq_set(l, h + p, 0, memory_order_seq_cst);
		atomic_store(&l->ctl->head, 0);
		atomic_store(&l->ctl->tail, 0);
	} else
		errx(2, "unknown wedge %s", kind);
	tfoe_note("wedged", kind);
}

/*
 * Item 1 of issue 11: the fields actord checks once and used to read
 * again, flipped between a valid and a huge value while actord reaps.
 */
static void
flip(struct shm_arena *a, uint32_t idx)
{
	struct ar_hdr *h;
	size_t len = 0;
	uint32_t wcap, scap;
	unsigned i = 0;
	int64_t last = 0;
	struct timespec ts;
	pid_t pid;

	if ((h = shm_state(a, idx, &len)) == NULL)
		errx(2, "no state region");
	while ((wcap = h->watch_cap) == 0)
		tfoe_sleep_ms(1);
	scap = h->snap_cap;
	for (;;) {
		h->watch_cap = (i & 1) ? wcap : 0x7fffffffu;
		h->snap_cap = (i & 2) ? scap : 0xfffff000u;
		h->snap[i & 1].len = (i & 4) ? 0 : 0x7ffffff0u;
		if (atomic_load(&h->snap[i & 1].gen) == 0)
			atomic_store(&h->snap[i & 1].gen, 1);
		i++;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec * 1000 + ts.tv_nsec / 1000000 - last >= 20) {
			last = ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
			if ((pid = shm_actor_pid(a, idx)) > 0 &&
			    pid != getpid())
				(void)kill(pid, SIGKILL);
		}
	}
}

/* Item 7: counters whose sums wrap, or pass 2^64 as doubles. */
static void
counters(struct shm_arena *a, uint32_t idx)
{
	struct shm_mbox *m = shm_mb(a, idx)->m;
	struct ar_hdr *h;
	size_t len = 0;
	unsigned i;

	for (i = 0; i < SHM_HIST_BUCKETS; i++)
		atomic_store(&m->hist[i], ~0ULL - i);
	atomic_store(&m->dropped, ~0ULL);
	atomic_store(&m->dead_lettered, ~0ULL);
	atomic_store(&m->garbled, ~0ULL);
	atomic_store(&m->released, ~0ULL);
	for (i = 0; i < SHM_NLANES; i++) {
		atomic_store(&shm_mb(a, idx)->lane[i].ctl->dequeued, ~0ULL - 1);
		atomic_store(&shm_mb(a, idx)->lane[i].ctl->depth_hwm, ~0ULL);
	}
	if ((h = shm_state(a, idx, &len)) != NULL)
		for (i = 0; i < ACTOR_HIST_BUCKETS; i++)
			atomic_store(&h->handler_hist[i], ~0ULL / 3 + i);
	tfoe_note("counters", "set");
}

/*
 * Item 2: the arena header, through any mapping or descriptor that lets
 * us; then a hole in the first page of the data (producer slots).  What
 * worked and what was refused goes to $TW_DIR/header, one line each.
 */
static void
header(struct shm_arena *a)
{
	char fdname[32];
	void *p;
	int fd;

	if (mprotect(a->lbase, 4096, PROT_READ | PROT_WRITE) == 0) {
		memset(a->lbase, 0, 8);
		tfoe_note("header", "zeroed through our mapping");
	} else
		tfoe_note("header", "mprotect refused");
	snprintf(fdname, sizeof(fdname), "/proc/self/fd/%d", a->lfd);
	if ((fd = open(fdname, O_RDWR)) != -1) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) {
			memset(p, 0, 8);
			tfoe_note("header", "zeroed through a new mapping");
			munmap(p, 4096);
		} else
			tfoe_note("header", "writable mapping refused");
		close(fd);
	}
	if (pwrite(a->lfd, "\0\0\0\0\0\0\0\0", 8, 0) == 8)
		tfoe_note("header", "zeroed by pwrite");
	else
		tfoe_note("header", "pwrite refused");
	if (fallocate(a->lfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
	    4096) == 0)
		tfoe_note("header", "hole punched in the layout");
	else
		tfoe_note("header", "hole in the layout refused");
	if (fallocate(a->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
	    4096) == 0)
		tfoe_note("header", "hole punched in the data");
	else
		tfoe_note("header", "hole in the data refused");
}

/* One word of [base, base + len), aligned, set to something nasty. */
static void
scribble_word(unsigned char *base, size_t len, uint64_t near)
{
	size_t off;

	if (len < 8)
		return;
	off = (size_t)(tfoe_rnd() % (len / 8)) * 8;
	__atomic_store_n((uint64_t *)(void *)(base + off), nasty(near),
	    __ATOMIC_RELAXED);
}

/* The words of one mailbox that readers check: ends, cells, region. */
static void
scribble_mailbox(struct shm_arena *a, uint32_t idx)
{
	struct shm_mbox_local *mb = shm_mb(a, idx);
	struct shm_lane_local *l = &mb->lane[tfoe_rnd() % SHM_NLANES];
	struct ar_hdr *h = mb->state;
	uint64_t t = atomic_load(&l->ctl->tail), p;
	struct shm_cell *c;

	switch (tfoe_rnd() % 10) {
	case 0:
		atomic_store(&l->ctl->tail, nasty(t));
		break;
	case 1:
		atomic_store(&l->ctl->head, nasty(t));
		break;
	case 2:
	case 3:
		p = t + tfoe_rnd() % 4 - 2;
		cell_seq_set(l, p, nasty(t), memory_order_seq_cst);
		break;
	case 4:
		c = lane_cell(l, atomic_load(&l->ctl->head));
		/* Or aimed at the large slots: just past the cell, the max. */
		c->msg.len = tfoe_rnd() % 2 ? (uint32_t)nasty(c->msg.len) :
		    l->inl + (uint32_t)(tfoe_rnd() % 2) + (tfoe_rnd() % 2 ?
		    l->max - l->inl : 0);
		c->msg.flags = (uint32_t)nasty(0);
		break;
	case 5:
		if (h != NULL) {
			h->watch_cap = (uint32_t)nasty(h->watch_cap);
			h->snap_cap = (uint32_t)nasty(h->snap_cap);
		}
		break;
	case 6:
		if (h != NULL) {
			h->snap[tfoe_rnd() & 1].len = (uint32_t)nasty(0);
			atomic_store(&h->inhand, (uint32_t)(tfoe_rnd() % 4));
		}
		break;
	case 7:
		scribble_word(mb->inhand, mb->inhand_size, 0);
		break;
	case 8:
		if (h != NULL)
			scribble_word((unsigned char *)h, mb->lay.state_size,
			    0);
		break;
	default:
		scribble_word((unsigned char *)mb->m, sizeof(*mb->m), t);
		break;
	}
}

/*
 * The hostile worker: words of every part it can write, random or aimed
 * at what readers check, as fast as it can, with now and then a hole
 * punched in a page of the arena.
 */
static void
hostile(struct shm_arena *a, unsigned seed)
{
	struct shm_slot *s;
	uint64_t n = 0;
	size_t page;

	tfoe_seed(seed);
	for (;;) {
		switch (tfoe_rnd() % 8) {
		case 0:
			scribble_word(a->base, a->size, 0);
			break;
		case 1:
			s = &a->slots[tfoe_rnd() % a->nslots];
			if (tfoe_rnd() & 1)
				atomic_store(&s->rec_ring, nasty(tfoe_rnd() %
				    (a->n * SHM_NLANES + 1)) << 2 | tfoe_rnd() % 4);
			else
				atomic_store(&s->rec_pos, nasty(0));
			if (tfoe_rnd() % 16 == 0)
				atomic_store(&s->pid, (int32_t)nasty(0));
			break;
		case 2:
			scribble_word((unsigned char *)a->dl_entries,
			    (size_t)a->dl_cap * sizeof(*a->dl_entries), 0);
			break;
		default:
			scribble_mailbox(a, (uint32_t)(tfoe_rnd() % a->n));
			break;
		}
		if (++n % 200000 == 0) {
			page = (size_t)(tfoe_rnd() % (a->size / 4096)) * 4096;
			(void)fallocate(a->fd, FALLOC_FL_PUNCH_HOLE |
			    FALLOC_FL_KEEP_SIZE, (off_t)page, 4096);
		}
		if (n % 4096 == 0)
			sched_yield();
	}
}

int
main(int argc, char **argv)
{
	struct actor *act;
	struct shm_arena *a;
	char err[ACTOR_ERRBUF];
	int i;

	if (argc < 2)
		errx(2, "usage: scribbler MODE [ARG...]");
	if (actor_attach(&act, err, sizeof(err)) < 0)
		errx(1, "%s", err);
	a = act->arena;
	if (actor_ready(act) < 0)
		errx(1, "cannot say ready");
	if (strcmp(argv[1], "wedge") == 0 && argc >= 4 && argc % 2 == 0) {
		for (i = 2; i < argc; i += 2)
			wedge(a, tfoe_target(a, argv[i]), argv[i + 1]);
	} else if (strcmp(argv[1], "flip") == 0 && argc == 3)
		flip(a, tfoe_target(a, argv[2]));
	else if (strcmp(argv[1], "counters") == 0 && argc == 3)
		counters(a, tfoe_target(a, argv[2]));
	else if (strcmp(argv[1], "header") == 0)
		header(a);
	else if (strcmp(argv[1], "hostile") == 0 && argc == 3)
		hostile(a, (unsigned)strtoul(argv[2], NULL, 10));
	else
		errx(2, "bad arguments");
	for (;;)
		pause();
}
