/*
 * check_shm_large.c: messages larger than a cell (max_message, the large
 * slots of ring.c) between real processes, while they are SIGKILLed and
 * scribbled on: every payload arrives whole or is a dead letter with a
 * reason, never torn, and nothing is left held.
 *
 *   roundtrip     every size from empty to max_message on the main and
 *                 reply lanes, under each policy; above it, and a large
 *                 one on the system lane, refused as "oversize";
 *   slots         a 17th large message waits for the consumer to take
 *                 the 1st (then goes in), or gives up as "full" and the
 *                 consumer skips its cell;
 *   processes     two producers, a consumer, thousands of large ones;
 *   kills         a producer SIGKILLed between claim and publish, and
 *                 while it waits for a slot; a consumer SIGKILLed while
 *                 it copies one, on an in-place and a take lane;
 *   policies      reject, drop_oldest, coalesce on a full lane: every
 *                 message not delivered is a dead letter with a reason;
 *   scribbled     lengths written over by another process: refused as
 *                 garbled, or read within their slot, never a crash;
 *   apart         the large slots, megabytes of address space for each
 *                 mailbox, lie apart from the mailboxes: a process that
 *                 reads many mailboxes needs page tables for their pages,
 *                 not a page of page table per mailbox.
 */
#include <sys/wait.h>

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"

#define SEC		1000000000LL
#define CELL		128
#define INL		(CELL - SHM_CELL_HDR)
#define MAXMSG		65536
#define CAP		64

static unsigned char	 rbuf[MAXMSG + 64];

static struct shm_arena *
large_arena(uint32_t cap, enum shm_overflow pol)
{
	struct shm_mailbox_layout m = shm_test_mbox(cap, CELL, pol);
	struct shm_layout l = { 1, &m, 16, 1024 };
	struct shm_arena *a;
	char	 err[SHM_ERRBUF];

	m.max_message = MAXMSG;
	m.reply_capacity = 16;
	ck_assert_msg(shm_create(&l, "check-large", &a, err, sizeof(err)) ==
	    0, "shm_create: %s", err);
	return a;
}

/* A message of len bytes whose content its tag (the seed) says. */
static int
send_big(struct shm_producer *p, enum shm_lane lane, uint32_t seed,
    size_t len, int64_t timeout_ns)
{
	static unsigned char b[MAXMSG + 64];
	struct shm_msg m;

	memset(&m, 0, sizeof(m));
	m.tag = seed;
	m.len = (uint32_t)len;
	tcheck_fill(b, len, seed);
	return shm_send(p, 0, lane, &m, b, timeout_ns);
}

/* The next message: 0 and its tag and length in *m, if whole. */
static int
recv_big(struct shm_arena *a, unsigned lanes, struct shm_msg *m)
{
	int rc = shm_recv(a, 0, lanes, m, rbuf, sizeof(rbuf), NULL);

	if (rc != 0)
		return rc;
	return tcheck_intact(rbuf, m->len, m->tag) ? 0 : -100;
}

static const size_t sizes[] = {
	0, 1, INL - 1, INL, INL + 1, 4096, 32768, MAXMSG - 1, MAXMSG
};
#define NSIZES	(sizeof(sizes) / sizeof(sizes[0]))

/* Every size on the main and reply lanes, under each policy. */
START_TEST(test_large_roundtrip)
{
	static const enum shm_overflow pols[] = { SHM_OVERFLOW_BLOCK,
	    SHM_OVERFLOW_DROP_OLDEST, SHM_OVERFLOW_COALESCE };
	enum shm_overflow pol = pols[_i];
	struct shm_arena *a = large_arena(CAP, pol);
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 i, k, lanes[2] = { SHM_LANE_MAIN, SHM_LANE_REPLY };

	ck_assert_uint_eq(shm_payload_max(a, 0), MAXMSG);
	ck_assert_uint_eq(shm_cell_payload(a, 0), INL);
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < NSIZES; i++)
			ck_assert_int_eq(send_big(p, lanes[k], 100 + i,
			    sizes[i], 0), 0);
		for (i = 0; i < NSIZES; i++) {
			ck_assert_int_eq(recv_big(a, SHM_LANE_BIT(lanes[k]),
			    &m), 0);
			ck_assert_uint_eq(m.tag, 100 + i);
			ck_assert_uint_eq(m.len, sizes[i]);
		}
		ck_assert_int_eq(recv_big(a, SHM_LANES_ALL, &m), SHM_EEMPTY);
	}
	/* Above max_message; larger than a cell on the system lane. */
	ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, 1, MAXMSG + 1, 0),
	    SHM_EOVERSIZE);
	ck_assert_int_eq(send_big(p, SHM_LANE_REPLY, 1, MAXMSG + 1, 0),
	    SHM_EOVERSIZE);
	ck_assert_int_eq(send_big(p, SHM_LANE_SYSTEM, 1, INL + 1, 0),
	    SHM_EOVERSIZE);
	ck_assert_int_eq(send_big(p, SHM_LANE_SYSTEM, 1, INL, 0), 0);
	ck_assert_int_eq(recv_big(a, SHM_LANES_ALL, &m), 0);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_OVERSIZE), 3);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* Large messages through shm_drain, handed over in place. */
