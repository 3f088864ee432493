/* SPDX-License-Identifier: MIT */
/*
 * AES-GCM and ChaCha20-Poly1305. Most messages arrive in one data update
 * (every TLS 1.3 record, every EVP one-shot, openssl speed): that update
 * runs the whole message as ONE daemon op, with the IV and the AAD
 * buffered until then, and final needs no round trip:
 *  - encryption: the op makes the ciphertext and the tag; the ciphertext
 *    stays in the thread's arena until final. If a second update comes
 *    instead, the message goes on as a daemon stream: the kept
 *    ciphertext is decrypted back (its tag verifies it) and replayed as
 *    the stream's first piece, its output dropped;
 *  - decryption with the tag set before the data (as libssl and
 *    openssl speed do): the op verifies it. A tag that verifies over
 *    the first update proves that update was the whole message. One
 *    that does not means a forgery or more data to come: that update
 *    then runs again as a stream's first piece, and final decides.
 * Messages of several updates, decryptions whose tag comes last, and
 * messages longer than the arena takes are daemon streams (on the
 * thread's queue, prov_io.c), closed at final, where the daemon makes or
 * checks the tag. TLS 1.2 records (the tlsaad parameter, then one update
 * of a whole record, in place) are one op each.
 *
 * A decrypting stream's session is made with the tag length known at
 * its first piece (16 if none was set yet); a shorter tag set later is
 * verified at final as that many bytes of the tag. The daemon takes every
 * GCM IV length OpenSSL does (1..128 bytes) and AAD up to 65535 bytes;
 * longer AAD, or a tag length it has not (daemon_limits), is left to the
 * default provider with fallback = default, else refused.
 */
#include "prov_cipher.h"
#include "prov_mode.h"

#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/rand.h>

enum { PCA_EARLY_NONE, PCA_EARLY_ENC, PCA_EARLY_DEC };
/* early_op: not run as one op, take a stream (PC_SW is 1). */
enum { EARLY_STREAM = 2 };

enum {
	GCM_TLS_FIXED = 4,
	GCM_TLS_EXPLICIT = 8,
	TAG_LEN = 16,
	CP_NONCE = 12,
};

void pca_reset(struct pc_ctx *c)
{
	pio_kept_release(&c->kept, 0); /* ciphertext */
	c->early = PCA_EARLY_NONE;
	pio_stream_free(c->st);
	c->st = NULL;
	prov_conn_put(c->st_conn);
	c->st_conn = NULL;
	if (c->aad)
		OPENSSL_cleanse(c->aad, c->aad_len);
	c->aad_len = 0;
	c->data_seen = 0;
}

int pca_dup(struct pc_ctx *dst, const struct pc_ctx *src)
{
	/* A message that ran as one op: the copy gets its own session (it
	 * may go on: early_resume) and its own copy of the ciphertext. */
	if (src->kept.buf) {
		int err = prov_sess_open(dst->p, &dst->sess, dst->ci->alg,
					 dst->key, dst->keylen, TAG_LEN);
		if (!err)
			err = pio_kept_dup(&src->kept, &dst->kept);
		if (err) {
			dst->early = PCA_EARLY_NONE;
			PROV_ERR(src->p, PROV_R_OP,
				 "duplicating an AEAD context: %s",
				 cc_strerror(err));
			return err;
		}
	}
	if (src->st) {
		/* Mid-message: the daemon copies the running GHASH/Poly1305
		 * state into a stream of the copy's own session (same key),
		 * on the source's connection and queue. */
		int err = prov_sess_open(dst->p, &dst->sess, dst->ci->alg,
					 dst->key, dst->keylen,
					 src->sess.tag_len);
		if (!err && dst->sess.conn != pio_stream_conn(src->st))
			err = -EPIPE; /* the source's connection is gone */
		if (!err)
			err = pio_stream_dup(src->st, dst->sess.id, &dst->st);
		if (err) {
			dst->st = NULL;
			PROV_ERR(src->p, PROV_R_OP,
				 "duplicating an AEAD context mid-message: %s",
				 cc_strerror(err));
			return err;
		}
		atomic_fetch_add(&dst->sess.conn->refs, 1);
		dst->st_conn = dst->sess.conn;
	}
	if (src->aad_len) {
		dst->aad = OPENSSL_memdup(src->aad, src->aad_len);
		if (!dst->aad)
			return -ENOMEM;
		dst->aad_cap = src->aad_len;
	}
	return 0;
}

