/*
 * control.h: actord's control socket, and the contract between it and
 * whatever answers the commands (the backend: the supervision tree in
 * actord, a fake tree in the tests).
 *
 * Owned by control.c.  The control socket plugs into any single-threaded
 * epoll loop without knowing it: control_fd() is the epoll descriptor of a
 * loop of its own (loop.h: listener, clients, a timer per client deadline)
 * that the outer loop adds to its epoll for EPOLLIN, and calls
 * control_dispatch() whenever it is readable.  control_dispatch() never
 * blocks and never sleeps.
 *
 * The backend answers through a struct ctl_reply: it adds records
 * (ctl_reply_node...) or sets an error (ctl_reply_error), and either
 * returns CTL_REPLY_NOW, or returns CTL_REPLY_LATER, keeps the reply and
 * calls ctl_reply_finish() once, later (restart answers when the new
 * incarnation runs; -f follows answer when there is something new).  If
 * the client goes away first, the backend's cancel() is called and the
 * reply must be forgotten.  The arguments a handler receives (path, data)
 * stay valid until the reply is finished or cancelled.
 */
#ifndef ACTORD_CONTROL_H
#define ACTORD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/ctlproto.h"

#define CONTROL_SOCKET_NAME	"control.sock"
#define CONTROL_MAX_CLIENTS	64
#define CONTROL_MAX_PER_UID	16	/* for a uid other than root and ours */
#define CONTROL_TIMEOUT		10000	/* ms for a whole request or answer */

#define CTL_REPLY_NOW		0	/* the reply is complete: send it */
#define CTL_REPLY_LATER		1	/* the backend calls ctl_reply_finish */

struct control;
struct ctl_reply;

/*
 * One function per command.  path is NULL where the command allows none
 * (status and stats of the whole tree).  A NULL function answers
 * CTL_E_UNSUPPORTED ("not supported by this actord").  Results follow
 * OTP's supervisor API; the backend chooses status and text, e.g.
 * CTL_E_STATE "running" for start of a running child, CTL_E_EXISTS
 * "exists, not running" for add, CTL_E_NOENT for an unknown path.  An
 * error text is the reason alone ("running", "no such path", the exec
 * error of a failed start): actorctl prefixes the command and the path.
 * A success may carry a message (ctl_reply_message), e.g. what reload did.
 */
struct ctl_backend {
	int	(*status)(void *ctx, const char *path, struct ctl_reply *);
	int	(*start)(void *ctx, const char *path, struct ctl_reply *);
	int	(*stop)(void *ctx, const char *path, struct ctl_reply *);
	int	(*restart)(void *ctx, const char *path, struct ctl_reply *);
	int	(*kill)(void *ctx, const char *path, int signo, bool tree,
		    struct ctl_reply *);
	int	(*add)(void *ctx, const char *path, struct ctl_reply *);
	int	(*remove)(void *ctx, const char *path, struct ctl_reply *);
	int	(*reload)(void *ctx, struct ctl_reply *);
	int	(*send)(void *ctx, const char *path, uint32_t tag,
		    const void *data, size_t len, struct ctl_reply *);
	int	(*ask)(void *ctx, const char *path, uint32_t tag,
		    const void *data, size_t len, uint32_t timeout_ms,
		    struct ctl_reply *);
	/*
	 * Entries after cursor (UINT64_MAX: the recent ones), and the
	 * cursor of the last one (ctl_reply_cursor); wait: defer the answer
	 * until there is one.  deadletters -f and log -f loop on these.
	 */
	int	(*deadletters)(void *ctx, uint64_t cursor, bool wait,
		    struct ctl_reply *);
	int	(*stats)(void *ctx, const char *path, struct ctl_reply *);
	/* Output from byte offset cursor (UINT64_MAX: a recent tail),
	 * and the offset after it (ctl_reply_cursor); wait as above. */
	int	(*log)(void *ctx, const char *path, uint64_t cursor, bool wait,
		    struct ctl_reply *);
	int	(*shutdown)(void *ctx, struct ctl_reply *);
	/* A node's peers: the gateway's status text (gateway/status.c). */
	int	(*nodes)(void *ctx, struct ctl_reply *);
	/* A deferred reply's client went away: forget the reply. */
	void	(*cancel)(void *ctx, struct ctl_reply *);
};

struct control_config {
	const char	*runtime_dir;	/* created 0700 (0710 with a group) */
	const char	*socket_name;	/* NULL: CONTROL_SOCKET_NAME */
	const char	*group;		/* NULL: socket 0600; else 0660 */
	unsigned	 max_clients;	/* 0: CONTROL_MAX_CLIENTS */
	unsigned	 max_per_uid;	/* 0: CONTROL_MAX_PER_UID */
	unsigned	 timeout_ms;	/* 0: CONTROL_TIMEOUT */
};

/* A reload's new socket, prepared before the tree changes (control.c). */
struct control_move {
	char		 path[108];	/* sun_path */
	char		 dir[4096];
	int		 fd;		/* a new listening socket, or -1 */
	bool		 has_group;
	gid_t		 gid;
};

/* control.c: the server */
struct control *control_open(const struct control_config *,
	    const struct ctl_backend *, void *ctx, char *err, size_t errlen);
int	 control_fd(const struct control *);
void	 control_dispatch(struct control *);
const struct ctl_counters *control_counters(const struct control *);
const char *control_socket_path(const struct control *);
void	 control_close(struct control *);	/* cancels, closes, unlinks */
int	 control_move_prepare(struct control *, const struct control_config *,
	    struct control_move *, char *err, size_t errlen);
void	 control_move_commit(struct control *, struct control_move *);
void	 control_move_abort(struct control_move *);

/* control.c: what a backend calls on a reply */
void	 ctl_reply_error(struct ctl_reply *, int status, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	 ctl_reply_message(struct ctl_reply *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	 ctl_reply_node(struct ctl_reply *, const struct ctl_node *);
void	 ctl_reply_actor(struct ctl_reply *, const struct ctl_actor_stats *);
void	 ctl_reply_shards(struct ctl_reply *, const struct ctl_shard_group *);
void	 ctl_reply_deadletter(struct ctl_reply *, const struct ctl_deadletter *);
void	 ctl_reply_data(struct ctl_reply *, const void *, size_t);
void	 ctl_reply_cursor(struct ctl_reply *, uint64_t);
void	 ctl_reply_tag(struct ctl_reply *, uint32_t);
void	 ctl_reply_code(struct ctl_reply *, int32_t code,
	    const int32_t *appcode, const char *text);
uint16_t ctl_reply_command(const struct ctl_reply *);
void	 ctl_reply_finish(struct ctl_reply *);	/* deferred replies only */

/* control.c: replies outside a socket (the metrics listener uses these) */
typedef void (*ctl_reply_done_fn)(struct ctl_reply *, void *arg);
struct ctl_reply *ctl_reply_new(uint16_t cmd, ctl_reply_done_fn, void *arg);
const struct ctl_buf *ctl_reply_frame(const struct ctl_reply *);
void	 ctl_reply_counters(struct ctl_reply *, const struct ctl_counters *);
void	 ctl_reply_free(struct ctl_reply *);
int	 ctl_backend_call(const struct ctl_backend *, void *ctx,
	    const struct ctl_request *, struct ctl_reply *);

#endif /* ACTORD_CONTROL_H */
