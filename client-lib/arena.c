/* SPDX-License-Identifier: MIT */
/*
 * First-fit allocator over the queue's arena, in 64-byte granules so that
 * buffers pack densely and never share a cache line with a neighbour.
 * Programs that keep their buffers allocate once; the provider allocates
 * and frees one per op, so both are kept short.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The live allocations: an open-addressed map, start granule + 1 ->
 * length in granules, probed linearly. The provider allocates and frees
 * a buffer per op, so both are on its per-op path: the slot is the top
 * bits of a multiplicative hash (the low bits of one repeat with the
 * keys' spacing, which made long clusters), and a removal shifts the
 * entries behind it back instead of inserting them anew.
 */
static uint32_t map_hash(const struct arena_alloc *a, uint32_t k)
{
	return (uint32_t)(((uint64_t)(k * 2654435761u) << a->map_bits) >> 32);
}

static void map_place(struct arena_alloc *a, uint32_t key, uint32_t val)
{
	uint32_t mask = a->map_cap - 1, i = map_hash(a, key);
	while (a->keys[i])
		i = (i + 1) & mask;
	a->keys[i] = key;
	a->vals[i] = val;
}

static int map_grow(struct arena_alloc *a)
{
	uint32_t old_cap = a->map_cap, *ok = a->keys, *ov = a->vals;
	uint32_t cap = old_cap ? old_cap * 2 : 64, bits = 0;
	while ((1u << bits) < cap)
		bits++;
	uint32_t *nk = calloc(cap, sizeof(*nk)), *nv = calloc(cap, sizeof(*nv));
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	a->keys = nk;
	a->vals = nv;
	a->map_cap = cap;
	a->map_bits = bits;
	for (uint32_t i = 0; i < old_cap; i++)
		if (ok[i])
			map_place(a, ok[i], ov[i]);
	free(ok);
	free(ov);
	return 0;
}

/* key is granule + 1: 0 marks an empty slot. */
static int map_put(struct arena_alloc *a, uint32_t key, uint32_t val)
{
	if ((a->map_used + 1) * 2 > a->map_cap && map_grow(a))
		return -ENOMEM;
	map_place(a, key, val);
	a->map_used++;
	return 0;
}

/* Remove key; returns its value or 0 when absent. */
static uint32_t map_take(struct arena_alloc *a, uint32_t key)
{
	if (!a->map_cap)
		return 0;
	uint32_t mask = a->map_cap - 1, i = map_hash(a, key);
	while (a->keys[i] && a->keys[i] != key)
		i = (i + 1) & mask;
	if (!a->keys[i])
		return 0;
	uint32_t val = a->vals[i];
	a->map_used--;
	/* The hole at i: an entry further on whose probe began at or
	 * before i (its distance from home reaches back to the hole) moves
	 * into it, and its own slot becomes the hole. */
	for (uint32_t j = (i + 1) & mask; a->keys[j]; j = (j + 1) & mask) {
		uint32_t home = map_hash(a, a->keys[j]);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			a->keys[i] = a->keys[j];
			a->vals[i] = a->vals[j];
			i = j;
		}
	}
	a->keys[i] = 0;
	return val;
}

int arena_init(struct arena_alloc *a, uint64_t bytes)
{
	memset(a, 0, sizeof(*a));
	a->granules = bytes / ARENA_GRANULE;
	a->cap_free = 16;
	a->free = malloc(a->cap_free * sizeof(*a->free));
	if (!a->free)
		return -ENOMEM;
	a->free[0] = (struct arena_ext){ 0, a->granules };
	a->nfree = a->granules ? 1 : 0;
	return 0;
}

void arena_fini(struct arena_alloc *a)
{
	free(a->free);
	free(a->keys);
	free(a->vals);
	memset(a, 0, sizeof(*a));
}

int64_t arena_alloc(struct arena_alloc *a, uint64_t bytes)
{
	if (bytes == 0)
		bytes = 1;
	/* Refuse before rounding up: near UINT64_MAX the sum would wrap. */
	if (bytes > (uint64_t)a->granules * ARENA_GRANULE)
		return -1;
	uint64_t g = (bytes + ARENA_GRANULE - 1) / ARENA_GRANULE;
	for (uint32_t i = 0; i < a->nfree; i++) {
		struct arena_ext *e = &a->free[i];
		if (e->len < g)
			continue;
		uint32_t off = e->off;
		if (map_put(a, off + 1, (uint32_t)g))
			return -1;
		e->off += g;
		e->len -= g;
		if (!e->len) {
			memmove(e, e + 1, (a->nfree - i - 1) * sizeof(*e));
			a->nfree--;
		}
		return (int64_t)off * ARENA_GRANULE;
	}
	return -1;
}

int arena_free(struct arena_alloc *a, uint64_t off)
{
	/* Check before narrowing to 32 bits, or a far offset would alias a
	 * live block. */
	if (off % ARENA_GRANULE || off / ARENA_GRANULE >= a->granules)
		return -EINVAL;
	uint32_t g = off / ARENA_GRANULE;
	uint32_t len = map_take(a, g + 1);
	if (!len)
		return -EINVAL;

	/* Find the insertion point; merge with neighbours. */
	uint32_t i = 0;
	while (i < a->nfree && a->free[i].off < g)
		i++;
	int merge_prev = i > 0 && a->free[i - 1].off + a->free[i - 1].len == g;
	int merge_next = i < a->nfree && g + len == a->free[i].off;
	if (merge_prev && merge_next) {
		a->free[i - 1].len += len + a->free[i].len;
		memmove(&a->free[i], &a->free[i + 1],
			(a->nfree - i - 1) * sizeof(a->free[0]));
		a->nfree--;
	} else if (merge_prev) {
		a->free[i - 1].len += len;
	} else if (merge_next) {
		a->free[i].off = g;
		a->free[i].len += len;
	} else {
		if (a->nfree == a->cap_free) {
			struct arena_ext *n =
				realloc(a->free, 2 * a->cap_free * sizeof(*n));
			if (!n) {
				map_put(a, g + 1, len); /* keep it allocated */
				return -ENOMEM;
			}
			a->free = n;
			a->cap_free *= 2;
		}
		memmove(&a->free[i + 1], &a->free[i],
			(a->nfree - i) * sizeof(a->free[0]));
		a->free[i] = (struct arena_ext){ g, len };
		a->nfree++;
	}
	return 0;
}
