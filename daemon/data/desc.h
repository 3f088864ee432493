/* SPDX-License-Identifier: MIT */
/*
 * Descriptor validation. The worker copies each submission entry out of
 * shared memory once; everything here works on that private copy, and
 * copies segment lists out of shared memory once too. Nothing is read
 * from shared memory twice.
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

/* An op's source and destination as private segment lists (a flat
 * buffer is a list of one), copied out of the arena and checked by
 * desc_resolve, and its IV when that came from the arena
 * (CRD_SQE_F_ARENA_IV). The caller owns it; once filled it is all that is
 * read of the lists and the IV, never the arena's. */
struct desc_sgl {
	struct crd_seg src[CRD_SEG_MAX];
	struct crd_seg dst[CRD_SEG_MAX];
	unsigned nsrc, ndst; /* ndst 0: no destination (GMAC) */
	int in_place;
	uint8_t iv
		[CRD_IV_ARENA_MAX]; /* op->iv points here, if from the arena */
};

/* Does the algorithm write a MAC over aad || data in one pass (authenc)? */
static inline int desc_is_authenc(unsigned alg)
{
	return crd_alg_kind(alg) == CRD_KIND_AUTHENC;
}

/*
 * Check the private copy e against the arena and the session s (NULL when
 * the id is unknown to this client) and fill op. Returns CRD_ST_OK or the
 * error status, which is also stored in op->status; on error only
 * op->status is meaningful. op->iv points into e (an inline IV) or sg (one
 * from the arena, copied once), so both must outlive op.
 *
 * sg receives the op's lists, and its IV when that is in the arena. When
 * the op cannot run on flat arena pointers (scatter-gather, or authenc
 * whose AAD and data are not contiguous and in place), op->sgl is set,
 * op->src/dst are NULL and the op runs from sg later, staged in private
 * memory. Either way, or when op->iv points into sg (desc_holds_sg), the
 * caller keeps sg unchanged until the op has run (the worker gives each
 * such op of a run its own slot, stage.h). Otherwise sg is not needed
 * once this returns.
 */
int desc_resolve(const struct crd_sqe *e, uint8_t *arena, uint64_t arena_size,
		 const struct session *s, struct engine_op *op,
		 struct desc_sgl *sg);

/* Does the valid op still read sg (its lists, or its IV)? */
static inline int desc_holds_sg(const struct engine_op *op,
				const struct desc_sgl *sg)
{
	return op->sgl || op->iv == sg->iv;
}

#endif
