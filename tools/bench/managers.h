/*
 * managers.h: the other process managers the benchmarks compare actord
 * with (s6, runit, supervisord), driven the same way by bench_supervisor.c
 * and bench_ctl.c.
 *
 * It owns: writing a private service directory (s6, runit) or
 * configuration (supervisord) in a temp dir, starting the manager's own
 * instance (s6-svscan, runsvdir, supervisord -n) as a child of the bench,
 * finding a service's worker (a descendant of the manager whose executable
 * is the bench's worker program and whose cwd is the service's directory),
 * reading the manager processes' CPU, context switches and PSS, and
 * stopping everything it started by pid: the manager's whole tree is
 * frozen (SIGSTOP, repeated until no new process appears), then killed and
 * reaped.  The bench is a child subreaper, so what outlives its parent
 * comes back to the bench.
 *
 * It must never touch a process it did not start (everything is found from
 * the manager's pid down), never use the machine's own service
 * directories or configuration, and never wait unboundedly.
 *
 * The bench programs are built one source file each, so this module is a
 * header of static functions, each marked MGR_FN (unused ones are fine).
 */
#ifndef BENCH_MANAGERS_H
#define BENCH_MANAGERS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MGR_FN		__attribute__((unused)) static
#define MGR_MAXPIDS	4096

enum mgr_kind { MGR_S6, MGR_RUNIT, MGR_SUPERVISORD, MGR_NKINDS };

/* How a service runs its worker. */
enum mgr_svc {
	MGR_SVC_RUN,		/* worker "run", exec'd directly */
	MGR_SVC_FAIL,		/* a start counted in DIR/starts, then exit 1 */
	MGR_SVC_NOTIFY		/* s6 only: "run", ready through
				   notification-fd 3 (a shell sets it up) */
};

struct mgr {
	enum mgr_kind	 kind;
	char		 dir[64];	/* private temp dir */
	char		 worker[600];	/* the worker program */
	pid_t		 pid;		/* s6-svscan, runsvdir, supervisord */
	int		 nsvc;
};

/* One kind's programs: [0] starts it, the others must be there too. */
static const struct mgr_info {
	const char	*name;
	const char	*progs[3];
	const char	*ctl;		/* the control tool */
} mgr_info[MGR_NKINDS] = {
	{ "s6", { "s6-svscan", "s6-supervise", "s6-svc" }, "s6-svc" },
	{ "runit", { "runsvdir", "runsv", "sv" }, "sv" },
	{ "supervisord", { "supervisord", "supervisorctl", "supervisorctl" },
	    "supervisorctl" },
};

MGR_FN uint64_t
mgr_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The last lines of a side-by-side: what was left over, and its cost. */
MGR_FN void
mgr_print_tail(int left, uint64_t t_others)
{
	printf("leftover processes of the other managers: %d%s\n", left,
	    left == 0 ? " (none)" : " (killed)");
	printf("(the other managers took %.1f s of this benchmark)\n",
	    (double)(mgr_now_us() - t_others) / 1e6);
}

MGR_FN bool
mgr_in_path(const char *prog, char *full, size_t len)
{
	char buf[4096], *p, *dir, *save = NULL;
	const char *path = getenv("PATH");

	snprintf(buf, sizeof(buf), "%s", path != NULL ? path :
	    "/usr/sbin:/usr/bin:/sbin:/bin");
	for (p = buf; (dir = strtok_r(p, ":", &save)) != NULL; p = NULL) {
		snprintf(full, len, "%s/%s", dir, prog);
		if (access(full, X_OK) == 0)
			return true;
	}
	return false;
}

MGR_FN bool
mgr_installed(enum mgr_kind k)
{
	char full[4200];
	int i;

	for (i = 0; i < 3; i++)
		if (!mgr_in_path(mgr_info[k].progs[i], full, sizeof(full)))
			return false;
	return true;
}

/* The directory of service name: where its worker runs (its cwd). */
MGR_FN void
mgr_svcdir(const struct mgr *m, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/sv/%s", m->dir, name);
}

MGR_FN int
mgr_write(const char *path, mode_t mode, const char *text)
{
	FILE *f;

	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fputs(text, f);
	fclose(f);
	return chmod(path, mode);
}

/* The service's run file (s6, runit) or program section (supervisord). */
MGR_FN int
mgr_add_service(struct mgr *m, FILE *conf, const char *name,
    enum mgr_svc how)
{
	char dir[256], path[300], text[2048];

