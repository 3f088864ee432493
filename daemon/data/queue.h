/* SPDX-License-Identifier: MIT */
/*
 * Client queues: one shared-memory region per queue, created and sealed
 * by the daemon (memfd, fallocate, F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_SEAL)
 * so that a client can never make the daemon fault by truncating it.
 */
#ifndef CRYPTOD_QUEUE_H
#define CRYPTOD_QUEUE_H

#include <cryptod/compiler.h>

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <cryptod/ring_abi.h>

#include "bounds.h"
#include "lathist.h"
#include "order.h"
#include "streams.h"

struct session_table;
struct worker;

enum { QUEUE_HIST = 8 }; /* 1, 2-3, 4-7, ..., 64-127 */
_Static_assert(WORKER_BURST < (1 << QUEUE_HIST), "histogram covers a run");

struct queue_stats {
	/* Added to by the serving workers (relaxed), read by stats. */
	_Atomic uint64_t ops, bytes, errors, auth_failures, empty_polls,
		wakeups;
	/* Runs claimed, by size: [k] counts runs of 2^k .. 2^(k+1)-1 ops. */
	_Atomic uint64_t batch_hist[QUEUE_HIST];
	/* Service time per op, claim to post (lathist.h), added once per
	 * run: the ops of a run share its time. */
	_Atomic uint64_t lat_sum_ns;
	_Atomic uint64_t lat_hist[LAT_BUCKETS];
};

struct queue {
	uint32_t id; /* unique while the daemon runs */
	/* The owner's session table (not owned) and, for log lines, its
	 * connection id and uid: set by client_queue_open(). */
	const struct session_table *sessions;
	uint32_t owner_id;
	uid_t owner_uid;
	/* Its owner's fair-share slot (fair.h), a reference of its own:
	 * set before worker_attach, put back when the queue is freed. */
	uint16_t user;

	/* Private copies of the geometry: never read back from the region. */
	uint32_t sq_entries, cq_entries;
	uint64_t region_size, arena_size;

	/* Owned mapping of the region and views into it. */
	uint8_t *base;
	struct crd_region_hdr *hdr;
	const struct crd_sqe *sq;
	struct crd_cqe *cq;
	uint8_t *arena;

	int memfd; /* owned; also handed to the client */
	/* Doorbells, private to this queue (doorbell.h). All owned. */
	int sq_efd;  /* client -> daemon: an eventfd the daemon never reads
		      * or writes; the pool's epoll watches it, edge-triggered */
	int cq_sock; /* daemon -> client: our end of a socketpair, shut for
		      * reading, written with MSG_DONTWAIT */
	int cq_peer; /* the client's end, until handed over (-1 after) */

	/* Ordering state shared by the workers that serve the queue. */
	struct order ord;
	_Atomic int broken; /* the client lied about an index: not served */
	/* The client's karm the last wake-up was rung for (worker_post):
	 * one ring per arm. */
	uint32_t rung_arm;
	/* Its open streams and the pieces on their way to the poster. */
	struct stream_table streams;

	struct queue_stats st;
};

/*
 * Create a queue region. sq/cq entries 0 = default; they must be powers
 * of two within the ABI bounds and cq >= sq; arena_size 0 = default,
 * rounded up to CRD_ARENA_ALIGN. Returns 0 or -errno (-EINVAL bad
 * geometry, -ENOMEM, ...).
 */
CRD_MUST_CHECK int queue_create(uint32_t id, uint32_t sq_entries,
				uint32_t cq_entries, uint64_t arena_size,
				struct queue **out);
/* Unmap, close and free. The caller made sure no worker sees it. */
void queue_destroy(struct queue *q);

/* Ops submitted but not completed (informational: reads shared memory). */
uint32_t queue_in_flight(const struct queue *q);

#endif
