/*
 * actor.h: libactor, the C API of a worker supervised by actord.  A worker
 * linked to libactor is an actor: it owns its state and handles one message
 * at a time from its mailbox in the shared-memory arena that actord created.
 * The mailbox outlives the worker: a crash loses no queued message, and no
 * caller ever hangs on an actor that died.  Documented in libactor(3).
 *
 * Who owns what (one file per responsibility):
 *   attach.c     attach from the environment or an arena, ready, close
 *   region.c     the per-actor libactor region: policies, counters, layout
 *   recv.c       receive (in-hand slot, redelivery), the run loop, stop,
 *                a deliberate exit
 *   send.c       lookup, tell, reply, the incarnation check of a receiver
 *   defer.c      deferred answers: keep an ask, answer it later
 *   ask.c        ask: correlation ids, the pending table, late answers
 *   replyslots.c the reply slots: one answer cell held per ask in flight
 *   watch.c      death watch: watch, unwatch, Terminated
 *   reaped.c     actord's side: what happens when an actor is reaped
 *   snapshot.c   committed state snapshots, CRC32C
 *   shard.c      the stable key -> shard hash, shard group lookup
 *   deadletter.c dead letters and counters, as read by anyone
 *   errors.c     error names, the parts of an error answer
 *   client.c     programs outside the tree: connect, tell, ask, close
 *   client_local.c  the client's local transport (actord's control socket)
 *   client_zmq.c the client's network transport (a node's gateway)
 *   remote.c     tells, asks and lookups for other nodes (remote.h)
 *   envelope.c   the envelope they travel in to the gateway
 *
 * Return values: functions returning int return 0 (or a count) on success,
 * or a negative ACTOR_E* code; actor_strerror() names it.  The codes from
 * -1 to -14 are those of shm/shm.h, with the same meaning.  An
 * application's own error codes (actor_reply_error) are >= 0: a range of
 * their own, never confused with these.
 *
 * Threads: one struct actor is used by one thread at a time.
 */
#ifndef ACTORD_ACTOR_H
#define ACTORD_ACTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ACTOR_ENV_PATH		"ACTORD_PATH"
#define ACTOR_ENV_INDEX		"ACTORD_INDEX"
#define ACTOR_ENV_INCARNATION	"ACTORD_INCARNATION"
#define ACTOR_ENV_NOTIFY	"ACTORD_NOTIFY_FD"
#define ACTOR_ENV_NOTIFY_SOCKET	"ACTORD_NOTIFY_SOCKET"
#define ACTOR_ENV_ARENA		"ACTORD_ARENA_FD"

#define ACTOR_PATH_MAX		256
#define ACTOR_ERRBUF		256
#define ACTOR_FOREVER		(-1)	/* a receive timeout: wait for ever */
#define ACTOR_ANY		0	/* incarnation: whichever is live */
#define ACTOR_MAX_ATTEMPTS_DEFAULT 3
#define ACTOR_WATCHERS		64	/* default watch entries per actor */
#define ACTOR_WATCHERS_MAX	65536	/* watcher indexes have 16 bits */
#define ACTOR_ASKS		64	/* default reply slots: asks in flight */
#define ACTOR_HIST_BUCKETS	40	/* log2 buckets of ns: [2^i, 2^(i+1)) */

