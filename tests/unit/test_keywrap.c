/* SPDX-License-Identifier: MIT */
/*
 * AES key wrap (daemon/keys/keywrap.c): the RFC 3394 section 4 and RFC 5649
 * section 6 vectors, both directions; random keys and lengths against
 * OpenSSL's id-aes*-wrap and id-aes*-wrap-pad; every corrupted wrap, a
 * wrong KEK and bad lengths refused, the output wiped on refusal.
 * TEST_SEED=<n> changes the random cases.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "keywrap.h"

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = 0;

	for (; h[0] && h[1]; h += 2)
		sscanf(h, "%2hhx", &out[n++]);
	return n;
}

struct vec {
	const char *kek, *in, *out;
	int pad; /* RFC 5649 */
};

static const struct vec vecs[] = {
	/* RFC 3394 4.1 - 4.6 */
	{ "000102030405060708090A0B0C0D0E0F",
	  "00112233445566778899AABBCCDDEEFF",
	  "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5", 0 },
	{ "000102030405060708090A0B0C0D0E0F1011121314151617",
	  "00112233445566778899AABBCCDDEEFF",
	  "96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D", 0 },
	{ "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
	  "00112233445566778899AABBCCDDEEFF",
	  "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7", 0 },
	{ "000102030405060708090A0B0C0D0E0F1011121314151617",
	  "00112233445566778899AABBCCDDEEFF0001020304050607",
	  "031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2",
	  0 },
	{ "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
	  "00112233445566778899AABBCCDDEEFF0001020304050607",
	  "A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1",
	  0 },
	{ "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
	  "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
	  "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43B"
	  "FB988B9B7A02DD21",
	  0 },
	/* RFC 5649 6: twenty octets, seven octets */
	{ "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8",
	  "c37b7e6492584340bed12207808941155068f738",
	  "138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a",
	  1 },
	{ "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8", "466f7250617369",
	  "afbeb0f07dfbf5419200f2ccb50bb24f", 1 },
};

typedef int wrap_fn(const uint8_t *, size_t, const uint8_t *, size_t, uint8_t *,
		    size_t);

static void test_vectors(void **state)
{
	for (size_t v = 0; v < sizeof(vecs) / sizeof(vecs[0]); v++) {
		uint8_t kek[32], in[64], want[80], got[80];
		size_t kl = unhex(vecs[v].kek, kek);
		size_t il = unhex(vecs[v].in, in);
		size_t wl = unhex(vecs[v].out, want);
		wrap_fn *wrap = vecs[v].pad ? kwp_wrap : kw_wrap;
		wrap_fn *unwrap = vecs[v].pad ? kwp_unwrap : kw_unwrap;

		assert_int_equal(vecs[v].pad ? kwp_wrapped_len(il)
					     : kw_wrapped_len(il),
				 wl);
		assert_int_equal(wrap(kek, kl, in, il, got, sizeof(got)), wl);
		assert_memory_equal(got, want, wl);
		assert_int_equal(unwrap(kek, kl, want, wl, got, sizeof(got)),
				 il);
		assert_memory_equal(got, in, il);
	}
}

/* OpenSSL's own wrap of in under kek: the independent implementation. */
static int ossl_wrap(int pad, int enc, const uint8_t *kek, size_t kl,
		     const uint8_t *in, size_t il, uint8_t *out)
{
	const EVP_CIPHER *c;
	int n = 0, f = 0;

	if (pad)
		c = kl == 16   ? EVP_aes_128_wrap_pad()
		    : kl == 24 ? EVP_aes_192_wrap_pad()
			       : EVP_aes_256_wrap_pad();
	else
		c = kl == 16   ? EVP_aes_128_wrap()
		    : kl == 24 ? EVP_aes_192_wrap()
			       : EVP_aes_256_wrap();
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	assert_non_null(ctx);
	EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	int ok = EVP_CipherInit_ex(ctx, c, NULL, kek, NULL, enc) &&
		 EVP_CipherUpdate(ctx, out, &n, in, (int)il) &&
		 EVP_CipherFinal_ex(ctx, out + n, &f);
	EVP_CIPHER_CTX_free(ctx);
	return ok ? n + f : -1;
}

