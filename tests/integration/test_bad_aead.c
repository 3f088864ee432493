// SPDX-License-Identifier: MIT
/*
 * What AES-CCM, ChaCha20-Poly1305 and ChaCha20 must refuse, and how, on
 * every engine cc_capabilities_get() lists for each:
 *
 * - sessions (-EINVAL): CCM keys of 20 bytes, tags of 2, 5 and 18;
 *   ChaCha20-Poly1305 keys of 16 bytes and truncated tags; ChaCha20 keys
 *   of 16 bytes and any tag;
 * - ops (CC_ERR_BAD_PARAM): CCM nonces of 6 and 14 bytes, and ops longer
 *   than the nonce's length field allows (nonce 13: 65536 bytes; nonce
 *   12: 16 MiB, where the engine takes that much), beside the longest
 *   that are allowed (which must work); ChaCha20-Poly1305 nonces of 8 and
 *   16 bytes; ChaCha20 IVs of 12 bytes and AAD;
 * - forgeries (CC_ERR_AUTH_FAILED, output zeroed): a flipped bit in the
 *   tag, the ciphertext or the AAD;
 * - session-less ops with a bad key or tag length: a per-op error.
 *
 * Every refused op sits in a burst between two good ones, which must
 * complete with the right answer: a refusal never wedges a queue.
 *
 * Exit: 0 all passed, 1 any failure.
 */
#include "aead_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENGINES 8
#define BIG (16u << 20)
#define TIMEOUT_MS 30000

static unsigned long checked, failed;

static void expect(int ok, const char *eng, const char *what, int got)
{
	checked++;
	if (ok)
		return;
	failed++;
	fprintf(stderr, "FAIL [%s] %s (got %d: %s)\n", eng, what, got,
		cc_strerror(got));
}

/* A good case of alg: OpenSSL's ciphertext and tag for random data. */
static int good_case(struct av *v, enum cc_alg alg, unsigned iv_len,
		     uint32_t len)
{
	memset(v, 0, sizeof(*v));
	v->alg = alg;
	v->file = "bad";
	v->key_len = alg == CC_ALG_AES_CCM ? 16 : 32;
	v->iv_len = iv_len;
	v->tag_len = alg == CC_ALG_CHACHA20 ? 0 : 16;
	v->aad_len = alg == CC_ALG_CHACHA20 ? 0 : 20;
	v->len = len;
	v->aad = malloc(v->aad_len + 1);
	v->pt = malloc(len + 1);
	v->ct = malloc(len + 1);
	if (!v->aad || !v->pt || !v->ct)
		return -ENOMEM;
	mc_rnd_bytes(v->key, v->key_len);
	mc_rnd_bytes(v->iv, v->iv_len);
	mc_rnd_bytes(v->aad, v->aad_len);
	mc_rnd_bytes(v->pt, len);
	return av_ref_encrypt(v, v->ct, v->tag);
}

static int session(struct cc_conn *c, const char *eng, enum cc_alg alg,
		   const uint8_t *key, unsigned key_len, unsigned tag_len,
		   uint32_t *sid)
{
	struct cc_session_params sp = {
		.alg = alg,
		.key = key,
		.key_len = key_len,
		.tag_len = tag_len,
		.engine = eng,
	};
	return cc_session_create(c, &sp, sid);
}

static void bad_session(struct cc_conn *c, const char *eng, enum cc_alg alg,
			unsigned key_len, unsigned tag_len, const char *what)
{
	uint8_t key[64] = { 1 };
	uint32_t sid;
	int r = session(c, eng, alg, key, key_len, tag_len, &sid);

	expect(r == -EINVAL, eng, what, r);
	if (!r)
		cc_session_destroy(c, sid);
}

/*
 * Encrypt good, then (flat, out of place) the case with iv_len / len /
 * aad_len changed, then good again, in one burst: the middle op must
 * complete want, the others right. sl: the middle op is session-less
 * with that key length and tag length.
 */
struct bad_op {
	const char *what;
	int iv_len, aad_len; /* -1: the case's */
	int64_t len;
	int sl_key, sl_tag; /* session-less: key and tag bytes; 0: a session */
	int want;
};

