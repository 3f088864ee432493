/* SPDX-License-Identifier: MIT */
/*
 * HMAC for the aesni engine's authenc algorithms (aesni_hmac.h): the
 * pads a session precomputes with ipsec-mb's one-block hashes, and the
 * HMAC of the empty message. Every stack copy of the key or a pad is
 * wiped before return.
 */
#include "aesni_hmac.h"

#include <string.h>

#include <cryptod/ring_abi.h>

const struct aesni_sha *aesni_sha_of(unsigned alg)
{
	/* by crd_alg_sha_idx(); no authenc row has SHA-224 */
	static const struct aesni_sha sha[CRD_SHA_N] = {
		{ IMB_AUTH_HMAC_SHA_1, 64, 20, EVP_sha1 },
		{ IMB_AUTH_HMAC_SHA_224, 64, 28, EVP_sha224 },
		{ IMB_AUTH_HMAC_SHA_256, 64, 32, EVP_sha256 },
		{ IMB_AUTH_HMAC_SHA_384, 128, 48, EVP_sha384 },
		{ IMB_AUTH_HMAC_SHA_512, 128, 64, EVP_sha512 },
	};
	int i = crd_alg_sha_idx(alg);
	return crd_alg_kind(alg) == CRD_KIND_AUTHENC && i >= 0 ? &sha[i] : NULL;
}

/* One compression of a block (the HMAC pads): out gets the whole state. */
static void aesni_sha_block(IMB_MGR *m, const struct aesni_sha *h,
			    const uint8_t *in, uint8_t *out)
{
	switch (h->hmac) {
	case IMB_AUTH_HMAC_SHA_1:
		IMB_SHA1_ONE_BLOCK(m, in, out);
		break;
	case IMB_AUTH_HMAC_SHA_256:
		IMB_SHA256_ONE_BLOCK(m, in, out);
		break;
	case IMB_AUTH_HMAC_SHA_384:
		IMB_SHA384_ONE_BLOCK(m, in, out);
		break;
	default:
		IMB_SHA512_ONE_BLOCK(m, in, out);
		break;
	}
}

/* The digest of len bytes. */
static void aesni_sha_full(IMB_MGR *m, const struct aesni_sha *h,
			   const uint8_t *in, uint64_t len, uint8_t *out)
{
	switch (h->hmac) {
	case IMB_AUTH_HMAC_SHA_1:
		IMB_SHA1(m, in, len, out);
		break;
	case IMB_AUTH_HMAC_SHA_256:
		IMB_SHA256(m, in, len, out);
		break;
	case IMB_AUTH_HMAC_SHA_384:
		IMB_SHA384(m, in, len, out);
		break;
	default:
		IMB_SHA512(m, in, len, out);
		break;
	}
}

void aesni_hmac_pads(IMB_MGR *m, const struct aesni_sha *h, const uint8_t *key,
		     size_t len, uint8_t *ipad, uint8_t *opad)
{
	uint8_t block[AESNI_SHA_BLOCK_MAX] = { 0 }, b[AESNI_SHA_BLOCK_MAX];
	memcpy(block, key, len);
	for (unsigned i = 0; i < h->block; i++)
		b[i] = block[i] ^ 0x36;
	aesni_sha_block(m, h, b, ipad);
	for (unsigned i = 0; i < h->block; i++)
		b[i] = block[i] ^ 0x5c;
	aesni_sha_block(m, h, b, opad);
	explicit_bzero(block, sizeof(block));
	explicit_bzero(b, sizeof(b));
}

void aesni_hmac_empty(IMB_MGR *m, const struct aesni_sha *h, const uint8_t *key,
		      size_t len, uint8_t *out)
{
	uint8_t buf[AESNI_SHA_BLOCK_MAX + AESNI_SHA_DIGEST_MAX] = { 0 };
	uint8_t inner[AESNI_SHA_DIGEST_MAX];
	for (unsigned i = 0; i < h->block; i++)
		buf[i] = (i < len ? key[i] : 0) ^ 0x36;
	aesni_sha_full(m, h, buf, h->block, inner);
	for (unsigned i = 0; i < h->block; i++)
		buf[i] = (i < len ? key[i] : 0) ^ 0x5c;
	memcpy(buf + h->block, inner, h->digest);
	aesni_sha_full(m, h, buf, h->block + h->digest, out);
	explicit_bzero(buf, sizeof(buf));
	explicit_bzero(inner, sizeof(inner));
}
