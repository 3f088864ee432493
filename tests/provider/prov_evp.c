// SPDX-License-Identifier: MIT
/*
 * What the test_prov_evp* programs share (prov_evp.h).
 */
#include "prov_evp.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

OSSL_LIB_CTX *lib; /* cryptod alone */
const char *PQ = "provider=cryptod";
int sanitized;
/* Cleared where the default provider does the work (fallback). */
int want_cryptod_reason = 1;

/* xorshift64*: deterministic per thread from TEST_SEED. */
uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}
size_t rnd_below(uint64_t *s, size_t n)
{
	return n ? (size_t)(rnd(s) % n) : 0;
}
void rnd_fill(uint64_t *s, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(rnd(s) >> 32);
}
/* A message length: mostly short, sometimes odd, now and then MiBs. */
size_t rnd_len(uint64_t *s)
{
	switch (rnd_below(s, 10)) {
	case 0:
		return rnd_below(s, 17);
	case 1:
		return sanitized ? rnd_below(s, MIB) : rnd_below(s, 3 * MIB);
	case 2:
	case 3:
		return rnd_below(s, 70000);
	default:
		return rnd_below(s, 2000);
	}
}
/* An update size: 1 byte .. 1 MiB. */
size_t rnd_cut(uint64_t *s, size_t left)
{
	size_t n;
	switch (rnd_below(s, 4)) {
	case 0:
		n = 1 + rnd_below(s, 16);
		break;
	case 1:
		n = 1 + rnd_below(s, MIB);
		break;
	default:
		n = 1 + rnd_below(s, 5000);
	}
	return n < left ? n : left;
}

const struct cdef ciphers[N_CIPHERS] = {
	{ "AES-128-GCM", K_GCM, 16, 12 }, { "AES-192-GCM", K_GCM, 24, 12 },
	{ "AES-256-GCM", K_GCM, 32, 12 }, { "ChaCha20-Poly1305", K_CP, 32, 12 },
	{ "AES-128-CBC", K_CBC, 16, 16 }, { "AES-192-CBC", K_CBC, 24, 16 },
	{ "AES-256-CBC", K_CBC, 32, 16 }, { "AES-128-ECB", K_ECB, 16, 0 },
	{ "AES-192-ECB", K_ECB, 24, 0 },  { "AES-256-ECB", K_ECB, 32, 0 },
	{ "AES-128-CTR", K_CTR, 16, 16 }, { "AES-192-CTR", K_CTR, 24, 16 },
	{ "AES-256-CTR", K_CTR, 32, 16 }, { "AES-128-XTS", K_XTS, 32, 16 },
	{ "AES-256-XTS", K_XTS, 64, 16 }, { "ChaCha20", K_C20, 32, 16 },
};

/* The reference: one update of everything, the default provider. */
int ref_crypt(struct ccase *k, int enc, const uint8_t *key, const uint8_t *iv,
	      const uint8_t *in, uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int n, m = 0, ok = 1;
	OSSL_PARAM ps[] = { OSSL_PARAM_construct_size_t(
				    OSSL_CIPHER_PARAM_AEAD_IVLEN, &k->ivlen),
			    OSSL_PARAM_END };
	int aead = k->cd->kind == K_GCM || k->cd->kind == K_CP;
	ok = EVP_CipherInit_ex2(x, k->ref, NULL, NULL, enc, aead ? ps : NULL) &&
	     EVP_CipherInit_ex2(x, NULL, key, iv, enc, NULL);
	EVP_CIPHER_CTX_set_padding(x, k->pad);
	if (aead && !enc)
		ok &= EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG,
					  (int)k->taglen, tag);
	if (aead && k->aad_len)
		ok &= EVP_CipherUpdate(x, NULL, &n, k->aad, (int)k->aad_len);
	ok &= EVP_CipherUpdate(x, out, &n, in, (int)k->len);
	ok &= EVP_CipherFinal_ex(x, out + n, &m);
	if (aead && enc)
		ok &= EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(x);
	return ok ? n + m : -1;
}

/* Runs the provider over in[0..len) in random cuts, in place or not,
 * maybe duplicating the context midway (and going on with the copy).
 * Returns the bytes written, or -1 when an update or final failed. */
long cry_run(uint64_t *s, EVP_CIPHER_CTX **px, const struct ccase *k,
	     const uint8_t *in, uint8_t *out, int dup_ok)
{
	EVP_CIPHER_CTX *x = *px;
	int in_place = rnd_below(s, 2);
	if (in_place) {
		memcpy(out, in, k->len);
		in = out;
	}
	size_t off = 0, w = 0;
	int n, dup_at = dup_ok && k->len ? (int)rnd_below(s, 3) : -1;
	if (k->cd->kind == K_XTS) { /* one update, one data unit */
		if (!EVP_CipherUpdate(x, out, &n, in, (int)k->len))
			return -1;
		w = (size_t)n;
		off = k->len;
	}
	for (int piece = 0; off < k->len; piece++) {
		size_t c = rnd_cut(s, k->len - off);
		if (piece == dup_at) {
			EVP_CIPHER_CTX *d = EVP_CIPHER_CTX_new();
			if (!EVP_CIPHER_CTX_copy(d, x)) {
				FAIL("%s: dupctx midway", k->cd->name);
				EVP_CIPHER_CTX_free(d);
				return -1;
			}
			EVP_CIPHER_CTX_free(x);
			*px = x = d;
		}
		/* In place, output lands where the input was read. */
		if (!EVP_CipherUpdate(x, out + w, &n, in + off, (int)c))
			return -1;
		off += c;
		w += (size_t)n;
	}
	if (!EVP_CipherFinal_ex(x, out + w, &n))
		return -1;
	return (long)(w + (size_t)n);
}

