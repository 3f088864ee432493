/* SPDX-License-Identifier: MIT */
#include "worker.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "desc.h"
#include "engine.h"
#include "bounds.h"
#include "log.h"
#include "queue.h"
#include "session.h"
#include "stage.h"

struct eng_counters {
	_Atomic uint64_t ops, bytes, errors, auth_failures;
};

struct worker {
	unsigned idx;
	pthread_t thread;
	int efd; /* owned doorbell: clients and the control thread wake us */

	/* Grace periods (see worker.h). */
	_Atomic uint64_t epoch;
	_Atomic int parked;
	_Atomic int exited;
	_Atomic int stop;
	int joined; /* control thread only */

	/* The published queue list: written by the control thread under
	 * lock, copied by the worker when gen moves. */
	pthread_mutex_t lock;
	struct queue *qs[MAX_QUEUES];
	unsigned nq;
	_Atomic unsigned gen;

	/* Worker-private. */
	struct queue *local[MAX_QUEUES];
	unsigned nlocal;
	unsigned seen_gen;
	void *eng_ctx[ENGINE_MAX];
	struct stage stage; /* bounce buffer, session-less scratch */
	struct eng_counters est[ENGINE_MAX];
};

static struct worker *workers; /* owned array */
static unsigned n_workers;

/* Single-writer counter bump: no lock prefix on the hot path. */
static inline void stat_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + ts.tv_nsec / 1000;
}

static void worker_refresh(struct worker *w)
{
	unsigned gen = atomic_load(&w->gen);
	if (gen == w->seen_gen)
		return;
	pthread_mutex_lock(&w->lock);
	memcpy(w->local, w->qs, w->nq * sizeof(w->qs[0]));
	w->nlocal = w->nq;
	w->seen_gen = atomic_load(&w->gen);
	pthread_mutex_unlock(&w->lock);
}

static void queue_set_dead(struct queue *q)
{
	q->broken = 1;
	__atomic_fetch_or(&q->hdr->daemon.kflags, CRD_F_DEAD, __ATOMIC_RELEASE);
	if (q->cq_efd >= 0)
		eventfd_write(q->cq_efd, 1);
}

/*
 * Run the engines over the resolved ops: consecutive valid ops that share
 * an engine go down as one burst.
 */
static void worker_run(struct worker *w, struct engine_op *ops, unsigned n)
{
	unsigned i = 0;
	while (i < n) {
		if (ops[i].status != CRD_ST_OK || ops[i].done) {
			i++;
			continue;
		}
		unsigned eng = ops[i].sess->eng_idx, j = i + 1;
		while (j < n && ops[j].status == CRD_ST_OK && !ops[j].done &&
		       ops[j].sess->eng_idx == eng)
			j++;
		ops[i].sess->eng->process(w->eng_ctx[eng], ops + i, j - i);
		i = j;
	}
}

static void worker_account(struct worker *w, struct queue *q,
			   const struct engine_op *ops, unsigned n)
{
	/* Sum locally, publish once per pass: the counters are read by the
	 * control thread, and every store to them is a shared line. */
	uint64_t bytes = 0, errors = 0, auth = 0;
	uint64_t eops[ENGINE_MAX] = { 0 }, ebytes[ENGINE_MAX] = { 0 };
	uint64_t eerr[ENGINE_MAX] = { 0 }, eauth[ENGINE_MAX] = { 0 };
	for (unsigned i = 0; i < n; i++) {
		const struct engine_op *op = &ops[i];
		if (op->status == CRD_ST_OK) {
			bytes += op->len;
			eops[op->sess->eng_idx]++;
			ebytes[op->sess->eng_idx] += op->len;
		} else if (op->status == CRD_ST_AUTH_FAILED) {
			auth++;
			eauth[op->sess->eng_idx]++;
		} else {
			errors++;
			/* Descriptor errors are the client's, not the
			 * engine's; count only what reached an engine. */
			if (op->status != CRD_ST_NO_SESSION &&
			    op->status != CRD_ST_BAD_DESC && op->sess)
				eerr[op->sess->eng_idx]++;
		}
	}
	for (unsigned e = 0; e < ENGINE_MAX; e++) {
		if (!(eops[e] | eerr[e] | eauth[e]))
			continue;
		stat_add(&w->est[e].ops, eops[e]);
		stat_add(&w->est[e].bytes, ebytes[e]);
		stat_add(&w->est[e].errors, eerr[e]);
		stat_add(&w->est[e].auth_failures, eauth[e]);
	}
	stat_add(&q->st.ops, n);
	stat_add(&q->st.bytes, bytes);
	stat_add(&q->st.errors, errors);
	stat_add(&q->st.auth_failures, auth);
}

