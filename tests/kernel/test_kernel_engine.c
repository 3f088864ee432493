/* SPDX-License-Identifier: MIT */
/*
 * The kernel (AF_ALG) engines, end to end through a real daemon.
 *
 * Without AF_ALG (this host's kernel): every kernel and kernel-pcrypt row
 * of the capability reply is unavailable and says why; AES-LRW, which only
 * the kernel has, is refused at session creation; naming the kernel engine
 * is refused; and the daemon serves the userspace engines as usual.
 *
 * With AF_ALG (the VM suite, CRYPTOD_VM=1, Debian's stock kernel): every
 * algorithm is available on "kernel" and every AEAD on "kernel-pcrypt";
 * every algorithm and key size matches an independent reference computed
 * here with OpenSSL (and, for LRW, which OpenSSL lacks, our own LRW over
 * OpenSSL's AES-ECB); decryption inverts; a flipped tag bit fails with the
 * output zeroed; and a deep queue of mixed-size GCM ops on kernel-pcrypt,
 * run by 4 workers at once, completes in submission order with the right
 * bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "fixture.h"
#include "modes_common.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif

static unsigned checks, failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		checks++;                                                      \
		if (!(cond)) {                                                 \
			failures++;                                            \
			printf("FAIL %s:%d: ", __func__, __LINE__);            \
			printf(__VA_ARGS__);                                   \
			printf("\n");                                          \
		}                                                              \
	} while (0)

static int is_kernel_engine(const char *e)
{
	return !strcmp(e, "kernel") || !strcmp(e, "kernel-pcrypt");
}

/* ---- LRW reference: IEEE 1619 LRW-AES over OpenSSL's AES-ECB ---- */

/* a *= b in GF(2^128), x^128 + x^7 + x^2 + x + 1, big-endian bits and
 * bytes (the kernel's gf128mul "bbe" convention, which LRW uses). */
static void gf128_mul_bbe(uint8_t a[16], const uint8_t b[16])
{
	uint8_t z[16] = { 0 };
	for (int i = 0; i < 128; i++) {
		/* z = z * x */
		int carry = z[0] & 0x80;
		for (int j = 0; j < 15; j++)
			z[j] = (uint8_t)(z[j] << 1 | z[j + 1] >> 7);
		z[15] = (uint8_t)(z[15] << 1);
		if (carry)
			z[15] ^= 0x87;
		if (b[i / 8] & (0x80 >> (i % 8)))
			for (int j = 0; j < 16; j++)
				z[j] ^= a[j];
	}
	memcpy(a, z, 16);
}

/* key = AES key (16/24/32) || tweak key (16); iv = index of block 0. */
static int lrw_ref(int enc, const uint8_t *key, unsigned key_len,
		   const uint8_t iv[16], const uint8_t *in, uint8_t *out,
		   size_t len)
{
	unsigned aes_len = key_len - 16;
	const EVP_CIPHER *c = aes_len == 16   ? EVP_aes_128_ecb()
			      : aes_len == 24 ? EVP_aes_192_ecb()
					      : EVP_aes_256_ecb();
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int ok = ctx && EVP_CipherInit_ex(ctx, c, NULL, key, NULL, enc) &&
		 EVP_CIPHER_CTX_set_padding(ctx, 0);
	uint8_t idx[16];
	memcpy(idx, iv, 16);
	for (size_t off = 0; ok && off < len; off += 16) {
		uint8_t t[16], x[16], y[16];
		int n;
		memcpy(t, idx, 16);
		gf128_mul_bbe(t, key + aes_len); /* T = K2 * index */
		for (int j = 0; j < 16; j++)
			x[j] = in[off + j] ^ t[j];
		ok = EVP_CipherUpdate(ctx, y, &n, x, 16) && n == 16;
		for (int j = 0; j < 16; j++)
			out[off + j] = y[j] ^ t[j];
		for (int j = 15; j >= 0 && ++idx[j] == 0; j--)
			; /* 128-bit big-endian increment */
	}
	EVP_CIPHER_CTX_free(ctx);
	return ok ? 0 : -EIO;
}

/* ---- RFC 4106 reference: GCM with nonce = salt || IV, OpenSSL EVP ---- */

