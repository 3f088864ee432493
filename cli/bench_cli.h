/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl bench: what one run measured, shared by the command
 * (cmd_bench.c) and its reports (bench_out.c: tables, CSV, JSON, PNG,
 * the dm-crypt table). The measuring itself is bench/'s core library.
 */
#ifndef CRYPTOCTL_BENCH_CLI_H
#define CRYPTOCTL_BENCH_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "bench.h"

enum bp_limits {
	BP_MAX_PATHS = 4,   /* cryptod, cryptod-kernel, in-process twin,
			    * OpenSSL */
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
	double ratio; /* this path / the in-process twin, median of rounds;
		       * 0 when not compared */
	unsigned n_runs;
	double mbs[BENCH_MAX_ROUNDS]; /* each round, MB/s (10^6 B/s) */
};

struct bp_report {
	const struct bench_cfg *cfg;
	unsigned queues, workers; /* workers: 0 when not spawned */
	bool dmcrypt;
	const char *daemon_version;
	struct bp_alg algs[BENCH_MAX_ALGS];
	unsigned n_algs;
	struct bp_result *res; /* owned */
	unsigned n_res, cap;
};

/* bench_out.c */
/* The seed-format table of one algorithm, its paths side by side. */
void bp_print_table(const struct bp_report *r, unsigned alg);
/* dm-crypt comparison: MB/s per run and the mean per algorithm and path. */
void bp_print_dmcrypt(const struct bp_report *r);
void bp_print_csv(const struct bp_report *r);
void bp_print_json(const struct bp_report *r);
/* Throughput vs buffer size, one line per path, log x, drawn by gnuplot.
 * 0 or -errno (message printed). */
int bp_png(const struct bp_report *r, const char *file);

#endif /* CRYPTOCTL_BENCH_CLI_H */
