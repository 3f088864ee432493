/* SPDX-License-Identifier: MIT */
/*
 * The provider against OpenSSL's default provider, through EVP, from
 * several threads at once: every cipher, digest and MAC cryptod.so
 * offers, round after round (prov_evp.h has the cases); then the
 * provider's counters, and its connection named after the program.
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

static unsigned rounds = 20;

static void *worker(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg;
	EVP_CIPHER *ref[N_CIPHERS], *cry[N_CIPHERS];
	for (unsigned i = 0; i < N_CIPHERS; i++) {
		ref[i] = EVP_CIPHER_fetch(NULL, ciphers[i].name, NULL);
		cry[i] = EVP_CIPHER_fetch(lib, ciphers[i].name, PQ);
		if (!cry[i])
			FAIL("%s: not offered", ciphers[i].name);
	}
	static const char *ccms[] = { "AES-128-CCM", "AES-192-CCM",
				      "AES-256-CCM" };
	EVP_CIPHER *ccm_ref[3], *ccm_cry[3];
	for (unsigned i = 0; i < 3; i++) {
		ccm_ref[i] = EVP_CIPHER_fetch(NULL, ccms[i], NULL);
		ccm_cry[i] = EVP_CIPHER_fetch(lib, ccms[i], PQ);
	}
	static const char *hm[] = { "SHA1", "SHA2-224", "SHA256", "SHA-384",
				    "SHA512" };
	static const char *cm[] = { "AES-128-CBC", "AES-192-CBC",
				    "AES-256-CBC" };
	for (unsigned r = 0; r < rounds && !failures; r++) {
		for (unsigned i = 0; i < N_CIPHERS; i++)
			if (cry[i]) {
				cipher_case(&s, &ciphers[i], ref[i], cry[i]);
				evptest_case(&s, &ciphers[i], ref[i], cry[i]);
			}
		for (unsigned i = 0; i < 5; i++) {
			digest_case(&s, digests[i]);
			mac_case(&s, 0, hm[i]);
		}
		for (unsigned i = 0; i < 3; i++)
			mac_case(&s, 1, cm[i]);
		for (unsigned i = 0; i < 3; i++)
			ccm_case(&s, ccms[i], ccm_ref[i], ccm_cry[i],
				 16 + 8 * i);
		tls_case(&s, "AES-128-GCM", TLS_GCM);
		tls_case(&s, "AES-256-GCM", TLS_GCM);
		tls_case(&s, "ChaCha20-Poly1305", TLS_CHACHA);
		tls_case(&s, "AES-128-CCM", TLS_CCM);
		tls_case(&s, "AES-256-CCM", TLS_CCM8);
	}
	for (unsigned i = 0; i < N_CIPHERS; i++) {
		EVP_CIPHER_free(ref[i]);
		EVP_CIPHER_free(cry[i]);
	}
	for (unsigned i = 0; i < 3; i++) {
		EVP_CIPHER_free(ccm_ref[i]);
		EVP_CIPHER_free(ccm_cry[i]);
	}
	OPENSSL_thread_stop();
	return NULL;
}

int main(void)
{
	uint64_t seed = pe_begin();
	struct fx_daemon d;
	OSSL_PROVIDER *prov;

	if (sanitized)
		rounds = 4;
	if (pe_daemon(&d, &prov))
		return FX_EXIT_FAIL;

	pthread_t t[THREADS];
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker,
			       (void *)(uintptr_t)(seed * 4 + i + 1));
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);

	/* Alone: it counts the provider's messages. */
	uint64_t ls = seed;
	mac_local_case(&ls);
	xts_equal_case();

	uint64_t nd = 0, nf = 0;
	OSSL_PARAM ps[] = { OSSL_PARAM_uint64("cryptod-daemon-messages", &nd),
			    OSSL_PARAM_uint64("cryptod-fallbacks", &nf),
			    OSSL_PARAM_END };
	if (!OSSL_PROVIDER_get_params(prov, ps) || nd == 0 || nf != 0)
		FAIL("counters: %llu on the daemon, %llu fallbacks",
		     (unsigned long long)nd, (unsigned long long)nf);
	fprintf(stderr, "%llu messages on the daemon\n",
		(unsigned long long)nd);

	/* The provider's connection is named after the program, so that
	 * an operator sees which program sends what. */
	struct cc_conn *cc;
	struct cc_client_info *ci = NULL;
	unsigned nci = 0, named = 0;
	if (!cc_connect(d.sock, "checker", &cc)) {
		if (!cc_clients_get(cc, &ci, &nci))
			for (unsigned i = 0; i < nci; i++)
				named += !strcmp(ci[i].name,
						 "openssl/test_prov_evp");
		free(ci);
		cc_disconnect(cc);
	}
	if (!named)
		FAIL("no client named openssl/test_prov_evp among %u", nci);
	return pe_end(&d, prov, seed);
}
