/*
 * json.h: a tiny JSON writer (actorctl's --json output) and a strict
 * parser (the tests read that output back, the bash completion need not).
 *
 * Owned by json.c.  The writer never produces invalid JSON whatever bytes
 * it is given (control characters and non-ASCII bytes are escaped); the
 * parser accepts RFC 8259 documents only, nested at most JSON_MAX_DEPTH.
 */
#ifndef ACTORD_JSON_H
#define ACTORD_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/ctlproto.h"

#define JSON_MAX_DEPTH	64

struct json_w {
	struct ctl_buf	*b;
	int		 depth;
	bool		 first[JSON_MAX_DEPTH];
};

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY,
	JSON_OBJECT };

struct json {
	enum json_type	 type;
	char		*key;		/* member of an object: its name */
	char		*str;		/* JSON_STRING, NUL-terminated */
	size_t		 slen;		/* bytes in str (may hold NULs) */
	double		 num;
	bool		 b;
	struct json	*child;		/* first element or member */
	struct json	*next;
};

/* json.c: writer; key is NULL inside arrays and at the top */
void	 jw_init(struct json_w *, struct ctl_buf *);
void	 jw_obj_begin(struct json_w *, const char *key);
void	 jw_obj_end(struct json_w *);
void	 jw_arr_begin(struct json_w *, const char *key);
void	 jw_arr_end(struct json_w *);
void	 jw_str(struct json_w *, const char *key, const char *);
void	 jw_bytes(struct json_w *, const char *key, const void *, size_t);
void	 jw_text(struct json_w *, const char *key, const void *, size_t);
void	 jw_base64(struct json_w *, const char *key, const void *, size_t);
void	 jw_int(struct json_w *, const char *key, int64_t);
void	 jw_uint(struct json_w *, const char *key, uint64_t);
void	 jw_bool(struct json_w *, const char *key, bool);
void	 jw_null(struct json_w *, const char *key);

/* json.c: parser */
struct json *json_parse(const char *, size_t, char *err, size_t errlen);
void	 json_free(struct json *);
const struct json *json_get(const struct json *, const char *key);
const struct json *json_at(const struct json *, size_t);
size_t	 json_count(const struct json *);

#endif /* ACTORD_JSON_H */
