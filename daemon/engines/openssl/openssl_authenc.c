/* SPDX-License-Identifier: MIT */
/*
 * HMAC for the openssl engine's authenc algorithms (openssl_authenc.h).
 *
 * Each worker holds one EVP_MAC_CTX per digest, its digest set once; an
 * op keys it with the session's raw HMAC key (two compressions: the cost
 * of sharing no OpenSSL state between workers, as the ciphers' key
 * schedule per op). The keyed states stay in the contexts until
 * ossl_hmac_wipe() re-keys them with a constant: that overwrites the
 * inner, outer and running digest states, and OpenSSL clear-frees its
 * copy of the previous key. OpenSSL 3.0's HMAC set-up also leaves a copy
 * of a 32- or 64-byte key on the stack (tests/hostile/test_key_hygiene
 * finds it on the worker's stack), so the wipe then zeroes the stack
 * below its caller too (engine_burn_stack()).
 */
#include "openssl_authenc.h"
#include "engine.h"
#include "session.h"

#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cryptod/ring_abi.h>

enum {
	OSSL_HMAC_SHA1,
	OSSL_HMAC_SHA256,
	OSSL_HMAC_SHA384,
	OSSL_HMAC_SHA512,
	OSSL_HMAC_N
};

struct ossl_hmac {
	EVP_MAC *mac;
	EVP_MAC_CTX *ctx[OSSL_HMAC_N]; /* owned */
	unsigned keyed;		       /* bit i: ctx[i] holds a session's key */
};

/* The digest of an authenc algorithm, or -1. */
static int ossl_hmac_idx(unsigned alg)
{
	/* crd_alg_sha_idx() to ours: no authenc row has SHA-224 */
	static const int8_t ours[CRD_SHA_N] = { OSSL_HMAC_SHA1, -1,
						OSSL_HMAC_SHA256,
						OSSL_HMAC_SHA384,
						OSSL_HMAC_SHA512 };
	int i = crd_alg_sha_idx(alg);
	return crd_alg_kind(alg) == CRD_KIND_AUTHENC && i >= 0 ? ours[i] : -1;
}

void ossl_hmac_free(struct ossl_hmac *h)
{
	if (!h)
		return;
	for (unsigned i = 0; i < OSSL_HMAC_N; i++)
		EVP_MAC_CTX_free(h->ctx[i]); /* cleanses the states */
	EVP_MAC_free(h->mac);
	OPENSSL_free(h);
}

struct ossl_hmac *ossl_hmac_new(void)
{
	static const char *const digests[OSSL_HMAC_N] = {
		[OSSL_HMAC_SHA1] = "SHA1",
		[OSSL_HMAC_SHA256] = "SHA2-256",
		[OSSL_HMAC_SHA384] = "SHA2-384",
		[OSSL_HMAC_SHA512] = "SHA2-512",
	};
	struct ossl_hmac *h = OPENSSL_zalloc(sizeof(*h));
	if (!h)
		return NULL;
	h->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (!h->mac)
		goto err;
	for (unsigned i = 0; i < OSSL_HMAC_N; i++) {
		OSSL_PARAM p[] = {
			OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
							 (char *)digests[i], 0),
			OSSL_PARAM_construct_end(),
		};
		h->ctx[i] = EVP_MAC_CTX_new(h->mac);
		if (!h->ctx[i] || !EVP_MAC_CTX_set_params(h->ctx[i], p))
			goto err;
	}
	return h;
err:
	ossl_hmac_free(h);
	return NULL;
}

int ossl_hmac_authenc(struct ossl_hmac *h, const struct engine_op *op,
		      const uint8_t *key, size_t key_len, const uint8_t *data,
		      uint8_t *mac)
{
	int idx = ossl_hmac_idx(op->sess->alg);
	if (idx < 0)
		return CRD_ST_ENGINE;
	EVP_MAC_CTX *ctx = h->ctx[idx];
	size_t n = 0;
	h->keyed |= 1u << idx;
	if (!EVP_MAC_init(ctx, key, key_len, NULL) ||
	    (op->aad_len && !EVP_MAC_update(ctx, op->aad, op->aad_len)) ||
	    (op->len && !EVP_MAC_update(ctx, data, op->len)) ||
	    !EVP_MAC_final(ctx, mac, &n, EVP_MAX_MD_SIZE) || n < op->tag_len)
		return CRD_ST_ENGINE;
	return CRD_ST_OK;
}

void ossl_hmac_wipe(struct ossl_hmac *h)
{
	/* Not secret: it only displaces the last session's key. */
	static const uint8_t nokey[1];
	for (unsigned i = 0; i < OSSL_HMAC_N; i++)
		if (h->keyed & 1u << i)
			EVP_MAC_init(h->ctx[i], nokey, sizeof(nokey), NULL);
	if (h->keyed)
		engine_burn_stack();
	h->keyed = 0;
}
