/* SPDX-License-Identifier: MIT */
/*
 * The worker pool. Every worker serves every queue. A pass gives every
 * user (uid) one turn, fair by bytes (fair.h): runs of at most
 * WORKER_BURST descriptors from that user's queues in turn, while its
 * credit lasts, so a flooding client gets no more than its share however
 * many queues it holds and however large its ops. A queue's backlog is
 * split between workers (order.c keeps its completions in submission
 * order), so one queue's ops run on several cores at once.
 *
 * Waking: workers busy-poll while work flows. The last worker to go idle
 * sets NEED_WAKEUP in every queue before it sleeps in epoll_wait on the
 * pool's private epoll, which holds every queue's own submission doorbell
 * (edge-triggered: doorbell.h) and the pool's private wake eventfd; clients
 * ring only while NEED_WAKEUP is set. A worker that leaves a backlog behind
 * rings the wake eventfd for its sleeping siblings. A parked worker also
 * looks at the rings every PARK_TIMEOUT_MS by itself, so a wake-up that was
 * lost (a client that filled its own doorbell, say) costs at most that.
 */
#include "worker.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cryptod/clock.h>

#include "bounds.h"
#include "counters.h"
#include "desc.h"
#include "doorbell.h"
#include "engine.h"
#include "log.h"
#include "order.h"
#include "queue.h"
#include "fair.h"
#include "session.h"
#include "stage.h"
#include "streams.h"

/* A completion as two 64-bit words, as struct crd_cqe lays them out on a
 * little-endian machine. */
typedef uint64_t cqe_words __attribute__((vector_size(16)));
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&
		       sizeof(cqe_words) == sizeof(struct crd_cqe) &&
		       offsetof(struct crd_cqe, status) == 8 &&
		       offsetof(struct crd_cqe, len) == 12,
	       "cqe packing");

/* Completion seq of q: one aligned 16-byte store, which no reader sees
 * half done (CRD_FEAT_CQE_SLOT: a client may poll the slot itself). The
 * op's output and counters come first. A bit-length op's len is its
 * byte extent; an op that failed wrote nothing. */
static void cqe_write(struct queue *q, uint32_t seq, uint64_t user_data,
		      int32_t status, uint32_t len)
{
	if (status != CRD_ST_OK)
		len = 0;
	cqe_words v = { user_data, (uint32_t)status | (uint64_t)len << 32 };
	*(volatile cqe_words *)(void *)&q->cq[seq & (q->cq_entries - 1)] = v;
}

/* One user's queues in a worker's copy of the list: local[first ..
 * first + n), all of sched slot user. */
struct worker_group {
	uint16_t first, n, user;
};
_Static_assert(MAX_QUEUES <= UINT16_MAX && MAX_USERS <= UINT16_MAX,
	       "worker_group fields");

struct worker {
	unsigned idx;
	pthread_t thread;

	/* Grace periods (see worker.h): the pool's grace epoch this worker
	 * saw at its last quiescent state; parked while asleep. */
	_Atomic uint64_t seen;
	_Atomic int parked;
	_Atomic int exited;
	int joined; /* control thread only */

	/* Worker-private. */
	struct queue *local[MAX_QUEUES]; /* copy of the pool's list */
	unsigned nlocal;
	struct worker_group grp[MAX_QUEUES]; /* local[] by user */
	unsigned ngrp;
	unsigned seen_gen;
	unsigned rr; /* the group the next pass starts with */
	void *eng_ctx[ENGINE_MAX];
	struct stage stage; /* segment lists, bounce buffer, session-less */
	/* The clock at the end of the last run, while runs follow each
	 * other without an idle pass: the next run's start, for free. */
	uint64_t t_last;
	int t_valid;
	_Alignas(64) struct worker_counters wc; /* counters.h */
};

static struct {
	struct worker *w; /* owned array */
	unsigned n;
	struct worker_config cfg;
	int efd;  /* owned, private: the daemon's own threads ring it */
	int epfd; /* owned, private: efd and every queue's sq doorbell */
	/* owned, private: workers ring it when they pass a quiescent state
	 * while a grace period is open; the control thread reads it */
	int grace_efd;
	_Atomic int stop;
	_Atomic unsigned awake; /* workers not asleep on the doorbell */
	_Atomic uint64_t grace; /* the newest grace period's epoch */
	/* Parking runs membarrier (or workers never park): every queue
	 * carries CRD_FEAT_SQ_MEMBARRIER. */
	int sq_membarrier;

	/* The published queue list, kept in order of the queues' user
	 * slots (so a worker's copy has each user's queues together):
	 * written by the control thread under lock, copied by each worker
	 * when gen moves. The lock is held for a copy, never across an
	 * engine call. */
	pthread_mutex_t lock;
	struct queue *qs[MAX_QUEUES];
	unsigned nq;
	_Atomic unsigned gen;
} pool = { .efd = -1, .epfd = -1, .grace_efd = -1 };

/* epoll_event.data of the pool's wake eventfd; queues carry 0. */
enum { POOL_EV_WAKE = 1 };

