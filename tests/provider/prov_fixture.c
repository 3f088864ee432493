/* SPDX-License-Identifier: MIT */
#include "prov_fixture.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/store.h>

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

static char keys_tmp[128], keys_dir_arg[192];
const char *pfx_keys_args[] = { "--set", "keys.kek=credential:kek", "--set",
				keys_dir_arg, NULL };

int pfx_keys_setup(const char *tag)
{
	uint8_t kek[32];
	char creddir[160], f[192];
	snprintf(keys_tmp, sizeof(keys_tmp), "/tmp/cryptod-%s.XXXXXX", tag);
	if (!mkdtemp(keys_tmp))
		return -1;
	snprintf(creddir, sizeof(creddir), "%s/creds", keys_tmp);
	snprintf(f, sizeof(f), "%s/kek", creddir);
	int fd = -1;
	FILE *r = fopen("/dev/urandom", "rb");
	int ok = r && fread(kek, 1, sizeof(kek), r) == sizeof(kek) &&
		 !mkdir(creddir, 0700) &&
		 (fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0400)) >= 0 &&
		 write(fd, kek, sizeof(kek)) == (ssize_t)sizeof(kek);
	if (r)
		fclose(r);
	if (fd >= 0)
		close(fd);
	explicit_bzero(kek, sizeof(kek));
	setenv("CREDENTIALS_DIRECTORY", creddir, 1);
	snprintf(keys_dir_arg, sizeof(keys_dir_arg), "keys.dir=%s/keys",
		 keys_tmp);
	return ok ? 0 : -1;
}

void pfx_keys_cleanup(void)
{
	char cmd[160];
	if (!keys_tmp[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", keys_tmp);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", keys_tmp);
	keys_tmp[0] = 0;
}

EVP_PKEY *pfx_load_key(OSSL_LIB_CTX *lib, const char *name)
{
	char uri[96];
	snprintf(uri, sizeof(uri), "cryptod:%s", name);
	OSSL_STORE_CTX *st = OSSL_STORE_open_ex(uri, lib, NULL, NULL, NULL,
						NULL, NULL, NULL);
	EVP_PKEY *k = NULL;
	while (st && !k && !OSSL_STORE_eof(st)) {
		OSSL_STORE_INFO *i = OSSL_STORE_load(st);
		if (i && OSSL_STORE_INFO_get_type(i) == OSSL_STORE_INFO_PKEY)
			k = OSSL_STORE_INFO_get1_PKEY(i);
		OSSL_STORE_INFO_free(i);
		if (!i)
			break;
	}
	OSSL_STORE_close(st);
	return k;
}
