/* SPDX-License-Identifier: MIT */
/*
 * Open and close a queue: the control round trips, mapping the region the
 * daemon made, and setting up what queue.c and submit.c run on. Above
 * both (they never call back here); conn.c closes what is left open.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int queue_map(struct cc_queue *q, const Cryptod__OpenQueueReply *r,
		     int memfd)
{
	/* The reply comes from the daemon we chose to trust; still, check
	 * the geometry adds up before we index with it. */
	if (!crd_is_pow2(r->sq_entries) || !crd_is_pow2(r->cq_entries) ||
	    r->sq_off < sizeof(struct crd_region_hdr) ||
	    r->sq_off + (uint64_t)r->sq_entries * sizeof(struct crd_sqe) >
		    r->cq_off ||
	    r->cq_off + (uint64_t)r->cq_entries * sizeof(struct crd_cqe) >
		    r->arena_off ||
	    r->arena_off + r->arena_size > r->region_size)
		return -EPROTO;
	void *p = mmap(NULL, r->region_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       memfd, 0);
	if (p == MAP_FAILED)
		return -errno;
	q->base = p;
	q->region_size = r->region_size;
	q->hdr = p;
	q->sq = (struct crd_sqe *)(q->base + r->sq_off);
	q->cq = (struct crd_cqe *)(q->base + r->cq_off);
	q->arena = q->base + r->arena_off;
	q->arena_size = r->arena_size;
	q->sq_entries = r->sq_entries;
	q->cq_entries = r->cq_entries;
	q->id = r->queue_id;
	if (q->hdr->magic != CRD_REGION_MAGIC ||
	    q->hdr->abi_version != CRD_ABI_VERSION) {
		munmap(p, r->region_size);
		return -EPROTO;
	}
	return 0;
}

int cc_queue_open(struct cc_conn *c, const struct cc_queue_params *p,
		  struct cc_queue **out)
{
	Cryptod__OpenQueue m = CRYPTOD__OPEN_QUEUE__INIT;
	if (p) {
		m.sq_entries = p->sq_entries;
		m.cq_entries = p->cq_entries;
		m.arena_size = p->arena_size;
	}
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_OPEN_QUEUE;
	req.open_queue = &m;

	struct cc_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->conn = c;
	q->sq_efd = q->cq_sock = -1;

	int fds[CTL_MAX_FDS];
	unsigned nfds = 0;
	Cryptod__Envelope *rep;
	pthread_mutex_lock(&c->lock);
	int err = conn_call(c, &req, &rep, fds, &nfds);
	pthread_mutex_unlock(&c->lock);
	if (err)
		goto err_free;
	if (rep->body_case != CRYPTOD__ENVELOPE__BODY_OPEN_QUEUE_REPLY ||
	    nfds != 3) {
		err = -EPROTO;
		goto err_reply;
	}
	err = queue_map(q, rep->open_queue_reply, fds[0]);
	if (err)
		goto err_reply;
	close(fds[0]); /* the mapping keeps the region alive */
	q->sq_fenceless =
		c->membarrier && (q->hdr->features & CRD_FEAT_SQ_MEMBARRIER);
	q->cqe_slot = !!(q->hdr->features & CRD_FEAT_CQE_SLOT);
	q->sq_efd = fds[1];
	q->cq_sock = fds[2];
	wire_free(rep);

	submit_init(q, p);
	_Static_assert(CRD_STREAMS_PER_QUEUE == 32, "stream_free is a u32");
	q->stream_free = 0xffffffffu;
	pthread_mutex_lock(&c->lock);
	q->next = c->queues;
	if (q->next)
		q->next->pprev = &q->next;
	q->pprev = &c->queues;
	c->queues = q;
	pthread_mutex_unlock(&c->lock);
	err = arena_init(&q->alloc, q->arena_size);
	if (err) {
		cc_queue_close(q);
		return err;
	}
	*out = q;
	return 0;

err_reply:
	wire_free(rep);
	wire_close_fds(fds, nfds);
err_free:
	free(q);
	return err;
}

/* Unmap and free; the daemon has stopped serving q or will. */
void queue_free(struct cc_queue *q)
{
	munmap(q->base, q->region_size);
	close(q->sq_efd);
	close(q->cq_sock);
	arena_fini(&q->alloc);
	free(q);
}

void cc_queue_close(struct cc_queue *q)
{
	if (!q)
		return;
	if (conn_forked(q->conn)) {
		/* A child of fork(): the queue is the parent's, which keeps
		 * it. Unmap our copy only; no lock, whose holder may have
		 * been another thread of the parent. */
		*q->pprev = q->next;
		if (q->next)
			q->next->pprev = q->pprev;
		queue_free(q);
		return;
	}
	pthread_mutex_lock(&q->conn->lock);
	*q->pprev = q->next;
	if (q->next)
		q->next->pprev = q->pprev;
	pthread_mutex_unlock(&q->conn->lock);
	/* Tell the daemon first: it stops serving, then we unmap. If the
	 * connection is gone the daemon already dropped the queue. */
	conn_close_queue(q->conn, q->id);
	queue_free(q);
}
