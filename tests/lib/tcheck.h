/*
 * tcheck.h: what every Check test binary shares: the runner its main()
 * calls, small probes of other processes, and a byte pattern.
 *
 * Owned by tests/lib/tcheck.c.  Tests only.
 */
#ifndef ACTORD_TESTS_TCHECK_H
#define ACTORD_TESTS_TCHECK_H

#include <check.h>
#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* tcheck.c */
int	 tcheck_run(Suite *);		/* runs it all: EXIT_SUCCESS or not */
long	 tcheck_ctxt_switches(pid_t);	/* voluntary + not; -1: no such pid */
char	 tcheck_proc_state(pid_t);	/* its state letter in /proc, or '?' */
/* len bytes of a pattern its seed says, and whether b still holds it whole. */
void	 tcheck_fill(unsigned char *b, size_t len, uint32_t seed);
bool	 tcheck_intact(const unsigned char *b, size_t len, uint32_t seed);
/* The next of a seeded schedule's numbers (xorshift64; *state never 0). */
uint64_t tcheck_rnd(uint64_t *state);
int64_t	 tcheck_mono_ms(void);		/* CLOCK_MONOTONIC in ms */
/*
 * A copy of the program src in dir, that any user can run, its path in
 * dst; dir is opened to others (0755).  For a program run as another user
 * (nobody): the checkout may be where that user cannot go (a mode-700
 * /root), and tests/run, as root, hands the tests the build through such
 * a directory.  Fails the test on any error.
 */
const char *tcheck_copy_public(const char *src, const char *dir, char *dst,
	    size_t size);

#endif /* ACTORD_TESTS_TCHECK_H */
