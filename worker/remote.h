/*
 * remote.h: what libactor shares with actord, actorctl and the gateway
 * about other nodes.  Internal: never installed, never included by a
 * worker's program.
 *
 * Who owns what:
 *   keys.c       key files and their Z85 text
 *   placement.c  which node runs a shard of a group spanning nodes
 *   wire.c       the frames on the wire (actord-wire(7))
 *   remote.c     remote tells, asks and lookups, through the gateway
 *   envelope.c   node:/path names, and the envelope a local actor hands
 *                the gateway (/@gateway) for another node
 */
#ifndef ACTORD_REMOTE_H
#define ACTORD_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/actor.h"

#define KEY_BYTES		32	/* a Curve25519 key */
#define KEY_Z85_LEN		40	/* its Z85 text */

/* keys.c */
void	 key_z85_encode(const uint8_t key[KEY_BYTES],
	    char out[KEY_Z85_LEN + 1]);
int	 key_z85_decode(const char *z85, uint8_t out[KEY_BYTES]);
bool	 key_z85_valid(const char *z85);
int	 key_file_read(const char *path, bool secret,
	    char z85[KEY_Z85_LEN + 1], char *err, size_t errlen);

/* placement.c */
uint64_t placement_weight(const char *group, uint32_t shard,
	    const char *node);
size_t	 placement_node(const char *group, uint32_t shard,
	    char *const *nodes, size_t n);
uint32_t placement_group_id(const char *group);

/*
 * The groups spanning nodes, as actord tells every worker of a node in
 * SHARDS_ENV: "PATH=INSTANCES" separated by spaces (/counter=64 /s/x=8).
 */
#define SHARDS_ENV		"ACTORD_SHARDS"

/*
 * wire.c: the frames of actord-wire(7).  Integers little-endian.
 *
 * Header (16 bytes): 'A' 'W', version, type, u32 body length, 8 reserved
 * zero bytes.  Bodies:
 *   HELLO, WELCOME  u64 epoch, u64 session, u32 max_frame, u8 n, name[n]
 *   PING, PONG      u64 nonce
 *   BATCH           u64 receiver's epoch (0: any), u32 count, messages
 *   ERROR           u32 code, text (no NUL)
 * A message of a batch (WIRE_MSG_HDR bytes, then path, then payload):
 *   u8 kind, u8 flags, u16 path length, u32 tag, u32 to_index,
 *   u32 to_inc, u32 from_index, u32 from_inc, u64 corr, u32 length
 */
#define WIRE_MAGIC0		'A'
#define WIRE_MAGIC1		'W'
#define WIRE_VERSION		1
#define WIRE_HDR		16
#define WIRE_MSG_HDR		36
#define WIRE_NAME_MAX		32
#define WIRE_PATH_MAX		255
#define WIRE_TEXT_MAX		1024
#define WIRE_FRAME_MIN		4096	/* the least max_frame anyone offers */
#define WIRE_INDEX_MAX		65535	/* mailbox indexes are below it */
#define WIRE_NOBODY		0xffffffffu	/* from_index of a client */
#define WIRE_TERMINATED_LEN	24

enum wire_type {
	WIRE_HELLO = 1,		/* connector -> listener, first */
	WIRE_WELCOME = 2,	/* listener -> connector, the answer */
	WIRE_PING = 3,		/* connector -> listener */
	WIRE_PONG = 4,		/* listener -> connector, the same nonce */
	WIRE_BATCH = 5,		/* actor messages, either way */
	WIRE_ERROR = 6		/* listener -> connector: why it refuses */
};

enum wire_kind {
	WK_TELL = 1,
	WK_ASK = 2,
	WK_REPLY = 3,		/* to the asker: to_index, to_inc; corr */
	WK_WATCH = 4,
	WK_UNWATCH = 5,
	WK_TERMINATED = 6,	/* to the watcher; payload: wire_terminated */
	WK_LOOKUP = 7		/* by path; answered by a REPLY */
};

#define WF_PATH			0x01	/* the target is the path */
#define WF_ERROR		0x02	/* a REPLY that is an error */
#define WF_ALL			0x03

/* ERROR codes. */
#define WIRE_ERR_BAD_FRAME	1	/* a frame was refused */
#define WIRE_ERR_VERSION	2	/* no common version */
#define WIRE_ERR_NAME		3	/* HELLO's name is not the key's */
#define WIRE_ERR_NO_HELLO	4	/* a frame before HELLO */

