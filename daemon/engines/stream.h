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

/* openssl_stream.c: the openssl engine's hook: AES-CBC, AES-CTR,
 * AES-ECB, AES-XTS per data unit, AES-CCM, AES-CMAC, and HMAC-SHA-n and
 * SHA-n through stream_sha(). */
void ossl_stream(void *wctx, struct engine_op *op, void *state);

#endif
