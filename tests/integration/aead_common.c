// SPDX-License-Identifier: MIT
/*
 * Engines and the case runner of aead_common.h: what a capability row
 * takes, and one case through cc_crypt() and through a burst of flat,
 * scatter-gather, in-place, out-of-place and session-less ops.
 */
#include "aead_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SHOW_MAX 8
#define BURST_MS 30000

const char *av_refused(const struct cc_alg_caps *cap, const struct av *v)
{
	if (!fx_range_has(cap->key_sizes, cap->n_key_sizes, v->key_len))
		return "key";
	if (v->tag_len &&
	    !fx_range_has(cap->tag_sizes, cap->n_tag_sizes, v->tag_len))
		return "tag";
	if (!fx_range_has(cap->iv_sizes, cap->n_iv_sizes, v->iv_len))
		return "iv";
	if (!fx_range_has(&cap->aad_sizes, 1, v->aad_len))
		return "aad";
	if (v->len < cap->min_len || v->len > cap->max_len)
		return "length";
	/* CCM's length field: 15 - nonce bytes */
	if (v->alg == CC_ALG_AES_CCM && v->iv_len > 11 &&
	    (v->len >> (8 * (15 - v->iv_len))))
		return "length";
	return NULL;
}

int av_caps(struct cc_conn *conn, enum cc_alg alg, struct cc_alg_caps **caps,
	    struct cc_alg_caps **rows, unsigned max,
	    const struct cc_alg_caps **def)
{
	unsigned n = 0, i, pass, k = 0;
	int r = cc_capabilities_get(conn, caps, &n);

	if (r)
		return r;
	*def = NULL;
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n && k < max; i++) {
			struct cc_alg_caps *c = &(*caps)[i];

			if (c->alg != alg || !c->available ||
			    !!c->default_engine != (pass == 0) ||
			    !fx_engine_wanted(c->engine))
				continue;
			rows[k++] = c;
		}
	for (i = 0; i < n; i++)
		if ((*caps)[i].alg == alg && (*caps)[i].available &&
		    (*caps)[i].default_engine && (*caps)[i].sessionless)
			*def = &(*caps)[i];
	return (int)k;
}

static void av_fail(struct av_run *r, const struct av *v, const char *path,
		    const char *why, int status)
{
	r->failed++;
	if (r->shown++ >= SHOW_MAX)
		return;
	fprintf(stderr,
		"FAIL %s [%s] %s:%u (key %u, nonce %u, tag %u, aad %u, len %u%s)"
		": %s: %s (status %d: %s)\n",
		cc_alg_name(v->alg), r->cap->engine, v->file, v->line,
		v->key_len, v->iv_len, v->tag_len, v->aad_len, v->len,
		v->fail ? ", must fail" : "", path, why, status,
		cc_strerror(status));
}

static int av_session(struct av_run *r, const struct av *v, uint32_t *sid)
{
	struct cc_session_params sp = {
		.alg = v->alg,
		.key = v->key,
		.key_len = v->key_len,
		.tag_len = v->tag_len,
		.engine = r->cap->engine,
	};
	return cc_session_create(r->conn, &sp, sid);
}

/* A case the engine's row refuses: refused with the defined error. */
static void av_run_refused(struct av_run *r, const struct av *v,
			   const char *what)
{
	uint8_t *buf = malloc(v->len + 1), tag[16];
	uint32_t sid;
	int st = av_session(r, v, &sid);

	r->checked++;
	r->na++;
	if (!strcmp(what, "key") || !strcmp(what, "tag")) {
		if (st != -EINVAL)
			av_fail(r, v, "session", "not refused with -EINVAL",
				st);
		if (!st)
			cc_session_destroy(r->conn, sid);
		free(buf);
		return;
	}
	if (st) {
		av_fail(r, v, "session", "cc_session_create failed", st);
		free(buf);
		return;
	}
	memcpy(tag, v->tag, v->tag_len);
	st = buf ? fx_crypt(r->conn, sid, CC_DECRYPT, v->iv, v->iv_len, v->aad,
			    v->aad_len, v->ct, buf, v->len,
			    v->tag_len ? tag : NULL)
		 : -ENOMEM;
	if (st != CC_ERR_BAD_PARAM)
		av_fail(r, v, "cc_crypt", "not refused with CC_ERR_BAD_PARAM",
			st);
	cc_session_destroy(r->conn, sid);
	free(buf);
}

