// SPDX-License-Identifier: MIT
/*
 * What a stream must refuse, and how (include/cryptod/ring_abi.h's stream
 * rules, daemon/engines/stream.h's length rules): the fields of a piece,
 * crafted through the zero-copy API and, where the library might refuse a
 * field before the daemon sees it, edited in the ring after cc_submit()
 * staged it and before cc_flush() published it (bad_stream.h has the
 * harness, and the background streams no failure may disturb):
 *
 * - a MIDDLE with an IV, AAD or a tag: an error, and the stream closed;
 * - pieces with scatter-gather or session-less flags: CC_ERR_BAD_DESC;
 * - a bad tag on LAST (AEADs, MACs, digests): CC_ERR_AUTH_FAILED, that
 *   piece's output zeroed, the earlier pieces' right, the stream closed;
 * - a change of direction or session inside a stream, a CBC piece of
 *   part of a block, CCM pieces past or short of the announced length, an
 *   XTS middle piece of part of a unit: an error (BAD_PARAM where
 *   stream.h says so), and the stream closed;
 * - the capabilities' stream flag, and algorithms that do not stream.
 *
 * Exit: 0 all passed, 1 any failure.
 */
#include "bad_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A MIDDLE with an IV, AAD or tag: an error, and the stream closed. */
static void case_middle_fields(struct t *t, const struct fx_daemon *dm)
{
	const char *ctx = "MIDDLE with FIRST's or LAST's fields";
	uint8_t *aad = cc_buf_alloc(t->q, 64), *tag = cc_buf_alloc(t->q, 64);
	static const char *const what[3] = { "an IV", "AAD", "a tag" };

	if (!aad || !tag) {
		expect(t, 0, ctx, "arena");
		return;
	}
	memset(aad, 0x61, 64);
	memset(tag, 0x62, 64);
	/* through the library: IV and AAD (cc_op has no tag length: a tag
	 * on a MIDDLE only through the raw edit below) */
	for (int f = 0; f < 2; f++) {
		struct item it[8];
		unsigned n = 0;
		struct cs c;
		struct item *x;
		char w[96];

		snprintf(w, sizeof(w), "MIDDLE with %s (cc_op)", what[f]);
		if (!cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 3, 32)) {
			cs_next(&c, it, &n, "FIRST");
			x = cs_piece(&c, it, &n, w, 0, 32, 1, ANY_ERROR, 0);
			x->enq_ok = 1;
			if (f == 0) {
				x->op.iv = c.m.iv;
				x->op.iv_len = 12;
			} else {
				x->op.aad = aad;
				x->op.aad_len = 16;
			}
			run_items(t, t->q, ctx, it, n);
			n = 0;
			if (it[1].enq) {
				/* the library refused it: the daemon never
				 * saw it, the stream must be intact */
				cs_next(&c, it, &n, "MIDDLE after the refusal");
				cs_next(&c, it, &n, "LAST after the refusal");
				run_items(t, t->q, w, it, n);
				if (it[0].status == CC_OK &&
				    it[1].status == CC_OK)
					cs_check(t, &c, w);
			} else {
				cs_piece(&c, it, &n, "MIDDLE after it", 0, 32,
					 1, CC_ERR_NO_STREAM, 0);
				cs_piece(&c, it, &n, "LAST after it",
					 CC_STREAM_LAST, 32, 1,
					 CC_ERR_NO_STREAM, 0);
				run_items(t, t->q, w, it, n);
			}
		}
		cs_free(t, &c);
	}
	/* past the library: edited descriptors */
	for (int f = 0; f < 3; f++) {
		struct item it[4];
		unsigned n = 0;
		struct cs c;
		struct cc_op op;
		struct edit e = { 0 };
		char w[96];
		int st;

		snprintf(w, sizeof(w), "MIDDLE with %s (edited descriptor)",
			 what[f]);
		if (f == 0)
			e.iv_len = 12;
		else if (f == 1)
			e.aad_len = 16, e.aad_off = arena_off(t->q, aad);
		else
			e.tag_len = 16, e.tag_off = arena_off(t->q, tag);
		if (!cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 3, 32)) {
			cs_next(&c, it, &n, "FIRST");
			run_items(t, t->q, ctx, it, n);
			sc_piece_op(&c.s, &op, 0, 32, 32, 0);
			st = edited(t, ctx, &op, &e);
			expect(t, st != CC_OK, ctx,
			       "%s: %d (%s), want an error", w, st,
			       cc_strerror(st));
			n = 0;
			cs_piece(&c, it, &n, "MIDDLE after it", 0, 32, 1,
				 CC_ERR_NO_STREAM, 0);
			cs_piece(&c, it, &n, "LAST after it", CC_STREAM_LAST,
				 32, 1, CC_ERR_NO_STREAM, 0);
			run_items(t, t->q, w, it, n);
		}
		cs_free(t, &c);
	}
	cc_buf_free(t->q, aad);
	cc_buf_free(t->q, tag);
}

