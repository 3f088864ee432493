/* SPDX-License-Identifier: MIT */
/* Op slot geometry shared by both measured paths. */
#include <string.h>

#include "bench.h"

/* Per thread: cryptoctl bench runs a client thread per queue. */
_Thread_local volatile uint64_t bench_touch_sink;

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

size_t bench_layout_stride(uint32_t len, uint32_t aad_len, uint32_t tag_len)
{
	return align_up((size_t)aad_len + len + tag_len, BENCH_SLOT_ALIGN);
}

size_t bench_layout_dst_stride(uint32_t len, uint32_t aad_len)
{
	return align_up((size_t)aad_len + len, BENCH_SLOT_ALIGN);
}

size_t bench_layout_max_stride(const struct bench_cfg *cfg, bool dst)
{
	uint32_t sizes[BENCH_MAX_SIZES];
	size_t m = 0, s;
	unsigned i, j, n, aad;

	for (i = 0; i < cfg->n_algs; i++) {
		const struct bench_alg *a = cfg->algs[i];

		n = bench_alg_sizes(cfg, a, sizes);
		aad = bench_aad_len(cfg, a);
		for (j = 0; j < n; j++) {
			s = dst ? bench_layout_dst_stride(sizes[j], aad)
				: bench_layout_stride(sizes[j], aad,
						      a->tag_len);
			if (s > m)
				m = s;
		}
	}
	return m;
}

/* Geometry only; the caller points src/dst/iv at its own memory. */
void bench_layout_set(struct bench_layout *l, uint32_t len,
		      const struct bench_cfg *cfg, const struct bench_alg *a,
		      unsigned nslots)
{
	l->len = len;
	l->aad_len = bench_aad_len(cfg, a);
	l->tag_len = a->tag_len;
	l->iv_len = a->iv_len;
	l->stride = bench_layout_stride(len, l->aad_len, l->tag_len);
	l->dst_stride = bench_layout_dst_stride(len, l->aad_len);
	l->nslots = nslots;
	/* GMAC writes no data: its destination is its source. */
	l->tag_only = a->tag_only;
	l->bits = a->bits;
	l->oop = cfg->oop && !a->tag_only;
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
		if (l->oop) {
			memcpy(bench_slot_dst(l, i) - l->aad_len,
			       bench_slot_aad(l, i), l->aad_len);
			memset(bench_slot_dst(l, i), 0, l->len);
		}
		fill(l->iv[i], BENCH_IV_MAX, &s);
	}
}
