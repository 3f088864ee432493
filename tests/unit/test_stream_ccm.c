/* SPDX-License-Identifier: MIT */
/*
 * AES-CCM's own stream cases on the aesni engine
 * (daemon/engines/aesni/aesni_stream_aead.c) and on the openssl engine
 * (test_ccm_openssl), against OpenSSL's EVP one-shot results and NIST
 * SP 800-38C: every nonce and tag length, random messages, the declared
 * length (pieces past it or short of it, a length the nonce cannot
 * hold), a busy job manager. What CCM shares with GCM and
 * ChaCha20-Poly1305 (single pieces, empty pieces, forged tags, long
 * streams): test_stream_aead.c, over stream_aead_common.c.
 *
 * The seed is printed; STREAM_SEED=<n> replays a run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <intel-ipsec-mb.h>

#include "stream_aead_common.h"

static void test_ccm_random(void **state)
{
	random_msgs(CRD_ALG_AES_CCM, 14);
}

/* CCM's nonce and tag lengths, each with the longest message its length
 * field allows where that is short (nonce 13: 65535 bytes). */
static void test_ccm_nonce_tag_lengths(void **state)
{
	need_aesni();
	for (unsigned k = 0; k < 3; k++)
		for (size_t iv = 7; iv <= 13; iv++)
			for (size_t tag = 4; tag <= 16; tag += 2) {
				uint64_t len = iv == 13 && tag == 16
						       ? 0xffff
						       : rnd_in(0, 3000);
				check_msg(CRD_ALG_AES_CCM, aes_keys[k], iv, tag,
					  len, CUT_RANDOM);
			}
}

/* One piece of a CCM stream by hand. */
static int ccm_piece(const struct session *s, uint8_t pos, uint32_t len,
		     uint32_t param, size_t iv_len, uint8_t *buf, uint8_t *tag)
{
	static const uint8_t iv[13] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	struct engine_op op = { .src = buf,
				.dst = buf,
				.len = len,
				.op = CRD_OP_ENCRYPT,
				.pos = pos };
	if (pos & ENGINE_FIRST) {
		op.iv = iv;
		op.iv_len = (uint8_t)iv_len;
		op.param = param;
	}
	if (pos & ENGINE_LAST) {
		op.tag = tag;
		op.tag_len = 16;
	}
	return piece(s, &op);
}

/* Every byte of p[0, n) is v: a refused piece wrote nothing. */
static void assert_all(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			fail_msg("byte %zu written by a refused piece", i);
}

/* CCM's declared length: pieces past it, a LAST short of it or past
 * it, a length the nonce's length field cannot hold: BAD_PARAM, with
 * nothing written. */
