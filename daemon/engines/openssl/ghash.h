/* SPDX-License-Identifier: MIT */
/*
 * GHASH (SP 800-38D 6.4) for the openssl engine's GCM streams
 * (openssl_stream_aead.c): EVP keeps its GHASH inside an opaque context,
 * and a stream's state must be plain bytes (stream.h), so the stream
 * carries this one's instead.
 *
 * Constant time: no table, no branch on H or data. Two multiplies, the
 * same arithmetic: PCLMULQDQ where the CPU has it (one instruction per
 * 64-bit product, eight blocks per reduction with H^2..H^8 made per call
 * and wiped after; measured ~5.4 GB per CPU second here, ~13 times the
 * portable one), else a 64-bit carry-less multiply from integer
 * multiplies of masked bits (the method of BearSSL's ghash_ctmul64), for
 * CPUs without it: the daemon builds for baseline x86-64. ghash_blocks()
 * picks at run time; the tests run both.
 *
 * An element is a block as SP 800-38D writes it, read as two big-endian
 * 64-bit words: [0] the first 8 bytes (x^0 is its top bit), [1] the last.
 */
#ifndef CRYPTOD_ENGINE_GHASH_H
#define CRYPTOD_ENGINE_GHASH_H

#include <stddef.h>
#include <stdint.h>

/* Plain bytes: a clone of a stream copies it. Both words key-derived. */
struct ghash {
	uint64_t h[2]; /* H = E_K(0^128) */
	uint64_t y[2]; /* the GHASH of the blocks so far */
};

/* Start a GHASH under H (16 bytes, as E_K gives it). */
void ghash_init(struct ghash *g, const uint8_t h[16]);

/* n whole 16-byte blocks at p. */
void ghash_blocks(struct ghash *g, const uint8_t *p, size_t n);

/* len bytes at p, the last block zero-padded (GCM's AAD and IV). */
void ghash_pad(struct ghash *g, const uint8_t *p, size_t len);

/* The GHASH so far, 16 bytes. */
void ghash_out(const struct ghash *g, uint8_t out[16]);

/* The two multiplies ghash_blocks() picks from, for the tests:
 * ghash_blocks_clmul() is -1 (and does nothing) without PCLMULQDQ. */
void ghash_blocks_ct64(struct ghash *g, const uint8_t *p, size_t n);
int ghash_blocks_clmul(struct ghash *g, const uint8_t *p, size_t n);

#endif
