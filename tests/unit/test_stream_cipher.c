/* SPDX-License-Identifier: MIT */
/*
 * Stream pieces of the block-cipher modes (daemon/engines/stream.h):
 * AES-CBC, AES-CTR and AES-ECB on the aesni engine
 * (aesni_stream_cipher.c) and on the openssl engine (the *_openssl cases),
 * and AES-XTS per data unit on the openssl engine (openssl_stream.c),
 * called through engine->stream directly, against
 * OpenSSL EVP one-shot results: every key size, encrypt and decrypt, in
 * place and out of place, messages from 0 bytes to a few MiB and one of
 * 64 MiB and more, cut at random (1-byte pieces, odd sizes, up to 1 MiB,
 * empty pieces; whole blocks or units where the mode needs them). XTS's
 * reference is one EVP operation per data unit, the unit's tweak the IV
 * plus its index (128-bit little-endian).
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

#include <openssl/evp.h>

#include <cryptod/ring_abi.h>

#include "engine.h"
#include "session.h"
#include "stream_util.h"

static struct {
	void *aesni_w, *ossl_w;
	int ossl; /* CBC, CTR, ECB on the openssl engine (else aesni) */
} g;

/* ---- References: OpenSSL EVP ---- */

static const EVP_CIPHER *ref_cipher(unsigned alg, unsigned key_len)
{
	int i = key_len == 16 ? 0 : key_len == 24 ? 1 : 2;
	switch (alg) {
	case CRD_ALG_AES_CBC:
		return (const EVP_CIPHER *[]){ EVP_aes_128_cbc(),
					       EVP_aes_192_cbc(),
					       EVP_aes_256_cbc() }[i];
	case CRD_ALG_AES_CTR:
		return (const EVP_CIPHER *[]){ EVP_aes_128_ctr(),
					       EVP_aes_192_ctr(),
					       EVP_aes_256_ctr() }[i];
	case CRD_ALG_AES_ECB:
		return (const EVP_CIPHER *[]){ EVP_aes_128_ecb(),
					       EVP_aes_192_ecb(),
					       EVP_aes_256_ecb() }[i];
	default: /* XTS: 32 or 64 */
		return key_len == 32 ? EVP_aes_128_xts() : EVP_aes_256_xts();
	}
}

/* One EVP operation over len bytes. */
static void ref_op(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv,
		   int enc, const uint8_t *in, uint8_t *out, size_t len)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = 0, m = 0;
	assert_non_null(ctx);
	assert_true(EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc));
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	if (len)
		assert_true(EVP_CipherUpdate(ctx, out, &n, in, (int)len));
	assert_true(EVP_CipherFinal_ex(ctx, out + n, &m));
	assert_int_equal((size_t)(n + m), len);
	EVP_CIPHER_CTX_free(ctx);
}

/* XTS per data unit: unit k's tweak is iv + k (128-bit little-endian);
 * the last unit may be shorter (>= 16 bytes). One context, keyed once,
 * each unit one operation from its own tweak. */
static void ref_xts(unsigned key_len, const uint8_t *key, const uint8_t *iv,
		    size_t unit, int enc, const uint8_t *in, uint8_t *out,
		    size_t len)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	uint8_t t[16];
	assert_non_null(ctx);
	assert_true(EVP_CipherInit_ex(ctx, ref_cipher(CRD_ALG_AES_XTS, key_len),
				      NULL, key, NULL, enc));
	memcpy(t, iv, 16);
	for (size_t off = 0; off < len; off += unit) {
		int n = (int)(len - off < unit ? len - off : unit), m = 0;
		assert_true(EVP_CipherInit_ex(ctx, NULL, NULL, NULL, t, enc));
		assert_true(EVP_CipherUpdate(ctx, out + off, &m, in + off, n));
		assert_int_equal(m, n);
		for (int i = 0; i < 16 && !++t[i]; i++)
			;
	}
	EVP_CIPHER_CTX_free(ctx);
}

/* ---- One algorithm and key ---- */

