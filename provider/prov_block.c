/* SPDX-License-Identifier: MIT */
/*
 * AES-CBC, -ECB, -CTR, -XTS and ChaCha20: one op per update, the state
 * between updates kept here rather than in a daemon stream. That state
 * is small and ours (CBC's chaining block, CTR's and ChaCha20's counter
 * and the unused keystream of a partial block), so dupctx works at any
 * point, a context
 * holds none of the connection's 32 stream slots between calls, and the
 * EVP output rules (whole blocks, the last block held back for padding)
 * are applied here exactly as OpenSSL's default provider applies them.
 * XTS needs no state: OpenSSL makes each update one data unit under the
 * IV as set.
 */
#include "prov_cipher.h"
#include "prov_mode.h"

#include <openssl/err.h>

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

enum {
	BLK = 16,
	CC20_BLK = 64,
	/* Split larger updates into ops of this much (a multiple of BLK),
	 * chaining between them here: what a thread's queue takes
	 * zero-copy (prov_io.c). */
	BLK_CHUNK = 2 << 20,
	XTS_UNIT_MAX = 1u << 24, /* 2^20 blocks, as OpenSSL */
	/* CTR and ChaCha20 keystream fetched ahead: the first fetch, and
	 * the most at once (each fetch doubles, so a long message of small
	 * updates costs one round trip per KS_MAX bytes). */
	KS_MIN = 64 << 10,
	KS_MAX = 512 << 10,
};

/* counter += n, as a 128-bit big-endian number (OpenSSL's CTR). */
static void ctr_add(uint8_t *ctr, uint64_t n)
{
	for (int i = BLK - 1; i >= 0 && n; i--) {
		uint64_t s = (uint64_t)ctr[i] + (n & 0xff);
		ctr[i] = (uint8_t)s;
		n = (n >> 8) + (s >> 8);
	}
}

/* ChaCha20's IV: a 32-bit little-endian block counter, then the nonce.
 * OpenSSL carries a wrapping counter into the nonce's first word; the
 * daemon's ops never cross a wrap (cc20_room), and the carry is here. */
static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void cc20_add(uint8_t *iv, uint64_t blocks)
{
	uint64_t ctr = (uint64_t)le32(iv) + blocks;
	put_le32(iv, (uint32_t)ctr);
	if (ctr >> 32)
		put_le32(iv + 4, le32(iv + 4) + 1);
}

/* Bytes of whole blocks left before the counter wraps. */
static uint64_t cc20_room(const uint8_t *iv)
{
	return ((1ull << 32) - le32(iv)) * CC20_BLK;
}

/* CTR, ChaCha20: iv moved on by the blocks of len bytes (whole ones). */
static void ctr_advance(const struct pc_ctx *c, uint8_t *iv, size_t len)
{
	if (c->ci->kind == PC_CTR)
		ctr_add(iv, len / BLK);
	else if (c->ci->kind == PC_CHACHA20)
		cc20_add(iv, len / CC20_BLK);
}

/* The message goes in-process before its first op: swctx from the key
 * and IV, with what block_update holds back of earlier updates. PC_SW
 * (the caller repeats the update there) or -errno. */
static int blk_fall_back(struct pc_ctx *c)
{
	int err = pc_sw_begin(c, NULL, 0);
	if (err)
		return err;
	uint8_t tmp[2 * BLK];
	int n = 0;
	if (c->bufsz &&
	    (!EVP_CipherUpdate(c->swctx, tmp, &n, c->buf, (int)c->bufsz) ||
	     n != 0)) {
		PROV_ERR(c->p, PROV_R_FALLBACK, "the held-back bytes");
		return -EINVAL;
	}
	OPENSSL_cleanse(c->buf, sizeof(c->buf));
	c->bufsz = 0;
	c->sw = 1;
	return PC_SW;
}

/* One op (retried once on a fresh connection if the old one died) of
 * len bytes; advances the chaining state. 0, PC_SW (a message whose
 * first op found the daemon gone, falling back) or -errno, raised. */
