/* SPDX-License-Identifier: MIT */
/*
 * The algorithms cryptod-bench knows, in the order --alg all runs them.
 * Sizes and semantics follow docs/algorithms.md: GCM/GMAC take a 12-byte
 * IV and give a 16-byte tag; CBC/CTR/XTS a 16-byte IV; ECB none; the
 * ESP-style CBC+HMAC gives a 12 (SHA1) or 16 (SHA-256) byte ICV over
 * AAD || ciphertext, with a digest-sized HMAC key.
 */
#include <string.h>

#include "bench.h"

#define GCM(n, k)                                                              \
	{                                                                      \
		.name = n, .alg = CC_ALG_AES_GCM, .key_len = k, .tag_len = 16, \
		.iv_len = 12, .block = 1, .aad = true                          \
	}
#define GMAC(n, k)                                                             \
	{                                                                      \
		.name = n, .alg = CC_ALG_AES_GMAC, .key_len = k,               \
		.tag_len = 16, .iv_len = 12, .block = 1, .tag_only = true      \
	}
#define CIPHER(n, a, k, iv, blk, min)                                          \
	{                                                                      \
		.name = n, .alg = a, .key_len = k, .iv_len = iv, .block = blk, \
		.min_len = min                                                 \
	}
#define AUTHENC(n, a, k, ak, t)                                                \
	{                                                                      \
		.name = n, .alg = a, .key_len = k, .auth_key_len = ak,         \
		.tag_len = t, .iv_len = 16, .block = 16, .aad = true           \
	}

static const struct bench_alg algs[] = {
	GCM("aes-128-gcm", 16),
	GCM("aes-192-gcm", 24),
	GCM("aes-256-gcm", 32),
	GMAC("aes-128-gmac", 16),
	GMAC("aes-192-gmac", 24),
	GMAC("aes-256-gmac", 32),
	CIPHER("aes-128-cbc", CC_ALG_AES_CBC, 16, 16, 16, 16),
	CIPHER("aes-192-cbc", CC_ALG_AES_CBC, 24, 16, 16, 16),
	CIPHER("aes-256-cbc", CC_ALG_AES_CBC, 32, 16, 16, 16),
	CIPHER("aes-128-ctr", CC_ALG_AES_CTR, 16, 16, 1, 1),
	CIPHER("aes-192-ctr", CC_ALG_AES_CTR, 24, 16, 1, 1),
	CIPHER("aes-256-ctr", CC_ALG_AES_CTR, 32, 16, 1, 1),
	CIPHER("aes-128-ecb", CC_ALG_AES_ECB, 16, 0, 16, 16),
	CIPHER("aes-192-ecb", CC_ALG_AES_ECB, 24, 0, 16, 16),
	CIPHER("aes-256-ecb", CC_ALG_AES_ECB, 32, 0, 16, 16),
	{ .name = "aes-128-xts",
	  .alg = CC_ALG_AES_XTS,
	  .key_len = 32,
	  .iv_len = 16,
	  .block = 1,
	  .min_len = 16,
	  .extra_size = 4096 },
	{ .name = "aes-256-xts",
	  .alg = CC_ALG_AES_XTS,
	  .key_len = 64,
	  .iv_len = 16,
	  .block = 1,
	  .min_len = 16,
	  .extra_size = 4096 },
	AUTHENC("aes-128-cbc-hmac-sha1", CC_ALG_AES_CBC_HMAC_SHA1, 16, 20, 12),
	AUTHENC("aes-192-cbc-hmac-sha1", CC_ALG_AES_CBC_HMAC_SHA1, 24, 20, 12),
	AUTHENC("aes-256-cbc-hmac-sha1", CC_ALG_AES_CBC_HMAC_SHA1, 32, 20, 12),
	AUTHENC("aes-128-cbc-hmac-sha256", CC_ALG_AES_CBC_HMAC_SHA256, 16, 32,
		16),
	AUTHENC("aes-192-cbc-hmac-sha256", CC_ALG_AES_CBC_HMAC_SHA256, 24, 32,
		16),
	AUTHENC("aes-256-cbc-hmac-sha256", CC_ALG_AES_CBC_HMAC_SHA256, 32, 32,
		16),
	CIPHER("aes-128-cbc-null", CC_ALG_AES_CBC_NULL, 16, 16, 16, 16),
	CIPHER("aes-192-cbc-null", CC_ALG_AES_CBC_NULL, 24, 16, 16, 16),
	CIPHER("aes-256-cbc-null", CC_ALG_AES_CBC_NULL, 32, 16, 16, 16),
	CIPHER("null", CC_ALG_NULL, 0, 0, 1, 0),
};

_Static_assert(sizeof(algs) / sizeof(algs[0]) <= BENCH_MAX_ALGS,
	       "BENCH_MAX_ALGS holds --alg all");

unsigned bench_alg_count(void)
{
	return sizeof(algs) / sizeof(algs[0]);
}

const struct bench_alg *bench_alg_at(unsigned i)
{
	return i < bench_alg_count() ? &algs[i] : NULL;
}

const struct bench_alg *bench_alg_find(const char *name)
{
	unsigned i;

	for (i = 0; i < bench_alg_count(); i++)
		if (!strcmp(algs[i].name, name))
			return &algs[i];
	return NULL;
}

bool bench_alg_is_cbc(const struct bench_alg *a)
{
	return a->alg == CC_ALG_AES_CBC || a->alg == CC_ALG_AES_CBC_NULL;
}
