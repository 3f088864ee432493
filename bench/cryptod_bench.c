/* SPDX-License-Identifier: MIT */
/*
 * cryptod-bench: for each buffer size, verify the daemon's output against
 * ipsec-mb, then alternate path A (the daemon, through libcryptoclient)
 * and path B (ipsec-mb direct API in this process) for --rounds rounds and
 * report the median of each and the median of the per-round ratios.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <intel-ipsec-mb.h>

#include "bench.h"
#include "cryptod/ring_abi.h"

struct bench {
	struct bench_cfg cfg;
	struct bench_daemon d;
	struct bench_imb *imb;
	uint8_t *priv_src, *priv_dst; /* path B's blocks; owned */
	uint8_t (*iv)[BENCH_IV_LEN];  /* nslots IVs shared by both; owned */
	uint8_t *ref;		      /* verification scratch; owned */
	int32_t *status;	      /* verification statuses; owned */
};

static int alloc_private(struct bench *b)
{
	const struct bench_cfg *cfg = &b->cfg;
	size_t src = 0, dst = 0, s;
	unsigned i, n = b->d.nslots;

	for (i = 0; i < cfg->n_sizes; i++) {
		s = bench_layout_stride(cfg->sizes[i], cfg->aad_len,
					bench_tag_len(cfg->alg));
		src = s > src ? s : src;
		s = bench_layout_dst_stride(cfg->sizes[i]);
		dst = s > dst ? s : dst;
	}
	b->priv_src = aligned_alloc(4096, crd_align_up(n * src, 4096));
	b->priv_dst = cfg->oop
			      ? aligned_alloc(4096, crd_align_up(n * dst, 4096))
			      : NULL;
	b->iv = calloc(n, sizeof(*b->iv));
	/* Reference outputs and tags for one verification burst. */
	b->ref = malloc((size_t)cfg->burst * (dst + BENCH_TAG_LEN));
	b->status = calloc(cfg->burst, sizeof(*b->status));
	if (!b->priv_src || (cfg->oop && !b->priv_dst) || !b->iv || !b->ref ||
	    !b->status)
		return -ENOMEM;
	return 0;
}

static void free_private(struct bench *b)
{
	free(b->priv_src);
	b->priv_src = NULL;
	free(b->priv_dst);
	b->priv_dst = NULL;
	free(b->iv);
	b->iv = NULL;
	free(b->ref);
	b->ref = NULL;
	free(b->status);
	b->status = NULL;
}

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

/* A forged tag must be refused, or decrypt timings mean nothing. */
static int verify_forgery(struct bench *b, const struct bench_layout *l)
{
	uint8_t *tag = bench_slot_tag(l, 0), *dst = bench_slot_dst(l, 0);
	size_t i;
	int rc;

	tag[0] ^= 0x80;
	rc = bench_daemon_run_once(&b->d, 1, b->status);
	tag[0] ^= 0x80;
	if (rc < 0)
		return rc;
	if (b->status[0] != CC_ERR_AUTH_FAILED) {
		fprintf(stderr,
			"cryptod-bench: %u B: decrypt with a forged tag "
			"completed with '%s', expected '%s'\n",
			l->len, cc_strerror(b->status[0]),
			cc_strerror(CC_ERR_AUTH_FAILED));
		return -EBADMSG;
	}
	for (i = 0; i < l->len; i++) {
		if (dst[i]) {
			fprintf(stderr,
				"cryptod-bench: %u B: output not zeroed after "
				"a failed tag check (byte %zu)\n",
				l->len, i);
			return -EBADMSG;
		}
	}
	return 0;
}

