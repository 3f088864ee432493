/* SPDX-License-Identifier: MIT */
/*
 * CBC TLS records through the provider (tls-version, tls-mac-size,
 * tls-mac: provider/prov_tls.c), against OpenSSL's default provider and
 * against records built here by hand and run through plain AES-CBC (no
 * padding, no TLS mode) on the default provider:
 *
 * - sealing: TLS 1.0, 1.1, 1.2 and DTLS 1.2, AES-128/256, MAC sizes 0
 *   (encrypt-then-MAC), 20, 32, 48, content lengths giving every padding
 *   length 1 .. 16 and a full 16 KiB record, several records per context
 *   (the IV chains across them): cryptod's records equal the default
 *   provider's and the hand-made ones, byte for byte;
 * - opening: those records, and hand-made ones with every padding
 *   length 0 .. 255 (a peer may pad more than it must), opened by
 *   cryptod and by the default provider: the same length, content and
 *   MAC;
 * - bad padding (a wrong byte anywhere in it, or longer than the
 *   record): the record still opens (constant time: no early failure)
 *   with the padding left on and a random MAC, as the default provider;
 *   with encrypt-then-MAC the update fails, as the default provider's;
 * - bad MAC: the record's own (wrong) MAC bytes come back, for libssl to
 *   reject;
 * - too short records, records not whole blocks, out-of-place updates and
 *   final in record mode fail, as the default provider's;
 * - a context duplicated between records goes on like the original;
 * - with the daemon unreachable and fallback = default-provider, the
 *   same records in-process;
 * - the records ran on the daemon (its counter), with no fallback.
 * TEST_SEED replays a run.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <openssl/prov_ssl.h>
#include <openssl/provider.h>

#include "prov_fixture.h"

#define BLK 16
#define REC_MAX (16384 + 2048)

static OSSL_LIB_CTX *lib; /* cryptod alone */

static uint64_t seed_state;
static uint64_t rnd(void)
{
	uint64_t *s = &seed_state;
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}
static void rnd_fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(rnd() >> 32);
}

struct suite {
	unsigned ver;
	const char *cipher;
	size_t keylen, mac;
};

static int explicit_iv(unsigned ver)
{
	return ver != TLS1_VERSION;
}

/* A context in TLS record mode, or a plain one (ver 0, no padding). */
static EVP_CIPHER_CTX *mk_ctx(EVP_CIPHER *c, const uint8_t *key,
			      const uint8_t *iv, int enc, unsigned ver,
			      size_t mac)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	OSSL_PARAM tp[] = { OSSL_PARAM_construct_uint(
				    OSSL_CIPHER_PARAM_TLS_VERSION, &ver),
			    OSSL_PARAM_construct_size_t(
				    OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &mac),
			    OSSL_PARAM_END };
	/* As libssl: the key and IV, then the TLS parameters. */
	if (!x || !EVP_CipherInit_ex2(x, c, key, iv, enc, NULL) ||
	    (ver && !EVP_CIPHER_CTX_set_params(x, tp)) ||
	    (!ver && !EVP_CIPHER_CTX_set_padding(x, 0))) {
		FAIL("context for %s", EVP_CIPHER_get0_name(c));
		EVP_CIPHER_CTX_free(x);
		return NULL;
	}
	return x;
}

/* One record, in place. 1 and *outl, or 0. */
static int rec_update(EVP_CIPHER_CTX *x, uint8_t *buf, size_t len, size_t *outl)
{
	int n = 0;
	if (!EVP_CipherUpdate(x, buf, &n, buf, (int)len))
		return 0;
	*outl = (size_t)n;
	return 1;
}

static int get_mac(EVP_CIPHER_CTX *x, size_t m, uint8_t *mac)
{
	void *p = NULL;
	OSSL_PARAM ps[] = { OSSL_PARAM_construct_octet_ptr(
				    OSSL_CIPHER_PARAM_TLS_MAC, &p, m),
			    OSSL_PARAM_END };
	if (!EVP_CIPHER_CTX_get_params(x, ps) || !p)
		return 0;
	memcpy(mac, p, m);
	return 1;
}

