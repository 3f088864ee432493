/* SPDX-License-Identifier: MIT */
/*
 * The provider as an operator configures it (prov_evp.h has the cases):
 * no daemon with fallback = fail (the error names cryptod); what the
 * daemon will not do, refused or done in-process with fallback =
 * default-provider; an openssl.cnf section's socket, fallback and
 * min_size, and the counters of each. TEST_SEED replays a run.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/params.h>

#include "prov_evp.h"

/* Unreachable daemon: fallback = fail (the default) fails with a
 * reason naming cryptod. */
static void unreachable_case(void)
{
	OSSL_LIB_CTX *l = OSSL_LIB_CTX_new();
	setenv("CRYPTOD_SOCKET", "/nonexistent/cryptod.sock", 1);
	OSSL_PROVIDER_set_default_search_path(l, CRYPTOD_PROVIDER_DIR);
	OSSL_PROVIDER *p = OSSL_PROVIDER_load(l, "cryptod");
	EVP_CIPHER *c = EVP_CIPHER_fetch(l, "AES-128-GCM", PQ);
	uint8_t key[16] = { 0 }, iv[12] = { 0 }, buf[32] = { 0 };
	int n;
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	ERR_clear_error();
	if (!c || !EVP_EncryptInit_ex2(x, c, key, iv, NULL))
		FAIL("unreachable: init");
	else if (EVP_EncryptUpdate(x, buf, &n, buf, sizeof(buf)))
		FAIL("unreachable: an update succeeded without a daemon");
	else if (!pfx_err_names_cryptod())
		FAIL("unreachable: the error does not name cryptod");
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(c);
	OSSL_PROVIDER_unload(p);
	OSSL_LIB_CTX_free(l);
}

/* Every algorithm once more on l (single-threaded). */
static void run_all(uint64_t *s, OSSL_LIB_CTX *l, unsigned n)
{
	OSSL_LIB_CTX *saved = lib;
	lib = l;
	for (unsigned r = 0; r < n; r++) {
		for (unsigned i = 0; i < N_CIPHERS; i++) {
			EVP_CIPHER *ref =
				EVP_CIPHER_fetch(NULL, ciphers[i].name, NULL);
			EVP_CIPHER *cry =
				EVP_CIPHER_fetch(l, ciphers[i].name, PQ);
			if (!cry)
				FAIL("%s: not offered", ciphers[i].name);
			else
				cipher_case(s, &ciphers[i], ref, cry);
			EVP_CIPHER_free(ref);
			EVP_CIPHER_free(cry);
		}
		for (unsigned i = 0; i < 5; i++)
			digest_case(s, digests[i]);
		mac_case(s, 0, "SHA256");
		mac_case(s, 1, "AES-128-CBC");
		EVP_CIPHER *cr = EVP_CIPHER_fetch(NULL, "AES-128-CCM", NULL);
		EVP_CIPHER *cc = EVP_CIPHER_fetch(l, "AES-128-CCM", PQ);
		ccm_case(s, "AES-128-CCM", cr, cc, 16);
		EVP_CIPHER_free(cr);
		EVP_CIPHER_free(cc);
		tls_case(s, "AES-128-GCM", TLS_GCM);
		tls_case(s, "ChaCha20-Poly1305", TLS_CHACHA);
		tls_case(s, "AES-128-CCM", TLS_CCM8);
	}
	lib = saved;
}

/* What the daemon will not do, with fallback = fail (refused, naming
 * cryptod) and with fallback = default-provider (done in-process, the
 * same bytes as the default provider's): an HMAC key shorter than the
 * daemon's key policy allows (HKDF's empty salt); and a TLS CBC record,
 * which it does now, either way. */