/* After a BAD_DESC on a MIDDLE of c (at offset 32 of 3 x 32): the next
 * piece is NO_STREAM (the stream ended), or OK and then the stream must
 * finish right (the refused descriptor was no piece of it). */
static void after_desc_refusal(struct t *t, struct cs *c, const char *w)
{
	struct item it[2];
	unsigned n = 0;

	cs_next(c, it, &n, "MIDDLE after it");
	it[0].nacc = 2;
	it[0].acc[1] = CC_ERR_NO_STREAM;
	run_items(t, t->q, w, it, n);
	if (it[0].status == CC_ERR_NO_STREAM) {
		printf("  %s: refused, and the stream ended\n", w);
		return;
	}
	if (it[0].status != CC_OK)
		return;
	printf("  %s: refused, and the stream went on\n", w);
	n = 0;
	cs_next(c, it, &n, "LAST");
	run_items(t, t->q, w, it, n);
	if (it[0].status == CC_OK)
		cs_check(t, c, w);
}

/* Scatter-gather and session-less pieces: BAD_DESC. */
static void case_bad_desc(struct t *t, const struct fx_daemon *dm)
{
	const char *ctx = "scatter-gather or session-less piece";
	struct cc_sgl_entry *sgl = cc_buf_alloc(t->q, 2 * sizeof(*sgl));
	struct cc_sessionless *sl = cc_buf_alloc(t->q, sizeof(*sl));
	struct item it[8];
	unsigned n = 0;
	struct cs c, d;
	struct item *x;
	int st;

	memset(&d, 0, sizeof(d));
	if (!sgl || !sl) {
		expect(t, 0, ctx, "arena");
		goto out;
	}
	memset(sl, 0, sizeof(*sl));
	if (cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 3, 32) ||
	    cs_make(t, &d, t->main_v, t->q, CC_ENCRYPT, 3, 32))
		goto out;
	sl->alg = (uint8_t)c.m.v->alg;
	sl->key_len = (uint8_t)(c.m.key_len < 64 ? c.m.key_len : 64);
	memcpy(sl->key, c.m.key, sl->key_len);
	cc_sgl_set(t->q, sgl, 0, c.s.src, 16);
	cc_sgl_set(t->q, sgl, 1, c.s.src + 16, 16);

	/* a FIRST with a source list: refused, the stream never opens */
	x = cs_piece(&c, it, &n, "FIRST with a source list", CC_STREAM_FIRST,
		     32, 1, CC_ERR_BAD_DESC, 0);
	x->op.src_sgl = sgl;
	x->op.src_nseg = 2;
	x->op.dst = NULL;
	x->enq_ok = 1;
	cs_piece(&c, it, &n, "MIDDLE after it", 0, 32, 1, CC_ERR_NO_STREAM, 0);
	/* a session-less MIDDLE on an open stream */
	cs_next(&d, it, &n, "FIRST");
	x = cs_piece(&d, it, &n, "session-less MIDDLE", 0, 32, 1,
		     CC_ERR_BAD_DESC, 0);
	x->op.session = 0;
	x->op.sessionless = sl;
	x->enq_ok = 1;
	run_items(t, t->q, ctx, it, n);
	/* ring_abi.h: "any error in a piece of an open stream ends that
	 * stream"; a refused descriptor may be taken as no piece of it:
	 * either, as long as what follows is consistent */
	after_desc_refusal(t, &d, "session-less MIDDLE (cc_op)");
	cs_free(t, &c);
	cs_free(t, &d);

	/* past the library */
	for (int f = 0; f < 3; f++) {
		static const char *const w[3] = {
			"FIRST with SRC_SGL (edited descriptor)",
			"FIRST with DST_SGL (edited descriptor)",
			"MIDDLE with SESSIONLESS (edited descriptor)",
		};
		struct edit e = { 0 };
		struct cc_op op;

		if (cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 3, 32))
			break;
		cc_sgl_set(t->q, sgl, 0, c.s.src, 32);
		if (f == 0) {
			e.flags_or = CRD_SQE_F_SRC_SGL;
			e.src_off = arena_off(t->q, sgl);
			e.src_nseg = 1;
		} else if (f == 1) {
			e.flags_or = CRD_SQE_F_DST_SGL;
		} else {
			e.flags_or = CRD_SQE_F_SESSIONLESS;
		}
		n = 0;
		if (f == 2) {
			cs_next(&c, it, &n, "FIRST");
			run_items(t, t->q, w[f], it, n);
			sc_piece_op(&c.s, &op, 0, 32, 32, 0);
		} else {
			sc_piece_op(&c.s, &op, 0, 0, 32, CC_STREAM_FIRST);
		}
		st = edited(t, ctx, &op, &e);
		expect(t, st == CC_ERR_BAD_DESC, ctx,
		       "%s: %d (%s), want BAD_DESC", w[f], st, cc_strerror(st));
		if (f == 2) {
			after_desc_refusal(t, &c, w[f]);
		} else {
			n = 0;
			cs_piece(&c, it, &n, "MIDDLE after it", 0, 32, 1,
				 CC_ERR_NO_STREAM, 0);
			run_items(t, t->q, w[f], it, n);
		}
		cs_free(t, &c);
	}
