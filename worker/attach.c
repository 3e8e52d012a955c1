/*
 * attach.c: a process becomes an actor.  From the environment actord set
 * (ACTORD_ARENA_FD, ACTORD_INDEX, ACTORD_PATH, ACTORD_INCARNATION,
 * ACTORD_NOTIFY_FD), or from an arena the caller already holds (embedding
 * programs, tests, benchmarks; idx -1 makes a client that can tell but has
 * no mailbox).  Readiness (mode "actor") is a datagram READY=1 to the
 * socket named by ACTORD_NOTIFY_SOCKET, where actord's ready.c knows the
 * sender by its pid (its credentials), or, where actord has no such
 * socket, a newline on ACTORD_NOTIFY_FD.
 *
 * Owns: struct actor's life.  Must never receive or send: that is recv.c's
 * and send.c's business.
 */
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/actor_impl.h"

static int	 env_int(const char *, long, long, long *);
static void	 touch_for_write(struct shm_arena *, uint32_t);
static int	 init(struct actor *, struct shm_arena *, int32_t, char *,
		    size_t);
static int	 notify_socket(const char *);
static void	 free_local(struct actor *);
static void	 close_forked(struct actor *);

static int
env_int(const char *name, long lo, long hi, long *out)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/*
 * The first touch of the mailbox's first page (its control block, then
 * libactor's header and the in-hand slot) a write, which changes
 * nothing: a read fault there would map every page around it that
 * exists, up to 16 (the kernel's fault-around: the cells of a mailbox
 * that was used), for this process to unmap again at its exit, where a
 * write fault maps that page alone (tests/check_attach_cost.c).
 */
static void
touch_for_write(struct shm_arena *arena, uint32_t idx)
{
	struct ar_hdr *h;
	size_t len = 0;

	h = shm_state(arena, idx, &len);
	if (h != NULL && len >= sizeof(*h))
		(void)atomic_fetch_add_explicit(&h->inhand, 0,
		    memory_order_relaxed);
}

/*
 * The in-hand slot's two parts (actor_impl.h): its head, a cell's bytes,
 * and its far part, room for a payload larger than a cell, when the
 * mailbox takes one.
 */
static int
inhand_slot(struct actor *a, char *err, size_t errlen)
{
	size_t	 len = 0, far = 0;

	a->inhand = shm_inhand(a->arena, (uint32_t)a->idx, &len);
	if (a->inhand == NULL || len < INHAND_PAYLOAD || len > UINT32_MAX) {
		snprintf(err, errlen, "mailbox %d: no in-hand slot",
		    (int)a->idx);
		return ACTOR_ECORRUPT;
	}
	a->inhand_room = (uint32_t)(len - INHAND_PAYLOAD);
	a->inhand_far = shm_inhand_far(a->arena, (uint32_t)a->idx, &far);
	a->inhand_max = a->inhand_far != NULL && far > a->inhand_room &&
	    far <= UINT32_MAX ? (uint32_t)far : a->inhand_room;
	return 0;
}

