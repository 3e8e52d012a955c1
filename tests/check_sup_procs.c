/*
 * check_sup_procs.c: nothing of the tree outlives actord, and what actord
 * reaps is cleaned up in the right order (issue 11, items 4, 5, 8, 9).
 *
 * With the real actord binary: after kill -9 of actord, no worker and no
 * grandchild is left, for root workers, `user =` workers and cgroup
 * workers (whose escaped descendants the next actord kills at start); and
 * a worker without a mailbox gives its children no arena.  Inside the
 * test process: a `user =` worker still has its parent-death signal; a
 * dead child's producer slots are released before its pid is (waitpid and
 * waitid are wrapped here to look at the arena at that moment); a reap
 * whose claim stays ambiguous for long is retried until it succeeds.
 *
 * Every process a test sees is killed by pid at teardown; the cgroup
 * tests say "skipped" where no writable cgroup v2 mount exists.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "shm/shm_impl.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT	10000		/* ms: a bound, never an expectation */
#define MAXP	32
#define GHOST	5000000		/* above any pid_max: never a real pid */

static struct ts_daemon d;
static pid_t seen[MAXP];	/* every pid a test saw: killed at teardown */
static int nseen;
static char cg_base[600];	/* this test's cgroup base, or "" */

static bool	 cgroup2_mount(char *, size_t);
static void	 cgroup_cleanup(const char *);

static void
setup(void)
{
	ts_daemon_init(&d);
	nseen = 0;
	cg_base[0] = '\0';
}

static void
teardown(void)
{
	int i;

	for (i = 0; i < nseen; i++)
		if (ts_alive(seen[i]))
			(void)kill(seen[i], SIGKILL);
	ts_daemon_cleanup(&d);
	if (cg_base[0] != '\0')
		cgroup_cleanup(cg_base);
}

/* A writable cgroup v2 mount into buf: false if there is none. */
static bool
cgroup2_mount(char *buf, size_t len)
{
	char line[1024], mnt[512];
	bool found = false;
	FILE *f;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, " - cgroup2 ") != NULL &&
		    sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1) {
			snprintf(buf, len, "%s", mnt);
			found = true;
		}
	fclose(f);
	return found && access(buf, W_OK) == 0;
}

/* Kill what is left in base's leaves, remove them and base. */
static void
cgroup_cleanup(const char *base)
{
	static const char *leaves[] = { "w", "v" };
	char leaf[700], kill_file[720];
	size_t i;
	int fd, waited;

	for (i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		snprintf(leaf, sizeof(leaf), "%s/%s", base, leaves[i]);
		snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", leaf);
		if ((fd = open(kill_file, O_WRONLY | O_CLOEXEC)) != -1) {
			(void)!write(fd, "1", 1);
			close(fd);
		}
		for (waited = 0; rmdir(leaf) == -1 && errno == EBUSY &&
		    waited < 2000; waited += 10)
			ts_sleep_ms(10);
	}
	(void)rmdir(base);
}

/* Every pid printed after "tag " in lines of the log, into seen. */
static int
pids_in_log(const char *tag, pid_t *out, int max)
{
	char key[32];
	const char *p;
	int n = 0;

	snprintf(key, sizeof(key), ": %s ", tag);
	for (p = ts_daemon_log(&d); n < max && (p = strstr(p, key)) != NULL;
	    p += strlen(key))
		out[n++] = (pid_t)atoi(p + strlen(key));
	return n;
}

static int
count_alive(const pid_t *pids, int n)
{
	int i, alive = 0;

	for (i = 0; i < n; i++)
		alive += ts_alive(pids[i]);
	return alive;
}

/* Does pid hold the arena (a memfd named actord)? */
static bool
holds_arena(pid_t pid)
{
	char path[64], link[256];
	ssize_t k;
	int fd;

	for (fd = 0; fd < 64; fd++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		if ((k = readlink(path, link, sizeof(link) - 1)) <= 0)
			continue;
		link[k] = '\0';
		if (strstr(link, "memfd:actord") != NULL)
			return true;
	}
	return false;
}

