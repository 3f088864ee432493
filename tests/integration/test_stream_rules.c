// SPDX-License-Identifier: MIT
/*
 * Stream rules the review found unguarded, one case each:
 * - the library refuses stream fields where they would be dropped
 *   without a word (flags without a handle, a tag on a piece other than
 *   LAST, a parameter on one other than a FIRST), -EINVAL at enqueue;
 * - a second put of a handle whose slot went to another stream frees
 *   nothing;
 * - a copying CCM stream of one piece shorter than its declared length
 *   is refused (the daemon takes a single piece's length as the
 *   message's);
 * - an XTS piece of more than CRD_XTS_STREAM_UNITS_MAX data units is
 *   refused (CC_ERR_BAD_PARAM), one of exactly that many runs;
 * - a FIRST on the slot of a stream whose session was destroyed opens a
 *   new stream (no STREAM_BUSY);
 * - a LAST with CC_STREAM_TAG_LEN(n) makes the first n bytes of the tag
 *   OpenSSL makes, verifies a truncated tag (and fails a wrong one), and
 *   is refused for n the engine does not take, n not shorter than the
 *   session's, and on a piece that is not LAST; on the default engine
 *   and on the openssl engine (its own GHASH);
 * - a GCM or ChaCha20-Poly1305 stream cloned in mid-message
 *   (CC_STREAM_CLONE) goes on, source
 *   and clone each cut its own way, to OpenSSL's ciphertext and tag, in
 *   both directions, and a wrong tag fails the clone alone; on the
 *   default engine and on the openssl engine.
 *
 * Exit: 0 all passed, 1 any failure, 77 no daemon.
 */
#include "fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cryptod/ring_abi.h>

#include <openssl/evp.h>

static unsigned long checked, failed;

static void expect(int ok, const char *what, int got)
{
	checked++;
	if (ok)
		return;
	failed++;
	fprintf(stderr, "FAIL %s (got %d: %s)\n", what, got, cc_strerror(got));
}

/* Submit ops and take their n completions. 0 or -errno. */
static int run(struct cc_queue *q, const struct cc_op *ops, unsigned n,
	       struct cc_completion *c)
{
	int k = cc_enqueue_burst(q, ops, n);
	if (k != (int)n)
		return k < 0 ? k : -EBUSY;
	for (unsigned got = 0; got < n;) {
		k = cc_dequeue_burst(q, c + got, n - got);
		if (k < 0)
			return k;
		got += (unsigned)k;
		if (!k && cc_wait(q, 20000) <= 0)
			return -ETIMEDOUT;
	}
	return 0;
}

static void library_refusals(struct cc_queue *q, uint32_t sid, uint8_t *buf)
{
	uint32_t h;
	int r = cc_stream_handle_get(q, &h);
	expect(r == 0, "a handle", r);
	struct cc_op op = { .session = sid,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .len = 64,
			    .iv = buf + 4096,
			    .iv_len = 12,
			    .stream_flags = CC_STREAM_FIRST };
	r = cc_enqueue_burst(q, &op, 1);
	expect(r == -EINVAL, "stream_flags without a handle", r);
	op.stream = h;
	op.tag = buf + 8192;
	r = cc_enqueue_burst(q, &op, 1);
	expect(r == -EINVAL, "a tag on a FIRST that is not LAST", r);
	op.tag = NULL;
	op.stream_flags = 0;
	op.iv = NULL;
	op.iv_len = 0;
	op.stream_param = 100;
	r = cc_enqueue_burst(q, &op, 1);
	expect(r == -EINVAL, "stream_param on a middle piece", r);
	op.stream_flags = CC_STREAM_FIRST | CC_STREAM_LAST;
	r = cc_enqueue_burst(q, &op, 1);
	expect(r == -EINVAL, "stream_param on a FIRST that is LAST", r);
	op.stream = 0;
	op.stream_flags = 0;
	r = cc_enqueue_burst(q, &op, 1);
	expect(r == -EINVAL, "stream_param without a handle", r);
	cc_stream_handle_put(q, h);

	/* A stale second put must not free the slot's new holder. */
	uint32_t h1, h2, h3;
	cc_stream_handle_get(q, &h1);
	cc_stream_handle_put(q, h1);
	cc_stream_handle_get(q, &h2);
	expect(crd_stream_slot(h2) == crd_stream_slot(h1) && h2 != h1,
	       "the slot comes back with a new tag", (int)h2);
	cc_stream_handle_put(q, h1); /* stale */
	cc_stream_handle_get(q, &h3);
	expect(crd_stream_slot(h3) != crd_stream_slot(h2),
	       "a stale put left the slot to its holder", (int)h3);
	cc_stream_handle_put(q, h2);
	cc_stream_handle_put(q, h3);
}

