/* SPDX-License-Identifier: MIT */
#include "pkeys.h"
#include "keyfile.h"

#include <cryptod/pkey_row.h>
#include <cryptod/ring_abi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>

#include "names.h"
#include "wire.h"

/* The row's OpenSSL name split (crd_alg_pkey_type): type ("RSA", "EC",
 * "ED25519") and its parameter ("2048", "P-256", or ""). 0, or < 0 for
 * no key pair. */
static int row_name(unsigned alg, char *type, size_t tlen, const char **param)
{
	int err = crd_alg_pkey_type(alg, type, tlen, param);

	if (!err && !*param)
		*param = "";
	return err;
}

size_t pk_der_len(const uint8_t *b, size_t cap)
{
	size_t len, hdr;

	if (cap < 2 || b[0] != 0x30)
		return 0;
	if (b[1] < 0x80) {
		len = b[1];
		hdr = 2;
	} else {
		unsigned n = b[1] & 0x7f;
		if (n == 0 || n > 2 || cap < 2 + n)
			return 0;
		len = 0;
		for (unsigned i = 0; i < n; i++)
			len = len << 8 | b[2 + i];
		hdr = 2 + n;
	}
	return len <= cap - hdr ? hdr + len : 0;
}

uint32_t pk_usage_allowed(unsigned alg)
{
	return kf_pk_ops_usage(crd_alg_pk_ops(alg));
}

/* "rsa-3072", or what OpenSSL says it is: "RSA-PSS, 2048 bits". */
static void describe(EVP_PKEY *pk, char *buf, size_t len)
{
	unsigned a = crd_pkey_row(pk);
	const char *t = EVP_PKEY_get0_type_name(pk);

	if (a)
		snprintf(buf, len, "%s", crd_alg_name(a));
	else
		snprintf(buf, len, "%s, %d bits", t ? t : "unknown type",
			 EVP_PKEY_get_bits(pk));
}

/* pk as PKCS#8 DER into out: its length, -ENOSPC, or -EINVAL when pk
 * has no private half. */
static int to_pkcs8(EVP_PKEY *pk, uint8_t *out, size_t cap)
{
	PKCS8_PRIV_KEY_INFO *p8 = EVP_PKEY2PKCS8(pk);
	int n;

	if (!p8)
		return -EINVAL;
	n = i2d_PKCS8_PRIV_KEY_INFO(p8, NULL);
	if (n <= 0 || (size_t)n > cap) {
		n = n <= 0 ? -EINVAL : -ENOSPC;
	} else {
		uint8_t *q = out;
		n = i2d_PKCS8_PRIV_KEY_INFO(p8, &q);
	}
	PKCS8_PRIV_KEY_INFO_free(p8); /* cleanses its key octets */
	return n;
}

int pk_generate(unsigned alg, uint8_t *out, size_t cap, char *why, size_t wlen)
{
	char type[16];
	const char *param;
	EVP_PKEY *pk = NULL;
	int err = -EINVAL;

	if (row_name(alg, type, sizeof(type), &param))
		return -EINVAL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
	if (ctx && EVP_PKEY_keygen_init(ctx) == 1) {
		int ok = 1;
		if (!strcmp(type, "RSA"))
			ok = EVP_PKEY_CTX_set_rsa_keygen_bits(ctx,
							      atoi(param)) == 1;
		else if (!strcmp(type, "EC"))
			ok = EVP_PKEY_CTX_set_group_name(ctx, param) == 1;
		if (ok && EVP_PKEY_generate(ctx, &pk) == 1)
			err = 0;
	}
	EVP_PKEY_CTX_free(ctx);
	if (!err && !crd_pkey_matches(pk, alg))
		err = -EINVAL;
	if (!err)
		err = to_pkcs8(pk, out, cap);
	if (err < 0)
		kf_why(why, wlen, "OpenSSL could not make a %s key pair",
		       crd_alg_name(alg));
	EVP_PKEY_free(pk);
	ERR_clear_error();
	return err;
}

/* Does the input look like an encrypted private key (PKCS#8's
 * EncryptedPrivateKeyInfo, PEM or DER, or a traditional PEM with a
 * Proc-Type header)? Only for the error's text. */
static int looks_encrypted(const uint8_t *in, size_t len)
{
	if (memmem(in, len, "ENCRYPTED", 9))
		return 1;
	const uint8_t *p = in;
	X509_SIG *s = d2i_X509_SIG(NULL, &p, (long)len);
	X509_SIG_free(s);
	return s != NULL;
}

