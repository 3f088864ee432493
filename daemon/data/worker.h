/* SPDX-License-Identifier: MIT */
/*
 * Worker threads: each polls the queues attached to it, runs the engines,
 * and posts completions in submission order. Busy-polls while work flows,
 * then sleeps on the pool's private epoll (every queue's own doorbell,
 * doorbell.h) with NEED_WAKEUP set in each queue, so clients signal only
 * when every worker sleeps.
 *
 * Queue lists and sessions are reclaimed with quiescent-state grace
 * periods the control thread never waits for: it unpublishes, takes an
 * epoch (worker_grace_begin), and frees once worker_grace_done says every
 * worker has passed a quiescent state since (grace.h does the
 * bookkeeping). A worker passes one at the top of each loop and whenever
 * it sleeps, and rings worker_grace_fd() when it passes a new epoch.
 */
#ifndef CRYPTOD_WORKER_H
#define CRYPTOD_WORKER_H

#include <cryptod/compiler.h>

#include <stdint.h>

#include "counters.h"

struct queue;

struct worker_config {
	unsigned n;	  /* workers, 1..MAX_WORKERS */
	int busy_poll;	  /* never sleep: lowest latency, a core per worker */
	unsigned spin_us; /* adaptive: busy-poll this long, then sleep */
	int pin;	  /* pin worker i to online CPU i (mod count) */
};

/* Start the pool. 0 or -errno. */
CRD_MUST_CHECK int workers_start(const struct worker_config *c);
/* Serve what is already submitted (bounded), then stop and join. Queues
 * may still be detached afterwards; workers_destroy() frees the pool. */
void workers_stop(void);
void workers_destroy(void);
unsigned workers_count(void);
/* "busy" or "adaptive". */
const char *workers_poll_mode(void);
/* Does a worker run membarrier before it sleeps, so that clients store
 * their tails with no fence (CRD_FEAT_SQ_MEMBARRIER)? */
int workers_sq_membarrier(void);

/* Serve q from now on (every worker serves every queue) and watch its
 * submission doorbell. 0 or -errno. */
CRD_MUST_CHECK int worker_attach(struct queue *q);
/* Stop serving q. Workers may still touch it until a grace period that
 * begins after this call has passed; then it may be freed. Never waits. */
void worker_detach(struct queue *q);

/* Wake a sleeping worker to look at the queues (a stream sweep). */
void worker_kick(void);

/* Begin a grace period, after unpublishing what it protects; returns its
 * epoch. */
uint64_t worker_grace_begin(void);
/* Has every worker passed a quiescent state (or been asleep, or exited)
 * since worker_grace_begin returned epoch? Never waits. */
int worker_grace_done(uint64_t epoch);
/* An eventfd (non-blocking, the pool's) that workers ring when they pass
 * a quiescent state in a new grace period: read it, then ask again. */
int worker_grace_fd(void);
/* Has workers_stop() begun? (Nothing will be swept or served any more.) */
int workers_stopped(void);

/* Worker i's counters and service-time histogram. -ENOENT past the end. */
CRD_MUST_CHECK int worker_stats_get(unsigned i, struct worker_snapshot *out);

/* Sum of one engine's counters over all workers. */
void worker_engine_counters(unsigned eng_idx, struct counters *out);
/* Key pairs' ops done since start, by algorithm row and enum crd_op,
 * summed over the workers. */
void worker_pk_counters(uint64_t out[CRD_ALG_MAX_][PK_OPS]);

#endif
