/* SPDX-License-Identifier: MIT */
/*
 * What the test_prov_evp* programs share (prov_evp.c): the provider
 * against OpenSSL's default provider, through EVP, one case per cipher,
 * digest and MAC cryptod.so offers, with random keys, IVs, AAD and
 * lengths (0 .. a few MiB), cut into random update sizes, in place and
 * out of place, encrypt and decrypt, tags got, set and truncated, forged
 * tags (final fails, the error names cryptod), dupctx midway, reinit with
 * a new IV and a new key, TLS 1.2 AEAD records; and the start and end of
 * a program (its daemon, the provider loaded into lib). TEST_SEED replays
 * a run.
 */
#ifndef CRYPTOD_TEST_PROV_EVP_H
#define CRYPTOD_TEST_PROV_EVP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "prov_fixture.h"

#define THREADS 4
#define MIB (1u << 20)

extern OSSL_LIB_CTX *lib; /* cryptod alone */
extern const char *PQ;
extern int sanitized;
/* Cleared where the default provider does the work (fallback). */
extern int want_cryptod_reason;

enum kind { K_GCM, K_CP, K_CBC, K_ECB, K_CTR, K_XTS, K_C20 };
struct cdef {
	const char *name;
	enum kind kind;
	size_t keylen, ivlen;
};
enum { N_CIPHERS = 16, N_DIGESTS = 5 };
extern const struct cdef ciphers[N_CIPHERS];
extern const char *digests[N_DIGESTS];

struct ccase {
	const struct cdef *cd;
	EVP_CIPHER *ref, *cry;
	uint8_t key[64], key2[64], iv[128], iv2[128], aad[300];
	size_t aad_len, len, ivlen, taglen;
	int pad;
	uint8_t *pt, *ct, tag[16];
};

uint64_t rnd(uint64_t *s);
size_t rnd_below(uint64_t *s, size_t n);
void rnd_fill(uint64_t *s, uint8_t *p, size_t n);
size_t rnd_len(uint64_t *s);
size_t rnd_cut(uint64_t *s, size_t left);
int ref_crypt(struct ccase *k, int enc, const uint8_t *key, const uint8_t *iv,
	      const uint8_t *in, uint8_t *out, uint8_t *tag);
long cry_run(uint64_t *s, EVP_CIPHER_CTX **px, const struct ccase *k,
	     const uint8_t *in, uint8_t *out, int dup_ok);
EVP_CIPHER_CTX *cry_init(const struct ccase *k, int enc, const uint8_t *key,
			 const uint8_t *iv);
int aad_feed(uint64_t *s, EVP_CIPHER_CTX *x, const struct ccase *k);
void cipher_case(uint64_t *s, const struct cdef *cd, EVP_CIPHER *ref,
		 EVP_CIPHER *cry);
int evptest_run(EVP_CIPHER *c, const struct ccase *k, int enc, int frag,
		const uint8_t *in, uint8_t *out, uint8_t *tag);
void evptest_case(uint64_t *s, const struct cdef *cd, EVP_CIPHER *ref,
		  EVP_CIPHER *cry);
int ccm_run(EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv,
	    size_t ivlen, uint8_t *tag, size_t taglen, const uint8_t *aad,
	    size_t aad_len, const uint8_t *in, uint8_t *out, size_t len,
	    int dup);
void ccm_case(uint64_t *s, const char *name, EVP_CIPHER *ref, EVP_CIPHER *cry,
	      size_t keylen);
/* The TLS 1.2 record layouts of the AEADs: GCM and CCM seal an explicit
 * nonce with a 4-byte fixed IV, ChaCha20-Poly1305 XORs a 12-byte one;
 * CCM8's tag is 8 bytes, the others' 16. */
enum tls_aead { TLS_GCM, TLS_CHACHA, TLS_CCM, TLS_CCM8 };
void tls_case(uint64_t *s, const char *name, enum tls_aead kind);
void digest_case(uint64_t *s, const char *name);
void mac_case(uint64_t *s, int cmac, const char *sub);
/* HMAC and CMAC over what the daemon has not (MD5, SHA3, SM3, DES-EDE3):
 * fetched from cryptod, done in-process as the default provider's, each
 * message counted in-process; an unknown digest refused. One thread. */
void mac_local_case(uint64_t *s);
/* AES-128-XTS with equal key halves: decrypts on the daemon (IEEE 1619's
 * vector 1), encrypt init refused, as the default provider. */
void xts_equal_case(void);
/* pfx_counters(), a failure to read them counted as one. */
void counters(OSSL_LIB_CTX *l, uint64_t *nd, uint64_t *nf, uint64_t *ni);

/* The start of a program: skip (77) without a daemon binary, note a
 * sanitized build, pick the seed (TEST_SEED, else the time) and say it.
 * Returns the seed. */
uint64_t pe_begin(void);
/* Start d and load the provider into lib, talking to it: 0, or -1. */
int pe_daemon(struct fx_daemon *d, OSSL_PROVIDER **prov);
/* Unload, stop d, say PASS or FAIL with the seed: the exit status. */
int pe_end(struct fx_daemon *d, OSSL_PROVIDER *prov, uint64_t seed);

#endif
