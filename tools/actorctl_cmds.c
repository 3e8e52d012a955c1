/*
 * actorctl_cmds.c: actorctl's command table, the parsing of each
 * command's arguments, and the human and JSON outputs.  The table is
 * what usage() prints and what an unknown command is checked against;
 * keep it in step with actorctl(8), SYNOPSIS and COMMANDS.
 *
 * It owns the output formats.  It must never decide what a command means
 * for the tree (actord's backend does), only carry the result faithfully:
 * error texts are printed as actord wrote them.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "supervisor/metrics.h"
#include "tools/actorctl.h"
#include "tools/json.h"

#define ASK_TIMEOUT	5000	/* ms, ask -t default */

struct command {
	const char	*name;
	int		(*fn)(struct actorctl *, int, char **);
	const char	*args;		/* as in the SYNOPSIS */
	const char	*help;
	const char	*opts;		/* its options, for --help */
};

static int	 cmd_status(struct actorctl *, int, char **);
static int	 cmd_path(struct actorctl *, int, char **);
static int	 cmd_kill(struct actorctl *, int, char **);
static int	 cmd_plain(struct actorctl *, int, char **);
static int	 cmd_send(struct actorctl *, int, char **);
static int	 cmd_deadletters(struct actorctl *, int, char **);
static int	 cmd_stats(struct actorctl *, int, char **);
static int	 cmd_log(struct actorctl *, int, char **);
static int	 cmd_help(struct actorctl *, int, char **);
static int	 opts_exit(int);
static void	 print_help(const struct command *);
static bool	 wants_help(int, char **);
static int	 usage_of(const char *);
static void	 print_result(const struct actorctl *, const struct ctl_response *);
static int	 call_print(struct actorctl *, const struct ctl_request *);
static int	 request_init(struct ctl_request *, int, const char *,
		    const char *);
static void	 follow_next(struct ctl_request *, struct ctl_response *);
static void	 print_json(struct ctl_buf *);
static int	 read_data(int, char **, struct ctl_request *, uint8_t **);
static void	 ask_json(const struct actorctl *, const struct ctl_response *,
		    int);
static bool	 is_text(const uint8_t *, size_t);
static void	 dl_message(char *, size_t, const struct ctl_deadletter *);

#define O_JSON	"  --json          one JSON document\n"
#define O_FOLLOW "  -f              follow: wait for what comes next, until " \
		    "interrupted\n"

static const struct command commands[] = {
	{ "status", cmd_status, "[-l] [path]", "the tree, or one subtree",
	  "  -l, --full      every column, none cut to the terminal's width\n"
	  "                  (the default when the output is not a terminal)\n"
	  O_JSON },
	{ "start", cmd_path, "path", "start a stopped child", O_JSON },
	{ "stop", cmd_path, "path", "stop a child (and its restart loop)",
	  O_JSON },
	{ "restart", cmd_path, "path", "restart; returns once it runs again",
	  O_JSON },
	{ "kill", cmd_kill, "[-s signal] [--tree] path",
	  "signal a worker's process group",
	  "  -s signal       a name (TERM, SIGKILL) or a number; TERM by "
	  "default\n"
	  "  --tree          path is a supervisor: signal every worker under "
	  "it\n" O_JSON },
	{ "add", cmd_path, "path", "a new instance of a group",
	  O_JSON },
	{ "remove", cmd_path, "path", "remove a stopped child", O_JSON },
	{ "reload", cmd_plain, "", "re-read actord.conf (like SIGHUP)", O_JSON },
	{ "send", cmd_send, "path tag [data]", "send a message",
	  "  data            the message; standard input when it is left out\n"
	  O_JSON },
	{ "ask", cmd_send, "[-t ms] path tag [data]", "ask, print the answer",
	  "  -t ms           how long to wait for the answer (default 5000)\n"
	  "  data            the message; standard input when it is left out\n"
	  "  --json          the answer in base64 with its size, or the "
	  "error\n" },
	{ "deadletters", cmd_deadletters, "[-f]", "recent dead letters",
	  O_FOLLOW O_JSON },
	{ "stats", cmd_stats, "[--prometheus] [path]", "actor statistics",
	  "  --prometheus    the Prometheus text format\n" O_JSON },
	{ "top", actorctl_top, "[-n count]", "a live view; keys s, /, q",
	  NULL },
	{ "log", cmd_log, "[-f] path", "a child's captured output",
	  O_FOLLOW O_JSON },
	{ "shutdown", cmd_plain, "", "stop the tree and actord", O_JSON },
	{ "nodes", actorctl_nodes, "", "a node's peers and their links",
	  O_JSON },
	{ "keygen", actorctl_keygen, "file", "a key pair for a node or client",
	  "  file            the secret key (mode 0600); file.pub the public "
	  "one\n" },
	{ "help", cmd_help, "[command]", "this list, or a command's options",
	  "" },
};

#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

void
actorctl_usage(FILE *f)
{
	size_t i;

	/* As in actorctl(8), SYNOPSIS. */
	fprintf(f, "usage: actorctl [-S socket] [--json] command "
	    "[argument ...]\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "    %-12s %-26s %s\n", commands[i].name,
		    commands[i].args, commands[i].help);
	fprintf(f, "actorctl help COMMAND (or COMMAND --help) lists a "
	    "command's options\n");
}

/* COMMAND --help: its usage and its options, on stdout. */
static void
print_help(const struct command *c)
{
	if (c->fn == actorctl_top) {
		actorctl_top_usage(stdout);
		return;
	}
	printf("usage: actorctl [-S socket] [--json] %s%s%s\n%s\n", c->name,
	    c->args[0] ? " " : "", c->args, c->help);
	printf("options:\n%s  -h, --help      this help\n",
	    c->opts != NULL ? c->opts : "");
}

static int
usage_of(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			fprintf(stderr, "usage: actorctl [-S socket] [--json] "
			    "%s %s\n", name, commands[i].args);
	return ACTORCTL_EXIT_USAGE;
}

/* What a command returns when its options were not to run it. */
static int
opts_exit(int rc)
{
	return rc == -2 ? ACTORCTL_EXIT_OK : ACTORCTL_EXIT_USAGE;
}

