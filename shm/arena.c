/*
 * arena.c: the arena as a whole: computing a layout, creating its two
 * sealed memfds (the layout, read-only to all but its creator, and the
 * data), attaching to inherited ones (the seals, the header and every size
 * and offset it gives, checked against the fds' real sizes before anything
 * else reads the arena; each mailbox's descriptor when the mailbox is
 * first used), the actor table and its index by path (a hash table: a
 * lookup costs the same whatever the number of mailboxes).
 *
 * Owns: struct shm_arena handles, the header and descriptors, the actor
 * table.  Must never trust an offset it did not recompute itself: attach
 * copies the header, recomputes from its sizes every offset it holds and
 * refuses any difference; a descriptor is copied, recomputed from its own
 * sizes and bounded by the data memfd's real size the first time its
 * mailbox is used (shm_localize), so neither can ever point a reader out
 * of bounds.  Must never let a process other than the creator write the
 * layout: its memfd is sealed F_SEAL_FUTURE_WRITE once the creator has
 * mapped it, and every setter of the actor table checks that it runs in
 * the creator.
 *
 * Why attach checks the header only (issue 13: attaching must cost the same
 * whatever the number of mailboxes, or starting N workers is O(N^2)): a
 * worker's layout fd is the one actord created, inherited across exec, and
 * its seals (checked: F_GET_SEALS) prove that nobody but actord's own
 * mapping can have written it; no worker can change another process's
 * fds.  A layout that is not actord's can only come from whoever started
 * the process.  Either way what a descriptor says is bounded before use,
 * once, and a mailbox whose descriptor fails is refused (SHM_ECORRUPT),
 * never read: nothing in the layout can make a reader crash, and the
 * checksums (the header's at attach, each descriptor's at first use) still
 * catch a layout changed by accident.
 *
 * The read-once rule (shm.h): validate copies the header once
 * (SHM_ONCE_COPY) and checks the copy, localize builds the process-local
 * view from it; shm_localize copies a descriptor once, checks the copy and
 * builds the mailbox's view from it, never from the arena again.  The
 * layout memfd is read-only to workers, but a reader that attached before
 * the seal must not depend on that.
 */
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm_impl.h"

static int	 seterr(char *, size_t, int, const char *, ...)
		    __attribute__((format(printf, 4, 5)));
static int	 mailbox_check(const struct shm_mailbox_layout *, uint32_t,
		    char *, size_t);
static void	 send_view(struct shm_send_view *, const struct shm_desc *,
		    unsigned char *, bool);
static void	 place_header(struct shm_hdr *);
static uint64_t	 place_mailbox(struct shm_desc *, uint64_t);
static uint64_t	 place_slots(struct shm_desc *, uint64_t);
static uint64_t	 inhand_far(const struct shm_desc *);
static uint64_t	 place(struct shm_hdr *, struct shm_desc *);
static uint64_t	 header_sum(const struct shm_hdr *);
static int	 desc_check(const struct shm_arena *, uint32_t,
		    struct shm_desc *, char *, size_t);
static void	 localize_desc(struct shm_arena *, uint32_t,
		    const struct shm_desc *, unsigned char *);
static size_t	 quarantine_desc(struct shm_desc *);
static void	 place_big(struct shm_desc *);
static uint64_t	 describe(const struct shm_layout *, struct shm_hdr *,
		    struct shm_desc **);
static unsigned char *map_data(struct shm_arena *, int, size_t);
static int	 new_memfd(struct shm_arena *, const char *, size_t, bool,
		    int *, unsigned char **, char *, size_t);
static int	 validate(const struct shm_hdr *, size_t, size_t,
		    struct shm_hdr *, char *, size_t);
static void	 layout_copy(const struct shm_arena *, uint32_t, void *,
		    const void *, size_t);
static int	 localize(struct shm_arena *, const struct shm_hdr *, char *,
		    size_t);
static int	 check_fd(int, int, const char *, size_t *, char *, size_t);
static int	 env_fd(const char *, int *, char *, size_t);
static void	 init_arena(struct shm_arena *, const struct shm_layout *);
static void	 view_policy(struct shm_mbox_local *);
static uint64_t	 random_id(void);
static int	 is_pow2(uint32_t);
static uint32_t	 index_home(const struct shm_arena *, const char *, size_t);
static void	 index_remove(struct shm_arena *, uint32_t);
static void	 index_insert(struct shm_arena *, uint32_t, const char *,
		    size_t);
static void	 calibrate(struct shm_hdr *, const struct shm_clock_mark *);
static bool	 has_word(const char *, const char *);
static void	 read_line(const char *, const char *, char *, size_t);