static void worker_refresh(struct worker *w)
{
	if (atomic_load(&pool.gen) == w->seen_gen)
		return;
	pthread_mutex_lock(&pool.lock);
	memcpy(w->local, pool.qs, pool.nq * sizeof(pool.qs[0]));
	w->nlocal = pool.nq;
	w->seen_gen = atomic_load(&pool.gen);
	pthread_mutex_unlock(&pool.lock);
	w->ngrp = 0;
	for (unsigned i = 0; i < w->nlocal; i++) {
		struct worker_group *g = &w->grp[w->ngrp];
		if (w->ngrp && g[-1].user == w->local[i]->user) {
			g[-1].n++;
			continue;
		}
		*g = (struct worker_group){ .first = (uint16_t)i,
					    .n = 1,
					    .user = w->local[i]->user };
		w->ngrp++;
	}
}

static void queue_set_dead(struct queue *q)
{
	if (atomic_exchange(&q->broken, 1))
		return;
	log_peer(q->owner_uid, LOG_WARN_,
		 "client %u queue %u: ring index out of range, queue stopped",
		 q->owner_id, q->id);
	crd_fetch_or_release_n(&q->hdr->daemon.kflags, CRD_F_DEAD);
	(void)doorbell_ring_client(q->cq_sock);
}

/*
 * Ask for the lines of a chained algorithm's data (algs.h: CBC
 * encryption, the CBC-MACs, SHA-2, key wrap) before its engine walks
 * them one block after another, at most WORKER_PREFETCH bytes, for
 * lone ops (a run of at most WORKER_PREFETCH_OPS: many ops interleave
 * in the engines' lanes, where the hardware's prefetchers keep up).
 * The client wrote the input on its own core and read the last output
 * there, and a serial walk otherwise waits out one cross-core transfer
 * per line: cryptoctl bench -a aes-cbc, 16 KiB one op at a time, ran at
 * 8.0 Gbps with the client leaving the data alone, 2.7 when it wrote
 * each input and read each output (--touch, as every provider op does),
 * and 6.0 with this. Not for the parallel modes (GCM, CTR, ChaCha20),
 * whose wide loads overlap their misses on their own: there it cost.
 *
 * Plain prefetches, also for the lines the engine writes. Asked for
 * with intent to write (PREFETCHW, which GCC emits only for a target
 * with prfchw), the lines come over owned, and that cost: the provider's
 * synchronous 16 KiB AES-CBC ran at 0.45-0.87 of this, interleaved
 * (2026-12-06); and the same for small ops of the parallel modes moved
 * 1 KiB AES-GCM only within the noise (0.89-1.17), as did PREFETCHW for
 * the rings' lines (the client's entries, our completions: median 0.97
 * over 8 rounds). So every prefetch in the data path is a plain one.
 */
enum { WORKER_PREFETCH = 64 << 10, WORKER_PREFETCH_OPS = 2 };

static void worker_prefetch(const struct engine_op *ops, unsigned n)
{
	uint32_t left = WORKER_PREFETCH;
	for (unsigned i = 0; i < n && left; i++) {
		const struct engine_op *op = &ops[i];
		if (op->status != CRD_ST_OK || op->sgl ||
		    !(crd_alg_flags(op->sess->alg) & CRD_AF_CHAINED))
			continue;
		uint32_t len = op->len < left ? op->len : left;
		left -= len;
		for (uint32_t o = 0; o < len; o += 64) {
			__builtin_prefetch(op->src + o);
			if (op->dst && op->dst != op->src)
				__builtin_prefetch(op->dst + o);
		}
	}
}

/*
 * The run step, in submission order: consecutive valid flat ops that
 * share an engine go down as one burst; a scatter-gather op runs alone
 * through the bounce buffer (gather, run, scatter) from the lists resolve
 * kept in its stage slot.
 */
static void worker_run(struct worker *w, uint8_t *arena, struct engine_op *ops,
		       unsigned n)
{
	unsigned i = 0;
	if (n <= WORKER_PREFETCH_OPS)
		worker_prefetch(ops, n);
	while (i < n) {
		struct engine_op *op = &ops[i];
		if (op->status != CRD_ST_OK) {
			i++;
			continue;
		}
		unsigned eng = op->sess->eng_idx, j = i + 1;
		if (op->sgl) {
			stage_run(&w->stage, arena, op,
				  &w->stage.sg[op->sg_slot], w->eng_ctx[eng]);
			i = j;
			continue;
		}
		while (j < n && ops[j].status == CRD_ST_OK && !ops[j].sgl &&
		       ops[j].sess->eng_idx == eng)
			j++;
		op->sess->eng->process(w->eng_ctx[eng], op, j - i);
		i = j;
	}
}

/* The run to claim: everything for a lone worker; with siblings, an
 * even share of the backlog (at least WORKER_MIN_CHUNK) so that a burst
 * of large ops spreads over the cores. */
static uint32_t worker_chunk(uint32_t backlog)
{
	if (pool.n == 1 || backlog <= WORKER_MIN_CHUNK)
		return WORKER_BURST;
	uint32_t share = (backlog + pool.n - 1) / pool.n;
	if (share < WORKER_MIN_CHUNK)
		share = WORKER_MIN_CHUNK;
	return share < WORKER_BURST ? share : WORKER_BURST;
}

_Static_assert(WORKER_BURST <= UINT8_MAX + 1, "op->sg_slot is 8 bits");

/*
 * The validate step: check the copied entries and build their ops; run
 * nothing. Each op's segment lists (and an IV from the arena) are copied
 * out of the arena into the next free stage slot; a scatter-gather op, or
 * one whose IV came from the arena, keeps its slot for the run step, a
 * flat op leaves it to the next op (so a run of flat ops with inline IVs
 * writes one slot, as it always did).
 */
