/* SPDX-License-Identifier: MIT */
/*
 * The facts derived from the algorithm table (include/cryptod/algs.h)
 * against the values they had when each was written by hand: the
 * ring_abi.h helpers were switches, the other columns lists in the
 * engines, the bench and namedkeys.c. One
 * row per algorithm, written out, so that a change to the table that
 * changes behaviour fails here by name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <cryptod/ring_abi.h>

#include "names.h"

#define N CRD_KIND_NONE
#define A CRD_KIND_AEAD
#define C CRD_KIND_CIPHER
#define E CRD_KIND_AUTHENC
#define M CRD_KIND_MAC
#define H CRD_KIND_HASH
#define P CRD_KIND_PKEY

static const struct want {
	unsigned alg;
	enum crd_alg_kind kind;
	int bits, sha, auth_only, keystream;
	unsigned tag;
	const char *name, *kname;
} want[] = {
	{ 1, A, 0, -1, 0, 1, 16, "aes-gcm", "gcm(aes)" },
	{ 2, N, 0, -1, 0, 0, 0, "null", "ecb(cipher_null)" },
	{ 3, M, 0, -1, 1, 0, 16, "aes-gmac", NULL },
	{ 4, C, 0, -1, 0, 0, 0, "aes-cbc", "cbc(aes)" },
	{ 5, C, 0, -1, 0, 1, 0, "aes-ctr", "ctr(aes)" },
	{ 6, C, 0, -1, 0, 0, 0, "aes-ecb", "ecb(aes)" },
	{ 7, C, 0, -1, 0, 0, 0, "aes-xts", "xts(aes)" },
	{ 8, E, 0, 0, 0, 0, 12, "aes-cbc-hmac-sha1",
	  "authenc(hmac(sha1),cbc(aes))" },
	{ 9, E, 0, 2, 0, 0, 16, "aes-cbc-hmac-sha256",
	  "authenc(hmac(sha256),cbc(aes))" },
	{ 10, C, 0, -1, 0, 0, 0, "aes-cbc-null",
	  "authenc(digest_null,cbc(aes))" },
	{ 11, C, 0, -1, 0, 0, 0, "aes-lrw", "lrw(aes)" },
	{ 12, A, 0, -1, 0, 1, 16, "aes-gcm-rfc4106", "rfc4106(gcm(aes))" },
	{ 13, A, 0, -1, 0, 1, 16, "aes-ccm", NULL },
	{ 14, A, 0, -1, 0, 1, 16, "chacha20-poly1305", NULL },
	{ 15, C, 0, -1, 0, 1, 0, "chacha20", NULL },
	{ 16, M, 0, 0, 1, 0, 20, "hmac-sha1", NULL },
	{ 17, M, 0, 1, 1, 0, 28, "hmac-sha224", NULL },
	{ 18, M, 0, 2, 1, 0, 32, "hmac-sha256", NULL },
	{ 19, M, 0, 3, 1, 0, 48, "hmac-sha384", NULL },
	{ 20, M, 0, 4, 1, 0, 64, "hmac-sha512", NULL },
	{ 21, H, 0, 0, 1, 0, 20, "sha1", NULL },
	{ 22, H, 0, 1, 1, 0, 28, "sha224", NULL },
	{ 23, H, 0, 2, 1, 0, 32, "sha256", NULL },
	{ 24, H, 0, 3, 1, 0, 48, "sha384", NULL },
	{ 25, H, 0, 4, 1, 0, 64, "sha512", NULL },
	{ 26, M, 0, -1, 1, 0, 16, "aes-cmac", NULL },
	{ 27, M, 0, -1, 1, 0, 12, "aes-xcbc-mac", NULL },
	{ 28, E, 0, 3, 0, 0, 24, "aes-cbc-hmac-sha384",
	  "authenc(hmac(sha384),cbc(aes))" },
	{ 29, E, 0, 4, 0, 0, 32, "aes-cbc-hmac-sha512",
	  "authenc(hmac(sha512),cbc(aes))" },
	{ 30, E, 0, 0, 0, 1, 12, "aes-ctr-hmac-sha1",
	  "authenc(hmac(sha1),ctr(aes))" },
	{ 31, E, 0, 2, 0, 1, 16, "aes-ctr-hmac-sha256",
	  "authenc(hmac(sha256),ctr(aes))" },
	{ 32, C, 1, -1, 0, 1, 0, "snow3g-uea2", NULL },
	{ 33, M, 1, -1, 1, 0, 4, "snow3g-uia2", NULL },
	{ 34, C, 1, -1, 0, 1, 0, "zuc-eea3", NULL },
	{ 35, M, 1, -1, 1, 0, 4, "zuc-eia3", NULL },
	{ 36, C, 1, -1, 0, 1, 0, "kasumi-f8", NULL },
	{ 37, M, 1, -1, 1, 0, 4, "kasumi-f9", NULL },
	{ 38, A, 0, -1, 0, 0, 8, "aes-kw", NULL },
	{ 39, A, 0, -1, 0, 0, 8, "aes-kwp", NULL },
	/* key pairs: the tag column is the longest output (docs/
	 * asymmetric.md): the modulus, a DER ECDSA signature at its
	 * longest, EdDSA's signature, the X25519/X448 secret */
	{ 40, P, 0, -1, 0, 0, 256, "rsa-2048", NULL },
	{ 41, P, 0, -1, 0, 0, 384, "rsa-3072", NULL },
	{ 42, P, 0, -1, 0, 0, 512, "rsa-4096", NULL },
	{ 43, P, 0, -1, 0, 0, 72, "ec-p256", NULL },
	{ 44, P, 0, -1, 0, 0, 104, "ec-p384", NULL },
	{ 45, P, 0, -1, 0, 0, 139, "ec-p521", NULL },
	{ 46, P, 0, -1, 0, 0, 64, "ed25519", NULL },
	{ 47, P, 0, -1, 0, 0, 114, "ed448", NULL },
	{ 48, P, 0, -1, 0, 0, 32, "x25519", NULL },
	{ 49, P, 0, -1, 0, 0, 56, "x448", NULL },
};

