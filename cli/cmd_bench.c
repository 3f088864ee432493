/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl bench, the one benchmark front end: the usage text, the mode
 * word, the throughput options and the daemon it spawns. The modes run in
 * bench_tput.c (throughput, dmcrypt) and bench_pool.c (scale, pcrypt,
 * latency, pool); every report is bench_out.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_cli.h"
#include "cli.h"
#include "commands.h"
#include "table.h"

const char bp_usage[] =
	"Usage: cryptoctl bench [MODE] [OPTIONS]\n"
	"\n"
	"The benchmark: every mode verifies the daemon's output before it\n"
	"times anything, alternates what it compares round by round and\n"
	"reports medians. Progress and notes go to stderr (notes to stdout\n"
	"in table mode). Every mode first prints the machine: CPU model, the\n"
	"flags that matter, the code intel-ipsec-mb picks, how idle it is.\n"
	"\n"
	"Modes:\n"
	"  throughput  (the default) per algorithm and buffer size, side by\n"
	"              side: cryptod (libcryptoclient, zero-copy, the\n"
	"              daemon's engine, one client thread per queue);\n"
	"              cryptod-kernel (the daemon's AF_ALG engine, when the\n"
	"              daemon reports it available); the in-process twin of\n"
	"              the daemon's engine (ipsec-mb or OpenSSL); dpdk\n"
	"              (DPDK's crypto_aesni_gcm or crypto_aesni_mb PMD\n"
	"              in-process, where Debian's DPDK is installed); OpenSSL\n"
	"              EVP in-process. A table per algorithm: Gbps per\n"
	"              path and buffer size, and cryptod against the twin\n"
	"              (within 100 columns); --wide adds OPS(M) per path\n"
	"              and every ratio (each path against the twin,\n"
	"              cryptod/dpdk)\n"
	"  dmcrypt     the same as --dmcrypt\n"
	"  scale       16 KiB AES-128-GCM from one queue against daemons\n"
	"              with 1..--max-workers workers, the order of every\n"
	"              completion checked, the runs the workers took, the\n"
	"              null engine's ceiling and a many-core model\n"
	"  pcrypt      the pcrypt experiment: 1420-byte ESP packets,\n"
	"              AES-192-CBC + HMAC-SHA1 and with a null digest,\n"
	"              serial (1 worker) vs parallel, one and two\n"
	"              directions, Mbit/s\n"
	"  latency     one 64-byte op at a time: p50/p99/p99.9 per poll\n"
	"              mode, the client polling or asleep in cc_wait(),\n"
	"              warm and cold\n"
	"  pool        scale, pcrypt and latency in turn\n"
	"  stream      AES-GCM: one message as a stream of pieces against\n"
	"              one-shot ops of the piece size (its own options:\n"
	"              cryptoctl bench stream --help)\n"
	"\n"
	"Options of every mode:\n"
	"      --spawn-daemon BIN\n"
	"                      start BIN on a private socket for the run\n"
	"                      (scale, pcrypt, latency, pool: required; they\n"
	"                      start one daemon per configuration)\n"
	"      --rounds N      rounds (default 5; pool modes 7)\n"
	"      --time-ms N     each measurement (default 300)\n"
	"      --smoke         a tiny run that checks that everything runs\n"
	"                      and verifies; the figures mean nothing\n"
	"      --csv           CSV on stdout, notes on stderr\n"
	"      --json          JSON on stdout, notes on stderr\n"
	"      --verbose       every round's figures too\n"
	"      --wide          throughput: the wide table, Buffer Size(B),\n"
	"                      OPS(M) and Throughput(Gbps) per path and\n"
	"                      all ratios (about 230 columns)\n"
	"  -h, --help          this text\n"
	"\n"
	"Throughput and dmcrypt:\n"
	"  -a, --alg LIST      algorithms, comma-separated, or all (default\n"
	"                      aes-128-gcm); --alg help lists them. Any name\n"
	"                      encrypt -a takes: aes-gcm or gcm(aes) is the\n"
	"                      first aes-gcm row, aes-256-gcm that size's\n"
	"      --sizes LIST    buffer sizes in bytes (default\n"
	"                      64,128,256,512,1024,1536,2048,16384, and 4096\n"
	"                      for XTS); sizes an algorithm cannot take are\n"
	"                      skipped\n"
	"      --burst N       ops per enqueue and per in-process burst\n"
	"                      (default 32)\n"
	"      --depth N       bursts in flight per queue (default 4)\n"
	"  -q, --queues N      daemon queues, one client thread each, run at\n"
	"                      once (default 1, at most 16)\n"
	"      --workers N     the spawned daemon's worker threads\n"
	"                      (default 1)\n"
	"      --poll-mode adaptive|busy\n"
	"                      the spawned daemon's poll mode (default: its\n"
	"                      own, adaptive); busy keeps its worker's vCPU\n"
	"                      from halting between rounds, which on VMs\n"
	"                      makes the cross-core figures bimodal\n"
	"      --engine NAME   the daemon engine (default: its choice)\n"
	"      --no-kernel     skip the cryptod-kernel path\n"
	"      --submit        add the cryptod-submit path: the same ops one\n"
	"                      at a time through cc_submit(), completions by\n"
	"                      cc_poll(); the table adds its ratio to cryptod\n"
	"      --no-dpdk       skip the dpdk path\n"
	"      --no-inproc     skip the in-process paths\n"
	"      --dir enc|dec   direction (default enc; dec is out of place)\n"
	"      --aad-len N     AAD bytes for GCM and CBC+HMAC (default 0)\n"
	"      --oop           out of place\n"
	"      --ring N        submission ring entries, a power of two\n"
	"                      (default: the smallest >= 4 x burst x depth)\n"
	"      --touch         the client writes each payload and reads each\n"
	"                      result, as an application would\n"
	"      --cpu N         pin the client thread(s) to CPU N; a spawned\n"
	"                      daemon runs on the other CPUs\n"
	"      --dmcrypt       the dm-crypt comparison: AES-256 ECB, CBC and\n"
	"                      XTS (and LRW when the kernel engine offers\n"
	"                      it), 1 MiB chunks, 5 runs each, MB/s per run\n"
	"                      and the mean, through the daemon and\n"
	"                      in-process (burst 4, depth 2, 1000 ms per\n"
	"                      run unless given)\n"
	"      --png FILE      chart throughput vs buffer size (log x), one\n"
	"                      line per path (and algorithm), with gnuplot\n"
	"  -s, --socket PATH   daemon socket (unless --spawn-daemon)\n"
	"  --csv columns: alg,dir,path,size,ops_m,gbps,ratio,mean_mbs,runs_mbs,\n"
	"  ratio_dpdk,ratio_zc (runs separated by ';'); --json: {config,\n"
	"  paths[], results[]}.\n"
	"\n"
	"Scale, pcrypt, latency and pool:\n"
	"      --max-workers N scale up to N workers (default 4)\n"
	"      --slots N       ops in flight per throughput queue (default\n"
	"                      256)\n"
	"      --samples N     latency samples, back to back (default 20000)\n"
	"      --cold-samples N\n"
	"                      latency samples after a pause (default 3000)\n"
	"      --pause-us N    the pause (default 1000)\n"
	"      --spin-us N     the daemons' --spin-us (default 200; must stay\n"
	"                      below the pause)\n"
	"      --pin           daemons --pin (worker i on CPU i), the bench's\n"
	"                      threads on the last CPU\n"
	"      --wide          the text tables' every column (scale:\n"
	"                      Order+status, Retries; pcrypt: enc + dec,\n"
	"                      Seed; latency: Samples); CSV and JSON carry\n"
	"                      them always\n"
	"  --csv: one header line per table, the mode's section first;\n"
	"  --json: {mode, sheets: [{section, rows[]}]}.\n"
	"\n"
	"Throughput counts payload bytes; 1 Gbps = 10^9 bit/s, 1 MB/s =\n"
	"10^6 B/s. Shared machines are noisy: compare the paths of one run.\n"
	"cryptod-bench is 'cryptoctl bench', cryptod-poolbench 'cryptoctl\n"
	"bench pool' (links to cryptoctl).\n"
	"Exit status 0; 1 when the daemon is unreachable, a verification or\n"
	"an order check failed, a daemon did not exit 0 or the chart could\n"
	"not be drawn; 2 bad arguments.\n";

