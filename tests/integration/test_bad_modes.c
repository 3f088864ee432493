// SPDX-License-Identifier: MIT
/*
 * What the every-algorithm API must refuse, and how (docs/algorithms.md,
 * cryptoclient.h):
 *
 * - sessions: key lengths outside each algorithm's list (-EINVAL, as
 *   cc_session_create() documents), HMAC keys outside 1..64, XTS keys
 *   with equal halves (-EINVAL), tag lengths the algorithm has not
 *   (some -errno);
 * - per op, on every engine and session-less: IV lengths the algorithm
 *   does not take, AAD where the spec says it must be 0, lengths that are
 *   not a multiple of 16 (CBC, ECB, authenc, CBC-null), XTS under 16
 *   bytes, more than 16 MiB: CC_ERR_BAD_PARAM. Where the spec says
 *   "ignored" (null's IV, CBC-null's and null's AAD), the op must succeed
 *   with the same answer;
 * - scatter-gather lists that overlap, leave the arena, wrap at 32 bits,
 *   have more than 64 segments or do not add up to the length: rejected,
 *   which here means the op completes CC_ERR_BAD_RANGE or
 *   CC_ERR_BAD_PARAM (either, never anything else, never success); the
 *   library may refuse at enqueue only what the header says it refuses
 *   (a pointer outside the arena);
 * - session-less parameters: an unknown algorithm, a bad key length, a
 *   non-zero reserved word, a bad tag length: a per-op error; session and
 *   session-less both set: refused;
 * - aes-lrw: no session (-ENODEV or -EOPNOTSUPP), and the capability
 *   table lists it unavailable, with a reason;
 * - the capability table against the spec's table.
 *
 * Every refused op sits between two good ones in the same queue, which
 * must complete with the right answer: a failure never wedges a queue.
 * Each outcome of the scatter-gather and session-less checks is printed.
 *
 * Exit: 0 all passed, 1 any failure.
 */
#include "fixture.h"
#include "modes_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#define QUEUE_ENTRIES 32
#define ARENA_SIZE (40u << 20) /* holds one op past the 16 MiB limit */
#define OP_MAX_LEN (16u << 20)
#define TIMEOUT_MS 20000
#define GOOD_LEN 64
#define MAX_SGL_ENTRIES 72

/* What a refused (or tolerated) op may come back as. */
enum acc {
	ACC_OK,		     /* must succeed with the right answer */
	ACC_PARAM,	     /* per op CC_ERR_BAD_PARAM */
	ACC_PARAM_ENQ,	     /* that, or refused at enqueue */
	ACC_RANGE_PARAM,     /* per op CC_ERR_BAD_RANGE or _BAD_PARAM */
	ACC_RANGE_PARAM_ENQ, /* that, or refused at enqueue (documented) */
	ACC_OP_ERR,	     /* some per-op error */
	ACC_OP_ERR_ENQ,	     /* that, or refused at enqueue */
};

struct t {
	struct cc_conn *conn;
	struct cc_queue *q;
	uint8_t *arena_base; /* from cc_sgl_set(): arena offset 0 */
	size_t arena_size;
	unsigned long checked, failed;
	int fatal;
};

static void expect(struct t *t, int ok, const char *ctx, const char *what,
		   int got)
{
	t->checked++;
	if (ok)
		return;
	t->failed++;
	fprintf(stderr, "FAIL %s: %s (got %d: %s)\n", ctx, what, got,
		cc_strerror(got));
}

/* ---- A good op, against OpenSSL ---- */

struct gop {
	struct mc_key key;
	uint8_t *src, *dst, *aad, *tag; /* arena */
	struct cc_sessionless *sl;	/* arena, session-less only */
	uint8_t iv[MC_IV_MAX];
	unsigned iv_len;
	uint32_t len, aad_len;
	uint8_t pt[GOOD_LEN], ct[GOOD_LEN], reftag[32];
};

static void gop_free(struct t *t, struct gop *g)
{
	uint8_t **p[] = { &g->src, &g->dst, &g->aad, &g->tag };
	unsigned i;

	for (i = 0; i < 4; i++) {
		if (*p[i])
			cc_buf_free(t->q, *p[i]);
		*p[i] = NULL;
	}
	if (g->sl) {
		OPENSSL_cleanse(g->sl, sizeof(*g->sl));
		cc_buf_free(t->q, g->sl);
		g->sl = NULL;
	}
}

/* A 64-byte encryption with every parameter valid for k on engine (NULL:
 * the default engine); session sid, or session-less when sid is 0. */
