/* SPDX-License-Identifier: MIT */
/*
 * Descriptor validation. The worker copies each submission entry out of
 * shared memory once; everything here works on that private copy and
 * never looks at the shared entry again (no double fetch).
 */
#ifndef CRYPTOD_DESC_H
#define CRYPTOD_DESC_H

#include <stdint.h>

#include <cryptod/ring_abi.h>

#include "engine.h"

/* Is [off, off + len) inside an arena of arena_size bytes? 64-bit
 * arithmetic on 32-bit inputs cannot overflow. */
static inline int desc_range_ok(uint32_t off, uint32_t len, uint64_t arena_size)
{
	return (uint64_t)off + len <= arena_size;
}

/* Do [a, a + alen) and [b, b + blen) share a byte? Empty ranges never do. */
static inline int desc_overlap(uint32_t a, uint32_t alen, uint32_t b,
			       uint32_t blen)
{
	if (!alen || !blen)
		return 0;
	return (uint64_t)a < (uint64_t)b + blen &&
	       (uint64_t)b < (uint64_t)a + alen;
}

/*
 * Check the private copy e against the arena and the session (NULL when
 * the id is unknown to this client) and fill op. Returns CRD_ST_OK or the
 * error status, which is also stored in op->status; on error only
 * op->status is meaningful. op->iv points into e, so e must outlive op.
 */
int desc_resolve(const struct crd_sqe *e, uint8_t *arena, uint64_t arena_size,
		 const struct session *sess, struct engine_op *op);

#endif
