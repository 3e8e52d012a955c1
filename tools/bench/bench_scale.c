/*
 * bench_scale.c: what the tree costs as it grows (issue 13), at N = 1, 100,
 * 1,000 and 10,000 workers of a minimal libactor actor (tests/progs/
 * actor_echo, the default mailbox, ready = "actor"), each figure beside its
 * floor on this machine and its target:
 *
 *   start		the real actord, fork to READY=1, against the floor:
 *			fork/exec of N processes (tworker run, exec seen
 *			through a close-on-exec pipe) that attach nothing;
 *			and against the tree's own floor, two execs: fork/exec
 *			of launch_floor, a program that starts N tworkers at
 *			once (vfork/exec) and says so once each has reached
 *			its main and written a byte (tests/progs/launch_floor.c)
 *   memory		the real actord, idle: its private memory (the arena
 *			mapping left out), its page tables (VmPTE: what its
 *			mapping of every mailbox costs the kernel) plus the
 *			arena's resident pages (the memfd's allocated
 *			blocks), per actor
 *   restart		SIGKILL of one actor to its next incarnation running
 *			(actord's core in this process, backoff 0), once the
 *			machine is quiet after the start (settle)
 *   send		p50 of a tell by path and by reference to an idle
 *			actor chosen at random, one every 100 us, and of the
 *			lookup alone; the floor: a bare FUTEX_WAKE of one of
 *			64 processes asleep, at random, at the same pace;
 *			and the pages of the arena one tell references (the
 *			floor's: one, the word it wakes)
 *   sparse		every actor receives 10 messages a second from 4
 *			producer processes for BENCH_SCALE_SPARSE_S seconds
 *			(default 10): the CPU time of every process (actors,
 *			producers, actord), against the same schedule over
 *			one pipe per actor with each reader blocked in read,
 *			and over bare futex mailboxes, the floor of any
 *			design in shared memory: a word per receiver, laid
 *			out a mailbox apart as in the arena, each receiver
 *			a process in FUTEX_WAIT on it; then a FUTEX_WAKE
 *			of one of those N sleepers, timed as send's floor;
 *			then that floor again with its receivers out of
 *			rseq (the kernel's update of a thread's rseq area
 *			on every return to user space after it slept: what
 *			it costs each wake-up, in every design alike); then
 *			the floor with the message's 64 bytes: each write
 *			and read through a cell on the lines after the
 *			word (what any mailbox in shared memory moves
 *			besides the wake-up; a pipe copies them too).  Per
 *			message, of each design: the receivers' and the
 *			producers' CPU time and minor page faults (a fault:
 *			a page the process maps for the first time, such as
 *			a lane's next page of cells in its first lap).  At
 *			N <= BENCH_SCALE_LAP2_MAX (default 1,000) the actors
 *			again in their lanes' second lap (every lane once
 *			round, every page of the arena mapped in each
 *			producer): what a tree that has run a while pays,
 *			the first lap's page faults left out
 *   fan-in		P = 1, 10, 100, 1,000 producer processes telling one
 *			actor as fast as they can: messages per second (each
 *			forked, attached and warmed by one message sent and
 *			taken before the start, gone after the end), and
 *			blocked senders woken per message; P = 10
 *			and 1,000 again with ten times the messages (what a
 *			process costs to start, wake and fault in, spread
 *			over 2,000 messages each at P = 1,000, not 200); the
 *			floor: the bare MPSC ring with P = 10 and 1,000 of the
 *			same producers, asleep on a futex while it is full,
 *			woken all at once or one at a time (floor_put).  Per
 *			message, of each run: the senders' CPU time, sleeps,
 *			preemptions and page faults, and the consumer's CPU
 *			time, time runnable but not running, sleeps and
 *			preemptions
 *   one_for_all	a one_for_all supervisor of N actors: SIGKILL of one
 *			to all N running again, against the floor's N stops
 *			(SIGTERM, waitpid) and N starts; with the default
 *			start = "ordered" (each child once the one before is
 *			ready, stops last first) and with start = "parallel"
 *			(independent children: all stopped, then started 32
 *			at a time); and against the floors of those two
 *			modes, in processes that reach main and write a byte
 *			(tworker fd 0, vfork/exec): N stops last first, each
 *			awaited, then N starts, each awaited until its byte
 *			came; N SIGTERMs then N waits, N starts then N bytes.
 *			Beside each, where the time goes: the CPU time per
 *			child of actord (this process) in the stops and in
 *			the starts, and of each actor over its life (start,
 *			idle, exit: RUSAGE_CHILDREN as the N are reaped);
 *			and of the floor's starter and of its processes;
 *			and the minor page faults of an actor's life and
 *			of a floor process's, counts that the machine's
 *			load does not change
 *
 * A figure that cannot be measured (the tree does not start, a producer
 * finds no slot) is null in the JSON with the reason beside it.  Every
 * process started here is stopped and reaped by pid before the next phase.
 * BENCH_SCALE_N overrides the list of N ("1 100 1000 10000");
 * BENCH_SCALE_PHASES runs only the phases named ("floor start core ofa";
 * core is "restart send fanin sparse", each of which may be named alone;
 * the pipes follow sparse), to look at one with a profiler, and
 * BENCH_SCALE_FANIN_P only the fan-in P named ("1 10 100 1000");
 * BENCH_SCALE_FANIN_FLOOR=0 leaves the fan-in's floor out,
 * BENCH_SCALE_RSEQ=0 starts the actors with glibc.pthread.rseq=0 in
 * GLIBC_TUNABLES and the pipes' readers out of rseq (actors against
 * pipes, both without: the floor runs with and without anyway), and
 * BENCH_SCALE_WINDOWS set writes each timed fan-in run's window to
 * stderr (see fanin_window: a profile of the runs alone).  Writes
 * its figures to $BENCH_JSON and a table to stdout.  Needs $BUILD/actord,
 * $BUILD/tests/progs/actor_echo, $BUILD/tests/progs/tworker and
 * $BUILD/tests/progs/launch_floor.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/rseq.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "supervisor/actord.h"
#include "supervisor/config.h"
#include "supervisor/log.h"
#include "tools/bench/bench_common.h"
#include "worker/actor.h"

#define MAX_NS		8
#define GROUP_MAX	1000	/* instances per group (SPEC_INSTANCES_MAX) */
#define RESTART_ROUNDS	200	/* a p50 steady on a shared machine */
#define SETTLE_MAX_MS	20000	/* before the restarts: quiet, or this */
#define SETTLE_WINDOW_MS 200
#define SEND_ROUNDS	2000
#define SEND_PAGE_ROUNDS 64	/* tells whose pages are counted */
#define SEND_GAP_NS	100000	/* between sends: the target is asleep */
#define FLOOR_SLEEPERS	64	/* processes asleep in FUTEX_WAIT: the floor */
#define SPARSE_RATE	10	/* messages per actor per second */
#define SPARSE_PRODUCERS 4
#define FANIN_MSGS	200000
#define FANIN_LONG_MSGS	2000000	/* the ratio again, 10 times longer */
#define FANIN_P_MAX	1000	/* the largest of fanin_p */
#define MSG_LEN		64
#define TAG_IGNORED	99	/* actor_echo ignores it */
#define NO_PROGRESS_MS	20000	/* a start that stalls this long failed */
#define LAP_MS		60000	/* a quarter of every lane, taken */
#define LAP2_MAX	1000	/* the second lap's N: its pages resident */

struct bench {
	char		 build[512];
	char		 echo[PATH_MAX];
	char		 tworker[PATH_MAX];
	char		 launch[PATH_MAX];	/* launch_floor */
	char		 actord[PATH_MAX];
	FILE		*json;
	int		 first;
	int		 sparse_s;
	int		 lap2_max;	/* the largest N of the second lap */
	bool		 rseq;		/* false: actors, pipe readers without */
};

/* The designs the sparse schedule runs over (bench_sparse ...). */
enum sparse_design { SP_ACTORS, SP_PIPES, SP_FUTEX, SP_NORSEQ, SP_CELL,
	SP_LAP2, SP_DESIGNS };

/* The figures of one N, for the table; < 0: not measured. */
struct row {
	int		 n;
	double		 floor_start, floor_stop, start, mem_total_kb;
	double		 floor_tree;		/* two execs, to main */
	double		 seq_start, seq_stop;	/* each awaited, to main */
	double		 seq_child_cpu;		/* per process, its life, us */
	double		 seq_parent_cpu;	/* per process, the starter's */
	double		 seq_child_flt;		/* per process, its life */
	double		 ofa_cpu[2][3];		/* [parallel]: actord's per
						   stop and start, each
						   actor's life, us */
	double		 ofa_flt[2];		/* [parallel]: minor page
						   faults, each actor's life */
	double		 par_start, par_stop;	/* all at once, to main */
	double		 mem_per_actor_kb, restart50, restart99;
	double		 restart_cpu;		/* actord's, per restart, us */
	double		 path50, ref50, lookup50, wake50;
	double		 sparse_cpu, pipe_cpu;
	double		 futex_cpu;		/* bare futex mailboxes */
	double		 futex_norseq_cpu;	/* ... receivers out of rseq */
	double		 futex_cell_cpu;	/* ... and the message's bytes */
	double		 lap2_cpu;		/* actors, lanes' second lap */
	/*
	 * Per message, of actors, pipes, the floor, the floor without rseq,
	 * the floor with cells, actors in their second lap (enum
	 * sparse_design): receivers' and producers' CPU us, and their minor
	 * page faults.
	 */
	double		 per_msg[SP_DESIGNS][4];
	double		 wake_n50;		/* FUTEX_WAKE among N asleep */
	size_t		 mb_stride;		/* the arena's, between mailboxes */
	double		 fanin[4];
	double		 fanin_long[2];		/* P = 10, 1000: LONG_MSGS */
	double		 fanin_floor[2][2];	/* all/one woken, P = 10/1000 */
	double		 ofa, ofa_floor;
	double		 ofa_par;		/* start = "parallel" */
	char		 why[256];		/* the first failure */
};

static const int fanin_p[4] = { 1, 10, 100, 1000 };
static const int fanin_p2[2] = { 10, 1000 };	/* the ratio's two */

static void	 emit(struct bench *, int, const char *, double);
static void	 emit_str(struct bench *, int, const char *, const char *);
static void	 fail(struct row *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static uint64_t	 now_ns(void);
static double	 quantile_ns(uint64_t *, size_t, double);
static pid_t	 floor_spawn(const char *);
static void	 bench_floor(struct bench *, struct row *);
static pid_t	 ready_spawn(const char *, int, int);
static int	 read_bytes(int, int, int);
static void	 bench_ready_floor(struct bench *, struct row *);
static void	 bench_tree_floor(struct bench *, struct row *);
static void	 write_conf(struct bench *, const char *, const char *, int);
static void	 bench_daemon(struct bench *, struct row *);
static long	 smaps_private_kb(pid_t, const char *);
static long	 status_kb(pid_t, const char *);
static long	 memfd_kb(pid_t, const char *);
static void	 kill_children_of(pid_t);
static struct actord *core_tree(struct bench *, int, bool, struct row *);
static bool	 core_root_up(struct actord *);
static bool	 core_wait_running(struct actord *, int, int, struct row *);
static void	 core_stop(struct actord *);
static void	 bench_restart(struct bench *, struct actord *, struct row *);
static int	 settle(struct actord *, int);
static void	 bench_send(struct bench *, struct actord *, struct row *);
static void	 bench_fanin(struct bench *, struct actord *, struct row *);
static void	 futex_floor(struct bench *, struct row *);
static bool	 fanin_p_wanted(int);
static void	 bench_sparse(struct bench *, struct actord *, struct row *);
static void	 bench_sparse_lap2(struct bench *, struct actord *,
		    struct row *, struct actor_ref *, const pid_t *);
static void	 bench_pipes(struct bench *, struct row *);
static void	 bench_futex(struct bench *, struct row *);
struct sparse_cost;
static void	 sparse_window(struct bench *, int, void *,
		    int (*)(void *, int), const pid_t *, struct sparse_cost *);
static void	 wake_count(struct actord *, const struct actor_ref *, int,
		    uint64_t *, uint64_t *);
static void	 bench_ofa(struct bench *, struct row *, bool);
static double	 ofa_mode_floor(const struct row *, bool);
static uint64_t	 schedstat_ns(pid_t);
static uint64_t	 self_cpu_ns(void);
static uint64_t	 children_cpu_ns(void);
static long	 children_faults(void);
static void	 sparse_run(int, int, uint64_t, int, void *,
		    int (*)(void *, int));
static void	 path_of(int, int, char *, size_t);
static int	 rseq_leave(void);
static void	 print_table(struct row *, int);
static bool	 phase(const char *, const char *);

static void
emit(struct bench *b, int n, const char *key, double v)
{
	if (v < 0)
		fprintf(b->json, "%s\n  \"n%d_%s\": null", b->first ? "" : ",",
		    n, key);
	else
		fprintf(b->json, "%s\n  \"n%d_%s\": %.3f", b->first ? "" : ",",
		    n, key, v);
	b->first = 0;
	printf("  n=%-6d %-36s ", n, key);
	if (v < 0)
		printf("%12s\n", "-");
	else
		printf("%12.3f\n", v);
	fflush(stdout);
	fflush(b->json);
}

static void
emit_str(struct bench *b, int n, const char *key, const char *s)
{
	const char *p;

	fprintf(b->json, "%s\n  \"n%d_%s\": \"", b->first ? "" : ",", n, key);
	for (p = s; *p != '\0'; p++)
		if (*p == '"' || *p == '\\')
			fprintf(b->json, "\\%c", *p);
		else if ((unsigned char)*p >= 0x20)
			fputc(*p, b->json);
	fputc('"', b->json);
	b->first = 0;
	printf("  n=%-6d %s: %s\n", n, key, s);
	fflush(stdout);
}

/* The first failure of an N is kept; later ones only print. */
static void
fail(struct row *r, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("  n=%-6d FAILED: %s\n", r->n, buf);
	fflush(stdout);
	if (r->why[0] == '\0')
		snprintf(r->why, sizeof(r->why), "%s", buf);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The p-th quantile of v (ns), in us; sorts v. */
static double
quantile_ns(uint64_t *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return -1;
	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i] / 1000.0;
}

/* Group g, instance i: /w<g>/<i>, groups of GROUP_MAX. */
static void
path_of(int n, int k, char *buf, size_t len)
{
	(void)n;
	snprintf(buf, len, "/w%d/%d", k / GROUP_MAX, k % GROUP_MAX);
}

/* --- the floor: fork, exec, know that exec succeeded -------------------- */

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

/* N starts, then N stops (SIGTERM, waitpid), one after the other. */
static void
bench_floor(struct bench *b, struct row *r)
{
	pid_t *pids;
	uint64_t t0;
	int i, n = r->n;

	if ((pids = calloc((size_t)n, sizeof(*pids))) == NULL)
		return;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		pids[i] = floor_spawn(b->tworker);
	r->floor_start = (double)(now_ns() - t0) / 1e6;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		kill(pids[i], SIGTERM);
		waitpid(pids[i], NULL, 0);
	}
	r->floor_stop = (double)(now_ns() - t0) / 1e6;
	free(pids);
	emit(b, n, "floor_start_ms", r->floor_start);
	emit(b, n, "floor_stop_ms", r->floor_stop);
}

