// SPDX-License-Identifier: MIT
/*
 * AES key wrap (RFC 3394) as an op any client can use: CC_ALG_AES_KW,
 * encrypt = wrap, decrypt = unwrap, the RFC's output A || R[1..n] as the
 * op's tag (A) and data (R). On every engine cc_capabilities_get() lists
 * for it:
 *
 * - RFC 3394 section 4's six vectors (KEKs of 128, 192, 256 bits; key
 *   data of 128, 192, 256 bits), wrapped and unwrapped;
 * - OpenSSL's AES-n-WRAP in-process as an independent implementation:
 *   random KEKs and lengths from 16 to 4096 bytes, the daemon's wrap
 *   unwrapped here and ours unwrapped there;
 * - refusals: lengths of 8, 20 and 4104 bytes, a 4-byte tag, an IV; and
 *   a tampered wrap (tag or data) or a wrong KEK completes
 *   CC_ERR_AUTH_FAILED with the output zeroed;
 * - a failing unwrap's output is never visible in the shared arena, not
 *   even while it runs: a thread watches the zeroed destination while
 *   UNVERIFIED_ROUNDS tampered 4096-byte unwraps run through the queue
 *   (raw AES decryptions under the KEK would show there otherwise, as
 *   they did when the engine unwrapped straight into it).
 *
 * Exit: 0 passed, 1 failed.
 */
#include "fixture.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>

static int fails;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);   \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			fails++;                                               \
		}                                                              \
	} while (0)

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;

	for (size_t i = 0; i < n; i++)
		sscanf(h + 2 * i, "%2hhx", &out[i]);
	return n;
}

/* RFC 3394 section 4.1 - 4.6. */
static const struct {
	const char *kek, *data, *wrapped;
} rfc3394[] = {
	{ "000102030405060708090A0B0C0D0E0F",
	  "00112233445566778899AABBCCDDEEFF",
	  "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5" },
	{ "000102030405060708090A0B0C0D0E0F1011121314151617",
	  "00112233445566778899AABBCCDDEEFF",
	  "96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D" },
	{ "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
	  "00112233445566778899AABBCCDDEEFF",
	  "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7" },
	{ "000102030405060708090A0B0C0D0E0F1011121314151617",
	  "00112233445566778899AABBCCDDEEFF0001020304050607",
	  "031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2" },
	{ "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
	  "00112233445566778899AABBCCDDEEFF0001020304050607",
	  "A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1" },
	{ "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
	  "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
	  "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43B"
	  "FB988B9B7A02DD21" },
};

static uint32_t session(struct cc_conn *conn, const char *engine,
			const uint8_t *kek, unsigned kek_len, unsigned tag_len,
			int *err)
{
	struct cc_session_params sp = { .alg = CC_ALG_AES_KW,
					.key = kek,
					.key_len = kek_len,
					.tag_len = tag_len,
					.engine = engine };
	uint32_t sid = 0;

	*err = cc_session_create(conn, &sp, &sid);
	return *err ? 0 : sid;
}

/* OpenSSL's wrap (enc) or unwrap; the output length, or -1. */
static int ref_wrap(int enc, const uint8_t *kek, unsigned kek_len,
		    const uint8_t *in, int len, uint8_t *out)
{
	char name[32];
	EVP_CIPHER *c;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = -1;

	snprintf(name, sizeof(name), "AES-%u-WRAP", kek_len * 8);
	c = EVP_CIPHER_fetch(NULL, name, NULL);
	if (ctx && c && EVP_CipherInit_ex2(ctx, c, kek, NULL, enc, NULL) &&
	    EVP_CipherUpdate(ctx, out, &n, in, len) <= 0)
		n = -1;
	EVP_CIPHER_free(c);
	EVP_CIPHER_CTX_free(ctx);
	return n;
}

static void run_rfc(struct cc_conn *conn, const char *eng)
{
	for (size_t i = 0; i < sizeof(rfc3394) / sizeof(rfc3394[0]); i++) {
		uint8_t kek[32], data[32], want[40], ct[32], tag[8], pt[32];
		unsigned kl = (unsigned)unhex(rfc3394[i].kek, kek);
		size_t n = unhex(rfc3394[i].data, data);
		int err;

		unhex(rfc3394[i].wrapped, want);
		uint32_t sid = session(conn, eng, kek, kl, 8, &err);
		CHECK(sid, "[%s] 4.%zu: session: %s", eng, i + 1,
		      cc_strerror(err));
		if (!sid)
			continue;
		err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data,
			       ct, n, tag);
		CHECK(!err && !memcmp(tag, want, 8) && !memcmp(ct, want + 8, n),
		      "[%s] RFC 3394 4.%zu wrap: %s", eng, i + 1,
		      cc_strerror(err));
		err = fx_crypt(conn, sid, CC_DECRYPT, NULL, 0, NULL, 0,
			       want + 8, pt, n, want);
		CHECK(!err && !memcmp(pt, data, n),
		      "[%s] RFC 3394 4.%zu unwrap: %s", eng, i + 1,
		      cc_strerror(err));
		cc_session_destroy(conn, sid);
	}
}