static int gop_make(struct t *t, struct gop *g, const struct mc_key *k,
		    uint32_t sid, struct cc_op *op, uint64_t ud)
{
	const struct mc_spec *s = mc_spec_of(k->alg);

	memset(g, 0, sizeof(*g));
	g->key = *k;
	g->len = GOOD_LEN;
	g->iv_len = s->iv_ignored ? 0 : s->iv_len;
	g->aad_len = s->aad == MC_AAD_ANY ? 8 : 0;
	mc_rnd_bytes(g->iv, sizeof(g->iv));
	mc_rnd_bytes(g->pt, sizeof(g->pt));
	g->src = cc_buf_alloc(t->q, GOOD_LEN + MC_GUARD);
	g->dst = cc_buf_alloc(t->q, GOOD_LEN + MC_GUARD);
	g->aad = cc_buf_alloc(t->q, 64);
	g->tag = cc_buf_alloc(t->q, MC_TAG_MAX + MC_GUARD);
	if (!sid)
		g->sl = cc_buf_alloc(t->q, sizeof(*g->sl));
	if (!g->src || !g->dst || !g->aad || !g->tag || (!sid && !g->sl)) {
		gop_free(t, g);
		return -ENOMEM;
	}
	memcpy(g->src, g->pt, GOOD_LEN);
	memset(g->dst, MC_CANARY, GOOD_LEN + MC_GUARD);
	mc_rnd_bytes(g->aad, 64);
	memset(g->tag, MC_CANARY, MC_TAG_MAX + MC_GUARD);
	if (g->sl)
		mc_sessionless_fill(g->sl, k);
	if (mc_ref_encrypt(k, g->iv, g->iv_len, g->aad, g->aad_len, g->pt,
			   GOOD_LEN, g->ct, g->reftag)) {
		gop_free(t, g);
		return -EIO;
	}
	*op = (struct cc_op){
		.user_data = ud,
		.session = sid,
		.sessionless = g->sl,
		.dir = CC_ENCRYPT,
		.src = g->src,
		.dst = g->dst,
		.len = GOOD_LEN,
		.aad = g->aad,
		.aad_len = g->aad_len,
		.tag = g->tag,
		.iv = g->iv,
		.iv_len = g->iv_len,
	};
	return 0;
}

/* Whether a good op's result is right. */
static int gop_right(const struct gop *g, int status)
{
	const struct mc_spec *s = mc_spec_of(g->key.alg);
	unsigned tl = mc_tag_len(&g->key);

	if (status != CC_OK)
		return 0;
	if (s->writes_data && memcmp(g->dst, g->ct, GOOD_LEN))
		return 0;
	return !tl || !memcmp(g->tag, g->reftag, tl);
}

/* ---- Submitting good, bad, good ---- */

static int accepted(enum acc a, int enq, int status)
{
	if (enq < 0)
		return a == ACC_PARAM_ENQ || a == ACC_RANGE_PARAM_ENQ ||
		       a == ACC_OP_ERR_ENQ;
	switch (a) {
	case ACC_OK:
		return status == CC_OK;
	case ACC_PARAM:
	case ACC_PARAM_ENQ:
		return status == CC_ERR_BAD_PARAM;
	case ACC_RANGE_PARAM:
	case ACC_RANGE_PARAM_ENQ:
		return status == CC_ERR_BAD_RANGE || status == CC_ERR_BAD_PARAM;
	case ACC_OP_ERR:
	case ACC_OP_ERR_ENQ:
		return status < 0 && status != CC_ERR_AUTH_FAILED;
	}
	return 0;
}

static const char *acc_text(enum acc a)
{
	static const char *const s[] = {
		"success",
		"CC_ERR_BAD_PARAM",
		"CC_ERR_BAD_PARAM or an enqueue refusal",
		"CC_ERR_BAD_RANGE or CC_ERR_BAD_PARAM",
		"CC_ERR_BAD_RANGE/_BAD_PARAM, or an enqueue refusal",
		"a per-op error",
		"a per-op error or an enqueue refusal",
	};
	return s[a];
}

/*
 * Submit ops one at a time (so that the library's answer to each is
 * known), then collect the completions of those it took, in order.
 * enq[i] < 0: refused at enqueue; else status[i] is the completion's.
 */
static int submit(struct t *t, const struct cc_op *ops, unsigned n, int *enq,
		  int *status)
{
	struct cc_completion comp;
	unsigned i, taken = 0, got = 0;
	int r;

	for (i = 0; i < n; i++) {
		enq[i] = cc_enqueue_burst(t->q, &ops[i], 1);
		if (enq[i] == 0)
			return -EAGAIN; /* idle ring refused one op: wrong */
		taken += enq[i] > 0;
	}
	for (i = 0; i < n && got < taken; i++) {
		if (enq[i] < 0)
			continue;
		for (;;) {
			r = cc_dequeue_burst(t->q, &comp, 1);
			if (r < 0)
				return r;
			if (r == 1)
				break;
			r = cc_wait(t->q, TIMEOUT_MS);
			if (r < 0)
				return r;
			if (r == 0)
				return -ETIMEDOUT;
		}
		if (comp.user_data != ops[i].user_data)
			return -EPROTO;
		status[i] = comp.status;
		got++;
	}
	return 0;
}

/*
 * bad between two good ops of key k (session sid, or session-less); the
 * verdict printed when verbose or wrong. good_right: a check of bad's own
 * result when it must succeed (NULL: none needed).
 */
