/* SPDX-License-Identifier: MIT */
/*
 * Key management for key pairs the daemon holds (prov_pkey.h): the key
 * object, its session, and OpenSSL's KEYMGMT functions for RSA, EC,
 * ED25519, ED448, X25519 and X448 (provider-keymgmt(7)).
 *
 * The parameters OpenSSL asks of a key (bits, security-bits, max-size,
 * group, default digest, the encoded public key) are the public key's,
 * asked of the default provider's copy in the private context. Export
 * gives the public half only: asked for the private half (OpenSSL's
 * export of a whole key to another provider's key management, before it
 * tries the key's own provider's operations), it fails. Import takes
 * public keys only, so that a program's own private keys stay with the
 * provider that made them. The daemon's keys are made in the daemon
 * (cryptoctl key create); generation here makes the program's own key,
 * in-process, exported whole (prov_pkey_own.c), so that the order of
 * the providers does not matter.
 */
#include "prov_pkey.h"
#include <cryptod/pkey_row.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/core_object.h>
#include <openssl/params.h>
#include <openssl/x509.h>

const char *prov_pkey_type(const struct prov_pkey *k)
{
	static const char *const types[] = { "RSA",   "EC",	"ED25519",
					     "ED448", "X25519", "X448" };
	for (size_t i = 0; k->pub && i < sizeof(types) / sizeof(types[0]); i++)
		if (EVP_PKEY_is_a(k->pub, types[i]))
			return types[i];
	return "?";
}

static struct prov_pkey *pkey_new(struct prov *p)
{
	struct prov_pkey *k = calloc(1, sizeof(*k));
	if (!k) {
		PROV_ERR(p, PROV_R_NOMEM, "key object");
		return NULL;
	}
	k->p = p;
	pthread_mutex_init(&k->lock, NULL);
	return k;
}

