/* SPDX-License-Identifier: MIT */
/*
 * Stream pieces of AES-GCM, ChaCha20-Poly1305 and AES-CCM (stream.h) on
 * the aesni engine's sessions (aesni.h).
 *
 * GCM and ChaCha20-Poly1305: ipsec-mb's direct API already streams (init,
 * update, finalize), carrying partial blocks and keystream in its
 * context, which lives in the stream's state. ipsec-mb 1.3's ChaCha20-
 * Poly1305 updates take any length too (checked against OpenSSL with
 * 1-byte and odd pieces on its SSE, AVX, AVX2 and AVX-512 code; the unit
 * test, tests/unit/test_stream_aead.c, checks the host's), so nothing is
 * carried here.
 *
 * CCM: ipsec-mb has no streaming CCM, so it is built here from its AES
 * jobs (SP 800-38C): CBC-MAC over B0 || encoded AAD || message with CBC
 * jobs into a scratch buffer (only the last block is kept), CTR with
 * counter jobs from A1, and A0's keystream for the tag. The message runs
 * in chunks of CCM_CHUNK bytes so the second pass over a chunk (CTR after
 * the MAC on encrypt, the MAC after CTR on decrypt) finds it in cache.
 * CBC-MAC is serial, one AES block's latency per block: measured, a
 * stream of 64 KiB AES-128 pieces runs at ~0.7 GB/s, EVP's one-shot
 * (which interleaves CTR with the MAC) at ~1.1 GB/s.
 */
#include "aead.h"
#include "aesni.h"
#include "stream.h"
#include "session.h"

#include <string.h>

#include <intel-ipsec-mb.h>

#include <cryptod/ring_abi.h>

/* SP 800-38D: at most 2^39 - 256 bits of plaintext. */
#define GCM_MSG_MAX ((1ull << 36) - 32)
/* RFC 8439: the 32-bit block counter starts at 1 for the message. */
#define CHACHA_MSG_MAX ((1ull << 38) - 64)

enum { BLK = 16, CCM_CHUNK = 8192 };

/* CCM's running values; all key-derived bytes stay here, in locked
 * memory, not on the stack. */
struct ccm_stream {
	uint8_t x[BLK];	  /* CBC-MAC value, XOR the bytes of the block in
			   * progress (fill of them) */
	uint8_t ctr[BLK]; /* the next counter block, A_i */
	uint8_t ks[BLK];  /* keystream of the block in progress; E(A0) on
			   * LAST */
	uint32_t total;	  /* declared message length (param) */
	uint8_t fill;	  /* bytes absorbed into x's block in progress */
	uint8_t q;	  /* bytes of the length field: 15 - nonce */
	uint8_t tag_len;  /* as B0 encodes it */
};

struct aead_stream {
	union {
		struct gcm_context_data gcm;
		struct chacha20_poly1305_context_data chacha;
		struct ccm_stream ccm;
		/* ChaCha20-Poly1305 on OpenSSL's ChaCha20: its own state */
		uint64_t evp[OSSL_AEAD_STREAM_SIZE / 8];
	} u;
	uint64_t done;	  /* message bytes so far */
	uint8_t tag[BLK]; /* the computed tag, for decrypt's comparison */
	uint8_t open;	  /* FIRST has run */
	uint8_t on_evp;	  /* ChaCha20-Poly1305: u.evp carries it */
};
_Static_assert(sizeof(struct aead_stream) <= STREAM_STATE_SIZE,
	       "AEAD stream state fits");

/* Decrypt's LAST: a forged message releases nothing of this piece. */
static void stream_verify(struct engine_op *op, const uint8_t *tag)
{
	if (engine_ct_memcmp(tag, op->tag, op->tag_len)) {
		if (op->len)
			memset(op->dst, 0, op->len);
		op->status = CRD_ST_AUTH_FAILED;
	}
}

/* ---- AES-GCM: the direct API ---- */

