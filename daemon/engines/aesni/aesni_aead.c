/* SPDX-License-Identifier: MIT */
/*
 * aesni's AEADs beside the 12-byte-IV GCM fast path (aead.h).
 *
 * GCM and GMAC with other IVs (1..128 bytes): the direct API's
 * variable-IV init (the IV GHASHed into J0, SP 800-38D), then update and
 * finalize; the 12-byte path in engine_aesni.c stays one call and pays
 * one predictable branch for this.
 *
 * CCM: ipsec-mb 1.3's job API takes AES-128 and AES-256 keys only, AAD
 * of at most 46 bytes and messages of at most 65534 bytes (measured:
 * longer ones, AES-192 and 47 bytes of AAD complete with an error). What
 * protocols send (802.11 CCMP, ESP, TLS: AAD of 8..30 bytes, packets)
 * runs there, multi-buffer; everything else CCM allows runs through EVP
 * in the same worker (aesni_ccm_evp), as authenc's long messages take
 * OpenSSL's HMAC, so a session on the default engine takes all of CCM.
 */
#include "aead.h"
#include "decimal.h"
#include "log.h"
#include "session.h"
#include "stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cryptod/ring_abi.h>

void aesni_ccm_fill(IMB_JOB *job, const struct engine_op *op, const void *enc,
		    const void *dec, uint8_t *tag_scratch)
{
	int e = op->op == CRD_OP_ENCRYPT;

	/* ipsec-mb's CCM orders the other way round: MAC then CTR. */
	job->cipher_mode = IMB_CIPHER_CCM;
	job->hash_alg = IMB_AUTH_AES_CCM;
	job->cipher_direction = e ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT;
	job->chain_order = e ? IMB_ORDER_HASH_CIPHER : IMB_ORDER_CIPHER_HASH;
	job->key_len_in_bytes = op->sess->key_len;
	job->enc_keys = enc;
	job->dec_keys = dec;
	job->src = op->src;
	job->dst = op->dst;
	job->cipher_start_src_offset_in_bytes = 0;
	job->msg_len_to_cipher_in_bytes = op->len;
	job->hash_start_src_offset_in_bytes = 0;
	job->msg_len_to_hash_in_bytes = op->len;
	job->iv = op->iv;
	job->iv_len_in_bytes = op->iv_len;
	job->u.CCM.aad = op->aad;
	job->u.CCM.aad_len_in_bytes = op->aad_len;
	job->auth_tag_output = e ? op->tag : tag_scratch;
	job->auth_tag_output_len_in_bytes = op->tag_len;
	job->user_data = (void *)op;
}

/* AES-128/192/256-CCM, fetched once (aesni_aead_probe): no op takes the
 * provider store's lock. Read-only after the probe. */
static EVP_CIPHER *aesni_ccm_ciphers[3];

/*
 * ipsec-mb 1.3's ChaCha20-Poly1305 without AVX-512 (its avx2, avx and
 * sse code) is slower than OpenSSL's past a few KiB. Measured on a Zen 4
 * with ipsec-mb's avx2 code against OpenSSL's AVX2 code (its AVX-512
 * masked with OPENSSL_ia32cap, as on a Zen 3), one core, encryption,
 * MB/s, ipsec-mb / EVP with a context per op: 1 KiB 1137 / 1012, 4 KiB
 * 1569 / 1758, 8 KiB 1604 / 1943, 16 KiB 1542 / 2019, 64 KiB 1578 / 2113.
 * With AVX-512 ipsec-mb's is the faster (16 KiB: 4739 against OpenSSL's
 * AVX-512 code's 3610). So without it, one-op messages from
 * AESNI_CHACHA_EVP_MIN bytes run through EVP in the same worker, and so
 * do streams whose FIRST piece holds that many (on EVP's ChaCha20 and
 * poly1305.c, ossl_chacha_stream: EVP's own AEAD keeps its state where
 * no stream state can; each stream stays on the code it began on). The
 * environment's CRYPTOD_AESNI_CHACHA_EVP_MIN (bytes) overrides the choice
 * either way. Read-only after the probe.
 */
enum { AESNI_CHACHA_EVP_MIN = 4096 };
static EVP_CIPHER *aesni_chacha_cipher;
/* The bare ChaCha20, for streams (aesni_chacha_stream_evp): NULL keeps
 * every stream on ipsec-mb. */
static EVP_CIPHER *aesni_chacha20_cipher;
static uint32_t aesni_chacha_evp_min = UINT32_MAX; /* never */

static uint32_t chacha_evp_min(int avx512)
{
	const char *env = getenv("CRYPTOD_AESNI_CHACHA_EVP_MIN");
	if (env && *env) {
		uint64_t v;
		if (!dec_parse_all(env, UINT64_MAX, &v))
			return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		/* The value itself stays out of the log: any bytes at all. */
		log_warn("CRYPTOD_AESNI_CHACHA_EVP_MIN is not a number of "
			 "bytes: ignored");
	}
	return avx512 ? UINT32_MAX : AESNI_CHACHA_EVP_MIN;
}

int aesni_aead_probe(int avx512)
{
	static const char *const names[] = { "AES-128-CCM", "AES-192-CCM",
					     "AES-256-CCM" };
	if (aesni_ccm_ciphers[0]) /* probed before */
		return 0;
	for (unsigned i = 0; i < 3; i++) {
		aesni_ccm_ciphers[i] = EVP_CIPHER_fetch(NULL, names[i], NULL);
		if (!aesni_ccm_ciphers[i]) {
			aesni_aead_fini();
			return -ENODEV;
		}
	}
	/* Without it, every message stays on ipsec-mb. */
	aesni_chacha_cipher = EVP_CIPHER_fetch(NULL, "ChaCha20-Poly1305", NULL);
	aesni_chacha_evp_min =
		aesni_chacha_cipher ? chacha_evp_min(avx512) : UINT32_MAX;
	aesni_chacha20_cipher = EVP_CIPHER_fetch(NULL, "ChaCha20", NULL);
	return 0;
}

