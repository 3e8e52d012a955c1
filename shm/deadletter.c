/*
 * deadletter.c: the arena's one dead-letter ring.  Every message that is not
 * delivered ends here with its header, the intended recipient, the reason
 * and the time.
 *
 * Owns: writing and reading dead letters.  Must never block a writer: a
 * full ring overwrites its oldest entry, and readers that fell behind skip
 * what was overwritten.  Entries are seqlocked (2p + 1 while written, 2p + 2
 * once written) and checksummed, so a reader never returns a torn entry,
 * even when a writer died half-way or was lapped by another.
 *
 * The read-once rule (shm.h): actord reads the ring for actorctl
 * deadletters; an entry is copied out once, and only the copy is checked
 * (sequence, checksum, payload length clamped) and returned.
 */
#include <string.h>

#include "shm/shm_impl.h"

#define BODY_OFF	offsetof(struct shm_dl_entry, time_ns)
#define BODY_LEN	(offsetof(struct shm_dl_entry, pad) - BODY_OFF)
#define READ_TRIES	1000

static uint64_t	 body_sum(const struct shm_dl_entry *);

static uint64_t
body_sum(const struct shm_dl_entry *e)
{
	return shm_fnv(0xcbf29ce484222325ULL, (const char *)e + BODY_OFF,
	    BODY_LEN);
}

int
shm_dl_put(struct shm_arena *a, uint32_t recipient, enum shm_lane lane,
    enum shm_dl_reason reason, const struct shm_msg *msg,
    const void *payload)
{
	struct shm_dl_entry *e, tmp;
	uint64_t	 pos, want, s;
	size_t		 n;

	if ((unsigned)reason >= SHM_DL_NREASONS)
		return SHM_EINVAL;
	pos = atomic_fetch_add(&a->dl->tail, 1);
	atomic_fetch_add_explicit(&a->dl->total, 1, memory_order_relaxed);
	if (recipient < a->n)
		shm_count_dl(a, recipient);
	memset(&tmp, 0, sizeof(tmp));
	tmp.time_ns = shm_now_ns();
	if (msg != NULL)
		tmp.msg = *msg;
	tmp.recipient = recipient;
	tmp.reason = (uint32_t)reason;
	tmp.lane = (uint32_t)lane;
	if (msg != NULL && payload != NULL) {
		n = msg->len < SHM_DL_PAYLOAD ? msg->len : SHM_DL_PAYLOAD;
		memcpy(tmp.payload, payload, n);
		tmp.payload_len = (uint32_t)n;
	}
	tmp.check = body_sum(&tmp);

	e = &a->dl_entries[pos & (a->dl_cap - 1)];
	want = 2 * pos + 1;
	s = atomic_load(&e->seq);
	do {
		if (s >= want)
			return 0;	/* lapped already: this one is lost */
	} while (!atomic_compare_exchange_weak(&e->seq, &s, want));
	memcpy((char *)e + offsetof(struct shm_dl_entry, check),
	    (const char *)&tmp + offsetof(struct shm_dl_entry, check),
	    offsetof(struct shm_dl_entry, pad) -
	    offsetof(struct shm_dl_entry, check));
	s = want;
	atomic_compare_exchange_strong(&e->seq, &s, want + 1);
	return 0;
}

int
shm_dl_read(const struct shm_arena *a, uint64_t *cursor,
    struct shm_dead_letter *out)
{
	const struct shm_dl_entry *e;
	struct shm_dl_entry copy;
	uint64_t	 c = *cursor, t, s1, s2;
	int		 tries = 0;

	for (;;) {
		t = atomic_load(&a->dl->tail);
		if (c >= t) {
			*cursor = c;
			return 0;
		}
		if (t - c > a->dl_cap)
			c = t - a->dl_cap;
		e = &a->dl_entries[c & (a->dl_cap - 1)];
		s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
		if (s1 < 2 * c + 2) {
			/* Being written (or its writer died): wait a little. */
			if (++tries < READ_TRIES) {
				cpu_relax();
				continue;
			}
			tries = 0;
			c++;
			continue;
		}
		if (s1 > 2 * c + 2) {
			c++;		/* overwritten by a newer one */
			continue;
		}
		memcpy(&copy, e, sizeof(copy));
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&e->seq, memory_order_relaxed);
		if (s2 != s1 || body_sum(&copy) != copy.check) {
			c++;
			continue;
		}
		out->seq = c;
		out->time_ns = copy.time_ns;
		out->msg = copy.msg;
		out->recipient = copy.recipient;
		out->reason = copy.reason;
		out->lane = copy.lane;
		out->payload_len = copy.payload_len <= SHM_DL_PAYLOAD ?
		    copy.payload_len : SHM_DL_PAYLOAD;
		memcpy(out->payload, copy.payload, out->payload_len);
		*cursor = c + 1;
		return 1;
	}
}

uint64_t
shm_dl_head(const struct shm_arena *a)
{
	return atomic_load(&a->dl->tail);
}

uint64_t
shm_dl_lost(const struct shm_arena *a)
{
	uint64_t t = atomic_load(&a->dl->tail);

	return t > a->dl_cap ? t - a->dl_cap : 0;
}

uint64_t
shm_dl_total(const struct shm_arena *a)
{
	return atomic_load(&a->dl->total);
}
