/* SPDX-License-Identifier: MIT */
/*
 * Stream pieces of the MACs and digests on the aesni engine
 * (daemon/engines/stream_mac.c), and on the openssl engine (the *_openssl
 * cases: openssl_stream.c and stream_mac.c): HMAC-SHA-1/224/256/384/512,
 * SHA-1/224/256/384/512 and AES-CMAC (the key sizes aesni's CMAC row
 * takes: 128 and 256 bits), called through engine->stream directly,
 * against OpenSSL one-shot results (HMAC and CMAC through EVP_MAC,
 * digests through EVP_Digest): messages from 0 bytes to a few MiB and one
 * of 64 MiB and more, cut at random (1-byte pieces, odd sizes, up to
 * 1 MiB, empty pieces), HMAC keys of 0, 1, block and longer than block
 * bytes, full and truncated tags, generate and verify, a bad tag.
 *
 * Random data from a fixed seed, printed; STREAM_SEED=<n> picks another.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <cryptod/ring_abi.h>

#include "engine.h"
#include "session.h"
#include "stream_util.h"

static void *aesni_w, *ossl_w;
/* The engine under test: aesni, or openssl in the *_openssl cases. */
static const struct engine *eng = &engine_aesni;
static void *eng_w;

static const char *md_name(unsigned alg)
{
	static const char *const n[] = { "SHA1", "SHA224", "SHA256", "SHA384",
					 "SHA512" };
	return n[crd_alg_sha_idx(alg)];
}

static unsigned digest_len(unsigned alg)
{
	static const unsigned n[] = { 20, 28, 32, 48, 64 };
	return alg == CRD_ALG_AES_CMAC ? 16 : n[crd_alg_sha_idx(alg)];
}

static unsigned block_len(unsigned alg)
{
	return crd_alg_sha_idx(alg) >= 3 ? 128 : 64;
}

/* The full MAC or digest of msg, by OpenSSL. */
static void ref_mac(unsigned alg, const uint8_t *key, size_t key_len,
		    const uint8_t *msg, size_t len, uint8_t *out)
{
	size_t n = 0;
	if (crd_alg_kind(alg) == CRD_KIND_HASH) {
		unsigned m = 0;
		EVP_MD *md = EVP_MD_fetch(NULL, md_name(alg), NULL);
		assert_non_null(md);
		assert_true(EVP_Digest(msg, len, out, &m, md, NULL));
		assert_int_equal(m, digest_len(alg));
		EVP_MD_free(md);
		return;
	}
	int cmac = alg == CRD_ALG_AES_CMAC;
	EVP_MAC *mac = EVP_MAC_fetch(NULL, cmac ? "CMAC" : "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_utf8_string(
			cmac ? OSSL_MAC_PARAM_CIPHER : OSSL_MAC_PARAM_DIGEST,
			cmac ? (key_len == 16	? "AES-128-CBC"
				: key_len == 24 ? "AES-192-CBC"
						: "AES-256-CBC")
			     : (char *)md_name(alg),
			0),
		OSSL_PARAM_construct_end(),
	};
	static const uint8_t none[1];
	assert_non_null(ctx);
	assert_true(EVP_MAC_init(ctx, key_len ? key : none, key_len, p));
	assert_true(EVP_MAC_update(ctx, msg, len));
	assert_true(EVP_MAC_final(ctx, out, &n, 64));
	assert_int_equal(n, digest_len(alg));
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
}

struct mac_case {
	unsigned alg;
	uint8_t key[256];
	size_t key_len;
	struct session *s;
};

static void case_open(struct mac_case *k, unsigned alg, size_t key_len,
		      unsigned tag_len)
{
	if (!eng_w)
		skip(); /* no AES-NI: the engine is not there */
	memset(k, 0, sizeof(*k));
	k->alg = alg;
	k->key_len = key_len;
	su_fill(k->key, sizeof(k->key));
	struct session_params p = { .alg = alg,
				    .key = k->key,
				    .key_len = key_len,
				    .tag_len = tag_len,
				    .engine = eng->name };
	assert_int_equal(session_create(&p, &k->s), 0);
}

