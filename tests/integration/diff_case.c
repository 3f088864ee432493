// SPDX-License-Identifier: MIT
/*
 * The differential tests' cases and ops (diff_common.h): a case with
 * OpenSSL's answer, its ops built in a random layout, each completion
 * judged, and the failures summed up by reason.
 */
#include "diff_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

const uint32_t diff_edge_lens[] = {
	0,     1,      15,     16,	17,    31,    32,    33,    47,
	48,    63,     64,     65,	127,   128,   129,   255,   256,
	257,   4095,   4096,   4097,	65519, 65520, 65535, 65536, 65537,
	65552, 131072, 262147, 1048576, 65534, /* the longest aesni MAC job */
};
const unsigned diff_n_edge_lens =
	sizeof(diff_edge_lens) / sizeof(diff_edge_lens[0]);
static const unsigned gcm_tags[] = { 0, 4, 8, 12, 13, 14, 15, 16 };

const char *const diff_layout_name[L_NR] = {
	"flat out-of-place",
	"flat in-place (dst NULL)",
	"flat in-place (dst == src)",
	"sgl out-of-place",
	"sgl in-place (dst_sgl NULL)",
	"sgl in-place (dst_sgl == src_sgl)",
	"sgl -> flat",
	"flat -> sgl",
};

/* ---- Cases ---- */

/* The nearest length the algorithm takes. */
static uint32_t fit_len(const struct mc_spec *s, uint32_t len)
{
	len -= len % s->block;
	if (len < s->min_len)
		len = s->min_len;
	return len;
}

void diff_case_free(struct dcase *c)
{
	OPENSSL_cleanse(&c->key, sizeof(c->key));
	free(c->pt);
	free(c->ct);
	free(c->aad);
	c->pt = c->ct = c->aad = NULL;
}

/* CTR counter blocks about to carry: the low 32, 64 or all 128 bits are
 * all ones but for the last few counts. */
static void ctr_carry_iv(struct dcase *c, unsigned which)
{
	static const char *const notes[4] = { "ctr carry 32", "ctr carry 64",
					      "ctr carry 128",
					      "ctr carry 32 into 0xff" };
	unsigned first = which == 1 ? 8 : which == 2 ? 0 : 12, i;

	mc_rnd_bytes(c->iv, 16);
	for (i = first; i < 16; i++)
		c->iv[i] = 0xff;
	c->iv[15] = (uint8_t)(0xff - mc_below(3));
	if (which == 3) {
		/* The carry out of the low word runs on through byte 11. */
		c->iv[11] = 0xff;
		c->iv[10] = 0x7f;
	}
	c->note = notes[which];
}