/* Wait until none of pids lives (true), or ms passed. */
static bool
all_gone(const pid_t *pids, int n, int ms)
{
	int waited;

	for (waited = 0; waited < ms; waited += 10) {
		if (count_alive(pids, n) == 0)
			return true;
		ts_sleep_ms(10);
	}
	return count_alive(pids, n) == 0;
}

/* Two workers w and v (or w alone) running script, as user. */
static void
write_conf(const char *cg_line, const char *script, const char *user,
    bool with_v)
{
	char v[512] = "";

	if (with_v)
		snprintf(v, sizeof(v), ",\n    { name = \"v\"; exec = "
		    "[\"/bin/sh\", \"-c\", \"%s\"]; %s }", script, user);
	ts_daemon_conf(&d, "%s"
	    "runtime_dir = \"%s/run\";\n"
	    "shutdown_timeout = 5000;\n"
	    "supervisor = {\n"
	    "  intensity = 3; period = 10; backoff_min = 1; backoff_max = 10;\n"
	    "  children = (\n"
	    "    { name = \"w\"; exec = [\"/bin/sh\", \"-c\", \"%s\"]; %s }"
	    "%s\n  );\n};\n", cg_line, d.dir, script, user, v);
}

enum kind { K_ROOT, K_USER, K_CGROUP };

static const char *kind_names[] = { "root", "user", "cgroup" };

/*
 * Two workers, each a shell with two children (and with `cgroup` one
 * more that leaves the process group with setsid); actord is killed with
 * SIGKILL.  Every worker and every child in their process groups is gone
 * (the workers by their parent-death signal, their children by the
 * warden); what escaped the process group is killed by the next actord
 * when it starts with the same `cgroup`, though it runs w alone: v's
 * cgroup is emptied by the sweep at start, not by a start of v.  Neither
 * worker has a mailbox,
 * so no grandchild holds the arena.  The figure printed is how many were
 * left 1 s after the kill (asserted only within WAIT).
 */