static void worker_resolve(struct worker *w, struct queue *q,
			   const struct crd_sqe *sqe, struct engine_op *ops,
			   uint32_t n)
{
	/* Bursts usually share one session: look it up once per run. */
	const struct session *s = NULL;
	uint32_t sid = 0;
	unsigned slot = 0; /* <= i: in range, never more than one per op */
	for (uint32_t i = 0; i < n; i++) {
		const struct session *os;
		if (sqe[i].flags & CRD_SQE_F_STREAM) {
			/* worker_pieces runs it after the run step, or the
			 * poster does, in order (streams.h). */
			ops[i].status = STREAM_DEFERRED;
			ops[i].sess = NULL;
			continue;
		}
		if (sqe[i].flags & CRD_SQE_F_SESSIONLESS) {
			int st = stage_sessionless(&w->stage, q->arena,
						   q->arena_size, &sqe[i],
						   w->eng_ctx, &os);
			if (st != CRD_ST_OK) {
				ops[i].status = st;
				ops[i].sess = NULL;
				continue;
			}
		} else {
			if (!s || sqe[i].session != sid) {
				sid = sqe[i].session;
				s = session_table_get(q->sessions, sid);
			}
			os = s;
		}
		desc_resolve(&sqe[i], q->arena, q->arena_size, os, &ops[i],
			     &w->stage.sg[slot]);
		if (ops[i].status != CRD_ST_OK)
			ops[i].sess = os;
		else if (desc_holds_sg(&ops[i], &w->stage.sg[slot]))
			ops[i].sg_slot = (uint8_t)slot++;
	}
}

/* The poster's serial step for q (order.h): the stream pieces of a run,
 * in submission order. */
struct worker_serial_ctx {
	struct worker *w;
	struct queue *q;
};

static uint32_t worker_serial_run(void *arg, uint32_t seq, uint32_t end,
				  int64_t *budget)
{
	struct worker *w = ((struct worker_serial_ctx *)arg)->w;
	struct queue *q = ((struct worker_serial_ctx *)arg)->q;
	struct stream_table *t = &q->streams;
	for (; seq != end; seq++) {
		const struct crd_sqe *e = &t->pend[seq & t->pend_mask];
		if (!(e->flags & CRD_SQE_F_STREAM))
			continue; /* a worker completed it in the run */
		if (*budget <= 0)
			return seq;
		uint64_t t0 = crd_now_ns();
		struct engine_op op;
		/* No stage slot is in use while this worker posts (it posts
		 * before resolving a run and after running it). */
		(void)stream_piece(t, q->sessions, q->arena, q->arena_size, e,
				   &op, w->eng_ctx, &w->stage.sg[0], 0);
		/* Its claim paid the fixed part: the rest went back when
		 * the claiming worker left it here (worker_pieces). */
		if (fair_op_ran(op.status))
			*budget -= fair_piece_cost(e);
		counters_account(&w->wc, &q->st, &op, 1, crd_now_ns() - t0);
		cqe_write(q, seq, e->user_data, op.status, op.len);
	}
	return end;
}

static void worker_serial_locked(void *arg)
{
	struct queue *q = ((struct worker_serial_ctx *)arg)->q;
	if (stream_sweep_pending(&q->streams))
		stream_sweep(&q->streams, q->sessions);
}

/*
 * The run's stream pieces, in submission order (streams.h): each whose
 * turn it is runs here, now; the others go to the poster as private
 * copies, by sequence number, and the run's other entries say they are
 * none of them. Returns whether any went. The claim paid for every
 * piece (fair_op_cost); one that goes gets its data back on *budget.
 */
static int worker_pieces(struct worker *w, struct queue *q,
			 const struct crd_sqe *sqe, struct engine_op *ops,
			 uint32_t start, uint32_t n, int64_t *budget)
{
	struct stream_table *t = &q->streams;
	int deferred = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct crd_sqe *p = &t->pend[(start + i) & t->pend_mask];
		p->flags = 0;
		if (!(sqe[i].flags & CRD_SQE_F_STREAM))
			continue;
		/* After the run step no stage slot is in use. */
		(void)stream_piece(t, q->sessions, q->arena, q->arena_size,
				   &sqe[i], &ops[i], w->eng_ctx,
				   &w->stage.sg[0], 1);
		if (ops[i].status == STREAM_DEFERRED) {
			*p = sqe[i];
			deferred = 1;
			/* the poster charges its data when it runs it */
			*budget += fair_piece_cost(&sqe[i]);
		}
	}
	return deferred;
}

/* Post what is contiguous, running stream pieces on the way while the
 * turn's budget lasts; wake a client that sleeps on completions. Returns
 * how many were posted. */
