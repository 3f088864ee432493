/* SPDX-License-Identifier: MIT */
/*
 * Stream pieces of the openssl engine (stream.h): AES-CBC, AES-CTR and
 * AES-ECB, AES-XTS per data unit, AES-CCM, AES-CMAC (for the key size the
 * aesni engine lacks, 192, too), HMAC-SHA-n and SHA-n through
 * stream_sha() (stream_mac.c), and AES-GCM and ChaCha20-Poly1305 through
 * ossl_stream_aead() (openssl_stream_aead.c). Which of them stream is the
 * capability rows' say (engine_openssl.c, engine_streams()).
 *
 * The state must be plain bytes in the daemon's locked memory (a clone is
 * a byte copy of it), so no EVP context lives in it: each piece keys the
 * worker's contexts from the session's raw key, runs its bytes through
 * EVP from values the state carries (a chaining block, a counter block
 * and how much of its keystream is used, a CBC-MAC value), and resets
 * the contexts after, which cleanses the key schedules: no session's key
 * outlives the piece in them. A key schedule per piece is the price.
 *
 * AES-GCM and ChaCha20-Poly1305 go to openssl_stream_aead.c: EVP's AEAD
 * contexts keep GHASH and Poly1305 where no state can hold them, so those
 * are the engine's own (ghash.c, poly1305.c) beside EVP's AES-CTR and
 * ChaCha20. (EVP's CCM takes its data in one update; the CCM here is
 * CBC-MAC and CTR through EVP's AES-CBC and AES-CTR, as SP 800-38C
 * defines it, with FIRST's param, the message length, in B0.)
 *
 * XTS per data unit as IEEE 1619 numbers them: FIRST's param is the unit's size
 * (>= 16), and the tweak of unit k is FIRST's IV plus k, a 128-bit
 * little-endian number (the CAVP tweak-dataunitseqno vectors' data-unit
 * sequence numbers). Each unit is one EVP XTS operation. Pieces other
 * than LAST hold whole units; LAST may end with a shorter final unit of
 * 16 bytes or more, which EVP encrypts with ciphertext stealing.
 */
#include "auth.h"
#include "openssl.h"
#include "stream.h"
#include "session.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cryptod/ring_abi.h>

/* OpenSSL refuses XTS data units over 2^20 blocks (IEEE 1619's bound). */
#define XTS_UNIT_MAX (16u << 20)

enum { BLK = 16 };

struct xts_state {
	uint8_t tweak[16]; /* the next unit's, little-endian */
	uint32_t unit;	   /* bytes per data unit */
};
_Static_assert(sizeof(struct xts_state) <= STREAM_STATE_SIZE,
	       "XTS stream state fits");

/* CBC, CTR, ECB. */
struct cipher_state {
	uint8_t iv[BLK]; /* CBC: the chaining block; CTR: the counter block
			  * of the block in progress (off > 0) or next */
	uint8_t off;	 /* CTR: keystream bytes of iv's block used */
};
_Static_assert(sizeof(struct cipher_state) <= STREAM_STATE_SIZE,
	       "cipher stream state fits");

/* CCM's running values, all key-derived: here, not on the stack. */
struct ccm_state {
	uint8_t x[BLK];	  /* the CBC-MAC of the whole blocks so far */
	uint8_t blk[BLK]; /* the formatted input's block in progress */
	uint8_t ctr[BLK]; /* A_i of the keystream block in progress or next */
	uint64_t done;	  /* message bytes so far */
	uint32_t total;	  /* the declared message length (FIRST's param) */
	uint8_t fill;	  /* bytes in blk */
	uint8_t off;	  /* keystream bytes of ctr's block used */
	uint8_t q;	  /* bytes of the length field: 15 - nonce */
	uint8_t tag_len;  /* as B0 encodes it */
	uint8_t open;	  /* FIRST has run */
};
_Static_assert(sizeof(struct ccm_state) <= STREAM_STATE_SIZE,
	       "CCM stream state fits");

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

