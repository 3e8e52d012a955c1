/*
 * wire.c: the frames nodes and clients exchange over ZeroMQ, as
 * actord-wire(7) specifies them: encoding, and a decoder that checks every
 * byte of a frame before anything in it is used.
 *
 * A frame is one ZeroMQ message part: a 16-byte header (magic "AW",
 * version, type, body length, reserved) and a body whose layout the type
 * fixes.  Integers are little-endian.  A BATCH carries many actor messages
 * in one frame; wire_decode() walks all of them once, so that a frame is
 * either wholly valid or refused as a whole, and wire_next() then hands
 * them out without checking again.
 *
 * Owns: the byte layout.  Must never allocate while decoding, never read
 * past the length it was given, never trust a length, count or index it
 * read, and never decide what a message means (the gateway does).
 */
#include <stdlib.h>
#include <string.h>

#include "worker/remote.h"

static uint16_t	 get16(const uint8_t *);
static uint32_t	 get32(const uint8_t *);
static uint64_t	 get64(const uint8_t *);
static void	 put16(uint8_t *, uint16_t);
static void	 put32(uint8_t *, uint32_t);
static void	 put64(uint8_t *, uint64_t);
static int	 need(struct wire_buf *, size_t);
static int	 decode_msg(const uint8_t *, size_t, struct wire_msg *,
		    size_t *);
static int	 decode_name(const uint8_t *, size_t, char *, size_t *);
static void	 header(uint8_t *, uint8_t, size_t);

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* A node or client name: 1 to 32 of [A-Za-z0-9_-]. */
bool
wire_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > WIRE_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!(s[i] >= 'a' && s[i] <= 'z') &&
		    !(s[i] >= 'A' && s[i] <= 'Z') &&
		    !(s[i] >= '0' && s[i] <= '9') && s[i] != '_' &&
		    s[i] != '-')
			return false;
	return true;
}

/*
 * An actor path: "/", then names of [A-Za-z0-9_.@-] separated by single
 * slashes, no "." or ".." name, no trailing slash, at most WIRE_PATH_MAX.
 */
bool
wire_path_ok(const char *s, size_t len)
{
	size_t i, seg = 0;

	if (len < 2 || len > WIRE_PATH_MAX || s[0] != '/')
		return false;
	for (i = 1; i <= len; i++) {
		if (i == len || s[i] == '/') {
			if (seg == 0 || (seg == 1 && s[i - 1] == '.') ||
			    (seg == 2 && s[i - 1] == '.' && s[i - 2] == '.'))
				return false;
			seg = 0;
			continue;
		}
		if (!(s[i] >= 'a' && s[i] <= 'z') &&
		    !(s[i] >= 'A' && s[i] <= 'Z') &&
		    !(s[i] >= '0' && s[i] <= '9') && s[i] != '_' &&
		    s[i] != '.' && s[i] != '-' && s[i] != '@')
			return false;
		seg++;
	}
	return true;
}

/* One length-prefixed name: u8 length, bytes. */
static int
decode_name(const uint8_t *p, size_t left, char *out, size_t *used)
{
	size_t n;

	if (left < 1)
		return WIRE_ELENGTH;
	n = p[0];
	if (n > left - 1)
		return WIRE_ELENGTH;
	if (!wire_name_ok((const char *)p + 1, n))
		return WIRE_ENAME;
	memcpy(out, p + 1, n);
	out[n] = '\0';
	*used = 1 + n;
	return 0;
}

