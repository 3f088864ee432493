/* SPDX-License-Identifier: MIT */
/*
 * Poly1305 (RFC 8439 2.5) for the openssl engine's ChaCha20-Poly1305
 * streams (openssl_stream_aead.c): EVP keeps its Poly1305 inside an
 * opaque context, and a stream's state must be plain bytes (stream.h).
 *
 * The accumulator and r in three limbs of 44, 44 and 42 bits in 64-bit
 * words, products in unsigned __int128; constant time (no branch or
 * index on the key, the message or the accumulator), the final
 * reduction mod 2^130 - 5 complete, by a masked select. Where the CPU
 * has AVX2, long runs of blocks take four or eight at a time, in limbs
 * of 26 bits (poly1305.c).
 */
#ifndef CRYPTOD_ENGINE_POLY1305_H
#define CRYPTOD_ENGINE_POLY1305_H

#include <stddef.h>
#include <stdint.h>

/* Plain bytes: a clone of a stream copies it. All of it key-derived. */
struct poly1305 {
	uint64_t r[3];	   /* r, clamped */
	uint64_t h[3];	   /* the accumulator */
	uint64_t pad[2];   /* s, little-endian words */
	uint32_t pw[8][5]; /* r, r^2, .., r^8 in five 26-bit limbs
			      * each, for the AVX2 code (poly1305.c);
			      * zero on a CPU without AVX2 */
};

/* Start a MAC under the one-time key (r || s, 32 bytes). */
void poly1305_init(struct poly1305 *p, const uint8_t key[32]);

/* n whole 16-byte blocks at m. */
void poly1305_blocks(struct poly1305 *p, const uint8_t *m, size_t n);

/* The two ways poly1305_blocks() picks from, for the tests: one block
 * at a time in 64-bit words, and eight or four at a time with AVX2 (the
 * rest one at a time), which is -1 (and does nothing) on a CPU without
 * it. */
void poly1305_blocks_portable(struct poly1305 *p, const uint8_t *m, size_t n);
int poly1305_blocks_avx2(struct poly1305 *p, const uint8_t *m, size_t n);

/* The tag: after a last partial block of len < 16 bytes (0: none). The
 * state is spent (the caller wipes it). */
void poly1305_final(struct poly1305 *p, const uint8_t *m, size_t len,
		    uint8_t tag[16]);

#endif
