/*
 * bench_supervisor.c: what the supervision core costs, side by side with a
 * minimal fork/exec/waitpid loop written here (the floor of this machine).
 *
 *   restart latency	SIGKILL of a worker to its next incarnation running,
 *			backoff_min = 0, p50 and p99, exec and function
 *			children (the core runs in this process) and the
 *			floor loop
 *   failing worker	an always-failing worker for 3 s, with backoff
 *			50 ms..1 s and with none: restarts and CPU seconds
 *   idle		actord's context switches over BENCH_IDLE_S seconds
 *			(default 10) with 100 idle workers
 *   scale		actord's start time (to READY=1) and PSS
 *			(smaps_rollup) with 1, 100 and 1000 workers, and the
 *			floor loop's time to fork and exec as many
 *
 * Writes its figures as JSON to $BENCH_JSON, and a table to stdout.  Needs
 * $BUILD/actord and $BUILD/tests/progs/tworker.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/config.h"
#include "supervisor/log.h"

#define ROUNDS		200

struct bench {
	char		 build[512];
	char		 tworker[600];
	char		 actord[600];
	FILE		*json;
	int		 first;
};

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

static double
pct(uint64_t *v, size_t n, double p)
{
	size_t i;

	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i] / 1000.0;	/* ms */
}

static void
emit(struct bench *b, const char *key, double v)
{
	fprintf(b->json, "%s\n  \"%s\": %.3f", b->first ? "" : ",", key, v);
	b->first = 0;
	printf("%-44s %12.3f\n", key, v);
	fflush(stdout);
}

/* --- the floor: fork, exec, know that exec succeeded, waitpid -------------- */

static pid_t
floor_spawn(const char *prog)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == 0) {
		char *argv[] = { (char *)(uintptr_t)prog, (char *)"run", NULL };
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		execv(prog, argv);
		_exit(127);
	}
	close(p[1]);
	(void)!read(p[0], &c, 1);	/* EOF: exec done */
	close(p[0]);
	return pid;
}

