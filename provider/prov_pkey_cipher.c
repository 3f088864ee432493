/* SPDX-License-Identifier: MIT */
/*
 * RSA encryption with key pairs the daemon holds (provider-asym_cipher(7)).
 *
 * Decryption goes to the daemon, RSA-OAEP only, on the thread's queue
 * (pio_pk; an ASYNC_JOB pauses): the OAEP digest and MGF1's in the op's
 * parameters, the label in its AAD. PKCS#1 v1.5 decryption is refused:
 * its padding check is the Bleichenbacher (Marvin) oracle, and the
 * daemon has no PKCS#1 v1.5 decryption (docs/asymmetric.md). Encryption
 * stays in-process on the public key, as verifying does: nothing secret
 * is involved.
 *
 * The parameters (padding, OAEP digest, MGF1 digest, label) are kept by
 * a default-provider context on the key's public half ("shadow"), which
 * checks them as OpenSSL's RSA cipher does and encrypts; a decryption
 * reads them back from it. A key the program made itself (prov_pkey.h,
 * "own") decrypts on the shadow too, with whatever padding it asks for,
 * as the default provider would: its private half is the program's.
 */
#include "prov_pkey.h"
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/rsa.h>

struct ci_ctx {
	struct prov *p;
	struct prov_pkey *k;  /* OpenSSL's key's, not ours */
	EVP_PKEY_CTX *shadow; /* owned */
};

static void *ci_newctx(void *provctx)
{
	struct ci_ctx *c = calloc(1, sizeof(*c));
	if (c)
		c->p = provctx;
	return c;
}

static void ci_freectx(void *vctx)
{
	struct ci_ctx *c = vctx;
	if (!c)
		return;
	EVP_PKEY_CTX_free(c->shadow);
	free(c);
}

static void *ci_dupctx(void *vctx)
{
	struct ci_ctx *c = vctx, *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	*d = *c;
	d->shadow = NULL;
	if (c->shadow && !(d->shadow = EVP_PKEY_CTX_dup(c->shadow))) {
		free(d);
		return NULL;
	}
	return d;
}

static int ci_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct ci_ctx *c = vctx;
	if (!params || !params[0].key)
		return 1;
	return c->shadow ? EVP_PKEY_CTX_set_params(c->shadow, params) : 1;
}

static int ci_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct ci_ctx *c = vctx;
	return c->shadow ? EVP_PKEY_CTX_get_params(c->shadow, params) : 1;
}

/* OpenSSL's RSA cipher's parameters (providers/implementations/
 * asymciphers/rsa_enc.c), passed through to the shadow. */
static const OSSL_PARAM ci_settable[] = {
	OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST_PROPS, NULL,
			       0),
	OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST_PROPS, NULL,
			       0),
	OSSL_PARAM_octet_string(OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL, NULL, 0),
	OSSL_PARAM_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION, NULL),
	OSSL_PARAM_uint(OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION, NULL),
	OSSL_PARAM_END
};
static const OSSL_PARAM ci_gettable[] = {
	OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST, NULL, 0),
	OSSL_PARAM_octet_ptr(OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL, NULL, 0),
	OSSL_PARAM_uint(OSSL_ASYM_CIPHER_PARAM_TLS_CLIENT_VERSION, NULL),
	OSSL_PARAM_uint(OSSL_ASYM_CIPHER_PARAM_TLS_NEGOTIATED_VERSION, NULL),
	OSSL_PARAM_END
};

static const OSSL_PARAM *ci_settable_ctx_params(void *vctx, void *provctx)
{
	return ci_settable;
}

static const OSSL_PARAM *ci_gettable_ctx_params(void *vctx, void *provctx)
{
	return ci_gettable;
}

/* The shadow on key's public half (an own key's decryption: its key
 * pair), the caller's parameters set on it. */
