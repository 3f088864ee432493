/* SPDX-License-Identifier: MIT */
/*
 * Wycheproof through the provider (docs/asymmetric.md, Tests): from each
 * of Wycheproof's ECDH P-256/P-384, X25519 and X448 files, the first
 * valid tests' private keys are imported into the daemon as named key
 * pairs, loaded as cryptod:NAME, and derive with the vector's peer
 * (in-process) through EVP: the secret must be the vector's, and the
 * daemon must have counted the op. Each EC key also signs (ECDSA,
 * SHA-256) through EVP_DigestSign, verified in-process against the key's
 * public half. The cases come from
 * tests/integration/wycheproof_cases.py; the library pass over every
 * test is integration.test_pk_wycheproof.
 *
 * Wycheproof is not in Debian: $WYCHEPROOF_DIR (testvectors_v1), else
 * skipped (77).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>

#include "pk_common.h"
#include "prov_fixture.h"

enum { PER_FILE = 6, FIELDS = 15, BUF = 8192 };

/* The peer's public key, in-process: an EC point of group, or X25519's
 * and X448's raw bytes (type). */
static EVP_PKEY *peer_key(const char *row, const uint8_t *pub, size_t len)
{
	const char *group = !strcmp(row, "ec-p256")   ? "P-256"
			    : !strcmp(row, "ec-p384") ? "P-384"
						      : NULL;
	if (!group)
		return EVP_PKEY_new_raw_public_key_ex(
			NULL, !strcmp(row, "x25519") ? "X25519" : "X448", NULL,
			pub, len);
	OSSL_PARAM p[] = {
		OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
				       (char *)group, 0),
		OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)pub,
					len),
		OSSL_PARAM_END,
	};
	EVP_PKEY *k = NULL;
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (!c || EVP_PKEY_fromdata_init(c) <= 0 ||
	    EVP_PKEY_fromdata(c, &k, EVP_PKEY_PUBLIC_KEY, p) <= 0)
		k = NULL;
	EVP_PKEY_CTX_free(c);
	return k;
}

/* ECDSA through the provider with k, verified in-process with pub. */
static int sign_ok(OSSL_LIB_CTX *lib, EVP_PKEY *k, EVP_PKEY *pub)
{
	static const unsigned char msg[] = "Wycheproof's key, in the daemon";
	unsigned char sig[160];
	size_t n = sizeof(sig);
	EVP_MD_CTX *m = EVP_MD_CTX_new(), *v = EVP_MD_CTX_new();
	int ok = m && v &&
		 EVP_DigestSignInit_ex(m, NULL, "SHA256", lib, NULL, k, NULL) ==
			 1 &&
		 EVP_DigestSign(m, sig, &n, msg, sizeof(msg)) == 1 &&
		 EVP_DigestVerifyInit(v, NULL, EVP_sha256(), NULL, pub) == 1 &&
		 EVP_DigestVerify(v, sig, n, msg, sizeof(msg)) == 1;
	EVP_MD_CTX_free(m);
	EVP_MD_CTX_free(v);
	return ok;
}

