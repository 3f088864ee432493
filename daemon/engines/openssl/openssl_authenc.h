/* SPDX-License-Identifier: MIT */
/*
 * The openssl engine's authenc (IPsec ESP style: a cipher and an HMAC
 * with its own key): the HMAC half, EVP_MAC with one context per digest
 * and worker. engine_openssl.c runs the cipher half and calls these.
 */
#ifndef CRYPTOD_OPENSSL_AUTHENC_H
#define CRYPTOD_OPENSSL_AUTHENC_H

#include <stddef.h>
#include <stdint.h>

struct engine_op;
struct ossl_hmac; /* per worker */

/* NULL when OpenSSL has no HMAC (or no memory). */
struct ossl_hmac *ossl_hmac_new(void);
void ossl_hmac_free(struct ossl_hmac *h);

/*
 * HMAC(key, op->aad[0, aad_len) || data[0, op->len)) with the digest of
 * op's authenc algorithm into mac (EVP_MAX_MD_SIZE bytes); data is the
 * ciphertext (op->dst after encrypting, op->src before decrypting).
 * Returns CRD_ST_*.
 */
int ossl_hmac_authenc(struct ossl_hmac *h, const struct engine_op *op,
		      const uint8_t *key, size_t key_len, const uint8_t *data,
		      uint8_t *mac);

/* Replace the HMAC states keyed since the last call and zero the stack
 * their set-up used: at the end of each burst, so that no session's HMAC
 * key outlives it in the contexts or on the worker's stack. Call it from
 * the frame that called ossl_hmac_authenc() (or one further up). */
void ossl_hmac_wipe(struct ossl_hmac *h);

#endif
