/*
 * actord.h: the running supervision tree inside actord, and the C API that
 * the control socket and embedding programs use.
 *
 * One header, prototypes grouped under the file that owns them (the
 * OpenBSD daemons' habit).  The spec (spec.h) says what should run; the
 * structures here say what is running: nodes with pids, states, timers and
 * restart history.  Nothing here parses configuration.
 */
#ifndef ACTORD_ACTORD_H
#define ACTORD_ACTORD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include "shm/shm.h"
#include "supervisor/loop.h"
#include "supervisor/spec.h"

/* actord's exit statuses: a contract, documented in actord(8). */
#define ACTORD_EXIT_OK		0	/* clean shutdown */
#define ACTORD_EXIT_CONFIG	1	/* usage or configuration error */
#define ACTORD_EXIT_START	2	/* a child failed to start at boot */
#define ACTORD_EXIT_GAVEUP	3	/* the root supervisor gave up */

struct actord;
struct node;

/* --- policy.c: pure rules, no state, no system calls ---------------------- */

uint32_t backoff_delay(uint32_t min, uint32_t max, unsigned attempt,
	    uint32_t random);
bool	 exit_is_clean(int wstatus, bool we_signalled, const int *success,
	    size_t nsuccess);
void	 exit_describe(int wstatus, char *buf, size_t len);
size_t	 window_prune(uint64_t *times, size_t n, uint64_t now,
	    uint64_t period_ms);
bool	 restart_wanted(enum restart_type, bool clean);
uint32_t rng_next(uint64_t *state);

/* --- the running tree ------------------------------------------------------ */

enum node_kind {
	NODE_WORKER,		/* a process */
	NODE_SUP,		/* a supervisor: a node inside actord */
	NODE_GROUP		/* an instances group: one_for_one, parallel stop */
};

enum node_state {
	NS_STOPPED,
	NS_STARTING,
	NS_RUNNING,
	NS_RESTARTING,		/* down, a restart is scheduled */
	NS_STOPPING,
	NS_FAILED,		/* start failed, or the supervisor gave up */
	NS__COUNT
};

/* Why a node is being started: decides who hears of the result. */
enum start_why {
	WHY_NONE,
	WHY_PLAN,		/* its supervisor's plan: boot or set restart */
	WHY_RESTART,		/* one_for_one restart after its backoff */
	WHY_MANUAL		/* the API (actorctl start/restart/add), reload */
};

/*
 * What a supervisor is doing (plan.c holds the lists, sup.c runs them).
 * Each kind is a stop phase (children of the stop list, in order), then
 * for a boot or a restart a start phase (the start list, in order); a set
 * restart waits its backoff between the two.
 */
enum plan_kind {
	PLAN_NONE,
	PLAN_BOOT,		/* starting every child in order */
	PLAN_RESTART,		/* one_for_all / rest_for_one: stop, wait, start */
	PLAN_STOP,		/* stopping everything, then stopped */
	PLAN_BOOTFAIL,		/* stopping what started, then start failed */
	PLAN_GIVEUP		/* stopping everything, then failed upward */
};

enum plan_phase {
	PH_STOP,
	PH_WAIT,
	PH_START
};

/* A child named by identity: its node and the id it was born with. */
struct plan_ref {
	struct node	*n;
	uint64_t	 id;
};

/*
 * A list of children in order (plan.c).  Taking one out leaves a hole in
 * its place (n == NULL), so that nothing moves and a walk over the list
 * may take out what it walks over; the holes go when they outnumber the
 * children (plan_tidy, at the start of a step).  Each child knows its
 * place (node->plan_at), so that membership, adding and taking out cost
 * the same whatever the length: a set restart of N children is O(N).
 */
struct plan_list {
	struct plan_ref	*v;
	size_t		 n;		/* places used in v, holes included */
	size_t		 cap;
	size_t		 first;		/* no child in v before it */
	size_t		 holes;
	size_t		 scan;		/* a parallel stop: asked before it */
};

struct plan {
	enum plan_kind	 kind;
	enum plan_phase	 phase;
	struct plan_list stop;		/* to stop, first to last */
	struct plan_list start;		/* to start, first to last */
	struct plan_ref	 trigger;	/* whose backoff spaces a restart */
	char		 why[512];	/* the death that decided a restart */
	bool		 report;	/* its parent waits for its start */
	bool		 parallel;	/* a step takes its whole list at once */
	bool		 in_run;	/* sup.c's run loop is on the stack */
	bool		 run_again;
	bool		 held;		/* asked to run while plans are held */
	bool		 in_stop;	/* inside a stop it made (worker.c) */
};

