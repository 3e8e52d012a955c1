/*
 * metrics.h: the Prometheus text exposition of actord's statistics, and
 * the optional HTTP listener that serves it at GET /metrics
 * (metrics_listen in actord.conf).
 *
 * Owned by metrics.c.  The listener follows the same pattern as the
 * control socket (control.h): metrics_fd() is an inner epoll descriptor
 * for the main loop, metrics_dispatch() is called when it is readable,
 * and the numbers come from the backend's stats function, so the HTTP
 * page and `actorctl stats --prometheus` print the very same text.
 */
#ifndef ACTORD_METRICS_H
#define ACTORD_METRICS_H

#include <stddef.h>

#include "supervisor/control.h"
#include "supervisor/ctlproto.h"

#define METRICS_MAX_CLIENTS	16
#define METRICS_MAX_REQUEST	4096	/* bytes of request line and headers */
#define METRICS_TIMEOUT		5000	/* ms for a whole request */
#define METRICS_PAUSE		100	/* ms the listener rests on EMFILE */

struct metrics_http;

/* metrics.c */
int	 metrics_write(struct ctl_buf *, const struct ctl_response *);
struct metrics_http *metrics_open(const char *listen,
	    const struct ctl_backend *, void *ctx,
	    const struct ctl_counters *, char *err, size_t errlen);
int	 metrics_fd(const struct metrics_http *);
int	 metrics_port(const struct metrics_http *);	/* bound TCP port */
void	 metrics_dispatch(struct metrics_http *);
void	 metrics_close(struct metrics_http *);

#endif /* ACTORD_METRICS_H */