static void sandwich(struct cc_queue *q, const char *eng, uint32_t sid,
		     const struct av *v, const struct bad_op *b)
{
	struct cc_op ops[3];
	struct cc_completion comps[3];
	uint8_t *src[3], *dst[3], *aad, *tag[3];
	struct cc_sessionless *sl = NULL;
	uint32_t blen = b->len >= 0 ? (uint32_t)b->len : v->len;
	int r = 0;

	aad = cc_buf_alloc(q, v->aad_len + 2);
	for (int i = 0; i < 3; i++) {
		uint32_t l = i == 1 ? blen : v->len;

		src[i] = cc_buf_alloc(q, l + 1);
		dst[i] = cc_buf_alloc(q, l + 1);
		tag[i] = cc_buf_alloc(q, 16);
		if (!src[i] || !dst[i] || !tag[i])
			r = -ENOMEM;
		else
			memcpy(src[i], v->pt, l < v->len ? l : v->len);
		ops[i] = (struct cc_op){
			.user_data = i,
			.session = sid,
			.dir = CC_ENCRYPT,
			.src = src[i],
			.dst = dst[i],
			.len = l,
			.aad = aad,
			.aad_len = v->aad_len,
			.tag = v->tag_len ? tag[i] : NULL,
			.iv = v->iv,
			.iv_len = v->iv_len,
		};
	}
	if (!aad || r) {
		expect(0, eng, "arena exhausted", -ENOMEM);
		goto out;
	}
	memcpy(aad, v->aad, v->aad_len);
	if (b->iv_len >= 0)
		ops[1].iv_len = (unsigned)b->iv_len;
	if (b->aad_len >= 0)
		ops[1].aad_len = (uint32_t)b->aad_len;
	if (b->sl_key) {
		sl = cc_buf_alloc(q, sizeof(*sl));
		if (!sl) {
			expect(0, eng, "arena exhausted", -ENOMEM);
			goto out;
		}
		memset(sl, 0, sizeof(*sl));
		sl->alg = v->alg;
		sl->key_len = (uint8_t)b->sl_key;
		sl->tag_len = (uint8_t)b->sl_tag;
		memcpy(sl->key, v->key, v->key_len);
		ops[1].session = 0;
		ops[1].sessionless = sl;
	}
	r = fx_run_burst(q, ops, 3, comps, TIMEOUT_MS);
	if (r) {
		expect(0, eng, "burst did not complete", r);
		goto out;
	}
	for (int i = 0; i < 3; i += 2)
		expect(comps[i].status == CC_OK &&
			       !memcmp(dst[i], v->ct, v->len) &&
			       !memcmp(tag[i], v->tag, v->tag_len),
		       eng, "the good op beside a refused one",
		       comps[i].status);
	char what[160];
	snprintf(what, sizeof(what), "%s %s: want %s", cc_alg_name(v->alg),
		 b->what, b->want ? cc_strerror(b->want) : "success");
	expect(b->want == -1 ? comps[1].status != CC_OK
			     : comps[1].status == b->want,
	       eng, what, comps[1].status);
out:
	for (int i = 0; i < 3; i++) {
		if (src[i])
			cc_buf_free(q, src[i]);
		if (dst[i])
			cc_buf_free(q, dst[i]);
		if (tag[i])
			cc_buf_free(q, tag[i]);
	}
	if (aad)
		cc_buf_free(q, aad);
	if (sl)
		cc_buf_free(q, sl);
}

/* Decrypt with one bit flipped in the tag, the ciphertext or the AAD:
 * CC_ERR_AUTH_FAILED and every output byte zero. */
