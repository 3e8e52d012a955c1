/*
 * ctlproto.c: the control protocol's codec (see ctlproto.h for the wire
 * format).  Requests are checked against a per-command schema: every field
 * known, of the right length, at most once, the required ones present.
 * Records in answers are described by tables of fields, so encoding and
 * decoding can never disagree.
 *
 * It owns no state and does no I/O.  It must never read a byte it has not
 * first checked is inside the buffer it was given, and never trust a
 * length, a count or a string from the wire.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/ctlproto.h"

enum fkind { K_U32, K_I32, K_U64, K_I64, K_STR, K_HIST, K_U64V };

/* One field of a record: its type on the wire and where it lives in C. */
struct fdesc {
	uint16_t	 type;
	uint8_t		 kind;
	uint8_t		 required;
	size_t		 off;
	size_t		 size;		/* K_STR: the array; K_U64V: max count */
	size_t		 count_off;	/* K_U64V: uint32_t count */
};

struct rdesc {
	const struct fdesc *f;
	size_t		 nf;
	size_t		 size;		/* sizeof the C struct */
};

#define STR(t, s, m, r)	{ t, K_STR, r, offsetof(s, m), sizeof(((s *)0)->m), 0 }
#define NUM(t, k, s, m)	{ t, k, 0, offsetof(s, m), 0, 0 }

static const struct fdesc node_f[] = {
	STR(1, struct ctl_node, path, 1),
	STR(2, struct ctl_node, kind, 1),
	STR(3, struct ctl_node, state, 1),
	NUM(4, K_I32, struct ctl_node, pid),
	NUM(5, K_U64, struct ctl_node, uptime_ms),
	NUM(6, K_U32, struct ctl_node, restarts),
	NUM(7, K_U32, struct ctl_node, period_restarts),
	NUM(8, K_U64, struct ctl_node, incarnation),
	STR(9, struct ctl_node, last_exit, 0),
	NUM(10, K_I64, struct ctl_node, mailbox_depth),
	STR(11, struct ctl_node, strategy, 0),
	NUM(12, K_U32, struct ctl_node, intensity),
	NUM(13, K_U32, struct ctl_node, period),
	STR(14, struct ctl_node, node, 0),
};

static const struct fdesc actor_f[] = {
	STR(1, struct ctl_actor_stats, path, 1),
	NUM(2, K_U64, struct ctl_actor_stats, depth),
	NUM(3, K_U64, struct ctl_actor_stats, capacity),
	NUM(4, K_U64, struct ctl_actor_stats, wait_p50_us),
	NUM(5, K_U64, struct ctl_actor_stats, wait_p99_us),
	NUM(6, K_U64, struct ctl_actor_stats, handle_p50_us),
	NUM(7, K_U64, struct ctl_actor_stats, handle_p99_us),
	NUM(8, K_U64, struct ctl_actor_stats, restarts),
	NUM(9, K_U64, struct ctl_actor_stats, sent),
	NUM(10, K_U64, struct ctl_actor_stats, received),
	NUM(11, K_U64, struct ctl_actor_stats, dropped),
	NUM(12, K_U64, struct ctl_actor_stats, deadlettered),
	NUM(13, K_HIST, struct ctl_actor_stats, wait),
	NUM(14, K_HIST, struct ctl_actor_stats, handle),
	NUM(15, K_U64, struct ctl_actor_stats, asks_failed),
	NUM(16, K_U64, struct ctl_actor_stats, replaced),
};

static const struct fdesc shards_f[] = {
	STR(1, struct ctl_shard_group, name, 1),
	{ 2, K_U64V, 0, offsetof(struct ctl_shard_group, count), CTL_SHARDS_MAX,
	    offsetof(struct ctl_shard_group, nshards) },
};

static const struct fdesc dl_f[] = {
	NUM(1, K_U64, struct ctl_deadletter, seq),
	NUM(2, K_U64, struct ctl_deadletter, time_ms),
	STR(3, struct ctl_deadletter, recipient, 1),
	STR(4, struct ctl_deadletter, sender, 0),
	STR(5, struct ctl_deadletter, reason, 1),
	NUM(6, K_U32, struct ctl_deadletter, tag),
	NUM(7, K_U32, struct ctl_deadletter, size),
};