/*
 * The floors that show the physical limit beside the issue's, whose
 * processes are only seen to exec: here each reaches its main and writes
 * a byte (tworker fd 0, as an actor says it is ready), started the
 * cheapest way (vfork/exec, system calls only in the child, as actord's
 * spawn.c does).
 */

/* tworker fd 0 with notify on its descriptor 3 and stdout on devnull. */
static pid_t
ready_spawn(const char *prog, int notify, int devnull)
{
	static char *envp[] = { (char *)"ACTORD_NOTIFY_FD=3", NULL };
	char *argv[] = { (char *)(uintptr_t)prog, (char *)"fd", (char *)"0",
	    NULL };
	pid_t pid;

	if ((pid = vfork()) == 0) {
		if (dup2(devnull, 1) == -1 || dup2(notify, 3) == -1)
			_exit(127);
		execve(prog, argv, envp);
		_exit(127);
	}
	return pid;
}

/* Read want bytes from fd within ms: how many came. */
static int
read_bytes(int fd, int want, int ms)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000;
	char buf[4096];
	ssize_t k;
	int got = 0, left;

	while (got < want && now_ns() < deadline) {
		left = (int)((deadline - now_ns()) / 1000000) + 1;
		if (poll(&pfd, 1, left) <= 0)
			continue;
		k = read(fd, buf, (size_t)(want - got) < sizeof(buf) ?
		    (size_t)(want - got) : sizeof(buf));
		if (k <= 0)
			break;
		got += (int)k;
	}
	return got;
}

/*
 * The floors of one_for_all's two modes: each start awaited until its
 * byte, stops last first, each awaited (ordered); all N started then N
 * bytes, N SIGTERMs then N waits (parallel).
 */
static void
bench_ready_floor(struct bench *b, struct row *r)
{
	pid_t *pids;
	uint64_t t0, cpu, self;
	long flt;
	int p[2], devnull, i, n = r->n, ms = 60000 + n * 10, ok = 1;

	if ((pids = calloc((size_t)n, sizeof(*pids))) == NULL)
		return;
	if (pipe2(p, O_CLOEXEC) == -1) {
		free(pids);
		return;
	}
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	t0 = now_ns();
	self = self_cpu_ns();
	for (i = 0; i < n && ok; i++)
		ok = (pids[i] = ready_spawn(b->tworker, p[1], devnull)) > 0 &&
		    read_bytes(p[0], 1, ms) == 1;
	if (ok)
		r->seq_start = (double)(now_ns() - t0) / 1e6;
	t0 = now_ns();
	cpu = children_cpu_ns();
	flt = children_faults();
	for (i = n - 1; i >= 0; i--)
		if (pids[i] > 0) {
			kill(pids[i], SIGTERM);
			waitpid(pids[i], NULL, 0);
			pids[i] = 0;
		}
	if (ok) {
		r->seq_stop = (double)(now_ns() - t0) / 1e6;
		r->seq_child_cpu = (double)(children_cpu_ns() - cpu) / 1e3 / n;
		r->seq_parent_cpu = (double)(self_cpu_ns() - self) / 1e3 / n;
		r->seq_child_flt = (double)(children_faults() - flt) / n;
	}
	t0 = now_ns();
	for (i = 0; i < n && ok; i++)
		ok = (pids[i] = ready_spawn(b->tworker, p[1], devnull)) > 0;
	if (ok && read_bytes(p[0], n, ms) == n)
		r->par_start = (double)(now_ns() - t0) / 1e6;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
	if (r->par_start > 0)
		r->par_stop = (double)(now_ns() - t0) / 1e6;
	close(p[0]);
	close(p[1]);
	if (devnull != -1)
		close(devnull);
	free(pids);
	emit(b, n, "floor_ready_start_ms", r->seq_start);
	emit(b, n, "floor_ready_stop_ms", r->seq_stop);
	/*
	 * What one of them cost the CPU, start to exit, and what starting
	 * and stopping it cost this process: beside an actor's and actord's
	 * (bench_ofa), where the time of an ordered restart goes.
	 */
	emit(b, n, "floor_ready_child_cpu_us", r->seq_child_cpu);
	emit(b, n, "floor_ready_parent_cpu_us", r->seq_parent_cpu);
	emit(b, n, "floor_ready_child_faults", r->seq_child_flt);
	emit(b, n, "floor_parallel_start_ms", r->par_start);
	emit(b, n, "floor_parallel_stop_ms", r->par_stop);
}

/*
 * The tree's own floor: fork/exec of launch_floor (as bench_daemon
 * starts actord), which starts N tworkers at once and writes a byte once
 * each has reached its main; then its process group is killed and reaped
 * (its children come back to us, the subreaper).
 */
