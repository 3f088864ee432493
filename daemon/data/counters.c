/* SPDX-License-Identifier: MIT */
/*
 * The workers' statistics: how one run of ops is accounted to its queue,
 * its sessions, its engines and its worker, and the snapshots the control
 * thread reads. Each worker passes in its own struct worker_counters:
 * nothing here is global.
 */
#include "counters.h"

#include <string.h>

#include "namedkeys.h"
#include "queue.h"
#include "session.h"
#include "streams.h"

/* One session's share of a run, added when the run moves on to another
 * session (bursts usually share one: one add per run). */
struct sess_acc {
	struct session *s;
	uint64_t ops, bytes, errors, auth;
};

static void sess_flush(struct sess_acc *a)
{
	if (!a->s)
		return;
	stat_add(&a->s->ops, a->ops);
	stat_add(&a->s->bytes, a->bytes);
	stat_add(&a->s->errors, a->errors);
	stat_add(&a->s->auth_failures, a->auth);
	nk_account(a->s->named, a->ops, a->bytes); /* NULL: not named */
	memset(a, 0, sizeof(*a));
}

static void sess_count(struct sess_acc *a, const struct session *s,
		       int32_t status, uint32_t len)
{
	/* Session-less ops run on scratch sessions with id 0: not listed. */
	if (!s || !s->id)
		return;
	if (a->s != s) {
		sess_flush(a);
		/* The counters are the only fields a worker writes. */
		a->s = (struct session *)s;
	}
	if (status == CRD_ST_OK) {
		a->ops++;
		a->bytes += len;
	} else if (status == CRD_ST_AUTH_FAILED) {
		a->auth++;
	} else {
		a->errors++;
	}
}

/* A key pair's done op (status OK) counted by row and op; other rows'
 * ops cost one test. */
static void pk_count(struct worker_counters *wc, const struct engine_op *op)
{
	unsigned alg = op->sess->alg;
	if (crd_alg_pkey(alg) && op->op < PK_OPS)
		wstat_add(&wc->pk[alg][op->op], 1);
}

void counters_account(struct worker_counters *wc, struct queue_stats *qs,
		      const struct engine_op *ops, unsigned n, uint64_t dt_ns)
{
	struct sess_acc sa = { 0 };
	/* Sum locally, publish once per pass: the counters are read by the
	 * control thread, and every store to them is a shared line. */
	uint64_t bytes = 0, errors = 0, auth = 0;
	uint64_t eops[ENGINE_MAX] = { 0 }, ebytes[ENGINE_MAX] = { 0 };
	uint64_t eerr[ENGINE_MAX] = { 0 }, eauth[ENGINE_MAX] = { 0 };
	/* The usual run: one session, every op done. One compare per op,
	 * then one add per counter. */
	const struct session *s0 = n ? ops[0].sess : NULL;
	unsigned i = 0, deferred = 0;
	if (s0 && s0->id) {
		for (; i < n && ops[i].sess == s0 && ops[i].status == CRD_ST_OK;
		     i++)
			bytes += ops[i].len;
		if (crd_alg_pkey(s0->alg))
			for (unsigned k = 0; k < i; k++)
				pk_count(wc, &ops[k]);
		sa.s = (struct session *)s0;
		sa.ops = i;
		sa.bytes = bytes;
		eops[s0->eng_idx] = i;
		ebytes[s0->eng_idx] = bytes;
	}
	for (; i < n; i++) {
		const struct engine_op *op = &ops[i];
		if (op->status == STREAM_DEFERRED) {
			deferred++; /* counted when the poster runs it */
			continue;
		}
		sess_count(&sa, op->sess, op->status, op->len);
		if (op->status == CRD_ST_OK) {
			bytes += op->len;
			pk_count(wc, op);
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
		wstat_add(&wc->est[e].ops, eops[e]);
		wstat_add(&wc->est[e].bytes, ebytes[e]);
		wstat_add(&wc->est[e].errors, eerr[e]);
		wstat_add(&wc->est[e].auth_failures, eauth[e]);
	}
	sess_flush(&sa);
	n -= deferred;
	if (!n)
		return;
	stat_add(&qs->ops, n);
	stat_add(&qs->bytes, bytes);
	stat_add(&qs->errors, errors);
	stat_add(&qs->auth_failures, auth);

	unsigned b = lat_bucket(dt_ns);
	stat_add(&qs->lat_hist[b], n);
	stat_add(&qs->lat_sum_ns, dt_ns * n);
	struct wstats *ws = &wc->ws;
	wstat_add(&ws->ops, n);
	wstat_add(&ws->bytes, bytes);
	wstat_add(&ws->errors, errors);
	wstat_add(&ws->auth_failures, auth);
	wstat_add(&ws->runs, 1);
	wstat_add(&ws->lat_hist[b], n);
	wstat_add(&ws->lat_sum_ns, dt_ns * n);
}

void counters_engine_add(const struct worker_counters *wc, unsigned eng_idx,
			 struct counters *sum)
{
	if (eng_idx >= ENGINE_MAX)
		return;
	const struct eng_counters *c = &wc->est[eng_idx];
	sum->ops += atomic_load_explicit(&c->ops, memory_order_relaxed);
	sum->bytes += atomic_load_explicit(&c->bytes, memory_order_relaxed);
	sum->errors += atomic_load_explicit(&c->errors, memory_order_relaxed);
	sum->auth_failures +=
		atomic_load_explicit(&c->auth_failures, memory_order_relaxed);
}

void counters_pk_add(const struct worker_counters *wc,
		     uint64_t sum[CRD_ALG_MAX_][PK_OPS])
{
	for (unsigned a = 0; a < CRD_ALG_MAX_; a++)
		for (unsigned o = 0; o < PK_OPS; o++)
			sum[a][o] += atomic_load_explicit(&wc->pk[a][o],
							  memory_order_relaxed);
}

void counters_snapshot(const struct worker_counters *wc,
		       struct worker_snapshot *out)
{
	const struct wstats *ws = &wc->ws;
	memset(out, 0, sizeof(*out));
	out->c.ops = atomic_load_explicit(&ws->ops, memory_order_relaxed);
	out->c.bytes = atomic_load_explicit(&ws->bytes, memory_order_relaxed);
	out->c.errors = atomic_load_explicit(&ws->errors, memory_order_relaxed);
	out->c.auth_failures =
		atomic_load_explicit(&ws->auth_failures, memory_order_relaxed);
	out->c.empty_polls =
		atomic_load_explicit(&ws->empty_polls, memory_order_relaxed);
	out->c.wakeups =
		atomic_load_explicit(&ws->wakeups, memory_order_relaxed);
	out->passes = atomic_load_explicit(&ws->passes, memory_order_relaxed);
	out->runs = atomic_load_explicit(&ws->runs, memory_order_relaxed);
	out->lat_sum_ns =
		atomic_load_explicit(&ws->lat_sum_ns, memory_order_relaxed);
	for (unsigned b = 0; b < LAT_BUCKETS; b++)
		out->lat_hist[b] = atomic_load_explicit(&ws->lat_hist[b],
							memory_order_relaxed);
}