/* What happens to a node once it is stopped (an API call, a reload). */
enum after_stop {
	AFTER_NONE,
	AFTER_START,		/* restart: start it again, by hand */
	AFTER_REMOVE,		/* take it out of the tree */
	AFTER_REPLACE		/* reload: a new node from pending_cs in its place */
};

struct api_waiter;

/* Completion of an API operation: error 0 or an errno, msg a reason. */
typedef void (*done_fn)(void *arg, int error, const char *msg);

struct output;

struct node {
	struct actord	*ad;
	struct node	*parent;
	struct node	*next_all;	/* every node of the tree */
	struct node	*prev_all;	/* (tree.c: taken out in O(1)) */
	struct node	*pid_next;	/* same pid bucket (tree.c, node_set_pid) */
	char		 name[SPEC_NAME_MAX + 1];
	char		 path[SPEC_PATH_MAX];
	enum node_kind	 kind;
	enum node_state	 state;
	const struct child_spec *cs;	/* NULL for the root */
	const struct sup_spec *ss;	/* supervisors and groups */
	struct sup_spec	 group_ss;	/* a group's implicit supervisor */
	bool		 dynamic;	/* added at run time */
	uint64_t	 id;		/* unique in this actord: identity */
	bool		 gone;		/* freed: out of the tree (node_free) */

	/* Worker process. */
	int32_t		 mbox;		/* mailbox index in the arena, or -1 */
	pid_t		 pid;		/* also its process group */
	uint64_t	 incarnation;
	int		 wstatus;	/* from waitpid */
	int		 notify_fd;	/* ACTORD_NOTIFY_FD pipe, read end, or -1 */
	struct ev	 notify_ev;
	bool		 sock_waiting;	/* starting, ready on the socket (ready.c) */
	int		 pidfd;		/* its death, one event (worker.c), or -1 */
	bool		 ringed;	/* ... or one completion (deathwatch.c) */
	struct ev	 pid_ev;
	bool		 we_signalled;	/* actord sent the fatal signal */
	bool		 start_failing;	/* killed for a failed start */
	struct timer	 timer;		/* start timeout, then kill timeout */
	struct output	*out;		/* this incarnation's output */
	struct output	*outs;		/* every output naming it (output.c) */
	char		 start_cause[256];

	/* Seen by the parent supervisor. */
	enum start_why	 why;
	uint64_t	 started_ms;	/* monotonic, when it became running */
	time_t		 started_at;	/* wall clock, for status */
	uint64_t	 restarts;
	unsigned	 backoff_attempt;
	struct timer	 backoff;	/* one_for_one restart pending */
	bool		 manual_stopped;
	char		 last_exit[768];
	char		*tail;		/* recent output, for actorctl log */
	size_t		 tail_len;
	size_t		 tail_cap;
	uint64_t	 tail_total;	/* bytes ever printed: the cursor */

	/* API operations in flight (api.c). */
	struct api_waiter *waiters;	/* completions owed to callers */
	enum after_stop	 after_stop;
	bool		 adding;	/* an add: removed if its start fails */
	const struct child_spec *pending_cs;	/* its spec from its next start */

	/* Supervisor and group. */
	struct node	**kids;
	size_t		 nkids;
	size_t		 kidcap;
	size_t		 at;		/* its place in parent->kids (tree.c) */
	size_t		 plan_at[2];	/* in parent's stop, start list (plan.c) */
	struct plan	 plan;		/* what it is doing, by identity */
	struct timer	 op_timer;	/* a restart's backoff; a group's kill */
	uint64_t	*decisions;	/* restart decision times, ms */
	size_t		 ndecisions;
	size_t		 decisions_cap;	/* intensity + 1 when allocated */
	char		 cause[512];	/* why it gave up or failed */
};

/* Status of one node, as the control socket shows it. */
struct node_status {
	const char	*path;
	const char	*name;
	enum node_kind	 kind;
	enum node_state	 state;
	pid_t		 pid;
	time_t		 started_at;
	uint64_t	 restarts;
	size_t		 restarts_in_period;	/* supervisors and groups */
	const char	*last_exit;
	uint64_t	 incarnation;
	enum strategy	 strategy;		/* supervisors and groups */
	const char	*cause;			/* why a supervisor failed */
	unsigned	 depth;
	uint64_t	 uptime_ms;		/* 0 unless running */
	int32_t		 mbox;			/* mailbox index, or -1 */
	unsigned	 intensity;		/* supervisors and groups */
	unsigned	 period;		/* seconds */
	const char	*remote;		/* another node's shard: that
						   node (no process here) */
};

