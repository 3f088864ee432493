/* SPDX-License-Identifier: MIT */
/*
 * AES-GCM and ChaCha20-Poly1305 streams (daemon/engines/stream.h) on
 * every engine whose rows stream them (aesni, openssl), by vectors and
 * by the edges random messages rarely reach; test_stream_aead.c has the
 * random messages against EVP.
 *
 *  - NIST CAVP AES-GCM (python3-cryptography-vectors: gcmEncryptExtIV*,
 *    gcmDecrypt*; IVs of 1, 12 and 128 bytes, tags of 4..16 bytes) as
 *    one piece, cut at every position and at random; a FAIL record's
 *    LAST is AUTH_FAILED with its piece zeroed.
 *  - RFC 8439 2.8.2 cut at every position and every pair of positions,
 *    both directions, and with a flipped tag bit.
 *  - GCM's counter wrap: IVs (16, 32 and 128 bytes) solved so that J0's
 *    low word is 2^32 - 1, - 2, - 16 or - 256, checked to reach the wrap
 *    (EVP's GCM output parts from a 128-bit CTR from J0 + 1 there), the
 *    stream cut at every position around it, against EVP's GCM.
 *  - A clone (the daemon's CRD_SQE_F_CLONE: a byte copy of the state) in
 *    mid-message goes on, in pieces cut its own way, to the same result
 *    as its source and EVP's one-shot; a forged tag on the clone fails
 *    it alone.
 *  - A timing, not a check: each engine's GCM stream of 16 KiB pieces,
 *    MB per CPU second, rounds alternating between the engines (median
 *    printed).
 *  - Refusals, with nothing written: no IV or an empty one (GCM), a
 *    nonce other than 12 bytes (ChaCha20-Poly1305), a tag over 16 bytes,
 *    a piece of a stream whose FIRST never ran.
 *
 * The seed is printed; STREAM_SEED=<n> replays a run;
 * CRYPTOD_TEST_SAMPLE=N runs every Nth CAVP record.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include <cryptod/ring_abi.h>

#include "../integration/cavp_gcm.h"
#include "ghash.h"
#include "stream_util.h"

#define CAVP_DIR                                                               \
	"/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES/GCM"

/* The engines under test: those whose rows stream the algorithm. */
static struct eng {
	const struct engine *e;
	void *w;
} engs[2];

static void *state, *state2; /* STREAM_STATE_SIZE, 64-byte aligned */

/* One message. */
struct amsg {
	unsigned alg;
	uint8_t key[32];
	size_t key_len;
	uint8_t iv[CRD_IV_ARENA_MAX];
	size_t iv_len;
	const uint8_t *aad;
	size_t aad_len;
	size_t tag_len;
};

static struct session *new_session(const struct eng *g, const struct amsg *m)
{
	struct session_params p = { .alg = m->alg,
				    .key = m->key,
				    .key_len = m->key_len,
				    .tag_len = (unsigned)m->tag_len,
				    .engine = g->e->name };
	struct session *s = NULL;
	int rc = session_create(&p, &s);
	if (rc)
		fail_msg("%s: session alg %u key %zu tag %zu: %d", g->e->name,
			 m->alg, m->key_len, m->tag_len, rc);
	return s;
}

/* Does g run alg as a stream? */
static int streams(const struct eng *g, unsigned alg)
{
	return g->w && engine_streams(g->e, alg);
}

/* EVP's one-shot encryption: ct (len bytes) and a 16-byte tag. */
static void evp_seal(const struct amsg *m, const uint8_t *pt, uint8_t *ct,
		     size_t len, uint8_t tag[16])
{
	const EVP_CIPHER *c = m->alg == CRD_ALG_CHACHA20_POLY1305
				      ? EVP_chacha20_poly1305()
			      : m->key_len == 16 ? EVP_aes_128_gcm()
			      : m->key_len == 24 ? EVP_aes_192_gcm()
						 : EVP_aes_256_gcm();
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	uint8_t none[16];
	int n;
	assert_non_null(x);
	assert_true(EVP_EncryptInit_ex(x, c, NULL, NULL, NULL));
	assert_true(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN,
					(int)m->iv_len, NULL));
	assert_true(EVP_EncryptInit_ex(x, NULL, NULL, m->key, m->iv));
	if (m->aad_len)
		assert_true(EVP_EncryptUpdate(x, NULL, &n, m->aad,
					      (int)m->aad_len));
	if (len)
		assert_true(EVP_EncryptUpdate(x, ct, &n, pt, (int)len));
	assert_true(EVP_EncryptFinal_ex(x, none, &n));
	assert_true(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag));
	EVP_CIPHER_CTX_free(x);
}

