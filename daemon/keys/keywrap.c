/* SPDX-License-Identifier: MIT */
#include "keywrap.h"

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

/* RFC 3394 section 2.2.3.1, RFC 5649 section 3. */
static const uint8_t kw_iv[KW_SEMIBLOCK] = { 0xa6, 0xa6, 0xa6, 0xa6,
					     0xa6, 0xa6, 0xa6, 0xa6 };
static const uint8_t kwp_aiv[4] = { 0xa6, 0x59, 0x59, 0xa6 };

/* One AES-ECB context, one direction; wiped by EVP_CIPHER_CTX_free. */
static EVP_CIPHER_CTX *block_new(const uint8_t *kek, size_t kek_len, int enc)
{
	const EVP_CIPHER *c = kek_len == 16   ? EVP_aes_128_ecb()
			      : kek_len == 24 ? EVP_aes_192_ecb()
					      : EVP_aes_256_ecb();
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (!ctx)
		return NULL;
	if (!EVP_CipherInit_ex(ctx, c, NULL, kek, NULL, enc) ||
	    !EVP_CIPHER_CTX_set_padding(ctx, 0)) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static int block(EVP_CIPHER_CTX *ctx, uint8_t b[16])
{
	int n = 0;

	return EVP_CipherUpdate(ctx, b, &n, b, 16) && n == 16 ? 0 : -ENOMEM;
}

static int kek_ok(size_t kek_len)
{
	return kek_len == 16 || kek_len == 24 || kek_len == 32;
}

static void xor_t(uint8_t a[KW_SEMIBLOCK], uint64_t t)
{
	for (int k = 7; k >= 0; k--, t >>= 8)
		a[k] ^= (uint8_t)t;
}

/*
 * W (RFC 3394 2.2.1, the index form): a is the 8-byte initial value;
 * r holds n >= 2 semiblocks, replaced in place; a ends as C[0].
 */
static int wrap_w(EVP_CIPHER_CTX *ctx, uint8_t a[KW_SEMIBLOCK], uint8_t *r,
		  size_t n)
{
	uint8_t b[16];
	int err = 0;

	for (uint64_t j = 0; j < 6 && !err; j++)
		for (size_t i = 0; i < n && !err; i++) {
			memcpy(b, a, 8);
			memcpy(b + 8, r + 8 * i, 8);
			err = block(ctx, b);
			memcpy(a, b, 8);
			xor_t(a, n * j + i + 1);
			memcpy(r + 8 * i, b + 8, 8);
		}
	OPENSSL_cleanse(b, sizeof(b));
	return err;
}

/* W^-1 (2.2.2): a starts as C[0] and ends as the recovered initial value. */
static int unwrap_w(EVP_CIPHER_CTX *ctx, uint8_t a[KW_SEMIBLOCK], uint8_t *r,
		    size_t n)
{
	uint8_t b[16];
	int err = 0;

	for (uint64_t j = 6; j-- > 0 && !err;)
		for (size_t i = n; i-- > 0 && !err;) {
			memcpy(b, a, 8);
			xor_t(b, n * j + i + 1);
			memcpy(b + 8, r + 8 * i, 8);
			err = block(ctx, b);
			memcpy(a, b, 8);
			memcpy(r + 8 * i, b + 8, 8);
		}
	OPENSSL_cleanse(b, sizeof(b));
	return err;
}

size_t kw_wrapped_len(size_t n)
{
	if (n < 16 || n % 8 || n > KW_MAX_INPUT)
		return 0;
	return n + 8;
}

size_t kwp_wrapped_len(size_t n)
{
	if (n < 1 || n > KW_MAX_INPUT)
		return 0;
	return 8 + (n + 7) / 8 * 8;
}

int kw_wrap(const uint8_t *kek, size_t kek_len, const uint8_t *in,
	    size_t in_len, uint8_t *out, size_t out_cap)
{
	size_t len = kw_wrapped_len(in_len);
	uint8_t a[KW_SEMIBLOCK];

	if (!kek_ok(kek_len) || !len)
		return -EINVAL;
	if (out_cap < len)
		return -ENOSPC;
	EVP_CIPHER_CTX *ctx = block_new(kek, kek_len, 1);
	if (!ctx)
		return -ENOMEM;
	memcpy(a, kw_iv, 8);
	memmove(out + 8, in, in_len);
	int err = wrap_w(ctx, a, out + 8, in_len / 8);
	EVP_CIPHER_CTX_free(ctx);
	memcpy(out, a, 8);
	if (err) {
		OPENSSL_cleanse(out, len);
		return err;
	}
	return (int)len;
}

int kw_unwrap(const uint8_t *kek, size_t kek_len, const uint8_t *in,
	      size_t in_len, uint8_t *out, size_t out_cap)
{
	uint8_t a[KW_SEMIBLOCK];

	if (!kek_ok(kek_len) || in_len < 24 || in_len % 8 ||
	    in_len > KW_MAX_INPUT + 8)
		return -EINVAL;
	size_t len = in_len - 8;
	if (out_cap < len)
		return -ENOSPC;
	EVP_CIPHER_CTX *ctx = block_new(kek, kek_len, 0);
	if (!ctx)
		return -ENOMEM;
	memcpy(a, in, 8);
	memmove(out, in + 8, len);
	int err = unwrap_w(ctx, a, out, len / 8);
	EVP_CIPHER_CTX_free(ctx);
	if (!err && CRYPTO_memcmp(a, kw_iv, 8))
		err = -EBADMSG;
	if (err) {
		OPENSSL_cleanse(out, len);
		return err;
	}
	return (int)len;
}

int kwp_wrap(const uint8_t *kek, size_t kek_len, const uint8_t *in,
	     size_t in_len, uint8_t *out, size_t out_cap)
{
	size_t len = kwp_wrapped_len(in_len);
	size_t padded = len - 8;
	uint8_t a[KW_SEMIBLOCK];
	int err;

	if (!kek_ok(kek_len) || !len)
		return -EINVAL;
	if (out_cap < len)
		return -ENOSPC;
	EVP_CIPHER_CTX *ctx = block_new(kek, kek_len, 1);
	if (!ctx)
		return -ENOMEM;
	memcpy(a, kwp_aiv, 4);
	for (int k = 0; k < 4; k++)
		a[4 + k] = (uint8_t)(in_len >> (24 - 8 * k));
	memmove(out + 8, in, in_len);
	memset(out + 8 + in_len, 0, padded - in_len);
	if (padded == 8) {
		/* One semiblock: a single AES block, not W (5649 4.1). */
		uint8_t b[16];
		memcpy(b, a, 8);
		memcpy(b + 8, out + 8, 8);
		err = block(ctx, b);
		memcpy(out, b, 16);
		OPENSSL_cleanse(b, sizeof(b));
	} else {
		err = wrap_w(ctx, a, out + 8, padded / 8);
		memcpy(out, a, 8);
	}
	EVP_CIPHER_CTX_free(ctx);
	if (err) {
		OPENSSL_cleanse(out, len);
		return err;
	}
	return (int)len;
}

/* All-ones when x < y, else zero, without a branch; both below 2^63
 * (every length here is below 2^32). */
static uint32_t ct_lt(uint64_t x, uint64_t y)
{
	return (uint32_t)0 - (uint32_t)((x - y) >> 63);
}

int kwp_unwrap(const uint8_t *kek, size_t kek_len, const uint8_t *in,
	       size_t in_len, uint8_t *out, size_t out_cap)
{
	uint8_t a[KW_SEMIBLOCK];
	int err;

	if (!kek_ok(kek_len) || in_len < 16 || in_len % 8 ||
	    in_len > KW_MAX_INPUT + 15)
		return -EINVAL;
	size_t padded = in_len - 8;
	if (out_cap < padded)
		return -ENOSPC;
	EVP_CIPHER_CTX *ctx = block_new(kek, kek_len, 0);
	if (!ctx)
		return -ENOMEM;
	if (padded == 8) {
		uint8_t b[16];
		memcpy(b, in, 16);
		err = block(ctx, b);
		memcpy(a, b, 8);
		memcpy(out, b + 8, 8);
		OPENSSL_cleanse(b, sizeof(b));
	} else {
		memcpy(a, in, 8);
		memmove(out, in + 8, padded);
		err = unwrap_w(ctx, a, out, padded / 8);
	}
	EVP_CIPHER_CTX_free(ctx);

	/* 5649 3: AIV prefix, 8*(n-1) < MLI <= 8*n, the pad bytes zero. All
	 * folded into bad without a branch on the recovered values. */
	uint64_t mli = (uint64_t)a[4] << 24 | (uint64_t)a[5] << 16 |
		       (uint64_t)a[6] << 8 | a[7];
	uint32_t bad =
		(uint32_t)0 - (uint32_t)(CRYPTO_memcmp(a, kwp_aiv, 4) != 0);
	bad |= ~ct_lt(padded - 8, mli); /* need padded - 8 < mli */
	bad |= ct_lt(padded, mli);	/* need mli <= padded */
	uint8_t pad = 0;
	for (size_t k = padded - 8; k < padded; k++)
		pad |= out[k] & (uint8_t)~ct_lt(k, mli); /* k >= mli: pad */
	bad |= (uint32_t)0 - (uint32_t)((pad + 0xffu) >> 8);
	if (!err && bad)
		err = -EBADMSG;
	OPENSSL_cleanse(a, sizeof(a));
	if (err) {
		OPENSSL_cleanse(out, padded);
		return err;
	}
	return (int)mli;
}
