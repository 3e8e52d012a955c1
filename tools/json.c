/*
 * json.c: the JSON writer actorctl prints with, and a small strict
 * recursive-descent parser for reading such documents back.
 *
 * It owns no state.  The parser must never read past the text it is
 * given, never recurse deeper than JSON_MAX_DEPTH, and never accept
 * what RFC 8259 refuses (trailing commas, bare words, control characters
 * in strings, leading zeros).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/json.h"

struct jp {
	const char	*start;
	const char	*p;
	const char	*end;
	int		 depth;
	char		*err;
	size_t		 errlen;
};

static void	 jw_sep(struct json_w *, const char *);
static void	 jw_quoted(struct ctl_buf *, const void *, size_t, bool);
static struct json *jp_value(struct jp *);
static int	 jp_string(struct jp *, char **, size_t *);
static void	 jp_ws(struct jp *);
static struct json *jp_fail(struct jp *, const char *);

/* --- writer -------------------------------------------------------------- */

void
jw_init(struct json_w *w, struct ctl_buf *b)
{
	memset(w, 0, sizeof(*w));
	w->b = b;
	w->first[0] = true;
}

/*
 * v as a JSON string.  Bytes from 0x7f up are escaped one code point each
 * (bytes, not text), unless utf8 says the caller checked they are UTF-8.
 */
static void
jw_quoted(struct ctl_buf *b, const void *v, size_t n, bool utf8)
{
	const unsigned char	*s = v;
	size_t			 i;

	ctl_buf_add(b, "\"", 1);
	for (i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\') {
			ctl_buf_add(b, "\\", 1);
			ctl_buf_add(b, &s[i], 1);
		} else if (s[i] == '\n')
			ctl_buf_add(b, "\\n", 2);
		else if (s[i] == '\t')
			ctl_buf_add(b, "\\t", 2);
		else if (s[i] < 0x20 || s[i] == 0x7f || (s[i] > 0x7f && !utf8))
			/* Bytes, not text: each one stays one code point. */
			ctl_buf_printf(b, "\\u%04x", s[i]);
		else
			ctl_buf_add(b, &s[i], 1);
	}
	ctl_buf_add(b, "\"", 1);
}

/* The comma before a value, and its key when inside an object. */
static void
jw_sep(struct json_w *w, const char *key)
{
	if (!w->first[w->depth])
		ctl_buf_add(w->b, ",", 1);
	w->first[w->depth] = false;
	if (key != NULL) {
		jw_quoted(w->b, key, strlen(key), false);
		ctl_buf_add(w->b, ":", 1);
	}
}

void
jw_obj_begin(struct json_w *w, const char *key)
{
	jw_sep(w, key);
	ctl_buf_add(w->b, "{", 1);
	if (w->depth < JSON_MAX_DEPTH - 1)
		w->first[++w->depth] = true;
}

void
jw_obj_end(struct json_w *w)
{
	ctl_buf_add(w->b, "}", 1);
	if (w->depth > 0)
		w->depth--;
}

void
jw_arr_begin(struct json_w *w, const char *key)
{
	jw_sep(w, key);
	ctl_buf_add(w->b, "[", 1);
	if (w->depth < JSON_MAX_DEPTH - 1)
		w->first[++w->depth] = true;
}

void
jw_arr_end(struct json_w *w)
{
	ctl_buf_add(w->b, "]", 1);
	if (w->depth > 0)
		w->depth--;
}

void
jw_str(struct json_w *w, const char *key, const char *s)
{
	jw_sep(w, key);
	jw_quoted(w->b, s, strlen(s), false);
}

void
jw_bytes(struct json_w *w, const char *key, const void *p, size_t n)
{
	jw_sep(w, key);
	jw_quoted(w->b, p, n, false);
}

/* Text the caller checked is valid UTF-8: kept as it is, not escaped. */
void
jw_text(struct json_w *w, const char *key, const void *p, size_t n)
{
	jw_sep(w, key);
	jw_quoted(w->b, p, n, true);
}

/* Bytes as an RFC 4648 base64 string (with padding). */
void
jw_base64(struct json_w *w, const char *key, const void *p, size_t n)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const uint8_t	*d = p;
	char		 q[4];
	uint32_t	 v;
	size_t		 i;

	jw_sep(w, key);
	ctl_buf_add(w->b, "\"", 1);
	for (i = 0; i < n; i += 3) {
		v = (uint32_t)d[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)d[i + 1] << 8;
		if (i + 2 < n)
			v |= d[i + 2];
		q[0] = b64[v >> 18 & 63];
		q[1] = b64[v >> 12 & 63];
		q[2] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		q[3] = i + 2 < n ? b64[v & 63] : '=';
		ctl_buf_add(w->b, q, 4);
	}
	ctl_buf_add(w->b, "\"", 1);
}

