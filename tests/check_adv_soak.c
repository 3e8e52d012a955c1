/*
 * check_adv_soak.c: every adversary at once, for a long time.  A real
 * actord ($ACTORD_BUILD/actord) runs a tree of every strategy (one_for_one,
 * one_for_all, rest_for_one, nested supervisors that escalate, a group of
 * instances) of libactor actors (tests/progs/actor_echo), a liar
 * (tests/progs/liar), workers that ignore SIGTERM or fork children and
 * daemons (tests/progs/soak_worker), one that keeps crashing
 * (tests/progs/tworker), and, in two of its three configurations, a
 * scribbler that writes random values into every word of the arena it can
 * (tests/progs/scribbler hostile).  For SOAK_SECONDS seconds (default 20)
 * forked agents, each with its own seeded schedule, go at it together:
 *
 *   signaller	SIGKILL, SIGTERM, SIGSTOP then SIGCONT, SIGKILL of a
 *		worker's whole process group
 *   operator	stop, start, restart, kill, add, remove, reload to one of
 *		the three configurations (written whole, then renamed), and
 *		the real actorctl's status now and then
 *   messenger	asks (answered, never answered, crashing the actor),
 *		tells, floods of 1,000 tells, an actor asking another, the
 *		liar asked to lie into a random actor's mailbox
 *   hangup	clients that hang up mid-request: half a frame, an ask or
 *		a follow of the dead letters dropped before its answer, a
 *		status never read
 *
 * while this process watches actord every 250 ms.  What must hold:
 *
 *   - actord never exits, and answers status within STATUS_BOUND ms;
 *   - every request an agent makes gets an answer (any status);
 *   - no zombie child of actord outlives ZOMBIE_BOUND ms and ZOMBIE_CPU
 *     seconds of actord's CPU (a dead worker or an adopted daemon is
 *     reaped), and none is left 2 s after the chaos;
 *   - actord's private memory and descriptors do not grow: the highest
 *     of the last quarter of the samples is within a margin of the
 *     highest of the second quarter (the memory not under ASan, whose
 *     quarantine holds what is freed), and at the end its descriptors
 *     are back within a few of the count after boot;
 *
 * then the chaos stops, the first configuration (no scribbler) is
 * reloaded, every node stopped by hand started, and every worker killed
 * once (a restart repairs what the scribbler and the liar did to its
 * mailbox): every node of the first configuration must run again, each
 * worker's restart counted, every actor answer its own ask, and every
 * dead letter since the scribbler left name its recipient and one of the
 * known reasons (what the scribbler wrote into the ring is read back as
 * it wrote it).  Last, SIGTERM: actord exits 0 (its ordered shutdown
 * ends within its bound), and no process of the tree it ever ran (each
 * known by pid and start time: workers seen in status, and every process
 * soak_worker made, from $TW_DIR/soak.pids) is alive.
 *
 * SOAK_SEED replays a schedule's random choices (the timing still
 * differs); the seed is printed first, and again with every failure.
 * SOAK_AGENTS=signaller,operator (say) runs only the agents named.
 * Every wait is bounded; every process is stopped by pid.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "supervisor/ctlproto.h"
#include "tests/lib/ctltest.h"
#include "tests/lib/tagent.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT		30000	/* ms: a bound for anything, never expected */
#define STATUS_BOUND	20000	/* ms: status answered within this (a
				   shared machine held it 7 s) */
#define ZOMBIE_BOUND	5000	/* ms: a zombie child of actord, at most, */
#define ZOMBIE_CPU	0.5	/* ... while actord had this much CPU (s) */
#define SAMPLE_MS	250	/* how often the test looks at actord */
#define MAX_SAMPLES	8192
#define CONF_LEN	12288
#define NAGENTS		4
#define FLOOD		1000

enum agent { SIGNALLER, OPERATOR, MESSENGER, HANGUP };
static const char *const agent_name[NAGENTS] = {
	"signaller", "operator", "messenger", "hangup"
};


/* What the agents report, in a page they share with the test. */
struct soak_shared {
	atomic_int		 stop;
	atomic_uint		 actions[NAGENTS];
	atomic_uint		 unanswered[NAGENTS];
	atomic_uint		 asks_answered;
	struct tagent_seen	 seen;
};

/* A sample of actord. */
struct sample {
	long	 rss_kb;
	int	 fds;
};

/* A zombie child of actord, first seen when. */
struct zombie {
	pid_t	 pid;
	int64_t	 since;
	double	 cpu;			/* actord's CPU seconds then */
};

/* The test's one piece of state, shared with its forked agents. */
static struct {
	struct ts_daemon	 d;
	char			 sock[128];
	char			 conf[3][CONF_LEN];
	struct soak_shared	*sh;
	uint64_t		 seed;
	pid_t			 agents[NAGENTS];
	struct sample		 samples[MAX_SAMPLES];
	unsigned		 nsamples;
	struct zombie		 zombies[256];
	unsigned		 nzombies;
	int64_t			 status_max_ms;
} soak;

/* The actors of the first configuration: each answers tag 1 asks. */
static const char *const actors[] = {
	"/solo", "/pair/p", "/pair/c", "/chain/a", "/chain/c", "/pool/0",
	"/pool/1", "/pool/2", "/deep/inner/w",
};
#define NACTORS	(sizeof(actors) / sizeof(actors[0]))

