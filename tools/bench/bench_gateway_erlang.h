/*
 * bench_gateway_erlang.h: Erlang/OTP distribution between two nodes on
 * this host, for tools/bench/bench_gateway.c to set beside the gateway
 * (Debian's erlang-base, installed by tools/install-deps --bench).
 *
 * In a private temporary directory: tools/bench/bench_dist.erl compiled
 * with erlc, a random cookie in its own HOME/.erlang.cookie (mode 0400),
 * and a private epmd on 127.0.0.1 (ERL_EPMD_PORT; -start_epmd false, so
 * that no epmd of the machine is started or used).  The server node
 * (erl -name srv@127.0.0.1, pinned to CPU 1) runs bench_dist:serve(); the
 * client node (CPU 0) runs bench_dist:client/1, which writes its figures
 * to a file and halts.  Everything started is killed by pid and reaped:
 * the client after at most two minutes, then the server and epmd; crash
 * dumps are off.  The bench is built from one source file, so this is a
 * header of static functions marked BENCH_FN.
 */
#ifndef BENCH_GATEWAY_ERLANG_H
#define BENCH_GATEWAY_ERLANG_H

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/bench/bench_common.h"

#define ERL_SRC		"tools/bench/bench_dist.erl"
#define ERL_WAIT_S	120

struct efig {
	bool		 ran;
	char		 why[160];	/* if not */
	double		 call_p50, call_p99;	/* us */
	double		 cast_rate;		/* delivered per s */
	unsigned long long delivered;
};

/* Is prog an executable in $PATH? */
BENCH_FN bool
erl_have(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[512], full[600];
	const char *p, *e;

	for (p = path != NULL ? path : "/usr/bin:/bin"; *p != '\0'; p = e) {
		e = strchr(p, ':');
		if (e == NULL)
			e = p + strlen(p);
		snprintf(dir, sizeof(dir), "%.*s", (int)(e - p), p);
		snprintf(full, sizeof(full), "%s/%s", dir, prog);
		if (access(full, X_OK) == 0)
			return true;
		if (*e == ':')
			e++;
	}
	return false;
}

/*
 * argv run in dir with HOME=dir/home and ERL_EPMD_PORT=port, on cpu (-1:
 * any), its output appended to dir/log: the child's pid.
 */
BENCH_FN pid_t
erl_spawn(const char *dir, int port, int cpu, char *const argv[])
{
	char home[128], log[128], ps[16];
	pid_t pid;
	int fd;

	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	snprintf(ps, sizeof(ps), "%d", port);
	if ((pid = fork()) != 0)
		return pid;
	if (cpu >= 0)
		pin(cpu);
	if (chdir(dir) == -1)
		_exit(127);
	if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600)) != -1) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	if ((fd = open("/dev/null", O_RDONLY)) != -1)
		dup2(fd, 0);
	setenv("HOME", home, 1);
	setenv("ERL_EPMD_PORT", ps, 1);
	setenv("ERL_CRASH_DUMP_SECONDS", "0", 1);
	execvp(argv[0], argv);
	_exit(127);
}

/* Wait for pid at most ms: its status, or -1 (still running). */
BENCH_FN int
erl_wait(pid_t pid, int ms)
{
	int st, k;

	for (k = 0; k <= ms / 10; k++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(10000);
	}
	return -1;
}

BENCH_FN void
erl_kill(pid_t pid)
{
	if (pid > 0 && erl_wait(pid, 0) == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* Does something accept on 127.0.0.1:port within ms? */
BENCH_FN bool
erl_listening(int port, int ms)
{
	struct sockaddr_in sin;
	int fd, waited, ok;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	for (waited = 0; waited <= ms; waited += 20) {
		if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
		    -1)
			return false;
		ok = connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
		close(fd);
		if (ok)
			return true;
		usleep(20000);
	}
	return false;
}

/* A random cookie of letters in dir/home/.erlang.cookie, mode 0400. */
BENCH_FN int
erl_cookie(const char *dir)
{
	char path[160], c[33];
	unsigned char r[32];
	int fd, i;

	snprintf(path, sizeof(path), "%s/home", dir);
	if (mkdir(path, 0700) == -1 ||
	    (fd = open("/dev/urandom", O_RDONLY)) == -1)
		return -1;
	i = (int)read(fd, r, sizeof(r));
	close(fd);
	if (i != (int)sizeof(r))
		return -1;
	for (i = 0; i < 32; i++)
		c[i] = (char)('A' + r[i] % 26);
	c[32] = '\0';
	snprintf(path, sizeof(path), "%s/home/.erlang.cookie", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0400)) == -1)
		return -1;
	i = (int)write(fd, c, 32);
	close(fd);
	return i == 32 ? 0 : -1;
}

