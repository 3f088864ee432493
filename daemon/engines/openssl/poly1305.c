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
 */
#include "poly1305.h"

#include <string.h>

#define M44 0xfffffffffffull
#define M42 0x3ffffffffffull

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "poly1305.c reads and writes little-endian words with memcpy");

static uint64_t ld64le(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

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

void poly1305_blocks(struct poly1305 *p, const uint8_t *m, size_t n)
{
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
