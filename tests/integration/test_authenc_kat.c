// SPDX-License-Identifier: MIT
/*
 * Known answers for the IPsec-style algorithms, from published sources
 * (embedded: they are public):
 *
 * - HMAC-SHA-1-96 (RFC 2404; the HMAC-SHA-1 cases of RFC 2202 section 3,
 *   truncated to their first 96 bits) through aes-cbc-hmac-sha1, and
 *   HMAC-SHA-256-128 (RFC 4868 section 2.7.2.1, the authenticator cases,
 *   which are truncated to 128 bits; plus the PRF cases of section 2.7.1
 *   cut to their first 128 bits) through aes-cbc-hmac-sha256: an empty
 *   payload and the HMAC message as the AAD, so that the tag is
 *   HMAC(auth_key, AAD || "") = the published value. HMAC-SHA-384-192
 *   and HMAC-SHA-512-256 (RFC 4868's truncation of the RFC 4231 cases
 *   1-4) through aes-cbc-hmac-sha384 and -sha512. The SHA-1 and SHA-256
 *   cases run again through aes-ctr-hmac-sha1 and -sha256. Cases whose
 *   key is longer than 64 bytes are outside "auth key 1-64" and must be
 *   refused.
 * - AES-128-CBC (RFC 3602 section 4, cases 1-4), and AES-192/256-CBC
 *   (NIST CBCMMT192/256.rsp, COUNT 0 and 1) through aes-cbc, aes-cbc-null
 *   (whose AAD is ignored) and the cipher part of both authenc
 *   algorithms, whose ciphertext must equal the published one and whose
 *   tag must be HMAC(auth_key, AAD || C), computed here with OpenSSL's
 *   EVP_MAC (encrypt-then-MAC); likewise AES-128-CTR (RFC 3686 test
 *   vectors 1-3, the 16-byte counter block as the IV) through the CTR
 *   authenc algorithms.
 *
 * Each case runs on every engine that claims the algorithm (cc_crypt()
 * and a burst) and session-less: encrypt, decrypt, and, where there is a
 * tag, a forged tag that must fail with the output zeroed.
 *
 * Exit: 0 all passed, 1 any failure.
 */
#include "fixture.h"
#include "modes_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#define QUEUE_ENTRIES 32
#define TIMEOUT_MS 20000
#define DATA_MAX 256

/* ---- The published cases ---- */

/* An HMAC case: key and message either as text/hex or as a repeated
 * byte; tag is the published truncated value, NULL when the key is out
 * of range (the session must then be refused). */
struct hmac_case {
	const char *name;
	enum cc_alg alg;
	const char *key_hex;
	uint8_t key_fill;
	unsigned key_fill_len;
	const char *msg;
	uint8_t msg_fill;
	unsigned msg_fill_len;
	const char *tag_hex;
};

#define SHA1 CC_ALG_AES_CBC_HMAC_SHA1
#define SHA256 CC_ALG_AES_CBC_HMAC_SHA256
#define SHA384 CC_ALG_AES_CBC_HMAC_SHA384
#define SHA512 CC_ALG_AES_CBC_HMAC_SHA512
#define K0102_25 "0102030405060708090a0b0c0d0e0f10111213141516171819"
#define K0102_32 K0102_25 "1a1b1c1d1e1f20"
#define JEFE "4a656665"
#define JEFE_MSG "what do ya want for nothing?"
#define BIG_KEY_1 "Test Using Larger Than Block-Size Key - Hash Key First"
#define BIG_KEY_2                                                              \
	"Test Using Larger Than Block-Size Key and Larger Than One "           \
	"Block-Size Data"

