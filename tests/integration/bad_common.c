// SPDX-License-Identifier: MIT
/* The refusal tests' shared parts (bad_common.h). */
#include "bad_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

void expect(struct t *t, int ok, const char *ctx, const char *what, int got)
{
	t->checked++;
	if (ok)
		return;
	t->failed++;
	fprintf(stderr, "FAIL %s: %s (got %d: %s)\n", ctx, what, got,
		cc_strerror(got));
}

/* ---- A good op, against OpenSSL ---- */

void gop_free(struct t *t, struct gop *g)
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
int gop_make(struct t *t, struct gop *g, const struct mc_key *k, uint32_t sid,
	     struct cc_op *op, uint64_t ud)
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
int gop_right(const struct gop *g, int status)
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

int accepted(enum acc a, int enq, int status)
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
	case ACC_AUTH:
		return status == CC_ERR_AUTH_FAILED;
	}
	return 0;
}

const char *acc_text(enum acc a)
{
	static const char *const s[] = {
		"success",
		"CC_ERR_BAD_PARAM",
		"CC_ERR_BAD_PARAM or an enqueue refusal",
		"CC_ERR_BAD_RANGE or CC_ERR_BAD_PARAM",
		"CC_ERR_BAD_RANGE/_BAD_PARAM, or an enqueue refusal",
		"a per-op error",
		"a per-op error or an enqueue refusal",
		"CC_ERR_AUTH_FAILED",
	};
	return s[a];
}

/*
 * Submit ops one at a time (so that the library's answer to each is
 * known), then collect the completions of those it took, in order.
 * enq[i] < 0: refused at enqueue; else status[i] is the completion's.
 */
int submit(struct t *t, const struct cc_op *ops, unsigned n, int *enq,
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
void sandwich(struct t *t, const char *ctx, const char *what, enum acc acc,
	      const struct mc_key *k, uint32_t sid, struct cc_op *bad,
	      const struct gop *bad_gop, int verbose)
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

void key_for(struct mc_key *k, const struct mc_spec *s, unsigned kl)
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

int bad_setup(struct t *t, struct fx_daemon *d, const char *name)
{
	struct fx_daemon_params dp = { .workers = 2 };
	struct cc_queue_params qp = {
		.sq_entries = QUEUE_ENTRIES,
		.arena_size = ARENA_SIZE,
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	mc_srand(0x6261646d6f646573ull);
	memset(t, 0, sizeof(*t));
	if (fx_setup(d, &dp, name, &qp, &t->conn, &t->q))
		return -1;
	/* Where the arena starts: cc_sgl_set() turns a pointer into its
	 * offset, so buffer - offset is offset 0. */
	t->arena_size = cc_arena_size(t->q);
	uint8_t *any = cc_buf_alloc(t->q, 64);
	struct cc_sgl_entry *probe = cc_buf_alloc(t->q, sizeof(*probe));
	if (!any || !probe || cc_sgl_set(t->q, probe, 0, any, 64)) {
		fprintf(stderr, "FAIL: cc_sgl_set on an arena buffer\n");
		t->fatal = 1;
		return 0;
	}
	t->arena_base = any - probe->off;
	cc_buf_free(t->q, any);
	cc_buf_free(t->q, probe);
	return 0;
}

int bad_finish(struct t *t, struct fx_daemon *d)
{
	int fails = fx_teardown(d, t->conn, t->q) ? 1 : 0;

	if (t->failed || !t->checked || t->fatal)
		fails++;
	printf("TOTAL: %lu checks, %lu failed\n%s\n", t->checked, t->failed,
	       fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