/*
 * Pieces [from, to) of the cut list len[0..n) (FIRST on piece 0, LAST
 * on piece n - 1), starting at byte *off of in/out, on st, as the daemon
 * runs them (st wiped after LAST or an error). Returns the first status
 * that is not OK, or OK; *off ends at the last piece run's start.
 */
static int pieces(const struct eng *g, const struct session *s,
		  const struct amsg *m, int dir, void *st, const uint8_t *in,
		  uint8_t *out, const size_t *len, size_t n, size_t from,
		  size_t to, size_t *off, uint8_t *tag)
{
	for (size_t i = from; i < to; i++) {
		unsigned pos = (i == 0 ? ENGINE_FIRST : 0) |
			       (i + 1 == n ? ENGINE_LAST : 0);
		struct engine_op op = { .sess = s,
					.src = in + *off,
					.dst = out + *off,
					.len = (uint32_t)len[i],
					.op = (uint8_t)dir,
					.pos = (uint8_t)pos,
					.status = 12345 };
		if (pos & ENGINE_FIRST) {
			op.iv = m->iv;
			op.iv_len = (uint8_t)m->iv_len;
			op.aad = m->aad_len ? m->aad : NULL;
			op.aad_len = (uint32_t)m->aad_len;
			op.param = (uint32_t)len[i];
		}
		if (pos & ENGINE_LAST) {
			op.tag = tag;
			op.tag_len = (uint8_t)m->tag_len;
		}
		g->e->stream(g->w, &op, st);
		if (op.status != CRD_ST_OK || (pos & ENGINE_LAST))
			memset(st, 0, STREAM_STATE_SIZE);
		if (op.status != CRD_ST_OK)
			return op.status;
		if (i + 1 < to)
			*off += len[i];
	}
	return CRD_ST_OK;
}

/* The whole message in the pieces len[0..n); *last_off where LAST (or
 * the failing piece) starts. */
static int run(const struct eng *g, const struct session *s,
	       const struct amsg *m, int dir, const uint8_t *in, uint8_t *out,
	       const size_t *len, size_t n, uint8_t *tag, size_t *last_off)
{
	size_t off = 0;
	memset(state, 0, STREAM_STATE_SIZE);
	int st = pieces(g, s, m, dir, state, in, out, len, n, 0, n, &off, tag);
	if (last_off)
		*last_off = off;
	return st;
}

/*
 * Encrypt pt and decrypt ct (want: the message's ct and tag) in the
 * pieces len[0..n), out of place, then in place; each must give the
 * other's bytes and the tag. what names the case.
 */
static void check_cut(const struct eng *g, const struct session *s,
		      const struct amsg *m, const uint8_t *pt,
		      const uint8_t *ct, const uint8_t *want_tag, size_t total,
		      const size_t *len, size_t n, const char *what)
{
	uint8_t *buf = malloc(total ? total : 1), tag[16];
	assert_non_null(buf);
	for (int dir = CRD_OP_ENCRYPT; dir <= CRD_OP_DECRYPT; dir++)
		for (int in_place = 0; in_place < 2; in_place++) {
			const uint8_t *in = dir == CRD_OP_ENCRYPT ? pt : ct;
			const uint8_t *want = dir == CRD_OP_ENCRYPT ? ct : pt;
			memset(buf, 0x5a, total);
			if (in_place)
				memcpy(buf, in, total);
			memset(tag, 0, sizeof(tag));
			if (dir == CRD_OP_DECRYPT)
				memcpy(tag, want_tag, m->tag_len);
			int st = run(g, s, m, dir, in_place ? buf : in, buf,
				     len, n, tag, NULL);
			if (st != CRD_ST_OK)
				fail_msg("%s %s: %s, %zu pieces: status %d",
					 g->e->name, what,
					 dir == CRD_OP_ENCRYPT ? "encrypt"
							       : "decrypt",
					 n, st);
			if (total && memcmp(buf, want, total))
				fail_msg("%s %s: %s, %zu pieces: data differs",
					 g->e->name, what,
					 dir == CRD_OP_ENCRYPT ? "encrypt"
							       : "decrypt",
					 n);
			if (dir == CRD_OP_ENCRYPT &&
			    memcmp(tag, want_tag, m->tag_len))
				fail_msg("%s %s: %zu pieces: tag differs",
					 g->e->name, what, n);
		}
	free(buf);
}

