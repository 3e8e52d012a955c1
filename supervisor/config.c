/*
 * config.c: actord.conf (libconfig syntax) into a spec (spec.h), with every
 * key checked.  The schema is a set of key tables, one per group; a key
 * that is in no table is an error, with a suggestion when a known key is
 * close.  Every error is one line, "FILE:LINE: KEYPATH: what was expected,
 * got what", and only the first one (in the order the file is read) is
 * reported, so the message does not depend on anything but the text.
 *
 * It owns no process state and never touches a running tree: it only
 * builds a fresh spec, or returns NULL and the error.  The defaults come
 * from spec.c, the meaning of the keys from the tree code.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <libconfig.h>

#include "supervisor/config.h"
#include "supervisor/spec.h"
#include "worker/remote.h"

#define CONFIG_FILE_MAX		(1024 * 1024)	/* bytes of actord.conf */
#define KEYPATH_MAX		512	/* supervisor.children[1].env.PATH */
#define VALUE_SHOWN_MAX		60	/* bytes of a string quoted in errors */
#define MS_MAX			86400000	/* one day, in ms */
#define PERIOD_MAX		86400		/* one day, in s */
#define INTENSITY_MAX		10000
#define LOG_KEEP_MAX		1000
#define CAPACITY_MAX		1048576		/* cells in a mailbox */
#define CELL_MIN		64
#define CELL_MAX		65536
#define STATE_MAX		1073741824	/* bytes of committed state */
#define WATCHERS_MAX		65536		/* ACTOR_WATCHERS_MAX */
#define ASKS_MAX		65536		/* a reply lane of 65,536 cells */
#define MESSAGE_MAX		16777216	/* SHM_MESSAGE_MAX */
#define EXIT_STATUS_MAX		255
#define SUGGEST_DISTANCE	2

/* Enumerations and the 32-bit counters are stored through int/uint32_t. */
_Static_assert(sizeof(enum restart_type) == sizeof(int), "enum size");
_Static_assert(sizeof(enum strategy) == sizeof(int), "enum size");
_Static_assert(sizeof(enum ready_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum mailbox_overflow) == sizeof(int), "enum size");
_Static_assert(sizeof(enum on_down) == sizeof(int), "enum size");
_Static_assert(sizeof(enum while_down) == sizeof(int), "enum size");
_Static_assert(sizeof(unsigned) == sizeof(uint32_t), "unsigned size");

/* One parse: where errors go and what file they name. */
struct parser {
	const char	*file;
	char		*err;
	size_t		 errlen;
	bool		 internal;	/* the gateway's own text: groups too */
};

/* A child being parsed, and the siblings before it (for duplicates). */
struct node {
	struct child_spec	*c;
	const struct sup_spec	*parent;
	size_t			 index;
	const char		*treepath;	/* the parent's: "" or "/web" */
};

typedef int (*key_fn)(struct parser *, const config_setting_t *,
    const char *, void *);

enum key_type {
	K_U32,		/* uint32_t (or unsigned) from lo to hi */
	K_U64,		/* uint64_t from lo to hi */
	K_ENUM,		/* a string from names, stored as int */
	K_STRING,	/* a non-empty string, strdup'ed into a char * */
	K_PATH,		/* an absolute path, at most PATH_MAX - 1 bytes */
	K_FN,		/* fn(parser, setting, keypath, ctx) */
	K_LATER		/* parsed by the caller after the other keys */
};

#define KEY_WORKER	0x1	/* not allowed beside "supervisor" */

struct enum_name {
	const char	*name;
	int		 value;
};

struct key {
	const char		*name;
	enum key_type		 type;
	size_t			 off;	/* into the base object */
	int64_t			 lo, hi;
	const struct enum_name	*names;
	key_fn			 fn;
	unsigned		 flags;
};

#define KU32(n, t, f, lo, hi, fl)	{ n, K_U32, offsetof(t, f), lo, hi, \
					  NULL, NULL, fl }
#define KU64(n, t, f, lo, hi)		{ n, K_U64, offsetof(t, f), lo, hi, \
					  NULL, NULL, 0 }
#define KENUM(n, t, f, names, fl)	{ n, K_ENUM, offsetof(t, f), 0, 0, \
					  names, NULL, fl }
#define KSTR(n, t, f, fl)		{ n, K_STRING, offsetof(t, f), 0, 0, \
					  NULL, NULL, fl }
#define KPATH(n, t, f, fl)		{ n, K_PATH, offsetof(t, f), 0, 0, \
					  NULL, NULL, fl }
#define KFN(n, fn, fl)			{ n, K_FN, 0, 0, 0, NULL, fn, fl }
#define KLATER(n)			{ n, K_LATER, 0, 0, 0, NULL, NULL, 0 }
#define KEND				{ NULL, K_FN, 0, 0, 0, NULL, NULL, 0 }

struct limit_name {
	const char	*name;
	int		 resource;
};

static int	 parse_text(struct parser *, const char *,
		    struct actord_spec *);
static int	 widen_ints(struct parser *, const char *, char **);
static int	 walk_group(struct parser *, const config_setting_t *,
		    const char *, const struct key *, void *, void *, bool);
static int	 set_key(struct parser *, const config_setting_t *,
		    const char *, const struct key *, void *, void *);
static int	 parse_sup(struct parser *, const config_setting_t *,
		    const char *, struct sup_spec *, const char *);
static int	 parse_children(struct parser *, const config_setting_t *,
		    const char *, struct sup_spec *, const char *);
static int	 parse_child(struct parser *, const config_setting_t *,
		    const char *, struct sup_spec *, size_t, const char *);
static int	 check_child(struct parser *, const config_setting_t *,
		    const char *, const struct node *, char *, size_t);
static int	 parse_log(struct parser *, const config_setting_t *,
		    const char *, struct log_spec *);
