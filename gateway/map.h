/*
 * map.h: the gateway's tables of asks in flight (map.c), keyed by a
 * nonzero 64-bit correlation id.
 */
#ifndef ACTORD_GATEWAY_MAP_H
#define ACTORD_GATEWAY_MAP_H

#include <stdint.h>

struct gw_map {
	uint64_t	*keys;		/* 0: free */
	void		**vals;
	uint32_t	 cap;		/* a power of two, or 0 */
	uint32_t	 n;
};

void	*map_get(const struct gw_map *, uint64_t);
int	 map_put(struct gw_map *, uint64_t, void *);
void	*map_del(struct gw_map *, uint64_t);
void	 map_free(struct gw_map *);

#endif /* ACTORD_GATEWAY_MAP_H */