	mgr_svcdir(m, name, dir, sizeof(dir));
	if (mkdir(dir, 0755) == -1)
		return -1;
	if (m->kind == MGR_SUPERVISORD) {
		if (how == MGR_SVC_RUN)
			fprintf(conf, "[program:%s]\ncommand=%s run\n", name,
			    m->worker);
		else
			fprintf(conf, "[program:%s]\ncommand=/bin/sh -c "
			    "'echo >>%s/starts; exec %s exit 1'\n", name,
			    m->dir, m->worker);
		/*
		 * startsecs=0: running as soon as it is spawned, so a kill
		 * right after a start is a restart, not a failed start
		 * (supervisord's closest to backoff_min = 0).  The failing
		 * worker keeps supervisord's defaults (startsecs=1,
		 * startretries=3), as users run it.
		 */
		fprintf(conf, "directory=%s\nautorestart=true\n%s"
		    "stdout_logfile=NONE\nstderr_logfile=NONE\n\n", dir,
		    how == MGR_SVC_RUN ? "startsecs=0\n" : "");
		return 0;
	}
	if (how == MGR_SVC_NOTIFY) {
		snprintf(path, sizeof(path), "%s/notification-fd", dir);
		if (mgr_write(path, 0644, "3\n") == -1)
			return -1;
	}
	snprintf(path, sizeof(path), "%s/run", dir);
	if (how == MGR_SVC_RUN)		/* no shell: the kernel execs it */
		snprintf(text, sizeof(text), "#!%s run\n", m->worker);
	else if (how == MGR_SVC_NOTIFY)
		snprintf(text, sizeof(text), "#!/bin/sh\nACTORD_NOTIFY_FD=3\n"
		    "export ACTORD_NOTIFY_FD\nexec %s fd 0\n", m->worker);
	else
		snprintf(text, sizeof(text), "#!/bin/sh\necho >>%s/starts\n"
		    "exec %s exit 1\n", m->dir, m->worker);
	return mgr_write(path, 0755, text);
}

/*
 * A private instance of kind k with n services named by name(i), each
 * run as how; its stdout and stderr (and its workers') go to DIR/log.  0,
 * or -1 with nothing left running.
 */
MGR_FN int
mgr_start(struct mgr *m, enum mgr_kind k, const char *worker, int n,
    enum mgr_svc how, const char *(*name)(int, char *, size_t))
{
	char path[300], nb[64], prog[4200];
	FILE *conf = NULL;
	int i, fd;

