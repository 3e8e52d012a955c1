/*
 * tcheck.c: the runner every tests/check_*.c main() calls (tcheck.h), so
 * that each binary only builds its suite, and probes of other processes
 * that several tests read, and the byte pattern of large-message tests.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

char
tcheck_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return '?';
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* After the command's closing parenthesis: " S ...". */
	if (p == NULL || (p = strrchr(buf, ')')) == NULL || p[1] == '\0')
		return '?';
	return p[2];
}

const char *
tcheck_copy_public(const char *src, const char *dir, char *dst, size_t size)
{
	const char *base = strrchr(src, '/');
	char buf[65536];
	ssize_t n;
	int in, out;

	base = base == NULL ? src : base + 1;
	ck_assert_int_lt(snprintf(dst, size, "%s/%s", dir, base), (int)size);
	in = open(src, O_RDONLY | O_CLOEXEC);
	ck_assert_msg(in != -1, "%s: %s", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ck_assert_msg(out != -1, "%s: %s", dst, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	ck_assert_int_eq(n, 0);
	close(in);
	ck_assert_int_eq(fchmod(out, 0755), 0);	/* whatever the umask */
	ck_assert_int_eq(close(out), 0);
	/* mkdtemp makes a directory 0700: let others walk into it. */
	ck_assert_int_eq(chmod(dir, 0755), 0);
	return dst;
}

/* The byte of a test pattern at i: it changes with both i and the seed. */
static unsigned char
pattern_byte(size_t i, uint32_t seed)
{
	return (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

void
tcheck_fill(unsigned char *b, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = pattern_byte(i, seed);
}

bool
tcheck_intact(const unsigned char *b, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != pattern_byte(i, seed))
			return false;
	return true;
}

uint64_t
tcheck_rnd(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

int64_t
tcheck_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