static uint32_t worker_post(struct worker *w, struct queue *q, int64_t *budget)
{
	struct worker_serial_ctx ctx = { w, q };
	const struct order_serial ser = { .run = worker_serial_run,
					  .locked = worker_serial_locked,
					  .arg = &ctx,
					  .budget = budget };
	uint32_t posted = order_post(&q->ord, q->hdr, &ser);
	if (!posted)
		return 0;
	/* Need-wakeup handshake, our half: order_post stored the tail
	 * (seq_cst); now read the client's flag and arm count. The client
	 * bumps its arm count, sets its flag, then re-reads our tail
	 * (client-lib/queue.c queue_arm): either we see this arm, or it
	 * sees our tail. One ring per arm (ring_abi.h, client.karm): the
	 * posts that follow before the client arms again find it rung. */
	if (crd_load_seq_cst(&q->hdr->client.kflags) & CRD_F_NEED_WAKEUP) {
		uint32_t arm = crd_load_seq_cst(&q->hdr->client.karm);
		if (arm && crd_exchange_relaxed_n(&q->rung_arm, arm) == arm)
			return posted;
		/* Ring, then count the byte sent: a client that reads the
		 * count knows that many bytes reached its doorbell. */
		if (doorbell_ring_client(q->cq_sock) == 0)
			crd_fetch_add_release_n(&q->hdr->daemon.krung, 1);
		stat_add(&q->st.wakeups, 1);
	}
	return posted;
}

/* The last session worker_op_cost looked up: runs share one. */
struct worker_cost_cache {
	uint32_t sid;
	const struct session *s;
};

/* The session's row's cost of e's op beyond its bytes (alg_cap.cost; 0
 * for every symmetric row), for the fair shares. A claim looks the
 * session up before resolve does; the session cannot go away under this
 * pass (grace periods), and if the id is replaced between the two
 * look-ups the share bends by one op. */
static uint32_t worker_pk_cost(const struct queue *q, const struct crd_sqe *e,
			       struct worker_cost_cache *cc)
{
	if (e->flags & (CRD_SQE_F_STREAM | CRD_SQE_F_SESSIONLESS) ||
	    e->op >= ENGINE_OP_N)
		return 0;
	if (!cc->s || cc->sid != e->session) {
		cc->sid = e->session;
		cc->s = session_table_get(q->sessions, e->session);
	}
	return cc->s ? cc->s->cap->cost[e->op] : 0;
}

static int64_t worker_op_cost(const struct queue *q, const struct crd_sqe *e,
			      struct worker_cost_cache *cc)
{
	return fair_op_cost(e, worker_pk_cost(q, e, cc));
}

/* How many of the n copied entries fit the budget, and their cost in
 * *cost: each whose cost still fits; the first even if it does not when
 * first_claim (a turn runs at least one op). Within a turn, a run never
 * overshoots: a run of one op cut off the end of the budget would make
 * the engines' multi-buffer lanes run nearly empty (CBC at 16 KiB: -35%
 * when every other run was a single op). */
static uint32_t worker_fit(const struct queue *q, const struct crd_sqe *sqe,
			   uint32_t n, int64_t budget, int first_claim,
			   int64_t *cost)
{
	struct worker_cost_cache cc = { 0 };
	int64_t c = 0;
	uint32_t i = 0;
	if (first_claim)
		c = worker_op_cost(q, &sqe[i++], &cc);
	while (i < n && c + worker_op_cost(q, &sqe[i], &cc) <= budget)
		c += worker_op_cost(q, &sqe[i++], &cc);
	*cost = c;
	return i;
}

/*
 * One visit to one queue: claim a run of descriptors (never more than the
 * completion ring can take, so a client that stops reading blocks only
 * itself, and no more bytes than the turn's budget, but at least one op),
 * validate the copies, run them, write their completions in their own
 * slots and post. What it ran comes off *budget. Returns the number of
 * ops completed.
 */