typedef void (*walk_fn)(const struct node_status *, void *arg);

/* --- tree.c: nodes, paths, building from a spec ---------------------------- */

struct node *tree_build(struct actord *, const struct actord_spec *);
struct node *node_new_child(struct node *parent, const struct child_spec *,
	    const char *name);
int	 node_insert(struct node *parent, struct node *, size_t at);
void	 node_unlink(struct node *);
void	 node_free(struct node *);
void	 tree_release(struct actord *);
struct node *node_find(struct node *root, const char *path);
struct node *node_by_pid(struct actord *, pid_t);
int	 node_set_pid(struct node *, pid_t);	/* every change of n->pid */
void	 tree_pids_free(struct actord *);
size_t	 node_index(const struct node *);
bool	 node_is_down(const struct node *);
const char *node_state_name(enum node_state);
const char *node_kind_name(enum node_kind);
const char *strategy_name(enum strategy);
void	 node_walk(struct node *, walk_fn, void *arg);
const char *tree_placed_on(struct actord *, const char *path);

/* --- worker.c: one process, its states as a table -------------------------- */

enum wev {
	WEV_START,
	WEV_EXEC_OK,
	WEV_EXEC_FAIL,
	WEV_READY,
	WEV_EXIT,
	WEV_STOP,
	WEV_TIMER,
	WEV__COUNT
};

/* tests/sim: simulated processes in place of worker.c's (struct actord). */
typedef void (*sim_proc_fn)(struct node *, enum wev, void *arg);
/*
 * tests/sim: hears a node's failed start (exited false) or its exit
 * before its supervisor does, whatever the node (a supervisor's too), so
 * that the reference model judges every decision (struct actord).
 */
typedef void (*sim_seen_fn)(struct node *, bool exited, bool ok, void *arg);

void	 worker_event(struct node *, enum wev);
void	 worker_drain(struct node *);
void	 worker_unwatch(struct node *);
bool	 worker_watched(const struct node *);
void	 worker_watch_failed(struct actord *, pid_t);

/* --- deathwatch.c: deaths as completions of an io_uring ring ---------------- */

struct deathwatch;
bool	 deathwatch_add(struct actord *, pid_t, int pidfd);
void	 deathwatch_close(struct actord *);
void	 worker_kill_all(struct node *root);

/* --- spawn.c: fork and exec done right ------------------------------------- */

struct spawn_fds {
	int		 cgroup;	/* its cgroup.procs to join, or -1 */
	int		 out;		/* child's stdout and stderr, or -1 */
	int		 notify;	/* write end for ACTORD_NOTIFY_FD, or -1 */
	int		 arena;		/* the shared arena's data, or -1 */
	int		 layout;	/* ... and its read-only layout, or -1 */
};

/*
 * What starting program children keeps from one start to the next
 * (spawn.c): low descriptors reserved to stage a child's own, and the
 * stack the child runs on until execve.  Made at the first start.
 */
#define SPAWN_NSTAGE	5	/* cgroup, out, notify, arena, layout */
struct spawner {
	bool		 tried;		/* made (or failed to be) */
	bool		 ok;		/* ... and usable */
	int		 devnull;	/* what the staging fds hold between starts */
	int		 stage[SPAWN_NSTAGE];
	int		 held[SPAWN_NSTAGE];	/* the fd a slot keeps a copy of
					 * between starts (arena, layout), or -1 */
	int		 top;		/* one above the highest staging fd */
	bool		 direct;	/* every staging fd above the child's
					 * fixed numbers: dup2'd in place */
	void		*stack;		/* guard page included */
	size_t		 stack_size;
	bool		 sigs_read;	/* sigs is set */
	uint64_t	 sigs;		/* not at the default: spawn_signals_set */
	uint64_t	 caught;	/* ... and of them, caught by a handler */
};

pid_t	 spawn_child(struct node *, const struct spawn_fds *, int failed[2],
	    int *pidfd, char *err, size_t errlen);
void	 spawn_close(struct actord *);
void	 spawn_describe_error(const int msg[2], const char *argv0, char *buf,
	    size_t len);
int	 spawn_signals_set(uint64_t *);

/* --- warden.c: what workers fork dies with actord, even by SIGKILL -------- */

struct warden;