static const struct hmac_case hmac_cases[] = {
	/* RFC 2404 / RFC 2202 section 3: HMAC-SHA-1, first 96 bits. */
	{ "RFC 2202/2404 case 1", SHA1, NULL, 0x0b, 20, "Hi There", 0, 0,
	  "b617318655057264e28bc0b6" },
	{ "RFC 2202/2404 case 2", SHA1, JEFE, 0, 0, JEFE_MSG, 0, 0,
	  "effcdf6ae5eb2fa2d27416d5" },
	{ "RFC 2202/2404 case 3", SHA1, NULL, 0xaa, 20, NULL, 0xdd, 50,
	  "125d7342b9ac11cd91a39af4" },
	{ "RFC 2202/2404 case 4", SHA1, K0102_25, 0, 0, NULL, 0xcd, 50,
	  "4c9007f4026250c6bc8414f9" },
	{ "RFC 2202/2404 case 5", SHA1, NULL, 0x0c, 20, "Test With Truncation",
	  0, 0, "4c1a03424b55e07fe7f27be1" },
	{ "RFC 2202/2404 case 6 (80-byte key)", SHA1, NULL, 0xaa, 80, BIG_KEY_1,
	  0, 0, NULL },
	{ "RFC 2202/2404 case 7 (80-byte key)", SHA1, NULL, 0xaa, 80, BIG_KEY_2,
	  0, 0, NULL },
	/* RFC 4868 section 2.7.2.1: HMAC-SHA-256-128 authenticator. */
	{ "RFC 4868 AUTH256-1", SHA256, NULL, 0x0b, 32, "Hi There", 0, 0,
	  "198a607eb44bfbc69903a0f1cf2bbdc5" },
	{ "RFC 4868 AUTH256-2", SHA256, JEFE JEFE JEFE JEFE JEFE JEFE JEFE JEFE,
	  0, 0, JEFE_MSG, 0, 0, "167f928588c5cc2eef8e3093caa0e87c" },
	{ "RFC 4868 AUTH256-3", SHA256, NULL, 0xaa, 32, NULL, 0xdd, 50,
	  "cdcb1220d1ecccea91e53aba3092f962" },
	{ "RFC 4868 AUTH256-4", SHA256, K0102_32, 0, 0, NULL, 0xcd, 50,
	  "372efcf9b40b35c2115b1346903d2ef4" },
	/* RFC 4868 section 2.7.1: PRF-HMAC-SHA-256, first 128 bits. */
	{ "RFC 4868 PRF-1", SHA256, NULL, 0x0b, 20, "Hi There", 0, 0,
	  "b0344c61d8db38535ca8afceaf0bf12b" },
	{ "RFC 4868 PRF-2", SHA256, JEFE, 0, 0, JEFE_MSG, 0, 0,
	  "5bdcc146bf60754e6a042426089575c7" },
	{ "RFC 4868 PRF-3", SHA256, NULL, 0xaa, 20, NULL, 0xdd, 50,
	  "773ea91e36800e46854db8ebd09181a7" },
	{ "RFC 4868 PRF-4", SHA256, K0102_25, 0, 0, NULL, 0xcd, 50,
	  "82558a389a443c0ea4cc819899f2083a" },
	{ "RFC 4868 PRF-5 (131-byte key)", SHA256, NULL, 0xaa, 131, BIG_KEY_1,
	  0, 0, NULL },
	/* RFC 4231 cases 1-4 truncated as RFC 4868 does: HMAC-SHA-384-192
	 * and HMAC-SHA-512-256; case 6 (a 131-byte key) is refused. */
	{ "RFC 4231 case 1", SHA384, NULL, 0x0b, 20, "Hi There", 0, 0,
	  "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec6" },
	{ "RFC 4231 case 2", SHA384, JEFE, 0, 0, JEFE_MSG, 0, 0,
	  "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47" },
	{ "RFC 4231 case 3", SHA384, NULL, 0xaa, 20, NULL, 0xdd, 50,
	  "88062608d3e6ad8a0aa2ace014c8a86f0aa635d947ac9feb" },
	{ "RFC 4231 case 4", SHA384, K0102_25, 0, 0, NULL, 0xcd, 50,
	  "3e8a69b7783c25851933ab6290af6ca77a9981480850009c" },
	{ "RFC 4231 case 6 (131-byte key)", SHA384, NULL, 0xaa, 131, BIG_KEY_1,
	  0, 0, NULL },
	{ "RFC 4231 case 1", SHA512, NULL, 0x0b, 20, "Hi There", 0, 0,
	  "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde" },
	{ "RFC 4231 case 2", SHA512, JEFE, 0, 0, JEFE_MSG, 0, 0,
	  "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554" },
	{ "RFC 4231 case 3", SHA512, NULL, 0xaa, 20, NULL, 0xdd, 50,
	  "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39" },
	{ "RFC 4231 case 4", SHA512, K0102_25, 0, 0, NULL, 0xcd, 50,
	  "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3db" },
	{ "RFC 4231 case 6 (131-byte key)", SHA512, NULL, 0xaa, 131, BIG_KEY_1,
	  0, 0, NULL },
};

