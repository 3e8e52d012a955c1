/*
 * log.h: actord's logging API, in the style of OpenBSD's daemons.
 *
 * Owned by log.c.  No function here changes errno, so a caller can log and
 * then still test or report errno.  Messages start with the function or the
 * child's path.  fatal/fatalx log and exit(1).
 */
#ifndef ACTORD_LOG_H
#define ACTORD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define LOG_DRAIN_MS	1000	/* what exit waits for a stalled output */

void	log_init(const char *ident, int verbose);
void	log_setverbose(int verbose);
int	log_getverbose(void);
int	log_open_file(const char *path);	/* -1 and errno on failure */
void	log_set_rotation(unsigned long long max_size, unsigned keep);
/*
 * A stalled output: fn(arg, fd, true) when lines start to wait for fd to
 * take them (watch it for writability and call log_flush), fn(arg, fd,
 * false) when none waits any more.  fn NULL: arg stops being told, if it
 * still is.
 */
void	log_on_backlog(void (*fn)(void *, int fd, bool pending), void *arg);
void	log_flush(void);
/* The UTC time of t, as gmtime_r, without reading the time zone. */
void	log_utc(time_t, struct tm *);
void	log_drain(int ms);		/* before exit: bounded wait */
void	log_forked(void);		/* in a child that runs on */
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	vlog(int pri, const char *, va_list) __attribute__((format(printf, 2, 0)));
void	fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* ACTORD_LOG_H */
