// SPDX-License-Identifier: MIT
/*
 * AES key wrap with padding (RFC 5649) as an op any client can use:
 * CC_ALG_AES_KWP, encrypt = wrap, decrypt = unwrap. The wrap of n bytes is
 * 8 + n + pad bytes (pad = (8 - n % 8) % 8): the op's tag is its first
 * 8 + pad bytes (the session's tag length), its data the other n, so
 * tag || data is the RFC's output. On every engine cc_capabilities_get()
 * lists for it:
 *
 * - RFC 5649 section 6's two vectors (20 and 7 bytes of key under the
 *   same 192-bit KEK), wrapped and unwrapped;
 * - OpenSSL's AES-n-WRAP-PAD in-process as an independent
 *   implementation: random KEKs, every length from 1 to 33 bytes, 4095,
 *   4096 and random ones, the daemon's wrap unwrapped here and ours
 *   unwrapped there;
 * - refusals: lengths 0 and 4097, a tag length that is not 8 + pad for
 *   the op's length, tags of 7 and 16, an IV, a 20-byte KEK; a tampered
 *   wrap (tag or data), a wrong KEK, or a wrap unwrapped as another
 *   length completes CC_ERR_AUTH_FAILED with the output zeroed;
 * - a wrong KEK's unwrap is never visible in the shared arena, not even
 *   while it runs: a thread watches the zeroed destination while
 *   such unwraps (and tampered ones) of 4093 bytes run through the queue.
 *
 * The frame, the vectors' and OpenSSL's runs are kw_common.c's.
 *
 * Exit: 0 passed, 1 failed.
 */
#include "kw_common.h"

#include <string.h>

/* The tag length of an n-byte wrap: 8 and the padding. */
static unsigned tag_for(size_t n)
{
	return 8 + (unsigned)((8 - n % 8) % 8);
}

/* RFC 5649 section 6. */
static const struct kw_vector rfc5649[] = {
	{ "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8",
	  "c37b7e6492584340bed12207808941155068f738",
	  "138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a" },
	{ "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8", "466f7250617369",
	  "afbeb0f07dfbf5419200f2ccb50bb24f" },
};

/* 1..33 bytes (every padding, the one-block case), the bound and below
 * it, then at random */
static size_t length(unsigned round, unsigned r)
{
	return round < 33   ? round + 1
	       : round < 36 ? KW_DATA_MAX
	       : round < 39 ? KW_DATA_MAX - 1
			    : 1 + r % KW_DATA_MAX;
}

static const struct kw_alg kw;

static void run_negative(struct cc_conn *conn, const char *eng)
{
	uint8_t kek[32] = { 1 }, other[16] = { 2 },
		data[KW_DATA_MAX + 8] = { 3 };
	uint8_t ct[KW_DATA_MAX + 8], pt[KW_DATA_MAX + 8], tag[16],
		iv[16] = { 0 };
	int err;
	/* tag 12: lengths of 4 mod 8 */
	uint32_t sid = kw_session(&kw, conn, eng, kek, 16, 12, &err);

	CHECK(sid, "[%s] session: %s", eng, cc_strerror(err));
	if (!sid)
		return;
	/* lengths: none, past the bound, not 4 mod 8 (the tag's) */
	static const size_t bad[] = { 0, KW_DATA_MAX + 4, 8, 16, 21, 23 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data,
			       ct, bad[i], tag);
		CHECK(err == CC_ERR_BAD_PARAM,
		      "[%s] wrap of %zu bytes with a 12-byte tag: want "
		      "refused, got %s",
		      eng, bad[i], cc_strerror(err));
	}
	err = fx_crypt(conn, sid, CC_ENCRYPT, iv, 16, NULL, 0, data, ct, 20,
		       tag);
	CHECK(err == CC_ERR_BAD_PARAM, "[%s] an IV: want refused, got %s", eng,
	      cc_strerror(err));
	/* the largest length for this tag is fine */
	err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data, ct,
		       KW_DATA_MAX - 4, tag);
	CHECK(!err, "[%s] wrap of %d bytes: %s", eng, KW_DATA_MAX - 4,
	      cc_strerror(err));

	/* a tampered tag, a tampered body, the wrong KEK */
	err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data, ct, 20,
		       tag);
	CHECK(!err, "[%s] wrap: %s", eng, cc_strerror(err));
	for (int t = 0; t < 2; t++) {
		uint8_t *b = t ? ct + 13 : tag + 10;

		*b ^= 0x40;
		memset(pt, 0xaa, 20);
		err = fx_crypt(conn, sid, CC_DECRYPT, NULL, 0, NULL, 0, ct, pt,
			       20, tag);
		CHECK(err == CC_ERR_AUTH_FAILED && kw_all_zero(pt, 20),
		      "[%s] unwrap of a tampered %s: want auth failure and "
		      "zeroes, got %s",
		      eng, t ? "body" : "tag", cc_strerror(err));
		*b ^= 0x40;
	}
	uint32_t wrong = kw_session(&kw, conn, eng, other, 16, 12, &err);
	CHECK(wrong, "[%s] session: %s", eng, cc_strerror(err));
	if (wrong) {
		memset(pt, 0xaa, 20);
		err = fx_crypt(conn, wrong, CC_DECRYPT, NULL, 0, NULL, 0, ct,
			       pt, 20, tag);
		CHECK(err == CC_ERR_AUTH_FAILED && kw_all_zero(pt, 20),
		      "[%s] unwrap under the wrong KEK: got %s", eng,
		      cc_strerror(err));
		cc_session_destroy(conn, wrong);
	}
	/* the same 32 bytes unwrapped as 19 (tag 13): its MLI says 20 */
	uint32_t as19 = kw_session(&kw, conn, eng, kek, 16, 13, &err);
	CHECK(as19, "[%s] session: %s", eng, cc_strerror(err));
	if (as19) {
		uint8_t blob[32];
		memcpy(blob, tag, 12);
		memcpy(blob + 12, ct, 20);
		memset(pt, 0xaa, 19);
		err = fx_crypt(conn, as19, CC_DECRYPT, NULL, 0, NULL, 0,
			       blob + 13, pt, 19, blob);
		CHECK(err == CC_ERR_AUTH_FAILED && kw_all_zero(pt, 19),
		      "[%s] a 20-byte wrap unwrapped as 19 bytes: got %s", eng,
		      cc_strerror(err));
		cc_session_destroy(conn, as19);
	}
	cc_session_destroy(conn, sid);
	/* tags: 8 to 15 */
	CHECK(!kw_session(&kw, conn, eng, kek, 16, 7, &err) && err,
	      "[%s] a 7-byte tag: want refused", eng);
	CHECK(!kw_session(&kw, conn, eng, kek, 16, 16, &err) && err,
	      "[%s] a 16-byte tag: want refused", eng);
	CHECK(!kw_session(&kw, conn, eng, kek, 20, 8, &err) && err,
	      "[%s] a 20-byte KEK: want refused", eng);
}

static const struct kw_alg kw = {
	.alg = CC_ALG_AES_KWP,
	.name = "aes-kwp",
	.ossl = "WRAP-PAD",
	.tag_for = tag_for,
	.vectors = rfc5649,
	.n_vectors = sizeof(rfc5649) / sizeof(rfc5649[0]),
	.length = length,
	.rounds = 60,
	.watch_len = KW_DATA_MAX - 3,
	.negative = run_negative,
};

int main(void)
{
	return kw_main(&kw, "test_keywrap_pad_op");
}
