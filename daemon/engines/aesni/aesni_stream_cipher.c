/* SPDX-License-Identifier: MIT */
/*
 * Stream pieces of AES-CBC, AES-CTR and AES-ECB on the aesni engine
 * (stream.h), on ipsec-mb's job API as engine_aesni.c runs one-shot ops.
 *
 * Each piece runs as a chain of jobs, each flushed before the next is
 * built: a stream's pieces are sequential by nature (CBC chains, CTR
 * counts), and the hook is called outside any burst, so the manager holds
 * no job of anyone else's and everything it returns is ours.
 *
 * What a piece leaves for the next one (struct sc_state, in the daemon's
 * locked stream state):
 * - CBC: the chaining block: the last ciphertext block (encrypt: the last
 *   one written; decrypt: the last one read, saved before an in-place
 *   decrypt overwrites it).
 * - CTR: the next counter block, and the unused bytes of the keystream
 *   block a piece that ended mid-block opened, so that pieces cut
 *   anywhere give the one-shot output (128-bit big-endian increments, as
 *   OpenSSL's aes-*-ctr and our one-shot AES-CTR).
 * - ECB: nothing.
 */
#include "aesni.h"
#include "stream.h"
#include "session.h"

#include <string.h>

#include <intel-ipsec-mb.h>

#include <cryptod/ring_abi.h>

/* ipsec-mb counts lane lengths in 16 bits: the most one job takes, a
 * whole number of blocks (as engine_aesni.c's AESNI_JOB_MAX). */
enum { SC_JOB_MAX = 65520 };

struct sc_state {
	uint8_t iv[16];	 /* CBC: the chaining block; CTR: the next counter */
	uint8_t ks[16];	 /* CTR: the keystream block now in use */
	uint8_t ks_left; /* CTR: its unused bytes, at ks[16 - ks_left..] */
};
_Static_assert(sizeof(struct sc_state) <= STREAM_STATE_SIZE,
	       "cipher stream state fits");

/* Run one cipher job of 1..SC_JOB_MAX bytes to completion. 1 when done. */
static int sc_job(IMB_MGR *m, const struct engine_op *op, IMB_CIPHER_MODE mode,
		  const uint8_t *src, uint8_t *dst, uint32_t len,
		  const uint8_t *iv)
{
	const struct aesni_key *k = (const struct aesni_key *)op->sess->key;
	return !aesni_job_run(m, mode, op->op == CRD_OP_ENCRYPT, k->blk.enc,
			      k->blk.dec, op->sess->key_len, src, dst, len, iv);
}

/* iv += blocks, as a 128-bit big-endian integer. */
static void sc_ctr_add(uint8_t iv[16], uint64_t blocks)
{
	for (int i = 15; i >= 0 && blocks; i--) {
		uint64_t v = iv[i] + (blocks & 0xff);
		iv[i] = (uint8_t)v;
		blocks = (blocks >> 8) + (v >> 8);
	}
}

/*
 * Whole blocks (len % 16 == 0) through jobs of at most SC_JOB_MAX bytes;
 * CTR jobs also end where the counter's low 32-bit word wraps (ipsec-mb
 * increments only that word; we promise the 128-bit increment). The
 * chaining block or counter in st moves on with each job. 1 when done.
 */
static int sc_blocks(IMB_MGR *m, const struct engine_op *op,
		     struct sc_state *st, const uint8_t *src, uint8_t *dst,
		     uint32_t len)
{
	unsigned alg = op->sess->alg;
	int cbc_dec = alg == CRD_ALG_AES_CBC && op->op == CRD_OP_DECRYPT;
	IMB_CIPHER_MODE mode = alg == CRD_ALG_AES_CBC	? IMB_CIPHER_CBC
			       : alg == CRD_ALG_AES_CTR ? IMB_CIPHER_CNTR
							: IMB_CIPHER_ECB;
	uint8_t next[16];

	for (uint32_t off = 0; off < len;) {
		uint32_t n = len - off < SC_JOB_MAX ? len - off : SC_JOB_MAX;
		if (alg == CRD_ALG_AES_CTR) {
			uint32_t lo = (uint32_t)st->iv[12] << 24 |
				      (uint32_t)st->iv[13] << 16 |
				      (uint32_t)st->iv[14] << 8 | st->iv[15];
			uint64_t to_wrap = ((uint64_t)UINT32_MAX - lo + 1) * 16;
			if (n > to_wrap)
				n = (uint32_t)to_wrap;
		}
		if (cbc_dec) /* the next IV, before in place overwrites it */
			memcpy(next, src + off + n - 16, 16);
		if (!sc_job(m, op, mode, src + off, dst + off, n,
			    alg == CRD_ALG_AES_ECB ? NULL : st->iv))
			return 0;
		if (alg == CRD_ALG_AES_CTR)
			sc_ctr_add(st->iv, n / 16);
		else if (alg == CRD_ALG_AES_CBC)
			memcpy(st->iv, cbc_dec ? next : dst + off + n - 16, 16);
		off += n;
	}
	return 1;
}

/* CTR over any length: the rest of the open keystream block first, then
 * whole blocks, then a tail that opens the next keystream block. */
static int sc_ctr(IMB_MGR *m, const struct engine_op *op, struct sc_state *st)
{
	const uint8_t *src = op->src;
	uint8_t *dst = op->dst;
	uint32_t len = op->len;

	if (st->ks_left) {
		uint32_t c = len < st->ks_left ? len : st->ks_left;
		const uint8_t *ks = st->ks + 16 - st->ks_left;
		for (uint32_t i = 0; i < c; i++)
			dst[i] = src[i] ^ ks[i];
		st->ks_left -= (uint8_t)c;
		src += c;
		dst += c;
		len -= c;
	}
	uint32_t whole = len & ~15u, tail = len & 15u;
	if (whole && !sc_blocks(m, op, st, src, dst, whole))
		return 0;
	if (!tail)
		return 1;
	/* The keystream block is E(counter): an ECB encryption of it. */
	struct engine_op enc = *op;
	enc.op = CRD_OP_ENCRYPT;
	if (!sc_job(m, &enc, IMB_CIPHER_ECB, st->iv, st->ks, 16, NULL))
		return 0;
	sc_ctr_add(st->iv, 1);
	for (uint32_t i = 0; i < tail; i++)
		dst[whole + i] = src[whole + i] ^ st->ks[i];
	st->ks_left = (uint8_t)(16 - tail);
	return 1;
}

void aesni_stream_cipher(void *wctx, struct engine_op *op, void *state)
{
	struct sc_state *st = state;
	unsigned alg = op->sess->alg;
	int ok;

	if (op->pos & ENGINE_FIRST && alg != CRD_ALG_AES_ECB) {
		if (op->iv_len != 16 || !op->iv) {
			op->status = CRD_ST_BAD_PARAM;
			return;
		}
		memcpy(st->iv, op->iv, 16);
	}
	if (alg == CRD_ALG_AES_CTR) {
		ok = sc_ctr(wctx, op, st);
	} else {
		/* CBC and ECB pieces are whole blocks (stream.h) */
		if (op->len % 16) {
			op->status = CRD_ST_BAD_PARAM;
			return;
		}
		ok = sc_blocks(wctx, op, st, op->src, op->dst, op->len);
	}
	op->status = ok ? CRD_ST_OK : CRD_ST_ENGINE;
}