static unsigned worker_poll_queue(struct worker *w, struct queue *q,
				  int64_t *budget, int *claimed)
{
	if (atomic_load_explicit(&q->broken, memory_order_relaxed))
		return 0;

	struct crd_region_hdr *h = q->hdr;
	/* The next entry's line, asked for before the tail's: a client
	 * writes both, so both have left our cache, and the two misses
	 * then overlap instead of running in series (the tail's, then the
	 * entry's). A hint: what is read from it is read after the tail. */
	__builtin_prefetch(&q->sq[atomic_load_explicit(&q->ord.claim,
						       memory_order_relaxed) &
				  (q->sq_entries - 1)],
			   0);
	/* Pairs with the client's release store of its sq tail: entries
	 * and data written before it are visible after this load. */
	uint32_t tail = crd_load_acquire(&h->ksq_tail.k);
	/* Pairs with the client's release store of its cq head. */
	uint32_t cq_head = crd_load_acquire(&h->kcq_head.k);
	struct crd_sqe sqe[WORKER_BURST];
	struct engine_op ops[WORKER_BURST];
	uint32_t sq_mask = q->sq_entries - 1, cq_mask = q->cq_entries - 1;
	uint32_t start, left, n = 0;
	int64_t cost = 0;
	int got;
	/* Copy first, then claim what fits: the size of an op is known only
	 * from a private copy (the client may rewrite the shared entry at
	 * any moment, and nothing below reads it again). */
	for (;;) {
		uint32_t backlog =
			tail - atomic_load_explicit(&q->ord.claim,
						    memory_order_relaxed);
		got = order_peek(&q->ord, tail, cq_head, q->sq_entries,
				 q->cq_entries, worker_chunk(backlog), &start,
				 &left);
		if (got <= 0)
			break;
		/* Every entry's line comes from the client's core: ask for
		 * all of them at once, so the misses overlap instead of
		 * queueing one after the other behind the copy loop. */
		for (int i = 0; i < got; i++)
			__builtin_prefetch(&q->sq[(start + i) & sq_mask], 0);
		for (int i = 0; i < got; i++)
			memcpy(&sqe[i], &q->sq[(start + i) & sq_mask],
			       sizeof(sqe[i]));
		n = worker_fit(q, sqe, (uint32_t)got, *budget, !*claimed,
			       &cost);
		if (n == 0) {
			got = 0; /* the rest of the budget takes no op */
			break;
		}
		if (order_take(&q->ord, start, n) == 0)
			break;
		/* A sibling claimed first: its entries are not ours. */
	}
	if (got < 0) {
		queue_set_dead(q);
		return 0;
	}
	if (got == 0) {
		if (!left)
			stat_add(&q->st.empty_polls, 1);
		*budget -= FAIR_OP_COST; /* a visit is not free either */
		/* A sibling's flag may wait at the heads (see order_post),
		 * stream pieces for the poster, or a sweep. */
		if (order_pending(&q->ord) || stream_sweep_pending(&q->streams))
			return worker_post(w, q, budget);
		return 0;
	}
	left += (uint32_t)got - n;
	*budget -= cost;
	*claimed = 1;
	/* Service time starts at the claim. Back to back, the end of the
	 * last run is the start of this one (what lies between is the
	 * worker's own pass, not idle time): one clock read per run. */
	uint64_t t0 = w->t_valid ? w->t_last : crd_now_ns();
	stat_add(&q->st.batch_hist[31 - __builtin_clz(n)], 1);

	uint8_t any_flags = 0;
	for (uint32_t i = 0; i < n; i++)
		any_flags |= sqe[i].flags;
	order_copied(&q->ord, start, n);
	/* The entries are ours now: hand the slots back before running the
	 * engines, so the client can refill the ring meanwhile. */
	worker_post(w, q, budget);
	/* A backlog remains and siblings sleep: ring for them. */
	if (left &&
	    atomic_load_explicit(&pool.awake, memory_order_relaxed) < pool.n)
		eventfd_write(pool.efd, 1);

	/* The completion lines were last read by the client: ask for them
	 * now, while the engines run, not one by one after (plainly, as
	 * worker_prefetch says why). */
	for (uint32_t i = 0; i < n; i += CRD_CACHELINE / sizeof(struct crd_cqe))
		__builtin_prefetch(&q->cq[(start + i) & cq_mask]);
	worker_resolve(w, q, sqe, ops, n);
	worker_run(w, q->arena, ops, n);
	const int serial = (any_flags & CRD_SQE_F_STREAM) &&
			   worker_pieces(w, q, sqe, ops, start, n, budget);
	/* What was refused before it ran costs what any op does. */
	struct worker_cost_cache cc = { 0 };
	for (uint32_t i = 0; i < n; i++)
		if (ops[i].status != STREAM_DEFERRED &&
		    !fair_op_ran(ops[i].status))
			*budget +=
				worker_op_cost(q, &sqe[i], &cc) - FAIR_OP_COST;
	/* The engines leave round keys and hash words in the vector
	 * registers; whatever saves those later must find nothing. */
	engine_clear_vector_regs();

	/* Counted before they are written: a client that has its
	 * completion and then reads the stats finds its op there. */
	w->t_last = crd_now_ns();
	w->t_valid = 1;
	counters_account(&w->wc, &q->st, ops, n, w->t_last - t0);
	/* One 16-byte store per completion, not three: while a line's
	 * transfer is pending its stores wait in the store buffer. */
	for (uint32_t i = 0; i < n; i++)
		if (ops[i].status != STREAM_DEFERRED) /* else the poster's */
			cqe_write(q, start + i, sqe[i].user_data, ops[i].status,
				  ops[i].len);
	order_done(&q->ord, start, serial ? n | ORDER_SERIAL : n);
	worker_post(w, q, budget);

	stage_pass_end(&w->stage); /* session-less sessions: wiped */
	return n;
}

/*
 * One user's turn: its queues, from where its last turn stopped, one run
 * at a time, while its credit lasts and any of them has work. A user in
 * debt sits the turn out: *owed then holds the highest such credit.
 */
static unsigned worker_turn(struct worker *w, const struct worker_group *g,
			    int64_t *owed)
{
	int64_t granted = fair_turn_begin(g->user);
	if (granted <= 0) {
		if (granted > *owed)
			*owed = granted;
		return 0;
	}
	int64_t budget = granted;
	unsigned first = fair_turn_first(g->user, g->n), done = 0, i = 0;
	int claimed = 0;
	for (unsigned idle = 0; budget > 0 && idle < g->n; i++) {
		struct queue *q = w->local[g->first + (first + i) % g->n];
		unsigned k = worker_poll_queue(w, q, &budget, &claimed);
		done += k;
		idle = k ? 0 : idle + 1;
	}
	fair_turn_end(g->user, first + (i ? i : 1), granted - budget);
	return done;
}

/* One pass: a turn for every user, starting one further each time.
 * Returns the ops completed, or 1 when it ran none but users in debt
 * have work waiting (after skipping the rounds they would sit out). */
static unsigned worker_poll_all(struct worker *w)
{
	unsigned done = 0, ng = w->ngrp;
	int64_t owed = INT64_MIN;
	for (unsigned k = 0; k < ng; k++)
		done += worker_turn(w, &w->grp[(w->rr + k) % ng], &owed);
	w->rr++;
	if (done || owed == INT64_MIN)
		return done;
	for (unsigned k = 0; k < ng; k++)
		fair_skip_rounds(w->grp[k].user, owed);
	return 1;
}

