/*
 * check_e2e_msg.c: messaging through actord end to end: actorctl ask and
 * send to real libactor workers (tests/progs/actor_echo) under the real
 * actord, answered through actord's own actor; and the spare mailboxes
 * that children added after boot (actorctl add, reload) take.
 *
 * Each test runs its own actord (tests/lib/tsup.c) in a private
 * mkdtemp'd runtime_dir, and kills what it started by pid.  The only
 * durations asserted are correctness bounds: an ask that fails because of
 * a death or a down actor must come back well before its timeout.
 */
#include <sys/wait.h>

#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
#include "tools/actorctl.h"
#include "tools/json.h"

#define WAIT		10000	/* ms for anything to happen */
#define ASK_T		"8000"	/* ms: an ask that must not wait for it */
#define ASK_T_MS	8000
#define RUN(o, ...)	ctltest_actorctl(&srv, NULL, o, __VA_ARGS__, (char *)NULL)

static struct ts_daemon	 d;
static struct ctltest_server srv;	/* only .sock is used */
static int		 grp_instances = 2;	/* of /grp, in write_conf */

static void	 write_conf(const char *top, const char *extra);
static void	 start_daemon(const char *top, const char *extra);
static bool	 wait_state(const char *, const char *);
static int64_t	 mono_ms(void);
static bool	 seen_has(const char *, int);
static void	 ask_is(const char *, const char *);
static double	 stats_num(const char *, const char *);
static void	 stop_remove(const char *);

/* An actor_echo worker; %s: its name, TW_DIR and mailbox extras. */
#define ECHO_CHILD	"{ name = \"%s\"; exec = [\"%s\"]; ready = \"actor\"; " \
		"env = { TW_DIR = \"%s\"; }; mailbox = { capacity = 16; %s }; }"

static void
write_conf(const char *top, const char *extra)
{
	const char *echo = ts_progs("actor_echo");
	char c1[1024], c2[1024], c3[1024];

	snprintf(c1, sizeof(c1), ECHO_CHILD, "echo", echo, d.dir,
	    "max_attempts = 1;");
	snprintf(c2, sizeof(c2), ECHO_CHILD, "echo", echo, d.dir,
	    "max_attempts = 1;");
	snprintf(c3, sizeof(c3), "{ name = \"grp\"; instances = %d; "
	    "exec = [\"%s\"]; ready = \"actor\"; env = { TW_DIR = \"%s\"; }; "
	    "mailbox = { capacity = 16; }; }", grp_instances, echo, d.dir);
	ts_daemon_conf(&d,
	    "runtime_dir = \"%s/run\";\n"
	    "shutdown_timeout = 3000;\n"
	    "%s\n"
	    "supervisor = {\n"
	    "  intensity = 50; period = 10; backoff_min = 20; backoff_max = 40;\n"
	    "  children = (\n"
	    "    %s,\n"
	    "    { name = \"slow\"; supervisor = { intensity = 50;\n"
	    "        backoff_min = 5000; backoff_max = 6000;\n"
	    "        children = ( %s ); }; },\n"
	    "    %s%s\n"
	    "  );\n"
	    "};\n",
	    d.dir, top != NULL ? top : "", c1, c2, c3,
	    extra != NULL ? extra : "");
}

static void
start_daemon(const char *top, const char *extra)
{
	write_conf(top, extra);
	ts_daemon_up(&d, WAIT, srv.sock, sizeof(srv.sock));
}

static void
setup(void)
{
	ts_daemon_init(&d);
	memset(&srv, 0, sizeof(srv));
	grp_instances = 2;
}

