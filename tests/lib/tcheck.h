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

#endif /* ACTORD_TESTS_TCHECK_H */
