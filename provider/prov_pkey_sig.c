/* SPDX-License-Identifier: MIT */
/*
 * Signatures with key pairs the daemon holds (provider-signature(7)):
 * RSA (PKCS#1 v1.5, PSS), ECDSA, Ed25519 and Ed448.
 *
 * Signing goes to the daemon on the thread's queue (pio_pk; an ASYNC_JOB
 * pauses while it runs): RSA and ECDSA hash in-process and send the
 * digest, EdDSA sends the message. Verifying stays in-process, on the default
 * provider's copy of the public key: nothing secret is involved, and it
 * is faster than a round trip.
 *
 * The parameters (digest, padding, PSS salt length, MGF1 digest) are
 * kept by a default-provider verify context on the public key ("shadow"),
 * which checks them as OpenSSL would and computes the AlgorithmIdentifier
 * a certificate or CMS signer asks for; a signature reads them back from
 * it into the op's struct cc_pk_params. The shadow is made when first
 * needed (a parameter set or asked for, a verify): a TLS server's ECDSA
 * signature sets none, and a context per handshake (libssl makes one for
 * each) costs as much as a tenth of the signature's round trip. Without
 * one, the parameters are the defaults: the digest the init named,
 * PKCS#1 v1.5 for RSA.
 */
#include "prov_pkey.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rsa.h>

struct sig_ctx {
	struct prov *p;
	struct prov_pkey *k; /* OpenSSL's key's, not ours */
	int eddsa;
	char mdname[64];      /* the init's digest, "" for none */
	uint8_t md_id;	      /* its CC_PK_MD_*, NONE for others */
	EVP_PKEY_CTX *shadow; /* owned: RSA, ECDSA; made by sig_shadow() */
	EVP_MD_CTX *mdctx;    /* owned: digest_sign/verify's hash */
	EVP_MD *md;	      /* owned: the init's digest, if named */
};

static void *sig_newctx(void *provctx, const char *propq)
{
	struct sig_ctx *s = calloc(1, sizeof(*s));
	if (s)
		s->p = provctx;
	return s;
}

static void sig_freectx(void *vctx)
{
	struct sig_ctx *s = vctx;
	if (!s)
		return;
	EVP_PKEY_CTX_free(s->shadow);
	EVP_MD_CTX_free(s->mdctx);
	EVP_MD_free(s->md);
	free(s);
}

static void *sig_dupctx(void *vctx)
{
	struct sig_ctx *s = vctx, *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	*d = *s;
	d->shadow = NULL;
	d->mdctx = NULL;
	if (s->md && !EVP_MD_up_ref(s->md))
		d->md = NULL;
	if ((s->shadow && !(d->shadow = EVP_PKEY_CTX_dup(s->shadow))) ||
	    (s->mdctx && (!(d->mdctx = EVP_MD_CTX_new()) ||
			  !EVP_MD_CTX_copy_ex(d->mdctx, s->mdctx)))) {
		sig_freectx(d);
		return NULL;
	}
	return d;
}

/* The shadow context (RSA, ECDSA), made on first use with the init's
 * digest; NULL with an error raised. */
static EVP_PKEY_CTX *sig_shadow(struct sig_ctx *s)
{
	if (s->shadow || s->eddsa || !s->k)
		return s->shadow;
	OSSL_LIB_CTX *l = prov_fb_libctx(s->p);
	if (!l ||
	    !(s->shadow = EVP_PKEY_CTX_new_from_pkey(l, s->k->pub, NULL)) ||
	    EVP_PKEY_verify_init(s->shadow) != 1) {
		PROV_ERR(s->p, PROV_R_FALLBACK, "key %s: no verify context",
			 s->k->name);
		goto fail;
	}
	if (s->mdname[0]) {
		OSSL_PARAM md[] = { OSSL_PARAM_utf8_string(
					    OSSL_SIGNATURE_PARAM_DIGEST,
					    s->mdname, strlen(s->mdname)),
				    OSSL_PARAM_END };
		if (!EVP_PKEY_CTX_set_params(s->shadow, md)) {
			PROV_ERR(s->p, PROV_R_BAD_PARAM, "digest %s",
				 s->mdname);
			goto fail;
		}
	}
	return s->shadow;
fail:
	EVP_PKEY_CTX_free(s->shadow);
	s->shadow = NULL;
	return NULL;
}