EVP_CIPHER_CTX *cry_init(const struct ccase *k, int enc, const uint8_t *key,
			 const uint8_t *iv)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	size_t ivlen = k->ivlen;
	OSSL_PARAM ps[] = { OSSL_PARAM_construct_size_t(
				    OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen),
			    OSSL_PARAM_END };
	int aead = k->cd->kind == K_GCM || k->cd->kind == K_CP;
	if (!EVP_CipherInit_ex2(x, k->cry, NULL, NULL, enc, aead ? ps : NULL) ||
	    !EVP_CipherInit_ex2(x, NULL, key, iv, enc, NULL)) {
		EVP_CIPHER_CTX_free(x);
		return NULL;
	}
	EVP_CIPHER_CTX_set_padding(x, k->pad);
	return x;
}

/* AAD in random pieces (the provider buffers them). */
int aad_feed(uint64_t *s, EVP_CIPHER_CTX *x, const struct ccase *k)
{
	size_t off = 0;
	int n;
	while (off < k->aad_len) {
		size_t c = 1 + rnd_below(s, k->aad_len - off);
		if (!EVP_CipherUpdate(x, NULL, &n, k->aad + off, (int)c))
			return 0;
		off += c;
	}
	return 1;
}

void cipher_case(uint64_t *s, const struct cdef *cd, EVP_CIPHER *ref,
		 EVP_CIPHER *cry)
{
	struct ccase k = { .cd = cd, .ref = ref, .cry = cry, .pad = 1 };
	int aead = cd->kind == K_GCM || cd->kind == K_CP;
	rnd_fill(s, k.key, sizeof(k.key));
	rnd_fill(s, k.key2, sizeof(k.key2));
	rnd_fill(s, k.iv, sizeof(k.iv));
	rnd_fill(s, k.iv2, sizeof(k.iv2));
	if (cd->kind == K_C20 && rnd_below(s, 3) == 0) {
		/* The 32-bit block counter about to wrap (OpenSSL carries
		 * into the next word). */
		uint32_t ctr = 0xffffffffu - (uint32_t)rnd_below(s, 40);
		for (int i = 0; i < 4; i++)
			k.iv[i] = (uint8_t)(ctr >> (8 * i));
	}
	k.ivlen = cd->ivlen;
	if (cd->kind == K_GCM && rnd_below(s, 4) == 0)
		k.ivlen = 1 + rnd_below(s, 128); /* GCM: any IV length */
	k.aad_len = aead ? rnd_below(s, sizeof(k.aad) + 1) : 0;
	rnd_fill(s, k.aad, k.aad_len);
	k.len = rnd_len(s);
	if (cd->kind == K_XTS && k.len < 16)
		k.len = 16 + rnd_below(s, 100);
	if (cd->kind == K_XTS && k.len > (16u << 20))
		k.len = 16u << 20;
	if (cd->kind == K_CBC || cd->kind == K_ECB) {
		k.pad = rnd_below(s, 3) != 0;
		if (!k.pad)
			k.len &= ~(size_t)15;
	}
	k.taglen = 16;
	size_t room = k.len + 32;
	k.pt = malloc(room);
	k.ct = malloc(room);
	uint8_t *out = malloc(room), *ct2 = malloc(room);
	rnd_fill(s, k.pt, k.len);

	int ctlen = ref_crypt(&k, 1, k.key, k.iv, k.pt, k.ct, k.tag);
	if (ctlen < 0) {
		FAIL("%s: the reference failed", cd->name);
		goto out;
	}

	/* Encrypt: AAD in pieces, data in random cuts, dup midway (not
	 * for AEADs, whose state the daemon holds). */
	EVP_CIPHER_CTX *x = cry_init(&k, 1, k.key, k.iv);
	if (!x || (aead && !aad_feed(s, x, &k))) {
		FAIL("%s: encrypt init", cd->name);
		EVP_CIPHER_CTX_free(x);
		goto out;
	}
	if (aead && rnd_below(s, 4) == 0) { /* dup before any data */
		EVP_CIPHER_CTX *d = EVP_CIPHER_CTX_new();
		if (!EVP_CIPHER_CTX_copy(d, x))
			FAIL("%s: dupctx before data", cd->name);
		EVP_CIPHER_CTX_free(x);
		x = d;
	}
	long w = cry_run(s, &x, &k, k.pt, out, !aead);
	if (w != ctlen || memcmp(out, k.ct, (size_t)ctlen))
		FAIL("%s: encrypt of %zu bytes (pad %d, iv %zu, aad %zu): %ld "
		     "bytes, want %d",
		     cd->name, k.len, k.pad, k.ivlen, k.aad_len, w, ctlen);
	if (aead) {
		uint8_t tag[16];
		size_t tl = cd->kind == K_GCM ? 4 + rnd_below(s, 13) : 16;
		if (!EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, (int)tl,
					 tag) ||
		    memcmp(tag, k.tag, tl))
			FAIL("%s: tag (%zu bytes)", cd->name, tl);
	}

	/* Reinit with a new IV, then a new key: as a fresh context. */
	if (k.len < 100000 && rnd_below(s, 3) == 0) {
		int newkey = rnd_below(s, 2);
		const uint8_t *key2 = newkey ? k.key2 : k.key;
		if (cd->kind == K_XTS && newkey)
			k.key2[0] = (uint8_t)~k.key2[cd->keylen / 2];
		int n2 = ref_crypt(&k, 1, key2, k.iv2, k.pt, ct2, k.tag);
		if (!EVP_CipherInit_ex2(x, NULL, newkey ? k.key2 : NULL, k.iv2,
					1, NULL) ||
		    (aead && !aad_feed(s, x, &k)))
			FAIL("%s: reinit", cd->name);
		else if (cry_run(s, &x, &k, k.pt, out, 0) != n2 ||
			 memcmp(out, ct2, (size_t)n2))
			FAIL("%s: after reinit (new key %d)", cd->name, newkey);
		memcpy(k.iv, k.iv2, sizeof(k.iv));
		if (newkey)
			memcpy(k.key, k.key2, sizeof(k.key));
		memcpy(k.ct, ct2, (size_t)n2);
		ctlen = n2;
	}
	EVP_CIPHER_CTX_free(x);

	/* Decrypt, the tag set before or after the data (a truncated
	 * one before: the daemon's session is made with its length). */
	struct ccase d = k;
	d.len = (size_t)ctlen;
	if (cd->kind == K_GCM && rnd_below(s, 3) == 0) {
		static const size_t tls[] = { 4, 8, 12, 13, 14, 15 };
		d.taglen = tls[rnd_below(s, 6)];
	}
	int early = d.taglen != 16 || rnd_below(s, 2);
	x = cry_init(&d, 0, k.key, k.iv);
	if (!x ||
	    (aead && early &&
	     !EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)d.taglen,
				  k.tag)) ||
	    (aead && !aad_feed(s, x, &d))) {
		FAIL("%s: decrypt init", cd->name);
		EVP_CIPHER_CTX_free(x);
		goto out;
	}
	w = 0;
	if (aead && !early) {
		/* Data first, the tag just before final. */
		int n;
		size_t off = 0;
		while (off < d.len) {
			size_t c = rnd_cut(s, d.len - off);
			if (!EVP_CipherUpdate(x, out + off, &n, k.ct + off,
					      (int)c))
				break;
			off += c;
		}
		/* GCM: a truncated tag known only now, as OpenSSL takes
		 * it (the daemon verifies that many bytes). */
		static const int late[] = { 16, 4, 8, 12, 13, 14, 15 };
		int lt = cd->kind == K_GCM ? late[rnd_below(s, 7)] : 16;
		if (!EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, lt, k.tag) ||
		    !EVP_CipherFinal_ex(x, out + off, &n))
			w = -1;
		else
			w = (long)off;
	} else {
		w = cry_run(s, &x, &d, k.ct, out, !aead);
	}
	if (w != (long)k.len || memcmp(out, k.pt, k.len))
		FAIL("%s: decrypt of %d bytes (tag %zu, %s): %ld", cd->name,
		     ctlen, d.taglen, early ? "early" : "late", w);
	EVP_CIPHER_CTX_free(x);

	/* A damaged last block under padding: the providers agree on
	 * whether final fails and on what comes out. */
	if ((cd->kind == K_CBC || cd->kind == K_ECB) && k.pad && ctlen) {
		k.ct[ctlen - 1 - (int)rnd_below(s, 16)] ^=
			(uint8_t)(1 + rnd_below(s, 255));
		EVP_CIPHER_CTX *r = EVP_CIPHER_CTX_new();
		EVP_CIPHER_CTX *y = cry_init(&d, 0, k.key, k.iv);
		uint8_t *o1 = malloc((size_t)ctlen + 16);
		int n1 = 0, n2 = 0, t1 = 0, t2 = 0;
		int ok = y &&
			 EVP_CipherInit_ex2(r, ref, k.key, k.iv, 0, NULL) &&
			 EVP_CipherUpdate(r, o1, &n1, k.ct, ctlen) &&
			 EVP_CipherUpdate(y, out, &n2, k.ct, ctlen);
		int f1 = ok && EVP_CipherFinal_ex(r, o1 + n1, &t1);
		int f2 = ok && EVP_CipherFinal_ex(y, out + n2, &t2);
		ERR_clear_error();
		if (!ok || n1 != n2 || f1 != f2 ||
		    memcmp(o1, out, (size_t)n1) ||
		    (f1 && (t1 != t2 || memcmp(o1 + n1, out + n2, (size_t)t1))))
			FAIL("%s: a damaged last block: final %d, want %d",
			     cd->name, f2, f1);
		free(o1);
		EVP_CIPHER_CTX_free(r);
		EVP_CIPHER_CTX_free(y);
	}

	/* A forged tag: final fails, with cryptod's reason. */
	if (aead) {
		uint8_t bad[16];
		memcpy(bad, k.tag, 16);
		bad[rnd_below(s, d.taglen)] ^= (uint8_t)(1u << rnd_below(s, 8));
		x = cry_init(&d, 0, k.key, k.iv);
		int n, ok = x &&
			    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG,
						(int)d.taglen, bad) &&
			    aad_feed(s, x, &d) &&
			    EVP_CipherUpdate(x, out, &n, k.ct, (int)d.len);
		ERR_clear_error();
		if (!ok)
			FAIL("%s: forged-tag decrypt update", cd->name);
		else if (EVP_CipherFinal_ex(x, out + n, &n))
			FAIL("%s: a forged tag was accepted", cd->name);
		else if (!pfx_err_names_cryptod() && want_cryptod_reason)
			FAIL("%s: the bad tag's error does not name cryptod",
			     cd->name);
		EVP_CIPHER_CTX_free(x);
	}
