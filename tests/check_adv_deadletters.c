/*
 * check_adv_deadletters.c: a dead letter says whom it was for, even once
 * that actor is gone.  Found by tests/check_adv_soak.c: the ring keeps a
 * recipient's mailbox number, its path is looked up when the letters are
 * read, and a removed actor's mailbox has none (it went back to the
 * spares): its dead letters named no recipient at all.  Now they name the
 * mailbox, "#N".
 *
 * A real actord: /b (tests/progs/actor_echo, max_attempts 1) crashes with
 * a message in hand (tag 3), which becomes a dead letter "poison" for /b;
 * /b is stopped and removed; the letter is read back.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/ctlproto.h"
#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT	10000		/* ms: a bound, never an expectation */

static struct ts_daemon d;
static char sock[128];

static void
setup(void)
{
	ts_daemon_init(&d);
}

static void
teardown(void)
{
	ts_daemon_cleanup(&d);
}

/* A request with a path, its answer in r (OK asserted). */
static void
request(uint16_t cmd, const char *path, uint64_t cursor,
    struct ctl_response *r)
{
	struct ctl_request q;

	memset(&q, 0, sizeof(q));
	q.cmd = cmd;
	if (path != NULL) {
		snprintf(q.path, sizeof(q.path), "%s", path);
		q.present |= 1u << CTL_F_PATH;
	}
	if (cmd == CTL_CMD_SEND) {
		q.tag = 3;
		q.present |= 1u << CTL_F_TAG;
	}
	if (cmd == CTL_CMD_DEADLETTERS) {
		q.cursor = cursor;
		q.present |= 1u << CTL_F_CURSOR;
	}
	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(ctltest_request(sock, &q, r), 0);
	ck_assert_msg(r->status == CTL_OK, "command %u %s: %s", cmd,
	    path != NULL ? path : "", r->error);
}

/* The dead letter "poison" of tag 3, or NULL; its recipient in who. */
static bool
poison(char *who, size_t len)
{
	struct ctl_response r;
	bool found = false;
	size_t i;

	request(CTL_CMD_DEADLETTERS, NULL, 0, &r);
	for (i = 0; i < r.ndls; i++)
		if (r.dls[i].tag == 3 && strcmp(r.dls[i].reason, "poison") ==
		    0) {
			snprintf(who, len, "%s", r.dls[i].recipient);
			found = true;
		}
	ctl_response_free(&r);
	return found;
}

/* Is path in status? */
static bool
listed(const char *path)
{
	struct ctl_response r;
	bool found = false;
	size_t i;

	request(CTL_CMD_STATUS, NULL, 0, &r);
	for (i = 0; i < r.nnodes; i++)
		if (strcmp(r.nodes[i].path, path) == 0)
			found = true;
	ctl_response_free(&r);
	return found;
}

START_TEST(removed_recipient_named)
{
	struct ctl_response r;
	char who[CTL_PATH_MAX];
	int waited;

	ts_daemon_conf(&d,
	    "supervisor = { children = (\n"
	    "  { name = \"a\"; exec = [\"%s\"]; ready = \"actor\"; },\n"
	    "  { name = \"b\"; exec = [\"%s\"]; ready = \"actor\";\n"
	    "    mailbox = { max_attempts = 1; }; }\n"
	    "); };\n", ts_progs("actor_echo"), ts_progs("actor_echo"));
	ts_daemon_up(&d, WAIT, sock, sizeof(sock));
	request(CTL_CMD_SEND, "/b", 0, &r);
	ctl_response_free(&r);
	for (waited = 0; !poison(who, sizeof(who)) && waited < WAIT;
	    waited += 20)
		ts_sleep_ms(20);
	ck_assert_msg(waited < WAIT, "no dead letter \"poison\" for /b");
	ck_assert_str_eq(who, "/b");
	request(CTL_CMD_STOP, "/b", 0, &r);	/* answered once stopped */
	ctl_response_free(&r);
	request(CTL_CMD_REMOVE, "/b", 0, &r);
	ctl_response_free(&r);
	for (waited = 0; listed("/b") && waited < WAIT; waited += 20)
		ts_sleep_ms(20);
	ck_assert_msg(waited < WAIT, "/b was never removed");
	ck_assert(poison(who, sizeof(who)));
	ck_assert_msg(who[0] == '#' && who[1] >= '0' && who[1] <= '9',
	    "the dead letter of a removed actor names \"%s\"", who);
	kill(d.pid, SIGTERM);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("adv_deadletters");
	TCase *tc = tcase_create("deadletters");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, removed_recipient_named);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
