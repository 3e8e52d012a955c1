/*
 * actord.c: the daemon's one state struct (struct actord) and what happens
 * at its edges: signals through a signalfd (SIGCHLD reaps, SIGTERM and
 * SIGINT shut down, SIGHUP reloads), reaping as a subreaper (waitid with
 * WNOWAIT, the arena cleaned, then waitpid: the child each SIGCHLD names at
 * once, and a sweep of all soon after for the signals that merged), the
 * shutdown deadline, and the end of the tree deciding actord's exit
 * status (0 stopped, 2 failed to start, 3 gave up).
 *
 * It owns the signal mask, the signalfd and the exit status.  It must never
 * sleep or poll: everything is an event of the loop (loop.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

static void	on_signal(void *, uint32_t);
static void	on_log_backlog(void *, int, bool);
static void	on_log_writable(void *, uint32_t);
static void	on_shutdown_timer(void *);
static void	on_sweep_timer(void *);

#define SWEEP_MS	20	/* a merged SIGCHLD's death is seen this late */
#define SWEEP_PROBES	4	/* reap_workers per sweep, at most */
#define SWEEP_MAX_MS	1000	/* ... and no later than this */
#define SWEEP_SHARE	100	/* a sweep comes no sooner than 100x its cost */
#define SWEEP_SHARE_ORPHANS 1000	/* ... 1000x, if only for orphans */
static bool	reap_one(struct actord *, const siginfo_t *);
static void	reap_pid(struct actord *, pid_t);
static void	reap_workers(struct actord *);
static void	sweep_after(struct actord *, uint64_t);
static void	sweep_soon(struct actord *);
static void	notify_manager(const char *);
static rlim_t	nr_open(void);
static void	finish(struct actord *, int, const char *);