out:
	if (sgl)
		cc_buf_free(t->q, sgl);
	if (sl)
		cc_buf_free(t->q, sl);
	cs_free(t, &d);
}

/* A bad tag on LAST: AUTH_FAILED, that piece's output zeroed, earlier
 * pieces' output right, the stream closed. */
static void case_bad_tag(struct t *t, const struct fx_daemon *dm)
{
	static const char *const names[] = {
		"aes-gcm-128",	"aes-gcm-256", "chacha20-poly1305",
		"aes-ccm-128",	"hmac-sha256", "sha512",
		"aes-cmac-192",
	};

	for (unsigned v = 0; v < sizeof(names) / sizeof(names[0]); v++) {
		const struct sc_var *var = sc_var_by_name(names[v]);
		char ctx[96];
		struct item it[8];
		unsigned n = 0, i;
		struct cs c;
		int mac = var->kind == SC_MAC;

		if (!usable(t, var))
			continue;
		snprintf(ctx, sizeof(ctx), "bad tag on LAST (%s)", names[v]);
		if (!cs_make(t, &c, var, t->q, CC_DECRYPT, 3, 1000)) {
			mc_flip(c.s.tag, mc_below(8 * c.m.tag_len));
			cs_next(&c, it, &n, "FIRST");
			cs_next(&c, it, &n, "MIDDLE");
			{
				struct cc_op op;

				sc_stream_op(&c.s, &op, 0);
				item_add(it, &n, "LAST with a flipped tag bit",
					 &op, -1, 0, 1, CC_ERR_AUTH_FAILED);
			}
			cs_piece(&c, it, &n, "MIDDLE after it", 0, 16, 1,
				 CC_ERR_NO_STREAM, 0);
			cs_piece(&c, it, &n, "LAST after it", CC_STREAM_LAST,
				 16, 1, CC_ERR_NO_STREAM, 0);
			run_items(t, t->q, ctx, it, n);
			if (!mac && it[0].status == CC_OK &&
			    it[1].status == CC_OK &&
			    it[2].status == CC_ERR_AUTH_FAILED) {
				long off = mc_first_diff(c.s.dst, c.m.pt, 2000);

				expect(t, off < 0, ctx,
				       "the first two pieces' output differs "
				       "from the plaintext at byte %ld",
				       off);
				off = mc_first_not(c.s.dst + 2000, 0, 1000);
				expect(t, off < 0, ctx,
				       "the LAST's output not zeroed (byte %ld "
				       "of 1000)",
				       off);
				off = mc_first_not(c.s.dst + 3000, MC_CANARY,
						   MC_GUARD);
				expect(t, off < 0, ctx,
				       "wrote past the output");
			}
			(void)i;
		}
		cs_free(t, &c);
	}
}

