/*
 * actorctl.h: the parts of actorctl, grouped by the file that owns them.
 * actorctl_main.c is only the thin main: global options, then the command
 * table (actorctl_cmds.c) does the rest.
 *
 * Exit statuses are a contract, documented in actorctl(8), EXIT STATUS.
 */
#ifndef ACTORD_ACTORCTL_H
#define ACTORD_ACTORCTL_H

#include <stdbool.h>
#include <stdio.h>

#include "supervisor/ctlproto.h"

#define ACTORCTL_EXIT_OK		0
#define ACTORCTL_EXIT_FAILED		1	/* actord refused or failed */
#define ACTORCTL_EXIT_USAGE		2
#define ACTORCTL_EXIT_NOENT		3	/* no such path */
#define ACTORCTL_EXIT_PERM		4	/* permission denied */
#define ACTORCTL_EXIT_NOTRUNNING	5	/* cannot reach actord */
#define ACTORCTL_EXIT_TIMEOUT		6	/* no answer in time */
#define ACTORCTL_EXIT_PROTO		7	/* protocol mismatch */

#define ACTORCTL_TIMEOUT		60000	/* ms for an answer */

/* The one state of an actorctl process. */
struct actorctl {
	const char	*socket;	/* -S, or the default */
	bool		 json;		/* --json */
	int		 fd;		/* connection, -1 until first call */
	const char	*cmd;		/* command name, for messages */
	char		 error[CTL_ERROR_MAX];	/* the last failure, as told */
	int		 error_status;	/* its exit status, 0 if none */
};

/* How a table is fitted to its output (status, top). */
struct actorctl_fit {
	bool		 tty;		/* stdout is a terminal */
	int		 cols;		/* its width; 0: do not cut */
};

/* actorctl_client.c: talking to actord */
int	 actorctl_call(struct actorctl *, const struct ctl_request *,
	    struct ctl_response *, int timeout_ms);
void	 actorctl_disconnect(struct actorctl *);
int	 actorctl_exit_status(unsigned ctl_status);

/* actorctl_cmds.c: the command table and the outputs */
int	 actorctl_run(struct actorctl *, int argc, char **argv);
void	 actorctl_usage(FILE *);
int	 actorctl_parse_opts(struct actorctl *, int, char **, const char *,
	    const char *, char *, char **);
void	 actorctl_print_status(const struct ctl_response *, bool json,
	    bool full);
void	 actorctl_fit(struct actorctl_fit *, bool full);
int	 actorctl_fit_line(char *, size_t, int cols);
void	 actorctl_status_counts(const struct ctl_response *, unsigned c[5]);
int	 actorctl_hot_shard(const struct ctl_shard_group *);
int	 actorctl_path_depth(const char *);
void	 actorctl_fmt_us(char *, size_t, uint64_t);
void	 actorctl_fmt_uptime(char *, size_t, uint64_t ms);

/* actorctl_keygen.c: a CurveZMQ key pair into two files */
int	 actorctl_keygen(struct actorctl *, int argc, char **argv);

/* actorctl_nodes.c: a node's peers */
int	 actorctl_nodes(struct actorctl *, int argc, char **argv);

/* actorctl_top.c: the live view */
int	 actorctl_top(struct actorctl *, int argc, char **argv);
void	 actorctl_top_usage(FILE *);
double	 actorctl_restart_rate(const uint64_t *t_ms, const uint32_t *restarts,
	    size_t n, uint64_t window_ms);

#endif /* ACTORD_ACTORCTL_H */