static void worker_set_need_wakeup(struct worker *w, int on)
{
	for (unsigned i = 0; i < w->nlocal; i++) {
		uint32_t *f = &w->local[i]->hdr->daemon.kflags;
		if (on)
			crd_flag_set(f, CRD_F_NEED_WAKEUP);
		else
			crd_flag_clear(f, CRD_F_NEED_WAKEUP);
	}
}

static int worker_has_work(struct worker *w)
{
	for (unsigned i = 0; i < w->nlocal; i++) {
		struct queue *q = w->local[i];
		if (atomic_load(&q->broken))
			continue;
		if (crd_load_seq_cst(&q->hdr->ksq_tail.k) !=
			    atomic_load(&q->ord.claim) ||
		    order_pending(&q->ord) || stream_sweep_pending(&q->streams))
			return 1;
	}
	return 0;
}

/* Has the pool's queue list moved since this worker copied it? */
static int worker_list_stale(const struct worker *w)
{
	return atomic_load(&pool.gen) != w->seen_gen;
}

/*
 * A quiescent state: this worker holds no queue or session pointer. Say
 * which grace period it has seen; if that is a new one, ring the control
 * thread, which waits for it (without blocking: worker_grace_done).
 * seq_cst: the control thread bumps pool.grace after unpublishing, then
 * reads seen; a worker that stores seen >= e then loads the list anew.
 */
static void worker_quiescent(struct worker *w)
{
	uint64_t g = atomic_load(&pool.grace);
	if (g == atomic_load_explicit(&w->seen, memory_order_relaxed))
		return;
	atomic_store(&w->seen, g);
	(void)eventfd_write(pool.grace_efd, 1);
}

/* Sleep in epoll_wait. 1 when woken by a doorbell or the pool's wake
 * eventfd, 0 on time-out. Touches no queue: events carry no pointer. */
static int worker_sleep(struct worker *w)
{
	struct epoll_event ev[8];
	int n;
	/* Parked is a quiescent state too. Dekker with the control thread
	 * (pool.grace, then parked; here parked, then pool.grace): either
	 * it sees us parked, or we see its grace period and ring it. */
	atomic_store(&w->parked, 1);
	if (atomic_load(&pool.grace) !=
	    atomic_load_explicit(&w->seen, memory_order_relaxed))
		(void)eventfd_write(pool.grace_efd, 1);
	do
		n = epoll_wait(pool.epfd, ev, 8, PARK_TIMEOUT_MS);
	while (n < 0 && errno == EINTR && !atomic_load(&pool.stop));
	/* Consume the pool's ring (it may be a sibling's: fine), but never
	 * the stop ring: every worker must still see that one. Queue
	 * doorbells are edge-triggered and never read. */
	for (int i = 0; i < n; i++) {
		eventfd_t v;
		if (ev[i].data.u64 == POOL_EV_WAKE && !atomic_load(&pool.stop))
			(void)eventfd_read(pool.efd, &v);
	}
	atomic_store(&w->parked, 0);
	return n != 0;
}

/* Every core that runs a client thread passes a full barrier
 * (CRD_FEAT_SQ_MEMBARRIER). It cannot fail once the probe passed; if it
 * does, a wake-up may be lost, and the park time-out finds the op. */
static void worker_membarrier(void)
{
	static atomic_int told;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) &&
	    !atomic_exchange(&told, 1))
		log_warn("membarrier failed (%s): an op may wait up to %d ms",
			 strerror(errno), (int)PARK_TIMEOUT_MS);
}

/* May parking rely on membarrier? The kernel has it and lets us run it. */
static int membarrier_usable(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	return cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
	       syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0,
		       0) == 0;
}

/* Sleep until a doorbell rings. Holds no queue pointer across the sleep:
 * the caller refreshes its list afterwards. Returns 1 when this worker is
 * the first awake again (it then clears NEED_WAKEUP). */
static int worker_park(struct worker *w)
{
	/* Nothing posted may wait for a worker that is going to sleep. */
	for (unsigned i = 0; i < w->nlocal; i++) {
		int64_t budget = FAIR_QUANTUM;
		worker_post(w, w->local[i], &budget);
	}

	/* The last worker to sleep asks clients to ring. Need-wakeup
	 * handshake, our half: flag, then re-check. Pairs with the client's
	 * tail store, then flag load (queue_publish), which has no fence
	 * between them: the membarrier stands in for it. A queue attached
	 * since our copy of the list is not flagged by us: the gen check
	 * pairs with worker_attach (gen store, then awake load). */
	if (atomic_fetch_sub(&pool.awake, 1) == 1) {
		worker_set_need_wakeup(w, 1);
		if (pool.sq_membarrier)
			worker_membarrier();
		if (worker_has_work(w) || atomic_load(&pool.stop) ||
		    worker_list_stale(w))
			return atomic_fetch_add(&pool.awake, 1) == 0;
	}
	/* A time-out is a look at the rings on our own: a wake-up may have
	 * been lost. The queues we look at come from a fresh copy of the
	 * list (a queue freed while we slept is no longer in it). */
	while (!worker_sleep(w) && !atomic_load(&pool.stop)) {
		worker_refresh(w);
		if (worker_has_work(w))
			break;
		if (atomic_load(&pool.awake) == 0)
			worker_set_need_wakeup(w, 1);
	}
	return atomic_fetch_add(&pool.awake, 1) == 0;
}

