/* SPDX-License-Identifier: MIT */
/*
 * aesni: intel-ipsec-mb. One IMB_MGR per worker (managers are not
 * thread-safe).
 *
 * - GCM and GMAC through the direct API, the fastest single-buffer path
 *   (DESIGN.md: 23.9 Mops at 64 B vs 8.4 for the job API); IVs of other
 *   than 12 bytes (1..128) through its variable-IV calls (aesni_aead.c).
 * - CBC, CTR, ECB and CBC/CTR+HMAC-SHA1/256/384/512 (authenc, the HMAC
 *   pads in aesni_hmac.c) through the job API: a burst's jobs are all
 *   submitted before any is flushed, so CBC encryption runs multi-buffer
 *   (several independent buffers in the lanes of one vector unit).
 *
 * ipsec-mb returns computed tags; checking them is ours to do, in
 * constant time, and a forged message releases no plaintext.
 */
#include "auth.h"
#include "aesni_wireless.h"
#include "aead.h"
#include "aesni_hmac.h"
#include "aesni.h"
#include "stream.h"
#include "engine.h"
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-ipsec-mb.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cryptod/ring_abi.h>

/* Session key material: struct aesni_key (aesni.h). */

static const struct alg_cap aesni_caps[] = {
	/* IVs of other than 12 bytes: aesni_gcm_var_iv (aesni_aead.c) */
	CAP_AES_GCM(CRD_ALG_AES_GCM, 1, CRD_IV_ARENA_MAX, CRD_AAD_MAX, 1),
	CAP_AES_GCM(CRD_ALG_AES_GMAC, 1, CRD_IV_ARENA_MAX, 0, 0),
	CAP_AES_MODE(CRD_ALG_AES_CBC, 16, 16),
	CAP_AES_MODE(CRD_ALG_AES_CTR, 16, 1),
	CAP_AES_MODE(CRD_ALG_AES_ECB, 0, 16),
	CAP_AES_AUTHENC_ROWS,
	CAP_AES_CBC_NULL,
	/* authentication only: aesni_auth.c */
	CAP_HMACS,
	CAP_SHAS,
	CAP_CMAC(16, 32, 16),
	CAP_XCBC(12),
	/* 3GPP: aesni_wireless.c */
	AESNI_WIRELESS_CAPS,
	/* all of CCM: what ipsec-mb 1.3 cannot take (aesni_ccm_fits) runs
	 * on EVP (aesni_aead.c) */
	CAP_AES_CCM(8, CRD_AAD_MAX, CRD_OP_MAX_LEN, 1),
	CAP_CHACHA20_POLY1305(1),
};

/* Manager for key expansion on the control thread (session_init). */
static IMB_MGR *ctl_mgr;
/* The code ipsec-mb picked (every manager picks the same), by ctl_mgr's */
static IMB_ARCH ctl_arch;

/*
 * The code ipsec-mb runs: its own pick (init_mb_mgr_auto), or the one
 * CRYPTOD_IMB_ARCH names (sse, avx, avx2, avx512), which is how a
 * machine with AVX-512 measures and tests what one without it runs (a
 * Zen 3's avx2 code). -EINVAL: the name is not one of those, or names
 * code above the library's own pick, which this CPU cannot run.
 */
static const struct {
	const char *name;
	void (*init)(IMB_MGR *);
	IMB_ARCH arch;
} aesni_archs[] = {
	{ "sse", init_mb_mgr_sse, IMB_ARCH_SSE },
	{ "avx", init_mb_mgr_avx, IMB_ARCH_AVX },
	{ "avx2", init_mb_mgr_avx2, IMB_ARCH_AVX2 },
	{ "avx512", init_mb_mgr_avx512, IMB_ARCH_AVX512 },
};

/* CRYPTOD_IMB_ARCH's value, NULL when unset or empty */
static const char *aesni_arch_wanted(void)
{
	const char *want = getenv("CRYPTOD_IMB_ARCH");
	return want && *want ? want : NULL;
}