/* A CBC case: key, IV, plaintext (text or hex) and ciphertext. */
struct cbc_case {
	const char *name;
	const char *key_hex, *iv_hex;
	const char *pt_text, *pt_hex;
	const char *ct_hex;
};

static const struct cbc_case cbc_cases[] = {
	{ "RFC 3602 case 1", "06a9214036b8a15b512e03d534120006",
	  "3dafba429d9eb430b422da802c9fac41", "Single block msg", NULL,
	  "e353779c1079aeb82708942dbe77181a" },
	{ "RFC 3602 case 2", "c286696d887c9aa0611bbb3e2025a45a",
	  "562e17996d093d28ddb3ba695a2e6f58", NULL,
	  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	  "d296cd94c2cccf8a3a863028b5e1dc0a"
	  "7586602d253cfff91b8266bea6d61ab1" },
	{ "RFC 3602 case 3", "6c3ea0477630ce21a2ce334aa746c2cd",
	  "c782dc4c098c66cbd9cd27d825682c81",
	  "This is a 48-byte message (exactly 3 AES blocks)", NULL,
	  "d0a02b3836451753d493665d33f0e8862dea54cdb293abc7506939276772f8d5"
	  "021c19216bad525c8579695d83ba2684" },
	{ "RFC 3602 case 4", "56e47a38c5598974bc46903dba290349",
	  "8ce82eefbea0da3c44699ed7db51b7d9", NULL,
	  "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	  "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf",
	  "c30e32ffedc0774e6aff6af0869f71aa0f3af07a9a31a9c684db207eb0ef8e4e"
	  "35907aa632c3ffdf868bb7b29d3d46ad83ce9f9a102ee99d49a53e87f4c3da55" },
	{ "NIST CBCMMT192 COUNT 0",
	  "ba75f4d1d9d7cf7f551445d56cc1a8ab2a078e15e049dc2c",
	  "531ce78176401666aa30db94ec4a30eb", NULL,
	  "c51fc276774dad94bcdc1d2891ec8668",
	  "70dd95a14ee975e239df36ff4aee1d5d" },
	{ "NIST CBCMMT192 COUNT 1",
	  "eab3b19c581aa873e1981c83ab8d83bbf8025111fb2e6b21",
	  "f3d6667e8d4d791e60f7505ba383eb05", NULL,
	  "9d4e4cccd1682321856df069e3f1c6fa391a083a9fb02d59db74c14081b3acc4",
	  "51d44779f90d40a80048276c035cb49ca2a47bcb9b9cf7270b9144793787d53f" },
	{ "NIST CBCMMT256 COUNT 0",
	  "6ed76d2d97c69fd1339589523931f2a6cff554b15f738f21ec72dd97a7330907",
	  "851e8764776e6796aab722dbb644ace8", NULL,
	  "6282b8c05c5c1530b97d4816ca434762",
	  "6acc04142e100a65f51b97adf5172c41" },
	{ "NIST CBCMMT256 COUNT 1",
	  "dce26c6b4cfb286510da4eecd2cffe6cdf430f33db9b5f77b460679bd49d13ae",
	  "fdeaa134c8d7379d457175fd1a57d3fc", NULL,
	  "50e9eee1ac528009e8cbcd356975881f957254b13f91d7c6662d10312052eb00",
	  "2fa0df722a9fd3b64cb18fb2b3db55ff2267422757289413f8f657507412a64c" },
};

/* RFC 3686 section 6, test vectors 1-3 (AES-128-CTR): the IV is the
 * whole initial counter block, nonce || IV || 1. */