int pca_init(struct pc_ctx *c, int key_changed, int iv_changed)
{
	if (c->ci->kind == PC_GCM) {
		if (iv_changed) {
			c->iv_gen_rand = 0;
			c->iv_state = IV_BUFFERED;
		}
		if (key_changed)
			c->tls_enc_records = 0;
	} else if (key_changed || iv_changed) {
		c->tls_payload = 0;
		c->tls_aad_len = 0;
	}
	return 0;
}

/* The IV the daemon takes: the message's. */
static unsigned daemon_iv(const struct pc_ctx *c, const uint8_t *iv,
			  uint8_t *out)
{
	/* ChaCha20-Poly1305's is 12 bytes, as OpenSSL 3.0 takes it (the
	 * IV-length setter refuses any other: no padding to do). */
	memcpy(out, iv, c->ivlen);
	return (unsigned)c->ivlen;
}

/* Why the daemon cannot take this message as it stands, or 0. */
static int daemon_limits(const struct pc_ctx *c, size_t aad_len)
{
	if (aad_len > CRD_AAD_MAX ||
	    (c->ci->kind == PC_GCM && c->ivlen > CC_IV_MAX))
		return -E2BIG;
	if (!c->enc && c->taglen && c->taglen != TAG_LEN &&
	    (c->ci->kind == PC_CHACHAPOLY ||
	     !(c->taglen == 4 || c->taglen == 8 || c->taglen >= 12)))
		return -EINVAL;
	return 0;
}

static int iv_ready(struct pc_ctx *c)
{
	if (c->ci->kind == PC_CHACHAPOLY) {
		if (c->iv_set) {
			memcpy(c->nonce, c->iv, c->ivlen);
			return 0;
		}
		PROV_ERR(c->p, PROV_R_STATE, "no IV set");
		return -EINVAL;
	}
	if (c->iv_state == IV_FINISHED) {
		PROV_ERR(c->p, PROV_R_STATE,
			 "GCM: the IV was used already, set a new one");
		return -EINVAL;
	}
	if (c->iv_state == IV_UNSET) {
		/* As OpenSSL: an encryption without an IV gets a random
		 * one, which the caller reads back with the iv parameter. */
		if (!c->enc || c->ivlen < 12 ||
		    prov_rand(c->p, c->iv, c->ivlen)) {
			PROV_ERR(c->p, PROV_R_STATE, "no IV set");
			return -EINVAL;
		}
		c->iv_state = IV_BUFFERED;
		c->iv_gen_rand = 1;
	}
	if (c->iv_state == IV_BUFFERED) {
		memcpy(c->nonce, c->iv, c->ivlen);
		c->iv_state = IV_COPIED;
	}
	return 0;
}

static int iv_reused(struct pc_ctx *c)
{
	PROV_ERR(c->p, PROV_R_STATE,
		 "GCM: the IV was used already, set a new one");
	return -EINVAL;
}

/* The message's path, at its first data piece (len bytes) or at final:
 * 0 the daemon (its session open with tag_len), PC_SW in-process, or
 * -errno. */
static int msg_path(struct pc_ctx *c, size_t len, unsigned tag_len)
{
	if (!c->key_set) {
		PROV_ERR(c->p, PROV_R_STATE, "no key set");
		return -EINVAL;
	}
	int err = iv_ready(c);
	if (err)
		return err;
	int lim = daemon_limits(c, c->aad_len);
	if (lim && !c->started) {
		if (!prov_small(c->p, len) && !prov_fallback(c->p, lim)) {
			PROV_ERR(c->p, PROV_R_UNSUPPORTED,
				 "%s: IV %zu, AAD %zu, tag %zu bytes",
				 c->ci->names, c->ivlen, c->aad_len, c->taglen);
			return lim;
		}
		err = pc_sw_begin(c, c->aad, c->aad_len);
		if (err)
			return err;
		c->started = c->sw = 1;
		return PC_SW;
	}
	err = pc_begin(c, len, tag_len);
	if (err)
		return err; /* -errno, or PC_SW */
	/* The daemon's session may be an older one of another tag length
	 * (a context reused for another message). */
	err = prov_sess_open(c->p, &c->sess, c->ci->alg, c->key, c->keylen,
			     tag_len);
	if (err)
		PROV_ERR(c->p, PROV_R_SESSION, "tag length %u: %s", tag_len,
			 cc_strerror(err));
	return err;
}

