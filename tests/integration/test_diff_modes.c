// SPDX-License-Identifier: MIT
/*
 * Differential test of every algorithm against OpenSSL (EVP ciphers and
 * HMAC), on every engine that claims it (cc_capabilities_get()), with
 * random keys of every size, IVs, AAD where the spec allows it (and where
 * it says "ignored", to check that it is), payload lengths from 0 to
 * 64 KiB with the edges of each algorithm's rules, and tag lengths.
 *
 * Each case becomes ops in a shared burst: encrypt, decrypt, and for the
 * authenticated algorithms (GCM, GMAC, authenc) a forgery (a flipped bit
 * in the tag, the data or the AAD) that must complete CC_ERR_AUTH_FAILED
 * with the output zeroed (GMAC writes nothing, so nothing may change).
 * Each op picks a layout: flat or scatter-gather (1..16 segments at
 * random cut points, canary gaps between them), in place (both
 * spellings) or out of place, with a destination list split differently
 * from the source. A quarter of the ops are session-less (the key in a
 * struct cc_sessionless in the arena), mixed with session ops in the same
 * burst. Every case also goes through cc_crypt().
 *
 * Beside the random cases: CTR with counter blocks that carry across 32,
 * 64 and 128 bits, against EVP_aes_*_ctr; and zero-length segments, which
 * the spec does not forbid: they are run separately and what the service
 * makes of them is reported (accepted with the right answer, or refused
 * with CC_ERR_BAD_PARAM / CC_ERR_BAD_RANGE; anything else fails).
 *
 * Everything random comes from one seed, printed first; TEST_SEED
 * replays a run. Keys are never printed: the seed reproduces them.
 *
 * Exit: 0 all passed, 1 any mismatch.
 */
#include "fixture.h"
#include "modes_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#define SEED_DEFAULT 0x6d6f646573646966ull
#define RANDOM_CASES 600 /* per algorithm and engine, beside the edges */
#define AAD_MAX 65535
#define QUEUE_ENTRIES 64       /* smaller than a burst, on purpose */
#define ARENA_SIZE (80u << 20) /* two 16 MiB ops and then some */
#define OP_MAX_LEN (16u << 20)
#define GROUP_BYTES (12u << 20) /* arena bytes one burst may use */
#define GROUP_CASES 24
#define OPS_PER_CASE 3
#define BURST_TIMEOUT_MS 30000
#define SHOW_FAILURES 8 /* per algorithm and engine */
#define SEG_MAX_RANDOM 16

/* The edges of every rule (block multiples, XTS's 16 bytes, 64 KiB), and
 * a few larger ops: the spec allows up to 16 MiB (run_max_len()). */
static const uint32_t edge_lens[] = {
	0,     1,     15,    16,    17,	    31,	    32,	     33,
	47,    48,    63,    64,    65,	    127,    128,     129,
	255,   256,   257,   4095,  4096,   4097,   65519,   65520,
	65535, 65536, 65537, 65552, 131072, 262147, 1048576,
};
static const unsigned gcm_tags[] = { 0, 4, 8, 12, 13, 14, 15, 16 };

/* What one op of a case does. */
enum kind {
	K_ENC,
	K_DEC,
	K_FORGE, /* authenticated algorithms only */
};

enum layout {
	L_FLAT_OOP,
	L_FLAT_INPLACE_NULL, /* dst NULL */
	L_FLAT_INPLACE_SAME, /* dst == src */
	L_SGL_OOP,	     /* src and dst lists, split differently */
	L_SGL_INPLACE_NULL,  /* dst_sgl NULL */
	L_SGL_INPLACE_SAME,  /* dst_sgl == src_sgl */
	L_SGL_TO_FLAT,	     /* src list, flat dst */
	L_FLAT_TO_SGL,	     /* flat src, dst list */
	L_NR,
};