enum {
	OPT_QUEUES = OPT_BENCH_END_,
	OPT_JSON,
	OPT_PNG,
	OPT_DMCRYPT,
	OPT_NO_KERNEL,
	OPT_WIDE,
};

/*
 * --alg as every command takes names (cli_alg_lookup): a row of the
 * benchmark's list by its own name ("aes-128-gcm"), or by any name of its
 * algorithm ("aes-gcm", "gcm(aes)": the first row of it; "aes-256-gcm"
 * with a size: the row of that key size). Each comma-separated item is
 * rewritten to a row's name in buf; one nothing matches stays as it is,
 * for bench_opts_one to refuse. Returns buf, or list if it does not fit.
 */
static char *bp_alg_names(char *list, char *buf, size_t len)
{
	char items[1024];
	size_t o = 0;

	if (strlen(list) >= sizeof(items))
		return list;
	snprintf(items, sizeof(items), "%s", list);
	buf[0] = '\0';
	for (char *save, *t = strtok_r(items, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		const char *name = t;
		enum cc_alg alg;
		unsigned bits;

		if (strcmp(t, "all") && !bench_alg_find(t) &&
		    !cli_alg_lookup(t, &alg, &bits))
			for (unsigned i = 0; i < bench_alg_count(); i++) {
				const struct bench_alg *a = bench_alg_at(i);

				if (a->alg == alg &&
				    (!bits || a->key_len * 8u == bits)) {
					name = a->name;
					break;
				}
			}
		int n = snprintf(buf + o, len - o, "%s%s", o ? "," : "", name);
		if (n < 0 || (size_t)n >= len - o)
			return list;
		o += (size_t)n;
	}
	return buf;
}

static int bp_parse(struct bp_ctx *x, int argc, char **argv, bool dmcrypt)
{
	char algbuf[1024];
	struct option opts[40];
	struct bench_opts_set set;
	struct bench_cfg *cfg = &x->b.cfg;
	bool burst_set = false, depth_set = false;
	unsigned n = 0, v;
	char *end;
	int c, rc;

	while (bench_long_opts[n].name)
		n++;
	memcpy(opts, bench_long_opts, n * sizeof(opts[0]));
	opts[n++] = (struct option){ "queues", required_argument, NULL,
				     OPT_QUEUES };
	opts[n++] = (struct option){ "json", no_argument, NULL, OPT_JSON };
	opts[n++] = (struct option){ "png", required_argument, NULL, OPT_PNG };
	opts[n++] =
		(struct option){ "dmcrypt", no_argument, NULL, OPT_DMCRYPT };
	opts[n++] = (struct option){ "no-kernel", no_argument, NULL,
				     OPT_NO_KERNEL };
	opts[n++] = (struct option){ "wide", no_argument, NULL, OPT_WIDE };
	opts[n] = (struct option){ NULL, 0, NULL, 0 };

	bench_cfg_init(cfg, &set);
	x->rep.queues = 1;
	optind = 0;
	while ((c = getopt_long(argc, argv, "a:q:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
		case OPT_HELP:
			fputs(bp_usage, stdout);
			return 1;
		case 'a':
			c = OPT_ALG;
			break;
		case 's':
			c = OPT_SOCKET;
			break;
		case 'q':
		case OPT_QUEUES:
			errno = 0;
			v = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || !v || v > BP_MAX_QUEUES) {
				cli_usage_err(
					"bench",
					"--queues wants 1 to %d, not '%s'",
					BP_MAX_QUEUES, optarg);
				return -EINVAL;
			}
			x->rep.queues = v;
			continue;
		case OPT_JSON:
			x->json = true;
			continue;
		case OPT_CSV:
			x->csv_out = true;
			continue;
		case OPT_PNG:
			x->png = optarg;
			continue;
		case OPT_DMCRYPT:
			dmcrypt = true;
			continue;
		case OPT_NO_KERNEL:
			x->no_kernel = true;
			continue;
		case OPT_WIDE:
			x->rep.wide = true;
			continue;
		case OPT_BURST:
			burst_set = true;
			break;
		case OPT_DEPTH:
			depth_set = true;
			break;
		case '?':
			return -EINVAL;
		default:
			break;
		}
		if (c == OPT_ALG)
			optarg = bp_alg_names(optarg, algbuf, sizeof(algbuf));
		rc = bench_opts_one(cfg, &set, c, optarg);
		if (rc)
			return rc; /* 1: --alg help */
	}
	if (cli_no_args("bench", argc, argv))
		return -EINVAL;
	if (x->json && x->csv_out) {
		cli_usage_err("bench", "--csv and --json exclude each other");
		return -EINVAL;
	}
	if (dmcrypt && (set.sizes || cfg->smoke)) {
		cli_usage_err("bench", "--dmcrypt sets the algorithms and "
				       "sizes itself");
		return -EINVAL;
	}
	if (dmcrypt)
		bp_dmcrypt_setup(cfg, burst_set, depth_set, &set);
	x->rep.dmcrypt = dmcrypt;
	/* Notes go to stderr whenever stdout carries data. */
	cfg->csv = x->json || x->csv_out;
	cfg->ossl_all = true;
	return bench_cfg_finish(cfg, &set);
}

/* The modes of bench/pool/ (the worker pool's experiments). */
static bool bp_is_pool_mode(const char *m)
{
	return !strcmp(m, "scale") || !strcmp(m, "pcrypt") ||
	       !strcmp(m, "latency") || !strcmp(m, "pool");
}

int cmd_bench(struct cli *cli, int argc, char **argv)
{
	static struct bp_ctx x;
	struct bench_spawn spawn = { 0 };
	struct bench_cfg *cfg = &x.b.cfg;
	const char *mode = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
	int rc, ret;

	bench_prog = "cryptoctl: bench";
	tbl_wide = 1; /* bench keeps to 100 columns itself (--wide: more) */
	if (mode && bp_is_pool_mode(mode))
		return bp_pool(mode, argc - 1, argv + 1);
	if (mode && !strcmp(mode, "stream"))
		return bp_stream(argc - 1, argv + 1);
	if (mode && strcmp(mode, "throughput") && strcmp(mode, "dmcrypt")) {
		cli_usage_err("bench",
			      "unknown mode '%s' (throughput, dmcrypt, scale, "
			      "pcrypt, latency, pool or stream)",
			      mode);
		return CLI_EXIT_USAGE;
	}
	memset(&x, 0, sizeof(x));
	if (mode) { /* the mode word is not an option: skip it */
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	rc = bp_parse(&x, argc, argv, mode && !strcmp(mode, "dmcrypt"));
	if (rc)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (!cfg->spawn && cli->socket)
		snprintf(cfg->socket, sizeof(cfg->socket), "%s", cli->socket);
	signal(SIGPIPE, SIG_IGN);

	if (cfg->spawn) {
		const struct bench_spawn_opts so = {
			.bin = cfg->spawn,
			.workers = cfg->workers,
			.poll_mode = cfg->poll_mode,
			.avoid_cpu = cfg->cpu,
		};

		if (bench_spawn_start(&spawn, &so) < 0)
			return CLI_EXIT_FAIL;
		snprintf(cfg->socket, sizeof(cfg->socket), "%s", spawn.sock);
	}
	/* After the spawn: the daemon keeps the other CPUs. */
	if (cfg->cpu >= 0)
		bench_pin_cpu(cfg->cpu);
	ret = bp_tput(&x, spawn.pid);
	if (cfg->spawn && bench_spawn_stop(&spawn) != 0)
		ret = CLI_EXIT_FAIL;
	return ret;
}