static const struct cbc_case ctr_cases[] = {
	{ "RFC 3686 vector 1", "ae6852f8121067cc4bf7a5765577f39e",
	  "00000030000000000000000000000001", "Single block msg", NULL,
	  "e4095d4fb7a7b3792d6175a3261311b8" },
	{ "RFC 3686 vector 2", "7e24067817fae0d743d6ce1f32539163",
	  "006cb6dbc0543b59da48d90b00000001", NULL,
	  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	  "5104a106168a72d9790d41ee8edad388eb2e1efc46da57c8fce630df9141be28" },
	{ "RFC 3686 vector 3", "7691be035e5020a8ac6e618529f9a0dc",
	  "00e0017b27777f3f4a1786f000000001", NULL,
	  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	  "20212223",
	  "c1cf48a89f2ffdd9cf4652e9efdb72d74540a42bde6d7836d59a5ceaaef31053"
	  "25b2072f" },
};

/* ---- One known-answer operation, on every path ---- */

struct kop {
	const char *name;
	struct mc_key key;
	uint8_t iv[MC_IV_MAX];
	unsigned iv_len;
	uint8_t aad[DATA_MAX];
	unsigned aad_len;
	uint8_t pt[DATA_MAX], ct[DATA_MAX];
	uint32_t len;
	uint8_t tag[MC_TAG_MAX]; /* expected, when the algorithm has one */
};

struct t {
	struct cc_conn *conn;
	struct cc_queue *q;
	unsigned long checked, failed;
	int fatal;
};

static void expect(struct t *t, int ok, const struct kop *k, const char *eng,
		   const char *path, const char *what, int status)
{
	t->checked++;
	if (ok)
		return;
	t->failed++;
	fprintf(stderr, "FAIL %s %s [%s] %s: %s (status %d: %s)\n", k->name,
		mc_spec_of(k->key.alg)->name, eng, path, what, status,
		cc_strerror(status));
}

/* cc_crypt(): encrypt, decrypt, forged decrypt. */
static void run_sync(struct t *t, const struct kop *k, uint32_t sid,
		     const char *eng)
{
	uint8_t out[DATA_MAX + MC_GUARD], tag[MC_TAG_MAX + MC_GUARD];
	unsigned tl = mc_tag_len(&k->key);
	int r;

	memset(out, MC_CANARY, sizeof(out));
	memset(tag, MC_CANARY, sizeof(tag));
	r = fx_crypt(t->conn, sid, CC_ENCRYPT, k->iv, k->iv_len,
		     k->aad_len ? k->aad : NULL, k->aad_len,
		     k->len ? k->pt : NULL, k->len ? out : NULL, k->len,
		     tl ? tag : NULL);
	expect(t, r == CC_OK, k, eng, "sync", "encrypt", r);
	if (r != CC_OK)
		return; /* the rest would only repeat it */
	expect(t, !memcmp(out, k->ct, k->len), k, eng, "sync",
	       "ciphertext differs from the published one", r);
	expect(t, mc_first_not(out + k->len, MC_CANARY, MC_GUARD) < 0, k, eng,
	       "sync", "wrote past the end of the output", r);
	if (tl) {
		expect(t, !memcmp(tag, k->tag, tl), k, eng, "sync",
		       "tag differs from the published one", r);
		expect(t,
		       mc_first_not(tag + tl, MC_CANARY,
				    MC_GUARD + MC_TAG_MAX - tl) < 0,
		       k, eng, "sync", "wrote more than the tag", r);
	}

	memset(out, MC_CANARY, sizeof(out));
	memcpy(tag, k->tag, tl);
	r = fx_crypt(t->conn, sid, CC_DECRYPT, k->iv, k->iv_len,
		     k->aad_len ? k->aad : NULL, k->aad_len,
		     k->len ? k->ct : NULL, k->len ? out : NULL, k->len,
		     tl ? tag : NULL);
	expect(t, r == CC_OK, k, eng, "sync", "decrypt", r);
	expect(t, !memcmp(out, k->pt, k->len), k, eng, "sync",
	       "decrypted text differs from the plaintext", r);
	if (!tl)
		return;

	memset(out, MC_CANARY, sizeof(out));
	mc_flip(tag, 8 * tl - 1);
	r = fx_crypt(t->conn, sid, CC_DECRYPT, k->iv, k->iv_len,
		     k->aad_len ? k->aad : NULL, k->aad_len,
		     k->len ? k->ct : NULL, k->len ? out : NULL, k->len, tag);
	expect(t, r == CC_ERR_AUTH_FAILED, k, eng, "sync",
	       "forged tag: want CC_ERR_AUTH_FAILED", r);
	expect(t, mc_first_not(out, 0, k->len) < 0, k, eng, "sync",
	       "forged tag: output not zeroed", r);
}

