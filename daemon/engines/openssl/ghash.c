/* SPDX-License-Identifier: MIT */
/*
 * GHASH (ghash.h): Y = (Y ^ X_i) * H in GF(2^128) mod x^128 + x^7 + x^2
 * + x + 1, per block.
 *
 * Both multiplies make the same 255-bit carry-less product of the two
 * elements as read (ghash.h: bit-reflected, x^0 the top bit), then
 * gf_reduce() folds it. Neither branches on, nor indexes by, H or data;
 * their callers (the stream hook) burn the stack they leave.
 */
#include "ghash.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

static void st64(uint8_t *p, uint64_t v)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

/*
 * The product of two reflected elements: w3:w2:w1:w0 (w3 the most
 * significant word) is their carry-less product, 255 bits, where bit
 * 254 - d is the product polynomial's x^d. One shift left makes bit
 * 255 - d x^d: w3 holds x^0..x^63, w2 x^64..x^127, w1 and w0 the
 * degrees 128..255 to fold with x^128 = x^7 + x^2 + x + 1, which in this
 * order is a shift right by 0, 1, 2 and 7. w0 first, since what its
 * shifts push out lands in w1, which is folded next.
 */
static void gf_reduce(uint64_t y[2], uint64_t w0, uint64_t w1, uint64_t w2,
		      uint64_t w3)
{
	w3 = w3 << 1 | w2 >> 63;
	w2 = w2 << 1 | w1 >> 63;
	w1 = w1 << 1 | w0 >> 63;
	w0 <<= 1;
	w2 ^= w0 ^ w0 >> 1 ^ w0 >> 2 ^ w0 >> 7;
	w1 ^= w0 << 63 ^ w0 << 62 ^ w0 << 57;
	w3 ^= w1 ^ w1 >> 1 ^ w1 >> 2 ^ w1 >> 7;
	w2 ^= w1 << 63 ^ w1 << 62 ^ w1 << 57;
	y[0] = w3;
	y[1] = w2;
}

/* ---- Portable: carry-less products from integer multiplies ---- */

/*
 * The low 64 bits of the carry-less product x * y. Each operand is cut
 * into four sets of bits 4 apart; an integer product of two such sets
 * puts each result bit's terms at one position, their sum there (at most
 * 15 terms, so its carries stay in the 3 bits above, which the mask
 * drops; 16 only in the top 4 bits, whose carries leave the word), and
 * its parity is the carry-less bit.
 */
static uint64_t clmul_lo(uint64_t x, uint64_t y)
{
	const uint64_t m0 = 0x1111111111111111ull, m1 = m0 << 1, m2 = m0 << 2,
		       m3 = m0 << 3;
	uint64_t x0 = x & m0, x1 = x & m1, x2 = x & m2, x3 = x & m3;
	uint64_t y0 = y & m0, y1 = y & m1, y2 = y & m2, y3 = y & m3;
	uint64_t z0 = (x0 * y0) ^ (x1 * y3) ^ (x2 * y2) ^ (x3 * y1);
	uint64_t z1 = (x0 * y1) ^ (x1 * y0) ^ (x2 * y3) ^ (x3 * y2);
	uint64_t z2 = (x0 * y2) ^ (x1 * y1) ^ (x2 * y0) ^ (x3 * y3);
	uint64_t z3 = (x0 * y3) ^ (x1 * y2) ^ (x2 * y1) ^ (x3 * y0);
	return (z0 & m0) | (z1 & m1) | (z2 & m2) | (z3 & m3);
}

static uint64_t rev64(uint64_t x)
{
	x = (x & 0x5555555555555555ull) << 1 | (x >> 1 & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) << 2 | (x >> 2 & 0x3333333333333333ull);
	x = (x & 0x0f0f0f0f0f0f0f0full) << 4 | (x >> 4 & 0x0f0f0f0f0f0f0f0full);
	return __builtin_bswap64(x);
}

/* The high 63 bits: reversed operands make the product's top half its
 * reversed low half (bits 63..126), shifted down once more. */
static uint64_t clmul_hi(uint64_t xr, uint64_t yr)
{
	return rev64(clmul_lo(xr, yr)) >> 1;
}

void ghash_blocks_ct64(struct ghash *g, const uint8_t *p, size_t n)
{
	uint64_t h1 = g->h[0], h0 = g->h[1], h2 = h0 ^ h1;
	uint64_t h0r = rev64(h0), h1r = rev64(h1), h2r = h0r ^ h1r;
	uint64_t y1 = g->y[0], y0 = g->y[1], y[2];

	for (; n; n--, p += 16) {
		y1 ^= ld64(p);
		y0 ^= ld64(p + 8);
		uint64_t y2 = y0 ^ y1, y0r = rev64(y0), y1r = rev64(y1);
		/* Karatsuba: (y1 h1) x^128 + (y0 h0) + the middle term */
		uint64_t lo = clmul_lo(y0, h0), lo_h = clmul_hi(y0r, h0r);
		uint64_t hi = clmul_lo(y1, h1), hi_h = clmul_hi(y1r, h1r);
		uint64_t mid = clmul_lo(y2, h2) ^ lo ^ hi;
		uint64_t mid_h = clmul_hi(y0r ^ y1r, h2r) ^ lo_h ^ hi_h;
		gf_reduce(y, lo, lo_h ^ mid, hi ^ mid_h, hi_h);
		y1 = y[0];
		y0 = y[1];
	}
	g->y[0] = y1;
	g->y[1] = y0;
}