/* An XTS piece; CRD_ST_*. */
static int xts_piece(struct ossl_worker *w, struct engine_op *op,
		     struct xts_state *st)
{
	if (op->pos & ENGINE_FIRST) {
		if (op->iv_len != 16 || !op->iv || op->param < 16 ||
		    op->param > XTS_UNIT_MAX)
			return CRD_ST_BAD_PARAM;
		memcpy(st->tweak, op->iv, 16);
		st->unit = op->param;
	}
	if (!st->unit) /* no FIRST: the daemon never does this */
		return CRD_ST_BAD_PARAM;
	/* Whole units, but for LAST's final unit of 16 bytes or more; a
	 * bounded number of them (ring_abi.h). */
	uint32_t rem = op->len % st->unit;
	if ((rem && (!(op->pos & ENGINE_LAST) || rem < 16)) ||
	    op->len / st->unit + (rem != 0) > CRD_XTS_STREAM_UNITS_MAX)
		return CRD_ST_BAD_PARAM;
	return xts_units(w, op, st);
}

/* c += n, a 128-bit big-endian counter block, as EVP's CTR counts. */
static void ctr_add(uint8_t c[BLK], uint64_t n)
{
	for (int i = BLK - 1; i >= 0 && n; i--) {
		n += c[i];
		c[i] = (uint8_t)n;
		n >>= 8;
	}
}

/*
 * CTR over n bytes from src to dst with the keyed AES-CTR ctx, from the
 * counter block ctr of which off keystream bytes are used: EVP starts at
 * the block's beginning, so those off bytes are run through first and
 * dropped. ctr and off then name the next byte's keystream. 1 when done.
 */
static int ctr_run(EVP_CIPHER_CTX *ctx, EVP_CIPHER *c, const uint8_t *key,
		   uint8_t ctr[BLK], uint8_t *off, const uint8_t *src,
		   uint8_t *dst, uint32_t n)
{
	static const uint8_t zero[BLK];
	uint8_t ks[BLK];
	int out = 0, ok = EVP_EncryptInit_ex2(ctx, c, key, ctr, NULL);

	if (ok && *off)
		ok = EVP_EncryptUpdate(ctx, ks, &out, zero, *off) &&
		     out == *off;
	OPENSSL_cleanse(ks, sizeof(ks));
	if (ok && n)
		ok = EVP_EncryptUpdate(ctx, dst, &out, src, (int)n) &&
		     (uint32_t)out == n;
	uint64_t used = (uint64_t)*off + n;
	ctr_add(ctr, used / BLK);
	*off = (uint8_t)(used % BLK);
	return ok;
}

/* A CBC, CTR or ECB piece; CRD_ST_*. */
static int cipher_piece(struct ossl_worker *w, struct engine_op *op,
			struct cipher_state *st)
{
	const struct session *s = op->sess;
	const struct ossl_key *k = (const struct ossl_key *)s->key;
	EVP_CIPHER *c = w->cipher[s->alg][ossl_key_idx(s->alg, s->key_len)];
	int enc = op->op == CRD_OP_ENCRYPT, out = 0;

	if (op->pos & ENGINE_FIRST && s->alg != CRD_ALG_AES_ECB) {
		if (op->iv_len != BLK || !op->iv)
			return CRD_ST_BAD_PARAM;
		memcpy(st->iv, op->iv, BLK);
	}
	if (s->alg == CRD_ALG_AES_CTR)
		return ctr_run(w->ctx, c, k->raw, st->iv, &st->off, op->src,
			       op->dst, op->len)
			       ? CRD_ST_OK
			       : CRD_ST_ENGINE;
	/* CBC and ECB pieces are whole blocks (stream.h) */
	if (op->len % BLK)
		return CRD_ST_BAD_PARAM;
	if (!op->len)
		return CRD_ST_OK;
	/* CBC decrypt chains from the last ciphertext block, which an
	 * in-place piece overwrites */
	uint8_t next[BLK];
	if (!enc)
		memcpy(next, op->src + op->len - BLK, BLK);
	if (!EVP_CipherInit_ex2(w->ctx, c, k->raw,
				s->alg == CRD_ALG_AES_CBC ? st->iv : NULL, enc,
				NULL) ||
	    !EVP_CIPHER_CTX_set_padding(w->ctx, 0) ||
	    !EVP_CipherUpdate(w->ctx, op->dst, &out, op->src, (int)op->len) ||
	    (uint32_t)out != op->len)
		return CRD_ST_ENGINE;
	memcpy(st->iv, enc ? op->dst + op->len - BLK : next, BLK);
	return CRD_ST_OK;
}

