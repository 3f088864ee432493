// SPDX-License-Identifier: MIT
/*
 * NIST CAVP vectors for every AES mode the service offers beside GCM
 * (which test_nist_gcm covers), as shipped by Debian's
 * python3-cryptography-vectors, through a real daemon:
 *
 * - CBC/CBC*.rsp (GFSbox, KeySbox, MMT, VarKey, VarTxt; [ENCRYPT] and
 *   [DECRYPT]) as aes-cbc, and again as aes-cbc-null (CBC with a null
 *   digest: the same cipher);
 * - ECB/ECB*.rsp, the same five kinds, as aes-ecb;
 * - CTR/aes-*-ctr.txt (the RFC 3686 vectors, SP 800-38A layout: the IV is
 *   the whole initial counter block), encrypted and decrypted back;
 * - XTS/tweak-128hexstr and XTS/tweak-dataunitseqno (there the tweak is
 *   the sequence number as a little-endian 128-bit integer, dm-crypt's
 *   plain64). Data units whose bit length is not a multiple of 8 cannot be
 *   expressed in bytes: they are counted as not applicable. Units under
 *   16 bytes must be refused per op with CC_ERR_BAD_PARAM;
 * - GMAC from the GCM files: gcmEncryptExtIV* records with PTlen 0 give
 *   GMAC tags over their AAD, which are generated and then verified (and
 *   verified with a flipped bit, which must fail); gcmDecrypt* records
 *   with PTlen 0 are verified, and their FAIL records must fail
 *   verification. Every IV length (8, 96 and 1024 bits) runs on the
 *   engines that list it (longer than 128 bits: in the arena); on the
 *   others it must be refused with CC_ERR_BAD_PARAM.
 *
 * Every vector runs on every engine that cc_capabilities_get() lists as
 * available for the algorithm, once through cc_crypt() and once through a
 * burst of up to BATCH vectors per enqueue (completion order checked by
 * the fixture), flat, in place, and as scatter-gather lists.
 *
 * Exit: 0 all passed, 1 any mismatch, 77 vectors not installed.
 */
#include "cavp_gcm.h"
#include "cavp_modes.h"
#include "fixture.h"
#include "modes_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AES_DIR_DEFAULT                                                        \
	"/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES"

#define BATCH 96 /* vectors per burst */
#define QUEUE_ENTRIES 128
#define BURST_TIMEOUT_MS 20000
#define SHOW_FAILURES 12
#define MAX_KATS 8192 /* per file and algorithm; the largest has 4725 */
#define MAX_TALLIES 32

/* What the service must do with a vector. */
enum kx {
	KX_OK,	      /* exact output and tag */
	KX_AUTH_FAIL, /* verification fails */
	KX_BAD_PARAM, /* refused per op */
};

struct kat {
	const char *file;
	unsigned line, count;
	const char *what; /* GMAC: generate, verify, forged; else NULL */
	enum cc_dir dir;
	struct mc_key key;
	uint8_t iv[MC_IV_MAX];
	unsigned iv_len;
	uint8_t in[MV_DATA_MAX];
	uint8_t want[MV_DATA_MAX]; /* the output, when the alg writes one */
	uint32_t len;
	uint8_t tag[MC_TAG_MAX]; /* encrypt: expected; decrypt: presented */
	enum kx expect;
	enum kx gmac_expect; /* GMAC: expect on an engine that takes its IV */

	uint32_t session;
	int has_session;
};

struct counts {
	unsigned long run, passed, failed, rejected;
};

/* One algorithm on one engine, over all files. */
struct tally {
	enum cc_alg alg;
	char engine[FX_ENGINE_NAME_MAX];
	unsigned long vectors, na;
	struct counts sync, burst;
};

struct ctx {
	struct cc_conn *conn;
	struct cc_queue *q;
	const char *engine;
	struct tally *t;
	unsigned long batches;
	unsigned shown;
	int fatal; /* the queue broke: stop */
};

static struct tally tallies[MAX_TALLIES];
static unsigned n_tallies;
static int fails;

static struct tally *tally_for(enum cc_alg alg, const char *engine)
{
	unsigned i;