/* The plaintext of a record, built by hand: [explicit IV] content MAC
 * padding (padn bytes of value padn - 1). Its length. */
static size_t build(uint8_t *rec, unsigned ver, size_t content, size_t m,
		    size_t padn)
{
	size_t at = explicit_iv(ver) ? BLK : 0;
	rnd_fill(rec, at + content + m);
	memset(rec + at + content + m, (int)(padn - 1), padn);
	return at + content + m + padn;
}

/* Seal records of content lengths 0 .. 40 and 16384 with cryptod, the
 * default provider and plain CBC over hand-made records: all equal. Then
 * open each with cryptod and the default provider, out of order with
 * nothing: the same stream of records as it was sealed. */
static void seal_open(const struct suite *su, EVP_CIPHER *cc, EVP_CIPHER *rc,
		      int in_process)
{
	uint8_t key[32], iv[BLK];
	rnd_fill(key, sizeof(key));
	rnd_fill(iv, sizeof(iv));
	size_t m = su->mac, at = explicit_iv(su->ver) ? BLK : 0;
	EVP_CIPHER_CTX *ce = mk_ctx(cc, key, iv, 1, su->ver, m);
	EVP_CIPHER_CTX *re = mk_ctx(rc, key, iv, 1, su->ver, m);
	EVP_CIPHER_CTX *pe = mk_ctx(rc, key, iv, 1, 0, 0);
	EVP_CIPHER_CTX *cd = mk_ctx(cc, key, iv, 0, su->ver, m);
	EVP_CIPHER_CTX *rd = mk_ctx(rc, key, iv, 0, su->ver, m);
	EVP_CIPHER_CTX *cdup = NULL;
	static uint8_t a[REC_MAX], b[REC_MAX], h[REC_MAX], o[REC_MAX],
		p0[REC_MAX];
	unsigned seen_pad = 0;
	if (!ce || !re || !pe || !cd || !rd)
		goto out;
	for (size_t content = 0; content <= 41; content++) {
		size_t clen = content == 41 ? 16384 : content;
		size_t body = at + clen + m;
		size_t padn = BLK - body % BLK;
		size_t n = build(p0, su->ver, clen, m, padn);
		seen_pad |= 1u << (padn - 1);
		memcpy(a, p0, body);
		memcpy(b, p0, body);
		memcpy(h, p0, n);
		size_t na = 0, nb = 0, nh = 0;
		if (!rec_update(ce, a, body, &na) ||
		    !rec_update(re, b, body, &nb) ||
		    !rec_update(pe, h, n, &nh)) {
			FAIL("0x%x %s mac %zu content %zu: seal", su->ver,
			     su->cipher, m, clen);
			break;
		}
		if (na != n || nb != n || nh != n || memcmp(a, b, n) ||
		    memcmp(a, h, n)) {
			FAIL("0x%x %s mac %zu content %zu: sealed %zu/%zu/%zu "
			     "bytes, %s",
			     su->ver, su->cipher, m, clen, na, nb, nh,
			     memcmp(a, b, n) ? "differ from the default's"
					     : "differ from the hand-made");
			break;
		}
		/* Open: the record, and the one from the default provider
		 * (the same bytes) with the other provider. */
		memcpy(o, a, n);
		size_t ca = 0, rb = 0;
		uint8_t cmac[64], rmac[64];
		int ok_c = rec_update(cd, a, n, &ca);
		int ok_r = rec_update(rd, b, n, &rb);
		if (!ok_c || !ok_r || ca != clen || rb != clen) {
			FAIL("0x%x %s mac %zu content %zu: open %d/%d, %zu/%zu "
			     "bytes",
			     su->ver, su->cipher, m, clen, ok_c, ok_r, ca, rb);
			break;
		}
		if (memcmp(a + at, p0 + at, clen) ||
		    memcmp(b + at, p0 + at, clen))
			FAIL("0x%x %s content %zu: opened content differs",
			     su->ver, su->cipher, clen);
		if (m &&
		    (!get_mac(cd, m, cmac) || !get_mac(rd, m, rmac) ||
		     memcmp(cmac, rmac, m) || memcmp(cmac, p0 + at + clen, m)))
			FAIL("0x%x %s mac %zu content %zu: MAC differs",
			     su->ver, su->cipher, m, clen);
		/* Halfway through, a copy of the opening context must go on
		 * like the original. */
		if (content == 20)
			cdup = EVP_CIPHER_CTX_new();
		if (content == 20 &&
		    (!cdup || !EVP_CIPHER_CTX_copy(cdup, cd))) {
			/* In-process, it is refused: OpenSSL 3.0's copy of
			 * such a context frees the MAC twice. */
			if (!in_process)
				FAIL("dupctx");
			EVP_CIPHER_CTX_free(cdup);
			cdup = NULL;
			ERR_clear_error();
		}
		if (content == 21 && cdup) {
			/* o is this record as sealed; cd has opened it. */
			size_t nd = 0;
			if (!rec_update(cdup, o, n, &nd) || nd != clen ||
			    memcmp(o + at, p0 + at, clen))
				FAIL("0x%x %s: the duplicate opens differently",
				     su->ver, su->cipher);
		}
	}
	if (seen_pad != 0xffff)
		FAIL("padding lengths seen: %04x", seen_pad);
out:
	EVP_CIPHER_CTX_free(ce);
	EVP_CIPHER_CTX_free(re);
	EVP_CIPHER_CTX_free(pe);
	EVP_CIPHER_CTX_free(cd);
	EVP_CIPHER_CTX_free(rd);
	EVP_CIPHER_CTX_free(cdup);
}

