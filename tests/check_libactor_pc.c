/*
 * check_libactor_pc.c: what a program built against libactor is told to
 * link.  libactor uses neither libzmq, libsodium nor libbsd: its
 * pkg-config file must not name them (their flags would drag in their
 * own include paths), and the shared library must not need them.
 * Reads the built files under $BUILD (tests/run sets it).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/tcheck.h"

static const char *const foreign[] = {
	"zmq", "sodium", "bsd", "pgm", "xml", "norm", "gssapi"
};

static const char *
build_dir(void)
{
	const char *b = getenv("BUILD");

	return b != NULL && *b != '\0' ? b : "build";
}

/* The whole output of a shell command, exit status 0 required. */
static void
run(const char *cmd, char *out, size_t outlen)
{
	FILE *f;
	size_t n = 0, r;

	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	while (n + 1 < outlen && (r = fread(out + n, 1, outlen - n - 1,
	    f)) > 0)
		n += r;
	out[n] = '\0';
	ck_assert_msg(pclose(f) == 0, "%s failed: %s", cmd, out);
}

static void
assert_no_foreign(const char *what, const char *out)
{
	size_t i;

	for (i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
		ck_assert_msg(strstr(out, foreign[i]) == NULL,
		    "%s names %s: %s", what, foreign[i], out);
}

START_TEST(pc_names_only_libactor)
{
	char cmd[512], out[4096];

	snprintf(cmd, sizeof(cmd), "PKG_CONFIG_PATH=%s pkg-config --cflags "
	    "--libs --static libactor 2>&1", build_dir());
	run(cmd, out, sizeof(out));
	ck_assert_msg(strstr(out, "-lactor") != NULL, "no -lactor: %s", out);
	assert_no_foreign("pkg-config libactor", out);
}
END_TEST

START_TEST(shared_library_needs_none_of_them)
{
	char cmd[512], out[8192];

	snprintf(cmd, sizeof(cmd), "readelf -d %s/libactor.so.0 | grep NEEDED",
	    build_dir());
	run(cmd, out, sizeof(out));
	assert_no_foreign("libactor.so's NEEDED", out);
}
END_TEST

static Suite *
pc_suite(void)
{
	Suite *s = suite_create("libactor_pc");
	TCase *tc = tcase_create("pc");

	tcase_add_test(tc, pc_names_only_libactor);
	tcase_add_test(tc, shared_library_needs_none_of_them);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(pc_suite());
}
