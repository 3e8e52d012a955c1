/*
 * log.c: where actord's own messages go: stderr by default (what systemd,
 * s6 and runit capture), or a file.  Each line carries a UTC timestamp and
 * a level.  It never changes errno and never allocates, so it is safe on
 * error paths, including after a failed malloc.  A log file is rotated by
 * size: path -> path.1 -> ... -> path.keep, the oldest dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/log.h"

static struct {
	const char	*ident;
	int		 verbose;
	int		 fd;		/* where lines go: 2 or a log file */
	char		 path[1024];	/* the log file, for rotation */
	uint64_t	 size;		/* bytes in it */
	uint64_t	 max_size;	/* 0: never rotate */
	unsigned	 keep;		/* rotated files kept */
} logstate = { "actord", 0, STDERR_FILENO, "", 0, 0, 0 };

static void	rotate(void);

void
log_init(const char *ident, int verbose)
{
	logstate.ident = ident;
	logstate.verbose = verbose;
	logstate.fd = STDERR_FILENO;
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
	if (logstate.fd != STDERR_FILENO)
		close(logstate.fd);
	logstate.fd = fd;
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

void
vlog(int pri, const char *fmt, va_list ap)
{
	char		 line[2048], stamp[32];
	struct timespec	 ts;
	struct tm	 tm;
	int		 saved_errno = errno, n, m;

	if (pri == LOG_DEBUG && logstate.verbose < 2)
		return;
	if (pri == LOG_INFO && logstate.verbose < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof(line), "%s.%03ldZ %s[%d] %s: ", stamp,
	    ts.tv_nsec / 1000000, logstate.ident, (int)getpid(),
	    level_name(pri));
	if (n < 0)
		n = 0;
	m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (logstate.fd != STDERR_FILENO && logstate.max_size > 0 &&
	    logstate.size + (uint64_t)n > logstate.max_size)
		rotate();
	if (write(logstate.fd, line, n) == n)
		logstate.size += (uint64_t)n;
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
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}
