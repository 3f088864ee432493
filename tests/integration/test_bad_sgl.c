// SPDX-License-Identifier: MIT
/*
 * Scatter-gather lists that overlap, leave the arena, wrap at 32 bits,
 * have more than 64 segments or do not add up to the length: rejected,
 * which here means the op completes CC_ERR_BAD_RANGE or CC_ERR_BAD_PARAM
 * (either, never anything else, never success); the library may refuse
 * at enqueue only what the header says it refuses (a pointer outside the
 * arena). On a stream cipher and a block cipher, session and session-less.
 * Each outcome is printed.
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

int main(void)
{
	struct t t;
	struct fx_daemon d;
	if (bad_setup(&t, &d, "test_bad_sgl"))
		return FX_EXIT_FAIL;
	for (unsigned a = 0; a < 2 && !t.fatal; a++) {
		const struct mc_spec *s =
			mc_spec_of(a ? CC_ALG_AES_CBC : CC_ALG_AES_CTR);
		struct mc_key k;
		uint32_t sid;

		key_for(&k, s, 16);
		int r = mc_session(t.conn, &k, NULL, &sid);
		expect(&t, r == 0, s->name, "session", r);
		if (r)
			continue;
		run_bad_sgl(&t, s, &k, sid);
		if (!t.fatal)
			run_bad_sgl(&t, s, &k, 0);
		cc_session_destroy(t.conn, sid);
	}
	return bad_finish(&t, &d);
}
