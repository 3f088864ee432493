/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl bench scale|pcrypt|latency|pool: what the worker pool buys,
 * measured through libcryptoclient against private daemons started for
 * the run (bench/pool/: one section per mode; pool runs all three). The
 * options here, the measuring there, the tables in bench_out.c.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_cli.h"
#include "cli.h"
#include "poolbench.h"

enum {
	PO_SPAWN = 256,
	PO_SMOKE,
	PO_CSV,
	PO_JSON,
	PO_WIDE,
	PO_ROUNDS,
	PO_TIME,
	PO_MAX_WORKERS,
	PO_SLOTS,
	PO_SAMPLES,
	PO_COLD,
	PO_PAUSE,
	PO_SPIN,
	PO_PIN,
	PO_VERBOSE,
	PO_HELP,
};

/* 0, 1 for --help, or -EINVAL (printed). */
static int pool_parse(struct pb_cfg *cfg, const char *mode, int argc,
		      char **argv)
{
	static const struct option opts[] = {
		{ "spawn-daemon", required_argument, NULL, PO_SPAWN },
		{ "smoke", no_argument, NULL, PO_SMOKE },
		{ "csv", no_argument, NULL, PO_CSV },
		{ "json", no_argument, NULL, PO_JSON },
		{ "wide", no_argument, NULL, PO_WIDE },
		{ "rounds", required_argument, NULL, PO_ROUNDS },
		{ "time-ms", required_argument, NULL, PO_TIME },
		{ "max-workers", required_argument, NULL, PO_MAX_WORKERS },
		{ "slots", required_argument, NULL, PO_SLOTS },
		{ "samples", required_argument, NULL, PO_SAMPLES },
		{ "cold-samples", required_argument, NULL, PO_COLD },
		{ "pause-us", required_argument, NULL, PO_PAUSE },
		{ "spin-us", required_argument, NULL, PO_SPIN },
		{ "pin", no_argument, NULL, PO_PIN },
		{ "verbose", no_argument, NULL, PO_VERBOSE },
		{ "help", no_argument, NULL, PO_HELP },
		{ NULL, 0, NULL, 0 },
	};
	/* Set explicitly: --smoke must not override them. */
	bool rounds = false, time = false, samples = false, cold = false;
	int o, err = 0;

	cfg->sections = !strcmp(mode, "scale")	   ? PB_SEC_SCALE
			: !strcmp(mode, "pcrypt")  ? PB_SEC_PCRYPT
			: !strcmp(mode, "latency") ? PB_SEC_LATENCY
						   : PB_SEC_ALL;
	optind = 0;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case PO_SPAWN:
			cfg->daemon = optarg;
			break;
		case PO_SMOKE:
			cfg->quick = true;
			break;
		case PO_CSV:
			cfg->csv = true;
			break;
		case PO_JSON:
			cfg->json = true;
			break;
		case PO_WIDE:
			bp_sheets_wide = true;
			break;
		case PO_ROUNDS:
			err = bench_parse_uint("--rounds", optarg, 1,
					       PB_MAX_ROUNDS, &cfg->rounds);
			rounds = true;
			break;
		case PO_TIME:
			err = bench_parse_uint("--time-ms", optarg, 1,
					       PB_MAX_TIME_MS, &cfg->time_ms);
			time = true;
			break;
		case PO_MAX_WORKERS:
			err = bench_parse_uint("--max-workers", optarg, 1,
					       PB_MAX_SCALE_WORKERS,
					       &cfg->max_workers);
			break;
		case PO_SLOTS:
			err = bench_parse_uint("--slots", optarg, PB_BURST,
					       PB_MAX_SLOTS, &cfg->slots);
			break;
		case PO_SAMPLES:
			err = bench_parse_uint("--samples", optarg, 1,
					       PB_MAX_SAMPLES,
					       &cfg->lat_samples);
			samples = true;
			break;
		case PO_COLD:
			err = bench_parse_uint("--cold-samples", optarg, 1,
					       PB_MAX_SAMPLES, &cfg->lat_cold);
			cold = true;
			break;
		case PO_PAUSE:
			err = bench_parse_uint("--pause-us", optarg, 1, 1000000,
					       &cfg->pause_us);
			break;
		case PO_SPIN:
			err = bench_parse_uint("--spin-us", optarg, 1, 1000000,
					       &cfg->spin_us);
			break;
		case PO_PIN:
			cfg->pin = true;
			break;
		case PO_VERBOSE:
			cfg->verbose = true;
			break;
		case 'h':
		case PO_HELP:
			fputs(bp_usage, stdout);
			return 1;
		default:
			return -EINVAL;
		}
		if (err)
			return err;
	}
	if (cli_no_args("bench", argc, argv))
		return -EINVAL;
	if (!cfg->daemon) {
		cli_usage_err("bench",
			      "%s starts its own daemons: --spawn-daemon BIN "
			      "is required",
			      mode);
		return -EINVAL;
	}
	if (cfg->csv && cfg->json) {
		cli_usage_err("bench", "--csv and --json exclude each other");
		return -EINVAL;
	}
	if (cfg->pause_us <= cfg->spin_us) {
		cli_usage_err("bench",
			      "--pause-us %u must exceed --spin-us %u, or the "
			      "worker never sleeps",
			      cfg->pause_us, cfg->spin_us);
		return -EINVAL;
	}
	if (cfg->quick) {
		/* Checks that everything runs, orders and verifies; the
		 * figures mean nothing. */
		if (!rounds)
			cfg->rounds = 2;
		if (!time)
			cfg->time_ms = 20;
		if (!samples)
			cfg->lat_samples = 200;
		if (!cold)
			cfg->lat_cold = 20;
		cfg->warm_ms = 2;
	}
	return 0;
}