static void test_differential(void **state)
{
	static const size_t kls[] = { 16, 24, 32 };
	uint8_t kek[32], in[600], ours[620], theirs[640], back[620];

	for (int i = 0; i < 600; i++) {
		size_t kl = kls[rand() % 3];
		int pad = i % 2;
		size_t il = pad ? 1 + (size_t)rand() % 520
				: 8 * (2 + (size_t)rand() % 64);

		assert_int_equal(RAND_bytes(kek, (int)kl), 1);
		assert_int_equal(RAND_bytes(in, (int)il), 1);
		int n = (pad ? kwp_wrap : kw_wrap)(kek, kl, in, il, ours,
						   sizeof(ours));
		int m = ossl_wrap(pad, 1, kek, kl, in, il, theirs);
		assert_int_equal(n, m);
		assert_memory_equal(ours, theirs, (size_t)n);
		/* Ours unwraps theirs, and OpenSSL unwraps ours. */
		assert_int_equal((pad ? kwp_unwrap : kw_unwrap)(kek, kl, theirs,
								(size_t)m, back,
								sizeof(back)),
				 il);
		assert_memory_equal(back, in, il);
		assert_int_equal(
			ossl_wrap(pad, 0, kek, kl, ours, (size_t)n, theirs),
			(int)il);
		assert_memory_equal(theirs, in, il);
	}
}

static int all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

/* Every single bit flipped in a wrap is refused, and what was unwrapped
 * so far is wiped; so is a wrap under another KEK. */
static void test_corrupt(void **state)
{
	uint8_t kek[32], kek2[32], in[40], w[56], out[56];
	size_t lens[] = { 3, 8, 9, 16, 40 };

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
		for (int pad = 0; pad < 2; pad++) {
			size_t il = lens[li];
			wrap_fn *wrap = pad ? kwp_wrap : kw_wrap;
			wrap_fn *unwrap = pad ? kwp_unwrap : kw_unwrap;

			if (!pad && (il % 8 || il < 16))
				continue;
			assert_int_equal(RAND_bytes(kek, 32), 1);
			memcpy(kek2, kek, 32);
			kek2[31] ^= 1;
			memset(in, 0x5c, il);
			int n = wrap(kek, 32, in, il, w, sizeof(w));
			assert_true(n > 0);
			for (int bit = 0; bit < 8 * n; bit++) {
				w[bit / 8] ^= (uint8_t)(1u << bit % 8);
				memset(out, 0xee, sizeof(out));
				assert_int_equal(unwrap(kek, 32, w, (size_t)n,
							out, sizeof(out)),
						 -EBADMSG);
				assert_true(all_zero(out, (size_t)n - 8));
				w[bit / 8] ^= (uint8_t)(1u << bit % 8);
			}
			assert_int_equal(unwrap(kek2, 32, w, (size_t)n, out,
						sizeof(out)),
					 -EBADMSG);
			assert_int_equal(
				unwrap(kek, 32, w, (size_t)n, out, sizeof(out)),
				(int)il);
			assert_memory_equal(out, in, il);
		}
}

/* One AES block under kek: a single-semiblock KWP wrap is exactly this
 * (RFC 5649 4.1), so any integrity value can be forged to test the
 * checks one at a time. */
static void forge1(const uint8_t kek[16], const uint8_t a[8],
		   const uint8_t p[8], uint8_t w[16])
{
	uint8_t b[16];
	int n = 0;

	memcpy(b, a, 8);
	memcpy(b + 8, p, 8);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	assert_non_null(ctx);
	assert_true(
		EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), NULL, kek, NULL) &&
		EVP_CIPHER_CTX_set_padding(ctx, 0) &&
		EVP_EncryptUpdate(ctx, w, &n, b, 16) && n == 16);
	EVP_CIPHER_CTX_free(ctx);
}

