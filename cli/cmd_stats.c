/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl stats: the daemon's counters per engine and per client queue,
 * as aligned tables for people or as JSON for scripts.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cryptoctl.h"

static const char usage_stats[] =
	"Usage: cryptoctl stats [--json] [--socket PATH]\n"
	"\n"
	"Print the daemon's uptime, workers, clients and sessions; per engine\n"
	"the ops, bytes, errors and authentication failures it saw; per\n"
	"client queue the same plus retries (enqueue refused: ring full),\n"
	"empty polls (worker passes that found no work), wake-ups (doorbells\n"
	"rung for a sleeping client), its owner (client id, pid, uid, name),\n"
	"its sessions and the ops in flight; then, per queue, how many runs\n"
	"of 1, 2-3, 4-7, ... ops the workers took at once. Bytes are exact.\n"
	"\n"
	"  -j, --json         one JSON object instead of the tables:\n"
	"                     uptime_ms, workers, poll_mode, clients,\n"
	"                     sessions, engines[] (name, COUNTERS) and\n"
	"                     queues[] (client_id, queue_id, pid, uid,\n"
	"                     client_name, in_flight, sessions, COUNTERS,\n"
	"                     batch_hist[8]: runs of 1, 2-3, ..., 128-255\n"
	"                     ops workers took at once), where COUNTERS\n"
	"                     are ops, bytes, errors, auth_failures,\n"
	"                     retries, empty_polls and wakeups\n"
	"  -s, --socket PATH  daemon socket\n"
	"  -h, --help         this text\n";

/* The counter columns both tables end with, in cc_counters order. */
#define COUNTER_TITLES                                                         \
	"OPS", "BYTES", "ERRORS", "AUTH-FAIL", "RETRIES", "EMPTY-POLLS",       \
		"WAKEUPS"
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
		tbl_u64(t, row, col + i, v[i]);
}

static int print_engines(const struct cc_stats *st)
{
	/* Retries, empty polls and wake-ups belong to queues, not engines:
	 * engine rows show what the engine did. */
	static const char *const titles[] = { "<ENGINE", "OPS", "BYTES",
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
		"CLIENT",   "QUEUE",	 "PID",		 "UID",
		"SESSIONS", "IN-FLIGHT", COUNTER_TITLES, "<NAME",
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

static int print_tables(const struct cc_stats *st)
{
	uint64_t s = st->uptime_ms / 1000;

	fputs("uptime ", stdout);
	if (s >= 86400)
		printf("%" PRIu64 "d ", s / 86400);
	printf("%02u:%02u:%02u, workers %u (%s polling), clients %u, sessions %u\n\n",
	       (unsigned)(s / 3600 % 24), (unsigned)(s / 60 % 60),
	       (unsigned)(s % 60), st->workers,
	       st->poll_mode[0] ? st->poll_mode : "?", st->clients,
	       st->sessions);
	if (print_engines(st))
		return -ENOMEM;
	putchar('\n');
	return print_queues(st);
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

static void print_json(const struct cc_stats *st)
{
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
	printf("%s],\n  \"queues\": [", st->n_engines ? "\n  " : "");
	for (i = 0; i < st->n_queues; i++) {
		const struct cc_queue_stats *q = &st->queues[i];

		printf("%s\n    {\"client_id\": %u, \"queue_id\": %u, "
		       "\"pid\": %u, \"uid\": %u, \"client_name\": ",
		       i ? "," : "", q->client_id, q->queue_id, q->pid, q->uid);
		json_str(q->client_name);
		printf(", \"in_flight\": %u, \"sessions\": %u, ", q->in_flight,
		       q->sessions);
		json_counters(&q->c);
		fputs(", \"batch_hist\": [", stdout);
		for (unsigned b = 0; b < 8; b++)
			printf("%s%" PRIu64, b ? ", " : "", q->batch_hist[b]);
		fputs("]}", stdout);
	}
	printf("%s]\n}\n", st->n_queues ? "\n  " : "");
}

int cmd_stats(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct cc_stats st;
	struct cc_conn *conn;
	int json = 0, c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, "jhs:", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(usage_stats, stdout);
			return CLI_EXIT_OK;
		case 's':
			cli->socket = optarg;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (cli_no_args("stats", argc, argv))
		return CLI_EXIT_USAGE;

	if (cli_connect(cli, &conn))
		return CLI_EXIT_FAIL;
	memset(&st, 0, sizeof(st));
	ret = cc_stats_get(conn, &st);
	cc_disconnect(conn);
	if (ret < 0) {
		cli_err("stats: %s", cc_strerror(ret));
		return CLI_EXIT_FAIL;
	}

	ret = 0;
	if (json)
		print_json(&st);
	else
		ret = print_tables(&st);
	cc_stats_free(&st);
	if (ret < 0) {
		cli_err("stats: %s", strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}