static int
seterr(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list	 ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static int
is_pow2(uint32_t v)
{
	return v >= 2 && (v & (v - 1)) == 0;
}

uint64_t
shm_fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t	 i;

	for (i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int
mailbox_check(const struct shm_mailbox_layout *m, uint32_t i, char *err,
    size_t errlen)
{
	if (!is_pow2(m->capacity) || m->capacity > SHM_CAPACITY_MAX)
		return seterr(err, errlen, SHM_EINVAL, "mailbox %u: capacity "
		    "%u is not a power of two in [2, %u]", i, m->capacity,
		    SHM_CAPACITY_MAX);
	if (!is_pow2(m->sys_capacity) || m->sys_capacity > SHM_CAPACITY_MAX)
		return seterr(err, errlen, SHM_EINVAL, "mailbox %u: system "
		    "lane capacity %u is not a power of two >= 2", i,
		    m->sys_capacity);
	if (!is_pow2(m->reply_capacity) || m->reply_capacity >
	    SHM_CAPACITY_MAX)
		return seterr(err, errlen, SHM_EINVAL, "mailbox %u: reply "
		    "lane capacity %u is not a power of two >= 2", i,
		    m->reply_capacity);
	if (m->cell < SHM_CELL_MIN || m->cell > SHM_CELL_MAX ||
	    m->cell % SHM_CL != 0)
		return seterr(err, errlen, SHM_EINVAL, "mailbox %u: cell size "
		    "%u is not a multiple of 64 in [%u, %u]", i, m->cell,
		    SHM_CELL_MIN, SHM_CELL_MAX);
	if ((unsigned)m->overflow > SHM_OVERFLOW_MAX)
		return seterr(err, errlen, SHM_EINVAL, "mailbox %u: unknown "
		    "overflow policy %d", i, (int)m->overflow);
	if (m->state_size > (1u << 30))
		return seterr(err, errlen, SHM_EINVAL, "mailbox %u: state "
		    "size %u is larger than 1 GiB", i, m->state_size);
	if (m->max_message > SHM_MESSAGE_MAX)
		return seterr(err, errlen, SHM_EINVAL, "mailbox %u: "
		    "max_message %u is larger than %u", i, m->max_message,
		    SHM_MESSAGE_MAX);
	return 0;
}

int
shm_layout_check(const struct shm_layout *l, char *err, size_t errlen)
{
	uint32_t i;
	int	 rc;

	if (l == NULL)
		return seterr(err, errlen, SHM_EINVAL, "no layout");
	if (l->nmailboxes > SHM_MAX_MAILBOXES)
		return seterr(err, errlen, SHM_EINVAL, "%u mailboxes: at most "
		    "%u", l->nmailboxes, SHM_MAX_MAILBOXES);
	if (l->nmailboxes > 0 && l->mailboxes == NULL)
		return seterr(err, errlen, SHM_EINVAL, "no mailbox layouts");
	if (l->nproducers < 1 || l->nproducers > SHM_MAX_PRODUCERS)
		return seterr(err, errlen, SHM_EINVAL, "%u producer slots: "
		    "need 1 to %u", l->nproducers, SHM_MAX_PRODUCERS);
	if (!is_pow2(l->dl_capacity) || l->dl_capacity > SHM_CAPACITY_MAX)
		return seterr(err, errlen, SHM_EINVAL, "dead-letter capacity "
		    "%u is not a power of two >= 2", l->dl_capacity);
	for (i = 0; i < l->nmailboxes; i++)
		if ((rc = mailbox_check(&l->mailboxes[i], i, err, errlen)) < 0)
			return rc;
	return 0;
}

/*
 * Every offset of the header, from its counts: where the descriptors, the
 * actor table, the actors' paths and the index lie in the layout memfd
 * (the table and the paths apart, so that the entries a send reads are
 * dense: struct shm_actor; and its size, to
 * h->layout_size), and the data memfd's regions up to the first mailbox
 * (h->mbox_off).  Attach recomputes these and compares.
 */
static void
place_header(struct shm_hdr *h)
{
	uint64_t off;

	off = SHM_ALIGN(sizeof(*h), SHM_CL);
	h->desc_off = off;
	off += SHM_ALIGN((uint64_t)h->nmailboxes * sizeof(struct shm_desc),
	    SHM_CL);
	h->actors_off = off;
	off += SHM_ALIGN((uint64_t)h->nmailboxes * sizeof(struct shm_actor),
	    SHM_CL);
	h->paths_off = off;
	off += (uint64_t)h->nmailboxes * sizeof(struct shm_path);
	h->index_off = off;
	/* Twice the buckets of the mailboxes, at least two: probes stay short. */
	for (h->index_size = 2; h->index_size < 2 * h->nmailboxes; )
		h->index_size <<= 1;
	off += SHM_ALIGN((uint64_t)h->index_size * sizeof(uint32_t), SHM_CL);
	h->layout_size = SHM_ALIGN(off, 4096);
	off = 0;
	h->pool_off = off;
	off += sizeof(struct shm_pool);
	h->slots_off = off;
	off += ((uint64_t)h->nproducers + (uint64_t)SHM_OWN_SLOTS *
	    h->nmailboxes) * sizeof(struct shm_slot);
	h->dl_off = off;
	off += SHM_ALIGN(sizeof(struct shm_dl_ctl), SHM_CL);
	h->dl_entries_off = off;
	off += (uint64_t)h->dl_capacity * sizeof(struct shm_dl_entry);
	h->mbox_off = off;
}

/*
 * One mailbox's offsets, from its sizes and where it may start (off, in
 * the data memfd, rounded up to a window of the kernel's fault-around,
 * SHM_FAULT_BLOCK): its control block, its state region, the head of its
 * in-hand slot and its lanes' cells.  Returns where the next one starts.
 * The sizes are bounded (mailbox_check) and off is below 2^62: no sum can
 * wrap.  The control block lies less than half a window past that start,
 * so the start is its offset rounded down to a window (desc_check).
 *
 * The order is that of a wake-up: an actor woken after a long sleep has
 * its pages gone from the TLB and pays a page walk for each one it
 * touches, so what every message touches (the control block, libactor's
 * header at the start of the state region, the head of the in-hand slot)
 * shares one page for the default sizes, and the cells follow.  A sender
 * touches the control block's page and its cell's, so these share a
 * window: a sender's first fault on a mailbox maps both, with the pages
 * of cells its consumer made ahead of it (wait.c, map_ahead).  Nothing
 * large lies between them: the in-hand slot's far part, room for a
 * payload larger than a cell (16 pages and more with the default
 * max_message), is with the large slots in a region after every mailbox
 * (place_slots); here, it cost a sender two faults a mailbox where one
 * does (tools/bench/bench_scale.c, sparse; tests/check_wake_pages.c,
 * test_sender_one_fault).  The main lane's cells begin at a chunk of
 * map_ahead's (which makes pages of cells a chunk at a time, chunks
 * aligned in the address space, two a window), half a window in for the
 * default sizes, and the control block's pages end there: the first
 * chunk is whole and shares the control block's window.  Address space
 * only: the gap before the control block is never written.
 */
static uint64_t
place_mailbox(struct shm_desc *d, uint64_t off)
{
	uint64_t head;
	uint32_t l;

	place_big(d);
	/* What precedes the cells, from the control block's start. */
	head = SHM_ALIGN(sizeof(struct shm_mbox), SHM_CL) +
	    SHM_ALIGN(d->state_size, SHM_CL) + d->inhand_size;
	off = SHM_ALIGN(off, SHM_FAULT_BLOCK);
	off += SHM_ALIGN(head, SHM_AHEAD_CHUNK * SHM_PAGE) -
	    SHM_ALIGN(head, SHM_PAGE);
	d->ctl_off = off;
	off += SHM_ALIGN(sizeof(struct shm_mbox), SHM_CL);
	d->state_off = off;
	off += SHM_ALIGN(d->state_size, SHM_CL);
	d->inhand_off = off;
	off += d->inhand_size;
	for (l = 0; l < SHM_NLANES; l++) {
		/*
		 * On a page: cells of a power of two bytes then never
		 * straddle two (the first lane's began 0xec0 into a page,
		 * so its second cell did: every 16th message cost its
		 * sender and its consumer a page more, at first a fault).
		 * Address space only: the gap is never written.
		 */
		off = SHM_ALIGN(off, SHM_PAGE);
		d->cells_off[l] = off;
		off += (uint64_t)d->capacity[l] * d->cell;
	}
	return off;
}

/*
 * One mailbox's large slots, then the far part of its in-hand slot (room
 * for the largest payload, only when there are large slots), from off (in
 * the large slots' region, which follows every mailbox's other parts):
 * returns where the next ones start.
 *
 * Apart because they are address space that is rarely touched: with the
 * default max_message a mailbox's large slots span megabytes, and placed
 * between two mailboxes they put each mailbox in a 2 MiB region of its
 * own.  A process that touches many mailboxes (actord; a sender to many
 * actors) then needs a page of page table per mailbox (40 MiB of page
 * tables for actord at 10,000 actors), and each page walk to a mailbox
 * it has not touched lately misses at every level.  Packed, neighbours
 * share their page tables.
 */
static uint64_t
place_slots(struct shm_desc *d, uint64_t off)
{
	uint32_t l;

	off = SHM_ALIGN(off, SHM_CL);
	for (l = 0; l < SHM_NLANES; l++) {
		d->big_off[l] = off;
		off += (uint64_t)d->big_count[l] * d->big_size;
	}
	/* The in-hand slot's far part, not in the descriptor: inhand_far. */
	return off + d->big_size;
}

/* Where the far part of the in-hand slot of d begins (place_slots). */
static uint64_t
inhand_far(const struct shm_desc *d)
{
	return d->big_off[SHM_LANE_REPLY] +
	    (uint64_t)d->big_count[SHM_LANE_REPLY] * d->big_size;
}

/*
 * Compute every offset from the sizes in the header and descriptors (at
 * create).  The layout memfd's size goes to h->layout_size; returns the
 * data memfd's (both page aligned), or 0 if it does not fit in 2^62 bytes.
 */
static uint64_t
place(struct shm_hdr *h, struct shm_desc *d)
{
	uint64_t off, lim = 1ULL << 62;
	uint32_t i;

	place_header(h);
	off = h->mbox_off;
	for (i = 0; i < h->nmailboxes; i++)
		if ((off = place_mailbox(&d[i], off)) > lim)
			return 0;
	off = SHM_ALIGN(off, SHM_PAGE);
	for (i = 0; i < h->nmailboxes; i++)
		if ((off = place_slots(&d[i], off)) > lim)
			return 0;
	return SHM_ALIGN(off, 4096);
}

/*
 * A mailbox's large slots and in-hand slot, from its sizes: no large
 * slot when every payload it takes fits in a cell; else one per reply
 * cell (an answer that got a cell never waits: replyslots.c), and up to
 * SHM_BIG_MAIN for the main lane (ring.c, big_room).  The system lane
 * has none.  A slot is the largest payload rounded to a cache line.  The
 * in-hand slot's head is a cell's bytes; its far part, when there are
 * large slots, a large slot's (place_slots).
 */
static void
place_big(struct shm_desc *d)
{
	uint32_t inl = d->cell - SHM_CELL_HDR, cap = d->capacity[SHM_LANE_MAIN];

	memset(d->big_count, 0, sizeof(d->big_count));
	d->big_size = 0;
	d->inhand_size = d->cell;
	if (d->max_message <= inl)
		return;
	d->big_size = (uint32_t)SHM_ALIGN(d->max_message, SHM_CL);
	d->big_count[SHM_LANE_MAIN] = cap < SHM_BIG_MAIN ? cap : SHM_BIG_MAIN;
	d->big_count[SHM_LANE_REPLY] = d->capacity[SHM_LANE_REPLY];
}

/* The header's checksum: FNV-1a of it, checksum and paths_gen zero. */
static uint64_t
header_sum(const struct shm_hdr *h)
{
	struct shm_hdr	 c = *h;

	c.checksum = 0;
	c.paths_gen = 0;
	return shm_fnv(0xcbf29ce484222325ULL, &c, sizeof(c));
}

/* A descriptor's checksum: FNV-1a of it (check zero), folded to 32 bits. */
uint32_t
shm_desc_sum(const struct shm_desc *d)
{
	struct shm_desc	 c = *d;
	uint64_t	 h;

	c.check = 0;
	h = shm_fnv(0xcbf29ce484222325ULL, &c, sizeof(c));
	return (uint32_t)(h ^ (h >> 32));
}

/*
 * The header and descriptors of layout l, in memory (d: calloc'd, one
 * more than needed); the data memfd's size, or 0 if too large.
 */
static uint64_t
describe(const struct shm_layout *l, struct shm_hdr *h, struct shm_desc **dp)
{
	struct shm_desc	*d;
	uint32_t	 i;

	memset(h, 0, sizeof(*h));
	if ((*dp = d = calloc(l->nmailboxes + 1, sizeof(*d))) == NULL)
		return 0;
	h->magic = SHM_MAGIC;
	h->version = SHM_VERSION;
	h->hdr_size = sizeof(*h);
	h->nmailboxes = l->nmailboxes;
	h->nproducers = l->nproducers;
	h->dl_capacity = l->dl_capacity;
	for (i = 0; i < l->nmailboxes; i++) {
		d[i].capacity[SHM_LANE_MAIN] = l->mailboxes[i].capacity;
		d[i].capacity[SHM_LANE_SYSTEM] = l->mailboxes[i].sys_capacity;
		d[i].capacity[SHM_LANE_REPLY] = l->mailboxes[i].reply_capacity;
		d[i].cell = l->mailboxes[i].cell;
		d[i].overflow = (uint32_t)l->mailboxes[i].overflow;
		d[i].block_timeout_ms = l->mailboxes[i].block_timeout_ms;
		d[i].state_size = l->mailboxes[i].state_size;
		d[i].max_message = l->mailboxes[i].max_message;
	}
	h->total_size = place(h, d);
	for (i = 0; i < l->nmailboxes; i++)
		d[i].check = shm_desc_sum(&d[i]);
	return h->total_size;
}

size_t
shm_layout_size(const struct shm_layout *l)
{
	struct shm_hdr	 h;
	struct shm_desc	*d = NULL;
	uint64_t	 total;

	if (shm_layout_check(l, NULL, 0) < 0)
		return 0;
	total = describe(l, &h, &d);
	free(d);
	return total > SIZE_MAX ? 0 : (size_t)total;
}

static uint64_t
random_id(void)
{
	uint64_t	 id = 0;
	struct timespec	 ts;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != sizeof(id)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		id = shm_fnv(0xcbf29ce484222325ULL, &ts, sizeof(ts)) ^
		    (uint64_t)getpid();
	}
	return id;
}

/*
 * The data memfd's size bytes mapped writable, at an address aligned to
 * SHM_FAULT_BLOCK, so that a mailbox, aligned so in the memfd
 * (place_mailbox), begins a fault-around window in every process: a
 * sender that faults on its control block or its first page of cells
 * maps with it the other and every page of cells its consumer made ahead
 * (wait.c, map_ahead), in one fault.  A block of
 * address space more is reserved, never backed, and unmapped with the
 * rest (shm_detach).  MAP_FAILED, errno set, or the mapping.
 */
static unsigned char *
map_data(struct shm_arena *a, int fd, size_t size)
{
	size_t		 span = size + SHM_FAULT_BLOCK - SHM_PAGE;
	unsigned char	*r, *p;
	int		 saved;

	r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
	    MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return MAP_FAILED;
	p = (unsigned char *)SHM_ALIGN((uintptr_t)r, SHM_FAULT_BLOCK);
	if (mmap(p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
	    0) == MAP_FAILED) {
		saved = errno;
		munmap(r, span);
		errno = saved;
		return MAP_FAILED;
	}
	a->span = r;
	a->span_size = span;
	return p;
}

/*
 * A memfd of size bytes, mapped writable (data: by map_data into a's
 * handle): 0, or an error code.
 */
static int
new_memfd(struct shm_arena *a, const char *name, size_t size, bool data,
    int *fdp, unsigned char **basep, char *err, size_t errlen)
{
	int	 fd, saved;
	void	*p = MAP_FAILED;

	if ((fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING)) == -1)
		return seterr(err, errlen, SHM_ESYS, "memfd_create: %s",
		    strerror(errno));
	if (ftruncate(fd, (off_t)size) == -1 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == -1 ||
	    (p = data ? map_data(a, fd, size) : mmap(NULL, size, PROT_READ |
	    PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		saved = errno;
		close(fd);
		errno = saved;
		return seterr(err, errlen, SHM_ESYS, "a memfd of %zu bytes "
		    "(%s): %s", size, name, strerror(saved));
	}
	*fdp = fd;
	*basep = p;
	return 0;
}

int
shm_create(const struct shm_layout *l, const char *name,
    struct shm_arena **out, char *err, size_t errlen)
{
	return shm_create_marked(l, NULL, name, out, err, errlen);
}

/* As shm_create, the calibration's first reading taken before (mark). */
int
shm_create_marked(const struct shm_layout *l,
    const struct shm_clock_mark *mark, const char *name,
    struct shm_arena **out, char *err, size_t errlen)
{
	struct shm_arena *a;
	struct shm_hdr	 h;
	struct shm_desc	*d = NULL;
	char		 lname[SHM_PATH_MAX];
	uint64_t	 size;
	int		 rc;

	*out = NULL;
	if ((rc = shm_layout_check(l, err, errlen)) < 0)
		return rc;
	if ((size = describe(l, &h, &d)) == 0 || size > SIZE_MAX) {
		free(d);
		return seterr(err, errlen, SHM_EINVAL, "layout too large");
	}
	h.arena_id = random_id();
	calibrate(&h, mark);
	h.checksum = header_sum(&h);
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		free(d);
		return seterr(err, errlen, SHM_ESYS, "calloc: %s",
		    strerror(errno));
	}
	a->fd = a->lfd = -1;
	a->creator = true;
	if (name == NULL)
		name = "actord-arena";
	snprintf(lname, sizeof(lname), "%s-layout", name);
	if ((rc = new_memfd(a, name, (size_t)size, true, &a->fd, &a->base,
	    err, errlen)) < 0 || (rc = new_memfd(a, lname,
	    (size_t)h.layout_size, false, &a->lfd, &a->lbase, err,
	    errlen)) < 0)
		goto fail;
	a->size = (size_t)size;
	a->lsize = (size_t)h.layout_size;
	memcpy(a->lbase, &h, sizeof(h));
	memcpy(a->lbase + h.desc_off, d, (size_t)h.nmailboxes * sizeof(*d));
	if ((rc = localize(a, &h, err, errlen)) < 0)
		goto fail;
	init_arena(a, l);
	/*
	 * From here on, only this mapping may write the layout: no other
	 * can be made writable, and nobody can write, truncate or punch
	 * the file.  The data memfd can only be kept from changing size.
	 */
	if (fcntl(a->lfd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) ==
	    -1 || fcntl(a->fd, F_ADD_SEALS, F_SEAL_SEAL) == -1) {
		rc = seterr(err, errlen, SHM_ESYS, "sealing the arena: %s",
		    strerror(errno));
		goto fail;
	}
	free(d);
	*out = a;
	return 0;
fail:
	free(d);
	shm_detach(a);
	return rc;
}

/*
 * Fresh memfd pages are zero: only the cell sequence numbers and the
 * main lane's policies (the descriptor's) need a start.  A lazy mailbox
 * gets its sequence numbers later (shm_mailbox_prepare), so that its
 * pages stay unallocated until a child needs them.
 */
static void
init_arena(struct shm_arena *a, const struct shm_layout *layout)
{
	struct shm_mbox_local *mb;
	uint32_t i;

	for (i = 0; i < a->n; i++) {
		mb = shm_mb(a, i);
		atomic_store_explicit(&mb->actor->cfg_capacity,
		    mb->lay.capacity, memory_order_relaxed);
		atomic_store_explicit(&mb->actor->cfg_overflow,
		    (uint32_t)mb->lay.overflow, memory_order_relaxed);
		atomic_store_explicit(&mb->actor->cfg_timeout_ms,
		    mb->lay.block_timeout_ms, memory_order_relaxed);
		view_policy(mb);
		if (!layout->mailboxes[i].lazy)
			(void)shm_mailbox_prepare(a, i);
	}
	atomic_thread_fence(memory_order_seq_cst);
}

/*
 * The owner (the process that created the arena) gives a mailbox its
 * starting state: empty lanes at position 0, every cell free for its
 * position.  Until then "prepared" (in the layout: no worker can set it)
 * says no, and a send fails at once (SHM_ENOTREADY) instead of claiming a
 * cell whose number means nothing.  Any other process may only ask:
 * SHM_EINVAL if the mailbox is not prepared.
 */
int
shm_mailbox_prepare(struct shm_arena *a, uint32_t idx)
{
	struct shm_lane_local *l;
	struct shm_actor *act;
	uint32_t k;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	act = &a->actors[idx];
	if (atomic_load_explicit(&act->prepared, memory_order_acquire))
		return 0;
	if (!a->creator)
		return SHM_EINVAL;
	for (k = 0; k < SHM_NLANES; k++) {
		l = &shm_mb(a, idx)->lane[k];
		atomic_store_explicit(&l->ctl->tail, 0, memory_order_relaxed);
		atomic_store_explicit(&l->ctl->head, 0, memory_order_relaxed);
		atomic_store_explicit(&l->ctl->dequeued, 0,
		    memory_order_relaxed);
		atomic_store_explicit(&l->ctl->depth_hwm, 0,
		    memory_order_relaxed);
		/*
		 * Nothing to write in the cells: one never written is free
		 * for its first lap (shm_impl.h, cell_seq), and before this
		 * nobody could send here (SHM_ENOTREADY); what a scribbler
		 * wrote is repaired by its owner (shm_mailbox_repair).
		 */
	}
	/* The sequence numbers are visible before "prepared" is. */
	atomic_thread_fence(memory_order_seq_cst);
	atomic_store_explicit(&act->prepared, 1, memory_order_release);
	return 0;
}

bool
shm_mailbox_prepared(const struct shm_arena *a, uint32_t idx)
{
	return idx < a->n &&
	    atomic_load_explicit(&a->actors[idx].prepared,
	    memory_order_acquire) != 0;
}

/*
 * Check a layout memfd's header against the memfds' real sizes before
 * anything else is read: magic, version, sizes, counts, then every offset
 * it holds, recomputed from its counts (place_header) and compared, then
 * its checksum.  The header is a copy the caller read (pread: no page of
 * the layout mapped for it), and only the copy is checked and then used
 * (*hp), so that nothing read after the check can differ from what was
 * checked.  The descriptors are left to the first use of
 * each mailbox (shm_localize): what attach costs does not grow with their
 * number.
 */
static int
validate(const struct shm_hdr *copy, size_t lsize, size_t dsize,
    struct shm_hdr *hp, char *err, size_t errlen)
{
	struct shm_hdr	 h = *copy, h2;

	if (h.magic != SHM_MAGIC)
		return seterr(err, errlen, SHM_ECORRUPT, "not an actord arena "
		    "(magic %#llx)", (unsigned long long)h.magic);
	if (h.version != SHM_VERSION)
		return seterr(err, errlen, SHM_ECORRUPT, "arena layout version "
		    "%u, this library reads version %u", h.version,
		    SHM_VERSION);
	if (h.hdr_size != sizeof(h))
		return seterr(err, errlen, SHM_ECORRUPT, "header size %u, "
		    "expected %zu", h.hdr_size, sizeof(h));
	if (h.total_size != dsize || h.layout_size != lsize)
		return seterr(err, errlen, SHM_ECORRUPT, "arena header says "
		    "%llu + %llu bytes, the fds have %zu + %zu (truncated or "
		    "foreign)", (unsigned long long)h.layout_size,
		    (unsigned long long)h.total_size, lsize, dsize);
	if (h.nmailboxes > SHM_MAX_MAILBOXES || h.nproducers < 1 ||
	    h.nproducers > SHM_MAX_PRODUCERS || !is_pow2(h.dl_capacity) ||
	    h.dl_capacity > SHM_CAPACITY_MAX)
		return seterr(err, errlen, SHM_ECORRUPT, "arena header has "
		    "impossible counts");
	/* The layout holds its descriptors, table and index (layout_size). */
	h2 = h;
	place_header(&h2);
	if (memcmp(&h2, &h, sizeof(h)) != 0 || h.mbox_off > dsize)
		return seterr(err, errlen, SHM_ECORRUPT, "arena offsets do not "
		    "match its sizes (corrupt header)");
	if (header_sum(&h) != h.checksum)
		return seterr(err, errlen, SHM_ECORRUPT, "arena header checksum "
		    "mismatch (corrupt header)");
	*hp = h;
	return 0;
}

/*
 * Build the process-local view from a validated header: the private copy,
 * never the arena, which might say something else by now.
 */
static int
localize(struct shm_arena *a, const struct shm_hdr *h, char *err,
    size_t errlen)
{
	struct shm_desc	 q;
	size_t		 qsize = quarantine_desc(&q), views, sv, mine;
	unsigned char	*p;

	a->id = h->arena_id;
	shm_membarrier_init(a);
	shm_cpu_init(a);
	a->tsc_ok = h->tsc_ok;
	a->tsc_base = h->tsc_base;
	a->ns_base = h->ns_base;
	a->tsc_mult = h->tsc_mult;
	a->n = h->nmailboxes;
	a->own = a->n;			/* none (shm_consume) */
	a->npool = h->nproducers;
	a->nslots = h->nproducers + SHM_OWN_SLOTS * h->nmailboxes;
	a->mbox_off = h->mbox_off;
	a->pool = (struct shm_pool *)(void *)(a->base + h->pool_off);
	a->index = (_Atomic uint32_t *)(void *)(a->lbase + h->index_off);
	a->index_mask = h->index_size - 1;
	a->dl_cap = h->dl_capacity;
	a->slots = (struct shm_slot *)(void *)(a->base + h->slots_off);
	a->dl = (struct shm_dl_ctl *)(void *)(a->base + h->dl_off);
	a->dl_entries = (struct shm_dl_entry *)(void *)(a->base +
	    h->dl_entries_off);
	a->actors = (struct shm_actor *)(void *)(a->lbase + h->actors_off);
	a->paths = (const struct shm_path *)(const void *)(a->lbase +
	    h->paths_off);
	a->desc = (const struct shm_desc *)(const void *)(a->lbase +
	    h->desc_off);
	/*
	 * The per-mailbox view is made on first use (shm_localize): a
	 * worker that talks to a few of 10,000 mailboxes must not pay
	 * 10,000 entries of private memory.  In the same private mapping,
	 * zero until written, the slots this process opened (mine) and the
	 * quarantine: a page of them is allocated, and faulted in, only as
	 * it is written (a calloc'd mine was written whole at every attach:
	 * 6 pages at 1,000 mailboxes, 24 at 10,000; tests/check_attach_cost).
	 */
	views = SHM_ALIGN((size_t)(a->n + 1) * sizeof(*a->mb), SHM_PAGE);
	sv = SHM_ALIGN((size_t)(a->n + 1) * sizeof(*a->sv), SHM_PAGE);
	mine = SHM_ALIGN((size_t)a->nslots * sizeof(*a->mine), SHM_PAGE);
	a->mb_size = views + sv + mine + qsize;
	a->mb = mmap(NULL, a->mb_size, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a->mb == MAP_FAILED) {
		a->mb = NULL;
		return seterr(err, errlen, SHM_ESYS, "mmap: %s",
		    strerror(errno));
	}
	p = (unsigned char *)a->mb;
	a->sv = (struct shm_send_view *)(void *)(p + views);
	a->mine = (pid_t *)(void *)(p + views + sv);
	a->quarantine = p + views + sv + mine;
	return 0;
}

/*
 * A copy of len bytes of the layout at src, an entry of mailbox i.  Its
 * consumer reads its own entries once, at attach, with pread: a read
 * fault on the layout maps up to 16 pages around it (the kernel's fault-
 * around; they all exist, actord wrote them), each mapped and unmapped
 * by every worker for nothing (tests/check_attach_cost.c).  Any other
 * reader reads the mapping, where a fault serves many entries.  Either
 * way the copy is read once (SHM_ONCE_COPY's rule).
 */
static void
layout_copy(const struct shm_arena *a, uint32_t i, void *dst,
    const void *src, size_t len)
{
	off_t	 off = (const unsigned char *)src - a->lbase;

	if (i == a->own && !a->creator && a->lfd >= 0 &&
	    pread(a->lfd, dst, len, off) == (ssize_t)len)
		return;
	memcpy(dst, src, len);
	/* As SHM_ONCE_COPY: later reads are of the copy (a slow path). */
	__asm__ __volatile__("" : : "r"(dst) : "memory");
}

/*
 * Mailbox i's descriptor, copied once into *d and checked: its sizes
 * (mailbox_check), its checksum, and its offsets, recomputed from its
 * sizes and its starts (of its regions and of its large slots), inside
 * the data memfd past the header's regions.
 * Mailboxes are not checked against each other: they may overlap only in
 * memory every worker can write anyway.  O(1): shm_localize's.
 */
static int
desc_check(const struct shm_arena *a, uint32_t i, struct shm_desc *d,
    char *err, size_t errlen)
{
	struct shm_desc	 d2;
	uint64_t	 end;

	layout_copy(a, i, d, &a->desc[i], sizeof(*d));
	struct shm_mailbox_layout m = {
		.capacity = d->capacity[SHM_LANE_MAIN],
		.sys_capacity = d->capacity[SHM_LANE_SYSTEM],
		.reply_capacity = d->capacity[SHM_LANE_REPLY],
		.cell = d->cell,
		.overflow = (enum shm_overflow)d->overflow,
		.state_size = d->state_size,
		.max_message = d->max_message
	};
	if (mailbox_check(&m, i, err, errlen) < 0)
		return SHM_ECORRUPT;
	if (d->check != shm_desc_sum(d))
		return seterr(err, errlen, SHM_ECORRUPT, "mailbox %u: "
		    "descriptor checksum mismatch (corrupt layout)", i);
	d2 = *d;
	/* It may start at its control block's window (place_mailbox). */
	if (d->ctl_off < a->mbox_off || d->ctl_off % SHM_CL != 0 ||
	    d->ctl_off > a->size || (end = place_mailbox(&d2, d->ctl_off /
	    SHM_FAULT_BLOCK * SHM_FAULT_BLOCK)) > a->size ||
	    d->big_off[0] < a->mbox_off || d->big_off[0] > a->size ||
	    place_slots(&d2, d->big_off[0]) > a->size ||
	    memcmp(&d2, d, sizeof(d2)) != 0)
		return seterr(err, errlen, SHM_ECORRUPT, "mailbox %u: "
		    "descriptor offsets out of the arena or not matching its "
		    "sizes (corrupt layout)", i);
	return 0;
}

/*
 * Mailbox i's process-local view, from a checked copy of its descriptor,
 * its regions at base (the data memfd's mapping, or a quarantine's).
 */
static void
localize_desc(struct shm_arena *a, uint32_t i, const struct shm_desc *d,
    unsigned char *base)
{
	struct shm_mbox_local *mb = shm_mb_slot(a, i);
	uint32_t k;

	mb->lay.capacity = d->capacity[SHM_LANE_MAIN];
	mb->lay.sys_capacity = d->capacity[SHM_LANE_SYSTEM];
	mb->lay.reply_capacity = d->capacity[SHM_LANE_REPLY];
	mb->lay.cell = d->cell;
	mb->lay.overflow = (enum shm_overflow)d->overflow;
	mb->lay.block_timeout_ms = d->block_timeout_ms;
	mb->lay.state_size = d->state_size;
	mb->lay.max_message = d->max_message;
	mb->actor = &a->actors[i];
	mb->inhand = base + d->inhand_off;
	mb->state = d->state_size > 0 ? base + d->state_off : NULL;
	for (k = 0; k < SHM_NLANES; k++) {
		mb->lane[k].ctl = &((struct shm_mbox *)(void *)(base +
		    d->ctl_off))->lane[k];
		mb->lane[k].cells = base + d->cells_off[k];
		mb->lane[k].cap = d->capacity[k];
		mb->lane[k].mask = d->capacity[k] - 1;
		mb->lane[k].cell = d->cell;
		mb->lane[k].ring_id = (uint64_t)i * SHM_NLANES + k + 1;
		mb->lane[k].inl = d->cell - SHM_CELL_HDR;
		mb->lane[k].max = mb->lane[k].inl;
		if (d->big_count[k] > 0) {
			mb->lane[k].big = base + d->big_off[k];
			mb->lane[k].big_count = d->big_count[k];
			mb->lane[k].big_mask = d->big_count[k] - 1;
			mb->lane[k].big_size = d->big_size;
			mb->lane[k].max = d->max_message;
		}
	}
	mb->payload_max = mb->lane[SHM_LANE_MAIN].max;
	mb->inhand_size = d->inhand_size;
	mb->inhand_far = d->big_size > 0 ? base + inhand_far(d) : NULL;
	mb->inhand_far_size = d->big_size;
	/* Its consumer starts as a sparse one (wait.c, shm_wait). */
	mb->naps = SHM_NAPS_FENCE;
	view_policy(mb);
	/* Last: m says the entry is made. */
	mb->m = (struct shm_mbox *)(void *)(base + d->ctl_off);
	if (mb != &a->own_mb)
		a->nviews++;
	send_view(&a->sv[i], d, base, mb->bad);
}

/*
 * A send view from a checked copy of its descriptor: what localize_desc
 * gives the full view's main lane, and its bad.
 */
static void
send_view(struct shm_send_view *sv, const struct shm_desc *d,
    unsigned char *base, bool bad)
{
	sv->cells = base + d->cells_off[SHM_LANE_MAIN];
	sv->cap = d->capacity[SHM_LANE_MAIN];
	sv->cell = d->cell;
	sv->max = d->big_count[SHM_LANE_MAIN] > 0 ? d->max_message :
	    d->cell - SHM_CELL_HDR;
	sv->bad = bad;
	/* Last: m says the entry is made. */
	sv->m = (struct shm_mbox *)(void *)(base + d->ctl_off);
}

/* What the view keeps of the actor table's policy (struct shm_mbox_local). */
static void
view_policy(struct shm_mbox_local *mb)
{
	uint32_t pol = atomic_load_explicit(&mb->actor->cfg_overflow,
	    memory_order_relaxed);

	mb->takes = pol == SHM_OVERFLOW_DROP_OLDEST ||
	    pol == SHM_OVERFLOW_COALESCE;
}

/*
 * The quarantine's descriptor: the smallest mailbox there is, from 0.
 * Returns its size.
 */
static size_t
quarantine_desc(struct shm_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->capacity[SHM_LANE_MAIN] = d->capacity[SHM_LANE_SYSTEM] =
	    d->capacity[SHM_LANE_REPLY] = 2;
	d->cell = SHM_CELL_MIN;
	return (size_t)SHM_ALIGN(place_slots(d, place_mailbox(d, 0)), SHM_CL);
}

/*
 * Mailbox i's process-local view, made on its first use.  Its descriptor
 * is checked here, once (desc_check); one that fails gets a view of its
 * own private, empty quarantine instead of the arena, marked bad: sends
 * to it fail (SHM_ECORRUPT), anything else finds it empty, and nothing
 * ever reads where the descriptor pointed.
 */
void
shm_localize(struct shm_arena *a, uint32_t i)
{
	struct shm_desc	 d;

	if (desc_check(a, i, &d, NULL, 0) == 0) {
		localize_desc(a, i, &d, a->base);
		return;
	}
	shm_mb_slot(a, i)->bad = true;
	quarantine_desc(&d);
	localize_desc(a, i, &d, a->quarantine);
}

void
shm_consume(struct shm_arena *a, uint32_t idx)
{
	if (idx >= a->n || a->own != a->n)
		return;
	/*
	 * A view already made moves; mb[idx] is never read again.  None
	 * made yet (at attach): its page of mb is not even read.
	 */
	if (a->nviews > 0)
		a->own_mb = a->mb[idx];
	a->own = idx;
}

/*
 * Mailbox i's send view alone, made on its first send (shm_sv), from its
 * descriptor checked as for the full view: a sender to many mailboxes
 * writes no full view it never reads (ring.c makes it for a slow path).
 */
void
shm_localize_send(struct shm_arena *a, uint32_t i)
{
	struct shm_desc	 d;

	if (desc_check(a, i, &d, NULL, 0) == 0) {
		send_view(&a->sv[i], &d, a->base, false);
		return;
	}
	quarantine_desc(&d);
	send_view(&a->sv[i], &d, a->quarantine, true);
}

int
shm_mailbox_check(struct shm_arena *a, uint32_t idx, char *err,
    size_t errlen)
{
	struct shm_desc	 d;
	int		 rc;

	if (idx >= a->n)
		return seterr(err, errlen, SHM_EBADINDEX, "mailbox %u: no such "
		    "mailbox (%u in the arena)", idx, a->n);
	if (!shm_mb(a, idx)->bad)
		return 0;
	rc = desc_check(a, idx, &d, err, errlen);
	return rc < 0 ? rc : seterr(err, errlen, SHM_ECORRUPT, "mailbox %u: "
	    "corrupt descriptor", idx);
}

/* fd is a memfd of a usable size sealed with at least seals: its size. */
static int
check_fd(int fd, int seals, const char *what, size_t *size, char *err,
    size_t errlen)
{
	struct stat	 st;
	int		 have;

	if (fstat(fd, &st) == -1)
		return seterr(err, errlen, SHM_ESYS, "fstat %s fd %d: %s",
		    what, fd, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_size <= 0)
		return seterr(err, errlen, SHM_ECORRUPT, "%s fd %d is not a "
		    "memory file of a usable size", what, fd);
	if ((have = fcntl(fd, F_GET_SEALS)) == -1 || (have & seals) != seals)
		return seterr(err, errlen, SHM_ECORRUPT, "%s fd %d is not "
		    "sealed %s", what, fd, (seals & F_SEAL_FUTURE_WRITE) ?
		    "read-only" : "against shrinking and growing");
	*size = (size_t)st.st_size;
	return 0;
}

int
shm_attach_fds(int lfd, int fd, struct shm_arena **out, char *err,
    size_t errlen)
{
	struct shm_arena *a;
	struct shm_hdr	 h0, h;
	size_t		 lsize, size;
	int		 rc;

	*out = NULL;
	if ((rc = check_fd(lfd, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_FUTURE_WRITE, "arena layout", &lsize, err, errlen)) < 0 ||
	    (rc = check_fd(fd, F_SEAL_SHRINK | F_SEAL_GROW, "arena", &size,
	    err, errlen)) < 0)
		return rc;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return seterr(err, errlen, SHM_ESYS, "calloc: %s",
		    strerror(errno));
	a->fd = a->lfd = -1;
	a->lsize = lsize;
	a->size = size;
	a->lbase = mmap(NULL, lsize, PROT_READ, MAP_SHARED, lfd, 0);
	a->base = map_data(a, fd, size);
	if (a->lbase == MAP_FAILED || a->base == MAP_FAILED) {
		rc = seterr(err, errlen, SHM_ESYS, "mmap the arena (%zu + %zu "
		    "bytes): %s", lsize, size, strerror(errno));
		goto fail;
	}
	if (lsize < sizeof(h0) || pread(lfd, &h0, sizeof(h0), 0) !=
	    (ssize_t)sizeof(h0)) {
		rc = seterr(err, errlen, SHM_ECORRUPT, "arena layout is %zu "
		    "bytes, too small for a header", lsize);
		goto fail;
	}
	if ((rc = validate(&h0, lsize, size, &h, err, errlen)) < 0)
		goto fail;
	if ((a->lfd = fcntl(lfd, F_DUPFD_CLOEXEC, 3)) == -1 ||
	    (a->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) == -1) {
		rc = seterr(err, errlen, SHM_ESYS, "dup the arena's fds: %s",
		    strerror(errno));
		goto fail;
	}
	if ((rc = localize(a, &h, err, errlen)) < 0)
		goto fail;
	*out = a;
	return 0;
fail:
	shm_detach(a);
	return rc;
}

/* The descriptor number in environment variable name. */
static int
env_fd(const char *name, int *fd, char *err, size_t errlen)
{
	const char	*s = getenv(name);
	char		*end;
	long		 v;

	if (s == NULL || *s == '\0')
		return seterr(err, errlen, SHM_EINVAL, "%s is not set", name);
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX)
		return seterr(err, errlen, SHM_EINVAL, "%s=\"%s\" is not a "
		    "file descriptor number", name, s);
	*fd = (int)v;
	return 0;
}