/* One message of a batch at p (left bytes); *used its size. */
static int
decode_msg(const uint8_t *p, size_t left, struct wire_msg *m, size_t *used)
{
	size_t need_len;

	if (left < WIRE_MSG_HDR)
		return WIRE_ELENGTH;
	memset(m, 0, sizeof(*m));
	m->kind = p[0];
	m->flags = p[1];
	m->path_len = get16(p + 2);
	m->tag = get32(p + 4);
	m->to_index = get32(p + 8);
	m->to_inc = get32(p + 12);
	m->from_index = get32(p + 16);
	m->from_inc = get32(p + 20);
	m->corr = get64(p + 24);
	m->len = get32(p + 32);
	if (m->kind < WK_TELL || m->kind > WK_LOOKUP)
		return WIRE_EKIND;
	if ((m->flags & ~WF_ALL) != 0)
		return WIRE_EFLAGS;
	if ((m->flags & WF_PATH) == 0 && m->path_len != 0)
		return WIRE_EPATH;
	if ((m->flags & WF_PATH) != 0 && m->path_len == 0)
		return WIRE_EPATH;
	/* Only an answer to a client goes to nobody's mailbox. */
	if ((m->flags & WF_PATH) == 0 && m->to_index >= WIRE_INDEX_MAX &&
	    (m->kind != WK_REPLY || m->to_index != WIRE_NOBODY))
		return WIRE_EINDEX;
	if (m->from_index != WIRE_NOBODY && m->from_index >= WIRE_INDEX_MAX)
		return WIRE_EINDEX;
	need_len = (size_t)WIRE_MSG_HDR + m->path_len + (size_t)m->len;
	if (m->len > left || need_len > left)
		return WIRE_ELENGTH;
	if (m->path_len > 0) {
		m->path = (const char *)p + WIRE_MSG_HDR;
		if (!wire_path_ok(m->path, m->path_len))
			return WIRE_EPATH;
	}
	m->data = p + WIRE_MSG_HDR + m->path_len;
	if ((m->kind == WK_TERMINATED && m->len != WIRE_TERMINATED_LEN) ||
	    (m->kind == WK_LOOKUP && (m->flags & WF_PATH) == 0) ||
	    ((m->flags & WF_ERROR) != 0 && (m->kind != WK_REPLY ||
	    m->len < 4)))
		return WIRE_EKIND;
	*used = need_len;
	return 0;
}

/*
 * Check a whole frame of len bytes; 0 with *f describing it, or a
 * negative WIRE_E* code and nothing in it may be used.  max_frame bounds
 * the frame's size.
 */
int
wire_decode(const void *buf, size_t len, size_t max_frame,
    struct wire_frame *f)
{
	const uint8_t *p = buf, *b;
	struct wire_msg m;
	size_t body, off, used;
	uint32_t i;
	int rc;

	memset(f, 0, sizeof(*f));
	if (len > max_frame)
		return WIRE_ETOOBIG;
	if (len < WIRE_HDR)
		return WIRE_ELENGTH;
	if (p[0] != WIRE_MAGIC0 || p[1] != WIRE_MAGIC1)
		return WIRE_EMAGIC;
	if (p[2] != WIRE_VERSION)
		return WIRE_EVERSION;
	f->type = p[3];
	body = get32(p + 4);
	if (body != len - WIRE_HDR)
		return WIRE_ELENGTH;
	if (get64(p + 8) != 0)
		return WIRE_ERESERVED;
	b = p + WIRE_HDR;
	switch (f->type) {
	case WIRE_HELLO:
	case WIRE_WELCOME:
		if (body < 8 + 8 + 4 + 1)
			return WIRE_ELENGTH;
		f->u.hello.epoch = get64(b);
		f->u.hello.session = get64(b + 8);
		f->u.hello.max_frame = get32(b + 16);
		if ((rc = decode_name(b + 20, body - 20, f->u.hello.name,
		    &used)) < 0)
			return rc;
		if (20 + used != body)
			return WIRE_ELENGTH;
		if (f->u.hello.max_frame < WIRE_FRAME_MIN)
			return WIRE_ELENGTH;
		return 0;
	case WIRE_PING:
	case WIRE_PONG:
		if (body != 8)
			return WIRE_ELENGTH;
		f->u.nonce = get64(b);
		return 0;
	case WIRE_BATCH:
		if (body < 12)
			return WIRE_ELENGTH;
		f->u.batch.epoch = get64(b);
		f->u.batch.count = get32(b + 8);
		if (f->u.batch.count == 0 ||
		    f->u.batch.count > (body - 12) / WIRE_MSG_HDR)
			return WIRE_ECOUNT;
		off = 12;
		for (i = 0; i < f->u.batch.count; i++) {
			if ((rc = decode_msg(b + off, body - off, &m,
			    &used)) < 0)
				return rc;
			off += used;
		}
		if (off != body)
			return WIRE_ETRAILING;
		f->u.batch.next = b + 12;
		f->u.batch.end = b + body;
		return 0;
	case WIRE_ERROR:
		if (body < 4 || body - 4 > WIRE_TEXT_MAX)
			return WIRE_ELENGTH;
		f->u.error.code = get32(b);
		f->u.error.text = (const char *)b + 4;
		f->u.error.text_len = body - 4;
		return 0;
	default:
		return WIRE_ETYPE;
	}
}