/* Every node of the first configuration, each running once it converged. */
static const char *const nodes[] = {
	"/solo", "/pair", "/pair/p", "/pair/c", "/chain", "/chain/a",
	"/chain/b", "/chain/c", "/pool", "/pool/0", "/pool/1", "/pool/2",
	"/deep", "/deep/inner", "/deep/inner/w", "/deep/inner/f", "/liar",
};
#define NNODES	(sizeof(nodes) / sizeof(nodes[0]))

static uint64_t	dead_letters_head(void);
static double	cpu_seconds(pid_t);

#define SEEDFMT	"(seed %llu, replay with SOAK_SEED=%llu)"
#define SEEDARG	(unsigned long long)soak.seed, (unsigned long long)soak.seed

/* --- the three configurations --------------------------------------------- */

/*
 * variant 0 is the tree the test converges back to; 1 adds the scribbler,
 * reorders /pair, makes /chain one_for_all and grows /pool; 2 adds the
 * scribbler and /extra, makes /deep/inner one_for_one and shrinks /pool.
 * The sub-supervisors give up easily (3 restarts in 5 s) and escalate;
 * the root never does, so actord itself stays up by its own rules.
 */
static void
conf_text(int variant, char *buf, size_t len)
{
	char echo[512], stub[512], fork[512], liar[512], crash[256];
	char hostile[768];
	int n;

	snprintf(echo, sizeof(echo), "exec = [\"%s\"]; ready = \"actor\"; "
	    "mailbox = { capacity = 16; };", ts_progs("actor_echo"));
	snprintf(stub, sizeof(stub), "exec = [\"%s\", \"stubborn\"]; "
	    "shutdown = 100; env = { TW_DIR = \"%s\"; };",
	    ts_progs("soak_worker"), soak.d.dir);
	snprintf(fork, sizeof(fork), "exec = [\"%s\", \"forker\"]; "
	    "env = { TW_DIR = \"%s\"; };", ts_progs("soak_worker"),
	    soak.d.dir);
	snprintf(liar, sizeof(liar), "exec = [\"%s\"]; ready = \"actor\"; "
	    "mailbox = { capacity = 16; };", ts_progs("liar"));
	snprintf(crash, sizeof(crash), "exec = [\"%s\", \"crash\", \"150\"];",
	    ts_progs("tworker"));
	snprintf(hostile, sizeof(hostile), "  { name = \"hostile\"; exec = "
	    "[\"%s\", \"hostile\", \"%llu\"]; ready = \"actor\"; "
	    "mailbox = { capacity = 4; }; },\n", ts_progs("scribbler"),
	    (unsigned long long)soak.seed + (unsigned long long)variant);
	n = snprintf(buf, len,
	    "runtime_dir = \"%s/run\";\n"
	    "shutdown_timeout = 10000;\n"
	    "spare_mailboxes = 16;\n"
	    "supervisor = {\n"
	    " strategy = \"one_for_one\"; intensity = 10000; period = 1;\n"
	    " backoff_min = 0; backoff_max = 50;\n"
	    " children = (\n"
	    "  { name = \"solo\"; %s },\n"
	    "  { name = \"pair\"; supervisor = { strategy = \"one_for_all\";\n"
	    "    intensity = 3; period = 5; backoff_min = 0; backoff_max = 20;\n"
	    "    children = ( { name = \"%s\"; %s }, { name = \"%s\"; %s } );"
	    " }; },\n"
	    "  { name = \"chain\"; supervisor = { strategy = \"%s\";\n"
	    "    intensity = 3; period = 5; backoff_min = 0; backoff_max = 20;\n"
	    "    children = ( { name = \"a\"; %s }, { name = \"b\"; %s },\n"
	    "      { name = \"c\"; %s } ); }; },\n"
	    "  { name = \"pool\"; instances = %d; %s },\n"
	    "  { name = \"deep\"; supervisor = { intensity = 5; period = 5;\n"
	    "    children = (\n"
	    "    { name = \"inner\"; supervisor = { strategy = \"%s\";\n"
	    "      intensity = 3; period = 5; backoff_min = 0; backoff_max = 20;\n"
	    "      children = (\n"
	    "      { name = \"w\"; %s }, { name = \"f\"; %s } ); }; } ); }; },\n"
	    "  { name = \"liar\"; %s },\n"
	    "%s%s"
	    "  { name = \"flaky\"; %s }\n"
	    " );\n"
	    "};\n",
	    soak.d.dir, echo, variant == 1 ? "c" : "p", echo,
	    variant == 1 ? "p" : "c", echo,
	    variant == 1 ? "one_for_all" : "rest_for_one", echo, stub, echo,
	    variant == 1 ? 5 : variant == 2 ? 2 : 3, echo,
	    variant == 2 ? "one_for_one" : "one_for_all", echo, fork, liar,
	    variant == 0 ? "" : hostile,
	    variant == 2 ? "  { name = \"extra\"; exec = [\"" : "",
	    crash);
	ck_assert(n > 0 && (size_t)n < len);
	if (variant == 2) {
		/* /extra: an actor, its exec after the quote above. */
		char *p = strstr(buf, "{ name = \"extra\"; exec = [\"");
		char tail[CONF_LEN];

		ck_assert_ptr_nonnull(p);
		p += strlen("{ name = \"extra\"; exec = [\"");
		snprintf(tail, sizeof(tail), "%s", p);
		n = snprintf(p, len - (size_t)(p - buf), "%s\"]; ready = "
		    "\"actor\"; },\n%s", ts_progs("actor_echo"), tail);
		ck_assert(n > 0 && (size_t)n < len - (size_t)(p - buf));
	}
}

