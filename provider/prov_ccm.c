/* SPDX-License-Identifier: MIT */
/*
 * AES-CCM. EVP's CCM is one-shot already: the tag length and the nonce
 * length before the key, the message length (update with no input and no
 * output) before the AAD, then exactly one data update, which encrypts
 * and makes the tag or decrypts and verifies it. So a CCM message is one
 * op: no stream, nothing held in the daemon between calls.
 */
#include "prov_cipher.h"
#include "prov_mode.h"

#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

enum { CCM_TAG_DEFAULT = 12, CCM_IV_DEFAULT = 7 };

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

int pcc_update(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl)
{
	*outl = 0;
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
	    !OSSL_PARAM_set_size_t(p, 0))
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
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD))) {
		PROV_ERR(c->p, PROV_R_UNSUPPORTED, "CCM TLS records");
		return 0;
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