static void
bench_tree_floor(struct bench *b, struct row *r)
{
	char nbuf[16];
	uint64_t t0;
	pid_t pid;
	int out[2];

	snprintf(nbuf, sizeof(nbuf), "%d", r->n);
	if (pipe2(out, O_CLOEXEC) == -1)
		return;
	t0 = now_ns();
	if ((pid = fork()) == 0) {
		(void)setpgid(0, 0);
		if (dup2(out[1], 1) == -1)
			_exit(127);
		execl(b->launch, b->launch, nbuf, b->tworker, "fd", "0",
		    (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	if (pid > 0) {
		(void)setpgid(pid, pid);
		if (read_bytes(out[0], 1, 60000 + r->n * 10) == 1)
			r->floor_tree = (double)(now_ns() - t0) / 1e6;
		(void)killpg(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		while (waitpid(-pid, NULL, 0) > 0)
			continue;
	}
	close(out[0]);
	emit(b, r->n, "floor_tree_start_ms", r->floor_tree);
}

/* --- the real actord: start time and memory ------------------------------ */

static void
write_conf(struct bench *b, const char *conf, const char *dir, int n)
{
	FILE *f;
	int g, left, k;

	if ((f = fopen(conf, "w")) == NULL)
		return;
	/* A runtime_dir of its own: never another actord's socket. */
	fprintf(f, "runtime_dir = \"%s\";\n", dir);
	fprintf(f, "supervisor = { intensity = 10; period = 10; "
	    "children = (\n");
	for (g = 0, left = n; left > 0; g++, left -= k) {
		k = left < GROUP_MAX ? left : GROUP_MAX;
		fprintf(f, "%s  { name = \"w%d\"; exec = [\"%s\"]; "
		    "ready = \"actor\"; instances = %d; }\n", g > 0 ? "," : "",
		    g, b->echo, k);
	}
	fprintf(f, ");\n};\n");
	fclose(f);
}

/* Private memory of pid, the mappings whose name contains skip left out. */
static long
smaps_private_kb(pid_t pid, const char *skip)
{
	char path[64], line[512];
	long v, total = 0;
	bool skipping = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		/* A mapping's first line: "start-end perms offset dev inode". */
		if (strchr(line, '-') != NULL && line[0] != ' ' &&
		    strchr(line, ':') != NULL && strstr(line, " kB") == NULL) {
			skipping = skip != NULL && strstr(line, skip) != NULL;
			continue;
		}
		if (skipping)
			continue;
		if ((sscanf(line, "Private_Clean: %ld", &v) == 1 ||
		    sscanf(line, "Private_Dirty: %ld", &v) == 1))
			total += v;
	}
	fclose(f);
	return total;
}

/* A "Key: N kB" line of /proc/pid/status (VmPTE: its page tables), kB. */
static long
status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, strlen(key)) == 0) {
			v = strtol(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The allocated size of pid's memfd whose link contains name, kB. */
static long
memfd_kb(pid_t pid, const char *name)
{
	char dir[64], path[512], link[256];
	struct dirent *de;
	struct stat st;
	ssize_t len;
	long kb = -1;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((len = readlink(path, link, sizeof(link) - 1)) <= 0)
			continue;
		link[len] = '\0';
		if (strstr(link, name) == NULL || stat(path, &st) == -1)
			continue;
		kb = (long)(st.st_blocks * 512 / 1024);
		break;
	}
	closedir(d);
	return kb;
}

/* SIGKILL, by pid, whatever still has ppid as its parent, and reap it. */
static void
kill_children_of(pid_t ppid)
{
	char path[300], buf[512], *p;
	struct dirent *de;
	DIR *d;
	FILE *f;
	long pp;
	pid_t pid;

	if ((d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if ((pid = (pid_t)atoi(de->d_name)) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) != NULL &&
		    (p = strrchr(buf, ')')) != NULL &&
		    sscanf(p + 2, "%*c %ld", &pp) == 1 && pp == (long)ppid) {
			kill(pid, SIGKILL);
			if (ppid == getpid())
				waitpid(pid, NULL, 0);
		}
		fclose(f);
	}
	closedir(d);
}

static void
bench_daemon(struct bench *b, struct row *r)
{
	struct sockaddr_un sun;
	struct timeval tv = { 1, 0 };
	char dir[64] = "/tmp/bench-scale-XXXXXX", conf[128], logf[128];
	char name[108], buf[256], cmd[200], tail[256] = "";
	uint64_t t0, deadline;
	long priv, arena, ptes;
	ssize_t k;
	size_t len;
	pid_t pid;
	int sock, st, n = r->n, ready = 0;
	FILE *f;

	if (mkdtemp(dir) == NULL)
		return;
	snprintf(conf, sizeof(conf), "%s/actord.conf", dir);
	snprintf(logf, sizeof(logf), "%s/actord.log", dir);
	write_conf(b, conf, dir, n);
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(name, sizeof(name), "@%s/notify", dir);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	len = strlen(name);
	memcpy(sun.sun_path, name, len);
	sun.sun_path[0] = '\0';
	(void)bind(sock, (struct sockaddr *)&sun,
	    offsetof(struct sockaddr_un, sun_path) + len);
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	t0 = now_ns();
	if ((pid = fork()) == 0) {
		int fd = open(logf, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 2);
		setenv("NOTIFY_SOCKET", name, 1);
		execl(b->actord, b->actord, "-c", conf, (char *)NULL);
		_exit(127);
	}
	deadline = now_ns() + (uint64_t)(60 + n / 100) * 1000000000ULL;
	while (!ready && now_ns() < deadline) {
		if ((k = recv(sock, buf, sizeof(buf) - 1, 0)) > 0) {
			buf[k] = '\0';
			ready = strstr(buf, "READY=1") != NULL;
			continue;
		}
		if (waitpid(pid, &st, WNOHANG) == pid) {
			pid = -1;
			break;
		}
	}
	if (ready) {
		r->start = (double)(now_ns() - t0) / 1e6;
		sleep(2);		/* idle: the first output drained */
		priv = smaps_private_kb(pid, "memfd:");
		arena = memfd_kb(pid, "memfd:actord");
		ptes = status_kb(pid, "VmPTE:");
		if (priv >= 0 && arena >= 0 && ptes >= 0) {
			r->mem_total_kb = (double)(priv + ptes + arena);
			r->mem_per_actor_kb = r->mem_total_kb / n;
		}
		emit(b, n, "actord_private_kb", (double)priv);
		emit(b, n, "actord_page_tables_kb", (double)ptes);
		emit(b, n, "arena_resident_kb", (double)arena);
	} else {
		if ((f = fopen(logf, "re")) != NULL) {
			while (fgets(buf, sizeof(buf), f) != NULL)
				if (strstr(buf, "fail") != NULL ||
				    strstr(buf, "gave up") != NULL ||
				    strstr(buf, "slot") != NULL)
					snprintf(tail, sizeof(tail), "%s", buf);
			fclose(f);
		}
		tail[strcspn(tail, "\n")] = '\0';
		fail(r, "actord did not say READY=1 within %.0f s (%s): %s",
		    (double)(now_ns() - t0) / 1e9, pid == -1 ? "it exited" :
		    "still running", tail[0] != '\0' ? tail : "no log line");
	}
	emit(b, n, "start_ms", r->start);
	emit(b, n, "start_vs_floor", r->start > 0 && r->floor_start > 0 ?
	    r->start / r->floor_start : -1);
	emit(b, n, "start_vs_tree_floor", r->start > 0 && r->floor_tree > 0 ?
	    r->start / r->floor_tree : -1);
	emit(b, n, "memory_total_kb", r->mem_total_kb);
	emit(b, n, "memory_per_actor_kb", r->mem_per_actor_kb);
	if (pid > 0) {
		kill(pid, SIGTERM);
		deadline = now_ns() + 60000000000ULL;
		while (waitpid(pid, &st, WNOHANG) == 0 && now_ns() < deadline)
			usleep(10000);
		if (kill(pid, 0) == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
	}
	/* What actord left behind came back to us (subreaper): reap it. */
	kill_children_of(getpid());
	while (waitpid(-1, NULL, WNOHANG) > 0)
		continue;
	close(sock);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
}

/* --- actord's core in this process -------------------------------------- */

static struct child_spec *
echo_child(struct bench *b, struct child_spec *c, const char *name)
{
	spec_child_init(c);
	c->name = strdup(name);
	c->argv = calloc(2, sizeof(*c->argv));
	c->argv[0] = strdup(b->echo);
	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	c->start_timeout = 60000;
	if (!b->rseq) {
		/* BENCH_SCALE_RSEQ=0: glibc registers no rseq area. */
		c->env = calloc(1, sizeof(*c->env));
		c->env[0].name = strdup("GLIBC_TUNABLES");
		c->env[0].value = strdup("glibc.pthread.rseq=0");
		c->nenv = 1;
	}
	return c;
}

/*
 * N actors: groups of GROUP_MAX instances (/w0/0 ...), or with ofa one
 * one_for_all supervisor /g of N children (/g/c0 ...).  Backoff 0.
 */
static struct actord *
core_tree(struct bench *b, int n, bool ofa, struct row *r)
{
	struct actord_spec *spec = spec_new();
	struct sup_spec *g;
	struct actord *ad;
	char err[256], name[32];
	int i, ng, k;

	spec->root.intensity = 1000;
	spec->root.period = 1;
	spec->root.backoff_min = spec->root.backoff_max = 0;
	spec->shutdown_timeout = 120000;
	if (ofa) {
		spec->root.children = calloc(1, sizeof(struct child_spec));
		spec->root.nchildren = 1;
		spec_child_init(&spec->root.children[0]);
		spec->root.children[0].name = strdup("g");
		spec->root.children[0].kind = CHILD_SUPERVISOR;
		g = spec->root.children[0].sup = calloc(1, sizeof(*g));
		spec_sup_init(g);
		g->strategy = STRATEGY_ONE_FOR_ALL;
		g->intensity = 1000;
		g->period = 1;
		g->backoff_min = g->backoff_max = 0;
		g->children = calloc((size_t)n, sizeof(struct child_spec));
		g->nchildren = (size_t)n;
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "c%d", i);
			echo_child(b, &g->children[i], name);
		}
	} else {
		ng = (n + GROUP_MAX - 1) / GROUP_MAX;
		spec->root.children = calloc((size_t)ng,
		    sizeof(struct child_spec));
		spec->root.nchildren = (size_t)ng;
		for (i = 0; i < ng; i++) {
			snprintf(name, sizeof(name), "w%d", i);
			echo_child(b, &spec->root.children[i], name);
			k = n - i * GROUP_MAX;
			spec->root.children[i].instances = (unsigned)(k <
			    GROUP_MAX ? k : GROUP_MAX);
		}
	}
	if ((ad = actord_new(spec, err, sizeof(err))) == NULL) {
		fail(r, "actord_new: %s", err);
		spec_free(spec);
		return NULL;
	}
	ad->free_spec = spec_free;
	return ad;
}

static void
count_running(const struct node_status *st, void *arg)
{
	int *c = arg;

	if (st->kind == NODE_WORKER && st->state == NS_RUNNING)
		(*c)++;
}

/* The root running, no operation under way: every child started. */
static bool
core_root_up(struct actord *ad)
{
	return ad->root->state == NS_RUNNING && ad->root->plan.kind == PLAN_NONE;
}

/* Run the loop until n workers run; false (and why) if it stalls or ends. */
static bool
core_wait_running(struct actord *ad, int n, int progress_ms, struct row *r)
{
	uint64_t last = now_ns(), looked = 0;
	int nrun = 0, best = -1;

	for (;;) {
		actord_run_once(ad, 10);
		if (core_root_up(ad))
			return true;
		if (ad->done) {
			fail(r, "the tree ended: %s", ad->message);
			return false;
		}
		if (now_ns() - looked < 1000000000ULL)
			continue;
		looked = now_ns();
		nrun = 0;
		actord_walk(ad, count_running, &nrun);
		if (nrun > best) {
			best = nrun;
			last = now_ns();
		} else if (now_ns() - last > (uint64_t)progress_ms * 1000000) {
			fail(r, "stalled at %d of %d actors running for %d s",
			    nrun, n, progress_ms / 1000);
			return false;
		}
	}
}

static void
core_stop(struct actord *ad)
{
	uint64_t deadline = now_ns() + 180000000000ULL;

	if (ad == NULL)
		return;
	actord_shutdown(ad);
	while (!ad->done && now_ns() < deadline)
		actord_run_once(ad, 100);
	actord_free(ad);	/* kills, by pid, what is left */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		continue;
}

/* SIGKILL of one actor to its next incarnation running. */
static void
bench_restart(struct bench *b, struct actord *ad, struct row *r)
{
	uint64_t lat[RESTART_ROUNDS], t0, deadline, cpu;
	char path[64];
	struct node *n;
	pid_t old;
	int i, done = 0;

	path_of(r->n, r->n / 2, path, sizeof(path));
	if ((n = actord_find(ad, path)) == NULL)
		return;
	emit(b, r->n, "restart_settle_ms", settle(ad, SETTLE_MAX_MS));
	cpu = self_cpu_ns();
	for (i = 0; i < RESTART_ROUNDS; i++) {
		old = n->pid;
		t0 = now_ns();
		deadline = t0 + 10000000000ULL;
		kill(old, SIGKILL);
		while ((n->state != NS_RUNNING || n->pid == old) &&
		    !ad->done && now_ns() < deadline)
			actord_run_once(ad, 100);
		if (n->state != NS_RUNNING || n->pid == old) {
			fail(r, "%s did not come back within 10 s", path);
			break;
		}
		lat[i] = now_ns() - t0;
		done++;
		/* Let it settle (its first sleep) before the next kill. */
		t0 = now_ns();
		while (now_ns() - t0 < 2000000)
			actord_run_once(ad, 1);
	}
	/*
	 * actord's CPU time per restart (this process is actord's core):
	 * steadier than the latency on a shared machine, and what grows if
	 * a death costs actord O(N) (a sweep of every child, a list walk).
	 */
	cpu = self_cpu_ns() - cpu;
	r->restart50 = quantile_ns(lat, (size_t)done, 0.5) / 1000.0;
	r->restart99 = quantile_ns(lat, (size_t)done, 0.99) / 1000.0;
	r->restart_cpu = done > 0 ? (double)cpu / done / 1000.0 : -1;
	emit(b, r->n, "restart_p50_ms", r->restart50);
	emit(b, r->n, "restart_p99_ms", r->restart99);
	emit(b, r->n, "restart_actord_cpu_us", r->restart_cpu);
}

/* The jiffies every CPU spent idle (idle + iowait) and in all, /proc/stat. */
static bool
cpu_jiffies(uint64_t *idle, uint64_t *all)
{
	unsigned long long v[8] = { 0 };
	FILE *f;
	int k, i;

	if ((f = fopen("/proc/stat", "re")) == NULL)
		return false;
	k = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
	    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (k < 5)
		return false;
	*idle = v[3] + v[4];
	for (*all = 0, i = 0; i < 8; i++)
		*all += v[i];
	return true;
}

/*
 * Turn actord's loop until the machine is quiet (two windows of
 * SETTLE_WINDOW_MS in a row with every CPU at least 90 % idle), at most
 * max_ms; the time it took, ms.  The first restarts right after N actors
 * report ready are not what a restart costs: at 10,000, the 200 of this
 * bench measured 1.13-1.54 ms at p50 and 256-349 us of actord's CPU each
 * (six runs), against 1.10 ms and 251 us over 3,000 restarts, and
 * 0.79-0.88 ms and 178-184 us after this wait (0.80-0.82 ms and 192-202
 * us at 100).  The wait ended after its two windows, the machine already
 * quiet by this measure: what the start leaves behind lasts less.
 */
static int
settle(struct actord *ad, int max_ms)
{
	uint64_t t0 = now_ns(), end, idle0, all0, idle1, all1;
	int quiet = 0;

	while (quiet < 2 && now_ns() - t0 < (uint64_t)max_ms * 1000000) {
		if (!cpu_jiffies(&idle0, &all0))
			break;
		end = now_ns() + SETTLE_WINDOW_MS * 1000000ULL;
		while (now_ns() < end)
			actord_run_once(ad, 10);
		if (!cpu_jiffies(&idle1, &all1))
			break;
		if (all1 > all0 && (idle1 - idle0) * 10 >= (all1 - all0) * 9)
			quiet++;
		else
			quiet = 0;
	}
	return (int)((now_ns() - t0) / 1000000);
}

static void
spin_until(uint64_t t)
{
	while (now_ns() < t)
		__builtin_ia32_pause();
}

/*
 * The pages of each kind this process referenced since its accessed bits
 * were cleared (/proc/self/clear_refs): in the arena (a memfd mapping)
 * and elsewhere (its stack, heap, libraries).
 */
static void
referenced_pages(long *arena, long *other)
{
	char	 line[512];
	unsigned long lo, hi, kb;
	bool	 in_arena = false;
	FILE	*f;

	*arena = *other = 0;
	if ((f = fopen("/proc/self/smaps", "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in_arena = strstr(line, "/memfd:") != NULL;
			continue;
		}
		if (sscanf(line, "Referenced: %lu kB", &kb) != 1)
			continue;
		if (in_arena)
			*arena += (long)kb / 4;
		else
			*other += (long)kb / 4;
	}
	fclose(f);
}

static void
clear_own_refs(void)
{
	FILE	*f;

	if ((f = fopen("/proc/self/clear_refs", "we")) == NULL)
		return;
	(void)fputs("1", f);
	fclose(f);
}


/*
 * What a tell by reference to an idle actor touches: the least and the
 * median count of arena pages one tell references, over SEND_PAGE_ROUNDS
 * tells to actors at random.  After a sleep the target's pages are cold
 * in the sender's TLB, and each costs a page walk (two dimensions on a
 * VM): this count, unlike the latency, does not move with the load, and
 * the floor's is one (the word it wakes).
 */
static void
send_pages(struct bench *b, struct actord *ad, struct actor *c,
    const struct actor_ref *refs, int nrefs, struct row *r)
{
	static uint64_t arena_pages[SEND_PAGE_ROUNDS], other[SEND_PAGE_ROUNDS];
	char	 payload[MSG_LEN] = { 0 };
	long	 a, o;
	int	 i;

	for (i = 0; i < SEND_PAGE_ROUNDS; i++) {
		clear_own_refs();
		(void)actor_tell(c, refs[(i * 7919) % nrefs], TAG_IGNORED,
		    payload, sizeof(payload));
		referenced_pages(&a, &o);
		arena_pages[i] = (uint64_t)a * 1000;	/* quantile_ns: /1000 */
		other[i] = (uint64_t)o * 1000;
		actord_run_once(ad, 0);
	}
	emit(b, r->n, "send_ref_arena_pages_p50", quantile_ns(arena_pages,
	    SEND_PAGE_ROUNDS, 0.5));
	emit(b, r->n, "send_ref_arena_pages_min", quantile_ns(arena_pages,
	    SEND_PAGE_ROUNDS, 0.0));
	emit(b, r->n, "send_ref_other_pages_p50", quantile_ns(other,
	    SEND_PAGE_ROUNDS, 0.5));
}

/* Tells by path and by reference, each to an idle actor at random. */
static void
bench_send(struct bench *b, struct actord *ad, struct row *r)
{
	static uint64_t by_path[SEND_ROUNDS], by_ref[SEND_ROUNDS],
	    lookup[SEND_ROUNDS];
	char (*paths)[32], err[ACTOR_ERRBUF], payload[MSG_LEN];
	struct actor_ref *refs, ref;
	struct rusage ru[3];
	struct actor *c;
	uint64_t t0, t1, next;
	int i, k, rc, n = r->n, bad = 0;

	memset(payload, 'x', sizeof(payload));
	if (actor_open(ad->arena, -1, &c, err, sizeof(err)) < 0) {
		fail(r, "send: actor_open: %s", err);
		return;
	}
	paths = calloc(SEND_ROUNDS, sizeof(*paths));
	refs = calloc(SEND_ROUNDS, sizeof(*refs));
	srandom(1);
	for (i = 0; i < SEND_ROUNDS; i++) {
		k = (int)(random() % n);
		path_of(n, k, paths[i], sizeof(paths[i]));
		if (actor_lookup(c, paths[i], &refs[i]) < 0)
			bad++;
	}
	for (i = 0; i < SEND_ROUNDS; i++) {
		t0 = now_ns();
		rc = actor_lookup(c, paths[i], &ref);
		lookup[i] = now_ns() - t0;
		bad += rc < 0;
	}
	next = now_ns();
	getrusage(RUSAGE_SELF, &ru[0]);
	for (i = 0; i < SEND_ROUNDS; i++) {
		spin_until(next);
		t0 = now_ns();
		rc = actor_tell_path(c, paths[i], TAG_IGNORED, payload,
		    sizeof(payload));
		t1 = now_ns();
		by_path[i] = t1 - t0;
		bad += rc < 0;
		next = t1 + SEND_GAP_NS;
	}
	getrusage(RUSAGE_SELF, &ru[1]);
	next = now_ns() + SEND_GAP_NS;
	for (i = 0; i < SEND_ROUNDS; i++) {
		spin_until(next);
		t0 = now_ns();
		rc = actor_tell(c, refs[i], TAG_IGNORED, payload,
		    sizeof(payload));
		t1 = now_ns();
		by_ref[i] = t1 - t0;
		bad += rc < 0;
		next = t1 + SEND_GAP_NS;
	}
	getrusage(RUSAGE_SELF, &ru[2]);
	send_pages(b, ad, c, refs, SEND_ROUNDS, r);
	if (bad > 0)
		fail(r, "send: %d of %d lookups or tells failed", bad,
		    3 * SEND_ROUNDS);
	r->path50 = quantile_ns(by_path, SEND_ROUNDS, 0.5);
	r->ref50 = quantile_ns(by_ref, SEND_ROUNDS, 0.5);
	r->lookup50 = quantile_ns(lookup, SEND_ROUNDS, 0.5);
	emit(b, n, "send_path_p50_us", r->path50);
	emit(b, n, "send_path_p99_us", quantile_ns(by_path, SEND_ROUNDS,
	    0.99));
	emit(b, n, "send_ref_p50_us", r->ref50);
	emit(b, n, "send_ref_p99_us", quantile_ns(by_ref, SEND_ROUNDS, 0.99));
	emit(b, n, "lookup_p50_us", r->lookup50);
	/*
	 * What a send to an idle actor waits for besides its own work: the
	 * first touch of the target's pages in this process (minor faults)
	 * and the wake-up, which may hand the CPU to the woken actor
	 * (involuntary switches).  Per send.
	 */
	emit(b, n, "send_path_minflt_per_send", (double)(ru[1].ru_minflt -
	    ru[0].ru_minflt) / SEND_ROUNDS);
	emit(b, n, "send_ref_minflt_per_send", (double)(ru[2].ru_minflt -
	    ru[1].ru_minflt) / SEND_ROUNDS);
	emit(b, n, "send_path_preempted_per_send", (double)(ru[1].ru_nivcsw -
	    ru[0].ru_nivcsw) / SEND_ROUNDS);
	emit(b, n, "send_ref_preempted_per_send", (double)(ru[2].ru_nivcsw -
	    ru[1].ru_nivcsw) / SEND_ROUNDS);
	free(paths);
	free(refs);
	actor_close(c);
	/* Let the actors handle what was sent. */
	t0 = now_ns();
	while (now_ns() - t0 < 200000000)
		actord_run_once(ad, 10);
	futex_floor(b, r);
}

/*
 * The floor of a send to an idle actor, in the same run: a bare
 * FUTEX_WAKE of one of FLOOR_SLEEPERS processes asleep in FUTEX_WAIT,
 * each on a word of its own in a shared mapping, one at random every
 * SEND_GAP_NS, as bench_send tells.
 */
static void
futex_floor(struct bench *b, struct row *r)
{
	static uint64_t t[SEND_ROUNDS];
	_Atomic uint32_t *w;
	struct rusage ru[2];
	pid_t pids[FLOOR_SLEEPERS];
	uint64_t t0, t1, next;
	uint32_t v;
	int i, k;

	w = mmap(NULL, FLOOR_SLEEPERS * 64, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return;
	for (i = 0; i < FLOOR_SLEEPERS; i++) {
		if ((pids[i] = fork()) != 0)
			continue;
		for (;;) {
			v = atomic_load(&w[i * 16]);
			if (v == UINT32_MAX)
				_exit(0);
			syscall(SYS_futex, &w[i * 16], FUTEX_WAIT, v, NULL,
			    NULL, 0);
		}
	}
	usleep(100000);		/* all asleep */
	srandom(2);
	getrusage(RUSAGE_SELF, &ru[0]);
	next = now_ns();
	for (i = 0; i < SEND_ROUNDS; i++) {
		k = (int)(random() % FLOOR_SLEEPERS);
		spin_until(next);
		t0 = now_ns();
		atomic_fetch_add(&w[k * 16], 1);
		syscall(SYS_futex, &w[k * 16], FUTEX_WAKE, 1, NULL, NULL, 0);
		t1 = now_ns();
		t[i] = t1 - t0;
		next = t1 + SEND_GAP_NS;
	}
	getrusage(RUSAGE_SELF, &ru[1]);
	for (i = 0; i < FLOOR_SLEEPERS; i++) {
		atomic_store(&w[i * 16], UINT32_MAX);
		syscall(SYS_futex, &w[i * 16], FUTEX_WAKE, 1, NULL, NULL, 0);
	}
	for (i = 0; i < FLOOR_SLEEPERS; i++)
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
	munmap(w, FLOOR_SLEEPERS * 64);
	r->wake50 = quantile_ns(t, SEND_ROUNDS, 0.5);
	emit(b, r->n, "futex_wake_p50_us", r->wake50);
	emit(b, r->n, "futex_wake_preempted_per_wake", (double)(ru[1].ru_nivcsw -
	    ru[0].ru_nivcsw) / SEND_ROUNDS);
}

/* What one fan-in producer spent on its tells. */
struct fanin_cost {
	uint64_t	 cpu_us;	/* user + system CPU time */
	uint64_t	 sleeps;	/* voluntary context switches */
	uint64_t	 faults;	/* minor page faults */
	uint64_t	 preempted;	/* involuntary context switches */
};

/*
 * The floor of fan-in: the bare MPSC ring of bench_ring's ladder (tail
 * claimed by CAS, a sequence number per cell, head published per batch;
 * DEFAULT_MAILBOX_CAPACITY cells of 128 bytes, as the actor's main lane)
 * with the simplest blocking that is correct.  A producer that finds the
 * ring full counts itself a waiter and sleeps on space_word; once the
 * ring is half empty after a batch (hysteresis, as a mailbox lets its
 * blocked senders in), the consumer wakes every waiter (wake_one clear)
 * or one (set: the fewest wake-ups, each woken producer finding half a
 * ring of room), and a woken producer tries again.  The consumer spins
 * FLOOR_SPIN_NS when the ring is empty, then sleeps on wake_word, which
 * a producer that finds it asleep after publishing bumps (fences on both
 * sides: Dekker).  No tickets, no order, no repair, no deadline: what
 * blocking costs at its cheapest.
 */
#define FLOOR_CAP	DEFAULT_MAILBOX_CAPACITY
#define FLOOR_SPIN_NS	20000		/* the consumer's spin, as ours */

struct floor_cell {
	_Alignas(128) _Atomic uint64_t seq;
	unsigned char	 payload[MSG_LEN];
};

struct floor_ring {
	_Alignas(64) _Atomic uint64_t tail;	/* the producers' line */
	_Alignas(64) _Atomic uint64_t head;	/* the consumer's line */
	_Atomic uint64_t taken;
	_Atomic uint32_t stop;
	_Alignas(64) _Atomic uint32_t sleeping;	/* the consumer's futex */
	_Atomic uint32_t wake_word;
	_Alignas(64) _Atomic uint32_t space_word;	/* full producers' */
	_Atomic uint32_t waiters;
	uint32_t	 wake_one;	/* else every waiter at once */
	struct floor_cell cells[FLOOR_CAP];
};

/* Where a fan-in producer sends: an actor, or the floor's ring. */
struct fanin_src {
	struct actord	*ad;
	struct actor_ref target;
	struct floor_ring *ring;
};

static long
floor_futex(_Atomic uint32_t *w, int op, uint32_t val)
{
	struct timespec ts = { 0, 1000000 };	/* the consumer's stop */

	return syscall(SYS_futex, w, op, val, op == FUTEX_WAIT ? &ts : NULL,
	    NULL, 0);
}

/* One message into the floor's ring, asleep while it is full. */
static void
floor_put(struct floor_ring *f, const unsigned char *payload)
{
	struct floor_cell *c;
	uint64_t pos, seq;
	uint32_t w;

	pos = atomic_load_explicit(&f->tail, memory_order_relaxed);
	for (;;) {
		c = &f->cells[pos % FLOOR_CAP];
		seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		if (seq == pos) {
			if (atomic_compare_exchange_weak(&f->tail, &pos,
			    pos + 1))
				break;
			continue;
		}
		if ((int64_t)(seq - pos) > 0) {
			pos = atomic_load_explicit(&f->tail,
			    memory_order_relaxed);
			continue;
		}
		/* Full: a waiter, then one more look, then asleep. */
		w = atomic_load(&f->space_word);
		atomic_fetch_add(&f->waiters, 1);
		if ((int64_t)(atomic_load(&c->seq) - pos) < 0 &&
		    atomic_load(&f->tail) == pos)
			(void)syscall(SYS_futex, &f->space_word, FUTEX_WAIT, w,
			    NULL, NULL, 0);
		atomic_fetch_sub(&f->waiters, 1);
		pos = atomic_load_explicit(&f->tail, memory_order_relaxed);
	}
	memcpy(c->payload, payload, MSG_LEN);
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&f->sleeping, memory_order_relaxed) != 0 &&
	    atomic_exchange(&f->sleeping, 0) != 0) {
		atomic_fetch_add(&f->wake_word, 1);
		(void)floor_futex(&f->wake_word, FUTEX_WAKE, 1);
	}
}

/* After a batch up to h: the full producers' turn, half empty. */
static void
floor_wake_producers(struct floor_ring *f, uint64_t h)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&f->waiters) == 0 ||
	    atomic_load(&f->tail) - h > FLOOR_CAP / 2)
		return;
	atomic_fetch_add(&f->space_word, 1);
	(void)floor_futex(&f->space_word, FUTEX_WAKE, f->wake_one ? 1 :
	    INT_MAX);
}