int	 warden_start(struct actord *, char *err, size_t errlen);
void	 warden_stop(struct actord *);
bool	 warden_reaped(struct actord *, pid_t, int wstatus);
void	 warden_add(struct actord *, pid_t pgid);
void	 warden_add_self(struct actord *);	/* in a new worker */
void	 warden_del(struct actord *, pid_t pgid);

/* --- cgroup.c: a cgroup v2 group per worker --------------------------------- */

int	 cgroup_setup(struct actord *, char *err, size_t errlen);
void	 cgroup_sweep(const char *base);
void	 cgroup_close(struct actord *);
int	 cgroup_prepare(struct node *, int *fd, char *err, size_t errlen);
void	 cgroup_signal(struct node *, int sig);
void	 cgroup_remove(struct node *);

/* --- ready.c: readiness notification --------------------------------------- */

int	 ready_socket_open(struct actord *);
void	 ready_socket_close(struct actord *);
void	 ready_socket_drain(struct actord *);
int	 ready_prepare(struct node *, int *notify_w);
void	 ready_release(struct node *);
void	 ready_drain(struct node *);
void	 ready_mark(struct node *);	/* hook for the actor (libactor) mode */
bool	 ready_by_socket(const struct node *);

/* --- output.c: child stdout and stderr into the logs ------------------------ */

int	 output_open(struct node *, int *child_end);
void	 output_forked(struct node *);
void	 output_flush_all(struct actord *);
void	 output_node_gone(struct node *);
size_t	 output_read(const struct node *, uint64_t cursor, char *buf,
	    size_t len, uint64_t *next);

/* --- plan.c: a supervisor's plan as lists of children by identity -------- */

bool	 plan_has(const struct plan_list *, const struct node *);
void	 plan_add(struct plan_list *, struct node *);
bool	 plan_del(struct plan_list *, const struct node *);
void	 plan_del_at(struct plan_list *, size_t);
size_t	 plan_next(const struct plan_list *, size_t);
size_t	 plan_count(const struct plan_list *);
void	 plan_tidy(struct plan_list *);
void	 plan_list_clear(struct plan_list *);
void	 plan_sort(struct plan_list *, bool descending);
void	 plan_forget(struct plan *, const struct node *);
void	 plan_clear(struct plan *);
void	 plan_free(struct plan *);
bool	 plan_ref_live(const struct plan_ref *);
const char *plan_kind_name(enum plan_kind);

/*
 * --- edit.c: the one door for changing a supervisor's children -------------
 *
 * Every edit of the tree at run time (an add, a remove, a temporary child
 * that goes, a reload's new, dropped and reordered children) goes through
 * here, and takes the edited child out of any plan in flight first.
 */
int	 edit_insert(struct node *s, struct node *, size_t at);
void	 edit_remove(struct node *);
void	 edit_reorder(struct node *s, struct node **order, size_t n);
void	 edit_replace(struct node *);

/* --- sup.c: strategies, intensity, escalation ------------------------------- */

void	 node_start(struct node *, enum start_why);
void	 node_stop(struct node *);
void	 node_started(struct node *, bool ok, const char *cause);
void	 node_stopped(struct node *);
void	 node_exited(struct node *, bool clean, const char *cause);
size_t	 sup_decisions_in_period(struct node *);
void	 sup_run(struct node *s);
void	 sup_end_loop(struct node *);
void	 sup_resume(struct node *);
void	 sup_hold(struct actord *);
void	 sup_release(struct actord *);
bool	 sup_in_loop(const struct node *);
bool	 sup_will_start(const struct node *);
bool	 sup_stopping(const struct node *s);
bool	 sup_can_start(const struct node *s);
bool	 sup_times_stop(const struct node *);
bool	 sup_adopt(struct node *);

/*
 * --- api.c: what the control socket calls -----------------------------------
 *
 * Each returns 0 when the operation began, or an errno: ENOENT no such
 * path, EINVAL the root or a bad argument, EALREADY start of a running
 * node, EINPROGRESS start of a node in a restart loop, EBUSY remove of a
 * node that is not stopped (or is in a restart loop), EAGAIN its supervisor is not
 * running or is stopping, ESHUTDOWN actord is stopping, ENOMEM.  No call
 * is refused because the supervisor is busy: its plan is data, and a call
 * acts between two of its steps, as OTP's supervisor handles calls
 * between messages.  actord_strerror gives the text actorctl(8) shows.
 * On 0, done (if not NULL) is called exactly once, maybe before the
 * function returns: error 0, or EIO with the start failure as msg, or
 * ECANCELED with the reason.  restart completes when the new incarnation
 * is ready; stop when the process group is gone.  Manual operations never
 * count toward restart intensity; a node stopped by hand stays stopped
 * until started by hand (or restarted with a one_for_all / rest_for_one
 * set); a temporary node stopped by hand is removed.
 */

