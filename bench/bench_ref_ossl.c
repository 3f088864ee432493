/* SPDX-License-Identifier: MIT */
/*
 * OpenSSL EVP in this process, one buffer after another: the daemon's
 * openssl engine (XTS, and everything with --engine openssl), the second
 * reference for CBC encryption (OpenSSL's CBC encrypt is serial within a
 * buffer and does one buffer at a time), and the independent check that
 * the ipsec-mb reference computes what docs/algorithms.md says.
 *
 * One context per direction, keyed once; each op only sets its IV, as an
 * application that keeps its contexts would. Authenc is CBC or CTR then
 * HMAC (one-shot HMAC(): slow, used for checking). MACs (HMAC, CMAC) keep
 * one keyed EVP_MAC context and re-initialise it per op; digests are one
 * EVP_Digest() call. OpenSSL has no XCBC-MAC: ipsec-mb is its only twin.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cryptod/ring_abi.h>

#include "names.h"

#include "bench.h"

struct ossl_ref {
	const struct bench_alg *a;
	EVP_CIPHER *cipher;	/* fetched once; owned */
	EVP_CIPHER_CTX *ctx[2]; /* [0] encrypt, [1] decrypt; owned */
	const EVP_MD *md;	/* authenc's digest, else NULL */
	uint8_t auth_key[BENCH_AUTH_KEY_MAX]; /* wiped on free */
	bool gcm;	  /* GCM, GMAC, ChaCha20-Poly1305: tag ctrls */
	bool ccm;	  /* CCM: the length first, no final on decrypt */
	EVP_MAC_CTX *mac; /* HMAC, CMAC: keyed once; owned */
	EVP_MD *digest;	  /* SHA-*: owned */
};

static void ossl_destroy(void *priv)
{
	struct ossl_ref *o = priv;
	unsigned i;

	if (!o)
		return;
	/* EVP_CIPHER_CTX_free cleanses the key schedule. */
	for (i = 0; i < 2; i++) {
		EVP_CIPHER_CTX_free(o->ctx[i]);
		o->ctx[i] = NULL;
	}
	EVP_CIPHER_free(o->cipher);
	o->cipher = NULL;
	EVP_MAC_CTX_free(o->mac); /* cleanses the key */
	o->mac = NULL;
	EVP_MD_free(o->digest);
	o->digest = NULL;
	explicit_bzero(o->auth_key, sizeof(o->auth_key));
	free(o);
}

/* "AES-128-CBC" and friends, as the algorithm table names the EVP
 * cipher that runs a cipher, AEAD, GMAC or authenc row; NULL when EVP
 * has none. */
static const char *cipher_name(const struct bench_alg *a, char *buf, size_t len)
{
	return crd_alg_ossl_name(a->alg, a->key_len, buf, len) ? NULL : buf;
}

/* The digest of HMAC, a hash or authenc ("SHA256"), else NULL: the
 * OpenSSL name of the SHA row its sha column names. */
static const char *digest_name(enum cc_alg alg)
{
	static char names[CRD_SHA_N][16];
	int i = crd_alg_sha_idx(alg);

	if (i < 0)
		return NULL;
	if (!names[i][0] && crd_alg_ossl_name(CRD_ALG_SHA1 + (unsigned)i, 0,
					      names[i], sizeof(names[i])))
		return NULL;
	return names[i];
}

/* MACs and digests: a keyed EVP_MAC context or a fetched digest. */
static int ossl_create_auth(struct ossl_ref *o, const uint8_t *key, char *desc,
			    size_t desc_len)
{
	const struct bench_alg *a = o->a;
	char cbc[32];
	OSSL_PARAM params[2] = { OSSL_PARAM_END, OSSL_PARAM_END };
	EVP_MAC *mac;

	if (cc_alg_kind(a->alg) == CC_KIND_HASH) {
		o->digest = EVP_MD_fetch(NULL, digest_name(a->alg), NULL);
		if (!o->digest)
			return -ENOTSUP;
		snprintf(desc, desc_len, "OpenSSL %s EVP_Digest %s, serial",
			 OpenSSL_version(OPENSSL_VERSION_STRING),
			 digest_name(a->alg));
		return 0;
	}
	if (a->alg == CC_ALG_AES_CMAC) {
		if (crd_alg_ossl_name(a->alg, a->key_len, cbc, sizeof(cbc)))
			return -ENOTSUP;
		params[0] = OSSL_PARAM_construct_utf8_string(
			OSSL_MAC_PARAM_CIPHER, cbc, 0);
		mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	} else if (digest_name(a->alg)) {
		params[0] = OSSL_PARAM_construct_utf8_string(
			OSSL_MAC_PARAM_DIGEST, (char *)digest_name(a->alg), 0);
		mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	} else {
		return -ENOTSUP; /* XCBC-MAC */
	}
	o->mac = mac ? EVP_MAC_CTX_new(mac) : NULL;
	EVP_MAC_free(mac);
	if (!o->mac || !EVP_MAC_init(o->mac, key, a->key_len, params))
		return -ENOTSUP;
	snprintf(desc, desc_len, "OpenSSL %s EVP_MAC %s, serial",
		 OpenSSL_version(OPENSSL_VERSION_STRING),
		 a->alg == CC_ALG_AES_CMAC ? "CMAC" : "HMAC");
	return 0;
}

