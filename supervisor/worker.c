/*
 * worker.c: the life of one worker process, written as a table of states
 * by events.  A worker starts (fork, exec, readiness), runs, and stops
 * (SIGTERM to its process group, SIGKILL after its shutdown time); every
 * death is described ("exited 3", "killed by signal 9 (Killed)") and
 * handed to its supervisor.
 *
 * It owns a worker's pid, start and kill timers.  It must never
 * decide about restarts: that is the supervisor's (sup.c); it only reports
 * node_started, node_stopped and node_exited.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

typedef void (*waction)(struct node *);

static void	a_ignore(struct node *);
static void	a_spawn(struct node *);
static void	a_exec_ok(struct node *);
static void	a_exec_fail(struct node *);
static void	a_ready(struct node *);
static void	a_start_died(struct node *);
static void	a_start_timeout(struct node *);
static void	a_term(struct node *);
static void	a_died(struct node *);
static void	a_stopped(struct node *);
static void	a_kill(struct node *);
static void	a_down_stop(struct node *);
static void	cleanup(struct node *);
static void	group_kill(struct node *, int);
static void	on_timer(void *);
static void	exec_done(struct node *, const int[2]);
static bool	timed_by_group(const struct node *);
static void	watch_pid(struct node *, pid_t, int);
static void	on_pidfd(void *, uint32_t);

/*
 * The table.  Rows are states, columns events.  An event a state does not
 * expect is ignored (a late READY from a dying child, a duplicate STOP).
 */
static const waction wtable[NS__COUNT][WEV__COUNT] = {
	/*		START	  EXEC_OK    EXEC_FAIL	  READY	    EXIT
			STOP		TIMER */
	[NS_STOPPED] = { a_spawn, a_ignore, a_ignore, a_ignore, a_ignore,
			a_down_stop, a_ignore },
	[NS_RESTARTING] = { a_spawn, a_ignore, a_ignore, a_ignore, a_ignore,
			a_down_stop, a_ignore },
	[NS_FAILED] = { a_spawn, a_ignore, a_ignore, a_ignore, a_ignore,
			a_down_stop, a_ignore },
	[NS_STARTING] = { a_ignore, a_exec_ok, a_exec_fail, a_ready,
			a_start_died, a_term, a_start_timeout },
	[NS_RUNNING] = { a_ignore, a_ignore, a_ignore, a_ignore, a_died,
			a_term, a_ignore },
	[NS_STOPPING] = { a_ignore, a_ignore, a_ignore, a_ignore, a_stopped,
			a_ignore, a_kill },
};

void
worker_event(struct node *n, enum wev ev)
{
	if (n->kind != NODE_WORKER || ev >= WEV__COUNT)
		return;
	/* The deterministic simulator (tests/sim) plays the processes. */
	if (n->ad->sim_proc != NULL) {
		n->ad->sim_proc(n, ev, n->ad->sim_arg);
		return;
	}
	wtable[n->state][ev](n);
}

static void
on_timer(void *arg)
{
	worker_event(arg, WEV_TIMER);
}

static void
a_ignore(struct node *n)
{
	(void)n;
}

/*
 * sig to the worker's process group, and to what left the group in its
 * cgroup.  Before a SIGTERM, a SIGCONT, so that a stopped worker hears
 * it; never after: a SIGCONT discards every stop signal pending when it
 * is sent, and a worker's exit path may have just asked for one
 * (LeakSanitizer's tracer attaches with PTRACE_ATTACH and waits for the
 * SIGSTOP it queued, as may a crash reporter or a debugger): lost, the
 * worker would wait for it until the SIGKILL of its shutdown timeout.
 */
static void
group_kill(struct node *n, int sig)
{
	if (n->pid <= 0)
		return;
	if (sig == SIGTERM) {
		(void)killpg(n->pid, SIGCONT);
		cgroup_signal(n, SIGCONT);
	}
	if (killpg(n->pid, sig) == -1 && errno != ESRCH)
		log_warn("%s: killpg %d", n->path, (int)n->pid);
	cgroup_signal(n, sig);		/* what left the group: same signal */
}