/* The message as one piece, cut at every position (two pieces), and
 * (when every_pair) at every pair of positions (three). */
static void check_every_cut(const struct eng *g, const struct session *s,
			    const struct amsg *m, const uint8_t *pt,
			    const uint8_t *ct, const uint8_t *tag, size_t total,
			    size_t lo, size_t hi, int every_pair,
			    const char *what)
{
	size_t one[1] = { total };
	check_cut(g, s, m, pt, ct, tag, total, one, 1, what);
	for (size_t p = lo; p <= hi && p <= total; p++) {
		size_t two[2] = { p, total - p };
		check_cut(g, s, m, pt, ct, tag, total, two, 2, what);
		for (size_t q = p; every_pair && q <= total; q++) {
			size_t three[3] = { p, q - p, total - q };
			check_cut(g, s, m, pt, ct, tag, total, three, 3, what);
		}
	}
}

/* Random cuts (stream_util's styles). */
static void check_random_cuts(const struct eng *g, const struct session *s,
			      const struct amsg *m, const uint8_t *pt,
			      const uint8_t *ct, const uint8_t *tag,
			      size_t total, unsigned times, const char *what)
{
	struct su_cuts c = { 0 };
	for (unsigned i = 0; i < times; i++) {
		su_cut(&c, total, 1, 0);
		check_cut(g, s, m, pt, ct, tag, total, c.len, c.n, what);
	}
	su_cuts_free(&c);
}

/* ---- NIST CAVP AES-GCM ---- */

static void cavp_file(const struct eng *g, const char *file, int decrypt,
		      unsigned long *runs)
{
	char path[512];
	struct cavp p;
	struct gcm_vec v;
	int r;

	snprintf(path, sizeof(path), "%s/%s", CAVP_DIR, file);
	if (cavp_open(&p, path, file, decrypt))
		fail_msg("%s: cannot open", path);
	while ((r = cavp_next(&p, &v)) == 1) {
		struct amsg m = { .alg = CRD_ALG_AES_GCM,
				  .key_len = v.key_len,
				  .iv_len = v.iv_len,
				  .aad = v.aad,
				  .aad_len = v.aad_len,
				  .tag_len = v.tag_len };
		char what[96];
		memcpy(m.key, v.key, v.key_len);
		memcpy(m.iv, v.iv, v.iv_len);
		snprintf(what, sizeof(what), "%s line %u", file, v.line);
		struct session *s = new_session(g, &m);
		if (!v.fail) {
			/* every fourth record cut at every position */
			size_t hi = v.count % 4 ? 0 : v.pt_len;
			check_every_cut(g, s, &m, v.pt, v.ct, v.tag, v.pt_len,
					0, hi, 0, what);
			check_random_cuts(g, s, &m, v.pt, v.ct, v.tag, v.pt_len,
					  1, what);
		} else { /* the forged record: LAST fails, its piece zeroed */
			struct su_cuts c = { 0 };
			uint8_t out[V_DATA_MAX], tag[16];
			size_t last;
			su_cut(&c, v.ct_len, 1, 0);
			memcpy(tag, v.tag, v.tag_len);
			memset(out, 0x5a, sizeof(out));
			int st = run(g, s, &m, CRD_OP_DECRYPT, v.ct, out, c.len,
				     c.n, tag, &last);
			if (st != CRD_ST_AUTH_FAILED)
				fail_msg("%s %s: FAIL record: status %d",
					 g->e->name, what, st);
			for (size_t i = last; i < v.ct_len; i++)
				if (out[i])
					fail_msg(
						"%s %s: byte %zu of the failed "
						"piece not zeroed",
						g->e->name, what, i);
			su_cuts_free(&c);
		}
		session_destroy(s);
		(*runs)++;
	}
	cavp_close(&p);
	if (r < 0)
		fail_msg("%s: parse error", file);
}