/* Open the message's daemon stream (its path chosen and its session
 * open): 0, PC_SW (it falls back in-process) or -errno. */
static int msg_stream(struct pc_ctx *c)
{
	uint8_t iv[PC_IV_MAX];
	struct cc_stream_params sp = {
		.session = c->sess.id,
		.dir = c->enc ? CC_ENCRYPT : CC_DECRYPT,
		.iv = iv,
		.iv_len = daemon_iv(c, c->nonce, iv),
		.aad = c->aad,
		.aad_len = c->aad_len,
	};
	int err = pio_stream_open(c->p, c->sess.conn, &sp, c->sess.tag_len,
				  &c->st);
	if (err) {
		c->st = NULL;
		if (!prov_fallback(c->p, err))
			return pc_op_err(c, err, "stream");
		int e = pc_sw_begin(c, c->aad, c->aad_len);
		if (e)
			return e;
		c->sw = 1;
		return PC_SW;
	}
	atomic_fetch_add(&c->sess.conn->refs, 1);
	c->st_conn = c->sess.conn;
	return 0;
}

/* The tag length a message's session takes: a decryption's, when set. */
static unsigned msg_tag_len(const struct pc_ctx *c)
{
	return (!c->enc && c->taglen) ? (unsigned)c->taglen : TAG_LEN;
}

/* Start the message as a daemon stream at len bytes (or at final):
 * 0, PC_SW or -errno. */
static int msg_begin(struct pc_ctx *c, size_t len)
{
	int err = msg_path(c, len, msg_tag_len(c));
	return err ? err : msg_stream(c);
}

/*
 * The first data update as the whole message, one op. 0 done;
 * EARLY_STREAM not done (the caller takes a stream: no room in the arena,
 * or a decryption whose tag did not verify over this update); else the
 * op's error (< 0), not raised.
 */
static int early_op(struct pc_ctx *c, const uint8_t *in, uint8_t *out,
		    size_t len)
{
	uint8_t iv[PC_IV_MAX];
	unsigned iv_len = daemon_iv(c, c->nonce, iv);
	int err;
	if (c->enc) {
		uint8_t tag[TAG_LEN];
		err = pio_crypt_keep(c->p, c->sess.conn, c->sess.id, TAG_LEN,
				     CC_ENCRYPT, iv, iv_len, c->aad, c->aad_len,
				     in, out, len, tag, &c->kept);
		if (err == -ENOMEM)
			return EARLY_STREAM;
		if (err)
			return err;
		memcpy(c->tag, tag, TAG_LEN);
		c->taglen = TAG_LEN;
		c->early = PCA_EARLY_ENC;
		return 0;
	}
	uint8_t tag[TAG_LEN];
	memcpy(tag, c->tag, c->taglen);
	/* A failure must leave out alone: it may be in, which the stream
	 * then reads again. */
	err = pio_crypt(c->p, c->sess.conn, c->sess.id, (unsigned)c->taglen,
			CC_DECRYPT, iv, iv_len, c->aad, c->aad_len, in, out,
			len, tag, PIO_WRITES_IF_OK);
	if (err == CC_ERR_AUTH_FAILED || err == -ENOMEM)
		return EARLY_STREAM; /* a forgery or more to come; no room */
	if (err)
		return err;
	memcpy(c->early_tag, c->tag, c->taglen);
	c->early = PCA_EARLY_DEC;
	return 0;
}

/*
 * early_op, once more on a new connection when the daemon went away
 * under the first try (nothing of the message had reached it), and
 * in-process (PC_SW) when there is none and the configuration falls
 * back: a message that starts while the daemon stops or restarts is
 * served, as one that starts while it is down. Returns as early_op, or
 * PC_SW, or -errno raised.
 */