	for (i = 0; i < n_tallies; i++)
		if (tallies[i].alg == alg && !strcmp(tallies[i].engine, engine))
			return &tallies[i];
	if (n_tallies == MAX_TALLIES) {
		fprintf(stderr, "FAIL: too many algorithm/engine pairs\n");
		exit(FX_EXIT_FAIL);
	}
	tallies[n_tallies].alg = alg;
	snprintf(tallies[n_tallies].engine, FX_ENGINE_NAME_MAX, "%.*s",
		 FX_ENGINE_NAME_MAX - 1, engine);
	return &tallies[n_tallies++];
}

/* ---- Judging ---- */

static void show_failure(struct ctx *c, const char *path, const struct kat *k,
			 const char *why, int status, const uint8_t *out,
			 const uint8_t *tag)
{
	const struct mc_spec *s = mc_spec_of(k->key.alg);
	unsigned tl = mc_tag_len(&k->key);

	if (c->shown++ >= SHOW_FAILURES)
		return;
	fprintf(stderr,
		"FAIL %s:%u COUNT=%u %s%s%s engine=%s path=%s: %s (status %d: "
		"%s)\n",
		k->file, k->line, k->count, s->name, k->what ? " " : "",
		k->what ? k->what : "", c->engine, path, why, status,
		cc_strerror(status));
	fprintf(stderr, "    dir      = %s\n",
		k->dir == CC_ENCRYPT ? "encrypt" : "decrypt");
	mc_print_hex(stderr, "key", k->key.key, k->key.key_len);
	mc_print_hex(stderr, "iv", k->iv, k->iv_len);
	mc_print_hex(stderr, "in", k->in, k->len);
	if (s->writes_data)
		mc_print_hex(stderr, "want", k->want, k->len);
	if (tl)
		mc_print_hex(stderr, "tag", k->tag, tl);
	if (out && s->writes_data)
		mc_print_hex(stderr, "got out", out, k->len);
	if (tag && tl && k->dir == CC_ENCRYPT)
		mc_print_hex(stderr, "got tag", tag, tl);
}

/*
 * The verdict on a result both paths share. out is the gathered output
 * (ignored for GMAC); tag holds MC_TAG_MAX + MC_GUARD bytes. folded: the
 * path may fold CC_ERR_BAD_PARAM into -EINVAL (cc_crypt()).
 */
static const char *judge(const struct kat *k, int status, const uint8_t *out,
			 const uint8_t *tag, int folded)
{
	const struct mc_spec *s = mc_spec_of(k->key.alg);
	unsigned tl = mc_tag_len(&k->key);

	switch (k->expect) {
	case KX_BAD_PARAM:
		if (status == CC_ERR_BAD_PARAM || (folded && status == -EINVAL))
			return NULL;
		return "not refused with CC_ERR_BAD_PARAM";
	case KX_AUTH_FAIL:
		if (status != CC_ERR_AUTH_FAILED)
			return "forgery not rejected with CC_ERR_AUTH_FAILED";
		if (s->writes_data && mc_first_not(out, 0, k->len) >= 0)
			return "output not zeroed after auth failure";
		return NULL;
	case KX_OK:
		break;
	}
	if (status != CC_OK)
		return "operation failed";
	if (s->writes_data && memcmp(out, k->want, k->len))
		return k->dir == CC_ENCRYPT ? "ciphertext mismatch"
					    : "plaintext mismatch";
	if (tl && k->dir == CC_ENCRYPT && memcmp(tag, k->tag, tl))
		return "tag mismatch";
	if (tl && k->dir == CC_ENCRYPT &&
	    mc_first_not(tag + tl, MC_CANARY, MC_TAG_MAX + MC_GUARD - tl) >= 0)
		return "wrote more than tag_len tag bytes";
	return NULL;
}

static void count(struct ctx *c, struct counts *n, const char *path,
		  const struct kat *k, const char *why, int status,
		  const uint8_t *out, const uint8_t *tag)
{
	n->run++;
	if (why) {
		n->failed++;
		show_failure(c, path, k, why, status, out, tag);
	} else if (k->expect == KX_BAD_PARAM) {
		n->rejected++;
	} else {
		n->passed++;
	}
}

/* ---- cc_crypt() ---- */

