/* SPDX-License-Identifier: MIT */
/*
 * The piece pump (include/cryptod/pump.h) against a fake queue: no
 * daemon, the "engine" XORs each piece with 0x5a when its completion is
 * taken. Pieces, flags and what rides on the first and last; a || b and
 * zeros; in-place copies a piece ahead; failed and forged pieces; no room
 * (take ours first, try again, give up); a dead queue; the side buffer
 * wiped, and no buffer lost.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cryptod/pump.h>

enum { FAKE_OPS = 64, FAKE_RING = 8 };

struct fake_op {
	struct cc_op op;
	uint8_t *buf;
	size_t len;
	uint64_t id;
	uint8_t iv[CC_IV_MAX]; /* a copy: op.iv may be in the side buffer */
};

struct fake {
	int live, max_live; /* buffers out; refuse beyond max_live (> 0) */
	int want_side;	    /* the first buffer is the side buffer */
	uint8_t *side;
	size_t side_len;
	int side_wiped;
	struct fake_op log[FAKE_OPS]; /* every op submitted */
	unsigned n_ops, head;	      /* head: the oldest in flight */
	unsigned max_in, ring;	      /* most in flight; ring size */
	int fail_at;		      /* this op completes with fail_st */
	int32_t fail_st;
	int dead_at; /* waiting for this op fails: the queue died */
	int room_calls, room_in_flight, room_ret, room_left;
};

static uint8_t *fake_alloc(void *ctx, size_t len)
{
	struct fake *f = ctx;
	assert_true(len >= 1);
	if (f->max_live && f->live >= f->max_live)
		return NULL;
	uint8_t *b = malloc(len);
	assert_non_null(b);
	memset(b, 0xee, len);
	if (f->want_side && !f->side) {
		f->side = b;
		f->side_len = len;
	}
	f->live++;
	return b;
}

static void fake_free(void *ctx, uint8_t *buf)
{
	struct fake *f = ctx;
	if (buf == f->side) {
		f->side_wiped = 1;
		for (size_t i = 0; i < f->side_len; i++)
			f->side_wiped &= buf[i] == 0;
	}
	f->live--;
	free(buf);
}

static int fake_submit(void *ctx, struct cc_op *op, struct pump_piece *pc)
{
	struct fake *f = ctx;
	if (f->n_ops - f->head >= (f->ring ? f->ring : FAKE_RING))
		return PUMP_RING_FULL;
	assert_true(f->n_ops < FAKE_OPS);
	assert_ptr_equal(op->src, pc->buf);
	pc->id = 1000 + f->n_ops;
	struct fake_op *o = &f->log[f->n_ops];
	*o = (struct fake_op){
		.op = *op, .buf = pc->buf, .len = pc->len, .id = pc->id
	};
	assert_true(op->iv_len <= CC_IV_MAX);
	if (op->iv_len)
		memcpy(o->iv, op->iv, op->iv_len);
	f->n_ops++;
	if (f->n_ops - f->head > f->max_in)
		f->max_in = f->n_ops - f->head;
	return 0;
}

static int fake_room(void *ctx, int why, unsigned in_flight)
{
	struct fake *f = ctx;
	f->room_calls++;
	if (in_flight)
		f->room_in_flight++;
	if (f->room_left > 0 && --f->room_left == 0)
		f->max_live = 0; /* the room came */
	return in_flight && f->room_ret == 0 ? 1 : f->room_ret;
}

/* The engine runs the oldest op: XOR 0x5a; an encrypting LAST writes
 * the tag (0x70 + i). */
static int fake_wait(void *ctx, struct pump_piece *pc, int32_t *st)
{
	struct fake *f = ctx;
	assert_true(f->head < f->n_ops);
	struct fake_op *o = &f->log[f->head];
	if ((int)f->head == f->dead_at)
		return -EPIPE;
	assert_int_equal(pc->id, o->id);
	assert_ptr_equal(pc->buf, o->buf);
	for (size_t i = 0; i < o->len; i++)
		o->buf[i] ^= 0x5a;
	if (o->op.tag && o->op.dir == CC_ENCRYPT)
		for (unsigned i = 0; i < 16; i++)
			((uint8_t *)o->op.tag)[i] = (uint8_t)(0x70 + i);
	*st = (int)f->head == f->fail_at ? f->fail_st : CC_OK;
	f->head++;
	return 0;
}

