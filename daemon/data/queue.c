/* SPDX-License-Identifier: MIT */
#include "queue.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "doorbell.h"

static int queue_geometry(uint32_t *sq, uint32_t *cq, uint64_t *arena)
{
	if (!*sq)
		*sq = CRD_RING_DEFAULT_ENTRIES;
	if (!*cq)
		*cq = *sq;
	if (!crd_is_pow2(*sq) || !crd_is_pow2(*cq) ||
	    *sq < CRD_RING_MIN_ENTRIES || *sq > CRD_RING_MAX_ENTRIES ||
	    *cq < *sq || *cq > CRD_RING_MAX_ENTRIES)
		return -EINVAL;
	if (!*arena)
		*arena = CRD_ARENA_DEFAULT_SIZE;
	if (*arena < CRD_ARENA_MIN_SIZE || *arena > CRD_ARENA_MAX_SIZE)
		return -EINVAL;
	*arena = crd_align_up(*arena, CRD_ARENA_ALIGN);
	return 0;
}

int queue_create(uint32_t id, uint32_t sq_entries, uint32_t cq_entries,
		 uint64_t arena_size, struct queue **out)
{
	int err = queue_geometry(&sq_entries, &cq_entries, &arena_size);
	if (err)
		return err;

	uint64_t sq_off = CRD_HDR_SIZE;
	uint64_t cq_off = crd_align_up(
		sq_off + (uint64_t)sq_entries * sizeof(struct crd_sqe), 4096);
	uint64_t arena_off = crd_align_up(
		cq_off + (uint64_t)cq_entries * sizeof(struct crd_cqe), 4096);
	uint64_t size = arena_off + arena_size;

	struct queue *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->id = id;
	q->sq_entries = sq_entries;
	q->cq_entries = cq_entries;
	q->arena_size = arena_size;
	q->region_size = size;
	q->sq_efd = q->cq_sock = q->cq_peer = -1;

	q->memfd =
		memfd_create("cryptod-queue", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (q->memfd < 0) {
		err = -errno;
		goto err_free;
	}
	/* fallocate, not ftruncate: the pages exist now, so touching them
	 * later cannot fail for lack of memory (no SIGBUS in the worker). */
	err = posix_fallocate(q->memfd, 0, (off_t)size);
	if (err) {
		err = -err;
		goto err_close_memfd;
	}
	if (fcntl(q->memfd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		err = -errno;
		goto err_close_memfd;
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, q->memfd,
		       0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto err_close_memfd;
	}
	q->base = p;

	err = doorbell_pair(&q->sq_efd, &q->cq_sock, &q->cq_peer);
	if (err)
		goto err_unmap;
	err = order_init(&q->ord, sq_entries, cq_entries);
	if (err)
		goto err_doorbells;
	err = stream_table_init(&q->streams, cq_entries);
	if (err)
		goto err_order;

	q->hdr = (struct crd_region_hdr *)q->base;
	q->sq = (const struct crd_sqe *)(q->base + sq_off);
	q->cq = (struct crd_cqe *)(q->base + cq_off);
	q->arena = q->base + arena_off;
	for (uint32_t i = 0; i < cq_entries; i++) /* CRD_FEAT_CQE_SLOT */
		q->cq[i].status = CRD_CQE_EMPTY;
	q->hdr->magic = CRD_REGION_MAGIC;
	q->hdr->abi_version = CRD_ABI_VERSION;
	q->hdr->sq_entries = sq_entries;
	q->hdr->cq_entries = cq_entries;
	q->hdr->sq_off = sq_off;
	q->hdr->cq_off = cq_off;
	q->hdr->arena_off = arena_off;
	q->hdr->arena_size = arena_size;
	q->hdr->region_size = size;
	*out = q;
	return 0;

err_order:
	order_fini(&q->ord);
err_doorbells:
	doorbell_close(&q->sq_efd, &q->cq_sock, &q->cq_peer);
err_unmap:
	munmap(q->base, size);
err_close_memfd:
	close(q->memfd);
err_free:
	free(q);
	return err;
}

void queue_destroy(struct queue *q)
{
	if (!q)
		return;
	/* Tell a client still mapping the region that nobody serves it. */
	crd_fetch_or_release_n(&q->hdr->daemon.kflags, CRD_F_DEAD);
	doorbell_ring_client(q->cq_sock);
	munmap(q->base, q->region_size);
	q->base = NULL;
	close(q->memfd);
	doorbell_close(&q->sq_efd, &q->cq_sock, &q->cq_peer);
	order_fini(&q->ord);
	stream_table_fini(&q->streams); /* wipes every stream's state */
	free(q);
}

uint32_t queue_in_flight(const struct queue *q)
{
	/* Submitted by the client minus completed by us, both read from the
	 * region: the worker's private indices are not ours to read here.
	 * The client's index is untrusted; clamp what we report. */
	uint32_t used = crd_load_relaxed(&q->hdr->ksq_tail.k) -
			crd_load_relaxed(&q->hdr->kcq_tail.k);
	return used > q->cq_entries ? q->cq_entries : used;
}
