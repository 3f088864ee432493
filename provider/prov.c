/* SPDX-License-Identifier: MIT */
/*
 * cryptod.so: the provider's entry point, its parameters and
 * configuration, errors, and the fallback to OpenSSL's default provider.
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
 * the operations the provider offers at all. A TLS program that wants
 * only its record crypto on the daemon says ciphers, and its handshake's
 * many small digests, HMACs and HKDF keys stay on the default provider.
 *
 * The counters go to the daemon too (prov_report), so that cryptoctl
 * clients and stats show them per connection and per program.
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

#ifndef CRYPTOD_VERSION
#define CRYPTOD_VERSION "0"
#endif

/* The core's functions. The provider must raise errors through them,
 * not through its own copy of libcrypto's error code (provider-base(7)):
 * the application's error stack is the core's. One set for every
 * instance: they belong to the one libcrypto that loaded us. */
static OSSL_FUNC_core_get_params_fn *c_get_params;
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

int prov_small(struct prov *p, size_t len)
{
	prov_report(p, 0); /* every message starts here */
	if (!p->min_size || len >= p->min_size)
		return 0;
	atomic_fetch_add(&p->n_inprocess, 1);
	return 1;
}

int prov_fallback(struct prov *p, int err)
{
	if (p->fallback != PROV_FALLBACK_DEFAULT || !prov_err_fallback_ok(err))
		return 0;
	atomic_fetch_add(&p->n_fallback, 1);
	return 1;
}

/* ---- Reports to the daemon ---- */

enum { REPORT_EVERY_MS = 1000 };

/*
 * Each connection is told only what its predecessors did not take, so
 * that the daemon's per-program sums count every message once: its
 * totals are ours minus rep_base, what earlier connections acknowledged.
 * What was counted while no connection worked (fallbacks because the
 * daemon was unreachable) goes to the next one that does. Holding
 * rep_conn's reference keeps its address from being reused, so the
 * comparison below cannot mistake a new connection for it. Caller holds
 * rep_lock.
 */
static void report_locked(struct prov *p)
{
	const struct cc_usage now = {
		.offloaded = atomic_load(&p->n_daemon),
		.fallbacks = atomic_load(&p->n_fallback),
		.inprocess = atomic_load(&p->n_inprocess),
	};
	if (now.offloaded == p->rep_sent.offloaded &&
	    now.fallbacks == p->rep_sent.fallbacks &&
	    now.inprocess == p->rep_sent.inprocess)
		return; /* nothing new: no round trip */
	struct prov_conn *c;
	ERR_set_mark(); /* an unreachable daemon is not the op's error */
	int err = prov_conn_get(p, &c);
	ERR_pop_to_mark();
	if (err)
		return;
	if (c != p->rep_conn) {
		p->rep_base = p->rep_sent;
		prov_conn_put(p->rep_conn);
		p->rep_conn = c; /* takes c's reference */
	} else {
		prov_conn_put(c); /* rep_conn holds one already */
	}
	const struct cc_usage u = {
		.offloaded = now.offloaded - p->rep_base.offloaded,
		.fallbacks = now.fallbacks - p->rep_base.fallbacks,
		.inprocess = now.inprocess - p->rep_base.inprocess,
	};
	err = cc_report_usage(c->cc, &u);
	if (!err) {
		p->rep_sent = now;
		return;
	}
	if (err == -EOPNOTSUPP) /* an older daemon: stop asking */
		atomic_store(&p->rep_off, 1);
	prov_conn_check(p, c, err);
}

/* Every live instance, for the atfork child handler. */
static pthread_mutex_t provs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct prov *provs;

static void provs_add(struct prov *p)
{
	pthread_mutex_lock(&provs_lock);
	p->next_prov = provs;
	provs = p;
	pthread_mutex_unlock(&provs_lock);
}

static void provs_remove(struct prov *p)
{
	pthread_mutex_lock(&provs_lock);
	for (struct prov **pp = &provs; *pp; pp = &(*pp)->next_prov)
		if (*pp == p) {
			*pp = p->next_prov;
			break;
		}
	pthread_mutex_unlock(&provs_lock);
}

void prov_forked(void)
{
	/* The child is single-threaded here: whoever held these locks in
	 * the parent is not in it, so they are made anew, unheld. */
	pthread_mutex_init(&provs_lock, NULL);
	for (struct prov *p = provs; p; p = p->next_prov) {
		pthread_mutex_init(&p->lock, NULL);
		pthread_mutex_init(&p->rep_lock, NULL);
		/* The parent counts and reports what it did; the child
		 * starts from nothing (its connection is its own). */
		atomic_store(&p->n_daemon, 0);
		atomic_store(&p->n_fallback, 0);
		atomic_store(&p->n_inprocess, 0);
		p->rep_base = (struct cc_usage){ 0 };
		p->rep_sent = (struct cc_usage){ 0 };
		prov_conn_put(p->rep_conn); /* the parent's */
		p->rep_conn = NULL;
		atomic_store(&p->rep_next_ms, 0);
	}
}

void prov_report(struct prov *p, int final)
{
	if (atomic_load_explicit(&p->rep_off, memory_order_relaxed))
		return;
	if (final) {
		/* Try only: another thread may be reporting. */
		if (pthread_mutex_trylock(&p->rep_lock))
			return;
	} else {
		uint64_t now = crd_now_coarse_ms();
		if (now <
		    atomic_load_explicit(&p->rep_next_ms, memory_order_relaxed))
			return;
		/* Another thread is reporting: the op does not wait. */
		if (pthread_mutex_trylock(&p->rep_lock))
			return;
		atomic_store_explicit(&p->rep_next_ms, now + REPORT_EVERY_MS,
				      memory_order_relaxed);
	}
	report_locked(p);
	if (final) {
		prov_conn_put(p->rep_conn);
		p->rep_conn = NULL;
	}
	pthread_mutex_unlock(&p->rep_lock);
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
FB_FETCH(prov_fb_mac, EVP_MAC, EVP_MAC_fetch)

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
	}
	return NULL;
}

static const OSSL_ITEM *prov_reason_strings(void *provctx)
{
	return prov_reasons;
}

static void prov_teardown(void *provctx)
{
	struct prov *p = provctx;
	provs_remove(p);
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
	for (; in && in->function_id; in++) {
		switch (in->function_id) {
		case OSSL_FUNC_CORE_GET_PARAMS:
			c_get_params = OSSL_FUNC_core_get_params(in);
			break;
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
	provs_add(p);
	*out = prov_dispatch;
	*provctx = p;
	return 1;
}