static int sig_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct sig_ctx *s = vctx;
	if (!params || !params[0].key || s->eddsa || !s->k)
		return 1; /* before an init: nothing to set them on yet */
	EVP_PKEY_CTX *sh = sig_shadow(s);
	return sh && EVP_PKEY_CTX_set_params(sh, params);
}

static int sig_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct sig_ctx *s = vctx;
	if (!s->eddsa && s->k) {
		EVP_PKEY_CTX *sh = sig_shadow(s);
		return sh && EVP_PKEY_CTX_get_params(sh, params);
	}
	OSSL_PARAM *q =
		OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_ALGORITHM_ID);
	if (q && s->k) {
		/* RFC 8410: the OID alone. */
		static const unsigned char ed25519[] = { 0x30, 0x05, 0x06, 0x03,
							 0x2b, 0x65, 0x70 };
		static const unsigned char ed448[] = { 0x30, 0x05, 0x06, 0x03,
						       0x2b, 0x65, 0x71 };
		int is448 = EVP_PKEY_is_a(s->k->pub, "ED448");
		return OSSL_PARAM_set_octet_string(q, is448 ? ed448 : ed25519,
						   sizeof(ed25519));
	}
	return 1;
}

static const OSSL_PARAM sig_settable[] = {
	OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PROPERTIES, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_PROPERTIES, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, NULL, 0),
	OSSL_PARAM_END
};
static const OSSL_PARAM sig_gettable[] = {
	OSSL_PARAM_octet_string(OSSL_SIGNATURE_PARAM_ALGORITHM_ID, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, NULL, 0),
	OSSL_PARAM_END
};

static const OSSL_PARAM *sig_settable_ctx_params(void *vctx, void *provctx)
{
	return sig_settable;
}

static const OSSL_PARAM *sig_gettable_ctx_params(void *vctx, void *provctx)
{
	return sig_gettable;
}

/* The id of md, a SHA-1 or SHA-2 digest; CC_PK_MD_NONE for others. */
static uint8_t md_id(const EVP_MD *md)
{
	static const struct {
		const char *n;
		uint8_t id;
	} mds[] = {
		{ "SHA1", CC_PK_MD_SHA1 },
		{ "SHA2-224", CC_PK_MD_SHA224 },
		{ "SHA2-256", CC_PK_MD_SHA256 },
		{ "SHA2-384", CC_PK_MD_SHA384 },
		{ "SHA2-512", CC_PK_MD_SHA512 },
	};
	for (size_t i = 0; md && i < sizeof(mds) / sizeof(mds[0]); i++)
		if (EVP_MD_is_a(md, mds[i].n))
			return mds[i].id;
	return CC_PK_MD_NONE;
}

/* The id of the digest called name: the init's without a look-up. */
static uint8_t md_id_of(struct sig_ctx *s, const char *name)
{
	if (s->md && (!strcmp(name, s->mdname) || EVP_MD_is_a(s->md, name)))
		return s->md_id;
	EVP_MD *md = prov_fb_md(s->p, name);
	uint8_t id = md_id(md);
	EVP_MD_free(md);
	return id;
}

/* The shadow's digest's name into name[64] ("" for none); 1, or 0 with
 * an error raised. Without a shadow, the init's. */
static int sig_mdname(struct sig_ctx *s, char name[64])
{
	name[0] = 0;
	if (!s->shadow) {
		strcpy(name, s->mdname);
		return 1;
	}
	OSSL_PARAM q[] = { OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST,
						  name, 64),
			   OSSL_PARAM_END };
	return EVP_PKEY_CTX_get_params(s->shadow, q);
}

/* The digest to hash with (a reference for the caller): the init's,
 * unless a parameter named another. */
static EVP_MD *sig_md(struct sig_ctx *s)
{
	char name[64];
	if (!sig_mdname(s, name) || !name[0])
		return NULL;
	if (s->md && (!strcmp(name, s->mdname) || EVP_MD_is_a(s->md, name)))
		return EVP_MD_up_ref(s->md) ? s->md : NULL;
	return prov_fb_md(s->p, name);
}

/* Start an op on key: the digest if named (fetched, and hashed with when
 * hash), the caller's parameters (on the shadow context, which only
 * they make here). */