static void run_openssl(struct cc_conn *conn, const char *eng)
{
	static uint8_t data[4096], ct[4096], pt[4096], ref[4096 + 8];
	static const unsigned kls[] = { 16, 24, 32 };

	for (unsigned round = 0; round < 24; round++) {
		uint8_t kek[32], tag[8];
		unsigned kl = kls[round % 3], r;
		int err;

		if (getrandom(kek, sizeof(kek), 0) != sizeof(kek) ||
		    getrandom(&r, sizeof(r), 0) != sizeof(r) ||
		    getrandom(data, sizeof(data), 0) != sizeof(data))
			abort();
		/* 16, 24 and 4096 bytes always; others at random */
		size_t n = round < 3   ? 16
			   : round < 6 ? 24
			   : round < 9 ? 4096
				       : 16 + 8 * (r % 510);
		uint32_t sid = session(conn, eng, kek, kl, 8, &err);
		CHECK(sid, "[%s] session: %s", eng, cc_strerror(err));
		if (!sid)
			continue;
		err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data,
			       ct, n, tag);
		int m = ref_wrap(1, kek, kl, data, (int)n, ref);
		CHECK(!err && m == (int)n + 8 && !memcmp(ref, tag, 8) &&
			      !memcmp(ref + 8, ct, n),
		      "[%s] wrap of %zu bytes under a %u-byte KEK differs "
		      "from OpenSSL's (%s)",
		      eng, n, kl, cc_strerror(err));
		/* OpenSSL unwraps ours, we unwrap OpenSSL's */
		memcpy(ref, tag, 8);
		memcpy(ref + 8, ct, n);
		m = ref_wrap(0, kek, kl, ref, (int)n + 8, pt);
		CHECK(m == (int)n && !memcmp(pt, data, n),
		      "[%s] OpenSSL cannot unwrap our %zu bytes", eng, n);
		err = fx_crypt(conn, sid, CC_DECRYPT, NULL, 0, NULL, 0, ct, pt,
			       n, tag);
		CHECK(!err && !memcmp(pt, data, n),
		      "[%s] unwrap of %zu bytes: %s", eng, n, cc_strerror(err));
		cc_session_destroy(conn, sid);
	}
}

static int all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return !acc;
}

static void run_negative(struct cc_conn *conn, const char *eng)
{
	/* 32 bytes: the 20-byte KEK below is read from it too */
	uint8_t kek[32] = { 1 }, other[16] = { 2 }, data[4104] = { 3 };
	uint8_t ct[4104], pt[4104], tag[8], iv[16] = { 0 };
	int err;
	uint32_t sid = session(conn, eng, kek, 16, 8, &err);

	CHECK(sid, "[%s] session: %s", eng, cc_strerror(err));
	if (!sid)
		return;
	/* lengths: one semiblock, not a multiple of 8, past the bound */
	static const size_t bad[] = { 0, 8, 20, 4104 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data,
			       ct, bad[i], tag);
		CHECK(err == CC_ERR_BAD_PARAM,
		      "[%s] wrap of %zu bytes: want refused, got %s", eng,
		      bad[i], cc_strerror(err));
	}
	err = fx_crypt(conn, sid, CC_ENCRYPT, iv, 16, NULL, 0, data, ct, 32,
		       tag);
	CHECK(err == CC_ERR_BAD_PARAM, "[%s] an IV: want refused, got %s", eng,
	      cc_strerror(err));
	/* a tampered tag, a tampered body, the wrong KEK */
	err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data, ct, 32,
		       tag);
	CHECK(!err, "[%s] wrap: %s", eng, cc_strerror(err));
	for (int t = 0; t < 2; t++) {
		uint8_t *b = t ? ct + 17 : tag + 3;

		*b ^= 0x40;
		memset(pt, 0xaa, 32);
		err = fx_crypt(conn, sid, CC_DECRYPT, NULL, 0, NULL, 0, ct, pt,
			       32, tag);
		CHECK(err == CC_ERR_AUTH_FAILED && all_zero(pt, 32),
		      "[%s] unwrap of a tampered %s: want auth failure and "
		      "zeroes, got %s",
		      eng, t ? "body" : "tag", cc_strerror(err));
		*b ^= 0x40;
	}
	uint32_t wrong = session(conn, eng, other, 16, 8, &err);
	if (wrong) {
		memset(pt, 0xaa, 32);
		err = fx_crypt(conn, wrong, CC_DECRYPT, NULL, 0, NULL, 0, ct,
			       pt, 32, tag);
		CHECK(err == CC_ERR_AUTH_FAILED && all_zero(pt, 32),
		      "[%s] unwrap under the wrong KEK: got %s", eng,
		      cc_strerror(err));
		cc_session_destroy(conn, wrong);
	}
	cc_session_destroy(conn, sid);
	/* the tag is the 8-byte integrity value, nothing else */
	CHECK(!session(conn, eng, kek, 16, 4, &err) && err,
	      "[%s] a 4-byte tag: want refused", eng);
	CHECK(!session(conn, eng, kek, 20, 8, &err) && err,
	      "[%s] a 20-byte KEK: want refused", eng);
}