static void
teardown(void)
{
	ts_daemon_cleanup(&d);
}

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Poll status --json until path is in state. */
static bool
wait_state(const char *path, const char *state)
{
	struct ctltest_out o;
	struct json *doc;
	const struct json *nodes, *n, *p, *s;
	char err[128];
	size_t i;
	int waited;
	bool ok;

	for (waited = 0; waited < WAIT; waited += 20) {
		RUN(&o, "status", "--json");
		doc = json_parse(o.out, o.outlen, err, sizeof(err));
		ctltest_out_free(&o);
		ok = false;
		nodes = doc != NULL ? json_get(doc, "nodes") : NULL;
		for (i = 0; nodes != NULL && (n = json_at(nodes, i)) != NULL;
		    i++) {
			p = json_get(n, "path");
			s = json_get(n, "state");
			if (p != NULL && s != NULL && p->type == JSON_STRING &&
			    s->type == JSON_STRING && strcmp(p->str, path) == 0)
				ok = strcmp(s->str, state) == 0;
		}
		json_free(doc);
		if (ok)
			return true;
		ts_sleep_ms(20);
	}
	return false;
}

/* $dir/seen gets line within ms. */
static bool
seen_has(const char *line, int ms)
{
	char path[128], buf[4096];
	ssize_t n;
	int fd, waited;

	snprintf(path, sizeof(path), "%s/seen", d.dir);
	for (waited = 0; waited < ms; waited += 20) {
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

/*
 * ask path tag data fails with actorctl's "failed" status and an error
 * naming why, well before its timeout: no ask waits on a dead actor.
 */
static void
ask_fails_at_once(const char *path, const char *tag, const char *data,
    const char *why)
{
	struct ctltest_out o;
	int64_t t0, took;

	t0 = mono_ms();
	RUN(&o, "ask", "-t", ASK_T, path, tag, data);
	took = mono_ms() - t0;
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, why);
	ck_assert_msg(took < ASK_T_MS / 2, "ask %s (%s) took %lld ms of its "
	    "%d", path, why, (long long)took, ASK_T_MS);
	ctltest_out_free(&o);
}

/* actorctl stop path, then remove path: both succeed. */
static void
stop_remove(const char *path)
{
	struct ctltest_out o;

	RUN(&o, "stop", path);
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	RUN(&o, "remove", path);
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
}

/* ask path tag data answers want on stdout. */
static void
ask_answers(const char *path, const char *tag, const char *data,
    const char *want)
{
	struct ctltest_out o;

	RUN(&o, "ask", "-t", ASK_T, path, tag, data);
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(o.outlen == strlen(want) && memcmp(o.out, want,
	    o.outlen) == 0, "ask %s %s %s: answered \"%s\", not \"%s\"",
	    path, tag, data, o.out, want);
	ctltest_out_free(&o);
}

/* ask path 1 (echo) data answers data on stdout. */
static void
ask_is(const char *path, const char *data)
{
	ask_answers(path, "1", data, data);
}

START_TEST(ask_answer_and_json)
{
	struct ctltest_out o;
	struct json *doc;
	const struct json *v;
	char err[128];

	start_daemon(NULL, NULL);
	ask_is("/echo", "hello");
	ask_is("/grp/1", "shard one");
	/* DATA from standard input. */
	ctltest_actorctl(&srv, "from stdin", &o, "ask", "/echo", "1",
	    (char *)NULL);
	ctltest_expect(&o, 0, NULL);
	ck_assert_str_eq(o.out, "from stdin");
	ctltest_out_free(&o);

	RUN(&o, "--json", "ask", "/echo", "1", "json \"quoted\"");
	ctltest_expect(&o, 0, NULL);
	doc = json_parse(o.out, o.outlen, err, sizeof(err));
	ck_assert_msg(doc != NULL, "bad JSON (%s): %s", err, o.out);
	v = json_get(doc, "result");
	ck_assert(v != NULL && v->type == JSON_STRING);
	ck_assert_str_eq(v->str, "ok");
	v = json_get(doc, "answer");
	ck_assert(v != NULL && v->type == JSON_STRING);
	ck_assert_str_eq(v->str, "json \"quoted\"");
	json_free(doc);
	ctltest_out_free(&o);

	/* Not a mailbox, not a path. */
	RUN(&o, "ask", "/slow", "1", "x");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "has no mailbox");
	ctltest_out_free(&o);
	RUN(&o, "ask", "/nope", "1", "x");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, NULL);
	ctltest_out_free(&o);
}
END_TEST