static int aesni_arch_init(IMB_MGR *m, IMB_ARCH *arch)
{
	init_mb_mgr_auto(m, arch);
	const char *want = aesni_arch_wanted();
	if (!want)
		return 0;
	for (unsigned i = 0; i < sizeof(aesni_archs) / sizeof(aesni_archs[0]);
	     i++) {
		if (strcmp(want, aesni_archs[i].name))
			continue;
		if (aesni_archs[i].arch > *arch)
			return -EINVAL;
		aesni_archs[i].init(m);
		*arch = aesni_archs[i].arch;
		return 0;
	}
	return -EINVAL;
}

static IMB_MGR *aesni_mgr_new(IMB_ARCH *arch)
{
	IMB_MGR *m = alloc_mb_mgr(0);
	if (!m)
		return NULL;
	if (aesni_arch_init(m, arch)) {
		free_mb_mgr(m);
		return NULL;
	}
	if (*arch < IMB_ARCH_SSE || imb_get_errno(m)) {
		free_mb_mgr(m);
		return NULL;
	}
	return m;
}

static int aesni_probe(const struct engine *e, char *why, size_t len)
{
	if (!ctl_mgr)
		ctl_mgr = aesni_mgr_new(&ctl_arch);
	const char *want = aesni_arch_wanted();
	if (!ctl_mgr) {
		/* The value itself stays out of the log: any bytes at all. */
		snprintf(why, len, "%s",
			 want ? "CRYPTOD_IMB_ARCH names code intel-ipsec-mb "
				"has not, or this CPU cannot run (sse, avx, "
				"avx2 or avx512)"
			      : "intel-ipsec-mb found no AES-NI on this CPU");
		return -ENODEV;
	}
	/* OpenSSL's part of the fallbacks, fetched once for all workers */
	if (aesni_aead_probe(ctl_arch >= IMB_ARCH_AVX512) ||
	    aesni_auth_probe()) {
		aesni_aead_fini();
		snprintf(why, len, "OpenSSL lacks CCM, HMAC or CMAC");
		return -ENODEV;
	}
	/* want named code the manager took: one of aesni_archs' names */
	char told[64] = "", chacha[80] = "";
	if (want)
		snprintf(told, sizeof(told), ", its %s code (CRYPTOD_IMB_ARCH)",
			 want);
	uint32_t from = aesni_chacha_evp_from();
	if (from != UINT32_MAX)
		snprintf(chacha, sizeof(chacha),
			 "; ChaCha20-Poly1305 from %u bytes on OpenSSL's code",
			 from);
	snprintf(why, len, "intel-ipsec-mb %s%s%s", imb_get_version_str(), told,
		 chacha);
	return 0;
}

static void aesni_fini(void)
{
	aesni_aead_fini();
	aesni_auth_fini();
	if (ctl_mgr)
		free_mb_mgr(ctl_mgr);
	ctl_mgr = NULL;
}

/* Is alg's cipher CTR (alone or under an HMAC)? */
static int aesni_ctr_mode(unsigned alg)
{
	return alg == CRD_ALG_AES_CTR ||
	       crd_alg_cipher_half(alg) == CRD_ALG_AES_CTR;
}

