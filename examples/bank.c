/*
 * bank.c: the seeds' bank as actord workers: accounts and a transfer
 * coordinator, and their command line client, in one program.
 *
 *   /bank/account/N	an account: its balance is committed state
 *   /bank/coordinator	moves money between accounts
 *
 * The invariants: no balance is ever below zero, and the total is
 * conserved, whatever is killed when.
 *
 * An account applies DEBIT and CREDIT with an operation id, and commits
 * the new balance with the id and its result, with the message in hand:
 * an operation is applied exactly once, and asked again (after a timeout
 * or a death) it answers what it answered the first time.  A DEBIT that
 * would take the balance below zero answers BANK_NSF.  The account
 * remembers, for each of the coordinator's MOVING transfer slots, the
 * last operation it applied: a slot's operation ids only grow (its
 * transfer's debit, then its credit, then the next transfer's), so one
 * asked again is that one, and an older one is a copy of a finished
 * transfer's, refused (BANK_STALE) and not applied, however late it
 * comes.  A window of the last N operations would forget one whose
 * answer was late by more than N others, and apply it twice.
 *
 * The coordinator keeps the caller's TRANSFER ask (actor_defer(3)) and
 * asks the accounts itself: DEBIT the source, then CREDIT the target,
 * and answers its caller once the money has moved (or BANK_NSF).  It
 * commits each transfer's phase, and asks again, with the same operation
 * id, until an account answers: an account that dies or restarts only
 * delays a transfer (its asks wait for the restart, ACTOR_ASK_WAIT_UP).
 * A coordinator that dies fails the callers it holds (ACTOR_EDIED) and
 * its next incarnation finishes their transfers.
 *
 *   ask TRANSFER  struct xfer_req             answer: empty, or BANK_NSF
 *   ask PENDING                               answer: u32 transfers moving
 *   ask BALANCE   (to an account)             answer: int64 balance
 *
 * By hand, the client (actor_connect(3)):
 *
 *	bank [-S socket] transfer FROM TO AMOUNT | balance N | total N |
 *	    pending
 *
 * actord.conf (BANK_INITIAL: what a new account holds):
 *   { name = "bank"; supervisor = { children = (
 *       { name = "account"; exec = ["/usr/local/libexec/bank"];
 *         ready = "actor"; instances = 4; env = { BANK_INITIAL = "1000"; };
 *         mailbox = { capacity = 256; state = 8192; }; },
 *       { name = "coordinator"; exec = ["/usr/local/libexec/bank"];
 *         ready = "actor"; mailbox = { capacity = 1024; state = 16384; }; }
 *   ); }; }
 */
#include <err.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/actor.h"

enum { DEBIT = 1, CREDIT, BALANCE, TRANSFER, PENDING };
enum { BANK_NSF = 1, BANK_BUSY, BANK_BADREQ, BANK_STALE }; /* our errors */

#define MOVING		256		/* transfers moving at once */
#define OP_NS		2000000000LL	/* an operation's ask */
#define TICK_NS		100000000LL	/* retries of asks that could not go */
#define ASK_NS		30000000000LL	/* the client's ask */
#define ACCOUNT_PATH	"/bank/account/%u"

struct op {
	uint64_t	 id;		/* transfer id * 2 (+1 for the credit) */
	int64_t		 amount;
	uint32_t	 slot;		/* the coordinator's, < MOVING */
	uint32_t	 pad;
};

struct xfer_req {
	uint32_t	 from, to;
	int64_t		 amount;
};

/* An account's committed state. */
struct account {
	int64_t		 balance;
	struct {
		uint64_t id;		/* the slot's last operation, 0: none */
		int32_t	 result;	/* 0 or BANK_NSF */
		uint32_t pad;
	} last[MOVING];
};

/* A transfer as the coordinator commits it. */
enum phase { FREE = 0, DEBITING, CREDITING };
struct xfer {
	uint64_t	 id;
	uint32_t	 from, to;
	int64_t		 amount;
	uint32_t	 phase;
	uint32_t	 pad;
};

/* The coordinator's committed state, and what only this process knows. */
struct coord {
	struct {
		uint64_t	 next_id;
		struct xfer	 x[MOVING];
	} c;				/* committed */
	struct actor_caller caller[MOVING];
	bool		 has_caller[MOVING];
	uint64_t	 corr[MOVING];	/* the ask in flight, or 0 */
	unsigned	 moving;
};