static void refused_cases(OSSL_LIB_CTX *l, int fallback)
{
	uint8_t key[32] = { 1, 2, 3, 4, 5, 6, 7, 8 }, iv[16] = { 9 };
	uint8_t msg[64] = { 7 }, a[64], b[64];
	size_t na = 0, nb = 0;
	OSSL_PARAM ps[] = { OSSL_PARAM_construct_utf8_string(
				    "digest", (char *)"SHA256", 0),
			    OSSL_PARAM_END };
	EVP_MAC *rm = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC *cm = EVP_MAC_fetch(l, "HMAC", PQ);
	EVP_MAC_CTX *r = EVP_MAC_CTX_new(rm), *x = EVP_MAC_CTX_new(cm);
	EVP_MAC_init(r, key, 8, ps);
	EVP_MAC_update(r, msg, sizeof(msg));
	EVP_MAC_final(r, a, &na, sizeof(a));
	ERR_clear_error();
	int ok = EVP_MAC_init(x, key, 8, ps) &&
		 EVP_MAC_update(x, msg, sizeof(msg)) &&
		 EVP_MAC_final(x, b, &nb, sizeof(b));
	if (fallback && (!ok || na != nb || memcmp(a, b, na)))
		FAIL("HMAC with an 8-byte key on fallback");
	if (!fallback && (ok || !pfx_err_names_cryptod()))
		FAIL("HMAC with an 8-byte key: %s", ok ? "accepted" : "reason");
	EVP_MAC_CTX_free(r);
	EVP_MAC_CTX_free(x);
	EVP_MAC_free(rm);
	EVP_MAC_free(cm);

	/* A TLS 1.2 CBC record to seal, in place as libssl does: the
	 * cipher adds the padding. */
	unsigned ver = 0x0303;
	size_t macsz = 32;
	OSSL_PARAM tp[] = { OSSL_PARAM_construct_uint("tls-version", &ver),
			    OSSL_PARAM_construct_size_t("tls-mac-size", &macsz),
			    OSSL_PARAM_END };
	EVP_CIPHER *rc = EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL);
	EVP_CIPHER *cc = EVP_CIPHER_fetch(l, "AES-128-CBC", PQ);
	EVP_CIPHER_CTX *rx = EVP_CIPHER_CTX_new(), *cx = EVP_CIPHER_CTX_new();
	uint8_t ra[80], rb[80];
	memset(ra, 7, sizeof(ra));
	memset(rb, 7, sizeof(rb));
	int n1 = 0, n2 = 0;
	int r1 = EVP_CipherInit_ex2(rx, rc, key, iv, 1, tp) &&
		 EVP_CipherUpdate(rx, ra, &n1, ra, 50);
	ERR_clear_error();
	int r2 = EVP_CipherInit_ex2(cx, cc, key, iv, 1, tp) &&
		 EVP_CipherUpdate(cx, rb, &n2, rb, 50);
	/* The daemon does those now (prov_tls.c; test_prov_tls_cbc has
	 * the rest): the same record either way. */
	if (!r1 || !r2 || n1 != n2 || memcmp(ra, rb, (size_t)n1))
		FAIL("a TLS CBC record (fallback %d): %d %d, %d %d", fallback,
		     r1, r2, n1, n2);
	EVP_CIPHER_CTX_free(rx);
	EVP_CIPHER_CTX_free(cx);
	EVP_CIPHER_free(rc);
	EVP_CIPHER_free(cc);
}

/* fallback = default-provider with no daemon: everything runs, on the default
 * provider, counted. min_size: short messages stay in-process, long
 * ones reach the daemon, both counted. */
static void config_cases(uint64_t *s, const struct fx_daemon *d)
{
	uint64_t nd, nf, ni;
	char body[512];
	OSSL_LIB_CTX *l =
		pfx_conf_libctx(d->dir, "socket = /nonexistent/cryptod.sock\n"
					"fallback = default-provider\n");
	if (!l) {
		FAIL("fallback config");
		return;
	}
	want_cryptod_reason = 0;
	run_all(s, l, 2);
	want_cryptod_reason = 1;
	counters(l, &nd, &nf, &ni);
	if (nd || !nf)
		FAIL("fallback: %llu on the daemon, %llu fallbacks",
		     (unsigned long long)nd, (unsigned long long)nf);
	fprintf(stderr, "fallback = default-provider: %llu fallbacks\n",
		(unsigned long long)nf);
	OSSL_LIB_CTX_free(l);

	snprintf(body, sizeof(body), "socket = %s\nmin_size = 5000\n", d->sock);
	if (!(l = pfx_conf_libctx(d->dir, body))) {
		FAIL("min_size config");
		return;
	}
	want_cryptod_reason = 0; /* a short forged message is in-process */
	run_all(s, l, 3);
	want_cryptod_reason = 1;
	counters(l, &nd, &nf, &ni);
	if (!nd || nf || !ni)
		FAIL("min_size: %llu on the daemon, %llu fallbacks, %llu "
		     "in-process",
		     (unsigned long long)nd, (unsigned long long)nf,
		     (unsigned long long)ni);
	fprintf(stderr,
		"min_size = 5000: %llu on the daemon, %llu in-process\n",
		(unsigned long long)nd, (unsigned long long)ni);
	OSSL_LIB_CTX_free(l);

	/* The daemon up, fallback = default-provider: what it refuses runs
	 * in-process, counted. */
	snprintf(body, sizeof(body),
		 "socket = %s\nfallback = default-provider\n", d->sock);
	if (!(l = pfx_conf_libctx(d->dir, body))) {
		FAIL("fallback config");
		return;
	}
	refused_cases(l, 1);
	counters(l, &nd, &nf, &ni);
	/* The short HMAC key; the TLS CBC record runs on the daemon. */
	if (nf != 1)
		FAIL("refused cases: %llu fallbacks", (unsigned long long)nf);
	OSSL_LIB_CTX_free(l);
}

int main(void)
{
	uint64_t seed = pe_begin();
	struct fx_daemon d;
	OSSL_PROVIDER *prov;

	unreachable_case();
	if (pe_daemon(&d, &prov))
		return FX_EXIT_FAIL;
	refused_cases(lib, 0);
	uint64_t cs = seed * 4 + 99;
	config_cases(&cs, &d);
	return pe_end(&d, prov, seed);
}
