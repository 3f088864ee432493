/* SPDX-License-Identifier: MIT */
/*
 * Descriptor validation (daemon/data/desc.c): desc_resolve() on private copies
 * of submission entries against real sessions (AES-GCM on the aesni
 * engine, and the null engine), plus the range helpers it is built on.
 * Every rejection is checked alone: each case is a valid descriptor with
 * exactly one thing wrong.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cryptod/ring_abi.h>

#include "desc.h"
#include "engine.h"
#include "keystore.h"
#include "log.h"
#include "session.h"

/*
 * Large enough for an op of CRD_OP_MAX_LEN with a separate destination;
 * reserved, not touched (desc_resolve reads the arena only for
 * scatter-gather lists, which these descriptors do not use).
 */
#define ARENA_SIZE (64ull << 20)

static struct {
	uint8_t *arena;
	struct session *gcm;	/* AES-128-GCM, 16-byte tag, aesni */
	struct session *gcm12;	/* AES-256-GCM, 12-byte tag, aesni */
	struct session *null_s; /* ALG_NULL */
} t;

static int group_setup(void **state)
{
	static const uint8_t key[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

	log_init(LOG_ERR_); /* engine probing is chatty at info */
	if (engine_probe_all() <= 0)
		return -1;
	if (ks_init(16))
		return -1;
	t.arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t.arena == MAP_FAILED)
		return -1;
	/* The aesni engine needs AES-NI; without it the GCM cases skip. */
	struct session_params gcm = { .alg = CRD_ALG_AES_GCM,
				      .key = key,
				      .key_len = 16,
				      .engine = "aesni" };
	struct session_params gcm12 = { .alg = CRD_ALG_AES_GCM,
					.key = key,
					.key_len = 32,
					.tag_len = 12,
					.engine = "aesni" };
	struct session_params null_p = { .alg = CRD_ALG_NULL,
					 .engine = "null" };
	if (session_create(&gcm, &t.gcm))
		t.gcm = NULL;
	if (session_create(&gcm12, &t.gcm12))
		t.gcm12 = NULL;
	if (session_create(&null_p, &t.null_s))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	session_destroy(t.gcm);
	session_destroy(t.gcm12);
	session_destroy(t.null_s);
	if (ks_in_use() != 0)
		return -1;
	ks_fini();
	engine_fini_all();
	munmap(t.arena, ARENA_SIZE);
	return 0;
}

static const struct session *need_gcm(void)
{
	if (!t.gcm)
		skip(); /* no AES-NI on this CPU */
	return t.gcm;
}

/* A valid out-of-place AES-GCM encrypt, laid out as
 *   [0, 1024) src  [4096, 5120) dst  [8192, 8208) aad  [12288, +16) tag */
static struct crd_sqe base_desc(void)
{
	struct crd_sqe e = {
		.user_data = 0x1122334455667788ull,
		.session = 1,
		.op = CRD_OP_ENCRYPT,
		.iv_len = 12,
		.tag_len = 16,
		.src_off = 0,
		.len = 1024,
		.dst_off = 4096,
		.aad_off = 8192,
		.aad_len = 16,
		.tag_off = 12288,
	};
	for (int i = 0; i < CRD_IV_MAX; i++)
		e.iv[i] = (uint8_t)(0xa0 + i);
	return e;
}

static struct desc_sgl sg; /* desc_resolve's list scratch */

static int resolve(const struct crd_sqe *e, const struct session *s,
		   struct engine_op *op)
{
	memset(op, 0xee, sizeof(*op)); /* catch fields left unset */
	int st = desc_resolve(e, t.arena, ARENA_SIZE, s, op, &sg);
	assert_int_equal(op->status, st);
	return st;
}

/* ---- Accepted descriptors ---- */

static void test_valid_out_of_place(void **state)
{
	const struct session *s = need_gcm();
	struct crd_sqe e = base_desc();
	struct engine_op op;

	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_ptr_equal(op.sess, s);
	assert_ptr_equal(op.src, t.arena + 0);
	assert_ptr_equal(op.dst, t.arena + 4096);
	assert_ptr_equal(op.aad, t.arena + 8192);
	assert_ptr_equal(op.tag, t.arena + 12288);
	/* The IV comes from the private copy, never from shared memory. */
	assert_ptr_equal(op.iv, e.iv);
	assert_int_equal(op.len, 1024);
	assert_int_equal(op.aad_len, 16);
	assert_int_equal(op.iv_len, 12);
	assert_int_equal(op.tag_len, 16);
	assert_int_equal(op.op, CRD_OP_ENCRYPT);
}

