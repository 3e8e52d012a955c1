/*
 * check_ctlproto.c: unit tests of the control protocol codec (ctlproto.c),
 * the JSON writer and parser (tools/json.c) and the Prometheus text
 * (metrics.c).  No sockets, no processes: the server side is tested in
 * check_ctl_server.c, actorctl in check_ctl_actorctl.c.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/ctlproto.h"
#include "supervisor/metrics.h"
#include "tools/json.h"
#include "tests/lib/tcheck.h"

static size_t
encode(struct ctl_buf *b, const struct ctl_request *q)
{
	ctl_buf_init(b, CTL_MAX_REQUEST);
	ck_assert_int_eq(ctl_request_encode(b, q), 0);
	return b->len;
}

START_TEST(request_round_trip)
{
	struct ctl_request	 q, d;
	struct ctl_buf		 b;
	char			 err[128];
	int			 cmd;

	for (cmd = 1; cmd < CTL_CMD_MAX; cmd++) {
		memset(&q, 0, sizeof(q));
		q.cmd = cmd;
		/* Fill every field the command allows, then check each. */
		strcpy(q.path, "/web/api/3");
		q.tag = 0xdeadbeef;
		q.data = (const uint8_t *)"he\0llo";
		q.datalen = 6;
		q.timeout_ms = 1234;
		q.signo = SIGKILL;
		q.cursor = 0x0102030405060708ULL;
		q.wait = true;
		switch (cmd) {
		case CTL_CMD_STATUS:
		case CTL_CMD_STATS:
			q.present = 1u << CTL_F_PATH;
			break;
		case CTL_CMD_KILL:
			q.present = 1u << CTL_F_PATH | 1u << CTL_F_SIGNAL;
			break;
		case CTL_CMD_SEND:
			q.present = 1u << CTL_F_PATH | 1u << CTL_F_TAG |
			    1u << CTL_F_DATA;
			break;
		case CTL_CMD_ASK:
			q.present = 1u << CTL_F_PATH | 1u << CTL_F_TAG |
			    1u << CTL_F_DATA | 1u << CTL_F_TIMEOUT;
			break;
		case CTL_CMD_DEADLETTERS:
			q.present = 1u << CTL_F_CURSOR | 1u << CTL_F_WAIT;
			break;
		case CTL_CMD_LOG:
			q.present = 1u << CTL_F_PATH | 1u << CTL_F_CURSOR |
			    1u << CTL_F_WAIT;
			break;
		case CTL_CMD_RELOAD:
		case CTL_CMD_SHUTDOWN:
		case CTL_CMD_NODES:
			q.present = 0;
			break;
		default:
			q.present = 1u << CTL_F_PATH;
		}
		encode(&b, &q);
		ck_assert_msg(ctl_request_decode(b.data, b.len, &d, err,
		    sizeof(err)) == CTL_OK, "%s: %s", ctl_cmd_name(cmd), err);
		ck_assert_int_eq(d.cmd, cmd);
		ck_assert_uint_eq(d.present, q.present);
		if (CTL_HAS(&q, CTL_F_PATH))
			ck_assert_str_eq(d.path, q.path);
		if (CTL_HAS(&q, CTL_F_TAG))
			ck_assert_uint_eq(d.tag, q.tag);
		if (CTL_HAS(&q, CTL_F_DATA)) {
			ck_assert_uint_eq(d.datalen, 6);
			ck_assert_mem_eq(d.data, "he\0llo", 6);
		}
		if (CTL_HAS(&q, CTL_F_TIMEOUT))
			ck_assert_uint_eq(d.timeout_ms, 1234);
		if (CTL_HAS(&q, CTL_F_SIGNAL))
			ck_assert_uint_eq(d.signo, SIGKILL);
		if (CTL_HAS(&q, CTL_F_CURSOR))
			ck_assert_uint_eq(d.cursor, q.cursor);
		ck_assert(d.wait == CTL_HAS(&q, CTL_F_WAIT));
		ck_assert_int_eq(ctl_cmd_lookup(ctl_cmd_name(cmd)), cmd);
		ctl_buf_free(&b);
	}
	ck_assert_int_eq(ctl_cmd_lookup("frobnicate"), -1);
}
END_TEST

