/* SPDX-License-Identifier: MIT */
/*
 * A worker's private scratch: the validated segment lists of a run's
 * scatter-gather ops, one slot each, the bounce buffer where those ops
 * (and non-contiguous authenc) are gathered, run and scattered, and
 * locked slots for the sessions that session-less ops build for one pass.
 * Owned by one worker thread; nothing here is shared.
 */
#ifndef CRYPTOD_STAGE_H
#define CRYPTOD_STAGE_H

#include <cryptod/compiler.h>

#include <stddef.h>
#include <stdint.h>

#include <cryptod/ring_abi.h>

#include "bounds.h"
#include "desc.h"

struct session;

struct stage {
	uint8_t *
		bounce; /* owned mapping, bounce_size bytes, made on first use */
	size_t bounce_size;
	struct session *sl; /* owned locked mapping: WORKER_BURST sessions */
	unsigned sl_used;   /* slots used this pass */
	/* Owned, WORKER_BURST lists: resolve copies each op's lists (and an
	 * IV from the arena) out of the arena into a slot; a scatter-gather
	 * op, or one with an arena IV, keeps its slot (desc_holds_sg) until
	 * the run step, which reads only this copy. Any other op needs
	 * nothing of it after resolve and leaves its slot to the next op. */
	struct desc_sgl *sg;
};

CRD_MUST_CHECK int stage_init(struct stage *st);
void stage_fini(struct stage *st);

/*
 * Build the session of a session-less descriptor e (its parameters read
 * once from the arena) in the next scratch slot. eng_ctx: the worker's
 * engine contexts. Returns CRD_ST_OK and *out, or a CRD_ST_* error.
 */
CRD_MUST_CHECK int stage_sessionless(struct stage *st, const uint8_t *arena,
				     uint64_t arena_size,
				     const struct crd_sqe *e,
				     void *const *eng_ctx,
				     const struct session **out);

/* Run one op with op->sgl set, sg its validated lists (a slot of st->sg):
 * gather into the bounce buffer, run the engine there, scatter the
 * result. Sets op->status. */
void stage_run(struct stage *st, uint8_t *arena, struct engine_op *op,
	       const struct desc_sgl *sg, void *eng_ctx);

/* End of a pass: wipe the session-less sessions used. */
void stage_pass_end(struct stage *st);

#endif
