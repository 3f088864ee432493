/* SPDX-License-Identifier: MIT */
/*
 * Descriptor validation of IVs in the arena (CRD_SQE_F_ARENA_IV, ring_abi.h):
 * desc_resolve() on private copies of submission entries against real
 * sessions (AES-GCM, AES-GMAC and AES-ECB on the aesni engine, null), and
 * against the kernel engine's AES-GCM capability row (the engine itself
 * needs AF_ALG, which this host may lack; the row is what validation
 * reads). Each rejection is a valid descriptor with one thing wrong.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cryptod/ring_abi.h>

#include "desc.h"
#include "engine.h"
#include "keystore.h"
#include "log.h"
#include "session.h"

#define ARENA_SIZE (1u << 20)
#define IV_OFF 0x8000u /* where the base descriptor's IV lies */

static struct {
	uint8_t *arena;
	struct session *gcm, *gmac, *ecb, *null_s;
} t;

static struct desc_sgl sg; /* desc_resolve's scratch: lists and the IV */

static int group_setup(void **state)
{
	static const uint8_t key[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

	log_init(LOG_ERR_);
	if (engine_probe_all() <= 0 || ks_init(16))
		return -1;
	t.arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t.arena == MAP_FAILED)
		return -1;
	struct session_params p[3] = {
		{ .alg = CRD_ALG_AES_GCM, .key = key, .key_len = 16 },
		{ .alg = CRD_ALG_AES_GMAC, .key = key, .key_len = 16 },
		{ .alg = CRD_ALG_AES_ECB, .key = key, .key_len = 16 },
	};
	struct session **s[3] = { &t.gcm, &t.gmac, &t.ecb };
	for (int i = 0; i < 3; i++) {
		p[i].engine = "aesni";
		if (session_create(&p[i], s[i])) /* no AES-NI: they skip */
			*s[i] = NULL;
	}
	struct session_params null_p = { .alg = CRD_ALG_NULL };
	return session_create(&null_p, &t.null_s) ? -1 : 0;
}

static int group_teardown(void **state)
{
	session_destroy(t.gcm);
	session_destroy(t.gmac);
	session_destroy(t.ecb);
	session_destroy(t.null_s);
	ks_fini();
	engine_fini_all();
	munmap(t.arena, ARENA_SIZE);
	return 0;
}

static const struct session *need(const struct session *s)
{
	if (!s)
		skip(); /* no AES-NI on this CPU */
	return s;
}

static void set_iv_off(struct crd_sqe *e, uint32_t off)
{
	memset(e->iv, 0, sizeof(e->iv));
	e->iv[0] = (uint8_t)off;
	e->iv[1] = (uint8_t)(off >> 8);
	e->iv[2] = (uint8_t)(off >> 16);
	e->iv[3] = (uint8_t)(off >> 24);
}

/* A valid out-of-place AES-GCM encrypt with a 64-byte IV in the arena:
 *   [0, 256) src  [4096, +256) dst  [8192, +16) aad  [12288, +16) tag
 *   [IV_OFF, +64) the IV */
static struct crd_sqe base_desc(void)
{
	struct crd_sqe e = {
		.user_data = 7,
		.session = 1,
		.op = CRD_OP_ENCRYPT,
		.flags = CRD_SQE_F_ARENA_IV,
		.iv_len = 64,
		.src_off = 0,
		.len = 256,
		.dst_off = 4096,
		.aad_off = 8192,
		.aad_len = 16,
		.tag_off = 12288,
	};
	set_iv_off(&e, IV_OFF);
	for (unsigned i = 0; i < CRD_IV_ARENA_MAX; i++)
		t.arena[IV_OFF + i] = (uint8_t)(0x40 + i);
	return e;
}

static int resolve(const struct crd_sqe *e, const struct session *s,
		   struct engine_op *op)
{
	memset(op, 0xee, sizeof(*op));
	memset(sg.iv, 0xee, sizeof(sg.iv));
	int st = desc_resolve(e, t.arena, ARENA_SIZE, s, op, &sg);
	assert_int_equal(op->status, st);
	return st;
}