enum actor_err {
	ACTOR_OK	= 0,
	ACTOR_EFULL	= -1,	/* the mailbox is full */
	ACTOR_EEMPTY	= -2,	/* nothing to receive */
	ACTOR_ETIMEDOUT	= -3,	/* the timeout ran out */
	ACTOR_EOVERSIZE	= -4,	/* payload larger than max_message */
	ACTOR_EGARBLED	= -5,
	ACTOR_ECORRUPT	= -6,	/* the arena is foreign or corrupt */
	ACTOR_EBADINDEX	= -7,	/* no such mailbox */
	ACTOR_ESYS	= -8,	/* a system call failed: see errno */
	ACTOR_EAGAIN	= -9,	/* actor_reaped: call shm_reap again later */
	ACTOR_ENOSLOT	= -10,	/* every producer slot is taken */
	ACTOR_EINVAL	= -11,	/* bad argument */
	ACTOR_EDROPPED	= -12,	/* drop_newest: this message was dropped */
	ACTOR_ENOENT	= -13,	/* no actor has that path */
	ACTOR_ELOST	= -14,
	ACTOR_ENOTREADY	= -15,	/* a spare mailbox no actor owns yet */
	ACTOR_EFORKED	= -16,	/* the handle is the parent's (a fork child) */
	ACTOR_EDOWN	= -20,	/* ask: the actor is down */
	ACTOR_ESTALE	= -21,	/* the reference names a dead incarnation */
	ACTOR_EPOISON	= -22,	/* ask: the message crashed the actor, too often */
	ACTOR_EFAILED	= -23,	/* ask: the actor died with it queued (on_down fail) */
	ACTOR_EREPLY	= -24,	/* ask: the handler answered with an error */
	ACTOR_ENOMAILBOX = -25,	/* this handle has no mailbox */
	ACTOR_ENOTASK	= -26,	/* reply: the message in hand is not an ask */
	ACTOR_ESTOPPED	= -27,	/* the run loop was asked to stop */
	ACTOR_ENOSTATE	= -28,	/* no committed snapshot, or no state region */
	ACTOR_EDIED	= -29,	/* ask: the actor died before it answered */
	ACTOR_EPROTO	= -30,	/* client: the peer's answer is malformed */
	ACTOR_ENODEDOWN	= -31,	/* its node is down (or unknown) */
	ACTOR_ESTALENODE = -32	/* the reference names a node's past epoch */
};
#define ACTOR_ELAST	ACTOR_ESTALENODE	/* the lowest ACTOR_E* code */

/* A reference: mailbox index and incarnation (ACTOR_ANY: the live one). */
struct actor_ref {
	uint32_t	 index;
	uint32_t	 incarnation;
};

/* Message flags (struct actor_msg.flags). */
#define ACTOR_MSG_ASK		0x0001u	/* the sender waits: actor_reply */
#define ACTOR_MSG_REPLY		0x0002u	/* an answer to an ask */
#define ACTOR_MSG_ERROR		0x0004u	/* an answer that is an error */
#define ACTOR_MSG_REDELIVERED	0x0008u	/* it was in hand when we crashed */
#define ACTOR_MSG_KEYED		0x0010u	/* actor_tell_keyed: corr is the key */
#define ACTOR_MSG_SYSTEM	0x0100u	/* came on the system lane */

/* System messages (tags on the system lane). */
#define ACTOR_SYS_TERMINATED	0xfffffff0u	/* payload: actor_terminated */
#define ACTOR_SYS_STOP		0xfffffff1u	/* stop gracefully */
#define ACTOR_SYS_GONE		0xfffffff2u	/* payload: actor_terminated */

/* Why an actor is gone for good (actor_terminated.gone). */
#define ACTOR_GONE_REMOVED	1	/* removed from the tree */
#define ACTOR_GONE_GAVE_UP	2	/* a supervisor above it gave up */
#define ACTOR_GONE_EXITED	3	/* exited, and its restart type says
					   it is not restarted */
#define ACTOR_GONE_NODE_DOWN	4	/* in a Terminated for an actor of
					   another node: that node is down, the
					   actor may still run */

/* Ask options (actor_ask_with, actor_ask_send_with). */
#define ACTOR_ASK_WAIT_UP	0x0001u	/* a down actor: wait for its restart
					   within the timeout, instead of
					   ACTOR_EDOWN at once */
#define ACTOR_ASK_NO_WAIT	0x0002u	/* a full mailbox: ACTOR_EFULL at
					   once (its overflow policy and
					   dead letter as for a tell with no
					   timeout), never a wait for room */

/* A received message: data is good until the next receive. */
struct actor_msg {
	uint32_t	 tag;
	uint32_t	 len;		/* payload bytes */
	const void	*data;
	struct actor_ref sender;	/* {i, 0}: actord or a client */
	uint64_t	 corr;		/* correlation id of an ask or reply */
	uint32_t	 attempts;	/* deliveries so far, this one included */
	uint32_t	 flags;		/* ACTOR_MSG_* */
	uint64_t	 enq_ns;	/* CLOCK_MONOTONIC when it was sent, or 0:
					   not timed (libactor(3), Messages) */
};

