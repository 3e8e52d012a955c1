/*
 * check_wire.c: the frames of actord-wire(7) (worker/wire.c): the man
 * page's example decodes as it says, every frame type encodes and decodes
 * back, and each kind of bad frame is refused with its own error before
 * anything in it is used.  tests/fuzz/fuzz_wire.c throws everything else
 * at the decoder.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/tcheck.h"
#include "worker/remote.h"

/* actord-wire(7), EXAMPLES. */
static const uint8_t example[] = {
	0x41, 0x57, 0x01, 0x05, 0x40, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x01, 0x01, 0x0a, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00,
	0x2f, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x65, 0x72,
	0x2f, 0x30, 0x61, 0x70, 0x70, 0x6c, 0x65, 0x73
};

START_TEST(man_example)
{
	struct wire_frame f;
	struct wire_msg m;
	struct wire_buf w;

	ck_assert_int_eq(wire_decode(example, sizeof(example), 4096, &f), 0);
	ck_assert_int_eq(f.type, WIRE_BATCH);
	ck_assert_uint_eq(f.u.batch.epoch, 0);
	ck_assert_uint_eq(f.u.batch.count, 1);
	ck_assert_int_eq(wire_next(&f, &m), 1);
	ck_assert_int_eq(m.kind, WK_TELL);
	ck_assert_int_eq(m.flags, WF_PATH);
	ck_assert_uint_eq(m.tag, 1);
	ck_assert_uint_eq(m.from_index, WIRE_NOBODY);
	ck_assert_uint_eq(m.path_len, 10);
	ck_assert_mem_eq(m.path, "/counter/0", 10);
	ck_assert_uint_eq(m.len, 6);
	ck_assert_mem_eq(m.data, "apples", 6);
	ck_assert_int_eq(wire_next(&f, &m), 0);

	/* And the encoder writes exactly those bytes. */
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(wire_batch_begin(&w, 0), 0);
	ck_assert_int_eq(wire_batch_add(&w, &m), 0);
	wire_batch_end(&w);
	ck_assert_uint_eq(w.len, sizeof(example));
	ck_assert_mem_eq(w.p, example, sizeof(example));
	wire_buf_free(&w);
}
END_TEST

START_TEST(round_trips)
{
	struct wire_hello h = { 0x1122334455667788ULL, 7, 1 << 20, "node-a" };
	struct wire_terminated t = { 7, 3, 9, -1, 9, 0 }, t2;
	uint8_t tb[WIRE_TERMINATED_LEN];
	struct wire_frame f;
	struct wire_msg m, back;
	struct wire_buf w;

	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(wire_hello(&w, WIRE_WELCOME, &h), 0);
	ck_assert_int_eq(wire_decode(w.p, w.len, 4096, &f), 0);
	ck_assert_int_eq(f.type, WIRE_WELCOME);
	ck_assert(f.u.hello.epoch == h.epoch);
	ck_assert_uint_eq(f.u.hello.session, 7);
	ck_assert_str_eq(f.u.hello.name, "node-a");

	ck_assert_int_eq(wire_ping(&w, WIRE_PONG, 99), 0);
	ck_assert_int_eq(wire_decode(w.p, w.len, 4096, &f), 0);
	ck_assert_int_eq(f.type, WIRE_PONG);
	ck_assert_uint_eq(f.u.nonce, 99);

	ck_assert_int_eq(wire_error(&w, WIRE_ERR_NAME, "no"), 0);
	ck_assert_int_eq(wire_decode(w.p, w.len, 4096, &f), 0);
	ck_assert_uint_eq(f.u.error.code, WIRE_ERR_NAME);
	ck_assert_uint_eq(f.u.error.text_len, 2);

	wire_put_terminated(tb, &t);
	wire_get_terminated(tb, &t2);
	ck_assert_mem_eq(&t, &t2, sizeof(t));
	memset(&m, 0, sizeof(m));
	m.kind = WK_TERMINATED;
	m.to_index = 5;
	m.to_inc = 2;
	m.from_index = 7;
	m.len = sizeof(tb);
	m.data = tb;
	ck_assert_int_eq(wire_batch_begin(&w, 42), 0);
	ck_assert_int_eq(wire_batch_add(&w, &m), 0);
	m.kind = WK_REPLY;
	m.flags = WF_ERROR;
	m.to_index = WIRE_NOBODY;	/* an answer to a client */
	m.data = "\xeb\xff\xff\xffno";
	m.len = 6;
	m.corr = 0xabcdef;
	ck_assert_int_eq(wire_batch_add(&w, &m), 0);
	wire_batch_end(&w);
	ck_assert_int_eq(wire_decode(w.p, w.len, 4096, &f), 0);
	ck_assert_uint_eq(f.u.batch.epoch, 42);
	ck_assert_uint_eq(f.u.batch.count, 2);
	ck_assert_int_eq(wire_next(&f, &back), 1);
	ck_assert_int_eq(back.kind, WK_TERMINATED);
	ck_assert_int_eq(wire_next(&f, &back), 1);
	ck_assert_int_eq(back.kind, WK_REPLY);
	ck_assert_uint_eq(back.corr, 0xabcdef);
	ck_assert_int_eq(wire_next(&f, &back), 0);
	wire_buf_free(&w);
}
END_TEST

