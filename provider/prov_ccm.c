/* SPDX-License-Identifier: MIT */
/*
 * AES-CCM. EVP's CCM is one-shot already: the tag length and the nonce
 * length before the key, the message length (update with no input and no
 * output) before the AAD, then exactly one data update, which encrypts
 * and makes the tag or decrypts and verifies it. So a CCM message is one
 * op: no stream, nothing held in the daemon between calls.
 *
 * TLS 1.2 CCM records (RFC 6655, 7251; libssl's AES-CCM and AES-CCM8
 * suites) are one op each as well: the tlsaad parameter (the record
 * header), then one update of a whole record in place, explicit nonce ||
 * data || tag. The nonce is the 4-byte fixed part (tlsivfixed) and the
 * 8 explicit bytes, which a sealer takes from the header's sequence
 * number, as OpenSSL's default provider does.
 */
#include "prov_cipher.h"
#include "prov_mode.h"

#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

enum {
	CCM_TAG_DEFAULT = 12,
	CCM_IV_DEFAULT = 7,
	CCM_TLS_FIXED = 4,
	CCM_TLS_EXPLICIT = 8,
	CCM_TLS_IV = CCM_TLS_FIXED + CCM_TLS_EXPLICIT,
};

void pcc_initctx(struct pc_ctx *c)
{
	c->ivlen = CCM_IV_DEFAULT; /* L = 8 */
	c->ccm_m = CCM_TAG_DEFAULT;
}

/* The in-process path: the same CCM calls, replayed. */
static int ccm_sw(struct pc_ctx *c, size_t len)
{
	int n, err = pc_sw_begin(c, NULL, 0);
	if (err)
		return err;
	if (!EVP_CipherUpdate(c->swctx, NULL, &n, NULL, (int)len) ||
	    (c->aad_len &&
	     !EVP_CipherUpdate(c->swctx, NULL, &n, c->aad, (int)c->aad_len)))
		return -EINVAL;
	c->started = c->sw = 1;
	return PC_SW;
}

/* A TLS record in-process: below min_size, or the daemon's fallback. */
static int tls_sw(struct pc_ctx *c, const uint8_t *iv, unsigned iv_len,
		  const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag)
{
	(void)iv; /* c->iv, as pc_sw_begin takes CCM's */
	(void)iv_len;
	if (!c->enc) /* pc_sw_begin sets the context's */
		memcpy(c->tag, tag, c->ccm_m);
	int n, ok = !pc_sw_begin(c, NULL, 0) &&
		    EVP_CipherUpdate(c->swctx, NULL, &n, NULL, (int)len) &&
		    EVP_CipherUpdate(c->swctx, NULL, &n, c->tls_aad,
				     PC_TLS_AAD_LEN) &&
		    EVP_CipherUpdate(c->swctx, out, &n, in, (int)len);
	if (ok && c->enc) {
		OSSL_PARAM t[] = { OSSL_PARAM_construct_octet_string(
					   OSSL_CIPHER_PARAM_AEAD_TAG, tag,
					   c->ccm_m),
				   OSSL_PARAM_END };
		ok = EVP_CIPHER_CTX_get_params(c->swctx, t);
	}
	return ok ? 0 : CC_ERR_AUTH_FAILED;
}

static int tls_record(struct pc_ctx *c, uint8_t *out, size_t *outl,
		      const uint8_t *in, size_t len)
{
	c->tls_aad_len = 0; /* one record per tlsaad, as OpenSSL */
	if (!c->key_set || out != in || c->ivlen != CCM_TLS_IV ||
	    len < CCM_TLS_EXPLICIT + c->ccm_m) {
		PROV_ERR(c->p, PROV_R_BAD_PARAM, "CCM TLS record of %zu bytes",
			 len);
		return -EINVAL;
	}
	if (c->enc) /* the explicit nonce: the record's sequence number */
		memcpy(out, c->tls_aad, CCM_TLS_EXPLICIT);
	memcpy(c->iv + CCM_TLS_FIXED, in, CCM_TLS_EXPLICIT);
	size_t plen = len - CCM_TLS_EXPLICIT - c->ccm_m;
	uint8_t *data = out + CCM_TLS_EXPLICIT;
	uint8_t tag[PC_TAG_MAX];
	if (!c->enc)
		memcpy(tag, data + plen, c->ccm_m);
	int err = pc_record_op(c, (unsigned)c->ccm_m, c->iv, CCM_TLS_IV, data,
			       data, plen, tag, tls_sw);
	if (err) {
		if (!c->enc)
			OPENSSL_cleanse(data, plen);
		return pc_op_err(c, err, "TLS record");
	}
	if (c->enc)
		memcpy(data + plen, tag, c->ccm_m);
	*outl = c->enc ? len : plen;
	return 0;
}