START_TEST(kill_9_leaves_nothing)
{
	const char *shell = "sleep 3600 & echo gc $!; sleep 3600 & echo gc "
	    "$!; %s echo main $$; wait";
	char cg_line[700] = "", user[80] = "", script[256], mnt[512];
	pid_t pids[MAXP], esc[4];
	int ngc, nmain, nesc = 0, i, left;
	enum kind k = (enum kind)_i;

	if (k == K_USER && (geteuid() != 0 || getpwnam("nobody") == NULL)) {
		fprintf(stderr, "kill_9_leaves_nothing (user): skipped, not "
		    "root or no user nobody\n");
		return;
	}
	if (k == K_CGROUP) {
		if (!cgroup2_mount(mnt, sizeof(mnt))) {
			fprintf(stderr, "kill_9_leaves_nothing (cgroup): "
			    "skipped, no writable cgroup v2 mount\n");
			return;
		}
		snprintf(cg_base, sizeof(cg_base), "%s/actord-procs-%d", mnt,
		    (int)getpid());
		snprintf(cg_line, sizeof(cg_line), "cgroup = \"%s\";\n",
		    cg_base);
	}
	if (k == K_USER)
		snprintf(user, sizeof(user), "user = \"nobody\";");
	snprintf(script, sizeof(script), shell, k == K_CGROUP ?
	    "setsid sleep 3600 & echo esc $!;" : "");
	write_conf(cg_line, script, user, true);
	ts_daemon_start(&d, NULL);
	ck_assert_msg(ts_daemon_ready(&d, WAIT), "log:\n%s", ts_daemon_log(&d));
	for (i = 0; i < WAIT; i += 10) {
		if (pids_in_log("gc", pids, 4) == 4 &&
		    pids_in_log("main", pids, 2) == 2 && (k != K_CGROUP ||
		    pids_in_log("esc", esc, 2) == 2))
			break;
		ts_sleep_ms(10);
	}
	ngc = pids_in_log("gc", pids, 4);
	nmain = pids_in_log("main", pids + ngc, 2);
	if (k == K_CGROUP)
		nesc = pids_in_log("esc", esc, 2);
	for (i = 0; i < ngc + nmain; i++)
		seen[nseen++] = pids[i];
	for (i = 0; i < nesc; i++)
		seen[nseen++] = esc[i];
	ck_assert_msg(ngc == 4 && nmain == 2 && (k != K_CGROUP || nesc == 2),
	    "log:\n%s", ts_daemon_log(&d));
	ck_assert_int_eq(count_alive(pids, ngc + nmain), ngc + nmain);
	/* "esc" is printed at the fork: wait until it did leave the group. */
	for (i = 0; i < nesc; i++) {
		int waited;

		for (waited = 0; waited < WAIT && getsid(esc[i]) != esc[i];
		    waited += 10)
			ts_sleep_ms(10);
		ck_assert_int_eq(getsid(esc[i]), esc[i]);
	}
	/* Item 5: no mailbox, no arena, for them or what they fork. */
	for (i = 0; i < ngc + nmain; i++)
		ck_assert_msg(!holds_arena(pids[i]), "pid %d holds the arena",
		    (int)pids[i]);

	ck_assert_int_eq(kill(d.pid, SIGKILL), 0);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 128 + SIGKILL);
	ts_sleep_ms(1000);
	left = count_alive(pids, ngc + nmain);
	fprintf(stderr, "kill_9_leaves_nothing (%s): %d of %d processes left "
	    "1 s after kill -9\n", kind_names[k], left, ngc + nmain);
	ck_assert_msg(all_gone(pids, ngc + nmain, WAIT), "%d of %d processes "
	    "outlived actord", count_alive(pids, ngc + nmain), ngc + nmain);
	if (k != K_CGROUP)
		return;

	/*
	 * The next actord, same cgroup, without v: what escaped dies before
	 * it runs, v's too, though no worker of its cgroup starts again.
	 */
	write_conf(cg_line, script, user, false);
	ts_daemon_start(&d, NULL);
	ck_assert_msg(ts_daemon_ready(&d, WAIT), "log:\n%s", ts_daemon_log(&d));
	fprintf(stderr, "kill_9_leaves_nothing (cgroup): %d of %d escaped "
	    "processes left once the next actord is ready\n",
	    count_alive(esc, nesc), nesc);
	ck_assert_msg(all_gone(esc, nesc, WAIT), "escaped processes outlived "
	    "the next start; log:\n%s", ts_daemon_log(&d));
	ck_assert_msg(strstr(ts_daemon_log(&d), "killing what an earlier "
	    "actord left") != NULL, "log:\n%s", ts_daemon_log(&d));
	for (i = 0; i < WAIT; i += 10) {	/* the new worker's pids */
		if (pids_in_log("main", pids, 3) == 3)
			break;
		ts_sleep_ms(10);
	}
	for (i = 0; i < pids_in_log("gc", pids, MAXP) && nseen < MAXP; i++)
		seen[nseen++] = pids[i];
	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	ck_assert_int_eq(ts_daemon_wait(&d, WAIT), 0);
}
END_TEST

/* --- inside the test process ---------------------------------------------- */

/*
 * A `user =` function child writes its parent-death signal to the pipe
 * whose write end it inherited (a file would need to be writable by it).
 */
static int
fn_pdeathsig(void *arg)
{
	int sig = -1, *wfd = arg;

	(void)prctl(PR_GET_PDEATHSIG, &sig);
	(void)!write(*wfd, &sig, sizeof(sig));
	ts_ready();
	while (pause() == -1)
		;
	return 0;
}

/*
 * Item 4: the credential change clears PR_SET_PDEATHSIG, so it must be
 * armed after it: a `user =` worker still dies with actord.
 */