/* The next message of a decoded batch: 1 with *m, 0 after the last. */
int
wire_next(struct wire_frame *f, struct wire_msg *m)
{
	size_t used;

	if (f->type != WIRE_BATCH || f->u.batch.next == NULL ||
	    f->u.batch.next >= f->u.batch.end)
		return 0;
	if (decode_msg(f->u.batch.next, (size_t)(f->u.batch.end -
	    f->u.batch.next), m, &used) < 0)
		return 0;	/* cannot happen: wire_decode checked it */
	f->u.batch.next += used;
	return 1;
}

/* --- encoding ------------------------------------------------------------- */

static int
need(struct wire_buf *w, size_t more)
{
	size_t cap;
	uint8_t *p;

	if (w->len + more <= w->cap)
		return 0;
	cap = w->cap == 0 ? 4096 : w->cap;
	while (cap < w->len + more)
		cap *= 2;
	if ((p = realloc(w->p, cap)) == NULL)
		return -1;
	w->p = p;
	w->cap = cap;
	return 0;
}

void
wire_buf_free(struct wire_buf *w)
{
	free(w->p);
	memset(w, 0, sizeof(*w));
}

/* A header for a frame of type with body bytes to follow. */
static void
header(uint8_t *p, uint8_t type, size_t body)
{
	p[0] = WIRE_MAGIC0;
	p[1] = WIRE_MAGIC1;
	p[2] = WIRE_VERSION;
	p[3] = type;
	put32(p + 4, (uint32_t)body);
	put64(p + 8, 0);
}

/* HELLO or WELCOME into w (which it empties first); -1: no memory. */
int
wire_hello(struct wire_buf *w, uint8_t type, const struct wire_hello *h)
{
	size_t n = strlen(h->name), body = 20 + 1 + n;

	w->len = 0;
	if (n == 0 || n > WIRE_NAME_MAX || need(w, WIRE_HDR + body) == -1)
		return -1;
	header(w->p, type, body);
	put64(w->p + WIRE_HDR, h->epoch);
	put64(w->p + WIRE_HDR + 8, h->session);
	put32(w->p + WIRE_HDR + 16, h->max_frame);
	w->p[WIRE_HDR + 20] = (uint8_t)n;
	memcpy(w->p + WIRE_HDR + 21, h->name, n);
	w->len = WIRE_HDR + body;
	return 0;
}

/* PING or PONG. */
int
wire_ping(struct wire_buf *w, uint8_t type, uint64_t nonce)
{
	w->len = 0;
	if (need(w, WIRE_HDR + 8) == -1)
		return -1;
	header(w->p, type, 8);
	put64(w->p + WIRE_HDR, nonce);
	w->len = WIRE_HDR + 8;
	return 0;
}