void
jw_int(struct json_w *w, const char *key, int64_t v)
{
	jw_sep(w, key);
	ctl_buf_printf(w->b, "%lld", (long long)v);
}

void
jw_uint(struct json_w *w, const char *key, uint64_t v)
{
	jw_sep(w, key);
	ctl_buf_printf(w->b, "%llu", (unsigned long long)v);
}

void
jw_bool(struct json_w *w, const char *key, bool v)
{
	jw_sep(w, key);
	ctl_buf_printf(w->b, "%s", v ? "true" : "false");
}

void
jw_null(struct json_w *w, const char *key)
{
	jw_sep(w, key);
	ctl_buf_add(w->b, "null", 4);
}

/* --- parser -------------------------------------------------------------- */

static struct json *
jp_fail(struct jp *jp, const char *what)
{
	if (jp->err != NULL && jp->err[0] == '\0')
		snprintf(jp->err, jp->errlen, "%s at offset %td", what,
		    jp->p - jp->start);
	return NULL;
}

static void
jp_ws(struct jp *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' ||
	    *jp->p == '\n' || *jp->p == '\r'))
		jp->p++;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string at jp->p (which is '"'), decoded to UTF-8 in a new buffer. */
static int
jp_string(struct jp *jp, char **out, size_t *outlen)
{
	const char	*s = jp->p + 1;
	char		*buf, *d;
	unsigned	 cp, lo;
	int		 i, h;

	/* Decoded text is never longer than the escaped text. */
	if ((buf = malloc(jp->end - s + 1)) == NULL)
		return -1;
	for (d = buf; s < jp->end && *s != '"'; s++) {
		if ((unsigned char)*s < 0x20)
			goto bad;
		if (*s != '\\') {
			*d++ = *s;
			continue;
		}
		if (++s >= jp->end)
			goto bad;
		switch (*s) {
		case '"': case '\\': case '/': *d++ = *s; break;
		case 'b': *d++ = '\b'; break;
		case 'f': *d++ = '\f'; break;
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		case 't': *d++ = '\t'; break;
		case 'u':
			if (jp->end - s < 5)
				goto bad;
			for (cp = 0, i = 1; i <= 4; i++) {
				if ((h = hexval(s[i])) == -1)
					goto bad;
				cp = cp << 4 | h;
			}
			s += 4;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (jp->end - s < 7 || s[1] != '\\' || s[2] != 'u')
					goto bad;
				for (lo = 0, i = 3; i <= 6; i++) {
					if ((h = hexval(s[i])) == -1)
						goto bad;
					lo = lo << 4 | h;
				}
				if (lo < 0xdc00 || lo > 0xdfff)
					goto bad;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			} else if (cp >= 0xdc00 && cp < 0xe000)
				goto bad;
			if (cp < 0x80)
				*d++ = cp;
			else if (cp < 0x800) {
				*d++ = 0xc0 | cp >> 6;
				*d++ = 0x80 | (cp & 0x3f);
			} else if (cp < 0x10000) {
				*d++ = 0xe0 | cp >> 12;
				*d++ = 0x80 | ((cp >> 6) & 0x3f);
				*d++ = 0x80 | (cp & 0x3f);
			} else {
				*d++ = 0xf0 | cp >> 18;
				*d++ = 0x80 | ((cp >> 12) & 0x3f);
				*d++ = 0x80 | ((cp >> 6) & 0x3f);
				*d++ = 0x80 | (cp & 0x3f);
			}
			break;
		default:
			goto bad;
		}
	}
	if (s >= jp->end)
		goto bad;
	*d = '\0';
	*out = buf;
	*outlen = d - buf;
	jp->p = s + 1;
	return 0;
bad:
	free(buf);
	jp->p = s < jp->end ? s : jp->end;
	jp_fail(jp, "bad string");
	return -1;
}

static int
jp_number(struct jp *jp, double *v)
{
	const char	*s = jp->p;
	char		 tmp[64];
	size_t		 n;

	if (s < jp->end && *s == '-')
		s++;
	if (s >= jp->end || !isdigit((unsigned char)*s))
		return -1;
	if (*s == '0' && s + 1 < jp->end && isdigit((unsigned char)s[1]))
		return -1;
	while (s < jp->end && isdigit((unsigned char)*s))
		s++;
	if (s < jp->end && *s == '.') {
		if (++s >= jp->end || !isdigit((unsigned char)*s))
			return -1;
		while (s < jp->end && isdigit((unsigned char)*s))
			s++;
	}
	if (s < jp->end && (*s == 'e' || *s == 'E')) {
		s++;
		if (s < jp->end && (*s == '+' || *s == '-'))
			s++;
		if (s >= jp->end || !isdigit((unsigned char)*s))
			return -1;
		while (s < jp->end && isdigit((unsigned char)*s))
			s++;
	}
	if ((n = s - jp->p) >= sizeof(tmp))
		return -1;
	memcpy(tmp, jp->p, n);
	tmp[n] = '\0';
	*v = strtod(tmp, NULL);
	jp->p = s;
	return 0;
}

