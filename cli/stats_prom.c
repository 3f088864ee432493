/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl stats --prometheus: the Prometheus text exposition format
 * (version 0.0.4), as node_exporter's textfile collector reads it. Every
 * family is printed whole (HELP, TYPE, then all its samples) before the
 * next; counters end in _total; latencies are summaries in seconds.
 * docs/observability.md lists every metric.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "cryptoctl.h"

/* What one family reads from one row: a row is an engine, a worker, a
 * queue or a session, each with its own labels. */
enum prom_row { ROW_ENGINE, ROW_WORKER, ROW_QUEUE, ROW_SESSION };

#define CNT(f) ((long)offsetof(struct cc_counters, f))

/* A label value: backslash, double quote and newline escaped; bytes
 * that are not printable ASCII become '?', as in the tables. */
static void prom_label(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s >= 0x20 && *s < 0x7f ? *s : '?');
	}
}

static void prom_head(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void labels_queue(const struct cc_queue_stats *q)
{
	printf("client=\"%u\",queue=\"%u\",client_name=\"", q->client_id,
	       q->queue_id);
	prom_label(q->client_name);
	putchar('"');
}

static void labels_session(const struct cc_session_info *x)
{
	const char *alg = cc_alg_name(x->alg);

	printf("client=\"%u\",session=\"%u\",alg=\"%s\",engine=\"",
	       x->client_id, x->session_id, alg ? alg : "unknown");
	prom_label(x->engine);
	putchar('"');
}

static uint64_t ctr(const struct cc_counters *c, long off)
{
	return *(const uint64_t *)(const void *)((const char *)c + off);
}

static void prom_counters(const struct stats_snap *s, enum prom_row row,
			  const char *name, const char *help, long off)
{
	const struct cc_stats *st = &s->st;
	unsigned i;

	prom_head(name, "counter", help);
	switch (row) {
	case ROW_ENGINE:
		for (i = 0; i < st->n_engines; i++) {
			printf("%s{engine=\"", name);
			prom_label(st->engines[i].name);
			printf("\"} %" PRIu64 "\n",
			       ctr(&st->engines[i].c, off));
		}
		break;
	case ROW_WORKER:
		for (i = 0; i < st->n_workers_stats; i++)
			printf("%s{worker=\"%u\"} %" PRIu64 "\n", name,
			       st->worker_stats[i].index,
			       ctr(&st->worker_stats[i].c, off));
		break;
	case ROW_QUEUE:
		for (i = 0; i < st->n_queues; i++) {
			printf("%s{", name);
			labels_queue(&st->queues[i]);
			printf("} %" PRIu64 "\n", ctr(&st->queues[i].c, off));
		}
		break;
	case ROW_SESSION:
		for (i = 0; i < s->n_sess; i++) {
			printf("%s{", name);
			labels_session(&s->sess[i]);
			printf("} %" PRIu64 "\n", ctr(&s->sess[i].c, off));
		}
		break;
	}
}

static void prom_quantiles(const char *name, const char *labels_open,
			   const struct cc_latency *l)
{
	static const char *const q[] = { "0.5", "0.9", "0.99", "0.999" };
	const uint64_t v[] = { l->p50_ns, l->p90_ns, l->p99_ns, l->p999_ns };
	unsigned i;

	for (i = 0; i < 4; i++)
		printf("%s{%squantile=\"%s\"} %.9f\n", name, labels_open, q[i],
		       v[i] / 1e9);
}

/* A summary: quantiles, then _sum and _count, per worker and per queue. */
static void prom_latency(const struct stats_snap *s, enum prom_row row,
			 const char *name, const char *help)
{
	const struct cc_stats *st = &s->st;
	char lab[160];
	unsigned i;

	prom_head(name, "summary", help);
	if (row == ROW_WORKER) {
		for (i = 0; i < st->n_workers_stats; i++) {
			const struct cc_latency *l = &st->worker_stats[i].lat;

			snprintf(lab, sizeof(lab), "worker=\"%u\",",
				 st->worker_stats[i].index);
			prom_quantiles(name, lab, l);
			printf("%s_sum{worker=\"%u\"} %.9f\n", name,
			       st->worker_stats[i].index, l->sum_ns / 1e9);
			printf("%s_count{worker=\"%u\"} %" PRIu64 "\n", name,
			       st->worker_stats[i].index, l->count);
		}
		return;
	}
	for (i = 0; i < st->n_queues; i++) {
		const struct cc_queue_stats *q = &st->queues[i];
		static const char *const q_s[] = { "0.5", "0.9", "0.99",
						   "0.999" };
		const uint64_t v[] = { q->lat.p50_ns, q->lat.p90_ns,
				       q->lat.p99_ns, q->lat.p999_ns };

		for (unsigned k = 0; k < 4; k++) {
			printf("%s{", name);
			labels_queue(q);
			printf(",quantile=\"%s\"} %.9f\n", q_s[k], v[k] / 1e9);
		}
		printf("%s_sum{", name);
		labels_queue(q);
		printf("} %.9f\n%s_count{", q->lat.sum_ns / 1e9, name);
		labels_queue(q);
		printf("} %" PRIu64 "\n", q->lat.count);
	}
}

static void prom_queue_gauge(const struct cc_stats *st, const char *name,
			     const char *help, int in_flight)
{
	unsigned i;

	prom_head(name, "gauge", help);
	for (i = 0; i < st->n_queues; i++) {
		printf("%s{", name);
		labels_queue(&st->queues[i]);
		printf("} %" PRIu64 "\n",
		       in_flight ? (uint64_t)st->queues[i].in_flight
				 : st->queues[i].connected_ms / 1000);
	}
}

void stats_print_prom(const struct stats_snap *s)
{
	const struct cc_stats *st = &s->st;
	unsigned i;

	prom_head("cryptod_up", "gauge", "1 when cryptod answered.");
	puts("cryptod_up 1");
	prom_head("cryptod_uptime_seconds", "gauge",
		  "Seconds since the daemon started.");
	printf("cryptod_uptime_seconds %.3f\n", st->uptime_ms / 1e3);
	prom_head("cryptod_workers", "gauge", "Worker threads.");
	printf("cryptod_workers %u\n", st->workers);
	prom_head("cryptod_clients", "gauge", "Connected clients.");
	printf("cryptod_clients %u\n", st->clients);
	prom_head("cryptod_sessions", "gauge", "Sessions held, all clients.");
	printf("cryptod_sessions %u\n", st->sessions);

	prom_counters(s, ROW_ENGINE, "cryptod_engine_ops_total",
		      "Ops an engine completed successfully.", CNT(ops));
	prom_counters(s, ROW_ENGINE, "cryptod_engine_bytes_total",
		      "Payload bytes of those ops.", CNT(bytes));
	prom_counters(s, ROW_ENGINE, "cryptod_engine_errors_total",
		      "Ops an engine failed (not tag mismatches).",
		      CNT(errors));
	prom_counters(s, ROW_ENGINE, "cryptod_engine_auth_failures_total",
		      "Decrypts whose tag did not verify.", CNT(auth_failures));

	prom_counters(s, ROW_WORKER, "cryptod_worker_ops_total",
		      "Ops a worker completed, any status.", CNT(ops));
	prom_counters(s, ROW_WORKER, "cryptod_worker_bytes_total",
		      "Payload bytes of the successful ones.", CNT(bytes));
	prom_counters(s, ROW_WORKER, "cryptod_worker_errors_total",
		      "Ops that failed (not tag mismatches).", CNT(errors));
	prom_counters(s, ROW_WORKER, "cryptod_worker_auth_failures_total",
		      "Decrypts whose tag did not verify.", CNT(auth_failures));
	prom_counters(s, ROW_WORKER, "cryptod_worker_empty_polls_total",
		      "Passes over all queues that found no work.",
		      CNT(empty_polls));
	prom_counters(s, ROW_WORKER, "cryptod_worker_wakeups_total",
		      "Times the worker woke from sleeping on its doorbell.",
		      CNT(wakeups));
	prom_head("cryptod_worker_asleep", "gauge",
		  "1 while the worker sleeps on the doorbell.");
	for (i = 0; i < st->n_workers_stats; i++)
		printf("cryptod_worker_asleep{worker=\"%u\"} %d\n",
		       st->worker_stats[i].index,
		       st->worker_stats[i].asleep != 0);
	prom_latency(s, ROW_WORKER, "cryptod_worker_service_seconds",
		     "Per op, from a worker's claim to the completion post.");

	prom_counters(s, ROW_QUEUE, "cryptod_queue_ops_total",
		      "Ops completed on a client queue, any status.", CNT(ops));
	prom_counters(s, ROW_QUEUE, "cryptod_queue_bytes_total",
		      "Payload bytes of the successful ones.", CNT(bytes));
	prom_counters(s, ROW_QUEUE, "cryptod_queue_errors_total",
		      "Ops that failed (not tag mismatches).", CNT(errors));
	prom_counters(s, ROW_QUEUE, "cryptod_queue_auth_failures_total",
		      "Decrypts whose tag did not verify.", CNT(auth_failures));
	prom_counters(s, ROW_QUEUE, "cryptod_queue_retries_total",
		      "Enqueues the ring refused (full), as the client counts.",
		      CNT(retries));
	prom_counters(s, ROW_QUEUE, "cryptod_queue_empty_polls_total",
		      "Worker visits to the queue that found nothing.",
		      CNT(empty_polls));
	prom_counters(s, ROW_QUEUE, "cryptod_queue_wakeups_total",
		      "Doorbells rung for a client sleeping on completions.",
		      CNT(wakeups));
	prom_queue_gauge(st, "cryptod_queue_in_flight",
			 "Ops submitted and not yet completed.", 1);
	prom_queue_gauge(st, "cryptod_queue_client_connected_seconds",
			 "How long the queue's client has been connected.", 0);
	prom_latency(s, ROW_QUEUE, "cryptod_queue_service_seconds",
		     "Per op, from a worker's claim to the completion post.");

	prom_counters(s, ROW_SESSION, "cryptod_session_ops_total",
		      "Ops of a session completed successfully.", CNT(ops));
	prom_counters(s, ROW_SESSION, "cryptod_session_bytes_total",
		      "Payload bytes of those ops.", CNT(bytes));
	prom_counters(s, ROW_SESSION, "cryptod_session_errors_total",
		      "Ops of the session that failed (not tag mismatches).",
		      CNT(errors));
	prom_counters(s, ROW_SESSION, "cryptod_session_auth_failures_total",
		      "Decrypts of the session whose tag did not verify.",
		      CNT(auth_failures));
}
