/*
 * deathwatch.c: each worker's death as one completion of an io_uring
 * ring, with no descriptor of its own in actord's table.
 *
 * A pidfd (pidfd_open(2)) becomes readable once its process has exited.
 * A poll of it submitted to the ring (IORING_OP_POLL_ADD) takes its own
 * reference to the pidfd's file when it is submitted, so the descriptor
 * is closed at once: the watch lives in the ring, not in the table.  In
 * the table, a pidfd for each worker does not fit beside the workers'
 * output pipes once the hard RLIMIT_NOFILE is near twice the number of
 * workers (20,000 on the machine of issue 13, for 10,000 workers), and
 * the workers without one were found by a sweep of every child after
 * their SIGCHLDs merged: a walk of 10,000 children, a millisecond, every
 * hundred milliseconds of deaths.  The ring's descriptor is in the loop;
 * each completion names a pid, reaped in O(1) (actord_reap_pid), whoever
 * reaped it first (its SIGCHLD, a sweep): a reap of a pid that is not a
 * zombie child does nothing.
 *
 * A submission is one io_uring_enter, made at once: the kernel reads a
 * submission queue entry only there, so one it did not take is taken
 * back before the descriptor is closed, and never read with a number
 * reused by another file.  Completions the queue had no room for are
 * kept by the kernel (IORING_FEAT_NODROP) and fetched once it has room.
 *
 * Owns the ring (struct deathwatch).  Without io_uring (before Linux 5.7
 * or without IORING_FEAT_NODROP, or disabled: sysctl, seccomp), it is
 * never made and deathwatch_add says no: worker.c watches the pidfd in
 * the loop instead, while the table has room.
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

#define DW_SQ		8	/* one entry at a time: submitted at once */
#define DW_CQ		4096	/* deaths between two turns of the loop */

struct deathwatch {
	struct actord	*ad;
	int		 fd;
	struct ev	 ev;
	void		*sq_ring, *cq_ring;
	size_t		 sq_len, cq_len;
	struct io_uring_sqe *sqes;
	size_t		 sqes_len;
	_Atomic unsigned *sq_tail, *sq_flags, *cq_head, *cq_tail;
	unsigned	*sq_array, sq_mask, cq_mask;
	struct io_uring_cqe *cqes;
};

static struct deathwatch *dw_open(struct actord *);
static int	 dw_map(struct deathwatch *, const struct io_uring_params *);
static void	 dw_free(struct deathwatch *);
static void	 on_ring(void *, uint32_t);
static int	 ring_enter(int, unsigned, unsigned);

static int
ring_enter(int fd, unsigned submit, unsigned flags)
{
	return (int)syscall(SYS_io_uring_enter, fd, submit, 0, flags, NULL,
	    0);
}

