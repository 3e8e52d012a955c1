/*
 * spec.h: the supervision tree as configured: what to run, never what is
 * running.  A spec is built by config.c from actord.conf, or in C by a
 * program that embeds the supervisor (tests do), and is immutable once
 * built, so that reload can diff the old tree against the new one.
 *
 * Owned by spec.c (constructors, copy, free, equality) and config.c
 * (parsing and validation).  Read by the tree (tree.c and friends); nothing
 * here knows about pids, timers or the arena.
 */
#ifndef ACTORD_SPEC_H
#define ACTORD_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

enum restart_type {
	RESTART_PERMANENT,		/* always restarted */
	RESTART_TRANSIENT,		/* restarted only after an abnormal exit */
	RESTART_TEMPORARY		/* never restarted; its node is removed */
};

enum strategy {
	STRATEGY_ONE_FOR_ONE,
	STRATEGY_ONE_FOR_ALL,
	STRATEGY_REST_FOR_ONE
};

enum ready_mode {
	READY_EXEC,			/* ready once execve succeeded */
	READY_FD,			/* a newline on ACTORD_NOTIFY_FD (s6) */
	READY_SD_NOTIFY,		/* READY=1 on NOTIFY_SOCKET (systemd) */
	READY_ACTOR			/* the libactor worker says so */
};

/*
 * How a group's instances start (instances > 0), and a supervisor's
 * children: a group's are parallel unless it says ordered, a
 * supervisor's ordered (OTP) unless it says parallel.
 */
enum start_order {
	START_PARALLEL,			/* all at once: independent siblings */
	START_ORDERED			/* one at a time, each after the last is ready */
};

enum mailbox_overflow {
	OVERFLOW_BLOCK,			/* the sender waits, with a timeout */
	OVERFLOW_REJECT,		/* error at once */
	OVERFLOW_DROP_OLDEST,		/* the oldest queued message goes */
	OVERFLOW_DROP_NEWEST,		/* the message being sent goes */
	OVERFLOW_COALESCE		/* a keyed message replaces its key's */
};

enum on_down {
	ON_DOWN_KEEP,			/* queued messages wait for the next incarnation */
	ON_DOWN_FAIL			/* queued asks fail, queued tells are dead letters */
};

enum while_down {
	WHILE_DOWN_QUEUE,		/* tells are queued while the actor is down */
	WHILE_DOWN_REJECT		/* tells are dead letters while it is down */
};

/* shutdown: milliseconds >= 0, or one of these. */
#define SHUTDOWN_BRUTAL_KILL	(-1)	/* SIGKILL at once, no SIGTERM */
#define SHUTDOWN_INFINITY	(-2)	/* SIGTERM, then wait for ever */

#define SPEC_NAME_MAX		64	/* a node name, without the NUL */
#define SPEC_PATH_MAX		256	/* a full path (/web/frontend/3) and its NUL */
#define SPEC_RUNTIME_DIR_MAX	80	/* leaves room in sun_path for a socket name */
#define SPEC_INSTANCES_MAX	1024	/* the largest "instances" */
#define SPEC_NODE_NAME_MAX	32	/* a node's name, without the NUL */
#define SPEC_PEERS_MAX		256	/* peers, and clients, of a node */

struct env_var {
	char		*name;
	char		*value;
};

struct log_spec {
	char		*path;		/* NULL: actord's own log (stderr by default) */
	uint64_t	 max_size;	/* bytes before rotation; 0: never rotate */
	unsigned	 keep;		/* rotated files kept */
};

struct limit_spec {
	int		 resource;	/* RLIMIT_* */
	rlim_t		 value;		/* soft and hard; RLIM_INFINITY allowed */
};

struct mailbox_spec {
	uint32_t	 capacity;	/* cells in the ordinary ring */
	uint32_t	 cell;		/* bytes per cell, header included */
	enum mailbox_overflow overflow;
	uint32_t	 block_timeout;	/* ms a blocked sender waits */
	uint32_t	 max_attempts;	/* deliveries of a message before "poison" */
	enum on_down	 on_down;
	enum while_down	 while_down;
	uint32_t	 state;		/* bytes of committed state; 0: none */
	uint32_t	 watchers;	/* death watches on it at a time */
	uint32_t	 asks;		/* its own asks in flight: the reply lane */
	uint32_t	 max_message;	/* largest payload, bytes */
};

typedef int (*child_fn)(void *arg);	/* a function child: returns its exit status */