START_TEST(user_worker_keeps_pdeathsig)
{
	struct actord_spec *spec;
	struct child_spec *c;
	struct actord *ad;
	int fds[2], sig = -1;

	if (geteuid() != 0 || getpwnam("nobody") == NULL) {
		fprintf(stderr, "user_worker_keeps_pdeathsig: skipped, not "
		    "root or no user nobody\n");
		return;
	}
	ck_assert_int_eq(pipe(fds), 0);
	spec = ts_spec();
	c = ts_add_fn(&spec->root, "u", fn_pdeathsig, &fds[1]);
	c->user = strdup("nobody");
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/u", NS_RUNNING, WAIT));
	seen[nseen++] = ts_pid(ad, "/u");
	ck_assert_int_eq(read(fds[0], &sig, sizeof(sig)), sizeof(sig));
	ck_assert_int_eq(sig, SIGKILL);
	actord_free(ad);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

/*
 * Item 4, the other half: a worker whose actord dies before the
 * parent-death signal is armed would never get it, so the child checks
 * getppid() once it is armed.  setresuid is wrapped (as waitpid is below):
 * in the child of the actord under test, it kills that actord and waits
 * to be orphaned before it changes the uid; the warden, which would kill
 * the orphan's group anyway, is stopped first, so that only the check is
 * left to end it.
 */
static bool kill_parent_at_setuid;

int
setresuid(uid_t r, uid_t e, uid_t s)
{
	pid_t pp = getppid();
	int waited;

	if (kill_parent_at_setuid) {
		(void)kill(pp, SIGKILL);
		for (waited = 0; getppid() == pp && waited < WAIT; waited++)
			usleep(1000);
	}
	return (int)syscall(SYS_setresuid, r, e, s);
}

/* Says it runs (its pid, on the pipe it inherited), then waits. */
static int
fn_alive(void *arg)
{
	int *wfd = arg;
	pid_t me = getpid();

	(void)!write(*wfd, &me, sizeof(me));
	while (pause() == -1)
		;
	return 0;
}

START_TEST(orphaned_before_pdeathsig_exits)
{
	struct actord_spec *spec;
	struct child_spec *c;
	struct actord *ad;
	struct pollfd pfd;
	pid_t p, alive = 0;
	int fds[2], st;
	ssize_t k;

	if (geteuid() != 0 || getpwnam("nobody") == NULL) {
		fprintf(stderr, "orphaned_before_pdeathsig_exits: skipped, not "
		    "root or no user nobody\n");
		return;
	}
	ck_assert_int_eq(pipe(fds), 0);
	p = fork();
	ck_assert_int_ne(p, -1);
	if (p == 0) {
		kill_parent_at_setuid = true;
		spec = ts_spec();
		c = ts_add_fn(&spec->root, "u", fn_alive, &fds[1]);
		c->user = strdup("nobody");
		ad = ts_actord(spec);
		warden_stop(ad);
		actord_boot(ad);
		ts_run_for(ad, WAIT);	/* its child kills it meanwhile */
		_exit(0);
	}
	seen[nseen++] = p;
	close(fds[1]);
	ck_assert_int_eq(waitpid(p, &st, 0), p);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* The orphan leaves at the check: end of file, never its pid. */
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, WAIT), 1);
	k = read(fds[0], &alive, sizeof(alive));
	if (k == sizeof(alive))
		(void)kill(alive, SIGKILL);	/* before the assertion ends us */
	ck_assert_msg(k == 0, "the worker ran on after actord died (pid %d)",
	    (int)alive);
	close(fds[0]);
}
END_TEST

/*
 * Item 8: waitpid and waitid are wrapped (this program's definitions
 * take the place of libc's for actord's code linked into it).  When the
 * watched pid is released, its producer slots must already be free: a
 * pid released first could be reused, and the reuser's slot freed.
 */
static struct shm_arena *watch_arena;
static pid_t watch_pid;
static int released_with_slots = -1;	/* -1: not released yet */

static int
slots_of(struct shm_arena *a, pid_t pid)
{
	uint32_t i;
	int n = 0;

	for (i = 0; i < a->nslots; i++)
		n += atomic_load(&a->slots[i].pid) == pid;
	return n;
}