static void sandwich(struct t *t, const char *ctx, const char *what,
		     enum acc acc, const struct mc_key *k, uint32_t sid,
		     struct cc_op *bad, const struct gop *bad_gop, int verbose)
{
	struct gop g[2];
	struct cc_op ops[3];
	int enq[3] = { 0 }, st[3] = { 0 }, r, ok;
	char buf[256];

	r = gop_make(t, &g[0], k, sid, &ops[0], 0x600d0);
	if (!r)
		r = gop_make(t, &g[1], k, sid, &ops[2], 0x600d2);
	if (r) {
		expect(t, 0, ctx, "building good ops", r);
		t->fatal = 1;
		return;
	}
	ops[1] = *bad;
	ops[1].user_data = 0xbad1;
	r = submit(t, ops, 3, enq, st);
	if (r) {
		expect(t, 0, ctx, "good/bad/good completes in order", r);
		t->fatal = 1;
		goto out;
	}
	ok = accepted(acc, enq[1], st[1]);
	if (ok && acc == ACC_OK && bad_gop)
		ok = gop_right(bad_gop, st[1]);
	if (enq[1] < 0)
		snprintf(buf, sizeof(buf), "%s: refused at enqueue: %d (%s)",
			 what, enq[1], cc_strerror(enq[1]));
	else
		snprintf(buf, sizeof(buf), "%s: completed %d (%s)", what, st[1],
			 cc_strerror(st[1]));
	if (verbose || !ok)
		printf("  %s %s%s\n", ctx, buf, ok ? "" : "  <-- WRONG");
	snprintf(buf, sizeof(buf), "%s: want %s%s", what, acc_text(acc),
		 acc == ACC_OK && bad_gop ? " with the right answer" : "");
	expect(t, ok, ctx, buf, enq[1] < 0 ? enq[1] : st[1]);
	expect(t, enq[0] == 1 && gop_right(&g[0], st[0]), ctx,
	       "good op before a bad one", enq[0] < 0 ? enq[0] : st[0]);
	expect(t, enq[2] == 1 && gop_right(&g[1], st[2]), ctx,
	       "good op after a bad one", enq[2] < 0 ? enq[2] : st[2]);
out:
	gop_free(t, &g[0]);
	gop_free(t, &g[1]);
}

/* ---- Keys ---- */

static void key_for(struct mc_key *k, const struct mc_spec *s, unsigned kl)
{
	memset(k, 0, sizeof(*k));
	k->alg = s->alg;
	k->key_len = kl;
	mc_rnd_bytes(k->key, sizeof(k->key));
	if (s->xts_key)
		k->key[kl / 2] = (uint8_t)~k->key[0];
	if (s->auth_key) {
		k->auth_key_len = 20;
		mc_rnd_bytes(k->auth_key, 20);
	}
}

/* ---- Sessions ---- */