	memset(m, 0, sizeof(*m));
	m->kind = k;
	m->nsvc = n;
	snprintf(m->worker, sizeof(m->worker), "%s", worker);
	/* The bench's pid in the name: its leftovers, nobody else's. */
	snprintf(m->dir, sizeof(m->dir), "/tmp/bench-mgr-%d-XXXXXX",
	    (int)getpid());
	if (mkdtemp(m->dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/sv", m->dir);
	mkdir(path, 0755);
	if (k == MGR_SUPERVISORD) {
		snprintf(path, sizeof(path), "%s/supervisord.conf", m->dir);
		if ((conf = fopen(path, "w")) == NULL)
			return -1;
		fprintf(conf, "[supervisord]\nnodaemon=true\n"
		    "logfile=%s/supervisord.log\npidfile=%s/supervisord.pid\n"
		    "childlogdir=%s\nuser=root\n\n"
		    "[unix_http_server]\nfile=%s/supervisor.sock\n\n"
		    "[rpcinterface:supervisor]\nsupervisor.rpcinterface_factory"
		    " = supervisor.rpcinterface:make_main_rpcinterface\n\n"
		    "[supervisorctl]\nserverurl=unix://%s/supervisor.sock\n\n",
		    m->dir, m->dir, m->dir, m->dir, m->dir);
	}
	for (i = 0; i < n; i++)
		if (mgr_add_service(m, conf, name(i, nb, sizeof(nb)), how) ==
		    -1) {
			if (conf != NULL)
				fclose(conf);
			return -1;
		}
	if (conf != NULL)
		fclose(conf);
	if (!mgr_in_path(mgr_info[k].progs[0], prog, sizeof(prog)))
		return -1;
	if ((m->pid = fork()) == -1)
		return -1;
	if (m->pid == 0) {
		snprintf(path, sizeof(path), "%s/log", m->dir);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) !=
		    -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if ((fd = open("/dev/null", O_RDONLY)) != -1)
			dup2(fd, 0);
		setsid();
		snprintf(path, sizeof(path), "%s/sv", m->dir);
		if (k == MGR_SUPERVISORD) {
			snprintf(path, sizeof(path), "%s/supervisord.conf",
			    m->dir);
			execl(prog, prog, "-n", "-c", path, (char *)NULL);
		} else
			execl(prog, prog, path, (char *)NULL);
		_exit(127);
	}
	return 0;
}

/* The children of pid, appended to out; how many there are now. */
MGR_FN int
mgr_children(pid_t pid, pid_t *out, int n, int max)
{
	char path[320];
	DIR *d;
	struct dirent *e;
	FILE *f;
	int c;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return n;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children",
		    (int)pid, e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (n < max && fscanf(f, "%d", &c) == 1)
			out[n++] = c;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* Every descendant of the manager, breadth first; how many. */
MGR_FN int
mgr_tree(const struct mgr *m, pid_t *out, int max)
{
	int i, n = 0;

	if (m->pid <= 0)
		return 0;
	n = mgr_children(m->pid, out, 0, max);
	for (i = 0; i < n; i++)
		n = mgr_children(out[i], out, n, max);
	return n;
}

MGR_FN bool
mgr_link_is(pid_t pid, const char *what, const char *want)
{
	char path[64], buf[1024];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	if ((r = readlink(path, buf, sizeof(buf) - 1)) <= 0)
		return false;
	buf[r] = '\0';
	return strcmp(buf, want) == 0;
}

/*
 * The running worker of service name (its program exec'd, in its
 * directory), or 0.  Under s6 and runit it is a grandchild of the
 * manager; under supervisord, a child.
 */
MGR_FN pid_t
mgr_worker(const struct mgr *m, const char *name)
{
	pid_t pids[MGR_MAXPIDS], lvl1[1024];
	char dir[256];
	int i, n, n1;

	mgr_svcdir(m, name, dir, sizeof(dir));
	n1 = mgr_children(m->pid, lvl1, 0, 1024);
	if (m->kind == MGR_SUPERVISORD) {
		for (i = 0; i < n1; i++)
			if (mgr_link_is(lvl1[i], "cwd", dir) &&
			    mgr_link_is(lvl1[i], "exe", m->worker))
				return lvl1[i];
		return 0;
	}
	/* The supervise process runs in the service directory too. */
	for (i = 0; i < n1; i++) {
		if (!mgr_link_is(lvl1[i], "cwd", dir))
			continue;
		n = mgr_children(lvl1[i], pids, 0, MGR_MAXPIDS);
		while (n-- > 0)
			if (mgr_link_is(pids[n], "exe", m->worker))
				return pids[n];
	}
	return 0;
}

/* How many of the manager's descendants run the worker program. */
MGR_FN int
mgr_count_workers(const struct mgr *m)
{
	pid_t pids[MGR_MAXPIDS];
	int i, n, c = 0;

	n = mgr_tree(m, pids, MGR_MAXPIDS);
	for (i = 0; i < n; i++)
		c += mgr_link_is(pids[i], "exe", m->worker);
	return c;
}

/* Wait up to ms for the manager to run want workers; the time, or -1. */
MGR_FN double
mgr_wait_workers(const struct mgr *m, int want, int ms)
{
	uint64_t t0 = mgr_now_us(), end = t0 + (uint64_t)ms * 1000;

	while (mgr_now_us() < end) {
		if (mgr_count_workers(m) >= want)
			return (double)(mgr_now_us() - t0) / 1000.0;
		usleep(1000);
	}
	return -1;
}

/*
 * The manager's own processes (not the workers, not a shell about to
 * exec one): the manager and the descendants whose executable is not the
 * worker's.
 */
MGR_FN int
mgr_own(const struct mgr *m, pid_t *out, int max)
{
	pid_t pids[MGR_MAXPIDS];
	int i, n, k = 0;

	if (m->pid <= 0 || max < 1)
		return 0;
	out[k++] = m->pid;
	n = mgr_tree(m, pids, MGR_MAXPIDS);
	for (i = 0; i < n && k < max; i++)
		if (!mgr_link_is(pids[i], "exe", m->worker) &&
		    !mgr_link_is(pids[i], "exe", "/usr/bin/dash"))
			out[k++] = pids[i];
	return k;
}

/* utime + stime of the manager's own processes, in seconds. */
MGR_FN double
mgr_cpu_s(const struct mgr *m)
{
	pid_t pids[MGR_MAXPIDS];
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	double total = 0;
	int i, n;
	FILE *f;

	n = mgr_own(m, pids, MGR_MAXPIDS);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pids[i]);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) != NULL &&
		    (p = strrchr(buf, ')')) != NULL &&
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
		    "%*u %lu %lu", &ut, &st) == 2)
			total += (double)(ut + st) /
			    (double)sysconf(_SC_CLK_TCK);
		fclose(f);
	}
	return total;
}