static void
on_release(pid_t pid)
{
	if (watch_arena != NULL && pid > 0 && pid == watch_pid)
		released_with_slots = slots_of(watch_arena, pid);
}

pid_t
waitpid(pid_t pid, int *status, int options)
{
	pid_t r = (pid_t)syscall(SYS_wait4, pid, status, options, NULL);

	on_release(r);
	return r;
}

int
waitid(idtype_t idtype, id_t id, siginfo_t *si, int options)
{
	int r = (int)syscall(SYS_waitid, idtype, id, si, options, NULL);

	if (r == 0 && !(options & WNOWAIT))
		on_release(si->si_pid);
	return r;
}

/* A worker without a mailbox that sends: it holds a producer slot. */
static int
fn_producer(void *arg)
{
	struct shm_producer *p;
	struct actord **adp = arg;

	if (shm_producer_open((*adp)->arena, &p) != 0)
		return 1;
	ts_ready();
	while (pause() == -1)
		;
	return 0;
}

START_TEST(slots_freed_before_the_pid)
{
	static struct actord *ad;
	struct actord_spec *spec;
	struct child_spec *c;
	pid_t pid;
	int i;

	spec = ts_spec();
	c = ts_add_fn(&spec->root, "p", fn_producer, &ad);
	c->restart = RESTART_TEMPORARY;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/p", NS_RUNNING, WAIT));
	pid = ts_pid(ad, "/p");
	seen[nseen++] = pid;
	ck_assert_int_eq(slots_of(ad->arena, pid), 1);
	watch_arena = ad->arena;
	watch_pid = pid;
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	for (i = 0; i < WAIT && released_with_slots == -1; i += 5)
		ts_run_for(ad, 5);
	watch_arena = NULL;
	ck_assert_msg(released_with_slots == 0, "pid %d released with %d "
	    "producer slots still held", (int)pid, released_with_slots);
	ck_assert_int_eq(slots_of(ad->arena, pid), 0);
	actord_free(ad);
}
END_TEST

/* The descriptor numbers pid holds, as a bit set of 0..63 (more: bit 63). */
static uint64_t
fd_set_of(pid_t pid)
{
	char path[64];
	uint64_t set = 0;
	int fd;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		if (access(path, F_OK) == 0)
			set |= 1ULL << (fd < 63 ? fd : 63);
	}
	return set;
}

/*
 * A program worker shares actord's descriptor table only until its first
 * act, which keeps the staged descriptors alone (spawn.c, issue 13): with
 * 300 descriptors open in actord, the worker (with a mailbox and a
 * readiness pipe) holds 0-5 and nothing else, its readiness pipe still
 * works, and actord's staging descriptors hold /dev/null again once it
 * has started, not the worker's pipes.
 */
START_TEST(program_worker_descriptors)
{
	struct actord_spec *spec;
	struct actord *ad;
	struct child_spec *c;
	char path[64], link[256];
	int extra[300], i;
	ssize_t k;
	pid_t pid;

	for (i = 0; i < 300; i++)
		ck_assert_int_ge(extra[i] = open("/dev/null", O_RDONLY), 0);
	spec = ts_spec();
	c = ts_add_exec(&spec->root, "w", ts_progs("tworker"), "fd", "0",
	    NULL);
	c->ready = READY_FD;
	c->has_mailbox = true;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/w", NS_RUNNING, WAIT));
	pid = ts_pid(ad, "/w");
	seen[nseen++] = pid;
	ck_assert_msg(fd_set_of(pid) == 0x3f, "worker fds %#llx",
	    (unsigned long long)fd_set_of(pid));
	/*
	 * A sanitized build starts it with vfork (spawn.c): no staging.  The
	 * arena's two slots keep actord's own memfds from start to start.
	 */
	for (i = 0; ad->spawner.ok && i < SPAWN_NSTAGE; i++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d",
		    ad->spawner.stage[i]);
		ck_assert_int_gt(k = readlink(path, link, sizeof(link) - 1), 0);
		link[k] = '\0';
		if (ad->spawner.held[i] == -1) {
			ck_assert_str_eq(link, "/dev/null");
			continue;
		}
		ck_assert(ad->spawner.held[i] == ad->arena_fd ||
		    ad->spawner.held[i] == ad->layout_fd);
		ck_assert_msg(strncmp(link, "/memfd:", 7) == 0, "slot %d: %s",
		    i, link);
	}
	actord_free(ad);
	for (i = 0; i < 300; i++)
		close(extra[i]);
}
END_TEST