static void run_bad_sessions(struct t *t, const struct mc_spec *s,
			     const char *eng)
{
	static const unsigned klens[] = { 0,  1,  8,  15, 16, 17, 23, 24, 25,
					  31, 32, 33, 48, 63, 64, 65, 80 };
	static const unsigned tlens[] = { 1,  2,  3,  4,  5,  6,  7,  8,  9, 10,
					  11, 12, 13, 14, 15, 16, 17, 20, 32 };
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

			memcpy(key + kl / 2, key, kl / 2);
			r = cc_session_create(t->conn, &sp, &sid);
			snprintf(what, sizeof(what),
				 "%u-byte XTS key with equal halves: want "
				 "-EINVAL",
				 kl);
			expect(t, r == -EINVAL, ctx, what, r);
			if (!r)
				cc_session_destroy(t->conn, sid);
			mc_rnd_bytes(key, sizeof(key));
		}
	}
	/* Tag lengths the algorithm has not: some -errno. An algorithm
	 * without a tag ("none") has no tag length to ask for. */
	key_for(&k, s, s->n_key_lens ? s->key_lens[0] : 0);
	for (i = 0; i < sizeof(tlens) / sizeof(tlens[0]); i++) {
		if (tlens[i] < 32 && (s->tag_mask & (1u << tlens[i])))
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

/* ---- Per-op parameters ---- */

static void run_bad_params(struct t *t, const struct mc_spec *s,
			   const char *eng, uint32_t sid,
			   const struct mc_key *k)
{
	static const unsigned ivs[] = { 0, 1, 8, 11, 12, 13, 15, 16 };
	static const uint32_t bad_lens[] = { 1, 8, 15, 17, 31, 65, 4097 };
	char ctx[96], what[96];
	struct gop b;
	struct cc_op op;
	unsigned i;

	snprintf(ctx, sizeof(ctx), "%s [%s]", s->name,
		 sid ? eng : "session-less");
	for (i = 0; i < sizeof(ivs) / sizeof(ivs[0]) && !t->fatal; i++) {
		int ok = mc_iv_ok(s, sid ? eng : NULL, ivs[i]);

		/* Lengths the spec allows are tested elsewhere, except
		 * where they are "ignored": those must work unchanged. */
		if (ok && !s->iv_ignored)
			continue;
		if (gop_make(t, &b, k, sid, &op, 0))
			break;
		op.iv_len = ivs[i];
		snprintf(what, sizeof(what), "%u-byte IV", ivs[i]);
		sandwich(t, ctx, what, ok ? ACC_OK : ACC_PARAM, k, sid, &op, &b,
			 0);
		gop_free(t, &b);
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

/* ---- Scatter-gather lists ---- */

/* A list in the arena with explicit (offset, length) entries. */
static struct cc_sgl_entry *sgl_new(struct t *t, unsigned n)
{
	return cc_buf_alloc(t->q, (n ? n : 1) * sizeof(struct cc_sgl_entry));
}

static uint32_t off_of(struct t *t, const void *p)
{
	return (uint32_t)((const uint8_t *)p - t->arena_base);
}

static void run_bad_sgl(struct t *t, const struct mc_spec *s,
			const struct mc_key *k, uint32_t sid)
{
	char ctx[96];
	struct gop b;
	struct cc_op op;
	struct cc_sgl_entry *l1 = sgl_new(t, MAX_SGL_ENTRIES);
	struct cc_sgl_entry *l2 = sgl_new(t, MAX_SGL_ENTRIES);
	uint8_t *buf = cc_buf_alloc(t->q, 4096),
		*buf2 = cc_buf_alloc(t->q, 4096);
	uint32_t a, a2, end = (uint32_t)t->arena_size;
	unsigned i;

	snprintf(ctx, sizeof(ctx), "%s sgl [%s]", s->name,
		 sid ? "session" : "session-less");
	if (!l1 || !l2 || !buf || !buf2) {
		expect(t, 0, ctx, "arena for lists", -ENOMEM);
		t->fatal = 1;
		goto out;
	}
	memset(buf, 0x11, 4096);
	memset(buf2, 0x22, 4096);
	a = off_of(t, buf);
	a2 = off_of(t, buf2);

#define BAD_SGL(what_, acc_, ...)                                              \
	do {                                                                   \
		if (t->fatal || gop_make(t, &b, k, sid, &op, 0))               \
			break;                                                 \
		op.src = NULL;                                                 \
		op.dst = NULL;                                                 \
		op.len = 64;                                                   \
		op.src_sgl = l1;                                               \
		__VA_ARGS__;                                                   \
		sandwich(t, ctx, what_, acc_, k, sid, &op, NULL, 1);           \
		gop_free(t, &b);                                               \
	} while (0)

	/* Two source segments sharing bytes. */
	BAD_SGL("src segments overlap", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ a, 32 };
		l1[1] = (struct cc_sgl_entry){ a + 16, 32 };
		op.src_nseg = 2;
	});
	BAD_SGL("src segment listed twice", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ a, 32 };
		l1[1] = (struct cc_sgl_entry){ a, 32 };
		op.src_nseg = 2;
	});
	/* A destination that shares some bytes with the source. */
	BAD_SGL("dst list overlaps src partially", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ a, 32 };
		l1[1] = (struct cc_sgl_entry){ a + 64, 32 };
		l2[0] = (struct cc_sgl_entry){ a2, 32 };
		l2[1] = (struct cc_sgl_entry){ a + 80, 32 };
		op.src_nseg = 2;
		op.dst_sgl = l2;
		op.dst_nseg = 2;
	});
	BAD_SGL("dst list overlaps itself", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ a, 64 };
		l2[0] = (struct cc_sgl_entry){ a2, 48 };
		l2[1] = (struct cc_sgl_entry){ a2 + 32, 16 };
		op.src_nseg = 1;
		op.dst_sgl = l2;
		op.dst_nseg = 2;
	});
	BAD_SGL("dst list = src list entries but another array (overlap)",
		ACC_RANGE_PARAM, {
			l1[0] = (struct cc_sgl_entry){ a, 32 };
			l1[1] = (struct cc_sgl_entry){ a + 64, 32 };
			l2[0] = l1[0];
			l2[1] = (struct cc_sgl_entry){ a2, 32 };
			op.src_nseg = 2;
			op.dst_sgl = l2;
			op.dst_nseg = 2;
		});
	/* Flat: the library sees both pointers and may refuse it. */
	BAD_SGL("flat dst overlapping flat src partially", ACC_RANGE_PARAM_ENQ,
		{
			op.src_sgl = NULL;
			op.src = buf;
			op.dst = buf + 16;
		});
	/* Leaving the arena. */
	BAD_SGL("segment runs past the arena end", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ a, 48 };
		l1[1] = (struct cc_sgl_entry){ end - 8, 16 };
		op.src_nseg = 2;
	});
	BAD_SGL("segment starts past the arena end", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ end + 4096, 64 };
		op.src_nseg = 1;
	});
	BAD_SGL("dst segment past the arena end", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ a, 64 };
		l2[0] = (struct cc_sgl_entry){ end - 32, 64 };
		op.src_nseg = 1;
		op.dst_sgl = l2;
		op.dst_nseg = 1;
	});
	BAD_SGL("offset + length wraps at 32 bits", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ 0xfffffff0u, 64 };
		op.src_nseg = 1;
	});
	BAD_SGL("segment lengths wrap at 32 bits to the op length",
		ACC_RANGE_PARAM, {
			l1[0] = (struct cc_sgl_entry){ a, 0xffffffe0u };
			l1[1] = (struct cc_sgl_entry){ a2, 0x60 };
			op.src_nseg = 2;
		});
	/* The list itself past the end: its first entry is the arena's
	 * last 8 bytes, the second lies outside. The header has the
	 * library refuse pointers outside the arena at enqueue. */
	BAD_SGL("the list itself runs past the arena end", ACC_RANGE_PARAM_ENQ,
		{
			struct cc_sgl_entry *last =
				(struct cc_sgl_entry *)(t->arena_base + end -
							sizeof(*last));

			*last = (struct cc_sgl_entry){ a, 32 };
			op.src_sgl = last;
			op.src_nseg = 2;
		});
	/* Counts and sums. */
	BAD_SGL("65 segments", ACC_RANGE_PARAM, {
		for (i = 0; i < 65; i++)
			l1[i] = (struct cc_sgl_entry){ a + 2 * i, 1 };
		op.len = 65;
		op.src_nseg = 65;
	});
	BAD_SGL("segments sum to less than the length", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ a, 32 };
		l1[1] = (struct cc_sgl_entry){ a + 64, 16 };
		op.src_nseg = 2;
	});
	BAD_SGL("segments sum to more than the length", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ a, 32 };
		l1[1] = (struct cc_sgl_entry){ a + 64, 48 };
		op.src_nseg = 2;
	});
	BAD_SGL("dst segments sum to less than the length", ACC_RANGE_PARAM, {
		l1[0] = (struct cc_sgl_entry){ a, 64 };
		l2[0] = (struct cc_sgl_entry){ a2, 48 };
		op.src_nseg = 1;
		op.dst_sgl = l2;
		op.dst_nseg = 1;
	});
	BAD_SGL("src list of 0 segments", ACC_RANGE_PARAM_ENQ,
		{ op.src_nseg = 0; });

	/* 64 segments is the limit, and must work. */
	if (!t->fatal && !gop_make(t, &b, k, sid, &op, 0)) {
		uint32_t n64 = s->block == 16 ? 64 * 16 : 64;
		uint8_t *src = cc_buf_alloc(t->q, n64 * 2);
		uint8_t *ref = malloc(n64), *pt = malloc(n64);
		uint8_t tagref[32];

		if (src && ref && pt) {
			uint32_t seg = n64 / 64;

			mc_rnd_bytes(pt, n64);
			for (i = 0; i < 64; i++) {
				memcpy(src + 2 * seg * i, pt + seg * i, seg);
				l1[i] = (struct cc_sgl_entry){
					off_of(t, src) + 2 * seg * i, seg
				};
			}
			op.src = NULL;
			op.dst = NULL;
			op.src_sgl = l1;
			op.src_nseg = 64;
			op.len = n64;
			sandwich(t, ctx, "64 segments (the limit)", ACC_OK, k,
				 sid, &op, NULL, 1);
			mc_ref_encrypt(k, b.iv, b.iv_len, b.aad, b.aad_len, pt,
				       n64, ref, tagref);
			for (i = 0; i < 64 && s->writes_data; i++)
				if (memcmp(src + 2 * seg * i, ref + seg * i,
					   seg))
					break;
			expect(t, !s->writes_data || i == 64, ctx,
			       "64 segments: output differs from OpenSSL", 0);
		}
		if (src)
			cc_buf_free(t->q, src);
		free(ref);
		free(pt);
		gop_free(t, &b);
	}