static int
check_cb(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	unsigned *ok = arg;

	(void)lane;
	if (tcheck_intact(payload, m->len, m->tag))
		(*ok)++;
	return 0;
}

START_TEST(test_large_drain)
{
	struct shm_arena *a = large_arena(CAP, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	unsigned	 i, ok = 0;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < 3 * SHM_BIG_MAIN; i++) {
		ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, i, i % 2 ? INL :
		    MAXMSG - i, 0), 0);
		if (i % 4 == 3)
			ck_assert_int_eq(shm_drain(a, 0, SHM_LANES_ALL, 0,
			    check_cb, &ok), 4);
	}
	ck_assert_uint_eq(ok, 3 * SHM_BIG_MAIN);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * SHM_BIG_MAIN large messages queued: the next waits for the consumer to
 * take the first; with no time to wait, it is a dead letter "full" and
 * the consumer skips its cell (a small one behind it is delivered).
 */
START_TEST(test_large_slots)
{
	struct shm_arena *a = large_arena(CAP, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_msg	 m;
	unsigned	 i;
	pid_t		 pid;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < SHM_BIG_MAIN; i++)
		ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, i, MAXMSG, 0), 0);
	ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, 99, MAXMSG, 0),
	    SHM_EFULL);
	ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, 100, 8, 0), 0);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_FULL), 1);
	for (i = 0; i < SHM_BIG_MAIN; i++) {
		ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), 0);
		ck_assert_uint_eq(m.tag, i);
	}
	ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), 0);
	ck_assert_uint_eq(m.tag, 100);
	ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), SHM_EEMPTY);
	/* A waiting sender goes in as the consumer takes. */
	for (i = 0; i < SHM_BIG_MAIN; i++)
		ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, i, MAXMSG, 0), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct shm_producer *q;

		if (shm_producer_open(a, &q) != 0)
			_exit(10);
		for (i = 0; i < 2 * SHM_BIG_MAIN; i++)
			if (send_big(q, SHM_LANE_MAIN, 1000 + i, MAXMSG - i,
			    SHM_NO_TIMEOUT) != 0)
				_exit(11);
		_exit(0);
	}
	ck_assert_int_eq(shm_test_sleeping_senders(a, 0, 20000), 1);
	for (i = 0; i < 3 * SHM_BIG_MAIN; i++) {
		ck_assert_int_eq(shm_recv_wait(a, 0, SHM_LANES_INBOX,
		    SHM_WAIT_SLEEP, 0, 20 * SEC, &m, rbuf, sizeof(rbuf), NULL),
		    0);
		ck_assert(tcheck_intact(rbuf, m.len, m.tag));
		ck_assert_uint_eq(m.tag, i < SHM_BIG_MAIN ? i :
		    1000 + i - SHM_BIG_MAIN);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.garbled, 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* Two producer processes, one consumer: every large message whole. */
START_TEST(test_large_processes)
{
	struct shm_arena *a = large_arena(CAP, SHM_OVERFLOW_BLOCK);
	unsigned	 n = 2000 / shm_test_scale(), got = 0, next[2] = { 0, 0 };
	struct shm_msg	 m;
	pid_t		 pid[2];
	unsigned	 w, i;

	for (w = 0; w < 2; w++) {
		pid[w] = fork();
		ck_assert_int_ge(pid[w], 0);
		if (pid[w] == 0) {
			struct shm_producer *q;

			if (shm_producer_open(a, &q) != 0)
				_exit(10);
			for (i = 0; i < n; i++)
				if (send_big(q, SHM_LANE_MAIN, w << 16 | i,
				    (i * 7919u + w) % (MAXMSG + 1),
				    SHM_NO_TIMEOUT) != 0)
					_exit(11);
			_exit(0);
		}
	}
	while (got < 2 * n) {
		ck_assert_int_eq(shm_recv_wait(a, 0, SHM_LANES_INBOX,
		    SHM_WAIT_SPIN_SLEEP, SHM_SPIN_NS_DEFAULT, 20 * SEC, &m,
		    rbuf, sizeof(rbuf), NULL), 0);
		w = m.tag >> 16;
		ck_assert_uint_lt(w, 2);
		ck_assert_uint_eq(m.tag & 0xffff, next[w]);
		ck_assert_uint_eq(m.len, (next[w] * 7919u + w) % (MAXMSG + 1));
		ck_assert_msg(tcheck_intact(rbuf, m.len, m.tag), "torn: %#x",
		    m.tag);
		next[w]++;
		got++;
	}
	ck_assert_int_eq(shm_test_wait_exit(pid[0]), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid[1]), 0);
	shm_detach(a);
}
END_TEST