/* ---- CCM (SP 800-38C): CBC-MAC and CTR through EVP ---- */

/* n more bytes of the formatted input into the CBC-MAC, on the AES-CBC
 * ctx keyed with IV x (every block goes through it, in order, so its
 * chain is x). 1 when done. */
static int ccm_mac(EVP_CIPHER_CTX *ctx, struct ccm_state *c, const uint8_t *p,
		   size_t n)
{
	while (n) {
		if (c->fill || n < BLK) { /* the block in progress */
			size_t room = (size_t)BLK - c->fill,
			       k = room < n ? room : n;
			memcpy(c->blk + c->fill, p, k);
			c->fill += (uint8_t)k;
			p += k;
			n -= k;
			if (c->fill < BLK)
				return 1;
			if (!cmac_blocks(ctx, c->x, c->blk, BLK))
				return 0;
			c->fill = 0;
			continue;
		}
		size_t whole = n & ~(size_t)(BLK - 1);
		if (!cmac_blocks(ctx, c->x, p, whole))
			return 0;
		p += whole;
		n -= whole;
	}
	return 1;
}

/* Close the formatted input's block in progress (zero padding). */
static int ccm_mac_pad(EVP_CIPHER_CTX *ctx, struct ccm_state *c)
{
	if (!c->fill)
		return 1;
	memset(c->blk + c->fill, 0, BLK - c->fill);
	c->fill = 0;
	return cmac_blocks(ctx, c->x, c->blk, BLK);
}

/* FIRST: B0 and the AAD into the CBC-MAC, A1 as the first counter. */
static int ccm_first(EVP_CIPHER_CTX *ctx, struct engine_op *op,
		     struct ccm_state *c)
{
	unsigned q, t = op->sess->tag_len, hdr_len;
	uint8_t b0[BLK], hdr[6], a1[BLK];

	if (ccm_stream_head(op, t, b0, hdr, &hdr_len, a1, &q))
		return CRD_ST_BAD_PARAM;
	c->q = (uint8_t)q;
	c->tag_len = (uint8_t)t;
	c->total = op->param;
	c->open = 1;
	if (!ccm_mac(ctx, c, b0, BLK))
		return CRD_ST_ENGINE;
	if (hdr_len &&
	    (!ccm_mac(ctx, c, hdr, hdr_len) ||
	     !ccm_mac(ctx, c, op->aad, op->aad_len) || !ccm_mac_pad(ctx, c)))
		return CRD_ST_ENGINE;
	memcpy(c->ctr, a1, BLK);
	return CRD_ST_OK;
}

/* A CCM piece; CRD_ST_*. ctx (AES-CBC) runs the CBC-MAC, w->sctx
 * (AES-CTR) the keystream. */
static int ccm_piece(struct ossl_worker *w, struct engine_op *op,
		     struct ccm_state *c)
{
	const struct session *s = op->sess;
	const struct ossl_key *k = (const struct ossl_key *)s->key;
	int idx = ossl_key_idx(CRD_ALG_AES_CBC, s->key_len);
	EVP_CIPHER *cbc = w->cipher[CRD_ALG_AES_CBC][idx],
		   *ctr = w->cipher[CRD_ALG_AES_CTR][idx];
	int enc = op->op == CRD_OP_ENCRYPT;