/* The daemon's output for one burst must be ipsec-mb's, in order. */
static int verify(struct bench *b, const struct bench_layout *l)
{
	const struct bench_cfg *cfg = &b->cfg;
	const unsigned n = cfg->burst;
	const size_t rstride = bench_layout_dst_stride(l->len) + BENCH_TAG_LEN;
	unsigned i;
	size_t at;
	int rc;

	for (i = 0; i < n; i++) {
		uint8_t *out = b->ref + i * rstride, *tag = out + l->len;

		bench_imb_crypt(b->imb, cfg->dir, out, bench_slot_src(l, i),
				l->len, l->iv[i], bench_slot_aad(l, i),
				l->aad_len, tag);
		if (cfg->dir == CC_DECRYPT && l->tag_len &&
		    memcmp(tag, bench_slot_tag(l, i), l->tag_len)) {
			fprintf(stderr,
				"cryptod-bench: internal error: sealed slot %u "
				"does not verify in-process\n",
				i);
			return -EINVAL;
		}
	}

	rc = bench_daemon_run_once(&b->d, n, b->status);
	if (rc < 0)
		return rc;

	for (i = 0; i < n; i++) {
		const uint8_t *out = b->ref + i * rstride, *tag = out + l->len;

		if (b->status[i]) {
			fprintf(stderr,
				"cryptod-bench: %u B: op %u failed in the "
				"daemon: %s\n",
				l->len, i, cc_strerror(b->status[i]));
			return -EBADMSG;
		}
		at = first_diff(bench_slot_dst(l, i), out, l->len);
		if (at < l->len) {
			fprintf(stderr,
				"cryptod-bench: %u B: op %u: the daemon's "
				"output differs from ipsec-mb's at byte %zu: "
				"benchmark aborted\n",
				l->len, i, at);
			return -EBADMSG;
		}
		if (cfg->dir == CC_ENCRYPT &&
		    memcmp(bench_slot_tag(l, i), tag, l->tag_len)) {
			fprintf(stderr,
				"cryptod-bench: %u B: op %u: the daemon's tag "
				"differs from ipsec-mb's: benchmark aborted\n",
				l->len, i);
			return -EBADMSG;
		}
	}
	if (cfg->dir == CC_DECRYPT && l->tag_len)
		return verify_forgery(b, l);
	return 0;
}

static double mops(const struct bench_sample *s)
{
	return s->secs > 0 ? (double)s->ops / s->secs / 1e6 : 0.0;
}

static double gbps(const struct bench_sample *s)
{
	return s->secs > 0 ? (double)s->bytes * 8 / s->secs / 1e9 : 0.0;
}

/* --verbose: every round, before the medians sort the arrays. */
static void print_rounds(const struct bench_cfg *cfg, uint32_t len,
			 const double *a, const double *b, const double *ratio)
{
	unsigned r;

	for (r = 0; r < cfg->rounds; r++) {
		if (cfg->inproc)
			bench_note(cfg,
				   "  %u B round %u: A %.2f Mops, B %.2f Mops, "
				   "A/B %.2f\n",
				   len, r + 1, a[r], b[r], ratio[r]);
		else
			bench_note(cfg, "  %u B round %u: A %.2f Mops\n", len,
				   r + 1, a[r]);
	}
}

static int run_size(struct bench *b, uint32_t len, struct bench_row *row)
{
	const struct bench_cfg *cfg = &b->cfg;
	double a_ops[BENCH_MAX_ROUNDS], a_gb[BENCH_MAX_ROUNDS];
	double b_ops[BENCH_MAX_ROUNDS], b_gb[BENCH_MAX_ROUNDS];
	double ratio[BENCH_MAX_ROUNDS];
	unsigned warm_ms = cfg->time_ms / 4 ? cfg->time_ms / 4 : 1, r;
	struct bench_layout la, lb;
	struct bench_sample sa, sb;
	int rc;

	bench_layout_set(&la, len, cfg, b->d.nslots);
	la.iv = b->iv;
	bench_daemon_bind(&b->d, &la, cfg->dir);
	bench_layout_fill(&la);
	lb = la;
	lb.src = b->priv_src;
	lb.dst = cfg->oop ? b->priv_dst : b->priv_src;
	bench_layout_fill(&lb);
	if (cfg->dir == CC_DECRYPT) {
		bench_imb_seal_slots(b->imb, &la);
		bench_imb_seal_slots(b->imb, &lb);
	}

	rc = verify(b, &la);
	if (rc < 0)
		return rc;

	/* Warm caches, pages, branch predictors and the daemon's worker. */
	rc = bench_daemon_run(&b->d, cfg, warm_ms, &sa);
	if (!rc && cfg->inproc)
		rc = bench_imb_run(b->imb, &lb, cfg->dir, cfg->burst,
				   cfg->touch, warm_ms, &sb);
	if (rc < 0)
		return rc;

	memset(row, 0, sizeof(*row));
	row->size = len;
	for (r = 0; r < cfg->rounds; r++) {
		rc = bench_daemon_run(&b->d, cfg, cfg->time_ms, &sa);
		if (rc < 0)
			return rc;
		a_ops[r] = mops(&sa);
		a_gb[r] = gbps(&sa);
		row->retries += sa.retries;
		row->empty_polls += sa.empty_polls;
		if (!cfg->inproc)
			continue;
		rc = bench_imb_run(b->imb, &lb, cfg->dir, cfg->burst,
				   cfg->touch, cfg->time_ms, &sb);
		if (rc < 0)
			return rc;
		b_ops[r] = mops(&sb);
		b_gb[r] = gbps(&sb);
		ratio[r] = b_ops[r] > 0 ? a_ops[r] / b_ops[r] : 0.0;
	}
	if (cfg->verbose)
		print_rounds(cfg, len, a_ops, b_ops, ratio);
	row->ops_m = bench_median(a_ops, cfg->rounds);
	row->gbps = bench_median(a_gb, cfg->rounds);
	if (cfg->inproc) {
		row->have_inproc = true;
		row->in_ops_m = bench_median(b_ops, cfg->rounds);
		row->in_gbps = bench_median(b_gb, cfg->rounds);
		row->ratio = bench_median(ratio, cfg->rounds);
	}
	return 0;
}

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "cryptod-bench: --cpu %d: %s (not pinned)\n",
			cpu, strerror(errno));
}