/* The floor's consumer: takes until told to stop, then exits. */
static void __attribute__((noreturn))
floor_consumer(struct floor_ring *f)
{
	struct floor_cell *c;
	unsigned char buf[MSG_LEN] = { 0 };
	uint64_t h = 0, h0, spun = 0;
	uint32_t w;

	while (atomic_load_explicit(&f->stop, memory_order_relaxed) == 0) {
		for (h0 = h;; h++) {
			c = &f->cells[h % FLOOR_CAP];
			if (atomic_load_explicit(&c->seq,
			    memory_order_acquire) != h + 1)
				break;
			memcpy(buf, c->payload, sizeof(buf));
			atomic_store_explicit(&c->seq, h + FLOOR_CAP,
			    memory_order_release);
		}
		if (h != h0) {
			atomic_store_explicit(&f->head, h,
			    memory_order_release);
			atomic_store_explicit(&f->taken, h,
			    memory_order_relaxed);
			floor_wake_producers(f, h);
			spun = 0;
			continue;
		}
		if (spun == 0)
			spun = now_ns();
		if (now_ns() - spun < FLOOR_SPIN_NS) {
			__builtin_ia32_pause();
			continue;
		}
		w = atomic_load(&f->wake_word);
		atomic_store(&f->sleeping, 1);
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load(&c->seq) != h + 1)
			(void)floor_futex(&f->wake_word, FUTEX_WAIT, w);
		atomic_store(&f->sleeping, 0);
		spun = 0;
	}
	_exit(h == 0 || buf[0] == 'f' ? 0 : 1);
}

/* CPU time (us), context switches and page faults of this process. */
static struct fanin_cost
fanin_cost_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (struct fanin_cost){ (uint64_t)(ru.ru_utime.tv_sec +
	    ru.ru_stime.tv_sec) * 1000000 + (uint64_t)(ru.ru_utime.tv_usec +
	    ru.ru_stime.tv_usec), (uint64_t)ru.ru_nvcsw,
	    (uint64_t)ru.ru_minflt, (uint64_t)ru.ru_nivcsw };
}

/*
 * A fan-in producer: its own slot (none for the floor) and one message
 * sent, which the caller waits to see taken before the start: a process's
 * first send faults in the code and pages it runs and binds the symbols
 * it calls (at P = 1,000 that was a tenth of the samples of a run of
 * 200 messages a producer), a cost of its start-up, not of fan-in.  Then
 * on the start (go closed) per tells as fast as it can, what they cost
 * written to res, then it waits for the stop (stop closed) before it
 * lets its slot go and exits, so that neither its start-up nor its exit
 * falls inside the time measured.
 */
static void __attribute__((noreturn))
fanin_producer(const struct fanin_src *s, int per, int go, int stop, int res)
{
	struct fanin_cost c0, c1;
	struct actor *cl = NULL;
	char err[ACTOR_ERRBUF], c;
	unsigned char payload[MSG_LEN];
	int i, rc = 0, failed = 0;

	memset(payload, 'f', sizeof(payload));
	if (s->ring == NULL)
		rc = actor_open(s->ad->arena, -1, &cl, err, sizeof(err));
	/* Warm: one message sent (taken before the start), a clock read. */
	if (rc == 0 && s->ring != NULL)
		floor_put(s->ring, payload);
	else if (rc == 0)
		rc = actor_tell(cl, s->target, TAG_IGNORED, payload,
		    sizeof(payload));
	(void)fanin_cost_now();
	c = rc < 0 ? 'n' : 'y';
	(void)!write(res, &c, 1);
	if (rc < 0) {
		if (cl != NULL)
			actor_close(cl);
		_exit(1);
	}
	(void)!read(go, &c, 1);
	c0 = fanin_cost_now();
	for (i = 0; i < per; i++) {
		if (s->ring != NULL)
			floor_put(s->ring, payload);
		else if (actor_tell(cl, s->target, TAG_IGNORED, payload,
		    sizeof(payload)) < 0)
			failed++;
	}
	c1 = fanin_cost_now();
	c1.cpu_us -= c0.cpu_us;
	c1.sleeps -= c0.sleeps;
	c1.faults -= c0.faults;
	c1.preempted -= c0.preempted;
	(void)!write(res, &c1, sizeof(c1));
	(void)!read(stop, &c, 1);
	if (cl != NULL)
		actor_close(cl);
	_exit(failed > 0 ? 2 : 0);
}

/*
 * What P producers' tells cost (nopen records on fd), per message: CPU
 * time and sleeps (the second figure is what a convoy multiplies).
 * prefix: "fanin" or "fanin_floor".
 */