struct cipher_case {
	unsigned alg, key_len;
	const struct engine *e;
	void *w;
	uint8_t key[64], iv[16];
	struct session *s;
	size_t gran; /* piece granule: 16 (CBC, ECB), 1 (CTR), unit (XTS) */
};

static void case_open(struct cipher_case *k, unsigned alg, unsigned key_len)
{
	memset(k, 0, sizeof(*k));
	k->alg = alg;
	k->key_len = key_len;
	int ossl = alg == CRD_ALG_AES_XTS || g.ossl;
	k->e = ossl ? &engine_openssl : &engine_aesni;
	k->w = ossl ? g.ossl_w : g.aesni_w;
	k->gran = alg == CRD_ALG_AES_CTR ? 1 : 16;
	if (!k->w)
		skip(); /* no AES-NI: the engine is not there */
	su_fill(k->key, sizeof(k->key));
	struct session_params p = { .alg = alg,
				    .key = k->key,
				    .key_len = key_len,
				    .engine = k->e->name };
	assert_int_equal(session_create(&p, &k->s), 0);
}

static void case_close(struct cipher_case *k)
{
	session_destroy(k->s);
	k->s = NULL;
}

/* A random IV; CTR's now and then near a wrap of its low 32-bit word or
 * of all 128 bits. */
static void case_iv(struct cipher_case *k)
{
	su_fill(k->iv, 16);
	if (k->alg == CRD_ALG_AES_CTR && su_below(3) == 0) {
		int all = (int)su_below(2);
		for (int i = all ? 0 : 12; i < 16; i++)
			k->iv[i] = 0xff;
		k->iv[15] = (uint8_t)(0xff - su_below(8));
	}
}

static void case_ref(const struct cipher_case *k, size_t unit, int enc,
		     const uint8_t *in, uint8_t *out, size_t len)
{
	if (k->alg == CRD_ALG_AES_XTS)
		ref_xts(k->key_len, k->key, k->iv, unit, enc, in, out, len);
	else
		ref_op(ref_cipher(k->alg, k->key_len), k->key,
		       k->alg == CRD_ALG_AES_ECB ? NULL : k->iv, enc, in, out,
		       len);
}

/* The pieces of the last run_ok, for failure messages. */
enum { LAST_CUTS = 64 };
static struct {
	size_t len[LAST_CUTS], n, total;
} last_cuts;

/* Pieces of len bytes, granule gran, about typ bytes each (0: random). */
static void run_ok(const struct cipher_case *k, int dir, size_t unit,
		   const uint8_t *src, uint8_t *dst, size_t len, size_t gran,
		   size_t typ)
{
	struct su_cuts c = { 0 };
	struct su_piece p = { .s = k->s,
			      .dir = dir,
			      .iv = k->alg == CRD_ALG_AES_ECB ? NULL : k->iv,
			      .iv_len = k->alg == CRD_ALG_AES_ECB ? 0 : 16,
			      .param = (uint32_t)unit };
	size_t bad = 0;
	su_cut(&c, len, gran, typ);
	int st = su_run(k->e, k->w, &p, src, dst, &c, &bad);
	if (st != CRD_ST_OK)
		fail_msg("alg %u key %u len %zu: piece %zu of %zu (%zu bytes) "
			 "status %d",
			 k->alg, k->key_len, len, bad, c.n, c.len[bad], st);
	last_cuts.n = 0;
	for (size_t i = 0; i < c.n && i < LAST_CUTS; i++)
		last_cuts.len[last_cuts.n++] = c.len[i];
	last_cuts.total = c.n;
	su_cuts_free(&c);
}

