/*
 * check_shm_cap.c: a mailbox's effective capacity and policies set after
 * create (shm_mailbox_configure), as actord sets a spare for a late child:
 * a physical 16-cell lane limited to 5 under each overflow policy, with
 * the dead letters; blocked senders woken under the limit; the default
 * (effective == physical) unchanged.
 *
 * The senders are processes forked before the configuration (their view
 * of the layout is the one at create), driven through pipes: each command
 * is one send, answered with its return code.
 */
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"

#define PHYS	16
#define EFF	5
#define CMD_EXIT UINT32_MAX

struct cmd {
	uint32_t	 tag;
	int64_t		 timeout_ns;
};

struct sender {
	pid_t		 pid;
	int		 cmd;		/* parent writes commands */
	int		 res;		/* parent reads return codes */
};

struct woken {
	uint32_t	 next[2];
	unsigned	 got;
	int		 bad;
};

static int	 woken_cb(void *, enum shm_lane, const struct shm_msg *,
		    const void *);
static void	 sender_start(struct shm_arena *, struct sender *);
static void	 sender_send(struct sender *, uint32_t, int64_t);
static int	 sender_result(struct sender *);
static void	 sender_stop(struct sender *);
static void	 sends(struct sender *, unsigned, unsigned, int64_t, int);
static void	 expect_tags(struct shm_arena *, unsigned, unsigned);
static void	 expect_dl(struct shm_arena *, uint64_t *, enum shm_dl_reason,
		    uint32_t);

/* Each sender's messages in order, once. */
static int
woken_cb(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	struct woken	*w = arg;
	uint32_t	 body[2];

	(void)lane;
	if (m->len != sizeof(body)) {
		w->bad = 1;
		return 1;
	}
	memcpy(body, payload, sizeof(body));
	if (body[0] >= 2 || body[1] != w->next[body[0]]) {
		w->bad = 1;
		return 1;
	}
	w->next[body[0]]++;
	w->got++;
	return 0;
}

/* A sender process on mailbox 0, forked now (before any configuration). */
static void
sender_start(struct shm_arena *a, struct sender *s)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	struct cmd	 c;
	int		 cp[2], rp[2], rc;

	ck_assert_int_eq(pipe(cp), 0);
	ck_assert_int_eq(pipe(rp), 0);
	s->pid = fork();
	ck_assert_int_ge(s->pid, 0);
	if (s->pid != 0) {
		close(cp[0]);
		close(rp[1]);
		s->cmd = cp[1];
		s->res = rp[0];
		return;
	}
	close(cp[1]);
	close(rp[0]);
	if (shm_producer_open(a, &p) != 0)
		_exit(10);
	while (read(cp[0], &c, sizeof(c)) == (ssize_t)sizeof(c) &&
	    c.tag != CMD_EXIT) {
		memset(&m, 0, sizeof(m));
		m.tag = c.tag;
		m.len = sizeof(c.tag);
		rc = shm_send(p, 0, SHM_LANE_MAIN, &m, &c.tag, c.timeout_ns);
		if (write(rp[1], &rc, sizeof(rc)) != (ssize_t)sizeof(rc))
			_exit(11);
	}
	shm_producer_close(p);
	_exit(0);
}

static void
sender_send(struct sender *s, uint32_t tag, int64_t timeout_ns)
{
	struct cmd c = { tag, timeout_ns };

	ck_assert_int_eq(write(s->cmd, &c, sizeof(c)), (ssize_t)sizeof(c));
}

static int
sender_result(struct sender *s)
{
	int rc;

	ck_assert_int_eq(read(s->res, &rc, sizeof(rc)), (ssize_t)sizeof(rc));
	return rc;
}

static void
sender_stop(struct sender *s)
{
	sender_send(s, CMD_EXIT, 0);
	ck_assert_int_eq(shm_test_wait_exit(s->pid), 0);
	close(s->cmd);
	close(s->res);
}

/* Tags from..to-1 sent: all 0 but the last, which gives last. */
static void
sends(struct sender *s, unsigned from, unsigned to, int64_t timeout_ns,
    int last)
{
	unsigned i;
	int	 rc;

	for (i = from; i < to; i++) {
		sender_send(s, i, timeout_ns);
		rc = sender_result(s);
		if (i + 1 < to)
			ck_assert_msg(rc == 0, "send %u: %s", i,
			    shm_strerror(rc));
		else
			ck_assert_msg(rc == last, "send %u: %s, expected %s",
			    i, shm_strerror(rc), shm_strerror(last));
	}
}

