/*
 * check_adv_express.c: an adversary's pass over the express path
 * (shm/express.c, owned_claim and express_send in shm/ring.c) under the
 * real actord, with real workers and real signals:
 *
 *   - a worker that makes itself a main lane's owner, busy in a send that
 *     never ends: actord's asks to that actor fail "mailbox full" at once
 *     (never wait out the ask's timeout), an honest worker's tells fail
 *     the same way, other actors answer, and once the "owner" is stopped
 *     the lane is free again without a restart of its consumer (whether
 *     its slot names the mailbox for actord's reap or not);
 *   - a worker that scribbles every express word for ever (TAIL_OWNED
 *     with wild owners, own_revoke, every slot's own_mbox, revoking and
 *     own_busy) and the large slots and in-hand copy of other mailboxes,
 *     while an honest hot producer floods one of them, actord asks and
 *     the victims are killed: actord stays up and answers, and once the
 *     scribbler is gone each victim delivers after one restart;
 *   - an honest owner stopped (SIGSTOP) between its claim and its
 *     publish: asks to its mailbox fail "mailbox full" while it sleeps,
 *     and after SIGCONT every tell it counted as sent is delivered;
 *   - an honest owner killed between its claim and its publish, again
 *     and again, its slot reused by each next incarnation: every death
 *     is one dead letter "sender died", and every tell it counted as sent
 *     is delivered.
 *   - a worker that clears actord's "sleeping" word while actord sleeps
 *     on its doorbell: once that worker is reaped, actord's asks are
 *     answered as their answers come, not at their deadline.
 *
 * The workers are tests/progs/express_foe and tests/progs/actor_echo
 * (tag 39 counts tells, tag 40 answers the count).  Each test runs its
 * own actord in a private directory and kills what it started by pid
 * (tests/lib/tsup.c).  Every wait is bounded.
 */
#include <sys/wait.h>

#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "supervisor/ctlproto.h"
#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
#include "worker/actor.h"

#define WAIT		20000	/* ms: a bound, never an expectation */
#define ASK_MS		5000	/* an ask's own timeout */
#define HOT_TELLS	"1000"	/* tells per incarnation (SHM_OWN_STREAK: 256) */
#define LIVES		4	/* owners killed mid-send, one after another */

/* An actor_echo; %s: name, program, TW_DIR. */
#define ECHO_ACTOR	"{ name = \"%s\"; exec = [\"%s\"]; ready = \"actor\"; " \
		"env = { TW_DIR = \"%s\"; }; mailbox = { capacity = 4096; " \
		"max_message = 4096; }; }"

static struct ts_daemon	 d;
static char		 sock[128];

/*
 * A tree that restarts whatever dies at once and never gives up (the
 * tests kill on purpose), of /v and /o (actor_echo) and /foe (express_foe
 * with args, a comma-separated list of quoted strings).
 */
static void
start_tree(const char *args)
{
	char	*v, *o, *foe;

	ck_assert_int_ge(asprintf(&v, ECHO_ACTOR, "v", ts_progs("actor_echo"),
	    d.dir), 0);
	ck_assert_int_ge(asprintf(&o, ECHO_ACTOR, "o", ts_progs("actor_echo"),
	    d.dir), 0);
	ck_assert_int_ge(asprintf(&foe, "{ name = \"foe\"; exec = [\"%s\", "
	    "%s]; ready = \"actor\"; env = { TW_DIR = \"%s\"; }; "
	    "mailbox = { capacity = 16; }; }", ts_progs("express_foe"), args,
	    d.dir), 0);
	ts_daemon_conf(&d,
	    "shutdown_timeout = 3000;\n"
	    "supervisor = {\n"
	    "  intensity = 10000; period = 1; backoff_min = 1;\n"
	    "  backoff_max = 5;\n"
	    "  children = (\n%s,\n%s,\n%s\n  );\n"
	    "};\n", v, o, foe);
	ts_daemon_up(&d, WAIT, sock, sizeof(sock));
	free(v);
	free(o);
	free(foe);
}

/* A request with a path (or none), answered: the answer in r. */
static void
request(uint16_t cmd, const char *path, struct ctl_response *r)
{
	struct ctl_request q;

	memset(&q, 0, sizeof(q));
	q.cmd = cmd;
	if (path != NULL) {
		snprintf(q.path, sizeof(q.path), "%s", path);
		q.present |= 1u << CTL_F_PATH;
	}
	memset(r, 0, sizeof(*r));
	ck_assert_msg(ctltest_request(sock, &q, r) == 0, "command %u %s: no "
	    "answer from actord\n%s", cmd, path != NULL ? path : "",
	    ts_daemon_log(&d));
}

