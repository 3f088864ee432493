/* SPDX-License-Identifier: MIT */
/* cryptod-poolbench: main, options, and the run's framing. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "poolbench.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cryptod-poolbench --daemon PATH [OPTIONS]\n"
		"Measures cryptod's worker pool through libcryptoclient, "
		"against private daemons it\n"
		"starts (temp-dir sockets) and stops with SIGTERM (exit 0 "
		"checked):\n"
		"  scale    16 KiB AES-128-GCM from one queue, --workers "
		"1..N, order checked,\n"
		"           the daemon's run-size histogram, a many-core "
		"model\n"
		"  pcrypt   1420-byte ESP packets, AES-192-CBC + HMAC-SHA1 "
		"and null digest,\n"
		"           serial vs parallel workers, one and two "
		"directions, Mbit/s\n"
		"  latency  one 64-byte op at a time: p50/p99/p99.9 per poll "
		"mode, polling vs\n"
		"           cc_wait(), warm vs cold\n"
		"Configurations alternate round by round; figures are "
		"medians.\n"
		"\n"
		"  -d, --daemon PATH     the cryptod binary (required)\n"
		"  -q, --quick           a smoke run: tiny rounds and "
		"samples\n"
		"  -o, --only SECTION    scale, pcrypt or latency (repeatable)\n"
		"  -c, --csv             CSV on stdout, notes on stderr\n"
		"  -r, --rounds N        rounds (default 7)\n"
		"  -t, --time-ms N       timed ms per configuration per round "
		"(default 300)\n"
		"  -w, --max-workers N   scale up to N workers (default 4)\n"
		"      --slots N         ops in flight per throughput queue "
		"(default 256)\n"
		"      --samples N       latency samples, back to back "
		"(default 20000)\n"
		"      --cold-samples N  latency samples after a pause "
		"(default 3000)\n"
		"      --pause-us N      the pause (default 1000)\n"
		"      --spin-us N       the daemons' --spin-us (default 200; "
		"must stay below\n"
		"                        the pause)\n"
		"      --pin             daemons --pin (worker i on CPU i), "
		"the bench's threads on\n"
		"                        the last CPU (default: the scheduler "
		"places them)\n"
		"  -v, --verbose         every round's figures\n"
		"  -h, --help            this text\n"
		"Exit status: 0 when every completion came back in order with "
		"the right status\nand output and every daemon exited 0; 1 "
		"otherwise; 2 for bad usage.\n");
}

static int parse_uint(const char *opt, const char *s, unsigned min,
		      unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max || s[0] == '-') {
		fprintf(stderr, "poolbench: %s: want %u..%u, got '%s'\n", opt,
			min, max, s);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

enum {
	OPT_SLOTS = 256,
	OPT_SAMPLES,
	OPT_COLD,
	OPT_PAUSE,
	OPT_SPIN,
	OPT_PIN,
};

/* 0, 1 for --help, or -EINVAL (printed). */
static int parse(struct pb_cfg *cfg, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "daemon", required_argument, NULL, 'd' },
		{ "quick", no_argument, NULL, 'q' },
		{ "only", required_argument, NULL, 'o' },
		{ "csv", no_argument, NULL, 'c' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "time-ms", required_argument, NULL, 't' },
		{ "max-workers", required_argument, NULL, 'w' },
		{ "slots", required_argument, NULL, OPT_SLOTS },
		{ "samples", required_argument, NULL, OPT_SAMPLES },
		{ "cold-samples", required_argument, NULL, OPT_COLD },
		{ "pause-us", required_argument, NULL, OPT_PAUSE },
		{ "spin-us", required_argument, NULL, OPT_SPIN },
		{ "pin", no_argument, NULL, OPT_PIN },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* Set explicitly: --quick must not override them. */
	bool rounds = false, time = false, samples = false, cold = false;
	int o, err = 0;

	while ((o = getopt_long(argc, argv, "d:qo:cr:t:w:vh", opts, NULL)) !=
	       -1) {
		switch (o) {
		case 'd':
			cfg->daemon = optarg;
			break;
		case 'q':
			cfg->quick = true;
			break;
		case 'o':
			if (!strcmp(optarg, "scale"))
				cfg->sections |= PB_SEC_SCALE;
			else if (!strcmp(optarg, "pcrypt"))
				cfg->sections |= PB_SEC_PCRYPT;
			else if (!strcmp(optarg, "latency"))
				cfg->sections |= PB_SEC_LATENCY;
			else {
				fprintf(stderr,
					"poolbench: --only: scale, pcrypt or "
					"latency, not '%s'\n",
					optarg);
				err = -EINVAL;
			}
			break;
		case 'c':
			cfg->csv = true;
			break;
		case 'r':
			err = parse_uint("--rounds", optarg, 1, PB_MAX_ROUNDS,
					 &cfg->rounds);
			rounds = true;
			break;
		case 't':
			err = parse_uint("--time-ms", optarg, 1, PB_MAX_TIME_MS,
					 &cfg->time_ms);
			time = true;
			break;
		case 'w':
			err = parse_uint("--max-workers", optarg, 1,
					 PB_MAX_SCALE_WORKERS,
					 &cfg->max_workers);
			break;
		case OPT_SLOTS:
			err = parse_uint("--slots", optarg, PB_BURST,
					 PB_MAX_SLOTS, &cfg->slots);
			break;
		case OPT_SAMPLES:
			err = parse_uint("--samples", optarg, 1, PB_MAX_SAMPLES,
					 &cfg->lat_samples);
			samples = true;
			break;
		case OPT_COLD:
			err = parse_uint("--cold-samples", optarg, 1,
					 PB_MAX_SAMPLES, &cfg->lat_cold);
			cold = true;
			break;
		case OPT_PAUSE:
			err = parse_uint("--pause-us", optarg, 1, 1000000,
					 &cfg->pause_us);
			break;
		case OPT_SPIN:
			err = parse_uint("--spin-us", optarg, 1, 1000000,
					 &cfg->spin_us);
			break;
		case OPT_PIN:
			cfg->pin = true;
			break;
		case 'v':
			cfg->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
		if (err)
			return err;
	}
	if (optind < argc) {
		fprintf(stderr, "poolbench: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (!cfg->daemon) {
		fprintf(stderr, "poolbench: --daemon PATH is required\n");
		usage(stderr);
		return -EINVAL;
	}
	if (cfg->pause_us <= cfg->spin_us) {
		fprintf(stderr,
			"poolbench: --pause-us %u must exceed --spin-us %u, or "
			"the worker never sleeps\n",
			cfg->pause_us, cfg->spin_us);
		return -EINVAL;
	}
	if (!cfg->sections)
		cfg->sections = PB_SEC_ALL;
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

int main(int argc, char **argv)
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
	struct pb_env env;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double idle, others;
	unsigned failed;
	int rc = 0, err;

	err = parse(&cfg, argc, argv);
	if (err)
		return err > 0 ? 0 : 2;
	cfg.ncpu = ncpu > 0 ? (unsigned)ncpu : 1;
	/* A daemon that died must not kill us through a control socket. */
	signal(SIGPIPE, SIG_IGN);

	if (cfg.pin) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(cfg.ncpu - 1, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			fprintf(stderr, "poolbench: --pin: %s\n",
				strerror(errno));
	}
	if (pb_daemons_init(&ds, cfg.daemon, cfg.spin_us, cfg.pin))
		return 1;
	idle = pb_env_idle_now();
	pb_note(&cfg,
		"cryptod-poolbench: %s; %u CPUs online, %.0f%% idle just "
		"before the run%s%s\n",
		cfg.daemon, cfg.ncpu, idle,
		cfg.pin ? "; pinned: worker i on CPU i, the bench on the last"
			: "",
		idle >= 0 && idle < 90 ? ": WARNING, something else is running"
				       : "");
	if (cfg.quick)
		pb_note(&cfg, "--quick: a smoke run; the figures mean "
			      "nothing\n");
	pb_env_start(&env, &ds);

	if ((cfg.sections & PB_SEC_SCALE) && pb_scale_run(&cfg, &ds))
		rc = 1;
	if ((cfg.sections & PB_SEC_PCRYPT) && pb_esp_run(&cfg, &ds))
		rc = 1;
	if ((cfg.sections & PB_SEC_LATENCY) && pb_latency_run(&cfg, &ds))
		rc = 1;

	others = pb_env_others(&env, &ds);
	failed = pb_daemons_fini(&ds);
	if (failed)
		rc = 1;
	if (others >= 0)
		pb_note(&cfg,
			"\nMachine: other processes used %.0f%% of all CPU time "
			"during the run%s\n",
			others,
			others > 5 ? ": WARNING, figures disturbed; run again "
				     "on a quiet machine"
				   : "");
	pb_note(&cfg, "%s\n",
		rc ? "poolbench: FAILED (see above)"
		   : "poolbench: every completion in order with the right "
		     "status and output; every daemon exited 0 on SIGTERM");
	return rc;
}
