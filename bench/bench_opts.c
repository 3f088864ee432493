/* SPDX-License-Identifier: MIT */
/* The throughput modes' options, one at a time (cli/cmd_bench.c holds
 * the usage text and the loop). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cryptod/ring_abi.h"

static const uint32_t default_sizes[] = { 64,	128,  256,  512,
					  1024, 1536, 2048, 16384 };
static const uint32_t smoke_sizes[] = { 64, 1024 };

int bench_parse_uint(const char *opt, const char *s, unsigned min, unsigned max,
		     unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		bench_err("%s: '%s' is not in [%u, %u]\n", opt, s, min, max);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

static int parse_sizes(struct bench_cfg *cfg, const char *s)
{
	char buf[1024];
	char *save = NULL, *tok;
	unsigned n = 0, v;
	int rc;

	if (strlen(s) >= sizeof(buf)) {
		bench_err("--sizes: list too long\n");
		return -EINVAL;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == BENCH_MAX_SIZES) {
			bench_err("--sizes: at most %d\n", BENCH_MAX_SIZES);
			return -EINVAL;
		}
		rc = bench_parse_uint("--sizes", tok, 1, CRD_OP_MAX_LEN, &v);
		if (rc)
			return rc;
		cfg->sizes[n++] = v;
	}
	if (!n) {
		bench_err("--sizes: empty list\n");
		return -EINVAL;
	}
	cfg->n_sizes = n;
	return 0;
}

static void list_algs(FILE *f)
{
	unsigned i;

	fprintf(f, "Algorithms (--alg, comma-separated, or all):\n");
	for (i = 0; i < bench_alg_count(); i++)
		fprintf(f, "  %s\n", bench_alg_at(i)->name);
}

static int parse_algs(struct bench_cfg *cfg, const char *s)
{
	char buf[1024];
	char *save = NULL, *tok;
	const struct bench_alg *a;
	unsigned n = 0, i;

	cfg->all = false;
	if (!strcmp(s, "all")) {
		for (i = 0; i < bench_alg_count(); i++)
			cfg->algs[i] = bench_alg_at(i);
		cfg->n_algs = bench_alg_count();
		cfg->all = true;
		return 0;
	}
	if (!strcmp(s, "help") || !strcmp(s, "list")) {
		list_algs(stdout);
		return 1;
	}
	if (strlen(s) >= sizeof(buf)) {
		bench_err("--alg: list too long\n");
		return -EINVAL;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		a = bench_alg_find(tok);
		if (!a) {
			bench_err("--alg: unknown '%s'\n", tok);
			list_algs(stderr);
			return -EINVAL;
		}
		for (i = 0; i < n && cfg->algs[i] != a; i++)
			;
		if (i < n)
			continue; /* named twice */
		if (n == BENCH_MAX_ALGS) {
			bench_err("--alg: at most %d\n", BENCH_MAX_ALGS);
			return -EINVAL;
		}
		cfg->algs[n++] = a;
	}
	if (!n) {
		bench_err("--alg: empty list\n");
		return -EINVAL;
	}
	cfg->n_algs = n;
	return 0;
}

static void set_sizes(struct bench_cfg *cfg, const uint32_t *v, unsigned n)
{
	memcpy(cfg->sizes, v, n * sizeof(*v));
	cfg->n_sizes = n;
}

const struct option bench_long_opts[] = {
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "spawn-daemon", required_argument, NULL, OPT_SPAWN },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "poll-mode", required_argument, NULL, OPT_POLL_MODE },
	{ "alg", required_argument, NULL, OPT_ALG },
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "oop", no_argument, NULL, OPT_OOP },
	{ "sizes", required_argument, NULL, OPT_SIZES },
	{ "aad-len", required_argument, NULL, OPT_AAD },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "ring", required_argument, NULL, OPT_RING },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "time-ms", required_argument, NULL, OPT_TIME },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "touch", no_argument, NULL, OPT_TOUCH },
	{ "no-inproc", no_argument, NULL, OPT_NO_INPROC },
	{ "no-dpdk", no_argument, NULL, OPT_NO_DPDK },
	{ "submit", no_argument, NULL, OPT_SUBMIT },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "smoke", no_argument, NULL, OPT_SMOKE },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