START_TEST(ask_timeout)
{
	struct ctltest_out o;

	start_daemon(NULL, NULL);
	RUN(&o, "ask", "-t", "300", "/echo", "2", "never");
	ctltest_expect(&o, ACTORCTL_EXIT_TIMEOUT, "no answer within 300 ms");
	ck_assert_uint_eq(o.outlen, 0);
	ctltest_out_free(&o);
	/* The actor and actord are fine: the next ask is answered. */
	ask_is("/echo", "after");
}
END_TEST

/*
 * The actor dies handling the ask (max_attempts = 1: poison at once):
 * actor_reaped fails the ask, and the error reaches actorctl at once,
 * well before the timeout.
 */
START_TEST(ask_crash_fails_at_once)
{

	start_daemon(NULL, NULL);
	ask_is("/echo", "warm");
	ask_fails_at_once("/echo", "3", "boom", "poison");
	/* Restarted (backoff 20-40 ms): answers again. */
	ck_assert(wait_state("/echo", "running"));
	ask_is("/echo", "back");
}
END_TEST

/*
 * actord never waits on a worker's mailbox: /echo stopped (SIGSTOP) with
 * its mailbox full, an ask through actord fails at once with "mailbox
 * full", as a tell does, instead of holding actord's loop for the ask's
 * timeout; the refused ask is a dead letter.  Resumed, /echo answers.
 */
START_TEST(ask_full_mailbox_refused_at_once)
{
	struct ctltest_out o;
	pid_t pid;
	int i;
	bool full = false;

	start_daemon(NULL, NULL);
	ask_is("/echo", "warm");
	pid = (pid_t)ctltest_node_num(&srv, "/echo", "pid");
	ck_assert_int_gt(pid, 1);
	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	for (i = 0; i < 64 && !full; i++) {	/* capacity 16 */
		RUN(&o, "send", "/echo", "4", "fill");
		full = o.status != 0;
		if (full)
			ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "mailbox full");
		ctltest_out_free(&o);
	}
	ck_assert_msg(full, "64 tells to a stopped /echo all queued");
	ask_fails_at_once("/echo", "1", "refused", "mailbox full");
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	/* Until the actor has taken the 16 again, an ask is refused. */
	for (i = 0; i < 1000 && stats_num("/echo", "mailbox_depth") != 0; i++)
		ts_sleep_ms(10);
	ask_is("/echo", "after");
	ck_assert_msg(stats_num("/echo", "deadlettered") >= 2,
	    "deadlettered %g", stats_num("/echo", "deadlettered"));
}
END_TEST

/*
 * An answer that comes after its ask timed out is dropped, never handed
 * to the next ask; a client that goes away mid-ask is forgotten; then
 * actord is idle again: no timer left, no system call.
 */
START_TEST(late_answer_cancelled_client_then_idle)
{
	struct ctltest_out o;
	pid_t pid;
	int status;

	start_daemon(NULL, NULL);
	RUN(&o, "ask", "-t", "100", "/echo", "5", "late");
	ctltest_expect(&o, ACTORCTL_EXIT_TIMEOUT, NULL);
	ctltest_out_free(&o);
	ask_is("/echo", "not the late one");

	/* A client that asks and dies before the answer. */
	if ((pid = fork()) == 0) {
		execl(ts_build("actorctl"), "actorctl", "-S", srv.sock, "ask",
		    "-t", "500", "/echo", "2", "x", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	ts_sleep_ms(100);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ask_is("/echo", "still answering");

	/* Past every deadline: nothing ticks. */
	ts_sleep_ms(800);
	ts_daemon_idle(&d, 600);
}
END_TEST

/* A number of path's entry in stats --json, -1 if not shown. */
static double
stats_num(const char *path, const char *key)
{
	struct ctltest_out o;
	struct json *doc;
	const struct json *as, *v, *c;
	char err[128];
	double num = -1;
	size_t i;

	RUN(&o, "stats", "--json");
	ctltest_expect(&o, 0, NULL);
	doc = json_parse(o.out, o.outlen, err, sizeof(err));
	ck_assert_msg(doc != NULL, "bad JSON (%s): %s", err, o.out);
	as = json_get(doc, "actors");
	for (i = 0; as != NULL && (v = json_at(as, i)) != NULL; i++)
		if (strcmp(json_get(v, "path")->str, path) == 0 &&
		    (c = json_get(v, key)) != NULL && c->type == JSON_NUMBER)
			num = c->num;
	json_free(doc);
	ctltest_out_free(&o);
	return num;
}

/*
 * During its backoff (5 s here) the actor is down: the ask fails at once.
 * An actor's asks retried through the restart are counted (stats:
 * asks_failed), not written as dead letters: the real one, the message
 * it died with (max_attempts 1: poison), is the only dead letter.
 */
START_TEST(ask_during_backoff_fails_at_once)
{
	struct ctltest_out o;

	start_daemon(NULL, NULL);
	RUN(&o, "send", "/slow/echo", "3", "crash");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert(wait_state("/slow/echo", "restarting"));
	ask_fails_at_once("/slow/echo", "1", "anyone?", "not running");
	ask_answers("/echo", "8", "/slow/echo 500", "500");
	ck_assert(stats_num("/slow/echo", "asks_failed") == 500);
	RUN(&o, "deadletters");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "/slow/echo") != NULL &&
	    strstr(o.out, "poison") != NULL && strstr(o.out, "1 dead letter") !=
	    NULL, "deadletters: %s", o.out);
	ctltest_out_free(&o);
}
END_TEST

