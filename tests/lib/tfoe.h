/*
 * tfoe.h: what the hostile worker programs (tests/progs/scribbler.c,
 * tests/progs/express_foe.c) share: a seeded xorshift schedule, a sleep,
 * a note appended to a file of $TW_DIR for the test to read, and the wait
 * for a target's mailbox by path.  Static, so each program has its own
 * copy; tests only.
 */
#ifndef ACTORD_TESTS_TFOE_H
#define ACTORD_TESTS_TFOE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "shm/shm.h"

#define TFOE_UNUSED	__attribute__((unused))

static uint64_t	 tfoe_state = 88172645463325252ULL;

/* The schedule of seed (the same seed, the same foe). */
static TFOE_UNUSED void
tfoe_seed(uint64_t seed)
{
	tfoe_state ^= seed * 0x9e3779b97f4a7c15ULL;
}

/* xorshift64: fast and good enough to hit every word. */
static TFOE_UNUSED uint64_t
tfoe_rnd(void)
{
	tfoe_state ^= tfoe_state << 13;
	tfoe_state ^= tfoe_state >> 7;
	tfoe_state ^= tfoe_state << 17;
	return tfoe_state;
}

static TFOE_UNUSED void
tfoe_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1)
		;
}

/* A line what appended to $TW_DIR/file, if TW_DIR is set. */
static TFOE_UNUSED void
tfoe_note(const char *file, const char *what)
{
	const char *dir = getenv("TW_DIR");
	char path[512];
	FILE *f;

	if (dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((f = fopen(path, "a")) == NULL)
		return;
	fprintf(f, "%s\n", what);
	fclose(f);
}

/* The target's mailbox: it may start after us, so wait until it is named. */
static TFOE_UNUSED uint32_t
tfoe_target(struct shm_arena *a, const char *path)
{
	int idx;

	while ((idx = shm_lookup(a, path)) < 0)
		tfoe_sleep_ms(5);
	return (uint32_t)idx;
}

#endif /* ACTORD_TESTS_TFOE_H */
