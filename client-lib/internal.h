/* SPDX-License-Identifier: MIT */
#ifndef CRYPTOCLIENT_INTERNAL_H
#define CRYPTOCLIENT_INTERNAL_H

#include <cryptod/compiler.h>

#include <pthread.h>
#include <stdint.h>

#include <cryptod/ring_abi.h>

#include "cryptoclient.h"
#include "wire.h"

/* Arena allocator (arena.c): private metadata only, nothing in the
 * shared region, so the daemon can never corrupt it. */
struct arena_ext {
	uint32_t off, len; /* in granules */
};
struct arena_alloc {
	uint32_t granules;
	struct arena_ext *free; /* owned; sorted by offset, coalesced */
	uint32_t nfree, cap_free;
	/* Open-addressed map: start granule + 1 -> length in granules. */
	uint32_t *keys, *vals; /* owned */
	uint32_t map_cap, map_used;
	uint32_t map_bits; /* log2(map_cap) */
};

#define ARENA_GRANULE 64u

CRD_MUST_CHECK int arena_init(struct arena_alloc *a, uint64_t bytes);
void arena_fini(struct arena_alloc *a);
/* Returns a byte offset, or -1 when no extent is large enough. */
int64_t arena_alloc(struct arena_alloc *a, uint64_t bytes);
/* 0, or -EINVAL when off is not an allocation. */
int arena_free(struct arena_alloc *a, uint64_t off);

struct cc_queue {
	struct cc_conn *conn; /* not owned */
	struct cc_queue *next,
		**pprev; /* conn->queues list, under conn->lock */
	uint32_t id;

	uint8_t *base; /* owned mapping */
	uint64_t region_size;
	struct crd_region_hdr *hdr;
	struct crd_sqe *sq;
	struct crd_cqe *cq; /* we write CRD_CQE_EMPTY back (cqe_slot) */
	uint8_t *arena;
	uint64_t arena_size;
	uint32_t sq_entries, cq_entries;

	int sq_efd;  /* owned: rings the serving worker */
	int cq_sock; /* owned: the daemon rings it (our end of a socketpair:
		      * each byte is a wake-up, read with MSG_DONTWAIT) */

	uint32_t sq_tail; /* private producer index (published or staged) */
	uint32_t cq_head; /* private consumer index */
	/* The daemon's sq head as last read (a lower bound: it only
	 * grows), and our cq head as last published (queue.c: both spare
	 * a line that crosses cores at every op). */
	uint32_t sq_head_seen, cq_head_pub;
	/* The daemon's membarrier orders our tail store before our flag
	 * load (CRD_FEAT_SQ_MEMBARRIER, and conn.membarrier). */
	int sq_fenceless;
	/* Completions are polled at their slot, not at the daemon's tail
	 * (CRD_FEAT_CQE_SLOT; queue.c). */
	int cqe_slot;
	/* The last arm count written to client.karm (0: every batch
	 * rings), the daemon's ring count just before it, and the bytes
	 * read from the doorbell (free-running, as the ring count). */
	uint32_t arm, arm_rung, bells_read;
	uint64_t retries;

	/* Coalescing (submit.c): ops written but not yet published. */
	unsigned staged;
	unsigned coalesce;     /* publish when this many are staged */
	uint64_t flush_ns;     /* ... or when the first is this old */
	uint64_t staged_since; /* CLOCK_MONOTONIC ns of the first */
	/* cc_submit: free slots known at the last look at the daemon's
	 * head (a lower bound: slots only get freed), so that single ops
	 * do not read the shared head line one by one. */
	uint32_t sq_free_hint;
	/* Stream slots not taken (bit per slot; cc_stream_handle_get) and
	 * the counter that gives each stream its handle's tag. */
	uint32_t stream_free;
	uint32_t stream_seq;
	uint32_t stream_handle[CRD_STREAMS_PER_QUEUE]; /* the slot's taker */
	/* The number of the taker's next piece (ring_abi.h): 1 after its
	 * FIRST went, 0 before (its pieces then go unnumbered). */
	uint32_t stream_piece[CRD_STREAMS_PER_QUEUE];
	cc_completion_fn *cb; /* cc_poll() callback */
	void *cb_arg;

	struct arena_alloc alloc;
};

