/* SPDX-License-Identifier: MIT */
/*
 * One algorithm at a time (engine, references, keys, session), one size at
 * a time (bind, seal, verify, then rounds of the paths alternated): the
 * measuring core shared by cryptod-bench and cryptoctl bench.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "bench.h"
#include "cryptod/ring_abi.h"

static void *alloc_block(size_t bytes)
{
	return aligned_alloc(4096, crd_align_up(bytes ? bytes : 1, 4096));
}

int bench_alloc_private(struct bench *b)
{
	const struct bench_cfg *cfg = &b->cfg;
	const size_t n = b->d.nslots;
	const size_t src = n * bench_layout_max_stride(cfg, false);
	const size_t dst = n * bench_layout_max_stride(cfg, true);

	b->priv_src = alloc_block(src);
	b->priv_dst = alloc_block(dst);
	b->ver_src = alloc_block(src);
	b->ver_dst = alloc_block(dst);
	b->iv = calloc(n, sizeof(*b->iv));
	b->status = calloc(n, sizeof(*b->status));
	if (!b->priv_src || !b->priv_dst || !b->ver_src || !b->ver_dst ||
	    !b->iv || !b->status)
		return -ENOMEM;
	return 0;
}

void bench_free_private(struct bench *b)
{
	free(b->priv_src);
	b->priv_src = NULL;
	free(b->priv_dst);
	b->priv_dst = NULL;
	free(b->ver_src);
	b->ver_src = NULL;
	free(b->ver_dst);
	b->ver_dst = NULL;
	free(b->iv);
	b->iv = NULL;
	free(b->status);
	b->status = NULL;
}

double bench_mops(const struct bench_sample *s)
{
	return s->secs > 0 ? (double)s->ops / s->secs / 1e6 : 0.0;
}

double bench_gbps(const struct bench_sample *s)
{
	return s->secs > 0 ? (double)s->bytes * 8 / s->secs / 1e9 : 0.0;
}

/* Per-round figures of every path, before the medians sort them. */
struct rounds {
	double a_ops[BENCH_MAX_ROUNDS], a_gb[BENCH_MAX_ROUNDS];
	double b_ops[BENCH_MAX_ROUNDS], b_gb[BENCH_MAX_ROUNDS];
	double c_ops[BENCH_MAX_ROUNDS], c_gb[BENCH_MAX_ROUNDS];
	double ab[BENCH_MAX_ROUNDS], ac[BENCH_MAX_ROUNDS];
};

/* --verbose: every round. */
static void print_rounds(const struct bench_cfg *cfg,
			 const struct bench_alg_run *r, uint32_t len,
			 const struct rounds *x)
{
	unsigned i;

	for (i = 0; i < cfg->rounds; i++) {
		if (r->time_ossl)
			bench_note(cfg,
				   "  %u B round %u: A %.2f Mops, B %.2f Mops, "
				   "C %.2f Mops, A/B %.2f, A/C %.2f\n",
				   len, i + 1, x->a_ops[i], x->b_ops[i],
				   x->c_ops[i], x->ab[i], x->ac[i]);
		else if (r->time_ref)
			bench_note(cfg,
				   "  %u B round %u: A %.2f Mops, B %.2f Mops, "
				   "A/B %.2f\n",
				   len, i + 1, x->a_ops[i], x->b_ops[i],
				   x->ab[i]);
		else
			bench_note(cfg, "  %u B round %u: A %.2f Mops\n", len,
				   i + 1, x->a_ops[i]);
	}
}

/* Point a private copy of la's geometry at src/dst and fill it. */
static struct bench_layout private_layout(const struct bench_layout *la,
					  uint8_t *src, uint8_t *dst)
{
	struct bench_layout l = *la;

	l.src = src;
	l.dst = la->oop ? dst : src;
	bench_layout_fill(&l);
	return l;
}

/*
 * CTR: counter blocks whose low 32, 96 and all 128 bits wrap within the
 * op, in the slots the verification burst covers (and timed like any
 * other: a few ops in a hundred). ipsec-mb's counter carries only within
 * 32 bits, so these check the daemon's (and the reference's) 128-bit
 * increment against OpenSSL's.
 */