enum shape { GOOD, BAD_BYTE, TOO_LONG, BAD_MAC };

/* The HMAC a MAC size stands for (TLS: SHA-1, SHA-256, SHA-384). */
static void hmac(size_t m, const uint8_t *key, const uint8_t *d, size_t n,
		 uint8_t *out)
{
	const EVP_MD *md = m == 20   ? EVP_sha1()
			   : m == 32 ? EVP_sha256()
				     : EVP_sha384();
	unsigned len = 0;
	if (!HMAC(md, key, 32, d, n, out, &len) || len != m)
		FAIL("HMAC");
}

/* One hand-made record: content, its HMAC, then a padding of pad + 1
 * bytes of value pad (GOOD; BAD_MAC: a content byte changed after the
 * HMAC was made), one wrong byte in the padding (BAD_BYTE), or a
 * padding claiming more bytes than the record has (TOO_LONG).
 * Encrypted with plain CBC, opened by both providers from fresh
 * contexts, which must agree with each other and with the record. */
static void open_case(const struct suite *su, EVP_CIPHER *cc, EVP_CIPHER *rc,
		      size_t pad, enum shape sh)
{
	uint8_t key[32], iv[BLK], mkey[32], pt[REC_MAX], p0[REC_MAX];
	uint8_t a[REC_MAX], b[REC_MAX], want_mac[64];
	rnd_fill(key, sizeof(key));
	rnd_fill(mkey, sizeof(mkey));
	rnd_fill(iv, sizeof(iv));
	size_t m = su->mac, at = explicit_iv(su->ver) ? BLK : 0;
	/* content so that the record is whole blocks */
	size_t content = (BLK - (at + m + pad + 1) % BLK) % BLK + 3 * BLK;
	size_t n = at + content + m + pad + 1;
	if (sh == TOO_LONG) {
		n = at + m + 1 + BLK - (at + m + 1) % BLK; /* just over */
		if ((at + m + 1) % BLK == 0)
			n = at + m + 1;
		content = 0;
	}
	rnd_fill(pt, n);
	if (m && sh != TOO_LONG)
		hmac(m, mkey, pt + at, content, pt + at + content);
	if (m)
		memcpy(want_mac, pt + at + content, m);
	if (sh == BAD_MAC)
		pt[at + rnd() % content] ^= 0x80;
	if (sh != TOO_LONG)
		memset(pt + n - 1 - pad, (int)pad, pad + 1);
	if (sh == BAD_BYTE)
		pt[n - 1 - 1 - (rnd() % pad)] ^= (uint8_t)(1 + rnd() % 255);
	/* Every byte after the IV says the padding is pad bytes longer
	 * than the record has room for (0: one byte too long): only the
	 * length can tell it is bad. */
	if (sh == TOO_LONG)
		memset(pt + at, (int)(n - at - m + pad), n - at);
	EVP_CIPHER_CTX *pe = mk_ctx(rc, key, iv, 1, 0, 0);
	EVP_CIPHER_CTX *cd = mk_ctx(cc, key, iv, 0, su->ver, m);
	EVP_CIPHER_CTX *rd = mk_ctx(rc, key, iv, 0, su->ver, m);
	size_t nn = 0, ca = 0, rb = 0;
	uint8_t cmac[64], rmac[64];
	memcpy(p0, pt, n);
	if (!pe || !cd || !rd || !rec_update(pe, pt, n, &nn) || nn != n) {
		FAIL("setup");
		goto out;
	}
	memcpy(a, pt, n);
	memcpy(b, pt, n);
	int ok_c = rec_update(cd, a, n, &ca);
	int ok_r = rec_update(rd, b, n, &rb);
	ERR_clear_error();
	const char *what = sh == GOOD	    ? "good"
			   : sh == BAD_MAC  ? "bad MAC"
			   : sh == BAD_BYTE ? "bad padding byte"
					    : "padding too long";
	if (!m && sh != GOOD && sh != BAD_MAC) {
		/* encrypt-then-MAC: a bad padding fails, as the default's */
		if (ok_c || ok_r)
			FAIL("0x%x %s ETM pad %zu %s: opened %d/%d", su->ver,
			     su->cipher, pad, what, ok_c, ok_r);
		goto out;
	}
	if (!ok_c || !ok_r) {
		FAIL("0x%x %s mac %zu pad %zu %s: open %d/%d", su->ver,
		     su->cipher, m, pad, what, ok_c, ok_r);
		goto out;
	}
	int good = sh == GOOD || sh == BAD_MAC;
	size_t want = good ? content : n - at - m;
	if (ca != want || rb != want || memcmp(a + at, p0 + at, want) ||
	    memcmp(b + at, p0 + at, want))
		FAIL("0x%x %s mac %zu pad %zu %s: %zu/%zu bytes, want %zu",
		     su->ver, su->cipher, m, pad, what, ca, rb, want);
	if (!m)
		goto out;
	if (!get_mac(cd, m, cmac) || !get_mac(rd, m, rmac)) {
		FAIL("tls-mac");
		goto out;
	}
	if (good && (memcmp(cmac, rmac, m) || memcmp(cmac, want_mac, m)))
		FAIL("0x%x %s mac %zu pad %zu %s: not the record's MAC",
		     su->ver, su->cipher, m, pad, what);
	/* What libssl then does: the HMAC of what was opened against the
	 * MAC the cipher returned. Only a good record verifies. */
	uint8_t mine[64];
	hmac(m, mkey, a + at, ca, mine);
	if ((CRYPTO_memcmp(mine, cmac, m) == 0) != (sh == GOOD))
		FAIL("0x%x %s mac %zu pad %zu %s: the MAC %s", su->ver,
		     su->cipher, m, pad, what,
		     sh == GOOD ? "does not verify" : "verifies");
	/* A bad padding's MAC is random: neither the record's last bytes
	 * nor the default provider's random one (chance 2^-160 at most). */
	if (!good && (!memcmp(cmac, p0 + n - m, m) || !memcmp(cmac, rmac, m)))
		FAIL("0x%x %s mac %zu pad %zu %s: the MAC is not random",
		     su->ver, su->cipher, m, pad, what);
out:
	EVP_CIPHER_CTX_free(pe);
	EVP_CIPHER_CTX_free(cd);
	EVP_CIPHER_CTX_free(rd);
}