static void ccm_single_piece(struct cc_conn *c)
{
	static const uint8_t key[16] = { 7 };
	struct cc_session_params sp = { .alg = CC_ALG_AES_CCM,
					.key = key,
					.key_len = 16 };
	uint32_t sid;
	int r = cc_session_create(c, &sp, &sid);
	expect(r == 0, "a CCM session", r);
	if (r)
		return;
	uint8_t nonce[12] = { 1 }, tag[16], out[64];
	struct cc_stream_params p = { .session = sid,
				      .dir = CC_ENCRYPT,
				      .iv = nonce,
				      .iv_len = 12,
				      .msg_len = 100 };
	struct cc_stream *s;
	r = cc_stream_open(c, &p, &s);
	expect(r == 0, "a CCM stream", r);
	if (r)
		return;
	size_t n;
	r = cc_stream_final(s, out, &n, tag);
	expect(r == CC_ERR_BAD_PARAM,
	       "CCM declared 100 bytes, a single piece of 0", r);
	cc_stream_free(s);
	(void)cc_session_destroy(c, sid);
}

static void xts_units(struct cc_conn *c, struct cc_queue *q, uint8_t *buf)
{
	uint8_t key[32];
	for (unsigned i = 0; i < 32; i++)
		key[i] = (uint8_t)(i * 37 + 1);
	struct cc_session_params sp = { .alg = CC_ALG_AES_XTS,
					.key = key,
					.key_len = 32 };
	uint32_t sid, h;
	int r = cc_session_create(c, &sp, &sid);
	expect(r == 0, "an XTS session", r);
	if (r)
		return;
	for (unsigned units = CRD_XTS_STREAM_UNITS_MAX;
	     units <= CRD_XTS_STREAM_UNITS_MAX + 1; units++) {
		cc_stream_handle_get(q, &h);
		struct cc_op op[2] = {
			{ .session = sid,
			  .dir = CC_ENCRYPT,
			  .src = buf,
			  .len = 16 * units,
			  .iv = buf + (1 << 20),
			  .iv_len = 16,
			  .stream = h,
			  .stream_flags = CC_STREAM_FIRST,
			  .stream_param = 16 },
			{ .session = sid,
			  .dir = CC_ENCRYPT,
			  .src = buf,
			  .len = 0,
			  .stream = h,
			  .stream_flags = CC_STREAM_LAST },
		};
		struct cc_completion cp[2];
		r = run(q, op, 2, cp);
		expect(r == 0, "XTS pieces ran", r);
		if (units == CRD_XTS_STREAM_UNITS_MAX)
			expect(!r && cp[0].status == CC_OK &&
				       cp[1].status == CC_OK,
			       "XTS: a piece of the most units runs",
			       cp[0].status);
		else
			expect(!r && cp[0].status == CC_ERR_BAD_PARAM &&
				       cp[1].status == CC_ERR_NO_STREAM,
			       "XTS: one unit more is refused, ending the stream",
			       cp[0].status);
		cc_stream_handle_put(q, h);
	}
	(void)cc_session_destroy(c, sid);
}

