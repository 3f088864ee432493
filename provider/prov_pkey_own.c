/* SPDX-License-Identifier: MIT */
/*
 * Keys the program makes through our key management ("own" keys,
 * prov_pkey.h), so that the order of the providers does not matter.
 *
 * A fetch by key type with no key yet (EVP_PKEY_keygen by name: a TLS
 * handshake's ephemeral X25519 or P-256 key, openssl genpkey) may find
 * our key management before the default provider's when cryptod is
 * loaded first. So ours generates too: on the default provider of the
 * private library context (prov_fb_libctx), into a key object that holds
 * the whole key pair. It is the program's key, not the daemon's, and is
 * used as the default provider would use it: in-process (signing here,
 * derive and decrypt in prov_pkey_kex.c and prov_pkey_cipher.c), and
 * exported in full to another provider that asks (an encoder writing it
 * out, another provider's operation). Nothing goes to the daemon.
 */
#include "prov_pkey.h"
#include <cryptod/pkey_row.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/rsa.h>

/* The most OSSL_PARAM lists a generation keeps (gen_set_params calls:
 * OpenSSL makes one per -pkeyopt, a few at most). */
#define GEN_SETS 16

struct own_gen {
	struct prov *p;
	const char *type; /* "RSA", "EC", ... (static) */
	int selection;
	EVP_PKEY *templ;	    /* owned: the template's key, or NULL */
	OSSL_PARAM *sets[GEN_SETS]; /* owned: each gen_set_params' copy */
	unsigned nsets;
};

void *prov_pkey_gen_init(void *provctx, int selection,
			 const OSSL_PARAM params[], const char *type)
{
	struct own_gen *g = calloc(1, sizeof(*g));
	if (!g) {
		PROV_ERR(provctx, PROV_R_NOMEM, "key generation");
		return NULL;
	}
	g->p = provctx;
	g->type = type;
	g->selection = selection;
	if (!prov_pkey_gen_set_params(g, params)) {
		prov_pkey_gen_cleanup(g);
		return NULL;
	}
	return g;
}

void prov_pkey_gen_cleanup(void *genctx)
{
	struct own_gen *g = genctx;
	if (!g)
		return;
	for (unsigned i = 0; i < g->nsets; i++)
		OSSL_PARAM_free(g->sets[i]);
	EVP_PKEY_free(g->templ);
	free(g);
}

/* Kept, and given to the default provider's generation in order: the
 * caller's lists need not outlive this call. */
int prov_pkey_gen_set_params(void *genctx, const OSSL_PARAM params[])
{
	struct own_gen *g = genctx;
	if (!params || !params[0].key)
		return 1;
	if (g->nsets == GEN_SETS) {
		PROV_ERR(g->p, PROV_R_BAD_PARAM,
			 "key generation: more than %d parameter lists",
			 GEN_SETS);
		return 0;
	}
	OSSL_PARAM *d = OSSL_PARAM_dup(params);
	if (!d)
		return 0;
	g->sets[g->nsets++] = d;
	return 1;
}

int prov_pkey_gen_set_template(void *genctx, void *templ)
{
	struct own_gen *g = genctx;
	struct prov_pkey *t = templ;
	if (!t || !t->pub || !EVP_PKEY_up_ref(t->pub))
		return 0;
	EVP_PKEY_free(g->templ);
	g->templ = t->pub;
	return 1;
}

/* The default provider's list for type (its key management's). */
const OSSL_PARAM *prov_pkey_gen_settable(void *provctx, const char *type)
{
	OSSL_LIB_CTX *l = prov_fb_libctx(provctx);
	EVP_KEYMGMT *km = l ? EVP_KEYMGMT_fetch(l, type, NULL) : NULL;
	/* Static in the default provider, which stays loaded. */
	const OSSL_PARAM *t = km ? EVP_KEYMGMT_gen_settable_params(km) : NULL;
	EVP_KEYMGMT_free(km);
	return t;
}

void *prov_pkey_gen(void *genctx, OSSL_CALLBACK *cb, void *cbarg)
{
	struct own_gen *g = genctx;
	OSSL_LIB_CTX *l = prov_fb_libctx(g->p);
	if (!l)
		return NULL;
	int pair = g->selection & OSSL_KEYMGMT_SELECT_KEYPAIR;
	EVP_PKEY_CTX *c =
		g->templ ? EVP_PKEY_CTX_new_from_pkey(l, g->templ, NULL)
			 : EVP_PKEY_CTX_new_from_name(l, g->type, NULL);
	int ok = c && (pair ? EVP_PKEY_keygen_init(c)
			    : EVP_PKEY_paramgen_init(c)) == 1;
	for (unsigned i = 0; ok && i < g->nsets; i++)
		ok = EVP_PKEY_CTX_set_params(c, g->sets[i]) == 1;
	EVP_PKEY *pk = NULL;
	ok = ok && EVP_PKEY_generate(c, &pk) == 1;
	EVP_PKEY_CTX_free(c);
	if (!ok) {
		PROV_ERR(g->p, PROV_R_FALLBACK,
			 "%s: generating a key in-process failed", g->type);
		return NULL;
	}
	struct prov_pkey *k = prov_pkey_new(g->p);
	if (!k) {
		EVP_PKEY_free(pk);
		return NULL;
	}
	k->pub = pk;
	k->own = pair != 0; /* parameters alone: as a public key's */
	k->alg = (enum cc_alg)crd_pkey_row(pk); /* 0: not a row's */
	return k;
}

