/* SPDX-License-Identifier: MIT */
#include "order.h"

#include <errno.h>
#include <stdlib.h>

int order_init(struct order *o, uint32_t sq_entries, uint32_t cq_entries)
{
	atomic_init(&o->claim, 0);
	atomic_init(&o->lock, 0);
	atomic_init(&o->sq_head, 0);
	atomic_init(&o->cq_tail, 0);
	o->ser_next = 0;
	o->ser_partial = 0;
	o->sq_mask = sq_entries - 1;
	o->cq_mask = cq_entries - 1;
	o->copied = calloc(sq_entries, sizeof(*o->copied));
	o->done = calloc(cq_entries, sizeof(*o->done));
	if (!o->copied || !o->done) {
		order_fini(o);
		return -ENOMEM;
	}
	return 0;
}

void order_fini(struct order *o)
{
	free(o->copied);
	free(o->done);
	o->copied = NULL;
	o->done = NULL;
}

/* Sequence numbers from `from` up to `end`; 0 when end is not after it. */
static uint32_t seq_room(uint32_t end, uint32_t from)
{
	return crd_seq_before(end, from) ? 0 : end - from;
}

int order_peek(struct order *o, uint32_t tail, uint32_t cq_head,
	       uint32_t sq_entries, uint32_t cq_entries, uint32_t max,
	       uint32_t *start, uint32_t *left)
{
	/*
	 * Our indices are loaded after the client's (the caller loaded tail
	 * and cq_head first), and only grow. An honest client acted on
	 * published values no newer than these, so: its tail is at most
	 * claim + sq_entries (each completion it read was claimed), and its
	 * cq head is not past our posted tail.
	 * A tail *behind* the claim is only stale (this worker was
	 * preempted while siblings went on), never a lie.
	 */
	uint32_t cq_tail =
		atomic_load_explicit(&o->cq_tail, memory_order_acquire);
	if (crd_seq_before(cq_tail, cq_head))
		return -1; /* consumed completions never posted */

	uint32_t c = atomic_load_explicit(&o->claim, memory_order_relaxed);
	*start = c;
	*left = 0;
	if (tail == c || crd_seq_before(tail, c))
		return 0;
	uint32_t avail = tail - c;
	if (avail > sq_entries)
		return -1; /* submitted more than the ring holds */
	/* Completion slots are free up to cq_head + cq_entries. */
	uint32_t room = seq_room(cq_head + cq_entries, c);
	/* And our copied marks up to sq_head + sq_entries: a client that
	 * has read a completion may refill its submission slot before the
	 * poster has passed the run's mark (CRD_FEAT_CQE_SLOT), which a
	 * claim of the slot's next lap would overwrite. Not a lie: wait
	 * for the poster (tail != claim keeps a worker polling). Acquire:
	 * pairs with the poster's release of sq_head, so the marks it
	 * cleared come before the one this claim will store. */
	uint32_t sh = atomic_load_explicit(&o->sq_head, memory_order_acquire);
	uint32_t marks = seq_room(sh + sq_entries, c);
	if (marks < room)
		room = marks;
	uint32_t n = avail < room ? avail : room;
	if (n > max)
		n = max;
	*left = avail - n; /* n == 0: the client must read completions */
	return (int)n;
}

int order_take(struct order *o, uint32_t start, uint32_t n)
{
	/* The claim only grows, so a take that succeeds saw it at start
	 * all along: nobody claimed these entries, so the daemon's sq head
	 * cannot have passed them and the client cannot have rewritten
	 * them under the caller's copies. Release: those copies (loads)
	 * stay before the claim. (A claim that went round all 2^32
	 * sequence numbers while this worker slept would fool it: a
	 * client's own stale entries, checked like any.) */
	uint32_t c = start;
	return atomic_compare_exchange_strong_explicit(&o->claim, &c, start + n,
						       memory_order_acq_rel,
						       memory_order_relaxed)
		       ? 0
		       : -EAGAIN;
}

int order_claim(struct order *o, uint32_t tail, uint32_t cq_head,
		uint32_t sq_entries, uint32_t cq_entries, uint32_t max,
		uint32_t *start, uint32_t *left)
{
	for (;;) {
		int n = order_peek(o, tail, cq_head, sq_entries, cq_entries,
				   max, start, left);
		if (n <= 0 || order_take(o, *start, (uint32_t)n) == 0)
			return n;
		/* A sibling claimed first: look again from its claim. */
	}
}