static void run_sync(struct ctx *c, const struct kat *k)
{
	const struct mc_spec *s = mc_spec_of(k->key.alg);
	uint8_t out[MV_DATA_MAX + MC_GUARD], tag[MC_TAG_MAX + MC_GUARD];
	unsigned tl = mc_tag_len(&k->key);
	/* GMAC writes nothing: out may be NULL, and when it is not it
	 * must stay as it was. Try both. */
	int out_null = !k->len || (!s->writes_data && (k->count & 1));
	const char *why;
	int r;

	memset(out, MC_CANARY, sizeof(out));
	memset(tag, MC_CANARY, sizeof(tag));
	if (tl && k->dir == CC_DECRYPT)
		memcpy(tag, k->tag, tl);
	r = fx_crypt(c->conn, k->session, k->dir, k->iv_len ? k->iv : NULL,
		     k->iv_len, NULL, 0, k->len ? k->in : NULL,
		     out_null ? NULL : out, k->len, tl ? tag : NULL);
	why = judge(k, r, out, tag, 1);
	if (!why && s->writes_data &&
	    mc_first_not(out + k->len, MC_CANARY, MC_GUARD) >= 0)
		why = "wrote past the end of the output";
	if (!why && !s->writes_data && mc_first_not(out, MC_CANARY, 64) >= 0)
		why = "GMAC wrote to the output buffer";
	count(c, &c->t->sync, "sync", k, why, r, out, tag);
}

/* ---- Bursts ---- */

struct slot {
	struct mc_layout src, dst;
	int in_place;
	uint8_t *tag; /* arena, MC_TAG_MAX + MC_GUARD */
	uint8_t *iv;  /* arena: an IV longer than a descriptor holds */
};

static void slot_free(struct cc_queue *q, struct slot *s)
{
	mc_layout_free(q, &s->src);
	mc_layout_free(q, &s->dst);
	if (s->tag)
		cc_buf_free(q, s->tag);
	if (s->iv)
		cc_buf_free(q, s->iv);
	s->tag = s->iv = NULL;
}

static const char *const variant_name[4] = {
	"burst-flat",
	"burst-inplace",
	"burst-sgl",
	"burst-sgl-inplace",
};

/* Each vector takes one of four layouts, by its position and count, so
 * that consecutive records of a file differ. */
static unsigned variant_of(const struct kat *k, unsigned pos)
{
	return (pos + k->count) % 4;
}

static int slot_fill(struct ctx *c, const struct kat *k, unsigned pos,
		     struct slot *s, struct cc_op *op, uint64_t ud)
{
	unsigned v = variant_of(k, pos), tl = mc_tag_len(&k->key);
	unsigned nseg = k->len >= 2 ? 2 + k->count % 3 : 0;
	unsigned dseg = k->len >= 1 ? 1 + (k->count + 1) % 4 : 0;
	int r;

	memset(s, 0, sizeof(*s));
	if (nseg > k->len)
		nseg = k->len;
	if (dseg > k->len)
		dseg = k->len;
	s->in_place = v == 1 || v == 3;
	r = mc_layout_alloc(c->q, &s->src, k->len, v >= 2 ? nseg : 0, 0);
	if (!r && !s->in_place)
		r = mc_layout_alloc(c->q, &s->dst, k->len, v >= 2 ? dseg : 0,
				    0);
	s->tag = r ? NULL : cc_buf_alloc(c->q, MC_TAG_MAX + MC_GUARD);
	if (!r && k->iv_len > CC_IV_INLINE)
		s->iv = cc_buf_alloc(c->q, k->iv_len);
	if (r || !s->tag || (k->iv_len > CC_IV_INLINE && !s->iv)) {
		slot_free(c->q, s);
		return -ENOMEM;
	}
	if (s->iv)
		memcpy(s->iv, k->iv, k->iv_len);
	mc_layout_write(&s->src, k->in);
	memset(s->tag, MC_CANARY, MC_TAG_MAX + MC_GUARD);
	if (tl && k->dir == CC_DECRYPT)
		memcpy(s->tag, k->tag, tl);