static void	 on_term(int);
static int	 account_main(struct actor *);
static int	 account_handle(struct actor *, const struct actor_msg *,
		    void *);
static int	 coord_main(struct actor *);
static void	 coord_handle(struct actor *, struct coord *,
		    const struct actor_msg *);
static void	 coord_transfer(struct actor *, struct coord *,
		    const struct actor_msg *);
static void	 coord_answer(struct actor *, struct coord *,
		    const struct actor_msg *);
static void	 coord_send(struct actor *, struct coord *, unsigned);
static void	 coord_finish(struct actor *, struct coord *, unsigned, int);
static void	 coord_commit(struct actor *, struct coord *);

/* The coordinator's own loop: SIGTERM ends it between two messages. */
static volatile sig_atomic_t term_seen;
static int	 client(int, char **);
static int	 client_ask(struct actor_client *, const char *, uint32_t,
		    const void *, size_t, struct actor_msg *);
static void	 usage(void) __attribute__((noreturn));

/* --- an account ------------------------------------------------------------ */

static int
account_handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	struct account *s = arg;
	struct op op;
	int32_t result = 0;

	if (m->flags & ACTOR_MSG_SYSTEM)
		return 0;
	if (m->tag == BALANCE) {
		(void)actor_reply(a, BALANCE, &s->balance, sizeof(s->balance));
		return 0;
	}
	if ((m->tag != DEBIT && m->tag != CREDIT) || m->len != sizeof(op)) {
		(void)actor_reply_error(a, BANK_BADREQ, "unknown request");
		return 0;
	}
	memcpy(&op, m->data, sizeof(op));
	if (op.id == 0 || op.amount <= 0 || op.slot >= MOVING) {
		(void)actor_reply_error(a, BANK_BADREQ, "bad operation");
		return 0;
	}
	if (op.id < s->last[op.slot].id) {
		(void)actor_reply_error(a, BANK_STALE, "a finished transfer's");
		return 0;
	}
	if (op.id == s->last[op.slot].id)
		result = s->last[op.slot].result; /* asked again: same answer */
	else {
		if (m->tag == CREDIT)
			s->balance += op.amount;
		else if (s->balance >= op.amount)
			s->balance -= op.amount;
		else
			result = BANK_NSF;
		s->last[op.slot].id = op.id;
		s->last[op.slot].result = result;
		/* With the message in hand: applied exactly once. */
		if (actor_commit(a, s, sizeof(*s)) < 0)
			errx(3, "commit: give the account state = %zu",
			    sizeof(*s));
	}
	if (result == BANK_NSF)
		(void)actor_reply_error(a, BANK_NSF, "insufficient funds");
	else
		(void)actor_reply(a, m->tag, NULL, 0);
	return 0;
}

static int
account_main(struct actor *a)
{
	static struct account s;
	const char *init = getenv("BANK_INITIAL");
	size_t len = 0;
	int rc;

	/* Only a new account starts from BANK_INITIAL: a failed load exits. */
	if ((rc = actor_load(a, &s, sizeof(s), &len)) == ACTOR_ENOSTATE) {
		memset(&s, 0, sizeof(s));
		s.balance = init != NULL ? strtoll(init, NULL, 10) : 0;
	} else if (rc < 0 || len != sizeof(s))
		errx(3, "load: %s (%zu bytes of %zu)", actor_strerror(rc), len,
		    sizeof(s));
	if (actor_ready(a) < 0)
		errx(3, "cannot say ready");
	(void)actor_run(a, account_handle, NULL, &s);
	actor_close(a);
	return 0;
}

/* --- the coordinator --------------------------------------------------------- */

static void
on_term(int sig)
{
	(void)sig;
	term_seen = 1;
}

static void
coord_commit(struct actor *a, struct coord *c)
{
	if (actor_commit(a, &c->c, sizeof(c->c)) < 0)
		errx(3, "commit: give the coordinator state = %zu",
		    sizeof(c->c));
}

/* Ask the account of transfer i's phase; if it cannot go now, a tick retries. */
static void
coord_send(struct actor *a, struct coord *c, unsigned i)
{
	struct xfer *x = &c->c.x[i];
	struct actor_ref ref;
	char path[64];
	struct op op;

	c->corr[i] = 0;
	memset(&op, 0, sizeof(op));
	op.id = x->id * 2 + (x->phase == CREDITING);
	op.amount = x->amount;
	op.slot = i;
	snprintf(path, sizeof(path), ACCOUNT_PATH,
	    x->phase == DEBITING ? x->from : x->to);
	if (actor_lookup(a, path, &ref) < 0)
		return;
	ref.incarnation = ACTOR_ANY;
	(void)actor_ask_send_with(a, ref, x->phase == DEBITING ? DEBIT :
	    CREDIT, &op, sizeof(op), OP_NS, ACTOR_ASK_WAIT_UP, &c->corr[i]);
}