/* The output and tag of an op against the case. */
static const char *av_judge(const struct av *v, int dec, int fail, int status,
			    const uint8_t *out, const uint8_t *tag)
{
	if (fail) {
		if (status != CC_ERR_AUTH_FAILED)
			return "forgery not rejected with CC_ERR_AUTH_FAILED";
		if (mc_first_not(out, 0, v->len) >= 0)
			return "output not zeroed after the tag mismatch";
		return NULL;
	}
	if (status != CC_OK)
		return "op failed";
	if (mc_first_diff(out, dec ? v->pt : v->ct, v->len) >= 0)
		return dec ? "plaintext differs" : "ciphertext differs";
	if (!dec && v->tag_len && mc_first_diff(tag, v->tag, v->tag_len) >= 0)
		return "tag differs";
	return NULL;
}

static void av_run_sync(struct av_run *r, const struct av *v, uint32_t sid)
{
	uint8_t *buf = malloc(v->len + MC_GUARD), tag[16 + MC_GUARD];
	const char *why;
	int st;

	if (!buf) {
		av_fail(r, v, "cc_crypt", "out of memory", -ENOMEM);
		return;
	}
	if (!v->fail) { /* encrypt, out of place */
		memset(buf, MC_CANARY, v->len + MC_GUARD);
		memset(tag, MC_CANARY, sizeof(tag));
		st = fx_crypt(r->conn, sid, CC_ENCRYPT, v->iv, v->iv_len,
			      v->aad, v->aad_len, v->pt, buf, v->len,
			      v->tag_len ? tag : NULL);
		r->checked++;
		if ((why = av_judge(v, 0, 0, st, buf, tag)))
			av_fail(r, v, "cc_crypt encrypt", why, st);
		else if (mc_first_not(buf + v->len, MC_CANARY, MC_GUARD) >= 0 ||
			 mc_first_not(tag + v->tag_len, MC_CANARY, MC_GUARD) >=
				 0)
			av_fail(r, v, "cc_crypt encrypt", "wrote past the end",
				st);
	}
	/* decrypt in place: the plaintext, or zeros and AUTH_FAILED */
	memcpy(buf, v->ct, v->len);
	memcpy(tag, v->tag, v->tag_len);
	st = fx_crypt(r->conn, sid, CC_DECRYPT, v->iv, v->iv_len, v->aad,
		      v->aad_len, buf, buf, v->len, v->tag_len ? tag : NULL);
	r->checked++;
	if ((why = av_judge(v, 1, v->fail, st, buf, NULL)))
		av_fail(r, v, "cc_crypt decrypt", why, st);
	if (v->tag_len && !v->fail) { /* a forgery: one tag bit flipped */
		memcpy(buf, v->ct, v->len);
		mc_flip(tag, mc_below(8 * v->tag_len));
		st = fx_crypt(r->conn, sid, CC_DECRYPT, v->iv, v->iv_len,
			      v->aad, v->aad_len, buf, buf, v->len, tag);
		r->checked++;
		if ((why = av_judge(v, 1, 1, st, buf, NULL)))
			av_fail(r, v, "cc_crypt forgery", why, st);
	}
	free(buf);
}

/* ---- One burst ---- */

enum { B_OPS = 6 };

struct bop {
	const char *name;
	int dec, sgl_src, sgl_dst, in_place, sessionless, forge;
	struct mc_layout src, dst;
	uint8_t *aad, *tag;
	struct cc_sessionless *sl;
};

static unsigned av_nseg(uint32_t len)
{
	unsigned max = len < 8 ? len : 8;
	return max ? 1 + mc_below(max) : 0;
}

static int bop_fill(struct av_run *r, const struct av *v, uint32_t sid,
		    struct bop *b, struct cc_op *op, uint64_t ud)
{
	const uint8_t *in = b->dec ? v->ct : v->pt;

	memset(op, 0, sizeof(*op));
	if (mc_layout_alloc(r->q, &b->src, v->len,
			    b->sgl_src ? av_nseg(v->len) : 0, 0) ||
	    (!b->in_place &&
	     mc_layout_alloc(r->q, &b->dst, v->len,
			     b->sgl_dst ? av_nseg(v->len) : 0, 0)))
		return -ENOMEM;
	b->aad = cc_buf_alloc(r->q, v->aad_len + 1);
	b->tag = cc_buf_alloc(r->q, 16 + MC_GUARD);
	if (!b->aad || !b->tag)
		return -ENOMEM;
	mc_layout_write(&b->src, in);
	if (v->aad_len)
		memcpy(b->aad, v->aad, v->aad_len);
	memset(b->tag, MC_CANARY, 16 + MC_GUARD);
	if (b->dec)
		memcpy(b->tag, v->tag, v->tag_len);
	if (b->forge)
		mc_flip(b->tag, mc_below(8 * v->tag_len));
	*op = (struct cc_op){
		.user_data = ud,
		.session = b->sessionless ? 0 : sid,
		.dir = b->dec ? CC_DECRYPT : CC_ENCRYPT,
		.len = v->len,
		.aad = v->aad_len ? b->aad : NULL,
		.aad_len = v->aad_len,
		.tag = v->tag_len ? b->tag : NULL,
		.iv = v->iv,
		.iv_len = v->iv_len,
	};
	mc_layout_to_op(&b->src, op, 0);
	if (!b->in_place)
		mc_layout_to_op(&b->dst, op, 1);
	if (b->sessionless) {
		b->sl = cc_buf_alloc(r->q, sizeof(*b->sl));
		if (!b->sl)
			return -ENOMEM;
		memset(b->sl, 0, sizeof(*b->sl));
		b->sl->alg = v->alg;
		b->sl->key_len = v->key_len;
		b->sl->tag_len = v->tag_len;
		memcpy(b->sl->key, v->key, v->key_len);
		op->sessionless = b->sl;
	}
	return 0;
}

