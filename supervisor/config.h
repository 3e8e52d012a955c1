/*
 * config.h: reading actord.conf into a spec (spec.h), and the helpers that
 * build, copy, compare and free specs.
 *
 * config.c owns parsing and validation: every error names the file, the
 * line and the key, and what was expected.  spec.c owns the defaults and
 * the memory of a spec.  Neither ever touches a running process.
 */
#ifndef ACTORD_CONFIG_H
#define ACTORD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "supervisor/spec.h"

/* Defaults, documented in actord.conf(5). */
#define DEFAULT_SHUTDOWN_TIMEOUT	10000	/* ms, whole tree */
#define DEFAULT_SPARE_MAILBOXES	16	/* arena slots for late children */
#define SPARE_MAILBOXES_MAX	4096
#define DEFAULT_OWED_MAX	4096	/* messages actord keeps for full lanes */
#define OWED_MAX_MAX		1048576
#define DEFAULT_STRATEGY		STRATEGY_ONE_FOR_ONE
#define DEFAULT_INTENSITY		5
#define DEFAULT_PERIOD			10	/* s */
#define DEFAULT_BACKOFF_MIN		50	/* ms */
#define DEFAULT_BACKOFF_MAX		1000	/* ms */
#define DEFAULT_MIN_UPTIME		5000	/* ms */
#define DEFAULT_RESTART			RESTART_PERMANENT
#define DEFAULT_SHUTDOWN		5000	/* ms, per child */
#define DEFAULT_START_TIMEOUT		5000	/* ms */
#define DEFAULT_READY			READY_EXEC
#define DEFAULT_MAILBOX_CAPACITY	1024	/* cells */
#define DEFAULT_MAILBOX_CELL		256	/* bytes */
#define DEFAULT_MAILBOX_OVERFLOW	OVERFLOW_BLOCK
#define DEFAULT_BLOCK_TIMEOUT		1000	/* ms */
#define DEFAULT_MAX_ATTEMPTS		3
#define DEFAULT_MAILBOX_STATE		0	/* bytes; no committed state */
#define DEFAULT_WATCHERS		64	/* ACTOR_WATCHERS */
#define DEFAULT_ASKS			64	/* answers its reply lane holds */
#define DEFAULT_MAX_MESSAGE		65536	/* bytes of payload */
#define DEFAULT_ON_DOWN			ON_DOWN_KEEP
#define DEFAULT_WHILE_DOWN		WHILE_DOWN_QUEUE
#define DEFAULT_LOG_MAX_SIZE		10485760	/* bytes, then rotate */
#define DEFAULT_LOG_KEEP		5

/* The node block (actord.conf(5), NODES). */
#define DEFAULT_HEARTBEAT		1000	/* ms */
#define DEFAULT_HEARTBEAT_TIMEOUT	5000	/* ms */
#define DEFAULT_SEND_QUEUE		100000	/* messages per peer */
#define DEFAULT_MAX_FRAME		1048576	/* bytes */
#define DEFAULT_BAD_FRAMES		10	/* then the connection closes */
#define DEFAULT_GATEWAY_CAPACITY	4096	/* its mailbox, cells */
#define DEFAULT_GATEWAY_CELL		1024	/* bytes */
#define DEFAULT_GATEWAY_STATE		65536	/* bytes of committed state */
#define HEARTBEAT_MIN			10
#define HEARTBEAT_MAX			60000
#define HEARTBEAT_TIMEOUT_MAX		600000
#define SEND_QUEUE_MAX			10000000
#define MAX_FRAME_MIN			4096
#define MAX_FRAME_MAX			67108864
#define BAD_FRAMES_MAX			1000000
#define GATEWAY_NAME			"@gateway"	/* no configured name has @ */
#define GATEWAY_PROGRAM			"actord-gateway"
#define GATEWAY_ENV_NODE		"ACTORD_NODE"	/* node_spec_format's text */

/*
 * config.c: a new spec, or NULL with one line in err (err may be NULL):
 * "FILE:LINE: KEYPATH: expected WHAT, got VALUE", "FILE:LINE: syntax
 * error[: TEXT]" or "FILE: strerror".  config_load sets spec->file; in
 * config_parse_string, name stands for FILE and spec->file stays NULL.
 */
struct actord_spec *config_load(const char *path, char *err, size_t errlen);
struct actord_spec *config_parse_string(const char *text, const char *name,
		    char *err, size_t errlen);

/* config.c: the gateway's ACTORD_NODE text into a node spec. */
struct node_spec *config_parse_node(const char *text, const char *name,
		    char *err, size_t errlen);

/* spec.c */
struct actord_spec *spec_new(void);		/* all defaults, no children */
void	 spec_free(struct actord_spec *);
void	 spec_sup_init(struct sup_spec *);	/* defaults */
void	 spec_child_init(struct child_spec *);	/* defaults, kind worker */
void	 spec_mailbox_init(struct mailbox_spec *);	/* the defaults */
void	 spec_child_clear(struct child_spec *);	/* frees what it points to */
/* Deep; dst is overwritten, not freed; -1 (ENOMEM) leaves dst cleared. */
int	 spec_child_copy(struct child_spec *dst, const struct child_spec *src);
/* All that a reload must restart for, supervisors recursively; not line. */
bool	 spec_child_equal(const struct child_spec *, const struct child_spec *);
const char *spec_default_runtime_dir(void);	/* static storage */

/* spec.c: the node block's memory and defaults */
struct node_spec *node_spec_new(void);
void	 node_spec_free(struct node_spec *);

/*
 * nodespec.c: once a whole file is read, node_spec_finish() lists the
 * groups spanning nodes and adds the gateway to the tree (the last child
 * of the root supervisor, named GATEWAY_NAME); node_spec_format() writes
 * the text the gateway reads.
 */
int	 node_spec_finish(struct actord_spec *, char *err, size_t errlen);
int	 node_spec_format(const struct node_spec *, char **out);
bool	 node_spec_local(const struct node_spec *, const char *group_path,
	    const struct child_spec *, unsigned instance);
int	 node_spec_self_dir(char *dir, size_t len);

/*
 * execpath.c: the program of a worker's exec on this machine.  A name
 * without a slash is looked up in this fixed path when the file is read
 * (as systemd does); actord -n checks that every program can run.
 */
#define EXEC_SEARCH_PATH \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
int	 exec_search(const char *name, char *out, size_t outlen);
int	 exec_check(const struct actord_spec *, FILE *);

#endif /* ACTORD_CONFIG_H */
