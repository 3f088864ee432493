/* SPDX-License-Identifier: MIT */
/*
 * The openssl engine's key pairs (CRD_KIND_PKEY; docs/asymmetric.md):
 * sign, verify, derive and RSA-OAEP through EVP_PKEY. What each op reads
 * and writes is ring_abi.h's contract (the comment above enum
 * crd_pk_pad); the data path (desc.c) has checked the op against the
 * session and its parameters against the row before an op gets here.
 *
 * A session holds one EVP_PKEY, parsed once from the client's DER at
 * session_init; its private numbers live in OpenSSL's secure heap
 * (main.c sets it up). Each op makes an EVP_PKEY_CTX from it and frees it
 * after: an allocation per op, against the engine contract's "never
 * allocate", because EVP has no way to re-arm a context for another
 * scheme (PSS after PKCS#1, a new peer) and a public-key op costs a
 * thousand times that allocation (openssl speed: an RSA-2048 signature
 * is ~0.3 ms).
 */
#include "engine.h"
#include "names.h"
#include "openssl.h"
#include "session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <cryptod/pkey_row.h>
#include <cryptod/ring_abi.h>

/* A key pair session's slot: the parsed key (owned; freed by
 * ossl_pk_session_fini). */
struct ossl_pk_key {
	EVP_PKEY *pkey;
};
_Static_assert(sizeof(struct ossl_pk_key) <= sizeof(((struct session *)0)->key),
	       "pk key fits the slot");

/* Per-worker: the digests, fetched once; a digest context for EdDSA. */
struct ossl_pk_worker {
	EVP_MD *md[CRD_SHA_N];
	EVP_MD_CTX *mdctx;
	uint8_t out[OSSL_PK_OUT_MAX]; /* a decryption, until it checks */
	uint8_t in[OSSL_PK_OUT_MAX];  /* a ciphertext, read once */
};

struct ossl_pk_worker *ossl_pk_worker_new(void)
{
	struct ossl_pk_worker *w = OPENSSL_zalloc(sizeof(*w));
	if (!w)
		return NULL;
	w->mdctx = EVP_MD_CTX_new();
	if (!w->mdctx)
		goto err;
	for (unsigned i = 0; i < CRD_SHA_N; i++) {
		const char *name = crd_alg_ossl_stem(CRD_ALG_SHA1 + i);
		w->md[i] = EVP_MD_fetch(NULL, name, NULL);
		if (!w->md[i])
			goto err;
	}
	return w;
err:
	ossl_pk_worker_free(w);
	return NULL;
}

void ossl_pk_worker_free(struct ossl_pk_worker *w)
{
	if (!w)
		return;
	for (unsigned i = 0; i < CRD_SHA_N; i++)
		EVP_MD_free(w->md[i]);
	EVP_MD_CTX_free(w->mdctx);
	OPENSSL_clear_free(w, sizeof(*w));
}

/* The ops a public key alone can do. */
#define OSSL_PK_PUBLIC_OPS (1u << CRD_OP_VERIFY | 1u << CRD_OP_ENCRYPT)

int ossl_pk_session_init(struct session *s, const uint8_t *der, size_t len)
{
	struct ossl_pk_key *k = (struct ossl_pk_key *)s->key;
	const unsigned char *p = der;
	int public_only = 0;

	/* PKCS#8 PrivateKeyInfo; else SubjectPublicKeyInfo. Either must be
	 * the whole buffer. */
	EVP_PKEY *pk = d2i_AutoPrivateKey_ex(NULL, &p, (long)len, NULL, NULL);
	if (pk && p != der + len) {
		EVP_PKEY_free(pk);
		pk = NULL;
	}
	if (!pk) {
		p = der;
		pk = d2i_PUBKEY_ex(NULL, &p, (long)len, NULL, NULL);
		if (pk && p != der + len) {
			EVP_PKEY_free(pk);
			pk = NULL;
		}
		public_only = 1;
	}
	ERR_clear_error(); /* the failed attempt's queue, per thread */
	if (!pk || !crd_pkey_matches(pk, s->alg))
		goto err;
	/* An EC public point must be on its curve (a peer's is checked per
	 * derive). */
	if (EVP_PKEY_is_a(pk, "EC")) {
		EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
		int ok = c && EVP_PKEY_public_check(c) == 1;
		EVP_PKEY_CTX_free(c);
		if (!ok)
			goto err;
	}
	if (public_only)
		s->op_mask &= OSSL_PK_PUBLIC_OPS;
	k->pkey = pk;
	engine_burn_stack(); /* the decoder's frames held the key */
	return 0;
err:
	EVP_PKEY_free(pk);
	ERR_clear_error();
	engine_burn_stack();
	return -EINVAL;
}

void ossl_pk_session_fini(struct session *s)
{
	struct ossl_pk_key *k = (struct ossl_pk_key *)s->key;
	EVP_PKEY_free(k->pkey); /* secure-heap numbers are cleared on free */
	k->pkey = NULL;
}