/* ncalls timed calls and ncasts casts, epmd on port: e->ran says. */
BENCH_FN void
erlang_dist(size_t ncalls, size_t ncasts, int port, struct efig *e)
{
	char dir[64] = "/tmp/bench-erl-XXXXXX", out[128], nc[24], nk[24],
	    ps[16], cmd[128];
	char *erlc[] = { "erlc", "-o", dir, NULL, NULL };
	char *epmd[] = { "epmd", "-address", "127.0.0.1", "-port", ps, NULL };
	char *srv[] = { "erl", "-name", "srv@127.0.0.1", "-start_epmd",
	    "false", "-kernel", "inet_dist_use_interface", "{127,0,0,1}",
	    "-noshell", "-noinput", "-pa", dir, "-s", "bench_dist", "serve",
	    NULL };
	char *cli[] = { "erl", "-name", "cli@127.0.0.1", "-start_epmd",
	    "false", "-kernel", "inet_dist_use_interface", "{127,0,0,1}",
	    "-noshell", "-noinput", "-pa", dir, "-run", "bench_dist",
	    "client", "srv@127.0.0.1", nc, nk, out, NULL };
	char src[600];
	pid_t pe = -1, ps_ = -1, pc = -1;
	FILE *fp;
	int st;

	memset(e, 0, sizeof(*e));
	if (!erl_have("erl") || !erl_have("erlc") || !erl_have("epmd")) {
		snprintf(e->why, sizeof(e->why), "not installed (erlang-base: "
		    "tools/install-deps --bench)");
		return;
	}
	if (realpath(ERL_SRC, src) == NULL) {
		snprintf(e->why, sizeof(e->why), "no %s (run from the "
		    "repository)", ERL_SRC);
		return;
	}
	if (mkdtemp(dir) == NULL || erl_cookie(dir) == -1) {
		snprintf(e->why, sizeof(e->why), "cannot make a private dir");
		return;
	}
	erlc[3] = src;
	snprintf(out, sizeof(out), "%s/figures", dir);
	snprintf(nc, sizeof(nc), "%zu", ncalls);
	snprintf(nk, sizeof(nk), "%zu", ncasts);
	snprintf(ps, sizeof(ps), "%d", port);
	if ((st = erl_wait(erl_spawn(dir, port, -1, erlc), 60000)) == -1 ||
	    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(e->why, sizeof(e->why), "erlc failed (see %s/log)",
		    dir);
		return;
	}
	pe = erl_spawn(dir, port, -1, epmd);
	if (!erl_listening(port, 5000)) {
		snprintf(e->why, sizeof(e->why), "no epmd on port %d", port);
		goto out;
	}
	ps_ = erl_spawn(dir, port, 1, srv);
	pc = erl_spawn(dir, port, 0, cli);
	if ((st = erl_wait(pc, ERL_WAIT_S * 1000)) == -1 ||
	    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(e->why, sizeof(e->why), "the client node failed or "
		    "took over %d s (see %s/log)", ERL_WAIT_S, dir);
		goto out;
	}
	pc = -1;
	if ((fp = fopen(out, "r")) != NULL) {
		e->ran = fscanf(fp, "%lf %lf %lf %llu", &e->call_p50,
		    &e->call_p99, &e->cast_rate, &e->delivered) == 4;
		fclose(fp);
	}
	if (!e->ran)
		snprintf(e->why, sizeof(e->why), "no figures (see %s/log)",
		    dir);
out:
	erl_kill(pc);
	erl_kill(ps_);
	erl_kill(pe);
	if (e->ran) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
}

#endif /* BENCH_GATEWAY_ERLANG_H */
