/* SPDX-License-Identifier: MIT */
/*
 * One algorithm at a time (engine, references, keys, session), one size at
 * a time (bind, seal, verify, then rounds of the paths alternated): the
 * measuring core of cryptoctl bench's throughput modes.
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
	/* CTR + HMAC: no op may wrap the low 32 bits, which ipsec-mb's
	 * twin cannot split without splitting the MAC (the daemon's
	 * engines are checked across wraps by the tests, not here). */
	if (crd_alg_cipher_half(a->alg) == CRD_ALG_AES_CTR)
		for (unsigned i = 0; i < n; i++)
			iv[i][12] &= 0x7f;
	if (a->alg != CC_ALG_AES_CTR || n < 3)
		return;
	/* (the first slots: the verification burst covers them) */
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
	ctr_edge_ivs(r->a, b->iv, la->nslots);
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

/* DPDK's PMD for the algorithm, when the plugin and a PMD are there; why
 * not, once per reason. */
static void dpdk_begin(const struct bench_cfg *cfg, struct bench_alg_run *r)
{
	static char last_why[sizeof(r->dpdk.desc)];

	if (bench_ref_create(&r->dpdk, BENCH_REF_DPDK, r->a, r->key,
			     r->auth_key) == 0) {
		r->time_dpdk = true;
		return;
	}
	if (strcmp(last_why, r->dpdk.desc)) {
		snprintf(last_why, sizeof(last_why), "%s", r->dpdk.desc);
		bench_note(cfg, "   %s\n", r->dpdk.desc);
	}
}

int bench_verify_peer(struct bench *b, struct bench_alg_run *r,
		      struct bench_ref *peer, const struct bench_layout *lb)
{
	const struct bench_cfg *cfg = &b->cfg;
	struct bench_layout lp = private_layout(lb, b->ver_src, b->ver_dst);
	int rc = 0;

	if (cfg->dir == CC_DECRYPT)
		rc = bench_ref_seal(&r->ref, &lp);
	if (!rc)
		rc = bench_ref_burst(peer, &lp, cfg->dir, 0, cfg->burst, true);
	if (rc != 0) {
		bench_err("%s %u B: %s: %s\n", r->a->name, lb->len, peer->desc,
			  rc < 0 ? strerror(-rc)
				 : "refused the reference's tags");
		return rc < 0 ? rc : -EBADMSG;
	}
	return bench_compare_outputs(r->a->name, cfg->dir, cfg->burst, &lp, lb,
				     peer->desc, r->ref.desc);
}

void bench_alg_end(struct bench *b, struct bench_alg_run *r)
{
	bench_ref_destroy(&r->dpdk);
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
		/* OpenSSL has no XCBC-MAC: the twin is the only check
		 * beside the daemon there. */
		if (rc < 0 && rc != -ENOTSUP)
			goto err;
		r->cross = rc == 0;
		r->time_ossl = r->cross && cfg->inproc &&
			       (cfg->ossl_all || bench_alg_is_cbc(a));
	}
	if (cfg->inproc && cfg->dpdk)
		dpdk_begin(cfg, r);
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