static void test_valid_in_place_decrypt(void **state)
{
	const struct session *s = need_gcm();
	struct crd_sqe e = base_desc();
	struct engine_op op;

	e.op = CRD_OP_DECRYPT;
	e.dst_off = e.src_off;
	e.tag_len = 0; /* the session's */
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_ptr_equal(op.src, op.dst);
	assert_int_equal(op.tag_len, 16);
	assert_int_equal(op.op, CRD_OP_DECRYPT);

	/* A 12-byte-tag session: 0 and 12 both mean 12. */
	if (t.gcm12) {
		assert_int_equal(resolve(&e, t.gcm12, &op), CRD_ST_OK);
		assert_int_equal(op.tag_len, 12);
		e.tag_len = 12;
		assert_int_equal(resolve(&e, t.gcm12, &op), CRD_ST_OK);
		assert_int_equal(op.tag_len, 12);
	}
}

static void test_valid_edges(void **state)
{
	const struct session *s = need_gcm();
	struct crd_sqe e;
	struct engine_op op;

	/* Touching, not overlapping: src | dst | tag | aad back to back. */
	e = base_desc();
	e.src_off = 0;
	e.dst_off = 1024;
	e.tag_off = 2048;
	e.aad_off = 2064;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);

	/* Everything ending exactly at the end of the arena. */
	e = base_desc();
	e.src_off = e.dst_off = (uint32_t)(ARENA_SIZE - 1024);
	e.tag_off = (uint32_t)(ARENA_SIZE - 1024 - 16);
	e.aad_off = (uint32_t)(ARENA_SIZE - 1024 - 32);
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);

	/* Empty payload and AAD, at the very end (GMAC-like). */
	e = base_desc();
	e.len = 0;
	e.aad_len = 0;
	e.src_off = e.dst_off = e.aad_off = (uint32_t)ARENA_SIZE;
	e.tag_off = (uint32_t)(ARENA_SIZE - 16);
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);

	/* AAD and source are both only read: they may share bytes. */
	e = base_desc();
	e.aad_off = e.src_off;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);

	/* Largest op and largest AAD. */
	e = base_desc();
	e.len = CRD_OP_MAX_LEN;
	e.src_off = 0;
	e.dst_off = CRD_OP_MAX_LEN;
	e.aad_off = 2 * CRD_OP_MAX_LEN;
	e.aad_len = CRD_AAD_MAX;
	e.tag_off = 3 * CRD_OP_MAX_LEN;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_int_equal(op.len, CRD_OP_MAX_LEN);
	assert_int_equal(op.aad_len, CRD_AAD_MAX);
}

static void test_valid_null_session(void **state)
{
	struct crd_sqe e = base_desc();
	struct engine_op op;

	/* No tag, and the null engine does not care about the IV. */
	e.tag_len = 0;
	e.iv_len = 0;
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_OK);
	assert_int_equal(op.tag_len, 0);
	assert_ptr_equal(op.sess, t.null_s);
	e.iv_len = CRD_IV_MAX;
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_OK);

	/* A zero-length tag never overlaps anything. */
	e.tag_off = e.dst_off;
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_OK);
}

/* ---- Rejections ---- */

struct bad_case {
	const char *what;
	int want;
	void (*mutate)(struct crd_sqe *e);
};

/* BAD(name, statement): one mutation of the valid base descriptor. */
#define BAD(name, body)                                                        \
	static void mut_##name(struct crd_sqe *e)                              \
	{                                                                      \
		body;                                                          \
	}
#define CASE(name, status)                                                     \
	{                                                                      \
#name, status, mut_##name                                      \
	}