void prov_pkey_free(struct prov_pkey *k)
{
	if (!k)
		return;
	prov_sess_close(&k->sess);
	EVP_PKEY_free(k->pub);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

struct prov_pkey *prov_pkey_open(struct prov *p, const char *name,
				 uint32_t version)
{
	if (strlen(name) > CC_KEY_NAME_MAX) {
		PROV_ERR(p, PROV_R_BAD_PARAM, "key name too long: %.64s...",
			 name);
		return NULL;
	}
	OSSL_LIB_CTX *l = prov_fb_libctx(p);
	if (!l)
		return NULL;
	/* Version 0 is pinned to the version newest now: the public key, and
	 * every session the object opens later (after a daemon restart, in
	 * a forked worker), are that version's, so that a rotation does not
	 * put a new key behind a running server's certificate of the old
	 * one (rotation keeps old versions). Loading the key again (a
	 * server's reload) takes the new one. A connection found dead (the
	 * daemon restarted under a server's master, which then reloads) is
	 * retired and the key asked for once more on a new one. */
	struct prov_conn *c;
	uint8_t der[1024];
	int n;
	for (int tries = 0;; tries++) {
		if (prov_conn_get(p, &c))
			return NULL;
		n = 0;
		if (!version) {
			struct cc_key_info info;
			n = cc_key_show(c->cc, name, &info);
			if (!n && !info.nversions)
				n = -ENOENT;
			if (!n)
				version = info.versions[info.nversions - 1];
		}
		if (!n)
			n = cc_key_pub(c->cc, name, version, der, sizeof(der));
		if (n >= 0 || tries || !prov_conn_check(p, c, n))
			break;
		prov_conn_put(c);
	}
	if (n < 0) {
		const char *why = cc_conn_last_error(c->cc);
		PROV_ERR(
			p, PROV_R_SESSION, "key %s: %s%s%s", name,
			n == CC_ERR_ACCESS
				? "no such key pair, or this uid may not use it"
				: cc_strerror(n),
			why && *why ? ": " : "", why ? why : "");
		prov_conn_check(p, c, n);
		prov_conn_put(c);
		return NULL;
	}
	prov_conn_put(c);
	const unsigned char *d = der;
	EVP_PKEY *pub = d2i_PUBKEY_ex(NULL, &d, n, l, NULL);
	unsigned alg = pub ? crd_pkey_row(pub) : 0;
	if (!alg) {
		EVP_PKEY_free(pub);
		PROV_ERR(p, PROV_R_UNSUPPORTED,
			 "key %s: not a key pair cryptod serves", name);
		return NULL;
	}
	struct prov_pkey *k = pkey_new(p);
	if (!k) {
		EVP_PKEY_free(pub);
		return NULL;
	}
	strcpy(k->name, name);
	k->version = version;
	k->alg = (enum cc_alg)alg;
	k->pub = pub;
	return k;
}

/* The key's session, opened by name if there is none on a live
 * connection; a reference to its connection for the caller. */
static int pkey_sess(struct prov_pkey *k, struct prov_conn **conn, uint32_t *id)
{
	struct prov *p = k->p;
	pthread_mutex_lock(&k->lock);
	struct prov_sess *s = &k->sess;
	/* A session of a parent's connection (the key signed before a
	 * fork) is not the child's: the child opens its own. */
	if (!(s->id && s->conn && !atomic_load(&s->conn->broken) &&
	      s->conn->forks == prov_fork_count())) {
		prov_sess_close(s);
		struct prov_conn *c;
		int err = prov_conn_get(p, &c);
		if (err) {
			pthread_mutex_unlock(&k->lock);
			return err;
		}
		struct cc_session_params sp = {
			.key_name = k->name,
			.key_version = k->version,
		};
		uint32_t sid;
		pthread_mutex_lock(&c->lock); /* see prov_sess_close */
		err = cc_session_create(c->cc, &sp, &sid);
		pthread_mutex_unlock(&c->lock);
		if (err) {
			const char *why = cc_conn_last_error(c->cc);
			PROV_ERR(p, PROV_R_SESSION, "key %s: %s%s%s", k->name,
				 err == CC_ERR_ACCESS
					 ? "no such key pair, or this uid may "
					   "not use it"
					 : cc_strerror(err),
				 why && *why ? ": " : "", why ? why : "");
			prov_conn_check(p, c, err);
			prov_conn_put(c);
			pthread_mutex_unlock(&k->lock);
			return err;
		}
		s->conn = c;
		s->id = sid;
		s->alg = k->alg;
	}
	atomic_fetch_add(&s->conn->refs, 1);
	*conn = s->conn;
	*id = s->id;
	pthread_mutex_unlock(&k->lock);
	return 0;
}

int prov_pkey_op_aad(struct prov_pkey *k, enum cc_dir dir,
		     const struct cc_pk_params *pp, const void *in,
		     size_t in_len, const void *aad, size_t aad_len, void *out,
		     size_t *out_len)
{
	static const char *const what[] = { [CC_SIGN] = "sign",
					    [CC_VERIFY] = "verify",
					    [CC_DERIVE] = "derive",
					    [CC_ENCRYPT] = "encrypt",
					    [CC_DECRYPT] = "decrypt" };
	struct prov *p = k->p;
	if (k->own)
		return prov_pkey_own_op(k, dir, pp, in, in_len, out, out_len);
	if (!k->name[0]) {
		PROV_ERR(p, PROV_R_UNSUPPORTED,
			 "a public key alone cannot %s: not a key held by "
			 "cryptod",
			 what[dir]);
		return -EINVAL;
	}
	int err = 0;
	/* A connection found dead (the daemon restarted) is retired and the
	 * op tried once more on a new one. */
	for (int tries = 0; tries < 2; tries++) {
		struct prov_conn *c;
		uint32_t id;
		err = pkey_sess(k, &c, &id);
		if (err)
			return err;
		size_t room = out_len ? *out_len : 0;
		err = pio_pk(p, c, id, dir, pp, in, in_len, aad, aad_len, out,
			     out_len);
		int dead = err && prov_conn_check(p, c, err);
		prov_conn_put(c);
		if (!err) {
			atomic_fetch_add(&p->n_daemon, 1);
			return 0;
		}
		if (!dead)
			break;
		if (out_len)
			*out_len = room;
	}
	PROV_ERR(p, prov_op_reason(err), "key %s: %s: %s", k->name, what[dir],
		 err == CC_ERR_POLICY ? "the key's usage rules forbid it"
				      : cc_strerror(err));
	return err;
}

/* ---- KEYMGMT ---- */

struct prov_pkey *prov_pkey_new(struct prov *p)
{
	return pkey_new(p);
}

static void *km_new(void *provctx)
{
	return pkey_new(provctx);
}

static void km_free(void *keydata)
{
	prov_pkey_free(keydata);
}

int prov_pkey_give(struct prov *p, const char *name, uint32_t version,
		   OSSL_CALLBACK *cb, void *cbarg)
{
	struct prov_pkey *k = prov_pkey_open(p, name, version);
	if (!k)
		return 0;
	const char *dt = prov_pkey_type(k);
	struct prov_pkey_ref ref = { .magic = PROV_PKEY_REF_MAGIC, .k = k };
	int type = OSSL_OBJECT_PKEY;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_int(OSSL_OBJECT_PARAM_TYPE, &type),
		OSSL_PARAM_construct_utf8_string(OSSL_OBJECT_PARAM_DATA_TYPE,
						 (char *)dt, strlen(dt)),
		OSSL_PARAM_construct_octet_string(OSSL_OBJECT_PARAM_REFERENCE,
						  &ref, sizeof(ref)),
		OSSL_PARAM_construct_end(),
	};
	/* A caller that wanted another kind of object (a certificate)
	 * never calls the load, and k is lost: one small leak per such
	 * misuse. */
	return cb(params, cbarg);
}