/* Rules of one algorithm's pieces: an error, then the stream closed. */
static void case_piece_rules(struct t *t, const struct fx_daemon *dm)
{
	const struct sc_var *cbc = sc_var_by_name("aes-cbc-128"),
			    *ccm = sc_var_by_name("aes-ccm-128"),
			    *xts = sc_var_by_name("aes-xts-128");
	struct item it[8];
	unsigned n;
	struct cs c, d;
	struct item *x;

	memset(&d, 0, sizeof(d));
	/* a change of direction and of session */
	if (!cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 3, 64) &&
	    !cs_make(t, &d, t->main_v, t->q, CC_ENCRYPT, 3, 64)) {
		n = 0;
		cs_next(&c, it, &n, "FIRST");
		x = cs_piece(&c, it, &n, "MIDDLE decrypting", 0, 64, 1,
			     ANY_ERROR, 0);
		x->op.dir = CC_DECRYPT;
		cs_piece(&c, it, &n, "MIDDLE after it", 0, 64, 1,
			 CC_ERR_NO_STREAM, 0);
		cs_next(&d, it, &n, "FIRST");
		x = cs_piece(&d, it, &n, "MIDDLE of another session", 0, 64, 1,
			     ANY_ERROR, 0);
		x->op.session = c.sid;
		cs_piece(&d, it, &n, "MIDDLE after it", 0, 64, 1,
			 CC_ERR_NO_STREAM, 0);
		run_items(t, t->q, "direction or session changed", it, n);
	}
	cs_free(t, &c);
	cs_free(t, &d);
	/* CBC: part of a block */
	if (usable(t, cbc) && !cs_make(t, &c, cbc, t->q, CC_ENCRYPT, 3, 64)) {
		n = 0;
		cs_next(&c, it, &n, "FIRST");
		cs_piece(&c, it, &n, "MIDDLE of 40 bytes", 0, 40, 1,
			 CC_ERR_BAD_PARAM, 0);
		cs_piece(&c, it, &n, "MIDDLE after it", 0, 64, 1,
			 CC_ERR_NO_STREAM, 0);
		run_items(t, t->q, "aes-cbc piece of part of a block", it, n);
	}
	cs_free(t, &c);
	/* CCM: past the length, short of it */
	if (usable(t, ccm) && !cs_make(t, &c, ccm, t->q, CC_ENCRYPT, 3, 64) &&
	    !cs_make(t, &d, ccm, t->q, CC_ENCRYPT, 3, 64)) {
		n = 0;
		cs_next(&c, it, &n, "FIRST (length 192)");
		cs_piece(&c, it, &n, "MIDDLE of 200 bytes", 0, 200, 1,
			 CC_ERR_BAD_PARAM, 0);
		cs_piece(&c, it, &n, "LAST after it", CC_STREAM_LAST, 64, 1,
			 CC_ERR_NO_STREAM, 0);
		cs_next(&d, it, &n, "FIRST (length 192)");
		cs_piece(&d, it, &n, "LAST at 128 of 192", CC_STREAM_LAST, 64,
			 1, CC_ERR_BAD_PARAM, 0);
		cs_piece(&d, it, &n, "LAST after it", CC_STREAM_LAST, 64, 1,
			 CC_ERR_NO_STREAM, 0);
		run_items(t, t->q, "aes-ccm pieces off the announced length",
			  it, n);
	}
	cs_free(t, &c);
	cs_free(t, &d);
	/* XTS: data units it does not take (16 B .. 1 MiB) */
	if (usable(t, xts) && !cs_make(t, &c, xts, t->q, CC_ENCRYPT, 3, 512)) {
		static const uint32_t units[3] = { 8, (1u << 20) + 16, 0 };

		n = 0;
		for (unsigned u = 0; u < 3; u++) {
			x = cs_piece(&c, it, &n,
				     u == 0 ? "FIRST with a unit of 8 bytes"
				     : u == 1
					     ? "FIRST with a unit of 1 MiB + 16"
					     : "FIRST with no unit (0)",
				     CC_STREAM_FIRST, 512, 1, ANY_ERROR, 0);
			x->op.stream_param = units[u];
			cs_piece(&c, it, &n, "MIDDLE after it", 0, 512, 1,
				 CC_ERR_NO_STREAM, 0);
		}
		run_items(t, t->q, "aes-xts data units out of range", it, n);
	}
	cs_free(t, &c);
	/* a piece longer than an op may be (edited: the library checks
	 * the arena) */
	if (!cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 3, 64)) {
		struct edit e = { 0 };
		struct cc_op op;
		int st;

		n = 0;
		cs_next(&c, it, &n, "FIRST");
		run_items(t, t->q, "a piece past 16 MiB", it, n);
		sc_piece_op(&c.s, &op, 0, 64, 64, 0);
		e.len = (16u << 20) + 1;
		st = edited(t, "a piece past 16 MiB", &op, &e);
		expect(t, st == CC_ERR_BAD_PARAM || st == CC_ERR_BAD_RANGE,
		       "a piece past 16 MiB",
		       "MIDDLE of 16 MiB + 1: %d (%s), want BAD_PARAM or "
		       "BAD_RANGE",
		       st, cc_strerror(st));
		n = 0;
		cs_piece(&c, it, &n, "MIDDLE after it", 0, 64, 1,
			 CC_ERR_NO_STREAM, 0);
		run_items(t, t->q, "a piece past 16 MiB", it, n);
	}
	cs_free(t, &c);
	/* XTS: a MIDDLE of part of a unit */
	if (usable(t, xts) && !cs_make(t, &c, xts, t->q, CC_ENCRYPT, 3, 512)) {
		n = 0;
		cs_next(&c, it, &n, "FIRST (unit 512)");
		cs_piece(&c, it, &n, "MIDDLE of 700 bytes", 0, 700, 1,
			 CC_ERR_BAD_PARAM, 0);
		cs_piece(&c, it, &n, "LAST after it", CC_STREAM_LAST, 512, 1,
			 CC_ERR_NO_STREAM, 0);
		run_items(t, t->q, "aes-xts piece of part of a unit", it, n);
	}
	cs_free(t, &c);
}

