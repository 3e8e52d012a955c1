/*
 * check_ctl_actorctl.c: the real actorctl binary ($ACTORD_BUILD/actorctl)
 * run end to end, every command, against the fake-backend control server
 * (tests/progs/ctl_fake_server): exit statuses, messages on stderr,
 * --json output parsed and checked, -f follows, `top` under a
 * pseudo-terminal.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"
#include "tools/actorctl.h"
#include "tools/json.h"

#define RUN(s, o, ...)	ctltest_actorctl(s, NULL, o, __VA_ARGS__, (char *)NULL)

static const struct json *
node(const struct json *doc, const char *path)
{
	const struct json	*nodes = json_get(doc, "nodes"), *n;
	size_t			 i;

	for (i = 0; (n = json_at(nodes, i)) != NULL; i++)
		if (strcmp(json_get(n, "path")->str, path) == 0)
			return n;
	return NULL;
}

START_TEST(status_human_and_json)
{
	static const char *const order[] = { "/", "/web", "/web/frontend",
	    "/web/api/0", "/web/api/1", "/db", "/batch", "/broken" };
	struct ctltest_server	 s;
	struct ctltest_out	 o;
	struct json		*v;
	const struct json	*n, *c;
	size_t			 i;

	ctltest_start(&s, NULL);
	RUN(&s, &o, "status");
	ctltest_expect(&o, 0, NULL);
	ck_assert_msg(strstr(o.out, "PATH") != NULL, "status printed: [%s] [%s]",
	    o.out, o.err);
	ck_assert_ptr_nonnull(strstr(o.out,
	    "8 specs: 5 running, 1 restarting, 2 supervisors, 6 workers\n"));
	ck_assert_ptr_nonnull(strstr(o.out, "rest_for_one 1/5 in 10s"));
	ctltest_out_free(&o);

	v = ctltest_status(&s);
	ck_assert_uint_eq(json_count(json_get(v, "nodes")), 8);
	for (i = 0; i < 8; i++) {
		n = json_at(json_get(v, "nodes"), i);
		/* Start order, and every required key. */
		ck_assert_str_eq(json_get(n, "path")->str, order[i]);
		ck_assert_ptr_nonnull(json_get(n, "kind"));
		ck_assert_ptr_nonnull(json_get(n, "state"));
		ck_assert_ptr_nonnull(json_get(n, "pid"));
		ck_assert_ptr_nonnull(json_get(n, "restarts"));
		ck_assert_ptr_nonnull(json_get(n, "incarnation"));
		ck_assert_ptr_nonnull(json_get(n, "last_exit"));
	}
	n = node(v, "/db");
	ck_assert_str_eq(json_get(n, "state")->str, "restarting");
	ck_assert_int_eq(json_get(n, "pid")->type, JSON_NULL);
	ck_assert(json_get(n, "restarts")->num == 4);
	ck_assert_str_eq(json_get(n, "last_exit")->str, "exited 1");
	n = node(v, "/web");
	ck_assert_str_eq(json_get(n, "kind")->str, "supervisor");
	ck_assert_str_eq(json_get(n, "strategy")->str, "rest_for_one");
	c = json_get(v, "counts");
	ck_assert(json_get(c, "specs")->num == 8);
	ck_assert(json_get(c, "running")->num == 5);
	ck_assert(json_get(c, "restarting")->num == 1);
	ck_assert(json_get(c, "supervisors")->num == 2);
	ck_assert(json_get(c, "workers")->num == 6);
	json_free(v);

	/* A subtree, with the global --json before the command. */
	RUN(&s, &o, "--json", "status", "/web");
	ctltest_expect(&o, 0, NULL);
	v = ctltest_json(&o);
	ck_assert_uint_eq(json_count(json_get(v, "nodes")), 4);
	json_free(v);
	ctltest_out_free(&o);

	RUN(&s, &o, "status", "/nope");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, "status /nope: no such path");
	ck_assert_uint_eq(o.outlen, 0);
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