static int
init(struct actor *a, struct shm_arena *arena, int32_t idx, char *err,
    size_t errlen)
{
	struct shm_mailbox_layout lay;
	uint64_t r = 0;
	int rc;

	a->arena = arena;
	a->idx = idx;
	a->notify_fd = -1;
	a->wait = ACTOR_WAIT_SPIN_SLEEP;
	a->spin_ns = SHM_SPIN_NS_DEFAULT;
	a->snap_latest = -2;
	if (idx >= 0) {
		if ((uint32_t)idx >= shm_nmailboxes(arena)) {
			snprintf(err, errlen, "mailbox %d: no such mailbox",
			    (int)idx);
			return ACTOR_EBADINDEX;
		}
		/* Its view beside the arena handle: read on every wake-up. */
		shm_consume(arena, (uint32_t)idx);
		/* Its own descriptor, checked now (attach checked the header). */
		if ((rc = shm_mailbox_check(arena, (uint32_t)idx, err,
		    errlen)) < 0)
			return rc;
		touch_for_write(arena, (uint32_t)idx);
		if ((a->hdr = ar_hdr(arena, (uint32_t)idx, &a->caps)) ==
		    NULL) {
			snprintf(err, errlen, "mailbox %d: no libactor region "
			    "(actor_configure was never called)", (int)idx);
			return ACTOR_EINVAL;
		}
		if ((rc = inhand_slot(a, err, errlen)) < 0)
			return rc;
		a->snapdata[0] = ar_snapdata(a->hdr, &a->caps, 0);
		a->snapdata[1] = ar_snapdata(a->hdr, &a->caps, 1);
		a->incarnation = shm_actor_incarnation(arena, (uint32_t)idx);
		(void)shm_actor_path(arena, (uint32_t)idx, a->name,
		    sizeof(a->name));
		if ((rc = shm_mailbox_layout(arena, (uint32_t)idx, &lay)) < 0) {
			snprintf(err, errlen, "mailbox %d: %s", (int)idx,
			    shm_strerror(rc));
			return rc;
		}
		if ((rc = slots_init(a)) < 0) {
			snprintf(err, errlen, "malloc: %s", strerror(errno));
			return rc;
		}
		a->rbuf_len = shm_payload_max(arena, (uint32_t)idx);
		if ((a->rbuf = malloc(a->rbuf_len + 1)) == NULL) {
			snprintf(err, errlen, "malloc: %s", strerror(errno));
			return ACTOR_ESYS;
		}
	}
	/* An actor sends from its mailbox's own slot, never the pool's. */
	rc = idx >= 0 ? shm_producer_open_own(arena, (uint32_t)idx, &a->prod) :
	    shm_producer_open(arena, &a->prod);
	if (rc < 0) {
		snprintf(err, errlen, "producer slot: %s", shm_strerror(rc));
		return rc;
	}
	/* A random start: a late answer never matches a later ask. */
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = shm_now_ns() ^ ((uint64_t)getpid() << 20);
	a->corr_next = r & CORR_ID_MASK;
	return 0;
}

int
actor_attach(struct actor **out, char *err, size_t errlen)
{
	struct shm_arena *arena;
	struct actor *a;
	const char *path;
	long idx, fd, inc;
	int rc;

	*out = NULL;
	if (env_int(ACTOR_ENV_INDEX, 0, SHM_MAX_MAILBOXES - 1, &idx) == -1) {
		snprintf(err, errlen, "%s is not set: not started by actord "
		    "with a mailbox", ACTOR_ENV_INDEX);
		return ACTOR_EINVAL;
	}
	/*
	 * The handle before the arena: malloc then puts the arena's
	 * process-local header right after it, on the same page, and a
	 * woken actor reads both on every message.
	 */
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		snprintf(err, errlen, "calloc: %s", strerror(errno));
		return ACTOR_ESYS;
	}
	if ((rc = shm_attach_env(&arena, err, errlen)) < 0) {
		free(a);
		return rc;
	}
	a->own_arena = true;
	if ((rc = init(a, arena, (int32_t)idx, err, errlen)) < 0) {
		actor_close(a);
		return rc;
	}
	if ((path = getenv(ACTOR_ENV_NOTIFY_SOCKET)) != NULL &&
	    (a->notify_sock = strdup(path)) == NULL) {
		snprintf(err, errlen, "strdup: %s", strerror(errno));
		actor_close(a);
		return ACTOR_ESYS;
	}
	if (env_int(ACTOR_ENV_NOTIFY, 0, INT_MAX, &fd) == 0)
		a->notify_fd = (int)fd;
	if (env_int(ACTOR_ENV_INCARNATION, 1, UINT32_MAX, &inc) == 0 &&
	    (uint32_t)inc != a->incarnation) {
		snprintf(err, errlen, "incarnation %ld was started, the arena "
		    "says %u", inc, a->incarnation);
		actor_close(a);
		return ACTOR_ESTALE;
	}
	path = getenv(ACTOR_ENV_PATH);
	if (path != NULL && strcmp(path, a->name) != 0) {
		snprintf(err, errlen, "%s is %s, mailbox %ld is %s",
		    ACTOR_ENV_PATH, path, idx, a->name);
		actor_close(a);
		return ACTOR_EINVAL;
	}
	*out = a;
	return 0;
}