int
shm_attach_env(struct shm_arena **out, char *err, size_t errlen)
{
	int	 lfd, fd, rc;

	*out = NULL;
	if ((rc = env_fd(SHM_ENV_LAYOUT_FD, &lfd, err, errlen)) < 0 ||
	    (rc = env_fd(SHM_ENV_FD, &fd, err, errlen)) < 0)
		return rc;
	return shm_attach_fds(lfd, fd, out, err, errlen);
}

void
shm_detach(struct shm_arena *a)
{
	if (a == NULL)
		return;
	if (a->span != NULL)
		munmap(a->span, a->span_size);
	if (a->lbase != NULL && a->lbase != MAP_FAILED)
		munmap(a->lbase, a->lsize);
	if (a->mb != NULL)
		munmap(a->mb, a->mb_size);
	shm_release(a);
}

/*
 * The handle freed and its descriptors closed, its three mappings left
 * for the kernel to unmap at the process's exit, with the rest of its
 * memory at once: three munmap(2) fewer, each a walk of the mapping's
 * page tables and a TLB flush that exit does anyway (about 18 us of an
 * actor's stop on a VM: tools/bench/bench_scale.c, one_for_all).
 */
void
shm_release(struct shm_arena *a)
{
	if (a == NULL)
		return;
	if (a->fd >= 0)
		close(a->fd);
	if (a->lfd >= 0)
		close(a->lfd);
	free(a->takebuf);
	free(a);
}

