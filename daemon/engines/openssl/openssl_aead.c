/* SPDX-License-Identifier: MIT */
/*
 * openssl's CCM (aead.h). EVP's CCM is one-shot: the nonce and tag
 * lengths before the key, the total length before the AAD, then one
 * update; a decrypt's update is where the tag is checked (in constant
 * time), before anything is returned to the caller as plaintext.
 * ChaCha20-Poly1305 streams like GCM and runs through ossl_gcm()
 * (engine_openssl.c).
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
