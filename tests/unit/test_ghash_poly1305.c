/* SPDX-License-Identifier: MIT */
/*
 * The openssl engine's own GHASH and Poly1305 (daemon/engines/openssl/
 * ghash.c, poly1305.c), which its GCM and ChaCha20-Poly1305 streams
 * carry, against OpenSSL's:
 *
 *  - GHASH: GMAC through EVP's AES-GCM with AAD only (tag = GHASH(H, A,
 *    {}) ^ E_K(J0), H and E_K(J0) from EVP's AES-ECB), every key size,
 *    AAD of 0 bytes to 70 KB; the GCM paper's test case 2 (a GHASH value
 *    given outright); both multiplies (portable and PCLMULQDQ, when the
 *    CPU has it) alike on random and edge H.
 *  - Poly1305: EVP_MAC "POLY1305" on random keys and messages of 0 bytes
 *    to 70 KB fed in random whole-block pieces, RFC 8439 2.5.2, and the
 *    inputs of RFC 8439 A.3 #5..#11, which aim at the final reduction;
 *    each through poly1305_blocks() and both its ways (portable, and
 *    AVX2's eight or four blocks a step when the CPU has it).
 *
 * The seed is printed; STREAM_SEED=<n> replays a run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "ghash.h"
#include "poly1305.h"

static uint64_t rng;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rnd_fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static size_t pick_len(void)
{
	static const size_t edge[] = { 0, 1, 15, 16, 17, 31, 32, 33, 64, 255 };
	switch (rnd() % 4) {
	case 0:
		return edge[rnd() % (sizeof(edge) / sizeof(edge[0]))];
	case 1:
		return rnd() % 70000;
	default:
		return rnd() % 300;
	}
}

static void unhex(const char *s, uint8_t *out)
{
	for (size_t i = 0; s[2 * i]; i++)
		sscanf(s + 2 * i, "%2hhx", &out[i]);
}

/* ---- GHASH ---- */

typedef void blocks_fn(struct ghash *g, const uint8_t *p, size_t n);

static void blocks_clmul(struct ghash *g, const uint8_t *p, size_t n)
{
	assert_int_equal(ghash_blocks_clmul(g, p, n), 0);
}

/* The multiplies under test: the portable one, and PCLMULQDQ's if the
 * CPU has it. */
static unsigned impls(blocks_fn **fn)
{
	struct ghash g = { 0 };
	fn[0] = ghash_blocks_ct64;
	if (ghash_blocks_clmul(&g, NULL, 0) < 0) {
		printf("no PCLMULQDQ: the portable GHASH only\n");
		return 1;
	}
	fn[1] = blocks_clmul;
	return 2;
}

/* GHASH of len bytes, zero-padded, through fn in random whole-block
 * pieces. */
static void ghash_with(blocks_fn *fn, struct ghash *g, const uint8_t *p,
		       size_t len)
{
	size_t n = len / 16;
	while (n) {
		size_t k = 1 + rnd() % n;
		fn(g, p, k);
		p += 16 * k;
		n -= k;
	}
	if (len % 16) {
		uint8_t last[16] = { 0 };
		memcpy(last, p, len % 16);
		fn(g, last, 1);
	}
}

static void ecb(const uint8_t *key, size_t key_len, const uint8_t in[16],
		uint8_t out[16])
{
	const EVP_CIPHER *c = key_len == 16   ? EVP_aes_128_ecb()
			      : key_len == 24 ? EVP_aes_192_ecb()
					      : EVP_aes_256_ecb();
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int n = 0;
	assert_non_null(x);
	assert_true(EVP_EncryptInit_ex(x, c, NULL, key, NULL));
	assert_true(EVP_EncryptUpdate(x, out, &n, in, 16));
	assert_int_equal(n, 16);
	EVP_CIPHER_CTX_free(x);
}

/* EVP's GMAC tag (16 bytes) of aad under key, IV 12 bytes. */
static void evp_gmac(const uint8_t *key, size_t key_len, const uint8_t iv[12],
		     const uint8_t *aad, size_t aad_len, uint8_t tag[16])
{
	const EVP_CIPHER *c = key_len == 16   ? EVP_aes_128_gcm()
			      : key_len == 24 ? EVP_aes_192_gcm()
					      : EVP_aes_256_gcm();
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	uint8_t none[16];
	int n = 0;
	assert_non_null(x);
	assert_true(EVP_EncryptInit_ex(x, c, NULL, key, iv));
	if (aad_len)
		assert_true(EVP_EncryptUpdate(x, NULL, &n, aad, (int)aad_len));
	assert_true(EVP_EncryptFinal_ex(x, none, &n));
	assert_true(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag));
	EVP_CIPHER_CTX_free(x);
}

