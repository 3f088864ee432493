/* SPDX-License-Identifier: MIT */
/*
 * The daemon gone under the provider (prov_evp.h has the cases): killed
 * and restarted with messages in flight, what the provider makes of it.
 * TEST_SEED replays a run.
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

/* One message of alg on x (a new IV each time): what the default
 * provider makes of it? */
static int gone_msg(EVP_CIPHER_CTX *x, const char *alg, unsigned round)
{
	static const uint8_t key[16] = { 0x61, 0x62, 0x63 };
	uint8_t iv[16] = { (uint8_t)round, 0x5a }, msg[3000], a[3100], b[3100];
	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i ^ round);
	int ivlen = strcmp(alg, "AES-128-GCM") ? 16 : 12, n1, n2, m1, m2;
	EVP_CIPHER *rc = EVP_CIPHER_fetch(NULL, alg, "provider=default");
	EVP_CIPHER_CTX *r = EVP_CIPHER_CTX_new();
	int ok = rc && r && EVP_EncryptInit_ex2(r, rc, key, iv, NULL) &&
		 EVP_EncryptUpdate(r, b, &m1, msg, sizeof(msg)) &&
		 EVP_EncryptFinal_ex(r, b + m1, &m2) &&
		 EVP_EncryptInit_ex2(x, NULL, key, iv, NULL) &&
		 EVP_EncryptUpdate(x, a, &n1, msg, sizeof(msg)) &&
		 EVP_EncryptFinal_ex(x, a + n1, &n2) && n1 + n2 == m1 + m2 &&
		 !memcmp(a, b, (size_t)(m1 + m2));
	(void)ivlen;
	EVP_CIPHER_CTX_free(r);
	EVP_CIPHER_free(rc);
	return ok;
}

/*
 * The daemon stops under contexts that are warm (their sessions on a
 * connection that just died), with fallback = default-provider: the next
 * message of each runs in-process, counted as a fallback, instead of
 * failing; once the daemon is back, the one after runs there. (AES-GCM
 * runs its message as one op at the data update; AES-CTR and AES-CBC go
 * by blocks.)
 */
static void gone_case(struct fx_daemon *d)
{
	static const char *const algs[] = { "AES-128-GCM", "AES-128-CTR",
					    "AES-128-CBC" };
	enum { NA = sizeof(algs) / sizeof(algs[0]) };
	char body[512];
	snprintf(body, sizeof(body),
		 "socket = %s\nfallback = default-provider\n", d->sock);
	OSSL_LIB_CTX *l = pfx_conf_libctx(d->dir, body);
	EVP_CIPHER *c[NA] = { NULL };
	EVP_CIPHER_CTX *x[NA] = { NULL };
	uint64_t nd0, nf0, ni, nd1, nf1, nd2, nf2;
	if (!l) {
		FAIL("gone: config");
		return;
	}
	for (unsigned i = 0; i < NA; i++) {
		c[i] = EVP_CIPHER_fetch(l, algs[i], NULL);
		x[i] = EVP_CIPHER_CTX_new();
		if (!c[i] || !x[i] ||
		    !EVP_EncryptInit_ex2(x[i], c[i], NULL, NULL, NULL) ||
		    !gone_msg(x[i], algs[i], 0))
			FAIL("gone: %s before the daemon stops", algs[i]);
	}
	counters(l, &nd0, &nf0, &ni);
	kill(d->pid, SIGKILL);
	waitpid(d->pid, NULL, 0);
	d->pid = 0;
	for (unsigned i = 0; i < NA; i++)
		if (!gone_msg(x[i], algs[i], 1))
			FAIL("gone: %s with the daemon gone did not fall back",
			     algs[i]);
	counters(l, &nd1, &nf1, &ni);
	if (fx_daemon_restart(d, NULL))
		FAIL("gone: restart");
	for (unsigned i = 0; i < NA; i++)
		if (!gone_msg(x[i], algs[i], 2))
			FAIL("gone: %s once the daemon is back", algs[i]);
	counters(l, &nd2, &nf2, &ni);
	if (nf1 - nf0 != NA || nd2 - nd1 != NA)
		FAIL("gone: %llu fallbacks while it was gone, %llu messages on "
		     "the daemon once back (want %u each)",
		     (unsigned long long)(nf1 - nf0),
		     (unsigned long long)(nd2 - nd1), NA);
	fprintf(stderr,
		"daemon gone under warm contexts: %llu fell back, then %llu "
		"on the daemon again\n",
		(unsigned long long)(nf1 - nf0),
		(unsigned long long)(nd2 - nd1));
	for (unsigned i = 0; i < NA; i++) {
		EVP_CIPHER_CTX_free(x[i]);
		EVP_CIPHER_free(c[i]);
	}
	OSSL_LIB_CTX_free(l);
}

int main(void)
{
	uint64_t seed = pe_begin();
	struct fx_daemon d;
	OSSL_PROVIDER *prov;

	if (pe_daemon(&d, &prov))
		return FX_EXIT_FAIL;
	gone_case(&d); /* it restarts the daemon */
	return pe_end(&d, prov, seed);
}