struct actord *
actord_new(struct actord_spec *spec, char *err, size_t errlen)
{
	struct actord *ad;
	sigset_t set;

	if ((ad = calloc(1, sizeof(*ad))) == NULL) {
		snprintf(err, errlen, "calloc: %s", strerror(errno));
		return NULL;
	}
	/*
	 * The arena clock's calibration needs a quarter of a millisecond
	 * between two readings (shm_create): what is done until the arena
	 * is created counts toward it.
	 */
	shm_clock_mark(&ad->clock_mark);
	ad->spec = spec;
	ad->self = getpid();
	ad->sigfd = -1;
	ad->notify_sock = -1;
	ad->arena_fd = -1;
	ad->layout_fd = -1;
	ad->self_mbox = -1;
	ad->bell_fd = -1;
	ad->nofile.rlim_cur = ad->nofile.rlim_max = RLIM_INFINITY; /* unset */
	ad->loop.epfd = ad->loop.tfd = -1;
	if (getrandom(&ad->rng, sizeof(ad->rng), GRND_NONBLOCK) !=
	    sizeof(ad->rng))
		ad->rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ now_ms();
	timer_init(&ad->shutdown_timer, on_shutdown_timer, ad);
	timer_init(&ad->sweep_timer, on_sweep_timer, ad);
	ad->log_ev.fd = -1;
	if (loop_init(&ad->loop) == -1) {
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		goto fail;
	}
	log_on_backlog(on_log_backlog, ad);
	/* Signals are events: blocked, and read from a signalfd. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &ad->oldmask);
	ad->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (ad->sigfd == -1 || loop_add(&ad->loop, &ad->sig_ev, ad->sigfd,
	    EPOLLIN, on_signal, ad) == -1) {
		snprintf(err, errlen, "signalfd: %s", strerror(errno));
		goto fail;
	}
	/*
	 * Three descriptors per child at most (output, readiness, pidfd):
	 * raise our soft limit to the hard one, and as root the hard one to
	 * the system's maximum (fs.nr_open); children get the original back.
	 */
	if (getrlimit(RLIMIT_NOFILE, &ad->nofile) == 0) {
		struct rlimit rl = ad->nofile;

		rl.rlim_cur = rl.rlim_max = nr_open();
		if (rl.rlim_max <= ad->nofile.rlim_max ||
		    setrlimit(RLIMIT_NOFILE, &rl) == -1) {
			rl.rlim_cur = rl.rlim_max = ad->nofile.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
	} else
		ad->nofile.rlim_cur = ad->nofile.rlim_max = RLIM_INFINITY;
	/* Before any worker: what they fork dies with actord. */
	if (warden_start(ad, err, errlen) == -1)
		goto fail;
	/* What the workers orphan comes back to us to be reaped. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_warn("%s: PR_SET_CHILD_SUBREAPER", __func__);
	if (ready_socket_open(ad) == -1)
		log_warn("%s: notify socket; sd_notify readiness is off",
		    __func__);
	if ((ad->root = tree_build(ad, spec)) == NULL) {
		snprintf(err, errlen, "building the tree: %s", strerror(errno));
		goto fail;
	}
	if (cgroup_setup(ad, err, errlen) == -1)
		goto fail;
	/* The arena exists before anything is forked; every child gets it. */
	if (mailboxes_setup(ad, err, errlen) == -1)
		goto fail;
	return ad;
fail:
	ad->spec = NULL;	/* the caller keeps its spec on failure */
	actord_free(ad);
	return NULL;
}

/*
 * Free the daemon.  Whatever still runs is killed with its process group
 * and reaped, so that no process of the tree outlives it.
 */
void
actord_free(struct actord *ad)
{
	struct node *n;
	size_t i;

	if (ad == NULL)
		return;
	for (n = ad->all; n != NULL; n = n->next_all)
		if (n->kind == NODE_WORKER && n->pid > 0) {
			(void)killpg(n->pid, SIGKILL);
			cgroup_signal(n, SIGKILL);
			(void)waitpid(n->pid, NULL, 0);
			(void)node_set_pid(n, 0);
		}
	warden_stop(ad);
	deathwatch_close(ad);
	spawn_close(ad);
	if (ad->root != NULL)
		node_free(ad->root);
	ad->root = NULL;
	tree_release(ad);
	tree_pids_free(ad);
	output_flush_all(ad);
	ready_socket_close(ad);
	mailboxes_close(ad);
	if (ad->sigfd != -1) {
		loop_del(&ad->loop, &ad->sig_ev);
		close(ad->sigfd);
		sigprocmask(SIG_SETMASK, &ad->oldmask, NULL);
		if (ad->nofile.rlim_cur != RLIM_INFINITY ||
		    ad->nofile.rlim_max != RLIM_INFINITY)
			(void)setrlimit(RLIMIT_NOFILE, &ad->nofile);
	}
	log_on_backlog(NULL, ad);
	loop_del(&ad->loop, &ad->log_ev);
	loop_close(&ad->loop);
	if (ad->free_spec != NULL) {
		if (ad->spec != NULL)
			ad->free_spec(ad->spec);
		for (i = 0; i < ad->nretired; i++)
			ad->free_spec(ad->retired[i]);
	}
	cgroup_close(ad);
	free(ad->retired);
	free(ad);
}

int
actord_boot(struct actord *ad)
{
	log_info("starting the tree");
	node_start(ad->root, WHY_PLAN);
	return 0;
}

/* One turn of the loop; returns 1 once the tree is done. */
int
actord_run_once(struct actord *ad, int timeout_ms)
{
	if (!ad->done && loop_once(&ad->loop, timeout_ms) == -1)
		fatal("%s: epoll_wait", __func__);
	tree_release(ad);
	if (ad->on_event != NULL)
		ad->on_event(ad, ad->event_arg);
	return ad->done;
}

int
actord_run(struct actord *ad)
{
	if (!ad->booted && !ad->done && ad->root->state == NS_STOPPED)
		actord_boot(ad);
	while (!ad->done)
		actord_run_once(ad, -1);
	return ad->status;
}

static void
finish(struct actord *ad, int status, const char *msg)
{
	if (ad->done)
		return;
	ad->done = true;
	ad->status = status;
	snprintf(ad->message, sizeof(ad->message), "%s", msg);
	timer_cancel(&ad->loop, &ad->shutdown_timer);
	if (ad->sweep_timer.fn != NULL)		/* made by actord_new */
		timer_cancel(&ad->loop, &ad->sweep_timer);
}

void
actord_root_started(struct actord *ad, bool ok, const char *cause)
{
	char msg[sizeof(ad->message)];

	if (ok) {
		ad->booted = true;
		log_info("tree started");
		notify_manager("READY=1\nSTATUS=tree started");
		return;
	}
	/* The child's own line said why (worker.c): not again here. */
	snprintf(msg, sizeof(msg), "failed to start: %s", cause);
	finish(ad, ACTORD_EXIT_START, msg);
}

void
actord_root_stopped(struct actord *ad)
{
	log_info("tree stopped");
	finish(ad, ACTORD_EXIT_OK, "stopped");
}

void
actord_root_exited(struct actord *ad, const char *cause)
{
	char msg[sizeof(ad->message)];

	snprintf(msg, sizeof(msg), "root supervisor %s", cause);
	log_warnx("%s", msg);
	finish(ad, ACTORD_EXIT_GAVEUP, msg);
}

/* Stop the tree in reverse order; shutdown_timeout bounds all of it. */
void
actord_shutdown(struct actord *ad)
{
	if (ad->done)
		return;
	if (ad->shutting_down) {
		log_warnx("shutdown asked again: SIGKILL to what is left");
		ad->kill_all = true;
		worker_kill_all(ad->root);
		return;
	}
	ad->shutting_down = true;
	log_info("shutting down, within %u ms", ad->spec->shutdown_timeout);
	notify_manager("STOPPING=1");
	timer_after(&ad->loop, &ad->shutdown_timer, ad->spec->shutdown_timeout);
	node_stop(ad->root);
}

static void
on_shutdown_timer(void *arg)
{
	struct actord *ad = arg;

	log_warnx("shutdown_timeout of %u ms expired: SIGKILL to what is left",
	    ad->spec->shutdown_timeout);
	ad->kill_all = true;
	worker_kill_all(ad->root);
}

/* A wait status, as waitpid gives it, from waitid's siginfo. */
static int
wstatus_of(const siginfo_t *si)
{
	switch (si->si_code) {
	case CLD_EXITED:
		return (si->si_status & 0xff) << 8;
	case CLD_DUMPED:
		return (si->si_status & 0x7f) | 0x80;
	default:
		return si->si_status & 0x7f;
	}
}

/*
 * Reap every child that died: workers, and orphans we adopted.  Each dead
 * child is first looked at without being released (WNOWAIT): while it is
 * a zombie its pid cannot be reused, so the arena is cleaned for that pid
 * (its producer slots, its claims: mailboxes_reaped) with no risk of
 * freeing a new process's slot; only then is the pid released.
 */
void
actord_reap(struct actord *ad)
{
	siginfo_t si;
	unsigned walks = 0, probes = 0;
	struct node *n;
	struct timespec t0, t1;
	int rc;

	for (;;) {
		memset(&si, 0, sizeof(si));
		walks++;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		/* A walk that found nothing: what a sweep costs (sweep_after). */
		ad->sweep_us = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000);
		if (rc == -1 || si.si_pid <= 0)
			break;
		/*
		 * A worker with a pidfd (worker.c): its death is an event of
		 * the loop, not read yet, and so may be others'.  This one is
		 * reaped, the rest left to their events; the sweep comes back
		 * for the orphans.
		 */
		if ((n = node_by_pid(ad, si.si_pid)) != NULL &&
		    worker_watched(n)) {
			if (reap_one(ad, &si))
				sweep_soon(ad);
			break;
		}
		/*
		 * Each waitid(P_ALL) makes the kernel walk the children up
		 * to a zombie.  A worker's zombie found this way is a death
		 * whose SIGCHLD merged with another: when one merged, many
		 * did (a group stopped at once), and finding each this way
		 * would cost a walk of every child per death: O(N^2) for N
		 * deaths.  So the workers are looked at each by its pid
		 * instead (reap_workers, O(N)), a few times per sweep at
		 * most; what P_ALL finds after that is an orphan, or a death
		 * since.
		 */
		if (probes < SWEEP_PROBES && n != NULL) {
			probes++;
			reap_workers(ad);
			continue;
		}
		if (!reap_one(ad, &si))
			break;
	}
	if (walks > ad->sweep_walks_max)
		ad->sweep_walks_max = walks;
}