static void
stop_self(void *arg)
{
	(void)arg;
	raise(SIGSTOP);
}

/*
 * A producer SIGKILLed between claim and publish of a large message (half
 * of it written), and another while it waits for a slot: shm_reap
 * releases both cells (dead letters "sender died"), the consumer skips
 * them, and the slots serve the next messages whole.
 */
START_TEST(test_large_producer_killed)
{
	struct shm_arena *a = large_arena(CAP, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_msg	 m;
	unsigned	 i, released = 0;
	pid_t		 pid;
	int		 st;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	/* 1: stopped between claim and publish, then killed. */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct shm_producer *q;

		if (shm_producer_open(a, &q) != 0)
			_exit(10);
		shm_producer_set_hook(q, stop_self, NULL);
		_exit(send_big(q, SHM_LANE_MAIN, 7, MAXMSG, 0) == 0 ? 0 : 11);
	}
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert(WIFSTOPPED(st));
	ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, 8, MAXMSG, 0), 0);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 128 + SIGKILL);
	ck_assert_int_ge(shm_reap(a, pid, &released), 1);
	ck_assert_uint_eq(released, 1);
	/* 2: killed while it waits for a slot (the released cell counts). */
	for (i = 0; i < SHM_BIG_MAIN - 2; i++)
		ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, 20 + i, MAXMSG, 0),
		    0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct shm_producer *q;

		if (shm_producer_open(a, &q) != 0)
			_exit(10);
		_exit(send_big(q, SHM_LANE_MAIN, 9, MAXMSG, SHM_NO_TIMEOUT) ==
		    0 ? 0 : 11);
	}
	ck_assert_int_eq(shm_test_sleeping_senders(a, 0, 20000), 1);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 128 + SIGKILL);
	released = 0;
	ck_assert_int_ge(shm_reap(a, pid, &released), 1);
	ck_assert_uint_eq(released, 1);
	ck_assert_uint_eq(atomic_load(&shm_mb(a, 0)->m->space_waiters), 0);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_SENDER_DIED), 2);
	/* Every one queued is whole; the dead senders' are not there. */
	ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), 0);
	ck_assert_uint_eq(m.tag, 8);
	for (i = 0; i < SHM_BIG_MAIN - 2; i++) {
		ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), 0);
		ck_assert_uint_eq(m.tag, 20 + i);
	}
	ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), SHM_EEMPTY);
	/* Nothing held: two laps of slots, whole. */
	for (i = 0; i < 4 * SHM_BIG_MAIN; i++) {
		ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, 50 + i, MAXMSG - i,
		    0), 0);
		ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), 0);
		ck_assert_uint_eq(m.tag, 50 + i);
	}
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.garbled, 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* A consumer that SIGKILLs itself halfway through its copy. */
static int
half_cb(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	(void)arg;
	(void)lane;
	memcpy(rbuf, payload, m->len / 2);
	raise(SIGKILL);
	return 0;
}

static void
kill_self(void *arg, int where)
{
	(void)arg;
	if (where == SHM_HOOK_TAKEN)
		raise(SIGKILL);
}

/*
 * A consumer SIGKILLed while it copies a large message, on an in-place
 * lane (in its handler) and on a drop_oldest lane (once it marked the
 * cell taken): after shm_consumer_recover the next consumer gets the
 * same message, whole, then the rest.
 */
START_TEST(test_large_consumer_killed)
{
	static const enum shm_overflow pols[] = { SHM_OVERFLOW_BLOCK,
	    SHM_OVERFLOW_DROP_OLDEST };
	struct shm_arena *a = large_arena(CAP, pols[_i]);
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 i;
	pid_t		 pid;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, 30 + i, MAXMSG - i,
		    0), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		shm_consumer_set_hook(a, kill_self, NULL);
		(void)shm_drain(a, 0, SHM_LANES_INBOX, 1, half_cb, NULL);
		_exit(0);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 128 + SIGKILL);
	(void)shm_consumer_recover(a, 0);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), 0);
		ck_assert_uint_eq(m.tag, 30 + i);
		ck_assert_uint_eq(m.len, MAXMSG - i);
	}
	ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), SHM_EEMPTY);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A full lane under reject and drop_oldest, fed large messages with no
 * consumer: each one not delivered is a dead letter with its reason
 * (drop_oldest keeps the newest: the oldest go, their prefix in the dead
 * letter); what is delivered is whole; delivered + dead letters = sent.
 */