static void
bench_floor(struct bench *b)
{
	static const int counts[] = { 1, 100, 1000 };
	uint64_t lat[ROUNDS], t0, t;
	pid_t pid, *pids;
	int i, k, n;

	pid = floor_spawn(b->tworker);
	for (i = 0; i < ROUNDS; i++) {
		t0 = now_us();
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = floor_spawn(b->tworker);
		lat[i] = now_us() - t0;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	emit(b, "floor_restart_p50_ms", pct(lat, ROUNDS, 0.5));
	emit(b, "floor_restart_p99_ms", pct(lat, ROUNDS, 0.99));

	pids = calloc(1000, sizeof(*pids));
	for (k = 0; k < 3; k++) {
		char key[64];

		n = counts[k];
		t0 = now_us();
		for (i = 0; i < n; i++)
			pids[i] = floor_spawn(b->tworker);
		t = now_us() - t0;
		for (i = 0; i < n; i++) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
		snprintf(key, sizeof(key), "floor_start_%d_ms", n);
		emit(b, key, (double)t / 1000.0);
	}
	free(pids);
}

/* --- the core, in this process --------------------------------------------- */

static int
fn_sleep(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static struct actord *
core_one(struct bench *b, bool fn, uint32_t bmin, uint32_t bmax,
    const char *mode, const char *arg)
{
	struct actord_spec *spec = spec_new();
	struct child_spec *c;
	struct actord *ad;
	char err[256];

	spec->root.intensity = 1000000;
	spec->root.period = 1;
	spec->root.backoff_min = bmin;
	spec->root.backoff_max = bmax;
	spec->root.children = calloc(1, sizeof(*c));
	spec->root.nchildren = 1;
	c = &spec->root.children[0];
	spec_child_init(c);
	c->name = strdup("w");
	if (fn)
		c->fn = fn_sleep;
	else {
		c->argv = calloc(4, sizeof(*c->argv));
		c->argv[0] = strdup(b->tworker);
		c->argv[1] = strdup(mode);
		if (arg != NULL)
			c->argv[2] = strdup(arg);
	}
	if ((ad = actord_new(spec, err, sizeof(err))) == NULL) {
		fprintf(stderr, "bench: %s\n", err);
		exit(1);
	}
	ad->free_spec = spec_free;
	actord_boot(ad);
	return ad;
}

static void
bench_core_latency(struct bench *b, bool fn)
{
	uint64_t lat[ROUNDS], t0;
	struct actord *ad;
	struct node *n;
	pid_t old;
	int i;

	ad = core_one(b, fn, 0, 0, "run", NULL);
	n = actord_find(ad, "/w");
	while (n->state != NS_RUNNING)
		actord_run_once(ad, 1000);
	for (i = 0; i < ROUNDS; i++) {
		old = n->pid;
		t0 = now_us();
		kill(old, SIGKILL);
		while (n->state != NS_RUNNING || n->pid == old)
			actord_run_once(ad, 1000);
		lat[i] = now_us() - t0;
	}
	actord_free(ad);
	emit(b, fn ? "core_restart_fn_p50_ms" : "core_restart_exec_p50_ms",
	    pct(lat, ROUNDS, 0.5));
	emit(b, fn ? "core_restart_fn_p99_ms" : "core_restart_exec_p99_ms",
	    pct(lat, ROUNDS, 0.99));
}

static double
cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void
bench_failing(struct bench *b, bool backoff)
{
	struct actord *ad;
	struct node *n;
	uint64_t end;
	double c0;
	char key[64];

	c0 = cpu_s();
	ad = core_one(b, false, backoff ? 50 : 0, backoff ? 1000 : 0, "exit",
	    "1");
	n = actord_find(ad, "/w");
	end = now_us() + 3000000;
	while (now_us() < end)
		actord_run_once(ad, (int)((end - now_us()) / 1000) + 1);
	snprintf(key, sizeof(key), "failing_%s_restarts",
	    backoff ? "backoff" : "nobackoff");
	emit(b, key, (double)n->restarts);
	snprintf(key, sizeof(key), "failing_%s_cpu_s",
	    backoff ? "backoff" : "nobackoff");
	emit(b, key, cpu_s() - c0);
	actord_free(ad);
}

/* --- the real actord --------------------------------------------------------- */

struct daemon {
	pid_t	 pid;
	int	 notify;
	char	 dir[64];
};

static pid_t
daemon_start(struct bench *b, struct daemon *d, int workers)
{
	struct sockaddr_un sun;
	char conf[128], name[108];
	FILE *f;
	size_t len;
	int i;

	snprintf(d->dir, sizeof(d->dir), "/tmp/bench-actord-XXXXXX");
	if (mkdtemp(d->dir) == NULL)
		return -1;
	snprintf(conf, sizeof(conf), "%s/actord.conf", d->dir);
	f = fopen(conf, "w");
	fprintf(f, "supervisor = { intensity = 100; children = (\n");
	fprintf(f, "  { name = \"w\"; exec = [\"%s\", \"run\"]; "
	    "instances = %d; }\n);\n};\n", b->tworker, workers);
	fclose(f);
	d->notify = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(name, sizeof(name), "@%s/notify", d->dir);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	len = strlen(name);
	memcpy(sun.sun_path, name, len);
	sun.sun_path[0] = '\0';
	bind(d->notify, (struct sockaddr *)&sun,
	    offsetof(struct sockaddr_un, sun_path) + len);
	if ((d->pid = fork()) == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 2);
		setenv("NOTIFY_SOCKET", name, 1);
		execl(b->actord, b->actord, "-c", conf, (char *)NULL);
		_exit(127);
	}
	(void)i;
	return d->pid;
}

static void
daemon_wait_ready(struct daemon *d)
{
	char buf[256];
	ssize_t r;

	while ((r = recv(d->notify, buf, sizeof(buf) - 1, 0)) > 0) {
		buf[r] = '\0';
		if (strstr(buf, "READY=1") != NULL)
			return;
	}
}

static void
daemon_stop(struct daemon *d)
{
	char cmd[128];

	kill(d->pid, SIGTERM);
	waitpid(d->pid, NULL, 0);
	close(d->notify);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
	(void)!system(cmd);
}

static long
proc_field(pid_t pid, const char *file, const char *field)
{
	char path[64], line[256];
	long v = -1, total = 0;
	size_t len = strlen(field);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, len) == 0 && sscanf(line + len,
		    " %ld", &v) == 1)
			total += v;
	fclose(f);
	return v == -1 ? -1 : total;
}