/*
 * The columns that replaced lists elsewhere, at their old values: the
 * engines' old stream_alg() lists (union), engine_openssl.c's and the
 * bench's EVP names, namedkeys.c's nk_alg_ok() and keyreq.c's MAC test
 * (use), the authenc halves openssl_authenc.c and the bench split by
 * hand.
 */
#define CI CRD_USE_CIPHER
#define MA CRD_USE_MAC
#define NO CRD_USE_NO
#define PK CRD_USE_PKEY
static const struct want2 {
	unsigned alg;
	int streams;
	unsigned cipher, mac;
	enum crd_use use;
	unsigned okey; /* key bytes for the OpenSSL name */
	const char *ossl;
} want2[] = {
	{ 1, 1, 0, 0, CI, 16, "AES-128-GCM" },
	{ 2, 1, 0, 0, NO, 0, NULL },
	{ 3, 0, 0, 0, MA, 32, "AES-256-GCM" },
	{ 4, 1, 0, 0, CI, 24, "AES-192-CBC" },
	{ 5, 1, 0, 0, CI, 16, "AES-128-CTR" },
	{ 6, 1, 0, 0, CI, 32, "AES-256-ECB" },
	{ 7, 1, 0, 0, CI, 64, "AES-256-XTS" },
	{ 8, 0, 4, 16, NO, 16, "AES-128-CBC" },
	{ 9, 0, 4, 18, NO, 32, "AES-256-CBC" },
	{ 10, 0, 0, 0, CI, 16, "AES-128-CBC" },
	{ 11, 0, 0, 0, CI, 32, NULL },
	{ 12, 0, 0, 0, CI, 16, "AES-128-GCM" },
	{ 13, 1, 0, 0, CI, 24, "AES-192-CCM" },
	{ 14, 1, 0, 0, CI, 32, "ChaCha20-Poly1305" },
	{ 15, 0, 0, 0, CI, 32, "ChaCha20" },
	{ 16, 1, 0, 0, MA, 20, "SHA1" },
	{ 17, 1, 0, 0, MA, 28, "SHA224" },
	{ 18, 1, 0, 0, MA, 32, "SHA256" },
	{ 19, 1, 0, 0, MA, 48, "SHA384" },
	{ 20, 1, 0, 0, MA, 64, "SHA512" },
	{ 21, 1, 0, 0, NO, 0, "SHA1" },
	{ 22, 1, 0, 0, NO, 0, "SHA224" },
	{ 23, 1, 0, 0, NO, 0, "SHA256" },
	{ 24, 1, 0, 0, NO, 0, "SHA384" },
	{ 25, 1, 0, 0, NO, 0, "SHA512" },
	{ 26, 1, 0, 0, MA, 24, "AES-192-CBC" },
	{ 27, 0, 0, 0, MA, 16, "AES-128-CBC" },
	{ 28, 0, 4, 19, NO, 16, "AES-128-CBC" },
	{ 29, 0, 4, 20, NO, 32, "AES-256-CBC" },
	{ 30, 0, 5, 16, NO, 16, "AES-128-CTR" },
	{ 31, 0, 5, 18, NO, 24, "AES-192-CTR" },
	{ 32, 0, 0, 0, CI, 16, NULL },
	{ 33, 0, 0, 0, MA, 16, NULL },
	{ 34, 0, 0, 0, CI, 16, NULL },
	{ 35, 0, 0, 0, MA, 16, NULL },
	{ 36, 0, 0, 0, CI, 16, NULL },
	{ 37, 0, 0, 0, MA, 16, NULL },
	{ 38, 0, 0, 0, CI, 24, "AES-192-WRAP" },
	{ 39, 0, 0, 0, CI, 32, "AES-256-WRAP-PAD" },
	{ 40, 0, 0, 0, PK, 0, "RSA:2048" },
	{ 41, 0, 0, 0, PK, 0, "RSA:3072" },
	{ 42, 0, 0, 0, PK, 0, "RSA:4096" },
	{ 43, 0, 0, 0, PK, 0, "EC:P-256" },
	{ 44, 0, 0, 0, PK, 0, "EC:P-384" },
	{ 45, 0, 0, 0, PK, 0, "EC:P-521" },
	{ 46, 0, 0, 0, PK, 0, "ED25519" },
	{ 47, 0, 0, 0, PK, 0, "ED448" },
	{ 48, 0, 0, 0, PK, 0, "X25519" },
	{ 49, 0, 0, 0, PK, 0, "X448" },
};