static int blk_op(struct pc_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
	const struct pc_info *ci = c->ci;
	enum cc_dir dir = c->enc ? CC_ENCRYPT : CC_DECRYPT;
	uint8_t next[BLK];
	if (ci->kind == PC_CBC && !c->enc)
		memcpy(next, in + len - BLK, BLK); /* before in place */
	int err = 0;
	ERR_set_mark();
	for (int tries = 0; tries < 2; tries++) {
		err = prov_sess_open(c->p, &c->sess, ci->alg, c->key, c->keylen,
				     0);
		if (err)
			break;
		err = pio_crypt(c->p, c->sess.conn, c->sess.id, 0, dir,
				ci->ivlen ? c->iv : NULL, (unsigned)ci->ivlen,
				NULL, 0, in, out, len, NULL, 1);
		if (!err)
			break;
		prov_conn_check(c->p, c->sess.conn, err);
		if (!atomic_load(&c->sess.conn->broken))
			break;
	}
	/* Nothing of the message reached the daemon yet (it stopped or
	 * restarted before the first op): in-process, if the configuration
	 * falls back, as a message that starts while it is down does. */
	if (err && !c->blk_ran && prov_fallback(c->p, err)) {
		ERR_pop_to_mark();
		atomic_fetch_sub(&c->p->n_daemon, 1);
		return blk_fall_back(c);
	}
	ERR_clear_last_mark();
	if (err)
		return pc_op_err(c, err, "op");
	c->blk_ran = 1;
	if (ci->kind == PC_CBC)
		memcpy(c->iv, c->enc ? out + len - BLK : next, BLK);
	else
		ctr_advance(c, c->iv, len);
	return 0;
}

static int blk_crypt(struct pc_ctx *c, const uint8_t *in, uint8_t *out,
		     size_t len)
{
	while (len) {
		size_t n = len < BLK_CHUNK ? len : BLK_CHUNK;
		if (c->ci->kind == PC_CHACHA20 && n > cc20_room(c->iv))
			n = (size_t)cc20_room(c->iv);
		int err = blk_op(c, in, out, n);
		if (err)
			return err;
		in += n;
		out += n;
		len -= n;
	}
	return 0;
}

int pcb_crypt(struct pc_ctx *c, const uint8_t *in, uint8_t *out, size_t len)
{
	return blk_crypt(c, in, out, len);
}

/*
 * CTR and ChaCha20 keystream fetched ahead. A message of many small
 * updates (openssl enc's 8 KiB, an SSH-style connection's packets) would
 * cost a round trip each; from its second update on, the daemon instead
 * encrypts zeros ahead of the counter (pio_crypt_keep with no input: the
 * output is the keystream, left in the thread's arena) and updates XOR
 * from it, with no round trip until it is used up. The keystream is no
 * secret from this process, which could encrypt zeros itself, but it
 * unlocks the message: it is wiped when released, like a key.
 */
static void ks_xor(uint8_t *out, const uint8_t *in, const uint8_t *ks, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t a, b;
		memcpy(&a, in + i, 8);
		memcpy(&b, ks + i, 8);
		a ^= b;
		memcpy(out + i, &a, 8);
	}
	for (; i < n; i++)
		out[i] = in[i] ^ ks[i];
}

/* The keystream in ks_buf is used up, or the message ends: wiped and
 * given back. Where the message is (iv, num) stays; the rest of a
 * started block's keystream moves to ks, as without a fetch. */
static void ks_release(struct pc_ctx *c, unsigned bs)
{
	if (!c->ks_buf.buf)
		return;
	if (c->num)
		memcpy(c->ks, c->ks_buf.buf + c->ks_pos - c->num, bs);
	pio_kept_release(&c->ks_buf, 1);
	c->ks_pos = 0;
}

/* Everything fetched goes, the fetch under way once it is done (the
 * daemon writes into its buffer until then). */
