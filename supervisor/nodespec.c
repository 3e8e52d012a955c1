/*
 * nodespec.c: the node block of actord.conf (spec.h, struct node_spec):
 * its defaults and memory, the gateway it adds to the tree, and the text
 * the gateway reads its settings from.
 *
 * A node is an actord with a node block.  Its network side runs in the
 * gateway, a worker of the tree like any other (GATEWAY_NAME, the last
 * child of the root supervisor, with its own mailbox, restarted with
 * backoff, shown in status), so that actord itself reads no network
 * input.  The gateway learns its settings from GATEWAY_ENV_NODE, a
 * libconfig text written here from the spec actord checked: the node
 * block and the groups that span nodes, which config_parse_node() reads
 * back.  A reload that changes that text changes the gateway's spec and
 * so restarts it.
 *
 * Owns: the gateway's child spec and text (spec.c owns node_spec's memory).  Must never open a
 * socket or read a key (config.c checks the key file).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/config.h"
#include "supervisor/spec.h"
#include "worker/remote.h"

static int	 collect_groups(struct node_spec *, const struct sup_spec *,
		    const char *);
static int	 add_gateway(struct actord_spec *, char *, size_t);
static int	 shards_env(struct node_spec *);
static void	 put_string(FILE *, const char *);
static void	 put_names(FILE *, char *const *, size_t);
static char	*default_gateway(void);

/* Does instance i of the group at group_path run on this node? */
bool
node_spec_local(const struct node_spec *ns, const char *group_path,
    const struct child_spec *cs, unsigned instance)
{
	size_t at;

	if (ns == NULL || cs->nnodes == 0)
		return true;
	at = placement_node(group_path, instance, cs->nodes, cs->nnodes);
	return strcmp(cs->nodes[at], ns->name) == 0;
}

/*
 * The whole spec is read and checked: list the groups spanning nodes and
 * add the gateway.  0, or -1 with err (out of memory, or no room for the
 * gateway's program path).
 */