static int ossl_create(const struct bench_alg *a, const uint8_t *key,
		       const uint8_t *auth_key, void **priv, char *desc,
		       size_t desc_len)
{
	struct ossl_ref *o;
	char name[32];
	unsigned i;

	enum cc_alg_kind kind = cc_alg_kind(a->alg);
	/* MACs but GMAC (a GCM cipher context) and digests */
	bool auth = kind == CC_KIND_HASH ||
		    (kind == CC_KIND_MAC && a->alg != CC_ALG_AES_GMAC);

	if (!auth && !cipher_name(a, name, sizeof(name)))
		return -ENOTSUP;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->a = a;
	if (auth) {
		int rc = ossl_create_auth(o, key, desc, desc_len);
		if (rc < 0) {
			ossl_destroy(o);
			return rc;
		}
		*priv = o;
		return 0;
	}
	o->gcm = a->alg == CC_ALG_AES_GCM || a->alg == CC_ALG_AES_GMAC ||
		 a->alg == CC_ALG_CHACHA20_POLY1305;
	o->ccm = a->alg == CC_ALG_AES_CCM;
	if (kind == CC_KIND_AUTHENC)
		o->md = EVP_get_digestbyname(digest_name(a->alg));
	if (o->md)
		memcpy(o->auth_key, auth_key, a->auth_key_len);
	o->cipher = EVP_CIPHER_fetch(NULL, name, NULL);
	if (!o->cipher) {
		bench_err("OpenSSL has no %s\n", name);
		ossl_destroy(o);
		return -ENOTSUP;
	}
	for (i = 0; i < 2; i++) {
		o->ctx[i] = EVP_CIPHER_CTX_new();
		/* CCM: nonce and tag lengths before the key */
		if (!o->ctx[i] ||
		    !EVP_CipherInit_ex(o->ctx[i], o->cipher, NULL, NULL, NULL,
				       i == 0) ||
		    (o->ccm &&
		     (!EVP_CIPHER_CTX_ctrl(o->ctx[i], EVP_CTRL_AEAD_SET_IVLEN,
					   a->iv_len, NULL) ||
		      !EVP_CIPHER_CTX_ctrl(o->ctx[i], EVP_CTRL_AEAD_SET_TAG,
					   a->tag_len, NULL))) ||
		    !EVP_CipherInit_ex(o->ctx[i], NULL, NULL, key, NULL,
				       i == 0) ||
		    !EVP_CIPHER_CTX_set_padding(o->ctx[i], 0)) {
			bench_err("OpenSSL %s: context set-up "
				  "failed\n",
				  name);
			ossl_destroy(o);
			return -EINVAL;
		}
	}
	snprintf(desc, desc_len, "OpenSSL %s EVP %s, serial",
		 OpenSSL_version(OPENSSL_VERSION_STRING), name);
	*priv = o;
	return 0;
}

/*
 * One cipher pass: dst <- src with this op's IV. GCM: aad first, the tag
 * written (encrypt) or checked (decrypt, 1 on mismatch); GMAC: the data
 * is all AAD. Returns 0, 1 (tag mismatch) or -EIO.
 */
