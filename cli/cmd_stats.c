/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl stats: the daemon's counters per engine, worker, client queue
 * and session, as aligned tables for people, JSON for scripts, Prometheus
 * text for node_exporter, or a live view (stats_watch.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cryptod/clock.h>

#include "cryptoctl.h"

static const char usage_stats[] =
	"Usage: cryptoctl stats [--json | --wide] [--watch [SECONDS]\n"
	"                       [--count N]] [--socket PATH]\n"
	"       cryptoctl stats --prometheus [--socket PATH]\n"
	"\n"
	"Print the daemon's uptime, workers, clients and sessions; per engine\n"
	"the ops it completed successfully (OK-OPS), bytes, errors and\n"
	"authentication failures; per worker every op it completed (OPS:\n"
	"any status), the same counters plus empty polls (passes that found no work),\n"
	"wake-ups (times it woke from sleep), passes, runs and its service\n"
	"time percentiles; per client queue the counters plus retries\n"
	"(enqueue refused: ring full), empty polls (worker visits that found\n"
	"nothing), wake-ups (doorbells rung for a sleeping client), its\n"
	"owner, sessions, ops in flight and service time p50/p90/p99/p99.9\n"
	"(from a worker's claim of an op to the post of its completion);\n"
	"per queue the runs of 1, 2-3, 4-7, ... ops workers took at once; and\n"
	"per session its algorithm, engine and counters; and per program\n"
	"(client name and uid: open connections, plus closed ones the daemon\n"
	"keeps for up to 64 programs) its connections, queues, ops, bytes,\n"
	"errors and the messages it reports it sent to the daemon, fell back\n"
	"on or kept in-process (the OpenSSL provider does). A client that is\n"
	"not root or the daemon's user sees only its own queues, sessions and\n"
	"program row.\n"
	"docs/observability.md describes every field.\n"
	"\n"
	"  -j, --json         one JSON object instead of the tables:\n"
	"                     uptime_ms, workers, poll_mode, clients,\n"
	"                     sessions, engines[] (name, COUNTERS),\n"
	"                     worker_stats[] (index, asleep, passes, runs,\n"
	"                     COUNTERS, latency), queues[] (client_id,\n"
	"                     queue_id, pid, uid, client_name, connected_ms,\n"
	"                     in_flight, sessions, COUNTERS, batch_hist[8],\n"
	"                     latency) and session_list[] (client_id,\n"
	"                     session_id, pid, uid, alg, key_bits, engine,\n"
	"                     tag_len, ops, bytes, errors, auth_failures)\n"
	"                     and programs[] (name, uid, other, connections,\n"
	"                     connections_total, queues, idle_ms, ops, bytes,\n"
	"                     errors, auth_failures, offloaded, fallbacks,\n"
	"                     inprocess),\n"
	"                     where COUNTERS are ops,\n"
	"                     bytes, errors, auth_failures, retries,\n"
	"                     empty_polls and wakeups, and latency is\n"
	"                     {count, sum_ns, p50_ns, p90_ns, p99_ns, p999_ns}\n"
	"                     With --watch: that object on one line per\n"
	"                     interval, with snapshot (1, 2, ...) and\n"
	"                     interval_s first; rates are the differences\n"
	"                     of two lines over the difference of uptime_ms\n"
	"  -p, --prometheus   Prometheus text format (node_exporter's textfile\n"
	"                     collector): cryptod_* metrics labelled engine,\n"
	"                     worker, client, queue, session; cryptod_program_*\n"
	"                     labelled program, uid. When the daemon does\n"
	"                     not answer: cryptod_up 0 alone, the reason on\n"
	"                     stderr, exit status 0 (the metrics report it)\n"
	"  -w, --watch [SECONDS]\n"
	"                     a live view refreshed every SECONDS (default 1,\n"
	"                     0.1 to 3600): rates per second (engines,\n"
	"                     workers, queues, programs) and the service\n"
	"                     time of the last interval; q or Ctrl-C quits.\n"
	"                     When stdout is not a terminal, one snapshot per\n"
	"                     interval, one after another\n"
	"  -n, --count N      with --watch: stop after N refreshes\n"
	"      --wide         every column (the tables keep within 100\n"
	"                     columns without it: workers leave out PASSES,\n"
	"                     RUNS, EMPTY-POLLS, WAKEUPS and P90, queues UID,\n"
	"                     SESSIONS, RETRIES, EMPTY-POLLS and WAKEUPS,\n"
	"                     --watch's queues RETRY/s; names are\n"
	"                     cut to 20 characters, ending in ~)\n"
	"  -s, --socket PATH  daemon socket\n"
	"  -h, --help         this text\n";

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

/* A number of seconds in [0.1, WATCH_MAX_S]: 0, or -EINVAL. */
static int parse_interval(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0.1 && v <= WATCH_MAX_S))
		return -EINVAL;
	*out = v;
	return 0;
}

