/* SPDX-License-Identifier: MIT */
/* Shared helpers of the stream tests (stream_util.h). */
#include "stream_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cryptod/ring_abi.h>

#include "keystore.h"
#include "log.h"

static uint64_t su_state;

void su_seed(void)
{
	const char *env = getenv("STREAM_SEED");
	uint64_t seed = 0x5eed5712ea11c0deull;
	if (env && *env)
		seed = strtoull(env, NULL, 0);
	su_state = seed;
	printf("stream seed 0x%016" PRIx64 " (STREAM_SEED=0x%016" PRIx64
	       " repeats this run)\n",
	       seed, seed);
	fflush(stdout);
}

uint64_t su_rand(void)
{
	uint64_t z = (su_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t su_below(uint64_t n)
{
	return su_rand() % n;
}

void su_fill(void *p, size_t n)
{
	uint8_t *b = p;
	for (; n >= 8; n -= 8, b += 8) {
		uint64_t v = su_rand();
		memcpy(b, &v, 8);
	}
	if (n) {
		uint64_t v = su_rand();
		memcpy(b, &v, n);
	}
}

void su_cuts_free(struct su_cuts *c)
{
	free(c->len);
	memset(c, 0, sizeof(*c));
}

static void su_push(struct su_cuts *c, size_t len)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->len = realloc(c->len, c->cap * sizeof(c->len[0]));
		if (!c->len)
			abort();
	}
	c->len[c->n++] = len;
}

void su_cut(struct su_cuts *c, size_t total, size_t gran, size_t typ)
{
	unsigned style = (unsigned)su_below(4);
	size_t left = total;

	c->n = 0;
	if (style == 0 && total > 4096)
		style = 1; /* 1-byte pieces for short messages only */
	if (su_below(4) == 0)
		su_push(c, 0); /* an empty FIRST */
	while (left > gran) {
		size_t n;
		if (typ)
			n = typ / 2 + su_below(typ);
		else if (style == 0)
			n = 1;
		else if (style == 1)
			n = 1 + su_below(4096);
		else if (style == 2)
			n = 1 + su_below(1u << 20);
		else
			n = su_below(2) ? 1 + su_below(64)
					: 1 + su_below(1u << 20);
		n = n < gran ? gran : n / gran * gran;
		if (su_below(16) == 0)
			n = 0; /* an empty middle piece */
		if (n >= left)
			break;
		su_push(c, n);
		left -= n;
	}
	if (left && left % gran == 0 && su_below(4) == 0) {
		su_push(c, left); /* the rest, then an empty LAST */
		left = 0;
	}
	su_push(c, left);
	/* One piece is FIRST|LAST, whose param is its length: one XTS data
	 * unit, not units of gran bytes. Such pieces are tested apart. */
	if (c->n == 1 && total > gran) {
		su_push(c, total);
		c->len[0] = 0;
	}
}

static int su_run_piece(const struct engine *e, void *wctx,
			const struct su_piece *p, const uint8_t *src,
			uint8_t *dst, size_t len, unsigned pos, void *state)
{
	struct engine_op op = {
		.sess = p->s,
		.src = src,
		.dst = dst,
		.len = (uint32_t)len,
		.op = (uint8_t)p->dir,
		.pos = (uint8_t)pos,
		.status = 12345,
	};
	if (pos & ENGINE_FIRST) {
		op.iv = p->iv;
		op.iv_len = (uint8_t)p->iv_len;
		op.aad = p->aad;
		op.aad_len = p->aad_len;
		op.param = pos & ENGINE_LAST ? (uint32_t)len : p->param;
	}
	if (pos & ENGINE_LAST) {
		op.tag = p->tag;
		op.tag_len = p->s->tag_len;
	}
	e->stream(wctx, &op, state);
	return op.status;
}

static void *su_state_buf(void)
{
	static void *buf;
	if (!buf && !(buf = aligned_alloc(64, STREAM_STATE_SIZE)))
		abort();
	return buf;
}

int su_run(const struct engine *e, void *wctx, const struct su_piece *p,
	   const uint8_t *src, uint8_t *dst, const struct su_cuts *c,
	   size_t *failed_piece)
{
	void *state = su_state_buf();
	size_t off = 0;
	int st = CRD_ST_OK;

	if (!dst)
		dst = (uint8_t *)src;
	memset(state, 0, STREAM_STATE_SIZE);
	for (size_t i = 0; i < c->n; i++) {
		unsigned pos = (i == 0 ? ENGINE_FIRST : 0) |
			       (i + 1 == c->n ? ENGINE_LAST : 0);
		st = su_run_piece(e, wctx, p, src + off, dst + off, c->len[i],
				  pos, state);
		if (st != CRD_ST_OK) {
			if (failed_piece)
				*failed_piece = i;
			break;
		}
		off += c->len[i];
	}
	memset(state, 0, STREAM_STATE_SIZE); /* the daemon wipes it */
	return st;
}

int su_run_one(const struct engine *e, void *wctx, const struct su_piece *p,
	       const uint8_t *src, uint8_t *dst, size_t len)
{
	struct su_cuts c = { 0 };
	su_push(&c, len);
	int st = su_run(e, wctx, p, src, dst, &c, NULL);
	su_cuts_free(&c);
	return st;
}

int su_oneshot(const struct engine *e, void *wctx, const struct su_piece *p,
	       const uint8_t *src, uint8_t *dst, size_t len)
{
	struct engine_op op = {
		.sess = p->s,
		.src = src,
		.dst = dst ? dst : (uint8_t *)src,
		.tag = p->tag,
		.iv = p->iv,
		.aad = p->aad,
		.aad_len = p->aad_len,
		.len = (uint32_t)len,
		.iv_len = (uint8_t)p->iv_len,
		.tag_len = p->s->tag_len,
		.op = (uint8_t)p->dir,
		.status = 12345,
	};
	e->process(wctx, &op, 1);
	return op.status;
}

int su_setup(unsigned slots)
{
	log_init(LOG_ERR_); /* engine probing is chatty at info */
	su_seed();
	if (engine_probe_all() <= 0)
		return -1;
	return ks_init(slots) ? -1 : 0;
}

void su_teardown(void)
{
	ks_fini();
	engine_fini_all();
}

size_t su_size(unsigned i, size_t max)
{
	static const size_t edge[] = { 0,  1,  15, 16,	17,  31,  32,  33,
				       63, 64, 65, 127, 128, 129, 255, 4103 };
	if (i < sizeof(edge) / sizeof(edge[0]))
		return edge[i] <= max ? edge[i] : max;
	/* log-uniform over [1, max] */
	unsigned bits = 1 + (unsigned)su_below(64 - __builtin_clzll(max));
	size_t n = (size_t)(su_rand() & ((bits >= 64 ? 0 : 1ull << bits) - 1));
	return n > max ? max : n;
}
