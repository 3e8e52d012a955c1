/*
 * spec.c: the memory and the defaults of a supervision tree spec (spec.h):
 * constructors that fill in every default of actord.conf(5), a deep copy,
 * a deep free, and the equality that reload uses to tell a changed child
 * from an unchanged one.
 *
 * It never parses text (config.c does) and never looks at a running
 * process: a spec says what to run, not what is running.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/config.h"
#include "supervisor/ctlproto.h"
#include "supervisor/spec.h"

static void	 sup_clear(struct sup_spec *);
static int	 sup_copy(struct sup_spec *, const struct sup_spec *);
static bool	 sup_equal(const struct sup_spec *, const struct sup_spec *);
static int	 strdup_opt(char **, const char *);
static bool	 streq_opt(const char *, const char *);
static bool	 argv_equal(char *const *, char *const *);
static bool	 env_has(const struct child_spec *, const struct env_var *);
static bool	 env_equal(const struct child_spec *,
		    const struct child_spec *);
static bool	 limits_has(const struct child_spec *,
		    const struct limit_spec *);
static bool	 limits_equal(const struct child_spec *,
		    const struct child_spec *);
static bool	 status_has(const struct child_spec *, int);
static bool	 success_equal(const struct child_spec *,
		    const struct child_spec *);
static bool	 mailbox_equal(const struct mailbox_spec *,
		    const struct mailbox_spec *);
static bool	 log_equal(const struct log_spec *, const struct log_spec *);
static void	 log_init_spec(struct log_spec *);
static void	 peers_free(struct peer_spec *, size_t);
static void	 names_free(char **, size_t);

const char *
spec_default_runtime_dir(void)
{
	static char	 buf[SPEC_RUNTIME_DIR_MAX + 1];

	/* The rule is the control protocol's: clients find the socket. */
	(void)ctl_default_runtime_dir(buf, sizeof(buf));
	return buf;
}

struct actord_spec *
spec_new(void)
{
	struct actord_spec *spec;

	if ((spec = calloc(1, sizeof(*spec))) == NULL)
		return NULL;
	if ((spec->runtime_dir = strdup(spec_default_runtime_dir())) == NULL) {
		free(spec);
		return NULL;
	}
	spec->shutdown_timeout = DEFAULT_SHUTDOWN_TIMEOUT;
	spec->spare_mailboxes = DEFAULT_SPARE_MAILBOXES;
	spec->owed_max = DEFAULT_OWED_MAX;
	log_init_spec(&spec->log);
	spec_sup_init(&spec->root);
	return spec;
}

void
spec_free(struct actord_spec *spec)
{
	if (spec == NULL)
		return;
	free(spec->file);
	free(spec->runtime_dir);
	free(spec->pidfile);
	free(spec->control_group);
	free(spec->cgroup);
	free(spec->metrics_listen);
	free(spec->log.path);
	node_spec_free(spec->node);
	sup_clear(&spec->root);
	free(spec);
}

void
spec_sup_init(struct sup_spec *sup)
{
	memset(sup, 0, sizeof(*sup));
	sup->strategy = DEFAULT_STRATEGY;
	sup->intensity = DEFAULT_INTENSITY;
	sup->period = DEFAULT_PERIOD;
	sup->backoff_min = DEFAULT_BACKOFF_MIN;
	sup->backoff_max = DEFAULT_BACKOFF_MAX;
	sup->min_uptime = DEFAULT_MIN_UPTIME;
	sup->start = START_ORDERED;
}

/* A mailbox with every default of actord.conf(5). */
void
spec_mailbox_init(struct mailbox_spec *m)
{
	memset(m, 0, sizeof(*m));
	m->capacity = DEFAULT_MAILBOX_CAPACITY;
	m->cell = DEFAULT_MAILBOX_CELL;
	m->overflow = DEFAULT_MAILBOX_OVERFLOW;
	m->block_timeout = DEFAULT_BLOCK_TIMEOUT;
	m->max_attempts = DEFAULT_MAX_ATTEMPTS;
	m->on_down = DEFAULT_ON_DOWN;
	m->while_down = DEFAULT_WHILE_DOWN;
	m->state = DEFAULT_MAILBOX_STATE;
	m->watchers = DEFAULT_WATCHERS;
	m->asks = DEFAULT_ASKS;
	m->max_message = DEFAULT_MAX_MESSAGE;
}

