/* SPDX-License-Identifier: MIT */
/*
 * In-process paths: the loop that times a reference engine on the same
 * slots, burst, key, IV and AAD sizes as path A, and the null
 * algorithm's reference (a copy). The engines themselves are in
 * bench_ref_imb.c and bench_ref_ossl.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const struct bench_ref_ops *const kinds[] = {
	[BENCH_REF_IMB] = &bench_ref_imb_ops,
	[BENCH_REF_OSSL] = &bench_ref_ossl_ops,
	[BENCH_REF_COPY] = &bench_ref_copy_ops,
};

int bench_ref_create(struct bench_ref *r, enum bench_ref_kind kind,
		     const struct bench_alg *a, const uint8_t *key,
		     const uint8_t *auth_key)
{
	int rc;

	const struct bench_ref_ops *ops;

	memset(r, 0, sizeof(*r));
	ops = kind == BENCH_REF_DPDK ? bench_dpdk_ops(r->desc, sizeof(r->desc))
				     : kinds[kind];
	if (!ops)
		return -ENOTSUP; /* r->desc says why */
	rc = ops->create(a, key, auth_key, &r->priv, r->desc, sizeof(r->desc));
	if (rc < 0)
		return rc;
	r->ops = ops;
	r->kind = kind;
	return 0;
}

void bench_ref_destroy(struct bench_ref *r)
{
	if (r->ops)
		r->ops->destroy(r->priv);
	r->ops = NULL;
	r->priv = NULL;
}

enum bench_ref_kind bench_ref_kind_for(const char *engine,
				       const struct bench_alg *a)
{
	if (a->alg == CC_ALG_NULL)
		return BENCH_REF_COPY;
	if (!strcmp(engine, "aesni"))
		return BENCH_REF_IMB;
	/* openssl, and OpenSSL's answer for an engine without an in-process
	 * twin (kernel). */
	return BENCH_REF_OSSL;
}

int bench_ref_seal(struct bench_ref *r, const struct bench_layout *l)
{
	struct bench_layout s = *l;
	int rc;

	/* Ciphertext replaces the plaintext in the source slots. */
	s.oop = false;
	s.dst = s.src;
	rc = bench_ref_burst(r, &s, CC_ENCRYPT, 0, s.nslots, true);
	return rc < 0 ? rc : 0;
}

/* Bursts between clock reads: about 64 KiB of payload, at least one. */
static unsigned bursts_per_check(unsigned burst, uint32_t len)
{
	uint64_t per_burst = (uint64_t)burst * len;

	return per_burst >= 65536 ? 1 : (unsigned)(65536 / per_burst);
}

int bench_ref_run(struct bench_ref *r, const struct bench_layout *l,
		  enum cc_dir dir, unsigned burst, bool touch, unsigned time_ms,
		  struct bench_sample *out)
{
	const unsigned check = bursts_per_check(burst, l->len);
	/* The tag is a result on encrypt only. */
	const uint32_t tag_read = dir == CC_ENCRYPT ? l->tag_len : 0;
	unsigned slot = 0, b, i;
	uint64_t ops = 0, acc = 0, bad = 0;
	double t0, t, end;
	int rc;

	t0 = bench_now();
	end = t0 + time_ms * 1e-3;
	for (;;) {
		for (b = 0; b < check; b++) {
			if (touch)
				for (i = 0; i < burst; i++)
					bench_touch_write(
						bench_slot_src(l, slot + i),
						l->len);
			rc = bench_ref_burst(r, l, dir, slot, burst, false);
			if (rc < 0) {
				bench_err("in-process %s: %s\n", r->desc,
					  strerror(-rc));
				return rc;
			}
			bad += (unsigned)rc;
			if (touch)
				for (i = 0; i < burst; i++)
					acc ^= bench_touch_read(
						       bench_slot_dst(l,
								      slot + i),
						       l->len) ^
					       bench_touch_read(
						       bench_slot_tag(l,
								      slot + i),
						       tag_read);
			slot += burst;
			if (slot == l->nslots)
				slot = 0;
		}
		ops += (uint64_t)check * burst;
		t = bench_now();
		if (t >= end)
			break;
	}

	bench_touch_sink ^= acc;
	memset(out, 0, sizeof(*out));
	out->ops = ops;
	out->bytes = ops * l->len;
	out->secs = t - t0;
	if (bad) {
		bench_err("in-process decrypt (%s): %llu tags did "
			  "not verify\n",
			  r->desc, (unsigned long long)bad);
		return -EBADMSG;
	}
	return 0;
}

/* ---- The null algorithm: a copy, or nothing in place ---- */

static int copy_create(const struct bench_alg *a, const uint8_t *key,
		       const uint8_t *auth_key, void **priv, char *desc,
		       size_t desc_len)
{
	if (a->alg != CC_ALG_NULL)
		return -ENOTSUP;
	*priv = NULL;
	snprintf(desc, desc_len, "memcpy");
	return 0;
}

static void copy_destroy(void *priv)
{
}

static int copy_burst(void *priv, const struct bench_layout *l, enum cc_dir dir,
		      unsigned first, unsigned n, bool checked)
{
	unsigned i;

	if (!l->oop)
		return 0;
	for (i = first; i < first + n; i++)
		memcpy(bench_slot_dst(l, i), bench_slot_src(l, i), l->len);
	return 0;
}

const struct bench_ref_ops bench_ref_copy_ops = {
	.create = copy_create,
	.destroy = copy_destroy,
	.burst = copy_burst,
};