struct cc_conn {
	int fd;
	pthread_mutex_t lock; /* serialises control calls */
	uint32_t seq;
	char version[32];
	int daemon_pid; /* SO_PEERCRED at connect */
	/* This process takes the daemon's membarriers
	 * (MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED succeeded). */
	int membarrier;
	/* A private page that fork() hands the child zeroed
	 * (MADV_WIPEONFORK): a child must not use its parent's socket or
	 * rings (conn_forked). */
	volatile uint8_t *fork_guard;
	char last_error[256];
	uint8_t *rx; /* owned, CTL_MSG_MAX */

	uint8_t *tag_len;  /* owned: per session id, from create */
	uint8_t *sess_alg; /* owned: per session id, from create */
	uint32_t max_sessions;

	struct cc_queue *queues; /* open queues, closed by cc_disconnect */

	/* Synchronous one-shot API (sync.c). */
	pthread_mutex_t sync_lock;
	struct cc_queue *sync_q; /* owned */
	uint64_t sync_seq;	 /* user_data of the last one-shot op */

	/* Copying streams (stream.c): one queue for all of them, opened on
	 * first use; stream_gen counts its openings, so a stream opened on
	 * a queue since closed knows its daemon state is gone. */
	pthread_mutex_t stream_lock;
	struct cc_queue *stream_q; /* owned */
	uint64_t stream_gen;
	uint64_t stream_seq; /* user_data of the last piece */

	/* The key pairs' ops of the last StatsReply (cc_stats_key_pairs),
	 * under lock. */
	struct cc_key_pair_ops last_pk[CC_KEY_PAIR_ALGS];
	unsigned n_last_pk;
};

/* Is this a child of the process that opened c (fork)? Its socket and
 * rings are the parent's: nothing may be sent or written there. */
static inline int conn_forked(const struct cc_conn *c)
{
	return c->fork_guard[0] == 0;
}

/*
 * call.c: send req (seq filled in), wait for the reply with the same seq.
 * Returns 0 with *reply (free with wire_free) or -errno; an Error reply
 * becomes its code and its text goes to conn->last_error. fds/nfds may be
 * NULL when none are expected. Caller holds conn->lock.
 */
CRD_MUST_CHECK int conn_call(struct cc_conn *c, Cryptod__Envelope *req,
			     Cryptod__Envelope **reply, int *fds,
			     unsigned *nfds);

/* submit.c: coalescing parameters from the queue's params (may be NULL). */
void submit_init(struct cc_queue *q, const struct cc_queue_params *p);

/* queue.c, for submit.c */
CRD_MUST_CHECK int queue_fill(struct cc_queue *q, const struct cc_op *op,
			      struct crd_sqe *e);
/* Publish every entry written so far (staged too); ring if asked. */
void queue_publish(struct cc_queue *q);
void queue_cq_head_publish(struct cc_queue *q, int force);
/* Free submission slots (published and staged entries count as used). */
uint32_t queue_space(struct cc_queue *q);
void queue_count_retries(struct cc_queue *q, unsigned n);

/* queue_open.c: unmap and free a queue (no control message). */
void queue_free(struct cc_queue *q);

/* call.c: a call answered by an Ack, the caller holding c->lock or not.
 * 0 or -errno. */
CRD_MUST_CHECK int conn_simple_locked(struct cc_conn *c,
				      Cryptod__Envelope *req);
CRD_MUST_CHECK int conn_simple(struct cc_conn *c, Cryptod__Envelope *req);
/* CloseQueue round trip. 0 or -errno. */
int conn_close_queue(struct cc_conn *c, uint32_t queue_id);

/* The one-shot queue (sync.c), under conn->sync_lock: make sure its
 * arena holds need bytes; run op and wait for its own completion (its
 * status; *out_len, if given, its len). cc_crypt and cc_pk_op use them. */
int sync_queue(struct cc_conn *c, uint64_t need);
int sync_run(struct cc_conn *c, struct cc_op *op, uint32_t *out_len);
/* A one-shot's frame (cc_crypt, cc_pk_op): sync_begin takes the
 * connection's one-shot lock and need bytes of its queue's arena in
 * *base (0, or -errno with the lock let go); sync_end gives them back,
 * wiped (nothing lingers in shared memory), or, when lost (the op may
 * still be in flight, or the daemon is gone: sync_run's -errno), closes
 * the queue instead, so that the daemon stops serving it and the next
 * call opens a fresh one; then it lets the lock go and returns err. */
int sync_begin(struct cc_conn *c, uint64_t need, uint8_t **base);
int sync_end(struct cc_conn *c, uint8_t *base, uint64_t need, int lost,
	     int err);

#endif