START_TEST(start_stop_restart_kill)
{
	struct ctltest_server	 s;
	struct ctltest_out	 o;
	struct json		*v;
	double			 inc;

	ctltest_start(&s, NULL);
	RUN(&s, &o, "start", "/web/frontend");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED,
	    "start /web/frontend: running");
	ctltest_out_free(&o);
	RUN(&s, &o, "start", "/db");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "start /db: restarting");
	ctltest_out_free(&o);
	/* A failed manual start: the real cause, and the child stays stopped. */
	RUN(&s, &o, "start", "/broken");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED,
	    "No such file or directory: /usr/bin/nonexistent");
	ctltest_out_free(&o);
	v = ctltest_status(&s);
	ck_assert_str_eq(json_get(node(v, "/broken"), "state")->str, "stopped");
	inc = json_get(node(v, "/web/frontend"), "incarnation")->num;
	json_free(v);
	/* stop is idempotent. */
	RUN(&s, &o, "stop", "/web/api/1");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	RUN(&s, &o, "stop", "/web/api/1");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	RUN(&s, &o, "start", "/web/api/1");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	/* restart returns with the new incarnation running. */
	RUN(&s, &o, "restart", "/web/frontend");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	v = ctltest_status(&s);
	ck_assert_str_eq(json_get(node(v, "/web/frontend"), "state")->str,
	    "running");
	ck_assert(json_get(node(v, "/web/frontend"), "incarnation")->num ==
	    inc + 1);
	json_free(v);
	RUN(&s, &o, "kill", "-s", "KILL", "/web/api/0");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	RUN(&s, &o, "kill", "-s", "SIGHUP", "/web/api/0");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	v = ctltest_status(&s);
	ck_assert_str_eq(json_get(node(v, "/web/api/0"), "last_exit")->str,
	    "killed by signal 1");
	ck_assert(json_get(node(v, "/web/api/0"), "restarts")->num == 2);
	json_free(v);
	RUN(&s, &o, "kill", "-s", "BOGUS", "/web/api/0");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, "unknown signal");
	ctltest_out_free(&o);
	RUN(&s, &o, "kill", "/nope");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, "no such path");
	ctltest_out_free(&o);
	RUN(&s, &o, "restart", "relative/path");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, "invalid path");
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

START_TEST(add_remove_reload)
{
	struct ctltest_server	 s;
	struct ctltest_out	 o;
	struct json		*v;
	char			 f[160];
	FILE			*fp;

	ctltest_start(&s, NULL);
	RUN(&s, &o, "add", "/web/api/0");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED,
	    "add /web/api/0: exists, running");
	ctltest_out_free(&o);
	RUN(&s, &o, "stop", "/web/api/1");
	ctltest_out_free(&o);
	RUN(&s, &o, "add", "/web/api/1");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "exists, not running");
	ctltest_out_free(&o);
	RUN(&s, &o, "add", "/web/api/5");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	v = ctltest_status(&s);
	ck_assert_ptr_nonnull(node(v, "/web/api/5"));
	json_free(v);
	RUN(&s, &o, "remove", "/web/api/5");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "running");
	ctltest_out_free(&o);
	RUN(&s, &o, "stop", "/web/api/5");
	ctltest_out_free(&o);
	RUN(&s, &o, "remove", "/web/api/5");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	RUN(&s, &o, "remove", "/web/api/5");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, "no such path");
	ctltest_out_free(&o);

	RUN(&s, &o, "reload");
	ctltest_expect(&o, 0, NULL);
	ck_assert_str_eq(o.out, "reloaded: 0 started, 0 stopped, 0 restarted\n");
	ctltest_out_free(&o);
	RUN(&s, &o, "--json", "reload");
	ctltest_expect(&o, 0, NULL);
	v = ctltest_json(&o);
	ck_assert_str_eq(json_get(v, "result")->str, "ok");
	json_free(v);
	ctltest_out_free(&o);
	/* A refused configuration: the error reaches the caller. */
	snprintf(f, sizeof(f), "%s/reload-error", s.dir);
	fp = fopen(f, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("actord.conf:3: unknown key \"frob\"\n", fp);
	fclose(fp);
	RUN(&s, &o, "reload");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED,
	    "reload: actord.conf:3: unknown key \"frob\"");
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