/*
 * May the TSC serve as the arena clock?  When the kernel keeps time with
 * it (it checked it is constant and synchronized), or when the CPU says it
 * is invariant (constant_tsc: a constant rate; nonstop_tsc: it runs in
 * every sleep state), whatever clock source the kernel chose: a VM's
 * kvm-clock says nothing against a TSC the host keeps invariant.
 * clocksource: the kernel's current one; flags: the "flags" line of
 * /proc/cpuinfo (either may be NULL: unknown).
 */
bool
shm_tsc_trusted(const char *clocksource, const char *flags)
{
	if (clocksource != NULL && strcmp(clocksource, "tsc") == 0)
		return true;
	return flags != NULL && has_word(flags, "constant_tsc") &&
	    has_word(flags, "nonstop_tsc");
}

/* word appears in the space-separated list s. */
static bool
has_word(const char *s, const char *word)
{
	size_t	 n = strlen(word);
	const char *p = s;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == s || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return true;
		p += n;
	}
	return false;
}

/* The first line of path that starts with prefix, into buf (or ""). */
static void
read_line(const char *path, const char *prefix, char *buf, size_t len)
{
	FILE	*f;

	buf[0] = '\0';
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(buf, (int)len, f) != NULL)
		if (strncmp(buf, prefix, strlen(prefix)) == 0) {
			buf[strcspn(buf, "\n")] = '\0';
			fclose(f);
			return;
		}
	buf[0] = '\0';
	fclose(f);
}