static void print_config(const struct bench *b)
{
	const struct bench_cfg *cfg = &b->cfg;

	bench_note(cfg,
		   "cryptod-bench: %s %s, %s, AAD %u B, tag %u B, IV %u B; "
		   "burst %u, depth %u (%u ops in flight), ring %u; %u round%s "
		   "x %u ms per path per size\n",
		   bench_alg_name(cfg->alg),
		   cfg->dir == CC_ENCRYPT ? "enc" : "dec",
		   cfg->oop ? (cfg->touch ? "out of place, touched"
					  : "out of place")
			    : (cfg->touch ? "in place, touched" : "in place"),
		   cfg->aad_len, bench_tag_len(cfg->alg),
		   bench_tag_len(cfg->alg) ? BENCH_IV_LEN : 0, cfg->burst,
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
		   "B: intel-ipsec-mb %s direct API in-process, arch %s%s\n",
		   imb_get_version_str(), bench_imb_arch(b->imb),
		   cfg->inproc ? "" : " (reference only: --no-inproc)");
}

int main(int argc, char **argv)
{
	static struct bench b;
	struct bench_spawn spawn = { 0 };
	struct bench_env env = { 0 };
	struct bench_row rows[BENCH_MAX_SIZES];
	struct bench_cfg *cfg = &b.cfg;
	uint8_t key[32];
	unsigned i;
	int rc, ret = 1;

	rc = bench_opts_parse(cfg, argc, argv);
	if (rc == 1)
		return 0;
	if (rc < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);

	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
		fprintf(stderr, "cryptod-bench: getrandom: %s\n",
			strerror(errno));
		return 1;
	}
	rc = bench_imb_create(cfg->alg, key, &b.imb);
	if (rc < 0) {
		fprintf(stderr, "cryptod-bench: ipsec-mb: %s\n", strerror(-rc));
		goto out_wipe_key;
	}
	if (cfg->spawn) {
		rc = bench_spawn_start(&spawn, cfg->spawn, cfg->workers,
				       cfg->cpu, cfg->socket,
				       sizeof(cfg->socket));
		if (rc < 0)
			goto out_imb;
	}
	/* After the spawn: the daemon inherits our CPUs minus this one. */
	if (cfg->cpu >= 0)
		pin_cpu(cfg->cpu);
	rc = bench_daemon_open(&b.d, cfg, key);
	explicit_bzero(key, sizeof(key));
	if (rc < 0)
		goto out_spawn;
	rc = alloc_private(&b);
	if (rc < 0) {
		fprintf(stderr, "cryptod-bench: out of memory\n");
		goto out_private;
	}

	print_config(&b);
	/* Count the daemon's CPU time as ours, spawned or not. */
	bench_env_start(&env, cfg,
			spawn.pid > 0 ? spawn.pid : cc_daemon_pid(b.d.conn));
	bench_report_header(cfg);
	for (i = 0; i < cfg->n_sizes; i++) {
		rc = run_size(&b, cfg->sizes[i], &rows[i]);
		if (rc < 0)
			goto out_private;
		bench_report_row(cfg, &rows[i]);
	}
	bench_report_summary(cfg, rows, cfg->n_sizes);
	bench_report_daemon_stats(cfg, b.d.conn, BENCH_CLIENT_NAME);
	bench_env_end(&env, cfg);
	ret = 0;

out_private:
	free_private(&b);
	bench_daemon_close(&b.d);
out_spawn:
	if (cfg->spawn && bench_spawn_stop(&spawn) != 0)
		ret = 1;
out_imb:
	bench_imb_destroy(b.imb);
out_wipe_key:
	explicit_bzero(key, sizeof(key));
	return ret;
}