/* -h or --help among a command's arguments (before a "--"). */
static bool
wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			return true;
	return false;
}

int
actorctl_run(struct actorctl *a, int argc, char **argv)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, argv[0]) == 0) {
			a->cmd = commands[i].name;
			/*
			 * -h and --help, for every command, whatever its
			 * own parsing: its usage and options, exit 0.
			 */
			if (wants_help(argc, argv)) {
				print_help(&commands[i]);
				return ACTORCTL_EXIT_OK;
			}
			return commands[i].fn(a, argc, argv);
		}
	fprintf(stderr, "actorctl: unknown command \"%s\"; valid commands:",
	    argv[0]);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(stderr, " %s", commands[i].name);
	fprintf(stderr, "\n");
	return ACTORCTL_EXIT_USAGE;
}

static int
cmd_help(struct actorctl *a, int argc, char **argv)
{
	size_t i;

	(void)a;
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0)) {
		print_help(&commands[NCOMMANDS - 1]);	/* help's own */
		return 0;
	}
	if (argc < 2) {
		actorctl_usage(stdout);
		return 0;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, argv[1]) == 0) {
			print_help(&commands[i]);
			return 0;
		}
	fprintf(stderr, "actorctl: help: unknown command \"%s\"\n", argv[1]);
	return ACTORCTL_EXIT_USAGE;
}

/*
 * Parse a command's options (getopt letters in opts, plus --json, -h and
 * --help, and, if longflag is set, --LONGFLAG into *flag) and leave the
 * operands in argv[optind..].  Returns optind; -2 after printing the
 * command's help (-h, --help); -1 after a usage message.
 */