/* A signature with an own key, in-process: cc_pk_op's parameters
 * (prov_pkey_sig.c's) turned back into OpenSSL's. */
int prov_pkey_own_op(struct prov_pkey *k, enum cc_dir dir,
		     const struct cc_pk_params *pp, const void *in,
		     size_t in_len, void *out, size_t *out_len)
{
	OSSL_LIB_CTX *l = prov_fb_libctx(k->p);
	if (!l)
		return -ENOMEM;
	if (dir != CC_SIGN) {
		PROV_ERR(k->p, PROV_R_STATE, "a program's own key: op %d", dir);
		return -EINVAL;
	}
	int ok;
	if (EVP_PKEY_is_a(k->pub, "ED25519") ||
	    EVP_PKEY_is_a(k->pub, "ED448")) {
		EVP_MD_CTX *m = EVP_MD_CTX_new();
		ok = m &&
		     EVP_DigestSignInit_ex(m, NULL, NULL, l, NULL, k->pub,
					   NULL) == 1 &&
		     EVP_DigestSign(m, out, out_len, in, in_len) == 1;
		EVP_MD_CTX_free(m);
	} else {
		OSSL_PARAM ps[5], *q = ps;
		int pad = RSA_PKCS1_PSS_PADDING, salt = 0;
		if (pp && pp->md)
			*q++ = OSSL_PARAM_construct_utf8_string(
				OSSL_SIGNATURE_PARAM_DIGEST,
				(char *)cc_alg_name(CC_ALG_SHA1 + pp->md - 1),
				0);
		if (pp && pp->pad == CC_PK_PAD_PSS) {
			salt = pp->salt_len == CC_PK_SALT_DIGEST
				       ? RSA_PSS_SALTLEN_DIGEST
			       : pp->salt_len == CC_PK_SALT_MAX
				       ? RSA_PSS_SALTLEN_MAX
				       : pp->salt_len;
			*q++ = OSSL_PARAM_construct_int(
				OSSL_SIGNATURE_PARAM_PAD_MODE, &pad);
			*q++ = OSSL_PARAM_construct_int(
				OSSL_SIGNATURE_PARAM_PSS_SALTLEN, &salt);
			if (pp->mgf1_md)
				*q++ = OSSL_PARAM_construct_utf8_string(
					OSSL_SIGNATURE_PARAM_MGF1_DIGEST,
					(char *)cc_alg_name(CC_ALG_SHA1 +
							    pp->mgf1_md - 1),
					0);
		}
		*q = OSSL_PARAM_construct_end();
		EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(l, k->pub, NULL);
		ok = c && EVP_PKEY_sign_init_ex(c, ps) == 1 &&
		     EVP_PKEY_sign(c, out, out_len, in, in_len) == 1;
		EVP_PKEY_CTX_free(c);
	}
	if (!ok) {
		PROV_ERR(k->p, PROV_R_FALLBACK,
			 "signing in-process with the program's own key "
			 "failed");
		return -EINVAL;
	}
	return 0;
}

/*
 * TLS groups. libssl keeps a group (X25519, P-256...) only if the key
 * management it fetches for the group's key type is the one of the
 * provider that declared the group: with cryptod first that is ours, so
 * we declare the default provider's groups of the key types we serve
 * (EC, X25519, X448), as it declares them. Else a handshake with cryptod
 * first finds no ECDHE group (TLS 1.2's ECDHE suites: "no shared
 * cipher").
 */
struct caps_arg {
	OSSL_CALLBACK *cb;
	void *arg;
};

static int caps_group(const OSSL_PARAM params[], void *varg)
{
	struct caps_arg *a = varg;
	static const char *const ours[] = { "EC", "X25519", "X448" };
	const char *alg = NULL;
	const OSSL_PARAM *q =
		OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_ALG);
	if (!q || !OSSL_PARAM_get_utf8_string_ptr(q, &alg))
		return 1;
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!strcmp(alg, ours[i]))
			return a->cb(params, a->arg);
	return 1;
}

int prov_pkey_capabilities(void *provctx, const char *capability,
			   OSSL_CALLBACK *cb, void *arg)
{
	struct prov *p = provctx;
	if (strcmp(capability, "TLS-GROUP"))
		return 1;
	/* No default provider here: no groups of ours, and no failure, which
	 * would fail every SSL_CTX_new. */
	ERR_set_mark();
	if (!prov_fb_libctx(p) || !p->fb_default) {
		ERR_pop_to_mark();
		return 1;
	}
	ERR_clear_last_mark();
	struct caps_arg a = { cb, arg };
	return OSSL_PROVIDER_get_capabilities(p->fb_default, "TLS-GROUP",
					      caps_group, &a);
}