/* One burst: encrypt out of place, decrypt in place, forged decrypt out
 * of place, on a session (sid != 0) or session-less. */
static void run_burst(struct t *t, const struct kop *k, uint32_t sid,
		      const char *eng)
{
	unsigned tl = mc_tag_len(&k->key), n = tl ? 3 : 2, i;
	struct cc_op ops[3];
	struct cc_completion comps[3];
	uint8_t *src[3] = { 0 }, *dst[3] = { 0 }, *tag[3] = { 0 };
	uint8_t *aad = NULL;
	struct cc_sessionless *sl = NULL;
	const char *path = sid ? "burst" : "burst-sessionless";
	int r;

	aad = cc_buf_alloc(t->q, k->aad_len + 1);
	if (!sid)
		sl = cc_buf_alloc(t->q, sizeof(*sl));
	if (!aad || (!sid && !sl))
		goto nomem;
	memcpy(aad, k->aad, k->aad_len);
	if (sl)
		mc_sessionless_fill(sl, &k->key);
	for (i = 0; i < n; i++) {
		src[i] = cc_buf_alloc(t->q, k->len + MC_GUARD);
		dst[i] =
			i == 1 ? src[i] : cc_buf_alloc(t->q, k->len + MC_GUARD);
		tag[i] = cc_buf_alloc(t->q, MC_TAG_MAX + MC_GUARD);
		if (!src[i] || !dst[i] || !tag[i])
			goto nomem;
		memcpy(src[i], i ? k->ct : k->pt, k->len);
		memset(src[i] + k->len, MC_CANARY, MC_GUARD);
		if (dst[i] != src[i])
			memset(dst[i], MC_CANARY, k->len + MC_GUARD);
		memset(tag[i], MC_CANARY, MC_TAG_MAX + MC_GUARD);
		if (i)
			memcpy(tag[i], k->tag, tl);
		if (i == 2)
			mc_flip(tag[i], 0);
		ops[i] = (struct cc_op){
			.user_data = 0x6b6174ull << 8 | i,
			.session = sid,
			.sessionless = sl,
			.dir = i ? CC_DECRYPT : CC_ENCRYPT,
			.src = src[i],
			/* Both spellings of "in place", dst NULL and
			 * dst == src, depending on the case. */
			.dst = i == 1 && (k->len & 16) ? NULL : dst[i],
			.len = k->len,
			.aad = k->aad_len ? aad : NULL,
			.aad_len = k->aad_len,
			.tag = tl ? tag[i] : NULL,
			.iv = k->iv,
			.iv_len = k->iv_len,
		};
	}
	r = fx_run_burst(t->q, ops, n, comps, TIMEOUT_MS);
	expect(t, r == 0, k, eng, path, "burst completes in order", r);
	if (r) {
		t->fatal = 1;
		goto out;
	}
	expect(t, comps[0].status == CC_OK, k, eng, path, "encrypt",
	       comps[0].status);
	if (comps[0].status != CC_OK)
		goto out; /* the rest would only repeat it */
	expect(t, !memcmp(dst[0], k->ct, k->len), k, eng, path,
	       "ciphertext differs from the published one", comps[0].status);
	expect(t, mc_first_not(dst[0] + k->len, MC_CANARY, MC_GUARD) < 0, k,
	       eng, path, "wrote past the end of the output", 0);
	expect(t, !memcmp(src[0], k->pt, k->len), k, eng, path,
	       "out of place, but the source changed", 0);
	if (tl)
		expect(t, !memcmp(tag[0], k->tag, tl), k, eng, path,
		       "tag differs from the published one", comps[0].status);
	expect(t, comps[1].status == CC_OK, k, eng, path, "decrypt in place",
	       comps[1].status);
	expect(t, !memcmp(src[1], k->pt, k->len), k, eng, path,
	       "decrypted text differs from the plaintext", comps[1].status);
	if (tl) {
		expect(t, comps[2].status == CC_ERR_AUTH_FAILED, k, eng, path,
		       "forged tag: want CC_ERR_AUTH_FAILED", comps[2].status);
		expect(t, mc_first_not(dst[2], 0, k->len) < 0, k, eng, path,
		       "forged tag: output not zeroed", comps[2].status);
	}
	goto out;
nomem:
	fprintf(stderr, "FAIL: arena exhausted\n");
	t->failed++;
	t->fatal = 1;
out:
	for (i = 0; i < n; i++) {
		if (dst[i] && dst[i] != src[i])
			cc_buf_free(t->q, dst[i]);
		if (src[i])
			cc_buf_free(t->q, src[i]);
		if (tag[i])
			cc_buf_free(t->q, tag[i]);
	}
	if (aad)
		cc_buf_free(t->q, aad);
	if (sl) {
		/* The header asks the client to wipe its arena copy. */
		OPENSSL_cleanse(sl, sizeof(*sl));
		cc_buf_free(t->q, sl);
	}
}

