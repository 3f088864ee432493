/* SPDX-License-Identifier: MIT */
#include "prov_fixture.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/params.h>

atomic_int failures;

int pfx_verdict(int stop, uint64_t seed)
{
	if (failures || stop) {
		fprintf(stderr, "FAIL: %d failures", (int)failures);
		if (seed)
			fprintf(stderr, " (TEST_SEED=%llu)",
				(unsigned long long)seed);
		fprintf(stderr, "%s\n", stop ? ", and the daemon's stop" : "");
		return FX_EXIT_FAIL;
	}
	fprintf(stderr, "PASS\n");
	return FX_EXIT_PASS;
}

void pfx_need_daemon(void)
{
	if (access(CRYPTOD_BIN, X_OK) && !getenv("CRYPTOD_BIN")) {
		fprintf(stderr, "SKIP: no daemon at %s\n", CRYPTOD_BIN);
		exit(FX_EXIT_SKIP);
	}
}

uint64_t pfx_seed(void)
{
	const char *s = getenv("TEST_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);

	fprintf(stderr, "TEST_SEED=%llu\n", (unsigned long long)seed);
	return seed;
}

int pfx_start(struct fx_daemon *d, OSSL_LIB_CTX **lib, OSSL_PROVIDER **prov)
{
	return pfx_start_with(d, NULL, lib, prov);
}

int pfx_start_with(struct fx_daemon *d, const struct fx_daemon_params *p,
		   OSSL_LIB_CTX **lib, OSSL_PROVIDER **prov)
{
	if (fx_daemon_start(d, p))
		return -1;
	setenv("CRYPTOD_SOCKET", d->sock, 1);
	unsetenv("CRYPTOD_PROVIDER_FALLBACK");
	unsetenv("CRYPTOD_PROVIDER_MIN_SIZE");
	*lib = OSSL_LIB_CTX_new();
	*prov = NULL;
	if (*lib) {
		OSSL_PROVIDER_set_default_search_path(*lib,
						      CRYPTOD_PROVIDER_DIR);
		*prov = OSSL_PROVIDER_load(*lib, "cryptod");
	}
	if (!*prov) {
		fprintf(stderr, "loading cryptod.so from %s failed\n",
			CRYPTOD_PROVIDER_DIR);
		ERR_print_errors_fp(stderr);
		OSSL_LIB_CTX_free(*lib);
		*lib = NULL;
		fx_daemon_stop(d);
		return -1;
	}
	return 0;
}

int pfx_stop(struct fx_daemon *d, OSSL_LIB_CTX *lib, OSSL_PROVIDER *prov)
{
	OSSL_PROVIDER_unload(prov);
	OSSL_LIB_CTX_free(lib);
	return fx_daemon_stop(d);
}

OSSL_LIB_CTX *pfx_conf_libctx(const char *dir, const char *body)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/prov.cnf", dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return NULL;
	}
	fprintf(f,
		"openssl_conf = init\n[init]\nproviders = provs\n"
		"[provs]\ncryptod = cryptod_sect\n[cryptod_sect]\n"
		"module = %s/cryptod.so\nactivate = 1\n%s",
		CRYPTOD_PROVIDER_DIR, body);
	fclose(f);
	OSSL_LIB_CTX *l = OSSL_LIB_CTX_new();
	if (l && !OSSL_LIB_CTX_load_config(l, path)) {
		fprintf(stderr, "%s: not loaded\n", path);
		ERR_print_errors_fp(stderr);
		OSSL_LIB_CTX_free(l);
		return NULL;
	}
	return l;
}

int pfx_counters(OSSL_LIB_CTX *l, uint64_t *daemon, uint64_t *fallbacks,
		 uint64_t *inprocess)
{
	uint64_t v[3] = { 0, 0, 0 };
	OSSL_PROVIDER *p = OSSL_PROVIDER_load(l, "cryptod");
	OSSL_PARAM ps[] = { OSSL_PARAM_uint64("cryptod-daemon-messages", &v[0]),
			    OSSL_PARAM_uint64("cryptod-fallbacks", &v[1]),
			    OSSL_PARAM_uint64("cryptod-inprocess", &v[2]),
			    OSSL_PARAM_END };
	int ok = p && OSSL_PROVIDER_get_params(p, ps);

	OSSL_PROVIDER_unload(p);
	if (daemon)
		*daemon = v[0];
	if (fallbacks)
		*fallbacks = v[1];
	if (inprocess)
		*inprocess = v[2];
	return ok ? 0 : -1;
}

int pfx_err_names_cryptod(void)
{
	unsigned long e;
	const char *data;
	int flags, found = 0;
	while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags))) {
		const char *r = ERR_reason_error_string(e);
		if ((r && strstr(r, "cryptod")) ||
		    ((flags & ERR_TXT_STRING) && data &&
		     strstr(data, "cryptod")))
			found = 1;
	}
	return found;
}
