/*
 * check_ctl_reply.c: the backend's side of the contract in control.h, in
 * process: building replies (records, messages, errors, the size cap,
 * the control counters), finishing them once, and ctl_backend_call
 * handing each command to its function with the documented defaults.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "supervisor/control.h"
#include "tests/lib/tcheck.h"

struct seen {
	int		 done;
	struct ctl_response r;
	int		 decoded;
};

static void
on_done(struct ctl_reply *rep, void *arg)
{
	struct seen		*s = arg;
	const struct ctl_buf	*f = ctl_reply_frame(rep);
	char			 err[128];

	s->done++;
	s->decoded = ctl_response_decode(f->data, f->len, &s->r, err,
	    sizeof(err)) == 0;
}

static void
sample_node(struct ctl_node *n, const char *path)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->path, sizeof(n->path), "%s", path);
	strcpy(n->kind, "worker");
	strcpy(n->state, "running");
	n->mailbox_depth = -1;
}

START_TEST(records_and_finish_once)
{
	struct seen		 s;
	struct ctl_reply	*r;
	struct ctl_node		 n;
	struct ctl_counters	 c;

	memset(&s, 0, sizeof(s));
	memset(&c, 0, sizeof(c));
	c.requests = 5;
	r = ctl_reply_new(CTL_CMD_STATS, on_done, &s);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(ctl_reply_command(r), CTL_CMD_STATS);
	sample_node(&n, "/a");
	ctl_reply_node(r, &n);
	ctl_reply_message(r, "%d things", 3);
	ctl_reply_cursor(r, 9);
	ctl_reply_data(r, "xy", 2);
	ctl_reply_counters(r, &c);
	ctl_reply_finish(r);
	ctl_reply_finish(r);
	ck_assert_int_eq(s.done, 1);
	ck_assert(s.decoded);
	ck_assert_uint_eq(s.r.status, CTL_OK);
	ck_assert_uint_eq(s.r.nnodes, 1);
	ck_assert_str_eq(s.r.message, "3 things");
	ck_assert_uint_eq(s.r.cursor, 9);
	ck_assert_uint_eq(s.r.datalen, 2);
	ck_assert(s.r.has_control);
	ck_assert_uint_eq(s.r.control.requests, 5);
	ctl_response_free(&s.r);
	ctl_reply_free(r);
}
END_TEST

START_TEST(error_replaces_body)
{
	struct seen		 s;
	struct ctl_reply	*r;
	struct ctl_node		 n;
	struct ctl_counters	 c;

	memset(&s, 0, sizeof(s));
	memset(&c, 0, sizeof(c));
	r = ctl_reply_new(CTL_CMD_STATS, on_done, &s);
	sample_node(&n, "/a");
	ctl_reply_node(r, &n);
	ctl_reply_counters(r, &c);
	ctl_reply_error(r, CTL_E_STATE, "%s", "running");
	ctl_reply_error(r, CTL_E_NOENT, "second error loses");
	ctl_reply_node(r, &n);		/* ignored after an error */
	ctl_reply_finish(r);
	ck_assert(s.decoded);
	ck_assert_uint_eq(s.r.status, CTL_E_STATE);
	ck_assert_str_eq(s.r.error, "running");
	ck_assert_uint_eq(s.r.nnodes, 0);
	ck_assert(!s.r.has_control);
	ctl_response_free(&s.r);
	ctl_reply_free(r);
	/* CTL_OK is no error status: it becomes CTL_E_FAILED. */
	memset(&s, 0, sizeof(s));
	r = ctl_reply_new(CTL_CMD_START, on_done, &s);
	ctl_reply_error(r, CTL_OK, "odd");
	ctl_reply_finish(r);
	ck_assert_uint_eq(s.r.status, CTL_E_FAILED);
	ctl_response_free(&s.r);
	ctl_reply_free(r);
}
END_TEST

START_TEST(answer_too_large)
{
	struct seen		 s;
	struct ctl_reply	*r;
	struct ctl_node		 n;
	char			 path[64];
	int			 i;

	memset(&s, 0, sizeof(s));
	r = ctl_reply_new(CTL_CMD_STATUS, on_done, &s);
	memset(&n, 0, sizeof(n));
	/* Far more nodes than CTL_MAX_RESPONSE can hold. */
	for (i = 0; i < CTL_MAX_RESPONSE / 64 + 1; i++) {
		snprintf(path, sizeof(path), "/n%d", i);
		sample_node(&n, path);
		ctl_reply_node(r, &n);
	}
	ctl_reply_finish(r);
	ck_assert(s.decoded);
	ck_assert_uint_eq(s.r.status, CTL_E_TOOBIG);
	ck_assert_str_eq(s.r.error, "answer too large");
	ck_assert_uint_eq(s.r.nnodes, 0);
	ctl_response_free(&s.r);
	ctl_reply_free(r);
}
END_TEST