struct node *actord_find(struct actord *, const char *path);
int	 actord_start_node(struct actord *, const char *path, done_fn, void *);
int	 actord_stop_node(struct actord *, const char *path, done_fn, void *);
int	 actord_restart_node(struct actord *, const char *path, done_fn, void *);
int	 actord_kill_node(struct actord *, const char *path, int sig,
	    unsigned *sent);
int	 actord_add_instance(struct actord *, const char *group, done_fn,
	    void *, char *newpath, size_t);
int	 actord_remove_node(struct actord *, const char *path);
const char *actord_strerror(int, const struct node *, char *, size_t);
void	 actord_forget_done(struct actord *, done_fn);
void	 api_wait(struct node *, bool up, done_fn, void *);
void	 api_settle(struct node *, bool up, int error, const char *msg);
void	 api_cancel(struct node *, const char *why);
void	 actord_walk(struct actord *, walk_fn, void *arg);
int	 actord_reload(struct actord *, struct actord_spec *, char *err,
	    size_t errlen);
int	 actord_reload_file(struct actord *, const char *path, char *err,
	    size_t errlen);

/* --- mailboxes.c: actord's side of the shared-memory arena ---------------- */

struct shm_arena;
struct reap_retry {
	pid_t		 pid;
	unsigned	 tries;
	uint64_t	 due;		/* ms, monotonic: the next try */
};

int	 mailboxes_setup(struct actord *, char *err, size_t errlen);
void	 mailboxes_close(struct actord *);
void	 mailboxes_prespawn(struct node *);
void	 mailboxes_state(struct node *, int state);
void	 mailboxes_reaped(struct actord *, pid_t, int wstatus, struct node *);
int	 mailboxes_assign(struct node *);
void	 mailboxes_release(struct node *);
void	 mailboxes_gone(struct node *, uint32_t why);
int	 mailboxes_reload_check(struct actord *, const struct actord_spec *,
	    char *err, size_t errlen);

/*
 * --- asks.c: actord's own actor, its asks in flight ---------------------------
 *
 * One mailbox of the arena (ASKS_SELF_PATH, never a node of the tree: no
 * configured name can hold '@') belongs to actord itself.  actord opens it
 * as a libactor actor, puts its doorbell in the loop, and sends asks from
 * it; each completes once through its ask_done_fn: error 0 with the answer
 * (valid only during the call), or the ACTOR_E* code it failed with
 * (ACTOR_ETIMEDOUT at its deadline, kept by the timer heap).
 */
#define ASKS_SELF_PATH		"/@actord"

struct actor;
struct actor_msg;
struct pending_ask;
typedef void (*ask_done_fn)(void *arg, int error, const struct actor_msg *);

int	 asks_open(struct actord *, uint32_t mbox, char *err, size_t errlen);
void	 asks_close(struct actord *);
int	 asks_send(struct actord *, uint32_t mbox, uint32_t tag,
	    const void *data, size_t len, uint32_t timeout_ms, ask_done_fn,
	    void *arg, struct pending_ask **);
int	 asks_send_remote(struct actord *, const char *path, uint32_t tag,
	    const void *data, size_t len, uint32_t timeout_ms, ask_done_fn,
	    void *arg, struct pending_ask **);
void	 asks_forget(struct actord *, struct pending_ask *);
void	 asks_rearm(struct actord *);

/* --- backend.c: the control socket and metrics over the running tree ----- */

struct tree_ctl;

struct tree_ctl *backend_open(struct actord *, const char *config, char *err,
	    size_t errlen);
const char *backend_socket_path(const struct tree_ctl *);
void	 backend_drain(struct tree_ctl *, int ms);
void	 backend_close(struct tree_ctl *);
int	 backend_reload(struct tree_ctl *, char *err, size_t errlen);

/* --- actord.c: the daemon state, signals, reaping, shutdown ---------------- */

