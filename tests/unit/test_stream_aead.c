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
 * (1..128 bytes) and tag length; forged tags; CCM's declared length.
 * Vectors, GCM's counter wrap and clones: test_stream_aead_vectors.c.
 *
 * The pieces are fed as the daemon feeds them (engines/stream.h): IV,
 * AAD and param on FIRST only, the tag on LAST only, a zeroed 64-byte
 * aligned state before FIRST, wiped after LAST or an error.
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

#include <intel-ipsec-mb.h>
#include <openssl/evp.h>

#include <cryptod/ring_abi.h>

#include "engine.h"
#include "keystore.h"
#include "log.h"
#include "session.h"

#define MIB (1u << 20)
#define BIG_LEN (64u * MIB + 13) /* the long stream */

static struct {
	void *mgr;		  /* the aesni engine's worker context */
	void *ossl;		  /* the openssl engine's */
	const struct engine *eng; /* under test: aesni, or openssl */
	void *w;		  /* its worker context */
	void *state;		  /* STREAM_STATE_SIZE, 64-byte aligned */
	uint64_t rng;		  /* splitmix64 */
} t;

/* ---- deterministic randomness ---- */

static uint64_t rnd(void)
{
	uint64_t z = (t.rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static uint64_t rnd_in(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

static void rnd_fill(uint8_t *p, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t v = rnd();
		memcpy(p + i, &v, 8);
	}
	uint64_t v = rnd();
	for (; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	assert_non_null(p);
	return p;
}

/* ---- set-up ---- */

static int group_setup(void **state)
{
	const char *env = getenv("STREAM_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 20261201;

	printf("STREAM_SEED=%" PRIu64 "\n", seed);
	t.rng = seed;
	log_init(LOG_ERR_);
	if (engine_probe_all() <= 0 || ks_init(16))
		return -1;
	t.state = aligned_alloc(64, STREAM_STATE_SIZE);
	if (!t.state)
		return -1;
	/* without AES-NI the aesni engine is unavailable: every case skips */
	if (engine_select(CRD_ALG_AES_GCM, "aesni") >= 0)
		t.mgr = engine_aesni.worker_init(&engine_aesni);
	t.ossl = engine_openssl.worker_init(&engine_openssl);
	t.eng = &engine_aesni;
	t.w = t.mgr;
	return 0;
}

static int group_teardown(void **state)
{
	if (t.mgr)
		engine_aesni.worker_fini(t.mgr);
	if (t.ossl)
		engine_openssl.worker_fini(t.ossl);
	free(t.state);
	if (ks_in_use() != 0)
		return -1;
	ks_fini();
	engine_fini_all();
	return 0;
}

static void need_aesni(void)
{
	if (!t.w)
		skip(); /* no AES-NI on this CPU */
}

/* Does the engine under test stream alg? (Its rows say.) */
static int streams(unsigned alg)
{
	return engine_streams(t.eng, alg);
}

static struct session *new_session(unsigned alg, const uint8_t *key,
				   size_t key_len, unsigned tag_len)
{
	struct session_params p = { .alg = alg,
				    .key = key,
				    .key_len = key_len,
				    .tag_len = tag_len,
				    .engine = t.eng->name };
	struct session *s = NULL;
	int rc = session_create(&p, &s);
	if (rc)
		fail_msg("session alg %u key %zu tag %u: %d", alg, key_len,
			 tag_len, rc);
	return s;
}

/* ---- the reference: OpenSSL EVP, one shot ---- */

struct msg {
	unsigned alg;
	uint8_t key[32], iv[CRD_IV_ARENA_MAX], tag[16];
	size_t key_len, iv_len, tag_len;
	const uint8_t *aad;
	size_t aad_len;
};

static const EVP_CIPHER *ref_cipher(const struct msg *m)
{
	int i = (int)(m->key_len - 16) / 8;
	if (m->alg == CRD_ALG_CHACHA20_POLY1305)
		return EVP_chacha20_poly1305();
	if (m->alg == CRD_ALG_AES_CCM)
		return (const EVP_CIPHER *[]){ EVP_aes_128_ccm(),
					       EVP_aes_192_ccm(),
					       EVP_aes_256_ccm() }[i];
	return (const EVP_CIPHER *[]){ EVP_aes_128_gcm(), EVP_aes_192_gcm(),
				       EVP_aes_256_gcm() }[i];
}

/* Encrypt pt (len bytes) to ct and m->tag. */
static void ref_seal(struct msg *m, const uint8_t *pt, uint8_t *ct, size_t len)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int ccm = m->alg == CRD_ALG_AES_CCM, n;
	uint8_t none[1] = { 0 }; /* CCM's empty message still updates */

	assert_non_null(c);
	assert_true(EVP_EncryptInit_ex(c, ref_cipher(m), NULL, NULL, NULL));
	assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN,
					(int)m->iv_len, NULL));
	if (ccm)
		assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG,
						(int)m->tag_len, NULL));
	assert_true(EVP_EncryptInit_ex(c, NULL, NULL, m->key, m->iv));
	if (ccm)
		assert_true(EVP_EncryptUpdate(c, NULL, &n, NULL, (int)len));
	if (m->aad_len)
		assert_true(EVP_EncryptUpdate(c, NULL, &n, m->aad,
					      (int)m->aad_len));
	assert_true(EVP_EncryptUpdate(c, len ? ct : none, &n, len ? pt : none,
				      (int)len));
	assert_true(EVP_EncryptFinal_ex(c, none, &n));
	assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG,
					(int)m->tag_len, m->tag));
	EVP_CIPHER_CTX_free(c);
}

