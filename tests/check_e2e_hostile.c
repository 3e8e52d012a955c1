/*
 * check_e2e_hostile.c: what a hostile or buggy worker can do to the arena
 * under the real actord (issue 11), and that the tree stays up: actord
 * survives, keeps answering actorctl, and every victim's mailbox delivers
 * again after at most one restart of its consumer.
 *
 * The hostile worker is tests/progs/scribbler; the victims are
 * tests/progs/actor_echo.  Each test runs its own actord in a private
 * directory and kills what it started by pid (tests/lib/tsup.c).  Under
 * SAN=1 actord itself runs with the sanitizers, and a report in its log
 * fails the test.
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

#define WAIT		20000	/* ms for anything to happen */
#define ASK_T		"5000"	/* ms an ask may wait for its answer */
#define RUN(o, ...)	ctltest_actorctl(&srv, NULL, o, __VA_ARGS__, (char *)NULL)

/* An actor_echo victim; %s: name, program, TW_DIR. */
#define VICTIM	"{ name = \"%s\"; exec = [\"%s\"]; ready = \"actor\"; " \
		"env = { TW_DIR = \"%s\"; }; mailbox = { capacity = 16; }; }"

static struct ts_daemon	 d;
static struct ctltest_server srv;	/* only .sock is used */

static void	 start_daemon(const char *children);
static void	 start_tree(const char *const *names, const char *args);
static char	*victims(const char *const *names);
static char	*scribbler(const char *args);
static bool	 file_lines(const char *name, int n, int ms);
static void	 ask_is(const char *path, const char *data);
static void	 restart(const char *path);
static void	 answer_after_restart(const char *const *names);
static void	 actord_sound(void);
static int	 lines_with(const char *, const char *);
static int	 race_seconds(void);
static bool	 log_has_report(void);
static const char *log_tail(void);
static void	 kill_victim(const char *path);

/*
 * A tree that restarts whatever dies at once and never gives up: the
 * tests kill and wedge on purpose, and a restart intensity reached would
 * end the tree for a reason that is not the one under test.
 */
static void
start_daemon(const char *children)
{
	ts_daemon_conf(&d,
	    "shutdown_timeout = 3000;\n"
	    "supervisor = {\n"
	    "  intensity = 10000; period = 1; backoff_min = 1;\n"
	    "  backoff_max = 5;\n"
	    "  children = (\n%s  );\n"
	    "};\n", children);
	ts_daemon_up(&d, WAIT, srv.sock, sizeof(srv.sock));
}

/* The victims names and a scribbler run with args, under a new actord. */
static void
start_tree(const char *const *names, const char *args)
{
	char	*v, *s, *all;

	v = victims(names);
	s = scribbler(args);
	ck_assert_int_ge(asprintf(&all, "%s,\n%s\n", v, s), 0);
	start_daemon(all);
	free(all);
	free(v);
	free(s);
}

/* The victims' entries, in one malloc'd string. */
static char *
victims(const char *const *names)
{
	char	*s = NULL, *t;
	size_t	 i;

	for (i = 0; names[i] != NULL; i++) {
		ck_assert_int_ge(asprintf(&t, "%s%s" VICTIM, s != NULL ? s : "",
		    s != NULL ? ",\n" : "", names[i], ts_progs("actor_echo"),
		    d.dir), 0);
		free(s);
		s = t;
	}
	return s;
}

/* The scribbler's entry, args a comma-separated list of quoted strings. */
static char *
scribbler(const char *args)
{
	char	*s;

	ck_assert_int_ge(asprintf(&s, "{ name = \"scribbler\"; exec = [\"%s\", "
	    "%s]; ready = \"actor\"; env = { TW_DIR = \"%s\"; }; "
	    "mailbox = { capacity = 4; }; }", ts_progs("scribbler"), args,
	    d.dir), 0);
	return s;
}

