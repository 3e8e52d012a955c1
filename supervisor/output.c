/*
 * output.c: the stdout and stderr of every child, captured through one
 * pipe per incarnation and written line by line with a "path[pid]: "
 * prefix, to actord's log or to the child's own log file with size-based
 * rotation (path.1 .. path.keep).
 *
 * It owns the read ends of the output pipes and the children's log files.
 * It must never block the event loop on a child: each readiness reads one
 * bounded buffer; a line longer than the buffer is cut, and what cannot be
 * written is counted as dropped and reported.  An output outlives the
 * incarnation that opened it (a grandchild may still hold the pipe) and is
 * closed at EOF or when its node goes away.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

#define OUT_BUF		4096
#define OUT_TAIL	4096	/* bytes of recent output kept per node */

/*
 * Every output is on actord's list and, while its node lives, on its
 * node's (an incarnation's pipe may outlive it, draining): both doubly
 * linked, so that a pipe closed at each death and a node freed cost O(1)
 * whatever the number of workers.
 */
struct output {
	struct output	*next, *prev;	/* ad->outputs */
	struct output	*sib_next, *sib_prev;	/* node->outs */
	struct actord	*ad;
	struct node	*node;		/* NULL once the node went away */
	struct ev	 ev;
	int		 fd;
	char		 prefix[SPEC_PATH_MAX + 24];
	char		 buf[OUT_BUF];
	size_t		 len;
	uint64_t	 dropped;
	/* The child's own log file, if configured. */
	int		 logfd;
	uint64_t	 logsize;
};

static void	on_output(void *, uint32_t);
static void	set_prefix(struct output *);
static void	emit(struct output *, const char *, size_t);
static void	rotate(struct output *);
static void	out_close(struct output *);
static void	flush_lines(struct output *, bool);
static void	tail_append(struct node *, const char *, size_t);
static void	unlink_node(struct output *);

