/* SPDX-License-Identifier: MIT */
/*
 * Single-op submission with the batching hidden (cc_submit) and
 * completion callbacks (cc_poll). Entries are written into the ring at
 * once, privately; the tail is published once per coalesced batch, so a
 * caller submitting one op at a time still costs the worker one tail
 * load and, at most, the client one doorbell per batch.
 */
#include "internal.h"

#include <errno.h>
#include <time.h>

#include <cryptod/clock.h>

enum {
	SUBMIT_DEFAULT_COALESCE = 32,
	SUBMIT_DEFAULT_FLUSH_US = 50,
	SUBMIT_PREFETCH = 8,	/* slots ahead asked for */
	SUBMIT_CLOCK_EVERY = 8, /* staged ops between deadline checks */
};

void submit_init(struct cc_queue *q, const struct cc_queue_params *p)
{
	unsigned c = p && p->coalesce ? p->coalesce : SUBMIT_DEFAULT_COALESCE;
	unsigned us = p && p->flush_us ? p->flush_us : SUBMIT_DEFAULT_FLUSH_US;
	q->coalesce = c < q->sq_entries ? c : q->sq_entries;
	q->flush_ns = (uint64_t)us * 1000;
}

int cc_submit(struct cc_queue *q, const struct cc_op *op)
{
	if (conn_forked(q->conn))
		return -ECHILD;
	if (crd_load_acquire(&q->hdr->daemon.kflags) & CRD_F_DEAD)
		return -EPIPE;
	if (q->sq_free_hint == 0) {
		q->sq_free_hint = queue_space(q);
		if (q->sq_free_hint == 0) {
			queue_count_retries(q, 1);
			if (q->staged) /* what is staged must go first */
				queue_publish(q);
			return -EAGAIN;
		}
	}
	uint32_t mask = q->sq_entries - 1;
	/* A free slot a few ops ahead: its line is here by the time that op
	 * comes (it was last read by the worker). */
	if (q->sq_free_hint > SUBMIT_PREFETCH)
		__builtin_prefetch(
			&q->sq[(q->sq_tail + SUBMIT_PREFETCH) & mask]);
	int err = queue_fill(q, op, &q->sq[q->sq_tail & mask]);
	if (err)
		return err;
	q->sq_tail++;
	q->sq_free_hint--;
	/* The flush deadline is checked on the first staged op and on every
	 * eighth after it (and by every cc_poll, cc_wait, dequeue): one
	 * clock read per op cost as much as the rest of cc_submit. */
	if (q->staged++ == 0)
		q->staged_since = crd_now_ns();
	else if (!(q->staged & (SUBMIT_CLOCK_EVERY - 1)) &&
		 crd_now_ns() - q->staged_since >= q->flush_ns) {
		queue_publish(q);
		return 0;
	}
	if (q->staged >= q->coalesce)
		queue_publish(q);
	return 0;
}

int cc_flush(struct cc_queue *q)
{
	int n = (int)q->staged;
	if (n)
		queue_publish(q);
	return n;
}

void cc_set_callback(struct cc_queue *q, cc_completion_fn *fn, void *arg)
{
	q->cb = fn;
	q->cb_arg = arg;
}

int cc_poll(struct cc_queue *q, unsigned max)
{
	struct cc_completion c[64];
	unsigned done = 0;
	cc_flush(q);
	while (done < max) {
		unsigned want = max - done < 64 ? max - done : 64;
		int n = cc_dequeue_burst(q, c, want);
		if (n <= 0)
			return n < 0 && !done ? n : (int)done;
		for (int i = 0; i < n; i++)
			if (q->cb)
				q->cb(q->cb_arg, &c[i]);
		done += (unsigned)n;
	}
	return (int)done;
}