static void stream_gcm(IMB_MGR *m, struct engine_op *op, struct aead_stream *st)
{
	const struct aesni_key *k = (const struct aesni_key *)op->sess->key;
	struct gcm_context_data *ctx = &st->u.gcm;
	int enc = op->op == CRD_OP_ENCRYPT;
	aes_gcm_init_t init;
	aes_gcm_init_var_iv_t init_var;
	aes_gcm_enc_dec_update_t update;
	aes_gcm_enc_dec_finalize_t final;

	switch (op->sess->key_len) {
	case 16:
		init = m->gcm128_init;
		init_var = m->gcm128_init_var_iv;
		update = enc ? m->gcm128_enc_update : m->gcm128_dec_update;
		final = enc ? m->gcm128_enc_finalize : m->gcm128_dec_finalize;
		break;
	case 24:
		init = m->gcm192_init;
		init_var = m->gcm192_init_var_iv;
		update = enc ? m->gcm192_enc_update : m->gcm192_dec_update;
		final = enc ? m->gcm192_enc_finalize : m->gcm192_dec_finalize;
		break;
	default:
		init = m->gcm256_init;
		init_var = m->gcm256_init_var_iv;
		update = enc ? m->gcm256_enc_update : m->gcm256_dec_update;
		final = enc ? m->gcm256_enc_finalize : m->gcm256_dec_finalize;
		break;
	}
	if (st->done + op->len > GCM_MSG_MAX ||
	    ((op->pos & ENGINE_LAST) && op->tag_len > BLK)) {
		op->status = CRD_ST_BAD_PARAM;
		return;
	}
	if (op->pos & ENGINE_FIRST) {
		/* 12 bytes: J0 = IV || 1; others are GHASHed into J0 */
		if (op->iv_len == 12)
			init(&k->gcm, ctx, op->iv, op->aad, op->aad_len);
		else
			init_var(&k->gcm, ctx, op->iv, op->iv_len, op->aad,
				 op->aad_len);
	}
	if (op->len) /* an empty piece may come with NULL src and dst */
		update(&k->gcm, ctx, op->dst, op->src, op->len);
	st->done += op->len;
	op->status = CRD_ST_OK;
	if (!(op->pos & ENGINE_LAST))
		return;
	final(&k->gcm, ctx, enc ? op->tag : st->tag, op->tag_len);
	if (!enc)
		stream_verify(op, st->tag);
}

/* ---- ChaCha20-Poly1305: the direct API ---- */

static void stream_chacha(IMB_MGR *m, struct engine_op *op,
			  struct aead_stream *st)
{
	const struct aesni_key *k = (const struct aesni_key *)op->sess->key;
	struct chacha20_poly1305_context_data *ctx = &st->u.chacha;
	int enc = op->op == CRD_OP_ENCRYPT;

	if (op->pos & ENGINE_FIRST)
		st->on_evp = (uint8_t)aesni_chacha_stream_on_evp(op->len);
	if (st->on_evp) {
		aesni_chacha_stream_evp(op, k->chacha, st->u.evp);
		return;
	}
	if (st->done + op->len > CHACHA_MSG_MAX ||
	    ((op->pos & ENGINE_FIRST) && op->iv_len != 12) ||
	    ((op->pos & ENGINE_LAST) && op->tag_len > BLK)) {
		op->status = CRD_ST_BAD_PARAM;
		return;
	}
	if (op->pos & ENGINE_FIRST)
		IMB_CHACHA20_POLY1305_INIT(m, k->chacha, ctx, op->iv, op->aad,
					   op->aad_len);
	if (op->len && enc)
		IMB_CHACHA20_POLY1305_ENC_UPDATE(m, k->chacha, ctx, op->dst,
						 op->src, op->len);
	else if (op->len)
		IMB_CHACHA20_POLY1305_DEC_UPDATE(m, k->chacha, ctx, op->dst,
						 op->src, op->len);
	st->done += op->len;
	op->status = CRD_ST_OK;
	if (!(op->pos & ENGINE_LAST))
		return;
	if (enc) {
		IMB_CHACHA20_POLY1305_ENC_FINALIZE(m, ctx, op->tag,
						   op->tag_len);
		return;
	}
	IMB_CHACHA20_POLY1305_DEC_FINALIZE(m, ctx, st->tag, op->tag_len);
	stream_verify(op, st->tag);
}

/* ---- AES-CCM from AES jobs ---- */

static const uint8_t ccm_zero[BLK];

/* Run one AES encryption job (mode, src -> dst, n bytes, iv: a 16-byte
 * block or NULL) to completion; the manager holds no other job
 * (stream_ccm made sure). 0, or -1 if ipsec-mb refused it. */
static int ccm_job(IMB_MGR *m, const struct session *s, IMB_CIPHER_MODE mode,
		   const uint8_t *src, uint8_t *dst, uint64_t n,
		   const uint8_t *iv)
{
	const struct aesni_key *k = (const struct aesni_key *)s->key;
	return aesni_job_run(m, mode, 1, k->blk.enc, k->blk.dec, s->key_len,
			     src, dst, n, iv)
		       ? -1
		       : 0;
}

