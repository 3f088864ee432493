/* SPDX-License-Identifier: MIT */
/*
 * AEAD IV lengths through the provider, against OpenSSL's default
 * provider:
 *
 * - the provider takes exactly the lengths the default provider takes,
 *   set by the ctrl (EVP_CTRL_AEAD_SET_IVLEN) and as an init parameter:
 *   AES-GCM 1..128 bytes, ChaCha20-Poly1305 12 only (OpenSSL 3.0 refuses
 *   the shorter nonces 1.1.1 zero-padded: INVALID_IV_LENGTH);
 * - AES-GCM messages with IVs of 1..128 bytes (evp_test's 60..64 among
 *   them), one-shot and in several updates, encrypt and decrypt, equal
 *   to the default provider's bytes and tags, and every one run by the
 *   daemon (its message counter grows, no fallback: fallback = fail, the
 *   default, would fail them instead).
 *
 * Skips when the daemon is not built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "prov_fixture.h"

static OSSL_LIB_CTX *lib;

/* Does c take an n-byte IV? By the ctrl, or by an init parameter. */
static int takes_ctrl(EVP_CIPHER *c, size_t n)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int ok = EVP_EncryptInit_ex(x, c, NULL, NULL, NULL) &&
		 EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, (int)n, NULL) >
			 0;
	EVP_CIPHER_CTX_free(x);
	ERR_clear_error();
	return ok;
}

static int takes_param(EVP_CIPHER *c, size_t n)
{
	static const uint8_t key[32] = { 1 }, iv[256] = { 2 };
	OSSL_PARAM ps[] = { OSSL_PARAM_construct_size_t(
				    OSSL_CIPHER_PARAM_AEAD_IVLEN, &n),
			    OSSL_PARAM_END };
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int ok = EVP_EncryptInit_ex2(x, c, NULL, NULL, ps) &&
		 EVP_EncryptInit_ex2(x, NULL, key, iv, NULL);
	EVP_CIPHER_CTX_free(x);
	ERR_clear_error();
	return ok;
}

static void lengths(const char *name, size_t max)
{
	EVP_CIPHER *ref = EVP_CIPHER_fetch(NULL, name, NULL);
	EVP_CIPHER *cry = EVP_CIPHER_fetch(lib, name, "provider=cryptod");
	unsigned taken = 0;
	if (!ref || !cry) {
		FAIL("%s: not fetched", name);
		goto out;
	}
	for (size_t n = 0; n <= max; n++) {
		int r = takes_ctrl(ref, n), c = takes_ctrl(cry, n);
		if (r != c)
			FAIL("%s: a %zu-byte IV by the ctrl: default %s, "
			     "cryptod %s",
			     name, n, r ? "takes it" : "refuses",
			     c ? "takes it" : "refuses");
		r = takes_param(ref, n);
		c = takes_param(cry, n);
		if (r != c)
			FAIL("%s: a %zu-byte IV as a parameter: default %s, "
			     "cryptod %s",
			     name, n, r ? "takes it" : "refuses",
			     c ? "takes it" : "refuses");
		taken += c;
	}
	fprintf(stderr, "%s: the same %u of IV lengths 0..%zu taken\n", name,
		taken, max);
out:
	EVP_CIPHER_free(ref);
	EVP_CIPHER_free(cry);
}

/* One message: in -> out (len bytes) and the tag, in pieces of at most
 * cut bytes. 1 on success (decrypt: the tag verified). */
static int gcm(EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv,
	       size_t ivlen, const uint8_t *aad, size_t aad_len,
	       const uint8_t *in, uint8_t *out, size_t len, size_t cut,
	       uint8_t *tag)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int n, ok = EVP_CipherInit_ex(x, c, NULL, NULL, NULL, enc) &&
		    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, (int)ivlen,
					NULL) &&
		    EVP_CipherInit_ex(x, NULL, NULL, key, iv, enc) &&
		    (!aad_len ||
		     EVP_CipherUpdate(x, NULL, &n, aad, (int)aad_len));
	size_t done = 0;
	while (ok && done < len) {
		size_t k = len - done < cut ? len - done : cut;
		ok = EVP_CipherUpdate(x, out + done, &n, in + done, (int)k) &&
		     (size_t)n == k;
		done += k;
	}
	if (ok && !enc)
		ok = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag);
	ok = ok && EVP_CipherFinal_ex(x, out + done, &n);
	if (ok && enc)
		ok = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(x);
	return ok;
}