/* Descriptor shape. */
BAD(op_zero, e->op = 0)
BAD(op_three, e->op = 3)
BAD(op_ff, e->op = 0xff)
BAD(flags_low, e->flags = 0x40) /* first bit no flag defines */
BAD(flags_high, e->flags = 0x80)
BAD(nseg_no_flag, e->src_nseg = 1)
BAD(sl_off_no_flag, e->sl_off = 0x80000000u)
/* Parameters. */
BAD(tag_len_12, e->tag_len = 12)
BAD(tag_len_17, e->tag_len = 17)
BAD(tag_len_255, e->tag_len = 255)
BAD(len_max_plus_1, e->len = CRD_OP_MAX_LEN + 1)
BAD(len_u32_max, e->len = UINT32_MAX)
BAD(aad_max_plus_1, e->aad_len = CRD_AAD_MAX + 1)
BAD(aad_u32_max, e->aad_len = UINT32_MAX)
BAD(iv_len_0, e->iv_len = 0)
BAD(iv_len_17, e->iv_len = CRD_IV_MAX + 1)
BAD(iv_len_255, e->iv_len = 255)
/* Outside the arena. */
BAD(src_past_end, e->src_off = (uint32_t)(ARENA_SIZE - e->len + 1))
BAD(dst_past_end, e->dst_off = (uint32_t)(ARENA_SIZE - e->len + 1))
BAD(aad_past_end, e->aad_off = (uint32_t)(ARENA_SIZE - e->aad_len + 1))
BAD(tag_past_end, e->tag_off = (uint32_t)(ARENA_SIZE - 15))
BAD(src_far, e->src_off = 0x80000000u)
BAD(dst_at_end, e->dst_off = (uint32_t)ARENA_SIZE)
/* Offsets whose 32-bit sum with the length wraps to a small value. */
BAD(src_wrap, e->src_off = 0xFFFFFFFFu - 0x10)
BAD(src_wrap_1, (e->src_off = UINT32_MAX, e->len = 1))
BAD(dst_wrap, e->dst_off = 0xFFFFFF00u)
BAD(aad_wrap, e->aad_off = 0xFFFFFFF8u)
BAD(tag_wrap, e->tag_off = 0xFFFFFFF8u)
BAD(in_place_wrap, e->src_off = e->dst_off = 0xFFFFFC01u)
/* Overlaps. */
BAD(dst_overlaps_src_tail, e->dst_off = e->src_off + 1)
BAD(dst_overlaps_src_head, (e->src_off = 4096, e->dst_off = 4096 - 1023))
BAD(tag_in_dst, e->tag_off = e->dst_off + 512)
BAD(tag_straddles_dst_end, e->tag_off = e->dst_off + e->len - 8)
BAD(tag_straddles_dst_start, e->tag_off = e->dst_off - 8)
BAD(tag_in_src, e->tag_off = e->src_off + 100)
BAD(aad_in_dst, e->aad_off = e->dst_off + 1000)
BAD(aad_straddles_dst_start, e->aad_off = e->dst_off - 1)
BAD(aad_overlaps_tag, e->aad_off = e->tag_off + 15)
BAD(aad_covers_tag, (e->aad_off = e->tag_off - 100, e->aad_len = 200))

static const struct bad_case bad_cases[] = {
	CASE(op_zero, CRD_ST_BAD_DESC),
	CASE(op_three, CRD_ST_BAD_DESC),
	CASE(op_ff, CRD_ST_BAD_DESC),
	CASE(flags_low, CRD_ST_BAD_DESC),
	CASE(flags_high, CRD_ST_BAD_DESC),
	CASE(nseg_no_flag, CRD_ST_BAD_DESC),
	CASE(sl_off_no_flag, CRD_ST_BAD_DESC),
	CASE(tag_len_12, CRD_ST_BAD_PARAM),
	CASE(tag_len_17, CRD_ST_BAD_PARAM),
	CASE(tag_len_255, CRD_ST_BAD_PARAM),
	CASE(len_max_plus_1, CRD_ST_BAD_PARAM),
	CASE(len_u32_max, CRD_ST_BAD_PARAM),
	CASE(aad_max_plus_1, CRD_ST_BAD_PARAM),
	CASE(aad_u32_max, CRD_ST_BAD_PARAM),
	CASE(iv_len_0, CRD_ST_BAD_PARAM),
	CASE(iv_len_17, CRD_ST_BAD_PARAM),
	CASE(iv_len_255, CRD_ST_BAD_PARAM),
	CASE(src_past_end, CRD_ST_BAD_RANGE),
	CASE(dst_past_end, CRD_ST_BAD_RANGE),
	CASE(aad_past_end, CRD_ST_BAD_RANGE),
	CASE(tag_past_end, CRD_ST_BAD_RANGE),
	CASE(src_far, CRD_ST_BAD_RANGE),
	CASE(dst_at_end, CRD_ST_BAD_RANGE),
	CASE(src_wrap, CRD_ST_BAD_RANGE),
	CASE(src_wrap_1, CRD_ST_BAD_RANGE),
	CASE(dst_wrap, CRD_ST_BAD_RANGE),
	CASE(aad_wrap, CRD_ST_BAD_RANGE),
	CASE(tag_wrap, CRD_ST_BAD_RANGE),
	CASE(in_place_wrap, CRD_ST_BAD_RANGE),
	CASE(dst_overlaps_src_tail, CRD_ST_BAD_RANGE),
	CASE(dst_overlaps_src_head, CRD_ST_BAD_RANGE),
	CASE(tag_in_dst, CRD_ST_BAD_RANGE),
	CASE(tag_straddles_dst_end, CRD_ST_BAD_RANGE),
	CASE(tag_straddles_dst_start, CRD_ST_BAD_RANGE),
	CASE(tag_in_src, CRD_ST_BAD_RANGE),
	CASE(aad_in_dst, CRD_ST_BAD_RANGE),
	CASE(aad_straddles_dst_start, CRD_ST_BAD_RANGE),
	CASE(aad_overlaps_tag, CRD_ST_BAD_RANGE),
	CASE(aad_covers_tag, CRD_ST_BAD_RANGE),
};

