/* SPDX-License-Identifier: MIT */
/*
 * Streams (ring_abi.h): a queue's table of open streams, and the serial
 * step that runs their pieces.
 *
 * Pieces of one stream depend on each other's state, so they must run in
 * order, not only complete in order; pieces of different streams need
 * not wait for one another. Each slot has a gate: the number of the
 * piece that may run next (ring_abi.h: FIRST is 0, the client numbers
 * the others), and a busy bit that whoever runs one of its pieces
 * holds. The worker that claims a numbered piece runs it at once when
 * the gate shows its number, free (stream_piece with claim set); any
 * other piece (a FIRST, a clone, an unnumbered piece, one whose
 * predecessor has not run yet) goes to the poster as a private copy in
 * the queue's pending array (by sequence number), and its run is marked
 * "serial". The poster (order.c), which walks a queue's completed runs
 * in submission order under the queue's poster lock, runs the pieces it
 * meets there before it posts past them: by then every earlier piece has
 * run, so an honest stream's gate is free and shows its number. So a
 * stream's pieces run one at a time, in submission order; different
 * streams of one queue run on several workers at once; no thread ever
 * waits for another.
 *
 * A slot is touched only by the holder of its gate's busy bit (or after
 * the queue is detached from the workers); the gates are atomics beside
 * the slots, never wiped with them. The pending array is written by the
 * claiming worker without a lock and read by the poster, handed over by
 * the release store of the run's done mark; the sweep flag and the open
 * counts are atomics.
 */
#ifndef CRYPTOD_STREAMS_H
#define CRYPTOD_STREAMS_H

#include <cryptod/compiler.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cryptod/ring_abi.h>

#include "desc.h"
#include "engine.h"

struct session_table;

/* engine_op.status of a piece the claiming worker leaves to the poster:
 * not a status any completion carries. */
enum { STREAM_DEFERRED = 1 };

/* Stack bytes wiped after every piece (engine_burn_stack_n): deeper than
 * the engines' stream calls reach (test_stream_hygiene). */
enum { STREAM_BURN_STACK = 8192 };

struct stream_slot {
	uint32_t handle; /* the client's, while open */
	uint32_t session_id;
	uint64_t session_serial; /* session.serial at FIRST */
	uint8_t open;
	uint8_t dir; /* CRD_OP_* of FIRST: every piece must repeat it */
	_Alignas(64) uint8_t state[STREAM_STATE_SIZE]; /* the engine's */
};

struct stream_table {
	struct stream_slot
		*slot; /* owned locked mapping [CRD_STREAMS_PER_QUEUE] */
	size_t map_size;
	_Atomic unsigned nopen;
	/* Per slot: the number of its stream's next piece << 1, | 1 while
	 * a worker runs one of its pieces (streams.c). */
	_Atomic uint64_t gate[CRD_STREAMS_PER_QUEUE];
	/* The owner's count of open streams over all its queues (not owned;
	 * NULL until client_queue_open sets it). */
	_Atomic unsigned *client_open;
	/* Set by the control thread when a session of the owner is gone:
	 * the next poster closes the streams that used it. */
	_Atomic int sweep;
	/* Owned, [cq_entries]: private copies of pieces, by sequence number,
	 * from the claiming worker to the poster. A run with pieces has every
	 * entry written (flags 0 for ops that are not pieces). */
	struct crd_sqe *pend;
	uint32_t pend_mask;
};

CRD_MUST_CHECK int stream_table_init(struct stream_table *t,
				     uint32_t cq_entries);
/* Wipe every stream and free; the queue is detached from the workers. */
void stream_table_fini(struct stream_table *t);

/* Is a sweep asked for? (A hint read without the lock.) */
static inline int stream_sweep_pending(struct stream_table *t)
{
	return atomic_load_explicit(&t->sweep, memory_order_relaxed);
}

/* Control thread: a session of the owner was destroyed. */
void stream_sweep_request(struct stream_table *t);

/* Under the poster lock: close the streams whose session is gone (a
 * stream whose piece runs meanwhile is left to the next sweep, which
 * this one asks for). */
void stream_sweep(struct stream_table *t, const struct session_table *st);

/*
 * Run the piece e (a private copy) of this queue. Fills op (for the
 * completion and the counters) and returns its status. eng_ctx: the
 * calling worker's engine contexts; sg: a stage slot for desc_resolve.
 * Any error in a piece of an open stream closes it; LAST closes it too.
 *
 * claim: the worker that claimed e, outside the poster lock: it runs a
 * numbered piece whose predecessor has run, and otherwise touches
 * nothing and returns STREAM_DEFERRED. Else the poster, in submission
 * order: it runs the piece whatever its number says, unless another
 * worker runs a piece of the slot right then, which an honest client's
 * stream never lets happen (NO_STREAM; STREAM_BUSY for a FIRST).
 */
int stream_piece(struct stream_table *t, const struct session_table *sessions,
		 uint8_t *arena, uint64_t arena_size, const struct crd_sqe *e,
		 struct engine_op *op, void *const *eng_ctx,
		 struct desc_sgl *sg, int claim);

#endif