static int early_run(struct pc_ctx *c, const uint8_t *in, uint8_t *out,
		     size_t len)
{
	int r = early_op(c, in, out, len);
	if (r < 0) {
		if (!prov_conn_check(c->p, c->sess.conn, r))
			return pc_op_err(c, r, "update");
		ERR_set_mark();
		int e = prov_sess_open(c->p, &c->sess, c->ci->alg, c->key,
				       c->keylen, msg_tag_len(c));
		if (e && prov_fallback(c->p, e)) {
			ERR_pop_to_mark();
			atomic_fetch_sub(&c->p->n_daemon, 1);
			e = pc_sw_begin(c, c->aad, c->aad_len);
			if (e)
				return e;
			c->sw = 1;
			return PC_SW;
		}
		ERR_clear_last_mark();
		if (e)
			return pc_op_err(c, e, "update");
		r = early_op(c, in, out, len);
		if (r < 0)
			return pc_op_err(c, r, "update");
	}
	return r;
}

/*
 * A second data update after an encryption ran as one op: the message
 * goes on as a stream. Its first piece is the kept ciphertext decrypted
 * back (the tag made for it verifies it), replayed with its output
 * dropped, so the stream's state is where the message is.
 */
static int early_resume(struct pc_ctx *c)
{
	uint8_t iv[PC_IV_MAX], tag[TAG_LEN];
	unsigned iv_len = daemon_iv(c, c->nonce, iv);
	uint8_t *buf = c->kept.buf;
	size_t len = c->kept.len;
	memcpy(tag, c->tag, TAG_LEN);
	c->early = PCA_EARLY_NONE;
	int err = pio_crypt(c->p, c->sess.conn, c->sess.id, TAG_LEN, CC_DECRYPT,
			    iv, iv_len, c->aad, c->aad_len, buf, buf, len, tag,
			    1);
	if (!err)
		err = msg_stream(c);
	if (err == PC_SW) {
		PROV_ERR(c->p, PROV_R_OP,
			 "the daemon's stream for a message that goes on "
			 "could not be made");
		err = -EIO;
	}
	if (!err) {
		size_t n;
		err = pio_stream_update(c->st, buf, len, NULL, &n);
		if (err)
			err = pc_op_err(c, err, "update");
	} else if (err > 0 || err == -EPIPE) {
		err = pc_op_err(c, err, "update");
	}
	pio_kept_release(&c->kept, 0);
	c->taglen = 0;
	return err;
}

static int tls_record(struct pc_ctx *c, uint8_t *out, size_t *outl,
		      const uint8_t *in, size_t len);

static int aad_add(struct pc_ctx *c, const uint8_t *in, size_t inl)
{
	if (c->data_seen) {
		PROV_ERR(c->p, PROV_R_STATE, "AAD after data");
		return -EINVAL;
	}
	if (inl > SIZE_MAX / 2 - c->aad_len)
		return -E2BIG;
	if (c->aad_len + inl > c->aad_cap) {
		size_t cap = (c->aad_len + inl) * 2;
		uint8_t *n = OPENSSL_clear_realloc(c->aad, c->aad_cap, cap);
		if (!n) {
			PROV_ERR(c->p, PROV_R_NOMEM, "AAD");
			return -ENOMEM;
		}
		c->aad = n;
		c->aad_cap = cap;
	}
	if (inl)
		memcpy(c->aad + c->aad_len, in, inl);
	c->aad_len += inl;
	return 0;
}