/* The payload of ACTOR_SYS_TERMINATED and ACTOR_SYS_GONE. */
struct actor_terminated {
	struct actor_ref who;		/* the incarnation that died (GONE:
					   the last one, or 0) */
	int32_t		 wstatus;	/* from waitpid, -1 if unknown */
	int32_t		 exit_status;	/* -1 if killed by a signal */
	int32_t		 signal;	/* 0 if it exited */
	uint32_t	 gone;		/* GONE: ACTOR_GONE_*; Terminated: 0,
					   or ACTOR_GONE_NODE_DOWN */
};

/* A deferred answer: the ask it answers (actor_defer). */
struct actor_caller {
	struct actor_ref asker;
	uint64_t	 corr;
	uint32_t	 entry;		/* its place in the deferred set */
	uint32_t	 tag;		/* the ask's tag */
};

/*
 * The payload of an error reply (ACTOR_MSG_ERROR): the code, then the
 * text up to its NUL (at most ACTOR_ERRTEXT_MAX bytes with it, and no
 * more than the asker's reply cell holds); read it with actor_error_code()
 * and actor_error_text().  code < 0: an ACTOR_E* of the runtime (poison,
 * died...); code >= 0: the application's own (actor_reply_error), and the
 * ask returned ACTOR_EREPLY.
 */
#define ACTOR_ERRTEXT_MAX	256
struct actor_error_reply {
	int32_t		 code;
	char		 text[ACTOR_ERRTEXT_MAX];
};

/* Mailbox policies actord copies from the configuration. */
enum actor_on_down {
	ACTOR_ON_DOWN_KEEP = 0,		/* queued messages wait */
	ACTOR_ON_DOWN_FAIL = 1		/* queued asks fail, tells dead-lettered */
};
enum actor_while_down {
	ACTOR_WHILE_DOWN_QUEUE = 0,	/* tells are queued while down */
	ACTOR_WHILE_DOWN_REJECT = 1	/* tells are dead letters while down */
};
struct actor_policy {
	uint32_t	 max_attempts;	/* deliveries before "poison"; >= 1 */
	enum actor_on_down on_down;
	enum actor_while_down while_down;
	uint32_t	 watchers;	/* watches on it at a time; 0: default */
	uint32_t	 asks;		/* its asks in flight; 0: reply lane cells */
};

/* Per-actor counters kept in the arena (libactor's, beside shm's). */
struct actor_stats {
	uint64_t	 deaths;	/* times it was reaped */
	uint64_t	 handled;	/* messages handed to the handler */
	uint64_t	 redelivered;	/* in-hand messages given again */
	uint64_t	 poison;	/* in-hand messages dead-lettered as poison */
	uint64_t	 asks_failed;	/* asks to it failed at once (down, on_down) */
	uint64_t	 late_replies;	/* answers to its asks that came too late */
	uint64_t	 stale;		/* messages to a dead incarnation */
	uint64_t	 commits;	/* snapshots committed */
	uint64_t	 shard_msgs;	/* messages routed to it as a shard */
	/* Handler duration (receive to done), one message in 8 sampled. */
	uint64_t	 handler_hist[ACTOR_HIST_BUCKETS];
};

/* How receive waits (see shm/shm.h). */
enum actor_wait {
	ACTOR_WAIT_SPIN = 0,
	ACTOR_WAIT_SPIN_SLEEP = 1,	/* the default: spin_ns, then futex */
	ACTOR_WAIT_SLEEP = 2
};

struct actor;
struct shm_arena;

/*
 * The run loop's handler: return 0 to go on, non-0 to stop after this
 * message.  on_stop runs once, after the last message.
 */
typedef int	(*actor_handler)(struct actor *, const struct actor_msg *,
		    void *arg);
typedef void	(*actor_stop_fn)(struct actor *, void *arg);

/* attach.c */
int	 actor_attach(struct actor **, char *err, size_t errlen);
int	 actor_open(struct shm_arena *, int32_t idx, struct actor **,
	    char *err, size_t errlen);
int	 actor_ready(struct actor *);
void	 actor_close(struct actor *);
struct actor_ref actor_self(const struct actor *);
const char *actor_name(const struct actor *);
struct shm_arena *actor_arena(struct actor *);
void	 actor_set_wait(struct actor *, enum actor_wait, int64_t spin_ns);