static int sig_init(struct sig_ctx *s, void *key, const char *mdname,
		    const OSSL_PARAM params[], int hash)
{
	struct prov_pkey *k = key;
	if (!k || !k->pub) {
		PROV_ERR(s->p, PROV_R_STATE, "no key");
		return 0;
	}
	s->k = k;
	s->eddsa = EVP_PKEY_is_a(k->pub, "ED25519") ||
		   EVP_PKEY_is_a(k->pub, "ED448");
	EVP_PKEY_CTX_free(s->shadow);
	s->shadow = NULL;
	EVP_MD_CTX_free(s->mdctx);
	s->mdctx = NULL;
	EVP_MD_free(s->md);
	s->md = NULL;
	s->mdname[0] = 0;
	s->md_id = CC_PK_MD_NONE;
	if (s->eddsa) {
		if (mdname && *mdname) {
			PROV_ERR(s->p, PROV_R_BAD_PARAM,
				 "EdDSA takes no digest (%s)", mdname);
			return 0;
		}
		return 1;
	}
	/* A digest-sign with none hashes with SHA-256, as OpenSSL's RSA and
	 * ECDSA do. */
	if (hash && !(mdname && *mdname))
		mdname = "SHA256";
	if (mdname && *mdname) {
		if (strlen(mdname) >= sizeof(s->mdname) ||
		    !(s->md = prov_fb_md(s->p, mdname))) {
			PROV_ERR(s->p, PROV_R_BAD_PARAM, "digest %.64s",
				 mdname);
			return 0;
		}
		strcpy(s->mdname, mdname);
		s->md_id = md_id(s->md);
	}
	if (!sig_set_ctx_params(s, params))
		return 0;
	if (hash) {
		/* Parameters may have named another digest. */
		EVP_MD *md = sig_md(s);
		if (!md || !(s->mdctx = EVP_MD_CTX_new()) ||
		    !EVP_DigestInit_ex2(s->mdctx, md, NULL)) {
			EVP_MD_free(md);
			return 0;
		}
		EVP_MD_free(md);
	}
	return 1;
}

/* The op's parameters: the shadow context's, else the defaults. */
static int sig_params(struct sig_ctx *s, size_t tbslen, struct cc_pk_params *pp)
{
	memset(pp, 0, sizeof(*pp));
	if (s->eddsa)
		return 1;
	char md[64] = "", mgf1[64] = "";
	int pad = RSA_PKCS1_PADDING, salt = RSA_PSS_SALTLEN_DIGEST;
	int rsa = EVP_PKEY_is_a(s->k->pub, "RSA");
	if (s->shadow) {
		OSSL_PARAM q[] = {
			OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, md,
					       sizeof(md)),
			OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_PAD_MODE, &pad),
			OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST,
					       mgf1, sizeof(mgf1)),
			OSSL_PARAM_int(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, &salt),
			OSSL_PARAM_END
		};
		if (!rsa)
			q[1].key = NULL; /* ECDSA: the digest alone */
		if (!EVP_PKEY_CTX_get_params(s->shadow, q))
			return 0;
	} else {
		strcpy(md, s->mdname);
	}
	/* No digest set: the digest's length says which (as OpenSSL's
	 * EVP_PKEY_sign with no md takes any). */
	pp->md = md[0] ? md_id_of(s, md) : 0;
	if (!md[0])
		pp->md = tbslen == 20	? CC_PK_MD_SHA1
			 : tbslen == 28 ? CC_PK_MD_SHA224
			 : tbslen == 32 ? CC_PK_MD_SHA256
			 : tbslen == 48 ? CC_PK_MD_SHA384
			 : tbslen == 64 ? CC_PK_MD_SHA512
					: 0;
	if (!pp->md) {
		PROV_ERR(s->p, PROV_R_UNSUPPORTED,
			 "key %s: digest %s: cryptod signs SHA-1 and SHA-2 "
			 "digests",
			 s->k->name, md[0] ? md : "(none)");
		return 0;
	}
	if (!rsa)
		return 1;
	if (pad == RSA_PKCS1_PADDING) {
		pp->pad = CC_PK_PAD_PKCS1;
		return 1;
	}
	if (pad != RSA_PKCS1_PSS_PADDING) {
		PROV_ERR(s->p, PROV_R_UNSUPPORTED,
			 "key %s: padding %d: cryptod signs PKCS#1 v1.5 and "
			 "PSS",
			 s->k->name, pad);
		return 0;
	}
	pp->pad = CC_PK_PAD_PSS;
	pp->mgf1_md = mgf1[0] ? md_id_of(s, mgf1) : 0;
	/* OpenSSL's -1 digest, -2 auto (for a signature: the longest),
	 * -3 max; else bytes. */
	pp->salt_len = salt == RSA_PSS_SALTLEN_DIGEST ? CC_PK_SALT_DIGEST
		       : salt < 0		      ? CC_PK_SALT_MAX
						      : salt;
	return 1;
}

