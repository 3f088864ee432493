/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl stats --prometheus: the Prometheus text exposition format
 * (version 0.0.4), as node_exporter's textfile collector reads it. Every
 * family is printed whole (HELP, TYPE, then all its samples) before the
 * next; counters end in _total; latencies are summaries in seconds.
 * docs/observability.md lists every metric. The one formatter of them:
 * 'stats --prometheus' writes it to stdout, 'stats --serve'
 * (stats_serve.c) into the body of an HTTP answer.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "stats_view.h"

/* What one family reads from one row: a row is an engine, a worker, a
 * queue or a session, each with its own labels. */
enum prom_row { ROW_ENGINE, ROW_WORKER, ROW_QUEUE, ROW_SESSION };

#define CNT(f) ((long)offsetof(struct cc_counters, f))

/* A label value: backslash, double quote and newline escaped; bytes
 * that are not printable ASCII become '?', as in the tables. */
static void prom_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s >= 0x20 && *s < 0x7f ? *s : '?', f);
	}
}

static void prom_head(FILE *f, const char *name, const char *type,
		      const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void labels_queue(FILE *f, const struct cc_queue_stats *q)
{
	fprintf(f, "client=\"%u\",queue=\"%u\",client_name=\"", q->client_id,
		q->queue_id);
	prom_label(f, q->client_name);
	fputc('"', f);
}

/* Rows of one kind: how many, their labels, counters and latency. */
static unsigned prom_rows(const struct stats_snap *s, enum prom_row row)
{
	switch (row) {
	case ROW_ENGINE:
		return s->st.n_engines;
	case ROW_WORKER:
		return s->st.n_workers_stats;
	case ROW_QUEUE:
		return s->st.n_queues;
	default:
		return s->n_sess;
	}
}

static void prom_labels(FILE *f, const struct stats_snap *s, enum prom_row row,
			unsigned i)
{
	const struct cc_session_info *x;
	const char *alg;

	switch (row) {
	case ROW_ENGINE:
		fputs("engine=\"", f);
		prom_label(f, s->st.engines[i].name);
		fputc('"', f);
		break;
	case ROW_WORKER:
		fprintf(f, "worker=\"%u\"", s->st.worker_stats[i].index);
		break;
	case ROW_QUEUE:
		labels_queue(f, &s->st.queues[i]);
		break;
	case ROW_SESSION:
		x = &s->sess[i];
		alg = cc_alg_name(x->alg);
		fprintf(f, "client=\"%u\",session=\"%u\",alg=\"%s\",engine=\"",
			x->client_id, x->session_id, alg ? alg : "unknown");
		prom_label(f, x->engine);
		fputc('"', f);
		break;
	}
}

static const struct cc_counters *prom_ctr(const struct stats_snap *s,
					  enum prom_row row, unsigned i)
{
	switch (row) {
	case ROW_ENGINE:
		return &s->st.engines[i].c;
	case ROW_WORKER:
		return &s->st.worker_stats[i].c;
	case ROW_QUEUE:
		return &s->st.queues[i].c;
	default:
		return &s->sess[i].c;
	}
}

static void prom_counters(FILE *f, const struct stats_snap *s,
			  enum prom_row row, const char *name, const char *help,
			  long off)
{
	prom_head(f, name, "counter", help);
	for (unsigned i = 0; i < prom_rows(s, row); i++) {
		const char *c = (const char *)prom_ctr(s, row, i);

		fprintf(f, "%s{", name);
		prom_labels(f, s, row, i);
		fprintf(f, "} %" PRIu64 "\n",
			*(const uint64_t *)(const void *)(c + off));
	}
}

/* A summary per worker or queue: quantiles, then _sum and _count. */
static void prom_latency(FILE *f, const struct stats_snap *s, enum prom_row row,
			 const char *name, const char *help)
{
	static const char *const q[] = { "0.5", "0.9", "0.99", "0.999" };

	prom_head(f, name, "summary", help);
	for (unsigned i = 0; i < prom_rows(s, row); i++) {
		const struct cc_latency *l =
			row == ROW_WORKER ? &s->st.worker_stats[i].lat
					  : &s->st.queues[i].lat;
		const uint64_t v[] = { l->p50_ns, l->p90_ns, l->p99_ns,
				       l->p999_ns };

		for (unsigned k = 0; k < 4; k++) {
			fprintf(f, "%s{", name);
			prom_labels(f, s, row, i);
			fprintf(f, ",quantile=\"%s\"} %.9f\n", q[k],
				v[k] / 1e9);
		}
		fprintf(f, "%s_sum{", name);
		prom_labels(f, s, row, i);
		fprintf(f, "} %.9f\n%s_count{", l->sum_ns / 1e9, name);
		prom_labels(f, s, row, i);
		fprintf(f, "} %" PRIu64 "\n", l->count);
	}
}

static void prom_queue_gauge(FILE *f, const struct stats_snap *s,
			     const char *name, const char *help, int in_flight)
{
	prom_head(f, name, "gauge", help);
	for (unsigned i = 0; i < s->st.n_queues; i++) {
		const struct cc_queue_stats *q = &s->st.queues[i];

		fprintf(f, "%s{", name);
		prom_labels(f, s, ROW_QUEUE, i);
		fprintf(f, "} %" PRIu64 "\n",
			in_flight ? (uint64_t)q->in_flight
				  : q->connected_ms / 1000);
	}
}

/* Every counter family: which rows, name, help, which counter. */
static const struct prom_family {
	enum prom_row row;
	const char *name, *help;
	long off;
} prom_families[] = {
	{ ROW_ENGINE, "cryptod_engine_ops_total",
	  "Ops an engine completed successfully.", CNT(ops) },
	{ ROW_ENGINE, "cryptod_engine_bytes_total",
	  "Payload bytes of those ops.", CNT(bytes) },
	{ ROW_ENGINE, "cryptod_engine_errors_total",
	  "Ops an engine failed (not tag mismatches).", CNT(errors) },
	{ ROW_ENGINE, "cryptod_engine_auth_failures_total",
	  "Decrypts whose tag did not verify.", CNT(auth_failures) },
	{ ROW_WORKER, "cryptod_worker_ops_total",
	  "Ops a worker completed, any status.", CNT(ops) },
	{ ROW_WORKER, "cryptod_worker_bytes_total",
	  "Payload bytes of the successful ones.", CNT(bytes) },
	{ ROW_WORKER, "cryptod_worker_errors_total",
	  "Ops that failed (not tag mismatches).", CNT(errors) },
	{ ROW_WORKER, "cryptod_worker_auth_failures_total",
	  "Decrypts whose tag did not verify.", CNT(auth_failures) },
	{ ROW_WORKER, "cryptod_worker_empty_polls_total",
	  "Passes over all queues that found no work.", CNT(empty_polls) },
	{ ROW_WORKER, "cryptod_worker_wakeups_total",
	  "Times the worker woke from sleeping on its doorbell.",
	  CNT(wakeups) },
	{ ROW_QUEUE, "cryptod_queue_ops_total",
	  "Ops completed on a client queue, any status.", CNT(ops) },
	{ ROW_QUEUE, "cryptod_queue_bytes_total",
	  "Payload bytes of the successful ones.", CNT(bytes) },
	{ ROW_QUEUE, "cryptod_queue_errors_total",
	  "Ops that failed (not tag mismatches).", CNT(errors) },
	{ ROW_QUEUE, "cryptod_queue_auth_failures_total",
	  "Decrypts whose tag did not verify.", CNT(auth_failures) },
	{ ROW_QUEUE, "cryptod_queue_retries_total",
	  "Enqueues the ring refused (full), as the client counts.",
	  CNT(retries) },
	{ ROW_QUEUE, "cryptod_queue_empty_polls_total",
	  "Worker visits to the queue that found nothing.", CNT(empty_polls) },
	{ ROW_QUEUE, "cryptod_queue_wakeups_total",
	  "Doorbells rung for a client sleeping on completions.",
	  CNT(wakeups) },
	{ ROW_SESSION, "cryptod_session_ops_total",
	  "Ops of a session completed successfully.", CNT(ops) },
	{ ROW_SESSION, "cryptod_session_bytes_total",
	  "Payload bytes of those ops.", CNT(bytes) },
	{ ROW_SESSION, "cryptod_session_errors_total",
	  "Ops of the session that failed (not tag mismatches).", CNT(errors) },
	{ ROW_SESSION, "cryptod_session_auth_failures_total",
	  "Decrypts of the session whose tag did not verify.",
	  CNT(auth_failures) },
};

/* Per program (client name and uid): the "(other)" row is labelled
 * program="(other)",uid="-". */
#define PRG(f) ((long)offsetof(struct cc_program_stats, f))
static const struct prog_family {
	const char *name, *type, *help;
	long off;
	int u32;
} prog_families[] = {
	{ "cryptod_program_open_connections", "gauge",
	  "Connections of the program open now.", PRG(connections), 1 },
	{ "cryptod_program_connections_total", "counter",
	  "Connections of the program since the daemon started.",
	  PRG(connections_total), 0 },
	{ "cryptod_program_queues", "gauge",
	  "Queues its connections hold open now.", PRG(queues), 1 },
	{ "cryptod_program_ops_total", "counter",
	  "Ops completed on its queues, any status.", PRG(ops), 0 },
	{ "cryptod_program_bytes_total", "counter",
	  "Payload bytes of the successful ones.", PRG(bytes), 0 },
	{ "cryptod_program_errors_total", "counter",
	  "Ops that failed (not tag mismatches).", PRG(errors), 0 },
	{ "cryptod_program_auth_failures_total", "counter",
	  "Decrypts whose tag did not verify.", PRG(auth_failures), 0 },
	{ "cryptod_program_offloaded_messages_total", "counter",
	  "Messages the daemon ran, as the program reports.",
	  PRG(usage.offloaded), 0 },
	{ "cryptod_program_fallbacks_total", "counter",
	  "Messages it ran elsewhere because the daemon could not, as it "
	  "reports.",
	  PRG(usage.fallbacks), 0 },
	{ "cryptod_program_inprocess_messages_total", "counter",
	  "Messages it kept in-process (below its size threshold), as it "
	  "reports.",
	  PRG(usage.inprocess), 0 },
};

static void prom_programs(FILE *f, const struct stats_snap *s)
{
	for (size_t k = 0; k < sizeof(prog_families) / sizeof(prog_families[0]);
	     k++) {
		const struct prog_family *pf = &prog_families[k];

		prom_head(f, pf->name, pf->type, pf->help);
		for (unsigned i = 0; i < s->n_progs; i++) {
			const struct cc_program_stats *p = &s->progs[i];
			const char *b = (const char *)p + pf->off;
			uint64_t v =
				pf->u32 ? *(const uint32_t *)(const void *)b
					: *(const uint64_t *)(const void *)b;

			fprintf(f, "%s{program=\"", pf->name);
			prom_label(f, p->name);
			if (p->other)
				fputs("\",uid=\"-\"}", f);
			else
				fprintf(f, "\",uid=\"%u\"}", p->uid);
			fprintf(f, " %" PRIu64 "\n", v);
		}
	}
}

/* Key pairs' ops done, per algorithm and op: a TLS server's handshakes
 * with a daemon-held key are its signs. */
static void prom_key_pairs(FILE *f, const struct stats_snap *s)
{
	prom_head(f, "cryptod_key_pair_ops_total", "counter",
		  "Key pair ops done, per algorithm and op.");
	for (unsigned i = 0; i < s->n_pk; i++) {
		const struct cc_key_pair_ops *k = &s->pk[i];
		const char *name = cc_alg_name(k->alg);
		const struct {
			const char *op;
			uint64_t n;
		} v[] = { { "sign", k->sign },
			  { "verify", k->verify },
			  { "derive", k->derive },
			  { "encrypt", k->encrypt },
			  { "decrypt", k->decrypt } };
		for (unsigned j = 0; j < sizeof(v) / sizeof(v[0]); j++)
			fprintf(f,
				"cryptod_key_pair_ops_total{alg=\"%s\","
				"op=\"%s\"} %" PRIu64 "\n",
				name ? name : "?", v[j].op, v[j].n);
	}
}

void stats_print_prom_down(FILE *f)
{
	prom_head(f, "cryptod_up", "gauge", "1 when cryptod answered.");
	fputs("cryptod_up 0\n", f);
}

void stats_print_prom(FILE *f, const struct stats_snap *s)
{
	const struct cc_stats *st = &s->st;
	unsigned i;

	prom_head(f, "cryptod_up", "gauge", "1 when cryptod answered.");
	fputs("cryptod_up 1\n", f);
	prom_head(f, "cryptod_uptime_seconds", "gauge",
		  "Seconds since the daemon started.");
	fprintf(f, "cryptod_uptime_seconds %.3f\n", st->uptime_ms / 1e3);
	prom_head(f, "cryptod_workers", "gauge", "Worker threads.");
	fprintf(f, "cryptod_workers %u\n", st->workers);
	prom_head(f, "cryptod_clients", "gauge", "Connected clients.");
	fprintf(f, "cryptod_clients %u\n", st->clients);
	prom_head(f, "cryptod_sessions", "gauge",
		  "Sessions held, all clients.");
	fprintf(f, "cryptod_sessions %u\n", st->sessions);

	for (i = 0; i < sizeof(prom_families) / sizeof(prom_families[0]); i++) {
		const struct prom_family *pf = &prom_families[i];

		prom_counters(f, s, pf->row, pf->name, pf->help, pf->off);
	}
	prom_head(f, "cryptod_worker_asleep", "gauge",
		  "1 while the worker sleeps on the doorbell.");
	for (i = 0; i < st->n_workers_stats; i++)
		fprintf(f, "cryptod_worker_asleep{worker=\"%u\"} %d\n",
			st->worker_stats[i].index,
			st->worker_stats[i].asleep != 0);
	prom_latency(f, s, ROW_WORKER, "cryptod_worker_service_seconds",
		     "Per op, from a worker's claim to the completion post.");
	prom_key_pairs(f, s);

	prom_queue_gauge(f, s, "cryptod_queue_in_flight",
			 "Ops submitted and not yet completed.", 1);
	prom_queue_gauge(f, s, "cryptod_queue_client_connected_seconds",
			 "How long the queue's client has been connected.", 0);
	prom_latency(f, s, ROW_QUEUE, "cryptod_queue_service_seconds",
		     "Per op, from a worker's claim to the completion post.");
	prom_programs(f, s);
}