/*
 * One pass over one queue: take at most WORKER_BURST descriptors (never
 * more than the completion ring can hold, so a client that stops reading
 * blocks only itself), run them, post completions in order.
 * Returns the number of ops completed.
 */
static unsigned worker_poll_queue(struct worker *w, struct queue *q)
{
	if (q->broken)
		return 0;

	struct crd_region_hdr *h = q->hdr;
	/* Pairs with the client's release store of its sq tail: entries
	 * and data written before it are visible after this load. */
	uint32_t tail = crd_load_acquire(&h->ksq_tail.k);
	uint32_t avail = crd_ring_used(q->sq_head, tail);
	if (avail == 0) {
		stat_add(&q->st.empty_polls, 1);
		return 0;
	}
	/* Pairs with the client's release store of its cq head. */
	uint32_t cq_head = crd_load_acquire(&h->kcq_head.k);
	uint32_t cq_used = crd_ring_used(cq_head, q->cq_tail);
	if (avail > q->sq_entries || cq_used > q->cq_entries) {
		log_warn("client %u queue %u: ring index out of range, queue "
			 "stopped",
			 q->owner->id, q->id);
		queue_set_dead(q);
		return 0;
	}
	uint32_t n = avail;
	if (n > q->cq_entries - cq_used)
		n = q->cq_entries - cq_used;
	if (n > WORKER_BURST)
		n = WORKER_BURST;
	if (n == 0)
		return 0; /* completion ring full: the client must read */

	struct crd_sqe sqe[WORKER_BURST];
	struct engine_op ops[WORKER_BURST];
	uint32_t sq_mask = q->sq_entries - 1, cq_mask = q->cq_entries - 1;

	/* Copy first, validate the copy: the client may rewrite the shared
	 * entry at any moment and nothing below reads it again. */
	for (uint32_t i = 0; i < n; i++)
		memcpy(&sqe[i], &q->sq[(q->sq_head + i) & sq_mask],
		       sizeof(sqe[i]));
	/* The entries are ours now: hand the slots back before running the
	 * engine, so the client can refill the ring meanwhile instead of
	 * finding it full. Pairs with the client's acquire load of the
	 * head. The completion ring's room was checked above. */
	q->sq_head += n;
	crd_store_release(&h->ksq_head.k, q->sq_head);

	/* Bursts usually share one session: look it up once per run. */
	const struct session *s = NULL;
	uint32_t sid = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct session *os;
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
				s = client_session_get(q->owner, sid);
			}
			os = s;
		}
		desc_resolve(&sqe[i], q->arena, q->arena_size, os, &ops[i],
			     &w->stage.sg);
		if (ops[i].status != CRD_ST_OK)
			ops[i].sess = os;
		else if (ops[i].sgl) /* run now, while its lists are at hand */
			stage_run(&w->stage, q->arena, &ops[i],
				  w->eng_ctx[os->eng_idx]);
	}

	worker_run(w, ops, n);

	for (uint32_t i = 0; i < n; i++) {
		struct crd_cqe *c = &q->cq[(q->cq_tail + i) & cq_mask];
		c->user_data = sqe[i].user_data;
		c->status = ops[i].status;
		c->len = ops[i].status == CRD_ST_OK ? sqe[i].len : 0;
	}
	q->cq_tail += n;
	/* Publish completions and the data they describe. Pairs with the
	 * client's acquire load of the tail (and, being seq_cst, is the
	 * first half of the need-wakeup handshake below). */
	crd_store_seq_cst(&h->kcq_tail.k, q->cq_tail);

	/* Need-wakeup handshake, our half: tail stored, then read the
	 * client's flag. The client sets its flag, then re-reads our tail
	 * (client-lib/queue.c cc_wait). */
	if (crd_load_seq_cst(&h->client.kflags) & CRD_F_NEED_WAKEUP) {
		eventfd_write(q->cq_efd, 1);
		stat_add(&q->st.wakeups, 1);
	}

	worker_account(w, q, ops, n);
	stage_pass_end(&w->stage); /* session-less sessions: wiped */
	return n;
}