/* After stop: serve what clients already submitted, at most one ring's
 * worth per queue, then leave. */
static void worker_drain(struct worker *w)
{
	worker_refresh(w);
	for (unsigned i = 0; i < w->nlocal; i++) {
		struct queue *q = w->local[i];
		/* No one else is waiting any more: bytes do not count. */
		int64_t bytes = INT64_MAX / 2;
		for (uint32_t ops = q->sq_entries; ops;) {
			int claimed = 0;
			unsigned n = worker_poll_queue(w, q, &bytes, &claimed);
			if (!n)
				break;
			ops = n > ops ? 0 : ops - n;
		}
		worker_post(w, q, &bytes);
	}
}

static void worker_engines_fini(struct worker *w)
{
	for (unsigned e = 0; e < engine_count(); e++) {
		if (w->eng_ctx[e])
			engine_get(e)->worker_fini(w->eng_ctx[e]);
		w->eng_ctx[e] = NULL;
	}
	stage_fini(&w->stage);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t idle_since = 0, yielded = 0; /* us */
	unsigned spins = 0;

	while (!atomic_load(&pool.stop)) {
		/* Quiescent state: no queue or session pointer is held here.
		 * The list is refreshed after it: a queue detached before the
		 * grace period we report has left the list we copy. */
		worker_quiescent(w);
		if (atomic_load(&pool.gen) != w->seen_gen)
			worker_refresh(w);

		wstat_add(&w->wc.ws.passes, 1);
		if (worker_poll_all(w)) {
			idle_since = 0;
			continue;
		}
		wstat_add(&w->wc.ws.empty_polls, 1);
		w->t_valid = 0; /* idle: the next run reads the clock */
		/* Check the clock only now and then: it is not free. */
		if (++spins & 63) {
			crd_cpu_relax();
			continue;
		}
		uint64_t now = crd_now_us();
		if (!idle_since)
			idle_since = now;
		if (pool.cfg.busy_poll || now - idle_since < pool.cfg.spin_us) {
			/* When cores are oversubscribed, a spinning worker
			 * holds the CPU its client needs to submit: give it
			 * up now and then (clock.h: not at every look, as a
			 * synchronous client's next op lands within
			 * microseconds, and would wait out the call). Only
			 * once idle that long, then once per that: counted
			 * from the last yield alone, a worker whose client
			 * sends an op every 2-3 us yielded every other gap,
			 * and a third of the ops waited out the call. */
			if (now - (yielded > idle_since ? yielded
							: idle_since) >=
			    CRD_SPIN_YIELD_NS / 1000) {
				sched_yield();
				yielded = now;
			}
			continue;
		}
		int first = worker_park(w);
		wstat_add(&w->wc.ws.wakeups, 1);
		idle_since = 0;
		worker_refresh(w);
		if (first)
			worker_set_need_wakeup(w, 0);
	}
	worker_drain(w);
	worker_engines_fini(w);
	atomic_store(&w->exited, 1);
	return NULL;
}

static int worker_init_one(struct worker *w, unsigned idx)
{
	w->idx = idx;
	w->rr = idx; /* start passes at different users */
	if (stage_init(&w->stage))
		return -ENOMEM;
	for (unsigned e = 0; e < engine_count(); e++) {
		if (!engine_available(e))
			continue;
		w->eng_ctx[e] = engine_get(e)->worker_init(engine_get(e));
		if (!w->eng_ctx[e]) {
			log_err("worker %u: engine %s failed to initialise",
				idx, engine_get(e)->name);
			goto err_engines;
		}
	}
	atomic_fetch_add(&pool.awake, 1);
	if (pthread_create(&w->thread, NULL, worker_main, w)) {
		atomic_fetch_sub(&pool.awake, 1);
		goto err_engines;
	}
	char name[16];
	snprintf(name, sizeof(name), "cryptod-w%u", idx);
	pthread_setname_np(w->thread, name);
	if (pool.cfg.pin) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(idx % (cpus > 0 ? cpus : 1), &set);
		if (pthread_setaffinity_np(w->thread, sizeof(set), &set))
			log_warn("worker %u: cannot pin to a CPU", idx);
	}
	return 0;

err_engines:
	worker_engines_fini(w); /* and the stage */
	return -ENOMEM;
}

int workers_start(const struct worker_config *c)
{
	unsigned n = c->n;
	if (n == 0 || n > MAX_WORKERS)
		return -EINVAL;
	pool.cfg = *c;
	pool.sq_membarrier = c->busy_poll || membarrier_usable();
	/* Aligned: each worker's counters on cache lines of their own. */
	size_t size = n * sizeof(*pool.w);
	pool.w = aligned_alloc(_Alignof(struct worker), size);
	if (!pool.w)
		return -ENOMEM;
	memset(pool.w, 0, size);
	pthread_mutex_init(&pool.lock, NULL);
	pool.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pool.grace_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pool.epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = POOL_EV_WAKE };
	if (pool.efd < 0 || pool.epfd < 0 || pool.grace_efd < 0 ||
	    epoll_ctl(pool.epfd, EPOLL_CTL_ADD, pool.efd, &ev) < 0) {
		int err = -errno;
		workers_destroy();
		return err;
	}
	for (unsigned i = 0; i < n; i++) {
		int err = worker_init_one(&pool.w[i], i);
		if (err) {
			workers_stop();
			workers_destroy();
			return err;
		}
		pool.n++;
	}
	return 0;
}