/* ---- PCLMULQDQ (and SSSE3's byte shuffle) ---- */

#if defined(__x86_64__)
#define CLMUL_TARGET __attribute__((target("pclmul,ssse3")))

/* An element as one vector: the first 8 bytes' word high, as read. */
CLMUL_TARGET static __m128i ld128(const uint8_t *p)
{
	const __m128i rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
					 12, 13, 14, 15);
	return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), rev);
}

/* The carry-less product x * h, unreduced, added into lo (x0 h0), hi
 * (x1 h1) and mid (the cross terms). */
CLMUL_TARGET static void clmul_acc(__m128i x, __m128i h, __m128i *lo,
				   __m128i *hi, __m128i *mid)
{
	*lo = _mm_xor_si128(*lo, _mm_clmulepi64_si128(x, h, 0x00));
	*hi = _mm_xor_si128(*hi, _mm_clmulepi64_si128(x, h, 0x11));
	*mid = _mm_xor_si128(*mid, _mm_clmulepi64_si128(x, h, 0x01));
	*mid = _mm_xor_si128(*mid, _mm_clmulepi64_si128(x, h, 0x10));
}

/* Reduce lo, hi, mid (gf_reduce) into an element. */
CLMUL_TARGET static __m128i clmul_reduce(__m128i lo, __m128i hi, __m128i mid)
{
	uint64_t a[2], b[2], c[2], y[2];
	_mm_storeu_si128((__m128i *)a, lo);
	_mm_storeu_si128((__m128i *)b, hi);
	_mm_storeu_si128((__m128i *)c, mid);
	gf_reduce(y, a[0], a[1] ^ c[0], b[0] ^ c[1], b[1]);
	return _mm_set_epi64x((long long)y[0], (long long)y[1]);
}

CLMUL_TARGET static __m128i clmul_mul(__m128i x, __m128i h)
{
	__m128i lo = _mm_setzero_si128(), hi = lo, mid = lo;
	clmul_acc(x, h, &lo, &hi, &mid);
	return clmul_reduce(lo, hi, mid);
}

/*
 * Eight blocks at a time: Y' = (Y ^ X1) H^8 ^ X2 H^7 ^ ... ^ X8 H, the
 * products summed unreduced and reduced once (reduction is linear), then
 * one at a time. The powers are made per call, not kept: the state
 * stays H alone.
 */
CLMUL_TARGET static void blocks_clmul(struct ghash *g, const uint8_t *p,
				      size_t n)
{
	__m128i hp[8]; /* hp[i] = H^(i + 1) */
	__m128i y = _mm_set_epi64x((long long)g->y[0], (long long)g->y[1]);

	hp[0] = _mm_set_epi64x((long long)g->h[0], (long long)g->h[1]);
	if (n >= 8) {
		for (int i = 1; i < 8; i++)
			hp[i] = clmul_mul(hp[i - 1], hp[0]);
		for (; n >= 8; n -= 8, p += 128) {
			__m128i lo = _mm_setzero_si128(), hi = lo, mid = lo;
			clmul_acc(_mm_xor_si128(y, ld128(p)), hp[7], &lo, &hi,
				  &mid);
			for (int i = 1; i < 8; i++)
				clmul_acc(ld128(p + 16 * i), hp[7 - i], &lo,
					  &hi, &mid);
			y = clmul_reduce(lo, hi, mid);
		}
	}
	for (; n; n--, p += 16)
		y = clmul_mul(_mm_xor_si128(y, ld128(p)), hp[0]);
	uint64_t out[2];
	_mm_storeu_si128((__m128i *)out, y);
	g->y[0] = out[1];
	g->y[1] = out[0];
	explicit_bzero(hp, sizeof(hp)); /* key-derived */
	explicit_bzero(out, sizeof(out));
}

static int have_clmul(void)
{
	return __builtin_cpu_supports("pclmul") &&
	       __builtin_cpu_supports("ssse3");
}
#else
static void blocks_clmul(struct ghash *g, const uint8_t *p, size_t n)
{
	(void)g;
	(void)p;
	(void)n;
}

static int have_clmul(void)
{
	return 0;
}
#endif

int ghash_blocks_clmul(struct ghash *g, const uint8_t *p, size_t n)
{
	if (!have_clmul())
		return -1;
	blocks_clmul(g, p, n);
	return 0;
}

/* ---- The interface ---- */

void ghash_init(struct ghash *g, const uint8_t h[16])
{
	g->h[0] = ld64(h);
	g->h[1] = ld64(h + 8);
	g->y[0] = g->y[1] = 0;
}

void ghash_blocks(struct ghash *g, const uint8_t *p, size_t n)
{
	if (have_clmul())
		blocks_clmul(g, p, n);
	else
		ghash_blocks_ct64(g, p, n);
}

void ghash_pad(struct ghash *g, const uint8_t *p, size_t len)
{
	uint8_t last[16] = { 0 };

	ghash_blocks(g, p, len / 16);
	if (len % 16) {
		memcpy(last, p + len / 16 * 16, len % 16);
		ghash_blocks(g, last, 1);
	}
}

void ghash_out(const struct ghash *g, uint8_t out[16])
{
	st64(out, g->y[0]);
	st64(out + 8, g->y[1]);
}