/* What fails on both: records too short for the explicit IV, a padding
 * byte and the MAC; not whole blocks; out of place; final in record
 * mode; a TLS version this cipher does not do. */
static void refusals(const struct suite *su, EVP_CIPHER *cc, EVP_CIPHER *rc)
{
	uint8_t key[32] = { 3 }, iv[BLK] = { 4 }, buf[REC_MAX], out[REC_MAX];
	size_t m = su->mac, at = explicit_iv(su->ver) ? BLK : 0;
	size_t lens[] = { 0, BLK, (at + m) / BLK * BLK, 33, 47 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t len = lens[i];
		int short_ok = len % BLK == 0 && len >= at + m + 1;
		if (short_ok)
			continue; /* long enough: not a refusal */
		EVP_CIPHER_CTX *cd = mk_ctx(cc, key, iv, 0, su->ver, m);
		EVP_CIPHER_CTX *rd = mk_ctx(rc, key, iv, 0, su->ver, m);
		size_t n;
		memset(buf, 0x0f, sizeof(buf));
		int ok_c = cd && rec_update(cd, buf, len, &n);
		memset(buf, 0x0f, sizeof(buf));
		int ok_r = rd && rec_update(rd, buf, len, &n);
		ERR_clear_error();
		if (ok_c || ok_r)
			FAIL("0x%x mac %zu: a %zu-byte record opened (%d/%d)",
			     su->ver, m, len, ok_c, ok_r);
		EVP_CIPHER_CTX_free(cd);
		EVP_CIPHER_CTX_free(rd);
	}
	/* Out of place, then final. */
	for (int enc = 0; enc < 2; enc++) {
		EVP_CIPHER_CTX *x[2] = { mk_ctx(cc, key, iv, enc, su->ver, m),
					 mk_ctx(rc, key, iv, enc, su->ver, m) };
		for (int k = 0; k < 2; k++) {
			int n = 0;
			memset(buf, 0x0f, sizeof(buf));
			if (x[k] &&
			    EVP_CipherUpdate(x[k], out, &n, buf, 4 * BLK))
				FAIL("%s %s: out of place accepted",
				     k ? "default" : "cryptod",
				     enc ? "seal" : "open");
			if (x[k] && EVP_CipherFinal_ex(x[k], out, &n))
				FAIL("%s: final in TLS mode accepted",
				     k ? "default" : "cryptod");
			ERR_clear_error();
			EVP_CIPHER_CTX_free(x[k]);
		}
	}
}

