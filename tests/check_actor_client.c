/*
 * check_actor_client.c: libactor's client API (actor_connect,
 * actor_client_tell, actor_client_ask) for programs outside the tree,
 * through the real actord's control socket to real libactor workers
 * (tests/progs/actor_echo): answers, the application's own errors with
 * their code and text, the runtime's errors, and bad addresses.
 *
 * Each test runs its own actord (tests/lib/tsup.c) in a private
 * runtime_dir and kills what it started by pid.  No duration is asserted.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
#include "worker/actor.h"

#define WAIT		10000		/* ms for anything to happen */
#define LONG_NS		8000000000LL	/* an ask nobody should wait out */

static struct ts_daemon	 d;
static char		 sock[128];

static void
start_daemon(void)
{
	const char *echo = ts_progs("actor_echo");

	ts_daemon_conf(&d,
	    "runtime_dir = \"%s/run\";\n"
	    "shutdown_timeout = 3000;\n"
	    "supervisor = {\n"
	    "  intensity = 50; period = 10; backoff_min = 20; backoff_max = 40;\n"
	    "  children = (\n"
	    "    { name = \"echo\"; exec = [\"%s\"]; ready = \"actor\";\n"
	    "      env = { TW_DIR = \"%s\"; }; mailbox = { capacity = 16; }; },\n"
	    "    { name = \"slow\"; supervisor = { intensity = 50;\n"
	    "        backoff_min = 5000; backoff_max = 6000; children = (\n"
	    "      { name = \"echo\"; exec = [\"%s\"]; ready = \"actor\";\n"
	    "        mailbox = { capacity = 16; max_attempts = 1; }; } ); }; }\n"
	    "  );\n"
	    "};\n", d.dir, echo, d.dir, echo);
	ts_daemon_up(&d, WAIT, sock, sizeof(sock));
}

static void
setup(void)
{
	ts_daemon_init(&d);
	start_daemon();
}

static void
teardown(void)
{
	ts_daemon_cleanup(&d);
}

static struct actor_client *
connect_or_fail(const char *address)
{
	struct actor_client *c;
	char err[ACTOR_ERRBUF];

	ck_assert_msg(actor_connect(&c, address, err, sizeof(err)) == 0,
	    "actor_connect %s: %s", address, err);
	return c;
}

/* $dir/seen gets line within WAIT ms. */
static bool
seen_has(const char *line)
{
	char path[128], buf[4096];
	ssize_t n;
	int fd, waited;

	snprintf(path, sizeof(path), "%s/seen", d.dir);
	for (waited = 0; waited < WAIT; waited += 20) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n > 0) {
				buf[n] = '\0';
				if (strstr(buf, line) != NULL)
					return true;
			}
		}
		ts_sleep_ms(20);
	}
	return false;
}

START_TEST(tell_and_ask)
{
	struct actor_client *c = connect_or_fail(sock);
	struct actor_msg r;
	int rc, i;

	ck_assert_int_eq(actor_client_tell(c, "/echo", 4, "from outside",
	    12), 0);
	ck_assert(seen_has("/echo got from outside"));
	/* Several asks on one connection, each answered with its tag. */
	for (i = 0; i < 3; i++) {
		rc = actor_client_ask(c, "/echo", 1, "ping", 4, LONG_NS, &r);
		ck_assert_msg(rc == 0, "ask: %s", actor_client_error(c));
		ck_assert_uint_eq(r.tag, 1);
		ck_assert_uint_eq(r.len, 4);
		ck_assert(memcmp(r.data, "ping", 4) == 0);
		ck_assert(r.flags & ACTOR_MSG_REPLY);
		ck_assert_int_eq(actor_error_code(&r), 0);
	}
	actor_client_close(c);
}
END_TEST

/* "no such key" (the application's) is not "no such path" (ours). */
START_TEST(application_error_keeps_code_and_text)
{
	struct actor_client *c = connect_or_fail(sock);
	struct actor_msg r;

	ck_assert_int_eq(actor_client_ask(c, "/echo", 6, "apples", 6,
	    LONG_NS, &r), ACTOR_EREPLY);
	ck_assert(r.flags & ACTOR_MSG_ERROR);
	ck_assert_int_eq(actor_error_code(&r), 42);
	ck_assert_str_eq(actor_error_text(&r), "no such key: apples");
	ck_assert_int_eq(actor_client_ask(c, "/nosuch", 6, "apples", 6,
	    LONG_NS, &r), ACTOR_ENOENT);
	ck_assert_ptr_nonnull(strstr(actor_client_error(c), "/nosuch"));
	/* A supervisor has no mailbox. */
	ck_assert_int_eq(actor_client_tell(c, "/slow", 1, "x", 1),
	    ACTOR_EINVAL);
	actor_client_close(c);
}
END_TEST

START_TEST(timeout_and_down)
{
	struct actor_client *c = connect_or_fail(sock);
	struct actor_msg r;
	int rc;

	ck_assert_int_eq(actor_client_ask(c, "/echo", 2, "never", 5,
	    200000000, &r), ACTOR_ETIMEDOUT);
	/* The actor dies with tag 3 and waits seconds for its restart. */
	ck_assert_int_eq(actor_client_tell(c, "/slow/echo", 3, NULL, 0), 0);
	ck_assert(ts_daemon_log_has(&d, "/slow/echo: restarting in", WAIT));
	rc = actor_client_ask(c, "/slow/echo", 1, "x", 1, LONG_NS, &r);
	ck_assert_msg(rc == ACTOR_EDOWN, "ask of a restarting actor: %d (%s)",
	    rc, actor_client_error(c));
	ck_assert_ptr_nonnull(strstr(actor_client_error(c), "not running"));
	actor_client_close(c);
}
END_TEST

START_TEST(bad_addresses)
{
	struct actor_client *c;
	char err[ACTOR_ERRBUF], path[256];

	snprintf(path, sizeof(path), "%s/no.sock", d.dir);
	ck_assert_int_eq(actor_connect(&c, path, err, sizeof(err)),
	    ACTOR_ESYS);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(strstr(err, "cannot connect"));
	ck_assert_int_eq(actor_connect(&c, "bogus://x", err, sizeof(err)),
	    ACTOR_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no transport for bogus://"));
	ck_assert_int_eq(actor_connect(&c, "nonsense", err, sizeof(err)),
	    ACTOR_EINVAL);
	/* unix:PATH is the same socket. */
	snprintf(path, sizeof(path), "unix:%s", sock);
	c = connect_or_fail(path);
	ck_assert_int_eq(actor_client_ask(c, "/echo", 1, "u", 1, LONG_NS,
	    NULL), 0);
	ck_assert_int_eq(actor_client_ask(c, "not a path", 1, "u", 1,
	    LONG_NS, NULL), ACTOR_EINVAL);
	actor_client_close(c);
}
END_TEST

static Suite *
client_suite(void)
{
	Suite *s = suite_create("actor_client");
	TCase *tc = tcase_create("client");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, tell_and_ask);
	tcase_add_test(tc, application_error_keeps_code_and_text);
	tcase_add_test(tc, timeout_and_down);
	tcase_add_test(tc, bad_addresses);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(client_suite());
}