out:
	free(k.pt);
	free(k.ct);
	free(out);
	free(ct2);
}

/* The calls OpenSSL's evp_test makes for a cipher vector: tag length
 * before the key (GCM refuses it when encrypting, and that is ignored),
 * set_key_length, the IV read back, a dup before any data, no padding,
 * AAD and data fragmented 1, n - 2, 1 bytes. Run on both providers. */
int evptest_run(EVP_CIPHER *c, const struct ccase *k, int enc, int frag,
		const uint8_t *in, uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX *base = EVP_CIPHER_CTX_new(), *x = EVP_CIPHER_CTX_new();
	int aead = k->cd->kind == K_GCM || k->cd->kind == K_CP;
	int n, w = -1;
	uint8_t iv[128];
	if (!EVP_CipherInit_ex(base, c, NULL, NULL, NULL, enc))
		goto out;
	if (aead) {
		if (!EVP_CIPHER_CTX_ctrl(base, EVP_CTRL_AEAD_SET_IVLEN,
					 (int)k->ivlen, NULL))
			goto out;
		(void)EVP_CIPHER_CTX_ctrl(base, EVP_CTRL_AEAD_SET_TAG,
					  (int)k->taglen, enc ? NULL : tag);
		ERR_clear_error();
	}
	if (!EVP_CIPHER_CTX_set_key_length(base, (int)k->cd->keylen) ||
	    !EVP_CipherInit_ex(base, NULL, NULL, k->key,
			       k->cd->ivlen ? k->iv : NULL, -1))
		goto out;
	if (k->cd->ivlen &&
	    (!EVP_CIPHER_CTX_get_updated_iv(base, iv, sizeof(iv)) ||
	     (!(EVP_CIPHER_get_flags(c) & EVP_CIPH_CUSTOM_IV) &&
	      memcmp(iv, k->iv, k->ivlen))))
		goto out;
	if (!EVP_CIPHER_CTX_copy(x, base))
		goto out;
	const uint8_t *a = k->aad;
	size_t al = k->aad_len;
	if (aead && al) {
		size_t cuts[3] = { 1, al - 2, 1 };
		if (!frag || al < 3) {
			cuts[0] = al;
			cuts[1] = cuts[2] = 0;
		}
		for (int i = 0; i < 3; i++) {
			if (cuts[i] &&
			    !EVP_CipherUpdate(x, NULL, &n, a, (int)cuts[i]))
				goto out;
			a += cuts[i];
		}
	}
	EVP_CIPHER_CTX_set_padding(x, 0);
	size_t len = k->len, cuts[3] = { 1, len - 2, 1 }, off = 0;
	if (!frag || len < 3) {
		cuts[0] = len;
		cuts[1] = cuts[2] = 0;
	}
	long got = 0;
	for (int i = 0; i < 3; i++) {
		if (!cuts[i])
			continue;
		if (!EVP_CipherUpdate(x, out + got, &n, in + off, (int)cuts[i]))
			goto out;
		off += cuts[i];
		got += n;
	}
	if (!EVP_CipherFinal_ex(x, out + got, &n))
		goto out;
	got += n;
	if (aead && enc &&
	    !EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, (int)k->taglen, tag))
		goto out;
	w = (int)got;