static void first_after_destroy(struct cc_conn *c, struct cc_queue *q,
				uint8_t *buf)
{
	static const uint8_t key[16] = { 9 };
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 16 };
	uint32_t s1, s2, h;
	int r = cc_session_create(c, &sp, &s1);
	expect(r == 0, "a GCM session", r);
	if (r)
		return;
	cc_stream_handle_get(q, &h);
	struct cc_op op = { .session = s1,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .len = 64,
			    .iv = buf + 4096,
			    .iv_len = 12,
			    .stream = h,
			    .stream_flags = CC_STREAM_FIRST };
	struct cc_completion cp[2];
	r = run(q, &op, 1, cp);
	expect(!r && cp[0].status == CC_OK, "a stream opened", cp[0].status);
	r = cc_session_destroy(c, s1);
	expect(r == 0, "its session destroyed", r);
	r = cc_session_create(c, &sp, &s2);
	expect(r == 0, "another session", r);
	/* The same slot (and handle), a new FIRST: the old stream ended
	 * with its session. */
	op.session = s2;
	struct cc_op last = { .session = s2,
			      .dir = CC_ENCRYPT,
			      .src = buf,
			      .len = 16,
			      .tag = buf + 8192,
			      .stream = h,
			      .stream_flags = CC_STREAM_LAST };
	struct cc_op two[2] = { op, last };
	r = run(q, two, 2, cp);
	expect(!r && cp[0].status == CC_OK && cp[1].status == CC_OK,
	       "FIRST on a slot whose session was destroyed", cp[0].status);
	cc_stream_handle_put(q, h);
	(void)cc_session_destroy(c, s2);
}

/* What OpenSSL's c (an AEAD, IV 12) makes of (key, iv, aad, msg): the
 * ciphertext into ct (NULL: dropped) and the 16-byte tag. */
static int ossl_seal(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv,
		     const uint8_t *aad, int aad_len, const uint8_t *msg,
		     int len, uint8_t *ct, uint8_t tag[16])
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	uint8_t out[4096];
	int n, ok = x && len <= (int)sizeof(out) &&
		    EVP_EncryptInit_ex(x, c, NULL, key, iv) &&
		    EVP_EncryptUpdate(x, NULL, &n, aad, aad_len) &&
		    EVP_EncryptUpdate(x, out, &n, msg, len) &&
		    EVP_EncryptFinal_ex(x, out, &n) &&
		    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(x);
	if (ok && ct)
		memcpy(ct, out, (size_t)len);
	return ok ? 0 : -1;
}

/* The AES-128-GCM tag OpenSSL makes for (key, iv 12, aad, msg). */
static int ossl_gcm_tag(const uint8_t *key, const uint8_t *iv,
			const uint8_t *aad, int aad_len, const uint8_t *msg,
			int len, uint8_t tag[16])
{
	return ossl_seal(EVP_aes_128_gcm(), key, iv, aad, aad_len, msg, len,
			 NULL, tag);
}

/* A GCM stream of two pieces whose LAST asks for an n-byte tag: the
 * status of LAST. */
static int short_tag_stream(struct cc_queue *q, uint32_t sid, enum cc_dir dir,
			    uint8_t *buf, unsigned n)
{
	uint32_t h;
	if (cc_stream_handle_get(q, &h))
		return -EBUSY;
	struct cc_op op[2] = {
		{ .session = sid,
		  .dir = dir,
		  .src = buf,
		  .len = 700,
		  .iv = buf + 8192,
		  .iv_len = 12,
		  .aad = buf + 8192 + 64,
		  .aad_len = 20,
		  .stream = h,
		  .stream_flags = CC_STREAM_FIRST },
		{ .session = sid,
		  .dir = dir,
		  .src = buf + 700,
		  .len = 324,
		  .tag = buf + 8192 + 128,
		  .stream = h,
		  .stream_flags = CC_STREAM_LAST | CC_STREAM_TAG_LEN(n) },
	};
	struct cc_completion cp[2];
	int r = run(q, op, 2, cp);
	cc_stream_handle_put(q, h);
	if (r)
		return r;
	return cp[0].status ? cp[0].status : cp[1].status;
}