/* k on every engine that claims its algorithm, and session-less. */
static void run_kop(struct t *t, const struct kop *k)
{
	char engines[MC_MAX_ENGINES][FX_ENGINE_NAME_MAX];
	int n, e, r;
	uint32_t sid;

	n = mc_engines_for(t->conn, k->key.alg, engines, MC_MAX_ENGINES);
	/* CRYPTOD_TEST_ENGINES (the VM suite's kernel engines) may name
	 * none that has it: nothing to test here, which is no failure. */
	if (n == 0 && getenv("CRYPTOD_TEST_ENGINES")) {
		printf("  %s: no engine of CRYPTOD_TEST_ENGINES=%s has it\n",
		       mc_spec_of(k->key.alg)->name,
		       getenv("CRYPTOD_TEST_ENGINES"));
		return;
	}
	expect(t, n > 0, k, "-", "capabilities",
	       "an available engine for the algorithm", n);
	for (e = 0; e < n && !t->fatal; e++) {
		r = mc_session(t->conn, &k->key, engines[e], &sid);
		expect(t, r == 0, k, engines[e], "session", "create", r);
		if (r)
			continue;
		run_sync(t, k, sid, engines[e]);
		run_burst(t, k, sid, engines[e]);
		r = cc_session_destroy(t->conn, sid);
		expect(t, r == 0, k, engines[e], "session", "destroy", r);
	}
	if (!t->fatal)
		run_burst(t, k, 0, "session-less");
}

/* ---- Building the cases ---- */

static int fill(uint8_t *out, const char *hex, const char *text, uint8_t b,
		unsigned n)
{
	if (hex)
		return mc_unhex(hex, out, DATA_MAX);
	if (text) {
		memcpy(out, text, strlen(text));
		return (int)strlen(text);
	}
	memset(out, b, n);
	return (int)n;
}

/* The HMAC cases: the published tag over the AAD, nothing encrypted. */
/* The CTR algorithm with the same HMAC as alg, or 0. */
static enum cc_alg ctr_twin(enum cc_alg alg)
{
	return alg == SHA1     ? CC_ALG_AES_CTR_HMAC_SHA1
	       : alg == SHA256 ? CC_ALG_AES_CTR_HMAC_SHA256
			       : (enum cc_alg)0;
}

static void run_hmac_case(struct t *t, const struct hmac_case *h,
			  enum cc_alg alg)
{
	uint8_t key[DATA_MAX], md[EVP_MAX_MD_SIZE];
	int key_len = fill(key, h->key_hex, NULL, h->key_fill, h->key_fill_len);
	struct kop k = {
		.name = h->name,
		.key = { .alg = alg, .key_len = 16 },
		.iv_len = 16,
	};
	struct cc_session_params sp = {
		.alg = alg,
		.key_len = 16,
	};
	unsigned long f0 = t->failed, c0 = t->checked;
	uint32_t sid;
	int r;