/* The tlsaad parameter: the record header, its length corrected for the
 * explicit nonce and, opening, the tag; a sealer leaves room for the tag
 * (tlsaadpad). 0 if refused. */
static int tls_aad_set(struct pc_ctx *c, const OSSL_PARAM *p)
{
	const uint8_t *aad = p->data;
	size_t n = p->data_size;
	if (p->data_type != OSSL_PARAM_OCTET_STRING || n != PC_TLS_AAD_LEN)
		return 0;
	size_t len = (size_t)aad[n - 2] << 8 | aad[n - 1];
	size_t cut = CCM_TLS_EXPLICIT + (c->enc ? 0 : c->ccm_m);
	if (len < cut)
		return 0;
	len -= cut;
	memcpy(c->tls_aad, aad, n);
	c->tls_aad[n - 2] = (uint8_t)(len >> 8);
	c->tls_aad[n - 1] = (uint8_t)len;
	c->tls_aad_len = n;
	c->tls_aad_pad = c->ccm_m;
	return 1;
}

int pcc_update(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl)
{
	*outl = 0;
	if (out && c->tls_aad_len)
		return tls_record(c, out, outl, in, inl);
	if (!c->key_set || !c->iv_set) {
		PROV_ERR(c->p, PROV_R_STATE, "CCM: no key or IV set");
		return -EINVAL;
	}
	if (!out && !in) { /* the message length, up front */
		c->ccm_len = inl;
		c->ccm_len_set = 1;
		*outl = inl;
		return 0;
	}
	if (!out) { /* AAD, which needs the length first */
		if ((!c->ccm_len_set && inl) || c->data_seen ||
		    c->aad_len + inl > CRD_AAD_MAX) {
			PROV_ERR(c->p, PROV_R_STATE,
				 "CCM: AAD before the message length, after "
				 "the data, or over 65535 bytes");
			return -EINVAL;
		}
		if (c->aad_len + inl > c->aad_cap) {
			uint8_t *b = OPENSSL_clear_realloc(c->aad, c->aad_cap,
							   CRD_AAD_MAX);
			if (!b)
				return -ENOMEM;
			c->aad = b;
			c->aad_cap = CRD_AAD_MAX;
		}
		memcpy(c->aad + c->aad_len, in, inl);
		c->aad_len += inl;
		*outl = inl;
		return 0;
	}
	if (c->data_seen || (c->ccm_len_set && inl != c->ccm_len) ||
	    (!c->enc && !c->taglen)) {
		PROV_ERR(c->p, PROV_R_STATE,
			 "CCM: one data update of the announced length, the "
			 "tag set first when decrypting");
		return -EINVAL;
	}
	if (outsize < inl) {
		PROV_ERR(c->p, PROV_R_BAD_PARAM, "output buffer too small");
		return -ENOBUFS;
	}
	/* The message's path, chosen here: it is the whole message. */
	int r = pc_begin(c, inl, (unsigned)c->ccm_m);
	if (r < 0)
		return r;
	if (r == PC_SW)
		return ccm_sw(c, inl);
	uint8_t tag[PC_TAG_MAX];
	if (!c->enc)
		memcpy(tag, c->tag, c->ccm_m);
	int err = pio_crypt(c->p, c->sess.conn, c->sess.id, (unsigned)c->ccm_m,
			    c->enc ? CC_ENCRYPT : CC_DECRYPT, c->iv,
			    (unsigned)c->ivlen, c->aad, c->aad_len, in, out,
			    inl, tag, 1);
	c->data_seen = 1;
	c->ccm_len_set = 0;
	if (err)
		return pc_op_err(c, err, "CCM");
	if (c->enc) {
		memcpy(c->tag, tag, c->ccm_m);
		c->taglen = c->ccm_m; /* gettable now */
	} else {
		c->taglen = 0; /* once: the next message sets its own */
	}
	*outl = inl;
	return 0;
}

