/* SPDX-License-Identifier: MIT */
/*
 * Stream pieces in the engines: the contract of engine->stream, and the
 * files that keep it.
 *
 * The daemon (daemon/data/streams.c) runs the pieces of one stream one at a
 * time, in submission order, on whichever worker posts the queue, and
 * calls engine->stream(wctx, op, state) for each with:
 *
 *  - op: a validated op like any other (src, dst: == src in place, else
 *    disjoint; len
 *    bytes, op->op the direction, op->sess the session), plus op->pos
 *    (ENGINE_FIRST, ENGINE_LAST, both, or neither for a middle piece) and
 *    op->param. iv/iv_len and aad/aad_len are set on FIRST only, tag and
 *    tag_len (the session's) on LAST only.
 *  - state: STREAM_STATE_SIZE bytes, 64-byte aligned, in locked memory,
 *    zeroed before FIRST and left as the previous piece left it after.
 *    It must be plain, position-independent bytes (no pointers, no
 *    handles of the engine's): a clone of a stream is a byte copy of it
 *    (CRD_SQE_F_CLONE).
 *    The daemon wipes it after LAST and after any piece whose status is
 *    not CRD_ST_OK; the engine never has to.
 *
 * Each piece:
 *  - FIRST: set up from the IV, the AAD and param, then process the data
 *    like any piece.
 *  - Process len bytes: a cipher or AEAD writes len bytes to dst (carrying
 *    any partial block or keystream in the state, so that the output of
 *    pieces cut anywhere equals the one-shot output); a MAC or digest
 *    writes nothing.
 *  - LAST: encrypt writes tag_len bytes to op->tag (the tag, MAC or
 *    digest, truncated to tag_len); decrypt compares them in constant time
 *    and, on mismatch, zeroes this piece's dst and sets CRD_ST_AUTH_FAILED.
 *
 * Lengths: any length for GCM, ChaCha20-Poly1305, CCM, CTR, HMAC, SHA and
 * CMAC pieces; CBC and ECB pieces are whole 16-byte blocks; XTS pieces
 * other than LAST are whole data units (param bytes, >= 16), LAST's
 * remainder past whole units is 0 or >= 16 bytes, and a piece holds at
 * most CRD_XTS_STREAM_UNITS_MAX units. CCM's param is the
 * message length: a piece that would pass it, or a LAST that ends short
 * of it, is CRD_ST_BAD_PARAM. With FIRST and LAST both, param is the op's
 * len (the daemon fills it in). A message longer than the algorithm
 * allows (GCM: 2^36 - 32 bytes) is CRD_ST_BAD_PARAM.
 *
 * Statuses: CRD_ST_OK, CRD_ST_BAD_PARAM, CRD_ST_AUTH_FAILED,
 * CRD_ST_ENGINE. Never block, allocate or log; leave no key bytes on the
 * stack (engine_burn_stack() after OpenSSL calls that do).
 */
#ifndef CRYPTOD_ENGINE_STREAM_H
#define CRYPTOD_ENGINE_STREAM_H

#include <stdint.h>
#include <string.h>

#include <openssl/types.h>

#include "engine.h"

/*
 * Which algorithm streams on which engine is no list here: the algorithm
 * table's CRD_AF_STREAM and the engine's capability row (alg_cap.stream)
 * say it, engine_streams() asks both, and the daemon calls a hook only
 * for what it answers yes to. The hooks dispatch on the algorithm's kind.
 */

/* The aesni engine's stream hook (aesni_stream.c): each kind to a file
 * below. */
void aesni_stream(void *wctx, struct engine_op *op, void *state);

/* aesni_stream_aead.c: AES-GCM, ChaCha20-Poly1305, AES-CCM. wctx is the
 * worker's IMB_MGR. */
void aesni_stream_aead(void *wctx, struct engine_op *op, void *state);

/* aesni_stream_cipher.c: AES-CBC, AES-CTR, AES-ECB. */
void aesni_stream_cipher(void *wctx, struct engine_op *op, void *state);

/* stream_mac.c: AES-CMAC on the aesni engine's sessions; HMAC-SHA-n and
 * SHA-n through stream_sha(). */
void aesni_stream_mac(void *wctx, struct engine_op *op, void *state);