/* $TW_DIR/name has at least n lines within ms. */
static bool
file_lines(const char *name, int n, int ms)
{
	char	 path[128], buf[4096];
	ssize_t	 r;
	int	 fd, waited, lines, i;

	snprintf(path, sizeof(path), "%s/%s", d.dir, name);
	for (waited = 0; waited < ms; waited += 20) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
			r = read(fd, buf, sizeof(buf));
			close(fd);
			for (lines = 0, i = 0; i < r; i++)
				lines += buf[i] == '\n';
			if (lines >= n)
				return true;
		}
		ts_sleep_ms(20);
	}
	return false;
}

/* ask path 1 (echo) data answers data. */
static void
ask_is(const char *path, const char *data)
{
	struct ctltest_out o;

	RUN(&o, "ask", "-t", ASK_T, path, "1", data);
	ck_assert_msg(o.status == 0 && o.outlen == strlen(data) &&
	    memcmp(o.out, data, o.outlen) == 0, "ask %s: status %d, answer "
	    "\"%s\", error \"%s\"\nactord's log:\n%s", path, o.status, o.out,
	    o.err, log_tail());
	ctltest_out_free(&o);
}

/* SIGKILL path's process and wait until it runs again. */
static void
restart(const char *path)
{
	struct ctltest_out o;
	pid_t	 old;
	int	 waited;

	/* It may be between two starts (the races kill it in a loop). */
	for (waited = 0; (old = (pid_t)ctltest_node_num(&srv, path, "pid")) <= 0
	    && waited < WAIT; waited += 20)
		ts_sleep_ms(20);
	ck_assert_msg(old > 0, "%s does not run: %s", path, log_tail());
	RUN(&o, "kill", "-s", "KILL", path);
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert_msg(ctltest_wait_new_pid(&srv, path, old, WAIT) > 0,
	    "%s did not come back: %s", path, log_tail());
}

/*
 * Each victim, restarted once, answers asks again: several, for a lane
 * with zeroed cells would take exactly one message.
 */