static int	 key_top_runtime_dir(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_top_log(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_top_supervisor(struct parser *,
		    const config_setting_t *, const char *, void *);
static int	 key_name(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_exec(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_shutdown(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_env(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_umask(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_limits(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_success_exit(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_mailbox(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_child_log(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_capacity(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_cell(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 get_int(struct parser *, const config_setting_t *,
		    const char *, int64_t, int64_t, int64_t *);
static int	 get_string(struct parser *, const config_setting_t *,
		    const char *, const char *, const char **);
static int	 get_path(struct parser *, const config_setting_t *,
		    const char *, size_t, const char **);
static int	 dup_string(struct parser *, char **, const char *);
static int	 fail(struct parser *, const config_setting_t *, const char *,
		    const char *, ...) __attribute__((format(printf, 4, 5)));
static int	 fail_line(struct parser *, unsigned, const char *,
		    const char *, ...) __attribute__((format(printf, 4, 5)));
static int	 expected(struct parser *, const config_setting_t *,
		    const char *, const char *);
static int	 unknown_key(struct parser *, const config_setting_t *,
		    const char *, const char *, const struct key *);
static void	 describe(const config_setting_t *, char *, size_t);
static void	 quote(const char *, char *, size_t);
static void	 range_text(char *, size_t, int64_t, int64_t, bool);
static void	 enum_text(const struct enum_name *, char *, size_t);
static void	 keypath_join(char *, size_t, const char *, const char *);
static void	 keypath_index(char *, size_t, const char *, int);
static void	 cut(char *, size_t, int);
static size_t	 edit_distance(const char *, const char *);
static bool	 name_ok(const char *);
static bool	 env_name_ok(const char *);
static int	 key_top_node(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 parse_node(struct parser *, const config_setting_t *,
		    const char *, struct node_spec *);
static int	 get_node_name(struct parser *, const config_setting_t *,
		    const char *, char **);
static int	 key_node_name(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_peer_name(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_endpoint(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_listen(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_public_key(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_peers(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_clients(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 parse_peers(struct parser *, const config_setting_t *,
		    const char *, struct node_spec *, bool);
static int	 key_node_mailbox(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_groups(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_nodes(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 key_group_nodes(struct parser *, const config_setting_t *,
		    const char *, void *);
static int	 get_names(struct parser *, const config_setting_t *,
		    const char *, char ***, size_t *);
static int	 check_endpoint(struct parser *, const config_setting_t *,
		    const char *, bool, const char **);
static int	 node_check(struct parser *, const config_setting_t *,
		    struct actord_spec *);
static int	 check_nodes(struct parser *, const struct actord_spec *,
		    const struct sup_spec *, const char *, const char *);
static const char *same_id(const struct sup_spec *, const char *,
		    const char *, uint32_t);
static const struct peer_spec *name_taken(const struct node_spec *,
		    const char *, const struct peer_spec *);

static const struct enum_name restart_names[] = {
	{ "permanent", RESTART_PERMANENT },
	{ "transient", RESTART_TRANSIENT },
	{ "temporary", RESTART_TEMPORARY },
	{ NULL, 0 }
};

static const struct enum_name strategy_names[] = {
	{ "one_for_one", STRATEGY_ONE_FOR_ONE },
	{ "one_for_all", STRATEGY_ONE_FOR_ALL },
	{ "rest_for_one", STRATEGY_REST_FOR_ONE },
	{ NULL, 0 }
};

static const struct enum_name ready_names[] = {
	{ "exec", READY_EXEC },
	{ "fd", READY_FD },
	{ "sd_notify", READY_SD_NOTIFY },
	{ "actor", READY_ACTOR },
	{ NULL, 0 }
};

static const struct enum_name start_names[] = {
	{ "parallel", START_PARALLEL },
	{ "ordered", START_ORDERED },
	{ NULL, 0 }
};

static const struct enum_name overflow_names[] = {
	{ "block", OVERFLOW_BLOCK },
	{ "reject", OVERFLOW_REJECT },
	{ "drop_oldest", OVERFLOW_DROP_OLDEST },
	{ "drop_newest", OVERFLOW_DROP_NEWEST },
	{ "coalesce", OVERFLOW_COALESCE },
	{ NULL, 0 }
};

static const struct enum_name on_down_names[] = {
	{ "keep", ON_DOWN_KEEP },
	{ "fail", ON_DOWN_FAIL },
	{ NULL, 0 }
};

static const struct enum_name while_down_names[] = {
	{ "queue", WHILE_DOWN_QUEUE },
	{ "reject", WHILE_DOWN_REJECT },
	{ NULL, 0 }
};

static const struct limit_name limit_names[] = {
	{ "nofile", RLIMIT_NOFILE },
	{ "core", RLIMIT_CORE },
	{ "nproc", RLIMIT_NPROC },
	{ "as", RLIMIT_AS },
	{ "fsize", RLIMIT_FSIZE },
	{ "stack", RLIMIT_STACK },
	{ "memlock", RLIMIT_MEMLOCK },
	{ "cpu", RLIMIT_CPU },
	{ "data", RLIMIT_DATA },
	{ NULL, 0 }
};

/* The keys of each group, in the order the man page lists them. */
static const struct key top_keys[] = {
	KFN("runtime_dir", key_top_runtime_dir, 0),
	KU32("shutdown_timeout", struct actord_spec, shutdown_timeout,
	    0, MS_MAX, 0),
	KU32("spare_mailboxes", struct actord_spec, spare_mailboxes,
	    0, SPARE_MAILBOXES_MAX, 0),
	KU32("owed_max", struct actord_spec, owed_max, 1, OWED_MAX_MAX, 0),
	KFN("log", key_top_log, 0),
	KPATH("pidfile", struct actord_spec, pidfile, 0),
	KSTR("control_group", struct actord_spec, control_group, 0),
	KPATH("cgroup", struct actord_spec, cgroup, 0),
	KSTR("metrics_listen", struct actord_spec, metrics_listen, 0),
	KFN("node", key_top_node, 0),
	KFN("supervisor", key_top_supervisor, 0),
	KEND
};

static const struct key sup_keys[] = {
	KENUM("strategy", struct sup_spec, strategy, strategy_names, 0),
	KU32("intensity", struct sup_spec, intensity, 0, INTENSITY_MAX, 0),
	KU32("period", struct sup_spec, period, 1, PERIOD_MAX, 0),
	KU32("backoff_min", struct sup_spec, backoff_min, 0, MS_MAX, 0),
	KU32("backoff_max", struct sup_spec, backoff_max, 0, MS_MAX, 0),
	KU32("min_uptime", struct sup_spec, min_uptime, 0, MS_MAX, 0),
	KENUM("start", struct sup_spec, start, start_names, 0),
	KLATER("children"),
	KEND
};

static const struct key child_keys[] = {
	KFN("name", key_name, 0),
	KFN("exec", key_exec, KEY_WORKER),
	KENUM("restart", struct child_spec, restart, restart_names, 0),
	KFN("shutdown", key_shutdown, KEY_WORKER),
	KU32("start_timeout", struct child_spec, start_timeout, 1, MS_MAX,
	    KEY_WORKER),
	KENUM("ready", struct child_spec, ready, ready_names, KEY_WORKER),
	KFN("env", key_env, KEY_WORKER),
	KPATH("cwd", struct child_spec, cwd, KEY_WORKER),
	KSTR("user", struct child_spec, user, KEY_WORKER),
	KSTR("group", struct child_spec, group, KEY_WORKER),
	KFN("umask", key_umask, KEY_WORKER),
	KFN("limits", key_limits, KEY_WORKER),
	KFN("success_exit", key_success_exit, KEY_WORKER),
	KFN("mailbox", key_mailbox, KEY_WORKER),
	KFN("log", key_child_log, KEY_WORKER),
	KU32("instances", struct child_spec, instances, 1, SPEC_INSTANCES_MAX,
	    KEY_WORKER),
	KFN("nodes", key_nodes, KEY_WORKER),
	KENUM("start", struct child_spec, start, start_names, KEY_WORKER),
	KLATER("supervisor"),
	KEND
};

static const struct key mailbox_keys[] = {
	KFN("capacity", key_capacity, 0),
	KFN("cell", key_cell, 0),
	KENUM("overflow", struct mailbox_spec, overflow, overflow_names, 0),
	KU32("block_timeout", struct mailbox_spec, block_timeout, 0, MS_MAX,
	    0),
	KU32("max_attempts", struct mailbox_spec, max_attempts, 1,
	    UINT32_MAX, 0),
	KENUM("on_down", struct mailbox_spec, on_down, on_down_names, 0),
	KENUM("while_down", struct mailbox_spec, while_down,
	    while_down_names, 0),
	KU32("state", struct mailbox_spec, state, 0, STATE_MAX, 0),
	KU32("watchers", struct mailbox_spec, watchers, 1, WATCHERS_MAX, 0),
	KU32("asks", struct mailbox_spec, asks, 1, ASKS_MAX, 0),
	KU32("max_message", struct mailbox_spec, max_message, 0, MESSAGE_MAX,
	    0),
	KEND
};

static const struct key node_keys[] = {
	KFN("name", key_node_name, 0),
	KFN("listen", key_listen, 0),
	KPATH("secret_key_file", struct node_spec, secret_key_file, 0),
	KFN("peers", key_peers, 0),
	KFN("clients", key_clients, 0),
	KU32("heartbeat", struct node_spec, heartbeat, HEARTBEAT_MIN,
	    HEARTBEAT_MAX, 0),
	KU32("heartbeat_timeout", struct node_spec, heartbeat_timeout,
	    HEARTBEAT_MIN, HEARTBEAT_TIMEOUT_MAX, 0),
	KU32("send_queue", struct node_spec, send_queue, 0, SEND_QUEUE_MAX,
	    0),
	KU32("max_frame", struct node_spec, max_frame, MAX_FRAME_MIN,
	    MAX_FRAME_MAX, 0),
	KU32("bad_frames", struct node_spec, bad_frames, 1, BAD_FRAMES_MAX,
	    0),
	KFN("mailbox", key_node_mailbox, 0),
	KPATH("gateway", struct node_spec, gateway, 0),
	KSTR("user", struct node_spec, user, 0),
	KSTR("group", struct node_spec, group, 0),
	KFN("groups", key_groups, 0),
	KEND
};

static const struct key peer_keys[] = {
	KFN("name", key_peer_name, 0),
	KFN("endpoint", key_endpoint, 0),
	KFN("public_key", key_public_key, 0),
	KEND
};

static const struct key client_keys[] = {
	KFN("name", key_peer_name, 0),
	KFN("public_key", key_public_key, 0),
	KEND
};

/* The gateway's own text (node_spec_format): a group spanning nodes. */
static const struct key group_keys[] = {
	KSTR("path", struct group_spec, path, 0),
	KU32("instances", struct group_spec, instances, 1,
	    SPEC_INSTANCES_MAX, 0),
	KFN("nodes", key_group_nodes, 0),
	KEND
};

static const struct key log_keys[] = {
	KPATH("path", struct log_spec, path, 0),
	KU64("max_size", struct log_spec, max_size, 0, INT64_MAX),
	KU32("keep", struct log_spec, keep, 0, LOG_KEEP_MAX, 0),
	KEND
};

/*
 * libconfig 1.5 leaks the buffer of the string it was scanning when it
 * meets a syntax error (the text "" is enough).  LeakSanitizer would turn
 * that into the failure of any sanitized program that reads such a file,
 * actord -n included.  The leak is libconfig's and bounded by the size of
 * the file, so a sanitized build is told to expect it.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CONFIG_ASAN	1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CONFIG_ASAN	1
#endif
#ifdef CONFIG_ASAN
const char	*__lsan_default_suppressions(void);

const char *
__lsan_default_suppressions(void)
{
	return "leak:strbuf_append\nleak:libconfig.so\n";
}
#endif

struct actord_spec *
config_load(const char *path, char *err, size_t errlen)
{
	struct parser		 p = { path, err, errlen, false };
	struct actord_spec	*spec;
	FILE			*fp;
	char			*text;
	size_t			 n;
	int			 saved;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if ((fp = fopen(path, "re")) == NULL) {
		fail_line(&p, 0, NULL, "%s", strerror(errno));
		return NULL;
	}
	if ((text = malloc(CONFIG_FILE_MAX + 1)) == NULL) {
		fclose(fp);
		fail_line(&p, 0, NULL, "out of memory");
		return NULL;
	}
	n = fread(text, 1, CONFIG_FILE_MAX + 1, fp);
	if (ferror(fp)) {
		saved = errno;
		fclose(fp);
		free(text);
		fail_line(&p, 0, NULL, "%s", strerror(saved));
		return NULL;
	}
	fclose(fp);
	if (n > CONFIG_FILE_MAX) {
		free(text);
		fail_line(&p, 0, NULL, "larger than %d bytes", CONFIG_FILE_MAX);
		return NULL;
	}
	if (memchr(text, '\0', n) != NULL) {
		free(text);
		fail_line(&p, 0, NULL, "not a text file (it holds a NUL byte)");
		return NULL;
	}
	text[n] = '\0';

	spec = spec_new();
	if (spec == NULL || (spec->file = strdup(path)) == NULL) {
		spec_free(spec);
		free(text);
		fail_line(&p, 0, NULL, "out of memory");
		return NULL;
	}
	if (parse_text(&p, text, spec) == -1) {
		spec_free(spec);
		spec = NULL;
	}
	free(text);
	return spec;
}

struct actord_spec *
config_parse_string(const char *text, const char *name, char *err,
    size_t errlen)
{
	struct parser		 p = { name, err, errlen, false };
	struct actord_spec	*spec;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if ((spec = spec_new()) == NULL) {
		fail_line(&p, 0, NULL, "out of memory");
		return NULL;
	}
	if (parse_text(&p, text, spec) == -1) {
		spec_free(spec);
		return NULL;
	}
	return spec;
}

/* libconfig's pass, then ours over the settings it built. */
static int
parse_text(struct parser *p, const char *text, struct actord_spec *spec)
{
	config_t	 cfg;
	char		*wide = NULL;
	const char	*msg;
	int		 rc;

	if (widen_ints(p, text, &wide) == -1)
		return -1;
	config_init(&cfg);
	if (config_read_string(&cfg, wide) != CONFIG_TRUE) {
		msg = config_error_text(&cfg);
		/* libconfig's usual text is "syntax error": say it once. */
		if (msg == NULL || strcmp(msg, "syntax error") == 0)
			fail_line(p, config_error_line(&cfg), NULL,
			    "syntax error");
		else
			fail_line(p, config_error_line(&cfg), NULL,
			    "syntax error: %s", msg);
		config_destroy(&cfg);
		free(wide);
		return -1;
	}
	rc = walk_group(p, config_root_setting(&cfg), "", top_keys, spec, spec,
	    false);
	if (rc == 0)
		rc = node_check(p, config_root_setting(&cfg), spec);
	config_destroy(&cfg);
	free(wide);
	return rc;
}

/*
 * libconfig 1.5 reads an integer literal without an L suffix with atoi(),
 * so 5000000000 silently becomes 705032704.  This pass copies the text and
 * adds the L to every literal that does not fit in 32 bits, so libconfig
 * reads it as a 64-bit integer and our range checks see the real value.
 * It also refuses @include, whose files would escape this pass, and
 * literals too large for 64 bits.  Strings and comments are copied as they
 * are; the line count is unchanged.
 */
static int
widen_ints(struct parser *p, const char *text, char **out)
{
	const char	*s = text, *start, *end;
	char		*buf, *o, lit[64];
	unsigned	 line = 1;
	bool		 hex, suffix, big;
	unsigned long long u;
	long long	 v;

	if ((buf = malloc(strlen(text) * 2 + 1)) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	o = buf;
	while (*s != '\0') {
		if (*s == '"') {		/* a string, with escapes */
			*o++ = *s++;
			while (*s != '\0' && *s != '"') {
				if (*s == '\\' && s[1] != '\0')
					*o++ = *s++;
				if (*s == '\n')
					line++;
				*o++ = *s++;
			}
			if (*s == '"')
				*o++ = *s++;
		} else if (*s == '#' || (s[0] == '/' && s[1] == '/')) {
			while (*s != '\0' && *s != '\n')
				*o++ = *s++;
		} else if (s[0] == '/' && s[1] == '*') {
			*o++ = *s++;
			*o++ = *s++;
			while (*s != '\0' && !(s[0] == '*' && s[1] == '/')) {
				if (*s == '\n')
					line++;
				*o++ = *s++;
			}
			if (*s != '\0') {
				*o++ = *s++;
				*o++ = *s++;
			}
		} else if (strncmp(s, "@include", 8) == 0) {
			free(buf);
			return fail_line(p, line, NULL,
			    "syntax error: @include is not supported");
		} else if (isalpha((unsigned char)*s) || *s == '*') {
			/* A setting name or a boolean: digits in it are not
			 * numbers. */
			while (isalnum((unsigned char)*s) || *s == '-' ||
			    *s == '_' || *s == '*')
				*o++ = *s++;
		} else if (*s == '.' && isdigit((unsigned char)s[1])) {
			/* A float such as .5e3: no integer in it. */
			while (isdigit((unsigned char)*s) || *s == '.' ||
			    *s == 'e' || *s == 'E' || ((*s == '-' ||
			    *s == '+') && (s[-1] == 'e' || s[-1] == 'E')))
				*o++ = *s++;
		} else if (isdigit((unsigned char)*s) ||
		    ((*s == '-' || *s == '+') &&
		    isdigit((unsigned char)s[1]))) {
			start = s;
			if (*s == '-' || *s == '+')
				s++;
			hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
			if (hex) {
				s += 2;
				while (isxdigit((unsigned char)*s))
					s++;
			} else {
				while (isdigit((unsigned char)*s))
					s++;
				if (*s == '.' || *s == 'e' || *s == 'E') {
					/* A float: copy it whole. */
					while (isdigit((unsigned char)*s) ||
					    *s == '.' || *s == 'e' ||
					    *s == 'E' || ((*s == '-' ||
					    *s == '+') && (s[-1] == 'e' ||
					    s[-1] == 'E')))
						s++;
					memcpy(o, start, s - start);
					o += s - start;
					continue;
				}
			}
			end = s;
			suffix = *s == 'L';
			if ((size_t)(end - start) >= sizeof(lit)) {
				u = ULLONG_MAX;
				v = LLONG_MAX;
				errno = ERANGE;
			} else {
				memcpy(lit, start, end - start);
				lit[end - start] = '\0';
				errno = 0;
				if (hex) {
					u = strtoull(lit, NULL, 16);
					v = (long long)u;
					if (errno == 0 && u > LLONG_MAX)
						errno = ERANGE;
				} else
					v = strtoll(lit, NULL, 10);
			}
			if (errno == ERANGE) {
				free(buf);
				return fail_line(p, line, NULL,
				    "syntax error: integer %.*s is too large",
				    (int)(end - start > 40 ? 40 :
				    end - start), start);
			}
			big = hex ? v > INT32_MAX :
			    (v > INT32_MAX || v < INT32_MIN);
			memcpy(o, start, end - start);
			o += end - start;
			if (big && !suffix)
				*o++ = 'L';
		} else {
			if (*s == '\n')
				line++;
			*o++ = *s++;
		}
	}
	*o = '\0';
	*out = buf;
	return 0;
}

/*
 * Every member of group g, in file order, through the key table: base is
 * the object the table's offsets point into, ctx what K_FN handlers get.
 * In a supervisor node, worker keys are refused.
 */
static int
walk_group(struct parser *p, const config_setting_t *g, const char *keypath,
    const struct key *keys, void *base, void *ctx, bool supnode)
{
	const config_setting_t	*m;
	const struct key	*k;
	const char		*name;
	char			 path[KEYPATH_MAX];
	int			 i, n;

	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		m = config_setting_get_elem(g, i);
		name = config_setting_name(m);
		keypath_join(path, sizeof(path), keypath, name);
		for (k = keys; k->name != NULL; k++)
			if (strcmp(k->name, name) == 0)
				break;
		if (k->name == NULL)
			return unknown_key(p, m, path, name, keys);
		if (supnode && (k->flags & KEY_WORKER))
			return fail(p, m, path, "not allowed beside "
			    "\"supervisor\" (a supervisor node takes only "
			    "name, restart and supervisor)");
		if (set_key(p, m, path, k, base, ctx) == -1)
			return -1;
	}
	return 0;
}

static int
set_key(struct parser *p, const config_setting_t *s, const char *path,
    const struct key *k, void *base, void *ctx)
{
	char		 what[160], **sp;
	const char	*str = NULL;
	const struct enum_name *e;
	int64_t		 v;

	switch (k->type) {
	case K_U32:
		if (get_int(p, s, path, k->lo, k->hi, &v) == -1)
			return -1;
		*(uint32_t *)((char *)base + k->off) = (uint32_t)v;
		return 0;
	case K_U64:
		if (get_int(p, s, path, k->lo, k->hi, &v) == -1)
			return -1;
		*(uint64_t *)((char *)base + k->off) = (uint64_t)v;
		return 0;
	case K_ENUM:
		enum_text(k->names, what, sizeof(what));
		if (config_setting_type(s) != CONFIG_TYPE_STRING)
			return expected(p, s, path, what);
		str = config_setting_get_string(s);
		for (e = k->names; e->name != NULL; e++)
			if (strcmp(e->name, str) == 0)
				break;
		if (e->name == NULL)
			return expected(p, s, path, what);
		*(int *)((char *)base + k->off) = e->value;
		return 0;
	case K_STRING:
		if (get_string(p, s, path, "a non-empty string", &str) == -1)
			return -1;
		sp = (char **)((char *)base + k->off);
		free(*sp);
		*sp = NULL;
		return dup_string(p, sp, str);
	case K_PATH:
		if (get_path(p, s, path, PATH_MAX - 1, &str) == -1)
			return -1;
		sp = (char **)((char *)base + k->off);
		free(*sp);
		*sp = NULL;
		return dup_string(p, sp, str);
	case K_FN:
		return k->fn(p, s, path, ctx);
	case K_LATER:
		return 0;
	}
	return 0;
}

/* A supervisor group: its own keys first, then its children in order. */
static int
parse_sup(struct parser *p, const config_setting_t *g, const char *keypath,
    struct sup_spec *sup, const char *treepath)
{
	const config_setting_t	*min, *max, *children;
	char			 path[KEYPATH_MAX];

	if (!config_setting_is_group(g))
		return expected(p, g, keypath, "a group");
	if (walk_group(p, g, keypath, sup_keys, sup, sup, false) == -1)
		return -1;
	if (sup->backoff_min > sup->backoff_max) {
		min = config_setting_get_member(g, "backoff_min");
		max = config_setting_get_member(g, "backoff_max");
		if (max != NULL) {
			keypath_join(path, sizeof(path), keypath,
			    "backoff_max");
			return fail(p, max, path, "expected an integer >= "
			    "backoff_min (%" PRIu32 "), got %" PRIu32,
			    sup->backoff_min, sup->backoff_max);
		}
		keypath_join(path, sizeof(path), keypath, "backoff_min");
		return fail(p, min, path, "expected an integer <= "
		    "backoff_max (%" PRIu32 "), got %" PRIu32,
		    sup->backoff_max, sup->backoff_min);
	}
	if ((children = config_setting_get_member(g, "children")) == NULL)
		return 0;
	keypath_join(path, sizeof(path), keypath, "children");
	return parse_children(p, children, path, sup, treepath);
}

static int
parse_children(struct parser *p, const config_setting_t *s,
    const char *keypath, struct sup_spec *sup, const char *treepath)
{
	char	path[KEYPATH_MAX];
	int	i, n;

	n = config_setting_length(s);
	/* "children = [];" is an empty array to libconfig: no children. */
	if (config_setting_is_array(s) && n == 0)
		return 0;
	if (!config_setting_is_list(s))
		return expected(p, s, keypath,
		    "a list of children such as ( { name = ...; }, ... )");
	if (n == 0)
		return 0;
	if ((sup->children = calloc(n, sizeof(*sup->children))) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		keypath_index(path, sizeof(path), keypath, i);
		if (parse_child(p, config_setting_get_elem(s, i), path, sup,
		    i, treepath) == -1)
			return -1;
	}
	return 0;
}

/*
 * One child: its own keys in file order, then what needs them all (the
 * required keys, the path length), then its supervisor group if any.
 */
static int
parse_child(struct parser *p, const config_setting_t *g, const char *keypath,
    struct sup_spec *parent, size_t index, const char *treepath)
{
	struct node		 node;
	struct child_spec	*c = &parent->children[index];
	const config_setting_t	*supg;
	char			 mytree[SPEC_PATH_MAX + 16], path[KEYPATH_MAX];

	spec_child_init(c);
	parent->nchildren = index + 1;	/* so spec_free frees it */
	if (!config_setting_is_group(g))
		return expected(p, g, keypath, "a group such as "
		    "{ name = ...; exec = [...]; }");
	c->line = config_setting_source_line(g);
	supg = config_setting_get_member(g, "supervisor");
	c->kind = supg != NULL ? CHILD_SUPERVISOR : CHILD_WORKER;
	node.c = c;
	node.parent = parent;
	node.index = index;
	node.treepath = treepath;
	if (walk_group(p, g, keypath, child_keys, c, &node, supg != NULL) == -1)
		return -1;
	if (check_child(p, g, keypath, &node, mytree, sizeof(mytree)) == -1)
		return -1;
	if (supg == NULL)
		return 0;
	if ((c->sup = calloc(1, sizeof(*c->sup))) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	spec_sup_init(c->sup);
	keypath_join(path, sizeof(path), keypath, "supervisor");
	return parse_sup(p, supg, path, c->sup, mytree);
}

/* What a child needs once all its keys are read; its tree path to mytree. */
static int
check_child(struct parser *p, const config_setting_t *g, const char *keypath,
    const struct node *node, char *mytree, size_t len)
{
	struct child_spec	*c = node->c;
	const config_setting_t	*name;
	char			 path[KEYPATH_MAX], shown[VALUE_SHOWN_MAX + 8];
	int			 n;

	if (c->name == NULL)
		return fail(p, g, keypath, "missing required key \"name\"");
	if (c->kind == CHILD_WORKER && c->argv == NULL)
		return fail(p, g, keypath,
		    "missing required key \"exec\" (or \"supervisor\")");
	if (c->ready == READY_ACTOR)
		c->has_mailbox = true;

	/* The longest tree path of this node: /parent/name/N-1. */
	if (c->instances > 0)
		n = snprintf(mytree, len, "%s/%s/%u", node->treepath, c->name,
		    c->instances - 1);
	else
		n = snprintf(mytree, len, "%s/%s", node->treepath, c->name);
	if (n < 0 || (size_t)n >= SPEC_PATH_MAX) {
		name = config_setting_get_member(g, "name");
		keypath_join(path, sizeof(path), keypath, "name");
		quote(mytree, shown, sizeof(shown));
		return fail(p, name, path, "expected a node path of at most "
		    "%d characters, got %s (%d characters)", SPEC_PATH_MAX - 1,
		    shown, n);
	}
	return 0;
}

static int
parse_log(struct parser *p, const config_setting_t *g, const char *keypath,
    struct log_spec *log)
{
	if (!config_setting_is_group(g))
		return expected(p, g, keypath,
		    "a group such as { path = \"/var/log/x.log\"; }");
	if (walk_group(p, g, keypath, log_keys, log, log, false) == -1)
		return -1;
	if (log->path == NULL)
		return fail(p, g, keypath, "missing required key \"path\"");
	return 0;
}

static int
key_top_runtime_dir(struct parser *p, const config_setting_t *s,
    const char *path, void *ctx)
{
	struct actord_spec	*spec = ctx;
	const char		*str = NULL;

	if (get_path(p, s, path, SPEC_RUNTIME_DIR_MAX, &str) == -1)
		return -1;
	free(spec->runtime_dir);
	spec->runtime_dir = NULL;
	return dup_string(p, &spec->runtime_dir, str);
}

static int
key_top_log(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct actord_spec *spec = ctx;

	return parse_log(p, s, path, &spec->log);
}

static int
key_top_supervisor(struct parser *p, const config_setting_t *s,
    const char *path, void *ctx)
{
	struct actord_spec *spec = ctx;

	return parse_sup(p, s, path, &spec->root, "");
}

static int
key_name(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct node		*node = ctx;
	const struct child_spec	*sib;
	const char		*str = NULL;
	char			 what[128], shown[VALUE_SHOWN_MAX + 8];
	size_t			 i;

	snprintf(what, sizeof(what), "a name of letters, digits, \"_\", "
	    "\".\" and \"-\" (at most %d)", SPEC_NAME_MAX);
	if (get_string(p, s, path, what, &str) == -1)
		return -1;
	if (!name_ok(str))
		return expected(p, s, path, what);
	for (i = 0; i < node->index; i++) {
		sib = &node->parent->children[i];
		if (sib->name != NULL && strcmp(sib->name, str) == 0) {
			quote(str, shown, sizeof(shown));
			return fail(p, s, path,
			    "duplicate name %s (first at line %u)", shown,
			    sib->line);
		}
	}
	return dup_string(p, &node->c->name, str);
}

static int
key_exec(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct child_spec	*c = ((struct node *)ctx)->c;
	const config_setting_t	*e;
	const char		*what = "a non-empty array of strings such as "
				    "[\"/usr/bin/db\", \"--port\", \"5000\"]";
	char			 epath[KEYPATH_MAX], prog[PATH_MAX];
	int			 i, n;

	n = config_setting_length(s);
	if ((!config_setting_is_array(s) && !config_setting_is_list(s)) ||
	    n <= 0)
		return expected(p, s, path, what);
	for (i = 0; i < n; i++) {
		e = config_setting_get_elem(s, i);
		keypath_index(epath, sizeof(epath), path, i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return expected(p, e, epath, "a string");
		if (i == 0 && config_setting_get_string(e)[0] == '\0')
			return expected(p, e, epath, "a program to run");
	}
	if ((c->argv = calloc((size_t)n + 1, sizeof(*c->argv))) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	for (i = 0; i < n; i++)
		if (dup_string(p, &c->argv[i],
		    config_setting_get_string(config_setting_get_elem(s, i)))
		    == -1)
			return -1;
	/* A bare name: looked up now, in a fixed path (execpath.c). */
	if (strchr(c->argv[0], '/') == NULL) {
		e = config_setting_get_elem(s, 0);
		keypath_index(epath, sizeof(epath), path, 0);
		if (exec_search(c->argv[0], prog, sizeof(prog)) == -1)
			return fail(p, e, epath, "no program \"%s\" in %s; "
			    "give its path", c->argv[0], EXEC_SEARCH_PATH);
		free(c->argv[0]);
		c->argv[0] = NULL;
		if (dup_string(p, &c->argv[0], prog) == -1)
			return -1;
	}
	return 0;
}

static int
key_shutdown(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct child_spec	*c = ((struct node *)ctx)->c;
	const char		*str = NULL;
	char			 what[128];
	int64_t			 v;

	snprintf(what, sizeof(what), "milliseconds from 0 to %d, "
	    "\"brutal_kill\" or \"infinity\"", MS_MAX);
	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		str = config_setting_get_string(s);
		if (strcmp(str, "brutal_kill") == 0)
			c->shutdown = SHUTDOWN_BRUTAL_KILL;
		else if (strcmp(str, "infinity") == 0)
			c->shutdown = SHUTDOWN_INFINITY;
		else
			return expected(p, s, path, what);
		return 0;
	}
	if (config_setting_type(s) != CONFIG_TYPE_INT &&
	    config_setting_type(s) != CONFIG_TYPE_INT64)
		return expected(p, s, path, what);
	v = config_setting_get_int64(s);
	if (v < 0 || v > MS_MAX)
		return expected(p, s, path, what);
	c->shutdown = v;
	return 0;
}

static int
key_env(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct child_spec	*c = ((struct node *)ctx)->c;
	const config_setting_t	*m;
	const char		*name;
	char			 vpath[KEYPATH_MAX];
	int			 i, n;

	if (!config_setting_is_group(s))
		return expected(p, s, path,
		    "a group such as { PATH = \"/usr/bin:/bin\"; }");
	n = config_setting_length(s);
	if (n == 0)
		return 0;
	if ((c->env = calloc(n, sizeof(*c->env))) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		m = config_setting_get_elem(s, i);
		name = config_setting_name(m);
		keypath_join(vpath, sizeof(vpath), path, name);
		/* actord sets these itself; a clash would break the child. */
		if (strncmp(name, "ACTORD_", 7) == 0 ||
		    strcmp(name, "NOTIFY_SOCKET") == 0)
			return fail(p, m, vpath, "reserved variable \"%s\" "
			    "(actord sets ACTORD_* and NOTIFY_SOCKET)", name);
		if (!env_name_ok(name))
			return fail(p, m, vpath, "expected a variable name of "
			    "letters, digits and \"_\", got \"%s\"", name);
		if (config_setting_type(m) != CONFIG_TYPE_STRING)
			return expected(p, m, vpath, "a string");
		c->nenv++;
		if (dup_string(p, &c->env[i].name, name) == -1 ||
		    dup_string(p, &c->env[i].value,
		    config_setting_get_string(m)) == -1)
			return -1;
	}
	return 0;
}

static int
key_umask(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct child_spec	*c = ((struct node *)ctx)->c;
	const char		*str, *what = "a string of octal digits "
				    "from \"0\" to \"0777\" such as \"027\"";
	size_t			 i, len;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return expected(p, s, path, what);
	str = config_setting_get_string(s);
	len = strlen(str);
	if (len == 0 || len > 4)
		return expected(p, s, path, what);
	for (i = 0; i < len; i++)
		if (str[i] < '0' || str[i] > '7')
			return expected(p, s, path, what);
	if (strtol(str, NULL, 8) > 0777)
		return expected(p, s, path, what);
	c->umask = (int)strtol(str, NULL, 8);
	return 0;
}

static int
key_limits(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct child_spec	*c = ((struct node *)ctx)->c;
	const config_setting_t	*m;
	const struct limit_name	*l;
	const char		*name, *best;
	const char		*what = "an integer >= 0 or \"infinity\"";
	char			 lpath[KEYPATH_MAX], shown[VALUE_SHOWN_MAX + 8];
	size_t			 d, bestd;
	int			 i, n, type;

	if (!config_setting_is_group(s))
		return expected(p, s, path,
		    "a group such as { nofile = 4096; core = 0; }");
	n = config_setting_length(s);
	if (n == 0)
		return 0;
	if ((c->limits = calloc(n, sizeof(*c->limits))) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		m = config_setting_get_elem(s, i);
		name = config_setting_name(m);
		keypath_join(lpath, sizeof(lpath), path, name);
		best = NULL;
		bestd = SIZE_MAX;
		for (l = limit_names; l->name != NULL; l++) {
			if (strcmp(l->name, name) == 0)
				break;
			d = edit_distance(l->name, name);
			if (d < bestd && d <= SUGGEST_DISTANCE &&
			    d < strlen(l->name)) {
				best = l->name;
				bestd = d;
			}
		}
		if (l->name == NULL) {
			quote(name, shown, sizeof(shown));
			if (best != NULL)
				return fail(p, m, lpath, "unknown key %s (did "
				    "you mean \"%s\"?)", shown, best);
			return fail(p, m, lpath, "unknown key %s", shown);
		}
		type = config_setting_type(m);
		if (type == CONFIG_TYPE_STRING &&
		    strcmp(config_setting_get_string(m), "infinity") == 0)
			c->limits[i].value = RLIM_INFINITY;
		else if ((type == CONFIG_TYPE_INT ||
		    type == CONFIG_TYPE_INT64) &&
		    config_setting_get_int64(m) >= 0)
			c->limits[i].value =
			    (rlim_t)config_setting_get_int64(m);
		else
			return expected(p, m, lpath, what);
		c->limits[i].resource = l->resource;
		c->nlimits++;
	}
	return 0;
}

static int
key_success_exit(struct parser *p, const config_setting_t *s,
    const char *path, void *ctx)
{
	struct child_spec	*c = ((struct node *)ctx)->c;
	char			 epath[KEYPATH_MAX];
	int64_t			 v;
	int			 i, n;

	n = config_setting_length(s);
	if (!config_setting_is_array(s) && !config_setting_is_list(s))
		return expected(p, s, path,
		    "an array of exit statuses such as [0, 3]");
	if (n == 0)
		return 0;
	if ((c->success_exit = calloc(n, sizeof(*c->success_exit))) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		keypath_index(epath, sizeof(epath), path, i);
		if (get_int(p, config_setting_get_elem(s, i), epath, 0,
		    EXIT_STATUS_MAX, &v) == -1)
			return -1;
		c->success_exit[i] = (int)v;
		c->nsuccess_exit++;
	}
	return 0;
}

static int
key_mailbox(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct child_spec *c = ((struct node *)ctx)->c;

	if (!config_setting_is_group(s))
		return expected(p, s, path,
		    "a group such as { capacity = 1024; cell = 256; }");
	if (walk_group(p, s, path, mailbox_keys, &c->mailbox, &c->mailbox,
	    false) == -1)
		return -1;
	c->has_mailbox = true;
	return 0;
}

static int
key_child_log(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct child_spec *c = ((struct node *)ctx)->c;

	return parse_log(p, s, path, &c->log);
}

static int
key_capacity(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct mailbox_spec	*mb = ctx;
	char			 what[96];
	int64_t			 v;

	snprintf(what, sizeof(what), "a power of two from 2 to %d",
	    CAPACITY_MAX);
	if (config_setting_type(s) != CONFIG_TYPE_INT &&
	    config_setting_type(s) != CONFIG_TYPE_INT64)
		return expected(p, s, path, what);
	v = config_setting_get_int64(s);
	if (v < 2 || v > CAPACITY_MAX || (v & (v - 1)) != 0)
		return expected(p, s, path, what);
	mb->capacity = (uint32_t)v;
	return 0;
}

static int
key_cell(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct mailbox_spec	*mb = ctx;
	char			 what[96];
	int64_t			 v;

	snprintf(what, sizeof(what), "a multiple of 8 from %d to %d",
	    CELL_MIN, CELL_MAX);
	if (config_setting_type(s) != CONFIG_TYPE_INT &&
	    config_setting_type(s) != CONFIG_TYPE_INT64)
		return expected(p, s, path, what);
	v = config_setting_get_int64(s);
	if (v < CELL_MIN || v > CELL_MAX || v % 8 != 0)
		return expected(p, s, path, what);
	mb->cell = (uint32_t)v;
	return 0;
}

static int
get_int(struct parser *p, const config_setting_t *s, const char *path,
    int64_t lo, int64_t hi, int64_t *out)
{
	char	what[96];
	int64_t	v;
	int	type = config_setting_type(s);

	if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64) {
		range_text(what, sizeof(what), lo, hi, false);
		return expected(p, s, path, what);
	}
	v = config_setting_get_int64(s);
	if (v < lo || v > hi) {
		range_text(what, sizeof(what), lo, hi, v > hi);
		return expected(p, s, path, what);
	}
	*out = v;
	return 0;
}

static int
get_string(struct parser *p, const config_setting_t *s, const char *path,
    const char *what, const char **out)
{
	if (config_setting_type(s) != CONFIG_TYPE_STRING ||
	    config_setting_get_string(s)[0] == '\0')
		return expected(p, s, path, what);
	*out = config_setting_get_string(s);
	return 0;
}

/* An absolute path of at most max bytes. */
static int
get_path(struct parser *p, const config_setting_t *s, const char *path,
    size_t max, const char **out)
{
	const char	*str = NULL;
	char		 what[64];

	snprintf(what, sizeof(what), "an absolute path of at most %zu bytes",
	    max);
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return expected(p, s, path, what);
	str = config_setting_get_string(s);
	if (str[0] != '/' || strlen(str) > max)
		return expected(p, s, path, what);
	*out = str;
	return 0;
}

static int
dup_string(struct parser *p, char **dst, const char *src)
{
	if ((*dst = strdup(src)) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	return 0;
}

/* "FILE:LINE: KEYPATH: message", at the line of setting s. */
static int
fail(struct parser *p, const config_setting_t *s, const char *path,
    const char *fmt, ...)
{
	char	msg[512];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fail_line(p, s != NULL ? config_setting_source_line(s) : 0,
	    path, "%s", msg);
}

/* "FILE:LINE: KEYPATH: message"; no LINE when 0, no KEYPATH when empty. */
static int
fail_line(struct parser *p, unsigned line, const char *path, const char *fmt,
    ...)
{
	char	msg[512], where[64];
	va_list	ap;

	if (p->err == NULL || p->errlen == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	where[0] = '\0';
	if (line > 0)
		snprintf(where, sizeof(where), ":%u", line);
	if (path != NULL && path[0] != '\0')
		snprintf(p->err, p->errlen, "%s%s: %s: %s", p->file, where,
		    path, msg);
	else
		snprintf(p->err, p->errlen, "%s%s: %s", p->file, where, msg);
	return -1;
}

static int
expected(struct parser *p, const config_setting_t *s, const char *path,
    const char *what)
{
	char got[VALUE_SHOWN_MAX + 16];

	describe(s, got, sizeof(got));
	return fail(p, s, path, "expected %s, got %s", what, got);
}

/* Unknown key "name" in a group with these keys; suggest a close one. */
static int
unknown_key(struct parser *p, const config_setting_t *s, const char *path,
    const char *name, const struct key *keys)
{
	const struct key	*k;
	const char		*best = NULL;
	char			 shown[VALUE_SHOWN_MAX + 8];
	size_t			 d, bestd = SIZE_MAX;

	for (k = keys; k->name != NULL; k++) {
		d = edit_distance(k->name, name);
		/* Not for short keys, where everything is close. */
		if (d < bestd && d <= SUGGEST_DISTANCE && d < strlen(k->name)) {
			best = k->name;
			bestd = d;
		}
	}
	quote(name, shown, sizeof(shown));
	if (best != NULL)
		return fail(p, s, path, "unknown key %s (did you mean \"%s\"?)",
		    shown, best);
	return fail(p, s, path, "unknown key %s", shown);
}

/* A value as the user wrote it, or its kind for groups and arrays. */
static void
describe(const config_setting_t *s, char *buf, size_t len)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		snprintf(buf, len, "%lld", config_setting_get_int64(s));
		break;
	case CONFIG_TYPE_FLOAT:
		snprintf(buf, len, "%g", config_setting_get_float(s));
		break;
	case CONFIG_TYPE_BOOL:
		snprintf(buf, len, "%s",
		    config_setting_get_bool(s) ? "true" : "false");
		break;
	case CONFIG_TYPE_STRING:
		quote(config_setting_get_string(s), buf, len);
		break;
	case CONFIG_TYPE_GROUP:
		snprintf(buf, len, "a group");
		break;
	case CONFIG_TYPE_ARRAY:
		snprintf(buf, len, config_setting_length(s) == 0 ?
		    "an empty array" : "an array");
		break;
	case CONFIG_TYPE_LIST:
		snprintf(buf, len, config_setting_length(s) == 0 ?
		    "an empty list" : "a list");
		break;
	default:
		snprintf(buf, len, "nothing");
		break;
	}
}

/* str in double quotes, escaped, cut after VALUE_SHOWN_MAX bytes. */
static void
quote(const char *str, char *buf, size_t len)
{
	size_t		 o = 0, i;
	unsigned char	 ch;
	char		 esc[8];

	if (len < 8) {
		if (len > 0)
			buf[0] = '\0';
		return;
	}
	buf[o++] = '"';
	for (i = 0; str[i] != '\0'; i++) {
		if (i == VALUE_SHOWN_MAX) {
			if (o + 4 < len) {
				memcpy(buf + o, "...", 3);
				o += 3;
			}
			break;
		}
		ch = (unsigned char)str[i];
		if (ch == '"' || ch == '\\')
			snprintf(esc, sizeof(esc), "\\%c", ch);
		else if (ch == '\n')
			snprintf(esc, sizeof(esc), "\\n");
		else if (ch == '\t')
			snprintf(esc, sizeof(esc), "\\t");
		else if (ch < 0x20 || ch == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", ch);
		else
			snprintf(esc, sizeof(esc), "%c", ch);
		if (o + strlen(esc) + 2 > len)
			break;
		memcpy(buf + o, esc, strlen(esc));
		o += strlen(esc);
	}
	buf[o++] = '"';
	buf[o] = '\0';
}

/* "an integer from lo to hi", or ">= lo" when hi is no real bound. */
static void
range_text(char *buf, size_t len, int64_t lo, int64_t hi, bool above)
{
	if ((hi == INT64_MAX || hi == UINT32_MAX) && !above)
		snprintf(buf, len, "an integer >= %" PRId64, lo);
	else
		snprintf(buf, len, "an integer from %" PRId64 " to %" PRId64,
		    lo, hi);
}

/* "a, b or c" */
static void
enum_text(const struct enum_name *names, char *buf, size_t len)
{
	size_t	n, i, o = 0;

	for (n = 0; names[n].name != NULL; n++)
		;
	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%s",
		    i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i].name);
}

/* parent.name; a key path too long for buf is cut (it is only shown). */
static void
keypath_join(char *buf, size_t len, const char *parent, const char *name)
{
	int n;

	if (parent[0] == '\0')
		n = snprintf(buf, len, "%s", name);
	else
		n = snprintf(buf, len, "%s.%s", parent, name);
	cut(buf, len, n);
}

static void
keypath_index(char *buf, size_t len, const char *parent, int i)
{
	int n;

	n = snprintf(buf, len, "%s[%d]", parent, i);
	cut(buf, len, n);
}

/* Marks a string that snprintf cut, n being what it returned. */
static void
cut(char *buf, size_t len, int n)
{
	if ((n < 0 || (size_t)n >= len) && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

/* Optimal string alignment distance: a swap of two letters counts 1. */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b), i, j, cost, v;
	size_t	d[SPEC_NAME_MAX + 1][SPEC_NAME_MAX + 1];

	if (la > SPEC_NAME_MAX || lb > SPEC_NAME_MAX)
		return SIZE_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			cost = a[i - 1] == b[j - 1] ? 0 : 1;
			v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

/* [A-Za-z0-9_.-]+, at most SPEC_NAME_MAX, and not "." or "..". */
static bool
name_ok(const char *s)
{
	size_t i;

	if (s[0] == '\0' || strlen(s) > SPEC_NAME_MAX ||
	    strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	/* Spelled out: isalnum() would follow the locale. */
	for (i = 0; s[i] != '\0'; i++)
		if (!(s[i] >= 'a' && s[i] <= 'z') &&
		    !(s[i] >= 'A' && s[i] <= 'Z') &&
		    !(s[i] >= '0' && s[i] <= '9') && s[i] != '_' &&
		    s[i] != '.' && s[i] != '-')
			return false;
	return true;
}

/* What a shell can name: libconfig also allows "-" and "*" in names. */
static bool
env_name_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!(s[i] >= 'a' && s[i] <= 'z') &&
		    !(s[i] >= 'A' && s[i] <= 'Z') &&
		    !(s[i] >= '0' && s[i] <= '9') && s[i] != '_')
			return false;
	return i > 0;
}

/* --- the node block ------------------------------------------------------ */

static int
key_top_node(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct actord_spec *spec = ctx;

	if (spec->node != NULL)
		node_spec_free(spec->node);
	if ((spec->node = node_spec_new()) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	spec->node->line = config_setting_source_line(s);
	return parse_node(p, s, path, spec->node);
}

/* The node's own keys, then what needs them all. */
static int
parse_node(struct parser *p, const config_setting_t *g, const char *keypath,
    struct node_spec *ns)
{
	const struct peer_spec	*peer;
	const config_setting_t	*m;
	char			 path[KEYPATH_MAX];

	if (!config_setting_is_group(g))
		return expected(p, g, keypath, "a group such as { name = "
		    "\"a\"; listen = \"tcp://0.0.0.0:7400\"; ... }");
	if (walk_group(p, g, keypath, node_keys, ns, ns, false) == -1)
		return -1;
	if (ns->name == NULL)
		return fail(p, g, keypath, "missing required key \"name\"");
	if (ns->listen == NULL)
		return fail(p, g, keypath, "missing required key \"listen\"");
	if (ns->secret_key_file == NULL)
		return fail(p, g, keypath,
		    "missing required key \"secret_key_file\"");
	m = config_setting_get_member(g, "secret_key_file");
	ns->key_line = config_setting_source_line(m);
	if ((peer = name_taken(ns, ns->name, NULL)) != NULL) {
		m = config_setting_get_member(g, "name");
		keypath_join(path, sizeof(path), keypath, "name");
		return fail(p, m, path, "\"%s\" is also the name of the peer "
		    "or client at line %u", ns->name, peer->line);
	}
	if (ns->heartbeat_timeout <= ns->heartbeat) {
		if ((m = config_setting_get_member(g, "heartbeat_timeout"))
		    != NULL) {
			keypath_join(path, sizeof(path), keypath,
			    "heartbeat_timeout");
			return fail(p, m, path, "expected an integer > "
			    "heartbeat (%" PRIu32 "), got %" PRIu32,
			    ns->heartbeat, ns->heartbeat_timeout);
		}
		m = config_setting_get_member(g, "heartbeat");
		keypath_join(path, sizeof(path), keypath, "heartbeat");
		return fail(p, m, path, "expected an integer < "
		    "heartbeat_timeout (%" PRIu32 "), got %" PRIu32,
		    ns->heartbeat_timeout, ns->heartbeat);
	}
	return 0;
}

/* A node's, a peer's or a client's name: [A-Za-z0-9_-], at most 32. */
static int
get_node_name(struct parser *p, const config_setting_t *s, const char *path,
    char **dst)
{
	const char	*str = NULL, *what;

	what = "a name of letters, digits, \"_\" and \"-\" (at most 32)";
	if (get_string(p, s, path, what, &str) == -1)
		return -1;
	if (strlen(str) > SPEC_NODE_NAME_MAX || !name_ok(str) ||
	    strchr(str, '.') != NULL)
		return expected(p, s, path, what);
	free(*dst);
	*dst = NULL;
	return dup_string(p, dst, str);
}

static int
key_node_name(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct node_spec *ns = ctx;

	return get_node_name(p, s, path, &ns->name);
}

static int
key_peer_name(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct peer_spec *ps = ctx;

	return get_node_name(p, s, path, &ps->name);
}

/* tcp://HOST:PORT, HOST a name, an IPv4 address, * or [IPv6]. */
static int
check_endpoint(struct parser *p, const config_setting_t *s,
    const char *path, bool listen, const char **out)
{
	const char	*str = NULL, *host, *colon, *what;
	char		*end;
	unsigned long	 port;

	what = listen ? "an endpoint such as \"tcp://0.0.0.0:7400\"" :
	    "an endpoint such as \"tcp://10.0.0.2:7400\"";
	if (get_string(p, s, path, what, &str) == -1)
		return -1;
	if (strncmp(str, "tcp://", 6) != 0 || strlen(str) > 255)
		return expected(p, s, path, what);
	host = str + 6;
	if ((colon = strrchr(host, ':')) == NULL || colon == host)
		return expected(p, s, path, what);
	if (!listen && colon - host == 1 && host[0] == '*')
		return expected(p, s, path, what);
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || colon[1] == '\0' ||
	    port > 65535 || (port == 0 && !listen))
		return expected(p, s, path, what);
	*out = str;
	return 0;
}

static int
key_listen(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct node_spec	*ns = ctx;
	const char		*str = NULL;

	if (check_endpoint(p, s, path, true, &str) == -1)
		return -1;
	free(ns->listen);
	ns->listen = NULL;
	return dup_string(p, &ns->listen, str);
}

static int
key_endpoint(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct peer_spec	*ps = ctx;
	const char		*str = NULL;

	if (check_endpoint(p, s, path, false, &str) == -1)
		return -1;
	free(ps->endpoint);
	ps->endpoint = NULL;
	return dup_string(p, &ps->endpoint, str);
}

static int
key_public_key(struct parser *p, const config_setting_t *s,
    const char *path, void *ctx)
{
	struct peer_spec	*ps = ctx;
	const char		*str = NULL, *what;

	what = "a public key: 40 Z85 characters, as actorctl keygen prints";
	if (get_string(p, s, path, what, &str) == -1)
		return -1;
	if (!key_z85_valid(str))
		return expected(p, s, path, what);
	free(ps->public_key);
	ps->public_key = NULL;
	return dup_string(p, &ps->public_key, str);
}

static int
key_peers(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	return parse_peers(p, s, path, ctx, true);
}

static int
key_clients(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	return parse_peers(p, s, path, ctx, false);
}

/* The peer or client named name, other than self; NULL if none. */
static const struct peer_spec *
name_taken(const struct node_spec *ns, const char *name,
    const struct peer_spec *self)
{
	size_t i;

	for (i = 0; i < ns->npeers; i++)
		if (&ns->peers[i] != self && ns->peers[i].name != NULL &&
		    strcmp(ns->peers[i].name, name) == 0)
			return &ns->peers[i];
	for (i = 0; i < ns->nclients; i++)
		if (&ns->clients[i] != self && ns->clients[i].name != NULL &&
		    strcmp(ns->clients[i].name, name) == 0)
			return &ns->clients[i];
	return NULL;
}

/* peers = ( { name; endpoint; public_key; }, ... ), or clients. */
static int
parse_peers(struct parser *p, const config_setting_t *s, const char *keypath,
    struct node_spec *ns, bool peers)
{
	struct peer_spec	**list = peers ? &ns->peers : &ns->clients;
	size_t			*nlist = peers ? &ns->npeers : &ns->nclients;
	struct peer_spec	*ps;
	const struct peer_spec	*other;
	const config_setting_t	*e, *m;
	char			 path[KEYPATH_MAX], kpath[KEYPATH_MAX];
	size_t			 j;
	int			 i, n;

	n = config_setting_length(s);
	if (config_setting_is_array(s) && n == 0)
		return 0;
	if (!config_setting_is_list(s))
		return expected(p, s, keypath, peers ?
		    "a list such as ( { name = \"b\"; endpoint = ...; "
		    "public_key = ...; }, ... )" :
		    "a list such as ( { name = \"app\"; public_key = ...; } )");
	if (n > SPEC_PEERS_MAX)
		return fail(p, s, keypath, "expected at most %d, got %d",
		    SPEC_PEERS_MAX, n);
	if (n == 0)
		return 0;
	if (*list != NULL)
		return fail(p, s, keypath, "given twice");
	if ((*list = calloc((size_t)n, sizeof(**list))) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		e = config_setting_get_elem(s, i);
		keypath_index(path, sizeof(path), keypath, i);
		ps = &(*list)[i];
		*nlist = (size_t)i + 1;
		if (!config_setting_is_group(e))
			return expected(p, e, path, peers ? "a group such as "
			    "{ name = \"b\"; endpoint = ...; public_key = ...; }"
			    : "a group such as { name = \"app\"; "
			    "public_key = ...; }");
		ps->line = config_setting_source_line(e);
		if (walk_group(p, e, path, peers ? peer_keys : client_keys, ps,
		    ps, false) == -1)
			return -1;
		if (ps->name == NULL)
			return fail(p, e, path, "missing required key "
			    "\"name\"");
		if (peers && ps->endpoint == NULL)
			return fail(p, e, path, "missing required key "
			    "\"endpoint\"");
		if (ps->public_key == NULL)
			return fail(p, e, path, "missing required key "
			    "\"public_key\"");
		m = config_setting_get_member(e, "name");
		keypath_join(kpath, sizeof(kpath), path, "name");
		if ((other = name_taken(ns, ps->name, ps)) != NULL)
			return fail(p, m, kpath, "duplicate name \"%s\" (first "
			    "at line %u)", ps->name, other->line);
		for (j = 0; j < ns->npeers + ns->nclients; j++) {
			other = j < ns->npeers ? &ns->peers[j] :
			    &ns->clients[j - ns->npeers];
			if (other == ps || other->public_key == NULL ||
			    strcmp(other->public_key, ps->public_key) != 0)
				continue;
			m = config_setting_get_member(e, "public_key");
			keypath_join(kpath, sizeof(kpath), path, "public_key");
			return fail(p, m, kpath, "the public key of \"%s\" "
			    "(line %u) too", other->name, other->line);
		}
	}
	return 0;
}

static int
key_node_mailbox(struct parser *p, const config_setting_t *s,
    const char *path, void *ctx)
{
	struct node_spec *ns = ctx;

	if (!config_setting_is_group(s))
		return expected(p, s, path,
		    "a group such as { capacity = 4096; cell = 1024; }");
	return walk_group(p, s, path, mailbox_keys, &ns->mailbox,
	    &ns->mailbox, false);
}

/* Only in the gateway's own text, which actord writes. */
static int
key_groups(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct node_spec	*ns = ctx;
	struct group_spec	*gs;
	const config_setting_t	*e;
	char			 epath[KEYPATH_MAX];
	int			 i, n;

	if (!p->internal)
		return fail(p, s, path, "unknown key \"groups\"");
	n = config_setting_length(s);
	if (n == 0 && (config_setting_is_list(s) ||
	    config_setting_is_array(s)))
		return 0;
	if (!config_setting_is_list(s))
		return expected(p, s, path, "a list of groups");
	if ((ns->groups = calloc((size_t)n, sizeof(*ns->groups))) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		e = config_setting_get_elem(s, i);
		keypath_index(epath, sizeof(epath), path, i);
		gs = &ns->groups[i];
		ns->ngroups = (size_t)i + 1;
		if (!config_setting_is_group(e))
			return expected(p, e, epath, "a group");
		if (walk_group(p, e, epath, group_keys, gs, gs, false) == -1)
			return -1;
		if (gs->path == NULL || gs->path[0] != '/' ||
		    gs->instances == 0 || gs->nnodes == 0)
			return fail(p, e, epath, "expected path, instances "
			    "and nodes");
	}
	return 0;
}

/* nodes = ["a", "b", "c"]: names, each once. */
static int
get_names(struct parser *p, const config_setting_t *s, const char *path,
    char ***out, size_t *nout)
{
	const config_setting_t	*e;
	const char		*str, *what;
	char			 epath[KEYPATH_MAX];
	int			 i, j, n;

	what = "a non-empty array of node names such as [\"a\", \"b\"]";
	n = config_setting_length(s);
	if ((!config_setting_is_array(s) && !config_setting_is_list(s)) ||
	    n <= 0 || n > SPEC_PEERS_MAX + 1)
		return expected(p, s, path, what);
	for (i = 0; i < n; i++) {
		e = config_setting_get_elem(s, i);
		keypath_index(epath, sizeof(epath), path, i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return expected(p, e, epath, "a node name");
		str = config_setting_get_string(e);
		for (j = 0; j < i; j++)
			if (strcmp(config_setting_get_string(
			    config_setting_get_elem(s, j)), str) == 0)
				return fail(p, e, epath, "\"%s\" is listed "
				    "twice", str);
	}
	if ((*out = calloc((size_t)n + 1, sizeof(**out))) == NULL)
		return fail_line(p, 0, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		*nout = (size_t)i + 1;
		if (dup_string(p, &(*out)[i], config_setting_get_string(
		    config_setting_get_elem(s, i))) == -1)
			return -1;
	}
	return 0;
}

static int
key_nodes(struct parser *p, const config_setting_t *s, const char *path,
    void *ctx)
{
	struct child_spec *c = ((struct node *)ctx)->c;

	if (c->nodes != NULL)
		return fail(p, s, path, "given twice");
	c->nodes_line = config_setting_source_line(s);
	return get_names(p, s, path, &c->nodes, &c->nnodes);
}

static int
key_group_nodes(struct parser *p, const config_setting_t *s,
    const char *path, void *ctx)
{
	struct group_spec *gs = ctx;

	if (gs->nodes != NULL)
		return fail(p, s, path, "given twice");
	return get_names(p, s, path, &gs->nodes, &gs->nnodes);
}

/*
 * Once the whole file is read: every group's nodes are this node or its
 * peers, the secret key is there and protected, and the gateway joins
 * the tree (nodespec.c).
 */
static int
node_check(struct parser *p, const config_setting_t *root,
    struct actord_spec *spec)
{
	const config_setting_t	*node;
	char			 key[KEY_Z85_LEN + 1], err[512];
	int			 rc;

	if ((rc = check_nodes(p, spec, &spec->root, "supervisor", "")) != 0)
		return rc;
	if (spec->node == NULL || p->internal)
		return 0;
	node = config_setting_get_member(root, "node");
	if (key_file_read(spec->node->secret_key_file, true, key, err,
	    sizeof(err)) == -1)
		return fail_line(p, spec->node->key_line,
		    "node.secret_key_file", "%s", err);
	explicit_bzero(key, sizeof(key));
	if (node_spec_finish(spec, err, sizeof(err)) == -1)
		return fail(p, node, "node", "%s", err);
	return 0;
}

/*
 * The first group spanning nodes under ss (tree path prefix) before the
 * one at path whose id is id, or NULL; its path in a static buffer.
 */
static const char *
same_id(const struct sup_spec *ss, const char *prefix, const char *path,
    uint32_t id)
{
	static char found[SPEC_PATH_MAX];
	const struct child_spec *c;
	const char *f;
	size_t i;

	for (i = 0; i < ss->nchildren; i++) {
		c = &ss->children[i];
		snprintf(found, sizeof(found), "%s/%s", prefix, c->name);
		if (strcmp(found, path) == 0)
			return NULL;		/* none before it */
		if (c->sup != NULL) {
			char sub[SPEC_PATH_MAX];

			memcpy(sub, found, sizeof(sub));
			if ((f = same_id(c->sup, sub, path, id)) != NULL ||
			    (strncmp(path, sub, strlen(sub)) == 0 &&
			    path[strlen(sub)] == '/'))
				return f;
			continue;
		}
		if (c->nodes != NULL && placement_group_id(found) == id)
			return found;
	}
	return NULL;
}

/*
 * A child's nodes name this node or its peers, it has instances, and no
 * other group spanning nodes has its id (a shard's remote reference names
 * its group by it, worker/remote.h).
 */
static int
check_nodes(struct parser *p, const struct actord_spec *spec,
    const struct sup_spec *ss, const char *keypath, const char *prefix)
{
	const struct child_spec	*c;
	const struct node_spec	*ns = spec->node;
	char			 path[KEYPATH_MAX], cpath[KEYPATH_MAX];
	char			 tpath[SPEC_PATH_MAX];
	const char		*other;
	size_t			 i, j, k;

	for (i = 0; i < ss->nchildren; i++) {
		c = &ss->children[i];
		keypath_join(cpath, sizeof(cpath), keypath, "children");
		keypath_index(path, sizeof(path), cpath, (int)i);
		snprintf(tpath, sizeof(tpath), "%s/%s", prefix, c->name);
		if (c->sup != NULL) {
			keypath_join(cpath, sizeof(cpath), path, "supervisor");
			if (check_nodes(p, spec, c->sup, cpath, tpath) != 0)
				return -1;
			continue;
		}
		if (c->nodes == NULL)
			continue;
		keypath_join(cpath, sizeof(cpath), path, "nodes");
		if (ns == NULL)
			return fail_line(p, c->nodes_line, cpath, "a group "
			    "spanning nodes needs a node block");
		if (c->instances == 0)
			return fail_line(p, c->nodes_line, cpath, "a group "
			    "spanning nodes needs instances");
		if ((other = same_id(&spec->root, "", tpath,
		    placement_group_id(tpath))) != NULL)
			return fail_line(p, c->nodes_line, cpath, "%s and %s "
			    "span nodes with the same id: rename one", other,
			    tpath);
		for (j = 0; j < c->nnodes; j++) {
			if (strcmp(c->nodes[j], ns->name) == 0)
				continue;
			for (k = 0; k < ns->npeers; k++)
				if (strcmp(c->nodes[j], ns->peers[k].name) ==
				    0)
					break;
			if (k == ns->npeers) {
				keypath_index(path, sizeof(path), cpath,
				    (int)j);
				return fail_line(p, c->nodes_line, path,
				    "\"%s\" is neither this node (\"%s\") nor "
				    "one of its peers", c->nodes[j], ns->name);
			}
		}
	}
	return 0;
}

/*
 * The gateway's own text, as node_spec_format wrote it: the node block
 * with its groups.  NULL with one line in err.
 */
struct node_spec *
config_parse_node(const char *text, const char *name, char *err,
    size_t errlen)
{
	struct parser		 p = { name, err, errlen, true };
	struct actord_spec	*spec;
	struct node_spec	*ns;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if ((spec = spec_new()) == NULL) {
		fail_line(&p, 0, NULL, "out of memory");
		return NULL;
	}
	if (parse_text(&p, text, spec) == -1 || spec->node == NULL) {
		if (spec->node == NULL && (err == NULL || err[0] == '\0'))
			fail_line(&p, 0, NULL, "no node block");
		spec_free(spec);
		return NULL;
	}
	ns = spec->node;
	spec->node = NULL;
	spec_free(spec);
	return ns;
}
