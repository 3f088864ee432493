/* SPDX-License-Identifier: MIT */
/*
 * cryptod.so: the provider's entry point, its parameters and
 * configuration (errors and the fallback: prov.c).
 *
 * Configuration, in the provider's openssl.cnf section (else the
 * environment, else the default):
 *   socket   = PATH              ($CRYPTOD_SOCKET, else the library's default)
 *   fallback = fail | default-provider
 *                                ($CRYPTOD_PROVIDER_FALLBACK; fail)
 * ("default" alone would name openssl.cnf's global section, which the
 * config loader follows as a section reference; the environment may
 * say default.)
 *   min_size = BYTES             ($CRYPTOD_PROVIDER_MIN_SIZE; 0 = off)
 *   algorithms = LIST            ($CRYPTOD_PROVIDER_ALGORITHMS; all)
 * LIST is a comma-separated subset of ciphers, digests, macs (or all):
 * the operations the provider offers at all (daemon-held key pairs are
 * always offered: they act on cryptod's keys only). A TLS program that wants
 * only its record crypto on the daemon says ciphers, and its handshake's
 * many small digests, HMACs and HKDF keys stay on the default provider.
 *
 * The counters go to the daemon too (prov_report), so that cryptoctl
 * clients and stats show them per connection and per program.
 */
#include "prov.h"
#include "prov_pkey.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#ifndef CRYPTOD_VERSION
#define CRYPTOD_VERSION "0"
#endif

/* The core's parameters (openssl.cnf); its error functions: prov.c. */
static OSSL_FUNC_core_get_params_fn *c_get_params;

/* ---- Provider parameters ---- */

static const OSSL_PARAM prov_param_types[] = {
	OSSL_PARAM_DEFN(OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR, NULL, 0),
	OSSL_PARAM_DEFN(OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR, NULL, 0),
	OSSL_PARAM_DEFN(OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR, NULL,
			0),
	OSSL_PARAM_DEFN(OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER, NULL, 0),
	OSSL_PARAM_DEFN("cryptod-daemon-messages", OSSL_PARAM_UNSIGNED_INTEGER,
			NULL, 0),
	OSSL_PARAM_DEFN("cryptod-fallbacks", OSSL_PARAM_UNSIGNED_INTEGER, NULL,
			0),
	OSSL_PARAM_DEFN("cryptod-inprocess", OSSL_PARAM_UNSIGNED_INTEGER, NULL,
			0),
	OSSL_PARAM_END
};

static const OSSL_PARAM *prov_gettable_params(void *provctx)
{
	return prov_param_types;
}

static int prov_get_params(void *provctx, OSSL_PARAM params[])
{
	struct prov *p = provctx;
	OSSL_PARAM *q;
	if ((q = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME)) &&
	    !OSSL_PARAM_set_utf8_ptr(q, "cryptod provider"))
		return 0;
	if ((q = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION)) &&
	    !OSSL_PARAM_set_utf8_ptr(q, CRYPTOD_VERSION))
		return 0;
	if ((q = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO)) &&
	    !OSSL_PARAM_set_utf8_ptr(q, "cryptod " CRYPTOD_VERSION
					"; built with " OPENSSL_VERSION_TEXT))
		return 0;
	if ((q = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS)) &&
	    !OSSL_PARAM_set_int(q, 1))
		return 0;
	if ((q = OSSL_PARAM_locate(params, "cryptod-daemon-messages")) &&
	    !OSSL_PARAM_set_uint64(q, atomic_load(&p->n_daemon)))
		return 0;
	if ((q = OSSL_PARAM_locate(params, "cryptod-fallbacks")) &&
	    !OSSL_PARAM_set_uint64(q, atomic_load(&p->n_fallback)))
		return 0;
	if ((q = OSSL_PARAM_locate(params, "cryptod-inprocess")) &&
	    !OSSL_PARAM_set_uint64(q, atomic_load(&p->n_inprocess)))
		return 0;
	return 1;
}

static const OSSL_ALGORITHM *prov_query(void *provctx, int operation_id,
					int *no_cache)
{
	*no_cache = 0;
	const struct prov *p = provctx;
	switch (operation_id) {
	case OSSL_OP_CIPHER:
		return p->ops & PROV_OP_CIPHERS ? prov_ciphers : NULL;
	case OSSL_OP_DIGEST:
		return p->ops & PROV_OP_DIGESTS ? prov_digests : NULL;
	case OSSL_OP_MAC:
		return p->ops & PROV_OP_MACS ? prov_macs : NULL;
	/* Key pairs the daemon holds (prov_pkey_*.c): whatever
	 * algorithms says, they act only on cryptod's keys. */
	case OSSL_OP_KEYMGMT:
		return prov_pkey_keymgmt;
	case OSSL_OP_SIGNATURE:
		return prov_pkey_signature;
	case OSSL_OP_KEYEXCH:
		return prov_pkey_keyexch;
	case OSSL_OP_ASYM_CIPHER:
		return prov_pkey_asym_cipher;
	case OSSL_OP_STORE:
		return prov_pkey_store;
	case OSSL_OP_DECODER:
		return prov_pkey_decoder;
	}
	return NULL;
}

static const OSSL_ITEM *prov_reason_strings(void *provctx)
{
	return prov_reason_items();
}

static void prov_teardown(void *provctx)
{
	struct prov *p = provctx;
	prov_usage_remove(p);
	if (getenv("CRYPTOD_PROVIDER_STATS"))
		fprintf(stderr,
			"cryptod provider: %llu messages on the daemon, %llu "
			"fallbacks, %llu in-process (below min_size)\n",
			(unsigned long long)atomic_load(&p->n_daemon),
			(unsigned long long)atomic_load(&p->n_fallback),
			(unsigned long long)atomic_load(&p->n_inprocess));
	prov_report(p, 1);
	prov_io_fini(p);
	prov_conn_fini(p);
	if (p->fb_default)
		OSSL_PROVIDER_unload(p->fb_default);
	OSSL_LIB_CTX_free(p->fb_libctx);
	pthread_mutex_destroy(&p->rep_lock);
	pthread_mutex_destroy(&p->lock);
	free(p->socket);
	free(p);
}