static void test_ccm_declared_length(void **state)
{
	static const uint8_t key[16] = { 7 };
	uint8_t buf[2048], tag[16];
	const uint8_t F = ENGINE_FIRST, L = ENGINE_LAST;

	need_aesni();
	struct session *s = new_session(CRD_ALG_AES_CCM, key, 16, 16);
	memset(t.state, 0, STREAM_STATE_SIZE);
	/* a middle piece crossing the end */
	assert_int_equal(ccm_piece(s, F, 600, 1000, 12, buf, tag), CRD_ST_OK);
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(ccm_piece(s, 0, 401, 0, 12, buf, tag),
			 CRD_ST_BAD_PARAM);
	assert_all(buf, 401, 0xaa);
	/* a LAST crossing it */
	assert_int_equal(ccm_piece(s, F, 600, 1000, 12, buf, tag), CRD_ST_OK);
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(ccm_piece(s, L, 500, 0, 12, buf, tag),
			 CRD_ST_BAD_PARAM);
	assert_all(buf, 500, 0xaa);
	/* a LAST short of it, after a middle piece ending on it */
	assert_int_equal(ccm_piece(s, F, 600, 1000, 12, buf, tag), CRD_ST_OK);
	assert_int_equal(ccm_piece(s, 0, 300, 0, 12, buf, tag), CRD_ST_OK);
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(ccm_piece(s, L, 99, 0, 12, buf, tag),
			 CRD_ST_BAD_PARAM);
	assert_all(buf, 99, 0xaa);
	/* ...and an empty LAST exactly at it is fine */
	assert_int_equal(ccm_piece(s, F, 600, 1000, 12, buf, tag), CRD_ST_OK);
	assert_int_equal(ccm_piece(s, 0, 400, 0, 12, buf, tag), CRD_ST_OK);
	assert_int_equal(ccm_piece(s, L, 0, 0, 12, buf, tag), CRD_ST_OK);
	/* a FIRST longer than the whole */
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(ccm_piece(s, F, 1001, 1000, 12, buf, tag),
			 CRD_ST_BAD_PARAM);
	assert_all(buf, 1001, 0xaa);
	/* FIRST|LAST whose param is not its length */
	assert_int_equal(ccm_piece(s, F | L, 1000, 999, 12, buf, tag),
			 CRD_ST_BAD_PARAM);
	assert_int_equal(ccm_piece(s, F | L, 998, 999, 12, buf, tag),
			 CRD_ST_BAD_PARAM);
	/* nonce 13 leaves 2 bytes of length: at most 65535 */
	assert_int_equal(ccm_piece(s, F, 0, 65536, 13, buf, tag),
			 CRD_ST_BAD_PARAM);
	assert_int_equal(ccm_piece(s, F, 0, 65535, 13, buf, tag), CRD_ST_OK);
	memset(t.state, 0, STREAM_STATE_SIZE);
	/* nonce 12: 3 bytes */
	assert_int_equal(ccm_piece(s, F, 0, 1u << 24, 12, buf, tag),
			 CRD_ST_BAD_PARAM);
	/* a piece of no open stream (the daemon says NO_STREAM first) */
	assert_int_equal(ccm_piece(s, 0, 16, 0, 12, buf, tag),
			 CRD_ST_BAD_PARAM);
	assert_int_equal(ccm_piece(s, L, 16, 0, 12, buf, tag),
			 CRD_ST_BAD_PARAM);
	session_destroy(s);
}

/* CCM runs AES jobs on the worker's manager: with a job of someone
 * else's still in it, a piece fails with ENGINE and leaves that job to
 * its owner. */
static void test_ccm_busy_manager(void **state)
{
	static const uint8_t key[16] = { 3 };
	DECLARE_ALIGNED(uint8_t enc[16 * 15], 16);
	DECLARE_ALIGNED(uint8_t dec[16 * 15], 16);
	uint8_t blk[16] = { 0 }, out[16], iv[16] = { 0 }, buf[64], tag[16];
	IMB_MGR *m;

	need_aesni();
	m = t.mgr;
	struct session *s = new_session(CRD_ALG_AES_CCM, key, 16, 16);
	IMB_AES_KEYEXP_128(m, key, enc, dec);
	IMB_JOB *job = IMB_GET_NEXT_JOB(m);
	job->cipher_mode = IMB_CIPHER_CBC;
	job->cipher_direction = IMB_DIR_ENCRYPT;
	job->chain_order = IMB_ORDER_CIPHER_HASH;
	job->hash_alg = IMB_AUTH_NULL;
	job->key_len_in_bytes = 16;
	job->enc_keys = enc;
	job->dec_keys = dec;
	job->src = blk;
	job->dst = out;
	job->cipher_start_src_offset_in_bytes = 0;
	job->msg_len_to_cipher_in_bytes = 16;
	job->iv = iv;
	job->iv_len_in_bytes = 16;
	IMB_JOB *done = IMB_SUBMIT_JOB(m);
	if (done) /* this arch ran it at once: nothing to check */
		skip();
	memset(t.state, 0, STREAM_STATE_SIZE);
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(
		ccm_piece(s, ENGINE_FIRST | ENGINE_LAST, 64, 64, 12, buf, tag),
		CRD_ST_ENGINE);
	assert_all(buf, sizeof(buf), 0xaa);
	done = IMB_FLUSH_JOB(m);
	assert_ptr_equal(done, job);
	assert_int_equal(done->status, IMB_STATUS_COMPLETED);
	assert_int_equal(
		ccm_piece(s, ENGINE_FIRST | ENGINE_LAST, 64, 64, 12, buf, tag),
		CRD_ST_OK);
	explicit_bzero(enc, sizeof(enc));
	explicit_bzero(dec, sizeof(dec));
	session_destroy(s);
}