static void
cleanup(struct node *n)
{
	timer_cancel(&n->ad->loop, &n->timer);
	ready_release(n);
}

static void
a_spawn(struct node *n)
{
	struct spawn_fds fds;
	char err[256];
	int failed[2], notify_w = -1, out_w = -1, cg_fd = -1, pidfd;
	pid_t pid;

	if (n->timer.fn == NULL)
		timer_init(&n->timer, on_timer, n);
	/* One source: the arena's counter for a mailbox, else ours. */
	if (n->mbox < 0)
		n->incarnation++;
	mailboxes_prespawn(n);
	n->we_signalled = false;
	n->start_failing = false;
	n->start_cause[0] = '\0';
	n->wstatus = 0;
	err[0] = '\0';
	if (ready_prepare(n, &notify_w) == -1) {
		snprintf(err, sizeof(err), "notify pipe: %s", strerror(errno));
		goto fail;
	}
	if (cgroup_prepare(n, &cg_fd, err, sizeof(err)) == -1)
		goto fail;
	if (output_open(n, &out_w) == -1)
		log_warn("%s: output pipe", n->path);
	fds.cgroup = cg_fd;
	fds.out = out_w;
	fds.notify = notify_w;
	/*
	 * The arena only to an actor: a worker without a mailbox has no use
	 * for it, and what it forks would keep (and could write) it.
	 */
	fds.arena = n->mbox >= 0 ? n->ad->arena_fd : -1;
	fds.layout = n->mbox >= 0 ? n->ad->layout_fd : -1;
	pid = spawn_child(n, &fds, failed, &pidfd, err, sizeof(err));
	if (cg_fd != -1)
		close(cg_fd);
	cg_fd = -1;
	if (out_w != -1)
		close(out_w);
	if (notify_w != -1)
		close(notify_w);
	notify_w = -1;
	if (pid == -1)
		goto fail;
	if (node_set_pid(n, pid) == -1)
		log_warnx("%s: pid %d not indexed (no memory): its reap "
		    "walks every node", n->path, (int)pid);
	warden_add(n->ad, pid);		/* its group, if actord dies first */
	watch_pid(n, pid, pidfd);
	n->state = NS_STARTING;
	output_forked(n);
	mailboxes_state(n, NS_STARTING);
	log_debug("%s: forked pid %d, incarnation %llu", n->path, (int)pid,
	    (unsigned long long)n->incarnation);
	if (n->cs->start_timeout > 0)
		timer_after(&n->ad->loop, &n->timer, n->cs->start_timeout);
	if (n->cs->argv != NULL)
		exec_done(n, failed);
	else if (n->cs->ready == READY_EXEC)
		a_ready(n);	/* a function child is ready once forked */
	return;
fail:
	if (cg_fd != -1)
		close(cg_fd);
	if (notify_w != -1)
		close(notify_w);
	cleanup(n);
	output_node_gone(n);
	n->state = NS_FAILED;
	snprintf(n->last_exit, sizeof(n->last_exit), "%s", err);
	log_warnx("%s: %s", n->path, err);
	node_started(n, false, err);
}

/*
 * A program child has exec'd, or failed to: spawn_child returns only then
 * (vfork's way), with the child's {stage, errno} if it failed, so that no
 * pipe and no turn of the loop are needed to learn it (issue 13: three
 * descriptors, their epoll entries and a wake-up per start, at 10,000
 * starts a set restart).  A failed child exits 127 at once: its death is
 * handled then, with this cause (a_start_died).
 */
static void
exec_done(struct node *n, const int failed[2])
{
	if (failed[0] >= 0) {
		spawn_describe_error(failed, n->cs->argv[0], n->start_cause,
		    sizeof(n->start_cause));
		worker_event(n, WEV_EXEC_FAIL);
	} else
		worker_event(n, WEV_EXEC_OK);
}

/* Before a death is handled (what it said was read: actord.c, reap_one). */
void
worker_drain(struct node *n)
{
	worker_unwatch(n);	/* reaped: its pidfd has nothing more to say */
}

