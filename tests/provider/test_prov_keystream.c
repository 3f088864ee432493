/* SPDX-License-Identifier: MIT */
/*
 * CTR and ChaCha20 keystream fetched ahead (provider/prov_block.c):
 * messages of many small updates, against the default provider, byte for
 * byte, with the context's updated IV and num after every update; copies
 * made midway (dupctx, inside a fetched block) that go on alone; counters
 * that wrap inside a fetch (CTR's 128-bit counter, ChaCha20's 32-bit one,
 * carried into the nonce as OpenSSL does); and the daemon's op count,
 * which shows that the updates did not each cost an op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "prov_fixture.h"

static OSSL_LIB_CTX *lib;
static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fill(uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)next();
}

/* The state EVP shows of a context: the counter block now, and num. */
static int same_state(EVP_CIPHER_CTX *a, EVP_CIPHER_CTX *b, const char *what,
		      size_t at)
{
	uint8_t ia[16], ib[16];
	unsigned na = 0, nb = 0;
	OSSL_PARAM pa[] = {
		OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, ia, 16),
		OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, &na), OSSL_PARAM_END
	};
	OSSL_PARAM pb[] = {
		OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, ib, 16),
		OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, &nb), OSSL_PARAM_END
	};
	if (!EVP_CIPHER_CTX_get_params(a, pa) ||
	    !EVP_CIPHER_CTX_get_params(b, pb)) {
		FAIL("%s at %zu: get_params", what, at);
		return 0;
	}
	if (memcmp(ia, ib, 16) || na != nb) {
		FAIL("%s at %zu: counter or num differs (num %u, want %u)",
		     what, at, na, nb);
		return 0;
	}
	return 1;
}

/*
 * One message of len bytes in updates of 1..max_up bytes, through cryptod
 * (x) and the default provider (r); at dup_at, copies of both go on with
 * the rest of the message too.
 */
static void message(const char *name, const uint8_t *iv, size_t len,
		    size_t max_up, size_t dup_at, int enc)
{
	EVP_CIPHER *cc = EVP_CIPHER_fetch(lib, name, NULL);
	EVP_CIPHER *rc = EVP_CIPHER_fetch(NULL, name, "provider=default");
	uint8_t key[32];
	uint8_t *in = malloc(len), *want = malloc(len), *got = malloc(len),
		*got2 = malloc(len), *want2 = malloc(len);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new(), *r = EVP_CIPHER_CTX_new();
	EVP_CIPHER_CTX *x2 = NULL, *r2 = NULL;
	fill(key, sizeof(key));
	fill(in, len);
	if (!cc || !rc || !in || !want || !got || !got2 || !want2 ||
	    !EVP_CipherInit_ex2(x, cc, key, iv, enc, NULL) ||
	    !EVP_CipherInit_ex2(r, rc, key, iv, enc, NULL)) {
		FAIL("%s: set-up", name);
		goto out;
	}
	size_t off = 0;
	while (off < len) {
		size_t n = 1 + next() % max_up;
		int a, b;
		if (n > len - off)
			n = len - off;
		if (!EVP_CipherUpdate(x, got + off, &a, in + off, (int)n) ||
		    !EVP_CipherUpdate(r, want + off, &b, in + off, (int)n) ||
		    a != (int)n || b != (int)n) {
			FAIL("%s: update of %zu at %zu", name, n, off);
			goto out;
		}
		off += n;
		/* OpenSSL 3.0's ChaCha20 reports neither. */
		if (strstr(name, "CTR") && !same_state(x, r, name, off))
			goto out;
		if (!x2 && off >= dup_at) {
			x2 = EVP_CIPHER_CTX_new();
			r2 = EVP_CIPHER_CTX_new();
			if (!x2 || !r2 || !EVP_CIPHER_CTX_copy(x2, x) ||
			    !EVP_CIPHER_CTX_copy(r2, r)) {
				FAIL("%s: dup at %zu", name, off);
				goto out;
			}
			memcpy(got2, got, off);
			memcpy(want2, want, off);
			/* The copy goes on alone with small updates. */
			for (size_t o = off; o < len;) {
				size_t m = 1 + next() % 700;
				if (m > len - o)
					m = len - o;
				if (!EVP_CipherUpdate(x2, got2 + o, &a, in + o,
						      (int)m) ||
				    !EVP_CipherUpdate(r2, want2 + o, &b, in + o,
						      (int)m)) {
					FAIL("%s: the copy's update", name);
					goto out;
				}
				o += m;
			}
			if (memcmp(got2, want2, len))
				FAIL("%s: the copy made at %zu differs", name,
				     off);
		}
	}
	if (memcmp(got, want, len))
		FAIL("%s: %zu bytes in updates of up to %zu differ", name, len,
		     max_up);
out:
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_CTX_free(r);
	EVP_CIPHER_CTX_free(x2);
	EVP_CIPHER_CTX_free(r2);
	EVP_CIPHER_free(cc);
	EVP_CIPHER_free(rc);
	free(in);
	free(want);
	free(got);
	free(got2);
	free(want2);
}

