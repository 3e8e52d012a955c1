/*
 * actorctl_keygen.c: actorctl keygen FILE, a CurveZMQ key pair for a node
 * or a client.  The secret key goes to FILE (mode 0600, created, never
 * overwritten), the public key to FILE.pub (mode 0644) and to stdout, each
 * as one line of 40 Z85 characters (worker/keys.c reads them back).
 *
 * It owns nothing but the two files it creates, and never talks to
 * actord.  A failure leaves neither file behind.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "tools/actorctl.h"
#include "worker/remote.h"

static int	 write_key(const char *, const char *, mode_t);

/* One line into a new file of this mode; -1 with errno, nothing left. */
static int
write_key(const char *path, const char *z85, mode_t mode)
{
	char line[KEY_Z85_LEN + 2];
	ssize_t n;
	int fd, saved;

	snprintf(line, sizeof(line), "%s\n", z85);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, mode)) == -1)
		return -1;
	/* The umask could have widened nothing, but fchmod says it all. */
	if (fchmod(fd, mode) == -1)
		goto fail;
	do
		n = write(fd, line, strlen(line));
	while (n == -1 && errno == EINTR);
	if (n != (ssize_t)strlen(line)) {
		if (n >= 0)
			errno = EIO;
		goto fail;
	}
	if (fsync(fd) == -1 || close(fd) == -1) {
		saved = errno;
		unlink(path);
		errno = saved;
		return -1;
	}
	explicit_bzero(line, sizeof(line));
	return 0;
fail:
	saved = errno;
	close(fd);
	unlink(path);
	explicit_bzero(line, sizeof(line));
	errno = saved;
	return -1;
}

int
actorctl_keygen(struct actorctl *a, int argc, char **argv)
{
	char pub[KEY_Z85_LEN + 1], sec[KEY_Z85_LEN + 1], *pubpath;

	(void)a;
	if (argc != 2 || argv[1][0] == '\0' || argv[1][0] == '-') {
		fprintf(stderr, "usage: actorctl keygen file\n");
		return ACTORCTL_EXIT_USAGE;
	}
	if (zmq_curve_keypair(pub, sec) != 0) {
		fprintf(stderr, "actorctl: keygen: %s\n", zmq_strerror(errno));
		return ACTORCTL_EXIT_FAILED;
	}
	if (asprintf(&pubpath, "%s.pub", argv[1]) < 0) {
		fprintf(stderr, "actorctl: keygen: out of memory\n");
		return ACTORCTL_EXIT_FAILED;
	}
	if (write_key(argv[1], sec, 0600) == -1) {
		fprintf(stderr, "actorctl: keygen: %s: %s\n", argv[1],
		    strerror(errno));
		explicit_bzero(sec, sizeof(sec));
		free(pubpath);
		return ACTORCTL_EXIT_FAILED;
	}
	explicit_bzero(sec, sizeof(sec));
	if (write_key(pubpath, pub, 0644) == -1) {
		fprintf(stderr, "actorctl: keygen: %s: %s\n", pubpath,
		    strerror(errno));
		unlink(argv[1]);
		free(pubpath);
		return ACTORCTL_EXIT_FAILED;
	}
	free(pubpath);
	printf("%s\n", pub);
	return ACTORCTL_EXIT_OK;
}