static int aesni_session_init(struct session *s, void *wctx, const uint8_t *key,
			      size_t key_len, const uint8_t *auth_key,
			      size_t auth_key_len)
{
	IMB_MGR *m = wctx ? wctx : ctl_mgr;
	struct aesni_key *k = (struct aesni_key *)s->key;

	if (crd_alg_bit_len(s->alg)) /* 3GPP: aesni_wireless.c */
		return aesni_wireless_init(m, s, key, key_len);
	if (auth_alg(s->alg))
		return aesni_auth_session_init(s, m, key, key_len);
	if (s->alg == CRD_ALG_AES_GCM || s->alg == CRD_ALG_AES_GMAC) {
		if (key_len == 16)
			IMB_AES128_GCM_PRE(m, key, &k->gcm);
		else if (key_len == 24)
			IMB_AES192_GCM_PRE(m, key, &k->gcm);
		else
			IMB_AES256_GCM_PRE(m, key, &k->gcm);
		return 0;
	}
	if (s->alg == CRD_ALG_CHACHA20_POLY1305) {
		memcpy(k->chacha, key, sizeof(k->chacha));
		return 0;
	}
	if (key_len == 16)
		IMB_AES_KEYEXP_128(m, key, k->blk.enc, k->blk.dec);
	else if (key_len == 24)
		IMB_AES_KEYEXP_192(m, key, k->blk.enc, k->blk.dec);
	else
		IMB_AES_KEYEXP_256(m, key, k->blk.enc, k->blk.dec);
	const struct aesni_sha *h = aesni_sha_of(s->alg);
	if (h) { /* authenc */
		aesni_hmac_pads(m, h, auth_key, auth_key_len, k->blk.ipad,
				k->blk.opad);
		aesni_hmac_empty(m, h, auth_key, auth_key_len,
				 k->blk.empty_mac);
		memcpy(k->blk.auth_raw, auth_key, auth_key_len);
		k->blk.auth_len = auth_key_len;
	}
	if (s->alg == CRD_ALG_AES_CCM) { /* for aesni_ccm_evp() */
		memcpy(k->blk.auth_raw, key, key_len);
		k->blk.auth_len = key_len;
	}
	return 0;
}

static void *aesni_worker_init(const struct engine *e)
{
	IMB_ARCH arch;
	return aesni_mgr_new(&arch);
}

static void aesni_worker_fini(void *wctx)
{
	if (wctx)
		free_mb_mgr(wctx);
}

/* ---- GCM / GMAC: direct API ---- */

static void aesni_gcm_one(IMB_MGR *m, struct engine_op *op)
{
	const struct aesni_key *k = (const struct aesni_key *)op->sess->key;
	struct gcm_context_data ctx;
	int gmac = op->sess->alg == CRD_ALG_AES_GMAC;
	int enc = op->op == CRD_OP_ENCRYPT || gmac;
	aes_gcm_enc_dec_t fn;

	/* Other IV lengths off the fast path */
	if (__builtin_expect(op->iv_len != 12, 0)) {
		aesni_gcm_var_iv(m, &k->gcm, op);
		return;
	}

	switch (op->sess->key_len) {
	case 16:
		fn = enc ? m->gcm128_enc : m->gcm128_dec;
		break;
	case 24:
		fn = enc ? m->gcm192_enc : m->gcm192_dec;
		break;
	default:
		fn = enc ? m->gcm256_enc : m->gcm256_dec;
		break;
	}

	/* GMAC is GCM with no plaintext and the data as AAD. */
	const uint8_t *aad = gmac ? op->src : op->aad;
	uint64_t aad_len = gmac ? op->len : op->aad_len;
	uint64_t len = gmac ? 0 : op->len;

	if (op->op == CRD_OP_ENCRYPT) {
		fn(&k->gcm, &ctx, op->dst, op->src, len, op->iv, aad, aad_len,
		   op->tag, op->tag_len);
		op->status = CRD_ST_OK;
		return;
	}
	uint8_t tag[CRD_TAG_MAX];
	fn(&k->gcm, &ctx, op->dst, op->src, len, op->iv, aad, aad_len, tag,
	   op->tag_len);
	if (engine_ct_memcmp(tag, op->tag, op->tag_len)) {
		if (len)
			memset(op->dst, 0, len);
		op->status = CRD_ST_AUTH_FAILED;
		return;
	}
	op->status = CRD_ST_OK;
}

/* ---- CBC / CTR / ECB / CBC+HMAC: job API ---- */

/* Per-burst scratch: computed tags for authenc decrypt (the longest
 * ICV: 32 bytes, SHA-512's). */
struct aesni_burst {
	uint8_t tag[64][32];
};
_Static_assert(WORKER_BURST <= 64, "a tag slot per op of a burst");