#if defined(__x86_64__)
#define CAL_TRIES	8	/* readings of one pair; the narrowest kept */
#define CAL_WINDOW_NS	250000	/* between the two pairs */
#define CAL_MAX_PPM	1000	/* the widest uncertainty a calibration may have */

/*
 * One reading of CLOCK_MONOTONIC with the TSC on both sides of it: the
 * narrowest of CAL_TRIES, so a preemption between the two clocks is not
 * read as time.  *ns, *tsc: the pair (the TSC at the middle); returns the
 * width in ticks, the uncertainty of the pair.
 */
static uint64_t
clock_pair(uint64_t *ns, uint64_t *tsc)
{
	uint64_t a, b, t, best = UINT64_MAX;

	*ns = *tsc = 0;
	int i;

	for (i = 0; i < CAL_TRIES; i++) {
		a = __builtin_ia32_rdtsc();
		t = shm_now_ns();
		b = __builtin_ia32_rdtsc();
		if (b < a || b - a >= best)
			continue;
		best = b - a;
		*ns = t;
		*tsc = a + best / 2;
	}
	return best;
}
#endif

/*
 * The first reading of a calibration (shm.h): whether the TSC can be
 * trusted (shm_tsc_trusted: the clock source, and only when it is not
 * the TSC the flags of /proc/cpuinfo, which take tens of microseconds to
 * make), and a clock pair.
 */
