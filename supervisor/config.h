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

#include "supervisor/spec.h"

/* Defaults, documented in actord.conf(5). */
#define DEFAULT_SHUTDOWN_TIMEOUT	10000	/* ms, whole tree */
#define DEFAULT_SPARE_MAILBOXES	16	/* arena slots for late children */
#define SPARE_MAILBOXES_MAX	4096
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
#define DEFAULT_ON_DOWN			ON_DOWN_KEEP
#define DEFAULT_WHILE_DOWN		WHILE_DOWN_QUEUE
#define DEFAULT_LOG_MAX_SIZE		10485760	/* bytes, then rotate */
#define DEFAULT_LOG_KEEP		5

/*
 * config.c: a new spec, or NULL with one line in err (err may be NULL):
 * "FILE:LINE: KEYPATH: expected WHAT, got VALUE", "FILE:LINE: syntax
 * error[: TEXT]" or "FILE: strerror".  config_load sets spec->file; in
 * config_parse_string, name stands for FILE and spec->file stays NULL.
 */
struct actord_spec *config_load(const char *path, char *err, size_t errlen);
struct actord_spec *config_parse_string(const char *text, const char *name,
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

#endif /* ACTORD_CONFIG_H */
