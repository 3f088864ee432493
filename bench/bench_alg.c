/* SPDX-License-Identifier: MIT */
/*
 * The algorithms the bench knows, in the order --alg all runs them: each
 * of the library's algorithms (include/cryptod/algs.h) at the key sizes
 * worth measuring. Names and tag lengths come from the library's table
 * (cc_alg_name(), cc_alg_tag_len()), with the key size in bits spliced in
 * as openssl and cryptoctl spell it ("aes-gcm" at 16 bytes:
 * "aes-128-gcm"). Sizes and semantics follow docs/algorithms.md: GCM/GMAC
 * take a 12-byte IV; CBC/CTR/XTS a 16-byte IV; ECB none; the ESP-style
 * CBC+HMAC takes a digest-sized HMAC key.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define GCM(k)                                                                 \
	{                                                                      \
		.alg = CC_ALG_AES_GCM, .key_len = k, .iv_len = 12, .block = 1, \
		.aad = true                                                    \
	}
#define GMAC(k)                                                                \
	{                                                                      \
		.alg = CC_ALG_AES_GMAC, .key_len = k, .iv_len = 12,            \
		.block = 1, .tag_only = true                                   \
	}
#define CIPHER(a, k, iv, blk, min)                                             \
	{                                                                      \
		.alg = a, .key_len = k, .iv_len = iv, .block = blk,            \
		.min_len = min                                                 \
	}
#define AUTHENC(a, k, ak)                                                      \
	{                                                                      \
		.alg = a, .key_len = k, .auth_key_len = ak, .iv_len = 16,      \
		.block = 16, .aad = true                                       \
	}
/* AES-CTR + HMAC: any length */
#define AUTHENC_CTR(a, k, ak)                                                  \
	{                                                                      \
		.alg = a, .key_len = k, .auth_key_len = ak, .iv_len = 16,      \
		.block = 1, .aad = true                                        \
	}
/* CCM with TLS's 12-byte nonce; ChaCha20-Poly1305 (RFC 8439) */
#define AEAD(a, k)                                                             \
	{                                                                      \
		.alg = a, .key_len = k, .iv_len = 12, .block = 1, .aad = true  \
	}
/* Authentication only, no IV: MACs (a digest-sized key for HMAC) and
 * digests (no key) */
#define MAC(a, k)                                                              \
	{                                                                      \
		.alg = a, .key_len = k, .block = 1, .tag_only = true           \
	}