static void bop_free(struct av_run *r, struct bop *b)
{
	mc_layout_free(r->q, &b->src);
	mc_layout_free(r->q, &b->dst);
	if (b->aad)
		cc_buf_free(r->q, b->aad);
	if (b->tag)
		cc_buf_free(r->q, b->tag);
	if (b->sl) {
		explicit_bzero(b->sl, sizeof(*b->sl));
		cc_buf_free(r->q, b->sl);
	}
}

static void bop_judge(struct av_run *r, const struct av *v, struct bop *b,
		      int status)
{
	const struct mc_layout *out = b->in_place ? &b->src : &b->dst;
	uint8_t *got = malloc(v->len + 1);
	const char *why;

	r->checked++;
	if (!got) {
		av_fail(r, v, b->name, "out of memory", -ENOMEM);
		return;
	}
	mc_layout_read(out, got);
	why = av_judge(v, b->dec, v->fail || b->forge, status, got, b->tag);
	if (!why && mc_layout_canary(out) >= 0)
		why = "wrote outside the destination";
	if (!why && mc_first_not(b->tag + 16, MC_CANARY, MC_GUARD) >= 0)
		why = "wrote past the tag";
	if (!why && !b->in_place && mc_layout_canary(&b->src) >= 0)
		why = "wrote into the source's gaps";
	if (why)
		av_fail(r, v, b->name, why, status);
	free(got);
}

static int av_run_burst(struct av_run *r, const struct av *v, uint32_t sid)
{
	/* With a failing vector every op decrypts, and must fail. */
	struct bop bs[B_OPS] = {
		{ "burst flat, out of place", .dec = 0 },
		{ "burst list, in place", .dec = 1, .sgl_src = 1,
		  .in_place = 1 },
		{ "burst list to list", .dec = 0, .sgl_src = 1, .sgl_dst = 1 },
		{ "burst flat to list", .dec = 1, .sgl_dst = 1 },
		{ "burst list to flat, forged", .dec = 1, .sgl_src = 1,
		  .forge = 1 },
		{ "burst session-less, flat in place", .dec = 0, .in_place = 1,
		  .sessionless = 1 },
	};
	struct cc_op ops[B_OPS];
	struct cc_completion comps[B_OPS];
	unsigned n = 0, i;
	int st = 0;

	/* Session-less ops go to the default engine: only where it takes
	 * the case (its own refusals are av_run_case()'s business). */
	int sl_ok = r->def && !av_refused(r->def, v);
	for (i = 0; i < B_OPS && !st; i++) {
		struct bop *b = &bs[i];

		if ((b->forge && (!v->tag_len || v->fail)) ||
		    (b->sessionless && !sl_ok))
			continue;
		if (v->fail)
			b->dec = 1;
		bs[n] = *b;
		st = bop_fill(r, v, sid, &bs[n], &ops[n], 0x61656164u + n);
		n++;
	}
	if (st) {
		av_fail(r, v, "burst", "arena exhausted", st);
		goto out;
	}
	st = fx_run_burst(r->q, ops, n, comps, BURST_MS);
	if (st) {
		av_fail(r, v, "burst", "did not complete in order", st);
		goto out;
	}
	for (i = 0; i < n; i++) {
		bop_judge(r, v, &bs[i], comps[i].status);
		r->sessionless += bs[i].sessionless;
	}
out:
	for (i = 0; i < n; i++)
		bop_free(r, &bs[i]);
	return st == -ENOMEM ? 0 : st;
}

int av_run_case(struct av_run *r, const struct av *v)
{
	const char *what = av_refused(r->cap, v);
	uint32_t sid;
	int st;

	if (what) {
		av_run_refused(r, v, what);
		return 0;
	}
	st = av_session(r, v, &sid);
	if (st) {
		r->checked++;
		av_fail(r, v, "session", "cc_session_create failed", st);
		return 0;
	}
	av_run_sync(r, v, sid);
	st = av_run_burst(r, v, sid);
	cc_session_destroy(r->conn, sid);
	return st;
}
