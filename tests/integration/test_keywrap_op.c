// SPDX-License-Identifier: MIT
/*
 * AES key wrap (RFC 3394) as an op any client can use: CC_ALG_AES_KW,
 * encrypt = wrap, decrypt = unwrap, the RFC's output A || R[1..n] as the
 * op's tag (A) and data (R). On every engine cc_capabilities_get() lists
 * for it:
 *
 * - RFC 3394 section 4's six vectors (KEKs of 128, 192, 256 bits; key
 *   data of 128, 192, 256 bits), wrapped and unwrapped;
 * - OpenSSL's AES-n-WRAP in-process as an independent implementation:
 *   random KEKs and lengths from 16 to 4096 bytes, the daemon's wrap
 *   unwrapped here and ours unwrapped there;
 * - refusals: lengths of 8, 20 and 4104 bytes, a 4-byte tag, an IV; and
 *   a tampered wrap (tag or data) or a wrong KEK completes
 *   CC_ERR_AUTH_FAILED with the output zeroed;
 * - a failing unwrap's output is never visible in the shared arena, not
 *   even while it runs: a thread watches the zeroed destination while
 *   tampered and wrong-KEK unwraps of 4088 bytes run through the queue
 *   (raw AES decryptions under the KEK would show there otherwise, as
 *   they did when the engine unwrapped straight into it).
 *
 * The frame, the vectors' and OpenSSL's runs are kw_common.c's.
 *
 * Exit: 0 passed, 1 failed.
 */
#include "kw_common.h"

#include <string.h>

/* RFC 3394 section 4.1 - 4.6. */
static const struct kw_vector rfc3394[] = {
	{ "000102030405060708090A0B0C0D0E0F",
	  "00112233445566778899AABBCCDDEEFF",
	  "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5" },
	{ "000102030405060708090A0B0C0D0E0F1011121314151617",
	  "00112233445566778899AABBCCDDEEFF",
	  "96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D" },
	{ "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
	  "00112233445566778899AABBCCDDEEFF",
	  "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7" },
	{ "000102030405060708090A0B0C0D0E0F1011121314151617",
	  "00112233445566778899AABBCCDDEEFF0001020304050607",
	  "031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2" },
	{ "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
	  "00112233445566778899AABBCCDDEEFF0001020304050607",
	  "A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1" },
	{ "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
	  "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
	  "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43B"
	  "FB988B9B7A02DD21" },
};

static unsigned tag_for(size_t n)
{
	(void)n;
	return 8; /* A, the integrity value */
}

/* 16, 24 and 4096 bytes always; then multiples of 8 at random */
static size_t length(unsigned round, unsigned r)
{
	return round < 3   ? 16
	       : round < 6 ? 24
	       : round < 9 ? 4096
			   : 16 + 8 * (r % 510);
}

static const struct kw_alg kw;

static void run_negative(struct cc_conn *conn, const char *eng)
{
	/* 32 bytes: the 20-byte KEK below is read from it too */
	uint8_t kek[32] = { 1 }, other[16] = { 2 }, data[4104] = { 3 };
	uint8_t ct[4104], pt[4104], tag[8], iv[16] = { 0 };
	int err;
	uint32_t sid = kw_session(&kw, conn, eng, kek, 16, 8, &err);

	CHECK(sid, "[%s] session: %s", eng, cc_strerror(err));
	if (!sid)
		return;
	/* lengths: one semiblock, not a multiple of 8, past the bound */
	static const size_t bad[] = { 0, 8, 20, 4104 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data,
			       ct, bad[i], tag);
		CHECK(err == CC_ERR_BAD_PARAM,
		      "[%s] wrap of %zu bytes: want refused, got %s", eng,
		      bad[i], cc_strerror(err));
	}
	err = fx_crypt(conn, sid, CC_ENCRYPT, iv, 16, NULL, 0, data, ct, 32,
		       tag);
	CHECK(err == CC_ERR_BAD_PARAM, "[%s] an IV: want refused, got %s", eng,
	      cc_strerror(err));
	/* a tampered tag, a tampered body, the wrong KEK */
	err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data, ct, 32,
		       tag);
	CHECK(!err, "[%s] wrap: %s", eng, cc_strerror(err));
	for (int t = 0; t < 2; t++) {
		uint8_t *b = t ? ct + 17 : tag + 3;

		*b ^= 0x40;
		memset(pt, 0xaa, 32);
		err = fx_crypt(conn, sid, CC_DECRYPT, NULL, 0, NULL, 0, ct, pt,
			       32, tag);
		CHECK(err == CC_ERR_AUTH_FAILED && kw_all_zero(pt, 32),
		      "[%s] unwrap of a tampered %s: want auth failure and "
		      "zeroes, got %s",
		      eng, t ? "body" : "tag", cc_strerror(err));
		*b ^= 0x40;
	}
	uint32_t wrong = kw_session(&kw, conn, eng, other, 16, 8, &err);
	if (wrong) {
		memset(pt, 0xaa, 32);
		err = fx_crypt(conn, wrong, CC_DECRYPT, NULL, 0, NULL, 0, ct,
			       pt, 32, tag);
		CHECK(err == CC_ERR_AUTH_FAILED && kw_all_zero(pt, 32),
		      "[%s] unwrap under the wrong KEK: got %s", eng,
		      cc_strerror(err));
		cc_session_destroy(conn, wrong);
	}
	cc_session_destroy(conn, sid);
	/* the tag is the 8-byte integrity value, nothing else */
	CHECK(!kw_session(&kw, conn, eng, kek, 16, 4, &err) && err,
	      "[%s] a 4-byte tag: want refused", eng);
	CHECK(!kw_session(&kw, conn, eng, kek, 20, 8, &err) && err,
	      "[%s] a 20-byte KEK: want refused", eng);
}

static const struct kw_alg kw = {
	.alg = CC_ALG_AES_KW,
	.name = "aes-kw",
	.ossl = "WRAP",
	.tag_for = tag_for,
	.vectors = rfc3394,
	.n_vectors = sizeof(rfc3394) / sizeof(rfc3394[0]),
	.length = length,
	.rounds = 24,
	.watch_len = KW_DATA_MAX - 8,
	.negative = run_negative,
};

int main(void)
{
	return kw_main(&kw, "test_keywrap_op");
}