static void short_tags(struct cc_conn *c, struct cc_queue *q, uint8_t *buf,
		       const char *engine)
{
	static const uint8_t key[16] = { 0x2b, 0x7e, 0x15, 0x16 };
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 16,
					.engine = engine };
	uint32_t sid;
	int r = cc_session_create(c, &sp, &sid);
	printf("short tags on %s\n", engine ? engine : "the default engine");
	expect(r == 0, "a GCM session for short tags", r);
	if (r)
		return;
	uint8_t msg[1024], want[16];
	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	for (unsigned i = 0; i < 64 + 20; i++)
		buf[8192 + i] = (uint8_t)(0x40 + i); /* IV, then the AAD */
	expect(ossl_gcm_tag(key, buf + 8192, buf + 8192 + 64, 20, msg, 1024,
			    want) == 0,
	       "OpenSSL's tag", 0);
	static const unsigned ns[] = { 4, 8, 12, 13, 14, 15 };
	for (unsigned k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		unsigned n = ns[k];
		char what[96];
		memcpy(buf, msg, sizeof(msg));
		memset(buf + 8192 + 128, 0, 16);
		r = short_tag_stream(q, sid, CC_ENCRYPT, buf, n);
		snprintf(what, sizeof(what), "encrypt, a %u-byte tag", n);
		expect(r == 0 && !memcmp(buf + 8192 + 128, want, n) &&
			       buf[8192 + 128 + n] == 0,
		       what, r);
		/* buf holds the ciphertext: decrypt it back. */
		memcpy(buf + 8192 + 128, want, n);
		r = short_tag_stream(q, sid, CC_DECRYPT, buf, n);
		snprintf(what, sizeof(what), "decrypt, a %u-byte tag", n);
		expect(r == 0 && !memcmp(buf, msg, sizeof(msg)), what, r);
		memcpy(buf, msg, sizeof(msg));
		(void)short_tag_stream(q, sid, CC_ENCRYPT, buf, n);
		memcpy(buf + 8192 + 128, want, n);
		buf[8192 + 128 + n - 1] ^= 1;
		r = short_tag_stream(q, sid, CC_DECRYPT, buf, n);
		snprintf(what, sizeof(what), "decrypt, a wrong %u-byte tag", n);
		expect(r == CC_ERR_AUTH_FAILED, what, r);
	}
	/* GCM takes 4, 8 and 12..16 bytes: 3 and 11 are not its sizes. */
	r = short_tag_stream(q, sid, CC_ENCRYPT, buf, 3);
	expect(r == CC_ERR_BAD_PARAM, "a 3-byte tag", r);
	r = short_tag_stream(q, sid, CC_ENCRYPT, buf, 11);
	expect(r == CC_ERR_BAD_PARAM, "an 11-byte tag", r);
	/* Not shorter than the session's, or not on LAST: the library. */
	uint32_t h;
	cc_stream_handle_get(q, &h);
	struct cc_op op = { .session = sid,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .len = 16,
			    .iv = buf + 8192,
			    .iv_len = 12,
			    .tag = buf + 8192 + 128,
			    .stream = h,
			    .stream_flags = CC_STREAM_FIRST | CC_STREAM_LAST |
					    CC_STREAM_TAG_LEN(16) };
	r = cc_enqueue_burst(q, &op, 1);
	expect(r == -EINVAL, "a 16-byte 'short' tag on a 16-byte session", r);
	op.stream_flags = CC_STREAM_FIRST | CC_STREAM_TAG_LEN(8);
	op.tag = NULL;
	r = cc_enqueue_burst(q, &op, 1);
	expect(r == -EINVAL, "a tag length on a piece that is not LAST", r);
	cc_stream_handle_put(q, h);
	(void)cc_session_destroy(c, sid);
}

/* Arena layout of clone_midway's streams. */
enum {
	CL_LEN = 1000,	  /* the message, at buf */
	CL_A = 4096,	  /* the source's output */
	CL_B = 8192,	  /* the clone's */
	CL_IV = 12288,	  /* 12 bytes */
	CL_AAD = 12352,	  /* 20 bytes */
	CL_TAG_A = 12416, /* 16 bytes each */
	CL_TAG_B = 12432,
	CL_CUT = 300, /* the clone is made after FIRST's CL_CUT bytes */
};

