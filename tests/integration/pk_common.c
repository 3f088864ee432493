// SPDX-License-Identifier: MIT
#include "pk_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/x509.h>

int pk_fails;

EVP_PKEY *pk_keygen(enum cc_alg alg)
{
	switch (alg) {
	case CC_ALG_RSA_2048:
		return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	case CC_ALG_RSA_3072:
		return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)3072);
	case CC_ALG_RSA_4096:
		return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)4096);
	case CC_ALG_EC_P256:
		return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	case CC_ALG_EC_P384:
		return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384");
	case CC_ALG_EC_P521:
		return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-521");
	case CC_ALG_ED25519:
		return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	case CC_ALG_ED448:
		return EVP_PKEY_Q_keygen(NULL, NULL, "ED448");
	case CC_ALG_X25519:
		return EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
	case CC_ALG_X448:
		return EVP_PKEY_Q_keygen(NULL, NULL, "X448");
	default:
		return NULL;
	}
}

size_t pk_der(EVP_PKEY *k, int pub, uint8_t **der)
{
	int n;
	*der = NULL;
	if (pub) {
		n = i2d_PUBKEY(k, der);
	} else {
		PKCS8_PRIV_KEY_INFO *p8 = EVP_PKEY2PKCS8(k);
		n = p8 ? i2d_PKCS8_PRIV_KEY_INFO(p8, der) : -1;
		PKCS8_PRIV_KEY_INFO_free(p8);
	}
	return n > 0 ? (size_t)n : 0;
}

uint32_t pk_session(struct cc_conn *c, enum cc_alg alg, EVP_PKEY *k, int pub,
		    int *err)
{
	uint8_t *der;
	size_t n = pk_der(k, pub, &der);
	uint32_t sid = 0;
	struct cc_session_params p = { .alg = alg, .key = der, .key_len = n };
	*err = n ? cc_session_create(c, &p, &sid) : -ENOMEM;
	OPENSSL_clear_free(der, n);
	return *err ? 0 : sid;
}

const EVP_MD *pk_md(unsigned md)
{
	static const char *const names[] = { NULL,     "SHA1",	 "SHA224",
					     "SHA256", "SHA384", "SHA512" };
	return md && md < 6 ? EVP_get_digestbyname(names[md]) : NULL;
}

size_t pk_peer_bytes(EVP_PKEY *k, uint8_t *buf, size_t len)
{
	size_t n = len;
	if (EVP_PKEY_is_a(k, "EC"))
		return EVP_PKEY_get_octet_string_param(
			       k, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, buf, len,
			       &n)
			       ? n
			       : 0;
	return EVP_PKEY_get_raw_public_key(k, buf, &n) ? n : 0;
}

int pk_unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = strlen(hex);
	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return (int)(n / 2);
}
