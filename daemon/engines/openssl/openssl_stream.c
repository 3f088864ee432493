/* SPDX-License-Identifier: MIT */
/*
 * Stream pieces of the openssl engine (stream.h): AES-CMAC, for the key
 * size the aesni engine lacks (192; its sessions land here), and AES-XTS.
 *
 * XTS per data unit as IEEE 1619 numbers them: FIRST's param is the unit's size
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
#include "auth.h"
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
	return alg == CRD_ALG_AES_XTS || alg == CRD_ALG_AES_CMAC;
}

/* ---- CMAC (RFC 4493): a CBC-MAC through EVP's AES-CBC ---- */

struct cmac_state {
	uint8_t x[16];	  /* the CBC-MAC so far */
	uint8_t last[16]; /* the message's last block so far, held back */
	uint8_t last_len;
};
_Static_assert(sizeof(struct cmac_state) <= STREAM_STATE_SIZE,
	       "CMAC stream state fits");

enum { CMAC_CHUNK = 4096 };

/* x = CBC-MAC of n bytes (whole blocks) at p from x, on the keyed ctx
 * (its IV is x). Scratch holds CBC-MAC values: wiped. 1 when done. */
static int cmac_blocks(EVP_CIPHER_CTX *ctx, uint8_t x[16], const uint8_t *p,
		       size_t n)
{
	uint8_t buf[CMAC_CHUNK];
	size_t used = 0;
	int ok = 1;
	while (n && ok) {
		int c = n < CMAC_CHUNK ? (int)n : CMAC_CHUNK, out = 0;
		ok = EVP_EncryptUpdate(ctx, buf, &out, p, c) && out == c;
		if (ok)
			memcpy(x, buf + c - 16, 16);
		used = (size_t)c > used ? (size_t)c : used;
		p += c;
		n -= (size_t)c;
	}
	explicit_bzero(buf, used);
	return ok;
}

/* RFC 4493 2.3: k = L << 1, xor Rb when L's top bit was set. */
static void cmac_dbl(uint8_t k[16], const uint8_t l[16])
{
	uint8_t carry = l[0] >> 7;
	for (int i = 0; i < 15; i++)
		k[i] = (uint8_t)(l[i] << 1 | l[i + 1] >> 7);
	k[15] = (uint8_t)(l[15] << 1 ^ (carry ? 0x87 : 0));
}

static int cmac_piece(struct ossl_worker *w, struct engine_op *op,
		      struct cmac_state *st)
{
	const struct session *s = op->sess;
	unsigned klen;
	const uint8_t *key = ossl_auth_key_raw(s, &klen);
	EVP_CIPHER *c =
		w->cipher[CRD_ALG_AES_CBC][ossl_key_idx(CRD_ALG_AES_CBC, klen)];
	/* CBC, no padding, from IV x: every update goes on from the last
	 * block, so the whole piece is one chain. */
	if (!c || !EVP_EncryptInit_ex2(w->ctx, c, key, st->x, NULL) ||
	    !EVP_CIPHER_CTX_set_padding(w->ctx, 0))
		return CRD_ST_ENGINE;
	const uint8_t *p = op->src;
	size_t n = op->len;
	while (n) {
		size_t room = 16u - st->last_len, k = room < n ? room : n;
		memcpy(st->last + st->last_len, p, k);
		st->last_len += (uint8_t)k;
		p += k;
		n -= k;
		if (!n)
			break;
		/* last is full and more follows: it is not the last block */
		if (!cmac_blocks(w->ctx, st->x, st->last, 16))
			return CRD_ST_ENGINE;
		st->last_len = 0;
		size_t bulk = n > 16 ? (n - 1) / 16 * 16 : 0;
		if (bulk && !cmac_blocks(w->ctx, st->x, p, bulk))
			return CRD_ST_ENGINE;
		p += bulk;
		n -= bulk;
	}
	if (!(op->pos & ENGINE_LAST))
		return CRD_ST_OK;

	/* L = E_K(0): one more block through a CBC from a zero IV. */
	uint8_t zero[16] = { 0 }, l[16], k1[16], k2[16], m[16];
	int ok = EVP_EncryptInit_ex2(w->ctx, NULL, NULL, zero, NULL) &&
		 cmac_blocks(w->ctx, l, zero, 16);
	cmac_dbl(k1, l);
	cmac_dbl(k2, k1);
	for (unsigned i = 0; i < 16; i++) {
		uint8_t b = i < st->last_len	? st->last[i]
			    : i == st->last_len ? 0x80
						: 0;
		m[i] = b ^ (st->last_len == 16 ? k1[i] : k2[i]);
	}
	ok = ok && EVP_EncryptInit_ex2(w->ctx, NULL, NULL, st->x, NULL) &&
	     cmac_blocks(w->ctx, st->x, m, 16);
	explicit_bzero(l, sizeof(l));
	explicit_bzero(k1, sizeof(k1));
	explicit_bzero(k2, sizeof(k2));
	explicit_bzero(m, sizeof(m));
	if (!ok)
		return CRD_ST_ENGINE;
	return auth_finish(op, st->x);
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

	if (op->sess->alg == CRD_ALG_AES_CMAC) {
		op->status = cmac_piece(w, op, state);
		EVP_CIPHER_CTX_reset(w->ctx); /* cleanses the key schedule */
		engine_burn_stack();
		return;
	}
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
	/* Whole units, but for LAST's final unit of 16 bytes or more; a
	 * bounded number of them (ring_abi.h). */
	uint32_t rem = op->len % st->unit;
	if ((rem && (!(op->pos & ENGINE_LAST) || rem < 16)) ||
	    op->len / st->unit + (rem != 0) > CRD_XTS_STREAM_UNITS_MAX) {
		op->status = CRD_ST_BAD_PARAM;
		return;
	}
	op->status = xts_units(w, op, st);
	/* Cleanses and frees the key schedule. */
	EVP_CIPHER_CTX_reset(w->ctx);
}
