/*
 * tnet.c: helpers of the tests of nodes (tnet.h).
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <check.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/tnet.h"
#include "worker/remote.h"

int
tnet_free_port(int lo, int n, const int *taken, int ntaken)
{
	struct sockaddr_in sin;
	struct timespec ts;
	int fd, port, tries, i;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (tries = 0; tries < 1000; tries++) {
		port = lo + (int)(((unsigned)getpid() * 7919u +
		    (unsigned)tries * 104729u + (unsigned)ts.tv_nsec) %
		    (unsigned)n);
		for (i = 0; i < ntaken && taken[i] != port; i++)
			continue;
		if (i < ntaken)
			continue;
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ck_assert_int_ne(fd, -1);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons((uint16_t)port);
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
			close(fd);
			return port;
		}
		close(fd);
	}
	ck_abort_msg("no free port in %d-%d", lo, lo + n - 1);
	return -1;
}

void
tnet_write_key(const char *path, const char *z85, mode_t mode)
{
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(write(fd, z85, KEY_Z85_LEN), KEY_Z85_LEN);
	ck_assert_int_eq(write(fd, "\n", 1), 1);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}