static void test_ghash_gmac(void **state)
{
	blocks_fn *fn[2];
	unsigned nfn = impls(fn);
	uint8_t *aad = malloc(70000);
	assert_non_null(aad);

	for (unsigned i = 0; i < 300; i++) {
		size_t key_len = 16 + 8 * (i % 3), len = pick_len();
		uint8_t key[32], iv[12], zero[16] = { 0 }, h[16], j0[16],
					 ekj0[16], want[16];
		rnd_fill(key, sizeof(key));
		rnd_fill(iv, sizeof(iv));
		rnd_fill(aad, len);
		evp_gmac(key, key_len, iv, aad, len, want);
		ecb(key, key_len, zero, h);
		memcpy(j0, iv, 12);
		memcpy(j0 + 12, "\0\0\0\1", 4);
		ecb(key, key_len, j0, ekj0);
		/* [len(A)]_64 || [len(C)]_64, in bits */
		uint8_t lens[16] = { 0 };
		for (int b = 0; b < 8; b++)
			lens[7 - b] = (uint8_t)((uint64_t)len * 8 >> (8 * b));
		for (unsigned f = 0; f < nfn; f++) {
			struct ghash g;
			uint8_t got[16];
			ghash_init(&g, h);
			ghash_with(fn[f], &g, aad, len);
			fn[f](&g, lens, 1);
			ghash_out(&g, got);
			for (int b = 0; b < 16; b++)
				got[b] ^= ekj0[b];
			if (memcmp(got, want, 16))
				fail_msg("GHASH %s: key %zu aad %zu: differs "
					 "from EVP's GMAC",
					 f ? "clmul" : "ct64", key_len, len);
		}
		/* and the interface's own pick, with ghash_pad */
		struct ghash g;
		uint8_t got[16];
		ghash_init(&g, h);
		ghash_pad(&g, aad, len);
		ghash_blocks(&g, lens, 1);
		ghash_out(&g, got);
		for (int b = 0; b < 16; b++)
			got[b] ^= ekj0[b];
		assert_memory_equal(got, want, 16);
	}
	free(aad);
}

/* McGrew and Viega, "The Galois/Counter Mode of Operation", test case
 * 2: GHASH(H, {}, C) for K = 0, IV = 0, P = 0^128. */
static void test_ghash_kat(void **state)
{
	uint8_t h[16], c[16], want[16], got[16], lens[16] = { 0 };
	blocks_fn *fn[2];
	unsigned nfn = impls(fn);

	unhex("66e94bd4ef8a2c3b884cfa59ca342b2e", h);
	unhex("0388dace60b6a392f328c2b971b2fe78", c);
	unhex("f38cbb1ad69223dcc3457ae5b6b0f885", want);
	lens[15] = 128; /* len(C) = 128 bits */
	for (unsigned f = 0; f < nfn; f++) {
		struct ghash g;
		ghash_init(&g, h);
		fn[f](&g, c, 1);
		fn[f](&g, lens, 1);
		ghash_out(&g, got);
		assert_memory_equal(got, want, 16);
	}
}

/* The two multiplies agree, on H and data with every bit pattern the
 * carry-less product's edges care about. */
static void test_ghash_impls_agree(void **state)
{
	static const char *const edge_h[] = {
		"00000000000000000000000000000001",
		"80000000000000000000000000000000",
		"ffffffffffffffffffffffffffffffff",
		"0000000000000001ffffffffffffffff",
		"ffffffffffffffff0000000000000000",
		"11111111111111118888888888888888",
	};
	blocks_fn *fn[2];
	uint8_t data[64 * 16];

	if (impls(fn) < 2)
		skip();
	for (unsigned i = 0; i < 2000; i++) {
		uint8_t h[16], a[16], b[16];
		struct ghash g1, g2;
		size_t n = 1 + rnd() % 64;
		if (i < sizeof(edge_h) / sizeof(edge_h[0]))
			unhex(edge_h[i], h);
		else
			rnd_fill(h, sizeof(h));
		rnd_fill(data, n * 16);
		if (i % 7 == 0)
			memset(data, 0xff, n * 16);
		ghash_init(&g1, h);
		ghash_init(&g2, h);
		ghash_blocks_ct64(&g1, data, n);
		assert_int_equal(ghash_blocks_clmul(&g2, data, n), 0);
		ghash_out(&g1, a);
		ghash_out(&g2, b);
		assert_memory_equal(a, b, 16);
	}
}

/* ---- Poly1305 ---- */

static void evp_poly1305(const uint8_t key[32], const uint8_t *m, size_t len,
			 uint8_t tag[16])
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "POLY1305", NULL);
	assert_non_null(mac);
	EVP_MAC_CTX *x = EVP_MAC_CTX_new(mac);
	size_t n = 0;
	assert_non_null(x);
	assert_true(EVP_MAC_init(x, key, 32, NULL));
	if (len)
		assert_true(EVP_MAC_update(x, m, len));
	assert_true(EVP_MAC_final(x, tag, &n, 16));
	assert_int_equal(n, 16);
	EVP_MAC_CTX_free(x);
	EVP_MAC_free(mac);
}

typedef void poly_fn(struct poly1305 *p, const uint8_t *m, size_t n);

static void poly_avx2(struct poly1305 *p, const uint8_t *m, size_t n)
{
	assert_int_equal(poly1305_blocks_avx2(p, m, n), 0);
}