static void forgeries(struct cc_conn *c, const char *eng, uint32_t sid,
		      const struct av *v)
{
	static const char *const what[3] = { "tag", "ciphertext", "AAD" };
	uint8_t *buf = malloc(v->len + 1), *aad = malloc(v->aad_len + 1);
	uint8_t tag[16];

	for (int f = 0; f < 3 && buf && aad; f++) {
		char w[96];
		int r;

		memcpy(buf, v->ct, v->len);
		memcpy(aad, v->aad, v->aad_len);
		memcpy(tag, v->tag, v->tag_len);
		if (f == 0)
			mc_flip(tag, mc_below(8 * v->tag_len));
		else if (f == 1)
			mc_flip(buf, mc_below(8 * v->len));
		else
			mc_flip(aad, mc_below(8 * v->aad_len));
		r = fx_crypt(c, sid, CC_DECRYPT, v->iv, v->iv_len, aad,
			     v->aad_len, buf, buf, v->len, tag);
		snprintf(w, sizeof(w), "%s: a flipped bit in the %s",
			 cc_alg_name(v->alg), what[f]);
		expect(r == CC_ERR_AUTH_FAILED, eng, w, r);
		snprintf(w, sizeof(w), "%s: output zeroed after a forged %s",
			 cc_alg_name(v->alg), what[f]);
		expect(mc_first_not(buf, 0, v->len) < 0, eng, w, r);
	}
	free(buf);
	free(aad);
}

/* A CCM op of len bytes with an iv_len-byte nonce through cc_crypt():
 * want, and when it succeeds, OpenSSL's answer. */
static void ccm_len(struct cc_conn *c, const char *eng, unsigned iv_len,
		    uint32_t len, int want)
{
	struct av v;
	uint8_t tag[16];
	uint32_t sid;
	char w[96];
	uint8_t *out = malloc(len + 1);
	int r = good_case(&v, CC_ALG_AES_CCM, iv_len, len);

	/* OpenSSL refuses what is too long too: no answer to compare */
	if (!out || (r && !want)) {
		expect(0, eng, "OpenSSL's reference", r);
		goto out;
	}
	r = session(c, eng, CC_ALG_AES_CCM, v.key, v.key_len, 16, &sid);
	if (r) {
		expect(0, eng, "CCM session", r);
		goto out;
	}
	r = fx_crypt(c, sid, CC_ENCRYPT, v.iv, v.iv_len, v.aad, v.aad_len, v.pt,
		     out, len, tag);
	snprintf(w, sizeof(w), "aes-ccm, nonce %u, %u bytes: want %s", iv_len,
		 len, want ? cc_strerror(want) : "success");
	expect(r == want && (want || (!memcmp(out, v.ct, len) &&
				      !memcmp(tag, v.tag, 16))),
	       eng, w, r);
	cc_session_destroy(c, sid);
out:
	free(out);
	av_free(&v);
}