static void fake_done(void *ctx, struct pump_piece *pc, int32_t st)
{
	fake_free(ctx, pc->buf);
}

static const struct pump_ops fake_ops = {
	.alloc = fake_alloc,
	.free = fake_free,
	.submit = fake_submit,
	.room = fake_room,
	.wait = fake_wait,
	.done = fake_done,
};

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->fail_at = -1;
	f->dead_at = -1;
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static void expect_xor(const uint8_t *out, const uint8_t *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i], in[i] ^ 0x5a);
}

/* 250 bytes in pieces of 100, one whole stream: FIRST (with IV, AAD,
 * param), a middle piece, LAST (with the tag); output in order. */
static void test_pieces_and_flags(void **state)
{
	struct fake f;
	uint8_t in[250], out[250], iv[12], aad[20], tag[16] = { 0 };
	fake_init(&f);
	f.want_side = 1;
	fill(in, sizeof(in), 1);
	fill(iv, sizeof(iv), 2);
	fill(aad, sizeof(aad), 3);
	struct pump_req r = {
		.session = 7,
		.dir = CC_ENCRYPT,
		.stream = 0x105,
		.first = 1,
		.last = 1,
		.param = 4096,
		.iv = iv,
		.iv_len = 12,
		.aad = aad,
		.aad_len = 20,
		.a = in,
		.na = sizeof(in),
		.piece = 100,
		.out = out,
		.tag = tag,
		.tag_len = 16,
	};
	struct pump_out o;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), 0);
	assert_int_equal(f.n_ops, 3);
	assert_int_equal(o.sent, 3);
	assert_int_equal(o.done, 250);
	assert_true(o.last_sent);
	assert_false(o.failed || o.dead);
	expect_xor(out, in, sizeof(out));

	const struct cc_op *a = &f.log[0].op, *m = &f.log[1].op,
			   *z = &f.log[2].op;
	assert_int_equal(a->stream_flags, CC_STREAM_FIRST);
	assert_int_equal(m->stream_flags, 0);
	assert_int_equal(z->stream_flags, CC_STREAM_LAST);
	assert_int_equal(a->len + m->len + z->len, 250);
	assert_int_equal(z->len, 50);
	assert_int_equal(a->stream_param, 4096);
	assert_int_equal(z->stream_param, 0);
	assert_ptr_equal(a->iv, iv); /* a short IV rides in the descriptor */
	assert_int_equal(a->iv_len, 12);
	assert_int_equal(a->aad_len, 20);
	assert_ptr_equal(a->aad, f.side); /* the AAD from the arena */
	assert_null(m->iv);
	assert_null(m->aad);
	assert_null(a->tag);
	assert_null(m->tag);
	assert_non_null(z->tag);
	for (int i = 0; i < 3; i++)
		assert_int_equal(f.log[i].op.session, 7);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(tag[i], 0x70 + i);
	assert_true(f.side_wiped);
	assert_int_equal(f.live, 0);
}

/* More pieces than the depth: never more than PUMP_DEPTH in flight. A
 * middle call carries neither FIRST nor LAST, nor IV, AAD or tag. */
static void test_depth(void **state)
{
	struct fake f;
	uint8_t in[1000], out[1000];
	fake_init(&f);
	fill(in, sizeof(in), 9);
	struct pump_req r = { .dir = CC_DECRYPT,
			      .stream = 3,
			      .a = in,
			      .na = sizeof(in),
			      .piece = 64,
			      .out = out };
	struct pump_out o;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), 0);
	assert_int_equal(f.n_ops, 16);
	assert_int_equal(f.max_in, PUMP_DEPTH);
	for (unsigned i = 0; i < f.n_ops; i++) {
		assert_int_equal(f.log[i].op.stream_flags, 0);
		assert_null(f.log[i].op.tag);
		assert_int_equal(f.log[i].op.iv_len, 0);
	}
	assert_false(o.last_sent);
	expect_xor(out, in, sizeof(out));
	assert_int_equal(f.live, 0);
}

/* a || b in pieces, into out of its own or into b itself: in place,
 * each piece's output lands up to na bytes ahead of its input, which the
 * next piece has already copied in. */