/*
 * One stream of alg on engine cloned after its FIRST piece: the source
 * goes on in two pieces, the clone in two of other lengths. dir: the
 * message at buf is plaintext (encrypt) or ciphertext (decrypt, the tags
 * at CL_TAG_A and CL_TAG_B already set). The completions' statuses in
 * st[6] (FIRST, clone, the source's two, the clone's two); 0 or -errno.
 */
static int clone_stream(struct cc_queue *q, uint32_t sid, enum cc_dir dir,
			uint8_t *buf, int32_t st[6])
{
	uint32_t h, h2;
	if (cc_stream_handle_get(q, &h))
		return -EBUSY;
	if (cc_stream_handle_get(q, &h2)) {
		cc_stream_handle_put(q, h);
		return -EBUSY;
	}
	struct cc_op op[6] = {
		{ .session = sid,
		  .dir = dir,
		  .src = buf,
		  .dst = buf + CL_A,
		  .len = CL_CUT,
		  .iv = buf + CL_IV,
		  .iv_len = 12,
		  .aad = buf + CL_AAD,
		  .aad_len = 20,
		  .stream = h,
		  .stream_flags = CC_STREAM_FIRST },
		{ .session = sid,
		  .dir = dir,
		  .src = buf,
		  .stream = h,
		  .stream_flags = CC_STREAM_CLONE,
		  .stream_param = h2 },
		{ .session = sid,
		  .dir = dir,
		  .src = buf + CL_CUT,
		  .dst = buf + CL_A + CL_CUT,
		  .len = 333,
		  .stream = h },
		{ .session = sid,
		  .dir = dir,
		  .src = buf + CL_CUT + 333,
		  .dst = buf + CL_A + CL_CUT + 333,
		  .len = CL_LEN - CL_CUT - 333,
		  .tag = buf + CL_TAG_A,
		  .stream = h,
		  .stream_flags = CC_STREAM_LAST },
		{ .session = sid,
		  .dir = dir,
		  .src = buf + CL_CUT,
		  .dst = buf + CL_B + CL_CUT,
		  .len = 1,
		  .stream = h2 },
		{ .session = sid,
		  .dir = dir,
		  .src = buf + CL_CUT + 1,
		  .dst = buf + CL_B + CL_CUT + 1,
		  .len = CL_LEN - CL_CUT - 1,
		  .tag = buf + CL_TAG_B,
		  .stream = h2,
		  .stream_flags = CC_STREAM_LAST },
	};
	struct cc_completion cp[6];
	int r = run(q, op, 6, cp);
	cc_stream_handle_put(q, h);
	cc_stream_handle_put(q, h2);
	for (unsigned i = 0; i < 6 && !r; i++)
		st[i] = cp[i].status;
	return r;
}

static void clone_midway(struct cc_conn *c, struct cc_queue *q, uint8_t *buf,
			 enum cc_alg alg, const char *engine)
{
	int gcm = alg == CC_ALG_AES_GCM;
	uint8_t key[32], msg[CL_LEN], ct[CL_LEN], tag[16];
	struct cc_session_params sp = { .alg = alg,
					.key = key,
					.key_len = gcm ? 16 : 32,
					.engine = engine };
	char what[128];
	uint32_t sid;
	int32_t st[6];