int pca_update(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl)
{
	*outl = 0;
	if (out && (c->tls_aad_len || c->tls_payload))
		return tls_record(c, out, outl, in, inl);
	if (!out) {
		int err = aad_add(c, in, inl);
		if (!err)
			*outl = inl;
		return err;
	}
	if (inl == 0)
		return 0;
	if (outsize < inl) {
		PROV_ERR(c->p, PROV_R_BAD_PARAM, "output buffer too small");
		return -ENOBUFS;
	}
	if (c->early == PCA_EARLY_ENC) {
		int r = early_resume(c);
		if (r)
			return r;
	} else if (c->early == PCA_EARLY_DEC) {
		/* The tag verified over the first update alone: the message
		 * was whole, or a sender that MACed a prefix. */
		PROV_ERR(c->p, PROV_R_STATE,
			 "more data after the message's tag verified");
		return -EINVAL;
	}
	if (!c->st) {
		if (c->started && c->ci->kind == PC_GCM)
			return iv_reused(c);
		int r = msg_path(c, inl, msg_tag_len(c));
		if (r)
			return r;
		/* One op for the whole message, where it can be. */
		if (c->enc || c->taglen) {
			r = early_run(c, in, out, inl);
			if (r != EARLY_STREAM) {
				c->data_seen = r != PC_SW;
				*outl = r ? 0 : inl;
				return r;
			}
		}
		r = msg_stream(c);
		if (r)
			return r;
	}
	c->data_seen = 1;
	size_t n = 0;
	int err = pio_stream_update(c->st, in, inl, out, &n);
	if (err)
		return pc_op_err(c, err, "update");
	*outl = n;
	return 0;
}

/* The end of a message that ran as one op: nothing left to ask the
 * daemon. A decryption checks that the tag is still the one it verified
 * (a caller may set another before final). */
static int early_final(struct pc_ctx *c)
{
	int dec_ok = c->early == PCA_EARLY_DEC &&
		     CRYPTO_memcmp(c->early_tag, c->tag, c->taglen) == 0;
	int enc = c->early == PCA_EARLY_ENC;
	pio_kept_release(&c->kept, 0); /* ciphertext */
	c->early = PCA_EARLY_NONE;
	c->aad_len = 0;
	c->data_seen = 0;
	if (c->ci->kind == PC_GCM)
		c->iv_state = IV_FINISHED; /* never twice under one IV */
	if (enc || dec_ok)
		return 0;
	return pc_op_err(c, CC_ERR_AUTH_FAILED, "final");
}

int pca_final(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize)
{
	*outl = 0;
	if (c->tls_aad_len || c->tls_payload) {
		PROV_ERR(c->p, PROV_R_STATE, "final in TLS record mode");
		return -EINVAL;
	}
	if (!c->enc && !c->taglen) {
		PROV_ERR(c->p, PROV_R_STATE, "no tag set");
		return -EINVAL;
	}
	if (c->early)
		return early_final(c);
	if (!c->st) {
		if (c->started && c->ci->kind == PC_GCM)
			return iv_reused(c);
		int r = msg_begin(c, 0);
		if (r)
			return r;
	}
	/* A decryption's tag set after its first data update may be shorter
	 * than its stream's session takes: the daemon verifies that many
	 * bytes. */
	uint8_t tag[TAG_LEN];
	memcpy(tag, c->tag, sizeof(tag));
	size_t n = 0;
	int err = pio_stream_final(c->st, out, &n, tag,
				   c->enc ? 0 : (unsigned)c->taglen);
	pio_stream_free(c->st);
	c->st = NULL;
	prov_conn_put(c->st_conn);
	c->st_conn = NULL;
	c->aad_len = 0;
	c->data_seen = 0;
	if (c->ci->kind == PC_GCM)
		c->iv_state = IV_FINISHED; /* never twice under one IV */
	if (err)
		return pc_op_err(c, err, "final");
	if (c->enc) {
		memcpy(c->tag, tag, TAG_LEN);
		c->taglen = TAG_LEN;
	}
	*outl = n;
	return 0;
}

int pca_cipher(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl)
{
	if (c->started && c->sw) {
		int r = EVP_Cipher(c->swctx, out, in, (unsigned)inl);
		if (r < 0)
			return -EINVAL;
		*outl = (size_t)r;
		return 0;
	}
	int r = in ? pca_update(c, out, outl, outsize, in, inl)
		   : pca_final(c, out, outl, outsize);
	if (r == PC_SW)
		return pca_cipher(c, out, outl, outsize, in, inl);
	/* As the default provider's: the whole input counts as done. */
	if (r == 0 && in && c->ci->kind == PC_GCM)
		*outl = inl;
	return r;
}

/* ---- TLS 1.2 records ---- */