int
node_spec_finish(struct actord_spec *spec, char *err, size_t errlen)
{
	struct node_spec *ns = spec->node;

	if (ns == NULL)
		return 0;
	if (ns->gateway == NULL && (ns->gateway = default_gateway()) == NULL) {
		snprintf(err, errlen, "cannot find %s beside actord: set "
		    "gateway", GATEWAY_PROGRAM);
		return -1;
	}
	if (collect_groups(ns, &spec->root, "") == -1 ||
	    shards_env(ns) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return add_gateway(spec, err, errlen);
}

/* SHARDS_ENV's value: "PATH=INSTANCES ...", or none. */
static int
shards_env(struct node_spec *ns)
{
	size_t len, i;
	FILE *f;

	if (ns->ngroups == 0)
		return 0;
	if ((f = open_memstream(&ns->shards_env, &len)) == NULL)
		return -1;
	for (i = 0; i < ns->ngroups; i++)
		fprintf(f, "%s%s=%u", i > 0 ? " " : "", ns->groups[i].path,
		    ns->groups[i].instances);
	if (ferror(f) | (fclose(f) != 0)) {
		free(ns->shards_env);
		ns->shards_env = NULL;
		return -1;
	}
	return 0;
}

/*
 * The directory of this program in dir (len bytes, whatever they held):
 * 0, or -1.  readlink writes no NUL: the end is where its length says.
 */
int
node_spec_self_dir(char *dir, size_t len)
{
	ssize_t n;
	char *slash;

	if (len < 2 || (n = readlink("/proc/self/exe", dir, len - 1)) < 0)
		return -1;
	dir[n] = '\0';
	if ((slash = strrchr(dir, '/')) == NULL)
		return -1;
	*slash = '\0';
	return 0;
}

/* GATEWAY_PROGRAM in the directory of this program. */
static char *
default_gateway(void)
{
	char self[PATH_MAX], *out;

	if (node_spec_self_dir(self, sizeof(self)) == -1)
		return NULL;
	if (asprintf(&out, "%s/%s", self, GATEWAY_PROGRAM) < 0)
		return NULL;
	return out;
}

static int
collect_groups(struct node_spec *ns, const struct sup_spec *ss,
    const char *prefix)
{
	const struct child_spec *c;
	struct group_spec *g, *t;
	char path[SPEC_PATH_MAX];
	size_t i, j;

	for (i = 0; i < ss->nchildren; i++) {
		c = &ss->children[i];
		snprintf(path, sizeof(path), "%s/%s", prefix, c->name);
		if (c->sup != NULL) {
			if (collect_groups(ns, c->sup, path) == -1)
				return -1;
			continue;
		}
		if (c->nnodes == 0)
			continue;
		t = reallocarray(ns->groups, ns->ngroups + 1,
		    sizeof(*ns->groups));
		if (t == NULL)
			return -1;
		ns->groups = t;
		g = &ns->groups[ns->ngroups];
		memset(g, 0, sizeof(*g));
		if ((g->path = strdup(path)) == NULL ||
		    (g->nodes = calloc(c->nnodes + 1, sizeof(*g->nodes))) ==
		    NULL) {
			free(g->path);
			return -1;
		}
		ns->ngroups++;
		g->instances = c->instances;
		for (j = 0; j < c->nnodes; j++) {
			if ((g->nodes[j] = strdup(c->nodes[j])) == NULL)
				return -1;
			g->nnodes++;
		}
	}
	return 0;
}

/* The gateway: the last child of the root supervisor, an actor. */
static int
add_gateway(struct actord_spec *spec, char *err, size_t errlen)
{
	struct node_spec *ns = spec->node;
	struct sup_spec *root = &spec->root;
	struct child_spec *c, *t;
	char *text = NULL;

	t = reallocarray(root->children, root->nchildren + 1,
	    sizeof(*root->children));
	if (t == NULL)
		goto nomem;
	root->children = t;
	c = &root->children[root->nchildren++];
	spec_child_init(c);
	c->line = ns->line;
	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	c->mailbox = ns->mailbox;
	if ((c->name = strdup(GATEWAY_NAME)) == NULL ||
	    (c->argv = calloc(2, sizeof(*c->argv))) == NULL ||
	    (c->argv[0] = strdup(ns->gateway)) == NULL)
		goto nomem;
	if ((ns->user != NULL && (c->user = strdup(ns->user)) == NULL) ||
	    (ns->group != NULL && (c->group = strdup(ns->group)) == NULL))
		goto nomem;
	if (node_spec_format(ns, &text) == -1 ||
	    (c->env = calloc(1, sizeof(*c->env))) == NULL)
		goto nomem;
	c->nenv = 1;
	c->env[0].value = text;
	text = NULL;
	if ((c->env[0].name = strdup(GATEWAY_ENV_NODE)) == NULL)
		goto nomem;
	return 0;
nomem:
	free(text);
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* A libconfig string: quoted, with \ and " and control bytes escaped. */
static void
put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void
put_names(FILE *f, char *const *names, size_t n)
{
	size_t i;

	fputc('[', f);
	for (i = 0; i < n; i++) {
		if (i > 0)
			fputs(", ", f);
		put_string(f, names[i]);
	}
	fputc(']', f);
}

/*
 * The text config_parse_node() reads back: every setting of the node
 * block the gateway uses, and the groups spanning nodes.  0 with *out
 * (malloc'd), or -1.
 */
int
node_spec_format(const struct node_spec *ns, char **out)
{
	const struct peer_spec *p;
	size_t len, i;
	FILE *f;

	if ((f = open_memstream(out, &len)) == NULL)
		return -1;
	fputs("node = {\n  name = ", f);
	put_string(f, ns->name);
	fputs(";\n  listen = ", f);
	put_string(f, ns->listen);
	fputs(";\n  secret_key_file = ", f);
	put_string(f, ns->secret_key_file);
	fprintf(f, ";\n  heartbeat = %u;\n  heartbeat_timeout = %u;\n"
	    "  send_queue = %u;\n  max_frame = %u;\n  bad_frames = %u;\n",
	    ns->heartbeat, ns->heartbeat_timeout, ns->send_queue,
	    ns->max_frame, ns->bad_frames);
	fputs("  peers = (", f);
	for (i = 0; i < ns->npeers; i++) {
		p = &ns->peers[i];
		fputs(i > 0 ? ",\n    { name = " : "\n    { name = ", f);
		put_string(f, p->name);
		fputs("; endpoint = ", f);
		put_string(f, p->endpoint);
		fputs("; public_key = ", f);
		put_string(f, p->public_key);
		fputs("; }", f);
	}
	fputs(" );\n  clients = (", f);
	for (i = 0; i < ns->nclients; i++) {
		p = &ns->clients[i];
		fputs(i > 0 ? ",\n    { name = " : "\n    { name = ", f);
		put_string(f, p->name);
		fputs("; public_key = ", f);
		put_string(f, p->public_key);
		fputs("; }", f);
	}
	fputs(" );\n  groups = (", f);
	for (i = 0; i < ns->ngroups; i++) {
		fputs(i > 0 ? ",\n    { path = " : "\n    { path = ", f);
		put_string(f, ns->groups[i].path);
		fprintf(f, "; instances = %u; nodes = ",
		    ns->groups[i].instances);
		put_names(f, ns->groups[i].nodes, ns->groups[i].nnodes);
		fputs("; }", f);
	}
	fputs(" );\n};\n", f);
	if (ferror(f)) {
		fclose(f);
		free(*out);
		*out = NULL;
		return -1;
	}
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