static void
answer_after_restart(const char *const *names)
{
	char	 path[32];
	size_t	 i;

	for (i = 0; names[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/%s", names[i]);
		restart(path);
		ask_is(path, "one");
		ask_is(path, "two");
		ask_is(path, "three");
	}
}

/* actord runs, answers, and its log has no sanitizer report. */
static void
actord_sound(void)
{
	struct ctltest_out o;
	int st;

	ck_assert_int_eq(waitpid(d.pid, &st, WNOHANG), 0);
	RUN(&o, "status");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert_msg(!log_has_report(), "actord's log:\n%s", log_tail());
}

/*
 * A sanitizer report anywhere in actord's log (which may be longer than
 * what ts_daemon_log shows after a long run).
 */
static bool
log_has_report(void)
{
	char	 line[512];
	FILE	*f;
	bool	 found = false;

	if ((f = fopen(d.log, "r")) == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, "Sanitizer") != NULL ||
		    strstr(line, "runtime error") != NULL;
	fclose(f);
	return found;
}

/* The last 3,000 bytes of actord's log: what fits in a failure message. */
static const char *
log_tail(void)
{
	static char buf[3001];
	off_t	 end;
	ssize_t	 r;
	int	 fd;

	buf[0] = '\0';
	if ((fd = open(d.log, O_RDONLY | O_CLOEXEC)) == -1)
		return buf;
	end = lseek(fd, 0, SEEK_END);
	r = pread(fd, buf, sizeof(buf) - 1, end > 3000 ? end - 3000 : 0);
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	return buf;
}

/*
 * How long the races run: $HOSTILE_SECONDS (make soak: 600), by default
 * 10 s.
 */
static int
race_seconds(void)
{
	const char *s = getenv("HOSTILE_SECONDS");
	int	 n = s != NULL ? atoi(s) : 0;

	return n > 0 ? n : 10;
}

/* SIGKILL path's process, if it runs; actord restarts it. */
static void
kill_victim(const char *path)
{
	struct ctltest_out o;

	RUN(&o, "kill", "-s", "KILL", path);
	ctltest_out_free(&o);
}

static void
setup(void)
{
	ts_daemon_init(&d);
	memset(&srv, 0, sizeof(srv));
}

static void
teardown(void)
{
	ts_daemon_cleanup(&d);
}

/*
 * Item 3: wedges that outlived every restart of their consumer.  Each
 * victim's main lane is wedged once by the scribbler; after one restart,
 * every victim answers asks again (several: a lane with zeroed cells
 * took exactly one message), and actord says what the repair cost.
 */
START_TEST(wedged_mailboxes_repaired)
{
	static const char *const names[] = { "tail", "claim", "steal",
	    "zero", NULL };

	start_tree(names, "\"wedge\", \"/tail\", \"tail\", \"/claim\", "
	    "\"claim\", \"/steal\", \"steal\", \"/zero\", \"zero\"");
	ck_assert_msg(file_lines("wedged", 4, WAIT), "the scribbler did not "
	    "wedge: %s", ts_daemon_log(&d));
	answer_after_restart(names);
	ck_assert(ts_daemon_log_has(&d, "mailbox repaired", WAIT));
	ck_assert(ts_daemon_log_has(&d, "1 messages lost", WAIT));
	actord_sound();
}
END_TEST

/*
 * Item 7: one actor's counters, set so that their sums wrap (and pass
 * 2^64 as doubles), used to make actorctl refuse the whole stats answer
 * ("malformed answer").  Now the sums saturate and every form answers.
 */
START_TEST(wrapping_counters_stats)
{
	static const char *const names[] = { "victim", "other", NULL };
	struct ctltest_out o;
	struct json *doc;

	start_tree(names, "\"counters\", \"/victim\"");
	ck_assert(file_lines("counters", 1, WAIT));
	RUN(&o, "stats");
	ck_assert_msg(o.status == 0 && strstr(o.out, "/victim") != NULL &&
	    strstr(o.out, "/other") != NULL, "stats: %d %s", o.status, o.err);
	ctltest_out_free(&o);
	RUN(&o, "stats", "--json");
	ctltest_expect(&o, 0, NULL);
	doc = ctltest_json(&o);
	json_free(doc);
	ctltest_out_free(&o);
	RUN(&o, "stats", "--prometheus");
	ctltest_expect(&o, 0, NULL);
	ck_assert(strstr(o.out, "victim") != NULL);
	ctltest_out_free(&o);
	actord_sound();
}
END_TEST

/* How many lines of $TW_DIR/name contain what. */
static int
lines_with(const char *name, const char *what)
{
	char	 path[128], line[256];
	FILE	*f;
	int	 n = 0;

	snprintf(path, sizeof(path), "%s/%s", d.dir, name);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

/*
 * Item 2: one 8-byte write to the arena header (or a hole punched in its
 * page) used to make every later start fail ("not an actord arena"), so
 * that the next ordinary crash ended the tree.  The header now lives in a
 * memfd sealed read-only: every way in is refused.  A hole in the data's
 * first page (producer slots) is allowed, and harmless: after an ordinary
 * crash, the victim comes back and answers.
 */
START_TEST(header_write_then_crash)
{
	static const char *const names[] = { "victim", NULL };

	start_tree(names, "\"header\"");
	ck_assert_msg(file_lines("header", 5, WAIT), "the scribbler did not "
	    "finish: %s", ts_daemon_log(&d));
	ck_assert_int_eq(lines_with("header", "refused"), 4);
	ck_assert_int_eq(lines_with("header", "zeroed"), 0);
	ck_assert_int_eq(lines_with("header", "hole punched in the data"), 1);
	restart("/victim");
	ask_is("/victim", "one");
	ask_is("/victim", "two");
	restart("/victim");
	ask_is("/victim", "three");
	actord_sound();
}
END_TEST

/*
 * Item 1: a worker flips its own region's watch_cap, snap_cap and
 * snapshot lengths between valid and huge values while the scribbler
 * SIGKILLs it every 20 ms, so that actord reaps it (and reads the region)
 * in the middle of the flips.  actord used to read the checked fields
 * again and crashed (SEGV in actor_crc32c) within 1-2 s; it must read
 * each once, and survive.
 */
START_TEST(flipped_region_while_reaped)
{
	static const char *const names[] = { "flipped", "other", NULL };
	struct ctltest_out o;
	uint64_t end;
	int	 st;

	start_tree(names, "\"flip\", \"/flipped\"");
	end = now_ms() + (uint64_t)race_seconds() * 1000;
	while (now_ms() < end) {
		ck_assert_msg(waitpid(d.pid, &st, WNOHANG) == 0, "actord "
		    "died (status %#x): %s", st, log_tail());
		ts_sleep_ms(250);
	}
	ask_is("/other", "one");
	RUN(&o, "stop", "/scribbler");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	restart("/flipped");
	ask_is("/flipped", "two");
	actord_sound();
}
END_TEST

/*
 * The hostile worker: the scribbler writes random and aimed values into
 * every word of the arena it can write (ends, cells, lengths, claim
 * records, regions, dead letters, holes punched) while the victims are
 * SIGKILLed and restarted in turn.  actord keeps running and answering;
 * once the scribbler is stopped, every victim delivers again after at
 * most one restart, and stats still answer.
 */
START_TEST(hostile_scribbler)
{
	static const char *const names[] = { "v0", "v1", "v2", "v3", NULL };
	struct ctltest_out o;
	char	*s, seed[32], path[32];
	uint64_t end;
	int	 st, i, kills = 0;

	/* $HOSTILE_SEED reruns the seed a failure printed. */
	snprintf(seed, sizeof(seed), "\"%ld\"", getenv("HOSTILE_SEED") != NULL ?
	    atol(getenv("HOSTILE_SEED")) : (long)getpid() ^ (long)now_ms());
	fprintf(stderr, "hostile_scribbler: seed %s\n", seed);
	ck_assert_int_ge(asprintf(&s, "\"hostile\", %s", seed), 0);
	start_tree(names, s);
	free(s);
	end = now_ms() + (uint64_t)race_seconds() * 1000;
	for (i = 0; now_ms() < end; i++) {
		snprintf(path, sizeof(path), "/%s", names[i % 4]);
		kill_victim(path);
		kills++;
		ck_assert_msg(waitpid(d.pid, &st, WNOHANG) == 0, "actord "
		    "died (seed %s, status %#x): %s", seed, st, log_tail());
		RUN(&o, "status");
		ck_assert_msg(o.status == 0, "status (seed %s): %s", seed,
		    o.err);
		ctltest_out_free(&o);
		ts_sleep_ms(50);
	}
	fprintf(stderr, "hostile_scribbler: %d kills in %d s\n", kills,
	    race_seconds());
	RUN(&o, "stop", "/scribbler");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	answer_after_restart(names);
	RUN(&o, "stats");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	actord_sound();
}
END_TEST

static Suite *
hostile_suite(void)
{
	Suite	*s = suite_create("e2e_hostile");
	TCase	*tc = tcase_create("wedges");
	TCase	*flip = tcase_create("flip");
	TCase	*host = tcase_create("hostile");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, wedged_mailboxes_repaired);
	tcase_add_test(tc, wrapping_counters_stats);
	tcase_add_test(tc, header_write_then_crash);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(flip, setup, teardown);
	tcase_set_timeout(flip, 60 + race_seconds());
	tcase_add_test(flip, flipped_region_while_reaped);
	suite_add_tcase(s, flip);
	tcase_add_checked_fixture(host, setup, teardown);
	tcase_set_timeout(host, 60 + race_seconds());
	tcase_add_test(host, hostile_scribbler);
	suite_add_tcase(s, host);
	return s;
}

int
main(void)
{
	return tcheck_run(hostile_suite());
}
