/*
 * actorctl_top.c: `actorctl top`, a live view of the tree refreshed once a
 * second: per worker its state, restart rate, mailbox depth as a bar and
 * mailbox wait p99.  q quits.
 *
 * It owns the terminal while it runs: non-canonical, no echo, the
 * alternate screen, the cursor hidden.  It must give all of it back on
 * every way out (q, SIGINT, SIGTERM, actord going away); signals arrive
 * through a signalfd, so no handler runs and nothing is left half-drawn.
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

struct top {
	struct actorctl	*a;
	bool		 tty;
	struct termios	 saved;
	int		 sfd;
	sigset_t	 oldmask;
	char		(*paths)[CTL_PATH_MAX];	/* previous sample */
	uint32_t	*prev_restarts;
	size_t		 nprev;
	struct timespec	 prev_time;
};

static int	 top_enter(struct top *);
static void	 top_leave(struct top *);
static int	 top_draw(struct top *);
static double	 restart_rate(struct top *, const char *, uint32_t, double);

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

/* Restarts per minute of path since the previous sample, dt seconds ago. */
static double
restart_rate(struct top *t, const char *path, uint32_t restarts, double dt)
{
	size_t i;

	if (dt <= 0)
		return 0;
	for (i = 0; i < t->nprev; i++)
		if (strcmp(t->paths[i], path) == 0)
			return restarts >= t->prev_restarts[i] ?
			    (restarts - t->prev_restarts[i]) * 60.0 / dt : 0;
	return 0;
}

static int
top_draw(struct top *t)
{
	struct ctl_request	 q;
	struct ctl_response	 st, ss;
	const struct ctl_actor_stats *s;
	struct winsize		 ws;
	struct timespec		 now;
	struct tm		 tm;
	char			 clock[16], bar[256], w99[16];
	unsigned		 c[5];
	size_t			 i, k, pw = 4;
	int			 rc, cols = 80, barw, fill;
	double			 dt = 0;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATUS;
	if ((rc = actorctl_call(t->a, &q, &st, ACTORCTL_TIMEOUT)) != 0)
		return rc;
	q.cmd = CTL_CMD_STATS;
	if ((rc = actorctl_call(t->a, &q, &ss, ACTORCTL_TIMEOUT)) != 0) {
		ctl_response_free(&st);
		return rc;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (t->nprev > 0)
		dt = (now.tv_sec - t->prev_time.tv_sec) +
		    (now.tv_nsec - t->prev_time.tv_nsec) / 1e9;
	if (t->tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		cols = ws.ws_col;
	for (i = 0; i < st.nnodes; i++)
		if (strlen(st.nodes[i].path) > pw)
			pw = strlen(st.nodes[i].path);
	barw = cols - (int)pw - 52;
	if (barw < 10)
		barw = 10;
	if (barw > (int)sizeof(bar) - 3)
		barw = sizeof(bar) - 3;
	{
		time_t wall = time(NULL);

		localtime_r(&wall, &tm);
		strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	}
	actorctl_status_counts(&st, c);
	if (t->tty)
		fputs("\033[H\033[2J", stdout);
	printf("actord %s  %u specs: %u running, %u restarting, %u supervisors, "
	    "%u workers  (q quits)\n\n", clock, c[0], c[1], c[2], c[3], c[4]);
	printf("%-*s  %-10s  %9s  %-*s  %9s\n", (int)pw, "PATH", "STATE",
	    "RESTART/m", barw + 2 + 12, "MAILBOX", "WAIT p99");
	for (i = 0; i < st.nnodes; i++) {
		if (strcmp(st.nodes[i].kind, "supervisor") == 0)
			continue;
		for (s = NULL, k = 0; k < ss.nactors; k++)
			if (strcmp(ss.actors[k].path, st.nodes[i].path) == 0)
				s = &ss.actors[k];
		if (s != NULL && s->capacity > 0) {
			fill = (int)(s->depth * barw / s->capacity);
			if (fill > barw)
				fill = barw;
			if (s->depth > 0 && fill == 0)
				fill = 1;
			bar[0] = '[';
			memset(bar + 1, '#', fill);
			memset(bar + 1 + fill, '.', barw - fill);
			bar[barw + 1] = ']';
			bar[barw + 2] = '\0';
			actorctl_fmt_us(w99, sizeof(w99), s->wait_p99_us);
			printf("%-*s  %-10s  %9.1f  %s %5llu/%-5llu  %9s\n",
			    (int)pw, st.nodes[i].path, st.nodes[i].state,
			    restart_rate(t, st.nodes[i].path,
			    st.nodes[i].restarts, dt), bar,
			    (unsigned long long)s->depth,
			    (unsigned long long)s->capacity, w99);
		} else
			printf("%-*s  %-10s  %9.1f  %-*s  %9s\n", (int)pw,
			    st.nodes[i].path, st.nodes[i].state,
			    restart_rate(t, st.nodes[i].path,
			    st.nodes[i].restarts, dt), barw + 2 + 12,
			    "(no mailbox)", "-");
	}
	fflush(stdout);
	/* Keep this sample for the next rate. */
	free(t->paths);
	free(t->prev_restarts);
	t->paths = calloc(st.nnodes + 1, sizeof(*t->paths));
	t->prev_restarts = calloc(st.nnodes + 1, sizeof(*t->prev_restarts));
	t->nprev = 0;
	if (t->paths != NULL && t->prev_restarts != NULL) {
		for (i = 0; i < st.nnodes; i++) {
			memcpy(t->paths[i], st.nodes[i].path, CTL_PATH_MAX);
			t->prev_restarts[i] = st.nodes[i].restarts;
		}
		t->nprev = st.nnodes;
	}
	t->prev_time = now;
	ctl_response_free(&st);
	ctl_response_free(&ss);
	return 0;
}

int
actorctl_top(struct actorctl *a, int argc, char **argv)
{
	struct top		 t;
	struct pollfd		 pfd[2];
	struct signalfd_siginfo	 si;
	struct timespec		 next, now;
	char			*end, ch;
	long			 count = 0, frames = 0;
	int			 c, rc = 0, wait;

	optind = 0;
	while ((c = getopt(argc, argv, "+n:")) != -1) {
		if (c != 'n' || (count = strtol(optarg, &end, 10)) <= 0 ||
		    *end != '\0') {
			fprintf(stderr, "usage: actorctl top [-n count]\n");
			return ACTORCTL_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: actorctl top [-n count]\n");
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
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		if ((rc = top_draw(&t)) != 0)
			break;
		if (count > 0 && ++frames >= count)
			break;
		next.tv_sec += 1;
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			wait = (next.tv_sec - now.tv_sec) * 1000 +
			    (next.tv_nsec - now.tv_nsec) / 1000000;
			if (wait <= 0)
				break;
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
			    read(STDIN_FILENO, &ch, 1) == 1 &&
			    (ch == 'q' || ch == 'Q'))
				goto out;
		}
	}
out:
	top_leave(&t);
	free(t.paths);
	free(t.prev_restarts);
	return rc;
}