/* A tell reaches the worker; its sender is actord's own mailbox. */
START_TEST(send_reaches_worker)
{
	struct ctltest_out o;
	struct json *doc;
	const struct json *dls, *dl, *v;
	char err[128];
	size_t i;
	bool found = false;

	start_daemon(NULL, NULL);
	RUN(&o, "send", "/echo", "4", "marker-1");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert_msg(seen_has("/echo got marker-1", WAIT), "not seen");
	RUN(&o, "send", "/grp/0", "4", "marker-2");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert_msg(seen_has("/grp/0 got marker-2", WAIT), "not seen");

	/* A tell that crashes it (poison): a dead letter sent by actord. */
	RUN(&o, "send", "/echo", "3", "poison");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	for (i = 0; i < WAIT / 20 && !found; i++) {
		size_t k;

		RUN(&o, "deadletters", "--json");
		doc = json_parse(o.out, o.outlen, err, sizeof(err));
		ctltest_out_free(&o);
		ck_assert_msg(doc != NULL, "bad JSON: %s", err);
		dls = json_get(doc, "deadletters");
		for (k = 0; dls != NULL && (dl = json_at(dls, k)) != NULL;
		    k++) {
			v = json_get(dl, "reason");
			if (v == NULL || v->type != JSON_STRING ||
			    strcmp(v->str, "poison") != 0)
				continue;
			ck_assert_str_eq(json_get(dl, "recipient")->str,
			    "/echo");
			v = json_get(dl, "sender");
			ck_assert(v != NULL && v->type == JSON_STRING);
			ck_assert_str_eq(v->str, "/@actord");
			found = true;
		}
		json_free(doc);
		if (!found)
			ts_sleep_ms(20);
	}
	ck_assert_msg(found, "no poison dead letter");
}
END_TEST

/*
 * A coalesce mailbox under real actord: 2000 keyed tells of 4 keys to a
 * worker that takes 1 ms each; it sees every key's latest value, most
 * tells are replaced, and actorctl stats counts them.
 */
START_TEST(coalesce_latest_value_wins)
{
	char extra[1024];

	snprintf(extra, sizeof(extra), ",\n    " ECHO_CHILD, "coal",
	    ts_progs("actor_echo"), d.dir, "overflow = \"coalesce\";");
	start_daemon(NULL, extra);
	ask_answers("/echo", "9", "/coal 2000", "0");
	ck_assert_msg(seen_has("/coal got 0=1996", WAIT), "no 0=1996");
	ck_assert(seen_has("/coal got 1=1997", WAIT));
	ck_assert(seen_has("/coal got 2=1998", WAIT));
	ck_assert(seen_has("/coal got 3=1999", WAIT));
	ck_assert_msg(stats_num("/coal", "replaced") > 0, "replaced %g",
	    stats_num("/coal", "replaced"));
	ck_assert(stats_num("/coal", "deadlettered") == 0);
}
END_TEST