static void ks_drop(struct pc_ctx *c, unsigned bs)
{
	ks_release(c, bs);
	if (c->ks_next.pq) {
		struct pio_kept k;
		if (pio_ks_wait(&c->ks_next, &k) == 0)
			pio_kept_release(&k, 1);
	}
}

/* Submit the next fetch, of ks_ahead bytes from where ks_buf ends, so
 * that it runs while this update XORs. Nothing when one is under way, or
 * the queue has no room (the next update fetches then). */
static void ks_prefetch(struct pc_ctx *c, unsigned bs)
{
	if (c->ks_next.pq || !c->ks_buf.buf || !c->ks_ahead)
		return;
	memcpy(c->ks_next_iv, c->ks_iv, BLK);
	ctr_advance(c, c->ks_next_iv, c->ks_buf.len);
	size_t want = c->ks_ahead;
	if (c->ci->kind == PC_CHACHA20 && want > cc20_room(c->ks_next_iv))
		want = (size_t)cc20_room(c->ks_next_iv);
	want = want / bs * bs;
	if (!want ||
	    pio_ks_submit(c->p, c->sess.conn, c->sess.id, c->ks_next_iv,
			  (unsigned)c->ci->ivlen, want, &c->ks_next))
		return;
	if (c->ks_ahead < KS_MAX)
		c->ks_ahead *= 2;
}

/* Keystream into ks_buf, from iv on: the fetch under way, or a new one
 * of ks_ahead bytes waited for. 0, or -errno with nothing raised (the
 * caller goes on without). */
static int ks_fill(struct pc_ctx *c, unsigned bs)
{
	const struct pc_info *ci = c->ci;
	if (!c->ks_next.pq) {
		ERR_set_mark();
		int err = prov_sess_open(c->p, &c->sess, ci->alg, c->key,
					 c->keylen, 0);
		if (!err) {
			size_t want = c->ks_ahead;
			if (ci->kind == PC_CHACHA20 && want > cc20_room(c->iv))
				want = (size_t)cc20_room(c->iv);
			want = want / bs * bs;
			memcpy(c->ks_next_iv, c->iv, BLK);
			err = want ? pio_ks_submit(c->p, c->sess.conn,
						   c->sess.id, c->iv,
						   (unsigned)ci->ivlen, want,
						   &c->ks_next)
				   : -ERANGE;
		}
		ERR_pop_to_mark(); /* the op path says what went wrong */
		if (err)
			return err;
	}
	int err = pio_ks_wait(&c->ks_next, &c->ks_buf);
	if (err)
		return err < 0 ? err : -EIO;
	c->blk_ran = 1;
	memcpy(c->ks_iv, c->ks_next_iv, BLK);
	c->ks_pos = 0;
	return 0;
}

/* Up to n bytes through the fetched keystream; iv and num follow. */
static size_t ks_use(struct pc_ctx *c, uint8_t *out, const uint8_t *in,
		     size_t n, unsigned bs)
{
	size_t left = c->ks_buf.len - c->ks_pos;
	if (n > left)
		n = left;
	ks_xor(out, in, c->ks_buf.buf + c->ks_pos, n);
	c->ks_pos += n;
	c->num = (unsigned)(c->ks_pos % bs);
	memcpy(c->iv, c->ks_iv, BLK);
	ctr_advance(c, c->iv, (c->ks_pos + bs - 1) / bs * bs);
	if (c->ks_pos == c->ks_buf.len)
		ks_release(c, bs); /* used up, at a block's end */
	return n;
}