/* The key object a store loader or decoder made (prov_pkey_give),
 * handed over. */
static void *km_load(const void *reference, size_t reference_sz)
{
	struct prov_pkey_ref ref;
	if (!reference || reference_sz != sizeof(ref))
		return NULL;
	memcpy(&ref, reference, sizeof(ref));
	return ref.magic == PROV_PKEY_REF_MAGIC ? ref.k : NULL;
}

/* What EVP_PKEY_copy_parameters and EVP_PKEY_dup ask (libssl makes a
 * handshake's peer key so). The private half goes only where asked for:
 * a daemon key's name, an own key's ownership; what else the copy's
 * EVP_PKEY holds is the program's already. */
static void *km_dup(const void *keydata, int selection)
{
	const struct prov_pkey *k = keydata;
	struct prov_pkey *d = k ? pkey_new(k->p) : NULL;
	if (!d)
		return NULL;
	if (k->pub && !(d->pub = EVP_PKEY_dup(k->pub))) {
		prov_pkey_free(d);
		return NULL;
	}
	d->alg = k->alg;
	if (selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY) {
		strcpy(d->name, k->name);
		d->version = k->version;
		d->own = k->own;
	}
	return d;
}

static int km_has(const void *keydata, int selection)
{
	const struct prov_pkey *k = keydata;
	if (!k)
		return 0;
	int ok = 1;
	if (selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY)
		ok = ok && (k->name[0] || k->own);
	if (selection & (OSSL_KEYMGMT_SELECT_PUBLIC_KEY |
			 OSSL_KEYMGMT_SELECT_ALL_PARAMETERS))
		ok = ok && k->pub;
	return ok;
}

static int km_match(const void *a, const void *b, int selection)
{
	const struct prov_pkey *x = a, *y = b;
	if (!x->pub || !y->pub)
		return 0;
	if ((selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY) &&
	    (x->name[0] || y->name[0]) &&
	    (strcmp(x->name, y->name) || x->version != y->version))
		return 0;
	if (selection & OSSL_KEYMGMT_SELECT_KEYPAIR)
		return EVP_PKEY_eq(x->pub, y->pub) == 1;
	int r = EVP_PKEY_parameters_eq(x->pub, y->pub);
	return r == 1 || r == -2; /* -2: the type has no parameters */
}

static int km_get_params(void *keydata, OSSL_PARAM params[])
{
	struct prov_pkey *k = keydata;
	return k && k->pub && EVP_PKEY_get_params(k->pub, params);
}

static const OSSL_PARAM km_gettable[] = {
	OSSL_PARAM_int(OSSL_PKEY_PARAM_BITS, NULL),
	OSSL_PARAM_int(OSSL_PKEY_PARAM_SECURITY_BITS, NULL),
	OSSL_PARAM_int(OSSL_PKEY_PARAM_MAX_SIZE, NULL),
	OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_DEFAULT_DIGEST, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_MANDATORY_DIGEST, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, NULL,
			       0),
	OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_N, NULL, 0),
	OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_E, NULL, 0),
	OSSL_PARAM_END
};

static const OSSL_PARAM *km_gettable_params(void *provctx)
{
	return km_gettable;
}

/* A key the program holds (a peer's made from parameters, as libssl
 * makes the peer of a handshake, then given its encoded public key),
 * never a daemon key's. */