static void check_str(unsigned alg, const char *what, const char *got,
		      const char *exp)
{
	if (!got != !exp || (got && strcmp(got, exp)))
		fail_msg("alg %u: %s is %s, was %s", alg, what,
			 got ? got : "NULL", exp ? exp : "NULL");
}

#define CHECK(alg, what, got, exp)                                             \
	do {                                                                   \
		if ((long)(got) != (long)(exp))                                \
			fail_msg("alg %u: %s is %ld, was %ld", alg, what,      \
				 (long)(got), (long)(exp));                    \
	} while (0)

/* Every row: what the helpers say is what the hand-written code said. */
static void test_helpers_match_old_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct want *w = &want[i];

		CHECK(w->alg, "kind", crd_alg_kind(w->alg), w->kind);
		CHECK(w->alg, "bit_len", crd_alg_bit_len(w->alg), w->bits);
		CHECK(w->alg, "sha_idx", crd_alg_sha_idx(w->alg), w->sha);
		CHECK(w->alg, "auth_only", crd_alg_auth_only(w->alg),
		      w->auth_only);
		CHECK(w->alg, "keystream", crd_alg_keystream(w->alg),
		      w->keystream);
		CHECK(w->alg, "tag_len", crd_alg_tag_len(w->alg), w->tag);
		CHECK(w->alg, "len_bytes(13)", crd_len_bytes(w->alg, 13),
		      w->bits ? 2 : 13);
		check_str(w->alg, "name", crd_alg_name(w->alg), w->name);
		check_str(w->alg, "kernel name", crd_alg_kernel_name(w->alg),
			  w->kname);
		CHECK(w->alg, "from_name",
		      crd_alg_from_name(w->name, CRD_NAME_EXACT), w->alg);
	}
}

static void test_columns_match_old_lists(void **state)
{
	(void)state;
	assert_int_equal(sizeof(want2) / sizeof(want2[0]), CRD_ALG_MAX_ - 1);
	for (size_t i = 0; i < sizeof(want2) / sizeof(want2[0]); i++) {
		const struct want2 *w = &want2[i];
		char name[32];
		int rc;

		assert_int_equal(w->alg, i + 1);
		CHECK(w->alg, "streams", crd_alg_streams(w->alg), w->streams);
		CHECK(w->alg, "cipher half", crd_alg_cipher_half(w->alg),
		      w->cipher);
		CHECK(w->alg, "mac half", crd_alg_mac_half(w->alg), w->mac);
		CHECK(w->alg, "use", crd_alg_use(w->alg), w->use);
		rc = crd_alg_ossl_name(w->alg, w->okey, name, sizeof(name));
		CHECK(w->alg, "ossl_name rc", rc, w->ossl ? 0 : -ENOENT);
		check_str(w->alg, "OpenSSL name", rc ? NULL : name, w->ossl);
	}
}

