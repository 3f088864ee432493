// SPDX-License-Identifier: MIT
/*
 * What the test_bad_stream_* programs share (bad_stream.h): items and
 * their checks, the cases' streams, ring edits, the background streams,
 * and the program's main (bs_main).
 */
#include "bad_stream.h"
#include "stream_ring.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void expect(struct t *t, int ok, const char *ctx, const char *fmt, ...)
{
	va_list ap;

	t->checked++;
	if (ok)
		return;
	t->failed++;
	fprintf(stderr, "FAIL %s: ", ctx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

struct item *item_add(struct item *it, unsigned *n, const char *what,
		      const struct cc_op *op, long want_len, int enq_ok,
		      unsigned nacc, ...)
{
	struct item *x = &it[(*n)++];
	va_list ap;

	memset(x, 0, sizeof(*x));
	x->op = *op;
	x->what = what;
	x->want_len = want_len;
	x->enq_ok = enq_ok;
	x->nacc = nacc;
	va_start(ap, nacc);
	for (unsigned i = 0; i < nacc && i < ACC_MAX; i++)
		x->acc[i] = va_arg(ap, int);
	va_end(ap);
	return x;
}

int item_accepts(const struct item *x, int status)
{
	for (unsigned i = 0; i < x->nacc; i++)
		if (x->acc[i] == status ||
		    (x->acc[i] == ANY_ERROR && status != CC_OK))
			return 1;
	return 0;
}

/* What a good piece completes with: its length, as a one-shot op. */
long piece_len(const struct sc_stream *s, uint32_t len)
{
	(void)s;
	return (long)len;
}

/* One background piece of each background stream (never the LAST). */
void bg_add(struct t *t, struct item *it, unsigned *n)
{
	for (unsigned b = 0; b < BG_N; b++) {
		struct sc_stream *s = &t->bg[b];
		struct item *x;
		struct cc_op op;

		if (!t->bg_on[b] || s->next + 1 >= s->n)
			continue;
		sc_stream_op(s, &op, 0);
		x = item_add(it, n, "background piece", &op,
			     piece_len(s, s->cuts[s->next - 1]), 0, 1, CC_OK);
		x->bg = s;
	}
}

/*
 * Submit it[0..n) on q in bursts (an op the library refuses at enqueue
 * is noted and skipped), with background pieces before and after when
 * q is t->q, and judge every completion. ctx names the case.
 */
void run_items(struct t *t, struct cc_queue *q, const char *ctx,
	       struct item *items, unsigned n)
{
	static struct item all[ITEMS_MAX + 2 * BG_N];
	static struct cc_op ops[ITEMS_MAX + 2 * BG_N];
	static struct cc_completion comps[ITEMS_MAX + 2 * BG_N];
	unsigned idx[ITEMS_MAX + 2 * BG_N], na = 0, nsent = 0, sent = 0,
					    got = 0;
	unsigned i;
	uint64_t deadline = fx_now_ms() + TIMEOUT_MS;
	int r;

	if (t->fatal)
		return;
	if (q == t->q)
		bg_add(t, all, &na);
	for (i = 0; i < na; i++)
		all[i].from = -1;
	for (i = 0; i < n; i++) {
		all[na] = items[i];
		all[na++].from = (int)i;
	}
	if (q == t->q) {
		unsigned b0 = na;

		bg_add(t, all, &na);
		for (i = b0; i < na; i++)
			all[i].from = -1;
	}
	for (i = 0; i < na; i++) {
		all[i].op.user_data = ++t->ud;
		ops[i] = all[i].op;
	}
	/* submit: skip what the library refuses, collect as we go */
	while (got < nsent || sent < na) {
		if (sent < na) {
			r = cc_enqueue_burst(q, ops + sent, na - sent);
			if (r < 0) {
				all[sent].enq = r;
				sent++;
				continue;
			}
			for (i = 0; i < (unsigned)r; i++)
				idx[nsent++] = sent + i;
			sent += (unsigned)r;
		}
		r = cc_dequeue_burst(q, comps + got, nsent - got);
		if (r < 0) {
			expect(t, 0, ctx, "dequeue: %s", cc_strerror(r));
			t->fatal = 1;
			return;
		}
		got += (unsigned)r;
		if (r == 0 && got < nsent) {
			if (fx_now_ms() > deadline) {
				expect(t, 0, ctx,
				       "%u of %u completions in %d ms", got,
				       nsent, TIMEOUT_MS);
				t->fatal = 1;
				return;
			}
			cc_wait(q, 100);
		}
	}
	for (i = 0; i < nsent; i++) {
		struct item *x = &all[idx[i]];

		if (comps[i].user_data != x->op.user_data) {
			expect(t, 0, ctx,
			       "completion %u out of order (0x%llx, want "
			       "0x%llx)",
			       i, (unsigned long long)comps[i].user_data,
			       (unsigned long long)x->op.user_data);
			t->fatal = 1;
			return;
		}
		x->status = comps[i].status;
		x->len = comps[i].len;
	}
	for (i = 0; i < na; i++) {
		struct item *x = &all[i];
		int ok;

		if (x->enq) {
			expect(t, x->enq_ok, ctx,
			       "%s: refused at enqueue (%d: %s); want a per-op "
			       "status",
			       x->what, x->enq, cc_strerror(x->enq));
			if (x->enq_ok)
				printf("  %s: %s: refused at enqueue (%s)\n",
				       ctx, x->what, cc_strerror(x->enq));
			continue;
		}
		ok = item_accepts(x, x->status) &&
		     (x->status != CC_OK || x->want_len < 0 ||
		      (long)x->len == x->want_len);
		expect(t, ok, ctx, "%s: status %d (%s), len %u; want %s%d%s",
		       x->what, x->status, cc_strerror(x->status), x->len,
		       x->acc[0] == ANY_ERROR ? "an error" : "",
		       x->acc[0] == ANY_ERROR ? 0 : x->acc[0],
		       x->nacc > 1 ? " or another listed" : "");
		if (x->bg && !ok)
			x->bg->failed = 1;
	}
	/* hand the results back */
	for (i = 0; i < na; i++) {
		if (all[i].from < 0)
			continue;
		items[all[i].from].enq = all[i].enq;
		items[all[i].from].status = all[i].status;
		items[all[i].from].len = all[i].len;
	}
}

void cs_free(struct t *t, struct cs *c)
{
	sc_stream_free(&c->s);
	if (c->has_sid)
		cc_session_destroy(t->conn, c->sid);
	sc_msg_free(&c->m);
	memset(c, 0, sizeof(*c));
}

/* A message of v of n pieces of cut bytes each, as a stream on q. */
int cs_make(struct t *t, struct cs *c, const struct sc_var *v,
	    struct cc_queue *q, enum cc_dir dir, unsigned n, uint32_t cut)
{
	uint32_t cuts[64];
	int r;

	memset(c, 0, sizeof(*c));
	for (unsigned i = 0; i < n; i++)
		cuts[i] = cut;
	r = sc_msg_make_iv(&c->m, v, (size_t)n * cut, v->ccm ? 12 : 0);
	if (!r && v->xts) {
		c->m.unit = cut;
		r = sc_ref(&c->m);
	}
	if (!r && c->m.len != (size_t)n * cut)
		r = -EINVAL;
	if (r) {
		expect(t, 0, v->name, "a case message: %d", r);
		return r;
	}
	r = sc_session(t->conn, &c->m, &c->sid);
	if (r) {
		expect(t, 0, v->name, "session: %s", cc_strerror(r));
		return r;
	}
	c->has_sid = 1;
	c->cut = cut;
	r = sc_stream_init(&c->s, q, &c->m, dir, c->sid, 0, cuts, n);
	if (r)
		expect(t, 0, v->name, "stream set-up: %s", cc_strerror(r));
	return r;
}

/* Item of c's next piece, expected to succeed. */
struct item *cs_next(struct cs *c, struct item *it, unsigned *n,
		     const char *what)
{
	struct cc_op op;

	sc_stream_op(&c->s, &op, 0);
	return item_add(it, n, what, &op,
			piece_len(&c->s, c->s.cuts[c->s.next - 1]), 0, 1,
			CC_OK);
}

/* Item of a hand-made piece of c at c's current offset (not advancing). */
struct item *cs_piece(struct cs *c, struct item *it, unsigned *n,
		      const char *what, unsigned flags, uint32_t len, int nacc,
		      int a0, int a1)
{
	struct cc_op op;

	sc_piece_op(&c->s, &op, 0, c->s.off, len, flags);
	return item_add(it, n, what, &op, piece_len(&c->s, len), 0,
			(unsigned)nacc, a0, a1);
}

/* The whole stream came out right (every piece was OK). */
void cs_check(struct t *t, struct cs *c, const char *ctx)
{
	long off;
	const char *why = sc_stream_check(&c->s, &off);

	expect(t, !why, ctx, "%s: %s at byte %ld", c->m.v->name, why ? why : "",
	       off);
}

/* Is v usable (its FIRST is not -EOPNOTSUPP)? */
int usable(const struct t *t, const struct sc_var *v)
{
	return !t->missing[v - sc_vars];
}

/* ---- Setup: which algorithms stream, the background streams ---- */

void probe(struct t *t, const struct sc_var *v)
{
	struct item it[2];
	unsigned n = 0;
	struct cs c;

	if (cs_make(t, &c, v, t->q, CC_ENCRYPT, 2, 32)) {
		cs_free(t, &c);
		return;
	}
	cs_next(&c, it, &n, "probe FIRST");
	cs_next(&c, it, &n, "probe LAST");
	/* not through run_items: a missing algorithm is not a failure */
	{
		struct cc_op ops[2] = { it[0].op, it[1].op };
		struct cc_completion comps[2];

		ops[0].user_data = ++t->ud;
		ops[1].user_data = ++t->ud;
		if (fx_run_burst(t->q, ops, 2, comps, TIMEOUT_MS)) {
			expect(t, 0, v->name, "probe did not complete");
			t->fatal = 1;
		} else if (comps[0].status == -EOPNOTSUPP) {
			t->missing[v - sc_vars] = 1;
			printf("%s does not stream yet (FIRST: %s)%s\n",
			       v->name, cc_strerror(comps[0].status),
			       t->allow_missing
				       ? ": skipped (STREAM_ALLOW_MISSING=1)"
				       : "");
			expect(t, t->allow_missing, v->name,
			       "FIRST: %s; the algorithm must stream",
			       cc_strerror(comps[0].status));
		} else {
			expect(t,
			       comps[0].status == CC_OK &&
				       comps[1].status == CC_OK,
			       v->name, "probe: statuses %d, %d",
			       comps[0].status, comps[1].status);
			if (comps[0].status == CC_OK &&
			    comps[1].status == CC_OK)
				cs_check(t, &c, "probe");
		}
	}
	cs_free(t, &c);
}

void bg_start(struct t *t)
{
	static const char *const names[BG_N] = { "aes-gcm-256", "aes-cbc-128",
						 "hmac-sha512" };
	static const enum cc_dir dirs[BG_N] = { CC_ENCRYPT, CC_DECRYPT,
						CC_DECRYPT };
	uint32_t cuts[BG_PIECES];

	for (unsigned b = 0; b < BG_N; b++) {
		const struct sc_var *v = sc_var_by_name(names[b]);
		size_t len = 0;
		unsigned i;
		int r;

		if (!usable(t, v))
			continue;
		for (i = 0; i < BG_PIECES; i++) {
			cuts[i] = 1 + mc_below(3000);
			if (v->block > 1)
				cuts[i] = (cuts[i] + 15) & ~15u;
			len += cuts[i];
		}
		r = sc_msg_make(&t->bg_msg[b], v, len);
		if (!r && t->bg_msg[b].len != len)
			r = -EINVAL;
		if (!r)
			r = sc_session(t->conn, &t->bg_msg[b], &t->bg_sid[b]);
		if (!r)
			r = sc_stream_init(&t->bg[b], t->q, &t->bg_msg[b],
					   dirs[b], t->bg_sid[b], 0, cuts,
					   BG_PIECES);
		expect(t, !r, "background", "%s: set-up %d", names[b], r);
		t->bg_on[b] = !r;
	}
}

void bg_finish(struct t *t)
{
	int on[BG_N];
	unsigned b;

	for (b = 0; b < BG_N; b++) {
		on[b] = t->bg_on[b];
		t->bg_on[b] = 0; /* run_items adds none now */
	}
	for (b = 0; b < BG_N; b++) {
		struct sc_stream *s = &t->bg[b];
		long off = -1;
		const char *why;

		if (!on[b])
			continue;
		/* the pieces left and the LAST */
		while (s->next < s->n && !t->fatal) {
			struct item rest[64];
			unsigned m = 0, i;

			while (s->next < s->n && m < 64) {
				struct cc_op op;

				sc_stream_op(s, &op, 0);
				item_add(rest, &m,
					 s->next == s->n ? "background LAST"
							 : "background piece",
					 &op,
					 piece_len(s, s->cuts[s->next - 1]), 0,
					 1, CC_OK);
			}
			run_items(t, t->q, "background", rest, m);
			for (i = 0; i < m; i++)
				if (rest[i].status != CC_OK || rest[i].enq)
					s->failed = 1;
		}
		why = s->failed ? "a piece failed" : sc_stream_check(s, &off);
		expect(t, !why, "background",
		       "%s %s stream of %zu bytes in %u pieces, a piece "
		       "around every refused op: %s at byte %ld",
		       t->bg_msg[b].v->name,
		       s->dir == CC_ENCRYPT ? "encrypt" : "decrypt",
		       t->bg_msg[b].len, s->n, why ? why : "ok", off);
		printf("background %s %s: %s\n", t->bg_msg[b].v->name,
		       s->dir == CC_ENCRYPT ? "encrypt" : "decrypt",
		       why ? why : "completed right around every refusal");
		sc_stream_free(s);
		cc_session_destroy(t->conn, t->bg_sid[b]);
		sc_msg_free(&t->bg_msg[b]);
	}
}

void do_edit(struct crd_sqe *e, void *arg)
{
	const struct edit *x = arg;

	if (x->set_handle)
		e->sl_off = x->handle;
	e->flags |= x->flags_or;
	if (x->iv_len) {
		e->iv_len = x->iv_len;
		memset(e->iv, 0x3c, x->iv_len);
	}
	if (x->aad_len) {
		e->aad_len = x->aad_len;
		e->aad_off = x->aad_off;
	}
	if (x->tag_len) {
		e->tag_len = x->tag_len;
		e->tag_off = x->tag_off;
	}
	if (x->src_nseg) {
		e->src_off = x->src_off;
		e->src_nseg = x->src_nseg;
	}
	if (x->len)
		e->len = x->len;
}

/* The arena offset of p (an arena buffer of q). */
uint32_t arena_off(struct cc_queue *q, const void *p)
{
	struct cc_sgl_entry *e = cc_buf_alloc(q, sizeof(*e));
	uint32_t off = 0;

	if (e && !cc_sgl_set(q, e, 0, p, 1))
		off = e->off;
	if (e)
		cc_buf_free(q, e);
	return off;
}

/* Submit op edited by x, alone; its status (or the error). */
int edited(struct t *t, const char *ctx, const struct cc_op *op, struct edit *x)
{
	struct cc_op o = *op;
	struct cc_completion comp;
	int r;

	o.user_data = ++t->ud;
	r = sc_submit_edited(t->q, &o, do_edit, x);
	if (!r)
		r = sc_collect(t->q, &comp, 1, TIMEOUT_MS);
	if (r) {
		expect(t, 0, ctx, "edited descriptor: %s", cc_strerror(r));
		t->fatal = 1;
		return CC_OK;
	}
	expect(t, comp.user_data == o.user_data, ctx,
	       "edited descriptor's completion has another user_data");
	return comp.status;
}

/* ---- Main ---- */

/* ---- Main ---- */

int bs_main(const struct bs_case *cases, unsigned n)
{
	static const char *const args[] = { "--set", "keys.min_bits=0", NULL };
	struct fx_daemon_params dp = { .workers = 2, .args = args };
	struct cc_queue_params qp = {
		.sq_entries = SQ_ENTRIES,
		.arena_size = ARENA,
		.coalesce = SQ_ENTRIES, /* cc_submit stages: see edited() */
		.flush_us = 1000000,
	};
	static const char *const mains[] = { "aes-gcm-128", "aes-ctr-128",
					     "aes-cbc-128", "hmac-sha256",
					     "sha256",	    "null" };
	struct t t = { 0 };
	struct fx_daemon d;
	uint64_t seed = sc_seed(SC_SEED_DEFAULT ^ 0xbad), t0 = fx_now_ms();
	int fails = 0, r;
	unsigned i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	t.allow_missing = sc_allow_missing();
	printf("seed 0x%016llx (set STREAM_SEED to reproduce)\n",
	       (unsigned long long)seed);
	mc_srand(seed);
	if (fx_setup(&d, &dp, "test_bad_stream", &qp, &t.conn, &t.q))
		return FX_EXIT_FAIL;
	r = cc_queue_open(t.conn, &qp, &t.q2);
	if (r) {
		fprintf(stderr, "FAIL: second queue: %s\n", cc_strerror(r));
		fx_teardown(&d, t.conn, t.q);
		return FX_EXIT_FAIL;
	}
	for (i = 0; i < sc_n_vars && !t.fatal; i++)
		probe(&t, &sc_vars[i]);
	for (i = 0; i < sizeof(mains) / sizeof(mains[0]) && !t.main_v; i++)
		if (usable(&t, sc_var_by_name(mains[i])))
			t.main_v = sc_var_by_name(mains[i]);
	if (!t.main_v) {
		fprintf(stderr, "FAIL: none of the algorithms streams\n");
		t.failed++;
		t.fatal = 1;
	} else {
		printf("cases on %s\n", t.main_v->name);
	}
	if (!t.fatal)
		bg_start(&t);
	for (i = 0; i < n && !t.fatal; i++) {
		unsigned long f0 = t.failed;
		cases[i].run(&t, &d);
		printf("%-28s %s\n", cases[i].name,
		       t.failed == f0 ? "ok" : "FAILED");
	}
	if (!t.fatal)
		bg_finish(&t);
	cc_queue_close(t.q2);
	if (fx_teardown(&d, t.conn, t.q))
		fails++;
	if (t.failed || !t.checked || t.fatal)
		fails++;
	printf("TOTAL: %lu checks, %lu failed (%llu ms)\n%s\n", t.checked,
	       t.failed, (unsigned long long)(fx_now_ms() - t0),
	       fails ? "FAILED" : "PASSED");
	if (fails)
		printf("replay with STREAM_SEED=0x%016llx\n",
		       (unsigned long long)seed);
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