static int km_set_params(void *keydata, const OSSL_PARAM params[])
{
	struct prov_pkey *k = keydata;
	if (!params || !params[0].key)
		return 1;
	if (!k || !k->pub || k->name[0] ||
	    EVP_PKEY_set_params(k->pub, (OSSL_PARAM *)params) != 1)
		return 0;
	k->alg = (enum cc_alg)crd_pkey_row(k->pub); /* 0: not a row's */
	return 1;
}

static const OSSL_PARAM km_settable[] = {
	OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, NULL, 0),
	OSSL_PARAM_END
};

static const OSSL_PARAM *km_settable_params(void *provctx)
{
	return km_settable;
}

static int km_export(void *keydata, int selection, OSSL_CALLBACK *cb,
		     void *cbarg)
{
	struct prov_pkey *k = keydata;
	/* Never a daemon key's private half (there is none here); asking
	 * for it is OpenSSL trying another provider's operation on the key
	 * first. The program's own key goes whole. */
	if (!k || !k->pub ||
	    (k->name[0] && (selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY)))
		return 0;
	int sel = k->own && (selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY)
			  ? EVP_PKEY_KEYPAIR
			  : EVP_PKEY_PUBLIC_KEY;
	OSSL_PARAM *params = NULL;
	if (EVP_PKEY_todata(k->pub, sel, &params) != 1)
		return 0;
	int ok = cb(params, cbarg);
	OSSL_PARAM_free(params);
	return ok;
}

/* A public key from OpenSSL (a peer's, a certificate's). A private one
 * is refused: it belongs to the provider that holds it. */
static int km_import_type(void *keydata, int selection,
			  const OSSL_PARAM params[], const char *type)
{
	struct prov_pkey *k = keydata;
	if (!k || OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_PRIV_KEY) ||
	    OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_RSA_D))
		return 0;
	OSSL_LIB_CTX *l = prov_fb_libctx(k->p);
	EVP_PKEY_CTX *c = l ? EVP_PKEY_CTX_new_from_name(l, type, NULL) : NULL;
	EVP_PKEY *pk = NULL;
	int sel = selection & OSSL_KEYMGMT_SELECT_PUBLIC_KEY
			  ? EVP_PKEY_PUBLIC_KEY
			  : EVP_PKEY_KEY_PARAMETERS;
	int ok = c && EVP_PKEY_fromdata_init(c) == 1 &&
		 EVP_PKEY_fromdata(c, &pk, sel, (OSSL_PARAM *)params) == 1;
	EVP_PKEY_CTX_free(c);
	if (!ok)
		return 0;
	EVP_PKEY_free(k->pub);
	k->pub = pk;
	k->alg = (enum cc_alg)crd_pkey_row(pk); /* 0: not a row's */
	return 1;
}

static const OSSL_PARAM km_params_rsa[] = {
	OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_N, NULL, 0),
	OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_E, NULL, 0), OSSL_PARAM_END
};
static const OSSL_PARAM km_params_ec[] = {
	OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_EC_ENCODING, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, NULL,
			       0),
	OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, NULL, 0),
	OSSL_PARAM_END
};
static const OSSL_PARAM km_params_ecx[] = {
	OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, NULL, 0),
	OSSL_PARAM_END
};

static const OSSL_PARAM *km_types(int selection, const OSSL_PARAM *t)
{
	return selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY ? NULL : t;
}

static const char *km_ec_op_name(int operation_id)
{
	switch (operation_id) {
	case OSSL_OP_SIGNATURE:
		return "ECDSA";
	case OSSL_OP_KEYEXCH:
		return "ECDH";
	}
	return NULL;
}