static void test_gcm_cavp(void **unused)
{
	static const char *const files[] = {
		"gcmEncryptExtIV128.rsp", "gcmEncryptExtIV192.rsp",
		"gcmEncryptExtIV256.rsp", "gcmDecrypt128.rsp",
		"gcmDecrypt192.rsp",	  "gcmDecrypt256.rsp",
	};
	char probe[512];
	snprintf(probe, sizeof(probe), "%s/%s", CAVP_DIR, files[0]);
	FILE *f = fopen(probe, "r");
	if (!f) {
		printf("%s missing (python3-cryptography-vectors)\n", probe);
		skip();
	}
	fclose(f);
	for (unsigned e = 0; e < 2; e++) {
		unsigned long runs = 0;
		if (!streams(&engs[e], CRD_ALG_AES_GCM))
			continue;
		for (unsigned i = 0; i < 6; i++)
			cavp_file(&engs[e], files[i], i >= 3, &runs);
		printf("%s: %lu CAVP records streamed\n", engs[e].e->name,
		       runs);
	}
}

/* ---- RFC 8439 2.8.2 ---- */

static void unhex(const char *s, uint8_t *out)
{
	for (size_t i = 0; s[2 * i]; i++)
		sscanf(s + 2 * i, "%2hhx", &out[i]);
}

static void test_chacha_rfc8439(void **unused)
{
	static const char pt[] =
		"Ladies and Gentlemen of the class of '99: If I could offer "
		"you only one tip for the future, sunscreen would be it.";
	static const char ct_hex[] =
		"d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
		"3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
		"92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
		"3ff4def08e4b7a9de576d26586cec64b6116";
	uint8_t aad[12], ct[114], tag[16], ref_ct[114], ref_tag[16];
	struct amsg m = { .alg = CRD_ALG_CHACHA20_POLY1305,
			  .key_len = 32,
			  .iv_len = 12,
			  .aad = aad,
			  .aad_len = sizeof(aad),
			  .tag_len = 16 };
	size_t len = strlen(pt);

	assert_int_equal(len, sizeof(ct));
	for (unsigned i = 0; i < 32; i++)
		m.key[i] = (uint8_t)(0x80 + i);
	unhex("070000004041424344454647", m.iv);
	unhex("50515253c0c1c2c3c4c5c6c7", aad);
	unhex(ct_hex, ct);
	unhex("1ae10b594f09e26a7e902ecbd0600691", tag);
	evp_seal(&m, (const uint8_t *)pt, ref_ct, len, ref_tag);
	assert_memory_equal(ref_ct, ct, len); /* the vector as typed */
	assert_memory_equal(ref_tag, tag, 16);

	for (unsigned e = 0; e < 2; e++) {
		const struct eng *g = &engs[e];
		if (!streams(g, CRD_ALG_CHACHA20_POLY1305))
			continue;
		struct session *s = new_session(g, &m);
		check_every_cut(g, s, &m, (const uint8_t *)pt, ct, tag, len, 0,
				len, 1, "RFC 8439 2.8.2");
		/* a flipped tag bit, cut at every position */
		for (size_t p = 0; p <= len; p++) {
			size_t two[2] = { p, len - p }, last;
			uint8_t out[114], bad[16];
			memcpy(bad, tag, 16);
			bad[p % 16] ^= (uint8_t)(1u << (p % 8));
			int st = run(g, s, &m, CRD_OP_DECRYPT, ct, out, two, 2,
				     bad, &last);
			assert_int_equal(st, CRD_ST_AUTH_FAILED);
			assert_int_equal(last, p);
			for (size_t i = p; i < len; i++)
				assert_int_equal(out[i], 0);
			assert_memory_equal(out, pt, p);
		}
		session_destroy(s);
	}
}

/* ---- GCM's counter wrap ---- */

/* a * b in GCM's field, through GHASH (y = (0 ^ a) * H, H = b). */
static void gf_mul(const uint8_t a[16], const uint8_t b[16], uint8_t out[16])
{
	struct ghash g;
	ghash_init(&g, b);
	ghash_blocks(&g, a, 1);
	ghash_out(&g, out);
}

