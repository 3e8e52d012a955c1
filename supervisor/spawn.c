/*
 * spawn.c: fork and exec of one worker, done the way libuv does it.
 *
 * It owns the child side between fork and exec: process group, parent-death
 * signal, signal dispositions and mask, descriptors, limits, umask, cwd,
 * credentials, environment.  Everything that may allocate or read files
 * (getpwnam, getgrouplist, the environment array) happens in the parent
 * before fork, so the child only makes system calls: a program child is
 * started as vfork would, a function child with fork.  The parent-death signal
 * is armed last, after the credential change that would clear it.  A step
 * that fails in a program child is reported as {stage, errno} in the
 * memory it shares with actord until execve (posix_spawn's way), where
 * spawn_child finds it when the child has exec'd or died (vfork returns
 * then): no pipe, no turn of the loop, and a missing program is logged as
 * "exec /usr/bin/nope: No such file or directory", never as a mysterious
 * exit 127.  It must never touch the tree.
 *
 * What a start costs must not grow with the tree (issue 13): actord holds
 * a descriptor or more per worker (its output pipe, its readiness pipe),
 * and vfork copies the whole descriptor table into the child, which then
 * closes all of it (close_range): at 10,000 workers, tens of thousands of
 * files touched per start.  So a program child shares actord's table
 * (clone with CLONE_FILES, besides vfork's CLONE_VM | CLONE_VFORK, on a
 * stack of its own) and its first act is close_range(CLOSE_RANGE_UNSHARE)
 * from a low number up: the kernel then copies only the descriptors below
 * it.  The child's own descriptors were staged there by the parent: a few
 * low numbers reserved at the first start (struct spawner), holding
 * /dev/null between starts.  Kernels without CLOSE_RANGE_UNSHARE fall
 * back to unshare(CLONE_FILES), a full copy, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"
#include "worker/actor.h"
#include "worker/remote.h"

/* Descriptor numbers a child finds, documented in actord(8). */
#define FD_NOTIFY	3	/* ACTORD_NOTIFY_FD */
#define FD_ARENA	4	/* ACTORD_ARENA_FD */
#define FD_LAYOUT	5	/* ACTORD_LAYOUT_FD */
#define FD_HIGH		10	/* staging area above the fixed numbers */

enum stage {
	STAGE_EXEC,
	STAGE_FDS,
	STAGE_CHDIR,
	STAGE_RLIMIT,
	STAGE_SETGROUPS,
	STAGE_SETGID,
	STAGE_SETUID,
	STAGE_PDEATHSIG,
	STAGE_CGROUP
};

struct creds {
	bool		 set_uid, set_gid;
	uid_t		 uid;
	gid_t		 gid;
	gid_t		*groups;	/* supplementary, resolved before fork */
	int		 ngroups;
};

static int	 resolve_creds(const struct child_spec *, struct creds *,
		    char *, size_t);
static char	**build_env(const struct node *, const struct spawn_fds *);
static void	 free_env(char **);
struct child_ctx;
static void	 child_fail(volatile int *, int stage)
		    __attribute__((noreturn));
static int	 signals_read(uint64_t *, uint64_t *);
static uint64_t	 spawn_signals(struct spawner *, bool);
static void	 child_signals(uint64_t);
static void	 child_fds(const struct child_ctx *, bool exec);
static void	 child_fds_direct(const struct child_ctx *);
static void	 close_from_fd6(void);
static void	 child_exec(struct node *, const struct child_ctx *)
		    __attribute__((noreturn));
static bool	 spawner_ready(struct spawner *);
static pid_t	 spawn_clone(struct node *, const struct child_ctx *, int *);
static int	 clone_child(void *);

#define SPAWN_STACK	(256 * 1024)	/* the child's, guard page included */