#undef BAD_SGL
out:
	if (l1)
		cc_buf_free(t->q, l1);
	if (l2)
		cc_buf_free(t->q, l2);
	if (buf)
		cc_buf_free(t->q, buf);
	if (buf2)
		cc_buf_free(t->q, buf2);
}

/* ---- Session-less parameters ---- */

static void run_bad_sessionless(struct t *t)
{
	const char *ctx = "session-less";
	struct mc_key k;
	struct gop b;
	struct cc_op op;
	unsigned i;

	key_for(&k, mc_spec_of(CC_ALG_AES_CBC), 16);

#define BAD_SL(what_, acc_, ...)                                               \
	do {                                                                   \
		if (t->fatal || gop_make(t, &b, &k, 0, &op, 0))                \
			break;                                                 \
		__VA_ARGS__;                                                   \
		sandwich(t, ctx, what_, acc_, &k, 0, &op, NULL, 1);            \
		gop_free(t, &b);                                               \
	} while (0)

	BAD_SL("algorithm 0", ACC_OP_ERR, b.sl->alg = 0);
	BAD_SL("algorithm 12 (past the last)", ACC_OP_ERR, b.sl->alg = 12);
	BAD_SL("algorithm 200", ACC_OP_ERR, b.sl->alg = 200);
	BAD_SL("aes-lrw (not served)", ACC_OP_ERR, b.sl->alg = CC_ALG_AES_LRW);
	BAD_SL("aes-cbc with a 17-byte key", ACC_OP_ERR, b.sl->key_len = 17);
	BAD_SL("aes-cbc with a 0-byte key", ACC_OP_ERR, b.sl->key_len = 0);
	BAD_SL("aes-cbc with a 65-byte key (past key[])", ACC_OP_ERR,
	       b.sl->key_len = 65);
	BAD_SL("aes-cbc with a 255-byte key", ACC_OP_ERR, b.sl->key_len = 255);
	BAD_SL("reserved = 1", ACC_OP_ERR, b.sl->reserved = 1);
	BAD_SL("reserved = 0x80000000", ACC_OP_ERR,
	       b.sl->reserved = 0x80000000u);
	BAD_SL("aes-cbc with tag_len 16", ACC_OP_ERR, b.sl->tag_len = 16);
	BAD_SL("aes-xts with a 48-byte key", ACC_OP_ERR, {
		b.sl->alg = CC_ALG_AES_XTS;
		b.sl->key_len = 48;
	});
	BAD_SL("aes-xts with equal key halves", ACC_OP_ERR, {
		b.sl->alg = CC_ALG_AES_XTS;
		b.sl->key_len = 32;
		memcpy(b.sl->key + 16, b.sl->key, 16);
	});
	BAD_SL("aes-gcm with tag_len 5", ACC_OP_ERR, {
		b.sl->alg = CC_ALG_AES_GCM;
		b.sl->tag_len = 5;
		op.iv_len = 12;
	});
	BAD_SL("aes-gcm with tag_len 17", ACC_OP_ERR, {
		b.sl->alg = CC_ALG_AES_GCM;
		b.sl->tag_len = 17;
		op.iv_len = 12;
	});
	for (i = 0; i < 3; i++) {
		static const uint8_t alens[] = { 0, 65, 255 };
		char what[64];

		snprintf(what, sizeof(what),
			 "aes-cbc-hmac-sha1, %u-byte HMAC key", alens[i]);
		BAD_SL(what, ACC_OP_ERR, {
			b.sl->alg = CC_ALG_AES_CBC_HMAC_SHA1;
			b.sl->auth_key_len = alens[i];
		});
	}
	BAD_SL("aes-cbc-hmac-sha256 with tag_len 12", ACC_OP_ERR, {
		b.sl->alg = CC_ALG_AES_CBC_HMAC_SHA256;
		b.sl->auth_key_len = 20;
		b.sl->tag_len = 12;
	});
	BAD_SL("a made-up session id as well", ACC_OP_ERR_ENQ,
	       op.session = 0x7ffffff0);
	if (!t->fatal && !gop_make(t, &b, &k, 0, &op, 0)) {
		uint32_t sid;
		int r = mc_session(t->conn, &k, NULL, &sid);

		expect(t, r == 0, ctx, "session", r);
		if (r == 0) {
			op.session = sid;
			sandwich(t, ctx, "a real session id as well",
				 ACC_OP_ERR_ENQ, &k, 0, &op, NULL, 1);
			cc_session_destroy(t->conn, sid);
		}
		gop_free(t, &b);
	}
	BAD_SL("sessionless pointer outside the arena", ACC_OP_ERR_ENQ, {
		static struct cc_sessionless outside;

		mc_sessionless_fill(&outside, &k);
		op.sessionless = &outside;
	});
#undef BAD_SL
}