/* recv.c */
int	 actor_recv(struct actor *, struct actor_msg *, int64_t timeout_ns);
void	 actor_done(struct actor *);
int	 actor_run(struct actor *, actor_handler, actor_stop_fn, void *arg);
void	 actor_stop(struct actor *);
bool	 actor_stopping(const struct actor *);
void	 actor_exit(struct actor *, int status) __attribute__((noreturn));

/* send.c */
int	 actor_lookup(struct actor *, const char *path, struct actor_ref *);
int	 actor_tell(struct actor *, struct actor_ref, uint32_t tag,
	    const void *data, size_t len);
int	 actor_tell_path(struct actor *, const char *path, uint32_t tag,
	    const void *data, size_t len);
int	 actor_tell_timeout(struct actor *, struct actor_ref, uint32_t tag,
	    const void *data, size_t len, int64_t timeout_ns);
/* Coalesce keys are below 2^40 (ACTOR_KEY_MAX). */
#define ACTOR_KEY_MAX		((1ULL << 40) - 1)
int	 actor_tell_keyed(struct actor *, struct actor_ref, uint32_t tag,
	    uint64_t key, const void *data, size_t len);
int	 actor_reply(struct actor *, uint32_t tag, const void *data,
	    size_t len);
int	 actor_reply_error(struct actor *, int code, const char *text);

/* defer.c */
int	 actor_defer(struct actor *, struct actor_caller *);
int	 actor_answer(struct actor *, const struct actor_caller *,
	    uint32_t tag, const void *data, size_t len);
int	 actor_answer_error(struct actor *, const struct actor_caller *,
	    int code, const char *text);

/* ask.c */
int	 actor_ask(struct actor *, struct actor_ref, uint32_t tag,
	    const void *data, size_t len, int64_t timeout_ns,
	    struct actor_msg *reply);
int	 actor_ask_path(struct actor *, const char *path, uint32_t tag,
	    const void *data, size_t len, int64_t timeout_ns,
	    struct actor_msg *reply);
int	 actor_ask_send(struct actor *, struct actor_ref, uint32_t tag,
	    const void *data, size_t len, int64_t timeout_ns, uint64_t *corr);
int	 actor_ask_with(struct actor *, struct actor_ref, uint32_t tag,
	    const void *data, size_t len, int64_t timeout_ns, unsigned flags,
	    struct actor_msg *reply);
int	 actor_ask_send_with(struct actor *, struct actor_ref, uint32_t tag,
	    const void *data, size_t len, int64_t timeout_ns, unsigned flags,
	    uint64_t *corr);
int	 actor_ask_next(struct actor *, struct actor_msg *reply,
	    int64_t timeout_ns, uint64_t *corr);
unsigned actor_asks_pending(const struct actor *);
void	 actor_recv_answers(struct actor *, bool);
int	 actor_reply_status(const struct actor_msg *reply);

/* watch.c */
int	 actor_watch(struct actor *, struct actor_ref);
int	 actor_watch_name(struct actor *, const char *path);
int	 actor_unwatch(struct actor *, struct actor_ref);

/* snapshot.c */
int	 actor_commit(struct actor *, const void *data, size_t len);
int	 actor_load(struct actor *, void *buf, size_t buflen, size_t *len);
size_t	 actor_snapshot_max(const struct actor *);
int	 actor_snapshot_read(struct shm_arena *, uint32_t idx, void *buf,
	    size_t buflen, size_t *len);
void	 actor_set_commit_hook(struct actor *, void (*)(void *), void *arg);
uint32_t actor_crc32c(uint32_t crc, const void *, size_t);

/* shard.c */
uint64_t actor_shard_hash(const void *key, size_t len);
uint32_t actor_shard_of(const void *key, size_t len, uint32_t nshards);
int	 actor_shard_group(struct actor *, const char *group,
	    uint32_t *nshards);
int	 actor_shard(struct actor *, const char *group, const void *key,
	    size_t len, struct actor_ref *);

