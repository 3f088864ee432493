/* SPDX-License-Identifier: MIT */
/*
 * The AEADs beside GCM (AES-CCM, ChaCha20-Poly1305) and GCM with IVs
 * other than 12 bytes, kept apart from the engines' block-mode code: aesni_aead.c (intel-ipsec-mb) and
 * openssl_aead.c (EVP). The engine files call these from their
 * session_init / process switches.
 */
#ifndef CRYPTOD_ENGINE_AEAD_H
#define CRYPTOD_ENGINE_AEAD_H

#include <stdint.h>

#include <intel-ipsec-mb.h>
#include <openssl/evp.h>

#include "engine.h"

/*
 * CCM through the job API: fill job (from IMB_GET_NEXT_JOB) for op, with
 * enc the session's expanded AES encryption keys. Decrypt writes the
 * computed tag to tag_scratch (16 bytes) for the caller's completion
 * function to compare; encrypt writes op->tag.
 */
void aesni_ccm_fill(IMB_JOB *job, const struct engine_op *op, const void *enc,
		    const void *dec, uint8_t *tag_scratch);

/* ChaCha20-Poly1305 through the direct API; key is the raw 32 bytes. */
void aesni_chacha_poly_one(IMB_MGR *m, const uint8_t *key,
			   struct engine_op *op);

/* GCM with an IV of other than 12 bytes (GHASHed into the counter
 * block), through the direct API's variable-IV init. */
void aesni_gcm_var_iv(IMB_MGR *m, const struct gcm_key_data *key,
		      struct engine_op *op);

/* CCM with EVP. Returns CRD_ST_*. */
int ossl_ccm(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, const uint8_t *key,
	     struct engine_op *op);

#endif
