/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl stats: the daemon's counters per engine, worker, client queue
 * and session, as aligned tables for people, JSON for scripts (both
 * stats_view.c), Prometheus text for node_exporter (stats_prom.c), an
 * HTTP exporter of that text (stats_serve.c), or a live view
 * (stats_watch.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "stats_view.h"
#include "table.h"

static const char usage_stats[] =
	"Usage: cryptoctl stats [--json | --wide] [--exact]\n"
	"                       [--watch [SECONDS] [--count N]] [--socket PATH]\n"
	"       cryptoctl stats --prometheus [--socket PATH]\n"
	"       cryptoctl stats --serve [[ADDR:]PORT] [--socket PATH]\n"
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
	"                     and programs[] (name, user (null: none), uid,\n"
	"                     other, connections,\n"
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
	"  -S, --serve [[ADDR:]PORT]\n"
	"                     a Prometheus exporter: answer HTTP GET /metrics\n"
	"                     with the --prometheus text, read from the\n"
	"                     daemon at each scrape (503 and cryptod_up 0\n"
	"                     while it does not answer); / links to it, other\n"
	"                     paths are 404. Listens on 127.0.0.1:9464 by\n"
	"                     default, on loopback unless ADDR is given\n"
	"                     (':PORT' every IPv4 address, '[::]:PORT' every\n"
	"                     address), or on the sockets systemd passes\n"
	"                     (cryptod-metrics.socket). Runs until SIGTERM or\n"
	"                     Ctrl-C. Run it as root or cryptod's user: others\n"
	"                     see only their own connection's figures (it\n"
	"                     says so once on stderr)\n"
	"  -w, --watch [SECONDS]\n"
	"                     a live view refreshed every SECONDS (default 1,\n"
	"                     0.1 to 3600): rates per second (engines,\n"
	"                     workers, queues, programs) and the service\n"
	"                     time of the last interval; q or Ctrl-C quits.\n"
	"                     When stdout is not a terminal, one snapshot per\n"
	"                     interval, one after another. When the daemon\n"
	"                     goes away (stopped, restarted) it says so on\n"
	"                     stderr and waits for it to come back\n"
	"  -n, --count N      with --watch: stop after N refreshes\n"
	"      --wide         every column (the tables keep within 100\n"
	"                     columns without it: workers leave out PASSES,\n"
	"                     RUNS, EMPTY-POLLS, WAKEUPS and P90, queues UID,\n"
	"                     SESSIONS, RETRIES, EMPTY-POLLS and WAKEUPS,\n"
	"                     --watch's queues RETRY/s; names are\n"
	"                     cut to 20 characters, ending in ~)\n"
	"      --exact        BYTES as exact integers (else 1024-based\n"
	"                     units as df -h: 850, 3.5K, 16.6G; --json\n"
	"                     and --prometheus are always exact)\n"
	"  -s, --socket PATH  daemon socket\n"
	"  -h, --help         this text\n";

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
		{ "serve", optional_argument, NULL, 'S' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'n' },
		{ "wide", no_argument, NULL, 'W' },
		{ "exact", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	enum { TABLES, JSON, PROM, WATCH, SERVE } mode = TABLES;
	const char *listen_on = NULL;
	int json = 0;
	struct stats_snap snap;
	struct cc_conn *conn;
	double interval = 1;
	unsigned long count = 0;
	int c, ret, modes = 0;
	char *end;

	optind = 0;
	while ((c = getopt_long(argc, argv, "jpS::w::n:hs:", opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'W':
			tbl_wide = 1;
			break;
		case 'X':
			tbl_exact = 1;
			break;
		case 'p':
			mode = PROM;
			modes++;
			break;
		case 'S':
			mode = SERVE;
			modes++;
			listen_on = optarg;
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
	/* '--serve 9464': the same for the address. */
	if (mode == SERVE && !listen_on && optind < argc)
		listen_on = argv[optind++];
	if (cli_no_args("stats", argc, argv))
		return CLI_EXIT_USAGE;
	if (modes > 1 || (json && (mode == PROM || mode == SERVE))) {
		cli_usage_err("stats", "--prometheus, --serve and --watch "
				       "exclude each other, the first two "
				       "--json");
		return CLI_EXIT_USAGE;
	}
	if (json && mode == TABLES)
		mode = JSON;
	if (count && mode != WATCH) {
		cli_usage_err("stats", "--count goes with --watch");
		return CLI_EXIT_USAGE;
	}

	if (mode == SERVE)
		return stats_serve(cli, listen_on);

	if (cli_connect(cli, &conn)) {
		/* A textfile collector keeps the last file it read: the
		 * metrics themselves must say the daemon is down. */
		if (mode == PROM) {
			stats_print_prom_down(stdout);
			return CLI_EXIT_OK;
		}
		return CLI_EXIT_FAIL;
	}
	if (mode == WATCH) {
		ret = stats_watch(cli, &conn, interval, (unsigned)count, json);
		if (conn)
			cc_disconnect(conn);
		return ret;
	}
	ret = stats_snap_take(conn, &snap);
	cc_disconnect(conn);
	if (ret < 0) {
		cli_err("stats: %s", cli_strerror(ret));
		if (mode == PROM) {
			stats_print_prom_down(stdout);
			return CLI_EXIT_OK;
		}
		return CLI_EXIT_FAIL;
	}

	ret = 0;
	if (mode == JSON)
		stats_print_json(&snap);
	else if (mode == PROM)
		stats_print_prom(stdout, &snap);
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
