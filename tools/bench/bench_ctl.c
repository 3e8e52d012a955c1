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
 *   others		where installed (tools/install-deps --bench): s6,
 *			runit and supervisord, each its own instance in a
 *			temp dir (managers.h) with the same 101 services;
 *			`s6-svc -r`, `sv restart`, `supervisorctl restart`
 *			on the target, timed to the tool's return and to the
 *			new incarnation running, and `s6-svstat`, `sv
 *			status`, `supervisorctl status` of the target; each
 *			bounded in rounds and time, everything stopped by
 *			pid, and a check that nothing of theirs is left
 *
 * Writes its figures as JSON to $BENCH_JSON, and a table to stdout.  Needs
 * $BUILD/actord, $BUILD/actorctl and $BUILD/tests/progs/tworker.
 */
#include <errno.h>
#include <limits.h>
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
#include "tools/bench/bench_common.h"
#include "tools/bench/managers.h"

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

/* One other manager's control figures (ms); -1 when not measured. */
struct other {
	bool		 installed;
	int		 nstatus, nrestart, nsettled;
	double		 st50, st99;
	double		 now[3];	/* restart at once: p50, p99, returns */
	double		 settled[3];	/* restart after 1.1 s up: the same */
};

static void	 emit(struct bench *, const char *, double);
static void	 emit_null(struct bench *, const char *);
static int	 run(struct bench *, const char *, const char *, bool);
static void	 start_actord(struct bench *);
static void	 stop_actord(struct bench *);
static int	 roundtrip(struct bench *, size_t *);
static const char *svc_name(int, char *, size_t);
static int	 run_tool(char *const []);
static int	 restarts(struct mgr *, char *const [], int, int, double *);
static void	 other(struct bench *, enum mgr_kind, struct other *);
static void	 print_restart(const char *, int, const double *, double);
static void	 others(struct bench *, double, double, double);

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

/* Service 0 is the target, then w0 .. w99, as under actord. */
static const char *
svc_name(int i, char *buf, size_t len)
{
	if (i == 0)
		snprintf(buf, len, "target");
	else
		snprintf(buf, len, "w%d", i - 1);
	return buf;
}

