/* SPDX-License-Identifier: MIT */
/*
 * Ciphers: the table of what the provider offers, each context's life
 * (new, free, dup, init), the parameters OpenSSL 3.0's default provider
 * offers for each, and the in-process path (min_size, fallback) on the
 * default provider's implementation.
 *
 * A message (init to final) takes its path at its first piece: the
 * daemon, or swctx when it is below min_size or the daemon cannot serve
 * it and fallback = default. The path never changes mid-message.
 */
#include "prov_cipher.h"
#include "prov_mode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>

/* ---- Context life ---- */

static void *pc_new(void *provctx, const struct pc_info *ci)
{
	struct pc_ctx *c = OPENSSL_zalloc(sizeof(*c));
	if (!c) {
		PROV_ERR(provctx, PROV_R_NOMEM, "cipher context");
		return NULL;
	}
	c->p = provctx;
	c->ci = ci;
	c->keylen = ci->keylen;
	c->ivlen = ci->ivlen;
	c->pad = 1;
	if (ci->ops->newctx)
		ci->ops->newctx(c);
	return c;
}

static void pc_free(void *vctx)
{
	struct pc_ctx *c = vctx;
	if (!c)
		return;
	pc_end(c);
	prov_sess_close(&c->sess);
	EVP_CIPHER_CTX_free(c->swctx);
	EVP_CIPHER_free(c->swcipher);
	OPENSSL_clear_free(c->aad, c->aad_cap);
	OPENSSL_clear_free(c, sizeof(*c));
}

static void *pc_dup(void *vctx)
{
	const struct pc_ctx *src = vctx;
	struct pc_ctx *c = OPENSSL_malloc(sizeof(*c));
	if (!c) {
		PROV_ERR(src->p, PROV_R_NOMEM, "cipher context");
		return NULL;
	}
	memcpy(c, src, sizeof(*c));
	/* What the copy must not share: it makes its own session from
	 * the key on first use, its own in-process context, AAD, stream. */
	memset(&c->sess, 0, sizeof(c->sess));
	c->swctx = NULL;
	c->swcipher = NULL;
	c->aad = NULL;
	c->aad_cap = 0;
	c->st = NULL;
	c->st_conn = NULL;
	memset(&c->kept, 0, sizeof(c->kept)); /* pca_dup copies it */
	/* src's keystream, fetched and under way; see pcb_dup */
	memset(&c->ks_buf, 0, sizeof(c->ks_buf));
	memset(&c->ks_next, 0, sizeof(c->ks_next));
	c->ks_pos = 0;
	if (src->swcipher && EVP_CIPHER_up_ref(src->swcipher))
		c->swcipher = src->swcipher;
	if (src->started && src->sw && src->tls_version && !src->enc &&
	    src->tls_mac_size) {
		/* OpenSSL 3.0's copy shares the opened record's MAC buffer
		 * and both copies free it. */
		PROV_ERR(
			src->p, PROV_R_UNSUPPORTED,
			"duplicating a TLS CBC context on the default provider");
		goto err;
	}
	if (src->started && src->sw) {
		c->swctx = EVP_CIPHER_CTX_new();
		if (!c->swctx || !EVP_CIPHER_CTX_copy(c->swctx, src->swctx))
			goto err;
	}
	if (src->ci->ops->dup && src->ci->ops->dup(c, src))
		goto err;
	return c;
err:
	pc_free(c);
	return NULL;
}

static int pc_init(void *vctx, const unsigned char *key, size_t keylen,
		   const unsigned char *iv, size_t ivlen,
		   const OSSL_PARAM params[], int enc);
static int pc_set_ctx_params(void *vctx, const OSSL_PARAM params[]);

static int pc_einit(void *vctx, const unsigned char *key, size_t keylen,
		    const unsigned char *iv, size_t ivlen,
		    const OSSL_PARAM params[])
{
	return pc_init(vctx, key, keylen, iv, ivlen, params, 1);
}

static int pc_dinit(void *vctx, const unsigned char *key, size_t keylen,
		    const unsigned char *iv, size_t ivlen,
		    const OSSL_PARAM params[])
{
	return pc_init(vctx, key, keylen, iv, ivlen, params, 0);
}

