/*
 * placement.c: which node runs a shard of a group that spans nodes.
 * Rendezvous (highest random weight) hashing: every node of the group
 * gets a weight for the shard, and the heaviest runs it.
 *
 *	w(group, shard, node) = fmix64(FNV-1a 64 over the bytes
 *	    group, 0x00, the shard number in decimal, 0x00, node name)
 *
 * where fmix64 is MurmurHash3's 64-bit finalizer (x ^= x >> 33;
 * x *= 0xff51afd7ed558ccd; x ^= x >> 33; x *= 0xc4ceb53a2e09a69b;
 * x ^= x >> 33).  Equal weights go to the name first in byte order.  Every
 * node computes the same placement from the same three inputs, in any
 * language; adding a node moves only the shards it wins.  actord.conf(5)
 * gives test vectors.
 *
 * A group's id, which names it in the remote reference of one of its
 * shards (REMOTE_SHARD_REF, remote.h), is FNV-1a 64 of its path modulo
 * 0x3fff.
 *
 * Owns: the weight, the choice and the group's id.  Must never depend on
 * the order in which the nodes are listed, nor on anything but these
 * bytes (no seed, no pointer, no byte order: the same on every build).
 */
#include <stdio.h>
#include <string.h>

#include "worker/remote.h"

static uint64_t	 fnv1a(uint64_t, const void *, size_t);

static uint64_t
fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t
placement_weight(const char *group, uint32_t shard, const char *node)
{
	char num[16];
	uint64_t h = 0xcbf29ce484222325ULL;

	snprintf(num, sizeof(num), "%u", shard);
	h = fnv1a(h, group, strlen(group) + 1);		/* the NUL too */
	h = fnv1a(h, num, strlen(num) + 1);
	h = fnv1a(h, node, strlen(node));
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb53a2e09a69bULL;
	h ^= h >> 33;
	return h;
}

/* The index in nodes[] of the node that runs the shard; 0 if n is 0. */
size_t
placement_node(const char *group, uint32_t shard, char *const *nodes,
    size_t n)
{
	uint64_t w, best = 0;
	size_t i, at = 0;

	for (i = 0; i < n; i++) {
		w = placement_weight(group, shard, nodes[i]);
		if (i == 0 || w > best ||
		    (w == best && strcmp(nodes[i], nodes[at]) < 0)) {
			best = w;
			at = i;
		}
	}
	return at;
}

/* The id of a group spanning nodes in its shards' remote references. */
uint32_t
placement_group_id(const char *group)
{
	return (uint32_t)(fnv1a(0xcbf29ce484222325ULL, group, strlen(group)) %
	    REMOTE_SHARD_IDS);
}