/* Advance one index over the runs marked at it, clearing each mark for
 * the next lap. A run's mark sits at its first slot; the slots inside it
 * are never marked, so the hop lands on the next run's first slot. */
static uint32_t order_advance(_Atomic uint32_t *marks, uint32_t mask,
			      _Atomic uint32_t *idx)
{
	uint32_t i = atomic_load_explicit(idx, memory_order_relaxed), n = 0;
	for (;;) {
		/* Pairs with the worker's release store in order_copied /
		 * order_done: its entries and completions are visible. */
		uint32_t run = atomic_load_explicit(&marks[(i + n) & mask],
						    memory_order_acquire);
		if (!run)
			break;
		atomic_store_explicit(&marks[(i + n) & mask], 0,
				      memory_order_relaxed);
		n += run;
	}
	if (n)
		atomic_store_explicit(idx, i + n, memory_order_release);
	return n;
}

/*
 * order_advance for the done marks, running serial runs' pieces first.
 * Stops inside a serial run when the budget runs out (its mark stays;
 * ser_next says where to go on). Returns how many completions it passed.
 */
static uint32_t order_advance_done(struct order *o,
				   const struct order_serial *ser)
{
	uint32_t i = atomic_load_explicit(&o->cq_tail, memory_order_relaxed);
	uint32_t n = 0;
	for (;;) {
		/* Pairs with order_done's release store. */
		uint32_t mark = atomic_load_explicit(
			&o->done[(i + n) & o->cq_mask], memory_order_acquire);
		if (!mark)
			break;
		uint32_t len = mark & ~ORDER_SERIAL;
		if (mark & ORDER_SERIAL) {
			uint32_t from = o->ser_partial ? o->ser_next : i + n;
			uint32_t end = i + n + len;
			uint32_t stop =
				ser ? ser->run(ser->arg, from, end, ser->budget)
				    : end;
			if (stop != end) {
				o->ser_next = stop;
				o->ser_partial = 1;
				break;
			}
			o->ser_partial = 0;
		}
		atomic_store_explicit(&o->done[(i + n) & o->cq_mask], 0,
				      memory_order_relaxed);
		n += len;
	}
	if (n)
		atomic_store_explicit(&o->cq_tail, i + n, memory_order_release);
	return n;
}

uint32_t order_post(struct order *o, struct crd_region_hdr *h,
		    const struct order_serial *ser)
{
	uint32_t posted = 0;
	for (;;) {
		uint32_t unlocked = 0;
		/* Whoever holds the lock drains for everyone. */
		if (!atomic_compare_exchange_strong(&o->lock, &unlocked, 1))
			return posted;
		if (ser && ser->locked)
			ser->locked(ser->arg);
		if (order_advance(o->copied, o->sq_mask, &o->sq_head))
			/* Slots the client may refill. Pairs with its
			 * acquire load of ksq_head. */
			crd_store_release(
				&h->ksq_head.k,
				atomic_load_explicit(&o->sq_head,
						     memory_order_relaxed));
		uint32_t n = order_advance_done(o, ser);
		if (n)
			/* Completions and the data they describe. Pairs
			 * with the client's acquire load; seq_cst as the
			 * first half of the need-wakeup handshake. */
			crd_store_seq_cst(
				&h->kcq_tail.k,
				atomic_load_explicit(&o->cq_tail,
						     memory_order_relaxed));
		posted += n;
		int partial = o->ser_partial;
		atomic_store(&o->lock, 0); /* seq_cst: pairs with the loads */
		/* Out of budget inside a serial run: its mark stays at the
		 * head for the next visit (order_pending). */
		if (partial)
			return posted;

		/* A worker that marked a run while we held the lock failed
		 * to take it and left; if its mark is at our heads, go
		 * round again for it. */
		uint32_t sh = atomic_load(&o->sq_head);
		uint32_t ct = atomic_load(&o->cq_tail);
		if (!atomic_load(&o->copied[sh & o->sq_mask]) &&
		    !atomic_load(&o->done[ct & o->cq_mask]))
			return posted;
	}
}