static int cipher_one(struct ossl_ref *o, enum cc_dir dir, uint8_t *dst,
		      const uint8_t *src, uint32_t len, const uint8_t *iv,
		      const uint8_t *aad, uint32_t aad_len, uint8_t *tag,
		      uint32_t tag_len)
{
	EVP_CIPHER_CTX *ctx = o->ctx[dir == CC_DECRYPT];
	int outl = 0, fin = 0, total;

	if (!EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1))
		return -EIO;
	if (o->ccm) {
		/* The tag (decrypt) and the total length before any data;
		 * a decrypt's data update fails on a tag mismatch. */
		if ((dir == CC_DECRYPT &&
		     !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG,
					  (int)tag_len, tag)) ||
		    !EVP_CipherUpdate(ctx, NULL, &outl, NULL, (int)len) ||
		    (aad_len &&
		     !EVP_CipherUpdate(ctx, NULL, &outl, aad, (int)aad_len)))
			return -EIO;
		if (!EVP_CipherUpdate(ctx, dst, &outl, src, (int)len))
			return dir == CC_DECRYPT ? 1 : -EIO;
		if (dir == CC_ENCRYPT &&
		    (!EVP_CipherFinal_ex(ctx, dst + outl, &fin) ||
		     !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG,
					  (int)tag_len, tag)))
			return -EIO;
		return outl + fin == (int)len ? 0 : -EIO;
	}
	if (o->gcm) {
		if (aad_len &&
		    !EVP_CipherUpdate(ctx, NULL, &outl, aad, (int)aad_len))
			return -EIO;
		if (o->a->tag_only) {
			if (!EVP_CipherUpdate(ctx, NULL, &outl, src, (int)len))
				return -EIO;
			len = 0; /* no output expected */
			outl = 0;
		} else if (!EVP_CipherUpdate(ctx, dst, &outl, src, (int)len)) {
			return -EIO;
		}
		if (dir == CC_DECRYPT &&
		    !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG,
					 (int)tag_len, tag))
			return -EIO;
		if (EVP_CipherFinal_ex(ctx, dst + outl, &fin) <= 0)
			return dir == CC_DECRYPT ? 1 : -EIO;
		if (dir == CC_ENCRYPT &&
		    !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG,
					 (int)tag_len, tag))
			return -EIO;
	} else {
		if (!EVP_CipherUpdate(ctx, dst, &outl, src, (int)len) ||
		    !EVP_CipherFinal_ex(ctx, dst + outl, &fin))
			return -EIO;
	}
	total = outl + fin;
	return total == (int)len ? 0 : -EIO;
}

/* ESP: encrypt-then-MAC over AAD || ciphertext (contiguous in the slot
 * and, out of place, at the destination's AAD copy). */
static int authenc_one(struct ossl_ref *o, const struct bench_layout *l,
		       enum cc_dir dir, unsigned i)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	uint8_t *dst = bench_slot_dst(l, i), *tag = bench_slot_tag(l, i);
	const uint8_t *mac_in;
	int rc;

	if (dir == CC_ENCRYPT) {
		rc = cipher_one(o, dir, dst, bench_slot_src(l, i), l->len,
				l->iv[i], NULL, 0, NULL, 0);
		if (rc)
			return rc;
		mac_in = dst - l->aad_len;
	} else {
		mac_in = bench_slot_aad(l, i);
	}
	if (!HMAC(o->md, o->auth_key, o->a->auth_key_len, mac_in,
		  (size_t)l->aad_len + l->len, md, &mdlen) ||
	    mdlen < l->tag_len)
		return -EIO;
	if (dir == CC_ENCRYPT) {
		memcpy(tag, md, l->tag_len);
		return 0;
	}
	if (bench_tag_differs(md, tag, l->tag_len))
		return 1;
	return cipher_one(o, dir, dst, bench_slot_src(l, i), l->len, l->iv[i],
			  NULL, 0, NULL, 0);
}

/* MAC or digest over the slot's source: the tag written (encrypt) or
 * compared (decrypt: 1 on mismatch). */
static int auth_one(struct ossl_ref *o, const struct bench_layout *l,
		    enum cc_dir dir, unsigned i)
{
	uint8_t md[EVP_MAX_MD_SIZE], *tag = bench_slot_tag(l, i);
	unsigned mdlen = 0;
	size_t outl = 0;

	if (o->digest) {
		if (!EVP_Digest(bench_slot_src(l, i), l->len, md, &mdlen,
				o->digest, NULL))
			return -EIO;
		outl = mdlen;
	} else if (!EVP_MAC_init(o->mac, NULL, 0, NULL) ||
		   !EVP_MAC_update(o->mac, bench_slot_src(l, i), l->len) ||
		   !EVP_MAC_final(o->mac, md, &outl, sizeof(md))) {
		return -EIO;
	}
	if (outl < l->tag_len)
		return -EIO;
	if (dir == CC_ENCRYPT) {
		memcpy(tag, md, l->tag_len);
		return 0;
	}
	return bench_tag_differs(md, tag, l->tag_len) ? 1 : 0;
}

static int ossl_burst(void *priv, const struct bench_layout *l, enum cc_dir dir,
		      unsigned first, unsigned n, bool checked)
{
	struct ossl_ref *o = priv;
	unsigned i;
	int rc, bad = 0;

	for (i = first; i < first + n; i++) {
		if (o->md)
			rc = authenc_one(o, l, dir, i);
		else if (o->mac || o->digest)
			rc = auth_one(o, l, dir, i);
		else
			rc = cipher_one(o, dir, bench_slot_dst(l, i),
					bench_slot_src(l, i), l->len,
					l->iv_len ? l->iv[i] : NULL,
					bench_slot_aad(l, i), l->aad_len,
					bench_slot_tag(l, i), l->tag_len);
		if (rc < 0)
			return rc;
		bad += rc;
	}
	return bad;
}

const struct bench_ref_ops bench_ref_ossl_ops = {
	.create = ossl_create,
	.destroy = ossl_destroy,
	.burst = ossl_burst,
};