static uint64_t daemon_ops(const char *sock)
{
	struct cc_conn *c;
	struct cc_stats st;
	uint64_t ops = 0;
	if (cc_connect(sock, "test_prov_keystream", &c) < 0)
		return 0;
	if (cc_stats_get(c, &st) == 0) {
		for (unsigned i = 0; i < st.n_engines; i++)
			ops += st.engines[i].c.ops;
		cc_stats_free(&st);
	}
	cc_disconnect(c);
	return ops;
}

int main(void)
{
	pfx_need_daemon();
	rng = pfx_seed() | 1;
	struct fx_daemon d;
	OSSL_PROVIDER *prov;
	if (pfx_start(&d, &lib, &prov))
		return FX_EXIT_FAIL;

	uint8_t iv[16];
	static const char *const names[] = { "AES-128-CTR", "AES-256-CTR",
					     "ChaCha20" };
	for (int i = 0; i < 3; i++) {
		for (int enc = 0; enc < 2; enc++) {
			fill(iv, 16);
			message(names[i], iv, 3 << 20, 9000,
				1 + next() % (2 << 20), enc);
			fill(iv, 16);
			message(names[i], iv, 300000, 100, 1 + next() % 290000,
				enc);
		}
	}
	/* Counters that wrap inside a fetch: CTR's whole block (all ones
	 * but the last few blocks), ChaCha20's 32-bit counter. */
	memset(iv, 0xff, 16);
	iv[15] = 0xf0;
	message("AES-128-CTR", iv, 1 << 20, 3000, 500000, 1);
	fill(iv, 16);
	iv[0] = 0xf0, iv[1] = iv[2] = iv[3] = 0xff; /* 2^32 - 16 blocks */
	message("ChaCha20", iv, 1 << 20, 3000, 500000, 1);

	/* 1 MiB in 4 KiB updates: 256 updates, a handful of daemon ops. */
	uint64_t ops0 = daemon_ops(d.sock);
	fill(iv, 16);
	message("AES-128-CTR", iv, 1 << 20, 4096, 1 << 21, 1);
	uint64_t ops = daemon_ops(d.sock) - ops0;
	fprintf(stderr, "1 MiB in 4 KiB updates: %llu daemon ops\n",
		(unsigned long long)ops);
	if (ops == 0 || ops > 32)
		FAIL("%llu daemon ops for 256 updates: the keystream was not "
		     "fetched ahead",
		     (unsigned long long)ops);

	uint64_t nd = 0, nf = 0;
	if (pfx_counters(lib, &nd, &nf, NULL) || !nd || nf)
		FAIL("%llu messages on the daemon, %llu fallbacks",
		     (unsigned long long)nd, (unsigned long long)nf);
	return pfx_verdict(pfx_stop(&d, lib, prov), 0);
}