/*
 * An ask of path (tag, data), answered in r: actord answers every ask,
 * whatever its outcome.  CTL_OK or not.
 */
static bool
ask(const char *path, uint32_t tag, const void *data, size_t len,
    struct ctl_response *r)
{
	struct ctl_request q;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_ASK;
	snprintf(q.path, sizeof(q.path), "%s", path);
	q.tag = tag;
	q.data = data;
	q.datalen = (uint32_t)len;
	q.timeout_ms = ASK_MS;
	q.present = 1u << CTL_F_PATH | 1u << CTL_F_TAG | 1u << CTL_F_DATA |
	    1u << CTL_F_TIMEOUT;
	memset(r, 0, sizeof(*r));
	ck_assert_msg(ctltest_request(sock, &q, r) == 0, "ask %s: no answer "
	    "from actord\n%s", path, ts_daemon_log(&d));
	return r->status == CTL_OK;
}

/*
 * An ask of path whose own timeout (a minute) is longer than the test
 * waits for actord's answer (tests/lib/ctltest.c, IO_TIMEOUT): false if
 * actord does not answer within that bound, else as ask().
 */
static bool
ask_long(const char *path, uint32_t tag, const void *data, size_t len,
    struct ctl_response *r)
{
	struct ctl_request q;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_ASK;
	snprintf(q.path, sizeof(q.path), "%s", path);
	q.tag = tag;
	q.data = data;
	q.datalen = (uint32_t)len;
	q.timeout_ms = 60000;
	q.present = 1u << CTL_F_PATH | 1u << CTL_F_TAG | 1u << CTL_F_DATA |
	    1u << CTL_F_TIMEOUT;
	memset(r, 0, sizeof(*r));
	if (ctltest_request(sock, &q, r) != 0) {
		snprintf(r->error, sizeof(r->error), "no answer from actord "
		    "in time");
		return false;
	}
	return r->status == CTL_OK;
}

/* ask path 1 (echo) answers what it was asked, within tries. */
static void
echoes(const char *path, int tries)
{
	struct ctl_response r;
	bool	 ok = false;
	int	 i;

	for (i = 0; i < tries && !ok; i++) {
		if (i > 0)
			ts_sleep_ms(20);
		ok = ask(path, 1, "echo", 4, &r) && r.datalen == 4 &&
		    memcmp(r.data, "echo", 4) == 0;
		if (!ok && i == tries - 1)
			ck_abort_msg("ask %s: %s (code %d)\n%s", path, r.error,
			    r.has_code ? r.code : 0, ts_daemon_log(&d));
		ctl_response_free(&r);
	}
}

/* ask path 1 fails "mailbox full" (ACTOR_EFULL), not by a timeout. */
static void
refused_full(const char *path)
{
	struct ctl_response r;

	ck_assert_msg(!ask(path, 1, "x", 1, &r) && r.has_code &&
	    r.code == ACTOR_EFULL, "ask %s: status %u, code %d: %s", path,
	    r.status, r.has_code ? r.code : 0, r.error);
	ctl_response_free(&r);
}

/* The count of tag 39 tells /v took (tag 40). */
static uint64_t
victim_count(void)
{
	struct ctl_response r;
	uint64_t n = 0;

	ck_assert_msg(ask("/v", 40, "", 0, &r) && r.datalen == sizeof(n),
	    "ask /v 40: %s", r.error);
	memcpy(&n, r.data, sizeof(n));
	ctl_response_free(&r);
	return n;
}

/*
 * Dead letters for path with reason, of all actord's ring holds: every
 * one written so far, which the test asserts (at most DEAD_LETTERS,
 * supervisor/mailboxes.c, 1,024, written since actord started).
 */
static int
letters(const char *path, const char *reason)
{
	struct ctl_request q;
	struct ctl_response r;
	size_t	 i;
	int	 n = 0;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_DEADLETTERS;
	q.cursor = 0;
	q.present = 1u << CTL_F_CURSOR;
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(ctltest_request(sock, &q, &r), 0);
	ck_assert_uint_eq(r.status, CTL_OK);
	ck_assert_msg(r.has_cursor && r.cursor <= 1024 && (r.ndls == 0 ||
	    r.dls[0].seq == 0), "dead letters lost to the ring's wrap: %llu "
	    "written", (unsigned long long)r.cursor);
	for (i = 0; i < r.ndls; i++)
		n += strcmp(r.dls[i].recipient, path) == 0 &&
		    strcmp(r.dls[i].reason, reason) == 0;
	ctl_response_free(&r);
	return n;
}

