/*
 * ctlproto.h: the control protocol spoken over actord's control socket,
 * shared by actord (control.c) and actorctl.  Documented for users in
 * actorctl(8), section PROTOCOL.
 *
 * Owned by ctlproto.c: framing, the typed fields, the request schema of
 * every command and the records of the answers (nodes, actor statistics,
 * shard groups, dead letters, control counters).  It never does I/O and
 * never trusts a length it has not checked against what it holds.
 *
 * Wire format, all integers big-endian:
 *
 *	frame	= u32 length	bytes that follow this field, >= 4
 *		  u16 version	CTL_VERSION
 *		  u16 code	a command (request) or a status (response)
 *		  field*
 *	field	= u16 type, u32 length, value[length]
 *
 * Records in answers (a node, an actor's statistics...) are fields whose
 * value is itself a sequence of fields.  A request is at most
 * CTL_MAX_REQUEST bytes, an answer at most CTL_MAX_RESPONSE.
 */
#ifndef ACTORD_CTLPROTO_H
#define ACTORD_CTLPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_VERSION		1
#define CTL_HDR_LEN		8		/* length, version, code */
#define CTL_FIELD_HDR		6		/* type, length */
#define CTL_MAX_REQUEST		(64 * 1024)	/* whole frame */
#define CTL_MAX_RESPONSE	(8 * 1024 * 1024)
#define CTL_MAX_DATA		(60 * 1024)	/* send/ask payload */

#define CTL_PATH_MAX		256		/* with the NUL; SPEC_PATH_MAX */
#define CTL_RUNTIME_DIR_MAX	80		/* SPEC_RUNTIME_DIR_MAX */
#define CTL_NAME_MAX		32		/* kind, state, strategy, reason */
#define CTL_EXIT_MAX		256		/* "gave up: /a/b exited 3; more than ..." */
#define CTL_ERROR_MAX		1024		/* error and message texts */
#define CTL_HIST_MAX		32		/* buckets of a histogram */
#define CTL_SHARDS_MAX		256		/* shards of a shard group */

/* Commands (the code of a request). */
enum ctl_cmd {
	CTL_CMD_STATUS = 1,
	CTL_CMD_START,
	CTL_CMD_STOP,
	CTL_CMD_RESTART,
	CTL_CMD_KILL,
	CTL_CMD_ADD,
	CTL_CMD_REMOVE,
	CTL_CMD_RELOAD,
	CTL_CMD_SEND,
	CTL_CMD_ASK,
	CTL_CMD_DEADLETTERS,
	CTL_CMD_STATS,
	CTL_CMD_LOG,
	CTL_CMD_SHUTDOWN,
	CTL_CMD_NODES,			/* the gateway's peer table, as text */
	CTL_CMD_MAX			/* one past the last */
};

/* Statuses (the code of a response). */
enum ctl_status {
	CTL_OK = 0,
	CTL_E_NOENT,		/* no such path */
	CTL_E_PERM,		/* permission denied */
	CTL_E_INVAL,		/* a well-formed request with a bad argument */
	CTL_E_EXISTS,		/* add: "exists, running" / "exists, not running" */
	CTL_E_STATE,		/* refused in the child's state: "running", ... */
	CTL_E_TIMEOUT,		/* ask (or a deferred command) timed out */
	CTL_E_PROTO,		/* malformed request */
	CTL_E_VERSION,		/* unsupported protocol version */
	CTL_E_UNKNOWN,		/* unknown command */
	CTL_E_TOOBIG,		/* request or answer over its cap */
	CTL_E_BUSY,		/* too many clients, out of descriptors */
	CTL_E_UNSUPPORTED,	/* this actord cannot do that (yet) */
	CTL_E_FAILED,		/* any other failure; the text says why */
	CTL_E_DOWN,		/* the target is not running (ask, send) */
	CTL_STATUS_MAX
};

/* Field types. */
enum ctl_ftype {
	/* request fields (also reused in answers) */
	CTL_F_PATH = 1,		/* string, "/" or "/a/b", < CTL_PATH_MAX */
	CTL_F_TAG,		/* u32 */
	CTL_F_DATA,		/* bytes */
	CTL_F_TIMEOUT,		/* u32, ms */
	CTL_F_SIGNAL,		/* u32, 1..64 */
	CTL_F_CURSOR,		/* u64 */
	CTL_F_WAIT,		/* empty: wait for something new (follow) */
	CTL_F_TREE,		/* empty: kill every worker under a supervisor */
	CTL_F_REQ_MAX,
	/* answer fields */
	CTL_F_ERROR = 16,	/* string */
	CTL_F_MESSAGE,		/* string, informational */
	CTL_F_NODE,		/* record */
	CTL_F_ACTOR,		/* record */
	CTL_F_SHARDS,		/* record */
	CTL_F_DEADLETTER,	/* record */
	CTL_F_CONTROL,		/* record: the control socket's counters */
	CTL_F_CODE,		/* i32: libactor's code of a failed ask or send */
	CTL_F_APPCODE,		/* i32: the application's code (ACTOR_EREPLY) */
	CTL_F_TEXT		/* string: an error answer's own text */
};

