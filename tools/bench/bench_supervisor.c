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
 *   others		s6, runit and supervisord where installed
 *			(tools/install-deps --bench), each its own instance
 *			in a temp dir (managers.h): restart latency with one
 *			service, an always-failing worker for 3 s (restarts,
 *			the manager's CPU seconds), and with 100 services
 *			start time, PSS and idle context switches over
 *			BENCH_OTHERS_IDLE_S seconds (default 5, to keep the
 *			bench short); then a table side by side with actord,
 *			ratios against actord, and a check that no process
 *			of theirs is left
 *
 * Writes its figures as JSON to $BENCH_JSON, and a table to stdout.  Needs
 * $BUILD/actord and $BUILD/tests/progs/tworker.
 */
#include <errno.h>
#include <limits.h>
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
#include "tools/bench/bench_common.h"
#include "tools/bench/managers.h"

#define ROUNDS		200

struct bench {
	char		 build[512];
	char		 tworker[600];
	char		 actord[600];
	FILE		*json;
	int		 first;
	struct res {			/* actord's figures, for the table */
		double	 floor50, floor99, exec50, exec99, fn50, fn99;
		double	 fail_b, fail_b_cpu, fail_n, fail_n_cpu;
		double	 start100, pss100, idle_ctx, idle_s;
	}		 a;
};

/* One other manager's figures; -1 when not measured. */
struct other {
	bool		 installed;
	int		 rounds, srounds, nrounds, nsrounds;
	double		 lat50, lat99, slat50, slat99, fail, fail_cpu;
	double		 nlat[2], nslat[2];	/* s6 with notification-fd */
	double		 start100, pss100, idle_ctx, idle_s;
};

static double
emit(struct bench *b, const char *key, double v)
{
	fprintf(b->json, "%s\n  \"%s\": %.3f", b->first ? "" : ",", key, v);
	b->first = 0;
	printf("%-44s %12.3f\n", key, v);
	fflush(stdout);
	return v;
}

/* A figure in the JSON only; negative means not measured (null). */
static void
jemit(struct bench *b, const char *who, const char *key, double v)
{
	if (v < 0)
		fprintf(b->json, ",\n  \"%s_%s\": null", who, key);
	else
		fprintf(b->json, ",\n  \"%s_%s\": %.3f", who, key, v);
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
	b->a.floor50 = emit(b, "floor_restart_p50_ms", pct(lat, ROUNDS, 0.5));
	b->a.floor99 = emit(b, "floor_restart_p99_ms", pct(lat, ROUNDS,
	    0.99));

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
	*(fn ? &b->a.fn50 : &b->a.exec50) = emit(b, fn ?
	    "core_restart_fn_p50_ms" : "core_restart_exec_p50_ms",
	    pct(lat, ROUNDS, 0.5));
	*(fn ? &b->a.fn99 : &b->a.exec99) = emit(b, fn ?
	    "core_restart_fn_p99_ms" : "core_restart_exec_p99_ms",
	    pct(lat, ROUNDS, 0.99));
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
	*(backoff ? &b->a.fail_b : &b->a.fail_n) = emit(b, key,
	    (double)n->restarts);
	snprintf(key, sizeof(key), "failing_%s_cpu_s",
	    backoff ? "backoff" : "nobackoff");
	*(backoff ? &b->a.fail_b_cpu : &b->a.fail_n_cpu) = emit(b, key,
	    cpu_s() - c0);
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
	double t, pss;
	char key[64];

	for (i = 0; i < 3; i++) {
		t0 = now_us();
		daemon_start(b, &d, counts[i]);
		daemon_wait_ready(&d);
		snprintf(key, sizeof(key), "actord_start_%d_ms", counts[i]);
		t = emit(b, key, (double)(now_us() - t0) / 1000.0);
		snprintf(key, sizeof(key), "actord_pss_%d_kb", counts[i]);
		pss = emit(b, key, (double)proc_field(d.pid, "smaps_rollup",
		    "Pss:"));
		if (counts[i] == 100) {
			b->a.start100 = t;
			b->a.pss100 = pss;
		}
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
	b->a.idle_ctx = emit(b, "idle_100_workers_ctxt_switches",
	    (double)(c1 - c0));
	b->a.idle_s = emit(b, "idle_seconds", secs);
	daemon_stop(&d);
}

/* --- the other managers ------------------------------------------------------ */

static const char *
svc_name(int i, char *buf, size_t len)
{
	snprintf(buf, len, "w%d", i);
	return buf;
}

/*
 * SIGKILL of the worker to its next incarnation running, one service;
 * each incarnation killed settle_ms after it came up (0: at once; s6 and
 * runsv wait 1 s before restarting a service that ran less than 1 s).
 * Bounded by budget_s; the number of rounds, or -1.
 */
static int
other_latency(struct bench *b, enum mgr_kind k, enum mgr_svc how,
    int settle_ms, int budget_s, double *p50, double *p99)
{
	uint64_t lat[ROUNDS], t0, end, budget;
	struct mgr m;
	pid_t old, now;
	int i;

	*p50 = *p99 = -1;
	if (mgr_start(&m, k, b->tworker, 1, how, svc_name) == -1 ||
	    mgr_wait_workers(&m, 1, 5000) < 0) {
		mgr_stop(&m);
		return -1;
	}
	budget = now_us() + (uint64_t)budget_s * 1000000;
	usleep((useconds_t)settle_ms * 1000);
	for (i = 0; i < ROUNDS && now_us() < budget; i++) {
		if ((old = mgr_worker(&m, "w0")) <= 0)
			break;		/* never kill(0): our own group */
		t0 = now_us();
		end = t0 + 5000000;
		kill(old, SIGKILL);
		while (((now = mgr_worker(&m, "w0")) == 0 || now == old) &&
		    now_us() < end)
			usleep(100);
		if (now == 0 || now == old)
			break;
		lat[i] = now_us() - t0;
		usleep((useconds_t)settle_ms * 1000);
	}
	mgr_stop(&m);
	if (i > 0) {
		*p50 = pct(lat, (size_t)i, 0.5);
		*p99 = pct(lat, (size_t)i, 0.99);
	}
	return i;
}

/* An always-failing worker for 3 s: restarts, and the manager's CPU. */
static void
other_failing(struct bench *b, enum mgr_kind k, struct other *o)
{
	struct mgr m;
	uint64_t end;
	double c0;
	int s0;

	o->fail = o->fail_cpu = -1;
	if (mgr_start(&m, k, b->tworker, 1, MGR_SVC_FAIL, svc_name) == -1) {
		mgr_stop(&m);
		return;
	}
	end = now_us() + 5000000;
	while (mgr_starts(&m) < 1 && now_us() < end)
		usleep(1000);
	if ((s0 = mgr_starts(&m)) >= 1) {
		c0 = mgr_cpu_s(&m);
		sleep(3);
		o->fail = mgr_starts(&m) - s0;
		o->fail_cpu = mgr_cpu_s(&m) - c0;
	}
	mgr_stop(&m);
}

/* 100 services: start time, PSS, context switches while idle. */
static void
other_scale(struct bench *b, enum mgr_kind k, struct other *o)
{
	const char *s = getenv("BENCH_OTHERS_IDLE_S");
	int secs = s != NULL ? atoi(s) : 5;
	struct mgr m;
	uint64_t t0;
	long c0;

	o->start100 = o->pss100 = o->idle_ctx = o->idle_s = -1;
	t0 = now_us();
	if (mgr_start(&m, k, b->tworker, 100, MGR_SVC_RUN, svc_name) == -1 ||
	    mgr_wait_workers(&m, 100, 30000) < 0) {
		mgr_stop(&m);
		return;
	}
	o->start100 = (double)(now_us() - t0) / 1000.0;
	sleep(1);
	o->pss100 = (double)mgr_sum(&m, "smaps_rollup", "Pss:");
	c0 = mgr_ctxt(&m);
	sleep((unsigned)secs);
	o->idle_ctx = (double)(mgr_ctxt(&m) - c0);
	o->idle_s = secs;
	mgr_stop(&m);
}

static void
print_ratio(double v, double base)
{
	if (v < 0 || base <= 0)
		printf("  %9s", "-");
	else
		printf("  %8.1fx", v / base);
}

static void
print_val(double v, const char *fmt)
{
	if (v < 0)
		printf("  %9s", "-");
	else
		printf(fmt, v);
}

static void
bench_others(struct bench *b)
{
	struct other o[MGR_NKINDS];
	const char *who;
	uint64_t t_others;
	int k, left;

	t_others = now_us();
	memset(o, 0, sizeof(o));
	for (k = 0; k < MGR_NKINDS; k++) {
		who = mgr_info[k].name;
		o[k].installed = mgr_installed((enum mgr_kind)k);
		fprintf(b->json, ",\n  \"%s_installed\": %d", who,
		    o[k].installed);
		if (!o[k].installed) {
			o[k].lat50 = o[k].lat99 = o[k].slat50 = o[k].slat99 =
			    o[k].fail = o[k].fail_cpu =
			    o[k].start100 = o[k].pss100 = o[k].idle_ctx =
			    o[k].idle_s = -1;
		} else {
			o[k].rounds = other_latency(b, (enum mgr_kind)k,
			    MGR_SVC_RUN, 0, 3, &o[k].lat50, &o[k].lat99);
			o[k].srounds = other_latency(b, (enum mgr_kind)k,
			    MGR_SVC_RUN, 1100, 5, &o[k].slat50,
			    &o[k].slat99);
			o[k].nlat[0] = o[k].nslat[0] = -1;
			if (k == MGR_S6) {
				o[k].nrounds = other_latency(b, MGR_S6,
				    MGR_SVC_NOTIFY, 0, 2, &o[k].nlat[0],
				    &o[k].nlat[1]);
				o[k].nsrounds = other_latency(b, MGR_S6,
				    MGR_SVC_NOTIFY, 1100, 4, &o[k].nslat[0],
				    &o[k].nslat[1]);
			}
			other_failing(b, (enum mgr_kind)k, &o[k]);
			other_scale(b, (enum mgr_kind)k, &o[k]);
		}
		jemit(b, who, "restart_p50_ms", o[k].lat50);
		jemit(b, who, "restart_p99_ms", o[k].lat99);
		jemit(b, who, "restart_rounds", o[k].installed ?
		    o[k].rounds : -1);
		jemit(b, who, "restart_p50_vs_actord_exec", o[k].lat50 < 0 ?
		    -1 : o[k].lat50 / b->a.exec50);
		jemit(b, who, "restart_settled_p50_ms", o[k].slat50);
		jemit(b, who, "restart_settled_p99_ms", o[k].slat99);
		jemit(b, who, "restart_settled_rounds", o[k].installed ?
		    o[k].srounds : -1);
		jemit(b, who, "restart_settled_p50_vs_actord_exec",
		    o[k].slat50 < 0 ? -1 : o[k].slat50 / b->a.exec50);
		if (k == MGR_S6) {
			jemit(b, who, "notify_restart_p50_ms", o[k].installed ?
			    o[k].nlat[0] : -1);
			jemit(b, who, "notify_restart_settled_p50_ms",
			    o[k].installed ? o[k].nslat[0] : -1);
		}
		jemit(b, who, "failing_restarts", o[k].fail);
		jemit(b, who, "failing_cpu_s", o[k].fail_cpu);
		jemit(b, who, "start_100_ms", o[k].start100);
		jemit(b, who, "start_100_vs_actord", o[k].start100 < 0 ? -1 :
		    o[k].start100 / b->a.start100);
		jemit(b, who, "pss_100_kb", o[k].pss100);
		jemit(b, who, "pss_per_service_kb", o[k].pss100 < 0 ? -1 :
		    o[k].pss100 / 100);
		jemit(b, who, "pss_100_vs_actord", o[k].pss100 < 0 ? -1 :
		    o[k].pss100 / b->a.pss100);
		jemit(b, who, "idle_100_ctxt_switches", o[k].idle_ctx);
		jemit(b, who, "idle_seconds", o[k].idle_s);
	}
	left = mgr_leftovers(b->tworker);
	fprintf(b->json, ",\n  \"others_leftover_processes\": %d", left);

	printf("\nside by side: restart latency, SIGKILL to the next "
	    "incarnation running\n");
	printf("  %-26s %6s %10s %10s %10s\n", "", "rounds", "p50 ms",
	    "p99 ms", "p50/actord");
	printf("  %-26s %6d %10.3f %10.3f", "floor fork/exec/waitpid",
	    ROUNDS, b->a.floor50, b->a.floor99);
	print_ratio(b->a.floor50, b->a.exec50);
	printf("\n  %-26s %6d %10.3f %10.3f", "actord exec child", ROUNDS,
	    b->a.exec50, b->a.exec99);
	print_ratio(b->a.exec50, b->a.exec50);
	printf("\n  %-26s %6d %10.3f %10.3f", "actord function child",
	    ROUNDS, b->a.fn50, b->a.fn99);
	print_ratio(b->a.fn50, b->a.exec50);
	printf("\n");
	for (k = 0; k < MGR_NKINDS; k++) {
		if (!o[k].installed) {
			printf("  %-26s not installed (tools/install-deps "
			    "--bench)\n", mgr_info[k].name);
			continue;
		}
		printf("  %-26s %6d", mgr_info[k].name, o[k].rounds);
		print_val(o[k].lat50, " %10.3f");
		print_val(o[k].lat99, " %10.3f");
		print_ratio(o[k].lat50, b->a.exec50);
		printf("\n  %-26s %6d", "  killed after 1.1 s up",
		    o[k].srounds);
		print_val(o[k].slat50, " %10.3f");
		print_val(o[k].slat99, " %10.3f");
		print_ratio(o[k].slat50, b->a.exec50);
		printf("\n");
		if (k != MGR_S6)
			continue;
		printf("  %-26s %6d", "s6 notification-fd", o[k].nrounds);
		print_val(o[k].nlat[0], " %10.3f");
		print_val(o[k].nlat[0] < 0 ? -1 : o[k].nlat[1], " %10.3f");
		print_ratio(o[k].nlat[0], b->a.exec50);
		printf("\n  %-26s %6d", "  killed after 1.1 s up",
		    o[k].nsrounds);
		print_val(o[k].nslat[0], " %10.3f");
		print_val(o[k].nslat[0] < 0 ? -1 : o[k].nslat[1], " %10.3f");
		print_ratio(o[k].nslat[0], b->a.exec50);
		printf("\n");
	}
	printf("  (others: killed as soon as up, then after 1.1 s up; "
	    "supervisord with\n   startsecs=0; rounds bounded to 3 s and "
	    "5 s; s6 notification-fd: the worker\n   is started by a shell "
	    "and says it is ready, 2 s and 4 s)\n");

	printf("\nside by side: an always-failing worker for 3 s\n");
	printf("  %-26s %10s %14s\n", "", "restarts", "manager CPU s");
	printf("  %-26s %10.0f %14.3f\n", "actord backoff 50ms..1s",
	    b->a.fail_b, b->a.fail_b_cpu);
	printf("  %-26s %10.0f %14.3f\n", "actord no backoff", b->a.fail_n,
	    b->a.fail_n_cpu);
	for (k = 0; k < MGR_NKINDS; k++) {
		if (!o[k].installed)
			continue;
		printf("  %-26s", mgr_info[k].name);
		print_val(o[k].fail, " %10.0f");
		print_val(o[k].fail_cpu, "     %10.3f");
		printf("\n");
	}

	printf("\nside by side: 100 services\n");
	printf("  %-14s %10s %9s %10s %9s %11s %9s %8s\n", "", "start ms",
	    "/actord", "PSS kB", "/actord", "kB/service", "idle ctx",
	    "over s");
	printf("  %-14s %10.1f %9s %10.0f %9s %11.1f %9.0f %8.0f\n",
	    "actord", b->a.start100, "1.0x", b->a.pss100, "1.0x",
	    b->a.pss100 / 100, b->a.idle_ctx, b->a.idle_s);
	for (k = 0; k < MGR_NKINDS; k++) {
		if (!o[k].installed)
			continue;
		printf("  %-14s", mgr_info[k].name);
		print_val(o[k].start100, " %10.1f");
		print_ratio(o[k].start100, b->a.start100);
		print_val(o[k].pss100, " %10.0f");
		print_ratio(o[k].pss100, b->a.pss100);
		print_val(o[k].pss100 < 0 ? -1 : o[k].pss100 / 100,
		    "  %10.1f");
		print_val(o[k].idle_ctx, " %9.0f");
		print_val(o[k].idle_s, " %8.0f");
		printf("\n");
	}
	printf("  (PSS: the manager's own processes, workers excluded; "
	    "s6 and runit run one\n   supervise process per service; idle "
	    "over %s s for the others, to keep\n   the bench short)\n",
	    getenv("BENCH_OTHERS_IDLE_S") != NULL ?
	    getenv("BENCH_OTHERS_IDLE_S") : "5");
	printf("  (the failing worker: supervisord with its defaults, "
	    "startsecs=1 and\n   startretries=3; CPU from /proc in clock "
	    "ticks, 0.01 s)\n");
	mgr_print_tail(left, t_others);
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
	{
		/* Absolute and canonical: /proc/PID/exe is compared with it. */
		char real[PATH_MAX];

		if (realpath(b.tworker, real) != NULL &&
		    strlen(real) < sizeof(b.tworker))
			memcpy(b.tworker, real, strlen(real) + 1);
	}
	(void)log_open_file("/dev/null");	/* the restarts are logged */
	b.json = fopen(out != NULL ? out : "/dev/null", "w");
	if (b.json == NULL) {
		fprintf(stderr, "bench_supervisor: %s: %s\n", out,
		    strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	/* What the other managers leave behind comes back here. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fprintf(b.json, "{");
	bench_floor(&b);
	bench_core_latency(&b, false);
	bench_core_latency(&b, true);
	bench_failing(&b, true);
	bench_failing(&b, false);
	bench_scale(&b);
	bench_idle(&b);
	bench_others(&b);
	fprintf(b.json, "\n}\n");
	fclose(b.json);
	return 0;
}
