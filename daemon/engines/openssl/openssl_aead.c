/* SPDX-License-Identifier: MIT */
/*
 * openssl's CCM (aead.h). EVP's CCM is one-shot: the nonce and tag
 * lengths before the key, the total length before the AAD, then one
 * update; a decrypt's update is where the tag is checked (in constant
 * time), before anything is returned to the caller as plaintext.
 * GCM, GMAC and ChaCha20-Poly1305 take one call each way (ossl_aead):
 * the openssl engine's, and the aesni engine's for the ChaCha20-Poly1305
 * messages OpenSSL runs faster than ipsec-mb does (aesni_aead.c).
 */
#include "aead.h"
#include "session.h"

#include <string.h>

#include <openssl/core_names.h>

#include <cryptod/ring_abi.h>

int ossl_ccm(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, const uint8_t *key,
	     struct engine_op *op)
{
	int enc = op->op == CRD_OP_ENCRYPT, n;
	/* An empty message still takes its update, which is where a decrypt
	 * checks the tag: with NULL pointers EVP would skip the check. */
	uint8_t none[1] = { 0 };
	const uint8_t *in = op->len ? op->src : none;
	uint8_t *out = op->len ? op->dst : none;
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN,
					    &(size_t){ op->iv_len }),
		/* Encrypt: the length alone; decrypt: the tag to check. */
		OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG,
						  enc ? NULL : op->tag,
						  op->tag_len),
		OSSL_PARAM_construct_end(),
	};

	if (!EVP_CipherInit_ex2(ctx, c, NULL, NULL, enc, p) ||
	    !EVP_CipherInit_ex2(ctx, NULL, key, op->iv, enc, NULL) ||
	    !EVP_CipherUpdate(ctx, NULL, &n, NULL, (int)op->len))
		return CRD_ST_ENGINE;
	if (op->aad_len &&
	    !EVP_CipherUpdate(ctx, NULL, &n, op->aad, (int)op->aad_len))
		return CRD_ST_ENGINE;
	if (!EVP_CipherUpdate(ctx, out, &n, in, (int)op->len)) {
		if (enc)
			return CRD_ST_ENGINE;
		if (op->len)
			memset(op->dst, 0, op->len);
		return CRD_ST_AUTH_FAILED;
	}
	if (enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, op->tag_len,
					op->tag))
		return CRD_ST_ENGINE;
	return CRD_ST_OK;
}

/* GCM, GMAC and ChaCha20-Poly1305. Returns CRD_ST_*. */
static int ossl_aead_run(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c,
			 const uint8_t *key, struct engine_op *op)
{
	int gmac = op->sess->alg == CRD_ALG_AES_GMAC;
	int enc = op->op == CRD_OP_ENCRYPT;
	int n;

	OSSL_PARAM ivp[] = {
		OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN,
					    &(size_t){ op->iv_len }),
		OSSL_PARAM_construct_end(),
	};
	if (!EVP_CipherInit_ex2(ctx, c, NULL, NULL, enc, ivp) ||
	    !EVP_CipherInit_ex2(ctx, NULL, key, op->iv, enc, NULL))
		return CRD_ST_ENGINE;
	const uint8_t *aad = gmac ? op->src : op->aad;
	uint32_t aad_len = gmac ? op->len : op->aad_len;
	if (aad_len && !EVP_CipherUpdate(ctx, NULL, &n, aad, aad_len))
		return CRD_ST_ENGINE;
	if (!gmac && op->len &&
	    !EVP_CipherUpdate(ctx, op->dst, &n, op->src, op->len))
		return CRD_ST_ENGINE;
	if (!enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG,
					 op->tag_len, op->tag))
		return CRD_ST_ENGINE;
	uint8_t end[16];
	if (!EVP_CipherFinal_ex(ctx, end, &n))
		/* A decrypt's tag mismatch, compared in constant time */
		return enc ? CRD_ST_ENGINE : CRD_ST_AUTH_FAILED;
	if (enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, op->tag_len,
					op->tag))
		return CRD_ST_ENGINE;
	return CRD_ST_OK;
}

int ossl_aead(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, const uint8_t *key,
	      struct engine_op *op)
{
	int st = ossl_aead_run(ctx, c, key, op);
	/* The data update ran before the tag was checked: a decrypt that
	 * failed for any reason releases nothing. */
	if (st != CRD_ST_OK && op->op == CRD_OP_DECRYPT &&
	    op->sess->alg != CRD_ALG_AES_GMAC && op->len)
		memset(op->dst, 0, op->len);
	return st;
}