/* The capability table's stream flag (the default engine's row) agrees
 * with what the probes found. */
static void case_caps(struct t *t, const struct fx_daemon *dm)
{
	struct cc_alg_caps *caps;
	unsigned n, i, v;
	int r = cc_capabilities_get(t->conn, &caps, &n);

	if (r) {
		expect(t, 0, "capabilities", "%s", cc_strerror(r));
		return;
	}
	for (v = 0; v < sc_n_vars; v++) {
		int row = -1;

		if (v && sc_vars[v].alg == sc_vars[v - 1].alg)
			continue; /* one row per algorithm */
		for (i = 0; i < n; i++)
			if (caps[i].alg == sc_vars[v].alg &&
			    caps[i].default_engine && caps[i].available)
				row = (int)i;
		expect(t, row >= 0, "capabilities", "%s: no default engine",
		       sc_vars[v].name);
		if (row < 0)
			continue;
		expect(t, !caps[row].stream == !!t->missing[v], "capabilities",
		       "%s on %s: stream %d, but its FIRST %s", sc_vars[v].name,
		       caps[row].engine, caps[row].stream,
		       t->missing[v] ? "failed with -EOPNOTSUPP" : "worked");
	}
	/* an algorithm that does not stream says so */
	for (i = 0; i < n; i++)
		if (caps[i].alg == CC_ALG_AES_GMAC ||
		    caps[i].alg == CC_ALG_AES_CBC_HMAC_SHA1 ||
		    caps[i].alg == CC_ALG_SNOW3G_UEA2)
			expect(t, !caps[i].stream, "capabilities",
			       "%s on %s claims to stream", caps[i].alg_name,
			       caps[i].engine);
	cc_capabilities_free(caps);
}