struct sup_spec;

enum child_kind {
	CHILD_WORKER,
	CHILD_SUPERVISOR
};

struct child_spec {
	char		*name;
	unsigned	 line;		/* line in the configuration, 0 if built in C */
	enum child_kind	 kind;

	/* CHILD_WORKER: exactly one of argv and fn. */
	char		**argv;		/* NULL-terminated; argv[0] is the program */
	child_fn	 fn;
	void		*fn_arg;
	enum restart_type restart;
	int64_t		 shutdown;	/* ms, or SHUTDOWN_BRUTAL_KILL / _INFINITY */
	uint32_t	 start_timeout;	/* ms to become ready */
	enum ready_mode	 ready;
	struct env_var	*env;
	size_t		 nenv;
	char		*cwd;
	char		*user;
	char		*group;
	int		 umask;		/* -1: inherit actord's */
	struct limit_spec *limits;
	size_t		 nlimits;
	int		*success_exit;	/* exit statuses that count as clean */
	size_t		 nsuccess_exit;
	bool		 has_mailbox;	/* a mailbox key was given, or ready = actor */
	struct mailbox_spec mailbox;
	struct log_spec	 log;
	unsigned	 instances;	/* 0: one child; N: a group name/0 .. name/N-1 */
	char		**nodes;	/* a group spanning nodes: their names */
	size_t		 nnodes;	/* 0: every instance runs here */
	unsigned	 nodes_line;
	enum start_order start;		/* a group's instances: read at its start */

	/* CHILD_SUPERVISOR */
	struct sup_spec	*sup;
};

struct sup_spec {
	enum strategy	 strategy;
	unsigned	 intensity;	/* restarts allowed ... */
	unsigned	 period;	/* ... within this many seconds */
	uint32_t	 backoff_min;	/* ms */
	uint32_t	 backoff_max;	/* ms */
	uint32_t	 min_uptime;	/* ms */
	enum start_order start;		/* its children's (and stops') */
	struct child_spec *children;	/* in start order */
	size_t		 nchildren;
};

/* A peer node, or an outside client (endpoint NULL), of this node. */
struct peer_spec {
	char		*name;
	char		*endpoint;	/* tcp://host:port; NULL for a client */
	char		*public_key;	/* Z85, 40 characters */
	unsigned	 line;
};

/* A shard group spanning nodes, as the gateway needs to know it. */
struct group_spec {
	char		*path;		/* /counter */
	unsigned	 instances;
	char		**nodes;
	size_t		 nnodes;
};

/* The node block: this actord as one node of several (nodespec.c). */
struct node_spec {
	char		*name;
	char		*listen;	/* tcp://host:port */
	char		*secret_key_file;
	struct peer_spec *peers;
	size_t		 npeers;
	struct peer_spec *clients;
	size_t		 nclients;
	uint32_t	 heartbeat;	/* ms between pings */
	uint32_t	 heartbeat_timeout;	/* ms of silence: node down */
	uint32_t	 send_queue;	/* messages kept per peer while down */
	uint32_t	 max_frame;	/* bytes of one frame on the wire */
	uint32_t	 bad_frames;	/* bad frames before a connection closes */
	struct mailbox_spec mailbox;	/* the gateway's */
	char		*gateway;	/* the gateway program */
	char		*user;		/* the gateway's credentials */
	char		*group;
	struct group_spec *groups;	/* groups spanning nodes */
	size_t		 ngroups;
	char		*shards_env;	/* SHARDS_ENV's value for the workers,
					   NULL: no group spans nodes */
	unsigned	 line;
	unsigned	 key_line;	/* of secret_key_file, for its errors */
};

struct actord_spec {
	char		*file;		/* where it was read from, or NULL */
	char		*runtime_dir;
	char		*pidfile;	/* NULL: none */
	char		*control_group;	/* NULL: socket is 0600 */
	char		*cgroup;	/* cgroup v2 base for workers; NULL: off */
	char		*metrics_listen;/* NULL: off */
	uint32_t	 shutdown_timeout;	/* ms for the whole tree */
	uint32_t	 spare_mailboxes;	/* arena slots for late children */
	uint32_t	 owed_max;	/* messages owed to full lanes, at most */
	struct log_spec	 log;
	struct node_spec *node;		/* NULL: not a node */
	struct sup_spec	 root;
};

#endif /* ACTORD_SPEC_H */