/* Decoding errors: the frame is refused whole. */
#define WIRE_EMAGIC		(-1)
#define WIRE_EVERSION		(-2)
#define WIRE_ETYPE		(-3)
#define WIRE_ELENGTH		(-4)
#define WIRE_ETOOBIG		(-5)
#define WIRE_ERESERVED		(-6)
#define WIRE_ECOUNT		(-7)
#define WIRE_EKIND		(-8)
#define WIRE_EFLAGS		(-9)
#define WIRE_EPATH		(-10)
#define WIRE_EINDEX		(-11)
#define WIRE_ENAME		(-12)
#define WIRE_ETRAILING		(-13)

struct wire_hello {
	uint64_t	 epoch;		/* 0: a client */
	uint64_t	 session;	/* grows with each connection */
	uint32_t	 max_frame;	/* the largest frame it accepts */
	char		 name[WIRE_NAME_MAX + 1];
};

struct wire_msg {
	uint8_t		 kind;		/* enum wire_kind */
	uint8_t		 flags;		/* WF_* */
	uint16_t	 path_len;
	uint32_t	 tag;
	uint32_t	 to_index;	/* on the receiver */
	uint32_t	 to_inc;	/* 0: any */
	uint32_t	 from_index;	/* on the sender; WIRE_NOBODY */
	uint32_t	 from_inc;
	uint64_t	 corr;
	uint32_t	 len;
	const char	*path;		/* path_len bytes, no NUL */
	const void	*data;		/* len bytes */
};

struct wire_terminated {
	uint32_t	 index;		/* who died, on the sender */
	uint32_t	 incarnation;
	int32_t		 wstatus;
	int32_t		 exit_status;
	int32_t		 signal;
	uint32_t	 reason;	/* 0: it died */
};

struct wire_frame {
	uint8_t		 type;
	union {
		struct wire_hello hello;
		uint64_t	 nonce;
		struct {
			uint64_t	 epoch;
			uint32_t	 count;
			const uint8_t	*next;
			const uint8_t	*end;
		} batch;
		struct {
			uint32_t	 code;
			const char	*text;
			size_t		 text_len;
		} error;
	} u;
};

struct wire_buf {
	uint8_t		*p;
	size_t		 len;
	size_t		 cap;
	uint32_t	 count;		/* messages in the batch */
};

bool	 wire_name_ok(const char *, size_t);
bool	 wire_path_ok(const char *, size_t);
int	 wire_decode(const void *, size_t, size_t max_frame,
	    struct wire_frame *);
int	 wire_next(struct wire_frame *, struct wire_msg *);
const char *wire_strerror(int);
int	 wire_hello(struct wire_buf *, uint8_t type, const struct wire_hello *);
int	 wire_ping(struct wire_buf *, uint8_t type, uint64_t nonce);
int	 wire_error(struct wire_buf *, uint32_t code, const char *text);
int	 wire_batch_begin(struct wire_buf *, uint64_t epoch);
int	 wire_batch_add(struct wire_buf *, const struct wire_msg *);
void	 wire_batch_end(struct wire_buf *);
size_t	 wire_msg_size(const struct wire_msg *);
void	 wire_buf_free(struct wire_buf *);
void	 wire_put_terminated(uint8_t out[WIRE_TERMINATED_LEN],
	    const struct wire_terminated *);
void	 wire_get_terminated(const uint8_t in[WIRE_TERMINATED_LEN],
	    struct wire_terminated *);

/*
 * remote.c.  A reference to an actor of another node is an actor_ref
 * whose index has REMOTE_BIT set: the peer's slot (its place in the node
 * block's peers, 0..126), 8 bits of the peer's epoch (REMOTE_GEN: a node
 * that restarted has another) and the actor's mailbox index there; its
 * incarnation is the remote actor's.  UINT32_MAX is no remote reference
 * (it names actord or a client as a sender).
 */
#define REMOTE_BIT		0x80000000u
#define REMOTE_PEERS_MAX	127
#define REMOTE_REF(peer, gen, idx) (REMOTE_BIT | (uint32_t)(peer) << 24 | \
				 (uint32_t)(gen) << 16 | ((idx) & 0xffffu))
#define REMOTE_IS(index)	(((index) & REMOTE_BIT) != 0 && \
				 (index) != UINT32_MAX)