static void
fanin_costs(struct bench *b, int n, const char *prefix, int p, int fd,
    int nopen, uint64_t msgs)
{
	struct fanin_cost one, all = { 0, 0, 0, 0 };
	char key[64];
	int i;

	for (i = 0; i < nopen; i++) {
		if (read(fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
			return;
		all.cpu_us += one.cpu_us;
		all.sleeps += one.sleeps;
		all.faults += one.faults;
		all.preempted += one.preempted;
	}
	snprintf(key, sizeof(key), "%s_p%d_sender_cpu_us_per_msg", prefix, p);
	emit(b, n, key, (double)all.cpu_us / (double)msgs);
	snprintf(key, sizeof(key), "%s_p%d_sender_sleeps_per_msg", prefix, p);
	emit(b, n, key, (double)all.sleeps / (double)msgs);
	snprintf(key, sizeof(key), "%s_p%d_sender_faults_per_msg", prefix, p);
	emit(b, n, key, (double)all.faults / (double)msgs);
	snprintf(key, sizeof(key), "%s_p%d_sender_preempted_per_msg", prefix,
	    p);
	emit(b, n, key, (double)all.preempted / (double)msgs);
}

/*
 * The consumer's side of a fan-in run: its CPU time, its time runnable
 * but not running (a CPU's queue: producers ahead of it), its sleeps
 * and its preemptions (voluntary and involuntary switches), from /proc,
 * at the start and the end.
 */
struct fanin_cons {
	uint64_t	 run_ns, queued_ns, sleeps, preempted;
};

static struct fanin_cons
fanin_cons_now(pid_t pid)
{
	struct fanin_cons c = { 0, 0, 0, 0 };
	unsigned long long run = 0, queued = 0, v = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if ((f = fopen(path, "re")) != NULL) {
		if (fscanf(f, "%llu %llu", &run, &queued) == 2) {
			c.run_ns = run;
			c.queued_ns = queued;
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return c;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
			c.sleeps = v;
		if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
			c.preempted = v;
	}
	fclose(f);
	return c;
}

/* Per message: the consumer's CPU, queued time, sleeps, preemptions. */
static void
fanin_cons_emit(struct bench *b, int n, const char *prefix, int p, pid_t pid,
    const struct fanin_cons *c0, uint64_t msgs)
{
	struct fanin_cons c1 = fanin_cons_now(pid);
	char key[64];

	if (msgs == 0 || c1.run_ns == 0)
		return;
	snprintf(key, sizeof(key), "%s_p%d_consumer_cpu_us_per_msg", prefix,
	    p);
	emit(b, n, key, (double)(c1.run_ns - c0->run_ns) / 1e3 /
	    (double)msgs);
	snprintf(key, sizeof(key), "%s_p%d_consumer_queued_us_per_msg",
	    prefix, p);
	emit(b, n, key, (double)(c1.queued_ns - c0->queued_ns) / 1e3 /
	    (double)msgs);
	snprintf(key, sizeof(key), "%s_p%d_consumer_sleeps_per_msg", prefix,
	    p);
	emit(b, n, key, (double)(c1.sleeps - c0->sleeps) / (double)msgs);
	snprintf(key, sizeof(key), "%s_p%d_consumer_preempted_per_msg",
	    prefix, p);
	emit(b, n, key, (double)(c1.preempted - c0->preempted) /
	    (double)msgs);
}

/*
 * With $BENCH_SCALE_WINDOWS set, each timed fan-in run's window on
 * stderr, CLOCK_MONOTONIC seconds: "window PREFIX P FROM TO", for
 * perf record -k CLOCK_MONOTONIC and perf report --time FROM,TO (a
 * profile of the run alone, not of the forks around it).
 */
static void
fanin_window(const char *prefix, int p, uint64_t from, uint64_t to)
{
	if (getenv("BENCH_SCALE_WINDOWS") != NULL)
		fprintf(stderr, "window %s %d %llu.%09llu %llu.%09llu\n", prefix,
		    p, (unsigned long long)(from / 1000000000ULL),
		    (unsigned long long)(from % 1000000000ULL),
		    (unsigned long long)(to / 1000000000ULL),
		    (unsigned long long)(to % 1000000000ULL));
}

/* P producers forked, each opened (or not), none started yet. */
struct fanin_run {
	pid_t		 pids[FANIN_P_MAX];	/* 0: its fork failed */
	int		 go[2], stop[2], res[2];
	int		 p, per, nopen;
};

/*
 * Fork P producers to s, total / P messages each, and wait until each has
 * opened: false on error.
 */
static bool
fanin_fork(struct fanin_run *fr, const struct fanin_src *s, int p,
    int total)
{
	int i, nforked;
	char c;

	fr->p = p;
	fr->per = total / p;
	if (pipe2(fr->go, O_CLOEXEC) == -1)
		return false;
	if (pipe2(fr->res, O_CLOEXEC) == -1) {
		close(fr->go[0]);
		close(fr->go[1]);
		return false;
	}
	if (pipe2(fr->stop, O_CLOEXEC) == -1) {
		close(fr->go[0]);
		close(fr->go[1]);
		close(fr->res[0]);
		close(fr->res[1]);
		return false;
	}
	for (i = nforked = 0; i < p; i++) {
		if ((fr->pids[i] = fork()) < 0)
			fr->pids[i] = 0;	/* not opened, not waited for */
		if (fr->pids[i] != 0) {
			nforked += fr->pids[i] > 0;
			continue;
		}
		close(fr->go[1]);
		close(fr->stop[1]);
		close(fr->res[0]);
		fanin_producer(s, fr->per, fr->go[0], fr->stop[0],
		    fr->res[1]);
	}
	close(fr->go[0]);
	close(fr->stop[0]);
	close(fr->res[1]);
	for (i = fr->nopen = 0; i < nforked; i++)
		if (read(fr->res[0], &c, 1) == 1 && c == 'y')
			fr->nopen++;
	return true;
}

/*
 * One run of the floor: P producers into a fresh ring taken by a process
 * of its own, with the same start, count and costs as ours.  Its rate,
 * or -1.
 */
static double
floor_run(struct bench *b, struct row *r, struct fanin_run *fr,
    struct floor_ring *f, bool one, int p)
{
	struct fanin_src s = { .ring = f };
	struct fanin_cons c0;
	uint64_t t0, t1, deadline, want;
	double rate;
	char prefix[32];
	pid_t cons;
	int i, st;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < FLOOR_CAP; i++)
		atomic_store(&f->cells[i].seq, (uint64_t)i);
	f->wake_one = one;
	if ((cons = fork()) == 0)
		floor_consumer(f);
	if (cons < 0)
		return -1;
	if (!fanin_fork(fr, &s, p, FANIN_MSGS)) {
		atomic_store(&f->stop, 1);
		(void)waitpid(cons, &st, 0);
		return -1;
	}
	/* The producers' warm-up messages taken (see fanin_producer). */
	deadline = now_ns() + 30000000000ULL;
	while (atomic_load(&f->taken) < (uint64_t)fr->nopen &&
	    now_ns() < deadline)
		usleep(1000);
	want = (uint64_t)fr->nopen * (uint64_t)fr->per;
	c0 = fanin_cons_now(cons);
	t0 = now_ns();
	close(fr->go[1]);		/* go */
	deadline = t0 + 120000000000ULL;
	while (atomic_load(&f->taken) < want + (uint64_t)fr->nopen &&
	    now_ns() < deadline)
		usleep(1000);
	t1 = now_ns();
	rate = atomic_load(&f->taken) >= want + (uint64_t)fr->nopen &&
	    fr->nopen == p ? (double)want / ((double)(t1 - t0) / 1e9) : -1;
	snprintf(prefix, sizeof(prefix), "fanin_floor_%s", one ? "one" : "all");
	fanin_window(prefix, p, t0, t1);
	if (rate > 0) {
		fanin_cons_emit(b, r->n, prefix, p, cons, &c0, want);
		fanin_costs(b, r->n, prefix, p, fr->res[0], fr->nopen, want);
	}
	close(fr->res[0]);
	close(fr->stop[1]);		/* stop */
	atomic_store(&f->stop, 1);
	for (i = 0; i < p; i++) {
		if (fr->pids[i] <= 0)
			continue;
		if (rate < 0)		/* may sleep in the ring for ever */
			(void)kill(fr->pids[i], SIGKILL);
		(void)waitpid(fr->pids[i], &st, 0);
	}
	(void)waitpid(cons, &st, 0);
	return rate;
}

/*
 * The bare ring's fan-in at P = 10 and 1,000 (see floor_put), its
 * producers woken all at once and one at a time: rates and ratios beside
 * ours.
 */
static void
fanin_floor(struct bench *b, struct row *r)
{
	static const int ps[2] = { 10, 1000 };
	struct floor_ring *f;
	struct fanin_run *fr;
	double *v;
	char key[64];
	int i, j;

	if (getenv("BENCH_SCALE_FANIN_FLOOR") != NULL &&
	    strcmp(getenv("BENCH_SCALE_FANIN_FLOOR"), "0") == 0)
		return;
	fr = calloc(1, sizeof(*fr));
	f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fr == NULL || f == MAP_FAILED) {
		free(fr);
		return;
	}
	for (i = 0; i < 2; i++) {
		v = r->fanin_floor[i];
		for (j = 0; j < 2; j++) {
			if (!fanin_p_wanted(ps[j]))
				continue;
			v[j] = floor_run(b, r, fr, f, i == 1, ps[j]);
			snprintf(key, sizeof(key),
			    "fanin_floor_%s_p%d_msg_per_s",
			    i == 1 ? "one" : "all", ps[j]);
			emit(b, r->n, key, v[j]);
		}
		snprintf(key, sizeof(key), "fanin_floor_%s_p1000_vs_p10",
		    i == 1 ? "one" : "all");
		emit(b, r->n, key, v[1] > 0 && v[0] > 0 ? v[1] / v[0] : -1);
	}
	munmap(f, sizeof(*f));
	free(fr);
}

/* Is fan-in at P to be run ($BENCH_SCALE_FANIN_P; unset: every P)? */
static bool
fanin_p_wanted(int p)
{
	const char *list = getenv("BENCH_SCALE_FANIN_P");
	char name[16];

	snprintf(name, sizeof(name), "%d", p);
	return phase(list, name);
}

/*
 * One fan-in run of ours: P producer processes, each with its own
 * producer slot, tell one actor total / P messages each as fast as they
 * can once a pipe closes; the time until the actor has taken them all.
 * Every producer is forked, attached and warmed (one message sent and
 * taken) before the start, and exits after the end.  Its rate (-1 if
 * not measured); its costs and its blocked senders woken per message
 * under prefix ("fanin", ...).
 */
static double
fanin_ours(struct bench *b, struct actord *ad, struct row *r,
    const struct fanin_src *s, struct fanin_run *fr, const char *prefix,
    int p, int total)
{
	struct shm_counters c0, c1;
	struct fanin_cons k0;
	struct node *nd;
	uint64_t t0, t1, deadline, want;
	double rate;
	char key[64];
	pid_t cons;
	int i;

	shm_counters(ad->arena, s->target.index, &c0);
	if (!fanin_fork(fr, s, p, total))
		return -1;
	/* The producers' warm-up messages taken (see fanin_producer). */
	want = c0.dequeued + (uint64_t)fr->nopen;
	deadline = now_ns() + 30000000000ULL;
	do {
		actord_run_once(ad, 1);
		shm_counters(ad->arena, s->target.index, &c0);
	} while (c0.dequeued < want && now_ns() < deadline);
	cons = (nd = actord_find(ad, "/w0/0")) != NULL ? nd->pid : 0;
	k0 = fanin_cons_now(cons);
	want = c0.dequeued + (uint64_t)fr->nopen * (uint64_t)fr->per;
	t0 = now_ns();
	close(fr->go[1]);		/* go */
	deadline = t0 + 120000000000ULL;
	do {
		actord_run_once(ad, 1);
		shm_counters(ad->arena, s->target.index, &c1);
	} while (c1.dequeued < want && now_ns() < deadline);
	t1 = now_ns();
	fanin_window(prefix, p, t0, t1);
	rate = fr->nopen == p && c1.dequeued >= want ?
	    (double)(c1.dequeued - c0.dequeued) /
	    ((double)(t1 - t0) / 1e9) : -1;
	if (c1.dequeued >= want) {
		if (cons > 0)
			fanin_cons_emit(b, r->n, prefix, p, cons, &k0,
			    c1.dequeued - c0.dequeued);
		fanin_costs(b, r->n, prefix, p, fr->res[0], fr->nopen,
		    c1.dequeued - c0.dequeued);
	}
	close(fr->res[0]);
	close(fr->stop[1]);		/* stop */
	if (fr->nopen < p)
		fail(r, "fan-in P=%d: %d producers found no producer slot", p,
		    p - fr->nopen);
	else if (c1.dequeued < want)
		fail(r, "fan-in P=%d: %llu of %llu messages taken in 120 s", p,
		    (unsigned long long)(c1.dequeued - c0.dequeued),
		    (unsigned long long)(want - c0.dequeued));
	/* actord's loop reaps them (orphans to it): wait for that. */
	deadline = now_ns() + 30000000000ULL;
	for (i = 0; i < p; i++)
		while (fr->pids[i] > 0 && kill(fr->pids[i], 0) == 0 &&
		    now_ns() < deadline)
			actord_run_once(ad, 1);
	snprintf(key, sizeof(key), "%s_p%d_msg_per_s", prefix, p);
	emit(b, r->n, key, rate);
	/* Blocked senders woken for their turn, per message. */
	snprintf(key, sizeof(key), "%s_p%d_wakeups_per_msg", prefix, p);
	emit(b, r->n, key, c1.dequeued > c0.dequeued ?
	    (double)(c1.sender_wakeups - c0.sender_wakeups) /
	    (double)(c1.dequeued - c0.dequeued) : -1);
	return rate;
}

/*
 * Fan-in at every P of fanin_p, FANIN_MSGS in all; then at P = 10 and
 * 1,000 with FANIN_LONG_MSGS in all (2,000 a producer at 1,000: what a
 * process costs to start, wake and fault in is then spread over ten
 * times the messages); then the floor.
 */
static void
bench_fanin(struct bench *b, struct actord *ad, struct row *r)
{
	struct fanin_src s = { .ad = ad };
	struct fanin_run *fr;
	struct actor *cl;
	char err[ACTOR_ERRBUF];
	int j;

	if (actor_open(ad->arena, -1, &cl, err, sizeof(err)) < 0 ||
	    actor_lookup(cl, "/w0/0", &s.target) < 0) {
		fail(r, "fan-in: no client or no /w0/0");
		return;
	}
	actor_close(cl);
	if ((fr = calloc(1, sizeof(*fr))) == NULL)
		return;
	for (j = 0; j < 4; j++)
		if (fanin_p_wanted(fanin_p[j]))
			r->fanin[j] = fanin_ours(b, ad, r, &s, fr, "fanin",
			    fanin_p[j], FANIN_MSGS);
	emit(b, r->n, "fanin_p1000_vs_p10", r->fanin[3] > 0 &&
	    r->fanin[1] > 0 ? r->fanin[3] / r->fanin[1] : -1);
	for (j = 0; j < 2; j++)
		if (fanin_p_wanted(fanin_p2[j]))
			r->fanin_long[j] = fanin_ours(b, ad, r, &s, fr,
			    "fanin_long", fanin_p2[j], FANIN_LONG_MSGS);
	emit(b, r->n, "fanin_long_p1000_vs_p10", r->fanin_long[1] > 0 &&
	    r->fanin_long[0] > 0 ? r->fanin_long[1] / r->fanin_long[0] : -1);
	free(fr);
	fanin_floor(b, r);
}

/* --- sparse traffic: actors against pipes ----------------------------- */

static uint64_t
schedstat_ns(pid_t pid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

/*
 * The minor page faults of every child reaped so far (RUSAGE_CHILDREN):
 * a count, which the load of a shared machine does not change as it
 * changes CPU times.
 */
static long
children_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru) == -1)
		return 0;
	return ru.ru_minflt;
}

/* The CPU time of every child reaped so far (RUSAGE_CHILDREN), ns. */
static uint64_t
children_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru) == -1)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
	    1000000000ULL + ((uint64_t)ru.ru_utime.tv_usec +
	    (uint64_t)ru.ru_stime.tv_usec) * 1000ULL;
}

static uint64_t
self_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Producer p of SPARSE_PRODUCERS: actor a gets its r-th message at
 * t0 + r / RATE + a / (N * RATE) seconds, from producer (r + a) % 4, so
 * each actor hears from every producer and the load is even.  A message
 * goes up to 1 ms early, so a producer sleeps at most 1,000 times a
 * second whatever N.  Its own CPU time goes back on fd res.
 */
static void
sparse_run(int p, int n, uint64_t t0, int secs, void *arg,
    int (*send)(void *, int))
{
	uint64_t period = 1000000000ULL / SPARSE_RATE, t, now;
	struct timespec ts;
	int rounds = secs * SPARSE_RATE, rr, a;

	for (rr = 0; rr < rounds; rr++) {
		a = ((p - rr) % SPARSE_PRODUCERS + SPARSE_PRODUCERS) %
		    SPARSE_PRODUCERS;
		for (; a < n; a += SPARSE_PRODUCERS) {
			t = t0 + (uint64_t)rr * period + (uint64_t)a * period /
			    (uint64_t)n;
			now = now_ns();
			if (t > now + 1000000) {
				ts.tv_sec = (time_t)(t / 1000000000ULL);
				ts.tv_nsec = (long)(t % 1000000000ULL);
				clock_nanosleep(CLOCK_MONOTONIC,
				    TIMER_ABSTIME, &ts, NULL);
			}
			(void)send(arg, a);
		}
	}
}

/* What a producer of the sparse schedule reports on its pipe. */
struct sparse_report {
	uint64_t	 cpu_ns;
	uint64_t	 minflt;
};

static const char *const sparse_name[SP_DESIGNS] = { "actors", "pipes",
    "futex", "futex_norseq", "futex_cell", "actors_lap2" };

/* One design's cost over the window: its receivers' and producers'. */
struct sparse_cost {
	uint64_t	 rcpu, pcpu;	/* ns */
	uint64_t	 rflt, pflt;	/* minor page faults */
};

struct actor_sender {
	struct actor	*c;
	struct actor_ref *refs;
	char		 payload[MSG_LEN];
	int		 failed;
};

static int
send_actor(void *arg, int a)
{
	struct actor_sender *s = arg;

	if (actor_tell(s->c, s->refs[a], TAG_IGNORED, s->payload,
	    sizeof(s->payload)) < 0)
		s->failed++;
	return 0;
}

struct pipe_sender {
	int		*fds;
	char		 payload[MSG_LEN];
	int		 failed;
};

static int
send_pipe(void *arg, int a)
{
	struct pipe_sender *s = arg;

	if (write(s->fds[a], s->payload, sizeof(s->payload)) !=
	    (ssize_t)sizeof(s->payload))
		s->failed++;
	return 0;
}

/* Sum of the schedstat CPU of pids, ns. */
static uint64_t
sum_cpu(const pid_t *pids, int n)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			s += schedstat_ns(pids[i]);
	return s;
}

/* Sum of the minor page faults of pids (/proc/PID/stat). */
static uint64_t
sum_minflt(const pid_t *pids, int n)
{
	char path[64], buf[512], *p;
	unsigned long flt;
	uint64_t s = 0;
	FILE *f;
	int i;

	for (i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pids[i]);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) != NULL &&
		    (p = strrchr(buf, ')')) != NULL && sscanf(p + 2,
		    "%*c %*d %*d %*d %*d %*d %*u %lu", &flt) == 1)
			s += flt;
		fclose(f);
	}
	return s;
}

/*
 * The schedule of producer p (sparse_run), from just before t0: what it
 * cost the producer, its CPU time and minor page faults.
 */
static struct sparse_report
sparse_produce(int p, int n, uint64_t t0, int secs, void *arg,
    int (*send)(void *, int))
{
	struct sparse_report rep;
	struct rusage ru0, ru1;

	spin_until(t0 - 1000000);
	getrusage(RUSAGE_SELF, &ru0);
	rep.cpu_ns = self_cpu_ns();
	sparse_run(p, n, t0, secs, arg, send);
	rep.cpu_ns = self_cpu_ns() - rep.cpu_ns;
	getrusage(RUSAGE_SELF, &ru1);
	rep.minflt = (uint64_t)(ru1.ru_minflt - ru0.ru_minflt);
	return rep;
}

/*
 * A design's figures per message: the CPU time of its receivers and of
 * its producers, and the minor page faults of each (a fault is a page
 * this process maps for the first time: a lane's next page of cells).
 */