/*
 * AddressSanitizer follows a vfork child (it intercepts vfork) but not a
 * clone that shares its memory on a stack it does not know: the child's
 * instrumented code changes the parent's shadow state, and false reports
 * follow.  A sanitized build starts program children with vfork.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SPAWN_CLONE	0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPAWN_CLONE	0
#endif
#endif
#ifndef SPAWN_CLONE
#define SPAWN_CLONE	1
#endif

/* What a child is given between its fork and its exec. */
struct child_ctx {
	const struct spawn_fds	*fds;
	const struct creds	*cr;
	char			**env;
	pid_t			 parent;
	uint64_t		 sigs;		/* to reset: spawn_signals_set */
	int			 devnull;	/* actord's, or -1: it opens one */
	bool			 direct;	/* fds and devnull above FD_LAYOUT */
	volatile int		*failed;	/* {stage, errno}, actord's */
};

/* What a cloned child needs: its node, its fds staged, the table's top. */
struct clone_arg {
	struct node		*n;
	const struct child_ctx	*ctx;
	int			 top;
};

static const char *stage_names[] = {
	"exec", "descriptors", "chdir", "setrlimit", "setgroups", "setgid",
	"setuid", "prctl(PR_SET_PDEATHSIG)", "joining its cgroup"
};

/* Turn {stage, errno} of a failed start into "exec /usr/bin/nope: ...". */
void
spawn_describe_error(const int msg[2], const char *argv0, char *buf,
    size_t len)
{
	const char *stage = "start";

	if (msg[0] >= 0 && (size_t)msg[0] < sizeof(stage_names) /
	    sizeof(stage_names[0]))
		stage = stage_names[msg[0]];
	if (msg[0] == STAGE_EXEC)
		snprintf(buf, len, "exec %s: %s", argv0, strerror(msg[1]));
	else
		snprintf(buf, len, "%s: %s", stage, strerror(msg[1]));
}

static int
resolve_creds(const struct child_spec *cs, struct creds *cr, char *err,
    size_t errlen)
{
	struct passwd *pw;
	struct group *gr;

	memset(cr, 0, sizeof(*cr));
	if (cs->user != NULL) {
		errno = 0;
		if ((pw = getpwnam(cs->user)) == NULL) {
			snprintf(err, errlen, "user %s: %s", cs->user,
			    errno ? strerror(errno) : "no such user");
			return -1;
		}
		cr->set_uid = cr->set_gid = true;
		cr->uid = pw->pw_uid;
		cr->gid = pw->pw_gid;
		/* initgroups reads files: done here, not in the child. */
		cr->ngroups = 0;
		(void)getgrouplist(cs->user, cr->gid, NULL, &cr->ngroups);
		if (cr->ngroups < 1)
			cr->ngroups = 1;
		cr->groups = calloc((size_t)cr->ngroups, sizeof(gid_t));
		if (cr->groups == NULL || getgrouplist(cs->user, cr->gid,
		    cr->groups, &cr->ngroups) == -1) {
			snprintf(err, errlen, "user %s: groups: %s", cs->user,
			    strerror(errno ? errno : ENOMEM));
			free(cr->groups);
			cr->groups = NULL;
			return -1;
		}
	}
	if (cs->group != NULL) {
		errno = 0;
		if ((gr = getgrnam(cs->group)) == NULL) {
			snprintf(err, errlen, "group %s: %s", cs->group,
			    errno ? strerror(errno) : "no such group");
			return -1;
		}
		cr->set_gid = true;
		cr->gid = gr->gr_gid;
	}
	if (cr->set_gid && cr->groups == NULL) {
		if ((cr->groups = calloc(1, sizeof(gid_t))) == NULL) {
			snprintf(err, errlen, "groups: %s", strerror(errno));
			return -1;
		}
		cr->groups[0] = cr->gid;
		cr->ngroups = 1;
	} else if (cr->groups != NULL && cs->group != NULL)
		cr->groups[0] = cr->gid;	/* the configured group first */
	return 0;
}