/* What the input is when it holds no private key it could decode. */
static const char *not_private(const uint8_t *in, size_t len)
{
	EVP_PKEY *pk = NULL;
	OSSL_DECODER_CTX *d = OSSL_DECODER_CTX_new_for_pkey(
		&pk, NULL, NULL, NULL, OSSL_KEYMGMT_SELECT_PUBLIC_KEY, NULL,
		NULL);
	const uint8_t *p = in;
	size_t l = len;
	int pub = d && OSSL_DECODER_from_data(d, &p, &l) == 1 && pk;

	OSSL_DECODER_CTX_free(d);
	EVP_PKEY_free(pk);
	if (pub)
		return "a public key: import takes the private key (the "
		       "daemon derives the public one: key pub)";
	if (memmem(in, len, "CERTIFICATE", 11))
		return "a certificate: import takes the private key";
	return NULL;
}

int pk_import(const uint8_t *in, size_t len, const uint8_t *pass,
	      size_t pass_len, uint16_t *alg, uint8_t *out, size_t cap,
	      char *why, size_t wlen)
{
	EVP_PKEY *pk = NULL;
	char got[64];
	int err = -EINVAL;

	if (!in || !len || len > CTL_PKEY_MAX) {
		kf_why(why, wlen, "a key pair's key is 1..%d bytes",
		       CTL_PKEY_MAX);
		return -EINVAL;
	}
	OSSL_DECODER_CTX *d = OSSL_DECODER_CTX_new_for_pkey(
		&pk, NULL, NULL, NULL, OSSL_KEYMGMT_SELECT_KEYPAIR, NULL, NULL);
	if (d && pass_len)
		(void)OSSL_DECODER_CTX_set_passphrase(d, pass, pass_len);
	const uint8_t *p = in;
	size_t l = len;
	int ok = d && OSSL_DECODER_from_data(d, &p, &l) == 1 && pk;
	OSSL_DECODER_CTX_free(d);
	if (!ok) {
		const char *what = not_private(in, len);
		if (what)
			kf_why(why, wlen, "%s", what);
		else if (looks_encrypted(in, len))
			kf_why(why, wlen,
			       "an encrypted private key: %s passphrase",
			       pass_len ? "wrong" : "no");
		else
			kf_why(why, wlen,
			       "not a private key OpenSSL can read (PEM or "
			       "DER: PKCS#8, encrypted PKCS#8, traditional "
			       "RSA or EC)");
		goto out;
	}
	describe(pk, got, sizeof(got));
	unsigned row = crd_pkey_row(pk);
	if (*alg && !crd_pkey_matches(pk, *alg)) {
		kf_why(why, wlen, "the key is %s, the request says %s", got,
		       crd_alg_name(*alg) ? crd_alg_name(*alg) : "?");
		goto out;
	}
	if (!row) {
		kf_why(why, wlen,
		       "the key is %s: no key-pair algorithm takes it "
		       "('cryptoctl key --help' lists them)",
		       got);
		err = -EOPNOTSUPP;
		goto out;
	}
	/* A key whose halves disagree would sign what its public key
	 * does not verify. */
	EVP_PKEY_CTX *cx = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
	int pair = cx ? EVP_PKEY_pairwise_check(cx) : 1;
	EVP_PKEY_CTX_free(cx);
	if (pair == 0) {
		kf_why(why, wlen,
		       "the key is %s, but its private and public "
		       "halves do not match",
		       got);
		goto out;
	}
	err = to_pkcs8(pk, out,
		       cap < kf_pk_slot_len(row) ? cap : kf_pk_slot_len(row));
	if (err == -ENOSPC)
		kf_why(why, wlen, "the key's DER is longer than any %s key's",
		       got);
	else if (err < 0)
		kf_why(why, wlen, "%s",
		       not_private(in, len) ? not_private(in, len)
					    : "it holds no private key");
	else
		*alg = (uint16_t)row;
out:
	EVP_PKEY_free(pk);
	ERR_clear_error();
	return err;
}

int pk_public(const uint8_t *der, size_t len, uint8_t *out, size_t cap)
{
	const uint8_t *p = der;
	PKCS8_PRIV_KEY_INFO *p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)len);
	EVP_PKEY *pk = p8 ? EVP_PKCS82PKEY(p8) : NULL;
	int n = -EINVAL;

	PKCS8_PRIV_KEY_INFO_free(p8);
	if (pk) {
		n = i2d_PUBKEY(pk, NULL);
		if (n <= 0 || (size_t)n > cap) {
			n = n <= 0 ? -EINVAL : -ENOSPC;
		} else {
			uint8_t *q = out;
			n = i2d_PUBKEY(pk, &q);
		}
	}
	EVP_PKEY_free(pk);
	ERR_clear_error();
	return n;
}
