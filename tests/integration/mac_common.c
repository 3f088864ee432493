// SPDX-License-Identifier: MIT
/*
 * The MACs and digests for the every-algorithm tests (modes_common.h):
 * their rows of docs/algorithms.md as data, kept out of mc_specs (which
 * the cipher-shaped tests iterate) but found by mc_spec_of(); OpenSSL
 * references (EVP_MAC HMAC and CMAC, EVP_Digest) and, since OpenSSL has
 * no XCBC, RFC 3566 written out block by block on EVP AES-128-ECB; and
 * what an engine's capability rows take.
 */
#include "modes_common.h"

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#define MC_LIST3(a, b, c) a, b, c
#define MAC_SPEC(a, n, klen, nk, kany, def, lo)                                \
	{                                                                      \
		.alg = (a), .name = (n), .key_lens = { klen },                 \
		.n_key_lens = (nk), .key_any = (kany), .tag_def = (def),       \
		.tag_lo = (lo), .tag_hi = (def) > 16 ? (def) : 16,             \
		.aad = MC_AAD_ZERO, .block = 1,                                \
		.engines = { "aesni", "openssl" },                             \
	}
#define HMAC_SPEC(a, n, d) MAC_SPEC(a, n, 0, 0, 256, d, 4)
#define SHA_SPEC(a, n, d) MAC_SPEC(a, n, 0, 0, 0, d, 4)

const struct mc_spec mc_mac_specs[] = {
	HMAC_SPEC(CC_ALG_HMAC_SHA1, "hmac-sha1", 20),
	HMAC_SPEC(CC_ALG_HMAC_SHA224, "hmac-sha224", 28),
	HMAC_SPEC(CC_ALG_HMAC_SHA256, "hmac-sha256", 32),
	HMAC_SPEC(CC_ALG_HMAC_SHA384, "hmac-sha384", 48),
	HMAC_SPEC(CC_ALG_HMAC_SHA512, "hmac-sha512", 64),
	SHA_SPEC(CC_ALG_SHA1, "sha1", 20),
	SHA_SPEC(CC_ALG_SHA224, "sha224", 28),
	SHA_SPEC(CC_ALG_SHA256, "sha256", 32),
	SHA_SPEC(CC_ALG_SHA384, "sha384", 48),
	SHA_SPEC(CC_ALG_SHA512, "sha512", 64),
	MAC_SPEC(CC_ALG_AES_CMAC, "aes-cmac", MC_LIST3(16, 24, 32), 3, 0, 16,
		 4),
	MAC_SPEC(CC_ALG_AES_XCBC_MAC, "aes-xcbc-mac", 16, 1, 0, 12, 4),
};
const unsigned mc_n_mac_specs = sizeof(mc_mac_specs) / sizeof(mc_mac_specs[0]);

/* One AES-128 block: out = E(key, in). */
static int mc_aes_block(EVP_CIPHER_CTX *x, const uint8_t *key,
			const uint8_t *in, uint8_t *out)
{
	int n = 0;

	return EVP_EncryptInit_ex(x, EVP_aes_128_ecb(), NULL, key, NULL) &&
	       EVP_CIPHER_CTX_set_padding(x, 0) &&
	       EVP_EncryptUpdate(x, out, &n, in, 16) && n == 16;
}

/* RFC 3566 section 4, step by step. */
static int mc_ref_xcbc(const uint8_t *key, const uint8_t *m, uint32_t len,
		       uint8_t *mac)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	uint8_t k[3][16], c[16] = { 0 }, blk[16];
	uint32_t n = len ? (len + 15) / 16 : 1, i, j;
	int ok = x != NULL;

	/* K1, K2, K3 = E(K, 0x01..), E(K, 0x02..), E(K, 0x03..) */
	for (i = 0; ok && i < 3; i++) {
		memset(blk, (int)i + 1, 16);
		ok = mc_aes_block(x, key, blk, k[i]);
	}
	/* E[i] = E(K1, M[i] ^ E[i-1]) for every block but the last */
	for (i = 0; ok && i + 1 < n; i++) {
		for (j = 0; j < 16; j++)
			blk[j] = m[16 * i + j] ^ c[j];
		ok = mc_aes_block(x, k[0], blk, c);
	}
	if (ok) {
		uint32_t rest = len - 16 * (n - 1);
		const uint8_t *kx = rest == 16 ? k[1] : k[2];

		memset(blk, 0, 16);
		memcpy(blk, m + 16 * (n - 1), rest);
		if (rest < 16)
			blk[rest] = 0x80; /* 10* padding */
		for (j = 0; j < 16; j++)
			blk[j] ^= c[j] ^ kx[j];
		ok = mc_aes_block(x, k[0], blk, mac);
	}
	EVP_CIPHER_CTX_free(x);
	OPENSSL_cleanse(k, sizeof(k));
	return ok ? 0 : -EIO;
}

int mc_ref_mac(const struct mc_key *k, const uint8_t *in, uint32_t len,
	       uint8_t *md)
{
	static const char *const cbc[3] = { "AES-128-CBC", "AES-192-CBC",
					    "AES-256-CBC" };
	const char *name = mc_hmac_digest(k->alg);
	static const uint8_t none;
	unsigned n = 0;
	size_t outl = 0;

	if (!len)
		in = &none;
	switch (k->alg) {
	case CC_ALG_AES_XCBC_MAC:
		return mc_ref_xcbc(k->key, in, len, md);
	case CC_ALG_AES_CMAC:
		return EVP_Q_mac(NULL, "CMAC", NULL, cbc[(k->key_len - 16) / 8],
				 NULL, k->key, k->key_len, in, len, md, 16,
				 &outl)
			       ? 0
			       : -EIO;
	case CC_ALG_SHA1:
	case CC_ALG_SHA224:
	case CC_ALG_SHA256:
	case CC_ALG_SHA384:
	case CC_ALG_SHA512:
		return EVP_Digest(in, len, md, &n, EVP_get_digestbyname(name),
				  NULL)
			       ? 0
			       : -EIO;
	default:
		if (!name)
			return -EIO;
		return EVP_Q_mac(NULL, "HMAC", NULL, name, NULL,
				 k->key_len ? k->key : &none, k->key_len, in,
				 len, md, 64, &outl)
			       ? 0
			       : -EIO;
	}
}

int mc_engine_takes(struct cc_conn *conn, enum cc_alg alg, const char *engine,
		    unsigned key_len, unsigned tag_len)
{
	/* The table does not change while a daemon runs: fetched once. */
	static struct cc_alg_caps *caps;
	static unsigned n;

	if (!caps && cc_capabilities_get(conn, &caps, &n))
		return 0;
	for (unsigned i = 0; i < n; i++) {
		if (caps[i].alg != alg || strcmp(caps[i].engine, engine))
			continue;
		if (!tag_len)
			tag_len = cc_alg_tag_len(alg);
		return fx_range_has(caps[i].key_sizes, caps[i].n_key_sizes,
				    key_len) &&
		       fx_range_has(caps[i].tag_sizes, caps[i].n_tag_sizes,
				    tag_len);
	}
	return 0;
}