static unsigned worker_poll_all(struct worker *w)
{
	unsigned done = 0;
	for (unsigned i = 0; i < w->nlocal; i++)
		done += worker_poll_queue(w, w->local[i]);
	return done;
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
		if (!q->broken &&
		    crd_load_seq_cst(&q->hdr->ksq_tail.k) != q->sq_head)
			return 1;
	}
	return 0;
}

/* Sleep until a doorbell rings. Returns with no queue pointers held
 * across the sleep: the caller refreshes its list afterwards. */
static void worker_park(struct worker *w)
{
	/* Need-wakeup handshake, our half: flag, then re-check. Pairs with
	 * the client's tail store, then flag load (cc_enqueue_burst). */
	worker_set_need_wakeup(w, 1);
	if (worker_has_work(w) || atomic_load(&w->stop)) {
		worker_set_need_wakeup(w, 0);
		return;
	}
	atomic_store(&w->parked, 1);
	struct pollfd pfd = { .fd = w->efd, .events = POLLIN };
	while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	eventfd_t v;
	eventfd_read(w->efd, &v);
	atomic_store(&w->parked, 0);
}

/* After stop: serve what clients already submitted, at most one ring's
 * worth per queue, then leave. */
static void worker_drain(struct worker *w)
{
	worker_refresh(w);
	for (unsigned i = 0; i < w->nlocal; i++) {
		struct queue *q = w->local[i];
		for (uint32_t budget = q->sq_entries; budget;) {
			unsigned n = worker_poll_queue(w, q);
			if (!n)
				break;
			budget = n > budget ? 0 : budget - n;
		}
	}
}

static void worker_engines_fini(struct worker *w);

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t idle_since = 0;
	unsigned spins = 0;

	while (!atomic_load(&w->stop)) {
		/* Quiescent state: no queue or session pointer is held here. */
		atomic_fetch_add(&w->epoch, 1);
		if (atomic_load(&w->gen) != w->seen_gen) {
			worker_refresh(w);
			worker_set_need_wakeup(w, 0);
		}

		if (worker_poll_all(w)) {
			idle_since = 0;
			continue;
		}
		/* Check the clock only now and then: it is not free. */
		if (++spins & 63) {
			__builtin_ia32_pause();
			continue;
		}
		uint64_t now = now_us();
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < WORKER_SPIN_US) {
			/* When cores are oversubscribed, a spinning worker
			 * holds the CPU its client needs to submit: give it
			 * up. With a core to ourselves this returns at once. */
			sched_yield();
			continue;
		}
		worker_park(w);
		idle_since = 0;
		worker_refresh(w);
		worker_set_need_wakeup(w, 0);
	}
	worker_drain(w);

	worker_engines_fini(w);
	atomic_store(&w->exited, 1);
	return NULL;
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

static int worker_init_one(struct worker *w, unsigned idx)
{
	w->idx = idx;
	pthread_mutex_init(&w->lock, NULL);
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->efd < 0)
		goto err_mutex;
	if (stage_init(&w->stage))
		goto err_efd;
	for (unsigned e = 0; e < engine_count(); e++) {
		if (!engine_available(e))
			continue;
		w->eng_ctx[e] = engine_get(e)->worker_init();
		if (!w->eng_ctx[e]) {
			log_err("worker %u: engine %s failed to initialise",
				idx, engine_get(e)->name);
			goto err_engines;
		}
	}
	if (pthread_create(&w->thread, NULL, worker_main, w))
		goto err_engines;
	char name[16];
	snprintf(name, sizeof(name), "cryptod-w%u", idx);
	pthread_setname_np(w->thread, name);
	return 0;

