/*
 * log.c: where actord's own messages go: stderr by default (what systemd,
 * s6 and runit capture), or a file.  Each line carries a UTC timestamp and
 * a level.  It never changes errno and never allocates, so it is safe on
 * error paths, including after a failed malloc.  A log file is rotated by
 * size: path -> path.1 -> ... -> path.keep, the oldest dropped.
 *
 * It never blocks actord on its output.  stderr is often a pipe or a
 * socket to a log collector (the journal, s6-log, a terminal under ^S)
 * that can stop reading, and a supervisor stuck in write(2) restarts
 * nothing.  So a pipe, terminal or socket is written without blocking,
 * through a descriptor of its own (the open file description of fd 2 is
 * shared with whoever gave it, and must keep its flags): what does not go
 * out waits in a bounded queue, flushed when the event loop says the
 * output is writable (log_on_backlog); lines that do not fit are dropped
 * and counted, and a line saying how many follows them out.  A regular
 * file is written directly: it does not stop reading.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/log.h"

#define LOG_QUEUE	65536	/* bytes that wait for a stalled output */

enum log_out {
	OUT_DIRECT,		/* a log file, or what could not be reopened */
	OUT_NONBLOCK,		/* our own non-blocking open of fd 2 */
	OUT_SOCKET,		/* fd 2 is a socket: send(MSG_DONTWAIT) */
	OUT_BROKEN		/* the reader went away: lines are discarded */
};

static struct {
	const char	*ident;
	int		 verbose;
	int		 fd;		/* where lines go */
	enum log_out	 out;
	char		 path[1024];	/* the log file, for rotation */
	uint64_t	 size;		/* bytes in it */
	uint64_t	 max_size;	/* 0: never rotate */
	unsigned	 keep;		/* rotated files kept */
	/* What waits for a stalled output: q[qoff, qoff + qlen). */
	char		 q[LOG_QUEUE];
	size_t		 qoff, qlen;
	uint64_t	 dropped;	/* lines dropped since the queue filled */
	bool		 watching;	/* told the loop to watch fd */
	bool		 drain_at_exit;	/* atexit(drain_at_exit) is set */
	void		(*backlog)(void *, int, bool);
	void		*backlog_arg;
} logstate = { .ident = "actord", .fd = STDERR_FILENO };

static void	rotate(void);
static void	stderr_nonblocking(void);
static void	put(const char *, size_t);
static ssize_t	out_write(const char *, size_t);
static void	enqueue(const char *, size_t);
static bool	flush_queue(void);
static void	set_watching(bool);
static void	drain_at_exit(void);

void
log_init(const char *ident, int verbose)
{
	logstate.ident = ident;
	logstate.verbose = verbose;
	if (logstate.out == OUT_NONBLOCK && logstate.fd != STDERR_FILENO)
		close(logstate.fd);	/* initialized again */
	logstate.fd = STDERR_FILENO;
	logstate.out = OUT_DIRECT;
	logstate.qoff = logstate.qlen = 0;
	logstate.dropped = 0;
	stderr_nonblocking();
	/* Whatever way actord exits, what waits gets its chance to go out. */
	if (!logstate.drain_at_exit && atexit(drain_at_exit) == 0)
		logstate.drain_at_exit = true;
}

static void
drain_at_exit(void)
{
	log_drain(LOG_DRAIN_MS);
}

/*
 * Write stderr without blocking, if it is something that can stop
 * reading.  A pipe or a terminal is opened again through /proc, which
 * gives a file description of our own to make non-blocking; a socket
 * cannot be opened so, but send(2) takes MSG_DONTWAIT per call.  Where
 * neither works, writes stay blocking, as they were.
 */
static void
stderr_nonblocking(void)
{
	struct stat st;
	int fd;

	if (fstat(STDERR_FILENO, &st) == -1 || S_ISREG(st.st_mode))
		return;
	if (S_ISSOCK(st.st_mode)) {
		logstate.out = OUT_SOCKET;
		return;
	}
	if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
		return;
	fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC);
	if (fd == -1)
		return;
	logstate.fd = fd;
	logstate.out = OUT_NONBLOCK;
}

void
log_on_backlog(void (*fn)(void *, int fd, bool pending), void *arg)
{
	if (fn == NULL && arg != logstate.backlog_arg)
		return;		/* somebody else's, registered since */
	logstate.backlog = fn;
	logstate.backlog_arg = arg;
	logstate.watching = false;
	if (fn != NULL && logstate.qlen > 0)
		set_watching(true);
}