static int ci_init(struct ci_ctx *c, void *key, const OSSL_PARAM params[],
		   int decrypt)
{
	struct prov_pkey *k = key;
	if (!k || !k->pub || !EVP_PKEY_is_a(k->pub, "RSA")) {
		PROV_ERR(c->p, PROV_R_STATE, "no RSA key");
		return 0;
	}
	c->k = k;
	EVP_PKEY_CTX_free(c->shadow);
	OSSL_LIB_CTX *l = prov_fb_libctx(c->p);
	c->shadow = l ? EVP_PKEY_CTX_new_from_pkey(l, k->pub, NULL) : NULL;
	int ok = c->shadow &&
		 (decrypt && k->own ? EVP_PKEY_decrypt_init(c->shadow)
				    : EVP_PKEY_encrypt_init(c->shadow)) == 1;
	if (!ok) {
		PROV_ERR(c->p, PROV_R_FALLBACK, "key %s: no RSA context",
			 k->name);
		return 0;
	}
	return ci_set_ctx_params(c, params);
}

static int ci_encrypt_init(void *vctx, void *key, const OSSL_PARAM params[])
{
	return ci_init(vctx, key, params, 0);
}

static int ci_decrypt_init(void *vctx, void *key, const OSSL_PARAM params[])
{
	return ci_init(vctx, key, params, 1);
}

static int ci_encrypt(void *vctx, unsigned char *out, size_t *outlen,
		      size_t outsize, const unsigned char *in, size_t inlen)
{
	struct ci_ctx *c = vctx;
	if (!c->shadow)
		return 0;
	if (out)
		*outlen = outsize;
	return EVP_PKEY_encrypt(c->shadow, out, outlen, in, inlen) == 1;
}

/* The daemon's digest number (CC_PK_MD_*: 1 + the SHA rows' order) of
 * the digest OpenSSL names; 0 for none named, 0xff for one it lacks. */
static uint8_t ci_md(struct prov *p, const char *name)
{
	if (!name[0])
		return 0;
	EVP_MD *md = prov_fb_md(p, name);
	uint8_t id = 0xff;
	for (unsigned i = 0; md && i <= CC_ALG_SHA512 - CC_ALG_SHA1; i++) {
		const char *sha = cc_alg_name((enum cc_alg)(CC_ALG_SHA1 + i));
		if (sha && EVP_MD_is_a(md, sha)) {
			id = (uint8_t)(1 + i);
			break;
		}
	}
	EVP_MD_free(md);
	return id;
}

/* The op's parameters and label from the shadow: OAEP only. */
static int ci_params(struct ci_ctx *c, struct cc_pk_params *pp,
		     const void **label, size_t *label_len)
{
	int pad = 0;
	char md[64] = "", mgf1[64] = "";
	void *l = NULL;
	size_t ll = 0;
	OSSL_PARAM q[] = {
		OSSL_PARAM_int(OSSL_ASYM_CIPHER_PARAM_PAD_MODE, &pad),
		OSSL_PARAM_utf8_string(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST, md,
				       sizeof(md)),
		OSSL_PARAM_octet_ptr(OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL, &l, 0),
		OSSL_PARAM_END
	};
	if (!EVP_PKEY_CTX_get_params(c->shadow, q))
		return 0;
	if (pad != RSA_PKCS1_OAEP_PADDING) {
		PROV_ERR(c->p, PROV_R_UNSUPPORTED,
			 "key %s: cryptod decrypts RSA-OAEP only, not %s: "
			 "PKCS#1 v1.5's padding check is a Bleichenbacher "
			 "oracle (docs/asymmetric.md)",
			 c->k->name,
			 pad == RSA_PKCS1_PADDING ? "PKCS#1 v1.5"
						  : "this padding");
		return 0;
	}
	ll = q[2].return_size;
	/* MGF1's digest, asked alone: OpenSSL 3.0 fails it when neither
	 * digest was set (then both are SHA-1, the daemon's default). */
	OSSL_PARAM m[] = { OSSL_PARAM_utf8_string(
				   OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST, mgf1,
				   sizeof(mgf1)),
			   OSSL_PARAM_END };
	ERR_set_mark();
	if (!EVP_PKEY_CTX_get_params(c->shadow, m))
		mgf1[0] = '\0';
	ERR_pop_to_mark();
	memset(pp, 0, sizeof(*pp));
	pp->pad = CC_PK_PAD_OAEP;
	pp->md = ci_md(c->p, md);
	pp->mgf1_md = ci_md(c->p, mgf1);
	if (pp->md == 0xff || pp->mgf1_md == 0xff) {
		PROV_ERR(c->p, PROV_R_UNSUPPORTED,
			 "key %s: OAEP digest %s, MGF1 %s: cryptod takes SHA-1 "
			 "and SHA-2",
			 c->k->name, md, mgf1);
		return 0;
	}
	*label = l;
	*label_len = ll;
	return 1;
}