/* Every worker that is dead, by its pid: O(1) each. */
static void
reap_workers(struct actord *ad)
{
	struct node *n, *next;

	for (n = ad->all; n != NULL; n = next) {
		next = n->next_all;
		if (n->kind == NODE_WORKER && n->pid > 0)
			reap_pid(ad, n->pid);
		/*
		 * A reap may free nodes (a temporary child removed): they
		 * leave the list, their memory stays until the turn ends
		 * (tree_release).  If next went, the workers not looked at
		 * are found by the sweep's waitid(P_ALL).
		 */
		if (next != NULL && next->gone)
			break;
	}
}

/*
 * The dead child si names (looked at with WNOWAIT): cleaned up, released,
 * its node told.  False if it could not be released.
 */
static bool
reap_one(struct actord *ad, const siginfo_t *si)
{
	struct node *n;
	pid_t pid = si->si_pid;
	int st;
	bool warden;

	st = wstatus_of(si);
	/*
	 * What was written before this death is read first: the node's own
	 * readiness, and, while any child waits on the socket, a datagram
	 * this pid sent, before the pid can be another's (ready.c).
	 */
	ready_socket_drain(ad);
	if ((n = node_by_pid(ad, pid)) != NULL)
		ready_drain(n);
	if (!(warden = warden_reaped(ad, pid, st)))
		mailboxes_reaped(ad, pid, st, n);
	if (waitpid(pid, &st, WNOHANG) != pid) {
		log_warn("waitpid %d", (int)pid);
		return false;	/* never loop on a child we cannot release */
	}
	if (n == NULL) {
		char why[64];

		exit_describe(st, why, sizeof(why));
		if (!warden)
			log_info("orphan pid %d: %s", (int)pid, why);
		return true;
	}
	worker_drain(n);
	n->wstatus = st;
	worker_event(n, WEV_EXIT);
	warden_del(ad, pid);	/* its group was killed with it */
	return true;
}