uint32_t aesni_chacha_evp_from(void)
{
	return aesni_chacha_evp_min;
}

int aesni_chacha_stream_on_evp(uint32_t len)
{
	return aesni_chacha20_cipher && len >= aesni_chacha_evp_min;
}

void aesni_chacha_stream_evp(struct engine_op *op, const uint8_t *key,
			     void *state)
{
	/* aesni_chacha_stream_on_evp() chose this only with the cipher */
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

	if (!c)
		op->status = CRD_ST_ENGINE;
	else
		ossl_chacha_stream(c, aesni_chacha20_cipher, key, op, state);
	EVP_CIPHER_CTX_free(c); /* cleanses the key */
	/* EVP's key set-up leaves key bytes in its dead frames. */
	engine_burn_stack();
}

void aesni_aead_fini(void)
{
	for (unsigned i = 0; i < 3; i++) {
		EVP_CIPHER_free(aesni_ccm_ciphers[i]);
		aesni_ccm_ciphers[i] = NULL;
	}
	EVP_CIPHER_free(aesni_chacha_cipher);
	aesni_chacha_cipher = NULL;
	EVP_CIPHER_free(aesni_chacha20_cipher);
	aesni_chacha20_cipher = NULL;
	aesni_chacha_evp_min = UINT32_MAX;
}

void aesni_ccm_evp(struct engine_op *op, const uint8_t *key)
{
	EVP_CIPHER *c = aesni_ccm_ciphers[(op->sess->key_len - 16) / 8];
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	op->status = c && ctx ? ossl_ccm(ctx, c, key, op) : CRD_ST_ENGINE;
	EVP_CIPHER_CTX_free(ctx); /* cleanses the key schedule */
}

int aesni_chacha_poly_one(IMB_MGR *m, const uint8_t *key, struct engine_op *op)
{
	if (op->len >= aesni_chacha_evp_min) {
		EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
		if (c) {
			op->status = ossl_aead(c, aesni_chacha_cipher, key, op);
			EVP_CIPHER_CTX_free(c); /* cleanses the key */
			return 1;
		}
	}
	struct chacha20_poly1305_context_data ctx;
	uint8_t tag[16];

	IMB_CHACHA20_POLY1305_INIT(m, key, &ctx, op->iv, op->aad, op->aad_len);
	if (op->op == CRD_OP_ENCRYPT) {
		IMB_CHACHA20_POLY1305_ENC_UPDATE(m, key, &ctx, op->dst, op->src,
						 op->len);
		IMB_CHACHA20_POLY1305_ENC_FINALIZE(m, &ctx, op->tag,
						   op->tag_len);
		op->status = CRD_ST_OK;
	} else {
		IMB_CHACHA20_POLY1305_DEC_UPDATE(m, key, &ctx, op->dst, op->src,
						 op->len);
		IMB_CHACHA20_POLY1305_DEC_FINALIZE(m, &ctx, tag, op->tag_len);
		op->status = CRD_ST_OK;
		if (engine_ct_memcmp(tag, op->tag, op->tag_len)) {
			memset(op->dst, 0, op->len);
			op->status = CRD_ST_AUTH_FAILED;
		}
	}
	/* The context holds the one-time Poly1305 key and keystream. */
	explicit_bzero(&ctx, sizeof(ctx));
	return 0;
}

void aesni_gcm_var_iv(IMB_MGR *m, const struct gcm_key_data *key,
		      struct engine_op *op)
{
	struct gcm_context_data ctx;
	/* GMAC is GCM with no plaintext and the data as AAD: it runs the
	 * encrypt calls both ways (there is nothing to decrypt). */
	const int gmac = op->sess->alg == CRD_ALG_AES_GMAC;
	const int gen = op->op == CRD_OP_ENCRYPT, enc = gen || gmac;
	const uint8_t *aad = gmac ? op->src : op->aad;
	const uint64_t aad_len = gmac ? op->len : op->aad_len;
	const uint64_t len = gmac ? 0 : op->len;
	aes_gcm_init_var_iv_t init;
	aes_gcm_enc_dec_update_t update;
	aes_gcm_enc_dec_finalize_t final;
	uint8_t tag[16];

	switch (op->sess->key_len) {
	case 16:
		init = m->gcm128_init_var_iv;
		update = enc ? m->gcm128_enc_update : m->gcm128_dec_update;
		final = enc ? m->gcm128_enc_finalize : m->gcm128_dec_finalize;
		break;
	case 24:
		init = m->gcm192_init_var_iv;
		update = enc ? m->gcm192_enc_update : m->gcm192_dec_update;
		final = enc ? m->gcm192_enc_finalize : m->gcm192_dec_finalize;
		break;
	default:
		init = m->gcm256_init_var_iv;
		update = enc ? m->gcm256_enc_update : m->gcm256_dec_update;
		final = enc ? m->gcm256_enc_finalize : m->gcm256_dec_finalize;
		break;
	}
	init(key, &ctx, op->iv, op->iv_len, aad, aad_len);
	if (len)
		update(key, &ctx, op->dst, op->src, len);
	final(key, &ctx, gen ? op->tag : tag, op->tag_len);
	explicit_bzero(&ctx, sizeof(ctx));
	op->status = CRD_ST_OK;
	if (!gen && engine_ct_memcmp(tag, op->tag, op->tag_len)) {
		if (len)
			memset(op->dst, 0, len);
		op->status = CRD_ST_AUTH_FAILED;
	}
}