static void case_close(struct mac_case *k)
{
	session_destroy(k->s);
	k->s = NULL;
}

/* Run msg in the pieces c (NULL: one FIRST|LAST piece) with tag. */
static int run(const struct mac_case *k, int dir, const uint8_t *msg,
	       size_t len, const struct su_cuts *c, uint8_t *tag)
{
	struct su_piece p = { .s = k->s, .dir = dir, .tag = tag };
	if (!c)
		return su_run_one(eng, eng_w, &p, msg, NULL, len);
	return su_run(eng, eng_w, &p, msg, NULL, c, NULL);
}

/*
 * One message: the tag of random pieces (and of one piece) equals the
 * reference's first tag_len bytes; verify takes it and refuses it with a
 * bit flipped; the message is never written. typ: as su_cut's.
 */
static void check_message(const struct mac_case *k, const uint8_t *msg,
			  size_t len, size_t typ, int one_piece)
{
	unsigned tl = k->s->tag_len;
	uint8_t ref[64], tag[80], bad[64];
	struct su_cuts c = { 0 };

	ref_mac(k->alg, k->key, k->key_len, msg, len, ref);
	su_cut(&c, len, 1, typ);
	memset(tag, 0xa5, sizeof(tag));
	assert_int_equal(run(k, CRD_OP_ENCRYPT, msg, len, &c, tag), CRD_ST_OK);
	if (memcmp(tag, ref, tl))
		fail_msg("alg %u key %zu tag %u len %zu in %zu pieces: "
			 "tags differ",
			 k->alg, k->key_len, tl, len, c.n);
	assert_int_equal(tag[tl], 0xa5); /* nothing past tag_len */

	su_cut(&c, len, 1, typ);
	assert_int_equal(run(k, CRD_OP_DECRYPT, msg, len, &c, ref), CRD_ST_OK);
	memcpy(bad, ref, tl);
	bad[su_below(tl)] ^= (uint8_t)(1u << su_below(8));
	su_cut(&c, len, 1, typ);
	assert_int_equal(run(k, CRD_OP_DECRYPT, msg, len, &c, bad),
			 CRD_ST_AUTH_FAILED);

	if (one_piece) {
		memset(tag, 0, sizeof(tag));
		assert_int_equal(run(k, CRD_OP_ENCRYPT, msg, len, NULL, tag),
				 CRD_ST_OK);
		assert_memory_equal(tag, ref, tl);
		/* and the engine's own one-shot op */
		struct su_piece p = { .s = k->s,
				      .dir = CRD_OP_ENCRYPT,
				      .tag = tag };
		memset(tag, 0, sizeof(tag));
		assert_int_equal(su_oneshot(eng, eng_w, &p, msg, NULL, len),
				 CRD_ST_OK);
		assert_memory_equal(tag, ref, tl);
		assert_int_equal(run(k, CRD_OP_DECRYPT, msg, len, NULL, ref),
				 CRD_ST_OK);
		assert_int_equal(run(k, CRD_OP_DECRYPT, msg, len, NULL, bad),
				 CRD_ST_AUTH_FAILED);
	}
	su_cuts_free(&c);
}

enum { SWEEP = 24, SWEEP_MAX = 3u << 20 };

/* A sweep of message sizes, each checked; the message is compared with
 * a copy at the end (a MAC writes nothing). */
static void sweep(const struct mac_case *k, unsigned n)
{
	uint8_t *msg = malloc(SWEEP_MAX), *copy = malloc(SWEEP_MAX);
	assert_true(msg && copy);
	for (unsigned i = 0; i < n; i++) {
		size_t len = su_size(i, SWEEP_MAX);
		su_fill(msg, len);
		memcpy(copy, msg, len);
		check_message(k, msg, len, 0, 1);
		assert_memory_equal(msg, copy, len);
	}
	free(msg);
	free(copy);
}