/* One AEAD op in-process: a TLS record below min_size, or fallback. */
static int sw_oneshot(struct pc_ctx *c, const uint8_t *iv, unsigned iv_len,
		      const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag)
{
	uint8_t saved_nonce[PC_IV_MAX];
	size_t saved_ivlen = c->ivlen, saved_tag = c->taglen;
	uint8_t saved_t[TAG_LEN];
	memcpy(saved_nonce, c->nonce, sizeof(saved_nonce));
	memcpy(saved_t, c->tag, TAG_LEN);
	memcpy(c->nonce, iv, iv_len);
	c->ivlen = iv_len;
	if (!c->enc) {
		memcpy(c->tag, tag, TAG_LEN);
		c->taglen = TAG_LEN;
	}
	int outl, ok = !pc_sw_begin(c, c->tls_aad, PC_TLS_AAD_LEN) &&
		       EVP_CipherUpdate(c->swctx, out, &outl, in, (int)len) &&
		       EVP_CipherFinal_ex(c->swctx, out + outl, &outl);
	if (ok && c->enc) {
		OSSL_PARAM t[] = { OSSL_PARAM_construct_octet_string(
					   OSSL_CIPHER_PARAM_AEAD_TAG, tag,
					   TAG_LEN),
				   OSSL_PARAM_END };
		ok = EVP_CIPHER_CTX_get_params(c->swctx, t);
	}
	memcpy(c->nonce, saved_nonce, sizeof(saved_nonce));
	memcpy(c->tag, saved_t, TAG_LEN);
	c->ivlen = saved_ivlen;
	c->taglen = saved_tag;
	return ok ? 0 : CC_ERR_AUTH_FAILED;
}

static int tls_record(struct pc_ctx *c, uint8_t *out, size_t *outl,
		      const uint8_t *in, size_t len)
{
	uint8_t iv[PC_IV_MAX];
	unsigned iv_len;
	size_t plen;
	const uint8_t *pin;
	uint8_t *pout;
	int err;
	if (!c->key_set)
		goto bad;
	if (c->ci->kind == PC_GCM) {
		c->tls_aad_len = 0; /* one record per tlsaad, as OpenSSL */
		if (out != in || len < GCM_TLS_EXPLICIT + TAG_LEN || !c->iv_gen)
			goto bad;
		if (c->enc) {
			if (++c->tls_enc_records == 0)
				goto bad;
			/* The explicit IV is the invocation field. */
			memcpy(out, c->iv + c->ivlen - GCM_TLS_EXPLICIT,
			       GCM_TLS_EXPLICIT);
			memcpy(iv, c->iv, c->ivlen);
			for (int i = (int)c->ivlen - 1;
			     i >= (int)c->ivlen - 8 && !++c->iv[i]; i--)
				;
		} else {
			memcpy(c->iv + c->ivlen - GCM_TLS_EXPLICIT, in,
			       GCM_TLS_EXPLICIT);
			memcpy(iv, c->iv, c->ivlen);
		}
		iv_len = (unsigned)c->ivlen;
		c->iv_state = IV_FINISHED;
		pin = in + GCM_TLS_EXPLICIT;
		pout = out + GCM_TLS_EXPLICIT;
		plen = len - GCM_TLS_EXPLICIT - TAG_LEN;
	} else {
		plen = c->tls_payload;
		c->tls_payload = 0;
		c->tls_aad_len = 0; /* one record per tlsaad */
		if (len != plen + TAG_LEN || !c->iv_set)
			goto bad;
		/* RFC 7905: the nonce XOR the record's sequence number. */
		iv_len = daemon_iv(c, c->iv, iv);
		for (unsigned i = 0; i < 8; i++)
			iv[4 + i] ^= c->tls_aad[i];
		pin = in;
		pout = out;
	}
	uint8_t tag[TAG_LEN];
	if (!c->enc)
		memcpy(tag, pin + plen, TAG_LEN);
	err = pc_record_op(c, TAG_LEN, iv, iv_len, pin, pout, plen, tag,
			   sw_oneshot);
	if (err) {
		if (!c->enc)
			OPENSSL_cleanse(pout, plen);
		return pc_op_err(c, err, "TLS record");
	}
	if (c->enc)
		memcpy(pout + plen, tag, TAG_LEN);
	*outl = c->enc ? len : plen;
	return 0;
bad:
	PROV_ERR(c->p, PROV_R_BAD_PARAM, "TLS record of %zu bytes", len);
	return -EINVAL;
}