/* TLS parameters on ciphers and versions cryptod does not do them for:
 * refused at once, naming cryptod. */
static void unsupported(void)
{
	static const struct {
		const char *cipher;
		unsigned ver;
	} bad[] = { { "AES-128-CTR", TLS1_2_VERSION },
		    { "AES-128-ECB", TLS1_2_VERSION },
		    { "AES-128-CBC", SSL3_VERSION },
		    { "AES-128-CBC", TLS1_3_VERSION } };
	uint8_t key[32] = { 1 }, iv[BLK] = { 2 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EVP_CIPHER *c = EVP_CIPHER_fetch(lib, bad[i].cipher, NULL);
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
		unsigned ver = bad[i].ver;
		OSSL_PARAM tp[] = { OSSL_PARAM_construct_uint(
					    OSSL_CIPHER_PARAM_TLS_VERSION,
					    &ver),
				    OSSL_PARAM_END };
		int ok = c && x &&
			 EVP_CipherInit_ex2(x, c, key, bad[i].ver ? iv : NULL,
					    1, NULL) &&
			 EVP_CIPHER_CTX_set_params(x, tp);
		if (ok || !pfx_err_names_cryptod())
			FAIL("tls-version 0x%x on %s: %s", bad[i].ver,
			     bad[i].cipher, ok ? "accepted" : "reason");
		EVP_CIPHER_CTX_free(x);
		EVP_CIPHER_free(c);
	}
}