static void aesni_job_done(IMB_JOB *job)
{
	struct engine_op *op = job->user_data;
	if (auth_alg(op->sess->alg)) { /* never writes src/dst */
		aesni_auth_job_done(job);
		return;
	}
	if (job->status != IMB_STATUS_COMPLETED) {
		/* an authenticated decrypt that failed releases nothing */
		if (op->op == CRD_OP_DECRYPT && job->hash_alg != IMB_AUTH_NULL)
			memset(op->dst, 0, op->len);
		op->status = CRD_ST_ENGINE;
		return;
	}
	if (op->op == CRD_OP_DECRYPT && job->hash_alg != IMB_AUTH_NULL &&
	    engine_ct_memcmp(job->auth_tag_output, op->tag, op->tag_len)) {
		memset(op->dst, 0, op->len);
		op->status = CRD_ST_AUTH_FAILED;
		return;
	}
	op->status = CRD_ST_OK;
}

static void aesni_reap(IMB_MGR *m, IMB_JOB *job)
{
	while (job) {
		aesni_job_done(job);
		job = IMB_GET_COMPLETED_JOB(m);
	}
}

static void aesni_flush(IMB_MGR *m)
{
	IMB_JOB *job;
	while ((job = IMB_FLUSH_JOB(m)))
		aesni_job_done(job);
}

/* Fill and submit one job. src/dst/len/iv may differ from the op's
 * (a CTR op split at a counter wrap). */
static void aesni_submit(IMB_MGR *m, struct engine_op *op, const uint8_t *src,
			 uint8_t *dst, uint32_t len, const uint8_t *iv,
			 uint8_t *tag_scratch, int cipher_only)
{
	const struct aesni_key *k = (const struct aesni_key *)op->sess->key;
	IMB_JOB *job = IMB_GET_NEXT_JOB(m);
	int enc = op->op == CRD_OP_ENCRYPT;

	job->cipher_direction = enc ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT;
	job->chain_order = enc ? IMB_ORDER_CIPHER_HASH : IMB_ORDER_HASH_CIPHER;
	job->key_len_in_bytes = op->sess->key_len;
	job->enc_keys = k->blk.enc;
	job->dec_keys = k->blk.dec;
	job->src = src;
	job->dst = dst;
	job->cipher_start_src_offset_in_bytes = 0;
	job->msg_len_to_cipher_in_bytes = len;
	job->iv = iv;
	job->iv_len_in_bytes = op->iv_len;
	job->hash_alg = IMB_AUTH_NULL;
	job->user_data = op;

	switch (op->sess->alg) {
	case CRD_ALG_AES_CTR:
		job->cipher_mode = IMB_CIPHER_CNTR;
		break;
	case CRD_ALG_AES_ECB:
		job->cipher_mode = IMB_CIPHER_ECB;
		job->iv = NULL;
		job->iv_len_in_bytes = 0;
		break;
	case CRD_ALG_AES_CBC_HMAC_SHA1:
	case CRD_ALG_AES_CBC_HMAC_SHA256:
	case CRD_ALG_AES_CBC_HMAC_SHA384:
	case CRD_ALG_AES_CBC_HMAC_SHA512:
	case CRD_ALG_AES_CTR_HMAC_SHA1:
	case CRD_ALG_AES_CTR_HMAC_SHA256:
		job->cipher_mode = aesni_ctr_mode(op->sess->alg)
					   ? IMB_CIPHER_CNTR
					   : IMB_CIPHER_CBC;
		if (cipher_only) /* the MAC is done elsewhere */
			break;
		/* The worker staged AAD and data contiguously, in place:
		 * the MAC covers [aad, aad + aad_len + len). */
		job->hash_alg = aesni_sha_of(op->sess->alg)->hmac;
		job->src = op->aad_len ? op->aad : op->src;
		job->dst = op->dst;
		job->cipher_start_src_offset_in_bytes = op->aad_len;
		job->hash_start_src_offset_in_bytes = 0;
		job->msg_len_to_hash_in_bytes = (uint64_t)op->aad_len + len;
		job->u.HMAC._hashed_auth_key_xor_ipad = k->blk.ipad;
		job->u.HMAC._hashed_auth_key_xor_opad = k->blk.opad;
		job->auth_tag_output = enc ? op->tag : tag_scratch;
		job->auth_tag_output_len_in_bytes = op->tag_len;
		break;
	default: /* CBC, CBC with a null digest */
		job->cipher_mode = IMB_CIPHER_CBC;
		break;
	}
	/* ipsec-mb refuses empty cipher jobs: with no data, authenc only
	 * MACs the AAD. */
	if (len == 0)
		job->cipher_mode = IMB_CIPHER_NULL;
	/* Without ipsec-mb's own argument checks (8% of a worker at 1 KiB
	 * CBC, most of it a copy): every job here was built from an op that
	 * desc_resolve() checked against this engine's capability rows (key,
	 * IV and tag lengths, data length and block, the 16-bit lane limit:
	 * longer ops take aesni_pieces), which are stricter than those
	 * checks. DPDK's aesni_mb PMD submits the same way in its release
	 * builds. */
	aesni_reap(m, IMB_SUBMIT_JOB_NOCHECK(m));
}