START_TEST(test_large_full_policies)
{
	static const enum shm_overflow pols[] = { SHM_OVERFLOW_REJECT,
	    SHM_OVERFLOW_DROP_OLDEST };
	enum shm_overflow pol = pols[_i];
	struct shm_arena *a = large_arena(32, pol);
	struct shm_producer *p;
	struct shm_dead_letter d;
	struct shm_msg	 m;
	unsigned	 i, sent = 200, ok = 0, got = 0, dl = 0;
	uint64_t	 cur = 0;
	int		 rc;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < sent; i++) {
		rc = send_big(p, SHM_LANE_MAIN, i, i % 3 ? MAXMSG - i : 16, 0);
		ck_assert(rc == 0 || rc == SHM_EFULL || rc == SHM_EDROPPED);
		ok += rc == 0;
	}
	while ((rc = recv_big(a, SHM_LANES_INBOX, &m)) == 0)
		got++;
	ck_assert_int_eq(rc, SHM_EEMPTY);
	while (shm_dl_read(a, &cur, &d) == 1) {
		ck_assert(d.reason == SHM_DL_FULL ||
		    d.reason == SHM_DL_DROPPED_OLDEST ||
		    d.reason == SHM_DL_DROPPED_NEWEST);
		ck_assert(tcheck_intact(d.payload, d.payload_len, d.msg.tag));
		ck_assert_uint_eq(d.payload_len, d.msg.len < SHM_DL_PAYLOAD ?
		    d.msg.len : SHM_DL_PAYLOAD);
		dl++;
	}
	ck_assert_uint_eq(got + dl, sent);
	if (pol == SHM_OVERFLOW_DROP_OLDEST) {
		ck_assert_uint_eq(ok, sent);	/* the newest always in */
		ck_assert_uint_gt(shm_test_count_dl(a, SHM_DL_DROPPED_OLDEST), 0);
	} else
		ck_assert_uint_eq(got, ok);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * coalesce: large keyed values replace the queued one of their key in
 * place; the consumer gets the latest value of each key, whole.
 */
START_TEST(test_large_coalesce)
{
	struct shm_arena *a = large_arena(CAP, SHM_OVERFLOW_COALESCE);
	struct shm_producer *p;
	struct shm_counters c;
	static unsigned char b[MAXMSG];
	struct shm_msg	 m;
	unsigned	 i, k;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < 50; i++)
		for (k = 0; k < 3; k++) {
			memset(&m, 0, sizeof(m));
			m.tag = i << 8 | k;
			m.flags = SHM_MSG_COALESCE;
			m.corr = k + 1;
			m.len = (i + k) % 2 ? MAXMSG - i : 8;
			tcheck_fill(b, m.len, m.tag);
			ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, b,
			    0), 0);
		}
	for (k = 0; k < 3; k++) {
		ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), 0);
		ck_assert_uint_eq(m.tag, 49u << 8 | k);
	}
	ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), SHM_EEMPTY);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.replaced, 49 * 3);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * Lengths written over while a stream of large messages flows: a
 * scribbler process sets the length of queued cells to values above
 * max_message, above the cell, or 2^32 - 1, and the consumer refuses
 * each as garbled or hands it over within its slot; it never crashes,
 * and every message is delivered whole, delivered cut (its length
 * scribbled lower) or a dead letter "garbled".
 */