static const unsigned hmacs[] = { CRD_ALG_HMAC_SHA1, CRD_ALG_HMAC_SHA224,
				  CRD_ALG_HMAC_SHA256, CRD_ALG_HMAC_SHA384,
				  CRD_ALG_HMAC_SHA512 };
static const unsigned shas[] = { CRD_ALG_SHA1, CRD_ALG_SHA224, CRD_ALG_SHA256,
				 CRD_ALG_SHA384, CRD_ALG_SHA512 };

/* HMAC: keys of 0, 1, a digest, block - 1, block, block + 1 and up to
 * 256 bytes (hashed first when longer than a block). */
static void test_hmac(void **state)
{
	for (unsigned a = 0; a < 5; a++) {
		unsigned alg = hmacs[a], bl = block_len(alg);
		const size_t keys[] = {
			0,  1,	    digest_len(alg), bl - 1,
			bl, bl + 1, 2 * bl,	     CRD_MAC_KEY_MAX
		};
		struct mac_case k;
		for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			case_open(&k, alg, keys[i], 0);
			sweep(&k, i == 4 ? SWEEP : 10);
			case_close(&k);
		}
	}
}

static void test_sha(void **state)
{
	for (unsigned a = 0; a < 5; a++) {
		struct mac_case k;
		case_open(&k, shas[a], 0, 0);
		sweep(&k, SWEEP);
		case_close(&k);
	}
}

static void test_cmac(void **state)
{
	for (unsigned key_len = 16; key_len <= 32; key_len += 16) {
		struct mac_case k;
		case_open(&k, CRD_ALG_AES_CMAC, key_len, 0);
		sweep(&k, SWEEP + 8);
		case_close(&k);
	}
}

/* Truncated tags: 4 bytes, half, the digest less one. */
static void test_truncated(void **state)
{
	static const unsigned algs[] = {
		CRD_ALG_HMAC_SHA1,   CRD_ALG_HMAC_SHA256, CRD_ALG_HMAC_SHA512,
		CRD_ALG_SHA224,	     CRD_ALG_SHA384,	  CRD_ALG_AES_CMAC,
		CRD_ALG_HMAC_SHA384,
	};
	for (unsigned a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		unsigned alg = algs[a], dl = digest_len(alg);
		const unsigned tags[] = { 4, dl / 2, dl - 1 };
		size_t key_len = crd_alg_kind(alg) == CRD_KIND_HASH ? 0
				 : alg == CRD_ALG_AES_CMAC	    ? 16
								    : 33;
		for (unsigned t = 0; t < 3; t++) {
			struct mac_case k;
			case_open(&k, alg, key_len, tags[t]);
			assert_int_equal(k.s->tag_len, tags[t]);
			sweep(&k, 18);
			case_close(&k);
		}
	}
}

/* The empty message: one empty FIRST|LAST piece, and an empty FIRST then
 * an empty LAST (the digest of "", the HMAC of "", CMAC's padded block). */