/* Lines of $TW_DIR/foe that begin with what. */
static int
foe_lines(const char *what)
{
	char	 path[128], line[256];
	FILE	*f;
	int	 n = 0;

	snprintf(path, sizeof(path), "%s/foe", d.dir);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strncmp(line, what, strlen(what)) == 0;
	fclose(f);
	return n;
}

/* Wait for n lines beginning with what in $TW_DIR/foe. */
static void
foe_wait(const char *what, int n)
{
	int	 waited;

	for (waited = 0; foe_lines(what) < n && waited < WAIT; waited += 20)
		ts_sleep_ms(20);
	ck_assert_msg(foe_lines(what) >= n, "no %d lines \"%s\" from the "
	    "foe (%d owner, %d done)\n%s", n, what, foe_lines("owner"),
	    foe_lines("done"), ts_daemon_log(&d));
}

/* The sum of the numbers after " ok " on the lines beginning with what. */
static uint64_t
foe_ok(const char *what)
{
	char	 path[128], line[256], *p;
	uint64_t sum = 0;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/foe", d.dir);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, what, strlen(what)) == 0 &&
		    (p = strstr(line, " ok ")) != NULL)
			sum += strtoull(p + 4, NULL, 10);
	fclose(f);
	return sum;
}

/* The state letter of pid in /proc (R, S, T, ...), or 0. */
static char
proc_state(pid_t pid)
{
	char	 path[64], buf[512], *p;
	ssize_t	 r;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return 0;
	buf[r] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] == '\0')
		return 0;
	return p[2];
}

/* path's pid once it runs, and is not old. */
static pid_t
running_not(const char *path, pid_t old)
{
	struct ctl_response r;
	pid_t	 pid = 0;
	size_t	 i;
	int	 waited;

	for (waited = 0; pid <= 0 && waited < WAIT; waited += 20) {
		request(CTL_CMD_STATUS, NULL, &r);
		for (i = 0; i < r.nnodes; i++)
			if (strcmp(r.nodes[i].path, path) == 0 &&
			    strcmp(r.nodes[i].state, "running") == 0 &&
			    r.nodes[i].pid != old)
				pid = r.nodes[i].pid;
		ctl_response_free(&r);
		if (pid <= 0)
			ts_sleep_ms(20);
	}
	ck_assert_msg(pid > 0, "%s does not run\n%s", path, ts_daemon_log(&d));
	return pid;
}

static pid_t
running(const char *path)
{
	return running_not(path, 0);
}

/* SIGKILL path and wait for its next incarnation. */
static void
restart(const char *path)
{
	pid_t	 old = running(path);

	ck_assert_int_eq(kill(old, SIGKILL), 0);
	(void)running_not(path, old);
}

/* actord runs, answers status, and its log has no sanitizer report. */
static void
actord_sound(void)
{
	struct ctl_response r;
	char	*log;
	int	 st;

	ck_assert_msg(waitpid(d.pid, &st, WNOHANG) == 0, "actord exited "
	    "(%#x)\n%s", st, ts_daemon_log(&d));
	request(CTL_CMD_STATUS, NULL, &r);
	ck_assert_uint_eq(r.status, CTL_OK);
	ctl_response_free(&r);
	log = ts_daemon_log(&d);
	ck_assert_msg(strstr(log, "Sanitizer") == NULL &&
	    strstr(log, "runtime error") == NULL, "actord's log:\n%s", log);
}

/* How long the ghost scribbles: $EXPRESS_SECONDS, by default 8 s. */
static int
race_seconds(void)
{
	const char *s = getenv("EXPRESS_SECONDS");
	int	 n = s != NULL ? atoi(s) : 0;

	return n > 0 ? n : 8;
}

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

/*
 * A worker holds /v's main lane as an owner busy for ever (_i: its slot
 * names the mailbox for actord's reap, or not).  actord's asks fail
 * "mailbox full" at once and /o's 100 tells fail too (none waits out a
 * timeout); /o answers; once the holder is stopped, /v answers again with
 * no restart of its own.
 */
