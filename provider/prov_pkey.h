/* SPDX-License-Identifier: MIT */
/*
 * Key pairs the daemon holds, through the provider (docs/asymmetric.md,
 * "The provider"): the key object the key management hands OpenSSL, and
 * what the signature, key exchange and store files share.
 *
 * A key object names a key in the daemon and keeps its public half,
 * parsed in-process on the private library context's default provider
 * (prov_fb_*), so that parameters, export of the public key, has(),
 * match() and certificate checks need no daemon. Its private half never
 * enters the program: sign and derive go to the daemon on a session
 * opened by name on first use. A key object with no name is a public key
 * imported from OpenSSL (a peer's, a certificate's): it verifies and is a
 * peer, nothing more; or, "own", a key pair our key management generated
 * for the program, used in-process (prov_pkey_own.c).
 */
#ifndef CRYPTOD_PROV_PKEY_H
#define CRYPTOD_PROV_PKEY_H

#include "prov.h"

/* What the key management, signature, asymmetric cipher and key
 * exchange algorithms of key pairs declare: no "provider=cryptod", so
 * that a query for the default provider's does not pass over them;
 * OpenSSL finds ours from the key's provider. A fetch of a key type with
 * no key yet (a TLS handshake's ephemeral X25519 key, EVP_PKEY_keygen)
 * finds ours when cryptod is loaded first: it makes the program's own
 * key, in-process (prov_pkey_own.c). */
#define PROV_PKEY_PROPS "cryptod.keys=yes"

struct prov_pkey {
	struct prov *p;
	char name[CC_KEY_NAME_MAX + 1]; /* "" = a public key alone */
	uint32_t version;		/* pinned: never 0 once opened */
	enum cc_alg alg;		/* the row (rsa-2048 ... x448) */
	EVP_PKEY *pub;			/* owned; in p's private context */
	int own; /* pub is the program's own key pair, private half and
		  * all (our key management made it): used in-process,
		  * exported in full (prov_pkey_own.c) */
	pthread_mutex_t lock;  /* sess */
	struct prov_sess sess; /* on the daemon, opened on use */
};

/* What the store and the decoder hand OpenSSL (OSSL_OBJECT_PARAM_
 * REFERENCE) and our key management's load takes back: not a bare
 * pointer, whose size another provider's load would take for its own
 * key object (OpenSSL's file store asks the default provider's key
 * management first); this one it refuses. */
#define PROV_PKEY_REF_MAGIC 0x63727970746f646bULL /* "cryptodk" */
struct prov_pkey_ref {
	uint64_t magic;
	struct prov_pkey *k; /* handed over to the load */
	uint64_t pad;	     /* no other provider's pointer size */
};
/* What the store loader and the key-reference decoder do with a name:
 * the key object opened (prov_pkey_open) and handed to cb by reference
 * as OSSL_OBJECT params, for our key management's load to take over.
 * 0 with an error raised when it does not open; else cb's return. */
int prov_pkey_give(struct prov *p, const char *name, uint32_t version,
		   OSSL_CALLBACK *cb, void *cbarg);

/* The key's type as OpenSSL names it ("RSA", "EC", "ED25519"...). */
const char *prov_pkey_type(const struct prov_pkey *k);

/* A key object for name (version 0: the newest, pinned to its number
 * now, so that a later rotation does not change the key under it) from
 * the daemon: its public key fetched (cc_key_pub) and parsed. NULL with an error raised
 * naming cryptod and the key. */
struct prov_pkey *prov_pkey_open(struct prov *p, const char *name,
				 uint32_t version);
void prov_pkey_free(struct prov_pkey *k);

/* One op on the key's session (opened or re-opened here) on the calling
 * thread's queue (pio_pk: an ASYNC_JOB pauses): cc_pk_op's arguments and
 * result (aad: an OAEP label); errors raised. */
int prov_pkey_op_aad(struct prov_pkey *k, enum cc_dir dir,
		     const struct cc_pk_params *pp, const void *in,
		     size_t in_len, const void *aad, size_t aad_len, void *out,
		     size_t *out_len);
static inline int prov_pkey_op(struct prov_pkey *k, enum cc_dir dir,
			       const struct cc_pk_params *pp, const void *in,
			       size_t in_len, void *out, size_t *out_len)
{
	return prov_pkey_op_aad(k, dir, pp, in, in_len, NULL, 0, out, out_len);
}

/* An empty key object (km_new's). */
struct prov_pkey *prov_pkey_new(struct prov *p);

/* Generation of the program's own keys, on the default provider of the
 * private context (prov_pkey_own.c): the key management's gen functions
 * for type ("RSA", "EC", ...). */
void *prov_pkey_gen_init(void *provctx, int selection,
			 const OSSL_PARAM params[], const char *type);
int prov_pkey_gen_set_params(void *genctx, const OSSL_PARAM params[]);
int prov_pkey_gen_set_template(void *genctx, void *templ);
const OSSL_PARAM *prov_pkey_gen_settable(void *provctx, const char *type);
void *prov_pkey_gen(void *genctx, OSSL_CALLBACK *cb, void *cbarg);
void prov_pkey_gen_cleanup(void *genctx);
/* The provider's get_capabilities: the default provider's TLS groups of
 * the key types our key management serves. */
int prov_pkey_capabilities(void *provctx, const char *capability,
			   OSSL_CALLBACK *cb, void *arg);
/* prov_pkey_op's sign with an own key, in-process. */
int prov_pkey_own_op(struct prov_pkey *k, enum cc_dir dir,
		     const struct cc_pk_params *pp, const void *in,
		     size_t in_len, void *out, size_t *out_len);

extern const OSSL_ALGORITHM prov_pkey_keymgmt[];
extern const OSSL_ALGORITHM prov_pkey_signature[];
extern const OSSL_ALGORITHM prov_pkey_keyexch[];
extern const OSSL_ALGORITHM prov_pkey_asym_cipher[];
extern const OSSL_ALGORITHM prov_pkey_store[];
extern const OSSL_ALGORITHM prov_pkey_decoder[];

/* The core's BIO functions, which the key-reference decoder reads its
 * input with (prov_pkey_ref.c); from OSSL_provider_init's in. */
void prov_pkey_ref_init(const OSSL_DISPATCH *in);

#endif