static void test_empty(void **state)
{
	static const unsigned algs[] = {
		CRD_ALG_HMAC_SHA1,   CRD_ALG_HMAC_SHA224, CRD_ALG_HMAC_SHA256,
		CRD_ALG_HMAC_SHA384, CRD_ALG_HMAC_SHA512, CRD_ALG_SHA1,
		CRD_ALG_SHA224,	     CRD_ALG_SHA256,	  CRD_ALG_SHA384,
		CRD_ALG_SHA512,	     CRD_ALG_AES_CMAC,
	};
	static const uint8_t sha256_empty[4] = { 0xe3, 0xb0, 0xc4, 0x42 };
	for (unsigned a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		unsigned alg = algs[a];
		size_t key_len = crd_alg_kind(alg) == CRD_KIND_HASH ? 0
				 : alg == CRD_ALG_AES_CMAC	    ? 32
								    : 20;
		static const uint8_t nothing[1];
		struct mac_case k;
		uint8_t ref[64], tag[64];
		size_t lens[] = { 0, 0 };
		struct su_cuts two = { .len = lens, .n = 2, .cap = 2 };
		case_open(&k, alg, key_len, 0);
		ref_mac(alg, k.key, key_len, nothing, 0, ref);
		if (alg == CRD_ALG_SHA256) /* the reference itself */
			assert_memory_equal(ref, sha256_empty, 4);
		assert_int_equal(run(&k, CRD_OP_ENCRYPT, nothing, 0, NULL, tag),
				 CRD_ST_OK);
		assert_memory_equal(tag, ref, k.s->tag_len);
		memset(tag, 0, sizeof(tag));
		assert_int_equal(run(&k, CRD_OP_ENCRYPT, nothing, 0, &two, tag),
				 CRD_ST_OK);
		assert_memory_equal(tag, ref, k.s->tag_len);
		assert_int_equal(run(&k, CRD_OP_DECRYPT, nothing, 0, &two, ref),
				 CRD_ST_OK);
		ref[0] ^= 1;
		assert_int_equal(run(&k, CRD_OP_DECRYPT, nothing, 0, &two, ref),
				 CRD_ST_AUTH_FAILED);
		case_close(&k);
	}
}

/* CMAC's held-back block at every offset: messages around block
 * boundaries in every cut, 1-byte pieces included. */
static void test_cmac_edges(void **state)
{
	uint8_t msg[200];
	su_fill(msg, sizeof(msg));
	for (unsigned key_len = 16; key_len <= 32; key_len += 16) {
		struct mac_case k;
		case_open(&k, CRD_ALG_AES_CMAC, key_len, 0);
		for (size_t len = 0; len <= sizeof(msg); len++)
			for (int r = 0; r < 3; r++)
				check_message(&k, msg, len, 0, r == 0);
		case_close(&k);
	}
}

/* 64 MiB and more in pieces of about 1 MiB. */
static void test_big(void **state)
{
	static const struct {
		unsigned alg;
		size_t key_len;
	} big[] = {
		{ CRD_ALG_HMAC_SHA256, 32 },
		{ CRD_ALG_SHA512, 0 },
		{ CRD_ALG_AES_CMAC, 16 },
	};
	size_t len = (64u << 20) + 777;
	uint8_t *msg = malloc(len);
	assert_non_null(msg);
	su_fill(msg, len);
	for (unsigned i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		struct mac_case k;
		case_open(&k, big[i].alg, big[i].key_len, 0);
		check_message(&k, msg, len, 1u << 20, 0);
		case_close(&k);
	}
	free(msg);
}

/* The cases above on the openssl engine, in one: CMAC with its 192-bit
 * keys too. */
static void test_all_openssl(void **state)
{
	eng = &engine_openssl;
	eng_w = ossl_w;
	test_hmac(state);
	test_sha(state);
	test_cmac(state);
	test_truncated(state);
	test_empty(state);
	test_cmac_edges(state);
	struct mac_case k;
	uint8_t msg[5000];
	su_fill(msg, sizeof(msg));
	case_open(&k, CRD_ALG_AES_CMAC, 24, 0);
	for (size_t len = 0; len < sizeof(msg); len += 1 + len / 3)
		check_message(&k, msg, len, 0, 1);
	case_close(&k);
	eng = &engine_aesni;
	eng_w = aesni_w;
}

static int group_setup(void **state)
{
	if (su_setup(16))
		return -1;
	aesni_w = engine_aesni.worker_init(&engine_aesni);
	ossl_w = engine_openssl.worker_init(&engine_openssl);
	eng_w = aesni_w;
	return 0; /* without AES-NI the aesni cases skip */
}

static int group_teardown(void **state)
{
	if (aesni_w)
		engine_aesni.worker_fini(aesni_w);
	if (ossl_w)
		engine_openssl.worker_fini(ossl_w);
	su_teardown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hmac),
		cmocka_unit_test(test_sha),
		cmocka_unit_test(test_cmac),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_cmac_edges),
		cmocka_unit_test(test_big),
		cmocka_unit_test(test_all_openssl),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
