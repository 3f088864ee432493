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
#include "session.h"

/*
 * CCM through the job API: fill job (from IMB_GET_NEXT_JOB) for op, with
 * enc the session's expanded AES encryption keys. Decrypt writes the
 * computed tag to tag_scratch (16 bytes) for the caller's completion
 * function to compare; encrypt writes op->tag.
 */
void aesni_ccm_fill(IMB_JOB *job, const struct engine_op *op, const void *enc,
		    const void *dec, uint8_t *tag_scratch);

/* What ipsec-mb 1.3's CCM takes (measured: longer ones, AES-192 and 47
 * bytes of AAD complete with an error): AES-128/256 keys, AAD of at most
 * 46 bytes, at most 65534 bytes of data. */
enum { AESNI_CCM_AAD_MAX = 46, AESNI_CCM_LEN_MAX = 65534 };
static inline int aesni_ccm_fits(const struct engine_op *op)
{
	return op->sess->key_len != 24 && op->aad_len <= AESNI_CCM_AAD_MAX &&
	       op->len <= AESNI_CCM_LEN_MAX;
}

/* CCM beyond those limits: one op with EVP (ossl_ccm) on a context of
 * its own; key is the raw AES key. Sets op->status. */
void aesni_ccm_evp(struct engine_op *op, const uint8_t *key);
/* Fetch (probe) and free (fini) the ciphers aesni_ccm_evp() and
 * aesni_chacha_poly_one() use, once for all workers; avx512: ipsec-mb
 * runs its AVX-512 code. 0 or -ENODEV. */
int aesni_aead_probe(int avx512);
void aesni_aead_fini(void);

/* ChaCha20-Poly1305 as one op; key is the raw 32 bytes. Through the
 * direct API, or from aesni_chacha_evp_from() bytes on OpenSSL's code
 * (ossl_aead): then 1, and the caller burns the stack. */
int aesni_chacha_poly_one(IMB_MGR *m, const uint8_t *key, struct engine_op *op);
/* From how many bytes a message takes OpenSSL's code; UINT32_MAX: none. */
uint32_t aesni_chacha_evp_from(void);

/* Does a ChaCha20-Poly1305 stream whose FIRST piece holds len bytes run
 * on OpenSSL's ChaCha20 and poly1305.c (aesni_chacha_stream_evp) rather
 * than ipsec-mb's? From aesni_chacha_evp_from() bytes, as one-op
 * messages do, when OpenSSL has the bare ChaCha20. */
int aesni_chacha_stream_on_evp(uint32_t len);
/* A piece of such a stream (ossl_chacha_stream, on a context of its
 * own); key the raw 32 bytes, state OSSL_AEAD_STREAM_SIZE bytes. Sets
 * op->status; burns the stack. */
void aesni_chacha_stream_evp(struct engine_op *op, const uint8_t *key,
			     void *state);

/* GCM or GMAC with an IV of other than 12 bytes (1..CRD_IV_ARENA_MAX,
 * GHASHed into the counter block), through the direct API's variable-IV
 * init. */
void aesni_gcm_var_iv(IMB_MGR *m, const struct gcm_key_data *key,
		      struct engine_op *op);

/* GCM, GMAC or ChaCha20-Poly1305, one op with EVP: any IV length EVP
 * takes; a decrypt that fails releases nothing. key is the raw key.
 * Returns CRD_ST_*. */
int ossl_aead(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, const uint8_t *key,
	      struct engine_op *op);

/* CCM with EVP. Returns CRD_ST_*. */
int ossl_ccm(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, const uint8_t *key,
	     struct engine_op *op);

#endif
