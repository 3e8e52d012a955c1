/*
 * bench_gateway_nodes.h: the nodes of tools/bench/bench_gateway.c.  Up to
 * NET_MAX actords on 127.0.0.1, each a node with its own temporary
 * directory, key pair (zmq_curve_keypair) and port, each listing every
 * other one as a peer (a full mesh), started pinned to a CPU or not,
 * stopped by pid; and what /proc says of a process and its threads:
 * context switches, CPU time, resident memory.
 *
 * It must never touch a process it did not start (a node's gateway is
 * found as the child of that node's actord), and never wait unboundedly.
 * The bench is built from one source file, so this is a header of static
 * functions marked BENCH_FN (bench_common.h).
 */
#ifndef BENCH_GATEWAY_NODES_H
#define BENCH_GATEWAY_NODES_H

#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "tools/bench/bench_common.h"

#define NET_MAX		16

struct bnode {
	char		 dir[64];
	char		 name[8];
	char		 pub[41], sec[41];
	int		 port;
	pid_t		 pid;		/* its actord; -1: not running */
};

struct bnet {
	struct bnode	 n[NET_MAX];
	int		 count;
};

/* A process's figures, all its threads together. */
struct pstat {
	uint64_t	 vcs, ivcs;	/* voluntary (wake-ups), involuntary */
	uint64_t	 main_vcs;	/* of its first thread alone */
	double		 cpu_s;		/* on a CPU (schedstat) */
	uint64_t	 rss_kb;
};

BENCH_FN void
net_write(const char *path, const char *text, mode_t mode)
{
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)) == -1) {
		perror(path);
		exit(1);
	}
	(void)!write(fd, text, strlen(text));
	close(fd);
}

/* count nodes named a, b, ..., on ports base, base + 1, ...: 0 or -1. */
BENCH_FN int
net_init(struct bnet *net, int count, int base)
{
	int i;

	memset(net, 0, sizeof(*net));
	net->count = count;
	for (i = 0; i < count; i++) {
		struct bnode *n = &net->n[i];

		n->pid = -1;
		n->port = base + i;
		snprintf(n->name, sizeof(n->name), "%c", 'a' + i);
		snprintf(n->dir, sizeof(n->dir), "/tmp/bench-gw-%c-XXXXXX",
		    'a' + i);
		if (mkdtemp(n->dir) == NULL ||
		    zmq_curve_keypair(n->pub, n->sec) != 0)
			return -1;
	}
	return 0;
}

/*
 * Node i's actord.conf: the others as peers, children (libconfig
 * groups, comma-separated; "" for none: the gateway alone), and more of
 * the node block (extra, or "").
 */
BENCH_FN void
net_conf(struct bnet *net, int i, const char *children, const char *extra)
{
	struct bnode *n = &net->n[i];
	char path[128], key[64], *conf, *peers;
	size_t len = 0, cap = 512 * NET_MAX + 4096;
	int j;

	if ((conf = malloc(cap)) == NULL || (peers = malloc(cap)) == NULL)
		exit(1);
	peers[0] = '\0';
	for (j = 0; j < net->count; j++) {
		if (j == i)
			continue;
		len += (size_t)snprintf(peers + len, cap - len, "%s{ name = "
		    "\"%s\"; endpoint = \"tcp://127.0.0.1:%d\"; public_key = "
		    "\"%s\"; }", len > 0 ? ",\n    " : "", net->n[j].name,
		    net->n[j].port, net->n[j].pub);
	}
	snprintf(key, sizeof(key), "%s\n", n->sec);
	snprintf(path, sizeof(path), "%s/%s.key", n->dir, n->name);
	net_write(path, key, 0600);
	snprintf(conf, cap,
	    "runtime_dir = \"%s/run\";\n"
	    "node = { name = \"%s\"; listen = \"tcp://127.0.0.1:%d\";\n"
	    "  secret_key_file = \"%s\";\n  %s\n"
	    "  peers = ( %s ); };\n"
	    "supervisor = { children = ( %s ); };\n", n->dir, n->name,
	    n->port, path, extra, peers, children);
	snprintf(path, sizeof(path), "%s/actord.conf", n->dir);
	net_write(path, conf, 0644);
	free(conf);
	free(peers);
}

/* Node i's actord, on cpu (-1: any), its output in its actord.log. */
BENCH_FN void
net_start(struct bnet *net, int i, int cpu)
{
	struct bnode *n = &net->n[i];
	char conf[128], log[128], actord[256];
	const char *build = getenv("BUILD");
	int fd;

	snprintf(conf, sizeof(conf), "%s/actord.conf", n->dir);
	snprintf(log, sizeof(log), "%s/actord.log", n->dir);
	snprintf(actord, sizeof(actord), "%s/actord", build ? build : "build");
	if ((n->pid = fork()) == 0) {
		if (cpu >= 0)
			pin(cpu);
		if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) !=
		    -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(actord, actord, "-c", conf, (char *)NULL);
		_exit(127);
	}
}