/* CTR and ChaCha20: stream ciphers over blocks of bs bytes. */
static int ctr_update(struct pc_ctx *c, uint8_t *out, const uint8_t *in,
		      size_t inl, unsigned bs)
{
	size_t i = 0;
	for (;;) {
		if (c->ks_buf.buf) {
			ks_prefetch(c, bs);
			i += ks_use(c, out + i, in + i, inl - i, bs);
		}
		/* The rest of the last block's keystream first. */
		for (; c->num && !c->ks_buf.buf && i < inl; i++) {
			out[i] = in[i] ^ c->ks[c->num];
			c->num = (c->num + 1) % bs;
		}
		if (i == inl)
			return 0;
		/* A fetch under way, or less than a fetch's worth left after
		 * an update that went to the daemon directly: keystream, and
		 * round again. */
		if ((c->ks_next.pq ||
		     (c->ks_ahead && inl - i < c->ks_ahead && !c->num)) &&
		    !ks_fill(c, bs))
			continue;
		break;
	}
	/* This update's blocks to the daemon directly; the next update
	 * fetches ahead. */
	if (!c->ks_ahead)
		c->ks_ahead = KS_MIN;
	size_t full = (inl - i) / bs * bs;
	int err = full ? blk_crypt(c, in + i, out + i, full) : 0;
	if (err)
		return err;
	i += full;
	size_t rem = inl - i;
	if (!rem)
		return 0;
	/* A whole block of zero-padded input: its output XOR that input is
	 * the block's keystream, kept for the next call. */
	uint8_t blk[CC20_BLK] = { 0 }, o[CC20_BLK];
	memcpy(blk, in + i, rem);
	err = blk_crypt(c, blk, o, bs);
	if (!err) {
		for (unsigned j = 0; j < bs; j++)
			c->ks[j] = o[j] ^ blk[j];
		memcpy(out + i, o, rem);
		c->num = (unsigned)rem;
	}
	OPENSSL_cleanse(blk, sizeof(blk));
	OPENSSL_cleanse(o, sizeof(o));
	return err;
}

static int too_small(struct pc_ctx *c)
{
	PROV_ERR(c->p, PROV_R_BAD_PARAM, "output buffer too small");
	return -ENOBUFS;
}

/* CBC and ECB: whole blocks out, the partial one buffered; decrypting
 * with padding, the last whole block is held back for final. */
static int block_update(struct pc_ctx *c, uint8_t *out, size_t *outl,
			size_t outsize, const uint8_t *in, size_t inl)
{
	size_t total = c->bufsz + inl, nout;
	if (!c->enc && c->pad)
		nout = total ? (total - 1) / BLK * BLK : 0;
	else
		nout = total / BLK * BLK;
	if (nout == 0) {
		memcpy(c->buf + c->bufsz, in, inl);
		c->bufsz += inl;
		return 0;
	}
	if (outsize < nout)
		return too_small(c);
	/* The tail stays back; copy it aside first, out may be in. */
	size_t tailn = total - nout;
	uint8_t tail[BLK];
	memcpy(tail, in + inl - tailn, tailn);
	size_t done = 0, from = 0;
	int err = 0;
	if (c->bufsz) {
		from = BLK - c->bufsz;
		memcpy(c->buf + c->bufsz, in, from);
		err = blk_crypt(c, c->buf, out, BLK);
		done = BLK;
	}
	if (!err && nout > done)
		err = blk_crypt(c, in + from, out + done, nout - done);
	if (!err) {
		memcpy(c->buf, tail, tailn);
		c->bufsz = tailn;
		*outl = nout;
	}
	OPENSSL_cleanse(tail, sizeof(tail));
	return err;
}

int pcb_update(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl)
{
	const struct pc_info *ci = c->ci;
	*outl = 0;
	if (!pc_keyed(c))
		return -EINVAL;
	if (ci->kind == PC_XTS && (inl < BLK || inl > XTS_UNIT_MAX)) {
		PROV_ERR(c->p, PROV_R_BAD_PARAM,
			 "XTS: a data unit of %zu bytes (16 .. 16 MiB)", inl);
		return -EINVAL;
	}
	if (inl == 0)
		return 0;
	if (!c->started) {
		int r = pc_begin(c, inl, 0);
		if (r)
			return r; /* -errno, or PC_SW */
	}
	int err;
	switch (ci->kind) {
	case PC_XTS:
		if (outsize < inl)
			return too_small(c);
		err = blk_op(c, in, out, inl);
		break;
	case PC_CTR:
	case PC_CHACHA20:
		if (outsize < inl)
			return too_small(c);
		err = ctr_update(c, out, in, inl,
				 ci->kind == PC_CTR ? BLK : CC20_BLK);
		break;
	default:
		return block_update(c, out, outl, outsize, in, inl);
	}
	if (!err)
		*outl = inl;
	return err;
}

