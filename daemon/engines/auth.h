/* SPDX-License-Identifier: MIT */
/*
 * Authentication-only algorithms (the MAC and HASH kinds of algs.h other
 * than GMAC, which lives with GCM): HMAC-SHA-1/224/256/384/512,
 * SHA-1/224/256/384/512, AES-CMAC and AES-XCBC-MAC-96. aesni_auth.c runs
 * them on intel-ipsec-mb, openssl_auth.c on OpenSSL EVP; this header is
 * what the two engine files and the two auth files share.
 *
 * The op shape is GMAC's: src is the message, there is no destination
 * (op->dst == op->src and is never written); CRD_OP_ENCRYPT writes the
 * tag, CRD_OP_DECRYPT compares it in constant time.
 */
#ifndef CRYPTOD_ENGINE_AUTH_H
#define CRYPTOD_ENGINE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include <cryptod/ring_abi.h>

#include "engine.h"

struct session;
struct evp_cipher_ctx_st;
struct evp_cipher_st;

/* Is alg one of those this code serves? */
static inline int auth_alg(unsigned alg)
{
	/* not GMAC (GCM code) nor the 3GPP MACs (aesni_wireless.c) */
	return crd_alg_auth_only(alg) && alg != CRD_ALG_AES_GMAC &&
	       !crd_alg_bit_len(alg);
}

/* HMAC-SHA-n and SHA-n by hash: 0 SHA-1, 1 SHA-224 .. 4 SHA-512; else
 * -1. */
int auth_sha_idx(unsigned alg);
/* OpenSSL's name of that hash ("SHA256"), else NULL. */
const char *auth_md_name(unsigned alg);
/* The digest size of an HMAC or SHA algorithm, else 0. */
unsigned auth_digest_len(unsigned alg);
/* The hash's block size (64, or 128 for SHA-384/512), else 0. */
unsigned auth_block_len(unsigned alg);

/* The openssl engine's key of a MAC session (CMAC: the AES key). */
const uint8_t *ossl_auth_key_raw(const struct session *s, unsigned *len);

/* The last step of every op: write the tag (generate) or compare the
 * computed mac with it in constant time (verify). Returns CRD_ST_*. */
int auth_finish(struct engine_op *op, const uint8_t *mac);

/*
 * RFC 3566 AES-XCBC-MAC on OpenSSL's AES-128 (OpenSSL has no XCBC).
 * derive: k1 || k2 || k3 of the key (48 bytes). mac: the full 16-byte
 * MAC of msg under those keys, with ctx and AES-128-CBC (the key stays
 * in ctx until the caller resets it). 0 or -EIO.
 */
int auth_xcbc_derive(struct evp_cipher_ctx_st *ctx, const uint8_t key[16],
		     uint8_t k[48]);
int auth_xcbc_mac(struct evp_cipher_ctx_st *ctx,
		  const struct evp_cipher_st *aes128cbc, const uint8_t k[48],
		  const uint8_t *msg, size_t len, uint8_t out[16]);

/* ---- Capability rows ---- */

/* HMAC: any key of 0..CRD_MAC_KEY_MAX bytes; the digest (the table's tag),
 * or truncated. id: the table's ID. */