/* ---- Accepted ---- */

/* The IV is copied out of the arena once, into the scratch: what the
 * client writes there afterwards changes nothing. */
static void test_copied_once(void **state)
{
	const struct session *s = need(t.gcm);
	struct crd_sqe e = base_desc();
	struct engine_op op;
	uint8_t want[64];

	memcpy(want, t.arena + IV_OFF, sizeof(want));
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_int_equal(op.iv_len, 64);
	assert_ptr_equal(op.iv, sg.iv);
	assert_true(op.iv < t.arena || op.iv >= t.arena + ARENA_SIZE);
	assert_memory_equal(op.iv, want, sizeof(want));
	assert_true(desc_holds_sg(&op, &sg)); /* the worker keeps the slot */
	memset(t.arena + IV_OFF, 0x99, 64);
	assert_memory_equal(op.iv, want, sizeof(want));
	assert_ptr_equal(op.src, t.arena);
	assert_ptr_equal(op.dst, t.arena + 4096);

	/* An inline IV is the entry's own copy, and frees the slot. */
	e = base_desc();
	e.flags = 0;
	e.iv_len = 12;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_ptr_equal(op.iv, e.iv);
	assert_false(desc_holds_sg(&op, &sg));
}

/* Every length the engine's row takes, short ones too, up to the end of
 * the arena; the same through scatter-gather and on GMAC. */
static void test_lengths(void **state)
{
	const struct session *s = need(t.gcm);
	struct engine_op op;
	struct crd_sqe e;

	for (unsigned n = 1; n <= CRD_IV_ARENA_MAX; n++) {
		e = base_desc();
		e.iv_len = (uint8_t)n;
		if (resolve(&e, s, &op) != CRD_ST_OK)
			fail_msg("%u-byte arena IV refused", n);
		assert_int_equal(op.iv_len, n);
		assert_memory_equal(op.iv, t.arena + IV_OFF, n);
	}
	e = base_desc();
	e.iv_len = CRD_IV_ARENA_MAX;
	set_iv_off(&e, ARENA_SIZE - CRD_IV_ARENA_MAX);
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);

	/* A scatter-gather source: the lists and the IV share the slot. */
	e = base_desc();
	struct crd_seg segs[2] = { { 0, 100 }, { 512, 156 } };
	memcpy(t.arena + 16384, segs, sizeof(segs));
	e.flags |= CRD_SQE_F_SRC_SGL;
	e.src_off = 16384;
	e.src_nseg = 2;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_true(op.sgl);
	assert_ptr_equal(op.iv, sg.iv);
	assert_memory_equal(op.iv, t.arena + IV_OFF, 64);

	/* GMAC takes them too (the same engine path as GCM). */
	e = base_desc();
	e.aad_len = 0;
	e.dst_off = e.src_off;
	assert_int_equal(resolve(&e, need(t.gmac), &op), CRD_ST_OK);
	/* null ignores any IV the ABI carries. */
	e = base_desc();
	assert_int_equal(resolve(&e, t.null_s, &op), CRD_ST_OK);
}

/* Read before anything of the op is written: the IV may share bytes
 * with the destination, the source, the tag or the AAD. */
static void test_overlaps_allowed(void **state)
{
	const struct session *s = need(t.gcm);
	struct engine_op op;
	struct crd_sqe e;
	const uint32_t offs[] = { 4096 + 100, 0, 12288 - 8, 8192 + 4 };

	for (unsigned i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		e = base_desc();
		set_iv_off(&e, offs[i]);
		assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
		assert_memory_equal(op.iv, t.arena + offs[i], 64);
	}
}