/* ---- streams, fed as the daemon feeds them ---- */

/* How a stream is cut. */
enum cut {
	CUT_RANDOM, /* empty, 1-byte, odd, up to 1 MiB pieces */
	CUT_MIB,    /* about 1 MiB each */
	CUT_ONE,    /* one FIRST|LAST piece */
	CUT_ZEROS,  /* random, and about every other piece empty */
};

static uint32_t cut_len(enum cut how, uint64_t left)
{
	uint64_t n;
	switch (how) {
	case CUT_ONE:
		return (uint32_t)left;
	case CUT_MIB:
		n = MIB - 4096 + rnd_in(0, 8192) - 1;
		break;
	default:
		switch (rnd() % 10) {
		case 0:
			n = 0;
			break;
		case 1:
		case 2:
			n = 1;
			break;
		case 3:
		case 4:
			n = rnd_in(2, 63);
			break;
		case 5:
		case 6:
			n = rnd_in(64, 65536);
			break;
		default:
			n = rnd_in(65537, MIB);
			break;
		}
		if (how == CUT_ZEROS && rnd() % 2)
			n = 0;
	}
	return (uint32_t)(n < left ? n : left);
}

struct run {
	int status;	   /* of the last piece run */
	uint64_t last_off; /* where that piece started */
	uint32_t last_len; /* and its length */
	unsigned pieces;   /* run */
};

/* Run one piece; the state is wiped as the daemon wipes it. */
static int piece(const struct session *s, struct engine_op *op)
{
	op->sess = s;
	op->status = 12345; /* the engine must set it */
	t.eng->stream(t.w, op, t.state);
	if (op->status != CRD_ST_OK || (op->pos & ENGINE_LAST))
		memset(t.state, 0, STREAM_STATE_SIZE);
	return op->status;
}

/* Stream len bytes of src to dst (== src in place) in direction dir,
 * with m's IV, AAD and (LAST) tag; stops at the first failing piece. */
static struct run stream(const struct session *s, struct msg *m, uint8_t dir,
			 const uint8_t *src, uint8_t *dst, uint64_t len,
			 enum cut how)
{
	struct run r = { .status = CRD_ST_OK };
	uint64_t off = 0;