START_TEST(test_large_scribbled_lengths)
{
	struct shm_arena *a = large_arena(CAP, SHM_OVERFLOW_BLOCK);
	struct shm_lane_local *l = &shm_mb(a, 0)->lane[SHM_LANE_MAIN];
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_msg	 m;
	unsigned	 i, n = 3000 / shm_test_scale(), got = 0, whole = 0;
	pid_t		 pid;
	int		 rc;

	/* First by hand: above max_message, then 2^32 - 1. */
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, 1, MAXMSG, 0), 0);
	ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, 2, 10, 0), 0);
	ck_assert_int_eq(send_big(p, SHM_LANE_MAIN, 3, 5000, 0), 0);
	lane_cell(l, 0)->msg.len = MAXMSG + 1;
	lane_cell(l, 1)->msg.len = UINT32_MAX;
	ck_assert_int_eq(recv_big(a, SHM_LANES_INBOX, &m), 0);
	ck_assert_uint_eq(m.tag, 3);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_GARBLED), 2);
	/* Then another process, while a stream flows. */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static const uint32_t lens[] = { MAXMSG + 1, UINT32_MAX,
		    INL + 1, MAXMSG, 0 };
		unsigned s = 1;

		for (;;) {
			s = s * 1103515245 + 12345;
			*(volatile uint32_t *)&lane_cell(l, s >> 8)->msg.len =
			    lens[(s >> 4) % 5];
			if (s % 64 == 0)
				usleep(50);
		}
	}
	for (i = 0; i < n; i++) {
		rc = send_big(p, SHM_LANE_MAIN, 10 + i, (i * 4099u) % MAXMSG,
		    SEC);
		ck_assert_int_eq(rc, 0);
		while ((rc = shm_recv(a, 0, SHM_LANES_INBOX, &m, rbuf,
		    sizeof(rbuf), NULL)) == 0) {
			ck_assert_uint_le(m.len, MAXMSG);
			got++;
			whole += tcheck_intact(rbuf, m.len, m.tag);
		}
		ck_assert_int_eq(rc, SHM_EEMPTY);
	}
	kill(pid, SIGKILL);
	ck_assert_int_eq(shm_test_wait_exit(pid), 128 + SIGKILL);
	while (shm_recv(a, 0, SHM_LANES_INBOX, &m, rbuf, sizeof(rbuf),
	    NULL) == 0)
		got++;
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(got + c.garbled, n + 2);
	ck_assert_uint_gt(whole, 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* This process's page tables, in kB (VmPTE of /proc/self/status). */
static long
page_tables_kb(void)
{
	char	 line[256];
	long	 kb = -1;
	FILE	*f = fopen("/proc/self/status", "re");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmPTE: %ld kB", &kb) == 1)
			break;
	fclose(f);
	ck_assert_int_ge(kb, 0);
	return kb;
}

/*
 * APART_N mailboxes of the default max_message (some 1.1 MiB of large
 * slots each), each one's control block read: with the large slots
 * between them, each mailbox sat in a 2 MiB region of its own and cost
 * this process a page of page table (4 kB each, 4,000 kB here); packed,
 * 20 or so share one.
 */
#define APART_N		1000
#define APART_MAX_KB	1000

START_TEST(test_large_slots_apart)
{
	static struct shm_mailbox_layout m[APART_N];
	struct shm_layout l = { APART_N, m, 16, 16 };
	struct shm_counters c;
	struct shm_arena *a;
	char	 err[SHM_ERRBUF];
	long	 before, kb;
	uint32_t i;
	pid_t	 pid;
	int	 st;

	for (i = 0; i < APART_N; i++) {
		m[i] = shm_test_mbox(256, CELL, SHM_OVERFLOW_REJECT);
		m[i].max_message = MAXMSG;
	}
	ck_assert_msg(shm_create(&l, "check-apart", &a, err, sizeof(err)) ==
	    0, "shm_create: %s", err);
	/*
	 * A child: fork copies no page table of a shared mapping, so its
	 * reads of the mailboxes make their own.  Its exit status: the kB
	 * they took, in tens, at most 250.
	 */
	if ((pid = fork()) == 0) {
		before = page_tables_kb();
		for (i = 0; i < APART_N; i++)
			if (shm_counters(a, i, &c) != 0)
				_exit(255);
		kb = page_tables_kb() - before;
		_exit(kb / 10 > 250 ? 250 : (int)(kb / 10));
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_ne(WEXITSTATUS(st), 255);
	ck_assert_msg(WEXITSTATUS(st) * 10 < APART_MAX_KB,
	    "about %d kB of page tables to read %d mailboxes",
	    WEXITSTATUS(st) * 10, APART_N);
	shm_detach(a);
}
END_TEST

static Suite *
large_suite(void)
{
	Suite	*s = suite_create("shm_large");
	TCase	*tc = tcase_create("large");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_large_roundtrip, 0, 3);
	tcase_add_test(tc, test_large_drain);
	tcase_add_test(tc, test_large_slots);
	tcase_add_test(tc, test_large_processes);
	tcase_add_test(tc, test_large_producer_killed);
	tcase_add_loop_test(tc, test_large_consumer_killed, 0, 2);
	tcase_add_loop_test(tc, test_large_full_policies, 0, 2);
	tcase_add_test(tc, test_large_coalesce);
	tcase_add_test(tc, test_large_scribbled_lengths);
	tcase_add_test(tc, test_large_slots_apart);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(large_suite());
}
