/* SPDX-License-Identifier: MIT */
/*
 * AES-GCM and ChaCha20-Poly1305 stream pieces of the openssl engine
 * (stream.h), called from ossl_stream() (openssl_stream.c), which resets
 * the worker's contexts and burns the stack after each piece.
 *
 * EVP's AEAD contexts keep GHASH and Poly1305 where no stream state can
 * hold them (opaque, on OpenSSL's heap), so each half is built here:
 *  - the cipher from what the engine's CTR stream uses: EVP's AES-CTR
 *    (GCM's keystream from inc32(J0)) and EVP's ChaCha20 (RFC 8439's
 *    32-bit block counter from 1, block 0 giving the Poly1305 key),
 *    keyed per piece from the session's raw key, positioned from the
 *    counter block and how much of its keystream is used;
 *  - the MAC from ghash.c and poly1305.c, whose state is plain bytes.
 * So the state holds H and the GHASH value (or r, s and the Poly1305
 * accumulator), the MAC's block in progress, the lengths, the counter
 * and J0: a clone is a byte copy, an abort a wipe, and no key schedule
 * outlives the piece.
 *
 * GCM's counter is inc32: only the low 32 bits count, wrapping mod 2^32,
 * where EVP's CTR adds to all 128. With a 12-byte IV they start at 2
 * and never wrap within GCM's 2^32 - 2 blocks, but J0 from any other IV
 * is a GHASH, whose low word may be near 2^32: the run stops at the wrap
 * and EVP starts again from the wrapped block.
 *
 * Each piece's data goes through a private chunk buffer: the MAC reads
 * the same bytes the cipher makes (encrypt) or takes (decrypt), however
 * the client changes its shared buffers meanwhile, and in-place pieces
 * need no special order.
 */
#include "ghash.h"
#include "openssl.h"
#include "poly1305.h"
#include "session.h"
#include "stream.h"

#include <string.h>

#include <openssl/evp.h>

#include <cryptod/ring_abi.h>

/* SP 800-38D: at most 2^39 - 256 bits of plaintext. */
#define GCM_MSG_MAX ((1ull << 36) - 32)
/* RFC 8439: the 32-bit block counter starts at 1 for the message. */
#define CHACHA_MSG_MAX ((1ull << 38) - 64)

enum { BLK = 16, CHUNK = 2048, CHACHA_BLK = 64 };

/* A MAC's block in progress (ciphertext: not secret). */
struct carry {
	uint8_t blk[BLK];
	uint8_t fill;
};

struct gcm_stream {
	struct ghash g;	  /* H, and the GHASH of AAD || C so far */
	uint8_t j0[BLK];  /* for E_K(J0), the tag's mask, at LAST */
	uint8_t ctr[BLK]; /* the keystream block in progress, or next */
	struct carry k;
	uint8_t off; /* keystream bytes of ctr's block used */
	uint32_t aad_len;
};

struct chacha_stream {
	struct poly1305 mac; /* r, s, and the accumulator */
	uint8_t nonce[12];
	uint32_t ctr; /* block counter of the keystream block in progress,
		       * or next */
	struct carry k;
	uint8_t off; /* keystream bytes of ctr's block used */
	uint32_t aad_len;
};

struct aead_stream {
	union {
		struct gcm_stream gcm;
		struct chacha_stream chacha;
	} u;
	uint64_t done; /* message bytes so far */
	uint8_t open;  /* FIRST has run */
};
_Static_assert(sizeof(struct aead_stream) <= OSSL_AEAD_STREAM_SIZE,
	       "GCM and ChaCha20-Poly1305 stream state fits");

typedef void mac_blocks_fn(void *mac, const uint8_t *p, size_t n);

static void gcm_blocks(void *mac, const uint8_t *p, size_t n)
{
	ghash_blocks(mac, p, n);
}

static void poly_blocks(void *mac, const uint8_t *p, size_t n)
{
	poly1305_blocks(mac, p, n);
}

/* n bytes into a MAC of whole blocks, k carrying the block in
 * progress. */
static void mac_feed(void *mac, mac_blocks_fn *blocks, struct carry *k,
		     const uint8_t *p, size_t n)
{
	if (!n) /* p may be NULL then (no AAD, an empty piece) */
		return;
	if (k->fill) {
		size_t room = (size_t)BLK - k->fill, t = room < n ? room : n;
		memcpy(k->blk + k->fill, p, t);
		k->fill += (uint8_t)t;
		p += t;
		n -= t;
		if (k->fill < BLK)
			return;
		blocks(mac, k->blk, 1);
		k->fill = 0;
	}
	blocks(mac, p, n / BLK);
	memcpy(k->blk, p + n / BLK * BLK, n % BLK);
	k->fill = (uint8_t)(n % BLK);
}