static int rfc4106_ref(const uint8_t *key, unsigned key_len,
		       const uint8_t iv[8], const uint8_t *aad,
		       unsigned aad_len, const uint8_t *in, uint8_t *out,
		       size_t len, uint8_t tag[16])
{
	unsigned aes_len = key_len - 4;
	const EVP_CIPHER *c = aes_len == 16   ? EVP_aes_128_gcm()
			      : aes_len == 24 ? EVP_aes_192_gcm()
					      : EVP_aes_256_gcm();
	uint8_t nonce[12];
	memcpy(nonce, key + aes_len, 4);
	memcpy(nonce + 4, iv, 8);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n, ok = ctx && EVP_EncryptInit_ex(ctx, c, NULL, key, nonce) &&
		    EVP_EncryptUpdate(ctx, NULL, &n, aad, (int)aad_len) &&
		    (!len || EVP_EncryptUpdate(ctx, out, &n, in, (int)len)) &&
		    EVP_EncryptFinal_ex(ctx, out + len, &n) &&
		    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(ctx);
	return ok ? 0 : -EIO;
}

/* The multiplication itself against hand-checkable identities. */
static void test_gf128(void)
{
	uint8_t one[16] = { [15] = 1 }, x[16] = { [15] = 2 }, a[16], b[16];
	mc_rnd_bytes(a, 16);
	memcpy(b, a, 16);
	gf128_mul_bbe(b, one);
	CHECK(!memcmp(a, b, 16), "a * 1 != a");
	/* x^127 * x = x^128 = x^7 + x^2 + x + 1 = 0x87 */
	uint8_t top[16] = { [0] = 0x80 }, red[16] = { [15] = 0x87 };
	gf128_mul_bbe(top, x);
	CHECK(!memcmp(top, red, 16), "x^127 * x != 0x87");
	/* commutativity on random values */
	uint8_t c[16], d[16];
	mc_rnd_bytes(c, 16);
	memcpy(d, c, 16);
	gf128_mul_bbe(c, a);
	memcpy(b, a, 16);
	gf128_mul_bbe(b, d);
	CHECK(!memcmp(b, c, 16), "a * c != c * a");
}

/* A session-less GCM op with aes-gcm routed to the kernel (which takes
 * sessions only): it runs on a userspace engine, with the right bytes. */
static void test_sessionless_routed(struct cc_queue *q)
{
	struct mc_key k = { .alg = CC_ALG_AES_GCM, .key_len = 16 };
	mc_rnd_bytes(k.key, 16);
	struct cc_sessionless *sl = cc_buf_alloc(q, sizeof(*sl));
	uint8_t *buf = cc_buf_alloc(q, 100), *tag = cc_buf_alloc(q, 16);
	CHECK(sl && buf && tag, "arena allocation");
	if (!sl || !buf || !tag)
		return;
	uint8_t iv[12], pt[100], ref[100], rtag[16];
	mc_rnd_bytes(iv, 12);
	mc_rnd_bytes(pt, sizeof(pt));
	memcpy(buf, pt, sizeof(pt));
	mc_sessionless_fill(sl, &k);
	mc_ref_encrypt(&k, iv, 12, NULL, 0, pt, sizeof(pt), ref, rtag);
	struct cc_op op = { .user_data = 7,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .len = sizeof(pt),
			    .tag = tag,
			    .iv = iv,
			    .iv_len = 12,
			    .sessionless = sl };
	struct cc_completion c;
	int r = fx_run_burst(q, &op, 1, &c, 60000);
	CHECK(r == 0 && c.status == 0, "session-less GCM: %s / %s",
	      cc_strerror(r), cc_strerror(c.status));
	CHECK(!memcmp(buf, ref, sizeof(pt)) && !memcmp(tag, rtag, 16),
	      "session-less GCM result differs");
	printf("  session-less aes-gcm with route.aes-gcm = kernel: %s\n",
	       r == 0 && c.status == 0 ? "ran" : "failed");
	explicit_bzero(sl, sizeof(*sl));
	cc_buf_free(q, sl);
	cc_buf_free(q, buf);
	cc_buf_free(q, tag);
}

/* ---- Without AF_ALG ---- */