/* Named by bench_alg_names(). */
static struct bench_alg algs[] = {
	GCM(16),
	GCM(24),
	GCM(32),
	GMAC(16),
	GMAC(24),
	GMAC(32),
	CIPHER(CC_ALG_AES_CBC, 16, 16, 16, 16),
	CIPHER(CC_ALG_AES_CBC, 24, 16, 16, 16),
	CIPHER(CC_ALG_AES_CBC, 32, 16, 16, 16),
	CIPHER(CC_ALG_AES_CTR, 16, 16, 1, 1),
	CIPHER(CC_ALG_AES_CTR, 24, 16, 1, 1),
	CIPHER(CC_ALG_AES_CTR, 32, 16, 1, 1),
	CIPHER(CC_ALG_AES_ECB, 16, 0, 16, 16),
	CIPHER(CC_ALG_AES_ECB, 24, 0, 16, 16),
	CIPHER(CC_ALG_AES_ECB, 32, 0, 16, 16),
	{ .alg = CC_ALG_AES_XTS,
	  .key_len = 32,
	  .iv_len = 16,
	  .block = 1,
	  .min_len = 16,
	  .extra_size = 4096 },
	{ .alg = CC_ALG_AES_XTS,
	  .key_len = 64,
	  .iv_len = 16,
	  .block = 1,
	  .min_len = 16,
	  .extra_size = 4096 },
	AUTHENC(CC_ALG_AES_CBC_HMAC_SHA1, 16, 20),
	AUTHENC(CC_ALG_AES_CBC_HMAC_SHA1, 24, 20),
	AUTHENC(CC_ALG_AES_CBC_HMAC_SHA1, 32, 20),
	AUTHENC(CC_ALG_AES_CBC_HMAC_SHA256, 16, 32),
	AUTHENC(CC_ALG_AES_CBC_HMAC_SHA256, 24, 32),
	AUTHENC(CC_ALG_AES_CBC_HMAC_SHA256, 32, 32),
	CIPHER(CC_ALG_AES_CBC_NULL, 16, 16, 16, 16),
	CIPHER(CC_ALG_AES_CBC_NULL, 24, 16, 16, 16),
	CIPHER(CC_ALG_AES_CBC_NULL, 32, 16, 16, 16),
	AEAD(CC_ALG_AES_CCM, 16),
	AEAD(CC_ALG_AES_CCM, 24),
	AEAD(CC_ALG_AES_CCM, 32),
	AEAD(CC_ALG_CHACHA20_POLY1305, 32),
	CIPHER(CC_ALG_CHACHA20, 32, 16, 1, 1),
	MAC(CC_ALG_HMAC_SHA1, 20),
	MAC(CC_ALG_HMAC_SHA224, 28),
	MAC(CC_ALG_HMAC_SHA256, 32),
	MAC(CC_ALG_HMAC_SHA384, 48),
	MAC(CC_ALG_HMAC_SHA512, 64),
	MAC(CC_ALG_SHA1, 0),
	MAC(CC_ALG_SHA224, 0),
	MAC(CC_ALG_SHA256, 0),
	MAC(CC_ALG_SHA384, 0),
	MAC(CC_ALG_SHA512, 0),
	MAC(CC_ALG_AES_CMAC, 16),
	MAC(CC_ALG_AES_CMAC, 24),
	MAC(CC_ALG_AES_CMAC, 32),
	MAC(CC_ALG_AES_XCBC_MAC, 16),
	AUTHENC(CC_ALG_AES_CBC_HMAC_SHA384, 16, 48),
	AUTHENC(CC_ALG_AES_CBC_HMAC_SHA384, 32, 48),
	AUTHENC(CC_ALG_AES_CBC_HMAC_SHA512, 16, 64),
	AUTHENC(CC_ALG_AES_CBC_HMAC_SHA512, 32, 64),
	AUTHENC_CTR(CC_ALG_AES_CTR_HMAC_SHA1, 16, 20),
	AUTHENC_CTR(CC_ALG_AES_CTR_HMAC_SHA1, 32, 20),
	AUTHENC_CTR(CC_ALG_AES_CTR_HMAC_SHA256, 16, 32),
	AUTHENC_CTR(CC_ALG_AES_CTR_HMAC_SHA256, 32, 32),
	/* ZUC 128-EEA3 (3GPP): whole bytes of its 65504-bit maximum */
	{ .alg = CC_ALG_ZUC_EEA3,
	  .key_len = 16,
	  .iv_len = 16,
	  .block = 1,
	  .min_len = 1,
	  .bits = true,
	  .max_len = 65504 / 8 },
	CIPHER(CC_ALG_NULL, 0, 0, 1, 0),
};
static char names[sizeof(algs) / sizeof(algs[0])][40];

/* Name every row from the library's table: "aes-gcm" with a 16-byte key
 * is "aes-128-gcm" (XTS: two keys, "aes-128-xts" at 32 bytes); the tag
 * is the algorithm's default. */
static void bench_alg_names(void)
{
	static bool done;

	if (done)
		return;
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		struct bench_alg *a = &algs[i];
		const char *base = cc_alg_name(a->alg);
		unsigned bits =
			a->key_len * 8 / (a->alg == CC_ALG_AES_XTS ? 2 : 1);

		/* XCBC-MAC has one key size: no bits in its name */
		if (bits && !strncmp(base, "aes-", 4) &&
		    a->alg != CC_ALG_AES_XCBC_MAC)
			snprintf(names[i], sizeof(names[i]), "aes-%u-%s", bits,
				 base + 4);
		else
			snprintf(names[i], sizeof(names[i]), "%s", base);
		a->name = names[i];
		a->tag_len = (uint8_t)cc_alg_tag_len(a->alg);
	}
	done = true;
}

_Static_assert(sizeof(algs) / sizeof(algs[0]) <= BENCH_MAX_ALGS,
	       "BENCH_MAX_ALGS holds --alg all");

unsigned bench_alg_count(void)
{
	return sizeof(algs) / sizeof(algs[0]);
}

const struct bench_alg *bench_alg_at(unsigned i)
{
	bench_alg_names();
	return i < bench_alg_count() ? &algs[i] : NULL;
}

const struct bench_alg *bench_alg_find(const char *name)
{
	unsigned i;

	bench_alg_names();
	for (i = 0; i < bench_alg_count(); i++)
		if (!strcmp(algs[i].name, name))
			return &algs[i];
	return NULL;
}

bool bench_alg_is_cbc(const struct bench_alg *a)
{
	return a->alg == CC_ALG_AES_CBC || a->alg == CC_ALG_AES_CBC_NULL;
}