static void
expect_tags(struct shm_arena *a, unsigned from, unsigned to)
{
	struct shm_msg	 m;
	unsigned	 i;
	uint32_t	 v;

	for (i = from; i < to; i++) {
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v,
		    sizeof(v), NULL), 0);
		ck_assert_uint_eq(m.tag, i);
		ck_assert_uint_eq(v, i);
	}
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v, sizeof(v),
	    NULL), SHM_EEMPTY);
}

static void
expect_dl(struct shm_arena *a, uint64_t *cur, enum shm_dl_reason r,
    uint32_t tag)
{
	struct shm_dead_letter d;

	ck_assert_int_eq(shm_dl_read(a, cur, &d), 1);
	ck_assert_msg(d.reason == (uint32_t)r, "reason %s, expected %s",
	    shm_reason_name(d.reason), shm_reason_name(r));
	ck_assert_uint_eq(d.msg.tag, tag);
	ck_assert_uint_eq(d.recipient, 0);
}

/* Bad arguments; what the getters report. */
START_TEST(test_configure_args)
{
	struct shm_arena *a = shm_test_arena(1, PHYS, 128, SHM_OVERFLOW_BLOCK);
	struct shm_mailbox_layout ml;

	ck_assert_uint_eq(shm_mailbox_capacity(a, 0), PHYS);
	ck_assert_uint_eq(shm_mailbox_capacity(a, 1), 0);
	ck_assert_int_eq(shm_mailbox_configure(a, 1, EFF, SHM_OVERFLOW_REJECT,
	    0), SHM_EBADINDEX);
	ck_assert_int_eq(shm_mailbox_configure(a, 0, 0, SHM_OVERFLOW_REJECT,
	    0), SHM_EINVAL);
	ck_assert_int_eq(shm_mailbox_configure(a, 0, PHYS + 1,
	    SHM_OVERFLOW_REJECT, 0), SHM_EINVAL);
	ck_assert_int_eq(shm_mailbox_configure(a, 0, EFF,
	    (enum shm_overflow)(SHM_OVERFLOW_MAX + 1), 0), SHM_EINVAL);
	ck_assert_uint_eq(shm_mailbox_capacity(a, 0), PHYS);
	ck_assert_int_eq(shm_mailbox_configure(a, 0, EFF,
	    SHM_OVERFLOW_DROP_NEWEST, 77), 0);
	ck_assert_uint_eq(shm_mailbox_capacity(a, 0), EFF);
	ck_assert_int_eq(shm_mailbox_layout(a, 0, &ml), 0);
	ck_assert_uint_eq(ml.capacity, PHYS);	/* the geometry */
	ck_assert_int_eq(ml.overflow, SHM_OVERFLOW_DROP_NEWEST);
	ck_assert_uint_eq(ml.block_timeout_ms, 77);
	shm_detach(a);
}
END_TEST

/*
 * reject: the 6th send is refused, a dead letter "full"; laps past the
 * physical ring keep the limit.  The arena was created "block".
 */
START_TEST(test_cap_reject)
{
	struct shm_arena *a = shm_test_arena(1, PHYS, 128, SHM_OVERFLOW_BLOCK);
	struct shm_counters c;
	struct sender	 s;
	uint64_t	 cur = 0;
	unsigned	 lap;

	sender_start(a, &s);
	ck_assert_int_eq(shm_mailbox_configure(a, 0, EFF, SHM_OVERFLOW_REJECT,
	    0), 0);
	for (lap = 0; lap < 8; lap++) {
		/* No timeout: as "block" (the create's) it would hang. */
		sends(&s, 0, EFF + 1, SHM_NO_TIMEOUT, SHM_EFULL);
		expect_dl(a, &cur, SHM_DL_FULL, EFF);
		expect_tags(a, 0, EFF);
	}
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.full, 8);
	ck_assert_uint_eq(c.dequeued, 8 * EFF);
	sender_stop(&s);
	shm_detach(a);
}
END_TEST

/*
 * block: the 6th send times out (the configured block_timeout) and is
 * dead-lettered; a sender blocked without a timeout gets in when the
 * consumer takes one.  The arena was created "reject".
 */