static void ctr_edge_ivs(const struct bench_alg *a, uint8_t (*iv)[BENCH_IV_MAX],
			 unsigned n)
{
	if (a->alg != CC_ALG_AES_CTR || n < 3)
		return;
	memset(iv[0] + 12, 0xff, 4);
	memset(iv[1] + 4, 0xff, 12);
	memset(iv[2], 0xff, 16);
}

int bench_prepare(struct bench *b, struct bench_alg_run *r, uint32_t len,
		  struct bench_layout *la, struct bench_layout *lb)
{
	const struct bench_cfg *cfg = &b->cfg;
	struct bench_layout lx;
	struct bench_verify v = {
		.d = &b->d,
		.ref = &r->ref,
		.cross = r->cross ? &r->ossl : NULL,
		.la = la,
		.lb = lb,
		.lx = &lx,
		.dir = cfg->dir,
		.n = cfg->burst,
		.status = b->status,
		.alg = r->a->name,
	};
	int rc = 0;

	bench_layout_set(la, len, cfg, r->a, b->d.nslots);
	la->iv = b->iv;
	bench_daemon_bind(&b->d, la, cfg->dir);
	bench_layout_fill(la);
	*lb = private_layout(la, b->priv_src, b->priv_dst);
	lx = private_layout(la, b->ver_src, b->ver_dst);
	ctr_edge_ivs(r->a, b->iv, cfg->burst);
	if (cfg->dir == CC_DECRYPT) {
		/* The same ciphertext and tags everywhere: the reference's. */
		rc = bench_ref_seal(&r->ref, la);
		if (!rc)
			rc = bench_ref_seal(&r->ref, lb);
		if (!rc && r->cross)
			rc = bench_ref_seal(&r->ref, &lx);
		if (rc < 0) {
			bench_err("%s: sealing: %s\n", r->ref.desc,
				  strerror(-rc));
			return rc;
		}
	}
	return bench_verify_size(&v);
}

int bench_run_size(struct bench *b, struct bench_alg_run *r, uint32_t len,
		   struct bench_row *row)
{
	const struct bench_cfg *cfg = &b->cfg;
	unsigned warm_ms = cfg->time_ms / 4 ? cfg->time_ms / 4 : 1, i;
	static struct rounds x;
	struct bench_layout la, lb;
	struct bench_sample sa, sb, sc;
	int rc;

	rc = bench_prepare(b, r, len, &la, &lb);
	if (rc < 0)
		return rc;

	/* Warm caches, pages, branch predictors and the daemon's worker. */
	rc = bench_daemon_run(&b->d, cfg, warm_ms, &sa);
	if (!rc && r->time_ref)
		rc = bench_ref_run(&r->ref, &lb, cfg->dir, cfg->burst,
				   cfg->touch, warm_ms, &sb);
	if (!rc && r->time_ossl)
		rc = bench_ref_run(&r->ossl, &lb, cfg->dir, cfg->burst,
				   cfg->touch, warm_ms, &sc);
	if (rc < 0)
		return rc;

