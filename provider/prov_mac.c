/* SPDX-License-Identifier: MIT */
/*
 * HMAC (SHA-1, SHA-2) and CMAC (AES-128/192/256) over the daemon: a
 * session per key, the message as in prov_hash.h.
 *
 * A MAC is fetched by its name alone ("HMAC"), before its digest or
 * cipher is known: with cryptod preferred, HMAC-MD5, HMAC-SHA3-256 or
 * CMAC over DES-EDE3-CBC come here too. The daemon has none of those, so
 * such a context is the default provider's MAC in-process (local), as
 * the fetch would have chosen had it known the digest: counted as an
 * in-process message, whatever fallback says.
 */
#include "prov_hash.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

enum pm_kind { PM_HMAC, PM_CMAC };

#define PM_KEY_MAX 256 /* the daemon's largest key (CreateSession) */

struct pm_ctx {
	enum pm_kind kind;
	struct ph_msg m;
	uint8_t key[PM_KEY_MAX];
	size_t key_len;
	int key_set;
	char sub[32];	/* the digest or cipher's name, for the fallback */
	int local;	/* sub is not the daemon's: swctx does it all */
	EVP_MAC *swmac; /* owned */
	EVP_MAC_CTX *swctx;
};

/* The digests and ciphers a MAC may name, under OpenSSL's names. */
static const struct {
	const char *name;
	enum cc_alg hmac, cmac;
	size_t cmac_key;
} pm_subs[] = {
	{ "SHA1", CC_ALG_HMAC_SHA1, 0, 0 },
	{ "SHA-1", CC_ALG_HMAC_SHA1, 0, 0 },
	{ "SHA224", CC_ALG_HMAC_SHA224, 0, 0 },
	{ "SHA2-224", CC_ALG_HMAC_SHA224, 0, 0 },
	{ "SHA-224", CC_ALG_HMAC_SHA224, 0, 0 },
	{ "SHA256", CC_ALG_HMAC_SHA256, 0, 0 },
	{ "SHA2-256", CC_ALG_HMAC_SHA256, 0, 0 },
	{ "SHA-256", CC_ALG_HMAC_SHA256, 0, 0 },
	{ "SHA384", CC_ALG_HMAC_SHA384, 0, 0 },
	{ "SHA2-384", CC_ALG_HMAC_SHA384, 0, 0 },
	{ "SHA-384", CC_ALG_HMAC_SHA384, 0, 0 },
	{ "SHA512", CC_ALG_HMAC_SHA512, 0, 0 },
	{ "SHA2-512", CC_ALG_HMAC_SHA512, 0, 0 },
	{ "SHA-512", CC_ALG_HMAC_SHA512, 0, 0 },
	{ "AES-128-CBC", 0, CC_ALG_AES_CMAC, 16 },
	{ "AES-192-CBC", 0, CC_ALG_AES_CMAC, 24 },
	{ "AES-256-CBC", 0, CC_ALG_AES_CMAC, 32 },
};

/* The in-process MAC's context, its digest or cipher set to sub. */
static int pm_sw_ctx(struct pm_ctx *x)
{
	if (!x->swmac && !(x->swmac = prov_fb_mac(x->m.p, x->m.name)))
		return 0;
	if (!x->swctx && !(x->swctx = EVP_MAC_CTX_new(x->swmac)))
		return 0;
	OSSL_PARAM ps[] = { OSSL_PARAM_construct_utf8_string(
				    x->kind == PM_HMAC ? OSSL_MAC_PARAM_DIGEST
						       : OSSL_MAC_PARAM_CIPHER,
				    x->sub, 0),
			    OSSL_PARAM_END };
	return EVP_MAC_CTX_set_params(x->swctx, ps);
}

static int pm_sw_begin(void *owner)
{
	struct pm_ctx *x = owner;
	return pm_sw_ctx(x) && EVP_MAC_init(x->swctx, x->key, x->key_len, NULL);
}

static int pm_sw_update(void *owner, const uint8_t *data, size_t len)
{
	struct pm_ctx *x = owner;
	return EVP_MAC_update(x->swctx, data, len);
}

static int pm_sw_final(void *owner, uint8_t *out, size_t *outl)
{
	struct pm_ctx *x = owner;
	return EVP_MAC_final(x->swctx, out, outl, CRD_TAG_MAX);
}

static const struct ph_sw_ops pm_sw = { pm_sw_begin, pm_sw_update,
					pm_sw_final };

static void *pm_new(void *provctx, enum pm_kind kind)
{
	struct pm_ctx *x = OPENSSL_zalloc(sizeof(*x));
	if (!x)
		return NULL;
	x->kind = kind;
	x->m.p = provctx;
	x->m.name = kind == PM_HMAC ? "HMAC" : "CMAC";
	x->m.sw_ops = &pm_sw;
	x->m.owner = x;
	x->m.key = x->key;
	return x;
}

static void *pm_new_hmac(void *provctx)
{
	return pm_new(provctx, PM_HMAC);
}