/*
 * Item 9: a claim that stays ambiguous for longer than the old retry
 * budget (200 x 5 ms) is retried until it resolves.  A ghost slot (a
 * pid above pid_max) records the very claim this process holds between
 * claim and publish; this process stays there 1.5 s, running actord,
 * then publishes: the ghost's slot must then be freed.
 */
struct ghost_arg {
	struct actord	*ad;
	struct shm_slot	*ghost;
};

static void
hold_claim(void *arg)
{
	struct ghost_arg *g = arg;
	struct shm_arena *a = g->ad->arena;
	struct shm_slot *mine = NULL, *s;
	uint32_t i;

	for (i = 0; i < a->nslots; i++) {
		s = &a->slots[i];
		if (mine == NULL && atomic_load(&s->pid) == getpid() &&
		    REC_KIND(atomic_load(&s->rec_ring)) == REC_INTENT)
			mine = s;
		else if (g->ghost == NULL && atomic_load(&s->pid) == 0)
			g->ghost = s;
	}
	ck_assert_ptr_nonnull(mine);
	ck_assert_ptr_nonnull(g->ghost);
	atomic_store(&g->ghost->rec_pos, atomic_load(&mine->rec_pos));
	atomic_store(&g->ghost->rec_ring, atomic_load(&mine->rec_ring));
	atomic_store(&g->ghost->state, SLOT_LIVE);
	atomic_store(&g->ghost->pid, GHOST);
	mailboxes_reaped(g->ad, GHOST, SIGKILL, NULL);
	ck_assert_int_eq(atomic_load(&g->ghost->pid), GHOST);	/* EAGAIN */
	ts_run_for(g->ad, 1500);
}

START_TEST(ambiguous_reap_retried_until_done)
{
	struct ghost_arg g = { NULL, NULL };
	struct actord_spec *spec;
	struct child_spec *c;
	struct shm_producer *p;
	struct shm_msg m;
	struct node *n;
	int i;

	spec = ts_spec();
	c = ts_add_fn(&spec->root, "m", ts_fn_run, NULL);
	c->has_mailbox = true;
	g.ad = ts_actord(spec);
	n = actord_find(g.ad, "/m");
	ck_assert(n != NULL && n->mbox >= 0);
	ck_assert_int_eq(shm_producer_open(g.ad->arena, &p), 0);
	shm_producer_set_hook(p, hold_claim, &g);
	memset(&m, 0, sizeof(m));
	m.tag = 1;
	ck_assert_int_eq(shm_send(p, (uint32_t)n->mbox, SHM_LANE_MAIN, &m,
	    NULL, 0), 0);
	shm_producer_set_hook(p, NULL, NULL);
	for (i = 0; i < WAIT && atomic_load(&g.ghost->pid) == GHOST; i += 5)
		ts_run_for(g.ad, 5);
	ck_assert_msg(atomic_load(&g.ghost->pid) == 0, "the ghost's slot is "
	    "still taken (state %u)", atomic_load(&g.ghost->state));
	shm_producer_close(p);
	actord_free(g.ad);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("sup_procs");
	TCase *tc = tcase_create("procs");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, kill_9_leaves_nothing, K_ROOT, K_CGROUP + 1);
	tcase_add_test(tc, user_worker_keeps_pdeathsig);
	tcase_add_test(tc, orphaned_before_pdeathsig_exits);
	tcase_add_test(tc, slots_freed_before_the_pid);
	tcase_add_test(tc, ambiguous_reap_retried_until_done);
	tcase_add_test(tc, program_worker_descriptors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