/* The digest of crd_pk_params.md (1 + enum crd_sha), or dflt for 0. */
static const EVP_MD *ossl_pk_md(const struct ossl_pk_worker *w, unsigned md,
				const EVP_MD *dflt)
{
	return md ? (md <= CRD_SHA_N ? w->md[md - 1] : NULL) : dflt;
}

/* The salt length OpenSSL takes for salt_len (CRD_PK_SALT_* or bytes). */
static int ossl_pk_salt(int32_t salt_len, int sign)
{
	if (salt_len == CRD_PK_SALT_DIGEST)
		return RSA_PSS_SALTLEN_DIGEST;
	if (salt_len == CRD_PK_SALT_MAX)
		return sign ? RSA_PSS_SALTLEN_MAX : RSA_PSS_SALTLEN_AUTO;
	return salt_len;
}

/* Set an RSA or ECDSA signature context's scheme. 1 or 0. */
static int ossl_pk_sig_params(const struct ossl_pk_worker *w, EVP_PKEY_CTX *c,
			      const struct crd_pk_params *pp, int rsa, int sign)
{
	const EVP_MD *md = ossl_pk_md(w, pp->md, NULL);
	if (!md || EVP_PKEY_CTX_set_signature_md(c, md) <= 0)
		return 0;
	if (!rsa)
		return 1;
	if (pp->pad != CRD_PK_PAD_PSS)
		return EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_PADDING) > 0;
	return EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_PSS_PADDING) > 0 &&
	       EVP_PKEY_CTX_set_rsa_mgf1_md(c, ossl_pk_md(w, pp->mgf1_md, md)) >
		       0 &&
	       EVP_PKEY_CTX_set_rsa_pss_saltlen(
		       c, ossl_pk_salt(pp->salt_len, sign)) > 0;
}

/* EdDSA: the message itself, through the digest-sign interface with no
 * digest. */
static int ossl_pk_eddsa(struct ossl_pk_worker *w, EVP_PKEY *pk,
			 struct engine_op *op)
{
	EVP_MD_CTX *m = w->mdctx;
	int st;
	if (op->op == CRD_OP_SIGN) {
		size_t n = crd_alg_tag_len(op->sess->alg);
		st = EVP_DigestSignInit_ex(m, NULL, NULL, NULL, NULL, pk,
					   NULL) == 1 &&
				     EVP_DigestSign(m, op->dst, &n, op->src,
						    op->len) == 1
			     ? CRD_ST_OK
			     : CRD_ST_ENGINE;
		op->len = st == CRD_ST_OK ? (uint32_t)n : 0;
	} else if (EVP_DigestVerifyInit_ex(m, NULL, NULL, NULL, NULL, pk,
					   NULL) != 1) {
		st = CRD_ST_ENGINE;
	} else {
		st = EVP_DigestVerify(m, op->aad, op->aad_len, op->src,
				      op->len) == 1
			     ? CRD_ST_OK
			     : CRD_ST_BAD_SIGNATURE;
		op->len = 0;
	}
	EVP_MD_CTX_reset(m);
	return st;
}

/* RSA and ECDSA over a digest. */
static int ossl_pk_sig(struct ossl_pk_worker *w, EVP_PKEY_CTX *c,
		       const struct crd_pk_params *pp, struct engine_op *op)
{
	int rsa = crd_alg_flags(op->sess->alg) & CRD_AF_PKE;
	if (op->op == CRD_OP_SIGN) {
		size_t n = crd_alg_tag_len(op->sess->alg);
		if (EVP_PKEY_sign_init(c) <= 0 ||
		    !ossl_pk_sig_params(w, c, pp, rsa, 1) ||
		    EVP_PKEY_sign(c, op->dst, &n, op->src, op->len) <= 0)
			return CRD_ST_BAD_PARAM; /* a salt too long, say */
		op->len = (uint32_t)n;
		return CRD_ST_OK;
	}
	if (EVP_PKEY_verify_init(c) <= 0 ||
	    !ossl_pk_sig_params(w, c, pp, rsa, 0))
		return CRD_ST_BAD_PARAM;
	int ok = EVP_PKEY_verify(c, op->aad, op->aad_len, op->src, op->len);
	op->len = 0; /* nothing written */
	return ok == 1 ? CRD_ST_OK : CRD_ST_BAD_SIGNATURE;
}

/* The peer's public key of a derive: an uncompressed point on the
 * session key's curve, or X25519's and X448's raw bytes. NULL when it is
 * none of those. */
