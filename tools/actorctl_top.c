/*
 * actorctl_top.c: `actorctl top`, the view an operator keeps open: the
 * tree (supervisors too) refreshed once a second, per node its state,
 * pid, uptime, restarts in all and per minute over the last minute,
 * mailbox depth and wait p99; a line for the escalations seen (a
 * supervisor that gave up); keys to sort and filter.  Every line is cut
 * to the terminal's width and the rows to its height.
 *
 * It owns the terminal while it runs: non-canonical, no echo, the
 * alternate screen, the cursor hidden.  It must give all of it back on
 * every way out (q, SIGINT, SIGTERM, actord going away) and then say why
 * it stopped when that was not asked for; signals arrive through a
 * signalfd, so no handler runs and nothing is left half-drawn.
 */
#include <sys/ioctl.h>
#include <sys/signalfd.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "tools/actorctl.h"

#define TOP_WINDOW_MS	60000	/* the restart rate's moving window */
#define TOP_SAMPLES	128	/* kept per node: a minute at 2 a second */
#define TOP_LINE	4096

/* One node's restart counts at the last frames, oldest first. */
struct top_hist {
	char		 path[CTL_PATH_MAX];
	uint64_t	 t_ms[TOP_SAMPLES];
	uint32_t	 restarts[TOP_SAMPLES];
	size_t		 n;
	bool		 seen;		/* in the last status */
};

/* A row of the screen: a node, with what stats says of its mailbox. */
#define TOP_NCOLS	7	/* after PATH */
static const char *const top_hdr[TOP_NCOLS] = { "STATE", "PID", "UPTIME",
	"RESTARTS", "/MIN", "MAILBOX", "WAIT p99" };

struct top_row {
	const struct ctl_node		*n;
	const struct ctl_actor_stats	*s;
	double				 rate;	/* restarts a minute, < 0: n/a */
	size_t				 order;	/* tree order */
	char				 cell[TOP_NCOLS][32];
	char				*cellp[TOP_NCOLS];
};

enum top_sort { SORT_TREE, SORT_RESTARTS, SORT_RATE, SORT_MAILBOX,
	SORT_WAIT, SORT__COUNT };
static const char *const sort_name[SORT__COUNT] = { "tree", "restarts",
	"rate", "mailbox", "wait" };

struct top {
	struct actorctl	*a;
	bool		 tty;
	struct termios	 saved;
	int		 sfd;
	sigset_t	 oldmask;
	struct top_hist	*hist;
	size_t		 nhist;
	enum top_sort	 sort;
	char		 filter[CTL_PATH_MAX];
	char		 editing[CTL_PATH_MAX];	/* "/" typed, not yet Enter */
	bool		 edit;
	unsigned	 escalations;	/* supervisors that gave up, seen */
	char		 last_escalation[CTL_ERROR_MAX + CTL_PATH_MAX + 32];
	/* A give-up already in a LAST EXIT when top first saw the node. */
	char		 earlier_escalation[CTL_ERROR_MAX + CTL_PATH_MAX + 32];
};

static int	 top_enter(struct top *);
static void	 top_leave(struct top *);
static int	 top_draw(struct top *);
static struct top_hist *top_hist(struct top *, const char *);
static void	 top_sample(struct top *, const struct ctl_response *,
		    uint64_t);
static int	 top_key(struct top *, char);
static int	 row_cmp(const void *, const void *);
static void	 put(char *, size_t, int);
static void	 top_cells(struct top_row *, char [TOP_NCOLS][32]);
static void	 top_line(char *, size_t, int, int, const char *,
		    const char *const *, const size_t *);
static uint64_t	 now_ms(void);

static enum top_sort cmp_sort;	/* for qsort's comparator only */

