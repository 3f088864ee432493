// SPDX-License-Identifier: MIT
/*
 * What a stream must refuse, and how (include/cryptod/ring_abi.h's stream
 * rules): the order of pieces and the handle (bad_stream.h has the
 * harness, and the background streams no failure may disturb):
 *
 * - a MIDDLE or LAST without FIRST: CC_ERR_NO_STREAM (and the slot still
 *   opens afterwards); a stream used after its LAST: NO_STREAM;
 * - a handle whose tag bits differ (a flipped tag, another queue's
 *   handle): NO_STREAM, and the real stream is unaffected;
 * - a FIRST on an open slot (same or another tag): STREAM_BUSY, and the
 *   open stream still completes right;
 * - slots 32 and 255: STREAM_LIMIT.
 *
 * Exit: 0 all passed, 1 any failure.
 */
#include "bad_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- The cases ---- */

static void case_no_first(struct t *t, const struct fx_daemon *dm)
{
	const char *ctx = "no FIRST";
	struct item it[8];
	unsigned n = 0;
	struct cs c;

	if (!cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 3, 48)) {
		cs_piece(&c, it, &n, "MIDDLE without FIRST", 0, 48, 1,
			 CC_ERR_NO_STREAM, 0);
		cs_piece(&c, it, &n, "LAST without FIRST", CC_STREAM_LAST, 48,
			 1, CC_ERR_NO_STREAM, 0);
		/* the slot is still free: the real stream opens and runs */
		cs_next(&c, it, &n, "FIRST after the refusals");
		cs_next(&c, it, &n, "MIDDLE");
		cs_next(&c, it, &n, "LAST");
		run_items(t, t->q, ctx, it, n);
		if (it[2].status == CC_OK && it[3].status == CC_OK &&
		    it[4].status == CC_OK)
			cs_check(t, &c, ctx);
	}
	cs_free(t, &c);
}

static void case_after_last(struct t *t, const struct fx_daemon *dm)
{
	const char *ctx = "after LAST";
	struct item it[8];
	unsigned n = 0;
	struct cs c;

	if (!cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 2, 32)) {
		cs_next(&c, it, &n, "FIRST");
		cs_next(&c, it, &n, "LAST");
		cs_piece(&c, it, &n, "MIDDLE after LAST", 0, 16, 1,
			 CC_ERR_NO_STREAM, 0);
		cs_piece(&c, it, &n, "LAST after LAST", CC_STREAM_LAST, 16, 1,
			 CC_ERR_NO_STREAM, 0);
		run_items(t, t->q, ctx, it, n);
		if (it[0].status == CC_OK && it[1].status == CC_OK)
			cs_check(t, &c, ctx);
	}
	cs_free(t, &c);
}

static void case_wrong_tag(struct t *t, const struct fx_daemon *dm)
{
	const char *ctx = "handle of another tag";
	struct item it[16], it2[4];
	unsigned n = 0, n2 = 0;
	struct cs a, b;
	struct item *x;
	uint32_t h, h2;

	memset(&b, 0, sizeof(b));
	if (cs_make(t, &a, t->main_v, t->q, CC_ENCRYPT, 3, 64) ||
	    cs_make(t, &b, t->main_v, t->q2, CC_ENCRYPT, 2, 64))
		goto out;
	h = a.s.handle;
	h2 = b.s.handle;
	cs_next(&b, it2, &n2, "other queue's FIRST");
	run_items(t, t->q2, ctx, it2, n2);

	cs_next(&a, it, &n, "FIRST");
	x = cs_piece(&a, it, &n, "MIDDLE, tag bit 8 flipped", 0, 64, 1,
		     CC_ERR_NO_STREAM, 0);
	x->op.stream = h ^ 0x100;
	x = cs_piece(&a, it, &n, "MIDDLE, tag bit 31 flipped", 0, 64, 1,
		     CC_ERR_NO_STREAM, 0);
	x->op.stream = h ^ 0x80000000u;
	if ((h2 & ~0xffu) != (h & ~0xffu)) {
		x = cs_piece(&a, it, &n, "MIDDLE, this slot, q2's tag", 0, 64,
			     1, CC_ERR_NO_STREAM, 0);
		x->op.stream = (h & 0xff) | (h2 & ~0xffu);
		x = cs_piece(&a, it, &n, "LAST, this slot, q2's tag",
			     CC_STREAM_LAST, 64, 1, CC_ERR_NO_STREAM, 0);
		x->op.stream = (h & 0xff) | (h2 & ~0xffu);
	} else {
		printf("  %s: q1's and q2's handles share a tag (0x%x, "
		       "0x%x)\n",
		       ctx, h, h2);
	}
	if (h2 != h) {
		x = cs_piece(&a, it, &n, "MIDDLE with q2's handle", 0, 64, 1,
			     CC_ERR_NO_STREAM, 0);
		x->op.stream = h2;
	}
	cs_next(&a, it, &n, "MIDDLE (the real one)");
	cs_next(&a, it, &n, "LAST (the real one)");
	run_items(t, t->q, ctx, it, n);
	if (it[0].status == CC_OK && it[n - 1].status == CC_OK &&
	    it[n - 2].status == CC_OK)
		cs_check(t, &a, ctx);
	n2 = 0;
	cs_next(&b, it2, &n2, "other queue's LAST");
	run_items(t, t->q2, ctx, it2, n2);
	if (it2[0].status == CC_OK)
		cs_check(t, &b, "handle of another tag (q2's stream)");
out:
	cs_free(t, &a);
	cs_free(t, &b);
}