err_engines:
	worker_engines_fini(w); /* and the stage */
err_efd:
	close(w->efd);
err_mutex:
	pthread_mutex_destroy(&w->lock);
	return -ENOMEM;
}

int workers_start(unsigned n)
{
	if (n == 0 || n > MAX_WORKERS)
		return -EINVAL;
	workers = calloc(n, sizeof(*workers));
	if (!workers)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		int err = worker_init_one(&workers[i], i);
		if (err) {
			workers_stop();
			workers_destroy();
			return err;
		}
		n_workers++;
	}
	return 0;
}

void workers_stop(void)
{
	for (unsigned i = 0; i < n_workers; i++) {
		if (atomic_load(&workers[i].exited))
			continue;
		atomic_store(&workers[i].stop, 1);
		eventfd_write(workers[i].efd, 1);
	}
	for (unsigned i = 0; i < n_workers; i++)
		if (!workers[i].joined) {
			pthread_join(workers[i].thread, NULL);
			workers[i].joined = 1;
		}
}

void workers_destroy(void)
{
	for (unsigned i = 0; i < n_workers; i++) {
		close(workers[i].efd);
		pthread_mutex_destroy(&workers[i].lock);
	}
	free(workers);
	workers = NULL;
	n_workers = 0;
}

unsigned workers_count(void)
{
	return n_workers;
}

int worker_attach(struct queue *q)
{
	if (!n_workers || atomic_load(&workers[0].stop))
		return -ESHUTDOWN;
	struct worker *best = &workers[0];
	for (unsigned i = 1; i < n_workers; i++)
		if (workers[i].nq < best->nq)
			best = &workers[i];
	pthread_mutex_lock(&best->lock);
	if (best->nq == MAX_QUEUES) {
		pthread_mutex_unlock(&best->lock);
		return -ENOSPC;
	}
	best->qs[best->nq++] = q;
	q->worker = (struct worker *)best;
	atomic_fetch_add(&best->gen, 1);
	pthread_mutex_unlock(&best->lock);
	eventfd_write(best->efd, 1); /* pick the new list up now */
	return 0;
}

void worker_detach(struct queue *q)
{
	struct worker *w = q->worker;
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	for (unsigned i = 0; i < w->nq; i++) {
		if (w->qs[i] == q) {
			w->qs[i] = w->qs[--w->nq];
			break;
		}
	}
	atomic_fetch_add(&w->gen, 1);
	pthread_mutex_unlock(&w->lock);
	q->worker = NULL;
	worker_synchronize();
}

int worker_doorbell_fd(const struct queue *q)
{
	return q->worker ? q->worker->efd : -1;
}

void worker_synchronize(void)
{
	for (unsigned i = 0; i < n_workers; i++) {
		struct worker *w = &workers[i];
		uint64_t e = atomic_load(&w->epoch);
		/* A parked or exited worker holds nothing; a running one
		 * lets go at its next loop top. */
		while (!atomic_load(&w->parked) && !atomic_load(&w->exited) &&
		       atomic_load(&w->epoch) == e)
			sched_yield();
	}
}

void worker_engine_counters(unsigned eng_idx, struct counters *out)
{
	memset(out, 0, sizeof(*out));
	if (eng_idx >= ENGINE_MAX)
		return;
	for (unsigned i = 0; i < n_workers; i++) {
		struct eng_counters *c = &workers[i].est[eng_idx];
		out->ops += atomic_load_explicit(&c->ops, memory_order_relaxed);
		out->bytes +=
			atomic_load_explicit(&c->bytes, memory_order_relaxed);
		out->errors +=
			atomic_load_explicit(&c->errors, memory_order_relaxed);
		out->auth_failures += atomic_load_explicit(
			&c->auth_failures, memory_order_relaxed);
	}
}