static bool
jp_word(struct jp *jp, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, w, n) != 0)
		return false;
	jp->p += n;
	return true;
}

static struct json *
jp_value(struct jp *jp)
{
	struct json	*v, **tail;
	struct json	*item;
	char		*key;
	size_t		 klen;
	char		 close;

	jp_ws(jp);
	if (jp->p >= jp->end)
		return jp_fail(jp, "unexpected end");
	if ((v = calloc(1, sizeof(*v))) == NULL)
		return jp_fail(jp, "out of memory");
	switch (*jp->p) {
	case '{':
	case '[':
		if (++jp->depth > JSON_MAX_DEPTH) {
			free(v);
			return jp_fail(jp, "nested too deep");
		}
		v->type = *jp->p == '{' ? JSON_OBJECT : JSON_ARRAY;
		close = *jp->p == '{' ? '}' : ']';
		jp->p++;
		tail = &v->child;
		jp_ws(jp);
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			jp->depth--;
			return v;
		}
		for (;;) {
			key = NULL;
			if (v->type == JSON_OBJECT) {
				jp_ws(jp);
				if (jp->p >= jp->end || *jp->p != '"' ||
				    jp_string(jp, &key, &klen) == -1)
					goto bad;
				jp_ws(jp);
				if (jp->p >= jp->end || *jp->p++ != ':') {
					free(key);
					goto bad;
				}
			}
			if ((item = jp_value(jp)) == NULL) {
				free(key);
				goto bad;
			}
			item->key = key;
			*tail = item;
			tail = &item->next;
			jp_ws(jp);
			if (jp->p < jp->end && *jp->p == ',') {
				jp->p++;
				continue;
			}
			if (jp->p < jp->end && *jp->p == close) {
				jp->p++;
				break;
			}
			goto bad;
		}
		jp->depth--;
		return v;
	case '"':
		v->type = JSON_STRING;
		if (jp_string(jp, &v->str, &v->slen) == -1)
			goto bad;
		return v;
	case 't':
	case 'f':
	case 'n':
		if (jp_word(jp, "true"))
			v->type = JSON_BOOL, v->b = true;
		else if (jp_word(jp, "false"))
			v->type = JSON_BOOL;
		else if (jp_word(jp, "null"))
			v->type = JSON_NULL;
		else
			goto bad;
		return v;
	default:
		v->type = JSON_NUMBER;
		if (jp_number(jp, &v->num) == -1)
			goto bad;
		return v;
	}
bad:
	json_free(v);
	return jp_fail(jp, "syntax error");
}

struct json *
json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct jp	 jp;
	struct json	*v;

	jp.start = jp.p = text;
	jp.end = text + len;
	jp.depth = 0;
	jp.err = err;
	jp.errlen = errlen;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if ((v = jp_value(&jp)) == NULL)
		return NULL;
	jp_ws(&jp);
	if (jp.p != jp.end) {
		json_free(v);
		return jp_fail(&jp, "trailing characters");
	}
	return v;
}

void
json_free(struct json *v)
{
	struct json *c, *next;

	if (v == NULL)
		return;
	for (c = v->child; c != NULL; c = next) {
		next = c->next;
		json_free(c);
	}
	free(v->key);
	free(v->str);
	free(v);
}

const struct json *
json_get(const struct json *obj, const char *key)
{
	const struct json *c;

	if (obj == NULL || obj->type != JSON_OBJECT)
		return NULL;
	for (c = obj->child; c != NULL; c = c->next)
		if (strcmp(c->key, key) == 0)
			return c;
	return NULL;
}

const struct json *
json_at(const struct json *arr, size_t i)
{
	const struct json *c;

	if (arr == NULL || arr->type != JSON_ARRAY)
		return NULL;
	for (c = arr->child; c != NULL && i > 0; c = c->next)
		i--;
	return c;
}

size_t
json_count(const struct json *arr)
{
	const struct json	*c;
	size_t			 n = 0;

	if (arr == NULL)
		return 0;
	for (c = arr->child; c != NULL; c = c->next)
		n++;
	return n;
}