/* One test's fields (wycheproof_cases.py's T line, after the "T"). */
static void run(struct cc_conn *c, OSSL_LIB_CTX *lib, char **f,
		unsigned *derives, unsigned *signs)
{
	static unsigned seq;
	char name[32];
	uint8_t *key = malloc(BUF), pub[160], want[80], got[80];
	int kl = pk_unhex(f[4], key, BUF), pl = pk_unhex(f[10], pub, 160),
	    wl = pk_unhex(f[12], want, 80);
	uint32_t uid = getuid();
	struct cc_key_spec s = { .name = name, .uids = &uid, .nuids = 1 };
	snprintf(name, sizeof(name), "wp%u", ++seq);
	int err = kl > 0 ? cc_key_import_pair(c, &s, key, (size_t)kl, NULL, 0,
					      NULL)
			 : -EINVAL;
	OPENSSL_clear_free(key, BUF);
	if (err) {
		FAIL("%s tcId %s: import: %s", f[2], f[0], cc_strerror(err));
		return;
	}
	EVP_PKEY *k = pfx_load_key(lib, name),
		 *peer = pl > 0 ? peer_key(f[2], pub, (size_t)pl) : NULL;
	EVP_PKEY_CTX *dc = k ? EVP_PKEY_CTX_new_from_pkey(lib, k, NULL) : NULL;
	size_t n = sizeof(got);
	struct cc_key_info before, after;
	int ok = peer && dc && !cc_key_show(c, name, &before) &&
		 EVP_PKEY_derive_init(dc) == 1 &&
		 EVP_PKEY_derive_set_peer(dc, peer) == 1 &&
		 EVP_PKEY_derive(dc, got, &n) == 1;
	if (!ok || wl < 0 || n != (size_t)wl || memcmp(got, want, n))
		FAIL("%s tcId %s: derive through the provider: %s", f[2], f[0],
		     ok ? "other bytes" : "failed");
	else if (cc_key_show(c, name, &after) || after.ops <= before.ops)
		FAIL("%s tcId %s: the daemon did not count the derive", f[2],
		     f[0]);
	else
		++*derives;
	if (k && EVP_PKEY_is_a(k, "EC")) {
		uint8_t der[256];
		int dl = cc_key_pub(c, name, 0, der, sizeof(der));
		const unsigned char *p = der;
		EVP_PKEY *kp = dl > 0 ? d2i_PUBKEY(NULL, &p, dl) : NULL;
		if (kp && sign_ok(lib, k, kp))
			++*signs;
		else
			FAIL("%s tcId %s: ECDSA through the provider", f[2],
			     f[0]);
		EVP_PKEY_free(kp);
	}
	EVP_PKEY_CTX_free(dc);
	EVP_PKEY_free(peer);
	EVP_PKEY_free(k);
}

int main(void)
{
	const char *dir = getenv("WYCHEPROOF_DIR");
	struct stat sb;
	pfx_need_daemon();
	if (!dir || !*dir || stat(dir, &sb) || !S_ISDIR(sb.st_mode)) {
		printf("WYCHEPROOF_DIR not set or not a directory: skipped\n");
		return FX_EXIT_SKIP;
	}
	if (pfx_keys_setup("wycheproof")) {
		perror("key store");
		return FX_EXIT_FAIL;
	}
	struct fx_daemon d;
	OSSL_LIB_CTX *lib;
	OSSL_PROVIDER *prov, *dflt = NULL;
	struct fx_daemon_params dp = { .args = pfx_keys_args };
	if (pfx_start_with(&d, &dp, &lib, &prov)) {
		pfx_keys_cleanup();
		return FX_EXIT_FAIL;
	}
	struct cc_conn *c = NULL;
	/* the shell expands $WYCHEPROOF_DIR: no quoting of it here */
	FILE *in = popen("python3 '" WYCHEPROOF_CASES "' \"$WYCHEPROOF_DIR\"",
			 "r");
	dflt = OSSL_PROVIDER_load(lib, "default");
	if (!in || !dflt || cc_connect(d.sock, "test", &c)) {
		FAIL("the cases, the default provider, or connect");
		goto out;
	}
	char *line = NULL, file[128] = "";
	size_t cap = 0;
	unsigned taken = 0, derives = 0, signs = 0;
	while (getline(&line, &cap, in) > 0) {
		char *fld[FIELDS + 1], *save = NULL;
		unsigned nf = 0;
		line[strcspn(line, "\n")] = 0;
		for (char *t = strtok_r(line, "\t", &save); t && nf <= FIELDS;
		     t = strtok_r(NULL, "\t", &save))
			fld[nf++] = t;
		if (nf == 2 && !strcmp(fld[0], "F")) {
			snprintf(file, sizeof(file), "%s", fld[1]);
			taken = 0;
		} else if (nf == FIELDS && !strcmp(fld[4], "derive") &&
			   !strcmp(fld[2], "valid") && taken < PER_FILE) {
			taken++;
			run(c, lib, fld + 1, &derives, &signs);
		}
	}
	free(line);
	printf("through the provider: %u derives equal Wycheproof's, %u ECDSA "
	       "signatures verified\n",
	       derives, signs);
	if (!derives)
		FAIL("no derive ran (%s the last file)", file);
out:
	if (in && pclose(in))
		FAIL("wycheproof_cases.py failed");
	cc_disconnect(c);
	if (dflt)
		OSSL_PROVIDER_unload(dflt);
	int stop = pfx_stop(&d, lib, prov);
	pfx_keys_cleanup();
	return pfx_verdict(stop, 0);
}