/* ---- LRW and the capability table ---- */

static void run_lrw(struct t *t, char engines[][FX_ENGINE_NAME_MAX], unsigned n)
{
	struct cc_alg_caps *caps;
	unsigned nc = 0, i, listed = 0;
	uint8_t key[48] = { 1 };
	char what[96];
	uint32_t sid;
	int r;

	/* Every engine there is, the spec's "kernel", and the default. */
	for (i = 0; i <= n + 1; i++) {
		struct cc_session_params sp = {
			.alg = CC_ALG_AES_LRW,
			.key = key,
			.key_len = 48,
			.engine = i < n	   ? engines[i]
				  : i == n ? "kernel"
					   : NULL,
		};

		r = cc_session_create(t->conn, &sp, &sid);
		printf("  aes-lrw session on %s: %d (%s)\n",
		       sp.engine ? sp.engine : "the default engine", r,
		       cc_strerror(r));
		snprintf(what, sizeof(what),
			 "aes-lrw session on %s: want -ENODEV or -EOPNOTSUPP",
			 sp.engine ? sp.engine : "the default engine");
		/* An engine that is not built in may be unknown by name. */
		expect(t,
		       r == -ENODEV || r == -EOPNOTSUPP ||
			       (i == n && r == -ENOENT),
		       "aes-lrw", what, r);
		if (!r)
			cc_session_destroy(t->conn, sid);
	}
	r = cc_capabilities_get(t->conn, &caps, &nc);
	expect(t, r == 0, "capabilities", "cc_capabilities_get", r);
	if (r)
		return;
	for (i = 0; i < nc; i++) {
		if (caps[i].alg != CC_ALG_AES_LRW)
			continue;
		listed++;
		printf("  aes-lrw on %s: available %d, reason \"%s\"\n",
		       caps[i].engine, caps[i].available, caps[i].reason);
		expect(t, !caps[i].available, "aes-lrw", "listed as available",
		       0);
		expect(t, caps[i].reason[0] != '\0', "aes-lrw",
		       "unavailable without a reason", 0);
	}
	expect(t, listed > 0, "aes-lrw", "not listed in the capabilities", 0);
	cc_capabilities_free(caps);
}