/* Tell the loop to watch the output for room, or to stop. */
static void
set_watching(bool on)
{
	if (logstate.watching == on || logstate.backlog == NULL)
		return;
	logstate.watching = on;
	logstate.backlog(logstate.backlog_arg, logstate.fd, on);
}

/*
 * In a forked child that runs on (a function child): actord's queue is not
 * its to write, and its stderr is its own output pipe.
 */
void
log_forked(void)
{
	logstate.qoff = logstate.qlen = 0;
	logstate.dropped = 0;
	logstate.backlog = NULL;
	logstate.watching = false;
	if (logstate.out != OUT_DIRECT) {
		if (logstate.fd != STDERR_FILENO)
			close(logstate.fd);
		logstate.fd = STDERR_FILENO;
		logstate.out = OUT_DIRECT;
	}
}

void
log_setverbose(int verbose)
{
	logstate.verbose = verbose;
}

int
log_getverbose(void)
{
	return logstate.verbose;
}

int
log_open_file(const char *path)
{
	int fd;

	struct stat st;

	if (strlen(path) >= sizeof(logstate.path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd == -1)
		return -1;
	(void)flush_queue();
	set_watching(false);
	logstate.qoff = logstate.qlen = 0;
	if (logstate.fd != STDERR_FILENO)
		close(logstate.fd);
	logstate.fd = fd;
	logstate.out = OUT_DIRECT;
	snprintf(logstate.path, sizeof(logstate.path), "%s", path);
	logstate.size = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	return 0;
}

/* Rotate the log file once it would pass max_size bytes (0: never). */
void
log_set_rotation(unsigned long long max_size, unsigned keep)
{
	logstate.max_size = max_size;
	logstate.keep = keep;
}

static void
rotate(void)
{
	char from[1040], to[1040];
	unsigned k;
	int fd;

	for (k = logstate.keep; k > 0; k--) {
		if (k == 1)
			snprintf(from, sizeof(from), "%s", logstate.path);
		else
			snprintf(from, sizeof(from), "%s.%u", logstate.path, k - 1);
		snprintf(to, sizeof(to), "%s.%u", logstate.path, k);
		(void)rename(from, to);
	}
	fd = open(logstate.path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0640);
	if (fd == -1)
		return;		/* keep writing to the old file */
	close(logstate.fd);
	logstate.fd = fd;
	logstate.size = 0;
}

static const char *
level_name(int pri)
{
	switch (pri) {
	case LOG_CRIT:		return "fatal";
	case LOG_ERR:		return "error";
	case LOG_WARNING:	return "warning";
	case LOG_INFO:		return "info";
	default:		return "debug";
	}
}

/*
 * The UTC date and time of t, by hand (the days to a civil date, as in
 * Howard Hinnant's chrono algorithms): gmtime_r(3) and strftime(3) read
 * the time zone (/etc/localtime) at their first call, a dozen system
 * calls on actord's way to starting its first child.
 */
void
log_utc(time_t t, struct tm *tm)
{
	long long days = t / 86400, secs = t % 86400, era, doe, yoe, doy, mp;

	if (secs < 0) {
		secs += 86400;
		days--;
	}
	days += 719468;
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = days - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	memset(tm, 0, sizeof(*tm));
	tm->tm_mday = (int)(doy - (153 * mp + 2) / 5 + 1);
	tm->tm_mon = (int)(mp < 10 ? mp + 2 : mp - 10);
	tm->tm_year = (int)(yoe + era * 400 + (tm->tm_mon <= 1)) - 1900;
	tm->tm_hour = (int)(secs / 3600);
	tm->tm_min = (int)(secs / 60 % 60);
	tm->tm_sec = (int)(secs % 60);
}

void
vlog(int pri, const char *fmt, va_list ap)
{
	char		 line[2048];
	struct timespec	 ts;
	struct tm	 tm;
	int		 saved_errno = errno, n, m;

	if (pri == LOG_DEBUG && logstate.verbose < 2)
		return;
	if (pri == LOG_INFO && logstate.verbose < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	log_utc(ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line),
	    "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s: ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, logstate.ident,
	    (int)getpid(), level_name(pri));
	if (n < 0)
		n = 0;
	m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	put(line, (size_t)n);
	errno = saved_errno;
}

/* One whole line to the output, by its kind. */
static void
put(const char *s, size_t n)
{
	ssize_t w;

	switch (logstate.out) {
	case OUT_BROKEN:
		return;
	case OUT_DIRECT:
		if (logstate.path[0] != '\0' && logstate.max_size > 0 &&
		    logstate.size + n > logstate.max_size)
			rotate();
		if (write(logstate.fd, s, n) == (ssize_t)n)
			logstate.size += n;
		return;
	default:
		break;
	}
	/* Behind what waits, in order; or at once if nothing does. */
	if (logstate.qlen > 0 && !flush_queue()) {
		enqueue(s, n);
		return;
	}
	if (logstate.out == OUT_BROKEN)
		return;
	w = out_write(s, n);
	if (w == (ssize_t)n || logstate.out == OUT_BROKEN)
		return;
	if (w < 0)
		w = 0;
	enqueue(s + w, n - (size_t)w);	/* the rest of a cut line */
}

/* A non-blocking write; -1 with EAGAIN when full.  Breaks on EPIPE. */
static ssize_t
out_write(const char *s, size_t n)
{
	ssize_t w;

	do {
		if (logstate.out == OUT_SOCKET)
			w = send(logstate.fd, s, n, MSG_DONTWAIT |
			    MSG_NOSIGNAL);
		else
			w = write(logstate.fd, s, n);
	} while (w == -1 && errno == EINTR);
	if (w == -1 && errno != EAGAIN && errno != EWOULDBLOCK) {
		/* Nobody reads any more: stop queueing for nobody. */
		logstate.out = OUT_BROKEN;
		logstate.qoff = logstate.qlen = 0;
		set_watching(false);
	}
	return w;
}

/* Queue bytes that must go out after what waits; drop the line if full. */
static void
enqueue(const char *s, size_t n)
{
	if (logstate.qoff + logstate.qlen + n > sizeof(logstate.q)) {
		memmove(logstate.q, logstate.q + logstate.qoff, logstate.qlen);
		logstate.qoff = 0;
	}
	if (logstate.qlen + n > sizeof(logstate.q)) {
		logstate.dropped++;
		return;
	}
	memcpy(logstate.q + logstate.qoff + logstate.qlen, s, n);
	logstate.qlen += n;
	set_watching(true);
}

/*
 * Write what waits, as far as the output takes it: true once nothing
 * waits.  Lines dropped meanwhile are then told, behind the lines that
 * went out before them.
 */
static bool
flush_queue(void)
{
	uint64_t dropped;
	ssize_t w;

	while (logstate.qlen > 0) {
		w = out_write(logstate.q + logstate.qoff, logstate.qlen);
		if (w <= 0)
			return logstate.out == OUT_BROKEN;
		logstate.qoff += (size_t)w;
		logstate.qlen -= (size_t)w;
	}
	logstate.qoff = 0;
	set_watching(false);
	if ((dropped = logstate.dropped) > 0) {
		logstate.dropped = 0;
		log_warnx("log: %llu lines dropped: the output took no more",
		    (unsigned long long)dropped);
	}
	return logstate.qlen == 0;
}

void
log_flush(void)
{
	int saved_errno = errno;

	(void)flush_queue();
	errno = saved_errno;
}

/* Before exit: wait up to ms for the output to take what waits. */
void
log_drain(int ms)
{
	struct pollfd pfd;
	uint64_t end;
	struct timespec ts;
	int saved_errno = errno, left;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 +
	    (uint64_t)ms;
	while (logstate.qlen > 0 && logstate.out != OUT_BROKEN) {
		if (flush_queue())
			break;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		left = (int)((int64_t)end - (int64_t)((uint64_t)ts.tv_sec *
		    1000 + (uint64_t)ts.tv_nsec / 1000000));
		if (left <= 0)
			break;
		pfd.fd = logstate.fd;
		pfd.events = POLLOUT;
		(void)poll(&pfd, 1, left);
	}
	errno = saved_errno;
}

static void
log_line(int pri, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(pri, fmt, ap);
	va_end(ap);
}

/* Like vlog, with ": strerror(errno)" appended when errno is set. */
static void
vlog_errno(int pri, const char *fmt, va_list ap)
{
	char	 buf[1536];
	int	 saved_errno = errno;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (saved_errno == 0)
		log_line(pri, "%s", buf);
	else
		log_line(pri, "%s: %s", buf, strerror(saved_errno));
	errno = saved_errno;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_errno(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_errno(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);		/* drain_at_exit drains the log */
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);		/* drain_at_exit drains the log */
}