static void
bench_scale(struct bench *b)
{
	static const int counts[] = { 1, 100, 1000 };
	struct daemon d;
	uint64_t t0;
	size_t i;
	char key[64];

	for (i = 0; i < 3; i++) {
		t0 = now_us();
		daemon_start(b, &d, counts[i]);
		daemon_wait_ready(&d);
		snprintf(key, sizeof(key), "actord_start_%d_ms", counts[i]);
		emit(b, key, (double)(now_us() - t0) / 1000.0);
		snprintf(key, sizeof(key), "actord_pss_%d_kb", counts[i]);
		emit(b, key, (double)proc_field(d.pid, "smaps_rollup", "Pss:"));
		daemon_stop(&d);
	}
}

static void
bench_idle(struct bench *b)
{
	struct daemon d;
	long c0, c1;
	const char *s = getenv("BENCH_IDLE_S");
	int secs = s != NULL ? atoi(s) : 10;

	daemon_start(b, &d, 100);
	daemon_wait_ready(&d);
	sleep(1);		/* let the workers' first output drain */
	c0 = proc_field(d.pid, "status", "voluntary_ctxt_switches:") +
	    proc_field(d.pid, "status", "nonvoluntary_ctxt_switches:");
	sleep((unsigned)secs);
	c1 = proc_field(d.pid, "status", "voluntary_ctxt_switches:") +
	    proc_field(d.pid, "status", "nonvoluntary_ctxt_switches:");
	emit(b, "idle_100_workers_ctxt_switches", (double)(c1 - c0));
	emit(b, "idle_seconds", secs);
	daemon_stop(&d);
}

int
main(void)
{
	struct bench b;
	const char *build = getenv("BUILD"), *out = getenv("BENCH_JSON");

	memset(&b, 0, sizeof(b));
	b.first = 1;
	log_init("bench", -1);
	snprintf(b.build, sizeof(b.build), "%s", build != NULL ? build :
	    "build");
	snprintf(b.tworker, sizeof(b.tworker), "%s/tests/progs/tworker",
	    b.build);
	snprintf(b.actord, sizeof(b.actord), "%s/actord", b.build);
	if (access(b.tworker, X_OK) == -1 || access(b.actord, X_OK) == -1) {
		fprintf(stderr, "bench_supervisor: need %s and %s\n", b.tworker,
		    b.actord);
		return 1;
	}
	if (b.tworker[0] != '/') {
		char cwd[256], tmp[1024];

		if (getcwd(cwd, sizeof(cwd)) != NULL &&
		    snprintf(tmp, sizeof(tmp), "%s/%s", cwd, b.tworker) <
		    (int)sizeof(b.tworker))
			memcpy(b.tworker, tmp, strlen(tmp) + 1);
	}
	(void)log_open_file("/dev/null");	/* the restarts are logged */
	b.json = fopen(out != NULL ? out : "/dev/null", "w");
	if (b.json == NULL) {
		fprintf(stderr, "bench_supervisor: %s: %s\n", out,
		    strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	fprintf(b.json, "{");
	bench_floor(&b);
	bench_core_latency(&b, false);
	bench_core_latency(&b, true);
	bench_failing(&b, true);
	bench_failing(&b, false);
	bench_scale(&b);
	bench_idle(&b);
	fprintf(b.json, "\n}\n");
	fclose(b.json);
	return 0;
}