int
actor_open(struct shm_arena *arena, int32_t idx, struct actor **out,
    char *err, size_t errlen)
{
	struct actor *a;
	int rc;

	*out = NULL;
	if (arena == NULL)
		return ACTOR_EINVAL;
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		snprintf(err, errlen, "calloc: %s", strerror(errno));
		return ACTOR_ESYS;
	}
	if ((rc = init(a, arena, idx < 0 ? -1 : idx, err, errlen)) < 0) {
		actor_close(a);
		return rc;
	}
	/*
	 * Cells a dead consumer took and never freed: whoever reaped it may
	 * not have called actor_reaped.  actord always has, before it starts
	 * the next incarnation, so actor_attach skips this: it reads the
	 * head cell of every lane and the lap before it, up to every cell
	 * (a page of the memfd allocated for each one read where none was,
	 * and a fault for each: tests/check_attach_cost.c).
	 */
	if (idx >= 0)
		(void)shm_consumer_recover(arena, (uint32_t)idx);
	*out = a;
	return 0;
}

/*
 * Readiness: READY=1 on actord's socket (a socket of ours for the one
 * datagram: the kernel adds our pid, which is how actord knows us), or
 * a newline on the notification pipe, which is then closed.
 */
int
actor_ready(struct actor *a)
{
	ssize_t n;
	int rc;

	if (a->notify_sock != NULL) {
		rc = notify_socket(a->notify_sock);
		free(a->notify_sock);
		a->notify_sock = NULL;
		return rc;
	}
	if (a->notify_fd < 0)
		return 0;
	do
		n = write(a->notify_fd, "\n", 1);
	while (n == -1 && errno == EINTR);
	(void)close(a->notify_fd);
	a->notify_fd = -1;
	return n == 1 ? 0 : ACTOR_ESYS;
}

/* READY=1 to the datagram socket name ("@..." abstract), blocking. */
static int
notify_socket(const char *name)
{
	struct sockaddr_un sun;
	size_t len = strlen(name);
	ssize_t n;
	int fd;

	if (len == 0 || len >= sizeof(sun.sun_path))
		return ACTOR_EINVAL;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, name, len);
	if (name[0] == '@')
		sun.sun_path[0] = '\0';
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return ACTOR_ESYS;
	do
		n = sendto(fd, "READY=1\n", 8, MSG_NOSIGNAL,
		    (struct sockaddr *)&sun, (socklen_t)(offsetof(struct
		    sockaddr_un, sun_path) + len));
	while (n == -1 && errno == EINTR);
	(void)close(fd);
	return n == 8 ? 0 : ACTOR_ESYS;
}

/*
 * What only this process holds: the handle's own memory and descriptors.
 */
static void
free_local(struct actor *a)
{
	uint32_t i;

	if (a->pend != NULL)
		for (i = 0; i < a->pend_cap; i++)
			free(a->pend[i].data);
	free(a->pend);
	free(a->last_reply);
	free(a->rbuf);
	free(a->slot_st);
	free(a->ghost_at);
	free(a->shard.idx);
	if (a->prod != NULL)
		shm_producer_close(a->prod);
	if (a->notify_fd >= 0)
		(void)close(a->notify_fd);
	free(a->notify_sock);
	/*
	 * An arena actor_attach mapped stays mapped (shm_release): a worker
	 * closes its actor to exit, and exit unmaps it with the rest,
	 * cheaper than munmap here first.
	 */
	if (a->own_arena)
		shm_release(a->arena);
	free(a);
}

/*
 * A child of fork(2) closes the copy of its parent's handle: the message
 * in hand, the owed messages and the producer slot are the parent's, and
 * stay as they are; the child frees its own copies only.
 */
static void
close_forked(struct actor *a)
{
	actor_owed_free(&a->owed);
	free_local(a);
}

void
actor_close(struct actor *a)
{
	if (a == NULL)
		return;
	if (a->prod != NULL && shm_producer_opener(a->prod) != getpid()) {
		close_forked(a);
		return;
	}
	if (a->holding)
		actor_done(a);
	/* What it still owes: one last offer, then dead letters. */
	(void)owed_flush(a->prod, a->arena, &a->owed);
	owed_abandon(a->arena, &a->owed);
	free_local(a);
}

struct actor_ref
actor_self(const struct actor *a)
{
	struct actor_ref r;

	r.index = a->idx < 0 ? UINT32_MAX : (uint32_t)a->idx;
	r.incarnation = a->idx < 0 ? 0 : a->incarnation;
	return r;
}

const char *
actor_name(const struct actor *a)
{
	return a->name;
}

struct shm_arena *
actor_arena(struct actor *a)
{
	return a->arena;
}

void
actor_set_wait(struct actor *a, enum actor_wait w, int64_t spin_ns)
{
	a->wait = w;
	a->spin_ns = spin_ns < 0 ? SHM_SPIN_NS_DEFAULT : spin_ns;
}