/*
 * Its death as an event of its own: its pidfd (pidfd_open(2)), readable
 * once the child is a zombie, reaped then in O(1) (actord_reap_pid).
 * SIGCHLD alone loses deaths that come together (a standard signal
 * pending is not queued again), and only a sweep of every child finds
 * those, a walk of every child each (actord.c, paced by its cost): a
 * watched worker's death never waits for one.  The pidfd is polled by an
 * io_uring ring, which holds it, so that it takes no descriptor
 * (deathwatch.c); without io_uring it is one more descriptor per worker
 * in the loop: taken only while the descriptor table is below half of
 * its limit, so that pipes for starts never run out because of them.  A
 * worker not watched is found as before, by its SIGCHLD or the sweep,
 * and so before Linux 5.3.  fd is the pidfd its spawn made (CLONE_PIDFD),
 * or -1: one is opened then; it is ours to close.
 */
static void
watch_pid(struct node *n, pid_t pid, int fd)
{
	struct actord *ad = n->ad;
	struct rlimit rl;

	worker_unwatch(n);
	if (ad->no_pidfds) {
		if (fd != -1)
			close(fd);
		return;
	}
	if (fd == -1 && (fd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1)
		return;
	if (deathwatch_add(ad, pid, fd)) {
		close(fd);	/* the ring holds the file */
		n->ringed = true;
		ad->nwatched++;
		return;
	}
	/* The lowest free number: how full the table is. */
	if ((getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur !=
	    RLIM_INFINITY && (rlim_t)fd >= rl.rlim_cur / 2) ||
	    loop_add(&ad->loop, &n->pid_ev, fd, EPOLLIN, on_pidfd, n) == -1) {
		close(fd);
		return;
	}
	n->pidfd = fd;
	ad->nwatched++;
}

static void
on_pidfd(void *arg, uint32_t events)
{
	struct node *n = arg;
	pid_t pid = n->pid;
	int fd = n->pidfd;

	(void)events;
	actord_reap_pid(n->ad, pid);
	/*
	 * Not reaped (not dead after all?): SIGCHLD and the sweep will.  A
	 * reap closed this watch, and a restart may have made the next one.
	 */
	if (n->pidfd == fd && n->pid == pid)
		worker_unwatch(n);
}

/* Its death is an event of its own (a pidfd, a completion of the ring). */
bool
worker_watched(const struct node *n)
{
	return n->pidfd != -1 || n->ringed;
}

/*
 * The ring's poll of pid ended without its death (deathwatch.c): not
 * watched any more, found as an unwatched one is.
 */
void
worker_watch_failed(struct actord *ad, pid_t pid)
{
	struct node *n = node_by_pid(ad, pid);

	if (n != NULL && n->ringed) {
		n->ringed = false;
		ad->nwatched--;
	}
}

/*
 * Reaped: nothing more to watch.  A poll in the ring completes at the
 * death it was made for, whoever reaped it first, and is gone then.
 */
void
worker_unwatch(struct node *n)
{
	if (n->ringed) {
		n->ringed = false;
		n->ad->nwatched--;
	}
	if (n->pidfd == -1)
		return;
	loop_del(&n->ad->loop, &n->pid_ev);
	close(n->pidfd);
	n->pidfd = -1;
	n->ad->nwatched--;
}

static void
a_exec_ok(struct node *n)
{
	if (n->cs->ready == READY_EXEC)
		a_ready(n);
}

static void
a_exec_fail(struct node *n)
{
	/*
	 * The child exits 127 right after; the failure is handled, and
	 * logged once with this cause, then (a_start_died).
	 */
	log_debug("%s: %s", n->path, n->start_cause);
}

static void
a_ready(struct node *n)
{
	timer_cancel(&n->ad->loop, &n->timer);
	ready_release(n);
	n->state = NS_RUNNING;
	mailboxes_state(n, NS_RUNNING);
	n->started_ms = now_ms();
	n->started_at = time(NULL);
	log_info("%s: running, pid %d", n->path, (int)n->pid);
	node_started(n, true, NULL);
}

static void
a_start_died(struct node *n)
{
	char desc[128];

	exit_describe(n->wstatus, desc, sizeof(desc));
	if (n->start_cause[0] == '\0')
		snprintf(n->start_cause, sizeof(n->start_cause),
		    "%s before it was ready", desc);
	group_kill(n, SIGKILL);
	cleanup(n);
	(void)node_set_pid(n, 0);
	n->state = NS_FAILED;
	snprintf(n->last_exit, sizeof(n->last_exit), "%s", n->start_cause);
	log_warnx("%s: failed to start: %s", n->path, n->start_cause);
	node_started(n, false, n->start_cause);
}

static void
a_start_timeout(struct node *n)
{
	snprintf(n->start_cause, sizeof(n->start_cause),
	    "not ready within %u ms", n->cs->start_timeout);
	log_info("%s: killing pid %d, not ready in time", n->path,
	    (int)n->pid);
	n->start_failing = true;
	n->we_signalled = true;
	group_kill(n, SIGKILL);
	n->state = NS_STOPPING;
	mailboxes_state(n, NS_STOPPING);
}

/*
 * An instances group stopping its instances together times them all with
 * its own one timer (sup.c), not one timer per instance.
 */
static bool
timed_by_group(const struct node *n)
{
	return sup_times_stop(n);
}

static void
a_term(struct node *n)
{
	int64_t sd = n->cs->shutdown;

	timer_cancel(&n->ad->loop, &n->timer);
	n->we_signalled = true;
	n->state = NS_STOPPING;
	mailboxes_state(n, NS_STOPPING);
	if (n->ad->kill_all || sd == SHUTDOWN_BRUTAL_KILL) {
		group_kill(n, SIGKILL);
		return;
	}
	group_kill(n, SIGTERM);
	if (sd >= 0 && !timed_by_group(n))
		timer_after(&n->ad->loop, &n->timer, (uint64_t)sd);
}

static void
a_kill(struct node *n)
{
	log_warnx("%s: pid %d still alive %lld ms after SIGTERM, sending "
	    "SIGKILL", n->path, (int)n->pid, (long long)n->cs->shutdown);
	group_kill(n, SIGKILL);
}

static void
a_stopped(struct node *n)
{
	char desc[128];

	exit_describe(n->wstatus, desc, sizeof(desc));
	group_kill(n, SIGKILL);		/* what it left behind */
	cleanup(n);
	log_info("%s: pid %d stopped, %s", n->path, (int)n->pid, desc);
	(void)node_set_pid(n, 0);
	if (n->start_failing) {
		n->state = NS_FAILED;
		snprintf(n->last_exit, sizeof(n->last_exit), "%s",
		    n->start_cause);
		log_warnx("%s: failed to start: %s", n->path, n->start_cause);
		node_started(n, false, n->start_cause);
		return;
	}
	snprintf(n->last_exit, sizeof(n->last_exit), "%s", desc);
	n->state = NS_STOPPED;
	node_stopped(n);
}

static void
a_died(struct node *n)
{
	char desc[128];
	bool clean;

	exit_describe(n->wstatus, desc, sizeof(desc));
	clean = exit_is_clean(n->wstatus, n->we_signalled,
	    n->cs->success_exit, n->cs->nsuccess_exit);
	group_kill(n, SIGKILL);		/* no descendant survives it */
	cleanup(n);
	if (clean)
		log_info("%s: pid %d %s", n->path, (int)n->pid, desc);
	else
		log_warnx("%s: pid %d %s", n->path, (int)n->pid, desc);
	(void)node_set_pid(n, 0);
	n->state = NS_STOPPED;
	snprintf(n->last_exit, sizeof(n->last_exit), "%s", desc);
	node_exited(n, clean, desc);
}

static void
a_down_stop(struct node *n)
{
	node_stopped(n);
}

/* shutdown_timeout expired: SIGKILL to every worker that is left. */
void
worker_kill_all(struct node *root)
{
	struct node *n;

	for (n = root->ad->all; n != NULL; n = n->next_all)
		if (n->kind == NODE_WORKER && n->pid > 0) {
			n->we_signalled = true;
			group_kill(n, SIGKILL);
		}
}