/* With the daemon unreachable and fallback = default-provider, records
 * run in-process on the default provider, the same bytes, counted. */
static void fallback_case(const char *dir)
{
	OSSL_LIB_CTX *l =
		pfx_conf_libctx(dir, "socket = /nonexistent/cryptod.sock\n"
				     "fallback = default-provider\n");
	EVP_CIPHER *cc = NULL,
		   *rc = EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL);
	if (!l || !(cc = EVP_CIPHER_fetch(l, "AES-128-CBC", NULL))) {
		FAIL("fallback config");
		goto out;
	}
	struct suite su = { TLS1_2_VERSION, "AES-128-CBC", 16, 32 };
	seal_open(&su, cc, rc, 1);
	open_case(&su, cc, rc, 7, GOOD);
	open_case(&su, cc, rc, 7, BAD_BYTE);
	uint64_t nd = 0, nf = 0;
	if (pfx_counters(l, &nd, &nf, NULL) || nd || nf < 4)
		FAIL("fallback: %llu on the daemon, %llu fallbacks",
		     (unsigned long long)nd, (unsigned long long)nf);
out:
	EVP_CIPHER_free(cc);
	EVP_CIPHER_free(rc);
	OSSL_LIB_CTX_free(l);
}

int main(void)
{
	pfx_need_daemon();
	uint64_t seed = pfx_seed();
	seed_state = seed * 2 + 1;

	struct fx_daemon d;
	OSSL_PROVIDER *prov;
	if (pfx_start(&d, &lib, &prov))
		return FX_EXIT_FAIL;

	static const unsigned vers[] = { TLS1_VERSION, TLS1_1_VERSION,
					 TLS1_2_VERSION, DTLS1_2_VERSION };
	static const char *const names[] = { "AES-128-CBC", "AES-256-CBC" };
	static const size_t macs[] = { 0, 20, 32, 48 };
	unsigned cases = 0;
	for (size_t v = 0; v < 4; v++)
		for (size_t c = 0; c < 2; c++)
			for (size_t k = 0; k < 4; k++) {
				struct suite su = { vers[v], names[c],
						    c ? 32 : 16, macs[k] };
				EVP_CIPHER *cc =
					EVP_CIPHER_fetch(lib, names[c], NULL);
				EVP_CIPHER *rc =
					EVP_CIPHER_fetch(NULL, names[c], NULL);
				if (!cc || !rc) {
					FAIL("fetch %s", names[c]);
					return FX_EXIT_FAIL;
				}
				seal_open(&su, cc, rc, 0);
				for (size_t pad = 0; pad < 256; pad++) {
					open_case(&su, cc, rc, pad, GOOD);
					if (pad)
						open_case(&su, cc, rc, pad,
							  BAD_BYTE);
					if (pad % 37 == 0)
						open_case(&su, cc, rc, pad,
							  BAD_MAC);
					cases += 2;
				}
				open_case(&su, cc, rc, 0, TOO_LONG);
				open_case(&su, cc, rc, 1, TOO_LONG);
				open_case(&su, cc, rc, 100, TOO_LONG);
				refusals(&su, cc, rc);
				EVP_CIPHER_free(cc);
				EVP_CIPHER_free(rc);
			}
	unsupported();
	fallback_case(d.dir);

	uint64_t nd = 0, nf = 0;
	if (pfx_counters(lib, &nd, &nf, NULL) || nd < cases / 2 || nf != 0)
		FAIL("counters: %llu on the daemon, %llu fallbacks",
		     (unsigned long long)nd, (unsigned long long)nf);
	fprintf(stderr, "%u record cases, %llu messages on the daemon\n", cases,
		(unsigned long long)nd);
	int st = pfx_stop(&d, lib, prov);
	return pfx_verdict(st, seed);
}
