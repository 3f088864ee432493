/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl bench, the one benchmark front end: the options and modes
 * (cmd_bench.c), the throughput and dm-crypt modes (bench_tput.c), the
 * worker pool's modes (bench_pool.c) and the one report writer
 * (bench_out.c: tables, CSV, JSON, PNG). The measuring itself is bench/'s
 * core library and bench/pool/'s sections. cryptod-bench and
 * cryptod-poolbench are links to cryptoctl that run this command.
 */
#ifndef CRYPTOCTL_BENCH_CLI_H
#define CRYPTOCTL_BENCH_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "bench.h"

enum bp_limits {
	BP_MAX_PATHS = 6,   /* cryptod, cryptod-submit, cryptod-kernel,
			    * in-process twin, DPDK, OpenSSL */
	BP_MAX_QUEUES = 16, /* --queues: one client thread each */
	BP_DMCRYPT_LEN = 1u << 20,
	BP_DMCRYPT_RUNS = 5,
	BP_DMCRYPT_RUN_MS = 1000,
};

/* One way of running an algorithm: through the daemon or in-process. */
struct bp_path {
	char name[24];	/* "cryptod", "cryptod-kernel", "ipsec-mb", ... */
	char desc[128]; /* what exactly it is */
};

struct bp_alg {
	const struct bench_alg *a;
	unsigned n_paths;
	struct bp_path paths[BP_MAX_PATHS];
	int twin;	   /* the in-process twin's path, or -1 */
	char skipped[256]; /* why, when nothing was measured */
};

/* One path at one size: medians over the rounds, and each round. */
struct bp_result {
	unsigned alg, path; /* indexes into the report */
	uint32_t size;
	double ops_m, gbps;
	double ratio;	   /* this path / the in-process twin, median of rounds;
		       * 0 when not compared */
	double ratio_dpdk; /* the cryptod path / DPDK's PMD, likewise */
	double ratio_zc;   /* cryptod-submit / cryptod (zero-copy bursts) */
	unsigned n_runs;
	double mbs[BENCH_MAX_ROUNDS]; /* each round, MB/s (10^6 B/s) */
};

struct bp_report {
	const struct bench_cfg *cfg;
	unsigned queues, workers; /* workers: 0 when not spawned */
	bool dmcrypt;
	bool wide; /* --wide: OPS(M), Gbps and every ratio per path */
	const char *daemon_version;
	struct bp_alg algs[BENCH_MAX_ALGS];
	unsigned n_algs;
	struct bp_result *res; /* owned */
	unsigned n_res, cap;
};

/* One throughput run (bench_tput.c). */
struct bp_ctx {
	struct bench b; /* cfg, the first queue, private blocks */
	struct bench_daemon extra[BP_MAX_QUEUES - 1];
	unsigned n_extra;
	struct bench_daemon kd; /* the kernel engine's queue */
	struct bench_cfg kcfg;
	bool kd_open, no_kernel;
	char kernel_why[256]; /* no kernel queue: why */
	uint32_t kmax;	      /* the kernel engine's longest op, this alg */
	struct bp_report rep;
	unsigned steps, step;
	bool json, csv_out;
	const char *png;
};

/* cmd_bench.c: the usage text of every mode. */
extern const char bp_usage[];

/* bench_tput.c: the throughput mode over x's parsed options, against the
 * daemon at x->b.cfg.socket (daemon_pid > 0 when we spawned it). Returns
 * a CLI_EXIT_* status. */
int bp_tput(struct bp_ctx *x, int daemon_pid);
/* --dmcrypt: the algorithms, size, rounds and queue depth it implies,
 * where the options did not set them. */
void bp_dmcrypt_setup(struct bench_cfg *cfg, bool burst_set, bool depth_set,
		      const struct bench_opts_set *set);

/* bench_pool.c: the worker pool's modes (scale, pcrypt, latency, pool =
 * all three), bench/pool/'s sections, with their own options. argv[0] is
 * the mode. Returns a CLI_EXIT_* status. */
int bp_pool(const char *mode, int argc, char **argv);
/* bench_stream.c: the stream mode. */
int bp_stream(int argc, char **argv);

/* bench_out.c */
/* The seed-format table of one algorithm, its paths side by side. */
void bp_print_table(const struct bp_report *r, unsigned alg);
/* The pool modes' --wide: the sheets' SHEET_WIDE columns too. */
extern bool bp_sheets_wide;
/* dm-crypt comparison: MB/s per run and the mean per algorithm and path. */
void bp_print_dmcrypt(const struct bp_report *r);
void bp_print_csv(const struct bp_report *r);
void bp_print_json(const struct bp_report *r);
/* Throughput vs buffer size, one line per path, log x, drawn by gnuplot.
 * 0 or -errno (message printed). */
int bp_png(const struct bp_report *r, const char *file);
/* The pool modes: cfg->sink prints each sheet as it comes (table, CSV or
 * JSON after cfg->csv and cfg->json); end closes the JSON document. */
struct pb_cfg;
void bp_sheets_begin(struct pb_cfg *cfg, const char *mode);
void bp_sheets_end(const struct pb_cfg *cfg);

#endif /* CRYPTOCTL_BENCH_CLI_H */
