/*
 * bench_ctl.c: what actorctl costs against a real actord with 100
 * children (plus the one restarted), side by side with s6-svc, sv and
 * supervisorctl when they are installed.
 *
 *   status		`actorctl status` run as a process, command to exit,
 *			p50 and p99; and the bare protocol round trip
 *			(connect, request, answer) from this process
 *   restart		`actorctl restart /target`: from the command to its
 *			return, which is when the new incarnation runs (actord
 *			answers on the readiness event, no polling)
 *   others		s6-svc -r, sv restart, supervisorctl restart: only
 *			looked up in PATH; none is set up or run here, and
 *			the output says whether they are installed
 *
 * Writes its figures as JSON to $BENCH_JSON, and a table to stdout.  Needs
 * $BUILD/actord, $BUILD/actorctl and $BUILD/tests/progs/tworker.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/ctlproto.h"

#define CHILDREN	100
#define ROUNDS		200
#define RESTARTS	100

struct bench {
	char		 build[512];
	char		 actord[600];
	char		 actorctl[600];
	char		 tworker[600];
	char		 dir[64];
	char		 sock[100];	/* fits sun_path */
	pid_t		 pid;
	FILE		*json;
	int		 first;
};

static uint64_t	 now_us(void);
static int	 cmp_u64(const void *, const void *);
static double	 pct(uint64_t *, size_t, double);
static void	 emit(struct bench *, const char *, double);
static void	 emit_null(struct bench *, const char *);
static int	 run(struct bench *, const char *, const char *, bool);
static void	 start_actord(struct bench *);
static void	 stop_actord(struct bench *);
static int	 roundtrip(struct bench *, size_t *);
static bool	 in_path(const char *);

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The p-th quantile of v (us), in ms. */
static double
pct(uint64_t *v, size_t n, double p)
{
	size_t i;

	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i] / 1000.0;
}

static void
emit(struct bench *b, const char *key, double v)
{
	fprintf(b->json, "%s\n  \"%s\": %.3f", b->first ? "" : ",", key, v);
	b->first = 0;
}

static void
emit_null(struct bench *b, const char *key)
{
	fprintf(b->json, "%s\n  \"%s\": null", b->first ? "" : ",", key);
	b->first = 0;
}