	*op = (struct cc_op){
		.user_data = ud,
		.session = k->session,
		.dir = k->dir,
		.len = k->len,
		.tag = tl ? s->tag : NULL,
		.iv = s->iv	  ? s->iv
		      : k->iv_len ? k->iv
				  : NULL,
		.iv_len = k->iv_len,
	};
	mc_layout_to_op(&s->src, op, 0);
	if (!s->in_place) {
		mc_layout_to_op(&s->dst, op, 1);
	} else if ((k->count / 4) & 1) {
		/* The other spelling of "in place": dst names src. */
		op->dst = (void *)op->src;
		op->dst_sgl = op->src_sgl;
		op->dst_nseg = op->src_nseg;
	}
	return 0;
}

static void slot_judge(struct ctx *c, const struct kat *k, unsigned pos,
		       struct slot *s, const struct cc_completion *comp)
{
	const struct mc_spec *s_ = mc_spec_of(k->key.alg);
	uint8_t out[MV_DATA_MAX], src[MV_DATA_MAX];
	const char *why;
	long off;

	mc_layout_read(s->in_place ? &s->src : &s->dst, out);
	mc_layout_read(&s->src, src);
	why = judge(k, comp->status, out, s->tag, 0);
	if (!why && (off = mc_layout_canary(&s->src)) >= 0)
		why = "wrote outside the source segments";
	if (!why && !s->in_place && (off = mc_layout_canary(&s->dst)) >= 0)
		why = "wrote outside the destination segments";
	if (!why && !s->in_place && memcmp(src, k->in, k->len))
		why = "out of place, but the source changed";
	if (!why && !s_->writes_data && s->in_place &&
	    memcmp(src, k->in, k->len))
		why = "GMAC changed its data";
	if (!why && !s_->writes_data && !s->in_place &&
	    mc_first_not(out, MC_CANARY, k->len) >= 0)
		why = "GMAC wrote to the destination";
	if (!why && s_->writes_data && k->expect == KX_OK &&
	    comp->len != k->len)
		why = "completion length differs from the payload length";
	count(c, &c->t->burst, variant_name[variant_of(k, pos)], k, why,
	      comp->status, out, s->tag);
}

static void run_burst(struct ctx *c, struct kat *k, unsigned n)
{
	static struct cc_op ops[BATCH];
	static struct cc_completion comps[BATCH];
	static struct slot slots[BATCH];
	unsigned idx[BATCH], nops = 0, i;
	int r;

	for (i = 0; i < n; i++) {
		uint64_t ud = 0x6d6f6465ull << 32 |
			      (uint64_t)(c->batches & 0xffff) << 16 | i;

		if (!k[i].has_session)
			continue;
		if (slot_fill(c, &k[i], i, &slots[nops], &ops[nops], ud)) {
			fprintf(stderr, "FAIL: arena exhausted\n");
			c->t->burst.run++;
			c->t->burst.failed++;
			continue;
		}
		idx[nops++] = i;
	}
	c->batches++;
	r = fx_run_burst(c->q, ops, nops, comps, BURST_TIMEOUT_MS);
	for (i = 0; i < nops; i++) {
		if (r == 0) {
			slot_judge(c, &k[idx[i]], idx[i], &slots[i], &comps[i]);
		} else {
			c->t->burst.run++;
			c->t->burst.failed++;
		}
		slot_free(c->q, &slots[i]);
	}
	if (r) {
		fprintf(stderr,
			"FAIL %s: burst of %u ops: %s; the queue is unusable, "
			"stopping\n",
			k[0].file, nops, cc_strerror(r));
		c->fatal = 1;
	}
}

static void run_batch(struct ctx *c, struct kat *k, unsigned n)
{
	unsigned i;
	int r;

	for (i = 0; i < n; i++) {
		r = mc_session(c->conn, &k[i].key, c->engine, &k[i].session);
		k[i].has_session = r == 0;
		if (r == 0)
			continue;
		/* Every key and tag length in the files is in the spec. */
		c->t->sync.run++;
		c->t->sync.failed++;
		c->t->burst.run++;
		c->t->burst.failed++;
		show_failure(c, "session", &k[i], "cc_session_create failed", r,
			     NULL, NULL);
	}
	for (i = 0; i < n; i++)
		if (k[i].has_session)
			run_sync(c, &k[i]);
	if (!c->fatal)
		run_burst(c, k, n);
	for (i = 0; i < n; i++) {
		if (!k[i].has_session)
			continue;
		r = cc_session_destroy(c->conn, k[i].session);
		if (r) {
			fprintf(stderr, "FAIL: cc_session_destroy: %s\n",
				cc_strerror(r));
			fails++;
		}
		k[i].has_session = 0;
	}
}