static const char *const layout_name[L_NR] = {
	"flat out-of-place",
	"flat in-place (dst NULL)",
	"flat in-place (dst == src)",
	"sgl out-of-place",
	"sgl in-place (dst_sgl NULL)",
	"sgl in-place (dst_sgl == src_sgl)",
	"sgl -> flat",
	"flat -> sgl",
};

struct dcase {
	unsigned idx;
	const struct mc_spec *s;
	struct mc_key key;
	uint8_t iv[MC_IV_MAX];
	unsigned iv_len;
	uint32_t len, aad_len;
	uint8_t *pt, *ct, *aad; /* malloc'd; ct is OpenSSL's answer */
	uint8_t tag[32];	/* OpenSSL's full tag */
	int sessionless_ok;	/* the default engine takes this IV */
	const char *note;	/* "ctr carry 32" etc., or NULL */
	uint32_t session;
	int has_session;
};

struct dop {
	struct dcase *c;
	enum kind kind;
	enum layout layout;
	int sessionless;
	int forge;    /* 0 tag, 1 data, 2 aad */
	int pass_tag; /* no-tag algorithms: pass a buffer anyway */
	struct mc_layout src, dst;
	uint8_t *aad, *tag; /* arena */
	struct cc_sessionless *sl;
	uint8_t *in; /* malloc'd: what src held before the op */
};