static void *pm_new_cmac(void *provctx)
{
	return pm_new(provctx, PM_CMAC);
}

static void pm_free(void *vctx)
{
	struct pm_ctx *x = vctx;
	if (!x)
		return;
	ph_free(&x->m);
	EVP_MAC_CTX_free(x->swctx);
	EVP_MAC_free(x->swmac);
	OPENSSL_clear_free(x, sizeof(*x)); /* and the key with it */
}

static void *pm_dup(void *vctx)
{
	const struct pm_ctx *s = vctx;
	struct pm_ctx *x = OPENSSL_memdup(s, sizeof(*s));
	if (!x)
		return NULL;
	x->m.owner = x;
	x->m.key = x->key;
	x->swctx = NULL;
	x->swmac = NULL;
	if (s->swmac && EVP_MAC_up_ref(s->swmac))
		x->swmac = s->swmac;
	if (!ph_dup(&x->m, &s->m))
		goto err;
	if (s->swctx && !(x->swctx = EVP_MAC_CTX_dup(s->swctx)))
		goto err;
	return x;
err:
	pm_free(x);
	return NULL;
}

static int pm_set_ctx_params(void *vctx, const OSSL_PARAM params[]);

/* Keep key (at most sizeof(x->key) bytes) for the daemon's session; the
 * same key again keeps the session, another closes it. */
static void pm_key_keep(struct pm_ctx *x, const unsigned char *key,
			size_t keylen)
{
	if (!x->key_set || keylen != x->key_len ||
	    CRYPTO_memcmp(x->key, key, keylen)) {
		prov_sess_close(&x->m.sess);
		OPENSSL_cleanse(x->key, sizeof(x->key));
		memcpy(x->key, key, keylen);
	}
	x->key_len = keylen;
	x->m.key_len = keylen;
	x->key_set = 1;
}

static int pm_init(void *vctx, const unsigned char *key, size_t keylen,
		   const OSSL_PARAM params[])
{
	struct pm_ctx *x = vctx;
	ph_reset(&x->m);
	if (!pm_set_ctx_params(x, params))
		return 0;
	if (x->local) {
		/* The key given last, whichever digest it came with. */
		prov_report(x->m.p, 0); /* every message starts here */
		atomic_fetch_add(&x->m.p->n_inprocess, 1);
		if (key && keylen <= sizeof(x->key)) {
			pm_key_keep(x, key, keylen); /* for the daemon's too */
		} else if (key) { /* longer than the daemon takes */
			prov_sess_close(&x->m.sess);
			OPENSSL_cleanse(x->key, sizeof(x->key));
			x->key_set = 0;
			x->key_len = x->m.key_len = 0;
		} else if (x->key_set) { /* given before the digest */
			key = x->key;
			keylen = x->key_len;
		}
		return EVP_MAC_init(x->swctx, key, keylen, NULL);
	}
	if (key) {
		if (keylen > sizeof(x->key)) {
			PROV_ERR(x->m.p, PROV_R_UNSUPPORTED,
				 "%s: a key of %zu bytes (at most %zu)",
				 x->m.name, keylen, sizeof(x->key));
			return 0;
		}
		/* prov_sess_open still makes a new session for another
		 * digest or cipher. */
		pm_key_keep(x, key, keylen);
	}
	if (!x->key_set || !x->m.alg) {
		PROV_ERR(x->m.p, PROV_R_STATE, "%s: no key or %s set",
			 x->m.name, x->kind == PM_HMAC ? "digest" : "cipher");
		return 0;
	}
	if (x->kind == PM_CMAC) {
		for (size_t i = 0; i < sizeof(pm_subs) / sizeof(pm_subs[0]);
		     i++)
			if (!strcasecmp(pm_subs[i].name, x->sub) &&
			    pm_subs[i].cmac_key != x->key_len) {
				PROV_ERR(x->m.p, PROV_R_BAD_PARAM,
					 "CMAC: a %zu-byte key for %s",
					 x->key_len, x->sub);
				return 0;
			}
	}
	return 1;
}

static int pm_update(void *vctx, const unsigned char *in, size_t inl)
{
	struct pm_ctx *x = vctx;
	if (x->local)
		return EVP_MAC_update(x->swctx, in, inl);
	return ph_update(&x->m, in, inl);
}

static size_t pm_size(const struct pm_ctx *x)
{
	if (x->local)
		return EVP_MAC_CTX_get_mac_size(x->swctx);
	return x->m.alg ? cc_alg_tag_len(x->m.alg) : 0;
}

static int pm_final(void *vctx, unsigned char *out, size_t *outl,
		    size_t outsize)
{
	struct pm_ctx *x = vctx;
	if (x->local)
		return EVP_MAC_final(x->swctx, out, outl, outsize);
	if (outsize < pm_size(x)) {
		PROV_ERR(x->m.p, PROV_R_BAD_PARAM, "output buffer too small");
		return 0;
	}
	return ph_final(&x->m, out, outl);
}

