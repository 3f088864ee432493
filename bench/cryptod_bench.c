/* SPDX-License-Identifier: MIT */
/*
 * cryptod-bench: for each algorithm, pick the engine the daemon serves it
 * with and the in-process twin of that engine; for each buffer size,
 * verify the daemon's output against that twin (and the twin against
 * OpenSSL), then alternate path A (the daemon, through libcryptoclient),
 * path B (the twin in this process) and, for CBC, path C (OpenSSL's
 * serial CBC) for --rounds rounds; report the median of each and the
 * median of the per-round ratios.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "bench.h"
#include "cryptod/ring_abi.h"

/* Whole run: what --alg all reports at the end. */
struct tally {
	unsigned measured, skipped, failed;
	char skipped_names[512], failed_names[512];
};

static void print_alg(const struct bench *b, const struct bench_alg_run *r,
		      unsigned n_sizes)
{
	const struct bench_cfg *cfg = &b->cfg;
	const struct bench_alg *a = r->a;
	const bool oop = cfg->oop && !a->tag_only;

	bench_note(cfg,
		   "\n== %s %s, %s, AAD %u B, tag %u B, IV %u B, key %u B%s "
		   "==\n",
		   a->name, cfg->dir == CC_ENCRYPT ? "enc" : "dec",
		   oop ? (cfg->touch ? "out of place, touched" : "out of place")
		       : (cfg->touch ? "in place, touched" : "in place"),
		   bench_aad_len(cfg, a), a->tag_len, a->iv_len, a->key_len,
		   a->auth_key_len ? " + HMAC key" : "");
	bench_note(cfg, "A: cryptod, engine %s\n", r->engine);
	bench_note(cfg, "B: %s%s\n", r->ref.desc,
		   r->time_ref ? ""
		   : cfg->inproc
			   ? " (reference only: null in place does nothing)"
			   : " (reference only: --no-inproc)");
	if (r->time_ossl)
		bench_note(cfg, "C: %s\n", r->ossl.desc);
	else if (r->cross)
		bench_note(cfg, "   checked against %s\n", r->ossl.desc);
	if (n_sizes < cfg->n_sizes && cfg->sizes_set)
		bench_note(cfg, "   (sizes %s cannot take are skipped)\n",
			   a->name);
}

static void tally_add(char *list, size_t len, const char *name)
{
	size_t used = strlen(list);

	snprintf(list + used, len - used, "%s%s", used ? ", " : "", name);
}

/* 0, -ENOTSUP (skipped), -EBADMSG (this algorithm failed; go on), or
 * another -errno (stop: the daemon is gone or stuck). */
static int run_alg(struct bench *b, const struct bench_alg *a)
{
	const struct bench_cfg *cfg = &b->cfg;
	uint32_t sizes[BENCH_MAX_SIZES];
	struct bench_row rows[BENCH_MAX_SIZES];
	struct bench_alg_run r;
	unsigned n, i;
	int rc;

	n = bench_alg_sizes(cfg, a, sizes);
	if (!n) {
		bench_note(cfg, "\n== %s: skipped: no size it can take ==\n",
			   a->name);
		return -ENOTSUP;
	}
	rc = bench_alg_begin(b, &r, a);
	if (rc < 0)
		return rc;
	print_alg(b, &r, n);
	if (!cfg->csv)
		bench_report_header(cfg, r.time_ossl);
	for (i = 0; i < n; i++) {
		rc = bench_run_size(b, &r, sizes[i], &rows[i]);
		if (rc < 0)
			break;
		bench_report_row(cfg, a, &rows[i]);
	}
	if (i)
		bench_report_summary(cfg, a, rows, i);
	bench_alg_end(b, &r);
	return rc;
}