/* Handler durations are sampled (1 in 8): the series has samples. */
START_TEST(stats_handler_duration)
{
	struct ctltest_out o;
	struct json *doc;
	const struct json *as, *a, *v, *h;
	char err[128];
	size_t i;
	int k;

	start_daemon(NULL, NULL);
	for (k = 0; k < 24; k++)
		ask_is("/grp/0", "x");
	RUN(&o, "stats", "--json", "/grp/0");
	ctltest_expect(&o, 0, NULL);
	doc = json_parse(o.out, o.outlen, err, sizeof(err));
	ck_assert_msg(doc != NULL, "bad JSON (%s): %s", err, o.out);
	as = json_get(doc, "actors");
	a = NULL;
	for (i = 0; as != NULL && (v = json_at(as, i)) != NULL; i++)
		if (strcmp(json_get(v, "path")->str, "/grp/0") == 0)
			a = v;
	ck_assert_ptr_nonnull(a);
	v = json_get(a, "handler_p99_us");
	ck_assert_msg(v != NULL && v->type == JSON_NUMBER, "handler_p99_us "
	    "is not a number: %s", o.out);
	h = json_get(a, "handler_duration");
	ck_assert_msg(h != NULL && h->type == JSON_OBJECT, "no histogram: %s",
	    o.out);
	json_free(doc);
	ctltest_out_free(&o);

	RUN(&o, "stats", "--prometheus");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "actord_handler_duration_seconds_bucket")
	    != NULL, "no handler histogram: %s", o.out);
	ctltest_out_free(&o);
}
END_TEST

/* actorctl add: the new instance takes a spare mailbox; spares run out. */
START_TEST(add_takes_spare_mailbox)
{
	struct ctltest_out o;

	start_daemon("spare_mailboxes = 1;", NULL);
	RUN(&o, "add", "/grp");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "/grp/2") != NULL, "added: %s", o.out);
	ctltest_out_free(&o);
	ck_assert(wait_state("/grp/2", "running"));
	ask_is("/grp/2", "late shard");
	RUN(&o, "send", "/grp/2", "4", "late-tell");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert(seen_has("/grp/2 got late-tell", WAIT));

	/* The only spare is taken. */
	RUN(&o, "add", "/grp");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "no spare mailbox: raise "
	    "spare_mailboxes");
	ctltest_out_free(&o);

	/* Removed, its slot is a spare again: stale for the old name. */
	stop_remove("/grp/2");
	RUN(&o, "send", "/grp/2", "4", "gone");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, NULL);
	ctltest_out_free(&o);
	RUN(&o, "add", "/grp");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert(wait_state("/grp/2", "running"));
	ask_is("/grp/2", "again");
}
END_TEST

/*
 * A late instance keeps its group's mailbox: the spare (a ring of the
 * default 1024 cells) is configured to the group's capacity and overflow
 * policy, whatever the spares' defaults; status shows 64, not 1024.
 */
START_TEST(add_keeps_configured_mailbox)
{
	struct ctltest_out o;
	char rej[1024];

	snprintf(rej, sizeof(rej), ",\n    { name = \"rej\"; instances = 1; "
	    "exec = [\"%s\"]; ready = \"actor\"; mailbox = { capacity = 64; "
	    "overflow = \"reject\"; block_timeout = 250; }; }",
	    ts_progs("actor_echo"));
	start_daemon(NULL, rej);
	ask_is("/rej/0", "booted with its own");
	RUN(&o, "add", "/rej");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "/rej/1") != NULL, "added: %s", o.out);
	ctltest_out_free(&o);
	ck_assert(wait_state("/rej/1", "running"));
	ask_is("/rej/1", "late, rejecting");
	ck_assert(stats_num("/rej/0", "mailbox_capacity") == 64);
	ck_assert_msg(stats_num("/rej/1", "mailbox_capacity") == 64,
	    "capacity %g", stats_num("/rej/1", "mailbox_capacity"));
	RUN(&o, "stats", "/rej/1");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, " 0/64 ") != NULL, "stats: %s", o.out);
	ctltest_out_free(&o);
	/* The default policy, the default capacity. */
	RUN(&o, "add", "/grp");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert(wait_state("/grp/2", "running"));
	ask_is("/grp/2", "fits");
	ck_assert(stats_num("/grp/2", "mailbox_capacity") == 16);
}
END_TEST