static void
emit_sparse(struct bench *b, struct row *r, enum sparse_design d,
    const struct sparse_cost *c)
{
	static const char *const what[4] = { "receivers_us", "producers_us",
	    "receivers_minflt", "producers_minflt" };
	double msgs = (double)r->n * b->sparse_s * SPARSE_RATE;
	char key[96];
	int k;

	r->per_msg[d][0] = (double)c->rcpu / 1e3 / msgs;
	r->per_msg[d][1] = (double)c->pcpu / 1e3 / msgs;
	r->per_msg[d][2] = (double)c->rflt / msgs;
	r->per_msg[d][3] = (double)c->pflt / msgs;
	for (k = 0; k < 4; k++) {
		snprintf(key, sizeof(key), "sparse_%s_%s_per_msg",
		    sparse_name[d], what[k]);
		emit(b, r->n, key, r->per_msg[d][k]);
	}
}

/* The wake-ups sent to, and the messages taken by, the n actors. */
static void
wake_count(struct actord *ad, const struct actor_ref *refs, int n,
    uint64_t *wakeups, uint64_t *taken)
{
	struct shm_counters c;
	int i;

	*wakeups = *taken = 0;
	for (i = 0; i < n; i++)
		if (shm_counters(ad->arena, refs[i].index, &c) == 0) {
			*wakeups += c.wakeups;
			*taken += c.dequeued;
		}
}

/* The arena's distance between two mailboxes, in whole pages. */
static size_t
mailbox_stride(struct shm_arena *arena)
{
	unsigned char *m0, *m1;
	size_t len;

	if (shm_nmailboxes(arena) < 2 ||
	    (m0 = shm_inhand(arena, 0, &len)) == NULL ||
	    (m1 = shm_inhand(arena, 1, &len)) == NULL || m1 <= m0)
		return 4096;
	return ((size_t)(m1 - m0) + 4095) & ~(size_t)4095;
}

/*
 * Maps every page of the arena's data in this process, as a producer that
 * has written to every lane once has them: MADV_POPULATE_WRITE over each
 * mapping of the file that holds mailbox 0 (/proc/self/maps).
 */
static int
populate_arena(struct shm_arena *arena)
{
	unsigned long lo, hi, ino, want = 0;
	uintptr_t m0;
	char line[512];
	size_t len;
	FILE *f;
	int rc = -1;

	if ((m0 = (uintptr_t)shm_inhand(arena, 0, &len)) == 0 ||
	    (f = fopen("/proc/self/maps", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi,
		    &ino) == 3 && m0 >= lo && m0 < hi)
			want = ino;
	rewind(f);
	while (want != 0 && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi,
		    &ino) == 3 && ino == want && strstr(line, " rw") != NULL)
			rc = madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	fclose(f);
	return rc;
}

/*
 * One window of the schedule over the n actors (refs; their pids): the
 * receivers' CPU (schedstat) and faults read before t0 and after the
 * producers' end, each producer's own from the start of its schedule,
 * and actord's (this process) meanwhile.  With populate, each producer
 * first maps every page of the arena (populate_arena), and starts later
 * for it.  false if a producer did not report.
 */
static bool
actors_window(struct actord *ad, int n, int secs,
    bool populate, struct actor_ref *refs, const pid_t *pids,
    struct sparse_cost *c, uint64_t *actord_ns)
{
	struct actor_sender s;
	struct sparse_report rep;
	char err[ACTOR_ERRBUF];
	uint64_t t0, c0, f0, self0;
	pid_t prod[SPARSE_PRODUCERS];
	int i, res[2], failed = 0;

	memset(c, 0, sizeof(*c));
	memset(s.payload, 's', sizeof(s.payload));
	s.refs = refs;
	s.failed = 0;
	if (pipe2(res, O_CLOEXEC) == -1)
		return false;
	t0 = now_ns() + 1000000000ULL + (uint64_t)n * (populate ? 2000000 :
	    20000);
	for (i = 0; i < SPARSE_PRODUCERS; i++) {
		if ((prod[i] = fork()) != 0)
			continue;
		close(res[0]);
		if (actor_open(ad->arena, -1, &s.c, err, sizeof(err)) < 0)
			_exit(1);
		if (populate && populate_arena(ad->arena) != 0)
			_exit(3);
		rep = sparse_produce(i, n, t0, secs, &s, send_actor);
		actor_close(s.c);
		(void)!write(res[1], &rep, sizeof(rep));
		_exit(s.failed > 0 ? 2 : 0);
	}
	close(res[1]);
	/* The sweep takes well under the second left before t0. */
	c0 = sum_cpu(pids, n);
	f0 = sum_minflt(pids, n);
	self0 = self_cpu_ns();
	for (i = 0; i < SPARSE_PRODUCERS; i++) {
		memset(&rep, 0, sizeof(rep));
		while (read(res[0], &rep, sizeof(rep)) != (ssize_t)sizeof(rep)) {
			if (errno != EINTR && errno != EAGAIN) {
				failed++;
				break;
			}
		}
		c->pcpu += rep.cpu_ns;
		c->pflt += rep.minflt;
		/* actord's loop keeps turning while the traffic runs. */
		actord_run_once(ad, 0);
	}
	*actord_ns = self_cpu_ns() - self0;
	c->rcpu = sum_cpu(pids, n) - c0;
	c->rflt = sum_minflt(pids, n) - f0;
	close(res[0]);
	for (i = 0; i < SPARSE_PRODUCERS; i++)
		while (kill(prod[i], 0) == 0)
			actord_run_once(ad, 10);
	return failed == 0;
}

/* The n actors' references and pids, for the sparse windows. */
static bool
actors_of(struct actord *ad, int n, struct actor_ref *refs, pid_t *pids,
    struct row *r)
{
	struct actor *c;
	struct node *nd;
	char err[ACTOR_ERRBUF], path[64];
	int i;

	if (actor_open(ad->arena, -1, &c, err, sizeof(err)) < 0) {
		fail(r, "sparse: actor_open: %s", err);
		return false;
	}
	for (i = 0; i < n; i++) {
		path_of(n, i, path, sizeof(path));
		nd = actord_find(ad, path);
		pids[i] = nd != NULL ? nd->pid : 0;
		(void)actor_lookup(c, path, &refs[i]);
	}
	actor_close(c);
	return true;
}

/* The sparse schedule over the actors, in their lanes' first lap. */
static void
bench_sparse(struct bench *b, struct actord *ad, struct row *r)
{
	struct actor_ref *refs;
	struct sparse_cost c;
	uint64_t self, w0, w1, d0, d1;
	pid_t *pids;
	int n = r->n;

	pids = calloc((size_t)n, sizeof(*pids));
	refs = calloc((size_t)n, sizeof(*refs));
	if (pids == NULL || refs == NULL || !actors_of(ad, n, refs, pids, r))
		goto out;
	r->mb_stride = mailbox_stride(ad->arena);
	wake_count(ad, refs, n, &w0, &d0);
	if (!actors_window(ad, n, b->sparse_s, false, refs, pids, &c,
	    &self))
		fail(r, "sparse: a producer did not report");
	wake_count(ad, refs, n, &w1, &d1);
	r->sparse_cpu = (double)(c.rcpu + c.pcpu + self) / 1e9;
	emit(b, n, "sparse_actors_cpu_s", r->sparse_cpu);
	emit(b, n, "sparse_actors_receivers_cpu_s", (double)c.rcpu / 1e9);
	emit(b, n, "sparse_actors_producers_cpu_s", (double)c.pcpu / 1e9);
	emit_sparse(b, r, SP_ACTORS, &c);
	emit_str(b, n, "sparse_rseq", b->rseq ? "registered" :
	    "off for actors and pipe readers");
	emit(b, n, "sparse_actors_actord_cpu_s", (double)self / 1e9);
	/* Futex wake-ups the senders made, per message taken. */
	emit(b, n, "sparse_wakeups_per_msg", d1 > d0 ? (double)(w1 - w0) /
	    (double)(d1 - d0) : -1);
	if (n <= b->lap2_max)
		bench_sparse_lap2(b, ad, r, refs, pids);
out:
	free(pids);
	free(refs);
}

/*
 * Every actor's main lane once round: its capacity in tells from this
 * process, a quarter at a time, each quarter taken before the next is
 * sent, so that each receiver has mapped every page of its cells.  false
 * if a quarter was not taken within LAP_MS.
 */
static bool
lap_lanes(struct actord *ad, struct actor_ref *refs, int n)
{
	struct actor *c;
	char err[ACTOR_ERRBUF], payload[MSG_LEN];
	uint64_t w, taken, want, deadline;
	uint32_t quarter;
	int q, i, k;

	memset(payload, 'l', sizeof(payload));
	if (actor_open(ad->arena, -1, &c, err, sizeof(err)) < 0)
		return false;
	for (q = 0; q < 4; q++) {
		wake_count(ad, refs, n, &w, &want);
		for (i = 0; i < n; i++) {
			quarter = shm_mailbox_capacity(ad->arena,
			    refs[i].index) / 4;
			for (k = 0; k < (int)quarter; k++)
				if (actor_tell(c, refs[i], TAG_IGNORED,
				    payload, sizeof(payload)) == 0)
					want++;
		}
		deadline = now_ns() + LAP_MS * 1000000ULL;
		do {
			actord_run_once(ad, 1);
			wake_count(ad, refs, n, &w, &taken);
		} while (taken < want && now_ns() < deadline);
		if (taken < want)
			break;
	}
	actor_close(c);
	return q == 4;
}

/*
 * The sparse schedule again over the same actors, in their lanes' second
 * lap: what a tree that has run for a while pays a message.  Each lane
 * has gone once round (lap_lanes), the receivers have gone back to
 * sleeping at once (a second of the schedule, not counted: SHM_NAPS_FENCE
 * sleeps each), and each producer maps the arena before its schedule
 * (populate_arena).  The first lap's page faults left out, what is left
 * is the mailbox's cost against the floors'.
 */
static void
bench_sparse_lap2(struct bench *b, struct actord *ad, struct row *r,
    struct actor_ref *refs, const pid_t *pids)
{
	struct sparse_cost c;
	uint64_t self;
	int n = r->n;

	if (!lap_lanes(ad, refs, n)) {
		fail(r, "sparse, second lap: the lanes were not taken in %d ms",
		    LAP_MS);
		return;
	}
	if (!actors_window(ad, n, 1, false, refs, pids, &c, &self) ||
	    !actors_window(ad, n, b->sparse_s, true, refs, pids, &c,
	    &self)) {
		fail(r, "sparse, second lap: a producer did not report");
		return;
	}
	r->lap2_cpu = (double)(c.rcpu + c.pcpu + self) / 1e9;
	emit(b, n, "sparse_actors_lap2_cpu_s", r->lap2_cpu);
	emit_sparse(b, r, SP_LAP2, &c);
}

/*
 * The schedule of sparse_run from SPARSE_PRODUCERS processes, each
 * sending with send(arg, a): the receivers' CPU (schedstat) and minor
 * faults from before the start to after the end, and the producers' own.
 */
static void
sparse_window(struct bench *b, int n, void *arg, int (*send)(void *, int),
    const pid_t *readers, struct sparse_cost *c)
{
	struct sparse_report rep;
	pid_t prod[SPARSE_PRODUCERS];
	uint64_t t0, c0, f0;
	int i, res[2];

	memset(c, 0, sizeof(*c));
	if (pipe2(res, O_CLOEXEC) == -1)
		return;
	t0 = now_ns() + 1000000000ULL + (uint64_t)n * 20000;
	for (i = 0; i < SPARSE_PRODUCERS; i++) {
		if ((prod[i] = fork()) != 0)
			continue;
		close(res[0]);
		rep = sparse_produce(i, n, t0, b->sparse_s, arg, send);
		(void)!write(res[1], &rep, sizeof(rep));
		_exit(0);
	}
	close(res[1]);
	c0 = sum_cpu(readers, n);
	f0 = sum_minflt(readers, n);
	for (i = 0; i < SPARSE_PRODUCERS; i++) {
		if (read(res[0], &rep, sizeof(rep)) == (ssize_t)sizeof(rep)) {
			c->pcpu += rep.cpu_ns;
			c->pflt += rep.minflt;
		}
	}
	c->rcpu = sum_cpu(readers, n) - c0;
	c->rflt = sum_minflt(readers, n) - f0;
	close(res[0]);
	for (i = 0; i < SPARSE_PRODUCERS; i++)
		if (prod[i] > 0)
			waitpid(prod[i], NULL, 0);
}

/* The same schedule over one pipe per actor, each reader blocked in read. */
static void
bench_pipes(struct bench *b, struct row *r)
{
	struct pipe_sender s;
	struct sparse_cost c;
	pid_t *readers;
	int i, p[2], n = r->n;
	char buf[MSG_LEN];

	readers = calloc((size_t)n, sizeof(*readers));
	s.fds = calloc((size_t)n, sizeof(*s.fds));
	memset(s.payload, 'p', sizeof(s.payload));
	s.failed = 0;
	for (i = 0; i < n; i++) {
		if (pipe(p) == -1) {
			fail(r, "pipes: pipe %d: %s", i, strerror(errno));
			n = i;
			break;
		}
		if ((readers[i] = fork()) == 0) {
			if (p[0] != 3) {
				dup2(p[0], 3);
				close(p[0]);
			}
			syscall(SYS_close_range, 4U, ~0U, 0);
			if (!b->rseq)
				(void)rseq_leave();
			while (read(3, buf, sizeof(buf)) > 0)
				continue;
			_exit(0);
		}
		close(p[0]);
		s.fds[i] = p[1];
	}
	sparse_window(b, n, &s, send_pipe, readers, &c);
	r->pipe_cpu = (double)(c.rcpu + c.pcpu) / 1e9;
	emit(b, r->n, "sparse_pipes_cpu_s", r->pipe_cpu);
	emit(b, r->n, "sparse_pipes_receivers_cpu_s", (double)c.rcpu / 1e9);
	emit(b, r->n, "sparse_pipes_producers_cpu_s", (double)c.pcpu / 1e9);
	emit_sparse(b, r, SP_PIPES, &c);
	emit(b, r->n, "sparse_actors_vs_pipes", r->sparse_cpu > 0 &&
	    r->pipe_cpu > 0 ? r->sparse_cpu / r->pipe_cpu : -1);
	for (i = 0; i < n; i++)
		close(s.fds[i]);	/* EOF: the readers exit */
	for (i = 0; i < n; i++)
		if (readers[i] > 0)
			waitpid(readers[i], NULL, 0);
	free(readers);
	free(s.fds);
}

/*
 * A bare futex mailbox: the message counter the receiver sleeps on and
 * its "asleep" word, on one line as the arena's wake-up words, that line
 * at FUTEX_LINE in a mailbox's first page (the arena's: the main lane's
 * producers' line, its first).
 */
#define FUTEX_LINE	0
#define FUTEX_END	UINT32_MAX	/* the counter's value: exit */

struct futex_box {
	_Atomic uint32_t count;
	_Atomic uint32_t asleep;
};

/*
 * The cell floor's message bytes: FUTEX_CELLS cells of MSG_LEN on the
 * lines after the box's, in the same page (the least a mailbox in shared
 * memory moves per message: the bytes, through memory, besides the
 * wake-up).  The producers write a cell before they bump the counter and
 * the receiver reads it after; the cells are not claimed (several
 * producers may write one at once): what is measured is the lines that
 * cross, not a protocol.
 */
#define FUTEX_CELLS	4

