// SPDX-License-Identifier: MIT
/* A queue's submission ring, for hand-edited descriptors
 * (stream_ring.h). */
#include "stream_ring.h"

#include <errno.h>
#include <stdio.h>

#include <cryptod/ring_abi.h>

#include "fixture.h"

struct crd_region_hdr *sc_region(struct cc_queue *q)
{
	struct cc_sgl_entry *e = cc_buf_alloc(q, sizeof(*e));
	uint8_t *p = cc_buf_alloc(q, 64), *base;
	struct crd_region_hdr *h = NULL;
	size_t back;

	if (!e || !p || cc_sgl_set(q, e, 0, p, 64))
		goto out;
	base = p - e->off;
	/* Every line between the header and the arena is mapped: step back
	 * until one holds the magic and names this distance. */
	for (back = CRD_CACHELINE; back <= (64u << 20); back += CRD_CACHELINE) {
		struct crd_region_hdr *c =
			(struct crd_region_hdr *)(base - back);

		if (c->magic == CRD_REGION_MAGIC && c->arena_off == back) {
			h = c;
			break;
		}
	}
out:
	if (e)
		cc_buf_free(q, e);
	if (p)
		cc_buf_free(q, p);
	return h;
}

int sc_submit_edited(struct cc_queue *q, const struct cc_op *op,
		     void (*edit)(struct crd_sqe *e, void *arg), void *arg)
{
	struct crd_region_hdr *h = sc_region(q);
	struct crd_sqe *sq;
	uint32_t tail;
	int r;

	if (!h) {
		fprintf(stderr, "the queue's region header not found\n");
		return -ENOENT;
	}
	sq = (struct crd_sqe *)((uint8_t *)h + h->sq_off);
	tail = __atomic_load_n(&h->ksq_tail.k, __ATOMIC_ACQUIRE);
	r = cc_submit(q, op);
	if (r)
		return r;
	if (__atomic_load_n(&h->ksq_tail.k, __ATOMIC_ACQUIRE) != tail) {
		fprintf(stderr, "cc_submit published at once: cannot edit\n");
		return -EAGAIN;
	}
	edit(&sq[tail & (h->sq_entries - 1)], arg);
	r = cc_flush(q);
	return r < 0 ? r : 0;
}

int sc_collect(struct cc_queue *q, struct cc_completion *comps, unsigned n,
	       int timeout_ms)
{
	uint64_t deadline = fx_now_ms() + (uint64_t)timeout_ms;
	unsigned got = 0;
	int r;

	while (got < n) {
		r = cc_dequeue_burst(q, comps + got, n - got);
		if (r < 0)
			return r;
		got += (unsigned)r;
		if (got == n)
			break;
		if (fx_now_ms() >= deadline)
			return -ETIMEDOUT;
		r = cc_wait(q, 100);
		if (r < 0)
			return r;
	}
	return 0;
}