static int sig_do_sign(struct sig_ctx *s, unsigned char *sig, size_t *siglen,
		       size_t sigsize, const unsigned char *tbs, size_t tbslen)
{
	size_t room = cc_alg_tag_len(s->k->alg);
	if (!sig) {
		*siglen = (size_t)EVP_PKEY_get_size(s->k->pub);
		return 1;
	}
	struct cc_pk_params pp;
	if (!sig_params(s, tbslen, &pp))
		return 0;
	unsigned char buf[CRD_TAG_MAX > 1024 ? CRD_TAG_MAX : 1024];
	int direct = sigsize >= room;
	if (!direct && room > sizeof(buf))
		return 0;
	size_t n = room;
	if (prov_pkey_op(s->k, CC_SIGN, &pp, tbs, tbslen, direct ? sig : buf,
			 &n))
		return 0;
	if (n > sigsize) {
		PROV_ERR(s->p, PROV_R_BAD_PARAM,
			 "signature of %zu bytes, room for %zu", n, sigsize);
		return 0;
	}
	if (!direct)
		memcpy(sig, buf, n);
	*siglen = n;
	return 1;
}

static int sig_sign_init(void *vctx, void *key, const OSSL_PARAM params[])
{
	return sig_init(vctx, key, NULL, params, 0);
}

static int sig_sign(void *vctx, unsigned char *sig, size_t *siglen,
		    size_t sigsize, const unsigned char *tbs, size_t tbslen)
{
	return sig_do_sign(vctx, sig, siglen, sigsize, tbs, tbslen);
}

static int sig_verify_init(void *vctx, void *key, const OSSL_PARAM params[])
{
	return sig_init(vctx, key, NULL, params, 0);
}

static int sig_verify(void *vctx, const unsigned char *sig, size_t siglen,
		      const unsigned char *tbs, size_t tbslen)
{
	struct sig_ctx *s = vctx;
	EVP_PKEY_CTX *sh = sig_shadow(s);
	return sh && EVP_PKEY_verify(sh, sig, siglen, tbs, tbslen) == 1;
}

static int sig_digest_init(void *vctx, const char *mdname, void *key,
			   const OSSL_PARAM params[])
{
	return sig_init(vctx, key, mdname, params, 1);
}

static int sig_digest_update(void *vctx, const unsigned char *data, size_t len)
{
	struct sig_ctx *s = vctx;
	return s->mdctx && EVP_DigestUpdate(s->mdctx, data, len);
}

static int sig_digest_sign_final(void *vctx, unsigned char *sig, size_t *siglen,
				 size_t sigsize)
{
	struct sig_ctx *s = vctx;
	if (!sig)
		return sig_do_sign(s, NULL, siglen, sigsize, NULL, 0);
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned dlen;
	if (!s->mdctx || !EVP_DigestFinal_ex(s->mdctx, d, &dlen))
		return 0;
	return sig_do_sign(s, sig, siglen, sigsize, d, dlen);
}

static int sig_digest_verify_final(void *vctx, const unsigned char *sig,
				   size_t siglen)
{
	struct sig_ctx *s = vctx;
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned dlen;
	if (!s->mdctx || !EVP_DigestFinal_ex(s->mdctx, d, &dlen))
		return 0;
	return sig_verify(s, sig, siglen, d, dlen);
}

/* EdDSA: one shot, the message itself. */
static int sig_digest_sign(void *vctx, unsigned char *sig, size_t *siglen,
			   size_t sigsize, const unsigned char *tbs,
			   size_t tbslen)
{
	return sig_do_sign(vctx, sig, siglen, sigsize, tbs, tbslen);
}