static void case_busy(struct t *t, const struct fx_daemon *dm)
{
	const char *ctx = "FIRST on an open slot";
	struct item it[8];
	unsigned n = 0;
	struct cs a, other;
	struct item *x;

	memset(&other, 0, sizeof(other));
	if (cs_make(t, &a, t->main_v, t->q, CC_ENCRYPT, 3, 80) ||
	    cs_make(t, &other, t->main_v, t->q, CC_ENCRYPT, 2, 80))
		goto out;
	cs_next(&a, it, &n, "FIRST");
	/* another message's FIRST on a's handle, then on a's slot with
	 * another tag */
	x = cs_piece(&other, it, &n, "FIRST, same handle", CC_STREAM_FIRST, 80,
		     1, CC_ERR_STREAM_BUSY, 0);
	x->op.stream = a.s.handle;
	x = cs_piece(&other, it, &n, "FIRST, same slot, another tag",
		     CC_STREAM_FIRST, 80, 1, CC_ERR_STREAM_BUSY, 0);
	x->op.stream = a.s.handle ^ 0x4200;
	cs_next(&a, it, &n, "MIDDLE");
	cs_next(&a, it, &n, "LAST");
	run_items(t, t->q, ctx, it, n);
	if (it[0].status == CC_OK && it[3].status == CC_OK &&
	    it[4].status == CC_OK)
		cs_check(t, &a, ctx);
out:
	cs_free(t, &a);
	cs_free(t, &other);
}

static void case_slot_limit(struct t *t, const struct fx_daemon *dm)
{
	const char *ctx = "slot past the table";
	struct item it[8];
	unsigned n = 0;
	struct cs c;
	struct item *x;

	if (cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 2, 32))
		goto out;
	x = cs_piece(&c, it, &n, "FIRST on slot 32", CC_STREAM_FIRST, 32, 1,
		     CC_ERR_STREAM_LIMIT, 0);
	x->op.stream = 32 | (c.s.handle & ~0xffu);
	x->enq_ok = 1;
	x = cs_piece(&c, it, &n, "FIRST on slot 255", CC_STREAM_FIRST, 32, 1,
		     CC_ERR_STREAM_LIMIT, 0);
	x->op.stream = 255 | (c.s.handle & ~0xffu);
	x->enq_ok = 1;
	x = cs_piece(&c, it, &n, "MIDDLE on slot 40", 0, 32, 2,
		     CC_ERR_STREAM_LIMIT, CC_ERR_NO_STREAM);
	x->op.stream = 40 | (c.s.handle & ~0xffu);
	x->enq_ok = 1;
	cs_next(&c, it, &n, "FIRST (the real one)");
	cs_next(&c, it, &n, "LAST (the real one)");
	run_items(t, t->q, ctx, it, n);
	if (it[3].status == CC_OK && it[4].status == CC_OK)
		cs_check(t, &c, ctx);
	/* the daemon's own check, past the library */
	{
		struct edit e = { .handle = 32 | 0x5500, .set_handle = 1 };
		struct cc_op op;
		int st;

		sc_piece_op(&c.s, &op, 0, 0, 32, CC_STREAM_FIRST);
		st = edited(t, ctx, &op, &e);
		expect(t, st == CC_ERR_STREAM_LIMIT, ctx,
		       "raw FIRST on slot 32: %d (%s), want STREAM_LIMIT", st,
		       cc_strerror(st));
		e.handle = 200 | 0x5500;
		st = edited(t, ctx, &op, &e);
		expect(t, st == CC_ERR_STREAM_LIMIT, ctx,
		       "raw FIRST on slot 200: %d (%s), want STREAM_LIMIT", st,
		       cc_strerror(st));
	}
out:
	cs_free(t, &c);
}

int main(void)
{
	static const struct bs_case cases[] = {
		{ "case_no_first", case_no_first },
		{ "case_after_last", case_after_last },
		{ "case_wrong_tag", case_wrong_tag },
		{ "case_busy", case_busy },
		{ "case_slot_limit", case_slot_limit },
	};
	return bs_main(cases, sizeof(cases) / sizeof(cases[0]));
}