/* Close the block in progress, zero-padded (both AEADs pad so). */
static void mac_pad(void *mac, mac_blocks_fn *blocks, struct carry *k)
{
	if (!k->fill)
		return;
	memset(k->blk + k->fill, 0, BLK - k->fill);
	blocks(mac, k->blk, 1);
	k->fill = 0;
}

/*
 * Put ctx at the keystream of counter block iv, off bytes in: keyed
 * with c and key (NULL, NULL: the key it holds), the off bytes run
 * through and dropped. 1 when done.
 */
static int ks_seek(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, const uint8_t *key,
		   const uint8_t *iv, unsigned off)
{
	static const uint8_t zero[CHACHA_BLK];
	uint8_t ks[CHACHA_BLK];
	int out = 0, ok = EVP_EncryptInit_ex2(ctx, c, key, iv, NULL);

	if (ok && off)
		ok = EVP_EncryptUpdate(ctx, ks, &out, zero, (int)off) &&
		     out == (int)off;
	explicit_bzero(ks, sizeof(ks));
	return ok;
}

/* n (<= CHUNK) bytes of keystream from ctx, XORed from src into dst. */
static int ks_xor(EVP_CIPHER_CTX *ctx, const uint8_t *src, uint8_t *dst,
		  size_t n)
{
	int out = 0;
	return EVP_EncryptUpdate(ctx, dst, &out, src, (int)n) &&
	       (size_t)out == n;
}

/* The cipher and MAC of one AEAD, over the chunks of a piece. */
struct aead_ops {
	int (*ks)(EVP_CIPHER_CTX *ctx, void *st, const uint8_t *src,
		  uint8_t *dst, size_t n);
	void *mac;
	mac_blocks_fn *blocks;
	struct carry *k;
};

/* The piece's data: the MAC over the ciphertext, from a private copy
 * (above). 1 when done. */
static int aead_data(EVP_CIPHER_CTX *ctx, void *st, const struct aead_ops *a,
		     struct engine_op *op)
{
	uint8_t buf[CHUNK]; /* ciphertext only */
	int enc = op->op == CRD_OP_ENCRYPT;

	for (uint32_t off = 0; off < op->len;) {
		size_t n = op->len - off < CHUNK ? op->len - off : CHUNK;
		if (enc) {
			if (!a->ks(ctx, st, op->src + off, buf, n))
				return 0;
			mac_feed(a->mac, a->blocks, a->k, buf, n);
			memcpy(op->dst + off, buf, n);
		} else {
			memcpy(buf, op->src + off, n);
			mac_feed(a->mac, a->blocks, a->k, buf, n);
			if (!a->ks(ctx, st, buf, op->dst + off, n))
				return 0;
		}
		off += (uint32_t)n;
	}
	return 1;
}

/* LAST: the tag out (encrypt), or compared in constant time (decrypt:
 * a mismatch zeroes the piece's output). tag is wiped. */
