/*
 * liar.c: a hostile worker for tests/check_adv_e2e.c.  It runs under
 * actord as an actor (ready = "actor") and, asked, writes plausible lies
 * into another actor's mailbox (tests/lib/tlies.h): its ends, cells, turn
 * queue, producer slots' line notes, words of its control block.
 *
 *	ask tag 1, payload "PATH SEED N MODE"
 *		N lies of mode MODE (tlies_lie) from seed SEED into PATH's
 *		mailbox; the answer is "ok", or "no PATH"
 *
 * Anything else is ignored.  It includes shm/ internals on purpose: it
 * plays a worker that knows the layout.
 */
#include <err.h>
#include <stdio.h>
#include <string.h>

#include "tests/lib/tlies.h"
#undef SLOT_FREE
#include "worker/actor_impl.h"

static int
handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	char	 buf[256], path[128];
	unsigned long long seed;
	unsigned n, i;
	int	 mode, idx;

	(void)arg;
	if (m->tag != 1 || m->len >= sizeof(buf))
		return 0;
	memcpy(buf, m->data, m->len);
	buf[m->len] = '\0';
	if (sscanf(buf, "%127s %llu %u %d", path, &seed, &n, &mode) != 4 ||
	    (idx = shm_lookup(a->arena, path)) < 0) {
		(void)actor_reply(a, 1, "no such path", 12);
		return 0;
	}
	tlies_seed(seed);
	for (i = 0; i < n; i++)
		tlies_lie(a->arena, (uint32_t)idx, mode);
	(void)actor_reply(a, 1, "ok", 2);
	return 0;
}

int
main(void)
{
	struct actor *a;
	char err[ACTOR_ERRBUF];

	if (actor_attach(&a, err, sizeof(err)) < 0)
		errx(1, "%s", err);
	if (actor_ready(a) < 0)
		errx(1, "cannot say ready");
	(void)actor_run(a, handle, NULL, NULL);
	actor_close(a);
	return 0;
}
