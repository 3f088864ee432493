/* SPDX-License-Identifier: MIT */
/*
 * The aesni engine's HMAC half of authenc: which ipsec-mb hash an
 * algorithm uses, and what a session precomputes for it.
 */
#ifndef CRYPTOD_AESNI_HMAC_H
#define CRYPTOD_AESNI_HMAC_H

#include <stddef.h>
#include <stdint.h>

#include <intel-ipsec-mb.h>
#include <openssl/evp.h>

enum { AESNI_SHA_BLOCK_MAX = 128, AESNI_SHA_DIGEST_MAX = 64 };

/* The hash of an authenc algorithm's HMAC. */
struct aesni_sha {
	IMB_HASH_ALG hmac;
	unsigned block, digest;	   /* bytes */
	const EVP_MD *(*md)(void); /* OpenSSL's, for aesni_authenc_big */
};

/* NULL when alg is not authenc. */
const struct aesni_sha *aesni_sha_of(unsigned alg);

/* HMAC inner and outer states (the whole state: AESNI_SHA_DIGEST_MAX
 * bytes each at most): one compression of key ^ ipad / opad. Keys are at
 * most one block (the capability rows: 64 bytes). */
void aesni_hmac_pads(IMB_MGR *m, const struct aesni_sha *h, const uint8_t *key,
		     size_t len, uint8_t *ipad, uint8_t *opad);

/* HMAC(key, "") into out (h->digest bytes), with one-shot hashes:
 * ipsec-mb refuses jobs that hash nothing. */
void aesni_hmac_empty(IMB_MGR *m, const struct aesni_sha *h, const uint8_t *key,
		      size_t len, uint8_t *out);

#endif