static const OSSL_PARAM pm_gettable[] = {
	OSSL_PARAM_size_t(OSSL_MAC_PARAM_SIZE, NULL),
	OSSL_PARAM_size_t(OSSL_MAC_PARAM_BLOCK_SIZE, NULL), OSSL_PARAM_END
};
static const OSSL_PARAM pm_hmac_settable[] = {
	OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_DIGEST, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_PROPERTIES, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, NULL, 0), OSSL_PARAM_END
};
static const OSSL_PARAM pm_cmac_settable[] = {
	OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_CIPHER, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_PROPERTIES, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, NULL, 0), OSSL_PARAM_END
};

static const OSSL_PARAM *pm_gettable_ctx_params(void *vctx, void *provctx)
{
	return pm_gettable;
}
static const OSSL_PARAM *pm_hmac_settable_ctx_params(void *vctx, void *provctx)
{
	return pm_hmac_settable;
}
static const OSSL_PARAM *pm_cmac_settable_ctx_params(void *vctx, void *provctx)
{
	return pm_cmac_settable;
}

static int pm_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct pm_ctx *x = vctx;
	OSSL_PARAM *p;
	size_t bs = x->local		 ? EVP_MAC_CTX_get_block_size(x->swctx)
		    : x->kind == PM_CMAC ? 16
		    : x->m.alg >= CC_ALG_HMAC_SHA384 ? 128
						     : 64;
	if ((p = OSSL_PARAM_locate(params, OSSL_MAC_PARAM_SIZE)) &&
	    !OSSL_PARAM_set_size_t(p, pm_size(x)))
		return 0;
	if ((p = OSSL_PARAM_locate(params, OSSL_MAC_PARAM_BLOCK_SIZE)) &&
	    !OSSL_PARAM_set_size_t(p, bs))
		return 0;
	return 1;
}

static int pm_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct pm_ctx *x = vctx;
	const OSSL_PARAM *p;
	if (!params)
		return 1;
	const char *key = x->kind == PM_HMAC ? OSSL_MAC_PARAM_DIGEST
					     : OSSL_MAC_PARAM_CIPHER;
	if ((p = OSSL_PARAM_locate_const(params, key))) {
		const char *name;
		enum cc_alg alg = 0;
		if (!OSSL_PARAM_get_utf8_string_ptr(p, &name))
			return 0;
		for (size_t i = 0; i < sizeof(pm_subs) / sizeof(pm_subs[0]);
		     i++)
			if (!strcasecmp(pm_subs[i].name, name))
				alg = x->kind == PM_HMAC ? pm_subs[i].hmac
							 : pm_subs[i].cmac;
		if (strlen(name) >= sizeof(x->sub)) {
			PROV_ERR(x->m.p, PROV_R_UNSUPPORTED, "%s with %s",
				 x->m.name, name);
			return 0;
		}
		strcpy(x->sub, name);
		if (alg != x->m.alg)
			prov_sess_close(&x->m.sess);
		x->m.alg = alg;
		/* Not the daemon's: the default provider's MAC, which
		 * refuses what it does not know itself. The key a local
		 * context was given stays in swctx, where it went. */
		x->local = !alg;
		if (x->local && !pm_sw_ctx(x))
			return 0;
	}
	if ((p = OSSL_PARAM_locate_const(params, OSSL_MAC_PARAM_KEY))) {
		const void *k;
		size_t n;
		if (!OSSL_PARAM_get_octet_string_ptr(p, &k, &n))
			return 0;
		return pm_init(x, k, n, NULL);
	}
	return 1;
}

#define FN(id, f)                                                              \
	{                                                                      \
		id, (void (*)(void))f                                          \
	}
#define PM_DISPATCH(kind, settable)                                            \
	static const OSSL_DISPATCH pmd_##kind[] = {                            \
		FN(OSSL_FUNC_MAC_NEWCTX, pm_new_##kind),                       \
		FN(OSSL_FUNC_MAC_FREECTX, pm_free),                            \
		FN(OSSL_FUNC_MAC_DUPCTX, pm_dup),                              \
		FN(OSSL_FUNC_MAC_INIT, pm_init),                               \
		FN(OSSL_FUNC_MAC_UPDATE, pm_update),                           \
		FN(OSSL_FUNC_MAC_FINAL, pm_final),                             \
		FN(OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS, pm_gettable_ctx_params), \
		FN(OSSL_FUNC_MAC_GET_CTX_PARAMS, pm_get_ctx_params),           \
		FN(OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS, settable),               \
		FN(OSSL_FUNC_MAC_SET_CTX_PARAMS, pm_set_ctx_params),           \
		{ 0, NULL }                                                    \
	};
PM_DISPATCH(hmac, pm_hmac_settable_ctx_params)
PM_DISPATCH(cmac, pm_cmac_settable_ctx_params)

const OSSL_ALGORITHM prov_macs[] = {
	{ "HMAC", "provider=cryptod", pmd_hmac, NULL },
	{ "CMAC", "provider=cryptod", pmd_cmac, NULL },
	{ NULL, NULL, NULL, NULL },
};