START_TEST(test_cap_block)
{
	struct shm_arena *a = shm_test_arena(1, PHYS, 128,
	    SHM_OVERFLOW_REJECT);
	struct shm_counters c;
	struct shm_msg	 m;
	struct sender	 s;
	uint64_t	 cur = 0;
	uint32_t	 v;
	unsigned	 i;

	sender_start(a, &s);
	ck_assert_int_eq(shm_mailbox_configure(a, 0, EFF, SHM_OVERFLOW_BLOCK,
	    20), 0);
	sends(&s, 0, EFF + 1, SHM_TIMEOUT_DEFAULT, SHM_EFULL);
	expect_dl(a, &cur, SHM_DL_FULL, EFF);
	/* Blocked for ever, until the consumer takes one. */
	sender_send(&s, 100, SHM_NO_TIMEOUT);
	ck_assert_int_eq(shm_test_sleeping_senders(a, 0, 5000), 1);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.enqueued, EFF);	/* it did not get in */
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v, sizeof(v),
	    NULL), 0);
	ck_assert_uint_eq(m.tag, 0);
	ck_assert_int_eq(sender_result(&s), 0);
	for (i = 1; i < EFF; i++) {
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v,
		    sizeof(v), NULL), 0);
		ck_assert_uint_eq(m.tag, i);
	}
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v, sizeof(v),
	    NULL), 0);
	ck_assert_uint_eq(m.tag, 100);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v, sizeof(v),
	    NULL), SHM_EEMPTY);
	ck_assert_int_eq(shm_dl_read(a, &cur, &(struct shm_dead_letter){ 0 }),
	    0);
	sender_stop(&s);
	shm_detach(a);
}
END_TEST

/*
 * block, woken by a draining consumer: two senders of a lane limited to
 * 5, blocking without a timeout, all get in, in order, and the consumer
 * never finds more than 5 waiting.
 */
START_TEST(test_cap_block_woken)
{
	struct shm_arena *a = shm_test_arena(1, PHYS, 128,
	    SHM_OVERFLOW_REJECT);
	struct shm_counters c;
	struct woken	 w = { { 0, 0 }, 0, 0 };
	struct timespec	 pause = { 0, 1000000 };
	unsigned	 M = 20000 / shm_test_scale(), paused = 0;
	pid_t		 pid[2];
	int		 rc;

	ck_assert_int_eq(shm_mailbox_configure(a, 0, EFF, SHM_OVERFLOW_BLOCK,
	    1000), 0);
	pid[0] = shm_test_spawn_sender(a, 0, 0, M);
	pid[1] = shm_test_spawn_sender(a, 0, 1, M);
	while (w.got < 2 * M) {
		ck_assert_int_eq(shm_wait(a, 0, SHM_LANES_INBOX,
		    SHM_WAIT_SLEEP, 0, 10 * 1000000000LL), 0);
		/* Now and then let the senders fill the lane and block. */
		if (w.got / 1000 > paused) {
			paused = w.got / 1000;
			nanosleep(&pause, NULL);
		}
		rc = shm_drain(a, 0, SHM_LANES_INBOX, 0, woken_cb, &w);
		ck_assert_int_ge(rc, 0);
		ck_assert_int_eq(w.bad, 0);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid[0]), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid[1]), 0);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.full, 0);
	ck_assert_uint_eq(c.dead_lettered, 0);
	ck_assert_uint_eq(c.dequeued, 2 * M);
	/* The most one drain found waiting: never above the limit. */
	ck_assert_uint_le(c.depth_hwm, EFF);
	shm_detach(a);
}
END_TEST

/* drop_oldest: sends 6 and 7 push tags 0 and 1 out, as dead letters. */
START_TEST(test_cap_drop_oldest)
{
	struct shm_arena *a = shm_test_arena(1, PHYS, 128, SHM_OVERFLOW_BLOCK);
	struct shm_counters c;
	struct sender	 s;
	uint64_t	 cur = 0;
	unsigned	 lap;

	sender_start(a, &s);
	ck_assert_int_eq(shm_mailbox_configure(a, 0, EFF,
	    SHM_OVERFLOW_DROP_OLDEST, 1000), 0);
	for (lap = 0; lap < 4; lap++) {
		sends(&s, 0, EFF + 2, SHM_TIMEOUT_DEFAULT, 0);
		expect_dl(a, &cur, SHM_DL_DROPPED_OLDEST, 0);
		expect_dl(a, &cur, SHM_DL_DROPPED_OLDEST, 1);
		expect_tags(a, 2, EFF + 2);
	}
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.dropped, 8);
	ck_assert_uint_eq(c.dequeued, 4 * EFF);
	sender_stop(&s);
	shm_detach(a);
}
END_TEST

/*
 * drop_oldest under a real consumer and two senders, limited to 5:
 * nothing twice, each sender's order kept, every message delivered or
 * dropped, never more than 5 found waiting.
 */