	memset(t.state, 0, STREAM_STATE_SIZE);
	for (int first = 1;; first = 0) {
		uint32_t n = cut_len(how, len - off);
		/* at the end: LAST, or (sometimes) an empty middle piece */
		int last = off + n == len &&
			   (how == CUT_ONE || how == CUT_MIB || rnd() % 4);
		struct engine_op op = {
			.src = src + off,
			.dst = dst + off,
			.len = n,
			.op = dir,
			.pos = (first ? ENGINE_FIRST : 0) |
			       (last ? ENGINE_LAST : 0),
		};
		if (first) {
			op.iv = m->iv;
			op.iv_len = (uint8_t)m->iv_len;
			op.aad = m->aad_len ? m->aad : NULL;
			op.aad_len = (uint32_t)m->aad_len;
			if (m->alg == CRD_ALG_AES_CCM) /* the whole length */
				op.param = (uint32_t)len;
		}
		if (last) {
			op.tag = m->tag;
			op.tag_len = (uint8_t)m->tag_len;
		}
		r.last_off = off;
		r.last_len = n;
		r.pieces++;
		r.status = piece(s, &op);
		off += n;
		if (r.status != CRD_ST_OK || last)
			return r;
	}
}

/* Tags each algorithm takes on aesni. */
static size_t pick_tag(unsigned alg)
{
	static const uint8_t gcm[] = { 4, 8, 12, 13, 14, 15, 16 };
	if (alg == CRD_ALG_CHACHA20_POLY1305)
		return 16;
	if (alg == CRD_ALG_AES_CCM)
		return 4 + 2 * rnd_in(0, 6);
	return rnd() % 2 ? 16 : gcm[rnd() % sizeof(gcm)];
}

/* A random IV length the algorithm takes; CCM's nonce leaves room for
 * len bytes of message. */
static size_t pick_iv(unsigned alg, uint64_t len)
{
	if (alg == CRD_ALG_CHACHA20_POLY1305)
		return 12;
	if (alg == CRD_ALG_AES_GCM) /* now and then past 16 (the arena) */
		return rnd() % 2   ? 12
		       : rnd() % 4 ? rnd_in(1, 16)
				   : rnd_in(1, CRD_IV_ARENA_MAX);
	size_t hi = len <= 0xffff ? 13 : len <= 0xffffff ? 12 : 11;
	return rnd_in(7, hi);
}

static size_t pick_aad(void)
{
	static const size_t edge[] = { 0,  1,  15,     16,     17,
				       46, 47, 0xfeff, 0xff00, 0xffff };
	if (rnd() % 3 == 0)
		return edge[rnd() % (sizeof(edge) / sizeof(edge[0]))];
	return rnd() % 2 ? rnd_in(0, 64) : rnd_in(0, 0xffff);
}

/*
 * One message: a random key of key_len bytes, IV, AAD and tag length
 * (or the given ones, iv_len/tag_len > 0), the reference encryption,
 * then the stream's encryption and decryption (each cut its own way, in
 * place or not) compared with it byte for byte.
 */
static void check_msg(unsigned alg, size_t key_len, size_t iv_len,
		      size_t tag_len, uint64_t len, enum cut how)
{
	struct msg m = { .alg = alg, .key_len = key_len };
	uint8_t *aad = xmalloc(0xffff);
	uint8_t *pt = xmalloc(len), *ct = xmalloc(len), *buf = xmalloc(len);
	uint8_t ref_tag[16];
	char what[160];

	rnd_fill(m.key, sizeof(m.key));
	m.iv_len = iv_len ? iv_len : pick_iv(alg, len);
	m.tag_len = tag_len ? tag_len : pick_tag(alg);
	m.aad_len = pick_aad();
	m.aad = aad;
	rnd_fill(m.iv, sizeof(m.iv));
	rnd_fill(aad, m.aad_len);
	rnd_fill(pt, len);
	ref_seal(&m, pt, ct, len);
	memcpy(ref_tag, m.tag, sizeof(ref_tag));

	struct session *s = new_session(alg, m.key, key_len, m.tag_len);
	for (int dir = CRD_OP_ENCRYPT; dir <= CRD_OP_DECRYPT; dir++) {
		int in_place = rnd() % 2;
		const uint8_t *in = dir == CRD_OP_ENCRYPT ? pt : ct;
		const uint8_t *want = dir == CRD_OP_ENCRYPT ? ct : pt;
		uint8_t *out = buf;
		if (in_place) {
			memcpy(buf, in, len);
			in = buf;
		} else {
			memset(buf, 0x5a, len);
		}
		memset(m.tag, 0, sizeof(m.tag));
		if (dir == CRD_OP_DECRYPT)
			memcpy(m.tag, ref_tag, m.tag_len);
		struct run r = stream(s, &m, (uint8_t)dir, in, out, len, how);
		snprintf(what, sizeof(what),
			 "alg %u key %zu iv %zu aad %zu tag %zu len %" PRIu64
			 " %s %s, %u pieces",
			 alg, key_len, m.iv_len, m.aad_len, m.tag_len, len,
			 dir == CRD_OP_ENCRYPT ? "encrypt" : "decrypt",
			 in_place ? "in place" : "out of place", r.pieces);
		if (r.status != CRD_ST_OK)
			fail_msg("%s: status %d", what, r.status);
		if (len && memcmp(out, want, len))
			fail_msg("%s: data differs", what);
		if (dir == CRD_OP_ENCRYPT && memcmp(m.tag, ref_tag, m.tag_len))
			fail_msg("%s: tag differs", what);
	}
	session_destroy(s);
	free(aad);
	free(pt);
	free(ct);
	free(buf);
}