static void run_a_b(size_t na, size_t nb, size_t piece, int in_place)
{
	struct fake f;
	uint8_t a[64], b[1088], out[1088], want[1088];
	assert_true(na <= sizeof(a) && na + nb <= sizeof(b));
	fake_init(&f);
	fill(a, na, 5);
	fill(b, nb, 6);
	memcpy(want, a, na);
	memcpy(want + na, b, nb);
	uint8_t *dst = in_place ? b : out;
	struct pump_req r = { .stream = 1,
			      .a = a,
			      .na = na,
			      .b = b,
			      .nb = nb,
			      .piece = piece,
			      .out = dst };
	struct pump_out o;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), 0);
	assert_int_equal(o.done, na + nb);
	expect_xor(dst, want, na + nb);
	assert_int_equal(f.live, 0);
}

static void test_gather(void **state)
{
	run_a_b(30, 170, 64, 0);
	run_a_b(0, 200, 64, 0);
	run_a_b(64, 0, 10, 0);

	/* A NULL a: zeros. */
	struct fake f;
	uint8_t out[200], want[200] = { 0 };
	struct pump_out o;
	fake_init(&f);
	struct pump_req r = { .a = NULL, .na = 200, .out = out };
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), 0);
	assert_int_equal(f.n_ops, 1);
	expect_xor(out, want, sizeof(out));
}

/* One op (stream 0): all bytes in one piece whatever piece says, no
 * stream flags, IV, AAD and tag on it; a long IV from the arena. */
static void test_one_op(void **state)
{
	struct fake f;
	uint8_t in[300], out[300], iv[60], tag[16];
	fake_init(&f);
	f.want_side = 1;
	fill(in, sizeof(in), 1);
	fill(iv, sizeof(iv), 4);
	fill(tag, sizeof(tag), 8);
	struct pump_req r = { .dir = CC_DECRYPT,
			      .first = 1,
			      .last = 1,
			      .iv = iv,
			      .iv_len = 60,
			      .a = in,
			      .na = 300,
			      .piece = 10,
			      .out = out,
			      .tag = tag,
			      .tag_len = 16 };
	struct pump_out o;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), 0);
	assert_int_equal(f.n_ops, 1);
	const struct cc_op *op = &f.log[0].op;
	assert_int_equal(op->len, 300);
	assert_int_equal(op->stream_flags, 0);
	assert_int_equal(op->stream, 0);
	assert_int_equal(op->iv_len, 60);
	assert_ptr_not_equal(op->iv, iv); /* a long IV: a copy in the arena */
	assert_memory_equal(f.log[0].iv, iv, 60);
	/* Decrypt: the tag travels in, and is not written back. */
	uint8_t want[16];
	fill(want, sizeof(want), 8);
	assert_memory_equal(tag, want, 16);
	assert_true(f.side_wiped);
	assert_int_equal(f.live, 0);
}

/* An empty LAST still sends one op (of a 1-byte buffer, length 0). */
static void test_empty_last(void **state)
{
	struct fake f;
	uint8_t tag[16] = { 0 };
	fake_init(&f);
	struct pump_req r = { .dir = CC_ENCRYPT,
			      .stream = 9,
			      .last = 1,
			      .piece = PUMP_PIECE,
			      .tag = tag,
			      .tag_len = 16 };
	struct pump_out o;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), 0);
	assert_int_equal(f.n_ops, 1);
	assert_int_equal(f.log[0].op.len, 0);
	assert_int_equal(f.log[0].op.stream_flags, CC_STREAM_LAST);
	assert_int_equal(tag[0], 0x70);
	assert_true(o.last_sent);

	/* Not last and nothing to send: nothing at all. */
	fake_init(&f);
	r = (struct pump_req){ .stream = 9, .piece = PUMP_PIECE };
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), 0);
	assert_int_equal(f.n_ops, 0);
}

static void test_in_place(void **state)
{
	run_a_b(15, 585, 100, 1);
	run_a_b(63, 1000, 64, 1);
}

/* A failed piece: its status, its output zeroed (or left alone), the
 * pieces after it still reaped; a forged message releases nothing. */