/* out == want, else a failure that names the pieces of the last run. */
static void expect_equal(const struct cipher_case *k, const uint8_t *out,
			 const uint8_t *want, size_t len, size_t unit)
{
	if (!memcmp(out, want, len))
		return;
	size_t at = 0;
	while (out[at] == want[at])
		at++;
	fprintf(stderr,
		"alg %u key %u len %zu unit %zu: first difference at "
		"%zu; %zu pieces:",
		k->alg, k->key_len, len, unit, at, last_cuts.total);
	for (size_t i = 0; i < last_cuts.n; i++)
		fprintf(stderr, " %zu", last_cuts.len[i]);
	fprintf(stderr, "%s\n", last_cuts.total > last_cuts.n ? " ..." : "");
	fail();
}

/* One message of len bytes (XTS: in units of unit bytes): encrypt and
 * decrypt, out of place and in place, each cut afresh; and the whole
 * message as one FIRST|LAST piece against one EVP operation. */
static void check_message(struct cipher_case *k, size_t len, size_t unit)
{
	size_t gran = k->alg == CRD_ALG_AES_XTS ? unit : k->gran;
	uint8_t *pt = malloc(len + 1), *ref = malloc(len + 1);
	uint8_t *out = malloc(len + 1), *buf = malloc(len + 1);
	assert_true(pt && ref && out && buf);

	case_iv(k);
	su_fill(pt, len);
	case_ref(k, unit, 1, pt, ref, len);

	run_ok(k, CRD_OP_ENCRYPT, unit, pt, out, len, gran, 0);
	expect_equal(k, out, ref, len, unit);
	memcpy(buf, pt, len);
	run_ok(k, CRD_OP_ENCRYPT, unit, buf, buf, len, gran, 0);
	expect_equal(k, buf, ref, len, unit);
	run_ok(k, CRD_OP_DECRYPT, unit, ref, out, len, gran, 0);
	expect_equal(k, out, pt, len, unit);
	memcpy(buf, ref, len);
	run_ok(k, CRD_OP_DECRYPT, unit, buf, buf, len, gran, 0);
	expect_equal(k, buf, pt, len, unit);

	/* One piece: XTS's is then one data unit of len bytes. */
	if (k->alg != CRD_ALG_AES_XTS || (len >= 16 && len <= (16u << 20))) {
		struct su_piece p = {
			.s = k->s,
			.dir = CRD_OP_ENCRYPT,
			.iv = k->alg == CRD_ALG_AES_ECB ? NULL : k->iv,
			.iv_len = k->alg == CRD_ALG_AES_ECB ? 0 : 16,
		};
		case_ref(k, len, 1, pt, ref, len);
		assert_int_equal(su_run_one(k->e, k->w, &p, pt, out, len),
				 CRD_ST_OK);
		assert_memory_equal(out, ref, len);
		/* and the engine's own one-shot op */
		assert_int_equal(su_oneshot(k->e, k->w, &p, pt, buf, len),
				 CRD_ST_OK);
		assert_memory_equal(buf, ref, len);
		p.dir = CRD_OP_DECRYPT;
		memcpy(buf, ref, len);
		assert_int_equal(su_run_one(k->e, k->w, &p, buf, buf, len),
				 CRD_ST_OK);
		assert_memory_equal(buf, pt, len);
	}
	free(pt);
	free(ref);
	free(out);
	free(buf);
}

enum { SWEEP = 28, SWEEP_MAX = 3u << 20 };

/* CBC, CTR, ECB: every key size, a sweep of message sizes. */
static void sweep_mode(unsigned alg)
{
	static const unsigned keys[] = { 16, 24, 32 };
	for (unsigned ki = 0; ki < 3; ki++) {
		struct cipher_case k;
		case_open(&k, alg, keys[ki]);
		for (unsigned i = 0; i < SWEEP; i++) {
			size_t len = su_size(i, SWEEP_MAX);
			if (alg != CRD_ALG_AES_CTR)
				len &= ~(size_t)15;
			check_message(&k, len, 0);
		}
		case_close(&k);
	}
}

static void test_cbc(void **state)
{
	sweep_mode(CRD_ALG_AES_CBC);
}

static void test_ctr(void **state)
{
	sweep_mode(CRD_ALG_AES_CTR);
}

static void test_ecb(void **state)
{
	sweep_mode(CRD_ALG_AES_ECB);
}