void
actorctl_top_usage(FILE *f)
{
	fprintf(f, "usage: actorctl [-S socket] top [-n count]\n"
	    "a live view of the tree, once a second\n"
	    "options:\n"
	    "  -n count        draw count frames and exit (no terminal "
	    "needed)\n"
	    "  -h, --help      this help\n"
	    "keys:\n"
	    "  s               sort by: tree, restarts, rate, mailbox, wait\n"
	    "  /               filter: only paths containing what is typed "
	    "(Enter)\n"
	    "  Esc             no filter\n"
	    "  q               quit\n");
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
top_enter(struct top *t)
{
	struct termios	 raw;
	sigset_t	 set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &t->oldmask) == -1 ||
	    (t->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1) {
		fprintf(stderr, "actorctl: top: signalfd: %s\n", strerror(errno));
		return -1;
	}
	if (!t->tty)
		return 0;
	if (tcgetattr(STDIN_FILENO, &t->saved) == -1) {
		fprintf(stderr, "actorctl: top: tcgetattr: %s\n", strerror(errno));
		return -1;
	}
	raw = t->saved;
	raw.c_lflag &= ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == -1) {
		fprintf(stderr, "actorctl: top: tcsetattr: %s\n", strerror(errno));
		return -1;
	}
	/* Alternate screen, cursor hidden. */
	fputs("\033[?1049h\033[?25l", stdout);
	fflush(stdout);
	return 0;
}

static void
top_leave(struct top *t)
{
	if (t->tty) {
		fputs("\033[?25h\033[?1049l", stdout);
		fflush(stdout);
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &t->saved);
	}
	if (t->sfd != -1)
		close(t->sfd);
	sigprocmask(SIG_SETMASK, &t->oldmask, NULL);
}

/*
 * Restarts a minute over the moving window: from the oldest sample still
 * in the window (at most window_ms before the newest) to the newest, n
 * samples at times t_ms.  -1 while the samples span less than a second.
 * A counter that went down (the node was replaced) counts from there.
 */
double
actorctl_restart_rate(const uint64_t *t_ms, const uint32_t *restarts,
    size_t n, uint64_t window_ms)
{
	size_t	 i, first;
	uint64_t span;

	if (n < 2)
		return -1;
	for (first = 0; first < n - 1 &&
	    t_ms[n - 1] - t_ms[first] > window_ms; first++)
		continue;
	for (i = first + 1; i < n; i++)
		if (restarts[i] < restarts[i - 1])
			first = i;
	span = t_ms[n - 1] - t_ms[first];
	if (span < 1000)
		return -1;
	return (restarts[n - 1] - restarts[first]) * 60000.0 / span;
}

static struct top_hist *
top_hist(struct top *t, const char *path)
{
	struct top_hist	*h;
	size_t		 i;

	for (i = 0; i < t->nhist; i++)
		if (strcmp(t->hist[i].path, path) == 0)
			return &t->hist[i];
	if ((h = reallocarray(t->hist, t->nhist + 1, sizeof(*h))) == NULL)
		return NULL;
	t->hist = h;
	h = &t->hist[t->nhist++];
	memset(h, 0, sizeof(*h));
	snprintf(h->path, sizeof(h->path), "%s", path);
	return h;
}

/*
 * Keep this frame's restart counts; count the escalations: a supervisor
 * whose restarts went up with a last exit saying it gave up.  One that
 * had given up before top first saw it is not counted (top did not see
 * it happen) but is remembered, so the line does not say "none".
 */
static void
top_sample(struct top *t, const struct ctl_response *st, uint64_t now)
{
	const struct ctl_node	*n;
	struct top_hist		*h;
	size_t			 i;

	for (i = 0; i < t->nhist; i++)
		t->hist[i].seen = false;
	for (i = 0; i < st->nnodes; i++) {
		n = &st->nodes[i];
		if ((h = top_hist(t, n->path)) == NULL)
			continue;
		h->seen = true;
		if (h->n == 0 && strncmp(n->last_exit, "gave up", 7) == 0)
			snprintf(t->earlier_escalation,
			    sizeof(t->earlier_escalation), "%s %s", n->path,
			    n->last_exit);
		if (h->n > 0 && n->restarts > h->restarts[h->n - 1] &&
		    strncmp(n->last_exit, "gave up", 7) == 0) {
			struct tm	 tm;
			time_t		 wall = time(NULL);
			char		 clock[16];

			t->escalations += n->restarts - h->restarts[h->n - 1];
			localtime_r(&wall, &tm);
			strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
			snprintf(t->last_escalation,
			    sizeof(t->last_escalation), "%s %s %s", clock,
			    n->path, n->last_exit);
		}
		if (h->n == TOP_SAMPLES) {
			memmove(h->t_ms, h->t_ms + 1,
			    (TOP_SAMPLES - 1) * sizeof(h->t_ms[0]));
			memmove(h->restarts, h->restarts + 1,
			    (TOP_SAMPLES - 1) * sizeof(h->restarts[0]));
			h->n--;
		}
		h->t_ms[h->n] = now;
		h->restarts[h->n] = n->restarts;
		h->n++;
	}
	/* Forget nodes that are gone, so a name reused starts afresh. */
	for (i = 0; i < t->nhist;)
		if (!t->hist[i].seen)
			t->hist[i] = t->hist[--t->nhist];
		else
			i++;
}