	memset(row, 0, sizeof(*row));
	row->size = len;
	for (i = 0; i < cfg->rounds; i++) {
		rc = bench_daemon_run(&b->d, cfg, cfg->time_ms, &sa);
		if (rc < 0)
			return rc;
		x.a_ops[i] = bench_mops(&sa);
		x.a_gb[i] = bench_gbps(&sa);
		row->retries += sa.retries;
		row->empty_polls += sa.empty_polls;
		if (!r->time_ref)
			continue;
		rc = bench_ref_run(&r->ref, &lb, cfg->dir, cfg->burst,
				   cfg->touch, cfg->time_ms, &sb);
		if (rc < 0)
			return rc;
		x.b_ops[i] = bench_mops(&sb);
		x.b_gb[i] = bench_gbps(&sb);
		x.ab[i] = x.b_ops[i] > 0 ? x.a_ops[i] / x.b_ops[i] : 0.0;
		if (!r->time_ossl)
			continue;
		rc = bench_ref_run(&r->ossl, &lb, cfg->dir, cfg->burst,
				   cfg->touch, cfg->time_ms, &sc);
		if (rc < 0)
			return rc;
		x.c_ops[i] = bench_mops(&sc);
		x.c_gb[i] = bench_gbps(&sc);
		x.ac[i] = x.c_ops[i] > 0 ? x.a_ops[i] / x.c_ops[i] : 0.0;
	}
	if (cfg->verbose)
		print_rounds(cfg, r, len, &x);
	row->ops_m = bench_median(x.a_ops, cfg->rounds);
	row->gbps = bench_median(x.a_gb, cfg->rounds);
	if (r->time_ref) {
		row->have_inproc = true;
		row->in_ops_m = bench_median(x.b_ops, cfg->rounds);
		row->in_gbps = bench_median(x.b_gb, cfg->rounds);
		row->ratio = bench_median(x.ab, cfg->rounds);
	}
	if (r->time_ossl) {
		row->have_openssl = true;
		row->os_ops_m = bench_median(x.c_ops, cfg->rounds);
		row->os_gbps = bench_median(x.c_gb, cfg->rounds);
		row->os_ratio = bench_median(x.ac, cfg->rounds);
	}
	return 0;
}

static int make_keys(struct bench_alg_run *r)
{
	const unsigned half = r->a->key_len / 2;

	if (getrandom(r->key, sizeof(r->key), 0) != (ssize_t)sizeof(r->key) ||
	    getrandom(r->auth_key, sizeof(r->auth_key), 0) !=
		    (ssize_t)sizeof(r->auth_key))
		return -errno;
	/* XTS refuses equal halves. */
	if (r->a->alg == CC_ALG_AES_XTS && !memcmp(r->key, r->key + half, half))
		r->key[0] ^= 1;
	return 0;
}

void bench_alg_end(struct bench *b, struct bench_alg_run *r)
{
	bench_ref_destroy(&r->ossl);
	bench_ref_destroy(&r->ref);
	bench_daemon_session_end(&b->d);
	explicit_bzero(r->key, sizeof(r->key));
	explicit_bzero(r->auth_key, sizeof(r->auth_key));
}

int bench_alg_begin(struct bench *b, struct bench_alg_run *r,
		    const struct bench_alg *a)
{
	const struct bench_cfg *cfg = &b->cfg;
	enum bench_ref_kind kind;
	char why[256];
	int rc;

	memset(r, 0, sizeof(*r));
	r->a = a;
	rc = bench_daemon_engine(&b->d, cfg, a, r->engine, sizeof(r->engine),
				 why, sizeof(why));
	if (rc < 0) {
		bench_note(cfg, "\n== %s: skipped: %s ==\n", a->name, why);
		return rc;
	}
	rc = make_keys(r);
	if (rc < 0) {
		bench_err("getrandom: %s\n", strerror(-rc));
		return rc;
	}
	kind = bench_ref_kind_for(r->engine, a);
	rc = bench_ref_create(&r->ref, kind, a, r->key, r->auth_key);
	if (rc < 0) {
		bench_err("%s: no in-process reference for engine "
			  "%s: %s\n",
			  a->name, r->engine, strerror(-rc));
		goto err;
	}
	/* null in place: the reference does nothing, nothing to compare. */
	r->time_ref = cfg->inproc && (a->alg != CC_ALG_NULL || cfg->oop ||
				      cfg->dir == CC_DECRYPT);
	if (kind != BENCH_REF_OSSL && a->alg != CC_ALG_NULL) {
		rc = bench_ref_create(&r->ossl, BENCH_REF_OSSL, a, r->key,
				      r->auth_key);
		if (rc < 0)
			goto err;
		r->cross = true;
		r->time_ossl =
			cfg->inproc && (cfg->ossl_all || bench_alg_is_cbc(a));
	}
	rc = bench_daemon_session(&b->d, cfg, a, r->key, r->auth_key);
	if (rc < 0)
		goto err;
	return 0;

err:
	bench_alg_end(b, r);
	return rc;
}

void bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_err("--cpu %d: %s (not pinned)\n", cpu, strerror(errno));
}