/* deadletter.c */
struct actor_dead_letter {
	uint64_t	 seq;
	uint64_t	 time_ns;
	uint32_t	 recipient;	/* mailbox index */
	uint32_t	 reason;	/* enum shm_dl_reason */
	const char	*reason_name;
	uint32_t	 lane;
	uint32_t	 tag;
	uint32_t	 len;		/* the message's full payload length */
	uint32_t	 flags;
	struct actor_ref sender;
	uint64_t	 corr;
	uint32_t	 attempts;
	uint32_t	 payload_len;	/* bytes kept below */
	uint8_t		 payload[64];
};
struct actor_dl_counters {
	uint64_t	 total;		/* ever written */
	uint64_t	 lost;		/* overwritten before anyone read them */
	uint64_t	 head;		/* the next position written */
};
int	 actor_dl_read(struct shm_arena *, uint64_t *cursor,
	    struct actor_dead_letter *);
void	 actor_dl_counters(struct shm_arena *, struct actor_dl_counters *);
int	 actor_stats(struct shm_arena *, uint32_t idx, struct actor_stats *);

/* region.c: actord's side, at arena creation and before each spawn */
size_t	 actor_region_size(uint32_t state_bytes, uint32_t watchers,
	    uint32_t asks);
int	 actor_configure(struct shm_arena *, uint32_t idx,
	    const struct actor_policy *);
int	 actor_restore(struct shm_arena *, uint32_t idx,
	    const struct actor_policy *);
uint32_t actor_prepare_start(struct shm_arena *, uint32_t idx);

/*
 * reaped.c: actord's side, after waitpid.  Terminated messages that find
 * their watcher's system lane full are kept in *owed (allocated as
 * needed) and sent by actor_deliver_owed() once they fit: call it again
 * while it returns more than 0.  owed NULL: such a message is a dead
 * letter "mailbox full" instead.
 */
struct actor_owed;
int	 actor_reaped(struct shm_arena *, uint32_t idx, pid_t, int wstatus,
	    struct actor_owed **owed);
int	 actor_deliver_owed(struct shm_arena *, struct actor_owed **owed);
/*
 * The list's cap (0: ACTOR_OWED_MAX), made now if need be and kept when
 * empty: a message owed over it is a dead letter "owed list full" at
 * once, counted by actor_owed_over().  actor_owed_count(): owed now.
 */
#define ACTOR_OWED_MAX	4096
int	 actor_owed_init(struct actor_owed **owed, size_t max);
size_t	 actor_owed_count(const struct actor_owed *);
uint64_t actor_owed_over(const struct actor_owed *);
int	 actor_gone(struct shm_arena *, uint32_t idx, uint32_t why,
	    struct actor_owed **owed);
void	 actor_owed_free(struct actor_owed **owed);

/* errors.c */
const char *actor_strerror(int err);
int32_t	 actor_error_code(const struct actor_msg *reply);
const char *actor_error_text(const struct actor_msg *reply);

/*
 * client.c: programs outside the tree (not started by actord) tell and
 * ask actors by path, through an address:
 *
 *	NULL or ""		the local actord's control socket, where an
 *				actord with the default runtime_dir has it
 *	"unix:PATH", or a PATH	a local actord's control socket
 *	starting with / or .
 *	"tcp://HOST:PORT?server=PUBFILE&key=SECFILE&name=NAME"
 *				a node's gateway over CurveZMQ (actord-wire(7);
 *				libzmq is loaded with dlopen)
 *
 * The results are those of actor_tell and actor_ask (ACTOR_ENOENT,
 * ACTOR_EDOWN, ACTOR_EFULL, ACTOR_ETIMEDOUT, ACTOR_EREPLY with the
 * application's code and text in *reply, ...), plus ACTOR_ESYS (errno
 * says why: the connection failed or was lost; the next call connects
 * again) and ACTOR_EPROTO.  actor_client_error() says why the last call
 * failed, in words.  An answer's data is good until the next call on that
 * client.  One client is used by one thread at a time; a client asks one
 * thing at a time.
 */
struct actor_client;
int	 actor_connect(struct actor_client **, const char *address,
	    char *err, size_t errlen);
int	 actor_client_tell(struct actor_client *, const char *path,
	    uint32_t tag, const void *data, size_t len);
int	 actor_client_ask(struct actor_client *, const char *path,
	    uint32_t tag, const void *data, size_t len, int64_t timeout_ns,
	    struct actor_msg *reply);
const char *actor_client_error(const struct actor_client *);
void	 actor_client_close(struct actor_client *);

#endif /* ACTORD_ACTOR_H */
