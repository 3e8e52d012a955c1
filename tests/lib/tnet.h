/*
 * tnet.h: what the tests of nodes share (tests/lib/tnet.c): a free
 * TCP port on 127.0.0.1 from a range of the test's own, so that tests
 * run in parallel never pick the same one, and key files.
 */
#ifndef TESTS_TNET_H
#define TESTS_TNET_H

#include <sys/types.h>

/*
 * A port of [lo, lo + n) free now on 127.0.0.1 and none of taken[0 ..
 * ntaken - 1]; fails the test if there is none.  Keep the range below the
 * kernel's ephemeral ports (32768 and up on Debian), so that no outgoing
 * connection takes it between this check and the bind.
 */
int	 tnet_free_port(int lo, int n, const int *taken, int ntaken);
/* A Z85 key in path, with mode. */
void	 tnet_write_key(const char *path, const char *z85, mode_t mode);

#endif