/* A request built by hand: header, then raw fields. */
static size_t
raw(uint8_t *p, uint32_t len, uint16_t version, uint16_t cmd, const void *body,
    size_t blen)
{
	p[0] = len >> 24; p[1] = len >> 16; p[2] = len >> 8; p[3] = len;
	p[4] = version >> 8; p[5] = version;
	p[6] = cmd >> 8; p[7] = cmd;
	memcpy(p + 8, body, blen);
	return 8 + blen;
}

#define F(t, l)	(t) >> 8, (t) & 0xff, 0, 0, ((l) >> 8) & 0xff, (l) & 0xff

static const struct bad {
	const char	*what;
	uint16_t	 version;
	uint16_t	 cmd;
	uint8_t		 body[40];
	size_t		 blen;
	int		 lendelta;	/* frame length field minus truth */
	int		 expect;
} bad[] = {
	{ "version 2", 2, CTL_CMD_STATUS, { 0 }, 0, 0, CTL_E_VERSION },
	{ "version 0", 0, CTL_CMD_STATUS, { 0 }, 0, 0, CTL_E_VERSION },
	{ "command 0", 1, 0, { 0 }, 0, 0, CTL_E_UNKNOWN },
	{ "command 999", 1, 999, { 0 }, 0, 0, CTL_E_UNKNOWN },
	{ "length too long", 1, CTL_CMD_STATUS, { 0 }, 0, 1, CTL_E_PROTO },
	{ "length too short", 1, CTL_CMD_STATUS, { F(1, 2), '/', 'a' }, 8, -1,
	    CTL_E_PROTO },
	{ "truncated field header", 1, CTL_CMD_STATUS, { 0, 1, 0 }, 3, 0,
	    CTL_E_PROTO },
	{ "field longer than frame", 1, CTL_CMD_STATUS, { F(1, 9), '/', 'a' },
	    8, 0, CTL_E_PROTO },
	{ "missing path", 1, CTL_CMD_START, { 0 }, 0, 0, CTL_E_PROTO },
	{ "field not allowed", 1, CTL_CMD_RELOAD, { F(2, 4), 0, 0, 0, 1 }, 10,
	    0, CTL_E_PROTO },
	{ "unknown field", 1, CTL_CMD_STATUS, { F(99, 0) }, 6, 0, CTL_E_PROTO },
	{ "repeated field", 1, CTL_CMD_STATUS, { F(1, 1), '/', F(1, 1), '/' },
	    14, 0, CTL_E_PROTO },
	{ "tag of 3 bytes", 1, CTL_CMD_SEND, { F(1, 2), '/', 'a', F(2, 3),
	    0, 0, 1 }, 17, 0, CTL_E_PROTO },
	{ "cursor of 4 bytes", 1, CTL_CMD_DEADLETTERS, { F(6, 4), 0, 0, 0, 1 },
	    10, 0, CTL_E_PROTO },
	{ "wait with a value", 1, CTL_CMD_DEADLETTERS, { F(7, 1), 1 }, 7, 0,
	    CTL_E_PROTO },
	{ "relative path", 1, CTL_CMD_STATUS, { F(1, 3), 'w', 'e', 'b' }, 9, 0,
	    CTL_E_PROTO },
	{ "path with NUL", 1, CTL_CMD_STATUS, { F(1, 3), '/', 0, 'b' }, 9, 0,
	    CTL_E_PROTO },
	{ "path with ..", 1, CTL_CMD_STATUS, { F(1, 3), '/', '.', '.' }, 9, 0,
	    CTL_E_PROTO },
	{ "signal 0", 1, CTL_CMD_KILL, { F(1, 2), '/', 'a', F(5, 4), 0, 0, 0,
	    0 }, 18, 0, CTL_E_PROTO },
	{ "signal 200", 1, CTL_CMD_KILL, { F(1, 2), '/', 'a', F(5, 4), 0, 0,
	    0, 200 }, 18, 0, CTL_E_PROTO },
};