	if (op->pos & ENGINE_FIRST)
		memset(c, 0, sizeof(*c));
	else if (!c->open)
		return CRD_ST_BAD_PARAM; /* the daemon never does this */
	if (!cbc || !ctr ||
	    !EVP_EncryptInit_ex2(w->ctx, cbc, k->raw, c->x, NULL) ||
	    !EVP_CIPHER_CTX_set_padding(w->ctx, 0))
		return CRD_ST_ENGINE;
	if (op->pos & ENGINE_FIRST) {
		int rc = ccm_first(w->ctx, op, c);
		if (rc != CRD_ST_OK)
			return rc;
	}
	/* Checked before any byte is written: the pieces add up to param */
	uint64_t end = c->done + op->len;
	if (end > c->total || ((op->pos & ENGINE_LAST) && end != c->total))
		return CRD_ST_BAD_PARAM;
	if ((op->pos & ENGINE_LAST) && op->tag_len != c->tag_len)
		return CRD_ST_BAD_PARAM;
	/* the MAC is over the plaintext: before CTR overwrites it in place
	 * on encrypt, after CTR makes it on decrypt */
	if (enc && !ccm_mac(w->ctx, c, op->src, op->len))
		return CRD_ST_ENGINE;
	if (!ctr_run(w->sctx, ctr, k->raw, c->ctr, &c->off, op->src, op->dst,
		     op->len))
		return CRD_ST_ENGINE;
	if (!enc && !ccm_mac(w->ctx, c, op->dst, op->len))
		return CRD_ST_ENGINE;
	c->done = end;
	if (!(op->pos & ENGINE_LAST))
		return CRD_ST_OK;

	/* T = MSB_t(CBC-MAC) XOR MSB_t(E(A0)) */
	uint8_t tag[BLK] = { 0 };
	uint8_t a0_off = 0;
	if (!ccm_mac_pad(w->ctx, c))
		return CRD_ST_ENGINE;
	memset(c->ctr + BLK - c->q, 0, c->q); /* A0 */
	if (!ctr_run(w->sctx, ctr, k->raw, c->ctr, &a0_off, c->x, tag, BLK))
		return CRD_ST_ENGINE;
	int st = CRD_ST_OK;
	if (enc) {
		memcpy(op->tag, tag, op->tag_len);
	} else if (engine_ct_memcmp(tag, op->tag, op->tag_len)) {
		if (op->len) /* a forged message releases nothing more */
			memset(op->dst, 0, op->len);
		st = CRD_ST_AUTH_FAILED;
	}
	OPENSSL_cleanse(tag, sizeof(tag));
	return st;
}

/* ---- The hook ---- */

void ossl_stream(void *wctx, struct engine_op *op, void *state)
{
	struct ossl_worker *w = wctx;
	const struct session *s = op->sess;
	const uint8_t *key;
	unsigned klen;

	switch (s->alg) {
	case CRD_ALG_AES_XTS:
		op->status = xts_piece(w, op, state);
		break;
	case CRD_ALG_AES_CBC:
	case CRD_ALG_AES_CTR:
	case CRD_ALG_AES_ECB:
		op->status = cipher_piece(w, op, state);
		break;
	case CRD_ALG_AES_CCM:
		op->status = ccm_piece(w, op, state);
		break;
	case CRD_ALG_AES_GCM:
	case CRD_ALG_CHACHA20_POLY1305:
		ossl_stream_aead(w, op, state);
		break;
	case CRD_ALG_AES_CMAC:
		op->status = cmac_piece(w, op, state);
		break;
	default:
		if (!auth_alg(s->alg)) {
			op->status = CRD_ST_BAD_PARAM;
			return;
		}
		/* HMAC-SHA-n, SHA-n: the raw key (none for a digest) */
		key = ossl_auth_key_raw(s, &klen);
		stream_sha(op, state, key, klen);
		return;
	}
	/* Cleanses and frees the key schedules. */
	EVP_CIPHER_CTX_reset(w->ctx);
	EVP_CIPHER_CTX_reset(w->sctx);
	/* EVP's key set-up leaves key bytes in its dead frames. */
	engine_burn_stack();
}
