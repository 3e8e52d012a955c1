/*
 * bench_arena.h: an arena of one or two actors, made up and running
 * without actord, for the benchmarks that measure libactor between
 * processes they fork themselves (bench_actor, bench_seeds).  Mailbox 0
 * is "/client", 1 "/server"; both block when full.  And the echo server
 * both ask.  Static functions
 * marked BENCH_FN, as in bench_common.h.
 */
#ifndef BENCH_ARENA_H
#define BENCH_ARENA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm.h"
#include "tools/bench/bench_common.h"
#include "worker/actor.h"

/*
 * n (1 or 2) mailboxes of cap cells of cell bytes, reply lanes of rcap
 * cells (as many asks in flight), up; exits on failure.
 */
BENCH_FN struct shm_arena *
bench_arena(const char *name, uint32_t n, uint32_t cap, uint32_t cell,
    uint32_t rcap)
{
	struct shm_mailbox_layout mb[2];
	struct shm_layout l;
	struct shm_arena *a;
	char err[SHM_ERRBUF];
	uint32_t i;

	memset(mb, 0, sizeof(mb));
	for (i = 0; i < n && i < 2; i++) {
		mb[i].capacity = cap;
		mb[i].cell = cell;
		mb[i].sys_capacity = 16;
		mb[i].reply_capacity = rcap;
		mb[i].overflow = SHM_OVERFLOW_BLOCK;
		mb[i].block_timeout_ms = 60000;
		mb[i].max_message = 65536;	/* actord's default */
		mb[i].state_size = (uint32_t)actor_region_size(0, 0, rcap);
	}
	memset(&l, 0, sizeof(l));
	l.nmailboxes = n < 2 ? n : 2;
	l.mailboxes = mb;
	l.nproducers = 16;
	l.dl_capacity = 64;
	if (shm_create(&l, name, &a, err, sizeof(err)) < 0) {
		printf("shm_create: %s\n", err);
		exit(1);
	}
	for (i = 0; i < l.nmailboxes; i++) {
		(void)shm_actor_set_path(a, i, i == 0 ? "/client" : "/server");
		(void)actor_configure(a, i, NULL);
		(void)actor_prepare_start(a, i);
		shm_actor_set_state(a, i, SHM_ACTOR_UP);
	}
	return a;
}

/* The echo server: every ask answered with its payload, until quit. */
BENCH_FN void
bench_echo(struct actor *a, uint32_t tag, uint32_t quit)
{
	struct actor_msg m;

	while (actor_recv(a, &m, ACTOR_FOREVER) == 0 && m.tag != quit)
		if (m.flags & ACTOR_MSG_ASK)
			(void)actor_reply(a, tag, m.data, m.len);
	actor_close(a);
}

#endif /* BENCH_ARENA_H */