static int
dw_map(struct deathwatch *dw, const struct io_uring_params *p)
{
	char *sq, *cq;

	dw->sq_len = p->sq_off.array + p->sq_entries * sizeof(unsigned);
	dw->cq_len = p->cq_off.cqes + p->cq_entries *
	    sizeof(struct io_uring_cqe);
	if (p->features & IORING_FEAT_SINGLE_MMAP) {
		if (dw->cq_len > dw->sq_len)
			dw->sq_len = dw->cq_len;
		dw->cq_len = 0;
	}
	sq = mmap(NULL, dw->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED |
	    MAP_POPULATE, dw->fd, IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return -1;
	dw->sq_ring = sq;
	cq = sq;
	if (dw->cq_len > 0) {
		cq = mmap(NULL, dw->cq_len, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, dw->fd, IORING_OFF_CQ_RING);
		if (cq == MAP_FAILED)
			return -1;
		dw->cq_ring = cq;
	}
	dw->sqes_len = p->sq_entries * sizeof(struct io_uring_sqe);
	dw->sqes = mmap(NULL, dw->sqes_len, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_POPULATE, dw->fd, IORING_OFF_SQES);
	if (dw->sqes == MAP_FAILED) {
		dw->sqes = NULL;
		return -1;
	}
	dw->sq_tail = (_Atomic unsigned *)(void *)(sq + p->sq_off.tail);
	dw->sq_flags = (_Atomic unsigned *)(void *)(sq + p->sq_off.flags);
	dw->sq_array = (unsigned *)(void *)(sq + p->sq_off.array);
	dw->sq_mask = *(unsigned *)(void *)(sq + p->sq_off.ring_mask);
	dw->cq_head = (_Atomic unsigned *)(void *)(cq + p->cq_off.head);
	dw->cq_tail = (_Atomic unsigned *)(void *)(cq + p->cq_off.tail);
	dw->cq_mask = *(unsigned *)(void *)(cq + p->cq_off.ring_mask);
	dw->cqes = (struct io_uring_cqe *)(void *)(cq + p->cq_off.cqes);
	return 0;
}

static void
dw_free(struct deathwatch *dw)
{
	if (dw == NULL)
		return;
	if (dw->ev.fd != -1)
		loop_del(&dw->ad->loop, &dw->ev);
	if (dw->sqes != NULL)
		munmap(dw->sqes, dw->sqes_len);
	if (dw->cq_ring != NULL)
		munmap(dw->cq_ring, dw->cq_len);
	if (dw->sq_ring != NULL)
		munmap(dw->sq_ring, dw->sq_len);
	if (dw->fd != -1)
		close(dw->fd);	/* cancels the polls still pending */
	free(dw);
}

static struct deathwatch *
dw_open(struct actord *ad)
{
	struct io_uring_params p;
	struct deathwatch *dw;

	if ((dw = calloc(1, sizeof(*dw))) == NULL)
		return NULL;
	dw->ad = ad;
	dw->ev.fd = -1;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = DW_CQ;
	dw->fd = (int)syscall(SYS_io_uring_setup, DW_SQ, &p);
	if (dw->fd == -1 || !(p.features & IORING_FEAT_NODROP) ||
	    dw_map(dw, &p) == -1 ||
	    loop_add(&ad->loop, &dw->ev, dw->fd, EPOLLIN, on_ring, dw) == -1) {
		if (dw->fd != -1 || errno != ENOSYS)
			log_debug("deaths watched by pidfds in the loop: "
			    "io_uring: %s", strerror(errno));
		dw_free(dw);
		return NULL;
	}
	return dw;
}

/*
 * Watch pid's death, fd its pidfd: true if a poll of it is in the ring,
 * which holds the file from then on (the caller closes fd either way).
 * The ring is made at the first call; if it cannot be, never again.
 */
bool
deathwatch_add(struct actord *ad, pid_t pid, int fd)
{
	struct deathwatch *dw;
	struct io_uring_sqe *sqe;
	unsigned tail, i;
	int rc;

	if (!ad->dw_tried) {
		ad->dw_tried = true;
		ad->dw = dw_open(ad);
	}
	if ((dw = ad->dw) == NULL)
		return false;
	tail = atomic_load_explicit(dw->sq_tail, memory_order_relaxed);
	i = tail & dw->sq_mask;
	sqe = &dw->sqes[i];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = fd;
	sqe->poll32_events = POLLIN;
	sqe->user_data = (uint64_t)pid;
	dw->sq_array[i] = i;
	atomic_store_explicit(dw->sq_tail, tail + 1, memory_order_release);
	do
		rc = ring_enter(dw->fd, 1, 0);
	while (rc == -1 && errno == EINTR);
	if (rc != 1)	/* not read: taken back before fd is closed */
		atomic_store_explicit(dw->sq_tail, tail, memory_order_release);
	return rc == 1;
}

/* Each completion: a death (or a poll that failed): reaped by its pid. */
static void
on_ring(void *arg, uint32_t events)
{
	struct deathwatch *dw = arg;
	struct io_uring_cqe *c;
	unsigned head, tail;
	bool failed;
	pid_t pid;

	(void)events;
	for (;;) {
		head = atomic_load_explicit(dw->cq_head, memory_order_relaxed);
		tail = atomic_load_explicit(dw->cq_tail, memory_order_acquire);
		if (head == tail) {
			/* Completions kept for want of room: fetched now. */
			if (!(atomic_load(dw->sq_flags) &
			    IORING_SQ_CQ_OVERFLOW) ||
			    ring_enter(dw->fd, 0, IORING_ENTER_GETEVENTS) == -1)
				break;
			continue;
		}
		c = &dw->cqes[head & dw->cq_mask];
		pid = (pid_t)c->user_data;
		failed = c->res < 0;
		atomic_store_explicit(dw->cq_head, head + 1,
		    memory_order_release);
		if (failed)
			worker_watch_failed(dw->ad, pid);
		/*
		 * Reaped already (its SIGCHLD came first, as it mostly
		 * does): no worker has that pid any more, and a waitid
		 * would only say so (ECHILD), one system call per death.
		 */
		if (failed || node_by_pid(dw->ad, pid) != NULL)
			actord_reap_pid(dw->ad, pid);
	}
}

void
deathwatch_close(struct actord *ad)
{
	dw_free(ad->dw);
	ad->dw = NULL;
}