void
spec_child_init(struct child_spec *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = CHILD_WORKER;
	c->restart = DEFAULT_RESTART;
	c->shutdown = DEFAULT_SHUTDOWN;
	c->start_timeout = DEFAULT_START_TIMEOUT;
	c->ready = DEFAULT_READY;
	c->umask = -1;
	/* Filled in even without a mailbox key, so ready = actor finds them. */
	spec_mailbox_init(&c->mailbox);
	log_init_spec(&c->log);
}

/* Frees what c points to and leaves it as spec_child_init does. */
void
spec_child_clear(struct child_spec *c)
{
	size_t i;

	free(c->name);
	if (c->argv != NULL) {
		for (i = 0; c->argv[i] != NULL; i++)
			free(c->argv[i]);
		free(c->argv);
	}
	for (i = 0; i < c->nenv; i++) {
		free(c->env[i].name);
		free(c->env[i].value);
	}
	free(c->env);
	free(c->cwd);
	free(c->user);
	free(c->group);
	free(c->limits);
	free(c->success_exit);
	free(c->log.path);
	if (c->nodes != NULL) {
		for (i = 0; i < c->nnodes; i++)
			free(c->nodes[i]);
		free(c->nodes);
	}
	if (c->sup != NULL) {
		sup_clear(c->sup);
		free(c->sup);
	}
	spec_child_init(c);
}

/*
 * A deep copy into dst, which is overwritten without being freed first.
 * Function children share fn_arg with src.  On failure dst is left cleared
 * and -1 is returned with errno set.
 */
int
spec_child_copy(struct child_spec *dst, const struct child_spec *src)
{
	size_t n, i;

	*dst = *src;
	dst->name = NULL;
	dst->argv = NULL;
	dst->env = NULL;
	dst->nenv = 0;
	dst->cwd = dst->user = dst->group = NULL;
	dst->limits = NULL;
	dst->nlimits = 0;
	dst->success_exit = NULL;
	dst->nsuccess_exit = 0;
	dst->log.path = NULL;
	dst->sup = NULL;
	dst->nodes = NULL;
	dst->nnodes = 0;

	if (strdup_opt(&dst->name, src->name) == -1 ||
	    strdup_opt(&dst->cwd, src->cwd) == -1 ||
	    strdup_opt(&dst->user, src->user) == -1 ||
	    strdup_opt(&dst->group, src->group) == -1 ||
	    strdup_opt(&dst->log.path, src->log.path) == -1)
		goto fail;
	if (src->argv != NULL) {
		for (n = 0; src->argv[n] != NULL; n++)
			;
		if ((dst->argv = calloc(n + 1, sizeof(*dst->argv))) == NULL)
			goto fail;
		for (i = 0; i < n; i++)
			if ((dst->argv[i] = strdup(src->argv[i])) == NULL)
				goto fail;
	}
	if (src->nenv > 0) {
		if ((dst->env = calloc(src->nenv, sizeof(*dst->env))) == NULL)
			goto fail;
		for (i = 0; i < src->nenv; i++) {
			dst->nenv++;
			if (strdup_opt(&dst->env[i].name,
			    src->env[i].name) == -1 ||
			    strdup_opt(&dst->env[i].value,
			    src->env[i].value) == -1)
				goto fail;
		}
	}
	if (src->nlimits > 0) {
		dst->limits = calloc(src->nlimits, sizeof(*dst->limits));
		if (dst->limits == NULL)
			goto fail;
		memcpy(dst->limits, src->limits,
		    src->nlimits * sizeof(*dst->limits));
		dst->nlimits = src->nlimits;
	}
	if (src->nsuccess_exit > 0) {
		dst->success_exit = calloc(src->nsuccess_exit,
		    sizeof(*dst->success_exit));
		if (dst->success_exit == NULL)
			goto fail;
		memcpy(dst->success_exit, src->success_exit,
		    src->nsuccess_exit * sizeof(*dst->success_exit));
		dst->nsuccess_exit = src->nsuccess_exit;
	}
	if (src->nnodes > 0) {
		if ((dst->nodes = calloc(src->nnodes + 1,
		    sizeof(*dst->nodes))) == NULL)
			goto fail;
		for (i = 0; i < src->nnodes; i++) {
			if ((dst->nodes[i] = strdup(src->nodes[i])) == NULL)
				goto fail;
			dst->nnodes++;
		}
	}
	if (src->sup != NULL) {
		if ((dst->sup = calloc(1, sizeof(*dst->sup))) == NULL)
			goto fail;
		if (sup_copy(dst->sup, src->sup) == -1)
			goto fail;
	}
	return 0;

fail:
	spec_child_clear(dst);
	errno = ENOMEM;
	return -1;
}