struct t {
	struct cc_conn *conn;
	struct cc_queue *q;
	const char *engine;
	const char *def_engine; /* where session-less ops go */
	unsigned long checked, failed;
	unsigned long n_layout[L_NR], n_sessionless, n_forge, n_sync;
	unsigned shown;
	int fatal;
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

static void case_free(struct dcase *c)
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

static int case_make(struct t *t, struct dcase *c, const struct mc_spec *s,
		     unsigned idx, uint32_t len, unsigned key_pick,
		     int ctr_carry)
{
	int r;

	memset(c, 0, sizeof(*c));
	c->idx = idx;
	c->s = s;
	c->key.alg = s->alg;
	c->len = fit_len(s, len);
	if (s->n_key_lens) {
		c->key.key_len = s->key_lens[key_pick % s->n_key_lens];
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
	} else if (s->tag_def) {
		c->key.tag_len = gcm_tags[mc_below(sizeof(gcm_tags) /
						   sizeof(gcm_tags[0]))];
	}

	c->iv_len = s->iv_len;
	if (s->iv_ignored)
		c->iv_len = mc_below(17);
	else if (mc_iv_ok(s, t->engine, 1) && mc_below(3) == 0)
		c->iv_len = 1 + mc_below(16); /* GCM on openssl: 1..16 */
	mc_rnd_bytes(c->iv, c->iv_len);
	if (ctr_carry >= 0)
		ctr_carry_iv(c, (unsigned)ctr_carry);
	c->sessionless_ok =
		t->def_engine && mc_iv_ok(s, t->def_engine, c->iv_len);

	c->aad_len = s->aad == MC_AAD_ZERO ? 0 : mc_rnd_aad_len(15, 8);
	/* Among the edges: the largest AAD, and AAD + payload = 65535. */
	if (s->aad != MC_AAD_ZERO &&
	    idx < sizeof(edge_lens) / sizeof(edge_lens[0])) {
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

static void fsum_print(void)
{
	unsigned i;

	for (i = 0; i < n_fsums; i++)
		printf("    %lu x %s (status %d: %s), lengths %u..%u\n",
		       fsums[i].n, fsums[i].why, fsums[i].status,
		       cc_strerror(fsums[i].status), fsums[i].min_len,
		       fsums[i].max_len);
	n_fsums = 0;
}

static void fail(struct t *t, const struct dop *o, const char *path,
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
		layout_name[o->layout], c->note ? c->note : "", why);
	if (off >= 0)
		fprintf(stderr, " at byte %ld", off);
	fprintf(stderr,
		" (status %d: %s; key %u auth key %u iv %u len %u aad %u tag "
		"%u, nseg %u/%u)\n",
		status, cc_strerror(status), c->key.key_len,
		c->key.auth_key_len, c->iv_len, c->len, c->aad_len,
		mc_tag_len(&c->key), o->src.nseg, o->dst.nseg);
}

static void judge(struct t *t, struct dop *o, const char *path, int status,
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
		fail(t, o, path, "out of memory", 0, -1);
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
		fail(t, o, path, why, status, off);
	free(out);
	free(src);
}

/* ---- Building ops ---- */

static void dop_free(struct cc_queue *q, struct dop *o)
{
	mc_layout_free(q, &o->src);
	mc_layout_free(q, &o->dst);
	if (o->aad)
		cc_buf_free(q, o->aad);
	if (o->tag)
		cc_buf_free(q, o->tag);
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

static int dop_fill(struct t *t, struct dop *o, struct cc_op *op, uint64_t ud)
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
	    (o->sessionless && !o->sl))
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
		.iv = c->iv_len ? c->iv : NULL,
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

static void run_group_burst(struct t *t, struct dcase *cs, unsigned n)
{
	static struct dop dops[GROUP_CASES * OPS_PER_CASE];
	static struct cc_op ops[GROUP_CASES * OPS_PER_CASE];
	static struct cc_completion comps[GROUP_CASES * OPS_PER_CASE];
	unsigned nops = 0, i, k;
	int r = 0;

	for (i = 0; i < n && !r; i++) {
		unsigned nk = cs[i].s->tag_def ? 3 : 2;

		if (!cs[i].has_session)
			continue;
		for (k = 0; k < nk && !r; k++) {
			struct dop *o = &dops[nops];

			memset(o, 0, sizeof(*o));
			o->c = &cs[i];
			o->kind = (enum kind)k;
			o->sessionless = cs[i].sessionless_ok && !mc_below(4);
			r = dop_fill(t, o, &ops[nops],
				     (uint64_t)cs[i].idx << 8 | k);
			nops++;
		}
	}
	if (r) {
		fail(t, NULL, "burst", "arena exhausted building a burst", r,
		     -1);
		t->fatal = 1;
		goto out;
	}
	r = fx_run_burst(t->q, ops, nops, comps, BURST_TIMEOUT_MS);
	if (r) {
		fail(t, NULL, "burst", "burst did not complete in order", r,
		     -1);
		t->fatal = 1;
		goto out;
	}
	for (i = 0; i < nops; i++)
		judge(t, &dops[i], "burst", comps[i].status, comps[i].len);
out:
	for (i = 0; i < nops; i++)
		dop_free(t->q, &dops[i]);
}

/* ---- cc_crypt() ---- */

static void sync_check(struct t *t, struct dcase *c, enum kind kind, int status,
		       const uint8_t *out, const uint8_t *tag)
{
	struct dop o = { .c = c, .kind = kind, .layout = L_FLAT_OOP };
	const char *why = NULL;
	unsigned tl = mc_tag_len(&c->key);
	long off = -1;

	t->checked++;
	t->n_sync++;
	if (kind == K_FORGE) {
		if (status != CC_ERR_AUTH_FAILED)
			why = "forgery not rejected with CC_ERR_AUTH_FAILED";
		else if (c->s->writes_data &&
			 (off = mc_first_not(out, 0, c->len)) >= 0)
			why = "output not zeroed after auth failure";
	} else if (status != CC_OK) {
		why = "op failed";
	} else if (c->s->writes_data &&
		   (off = mc_first_diff(out, kind == K_ENC ? c->ct : c->pt,
					c->len)) >= 0) {
		why = "output differs from OpenSSL";
	} else if (kind == K_ENC && tl &&
		   (off = mc_first_diff(tag, c->tag, tl)) >= 0) {
		why = "tag differs from OpenSSL";
	}
	if (!why && c->s->writes_data &&
	    (off = mc_first_not(out + c->len, MC_CANARY, MC_GUARD)) >= 0)
		why = "wrote past the end of the output", off += c->len;
	if (why)
		fail(t, &o, "sync", why, status, off);
}

static void run_case_sync(struct t *t, struct dcase *c)
{
	uint8_t *buf = malloc(c->len + MC_GUARD);
	uint8_t tag[MC_TAG_MAX + MC_GUARD];
	unsigned tl = mc_tag_len(&c->key);
	int gmac = !c->s->writes_data;
	int r;

	if (!buf) {
		t->fatal = 1;
		return;
	}
	memset(buf, MC_CANARY, c->len + MC_GUARD);
	memset(tag, MC_CANARY, sizeof(tag));
	r = fx_crypt(t->conn, c->session, CC_ENCRYPT, c->iv, c->iv_len,
		     c->aad_len ? c->aad : NULL, c->aad_len,
		     c->len ? c->pt : NULL, c->len && !gmac ? buf : NULL,
		     c->len, tl ? tag : NULL);
	sync_check(t, c, K_ENC, r, buf, tag);

	/* Decrypt in place. */
	memcpy(buf, c->ct, c->len);
	memcpy(tag, c->tag, tl);
	r = fx_crypt(t->conn, c->session, CC_DECRYPT, c->iv, c->iv_len,
		     c->aad_len ? c->aad : NULL, c->aad_len,
		     c->len ? (gmac ? c->pt : buf) : NULL,
		     c->len && !gmac ? buf : NULL, c->len, tl ? tag : NULL);
	sync_check(t, c, K_DEC, r, buf, NULL);

	if (tl) {
		memcpy(buf, c->ct, c->len);
		mc_flip(tag, mc_below(8 * tl));
		r = fx_crypt(t->conn, c->session, CC_DECRYPT, c->iv, c->iv_len,
			     c->aad_len ? c->aad : NULL, c->aad_len,
			     c->len ? (gmac ? c->pt : buf) : NULL,
			     c->len && !gmac ? buf : NULL, c->len, tag);
		sync_check(t, c, K_FORGE, r, buf, NULL);
	}
	free(buf);
}

/* ---- One algorithm on one engine ---- */

static void run_group(struct t *t, struct dcase *cs, unsigned n)
{
	unsigned i;
	int r;

	for (i = 0; i < n; i++) {
		r = mc_session(t->conn, &cs[i].key, t->engine, &cs[i].session);
		cs[i].has_session = r == 0;
		if (r) {
			struct dop o = { .c = &cs[i] };

			fail(t, &o, "session", "cc_session_create failed", r,
			     -1);
		}
	}
	run_group_burst(t, cs, n);
	for (i = 0; i < n && !t->fatal; i++)
		if (cs[i].has_session)
			run_case_sync(t, &cs[i]);
	for (i = 0; i < n; i++) {
		if (!cs[i].has_session)
			continue;
		r = cc_session_destroy(t->conn, cs[i].session);
		if (r)
			fail(t, NULL, "session", "cc_session_destroy failed", r,
			     -1);
		cs[i].has_session = 0;
	}
}

static size_t case_bytes(const struct dcase *c)
{
	/* Per op at most two data blocks with gaps, tag, aad, lists. */
	return OPS_PER_CASE *
	       (2 * ((size_t)c->len + 64 * 80) + c->aad_len + 1024);
}

static void run_alg(struct t *t, const struct mc_spec *s, uint64_t seed)
{
	static struct dcase cs[GROUP_CASES];
	unsigned n_edge = sizeof(edge_lens) / sizeof(edge_lens[0]);
	unsigned n_carry = s->alg == CC_ALG_AES_CTR ? 4 * 3 : 0;
	unsigned total = n_edge + n_carry + RANDOM_CASES, idx, n = 0, i;
	size_t bytes = 0;

	/* The same cases for every engine of an algorithm. */
	mc_srand(seed ^ (uint64_t)s->alg << 56);
	for (idx = 0; idx < total && !t->fatal; idx++) {
		uint32_t len;
		int carry = -1;

		if (idx < n_edge) {
			len = edge_lens[idx];
		} else if (idx < n_edge + n_carry) {
			/* Long enough to cross the carry, odd tails. */
			static const uint32_t carry_lens[3] = { 5 * 16 + 7,
								4096 + 3, 48 };

			carry = (int)((idx - n_edge) % 4);
			len = carry_lens[(idx - n_edge) / 4];
		} else {
			len = mc_rnd_len();
		}
		if (case_make(t, &cs[n], s, idx, len, idx, carry)) {
			case_free(&cs[n]);
			t->failed++;
			t->fatal = 1;
			break;
		}
		bytes += case_bytes(&cs[n]);
		n++;
		if (n == GROUP_CASES || bytes >= GROUP_BYTES ||
		    idx + 1 == total) {
			run_group(t, cs, n);
			for (i = 0; i < n; i++)
				case_free(&cs[i]);
			n = 0;
			bytes = 0;
		}
	}
	for (i = 0; i < n; i++)
		case_free(&cs[i]);
}

/* ---- Zero-length segments ---- */

struct zvariant {
	const char *name;
	uint32_t len;
	uint32_t src[5], dst[5];
	unsigned nsrc, ndst; /* ndst 0: in place */
};

static const struct zvariant zvariants[] = {
	{ "empty segments at both ends and between, out of place",
	  64,
	  { 0, 32, 0, 32, 0 },
	  { 16, 0, 48, 0 },
	  5,
	  4 },
	{ "an empty segment between two, in place",
	  64,
	  { 32, 0, 32 },
	  { 0 },
	  3,
	  0 },
	{ "an empty op as one empty segment each side", 0, { 0 }, { 0 }, 1, 1 },
};

/* Segments of 0 bytes, which the spec does not forbid. Accepted with the
 * right answer, or refused with BAD_PARAM / BAD_RANGE: either is
 * reported; anything else fails. */
static void run_zero_segs(struct t *t, const struct mc_spec *s,
			  const struct zvariant *z, unsigned *accepted,
			  unsigned *refused)
{
	struct dcase c;
	struct dop o;
	struct cc_op op;
	struct cc_completion comp;
	int r;

	if (!mc_len_ok(s, z->len))
		return;
	if (case_make(t, &c, s, 9999, z->len, 0, -1)) {
		case_free(&c);
		t->failed++;
		return;
	}
	r = mc_session(t->conn, &c.key, t->engine, &c.session);
	if (r) {
		fail(t, NULL, "zero-length segments", "session", r, -1);
		case_free(&c);
		return;
	}
	memset(&o, 0, sizeof(o));
	o.c = &c;
	o.kind = K_ENC;
	o.layout = z->ndst ? L_SGL_OOP : L_SGL_INPLACE_NULL;
	o.in = malloc(c.len + 1);
	o.aad = cc_buf_alloc(t->q, c.aad_len + 1);
	o.tag = cc_buf_alloc(t->q, MC_TAG_MAX + MC_GUARD);
	if (!o.in || !o.aad || !o.tag ||
	    mc_layout_alloc_lens(t->q, &o.src, z->src, z->nsrc) ||
	    (z->ndst && mc_layout_alloc_lens(t->q, &o.dst, z->dst, z->ndst))) {
		fail(t, NULL, "zero-length segments", "arena exhausted", 0, -1);
		goto out;
	}
	memcpy(o.in, c.pt, c.len);
	memcpy(o.aad, c.aad, c.aad_len);
	memset(o.tag, MC_CANARY, MC_TAG_MAX + MC_GUARD);
	mc_layout_write(&o.src, o.in);
	op = (struct cc_op){
		.user_data = 0x7a65726fu,
		.session = c.session,
		.dir = CC_ENCRYPT,
		.len = c.len,
		.aad = o.aad,
		.aad_len = c.aad_len,
		.tag = o.tag,
		.iv = c.iv,
		.iv_len = c.iv_len,
	};
	mc_layout_to_op(&o.src, &op, 0);
	if (z->ndst)
		mc_layout_to_op(&o.dst, &op, 1);
	r = fx_run_burst(t->q, &op, 1, &comp, BURST_TIMEOUT_MS);
	if (r) {
		fail(t, NULL, "zero-length segments", "burst", r, -1);
		t->fatal = 1;
		goto out;
	}
	if (comp.status == CC_ERR_BAD_PARAM ||
	    comp.status == CC_ERR_BAD_RANGE) {
		t->checked++;
		(*refused)++;
		printf("  %s [%s]: %s: refused, %s\n", s->name, t->engine,
		       z->name, cc_strerror(comp.status));
	} else {
		judge(t, &o, "zero-length segments", comp.status, comp.len);
		(*accepted)++;
	}
out:
	dop_free(t->q, &o);
	cc_session_destroy(t->conn, c.session);
	case_free(&c);
}

/* ---- The largest op ---- */

/* One 16 MiB encryption out of place and its decryption in place, and
 * the same through cc_crypt(): the spec's upper bound. */
static void run_max_len(struct t *t, const struct mc_spec *s)
{
	struct dcase c;
	struct dop o[2];
	struct cc_op ops[2];
	struct cc_completion comps[2];
	unsigned i;
	int r;

	memset(o, 0, sizeof(o));
	if (case_make(t, &c, s, 8888, OP_MAX_LEN, 2, -1)) {
		case_free(&c);
		t->failed++;
		return;
	}
	r = mc_session(t->conn, &c.key, t->engine, &c.session);
	if (r) {
		fail(t, NULL, "16 MiB op", "session", r, -1);
		case_free(&c);
		return;
	}
	for (i = 0; i < 2; i++) {
		o[i].c = &c;
		o[i].kind = i ? K_DEC : K_ENC;
		o[i].in = malloc(c.len + 1);
		o[i].aad = cc_buf_alloc(t->q, c.aad_len + 1);
		o[i].tag = cc_buf_alloc(t->q, MC_TAG_MAX + MC_GUARD);
		o[i].layout = i ? L_FLAT_INPLACE_NULL : L_FLAT_OOP;
		if (!o[i].in || !o[i].aad || !o[i].tag ||
		    mc_layout_alloc(t->q, &o[i].src, c.len, 0, 0) ||
		    (!i && mc_layout_alloc(t->q, &o[i].dst, c.len, 0, 0))) {
			fail(t, NULL, "16 MiB op", "arena exhausted", 0, -1);
			goto out;
		}
		memcpy(o[i].in, i && s->writes_data ? c.ct : c.pt, c.len);
		mc_layout_write(&o[i].src, o[i].in);
		memcpy(o[i].aad, c.aad, c.aad_len);
		memset(o[i].tag, MC_CANARY, MC_TAG_MAX + MC_GUARD);
		if (i)
			memcpy(o[i].tag, c.tag, mc_tag_len(&c.key));
		ops[i] = (struct cc_op){
			.user_data = 0x6d6178u << 4 | i,
			.session = c.session,
			.dir = i ? CC_DECRYPT : CC_ENCRYPT,
			.src = o[i].src.base,
			.dst = i ? NULL : o[i].dst.base,
			.len = c.len,
			.aad = o[i].aad,
			.aad_len = c.aad_len,
			.tag = o[i].tag,
			.iv = c.iv,
			.iv_len = c.iv_len,
		};
	}
	r = fx_run_burst(t->q, ops, 2, comps, BURST_TIMEOUT_MS);
	if (r) {
		fail(t, NULL, "16 MiB op", "burst", r, -1);
		t->fatal = 1;
		goto out;
	}
	for (i = 0; i < 2; i++)
		judge(t, &o[i], "burst, 16 MiB", comps[i].status, comps[i].len);
out:
	for (i = 0; i < 2; i++)
		dop_free(t->q, &o[i]);
	if (!t->fatal)
		run_case_sync(t, &c);
	cc_session_destroy(t->conn, c.session);
	case_free(&c);
}

/* ---- Main ---- */

static const char *default_engine(struct cc_conn *conn, enum cc_alg alg,
				  char *buf)
{
	struct cc_alg_caps *caps;
	unsigned n, i;
	const char *r = NULL;

	if (cc_capabilities_get(conn, &caps, &n))
		return NULL;
	for (i = 0; i < n; i++)
		if (caps[i].alg == alg && caps[i].available &&
		    caps[i].default_engine && caps[i].sessionless) {
			snprintf(buf, FX_ENGINE_NAME_MAX, "%.*s",
				 FX_ENGINE_NAME_MAX - 1, caps[i].engine);
			r = buf;
		}
	cc_capabilities_free(caps);
	return r;
}

int main(void)
{
	struct fx_daemon_params dp = { .workers = 2 };
	struct cc_queue_params qp = {
		.sq_entries = QUEUE_ENTRIES,
		.arena_size = ARENA_SIZE,
	};
	char engines[MC_MAX_ENGINES][FX_ENGINE_NAME_MAX];
	char def[FX_ENGINE_NAME_MAX];
	uint64_t seed = mc_seed_from_env(SEED_DEFAULT), t0;
	struct t t = { 0 };
	struct fx_daemon d;
	unsigned a, z, zacc = 0, zref = 0;
	int n_eng, e, fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed 0x%016llx (set TEST_SEED to reproduce)\n",
	       (unsigned long long)seed);
	if (fx_setup(&d, &dp, "test_diff_modes", &qp, &t.conn, &t.q))
		return FX_EXIT_FAIL;

	for (a = 0; a < mc_n_specs && !t.fatal; a++) {
		const struct mc_spec *s = &mc_specs[a];

		n_eng = mc_engines_for(t.conn, s->alg, engines, MC_MAX_ENGINES);
		if (n_eng <= 0) {
			fprintf(stderr, "FAIL %s: no available engine (%s)\n",
				s->name,
				n_eng < 0 ? cc_strerror(n_eng) : "none listed");
			fails++;
			continue;
		}
		t.def_engine = default_engine(t.conn, s->alg, def);
		if (!t.def_engine) {
			fprintf(stderr,
				"FAIL %s: no default engine that takes "
				"session-less ops\n",
				s->name);
			fails++;
		}
		for (e = 0; e < n_eng && !t.fatal; e++) {
			unsigned long c0 = t.checked, f0 = t.failed;
			unsigned long sl0 = t.n_sessionless, fo0 = t.n_forge;

			t.engine = engines[e];
			t.shown = 0;
			t0 = fx_now_ms();
			run_alg(&t, s, seed);
			for (z = 0;
			     z < sizeof(zvariants) / sizeof(zvariants[0]) &&
			     !t.fatal;
			     z++)
				run_zero_segs(&t, s, &zvariants[z], &zacc,
					      &zref);
			if (!t.fatal)
				run_max_len(&t, s);
			printf("%-20s [%s]: %lu checks, %lu failed (%lu "
			       "session-less ops, %lu forgeries; %llu ms)\n",
			       s->name, t.engine, t.checked - c0, t.failed - f0,
			       t.n_sessionless - sl0, t.n_forge - fo0,
			       (unsigned long long)(fx_now_ms() - t0));
			fsum_print();
		}
	}
	printf("layouts:");
	for (a = 0; a < L_NR; a++)
		printf(" %s %lu%s", layout_name[a], t.n_layout[a],
		       a + 1 < L_NR ? "," : "\n");
	printf("zero-length segments: accepted %u times, refused %u times "
	       "(%zu layouts on every algorithm and engine)\n",
	       zacc, zref, sizeof(zvariants) / sizeof(zvariants[0]));

	if (fx_teardown(&d, t.conn, t.q))
		fails++;
	if (t.failed || !t.checked || t.fatal)
		fails++;
	printf("TOTAL: %lu checks (%lu through cc_crypt), %lu failed%s\n%s\n",
	       t.checked, t.n_sync, t.failed,
	       t.failed ? " (the first few of each algorithm shown)" : "",
	       fails ? "FAILED" : "PASSED");
	if (fails)
		printf("replay with TEST_SEED=0x%016llx\n",
		       (unsigned long long)seed);
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
