/* SPDX-License-Identifier: MIT */
/* The openssl engine's session key material and per-worker state, shared
 * by engine_openssl.c and the file that serves its streams
 * (openssl_stream.c). */
#ifndef CRYPTOD_ENGINE_OPENSSL_H
#define CRYPTOD_ENGINE_OPENSSL_H

#include <stdint.h>

#include <openssl/evp.h>

#include <cryptod/ring_abi.h>

struct ossl_auth;
struct ossl_pk_worker;
struct session;
struct engine_op;
struct ossl_hmac;

/* Session key material, in the session's locked slot. */
struct ossl_key {
	uint8_t raw[CRD_KEY_MAX];	/* the raw key: EVP expands it per op */
	uint8_t auth[CRD_AUTH_KEY_MAX]; /* authenc: the raw HMAC key */
	uint8_t auth_len;
};

/* Per-worker state (the engine's wctx). */
/* AES key wrap: keys, not bulk data (the bound of daemon/keys/keywrap.h). */
enum { OSSL_KW_MAX = 4096 };

struct ossl_worker {
	EVP_CIPHER_CTX *ctx;
	EVP_CIPHER_CTX *sctx; /* streams: CCM's CTR beside ctx's CBC-MAC */
	uint8_t kw[OSSL_KW_MAX + 8]; /* a wrap's tag || ciphertext */
	uint8_t kw_out[OSSL_KW_MAX]; /* an unwrap's output, until it checks */
	EVP_CIPHER *cipher[CRD_ALG_MAX_][4]; /* fetched once; [key size] */
	struct ossl_auth *auth;	   /* MACs and digests (openssl_auth.c) */
	struct ossl_hmac *hmac;	   /* authenc; owned */
	struct ossl_pk_worker *pk; /* key pairs (openssl_pkey.c); owned */
};

/* Key pairs (openssl_pkey.c). The largest output of a key pair's op
 * (RSA-4096's modulus: the tag column's longest). */
enum { OSSL_PK_OUT_MAX = 512 };
_Static_assert((unsigned)CRD_TAG_RSA_4096 <= (unsigned)OSSL_PK_OUT_MAX,
	       "pk output bound");
struct ossl_pk_worker *ossl_pk_worker_new(void);
void ossl_pk_worker_free(struct ossl_pk_worker *w);
/* Parse the DER key (PKCS#8, or SubjectPublicKeyInfo: s->op_mask then
 * keeps only verify and encrypt) and check it against s->alg's row.
 * 0 or -EINVAL. */
int ossl_pk_session_init(struct session *s, const uint8_t *der, size_t len);
void ossl_pk_session_fini(struct session *s);
/* Run one op; returns CRD_ST_* and sets op->len to the output's bytes. */
int ossl_pk_run(struct ossl_pk_worker *w, struct engine_op *op);

/* The index of a key size in ossl_worker.cipher[alg]. */
static inline int ossl_key_idx(unsigned alg, unsigned key_len)
{
	if (alg == CRD_ALG_AES_XTS)
		return key_len == 32 ? 0 : 1;
	if (alg == CRD_ALG_AES_GCM_RFC4106)
		key_len -= 4; /* the salt */
	return key_len == 16 ? 0 : key_len == 24 ? 1 : 2;
}

#endif
