/*
 * tagent.h: what the tests that let forked agents loose on a real actord
 * share (tests/check_chaos.c, tests/check_adv_soak.c): its configuration
 * swapped as an operator's tool does, the end of its log, a process known
 * by pid and start time, a node of its status found or drawn at random,
 * and an agent ended by pid within a bound.
 *
 * Owned by tests/lib/tagent.c.  Tests only: every wait here is bounded.
 */
#ifndef ACTORD_TESTS_TAGENT_H
#define ACTORD_TESTS_TAGENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "supervisor/ctlproto.h"
#include "tests/lib/tsup.h"

/* text as d's configuration: written whole, then renamed into place. */
void	 tagent_conf_install(const struct ts_daemon *d, const char *text);
/* The last 16 KiB of d's log (a static buffer). */
const char *tagent_log_tail(const struct ts_daemon *d);
/* Field n (from 3 on) of /proc/PID/stat and those after it, in buf;
 * NULL if pid is gone. */
const char *tagent_stat_fields(pid_t, int n, char *buf, size_t len);
/* Field 22 (its start time); 0 if pid is gone. */
unsigned long long tagent_proc_start(pid_t);
bool	 tagent_is_worker(const struct ctl_node *);
const struct ctl_node *tagent_find(const struct ctl_response *,
	    const char *path);
/* A random node but the root (a worker with a pid, if asked; any worker
 * with a pid if none was drawn), or NULL. */
const struct ctl_node *tagent_pick(const struct ctl_response *, bool worker,
	    unsigned *rnd);
void	 tagent_nap(unsigned *rnd, int max_ms);
/*
 * The instances of group added by hand (GROUP/N, N >= keep) stopped and
 * removed through the control socket sock, waited for until status shows none
 * (within ms): true once gone.  A reload takes a mailbox for each new
 * worker from the spares free when it starts (actord.conf(5),
 * spare_mailboxes); instances added by hand hold spares that only a
 * finished removal gives back.
 */
bool	 tagent_trim_group(const char *sock, const char *group, unsigned keep,
	    int ms);	/* 0 to max_ms, at random */
/*
 * The processes of a tree seen, each by pid and start time (so that a
 * reused pid is never mistaken for it), in memory the test shares with
 * its forked agents; after the shutdown none may be alive.
 */
#define TAGENT_MAX_SEEN	16384
struct tagent_proc {
	pid_t			 pid;
	unsigned long long	 start;	/* 0: unknown */
};
struct tagent_seen {
	atomic_uint		 n;
	struct tagent_proc	 p[TAGENT_MAX_SEEN];
};
void	 tagent_remember(struct tagent_seen *, pid_t);
/* Still alive: killed now (the test fails after), and true. */
bool	 tagent_outlived(const struct tagent_proc *);
/* How many of those seen are still alive (each killed); *n: seen. */
unsigned tagent_seen_left(struct tagent_seen *, unsigned *n);

/* A forked agent running run(arg), that dies with the test. */
pid_t	 tagent_fork(void (*run)(int), int arg);
/* pid ends (it was told to) within ms, else is killed: true if it ended
 * with status 0. */
bool	 tagent_end(pid_t, int ms);

#endif /* ACTORD_TESTS_TAGENT_H */