/* One dispatch table per key type: the import needs the type's name. */
#define KM_TYPE(id, type, types, opname)                                       \
	static int km_import_##id(void *k, int sel, const OSSL_PARAM p[])      \
	{                                                                      \
		return km_import_type(k, sel, p, type);                        \
	}                                                                      \
	static const OSSL_PARAM *km_types_##id(int selection)                  \
	{                                                                      \
		return km_types(selection, types);                             \
	}                                                                      \
	static void *km_gen_init_##id(void *provctx, int selection,            \
				      const OSSL_PARAM params[])               \
	{                                                                      \
		return prov_pkey_gen_init(provctx, selection, params, type);   \
	}                                                                      \
	static const OSSL_PARAM *km_gen_settable_##id(void *genctx,            \
						      void *provctx)           \
	{                                                                      \
		return prov_pkey_gen_settable(provctx, type);                  \
	}                                                                      \
	static const OSSL_DISPATCH km_##id[] = {                               \
		{ OSSL_FUNC_KEYMGMT_NEW, (void (*)(void))km_new },             \
		{ OSSL_FUNC_KEYMGMT_FREE, (void (*)(void))km_free },           \
		{ OSSL_FUNC_KEYMGMT_LOAD, (void (*)(void))km_load },           \
		{ OSSL_FUNC_KEYMGMT_HAS, (void (*)(void))km_has },             \
		{ OSSL_FUNC_KEYMGMT_MATCH, (void (*)(void))km_match },         \
		{ OSSL_FUNC_KEYMGMT_GET_PARAMS,                                \
		  (void (*)(void))km_get_params },                             \
		{ OSSL_FUNC_KEYMGMT_GETTABLE_PARAMS,                           \
		  (void (*)(void))km_gettable_params },                        \
		{ OSSL_FUNC_KEYMGMT_SET_PARAMS,                                \
		  (void (*)(void))km_set_params },                             \
		{ OSSL_FUNC_KEYMGMT_SETTABLE_PARAMS,                           \
		  (void (*)(void))km_settable_params },                        \
		{ OSSL_FUNC_KEYMGMT_DUP, (void (*)(void))km_dup },             \
		{ OSSL_FUNC_KEYMGMT_EXPORT, (void (*)(void))km_export },       \
		{ OSSL_FUNC_KEYMGMT_EXPORT_TYPES,                              \
		  (void (*)(void))km_types_##id },                             \
		{ OSSL_FUNC_KEYMGMT_IMPORT, (void (*)(void))km_import_##id },  \
		{ OSSL_FUNC_KEYMGMT_IMPORT_TYPES,                              \
		  (void (*)(void))km_types_##id },                             \
		{ OSSL_FUNC_KEYMGMT_GEN_INIT,                                  \
		  (void (*)(void))km_gen_init_##id },                          \
		{ OSSL_FUNC_KEYMGMT_GEN_SET_TEMPLATE,                          \
		  (void (*)(void))prov_pkey_gen_set_template },                \
		{ OSSL_FUNC_KEYMGMT_GEN_SET_PARAMS,                            \
		  (void (*)(void))prov_pkey_gen_set_params },                  \
		{ OSSL_FUNC_KEYMGMT_GEN_SETTABLE_PARAMS,                       \
		  (void (*)(void))km_gen_settable_##id },                      \
		{ OSSL_FUNC_KEYMGMT_GEN, (void (*)(void))prov_pkey_gen },      \
		{ OSSL_FUNC_KEYMGMT_GEN_CLEANUP,                               \
		  (void (*)(void))prov_pkey_gen_cleanup },                     \
		opname{ 0, NULL },                                             \
	};

#define KM_NO_OPNAME
#define KM_EC_OPNAME                                                           \
	{ OSSL_FUNC_KEYMGMT_QUERY_OPERATION_NAME,                              \
	  (void (*)(void))km_ec_op_name },

KM_TYPE(rsa, "RSA", km_params_rsa, KM_NO_OPNAME)
KM_TYPE(ec, "EC", km_params_ec, KM_EC_OPNAME)
KM_TYPE(ed25519, "ED25519", km_params_ecx, KM_NO_OPNAME)
KM_TYPE(ed448, "ED448", km_params_ecx, KM_NO_OPNAME)
KM_TYPE(x25519, "X25519", km_params_ecx, KM_NO_OPNAME)
KM_TYPE(x448, "X448", km_params_ecx, KM_NO_OPNAME)

/* The names as the default provider spells them (one name space). */
const OSSL_ALGORITHM prov_pkey_keymgmt[] = {
	{ "RSA:rsaEncryption:1.2.840.113549.1.1.1", PROV_PKEY_PROPS, km_rsa,
	  NULL },
	{ "EC:id-ecPublicKey:1.2.840.10045.2.1", PROV_PKEY_PROPS, km_ec, NULL },
	{ "ED25519:1.3.101.112", PROV_PKEY_PROPS, km_ed25519, NULL },
	{ "ED448:1.3.101.113", PROV_PKEY_PROPS, km_ed448, NULL },
	{ "X25519:1.3.101.110", PROV_PKEY_PROPS, km_x25519, NULL },
	{ "X448:1.3.101.111", PROV_PKEY_PROPS, km_x448, NULL },
	{ NULL, NULL, NULL, NULL },
};