/*
 * The child a SIGCHLD or its pidfd named, if it is dead: O(1), where the
 * sweep's waitid(P_ALL) makes the kernel look at every child (issue 13:
 * at 10,000 workers, most of a one_for_all restart's stops).  Named by
 * both, it is reaped by the first; the second finds no such child.
 */
static void
reap_pid(struct actord *ad, pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (pid > 0 && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG |
	    WNOWAIT) == 0 && si.si_pid == pid)
		(void)reap_one(ad, &si);
}

void
actord_reap_pid(struct actord *ad, pid_t pid)
{
	reap_pid(ad, pid);
}

/*
 * The sweep SWEEP_MS from now at the latest (sooner if it was due
 * sooner), but no sooner than share times what the last one cost: a
 * sweep walks every child (a millisecond at 10,000 workers), and deaths
 * that come one after the other must not each pay for one.  A death
 * whose SIGCHLD merged is found that much later.
 */
static void
sweep_after(struct actord *ad, uint64_t share)
{
	uint64_t when, ms = SWEEP_MS, least = ad->sweep_us * share / 1000;

	if (ms < least)
		ms = least < SWEEP_MAX_MS ? least : SWEEP_MAX_MS;
	when = loop_now(&ad->loop) + ms;

	if (!timer_pending(&ad->sweep_timer) || ad->sweep_timer.when > when)
		timer_at(&ad->loop, &ad->sweep_timer, when);
}