START_TEST(request_refusals)
{
	uint8_t			 frame[128];
	struct ctl_request	 d;
	char			 err[128];
	size_t			 n;
	int			 st;

	n = raw(frame, 0, bad[_i].version, bad[_i].cmd, bad[_i].body,
	    bad[_i].blen);
	raw(frame, (uint32_t)(n - 4 + bad[_i].lendelta), bad[_i].version,
	    bad[_i].cmd, bad[_i].body, bad[_i].blen);
	err[0] = '\0';
	st = ctl_request_decode(frame, n, &d, err, sizeof(err));
	ck_assert_msg(st == bad[_i].expect, "%s: status %d, expected %d (%s)",
	    bad[_i].what, st, bad[_i].expect, err);
	ck_assert_msg(err[0] != '\0', "%s: no reason given", bad[_i].what);
}
END_TEST

START_TEST(request_limits)
{
	struct ctl_request	 q, d;
	struct ctl_buf		 b;
	static uint8_t		 big[CTL_MAX_DATA + 1];
	uint32_t		 total;
	uint8_t			 hdr[4] = { 0, 1, 0, 0 };	/* 65536 */
	char			 err[128];

	/* DATA over its cap is refused as too large. */
	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_SEND;
	strcpy(q.path, "/a");
	q.data = big;
	q.datalen = sizeof(big);
	q.present = 1u << CTL_F_PATH | 1u << CTL_F_TAG | 1u << CTL_F_DATA;
	encode(&b, &q);
	ck_assert_int_eq(ctl_request_decode(b.data, b.len, &d, err,
	    sizeof(err)), CTL_E_TOOBIG);
	ctl_buf_free(&b);
	/* A whole frame over CTL_MAX_REQUEST is known from its header. */
	ck_assert_int_eq(ctl_frame_length(hdr, 4, CTL_MAX_REQUEST, &total), -2);
	hdr[1] = 0;
	hdr[3] = 3;
	ck_assert_int_eq(ctl_frame_length(hdr, 4, CTL_MAX_REQUEST, &total), -1);
	hdr[3] = 4;
	ck_assert_int_eq(ctl_frame_length(hdr, 4, CTL_MAX_REQUEST, &total), 1);
	ck_assert_uint_eq(total, 8);
	ck_assert_int_eq(ctl_frame_length(hdr, 3, CTL_MAX_REQUEST, &total), 0);
	/* A buffer never grows past its cap; the error sticks. */
	ctl_buf_init(&b, 16);
	ck_assert_int_eq(ctl_buf_add(&b, big, 16), 0);
	ck_assert_int_eq(ctl_buf_add(&b, big, 1), -1);
	ck_assert_int_ne(b.err, 0);
	ctl_buf_free(&b);
}
END_TEST

START_TEST(paths)
{
	static const char *const good[] = { "/", "/a", "/web/api/0",
	    "/a.b/c-d_e" };
	static const char *const badp[] = { "", "a", "//", "/a/", "/a//b",
	    "/./a", "/a/..", "/a b", "/a\tb", "/\x7f" };
	char	 long_path[CTL_PATH_MAX + 1];
	size_t	 i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(ctl_path_valid(good[i]), "%s", good[i]);
	for (i = 0; i < sizeof(badp) / sizeof(badp[0]); i++)
		ck_assert_msg(!ctl_path_valid(badp[i]), "\"%s\"", badp[i]);
	memset(long_path, 'a', sizeof(long_path));
	long_path[0] = '/';
	long_path[CTL_PATH_MAX] = '\0';
	ck_assert(!ctl_path_valid(long_path));
	long_path[CTL_PATH_MAX - 1] = '\0';
	ck_assert(ctl_path_valid(long_path));
}
END_TEST