static void test_absent(struct cc_conn *conn)
{
	struct cc_alg_caps *caps;
	unsigned n = 0, rows = 0;
	int r = cc_capabilities_get(conn, &caps, &n);
	CHECK(r == 0, "capabilities: %s", cc_strerror(r));
	if (r)
		return;
	for (unsigned i = 0; i < n; i++) {
		if (!is_kernel_engine(caps[i].engine))
			continue;
		rows++;
		CHECK(!caps[i].available, "%s on %s claims to be available",
		      caps[i].alg_name, caps[i].engine);
		CHECK(strstr(caps[i].reason, "no AF_ALG") != NULL,
		      "%s on %s: reason \"%s\" does not name AF_ALG",
		      caps[i].alg_name, caps[i].engine, caps[i].reason);
		CHECK(!caps[i].sessionless, "%s on %s claims session-less ops",
		      caps[i].alg_name, caps[i].engine);
	}
	/* 15 algorithms on kernel, 5 AEADs on kernel-pcrypt */
	CHECK(rows == 20, "%u kernel rows, want 20", rows);
	cc_capabilities_free(caps);
	printf("  %u kernel capability rows, all unavailable with a reason\n",
	       rows);

	uint8_t key[48] = { 1 };
	uint32_t sid;
	struct cc_session_params lrw = { .alg = CC_ALG_AES_LRW,
					 .key = key,
					 .key_len = 32 };
	r = cc_session_create(conn, &lrw, &sid);
	CHECK(r < 0, "an LRW session without AF_ALG was created");
	printf("  LRW session refused: %s (%s)\n", cc_strerror(r),
	       cc_conn_last_error(conn));
	struct cc_session_params gk = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 16,
					.engine = "kernel" };
	r = cc_session_create(conn, &gk, &sid);
	CHECK(r < 0, "a GCM session on the kernel engine was created");
	printf("  GCM on engine kernel refused: %s (%s)\n", cc_strerror(r),
	       cc_conn_last_error(conn));

	/* The userspace engines serve as usual. */
	gk.engine = NULL;
	r = cc_session_create(conn, &gk, &sid);
	CHECK(r == 0, "default GCM session: %s", cc_strerror(r));
	if (r)
		return;
	uint8_t iv[12] = { 2 }, pt[64], ct[64], back[64], tag[16];
	mc_rnd_bytes(pt, sizeof(pt));
	r = fx_crypt(conn, sid, CC_ENCRYPT, iv, 12, NULL, 0, pt, ct, sizeof(pt),
		     tag);
	CHECK(r == 0, "encrypt: %s", cc_strerror(r));
	r = fx_crypt(conn, sid, CC_DECRYPT, iv, 12, NULL, 0, ct, back,
		     sizeof(pt), tag);
	CHECK(r == 0 && !memcmp(back, pt, sizeof(pt)), "round trip: %s",
	      cc_strerror(r));
	cc_session_destroy(conn, sid);
}

/* ---- With AF_ALG ---- */

struct kalg {
	enum cc_alg alg;
	unsigned keys[3], n_keys;
	unsigned iv_len, block, min_len;
	int auth, aead, lrw, rfc4106;
};

/* authenc: AES keys and an HMAC key, IV 16, block 16 (CBC) or 1 (CTR) */
#define KALG_AUTHENC(a, blk)                                                   \
	{                                                                      \
		(a), { 16, 24, 32 }, 3, 16, (blk), 0, 1, 1, 0, 0               \
	}