START_TEST(stuck_owner_bounded)
{
	struct ctl_response r;
	char	 args[64];

	snprintf(args, sizeof(args), "\"stuck\", \"/v\", \"%d\"", _i);
	start_tree(args);
	foe_wait("stuck", 1);
	refused_full("/v");
	refused_full("/v");
	ck_assert_msg(ask("/o", 41, "/v 100", 6, &r) && r.datalen == 3 &&
	    memcmp(r.data, "100", 3) == 0, "/o's tells to a held lane: %s "
	    "%.*s", r.error, (int)r.datalen, r.data != NULL ?
	    (const char *)r.data : "");
	ctl_response_free(&r);
	echoes("/o", 1);
	ck_assert_int_ge(letters("/v", shm_reason_name(SHM_DL_FULL)), 100);
	request(CTL_CMD_STOP, "/foe", &r);
	ck_assert_uint_eq(r.status, CTL_OK);
	ctl_response_free(&r);
	echoes("/v", 50);
	echoes("/v", 1);
	actord_sound();
}
END_TEST

/*
 * The ghost: every express word of /v and /o (and of every slot)
 * scribbled for ever, and their large slots and in-hand copies, while
 * /o floods /v from its main lane's express path (tag 41), actord asks
 * both (large payloads too) and kills each now and then.  actord stays
 * up and answers every request; once the ghost is stopped, /v and /o
 * answer after one restart each.
 */
START_TEST(ghost_words)
{
	struct ctl_response r;
	char	 args[96], big[3000];
	int64_t	 end;
	unsigned seed;
	int	 i, ok = 0, failed = 0;

	seed = getenv("EXPRESS_SEED") != NULL ?
	    (unsigned)atol(getenv("EXPRESS_SEED")) :
	    (unsigned)getpid() ^ (unsigned)tcheck_mono_ms();
	fprintf(stderr, "ghost_words: seed %u\n", seed);
	snprintf(args, sizeof(args), "\"ghost\", \"%u\", \"/v\", \"/o\"",
	    seed);
	start_tree(args);
	memset(big, 'b', sizeof(big));
	end = tcheck_mono_ms() + race_seconds() * 1000;
	for (i = 0; tcheck_mono_ms() < end; i++) {
		(void)ask("/o", 41, "/v 2000", 7, &r);
		ctl_response_free(&r);
		if (ask("/v", 1, big, i % 2 ? sizeof(big) : 8, &r))
			ok++;
		else
			failed++;
		ctl_response_free(&r);
		(void)ask("/o", 1, "x", 1, &r);
		ctl_response_free(&r);
		request(CTL_CMD_STATUS, NULL, &r);
		ck_assert_msg(r.status == CTL_OK, "status (seed %u): %s",
		    seed, r.error);
		ctl_response_free(&r);
		if (i % 8 == 7) {
			request(CTL_CMD_KILL, i % 16 == 7 ? "/v" : "/o", &r);
			ctl_response_free(&r);
		}
		ck_assert_msg(waitpid(d.pid, NULL, WNOHANG) == 0, "actord "
		    "died (seed %u)\n%s", seed, ts_daemon_log(&d));
	}
	fprintf(stderr, "ghost_words: %d rounds, asks of /v %d answered, "
	    "%d failed\n", i, ok, failed);
	request(CTL_CMD_STOP, "/foe", &r);
	ck_assert_uint_eq(r.status, CTL_OK);
	ctl_response_free(&r);
	restart("/v");
	restart("/o");
	echoes("/v", 50);
	echoes("/o", 50);
	echoes("/v", 1);
	actord_sound();
}
END_TEST

/*
 * An honest owner of /v's main lane stopped between its claim and its
 * publish: actord's asks to /v fail "mailbox full" (they do not wait for
 * it), /o's tells fail the same way, and /o answers.  After SIGCONT it
 * sends the rest, and every tell it counted as sent is delivered.
 */
START_TEST(owner_stopped_mid_send)
{
	struct ctl_response r;
	char	 args[96];
	pid_t	 pid;
	int	 waited;

	snprintf(args, sizeof(args), "\"hot\", \"/v\", \"%d\", \"%s\", \"1\"",
	    SIGSTOP, HOT_TELLS);
	start_tree(args);
	foe_wait("owner", 1);
	pid = running("/foe");
	for (waited = 0; proc_state(pid) != 'T' && waited < WAIT;
	    waited += 20)
		ts_sleep_ms(20);
	ck_assert_int_eq(proc_state(pid), 'T');
	refused_full("/v");
	ck_assert_msg(ask("/o", 41, "/v 10", 5, &r) && r.datalen == 2 &&
	    memcmp(r.data, "10", 2) == 0, "/o's tells to a lane held by a "
	    "stopped owner: %s", r.error);
	ctl_response_free(&r);
	echoes("/o", 1);
	refused_full("/v");
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	foe_wait("done", 1);
	echoes("/v", 1);
	ck_assert_uint_eq(victim_count(), foe_ok("done"));
	actord_sound();
}
END_TEST