/* Transfer i is over: its caller, if we hold it, hears how. */
static void
coord_finish(struct actor *a, struct coord *c, unsigned i, int result)
{
	if (c->has_caller[i]) {
		if (result == 0)
			(void)actor_answer(a, &c->caller[i], TRANSFER, NULL, 0);
		else
			(void)actor_answer_error(a, &c->caller[i], result,
			    "insufficient funds");
		c->has_caller[i] = false;
	}
	memset(&c->c.x[i], 0, sizeof(c->c.x[i]));
	c->corr[i] = 0;
	c->moving--;
	coord_commit(a, c);
}

static void
coord_transfer(struct actor *a, struct coord *c, const struct actor_msg *m)
{
	struct xfer_req rq;
	struct xfer *x;
	unsigned i;

	if (m->len != sizeof(rq) || (memcpy(&rq, m->data, sizeof(rq)),
	    rq.amount <= 0 || rq.from == rq.to)) {
		(void)actor_reply_error(a, BANK_BADREQ, "bad transfer");
		return;
	}
	for (i = 0; i < MOVING && c->c.x[i].phase != FREE; i++)
		;
	if (i == MOVING) {
		(void)actor_reply_error(a, BANK_BUSY, "too many transfers "
		    "moving");
		return;
	}
	if (actor_defer(a, &c->caller[i]) < 0) {
		(void)actor_reply_error(a, BANK_BUSY, "cannot keep the ask");
		return;
	}
	c->has_caller[i] = true;
	x = &c->c.x[i];
	x->id = ++c->c.next_id;
	x->from = rq.from;
	x->to = rq.to;
	x->amount = rq.amount;
	x->phase = DEBITING;
	c->moving++;
	/* With the message in hand: the transfer exists exactly once. */
	coord_commit(a, c);
	coord_send(a, c, i);
}

/* An account answered (or its ask timed out): the next phase, or again. */
static void
coord_answer(struct actor *a, struct coord *c, const struct actor_msg *m)
{
	unsigned i;
	int st;

	for (i = 0; i < MOVING; i++)
		if (c->corr[i] == m->corr && m->corr != 0)
			break;
	if (i == MOVING)
		return;			/* of a transfer already over */
	c->corr[i] = 0;
	st = actor_reply_status(m);
	if (st == ACTOR_EREPLY && actor_error_code(m) == BANK_NSF &&
	    c->c.x[i].phase == DEBITING) {
		coord_finish(a, c, i, BANK_NSF);
		return;
	}
	if (st != 0) {
		coord_send(a, c, i);	/* same operation id: safe to ask again */
		return;
	}
	if (c->c.x[i].phase == DEBITING) {
		c->c.x[i].phase = CREDITING;
		coord_commit(a, c);
		coord_send(a, c, i);
		return;
	}
	coord_finish(a, c, i, 0);
}

static void
coord_handle(struct actor *a, struct coord *c, const struct actor_msg *m)
{
	uint32_t n;

	if (m->flags & ACTOR_MSG_REPLY) {
		coord_answer(a, c, m);
		return;
	}
	if (m->flags & ACTOR_MSG_SYSTEM)
		return;
	switch (m->tag) {
	case TRANSFER:
		coord_transfer(a, c, m);
		break;
	case PENDING:
		n = c->moving;
		(void)actor_reply(a, PENDING, &n, sizeof(n));
		break;
	default:
		(void)actor_reply_error(a, BANK_BADREQ, "unknown request");
		break;
	}
}