static void test_rejections_gcm(void **state)
{
	const struct session *s = need_gcm();
	struct engine_op op;

	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		for (int dir = CRD_OP_ENCRYPT; dir <= CRD_OP_DECRYPT; dir++) {
			struct crd_sqe e = base_desc();
			e.op = (uint8_t)dir;
			/* The unmutated descriptor is valid... */
			assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
			/* ...and this one thing breaks it. */
			c->mutate(&e);
			int st = resolve(&e, s, &op);
			if (st != c->want)
				fail_msg("%s (op %d): status %d, want %d",
					 c->what, dir, st, c->want);
		}
	}
}

static void test_rejections_null(void **state)
{
	struct crd_sqe e;
	struct engine_op op;

	/* A null session has no tag: any tag_len is a mismatch. */
	e = base_desc();
	e.tag_len = 0;
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_OK);
	for (unsigned tl = 1; tl <= 16; tl++) {
		e.tag_len = (uint8_t)tl;
		assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_BAD_PARAM);
	}

	/* The generic bounds apply whatever the engine. */
	e = base_desc();
	e.tag_len = 0;
	e.iv_len = CRD_IV_MAX + 1;
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_BAD_PARAM);
	e = base_desc();
	e.tag_len = 0;
	e.len = CRD_OP_MAX_LEN + 1;
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_BAD_PARAM);
	e = base_desc();
	e.tag_len = 0;
	e.dst_off = e.src_off + 64;
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_BAD_RANGE);
	e = base_desc();
	e.tag_len = 0;
	e.src_off = 0xFFFFFF00u;
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_BAD_RANGE);
	e = base_desc();
	e.tag_len = 0;
	e.flags = 0x40; /* no such flag */
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_BAD_DESC);
	/* A destination list flagged with no segments. */
	e = base_desc();
	e.tag_len = 0;
	e.flags = CRD_SQE_F_DST_SGL;
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_BAD_PARAM);
}

/* Stream pieces (ring_abi.h): what each position may carry. */
static void test_stream_pieces(void **state)
{
	const struct session *s = need_gcm();
	struct engine_op op;
	struct crd_sqe e;
	const uint8_t S = CRD_SQE_F_STREAM, F = CRD_SQE_F_FIRST,
		      L = CRD_SQE_F_LAST;

	/* A FIRST: IV and AAD, no tag; its tag_off is a parameter, not an
	 * arena offset. */
	e = base_desc();
	e.flags = S | F;
	e.sl_off = 1 << 8 | 3;
	e.tag_len = 0;
	e.tag_off = 0xfffffff0u;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_int_equal(op.tag_len, 0);
	assert_int_equal(op.len, 1024);
	/* ...with a tag length: only LAST has a tag. */
	e.tag_len = 16;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);

	/* A middle piece: nothing but data. */
	e = base_desc();
	e.flags = S;
	e.sl_off = 1 << 8;
	e.iv_len = 0;
	e.aad_len = 0;
	e.tag_len = 0;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	e.iv_len = 12;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
	e.iv_len = 0;
	e.aad_len = 16;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
	e.aad_len = 0;
	e.tag_len = 16;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);

	/* A LAST: the session's tag, in range. */
	e = base_desc();
	e.flags = S | L;
	e.iv_len = 0;
	e.aad_len = 0;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_int_equal(op.tag_len, 16);
	e.tag_off = 0xfffffff0u;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_RANGE);

	/* FIRST/LAST without STREAM; a piece that is scatter-gather or
	 * session-less. */
	e = base_desc();
	e.flags = F;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_DESC);
	e.flags = L;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_DESC);
	e = base_desc();
	e.flags = S | F | CRD_SQE_F_SRC_SGL;
	e.src_nseg = 1;
	e.tag_len = 0;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_DESC);
	e = base_desc();
	e.flags = S | F | CRD_SQE_F_SESSIONLESS;
	e.session = 0;
	e.tag_len = 0;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_DESC);
}