static int in_ranges(const struct cc_range *r, unsigned n, uint32_t v)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (v < r[i].min || v > r[i].max)
			continue;
		if (!r[i].increment ? v == r[i].min
				    : (v - r[i].min) % r[i].increment == 0)
			return 1;
	}
	return 0;
}

/* The table of docs/algorithms.md against cc_capabilities_get(). */
static void run_caps(struct t *t)
{
	struct cc_alg_caps *caps;
	unsigned nc = 0, a, i, e, v;
	char ctx[96], what[128];
	int r;

	r = cc_capabilities_get(t->conn, &caps, &nc);
	expect(t, r == 0, "capabilities", "cc_capabilities_get", r);
	if (r)
		return;
	for (a = 0; a < mc_n_specs; a++) {
		const struct mc_spec *s = &mc_specs[a];
		const char *name = cc_alg_name(s->alg);

		snprintf(ctx, sizeof(ctx), "capabilities %s", s->name);
		expect(t, name && !strcmp(name, s->name), ctx,
		       "cc_alg_name() differs from the spec's name", 0);
		expect(t, cc_alg_tag_len(s->alg) == s->tag_def, ctx,
		       "cc_alg_tag_len() differs from the spec's default",
		       (int)cc_alg_tag_len(s->alg));
		/* Every engine the spec names is listed and available, the
		 * first one as the default; no other engine claims it. */
		for (e = 0; e < 3 && s->engines[e]; e++) {
			int found = 0;

			for (i = 0; i < nc; i++)
				if (caps[i].alg == s->alg &&
				    caps[i].available &&
				    !strcmp(caps[i].engine, s->engines[e])) {
					found = 1;
					snprintf(what, sizeof(what),
						 "%s: default engine flag",
						 s->engines[e]);
					expect(t,
					       !!caps[i].default_engine ==
						       (e == 0),
					       ctx, what,
					       caps[i].default_engine);
				}
			snprintf(what, sizeof(what),
				 "engine %s not listed as available",
				 s->engines[e]);
			expect(t, found, ctx, what, 0);
		}
		for (i = 0; i < nc; i++) {
			const struct cc_alg_caps *c = &caps[i];
			int named = 0;

			if (c->alg != s->alg || !c->available)
				continue;
			for (e = 0; e < 3 && s->engines[e]; e++)
				named |= !strcmp(c->engine, s->engines[e]);
			snprintf(what, sizeof(what),
				 "engine %s available but not in the spec",
				 c->engine);
			expect(t, named, ctx, what, 0);
			snprintf(what, sizeof(what),
				 "%s: scatter-gather and session-less flags",
				 c->engine);
			expect(t, c->sgl && c->sessionless, ctx, what, 0);
			for (v = 0; v < s->n_key_lens; v++) {
				snprintf(what, sizeof(what),
					 "%s: key size %u not listed",
					 c->engine, s->key_lens[v]);
				expect(t,
				       in_ranges(c->key_sizes, c->n_key_sizes,
						 s->key_lens[v]),
				       ctx, what, 0);
			}
			for (v = 0; v <= 16; v++) {
				if (s->iv_ignored || !mc_iv_ok(s, c->engine, v))
					continue;
				snprintf(what, sizeof(what),
					 "%s: IV size %u not listed", c->engine,
					 v);
				expect(t,
				       in_ranges(c->iv_sizes, c->n_iv_sizes, v),
				       ctx, what, 0);
			}
			for (v = 1; v <= 16; v++) {
				if (!(s->tag_mask & (1u << v)))
					continue;
				snprintf(what, sizeof(what),
					 "%s: tag size %u not listed",
					 c->engine, v);
				expect(t,
				       in_ranges(c->tag_sizes, c->n_tag_sizes,
						 v),
				       ctx, what, 0);
			}
			if (s->aad != MC_AAD_IGNORED) {
				snprintf(what, sizeof(what),
					 "%s: AAD sizes %u..%u, spec %s",
					 c->engine, c->aad_sizes.min,
					 c->aad_sizes.max,
					 s->aad == MC_AAD_ANY ? "0..65535"
							      : "0");
				expect(t,
				       c->aad_sizes.min == 0 &&
					       c->aad_sizes.max ==
						       (s->aad == MC_AAD_ANY
								? 65535u
								: 0u),
				       ctx, what, 0);
			}
			snprintf(what, sizeof(what), "%s: min_len %u, spec %u",
				 c->engine, c->min_len, s->min_len);
			expect(t, c->min_len == s->min_len, ctx, what, 0);
			/* The authenc rows name no upper bound. */
			if (s->auth_key || s->alg == CC_ALG_AES_CBC_NULL)
				continue;
			snprintf(what, sizeof(what),
				 "%s: max_len %u below the spec's 16 MiB",
				 c->engine, c->max_len);
			expect(t, c->max_len >= OP_MAX_LEN, ctx, what, 0);
		}
	}
	cc_capabilities_free(caps);
}

