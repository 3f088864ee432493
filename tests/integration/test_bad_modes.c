// SPDX-License-Identifier: MIT
/*
 * What the every-algorithm API must refuse at session creation and per op
 * (docs/algorithms.md, cryptoclient.h):
 *
 * - sessions: key lengths outside each algorithm's list (-EINVAL, as
 *   cc_session_create() documents), HMAC keys outside 1..64, tag
 *   lengths the algorithm has not (some -errno); for the MACs and digests (mc_mac_specs) also HMAC
 *   keys over 256 bytes, digests with a key, CMAC keys of 20 and XCBC
 *   keys of 32 bytes, tags of 3 and digest + 1 bytes (-EINVAL);
 * - XTS keys with equal halves: a session that decrypts (IEEE 1619's
 *   vector 1) and refuses to encrypt (CC_ERR_POLICY);
 * - authentication-only ops (GMAC, MACs, digests) verified with a wrong
 *   tag: CC_ERR_AUTH_FAILED with the message unchanged, between good
 *   ops; session-less digests with a key or tags of 3 bytes:
 *   CC_ERR_BAD_PARAM;
 * - per op, on every engine and session-less: IV lengths the algorithm
 *   does not take, AAD where the spec says it must be 0, lengths that are
 *   not a multiple of 16 (CBC, ECB, authenc, CBC-null), XTS under 16
 *   bytes, more than 16 MiB: CC_ERR_BAD_PARAM. Where the spec says
 *   "ignored" (null's IV, CBC-null's and null's AAD), the op must succeed
 *   with the same answer.
 * Scatter-gather lists, session-less parameters and the capability table
 * have programs of their own (test_bad_sgl, test_bad_sessionless,
 * test_bad_caps).
 *
 * Every refused op sits between two good ones in the same queue, which
 * must complete with the right answer: a failure never wedges a queue.
 *
 * Exit: 0 all passed, 1 any failure.
 */
#include "bad_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does the spec allow tag_len? */
static int tag_ok(const struct mc_spec *s, unsigned tl)
{
	if (s->tag_hi)
		return tl >= s->tag_lo && tl <= s->tag_hi;
	return mc_tag_ok(s, tl);
}

/* A key length every engine of s takes. */
static unsigned good_key_len(const struct mc_spec *s)
{
	return s->n_key_lens ? s->key_lens[0] : s->key_any ? 32 : 0;
}

/* A session of alg with a key_len-byte key and tag_len: want -EINVAL. */
static void want_einval(struct t *t, const char *ctx, const struct mc_spec *s,
			const char *eng, unsigned key_len, unsigned tag_len)
{
	static uint8_t key[320];
	struct cc_session_params sp = {
		.alg = s->alg,
		.key = key_len ? key : NULL,
		.key_len = key_len,
		.tag_len = tag_len,
		.engine = eng,
	};
	char what[96];
	uint32_t sid;
	int r = cc_session_create(t->conn, &sp, &sid);

	snprintf(what, sizeof(what), "%u-byte key, tag_len %u: want -EINVAL",
		 key_len, tag_len);
	expect(t, r == -EINVAL, ctx, what, r);
	if (!r)
		cc_session_destroy(t->conn, sid);
}

/* The MAC and digest rows' own session rules. */
static void run_bad_mac_sessions(struct t *t, const struct mc_spec *s,
				 const char *eng, const char *ctx)
{
	unsigned kl = good_key_len(s);

	if (s->key_any) /* HMAC: up to 256 bytes */
		want_einval(t, ctx, s, eng, s->key_any + 1, 0);
	else if (!s->n_key_lens) /* digests take no key */
		for (unsigned k = 1; k <= 64; k *= 4)
			want_einval(t, ctx, s, eng, k, 0);
	if (s->alg == CC_ALG_AES_CMAC)
		want_einval(t, ctx, s, eng, 20, 0);
	if (s->alg == CC_ALG_AES_XCBC_MAC)
		want_einval(t, ctx, s, eng, 32, 0);
	want_einval(t, ctx, s, eng, kl, 3);
	want_einval(t, ctx, s, eng, kl, s->tag_hi + 1);
	want_einval(t, ctx, s, eng, kl, MC_TAG_MAX + 1);
}