/*
 * The same owner stopped mid-send while /v dies: actord repairs /v's
 * mailbox before its next incarnation, and must not take the owner's
 * claim for one nobody makes (its record is its slot's own_busy, not a
 * claim record): the repair released the cell (a dead letter "garbled")
 * and the owner, let go, published over the release.  Once the owner
 * goes on, /v answers, and no message of it was lost.
 */
START_TEST(owner_stopped_consumer_dies)
{
	char	 args[96];
	pid_t	 pid;
	int	 waited;

	snprintf(args, sizeof(args), "\"hot\", \"/v\", \"%d\", \"%s\", \"1\"",
	    SIGSTOP, HOT_TELLS);
	start_tree(args);
	foe_wait("owner", 1);
	pid = running("/foe");
	for (waited = 0; proc_state(pid) != 'T' && waited < WAIT;
	    waited += 20)
		ts_sleep_ms(20);
	ck_assert_int_eq(proc_state(pid), 'T');
	restart("/v");
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	foe_wait("done", 1);
	echoes("/v", 50);
	ck_assert_int_eq(letters("/v", shm_reason_name(SHM_DL_GARBLED)), 0);
	actord_sound();
}
END_TEST

/*
 * An honest owner of /v's main lane killed between its claim and its
 * publish, LIVES times: each next incarnation reuses the mailbox's slot,
 * takes the lane again and dies the same way.  Each death is one dead
 * letter "sender died" for /v (actord's reap, or the next sender,
 * releases the cell), every tell counted as sent is delivered, and /v
 * answers throughout.
 */
START_TEST(owner_killed_mid_send)
{
	char	 args[96];
	int	 i;

	snprintf(args, sizeof(args), "\"hot\", \"/v\", \"%d\", \"%s\", "
	    "\"%d\"", SIGKILL, HOT_TELLS, LIVES);
	start_tree(args);
	for (i = 1; i <= LIVES; i++) {
		foe_wait("owner", i);
		echoes("/v", 50);
	}
	/* The next incarnation sends nothing: the counts are final. */
	(void)running("/foe");
	echoes("/v", 1);
	ck_assert_int_eq(foe_lines("owner"), LIVES);
	ck_assert_uint_eq(victim_count(), foe_ok("owner"));
	ck_assert_int_eq(letters("/v", shm_reason_name(SHM_DL_SENDER_DIED)), LIVES);
	actord_sound();
}
END_TEST

/*
 * A worker clears actord's "sleeping" word while actord sleeps on its
 * doorbell, and is stopped: the answer to actord's next ask is rung by
 * nobody.  actord looked at its answers again only at the ask's deadline
 * (an ask of a minute took a minute); it arms its doorbell again once a
 * worker is reaped, as it repairs its mailbox then.
 */
START_TEST(doorbell_cleared_then_reaped)
{
	struct ctl_response r;

	start_tree("\"sleeping\", \"" ASKS_SELF_PATH "\"");
	foe_wait("cleared", 1);
	request(CTL_CMD_STOP, "/foe", &r);
	ck_assert_uint_eq(r.status, CTL_OK);
	ctl_response_free(&r);
	ck_assert_msg(ask_long("/v", 1, "late", 4, &r) && r.datalen == 4,
	    "ask /v: %s", r.error);
	ctl_response_free(&r);
	actord_sound();
}
END_TEST

static Suite *
adv_express_suite(void)
{
	Suite	*s = suite_create("adv_express");
	TCase	*tc = tcase_create("owners");
	TCase	*gh = tcase_create("ghost");
	TCase	*bell = tcase_create("doorbell");
	TCase	*rep = tcase_create("repair");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, stuck_owner_bounded, 0, 2);
	tcase_add_test(tc, owner_stopped_mid_send);
	tcase_add_test(tc, owner_killed_mid_send);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(rep, setup, teardown);
	tcase_set_timeout(rep, 120);
	tcase_add_test(rep, owner_stopped_consumer_dies);
	suite_add_tcase(s, rep);
	tcase_add_checked_fixture(bell, setup, teardown);
	tcase_set_timeout(bell, 60);
	tcase_add_test(bell, doorbell_cleared_then_reaped);
	suite_add_tcase(s, bell);
	tcase_add_checked_fixture(gh, setup, teardown);
	tcase_set_timeout(gh, 90 + race_seconds());
	tcase_add_test(gh, ghost_words);
	suite_add_tcase(s, gh);
	return s;
}

int
main(void)
{
	return tcheck_run(adv_express_suite());
}