static void test_kwp_checks(void **state)
{
	static const uint8_t kek[16] = { 1, 2, 3 };
	static const struct {
		uint8_t a[8], p[8];
		int want;
	} cases[] = {
		{ { 0xa6, 0x59, 0x59, 0xa6, 0, 0, 0, 5 },
		  { 1, 2, 3, 4, 5 },
		  5 },
		{ { 0xa6, 0x59, 0x59, 0xa6, 0, 0, 0, 8 },
		  { 1, 2, 3, 4, 5, 6, 7, 8 },
		  8 },
		{ { 0xa6, 0x59, 0x59, 0xa6, 0, 0, 0, 1 }, { 9 }, 1 },
		/* length zero, past the padded size, far past */
		{ { 0xa6, 0x59, 0x59, 0xa6, 0, 0, 0, 0 }, { 0 }, -EBADMSG },
		{ { 0xa6, 0x59, 0x59, 0xa6, 0, 0, 0, 9 }, { 1 }, -EBADMSG },
		{ { 0xa6, 0x59, 0x59, 0xa6, 1, 0, 0, 5 }, { 1 }, -EBADMSG },
		{ { 0xa6, 0x59, 0x59, 0xa6, 0x80, 0, 0, 5 }, { 1 }, -EBADMSG },
		/* a pad byte not zero, first and last */
		{ { 0xa6, 0x59, 0x59, 0xa6, 0, 0, 0, 5 },
		  { 1, 2, 3, 4, 5, 1, 0, 0 },
		  -EBADMSG },
		{ { 0xa6, 0x59, 0x59, 0xa6, 0, 0, 0, 5 },
		  { 1, 2, 3, 4, 5, 0, 0, 0x80 },
		  -EBADMSG },
		/* the prefix: KW's, and one bit off */
		{ { 0xa6, 0xa6, 0xa6, 0xa6, 0, 0, 0, 5 }, { 1 }, -EBADMSG },
		{ { 0xa6, 0x59, 0x59, 0xa7, 0, 0, 0, 5 }, { 1 }, -EBADMSG },
	};
	uint8_t w[16], out[8];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		forge1(kek, cases[i].a, cases[i].p, w);
		memset(out, 0xee, sizeof(out));
		assert_int_equal(kwp_unwrap(kek, 16, w, 16, out, sizeof(out)),
				 cases[i].want);
		if (cases[i].want > 0)
			assert_memory_equal(out, cases[i].p, 8);
		else
			assert_true(all_zero(out, 8));
	}

	/* Multi-semiblock: a KW wrap of 24 bytes is not a KWP wrap, and a
	 * KWP wrap cut by a semiblock or a byte is refused. */
	uint8_t in[24], w2[32], out2[24];
	memset(in, 0xab, sizeof(in));
	assert_int_equal(kw_wrap(kek, 16, in, 24, w2, sizeof(w2)), 32);
	assert_int_equal(kwp_unwrap(kek, 16, w2, 32, out2, sizeof(out2)),
			 -EBADMSG);
	assert_true(all_zero(out2, 24));
	assert_int_equal(kwp_wrap(kek, 16, in, 17, w2, sizeof(w2)), 32);
	assert_int_equal(kwp_unwrap(kek, 16, w2, 32, out2, sizeof(out2)), 17);
	assert_int_equal(kwp_unwrap(kek, 16, w2, 24, out2, sizeof(out2)),
			 -EBADMSG);
	assert_int_equal(kwp_unwrap(kek, 16, w2, 31, out2, sizeof(out2)),
			 -EINVAL);
}

static void test_bad_args(void **state)
{
	uint8_t kek[32] = { 0 }, in[64] = { 0 }, out[80];

	assert_int_equal(kw_wrap(kek, 20, in, 16, out, sizeof(out)), -EINVAL);
	assert_int_equal(kwp_wrap(kek, 0, in, 16, out, sizeof(out)), -EINVAL);
	assert_int_equal(kw_wrap(kek, 16, in, 8, out, sizeof(out)), -EINVAL);
	assert_int_equal(kw_wrap(kek, 16, in, 17, out, sizeof(out)), -EINVAL);
	assert_int_equal(kwp_wrap(kek, 16, in, 0, out, sizeof(out)), -EINVAL);
	assert_int_equal(kw_wrap(kek, 16, in, 16, out, 23), -ENOSPC);
	assert_int_equal(kwp_wrap(kek, 16, in, 9, out, 23), -ENOSPC);
	assert_int_equal(kw_unwrap(kek, 16, in, 16, out, sizeof(out)), -EINVAL);
	assert_int_equal(kw_unwrap(kek, 16, in, 25, out, sizeof(out)), -EINVAL);
	assert_int_equal(kwp_unwrap(kek, 16, in, 8, out, sizeof(out)), -EINVAL);
	assert_int_equal(kw_unwrap(kek, 16, in, 24, out, 15), -ENOSPC);
	assert_int_equal(kw_wrapped_len(KW_MAX_INPUT + 8), 0);
	assert_int_equal(kwp_wrapped_len(KW_MAX_INPUT + 1), 0);
	/* All zeros never unwraps. */
	assert_int_equal(kw_unwrap(kek, 16, in, 24, out, sizeof(out)),
			 -EBADMSG);
	assert_int_equal(kwp_unwrap(kek, 16, in, 16, out, sizeof(out)),
			 -EBADMSG);
}

int main(void)
{
	const char *seed = getenv("TEST_SEED");

	srand(seed ? (unsigned)strtoul(seed, NULL, 0) : 17);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_kwp_checks),
		cmocka_unit_test(test_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