static int
coord_main(struct actor *a)
{
	static struct coord c;
	struct actor_msg m;
	size_t len = 0;
	unsigned i;
	int rc;

	if ((rc = actor_load(a, &c.c, sizeof(c.c), &len)) == ACTOR_ENOSTATE)
		memset(&c.c, 0, sizeof(c.c));
	else if (rc < 0 || len != sizeof(c.c))
		errx(3, "load: %s (%zu bytes of %zu)", actor_strerror(rc), len,
		    sizeof(c.c));
	actor_recv_answers(a, true);
	(void)signal(SIGTERM, on_term);
	if (actor_ready(a) < 0)
		errx(3, "cannot say ready");
	/* What a dead incarnation left moving: finish it. */
	for (i = 0; i < MOVING; i++)
		if (c.c.x[i].phase != FREE) {
			c.moving++;
			coord_send(a, &c, i);
		}
	fprintf(stderr, "coordinator: up, %u transfers to finish\n", c.moving);
	while (!term_seen) {
		rc = actor_recv(a, &m, TICK_NS);
		if (rc == ACTOR_ETIMEDOUT) {
			for (i = 0; i < MOVING; i++)
				if (c.c.x[i].phase != FREE && c.corr[i] == 0)
					coord_send(a, &c, i);
			continue;
		}
		if (rc < 0)
			break;
		if (m.tag == ACTOR_SYS_STOP && (m.flags & ACTOR_MSG_SYSTEM))
			break;
		coord_handle(a, &c, &m);
	}
	actor_close(a);
	return 0;
}

/* --- the client ----------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr, "usage: bank [-S socket] transfer FROM TO AMOUNT | "
	    "balance N | total N | pending\n");
	exit(2);
}

/* One ask; 0, 1 for BANK_NSF (said on stderr), 3 for anything else. */
static int
client_ask(struct actor_client *c, const char *path, uint32_t tag,
    const void *data, size_t len, struct actor_msg *r)
{
	int rc = actor_client_ask(c, path, tag, data, len, ASK_NS, r);

	if (rc == ACTOR_EREPLY && actor_error_code(r) == BANK_NSF) {
		fprintf(stderr, "bank: %s\n", actor_error_text(r));
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "bank: %s\n", actor_client_error(c));
		return 3;
	}
	return 0;
}

static int
client(int argc, char **argv)
{
	struct actor_client *c;
	struct xfer_req rq;
	struct actor_msg r;
	const char *sock = NULL;
	char why[ACTOR_ERRBUF], path[64];
	int64_t bal, total = 0;
	uint32_t n, i;
	int ch, rc = 0;

	while ((ch = getopt(argc, argv, "S:")) != -1) {
		if (ch != 'S')
			usage();
		sock = optarg;
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage();
	if (actor_connect(&c, sock, why, sizeof(why)) < 0)
		errx(3, "%s", why);
	if (argc == 4 && strcmp(argv[0], "transfer") == 0) {
		rq.from = (uint32_t)strtoul(argv[1], NULL, 10);
		rq.to = (uint32_t)strtoul(argv[2], NULL, 10);
		rq.amount = strtoll(argv[3], NULL, 10);
		rc = client_ask(c, "/bank/coordinator", TRANSFER, &rq,
		    sizeof(rq), &r);
	} else if (argc == 2 && strcmp(argv[0], "balance") == 0) {
		snprintf(path, sizeof(path), "/bank/account/%s", argv[1]);
		if ((rc = client_ask(c, path, BALANCE, NULL, 0, &r)) == 0 &&
		    r.len == sizeof(bal)) {
			memcpy(&bal, r.data, sizeof(bal));
			printf("%lld\n", (long long)bal);
		}
	} else if (argc == 2 && strcmp(argv[0], "total") == 0) {
		n = (uint32_t)strtoul(argv[1], NULL, 10);
		for (i = 0; i < n && rc == 0; i++) {
			snprintf(path, sizeof(path), ACCOUNT_PATH, i);
			if ((rc = client_ask(c, path, BALANCE, NULL, 0,
			    &r)) == 0 && r.len == sizeof(bal)) {
				memcpy(&bal, r.data, sizeof(bal));
				total += bal;
			}
		}
		if (rc == 0)
			printf("%lld\n", (long long)total);
	} else if (argc == 1 && strcmp(argv[0], "pending") == 0) {
		if ((rc = client_ask(c, "/bank/coordinator", PENDING, NULL, 0,
		    &r)) == 0 && r.len == sizeof(n)) {
			memcpy(&n, r.data, sizeof(n));
			printf("%u\n", n);
		}
	} else
		usage();
	actor_client_close(c);
	return rc;
}

int
main(int argc, char **argv)
{
	struct actor *a;
	char why[ACTOR_ERRBUF];

	if (getenv(ACTOR_ENV_INDEX) == NULL)
		return client(argc, argv);
	if (actor_attach(&a, why, sizeof(why)) < 0)
		errx(3, "%s", why);
	if (strstr(actor_name(a), "/account/") != NULL)
		return account_main(a);
	return coord_main(a);
}