	/* Any cipher key and IV: nothing is encrypted. */
	memset(k.key.key, 0x42, 16);
	memset(k.iv, 0x24, 16);
	k.aad_len = (unsigned)fill(k.aad, NULL, h->msg, h->msg_fill,
				   h->msg_fill_len);
	if (!h->tag_hex) {
		/* Out of "auth key 1-64": refused, -EINVAL. */
		sp.key = k.key.key;
		sp.auth_key = key;
		sp.auth_key_len = (size_t)key_len;
		r = cc_session_create(t->conn, &sp, &sid);
		expect(t, r == -EINVAL, &k, "default", "session",
		       "HMAC key longer than 64 bytes: want -EINVAL", r);
		if (r == 0)
			cc_session_destroy(t->conn, sid);
		printf("%-34s %s: n/a (%d-byte HMAC key), refused: "
		       "%s\n",
		       h->name, mc_spec_of(alg)->name, key_len,
		       r ? cc_strerror(r) : "NO");
		return;
	}
	memcpy(k.key.auth_key, key, (size_t)key_len);
	k.key.auth_key_len = (unsigned)key_len;
	if (mc_unhex(h->tag_hex, k.tag, sizeof(k.tag)) !=
	    (int)mc_tag_len(&k.key)) {
		fprintf(stderr, "FAIL %s: bad embedded tag\n", h->name);
		t->failed++;
		return;
	}
	/* Check the embedded value against OpenSSL first: a typo
	 * here must not pass for a daemon bug. */
	if (mc_hmac2(mc_hmac_digest(alg), key, (unsigned)key_len, k.aad,
		     k.aad_len, NULL, 0, md) < 0 ||
	    memcmp(md, k.tag, mc_tag_len(&k.key))) {
		fprintf(stderr,
			"FAIL %s: embedded tag disagrees with "
			"OpenSSL's HMAC (test data error)\n",
			h->name);
		t->failed++;
		return;
	}
	run_kop(t, &k);
	printf("%-34s %s: %lu checks, %lu failed\n", h->name,
	       mc_spec_of(alg)->name, t->checked - c0, t->failed - f0);
}

static void run_hmac_cases(struct t *t)
{
	unsigned i;

	for (i = 0; i < sizeof(hmac_cases) / sizeof(hmac_cases[0]); i++) {
		run_hmac_case(t, &hmac_cases[i], hmac_cases[i].alg);
		if (ctr_twin(hmac_cases[i].alg))
			run_hmac_case(t, &hmac_cases[i],
				      ctr_twin(hmac_cases[i].alg));
	}
}

static void run_cbc_case(struct t *t, const struct cbc_case *c, enum cc_alg alg)
{
	struct kop k = { .name = c->name, .key = { .alg = alg } };
	const char *digest = mc_hmac_digest(alg); /* NULL: no MAC */
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned long f0 = t->failed, c0 = t->checked;
	int n;

	n = mc_unhex(c->key_hex, k.key.key, sizeof(k.key.key));
	k.key.key_len = n > 0 ? (unsigned)n : 0;
	k.iv_len = (unsigned)mc_unhex(c->iv_hex, k.iv, sizeof(k.iv));
	k.len = (uint32_t)fill(k.pt, c->pt_hex, c->pt_text, 0, 0);
	if (mc_unhex(c->ct_hex, k.ct, sizeof(k.ct)) != (int)k.len) {
		fprintf(stderr, "FAIL %s: bad embedded case\n", c->name);
		t->failed++;
		return;
	}
	if (digest) {
		/* As ESP does: SPI and sequence number, then the IV, in the
		 * AAD; the RFC 2404 case 3 key (0xaa bytes) as long as the
		 * digest as the HMAC key. */
		memcpy(k.aad, "\x00\x00\x43\x21\x00\x00\x00\x01", 8);
		memcpy(k.aad + 8, k.iv, 16);
		k.aad_len = 24;
		k.key.auth_key_len =
			(unsigned)EVP_MD_get_size(EVP_get_digestbyname(digest));
		memset(k.key.auth_key, 0xaa, k.key.auth_key_len);
		if (mc_hmac2(digest, k.key.auth_key, k.key.auth_key_len, k.aad,
			     k.aad_len, k.ct, k.len, md) < 0)
			t->failed++;
		memcpy(k.tag, md, mc_tag_len(&k.key));
	} else if (alg == CC_ALG_AES_CBC_NULL) {
		/* "the AAD is ignored": some AAD, same ciphertext. */
		memset(k.aad, 0x5c, 20);
		k.aad_len = 20;
	}
	run_kop(t, &k);
	printf("%-34s %s: %lu checks, %lu failed\n", c->name,
	       mc_spec_of(alg)->name, t->checked - c0, t->failed - f0);

	/* The authenc algorithms once more with no AAD at all. */
	if (digest) {
		k.aad_len = 0;
		if (mc_hmac2(digest, k.key.auth_key, k.key.auth_key_len, NULL,
			     0, k.ct, k.len, md) < 0)
			t->failed++;
		memcpy(k.tag, md, mc_tag_len(&k.key));
		f0 = t->failed;
		c0 = t->checked;
		run_kop(t, &k);
		printf("%-34s %s, no AAD: %lu checks, %lu failed\n", c->name,
		       mc_spec_of(alg)->name, t->checked - c0, t->failed - f0);
	}
}