/* The tlsaad parameter: the record header, its length corrected for the
 * explicit IV and the tag. Returns the tag bytes to leave room for. */
static size_t tls_aad_set(struct pc_ctx *c, const uint8_t *aad, size_t n)
{
	if (n != PC_TLS_AAD_LEN)
		return 0;
	memcpy(c->tls_aad, aad, n);
	size_t len = (size_t)aad[n - 2] << 8 | aad[n - 1];
	if (c->ci->kind == PC_GCM) {
		if (len < GCM_TLS_EXPLICIT)
			return 0;
		len -= GCM_TLS_EXPLICIT;
	}
	if (!c->enc) {
		if (len < TAG_LEN)
			return 0;
		len -= TAG_LEN;
	}
	if (c->ci->kind == PC_GCM || !c->enc) {
		c->tls_aad[n - 2] = (uint8_t)(len >> 8);
		c->tls_aad[n - 1] = (uint8_t)len;
	}
	/* In TLS record mode until the record: tls_aad_len says so (an
	 * empty record's tls_payload is 0). */
	c->tls_aad_len = n;
	if (c->ci->kind == PC_CHACHAPOLY)
		c->tls_payload = len;
	return TAG_LEN;
}

static int tls_fixed_set(struct pc_ctx *c, const uint8_t *iv, size_t len)
{
	if (c->ci->kind == PC_CHACHAPOLY) {
		if (len != CP_NONCE)
			return -EINVAL;
		memcpy(c->iv, iv, CP_NONCE);
		c->ivlen = CP_NONCE;
		c->iv_set = 1;
		return 0;
	}
	if (len == (size_t)-1) { /* the whole IV */
		memcpy(c->iv, iv, c->ivlen);
	} else {
		if (len < GCM_TLS_FIXED || len > c->ivlen ||
		    c->ivlen - len < GCM_TLS_EXPLICIT)
			return -EINVAL;
		memcpy(c->iv, iv, len);
		if (c->enc && prov_rand(c->p, c->iv + len, c->ivlen - len))
			return -EINVAL;
		if (c->enc)
			c->iv_gen_rand = 1;
	}
	c->iv_gen = 1;
	c->iv_state = IV_BUFFERED;
	return 0;
}

/* ---- Parameters ---- */

int pca_get_ctx_params(struct pc_ctx *c, OSSL_PARAM params[])
{
	OSSL_PARAM *p;
	if (c->started && c->sw)
		return EVP_CIPHER_CTX_get_params(c->swctx, params);
	int gcm = c->ci->kind == PC_GCM;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_KEYLEN)) &&
	    !OSSL_PARAM_set_size_t(p, c->keylen))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_IVLEN)) &&
	    !OSSL_PARAM_set_size_t(p, c->ivlen))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_AEAD_TAGLEN)) &&
	    !OSSL_PARAM_set_size_t(p, c->taglen ? c->taglen : TAG_LEN))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD)) &&
	    !OSSL_PARAM_set_size_t(p, c->tls_aad_pad))
		return 0;
	const char *ivs[] = { OSSL_CIPHER_PARAM_IV,
			      OSSL_CIPHER_PARAM_UPDATED_IV };
	for (unsigned i = 0; gcm && i < 2; i++) {
		if (!(p = prov_param(params, ivs[i])))
			continue;
		if (c->iv_state == IV_UNSET &&
		    (c->tls_aad_len || !c->enc || c->ivlen < 12 ||
		     prov_rand(c->p, c->iv, c->ivlen)))
			return 0;
		if (c->iv_state == IV_UNSET) {
			c->iv_state = IV_BUFFERED;
			c->iv_gen_rand = 1;
		}
		if (p->data && p->data_size < c->ivlen)
			return 0;
		if (!OSSL_PARAM_set_octet_string(p, c->iv, c->ivlen))
			return 0;
	}
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_AEAD_TAG))) {
		size_t sz = p->data ? p->data_size : c->taglen;
		if (!c->enc || !c->taglen || sz == 0 || sz > TAG_LEN) {
			PROV_ERR(c->p, PROV_R_STATE, "no tag to get");
			return 0;
		}
		if (!OSSL_PARAM_set_octet_string(p, c->tag, sz))
			return 0;
	}
	if (gcm &&
	    (p = prov_param(params, OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN))) {
		size_t sz = p->data_size;
		if (!p->data || p->data_type != OSSL_PARAM_OCTET_STRING ||
		    !c->iv_gen || !c->key_set)
			return 0;
		if (sz == 0 || sz > c->ivlen)
			sz = c->ivlen;
		/* This message runs with the IV as it is; the next one
		 * gets the invocation field incremented. */
		memcpy(c->nonce, c->iv, c->ivlen);
		memcpy(p->data, c->iv + c->ivlen - sz, sz);
		p->return_size = sz;
		for (int i = (int)c->ivlen - 1;
		     i >= (int)c->ivlen - 8 && !++c->iv[i]; i--)
			;
		c->iv_state = IV_COPIED;
	}
	return 1;
}