/* Algorithms that do not stream: -EOPNOTSUPP at FIRST (cryptoclient.h:
 * "Others fail with -EOPNOTSUPP"), whatever the layout, and the slot is
 * free after it. */
static void case_not_streaming(struct t *t, const struct fx_daemon *dm)
{
	static const struct {
		enum cc_alg alg;
		const char *what;
		unsigned key_len, auth_key_len, iv_len, len;
		int inplace, auth_only;
	} algs[] = {
		{ CC_ALG_AES_CBC_HMAC_SHA256, "aes-cbc-hmac-sha256 in place",
		  16, 32, 16, 32, 1, 0 },
		{ CC_ALG_AES_CBC_HMAC_SHA256,
		  "aes-cbc-hmac-sha256 out of place", 16, 32, 16, 32, 0, 0 },
		{ CC_ALG_AES_GMAC, "aes-gmac", 16, 0, 12, 32, 1, 1 },
		{ CC_ALG_CHACHA20, "chacha20", 32, 0, 16, 32, 0, 0 },
		{ CC_ALG_SNOW3G_UEA2, "snow3g-uea2 (256 bits)", 16, 0, 16, 256,
		  0, 0 },
	};
	static const uint8_t key[64] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

	for (unsigned a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		char ctx[128];
		struct cc_session_params sp = {
			.alg = algs[a].alg,
			.key = key,
			.key_len = algs[a].key_len,
			.auth_key = algs[a].auth_key_len ? key : NULL,
			.auth_key_len = algs[a].auth_key_len,
		};
		struct item it[4];
		unsigned n = 0;
		struct cs c;
		uint32_t sid;
		struct item *x;
		int r = cc_session_create(t->conn, &sp, &sid);

		snprintf(ctx, sizeof(ctx), "%s, which does not stream",
			 algs[a].what);
		if (r) {
			expect(t, 0, ctx, "session: %s", cc_strerror(r));
			continue;
		}
		if (!cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 2, 32)) {
			x = cs_piece(&c, it, &n, "FIRST", CC_STREAM_FIRST, 32,
				     1, -EOPNOTSUPP, 0);
			x->op.session = sid;
			x->op.iv = c.m.iv;
			x->op.iv_len = algs[a].iv_len;
			x->op.aad = NULL;
			x->op.aad_len = 0;
			x->op.len = algs[a].len;
			x->op.stream_param = 0;
			if (algs[a].inplace)
				x->op.dst = NULL;
			if (algs[a].auth_only)
				x->op.dst = NULL;
			cs_piece(&c, it, &n, "MIDDLE after it", 0, 32, 1,
				 CC_ERR_NO_STREAM, 0);
			cs_next(&c, it, &n,
				"FIRST of a real stream on the "
				"slot");
			cs_next(&c, it, &n, "LAST");
			run_items(t, t->q, ctx, it, n);
			if (it[0].status != -EOPNOTSUPP)
				printf("  %s: FIRST gave %d (%s), not "
				       "-EOPNOTSUPP: the status depends on the "
				       "algorithm's descriptor rules (daemon "
				       "bug, see the report)\n",
				       ctx, it[0].status,
				       cc_strerror(it[0].status));
			if (it[2].status == CC_OK && it[3].status == CC_OK)
				cs_check(t, &c, ctx);
		}
		cs_free(t, &c);
		cc_session_destroy(t->conn, sid);
	}
}

int main(void)
{
	static const struct bs_case cases[] = {
		{ "case_middle_fields", case_middle_fields },
		{ "case_bad_desc", case_bad_desc },
		{ "case_bad_tag", case_bad_tag },
		{ "case_piece_rules", case_piece_rules },
		{ "case_caps", case_caps },
		{ "case_not_streaming", case_not_streaming },
	};
	return bs_main(cases, sizeof(cases) / sizeof(cases[0]));
}