static const struct kalg kalgs[] = {
	{ CC_ALG_AES_GCM, { 16, 24, 32 }, 3, 12, 1, 0, 0, 1, 0, 0 },
	{ CC_ALG_AES_GMAC, { 16, 24, 32 }, 3, 12, 1, 0, 0, 1, 0, 0 },
	{ CC_ALG_AES_CBC, { 16, 24, 32 }, 3, 16, 16, 0, 0, 0, 0, 0 },
	{ CC_ALG_AES_CTR, { 16, 24, 32 }, 3, 16, 1, 0, 0, 0, 0, 0 },
	{ CC_ALG_AES_ECB, { 16, 24, 32 }, 3, 0, 16, 0, 0, 0, 0, 0 },
	{ CC_ALG_AES_XTS, { 32, 64 }, 2, 16, 1, 16, 0, 0, 0, 0 },
	{ CC_ALG_AES_LRW, { 32, 40, 48 }, 3, 16, 16, 16, 0, 0, 1, 0 },
	KALG_AUTHENC(CC_ALG_AES_CBC_HMAC_SHA1, 16),
	KALG_AUTHENC(CC_ALG_AES_CBC_HMAC_SHA256, 16),
	{ CC_ALG_AES_CBC_NULL, { 16, 24, 32 }, 3, 16, 16, 0, 0, 0, 0, 0 },
	/* kernel only: the pcrypt engine lists the SHA-1/256 CBC pairs */
	KALG_AUTHENC(CC_ALG_AES_CBC_HMAC_SHA384, 16),
	KALG_AUTHENC(CC_ALG_AES_CBC_HMAC_SHA512, 16),
	KALG_AUTHENC(CC_ALG_AES_CTR_HMAC_SHA1, 1),
	KALG_AUTHENC(CC_ALG_AES_CTR_HMAC_SHA256, 1),
	/* last: test_rfc4106_openssl() takes it */
	{ CC_ALG_AES_GCM_RFC4106, { 20, 28, 36 }, 3, 8, 1, 0, 0, 1, 0, 1 },
};

static int pcrypt_alg(enum cc_alg a)
{
	return a == CC_ALG_AES_GCM || a == CC_ALG_AES_GMAC ||
	       a == CC_ALG_AES_GCM_RFC4106 || a == CC_ALG_AES_CBC_HMAC_SHA1 ||
	       a == CC_ALG_AES_CBC_HMAC_SHA256;
}

static void test_present_caps(struct cc_conn *conn, int require)
{
	struct cc_alg_caps *caps;
	unsigned n = 0;
	int r = cc_capabilities_get(conn, &caps, &n);
	CHECK(r == 0, "capabilities: %s", cc_strerror(r));
	if (r)
		return;
	for (unsigned i = 0; i < n; i++) {
		if (!is_kernel_engine(caps[i].engine))
			continue;
		printf("  %-20s %-14s %s%s\n", caps[i].alg_name, caps[i].engine,
		       caps[i].available ? "available" : "unavailable: ",
		       caps[i].available ? "" : caps[i].reason);
		if (require)
			CHECK(caps[i].available, "%s on %s: %s",
			      caps[i].alg_name, caps[i].engine, caps[i].reason);
		if (caps[i].alg == CC_ALG_AES_LRW && caps[i].available)
			CHECK(caps[i].default_engine,
			      "kernel is not LRW's default engine");
		/* route.aes-gcm = kernel in the test's configuration */
		if (caps[i].alg == CC_ALG_AES_GCM && caps[i].available &&
		    !strcmp(caps[i].engine, "kernel"))
			CHECK(caps[i].default_engine,
			      "route.aes-gcm = kernel did not make it the "
			      "default");
	}
	cc_capabilities_free(caps);
}

static const uint32_t lens[] = { 0,    1,    15,    16,	   17,	  31,	32,
				 48,   64,   100,   512,   1000,  1024, 4096,
				 4097, 8192, 16384, 32768, 65520, 65536 };