struct futex_sender {
	unsigned char	*base;
	size_t		 stride;
	bool		 cells;		/* the cell floor */
	unsigned char	 payload[MSG_LEN];
};

static struct futex_box *
futex_box(const struct futex_sender *s, int a)
{
	return (struct futex_box *)(void *)(s->base + (size_t)a * s->stride +
	    FUTEX_LINE);
}

/* Cell i of box f (the cell floor). */
static unsigned char *
futex_cell(struct futex_box *f, uint32_t i)
{
	return (unsigned char *)f + 64 + (size_t)(i % FUTEX_CELLS) * MSG_LEN;
}

/* A message: the counter bumped; a FUTEX_WAKE only if it said it sleeps. */
static int
send_futex(void *arg, int a)
{
	const struct futex_sender *s = arg;
	struct futex_box *f = futex_box(s, a);

	if (s->cells)
		memcpy(futex_cell(f, atomic_load_explicit(&f->count,
		    memory_order_relaxed)), s->payload, MSG_LEN);
	atomic_fetch_add_explicit(&f->count, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&f->asleep, memory_order_relaxed) &&
	    atomic_exchange(&f->asleep, 0))
		syscall(SYS_futex, &f->count, FUTEX_WAKE, 1, NULL, NULL, 0);
	return 0;
}

/*
 * A receiver: takes each message (the counter moved; with cells, reads
 * its bytes) and sleeps.
 */
static void __attribute__((noreturn))
futex_receiver(struct futex_box *f, bool cells)
{
	unsigned char got[MSG_LEN] = { 0 };
	uint32_t seen = 0, v;

	for (;;) {
		v = atomic_load(&f->count);
		if (v == FUTEX_END)
			_exit(0);
		if (v != seen) {
			for (; cells && seen != v; seen++) {
				memcpy(got, futex_cell(f, seen), MSG_LEN);
				__asm__ volatile("" : : "r"(got) : "memory");
			}
			seen = v;
			continue;
		}
		atomic_store_explicit(&f->asleep, 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load(&f->count) != seen) {
			atomic_store(&f->asleep, 0);
			continue;
		}
		syscall(SYS_futex, &f->count, FUTEX_WAIT, seen, NULL, NULL, 0);
	}
}

/*
 * FUTEX_WAKE of one of the n receivers asleep, at random, one every
 * SEND_GAP_NS, as bench_send tells: send's floor with N sleepers in the
 * kernel's futex table, which bench_send's 64 do not show.
 */
static void
futex_wake_n(struct bench *b, struct row *r, struct futex_sender *s, int n)
{
	static uint64_t t[SEND_ROUNDS];
	uint64_t t0, next;
	int i;

	srandom(3);
	next = now_ns() + SEND_GAP_NS;
	for (i = 0; i < SEND_ROUNDS; i++) {
		spin_until(next);
		t0 = now_ns();
		(void)send_futex(s, (int)(random() % n));
		next = now_ns();
		t[i] = next - t0;
		next += SEND_GAP_NS;
	}
	r->wake_n50 = quantile_ns(t, SEND_ROUNDS, 0.5);
	emit(b, r->n, "futex_wake_n_p50_us", r->wake_n50);
}

/*
 * A floor receiver that leaves rseq: glibc registers every thread for
 * restartable sequences, and the kernel then updates the thread's rseq
 * area (in its thread block) on every return to user space after it ran
 * elsewhere: on a sleeper's every wake-up, a write to a page the wake-up
 * may not otherwise touch.  0, or -1 (not registered, or refused).
 */
static int
rseq_leave(void)
{
	void *area;

	if (__rseq_size == 0)
		return -1;
	area = (char *)__builtin_thread_pointer() + __rseq_offset;
	/* glibc 2.35 to 2.39 registered 32 bytes and said 32. */
	if (syscall(SYS_rseq, area, __rseq_size < 32 ? 32 : __rseq_size,
	    RSEQ_FLAG_UNREGISTER, RSEQ_SIG) == 0 ||
	    syscall(SYS_rseq, area, __rseq_size, RSEQ_FLAG_UNREGISTER,
	    RSEQ_SIG) == 0)
		return 0;
	return -1;
}

/*
 * The sparse schedule over the n bare futex mailboxes of s, each with a
 * receiver process, which leaves rseq first unless rseq: its cost.  Then,
 * with rseq, send's floor with N asleep (futex_wake_n).  -1 if a receiver
 * could not leave rseq.
 */
static int
futex_pass(struct bench *b, struct row *r, struct futex_sender *s, int n,
    bool rseq, struct sparse_cost *c)
{
	pid_t *readers;
	int i, st, left = 0;

	readers = calloc((size_t)n, sizeof(*readers));
	for (i = 0; i < n; i++) {
		atomic_store(&futex_box(s, i)->count, 0);
		atomic_store(&futex_box(s, i)->asleep, 0);
	}
	for (i = 0; i < n; i++) {
		if ((readers[i] = fork()) == 0) {
			syscall(SYS_close_range, 3U, ~0U, 0);
			if (!rseq && rseq_leave() < 0)
				_exit(1);
			futex_receiver(futex_box(s, i), s->cells);
		}
	}
	sparse_window(b, n, s, send_futex, readers, c);
	if (rseq && !s->cells)
		futex_wake_n(b, r, s, n);
	for (i = 0; i < n; i++) {
		atomic_store(&futex_box(s, i)->count, FUTEX_END);
		syscall(SYS_futex, &futex_box(s, i)->count, FUTEX_WAKE, 1,
		    NULL, NULL, 0);
	}
	for (i = 0; i < n; i++)
		if (readers[i] > 0 && waitpid(readers[i], &st, 0) ==
		    readers[i] && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
			left = -1;
	free(readers);
	return left;
}

/*
 * The same schedule over bare futex mailboxes: N receiver processes, each
 * in FUTEX_WAIT on its own word of a shared memfd, the words a mailbox
 * apart (the arena's distance), and nothing else: the floor of a design
 * in shared memory.  Then again with receivers out of rseq: what the
 * kernel's rseq update costs each wake-up, in every design alike.
 */
static void
bench_futex(struct bench *b, struct row *r)
{
	struct futex_sender s = { 0 };
	struct sparse_cost c;
	size_t size;
	int fd, n = r->n;

	s.stride = r->mb_stride > 4096 ? r->mb_stride : 4096;
	size = (size_t)n * s.stride;
	if ((fd = memfd_create("bench-futex", MFD_CLOEXEC)) == -1 ||
	    ftruncate(fd, (off_t)size) == -1 ||
	    (s.base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0)) == MAP_FAILED) {
		fail(r, "futex floor: memfd: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	(void)futex_pass(b, r, &s, n, true, &c);
	r->futex_cpu = (double)(c.rcpu + c.pcpu) / 1e9;
	emit(b, n, "sparse_futex_cpu_s", r->futex_cpu);
	emit(b, n, "sparse_futex_receivers_cpu_s", (double)c.rcpu / 1e9);
	emit(b, n, "sparse_futex_producers_cpu_s", (double)c.pcpu / 1e9);
	emit_sparse(b, r, SP_FUTEX, &c);
	emit(b, n, "sparse_actors_vs_futex", r->sparse_cpu > 0 &&
	    r->futex_cpu > 0 ? r->sparse_cpu / r->futex_cpu : -1);
	emit(b, n, "sparse_futex_vs_pipes", r->pipe_cpu > 0 &&
	    r->futex_cpu > 0 ? r->futex_cpu / r->pipe_cpu : -1);
	if (futex_pass(b, r, &s, n, false, &c) == 0) {
		r->futex_norseq_cpu = (double)(c.rcpu + c.pcpu) / 1e9;
		emit(b, n, "sparse_futex_norseq_cpu_s", r->futex_norseq_cpu);
		emit_sparse(b, r, SP_NORSEQ, &c);
	} else {
		emit_str(b, n, "sparse_futex_norseq", "rseq not left");
	}
	s.cells = true;
	memset(s.payload, 0, sizeof(s.payload));
	(void)futex_pass(b, r, &s, n, true, &c);
	r->futex_cell_cpu = (double)(c.rcpu + c.pcpu) / 1e9;
	emit(b, n, "sparse_futex_cell_cpu_s", r->futex_cell_cpu);
	emit_sparse(b, r, SP_CELL, &c);
	emit(b, n, "sparse_actors_vs_futex_cell", r->sparse_cpu > 0 &&
	    r->futex_cell_cpu > 0 ? r->sparse_cpu / r->futex_cell_cpu : -1);
	emit(b, n, "sparse_futex_cell_vs_pipes", r->pipe_cpu > 0 &&
	    r->futex_cell_cpu > 0 ? r->futex_cell_cpu / r->pipe_cpu : -1);
	munmap(s.base, size);
}

/* --- one_for_all -------------------------------------------------------- */

static bool
ofa_back(struct actord *ad, struct node *g, pid_t old)
{
	struct node *k;
	size_t i;

	if (!core_root_up(ad) || g->state != NS_RUNNING || g->plan.kind != PLAN_NONE)
		return false;
	for (i = 0; i < g->nkids; i++) {
		k = g->kids[i];
		if (k->state != NS_RUNNING)
			return false;
		if (k->pid == old)
			return false;
	}
	return true;
}

/* The floor of one_for_all's mode, to main; < 0: not measured. */
static double
ofa_mode_floor(const struct row *r, bool parallel)
{
	if (parallel)
		return r->par_start > 0 && r->par_stop > 0 ? r->par_start +
		    r->par_stop : -1;
	return r->seq_start > 0 && r->seq_stop > 0 ? r->seq_start +
	    r->seq_stop : -1;
}

static void
bench_ofa(struct bench *b, struct row *r, bool parallel)
{
	const char *key = parallel ? "one_for_all_parallel" : "one_for_all";
	char name[64];
	uint64_t lat[3], t0, deadline, stopped = 0, cpu0, cpu_stop = 0, kids0;
	double stop_ms = -1, cpu_stop_us = -1, cpu_start_us = -1;
	double kid_cpu_us = -1, kid_flt = -1;
	long flt0;
	struct actord *ad;
	struct node *g, *k;
	int i, rounds = r->n >= 10000 ? 1 : 3, done = 0;
	pid_t old;

	if ((ad = core_tree(b, r->n, true, r)) == NULL)
		return;
	/* Read at each start and stop of /g: set before the boot. */
	ad->spec->root.children[0].sup->start = parallel ? START_PARALLEL :
	    START_ORDERED;
	actord_boot(ad);
	if (!core_wait_running(ad, r->n, NO_PROGRESS_MS, r))
		goto out;
	g = actord_find(ad, "/g");
	for (i = 0; i < rounds; i++) {
		/* A group just started, or just back: quiet first. */
		(void)settle(ad, SETTLE_MAX_MS);
		k = g->kids[g->nkids / 2];
		old = k->pid;
		t0 = now_ns();
		deadline = t0 + 600000000000ULL;
		cpu0 = self_cpu_ns();
		kids0 = children_cpu_ns();
		flt0 = children_faults();
		kill(old, SIGKILL);
		/* Until the set restart has begun, then until it is done. */
		while (g->plan.kind == PLAN_NONE && k->pid == old && !ad->done &&
		    now_ns() < deadline)
			actord_run_once(ad, 10);
		while (!ofa_back(ad, g, old) && !ad->done &&
		    now_ns() < deadline) {
			if (g->plan.kind != PLAN_NONE &&
			    g->plan.phase != PH_STOP && stopped == 0) {
				stopped = now_ns();
				cpu_stop = self_cpu_ns();
			}
			actord_run_once(ad, 10);
		}
		if (!ofa_back(ad, g, old)) {
			fail(r, "one_for_all: %s", ad->done ? ad->message :
			    "not back within 600 s");
			break;
		}
		lat[done++] = now_ns() - t0;
		if (stopped != 0) {
			stop_ms = (double)(stopped - t0) / 1e6;
			cpu_stop_us = (double)(cpu_stop - cpu0) / 1e3 /
			    r->n;
			cpu_start_us = (double)(self_cpu_ns() - cpu_stop) /
			    1e3 / r->n;
		}
		/* The N reaped: each one's whole life (start, idle, exit). */
		kid_cpu_us = (double)(children_cpu_ns() - kids0) / 1e3 / r->n;
		kid_flt = (double)(children_faults() - flt0) / r->n;
		stopped = 0;
	}
	if (done > 0) {
		*(parallel ? &r->ofa_par : &r->ofa) = quantile_ns(lat,
		    (size_t)done, 0.5) / 1000.0;
		if (r->floor_start > 0 && r->floor_stop > 0)
			r->ofa_floor = r->floor_start + r->floor_stop;
	}
	snprintf(name, sizeof(name), "%s_restart_ms", key);
	emit(b, r->n, name, parallel ? r->ofa_par : r->ofa);
	/* Of which the N stops (the last round's): the rest is the N starts. */
	snprintf(name, sizeof(name), "%s_stop_ms", key);
	emit(b, r->n, name, stop_ms);
	/* actord's CPU per child (the last round's): flat in N if O(1). */
	snprintf(name, sizeof(name), "%s_stop_actord_cpu_us", key);
	emit(b, r->n, name, cpu_stop_us);
	snprintf(name, sizeof(name), "%s_start_actord_cpu_us", key);
	emit(b, r->n, name, cpu_start_us);
	snprintf(name, sizeof(name), "%s_actor_cpu_us", key);
	emit(b, r->n, name, kid_cpu_us);
	snprintf(name, sizeof(name), "%s_actor_faults", key);
	emit(b, r->n, name, kid_flt);
	r->ofa_flt[parallel] = kid_flt;
	r->ofa_cpu[parallel][0] = cpu_stop_us;
	r->ofa_cpu[parallel][1] = cpu_start_us;
	r->ofa_cpu[parallel][2] = kid_cpu_us;
	if (!parallel)
		emit(b, r->n, "one_for_all_floor_ms", r->ofa_floor);
	snprintf(name, sizeof(name), "%s_vs_floor", key);
	emit(b, r->n, name, (parallel ? r->ofa_par : r->ofa) > 0 &&
	    r->ofa_floor > 0 ? (parallel ? r->ofa_par : r->ofa) /
	    r->ofa_floor : -1);
	/* Against the floor of this mode, to main (bench_ready_floor). */
	snprintf(name, sizeof(name), "%s_mode_floor_ms", key);
	emit(b, r->n, name, ofa_mode_floor(r, parallel));
	snprintf(name, sizeof(name), "%s_vs_mode_floor", key);
	emit(b, r->n, name, (parallel ? r->ofa_par : r->ofa) > 0 &&
	    ofa_mode_floor(r, parallel) > 0 ? (parallel ? r->ofa_par :
	    r->ofa) / ofa_mode_floor(r, parallel) : -1);
out:
	core_stop(ad);
}

/* --- the table ------------------------------------------------------------ */

static void
cell(double v, const char *fmt)
{
	if (v < 0)
		printf(" %10s", "-");
	else
		printf(fmt, v);
}

static void
print_table(struct row *rows, int nr)
{
	int i, j;

	printf("\nbench-scale: N workers of a minimal libactor actor\n");
	printf("  %-34s", "N");
	for (i = 0; i < nr; i++)
		printf(" %10d", rows[i].n);
	printf("   target\n");
#define ROW(label, expr, fmt, target) do {				\
	printf("  %-34s", label);					\
	for (i = 0; i < nr; i++) {					\
		struct row *r = &rows[i];				\
		cell((expr), fmt);					\
	}								\
	printf("   %s\n", target);					\
} while (0)
	ROW("start ms", r->start, " %10.1f", "");
	ROW("  floor fork/exec ms", r->floor_start, " %10.1f", "");
	ROW("  vs floor", r->start > 0 && r->floor_start > 0 ?
	    r->start / r->floor_start : -1, " %9.2fx", "<= 1.2x");
	ROW("  floor two execs, to main ms", r->floor_tree, " %10.1f", "");
	ROW("  vs that floor", r->start > 0 && r->floor_tree > 0 ?
	    r->start / r->floor_tree : -1, " %9.2fx", "the limit");
	ROW("memory per actor KiB", r->mem_per_actor_kb, " %10.1f",
	    "<= 64, flat");
	ROW("  total MiB", r->mem_total_kb < 0 ? -1 :
	    r->mem_total_kb / 1024, " %10.1f", "");
	ROW("restart p50 ms", r->restart50, " %10.3f",
	    "10,000 <= 1.2x 100");
	ROW("  actord CPU per restart us", r->restart_cpu, " %10.1f", "");
	ROW("send by path p50 us", r->path50, " %10.2f",
	    "<= 1 us; 10,000 <= 1.2x 100");
	ROW("send by ref p50 us", r->ref50, " %10.2f", "10,000 <= 1.2x 100");
	ROW("lookup by path p50 us", r->lookup50, " %10.2f", "");
	ROW("  FUTEX_WAKE alone p50 us", r->wake50, " %10.2f", "the floor");
	ROW("  FUTEX_WAKE, N asleep p50 us", r->wake_n50, " %10.2f",
	    "the floor at N");
	ROW("sparse CPU s, actors", r->sparse_cpu, " %10.3f", "");
	ROW("sparse CPU s, pipes", r->pipe_cpu, " %10.3f", "");
	ROW("sparse CPU s, futex floor", r->futex_cpu, " %10.3f", "");
	ROW("  actors vs pipes", r->sparse_cpu > 0 && r->pipe_cpu > 0 ?
	    r->sparse_cpu / r->pipe_cpu : -1, " %9.2fx", "<= 1.0x");
	ROW("  actors vs futex floor", r->sparse_cpu > 0 && r->futex_cpu > 0 ?
	    r->sparse_cpu / r->futex_cpu : -1, " %9.2fx", "");
	ROW("  futex floor vs pipes", r->futex_cpu > 0 && r->pipe_cpu > 0 ?
	    r->futex_cpu / r->pipe_cpu : -1, " %9.2fx", "");
	ROW("sparse CPU s, floor with cells", r->futex_cell_cpu, " %10.3f",
	    "");
	ROW("  actors vs cell floor", r->sparse_cpu > 0 &&
	    r->futex_cell_cpu > 0 ? r->sparse_cpu / r->futex_cell_cpu : -1,
	    " %9.2fx", "");
	ROW("  cell floor vs pipes", r->futex_cell_cpu > 0 && r->pipe_cpu > 0 ?
	    r->futex_cell_cpu / r->pipe_cpu : -1, " %9.2fx", "the limit");
	ROW("sparse CPU s, actors, lap 2", r->lap2_cpu, " %10.3f", "");
	ROW("  vs pipes", r->lap2_cpu > 0 && r->pipe_cpu > 0 ?
	    r->lap2_cpu / r->pipe_cpu : -1, " %9.2fx", "");
	ROW("  vs cell floor", r->lap2_cpu > 0 && r->futex_cell_cpu > 0 ?
	    r->lap2_cpu / r->futex_cell_cpu : -1, " %9.2fx", "");
	ROW("sparse CPU s, floor, no rseq", r->futex_norseq_cpu, " %10.3f",
	    "");
	ROW("  vs the floor", r->futex_norseq_cpu > 0 && r->futex_cpu > 0 ?
	    r->futex_norseq_cpu / r->futex_cpu : -1, " %9.2fx",
	    "rseq's part");
	for (j = 0; j < SP_DESIGNS * 4; j++) {
		static const char *const what[4] = { "recv us", "prod us",
		    "recv flt", "prod flt" };
		static const char *const who[SP_DESIGNS] = { "actors", "pipes",
		    "floor", "floor, no rseq", "floor, cells",
		    "actors, lap 2" };
		char label[48];

		snprintf(label, sizeof(label), "  per msg %s: %s",
		    what[j / SP_DESIGNS], who[j % SP_DESIGNS]);
		ROW(label, r->per_msg[j % SP_DESIGNS][j / SP_DESIGNS],
		    " %10.3f", "");
	}
	for (j = 0; j < 4; j++) {
		char label[40];

		snprintf(label, sizeof(label), "fan-in P=%d Mmsg/s",
		    fanin_p[j]);
		ROW(label, r->fanin[j] < 0 ? -1 : r->fanin[j] / 1e6,
		    " %10.3f", "");
	}
	ROW("  P=1000 vs P=10", r->fanin[3] > 0 && r->fanin[1] > 0 ?
	    r->fanin[3] / r->fanin[1] : -1, " %9.2fx", ">= 0.8x");
	ROW("  10x the messages: P=10", r->fanin_long[0] < 0 ? -1 :
	    r->fanin_long[0] / 1e6, " %10.3f", "");
	ROW("    P=1000 Mmsg/s", r->fanin_long[1] < 0 ? -1 :
	    r->fanin_long[1] / 1e6, " %10.3f", "");
	ROW("    P=1000 vs P=10", r->fanin_long[1] > 0 &&
	    r->fanin_long[0] > 0 ? r->fanin_long[1] / r->fanin_long[0] : -1,
	    " %9.2fx", "");
	for (j = 0; j < 2; j++) {
		char label[40];

		snprintf(label, sizeof(label), "  bare ring, wake %s: P=10",
		    j == 1 ? "one" : "all");
		ROW(label, r->fanin_floor[j][0] < 0 ? -1 :
		    r->fanin_floor[j][0] / 1e6, " %10.3f", "the floor");
		ROW("    P=1000 Mmsg/s", r->fanin_floor[j][1] < 0 ? -1 :
		    r->fanin_floor[j][1] / 1e6, " %10.3f", "");
		ROW("    P=1000 vs P=10", r->fanin_floor[j][1] > 0 &&
		    r->fanin_floor[j][0] > 0 ? r->fanin_floor[j][1] /
		    r->fanin_floor[j][0] : -1, " %9.2fx", "");
		ROW("    ours P=1000 vs it", r->fanin[3] > 0 &&
		    r->fanin_floor[j][1] > 0 ? r->fanin[3] /
		    r->fanin_floor[j][1] : -1, " %9.2fx", "");
	}
	ROW("one_for_all restart ms", r->ofa, " %10.1f", "");
	ROW("  floor N stops + N starts ms", r->ofa_floor, " %10.1f", "");
	ROW("  vs floor", r->ofa > 0 && r->ofa_floor > 0 ?
	    r->ofa / r->ofa_floor : -1, " %9.2fx", "<= 1.2x");
	ROW("  floor each awaited, to main ms", ofa_mode_floor(r, false),
	    " %10.1f", "");
	ROW("  vs that floor", r->ofa > 0 && ofa_mode_floor(r, false) > 0 ?
	    r->ofa / ofa_mode_floor(r, false) : -1, " %9.2fx", "the limit");
	ROW("  start = parallel ms", r->ofa_par, " %10.1f", "");
	ROW("  vs floor", r->ofa_par > 0 && r->ofa_floor > 0 ?
	    r->ofa_par / r->ofa_floor : -1, " %9.2fx", "<= 1.2x");
	ROW("  floor all at once, to main ms", ofa_mode_floor(r, true),
	    " %10.1f", "");
	ROW("  vs that floor", r->ofa_par > 0 && ofa_mode_floor(r, true) > 0 ?
	    r->ofa_par / ofa_mode_floor(r, true) : -1, " %9.2fx",
	    "the limit");
	/* Where an ordered restart's time goes: CPU per child, us. */
	ROW("  CPU us/child: actord, stops", r->ofa_cpu[0][0], " %10.1f", "");
	ROW("    actord, starts", r->ofa_cpu[0][1], " %10.1f", "");
	ROW("    floor's starter, both", r->seq_parent_cpu, " %10.1f", "");
	ROW("    an actor, its life", r->ofa_cpu[0][2], " %10.1f", "");
	ROW("    floor's process, its life", r->seq_child_cpu, " %10.1f", "");
	ROW("    parallel: actord, stops", r->ofa_cpu[1][0], " %10.1f", "");
	ROW("      actord, starts", r->ofa_cpu[1][1], " %10.1f", "");
	ROW("      an actor, its life", r->ofa_cpu[1][2], " %10.1f", "");
	ROW("  page faults/child: an actor", r->ofa_flt[0], " %10.1f", "");
	ROW("    floor's process", r->seq_child_flt, " %10.1f", "");
#undef ROW
	for (i = 0; i < nr; i++)
		if (rows[i].why[0] != '\0')
			printf("  N=%d failed: %s\n", rows[i].n, rows[i].why);
}

/* Is phase named in the list (NULL: every phase is)? */
static bool
phase(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	if (list == NULL)
		return true;
	for (p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == ','))
			return true;
	return false;
}