out:
	EVP_CIPHER_CTX_free(base);
	EVP_CIPHER_CTX_free(x);
	return w;
}

void evptest_case(uint64_t *s, const struct cdef *cd, EVP_CIPHER *ref,
		  EVP_CIPHER *cry)
{
	struct ccase k = { .cd = cd, .ivlen = cd->ivlen, .taglen = 16 };
	rnd_fill(s, k.key, sizeof(k.key));
	rnd_fill(s, k.iv, sizeof(k.iv));
	/* evpciph_aes_gcm.txt's long IVs: 60..64 bytes */
	if (cd->kind == K_GCM && rnd_below(s, 3) == 0)
		k.ivlen = 60 + rnd_below(s, 5);
	k.len = rnd_below(s, 300);
	if (cd->kind == K_CBC || cd->kind == K_ECB)
		k.len &= ~(size_t)15;
	if (cd->kind == K_XTS)
		k.len = 16 + rnd_below(s, 200);
	k.aad_len = rnd_below(s, 40);
	rnd_fill(s, k.aad, k.aad_len);
	uint8_t pt[512], a[512], b[512], ta[16], tb[16];
	rnd_fill(s, pt, k.len);
	int frag = cd->kind != K_XTS && rnd_below(s, 2);
	int wa = evptest_run(ref, &k, 1, frag, pt, a, ta);
	int wb = evptest_run(cry, &k, 1, frag, pt, b, tb);
	if (wa < 0 || wa != wb || memcmp(a, b, (size_t)wa) ||
	    ((cd->kind == K_GCM || cd->kind == K_CP) && memcmp(ta, tb, 16))) {
		FAIL("%s: evp_test's encrypt (%zu bytes, frag %d): %d, want %d",
		     cd->name, k.len, frag, wb, wa);
		return;
	}
	k.len = (size_t)wa;
	int wd = evptest_run(cry, &k, 0, frag, a, b, ta);
	if (wd != (int)k.len || memcmp(b, pt, k.len))
		FAIL("%s: evp_test's decrypt (frag %d)", cd->name, frag);
}