/* One algorithm, one engine, one key size: every length, both ways. */
static void diff_one(struct cc_conn *conn, const struct kalg *a,
		     const char *engine, unsigned key_len)
{
	struct mc_key k = { .alg = a->alg, .key_len = key_len };
	mc_rnd_bytes(k.key, key_len);
	if (a->alg == CC_ALG_AES_XTS)
		k.key[key_len / 2] ^= 0x5a; /* halves must differ */
	if (a->auth) {
		k.auth_key_len = 1 + mc_below(64);
		mc_rnd_bytes(k.auth_key, k.auth_key_len);
	}
	if (a->alg == CC_ALG_AES_GCM && mc_below(2))
		k.tag_len = (unsigned[]){ 4, 8, 12, 13, 14, 15 }[mc_below(6)];
	if (a->rfc4106)
		k.tag_len = (unsigned[]){ 8, 12, 16 }[mc_below(3)];
	uint32_t sid;
	int r = mc_session(conn, &k, engine, &sid);
	CHECK(r == 0, "%s/%s key %u: session: %s (%s)", cc_alg_name(a->alg),
	      engine, key_len, cc_strerror(r), cc_conn_last_error(conn));
	if (r)
		return;
	unsigned tl = a->rfc4106 ? k.tag_len : a->aead ? mc_tag_len(&k) : 0;
	static uint8_t pt[65536], ct[65536], ref[65536], back[65536];
	uint8_t iv[16], aad[300], tag[32], rtag[64]; /* rtag: a whole digest */
	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		uint32_t len = lens[li];
		if (len % a->block || len < a->min_len)
			continue;
		/* no ops without data through AF_ALG's skcipher */
		if (!a->aead && len == 0)
			continue;
		unsigned aad_len = 0;
		if (a->aead && a->alg != CC_ALG_AES_GMAC)
			aad_len = mc_below(2) ? mc_below(sizeof(aad)) : 0;
		if (a->rfc4106) /* SPI || 32- or 64-bit sequence number */
			aad_len = mc_below(2) ? 12 : 8;
		mc_rnd_bytes(pt, len);
		mc_rnd_bytes(iv, sizeof(iv));
		mc_rnd_bytes(aad, aad_len);
		r = a->lrw	 ? lrw_ref(1, k.key, key_len, iv, pt, ref, len)
		    : a->rfc4106 ? rfc4106_ref(k.key, key_len, iv, aad, aad_len,
					       pt, ref, len, rtag)
				 : mc_ref_encrypt(&k, iv, a->iv_len, aad,
						  aad_len, pt, len, ref, rtag);
		CHECK(r == 0, "reference refused");
		r = fx_crypt(conn, sid, CC_ENCRYPT, a->iv_len ? iv : NULL,
			     a->iv_len, aad_len ? aad : NULL, aad_len, pt, ct,
			     len, tl ? tag : NULL);
		CHECK(r == 0, "%s/%s key %u len %u: encrypt: %s",
		      cc_alg_name(a->alg), engine, key_len, len,
		      cc_strerror(r));
		if (r)
			continue;
		if (a->alg != CC_ALG_AES_GMAC)
			CHECK(!memcmp(ct, ref, len),
			      "%s/%s key %u len %u: ciphertext differs at %ld",
			      cc_alg_name(a->alg), engine, key_len, len,
			      mc_first_diff(ct, ref, len));
		if (tl)
			CHECK(!memcmp(tag, rtag, tl),
			      "%s/%s key %u len %u aad %u: tag differs",
			      cc_alg_name(a->alg), engine, key_len, len,
			      aad_len);
		/* decrypt inverts (GMAC: verifies) */
		const uint8_t *din = a->alg == CC_ALG_AES_GMAC ? pt : ct;
		r = fx_crypt(conn, sid, CC_DECRYPT, a->iv_len ? iv : NULL,
			     a->iv_len, aad_len ? aad : NULL, aad_len, din,
			     back, len, tl ? tag : NULL);
		CHECK(r == 0, "%s/%s key %u len %u: decrypt: %s",
		      cc_alg_name(a->alg), engine, key_len, len,
		      cc_strerror(r));
		if (r == 0 && a->alg != CC_ALG_AES_GMAC)
			CHECK(!memcmp(back, pt, len),
			      "%s/%s key %u len %u: decrypt differs",
			      cc_alg_name(a->alg), engine, key_len, len);
		if (a->lrw) { /* and the reference decrypts ours */
			lrw_ref(0, k.key, key_len, iv, ct, ref, len);
			CHECK(!memcmp(ref, pt, len),
			      "LRW reference does not invert the kernel");
		}
		if (tl) { /* a forgery fails and zeroes the output */
			tag[mc_below(tl)] ^= (uint8_t)(1u << mc_below(8));
			memset(back, 0x5a, len);
			r = fx_crypt(conn, sid, CC_DECRYPT,
				     a->iv_len ? iv : NULL, a->iv_len,
				     aad_len ? aad : NULL, aad_len, din, back,
				     len, tag);
			CHECK(r == CC_ERR_AUTH_FAILED,
			      "%s/%s len %u: forged tag gave %s",
			      cc_alg_name(a->alg), engine, len, cc_strerror(r));
			if (a->alg != CC_ALG_AES_GMAC)
				CHECK(mc_first_not(back, 0, len) < 0,
				      "%s/%s len %u: output not zeroed",
				      cc_alg_name(a->alg), engine, len);
		}
	}
	cc_session_destroy(conn, sid);
}