START_TEST(send_ask_log)
{
	struct ctltest_server	 s;
	struct ctltest_out	 o;
	struct json		*v;

	ctltest_start(&s, NULL);
	RUN(&s, &o, "send", "/web/frontend", "5", "hi");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	/* DATA from standard input. */
	ctltest_actorctl(&s, "abc", &o, "send", "/web/frontend", "0x10",
	    (char *)NULL);
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	RUN(&s, &o, "log", "/web/frontend");
	ctltest_expect(&o, 0, NULL);
	ck_assert_str_eq(o.out, "frontend: listening on :8080\n"
	    "web/frontend: got tag 5 (2 bytes)\n"
	    "web/frontend: got tag 16 (3 bytes)\n");
	ctltest_out_free(&o);
	RUN(&s, &o, "log", "--json", "/web/frontend");
	ctltest_expect(&o, 0, NULL);
	v = ctltest_json(&o);
	ck_assert_ptr_nonnull(strstr(json_get(v, "output")->str, "got tag 16"));
	json_free(v);
	ctltest_out_free(&o);
	RUN(&s, &o, "send", "/web/frontend", "x1", "hi");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, "TAG \"x1\"");
	ctltest_out_free(&o);
	RUN(&s, &o, "send", "/web/api", "1", "hi");
	ctltest_expect(&o, ACTORCTL_EXIT_NOENT, "no such path");
	ctltest_out_free(&o);
	RUN(&s, &o, "send", "/broken", "1", "hi");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "has no mailbox");
	ctltest_out_free(&o);

	RUN(&s, &o, "ask", "/web/frontend", "1", "hello");
	ctltest_expect(&o, 0, NULL);
	ck_assert_str_eq(o.out, "hello");
	ctltest_out_free(&o);
	ctltest_actorctl(&s, "from stdin", &o, "ask", "-t", "2000",
	    "/web/frontend", "1", (char *)NULL);
	ctltest_expect(&o, 0, NULL);
	ck_assert_str_eq(o.out, "from stdin");
	ctltest_out_free(&o);
	RUN(&s, &o, "ask", "--json", "/web/frontend", "1", "q\"x");
	ctltest_expect(&o, 0, NULL);
	v = ctltest_json(&o);
	ck_assert_str_eq(json_get(v, "answer")->str, "q\"x");
	json_free(v);
	ctltest_out_free(&o);
	RUN(&s, &o, "ask", "-t", "100", "/web/frontend", "2", "x");
	ctltest_expect(&o, ACTORCTL_EXIT_TIMEOUT, "no answer within 100 ms");
	ctltest_out_free(&o);
	RUN(&s, &o, "ask", "/db", "1", "x");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "ask /db: not running");
	ctltest_out_free(&o);
	RUN(&s, &o, "ask", "-t", "0", "/db", "1", "x");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, "-t");
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

START_TEST(deadletters_and_stats)
{
	struct ctltest_server	 s;
	struct ctltest_out	 o;
	struct json		*v;
	const struct json	*a, *g, *d;

	ctltest_start(&s, NULL);
	RUN(&s, &o, "deadletters");
	ctltest_expect(&o, 0, NULL);
	/* A table: a header, one aligned row each, a count. */
	ck_assert_msg(strncmp(o.out, "TIME  ", 6) == 0 &&
	    strstr(o.out, "  RECIPIENT   REASON         MESSAGE\n") != NULL,
	    "%s", o.out);
	ck_assert_msg(strstr(o.out, "  /web/api/1  mailbox full   tag=7 "
	    "size=12 from /web/frontend\n") != NULL, "%s", o.out);
	ck_assert_ptr_nonnull(strstr(o.out, "\n3 dead letters\n"));
	ctltest_out_free(&o);
	RUN(&s, &o, "deadletters", "--json");
	ctltest_expect(&o, 0, NULL);
	v = ctltest_json(&o);
	ck_assert_uint_eq(json_count(json_get(v, "deadletters")), 3);
	d = json_at(json_get(v, "deadletters"), 1);
	ck_assert_str_eq(json_get(d, "recipient")->str, "/gone");
	ck_assert_str_eq(json_get(d, "reason")->str, "no such actor");
	ck_assert_int_eq(json_get(d, "time")->type, JSON_STRING);
	ck_assert_int_eq(json_get(json_at(json_get(v, "deadletters"), 2),
	    "sender")->type, JSON_NULL);
	json_free(v);
	ctltest_out_free(&o);

	RUN(&s, &o, "stats", "--json");
	ctltest_expect(&o, 0, NULL);
	v = ctltest_json(&o);
	ck_assert_uint_eq(json_count(json_get(v, "actors")), 4);
	a = json_at(json_get(v, "actors"), 0);
	ck_assert_str_eq(json_get(a, "path")->str, "/web/frontend");
	ck_assert(json_get(a, "mailbox_depth")->num == 3);
	ck_assert(json_get(a, "wait_p99_us")->num == 2100);
	ck_assert(json_get(a, "handler_p50_us")->num == 40);
	ck_assert_ptr_nonnull(json_get(a, "restarts"));
	ck_assert_ptr_nonnull(json_get(a, "sent"));
	ck_assert_ptr_nonnull(json_get(a, "received"));
	ck_assert_ptr_nonnull(json_get(a, "dropped"));
	ck_assert_ptr_nonnull(json_get(a, "deadlettered"));
	ck_assert(json_get(a, "asks_failed")->num == 3);
	ck_assert_uint_eq(json_count(json_get(json_get(a, "mailbox_wait"),
	    "buckets")), 4);
	g = json_at(json_get(v, "shard_groups"), 0);
	ck_assert_str_eq(json_get(g, "name")->str, "/web/api");
	ck_assert(json_get(g, "hot_shard")->num == 2);
	ck_assert(json_get(g, "total")->num == 900);
	ck_assert(json_get(json_get(v, "control"), "requests")->num >= 1);
	json_free(v);
	ctltest_out_free(&o);
	RUN(&s, &o, "stats", "/web/frontend", "--json");
	ctltest_expect(&o, 0, NULL);
	v = ctltest_json(&o);
	ck_assert_uint_eq(json_count(json_get(v, "actors")), 1);
	json_free(v);
	ctltest_out_free(&o);
	RUN(&s, &o, "stats");
	ctltest_expect(&o, 0, NULL);
	ck_assert_ptr_nonnull(strstr(o.out, "hot shard: 2 (67% of the messages)"));
	ck_assert_ptr_nonnull(strstr(o.out, "WAIT p99"));
	ctltest_out_free(&o);
	RUN(&s, &o, "stats", "--prometheus");
	ctltest_expect(&o, 0, NULL);
	ck_assert_ptr_nonnull(strstr(o.out,
	    "# HELP actord_mailbox_wait_seconds "));
	ck_assert_ptr_nonnull(strstr(o.out,
	    "# TYPE actord_mailbox_wait_seconds histogram\n"));
	ck_assert_ptr_nonnull(strstr(o.out,
	    "actord_mailbox_wait_seconds_bucket{path=\"/web/frontend\","
	    "le=\"+Inf\"} 29\n"));
	ck_assert_ptr_nonnull(strstr(o.out,
	    "actord_mailbox_depth{path=\"/web/frontend\"} 3\n"));
	ctltest_out_free(&o);
	RUN(&s, &o, "stats", "--prometheus", "--json");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, "exclude");
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

