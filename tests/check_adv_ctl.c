/*
 * check_adv_ctl.c: an adversary's pass over actord's control socket, with
 * the real actord and real workers.  A client that hangs up at the worst
 * moment (right after an ask, a restart of a child slow to stop, a reload,
 * or a quarter of the way through reading a large status), that sends
 * garbage, lengths past the limit, frames cut short, or many requests on
 * one connection before reading any answer; all of it while a child is
 * in a restart storm and the asked actor is SIGKILLed.  What must hold:
 *
 *   - actord stays up and answers a well-behaved client every time;
 *   - it holds no descriptor for a client that is gone (its count of open
 *     descriptors comes back to what it was) and no pending ask or
 *     operation keeps one;
 *   - at SIGTERM it stops in order within its bound, exits 0, and no
 *     worker it ran is left (each known by pid from status).
 *
 * Every wait is bounded; actord is killed by pid at teardown.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/ctlproto.h"
#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT		10000	/* ms: a bound, never an expectation */
#define ROUNDS		300
#define INSTANCES	150	/* a status answer of some 60 KiB */

static struct ts_daemon	 d;
static struct ctltest_server srv;	/* only .sock is used */
static const char	*sock = srv.sock;
static uint64_t		 rnd_state;

static uint64_t
rnd(void)
{
	return tcheck_rnd(&rnd_state);
}

/* actord's open descriptors, from /proc. */
static int
fds_of(pid_t pid)
{
	char	 path[64];
	DIR	*dir;
	int	 n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while (readdir(dir) != NULL)
		n++;
	closedir(dir);
	return n;
}

/* The encoded request q, sent on a new connection; the fd, or -1. */
static int
send_req(const struct ctl_request *q)
{
	struct ctl_buf	 b;
	int		 fd;

	if ((fd = ctltest_connect(sock)) == -1)
		return -1;
	ctl_buf_init(&b, CTL_MAX_REQUEST);
	ctl_request_encode(&b, q);
	(void)!send(fd, b.data, b.len, MSG_NOSIGNAL);
	ctl_buf_free(&b);
	return fd;
}

static struct ctl_request
req(uint16_t cmd, const char *path)
{
	struct ctl_request q;

	memset(&q, 0, sizeof(q));
	q.cmd = cmd;
	if (path != NULL) {
		q.present |= 1u << CTL_F_PATH;
		snprintf(q.path, sizeof(q.path), "%s", path);
	}
	return q;
}

static struct ctl_request
ask(uint32_t tag, uint32_t timeout_ms)
{
	static const uint8_t data[] = "x";
	struct ctl_request q = req(CTL_CMD_ASK, "/e");

	q.present |= 1u << CTL_F_TAG | 1u << CTL_F_DATA | 1u << CTL_F_TIMEOUT;
	q.tag = tag;
	q.data = data;
	q.datalen = 1;
	q.timeout_ms = timeout_ms;
	return q;
}

/* Read up to n bytes within ms (an answer begun), then hang up. */
static void
read_some_close(int fd, size_t n, int ms)
{
	char		 buf[4096];
	struct pollfd	 p = { fd, POLLIN, 0 };
	ssize_t		 r;

	while (n > 0 && poll(&p, 1, ms) == 1) {
		r = recv(fd, buf, n < sizeof(buf) ? n : sizeof(buf), 0);
		if (r <= 0)
			break;
		n -= (size_t)r;
	}
	close(fd);
}

/* Garbage of one kind on a new connection, then a hang-up. */
static void
garbage(unsigned kind)
{
	uint8_t	 b[256];
	size_t	 i, len;
	int	 fd;

	if ((fd = ctltest_connect(sock)) == -1)
		return;
	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)rnd();
	switch (kind) {
	case 0:		/* a length past the limit */
		b[0] = 0x7f;
		len = 4;
		break;
	case 1:		/* a length of 0, then bytes */
		b[0] = b[1] = b[2] = b[3] = 0;
		len = 16;
		break;
	case 2:		/* a frame cut short: its length says 200 */
		b[0] = 0;
		b[1] = 0;
		b[2] = 0;
		b[3] = 200;
		len = 40;
		break;
	default:	/* a whole frame of noise */
		b[0] = 0;
		b[1] = 0;
		b[2] = 0;
		b[3] = 64;
		len = 64;
		break;
	}
	(void)!send(fd, b, len, MSG_NOSIGNAL);
	read_some_close(fd, rnd() % 2 ? 4 : 0, 20);
}