/* a^(2^128 - 2) = a^-1. */
static void gf_inv(const uint8_t a[16], uint8_t out[16])
{
	uint8_t r[16] = { 0x80 }; /* 1: x^0 is the first bit */
	for (int bit = 127; bit >= 0; bit--) {
		gf_mul(r, r, r);
		if (bit) /* every bit of 2^128 - 2 but the lowest */
			gf_mul(r, a, r);
	}
	memcpy(out, r, 16);
}

/* An IV of iv_len (a multiple of 16) bytes whose J0 is j0, under H:
 * random blocks, then the last one solved from J0 = ((Y ^ B) H ^ L) H. */
static void iv_for_j0(const uint8_t h[16], const uint8_t j0[16], uint8_t *iv,
		      size_t iv_len)
{
	uint8_t hinv[16], t[16], l[16] = { 0 }, y[16] = { 0 };
	struct ghash g;
	su_fill(iv, iv_len - 16);
	ghash_init(&g, h);
	ghash_blocks(&g, iv, iv_len / 16 - 1);
	ghash_out(&g, y);
	for (int b = 0; b < 8; b++)
		l[15 - b] = (uint8_t)((uint64_t)iv_len * 8 >> (8 * b));
	gf_inv(h, hinv);
	gf_mul(j0, hinv, t);
	for (int i = 0; i < 16; i++)
		t[i] ^= l[i];
	gf_mul(t, hinv, t);
	for (int i = 0; i < 16; i++)
		iv[iv_len - 16 + i] = t[i] ^ y[i];
}

static void aes_block(const struct amsg *m, const EVP_CIPHER *c,
		      const uint8_t *iv, const uint8_t *in, uint8_t *out,
		      size_t len)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int n = 0;
	assert_non_null(x);
	assert_true(EVP_EncryptInit_ex(x, c, NULL, m->key, iv));
	assert_true(EVP_EncryptUpdate(x, out, &n, in, (int)len));
	EVP_CIPHER_CTX_free(x);
}

static void test_gcm_counter_wrap(void **unused)
{
	static const uint32_t lows[] = { 0xffffffff, 0xfffffffe, 0xfffffff0,
					 0xffffff00 };
	static const size_t ivs[] = { 16, 32, 128 };
	uint8_t aad[20];

	su_fill(aad, sizeof(aad));
	for (unsigned li = 0; li < 4; li++)
		for (unsigned vi = 0; vi < 3; vi++) {
			struct amsg m = { .alg = CRD_ALG_AES_GCM,
					  .key_len = 16 + 8 * (vi % 3),
					  .iv_len = ivs[vi],
					  .aad = aad,
					  .aad_len = li % 2 ? sizeof(aad) : 0,
					  .tag_len = 16 };
			/* blocks before the wrap: counters low + 1 .. 2^32-1 */
			size_t before = 0xffffffffu - lows[li];
			size_t len = 16 * before + 200 + su_below(100);
			uint8_t zero[16] = { 0 }, h[16], j0[16], j1[16],
				tag[16];
			uint8_t *pt = malloc(len), *ct = malloc(len),
				*naive = malloc(len);
			assert_non_null(pt);
			assert_non_null(ct);
			assert_non_null(naive);
			su_fill(m.key, sizeof(m.key));
			su_fill(pt, len);
			aes_block(&m,
				  m.key_len == 16   ? EVP_aes_128_ecb()
				  : m.key_len == 24 ? EVP_aes_192_ecb()
						    : EVP_aes_256_ecb(),
				  NULL, zero, h, 16);
			su_fill(j0, 12);
			for (int b = 0; b < 4; b++)
				j0[12 + b] =
					(uint8_t)(lows[li] >> (24 - 8 * b));
			iv_for_j0(h, j0, m.iv, m.iv_len);
			evp_seal(&m, pt, ct, len, tag);

			/* The wrap is reached: EVP's GCM agrees with a 128-bit
			 * CTR from J0 + 1 up to it (so J0 is as solved), and
			 * parts from it there. */
			memcpy(j1, j0, 16);
			for (int i = 15; i >= 0 && !++j1[i]; i--)
				;
			aes_block(&m,
				  m.key_len == 16   ? EVP_aes_128_ctr()
				  : m.key_len == 24 ? EVP_aes_192_ctr()
						    : EVP_aes_256_ctr(),
				  j1, pt, naive, len);
			assert_memory_equal(ct, naive, 16 * before);
			assert_memory_not_equal(ct + 16 * before,
						naive + 16 * before, 16);

			for (unsigned e = 0; e < 2; e++) {
				const struct eng *g = &engs[e];
				char what[80];
				if (!streams(g, CRD_ALG_AES_GCM))
					continue;
				snprintf(what, sizeof(what),
					 "GCM wrap, J0 low %08x, IV %zu",
					 lows[li], m.iv_len);
				struct session *s = new_session(g, &m);
				size_t at = 16 * before;
				check_every_cut(g, s, &m, pt, ct, tag, len,
						at > 40 ? at - 40 : 0, at + 40,
						0, what);
				check_random_cuts(g, s, &m, pt, ct, tag, len,
						  10, what);
				session_destroy(s);
			}
			free(pt);
			free(ct);
			free(naive);
		}
}