/* A copy of the example, changed at off to v; what the decoder says. */
static int
changed(size_t off, uint8_t v, size_t len)
{
	uint8_t buf[sizeof(example) + 8];
	struct wire_frame f;

	memcpy(buf, example, sizeof(example));
	if (off < sizeof(buf))
		buf[off] = v;
	return wire_decode(buf, len, 4096, &f);
}

START_TEST(bad_frames)
{
	struct wire_frame f;
	uint8_t big[8192];

	ck_assert_int_eq(changed(0, 'X', sizeof(example)), WIRE_EMAGIC);
	ck_assert_int_eq(changed(2, 2, sizeof(example)), WIRE_EVERSION);
	ck_assert_int_eq(changed(3, 9, sizeof(example)), WIRE_ETYPE);
	ck_assert_int_eq(changed(4, 0x41, sizeof(example)), WIRE_ELENGTH);
	ck_assert_int_eq(changed(9, 1, sizeof(example)), WIRE_ERESERVED);
	ck_assert_int_eq(changed(24, 0, sizeof(example)), WIRE_ECOUNT);
	ck_assert_int_eq(changed(24, 2, sizeof(example)), WIRE_ECOUNT);
	ck_assert_int_eq(changed(28, 9, sizeof(example)), WIRE_EKIND);
	ck_assert_int_eq(changed(29, 0x81, sizeof(example)), WIRE_EFLAGS);
	ck_assert_int_eq(changed(30, 0, sizeof(example)), WIRE_EPATH);
	ck_assert_int_eq(changed(64, 'x', sizeof(example)), WIRE_EPATH);
	ck_assert_int_eq(changed(65, '/', sizeof(example)), WIRE_EPATH);
	ck_assert_int_eq(changed(60, 7, sizeof(example)), WIRE_ELENGTH);
	ck_assert_int_eq(changed(60, 5, sizeof(example)), WIRE_ETRAILING);
	ck_assert_int_eq(changed(0, 'A', 15), WIRE_ELENGTH);
	/* Larger than max_frame: refused before anything is read. */
	memset(big, 0, sizeof(big));
	ck_assert_int_eq(wire_decode(big, sizeof(big), 4096, &f),
	    WIRE_ETOOBIG);
}
END_TEST

START_TEST(paths_and_names)
{
	ck_assert(wire_path_ok("/a", 2));
	ck_assert(wire_path_ok("/a/b.c/@x-1", 11));
	ck_assert(!wire_path_ok("/", 1));
	ck_assert(!wire_path_ok("a/b", 3));
	ck_assert(!wire_path_ok("/a//b", 5));
	ck_assert(!wire_path_ok("/a/", 3));
	ck_assert(!wire_path_ok("/a/../b", 7));
	ck_assert(!wire_path_ok("/a/./b", 6));
	ck_assert(!wire_path_ok("/a b", 4));
	ck_assert(wire_name_ok("node-1_x", 8));
	ck_assert(!wire_name_ok("a.b", 3));
	ck_assert(!wire_name_ok("", 0));
	ck_assert(!wire_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 33));
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("wire");

	tcase_add_test(tc, man_example);
	tcase_add_test(tc, round_trips);
	tcase_add_test(tc, bad_frames);
	tcase_add_test(tc, paths_and_names);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