/* A stream's FIRST piece carries it; no other piece has an IV. */
static void test_stream_pieces(void **state)
{
	const struct session *s = need(t.gcm);
	struct engine_op op;
	struct crd_sqe e;

	e = base_desc();
	e.flags |= CRD_SQE_F_STREAM | CRD_SQE_F_FIRST;
	e.sl_off = 1 << 8;
	e.tag_off = 0;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_ptr_equal(op.iv, sg.iv);
	assert_int_equal(op.iv_len, 64);

	e.flags &= (uint8_t)~CRD_SQE_F_FIRST; /* a middle piece */
	e.aad_len = 0;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
	e.iv_len = 0;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_DESC);
}

/* ---- Refused ---- */

static void test_refused(void **state)
{
	const struct session *s = need(t.gcm);
	struct engine_op op;
	struct crd_sqe e;

	/* Longer than the ABI carries; longer than a descriptor holds
	 * without the flag. */
	e = base_desc();
	e.iv_len = CRD_IV_ARENA_MAX + 1;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
	e.iv_len = 255;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
	e = base_desc();
	e.flags = 0;
	e.iv_len = CRD_IV_MAX + 1;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);

	/* The flag with no length, or iv[] holding more than the offset. */
	e = base_desc();
	e.iv_len = 0;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_DESC);
	for (unsigned i = 4; i < CRD_IV_MAX; i++) {
		e = base_desc();
		e.iv[i] = 1;
		if (resolve(&e, s, &op) != CRD_ST_BAD_DESC)
			fail_msg("iv[%u] set beside the offset: accepted", i);
	}
	/* Malformed before anything else: even with no session. */
	e = base_desc();
	e.iv_len = 0;
	assert_int_equal(resolve(&e, NULL, &op), CRD_ST_BAD_DESC);

	/* Out of the arena: past the end by one, the 32-bit sum wrapping,
	 * the offset itself outside. */
	e = base_desc();
	set_iv_off(&e, ARENA_SIZE - 63);
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_RANGE);
	set_iv_off(&e, 0xFFFFFFF0u);
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_RANGE);
	set_iv_off(&e, ARENA_SIZE);
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_RANGE);
	assert_int_equal(desc_resolve(&e, t.arena, 0, s, &op, &sg),
			 CRD_ST_BAD_RANGE);

	/* An algorithm that takes no IV (ECB): any length is refused. */
	e = base_desc();
	e.iv_len = 16;
	e.aad_len = 0;
	assert_int_equal(resolve(&e, need(t.ecb), &op), CRD_ST_BAD_PARAM);
	e.iv_len = 64;
	assert_int_equal(resolve(&e, t.ecb, &op), CRD_ST_BAD_PARAM);
}

/* The kernel engine's gcm(aes) takes 12-byte IVs only: its row refuses
 * the rest, whatever the descriptor carries. */
static void test_kernel_row(void **state)
{
	const struct alg_cap *cap = NULL;
	for (unsigned i = 0; i < engine_count(); i++)
		if (!strcmp(engine_get(i)->name, "kernel"))
			cap = engine_cap(i, CRD_ALG_AES_GCM);
	if (!cap)
		skip(); /* built without the kernel engine */
	struct session k = {
		.alg = CRD_ALG_AES_GCM,
		.tag_len = 16,
		.cap = cap,
		.op_mask = 1u << CRD_OP_ENCRYPT | 1u << CRD_OP_DECRYPT,
	};
	for (unsigned n = 0; n <= CRD_IV_MAX; n++)
		if (range_has(cap->iv, cap->n_iv, n))
			k.iv_ok |= 1u << n;
	assert_int_equal(k.iv_ok, 1u << 12);

	struct engine_op op;
	struct crd_sqe e = base_desc();
	for (unsigned n = 1; n <= CRD_IV_ARENA_MAX; n++) {
		e.iv_len = (uint8_t)n;
		int want = n == 12 ? CRD_ST_OK : CRD_ST_BAD_PARAM;
		if (resolve(&e, &k, &op) != want)
			fail_msg("kernel row, %u-byte IV: want %d", n, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copied_once),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_overlaps_allowed),
		cmocka_unit_test(test_stream_pieces),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_kernel_row),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