struct actord {
	struct loop	 loop;
	int		 sigfd;
	struct ev	 sig_ev;
	sigset_t	 oldmask;
	struct actord_spec *spec;	/* owned: freed with the daemon */
	struct actord_spec **retired;	/* older specs nodes may still use */
	size_t		 nretired;
	struct node	*root;
	struct node	*all;		/* every node, linked by next_all */
	struct node	*graveyard;	/* freed nodes, released after a loop turn */
	struct node	**pid_buckets;	/* the pid index (tree.c) */
	size_t		 pid_nbuckets;	/* a power of two, or 0 */
	size_t		 npids;		/* workers in it */
	pid_t		 self;
	int		 notify_sock;	/* NOTIFY_SOCKET, ACTORD_NOTIFY_SOCKET */
	size_t		 nsock_waiting;	/* nodes with sock_waiting (ready.c) */
	struct ev	 notify_ev;
	char		 notify_name[108];
	int		 arena_fd;	/* -1 until the arena exists */
	int		 layout_fd;	/* its read-only half, -1 as well */
	struct rlimit	 nofile;	/* as actord found it: children get it */
	struct spawner	 spawner;	/* spawn.c */
	struct shm_arena *arena;	/* created before the first fork */
	struct shm_clock_mark clock_mark;	/* the arena clock's first reading */
	struct timer	 reap_timer;	/* shm_reap retries */
	struct timer	 sweep_timer;	/* the full reap after SIGCHLDs (actord.c) */
	unsigned	 sweep_walks_max;	/* most waitid(P_ALL) in a sweep */
	uint64_t	 sweep_us;	/* what a walk of every child cost */
	size_t		 nwatched;	/* workers with a pidfd (worker.c) */
	bool		 no_pidfds;	/* tests: watch no death by pidfd */
	struct deathwatch *dw;		/* the ring, or NULL (deathwatch.c) */
	bool		 dw_tried;	/* ... made, or failed to be */
	struct reap_retry *reap_pending;
	size_t		 nreap_pending;
	size_t		 reap_cap;	/* > nreap_pending: room kept ahead */
	struct actor_owed *owed;	/* Terminated waiting for room */
	struct timer	 owed_timer;	/* offers them again */
	int		 owed_ms;	/* after this long; doubles while stuck */
	int		 owed_n;	/* how many were owed at the last offer */
	uint64_t	 owed_over;	/* over the cap, as last logged */
	struct actor	*self_actor;	/* actord's own actor (asks.c) */
	int32_t		 self_mbox;	/* its mailbox, or -1 */
	int		 bell_fd;	/* its doorbell, or -1 */
	struct ev	 bell_ev;
	struct ev	 log_ev;	/* stderr, while log lines wait for it */
	char		*cgroup;	/* workers' cgroup base, or NULL (cgroup.c) */
	struct warden	*warden;	/* kills what is left if actord dies */
	struct timer	 bell_timer;	/* doorbell not armable: look again */
	struct pending_ask *asks;	/* asks in flight */
	int32_t		*spares;	/* free spare mailboxes (mailboxes.c) */
	size_t		 nspares;
	size_t		 spec_spares;	/* room in spares: every node slot */
	struct output	*outputs;	/* open child output pipes */
	uint64_t	 rng;
	uint64_t	 next_id;	/* the id of the next node (tree.c) */
	bool		 shutting_down;
	bool		 plans_held;	/* a reload is being applied (sup_hold) */
	bool		 kill_all;	/* shutdown_timeout expired */
	struct timer	 shutdown_timer;
	bool		 booted;
	bool		 done;
	int		 status;	/* ACTORD_EXIT_* once done */
	char		 message[768];	/* why it is done */
	void		(*on_hup)(struct actord *, void *);
	void		*hup_arg;
	void		(*free_spec)(struct actord_spec *);	/* NULL: not owned */
	void		(*on_event)(struct actord *, void *);	/* after each turn */
	void		*event_arg;
	void		(*on_output)(struct actord *, struct node *, void *);
	void		*output_arg;	/* on_output: a node printed a line */
	sim_proc_fn	 sim_proc;	/* tests/sim: takes every worker event */
	sim_seen_fn	 sim_seen;	/* tests/sim: the model hears each result */
	void		*sim_arg;
};

struct actord *actord_new(struct actord_spec *, char *err, size_t errlen);
void	 actord_free(struct actord *);
int	 actord_boot(struct actord *);
int	 actord_run(struct actord *);
int	 actord_run_once(struct actord *, int timeout_ms);
void	 actord_shutdown(struct actord *);
void	 actord_reap(struct actord *);
void	 actord_reap_pid(struct actord *, pid_t);
void	 actord_root_started(struct actord *, bool ok, const char *cause);
void	 actord_root_stopped(struct actord *);
void	 actord_root_exited(struct actord *, const char *cause);

#endif /* ACTORD_ACTORD_H */