/*
 * The sweep after SIGCHLDs, which merge: paced at SWEEP_SHARE while some
 * worker's death is not an event of its own (worker.c, watch_pid).  Once
 * every one's is, only an orphan's death can hide behind a merged
 * SIGCHLD: its sweep takes a tenth of that share, a second later at
 * 10,000 workers, once for all the deaths until then.
 */
static void
sweep_soon(struct actord *ad)
{
	sweep_after(ad, ad->npids > ad->nwatched ? SWEEP_SHARE :
	    SWEEP_SHARE_ORPHANS);
}

/* SIGCHLDs merge: the sweep finds the deaths whose signal was merged. */
static void
on_sweep_timer(void *arg)
{
	actord_reap(arg);
}

/*
 * Log lines wait for stderr (log.c): watch it for room while they do, so
 * that actord goes on supervising instead of blocking in write(2).
 */
static void
on_log_backlog(void *arg, int fd, bool pending)
{
	struct actord *ad = arg;

	if (!pending)
		loop_del(&ad->loop, &ad->log_ev);
	else if (ad->log_ev.fd == -1 && ad->loop.epfd != -1)
		(void)loop_add(&ad->loop, &ad->log_ev, fd, EPOLLOUT,
		    on_log_writable, ad);
	/* If it cannot be watched, the next line logged flushes instead. */
}

static void
on_log_writable(void *arg, uint32_t events)
{
	(void)arg;
	(void)events;
	log_flush();
}

static void
on_signal(void *arg, uint32_t events)
{
	struct actord *ad = arg;
	struct signalfd_siginfo si[8];
	pid_t pids[64];
	size_t npids = 0, i, k;
	ssize_t r;
	bool chld = false;

	(void)events;
	/*
	 * Several at a time: a read that did not fill the buffer took every
	 * signal pending, and one more read would only say EAGAIN.
	 */
	do {
		r = read(ad->sigfd, si, sizeof(si));
		for (k = 0; r > 0 && k < (size_t)r / sizeof(si[0]); k++)
			switch (si[k].ssi_signo) {
			case SIGCHLD:
				chld = true;
				if (npids < sizeof(pids) / sizeof(pids[0]))
					pids[npids++] = (pid_t)si[k].ssi_pid;
				break;
			case SIGTERM:
			case SIGINT:
				log_info("%s received",
				    strsignal((int)si[k].ssi_signo));
				actord_shutdown(ad);
				break;
			case SIGHUP:
				if (ad->on_hup != NULL)
					ad->on_hup(ad, ad->hup_arg);
				break;
			}
	} while (r == (ssize_t)sizeof(si));
	if (!chld)
		return;
	/*
	 * The children the signals name first, each in O(1); then, soon, a
	 * sweep of them all, for the deaths whose SIGCHLD merged with one
	 * still pending (a standard signal is not queued twice): one sweep
	 * for every burst of signals, not one per death.
	 */
	for (i = 0; i < npids; i++)
		reap_pid(ad, pids[i]);
	sweep_soon(ad);		/* paced by its cost: sweep_after */
}

/*
 * The most descriptors a process may have, for root to raise to; 0: ours.
 * Only with close_range(2) (Linux 5.9): a child without it closes every
 * number up to the limit (spawn.c, child_fds), a million of them.
 */
static rlim_t
nr_open(void)
{
	unsigned long long v = 0;
	FILE *f;

	if (geteuid() != 0 || close_range(~0U, ~0U, 0) == -1 ||
	    (f = fopen("/proc/sys/fs/nr_open", "re")) == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return (rlim_t)v;
}

/* sd_notify to the manager above us, if it gave us NOTIFY_SOCKET. */
static void
notify_manager(const char *msg)
{
	struct sockaddr_un sun;
	const char *path = getenv("NOTIFY_SOCKET");
	size_t len;
	int fd;

	if (path == NULL || (path[0] != '/' && path[0] != '@'))
		return;
	len = strlen(path);
	if (len >= sizeof(sun.sun_path))
		return;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, len);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sun,
	    offsetof(struct sockaddr_un, sun_path) + len) == -1)
		log_warn("sd_notify %s", path);
	close(fd);
}