void
shm_clock_mark(struct shm_clock_mark *m)
{
	memset(m, 0, sizeof(*m));
#if defined(__x86_64__)
	char	 cs[32], flags[4096] = "";

	read_line("/sys/devices/system/clocksource/clocksource0/"
	    "current_clocksource", "", cs, sizeof(cs));
	if (strcmp(cs, "tsc") != 0)
		read_line("/proc/cpuinfo", "flags", flags, sizeof(flags));
	if (!shm_tsc_trusted(cs, flags))
		return;
	m->width = clock_pair(&m->ns, &m->tsc);
	m->ok = true;
#endif
}

/*
 * Calibrate the arena clock, only when the TSC can be trusted
 * (shm_clock_mark): two bracketed readings (clock_pair) at least
 * CAL_WINDOW_NS apart, kept when their uncertainty (the widths of both
 * brackets) is under CAL_MAX_PPM of the window: about 350 ppm at worst
 * for brackets of 45 ns, a few ppm in fact, for the vDSO reads the TSC at
 * about the same place in both.  The first is the creator's mark when it
 * took one (actord does as it starts: what it does until the arena is
 * created counts toward the window, and only the rest is slept), else
 * taken here.  Retried when a bracket was preempted, then given up: the
 * arena clock is clock_gettime.  Every process uses the same factor, so
 * the arena clock agrees with itself whatever the error; it only drifts
 * from CLOCK_MONOTONIC by that error.  A quarter of a millisecond at
 * most, not the 5 ms of an unbracketed calibration, which a preemption
 * between the two clocks could still make wrong: it is part of every
 * start of actord.
 */