/* AES-CCM, as EVP wants it: nonce and tag lengths first, the message
 * length before the AAD, one data update that makes or checks the tag. */
int ccm_run(EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv,
	    size_t ivlen, uint8_t *tag, size_t taglen, const uint8_t *aad,
	    size_t aad_len, const uint8_t *in, uint8_t *out, size_t len,
	    int dup)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int n, ok = EVP_CipherInit_ex2(x, c, NULL, NULL, enc, NULL) &&
		    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, (int)ivlen,
					NULL) &&
		    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)taglen,
					enc ? NULL : tag) &&
		    EVP_CipherInit_ex2(x, NULL, key, iv, enc, NULL);
	if (ok && dup) {
		EVP_CIPHER_CTX *d = EVP_CIPHER_CTX_new();
		ok = EVP_CIPHER_CTX_copy(d, x);
		EVP_CIPHER_CTX_free(x);
		x = d;
	}
	ok = ok && EVP_CipherUpdate(x, NULL, &n, NULL, (int)len) &&
	     (!aad_len || EVP_CipherUpdate(x, NULL, &n, aad, (int)aad_len));
	if (ok)
		ok = EVP_CipherUpdate(x, out, &n, in, (int)len) &&
		     (size_t)n == len && EVP_CipherFinal_ex(x, out + n, &n);
	if (ok && enc)
		ok = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, (int)taglen,
					 tag);
	EVP_CIPHER_CTX_free(x);
	return ok;
}

void ccm_case(uint64_t *s, const char *name, EVP_CIPHER *ref, EVP_CIPHER *cry,
	      size_t keylen)
{
	uint8_t key[32], iv[13], aad[300], tag[16], tag2[16];
	size_t ivlen = 7 + rnd_below(s, 7), taglen = 4 + 2 * rnd_below(s, 7);
	size_t len = rnd_len(s), aad_len = rnd_below(s, sizeof(aad) + 1);
	if (len > MIB)
		len = MIB;
	if (ivlen == 13) /* L = 2: the length fits 16 bits */
		len &= 0xffff;
	uint8_t *pt = malloc(len + 1), *ct = malloc(len + 1),
		*out = malloc(len + 1);
	rnd_fill(s, key, keylen);
	rnd_fill(s, iv, ivlen);
	rnd_fill(s, aad, aad_len);
	rnd_fill(s, pt, len);
	int in_place = rnd_below(s, 2), dup = rnd_below(s, 2);
	if (!ccm_run(ref, 1, key, iv, ivlen, tag, taglen, aad, aad_len, pt, ct,
		     len, 0)) {
		FAIL("%s: the reference", name);
		goto out;
	}
	if (in_place)
		memcpy(out, pt, len);
	if (!ccm_run(cry, 1, key, iv, ivlen, tag2, taglen, aad, aad_len,
		     in_place ? out : pt, out, len, dup) ||
	    memcmp(out, ct, len) || memcmp(tag, tag2, taglen))
		FAIL("%s: encrypt of %zu bytes (nonce %zu, tag %zu, aad %zu)",
		     name, len, ivlen, taglen, aad_len);
	if (in_place)
		memcpy(out, ct, len);
	if (!ccm_run(cry, 0, key, iv, ivlen, tag, taglen, aad, aad_len,
		     in_place ? out : ct, out, len, dup) ||
	    memcmp(out, pt, len))
		FAIL("%s: decrypt of %zu bytes", name, len);
	tag[rnd_below(s, taglen)] ^= 1;
	ERR_clear_error();
	if (ccm_run(cry, 0, key, iv, ivlen, tag, taglen, aad, aad_len, ct, out,
		    len, 0))
		FAIL("%s: a forged tag was accepted", name);
	else if (!pfx_err_names_cryptod() && want_cryptod_reason)
		FAIL("%s: the bad tag's error does not name cryptod", name);
out:
	free(pt);
	free(ct);
	free(out);
}

/* TLS 1.2 records (tlsaad, fixed IV, one in-place update): sealed by
 * one provider, opened by the other, in libssl's order of calls (CCM:
 * nonce and tag length before the key, the fixed IV before it too). A
 * record whose tag was changed does not open, and leaves no plaintext. */
static int tls_ctx(EVP_CIPHER_CTX *x, EVP_CIPHER *c, int enc,
		   enum tls_aead kind, const uint8_t *key, const uint8_t *fixed,
		   size_t flen)
{
	if (kind < TLS_CCM)
		return EVP_CipherInit_ex2(x, c, key, NULL, enc, NULL) &&
		       EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IV_FIXED,
					   (int)flen, (void *)fixed) > 0;
	return EVP_CipherInit_ex2(x, c, NULL, NULL, enc, NULL) &&
	       EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0 &&
	       EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG,
				   kind == TLS_CCM8 ? 8 : 16, NULL) > 0 &&
	       EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IV_FIXED, (int)flen,
				   (void *)fixed) > 0 &&
	       EVP_CipherInit_ex2(x, NULL, key, NULL, enc, NULL);
}

