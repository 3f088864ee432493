/* SPDX-License-Identifier: MIT */
/*
 * What every file of the provider stands on: the errors it raises (through
 * the core's functions) and which of them a fallback may take over, the
 * fallback to OpenSSL's default provider, and fork() counting. Calls no
 * other file of the provider. The entry point and configuration:
 * prov_init.c; the counters and their reports: prov_usage.c.
 */
#include "prov.h"

#include <cryptod/clock.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

/* The core's functions. The provider must raise errors through them,
 * not through its own copy of libcrypto's error code (provider-base(7)):
 * the application's error stack is the core's. One set for every
 * instance: they belong to the one libcrypto that loaded us. */
static OSSL_FUNC_core_new_error_fn *c_new_error;
static OSSL_FUNC_core_set_error_debug_fn *c_set_error_debug;
static OSSL_FUNC_core_vset_error_fn *c_vset_error;

static const OSSL_ITEM prov_reasons[] = {
	{ PROV_R_UNREACHABLE, "cryptod: daemon unreachable" },
	{ PROV_R_SESSION, "cryptod: session refused" },
	{ PROV_R_OP, "cryptod: operation failed" },
	{ PROV_R_BAD_TAG, "cryptod: authentication failed (bad tag)" },
	{ PROV_R_BAD_PARAM, "cryptod: invalid parameter" },
	{ PROV_R_UNSUPPORTED, "cryptod: not supported" },
	{ PROV_R_STATE, "cryptod: call out of order" },
	{ PROV_R_FALLBACK, "cryptod: fallback to the default provider failed" },
	{ PROV_R_NOMEM, "cryptod: out of memory" },
	{ PROV_R_BAD_DECRYPT, "cryptod: bad decrypt (padding)" },
	{ PROV_R_GONE, "cryptod closed the connection: the daemon stopped or "
		       "restarted (the next operation connects again)" },
	{ 0, NULL },
};

const OSSL_ITEM *prov_reason_items(void)
{
	return prov_reasons;
}

void prov_errors_init(const OSSL_DISPATCH *in)
{
	for (; in && in->function_id; in++) {
		switch (in->function_id) {
		case OSSL_FUNC_CORE_NEW_ERROR:
			c_new_error = OSSL_FUNC_core_new_error(in);
			break;
		case OSSL_FUNC_CORE_SET_ERROR_DEBUG:
			c_set_error_debug = OSSL_FUNC_core_set_error_debug(in);
			break;
		case OSSL_FUNC_CORE_VSET_ERROR:
			c_vset_error = OSSL_FUNC_core_vset_error(in);
			break;
		}
	}
	if (!c_new_error || !c_set_error_debug || !c_vset_error)
		c_new_error = NULL; /* prov_raise stays silent */
}

void prov_raise(const struct prov *p, const char *file, int line,
		const char *func, int reason, const char *fmt, ...)
{
	if (!c_new_error || !p)
		return;
	va_list ap;
	va_start(ap, fmt);
	c_new_error(p->handle);
	c_set_error_debug(p->handle, file, line, func);
	c_vset_error(p->handle, reason, fmt, ap);
	va_end(ap);
}

int prov_err_fallback_ok(int err)
{
	switch (err) {
	/* unreachable, or gone */
	case -ENOENT:
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -ENOTCONN:
	case -EPIPE:
	case -EACCES:
	case -ETIMEDOUT:
	case CC_ERR_ACCESS:
	case CC_ERR_SHUTDOWN:
	/* the algorithm, or this size of it, is not served */
	case -EOPNOTSUPP:
	case -ENOSYS:
	case -EINVAL:
	case -E2BIG:
	case CC_ERR_BAD_PARAM:
	case CC_ERR_ENGINE:
	case CC_ERR_STREAM_LIMIT:
	/* The daemon's key policy refused the key (keys.min_bits; HKDF
	 * runs HMAC with an empty salt as its key): the daemon will not
	 * hold it, the program has it anyway. Only with fallback =
	 * default-provider, and counted. */
	case CC_ERR_POLICY:
		return 1;
	default:
		return 0;
	}
}

/* The private library context with the default provider, on first use:
 * most processes never fall back, and loading a provider from inside
 * another's init is best avoided. Caller holds p->lock. */
static OSSL_LIB_CTX *fb_libctx(struct prov *p)
{
	if (p->fb_libctx || p->fb_failed)
		return p->fb_libctx;
	OSSL_LIB_CTX *l = OSSL_LIB_CTX_new();
	OSSL_PROVIDER *d = l ? OSSL_PROVIDER_load(l, "default") : NULL;
	if (!d) {
		OSSL_LIB_CTX_free(l);
		p->fb_failed = 1;
		return NULL;
	}
	p->fb_libctx = l;
	p->fb_default = d;
	return l;
}

#define FB_FETCH(fn, type, fetch)                                              \
	type *fn(struct prov *p, const char *name)                             \
	{                                                                      \
		pthread_mutex_lock(&p->lock);                                  \
		OSSL_LIB_CTX *l = fb_libctx(p);                                \
		pthread_mutex_unlock(&p->lock);                                \
		type *x = l ? fetch(l, name, "provider=default") : NULL;       \
		if (!x)                                                        \
			PROV_ERR(p, PROV_R_FALLBACK,                           \
				 "cannot fetch %s from the default provider",  \
				 name);                                        \
		return x;                                                      \
	}
FB_FETCH(prov_fb_cipher, EVP_CIPHER, EVP_CIPHER_fetch)

int prov_rand(struct prov *p, void *buf, size_t n)
{
	pthread_mutex_lock(&p->lock);
	OSSL_LIB_CTX *l = fb_libctx(p);
	pthread_mutex_unlock(&p->lock);
	return l && RAND_bytes_ex(l, buf, n, 0) > 0 ? 0 : -EIO;
}
FB_FETCH(prov_fb_md, EVP_MD, EVP_MD_fetch)

OSSL_LIB_CTX *prov_fb_libctx(struct prov *p)
{
	pthread_mutex_lock(&p->lock);
	OSSL_LIB_CTX *l = fb_libctx(p);
	pthread_mutex_unlock(&p->lock);
	if (!l)
		PROV_ERR(p, PROV_R_FALLBACK,
			 "cannot load the default provider (public keys)");
	return l;
}
FB_FETCH(prov_fb_mac, EVP_MAC, EVP_MAC_fetch)

/* ---- fork() ---- */

static atomic_uint prov_forks;

static void on_fork_child(void)
{
	atomic_fetch_add(&prov_forks, 1);
}

static void fork_atfork(void)
{
	(void)pthread_atfork(NULL, NULL, on_fork_child);
}

void prov_fork_watch(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, fork_atfork);
}

unsigned prov_fork_count(void)
{
	return atomic_load(&prov_forks);
}