static void test_no_session(void **state)
{
	struct crd_sqe e = base_desc();
	struct engine_op op;

	assert_int_equal(resolve(&e, NULL, &op), CRD_ST_NO_SESSION);
	e.op = CRD_OP_DECRYPT;
	e.dst_off = e.src_off;
	assert_int_equal(resolve(&e, NULL, &op), CRD_ST_NO_SESSION);
}

static void test_tiny_arena(void **state)
{
	struct crd_sqe e = base_desc();
	struct engine_op op;

	/* The same descriptor against a smaller arena. */
	e.tag_len = 0;
	assert_int_equal(
		desc_resolve(&e, t.arena, 12288 + 16, t.null_s, &op, &sg),
		CRD_ST_OK);
	assert_int_equal(
		desc_resolve(&e, t.arena, 8192 + 16, t.null_s, &op, &sg),
		CRD_ST_BAD_RANGE);
	assert_int_equal(op.status, CRD_ST_BAD_RANGE);
	assert_int_equal(desc_resolve(&e, t.arena, 0, t.null_s, &op, &sg),
			 CRD_ST_BAD_RANGE);
}

/* ---- Range helpers ---- */

static void test_range_ok(void **state)
{
	assert_true(desc_range_ok(0, 0, 0));
	assert_false(desc_range_ok(1, 0, 0));
	assert_false(desc_range_ok(0, 1, 0));
	assert_true(desc_range_ok(0, 4096, 4096));
	assert_false(desc_range_ok(1, 4096, 4096));
	assert_true(desc_range_ok(4096, 0, 4096));
	assert_false(desc_range_ok(4097, 0, 4096));
	/* The 32-bit sums wrap; the 64-bit ones do not. */
	assert_false(desc_range_ok(0xFFFFFFF0u, 0x20, 4096));
	assert_false(desc_range_ok(UINT32_MAX, 1, 4096));
	assert_false(desc_range_ok(1, UINT32_MAX, 4096));
	assert_false(desc_range_ok(UINT32_MAX, UINT32_MAX, 1ull << 32));
	assert_true(desc_range_ok(UINT32_MAX, 1, 1ull << 32));
	assert_false(desc_range_ok(UINT32_MAX, 2, 1ull << 32));
	assert_true(desc_range_ok(UINT32_MAX, UINT32_MAX, 1ull << 33));
}

/* Reference: do the byte sets intersect? */
static int overlap_ref(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen)
{
	for (uint32_t i = a; i < a + alen; i++)
		if (i >= b && i < b + blen)
			return 1;
	return 0;
}

static void test_overlap(void **state)
{
	/* Exhaustive over small ranges, against the byte-set definition. */
	for (uint32_t a = 0; a < 10; a++)
		for (uint32_t al = 0; al < 10; al++)
			for (uint32_t b = 0; b < 10; b++)
				for (uint32_t bl = 0; bl < 10; bl++) {
					int want = overlap_ref(a, al, b, bl);
					if (desc_overlap(a, al, b, bl) != want)
						fail_msg("overlap(%u,%u,%u,%u) "
							 "!= %d",
							 a, al, b, bl, want);
				}

	/* Empty ranges never overlap, even at the same offset. */
	assert_false(desc_overlap(100, 0, 100, 10));
	assert_false(desc_overlap(100, 10, 100, 0));
	assert_false(desc_overlap(100, 0, 100, 0));
	/* Near the top of the u32 range: no wrap to low offsets. */
	assert_false(desc_overlap(0xFFFFFFF0u, 0x20, 0x8, 4));
	assert_false(desc_overlap(0x8, 4, 0xFFFFFFF0u, 0x20));
	assert_true(desc_overlap(0xFFFFFFF0u, 0x20, 0xFFFFFFFFu, 1));
	assert_true(desc_overlap(0, UINT32_MAX, UINT32_MAX - 1, UINT32_MAX));
	assert_false(desc_overlap(0, UINT32_MAX, UINT32_MAX, UINT32_MAX));
	assert_true(desc_overlap(UINT32_MAX, 1, UINT32_MAX, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_out_of_place),
		cmocka_unit_test(test_valid_in_place_decrypt),
		cmocka_unit_test(test_valid_edges),
		cmocka_unit_test(test_valid_null_session),
		cmocka_unit_test(test_rejections_gcm),
		cmocka_unit_test(test_rejections_null),
		cmocka_unit_test(test_stream_pieces),
		cmocka_unit_test(test_no_session),
		cmocka_unit_test(test_tiny_arena),
		cmocka_unit_test(test_range_ok),
		cmocka_unit_test(test_overlap),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