/*
 * True when a and b would run the same thing the same way: everything
 * that a reload must restart a child for, and nothing else (not line).
 * Environment, limits and success_exit compare as sets; argv in order.
 * A supervisor compares its settings and its children, recursively.
 */
bool
spec_child_equal(const struct child_spec *a, const struct child_spec *b)
{
	if (!streq_opt(a->name, b->name) || a->kind != b->kind)
		return false;
	if (!argv_equal(a->argv, b->argv) || a->fn != b->fn ||
	    a->fn_arg != b->fn_arg)
		return false;
	if (a->restart != b->restart || a->shutdown != b->shutdown ||
	    a->start_timeout != b->start_timeout || a->ready != b->ready)
		return false;
	if (!env_equal(a, b) || !streq_opt(a->cwd, b->cwd) ||
	    !streq_opt(a->user, b->user) || !streq_opt(a->group, b->group) ||
	    a->umask != b->umask)
		return false;
	if (!limits_equal(a, b) || !success_equal(a, b))
		return false;
	if (a->has_mailbox != b->has_mailbox ||
	    (a->has_mailbox && !mailbox_equal(&a->mailbox, &b->mailbox)))
		return false;
	if (!log_equal(&a->log, &b->log) || a->instances != b->instances)
		return false;
	if (!argv_equal(a->nodes, b->nodes))
		return false;
	if ((a->sup == NULL) != (b->sup == NULL))
		return false;
	return a->sup == NULL || sup_equal(a->sup, b->sup);
}

static void
sup_clear(struct sup_spec *sup)
{
	size_t i;

	for (i = 0; i < sup->nchildren; i++)
		spec_child_clear(&sup->children[i]);
	free(sup->children);
	sup->children = NULL;
	sup->nchildren = 0;
}

/* dst is overwritten; on failure it holds what was copied so far. */
static int
sup_copy(struct sup_spec *dst, const struct sup_spec *src)
{
	size_t i;

	*dst = *src;
	dst->children = NULL;
	dst->nchildren = 0;
	if (src->nchildren == 0)
		return 0;
	dst->children = calloc(src->nchildren, sizeof(*dst->children));
	if (dst->children == NULL)
		return -1;
	for (i = 0; i < src->nchildren; i++) {
		if (spec_child_copy(&dst->children[i], &src->children[i]) == -1)
			return -1;
		dst->nchildren++;
	}
	return 0;
}

static bool
sup_equal(const struct sup_spec *a, const struct sup_spec *b)
{
	size_t i;

	if (a->strategy != b->strategy || a->intensity != b->intensity ||
	    a->period != b->period || a->backoff_min != b->backoff_min ||
	    a->backoff_max != b->backoff_max ||
	    a->min_uptime != b->min_uptime || a->start != b->start ||
	    a->nchildren != b->nchildren)
		return false;
	for (i = 0; i < a->nchildren; i++)
		if (!spec_child_equal(&a->children[i], &b->children[i]))
			return false;
	return true;
}

static int
strdup_opt(char **dst, const char *src)
{
	*dst = NULL;
	if (src != NULL && (*dst = strdup(src)) == NULL)
		return -1;
	return 0;
}