static void run_bad_sessions(struct t *t, const struct mc_spec *s,
			     const char *eng)
{
	static const unsigned klens[] = { 0,  1,  8,  15, 16, 17, 23, 24, 25,
					  31, 32, 33, 48, 63, 64, 65, 80 };
	static const unsigned tlens[] = { 1,  2,  3,  4,  5,  6,  7,
					  8,  9,  10, 11, 12, 13, 14,
					  15, 16, 17, 20, 23, 24, 25,
					  31, 32, 33, 48, 49, 64, 65 };
	uint8_t key[128];
	char ctx[96], what[96];
	struct mc_key k;
	unsigned i, j;
	uint32_t sid;
	int r;

	snprintf(ctx, sizeof(ctx), "%s [%.32s] session", s->name, eng);
	mc_rnd_bytes(key, sizeof(key));
	for (i = 0; s->n_key_lens && i < sizeof(klens) / sizeof(klens[0]);
	     i++) {
		struct cc_session_params sp = {
			.alg = s->alg,
			.key = key,
			.key_len = klens[i],
			.auth_key = key + 64,
			.auth_key_len = s->auth_key ? 20 : 0,
			.engine = eng,
		};
		int valid = 0;

		for (j = 0; j < s->n_key_lens; j++)
			valid |= klens[i] == s->key_lens[j];
		if (valid)
			continue;
		r = cc_session_create(t->conn, &sp, &sid);
		snprintf(what, sizeof(what), "%u-byte key: want -EINVAL",
			 klens[i]);
		expect(t, r == -EINVAL, ctx, what, r);
		if (!r)
			cc_session_destroy(t->conn, sid);
	}
	if (s->auth_key) {
		static const unsigned alens[] = { 0, 65, 80, 128 };

		for (i = 0; i < sizeof(alens) / sizeof(alens[0]); i++) {
			struct cc_session_params sp = {
				.alg = s->alg,
				.key = key,
				.key_len = 16,
				.auth_key = alens[i] ? key : NULL,
				.auth_key_len = alens[i],
				.engine = eng,
			};

			r = cc_session_create(t->conn, &sp, &sid);
			snprintf(what, sizeof(what),
				 "%u-byte HMAC key: want -EINVAL", alens[i]);
			expect(t, r == -EINVAL, ctx, what, r);
			if (!r)
				cc_session_destroy(t->conn, sid);
		}
	}
	if (s->xts_key) {
		for (i = 0; i < 2; i++) {
			unsigned kl = i ? 64 : 32;
			struct cc_session_params sp = {
				.alg = s->alg,
				.key = key,
				.key_len = kl,
				.engine = eng,
			};

			/* IEEE 1619's vector 1 at 32 bytes */
			static const uint8_t ct1[32] = {
				0x91, 0x7c, 0xf6, 0x9e, 0xbd, 0x68, 0xb2, 0xec,
				0x9b, 0x9f, 0xe9, 0xa3, 0xea, 0xdd, 0xa6, 0x92,
				0xcd, 0x43, 0xd2, 0xf5, 0x95, 0x98, 0xed, 0x85,
				0x8c, 0x02, 0xc2, 0x65, 0x2f, 0xbf, 0x92, 0x2e
			};
			static const uint8_t zero[32];
			uint8_t iv[16] = { 0 }, buf[32];

			if (!i)
				memset(key, 0, sizeof(key));
			memcpy(key + kl / 2, key, kl / 2);
			r = cc_session_create(t->conn, &sp, &sid);
			snprintf(what, sizeof(what),
				 "%u-byte XTS key with equal halves: want "
				 "a decrypt-only session",
				 kl);
			expect(t, r == 0, ctx, what, r);
			if (!r) {
				r = cc_crypt(t->conn, sid, CC_ENCRYPT, iv, 16,
					     NULL, 0, zero, buf, 32, NULL);
				expect(t, r == CC_ERR_POLICY, ctx,
				       "equal XTS halves encrypt: want "
				       "CC_ERR_POLICY",
				       r);
				r = cc_crypt(t->conn, sid, CC_DECRYPT, iv, 16,
					     NULL, 0, ct1, buf, 32, NULL);
				expect(t,
				       r == 0 && (i || !memcmp(buf, zero, 32)),
				       ctx,
				       "equal XTS halves decrypt: want "
				       "IEEE 1619's plaintext",
				       r);
				cc_session_destroy(t->conn, sid);
			}
			mc_rnd_bytes(key, sizeof(key));
		}
	}
	if (s->tag_hi)
		run_bad_mac_sessions(t, s, eng, ctx);
	/* Tag lengths the algorithm has not: some -errno. An algorithm
	 * without a tag ("none") has no tag length to ask for. */
	key_for(&k, s, good_key_len(s));
	for (i = 0; i < sizeof(tlens) / sizeof(tlens[0]); i++) {
		if (tag_ok(s, tlens[i]))
			continue;
		k.tag_len = tlens[i];
		r = mc_session(t->conn, &k, eng, &sid);
		snprintf(what, sizeof(what), "tag_len %u: want a -errno",
			 tlens[i]);
		expect(t, r < 0 && r > -1000, ctx, what, r);
		if (!r)
			cc_session_destroy(t->conn, sid);
	}
}