static void
calibrate(struct shm_hdr *h, const struct shm_clock_mark *mark)
{
#if defined(__x86_64__)
	struct shm_clock_mark m;
	struct timespec	 ts = { 0, 0 };
	uint64_t	 t1 = 0, c1 = 0, w1, now;
	int		 tries;

	if (mark != NULL)
		m = *mark;
	else
		shm_clock_mark(&m);
	if (!m.ok)
		return;
	for (tries = 0; tries < 4; tries++) {
		if (tries > 0)
			m.width = clock_pair(&m.ns, &m.tsc);
		/* What is left of the window since the first reading. */
		if ((now = shm_now_ns()) < m.ns + CAL_WINDOW_NS) {
			ts.tv_nsec = (long)(m.ns + CAL_WINDOW_NS - now);
			nanosleep(&ts, NULL);
		}
		w1 = clock_pair(&t1, &c1);
		if (c1 <= m.tsc || t1 <= m.ns || m.width == UINT64_MAX ||
		    w1 == UINT64_MAX)
			continue;
		if ((m.width + w1) * 1000000 > (c1 - m.tsc) * CAL_MAX_PPM)
			continue;
		h->tsc_mult = (uint64_t)(((unsigned __int128)(t1 - m.ns) <<
		    32) / (c1 - m.tsc));
		h->tsc_base = c1;
		h->ns_base = t1;
		h->tsc_ok = h->tsc_mult != 0;
		return;
	}
#else
	(void)h;
	(void)mark;
#endif
}

uint64_t
shm_clock_ns(const struct shm_arena *a)
{
	return shm_clock(a);
}

int
shm_fd(const struct shm_arena *a)
{
	return a->fd;
}

int
shm_layout_fd(const struct shm_arena *a)
{
	return a->lfd;
}

size_t
shm_size(const struct shm_arena *a)
{
	return a->size;
}

uint32_t
shm_nmailboxes(const struct shm_arena *a)
{
	return a->n;
}

uint64_t
shm_arena_id(const struct shm_arena *a)
{
	return a->id;
}

int
shm_mailbox_layout(const struct shm_arena *a, uint32_t idx,
    struct shm_mailbox_layout *out)
{
	struct shm_actor *act;
	uint32_t pol;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	*out = shm_mb_c(a, idx)->lay;
	/* The policies as configured now, not as this process attached. */
	act = &a->actors[idx];
	pol = atomic_load_explicit(&act->cfg_overflow, memory_order_acquire);
	if (pol <= SHM_OVERFLOW_MAX)
		out->overflow = (enum shm_overflow)pol;
	out->block_timeout_ms = atomic_load_explicit(&act->cfg_timeout_ms,
	    memory_order_relaxed);
	return 0;
}

uint32_t
shm_mailbox_capacity(const struct shm_arena *a, uint32_t idx)
{
	uint32_t c;

	if (idx >= a->n)
		return 0;
	c = atomic_load_explicit(&a->actors[idx].cfg_capacity,
	    memory_order_acquire);
	return c == 0 || c > shm_mb_c(a, idx)->lay.capacity ?
	    shm_mb_c(a, idx)->lay.capacity : c;
}

/*
 * The owner's (actord's) setting of a mailbox's main lane, while no
 * producer uses it and no consumer runs (see shm.h).  The policies are
 * stored first, the limit producers test on their line last (release),
 * then a full fence: whatever the caller does next to make the mailbox
 * known (actor table, fork of its consumer) comes after.
 */