/* Only the configured variables, plus ACTORD_* (and NOTIFY_SOCKET). */
static char **
build_env(const struct node *n, const struct spawn_fds *fds)
{
	const struct child_spec *cs = n->cs;
	const struct node_spec *ns = n->ad->spec != NULL ? n->ad->spec->node :
	    NULL;
	char **env;
	size_t i, k = 0;
	int ok = 1;

	env = calloc(cs->nenv + 10, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (i = 0; i < cs->nenv; i++)
		if (asprintf(&env[k++], "%s=%s", cs->env[i].name,
		    cs->env[i].value) == -1)
			ok = 0;
	if (ok && asprintf(&env[k++], "ACTORD_PATH=%s", n->path) == -1)
		ok = 0;
	if (ok && asprintf(&env[k++], "ACTORD_INCARNATION=%llu",
	    (unsigned long long)n->incarnation) == -1)
		ok = 0;
	if (ok && fds->notify != -1 && asprintf(&env[k++],
	    "ACTORD_NOTIFY_FD=%d", cs->argv != NULL ? FD_NOTIFY :
	    fds->notify) == -1)
		ok = 0;
	if (ok && fds->arena != -1 && asprintf(&env[k++],
	    "ACTORD_ARENA_FD=%d", cs->argv != NULL ? FD_ARENA : fds->arena)
	    == -1)
		ok = 0;
	if (ok && fds->layout != -1 && asprintf(&env[k++],
	    "ACTORD_LAYOUT_FD=%d", cs->argv != NULL ? FD_LAYOUT : fds->layout)
	    == -1)
		ok = 0;
	if (ok && cs->ready == READY_SD_NOTIFY && n->ad->notify_name[0] &&
	    asprintf(&env[k++], "NOTIFY_SOCKET=%s", n->ad->notify_name) == -1)
		ok = 0;
	/* An actor's READY=1 goes to the same socket (ready.c). */
	if (ok && cs->ready == READY_ACTOR && ready_by_socket(n) &&
	    asprintf(&env[k++], "%s=%s", ACTOR_ENV_NOTIFY_SOCKET,
	    n->ad->notify_name) == -1)
		ok = 0;
	/* The groups spanning nodes, for actor_shard (worker/shard.c). */
	if (ok && ns != NULL && ns->shards_env != NULL &&
	    asprintf(&env[k++], "%s=%s", SHARDS_ENV, ns->shards_env) == -1)
		ok = 0;
	if (ok && n->mbox >= 0 && asprintf(&env[k++], "ACTORD_INDEX=%d",
	    (int)n->mbox) == -1)
		ok = 0;
	if (!ok) {
		env[k > 0 ? k - 1 : 0] = NULL;
		free_env(env);
		return NULL;
	}
	return env;
}

static void
free_env(char **env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/*
 * Say why in actord's memory, shared until execve (NULL: a function child,
 * forked, whose failure its exit status says), and leave.
 */
static void
child_fail(volatile int *failed, int stage)
{
	if (failed != NULL) {
		failed[1] = errno;
		failed[0] = stage;
	}
	_exit(127);
}

/*
 * The signals whose disposition is not the default, ignored or caught (bit
 * sig - 1), by rt_sigaction(2)'s account of each: 0, or -1 if one cannot
 * be read.  (/proc/PID/stat says only signals 1 to 31; /proc/PID/status
 * costs as much as asking for each.)
 */
int
spawn_signals_set(uint64_t *out)
{
	uint64_t caught;

	return signals_read(out, &caught);
}

/* spawn_signals_set, and in *caught those of them a handler catches. */
static int
signals_read(uint64_t *out, uint64_t *caught)
{
	struct {
		void		(*handler)(int);
		unsigned long	 flags;
		void		(*restorer)(void);
		uint64_t	 mask;
	} old;
	uint64_t set = 0, handled = 0;
	int sig;

	for (sig = 1; sig < NSIG && sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		/* The raw call: sigaction(3) refuses glibc's 32 and 33. */
		if (syscall(SYS_rt_sigaction, sig, NULL, &old,
		    sizeof(old.mask)) == -1)
			return -1;
		if (old.handler != SIG_DFL)
			set |= UINT64_C(1) << (sig - 1);
		if (old.handler != SIG_DFL && old.handler != SIG_IGN)
			handled |= UINT64_C(1) << (sig - 1);
	}
	*out = set;
	*caught = handled;
	return 0;
}

/*
 * What a program child resets: the signals actord's process did not leave
 * at the default when it first started one (actord(8) sets them all before
 * its first start, and changes none after).  Read once: a child resets
 * those alone, one rt_sigaction(2) each, made while actord waits for its
 * exec (vfork's way), where resetting all 64 took about 30 us of every
 * start on a VM.  A function child, which runs the embedding program's
 * code without an exec, resets all of them.
 */
static uint64_t
spawn_signals(struct spawner *sp, bool exec)
{
	if (!exec)
		return ~UINT64_C(0);
	if (!sp->sigs_read) {
		if (signals_read(&sp->sigs, &sp->caught) == -1)
			sp->sigs = sp->caught = ~UINT64_C(0);
		sp->sigs_read = true;
	}
	return sp->sigs;
}

/*
 * Default dispositions for the signals in sigs (spawn_signals_set); those
 * of every other signal are the default already.  The mask is emptied
 * last.
 */
static void
child_signals(uint64_t sigs)
{
	/* The kernel's struct sigaction, for rt_sigaction(2). */
	struct {
		void		(*handler)(int);
		unsigned long	 flags;
		void		(*restorer)(void);
		uint64_t	 mask;
	} ksa;
	int sig;

	/*
	 * The raw system call, not sigaction(3): glibc refuses the two
	 * signals it reserves (32 and 33), and whatever started actord (make
	 * does) may have left them ignored, which a worker would inherit.
	 */
	memset(&ksa, 0, sizeof(ksa));
	ksa.handler = SIG_DFL;
	for (sig = 1; sig < NSIG && sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP ||
		    !(sigs & (UINT64_C(1) << (sig - 1))))
			continue;
		(void)syscall(SYS_rt_sigaction, sig, &ksa, NULL,
		    sizeof(ksa.mask));
	}
}

/*
 * Put stdio and the passed descriptors on their fixed numbers.  Every
 * source is first copied above FD_HIGH so that a dup2 onto 0..5 can never
 * clobber a source not yet moved.  Function children keep their
 * descriptors (they run the embedding program's code), except stdio.
 */
static void
child_fds(const struct child_ctx *c, bool exec)
{
	const struct spawn_fds *fds = c->fds;
	volatile int *failed = c->failed;
	int devnull, out = -1, notify = -1, arena = -1, layout = -1;

	if (exec && c->direct) {
		child_fds_direct(c);
		return;
	}
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull != -1)
		devnull = fcntl(devnull, F_DUPFD_CLOEXEC, FD_HIGH);
	if (fds->out != -1)
		out = fcntl(fds->out, F_DUPFD_CLOEXEC, FD_HIGH);
	if (exec) {
		if (fds->notify != -1 &&
		    (notify = fcntl(fds->notify, F_DUPFD_CLOEXEC, FD_HIGH)) == -1)
			child_fail(failed, STAGE_FDS);
		if (fds->arena != -1 &&
		    (arena = fcntl(fds->arena, F_DUPFD_CLOEXEC, FD_HIGH)) == -1)
			child_fail(failed, STAGE_FDS);
		if (fds->layout != -1 && (layout = fcntl(fds->layout,
		    F_DUPFD_CLOEXEC, FD_HIGH)) == -1)
			child_fail(failed, STAGE_FDS);
	}
	if (devnull != -1 && dup2(devnull, 0) == -1)
		child_fail(failed, STAGE_FDS);
	if (out != -1 && (dup2(out, 1) == -1 || dup2(out, 2) == -1))
		child_fail(failed, STAGE_FDS);
	if (!exec) {
		if (fds->notify != -1)
			(void)fcntl(fds->notify, F_SETFD, 0);
		if (fds->arena != -1)
			(void)fcntl(fds->arena, F_SETFD, 0);
		if (fds->layout != -1)
			(void)fcntl(fds->layout, F_SETFD, 0);
		return;
	}
	if (notify != -1 && dup2(notify, FD_NOTIFY) == -1)
		child_fail(failed, STAGE_FDS);
	if (notify == -1)
		(void)close(FD_NOTIFY);
	if (arena != -1 && dup2(arena, FD_ARENA) == -1)
		child_fail(failed, STAGE_FDS);
	if (arena == -1)
		(void)close(FD_ARENA);
	if (layout != -1 && dup2(layout, FD_LAYOUT) == -1)
		child_fail(failed, STAGE_FDS);
	if (layout == -1)
		(void)close(FD_LAYOUT);
	close_from_fd6();
}

