/* SPDX-License-Identifier: MIT */
/*
 * Worker statistics (counters.c). A worker's own counters are written by
 * that worker only (plain load + store, no locked add) and read by the
 * control thread with relaxed loads; counters several workers share
 * (queues, sessions, engines per worker) take relaxed atomic adds, once
 * per run, never per op.
 */
#ifndef CRYPTOD_COUNTERS_H
#define CRYPTOD_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

#include <cryptod/ring_abi.h>

#include "engine.h"
#include "lathist.h"

struct queue_stats;

struct counters {
	uint64_t ops, bytes, errors, auth_failures, empty_polls, wakeups;
};

/* One worker's own view (worker_stats_get). */
struct worker_snapshot {
	struct counters c; /* empty_polls: passes that found no work;
			    * wakeups: times it woke from the doorbell */
	uint64_t passes, runs, lat_sum_ns;
	uint64_t lat_hist[LAT_BUCKETS];
	int asleep;
};

struct eng_counters {
	_Atomic uint64_t ops, bytes, errors, auth_failures;
};

/* Written by its worker only, read by the control thread; on lines of
 * their own (struct worker is allocated 64-byte aligned). */
struct wstats {
	_Atomic uint64_t ops, bytes, errors, auth_failures, empty_polls,
		wakeups, passes, runs, lat_sum_ns;
	_Atomic uint64_t lat_hist[LAT_BUCKETS];
};

/* Key pairs' ops done, by algorithm row and enum crd_op (a TLS server's
 * handshakes are its key's signs): written by the worker only. */
enum { PK_OPS = CRD_OP_DERIVE + 1 };
typedef _Atomic uint64_t pk_counts[CRD_ALG_MAX_][PK_OPS];

/* Everything one worker counts. */
struct worker_counters {
	struct wstats ws;
	struct eng_counters est[ENGINE_MAX]; /* per engine, this worker's */
	pk_counts pk;
};

/* Counters shared between workers: relaxed atomic adds, once per pass. */
static inline void stat_add(_Atomic uint64_t *c, uint64_t v)
{
	if (v)
		atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* A counter only this thread writes: no locked instruction needed. */
static inline void wstat_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c,
			      atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

/* Account a run of n completed ops that took dt_ns, claim to post, to
 * its queue, its sessions, its engines and the worker. */
void counters_account(struct worker_counters *wc, struct queue_stats *qs,
		      const struct engine_op *ops, unsigned n, uint64_t dt_ns);
/* Add one worker's counters of engine eng_idx to *sum. */
void counters_engine_add(const struct worker_counters *wc, unsigned eng_idx,
			 struct counters *sum);
/* Add one worker's key-pair op counts to sum[alg][op]. */
void counters_pk_add(const struct worker_counters *wc,
		     uint64_t sum[CRD_ALG_MAX_][PK_OPS]);
/* One worker's counters and service-time histogram (asleep not set). */
void counters_snapshot(const struct worker_counters *wc,
		       struct worker_snapshot *out);

#endif
