/* SPDX-License-Identifier: MIT */
/*
 * intel-ipsec-mb in this process, the way the daemon's aesni engine uses
 * it: the direct API for GCM and GMAC (one call per op), the job API for
 * CBC, CTR, ECB, the ESP-style CBC/CTR+HMAC, CCM, ChaCha20-Poly1305 and
 * the authentication-only HMAC, SHA, CMAC and XCBC-MAC (jobs submitted one
 * by one, the manager filling its lanes, a flush at the end of each burst:
 * what DPDK's aesni_mb PMD does per dequeue and what a worker does per
 * pass). ipsec-mb 1.3 has no XTS, no CCM or CMAC with 192-bit keys, and
 * its ChaCha20 takes no initial block counter: OpenSSL is their twin.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-ipsec-mb.h>

#include <cryptod/ring_abi.h>

#include "bench.h"

enum {
	IMB_KEY_SCHED = 16 * 15, /* AES-256: 15 round keys */
	IMB_HMAC_STATE = 64,	 /* SHA-512 state; SHA1 uses 20 */
	IMB_HMAC_BLOCK = 128,	 /* SHA-384/512; the others 64 */
};

/* Key material, 64-byte aligned (gcm_key_data wants it); wiped on free. */
struct imb_keys {
	_Alignas(64) struct gcm_key_data gcm;
	_Alignas(16) uint8_t enc[IMB_KEY_SCHED];
	_Alignas(16) uint8_t dec[IMB_KEY_SCHED];
	_Alignas(16) uint8_t ipad[IMB_HMAC_STATE];
	_Alignas(16) uint8_t opad[IMB_HMAC_STATE];
	_Alignas(16) uint8_t skey1[16]; /* CMAC subkeys */
	_Alignas(16) uint8_t skey2[16];
	_Alignas(16) uint32_t xcbc_k1[4 * 11]; /* XCBC: K1 expanded, K2, K3 */
	_Alignas(16) uint8_t xcbc_k2[16];
	_Alignas(16) uint8_t xcbc_k3[16];
	_Alignas(16) uint8_t raw[32]; /* ChaCha20-Poly1305's, ZUC's key */
};

struct imb_ref {
	IMB_MGR *mgr; /* owned */
	const struct bench_alg *a;
	struct imb_keys *k; /* owned */
	bool direct;	    /* GCM/GMAC: the direct API */
	bool zuc;	    /* ZUC-EEA3: IMB_ZUC_EEA3_N_BUFFER per burst */
	aes_gcm_enc_dec_t gcm_enc, gcm_dec;
	aes_gmac_init_t gmac_init;
	aes_gmac_update_t gmac_update;
	aes_gmac_finalize_t gmac_final;
	IMB_CIPHER_MODE mode;
	IMB_HASH_ALG hash;
	bool auth_only; /* MACs, digests: no cipher, the tag over the data */
	/* Decrypt: the tag each job of a burst computes, to compare. */
	uint8_t (*scratch)[BENCH_TAG_MAX]; /* BENCH_MAX_BURST; owned */
	/* CTR: the counter block after a 32-bit wrap, per op of a burst. */
	uint8_t (*ctr_iv)[BENCH_IV_MAX]; /* BENCH_MAX_BURST; owned */
	bool reported;			 /* an engine error was printed */
};

static IMB_ARCH imb_arch = IMB_ARCH_NONE;

const char *bench_imb_version(void)
{
	return imb_get_version_str();
}