#define CAP_HMAC(id)                                                           \
	{                                                                      \
		.alg = CRD_ALG_##id, .n_key = 1,                               \
		.key = { { 0, CRD_MAC_KEY_MAX, 1 } }, NO_IV, .n_tag = 1,       \
		.tag = { { 4, CRD_TAG_##id, 1 } }, .aad = RANGE1(0),           \
		.min_len = 0, .max_len = CRD_OP_MAX_LEN, .block = 1,           \
		.stream = 1                                                    \
	}
/* A digest: no key. */
#define CAP_SHA(id)                                                            \
	{                                                                      \
		.alg = CRD_ALG_##id, .n_key = 1, .key = { RANGE1(0) }, NO_IV,  \
		.n_tag = 1, .tag = { { 4, CRD_TAG_##id, 1 } },                 \
		.aad = RANGE1(0), .min_len = 0, .max_len = CRD_OP_MAX_LEN,     \
		.block = 1, .stream = 1                                        \
	}
/* AES-CMAC (keys lo..hi in steps of inc) and AES-XCBC-MAC-96. */
#define CAP_CMAC(lo, hi, inc)                                                  \
	{                                                                      \
		.alg = CRD_ALG_AES_CMAC, .n_key = 1,                           \
		.key = { { (lo), (hi), (inc) } }, NO_IV, .n_tag = 1,           \
		.tag = { { 4, 16, 1 } }, .aad = RANGE1(0), .min_len = 0,       \
		.max_len = CRD_OP_MAX_LEN, .block = 1, .stream = 1             \
	}
/* XCBC: ipsec-mb 1.3 writes 12-byte MACs only, so aesni has tag_hi 12. */
#define CAP_XCBC(tag_hi)                                                       \
	{                                                                      \
		.alg = CRD_ALG_AES_XCBC_MAC, .n_key = 1,                       \
		.key = { RANGE1(16) }, NO_IV, .n_tag = 1,                      \
		.tag = { { 4, (tag_hi), 1 } }, .aad = RANGE1(0), .min_len = 0, \
		.max_len = CRD_OP_MAX_LEN, .block = 1                          \
	}
#define CAP_HMACS                                                              \
	CAP_HMAC(HMAC_SHA1), CAP_HMAC(HMAC_SHA224), CAP_HMAC(HMAC_SHA256),     \
		CAP_HMAC(HMAC_SHA384), CAP_HMAC(HMAC_SHA512)
#define CAP_SHAS                                                               \
	CAP_SHA(SHA1), CAP_SHA(SHA224), CAP_SHA(SHA256), CAP_SHA(SHA384),      \
		CAP_SHA(SHA512)

/* ---- aesni (aesni_auth.c); mgr is the caller's IMB_MGR ---- */

enum { AESNI_AUTH_RAW = 128 };

/* A MAC session's key material on aesni, in the session's locked slot;
 * stream_mac.c reads it too. */
struct aesni_auth_key {
	_Alignas(16) uint8_t ipad[64]; /* HMAC inner state (ipsec-mb's) */
	_Alignas(16) uint8_t opad[64];
	_Alignas(16) uint8_t enc[16 * 15]; /* CMAC; XCBC: K1's */
	_Alignas(16) uint8_t sk1[16];	   /* CMAC K1; XCBC K2 */
	_Alignas(16) uint8_t sk2[16];	   /* CMAC K2; XCBC K3 */
	/* For OpenSSL: the HMAC key (hashed when longer than a block),
	 * the CMAC or XCBC key. */
	uint8_t raw[AESNI_AUTH_RAW];
	uint16_t raw_len;
};

int aesni_auth_session_init(struct session *s, void *mgr, const uint8_t *key,
			    size_t key_len);
/* Fetch (probe) and free (fini) the OpenSSL objects of the fallback for
 * messages no job takes, once for all workers. 0 or -ENODEV. */
int aesni_auth_probe(void);
void aesni_auth_fini(void);
/* Run or submit op; 1 when a job was submitted (flush before returning
 * from process), 0 when op is done. slot: the op's index in its burst
 * (< WORKER_BURST), which names its scratch for the computed MAC. */
int aesni_auth_op(void *mgr, struct engine_op *op, unsigned slot);
/* A completed job of aesni_auth_op (from aesni_job_done). */
void aesni_auth_job_done(void *job);

/* ---- openssl (openssl_auth.c) ---- */

struct ossl_auth;
struct ossl_auth *ossl_auth_new(void);
void ossl_auth_free(struct ossl_auth *a);
int ossl_auth_session_init(struct session *s, const uint8_t *key,
			   size_t key_len);
/* Returns op's CRD_ST_*. */
int ossl_auth_run(struct ossl_auth *a, struct engine_op *op);
/* Overwrite the key state a burst left in the contexts. */
void ossl_auth_burst_end(struct ossl_auth *a);

#endif