/* Authentication only: verifying a wrong tag fails and changes nothing;
 * the right one passes. Session-less digests with a key, and tags of 3
 * bytes, are refused per op. */
static void run_bad_verify(struct t *t, const struct mc_spec *s,
			   const char *ctx, uint32_t sid,
			   const struct mc_key *k)
{
	unsigned tl = mc_tag_len(k);
	struct gop b;
	struct cc_op op;

	for (int i = 0; i < 2 && !t->fatal; i++) {
		if (gop_make(t, &b, k, sid, &op, 0))
			return;
		op.dir = CC_DECRYPT;
		memcpy(b.tag, b.reftag, tl);
		if (i)
			mc_flip(b.tag, mc_below(8 * tl));
		sandwich(t, ctx, i ? "verify a wrong tag" : "verify the tag",
			 i ? ACC_AUTH : ACC_OK, k, sid, &op, i ? NULL : &b, 0);
		expect(t, !memcmp(b.src, b.pt, GOOD_LEN), ctx,
		       "verifying changed the message", 0);
		gop_free(t, &b);
	}
	if (sid || !s->tag_hi)
		return;
	for (int i = 0; i < 2 && !t->fatal; i++) {
		if (gop_make(t, &b, k, 0, &op, 0))
			return;
		if (i)
			b.sl->tag_len = 3;
		else if (!s->n_key_lens && !s->key_any)
			b.sl->key_len = 16;
		else
			b.sl->tag_len = (uint8_t)(s->tag_hi + 1);
		sandwich(t, ctx,
			 i ? "session-less, tag_len 3"
			   : "session-less, key or tag_len the row has not",
			 ACC_PARAM, k, 0, &op, NULL, 0);
		gop_free(t, &b);
	}
}