const char *bench_imb_arch_name(void)
{
	IMB_MGR *mgr;

	if (imb_arch == IMB_ARCH_NONE) {
		mgr = alloc_mb_mgr(0);
		if (mgr) {
			init_mb_mgr_auto(mgr, &imb_arch);
			free_mb_mgr(mgr);
		}
	}
	switch (imb_arch) {
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

static void imb_destroy(void *priv)
{
	struct imb_ref *m = priv;

	if (!m)
		return;
	if (m->mgr)
		free_mb_mgr(m->mgr);
	m->mgr = NULL;
	if (m->k)
		explicit_bzero(m->k, sizeof(*m->k));
	free(m->k);
	m->k = NULL;
	free(m->scratch);
	m->scratch = NULL;
	free(m->ctr_iv);
	m->ctr_iv = NULL;
	free(m);
}

/* HMAC's inner and outer states after one block of key ^ pad, which the
 * job API takes instead of the key. */
static void hmac_precompute(struct imb_ref *m, const uint8_t *auth_key,
			    unsigned key_len)
{
	const bool big = m->hash == IMB_AUTH_HMAC_SHA_384 ||
			 m->hash == IMB_AUTH_HMAC_SHA_512;
	const unsigned block = big ? 128 : 64;
	uint8_t blk[IMB_HMAC_BLOCK];
	unsigned i, pass;

	for (pass = 0; pass < 2; pass++) {
		const uint8_t pad = pass ? 0x5c : 0x36;
		uint8_t *out = pass ? m->k->opad : m->k->ipad;

		memset(blk, 0, sizeof(blk));
		memcpy(blk, auth_key, key_len); /* <= one block here */
		for (i = 0; i < block; i++)
			blk[i] ^= pad;
		switch (m->hash) {
		case IMB_AUTH_HMAC_SHA_1:
			IMB_SHA1_ONE_BLOCK(m->mgr, blk, out);
			break;
		case IMB_AUTH_HMAC_SHA_224:
			IMB_SHA224_ONE_BLOCK(m->mgr, blk, out);
			break;
		case IMB_AUTH_HMAC_SHA_256:
			IMB_SHA256_ONE_BLOCK(m->mgr, blk, out);
			break;
		case IMB_AUTH_HMAC_SHA_384:
			IMB_SHA384_ONE_BLOCK(m->mgr, blk, out);
			break;
		default:
			IMB_SHA512_ONE_BLOCK(m->mgr, blk, out);
			break;
		}
	}
	explicit_bzero(blk, sizeof(blk));
}

/* The job API's hash for an algorithm with one (HMAC of authenc or of
 * an auth-only op, digests, CMAC, XCBC), else IMB_AUTH_NULL. */
static IMB_HASH_ALG imb_hash_of(const struct bench_alg *a)
{
	/* by crd_alg_sha_idx() */
	static const IMB_HASH_ALG hmac[CRD_SHA_N] = {
		IMB_AUTH_HMAC_SHA_1,   IMB_AUTH_HMAC_SHA_224,
		IMB_AUTH_HMAC_SHA_256, IMB_AUTH_HMAC_SHA_384,
		IMB_AUTH_HMAC_SHA_512,
	};
	static const IMB_HASH_ALG sha[CRD_SHA_N] = {
		IMB_AUTH_SHA_1,	  IMB_AUTH_SHA_224, IMB_AUTH_SHA_256,
		IMB_AUTH_SHA_384, IMB_AUTH_SHA_512,
	};
	int i = crd_alg_sha_idx(a->alg);

	if (i >= 0)
		return cc_alg_kind(a->alg) == CC_KIND_HASH ? sha[i] : hmac[i];
	switch (a->alg) {
	case CC_ALG_AES_CMAC:
		return a->key_len == 16 ? IMB_AUTH_AES_CMAC
					: IMB_AUTH_AES_CMAC_256;
	case CC_ALG_AES_XCBC_MAC:
		return IMB_AUTH_AES_XCBC;
	case CC_ALG_AES_CCM:
		return IMB_AUTH_AES_CCM;
	case CC_ALG_CHACHA20_POLY1305:
		return IMB_AUTH_CHACHA20_POLY1305;
	default:
		return IMB_AUTH_NULL;
	}
}

static bool imb_is_hmac(IMB_HASH_ALG h)
{
	return h >= IMB_AUTH_HMAC_SHA_1 && h <= IMB_AUTH_HMAC_SHA_512;
}

static void gcm_setup(struct imb_ref *m, const uint8_t *key)
{
	IMB_MGR *mgr = m->mgr;

	switch (m->a->key_len) {
	case 16:
		IMB_AES128_GCM_PRE(mgr, key, &m->k->gcm);
		m->gcm_enc = mgr->gcm128_enc;
		m->gcm_dec = mgr->gcm128_dec;
		m->gmac_init = mgr->gmac128_init;
		m->gmac_update = mgr->gmac128_update;
		m->gmac_final = mgr->gmac128_finalize;
		break;
	case 24:
		IMB_AES192_GCM_PRE(mgr, key, &m->k->gcm);
		m->gcm_enc = mgr->gcm192_enc;
		m->gcm_dec = mgr->gcm192_dec;
		m->gmac_init = mgr->gmac192_init;
		m->gmac_update = mgr->gmac192_update;
		m->gmac_final = mgr->gmac192_finalize;
		break;
	default:
		IMB_AES256_GCM_PRE(mgr, key, &m->k->gcm);
		m->gcm_enc = mgr->gcm256_enc;
		m->gcm_dec = mgr->gcm256_dec;
		m->gmac_init = mgr->gmac256_init;
		m->gmac_update = mgr->gmac256_update;
		m->gmac_final = mgr->gmac256_finalize;
		break;
	}
}

static void keyexp(struct imb_ref *m, const uint8_t *key)
{
	switch (m->a->key_len) {
	case 16:
		IMB_AES_KEYEXP_128(m->mgr, key, m->k->enc, m->k->dec);
		break;
	case 24:
		IMB_AES_KEYEXP_192(m->mgr, key, m->k->enc, m->k->dec);
		break;
	default:
		IMB_AES_KEYEXP_256(m->mgr, key, m->k->enc, m->k->dec);
		break;
	}
}

static int imb_create(const struct bench_alg *a, const uint8_t *key,
		      const uint8_t *auth_key, void **priv, char *desc,
		      size_t desc_len)
{
	struct imb_ref *m;
	int err;

	switch (a->alg) {
	case CC_ALG_AES_GCM:
	case CC_ALG_AES_GMAC:
	case CC_ALG_AES_CBC:
	case CC_ALG_AES_CBC_NULL:
	case CC_ALG_AES_CTR:
	case CC_ALG_AES_ECB:
	case CC_ALG_CHACHA20_POLY1305:
	case CC_ALG_AES_XCBC_MAC:
	case CC_ALG_ZUC_EEA3:
		break;
	case CC_ALG_AES_CCM:
	case CC_ALG_AES_CMAC:
		if (a->key_len == 24)
			return -ENOTSUP; /* ipsec-mb 1.3: 128 and 256 only */
		break;
	default:
		if (imb_hash_of(a) == IMB_AUTH_NULL)
			return -ENOTSUP; /* XTS, ChaCha20 */
		break;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->a = a;
	m->k = aligned_alloc(64, (sizeof(*m->k) + 63) & ~(size_t)63);
	m->scratch = calloc(BENCH_MAX_BURST, sizeof(*m->scratch));
	m->ctr_iv = calloc(BENCH_MAX_BURST, sizeof(*m->ctr_iv));
	m->mgr = alloc_mb_mgr(0);
	if (!m->k || !m->scratch || !m->ctr_iv || !m->mgr) {
		imb_destroy(m);
		return -ENOMEM;
	}
	memset(m->k, 0, sizeof(*m->k));
	init_mb_mgr_auto(m->mgr, &imb_arch);
	err = imb_get_errno(m->mgr);
	if (err) {
		fprintf(stderr, "cryptod-bench: ipsec-mb init: %s\n",
			imb_get_strerror(err));
		imb_destroy(m);
		return -ENODEV;
	}

	m->hash = imb_hash_of(a);
	m->auth_only = cc_alg_kind(a->alg) == CC_KIND_MAC ||
		       cc_alg_kind(a->alg) == CC_KIND_HASH;
	switch (a->alg) {
	case CC_ALG_AES_GCM:
	case CC_ALG_AES_GMAC:
		m->direct = true;
		gcm_setup(m, key);
		break;
	case CC_ALG_AES_CTR:
	case CC_ALG_AES_CTR_HMAC_SHA1:
	case CC_ALG_AES_CTR_HMAC_SHA256:
		m->mode = IMB_CIPHER_CNTR;
		break;
	case CC_ALG_AES_ECB:
		m->mode = IMB_CIPHER_ECB;
		break;
	case CC_ALG_AES_CCM:
		m->mode = IMB_CIPHER_CCM;
		break;
	case CC_ALG_CHACHA20_POLY1305:
		m->mode = IMB_CIPHER_CHACHA20_POLY1305;
		memcpy(m->k->raw, key, 32);
		break;
	case CC_ALG_ZUC_EEA3: /* as the engine: the N-buffer call */
		m->zuc = true;
		memcpy(m->k->raw, key, 16);
		break;
	default:
		m->mode = m->auth_only ? IMB_CIPHER_NULL : IMB_CIPHER_CBC;
		break;
	}
	/* AES round keys: the ciphers, and CMAC (not XCBC: its own) */
	if (!m->direct && !m->zuc && a->alg != CC_ALG_CHACHA20_POLY1305 &&
	    (!m->auth_only || a->alg == CC_ALG_AES_CMAC))
		keyexp(m, key);
	if (imb_is_hmac(m->hash))
		/* authenc's HMAC key is auth_key; an HMAC op's, the key */
		hmac_precompute(m, m->auth_only ? key : auth_key,
				m->auth_only ? a->key_len : a->auth_key_len);
	if (a->alg == CC_ALG_AES_CMAC && a->key_len == 16)
		IMB_AES_CMAC_SUBKEY_GEN_128(m->mgr, m->k->enc, m->k->skey1,
					    m->k->skey2);
	else if (a->alg == CC_ALG_AES_CMAC)
		IMB_AES_CMAC_SUBKEY_GEN_256(m->mgr, m->k->enc, m->k->skey1,
					    m->k->skey2);
	if (a->alg == CC_ALG_AES_XCBC_MAC)
		IMB_AES_XCBC_KEYEXP(m->mgr, key, m->k->xcbc_k1, m->k->xcbc_k2,
				    m->k->xcbc_k3);
	snprintf(desc, desc_len, "intel-ipsec-mb %s %s (%s)",
		 imb_get_version_str(),
		 m->zuc			     ? "ZUC-EEA3 N-buffer API"
		 : !m->direct		     ? "job API, multi-buffer"
		 : a->alg == CC_ALG_AES_GMAC ? "direct GMAC API"
					     : "direct GCM API",
		 bench_imb_arch_name());
	*priv = m;
	return 0;
}

static int direct_burst(struct imb_ref *m, const struct bench_layout *l,
			enum cc_dir dir, unsigned first, unsigned n)
{
	const struct gcm_key_data *key = &m->k->gcm;
	struct gcm_context_data ctx;
	uint8_t tag[BENCH_TAG_MAX];
	unsigned i, bad = 0;

	for (i = first; i < first + n; i++) {
		uint8_t *out = dir == CC_ENCRYPT ? bench_slot_tag(l, i) : tag;

		if (l->tag_only) {
			m->gmac_init(key, &ctx, l->iv[i], l->iv_len);
			m->gmac_update(key, &ctx, bench_slot_src(l, i), l->len);
			m->gmac_final(key, &ctx, out, l->tag_len);
		} else {
			(dir == CC_ENCRYPT ? m->gcm_enc : m->gcm_dec)(
				key, &ctx, bench_slot_dst(l, i),
				bench_slot_src(l, i), l->len, l->iv[i],
				bench_slot_aad(l, i), l->aad_len, out,
				l->tag_len);
		}
		if (dir == CC_DECRYPT)
			bad += bench_tag_differs(tag, bench_slot_tag(l, i),
						 l->tag_len);
	}
	return (int)bad;
}

static void job_fill(const struct imb_ref *m, IMB_JOB *job,
		     const struct bench_layout *l, enum cc_dir dir, unsigned i,
		     uint8_t *scratch)
{
	const bool enc = dir == CC_ENCRYPT;
	uint8_t *aad = bench_slot_aad(l, i), *dst = bench_slot_dst(l, i);

	job->cipher_mode = m->mode;
	job->cipher_direction = enc ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT;
	/* ESP: encrypt-then-MAC, verify-then-decrypt. */
	job->chain_order = enc ? IMB_ORDER_CIPHER_HASH : IMB_ORDER_HASH_CIPHER;
	job->hash_alg = m->hash;
	job->enc_keys = m->k->enc;
	job->dec_keys = m->k->dec;
	job->key_len_in_bytes = m->a->key_len;
	/* The slot is [aad | payload]: the cipher starts after the AAD. */
	job->src = aad;
	job->dst = dst;
	job->cipher_start_src_offset_in_bytes = l->aad_len;
	job->msg_len_to_cipher_in_bytes = l->len;
	job->iv = l->iv_len ? l->iv[i] : NULL;
	job->iv_len_in_bytes = l->iv_len;
	job->user_data = bench_slot_tag(l, i);
	job->user_data2 = scratch;
	if (m->hash == IMB_AUTH_NULL) {
		job->hash_start_src_offset_in_bytes = 0;
		job->msg_len_to_hash_in_bytes = 0;
		job->auth_tag_output = NULL;
		job->auth_tag_output_len_in_bytes = 0;
		return;
	}
	job->auth_tag_output = enc ? bench_slot_tag(l, i) : scratch;
	job->auth_tag_output_len_in_bytes = l->tag_len;
	if (m->auth_only || m->mode == IMB_CIPHER_CCM ||
	    m->mode == IMB_CIPHER_CHACHA20_POLY1305) {
		/* The tag covers the payload only (the AAD apart, if any). */
		job->src = bench_slot_src(l, i);
		job->cipher_start_src_offset_in_bytes = 0;
		job->hash_start_src_offset_in_bytes = 0;
		job->msg_len_to_hash_in_bytes = l->len;
	}
	switch (m->mode) {
	case IMB_CIPHER_CCM: /* the CBC-MAC is over the plaintext */
		job->chain_order =
			enc ? IMB_ORDER_HASH_CIPHER : IMB_ORDER_CIPHER_HASH;
		job->u.CCM.aad = aad;
		job->u.CCM.aad_len_in_bytes = l->aad_len;
		return;
	case IMB_CIPHER_CHACHA20_POLY1305:
		job->enc_keys = job->dec_keys = m->k->raw;
		job->u.CHACHA20_POLY1305.aad = aad;
		job->u.CHACHA20_POLY1305.aad_len_in_bytes = l->aad_len;
		return;
	default:
		break;
	}
	if (m->hash == IMB_AUTH_AES_CMAC || m->hash == IMB_AUTH_AES_CMAC_256) {
		job->u.CMAC._key_expanded = m->k->enc;
		job->u.CMAC._skey1 = m->k->skey1;
		job->u.CMAC._skey2 = m->k->skey2;
		return;
	}
	if (m->hash == IMB_AUTH_AES_XCBC) {
		job->u.XCBC._k1_expanded = m->k->xcbc_k1;
		job->u.XCBC._k2 = m->k->xcbc_k2;
		job->u.XCBC._k3 = m->k->xcbc_k3;
		return;
	}
	if (m->auth_only) {
		job->u.HMAC._hashed_auth_key_xor_ipad = m->k->ipad;
		job->u.HMAC._hashed_auth_key_xor_opad = m->k->opad;
		return;
	}
	/*
	 * The MAC covers AAD || ciphertext. Encrypting out of place, that is
	 * the destination's [aad copy | payload]; the library only takes an
	 * offset from src, so it gets the distance between the two (modulo
	 * 2^64, as DPDK's aesni_mb PMD does).
	 */
	job->hash_start_src_offset_in_bytes =
		enc ? (uint64_t)(uintptr_t)(dst - l->aad_len) -
				(uint64_t)(uintptr_t)aad
		    : 0;
	job->msg_len_to_hash_in_bytes = (uint64_t)l->aad_len + l->len;
	job->auth_tag_output = enc ? bench_slot_tag(l, i) : scratch;
	job->auth_tag_output_len_in_bytes = l->tag_len;
	job->u.HMAC._hashed_auth_key_xor_ipad = m->k->ipad;
	job->u.HMAC._hashed_auth_key_xor_opad = m->k->opad;
}

/* A completed job: -EIO if the library refused it, else 1 when a decrypt
 * tag did not verify. */
static int job_done(struct imb_ref *m, const IMB_JOB *job, enum cc_dir dir)
{
	if (job->status != IMB_STATUS_COMPLETED) {
		if (!m->reported)
			fprintf(stderr,
				"cryptod-bench: ipsec-mb job failed: status "
				"%d: %s\n",
				(int)job->status,
				imb_get_strerror(imb_get_errno(m->mgr)));
		m->reported = true;
		return -EIO;
	}
	if (dir == CC_DECRYPT && m->hash != IMB_AUTH_NULL)
		return (int)bench_tag_differs(job->user_data2, job->user_data,
					      m->a->tag_len);
	return 0;
}

/* Take a completed job (or none) into the burst's tallies. */
static void job_reap(struct imb_ref *m, const IMB_JOB *job, enum cc_dir dir,
		     int *bad, int *err)
{
	int rc;

	if (!job)
		return;
	rc = job_done(m, job, dir);
	if (rc < 0)
		*err = rc;
	else
		*bad += rc;
}

/*
 * CTR: ipsec-mb increments only the low 32 bits of a 16-byte counter
 * block; docs/algorithms.md promises a 128-bit increment (OpenSSL's and
 * the kernel's). An op whose low word wraps runs as two jobs, the second
 * from the counter block after the wrap, as the daemon's engine does.
 * Returns the bytes before the wrap, or len when there is none.
 */
static uint32_t ctr_split(const struct bench_layout *l, unsigned i,
			  uint8_t *iv2)
{
	const uint8_t *iv = l->iv[i];
	uint32_t lo = (uint32_t)iv[12] << 24 | (uint32_t)iv[13] << 16 |
		      (uint32_t)iv[14] << 8 | iv[15];
	uint64_t blocks = ((uint64_t)l->len + 15) / 16;
	uint64_t to_wrap = (uint64_t)UINT32_MAX - lo + 1;
	int k;

	if (blocks <= to_wrap)
		return l->len;
	memcpy(iv2, iv, 16);
	memset(iv2 + 12, 0, 4);
	for (k = 11; k >= 0 && ++iv2[k] == 0; k--)
		;		       /* carry into the upper 96 bits */
	return (uint32_t)to_wrap * 16; /* < len <= 16 MiB */
}

/*
 * ipsec-mb's job API refuses cipher lengths from 64 KiB up (and its
 * unchecked submit gets CBC wrong there): longer ops (dm-crypt's 1 MiB
 * chunks) run as a chain of jobs, each to completion, as the daemon's
 * engine does; CBC chains through the last ciphertext block of the piece
 * before. CBC and ECB without a digest only.
 */
enum { IMB_PIECE_MAX = 65520 };

static int long_op(struct imb_ref *m, const struct bench_layout *l,
		   enum cc_dir dir, unsigned i, int *bad, int *err)
{
	const bool cbc = m->mode == IMB_CIPHER_CBC;
	const bool cbc_dec = cbc && dir == CC_DECRYPT;
	const uint8_t *src = bench_slot_src(l, i);
	uint8_t *dst = bench_slot_dst(l, i);
	uint8_t iv[16] = { 0 }, next[16];
	IMB_MGR *mgr = m->mgr;
	IMB_JOB *job;
	uint32_t off, n;

	if (m->hash != IMB_AUTH_NULL || (!cbc && m->mode != IMB_CIPHER_ECB)) {
		bench_err("%s: ops over %u B: no in-process reference\n",
			  m->a->name, IMB_PIECE_MAX);
		return -ENOTSUP;
	}
	while ((job = IMB_FLUSH_JOB(mgr)))
		job_reap(m, job, dir, bad, err);
	if (cbc)
		memcpy(iv, l->iv[i], sizeof(iv));
	for (off = 0; off < l->len; off += n) {
		n = l->len - off < IMB_PIECE_MAX ? l->len - off : IMB_PIECE_MAX;
		if (cbc_dec) /* the next IV, before in place overwrites it */
			memcpy(next, src + off + n - 16, 16);
		job = IMB_GET_NEXT_JOB(mgr);
		job_fill(m, job, l, dir, i, m->scratch[0]);
		job->cipher_start_src_offset_in_bytes = l->aad_len + off;
		job->dst = dst + off;
		job->msg_len_to_cipher_in_bytes = n;
		job->iv = cbc ? iv : NULL;
		job_reap(m, IMB_SUBMIT_JOB(mgr), dir, bad, err);
		while ((job = IMB_FLUSH_JOB(mgr)))
			job_reap(m, job, dir, bad, err);
		if (cbc)
			memcpy(iv, cbc_dec ? next : dst + off + n - 16, 16);
	}
	return 0;
}

static int job_burst(struct imb_ref *m, const struct bench_layout *l,
		     enum cc_dir dir, unsigned first, unsigned n, bool checked)
{
	IMB_MGR *mgr = m->mgr;
	IMB_JOB *job;
	unsigned i, at;
	uint32_t part;
	int bad = 0, err = 0;

	for (i = 0; i < n; i++) {
		at = i % BENCH_MAX_BURST;
		/* Per-op scratch is reused: what used it must be done. */
		if (i && !at)
			while ((job = IMB_FLUSH_JOB(mgr)))
				job_reap(m, job, dir, &bad, &err);
		if (l->len > IMB_PIECE_MAX) {
			int rc = long_op(m, l, dir, first + i, &bad, &err);

			if (rc < 0)
				return rc;
			continue;
		}
		part = l->len;
		/* CTR + HMAC: the layout's IVs never wrap (the MAC spans
		 * the whole op) */
		if (m->mode == IMB_CIPHER_CNTR && m->hash == IMB_AUTH_NULL)
			part = ctr_split(l, first + i, m->ctr_iv[at]);
		job = IMB_GET_NEXT_JOB(mgr);
		job_fill(m, job, l, dir, first + i, m->scratch[at]);
		job->msg_len_to_cipher_in_bytes = m->auth_only ? 0 : part;
		job = checked ? IMB_SUBMIT_JOB(mgr)
			      : IMB_SUBMIT_JOB_NOCHECK(mgr);
		job_reap(m, job, dir, &bad, &err);
		if (part == l->len)
			continue;
		/* CTR after the wrap: the rest, from the next counter. */
		job = IMB_GET_NEXT_JOB(mgr);
		job_fill(m, job, l, dir, first + i, m->scratch[at]);
		job->cipher_start_src_offset_in_bytes += part;
		job->dst += part;
		job->msg_len_to_cipher_in_bytes = l->len - part;
		job->iv = m->ctr_iv[at];
		job = checked ? IMB_SUBMIT_JOB(mgr)
			      : IMB_SUBMIT_JOB_NOCHECK(mgr);
		job_reap(m, job, dir, &bad, &err);
	}
	/* Every op of the burst completes before the burst does. */
	while ((job = IMB_FLUSH_JOB(mgr)))
		job_reap(m, job, dir, &bad, &err);
	return err ? err : bad;
}

static int imb_burst(void *priv, const struct bench_layout *l, enum cc_dir dir,
		     unsigned first, unsigned n, bool checked)
{
	struct imb_ref *m = priv;

	if (m->zuc) {
		/* whole bytes (the bench's lengths are len * 8 bits), the
		 * burst through the N-buffer call, as the engine does */
		const void *key[BENCH_MAX_BURST], *iv[BENCH_MAX_BURST],
			*src[BENCH_MAX_BURST];
		void *dst[BENCH_MAX_BURST];
		uint32_t len[BENCH_MAX_BURST];
		for (unsigned done = 0; done < n;) {
			unsigned k = n - done < BENCH_MAX_BURST
					     ? n - done
					     : BENCH_MAX_BURST;
			for (unsigned j = 0; j < k; j++) {
				unsigned i = first + done + j;
				key[j] = m->k->raw;
				iv[j] = l->iv[i];
				src[j] = bench_slot_src(l, i);
				dst[j] = bench_slot_dst(l, i);
				len[j] = l->len;
			}
			IMB_ZUC_EEA3_N_BUFFER(m->mgr, key, iv, src, dst, len,
					      k);
			done += k;
		}
		return 0;
	}
	return m->direct ? direct_burst(m, l, dir, first, n)
			 : job_burst(m, l, dir, first, n, checked);
}

const struct bench_ref_ops bench_ref_imb_ops = {
	.create = imb_create,
	.destroy = imb_destroy,
	.burst = imb_burst,
};
