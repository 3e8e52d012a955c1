/*
 * map.c: a table of the gateway's asks in flight, keyed by a 64-bit
 * correlation id (never 0): open addressing, linear probing, deletion by
 * backward shift, doubling when half full.  Values are the caller's
 * (malloc'd) entries.
 *
 * Owns: the slots.  Must never hold a key 0 (it marks a free slot).
 */
#include <stdlib.h>

#include "gateway/map.h"

static uint32_t	 home(const struct gw_map *, uint64_t);
static int	 grow(struct gw_map *);

static uint32_t
home(const struct gw_map *m, uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (uint32_t)key & (m->cap - 1);
}

static int
grow(struct gw_map *m)
{
	struct gw_map n;
	uint32_t i;

	n.cap = m->cap == 0 ? 64 : m->cap * 2;
	n.n = 0;
	if ((n.keys = calloc(n.cap, sizeof(*n.keys))) == NULL)
		return -1;
	if ((n.vals = calloc(n.cap, sizeof(*n.vals))) == NULL) {
		free(n.keys);
		return -1;
	}
	for (i = 0; i < m->cap; i++)
		if (m->keys[i] != 0)
			(void)map_put(&n, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

void *
map_get(const struct gw_map *m, uint64_t key)
{
	uint32_t i;

	if (m->cap == 0 || key == 0)
		return NULL;
	for (i = home(m, key); m->keys[i] != 0; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return NULL;
}

/* 0, or -1: no memory (or key 0).  A key already there is replaced. */
int
map_put(struct gw_map *m, uint64_t key, void *val)
{
	uint32_t i;

	if (key == 0)
		return -1;
	if ((m->n + 1) * 2 > m->cap && grow(m) == -1)
		return -1;
	for (i = home(m, key); m->keys[i] != 0; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

/* The value taken out, or NULL. */
void *
map_del(struct gw_map *m, uint64_t key)
{
	uint32_t i, j, h;
	void *val;

	if (m->cap == 0 || key == 0)
		return NULL;
	for (i = home(m, key); m->keys[i] != key; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == 0)
			return NULL;
	val = m->vals[i];
	/* Backward shift: what follows in the run moves up if it may. */
	for (j = (i + 1) & (m->cap - 1); m->keys[j] != 0;
	    j = (j + 1) & (m->cap - 1)) {
		h = home(m, m->keys[j]);
		if (((j - h) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = 0;
	m->vals[i] = NULL;
	m->n--;
	return val;
}

void
map_free(struct gw_map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->n = 0;
}