static int pc_init(void *vctx, const unsigned char *key, size_t keylen,
		   const unsigned char *iv, size_t ivlen,
		   const OSSL_PARAM params[], int enc)
{
	struct pc_ctx *c = vctx;
	const struct pc_info *ci = c->ci;
	if (c->enc != enc && c->sess.id)
		prov_sess_close(&c->sess); /* XTS and CBC keys differ per dir */
	c->enc = enc;
	pc_end(c);
	if (key) {
		if (keylen != ci->keylen) {
			PROV_ERR(c->p, PROV_R_BAD_PARAM,
				 "key length %zu, expected %zu", keylen,
				 ci->keylen);
			return 0;
		}
		if (ci->kind == PC_XTS && enc &&
		    !CRYPTO_memcmp(key, key + keylen / 2, keylen / 2)) {
			PROV_ERR(c->p, PROV_R_BAD_PARAM,
				 "XTS: the two key halves are equal");
			return 0;
		}
		/* The same key again (openssl speed, evp_test and many
		 * programs re-init with it per message): keep its session
		 * rather than pay two control round trips. */
		if (!c->key_set || keylen != c->keylen ||
		    CRYPTO_memcmp(c->key, key, keylen)) {
			prov_sess_close(&c->sess);
			OPENSSL_cleanse(c->key, sizeof(c->key));
			memcpy(c->key, key, keylen);
		}
		c->keylen = keylen;
		c->key_set = 1;
	}
	if (iv && ci->ivlen) {
		if (ci->flags & PC_F_AEAD) {
			if (ivlen == 0 || ivlen > PC_IV_MAX ||
			    (ci->kind == PC_CHACHAPOLY && ivlen > 12) ||
			    (ci->kind == PC_CCM && ivlen != c->ivlen)) {
				PROV_ERR(c->p, PROV_R_BAD_PARAM,
					 "IV length %zu", ivlen);
				return 0;
			}
			c->ivlen = ivlen;
		} else if (ivlen != ci->ivlen) {
			PROV_ERR(c->p, PROV_R_BAD_PARAM,
				 "IV length %zu, expected %zu", ivlen,
				 ci->ivlen);
			return 0;
		}
		memcpy(c->oiv, iv, c->ivlen);
		memcpy(c->iv, iv, c->ivlen);
		c->iv_set = 1;
	}
	if (ci->ops->init && ci->ops->init(c, key != NULL, iv != NULL))
		return 0;
	return pc_set_ctx_params(c, params);
}

/* ---- Data ---- */

static int sw_update(struct pc_ctx *c, unsigned char *out, size_t *outl,
		     const unsigned char *in, size_t inl)
{
	int n = 0;
	if (inl > INT_MAX) {
		PROV_ERR(c->p, PROV_R_UNSUPPORTED, "update over 2 GiB");
		return 0;
	}
	if (!EVP_CipherUpdate(c->swctx, out, &n, in, (int)inl))
		return 0;
	*outl = (size_t)n;
	return 1;
}

static int pc_update(void *vctx, unsigned char *out, size_t *outl,
		     size_t outsize, const unsigned char *in, size_t inl)
{
	struct pc_ctx *c = vctx;
	*outl = 0;
	if (c->started && c->sw)
		return sw_update(c, out, outl, in, inl);
	/* A CBC context with tls-version set takes whole records. */
	int r = c->tls_version
			? pct_update(c, out, outl, outsize, in, inl)
			: c->ci->ops->update(c, out, outl, outsize, in, inl);
	if (r == PC_SW) /* the message just went in-process */
		return sw_update(c, out, outl, in, inl);
	return r == 0;
}

static int pc_final(void *vctx, unsigned char *out, size_t *outl,
		    size_t outsize)
{
	struct pc_ctx *c = vctx;
	*outl = 0;
	if (c->started && c->sw) {
		int n = 0;
		if (!EVP_CipherFinal_ex(c->swctx, out, &n))
			return 0;
		*outl = (size_t)n;
		return 1;
	}
	if (!c->ci->ops->final)
		return 1; /* the data update did it all */
	int r = c->ci->ops->final(c, out, outl, outsize);
	if (r == PC_SW)
		return pc_final(c, out, outl, outsize);
	return r == 0;
}