void tls_case(uint64_t *s, const char *name, enum tls_aead kind)
{
	uint8_t key[32], fixed[12], aad[13], rec[2048], copy[2048];
	size_t plen = rnd_below(s, 1500);
	size_t flen = kind == TLS_CHACHA ? 12 : 4;
	size_t xiv = kind == TLS_CHACHA ? 0 : 8;
	size_t tlen = kind == TLS_CCM8 ? 8 : 16;
	rnd_fill(s, key, sizeof(key));
	rnd_fill(s, fixed, sizeof(fixed));
	rnd_fill(s, aad, 11);
	rnd_fill(s, rec + xiv, plen);
	memcpy(copy, rec, sizeof(copy));
	for (int dir = 0; dir < 2; dir++) {
		/* dir 0: cryptod seals, default opens; 1: the other way */
		EVP_CIPHER *ce = EVP_CIPHER_fetch(dir ? NULL : lib, name,
						  dir ? NULL : PQ);
		EVP_CIPHER *cd = EVP_CIPHER_fetch(dir ? lib : NULL, name,
						  dir ? PQ : NULL);
		EVP_CIPHER_CTX *e = EVP_CIPHER_CTX_new(),
			       *dx = EVP_CIPHER_CTX_new();
		memcpy(rec, copy, sizeof(rec));
		size_t rlen = xiv + plen + tlen;
		int ok = ce && cd &&
			 tls_ctx(e, ce, 1, kind, key, fixed, flen) &&
			 tls_ctx(dx, cd, 0, kind, key, fixed, flen);
		/* The record's length: the sealer's without the tag, the
		 * opener's with it (libssl's convention). */
		aad[11] = (uint8_t)((rlen - tlen) >> 8);
		aad[12] = (uint8_t)(rlen - tlen);
		int pad = ok ? EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_AEAD_TLS1_AAD,
						   13, aad)
			     : 0;
		int n = 0;
		ok = ok && pad == (int)tlen &&
		     EVP_CipherUpdate(e, rec, &n, rec, (int)rlen) &&
		     (size_t)n == rlen;
		if (!ok)
			FAIL("%s TLS seal (dir %d, %zu bytes)", name, dir,
			     plen);
		/* CCM's explicit nonce is the sequence number, as OpenSSL's
		 * (GCM's is the IV's invocation field). */
		if (ok && kind >= TLS_CCM && memcmp(rec, aad, xiv))
			FAIL("%s TLS seal (dir %d): explicit nonce", name, dir);
		uint8_t daad[13], sealed[2048];
		memcpy(daad, aad, 13);
		daad[11] = (uint8_t)(rlen >> 8);
		daad[12] = (uint8_t)rlen;
		memcpy(sealed, rec, rlen);
		ok = ok &&
		     EVP_CIPHER_CTX_ctrl(dx, EVP_CTRL_AEAD_TLS1_AAD, 13,
					 daad) == (int)tlen &&
		     EVP_CipherUpdate(dx, rec, &n, rec, (int)rlen) &&
		     (size_t)n == plen && !memcmp(rec + xiv, copy + xiv, plen);
		if (!ok)
			FAIL("%s TLS open (dir %d, %zu bytes)", name, dir,
			     plen);
		/* A changed tag: refused, the plaintext not left behind. */
		memcpy(rec, sealed, rlen);
		rec[rlen - 1 - rnd_below(s, tlen)] ^= 0x20;
		ERR_clear_error();
		if (ok && (EVP_CIPHER_CTX_ctrl(dx, EVP_CTRL_AEAD_TLS1_AAD, 13,
					       daad) != (int)tlen ||
			   EVP_CipherUpdate(dx, rec, &n, rec, (int)rlen) ||
			   (plen && !memcmp(rec + xiv, copy + xiv, plen))))
			FAIL("%s TLS open (dir %d): a forged record", name,
			     dir);
		ERR_clear_error();
		EVP_CIPHER_CTX_free(e);
		EVP_CIPHER_CTX_free(dx);
		EVP_CIPHER_free(ce);
		EVP_CIPHER_free(cd);
	}
}

const char *digests[N_DIGESTS] = { "SHA1", "SHA224", "SHA256", "SHA384",
				   "SHA512" };

void digest_case(uint64_t *s, const char *name)
{
	EVP_MD *ref = EVP_MD_fetch(NULL, name, NULL);
	EVP_MD *cry = EVP_MD_fetch(lib, name, PQ);
	size_t len = rnd_len(s);
	uint8_t *m = malloc(len + 1), a[64], b[64], c[64];
	unsigned na = 0, nb = 0, nc = 0;
	rnd_fill(s, m, len);
	if (!cry || !EVP_Digest(m, len, a, &na, ref, NULL)) {
		FAIL("%s: fetch", name);
		goto out;
	}
	EVP_MD_CTX *x = EVP_MD_CTX_new(), *d = NULL;
	size_t off = 0, dup_at = rnd_below(s, 70000);
	EVP_DigestInit_ex2(x, cry, NULL);
	while (off < len) {
		size_t n = rnd_cut(s, len - off);
		if (!d && off >= dup_at && off < 60000) {
			/* Midway but buffered: the copy goes on its own. */
			d = EVP_MD_CTX_new();
			if (!EVP_MD_CTX_copy_ex(d, x))
				FAIL("%s: dup at %zu", name, off);
			else if (!EVP_DigestUpdate(d, m + off, len - off) ||
				 !EVP_DigestFinal_ex(d, c, &nc) || nc != na ||
				 memcmp(a, c, na))
				FAIL("%s: the copy's digest", name);
		}
		EVP_DigestUpdate(x, m + off, n);
		off += n;
	}
	if (!EVP_DigestFinal_ex(x, b, &nb) || na != nb || memcmp(a, b, na))
		FAIL("%s of %zu bytes", name, len);
	EVP_MD_CTX_free(x);
	EVP_MD_CTX_free(d);
out:
	free(m);
	EVP_MD_free(ref);
	EVP_MD_free(cry);
}