/* RFC 4106 on the openssl engine (every host): the same reference. */
static void test_rfc4106_openssl(struct cc_conn *conn)
{
	const struct kalg *a = &kalgs[sizeof(kalgs) / sizeof(kalgs[0]) - 1];
	unsigned before = failures, c0 = checks;
	for (unsigned k = 0; k < a->n_keys; k++)
		diff_one(conn, a, "openssl", a->keys[k]);
	printf("  %-20s %5u checks on openssl, %u failed\n",
	       cc_alg_name(a->alg), checks - c0, failures - before);
}

static void test_present_diff(struct cc_conn *conn)
{
	for (size_t i = 0; i < sizeof(kalgs) / sizeof(kalgs[0]); i++) {
		const struct kalg *a = &kalgs[i];
		unsigned before = failures, c0 = checks;
		for (int e = 0; e < 2; e++) {
			const char *eng = e ? "kernel-pcrypt" : "kernel";
			if (e && !pcrypt_alg(a->alg))
				continue;
			for (unsigned k = 0; k < a->n_keys; k++)
				diff_one(conn, a, eng, a->keys[k]);
		}
		printf("  %-20s %5u checks, %u failed\n", cc_alg_name(a->alg),
		       checks - c0, failures - before);
	}
}

/* gcm(aes) takes 12-byte IVs only: the kernel engines' rows say so, and
 * a session on them refuses other lengths per op (CC_ERR_BAD_PARAM),
 * those the userspace engines take (1..128 bytes) included. */
static void test_long_iv_refused(struct cc_conn *conn)
{
	static const unsigned ivs[] = { 1, 8, 16, 17, 64, 128 };
	uint8_t key[16] = { 3 }, iv[128] = { 4 }, pt[64] = { 5 }, ct[64];
	uint8_t tag[16];
	for (int e = 0; e < 2; e++) {
		const char *eng = e ? "kernel-pcrypt" : "kernel";
		struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
						.key = key,
						.key_len = 16,
						.engine = eng };
		uint32_t sid;
		int r = cc_session_create(conn, &sp, &sid);
		CHECK(r == 0, "GCM session on %s: %s", eng, cc_strerror(r));
		if (r)
			continue;
		CHECK(fx_iv_ok(conn, CC_ALG_AES_GCM, eng, 12) == 1 &&
			      fx_iv_ok(conn, CC_ALG_AES_GCM, eng, 64) == 0,
		      "%s's GCM row: IV 12 only", eng);
		r = fx_crypt(conn, sid, CC_ENCRYPT, iv, 12, NULL, 0, pt, ct,
			     sizeof(pt), tag);
		CHECK(r == 0, "%s, 12-byte IV: %s", eng, cc_strerror(r));
		for (unsigned i = 0; i < sizeof(ivs) / sizeof(ivs[0]); i++) {
			r = fx_crypt(conn, sid, CC_ENCRYPT, iv, ivs[i], NULL, 0,
				     pt, ct, sizeof(pt), tag);
			CHECK(r == CC_ERR_BAD_PARAM,
			      "%s, %u-byte IV: %s, want CC_ERR_BAD_PARAM", eng,
			      ivs[i], cc_strerror(r));
		}
		cc_session_destroy(conn, sid);
	}
	printf("  kernel engines: GCM IVs other than 12 bytes refused\n");
}