	for (unsigned i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 13 + 1);
	for (unsigned i = 0; i < CL_LEN; i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	for (unsigned i = 0; i < 12 + 20; i++)
		buf[(i < 12 ? CL_IV : CL_AAD - 12) + i] = (uint8_t)(0x40 + i);
	expect(ossl_seal(gcm ? EVP_aes_128_gcm() : EVP_chacha20_poly1305(), key,
			 buf + CL_IV, buf + CL_AAD, 20, msg, CL_LEN, ct,
			 tag) == 0,
	       "OpenSSL's seal", 0);
	int r = cc_session_create(c, &sp, &sid);
	snprintf(what, sizeof(what), "%s on %s",
		 gcm ? "GCM" : "ChaCha20-Poly1305",
		 engine ? engine : "the default engine");
	printf("clones: %s\n", what);
	expect(r == 0, "a session for clones", r);
	if (r)
		return;

	memcpy(buf, msg, CL_LEN);
	memset(buf + CL_A, 0, 2 * 4096);
	r = clone_stream(q, sid, CC_ENCRYPT, buf, st);
	expect(r == 0 && !st[0] && !st[1] && !st[2] && !st[3] && !st[4] &&
		       !st[5],
	       "encrypt: the source and its clone complete", r ? r : st[5]);
	expect(!memcmp(buf + CL_A, ct, CL_LEN) &&
		       !memcmp(buf + CL_TAG_A, tag, 16),
	       "encrypt: the source's ciphertext and tag are OpenSSL's", 0);
	expect(!memcmp(buf + CL_B + CL_CUT, ct + CL_CUT, CL_LEN - CL_CUT) &&
		       !memcmp(buf + CL_TAG_B, tag, 16),
	       "encrypt: the clone's ciphertext and tag are OpenSSL's", 0);

	memcpy(buf, ct, CL_LEN);
	memcpy(buf + CL_TAG_A, tag, 16);
	memcpy(buf + CL_TAG_B, tag, 16);
	buf[CL_TAG_B + 5] ^= 0x20;
	r = clone_stream(q, sid, CC_DECRYPT, buf, st);
	expect(r == 0 && !st[3] && !memcmp(buf + CL_A, msg, CL_LEN),
	       "decrypt: the source verifies and gives the plaintext",
	       r ? r : st[3]);
	expect(r == 0 && st[5] == CC_ERR_AUTH_FAILED,
	       "decrypt: the clone's wrong tag fails it", r ? r : st[5]);
	expect(!memcmp(buf + CL_B + CL_CUT, msg + CL_CUT, 1),
	       "decrypt: the clone's middle piece is plaintext", 0);
	uint8_t zero[CL_LEN] = { 0 };
	expect(!memcmp(buf + CL_B + CL_CUT + 1, zero, CL_LEN - CL_CUT - 1),
	       "decrypt: the clone's failed LAST is zeroed", 0);
	(void)cc_session_destroy(c, sid);
}

int main(void)
{
	struct fx_daemon d;
	struct cc_conn *c;
	struct cc_queue *q;
	struct fx_daemon_params dp = { .workers = 2 };
	struct cc_queue_params qp = { .arena_size = 4 << 20 };
	if (fx_setup(&d, &dp, "test_stream_rules", &qp, &c, &q) < 0)
		return FX_EXIT_FAIL;
	uint8_t *buf = cc_buf_alloc(q, 2 << 20);
	if (!buf) {
		fx_teardown(&d, c, q);
		return FX_EXIT_FAIL;
	}
	memset(buf, 0x5a, 2 << 20);
	static const uint8_t key[16] = { 3 };
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 16 };
	uint32_t sid;
	int r = cc_session_create(c, &sp, &sid);
	expect(r == 0, "a session", r);

	library_refusals(q, sid, buf);
	ccm_single_piece(c);
	xts_units(c, q, buf);
	first_after_destroy(c, q, buf);
	short_tags(c, q, buf, NULL);
	short_tags(c, q, buf, "openssl");
	clone_midway(c, q, buf, CC_ALG_AES_GCM, NULL);
	clone_midway(c, q, buf, CC_ALG_AES_GCM, "openssl");
	clone_midway(c, q, buf, CC_ALG_CHACHA20_POLY1305, NULL);
	clone_midway(c, q, buf, CC_ALG_CHACHA20_POLY1305, "openssl");

	cc_buf_free(q, buf);
	int st = fx_teardown(&d, c, q);
	printf("%lu checks, %lu failed\n", checked, failed);
	return failed || st ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