static const struct fdesc ctr_f[] = {
	NUM(1, K_U64, struct ctl_counters, accepted),
	NUM(2, K_U64, struct ctl_counters, requests),
	NUM(3, K_U64, struct ctl_counters, refused_perm),
	NUM(4, K_U64, struct ctl_counters, refused_busy),
	NUM(5, K_U64, struct ctl_counters, malformed),
	NUM(6, K_U64, struct ctl_counters, truncated),
	NUM(7, K_U64, struct ctl_counters, oversized),
	NUM(8, K_U64, struct ctl_counters, bad_version),
	NUM(9, K_U64, struct ctl_counters, unknown_command),
	NUM(10, K_U64, struct ctl_counters, timeouts),
	NUM(11, K_U64, struct ctl_counters, clients),
	NUM(12, K_U64, struct ctl_counters, evicted),
};

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
static const struct rdesc node_r = { node_f, NELEM(node_f), sizeof(struct ctl_node) };
static const struct rdesc actor_r = { actor_f, NELEM(actor_f), sizeof(struct ctl_actor_stats) };
static const struct rdesc shards_r = { shards_f, NELEM(shards_f), sizeof(struct ctl_shard_group) };
static const struct rdesc dl_r = { dl_f, NELEM(dl_f), sizeof(struct ctl_deadletter) };
static const struct rdesc ctr_r = { ctr_f, NELEM(ctr_f), sizeof(struct ctl_counters) };

#define B(f)	(1u << (f))
/* The request schema: which fields each command requires and allows. */
static const struct cmdschema {
	const char	*name;
	uint32_t	 required;
	uint32_t	 allowed;	/* required fields included */
} cmdtab[CTL_CMD_MAX] = {
	[CTL_CMD_STATUS] =	{ "status", 0, B(CTL_F_PATH) },
	[CTL_CMD_START] =	{ "start", B(CTL_F_PATH), B(CTL_F_PATH) },
	[CTL_CMD_STOP] =	{ "stop", B(CTL_F_PATH), B(CTL_F_PATH) },
	[CTL_CMD_RESTART] =	{ "restart", B(CTL_F_PATH), B(CTL_F_PATH) },
	[CTL_CMD_KILL] =	{ "kill", B(CTL_F_PATH),
				  B(CTL_F_PATH) | B(CTL_F_SIGNAL) | B(CTL_F_TREE) },
	[CTL_CMD_ADD] =		{ "add", B(CTL_F_PATH), B(CTL_F_PATH) },
	[CTL_CMD_REMOVE] =	{ "remove", B(CTL_F_PATH), B(CTL_F_PATH) },
	[CTL_CMD_RELOAD] =	{ "reload", 0, 0 },
	[CTL_CMD_SEND] =	{ "send", B(CTL_F_PATH) | B(CTL_F_TAG),
				  B(CTL_F_PATH) | B(CTL_F_TAG) | B(CTL_F_DATA) },
	[CTL_CMD_ASK] =		{ "ask",
				  B(CTL_F_PATH) | B(CTL_F_TAG) | B(CTL_F_TIMEOUT),
				  B(CTL_F_PATH) | B(CTL_F_TAG) | B(CTL_F_TIMEOUT) |
				  B(CTL_F_DATA) },
	[CTL_CMD_DEADLETTERS] =	{ "deadletters", 0, B(CTL_F_CURSOR) | B(CTL_F_WAIT) },
	[CTL_CMD_STATS] =	{ "stats", 0, B(CTL_F_PATH) },
	[CTL_CMD_LOG] =		{ "log", B(CTL_F_PATH),
				  B(CTL_F_PATH) | B(CTL_F_CURSOR) | B(CTL_F_WAIT) },
	[CTL_CMD_SHUTDOWN] =	{ "shutdown", 0, 0 },
	[CTL_CMD_NODES] =	{ "nodes", 0, 0 },
};

static const char *const status_names[CTL_STATUS_MAX] = {
	[CTL_OK] = "ok",
	[CTL_E_NOENT] = "no such path",
	[CTL_E_PERM] = "permission denied",
	[CTL_E_INVAL] = "invalid argument",
	[CTL_E_EXISTS] = "exists",
	[CTL_E_STATE] = "refused in this state",
	[CTL_E_TIMEOUT] = "timed out",
	[CTL_E_PROTO] = "malformed request",
	[CTL_E_VERSION] = "unsupported protocol version",
	[CTL_E_UNKNOWN] = "unknown command",
	[CTL_E_TOOBIG] = "too large",
	[CTL_E_BUSY] = "busy",
	[CTL_E_UNSUPPORTED] = "not supported",
	[CTL_E_FAILED] = "failed",
	[CTL_E_DOWN] = "not running",
};

