/*
 * shards.c: the shards of groups spanning nodes that a local actor sends
 * to by the remote reference actor_shard() gave it (REMOTE_SHARD_REF,
 * worker/remote.h): the group's id and the shard's number, which become
 * the node its placement names (worker/placement.c, the same on every
 * node) and the shard's path there.  Sent by path, the message reaches
 * whichever incarnation of the shard lives on that node.
 *
 * Owns: that translation.  Must never route a shard to a node its
 * group's nodes do not list.
 */
#include <stdio.h>
#include <string.h>

#include "gateway/gateway.h"

/*
 * e, whose reference names a shard, as the envelope of a path on the node
 * that runs it, the path written in path.  0, or ACTOR_ENOENT: no group
 * spanning nodes has that id, the shard is past its instances, or its
 * placement is this node (whose shards actor_shard() finds here).
 */
int
shard_route(struct gateway *gw, struct remote_env *e, char *path,
    size_t pathlen)
{
	const struct group_spec *g = NULL;
	uint32_t index = REMOTE_SHARD_REF(0, 0) | (uint32_t)e->gen << 16 |
	    e->to_index, id = REMOTE_SHARD_ID(index),
	    s = REMOTE_SHARD_OF(index);
	const char *node;
	size_t i;
	int n;

	for (i = 0; i < gw->ns->ngroups && g == NULL; i++)
		if (placement_group_id(gw->ns->groups[i].path) == id)
			g = &gw->ns->groups[i];
	if (g == NULL || s >= g->instances)
		return ACTOR_ENOENT;
	node = g->nodes[placement_node(g->path, s, g->nodes, g->nnodes)];
	if (strcmp(node, gw->ns->name) == 0)
		return ACTOR_ENOENT;
	n = snprintf(path, pathlen, "%s/%u", g->path, s);
	if (n < 0 || (size_t)n >= pathlen || strlen(node) > WIRE_NAME_MAX)
		return ACTOR_ENOENT;
	snprintf(e->node, sizeof(e->node), "%s", node);
	e->flags |= WF_PATH;
	e->path = path;
	e->path_len = (uint16_t)n;
	return 0;
}
