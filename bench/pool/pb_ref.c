/* SPDX-License-Identifier: MIT */
/*
 * The algorithms the bench runs and an OpenSSL reference for each, so
 * that a fast figure is never a figure for wrong output: every flow's
 * first pass is compared with it byte for byte (pb_flow_verify).
 */
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "poolbench.h"

const struct pb_alg pb_gcm128 = {
	.name = "aes-128-gcm",
	.alg = CC_ALG_AES_GCM,
	.key_len = 16,
	.tag_len = 16,
	.iv_len = 12,
};

const struct pb_alg pb_null = {
	.name = "null",
	.alg = CC_ALG_NULL,
	.engine = "null",
};

/* IPsec ESP as the kernel's authenc(hmac(sha1),cbc(aes)) runs it: the
 * 8-byte ESP header (SPI, sequence number) is the AAD, the MAC covers
 * header || ciphertext and is truncated to 96 bits. */
const struct pb_alg pb_esp_sha1 = {
	.name = "aes-192-cbc-hmac-sha1",
	.alg = CC_ALG_AES_CBC_HMAC_SHA1,
	.key_len = 24,
	.auth_key_len = 20,
	.tag_len = 12,
	.iv_len = 16,
	.aad_len = 8,
};

/* The same with digest_null: the header travels along, nothing is MACed. */
const struct pb_alg pb_esp_null = {
	.name = "aes-192-cbc-null",
	.alg = CC_ALG_AES_CBC_NULL,
	.key_len = 24,
	.iv_len = 16,
	.aad_len = 8,
};

static int cipher(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv,
		  const uint8_t *aad, uint32_t aad_len, const uint8_t *in,
		  uint8_t *out, uint32_t len, uint8_t *tag, unsigned tag_len)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n, ok;

	if (!ctx)
		return -1;
	ok = EVP_EncryptInit_ex(ctx, c, NULL, key, iv) &&
	     EVP_CIPHER_CTX_set_padding(ctx, 0);
	if (ok && aad_len)
		ok = EVP_EncryptUpdate(ctx, NULL, &n, aad, (int)aad_len);
	if (ok && len)
		ok = EVP_EncryptUpdate(ctx, out, &n, in, (int)len);
	if (ok)
		ok = EVP_EncryptFinal_ex(ctx, out + len, &n);
	if (ok && tag_len)
		ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG,
					 (int)tag_len, tag);
	EVP_CIPHER_CTX_free(ctx);
	return ok ? 0 : -1;
}

int pb_ref_encrypt(const struct pb_alg *a, const uint8_t *key,
		   const uint8_t *auth_key, const uint8_t *iv,
		   const uint8_t *aad, const uint8_t *in, uint8_t *out,
		   uint32_t len, uint8_t *tag)
{
	switch (a->alg) {
	case CC_ALG_NULL:
		memmove(out, in, len);
		return 0;
	case CC_ALG_AES_GCM:
		if (a->key_len != 16 || a->iv_len != 12)
			return -1;
		return cipher(EVP_aes_128_gcm(), key, iv, aad, a->aad_len, in,
			      out, len, tag, a->tag_len);
	case CC_ALG_AES_CBC_NULL:
		return cipher(EVP_aes_192_cbc(), key, iv, NULL, 0, in, out, len,
			      NULL, 0);
	case CC_ALG_AES_CBC_HMAC_SHA1: {
		/* Encrypt-then-MAC over aad || ciphertext. */
		uint8_t msg[PB_AAD_MAX + 2048], mac[EVP_MAX_MD_SIZE];
		unsigned mac_len = 0;

		if (a->aad_len + (size_t)len > sizeof(msg) ||
		    cipher(EVP_aes_192_cbc(), key, iv, NULL, 0, in, out, len,
			   NULL, 0))
			return -1;
		memcpy(msg, aad, a->aad_len);
		memcpy(msg + a->aad_len, out, len);
		if (!HMAC(EVP_sha1(), auth_key, a->auth_key_len, msg,
			  a->aad_len + (size_t)len, mac, &mac_len) ||
		    mac_len < a->tag_len)
			return -1;
		memcpy(tag, mac, a->tag_len);
		return 0;
	}
	default:
		return -1;
	}
}