static bool
streq_opt(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool
argv_equal(char *const *a, char *const *b)
{
	size_t i;

	if (a == NULL || b == NULL)
		return a == b;
	for (i = 0; a[i] != NULL && b[i] != NULL; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return a[i] == NULL && b[i] == NULL;
}

static bool
env_has(const struct child_spec *c, const struct env_var *v)
{
	size_t i;

	for (i = 0; i < c->nenv; i++)
		if (streq_opt(c->env[i].name, v->name) &&
		    streq_opt(c->env[i].value, v->value))
			return true;
	return false;
}

static bool
env_equal(const struct child_spec *a, const struct child_spec *b)
{
	size_t i;

	if (a->nenv != b->nenv)
		return false;
	for (i = 0; i < a->nenv; i++)
		if (!env_has(b, &a->env[i]))
			return false;
	for (i = 0; i < b->nenv; i++)
		if (!env_has(a, &b->env[i]))
			return false;
	return true;
}

static bool
limits_has(const struct child_spec *c, const struct limit_spec *l)
{
	size_t i;

	for (i = 0; i < c->nlimits; i++)
		if (c->limits[i].resource == l->resource &&
		    c->limits[i].value == l->value)
			return true;
	return false;
}

static bool
limits_equal(const struct child_spec *a, const struct child_spec *b)
{
	size_t i;

	if (a->nlimits != b->nlimits)
		return false;
	for (i = 0; i < a->nlimits; i++)
		if (!limits_has(b, &a->limits[i]))
			return false;
	for (i = 0; i < b->nlimits; i++)
		if (!limits_has(a, &b->limits[i]))
			return false;
	return true;
}

static bool
status_has(const struct child_spec *c, int status)
{
	size_t i;

	for (i = 0; i < c->nsuccess_exit; i++)
		if (c->success_exit[i] == status)
			return true;
	return false;
}

static bool
success_equal(const struct child_spec *a, const struct child_spec *b)
{
	size_t i;

	for (i = 0; i < a->nsuccess_exit; i++)
		if (!status_has(b, a->success_exit[i]))
			return false;
	for (i = 0; i < b->nsuccess_exit; i++)
		if (!status_has(a, b->success_exit[i]))
			return false;
	return true;
}

static bool
mailbox_equal(const struct mailbox_spec *a, const struct mailbox_spec *b)
{
	return a->capacity == b->capacity && a->cell == b->cell &&
	    a->overflow == b->overflow &&
	    a->block_timeout == b->block_timeout &&
	    a->max_attempts == b->max_attempts && a->on_down == b->on_down &&
	    a->while_down == b->while_down && a->state == b->state &&
	    a->watchers == b->watchers && a->asks == b->asks &&
	    a->max_message == b->max_message;
}

static bool
log_equal(const struct log_spec *a, const struct log_spec *b)
{
	return streq_opt(a->path, b->path) && a->max_size == b->max_size &&
	    a->keep == b->keep;
}

static void
log_init_spec(struct log_spec *l)
{
	l->path = NULL;
	l->max_size = DEFAULT_LOG_MAX_SIZE;
	l->keep = DEFAULT_LOG_KEEP;
}

/* --- the node block ------------------------------------------------------ */

struct node_spec *
node_spec_new(void)
{
	struct node_spec *ns;

	if ((ns = calloc(1, sizeof(*ns))) == NULL)
		return NULL;
	ns->heartbeat = DEFAULT_HEARTBEAT;
	ns->heartbeat_timeout = DEFAULT_HEARTBEAT_TIMEOUT;
	ns->send_queue = DEFAULT_SEND_QUEUE;
	ns->max_frame = DEFAULT_MAX_FRAME;
	ns->bad_frames = DEFAULT_BAD_FRAMES;
	spec_mailbox_init(&ns->mailbox);
	ns->mailbox.capacity = DEFAULT_GATEWAY_CAPACITY;
	ns->mailbox.cell = DEFAULT_GATEWAY_CELL;
	ns->mailbox.state = DEFAULT_GATEWAY_STATE;
	return ns;
}

static void
peers_free(struct peer_spec *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(p[i].name);
		free(p[i].endpoint);
		free(p[i].public_key);
	}
	free(p);
}

static void
names_free(char **names, size_t n)
{
	size_t i;

	if (names == NULL)
		return;
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void
node_spec_free(struct node_spec *ns)
{
	size_t i;

	if (ns == NULL)
		return;
	free(ns->name);
	free(ns->listen);
	free(ns->secret_key_file);
	peers_free(ns->peers, ns->npeers);
	peers_free(ns->clients, ns->nclients);
	free(ns->gateway);
	free(ns->user);
	free(ns->group);
	for (i = 0; i < ns->ngroups; i++) {
		free(ns->groups[i].path);
		names_free(ns->groups[i].nodes, ns->groups[i].nnodes);
	}
	free(ns->groups);
	free(ns->shards_env);
	free(ns);
}