static const OSSL_DISPATCH prov_dispatch[] = {
	{ OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))prov_teardown },
	{ OSSL_FUNC_PROVIDER_GETTABLE_PARAMS,
	  (void (*)(void))prov_gettable_params },
	{ OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))prov_get_params },
	{ OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))prov_query },
	{ OSSL_FUNC_PROVIDER_GET_CAPABILITIES,
	  (void (*)(void))prov_pkey_capabilities },
	{ OSSL_FUNC_PROVIDER_GET_REASON_STRINGS,
	  (void (*)(void))prov_reason_strings },
	{ 0, NULL },
};

/* ---- Configuration ---- */

/* The config value of key, else the environment's, else NULL. */
static const char *conf_get(const OSSL_CORE_HANDLE *h, const char *key,
			    const char *env)
{
	char *val = NULL;
	OSSL_PARAM req[] = { OSSL_PARAM_utf8_ptr(key, &val, 0),
			     OSSL_PARAM_END };
	if (c_get_params && c_get_params(h, req) && val && *val)
		return val;
	const char *e = getenv(env);
	return e && *e ? e : NULL;
}

/* algorithms = ciphers,digests,macs (any subset, or all): a bit set of
 * PROV_OP_*, or -1 for a word that is none of them. */
static int conf_ops(const char *v)
{
	static const struct {
		const char *name;
		unsigned bits;
	} words[] = {
		{ "ciphers", PROV_OP_CIPHERS },
		{ "digests", PROV_OP_DIGESTS },
		{ "macs", PROV_OP_MACS },
		{ "all", PROV_OP_ALL },
	};
	unsigned ops = 0;
	while (*v) {
		size_t n = strcspn(v, ", \t");
		size_t i = 0;
		for (; n && i < sizeof(words) / sizeof(words[0]); i++)
			if (strlen(words[i].name) == n &&
			    !strncasecmp(v, words[i].name, n))
				break;
		if (n && i == sizeof(words) / sizeof(words[0]))
			return -1;
		if (n)
			ops |= words[i].bits;
		v += n;
		v += strspn(v, ", \t");
	}
	return ops ? (int)ops : -1;
}

static int conf_read(struct prov *p)
{
	const char *v = conf_get(p->handle, "socket", "CRYPTOD_SOCKET");
	if (v && !(p->socket = strdup(v)))
		return -ENOMEM;

	v = conf_get(p->handle, "fallback", "CRYPTOD_PROVIDER_FALLBACK");
	if (!v || !strcasecmp(v, "fail")) {
		p->fallback = PROV_FALLBACK_FAIL;
	} else if (!strcasecmp(v, "default-provider") ||
		   !strcasecmp(v, "default")) {
		p->fallback = PROV_FALLBACK_DEFAULT;
	} else {
		PROV_ERR(p, PROV_R_BAD_PARAM,
			 "fallback = %s: expected fail or default-provider", v);
		return -EINVAL;
	}

	v = conf_get(p->handle, "min_size", "CRYPTOD_PROVIDER_MIN_SIZE");
	if (v) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(v, &end, 10);
		if (errno || end == v || *end || v[0] == '-') {
			PROV_ERR(p, PROV_R_BAD_PARAM,
				 "min_size = %s: expected a number of bytes",
				 v);
			return -EINVAL;
		}
		p->min_size = (size_t)n;
	}

	p->ops = PROV_OP_ALL;
	v = conf_get(p->handle, "algorithms", "CRYPTOD_PROVIDER_ALGORITHMS");
	if (v) {
		int ops = conf_ops(v);
		if (ops < 0) {
			PROV_ERR(p, PROV_R_BAD_PARAM,
				 "algorithms = %s: expected a list of "
				 "ciphers, digests, macs (or all)",
				 v);
			return -EINVAL;
		}
		p->ops = (unsigned)ops;
	}
	return 0;
}

/* The program's name: argv[0]'s base name now, before the program can
 * rewrite its argv (nginx's workers overwrite it with their title, and
 * program_invocation_short_name points into it), else the kernel's
 * comm. */
static void prov_name(char *buf, size_t len)
{
	const char *n = program_invocation_short_name;
	if (n && *n) {
		snprintf(buf, len, "%s", n);
		return;
	}
	FILE *f = fopen("/proc/self/comm", "re");
	if (!f || !fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	else
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* The one exported symbol (-fvisibility=hidden elsewhere). */
__attribute__((visibility("default"))) int
OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
		   const OSSL_DISPATCH **out, void **provctx)
{
	for (const OSSL_DISPATCH *f = in; f && f->function_id; f++)
		if (f->function_id == OSSL_FUNC_CORE_GET_PARAMS)
			c_get_params = OSSL_FUNC_core_get_params(f);
	prov_errors_init(in);
	prov_pkey_ref_init(in);

	struct prov *p = calloc(1, sizeof(*p));
	if (!p)
		return 0;
	p->handle = handle;
	prov_name(p->name, sizeof(p->name));
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->rep_lock, NULL);
	if (conf_read(p) || prov_io_init(p)) {
		pthread_mutex_destroy(&p->rep_lock);
		pthread_mutex_destroy(&p->lock);
		free(p->socket);
		free(p);
		return 0;
	}
	prov_usage_add(p);
	*out = prov_dispatch;
	*provctx = p;
	return 1;
}