static const size_t aes_keys[] = { 16, 24, 32 };

/* Message lengths: mostly small and odd, some of several MiB. */
static uint64_t pick_len(void)
{
	switch (rnd() % 8) {
	case 0:
		return rnd_in(0, 16);
	case 1:
	case 2:
		return rnd_in(0, 300);
	case 3:
	case 4:
		return rnd_in(0, 70000);
	case 5:
	case 6:
		return rnd_in(0, 2 * MIB);
	default:
		return rnd_in(2 * MIB, 5 * MIB);
	}
}

static void random_msgs(unsigned alg, unsigned per_key)
{
	need_aesni();
	for (unsigned k = 0; k < 3; k++) {
		size_t key_len = aes_keys[k];
		if (alg == CRD_ALG_CHACHA20_POLY1305 && key_len != 32)
			continue;
		for (unsigned i = 0; i < per_key; i++) {
			uint64_t len = pick_len();
			enum cut how = rnd() % 5 ? CUT_RANDOM : CUT_ZEROS;
			if (alg == CRD_ALG_AES_CCM && rnd() % 4 == 0)
				len = rnd_in(0, 0xffff); /* nonce 13 fits */
			check_msg(alg, key_len, 0, 0, len, how);
		}
	}
}

static void test_gcm_random(void **state)
{
	random_msgs(CRD_ALG_AES_GCM, 14);
}

static void test_chacha_random(void **state)
{
	random_msgs(CRD_ALG_CHACHA20_POLY1305, 30);
}

static void test_ccm_random(void **state)
{
	random_msgs(CRD_ALG_AES_CCM, 14);
}

/* One FIRST|LAST piece is the one-shot op; lengths around the block
 * and ChaCha's 64-byte block, and the empty message. */
static void test_single_piece(void **state)
{
	static const unsigned algs[] = { CRD_ALG_AES_GCM,
					 CRD_ALG_CHACHA20_POLY1305,
					 CRD_ALG_AES_CCM };
	static const uint64_t lens[] = { 0,  1,	 15,   16,   17,    63,
					 64, 65, 4095, 4096, 65535, 1000003 };
	need_aesni();
	for (unsigned a = 0; a < 3; a++)
		for (unsigned k = 0; k < 3 && streams(algs[a]); k++) {
			if (algs[a] == CRD_ALG_CHACHA20_POLY1305 &&
			    aes_keys[k] != 32)
				continue;
			for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]);
			     l++)
				check_msg(algs[a], aes_keys[k], 0, 0, lens[l],
					  CUT_ONE);
		}
}

/* Empty messages as several empty pieces, and empty pieces between
 * short ones. */