/* --- follows ------------------------------------------------------------- */

struct bg {
	pid_t	 pid;
	int	 fd;
	char	 buf[8192];
	size_t	 len;
};

static void
bg_start(struct bg *b, const struct ctltest_server *s, const char *a1,
    const char *a2, const char *a3)
{
	char	 prog[512];
	int	 p[2];

	memset(b, 0, sizeof(*b));
	snprintf(prog, sizeof(prog), "%s/actorctl", ctltest_build());
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	b->pid = fork();
	ck_assert_int_ne(b->pid, -1);
	if (b->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], 1);
		execl(prog, prog, "-S", s->sock, a1, a2, a3, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	b->fd = p[0];
}

/* Read until text appears in the output. */
static void
bg_wait_for(struct bg *b, const char *text)
{
	struct pollfd	 pfd;
	ssize_t		 n;

	while (strstr(b->buf, text) == NULL) {
		pfd.fd = b->fd;
		pfd.events = POLLIN;
		ck_assert_msg(poll(&pfd, 1, 20000) == 1, "waiting for \"%s\", "
		    "have: %s", text, b->buf);
		n = read(b->fd, b->buf + b->len, sizeof(b->buf) - 1 - b->len);
		ck_assert_msg(n > 0, "follower ended; have: %s", b->buf);
		b->len += n;
		b->buf[b->len] = '\0';
	}
}

static void
bg_stop(struct bg *b)
{
	int st;

	kill(b->pid, SIGTERM);
	ck_assert_int_eq(waitpid(b->pid, &st, 0), b->pid);
	close(b->fd);
}