void workers_stop(void)
{
	atomic_store(&pool.stop, 1);
	if (pool.efd >= 0)
		eventfd_write(pool.efd, 1);
	for (unsigned i = 0; i < pool.n; i++)
		if (!pool.w[i].joined) {
			pthread_join(pool.w[i].thread, NULL);
			pool.w[i].joined = 1;
		}
}

void workers_destroy(void)
{
	if (pool.efd >= 0)
		close(pool.efd);
	if (pool.epfd >= 0)
		close(pool.epfd);
	if (pool.grace_efd >= 0)
		close(pool.grace_efd);
	pool.efd = pool.epfd = pool.grace_efd = -1;
	pthread_mutex_destroy(&pool.lock);
	free(pool.w);
	pool.w = NULL;
	pool.n = 0;
}

unsigned workers_count(void)
{
	return pool.n;
}

const char *workers_poll_mode(void)
{
	return pool.cfg.busy_poll ? "busy" : "adaptive";
}

int workers_sq_membarrier(void)
{
	return pool.sq_membarrier;
}

int worker_attach(struct queue *q)
{
	if (!pool.n || atomic_load(&pool.stop))
		return -ESHUTDOWN;
	/* Before the fd is passed (line 0 is never read back). */
	q->hdr->features = CRD_FEAT_CQE_SLOT |
			   (pool.sq_membarrier ? CRD_FEAT_SQ_MEMBARRIER : 0);
	/* The client may ring as soon as it has the fds: watch first. */
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u64 = 0 };
	if (epoll_ctl(pool.epfd, EPOLL_CTL_ADD, q->sq_efd, &ev) < 0)
		return -errno;
	pthread_mutex_lock(&pool.lock);
	if (pool.nq == MAX_QUEUES) {
		pthread_mutex_unlock(&pool.lock);
		epoll_ctl(pool.epfd, EPOLL_CTL_DEL, q->sq_efd, NULL);
		return -ENOSPC;
	}
	/* After the last queue of its user: the list stays in user order. */
	unsigned at = pool.nq;
	while (at && pool.qs[at - 1]->user > q->user)
		at--;
	memmove(&pool.qs[at + 1], &pool.qs[at],
		(pool.nq - at) * sizeof(pool.qs[0]));
	pool.qs[at] = q;
	pool.nq++;
	atomic_fetch_add(&pool.gen, 1);
	pthread_mutex_unlock(&pool.lock);
	/* Sleeping workers must see NEED_WAKEUP in the new queue too. */
	if (atomic_load(&pool.awake) == 0)
		crd_flag_set(&q->hdr->daemon.kflags, CRD_F_NEED_WAKEUP);
	eventfd_write(pool.efd, 1); /* pick the new list up now */
	return 0;
}

void worker_detach(struct queue *q)
{
	pthread_mutex_lock(&pool.lock);
	for (unsigned i = 0; i < pool.nq; i++) {
		if (pool.qs[i] == q) {
			memmove(&pool.qs[i], &pool.qs[i + 1],
				(pool.nq - i - 1) * sizeof(pool.qs[0]));
			pool.nq--;
			break;
		}
	}
	atomic_fetch_add(&pool.gen, 1);
	pthread_mutex_unlock(&pool.lock);
	epoll_ctl(pool.epfd, EPOLL_CTL_DEL, q->sq_efd, NULL);
}

void worker_kick(void)
{
	if (pool.efd >= 0)
		eventfd_write(pool.efd, 1);
}

uint64_t worker_grace_begin(void)
{
	/* seq_cst, after the caller's unpublishing stores: a worker that
	 * loads this epoch (worker_quiescent) sees them. */
	return atomic_fetch_add(&pool.grace, 1) + 1;
}

int worker_grace_done(uint64_t epoch)
{
	for (unsigned i = 0; i < pool.n; i++) {
		struct worker *w = &pool.w[i];
		/* A parked or exited worker holds nothing; a running one
		 * lets go at its next loop top (and rings grace_efd). */
		if (!atomic_load(&w->parked) && !atomic_load(&w->exited) &&
		    atomic_load(&w->seen) < epoch)
			return 0;
	}
	return 1;
}

int worker_grace_fd(void)
{
	return pool.grace_efd;
}

int workers_stopped(void)
{
	return atomic_load(&pool.stop);
}

void worker_engine_counters(unsigned eng_idx, struct counters *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < pool.n; i++)
		counters_engine_add(&pool.w[i].wc, eng_idx, out);
}

void worker_pk_counters(uint64_t out[CRD_ALG_MAX_][PK_OPS])
{
	memset(out, 0, sizeof(uint64_t[CRD_ALG_MAX_][PK_OPS]));
	for (unsigned i = 0; i < pool.n; i++)
		counters_pk_add(&pool.w[i].wc, out);
}

int worker_stats_get(unsigned i, struct worker_snapshot *out)
{
	if (i >= pool.n)
		return -ENOENT;
	counters_snapshot(&pool.w[i].wc, out);
	out->asleep = atomic_load(&pool.w[i].parked);
	return 0;
}