static int is_number(const char *s)
{
	char *end;

	if (!*s)
		return 0;
	(void)strtod(s, &end);
	return !*end;
}

int cmd_stats(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'n' },
		{ "wide", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	enum { TABLES, JSON, PROM, WATCH } mode = TABLES;
	int json = 0;
	struct stats_snap snap;
	struct cc_conn *conn;
	double interval = 1;
	unsigned long count = 0;
	int c, ret, modes = 0;
	char *end;

	optind = 0;
	while ((c = getopt_long(argc, argv, "jpw::n:hs:", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'W':
			tbl_wide = 1;
			break;
		case 'p':
			mode = PROM;
			modes++;
			break;
		case 'w':
			mode = WATCH;
			modes++;
			if (optarg && parse_interval(optarg, &interval))
				goto bad_interval;
			break;
		case 'n':
			errno = 0;
			count = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || !count ||
			    count > WATCH_MAX_COUNT) {
				cli_usage_err("stats",
					      "--count wants 1 to %u, not '%s'",
					      WATCH_MAX_COUNT, optarg);
				return CLI_EXIT_USAGE;
			}
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
	/* '--watch 2': getopt leaves an optional argument's separate word
	 * as an operand. */
	if (mode == WATCH && optind < argc && is_number(argv[optind])) {
		optarg = argv[optind++];
		if (parse_interval(optarg, &interval))
			goto bad_interval;
	}
	if (cli_no_args("stats", argc, argv))
		return CLI_EXIT_USAGE;
	if (modes > 1 || (json && mode == PROM)) {
		cli_usage_err("stats", "--prometheus excludes --json and "
				       "--watch");
		return CLI_EXIT_USAGE;
	}
	if (json && mode == TABLES)
		mode = JSON;
	if (count && mode != WATCH) {
		cli_usage_err("stats", "--count goes with --watch");
		return CLI_EXIT_USAGE;
	}

	if (cli_connect(cli, &conn)) {
		/* A textfile collector keeps the last file it read: the
		 * metrics themselves must say the daemon is down. */
		if (mode == PROM) {
			stats_print_prom_down();
			return CLI_EXIT_OK;
		}
		return CLI_EXIT_FAIL;
	}
	if (mode == WATCH) {
		ret = stats_watch(conn, interval, (unsigned)count, json);
		cc_disconnect(conn);
		return ret;
	}
	ret = stats_snap_take(conn, &snap);
	cc_disconnect(conn);
	if (ret < 0) {
		cli_err("stats: %s", cc_strerror(ret));
		if (mode == PROM) {
			stats_print_prom_down();
			return CLI_EXIT_OK;
		}
		return CLI_EXIT_FAIL;
	}

	ret = 0;
	if (mode == JSON)
		stats_print_json(&snap);
	else if (mode == PROM)
		stats_print_prom(&snap);
	else
		ret = stats_print_tables(&snap);
	stats_snap_free(&snap);
	if (ret < 0) {
		cli_err("stats: %s", strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;

bad_interval:
	cli_usage_err("stats", "--watch wants 0.1 to %u seconds, not '%s'",
		      WATCH_MAX_S, optarg);
	return CLI_EXIT_USAGE;
}