/* NIST SP 800-38C Appendix C, Examples 1-3 (one key), as streams cut
 * at random and as one piece: ciphertext and tag, the plaintext back, a
 * flipped tag bit refused. On the engine under test. */
static void test_ccm_sp800_38c(void **state)
{
	static const struct {
		const char *nonce, *aad, *pt, *ct_tag;
		unsigned tag;
	} v[] = {
		{ "10111213141516", "0001020304050607", "20212223",
		  "7162015b4dac255d", 4 },
		{ "1011121314151617", "000102030405060708090a0b0c0d0e0f",
		  "202122232425262728292a2b2c2d2e2f",
		  "d2a1f0e051ea5f62081a7792073d593d1fc64fbfaccd", 6 },
		{ "101112131415161718191a1b",
		  "000102030405060708090a0b0c0d0e0f10111213",
		  "202122232425262728292a2b2c2d2e2f3031323334353637",
		  "e3b201a9f5b71a7a9b1ceaeccd97e70b6176aad9a4428aa5484392fbc1b0"
		  "9951",
		  8 },
	};
	static const uint8_t key[16] = { 0x40, 0x41, 0x42, 0x43, 0x44, 0x45,
					 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b,
					 0x4c, 0x4d, 0x4e, 0x4f };
	need_aesni();
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct msg m = { .alg = CRD_ALG_AES_CCM,
				 .key_len = 16,
				 .tag_len = v[i].tag };
		uint8_t aad[32], pt[32], want[48], out[32];
		size_t len = strlen(v[i].pt) / 2;
		for (size_t j = 0; j < strlen(v[i].nonce) / 2; j++)
			sscanf(v[i].nonce + 2 * j, "%2hhx", &m.iv[j]);
		m.iv_len = strlen(v[i].nonce) / 2;
		m.aad_len = strlen(v[i].aad) / 2;
		for (size_t j = 0; j < m.aad_len; j++)
			sscanf(v[i].aad + 2 * j, "%2hhx", &aad[j]);
		for (size_t j = 0; j < len; j++)
			sscanf(v[i].pt + 2 * j, "%2hhx", &pt[j]);
		for (size_t j = 0; j < len + v[i].tag; j++)
			sscanf(v[i].ct_tag + 2 * j, "%2hhx", &want[j]);
		m.aad = aad;
		struct session *s =
			new_session(CRD_ALG_AES_CCM, key, 16, v[i].tag);
		for (int k = 0; k < 6; k++) {
			enum cut how = k ? CUT_RANDOM : CUT_ONE;
			memset(m.tag, 0, sizeof(m.tag));
			struct run r = stream(s, &m, CRD_OP_ENCRYPT, pt, out,
					      len, how);
			assert_int_equal(r.status, CRD_ST_OK);
			assert_memory_equal(out, want, len);
			assert_memory_equal(m.tag, want + len, v[i].tag);
			memset(out, 0x5a, sizeof(out));
			r = stream(s, &m, CRD_OP_DECRYPT, want, out, len, how);
			assert_int_equal(r.status, CRD_ST_OK);
			assert_memory_equal(out, pt, len);
			m.tag[k % v[i].tag] ^= 0x10;
			r = stream(s, &m, CRD_OP_DECRYPT, want, out, len, how);
			assert_int_equal(r.status, CRD_ST_AUTH_FAILED);
		}
		session_destroy(s);
	}
}

/* ---- The same on the openssl engine ---- */

/* CCM's cases, and the shared ones that cover CCM (they run GCM and
 * ChaCha20-Poly1305 too), on the openssl engine. */
static void test_ccm_openssl(void **state)
{
	on_openssl();
	test_single_piece(state);
	test_empty_pieces(state);
	test_ccm_nonce_tag_lengths(state);
	test_ccm_random(state);
	test_bad_tag(state);
	test_ccm_declared_length(state);
	test_ccm_sp800_38c(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ccm_nonce_tag_lengths),
		cmocka_unit_test(test_ccm_random),
		cmocka_unit_test(test_ccm_declared_length),
		cmocka_unit_test(test_ccm_busy_manager),
		cmocka_unit_test(test_ccm_sp800_38c),
		cmocka_unit_test_teardown(test_ccm_openssl, on_aesni),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