/* ---- Loading ---- */

static struct kat *kat_add(struct kat *kats, unsigned *n, const char *file,
			   unsigned line, unsigned cnt, enum cc_alg alg)
{
	struct kat *k;

	if (*n == MAX_KATS)
		return NULL;
	k = &kats[(*n)++];
	memset(k, 0, sizeof(*k));
	k->file = file;
	k->line = line;
	k->count = cnt;
	k->key.alg = alg;
	return k;
}

/* CBC, ECB, CTR and XTS files. Returns 0 or -errno; *na counts XTS
 * records that bytes cannot express. */
static int load_modes(const char *path, const char *file, enum mv_kind kind,
		      unsigned key_len, enum cc_alg alg, struct kat *kats,
		      unsigned *n, unsigned long *na)
{
	const struct mc_spec *s = mc_spec_of(alg);
	struct mv_reader rd;
	struct mode_vec v;
	int r, pass;

	r = mv_open(&rd, path, file, kind, key_len);
	if (r)
		return r;
	while ((r = mv_next(&rd, &v)) > 0) {
		if (v.bits % 8) {
			(*na)++;
			continue;
		}
		/* CTR files hold encryptions only: decrypt each back too. */
		for (pass = 0; pass < (alg == CC_ALG_AES_CTR ? 2 : 1); pass++) {
			int dec = v.decrypt ^ pass;
			struct kat *k =
				kat_add(kats, n, file, v.line, v.count, alg);

			if (!k) {
				mv_close(&rd);
				return -E2BIG;
			}
			k->dir = dec ? CC_DECRYPT : CC_ENCRYPT;
			memcpy(k->key.key, v.key, v.key_len);
			k->key.key_len = v.key_len;
			k->iv_len = kind == MV_BLOCK ? 0 : 16;
			memcpy(k->iv, v.iv, k->iv_len);
			k->len = v.len;
			memcpy(k->in, dec ? v.ct : v.pt, v.len);
			memcpy(k->want, dec ? v.pt : v.ct, v.len);
			k->expect = mc_len_ok(s, v.len) ? KX_OK : KX_BAD_PARAM;
		}
	}
	mv_close(&rd);
	return r;
}

/* GMAC records out of a GCM file: PTlen 0, every IV length. */
static int load_gmac(const char *path, const char *file, int decrypt,
		     struct kat *kats, unsigned *n)
{
	struct cavp p;
	struct gcm_vec v;
	int r;

	r = cavp_open(&p, path, file, decrypt);
	if (r)
		return r;
	while ((r = cavp_next(&p, &v)) > 0) {
		/* generate, verify, forged; a decrypt FAIL record only
		 * verifies. */
		static const char *const what[3] = { "generate", "verify",
						     "forged" };
		unsigned i;

		if (v.ct_len != 0)
			continue;
		for (i = 0; i < 3; i++) {
			struct kat *k;

			if (v.fail && i != 1)
				continue;
			k = kat_add(kats, n, file, v.line, v.count,
				    CC_ALG_AES_GMAC);
			if (!k) {
				cavp_close(&p);
				return -E2BIG;
			}
			k->what = what[i];
			k->dir = i == 0 ? CC_ENCRYPT : CC_DECRYPT;
			memcpy(k->key.key, v.key, v.key_len);
			k->key.key_len = v.key_len;
			k->key.tag_len = v.tag_len;
			memcpy(k->iv, v.iv, v.iv_len);
			k->iv_len = v.iv_len;
			memcpy(k->in, v.aad, v.aad_len);
			k->len = v.aad_len;
			memcpy(k->tag, v.tag, v.tag_len);
			k->gmac_expect =
				v.fail || i == 2 ? KX_AUTH_FAIL : KX_OK;
			if (i == 2)
				mc_flip(k->tag,
					(v.count * 7) % (8 * v.tag_len));
		}
	}
	cavp_close(&p);
	return r;
}

/* ---- Driving ---- */