/* actorctl -S sock CMD [PATH], output to /dev/null; its exit status. */
static int
run(struct bench *b, const char *cmd, const char *path, bool quiet)
{
	pid_t pid;
	int st, fd;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (quiet && (fd = open("/dev/null", O_WRONLY)) != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(b->actorctl, b->actorctl, "-S", b->sock, cmd, path,
		    (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
start_actord(struct bench *b)
{
	char conf[128], log[128];
	FILE *f;
	size_t running;
	int i, fd;

	snprintf(b->dir, sizeof(b->dir), "/tmp/bench-ctl-XXXXXX");
	if (mkdtemp(b->dir) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(conf, sizeof(conf), "%s/actord.conf", b->dir);
	snprintf(log, sizeof(log), "%s/actord.log", b->dir);
	snprintf(b->sock, sizeof(b->sock), "%s/run/control.sock", b->dir);
	if ((f = fopen(conf, "w")) == NULL) {
		perror(conf);
		exit(1);
	}
	fprintf(f, "runtime_dir = \"%s/run\";\nsupervisor = {\n"
	    "  intensity = 1000; period = 10; backoff_min = 0;\n"
	    "  children = (\n"
	    "    { name = \"target\"; exec = [\"%s\", \"run\"]; }", b->dir,
	    b->tworker);
	for (i = 0; i < CHILDREN; i++)
		fprintf(f, ",\n    { name = \"w%d\"; exec = [\"%s\", \"run\"]; }",
		    i, b->tworker);
	fprintf(f, "\n  );\n};\n");
	fclose(f);
	if ((b->pid = fork()) == -1) {
		perror("fork");
		exit(1);
	}
	if (b->pid == 0) {
		if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(b->actord, b->actord, "-c", conf, (char *)NULL);
		_exit(127);
	}
	/* Up when status answers with every child running. */
	for (i = 0; i < 1000; i++) {
		usleep(10000);
		if (roundtrip(b, &running) == 0 &&
		    running == CHILDREN + 2)	/* and the root */
			return;
	}
	fprintf(stderr, "bench_ctl: actord did not come up; see %s\n", log);
	stop_actord(b);
	exit(1);
}

static void
stop_actord(struct bench *b)
{
	char cmd[128];

	if (b->pid > 0) {
		kill(b->pid, SIGTERM);
		waitpid(b->pid, NULL, 0);
		b->pid = 0;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b->dir);
	(void)!system(cmd);
}

/*
 * One status request on a fresh connection, the answer read whole; 0 if
 * it came.  With running, the answer is decoded and its running nodes
 * counted.
 */
static int
roundtrip(struct bench *b, size_t *running)
{
	struct ctl_response resp;
	size_t k;
	struct sockaddr_un sun;
	struct ctl_request q;
	struct ctl_buf req;
	uint8_t buf[65536];
	uint32_t total = 0;
	size_t got = 0;
	ssize_t r;
	int fd, rc = -1;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", b->sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		goto out;
	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATUS;
	ctl_buf_init(&req, CTL_MAX_REQUEST);
	ctl_request_encode(&req, &q);
	r = write(fd, req.data, req.len);
	ctl_buf_free(&req);
	if (r <= 0)
		goto out;
	while ((r = read(fd, buf + got, sizeof(buf) - got)) > 0) {
		got += (size_t)r;
		if (total == 0 && got >= 4 &&
		    ctl_frame_length(buf, got, sizeof(buf), &total) != 1)
			goto out;
		if (total != 0 && got >= total) {
			rc = 0;
			break;
		}
	}
	if (rc == 0 && running != NULL) {
		*running = 0;
		if (ctl_response_decode(buf, total, &resp, NULL, 0) != CTL_OK)
			rc = -1;
		else {
			for (k = 0; k < resp.nnodes; k++)
				*running += strcmp(resp.nodes[k].state,
				    "running") == 0;
			ctl_response_free(&resp);
		}
	}
out:
	close(fd);
	return rc;
}

static bool
in_path(const char *prog)
{
	char buf[4096], *p, *dir, *save = NULL, full[4200];
	const char *path = getenv("PATH");

	snprintf(buf, sizeof(buf), "%s", path != NULL ? path :
	    "/usr/bin:/bin");
	for (p = buf; (dir = strtok_r(p, ":", &save)) != NULL; p = NULL) {
		snprintf(full, sizeof(full), "%s/%s", dir, prog);
		if (access(full, X_OK) == 0)
			return true;
	}
	return false;
}

int
main(void)
{
	static const char *const others[] = { "s6-svc", "sv", "supervisorctl" };
	static const char *const measured[] = {
		"s6-svc and svc return in 5-10 ms",
		"sv restart takes about 430 ms (it polls every 420 ms)",
		"supervisorctl restart takes 1.3-1.4 s" };
	struct bench b;
	const char *jpath = getenv("BENCH_JSON"), *build = getenv("BUILD");
	uint64_t *v, t;
	double s50, s99, p50, p99, r50, r99;
	size_t i, n;
	char key[64];

	memset(&b, 0, sizeof(b));
	b.first = 1;
	snprintf(b.build, sizeof(b.build), "%s", build != NULL && build[0] ?
	    build : "build");
	snprintf(b.actord, sizeof(b.actord), "%s/actord", b.build);
	snprintf(b.actorctl, sizeof(b.actorctl), "%s/actorctl", b.build);
	snprintf(b.tworker, sizeof(b.tworker), "%s/tests/progs/tworker",
	    b.build);
	if ((b.json = fopen(jpath != NULL ? jpath : "/dev/null", "w")) ==
	    NULL) {
		perror(jpath);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((v = calloc(ROUNDS, sizeof(*v))) == NULL)
		return 1;
	start_actord(&b);
	fprintf(b.json, "{");
	emit(&b, "children", CHILDREN + 1);

	/* status, as users run it: a process per command. */
	for (i = 0, n = 0; i < ROUNDS; i++) {
		t = now_us();
		if (run(&b, "status", NULL, true) != 0)
			continue;
		v[n++] = now_us() - t;
	}
	if (n == 0) {
		fprintf(stderr, "bench_ctl: actorctl status failed\n");
		stop_actord(&b);
		return 1;
	}
	s50 = pct(v, n, 0.50);
	s99 = pct(v, n, 0.99);
	/* The protocol alone: connect, ask, read the whole answer. */
	for (i = 0, n = 0; i < ROUNDS; i++) {
		t = now_us();
		if (roundtrip(&b, NULL) == 0)
			v[n++] = now_us() - t;
	}
	p50 = n > 0 ? pct(v, n, 0.50) : -1;
	p99 = n > 0 ? pct(v, n, 0.99) : -1;
	/* restart: returns when the new incarnation runs. */
	for (i = 0, n = 0; i < RESTARTS; i++) {
		t = now_us();
		if (run(&b, "restart", "/target", true) != 0)
			continue;
		v[n++] = now_us() - t;
	}
	r50 = n > 0 ? pct(v, n, 0.50) : -1;
	r99 = n > 0 ? pct(v, n, 0.99) : -1;
	stop_actord(&b);

	printf("actorctl against actord with %d children (target 5 ms for "
	    "status)\n", CHILDREN + 1);
	printf("  %-40s p50 %8.3f ms  p99 %8.3f ms\n",
	    "actorctl status (process, round trip)", s50, s99);
	printf("  %-40s p50 %8.3f ms  p99 %8.3f ms\n",
	    "status protocol round trip (in process)", p50, p99);
	printf("  %-40s p50 %8.3f ms  p99 %8.3f ms  (%zu of %d)\n",
	    "actorctl restart to new incarnation", r50, r99, n, RESTARTS);
	emit(&b, "status_p50_ms", s50);
	emit(&b, "status_p99_ms", s99);
	emit(&b, "status_protocol_p50_ms", p50);
	emit(&b, "status_protocol_p99_ms", p99);
	emit(&b, "restart_p50_ms", r50);
	emit(&b, "restart_p99_ms", r99);
	printf("side by side (restart of one service):\n");
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		snprintf(key, sizeof(key), "%s_installed", others[i]);
		if (in_path(others[i])) {
			printf("  %-14s installed, but not set up by this "
			    "benchmark: not measured; issue 5 measured: %s\n",
			    others[i], measured[i]);
			emit(&b, key, 1);
		} else {
			printf("  %-14s not installed here: not measured; "
			    "issue 5 measured: %s\n", others[i], measured[i]);
			emit(&b, key, 0);
		}
		snprintf(key, sizeof(key), "%s_restart_ms", others[i]);
		emit_null(&b, key);
	}
	fprintf(b.json, "\n}\n");
	fclose(b.json);
	free(v);
	return 0;
}
