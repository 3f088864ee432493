/* SPDX-License-Identifier: MIT */
/*
 * Stream pieces of AES-GCM, ChaCha20-Poly1305 and AES-CCM on the aesni
 * engine (daemon/engines/aesni/aesni_stream_aead.c) and on the openssl
 * engine (openssl_stream.c, openssl_stream_aead.c: the *_openssl cases,
 * which run the same checks there, and test_openssl_rows, which checks
 * its rows say it streams all three), against OpenSSL's EVP
 * one-shot results: random keys, IVs, AAD and messages (0 bytes to
 * 64 MiB), cut at random boundaries (empty, 1-byte, odd and up to 1 MiB
 * pieces), in place and out of place, both directions; every GCM IV
 * (1..128 bytes) and tag length; forged tags. CCM's own cases (its
 * declared length, nonce and tag lengths, SP 800-38C, random messages):
 * test_stream_ccm.c. Vectors, GCM's counter wrap and clones:
 * test_stream_aead_vectors.c. The pieces are fed as the daemon feeds
 * them (stream_aead_common.h).
 *
 * The seed is printed; STREAM_SEED=<n> replays a run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "stream_aead_common.h"

#define BIG_LEN (64u * MIB + 13) /* the long stream */

static void test_gcm_random(void **state)
{
	random_msgs(CRD_ALG_AES_GCM, 14);
}

static void test_chacha_random(void **state)
{
	random_msgs(CRD_ALG_CHACHA20_POLY1305, 30);
}

/* Every GCM IV length the rows take (1..128 bytes: 12 on the normal
 * init, the others GHASHed into J0) with every tag length. */
static void test_gcm_iv_tag_lengths(void **state)
{
	static const size_t tags[] = { 4, 8, 12, 13, 14, 15, 16 };
	need_aesni();
	for (unsigned k = 0; k < 3; k++)
		for (size_t iv = 1; iv <= CRD_IV_ARENA_MAX; iv++)
			for (unsigned g = 0; g < sizeof(tags) / sizeof(tags[0]);
			     g++)
				check_msg(CRD_ALG_AES_GCM, aes_keys[k], iv,
					  tags[g], rnd_in(0, 600), CUT_RANDOM);
}

/* 64 MiB and a little more, in pieces of about 1 MiB. */
static void test_long_streams(void **state)
{
	need_aesni();
	if (streams(CRD_ALG_AES_GCM))
		check_msg(CRD_ALG_AES_GCM, 32, 12, 16, BIG_LEN, CUT_MIB);
	if (streams(CRD_ALG_CHACHA20_POLY1305))
		check_msg(CRD_ALG_CHACHA20_POLY1305, 32, 12, 16, BIG_LEN,
			  CUT_MIB);
	check_msg(CRD_ALG_AES_CCM, 16, 11, 16, BIG_LEN, CUT_MIB);
}

/* ---- The same on the openssl engine ---- */

/* Its rows: CCM, GCM and ChaCha20-Poly1305 stream (the last two with
 * the engine's own GHASH and Poly1305, openssl_stream_aead.c), as all
 * three do on the aesni engine. */
static void test_openssl_rows(void **state)
{
	assert_true(engine_streams(&engine_openssl, CRD_ALG_AES_CCM));
	assert_true(engine_streams(&engine_openssl, CRD_ALG_AES_GCM));
	assert_true(engine_streams(&engine_openssl, CRD_ALG_CHACHA20_POLY1305));
	assert_true(engine_streams(&engine_aesni, CRD_ALG_AES_GCM));
	assert_true(engine_streams(&engine_aesni, CRD_ALG_CHACHA20_POLY1305));
	assert_true(engine_streams(&engine_aesni, CRD_ALG_AES_CCM));
	/* no engine streams what the table says cannot */
	assert_false(engine_streams(&engine_openssl, CRD_ALG_AES_GMAC));
	assert_false(engine_streams(&engine_openssl, CRD_ALG_AES_XCBC_MAC));
	assert_false(engine_streams(&engine_openssl, CRD_ALG_AES_KW));
}

/* GCM and ChaCha20-Poly1305 (test_single_piece, test_empty_pieces and
 * test_bad_tag run CCM's again, as test_stream_ccm's test_ccm_openssl
 * does: cheap). */
static void test_gcm_openssl(void **state)
{
	on_openssl();
	test_single_piece(state);
	test_empty_pieces(state);
	test_gcm_iv_tag_lengths(state);
	test_gcm_random(state);
	test_bad_tag(state);
}

static void test_chacha_openssl(void **state)
{
	on_openssl();
	test_chacha_random(state);
}

static void test_long_streams_openssl(void **state)
{
	on_openssl();
	test_long_streams(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_piece),
		cmocka_unit_test(test_empty_pieces),
		cmocka_unit_test(test_gcm_iv_tag_lengths),
		cmocka_unit_test(test_gcm_random),
		cmocka_unit_test(test_chacha_random),
		cmocka_unit_test(test_long_streams),
		cmocka_unit_test(test_bad_tag),
		cmocka_unit_test(test_openssl_rows),
		cmocka_unit_test_teardown(test_gcm_openssl, on_aesni),
		cmocka_unit_test_teardown(test_chacha_openssl, on_aesni),
		cmocka_unit_test_teardown(test_long_streams_openssl, on_aesni),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