int pca_set_ctx_params(struct pc_ctx *c, const OSSL_PARAM params[])
{
	const OSSL_PARAM *p;
	if (c->started && c->sw)
		return EVP_CIPHER_CTX_set_params(c->swctx, params);
	int gcm = c->ci->kind == PC_GCM;
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_AEAD_TAG))) {
		size_t sz = p->data_size;
		if (p->data_type != OSSL_PARAM_OCTET_STRING || sz == 0 ||
		    sz > TAG_LEN || (gcm && !p->data))
			goto bad;
		if (p->data) {
			if (c->enc) {
				PROV_ERR(c->p, PROV_R_STATE,
					 "a tag is not set when encrypting");
				return 0;
			}
			memcpy(c->tag, p->data, sz);
		}
		c->taglen = sz;
	}
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_AEAD_IVLEN))) {
		size_t sz;
		/* ChaCha20-Poly1305: 12 only, as OpenSSL 3.0's default
		 * provider since openssl/openssl#20151 (Debian 12's 3.0.19
		 * refuses the shorter nonces 1.1.1 zero-padded). */
		if (!OSSL_PARAM_get_size_t(p, &sz) ||
		    (gcm ? sz == 0 || sz > PC_IV_MAX : sz != CP_NONCE))
			goto bad;
		if (sz != c->ivlen && gcm && c->iv_state != IV_UNSET)
			c->iv_state = IV_FINISHED;
		c->ivlen = sz;
	}
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_KEYLEN))) {
		size_t sz;
		if (!OSSL_PARAM_get_size_t(p, &sz) || sz != c->ci->keylen)
			goto bad;
	}
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD))) {
		size_t pad;
		if (p->data_type != OSSL_PARAM_OCTET_STRING ||
		    !(pad = tls_aad_set(c, p->data, p->data_size)))
			goto bad;
		c->tls_aad_pad = pad;
	}
	if ((p = prov_param_const(params,
				  OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED))) {
		if (p->data_type != OSSL_PARAM_OCTET_STRING ||
		    tls_fixed_set(c, p->data, p->data_size))
			goto bad;
	}
	if (gcm && (p = prov_param_const(
			    params, OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV))) {
		if (!p->data || p->data_type != OSSL_PARAM_OCTET_STRING ||
		    !c->iv_gen || !c->key_set || c->enc ||
		    p->data_size > c->ivlen)
			goto bad;
		memcpy(c->iv + c->ivlen - p->data_size, p->data, p->data_size);
		memcpy(c->nonce, c->iv, c->ivlen);
		c->iv_state = IV_COPIED;
	}
	return 1;
bad:
	PROV_ERR(c->p, PROV_R_BAD_PARAM, "%s", p->key);
	return 0;
}

const struct pc_mode pc_mode_aead = {
	.init = pca_init,
	.update = pca_update,
	.final = pca_final,
	.cipher = pca_cipher,
	.get_ctx_params = pca_get_ctx_params,
	.set_ctx_params = pca_set_ctx_params,
	.reset = pca_reset,
	.dup = pca_dup,
};
