/* SPDX-License-Identifier: MIT */
/*
 * Path B: intel-ipsec-mb's direct GCM API in this process, one IMB_MGR,
 * the same slots, burst, key, IV and AAD sizes as path A. It also produces
 * the reference results that path A is verified against.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-ipsec-mb.h>

#include "bench.h"

struct bench_imb {
	IMB_MGR *mgr; /* owned */
	enum bench_alg alg;
	IMB_ARCH arch;
	aes_gcm_enc_dec_t enc, dec; /* the manager's, picked once */
	struct gcm_key_data *key;   /* owned, 64-byte aligned, wiped on free */
};

int bench_imb_create(enum bench_alg alg, const uint8_t *key,
		     struct bench_imb **out)
{
	struct bench_imb *m;
	int err;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->alg = alg;
	/* C11: the size must be a multiple of the alignment. */
	m->key = aligned_alloc(64, (sizeof(*m->key) + 63) & ~(size_t)63);
	if (!m->key)
		goto err_free_m;
	memset(m->key, 0, sizeof(*m->key));

	m->mgr = alloc_mb_mgr(0);
	if (!m->mgr)
		goto err_free_key;
	init_mb_mgr_auto(m->mgr, &m->arch);
	err = imb_get_errno(m->mgr);
	if (err) {
		fprintf(stderr, "cryptod-bench: ipsec-mb init: %s\n",
			imb_get_strerror(err));
		goto err_free_mgr;
	}

	switch (alg) {
	case BENCH_ALG_AES128_GCM:
		IMB_AES128_GCM_PRE(m->mgr, key, m->key);
		m->enc = m->mgr->gcm128_enc;
		m->dec = m->mgr->gcm128_dec;
		break;
	case BENCH_ALG_AES256_GCM:
		IMB_AES256_GCM_PRE(m->mgr, key, m->key);
		m->enc = m->mgr->gcm256_enc;
		m->dec = m->mgr->gcm256_dec;
		break;
	case BENCH_ALG_NULL:
		break;
	}
	*out = m;
	return 0;

err_free_mgr:
	free_mb_mgr(m->mgr);
err_free_key:
	free(m->key);
err_free_m:
	free(m);
	return -ENOMEM;
}

void bench_imb_destroy(struct bench_imb *m)
{
	if (!m)
		return;
	free_mb_mgr(m->mgr);
	m->mgr = NULL;
	explicit_bzero(m->key, sizeof(*m->key));
	free(m->key);
	m->key = NULL;
	free(m);
}

const char *bench_imb_arch(const struct bench_imb *m)
{
	switch (m->arch) {
	case IMB_ARCH_NOAESNI:
		return "noaesni";
	case IMB_ARCH_SSE:
		return "sse";
	case IMB_ARCH_AVX:
		return "avx";
	case IMB_ARCH_AVX2:
		return "avx2";
	case IMB_ARCH_AVX512:
		return "avx512";
	default:
		return "?";
	}
}

void bench_imb_crypt(struct bench_imb *m, enum cc_dir dir, uint8_t *dst,
		     const uint8_t *src, uint32_t len, const uint8_t *iv,
		     const uint8_t *aad, uint32_t aad_len, uint8_t *tag_out)
{
	struct gcm_context_data ctx;

	if (m->alg == BENCH_ALG_NULL) {
		if (dst != src)
			memcpy(dst, src, len);
		return;
	}
	(dir == CC_ENCRYPT ? m->enc : m->dec)(m->key, &ctx, dst, src, len, iv,
					      aad, aad_len, tag_out,
					      BENCH_TAG_LEN);
}

void bench_imb_seal_slots(struct bench_imb *m, const struct bench_layout *l)
{
	unsigned i;

	if (m->alg == BENCH_ALG_NULL)
		return;
	for (i = 0; i < l->nslots; i++)
		bench_imb_crypt(m, CC_ENCRYPT, bench_slot_src(l, i),
				bench_slot_src(l, i), l->len, l->iv[i],
				bench_slot_aad(l, i), l->aad_len,
				bench_slot_tag(l, i));
}

/* What the daemon does after decrypting: compare without an early exit. */
static unsigned tag_differs(const uint8_t *a, const uint8_t *b)
{
	unsigned i, d = 0;

	for (i = 0; i < BENCH_TAG_LEN; i++)
		d |= a[i] ^ b[i];
	return d != 0;
}

/* Bursts between clock reads: about 64 KiB of payload, at least one. */
static unsigned bursts_per_check(unsigned burst, uint32_t len)
{
	uint64_t per_burst = (uint64_t)burst * len;

	return per_burst >= 65536 ? 1 : (unsigned)(65536 / per_burst);
}

int bench_imb_run(struct bench_imb *m, const struct bench_layout *l,
		  enum cc_dir dir, unsigned burst, bool touch, unsigned time_ms,
		  struct bench_sample *out)
{
	const unsigned check = bursts_per_check(burst, l->len);
	const bool is_null = m->alg == BENCH_ALG_NULL;
	aes_gcm_enc_dec_t fn = dir == CC_ENCRYPT ? m->enc : m->dec;
	struct gcm_context_data ctx;
	uint8_t tag[BENCH_TAG_LEN];
	unsigned slot = 0, b, i, bad = 0;
	const uint32_t tag_read = dir == CC_ENCRYPT ? l->tag_len : 0;
	uint64_t ops = 0, acc = 0;
	double t0, t, end;

	t0 = bench_now();
	end = t0 + time_ms * 1e-3;
	for (;;) {
		for (b = 0; b < check; b++) {
			for (i = 0; i < burst; i++) {
				uint8_t *src = bench_slot_src(l, slot);
				uint8_t *dst = bench_slot_dst(l, slot);

				if (touch)
					bench_touch_write(src, l->len);
				if (is_null) {
					if (dst != src)
						memcpy(dst, src, l->len);
				} else if (dir == CC_ENCRYPT) {
					fn(m->key, &ctx, dst, src, l->len,
					   l->iv[slot], bench_slot_aad(l, slot),
					   l->aad_len, bench_slot_tag(l, slot),
					   BENCH_TAG_LEN);
				} else {
					fn(m->key, &ctx, dst, src, l->len,
					   l->iv[slot], bench_slot_aad(l, slot),
					   l->aad_len, tag, BENCH_TAG_LEN);
					bad += tag_differs(
						tag, bench_slot_tag(l, slot));
				}
				if (touch)
					acc ^= bench_touch_read(dst, l->len) ^
					       bench_touch_read(
						       bench_slot_tag(l, slot),
						       tag_read);
				if (++slot == l->nslots)
					slot = 0;
			}
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
		fprintf(stderr,
			"cryptod-bench: in-process decrypt: %u tags did not "
			"verify\n",
			bad);
		return -EBADMSG;
	}
	return 0;
}