/* The ways under test: the one poly1305_blocks() picks, the portable
 * one, and AVX2's if the CPU has it. */
static unsigned poly_impls(poly_fn **fn)
{
	struct poly1305 p = { 0 };
	fn[0] = poly1305_blocks;
	fn[1] = poly1305_blocks_portable;
	if (poly1305_blocks_avx2(&p, NULL, 0) < 0) {
		printf("no AVX2: the portable Poly1305 only\n");
		return 2;
	}
	fn[2] = poly_avx2;
	return 3;
}

/* Ours through fn, the whole blocks in pieces of a random number of
 * blocks, or all that are left. */
static void our_poly1305(poly_fn *fn, const uint8_t key[32], const uint8_t *m,
			 size_t len, uint8_t tag[16])
{
	struct poly1305 p;
	size_t n = len / 16;
	poly1305_init(&p, key);
	while (n) {
		size_t k = rnd() % 3 ? 1 + rnd() % n : n;
		fn(&p, m, k);
		m += 16 * k;
		n -= k;
	}
	poly1305_final(&p, m, len % 16, tag);
}

static void test_poly1305_evp(void **state)
{
	poly_fn *fn[3];
	unsigned nfn = poly_impls(fn);
	uint8_t *m = malloc(70000);
	assert_non_null(m);
	for (unsigned i = 0; i < 2000; i++) {
		uint8_t key[32], want[16], got[16];
		size_t len = pick_len();
		rnd_fill(key, sizeof(key));
		rnd_fill(m, len);
		switch (i % 8) { /* the accumulator's edges */
		case 1:
			memset(m, 0xff, len);
			break;
		case 2:
			memset(key, 0xff, sizeof(key));
			break;
		case 3:
			memset(key, 0xff, sizeof(key));
			memset(m, 0xff, len);
			break;
		case 4:
			memset(key, 0, 16); /* r = 0: the tag is s */
			break;
		}
		evp_poly1305(key, m, len, want);
		for (unsigned f = 0; f < nfn; f++) {
			our_poly1305(fn[f], key, m, len, got);
			if (memcmp(got, want, 16))
				fail_msg("Poly1305 of %zu bytes (case %u, way "
					 "%u) differs from EVP's",
					 len, i % 8, f);
		}
	}
	free(m);
}

static void test_poly1305_rfc8439(void **state)
{
	poly_fn *fn[3];
	unsigned nfn = poly_impls(fn);
	static const struct {
		const char *key, *msg, *tag;
	} v[] = {
		/* 2.5.2 */
		{ "85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149"
		  "f51b",
		  "43727970746f6772617068696320466f72756d2052657365617263682047"
		  "726f7570",
		  "a8061dc1305136c6c22b8baf0c0127a9" },
		/* A.3 #5: a partly reduced h that is not fully reduced */
		{ "0200000000000000000000000000000000000000000000000000000000000000",
		  "ffffffffffffffffffffffffffffffff",
		  "03000000000000000000000000000000" },
		/* #6: s overflows 2^128 */
		{ "02000000000000000000000000000000ffffffffffffffffffffffffffffffff",
		  "02000000000000000000000000000000",
		  "03000000000000000000000000000000" },
		/* #7: a data limb of all ones with a carry into it */
		{ "0100000000000000000000000000000000000000000000000000000000000000",
		  "fffffffffffffffffffffffffffffffff0ffffffffffffffffffffffffffff"
		  "ff11000000000000000000000000000000",
		  "05000000000000000000000000000000" },
		/* #8: h exactly 2^130 - 5 */
		{ "0100000000000000000000000000000000000000000000000000000000000000",
		  "fffffffffffffffffffffffffffffffffbfefefefefefefefefefefefefefe"
		  "fe01010101010101010101010101010101",
		  "00000000000000000000000000000000" },
		/* #9: h exactly 2^130 - 6 */
		{ "0200000000000000000000000000000000000000000000000000000000000000",
		  "fdffffffffffffffffffffffffffffff",
		  "faffffffffffffffffffffffffffffff" },
	};
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t key[32], msg[64], want[16], ref[16], got[16];
		size_t len = strlen(v[i].msg) / 2;
		unhex(v[i].key, key);
		unhex(v[i].msg, msg);
		unhex(v[i].tag, want);
		evp_poly1305(key, msg, len, ref);
		assert_memory_equal(ref, want, 16); /* the vector as typed */
		for (unsigned f = 0; f < nfn; f++) {
			our_poly1305(fn[f], key, msg, len, got);
			assert_memory_equal(got, want, 16);
		}
	}
}

int main(void)
{
	const char *env = getenv("STREAM_SEED");
	rng = env ? strtoull(env, NULL, 0) : 20261205;
	printf("STREAM_SEED=%" PRIu64 "\n", rng);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ghash_kat),
		cmocka_unit_test(test_ghash_gmac),
		cmocka_unit_test(test_ghash_impls_agree),
		cmocka_unit_test(test_poly1305_rfc8439),
		cmocka_unit_test(test_poly1305_evp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