static void	 be16put(uint8_t *, uint16_t);
static void	 be32put(uint8_t *, uint32_t);
static void	 be64put(uint8_t *, uint64_t);
static uint16_t	 be16get(const uint8_t *);
static uint32_t	 be32get(const uint8_t *);
static uint64_t	 be64get(const uint8_t *);
static int	 next_field(const uint8_t **, size_t *, uint16_t *,
		    const uint8_t **, uint32_t *);
static int	 get_str(char *, size_t, const uint8_t *, uint32_t);
static int	 get_u32_once(bool *, uint32_t *, const uint8_t *, uint32_t);
static void	 put_record(struct ctl_buf *, uint16_t, const struct rdesc *,
		    const void *);
static int	 get_record(const struct rdesc *, void *, const uint8_t *,
		    uint32_t);
static int	 get_hist(struct ctl_hist *, const uint8_t *, uint32_t);
static int	 append_record(void **, size_t *, const struct rdesc *,
		    const uint8_t *, uint32_t);
static int	 fail(char *, size_t, int, const char *, ...)
		    __attribute__((format(printf, 4, 5)));

/* --- bytes --------------------------------------------------------------- */

static void
be16put(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void
be32put(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void
be64put(uint8_t *p, uint64_t v)
{
	be32put(p, v >> 32);
	be32put(p + 4, (uint32_t)v);
}

static uint16_t
be16get(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
be32get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static uint64_t
be64get(const uint8_t *p)
{
	return (uint64_t)be32get(p) << 32 | be32get(p + 4);
}

/* --- buffers ------------------------------------------------------------- */

void
ctl_buf_init(struct ctl_buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void
ctl_buf_free(struct ctl_buf *b)
{
	free(b->data);
	ctl_buf_init(b, b->max);
}

void
ctl_buf_reset(struct ctl_buf *b)
{
	b->len = 0;
	b->err = 0;
}

static int
buf_reserve(struct ctl_buf *b, size_t n)
{
	size_t	 ncap;
	uint8_t	*p;

	if (b->err)
		return -1;
	if (n > b->max || b->len > b->max - n) {
		b->err = E2BIG;
		return -1;
	}
	if (b->len + n <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 256;
	while (ncap < b->len + n)
		ncap *= 2;
	if (ncap > b->max)
		ncap = b->max;
	if ((p = realloc(b->data, ncap)) == NULL) {
		b->err = ENOMEM;
		return -1;
	}
	b->data = p;
	b->cap = ncap;
	return 0;
}

int
ctl_buf_add(struct ctl_buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n) == -1)
		return -1;
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int
ctl_buf_printf(struct ctl_buf *b, const char *fmt, ...)
{
	va_list	 ap;
	char	 small[256];
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(small))
		return ctl_buf_add(b, small, n);
	if (buf_reserve(b, (size_t)n + 1) == -1)
		return -1;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
	return 0;
}

/* --- frames and fields --------------------------------------------------- */

size_t
ctl_frame_begin(struct ctl_buf *b, uint16_t code)
{
	uint8_t	 hdr[CTL_HDR_LEN];
	size_t	 start = b->len;

	be32put(hdr, 0);		/* patched by ctl_frame_end */
	be16put(hdr + 4, CTL_VERSION);
	be16put(hdr + 6, code);
	ctl_buf_add(b, hdr, sizeof(hdr));
	return start;
}

int
ctl_frame_end(struct ctl_buf *b, size_t start)
{
	if (b->err)
		return -1;
	be32put(b->data + start, (uint32_t)(b->len - start - 4));
	return 0;
}

/*
 * How long is the frame whose first bytes are hdr?  1 and *total (the
 * whole frame, length field included) when known, 0 when fewer than 4
 * bytes are there, -1 when the length is too small to hold a header, -2
 * when the frame would be larger than max.
 */
int
ctl_frame_length(const uint8_t *hdr, size_t have, size_t max, uint32_t *total)
{
	uint32_t n;

	if (have < 4)
		return 0;
	n = be32get(hdr);
	if (n < CTL_HDR_LEN - 4)
		return -1;
	if (n > max - 4)
		return -2;
	*total = n + 4;
	return 1;
}

static void
put_hdr(struct ctl_buf *b, uint16_t type, size_t len)
{
	uint8_t	 h[CTL_FIELD_HDR];

	if (len > UINT32_MAX) {
		b->err = E2BIG;
		return;
	}
	be16put(h, type);
	be32put(h + 2, (uint32_t)len);
	ctl_buf_add(b, h, sizeof(h));
}

void
ctl_put_u32(struct ctl_buf *b, uint16_t type, uint32_t v)
{
	uint8_t	 p[4];

	be32put(p, v);
	ctl_put_bytes(b, type, p, sizeof(p));
}

void
ctl_put_u64(struct ctl_buf *b, uint16_t type, uint64_t v)
{
	uint8_t	 p[8];

	be64put(p, v);
	ctl_put_bytes(b, type, p, sizeof(p));
}

void
ctl_put_bytes(struct ctl_buf *b, uint16_t type, const void *p, size_t n)
{
	put_hdr(b, type, n);
	ctl_buf_add(b, p, n);
}

void
ctl_put_str(struct ctl_buf *b, uint16_t type, const char *s)
{
	ctl_put_bytes(b, type, s, strlen(s));
}

size_t
ctl_nest_begin(struct ctl_buf *b, uint16_t type)
{
	size_t	 start = b->len;

	put_hdr(b, type, 0);		/* length patched by ctl_nest_end */
	return start;
}

void
ctl_nest_end(struct ctl_buf *b, size_t start)
{
	if (b->err)
		return;
	be32put(b->data + start + 2, (uint32_t)(b->len - start - CTL_FIELD_HDR));
}

/*
 * The next field of [*p, *p + *left): 1 with type, value and length, 0 at
 * the end, -1 if a header or a value runs past the end.
 */
static int
next_field(const uint8_t **p, size_t *left, uint16_t *type,
    const uint8_t **val, uint32_t *len)
{
	if (*left == 0)
		return 0;
	if (*left < CTL_FIELD_HDR)
		return -1;
	*type = be16get(*p);
	*len = be32get(*p + 2);
	if (*len > *left - CTL_FIELD_HDR)
		return -1;
	*val = *p + CTL_FIELD_HDR;
	*p += CTL_FIELD_HDR + *len;
	*left -= CTL_FIELD_HDR + *len;
	return 1;
}

/* A string of len bytes, no NUL inside, fitting in size with its NUL. */
static int
get_str(char *dst, size_t size, const uint8_t *v, uint32_t len)
{
	if (len >= size || memchr(v, '\0', len) != NULL)
		return -1;
	memcpy(dst, v, len);
	dst[len] = '\0';
	return 0;
}

static int
fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return status;
}

/* --- names --------------------------------------------------------------- */

const char *
ctl_cmd_name(unsigned cmd)
{
	if (cmd == 0 || cmd >= CTL_CMD_MAX)
		return NULL;
	return cmdtab[cmd].name;
}

int
ctl_cmd_lookup(const char *name)
{
	int i;

	for (i = 1; i < CTL_CMD_MAX; i++)
		if (strcmp(cmdtab[i].name, name) == 0)
			return i;
	return -1;
}

const char *
ctl_status_name(unsigned status)
{
	if (status >= CTL_STATUS_MAX)
		return "unknown status";
	return status_names[status];
}

/*
 * "/" or "/name/name...": printable ASCII, no empty, "." or ".."
 * component, no trailing slash, shorter than CTL_PATH_MAX.  A node's
 * name and a colon may come first ("b:/counter", an actor of node b):
 * 1 to 32 of A-Z a-z 0-9 _ -.
 */
bool
ctl_path_valid(const char *path)
{
	const char	*s, *comp;
	size_t		 n = strlen(path), k;

	for (k = 0; k < n && k <= 32 && (isalnum((unsigned char)path[k]) ||
	    path[k] == '_' || path[k] == '-'); k++)
		continue;
	if (k > 0 && k <= 32 && k < n && path[k] == ':') {
		path += k + 1;
		n -= k + 1;
	}
	if (n == 0 || n >= CTL_PATH_MAX || path[0] != '/')
		return false;
	if (n == 1)
		return true;
	for (comp = s = path + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			if (s == comp || (s - comp == 1 && comp[0] == '.') ||
			    (s - comp == 2 && comp[0] == '.' && comp[1] == '.'))
				return false;
			if (*s == '\0')
				return true;
			comp = s + 1;
		} else if (*s <= ' ' || *s > '~')
			return false;
	}
}

/* --- requests ------------------------------------------------------------ */

int
ctl_request_encode(struct ctl_buf *b, const struct ctl_request *r)
{
	size_t	 start = ctl_frame_begin(b, r->cmd);

	if (CTL_HAS(r, CTL_F_PATH))
		ctl_put_str(b, CTL_F_PATH, r->path);
	if (CTL_HAS(r, CTL_F_TAG))
		ctl_put_u32(b, CTL_F_TAG, r->tag);
	if (CTL_HAS(r, CTL_F_DATA))
		ctl_put_bytes(b, CTL_F_DATA, r->data, r->datalen);
	if (CTL_HAS(r, CTL_F_TIMEOUT))
		ctl_put_u32(b, CTL_F_TIMEOUT, r->timeout_ms);
	if (CTL_HAS(r, CTL_F_SIGNAL))
		ctl_put_u32(b, CTL_F_SIGNAL, r->signo);
	if (CTL_HAS(r, CTL_F_CURSOR))
		ctl_put_u64(b, CTL_F_CURSOR, r->cursor);
	if (CTL_HAS(r, CTL_F_WAIT))
		ctl_put_bytes(b, CTL_F_WAIT, NULL, 0);
	if (CTL_HAS(r, CTL_F_TREE))
		ctl_put_bytes(b, CTL_F_TREE, NULL, 0);
	return ctl_frame_end(b, start);
}

static int
request_field(struct ctl_request *r, uint16_t type, const uint8_t *v,
    uint32_t len, char *err, size_t errlen)
{
	switch (type) {
	case CTL_F_PATH:
		if (get_str(r->path, sizeof(r->path), v, len) == -1 ||
		    !ctl_path_valid(r->path))
			return fail(err, errlen, CTL_E_PROTO, "invalid path");
		return CTL_OK;
	case CTL_F_TAG:
	case CTL_F_TIMEOUT:
	case CTL_F_SIGNAL:
		if (len != 4)
			return fail(err, errlen, CTL_E_PROTO,
			    "field %u: length %u, expected 4", type, len);
		if (type == CTL_F_TAG)
			r->tag = be32get(v);
		else if (type == CTL_F_TIMEOUT)
			r->timeout_ms = be32get(v);
		else if ((r->signo = be32get(v)) < 1 || r->signo >= (uint32_t)NSIG)
			return fail(err, errlen, CTL_E_PROTO, "invalid signal");
		return CTL_OK;
	case CTL_F_DATA:
		if (len > CTL_MAX_DATA)
			return fail(err, errlen, CTL_E_TOOBIG, "data too large");
		r->data = v;
		r->datalen = len;
		return CTL_OK;
	case CTL_F_CURSOR:
		if (len != 8)
			return fail(err, errlen, CTL_E_PROTO,
			    "field %u: length %u, expected 8", type, len);
		r->cursor = be64get(v);
		return CTL_OK;
	case CTL_F_WAIT:
	case CTL_F_TREE:
		if (len != 0)
			return fail(err, errlen, CTL_E_PROTO,
			    "field %u: length %u, expected 0", type, len);
		if (type == CTL_F_WAIT)
			r->wait = true;
		else
			r->tree = true;
		return CTL_OK;
	}
	return fail(err, errlen, CTL_E_PROTO, "unknown field %u", type);
}

/*
 * Decode a whole request frame of len bytes.  CTL_OK, or a status
 * (CTL_E_PROTO, CTL_E_VERSION, CTL_E_UNKNOWN, CTL_E_TOOBIG) with the
 * reason in err.
 */
int
ctl_request_decode(const uint8_t *frame, size_t len, struct ctl_request *r,
    char *err, size_t errlen)
{
	const struct cmdschema	*cs;
	const uint8_t		*p, *v;
	size_t			 left;
	uint32_t		 flen, vlen, missing;
	uint16_t		 type, version;
	int			 rc, st;

	memset(r, 0, sizeof(*r));
	if (len < CTL_HDR_LEN)
		return fail(err, errlen, CTL_E_PROTO, "short frame");
	if (len > CTL_MAX_REQUEST)
		return fail(err, errlen, CTL_E_TOOBIG, "request too large");
	flen = be32get(frame);
	if (flen != len - 4)
		return fail(err, errlen, CTL_E_PROTO,
		    "frame length %u, have %zu", flen, len - 4);
	if ((version = be16get(frame + 4)) != CTL_VERSION)
		return fail(err, errlen, CTL_E_VERSION,
		    "protocol version %u, expected %u", version, CTL_VERSION);
	r->cmd = be16get(frame + 6);
	if (r->cmd == 0 || r->cmd >= CTL_CMD_MAX)
		return fail(err, errlen, CTL_E_UNKNOWN,
		    "unknown command %u", r->cmd);
	cs = &cmdtab[r->cmd];
	p = frame + CTL_HDR_LEN;
	left = len - CTL_HDR_LEN;
	while ((rc = next_field(&p, &left, &type, &v, &vlen)) == 1) {
		if (type >= CTL_F_REQ_MAX || (cs->allowed & B(type)) == 0)
			return fail(err, errlen, CTL_E_PROTO,
			    "%s: unexpected field %u", cs->name, type);
		if (r->present & B(type))
			return fail(err, errlen, CTL_E_PROTO,
			    "%s: field %u repeated", cs->name, type);
		if ((st = request_field(r, type, v, vlen, err, errlen)) != CTL_OK)
			return st;
		r->present |= B(type);
	}
	if (rc == -1)
		return fail(err, errlen, CTL_E_PROTO, "truncated field");
	if ((missing = cs->required & ~r->present) != 0)
		return fail(err, errlen, CTL_E_PROTO,
		    "%s: missing field %d", cs->name, __builtin_ctz(missing));
	return CTL_OK;
}

/* --- records ------------------------------------------------------------- */

static void
put_hist(struct ctl_buf *b, uint16_t type, const struct ctl_hist *h)
{
	size_t	 start = ctl_nest_begin(b, type);
	uint32_t i, n = h->nbuckets > CTL_HIST_MAX ? CTL_HIST_MAX : h->nbuckets;
	uint8_t	 p[8];

	be32put(p, n);
	ctl_buf_add(b, p, 4);
	for (i = 0; i < n; i++) {
		be64put(p, h->le_us[i]);
		ctl_buf_add(b, p, 8);
		be64put(p, h->count[i]);
		ctl_buf_add(b, p, 8);
	}
	be64put(p, h->total);
	ctl_buf_add(b, p, 8);
	be64put(p, h->sum_us);
	ctl_buf_add(b, p, 8);
	ctl_nest_end(b, start);
}

static void
put_record(struct ctl_buf *b, uint16_t type, const struct rdesc *rd,
    const void *rec)
{
	const struct fdesc	*f;
	const uint8_t		*base = rec;
	size_t			 start, i;
	uint32_t		 n, j;
	int32_t			 i32;
	int64_t			 i64;

	start = ctl_nest_begin(b, type);
	for (i = 0; i < rd->nf; i++) {
		f = &rd->f[i];
		switch (f->kind) {
		case K_U32:
			ctl_put_u32(b, f->type, *(const uint32_t *)(base + f->off));
			break;
		case K_I32:
			memcpy(&i32, base + f->off, sizeof(i32));
			ctl_put_u32(b, f->type, (uint32_t)i32);
			break;
		case K_U64:
			ctl_put_u64(b, f->type, *(const uint64_t *)(base + f->off));
			break;
		case K_I64:
			memcpy(&i64, base + f->off, sizeof(i64));
			ctl_put_u64(b, f->type, (uint64_t)i64);
			break;
		case K_STR:
			ctl_put_bytes(b, f->type, base + f->off,
			    strnlen((const char *)base + f->off, f->size - 1));
			break;
		case K_HIST:
			put_hist(b, f->type,
			    (const struct ctl_hist *)(base + f->off));
			break;
		case K_U64V:
			n = *(const uint32_t *)(base + f->count_off);
			if (n > f->size)
				n = f->size;
			put_hdr(b, f->type, (size_t)n * 8);
			for (j = 0; j < n; j++) {
				uint8_t p[8];

				be64put(p, ((const uint64_t *)(base + f->off))[j]);
				ctl_buf_add(b, p, 8);
			}
			break;
		}
	}
	ctl_nest_end(b, start);
}

static int
get_hist(struct ctl_hist *h, const uint8_t *v, uint32_t len)
{
	uint32_t i, n;
	uint64_t sum = 0;

	if (len < 4)
		return -1;
	n = be32get(v);
	if (n > CTL_HIST_MAX || len != 4 + n * 16 + 16)
		return -1;
	h->nbuckets = n;
	for (i = 0; i < n; i++) {
		h->le_us[i] = be64get(v + 4 + i * 16);
		h->count[i] = be64get(v + 12 + i * 16);
		if (i > 0 && h->le_us[i] <= h->le_us[i - 1])
			return -1;
		if (h->count[i] > UINT64_MAX - sum)
			return -1;
		sum += h->count[i];
	}
	h->total = be64get(v + 4 + n * 16);
	h->sum_us = be64get(v + 12 + n * 16);
	if (sum > h->total)
		return -1;
	return 0;
}

/*
 * Decode one record.  Unknown fields are skipped, so that an older
 * actorctl can read a newer actord; known ones must be well formed.
 */
static int
get_record(const struct rdesc *rd, void *rec, const uint8_t *v, uint32_t len)
{
	const struct fdesc	*f;
	uint8_t			*base = rec;
	const uint8_t		*p = v, *fv;
	size_t			 left = len, i;
	uint32_t		 flen, seen = 0, need = 0, j;
	uint16_t		 type;
	int			 rc;

	while ((rc = next_field(&p, &left, &type, &fv, &flen)) == 1) {
		for (f = NULL, i = 0; i < rd->nf; i++)
			if (rd->f[i].type == type)
				f = &rd->f[i];
		if (f == NULL)
			continue;
		if (type >= 32 || (seen & B(type)))
			return -1;
		seen |= B(type);
		switch (f->kind) {
		case K_U32:
		case K_I32:
			if (flen != 4)
				return -1;
			*(uint32_t *)(base + f->off) = be32get(fv);
			break;
		case K_U64:
		case K_I64:
			if (flen != 8)
				return -1;
			*(uint64_t *)(base + f->off) = be64get(fv);
			break;
		case K_STR:
			if (get_str((char *)base + f->off, f->size, fv, flen) == -1)
				return -1;
			break;
		case K_HIST:
			if (get_hist((struct ctl_hist *)(base + f->off), fv,
			    flen) == -1)
				return -1;
			break;
		case K_U64V:
			if (flen % 8 != 0 || flen / 8 > f->size)
				return -1;
			*(uint32_t *)(base + f->count_off) = flen / 8;
			for (j = 0; j < flen / 8; j++)
				((uint64_t *)(base + f->off))[j] =
				    be64get(fv + j * 8);
			break;
		}
	}
	if (rc == -1)
		return -1;
	for (i = 0; i < rd->nf; i++)
		if (rd->f[i].required)
			need |= B(rd->f[i].type);
	return (seen & need) == need ? 0 : -1;
}

void
ctl_put_node(struct ctl_buf *b, const struct ctl_node *n)
{
	put_record(b, CTL_F_NODE, &node_r, n);
}

void
ctl_put_actor(struct ctl_buf *b, const struct ctl_actor_stats *a)
{
	put_record(b, CTL_F_ACTOR, &actor_r, a);
}

void
ctl_put_shards(struct ctl_buf *b, const struct ctl_shard_group *g)
{
	put_record(b, CTL_F_SHARDS, &shards_r, g);
}

void
ctl_put_deadletter(struct ctl_buf *b, const struct ctl_deadletter *d)
{
	put_record(b, CTL_F_DEADLETTER, &dl_r, d);
}

void
ctl_put_counters(struct ctl_buf *b, const struct ctl_counters *c)
{
	put_record(b, CTL_F_CONTROL, &ctr_r, c);
}

/* A whole error answer; text may be NULL for the status's own name. */
int
ctl_error_frame(struct ctl_buf *b, uint16_t status, const char *text)
{
	size_t start = ctl_frame_begin(b, status);

	ctl_put_str(b, CTL_F_ERROR, text != NULL ? text :
	    ctl_status_name(status));
	return ctl_frame_end(b, start);
}

/* --- answers ------------------------------------------------------------- */

static int
append_record(void **arr, size_t *n, const struct rdesc *rd,
    const uint8_t *v, uint32_t len)
{
	uint8_t	*p;

	if (*n >= CTL_MAX_RESPONSE / CTL_FIELD_HDR)
		return -1;
	if ((p = reallocarray(*arr, *n + 1, rd->size)) == NULL)
		return -1;
	*arr = p;
	p += *n * rd->size;
	memset(p, 0, rd->size);
	if (rd == &node_r)
		((struct ctl_node *)(void *)p)->mailbox_depth = -1;
	if (get_record(rd, p, v, len) == -1)
		return -1;
	(*n)++;
	return 0;
}

/* A 4-byte field that may come once: 1 if it is malformed or repeated. */
static int
get_u32_once(bool *has, uint32_t *out, const uint8_t *v, uint32_t vlen)
{
	if (*has || vlen != 4)
		return 1;
	*out = be32get(v);
	*has = true;
	return 0;
}

int
ctl_response_decode(const uint8_t *frame, size_t len, struct ctl_response *r,
    char *err, size_t errlen)
{
	const uint8_t	*p, *v;
	size_t		 left;
	uint32_t	 vlen;
	uint16_t	 type = 0;
	int		 rc = 0, bad = 0;

	memset(r, 0, sizeof(*r));
	if (len < CTL_HDR_LEN || be32get(frame) != len - 4)
		return fail(err, errlen, -1, "malformed answer frame");
	if (be16get(frame + 4) != CTL_VERSION)
		return fail(err, errlen, -1, "answer in protocol version %u",
		    be16get(frame + 4));
	r->status = be16get(frame + 6);
	p = frame + CTL_HDR_LEN;
	left = len - CTL_HDR_LEN;
	while (!bad && (rc = next_field(&p, &left, &type, &v, &vlen)) == 1) {
		switch (type) {
		case CTL_F_ERROR:
			bad = get_str(r->error, sizeof(r->error), v, vlen);
			break;
		case CTL_F_MESSAGE:
			bad = get_str(r->message, sizeof(r->message), v, vlen);
			break;
		case CTL_F_NODE:
			bad = append_record((void **)&r->nodes, &r->nnodes,
			    &node_r, v, vlen);
			break;
		case CTL_F_ACTOR:
			bad = append_record((void **)&r->actors, &r->nactors,
			    &actor_r, v, vlen);
			break;
		case CTL_F_SHARDS:
			bad = append_record((void **)&r->groups, &r->ngroups,
			    &shards_r, v, vlen);
			break;
		case CTL_F_DEADLETTER:
			bad = append_record((void **)&r->dls, &r->ndls,
			    &dl_r, v, vlen);
			break;
		case CTL_F_CONTROL:
			bad = r->has_control ||
			    get_record(&ctr_r, &r->control, v, vlen) == -1;
			r->has_control = true;
			break;
		case CTL_F_CURSOR:
			if ((bad = r->has_cursor || vlen != 8) == 0)
				r->cursor = be64get(v);
			r->has_cursor = true;
			break;
		case CTL_F_TAG:
			bad = get_u32_once(&r->has_tag, &r->tag, v, vlen);
			break;
		case CTL_F_CODE:
			bad = get_u32_once(&r->has_code, (uint32_t *)&r->code,
			    v, vlen);
			break;
		case CTL_F_APPCODE:
			bad = get_u32_once(&r->has_appcode,
			    (uint32_t *)&r->appcode, v, vlen);
			break;
		case CTL_F_TEXT:
			bad = r->has_text || get_str(r->text, sizeof(r->text),
			    v, vlen);
			r->has_text = true;
			break;
		case CTL_F_DATA:
			if (r->has_data) {
				bad = 1;
				break;
			}
			if ((r->data = malloc(vlen + 1)) == NULL) {
				bad = 1;
				break;
			}
			memcpy(r->data, v, vlen);
			r->data[vlen] = '\0';
			r->datalen = vlen;
			r->has_data = true;
			break;
		default:
			break;		/* newer actord: ignored */
		}
	}
	if (bad || rc == -1) {
		ctl_response_free(r);
		return fail(err, errlen, -1, "malformed answer (field %u)", type);
	}
	return 0;
}

void
ctl_response_free(struct ctl_response *r)
{
	free(r->nodes);
	free(r->actors);
	free(r->groups);
	free(r->dls);
	free(r->data);
	r->nodes = NULL;
	r->actors = NULL;
	r->groups = NULL;
	r->dls = NULL;
	r->data = NULL;
	r->nnodes = r->nactors = r->ngroups = r->ndls = r->datalen = 0;
}

/*
 * The default runtime_dir, the one rule (spec.c's default follows it):
 * /run/actord for root, else $XDG_RUNTIME_DIR/actord when that is an
 * absolute path short enough to leave room for a socket name, else
 * /tmp/actord-UID.  0, or -1 if buf is too small.
 */
int
ctl_default_runtime_dir(char *buf, size_t len)
{
	const char	*xdg;
	int		 n;

	if (geteuid() == 0)
		n = snprintf(buf, len, "/run/actord");
	else {
		xdg = getenv("XDG_RUNTIME_DIR");
		n = -1;
		if (xdg != NULL && xdg[0] == '/' &&
		    strlen(xdg) + sizeof("/actord") - 1 <= CTL_RUNTIME_DIR_MAX)
			n = snprintf(buf, len, "%s/actord", xdg);
		if (n < 0)
			n = snprintf(buf, len, "/tmp/actord-%u",
			    (unsigned)geteuid());
	}
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The socket of an actord running with the default configuration. */
int
ctl_default_socket(char *buf, size_t len)
{
	char	 dir[CTL_RUNTIME_DIR_MAX + 1];
	int	 n;

	if (ctl_default_runtime_dir(dir, sizeof(dir)) == -1)
		return -1;
	n = snprintf(buf, len, "%s/control.sock", dir);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