static void run_engine(struct cc_conn *c, struct cc_queue *q,
		       const struct cc_alg_caps *cap, enum cc_alg alg)
{
	const char *eng = cap->engine;
	unsigned iv = alg == CC_ALG_CHACHA20  ? 16
		      : alg == CC_ALG_AES_CCM ? 13
					      : 12;
	struct av v;
	uint32_t sid;
	int r;

	switch (alg) {
	case CC_ALG_AES_CCM:
		bad_session(c, eng, alg, 20, 16, "aes-ccm with a 20-byte key");
		bad_session(c, eng, alg, 16, 2, "aes-ccm with a 2-byte tag");
		bad_session(c, eng, alg, 16, 5, "aes-ccm with a 5-byte tag");
		bad_session(c, eng, alg, 16, 18, "aes-ccm with an 18-byte tag");
		break;
	case CC_ALG_CHACHA20_POLY1305:
		bad_session(c, eng, alg, 16, 16,
			    "chacha20-poly1305 with a 16-byte key");
		bad_session(c, eng, alg, 32, 12,
			    "chacha20-poly1305 with a 12-byte tag");
		break;
	default:
		bad_session(c, eng, alg, 16, 0, "chacha20 with a 16-byte key");
		bad_session(c, eng, alg, 32, 16, "chacha20 with a tag");
		break;
	}
	if (good_case(&v, alg, iv, 100)) {
		expect(0, eng, "OpenSSL's reference", -EIO);
		av_free(&v);
		return;
	}
	r = session(c, eng, alg, v.key, v.key_len, v.tag_len, &sid);
	expect(r == 0, eng, "a good session", r);
	if (r) {
		av_free(&v);
		return;
	}
	static const struct bad_op ccm_ops[] = {
		{ "nonce 6", 6, -1, -1, 0, 0, CC_ERR_BAD_PARAM },
		{ "nonce 14", 14, -1, -1, 0, 0, CC_ERR_BAD_PARAM },
		{ "nonce 13, 65536 bytes", -1, -1, 65536, 0, 0,
		  CC_ERR_BAD_PARAM },
		{ "session-less, 20-byte key", -1, -1, -1, 20, 16, -1 },
		{ "session-less, 5-byte tag", -1, -1, -1, 16, 5, -1 },
	};
	static const struct bad_op poly_ops[] = {
		{ "nonce 8", 8, -1, -1, 0, 0, CC_ERR_BAD_PARAM },
		{ "nonce 16", 16, -1, -1, 0, 0, CC_ERR_BAD_PARAM },
		{ "session-less, 16-byte key", -1, -1, -1, 16, 16, -1 },
		{ "session-less, 8-byte tag", -1, -1, -1, 32, 8, -1 },
	};
	static const struct bad_op chacha_ops[] = {
		{ "IV 12", 12, -1, -1, 0, 0, CC_ERR_BAD_PARAM },
		{ "AAD 1", -1, 1, -1, 0, 0, CC_ERR_BAD_PARAM },
		{ "session-less, 16-byte key", -1, -1, -1, 16, 0, -1 },
	};
	const struct bad_op *ops = alg == CC_ALG_AES_CCM    ? ccm_ops
				   : alg == CC_ALG_CHACHA20 ? chacha_ops
							    : poly_ops;
	unsigned n = alg == CC_ALG_AES_CCM
			     ? sizeof(ccm_ops) / sizeof(ccm_ops[0])
		     : alg == CC_ALG_CHACHA20
			     ? sizeof(chacha_ops) / sizeof(chacha_ops[0])
			     : sizeof(poly_ops) / sizeof(poly_ops[0]);
	for (unsigned i = 0; i < n; i++)
		sandwich(q, eng, sid, &v, &ops[i]);
	if (v.tag_len)
		forgeries(c, eng, sid, &v);
	cc_session_destroy(c, sid);
	av_free(&v);

	/* The CCM length field, where the engine's row reaches that far */
	if (alg == CC_ALG_AES_CCM) {
		ccm_len(c, eng, 13, 65536, CC_ERR_BAD_PARAM);
		if (cap->max_len >= 65535)
			ccm_len(c, eng, 13, 65535, CC_OK);
		if (cap->max_len >= BIG) {
			ccm_len(c, eng, 12, BIG, CC_ERR_BAD_PARAM);
			ccm_len(c, eng, 12, BIG - 1, CC_OK);
			ccm_len(c, eng, 11, BIG, CC_OK);
		}
	}
}

int main(void)
{
	static const enum cc_alg algs[] = { CC_ALG_AES_CCM,
					    CC_ALG_CHACHA20_POLY1305,
					    CC_ALG_CHACHA20 };
	struct fx_daemon_params dp = { .workers = 2 };
	struct cc_queue_params qp = { .sq_entries = 32,
				      .arena_size = 4u << 20 };
	struct cc_conn *conn;
	struct cc_queue *q;
	struct fx_daemon d;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mc_srand(mc_seed_from_env(0x6261646165616431ull));
	if (fx_setup(&d, &dp, "test_bad_aead", &qp, &conn, &q))
		return FX_EXIT_FAIL;
	for (unsigned a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		struct cc_alg_caps *caps = NULL, *rows[MAX_ENGINES];
		const struct cc_alg_caps *def;
		int n = av_caps(conn, algs[a], &caps, rows, MAX_ENGINES, &def);

		expect(n > 0, "-", "an engine for the algorithm", n);
		for (int e = 0; e < n; e++) {
			unsigned long c0 = checked, f0 = failed;

			run_engine(conn, q, rows[e], algs[a]);
			printf("%-18s [%s]: %lu checks, %lu failed\n",
			       cc_alg_name(algs[a]), rows[e]->engine,
			       checked - c0, failed - f0);
		}
		cc_capabilities_free(caps);
	}
	if (fx_teardown(&d, conn, q))
		failed++;
	printf("TOTAL: %lu checks, %lu failed\n%s\n", checked, failed,
	       failed ? "FAILED" : "PASSED");
	return failed ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