int
main(void)
{
	struct bench b;
	struct row rows[MAX_NS];
	const char *build = getenv("BUILD"), *out = getenv("BENCH_JSON");
	const char *ns = getenv("BENCH_SCALE_N"), *ss;
	const char *phases = getenv("BENCH_SCALE_PHASES");
	char list[256], prog[1024], *tok, *save;
	struct actord *ad;
	struct rlimit rl;
	int nr = 0, j;

	memset(&b, 0, sizeof(b));
	b.first = 1;
	ss = getenv("BENCH_SCALE_SPARSE_S");
	b.sparse_s = ss != NULL && atoi(ss) > 0 ? atoi(ss) : 10;
	ss = getenv("BENCH_SCALE_LAP2_MAX");
	b.lap2_max = ss != NULL ? atoi(ss) : LAP2_MAX;
	ss = getenv("BENCH_SCALE_RSEQ");
	b.rseq = ss == NULL || strcmp(ss, "0") != 0;
	log_init("bench", -1);
	snprintf(b.build, sizeof(b.build), "%s", build != NULL ? build :
	    "build");
	snprintf(prog, sizeof(prog), "%s/tests/progs/actor_echo", b.build);
	if (realpath(prog, b.echo) == NULL) {
		fprintf(stderr, "bench_scale: need %s\n", prog);
		return 1;
	}
	snprintf(prog, sizeof(prog), "%s/tests/progs/tworker", b.build);
	if (realpath(prog, b.tworker) == NULL) {
		fprintf(stderr, "bench_scale: need %s\n", prog);
		return 1;
	}
	snprintf(prog, sizeof(prog), "%s/tests/progs/launch_floor", b.build);
	if (realpath(prog, b.launch) == NULL) {
		fprintf(stderr, "bench_scale: need %s\n", prog);
		return 1;
	}
	snprintf(prog, sizeof(prog), "%s/actord", b.build);
	if (realpath(prog, b.actord) == NULL) {
		fprintf(stderr, "bench_scale: need %s\n", prog);
		return 1;
	}
	(void)log_open_file("/dev/null");	/* the core's own log */
	b.json = fopen(out != NULL ? out : "/dev/null", "w");
	if (b.json == NULL) {
		fprintf(stderr, "bench_scale: %s: %s\n", out, strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	/* What actord leaves behind comes back here, to be reaped by pid. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	snprintf(list, sizeof(list), "%s", ns != NULL ? ns :
	    "1 100 1000 10000");
	fprintf(b.json, "{");
	for (tok = strtok_r(list, " ,", &save); tok != NULL && nr < MAX_NS;
	    tok = strtok_r(NULL, " ,", &save)) {
		struct row *r = &rows[nr++];

		memset(r, 0, sizeof(*r));
		r->n = atoi(tok);
		if (r->n <= 0) {
			nr--;
			continue;
		}
		r->floor_start = r->floor_stop = r->start = -1;
		r->floor_tree = r->seq_start = r->seq_stop = -1;
		r->seq_child_cpu = r->seq_parent_cpu = r->seq_child_flt = -1;
		r->ofa_flt[0] = r->ofa_flt[1] = -1;
		for (j = 0; j < 6; j++)
			r->ofa_cpu[j / 3][j % 3] = -1;
		r->par_start = r->par_stop = -1;
		r->mem_total_kb = r->mem_per_actor_kb = -1;
		r->restart50 = r->restart99 = r->path50 = r->ref50 = -1;
		r->restart_cpu = -1;
		r->lookup50 = r->wake50 = r->sparse_cpu = r->pipe_cpu = -1;
		r->futex_cpu = r->futex_norseq_cpu = r->wake_n50 = -1;
		r->futex_cell_cpu = r->lap2_cpu = -1;
		for (j = 0; j < SP_DESIGNS * 4; j++)
			r->per_msg[j / 4][j % 4] = -1;
		r->ofa = r->ofa_floor = r->ofa_par = -1;
		for (j = 0; j < 4; j++)
			r->fanin[j] = -1;
		r->fanin_floor[0][0] = r->fanin_floor[0][1] = -1;
		r->fanin_long[0] = r->fanin_long[1] = -1;
		r->fanin_floor[1][0] = r->fanin_floor[1][1] = -1;
		printf("== N = %d\n", r->n);
		if (phase(phases, "floor")) {
			bench_floor(&b, r);
			bench_tree_floor(&b, r);
			bench_ready_floor(&b, r);
		}
		if (phase(phases, "start"))
			bench_daemon(&b, r);
		if ((phase(phases, "core") || phase(phases, "restart") ||
		    phase(phases, "send") || phase(phases, "fanin") ||
		    phase(phases, "sparse")) &&
		    (ad = core_tree(&b, r->n, false, r)) != NULL) {
			uint64_t t0 = now_ns();

			actord_boot(ad);
			if (core_wait_running(ad, r->n, NO_PROGRESS_MS, r)) {
				emit(&b, r->n, "core_start_ms",
				    (double)(now_ns() - t0) / 1e6);
				if (phase(phases, "core") ||
				    phase(phases, "restart"))
					bench_restart(&b, ad, r);
				if (phase(phases, "core") ||
				    phase(phases, "send"))
					bench_send(&b, ad, r);
				if (phase(phases, "core") ||
				    phase(phases, "fanin"))
					bench_fanin(&b, ad, r);
				if (phase(phases, "core") ||
				    phase(phases, "sparse"))
					bench_sparse(&b, ad, r);
			}
			core_stop(ad);
		}
		if (r->sparse_cpu > 0) {
			bench_pipes(&b, r);
			bench_futex(&b, r);
		}
		if (phase(phases, "ofa"))
			bench_ofa(&b, r, false);
		if (phase(phases, "ofa"))
			bench_ofa(&b, r, true);
		if (r->why[0] != '\0')
			emit_str(&b, r->n, "failure", r->why);
		kill_children_of(getpid());
	}
	fprintf(b.json, "\n}\n");
	fclose(b.json);
	print_table(rows, nr);
	return 0;
}