/* Many GCM ops in flight on kernel-pcrypt: order and bytes. */
static void test_pcrypt_order(struct cc_conn *conn, struct cc_queue *q)
{
	enum { N = 384 };
	struct mc_key k = { .alg = CC_ALG_AES_GCM, .key_len = 16 };
	mc_rnd_bytes(k.key, 16);
	uint32_t sid;
	int r = mc_session(conn, &k, "kernel-pcrypt", &sid);
	CHECK(r == 0, "pcrypt session: %s", cc_strerror(r));
	if (r)
		return;
	static struct cc_op ops[N];
	static struct cc_completion comps[N];
	static uint8_t ivs[N][12], refct[N][2048], reftag[N][16];
	static uint8_t *bufs[N], *tags[N];
	uint32_t lens_[N];
	for (unsigned i = 0; i < N; i++) {
		lens_[i] = 1 + mc_below(2048);
		bufs[i] = cc_buf_alloc(q, lens_[i]);
		tags[i] = cc_buf_alloc(q, 16);
		CHECK(bufs[i] && tags[i], "arena allocation");
		if (!bufs[i] || !tags[i])
			return;
		mc_rnd_bytes(bufs[i], lens_[i]);
		mc_rnd_bytes(ivs[i], 12);
		mc_ref_encrypt(&k, ivs[i], 12, NULL, 0, bufs[i], lens_[i],
			       refct[i], reftag[i]);
		ops[i] = (struct cc_op){ .user_data = 0x1000 + i,
					 .session = sid,
					 .dir = CC_ENCRYPT,
					 .src = bufs[i],
					 .len = lens_[i],
					 .tag = tags[i],
					 .iv = ivs[i],
					 .iv_len = 12 };
	}
	r = fx_run_burst(q, ops, N, comps, 120000);
	CHECK(r == 0, "burst: %s", cc_strerror(r));
	unsigned bad = 0;
	for (unsigned i = 0; r == 0 && i < N; i++)
		if (comps[i].status != 0 ||
		    memcmp(bufs[i], refct[i], lens_[i]) ||
		    memcmp(tags[i], reftag[i], 16))
			bad++;
	CHECK(bad == 0, "%u of %d pcrypt ops wrong", bad, N);
	printf("  kernel-pcrypt: %d GCM ops in one burst, in order, %u wrong\n",
	       N, bad);
	for (unsigned i = 0; i < N; i++) {
		cc_buf_free(q, bufs[i]);
		cc_buf_free(q, tags[i]);
	}
	cc_session_destroy(conn, sid);
}

int main(void)
{
	mc_srand(mc_seed_from_env(0x6b65726e656cULL));
	int afalg = 1;
	int fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
	if (fd < 0)
		afalg = 0;
	else
		close(fd);
	int in_vm = getenv("CRYPTOD_VM") != NULL;
	if (in_vm && !afalg) {
		printf("FAIL: CRYPTOD_VM is set but socket(AF_ALG) fails: %s\n",
		       strerror(errno));
		return FX_EXIT_FAIL;
	}

	struct fx_daemon d;
	struct cc_conn *conn;
	struct cc_queue *q;
	/* kernel.pcrypt = create: the test makes its own pcrypt instances
	 * over crypto_user (root in the VM), so it does not depend on
	 * cryptoshim.ko, which the harness tests on its own. */
	char conf[] = "/tmp/cryptod-kernel-test-XXXXXX";
	int cfd = mkstemp(conf);
	/* and aes-gcm routed to the kernel: its sessions go there, while
	 * session-less GCM ops must still run (on a userspace engine);
	 * authenc auth keys of 1..64 bytes (diff_one), below the key
	 * policy's default too */
	if (cfd < 0 || dprintf(cfd, "kernel.pcrypt = create\n"
				    "route.aes-gcm = kernel\n"
				    "keys.min_bits = 0\n") < 0) {
		perror("config file");
		return FX_EXIT_FAIL;
	}
	close(cfd);
	struct fx_daemon_params dp = { .workers = afalg ? 4 : 0,
				       .config = conf };
	struct cc_queue_params qp = { .sq_entries = 512,
				      .arena_size = 4u << 20 };
	int setup = fx_setup(&d, &dp, "test_kernel_engine", &qp, &conn, &q);
	unlink(conf);
	if (setup)
		return FX_EXIT_FAIL;

	test_gf128();
	test_rfc4106_openssl(conn);
	test_sessionless_routed(q);
	if (!afalg) {
		printf("socket(AF_ALG) fails here: checking the daemon's "
		       "behaviour without it\n");
		test_absent(conn);
	} else {
		printf("AF_ALG present%s\n", in_vm ? " (VM)" : "");
		test_present_caps(conn, in_vm);
		test_present_diff(conn);
		test_long_iv_refused(conn);
		test_pcrypt_order(conn, q);
	}

	cc_queue_close(q);
	cc_disconnect(conn);
	int stop = fx_daemon_stop(&d);
	CHECK(stop == 0, "daemon did not stop cleanly: %d", stop);
	printf("TOTAL: %u checks, %u failed\n", checks, failures);
	return failures ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