/* ipsec-mb's multi-buffer lanes count lengths in 16 bits: longer ops run
 * as a chain of jobs of at most this many bytes. */
enum { AESNI_JOB_MAX = 65520 };
/* The longest message an HMAC job takes (measured: 65535 is refused). */
enum { AESNI_HASH_MAX = 65534 };

/* iv += blocks, as a 128-bit big-endian integer. */
static void aesni_ctr_add(uint8_t iv[16], uint64_t blocks)
{
	for (int i = 15; i >= 0 && blocks; i--) {
		uint64_t v = iv[i] + (blocks & 0xff);
		iv[i] = (uint8_t)v;
		blocks = (blocks >> 8) + (v >> 8);
	}
}

/*
 * Run one op as a chain of jobs, each run to completion before the next:
 * ops longer than AESNI_JOB_MAX, and CTR ops whose low counter word
 * would wrap (ipsec-mb increments only the low 32 bits of a 16-byte
 * counter block; we promise the 128-bit increment OpenSSL and the
 * kernel's ctr(aes) use). CBC chains through the last ciphertext block
 * of the previous piece, saved before an in-place decrypt overwrites it.
 */
static void aesni_pieces(IMB_MGR *m, struct engine_op *op)
{
	uint8_t iv[16], next[16];
	if (op->iv_len)
		memcpy(iv, op->iv, 16);
	struct engine_op part = *op;
	part.status = CRD_ST_OK;
	for (uint32_t off = 0; off < op->len && part.status == CRD_ST_OK;) {
		uint32_t n = op->len - off;
		if (n > AESNI_JOB_MAX)
			n = AESNI_JOB_MAX;
		if (aesni_ctr_mode(op->sess->alg)) {
			uint32_t lo = (uint32_t)iv[12] << 24 |
				      (uint32_t)iv[13] << 16 |
				      (uint32_t)iv[14] << 8 | iv[15];
			uint64_t to_wrap = ((uint64_t)UINT32_MAX - lo + 1) * 16;
			if (n > to_wrap)
				n = (uint32_t)to_wrap;
		}
		int cbc_dec = op->op == CRD_OP_DECRYPT &&
			      !aesni_ctr_mode(op->sess->alg) &&
			      op->sess->alg != CRD_ALG_AES_ECB;
		if (cbc_dec) /* the next IV, before in place overwrites it */
			memcpy(next, op->src + off + n - 16, 16);
		aesni_submit(m, &part, op->src + off, op->dst + off, n,
			     op->iv_len ? iv : NULL, NULL, 1);
		aesni_flush(m); /* part and iv must not outlive this frame */
		if (aesni_ctr_mode(op->sess->alg))
			aesni_ctr_add(iv, n / 16);
		else if (cbc_dec)
			memcpy(iv, next, 16);
		else if (op->iv_len)
			memcpy(iv, op->dst + off + n - 16, 16);
		off += n;
	}
	op->status = part.status;
}

