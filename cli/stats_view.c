/* SPDX-License-Identifier: MIT */
/*
 * The views of 'cryptoctl stats': a snapshot of the daemon's counters per
 * engine, worker, client queue and session, printed as aligned tables for
 * people or JSON for scripts, and the formats every view shares. The
 * command (cmd_stats.c) picks a view; the live one (stats_watch.c) and
 * Prometheus text (stats_prom.c) build on this file.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cryptod/clock.h>

#include "cli.h"
#include "stats_view.h"
#include "table.h"

/* The counters of cc_counters, in its order. */
enum { N_COUNTERS = 7 };

/* The first n counters of k, from column col on. */
static void tbl_counters(struct tbl *t, unsigned row, unsigned col,
			 const struct cc_counters *k, unsigned n)
{
	const uint64_t v[N_COUNTERS] = { k->ops,     k->bytes,
					 k->errors,  k->auth_failures,
					 k->retries, k->empty_polls,
					 k->wakeups };
	unsigned i;

	for (i = 0; i < n && i < N_COUNTERS; i++)
		if (i == 1) /* bytes */
			tbl_bytes(t, row, col + i, v[i]);
		else
			tbl_u64(t, row, col + i, v[i]);
}

static int print_engines(const struct cc_stats *st)
{
	/* Retries, empty polls and wake-ups belong to queues, not engines:
	 * engine rows show what the engine did. */
	/* An engine counts the ops it completed successfully (OK-OPS);
	 * workers and queues count every completion (OPS). */
	static const char *const titles[] = { "<ENGINE", "OK-OPS", "BYTES",
					      "ERRORS", "AUTH-FAIL" };
	enum { N_ENGINE_COUNTERS = 4 };
	struct tbl t;
	unsigned i;

	if (tbl_init(&t, st->n_engines, titles, 1 + N_ENGINE_COUNTERS))
		return -ENOMEM;
	for (i = 0; i < st->n_engines; i++) {
		tbl_text(&t, i, 0, st->engines[i].name);
		tbl_counters(&t, i, 1, &st->engines[i].c, N_ENGINE_COUNTERS);
	}
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

/* How workers took each queue's work: runs of 1, 2-3, 4-7, ... ops. */
static int print_runs(const struct cc_stats *st)
{
	static const char *const titles[] = { "CLIENT", "QUEUE", "1",
					      "2-3",	"4-7",	 "8-15",
					      "16-31",	"32-63", "64+" };
	enum { N_COLS = 9 };
	struct tbl t;
	unsigned i, b;

	if (tbl_init(&t, st->n_queues, titles, N_COLS))
		return -ENOMEM;
	for (i = 0; i < st->n_queues; i++) {
		const struct cc_queue_stats *q = &st->queues[i];

		tbl_u64(&t, i, 0, q->client_id);
		tbl_u64(&t, i, 1, q->queue_id);
		for (b = 0; b < 7; b++)
			tbl_u64(&t, i, 2 + b,
				q->batch_hist[b] +
					(b == 6 ? q->batch_hist[7] : 0));
	}
	printf("\nRuns of ops workers took at once, by size:\n");
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

static int print_queues(const struct cc_stats *st)
{
	static const char *const titles[] = {
		"CLIENT",    "QUEUE",	     "PID",	 "+UID",   "+SESSIONS",
		"IN-FLIGHT", "OPS",	     "BYTES",	 "ERRORS", "AUTH-FAIL",
		"+RETRIES",  "+EMPTY-POLLS", "+WAKEUPS", "<NAME",
	};
	enum { N_COLS = 6 + N_COUNTERS + 1 };
	struct tbl t;
	unsigned i;

	if (!st->n_queues) {
		puts("no client queues");
		return 0;
	}
	if (tbl_init(&t, st->n_queues, titles, N_COLS))
		return -ENOMEM;
	for (i = 0; i < st->n_queues; i++) {
		const struct cc_queue_stats *q = &st->queues[i];

		tbl_u64(&t, i, 0, q->client_id);
		tbl_u64(&t, i, 1, q->queue_id);
		tbl_u64(&t, i, 2, q->pid);
		tbl_u64(&t, i, 3, q->uid);
		tbl_u64(&t, i, 4, q->sessions);
		tbl_u64(&t, i, 5, q->in_flight);
		tbl_counters(&t, i, 6, &q->c, N_COUNTERS);
		tbl_text(&t, i, N_COLS - 1, q->client_name);
	}
	tbl_print(&t);
	tbl_fini(&t);
	return print_runs(st);
}

void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 100000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000)
		snprintf(buf, len, "%.0fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
}

static void tbl_ns(struct tbl *t, unsigned row, unsigned col, uint64_t ns,
		   uint64_t count)
{
	if (!count)
		snprintf(tbl_cell(t, row, col), TBL_CELL, "-");
	else
		fmt_ns(tbl_cell(t, row, col), TBL_CELL, ns);
}

static int print_workers(const struct cc_stats *st)
{
	static const char *const titles[] = {
		"WORKER",    "<STATE",	"OPS",	 "BYTES",	 "ERRORS",
		"AUTH-FAIL", "+PASSES", "+RUNS", "+EMPTY-POLLS", "+WAKEUPS",
		"P50",	     "+P90",	"P99",	 "P99.9",
	};
	enum { N_COLS = 14 };
	struct tbl t;
	unsigned i;

	if (tbl_init(&t, st->n_workers_stats, titles, N_COLS))
		return -ENOMEM;
	for (i = 0; i < st->n_workers_stats; i++) {
		const struct cc_worker_stats *w = &st->worker_stats[i];

		tbl_u64(&t, i, 0, w->index);
		tbl_text(&t, i, 1, w->asleep ? "asleep" : "polling");
		tbl_counters(&t, i, 2, &w->c, 4);
		tbl_u64(&t, i, 6, w->passes);
		tbl_u64(&t, i, 7, w->runs);
		tbl_u64(&t, i, 8, w->c.empty_polls);
		tbl_u64(&t, i, 9, w->c.wakeups);
		tbl_ns(&t, i, 10, w->lat.p50_ns, w->lat.count);
		tbl_ns(&t, i, 11, w->lat.p90_ns, w->lat.count);
		tbl_ns(&t, i, 12, w->lat.p99_ns, w->lat.count);
		tbl_ns(&t, i, 13, w->lat.p999_ns, w->lat.count);
	}
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

/* Key pairs' ops done, per algorithm (a TLS server's handshakes with a
 * daemon-held key are its signs). */
static int print_key_pairs(const struct stats_snap *s)
{
	static const char *const titles[] = {
		"<KEY PAIR", "SIGN", "VERIFY", "DERIVE", "ENCRYPT", "DECRYPT"
	};
	struct tbl t;

	if (tbl_init(&t, s->n_pk, titles, 6))
		return -ENOMEM;
	for (unsigned i = 0; i < s->n_pk; i++) {
		const struct cc_key_pair_ops *k = &s->pk[i];
		const char *name = cc_alg_name(k->alg);

		tbl_text(&t, i, 0, name ? name : "?");
		tbl_u64(&t, i, 1, k->sign);
		tbl_u64(&t, i, 2, k->verify);
		tbl_u64(&t, i, 3, k->derive);
		tbl_u64(&t, i, 4, k->encrypt);
		tbl_u64(&t, i, 5, k->decrypt);
	}
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

/* Service time per queue: claim to completion post. */
static int print_queue_latency(const struct cc_stats *st)
{
	static const char *const titles[] = {
		"CLIENT", "QUEUE", "OPS", "MEAN", "P50", "P90", "P99", "P99.9"
	};
	enum { N_COLS = 8 };
	struct tbl t;
	unsigned i;

	if (tbl_init(&t, st->n_queues, titles, N_COLS))
		return -ENOMEM;
	for (i = 0; i < st->n_queues; i++) {
		const struct cc_latency *l = &st->queues[i].lat;

		tbl_u64(&t, i, 0, st->queues[i].client_id);
		tbl_u64(&t, i, 1, st->queues[i].queue_id);
		tbl_u64(&t, i, 2, l->count);
		tbl_ns(&t, i, 3, l->count ? l->sum_ns / l->count : 0, l->count);
		tbl_ns(&t, i, 4, l->p50_ns, l->count);
		tbl_ns(&t, i, 5, l->p90_ns, l->count);
		tbl_ns(&t, i, 6, l->p99_ns, l->count);
		tbl_ns(&t, i, 7, l->p999_ns, l->count);
	}
	printf("\nService time per op (worker claim to completion post):\n");
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

void fmt_uptime(char *buf, size_t len, uint64_t ms)
{
	uint64_t s = ms / 1000;

	if (s >= 86400)
		snprintf(buf, len, "%" PRIu64 "d %02u:%02u:%02u", s / 86400,
			 (unsigned)(s / 3600 % 24), (unsigned)(s / 60 % 60),
			 (unsigned)(s % 60));
	else
		snprintf(buf, len, "%02u:%02u:%02u", (unsigned)(s / 3600),
			 (unsigned)(s / 60 % 60), (unsigned)(s % 60));
}

const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void print_stats_head(const struct cc_stats *st)
{
	char up[32];

	fmt_uptime(up, sizeof(up), st->uptime_ms);
	printf("cryptod: up %s, %u %s (%s polling), %u %s, %u %s", up,
	       st->workers, plural(st->workers, "worker", "workers"),
	       st->poll_mode[0] ? st->poll_mode : "?", st->clients,
	       plural(st->clients, "client", "clients"), st->sessions,
	       plural(st->sessions, "session", "sessions"));
}

int stats_print_tables(const struct stats_snap *snap)
{
	const struct cc_stats *st = &snap->st;

	print_stats_head(st);
	fputs("\n\n", stdout);
	if (print_engines(st))
		return -ENOMEM;
	putchar('\n');
	if (st->n_workers_stats) {
		if (print_workers(st))
			return -ENOMEM;
		putchar('\n');
	}
	if (snap->n_pk) {
		if (print_key_pairs(snap))
			return -ENOMEM;
		putchar('\n');
	}
	if (print_queues(st))
		return -ENOMEM;
	if (st->total_queues > st->n_queues)
		printf("(%u of %u queues shown: the reply was cut to fit)\n",
		       st->n_queues, st->total_queues);
	if (st->n_queues && print_queue_latency(st))
		return -ENOMEM;
	if (snap->n_sess)
		printf("\nSessions:\n");
	else
		putchar('\n');
	if (sessions_table(snap->sess, snap->n_sess))
		return -ENOMEM;
	printf("\nPrograms (connections by client name and uid; OFFLOAD, "
	       "FALLBACK, IN-PROC:\nmessages as the program reports them):\n");
	return programs_table(snap->progs, snap->n_progs);
}

static void json_counters(const struct cc_counters *k)
{
	printf("\"ops\": %" PRIu64 ", \"bytes\": %" PRIu64
	       ", \"errors\": %" PRIu64 ", \"auth_failures\": %" PRIu64
	       ", \"retries\": %" PRIu64 ", \"empty_polls\": %" PRIu64
	       ", \"wakeups\": %" PRIu64,
	       k->ops, k->bytes, k->errors, k->auth_failures, k->retries,
	       k->empty_polls, k->wakeups);
}

static void json_latency(const struct cc_latency *l)
{
	printf("\"latency\": {\"count\": %" PRIu64 ", \"sum_ns\": %" PRIu64
	       ", \"p50_ns\": %" PRIu64 ", \"p90_ns\": %" PRIu64
	       ", \"p99_ns\": %" PRIu64 ", \"p999_ns\": %" PRIu64 "}",
	       l->count, l->sum_ns, l->p50_ns, l->p90_ns, l->p99_ns,
	       l->p999_ns);
}

static void json_workers(const struct cc_stats *st)
{
	unsigned i;

	fputs(",\n  \"worker_stats\": [", stdout);
	for (i = 0; i < st->n_workers_stats; i++) {
		const struct cc_worker_stats *w = &st->worker_stats[i];

		printf("%s\n    {\"index\": %u, \"asleep\": %s, "
		       "\"passes\": %" PRIu64 ", \"runs\": %" PRIu64 ", ",
		       i ? "," : "", w->index, w->asleep ? "true" : "false",
		       w->passes, w->runs);
		json_counters(&w->c);
		fputs(", ", stdout);
		json_latency(&w->lat);
		putchar('}');
	}
	printf("%s]", st->n_workers_stats ? "\n  " : "");
}

static void json_sessions(const struct stats_snap *s)
{
	fputs(",\n  \"session_list\": [", stdout);
	sessions_json_items(s->sess, s->n_sess, "    ");
	printf("%s]", s->n_sess ? "\n  " : "");
}

void stats_print_json(const struct stats_snap *snap)
{
	const struct cc_stats *st = &snap->st;
	unsigned i;

	printf("{\n  \"uptime_ms\": %" PRIu64 ",\n  \"workers\": %u,\n"
	       "  \"poll_mode\": ",
	       st->uptime_ms, st->workers);
	json_str(st->poll_mode);
	printf(",\n  \"clients\": %u,\n  \"sessions\": %u,\n  \"engines\": [",
	       st->clients, st->sessions);
	for (i = 0; i < st->n_engines; i++) {
		printf("%s\n    {\"name\": ", i ? "," : "");
		json_str(st->engines[i].name);
		fputs(", ", stdout);
		json_counters(&st->engines[i].c);
		putchar('}');
	}
	printf("%s]", st->n_engines ? "\n  " : "");
	json_workers(st);
	fputs(",\n  \"key_pair_ops\": [", stdout);
	for (i = 0; i < snap->n_pk; i++) {
		const struct cc_key_pair_ops *k = &snap->pk[i];
		const char *name = cc_alg_name(k->alg);

		printf("%s\n    {\"alg\": ", i ? "," : "");
		json_str(name ? name : "?");
		printf(", \"sign\": %" PRIu64 ", \"verify\": %" PRIu64
		       ", \"derive\": %" PRIu64 ", \"encrypt\": %" PRIu64
		       ", \"decrypt\": %" PRIu64 "}",
		       k->sign, k->verify, k->derive, k->encrypt, k->decrypt);
	}
	printf("%s]", snap->n_pk ? "\n  " : "");
	printf(",\n  \"total_queues\": %u,\n  \"queues\": [", st->total_queues);
	for (i = 0; i < st->n_queues; i++) {
		const struct cc_queue_stats *q = &st->queues[i];

		printf("%s\n    {\"client_id\": %u, \"queue_id\": %u, "
		       "\"pid\": %u, \"uid\": %u, \"client_name\": ",
		       i ? "," : "", q->client_id, q->queue_id, q->pid, q->uid);
		json_str(q->client_name);
		printf(", \"connected_ms\": %" PRIu64
		       ", \"in_flight\": %u, \"sessions\": %u, ",
		       q->connected_ms, q->in_flight, q->sessions);
		json_counters(&q->c);
		fputs(", \"batch_hist\": [", stdout);
		for (unsigned b = 0; b < 8; b++)
			printf("%s%" PRIu64, b ? ", " : "", q->batch_hist[b]);
		fputs("], ", stdout);
		json_latency(&q->lat);
		putchar('}');
	}
	printf("%s]", st->n_queues ? "\n  " : "");
	json_sessions(snap);
	fputs(",\n  \"programs\": [", stdout);
	programs_json_items(snap->progs, snap->n_progs, "    ");
	printf("%s]", snap->n_progs ? "\n  " : "");
	fputs("\n}\n", stdout);
}

int stats_snap_take(struct cc_conn *conn, struct stats_snap *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = cc_stats_get(conn, &s->st);
	if (ret < 0)
		return ret;
	ret = cc_stats_key_pairs(conn, s->pk, CC_KEY_PAIR_ALGS);
	s->n_pk = ret < CC_KEY_PAIR_ALGS ? (unsigned)ret : CC_KEY_PAIR_ALGS;
	ret = cc_sessions_get(conn, &s->sess, &s->n_sess);
	if (ret < 0) {
		cc_stats_free(&s->st);
		return ret;
	}
	ret = cc_programs_get(conn, &s->progs, &s->n_progs);
	if (ret < 0) {
		stats_snap_free(s);
		return ret;
	}
	s->t = (double)crd_now_ns() / 1e9;
	return 0;
}

void stats_snap_free(struct stats_snap *s)
{
	cc_stats_free(&s->st);
	free(s->sess);
	s->sess = NULL;
	s->n_sess = 0;
	free(s->progs);
	s->progs = NULL;
	s->n_progs = 0;
}