int bp_pool(const char *mode, int argc, char **argv)
{
	struct pb_cfg cfg = {
		.rounds = 7,
		.time_ms = 300,
		.warm_ms = 30,
		.max_workers = 4,
		.slots = 256,
		.lat_samples = 20000,
		.lat_cold = 3000,
		.pause_us = 1000,
		.spin_us = 200,
	};
	struct pb_daemons ds;
	struct bench_env env;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int rc, ok = 1;

	argv[0] = "cryptoctl: bench"; /* getopt's prefix, as elsewhere */
	rc = pool_parse(&cfg, mode, argc, argv);
	if (rc)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	cfg.ncpu = ncpu > 0 ? (unsigned)ncpu : 1;
	/* A daemon that died must not kill us through a control socket. */
	signal(SIGPIPE, SIG_IGN);

	if (cfg.pin) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(cfg.ncpu - 1, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			bench_err("--pin: %s\n", strerror(errno));
	}
	if (pb_daemons_init(&ds, cfg.daemon, cfg.spin_us, cfg.pin))
		return CLI_EXIT_FAIL;
	bp_sheets_begin(&cfg, mode);
	pb_note(&cfg, "cryptoctl bench %s: daemons from %s%s\n", mode,
		cfg.daemon,
		cfg.pin ? "; pinned: worker i on CPU i, the bench on the last"
			: "");
	if (cfg.quick)
		pb_note(&cfg, "--smoke: the figures mean nothing\n");
	pb_env_start(&env, &cfg, &ds);

	if ((cfg.sections & PB_SEC_SCALE) && pb_scale_run(&cfg, &ds))
		ok = 0;
	if ((cfg.sections & PB_SEC_PCRYPT) && pb_esp_run(&cfg, &ds))
		ok = 0;
	if ((cfg.sections & PB_SEC_LATENCY) && pb_latency_run(&cfg, &ds))
		ok = 0;

	pb_env_end(&env, &cfg, &ds, "the run");
	if (pb_daemons_fini(&ds))
		ok = 0;
	bp_sheets_end(&cfg);
	pb_note(&cfg, "%s\n",
		ok ? "bench: every completion in order with the right status "
		     "and output; every daemon exited 0 on SIGTERM"
		   : "bench: FAILED (see above)");
	return ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