#define REMOTE_PEER(index)	(((index) >> 24) & 0x7fu)
#define REMOTE_GENOF(index)	(((index) >> 16) & 0xffu)
#define REMOTE_INDEX(index)	((index) & 0xffffu)
/*
 * A shard of a group spanning nodes, placed on another node: the remote
 * reference actor_shard() gives for it (shard.c).  Peer slot 127, which
 * no peer has, then the group's id (placement_group_id, 14 bits) and the
 * shard (10 bits).  The gateway sends what it gets for one to the node
 * the placement names, by path (/group/shard), so whichever incarnation
 * of the shard lives there gets it, whatever that node's epoch.
 */
#define REMOTE_SHARD_PEER	127u
#define REMOTE_SHARD_IDS	0x3fffu	/* ids 0..0x3ffe: never UINT32_MAX */
#define REMOTE_SHARD_REF(id, s)	(REMOTE_BIT | REMOTE_SHARD_PEER << 24 | \
				 ((uint32_t)(id) & 0x3fffu) << 10 | \
				 ((uint32_t)(s) & 0x3ffu))
#define REMOTE_IS_SHARD(index)	(REMOTE_IS(index) && \
				 REMOTE_PEER(index) == REMOTE_SHARD_PEER)
#define REMOTE_SHARD_ID(index)	(((index) >> 10) & 0x3fffu)
#define REMOTE_SHARD_OF(index)	((index) & 0x3ffu)
#define REMOTE_GEN(epoch)	((uint8_t)((epoch) ^ (epoch) >> 8 ^ \
				 (epoch) >> 16 ^ (epoch) >> 24 ^ (epoch) >> 32 ^ \
				 (epoch) >> 40 ^ (epoch) >> 48 ^ (epoch) >> 56))

/*
 * The envelope: what a local actor sends the gateway for another node,
 * on the gateway's main lane with the tag REMOTE_TAG (an ask with
 * SHM_MSG_ASK and its corr, as any ask).  REMOTE_ENV bytes, then the
 * node's name (WF_PATH only), the path (WF_PATH only), the payload:
 *   u8 kind (WK_TELL, WK_ASK, WK_LOOKUP, WK_WATCH, WK_UNWATCH), u8 flags
 *   (WF_PATH),
 *   u8 node name length, u8 gen (without WF_PATH), u16 path length,
 *   u16 peer (without WF_PATH), u32 tag, u32 to_index, u32 to_inc
 * in the host's byte order: it never leaves the host.  The gateway checks
 * all of it (remote_env_get): any process of the tree may write garbage.
 */
#define REMOTE_TAG		0xffffff00u
#define REMOTE_ENV		20
#define REMOTE_LOOKUP_NS	(5LL * 1000000000)	/* actor_lookup's wait */

struct remote_env {
	uint8_t		 kind;		/* WK_TELL, WK_ASK, WK_LOOKUP */
	uint8_t		 flags;		/* WF_PATH */
	uint8_t		 gen;		/* REMOTE_GENOF of the reference */
	uint16_t	 peer;		/* REMOTE_PEER of the reference */
	uint32_t	 tag;
	uint32_t	 to_index;	/* on the peer */
	uint32_t	 to_inc;
	char		 node[WIRE_NAME_MAX + 1];	/* WF_PATH */
	const char	*path;		/* WF_PATH: path_len bytes, no NUL */
	uint16_t	 path_len;
	const void	*data;
	size_t		 len;
};

int	 remote_split(const char *path, struct remote_env *);
int	 remote_env_put(const struct remote_env *, void **buf, size_t *len,
	    void *stack, size_t stacklen);
int	 remote_env_get(const void *buf, size_t len, struct remote_env *);
int	 remote_gateway(struct actor *, struct actor_ref *);
int	 remote_tell(struct actor *, struct remote_env *, int64_t timeout_ns);
int	 remote_ask(struct actor *, struct remote_env *, int64_t timeout_ns,
	    struct actor_msg *reply);
int	 remote_ask_send(struct actor *, struct remote_env *,
	    int64_t timeout_ns, unsigned flags, uint64_t *corr);
int	 remote_lookup(struct actor *, const char *path, struct actor_ref *);
int	 remote_path_env(const char *path, uint32_t tag, const void *data,
	    size_t len, struct remote_env *);
void	 remote_env_ref(struct remote_env *, struct actor_ref, uint8_t kind,
	    uint32_t tag, const void *data, size_t len);
int	 remote_deliver(struct actor *, struct actor_ref to,
	    struct actor_ref from, uint32_t tag, const void *data, size_t len);
int	 remote_watch(struct actor *, struct actor_ref, uint8_t kind);
int	 remote_terminated(struct actor *, struct actor_ref watcher,
	    const struct actor_terminated *);

#endif /* ACTORD_REMOTE_H */
