/* SPDX-License-Identifier: MIT */
/*
 * Descriptor validation for the algorithms whose lengths count bits
 * (crd_alg_bit_len: SNOW 3G, ZUC, KASUMI): desc_resolve() checks the bit
 * length against the capability and everything else -- ranges, overlaps,
 * list sums, the engine op's len -- in bytes, ceil(bits / 8). A UEA2 and
 * a UIA2 session on the aesni engine; the cases skip without AES-NI.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/mman.h>

#include <cryptod/ring_abi.h>

#include "desc.h"
#include "engine.h"
#include "keystore.h"
#include "log.h"
#include "session.h"

#define ARENA_SIZE (1u << 20)

static struct {
	uint8_t *arena;
	struct session *uea2, *uia2;
} t;

static struct desc_sgl sg;

static int group_setup(void **state)
{
	static const uint8_t key[16] = { 1, 2, 3 };

	log_init(LOG_ERR_);
	if (engine_probe_all() <= 0 || ks_init(4))
		return -1;
	t.arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t.arena == MAP_FAILED)
		return -1;
	struct session_params p = { .alg = CRD_ALG_SNOW3G_UEA2,
				    .key = key,
				    .key_len = 16,
				    .engine = "aesni" };
	if (session_create(&p, &t.uea2))
		t.uea2 = NULL;
	p.alg = CRD_ALG_SNOW3G_UIA2;
	if (session_create(&p, &t.uia2))
		t.uia2 = NULL;
	return 0;
}

static int group_teardown(void **state)
{
	if (t.uea2)
		session_destroy(t.uea2);
	if (t.uia2)
		session_destroy(t.uia2);
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

/* 17 bits (3 bytes) from the arena's last 3 bytes to [0, 3). */
static struct crd_sqe desc17(void)
{
	struct crd_sqe e = {
		.session = 1,
		.op = CRD_OP_ENCRYPT,
		.iv_len = 16,
		.src_off = ARENA_SIZE - 3,
		.len = 17,
		.dst_off = 0,
		.tag_off = 64,
	};
	return e;
}

static int resolve(const struct crd_sqe *e, const struct session *s,
		   struct engine_op *op)
{
	memset(op, 0xee, sizeof(*op));
	int st = desc_resolve(e, t.arena, ARENA_SIZE, s, op, &sg);
	assert_int_equal(op->status, st);
	return st;
}

static void test_byte_extent(void **state)
{
	const struct session *s = need(t.uea2);
	struct crd_sqe e = desc17();
	struct engine_op op;

	assert_int_equal(crd_len_bytes(CRD_ALG_SNOW3G_UEA2, 17), 3);
	assert_int_equal(crd_len_bytes(CRD_ALG_SNOW3G_UEA2, UINT32_MAX),
			 (uint32_t)(((uint64_t)UINT32_MAX + 7) / 8));
	assert_int_equal(crd_len_bytes(CRD_ALG_AES_CTR, 17), 17);
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_int_equal(op.len, 3);
	assert_int_equal(op.bits, 17);
	assert_ptr_equal(op.src, t.arena + ARENA_SIZE - 3);
	/* 25 bits need a fourth byte, past the arena. */
	e.len = 25;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_RANGE);
	/* The destination's extent is bytes too: [0, 3) and [2, 5) meet. */
	e = desc17();
	e.src_off = 2;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_RANGE);
	e.src_off = 3;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	/* Bits, not bytes, against the capability: 0 and 2^27 + 1. */
	e.len = 0;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
	e.len = CRD_OP_MAX_LEN * 8u + 1;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
	e.len = UINT32_MAX;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
}

static void test_list_sum(void **state)
{
	const struct session *s = need(t.uea2);
	struct crd_sqe e = desc17();
	struct crd_seg *l = (struct crd_seg *)(t.arena + 4096);
	struct engine_op op;

	l[0] = (struct crd_seg){ 8192, 1 };
	l[1] = (struct crd_seg){ 8200, 2 };
	e.flags = CRD_SQE_F_SRC_SGL;
	e.src_off = 4096;
	e.src_nseg = 2;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_int_equal(op.sgl, 1);
	assert_int_equal(op.len, 3);
	l[1].len = 1; /* 2 bytes for 17 bits */
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
	l[1].len = 3; /* 4 bytes: not the extent either */
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
}

static void test_mac(void **state)
{
	const struct session *s = need(t.uia2);
	struct crd_sqe e = desc17();
	struct engine_op op;

	/* No destination; the tag is 4 bytes and must not touch the data. */
	e.tag_len = 4;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_OK);
	assert_int_equal(op.len, 3);
	assert_int_equal(op.tag_len, 4);
	e.tag_off = ARENA_SIZE - 4;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_RANGE);
	e = desc17();
	e.tag_len = 8;
	assert_int_equal(resolve(&e, s, &op), CRD_ST_BAD_PARAM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_byte_extent),
		cmocka_unit_test(test_list_sum),
		cmocka_unit_test(test_mac),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