struct file_set {
	const char *path; /* relative to the AES directory */
	const char *file; /* for messages */
	enum mv_kind kind;
	unsigned key_len;
	int gmac; /* 1 encrypt file, 2 decrypt file; 0 a mode file */
};

static void run_file(struct cc_conn *conn, struct cc_queue *q, const char *dir,
		     const struct file_set *f, enum cc_alg alg)
{
	static struct kat kats[MAX_KATS];
	char engines[MC_MAX_ENGINES][FX_ENGINE_NAME_MAX];
	char path[4096];
	unsigned long na = 0;
	unsigned n = 0, i, e;
	int r, n_eng;

	snprintf(path, sizeof(path), "%s/%s", dir, f->path);
	r = f->gmac ? load_gmac(path, f->file, f->gmac == 2, kats, &n)
		    : load_modes(path, f->file, f->kind, f->key_len, alg, kats,
				 &n, &na);
	if (r < 0 || (!n && !na)) {
		fprintf(stderr, "FAIL %s: %s\n", path,
			r < 0 ? strerror(-r) : "no vectors");
		fails++;
		return;
	}
	n_eng = mc_engines_for(conn, alg, engines, MC_MAX_ENGINES);
	if (n_eng <= 0) {
		fprintf(stderr, "FAIL %s: no engine is available for %s (%s)\n",
			f->file, cc_alg_name(alg) ? cc_alg_name(alg) : "?",
			n_eng < 0 ? cc_strerror(n_eng) : "none listed");
		fails++;
		return;
	}
	for (e = 0; e < (unsigned)n_eng; e++) {
		struct ctx c = {
			.conn = conn,
			.q = q,
			.engine = engines[e],
			.t = tally_for(alg, engines[e]),
		};
		struct counts s0 = c.t->sync, b0 = c.t->burst;

		c.t->vectors += n;
		c.t->na += na;
		/* GMAC: what this engine does with each record's IV (the
		 * files' lengths: 8, 96, 1024 bits). */
		int iv_ok[MC_IV_MAX + 1] = { 0 };
		for (i = 1; f->gmac && i <= MC_IV_MAX; i++)
			iv_ok[i] = fx_iv_ok(conn, alg, engines[e], i) == 1;
		for (i = 0; f->gmac && i < n; i++)
			kats[i].expect = iv_ok[kats[i].iv_len]
						 ? kats[i].gmac_expect
						 : KX_BAD_PARAM;
		for (i = 0; i < n && !c.fatal; i += BATCH)
			run_batch(&c, kats + i, n - i < BATCH ? n - i : BATCH);
		printf("%-22s %-20s [%s]: %4u ops, %3lu n/a; sync %lu/%lu "
		       "passed, burst %lu/%lu passed\n",
		       f->file, mc_spec_of(alg)->name, engines[e], n, na,
		       c.t->sync.passed + c.t->sync.rejected -
			       (s0.passed + s0.rejected),
		       c.t->sync.run - s0.run,
		       c.t->burst.passed + c.t->burst.rejected -
			       (b0.passed + b0.rejected),
		       c.t->burst.run - b0.run);
		/* Every op must have been judged on both paths. */
		if (c.fatal || c.t->sync.failed != s0.failed ||
		    c.t->burst.failed != b0.failed ||
		    c.t->sync.run - s0.run != n || c.t->burst.run - b0.run != n)
			fails++;
		if (c.fatal)
			exit(FX_EXIT_FAIL);
	}
}

