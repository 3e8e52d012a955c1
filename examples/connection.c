/*
 * connection.c: the seeds' connection lifecycle as an actord worker, and
 * its command line client in the same program.  One actor keeps the
 * state of CONN_MAX connections (connection.h has the transition table)
 * as committed state, two bits each: every event is applied with the
 * message in hand and committed, so a SIGKILL at any point applies none
 * twice and loses none, and racing events (a late UP, a CLOSE during a
 * CONNECT, a crash of the peer mid-close) are whatever the table says.
 *
 *   tell EVENT    struct conn_ev                apply one event
 *   ask  STATE    u32 connection                answer: u8 state
 *   ask  ZOMBIES                                answer: u32 connections
 *                                               half-open (connecting or
 *                                               closing)
 *   ask  DUMP                                   answer: the packed table
 *
 * By hand (actor_connect(3)):
 *
 *	connection [-S socket] event CONN EVENT | state CONN | zombies
 *
 * with EVENT one of connect, up, fail, close, ack, crash, settle.
 *
 * actord.conf:
 *   { name = "connection"; exec = ["/usr/local/libexec/connection"];
 *     ready = "actor"; mailbox = { capacity = 1024; cell = 4096;
 *     state = 8192; }; }
 */
#include <err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/connection.h"
#include "worker/actor.h"

enum { EVENT = 1, STATE, ZOMBIES, DUMP };

#define CONN_MAX	10000
#define PACKED		(CONN_MAX / 4)	/* two bits a connection */
#define ASK_NS		5000000000LL

struct conn_ev {
	uint32_t	 conn;
	uint32_t	 event;		/* enum conn_event */
};

static const char *const event_name[E_NEVENTS] = {
	"connect", "up", "fail", "close", "ack", "crash", "settle"
};

static uint8_t	 get(const uint8_t *, uint32_t);
static void	 put(uint8_t *, uint32_t, uint8_t);
static int	 handle(struct actor *, const struct actor_msg *, void *);
static int	 serve(void);
static int	 client(int, char **);
static void	 usage(void) __attribute__((noreturn));

static uint8_t
get(const uint8_t *t, uint32_t c)
{
	return (t[c / 4] >> (c % 4 * 2)) & 3;
}

static void
put(uint8_t *t, uint32_t c, uint8_t s)
{
	t[c / 4] = (uint8_t)((t[c / 4] & ~(3 << (c % 4 * 2))) |
	    (s << (c % 4 * 2)));
}

static int
handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	uint8_t *t = arg, s;
	struct conn_ev ev;
	uint32_t c, n;

	if (m->flags & ACTOR_MSG_SYSTEM)
		return 0;
	switch (m->tag) {
	case EVENT:
		if (m->len != sizeof(ev))
			break;
		memcpy(&ev, m->data, sizeof(ev));
		if (ev.conn >= CONN_MAX || ev.event >= E_NEVENTS)
			break;		/* refused: not a connection's event */
		s = conn_step(get(t, ev.conn), (uint8_t)ev.event);
		if (s == get(t, ev.conn))
			break;		/* the table says: nothing changes */
		put(t, ev.conn, s);
		/* With the message in hand: applied exactly once. */
		if (actor_commit(a, t, PACKED) < 0)
			errx(3, "commit: give the mailbox state = %d", PACKED);
		break;
	case STATE:
		if (m->len != sizeof(c) || (memcpy(&c, m->data, sizeof(c)),
		    c >= CONN_MAX)) {
			(void)actor_reply_error(a, 1, "no such connection");
			break;
		}
		s = get(t, c);
		(void)actor_reply(a, STATE, &s, sizeof(s));
		break;
	case ZOMBIES:
		for (c = 0, n = 0; c < CONN_MAX; c++)
			n += conn_zombie(get(t, c));
		(void)actor_reply(a, ZOMBIES, &n, sizeof(n));
		break;
	case DUMP:
		(void)actor_reply(a, DUMP, t, PACKED);
		break;
	default:
		break;
	}
	return 0;
}

static int
serve(void)
{
	static uint8_t t[PACKED];
	struct actor *a;
	char why[ACTOR_ERRBUF];
	size_t len = 0;
	int rc;

	if (actor_attach(&a, why, sizeof(why)) < 0)
		errx(3, "%s", why);
	/*
	 * Only "nothing committed yet" means every connection closed: any
	 * other failure is no reason to forget the table (exit, and the
	 * supervisor starts us again).
	 */
	if ((rc = actor_load(a, t, sizeof(t), &len)) == ACTOR_ENOSTATE)
		memset(t, 0, sizeof(t));
	else if (rc < 0 || len != sizeof(t))
		errx(3, "load: %s (%zu bytes of %zu)", actor_strerror(rc), len,
		    sizeof(t));
	if (actor_ready(a) < 0)
		errx(3, "cannot say ready");
	(void)actor_run(a, handle, NULL, t);
	actor_close(a);
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: connection [-S socket] event CONN EVENT | "
	    "state CONN | zombies\n");
	exit(2);
}

static int
client(int argc, char **argv)
{
	struct actor_client *c;
	struct conn_ev ev;
	struct actor_msg r;
	const char *sock = NULL;
	char why[ACTOR_ERRBUF];
	uint32_t conn, n;
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
	if (argc == 3 && strcmp(argv[0], "event") == 0) {
		ev.conn = (uint32_t)strtoul(argv[1], NULL, 10);
		for (ev.event = 0; ev.event < E_NEVENTS; ev.event++)
			if (strcmp(argv[2], event_name[ev.event]) == 0)
				break;
		if (ev.event == E_NEVENTS)
			usage();
		rc = actor_client_tell(c, "/connection", EVENT, &ev,
		    sizeof(ev));
	} else if (argc == 2 && strcmp(argv[0], "state") == 0) {
		conn = (uint32_t)strtoul(argv[1], NULL, 10);
		if ((rc = actor_client_ask(c, "/connection", STATE, &conn,
		    sizeof(conn), ASK_NS, &r)) == 0 && r.len == 1)
			printf("%s\n", conn_state_name[*(const uint8_t *)
			    r.data & 3]);
	} else if (argc == 1 && strcmp(argv[0], "zombies") == 0) {
		if ((rc = actor_client_ask(c, "/connection", ZOMBIES, NULL, 0,
		    ASK_NS, &r)) == 0 && r.len == sizeof(n)) {
			memcpy(&n, r.data, sizeof(n));
			printf("%u\n", n);
		}
	} else
		usage();
	if (rc < 0)
		fprintf(stderr, "connection: %s\n", actor_client_error(c));
	actor_client_close(c);
	return rc < 0 ? 3 : 0;
}

int
main(int argc, char **argv)
{
	if (getenv(ACTOR_ENV_INDEX) != NULL)
		return serve();
	return client(argc, argv);
}