enum { UNVERIFIED_ROUNDS = 300, UNVERIFIED_LEN = 4096 };

struct watch {
	const volatile uint8_t *dst;
	atomic_int stop, seen;
};

static void *watch_dst(void *arg)
{
	struct watch *wt = arg;
	while (!atomic_load(&wt->stop))
		for (size_t i = 0; i < UNVERIFIED_LEN; i += 8)
			if (wt->dst[i]) {
				atomic_store(&wt->seen, 1);
				return NULL;
			}
	return NULL;
}

static void run_unverified(struct cc_conn *conn, struct cc_queue *q,
			   const char *eng)
{
	uint8_t kek[16] = { 7 }, data[UNVERIFIED_LEN];
	int err;
	uint32_t sid = session(conn, eng, kek, 16, 8, &err);

	CHECK(sid, "[%s] session: %s", eng, cc_strerror(err));
	if (!sid)
		return;
	uint8_t *src = cc_buf_alloc(q, UNVERIFIED_LEN);
	uint8_t *dst = cc_buf_alloc(q, UNVERIFIED_LEN);
	uint8_t *tag = cc_buf_alloc(q, 64);
	CHECK(src && dst && tag, "[%s] arena", eng);
	if (!src || !dst || !tag)
		goto out;
	memset(data, 0x5c, sizeof(data));
	err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data, src,
		       UNVERIFIED_LEN, tag);
	CHECK(!err, "[%s] wrap: %s", eng, cc_strerror(err));
	tag[0] ^= 1; /* fails only at the end of the unwrap */
	memset(dst, 0, UNVERIFIED_LEN);
	struct watch wt = { .dst = dst };
	pthread_t th;
	if (pthread_create(&th, NULL, watch_dst, &wt)) {
		CHECK(0, "[%s] pthread_create", eng);
		goto out;
	}
	int bad = 0;
	for (int r = 0; r < UNVERIFIED_ROUNDS && !bad; r++) {
		struct cc_op op = { .user_data = (uint64_t)r,
				    .session = sid,
				    .dir = CC_DECRYPT,
				    .src = src,
				    .dst = dst,
				    .len = UNVERIFIED_LEN,
				    .tag = tag };
		struct cc_completion c;
		err = fx_run_burst(q, &op, 1, &c, 30000);
		if (err || c.status != CC_ERR_AUTH_FAILED) {
			CHECK(0, "[%s] tampered unwrap %d: %s, status %s", eng,
			      r, cc_strerror(err), cc_strerror(c.status));
			bad = 1;
		}
	}
	atomic_store(&wt.stop, 1);
	pthread_join(th, NULL);
	CHECK(!atomic_load(&wt.seen) && all_zero(dst, UNVERIFIED_LEN),
	      "[%s] a failing unwrap's output showed in the arena", eng);
out:
	if (tag)
		cc_buf_free(q, tag);
	if (dst)
		cc_buf_free(q, dst);
	if (src)
		cc_buf_free(q, src);
	cc_session_destroy(conn, sid);
}

int main(void)
{
	struct fx_daemon_params dp = { .workers = 1 };
	struct cc_queue_params qp = { .sq_entries = 64,
				      .arena_size = 1u << 20 };
	char engines[8][FX_ENGINE_NAME_MAX];
	struct cc_conn *conn;
	struct cc_queue *q;
	struct fx_daemon d;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (fx_setup(&d, &dp, "test_keywrap_op", &qp, &conn, &q))
		return FX_EXIT_FAIL;
	int n = fx_engines_for(conn, CC_ALG_AES_KW, engines, 8);
	CHECK(n > 0, "no engine lists aes-kw");
	for (int e = 0; e < n; e++) {
		int before = fails;

		run_rfc(conn, engines[e]);
		run_openssl(conn, engines[e]);
		run_negative(conn, engines[e]);
		run_unverified(conn, q, engines[e]);
		printf("aes-kw [%s]: %s\n", engines[e],
		       fails == before ? "passed" : "FAILED");
	}
	if (fx_teardown(&d, conn, q))
		fails++;
	printf("TOTAL: %s\n", fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
