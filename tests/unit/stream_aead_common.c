// SPDX-License-Identifier: MIT
/* The stream AEAD tests' shared parts (stream_aead_common.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "keystore.h"
#include "log.h"
#include "stream_aead_common.h"

/* Zeroed until group_setup(). */
struct stream_aead_test t;

/* ---- deterministic randomness ---- */

uint64_t rnd(void)
{
	uint64_t z = (t.rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t rnd_in(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

void rnd_fill(uint8_t *p, size_t n)
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

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	assert_non_null(p);
	return p;
}

/* ---- set-up ---- */

int group_setup(void **state)
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

int group_teardown(void **state)
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

void need_aesni(void)
{
	if (!t.w)
		skip(); /* no AES-NI on this CPU */
}

int streams(unsigned alg)
{
	return engine_streams(t.eng, alg);
}

struct session *new_session(unsigned alg, const uint8_t *key, size_t key_len,
			    unsigned tag_len)
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

void on_openssl(void)
{
	if (!t.ossl)
		skip();
	t.eng = &engine_openssl;
	t.w = t.ossl;
}

int on_aesni(void **state)
{
	t.eng = &engine_aesni;
	t.w = t.mgr;
	return 0;
}

/* ---- the reference: OpenSSL EVP, one shot ---- */

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

void ref_seal(struct msg *m, const uint8_t *pt, uint8_t *ct, size_t len)
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

int piece(const struct session *s, struct engine_op *op)
{
	op->sess = s;
	op->status = 12345; /* the engine must set it */
	t.eng->stream(t.w, op, t.state);
	if (op->status != CRD_ST_OK || (op->pos & ENGINE_LAST))
		memset(t.state, 0, STREAM_STATE_SIZE);
	return op->status;
}

struct run stream(const struct session *s, struct msg *m, uint8_t dir,
		  const uint8_t *src, uint8_t *dst, uint64_t len, enum cut how)
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

size_t pick_tag(unsigned alg)
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

void check_msg(unsigned alg, size_t key_len, size_t iv_len, size_t tag_len,
	       uint64_t len, enum cut how)
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

const size_t aes_keys[3] = { 16, 24, 32 };

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

void random_msgs(unsigned alg, unsigned per_key)
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

/* ---- cases both programs run ---- */

/* One FIRST|LAST piece is the one-shot op; lengths around the block
 * and ChaCha's 64-byte block, and the empty message. */
void test_single_piece(void **state)
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
void test_empty_pieces(void **state)
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

/*
 * A forged tag: LAST fails with AUTH_FAILED and zeroes its own piece
 * (earlier pieces have already gone out, as streams promise no more).
 * Each algorithm, a flipped bit anywhere in the tag, several cuts.
 */
void test_bad_tag(void **state)
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