/*
 * A cloned child's descriptors, staged by actord on numbers above the
 * fixed ones, /dev/null its own (spawner_ready): each dup2'd in place,
 * since none can be clobbered; no copy of each first and no open of
 * /dev/null, six system calls of every start (issue 13).
 */
static void
child_fds_direct(const struct child_ctx *c)
{
	const struct spawn_fds *fds = c->fds;
	const int src[FD_LAYOUT + 1] = { c->devnull, fds->out, fds->out,
	    fds->notify, fds->arena, fds->layout };
	int fd;

	for (fd = 0; fd <= FD_LAYOUT; fd++) {
		if (src[fd] != -1) {
			if (dup2(src[fd], fd) == -1)
				child_fail(c->failed, STAGE_FDS);
		} else if (fd >= FD_NOTIFY)
			(void)close(fd);
	}
	close_from_fd6();
}

/* closefrom(6): nothing of actord's leaks into the child. */
static void
close_from_fd6(void)
{
	if (close_range(FD_LAYOUT + 1, ~0U, 0) == -1) {
		int fd;
		long max = sysconf(_SC_OPEN_MAX);

		for (fd = FD_LAYOUT + 1; fd < max; fd++)
			(void)close(fd);
	}
}

static void
child_exec(struct node *n, const struct child_ctx *c)
{
	const struct child_spec *cs = n->cs;
	const struct spawn_fds *fds = c->fds;
	const struct creds *cr = c->cr;
	volatile int *failed = c->failed;
	sigset_t empty;
	size_t i;
	bool exec = cs->argv != NULL;

	/*
	 * Its own process group, so that stopping it is killpg and nothing it
	 * forks survives it.  Done first: actord may signal the group as
	 * soon as the spawn returns.  A program child's spawn returns once
	 * it has exec'd or died (vfork's way), so it is in its group by
	 * then; a function child, forked, may not have run yet, and
	 * spawn_child sets its group too (whichever runs first wins, the
	 * other is harmless).
	 */
	(void)setpgid(0, 0);
	/*
	 * Killed with its group if actord dies before its spawn returns (a
	 * program child: actord waits for its exec, so the two never record
	 * at once; a forked one is recorded by actord alone).
	 */
	if (exec)
		warden_add_self(n->ad);
	/* Into its cgroup before it can fork anything that could escape. */
	if (fds->cgroup != -1 && write(fds->cgroup, "0", 1) != 1)
		child_fail(failed, STAGE_CGROUP);
	child_signals(c->sigs);
	child_fds(c, exec);
	/* The descriptor limit actord found, not the one it raised. */
	(void)setrlimit(RLIMIT_NOFILE, &n->ad->nofile);
	for (i = 0; i < cs->nlimits; i++) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = cs->limits[i].value;
		if (setrlimit(cs->limits[i].resource, &rl) == -1)
			child_fail(failed, STAGE_RLIMIT);
	}
	if (cs->umask >= 0)
		umask((mode_t)cs->umask);
	if (cs->cwd != NULL && chdir(cs->cwd) == -1)
		child_fail(failed, STAGE_CHDIR);
	if (cr->set_gid) {
		if (setgroups((size_t)cr->ngroups, cr->groups) == -1)
			child_fail(failed, STAGE_SETGROUPS);
		if (setresgid(cr->gid, cr->gid, cr->gid) == -1)
			child_fail(failed, STAGE_SETGID);
	}
	if (cr->set_uid && setresuid(cr->uid, cr->uid, cr->uid) == -1)
		child_fail(failed, STAGE_SETUID);
	/*
	 * Die with actord.  Armed after the credential change, which clears
	 * it (prctl(2)); and if actord died before it was armed, the signal
	 * never comes: getppid() tells, and we leave at once.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		child_fail(failed, STAGE_PDEATHSIG);
	if (getppid() != c->parent)
		_exit(127);
	sigemptyset(&empty);
	if (!exec) {
		/* A function child: same code, no exec.  Its env is set here. */
		log_forked();
		clearenv();
		for (i = 0; c->env[i] != NULL; i++)
			(void)putenv(c->env[i]);
		(void)sigprocmask(SIG_SETMASK, &empty, NULL);
		_exit(cs->fn(cs->fn_arg));
	}
	(void)sigprocmask(SIG_SETMASK, &empty, NULL);
	execve(cs->argv[0], cs->argv, c->env);
	child_fail(failed, STAGE_EXEC);
}