/* ---- Main ---- */

int main(void)
{
	struct fx_daemon_params dp = { .workers = 2 };
	struct cc_queue_params qp = {
		.sq_entries = QUEUE_ENTRIES,
		.arena_size = ARENA_SIZE,
	};
	char engines[MC_MAX_ENGINES][FX_ENGINE_NAME_MAX];
	static char all_engines[MC_MAX_ENGINES * 2][FX_ENGINE_NAME_MAX];
	unsigned n_all = 0, a, j;
	struct cc_sgl_entry *probe;
	struct t t = { 0 };
	struct fx_daemon d;
	uint8_t *any;
	int r, n_eng, e, fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mc_srand(0x6261646d6f646573ull);
	if (fx_setup(&d, &dp, "test_bad_modes", &qp, &t.conn, &t.q))
		return FX_EXIT_FAIL;
	/* Where the arena starts: cc_sgl_set() turns a pointer into its
	 * offset, so buffer - offset is offset 0. */
	t.arena_size = cc_arena_size(t.q);
	any = cc_buf_alloc(t.q, 64);
	probe = cc_buf_alloc(t.q, sizeof(*probe));
	if (!any || !probe || cc_sgl_set(t.q, probe, 0, any, 64)) {
		fprintf(stderr, "FAIL: cc_sgl_set on an arena buffer\n");
		fails++;
		goto out;
	}
	t.arena_base = any - probe->off;
	cc_buf_free(t.q, any);
	cc_buf_free(t.q, probe);

	for (a = 0; a < mc_n_specs && !t.fatal; a++) {
		const struct mc_spec *s = &mc_specs[a];
		unsigned long c0 = t.checked, f0 = t.failed;
		struct mc_key k;
		uint32_t sid;

		n_eng = mc_engines_for(t.conn, s->alg, engines, MC_MAX_ENGINES);
		if (n_eng <= 0) {
			fprintf(stderr, "FAIL %s: no available engine\n",
				s->name);
			fails++;
			continue;
		}
		key_for(&k, s, s->n_key_lens ? s->key_lens[0] : 0);
		for (e = 0; e < n_eng && !t.fatal; e++) {
			for (j = 0; j < n_all; j++)
				if (!strcmp(all_engines[j], engines[e]))
					break;
			if (j == n_all && n_all < MC_MAX_ENGINES * 2)
				memcpy(all_engines[n_all++], engines[e],
				       FX_ENGINE_NAME_MAX);
			run_bad_sessions(&t, s, engines[e]);
			r = mc_session(t.conn, &k, engines[e], &sid);
			expect(&t, r == 0, s->name, "session with a good key",
			       r);
			if (r)
				continue;
			run_bad_params(&t, s, engines[e], sid, &k);
			cc_session_destroy(t.conn, sid);
		}
		/* The same per-op checks session-less (default engine). */
		if (!t.fatal)
			run_bad_params(&t, s, NULL, 0, &k);
		printf("%-20s: %lu checks, %lu failed\n", s->name,
		       t.checked - c0, t.failed - f0);
	}

	/* Lists, on a stream cipher and a block cipher, session and
	 * session-less. */
	for (a = 0; a < 2 && !t.fatal; a++) {
		const struct mc_spec *s =
			mc_spec_of(a ? CC_ALG_AES_CBC : CC_ALG_AES_CTR);
		struct mc_key k;
		uint32_t sid;

		key_for(&k, s, 16);
		r = mc_session(t.conn, &k, NULL, &sid);
		expect(&t, r == 0, s->name, "session", r);
		if (r)
			continue;
		run_bad_sgl(&t, s, &k, sid);
		if (!t.fatal)
			run_bad_sgl(&t, s, &k, 0);
		cc_session_destroy(t.conn, sid);
	}
	if (!t.fatal)
		run_bad_sessionless(&t);
	if (!t.fatal)
		run_lrw(&t, all_engines, n_all);
	if (!t.fatal)
		run_caps(&t);

out:
	cc_queue_close(t.q);
	cc_disconnect(t.conn);
	r = fx_daemon_stop(&d);
	if (r) {
		fprintf(stderr, "FAIL: daemon stop: %s\n", cc_strerror(r));
		fails++;
	}
	if (t.failed || !t.checked || t.fatal)
		fails++;
	printf("TOTAL: %lu checks, %lu failed\n%s\n", t.checked, t.failed,
	       fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