/* stream_mac.c: an HMAC-SHA-1/224/256/384/512 or SHA-1/224/256/384/512
 * piece for any engine, the state OpenSSL's low-level SHA contexts (plain
 * structs). key: the session's HMAC key, key_len bytes, at most the
 * hash's block (a longer one hashed at session set-up, RFC 2104); unused
 * for a digest. */
void stream_sha(struct engine_op *op, void *state, const uint8_t *key,
		unsigned key_len);

/*
 * A CCM stream's FIRST piece, checked and laid out once for every engine
 * (SP 800-38C A.2): the nonce op->iv of 7..13 bytes, tag_len 4..16 and
 * even, the message length op->param within the q = 15 - nonce bytes of
 * its length field. b0 gets the first block the CBC-MAC takes; hdr the
 * AAD's encoded length (A.2.2: 2 bytes below 2^16 - 2^8, else 0xff 0xfe
 * and 4 bytes), *hdr_len its bytes (0 without AAD); a1 the first
 * counter block (A_i = flags q - 1 || nonce || i: A1 first, A0 for the
 * tag). 0, or CRD_ST_BAD_PARAM.
 */
static inline int ccm_stream_head(const struct engine_op *op, unsigned tag_len,
				  uint8_t b0[16], uint8_t hdr[6],
				  unsigned *hdr_len, uint8_t a1[16],
				  unsigned *q)
{
	if (!op->iv || op->iv_len < 7 || op->iv_len > 13 || tag_len < 4 ||
	    tag_len > 16 || tag_len % 2)
		return CRD_ST_BAD_PARAM;
	*q = 15u - op->iv_len;
	/* q < 4 caps the message (param is 32 bits, so larger q take any) */
	if (*q < 4 && (uint64_t)op->param >> (8 * *q))
		return CRD_ST_BAD_PARAM;
	b0[0] = (uint8_t)((op->aad_len ? 0x40 : 0) | ((tag_len - 2) / 2) << 3 |
			  (*q - 1));
	memcpy(b0 + 1, op->iv, op->iv_len);
	for (unsigned i = 0; i < *q; i++)
		b0[15 - i] = i < 4 ? (uint8_t)(op->param >> (8 * i)) : 0;
	uint32_t a = op->aad_len;
	if (!a) {
		*hdr_len = 0;
	} else if (a < 0xff00) {
		hdr[0] = (uint8_t)(a >> 8);
		hdr[1] = (uint8_t)a;
		*hdr_len = 2;
	} else {
		hdr[0] = 0xff;
		hdr[1] = 0xfe;
		for (unsigned i = 0; i < 4; i++)
			hdr[2 + i] = (uint8_t)(a >> (24 - 8 * i));
		*hdr_len = 6;
	}
	memset(a1, 0, 16);
	a1[0] = (uint8_t)(*q - 1);
	memcpy(a1 + 1, op->iv, op->iv_len);
	a1[15] = 1;
	return 0;
}

/* openssl_stream.c: the openssl engine's hook: AES-CBC, AES-CTR,
 * AES-ECB, AES-XTS per data unit, AES-CCM, AES-CMAC, and HMAC-SHA-n and
 * SHA-n through stream_sha(); GCM and ChaCha20-Poly1305 to the file
 * below. */
void ossl_stream(void *wctx, struct engine_op *op, void *state);

/* openssl_stream_aead.c: AES-GCM and ChaCha20-Poly1305, with the MACs of
 * ghash.c and poly1305.c. wctx is the worker's struct ossl_worker; the
 * caller resets its contexts and burns the stack after. The state takes
 * OSSL_AEAD_STREAM_SIZE bytes of the STREAM_STATE_SIZE. */
enum { OSSL_AEAD_STREAM_SIZE = 320 };
void ossl_stream_aead(void *wctx, struct engine_op *op, void *state);

/* The same ChaCha20-Poly1305 piece for any engine: cc is EVP's ChaCha20
 * (the bare cipher), ctx a context to key with it, key the session's 32
 * raw bytes; state OSSL_AEAD_STREAM_SIZE bytes, 8-byte aligned, as
 * above. The aesni engine's streams take it where OpenSSL's ChaCha20 is
 * the faster (aesni_stream_aead.c). The caller resets ctx and burns the
 * stack after. */
void ossl_chacha_stream(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cc,
			const uint8_t key[32], struct engine_op *op,
			void *state);

#endif