/* ERROR: a code and a text, cut to WIRE_TEXT_MAX. */
int
wire_error(struct wire_buf *w, uint32_t code, const char *text)
{
	size_t n = strlen(text);

	if (n > WIRE_TEXT_MAX)
		n = WIRE_TEXT_MAX;
	w->len = 0;
	if (need(w, WIRE_HDR + 4 + n) == -1)
		return -1;
	header(w->p, WIRE_ERROR, 4 + n);
	put32(w->p + WIRE_HDR, code);
	memcpy(w->p + WIRE_HDR + 4, text, n);
	w->len = WIRE_HDR + 4 + n;
	return 0;
}

/* Start a BATCH for a receiver of this epoch (0: any); w is emptied. */
int
wire_batch_begin(struct wire_buf *w, uint64_t epoch)
{
	w->len = 0;
	w->count = 0;
	if (need(w, WIRE_HDR + 12) == -1)
		return -1;
	put64(w->p + WIRE_HDR, epoch);
	w->len = WIRE_HDR + 12;
	return 0;
}

/* The size a message takes in a batch. */
size_t
wire_msg_size(const struct wire_msg *m)
{
	return WIRE_MSG_HDR + (size_t)m->path_len + m->len;
}

/* One message more; its path and data are copied. */
int
wire_batch_add(struct wire_buf *w, const struct wire_msg *m)
{
	uint8_t *p;

	if (need(w, wire_msg_size(m)) == -1)
		return -1;
	p = w->p + w->len;
	p[0] = m->kind;
	p[1] = m->flags;
	put16(p + 2, m->path_len);
	put32(p + 4, m->tag);
	put32(p + 8, m->to_index);
	put32(p + 12, m->to_inc);
	put32(p + 16, m->from_index);
	put32(p + 20, m->from_inc);
	put64(p + 24, m->corr);
	put32(p + 32, m->len);
	if (m->path_len > 0)
		memcpy(p + WIRE_MSG_HDR, m->path, m->path_len);
	if (m->len > 0)
		memcpy(p + WIRE_MSG_HDR + m->path_len, m->data, m->len);
	w->len += wire_msg_size(m);
	w->count++;
	return 0;
}

/* Finish the batch: its header, its count.  The frame is w->p, w->len. */
void
wire_batch_end(struct wire_buf *w)
{
	header(w->p, WIRE_BATCH, w->len - WIRE_HDR);
	put32(w->p + WIRE_HDR + 8, w->count);
}

/* TERMINATED's payload, and back. */
void
wire_put_terminated(uint8_t out[WIRE_TERMINATED_LEN],
    const struct wire_terminated *t)
{
	put32(out, t->index);
	put32(out + 4, t->incarnation);
	put32(out + 8, (uint32_t)t->wstatus);
	put32(out + 12, (uint32_t)t->exit_status);
	put32(out + 16, (uint32_t)t->signal);
	put32(out + 20, t->reason);
}

void
wire_get_terminated(const uint8_t in[WIRE_TERMINATED_LEN],
    struct wire_terminated *t)
{
	t->index = get32(in);
	t->incarnation = get32(in + 4);
	t->wstatus = (int32_t)get32(in + 8);
	t->exit_status = (int32_t)get32(in + 12);
	t->signal = (int32_t)get32(in + 16);
	t->reason = get32(in + 20);
}

const char *
wire_strerror(int rc)
{
	switch (rc) {
	case WIRE_EMAGIC:	return "bad magic";
	case WIRE_EVERSION:	return "unknown version";
	case WIRE_ETYPE:	return "unknown frame type";
	case WIRE_ELENGTH:	return "bad length";
	case WIRE_ETOOBIG:	return "frame larger than max_frame";
	case WIRE_ERESERVED:	return "reserved bytes not zero";
	case WIRE_ECOUNT:	return "bad message count";
	case WIRE_EKIND:	return "unknown or malformed message kind";
	case WIRE_EFLAGS:	return "unknown message flags";
	case WIRE_EPATH:	return "bad path";
	case WIRE_EINDEX:	return "mailbox index out of range";
	case WIRE_ENAME:	return "bad name";
	case WIRE_ETRAILING:	return "bytes after the last message";
	default:		return "unknown error";
	}
}