static EVP_PKEY *ossl_pk_peer(EVP_PKEY *pk, const struct engine_op *op)
{
	if (!EVP_PKEY_is_a(pk, "EC"))
		return EVP_PKEY_new_raw_public_key_ex(
			NULL, EVP_PKEY_get0_type_name(pk), NULL, op->src,
			op->len);
	char group[64];
	size_t field = ((size_t)EVP_PKEY_get_bits(pk) + 7) / 8;
	if (op->len != 1 + 2 * field || op->src[0] != 4 ||
	    !EVP_PKEY_get_utf8_string_param(pk, OSSL_PKEY_PARAM_GROUP_NAME,
					    group, sizeof(group), NULL))
		return NULL;
	OSSL_PARAM par[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
						 group, 0),
		OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY,
						  (void *)op->src, op->len),
		OSSL_PARAM_construct_end(),
	};
	EVP_PKEY *peer = NULL;
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (!c || EVP_PKEY_fromdata_init(c) <= 0 ||
	    EVP_PKEY_fromdata(c, &peer, EVP_PKEY_PUBLIC_KEY, par) <= 0)
		peer = NULL;
	EVP_PKEY_CTX_free(c);
	return peer;
}

/* ECDH, X25519, X448: a peer that is no valid key of the session's kind
 * (off the curve, of small order) is BAD_PARAM. */
static int ossl_pk_derive(EVP_PKEY *pk, EVP_PKEY_CTX *c, struct engine_op *op)
{
	EVP_PKEY *peer = ossl_pk_peer(pk, op);
	size_t n = crd_alg_tag_len(op->sess->alg);
	int st = CRD_ST_BAD_PARAM;
	if (peer && EVP_PKEY_derive_init(c) > 0 &&
	    EVP_PKEY_derive_set_peer_ex(c, peer, 1) > 0 &&
	    EVP_PKEY_derive(c, op->dst, &n) > 0) {
		op->len = (uint32_t)n;
		st = CRD_ST_OK;
	}
	EVP_PKEY_free(peer);
	return st;
}

/* RSA-OAEP. A decryption runs from a private copy of the ciphertext
 * into private memory and reaches dst only when it checks; any failure
 * is one status (no padding oracle). */
static int ossl_pk_oaep(struct ossl_pk_worker *w, EVP_PKEY_CTX *c,
			const struct crd_pk_params *pp, struct engine_op *op)
{
	int enc = op->op == CRD_OP_ENCRYPT;
	const EVP_MD *md = ossl_pk_md(w, pp->md, w->md[CRD_SHA_1]);
	size_t room = crd_alg_tag_len(op->sess->alg), n = room;
	if ((enc ? EVP_PKEY_encrypt_init(c) : EVP_PKEY_decrypt_init(c)) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md(c, md) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_mgf1_md(c, ossl_pk_md(w, pp->mgf1_md, md)) <=
		    0)
		return CRD_ST_ENGINE;
	if (op->aad_len) { /* the label (copied by OpenSSL) */
		OSSL_PARAM par[] = {
			OSSL_PARAM_construct_octet_string(
				OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL,
				(void *)op->aad, op->aad_len),
			OSSL_PARAM_construct_end(),
		};
		if (EVP_PKEY_CTX_set_params(c, par) <= 0)
			return CRD_ST_ENGINE;
	}
	if (enc) {
		if (EVP_PKEY_encrypt(c, op->dst, &n, op->src, op->len) <= 0)
			return CRD_ST_BAD_PARAM; /* too long for the key */
		op->len = (uint32_t)n;
		return CRD_ST_OK;
	}
	if (op->len > sizeof(w->in))
		return CRD_ST_AUTH_FAILED;
	memcpy(w->in, op->src, op->len);
	int ok = EVP_PKEY_decrypt(c, w->out, &n, w->in, op->len) > 0;
	if (ok)
		memcpy(op->dst, w->out, n);
	OPENSSL_cleanse(w->out, room);
	op->len = ok ? (uint32_t)n : 0;
	return ok ? CRD_ST_OK : CRD_ST_AUTH_FAILED;
}

int ossl_pk_run(struct ossl_pk_worker *w, struct engine_op *op)
{
	EVP_PKEY *pk = ((const struct ossl_pk_key *)op->sess->key)->pkey;
	struct crd_pk_params pp = { 0 };
	unsigned flags = crd_alg_flags(op->sess->alg);
	int st;

	if (op->iv_len == sizeof(pp))
		memcpy(&pp, op->iv, sizeof(pp));
	if ((op->op == CRD_OP_SIGN || op->op == CRD_OP_VERIFY) &&
	    !(flags & CRD_AF_DIGEST))
		return ossl_pk_eddsa(w, pk, op);
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
	if (!c)
		return CRD_ST_ENGINE;
	switch (op->op) {
	case CRD_OP_SIGN:
	case CRD_OP_VERIFY:
		st = ossl_pk_sig(w, c, &pp, op);
		break;
	case CRD_OP_DERIVE:
		st = ossl_pk_derive(pk, c, op);
		break;
	default:
		st = ossl_pk_oaep(w, c, &pp, op);
		break;
	}
	EVP_PKEY_CTX_free(c);
	ERR_clear_error(); /* failures leave the thread's queue full */
	return st;
}