static void
sample_response(struct ctl_buf *b)
{
	struct ctl_node		 n;
	struct ctl_actor_stats	 a;
	struct ctl_shard_group	 g;
	struct ctl_deadletter	 d;
	struct ctl_counters	 c;
	size_t			 start;

	ctl_buf_init(b, CTL_MAX_RESPONSE);
	start = ctl_frame_begin(b, CTL_OK);
	memset(&n, 0, sizeof(n));
	strcpy(n.path, "/web/a\"b");
	strcpy(n.kind, "worker");
	strcpy(n.state, "restarting");
	n.pid = -1;
	n.uptime_ms = 1ULL << 40;
	n.restarts = 7;
	n.incarnation = 8;
	strcpy(n.last_exit, "killed by signal 9");
	n.mailbox_depth = -1;
	ctl_put_node(b, &n);
	memset(&a, 0, sizeof(a));
	strcpy(a.path, "/web/a\"b");
	a.depth = 5;
	a.capacity = 8;
	a.wait_p99_us = 99;
	a.wait.nbuckets = 2;
	a.wait.le_us[0] = 10;
	a.wait.le_us[1] = 1000;
	a.wait.count[0] = 3;
	a.wait.count[1] = 4;
	a.wait.total = 8;
	a.wait.sum_us = 2500;
	ctl_put_actor(b, &a);
	memset(&g, 0, sizeof(g));
	strcpy(g.name, "/g");
	g.nshards = 3;
	g.count[2] = 42;
	ctl_put_shards(b, &g);
	memset(&d, 0, sizeof(d));
	d.seq = 3;
	strcpy(d.recipient, "/x");
	strcpy(d.reason, "mailbox full");
	ctl_put_deadletter(b, &d);
	memset(&c, 0, sizeof(c));
	c.malformed = 11;
	ctl_put_counters(b, &c);
	ctl_put_u64(b, CTL_F_CURSOR, 77);
	ctl_put_bytes(b, CTL_F_DATA, "out\0put", 7);
	ctl_put_str(b, CTL_F_MESSAGE, "hello");
	ctl_put_u32(b, 200, 1);		/* a field from a newer actord */
	ck_assert_int_eq(ctl_frame_end(b, start), 0);
}