void mac_case(uint64_t *s, int cmac, const char *sub)
{
	EVP_MAC *ref = EVP_MAC_fetch(NULL, cmac ? "CMAC" : "HMAC", NULL);
	EVP_MAC *cry = EVP_MAC_fetch(lib, cmac ? "CMAC" : "HMAC", PQ);
	/* >= 16 bytes: the daemon's key policy refuses shorter ones */
	uint8_t key[200], a[64], b[64];
	size_t klen = cmac ? (strstr(sub, "128")   ? 16
			      : strstr(sub, "192") ? 24
						   : 32)
			   : 16 + rnd_below(s, sizeof(key) - 15);
	size_t len = rnd_len(s), na = 0, nb = 0;
	uint8_t *m = malloc(len + 1);
	rnd_fill(s, key, klen);
	rnd_fill(s, m, len);
	OSSL_PARAM ps[] = { OSSL_PARAM_construct_utf8_string(
				    cmac ? "cipher" : "digest", (char *)sub, 0),
			    OSSL_PARAM_END };
	EVP_MAC_CTX *r = EVP_MAC_CTX_new(ref),
		    *x = cry ? EVP_MAC_CTX_new(cry) : NULL;
	if (!x || !EVP_MAC_init(r, key, klen, ps) ||
	    !EVP_MAC_update(r, m, len) || !EVP_MAC_final(r, a, &na, 64) ||
	    !EVP_MAC_init(x, key, klen, ps)) {
		FAIL("%s-%s: init", cmac ? "CMAC" : "HMAC", sub);
		goto out;
	}
	size_t off = 0;
	while (off < len) {
		size_t n = rnd_cut(s, len - off);
		EVP_MAC_update(x, m + off, n);
		off += n;
	}
	if (!EVP_MAC_final(x, b, &nb, 64) || na != nb || memcmp(a, b, na))
		FAIL("%s-%s of %zu bytes, key %zu", cmac ? "CMAC" : "HMAC", sub,
		     len, klen);
out:
	EVP_MAC_CTX_free(r);
	EVP_MAC_CTX_free(x);
	EVP_MAC_free(ref);
	EVP_MAC_free(cry);
	free(m);
}
_Static_assert(sizeof(digests) / sizeof(digests[0]) == N_DIGESTS, "digests");

/* One MAC through cryptod's "HMAC"/"CMAC" (mac) and the default
 * provider's (ref), the key given with the digest or cipher (key_first:
 * at an init before, under another digest). 1 when they agree. */
static int mac_local_one(EVP_MAC *mac, EVP_MAC *ref, int cmac, const char *sub,
			 const uint8_t *key, size_t klen, const uint8_t *m,
			 size_t len, int key_first)
{
	const char *pn = cmac ? "cipher" : "digest";
	OSSL_PARAM ps[] = { OSSL_PARAM_construct_utf8_string(pn, (char *)sub,
							     0),
			    OSSL_PARAM_END };
	OSSL_PARAM first[] = { OSSL_PARAM_construct_utf8_string(
				       pn, cmac ? "AES-192-CBC" : "SHA256", 0),
			       OSSL_PARAM_END };
	uint8_t a[64], b[64];
	size_t na = 0, nb = 0;
	EVP_MAC_CTX *r = EVP_MAC_CTX_new(ref), *x = EVP_MAC_CTX_new(mac);
	int ok = r && x && EVP_MAC_init(r, key, klen, ps) &&
		 EVP_MAC_update(r, m, len) && EVP_MAC_final(r, a, &na, 64);
	if (ok && key_first)
		ok = EVP_MAC_init(x, key, klen, first) &&
		     EVP_MAC_init(x, NULL, 0, ps);
	else if (ok)
		ok = EVP_MAC_init(x, key, klen, ps);
	ok = ok && EVP_MAC_update(x, m, len / 2) &&
	     EVP_MAC_update(x, m + len / 2, len - len / 2);
	EVP_MAC_CTX *y = ok ? EVP_MAC_CTX_dup(x) : NULL; /* midway */
	ok = ok && y && EVP_MAC_CTX_get_mac_size(x) == na &&
	     EVP_MAC_final(x, b, &nb, 64) && na == nb && !memcmp(a, b, na) &&
	     EVP_MAC_final(y, b, &nb, 64) && na == nb && !memcmp(a, b, na);
	EVP_MAC_CTX_free(r);
	EVP_MAC_CTX_free(x);
	EVP_MAC_CTX_free(y);
	return ok;
}