static int sig_digest_verify(void *vctx, const unsigned char *sig,
			     size_t siglen, const unsigned char *tbs,
			     size_t tbslen)
{
	struct sig_ctx *s = vctx;
	OSSL_LIB_CTX *l = prov_fb_libctx(s->p);
	EVP_MD_CTX *m = l ? EVP_MD_CTX_new() : NULL;
	int ok = m &&
		 EVP_DigestVerifyInit_ex(m, NULL, NULL, l, NULL, s->k->pub,
					 NULL) == 1 &&
		 EVP_DigestVerify(m, sig, siglen, tbs, tbslen) == 1;
	EVP_MD_CTX_free(m);
	return ok;
}

#define SIG_COMMON                                                             \
	{ OSSL_FUNC_SIGNATURE_NEWCTX, (void (*)(void))sig_newctx },            \
		{ OSSL_FUNC_SIGNATURE_FREECTX, (void (*)(void))sig_freectx },  \
		{ OSSL_FUNC_SIGNATURE_DUPCTX, (void (*)(void))sig_dupctx },    \
		{ OSSL_FUNC_SIGNATURE_DIGEST_SIGN_INIT,                        \
		  (void (*)(void))sig_digest_init },                           \
		{ OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_INIT,                      \
		  (void (*)(void))sig_digest_init },                           \
		{ OSSL_FUNC_SIGNATURE_GET_CTX_PARAMS,                          \
		  (void (*)(void))sig_get_ctx_params },                        \
		{ OSSL_FUNC_SIGNATURE_GETTABLE_CTX_PARAMS,                     \
		  (void (*)(void))sig_gettable_ctx_params },                   \
		{ OSSL_FUNC_SIGNATURE_SET_CTX_PARAMS,                          \
		  (void (*)(void))sig_set_ctx_params },                        \
	{                                                                      \
		OSSL_FUNC_SIGNATURE_SETTABLE_CTX_PARAMS,                       \
			(void (*)(void))sig_settable_ctx_params                \
	}

/* RSA, ECDSA: a digest, given or hashed here. */
static const OSSL_DISPATCH sig_digest_fns[] = {
	SIG_COMMON,
	{ OSSL_FUNC_SIGNATURE_SIGN_INIT, (void (*)(void))sig_sign_init },
	{ OSSL_FUNC_SIGNATURE_SIGN, (void (*)(void))sig_sign },
	{ OSSL_FUNC_SIGNATURE_VERIFY_INIT, (void (*)(void))sig_verify_init },
	{ OSSL_FUNC_SIGNATURE_VERIFY, (void (*)(void))sig_verify },
	{ OSSL_FUNC_SIGNATURE_DIGEST_SIGN_UPDATE,
	  (void (*)(void))sig_digest_update },
	{ OSSL_FUNC_SIGNATURE_DIGEST_SIGN_FINAL,
	  (void (*)(void))sig_digest_sign_final },
	{ OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_UPDATE,
	  (void (*)(void))sig_digest_update },
	{ OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_FINAL,
	  (void (*)(void))sig_digest_verify_final },
	{ 0, NULL },
};

/* EdDSA: the message, one shot. */
static const OSSL_DISPATCH sig_eddsa_fns[] = {
	SIG_COMMON,
	{ OSSL_FUNC_SIGNATURE_DIGEST_SIGN, (void (*)(void))sig_digest_sign },
	{ OSSL_FUNC_SIGNATURE_DIGEST_VERIFY,
	  (void (*)(void))sig_digest_verify },
	{ 0, NULL },
};

const OSSL_ALGORITHM prov_pkey_signature[] = {
	{ "RSA:rsaEncryption:1.2.840.113549.1.1.1", PROV_PKEY_PROPS,
	  sig_digest_fns, NULL },
	{ "ECDSA", PROV_PKEY_PROPS, sig_digest_fns, NULL },
	{ "ED25519:1.3.101.112", PROV_PKEY_PROPS, sig_eddsa_fns, NULL },
	{ "ED448:1.3.101.113", PROV_PKEY_PROPS, sig_eddsa_fns, NULL },
	{ NULL, NULL, NULL, NULL },
};
