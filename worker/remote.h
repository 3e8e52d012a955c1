/*
 * remote.h: what libactor shares with actord, actorctl and the gateway
 * about other nodes.  Internal: never installed, never included by a
 * worker's program.
 *
 * Who owns what:
 *   keys.c       key files and their Z85 text
 *   placement.c  which node runs a shard of a group spanning nodes
 */
#ifndef ACTORD_REMOTE_H
#define ACTORD_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEY_BYTES		32	/* a Curve25519 key */
#define KEY_Z85_LEN		40	/* its Z85 text */

/* keys.c */
void	 key_z85_encode(const uint8_t key[KEY_BYTES],
	    char out[KEY_Z85_LEN + 1]);
int	 key_z85_decode(const char *z85, uint8_t out[KEY_BYTES]);
bool	 key_z85_valid(const char *z85);
int	 key_file_read(const char *path, bool secret,
	    char z85[KEY_Z85_LEN + 1], char *err, size_t errlen);

/* placement.c */
uint64_t placement_weight(const char *group, uint32_t shard,
	    const char *node);
size_t	 placement_node(const char *group, uint32_t shard,
	    char *const *nodes, size_t n);

#endif /* ACTORD_REMOTE_H */
