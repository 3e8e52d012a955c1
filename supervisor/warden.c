/*
 * warden.c: nothing of the tree outlives actord, even when actord is
 * killed with SIGKILL.  Each worker has PR_SET_PDEATHSIG (spawn.c), but
 * what a worker forks does not, and after the worker dies it would run on,
 * orphaned.  So actord forks one small process, the warden, before any
 * worker: it shares a table of the workers' process groups with actord
 * (a shared anonymous mapping), waits with every signal blocked for its
 * own parent-death signal, and when actord is gone sends SIGKILL to every
 * process group the table still names, then exits.
 *
 * The table is written by actord (a group is added once its worker is
 * forked, removed once the worker is reaped and its group killed) and by
 * each new program worker, which adds its own group before its exec
 * (warden_add_self: actord may die before its spawn returns; actord
 * waits for that exec, so never writes at the same time), and read only
 * by the warden once actord is dead: a CAS per slot is all the locking,
 * and a pgid the warden sees is one actord had not yet finished with.  A
 * full table (WARDEN_SLOTS workers at once) leaves the next worker
 * unguarded and says so once in the log.
 *
 * Owns the warden's pid and the table.  Must never kill anything while
 * actord lives, nor a group actord never recorded; the warden holds no
 * descriptor of actord's (a listening control socket kept open by it
 * would look like a live actord to the next one).  What left its worker's
 * process group (setsid) escapes the warden: with `cgroup` set, the next
 * actord kills it at start (cgroup.c).
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

#define WARDEN_SLOTS	16384	/* workers alive at once, guarded */
#define WARDEN_SIG	SIGUSR1	/* its parent-death signal, blocked */

struct warden {
	pid_t		 pid;
	bool		 full_said;	/* "table full" logged once */
	_Atomic int32_t	*tab;		/* shared: 0 or a process group */
};

static void	warden_main(_Atomic int32_t *, pid_t) __attribute__((noreturn));
static size_t	slot_of(pid_t);

static size_t
slot_of(pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) % WARDEN_SLOTS;
}

/*
 * The warden itself: nothing of actord's but stdio and the table, every
 * signal blocked (actord's SIGTERM or a terminal's ^C is actord's
 * business), and once actord is gone, SIGKILL to every group left.
 */
static void
warden_main(_Atomic int32_t *tab, pid_t parent)
{
	sigset_t all, wake;
	int32_t pgid;
	size_t i;

	sigfillset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);
	(void)close_range(3, ~0U, 0);
	(void)setpgid(0, 0);
	(void)prctl(PR_SET_NAME, "actord-warden");
	sigemptyset(&wake);
	sigaddset(&wake, WARDEN_SIG);
	/* Armed, then checked: actord may have died before the prctl. */
	if (prctl(PR_SET_PDEATHSIG, WARDEN_SIG) == 0)
		while (getppid() == parent && sigwaitinfo(&wake, NULL) == -1)
			;
	for (i = 0; i < WARDEN_SLOTS; i++)
		if ((pgid = atomic_load(&tab[i])) > 1)
			(void)kill(-pgid, SIGKILL);
	_exit(0);
}

/* Before the first worker: the table and the warden.  -1 with err. */
int
warden_start(struct actord *ad, char *err, size_t errlen)
{
	struct warden *w;
	sigset_t all, old;
	pid_t parent = getpid();

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		snprintf(err, errlen, "warden: %s", strerror(errno));
		return -1;
	}
	w->tab = mmap(NULL, WARDEN_SLOTS * sizeof(*w->tab), PROT_READ |
	    PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w->tab == MAP_FAILED) {
		snprintf(err, errlen, "warden: mmap: %s", strerror(errno));
		free(w);
		return -1;
	}
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	w->pid = fork();
	if (w->pid == 0)
		warden_main(w->tab, parent);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (w->pid == -1) {
		snprintf(err, errlen, "warden: fork: %s", strerror(errno));
		munmap(w->tab, WARDEN_SLOTS * sizeof(*w->tab));
		free(w);
		return -1;
	}
	ad->warden = w;
	log_debug("warden: pid %d", (int)w->pid);
	return 0;
}

/*
 * actord stops for good: every worker is already killed and reaped, so
 * the warden has nothing to do and is ended here (it would end by itself
 * at actord's exit; an embedding program may live on).
 */
void
warden_stop(struct actord *ad)
{
	struct warden *w = ad->warden;

	if (w == NULL)
		return;
	memset(w->tab, 0, WARDEN_SLOTS * sizeof(*w->tab));
	if (w->pid > 0) {
		(void)kill(w->pid, SIGKILL);
		(void)waitpid(w->pid, NULL, 0);
	}
	munmap(w->tab, WARDEN_SLOTS * sizeof(*w->tab));
	free(w);
	ad->warden = NULL;
}

/* Is pid the warden (reaped: it died, which it never should)? */
bool
warden_reaped(struct actord *ad, pid_t pid, int wstatus)
{
	struct warden *w = ad->warden;
	char why[64];

	if (w == NULL || pid != w->pid)
		return false;
	exit_describe(wstatus, why, sizeof(why));
	log_warnx("warden: pid %d %s: what workers fork may outlive a "
	    "killed actord", (int)pid, why);
	w->pid = 0;
	return true;
}

/*
 * pgid in the table, once: true if it is there.  A new program worker
 * (its own pid, before it runs anything: warden_add_self) and then actord
 * (once the spawn returned, its exec done) record it; each takes the
 * first slot of the same probe that is free or already holds it, so the
 * second finds the first's entry and never makes another.  Async-signal-
 * safe: no allocation, no lock, no log.
 */
static bool
record(_Atomic int32_t *tab, pid_t pgid)
{
	size_t i, k;
	int32_t seen;

	for (k = 0, i = slot_of(pgid); k < WARDEN_SLOTS; k++,
	    i = (i + 1) % WARDEN_SLOTS) {
		seen = 0;
		if (atomic_compare_exchange_strong(&tab[i], &seen, pgid) ||
		    seen == pgid)
			return true;
	}
	return false;
}

/* A worker's process group, to be killed if actord dies before it. */
void
warden_add(struct actord *ad, pid_t pgid)
{
	struct warden *w = ad->warden;

	if (w == NULL || pgid <= 1 || record(w->tab, pgid))
		return;
	if (!w->full_said)
		log_warnx("warden: more than %d workers: pid %d and later "
		    "ones may leave processes behind a killed actord",
		    WARDEN_SLOTS, (int)pgid);
	w->full_said = true;
}

/*
 * In a new program worker, its group just made (spawn.c, child_exec),
 * before its exec: actord may be killed before its spawn returns and it
 * records the group (warden_add), while the program already runs and
 * forks; so the worker records its own group first.  actord waits for
 * the exec meanwhile (vfork's way), so the two never record at once.
 * The table is shared memory that the worker's view of actord's still
 * names.
 */
void
warden_add_self(struct actord *ad)
{
	struct warden *w = ad->warden;

	if (w != NULL)
		(void)record(w->tab, getpid());
}

/* The group is gone (its worker reaped, the group killed). */
void
warden_del(struct actord *ad, pid_t pgid)
{
	struct warden *w = ad->warden;
	size_t i, k;

	if (w == NULL || pgid <= 1)
		return;
	for (k = 0, i = slot_of(pgid); k < WARDEN_SLOTS; k++,
	    i = (i + 1) % WARDEN_SLOTS)
		if (atomic_load(&w->tab[i]) == pgid) {
			atomic_store(&w->tab[i], 0);
			return;
		}
}