static void daemon_counts(uint64_t *msgs, uint64_t *fallbacks)
{
	OSSL_PROVIDER *p = OSSL_PROVIDER_load(lib, "cryptod");
	OSSL_PARAM ps[] = { OSSL_PARAM_uint64("cryptod-daemon-messages", msgs),
			    OSSL_PARAM_uint64("cryptod-fallbacks", fallbacks),
			    OSSL_PARAM_END };
	*msgs = *fallbacks = 0;
	if (!p || !OSSL_PROVIDER_get_params(p, ps))
		FAIL("the provider's counters");
	OSSL_PROVIDER_unload(p);
}

static void messages(void)
{
	static const size_t ivlens[] = { 1,  8,	 12, 13, 16,  17,  60,
					 61, 62, 63, 64, 100, 127, 128 };
	static const char *names[] = { "AES-128-GCM", "AES-192-GCM",
				       "AES-256-GCM" };
	uint8_t key[32], iv[128], aad[40], pt[3000], a[3000], b[3000];
	uint8_t ta[16], tb[16];
	uint64_t m0, f0, m1, f1;
	unsigned runs = 0;
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(3 * i + 1);
	for (size_t i = 0; i < sizeof(iv); i++)
		iv[i] = (uint8_t)(7 * i + 5);
	for (size_t i = 0; i < sizeof(aad); i++)
		aad[i] = (uint8_t)(11 * i);
	for (size_t i = 0; i < sizeof(pt); i++)
		pt[i] = (uint8_t)(i * i);
	daemon_counts(&m0, &f0);
	for (unsigned k = 0; k < 3; k++) {
		EVP_CIPHER *ref = EVP_CIPHER_fetch(NULL, names[k], NULL);
		EVP_CIPHER *cry =
			EVP_CIPHER_fetch(lib, names[k], "provider=cryptod");
		for (size_t i = 0; cry && i < sizeof(ivlens) / sizeof(*ivlens);
		     i++) {
			size_t n = ivlens[i], len = 1 + (i * 997) % 3000;
			size_t cut = i % 2 ? len : 1 + len / 3;
			iv[0] ^= 1; /* a fresh IV for every message */
			if (!gcm(ref, 1, key, iv, n, aad, sizeof(aad), pt, a,
				 len, len, ta) ||
			    !gcm(cry, 1, key, iv, n, aad, sizeof(aad), pt, b,
				 len, cut, tb)) {
				FAIL("%s, %zu-byte IV: encrypt failed",
				     names[k], n);
				ERR_print_errors_fp(stderr);
				continue;
			}
			if (memcmp(a, b, len) || memcmp(ta, tb, 16))
				FAIL("%s, %zu-byte IV: not the default "
				     "provider's bytes",
				     names[k], n);
			if (!gcm(cry, 0, key, iv, n, aad, sizeof(aad), a, b,
				 len, cut, ta) ||
			    memcmp(b, pt, len))
				FAIL("%s, %zu-byte IV: decrypt", names[k], n);
			tb[5] ^= 4;
			if (gcm(cry, 0, key, iv, n, aad, sizeof(aad), a, b, len,
				len, tb))
				FAIL("%s, %zu-byte IV: a forged tag verified",
				     names[k], n);
			ERR_clear_error();
			runs += 3;
		}
		EVP_CIPHER_free(ref);
		EVP_CIPHER_free(cry);
	}
	daemon_counts(&m1, &f1);
	fprintf(stderr,
		"%u AES-GCM messages with IVs of 1..128 bytes: %llu on the "
		"daemon, %llu fallbacks\n",
		runs, (unsigned long long)(m1 - m0),
		(unsigned long long)(f1 - f0));
	if (!runs || m1 - m0 < runs || f1 != f0)
		FAIL("not every message ran on the daemon");
}

int main(void)
{
	pfx_need_daemon();
	struct fx_daemon d;
	OSSL_PROVIDER *prov;
	if (pfx_start(&d, &lib, &prov))
		return FX_EXIT_FAIL;
	lengths("AES-128-GCM", 130);
	lengths("ChaCha20-Poly1305", 17);
	messages();
	return pfx_verdict(pfx_stop(&d, lib, prov), 0);
}