/* ---- Clones ---- */

/*
 * A message in the pieces of c; after piece k, the state is copied (a
 * clone) and the copy goes on with the rest cut another way. Both end
 * with want/want_tag. With forge, the clone's tag is flipped: the clone
 * fails (its LAST zeroed), the source does not.
 */
static void clone_run(const struct eng *g, const struct session *s,
		      const struct amsg *m, int dir, const uint8_t *in,
		      const uint8_t *want, const uint8_t *want_tag,
		      size_t total, const struct su_cuts *c, size_t k,
		      int forge)
{
	uint8_t *a = malloc(total + 1), *b = malloc(total + 1);
	uint8_t tag_a[16] = { 0 }, tag_b[16] = { 0 };
	struct su_cuts rest = { 0 };
	size_t off = 0, done = 0;
	assert_non_null(a);
	assert_non_null(b);
	memset(state, 0, STREAM_STATE_SIZE);
	assert_int_equal(pieces(g, s, m, dir, state, in, a, c->len, c->n, 0, k,
				&off, tag_a),
			 CRD_ST_OK);
	for (size_t i = 0; i < k; i++)
		done += c->len[i];
	off = done;
	memcpy(state2, state, STREAM_STATE_SIZE); /* CRD_SQE_F_CLONE */
	memcpy(b, a, done);

	if (dir == CRD_OP_DECRYPT) {
		memcpy(tag_a, want_tag, m->tag_len);
		memcpy(tag_b, want_tag, m->tag_len);
		if (forge)
			tag_b[su_below(m->tag_len)] ^= 1;
	}
	/* the source goes on */
	assert_int_equal(pieces(g, s, m, dir, state, in, a, c->len, c->n, k,
				c->n, &off, tag_a),
			 CRD_ST_OK);
	/* the clone: the first k pieces as they were, the rest cut anew */
	su_cut(&rest, total - done, 1, 0);
	size_t *len = malloc((k + rest.n) * sizeof(*len));
	assert_non_null(len);
	memcpy(len, c->len, k * sizeof(*len));
	memcpy(len + k, rest.len, rest.n * sizeof(*len));
	off = done;
	int st = pieces(g, s, m, dir, state2, in, b, len, k + rest.n, k,
			k + rest.n, &off, tag_b);
	if (forge) {
		assert_int_equal(st, CRD_ST_AUTH_FAILED);
		for (size_t i = off; i < total; i++)
			assert_int_equal(b[i], 0);
	} else {
		if (st != CRD_ST_OK)
			fail_msg("%s: clone after piece %zu: status %d",
				 g->e->name, k, st);
		if (total && memcmp(b, want, total))
			fail_msg("%s: clone after piece %zu: data differs",
				 g->e->name, k);
		if (dir == CRD_OP_ENCRYPT)
			assert_memory_equal(tag_b, want_tag, m->tag_len);
	}
	if (total && memcmp(a, want, total))
		fail_msg("%s: the clone's source: data differs", g->e->name);
	if (dir == CRD_OP_ENCRYPT)
		assert_memory_equal(tag_a, want_tag, m->tag_len);
	su_cuts_free(&rest);
	free(len);
	free(a);
	free(b);
}