/* CTR across the wrap of the low counter word and of all 128 bits, in
 * short odd pieces, so that a partial block's keystream straddles it. */
static void test_ctr_wrap(void **state)
{
	static const unsigned keys[] = { 16, 24, 32 };
	for (unsigned ki = 0; ki < 3; ki++) {
		struct cipher_case k;
		case_open(&k, CRD_ALG_AES_CTR, keys[ki]);
		for (unsigned i = 0; i < 24; i++) {
			size_t len = 1 + su_below(600);
			uint8_t *pt = malloc(len), *ref = malloc(len),
				*out = malloc(len);
			su_fill(k.iv, 16);
			memset(k.iv + (i & 1 ? 0 : 12), 0xff, i & 1 ? 16 : 4);
			k.iv[15] = (uint8_t)(0xff - su_below(20));
			su_fill(pt, len);
			case_ref(&k, 0, 1, pt, ref, len);
			run_ok(&k, CRD_OP_ENCRYPT, 0, pt, out, len, 1, 0);
			assert_memory_equal(out, ref, len);
			free(pt);
			free(ref);
			free(out);
		}
		case_close(&k);
	}
}

/* XTS: both key sizes, data units from one block to 64 KiB and odd
 * ones, messages of whole units and of a shorter final unit. */
static void test_xts(void **state)
{
	static const size_t units[] = { 16, 17, 31, 32, 100, 512, 520, 4096 };
	static const unsigned keys[] = { 32, 64 };
	for (unsigned ki = 0; ki < 2; ki++) {
		struct cipher_case k;
		case_open(&k, CRD_ALG_AES_XTS, keys[ki]);
		for (unsigned i = 0; i < 40; i++) {
			size_t unit = i < 8 ? units[i] : 16 + su_below(70000);
			/* up to 3 MiB, or 4096 units of short ones */
			size_t max = SWEEP_MAX / unit < 4096 ? SWEEP_MAX / unit
							     : 4096;
			size_t n = i % 4 == 0 ? su_below(4)
				   : i % 2    ? su_below(max + 1)
					      : su_below(33);
			size_t rem = unit > 16 && su_below(2)
					     ? 16 + su_below(unit - 16)
					     : 0;
			if (!n && !rem) /* XTS has no empty one-piece message */
				n = 1;
			check_message(&k, n * unit + rem, unit);
		}
		case_close(&k);
	}
}

/* ---- 64 MiB and more, in pieces of about 1 MiB ---- */

static void big_one(unsigned alg, unsigned key_len, size_t len, size_t unit)
{
	struct cipher_case k;
	uint8_t *pt = malloc(len), *ref = malloc(len), *out = malloc(len);
	assert_true(pt && ref && out);
	case_open(&k, alg, key_len);
	case_iv(&k);
	su_fill(pt, len);
	case_ref(&k, unit, 1, pt, ref, len);
	size_t gran = alg == CRD_ALG_AES_XTS ? unit : k.gran;
	run_ok(&k, CRD_OP_ENCRYPT, unit, pt, out, len, gran, 1u << 20);
	assert_memory_equal(out, ref, len);
	run_ok(&k, CRD_OP_DECRYPT, unit, out, out, len, gran, 1u << 20);
	assert_memory_equal(out, pt, len);
	case_close(&k);
	free(pt);
	free(ref);
	free(out);
}

static void test_big(void **state)
{
	big_one(CRD_ALG_AES_CBC, 32, 64u << 20, 0);
	big_one(CRD_ALG_AES_CTR, 16, (64u << 20) + 12345, 0);
	big_one(CRD_ALG_AES_ECB, 24, (64u << 20) + 4096, 0);
	big_one(CRD_ALG_AES_XTS, 64, (64u << 20) + 100, 4096);
}

/* ---- What a piece may not be ---- */

/* Run the pieces lens[0..n) of a stream: piece fail_at fails with
 * CRD_ST_BAD_PARAM, or (fail_at == n) all are CRD_ST_OK. */