static int aead_finish(struct engine_op *op, uint8_t tag[BLK])
{
	int st = CRD_ST_OK;
	if (op->op == CRD_OP_ENCRYPT) {
		memcpy(op->tag, tag, op->tag_len);
	} else if (engine_ct_memcmp(tag, op->tag, op->tag_len)) {
		if (op->len) /* a forged message releases nothing more */
			memset(op->dst, 0, op->len);
		st = CRD_ST_AUTH_FAILED;
	}
	explicit_bzero(tag, BLK);
	return st;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* ---- AES-GCM (SP 800-38D) ---- */

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* GCM's CTR: ctx is at (ctr, off); up to the low word's wrap, then on
 * from the wrapped block (above). */
static int gcm_ks(EVP_CIPHER_CTX *ctx, void *st, const uint8_t *src,
		  uint8_t *dst, size_t n)
{
	struct gcm_stream *c = st;
	while (n) {
		uint32_t lo = be32(c->ctr + 12);
		uint64_t room = ((1ull << 32) - lo) * BLK - c->off;
		size_t k = n < room ? n : (size_t)room;
		if (!ks_xor(ctx, src, dst, k))
			return 0;
		uint64_t used = c->off + (uint64_t)k;
		put_be32(c->ctr + 12, lo + (uint32_t)(used / BLK));
		c->off = (uint8_t)(used % BLK);
		if (k == room && !ks_seek(ctx, NULL, NULL, c->ctr, 0))
			return 0;
		src += k;
		dst += k;
		n -= k;
	}
	return 1;
}

/* FIRST: H, J0 (the IV as is, or GHASHed), the AAD into GHASH, the
 * counter at inc32(J0). ctx gets keyed. CRD_ST_*. */
static int gcm_first(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *aes,
		     const uint8_t *key, const struct engine_op *op,
		     struct gcm_stream *c)
{
	static const uint8_t zero[BLK];
	uint8_t h[BLK] = { 0 }, lens[BLK] = { 0 };

	if (!op->iv || !op->iv_len || (op->aad_len && !op->aad))
		return CRD_ST_BAD_PARAM;
	/* H = E_K(0^128): CTR's first keystream block from a zero counter */
	int ok = ks_seek(ctx, aes, key, zero, 0) && ks_xor(ctx, h, h, BLK);
	ghash_init(&c->g, h);
	explicit_bzero(h, sizeof(h));
	if (!ok)
		return CRD_ST_ENGINE;
	if (op->iv_len == 12) {
		memcpy(c->j0, op->iv, 12);
		put_be32(c->j0 + 12, 1);
	} else { /* J0 = GHASH(IV || 0^(s+64) || [len(IV)]_64) */
		ghash_pad(&c->g, op->iv, op->iv_len);
		put_be64(lens + 8, (uint64_t)op->iv_len * 8);
		ghash_blocks(&c->g, lens, 1);
		ghash_out(&c->g, c->j0);
		c->g.y[0] = c->g.y[1] = 0;
	}
	ghash_pad(&c->g, op->aad, op->aad_len);
	c->aad_len = op->aad_len;
	memcpy(c->ctr, c->j0, BLK);
	put_be32(c->ctr + 12, be32(c->j0 + 12) + 1);
	return CRD_ST_OK;
}

static int gcm_piece(struct ossl_worker *w, struct engine_op *op,
		     struct aead_stream *st)
{
	const struct session *s = op->sess;
	const struct ossl_key *key = (const struct ossl_key *)s->key;
	const EVP_CIPHER *aes =
		w->cipher[CRD_ALG_AES_CTR]
			 [ossl_key_idx(CRD_ALG_AES_CTR, s->key_len)];
	struct gcm_stream *c = &st->u.gcm;
	const struct aead_ops a = { gcm_ks, &c->g, gcm_blocks, &c->k };

	if (!aes)
		return CRD_ST_ENGINE;
	/* checked before a byte is written */
	if (st->done + op->len > GCM_MSG_MAX ||
	    ((op->pos & ENGINE_LAST) && (!op->tag_len || op->tag_len > BLK)))
		return CRD_ST_BAD_PARAM;
	if (op->pos & ENGINE_FIRST) {
		int rc = gcm_first(w->ctx, aes, key->raw, op, c);
		if (rc != CRD_ST_OK)
			return rc;
	}
	if (!ks_seek(w->ctx, aes, key->raw, c->ctr, c->off) ||
	    !aead_data(w->ctx, c, &a, op))
		return CRD_ST_ENGINE;
	st->done += op->len;
	if (!(op->pos & ENGINE_LAST))
		return CRD_ST_OK;

	/* T = MSB_t(GHASH(A, C, [len(A)]_64 || [len(C)]_64) ^ E_K(J0)) */
	uint8_t lens[BLK], tag[BLK], mask[BLK] = { 0 };
	mac_pad(&c->g, gcm_blocks, &c->k);
	put_be64(lens, (uint64_t)c->aad_len * 8);
	put_be64(lens + 8, st->done * 8);
	ghash_blocks(&c->g, lens, 1);
	ghash_out(&c->g, tag);
	int ok = ks_seek(w->ctx, NULL, NULL, c->j0, 0) &&
		 ks_xor(w->ctx, mask, mask, BLK);
	for (unsigned i = 0; i < BLK; i++)
		tag[i] ^= mask[i];
	explicit_bzero(mask, sizeof(mask));
	if (!ok) {
		explicit_bzero(tag, sizeof(tag));
		return CRD_ST_ENGINE;
	}
	return aead_finish(op, tag);
}

/* ---- ChaCha20-Poly1305 (RFC 8439 2.8) ---- */

/* EVP's ChaCha20 IV: the 32-bit block counter, little-endian, then the
 * nonce. */
static void chacha_iv(uint8_t iv[16], uint32_t ctr, const uint8_t nonce[12])
{
	for (int i = 0; i < 4; i++)
		iv[i] = (uint8_t)(ctr >> (8 * i));
	memcpy(iv + 4, nonce, 12);
}

/* ctx is at (ctr, off); the length bound keeps ctr from wrapping. */
static int chacha_ks(EVP_CIPHER_CTX *ctx, void *st, const uint8_t *src,
		     uint8_t *dst, size_t n)
{
	struct chacha_stream *c = st;
	if (!ks_xor(ctx, src, dst, n))
		return 0;
	uint64_t used = c->off + (uint64_t)n;
	c->ctr += (uint32_t)(used / CHACHA_BLK);
	c->off = (uint8_t)(used % CHACHA_BLK);
	return 1;
}

/* FIRST: the Poly1305 key from block 0, the AAD (padded) into it, the
 * counter at 1. ctx gets keyed. CRD_ST_*. */
static int chacha_first(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cc,
			const uint8_t *key, const struct engine_op *op,
			struct chacha_stream *c)
{
	uint8_t iv[16], otk[32] = { 0 };

	if (!op->iv || op->iv_len != 12 || (op->aad_len && !op->aad))
		return CRD_ST_BAD_PARAM;
	memcpy(c->nonce, op->iv, 12);
	chacha_iv(iv, 0, c->nonce);
	int ok = ks_seek(ctx, cc, key, iv, 0) &&
		 ks_xor(ctx, otk, otk, sizeof(otk));
	poly1305_init(&c->mac, otk);
	explicit_bzero(otk, sizeof(otk));
	if (!ok)
		return CRD_ST_ENGINE;
	mac_feed(&c->mac, poly_blocks, &c->k, op->aad, op->aad_len);
	mac_pad(&c->mac, poly_blocks, &c->k);
	c->aad_len = op->aad_len;
	c->ctr = 1;
	return CRD_ST_OK;
}

/* A piece on EVP's ChaCha20 cc, in ctx, under the raw key. */
static int chacha_piece(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cc,
			const uint8_t *key, struct engine_op *op,
			struct aead_stream *st)
{
	struct chacha_stream *c = &st->u.chacha;
	const struct aead_ops a = { chacha_ks, &c->mac, poly_blocks, &c->k };
	uint8_t iv[16];

	if (!cc)
		return CRD_ST_ENGINE;
	if (st->done + op->len > CHACHA_MSG_MAX ||
	    ((op->pos & ENGINE_LAST) && (!op->tag_len || op->tag_len > BLK)))
		return CRD_ST_BAD_PARAM;
	if (op->pos & ENGINE_FIRST) {
		int rc = chacha_first(ctx, cc, key, op, c);
		if (rc != CRD_ST_OK)
			return rc;
	}
	chacha_iv(iv, c->ctr, c->nonce);
	if (!ks_seek(ctx, cc, key, iv, c->off) || !aead_data(ctx, c, &a, op))
		return CRD_ST_ENGINE;
	st->done += op->len;
	if (!(op->pos & ENGINE_LAST))
		return CRD_ST_OK;

	/* the ciphertext padded, then le64(len(AAD)) || le64(len(C)) */
	uint8_t lens[BLK], tag[BLK];
	mac_pad(&c->mac, poly_blocks, &c->k);
	put_le64(lens, c->aad_len);
	put_le64(lens + 8, st->done);
	poly1305_blocks(&c->mac, lens, 1);
	poly1305_final(&c->mac, NULL, 0, tag);
	return aead_finish(op, tag);
}

/* ---- The entry ---- */

/* FIRST opens the state; any other piece needs it open. */
static int aead_open(const struct engine_op *op, struct aead_stream *st)
{
	/* The daemon runs FIRST first; this catches a state it did not */
	if (!(op->pos & ENGINE_FIRST) && !st->open)
		return 0;
	if (op->pos & ENGINE_FIRST) {
		memset(st, 0, sizeof(*st));
		st->open = 1;
	}
	return 1;
}

static int aead_piece(struct ossl_worker *w, struct engine_op *op,
		      struct aead_stream *st)
{
	const struct ossl_key *key = (const struct ossl_key *)op->sess->key;

	if (!aead_open(op, st))
		return CRD_ST_BAD_PARAM;
	switch (op->sess->alg) {
	case CRD_ALG_AES_GCM:
		return gcm_piece(w, op, st);
	case CRD_ALG_CHACHA20_POLY1305:
		return chacha_piece(w->ctx,
				    w->cipher[CRD_ALG_CHACHA20][ossl_key_idx(
					    CRD_ALG_CHACHA20, 32)],
				    key->raw, op, st);
	default:
		return CRD_ST_BAD_PARAM;
	}
}

void ossl_stream_aead(void *wctx, struct engine_op *op, void *state)
{
	op->status = aead_piece(wctx, op, state);
}

void ossl_chacha_stream(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cc,
			const uint8_t key[32], struct engine_op *op,
			void *state)
{
	struct aead_stream *st = state;

	op->status = aead_open(op, st) ? chacha_piece(ctx, cc, key, op, st)
				       : CRD_ST_BAD_PARAM;
}
