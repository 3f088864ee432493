/* SPDX-License-Identifier: MIT */
#ifndef CRYPTOCTL_STATS_VIEW_H
#define CRYPTOCTL_STATS_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cryptoclient.h>

#include "cli.h"

/* A point-in-time view of the daemon: cmd_stats.c, stats_prom.c,
 * stats_watch.c. */
struct stats_snap {
	struct cc_stats st;
	struct cc_session_info *sess; /* owned */
	unsigned n_sess;
	struct cc_program_stats *progs; /* owned */
	unsigned n_progs;
	struct cc_key_pair_ops pk[CC_KEY_PAIR_ALGS]; /* administrators' */
	unsigned n_pk;
	double t; /* CLOCK_MONOTONIC seconds when taken */
};

int stats_snap_take(struct cc_conn *conn, struct stats_snap *s);
void stats_snap_free(struct stats_snap *s);
/* "02:03:04" or "5d 02:03:04": the one uptime format of every view. */
void fmt_uptime(char *buf, size_t len, uint64_t ms);
/* one when n is 1, else many: "1 client", "2 clients". */
const char *plural(uint64_t n, const char *one, const char *many);
/* "cryptod: up 00:01:02, 2 workers (adaptive polling), 1 client, ..."
 * without the newline. */
void print_stats_head(const struct cc_stats *st);
/* "850ns", "12.3us", "1.50ms", "2.00s" into buf (>= 16 bytes). */
void fmt_ns(char *buf, size_t len, uint64_t ns);
/* The tables of 'cryptoctl stats'. 0 or -ENOMEM. */
int stats_print_tables(const struct stats_snap *s);
/* stats_programs.c: the programs view, a table (0 or -ENOMEM) and the
 * items of a JSON array, one a line after indent. */
int programs_table(const struct cc_program_stats *v, unsigned n);
void programs_json_items(const struct cc_program_stats *v, unsigned n,
			 const char *indent);
/* Prometheus text exposition format (version 0.0.4), to f. */
void stats_print_prom(FILE *f, const struct stats_snap *s);
/* The same when the daemon did not answer: cryptod_up 0 alone. */
void stats_print_prom_down(FILE *f);
/* stats_serve.c: a Prometheus exporter on listen_on ("[ADDR:]PORT", NULL:
 * 127.0.0.1:9464) or the sockets systemd passed, until SIGTERM or SIGINT.
 * Returns an exit status. */
struct cli;
int stats_serve(struct cli *cli, const char *listen_on);
/* One JSON object, the fields docs/observability.md lists. */
void stats_print_json(const struct stats_snap *s);
/* Refresh every interval seconds, count times (0: until q or Ctrl-C);
 * json: one stats_print_json() object a line instead of the view. A
 * daemon that goes away is waited for: *conn may be replaced (or NULL at
 * the end). Returns an exit status. */
int stats_watch(struct cli *cli, struct cc_conn **conn, double interval,
		unsigned count, int json);

/* cmd_list.c: the session list, shared with stats */
int sessions_table(const struct cc_session_info *v, unsigned n);
void sessions_json_items(const struct cc_session_info *v, unsigned n,
			 const char *indent);

#endif /* CRYPTOCTL_STATS_VIEW_H */