static void run_bad_params(struct t *t, const struct mc_spec *s,
			   const char *eng, uint32_t sid,
			   const struct mc_key *k)
{
	/* past 16 bytes the IV is in the arena; past 128, refused */
	static const unsigned ivs[] = { 0,  1,	8,  11, 12,  13,
					15, 16, 17, 64, 128, 129 };
	static const uint32_t bad_lens[] = { 1, 8, 15, 17, 31, 65, 4097 };
	char ctx[96], what[96];
	struct gop b;
	struct cc_op op;
	unsigned i;

	snprintf(ctx, sizeof(ctx), "%s [%s]", s->name,
		 sid ? eng : "session-less");
	for (i = 0; i < sizeof(ivs) / sizeof(ivs[0]) && !t->fatal; i++) {
		int ok = mc_iv_ok(s, eng, ivs[i]);

		/* Lengths the spec allows are tested elsewhere, except
		 * where they are "ignored": those must work unchanged. */
		if (ok && !s->iv_ignored)
			continue;
		if (gop_make(t, &b, k, sid, &op, 0))
			break;
		uint8_t *long_iv = NULL;
		if (ivs[i] > CC_IV_INLINE) {
			long_iv = cc_buf_alloc(t->q, ivs[i]);
			if (!long_iv) {
				gop_free(t, &b);
				break;
			}
			memcpy(long_iv, b.iv,
			       ivs[i] < MC_IV_MAX ? ivs[i] : MC_IV_MAX);
			op.iv = long_iv;
		}
		op.iv_len = ivs[i];
		snprintf(what, sizeof(what), "%u-byte IV", ivs[i]);
		sandwich(t, ctx, what,
			 ok		      ? ACC_OK
			 : ivs[i] > MC_IV_MAX ? ACC_PARAM_ENQ
					      : ACC_PARAM,
			 k, sid, &op, &b, 0);
		gop_free(t, &b);
		cc_buf_free(t->q, long_iv);
	}
	for (i = 0; i < 3 && !t->fatal; i++) {
		static const uint32_t aads[] = { 1, 16, 65535 };
		uint8_t *big = NULL;

		if (s->aad == MC_AAD_ANY)
			break;
		if (gop_make(t, &b, k, sid, &op, 0))
			break;
		if (aads[i] > 64) {
			big = cc_buf_alloc(t->q, aads[i]);
			if (!big) {
				gop_free(t, &b);
				break;
			}
			memset(big, 0x3c, aads[i]);
			op.aad = big;
		}
		op.aad_len = aads[i];
		snprintf(what, sizeof(what), "%u bytes of AAD (%s)", aads[i],
			 s->aad == MC_AAD_ZERO ? "must be 0" : "ignored");
		sandwich(t, ctx, what,
			 s->aad == MC_AAD_ZERO ? ACC_PARAM : ACC_OK, k, sid,
			 &op, &b, 0);
		gop_free(t, &b);
		if (big)
			cc_buf_free(t->q, big);
	}
	for (i = 0; i < sizeof(bad_lens) / sizeof(bad_lens[0]) && !t->fatal;
	     i++) {
		uint32_t len = bad_lens[i];

		if (mc_len_ok(s, len))
			continue;
		if (gop_make(t, &b, k, sid, &op, 0))
			break;
		if (len > GOOD_LEN) {
			/* Larger buffers than the good op has. */
			cc_buf_free(t->q, b.src);
			cc_buf_free(t->q, b.dst);
			b.src = cc_buf_alloc(t->q, len);
			b.dst = cc_buf_alloc(t->q, len);
			if (!b.src || !b.dst) {
				gop_free(t, &b);
				break;
			}
			op.src = b.src;
			op.dst = b.dst;
		}
		op.len = len;
		snprintf(what, sizeof(what), "length %u", len);
		sandwich(t, ctx, what, ACC_PARAM, k, sid, &op, NULL, 0);
		gop_free(t, &b);
	}
	if (s->min_len && !t->fatal && !gop_make(t, &b, k, sid, &op, 0)) {
		op.len = 0;
		sandwich(t, ctx, "length 0 (XTS: 16 bytes at least)", ACC_PARAM,
			 k, sid, &op, NULL, 0);
		gop_free(t, &b);
	}
	if (!s->writes_data && s->tag_def && !t->fatal)
		run_bad_verify(t, s, ctx, sid, k);
	/* One byte past the largest op: the daemon refuses it per op, or
	 * the library before (cc_crypt() does). */
	if (!t->fatal && !gop_make(t, &b, k, sid, &op, 0)) {
		uint32_t len = OP_MAX_LEN + 16;
		uint8_t *big = cc_buf_alloc(t->q, len);

		if (big) {
			op.src = big;
			op.dst = NULL;
			op.len = len;
			sandwich(t, ctx, "16 MiB + 16 bytes", ACC_PARAM_ENQ, k,
				 sid, &op, NULL, 0);
			cc_buf_free(t->q, big);
		} else {
			expect(t, 0, ctx, "arena for a 16 MiB op", -ENOMEM);
		}
		gop_free(t, &b);
	}
}

int main(void)
{
	struct t t;
	struct fx_daemon d;
	if (bad_setup(&t, &d, "test_bad_modes"))
		return FX_EXIT_FAIL;
	char engines[MC_MAX_ENGINES][FX_ENGINE_NAME_MAX];
	/* The cipher-shaped rows, then the MACs and digests. */
	for (unsigned a = 0; a < mc_n_specs + mc_n_mac_specs && !t.fatal; a++) {
		const struct mc_spec *s =
			a < mc_n_specs ? &mc_specs[a]
				       : &mc_mac_specs[a - mc_n_specs];
		unsigned long c0 = t.checked, f0 = t.failed;
		struct mc_key k;
		uint32_t sid;

		int n_eng =
			mc_engines_for(t.conn, s->alg, engines, MC_MAX_ENGINES);
		if (n_eng <= 0) {
			fprintf(stderr, "FAIL %s: no available engine\n",
				s->name);
			t.failed++;
			continue;
		}
		key_for(&k, s, good_key_len(s));
		for (int e = 0; e < n_eng && !t.fatal; e++) {
			run_bad_sessions(&t, s, engines[e]);
			int r = mc_session(t.conn, &k, engines[e], &sid);
			expect(&t, r == 0, s->name, "session with a good key",
			       r);
			if (r)
				continue;
			run_bad_params(&t, s, engines[e], sid, &k);
			cc_session_destroy(t.conn, sid);
		}
		/* The same per-op checks session-less: they go to the
		 * default engine, listed first. */
		if (!t.fatal)
			run_bad_params(&t, s, engines[0], 0, &k);
		printf("%-20s: %lu checks, %lu failed\n", s->name,
		       t.checked - c0, t.failed - f0);
	}
	return bad_finish(&t, &d);
}