static void print_config(const struct bench *b)
{
	const struct bench_cfg *cfg = &b->cfg;

	bench_note(cfg,
		   "cryptod-bench: %u algorithm%s, %s; burst %u, depth %u (%u "
		   "ops in flight), ring %u; %u round%s x %u ms per path per "
		   "size\n",
		   cfg->n_algs, cfg->n_algs == 1 ? "" : "s",
		   cfg->dir == CC_ENCRYPT ? "encrypt" : "decrypt", cfg->burst,
		   cfg->depth, b->d.nslots, cfg->ring, cfg->rounds,
		   cfg->rounds == 1 ? "" : "s", cfg->time_ms);
	bench_note(cfg,
		   "A: cryptod %s at %s, libcryptoclient zero-copy, one queue, "
		   "one client thread\n",
		   cc_daemon_version(b->d.conn) ? cc_daemon_version(b->d.conn)
						: "?",
		   cfg->socket);
	if (cfg->spawn)
		bench_note(cfg, "   spawned %s --workers %u\n", cfg->spawn,
			   cfg->workers);
	if (cfg->engine)
		bench_note(cfg, "   engine %s\n", cfg->engine);
	if (cfg->cpu >= 0)
		bench_note(cfg, "   client thread pinned to CPU %d\n",
			   cfg->cpu);
	bench_note(cfg,
		   "B: in this process, one thread, the engine the daemon's "
		   "engine wraps (ipsec-mb arch %s, or OpenSSL EVP)\n",
		   bench_imb_arch_name());
}

static void print_tally(const struct bench_cfg *cfg, const struct tally *t)
{
	if (cfg->n_algs < 2 && !t->skipped && !t->failed)
		return;
	bench_note(cfg, "\nAll: %u algorithm%s measured", t->measured,
		   t->measured == 1 ? "" : "s");
	if (t->skipped)
		bench_note(cfg, "; %u skipped (%s)", t->skipped,
			   t->skipped_names);
	if (t->failed)
		bench_note(cfg, "; %u FAILED (%s)", t->failed, t->failed_names);
	bench_note(cfg, "\n");
}

int main(int argc, char **argv)
{
	static struct bench b;
	struct bench_spawn spawn = { 0 };
	struct bench_env env = { 0 };
	struct bench_cfg *cfg = &b.cfg;
	struct tally t = { 0 };
	struct bench_passes passes = { 0 };
	unsigned i;
	int rc, ret = 1;

	rc = bench_opts_parse(cfg, argc, argv);
	if (rc == 1)
		return 0;
	if (rc < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);

	if (cfg->spawn) {
		rc = bench_spawn_start(&spawn, cfg->spawn, cfg->workers,
				       cfg->cpu, cfg->socket,
				       sizeof(cfg->socket));
		if (rc < 0)
			return 1;
	}
	/* After the spawn: the daemon inherits our CPUs minus this one. */
	if (cfg->cpu >= 0)
		bench_pin_cpu(cfg->cpu);
	rc = bench_daemon_open(&b.d, cfg);
	if (rc < 0)
		goto out_spawn;
	rc = bench_alloc_private(&b);
	if (rc < 0) {
		bench_err("out of memory\n");
		goto out_private;
	}

	print_config(&b);
	/* Count the daemon's CPU time as ours, spawned or not. */
	bench_env_start(&env, cfg,
			spawn.pid > 0 ? spawn.pid : cc_daemon_pid(b.d.conn));
	if (cfg->csv)
		bench_report_csv_header(cfg);
	bench_report_passes(cfg, b.d.conn, NULL, &passes);
	for (i = 0; i < cfg->n_algs; i++) {
		rc = run_alg(&b, cfg->algs[i]);
		bench_report_passes(cfg, b.d.conn, cfg->algs[i]->name, &passes);
		if (rc == -ENOTSUP && cfg->all) {
			t.skipped++;
			tally_add(t.skipped_names, sizeof(t.skipped_names),
				  cfg->algs[i]->name);
			continue;
		}
		if (rc == -EBADMSG || rc == -ENOTSUP || rc == -EINVAL) {
			/* This algorithm is wrong or refused; the others
			 * may still be measured. */
			t.failed++;
			tally_add(t.failed_names, sizeof(t.failed_names),
				  cfg->algs[i]->name);
			continue;
		}
		if (rc < 0) {
			print_tally(cfg, &t);
			goto out_private;
		}
		t.measured++;
	}
	print_tally(cfg, &t);
	bench_report_daemon_stats(cfg, b.d.conn, BENCH_CLIENT_NAME);
	bench_env_end(&env, cfg);
	ret = t.failed ? 1 : 0;

out_private:
	bench_free_private(&b);
	bench_daemon_close(&b.d);
out_spawn:
	if (cfg->spawn && bench_spawn_stop(&spawn) != 0)
		ret = 1;
	return ret;
}
