/* SPDX-License-Identifier: MIT */
/*
 * The store loader for cryptod:NAME and cryptod:NAME?version=N
 * (provider-storemgmt(7)): one object, the key object of the daemon's
 * key pair NAME (prov_pkey_open), handed to OpenSSL by reference
 * (OSSL_OBJECT_PKEY, the pointer; our key management's load takes it).
 * So `openssl pkeyutl -sign -inkey cryptod:site`, `openssl req -key
 * cryptod:site`, `openssl s_server -key cryptod:site` sign in the daemon.
 */
#include "prov_pkey.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/core_object.h>
#include <openssl/params.h>

#define STORE_SCHEME "cryptod:"

struct store_ctx {
	struct prov *p;
	char name[CC_KEY_NAME_MAX + 1];
	uint32_t version;
	int done;
};

static void *store_open(void *provctx, const char *uri)
{
	struct prov *p = provctx;
	if (strncmp(uri, STORE_SCHEME, strlen(STORE_SCHEME)))
		return NULL;
	const char *name = uri + strlen(STORE_SCHEME);
	size_t n = strcspn(name, "?");
	uint32_t version = 0;
	if (name[n]) {
		const char *v = name + n + 1;
		char *end;
		unsigned long x = strncmp(v, "version=", 8)
					  ? 0
					  : strtoul(v + 8, &end, 10);
		if (!x || *end || x > UINT32_MAX) {
			PROV_ERR(p, PROV_R_BAD_PARAM,
				 "%s: expected cryptod:NAME or "
				 "cryptod:NAME?version=N",
				 uri);
			return NULL;
		}
		version = (uint32_t)x;
	}
	if (!n || n > CC_KEY_NAME_MAX) {
		PROV_ERR(p, PROV_R_BAD_PARAM, "%s: no key name, or too long",
			 uri);
		return NULL;
	}
	struct store_ctx *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->p = p;
	memcpy(s->name, name, n);
	s->version = version;
	return s;
}

static int store_load(void *vctx, OSSL_CALLBACK *object_cb, void *object_cbarg,
		      OSSL_PASSPHRASE_CALLBACK *pw_cb, void *pw_cbarg)
{
	struct store_ctx *s = vctx;
	s->done = 1;
	return prov_pkey_give(s->p, s->name, s->version, object_cb,
			      object_cbarg);
}

static int store_eof(void *vctx)
{
	return ((struct store_ctx *)vctx)->done;
}

static int store_close(void *vctx)
{
	free(vctx);
	return 1;
}

static int store_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	return 1;
}

static const OSSL_PARAM store_none[] = { OSSL_PARAM_END };

static const OSSL_PARAM *store_settable_ctx_params(void *provctx)
{
	return store_none;
}

static const OSSL_DISPATCH store_fns[] = {
	{ OSSL_FUNC_STORE_OPEN, (void (*)(void))store_open },
	{ OSSL_FUNC_STORE_LOAD, (void (*)(void))store_load },
	{ OSSL_FUNC_STORE_EOF, (void (*)(void))store_eof },
	{ OSSL_FUNC_STORE_CLOSE, (void (*)(void))store_close },
	{ OSSL_FUNC_STORE_SET_CTX_PARAMS,
	  (void (*)(void))store_set_ctx_params },
	{ OSSL_FUNC_STORE_SETTABLE_CTX_PARAMS,
	  (void (*)(void))store_settable_ctx_params },
	{ 0, NULL },
};

const OSSL_ALGORITHM prov_pkey_store[] = {
	{ "cryptod", "provider=cryptod", store_fns, NULL },
	{ NULL, NULL, NULL, NULL },
};