int
actorctl_parse_opts(struct actorctl *a, int argc, char **argv,
    const char *opts, const char *longflag, char *flag, char **optargs)
{
	struct option	 lo[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ longflag ? longflag : "json", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	char		 o[16];
	const char	*p;
	size_t		 i;
	int		 ch;

	snprintf(o, sizeof(o), ":h%s", opts);
	optind = 0;	/* GNU: re-initialise for this argv */
	while ((ch = getopt_long(argc, argv, o, lo, NULL)) != -1) {
		if (ch == 'J')
			a->json = true;
		else if (ch == 'L')
			*flag = 1;
		else if (ch == 'h') {
			for (i = 0; i < NCOMMANDS; i++)
				if (strcmp(commands[i].name, argv[0]) == 0)
					print_help(&commands[i]);
			return -2;
		} else if (ch != '?' && ch != ':' &&
		    (p = strchr(opts, ch)) != NULL)
			optargs[p - opts] = p[1] == ':' ? optarg : (char *)"";
		else {
			if (ch == ':')
				fprintf(stderr, "actorctl: %s: -%c needs a value\n",
				    argv[0], optopt);
			else
				fprintf(stderr, "actorctl: %s: unknown option "
				    "%s\n", argv[0], argv[optind - 1]);
			usage_of(argv[0]);
			return -1;
		}
	}
	return optind;
}

static int
need_path(const char *cmd, const char *path)
{
	if (!ctl_path_valid(path)) {
		fprintf(stderr, "actorctl: %s: invalid path \"%s\" (expected "
		    "/name/name...)\n", cmd, path);
		return ACTORCTL_EXIT_USAGE;
	}
	return 0;
}

static void
set_path(struct ctl_request *q, const char *path)
{
	snprintf(q->path, sizeof(q->path), "%s", path);
	q->present |= 1u << CTL_F_PATH;
}

/*
 * A fresh request for command cmd on path (none if NULL), once path is
 * checked; the usage exit code, after a message, if it is invalid.
 */
static int
request_init(struct ctl_request *q, int cmd, const char *name,
    const char *path)
{
	int	 rc;

	if (path != NULL && (rc = need_path(name, path)) != 0)
		return rc;
	memset(q, 0, sizeof(*q));
	q->cmd = cmd;
	if (path != NULL)
		set_path(q, path);
	return 0;
}

static void
print_json(struct ctl_buf *b)
{
	ctl_buf_add(b, "\n", 1);
	fwrite(b->data, 1, b->len, stdout);
	ctl_buf_free(b);
}

/* What an action command prints: actord's message, if it has one. */
static void
print_result(const struct actorctl *a, const struct ctl_response *r)
{
	struct ctl_buf	 b;
	struct json_w	 w;

	if (a->json) {
		ctl_buf_init(&b, CTL_MAX_RESPONSE * 2);
		jw_init(&w, &b);
		jw_obj_begin(&w, NULL);
		jw_str(&w, "result", "ok");
		if (r->message[0] != '\0')
			jw_str(&w, "message", r->message);
		jw_obj_end(&w);
		print_json(&b);
	} else if (r->message[0] != '\0')
		printf("%s\n", r->message);
}

/* An action command: send q, print actord's result, free the answer. */
static int
call_print(struct actorctl *a, const struct ctl_request *q)
{
	struct ctl_response	 r;
	int			 rc;

	if ((rc = actorctl_call(a, q, &r, ACTORCTL_TIMEOUT)) != 0)
		return rc;
	print_result(a, &r);
	ctl_response_free(&r);
	return 0;
}

/*
 * Follow (-f): the next request waits, in actord, for what comes after
 * the cursor of the answer r, which is freed.
 */
static void
follow_next(struct ctl_request *q, struct ctl_response *r)
{
	if (r->has_cursor) {
		q->cursor = r->cursor;
		q->present |= 1u << CTL_F_CURSOR;
	}
	q->wait = true;
	q->present |= 1u << CTL_F_WAIT;
	ctl_response_free(r);
}

/* --- status -------------------------------------------------------------- */

void
actorctl_fmt_uptime(char *buf, size_t len, uint64_t ms)
{
	uint64_t s = ms / 1000;

	if (s < 60)
		snprintf(buf, len, "%llus", (unsigned long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%llum%02llus", (unsigned long long)s / 60,
		    (unsigned long long)s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lluh%02llum", (unsigned long long)s / 3600,
		    (unsigned long long)s % 3600 / 60);
	else
		snprintf(buf, len, "%llud%02lluh", (unsigned long long)s / 86400,
		    (unsigned long long)s % 86400 / 3600);
}

void
actorctl_fmt_us(char *buf, size_t len, uint64_t us)
{
	if (us < 1000)
		snprintf(buf, len, "%lluus", (unsigned long long)us);
	else if (us < 1000000)
		snprintf(buf, len, "%.1fms", us / 1e3);
	else
		snprintf(buf, len, "%.2fs", us / 1e6);
}

int
actorctl_path_depth(const char *path)
{
	int d = 0;

	if (strcmp(path, "/") == 0)
		return 0;
	for (; *path != '\0'; path++)
		d += *path == '/';
	return d;
}

static bool
is_supervisor(const struct ctl_node *n)
{
	/* An instances group is the implicit supervisor of its instances. */
	return strcmp(n->kind, "supervisor") == 0 ||
	    strcmp(n->kind, "group") == 0;
}

/* c: specs, running, restarting, supervisors, workers. */
void
actorctl_status_counts(const struct ctl_response *r, unsigned c[5])
{
	size_t i;

	memset(c, 0, 5 * sizeof(c[0]));
	for (i = 0; i < r->nnodes; i++) {
		if (r->nodes[i].node[0] != '\0')
			continue;	/* another node's shard */
		c[0]++;
		c[1] += strcmp(r->nodes[i].state, "running") == 0;
		c[2] += strcmp(r->nodes[i].state, "restarting") == 0;
		c[3] += is_supervisor(&r->nodes[i]);
		c[4] += !is_supervisor(&r->nodes[i]);
	}
}

/*
 * The columns of status, in order.  LAST EXIT is last: it is the long
 * free text, cut first to fit a terminal (as ps cuts its COMMAND).  At a
 * terminal, without -l, status shows the compact ones only, PID at the
 * width of the largest pid so that a line is cut at the same place
 * whatever the pids are.
 */
enum { C_PATH, C_KIND, C_STATE, C_PID, C_UPTIME, C_RESTARTS, C_MAILBOX,
	C_SUPERVISION, C_LASTEXIT, NCOLS };
static const struct {
	const char	*hdr;
	bool		 right;		/* numbers right-aligned */
	bool		 compact;	/* shown at a terminal without -l */
	int		 compact_w;	/* its width there, at least */
} status_col[NCOLS] = {
	[C_PATH] =		{ "PATH", false, true, 0 },
	[C_KIND] =		{ "KIND", false, false, 0 },
	[C_STATE] =		{ "STATE", false, true, 10 },
	[C_PID] =		{ "PID", true, true, 7 },
	[C_UPTIME] =		{ "UPTIME", false, true, 6 },
	[C_RESTARTS] =		{ "RESTARTS", true, true, 0 },
	[C_MAILBOX] =		{ "MAILBOX", true, false, 0 },
	[C_SUPERVISION] =	{ "SUPERVISION", false, false, 0 },
	[C_LASTEXIT] =		{ "LAST EXIT", false, true, 0 },
};

/* A node's cells; its path indented by its depth below the top one. */
static void
status_cells(const struct ctl_node *n, int top,
    char cell[NCOLS][CTL_PATH_MAX + 64])
{
	int d = actorctl_path_depth(n->path) - top;

	snprintf(cell[C_PATH], sizeof(cell[0]), "%*s%s", d > 0 ? 2 * d : 0,
	    "", n->path);
	snprintf(cell[C_KIND], sizeof(cell[0]), "%s", n->kind);
	/* Another node's shard: where it runs. */
	if (n->node[0] != '\0')
		snprintf(cell[C_STATE], sizeof(cell[0]), "%s on %s", n->state,
		    n->node);
	else
		snprintf(cell[C_STATE], sizeof(cell[0]), "%s", n->state);
	if (n->pid > 0)
		snprintf(cell[C_PID], sizeof(cell[0]), "%d", n->pid);
	else
		strcpy(cell[C_PID], "-");
	if (n->uptime_ms > 0)
		actorctl_fmt_uptime(cell[C_UPTIME], sizeof(cell[0]), n->uptime_ms);
	else
		strcpy(cell[C_UPTIME], "-");
	snprintf(cell[C_RESTARTS], sizeof(cell[0]), "%u", n->restarts);
	if (n->mailbox_depth >= 0)
		snprintf(cell[C_MAILBOX], sizeof(cell[0]), "%lld",
		    (long long)n->mailbox_depth);
	else
		strcpy(cell[C_MAILBOX], "-");
	if (is_supervisor(n))
		snprintf(cell[C_SUPERVISION], sizeof(cell[0]), "%s %u/%u in %us",
		    n->strategy[0] ? n->strategy : "?", n->period_restarts,
		    n->intensity, n->period);
	else
		strcpy(cell[C_SUPERVISION], "-");
	snprintf(cell[C_LASTEXIT], sizeof(cell[0]), "%s", n->last_exit[0] ?
	    n->last_exit : "-");
}

/*
 * How wide the output is: the terminal's width when stdout is one and
 * full is not asked, else no limit (cols 0).
 */
void
actorctl_fit(struct actorctl_fit *f, bool full)
{
	struct winsize ws;

	f->tty = isatty(STDOUT_FILENO);
	f->cols = 0;
	if (f->tty && !full && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
		f->cols = ws.ws_col > 0 ? ws.ws_col : 80;
}

/*
 * Cut line (ASCII, or UTF-8 counted by characters) to cols columns, the
 * last one an ellipsis when something was cut; cols 0 cuts nothing.
 * Returns the columns the line takes.
 */
int
actorctl_fit_line(char *line, size_t size, int cols)
{
	size_t	 i, keep = 0;
	int	 w = 0;

	for (i = 0; line[i] != '\0'; i++) {
		if (((unsigned char)line[i] & 0xc0) == 0x80)
			continue;	/* a continuation byte */
		if (cols > 0 && w == cols - 1)
			keep = i;
		w++;
	}
	if (cols <= 0 || w <= cols)
		return w;
	if (keep + sizeof("\u2026") > size)
		keep = size - sizeof("\u2026");
	memcpy(line + keep, "\u2026", sizeof("\u2026"));
	return cols;
}

static void
status_json(const struct ctl_response *r)
{
	const struct ctl_node	*n;
	struct ctl_buf		 b;
	struct json_w		 w;
	unsigned		 c[5];
	size_t			 i;

	ctl_buf_init(&b, CTL_MAX_RESPONSE * 4);
	jw_init(&w, &b);
	jw_obj_begin(&w, NULL);
	jw_arr_begin(&w, "nodes");
	for (i = 0; i < r->nnodes; i++) {
		n = &r->nodes[i];
		jw_obj_begin(&w, NULL);
		jw_str(&w, "path", n->path);
		jw_str(&w, "kind", n->kind);
		jw_str(&w, "state", n->state);
		if (n->node[0] != '\0')
			jw_str(&w, "node", n->node);
		if (n->pid > 0)
			jw_int(&w, "pid", n->pid);
		else
			jw_null(&w, "pid");
		jw_uint(&w, "uptime_ms", n->uptime_ms);
		jw_uint(&w, "restarts", n->restarts);
		jw_uint(&w, "incarnation", n->incarnation);
		if (n->last_exit[0])
			jw_str(&w, "last_exit", n->last_exit);
		else
			jw_null(&w, "last_exit");
		if (n->mailbox_depth >= 0)
			jw_int(&w, "mailbox_depth", n->mailbox_depth);
		else
			jw_null(&w, "mailbox_depth");
		if (is_supervisor(n)) {
			jw_str(&w, "strategy", n->strategy);
			jw_uint(&w, "restarts_in_period", n->period_restarts);
			jw_uint(&w, "intensity", n->intensity);
			jw_uint(&w, "period", n->period);
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	actorctl_status_counts(r, c);
	jw_obj_begin(&w, "counts");
	jw_uint(&w, "specs", c[0]);
	jw_uint(&w, "running", c[1]);
	jw_uint(&w, "restarting", c[2]);
	jw_uint(&w, "supervisors", c[3]);
	jw_uint(&w, "workers", c[4]);
	jw_obj_end(&w);
	jw_obj_end(&w);
	print_json(&b);
}

void
actorctl_print_status(const struct ctl_response *r, bool json, bool full)
{
	char			(*cells)[NCOLS][CTL_PATH_MAX + 64];
	char			 line[NCOLS * (CTL_PATH_MAX + 66)];
	struct actorctl_fit	 fit;
	size_t			 i, len, w[NCOLS];
	unsigned		 c[5];
	int			 k, last, top;

	if (json) {
		status_json(r);
		return;
	}
	actorctl_fit(&fit, full);
	if ((cells = calloc(r->nnodes + 1, sizeof(*cells))) == NULL) {
		fprintf(stderr, "actorctl: %s\n", strerror(errno));
		return;
	}
	for (k = 0; k < NCOLS; k++) {
		snprintf(cells[0][k], sizeof(cells[0][k]), "%s",
		    status_col[k].hdr);
		w[k] = strlen(status_col[k].hdr);
		if (fit.cols > 0 && w[k] < (size_t)status_col[k].compact_w)
			w[k] = status_col[k].compact_w;
	}
	for (top = INT_MAX, i = 0; i < r->nnodes; i++)
		if (actorctl_path_depth(r->nodes[i].path) < top)
			top = actorctl_path_depth(r->nodes[i].path);
	for (i = 0; i < r->nnodes; i++) {
		status_cells(&r->nodes[i], top, cells[i + 1]);
		for (k = 0; k < NCOLS; k++)
			if (strlen(cells[i + 1][k]) > w[k])
				w[k] = strlen(cells[i + 1][k]);
	}
	for (i = 0; i <= r->nnodes; i++) {
		line[0] = '\0';
		for (len = 0, last = -1, k = 0; k < NCOLS; k++) {
			if (fit.cols > 0 && !status_col[k].compact)
				continue;
			if (last >= 0)
				len += snprintf(line + len, sizeof(line) - len,
				    "  ");
			/* The last column is not padded: no trailing blanks. */
			len += snprintf(line + len, sizeof(line) - len,
			    status_col[k].right ? "%*s" : "%-*s",
			    k == C_LASTEXIT ? 0 : (int)w[k], cells[i][k]);
			last = k;
		}
		actorctl_fit_line(line, sizeof(line), fit.cols);
		printf("%s\n", line);
	}
	free(cells);
	actorctl_status_counts(r, c);
	snprintf(line, sizeof(line), "%u specs: %u running, %u restarting, "
	    "%u supervisors, %u workers", c[0], c[1], c[2], c[3], c[4]);
	actorctl_fit_line(line, sizeof(line), fit.cols);
	printf("%s\n", line);
}

static int
cmd_status(struct actorctl *a, int argc, char **argv)
{
	struct ctl_request	 q;
	struct ctl_response	 r;
	char			*oa[1] = { NULL }, full = 0;
	int			 i, rc;

	if ((i = actorctl_parse_opts(a, argc, argv, "l", "full", &full,
	    oa)) < 0)
		return opts_exit(i);
	if (argc - i > 1)
		return usage_of(argv[0]);
	if ((rc = request_init(&q, CTL_CMD_STATUS, argv[0],
	    argc - i == 1 ? argv[i] : NULL)) != 0)
		return rc;
	if ((rc = actorctl_call(a, &q, &r, ACTORCTL_TIMEOUT)) != 0)
		return rc;
	actorctl_print_status(&r, a->json, full || oa[0] != NULL);
	ctl_response_free(&r);
	return 0;
}

/* --- commands on one path, and the plain ones ---------------------------- */

static int
cmd_path(struct actorctl *a, int argc, char **argv)
{
	struct ctl_request	 q;
	char			*oa[1] = { NULL };
	int			 i, rc;

	if ((i = actorctl_parse_opts(a, argc, argv, "", NULL, NULL, oa)) < 0)
		return opts_exit(i);
	if (argc - i != 1)
		return usage_of(argv[0]);
	if ((rc = request_init(&q, ctl_cmd_lookup(argv[0]), argv[0],
	    argv[i])) != 0)
		return rc;
	return call_print(a, &q);
}

static int
parse_signal(const char *s)
{
	const char	*abbr;
	char		*end;
	long		 n;
	int		 i;

	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	n = strtol(s, &end, 10);
	if (*s != '\0' && *end == '\0')
		return n >= 1 && n < NSIG ? (int)n : -1;
	for (i = 1; i < NSIG; i++)
		if ((abbr = sigabbrev_np(i)) != NULL && strcasecmp(abbr, s) == 0)
			return i;
	return -1;
}

static int
cmd_kill(struct actorctl *a, int argc, char **argv)
{
	struct ctl_request	 q;
	char			*oa[2] = { NULL, NULL }, tree = 0;
	int			 i, rc, sig = SIGTERM;

	if ((i = actorctl_parse_opts(a, argc, argv, "s:", "tree", &tree,
	    oa)) < 0)
		return opts_exit(i);
	if (argc - i != 1)
		return usage_of(argv[0]);
	if (oa[0] != NULL && (sig = parse_signal(oa[0])) == -1) {
		fprintf(stderr, "actorctl: kill: unknown signal \"%s\"\n", oa[0]);
		return ACTORCTL_EXIT_USAGE;
	}
	if ((rc = request_init(&q, CTL_CMD_KILL, argv[0], argv[i])) != 0)
		return rc;
	q.signo = sig;
	q.present |= 1u << CTL_F_SIGNAL;
	if (tree)
		q.present |= 1u << CTL_F_TREE;	/* a supervisor's workers */
	return call_print(a, &q);
}

static int
cmd_plain(struct actorctl *a, int argc, char **argv)
{
	struct ctl_request	 q;
	char			*oa[1] = { NULL };
	int			 i;

	if ((i = actorctl_parse_opts(a, argc, argv, "", NULL, NULL, oa)) < 0)
		return opts_exit(i);
	if (argc - i != 0)
		return usage_of(argv[0]);
	request_init(&q, ctl_cmd_lookup(argv[0]), argv[0], NULL);
	return call_print(a, &q);
}

/* --- send and ask -------------------------------------------------------- */

/* DATA from argv[i], or all of standard input when there is no argv[i]. */
static int
read_data(int have_arg, char **arg, struct ctl_request *q, uint8_t **owned)
{
	size_t	 n = 0;
	ssize_t	 r;
	uint8_t	*buf;

	*owned = NULL;
	if (have_arg) {
		q->data = (const uint8_t *)*arg;
		q->datalen = strlen(*arg);
	} else {
		if ((buf = malloc(CTL_MAX_DATA + 1)) == NULL)
			return -1;
		while ((r = read(STDIN_FILENO, buf + n, CTL_MAX_DATA + 1 - n)) > 0)
			if ((n += r) > CTL_MAX_DATA)
				break;
		if (r == -1) {
			fprintf(stderr, "actorctl: standard input: %s\n",
			    strerror(errno));
			free(buf);
			return -1;
		}
		*owned = buf;
		q->data = buf;
		q->datalen = n;
	}
	if (q->datalen > CTL_MAX_DATA) {
		fprintf(stderr, "actorctl: DATA too large (at most %d bytes)\n",
		    CTL_MAX_DATA);
		return -1;
	}
	q->present |= 1u << CTL_F_DATA;
	return 0;
}

static int
cmd_send(struct actorctl *a, int argc, char **argv)
{
	struct ctl_request	 q;
	struct ctl_response	 r;
	char			*oa[2] = { NULL, NULL }, *end;
	uint8_t			*owned;
	unsigned long		 v;
	bool			 ask = strcmp(argv[0], "ask") == 0;
	int			 i, rc;

	if ((i = actorctl_parse_opts(a, argc, argv, ask ? "t:" : "", NULL, NULL,
	    oa)) < 0)
		return opts_exit(i);
	if (argc - i < 2 || argc - i > 3)
		return usage_of(argv[0]);
	if ((rc = request_init(&q, ask ? CTL_CMD_ASK : CTL_CMD_SEND, argv[0],
	    argv[i])) != 0)
		return rc;
	errno = 0;
	v = strtoul(argv[i + 1], &end, 0);
	if (argv[i + 1][0] == '\0' || argv[i + 1][0] == '-' || *end != '\0' ||
	    errno != 0 || v > UINT32_MAX) {
		fprintf(stderr, "actorctl: %s: TAG \"%s\" is not a number from "
		    "0 to 4294967295\n", argv[0], argv[i + 1]);
		return ACTORCTL_EXIT_USAGE;
	}
	q.tag = v;
	q.present |= 1u << CTL_F_TAG;
	if (ask) {
		q.timeout_ms = ASK_TIMEOUT;
		if (oa[0] != NULL) {
			errno = 0;
			v = strtoul(oa[0], &end, 10);
			if (oa[0][0] == '\0' || oa[0][0] == '-' || *end != '\0' ||
			    errno != 0 || v == 0 || v > 3600000) {
				fprintf(stderr, "actorctl: ask: -t \"%s\": "
				    "expected milliseconds, 1 to 3600000\n",
				    oa[0]);
				return ACTORCTL_EXIT_USAGE;
			}
			q.timeout_ms = v;
		}
		q.present |= 1u << CTL_F_TIMEOUT;
	}
	if (read_data(argc - i == 3, &argv[i + 2], &q, &owned) == -1)
		return ACTORCTL_EXIT_USAGE;
	/* actord answers an ask by its own deadline; allow it some slack. */
	rc = actorctl_call(a, &q, &r, ask ? (int)q.timeout_ms + 5000 :
	    ACTORCTL_TIMEOUT);
	free(owned);
	if (rc != 0 && ask && a->json)
		ask_json(a, NULL, rc);
	if (rc != 0)
		return rc;
	if (ask && a->json)
		ask_json(a, &r, 0);
	else if (ask)
		fwrite(r.data, 1, r.datalen, stdout);
	else
		print_result(a, &r);
	ctl_response_free(&r);
	return 0;
}

/* Printable UTF-8 text, as an answer shown as a JSON string should be. */
static bool
is_text(const uint8_t *p, size_t n)
{
	size_t	 i = 0, k, more;
	uint32_t c;

	while (i < n) {
		if (p[i] < 0x80) {
			if (p[i] < 0x20 && p[i] != '\n' && p[i] != '\t' &&
			    p[i] != '\r')
				return false;
			if (p[i++] == 0x7f)
				return false;
			continue;
		}
		more = p[i] >= 0xf0 ? 3 : p[i] >= 0xe0 ? 2 : p[i] >= 0xc0 ?
		    1 : 0;
		if (more == 0 || p[i] > 0xf4 || i + more >= n)
			return false;
		c = p[i] & (0x3f >> more);
		for (k = 1; k <= more; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			c = c << 6 | (p[i + k] & 0x3f);
		}
		/* Overlong forms, surrogates, beyond U+10FFFF. */
		if ((more == 1 && c < 0x80) || (more == 2 && c < 0x800) ||
		    (more == 3 && c < 0x10000) || c > 0x10ffff ||
		    (c >= 0xd800 && c <= 0xdfff))
			return false;
		i += more + 1;
	}
	return true;
}

/*
 * ask --json: {"result": "ok", "size": N, "answer_base64": "...",
 * "answer": "..." (null unless the answer is text)}, or, when it failed
 * (r NULL), {"result": "error", "error": "...", "exit_status": rc}, so a
 * script always has a document to read.
 */
static void
ask_json(const struct actorctl *a, const struct ctl_response *r, int rc)
{
	struct ctl_buf	 b;
	struct json_w	 w;
	const uint8_t	*d = r != NULL && r->data != NULL ? r->data :
			    (const uint8_t *)"";
	size_t		 n = r != NULL ? r->datalen : 0;

	ctl_buf_init(&b, CTL_MAX_RESPONSE * 10);
	jw_init(&w, &b);
	jw_obj_begin(&w, NULL);
	if (r == NULL) {
		jw_str(&w, "result", "error");
		jw_str(&w, "error", a->error[0] ? a->error : "failed");
		jw_int(&w, "exit_status", rc);
	} else {
		jw_str(&w, "result", "ok");
		jw_uint(&w, "size", n);
		jw_base64(&w, "answer_base64", d, n);
		if (is_text(d, n))
			jw_text(&w, "answer", d, n);
		else
			jw_null(&w, "answer");
	}
	jw_obj_end(&w);
	print_json(&b);
}

/* --- dead letters -------------------------------------------------------- */

static void
fmt_time(char *buf, size_t len, uint64_t ms)
{
	struct tm	 tm;
	time_t		 t = ms / 1000;
	char		 s[32];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", s, (unsigned)(ms % 1000));
}

static void
dl_json(struct json_w *w, const struct ctl_deadletter *d)
{
	char t[48];

	fmt_time(t, sizeof(t), d->time_ms);
	jw_obj_begin(w, NULL);
	jw_uint(w, "seq", d->seq);
	jw_str(w, "time", t);
	jw_uint(w, "time_ms", d->time_ms);
	jw_str(w, "recipient", d->recipient);
	if (d->sender[0])
		jw_str(w, "sender", d->sender);
	else
		jw_null(w, "sender");
	jw_str(w, "reason", d->reason);
	jw_uint(w, "tag", d->tag);
	jw_uint(w, "size", d->size);
	jw_obj_end(w);
}

/* A dead letter's message, as the human form prints it. */
static void
dl_message(char *buf, size_t len, const struct ctl_deadletter *d)
{
	snprintf(buf, len, "tag=%u size=%u%s%s", d->tag, d->size,
	    d->sender[0] ? " from " : "", d->sender);
}

/*
 * The human form: a table with its header, oldest first, and a count; a
 * follow (-f) prints the header once, then each dead letter as it comes
 * (columns two blanks apart, since what comes next is not known yet).
 */
static void
print_deadletters(const struct actorctl *a, const struct ctl_response *r,
    bool follow, bool first)
{
	const struct ctl_deadletter *d;
	struct ctl_buf	 b;
	struct json_w	 w;
	char		 t[48], m[CTL_PATH_MAX + 64];
	size_t		 i;
	int		 rw = 9, sw = 6;

	if (a->json && !follow) {
		ctl_buf_init(&b, CTL_MAX_RESPONSE * 4);
		jw_init(&w, &b);
		jw_obj_begin(&w, NULL);
		jw_arr_begin(&w, "deadletters");
		for (i = 0; i < r->ndls; i++)
			dl_json(&w, &r->dls[i]);
		jw_arr_end(&w);
		jw_uint(&w, "cursor", r->cursor);
		jw_obj_end(&w);
		print_json(&b);
		return;
	}
	for (i = 0; !follow && i < r->ndls; i++) {
		if ((int)strlen(r->dls[i].recipient) > rw)
			rw = (int)strlen(r->dls[i].recipient);
		if ((int)strlen(r->dls[i].reason) > sw)
			sw = (int)strlen(r->dls[i].reason);
	}
	if (follow)
		rw = sw = 0;
	if (!a->json && first)
		printf("%-24s  %-*s  %-*s  %s\n", "TIME", rw, "RECIPIENT", sw,
		    "REASON", "MESSAGE");
	for (i = 0; i < r->ndls; i++) {
		d = &r->dls[i];
		if (a->json) {
			/* -f --json: one document per line. */
			ctl_buf_init(&b, CTL_MAX_RESPONSE);
			jw_init(&w, &b);
			dl_json(&w, d);
			print_json(&b);
			continue;
		}
		fmt_time(t, sizeof(t), d->time_ms);
		dl_message(m, sizeof(m), d);
		printf("%-24s  %-*s  %-*s  %s\n", t, rw, d->recipient, sw,
		    d->reason, m);
	}
	if (!a->json && !follow)
		printf("%zu dead letter%s\n", r->ndls, r->ndls == 1 ? "" : "s");
	fflush(stdout);
}

static int
cmd_deadletters(struct actorctl *a, int argc, char **argv)
{
	struct ctl_request	 q;
	struct ctl_response	 r;
	char			*oa[1] = { NULL };
	int			 i, rc;
	bool			 follow, first;

	if ((i = actorctl_parse_opts(a, argc, argv, "f", NULL, NULL, oa)) < 0)
		return opts_exit(i);
	if (argc - i != 0)
		return usage_of(argv[0]);
	follow = oa[0] != NULL;
	request_init(&q, CTL_CMD_DEADLETTERS, argv[0], NULL);
	for (first = true;; first = false) {
		rc = actorctl_call(a, &q, &r, q.wait ? -1 : ACTORCTL_TIMEOUT);
		if (rc != 0)
			return rc;
		print_deadletters(a, &r, follow, first);
		if (!follow) {
			ctl_response_free(&r);
			return 0;
		}
		follow_next(&q, &r);
	}
}

/* --- stats --------------------------------------------------------------- */

/*
 * The hot shard of a group: the one with the most messages, when it has at
 * least twice its fair share and the group has seen some traffic; -1 if
 * the spread is even enough.
 */
int
actorctl_hot_shard(const struct ctl_shard_group *g)
{
	uint64_t	 total = 0, max = 0;
	uint32_t	 i, hot = 0;

	/* The counts come from the arena: any worker may make them huge. */
	for (i = 0; i < g->nshards; i++) {
		total = shm_sat_add(total, g->count[i]);
		if (g->count[i] > max) {
			max = g->count[i];
			hot = i;
		}
	}
	if (g->nshards < 2 || total < 10 * (uint64_t)g->nshards)
		return -1;
	return (unsigned __int128)max * g->nshards >=
	    2 * (unsigned __int128)total ? (int)hot : -1;
}

static void
hist_json(struct json_w *w, const char *key, const struct ctl_hist *h)
{
	uint32_t i;

	jw_obj_begin(w, key);
	jw_arr_begin(w, "buckets");
	for (i = 0; i < h->nbuckets; i++) {
		jw_obj_begin(w, NULL);
		jw_uint(w, "le_us", h->le_us[i]);
		jw_uint(w, "count", h->count[i]);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_uint(w, "count", h->total);
	jw_uint(w, "sum_us", h->sum_us);
	jw_obj_end(w);
}

static void
stats_json(const struct ctl_response *r)
{
	const struct ctl_actor_stats	*s;
	const struct ctl_counters	*c = &r->control;
	struct ctl_buf			 b;
	struct json_w			 w;
	size_t				 i;
	uint32_t			 j;
	uint64_t			 total;
	int				 hot;

	ctl_buf_init(&b, CTL_MAX_RESPONSE * 4);
	jw_init(&w, &b);
	jw_obj_begin(&w, NULL);
	jw_arr_begin(&w, "actors");
	for (i = 0; i < r->nactors; i++) {
		s = &r->actors[i];
		jw_obj_begin(&w, NULL);
		jw_str(&w, "path", s->path);
		jw_uint(&w, "mailbox_depth", s->depth);
		jw_uint(&w, "mailbox_capacity", s->capacity);
		jw_uint(&w, "wait_p50_us", s->wait_p50_us);
		jw_uint(&w, "wait_p99_us", s->wait_p99_us);
		/* No buckets: actord does not measure handlers (null). */
		if (s->handle.nbuckets == 0) {
			jw_null(&w, "handler_p50_us");
			jw_null(&w, "handler_p99_us");
		} else {
			jw_uint(&w, "handler_p50_us", s->handle_p50_us);
			jw_uint(&w, "handler_p99_us", s->handle_p99_us);
		}
		jw_uint(&w, "restarts", s->restarts);
		jw_uint(&w, "sent", s->sent);
		jw_uint(&w, "received", s->received);
		jw_uint(&w, "dropped", s->dropped);
		jw_uint(&w, "deadlettered", s->deadlettered);
		jw_uint(&w, "asks_failed", s->asks_failed);
		jw_uint(&w, "replaced", s->replaced);
		hist_json(&w, "mailbox_wait", &s->wait);
		if (s->handle.nbuckets == 0)
			jw_null(&w, "handler_duration");
		else
			hist_json(&w, "handler_duration", &s->handle);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_arr_begin(&w, "shard_groups");
	for (i = 0; i < r->ngroups; i++) {
		jw_obj_begin(&w, NULL);
		jw_str(&w, "name", r->groups[i].name);
		jw_arr_begin(&w, "messages");
		for (total = 0, j = 0; j < r->groups[i].nshards; j++) {
			jw_uint(&w, NULL, r->groups[i].count[j]);
			total = shm_sat_add(total, r->groups[i].count[j]);
		}
		jw_arr_end(&w);
		jw_uint(&w, "total", total);
		if ((hot = actorctl_hot_shard(&r->groups[i])) >= 0)
			jw_int(&w, "hot_shard", hot);
		else
			jw_null(&w, "hot_shard");
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	if (r->has_control) {
		jw_obj_begin(&w, "control");
		jw_uint(&w, "connections", c->accepted);
		jw_uint(&w, "requests", c->requests);
		jw_uint(&w, "refused_permission", c->refused_perm);
		jw_uint(&w, "refused_busy", c->refused_busy);
		jw_uint(&w, "malformed", c->malformed);
		jw_uint(&w, "truncated", c->truncated);
		jw_uint(&w, "oversized", c->oversized);
		jw_uint(&w, "bad_version", c->bad_version);
		jw_uint(&w, "unknown_command", c->unknown_command);
		jw_uint(&w, "timeouts", c->timeouts);
		jw_uint(&w, "clients", c->clients);
		jw_uint(&w, "evicted", c->evicted);
		jw_obj_end(&w);
	}
	jw_obj_end(&w);
	print_json(&b);
}

static void
stats_human(const struct ctl_response *r)
{
	const struct ctl_actor_stats	*s;
	const struct ctl_counters	*c = &r->control;
	char				 d[32], w50[16], w99[16], h50[16], h99[16];
	size_t				 i, pw = 5;
	uint32_t			 j;
	uint64_t			 total;
	int				 hot;

	for (i = 0; i < r->nactors; i++)
		if (strlen(r->actors[i].path) > pw)
			pw = strlen(r->actors[i].path);
	if (r->nactors > 0)
		printf("%-*s  %11s  %8s  %8s  %8s  %8s  %8s  %8s  %8s  %7s  %6s\n",
		    (int)pw, "ACTOR", "DEPTH", "WAIT p50", "WAIT p99",
		    "HNDL p50", "HNDL p99", "RESTARTS", "SENT", "RECEIVED",
		    "DROPPED", "DEAD");
	for (i = 0; i < r->nactors; i++) {
		s = &r->actors[i];
		snprintf(d, sizeof(d), "%llu/%llu", (unsigned long long)s->depth,
		    (unsigned long long)s->capacity);
		actorctl_fmt_us(w50, sizeof(w50), s->wait_p50_us);
		actorctl_fmt_us(w99, sizeof(w99), s->wait_p99_us);
		if (s->handle.nbuckets == 0) {
			snprintf(h50, sizeof(h50), "n/a");
			snprintf(h99, sizeof(h99), "n/a");
		} else {
			actorctl_fmt_us(h50, sizeof(h50), s->handle_p50_us);
			actorctl_fmt_us(h99, sizeof(h99), s->handle_p99_us);
		}
		printf("%-*s  %11s  %8s  %8s  %8s  %8s  %8llu  %8llu  %8llu  "
		    "%7llu  %6llu\n", (int)pw, s->path, d, w50, w99, h50, h99,
		    (unsigned long long)s->restarts,
		    (unsigned long long)s->sent,
		    (unsigned long long)s->received,
		    (unsigned long long)s->dropped,
		    (unsigned long long)s->deadlettered);
	}
	for (i = 0; i < r->ngroups; i++) {
		for (total = 0, j = 0; j < r->groups[i].nshards; j++)
			total = shm_sat_add(total, r->groups[i].count[j]);
		printf("shard group %s: %u shards, %llu messages:",
		    r->groups[i].name, r->groups[i].nshards,
		    (unsigned long long)total);
		for (j = 0; j < r->groups[i].nshards; j++)
			printf(" %llu", (unsigned long long)r->groups[i].count[j]);
		if ((hot = actorctl_hot_shard(&r->groups[i])) >= 0)
			printf("\n  hot shard: %d (%.0f%% of the messages)\n", hot,
			    100.0 * r->groups[i].count[hot] / total);
		else
			printf("\n");
	}
	if (r->has_control)
		printf("control socket: %llu connections, %llu requests; "
		    "refused: %llu permission, %llu busy, %llu malformed, "
		    "%llu truncated, %llu oversized, %llu bad version, "
		    "%llu unknown command, %llu timed out; %llu evicted "
		    "to make room\n",
		    (unsigned long long)c->accepted,
		    (unsigned long long)c->requests,
		    (unsigned long long)c->refused_perm,
		    (unsigned long long)c->refused_busy,
		    (unsigned long long)c->malformed,
		    (unsigned long long)c->truncated,
		    (unsigned long long)c->oversized,
		    (unsigned long long)c->bad_version,
		    (unsigned long long)c->unknown_command,
		    (unsigned long long)c->timeouts,
		    (unsigned long long)c->evicted);
}

static int
cmd_stats(struct actorctl *a, int argc, char **argv)
{
	struct ctl_request	 q;
	struct ctl_response	 r;
	struct ctl_buf		 b;
	char			*oa[1] = { NULL }, prom = 0;
	int			 i, rc;

	if ((i = actorctl_parse_opts(a, argc, argv, "", "prometheus", &prom, oa)) < 0)
		return opts_exit(i);
	if (argc - i > 1)
		return usage_of(argv[0]);
	if (prom && a->json) {
		fprintf(stderr, "actorctl: stats: --json and --prometheus "
		    "exclude each other\n");
		return ACTORCTL_EXIT_USAGE;
	}
	if ((rc = request_init(&q, CTL_CMD_STATS, argv[0],
	    argc - i == 1 ? argv[i] : NULL)) != 0)
		return rc;
	if ((rc = actorctl_call(a, &q, &r, ACTORCTL_TIMEOUT)) != 0)
		return rc;
	if (prom) {
		ctl_buf_init(&b, CTL_MAX_RESPONSE * 8);
		if (metrics_write(&b, &r) == 0)
			fwrite(b.data, 1, b.len, stdout);
		else
			rc = ACTORCTL_EXIT_FAILED;
		ctl_buf_free(&b);
	} else if (a->json)
		stats_json(&r);
	else
		stats_human(&r);
	ctl_response_free(&r);
	return rc;
}

/* --- log ----------------------------------------------------------------- */

static int
cmd_log(struct actorctl *a, int argc, char **argv)
{
	struct ctl_request	 q;
	struct ctl_response	 r;
	struct ctl_buf		 b;
	struct json_w		 w;
	char			*oa[1] = { NULL };
	int			 i, rc;
	bool			 follow;

	if ((i = actorctl_parse_opts(a, argc, argv, "f", NULL, NULL, oa)) < 0)
		return opts_exit(i);
	if (argc - i != 1)
		return usage_of(argv[0]);
	if ((rc = request_init(&q, CTL_CMD_LOG, argv[0], argv[i])) != 0)
		return rc;
	follow = oa[0] != NULL;
	for (;;) {
		rc = actorctl_call(a, &q, &r, q.wait ? -1 : ACTORCTL_TIMEOUT);
		if (rc != 0)
			return rc;
		if (a->json) {
			ctl_buf_init(&b, CTL_MAX_RESPONSE * 7);
			jw_init(&w, &b);
			jw_obj_begin(&w, NULL);
			jw_str(&w, "path", q.path);
			jw_bytes(&w, "output", r.data ? r.data : (uint8_t *)"",
			    r.datalen);
			jw_uint(&w, "cursor", r.cursor);
			jw_obj_end(&w);
			print_json(&b);
		} else if (r.datalen > 0)
			fwrite(r.data, 1, r.datalen, stdout);
		fflush(stdout);
		if (!follow) {
			ctl_response_free(&r);
			return 0;
		}
		follow_next(&q, &r);
	}
}
