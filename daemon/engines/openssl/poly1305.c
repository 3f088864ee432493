/* SPDX-License-Identifier: MIT */
/*
 * Poly1305 (poly1305.h): h = (h + block + 2^128) * r mod 2^130 - 5 per
 * whole block (a shorter last one gets a 1 byte after it instead), and
 * the tag (h mod 2^130 - 5) + s mod 2^128.
 *
 * Limbs of 44, 44 and 42 bits leave headroom in each 64-bit word: with
 * a block added a limb is below 2^45, r's below 2^44 (20 times that
 * below 2^49), so each product sum is below 2^94, far from 2^128; one
 * carry pass per block brings the limbs back. A product term at 2^132
 * or more wraps as 2^132 = 4 * 2^130 = 20 mod 2^130 - 5: the limbs of r
 * times 20 (s1, s2).
 *
 * Where the CPU has AVX2, runs of POLY_AVX2_MIN blocks or more take eight
 * or four at a time instead (blocks_avx2, below); both give the same
 * values.
 */
#include "poly1305.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define M44 0xfffffffffffull
#define M42 0x3ffffffffffull

/* Runs of this many blocks or more take the AVX2 code, where there is
 * one: below it, moving h into the lanes and back costs more than it
 * saves. */
enum { POLY_AVX2_MIN = 8 };

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "poly1305.c reads and writes little-endian words with memcpy");

