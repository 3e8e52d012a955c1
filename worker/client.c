/*
 * client.c: programs outside the tree (actor.h, "client.c"): one API,
 * actor_connect, actor_client_tell, actor_client_ask, actor_client_close,
 * whatever carries the messages.  The address names the transport:
 *
 *	NULL, "", "unix:PATH", "/PATH", "./PATH"	client_local.c
 *	"tcp://HOST:PORT?..."				client_zmq.c
 *
 * A transport is a table of functions (actor_impl.h) in transports[].
 *
 * Owns: struct actor_client and the choice of its transport.  Must never
 * do I/O itself (the transports do), nor hand a caller an answer that
 * does not end with a NUL (actor_error_text relies on it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/actor_impl.h"

static const struct client_transport *const transports[] = {
	&client_local,
	&client_zmq,
};
#define NTRANSPORTS	(sizeof(transports) / sizeof(transports[0]))

static const struct client_transport *by_scheme(const char *, size_t);
static int	 check_args(struct actor_client *, const char *, const void *,
		    size_t);

static const struct client_transport *
by_scheme(const char *scheme, size_t len)
{
	size_t i;

	for (i = 0; i < NTRANSPORTS; i++)
		if (strlen(transports[i]->scheme) == len &&
		    strncmp(transports[i]->scheme, scheme, len) == 0)
			return transports[i];
	return NULL;
}

int
actor_connect(struct actor_client **out, const char *address, char *err,
    size_t errlen)
{
	const struct client_transport *t;
	struct actor_client *c;
	const char *where = address, *sep;
	int rc;

	*out = NULL;
	if (address == NULL || *address == '\0' || *address == '/' ||
	    *address == '.')
		t = &client_local;
	else if (strncmp(address, "unix:", 5) == 0) {
		t = &client_local;
		where = address + 5;
	} else if ((sep = strstr(address, "://")) != NULL) {
		if ((t = by_scheme(address, (size_t)(sep - address))) ==
		    NULL) {
			snprintf(err, errlen, "%s: no transport for %.*s:// in "
			    "this libactor", address, (int)(sep - address),
			    address);
			return ACTOR_EINVAL;
		}
	} else {
		snprintf(err, errlen, "%s: not an address (a control socket's "
		    "path, unix:PATH or SCHEME://...)", address);
		return ACTOR_EINVAL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "calloc: %s", strerror(errno));
		return ACTOR_ESYS;
	}
	c->t = t;
	if ((rc = t->open(c, where, err, errlen)) < 0) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

static int
check_args(struct actor_client *c, const char *path, const void *data,
    size_t len)
{
	if (path == NULL || (data == NULL && len > 0)) {
		snprintf(c->err, sizeof(c->err), "invalid argument");
		return ACTOR_EINVAL;
	}
	c->err[0] = '\0';
	free(c->reply);
	c->reply = NULL;
	return 0;
}

int
actor_client_tell(struct actor_client *c, const char *path, uint32_t tag,
    const void *data, size_t len)
{
	int rc;

	if ((rc = check_args(c, path, data, len)) < 0)
		return rc;
	return c->t->tell(c, path, tag, data, len);
}

int
actor_client_ask(struct actor_client *c, const char *path, uint32_t tag,
    const void *data, size_t len, int64_t timeout_ns,
    struct actor_msg *reply)
{
	struct actor_msg scratch;
	int rc;

	if ((rc = check_args(c, path, data, len)) < 0)
		return rc;
	if (timeout_ns < 0) {
		snprintf(c->err, sizeof(c->err), "negative timeout");
		return ACTOR_EINVAL;
	}
	if (reply == NULL)
		reply = &scratch;
	memset(reply, 0, sizeof(*reply));
	return c->t->ask(c, path, tag, data, len, timeout_ns, reply);
}

const char *
actor_client_error(const struct actor_client *c)
{
	return c->err;
}

void
actor_client_close(struct actor_client *c)
{
	if (c == NULL)
		return;
	c->t->close(c);
	free(c->reply);
	free(c);
}