static void run_lens(const struct cipher_case *k, size_t unit, uint8_t *buf,
		     const size_t *lens, size_t n, size_t fail_at)
{
	struct su_cuts c = { .len = (size_t *)lens, .n = n, .cap = n };
	struct su_piece p = { .s = k->s,
			      .dir = CRD_OP_ENCRYPT,
			      .iv = k->iv,
			      .iv_len = k->alg == CRD_ALG_AES_ECB ? 0 : 16,
			      .param = (uint32_t)unit };
	size_t bad = n;
	int st = su_run(k->e, k->w, &p, buf, buf, &c, &bad);
	if (st != (fail_at == n ? CRD_ST_OK : CRD_ST_BAD_PARAM) ||
	    bad != fail_at)
		fail_msg("alg %u unit %zu: %zu pieces: status %d at piece %zu,"
			 " expected a failure at %zu",
			 k->alg, unit, n, st, bad, fail_at);
}

#define RUN(k, unit, lens, fail_at)                                            \
	run_lens((k), (unit), buf, (lens), sizeof(lens) / sizeof((lens)[0]),   \
		 (fail_at))
#define RUN_OK(k, unit, lens)                                                  \
	RUN((k), (unit), (lens), sizeof(lens) / sizeof((lens)[0]))

static void test_bad_pieces(void **state)
{
	static uint8_t buf[1 << 16];
	struct cipher_case k;

	/* CBC and ECB: whole blocks, first, middle or last */
	for (unsigned alg = CRD_ALG_AES_CBC; alg <= CRD_ALG_AES_ECB; alg++) {
		if (alg == CRD_ALG_AES_CTR)
			continue;
		case_open(&k, alg, 16);
		su_fill(k.iv, 16);
		for (size_t r = 1; r < 16; r++) {
			size_t one[] = { 16 * r + r };
			size_t first[] = { r, 16 };
			size_t mid[] = { 32, r, 16 };
			size_t last[] = { 32, 16, 48 + r };
			RUN(&k, 0, one, 0);
			RUN(&k, 0, first, 0);
			RUN(&k, 0, mid, 1);
			RUN(&k, 0, last, 2);
		}
		size_t good[] = { 0, 32, 0, 4096, 16 };
		RUN_OK(&k, 0, good);
		case_close(&k);
	}
	/* CTR takes any length */
	case_open(&k, CRD_ALG_AES_CTR, 16);
	su_fill(k.iv, 16);
	size_t odd[] = { 1, 0, 15, 17, 3 };
	RUN_OK(&k, 0, odd);
	case_close(&k);

	/* XTS: pieces of whole units but LAST, whose remainder is 0 or
	 * >= 16 bytes; units of 16 bytes or more */
	case_open(&k, CRD_ALG_AES_XTS, 32);
	su_fill(k.iv, 16);
	for (size_t r = 1; r < 16; r++) {
		size_t first[] = { 512 + r, 512 };
		size_t mid[] = { 512, 1024 + r * 7, 512 };
		size_t last[] = { 512, 1024 + r };
		size_t short_last[] = { 512, r };
		size_t short_one[] = { r }; /* FIRST|LAST: unit = r bytes */
		size_t units[] = { 16, 16 };
		RUN(&k, 512, first, 0);
		RUN(&k, 512, mid, 1);
		RUN(&k, 512, last, 1);
		RUN(&k, 512, short_last, 1);
		RUN(&k, 512, short_one, 0);
		RUN(&k, r, units, 0); /* a unit under 16 bytes */
	}
	size_t good[] = { 0, 1024, 512, 0, 512 + 16 };
	RUN_OK(&k, 512, good);
	size_t good_rem[] = { 512, 511 };
	RUN_OK(&k, 512, good_rem);
	size_t empty[] = { 0, 0 }; /* an empty message of pieces */
	RUN_OK(&k, 512, empty);
	size_t only_rem[] = { 0, 100 }; /* no whole unit, a final one */
	RUN_OK(&k, 512, only_rem);
	case_close(&k);
}