START_TEST(unsupported_commands)
{
	static const struct ctl_backend none;
	struct ctl_request	 q;
	struct seen		 s;
	struct ctl_reply	*r;
	char			 want[64];
	int			 cmd;

	for (cmd = 1; cmd < CTL_CMD_MAX; cmd++) {
		memset(&s, 0, sizeof(s));
		memset(&q, 0, sizeof(q));
		q.cmd = cmd;
		r = ctl_reply_new(cmd, on_done, &s);
		ck_assert_int_eq(ctl_backend_call(&none, NULL, &q, r),
		    CTL_REPLY_NOW);
		ctl_reply_finish(r);
		ck_assert_uint_eq(s.r.status, CTL_E_UNSUPPORTED);
		snprintf(want, sizeof(want), "%s: not supported by this actord",
		    ctl_cmd_name(cmd));
		ck_assert_str_eq(s.r.error, want);
		ctl_response_free(&s.r);
		ctl_reply_free(r);
	}
}
END_TEST

/* A backend that records what it was called with. */
struct rec {
	const char	*path;
	int		 signo;
	uint64_t	 cursor;
	bool		 wait;
	bool		 tree;
	uint32_t	 timeout;
	size_t		 len;
	int		 calls;
};

static int
r_status(void *ctx, const char *path, struct ctl_reply *r)
{
	struct rec *x = ctx;

	(void)r;
	x->path = path;
	x->calls++;
	return CTL_REPLY_NOW;
}

static int
r_kill(void *ctx, const char *path, int signo, bool tree,
    struct ctl_reply *r)
{
	struct rec *x = ctx;

	(void)r;
	x->path = path;
	x->signo = signo;
	x->tree = tree;
	x->calls++;
	return CTL_REPLY_NOW;
}

static int
r_dl(void *ctx, uint64_t cursor, bool wait, struct ctl_reply *r)
{
	struct rec *x = ctx;

	(void)r;
	x->cursor = cursor;
	x->wait = wait;
	x->calls++;
	return CTL_REPLY_LATER;
}

static int
r_ask(void *ctx, const char *path, uint32_t tag, const void *data, size_t len,
    uint32_t timeout, struct ctl_reply *r)
{
	struct rec *x = ctx;

	(void)tag;
	(void)data;
	(void)r;
	x->path = path;
	x->len = len;
	x->timeout = timeout;
	x->calls++;
	return CTL_REPLY_NOW;
}

START_TEST(dispatch_defaults)
{
	static const struct ctl_backend be = {
		.status = r_status, .kill = r_kill, .deadletters = r_dl,
		.ask = r_ask,
	};
	struct ctl_request	 q;
	struct ctl_reply	*r;
	struct rec		 x;

	memset(&x, 0, sizeof(x));
	memset(&q, 0, sizeof(q));
	r = ctl_reply_new(CTL_CMD_STATUS, NULL, NULL);
	q.cmd = CTL_CMD_STATUS;
	ck_assert_int_eq(ctl_backend_call(&be, &x, &q, r), CTL_REPLY_NOW);
	ck_assert_ptr_null(x.path);		/* no path: the whole tree */
	strcpy(q.path, "/a");
	q.present = 1u << CTL_F_PATH;
	ctl_backend_call(&be, &x, &q, r);
	ck_assert_str_eq(x.path, "/a");
	q.cmd = CTL_CMD_KILL;
	ctl_backend_call(&be, &x, &q, r);
	ck_assert_int_eq(x.signo, SIGTERM);	/* the default signal */
	ck_assert(!x.tree);			/* a worker only, by default */
	q.signo = SIGUSR1;
	q.present |= 1u << CTL_F_SIGNAL;
	q.tree = true;
	q.present |= 1u << CTL_F_TREE;
	ctl_backend_call(&be, &x, &q, r);
	ck_assert_int_eq(x.signo, SIGUSR1);
	ck_assert(x.tree);
	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_DEADLETTERS;
	ck_assert_int_eq(ctl_backend_call(&be, &x, &q, r), CTL_REPLY_LATER);
	ck_assert_uint_eq(x.cursor, UINT64_MAX);	/* absent: recent */
	ck_assert(!x.wait);
	q.cursor = 4;
	q.wait = true;
	q.present = 1u << CTL_F_CURSOR | 1u << CTL_F_WAIT;
	ctl_backend_call(&be, &x, &q, r);
	ck_assert_uint_eq(x.cursor, 4);
	ck_assert(x.wait);
	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_ASK;
	strcpy(q.path, "/b");
	q.data = (const uint8_t *)"abc";
	q.datalen = 3;
	q.timeout_ms = 70;
	q.present = 1u << CTL_F_PATH | 1u << CTL_F_TAG | 1u << CTL_F_DATA |
	    1u << CTL_F_TIMEOUT;
	ctl_backend_call(&be, &x, &q, r);
	ck_assert_str_eq(x.path, "/b");
	ck_assert_uint_eq(x.len, 3);
	ck_assert_uint_eq(x.timeout, 70);
	ck_assert_int_eq(x.calls, 7);
	ctl_reply_free(r);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("ctl_reply");
	TCase	*tc = tcase_create("reply");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, records_and_finish_once);
	tcase_add_test(tc, error_replaces_body);
	tcase_add_test(tc, answer_too_large);
	tcase_add_test(tc, unsupported_commands);
	tcase_add_test(tc, dispatch_defaults);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