/* Many requests on one connection, sent before any answer is read. */
static void
pipelined(void)
{
	struct ctl_request q[3];
	struct ctl_buf	 b;
	int		 fd, i;

	q[0] = req(CTL_CMD_STATUS, NULL);
	q[1] = ask(1, 1000);
	q[2] = req(CTL_CMD_RESTART, "/storm");
	if ((fd = ctltest_connect(sock)) == -1)
		return;
	ctl_buf_init(&b, CTL_MAX_REQUEST);
	for (i = 0; i < 3; i++)
		ctl_request_encode(&b, &q[i]);
	(void)!send(fd, b.data, b.len, MSG_NOSIGNAL);
	ctl_buf_free(&b);
	read_some_close(fd, 64, 50);
}

/* One round of the attack. */
static void
attack(void)
{
	struct ctl_request q;
	int fd = -1;
	pid_t pid;

	switch (rnd() % 10) {
	case 0:		/* an ask nobody answers */
		q = ask(2, 5000);
		fd = send_req(&q);
		break;
	case 1:		/* an ask answered in 400 ms */
		q = ask(5, 2000);
		fd = send_req(&q);
		break;
	case 2:		/* a restart of a child slow to stop */
		q = req(CTL_CMD_RESTART, "/slow");
		fd = send_req(&q);
		break;
	case 3:		/* a quarter of a large status */
		q = req(CTL_CMD_STATUS, NULL);
		if ((fd = send_req(&q)) != -1)
			read_some_close(fd, 16384, 200);
		return;
	case 4:
		q = req(CTL_CMD_RELOAD, NULL);
		fd = send_req(&q);
		break;
	case 5:
		q = req(CTL_CMD_DEADLETTERS, NULL);
		q.present |= 1u << CTL_F_WAIT;
		fd = send_req(&q);
		break;
	case 6:		/* the asked actor dies */
		if ((pid = (pid_t)ctltest_node_num(&srv, "/e", "pid")) > 0)
			(void)kill(pid, SIGKILL);
		return;
	case 7:
		pipelined();
		return;
	default:
		garbage((unsigned)(rnd() % 4));
		return;
	}
	if (fd != -1)
		read_some_close(fd, 0, 0);	/* hang up at once */
}

/* Every worker's pid, as status says (the group's instances included). */
static size_t
worker_pids(pid_t *pids, size_t max)
{
	char	 path[32];
	size_t	 n = 0, i;
	pid_t	 pid;

	if ((pid = (pid_t)ctltest_node_num(&srv, "/e", "pid")) > 0)
		pids[n++] = pid;
	if ((pid = (pid_t)ctltest_node_num(&srv, "/slow", "pid")) > 0)
		pids[n++] = pid;
	for (i = 0; i < INSTANCES && n < max; i++) {
		snprintf(path, sizeof(path), "/g/%zu", i);
		if ((pid = (pid_t)ctltest_node_num(&srv, path, "pid")) > 0)
			pids[n++] = pid;
	}
	return n;
}