int diff_case_make(struct t *t, struct dcase *c, const struct mc_spec *s,
		   unsigned idx, uint32_t len, unsigned key_pick, int ctr_carry)
{
	int r;

	memset(c, 0, sizeof(*c));
	c->idx = idx;
	c->s = s;
	c->key.alg = s->alg;
	c->len = fit_len(s, len);
	if (s->key_any) {
		/* HMAC: around the 64- and 128-byte blocks (longer keys are
		 * hashed first), else any. */
		static const unsigned edges[] = { 0,   1,   16, 20,  32,
						  63,  64,  65, 127, 128,
						  129, 131, 256 };

		c->key.key_len = mc_below(2) ? edges[key_pick % 13]
					     : mc_below(s->key_any + 1);
		mc_rnd_bytes(c->key.key, c->key.key_len);
	} else if (s->n_key_lens) {
		c->key.key_len = s->key_lens[key_pick % s->n_key_lens];
		/* aesni has no CMAC-192: what the engine takes */
		if (s->tag_hi && !mc_engine_takes(t->conn, s->alg, t->engine,
						  c->key.key_len, 0))
			c->key.key_len = s->key_lens[0];
		mc_rnd_bytes(c->key.key, c->key.key_len);
		/* XTS: two halves that differ (they do, but be sure). */
		if (s->xts_key)
			c->key.key[c->key.key_len / 2] =
				(uint8_t)~c->key.key[0];
	}
	if (s->auth_key) {
		static const unsigned edges[] = { 1, 20, 32, 64 };

		c->key.auth_key_len =
			mc_below(2) ? edges[mc_below(4)] : 1 + mc_below(64);
		mc_rnd_bytes(c->key.auth_key, c->key.auth_key_len);
		c->key.tag_len = mc_below(2) ? 0 : s->tag_def;
	} else if (s->tag_hi) {
		/* MACs: the default or any truncation the engine takes */
		c->key.tag_len = mc_below(3)
					 ? 0
					 : s->tag_lo + mc_below(s->tag_hi -
								s->tag_lo + 1);
		if (!mc_engine_takes(t->conn, s->alg, t->engine, c->key.key_len,
				     c->key.tag_len))
			c->key.tag_len = 0;
	} else if (s->tag_def) {
		c->key.tag_len = gcm_tags[mc_below(sizeof(gcm_tags) /
						   sizeof(gcm_tags[0]))];
	}

	c->iv_len = s->iv_len;
	if (s->iv_ignored)
		c->iv_len = mc_below(MC_IV_MAX + 1);
	else if (mc_iv_ok(s, t->engine, 1) && mc_below(3) == 0)
		c->iv_len = 1 + mc_below(MC_IV_MAX); /* GCM, GMAC: 1..128 */
	mc_rnd_bytes(c->iv, c->iv_len);
	if (ctr_carry >= 0)
		ctr_carry_iv(c, (unsigned)ctr_carry);
	c->sessionless_ok =
		t->def_engine && mc_iv_ok(s, t->def_engine, c->iv_len) &&
		c->key.key_len <= sizeof(((struct cc_sessionless *)0)->key);

	c->aad_len = s->aad == MC_AAD_ZERO ? 0 : mc_rnd_aad_len(15, 8);
	/* Among the edges: the largest AAD, and AAD + payload = 65535. */
	if (s->aad != MC_AAD_ZERO && idx < diff_n_edge_lens) {
		if (idx % 4 == 0)
			c->aad_len = AAD_MAX;
		else if (idx % 4 == 1 && c->len <= AAD_MAX)
			c->aad_len = AAD_MAX - c->len;
	}
	c->pt = malloc(c->len + 1);
	c->ct = malloc(c->len + 1);
	c->aad = malloc(c->aad_len + 1);
	if (!c->pt || !c->ct || !c->aad)
		return -ENOMEM;
	mc_rnd_bytes(c->pt, c->len);
	mc_rnd_bytes(c->aad, c->aad_len);
	/* What the service must compute; AAD it ignores is not given to
	 * the reference at all. */
	r = mc_ref_encrypt(&c->key, c->iv, c->iv_len, c->aad,
			   s->aad == MC_AAD_ANY ? c->aad_len : 0, c->pt, c->len,
			   c->ct, c->tag);
	if (r)
		fprintf(stderr, "FAIL: OpenSSL refused case %u of %s\n", idx,
			s->name);
	return r;
}

/* ---- Judging ---- */

/* Failures of one algorithm on one engine, by reason and status, so that
 * a run ends with the whole picture and not only the first few. */
struct fsum {
	const char *why;
	int status;
	unsigned long n;
	uint32_t min_len, max_len;
};

#define MAX_FSUMS 32
static struct fsum fsums[MAX_FSUMS];
static unsigned n_fsums;

static void fsum_add(const char *why, int status, uint32_t len)
{
	unsigned i;

	for (i = 0; i < n_fsums; i++)
		if (fsums[i].why == why && fsums[i].status == status)
			break;
	if (i == n_fsums) {
		if (n_fsums == MAX_FSUMS)
			return;
		fsums[n_fsums++] = (struct fsum){ why, status, 0, len, len };
	}
	fsums[i].n++;
	if (len < fsums[i].min_len)
		fsums[i].min_len = len;
	if (len > fsums[i].max_len)
		fsums[i].max_len = len;
}

void diff_fsum_print(void)
{
	unsigned i;

	for (i = 0; i < n_fsums; i++)
		printf("    %lu x %s (status %d: %s), lengths %u..%u\n",
		       fsums[i].n, fsums[i].why, fsums[i].status,
		       cc_strerror(fsums[i].status), fsums[i].min_len,
		       fsums[i].max_len);
	n_fsums = 0;
}

void diff_fail(struct t *t, const struct dop *o, const char *path,
	       const char *why, int status, long off)
{
	const struct dcase *c = o ? o->c : NULL;

	t->failed++;
	fsum_add(why, status, c ? c->len : 0);
	if (t->shown++ >= SHOW_FAILURES)
		return;
	if (!c) {
		fprintf(stderr, "FAIL engine=%s %s: %s (status %d: %s)\n",
			t->engine, path, why, status, cc_strerror(status));
		return;
	}
	fprintf(stderr,
		"FAIL case %u %s engine=%s path=%s op=%s layout=%s%s: %s",
		c->idx, c->s->name, o->sessionless ? "session-less" : t->engine,
		path,
		o->kind == K_ENC   ? "encrypt"
		: o->kind == K_DEC ? "decrypt"
		: o->forge == 0	   ? "forged tag"
		: o->forge == 1	   ? "forged data"
				   : "forged aad",
		diff_layout_name[o->layout], c->note ? c->note : "", why);
	if (off >= 0)
		fprintf(stderr, " at byte %ld", off);
	fprintf(stderr,
		" (status %d: %s; key %u auth key %u iv %u len %u aad %u tag "
		"%u, nseg %u/%u)\n",
		status, cc_strerror(status), c->key.key_len,
		c->key.auth_key_len, c->iv_len, c->len, c->aad_len,
		mc_tag_len(&c->key), o->src.nseg, o->dst.nseg);
}