static int
row_cmp(const void *x, const void *y)
{
	const struct top_row	*a = x, *b = y;
	double			 d = 0;

	switch (cmp_sort) {
	case SORT_RESTARTS:
		d = (double)b->n->restarts - a->n->restarts;
		break;
	case SORT_RATE:
		d = b->rate - a->rate;
		break;
	case SORT_MAILBOX:
		d = (b->s ? (double)b->s->depth : -1) -
		    (a->s ? (double)a->s->depth : -1);
		break;
	case SORT_WAIT:
		d = (b->s ? (double)b->s->wait_p99_us : -1) -
		    (a->s ? (double)a->s->wait_p99_us : -1);
		break;
	default:
		break;
	}
	if (d != 0)
		return d > 0 ? 1 : -1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Print one screen line, cut to the terminal's width. */
static void
put(char *line, size_t size, int cols)
{
	actorctl_fit_line(line, size, cols);
	printf("%s%s\n", line, cols > 0 ? "\033[K" : "");
}

/* A row's cells after its path: state, pid, uptime, restarts, rate... */
static void
top_cells(struct top_row *r, char c[TOP_NCOLS][32])
{
	const struct ctl_node *n = r->n;
	int k;

	for (k = 0; k < TOP_NCOLS; k++)
		r->cellp[k] = c[k];
	snprintf(c[0], 32, "%s", n->state);
	if (n->pid > 0)
		snprintf(c[1], 32, "%d", n->pid);
	else
		snprintf(c[1], 32, "-");
	if (n->uptime_ms > 0)
		actorctl_fmt_uptime(c[2], 32, n->uptime_ms);
	else
		snprintf(c[2], 32, "-");
	snprintf(c[3], 32, "%u", n->restarts);
	if (r->rate < 0)
		snprintf(c[4], 32, "-");
	else
		snprintf(c[4], 32, "%.1f", r->rate);
	if (r->s != NULL && r->s->capacity > 0) {
		snprintf(c[5], 32, "%llu/%llu", (unsigned long long)r->s->depth,
		    (unsigned long long)r->s->capacity);
		actorctl_fmt_us(c[6], 32, r->s->wait_p99_us);
	} else {
		snprintf(c[5], 32, "-");
		snprintf(c[6], 32, "-");
	}
}

/*
 * One line: the path indented by indent in pw columns, the state left-
 * aligned, the numbers right-aligned, one blank apart (two around the
 * words).
 */
static void
top_line(char *line, size_t size, int pw, int indent, const char *path,
    const char *const *cell, const size_t *w)
{
	size_t	len;
	int	k;

	len = snprintf(line, size, "%*s%-*s  %-*s ", indent, "", pw - indent,
	    path, (int)w[0], cell[0]);
	for (k = 1; k < TOP_NCOLS && len < size; k++)
		len += snprintf(line + len, size - len, " %*s", (int)w[k],
		    cell[k]);
}

static int
top_draw(struct top *t)
{
	struct ctl_request	 q;
	struct ctl_response	 st, ss;
	struct top_row		*rows;
	struct top_hist		*h;
	struct winsize		 ws;
	struct tm		 tm;
	char			 line[TOP_LINE], clock[16];
	size_t			 w[TOP_NCOLS];
	unsigned		 c[5];
	size_t			 i, k, nrows, shown, pw = 4;
	int			 rc, cols = 0, lines = 0, d, top = 1000;
	uint64_t		 now;
	time_t			 wall;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATUS;
	if ((rc = actorctl_call(t->a, &q, &st, ACTORCTL_TIMEOUT)) != 0)
		return rc;
	q.cmd = CTL_CMD_STATS;
	if ((rc = actorctl_call(t->a, &q, &ss, ACTORCTL_TIMEOUT)) != 0) {
		ctl_response_free(&st);
		return rc;
	}
	now = now_ms();
	top_sample(t, &st, now);
	if (t->tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col > 0) {
		cols = ws.ws_col;
		lines = ws.ws_row;
	}
	if ((rows = calloc(st.nnodes + 1, sizeof(*rows))) == NULL) {
		ctl_response_free(&st);
		ctl_response_free(&ss);
		return ACTORCTL_EXIT_FAILED;
	}
	for (nrows = 0, i = 0; i < st.nnodes; i++) {
		if (t->filter[0] != '\0' &&
		    strstr(st.nodes[i].path, t->filter) == NULL)
			continue;
		rows[nrows].n = &st.nodes[i];
		rows[nrows].order = i;
		for (k = 0; k < ss.nactors; k++)
			if (strcmp(ss.actors[k].path, st.nodes[i].path) == 0)
				rows[nrows].s = &ss.actors[k];
		h = top_hist(t, st.nodes[i].path);
		rows[nrows].rate = h == NULL ? -1 :
		    actorctl_restart_rate(h->t_ms, h->restarts, h->n,
		    TOP_WINDOW_MS);
		if ((d = actorctl_path_depth(st.nodes[i].path)) < top)
			top = d;
		nrows++;
	}
	cmp_sort = t->sort;
	qsort(rows, nrows, sizeof(*rows), row_cmp);
	for (i = 0; i < nrows; i++) {
		d = t->sort == SORT_TREE ? actorctl_path_depth(rows[i].n->path) -
		    top : 0;
		if (strlen(rows[i].n->path) + 2 * d > pw)
			pw = strlen(rows[i].n->path) + 2 * d;
	}

	wall = time(NULL);
	localtime_r(&wall, &tm);
	strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	actorctl_status_counts(&st, c);
	if (t->tty)
		fputs("\033[H", stdout);
	snprintf(line, sizeof(line), "actord %s  %u specs: %u running, %u "
	    "restarting, %u supervisors, %u workers", clock, c[0], c[1], c[2],
	    c[3], c[4]);
	put(line, sizeof(line), cols);
	if (t->escalations > 0)
		snprintf(line, sizeof(line), "escalations: %u; last %s",
		    t->escalations, t->last_escalation);
	else if (t->earlier_escalation[0] != '\0')
		snprintf(line, sizeof(line), "escalations: none seen; before "
		    "top: %s", t->earlier_escalation);
	else
		snprintf(line, sizeof(line), "escalations: none seen");
	put(line, sizeof(line), cols);
	/* The cells, then each column as wide as its widest cell. */
	for (k = 0; k < TOP_NCOLS; k++)
		w[k] = strlen(top_hdr[k]);
	for (i = 0; i < nrows; i++) {
		top_cells(&rows[i], rows[i].cell);
		for (k = 0; k < TOP_NCOLS; k++)
			if (strlen(rows[i].cell[k]) > w[k])
				w[k] = strlen(rows[i].cell[k]);
	}
	top_line(line, sizeof(line), (int)pw, 0, "PATH", top_hdr, w);
	put(line, sizeof(line), cols);
	for (shown = 0, i = 0; i < nrows; i++) {
		/* Room for the key line at the bottom. */
		if (lines > 0 && shown + 5 > (size_t)lines)
			break;
		d = t->sort == SORT_TREE ?
		    actorctl_path_depth(rows[i].n->path) - top : 0;
		top_line(line, sizeof(line), (int)pw, 2 * d, rows[i].n->path,
		    (const char *const *)rows[i].cellp, w);
		put(line, sizeof(line), cols);
		shown++;
	}
	if (shown < nrows) {
		snprintf(line, sizeof(line), "... %zu more (a taller terminal, "
		    "or / to filter)", nrows - shown);
		put(line, sizeof(line), cols);
	}
	if (t->edit)
		snprintf(line, sizeof(line), "filter: %s_  (Enter applies, "
		    "Esc cancels)", t->editing);
	else
		snprintf(line, sizeof(line), "sort: %s (s)  filter: %s (/)  "
		    "q quits", sort_name[t->sort], t->filter[0] ? t->filter :
		    "none");
	put(line, sizeof(line), cols);
	if (t->tty)
		fputs("\033[J", stdout);	/* clear what is left below */
	fflush(stdout);
	free(rows);
	ctl_response_free(&st);
	ctl_response_free(&ss);
	return 0;
}

/* A key typed: 1 to quit, 0 otherwise (redraw). */
static int
top_key(struct top *t, char ch)
{
	size_t n;

	if (t->edit) {
		n = strlen(t->editing);
		if (ch == '\r' || ch == '\n') {
			memcpy(t->filter, t->editing, sizeof(t->filter));
			t->edit = false;
		} else if (ch == 0x1b) {
			t->edit = false;
		} else if ((ch == 0x7f || ch == '\b') && n > 0) {
			t->editing[n - 1] = '\0';
		} else if (ch >= 0x20 && ch < 0x7f &&
		    n + 1 < sizeof(t->editing)) {
			t->editing[n] = ch;
			t->editing[n + 1] = '\0';
		}
		return 0;
	}
	switch (ch) {
	case 'q':
	case 'Q':
		return 1;
	case 's':
		t->sort = (t->sort + 1) % SORT__COUNT;
		break;
	case '/':
		t->edit = true;
		memcpy(t->editing, t->filter, sizeof(t->editing));
		break;
	case 0x1b:
		t->filter[0] = '\0';
		break;
	default:
		break;
	}
	return 0;
}

int
actorctl_top(struct actorctl *a, int argc, char **argv)
{
	struct top		 t;
	struct pollfd		 pfd[2];
	struct signalfd_siginfo	 si;
	char			*oa[1] = { NULL }, *end, ch;
	uint64_t		 next, now;
	long			 count = 0, frames = 0;
	int			 i, rc = 0, wait;
	bool			 redraw;

	if ((i = actorctl_parse_opts(a, argc, argv, "n:", NULL, NULL,
	    oa)) == -2)
		return ACTORCTL_EXIT_OK;
	if (i < 0 || optind != argc || (oa[0] != NULL &&
	    ((count = strtol(oa[0], &end, 10)) <= 0 || *end != '\0'))) {
		if (i >= 0)
			actorctl_top_usage(stderr);
		return ACTORCTL_EXIT_USAGE;
	}
	memset(&t, 0, sizeof(t));
	t.a = a;
	t.sfd = -1;
	t.tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (!t.tty && count == 0) {
		fprintf(stderr, "actorctl: top: standard input and output must "
		    "be a terminal (or give -n COUNT)\n");
		return ACTORCTL_EXIT_USAGE;
	}
	if (top_enter(&t) == -1) {
		top_leave(&t);
		return ACTORCTL_EXIT_FAILED;
	}
	next = now_ms();
	for (;;) {
		if ((rc = top_draw(&t)) != 0)
			break;
		if (count > 0 && ++frames >= count)
			break;
		/* Once a second, whatever a key drew in between. */
		for (now = now_ms(); next <= now;)
			next += 1000;
		for (redraw = false; !redraw;) {
			now = now_ms();
			if (now >= next)
				break;
			wait = (int)(next - now);
			pfd[0].fd = t.sfd;
			pfd[0].events = POLLIN;
			pfd[1].fd = STDIN_FILENO;
			pfd[1].events = t.tty ? POLLIN : 0;
			if (poll(pfd, 2, wait) == -1 && errno != EINTR)
				break;
			if (pfd[0].revents & POLLIN) {
				/* SIGINT, SIGTERM, SIGHUP: leave cleanly. */
				(void)!read(t.sfd, &si, sizeof(si));
				rc = 128 + (int)si.ssi_signo;
				goto out;
			}
			if (pfd[1].revents & (POLLHUP | POLLERR))
				goto out;
			if ((pfd[1].revents & POLLIN) &&
			    read(STDIN_FILENO, &ch, 1) == 1) {
				if (top_key(&t, ch))
					goto out;
				redraw = true;	/* show the key's effect now */
			}
		}
	}
out:
	top_leave(&t);
	/* What went wrong was printed on the screen we just left. */
	if (rc != 0 && rc < 128 && t.tty)
		fprintf(stderr, "actorctl: top: stopped: %s\n", a->error[0] ?
		    a->error : "actord went away");
	free(t.hist);
	return rc;
}