int pcc_get_ctx_params(struct pc_ctx *c, OSSL_PARAM params[])
{
	OSSL_PARAM *p;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_KEYLEN)) &&
	    !OSSL_PARAM_set_size_t(p, c->keylen))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_IVLEN)) &&
	    !OSSL_PARAM_set_size_t(p, c->ivlen))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_AEAD_TAGLEN)) &&
	    !OSSL_PARAM_set_size_t(p, c->ccm_m))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD)) &&
	    !OSSL_PARAM_set_size_t(p, c->tls_aad_pad))
		return 0;
	const char *ivs[] = { OSSL_CIPHER_PARAM_IV,
			      OSSL_CIPHER_PARAM_UPDATED_IV };
	for (unsigned i = 0; i < 2; i++)
		if ((p = prov_param(params, ivs[i])) &&
		    (p->data_size < c->ivlen ||
		     !OSSL_PARAM_set_octet_string(p, c->iv, c->ivlen)))
			return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_AEAD_TAG))) {
		if (!c->enc || !c->taglen || p->data_size != c->ccm_m) {
			PROV_ERR(c->p, PROV_R_STATE, "CCM: no tag to get");
			return 0;
		}
		if (!OSSL_PARAM_set_octet_string(p, c->tag, c->ccm_m))
			return 0;
		c->taglen = 0; /* as OpenSSL: one message per IV */
		c->iv_set = 0;
	}
	return 1;
}

int pcc_set_ctx_params(struct pc_ctx *c, const OSSL_PARAM params[])
{
	const OSSL_PARAM *p;
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_AEAD_TAG))) {
		size_t sz = p->data_size;
		if (p->data_type != OSSL_PARAM_OCTET_STRING || (sz & 1) ||
		    sz < 4 || sz > 16)
			goto bad;
		if (p->data) {
			if (c->enc) {
				PROV_ERR(c->p, PROV_R_STATE,
					 "a tag is not set when encrypting");
				return 0;
			}
			memcpy(c->tag, p->data, sz);
			c->taglen = sz;
		}
		c->ccm_m = sz;
	}
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_AEAD_IVLEN))) {
		size_t sz;
		if (!OSSL_PARAM_get_size_t(p, &sz) || sz < 7 || sz > 13)
			goto bad;
		c->ivlen = sz;
	}
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD)) &&
	    !tls_aad_set(c, p))
		goto bad;
	/* The nonce's fixed part; each record brings the rest. */
	if ((p = prov_param_const(params,
				  OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED))) {
		if (p->data_type != OSSL_PARAM_OCTET_STRING ||
		    p->data_size != CCM_TLS_FIXED)
			goto bad;
		memcpy(c->iv, p->data, CCM_TLS_FIXED);
	}
	return 1;
bad:
	PROV_ERR(c->p, PROV_R_BAD_PARAM, "%s", p->key);
	return 0;
}

/* A new key or IV: the next message gives its length again. */
static int pcc_init(struct pc_ctx *c, int key_changed, int iv_changed)
{
	(void)key_changed;
	(void)iv_changed;
	c->ccm_len_set = 0;
	return 0;
}

/* In-process, the fallback context answers, as for the other AEADs. */
static int pcc_get_params(struct pc_ctx *c, OSSL_PARAM params[])
{
	return c->started && c->sw ? pca_get_ctx_params(c, params)
				   : pcc_get_ctx_params(c, params);
}

static int pcc_set_params(struct pc_ctx *c, const OSSL_PARAM params[])
{
	return c->started && c->sw ? pca_set_ctx_params(c, params)
				   : pcc_set_ctx_params(c, params);
}

const struct pc_mode pc_mode_ccm = {
	.newctx = pcc_initctx,
	.init = pcc_init,
	.update = pcc_update,
	.get_ctx_params = pcc_get_params,
	.set_ctx_params = pcc_set_params,
	.reset = pca_reset,
	.dup = pca_dup,
	.cipher_whole = 1,
};