static void test_clone(void **unused)
{
	static const unsigned algs[] = { CRD_ALG_AES_GCM,
					 CRD_ALG_CHACHA20_POLY1305 };
	uint8_t aad[300];
	for (unsigned i = 0; i < 120; i++) {
		unsigned alg = algs[i % 2];
		int gcm = alg == CRD_ALG_AES_GCM;
		struct amsg m = {
			.alg = alg,
			.key_len = gcm ? 16 + 8 * su_below(3) : 32,
			.iv_len = !gcm || su_below(2)
					  ? 12
					  : 1 + su_below(CRD_IV_ARENA_MAX),
			.aad = aad,
			.aad_len = su_below(sizeof(aad)),
			.tag_len = gcm && su_below(2) ? 12 + su_below(5) : 16,
		};
		size_t total = su_below(4) ? su_below(3000) : su_below(200000);
		uint8_t *pt = malloc(total + 1), *ct = malloc(total + 1),
			tag[16];
		struct su_cuts c = { 0 };
		assert_non_null(pt);
		assert_non_null(ct);
		su_fill(m.key, sizeof(m.key));
		su_fill(m.iv, sizeof(m.iv));
		su_fill(aad, sizeof(aad));
		su_fill(pt, total);
		evp_seal(&m, pt, ct, total, tag);
		for (unsigned e = 0; e < 2; e++) {
			const struct eng *g = &engs[e];
			if (!streams(g, alg))
				continue;
			struct session *s = new_session(g, &m);
			su_cut(&c, total, 1, 0);
			/* after FIRST at the earliest, before LAST */
			size_t k = c.n > 1 ? 1 + su_below(c.n - 1) : 0;
			if (!k) {
				session_destroy(s);
				continue;
			}
			clone_run(g, s, &m, CRD_OP_ENCRYPT, pt, ct, tag, total,
				  &c, k, 0);
			clone_run(g, s, &m, CRD_OP_DECRYPT, ct, pt, tag, total,
				  &c, k, 0);
			clone_run(g, s, &m, CRD_OP_DECRYPT, ct, pt, tag, total,
				  &c, k, 1);
			session_destroy(s);
		}
		su_cuts_free(&c);
		free(pt);
		free(ct);
	}
}

/* ---- Refusals ---- */

/* One piece on a zeroed state (pos: FIRST, LAST, or neither): its
 * status; buf (64 bytes) must be left as it was. */
static int refused_piece(const struct eng *g, const struct session *s,
			 unsigned pos, const uint8_t *iv, unsigned iv_len,
			 unsigned tag_len)
{
	uint8_t buf[64], tag[32] = { 0 };
	struct engine_op op = { .sess = s,
				.src = buf,
				.dst = buf,
				.len = sizeof(buf),
				.op = CRD_OP_ENCRYPT,
				.pos = (uint8_t)pos,
				.status = 12345 };
	if (pos & ENGINE_FIRST) {
		op.iv = iv;
		op.iv_len = (uint8_t)iv_len;
		op.param = sizeof(buf);
	}
	if (pos & ENGINE_LAST) {
		op.tag = tag;
		op.tag_len = (uint8_t)tag_len;
	}
	memset(buf, 0xa5, sizeof(buf));
	memset(state, 0, STREAM_STATE_SIZE);
	g->e->stream(g->w, &op, state);
	memset(state, 0, STREAM_STATE_SIZE);
	for (unsigned i = 0; i < sizeof(buf); i++)
		if (buf[i] != 0xa5)
			fail_msg("%s: a refused piece wrote byte %u",
				 g->e->name, i);
	return op.status;
}

