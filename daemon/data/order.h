/* SPDX-License-Identifier: MIT */
/*
 * Per-queue ordering across workers (the padata/pcrypt contract, per
 * queue): workers claim runs of sequence numbers from a queue, run them
 * in parallel, write each completion into its own slot of the completion
 * ring, and mark the run done; whoever holds the queue's poster lock
 * advances the published tail over every contiguous done run, for
 * everyone. A
 * failed op completes in its slot like any other and never stalls the
 * queue. All the ordering logic is here.
 *
 * Sequence numbers are the free-running u32 ring indices and compare as
 * signed differences. Daemon-private memory only; nothing here is read
 * back from the shared region.
 */
#ifndef CRYPTOD_ORDER_H
#define CRYPTOD_ORDER_H

#include <cryptod/compiler.h>

#include <stdatomic.h>
#include <stdint.h>

#include <cryptod/ring_abi.h>

struct order {
	/* Next sequence number to hand out; workers CAS it. */
	_Alignas(64) _Atomic uint32_t claim;
	/* The poster's state: written under lock, read by anyone. */
	_Alignas(64) _Atomic uint32_t lock;
	_Atomic uint32_t sq_head; /* entries copied out, contiguously */
	_Atomic uint32_t cq_tail; /* completions posted, contiguously */
	uint32_t sq_mask, cq_mask;
	/*
	 * Runs, not ops: a worker marks the first slot of the run it claimed
	 * with the run's length once the whole run is copied out (copied) or
	 * completed (done); 0 = not yet. The poster hops from run to run, so
	 * its work is per run, and each worker stores one mark per run
	 * instead of one per op.
	 */
	_Atomic uint32_t *copied; /* owned [sq_entries] */
	_Atomic uint32_t *done;	  /* owned [cq_entries] */
	/* The poster's place in a serial run it stopped inside (its budget
	 * ran out): valid while ser_partial. Under lock. */
	uint32_t ser_next;
	int ser_partial;
};

/* A done mark's flag: the run holds stream pieces, which the poster runs
 * (in order) before it posts past them (streams.h). */
#define ORDER_SERIAL 0x80000000u

/* The poster's serial step, for queues whose runs may hold stream
 * pieces. Both hooks run under the poster lock. */
struct order_serial {
	/* Run the pieces among [seq, end), in order, while *budget is
	 * above 0 (each piece takes its cost off it); return where it
	 * stopped: end once every piece ran. */
	uint32_t (*run)(void *arg, uint32_t seq, uint32_t end, int64_t *budget);
	/* Called once per lock acquisition (NULL: nothing). */
	void (*locked)(void *arg);
	void *arg;
	/* The caller's budget, in the run's units: each piece takes its
	 * cost off it, so the caller sees what the pieces cost. */
	int64_t *budget;
};

CRD_MUST_CHECK int order_init(struct order *o, uint32_t sq_entries,
			      uint32_t cq_entries);
void order_fini(struct order *o);

/*
 * What the next claim could take, without taking it: at most max
 * submitted sequence numbers from *start (tail: the client's sq tail;
 * cq_head: its cq head, both loaded from the region *before* this call).
 * Never more than the completion ring can hold. Returns the count (0:
 * nothing to do); *left is what remains submitted beyond it. -1: the
 * client's indices are lies (a stale index is not). Never a slot whose
 * last lap's copied mark the poster has not passed either: the count is
 * then 0 with *left set, until it has.
 *
 * The entries [*start, *start + count) may be copied before order_take:
 * the client may not rewrite them until the daemon's sq head or their
 * completions pass them, and neither passes a sequence number nobody
 * claimed. If the claim moved meanwhile, order_take fails and the copies
 * are dropped.
 */
CRD_MUST_CHECK int order_peek(struct order *o, uint32_t tail, uint32_t cq_head,
			      uint32_t sq_entries, uint32_t cq_entries,
			      uint32_t max, uint32_t *start, uint32_t *left);

/* Claim [start, start + n), n no more than order_peek offered at start:
 * 0, or -EAGAIN when another worker claimed from start first (peek
 * again). */
CRD_MUST_CHECK int order_take(struct order *o, uint32_t start, uint32_t n);

/* order_peek and order_take in one, for a caller that does not look at
 * the entries before it decides how many to take. Returns what
 * order_peek does. */
CRD_MUST_CHECK int order_claim(struct order *o, uint32_t tail, uint32_t cq_head,
			       uint32_t sq_entries, uint32_t cq_entries,
			       uint32_t max, uint32_t *start, uint32_t *left);

/* Mark the run [start, start + n) that order_take handed out copied
 * out / its completions written. Release stores: everything the worker
 * wrote for the run before is visible to the poster that reads the mark
 * (order_post's acquire load). */
static inline void order_copied(struct order *o, uint32_t start, uint32_t n)
{
	atomic_store_explicit(&o->copied[start & o->sq_mask], n,
			      memory_order_release);
}

/* n | ORDER_SERIAL when the run holds stream pieces. */
static inline void order_done(struct order *o, uint32_t start, uint32_t n)
{
	atomic_store_explicit(&o->done[start & o->cq_mask], n,
			      memory_order_release);
}

/* Is a mark waiting at one of the heads? (Plain reads: a hint for
 * deciding whether to post, never a decision about the data.) */
static inline int order_pending(struct order *o)
{
	uint32_t sh = atomic_load_explicit(&o->sq_head, memory_order_relaxed);
	uint32_t ct = atomic_load_explicit(&o->cq_tail, memory_order_relaxed);
	return atomic_load_explicit(&o->copied[sh & o->sq_mask],
				    memory_order_relaxed) ||
	       atomic_load_explicit(&o->done[ct & o->cq_mask],
				    memory_order_relaxed);
}

/*
 * Publish what is contiguous: ksq_head over copied entries, kcq_tail over
 * written completions, running the stream pieces of serial runs on the
 * way with ser (NULL: none can be marked) while its budget lasts. If
 * another worker holds the poster lock, it posts for us (it re-checks
 * after unlocking), unless the budget ran out: a mark then stays at the
 * head (order_pending) for the next visit.
 * Returns how many completions this call posted; the caller then does
 * the need-wakeup check.
 */
uint32_t order_post(struct order *o, struct crd_region_hdr *h,
		    const struct order_serial *ser);

#endif