/* ---- The same on the openssl engine ---- */

static void test_cbc_openssl(void **state)
{
	g.ossl = 1;
	sweep_mode(CRD_ALG_AES_CBC);
	g.ossl = 0;
}

static void test_ctr_openssl(void **state)
{
	g.ossl = 1;
	sweep_mode(CRD_ALG_AES_CTR);
	test_ctr_wrap(state);
	g.ossl = 0;
}

static void test_ecb_openssl(void **state)
{
	g.ossl = 1;
	sweep_mode(CRD_ALG_AES_ECB);
	g.ossl = 0;
}

static void test_bad_pieces_openssl(void **state)
{
	g.ossl = 1;
	test_bad_pieces(state);
	g.ossl = 0;
}

/* Pieces of 1, 15, 16, 17 and 4 KiB + 3 bytes (whole blocks of them
 * for CBC and ECB), on both engines, against EVP one-shot. */
static void test_odd_pieces(void **state)
{
	static const size_t odd[] = { 1, 15, 16, 17, 4096 + 3, 1, 17 };
	static const unsigned algs[] = { CRD_ALG_AES_CBC, CRD_ALG_AES_CTR,
					 CRD_ALG_AES_ECB };
	for (int e = 0; e < 2; e++) {
		g.ossl = e;
		for (unsigned a = 0; a < 3; a++) {
			struct cipher_case k;
			size_t lens[7], len = 0;
			size_t gran = algs[a] == CRD_ALG_AES_CTR ? 1 : 16;
			for (unsigned i = 0; i < 7; i++)
				len += lens[i] = odd[i] * gran;
			if (e ? !g.ossl_w : !g.aesni_w)
				continue;
			case_open(&k, algs[a], 24);
			case_iv(&k);
			uint8_t *pt = malloc(len), *ref = malloc(len),
				*out = malloc(len);
			assert_true(pt && ref && out);
			su_fill(pt, len);
			case_ref(&k, 0, 1, pt, ref, len);
			struct su_cuts c = { .len = lens, .n = 7, .cap = 7 };
			struct su_piece p = {
				.s = k.s,
				.dir = CRD_OP_ENCRYPT,
				.iv = k.iv,
				.iv_len = algs[a] == CRD_ALG_AES_ECB ? 0 : 16
			};
			assert_int_equal(
				su_run(k.e, k.w, &p, pt, out, &c, NULL),
				CRD_ST_OK);
			assert_memory_equal(out, ref, len);
			p.dir = CRD_OP_DECRYPT;
			assert_int_equal(
				su_run(k.e, k.w, &p, ref, out, &c, NULL),
				CRD_ST_OK);
			assert_memory_equal(out, pt, len);
			free(pt);
			free(ref);
			free(out);
			case_close(&k);
		}
	}
	g.ossl = 0;
}

/* ---- Fixture ---- */

static int group_setup(void **state)
{
	if (su_setup(16))
		return -1;
	g.aesni_w = engine_aesni.worker_init(&engine_aesni);
	g.ossl_w = engine_openssl.worker_init(&engine_openssl);
	return 0; /* a missing engine's cases skip */
}

static int group_teardown(void **state)
{
	if (g.aesni_w)
		engine_aesni.worker_fini(g.aesni_w);
	if (g.ossl_w)
		engine_openssl.worker_fini(g.ossl_w);
	su_teardown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cbc),
		cmocka_unit_test(test_ctr),
		cmocka_unit_test(test_ecb),
		cmocka_unit_test(test_ctr_wrap),
		cmocka_unit_test(test_xts),
		cmocka_unit_test(test_bad_pieces),
		cmocka_unit_test(test_big),
		cmocka_unit_test(test_cbc_openssl),
		cmocka_unit_test(test_ctr_openssl),
		cmocka_unit_test(test_ecb_openssl),
		cmocka_unit_test(test_bad_pieces_openssl),
		cmocka_unit_test(test_odd_pieces),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