START_TEST(test_cap_drop_oldest_concurrent)
{
	struct shm_arena *a = shm_test_arena(1, PHYS, 128, SHM_OVERFLOW_BLOCK);
	struct shm_counters c;
	struct shm_msg	 m;
	uint32_t	 body[2], last[2] = { 0, 0 };
	unsigned	 M = 50000 / shm_test_scale(), got = 0;
	pid_t		 pid[2];
	int		 rc, first[2] = { 1, 1 }, quiet_after_exit = 0;

	ck_assert_int_eq(shm_mailbox_configure(a, 0, EFF,
	    SHM_OVERFLOW_DROP_OLDEST, 1000), 0);
	pid[0] = shm_test_spawn_sender(a, 0, 0, M);
	pid[1] = shm_test_spawn_sender(a, 0, 1, M);
	for (;;) {
		rc = shm_recv_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SPIN_SLEEP,
		    1000, 200000000LL, &m, body, sizeof(body), NULL);
		/*
		 * Quiet for 200 ms ends it only once both senders are gone
		 * (on a loaded machine a sender can be off CPU that long),
		 * and a whole wait begun after they were.
		 */
		if (rc == SHM_ETIMEDOUT) {
			if (shm_test_exited(pid[0]) &&
			    shm_test_exited(pid[1]) && quiet_after_exit++ > 0)
				break;
			continue;
		}
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_lt(body[0], 2);
		ck_assert_msg(first[body[0]] || body[1] > last[body[0]],
		    "sender %u: %u after %u", body[0], body[1],
		    last[body[0]]);
		first[body[0]] = 0;
		last[body[0]] = body[1];
		got++;
	}
	ck_assert_int_eq(shm_test_wait_exit(pid[0]), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid[1]), 0);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.garbled, 0);
	ck_assert_uint_eq(got + c.dropped, 2 * M);
	ck_assert_uint_eq(c.dead_lettered, c.dropped);
	ck_assert_uint_le(c.depth_hwm, EFF);
	shm_detach(a);
}
END_TEST

/* drop_newest: the 6th send is the one dropped. */
START_TEST(test_cap_drop_newest)
{
	struct shm_arena *a = shm_test_arena(1, PHYS, 128, SHM_OVERFLOW_BLOCK);
	struct shm_counters c;
	struct sender	 s;
	uint64_t	 cur = 0;

	sender_start(a, &s);
	ck_assert_int_eq(shm_mailbox_configure(a, 0, EFF,
	    SHM_OVERFLOW_DROP_NEWEST, 1000), 0);
	sends(&s, 0, EFF + 1, SHM_TIMEOUT_DEFAULT, SHM_EDROPPED);
	expect_dl(a, &cur, SHM_DL_DROPPED_NEWEST, EFF);
	expect_tags(a, 0, EFF);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.dropped, 1);
	sender_stop(&s);
	shm_detach(a);
}
END_TEST

/*
 * The default: nothing configured, or configured to the physical
 * capacity, the whole ring is usable; and back from a limit to it.
 */
START_TEST(test_cap_default)
{
	struct shm_arena *a = shm_test_arena(1, PHYS, 128,
	    SHM_OVERFLOW_REJECT);
	struct sender	 s;
	uint64_t	 cur = 0;

	sender_start(a, &s);
	sends(&s, 0, PHYS + 1, 0, SHM_EFULL);
	expect_dl(a, &cur, SHM_DL_FULL, PHYS);
	expect_tags(a, 0, PHYS);
	ck_assert_int_eq(shm_mailbox_configure(a, 0, EFF, SHM_OVERFLOW_REJECT,
	    0), 0);
	sends(&s, 0, EFF + 1, 0, SHM_EFULL);
	expect_dl(a, &cur, SHM_DL_FULL, EFF);
	expect_tags(a, 0, EFF);
	ck_assert_int_eq(shm_mailbox_configure(a, 0, PHYS,
	    SHM_OVERFLOW_REJECT, 0), 0);
	ck_assert_uint_eq(atomic_load(&shm_mb(a, 0)->m->lane[SHM_LANE_MAIN].limit),
	    0);
	sends(&s, 0, PHYS + 1, 0, SHM_EFULL);
	expect_dl(a, &cur, SHM_DL_FULL, PHYS);
	expect_tags(a, 0, PHYS);
	sender_stop(&s);
	shm_detach(a);
}
END_TEST

static Suite *
cap_suite(void)
{
	Suite	*s = suite_create("shm_cap");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_configure_args);
	tcase_add_test(tc, test_cap_reject);
	tcase_add_test(tc, test_cap_block);
	tcase_add_test(tc, test_cap_block_woken);
	tcase_add_test(tc, test_cap_drop_oldest);
	tcase_add_test(tc, test_cap_drop_oldest_concurrent);
	tcase_add_test(tc, test_cap_drop_newest);
	tcase_add_test(tc, test_cap_default);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(cap_suite());
}