static void test_refusals(void **unused)
{
	static const uint8_t iv[16] = { 1 };
	const unsigned F = ENGINE_FIRST, L = ENGINE_LAST;
	for (unsigned e = 0; e < 2; e++) {
		const struct eng *g = &engs[e];
		for (unsigned a = 0; a < 2; a++) {
			unsigned alg =
				a ? CRD_ALG_CHACHA20_POLY1305 : CRD_ALG_AES_GCM;
			struct amsg m = { .alg = alg,
					  .key_len = 32,
					  .tag_len = 16 };
			if (!streams(g, alg))
				continue;
			su_fill(m.key, sizeof(m.key));
			struct session *s = new_session(g, &m);
			/* aesni's GCM takes an empty IV (ipsec-mb's
			 * init_var_iv): the daemon refuses it before (the
			 * rows say 1..128 bytes) */
			if (alg == CRD_ALG_AES_GCM && e == 1) {
				assert_int_equal(
					refused_piece(g, s, F, NULL, 0, 16),
					CRD_ST_BAD_PARAM);
			} else if (alg != CRD_ALG_AES_GCM) {
				assert_int_equal(
					refused_piece(g, s, F, iv, 8, 16),
					CRD_ST_BAD_PARAM);
				assert_int_equal(
					refused_piece(g, s, F, iv, 16, 16),
					CRD_ST_BAD_PARAM);
			}
			assert_int_equal(refused_piece(g, s, F | L, iv, 12, 17),
					 CRD_ST_BAD_PARAM);
			assert_int_equal(refused_piece(g, s, 0, NULL, 0, 16),
					 CRD_ST_BAD_PARAM);
			assert_int_equal(refused_piece(g, s, L, NULL, 0, 16),
					 CRD_ST_BAD_PARAM);
			session_destroy(s);
		}
	}
}

/* ---- A timing ---- */

/* The thread's CPU time: on a shared machine, what the engine costs
 * rather than what the others leave it. */
static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* AES-128-GCM encrypt, 32 MiB in 16 KiB pieces, in place, per engine;
 * printed, never failed on (a loaded machine slows both). */
static void test_gcm_speed(void **unused)
{
	enum { PIECE = 16 << 10, TOTAL = 32 << 20, ROUNDS = 5 };
	struct amsg m = { .alg = CRD_ALG_AES_GCM,
			  .key_len = 16,
			  .iv_len = 12,
			  .tag_len = 16 };
	size_t len[TOTAL / PIECE];
	double mbs[2][ROUNDS];
	uint8_t *buf = malloc(TOTAL), tag[16];
	struct session *s[2] = { NULL, NULL };
	assert_non_null(buf);
	su_fill(buf, TOTAL);
	su_fill(m.key, sizeof(m.key));
	for (size_t i = 0; i < TOTAL / PIECE; i++)
		len[i] = PIECE;
	for (unsigned e = 0; e < 2; e++)
		if (streams(&engs[e], CRD_ALG_AES_GCM))
			s[e] = new_session(&engs[e], &m);
	for (unsigned r = 0; r < ROUNDS; r++)
		for (unsigned e = 0; e < 2; e++) {
			if (!s[e])
				continue;
			double t = now_s();
			assert_int_equal(run(&engs[e], s[e], &m, CRD_OP_ENCRYPT,
					     buf, buf, len, TOTAL / PIECE, tag,
					     NULL),
					 CRD_ST_OK);
			mbs[e][r] = TOTAL / (now_s() - t) / 1e6;
		}
	for (unsigned e = 0; e < 2; e++) {
		if (!s[e])
			continue;
		qsort(mbs[e], ROUNDS, sizeof(double), cmp_double);
		printf("%s: AES-128-GCM stream, 16 KiB pieces: %.0f MB per "
		       "CPU second (median of %u)\n",
		       engs[e].e->name, mbs[e][ROUNDS / 2], ROUNDS);
		session_destroy(s[e]);
	}
	free(buf);
}

/* ---- set-up ---- */

static int group_setup(void **unused)
{
	if (su_setup(16))
		return -1;
	state = aligned_alloc(64, STREAM_STATE_SIZE);
	state2 = aligned_alloc(64, STREAM_STATE_SIZE);
	if (!state || !state2)
		return -1;
	engs[0].e = &engine_aesni;
	engs[1].e = &engine_openssl;
	/* without AES-NI the aesni engine is unavailable: its cases skip */
	if (engine_select(CRD_ALG_AES_GCM, "aesni") >= 0)
		engs[0].w = engine_aesni.worker_init(&engine_aesni);
	engs[1].w = engine_openssl.worker_init(&engine_openssl);
	return engs[1].w ? 0 : -1;
}

static int group_teardown(void **unused)
{
	for (unsigned e = 0; e < 2; e++)
		if (engs[e].w)
			engs[e].e->worker_fini(engs[e].w);
	free(state);
	free(state2);
	su_teardown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chacha_rfc8439),
		cmocka_unit_test(test_gcm_counter_wrap),
		cmocka_unit_test(test_clone),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_gcm_speed),
		cmocka_unit_test(test_gcm_cavp),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