static int pc_cipher(void *vctx, unsigned char *out, size_t *outl,
		     size_t outsize, const unsigned char *in, size_t inl)
{
	struct pc_ctx *c = vctx;
	if (c->ci->ops->cipher)
		return c->ci->ops->cipher(c, out, outl, outsize, in, inl) == 0;
	if (!in)
		return pc_final(c, out, outl, outsize);
	int r = pc_update(c, out, outl, outsize, in, inl);
	if (r && c->ci->ops->cipher_whole)
		*outl = inl;
	return r;
}

/* ---- Parameters ---- */

static int pc_get_params(const struct pc_info *ci, OSSL_PARAM params[])
{
	OSSL_PARAM *p;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_MODE)) &&
	    !OSSL_PARAM_set_uint(p, ci->mode))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_KEYLEN)) &&
	    !OSSL_PARAM_set_size_t(p, ci->keylen))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_IVLEN)) &&
	    !OSSL_PARAM_set_size_t(p, ci->ivlen))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_BLOCK_SIZE)) &&
	    !OSSL_PARAM_set_size_t(p, ci->blocksize))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_AEAD)) &&
	    !OSSL_PARAM_set_int(p, (ci->flags & PC_F_AEAD) != 0))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_CUSTOM_IV)) &&
	    !OSSL_PARAM_set_int(p, (ci->flags & PC_F_CUSTOM_IV) != 0))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_CTS)) &&
	    !OSSL_PARAM_set_int(p, 0))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK)) &&
	    !OSSL_PARAM_set_int(p, 0))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_HAS_RAND_KEY)) &&
	    !OSSL_PARAM_set_int(p, 0))
		return 0;
	return 1;
}

static const OSSL_PARAM pc_gettable[] = {
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
	OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL),
	OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
	OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, NULL),
	OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, NULL),
	OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, NULL),
	OSSL_PARAM_END
};

static const OSSL_PARAM *pc_gettable_params(void *provctx)
{
	return pc_gettable;
}

/* What the default provider's generic ciphers get and set (TLS records:
 * CBC only, prov_tls.c). */
static const OSSL_PARAM pc_gettable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
	OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, NULL, 0),
	OSSL_PARAM_END
};
static const OSSL_PARAM pc_settable_ctx[] = {
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, NULL), OSSL_PARAM_END
};
static const OSSL_PARAM pc_xts_settable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL), OSSL_PARAM_END
};
static const OSSL_PARAM pca_gcm_gettable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, NULL,
				0),
	OSSL_PARAM_END
};
static const OSSL_PARAM pca_gcm_settable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, NULL,
				0),
	OSSL_PARAM_END
};
static const OSSL_PARAM pca_cp_gettable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, NULL),
	OSSL_PARAM_END
};
static const OSSL_PARAM pca_cp_settable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, 0),
	OSSL_PARAM_END
};

static const OSSL_PARAM pcc_settable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, 0),
	OSSL_PARAM_END
};
static const OSSL_PARAM *pcc_settable_ctx_params(void *vctx, void *provctx)
{
	return pcc_settable_ctx;
}

static const OSSL_PARAM *pc_gettable_ctx_params(void *vctx, void *provctx)
{
	return pc_gettable_ctx;
}
static const OSSL_PARAM *pc_settable_ctx_params(void *vctx, void *provctx)
{
	return pc_settable_ctx;
}
static const OSSL_PARAM *pc_xts_settable_ctx_params(void *vctx, void *provctx)
{
	return pc_xts_settable_ctx;
}
static const OSSL_PARAM *pca_gcm_gettable_ctx_params(void *vctx, void *provctx)
{
	return pca_gcm_gettable_ctx;
}
static const OSSL_PARAM *pca_gcm_settable_ctx_params(void *vctx, void *provctx)
{
	return pca_gcm_settable_ctx;
}
static const OSSL_PARAM *pca_cp_gettable_ctx_params(void *vctx, void *provctx)
{
	return pca_cp_gettable_ctx;
}
static const OSSL_PARAM *pca_cp_settable_ctx_params(void *vctx, void *provctx)
{
	return pca_cp_settable_ctx;
}