/* A growing byte buffer with a hard cap; errors are sticky. */
struct ctl_buf {
	uint8_t		*data;
	size_t		 len;
	size_t		 cap;
	size_t		 max;		/* never grows past this */
	int		 err;		/* 0, ENOMEM or E2BIG */
};

/* A decoded request.  data points into the frame it was decoded from. */
struct ctl_request {
	uint16_t	 cmd;
	uint32_t	 present;	/* bit (1 << type) per field present */
	char		 path[CTL_PATH_MAX];
	uint32_t	 tag;
	const uint8_t	*data;
	uint32_t	 datalen;
	uint32_t	 timeout_ms;
	uint32_t	 signo;
	uint64_t	 cursor;
	bool		 wait;
	bool		 tree;
};
#define CTL_HAS(req, f)	(((req)->present & (1u << (f))) != 0)

/* One node of the tree, as status shows it. */
struct ctl_node {
	char		 path[CTL_PATH_MAX];
	char		 kind[CTL_NAME_MAX];	/* "worker", "supervisor" */
	char		 state[CTL_NAME_MAX];	/* starting, running, restarting,
						   stopping, stopped, failed */
	int32_t		 pid;			/* 0: none */
	uint64_t	 uptime_ms;		/* 0 unless running */
	uint32_t	 restarts;		/* since actord started */
	uint32_t	 period_restarts;	/* supervisor: within the period */
	uint64_t	 incarnation;
	char		 last_exit[CTL_EXIT_MAX];	/* "" if it never exited */
	int64_t		 mailbox_depth;		/* -1: no mailbox */
	char		 strategy[CTL_NAME_MAX];	/* "" for a worker */
	uint32_t	 intensity;		/* supervisor */
	uint32_t	 period;		/* supervisor, seconds */
	char		 node[CTL_NAME_MAX + 8];	/* "" here; else the node that
						   runs this shard (state
						   "remote") */
};

/* A histogram: cumulative-friendly raw bucket counts. */
struct ctl_hist {
	uint32_t	 nbuckets;
	uint64_t	 le_us[CTL_HIST_MAX];	/* upper bounds, increasing */
	uint64_t	 count[CTL_HIST_MAX];	/* per bucket, not cumulative */
	uint64_t	 total;			/* all samples, +Inf included */
	uint64_t	 sum_us;
};

/* The four series and the counters of one actor. */
struct ctl_actor_stats {
	char		 path[CTL_PATH_MAX];
	uint64_t	 depth;
	uint64_t	 capacity;
	uint64_t	 wait_p50_us, wait_p99_us;
	uint64_t	 handle_p50_us, handle_p99_us;
	uint64_t	 restarts;
	uint64_t	 sent, received, dropped, deadlettered;
	uint64_t	 asks_failed;	/* at once, down: counted, no dead letter */
	uint64_t	 replaced;	/* coalesce: queued tells replaced */
	struct ctl_hist	 wait;
	struct ctl_hist	 handle;
};

/* How the messages of one shard group spread over its shards. */
struct ctl_shard_group {
	char		 name[CTL_PATH_MAX];
	uint32_t	 nshards;
	uint64_t	 count[CTL_SHARDS_MAX];
};

struct ctl_deadletter {
	uint64_t	 seq;
	uint64_t	 time_ms;		/* since the epoch */
	char		 recipient[CTL_PATH_MAX];
	char		 sender[CTL_PATH_MAX];	/* "" if unknown */
	char		 reason[CTL_NAME_MAX];	/* "mailbox full", ... */
	uint32_t	 tag;
	uint32_t	 size;
};

/* What the control socket counts; see control.h. */
struct ctl_counters {
	uint64_t	 accepted;
	uint64_t	 requests;		/* well-formed requests */
	uint64_t	 refused_perm;		/* SO_PEERCRED said no */
	uint64_t	 refused_busy;		/* too many clients, EMFILE */
	uint64_t	 malformed;		/* bad fields, garbage */
	uint64_t	 truncated;		/* EOF inside a frame */
	uint64_t	 oversized;
	uint64_t	 bad_version;
	uint64_t	 unknown_command;
	uint64_t	 timeouts;		/* silent or slow clients dropped */
	uint64_t	 clients;		/* connected now */
	uint64_t	 evicted;		/* idle ones closed to make room */
};