/* The low 32 bits of a counter block += n, as ipsec-mb's CTR counts.
 * CCM's counter never passes its q bytes: the length check on FIRST. */
static void ccm_ctr_add(uint8_t ctr[BLK], uint32_t n)
{
	uint32_t v = (uint32_t)ctr[12] << 24 | (uint32_t)ctr[13] << 16 |
		     (uint32_t)ctr[14] << 8 | ctr[15];
	v += n;
	ctr[12] = (uint8_t)(v >> 24);
	ctr[13] = (uint8_t)(v >> 16);
	ctr[14] = (uint8_t)(v >> 8);
	ctr[15] = (uint8_t)v;
}

/* CBC-MAC over n more bytes of the formatted input; scratch takes the
 * CBC output of whole blocks (CCM_CHUNK bytes). */
static int ccm_mac(IMB_MGR *m, const struct session *s, struct ccm_stream *c,
		   const uint8_t *p, size_t n, uint8_t *scratch)
{
	if (c->fill) { /* finish the block in progress */
		while (n && c->fill < BLK) {
			c->x[c->fill++] ^= *p++;
			n--;
		}
		if (c->fill < BLK)
			return 0;
		if (ccm_job(m, s, IMB_CIPHER_ECB, c->x, c->x, BLK, NULL))
			return -1;
		c->fill = 0;
	}
	while (n >= BLK) { /* whole blocks: CBC from x */
		size_t w = n & ~(size_t)(BLK - 1);
		if (w > CCM_CHUNK)
			w = CCM_CHUNK;
		if (ccm_job(m, s, IMB_CIPHER_CBC, p, scratch, w, c->x))
			return -1;
		memcpy(c->x, scratch + w - BLK, BLK);
		p += w;
		n -= w;
	}
	while (n) { /* the start of the next block */
		c->x[c->fill++] ^= *p++;
		n--;
	}
	return 0;
}

/* Close the CBC-MAC's block in progress (zero padding). */
static int ccm_mac_pad(IMB_MGR *m, const struct session *s,
		       struct ccm_stream *c)
{
	if (!c->fill)
		return 0;
	c->fill = 0;
	return ccm_job(m, s, IMB_CIPHER_ECB, c->x, c->x, BLK, NULL);
}

/* CTR over n bytes at message offset pos, from the counter block and
 * keystream left in c. */
static int ccm_ctr(IMB_MGR *m, const struct session *s, struct ccm_stream *c,
		   const uint8_t *src, uint8_t *dst, size_t n, uint64_t pos)
{
	unsigned used = pos % BLK;

	if (used) { /* the rest of the keystream block in progress */
		while (n && used < BLK) {
			*dst++ = *src++ ^ c->ks[used++];
			n--;
		}
	}
	size_t whole = n & ~(size_t)(BLK - 1);
	if (whole) {
		if (ccm_job(m, s, IMB_CIPHER_CNTR, src, dst, whole, c->ctr))
			return -1;
		ccm_ctr_add(c->ctr, (uint32_t)(whole / BLK));
		src += whole;
		dst += whole;
		n -= whole;
	}
	if (n) { /* a block's start: keep its keystream for the next piece */
		if (ccm_job(m, s, IMB_CIPHER_CNTR, ccm_zero, c->ks, BLK,
			    c->ctr))
			return -1;
		ccm_ctr_add(c->ctr, 1);
		for (unsigned i = 0; i < n; i++)
			dst[i] = src[i] ^ c->ks[i];
	}
	return 0;
}

/* FIRST: B0 and the AAD into the CBC-MAC, A1 as the first counter. */
static int ccm_first(IMB_MGR *m, struct engine_op *op, struct ccm_stream *c,
		     uint8_t *scratch)
{
	const struct session *s = op->sess;
	unsigned q, t = s->tag_len, hdr_len;
	uint8_t b0[BLK], hdr[6], a1[BLK];

	if (ccm_stream_head(op, t, b0, hdr, &hdr_len, a1, &q))
		return CRD_ST_BAD_PARAM;
	c->q = (uint8_t)q;
	c->tag_len = (uint8_t)t;
	c->total = op->param;
	memset(c->x, 0, BLK);
	c->fill = 0;
	if (ccm_mac(m, s, c, b0, BLK, scratch))
		return CRD_ST_ENGINE;
	if (hdr_len && (ccm_mac(m, s, c, hdr, hdr_len, scratch) ||
			ccm_mac(m, s, c, op->aad, op->aad_len, scratch) ||
			ccm_mac_pad(m, s, c)))
		return CRD_ST_ENGINE;
	memcpy(c->ctr, a1, BLK);
	return CRD_ST_OK;
}

