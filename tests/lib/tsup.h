/*
 * tsup.h: helpers for the supervisor tests: build specs in C, run an
 * actord in the test process with a deadline, wait for node states, and a
 * set of function children that record what happens to them in a file.
 *
 * Owned by tests/lib/tsup.c.  Tests only: every wait here is bounded.
 */
#ifndef ACTORD_TESTS_TSUP_H
#define ACTORD_TESTS_TSUP_H

#include <stdbool.h>
#include <sys/types.h>

#include "supervisor/actord.h"
#include "supervisor/config.h"

/* Specs. */
struct actord_spec *ts_spec(void);
void	 ts_small(struct sup_spec *);
struct child_spec *ts_add(struct sup_spec *, const char *name);
struct child_spec *ts_add_fn(struct sup_spec *, const char *name, child_fn,
	    void *arg);
struct child_spec *ts_add_exec(struct sup_spec *, const char *name,
	    const char *prog, ...);
struct sup_spec *ts_add_sup(struct sup_spec *, const char *name,
	    enum strategy);

/* Running. */
struct actord *ts_actord(struct actord_spec *);
typedef bool (*ts_pred)(struct actord *, void *);
bool	 ts_run_until(struct actord *, ts_pred, void *, int ms);
bool	 ts_run_sliced(struct actord *, ts_pred, void *, int ms);
bool	 ts_wait_state(struct actord *, const char *path, enum node_state,
	    int ms);
bool	 ts_wait_new_pid(struct actord *, const char *path, pid_t old, int ms);
bool	 ts_wait_done(struct actord *, int ms);
void	 ts_run_for(struct actord *, int ms);
pid_t	 ts_pid(struct actord *, const char *path);
enum node_state ts_state(struct actord *, const char *path);
const char *ts_progs(const char *name);	/* $ACTORD_BUILD/tests/progs/NAME */
const char *ts_build(const char *name);	/* $ACTORD_BUILD/NAME */
bool	 ts_alive(pid_t);

/* The record file children append "start /path" and "stop /path" to. */
void	 ts_record_open(void);
void	 ts_record_close(void);
char	*ts_record_read(void);		/* static buffer */
int	 ts_record_count(const char *line);
void	 ts_record(const char *what);	/* async-signal-safe */

/* Function children (ts_add_fn makes them ready = fd). */
int	 ts_fn_run(void *);		/* records start, stop on SIGTERM */
int	 ts_fn_exit(void *);		/* records start, returns (intptr_t)arg */
int	 ts_fn_ignterm(void *);		/* ignores SIGTERM */
int	 ts_fn_grandchild(void *);	/* forks a child, records "gc PID" */
int	 ts_fn_fdready(void *);		/* ts_ready after 20 ms */
int	 ts_fn_crash_later(void *);	/* runs (intptr_t)arg ms, exits 1 */
int	 ts_fn_slowstop(void *);	/* takes 100 ms to stop */
int	 ts_fn_mute(void *);		/* never says it is ready */
void	 ts_ready(void);		/* as actord asked (ready = fd, actor) */
int	 ts_sd_send(const char *name, const char *msg);	/* a datagram */

/* The real actord binary, run with a configuration in a temp dir. */
struct ts_daemon {
	pid_t	 pid;
	char	 dir[64];		/* also TW_DIR for tworker */
	char	 conf[128];
	char	 log[128];
	int	 notify;		/* our NOTIFY_SOCKET, read end */
	char	 notify_name[108];
};

void	 ts_daemon_init(struct ts_daemon *);
/*
 * A copy of $ACTORD_BUILD/tests/progs/NAME in the daemon's directory,
 * that any user can run: for a child that runs as another user (nobody),
 * since the checkout may be where that user cannot go (a mode-700 /root;
 * tcheck_copy_public).
 */
const char *ts_daemon_prog_public(struct ts_daemon *, const char *name);
void	 ts_daemon_conf(struct ts_daemon *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	 ts_daemon_start(struct ts_daemon *, const char *opts);
bool	 ts_daemon_ready(struct ts_daemon *, int ms);
/* Start, wait for READY=1 (failing the test with the log if it never
 * comes), and give the control socket's path in sock. */
void	 ts_daemon_up(struct ts_daemon *, int ms, char *sock, size_t socklen);
int	 ts_daemon_wait(struct ts_daemon *, int ms);
pid_t	 ts_daemon_child(struct ts_daemon *, const char *name, int ms);
char	*ts_daemon_log(struct ts_daemon *);
bool	 ts_daemon_log_has(struct ts_daemon *, const char *, int ms);
void	 ts_daemon_idle(struct ts_daemon *, int ms);	/* asserts it */
void	 ts_daemon_cleanup(struct ts_daemon *);
void	 ts_sleep_ms(int ms);

#endif