/* A well-behaved client gets its answer. */
static void
status_answers(void)
{
	struct ctl_request q = req(CTL_CMD_STATUS, "/e");
	struct ctl_response r;

	ck_assert_msg(ctltest_request(sock, &q, &r) == 0 && r.status == CTL_OK,
	    "status failed: %s", ts_daemon_log(&d));
	ctl_response_free(&r);
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
 * The attack, ROUNDS rounds from a seed ($ADV_CTL_SEED replays one),
 * with the daemon and its tree checked after.
 */
START_TEST(client_at_worst_moment)
{
	struct ctl_counters c;
	pid_t	 pids[INSTANCES + 8];
	size_t	 n, i;
	int	 st, fds0, fds, r;
	int64_t	 until;
	unsigned long seed;
	char	*log;

	seed = getenv("ADV_CTL_SEED") != NULL ?
	    strtoul(getenv("ADV_CTL_SEED"), NULL, 10) : (unsigned long)getpid();
	fprintf(stderr, "client_at_worst_moment: seed %lu\n", seed);
	rnd_state = 0x9e3779b97f4a7c15ULL * (seed + 1);
	ts_daemon_conf(&d,
	    "shutdown_timeout = 5000;\n"
	    "supervisor = {\n"
	    "  intensity = 10000; period = 1; backoff_min = 1;\n"
	    "  backoff_max = 5;\n"
	    "  children = (\n"
	    "    { name = \"e\"; exec = [\"%s\"]; ready = \"actor\"; },\n"
	    "    { name = \"slow\"; exec = [\"%s\", \"ignterm\"];\n"
	    "      shutdown = 300; },\n"
	    "    { name = \"storm\"; exec = [\"%s\", \"crash\", \"5\"]; },\n"
	    "    { name = \"g\"; exec = [\"%s\", \"run\"]; instances = %d; }\n"
	    "  );\n"
	    "};\n", ts_progs("actor_echo"), ts_progs("tworker"),
	    ts_progs("tworker"), ts_progs("tworker"), INSTANCES);
	ts_daemon_up(&d, WAIT, srv.sock, sizeof(srv.sock));
	status_answers();
	fds0 = fds_of(d.pid);
	for (i = 0; i < ROUNDS; i++) {
		attack();
		ck_assert_msg(waitpid(d.pid, &st, WNOHANG) == 0, "actord died "
		    "(seed %lu, round %zu, status %#x): %s", seed, i, st,
		    ts_daemon_log(&d));
		if (i % 50 == 0)
			status_answers();
	}
	/*
	 * Every hung-up client's connection is closed: within the longest
	 * of what it waited for (a 5 s ask), none is left but the one that
	 * asks (a restart of /storm's may hold one descriptor more).
	 */
	until = tcheck_mono_ms() + WAIT;
	for (;;) {
		ck_assert_int_eq(ctltest_counters(sock, &c), 0);
		fds = fds_of(d.pid);
		if ((c.clients <= 1 && fds <= fds0 + 1) || tcheck_mono_ms() >= until)
			break;
		ts_sleep_ms(50);
	}
	fprintf(stderr, "client_at_worst_moment: %llu accepted, %llu "
	    "requests, %llu malformed, %llu truncated, %llu oversized\n",
	    (unsigned long long)c.accepted, (unsigned long long)c.requests,
	    (unsigned long long)c.malformed, (unsigned long long)c.truncated,
	    (unsigned long long)c.oversized);
	ck_assert_msg(c.clients <= 1 && fds <= fds0 + 1, "seed %lu: actord "
	    "keeps %llu clients and %d descriptors (%d before the attack)",
	    seed, (unsigned long long)c.clients, fds, fds0);
	status_answers();
	n = worker_pids(pids, sizeof(pids) / sizeof(pids[0]));
	ck_assert_uint_ge(n, INSTANCES);
	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	r = ts_daemon_wait(&d, 3 * WAIT);
	log = ts_daemon_log(&d);
	ck_assert_msg(r == 0, "seed %lu: actord exited %d: %s", seed, r, log);
	ck_assert_msg(strstr(log, "ERROR: AddressSanitizer") == NULL &&
	    strstr(log, "runtime error") == NULL, "%s", log);
	for (i = 0; i < n; i++)
		ck_assert_msg(!ts_alive(pids[i]), "seed %lu: worker %d left "
		    "behind", seed, (int)pids[i]);
}
END_TEST

static Suite *
adv_ctl_suite(void)
{
	Suite	*s = suite_create("adv_ctl");
	TCase	*tc = tcase_create("client");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, client_at_worst_moment);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(adv_ctl_suite());
}