/* The rows that take an IV (cli/crypt_alg.c's rules had iv_len, docs/
 * algorithms.md the 3GPP ones) and RFC 4106's salted key. */
static void test_iv_and_salt_flags(void **state)
{
	static const unsigned no_iv[] = { 2,  6,  16, 17, 18, 19, 20, 21, 22,
					  23, 24, 25, 26, 27, 38, 39, 40, 41,
					  42, 43, 44, 45, 46, 47, 48, 49 };

	(void)state;
	for (unsigned a = 1; a < CRD_ALG_MAX_; a++) {
		int iv = 1;

		for (size_t i = 0; i < sizeof(no_iv) / sizeof(no_iv[0]); i++)
			if (no_iv[i] == a)
				iv = 0;
		CHECK(a, "IV flag", !!(crd_alg_flags(a) & CRD_AF_IV), iv);
		CHECK(a, "SALT flag", !!(crd_alg_flags(a) & CRD_AF_SALT),
		      a == CRD_ALG_AES_GCM_RFC4106);
	}
}

/* The key pairs' flags: which ops each row takes, written out; no other
 * row has any of them. */
static void test_pkey_flags(void **state)
{
	const unsigned pk =
		CRD_AF_SIGN | CRD_AF_DIGEST | CRD_AF_DERIVE | CRD_AF_PKE;

	(void)state;
	for (unsigned a = 1; a < CRD_ALG_MAX_; a++) {
		unsigned f = crd_alg_flags(a) & pk, want_f = 0;

		if (a >= CRD_ALG_RSA_2048 && a <= CRD_ALG_RSA_4096)
			want_f = CRD_AF_SIGN | CRD_AF_DIGEST | CRD_AF_PKE;
		else if (a >= CRD_ALG_EC_P256 && a <= CRD_ALG_EC_P521)
			want_f = CRD_AF_SIGN | CRD_AF_DIGEST | CRD_AF_DERIVE;
		else if (a == CRD_ALG_ED25519 || a == CRD_ALG_ED448)
			want_f = CRD_AF_SIGN;
		else if (a == CRD_ALG_X25519 || a == CRD_ALG_X448)
			want_f = CRD_AF_DERIVE;
		CHECK(a, "pkey flags", f, want_f);
		CHECK(a, "pkey", crd_alg_pkey(a), want_f != 0);
		unsigned ops = 0;
		if (want_f & CRD_AF_SIGN)
			ops |= 1u << CRD_OP_SIGN | 1u << CRD_OP_VERIFY;
		if (want_f & CRD_AF_DERIVE)
			ops |= 1u << CRD_OP_DERIVE;
		if (want_f & CRD_AF_PKE)
			ops |= 1u << CRD_OP_ENCRYPT | 1u << CRD_OP_DECRYPT;
		CHECK(a, "pk ops", crd_alg_pk_ops(a), ops);
		/* no key pair streams, takes an IV or counts bits */
		if (want_f)
			CHECK(a, "other flags", crd_alg_flags(a) & ~pk, 0);
	}
	assert_string_equal(crd_status_text(CRD_ST_BAD_SIGNATURE),
			    "signature verification failed");
}

/* The OpenSSL name refuses what has no EVP cipher, and a short buffer. */
static void test_ossl_name_negative(void **state)
{
	char name[32];

	(void)state;
	assert_int_equal(
		crd_alg_ossl_name(CRD_ALG_AES_GCM, 20, name, sizeof(name)),
		-EINVAL);
	assert_int_equal(
		crd_alg_ossl_name(CRD_ALG_AES_XTS, 16, name, sizeof(name)),
		-EINVAL);
	assert_int_equal(crd_alg_ossl_name(CRD_ALG_AES_GCM, 16, name, 5),
			 -ENOSPC);
	assert_int_equal(
		crd_alg_ossl_name(CRD_ALG_MAX_, 16, name, sizeof(name)),
		-ENOENT);
	assert_int_equal(crd_alg_ossl_name(0, 16, name, sizeof(name)), -ENOENT);
}

/* A key pair's OpenSSL name splits into its EVP_PKEY type and one
 * parameter; other rows and short buffers are refused. */
