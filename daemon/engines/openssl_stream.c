/* SPDX-License-Identifier: MIT */
/*
 * Stream pieces of AES-XTS on the openssl engine (stream.h), per data
 * unit as IEEE 1619 numbers them: FIRST's param is the unit's size
 * (>= 16), and the tweak of unit k is FIRST's IV plus k, a 128-bit
 * little-endian number (the CAVP tweak-dataunitseqno vectors' data-unit
 * sequence numbers). Each unit is one EVP XTS operation. Pieces other
 * than LAST hold whole units; LAST may end with a shorter final unit of
 * 16 bytes or more, which EVP encrypts with ciphertext stealing.
 *
 * The state holds the next unit's tweak and the unit size. The worker's
 * context is keyed once per piece and reset after it, which cleanses the
 * key schedule: no session's key outlives the piece in it.
 */
#include "openssl.h"
#include "stream.h"
#include "session.h"

#include <string.h>

#include <openssl/evp.h>

#include <cryptod/ring_abi.h>

/* OpenSSL refuses XTS data units over 2^20 blocks (IEEE 1619's bound). */
#define XTS_UNIT_MAX (16u << 20)

struct xts_state {
	uint8_t tweak[16]; /* the next unit's, little-endian */
	uint32_t unit;	   /* bytes per data unit */
};
_Static_assert(sizeof(struct xts_state) <= STREAM_STATE_SIZE,
	       "XTS stream state fits");

int ossl_stream_alg(unsigned alg)
{
	return alg == CRD_ALG_AES_XTS;
}

/* t += 1, as a 128-bit little-endian integer. */
static void xts_next(uint8_t t[16])
{
	for (int i = 0; i < 16 && !++t[i]; i++)
		;
}

/* Units of the piece (the last one maybe shorter); CRD_ST_*. */
static int xts_units(struct ossl_worker *w, struct engine_op *op,
		     struct xts_state *st)
{
	const struct session *s = op->sess;
	const struct ossl_key *k = (const struct ossl_key *)s->key;
	EVP_CIPHER *c = w->cipher[s->alg][ossl_key_idx(s->alg, s->key_len)];
	int enc = op->op == CRD_OP_ENCRYPT;

	for (uint32_t off = 0; off < op->len;) {
		uint32_t n =
			op->len - off < st->unit ? op->len - off : st->unit;
		int out = 0;
		/* The key on the first unit; then only the tweak is new. */
		if (!EVP_CipherInit_ex2(w->ctx, off ? NULL : c,
					off ? NULL : k->raw, st->tweak, enc,
					NULL) ||
		    !EVP_CipherUpdate(w->ctx, op->dst + off, &out,
				      op->src + off, (int)n) ||
		    (uint32_t)out != n)
			return CRD_ST_ENGINE;
		xts_next(st->tweak);
		off += n;
	}
	return CRD_ST_OK;
}

void ossl_stream(void *wctx, struct engine_op *op, void *state)
{
	struct ossl_worker *w = wctx;
	struct xts_state *st = state;

	if (!ossl_stream_alg(op->sess->alg)) {
		op->status = CRD_ST_BAD_PARAM;
		return;
	}
	if (op->pos & ENGINE_FIRST) {
		if (op->iv_len != 16 || !op->iv || op->param < 16 ||
		    op->param > XTS_UNIT_MAX) {
			op->status = CRD_ST_BAD_PARAM;
			return;
		}
		memcpy(st->tweak, op->iv, 16);
		st->unit = op->param;
	}
	if (!st->unit) { /* no FIRST: the daemon never does this */
		op->status = CRD_ST_BAD_PARAM;
		return;
	}
	/* Whole units, but for LAST's final unit of 16 bytes or more. */
	uint32_t rem = op->len % st->unit;
	if (rem && (!(op->pos & ENGINE_LAST) || rem < 16)) {
		op->status = CRD_ST_BAD_PARAM;
		return;
	}
	op->status = xts_units(w, op, st);
	/* Cleanses and frees the key schedule. */
	EVP_CIPHER_CTX_reset(w->ctx);
}