/* Open the pipe for a new incarnation; *child_end goes to fds 1 and 2. */
int
output_open(struct node *n, int *child_end)
{
	struct output *o;
	int p[2];

	*child_end = -1;
	if ((o = calloc(1, sizeof(*o))) == NULL)
		return -1;
	/*
	 * Both ends block: a child writing faster than us waits, and our
	 * end is read only once the loop said it is readable (on_output),
	 * by us alone, or at exit once made non-blocking (output_flush_all):
	 * no read of it can block.  A non-blocking read end cost an fcntl
	 * of every start, to make the child's end block again.
	 */
	if (pipe2(p, O_CLOEXEC) == -1) {
		free(o);
		return -1;
	}
	o->ad = n->ad;
	o->node = n;
	o->fd = p[0];
	o->logfd = -1;
	if (n->cs->log.path != NULL) {
		struct stat st;

		o->logfd = open(n->cs->log.path,
		    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
		if (o->logfd == -1)
			log_warn("%s: open %s", n->path, n->cs->log.path);
		else if (fstat(o->logfd, &st) == 0)
			o->logsize = (uint64_t)st.st_size;
	}
	if (loop_add(&n->ad->loop, &o->ev, o->fd, EPOLLIN, on_output, o) == -1) {
		close(p[0]);
		close(p[1]);
		if (o->logfd != -1)
			close(o->logfd);
		free(o);
		return -1;
	}
	o->next = n->ad->outputs;
	if (o->next != NULL)
		o->next->prev = o;
	n->ad->outputs = o;
	o->sib_next = n->outs;
	if (o->sib_next != NULL)
		o->sib_next->sib_prev = o;
	n->outs = o;
	*child_end = p[1];
	n->out = o;
	return 0;
}

/* o no longer names its node (gone, or o closed). */
static void
unlink_node(struct output *o)
{
	struct node *n = o->node;

	if (n == NULL)
		return;
	if (o->sib_prev != NULL)
		o->sib_prev->sib_next = o->sib_next;
	else
		n->outs = o->sib_next;
	if (o->sib_next != NULL)
		o->sib_next->sib_prev = o->sib_prev;
	o->sib_next = o->sib_prev = NULL;
	if (n->out == o)
		n->out = NULL;
	o->node = NULL;
}

/* The prefix names the incarnation that wrote: set once forked. */
void
output_forked(struct node *n)
{
	if (n->out != NULL && n->out->prefix[0] == '\0')
		set_prefix(n->out);
}

static void
set_prefix(struct output *o)
{
	if (o->prefix[0] == '\0' && o->node != NULL)
		snprintf(o->prefix, sizeof(o->prefix), "%s[%d]", o->node->path,
		    (int)o->node->pid);
}

static void
rotate(struct output *o)
{
	const struct log_spec *ls;
	char from[4096], to[4096];
	unsigned k;

	if (o->node == NULL)
		return;
	ls = &o->node->cs->log;
	close(o->logfd);
	for (k = ls->keep; k > 0; k--) {
		if (k == 1)
			snprintf(from, sizeof(from), "%s", ls->path);
		else
			snprintf(from, sizeof(from), "%s.%u", ls->path, k - 1);
		snprintf(to, sizeof(to), "%s.%u", ls->path, k);
		(void)rename(from, to);
	}
	if (ls->keep == 0)
		(void)unlink(ls->path);
	o->logfd = open(ls->path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0640);
	o->logsize = 0;
}

/*
 * Keep the last OUT_TAIL bytes a node printed, for actorctl log.  The
 * buffer grows with what is printed, so a quiet child costs nothing.
 */
static void
tail_append(struct node *n, const char *s, size_t len)
{
	size_t need, cap, drop;
	char *t;

	if (len > OUT_TAIL) {
		s += len - OUT_TAIL;
		n->tail_total += len - OUT_TAIL;
		len = OUT_TAIL;
	}
	need = n->tail_len + len;
	if (need > n->tail_cap && n->tail_cap < OUT_TAIL) {
		cap = n->tail_cap ? n->tail_cap : 256;
		while (cap < need && cap < OUT_TAIL)
			cap *= 2;
		if (cap > OUT_TAIL)
			cap = OUT_TAIL;
		if ((t = realloc(n->tail, cap)) == NULL)
			return;
		n->tail = t;
		n->tail_cap = cap;
	}
	if (need > n->tail_cap) {
		drop = need - n->tail_cap;
		memmove(n->tail, n->tail + drop, n->tail_len - drop);
		n->tail_len -= drop;
	}
	memcpy(n->tail + n->tail_len, s, len);
	n->tail_len += len;
	n->tail_total += len;
}

static void
emit(struct output *o, const char *line, size_t len)
{
	char buf[OUT_BUF + SPEC_PATH_MAX + 64];
	int n;

	set_prefix(o);
	n = snprintf(buf, sizeof(buf), "%s: %.*s\n", o->prefix, (int)len, line);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	if (o->node != NULL) {
		tail_append(o->node, buf, (size_t)n);
		if (o->ad->on_output != NULL)
			o->ad->on_output(o->ad, o->node, o->ad->output_arg);
	}
	if (o->logfd == -1) {
		log_info("%s: %.*s", o->prefix, (int)len, line);
		return;
	}
	if (o->node != NULL && o->node->cs->log.max_size > 0 &&
	    o->logsize + (uint64_t)n > o->node->cs->log.max_size)
		rotate(o);
	if (o->logfd == -1 || write(o->logfd, buf, (size_t)n) != n)
		o->dropped += (uint64_t)n;
	else
		o->logsize += (uint64_t)n;
}

static void
flush_lines(struct output *o, bool all)
{
	char *nl;
	size_t off = 0;

	while ((nl = memchr(o->buf + off, '\n', o->len - off)) != NULL) {
		emit(o, o->buf + off, (size_t)(nl - (o->buf + off)));
		off = (size_t)(nl - o->buf) + 1;
	}
	if (off == 0 && o->len == sizeof(o->buf))
		all = true;	/* a line longer than the buffer: cut it */
	if (all && off < o->len) {
		emit(o, o->buf + off, o->len - off);
		off = o->len;
	}
	memmove(o->buf, o->buf + off, o->len - off);
	o->len -= off;
}

/*
 * One bounded read per readiness, so one child cannot hog the loop; one
 * only, since the descriptor blocks (output_open).
 */
static void
on_output(void *arg, uint32_t events)
{
	struct output *o = arg;
	ssize_t r;

	(void)events;
	r = read(o->fd, o->buf + o->len, sizeof(o->buf) - o->len);
	if (r > 0) {
		o->len += (size_t)r;
		flush_lines(o, false);
		return;
	}
	if (r == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	out_close(o);
}

static void
out_close(struct output *o)
{
	flush_lines(o, true);
	if (o->dropped > 0)
		log_warnx("%s: %llu bytes of output dropped", o->prefix,
		    (unsigned long long)o->dropped);
	loop_del(&o->ad->loop, &o->ev);
	close(o->fd);
	if (o->logfd != -1)
		close(o->logfd);
	unlink_node(o);
	if (o->prev != NULL)
		o->prev->next = o->next;
	else
		o->ad->outputs = o->next;
	if (o->next != NULL)
		o->next->prev = o->prev;
	/* Only its own handler or the exit path closes it: safe to free. */
	free(o);
}

/* The node is going away: its outputs finish on their own, unnamed. */
void
output_node_gone(struct node *n)
{
	struct output *o;

	while ((o = n->outs) != NULL) {
		set_prefix(o);
		flush_lines(o, true);
		if (o->logfd != -1) {
			close(o->logfd);
			o->logfd = -1;
		}
		unlink_node(o);
	}
	n->out = NULL;
}

/* At exit: read what is left, without waiting. */
void
output_flush_all(struct actord *ad)
{
	while (ad->outputs != NULL) {
		struct output *o = ad->outputs;
		ssize_t r;

		/* A grandchild may hold the pipe and be silent: no waiting. */
		(void)fcntl(o->fd, F_SETFL, O_NONBLOCK);
		while (o->len < sizeof(o->buf) &&
		    (r = read(o->fd, o->buf + o->len,
		    sizeof(o->buf) - o->len)) > 0) {
			o->len += (size_t)r;
			flush_lines(o, false);
		}
		out_close(o);
	}
}

/*
 * What a node printed, from byte offset cursor (UINT64_MAX: the last len
 * bytes kept).  A cursor older than what is kept starts at the oldest byte
 * kept.  Returns the bytes copied; *next is the cursor to ask for next.
 */
size_t
output_read(const struct node *n, uint64_t cursor, char *buf, size_t len,
    uint64_t *next)
{
	uint64_t first = n->tail_total - n->tail_len;
	size_t off, k;

	if (cursor == UINT64_MAX)
		cursor = n->tail_total > len ? n->tail_total - len : 0;
	if (cursor < first)
		cursor = first;
	if (cursor > n->tail_total)
		cursor = n->tail_total;
	off = (size_t)(cursor - first);
	k = n->tail_len - off;
	if (k > len)
		k = len;
	if (k > 0)
		memcpy(buf, n->tail + off, k);
	*next = cursor + k;
	return k;
}
