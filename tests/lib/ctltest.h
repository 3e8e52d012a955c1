/*
 * ctltest.h: helpers for the control socket and actorctl tests: start the
 * fake-backend server (tests/progs/ctl_fake_server) in a fresh runtime
 * directory, run actorctl and collect its output and exit status, speak
 * raw frames to the socket.
 *
 * Owned by ctltest.c.  Every process it starts dies with the test that
 * started it (PR_SET_PDEATHSIG) and is reaped by pid.
 */
#ifndef ACTORD_CTLTEST_H
#define ACTORD_CTLTEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <termios.h>

#include "supervisor/ctlproto.h"

struct json;

#define CTLTEST_NOBODY	65534	/* the uid ctltest_as_nobody runs as */

struct ctltest_server {
	pid_t	 pid;
	char	 dir[64];		/* runtime directory */
	char	 sock[128];		/* control socket */
	char	 log[128];		/* the server's stderr */
	int	 port;			/* metrics port, 0 if none */
};

struct ctltest_out {
	int	 status;		/* exit status, or 128 + signal */
	char	*out;			/* standard output, NUL-terminated */
	size_t	 outlen;
	char	*err;			/* standard error */
};

/* actorctl top on a pseudo-terminal, and what it printed. */
struct ctltest_top {
	pid_t		 pid;
	int		 master;
	int		 slave;
	struct termios	 before;	/* the terminal before top ran */
	char		*buf;		/* its output so far */
	size_t		 len;
};

/* ctltest.c */
const char *ctltest_build(void);	/* $ACTORD_BUILD or "build" */
void	 ctltest_start(struct ctltest_server *, const char *const *extra);
void	 ctltest_start_in(struct ctltest_server *, const char *dir,
	    const char *const *extra);
void	 ctltest_stop(struct ctltest_server *);
int	 ctltest_connect(const char *sock);	/* -1 on failure */
int	 ctltest_connect_as_nobody(const char *sock, gid_t);
void	 ctltest_actorctl(const struct ctltest_server *, const char *input,
	    struct ctltest_out *, ...);	/* args, NULL-terminated */
void	 ctltest_out_free(struct ctltest_out *);
void	 ctltest_expect(const struct ctltest_out *, int status,
	    const char *in_err);	/* in_err: NULL, or in stderr */
struct json *ctltest_json(const struct ctltest_out *);	/* stdout parsed */
struct json *ctltest_status(const struct ctltest_server *);	/* --json */
double	 ctltest_node_num(const struct ctltest_server *, const char *path,
	    const char *key);		/* a number of status; -1: none */
pid_t	 ctltest_wait_new_pid(const struct ctltest_server *, const char *path,
	    pid_t old, int ms);		/* running, pid != old; 0: timed out */
int	 ctltest_as_nobody(const char *sock, gid_t, const char *refusal,
	    pid_t *);			/* 0 refused, 1 answered, 2 EACCES */
int	 ctltest_exchange(int fd, const void *req, size_t len,
	    struct ctl_response *);	/* 0, or -1: closed without answer */
int	 ctltest_request(const char *sock, const struct ctl_request *,
	    struct ctl_response *);
int	 ctltest_counters(const char *sock, struct ctl_counters *);
void	 ctltest_top_start(struct ctltest_top *, const char *sock);
void	 ctltest_top_until(struct ctltest_top *, const char *what, int times,
	    int ms);			/* fails the test on timeout */
int	 ctltest_top_end(struct ctltest_top *, int ms);	/* exit status */
/* Any actorctl command on a terminal cols wide (the same struct). */
void	 ctltest_pty_start(struct ctltest_top *, const char *sock,
	    unsigned short cols, const char *const *args);
int	 ctltest_pty_end(struct ctltest_top *, int ms);	/* exit status */
size_t	 ctltest_widest_line(const char *, size_t);	/* in columns */

#endif /* ACTORD_CTLTEST_H */