int
shm_mailbox_configure(struct shm_arena *a, uint32_t idx, uint32_t capacity,
    enum shm_overflow overflow, uint32_t block_timeout_ms)
{
	struct shm_mbox_local *mb;
	uint32_t phys;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	mb = shm_mb(a, idx);
	phys = mb->lane[SHM_LANE_MAIN].cap;
	if (!a->creator || capacity == 0 || capacity > phys ||
	    (unsigned)overflow > SHM_OVERFLOW_MAX)
		return SHM_EINVAL;
	atomic_store_explicit(&mb->actor->cfg_overflow, (uint32_t)overflow,
	    memory_order_relaxed);
	atomic_store_explicit(&mb->actor->cfg_timeout_ms, block_timeout_ms,
	    memory_order_relaxed);
	atomic_store_explicit(&mb->actor->cfg_capacity, capacity,
	    memory_order_release);
	atomic_store_explicit(&mb->m->lane[SHM_LANE_MAIN].limit,
	    capacity == phys ? 0 : capacity, memory_order_release);
	view_policy(mb);
	atomic_thread_fence(memory_order_seq_cst);
	/* Senders that somehow wait look again under the new limit. */
	shm_wake_senders_force(mb->m);
	return 0;
}

size_t
shm_payload_max(const struct shm_arena *a, uint32_t idx)
{
	return idx < a->n ? shm_mb_c(a, idx)->payload_max : 0;
}

size_t
shm_cell_payload(const struct shm_arena *a, uint32_t idx)
{
	return idx < a->n ? shm_mb_c(a, idx)->lane[SHM_LANE_MAIN].inl : 0;
}

/*
 * The actor table and the paths, in the layout: written by its creator
 * only (any other process maps it read-only, and a write would kill it),
 * read by all.
 */

/* The first bucket of path's probe sequence. */
static uint32_t
index_home(const struct shm_arena *a, const char *path, size_t len)
{
	return (uint32_t)shm_fnv(0xcbf29ce484222325ULL, path, len) &
	    a->index_mask;
}

/* Mailbox idx's bucket under its current name, turned into a gap. */
static void
index_remove(struct shm_arena *a, uint32_t idx)
{
	const char *old = a->paths[idx].path;
	size_t	 len = strnlen(old, SHM_PATH_MAX - 1);
	uint32_t b, k;

	if (len == 0)
		return;
	b = index_home(a, old, len);
	for (k = 0; k <= a->index_mask; k++, b = (b + 1) & a->index_mask) {
		if (atomic_load_explicit(&a->index[b], memory_order_relaxed) ==
		    INDEX_EMPTY)
			return;
		if (atomic_load_explicit(&a->index[b], memory_order_relaxed) ==
		    idx + 1) {
			atomic_store_explicit(&a->index[b], INDEX_GONE,
			    memory_order_release);
			return;
		}
	}
}

/* Mailbox idx under its (new) name, in the first free or gone bucket. */
static void
index_insert(struct shm_arena *a, uint32_t idx, const char *path, size_t len)
{
	uint32_t b = index_home(a, path, len), k, v;

	for (k = 0; k <= a->index_mask; k++, b = (b + 1) & a->index_mask) {
		v = atomic_load_explicit(&a->index[b], memory_order_relaxed);
		if (v == INDEX_EMPTY || v == INDEX_GONE) {
			/* The path is written before the bucket is seen. */
			atomic_store_explicit(&a->index[b], idx + 1,
			    memory_order_release);
			return;
		}
	}
}

int
shm_actor_set_path(struct shm_arena *a, uint32_t idx, const char *path)
{
	size_t	 len;
	char	*dst;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	if (!a->creator || path == NULL || (len = strlen(path)) >= SHM_PATH_MAX)
		return SHM_EINVAL;
	index_remove(a, idx);
	dst = (char *)(uintptr_t)a->paths[idx].path;	/* the creator's */
	memset(dst, 0, SHM_PATH_MAX);
	memcpy(dst, path, len);
	if (len > 0)
		index_insert(a, idx, path, len);
	__atomic_fetch_add(&((struct shm_hdr *)(void *)a->lbase)->paths_gen, 1,
	    __ATOMIC_RELEASE);
	return 0;
}

uint64_t
shm_paths_gen(const struct shm_arena *a)
{
	return __atomic_load_n(
	    &((const struct shm_hdr *)(const void *)a->lbase)->paths_gen,
	    __ATOMIC_ACQUIRE);
}

int
shm_actor_path(const struct shm_arena *a, uint32_t idx, char *buf,
    size_t buflen)
{
	struct shm_path p;
	size_t	 len;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	if (buflen == 0)
		return SHM_EINVAL;
	layout_copy(a, idx, &p, &a->paths[idx], sizeof(p));
	/* Bounded read: the path may have lost its NUL. */
	len = strnlen(p.path, SHM_PATH_MAX - 1);
	if (len >= buflen)
		len = buflen - 1;
	memcpy(buf, p.path, len);
	buf[len] = '\0';
	return 0;
}

int
shm_lookup(const struct shm_arena *a, const char *path)
{
	size_t	 len;
	uint32_t b, k, v;

	if (path == NULL || (len = strlen(path)) == 0 ||
	    len >= SHM_PATH_MAX)
		return SHM_EINVAL;
	b = index_home(a, path, len);
	for (k = 0; k <= a->index_mask; k++, b = (b + 1) & a->index_mask) {
		v = atomic_load_explicit(&a->index[b], memory_order_acquire);
		if (v == INDEX_EMPTY)
			break;
		if (v != INDEX_GONE && v - 1 < a->n &&
		    memcmp(a->paths[v - 1].path, path, len + 1) == 0)
			return (int)(v - 1);
	}
	return SHM_ENOENT;
}

uint32_t
shm_actor_incarnation(const struct shm_arena *a, uint32_t idx)
{
	if (idx >= a->n)
		return 0;
	return atomic_load(&a->actors[idx].incarnation);
}

uint32_t
shm_actor_bump_incarnation(struct shm_arena *a, uint32_t idx)
{
	if (idx >= a->n)
		return 0;
	if (!a->creator)
		return shm_actor_incarnation(a, idx);
	return atomic_fetch_add(&a->actors[idx].incarnation, 1) + 1;
}

pid_t
shm_actor_pid(const struct shm_arena *a, uint32_t idx)
{
	if (idx >= a->n)
		return 0;
	return atomic_load(&a->actors[idx].pid);
}

void
shm_actor_set_pid(struct shm_arena *a, uint32_t idx, pid_t pid)
{
	if (idx < a->n && a->creator)
		atomic_store(&a->actors[idx].pid, pid);
}

enum shm_actor_state
shm_actor_state(const struct shm_arena *a, uint32_t idx)
{
	uint32_t s;

	if (idx >= a->n)
		return SHM_ACTOR_DOWN;
	s = atomic_load(&a->actors[idx].state);
	return s <= SHM_ACTOR_STOPPING ? (enum shm_actor_state)s :
	    SHM_ACTOR_DOWN;
}

void
shm_actor_set_state(struct shm_arena *a, uint32_t idx,
    enum shm_actor_state s)
{
	if (idx < a->n && a->creator)
		atomic_store(&a->actors[idx].state, (uint32_t)s);
}

struct shm_ref
shm_actor_ref(const struct shm_arena *a, uint32_t idx)
{
	struct shm_ref r = { idx, shm_actor_incarnation(a, idx) };

	return r;
}

void *
shm_inhand(struct shm_arena *a, uint32_t idx, size_t *len)
{
	if (idx >= a->n) {
		if (len != NULL)
			*len = 0;
		return NULL;
	}
	if (len != NULL)
		*len = shm_mb(a, idx)->inhand_size;
	return shm_mb(a, idx)->inhand;
}

void *
shm_inhand_far(struct shm_arena *a, uint32_t idx, size_t *len)
{
	void	*p = idx < a->n ? shm_mb(a, idx)->inhand_far : NULL;

	if (len != NULL)
		*len = p != NULL ? shm_mb(a, idx)->inhand_far_size : 0;
	return p;
}

void *
shm_state(struct shm_arena *a, uint32_t idx, size_t *len)
{
	if (idx >= a->n || shm_mb(a, idx)->state == NULL) {
		if (len != NULL)
			*len = 0;
		return NULL;
	}
	if (len != NULL)
		*len = shm_mb(a, idx)->lay.state_size;
	return shm_mb(a, idx)->state;
}