/*
 * The staging descriptors (/dev/null, the lowest free numbers from 3) and
 * the child's stack, made at the first start: false if they cannot be,
 * and program children are then started with vfork.
 */
static bool
spawner_ready(struct spawner *sp)
{
	void	*p;
	int	 i, fd;

	if (sp->tried)
		return sp->ok;
	sp->tried = true;
	sp->devnull = -1;
	for (i = 0; i < SPAWN_NSTAGE; i++)
		sp->stage[i] = sp->held[i] = -1;
	if (!SPAWN_CLONE)
		return false;
	if ((sp->devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		return false;
	sp->top = sp->devnull + 1;
	sp->direct = sp->devnull > FD_LAYOUT;
	for (i = 0; i < SPAWN_NSTAGE; i++) {
		if ((fd = fcntl(sp->devnull, F_DUPFD_CLOEXEC, 3)) == -1)
			return false;
		sp->stage[i] = fd;
		if (fd + 1 > sp->top)
			sp->top = fd + 1;
		if (fd <= FD_LAYOUT)
			sp->direct = false;
	}
	p = mmap(NULL, SPAWN_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return false;
	/* A child that ran off its stack faults instead of writing ours. */
	(void)mprotect(p, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE);
	sp->stack = p;
	sp->stack_size = SPAWN_STACK;
	return sp->ok = true;
}

void
spawn_close(struct actord *ad)
{
	struct spawner *sp = &ad->spawner;
	int i;

	if (!sp->tried)
		return;
	for (i = 0; i < SPAWN_NSTAGE; i++)
		if (sp->stage[i] != -1)
			(void)close(sp->stage[i]);
	if (sp->devnull != -1)
		(void)close(sp->devnull);
	if (sp->stack != NULL)
		(void)munmap(sp->stack, sp->stack_size);
	memset(sp, 0, sizeof(*sp));
}

/* The cloned child: a table of its own, of the staged fds and below. */
static int
clone_child(void *arg)
{
	const struct clone_arg *ca = arg;

	if (close_range((unsigned)ca->top, ~0U, CLOSE_RANGE_UNSHARE) == -1 &&
	    unshare(CLONE_FILES) == -1)
		child_fail(ca->ctx->failed, STAGE_FDS);
	child_exec(ca->n, ca->ctx);
}

/* The slots whose copy stays between starts: the arena's, every actor's. */
static bool
stage_kept(int i)
{
	return i == 3 || i == 4;
}

/*
 * A program child, sharing actord's descriptor table until its first act
 * (see the top of this file): its descriptors staged on the reserved low
 * numbers, then given back to /dev/null once it has exec'd (CLONE_VFORK:
 * clone returns then), so that nothing of the child's stays open here.
 * The arena's two descriptors, the same for every actor and open as long
 * as actord, stay staged from one start to the next: four dup3s of every
 * start spared.  A child not given them finds them there too, close-on-
 * exec: it closes them before its exec (child_fds).  Its pidfd comes
 * with the clone (CLONE_PIDFD): *pidfd, or -1 where the kernel has none.
 */
static pid_t
spawn_clone(struct node *n, const struct child_ctx *c, int *pidfd)
{
	struct spawner *sp = &n->ad->spawner;
	const struct spawn_fds *fds = c->fds;
	const int src[SPAWN_NSTAGE] = { fds->cgroup, fds->out, fds->notify,
	    fds->arena, fds->layout };
	int dst[SPAWN_NSTAGE], i, saved;
	struct spawn_fds staged;
	struct child_ctx sc = *c;
	struct clone_arg ca;
	pid_t pid = -1;

	for (i = 0; i < SPAWN_NSTAGE; i++) {
		dst[i] = -1;
		if (src[i] == -1)
			continue;
		if (stage_kept(i) && sp->held[i] == src[i]) {
			dst[i] = sp->stage[i];
			continue;
		}
		if (stage_kept(i))
			sp->held[i] = -1;
		if ((dst[i] = dup3(src[i], sp->stage[i], O_CLOEXEC)) == -1)
			goto out;
		if (stage_kept(i))
			sp->held[i] = src[i];
	}
	staged.cgroup = dst[0];
	staged.out = dst[1];
	staged.notify = dst[2];
	staged.arena = dst[3];
	staged.layout = dst[4];
	sc.fds = &staged;
	sc.devnull = sp->devnull;
	sc.direct = sp->direct;
	ca.n = n;
	ca.ctx = &sc;
	ca.top = sp->top;
	pid = clone(clone_child, (char *)sp->stack + sp->stack_size,
	    CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_PIDFD | SIGCHLD, &ca,
	    pidfd);
out:
	saved = errno;
	for (i = 0; i < SPAWN_NSTAGE; i++)
		if (dst[i] != -1 && !stage_kept(i))
			(void)dup3(sp->devnull, sp->stage[i], O_CLOEXEC);
	errno = saved;
	return pid;
}

/*
 * Fork one worker.  Every signal is blocked around fork so that no handler
 * of the embedding program runs in the child before its dispositions are
 * reset (libuv's reasoning).  actord itself has no handlers (signalfd):
 * where none was found at the first start (spawn_signals, read once, as
 * the dispositions it resets), a program child started by clone needs
 * no such block, and two system calls of every start are spared (issue
 * 13); until its exec it runs with actord's mask, signals at their
 * default or ignored, as after it.
 * Returns the pid, or -1 with err set.  A program child has exec'd when
 * this returns, or failed to: failed is then its {stage, errno}
 * (spawn_describe_error), else { -1, 0 }.
 */
pid_t
spawn_child(struct node *n, const struct spawn_fds *fds, int failed[2],
    int *pidfd, char *err, size_t errlen)
{
	struct child_ctx c;
	struct creds cr;
	sigset_t all, old;
	char **env;
	pid_t pid;
	bool cloned, block;
	/* Written by the child, in memory it shares with us (CLONE_VM). */
	volatile int report[2] = { -1, 0 };

	failed[0] = -1;
	failed[1] = 0;
	*pidfd = -1;

	if (resolve_creds(n->cs, &cr, err, errlen) == -1)
		return -1;
	if ((env = build_env(n, fds)) == NULL) {
		snprintf(err, errlen, "environment: %s", strerror(errno));
		free(cr.groups);
		return -1;
	}
	/* actord's pid, read once: this process made it (actord_new). */
	c.parent = n->ad->self;
	c.fds = fds;
	c.cr = &cr;
	c.env = env;
	c.devnull = -1;
	c.direct = false;
	c.failed = n->cs->argv != NULL ? report : NULL;
	c.sigs = spawn_signals(&n->ad->spawner, n->cs->argv != NULL);
	cloned = n->cs->argv != NULL && spawner_ready(&n->ad->spawner);
	block = !cloned || n->ad->spawner.caught != 0;
	sigfillset(&all);
	if (block)
		sigprocmask(SIG_SETMASK, &all, &old);
	/*
	 * A program child only makes system calls before execve and never
	 * returns here: sharing actord's memory (CLONE_VM, vfork's way)
	 * spares copying its page tables (and unmapping them at exec), and
	 * sharing its descriptor table spares copying that (spawn_clone):
	 * both grow with the tree.  A function child runs arbitrary code:
	 * fork.
	 */
	if (cloned)
		pid = spawn_clone(n, &c, pidfd);
	else if (n->cs->argv != NULL)
		pid = vfork();
	else
		pid = fork();
	if (pid == 0)
		child_exec(n, &c);
	if (pid == -1)
		snprintf(err, errlen, "fork: %s", strerror(errno));
	else {
		/*
		 * A program child set its group before it exec'd (child_exec),
		 * and has exec'd now: setpgid on it fails (EACCES), a wasted
		 * system call per start.  Only a forked child may not be in its
		 * group yet.
		 */
		if (n->cs->argv == NULL)
			(void)setpgid(pid, pid);
		failed[0] = report[0];
		failed[1] = report[1];
	}
	if (block)
		sigprocmask(SIG_SETMASK, &old, NULL);
	free_env(env);
	free(cr.groups);
	return pid;
}