/* Must op run as a chain of jobs (aesni_pieces)? */
static int aesni_needs_pieces(const struct engine_op *op)
{
	if (op->len > AESNI_JOB_MAX)
		return 1;
	if (!aesni_ctr_mode(op->sess->alg))
		return 0;
	uint32_t lo = (uint32_t)op->iv[12] << 24 | (uint32_t)op->iv[13] << 16 |
		      (uint32_t)op->iv[14] << 8 | op->iv[15];
	return ((uint64_t)op->len + 15) / 16 > (uint64_t)UINT32_MAX - lo + 1;
}

/*
 * authenc over more than an ipsec-mb job can hash (16-bit lengths), or
 * whose CTR counter would wrap its low word: the cipher as a chain of
 * jobs (aesni_pieces), the MAC with OpenSSL's HMAC over the same whole
 * contiguous aad || ciphertext (the worker staged it so). Encrypt-then-
 * MAC; verify-then-decrypt.
 */
static void aesni_authenc_big(IMB_MGR *m, struct engine_op *op)
{
	const struct aesni_key *k = (const struct aesni_key *)op->sess->key;
	const EVP_MD *md = aesni_sha_of(op->sess->alg)->md();
	const uint8_t *msg = op->aad_len ? op->aad : op->src;
	size_t msg_len = (size_t)op->aad_len + op->len;
	uint8_t mac[EVP_MAX_MD_SIZE];
	unsigned mac_len = 0;

	if (op->op == CRD_OP_ENCRYPT) {
		aesni_pieces(m, op);
		if (op->status != CRD_ST_OK)
			return;
		const int ok = HMAC(md, k->blk.auth_raw, k->blk.auth_len, msg,
				    msg_len, mac, &mac_len) != NULL;
		/* HMAC() runs the set-up that leaves key bytes on the
		 * stack on the EVP_MAC path (openssl_authenc.c); not seen
		 * here, but burnt rather than relied on. */
		engine_burn_stack();
		if (!ok) {
			op->status = CRD_ST_ENGINE;
			return;
		}
		memcpy(op->tag, mac, op->tag_len);
		return;
	}
	const int ok = HMAC(md, k->blk.auth_raw, k->blk.auth_len, msg, msg_len,
			    mac, &mac_len) != NULL;
	engine_burn_stack();
	if (!ok) {
		op->status = CRD_ST_ENGINE;
		return;
	}
	if (engine_ct_memcmp(mac, op->tag, op->tag_len)) {
		memset(op->dst, 0, op->len);
		op->status = CRD_ST_AUTH_FAILED;
		return;
	}
	aesni_pieces(m, op);
}

/* authenc over nothing at all: the precomputed HMAC of "". */
static void aesni_authenc_empty(struct engine_op *op)
{
	const struct aesni_key *k = (const struct aesni_key *)op->sess->key;
	if (op->op == CRD_OP_ENCRYPT) {
		memcpy(op->tag, k->blk.empty_mac, op->tag_len);
		op->status = CRD_ST_OK;
		return;
	}
	op->status = engine_ct_memcmp(k->blk.empty_mac, op->tag, op->tag_len)
			     ? CRD_ST_AUTH_FAILED
			     : CRD_ST_OK;
}

enum { AESNI_PREFETCH = 2048 };

static void aesni_prefetch(const struct engine_op *op)
{
	uint32_t len = op->len < AESNI_PREFETCH ? op->len : AESNI_PREFETCH;
	for (uint32_t off = 0; off < len; off += 64)
		__builtin_prefetch(op->src + off);
	if (op->dst != op->src)
		for (uint32_t off = 0; off < len; off += 64)
			__builtin_prefetch(op->dst + off, 1);
	__builtin_prefetch(op->tag, 1);
}