START_TEST(follows)
{
	struct ctltest_server	 s;
	struct ctltest_out	 o;
	struct bg		 dl, lg;

	ctltest_start(&s, NULL);
	bg_start(&dl, &s, "deadletters", "-f", NULL);
	bg_wait_for(&dl, "/db  actor down");
	bg_start(&lg, &s, "log", "/web/frontend", "-f");
	bg_wait_for(&lg, "listening on :8080\n");
	/* /batch is stopped: a message to it becomes a dead letter. */
	RUN(&s, &o, "send", "/batch", "42", "late");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	bg_wait_for(&dl, "/batch  actor down  tag=42 size=4\n");
	RUN(&s, &o, "send", "/web/frontend", "43", "x");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	bg_wait_for(&lg, "web/frontend: got tag 43 (1 bytes)\n");
	RUN(&s, &o, "send", "/web/frontend", "44", "x");
	ctltest_out_free(&o);
	bg_wait_for(&lg, "got tag 44");
	/* Each line once: the cursor moved on. */
	ck_assert_ptr_null(strstr(strstr(lg.buf, "got tag 43") + 1,
	    "got tag 43"));
	bg_stop(&dl);
	bg_stop(&lg);
	/* The server shrugs off followers that went away mid-wait. */
	RUN(&s, &o, "status");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

/* --- errors, usage, shutdown --------------------------------------------- */

START_TEST(usage_and_errors)
{
	struct ctltest_server	 s;
	struct ctltest_out	 o;
	char			 src[512], prog[512], top[256], *slash;
	pid_t			 pid;
	int			 st;

	ctltest_start(&s, NULL);
	RUN(&s, &o, "frobnicate");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE,
	    "unknown command \"frobnicate\"; "
	    "valid commands: status start stop restart kill add remove reload "
	    "send ask deadletters stats top log shutdown nodes keygen help");
	ctltest_out_free(&o);
	RUN(&s, &o, "status", "/a", "/b");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, "usage: actorctl");
	ctltest_out_free(&o);
	RUN(&s, &o, "start");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, "start path");
	ctltest_out_free(&o);
	RUN(&s, &o, "status", "--bogus");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, "unknown option");
	ctltest_out_free(&o);
	RUN(&s, &o, "help");
	ctltest_expect(&o, 0, NULL);
	ck_assert_ptr_nonnull(strstr(o.out, "deadletters"));
	ctltest_out_free(&o);

	/*
	 * Another uid: the socket's mode says no; exit 4.  nobody runs a
	 * copy of actorctl it can reach, wherever the checkout is: in the
	 * server's scratch directory, above its runtime directory.
	 */
	snprintf(src, sizeof(src), "%s/actorctl", ctltest_build());
	snprintf(top, sizeof(top), "%s", s.dir);
	ck_assert_ptr_nonnull(slash = strrchr(top, '/'));
	*slash = '\0';
	tcheck_copy_public(src, top, prog, sizeof(prog));
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		if (setgroups(0, NULL) == -1 || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(99);
		execl(prog, prog, "-S", s.sock, "status", (char *)NULL);
		_exit(98);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	unlink(prog);		/* ctltest_stop removes the directory */
	ck_assert_int_eq(WEXITSTATUS(st), ACTORCTL_EXIT_PERM);

	/* shutdown, then actord is not running: exit 5. */
	RUN(&s, &o, "shutdown");
	ctltest_expect(&o, 0, NULL);
	ck_assert_str_eq(o.out, "shutting down\n");
	ctltest_out_free(&o);
	ck_assert_int_eq(waitpid(s.pid, &st, 0), s.pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	s.pid = 0;
	RUN(&s, &o, "status");
	ctltest_expect(&o, ACTORCTL_EXIT_NOTRUNNING, "actord not running");
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

/*
 * Something that is not actord answers on the socket: a protocol
 * mismatch, exit 7 (actorctl(8), EXIT STATUS).
 */
START_TEST(garbage_answer_exits_7)
{
	static const char junk[] = "HTTP/1.0 400 Bad Request\r\n\r\n";
	struct ctltest_server s;
	struct ctltest_out o;
	struct sockaddr_un sun;
	char buf[256];
	pid_t pid;
	int lfd, cfd;

	memset(&s, 0, sizeof(s));
	snprintf(s.dir, sizeof(s.dir), "/tmp/ctl-junk-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(s.dir));
	snprintf(s.sock, sizeof(s.sock), "%s/control.sock", s.dir);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	ck_assert_uint_lt(strlen(s.sock), sizeof(sun.sun_path));
	memcpy(sun.sun_path, s.sock, strlen(s.sock));
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ne(lfd, -1);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if ((cfd = accept(lfd, NULL, NULL)) == -1)
			_exit(1);
		(void)!read(cfd, buf, sizeof(buf));
		(void)!write(cfd, junk, sizeof(junk) - 1);
		close(cfd);
		_exit(0);
	}
	close(lfd);
	RUN(&s, &o, "status");
	ctltest_expect(&o, ACTORCTL_EXIT_PROTO, "malformed answer");
	ctltest_out_free(&o);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(s.sock);
	rmdir(s.dir);
}
END_TEST

/* --- top ----------------------------------------------------------------- */

/*
 * Run top on a pseudo-terminal for two screens (they come a second
 * apart), then either type q or send SIGINT; check the exit status and
 * that the terminal's attributes are what they were.
 */
static void
run_top(bool by_signal)
{
	struct ctltest_server	 s;
	struct ctltest_top	 t;
	struct termios		 during;

	ctltest_start(&s, NULL);
	ctltest_top_start(&t, s.sock);
	ctltest_top_until(&t, "specs:", 2, 20000);
	ck_assert_ptr_nonnull(memmem(t.buf, t.len, "/web/api/1", 10));
	ck_assert_ptr_nonnull(memmem(t.buf, t.len, "RESTARTS /MIN", 13));
	/* While it runs, the terminal is not canonical and does not echo. */
	ck_assert_int_eq(tcgetattr(t.slave, &during), 0);
	ck_assert_uint_eq(during.c_lflag & (ICANON | ECHO), 0);
	if (by_signal)
		kill(t.pid, SIGINT);
	else
		ck_assert_int_eq(write(t.master, "q", 1), 1);
	ck_assert_int_eq(ctltest_top_end(&t, 20000),
	    by_signal ? 128 + SIGINT : 0);
	ctltest_stop(&s);
}

START_TEST(top_quits_on_q)
{
	run_top(false);
}
END_TEST

START_TEST(top_restores_on_sigint)
{
	run_top(true);
}
END_TEST

START_TEST(top_without_terminal)
{
	struct ctltest_server	 s;
	struct ctltest_out	 o;

	ctltest_start(&s, NULL);
	RUN(&s, &o, "top");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, "terminal");
	ctltest_out_free(&o);
	RUN(&s, &o, "top", "-n", "1");
	ctltest_expect(&o, 0, NULL);
	ck_assert_ptr_nonnull(strstr(o.out, "/web/frontend"));
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

/*
 * status at a terminal: every line fits its width, the last column cut
 * with an ellipsis; -l, or a pipe, prints every column in full.
 */
START_TEST(status_fits_the_terminal)
{
	static const char *const st[] = { "status", NULL };
	static const char *const st_l[] = { "status", "-l", NULL };
	struct ctltest_server	 s;
	struct ctltest_top	 t;
	struct ctltest_out	 o;

	ctltest_start(&s, NULL);
	ctltest_pty_start(&t, s.sock, 50, st);
	ck_assert_int_eq(ctltest_pty_end(&t, 20000), 0);
	ck_assert_msg(ctltest_widest_line(t.buf, t.len) <= 50, "%s", t.buf);
	ck_assert_msg(strstr(t.buf, "\u2026") != NULL, "nothing cut: %s",
	    t.buf);
	ck_assert_ptr_null(strstr(t.buf, "SUPERVISION"));
	free(t.buf);
	ctltest_pty_start(&t, s.sock, 50, st_l);
	ck_assert_int_eq(ctltest_pty_end(&t, 20000), 0);
	ck_assert_msg(strstr(t.buf, "SUPERVISION") != NULL &&
	    strstr(t.buf, "rest_for_one 1/5 in 10s") != NULL &&
	    strstr(t.buf, "\u2026") == NULL, "%s", t.buf);
	ck_assert_uint_gt(ctltest_widest_line(t.buf, t.len), 50);
	free(t.buf);
	RUN(&s, &o, "status");
	ctltest_expect(&o, 0, NULL);
	ck_assert_ptr_nonnull(strstr(o.out, "SUPERVISION"));
	ck_assert_ptr_null(strstr(o.out, "\u2026"));
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

/* top at a terminal: header and rows fit its width; it sorts on s. */
START_TEST(top_fits_and_sorts)
{
	static const char *const top[] = { "top", NULL };
	struct ctltest_server	 s;
	struct ctltest_top	 t;

	ctltest_start(&s, NULL);
	ctltest_pty_start(&t, s.sock, 60, top);
	ctltest_top_until(&t, "specs:", 1, 20000);
	ck_assert_int_eq(write(t.master, "s", 1), 1);
	ctltest_top_until(&t, "sort: restarts", 1, 20000);
	ck_assert_int_eq(write(t.master, "q", 1), 1);
	ck_assert_int_eq(ctltest_top_end(&t, 20000), 0);
	ctltest_stop(&s);
	/* (ctltest_top_end freed the screens: run it again to measure.) */
	ctltest_start(&s, NULL);
	ctltest_pty_start(&t, s.sock, 60, top);
	ctltest_top_until(&t, "specs:", 2, 20000);
	ck_assert_msg(ctltest_widest_line(t.buf, t.len) <= 60, "%.*s",
	    (int)t.len, t.buf);
	ck_assert_ptr_nonnull(memmem(t.buf, t.len, "escalations:", 12));
	ck_assert_int_eq(write(t.master, "q", 1), 1);
	ck_assert_int_eq(ctltest_top_end(&t, 20000), 0);
	ctltest_stop(&s);
}
END_TEST

/*
 * A supervisor that gave up before top was opened: the escalations line
 * names it as earlier (top did not see it happen), not "none".
 */
START_TEST(top_shows_an_earlier_give_up)
{
	static const char *const gave_up[] = { "-G", NULL };
	static const char *const top[] = { "top", NULL };
	static const char want[] = "escalations: none seen; before top: /web "
	    "gave up: /web/frontend exited 1";
	struct ctltest_server	 s;
	struct ctltest_top	 t;

	ctltest_start(&s, gave_up);
	ctltest_pty_start(&t, s.sock, 200, top);
	/*
	 * The line itself, not the header: a loaded machine's pty hands the
	 * first screen over in pieces, and the header comes first.
	 */
	ctltest_top_until(&t, want, 1, 20000);
	ck_assert_int_eq(write(t.master, "q", 1), 1);
	ck_assert_int_eq(ctltest_top_end(&t, 20000), 0);
	ctltest_stop(&s);
}
END_TEST

/* top says why it stopped when actord went away, after the screen is back. */
START_TEST(top_says_when_actord_goes_away)
{
	struct ctltest_server	 s;
	struct ctltest_top	 t;
	const char		*left, *msg;

	ctltest_start(&s, NULL);
	ctltest_top_start(&t, s.sock);
	ctltest_top_until(&t, "specs:", 1, 20000);
	ctltest_stop(&s);
	ctltest_top_until(&t, "actorctl: top: stopped: ", 1, 20000);
	left = memmem(t.buf, t.len, "\033[?1049l", 8);
	msg = memmem(t.buf, t.len, "actorctl: top: stopped: ", 24);
	ck_assert_msg(left != NULL && msg > left, "the message is not after "
	    "the screen was given back");
	ck_assert_int_ne(ctltest_top_end(&t, 20000), 0);
}
END_TEST

/*
 * The restart rate is a moving window: a worker restarting every 2.5 s,
 * sampled every second, shows about 24 a minute in every frame once a
 * minute is sampled (a rate from one frame to the next would jump from 0
 * to 60).
 */
START_TEST(top_rate_is_a_moving_window)
{
	uint64_t	 t[200];
	uint32_t	 r[200];
	double		 rate;
	size_t		 i;

	for (i = 0; i < 200; i++) {
		t[i] = i * 1000;
		r[i] = (uint32_t)(i * 1000 / 2500);
	}
	ck_assert(actorctl_restart_rate(t, r, 1, 60000) < 0);	/* n/a */
	for (i = 61; i <= 200; i++) {
		rate = actorctl_restart_rate(t, r, i, 60000);
		ck_assert_msg(rate >= 23 && rate <= 25, "frame %zu: %.1f a "
		    "minute", i, rate);
	}
	/* A counter that went down (the node was replaced) starts over. */
	r[150] = 0;
	for (i = 151; i < 200; i++)
		r[i] = r[i - 1] + (i % 5 == 0);
	rate = actorctl_restart_rate(t, r, 200, 60000);
	ck_assert_msg(rate >= 11 && rate <= 13, "%.1f", rate);
}
END_TEST

/*
 * Every command takes -h and --help; errors name the program.  The
 * commands are those `actorctl help` lists, so a new one is covered too.
 */
START_TEST(help_for_every_command)
{
	struct ctltest_server	 s;
	struct ctltest_out	 o, h;
	char			 want[64], name[32];
	const char		*p;
	int			 n = 0;

	ctltest_start(&s, NULL);
	RUN(&s, &h, "help");
	ctltest_expect(&h, 0, NULL);
	ck_assert_msg(ctltest_widest_line(h.out, strlen(h.out)) <= 80, "%s",
	    h.out);
	ck_assert_ptr_nonnull(p = strstr(h.out, "commands:\n"));
	for (p += 10; sscanf(p, "    %31s", name) == 1 && strncmp(p, "    ", 4)
	    == 0; p = strchr(p, '\n') + 1, n++) {
		RUN(&s, &o, name, "--help");
		ctltest_expect(&o, 0, NULL);
		snprintf(want, sizeof(want), "] %s", name);
		ck_assert_msg(strncmp(o.out, "usage: actorctl", 15) == 0 &&
		    strstr(o.out, want) != NULL &&
		    strstr(o.out, "-h, --help") != NULL, "%s --help: %s",
		    name, o.out);
		ctltest_out_free(&o);
		RUN(&s, &o, name, "-h");
		ctltest_expect(&o, 0, NULL);
		ck_assert_msg(strstr(o.out, want) != NULL, "%s -h", name);
		ctltest_out_free(&o);
	}
	ck_assert_int_ge(n, 16);
	ctltest_out_free(&h);
	RUN(&s, &o, "--help");
	ctltest_expect(&o, 0, NULL);
	ck_assert_ptr_nonnull(strstr(o.out, "usage: actorctl"));
	ctltest_out_free(&o);
	RUN(&s, &o, "help", "kill");
	ctltest_expect(&o, 0, NULL);
	ck_assert_ptr_nonnull(strstr(o.out, "--tree"));
	ctltest_out_free(&o);
	RUN(&s, &o, "-x", "status");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, NULL);
	ck_assert_msg(strncmp(o.err, "actorctl: unknown option -x\n", 28) == 0,
	    "%s", o.err);
	ctltest_out_free(&o);
	RUN(&s, &o, "top", "--bogus");
	ctltest_expect(&o, ACTORCTL_EXIT_USAGE, NULL);
	ck_assert_msg(strncmp(o.err, "actorctl: top: unknown option --bogus",
	    37) == 0, "%s", o.err);
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

/* kill: a supervisor's path only with --tree; the answer counts. */
START_TEST(kill_a_supervisor_needs_tree)
{
	struct ctltest_server	 s;
	struct ctltest_out	 o;

	ctltest_start(&s, NULL);
	RUN(&s, &o, "kill", "/web");
	ctltest_expect(&o, ACTORCTL_EXIT_FAILED, "/web is a supervisor: give "
	    "--tree");
	ctltest_out_free(&o);
	RUN(&s, &o, "kill", "--tree", "-s", "CONT", "/web/api/0");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

/* ask --json: binary in base64 with its size; a failure is JSON too. */
START_TEST(ask_json_binary_and_failure)
{
	struct ctltest_server	 s;
	struct ctltest_out	 o;
	struct json		*v;

	ctltest_start(&s, NULL);
	ctltest_actorctl(&s, "\x02\x01\xff", &o, "--json", "ask",
	    "/web/frontend", "1", (char *)NULL);
	ctltest_expect(&o, 0, NULL);
	v = ctltest_json(&o);
	ck_assert_str_eq(json_get(v, "result")->str, "ok");
	ck_assert(json_get(v, "size")->num == 3);
	ck_assert_str_eq(json_get(v, "answer_base64")->str, "AgH/");
	ck_assert_int_eq(json_get(v, "answer")->type, JSON_NULL);
	json_free(v);
	ctltest_out_free(&o);
	RUN(&s, &o, "--json", "ask", "/web/frontend", "1", "caf\xc3\xa9");
	ctltest_expect(&o, 0, NULL);
	/* UTF-8 text stays as it is (the test parser reads bytes). */
	ck_assert_msg(strstr(o.out, "\"answer\":\"caf\xc3\xa9\"") != NULL,
	    "%s", o.out);
	v = ctltest_json(&o);
	ck_assert_str_eq(json_get(v, "answer_base64")->str, "Y2Fmw6k=");
	json_free(v);
	ctltest_out_free(&o);
	RUN(&s, &o, "--json", "ask", "-t", "100", "/web/frontend", "2", "x");
	ctltest_expect(&o, ACTORCTL_EXIT_TIMEOUT, "no answer within 100 ms");
	v = ctltest_json(&o);
	ck_assert_str_eq(json_get(v, "result")->str, "error");
	ck_assert_ptr_nonnull(strstr(json_get(v, "error")->str,
	    "no answer within 100 ms"));
	ck_assert(json_get(v, "exit_status")->num == ACTORCTL_EXIT_TIMEOUT);
	json_free(v);
	ctltest_out_free(&o);
	ctltest_stop(&s);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("ctl_actorctl");
	TCase	*tc = tcase_create("actorctl");

	tcase_set_timeout(tc, 40);
	tcase_add_test(tc, status_human_and_json);
	tcase_add_test(tc, start_stop_restart_kill);
	tcase_add_test(tc, add_remove_reload);
	tcase_add_test(tc, send_ask_log);
	tcase_add_test(tc, deadletters_and_stats);
	tcase_add_test(tc, follows);
	tcase_add_test(tc, usage_and_errors);
	tcase_add_test(tc, garbage_answer_exits_7);
	tcase_add_test(tc, top_quits_on_q);
	tcase_add_test(tc, top_restores_on_sigint);
	tcase_add_test(tc, top_without_terminal);
	tcase_add_test(tc, status_fits_the_terminal);
	tcase_add_test(tc, top_fits_and_sorts);
	tcase_add_test(tc, top_says_when_actord_goes_away);
	tcase_add_test(tc, top_shows_an_earlier_give_up);
	tcase_add_test(tc, top_rate_is_a_moving_window);
	tcase_add_test(tc, help_for_every_command);
	tcase_add_test(tc, kill_a_supervisor_needs_tree);
	tcase_add_test(tc, ask_json_binary_and_failure);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