void diff_judge(struct t *t, struct dop *o, const char *path, int status,
		long comp_len)
{
	const struct dcase *c = o->c;
	const struct mc_spec *s = c->s;
	unsigned tl = mc_tag_len(&c->key);
	int in_place = o->layout == L_FLAT_INPLACE_NULL ||
		       o->layout == L_FLAT_INPLACE_SAME ||
		       o->layout == L_SGL_INPLACE_NULL ||
		       o->layout == L_SGL_INPLACE_SAME;
	uint8_t *out = malloc(c->len + 1), *src = malloc(c->len + 1);
	const uint8_t *want = o->kind == K_ENC ? c->ct : c->pt;
	const char *why = NULL;
	long off = -1;

	t->checked++;
	if (!out || !src) {
		free(out);
		free(src);
		diff_fail(t, o, path, "out of memory", 0, -1);
		return;
	}
	mc_layout_read(in_place ? &o->src : &o->dst, out);
	mc_layout_read(&o->src, src);

	if (o->kind == K_FORGE) {
		if (status != CC_ERR_AUTH_FAILED)
			why = "forgery not rejected with CC_ERR_AUTH_FAILED";
		else if (s->writes_data &&
			 (off = mc_first_not(out, 0, c->len)) >= 0)
			why = "output not zeroed after auth failure";
	} else if (status != CC_OK) {
		why = "op failed";
	} else if (s->writes_data &&
		   (off = mc_first_diff(out, want, c->len)) >= 0) {
		why = "output differs from OpenSSL";
	} else if (s->writes_data && comp_len >= 0 && comp_len != c->len) {
		why = "completion length differs from the payload length";
	} else if (o->kind == K_ENC && tl &&
		   (off = mc_first_diff(o->tag, c->tag, tl)) >= 0) {
		why = "tag differs from OpenSSL";
	}
	if (!why && o->kind == K_ENC && o->tag &&
	    (off = mc_first_not(o->tag + tl, MC_CANARY,
				MC_TAG_MAX + MC_GUARD - tl)) >= 0)
		why = tl ? "wrote more than tag_len tag bytes"
			 : "wrote a tag for an algorithm without one",
		off += tl;
	if (!why && (off = mc_layout_canary(&o->src)) >= 0)
		why = "wrote outside the source segments";
	if (!why && !in_place && (off = mc_layout_canary(&o->dst)) >= 0)
		why = "wrote outside the destination segments";
	if (!why && (!in_place || !s->writes_data) &&
	    (off = mc_first_diff(src, o->in, c->len)) >= 0)
		why = s->writes_data ? "out of place, but the source changed"
				     : "GMAC changed its data";
	if (!why && !s->writes_data && !in_place &&
	    (off = mc_first_not(out, MC_CANARY, c->len)) >= 0)
		why = "GMAC wrote to the destination";
	if (why)
		diff_fail(t, o, path, why, status, off);
	free(out);
	free(src);
}

/* ---- Building ops ---- */

int diff_dop_iv(struct t *t, struct dop *o)
{
	const struct dcase *c = o->c;
	if (c->iv_len <= CC_IV_INLINE)
		return 0;
	o->iv = cc_buf_alloc(t->q, c->iv_len);
	if (!o->iv)
		return -ENOMEM;
	memcpy(o->iv, c->iv, c->iv_len);
	t->n_arena_iv++;
	return 0;
}

void diff_dop_free(struct cc_queue *q, struct dop *o)
{
	mc_layout_free(q, &o->src);
	mc_layout_free(q, &o->dst);
	if (o->aad)
		cc_buf_free(q, o->aad);
	if (o->tag)
		cc_buf_free(q, o->tag);
	if (o->iv)
		cc_buf_free(q, o->iv);
	if (o->sl) {
		/* The header asks the client to wipe its arena copy. */
		OPENSSL_cleanse(o->sl, sizeof(*o->sl));
		cc_buf_free(q, o->sl);
	}
	free(o->in);
	memset(o, 0, sizeof(*o));
}

static unsigned rnd_nseg(uint32_t len)
{
	unsigned n = 1 + mc_below(SEG_MAX_RANDOM);

	return n > len ? len : n;
}