int bench_opts_one(struct bench_cfg *cfg, struct bench_opts_set *set, int c,
		   const char *arg)
{
	unsigned v;
	int rc = 0;

	switch (c) {
	case OPT_SOCKET:
		if (strlen(arg) >= sizeof(cfg->socket)) {
			bench_err("--socket: path too long\n");
			return -EINVAL;
		}
		strcpy(cfg->socket, arg);
		return 0;
	case OPT_SPAWN:
		cfg->spawn = arg;
		return 0;
	case OPT_WORKERS:
		return bench_parse_uint("--workers", arg, 1, BENCH_MAX_WORKERS,
					&cfg->workers);
	case OPT_POLL_MODE:
		if (strcmp(arg, "adaptive") && strcmp(arg, "busy")) {
			bench_err("--poll-mode: adaptive or busy, not '%s'\n",
				  arg);
			return -EINVAL;
		}
		cfg->poll_mode = arg;
		return 0;
	case OPT_ALG:
		return parse_algs(cfg, arg);
	case OPT_ENGINE:
		cfg->engine = arg;
		return 0;
	case OPT_DIR:
		if (!strcmp(arg, "enc"))
			cfg->dir = CC_ENCRYPT;
		else if (!strcmp(arg, "dec"))
			cfg->dir = CC_DECRYPT;
		else
			goto bad_value;
		return 0;
	case OPT_OOP:
		cfg->oop = true;
		return 0;
	case OPT_SIZES:
		set->sizes = true;
		cfg->sizes_set = true;
		return parse_sizes(cfg, arg);
	case OPT_AAD:
		return bench_parse_uint("--aad-len", arg, 0, BENCH_MAX_AAD,
					&cfg->aad_len);
	case OPT_BURST:
		return bench_parse_uint("--burst", arg, 1, BENCH_MAX_BURST,
					&cfg->burst);
	case OPT_DEPTH:
		return bench_parse_uint("--depth", arg, 1, BENCH_MAX_DEPTH,
					&cfg->depth);
	case OPT_RING:
		rc = bench_parse_uint("--ring", arg, CRD_RING_MIN_ENTRIES,
				      CRD_RING_MAX_ENTRIES, &cfg->ring);
		if (!rc && !crd_is_pow2(cfg->ring)) {
			bench_err("--ring: %u is not a power of "
				  "two\n",
				  cfg->ring);
			return -EINVAL;
		}
		return rc;
	case OPT_ROUNDS:
		set->rounds = true;
		return bench_parse_uint("--rounds", arg, 1, BENCH_MAX_ROUNDS,
					&cfg->rounds);
	case OPT_TIME:
		set->time = true;
		return bench_parse_uint("--time-ms", arg, 1, BENCH_MAX_TIME_MS,
					&cfg->time_ms);
	case OPT_CPU:
		rc = bench_parse_uint("--cpu", arg, 0, 4095, &v);
		cfg->cpu = (int)v;
		return rc;
	case OPT_TOUCH:
		cfg->touch = true;
		return 0;
	case OPT_NO_DPDK:
		cfg->dpdk = false;
		return 0;
	case OPT_SUBMIT:
		cfg->submit = true;
		return 0;
	case OPT_NO_INPROC:
		cfg->inproc = false;
		return 0;
	case OPT_CSV:
		cfg->csv = true;
		return 0;
	case OPT_SMOKE:
		cfg->smoke = true;
		return 0;
	case OPT_VERBOSE:
		cfg->verbose = true;
		return 0;
	default:
		return -EINVAL;
	}

bad_value:
	bench_err("bad value '%s' (see --help)\n", arg);
	return -EINVAL;
}

static bool any_aad(const struct bench_cfg *cfg)
{
	unsigned i;

	for (i = 0; i < cfg->n_algs; i++)
		if (cfg->algs[i]->aad)
			return true;
	return false;
}

void bench_cfg_init(struct bench_cfg *cfg, struct bench_opts_set *set)
{
	memset(cfg, 0, sizeof(*cfg));
	memset(set, 0, sizeof(*set));
	cfg->workers = 1;
	cfg->algs[0] = bench_alg_find("aes-128-gcm");
	cfg->n_algs = 1;
	cfg->dir = CC_ENCRYPT;
	set_sizes(cfg, default_sizes, sizeof(default_sizes) / 4);
	cfg->burst = 32;
	cfg->depth = 4;
	cfg->rounds = 5;
	cfg->time_ms = 300;
	cfg->cpu = -1;
	cfg->inproc = true;
	cfg->dpdk = true;
}

int bench_cfg_finish(struct bench_cfg *cfg, const struct bench_opts_set *set)
{
	unsigned long in_flight;
	int rc;

	if (cfg->smoke) {
		if (!set->sizes)
			set_sizes(cfg, smoke_sizes, sizeof(smoke_sizes) / 4);
		if (!set->rounds)
			cfg->rounds = 1;
		/* Many algorithms: keep the whole smoke run short. */
		if (!set->time)
			cfg->time_ms = cfg->n_algs > 1 ? 20 : 50;
	}
	if (cfg->dir == CC_DECRYPT)
		cfg->oop = true; /* in place would destroy the ciphertext */
	if (cfg->aad_len && !any_aad(cfg)) {
		bench_err("--aad-len needs GCM or CBC+HMAC among the "
			  "algorithms\n");
		return -EINVAL;
	}

	in_flight = (unsigned long)cfg->burst * cfg->depth;
	if (in_flight > CRD_RING_MAX_ENTRIES) {
		bench_err("burst * depth must be <= %u\n",
			  CRD_RING_MAX_ENTRIES);
		return -EINVAL;
	}
	if (!cfg->ring) {
		/* Room beyond what is in flight: the library fetches free
		 * slots for writing a burst ahead (client-lib/queue.c), as a
		 * DPDK application sizes its rings past its bursts. */
		unsigned long want = 4 * in_flight;

		cfg->ring = CRD_RING_MIN_ENTRIES;
		while (cfg->ring < want && cfg->ring < CRD_RING_MAX_ENTRIES)
			cfg->ring <<= 1;
	}

	if (cfg->spawn) {
		cfg->socket[0] = '\0'; /* bench_spawn_start() picks one */
	} else if (!cfg->socket[0]) {
		rc = cc_default_socket_path(cfg->socket, sizeof(cfg->socket));
		if (rc < 0) {
			bench_err("default socket path: %s\n", cc_strerror(rc));
			return rc;
		}
	}
	return 0;
}

unsigned bench_alg_sizes(const struct bench_cfg *cfg, const struct bench_alg *a,
			 uint32_t *out)
{
	unsigned i, n = 0;
	bool extra = a->extra_size && !cfg->sizes_set;

	for (i = 0; i < cfg->n_sizes; i++) {
		if (extra && cfg->sizes[i] == a->extra_size)
			extra = false;
		/* The extra size goes in order, before the first larger. */
		if (extra && cfg->sizes[i] > a->extra_size) {
			out[n++] = a->extra_size;
			extra = false;
		}
		if (bench_alg_len_ok(a, cfg->sizes[i]) && n < BENCH_MAX_SIZES)
			out[n++] = cfg->sizes[i];
	}
	if (extra && n < BENCH_MAX_SIZES)
		out[n++] = a->extra_size;
	return n;
}