/* Written whole, then renamed: a reload never reads half a file. */
static void
conf_install(int variant)
{
	tagent_conf_install(&soak.d, soak.conf[variant]);
}

/* The end of actord's log, where a failure's story is. */
static const char *
log_tail(void)
{
	return tagent_log_tail(&soak.d);
}

/* --- requests ------------------------------------------------------------- */

/* One request; -1 (counted against the agent) when actord gave no answer. */
static int
request(enum agent who, struct ctl_request *q, struct ctl_response *r)
{
	memset(r, 0, sizeof(*r));
	if (ctltest_request(soak.sock, q, r) != 0) {
		atomic_fetch_add(&soak.sh->unanswered[who], 1);
		return -1;
	}
	return 0;
}

static void
request_path(struct ctl_request *q, uint16_t cmd, const char *path)
{
	memset(q, 0, sizeof(*q));
	q->cmd = cmd;
	if (path != NULL) {
		snprintf(q->path, sizeof(q->path), "%s", path);
		q->present = 1u << CTL_F_PATH;
	}
}

static void
simple(enum agent who, uint16_t cmd, const char *path)
{
	struct ctl_request q;
	struct ctl_response r;

	request_path(&q, cmd, path);
	if (request(who, &q, &r) == 0)
		ctl_response_free(&r);
}

/* The tree as status shows it (the caller frees it); NULL: no answer. */
static struct ctl_response *
status(enum agent who, struct ctl_response *r)
{
	struct ctl_request q;

	request_path(&q, CTL_CMD_STATUS, NULL);
	return request(who, &q, r) == 0 ? r : NULL;
}



/* Remember a worker's incarnation, for the check after the shutdown. */
static void
remember(pid_t pid)
{
	tagent_remember(&soak.sh->seen, pid);
}




/* --- the agents ----------------------------------------------------------- */

static void
signal_one(unsigned *rnd)
{
	struct ctl_response r, *t = status(SIGNALLER, &r);
	const struct ctl_node *n = tagent_pick(t, true, rnd);
	pid_t pid;

	if (n != NULL) {
		pid = n->pid;
		remember(pid);
		switch (rand_r(rnd) % 8) {
		case 0: case 1: case 2:
			if (getenv("SOAK_VERBOSE") != NULL)
				fprintf(stderr, "soak: %lld SIGKILL %s\n",
				    (long long)tcheck_mono_ms(), n->path);
			kill(pid, SIGKILL);
			break;
		case 3:
			kill(pid, SIGTERM);
			break;
		case 4:
			kill(-pid, SIGKILL);	/* the worker's group */
			break;
		default:
			/* Stopped for a while (a hang), never for good. */
			kill(pid, SIGSTOP);
			tagent_nap(rnd, 300);
			kill(pid, SIGCONT);
			break;
		}
	}
	if (t != NULL)
		ctl_response_free(t);
}

/* The real actorctl's status, as an operator types it. */
static void
actorctl_status(void)
{
	struct ctltest_server s;
	struct ctltest_out o;

	memset(&s, 0, sizeof(s));
	snprintf(s.sock, sizeof(s.sock), "%s", soak.sock);
	ctltest_actorctl(&s, NULL, &o, "status", (char *)NULL);
	if (o.status != 0)
		atomic_fetch_add(&soak.sh->unanswered[OPERATOR], 1);
	ctltest_out_free(&o);
}

static void
operate_one(unsigned *rnd)
{
	struct ctl_response r, *t = status(OPERATOR, &r);
	const struct ctl_node *n = tagent_pick(t, false, rnd);
	struct ctl_request q;
	char path[CTL_PATH_MAX];
	static const uint16_t cmds[] = {
		CTL_CMD_STOP, CTL_CMD_START, CTL_CMD_START, CTL_CMD_RESTART,
		CTL_CMD_KILL, CTL_CMD_ADD, CTL_CMD_REMOVE, CTL_CMD_RELOAD,
		CTL_CMD_STATUS,
	};
	uint16_t cmd = cmds[(size_t)rand_r(rnd) % (sizeof(cmds) /
	    sizeof(cmds[0]))];

	snprintf(path, sizeof(path), "%s", n != NULL ? n->path : "/solo");
	if (t != NULL)
		ctl_response_free(t);
	request_path(&q, cmd, path);
	switch (cmd) {
	case CTL_CMD_STATUS:
		actorctl_status();
		return;
	case CTL_CMD_RELOAD:
		conf_install(rand_r(rnd) % 3);
		q.present = 0;
		break;
	case CTL_CMD_ADD:
		snprintf(q.path, sizeof(q.path), "/pool");
		break;
	case CTL_CMD_KILL:
		q.signo = rand_r(rnd) % 2 ? SIGKILL : SIGTERM;
		q.tree = true;
		q.present |= 1u << CTL_F_SIGNAL | 1u << CTL_F_TREE;
		break;
	default:
		break;
	}
	if (getenv("SOAK_VERBOSE") != NULL)
		fprintf(stderr, "soak: %lld operator %u %s\n",
		    (long long)tcheck_mono_ms(), cmd, q.path);
	if (request(OPERATOR, &q, &r) == 0)
		ctl_response_free(&r);
}

/*
 * An ask of path, tag tag, payload data; true if it was answered OK,
 * else why it was not in why (if not NULL).
 */