static int pc_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct pc_ctx *c = vctx;
	OSSL_PARAM *p;
	if (c->ci->ops->get_ctx_params)
		return c->ci->ops->get_ctx_params(c, params);
	if (c->started && c->sw)
		return EVP_CIPHER_CTX_get_params(c->swctx, params);
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_KEYLEN)) &&
	    !OSSL_PARAM_set_size_t(p, c->keylen))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_IVLEN)) &&
	    !OSSL_PARAM_set_size_t(p, c->ivlen))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_PADDING)) &&
	    !OSSL_PARAM_set_uint(p, c->pad))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_NUM)) &&
	    !OSSL_PARAM_set_uint(p, c->num))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_IV)) &&
	    !OSSL_PARAM_set_octet_string(p, c->oiv, c->ivlen))
		return 0;
	if ((p = prov_param(params, OSSL_CIPHER_PARAM_UPDATED_IV)) &&
	    !OSSL_PARAM_set_octet_string(p, c->iv, c->ivlen))
		return 0;
	return pct_get_ctx_params(c, params);
}

static int pc_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct pc_ctx *c = vctx;
	const OSSL_PARAM *p;
	if (!params)
		return 1;
	if (c->ci->ops->set_ctx_params)
		return c->ci->ops->set_ctx_params(c, params);
	/* Kept here on either path: a reinit may bring the daemon back. */
	if (!pct_set_ctx_params(c, params))
		return 0;
	if (c->started && c->sw)
		return EVP_CIPHER_CTX_set_params(c->swctx, params);
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_PADDING))) {
		unsigned v;
		if (!OSSL_PARAM_get_uint(p, &v))
			goto bad;
		c->pad = v ? 1 : 0;
	}
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_NUM))) {
		unsigned v;
		/* The keystream of a block the daemon made is not here to
		 * move around in: only the position it is at is taken. */
		if (!OSSL_PARAM_get_uint(p, &v) || v != c->num) {
			PROV_ERR(c->p, PROV_R_UNSUPPORTED, "setting num");
			return 0;
		}
	}
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_KEYLEN))) {
		size_t v;
		if (!OSSL_PARAM_get_size_t(p, &v) || v != c->ci->keylen)
			goto bad;
	}
	return 1;
bad:
	PROV_ERR(c->p, PROV_R_BAD_PARAM, "%s", p->key);
	return 0;
}

/* ---- The table ---- */

/* The mode's context parameters: what OpenSSL may get and set. */
#define PC_PARAMS_GENERIC pc_gettable_ctx_params, pc_settable_ctx_params
#define PC_PARAMS_GCM pca_gcm_gettable_ctx_params, pca_gcm_settable_ctx_params
#define PC_PARAMS_XTS pc_gettable_ctx_params, pc_xts_settable_ctx_params
#define PC_PARAMS_CCM pca_gcm_gettable_ctx_params, pcc_settable_ctx_params
#define PC_PARAMS_CP pca_cp_gettable_ctx_params, pca_cp_settable_ctx_params

/*
 * One row per cipher the provider offers: X(id, OpenSSL's names and
 * OIDs (so that fetches by any of them find us), kind, cc_alg, EVP mode,
 * key bytes, IV bytes, block size, flags, its context parameters
 * (PC_PARAMS_*)). The info, the dispatch table and the algorithm list
 * below are all made from it: a cipher is one row here.
 */