static int ci_decrypt(void *vctx, unsigned char *out, size_t *outlen,
		      size_t outsize, const unsigned char *in, size_t inlen)
{
	struct ci_ctx *c = vctx;
	if (!c->shadow)
		return 0;
	if (c->k->own) {
		if (out)
			*outlen = outsize;
		return EVP_PKEY_decrypt(c->shadow, out, outlen, in, inlen) == 1;
	}
	if (!out) {
		*outlen = (size_t)EVP_PKEY_get_size(c->k->pub);
		return 1;
	}
	struct cc_pk_params pp;
	const void *label;
	size_t label_len;
	if (!ci_params(c, &pp, &label, &label_len))
		return 0;
	/* The daemon wants room for the row's longest output. */
	unsigned char buf[CRD_TAG_MAX > 1024 ? CRD_TAG_MAX : 1024];
	size_t n = cc_alg_tag_len(c->k->alg);
	if (!n || n > sizeof(buf))
		return 0;
	int ok = !prov_pkey_op_aad(c->k, CC_DECRYPT, &pp, in, inlen, label,
				   label_len, buf, &n);
	if (ok && n > outsize) {
		PROV_ERR(c->p, PROV_R_BAD_PARAM,
			 "plaintext of %zu bytes, room for %zu", n, outsize);
		ok = 0;
	}
	if (ok) {
		memcpy(out, buf, n);
		*outlen = n;
	}
	OPENSSL_cleanse(buf, sizeof(buf));
	return ok;
}

static const OSSL_DISPATCH ci_fns[] = {
	{ OSSL_FUNC_ASYM_CIPHER_NEWCTX, (void (*)(void))ci_newctx },
	{ OSSL_FUNC_ASYM_CIPHER_FREECTX, (void (*)(void))ci_freectx },
	{ OSSL_FUNC_ASYM_CIPHER_DUPCTX, (void (*)(void))ci_dupctx },
	{ OSSL_FUNC_ASYM_CIPHER_ENCRYPT_INIT, (void (*)(void))ci_encrypt_init },
	{ OSSL_FUNC_ASYM_CIPHER_ENCRYPT, (void (*)(void))ci_encrypt },
	{ OSSL_FUNC_ASYM_CIPHER_DECRYPT_INIT, (void (*)(void))ci_decrypt_init },
	{ OSSL_FUNC_ASYM_CIPHER_DECRYPT, (void (*)(void))ci_decrypt },
	{ OSSL_FUNC_ASYM_CIPHER_GET_CTX_PARAMS,
	  (void (*)(void))ci_get_ctx_params },
	{ OSSL_FUNC_ASYM_CIPHER_GETTABLE_CTX_PARAMS,
	  (void (*)(void))ci_gettable_ctx_params },
	{ OSSL_FUNC_ASYM_CIPHER_SET_CTX_PARAMS,
	  (void (*)(void))ci_set_ctx_params },
	{ OSSL_FUNC_ASYM_CIPHER_SETTABLE_CTX_PARAMS,
	  (void (*)(void))ci_settable_ctx_params },
	{ 0, NULL },
};

const OSSL_ALGORITHM prov_pkey_asym_cipher[] = {
	{ "RSA:rsaEncryption:1.2.840.113549.1.1.1", PROV_PKEY_PROPS, ci_fns,
	  NULL },
	{ NULL, NULL, NULL, NULL },
};