/* The sum of field (e.g. "Pss:") in /proc/PID/file over the manager's own. */
MGR_FN long
mgr_sum(const struct mgr *m, const char *file, const char *field)
{
	pid_t pids[MGR_MAXPIDS];
	char path[64], line[256];
	size_t len = strlen(field);
	long v, total = 0;
	int i, n;
	FILE *f;

	n = mgr_own(m, pids, MGR_MAXPIDS);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pids[i], file);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, field, len) == 0 &&
			    sscanf(line + len, " %ld", &v) == 1)
				total += v;
		fclose(f);
	}
	return total;
}

MGR_FN long
mgr_ctxt(const struct mgr *m)
{
	return mgr_sum(m, "status", "voluntary_ctxt_switches:") +
	    mgr_sum(m, "status", "nonvoluntary_ctxt_switches:");
}

/* Lines in DIR/starts: how many times the failing worker was started. */
MGR_FN int
mgr_starts(const struct mgr *m)
{
	char path[128];
	FILE *f;
	int c, n = 0;

	snprintf(path, sizeof(path), "%s/starts", m->dir);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/*
 * Stop everything the manager started, by pid: freeze its tree until no
 * new process appears (a frozen supervisor cannot respawn), then SIGKILL
 * the manager and every frozen pid, and reap what comes back to us.
 * Returns how many processes were killed besides the manager.
 */
MGR_FN int
mgr_stop(struct mgr *m)
{
	pid_t pids[MGR_MAXPIDS];
	char cmd[128];
	uint64_t end;
	int i, n = 0, prev = -1, rounds;

	if (m->pid <= 0) {		/* never started: only its files */
		if (strncmp(m->dir, "/tmp/bench-mgr-", 15) == 0) {
			snprintf(cmd, sizeof(cmd), "rm -rf '%s'", m->dir);
			(void)!system(cmd);
		}
		return 0;
	}
	kill(m->pid, SIGSTOP);
	for (rounds = 0; rounds < 50 && n != prev; rounds++) {
		prev = n;
		n = mgr_tree(m, pids, MGR_MAXPIDS);
		for (i = 0; i < n; i++)
			kill(pids[i], SIGSTOP);
		usleep(2000);
	}
	kill(m->pid, SIGKILL);
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	waitpid(m->pid, NULL, 0);
	/* The orphans come back to this subreaper; reap them, bounded. */
	end = mgr_now_us() + 2000000;
	for (i = 0; i < n && mgr_now_us() < end; ) {
		if (waitpid(pids[i], NULL, WNOHANG) == pids[i] ||
		    (kill(pids[i], 0) == -1 && errno == ESRCH))
			i++;
		else
			usleep(1000);
	}
	m->pid = 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", m->dir);
	(void)!system(cmd);
	return n;
}

/*
 * Processes left from this bench's manager instances: a manager program
 * or the worker whose cwd or command line names /tmp/bench-mgr-PID-
 * (PID: this bench's).  Each is printed and killed by pid; how many.
 */
MGR_FN int
mgr_leftovers(const char *worker)
{
	static const char *const names[] = { "s6-svscan", "s6-supervise",
	    "runsvdir", "runsv", "supervisord" };
	char path[300], comm[64], buf[1024], cwd[1024], mine[64];
	struct dirent *e;
	size_t i;
	ssize_t r;
	FILE *f;
	DIR *d;
	int n = 0, fd, hit;

	snprintf(mine, sizeof(mine), "/tmp/bench-mgr-%d-", (int)getpid());
	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) == NULL)
			comm[0] = '\0';
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		hit = mgr_link_is(atoi(e->d_name), "exe", worker);
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			hit |= strcmp(comm, names[i]) == 0;
		if (!hit)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		if ((fd = open(path, O_RDONLY)) == -1)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (i = 0; r > 0 && i < (size_t)r; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[r > 0 ? r : 0] = '\0';
		snprintf(path, sizeof(path), "/proc/%s/cwd", e->d_name);
		r = readlink(path, cwd, sizeof(cwd) - 1);
		cwd[r > 0 ? r : 0] = '\0';
		if (strstr(buf, mine) == NULL && strstr(cwd, mine) == NULL)
			continue;
		printf("  LEFTOVER pid %s %s (%s): killed\n", e->d_name, comm,
		    buf);
		kill(atoi(e->d_name), SIGKILL);
		n++;
	}
	closedir(d);
	return n;
}

#endif