/* clang-format off */
#define PC_CIPHERS(X)                                                          \
	X(aes128gcm, "AES-128-GCM:id-aes128-GCM:2.16.840.1.101.3.4.1.6",       \
	  PC_GCM, CC_ALG_AES_GCM, EVP_CIPH_GCM_MODE, 16, 12, 1,                \
	  PC_F_AEAD | PC_F_CUSTOM_IV, PC_PARAMS_GCM)                           \
	X(aes192gcm, "AES-192-GCM:id-aes192-GCM:2.16.840.1.101.3.4.1.26",      \
	  PC_GCM, CC_ALG_AES_GCM, EVP_CIPH_GCM_MODE, 24, 12, 1,                \
	  PC_F_AEAD | PC_F_CUSTOM_IV, PC_PARAMS_GCM)                           \
	X(aes256gcm, "AES-256-GCM:id-aes256-GCM:2.16.840.1.101.3.4.1.46",      \
	  PC_GCM, CC_ALG_AES_GCM, EVP_CIPH_GCM_MODE, 32, 12, 1,                \
	  PC_F_AEAD | PC_F_CUSTOM_IV, PC_PARAMS_GCM)                           \
	X(aes128cbc, "AES-128-CBC:AES128:2.16.840.1.101.3.4.1.2",              \
	  PC_CBC, CC_ALG_AES_CBC, EVP_CIPH_CBC_MODE, 16, 16, 16, 0,            \
	  PC_PARAMS_GENERIC)                                                   \
	X(aes192cbc, "AES-192-CBC:AES192:2.16.840.1.101.3.4.1.22",             \
	  PC_CBC, CC_ALG_AES_CBC, EVP_CIPH_CBC_MODE, 24, 16, 16, 0,            \
	  PC_PARAMS_GENERIC)                                                   \
	X(aes256cbc, "AES-256-CBC:AES256:2.16.840.1.101.3.4.1.42",             \
	  PC_CBC, CC_ALG_AES_CBC, EVP_CIPH_CBC_MODE, 32, 16, 16, 0,            \
	  PC_PARAMS_GENERIC)                                                   \
	X(aes128ecb, "AES-128-ECB:2.16.840.1.101.3.4.1.1",                     \
	  PC_ECB, CC_ALG_AES_ECB, EVP_CIPH_ECB_MODE, 16, 0, 16, 0,             \
	  PC_PARAMS_GENERIC)                                                   \
	X(aes192ecb, "AES-192-ECB:2.16.840.1.101.3.4.1.21",                    \
	  PC_ECB, CC_ALG_AES_ECB, EVP_CIPH_ECB_MODE, 24, 0, 16, 0,             \
	  PC_PARAMS_GENERIC)                                                   \
	X(aes256ecb, "AES-256-ECB:2.16.840.1.101.3.4.1.41",                    \
	  PC_ECB, CC_ALG_AES_ECB, EVP_CIPH_ECB_MODE, 32, 0, 16, 0,             \
	  PC_PARAMS_GENERIC)                                                   \
	X(aes128ctr, "AES-128-CTR",                                            \
	  PC_CTR, CC_ALG_AES_CTR, EVP_CIPH_CTR_MODE, 16, 16, 1, 0,             \
	  PC_PARAMS_GENERIC)                                                   \
	X(aes192ctr, "AES-192-CTR",                                            \
	  PC_CTR, CC_ALG_AES_CTR, EVP_CIPH_CTR_MODE, 24, 16, 1, 0,             \
	  PC_PARAMS_GENERIC)                                                   \
	X(aes256ctr, "AES-256-CTR",                                            \
	  PC_CTR, CC_ALG_AES_CTR, EVP_CIPH_CTR_MODE, 32, 16, 1, 0,             \
	  PC_PARAMS_GENERIC)                                                   \
	X(aes128xts, "AES-128-XTS:1.3.111.2.1619.0.1.1",                       \
	  PC_XTS, CC_ALG_AES_XTS, EVP_CIPH_XTS_MODE, 32, 16, 1,                \
	  PC_F_CUSTOM_IV, PC_PARAMS_XTS)                                       \
	X(aes256xts, "AES-256-XTS:1.3.111.2.1619.0.1.2",                       \
	  PC_XTS, CC_ALG_AES_XTS, EVP_CIPH_XTS_MODE, 64, 16, 1,                \
	  PC_F_CUSTOM_IV, PC_PARAMS_XTS)                                       \
	X(aes128ccm, "AES-128-CCM:id-aes128-CCM:2.16.840.1.101.3.4.1.7",       \
	  PC_CCM, CC_ALG_AES_CCM, EVP_CIPH_CCM_MODE, 16, 12, 1,                \
	  PC_F_AEAD | PC_F_CUSTOM_IV, PC_PARAMS_CCM)                           \
	X(aes192ccm, "AES-192-CCM:id-aes192-CCM:2.16.840.1.101.3.4.1.27",      \
	  PC_CCM, CC_ALG_AES_CCM, EVP_CIPH_CCM_MODE, 24, 12, 1,                \
	  PC_F_AEAD | PC_F_CUSTOM_IV, PC_PARAMS_CCM)                           \
	X(aes256ccm, "AES-256-CCM:id-aes256-CCM:2.16.840.1.101.3.4.1.47",      \
	  PC_CCM, CC_ALG_AES_CCM, EVP_CIPH_CCM_MODE, 32, 12, 1,                \
	  PC_F_AEAD | PC_F_CUSTOM_IV, PC_PARAMS_CCM)                           \
	X(chacha20, "ChaCha20",                                                \
	  PC_CHACHA20, CC_ALG_CHACHA20, 0, 32, 16, 1,                          \
	  PC_F_CUSTOM_IV, PC_PARAMS_XTS)                                       \
	X(chachapoly, "ChaCha20-Poly1305",                                     \
	  PC_CHACHAPOLY, CC_ALG_CHACHA20_POLY1305, EVP_CIPH_STREAM_CIPHER,     \
	  32, 12, 1, PC_F_AEAD | PC_F_CUSTOM_IV, PC_PARAMS_CP)