/* LAST: T = MSB_t(CBC-MAC) XOR MSB_t(E(A0)), into st->tag. */
static int ccm_tag(IMB_MGR *m, const struct session *s, struct aead_stream *st)
{
	struct ccm_stream *c = &st->u.ccm;

	if (ccm_mac_pad(m, s, c))
		return -1;
	memset(c->ctr + BLK - c->q, 0, c->q); /* A0 */
	if (ccm_job(m, s, IMB_CIPHER_CNTR, ccm_zero, c->ks, BLK, c->ctr))
		return -1;
	for (unsigned i = 0; i < BLK; i++)
		st->tag[i] = c->x[i] ^ c->ks[i];
	return 0;
}

static int ccm_piece(IMB_MGR *m, struct engine_op *op, struct aead_stream *st,
		     uint8_t *scratch)
{
	struct ccm_stream *c = &st->u.ccm;
	const struct session *s = op->sess;
	int enc = op->op == CRD_OP_ENCRYPT;

	if (op->pos & ENGINE_FIRST) {
		int rc = ccm_first(m, op, c, scratch);
		if (rc != CRD_ST_OK)
			return rc;
	}
	/* Checked before any byte is written: the pieces add up to param */
	uint64_t end = st->done + op->len;
	if (end > c->total || ((op->pos & ENGINE_LAST) && end != c->total))
		return CRD_ST_BAD_PARAM;
	if ((op->pos & ENGINE_LAST) && op->tag_len != c->tag_len)
		return CRD_ST_BAD_PARAM;

	for (uint32_t off = 0; off < op->len;) {
		uint32_t n = op->len - off;
		if (n > CCM_CHUNK)
			n = CCM_CHUNK;
		const uint8_t *src = op->src + off;
		uint8_t *dst = op->dst + off;
		/* the MAC is over the plaintext: before CTR overwrites it
		 * in place on encrypt, after CTR makes it on decrypt */
		if (enc && ccm_mac(m, s, c, src, n, scratch))
			return CRD_ST_ENGINE;
		if (ccm_ctr(m, s, c, src, dst, n, st->done))
			return CRD_ST_ENGINE;
		if (!enc && ccm_mac(m, s, c, dst, n, scratch))
			return CRD_ST_ENGINE;
		st->done += n;
		off += n;
	}
	if (!(op->pos & ENGINE_LAST))
		return CRD_ST_OK;
	if (ccm_tag(m, s, st))
		return CRD_ST_ENGINE;
	if (enc)
		memcpy(op->tag, st->tag, op->tag_len);
	return CRD_ST_OK;
}

static void stream_ccm(IMB_MGR *m, struct engine_op *op, struct aead_stream *st)
{
	/* CBC-MAC values: key-derived, wiped before the frame goes */
	uint8_t scratch[CCM_CHUNK];

	/* Jobs of a burst still in the manager would complete in place of
	 * ours and be lost: the worker flushes at the end of every burst, so
	 * this is a caller's bug, refused before anything is touched. */
	if (IMB_QUEUE_SIZE(m)) {
		op->status = CRD_ST_ENGINE;
		return;
	}
	op->status = ccm_piece(m, op, st, scratch);
	explicit_bzero(scratch, sizeof(scratch));
	if (op->status == CRD_ST_OK && op->op == CRD_OP_DECRYPT &&
	    (op->pos & ENGINE_LAST))
		stream_verify(op, st->tag);
}

void aesni_stream_aead(void *wctx, struct engine_op *op, void *state)
{
	struct aead_stream *st = state;
	IMB_MGR *m = wctx;

	if (!m) {
		op->status = CRD_ST_ENGINE;
		return;
	}
	/* The daemon runs FIRST first; this catches a state it did not */
	if (!(op->pos & ENGINE_FIRST) && !st->open) {
		op->status = CRD_ST_BAD_PARAM;
		return;
	}
	if (op->pos & ENGINE_FIRST) {
		memset(st, 0, sizeof(*st));
		st->open = 1;
	}
	switch (op->sess->alg) {
	case CRD_ALG_AES_GCM:
		stream_gcm(m, op, st);
		break;
	case CRD_ALG_CHACHA20_POLY1305:
		stream_chacha(m, op, st);
		break;
	case CRD_ALG_AES_CCM:
		stream_ccm(m, op, st);
		break;
	default:
		op->status = CRD_ST_BAD_PARAM;
		break;
	}
}