static bool
ask_why(enum agent who, const char *path, uint32_t tag, const char *data,
    int timeout_ms, char *why, size_t whylen)
{
	struct ctl_request q;
	struct ctl_response r;
	bool ok;

	request_path(&q, CTL_CMD_ASK, path);
	q.tag = tag;
	q.data = (const uint8_t *)data;
	q.datalen = (uint32_t)strlen(data);
	q.timeout_ms = (uint32_t)timeout_ms;
	q.present |= 1u << CTL_F_TAG | 1u << CTL_F_DATA | 1u << CTL_F_TIMEOUT;
	if (request(who, &q, &r) != 0) {
		if (why != NULL)
			snprintf(why, whylen, "no answer");
		return false;
	}
	ok = r.status == CTL_OK && r.has_data && r.datalen == q.datalen &&
	    memcmp(r.data, data, q.datalen) == 0;
	if (ok)
		atomic_fetch_add(&soak.sh->asks_answered, 1);
	else if (why != NULL)
		snprintf(why, whylen, "status %u: %s", r.status, r.error);
	ctl_response_free(&r);
	return ok;
}

static bool
ask(enum agent who, const char *path, uint32_t tag, const char *data,
    int timeout_ms)
{
	return ask_why(who, path, tag, data, timeout_ms, NULL, 0);
}

static void
message_one(unsigned *rnd, unsigned seq)
{
	const char *path = actors[(size_t)rand_r(rnd) % NACTORS];
	const char *other = actors[(size_t)rand_r(rnd) % NACTORS];
	struct ctl_request q;
	struct ctl_response r;
	char data[160];

	switch (rand_r(rnd) % 14) {
	case 0: case 1: case 2: case 3: case 4:
		snprintf(data, sizeof(data), "%s#%u#%d", path, seq,
		    (int)getpid());
		(void)ask(MESSENGER, path, 1, data, 300);
		return;
	case 5:
		snprintf(data, sizeof(data), "%s %d", other, FLOOD);
		(void)ask(MESSENGER, path, 41, data, 1000);
		return;
	case 6:
		snprintf(data, sizeof(data), "%s 5", other);
		(void)ask(MESSENGER, path, 8, data, 3000);	/* actor asks */
		return;
	case 7:
		snprintf(data, sizeof(data), "%s %u 20 %d", other,
		    (unsigned)rand_r(rnd), rand_r(rnd) % 3);
		(void)ask(MESSENGER, "/liar", 1, data, 500);
		return;
	case 8:
		request_path(&q, CTL_CMD_ASK, path);	/* never answered */
		q.tag = 2;
		break;
	case 9:
		request_path(&q, CTL_CMD_SEND, path);	/* crashes it */
		q.tag = 3;
		break;
	default:
		request_path(&q, CTL_CMD_SEND, path);	/* ignored */
		q.tag = 99;
		break;
	}
	q.timeout_ms = 50;
	q.present |= 1u << CTL_F_TAG | 1u << CTL_F_TIMEOUT;
	if (request(MESSENGER, &q, &r) == 0)
		ctl_response_free(&r);
}

/* A request's frame in b (ctl_buf), or false. */
static bool
frame(const struct ctl_request *q, struct ctl_buf *b)
{
	ctl_buf_init(b, 1 << 16);
	return ctl_request_encode(b, q) == 0 && b->err == 0;
}

/*
 * A client that hangs up: it writes the first cut bytes of a request
 * (all of it, if cut is past its end), maybe waits a little for actord
 * to start on it, and closes.
 */
static void
hang_up(unsigned *rnd)
{
	struct ctl_request q;
	struct ctl_buf b;
	const char *path = actors[(size_t)rand_r(rnd) % NACTORS];
	size_t cut;
	int fd;

	switch (rand_r(rnd) % 4) {
	case 0:
		request_path(&q, CTL_CMD_STATUS, NULL);
		break;
	case 1:
		request_path(&q, CTL_CMD_ASK, path);
		q.tag = (uint32_t)(rand_r(rnd) % 2 ? 1 : 5);
		q.data = (const uint8_t *)"hangup";
		q.datalen = 6;
		q.timeout_ms = 2000;
		q.present |= 1u << CTL_F_TAG | 1u << CTL_F_DATA |
		    1u << CTL_F_TIMEOUT;
		break;
	case 2:
		request_path(&q, CTL_CMD_DEADLETTERS, NULL);
		q.wait = true;
		q.present = 1u << CTL_F_WAIT;
		break;
	default:
		request_path(&q, CTL_CMD_RESTART, path);
		break;
	}
	if (!frame(&q, &b))
		return;
	if ((fd = ctltest_connect(soak.sock)) == -1) {
		atomic_fetch_add(&soak.sh->unanswered[HANGUP], 1);
		ctl_buf_free(&b);
		return;
	}
	cut = (size_t)rand_r(rnd) % (b.len + b.len / 2 + 1);
	(void)!write(fd, b.data, cut < b.len ? cut : b.len);
	tagent_nap(rnd, 20);
	close(fd);
	ctl_buf_free(&b);
}