static void test_failed_and_forged(void **state)
{
	struct fake f;
	uint8_t in[300], out[300];
	fill(in, sizeof(in), 2);
	struct pump_req r = {
		.stream = 4, .a = in, .na = 300, .piece = 100, .out = out
	};
	struct pump_out o;

	fake_init(&f);
	f.fail_at = 1;
	f.fail_st = CC_ERR_BAD_PARAM;
	memset(out, 0xcc, sizeof(out));
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), CC_ERR_BAD_PARAM);
	assert_true(o.failed);
	assert_int_equal(o.done, 300);
	expect_xor(out, in, 100);
	for (int i = 100; i < 200; i++)
		assert_int_equal(out[i], 0);
	assert_int_equal(f.live, 0);

	fake_init(&f);
	f.fail_at = 1;
	f.fail_st = CC_ERR_BAD_PARAM;
	r.out_if_ok = 1;
	memset(out, 0xcc, sizeof(out));
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), CC_ERR_BAD_PARAM);
	for (int i = 100; i < 200; i++)
		assert_int_equal(out[i], 0xcc);

	fake_init(&f);
	f.fail_at = 2;
	f.fail_st = CC_ERR_AUTH_FAILED;
	r.out_if_ok = 0;
	r.last = 1;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), CC_ERR_AUTH_FAILED);
	for (int i = 0; i < 300; i++)
		assert_int_equal(out[i], 0);
}

/* No room with our own pieces in flight: take them first (room says 1),
 * then go on; the result is the same. */
static void test_no_room_ours_first(void **state)
{
	struct fake f;
	uint8_t in[1000], out[1000];
	fake_init(&f);
	f.max_live = 2;
	fill(in, sizeof(in), 7);
	struct pump_req r = {
		.stream = 5, .a = in, .na = 1000, .piece = 100, .out = out
	};
	struct pump_out o;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), 0);
	assert_true(f.room_in_flight > 0);
	assert_int_equal(f.max_in, 2);
	expect_xor(out, in, sizeof(out));
	assert_int_equal(f.live, 0);

	/* A full ring likewise. */
	fake_init(&f);
	f.ring = 1;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), 0);
	assert_int_equal(f.max_in, 1);
	expect_xor(out, in, sizeof(out));
	assert_int_equal(f.live, 0);
}

/* No room and none of ours in flight: room decides. It waits (0: try
 * again), or gives up (-errno), leaving nothing behind. */
static void test_no_room_none_in_flight(void **state)
{
	struct fake f;
	uint8_t in[100], out[100], aad[8] = { 1 };
	fill(in, sizeof(in), 7);
	struct pump_req r = { .stream = 5,
			      .first = 1,
			      .aad = aad,
			      .aad_len = 8,
			      .a = in,
			      .na = 100,
			      .piece = 100,
			      .out = out };
	struct pump_out o;

	fake_init(&f);
	f.max_live = 1; /* the side buffer, then no room */
	f.room_left = 3;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), 0);
	assert_int_equal(f.room_calls, 3);
	expect_xor(out, in, sizeof(out));
	assert_int_equal(f.live, 0);

	fake_init(&f);
	f.max_live = 1;
	f.room_ret = -ENOMEM;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), -ENOMEM);
	assert_int_equal(o.sent, 0);
	assert_int_equal(f.n_ops, 0);
	assert_int_equal(f.live, 0);

	/* No room for the side buffer either. */
	fake_init(&f);
	f.room_ret = -ENOMEM;
	f.max_live = 1;
	f.live = 1; /* someone else's */
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), -ENOMEM);
	assert_int_equal(f.n_ops, 0);
	assert_int_equal(f.live, 1);
}

/* The queue dies while pieces are in flight: the pump returns at once,
 * its buffers abandoned (the caller drops the queue). */
static void test_dead(void **state)
{
	struct fake f;
	uint8_t in[500], out[500];
	fake_init(&f);
	f.dead_at = 1;
	fill(in, sizeof(in), 1);
	struct pump_req r = {
		.stream = 6, .a = in, .na = 500, .piece = 100, .out = out
	};
	struct pump_out o;
	assert_int_equal(pump_run(&fake_ops, &f, &r, &o), -EPIPE);
	assert_true(o.dead);
	assert_int_equal(o.done, 100);
	assert_int_equal(f.live, PUMP_DEPTH); /* abandoned, not freed */
	for (unsigned i = f.head; i < f.n_ops; i++)
		free(f.log[i].buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pieces_and_flags),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_gather),
		cmocka_unit_test(test_one_op),
		cmocka_unit_test(test_empty_last),
		cmocka_unit_test(test_in_place),
		cmocka_unit_test(test_failed_and_forged),
		cmocka_unit_test(test_no_room_ours_first),
		cmocka_unit_test(test_no_room_none_in_flight),
		cmocka_unit_test(test_dead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
