/*
 * tcheck.c: the runner every tests/check_*.c main() calls (tcheck.h), so
 * that each binary only builds its suite, and probes of other processes
 * that several tests read.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests/lib/tcheck.h"

/* Run every test of s (each forked by Check); the binary's exit status. */
int
tcheck_run(Suite *s)
{
	SRunner	*sr = srunner_create(s);
	int	 nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* Context switches pid made so far, from /proc; -1 if it is gone. */
long
tcheck_ctxt_switches(pid_t pid)
{
	char path[64], line[256];
	long v, total = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			total += v;
	fclose(f);
	return total;
}