static void aesni_process(void *wctx, struct engine_op *ops, unsigned n)
{
	IMB_MGR *m = wctx;
	struct aesni_burst scratch;
	int jobs = 0, evp_used = 0;

	for (unsigned i = 0; i < n; i++) {
		struct engine_op *op = &ops[i];
		const struct aesni_key *k =
			(const struct aesni_key *)op->sess->key;
		/* The next op's data travels from the client's core while
		 * this one computes. */
		if (i + 1 < n)
			aesni_prefetch(&ops[i + 1]);
		if (crd_alg_bit_len(op->sess->alg)) { /* aesni_wireless.c */
			/* a run of ZUC ops together */
			i += aesni_wireless_run(m, op, n - i) - 1;
			continue;
		}
		if (auth_alg(op->sess->alg)) { /* aesni_auth.c */
			if (aesni_auth_op(m, op, i)) {
				aesni_reap(m, IMB_SUBMIT_JOB(m));
				jobs = 1;
			} else {
				evp_used = 1; /* maybe OpenSSL's MACs */
			}
			continue;
		}
		switch (op->sess->alg) {
		case CRD_ALG_AES_GCM:
		case CRD_ALG_AES_GMAC:
			aesni_gcm_one(m, op);
			break;
		case CRD_ALG_CHACHA20_POLY1305:
			evp_used |= aesni_chacha_poly_one(m, k->chacha, op);
			break;
		case CRD_ALG_AES_CCM:
			if (!aesni_ccm_fits(op)) {
				aesni_ccm_evp(op, k->blk.auth_raw);
				evp_used = 1;
				break;
			}
			aesni_ccm_fill(IMB_GET_NEXT_JOB(m), op, k->blk.enc,
				       k->blk.dec, scratch.tag[i % 64]);
			/* With ipsec-mb's checks: a last guard on lengths */
			aesni_reap(m, IMB_SUBMIT_JOB(m));
			jobs = 1;
			break;
		case CRD_ALG_AES_CBC_HMAC_SHA1:
		case CRD_ALG_AES_CBC_HMAC_SHA256:
		case CRD_ALG_AES_CBC_HMAC_SHA384:
		case CRD_ALG_AES_CBC_HMAC_SHA512:
		case CRD_ALG_AES_CTR_HMAC_SHA1:
		case CRD_ALG_AES_CTR_HMAC_SHA256:
			/* One job MACs aad || data, up to AESNI_HASH_MAX, and
			 * runs CTR up to the wrap of the counter's low word. */
			if ((uint64_t)op->aad_len + op->len > AESNI_HASH_MAX ||
			    aesni_needs_pieces(op)) {
				aesni_authenc_big(m, op);
				break;
			}
			if (op->aad_len + op->len == 0) {
				aesni_authenc_empty(op);
				break;
			}
			aesni_submit(m, op, op->src, op->dst, op->len, op->iv,
				     scratch.tag[i % 64], 0);
			jobs = 1;
			break;
		default: /* CBC, CTR, ECB, CBC with a null digest */
			if (op->len == 0) { /* nothing to cipher, no tag */
				op->status = CRD_ST_OK;
				break;
			}
			if (aesni_needs_pieces(op)) {
				aesni_pieces(m, op);
				break;
			}
			aesni_submit(m, op, op->src, op->dst, op->len, op->iv,
				     NULL, 0);
			jobs = 1;
			break;
		}
	}
	/* Jobs complete out of order; each sets its own op's status. */
	if (jobs)
		aesni_flush(m);
	/* OpenSSL's key set-up may leave key bytes on this stack (see
	 * openssl_authenc.c): the fallbacks' frames are gone now. */
	if (evp_used)
		engine_burn_stack();
}

const struct engine engine_aesni = {
	.name = "aesni",
	.caps = aesni_caps,
	.n_caps = sizeof(aesni_caps) / sizeof(aesni_caps[0]),
	.probe = aesni_probe,
	.session_init = aesni_session_init,
	.worker_init = aesni_worker_init,
	.worker_fini = aesni_worker_fini,
	.process = aesni_process,
	.fini = aesni_fini,
	.stream = aesni_stream,
};