/*
 * Spares are as large as the configuration at start: a worker a reload
 * brings with a larger cell fits none, and the reload says so.
 */
START_TEST(reload_refuses_cell_too_large)
{
	struct ctltest_out o;
	char big[1024];

	snprintf(big, sizeof(big), ",\n    { name = \"big\"; "
	    "exec = [\"%s\"]; ready = \"actor\"; mailbox = { capacity = 16; "
	    "cell = 8192; }; }", ts_progs("actor_echo"));
	start_daemon(NULL, NULL);
	write_conf(NULL, big);
	RUN(&o, "reload");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "no spare mailbox");
	ctltest_out_free(&o);
	RUN(&o, "status", "/big");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, NULL);
	ctltest_out_free(&o);
	ask_is("/grp/0", "tree untouched");
}
END_TEST

/* Reload adds a worker with a mailbox from the spares, or refuses. */
START_TEST(reload_adds_worker_with_mailbox)
{
	struct ctltest_out o;
	char late[1024];

	snprintf(late, sizeof(late), ",\n    " ECHO_CHILD, "late",
	    ts_progs("actor_echo"), d.dir, "");
	start_daemon("spare_mailboxes = 1;", NULL);
	/* Take the one spare, then a reload that needs one is refused. */
	RUN(&o, "add", "/grp");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	write_conf("spare_mailboxes = 1;", late);
	RUN(&o, "reload");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "no spare mailbox");
	ctltest_out_free(&o);
	RUN(&o, "ask", "/late", "1", "x");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, NULL);
	ctltest_out_free(&o);
	ask_is("/grp/0", "tree untouched");

	/* Give the spare back: the same reload now works. */
	stop_remove("/grp/2");
	RUN(&o, "reload");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert(wait_state("/late", "running"));
	ask_is("/late", "new in the configuration");
}
END_TEST

/*
 * A long-lived sender's shard group follows the tree: /echo's handle
 * looked /grp up once, then sees the instance added by actorctl add, the
 * one removed by actorctl remove, and the ones a reload adds, without
 * opening a new handle (actor_echo's tag 7: actor_shard_group).  The
 * reload grows /grp from 2 to 4 with 2 spares: the group is rebuilt,
 * its old instances' mailboxes taken again.
 */
START_TEST(shard_group_follows_changes)
{
	struct ctltest_out o;

	start_daemon("spare_mailboxes = 2;", NULL);
	ask_answers("/echo", "7", "/grp", "2");
	RUN(&o, "add", "/grp");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ask_answers("/echo", "7", "/grp", "3");
	stop_remove("/grp/2");
	ask_answers("/echo", "7", "/grp", "2");

	grp_instances = 4;
	write_conf("spare_mailboxes = 2;", NULL);
	RUN(&o, "reload");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert(wait_state("/grp/3", "running"));
	ask_answers("/echo", "7", "/grp", "4");
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("e2e_msg");
	TCase *tc = tcase_create("messages through actord");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ask_answer_and_json);
	tcase_add_test(tc, ask_timeout);
	tcase_add_test(tc, coalesce_latest_value_wins);
	tcase_add_test(tc, ask_crash_fails_at_once);
	tcase_add_test(tc, ask_full_mailbox_refused_at_once);
	tcase_add_test(tc, ask_during_backoff_fails_at_once);
	tcase_add_test(tc, late_answer_cancelled_client_then_idle);
	tcase_add_test(tc, send_reaches_worker);
	tcase_add_test(tc, stats_handler_duration);
	tcase_add_test(tc, add_takes_spare_mailbox);
	tcase_add_test(tc, add_keeps_configured_mailbox);
	tcase_add_test(tc, reload_refuses_cell_too_large);
	tcase_add_test(tc, reload_adds_worker_with_mailbox);
	tcase_add_test(tc, shard_group_follows_changes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