START_TEST(response_round_trip)
{
	struct ctl_response	 r;
	struct ctl_buf		 b;
	char			 err[128];

	sample_response(&b);
	ck_assert_int_eq(ctl_response_decode(b.data, b.len, &r, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(r.status, CTL_OK);
	ck_assert_uint_eq(r.nnodes, 1);
	ck_assert_str_eq(r.nodes[0].path, "/web/a\"b");
	ck_assert_str_eq(r.nodes[0].state, "restarting");
	ck_assert_int_eq(r.nodes[0].pid, -1);
	ck_assert_uint_eq(r.nodes[0].uptime_ms, 1ULL << 40);
	ck_assert_int_eq(r.nodes[0].mailbox_depth, -1);
	ck_assert_str_eq(r.nodes[0].last_exit, "killed by signal 9");
	ck_assert_uint_eq(r.nactors, 1);
	ck_assert_uint_eq(r.actors[0].wait.nbuckets, 2);
	ck_assert_uint_eq(r.actors[0].wait.count[1], 4);
	ck_assert_uint_eq(r.actors[0].wait.total, 8);
	ck_assert_uint_eq(r.ngroups, 1);
	ck_assert_uint_eq(r.groups[0].nshards, 3);
	ck_assert_uint_eq(r.groups[0].count[2], 42);
	ck_assert_uint_eq(r.ndls, 1);
	ck_assert_str_eq(r.dls[0].reason, "mailbox full");
	ck_assert(r.has_control);
	ck_assert_uint_eq(r.control.malformed, 11);
	ck_assert(r.has_cursor);
	ck_assert_uint_eq(r.cursor, 77);
	ck_assert_uint_eq(r.datalen, 7);
	ck_assert_mem_eq(r.data, "out\0put", 7);
	ck_assert_str_eq(r.message, "hello");
	ctl_response_free(&r);

	/*
	 * Every truncation of a valid answer is refused by its length; with
	 * the length patched to match, a cut inside a field is refused and
	 * a cut between fields is a shorter valid answer: never an overread
	 * (the sanitizer build checks that).
	 */
	for (size_t cut = 0; cut < b.len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);

		memcpy(copy, b.data, cut);
		ck_assert_msg(ctl_response_decode(copy, cut, &r, err,
		    sizeof(err)) == -1, "cut at %zu accepted", cut);
		if (cut >= 4) {
			copy[0] = (cut - 4) >> 24;
			copy[1] = (cut - 4) >> 16;
			copy[2] = (cut - 4) >> 8;
			copy[3] = cut - 4;
			if (ctl_response_decode(copy, cut, &r, err,
			    sizeof(err)) == 0)
				ctl_response_free(&r);
		}
		free(copy);
	}
	ctl_buf_free(&b);

	/* An error answer. */
	ctl_buf_init(&b, 4096);
	ck_assert_int_eq(ctl_error_frame(&b, CTL_E_STATE, "running"), 0);
	ck_assert_int_eq(ctl_response_decode(b.data, b.len, &r, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(r.status, CTL_E_STATE);
	ck_assert_str_eq(r.error, "running");
	ctl_response_free(&r);
	ctl_buf_free(&b);
}
END_TEST

START_TEST(json_round_trip)
{
	struct ctl_buf		 b;
	struct json_w		 w;
	struct json		*v;
	const struct json	*x;
	char			 err[128];

	ctl_buf_init(&b, 1 << 20);
	jw_init(&w, &b);
	jw_obj_begin(&w, NULL);
	jw_str(&w, "s", "a\"b\\c\n\x01");
	jw_bytes(&w, "bin", "\xff\0", 2);
	jw_int(&w, "neg", -42);
	jw_uint(&w, "big", 1ULL << 50);
	jw_bool(&w, "t", true);
	jw_null(&w, "n");
	jw_arr_begin(&w, "arr");
	jw_uint(&w, NULL, 1);
	jw_obj_begin(&w, NULL);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_obj_end(&w);
	v = json_parse((const char *)b.data, b.len, err, sizeof(err));
	ck_assert_msg(v != NULL, "%s: %.*s", err, (int)b.len, b.data);
	ck_assert_str_eq(json_get(v, "s")->str, "a\"b\\c\n\x01");
	x = json_get(v, "bin");
	ck_assert_uint_eq(x->slen, 3);	/* U+00FF is 2 bytes, then NUL */
	ck_assert(json_get(v, "neg")->num == -42);
	ck_assert(json_get(v, "big")->num == (double)(1ULL << 50));
	ck_assert(json_get(v, "t")->b);
	ck_assert_int_eq(json_get(v, "n")->type, JSON_NULL);
	ck_assert_uint_eq(json_count(json_get(v, "arr")), 2);
	ck_assert_int_eq(json_at(json_get(v, "arr"), 1)->type, JSON_OBJECT);
	ck_assert_ptr_null(json_get(v, "missing"));
	json_free(v);
	ctl_buf_free(&b);
}
END_TEST

START_TEST(json_refusals)
{
	static const char *const badj[] = { "", "{", "[1,]", "{\"a\":1,}",
	    "{a:1}", "01", "1.", "-", "tru", "\"\x01\"", "\"\\x\"", "[1] 2",
	    "\"\\ud800\"", "{\"a\" 1}", "nul" };
	char	 deep[200];
	size_t	 i;

	for (i = 0; i < sizeof(badj) / sizeof(badj[0]); i++) {
		struct json *v = json_parse(badj[i], strlen(badj[i]), NULL, 0);

		ck_assert_msg(v == NULL, "accepted \"%s\"", badj[i]);
	}
	memset(deep, '[', sizeof(deep));
	ck_assert_ptr_null(json_parse(deep, sizeof(deep), NULL, 0));
}
END_TEST

/*
 * The exposition format: every sample belongs to a family announced by
 * HELP and TYPE before it; histogram buckets are cumulative and end in
 * +Inf, which equals _count.
 */
START_TEST(prometheus_text)
{
	struct ctl_response	 r;
	struct ctl_buf		 b, t;
	char			 err[128], *text, *line, *save, fam[128];
	char			 typed[64][128];
	int			 ntyped = 0, i, found, inf_seen = 0;
	unsigned long long	 v, prev = 0, inf = 0, count = 0;

	sample_response(&b);
	ck_assert_int_eq(ctl_response_decode(b.data, b.len, &r, err,
	    sizeof(err)), 0);
	ctl_buf_init(&t, 1 << 20);
	ck_assert_int_eq(metrics_write(&t, &r), 0);
	ctl_buf_add(&t, "", 1);
	text = (char *)t.data;
	ck_assert_ptr_nonnull(strstr(text,
	    "# TYPE actord_mailbox_wait_seconds histogram\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "actord_mailbox_wait_seconds_bucket{path=\"/web/a\\\"b\",le=\"1e-05\"} 3\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "actord_shard_messages_total{group=\"/g\",shard=\"2\"} 42\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "actord_control_refused_total{reason=\"malformed\"} 11\n"));
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# TYPE ", 7) == 0) {
			ck_assert_int_lt(ntyped, 64);
			sscanf(line + 7, "%127s", typed[ntyped++]);
			continue;
		}
		if (line[0] == '#')
			continue;
		ck_assert_int_eq(sscanf(line, "%127[a-z_]", fam), 1);
		for (found = 0, i = 0; i < ntyped; i++) {
			size_t n = strlen(typed[i]);

			if (strncmp(fam, typed[i], n) == 0 && (fam[n] == '\0' ||
			    strcmp(fam + n, "_bucket") == 0 ||
			    strcmp(fam + n, "_sum") == 0 ||
			    strcmp(fam + n, "_count") == 0))
				found = 1;
		}
		ck_assert_msg(found, "sample before its TYPE: %s", line);
		if (strncmp(line, "actord_mailbox_wait_seconds_bucket", 34) == 0) {
			ck_assert_int_eq(sscanf(strrchr(line, ' '), "%llu", &v), 1);
			ck_assert_msg(v >= prev, "buckets not cumulative: %s", line);
			prev = v;
			if (strstr(line, "le=\"+Inf\"") != NULL) {
				inf = v;
				inf_seen = 1;
			}
		}
		if (strncmp(line, "actord_mailbox_wait_seconds_count", 33) == 0)
			sscanf(strrchr(line, ' '), "%llu", &count);
	}
	ck_assert(inf_seen);
	ck_assert_uint_eq(inf, 8);
	ck_assert_uint_eq(count, inf);
	ctl_response_free(&r);
	ctl_buf_free(&b);
	ctl_buf_free(&t);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("ctlproto");
	TCase	*tc = tcase_create("codec");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, request_round_trip);
	tcase_add_loop_test(tc, request_refusals, 0,
	    sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, request_limits);
	tcase_add_test(tc, paths);
	tcase_add_test(tc, response_round_trip);
	tcase_add_test(tc, json_round_trip);
	tcase_add_test(tc, json_refusals);
	tcase_add_test(tc, prometheus_text);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
