/* SPDX-License-Identifier: MIT */
/*
 * For the refusal tests (test_bad_stream_*): access to a queue's
 * submission ring, so that a staged descriptor can be edited before it
 * is published.
 *
 * Functions return 0 or a negative errno.
 */
#ifndef CRYPTOD_TEST_STREAM_RING_H
#define CRYPTOD_TEST_STREAM_RING_H

#include <cryptoclient.h>
#include <cryptod/ring_abi.h>

/*
 * The region behind q (found from the arena: the header lies a whole
 * number of cache lines before it). NULL if not found.
 */
struct crd_region_hdr *sc_region(struct cc_queue *q);
/*
 * Stage op with cc_submit() (q must have coalesce and flush_us large
 * enough that it stays staged), let edit() change its descriptor in the
 * ring, then publish it with cc_flush(). 0 or -errno.
 */
int sc_submit_edited(struct cc_queue *q, const struct cc_op *op,
		     void (*edit)(struct crd_sqe *e, void *arg), void *arg);
/* Wait for n completions of q (after sc_submit_edited). */
int sc_collect(struct cc_queue *q, struct cc_completion *comps, unsigned n,
	       int timeout_ms);

#endif