/* argv run as a process, output to /dev/null; its exit status. */
static int
run_tool(char *const argv[])
{
	pid_t pid;
	int st, fd;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if ((fd = open("/dev/null", O_RDWR)) != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * rsv (a restart of the target) run until budget_s is spent, each time
 * settle_ms after the target's incarnation came up (0: at once; s6 and
 * runsv wait 1 s before restarting a service that ran less than 1 s);
 * timed from the command to the new incarnation running.  Sets r[0] p50,
 * r[1] p99, r[2] the tool's return p50 (ms); the number of rounds.
 */
static int
restarts(struct mgr *m, char *const rsv[], int settle_ms, int budget_s,
    double *r)
{
	uint64_t v[RESTARTS], ret[RESTARTS], t, end, budget;
	pid_t old, now;
	size_t n;

	r[0] = r[1] = r[2] = -1;
	budget = now_us() + (uint64_t)budget_s * 1000000;
	usleep((useconds_t)settle_ms * 1000);
	for (n = 0; n < RESTARTS && now_us() < budget; ) {
		if ((old = mgr_worker(m, "target")) <= 0)
			break;
		t = now_us();
		if (run_tool(rsv) != 0)
			break;
		ret[n] = now_us() - t;
		end = t + 10000000;
		while (((now = mgr_worker(m, "target")) == 0 || now == old) &&
		    now_us() < end)
			usleep(100);
		if (now == 0 || now == old)
			break;
		v[n++] = now_us() - t;
		usleep((useconds_t)settle_ms * 1000);
	}
	if (n > 0) {
		r[0] = pct(v, n, 0.50);
		r[1] = pct(v, n, 0.99);
		r[2] = pct(ret, n, 0.50);
	}
	return (int)n;
}

/*
 * One manager with the 101 services: status of the target, then restart
 * of the target from the command to its new incarnation running (and to
 * the tool's return), at once and then settled.  Each bounded: ROUNDS or
 * 3 s of status, 3 s and 5 s of restarts.
 */
static void
other(struct bench *b, enum mgr_kind k, struct other *o)
{
	char tool[4200], statool[4200], sdir[256], conf[128];
	char *stv[8], *rsv[8];
	uint64_t *v, t, budget;
	struct mgr m;
	size_t n;

	memset(&m, 0, sizeof(m));	/* mgr_stop is safe before the start */
	o->st50 = o->st99 = -1;
	o->now[0] = o->now[1] = o->now[2] = -1;
	o->settled[0] = o->settled[1] = o->settled[2] = -1;
	v = calloc(ROUNDS, sizeof(*v));
	if (v == NULL ||
	    mgr_start(&m, k, b->tworker, CHILDREN + 1, MGR_SVC_RUN,
	    svc_name) == -1 ||
	    mgr_wait_workers(&m, CHILDREN + 1, 30000) < 0) {
		fprintf(stderr, "bench_ctl: %s did not come up\n",
		    mgr_info[k].name);
		goto out;
	}
	mgr_svcdir(&m, "target", sdir, sizeof(sdir));
	snprintf(conf, sizeof(conf), "%s/supervisord.conf", m.dir);
	mgr_in_path(mgr_info[k].ctl, tool, sizeof(tool));
	switch (k) {
	case MGR_S6:
		mgr_in_path("s6-svstat", statool, sizeof(statool));
		stv[0] = statool; stv[1] = sdir; stv[2] = NULL;
		rsv[0] = tool; rsv[1] = (char *)"-r"; rsv[2] = sdir;
		rsv[3] = NULL;
		break;
	case MGR_RUNIT:
		stv[0] = tool; stv[1] = (char *)"status"; stv[2] = sdir;
		stv[3] = NULL;
		rsv[0] = tool; rsv[1] = (char *)"restart"; rsv[2] = sdir;
		rsv[3] = NULL;
		break;
	default:
		stv[0] = tool; stv[1] = (char *)"-c"; stv[2] = conf;
		stv[3] = (char *)"status"; stv[4] = (char *)"target";
		stv[5] = NULL;
		memcpy(rsv, stv, sizeof(rsv));
		rsv[3] = (char *)"restart";
		break;
	}
	budget = now_us() + 3000000;
	for (n = 0; n < ROUNDS && now_us() < budget; ) {
		t = now_us();
		if (run_tool(stv) != 0)
			break;
		v[n++] = now_us() - t;
	}
	if ((o->nstatus = (int)n) > 0) {
		o->st50 = pct(v, n, 0.50);
		o->st99 = pct(v, n, 0.99);
	}
	o->nrestart = restarts(&m, rsv, 0, 3, o->now);
	o->nsettled = restarts(&m, rsv, 1100, 5, o->settled);
out:
	mgr_stop(&m);
	free(v);
}

static void
print_restart(const char *name, int n, const double *r, double base)
{
	if (n <= 0)
		printf("  %-24s failed\n", name);
	else
		printf("  %-24s %7d %9.3f %9.3f %9.3f %10.1fx\n", name, n,
		    r[0], r[1], r[2], r[0] / base);
}

static void
others(struct bench *b, double s50, double r50, double r99)
{
	static const char *const measured[] = {
		"s6-svc returns in 5-10 ms",
		"sv restart takes about 430 ms (it polls every 420 ms)",
		"supervisorctl restart takes 1.3-1.4 s" };
	static const char *const stname[] = { "s6-svstat", "sv status",
	    "supervisorctl status" };
	static const char *const rsname[] = { "s6-svc -r", "sv restart",
	    "supervisorctl restart" };
	struct other o[MGR_NKINDS];
	const char *ctl;
	char key[64];
	uint64_t t_others;
	int k, left;

	t_others = now_us();
	memset(o, 0, sizeof(o));
	for (k = 0; k < MGR_NKINDS; k++) {
		ctl = mgr_info[k].ctl;
		o[k].installed = mgr_installed((enum mgr_kind)k);
		snprintf(key, sizeof(key), "%s_installed", ctl);
		emit(b, key, o[k].installed);
		if (o[k].installed)
			other(b, (enum mgr_kind)k, &o[k]);
		else
			o[k].st50 = o[k].st99 = o[k].now[0] = o[k].now[1] =
			    o[k].now[2] = o[k].settled[0] =
			    o[k].settled[1] = o[k].settled[2] = -1;
#define EMIT(suffix, val) do {						\
		snprintf(key, sizeof(key), "%s_" suffix, ctl);		\
		if ((val) < 0)						\
			emit_null(b, key);				\
		else							\
			emit(b, key, (val));				\
	} while (0)
		EMIT("restart_ms", o[k].now[0]);
		EMIT("restart_p99_ms", o[k].now[1]);
		EMIT("restart_returns_p50_ms", o[k].now[2]);
		EMIT("restart_vs_actorctl", o[k].now[0] < 0 ? -1 :
		    o[k].now[0] / r50);
		EMIT("restart_settled_ms", o[k].settled[0]);
		EMIT("restart_settled_p99_ms", o[k].settled[1]);
		EMIT("restart_settled_returns_p50_ms", o[k].settled[2]);
		EMIT("restart_settled_vs_actorctl", o[k].settled[0] < 0 ? -1 :
		    o[k].settled[0] / r50);
		EMIT("status_p50_ms", o[k].st50);
		EMIT("status_p99_ms", o[k].st99);
		EMIT("status_vs_actorctl", o[k].st50 < 0 ? -1 :
		    o[k].st50 / s50);
#undef EMIT
	}
	left = mgr_leftovers(b->tworker);
	emit(b, "others_leftover_processes", left);

	printf("side by side (101 services; restart of one, timed to its new "
	    "incarnation running):\n");
	printf("  %-24s %7s %9s %9s %9s %10s\n", "restart", "rounds",
	    "p50 ms", "p99 ms", "returns", "p50/actorctl");
	printf("  %-24s %7d %9.3f %9.3f %9.3f %10.1fx\n", "actorctl restart",
	    RESTARTS, r50, r99, r50, 1.0);
	for (k = 0; k < MGR_NKINDS; k++) {
		if (!o[k].installed) {
			printf("  %-24s not installed (tools/install-deps "
			    "--bench); issue 5 measured: %s\n", rsname[k],
			    measured[k]);
			continue;
		}
		print_restart(rsname[k], o[k].nrestart, o[k].now, r50);
		print_restart("  after 1.1 s up", o[k].nsettled, o[k].settled,
		    r50);
	}
	printf("  (others: restarted as soon as up, then after 1.1 s up; "
	    "supervisord with\n   startsecs=0; bounded to 3 s and 5 s)\n");
	printf("  %-24s %7s %9s %9s %9s %10s\n", "status", "rounds",
	    "p50 ms", "p99 ms", "", "p50/actorctl");
	printf("  %-24s %7d %9.3f %9s %9s %10.1fx\n",
	    "actorctl status (tree)", ROUNDS, s50, "", "", 1.0);
	for (k = 0; k < MGR_NKINDS; k++) {
		if (!o[k].installed || o[k].nstatus == 0)
			continue;
		printf("  %-24s %7d %9.3f %9.3f %9s %10.1fx\n", stname[k],
		    o[k].nstatus, o[k].st50, o[k].st99, "", o[k].st50 / s50);
	}
	printf("  (\"returns\": the tool's own return; others' status is of "
	    "the one service,\n   actorctl's of the whole tree)\n");
	mgr_print_tail(left, t_others);
}

int
main(void)
{
	struct bench b;
	const char *jpath = getenv("BENCH_JSON"), *build = getenv("BUILD");
	uint64_t *v, t;
	double s50, s99, p50, p99, r50, r99;
	size_t i, n;

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
	/* What the other managers leave behind comes back here. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	{
		/* Absolute and canonical: /proc/PID/exe is compared with it. */
		char real[PATH_MAX];

		if (realpath(b.tworker, real) != NULL &&
		    strlen(real) < sizeof(b.tworker))
			memcpy(b.tworker, real, strlen(real) + 1);
	}
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
	others(&b, s50, r50, r99);
	fprintf(b.json, "\n}\n");
	fclose(b.json);
	free(v);
	return 0;
}