/* Choose and allocate a layout; 0 or -ENOMEM. */
static int dop_layout(struct t *t, struct dop *o)
{
	uint32_t len = o->c->len;
	enum layout l = (enum layout)mc_below(L_NR);
	int r;

	/* A list of one segment or more needs a byte per segment; empty
	 * payloads go flat (empty segments are tested on their own). */
	if (!len && l >= L_SGL_OOP)
		l = (enum layout)mc_below(L_SGL_OOP);
	o->layout = l;
	switch (l) {
	case L_FLAT_OOP:
		r = mc_layout_alloc(t->q, &o->src, len, 0, 0);
		return r ? r : mc_layout_alloc(t->q, &o->dst, len, 0, 0);
	case L_FLAT_INPLACE_NULL:
	case L_FLAT_INPLACE_SAME:
		return mc_layout_alloc(t->q, &o->src, len, 0, 0);
	case L_SGL_OOP:
		r = mc_layout_alloc(t->q, &o->src, len, rnd_nseg(len), 0);
		return r ? r
			 : mc_layout_alloc(t->q, &o->dst, len, rnd_nseg(len),
					   0);
	case L_SGL_INPLACE_NULL:
	case L_SGL_INPLACE_SAME:
		return mc_layout_alloc(t->q, &o->src, len, rnd_nseg(len), 0);
	case L_SGL_TO_FLAT:
		r = mc_layout_alloc(t->q, &o->src, len, rnd_nseg(len), 0);
		return r ? r : mc_layout_alloc(t->q, &o->dst, len, 0, 0);
	case L_FLAT_TO_SGL:
		r = mc_layout_alloc(t->q, &o->src, len, 0, 0);
		return r ? r
			 : mc_layout_alloc(t->q, &o->dst, len, rnd_nseg(len),
					   0);
	default:
		return -EINVAL;
	}
}

int diff_dop_fill(struct t *t, struct dop *o, struct cc_op *op, uint64_t ud)
{
	struct dcase *c = o->c;
	const struct mc_spec *s = c->s;
	unsigned tl = mc_tag_len(&c->key);
	int r;

	r = dop_layout(t, o);
	o->in = malloc(c->len + 1);
	o->aad = cc_buf_alloc(t->q, c->aad_len + 1);
	o->pass_tag = tl || mc_below(2);
	o->tag = o->pass_tag ? cc_buf_alloc(t->q, MC_TAG_MAX + MC_GUARD) : NULL;
	if (o->sessionless)
		o->sl = cc_buf_alloc(t->q, sizeof(*o->sl));
	if (r || !o->in || !o->aad || (o->pass_tag && !o->tag) ||
	    (o->sessionless && !o->sl) || diff_dop_iv(t, o))
		return -ENOMEM;

	/* GMAC has no ciphertext: every op reads the data itself. */
	memcpy(o->in, o->kind == K_ENC || !s->writes_data ? c->pt : c->ct,
	       c->len);
	memcpy(o->aad, c->aad, c->aad_len);
	if (o->tag) {
		memset(o->tag, MC_CANARY, MC_TAG_MAX + MC_GUARD);
		if (o->kind != K_ENC)
			memcpy(o->tag, c->tag, tl);
	}
	if (o->kind == K_FORGE) {
		/* What to break: the tag, the data, or the AAD, as far as
		 * the case has them. */
		o->forge = (int)mc_below(3);
		if (o->forge == 1 && !c->len)
			o->forge = 0;
		if (o->forge == 2 && (!c->aad_len || s->aad != MC_AAD_ANY))
			o->forge = 0;
		if (o->forge == 0)
			mc_flip(o->tag, mc_below(8 * tl));
		else if (o->forge == 1)
			mc_flip(o->in, mc_below(8 * c->len));
		else
			mc_flip(o->aad, mc_below(8 * c->aad_len));
	}
	mc_layout_write(&o->src, o->in);
	if (o->sl)
		mc_sessionless_fill(o->sl, &c->key);

	*op = (struct cc_op){
		.user_data = ud,
		.session = o->sessionless ? 0 : c->session,
		.sessionless = o->sl,
		.dir = o->kind == K_ENC ? CC_ENCRYPT : CC_DECRYPT,
		.len = c->len,
		.aad = o->aad,
		.aad_len = c->aad_len,
		.tag = o->tag,
		.iv = o->iv	  ? o->iv
		      : c->iv_len ? c->iv
				  : NULL,
		.iv_len = c->iv_len,
	};
	mc_layout_to_op(&o->src, op, 0);
	switch (o->layout) {
	case L_FLAT_OOP:
	case L_SGL_OOP:
	case L_SGL_TO_FLAT:
	case L_FLAT_TO_SGL:
		mc_layout_to_op(&o->dst, op, 1);
		break;
	case L_FLAT_INPLACE_SAME:
		op->dst = o->src.base;
		break;
	case L_SGL_INPLACE_SAME:
		op->dst_sgl = op->src_sgl;
		op->dst_nseg = op->src_nseg;
		break;
	default:
		break;
	}
	t->n_layout[o->layout]++;
	t->n_sessionless += o->sessionless;
	t->n_forge += o->kind == K_FORGE;
	return 0;
}