static void test_pkey_type(void **state)
{
	char type[16];
	const char *param = "x";

	(void)state;
	assert_int_equal(
		crd_alg_pkey_type(CRD_ALG_RSA_3072, type, sizeof(type), &param),
		0);
	assert_string_equal(type, "RSA");
	assert_string_equal(param, "3072");
	assert_int_equal(
		crd_alg_pkey_type(CRD_ALG_EC_P521, type, sizeof(type), &param),
		0);
	assert_string_equal(type, "EC");
	assert_string_equal(param, "P-521");
	assert_int_equal(
		crd_alg_pkey_type(CRD_ALG_X448, type, sizeof(type), &param), 0);
	assert_string_equal(type, "X448");
	assert_null(param);
	/* every key pair's row has a type */
	for (unsigned a = 1; a < CRD_ALG_MAX_; a++)
		assert_int_equal(
			crd_alg_pkey_type(a, type, sizeof(type), &param) == 0,
			crd_alg_pkey(a));
	assert_int_equal(
		crd_alg_pkey_type(CRD_ALG_AES_GCM, type, sizeof(type), &param),
		-ENOENT);
	assert_int_equal(
		crd_alg_pkey_type(CRD_ALG_MAX_, type, sizeof(type), &param),
		-ENOENT);
	assert_int_equal(crd_alg_pkey_type(CRD_ALG_ED25519, type, 7, &param),
			 -ENOSPC);
	assert_int_equal(crd_alg_pkey_type(CRD_ALG_ED25519, type, 8, &param),
			 0);
}

/* Numbers outside the table: no facts at all. */
static void test_unknown_numbers(void **state)
{
	static const unsigned bad[] = { 0,   CRD_ALG_MAX_, CRD_ALG_MAX_ + 1,
					255, 65535,	   0xffffffffu };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned a = bad[i];

		CHECK(a, "kind", crd_alg_kind(a), CRD_KIND_NONE);
		CHECK(a, "bit_len", crd_alg_bit_len(a), 0);
		CHECK(a, "sha_idx", crd_alg_sha_idx(a), -1);
		CHECK(a, "auth_only", crd_alg_auth_only(a), 0);
		CHECK(a, "keystream", crd_alg_keystream(a), 0);
		CHECK(a, "tag_len", crd_alg_tag_len(a), 0);
		CHECK(a, "streams", crd_alg_streams(a), 0);
		CHECK(a, "cipher half", crd_alg_cipher_half(a), 0);
		CHECK(a, "mac half", crd_alg_mac_half(a), 0);
		CHECK(a, "use", crd_alg_use(a), CRD_USE_NO);
		assert_null(crd_alg_name(a));
	}
	assert_int_equal(crd_alg_from_name("aes-gcm-nope", CRD_NAME_ANY), -1);
	assert_int_equal(crd_alg_from_name(NULL, CRD_NAME_ANY), -1);
}

/* The list above covers the table: a new row needs a line here. */
static void test_every_row_listed(void **state)
{
	(void)state;
	assert_int_equal(sizeof(want) / sizeof(want[0]), CRD_ALG_MAX_ - 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(want[i].alg, i + 1);
}

/* Why no named key: said exactly for the rows whose use column is NO,
 * from their kind (the daemon's refusal and cryptoctl's). */
static void test_no_named_key_reason(void **state)
{
	(void)state;
	for (unsigned a = 1; a < CRD_ALG_MAX_; a++)
		assert_int_equal(*crd_alg_no_named_key(a) != '\0',
				 crd_alg_use(a) == CRD_USE_NO);
	assert_non_null(strstr(crd_alg_no_named_key(CRD_ALG_SHA256),
			       "is a digest: it takes no key at all"));
	assert_non_null(strstr(crd_alg_no_named_key(CRD_ALG_AES_CBC_HMAC_SHA1),
			       "takes two keys"));
	assert_non_null(strstr(crd_alg_no_named_key(CRD_ALG_NULL), "no key"));
	assert_string_equal(crd_alg_no_named_key(CRD_ALG_AES_GCM), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helpers_match_old_values),
		cmocka_unit_test(test_columns_match_old_lists),
		cmocka_unit_test(test_ossl_name_negative),
		cmocka_unit_test(test_pkey_type),
		cmocka_unit_test(test_iv_and_salt_flags),
		cmocka_unit_test(test_pkey_flags),
		cmocka_unit_test(test_unknown_numbers),
		cmocka_unit_test(test_every_row_listed),
		cmocka_unit_test(test_no_named_key_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