void xts_equal_case(void)
{
	/* IEEE 1619's vector 1: key, IV and plaintext all zero */
	static const uint8_t ct[32] = { 0x91, 0x7c, 0xf6, 0x9e, 0xbd, 0x68,
					0xb2, 0xec, 0x9b, 0x9f, 0xe9, 0xa3,
					0xea, 0xdd, 0xa6, 0x92, 0xcd, 0x43,
					0xd2, 0xf5, 0x95, 0x98, 0xed, 0x85,
					0x8c, 0x02, 0xc2, 0x65, 0x2f, 0xbf,
					0x92, 0x2e };
	static const uint8_t zero[64];
	uint8_t out[32];
	int n = 0;
	uint64_t d0, d1, f0, f1;
	EVP_CIPHER *c = EVP_CIPHER_fetch(lib, "AES-128-XTS", PQ);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	counters(lib, &d0, &f0, NULL);
	if (!c || !x || !EVP_DecryptInit_ex2(x, c, zero, zero, NULL) ||
	    !EVP_DecryptUpdate(x, out, &n, ct, 32) || n != 32 ||
	    memcmp(out, zero, 32))
		FAIL("AES-128-XTS, equal halves: decrypt");
	counters(lib, &d1, &f1, NULL);
	if (d1 == d0 || f1 != f0)
		FAIL("AES-128-XTS, equal halves: not on the daemon");
	/* Encrypting with them is refused, as the default provider does. */
	if (x && EVP_EncryptInit_ex2(x, c, zero, zero, NULL))
		FAIL("AES-128-XTS, equal halves: encrypt taken");
	ERR_clear_error();
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(c);
}

void mac_local_case(uint64_t *s)
{
	static const struct {
		int cmac;
		const char *sub;
		size_t klen;
	} subs[] = { { 0, "MD5", 16 },		{ 0, "SHA3-256", 40 },
		     { 0, "SHA3-512", 300 },	{ 0, "SM3", 20 },
		     { 1, "DES-EDE3-CBC", 24 }, { 1, "AES-192-CBC", 24 } };
	EVP_MAC *hm = EVP_MAC_fetch(lib, "HMAC", NULL),
		*cm = EVP_MAC_fetch(lib, "CMAC", NULL),
		*hr = EVP_MAC_fetch(NULL, "HMAC", NULL),
		*cr = EVP_MAC_fetch(NULL, "CMAC", NULL);
	uint8_t key[300], m[1000];
	if (!hm || !cm || !hr || !cr) {
		FAIL("HMAC, CMAC: not fetched");
		goto out;
	}
	for (unsigned i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		/* the daemon's HMAC keys are at most 256 bytes */
		for (int key_first = 0; key_first < 1 + (subs[i].klen <= 256);
		     key_first++) {
			uint64_t n0, n1, d0, d1;
			size_t len = rnd_below(s, sizeof(m));
			rnd_fill(s, key, subs[i].klen);
			rnd_fill(s, m, len);
			counters(lib, &d0, NULL, &n0);
			if (!mac_local_one(subs[i].cmac ? cm : hm,
					   subs[i].cmac ? cr : hr, subs[i].cmac,
					   subs[i].sub, key, subs[i].klen, m,
					   len, key_first))
				FAIL("%s-%s of %zu bytes, key %zu%s",
				     subs[i].cmac ? "CMAC" : "HMAC",
				     subs[i].sub, len, subs[i].klen,
				     key_first ? " given before" : "");
			counters(lib, &d1, NULL, &n1);
			/* AES-192-CBC is the daemon's: the control */
			int local = strcmp(subs[i].sub, "AES-192-CBC");
			if (local && (n1 - n0 != 1 || d1 != d0))
				FAIL("%s: %llu in-process, %llu on the daemon",
				     subs[i].sub, (unsigned long long)(n1 - n0),
				     (unsigned long long)(d1 - d0));
			if (!local && n1 != n0)
				FAIL("%s ran in-process", subs[i].sub);
		}
	/* What the default provider has not either is refused. */
	EVP_MAC_CTX *x = EVP_MAC_CTX_new(hm);
	OSSL_PARAM ps[] = { OSSL_PARAM_construct_utf8_string(
				    "digest", "NO-SUCH-DIGEST", 0),
			    OSSL_PARAM_END };
	if (!x || EVP_MAC_init(x, key, 16, ps))
		FAIL("HMAC with NO-SUCH-DIGEST taken");
	ERR_clear_error();
	EVP_MAC_CTX_free(x);
out:
	EVP_MAC_free(hm);
	EVP_MAC_free(cm);
	EVP_MAC_free(hr);
	EVP_MAC_free(cr);
}

/* The provider's counters in l: daemon, fallbacks, in-process. */
void counters(OSSL_LIB_CTX *l, uint64_t *nd, uint64_t *nf, uint64_t *ni)
{
	if (pfx_counters(l, nd, nf, ni))
		FAIL("counters");
}

uint64_t pe_begin(void)
{
	pfx_need_daemon();
#ifdef CRYPTOD_TEST_SANITIZED
	sanitized = 1;
#endif
	return pfx_seed();
}

int pe_daemon(struct fx_daemon *d, OSSL_PROVIDER **prov)
{
	return pfx_start(d, &lib, prov);
}

int pe_end(struct fx_daemon *d, OSSL_PROVIDER *prov, uint64_t seed)
{
	int st = pfx_stop(d, lib, prov);
	return pfx_verdict(st, seed);
}
