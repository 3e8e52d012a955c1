/*
 * keys.c: CurveZMQ key files and their Z85 text (ZeroMQ RFC 32), for
 * actord (which checks a node's secret key before it starts anything),
 * actorctl keygen, the gateway and the client API.  A key file holds one
 * line: the 40 Z85 characters of a 32-byte key.  A secret key file that
 * anyone but its owner can read or write is refused, as ssh refuses an
 * unprotected private key.
 *
 * Owns: the file format and the permission rule.  Must never log, never
 * keep a secret key anywhere but in the caller's buffer.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "worker/remote.h"

static const char z85_chars[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    ".-:+=^!/*?&<>()[]{}@%$#";

static int	 z85_value(char);

static int
z85_value(char c)
{
	const char *p;

	if (c == '\0' || (p = strchr(z85_chars, c)) == NULL)
		return -1;
	return (int)(p - z85_chars);
}

void
key_z85_encode(const uint8_t key[KEY_BYTES], char out[KEY_Z85_LEN + 1])
{
	uint32_t v;
	size_t i, j, o = 0;

	for (i = 0; i < KEY_BYTES; i += 4) {
		v = (uint32_t)key[i] << 24 | (uint32_t)key[i + 1] << 16 |
		    (uint32_t)key[i + 2] << 8 | key[i + 3];
		for (j = 5; j-- > 0; ) {
			out[o + j] = z85_chars[v % 85];
			v /= 85;
		}
		o += 5;
	}
	out[o] = '\0';
}

/* 0 with the key, or -1: not 40 Z85 characters, or a group above 2^32. */
int
key_z85_decode(const char *z85, uint8_t out[KEY_BYTES])
{
	uint64_t v;
	size_t i, j;
	int d;

	if (strlen(z85) != KEY_Z85_LEN)
		return -1;
	for (i = 0; i < KEY_Z85_LEN; i += 5) {
		v = 0;
		for (j = 0; j < 5; j++) {
			if ((d = z85_value(z85[i + j])) < 0)
				return -1;
			v = v * 85 + (uint64_t)d;
		}
		if (v > UINT32_MAX)
			return -1;
		out[i / 5 * 4] = (uint8_t)(v >> 24);
		out[i / 5 * 4 + 1] = (uint8_t)(v >> 16);
		out[i / 5 * 4 + 2] = (uint8_t)(v >> 8);
		out[i / 5 * 4 + 3] = (uint8_t)v;
	}
	return 0;
}

bool
key_z85_valid(const char *z85)
{
	uint8_t k[KEY_BYTES];

	return key_z85_decode(z85, k) == 0;
}

/*
 * The key in file path into z85 (40 characters and a NUL).  A secret key
 * file must be a regular file that only its owner may read or write.
 * 0, or -1 with one line in err that starts with the path.
 */
int
key_file_read(const char *path, bool secret, char z85[KEY_Z85_LEN + 1],
    char *err, size_t errlen)
{
	struct stat st;
	char buf[KEY_Z85_LEN + 3];
	ssize_t n;
	int fd, saved;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK))
	    == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		saved = errno;
		close(fd);
		snprintf(err, errlen, "%s: %s", path, strerror(saved));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s: not a regular file", path);
		return -1;
	}
	if (secret && (st.st_mode & 077) != 0) {
		close(fd);
		snprintf(err, errlen, "%s: a secret key that others can access "
		    "(mode %04o): chmod 600 it", path,
		    (unsigned)(st.st_mode & 07777));
		return -1;
	}
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n == -1 && errno == EINTR);
	saved = errno;
	close(fd);
	if (n == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(saved));
		return -1;
	}
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n != KEY_Z85_LEN || !key_z85_valid(buf)) {
		snprintf(err, errlen, "%s: not a key file (one line of %d Z85 "
		    "characters, as actorctl keygen writes)", path,
		    KEY_Z85_LEN);
		return -1;
	}
	memcpy(z85, buf, KEY_Z85_LEN + 1);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}