/* clang-format on */

/* A row's mode table: CCM's, the other AEADs', or the block modes'. */
#define PC_MODE_OF(kind, fl)                                                   \
	((kind) == PC_CCM   ? &pc_mode_ccm                                     \
	 : ((fl)&PC_F_AEAD) ? &pc_mode_aead                                    \
			    : &pc_mode_block)

/* From each row: its info, constructor and get_params. */
#define PC_INFO(id, names_, kind_, alg_, mode_, klen, ivl, bs, fl, ...)        \
	static const struct pc_info pci_##id = {                               \
		.names = names_,                                               \
		.kind = kind_,                                                 \
		.alg = alg_,                                                   \
		.mode = mode_,                                                 \
		.keylen = klen,                                                \
		.ivlen = ivl,                                                  \
		.blocksize = bs,                                               \
		.flags = fl,                                                   \
		.ops = PC_MODE_OF(kind_, fl),                                  \
	};                                                                     \
	static void *pc_new_##id(void *provctx)                                \
	{                                                                      \
		return pc_new(provctx, &pci_##id);                             \
	}                                                                      \
	static int pc_get_params_##id(OSSL_PARAM params[])                     \
	{                                                                      \
		return pc_get_params(&pci_##id, params);                       \
	}
PC_CIPHERS(PC_INFO)
#undef PC_INFO

#define FN(id, f)                                                              \
	{                                                                      \
		id, (void (*)(void))f                                          \
	}
#define PC_COMMON(id)                                                          \
	FN(OSSL_FUNC_CIPHER_NEWCTX, pc_new_##id),                              \
		FN(OSSL_FUNC_CIPHER_FREECTX, pc_free),                         \
		FN(OSSL_FUNC_CIPHER_DUPCTX, pc_dup),                           \
		FN(OSSL_FUNC_CIPHER_ENCRYPT_INIT, pc_einit),                   \
		FN(OSSL_FUNC_CIPHER_DECRYPT_INIT, pc_dinit),                   \
		FN(OSSL_FUNC_CIPHER_UPDATE, pc_update),                        \
		FN(OSSL_FUNC_CIPHER_FINAL, pc_final),                          \
		FN(OSSL_FUNC_CIPHER_CIPHER, pc_cipher),                        \
		FN(OSSL_FUNC_CIPHER_GET_PARAMS, pc_get_params_##id),           \
		FN(OSSL_FUNC_CIPHER_GETTABLE_PARAMS, pc_gettable_params),      \
		FN(OSSL_FUNC_CIPHER_GET_CTX_PARAMS, pc_get_ctx_params),        \
		FN(OSSL_FUNC_CIPHER_SET_CTX_PARAMS, pc_set_ctx_params)
/* ...its dispatch table (the context parameters: the last two
 * columns, which PC_PARAMS_* spell as two). */
#define PC_DISPATCH_(id, gettable, settable)                                   \
	static const OSSL_DISPATCH pcd_##id[] = {                              \
		PC_COMMON(id),                                                 \
		FN(OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, gettable),            \
		FN(OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, settable),            \
		{ 0, NULL }                                                    \
	};
#define PC_DISPATCH(id, names, kind, alg, mode, klen, ivl, bs, fl, ...)        \
	PC_DISPATCH_(id, __VA_ARGS__)
PC_CIPHERS(PC_DISPATCH)
#undef PC_DISPATCH

/* ...and its entry in the provider's list. */
#define PC_ALG(id, names, ...) { names, "provider=cryptod", pcd_##id, NULL },
const OSSL_ALGORITHM prov_ciphers[] = {
	PC_CIPHERS(PC_ALG){ NULL, NULL, NULL, NULL },
};
#undef PC_ALG