static void test_empty_pieces(void **state)
{
	static const unsigned algs[] = { CRD_ALG_AES_GCM,
					 CRD_ALG_CHACHA20_POLY1305,
					 CRD_ALG_AES_CCM };
	need_aesni();
	for (unsigned a = 0; a < 3; a++)
		for (unsigned i = 0; i < 20 && streams(algs[a]); i++)
			check_msg(algs[a], 32, 0, 0, i < 10 ? 0 : rnd_in(1, 40),
				  CUT_ZEROS);
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

/*
 * A forged tag: LAST fails with AUTH_FAILED and zeroes its own piece
 * (earlier pieces have already gone out, as streams promise no more).
 * Each algorithm, a flipped bit anywhere in the tag, several cuts.
 */
static void test_bad_tag(void **state)
{
	static const unsigned algs[] = { CRD_ALG_AES_GCM,
					 CRD_ALG_CHACHA20_POLY1305,
					 CRD_ALG_AES_CCM };
	need_aesni();
	for (unsigned a = 0; a < 3; a++)
		for (unsigned i = 0; i < 12 && streams(algs[a]); i++) {
			struct msg m = { .alg = algs[a], .key_len = 32 };
			uint64_t len = rnd_in(1, i < 6 ? 100 : 300000);
			uint8_t *pt = xmalloc(len), *ct = xmalloc(len);
			uint8_t *buf = xmalloc(len);
			uint8_t aad[20];
			rnd_fill(m.key, sizeof(m.key));
			rnd_fill(m.iv, sizeof(m.iv));
			rnd_fill(aad, sizeof(aad));
			m.aad = aad;
			m.aad_len = rnd_in(0, sizeof(aad));
			m.iv_len = 12; /* every algorithm takes it */
			m.tag_len = i % 3 == 0 ? pick_tag(algs[a]) : 16;
			rnd_fill(pt, len);
			ref_seal(&m, pt, ct, len);
			m.tag[rnd() % m.tag_len] ^= (uint8_t)(1u << rnd() % 8);

			struct session *s =
				new_session(algs[a], m.key, 32, m.tag_len);
			int in_place = i % 2;
			if (in_place)
				memcpy(buf, ct, len);
			enum cut how = i % 4 == 0 ? CUT_ONE : CUT_RANDOM;
			struct run r =
				stream(s, &m, CRD_OP_DECRYPT,
				       in_place ? buf : ct, buf, len, how);
			assert_int_equal(r.status, CRD_ST_AUTH_FAILED);
			assert_true(r.last_off + r.last_len == len);
			for (uint32_t j = 0; j < r.last_len; j++)
				if (buf[r.last_off + j])
					fail_msg("alg %u: byte %" PRIu64
						 " of the failed piece not "
						 "zeroed",
						 algs[a], r.last_off + j);
			assert_memory_equal(buf, pt, r.last_off);
			session_destroy(s);
			free(pt);
			free(ct);
			free(buf);
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

static void on_openssl(void)
{
	if (!t.ossl)
		skip();
	t.eng = &engine_openssl;
	t.w = t.ossl;
}

/* Teardown of the openssl cases, failed ones too. */
static int on_aesni(void **state)
{
	t.eng = &engine_aesni;
	t.w = t.mgr;
	return 0;
}

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

/* GCM and ChaCha20-Poly1305 (test_single_piece, test_empty_pieces and
 * test_bad_tag run CCM's again: cheap). */
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
		cmocka_unit_test(test_ccm_nonce_tag_lengths),
		cmocka_unit_test(test_gcm_random),
		cmocka_unit_test(test_chacha_random),
		cmocka_unit_test(test_ccm_random),
		cmocka_unit_test(test_long_streams),
		cmocka_unit_test(test_bad_tag),
		cmocka_unit_test(test_ccm_declared_length),
		cmocka_unit_test(test_ccm_busy_manager),
		cmocka_unit_test(test_ccm_sp800_38c),
		cmocka_unit_test(test_openssl_rows),
		cmocka_unit_test_teardown(test_ccm_openssl, on_aesni),
		cmocka_unit_test_teardown(test_gcm_openssl, on_aesni),
		cmocka_unit_test_teardown(test_chacha_openssl, on_aesni),
		cmocka_unit_test_teardown(test_long_streams_openssl, on_aesni),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
