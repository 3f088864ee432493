/* SPDX-License-Identifier: MIT */
/* Op slot geometry shared by both measured paths. */
#include <string.h>

#include "bench.h"

volatile uint64_t bench_touch_sink;

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

size_t bench_layout_stride(uint32_t len, uint32_t aad_len, uint32_t tag_len)
{
	return align_up((size_t)aad_len + len + tag_len, BENCH_SLOT_ALIGN);
}

size_t bench_layout_dst_stride(uint32_t len)
{
	return align_up(len, BENCH_SLOT_ALIGN);
}

/* Geometry only; the caller points src/dst/iv at its own memory. */
void bench_layout_set(struct bench_layout *l, uint32_t len,
		      const struct bench_cfg *cfg, unsigned nslots)
{
	l->len = len;
	l->aad_len = cfg->aad_len;
	l->tag_len = bench_tag_len(cfg->alg);
	l->stride = bench_layout_stride(len, l->aad_len, l->tag_len);
	l->dst_stride = bench_layout_dst_stride(len);
	l->nslots = nslots;
	l->oop = cfg->oop;
}

/* xorshift64: a reproducible pattern, different per slot and per size. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static void fill(uint8_t *p, size_t n, uint64_t *s)
{
	size_t i;
	uint64_t r;

	for (i = 0; i + 8 <= n; i += 8) {
		r = next_rand(s);
		memcpy(p + i, &r, 8);
	}
	if (i < n) {
		r = next_rand(s);
		memcpy(p + i, &r, n - i);
	}
}

void bench_layout_fill(const struct bench_layout *l)
{
	uint64_t s = 0x9e3779b97f4a7c15ull ^ l->len;
	unsigned i;

	for (i = 0; i < l->nslots; i++) {
		fill(bench_slot_aad(l, i), l->aad_len, &s);
		fill(bench_slot_src(l, i), l->len, &s);
		memset(bench_slot_tag(l, i), 0, l->tag_len);
		if (l->oop)
			memset(bench_slot_dst(l, i), 0, l->len);
		fill(l->iv[i], BENCH_IV_LEN, &s);
	}
}