/* PKCS#7 padding of the decrypted last block: its length, or 0 when it
 * is not valid, without branching on the plaintext. */
static unsigned pad_len(const uint8_t *b)
{
	unsigned n = b[BLK - 1], bad = (n - 1u) >> 31 | (BLK - n) >> 31;
	for (unsigned i = 0; i < BLK; i++) {
		/* in the padding (i < n): the byte must be n */
		unsigned in_pad = (i - n) >> 31;
		bad |= in_pad & ((b[BLK - 1 - i] ^ n) != 0);
	}
	return bad ? 0 : n;
}

int pcb_final(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize)
{
	*outl = 0;
	if (c->ci->kind == PC_CTR || c->ci->kind == PC_XTS ||
	    c->ci->kind == PC_CHACHA20)
		return 0;
	if (!pc_keyed(c))
		return -EINVAL;
	if (c->tls_version) { /* records are whole updates */
		PROV_ERR(c->p, PROV_R_STATE, "final in TLS record mode");
		return -EINVAL;
	}
	if (!c->pad) {
		if (!c->bufsz)
			return 0;
		PROV_ERR(c->p, PROV_R_BAD_PARAM,
			 "wrong final block length (no padding)");
		return -EINVAL;
	}
	if (!c->started) {
		int r = pc_begin(c, BLK, 0);
		if (r)
			return r;
	}
	if (c->enc) {
		/* PKCS#7: n bytes of value n complete the last block. */
		unsigned n = BLK - (unsigned)c->bufsz;
		memset(c->buf + c->bufsz, (int)n, n);
		if (outsize < BLK)
			return too_small(c);
		int err = blk_crypt(c, c->buf, out, BLK);
		if (err)
			return err;
		c->bufsz = 0;
		*outl = BLK;
		return 0;
	}
	if (c->bufsz != BLK) {
		PROV_ERR(c->p, PROV_R_BAD_DECRYPT, "wrong final block length");
		return -EINVAL;
	}
	uint8_t o[BLK];
	int err = blk_crypt(c, c->buf, o, BLK);
	c->bufsz = 0;
	unsigned n = err ? 0 : pad_len(o);
	if (!err && !n) {
		PROV_ERR(c->p, PROV_R_BAD_DECRYPT, "bad padding");
		err = -EBADMSG;
	}
	if (!err && outsize < BLK - n)
		err = too_small(c);
	if (!err) {
		memcpy(out, o, BLK - n);
		*outl = BLK - n;
	}
	OPENSSL_cleanse(o, sizeof(o));
	return err;
}

static unsigned ks_block(const struct pc_ctx *c)
{
	return c->ci->kind == PC_CHACHA20 ? CC20_BLK : BLK;
}

/* The message ends (final, a new key or IV, free): its keystream goes. */
static void pcb_reset(struct pc_ctx *c)
{
	ks_drop(c, ks_block(c));
	c->ks_ahead = 0;
}

/* The copy gets where the message is, and the started block's keystream,
 * not the fetched buffer: it fetches its own. */
static int pcb_dup(struct pc_ctx *dst, const struct pc_ctx *src)
{
	if (src->ks_buf.buf && src->num)
		memcpy(dst->ks, src->ks_buf.buf + src->ks_pos - src->num,
		       ks_block(src));
	return 0;
}

const struct pc_mode pc_mode_block = {
	.update = pcb_update,
	.final = pcb_final,
	.reset = pcb_reset,
	.dup = pcb_dup,
};