/* A decoded answer; ctl_response_free releases it. */
struct ctl_response {
	uint16_t	 status;
	char		 error[CTL_ERROR_MAX];
	char		 message[CTL_ERROR_MAX];
	struct ctl_node	*nodes;
	size_t		 nnodes;
	struct ctl_actor_stats *actors;
	size_t		 nactors;
	struct ctl_shard_group *groups;
	size_t		 ngroups;
	struct ctl_deadletter *dls;
	size_t		 ndls;
	bool		 has_control;
	struct ctl_counters control;
	bool		 has_cursor;
	uint64_t	 cursor;
	uint8_t		*data;
	size_t		 datalen;
	bool		 has_data;
	bool		 has_tag;	/* an ask's answer: its tag */
	uint32_t	 tag;
	bool		 has_code;	/* a failed ask or send: ACTOR_E* */
	int32_t		 code;
	bool		 has_appcode;	/* ACTOR_EREPLY: the application's */
	int32_t		 appcode;
	bool		 has_text;	/* an error answer's own text */
	char		 text[CTL_ERROR_MAX];
};

/* ctlproto.c: buffers */
void	 ctl_buf_init(struct ctl_buf *, size_t max);
void	 ctl_buf_free(struct ctl_buf *);
void	 ctl_buf_reset(struct ctl_buf *);
int	 ctl_buf_add(struct ctl_buf *, const void *, size_t);
int	 ctl_buf_printf(struct ctl_buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

/* ctlproto.c: framing and fields */
size_t	 ctl_frame_begin(struct ctl_buf *, uint16_t code);
int	 ctl_frame_end(struct ctl_buf *, size_t start);
int	 ctl_frame_length(const uint8_t *hdr, size_t have, size_t max,
	    uint32_t *total);
void	 ctl_put_u32(struct ctl_buf *, uint16_t type, uint32_t);
void	 ctl_put_u64(struct ctl_buf *, uint16_t type, uint64_t);
void	 ctl_put_bytes(struct ctl_buf *, uint16_t type, const void *, size_t);
void	 ctl_put_str(struct ctl_buf *, uint16_t type, const char *);
size_t	 ctl_nest_begin(struct ctl_buf *, uint16_t type);
void	 ctl_nest_end(struct ctl_buf *, size_t start);

/* ctlproto.c: requests */
int	 ctl_request_encode(struct ctl_buf *, const struct ctl_request *);
int	 ctl_request_decode(const uint8_t *frame, size_t len,
	    struct ctl_request *, char *err, size_t errlen);
const char *ctl_cmd_name(unsigned cmd);		/* NULL if unknown */
int	 ctl_cmd_lookup(const char *name);	/* -1 if unknown */
const char *ctl_status_name(unsigned status);	/* never NULL */
bool	 ctl_path_valid(const char *path);

/* ctlproto.c: answers */
void	 ctl_put_node(struct ctl_buf *, const struct ctl_node *);
void	 ctl_put_actor(struct ctl_buf *, const struct ctl_actor_stats *);
void	 ctl_put_shards(struct ctl_buf *, const struct ctl_shard_group *);
void	 ctl_put_deadletter(struct ctl_buf *, const struct ctl_deadletter *);
void	 ctl_put_counters(struct ctl_buf *, const struct ctl_counters *);
int	 ctl_error_frame(struct ctl_buf *, uint16_t status, const char *text);
int	 ctl_response_decode(const uint8_t *frame, size_t len,
	    struct ctl_response *, char *err, size_t errlen);
void	 ctl_response_free(struct ctl_response *);

/* ctlproto.c: where actord puts its socket by default */
int	 ctl_default_runtime_dir(char *buf, size_t len);
int	 ctl_default_socket(char *buf, size_t len);

/*
 * ctlclient.c: a client's connection (actorctl, libactor's local client):
 * ctl_connect returns a descriptor or -1 with errno; ctl_roundtrip writes
 * a request and reads its answer before deadline (ctl_mono_ms() based,
 * -1: none): 0 with *resp (any status), or -1 with errno (E2BIG,
 * ETIMEDOUT, EPIPE, EPROTO with err set, ...), the connection unusable.
 */
int64_t	 ctl_mono_ms(void);
int	 ctl_connect(const char *sock);
int	 ctl_roundtrip(int fd, const struct ctl_request *,
	    struct ctl_response *, int64_t deadline, char *err, size_t errlen);

#endif /* ACTORD_CTLPROTO_H */
