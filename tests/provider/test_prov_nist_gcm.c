/* SPDX-License-Identifier: MIT */
/*
 * The NIST CAVP AES-GCM vectors (python3-cryptography-vectors) through
 * EVP and the provider: encrypt (ciphertext and the tag, truncated as the
 * vector says) and decrypt (the tag set first, a FAIL vector must fail
 * final), every IV length in the files (8, 96 and 1024 bits) on the
 * daemon: with fallback = fail (the default) a vector the daemon refused
 * would fail. Skips when the vectors or the daemon are missing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "cavp_gcm.h"
#include "prov_fixture.h"

#define VEC_DIR                                                                \
	"/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES/GCM"

static OSSL_LIB_CTX *lib;
static unsigned n_ok, n_bad, n_long;

/* 1 right, 0 wrong. */
static int run(EVP_CIPHER *c, const struct gcm_vec *v, int enc)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	uint8_t out[V_DATA_MAX + 16], tag[16];
	size_t ivlen = v->iv_len;
	OSSL_PARAM ps[] = { OSSL_PARAM_construct_size_t(
				    OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen),
			    OSSL_PARAM_END };
	int n, m, r = 0;
	const uint8_t *in = enc ? v->pt : v->ct;
	size_t len = enc ? v->pt_len : v->ct_len;
	ERR_clear_error();
	if (!EVP_CipherInit_ex2(x, c, NULL, NULL, enc, ps) ||
	    !EVP_CipherInit_ex2(x, NULL, v->key, v->iv, enc, NULL))
		goto out;
	if (!enc && !EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG,
					 (int)v->tag_len, (void *)v->tag))
		goto out;
	int ok = (!v->aad_len ||
		  EVP_CipherUpdate(x, NULL, &n, v->aad, (int)v->aad_len)) &&
		 (!len || EVP_CipherUpdate(x, out, &n, in, (int)len));
	if (ok && !len)
		n = 0;
	ok = ok && EVP_CipherFinal_ex(x, out + n, &m);
	if (!enc && v->fail) {
		r = !ok && pfx_err_names_cryptod();
		goto out;
	}
	if (!ok)
		goto out;
	if (enc) {
		r = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG,
					(int)v->tag_len, tag) &&
		    !memcmp(out, v->ct, v->ct_len) &&
		    !memcmp(tag, v->tag, v->tag_len);
	} else {
		r = !memcmp(out, v->pt, v->pt_len);
	}
out:
	EVP_CIPHER_CTX_free(x);
	return r;
}

static int run_file(const char *file, int dec)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", VEC_DIR, file);
	struct cavp p;
	if (cavp_open(&p, path, file, dec))
		return -1;
	static const char *names[] = { "AES-128-GCM", "AES-192-GCM",
				       "AES-256-GCM" };
	EVP_CIPHER *c[3];
	for (int i = 0; i < 3; i++)
		c[i] = EVP_CIPHER_fetch(lib, names[i], "provider=cryptod");
	struct gcm_vec v;
	int r;
	while ((r = cavp_next(&p, &v)) == 1) {
		int k = v.key_len == 16 ? 0 : v.key_len == 24 ? 1 : 2;
		int res = run(c[k], &v, !dec);
		if (res == 1) {
			n_ok++;
			n_long += v.iv_len > 16;
		} else {
			if (n_bad++ < 10)
				fprintf(stderr,
					"FAIL %s line %u: key %u, iv %u, pt %u, "
					"aad %u, tag %u%s\n",
					file, v.line, v.key_len, v.iv_len,
					v.pt_len, v.aad_len, v.tag_len,
					v.fail ? " (FAIL vector)" : "");
		}
	}
	for (int i = 0; i < 3; i++)
		EVP_CIPHER_free(c[i]);
	cavp_close(&p);
	return r;
}

int main(void)
{
	if (access(VEC_DIR "/gcmDecrypt128.rsp", R_OK)) {
		fprintf(stderr, "SKIP: no CAVP GCM vectors in %s\n", VEC_DIR);
		return FX_EXIT_SKIP;
	}
	pfx_need_daemon();
	struct fx_daemon d;
	OSSL_PROVIDER *prov;
	if (pfx_start(&d, &lib, &prov))
		return FX_EXIT_FAIL;
	int err = 0;
	static const struct {
		const char *file;
		int dec;
	} files[] = {
		{ "gcmEncryptExtIV128.rsp", 0 },
		{ "gcmEncryptExtIV192.rsp", 0 },
		{ "gcmEncryptExtIV256.rsp", 0 },
		{ "gcmDecrypt128.rsp", 1 },
		{ "gcmDecrypt192.rsp", 1 },
		{ "gcmDecrypt256.rsp", 1 },
	};
	for (unsigned i = 0; !err && i < sizeof(files) / sizeof(files[0]); i++)
		err = run_file(files[i].file, files[i].dec) < 0;
	int st = pfx_stop(&d, lib, prov);
	fprintf(stderr,
		"%u vectors right (%u with IVs over 16 bytes), %u wrong\n",
		n_ok, n_long, n_bad);
	if (err || st || n_bad || !n_ok || !n_long) {
		fprintf(stderr, "FAIL\n");
		return FX_EXIT_FAIL;
	}
	fprintf(stderr, "PASS\n");
	return FX_EXIT_PASS;
}
