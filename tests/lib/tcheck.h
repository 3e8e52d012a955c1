/*
 * tcheck.h: what every Check test binary shares: the runner its main()
 * calls, and small probes of other processes.
 *
 * Owned by tests/lib/tcheck.c.  Tests only.
 */
#ifndef ACTORD_TESTS_TCHECK_H
#define ACTORD_TESTS_TCHECK_H

#include <check.h>
#include <sys/types.h>

/* tcheck.c */
int	 tcheck_run(Suite *);		/* runs it all: EXIT_SUCCESS or not */
long	 tcheck_ctxt_switches(pid_t);	/* voluntary + not; -1: no such pid */
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