/* Nothing to encrypt and nothing to authenticate but the key: the tag is
 * HMAC(auth_key, "") (OpenSSL's), which ipsec-mb computes no job for. */
static void run_empty_case(struct t *t, enum cc_alg alg, unsigned auth_len)
{
	struct kop k = {
		.name = "empty message",
		.key = { .alg = alg, .key_len = 32, .auth_key_len = auth_len },
		.iv_len = 16,
	};
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned long f0 = t->failed, c0 = t->checked;

	memset(k.key.key, 0x42, 32);
	memset(k.key.auth_key, 0xaa, auth_len);
	memset(k.iv, 0x24, 16);
	if (mc_hmac2(mc_hmac_digest(alg), k.key.auth_key, auth_len, NULL, 0,
		     NULL, 0, md) < 0) {
		t->failed++;
		return;
	}
	memcpy(k.tag, md, mc_tag_len(&k.key));
	run_kop(t, &k);
	printf("%-34s %s, %u-byte HMAC key: %lu checks, %lu failed\n", k.name,
	       mc_spec_of(alg)->name, auth_len, t->checked - c0,
	       t->failed - f0);
}

int main(void)
{
	static const enum cc_alg cbc_algs[] = {
		CC_ALG_AES_CBC,
		CC_ALG_AES_CBC_NULL,
		CC_ALG_AES_CBC_HMAC_SHA1,
		CC_ALG_AES_CBC_HMAC_SHA256,
		CC_ALG_AES_CBC_HMAC_SHA384,
		CC_ALG_AES_CBC_HMAC_SHA512,
	};
	static const enum cc_alg ctr_algs[] = {
		CC_ALG_AES_CTR_HMAC_SHA1,
		CC_ALG_AES_CTR_HMAC_SHA256,
	};
	/* The RFCs' HMAC keys include 4-byte "Jefe": below the key
	 * policy's default (128 bits), which auth keys are held to. */
	static const char *const args[] = { "--set", "keys.min_bits=0", NULL };
	struct fx_daemon_params dp = { .workers = 2, .args = args };
	struct cc_queue_params qp = { .sq_entries = QUEUE_ENTRIES };
	struct t t = { 0 };
	struct fx_daemon d;
	unsigned i, a;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (fx_setup(&d, &dp, "test_authenc_kat", &qp, &t.conn, &t.q))
		return FX_EXIT_FAIL;

	run_hmac_cases(&t);
	for (a = 0; a < sizeof(cbc_algs) / sizeof(cbc_algs[0]); a++)
		for (i = 0;
		     i < sizeof(cbc_cases) / sizeof(cbc_cases[0]) && !t.fatal;
		     i++)
			run_cbc_case(&t, &cbc_cases[i], cbc_algs[a]);
	for (a = 0; a < sizeof(ctr_algs) / sizeof(ctr_algs[0]); a++)
		for (i = 0;
		     i < sizeof(ctr_cases) / sizeof(ctr_cases[0]) && !t.fatal;
		     i++)
			run_cbc_case(&t, &ctr_cases[i], ctr_algs[a]);
	for (a = 0; a < mc_n_specs && !t.fatal; a++)
		if (mc_hmac_digest(mc_specs[a].alg)) {
			run_empty_case(&t, mc_specs[a].alg, 1);
			run_empty_case(&t, mc_specs[a].alg, 64);
		}

	if (fx_teardown(&d, t.conn, t.q))
		fails++;
	if (t.failed || !t.checked || t.fatal)
		fails++;
	printf("TOTAL: %lu checks, %lu failed\n%s\n", t.checked, t.failed,
	       fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