static unsigned build_file_sets(struct file_set *fs, char names[][64])
{
	static const char *const kinds[] = { "GFSbox", "KeySbox", "MMT",
					     "VarKey", "VarTxt" };
	static const unsigned bits[] = { 128, 192, 256 };
	static const char *const tweaks[] = { "tweak-128hexstr",
					      "tweak-dataunitseqno" };
	unsigned n = 0, i, j, m;

	for (m = 0; m < 2; m++) /* CBC, ECB */
		for (i = 0; i < 5; i++)
			for (j = 0; j < 3; j++) {
				snprintf(names[n], 64, "%s/%s%s%u.rsp",
					 m ? "ECB" : "CBC", m ? "ECB" : "CBC",
					 kinds[i], bits[j]);
				fs[n] = (struct file_set){
					.path = names[n],
					.file = names[n] + 4,
					.kind = m ? MV_BLOCK : MV_BLOCK_IV,
					.key_len = bits[j] / 8,
				};
				n++;
			}
	for (j = 0; j < 3; j++) {
		snprintf(names[n], 64, "CTR/aes-%u-ctr.txt", bits[j]);
		fs[n] = (struct file_set){ .path = names[n],
					   .file = names[n] + 4,
					   .kind = MV_BLOCK_IV,
					   .key_len = bits[j] / 8 };
		n++;
	}
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++) {
			snprintf(names[n], 64, "XTS/%s/XTSGenAES%u.rsp",
				 tweaks[i], j ? 256 : 128);
			fs[n] = (struct file_set){ .path = names[n],
						   .file = names[n] + 4,
						   .kind = MV_XTS,
						   .key_len = j ? 64 : 32 };
			n++;
		}
	for (i = 0; i < 2; i++)
		for (j = 0; j < 3; j++) {
			snprintf(names[n], 64, "GCM/gcm%s%u.rsp",
				 i ? "Decrypt" : "EncryptExtIV", bits[j]);
			fs[n] = (struct file_set){ .path = names[n],
						   .file = names[n] + 4,
						   .gmac = 1 + i };
			n++;
		}
	return n;
}

/* The algorithms a file runs as. */
static unsigned algs_of(const struct file_set *f, enum cc_alg *algs)
{
	if (f->gmac) {
		algs[0] = CC_ALG_AES_GMAC;
		return 1;
	}
	if (f->kind == MV_XTS) {
		algs[0] = CC_ALG_AES_XTS;
		return 1;
	}
	if (f->kind == MV_BLOCK) {
		algs[0] = CC_ALG_AES_ECB;
		return 1;
	}
	if (!strncmp(f->path, "CTR/", 4)) {
		algs[0] = CC_ALG_AES_CTR;
		return 1;
	}
	algs[0] = CC_ALG_AES_CBC;
	algs[1] = CC_ALG_AES_CBC_NULL;
	return 2;
}

static void print_tallies(void)
{
	unsigned i;

	printf("\n%-20s %-8s %7s %5s | %-32s | %-32s\n", "algorithm", "engine",
	       "ops", "n/a", "sync run/passed/rejected/failed",
	       "burst run/passed/rejected/failed");
	for (i = 0; i < n_tallies; i++) {
		const struct tally *t = &tallies[i];

		printf("%-20s %-8s %7lu %5lu | %7lu %7lu %7lu %7lu | %7lu "
		       "%7lu %7lu %7lu\n",
		       mc_spec_of(t->alg)->name, t->engine, t->vectors, t->na,
		       t->sync.run, t->sync.passed, t->sync.rejected,
		       t->sync.failed, t->burst.run, t->burst.passed,
		       t->burst.rejected, t->burst.failed);
	}
}

int main(void)
{
	static struct file_set fs[64];
	static char names[64][64];
	const char *dir = getenv("NIST_AES_DIR");
	struct fx_daemon_params dp = { .workers = 2 };
	struct cc_queue_params qp = { .sq_entries = QUEUE_ENTRIES };
	struct fx_daemon d;
	struct cc_conn *conn;
	struct cc_queue *q;
	unsigned n_fs, f, a, n_algs, i;
	enum cc_alg algs[2];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!dir || !*dir)
		dir = AES_DIR_DEFAULT;
	if (access(dir, R_OK | X_OK) < 0) {
		printf("SKIP: no NIST AES vectors at %s (install "
		       "python3-cryptography-vectors)\n",
		       dir);
		return FX_EXIT_SKIP;
	}

	if (fx_setup(&d, &dp, "test_nist_modes", &qp, &conn, &q))
		return FX_EXIT_FAIL;

	n_fs = build_file_sets(fs, names);
	for (f = 0; f < n_fs; f++) {
		n_algs = algs_of(&fs[f], algs);
		for (a = 0; a < n_algs; a++)
			run_file(conn, q, dir, &fs[f], algs[a]);
	}
	print_tallies();
	for (i = 0; i < n_tallies; i++)
		if (!tallies[i].sync.passed || !tallies[i].burst.passed)
			fails++;
	if (!n_tallies)
		fails++;

	if (fx_teardown(&d, conn, q))
		fails++;
	printf("%s\n", fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
