/* SPDX-License-Identifier: MIT */
/*
 * Key exchange with key pairs the daemon holds (provider-keyexch(7)):
 * ECDH on P-256/384/521, X25519, X448. derive sends the peer's public
 * key as TLS carries it (EVP_PKEY_get1_encoded_public_key: an
 * uncompressed point, or the raw u-coordinate) and takes the shared
 * secret back. The peer is a key object too: OpenSSL imports a peer's
 * public key into this provider's key management first. On the thread's
 * queue, as signatures (pio_pk). A key the program made itself
 * (prov_pkey_own.c) derives in-process.
 */
#include "prov_pkey.h"
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

struct kex_ctx {
	struct prov *p;
	struct prov_pkey *k, *peer; /* OpenSSL's keys' */
};

static void *kex_newctx(void *provctx)
{
	struct kex_ctx *x = calloc(1, sizeof(*x));
	if (x)
		x->p = provctx;
	return x;
}

static void kex_freectx(void *vctx)
{
	free(vctx);
}

static void *kex_dupctx(void *vctx)
{
	struct kex_ctx *x = malloc(sizeof(*x));
	if (x)
		*x = *(struct kex_ctx *)vctx;
	return x;
}

static int kex_init(void *vctx, void *key, const OSSL_PARAM params[])
{
	struct kex_ctx *x = vctx;
	x->k = key;
	x->peer = NULL;
	return x->k && x->k->pub;
}

static int kex_set_peer(void *vctx, void *peer)
{
	struct kex_ctx *x = vctx;
	struct prov_pkey *y = peer;
	if (!y || !y->pub || !x->k ||
	    !EVP_PKEY_is_a(y->pub, prov_pkey_type(x->k))) {
		PROV_ERR(x->p, PROV_R_BAD_PARAM,
			 "the peer's key is not of the key's type");
		return 0;
	}
	x->peer = y;
	return 1;
}

/* The shared secret's length: the field's bytes. */
static size_t kex_len(const struct prov_pkey *k)
{
	if (EVP_PKEY_is_a(k->pub, "X25519"))
		return 32;
	if (EVP_PKEY_is_a(k->pub, "X448"))
		return 56;
	return ((size_t)EVP_PKEY_get_bits(k->pub) + 7) / 8;
}

/* The program's own key (prov_pkey.h): in-process, as the default
 * provider would. */
static int kex_own(struct kex_ctx *x, unsigned char *secret, size_t *secretlen,
		   size_t outlen)
{
	OSSL_LIB_CTX *l = prov_fb_libctx(x->p);
	EVP_PKEY_CTX *c =
		l ? EVP_PKEY_CTX_new_from_pkey(l, x->k->pub, NULL) : NULL;
	*secretlen = outlen;
	int ok = c && EVP_PKEY_derive_init(c) == 1 &&
		 EVP_PKEY_derive_set_peer(c, x->peer->pub) == 1 &&
		 EVP_PKEY_derive(c, secret, secretlen) == 1;
	EVP_PKEY_CTX_free(c);
	if (!ok)
		PROV_ERR(x->p, PROV_R_FALLBACK,
			 "derive with the program's own key failed");
	return ok;
}

static int kex_derive(void *vctx, unsigned char *secret, size_t *secretlen,
		      size_t outlen)
{
	struct kex_ctx *x = vctx;
	if (!x->k || !x->peer) {
		PROV_ERR(x->p, PROV_R_STATE, "derive: no key or no peer");
		return 0;
	}
	if (x->k->own)
		return kex_own(x, secret, secretlen, outlen);
	size_t len = kex_len(x->k);
	if (!secret) {
		*secretlen = len;
		return 1;
	}
	unsigned char *pub = NULL;
	size_t publen = EVP_PKEY_get1_encoded_public_key(x->peer->pub, &pub);
	unsigned char buf[CRD_TAG_MAX > 256 ? CRD_TAG_MAX : 256];
	size_t n = cc_alg_tag_len(x->k->alg);
	int ok = publen && n <= sizeof(buf) &&
		 !prov_pkey_op(x->k, CC_DERIVE, NULL, pub, publen, buf, &n);
	OPENSSL_free(pub);
	if (ok && n > outlen) {
		PROV_ERR(x->p, PROV_R_BAD_PARAM,
			 "shared secret of %zu bytes, room for %zu", n, outlen);
		ok = 0;
	}
	if (ok) {
		memcpy(secret, buf, n);
		*secretlen = n;
	}
	OPENSSL_cleanse(buf, sizeof(buf));
	return ok;
}

static int kex_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	return 1;
}

static const OSSL_PARAM kex_none[] = { OSSL_PARAM_END };

static const OSSL_PARAM *kex_settable_ctx_params(void *vctx, void *provctx)
{
	return kex_none;
}

static const OSSL_DISPATCH kex_fns[] = {
	{ OSSL_FUNC_KEYEXCH_NEWCTX, (void (*)(void))kex_newctx },
	{ OSSL_FUNC_KEYEXCH_FREECTX, (void (*)(void))kex_freectx },
	{ OSSL_FUNC_KEYEXCH_DUPCTX, (void (*)(void))kex_dupctx },
	{ OSSL_FUNC_KEYEXCH_INIT, (void (*)(void))kex_init },
	{ OSSL_FUNC_KEYEXCH_SET_PEER, (void (*)(void))kex_set_peer },
	{ OSSL_FUNC_KEYEXCH_DERIVE, (void (*)(void))kex_derive },
	{ OSSL_FUNC_KEYEXCH_SET_CTX_PARAMS,
	  (void (*)(void))kex_set_ctx_params },
	{ OSSL_FUNC_KEYEXCH_SETTABLE_CTX_PARAMS,
	  (void (*)(void))kex_settable_ctx_params },
	{ 0, NULL },
};

const OSSL_ALGORITHM prov_pkey_keyexch[] = {
	{ "ECDH", PROV_PKEY_PROPS, kex_fns, NULL },
	{ "X25519:1.3.101.110", PROV_PKEY_PROPS, kex_fns, NULL },
	{ "X448:1.3.101.111", PROV_PKEY_PROPS, kex_fns, NULL },
	{ NULL, NULL, NULL, NULL },
};