static void
agent_run(enum agent who)
{
	unsigned rnd = (unsigned)(soak.seed * 2654435761u) + who, seq = 0;

	while (!atomic_load(&soak.sh->stop)) {
		switch (who) {
		case SIGNALLER:
			signal_one(&rnd);
			tagent_nap(&rnd, 40);
			break;
		case OPERATOR:
			operate_one(&rnd);
			tagent_nap(&rnd, 60);
			break;
		case MESSENGER:
			message_one(&rnd, seq++);
			tagent_nap(&rnd, 5);
			break;
		case HANGUP:
			hang_up(&rnd);
			tagent_nap(&rnd, 10);
			break;
		}
		atomic_fetch_add(&soak.sh->actions[who], 1);
	}
}

/* A forked agent's life (tagent_fork). */
static void
agent_main(int who)
{
	agent_run((enum agent)who);
}

/* --- watching actord ------------------------------------------------------ */

/*
 * Its private resident memory (RssAnon): its heap and stacks.  Not the
 * whole RSS: that counts the arena's pages it touched (RssShmem), which
 * grow as the scribbler makes it look at more of them, up to the arena's
 * size, and are no leak.
 */
static long
rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "RssAnon: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int
fd_count(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/* What actord's log says of pid: a failure's story. */
static void
log_lines_of(long pid)
{
	char line[1024], what[32];
	FILE *f;

	fprintf(stderr, "actord is '%c', status at most %lld ms so far\n",
	    tcheck_proc_state(soak.d.pid), (long long)soak.status_max_ms);
	if ((f = fopen(soak.d.log, "re")) == NULL)
		return;
	snprintf(what, sizeof(what), "%ld", pid);
	fprintf(stderr, "actord's log of pid %ld:\n", pid);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, what) != NULL)
			fputs(line, stderr);
	fclose(f);
}

/*
 * Every zombie child of actord: one first seen now is noted, one that was
 * already a zombie ZOMBIE_BOUND ago, while actord had ZOMBIE_CPU seconds
 * of CPU since, fails the test.  A child actord has not reaped yet is a
 * zombie for a moment (it is looked at with WNOWAIT first, a merged
 * SIGCHLD waits for the sweep, up to a second); one for seconds of
 * actord's own time was forgotten.  Wall time alone would blame actord
 * for a machine too busy to run it (several seconds, on a shared one).
 * With all true, any zombie the last look saw too fails: the tree is
 * calm.
 */
static void
zombies_check(int64_t now, bool all)
{
	char path[64];
	struct zombie next[256], *z;
	unsigned nnext = 0, i;
	double cpu = cpu_seconds(soak.d.pid);
	long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
	    (int)soak.d.pid, (int)soak.d.pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (nnext < 256 && fscanf(f, "%ld", &v) == 1) {
		if (tcheck_proc_state((pid_t)v) != 'Z')
			continue;
		z = &next[nnext++];
		z->pid = (pid_t)v;
		z->since = now;
		z->cpu = cpu;
		for (i = 0; i < soak.nzombies; i++)
			if (soak.zombies[i].pid == (pid_t)v)
				*z = soak.zombies[i];
		if (all ? z->since == now : now - z->since < ZOMBIE_BOUND ||
		    cpu - z->cpu < ZOMBIE_CPU)
			continue;
		log_lines_of(v);
		ck_abort_msg("pid %ld, a child of actord, is a zombie for %lld "
		    "ms, %.2f s of actord's CPU " SEEDFMT, v,
		    (long long)(now - z->since), cpu - z->cpu, SEEDARG);
	}
	fclose(f);
	memcpy(soak.zombies, next, nnext * sizeof(next[0]));
	soak.nzombies = nnext;
}

/*
 * Once calm, no zombie for long: every child dead at one look is reaped
 * by the next, 2 s later (the sweep's bound is a second).
 */
static void
no_zombie_left(void)
{
	zombies_check(tcheck_mono_ms(), false);
	ts_sleep_ms(2000);
	zombies_check(tcheck_mono_ms(), true);
}

/* One look at actord: alive, status in time, zombies, memory, fds. */
static void
watch_once(void)
{
	struct ctl_response r, *t;
	int64_t t0, dt;
	size_t i;
	int st;

	if (waitpid(soak.d.pid, &st, WNOHANG) != 0) {
		fprintf(stderr, "actord's log ends:\n%s\n", log_tail());
		ck_abort_msg("actord exited, status %#x " SEEDFMT, st, SEEDARG);
	}
	t0 = tcheck_mono_ms();
	t = status(OPERATOR, &r);
	dt = tcheck_mono_ms() - t0;
	ck_assert_msg(t != NULL, "actord did not answer status " SEEDFMT,
	    SEEDARG);
	ck_assert_msg(dt < STATUS_BOUND, "status took %lld ms " SEEDFMT,
	    (long long)dt, SEEDARG);
	if (dt > soak.status_max_ms)
		soak.status_max_ms = dt;
	for (i = 0; i < t->nnodes; i++)
		if (tagent_is_worker(&t->nodes[i]) && t->nodes[i].pid > 0)
			remember(t->nodes[i].pid);
	ctl_response_free(t);
	zombies_check(tcheck_mono_ms(), false);
	if (soak.nsamples < MAX_SAMPLES) {
		soak.samples[soak.nsamples].rss_kb = rss_kb(soak.d.pid);
		soak.samples[soak.nsamples].fds = fd_count(soak.d.pid);
		soak.nsamples++;
	}
}