static uint64_t ld64le(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void powers26(struct poly1305 *p);
static int have_avx2(void);

void poly1305_init(struct poly1305 *p, const uint8_t key[32])
{
	uint64_t t0 = ld64le(key), t1 = ld64le(key + 8);

	/* r &= 0x0ffffffc0ffffffc0ffffffc0fffffff, cut into limbs */
	p->r[0] = t0 & 0xffc0fffffffull;
	p->r[1] = (t0 >> 44 | t1 << 20) & 0xfffffc0ffffull;
	p->r[2] = (t1 >> 24) & 0x00ffffffc0full;
	p->h[0] = p->h[1] = p->h[2] = 0;
	p->pad[0] = ld64le(key + 16);
	p->pad[1] = ld64le(key + 24);
	/* only the AVX2 code reads them: none made where it cannot run */
	if (have_avx2())
		powers26(p);
	else
		memset(p->pw, 0, sizeof(p->pw));
}

/* n blocks, each with hibit (1 << 40 in the top limb: 2^128) added. */
static void blocks(struct poly1305 *p, const uint8_t *m, size_t n,
		   uint64_t hibit)
{
	const uint64_t r0 = p->r[0], r1 = p->r[1], r2 = p->r[2];
	const uint64_t s1 = r1 * (5 << 2), s2 = r2 * (5 << 2);
	uint64_t h0 = p->h[0], h1 = p->h[1], h2 = p->h[2];

	for (; n; n--, m += 16) {
		uint64_t t0 = ld64le(m), t1 = ld64le(m + 8);
		h0 += t0 & M44;
		h1 += (t0 >> 44 | t1 << 20) & M44;
		h2 += (t1 >> 24 & M42) | hibit;

		unsigned __int128 d0 = (unsigned __int128)h0 * r0 +
				       (unsigned __int128)h1 * s2 +
				       (unsigned __int128)h2 * s1;
		unsigned __int128 d1 = (unsigned __int128)h0 * r1 +
				       (unsigned __int128)h1 * r0 +
				       (unsigned __int128)h2 * s2;
		unsigned __int128 d2 = (unsigned __int128)h0 * r2 +
				       (unsigned __int128)h1 * r1 +
				       (unsigned __int128)h2 * r0;
		/* carry: h back below 2^44, 2^44, 2^42 (plus a small rest) */
		uint64_t c = (uint64_t)(d0 >> 44);
		h0 = (uint64_t)d0 & M44;
		d1 += c;
		c = (uint64_t)(d1 >> 44);
		h1 = (uint64_t)d1 & M44;
		d2 += c;
		c = (uint64_t)(d2 >> 42);
		h2 = (uint64_t)d2 & M42;
		h0 += c * 5;
		c = h0 >> 44;
		h0 &= M44;
		h1 += c;
	}
	p->h[0] = h0;
	p->h[1] = h1;
	p->h[2] = h2;
}

void poly1305_blocks_portable(struct poly1305 *p, const uint8_t *m, size_t n)
{
	blocks(p, m, n, 1ull << 40);
}

/* ---- AVX2: eight or four blocks a step ---- */

#define M26 0x3ffffffull

/*
 * Four lanes, each a Poly1305 of every fourth block, in five limbs of 26
 * bits (radix 2^26: a 26 x 29-bit product fits the 32 x 32-bit
 * multiply, VPMULUDQ, and five of them a 64-bit lane):
 *
 *   lanes = (lanes + the next four blocks) * r^4, for each step but the
 *   last, which multiplies lane j by r^(4 - j) instead; the tag's h is
 *   the sum of the lanes. h enters lane 0 with the first block: (h + m1)
 *   r^4 + m2 r^3 + m3 r^2 + m4 r is four steps of the serial rule.
 *
 * Two such sets of lanes take eight blocks a step, r^8 in place of r^4
 * (blocks_avx2). Bounds: a limb is below 2^26 + 2^13 after each carry
 * pass, below 2^27.1 with a block added (2^28 for h as it enters); r^k's
 * limbs times 5 below 2^29; a product sum below 2^61. The powers are
 * made once, by poly1305_init() on a CPU with AVX2, and kept in the
 * state (plain bytes like the rest). Measured on one core (16 KiB
 * messages, OpenSSL's AVX-512 masked): 7.1 GB/s, the portable code 2.3,
 * OpenSSL's AVX2 code 5.6.
 */

/* A value of the 44-bit form as five 26-bit limbs (the top one takes
 * what lies past 2^104, a little more than 26 bits for an h above
 * 2^130). */
static void to26(uint64_t l[5], const uint64_t v[3])
{
	uint64_t h0 = v[0], h1 = v[1], h2 = v[2], c;
	c = h0 >> 44;
	h0 &= M44;
	h1 += c;
	c = h1 >> 44;
	h1 &= M44;
	h2 += c;
	uint64_t w0 = h0 | h1 << 44, w1 = h1 >> 20 | h2 << 24, w2 = h2 >> 40;
	l[0] = w0 & M26;
	l[1] = w0 >> 26 & M26;
	l[2] = (w0 >> 52 | w1 << 12) & M26;
	l[3] = w1 >> 14 & M26;
	l[4] = w1 >> 40 | w2 << 24;
}

/* One carry pass over the five limbs, 2^130 wrapping as 5: every limb
 * below 2^26 after it but l[1], below 2^26 + 2^13. */
static inline void carry26(uint64_t l[5])
{
	uint64_t c;
	for (int i = 0; i < 4; i++) {
		c = l[i] >> 26;
		l[i] &= M26;
		l[i + 1] += c;
	}
	c = l[4] >> 26;
	l[4] &= M26;
	l[0] += c * 5;
	c = l[0] >> 26;
	l[0] &= M26;
	l[1] += c;
}

/* The 44-bit form of five 26-bit limbs (of any size below 2^60). */
static void from26(uint64_t v[3], uint64_t l[5])
{
	carry26(l);
	/* below 2^128: l[4]'s top two bits go straight to v[2] */
	unsigned __int128 w = l[0] + ((unsigned __int128)l[1] << 26) +
			      ((unsigned __int128)l[2] << 52) +
			      ((unsigned __int128)l[3] << 78) +
			      ((unsigned __int128)(l[4] & 0xffffff) << 104);
	v[0] = (uint64_t)w & M44;
	v[1] = (uint64_t)(w >> 44) & M44;
	v[2] = (uint64_t)(w >> 88) | (l[4] >> 24) << 40;
}

/* o = a * b mod 2^130 - 5, partly reduced (carry26), scalar: the
 * powers of r. */
static void mul26(uint64_t o[5], const uint64_t a[5], const uint64_t b[5])
{
	const uint64_t s1 = b[1] * 5, s2 = b[2] * 5, s3 = b[3] * 5,
		       s4 = b[4] * 5;
	o[0] = a[0] * b[0] + a[1] * s4 + a[2] * s3 + a[3] * s2 + a[4] * s1;
	o[1] = a[0] * b[1] + a[1] * b[0] + a[2] * s4 + a[3] * s3 + a[4] * s2;
	o[2] = a[0] * b[2] + a[1] * b[1] + a[2] * b[0] + a[3] * s4 + a[4] * s3;
	o[3] = a[0] * b[3] + a[1] * b[2] + a[2] * b[1] + a[3] * b[0] +
	       a[4] * s4;
	o[4] = a[0] * b[4] + a[1] * b[3] + a[2] * b[2] + a[3] * b[1] +
	       a[4] * b[0];
	carry26(o);
}

/* r^1..r^8 into p->pw, once per key: each limb is below 2^27 after
 * carry26. */
static void powers26(struct poly1305 *p)
{
	uint64_t pw[8][5];
	to26(pw[0], p->r);
	for (int k = 1; k < 8; k++)
		mul26(pw[k], pw[k - 1], pw[0]);
	for (int k = 0; k < 8; k++)
		for (int i = 0; i < 5; i++)
			p->pw[k][i] = (uint32_t)pw[k][i];
	explicit_bzero(pw, sizeof(pw)); /* key-derived */
}

#if defined(__x86_64__)
#define AVX2_TARGET __attribute__((target("avx2")))
/* The step's helpers, inlined: h stays in registers across a step. */
#define AVX2_INLINE AVX2_TARGET static inline __attribute__((always_inline))
#define VMUL(a, b) _mm256_mul_epu32((a), (b))
#define VADD(a, b) _mm256_add_epi64((a), (b))

/* Carry limb *lo's bits past 26 into *hi: times 5 when they wrap past
 * 2^130 (from the top limb into the bottom one). */
AVX2_INLINE void vcarry(__m256i *lo, __m256i *hi, int wrap)
{
	__m256i c = _mm256_srli_epi64(*lo, 26);
	*lo = _mm256_and_si256(*lo, _mm256_set1_epi64x(M26));
	*hi = VADD(*hi, wrap ? VADD(c, _mm256_slli_epi64(c, 2)) : c);
}

/* h = h * r per lane, carried; s[i] = 5 r[i] (s[0] unused): limb k of
 * the product sums h[i] r[k - i], with s[5 + k - i] for the terms at
 * 2^130 and past, which wrap as 5. Written out, in trees of adds: as
 * loops, the compiler kept neither the registers nor the trees (half
 * the speed). */
AVX2_INLINE void vmul(__m256i h[5], const __m256i r[5], const __m256i s[5])
{
	__m256i d0, d1, d2, d3, d4;

	d0 = VADD(VADD(VMUL(h[0], r[0]), VMUL(h[1], s[4])),
		  VADD(VADD(VMUL(h[2], s[3]), VMUL(h[3], s[2])),
		       VMUL(h[4], s[1])));
	d1 = VADD(VADD(VMUL(h[0], r[1]), VMUL(h[1], r[0])),
		  VADD(VADD(VMUL(h[2], s[4]), VMUL(h[3], s[3])),
		       VMUL(h[4], s[2])));
	d2 = VADD(VADD(VMUL(h[0], r[2]), VMUL(h[1], r[1])),
		  VADD(VADD(VMUL(h[2], r[0]), VMUL(h[3], s[4])),
		       VMUL(h[4], s[3])));
	d3 = VADD(VADD(VMUL(h[0], r[3]), VMUL(h[1], r[2])),
		  VADD(VADD(VMUL(h[2], r[1]), VMUL(h[3], r[0])),
		       VMUL(h[4], s[4])));
	d4 = VADD(VADD(VMUL(h[0], r[4]), VMUL(h[1], r[3])),
		  VADD(VADD(VMUL(h[2], r[2]), VMUL(h[3], r[1])),
		       VMUL(h[4], r[0])));
	/* the carry pass in two chains at once: 0 to 1 to 2 to 3 to 4, and
	 * 3 to 4 to 0 (times 5) to 1 */
	vcarry(&d0, &d1, 0);
	vcarry(&d3, &d4, 0);
	vcarry(&d1, &d2, 0);
	vcarry(&d4, &d0, 1);
	vcarry(&d2, &d3, 0);
	vcarry(&d0, &d1, 0);
	vcarry(&d3, &d4, 0);
	h[0] = d0;
	h[1] = d1;
	h[2] = d2;
	h[3] = d3;
	h[4] = d4;
}

/* h += four blocks at m, lane j block j, each with its 2^128. */
AVX2_INLINE void vadd_blocks(__m256i h[5], const uint8_t *m)
{
	const __m256i mask = _mm256_set1_epi64x(M26);
	__m256i a = _mm256_loadu_si256((const __m256i *)m);
	__m256i b = _mm256_loadu_si256((const __m256i *)(m + 32));
	/* the unpacks give blocks 0, 2, 1, 3: the permute puts them back */
	__m256i lo =
		_mm256_permute4x64_epi64(_mm256_unpacklo_epi64(a, b), 0xd8);
	__m256i hi =
		_mm256_permute4x64_epi64(_mm256_unpackhi_epi64(a, b), 0xd8);

	h[0] = VADD(h[0], _mm256_and_si256(lo, mask));
	h[1] = VADD(h[1], _mm256_and_si256(_mm256_srli_epi64(lo, 26), mask));
	h[2] = VADD(h[2],
		    _mm256_and_si256(_mm256_or_si256(_mm256_srli_epi64(lo, 52),
						     _mm256_slli_epi64(hi, 12)),
				     mask));
	h[3] = VADD(h[3], _mm256_and_si256(_mm256_srli_epi64(hi, 14), mask));
	h[4] = VADD(h[4], _mm256_or_si256(_mm256_srli_epi64(hi, 40),
					  _mm256_set1_epi64x(1 << 24)));
}

/* The lanes' vectors of r^hi (lane 0) .. r^(hi - 3) (lane 3), and 5
 * times them. */
AVX2_INLINE void vpowers(const uint32_t (*pw)[5], int hi, __m256i r[5],
			 __m256i s[5])
{
	for (int i = 0; i < 5; i++) {
		r[i] = _mm256_set_epi64x(pw[hi - 4][i], pw[hi - 3][i],
					 pw[hi - 2][i], pw[hi - 1][i]);
		s[i] = VADD(r[i], _mm256_slli_epi64(r[i], 2));
	}
}

/* The lanes of a and b summed into l, carried. */
AVX2_INLINE void vsum(const __m256i *a, const __m256i *b, uint64_t l[5])
{
	uint64_t x[4];
	for (int i = 0; i < 5; i++) {
		__m256i v = b ? VADD(a[i], b[i]) : a[i];
		_mm256_storeu_si256((__m256i *)x, v);
		l[i] = x[0] + x[1] + x[2] + x[3];
	}
	explicit_bzero(x, sizeof(x));
	carry26(l);
}

/*
 * n >= 4 blocks. Eight at a time while eight are left, in two sets of
 * lanes, a with blocks 0..3 of each eight and b with 4..7, each
 * multiplied by r^8 per step (two chains of products, for the CPU to
 * run side by side) and at the end by r^8..r^5 (a) and r^4..r (b); then
 * four at a time once if four are left; the rest one at a time.
 */
AVX2_TARGET static void blocks_avx2(struct poly1305 *p, const uint8_t *m,
				    size_t n)
{
	const uint32_t(*pw)[5] = p->pw;
	uint64_t l[5];
	struct { /* key-derived, all of it: wiped in one go */
		__m256i r8[5], s8[5], rf[5], sf[5], a[5], b[5];
	} v;
	__m256i *r8 = v.r8, *s8 = v.s8, *rf = v.rf, *sf = v.sf, *a = v.a,
		*b = v.b;

	to26(l, p->h);
	if (n >= 8) {
		for (int i = 0; i < 5; i++) {
			r8[i] = _mm256_set1_epi64x(pw[7][i]);
			s8[i] = VADD(r8[i], _mm256_slli_epi64(r8[i], 2));
			a[i] = _mm256_set_epi64x(0, 0, 0, (long long)l[i]);
			b[i] = _mm256_setzero_si256();
		}
		vadd_blocks(a, m);
		vadd_blocks(b, m + 64);
		for (m += 128, n -= 8; n >= 8; m += 128, n -= 8) {
			vmul(a, r8, s8);
			vmul(b, r8, s8);
			vadd_blocks(a, m);
			vadd_blocks(b, m + 64);
		}
		vpowers(pw, 8, rf, sf);
		vmul(a, rf, sf);
		vpowers(pw, 4, rf, sf);
		vmul(b, rf, sf);
		vsum(a, b, l);
	}
	if (n >= 4) {
		for (int i = 0; i < 5; i++)
			a[i] = _mm256_set_epi64x(0, 0, 0, (long long)l[i]);
		vadd_blocks(a, m);
		vpowers(pw, 4, rf, sf);
		vmul(a, rf, sf);
		vsum(a, NULL, l);
		m += 64;
		n -= 4;
	}
	from26(p->h, l);
	explicit_bzero(&v, sizeof(v));
	explicit_bzero(l, sizeof(l));
	blocks(p, m, n, 1ull << 40);
}

static int have_avx2(void)
{
	return __builtin_cpu_supports("avx2");
}
#else
static void blocks_avx2(struct poly1305 *p, const uint8_t *m, size_t n)
{
	blocks(p, m, n, 1ull << 40);
}

static int have_avx2(void)
{
	return 0;
}
#endif

int poly1305_blocks_avx2(struct poly1305 *p, const uint8_t *m, size_t n)
{
	if (!have_avx2())
		return -1;
	if (n >= 4)
		blocks_avx2(p, m, n);
	else
		blocks(p, m, n, 1ull << 40);
	return 0;
}

void poly1305_blocks(struct poly1305 *p, const uint8_t *m, size_t n)
{
	if (n >= POLY_AVX2_MIN && have_avx2())
		blocks_avx2(p, m, n);
	else
		blocks(p, m, n, 1ull << 40);
}

void poly1305_final(struct poly1305 *p, const uint8_t *m, size_t len,
		    uint8_t tag[16])
{
	if (len) { /* the partial block: its bytes, 1, zeros; no 2^128 */
		uint8_t last[16] = { 0 };
		memcpy(last, m, len);
		last[len] = 1;
		blocks(p, last, 1, 0);
	}
	uint64_t h0 = p->h[0], h1 = p->h[1], h2 = p->h[2], c;

	/* carry fully: h < 2^130 + a little, every limb in range */
	c = h1 >> 44;
	h1 &= M44;
	h2 += c;
	c = h2 >> 42;
	h2 &= M42;
	h0 += c * 5;
	c = h0 >> 44;
	h0 &= M44;
	h1 += c;
	c = h1 >> 44;
	h1 &= M44;
	h2 += c;
	c = h2 >> 42;
	h2 &= M42;
	h0 += c * 5;
	c = h0 >> 44;
	h0 &= M44;
	h1 += c;

	/* g = h + 5 - 2^130: h >= p exactly when g does not borrow; take g
	 * then, h otherwise, by a mask */
	uint64_t g0 = h0 + 5;
	c = g0 >> 44;
	g0 &= M44;
	uint64_t g1 = h1 + c;
	c = g1 >> 44;
	g1 &= M44;
	uint64_t g2 = h2 + c - (1ull << 42);
	uint64_t take_g = (g2 >> 63) - 1; /* all ones when no borrow */
	h0 = (h0 & ~take_g) | (g0 & take_g);
	h1 = (h1 & ~take_g) | (g1 & take_g);
	h2 = (h2 & ~take_g) | (g2 & take_g & M42);

	/* + s, mod 2^128 */
	uint64_t s0 = p->pad[0], s1 = p->pad[1];
	h0 += s0 & M44;
	c = h0 >> 44;
	h0 &= M44;
	h1 += ((s0 >> 44 | s1 << 20) & M44) + c;
	c = h1 >> 44;
	h1 &= M44;
	h2 += (s1 >> 24) + c;
	uint64_t lo = h0 | h1 << 44, hi = h1 >> 20 | h2 << 24;
	memcpy(tag, &lo, 8);
	memcpy(tag + 8, &hi, 8);
}