/* Does node i's log hold what? */
BENCH_FN bool
net_log_has(const struct bnet *net, int i, const char *what)
{
	char path[128], *buf;
	FILE *fp;
	size_t n;
	bool found = false;

	snprintf(path, sizeof(path), "%s/actord.log", net->n[i].dir);
	if ((fp = fopen(path, "r")) == NULL)
		return false;
	if ((buf = malloc(1 << 20)) != NULL) {
		n = fread(buf, 1, (1 << 20) - 1, fp);
		buf[n] = '\0';
		found = strstr(buf, what) != NULL;
		free(buf);
	}
	fclose(fp);
	return found;
}

/* Within ms, has every node seen every other one up?  */
BENCH_FN bool
net_all_up(const struct bnet *net, int ms)
{
	char want[64];
	int i, j, waited;

	for (i = 0; i < net->count; i++)
		for (j = 0; j < net->count; j++) {
			if (i == j)
				continue;
			snprintf(want, sizeof(want), "gateway: peer %s up",
			    net->n[j].name);
			for (waited = 0; !net_log_has(net, i, want);
			    waited += 50) {
				if (waited >= ms)
					return false;
				usleep(50000);
			}
		}
	return true;
}

/* The pid of node i's gateway (its actord's child actord-gateway). */
BENCH_FN pid_t
net_gateway(const struct bnet *net, int i)
{
	char path[300], buf[512], *p;
	struct dirent *d;
	DIR *dir;
	FILE *fp;
	pid_t found = -1;
	int ppid;

	if ((dir = opendir("/proc")) == NULL)
		return -1;
	while (found == -1 && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		if ((fp = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), fp) != NULL &&
		    strstr(buf, "(actord-gateway)") != NULL &&
		    (p = strrchr(buf, ')')) != NULL &&
		    sscanf(p + 2, "%*c %d", &ppid) == 1 &&
		    ppid == net->n[i].pid)
			found = atoi(d->d_name);
		fclose(fp);
	}
	closedir(dir);
	return found;
}

/* The value of key (such as "VmRSS:") in a /proc status file, or 0. */
BENCH_FN uint64_t
proc_field(const char *path, const char *key)
{
	char line[256];
	uint64_t v = 0;
	FILE *fp;

	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, key, strlen(key)) == 0) {
			v = strtoull(line + strlen(key), NULL, 10);
			break;
		}
	fclose(fp);
	return v;
}

/* pid's figures now, its threads summed: 0, or -1 if it is gone. */
BENCH_FN int
proc_stat(pid_t pid, struct pstat *s)
{
	char path[300];
	unsigned long long ns;
	struct dirent *d;
	DIR *dir;
	FILE *fp;

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while ((d = readdir(dir)) != NULL) {
		uint64_t v;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status",
		    (int)pid, d->d_name);
		v = proc_field(path, "voluntary_ctxt_switches:");
		s->vcs += v;
		if (atoi(d->d_name) == (int)pid)
			s->main_vcs = v;
		s->ivcs += proc_field(path, "nonvoluntary_ctxt_switches:");
		/* Time on a CPU, in ns (the scheduler's own count). */
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat",
		    (int)pid, d->d_name);
		if ((fp = fopen(path, "r")) != NULL) {
			if (fscanf(fp, "%llu", &ns) == 1)
				s->cpu_s += (double)ns / 1e9;
			fclose(fp);
		}
	}
	closedir(dir);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s->rss_kb = proc_field(path, "VmRSS:");
	return 0;
}

/*
 * Every node stopped (SIGTERM, then SIGKILL after 10 s) and reaped; the
 * directories removed, unless keep (a failure: their logs say why).
 */
BENCH_FN void
net_stop(struct bnet *net, bool keep)
{
	char cmd[128];
	int i, k;

	for (i = 0; i < net->count; i++)
		if (net->n[i].pid > 0)
			kill(net->n[i].pid, SIGTERM);
	for (i = 0; i < net->count; i++) {
		if (net->n[i].pid <= 0)
			continue;
		for (k = 0; k < 1000 && waitpid(net->n[i].pid, NULL,
		    WNOHANG) == 0; k++)
			usleep(10000);
		if (k == 1000) {
			kill(net->n[i].pid, SIGKILL);
			waitpid(net->n[i].pid, NULL, 0);
		}
		net->n[i].pid = -1;
	}
	for (i = 0; i < net->count; i++) {
		if (keep) {
			fprintf(stderr, "bench_gateway: see %s/actord.log\n",
			    net->n[i].dir);
			continue;
		}
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", net->n[i].dir);
		(void)!system(cmd);
	}
}

#endif /* BENCH_GATEWAY_NODES_H */