/* User and system time pid used so far (fields 14, 15), in seconds. */
static double
cpu_seconds(pid_t pid)
{
	char buf[1024];
	const char *p = tagent_stat_fields(pid, 14, buf, sizeof(buf));
	unsigned long long ut, st;

	if (p == NULL || sscanf(p, "%llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The highest RSS and fd count of samples [from, to). */
static struct sample
highest(unsigned from, unsigned to)
{
	struct sample m = { 0, 0 };
	unsigned i;

	for (i = from; i < to; i++) {
		if (soak.samples[i].rss_kb > m.rss_kb)
			m.rss_kb = soak.samples[i].rss_kb;
		if (soak.samples[i].fds > m.fds)
			m.fds = soak.samples[i].fds;
	}
	return m;
}

/*
 * No growth trend: the highest of the last quarter within a margin of the
 * highest of the second (the first is the warm-up: pools and the log's
 * buffers fill).  The margins take what a busy moment may hold (a burst
 * of clients, of owed messages) but not a leak that grows with time.
 */
static void
no_growth(void)
{
	unsigned n = soak.nsamples, q = n / 4;
	struct sample early, late;

	ck_assert_uint_ge(n, 8);
	early = highest(q, 2 * q);
	late = highest(3 * q, n);
	printf("soak: actord private memory %ld, %ld, %ld, %ld KiB, fds %d, "
	    "%d, %d, %d (highest of each quarter of %u samples), %.1f s of "
	    "CPU\n",
	    highest(0, q).rss_kb, early.rss_kb, highest(2 * q, 3 * q).rss_kb,
	    late.rss_kb, highest(0, q).fds, early.fds,
	    highest(2 * q, 3 * q).fds, late.fds, n, cpu_seconds(soak.d.pid));
#if defined(__SANITIZE_ADDRESS__)
	/* ASan holds freed memory in its quarantine: its size says nothing. */
	late.rss_kb = early.rss_kb;
#endif
	ck_assert_msg(late.rss_kb <= early.rss_kb + early.rss_kb / 4 + 512,
	    "actord's memory grew: %ld KiB, then %ld KiB " SEEDFMT,
	    early.rss_kb, late.rss_kb, SEEDARG);
	ck_assert_msg(late.fds <= early.fds + 64, "actord's descriptors "
	    "grew: %d, then %d " SEEDFMT, early.fds, late.fds, SEEDARG);
}

/* --- after the chaos ------------------------------------------------------ */


/*
 * One pass: every stopped or failed node of the first configuration is
 * started (parents come first in status), every stopped worker continued.
 * True once every node is running.
 */
static bool
converge_step(char *why, size_t len)
{
	struct ctl_response r, *t = status(OPERATOR, &r);
	const struct ctl_node *n;
	bool all = true;
	size_t i;

	if (t == NULL) {
		snprintf(why, len, "no status");
		return false;
	}
	for (i = 0; i < t->nnodes; i++)
		if (tagent_is_worker(&t->nodes[i]) && t->nodes[i].pid > 0) {
			remember(t->nodes[i].pid);
			kill(t->nodes[i].pid, SIGCONT);
		}
	for (i = 0; i < NNODES; i++) {
		n = tagent_find(t, nodes[i]);
		if (n != NULL && strcmp(n->state, "running") == 0 &&
		    (!tagent_is_worker(n) || n->pid > 0))
			continue;
		if (all)
			snprintf(why, len, "%s %s", nodes[i],
			    n == NULL ? "missing" : n->state);
		all = false;
		if (n != NULL && (strcmp(n->state, "stopped") == 0 ||
		    strcmp(n->state, "failed") == 0))
			simple(OPERATOR, CTL_CMD_START, nodes[i]);
	}
	ctl_response_free(t);
	return all;
}

static void
converge(void)
{
	char why[CTL_PATH_MAX + 64] = "";
	int waited;

	for (waited = 0; waited < WAIT; waited += 50) {
		if (converge_step(why, sizeof(why)))
			return;
		ts_sleep_ms(50);
	}
	fprintf(stderr, "actord's log ends:\n%s\n", log_tail());
	ck_abort_msg("the tree did not converge in %d ms " SEEDFMT ": %s",
	    WAIT, SEEDARG, why);
}

/*
 * Every worker of the tree killed once: an actor's restart repairs its
 * mailbox.  Every restart is counted: once the tree runs again, each
 * worker killed runs another process, and its count of restarts grew by
 * one at least (more if its supervisor restarted it with a sibling).
 */
static void
kill_every_worker(void)
{
	struct ctl_response r, *t = status(OPERATOR, &r);
	struct { uint32_t restarts; pid_t pid; } before[NNODES];
	const struct ctl_node *n;
	unsigned i;
	int waited;

	ck_assert_ptr_nonnull(t);
	for (i = 0; i < NNODES; i++) {
		n = tagent_find(t, nodes[i]);
		ck_assert_ptr_nonnull(n);
		before[i].restarts = n->restarts;
		before[i].pid = tagent_is_worker(n) ? n->pid : 0;
		if (before[i].pid > 0) {
			remember(n->pid);
			kill(n->pid, SIGKILL);
		}
	}
	ctl_response_free(t);
	for (waited = 0;; waited += 50) {
		converge();
		ck_assert_ptr_nonnull(t = status(OPERATOR, &r));
		for (i = 0; i < NNODES; i++)
			if (before[i].pid > 0 && ((n = tagent_find(t, nodes[i])) ==
			    NULL || n->pid == before[i].pid ||
			    n->restarts <= before[i].restarts))
				break;
		if (i == NNODES || waited >= WAIT)
			break;
		ctl_response_free(t);
		ts_sleep_ms(50);
	}
	if (i < NNODES)
		ck_abort_msg("%s: pid %d, %u restarts, then pid %d, %u restarts"
		    " " SEEDFMT, nodes[i], (int)before[i].pid,
		    before[i].restarts, n == NULL ? -1 : (int)n->pid,
		    n == NULL ? 0 : n->restarts, SEEDARG);
	ctl_response_free(t);
}

/*
 * Back to the first configuration (through the second, so that /pool is
 * rebuilt as the file has it: a group keeps the instances added and
 * removed by hand until its spec changes), every actor restarted once,
 * every node running.
 */
static void
back_to_first(uint64_t *dl_cursor)
{
	int64_t t0 = tcheck_mono_ms();

	/* What they hold of the spares first (check_chaos.c, converge). */
	ck_assert_msg(tagent_trim_group(soak.sock, "/pool", 3, WAIT),
	    "the instances added to /pool were not removed " SEEDFMT,
	    SEEDARG);
	conf_install(1);
	simple(OPERATOR, CTL_CMD_RELOAD, NULL);
	conf_install(0);
	simple(OPERATOR, CTL_CMD_RELOAD, NULL);
	converge();
	*dl_cursor = dead_letters_head();
	kill_every_worker();
	printf("soak: converged in %lld ms\n",
	    (long long)(tcheck_mono_ms() - t0));
}

/* Every actor answers its own ask, with bounded retries. */
static void
every_actor_answers(void)
{
	char data[64], why[CTL_ERROR_MAX + 32];
	unsigned i;
	int tries;

	for (i = 0; i < NACTORS; i++) {
		snprintf(data, sizeof(data), "after %s", actors[i]);
		for (tries = 0; tries < 100; tries++) {
			if (ask_why(OPERATOR, actors[i], 1, data, 1000, why,
			    sizeof(why)))
				break;
			/*
			 * Once restarted and running, an actor's mailbox is
			 * repaired: the first ask should be answered (the
			 * flake of check_e2e_hostile's hostile_scribbler was
			 * a "mailbox full" here).  Said, for the long runs.
			 */
			if (tries == 0)
				printf("soak: %s: the first ask after the "
				    "restart failed: %s\n", actors[i], why);
			ts_sleep_ms(50);
		}
		if (tries == 100)
			fprintf(stderr, "actord's log ends:\n%s\n", log_tail());
		ck_assert_msg(tries < 100, "%s never answered after the chaos "
		    SEEDFMT, actors[i], SEEDARG);
	}
}

/* Where the next dead letter will be written. */
static uint64_t
dead_letters_head(void)
{
	struct ctl_request q;
	struct ctl_response r;
	uint64_t head;

	request_path(&q, CTL_CMD_DEADLETTERS, NULL);
	q.cursor = UINT64_MAX;
	q.present = 1u << CTL_F_CURSOR;
	ck_assert_int_eq(request(OPERATOR, &q, &r), 0);
	ck_assert(r.has_cursor);
	head = r.cursor;
	ctl_response_free(&r);
	return head;
}

/*
 * Every dead letter since cursor names its recipient and a known reason.
 * Only since the scribbler is gone: it writes into the dead-letter ring
 * too, and what it wrote there is read back as it wrote it.
 */
static void
dead_letters_check(uint64_t cursor)
{
	struct ctl_request q;
	struct ctl_response r;
	unsigned counts[SHM_DL_NREASONS] = { 0 }, total = 0, i;
	size_t k;
	int reason;

	request_path(&q, CTL_CMD_DEADLETTERS, NULL);
	q.cursor = cursor;
	q.present = 1u << CTL_F_CURSOR;
	ck_assert_int_eq(request(OPERATOR, &q, &r), 0);
	ck_assert_uint_eq(r.status, CTL_OK);
	for (k = 0; k < r.ndls; k++) {
		for (reason = 0; reason < SHM_DL_NREASONS; reason++)
			if (strcmp(r.dls[k].reason,
			    shm_reason_name((enum shm_dl_reason)reason)) == 0)
				break;
		ck_assert_msg(reason < SHM_DL_NREASONS, "dead letter %llu: "
		    "reason \"%s\" " SEEDFMT,
		    (unsigned long long)r.dls[k].seq, r.dls[k].reason, SEEDARG);
		ck_assert_msg(r.dls[k].recipient[0] != '\0', "dead letter "
		    "%llu names no recipient " SEEDFMT,
		    (unsigned long long)r.dls[k].seq, SEEDARG);
		counts[reason]++;
		total++;
	}
	ctl_response_free(&r);
	printf("soak: %u dead letters since the scribbler left:", total);
	for (i = 0; i < SHM_DL_NREASONS; i++)
		if (counts[i] > 0)
			printf(" %s %u;", shm_reason_name((enum shm_dl_reason)i),
			    counts[i]);
	printf("\n");
}

/*
 * After the shutdown: no process of the tree seen is still alive, nor any
 * soak_worker made.
 */
static void
nothing_left(void)
{
	unsigned n, left, made = 0;
	struct tagent_proc p;
	char path[160];
	FILE *f;
	int pid;

	left = tagent_seen_left(&soak.sh->seen, &n);
	snprintf(path, sizeof(path), "%s/soak.pids", soak.d.dir);
	if ((f = fopen(path, "re")) != NULL) {
		while (fscanf(f, "%d %llu", &pid, &p.start) == 2) {
			p.pid = (pid_t)pid;
			left += tagent_outlived(&p);
			made++;
		}
		fclose(f);
	}
	printf("soak: %u worker incarnations seen, %u processes made by "
	    "soak_worker, %u left\n", n, made, left);
	ck_assert_msg(made > 0, "no soak_worker ever ran");
	ck_assert_msg(left == 0, "%u processes of the tree outlived actord "
	    SEEDFMT, left, SEEDARG);
}

/* --- the test ------------------------------------------------------------- */

static int
soak_seconds(void)
{
	const char *s = getenv("SOAK_SECONDS");

	return s != NULL && atoi(s) > 0 ? atoi(s) : 20;
}

static void
setup(void)
{
	const char *s = getenv("SOAK_SEED");
	int i;

	memset(&soak, 0, sizeof(soak));
	ts_daemon_init(&soak.d);
	soak.sh = mmap(NULL, sizeof(*soak.sh), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(soak.sh, MAP_FAILED);
	soak.seed = s != NULL ? strtoull(s, NULL, 10) :
	    (uint64_t)time(NULL) ^ (uint64_t)getpid();
	printf("soak: seed %llu, %d s\n", (unsigned long long)soak.seed,
	    soak_seconds());
	fflush(stdout);
	for (i = 0; i < 3; i++)
		conf_text(i, soak.conf[i], sizeof(soak.conf[i]));
}

static void
teardown(void)
{
	int i;

	for (i = 0; i < NAGENTS; i++)
		if (soak.agents[i] > 0) {
			kill(soak.agents[i], SIGKILL);
			waitpid(soak.agents[i], NULL, 0);
		}
	ts_daemon_cleanup(&soak.d);
	munmap(soak.sh, sizeof(*soak.sh));
}

/*
 * Is this agent on?  All are, unless SOAK_AGENTS names some (a comma-
 * separated list of their names): to find which one a failure needs.
 */
static bool
agent_on(enum agent who)
{
	const char *s = getenv("SOAK_AGENTS");

	return s == NULL || strstr(s, agent_name[who]) != NULL;
}

/* The chaos, watched, for ms; then every agent told to stop. */
static void
chaos(int ms)
{
	int64_t end = tcheck_mono_ms() + ms;
	int i;

	for (i = 0; i < NAGENTS; i++)
		if (agent_on((enum agent)i))
			soak.agents[i] = tagent_fork(agent_main, i);
	while (tcheck_mono_ms() < end) {
		watch_once();
		ts_sleep_ms(SAMPLE_MS);
	}
	atomic_store(&soak.sh->stop, 1);
	for (i = 0; i < NAGENTS; i++) {
		if (soak.agents[i] == 0)
			continue;
		ck_assert_msg(tagent_end(soak.agents[i], WAIT), "the %s did not end",
		    agent_name[i]);
		soak.agents[i] = 0;
		printf("soak: %s: %u actions, %u without an answer\n",
		    agent_name[i], atomic_load(&soak.sh->actions[i]),
		    atomic_load(&soak.sh->unanswered[i]));
	}
	printf("soak: %u asks answered, status in %lld ms at most\n",
	    atomic_load(&soak.sh->asks_answered),
	    (long long)soak.status_max_ms);
	fflush(stdout);
}

START_TEST(tree_stays_up_through_everything)
{
	int fds_booted, fds_end;
	uint64_t dl_cursor;

	conf_install(0);
	ts_daemon_up(&soak.d, WAIT, soak.sock, sizeof(soak.sock));
	converge();
	fds_booted = fd_count(soak.d.pid);
	chaos(soak_seconds() * 1000);
	/* It did something: a schedule that never acts proves nothing. */
	for (int i = 0; i < NAGENTS; i++)
		if (agent_on((enum agent)i))
			ck_assert_uint_gt(atomic_load(&soak.sh->actions[i]), 20);
	if (agent_on(MESSENGER))
		ck_assert_uint_gt(atomic_load(&soak.sh->asks_answered), 0);
	for (int i = 0; i < NAGENTS; i++)
		ck_assert_msg(atomic_load(&soak.sh->unanswered[i]) == 0,
		    "%u requests of the %s got no answer " SEEDFMT,
		    atomic_load(&soak.sh->unanswered[i]), agent_name[i],
		    SEEDARG);
	no_growth();
	no_zombie_left();
	back_to_first(&dl_cursor);
	every_actor_answers();
	dead_letters_check(dl_cursor);
	watch_once();
	ts_sleep_ms(500);	/* the hung-up clients' answers are dropped */
	fds_end = fd_count(soak.d.pid);
	printf("soak: actord's descriptors: %d after boot, %d at the end\n",
	    fds_booted, fds_end);
	ck_assert_msg(fds_end <= fds_booted + 8, "actord holds %d "
	    "descriptors, %d after boot " SEEDFMT, fds_end, fds_booted,
	    SEEDARG);
	(void)converge_step((char[8]){ 0 }, 8);	/* the last pids seen */
	kill(soak.d.pid, SIGTERM);
	ck_assert_msg(ts_daemon_wait(&soak.d, WAIT) == 0, "actord's shutdown "
	    "failed " SEEDFMT ": %s", SEEDARG, log_tail());
	nothing_left();
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("adv_soak");
	TCase *tc = tcase_create("soak");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, soak_seconds() + 4 * WAIT / 1000 + 60);
	tcase_add_test(tc, tree_stays_up_through_everything);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
