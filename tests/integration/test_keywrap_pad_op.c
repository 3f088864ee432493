// SPDX-License-Identifier: MIT
/*
 * AES key wrap with padding (RFC 5649) as an op any client can use:
 * CC_ALG_AES_KWP, encrypt = wrap, decrypt = unwrap. The wrap of n bytes is
 * 8 + n + pad bytes (pad = (8 - n % 8) % 8): the op's tag is its first
 * 8 + pad bytes (the session's tag length), its data the other n, so
 * tag || data is the RFC's output. On every engine cc_capabilities_get()
 * lists for it:
 *
 * - RFC 5649 section 6's two vectors (20 and 7 bytes of key under the
 *   same 192-bit KEK), wrapped and unwrapped;
 * - OpenSSL's AES-n-WRAP-PAD in-process as an independent
 *   implementation: random KEKs, every length from 1 to 33 bytes, 4095,
 *   4096 and random ones, the daemon's wrap unwrapped here and ours
 *   unwrapped there;
 * - refusals: lengths 0 and 4097, a tag length that is not 8 + pad for
 *   the op's length, tags of 7 and 16, an IV, a 20-byte KEK; a tampered
 *   wrap (tag or data), a wrong KEK, or a wrap unwrapped as another
 *   length completes CC_ERR_AUTH_FAILED with the output zeroed;
 * - a wrong KEK's unwrap is never visible in the shared arena, not even
 *   while it runs: a thread watches the zeroed destination while
 *   WATCH_ROUNDS such unwraps of 4093 bytes run through the queue.
 *
 * Exit: 0 passed, 1 failed.
 */
#include "fixture.h"

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

enum { KWP_MAX = 4096 };

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;

	for (size_t i = 0; i < n; i++)
		sscanf(h + 2 * i, "%2hhx", &out[i]);
	return n;
}

/* The tag length of an n-byte wrap: 8 and the padding. */
static unsigned tag_for(size_t n)
{
	return 8 + (unsigned)((8 - n % 8) % 8);
}

/* RFC 5649 section 6. */
static const struct {
	const char *kek, *data, *wrapped;
} rfc5649[] = {
	{ "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8",
	  "c37b7e6492584340bed12207808941155068f738",
	  "138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a" },
	{ "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8", "466f7250617369",
	  "afbeb0f07dfbf5419200f2ccb50bb24f" },
};

static uint32_t session(struct cc_conn *conn, const char *engine,
			const uint8_t *kek, unsigned kek_len, unsigned tag_len,
			int *err)
{
	struct cc_session_params sp = { .alg = CC_ALG_AES_KWP,
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

	snprintf(name, sizeof(name), "AES-%u-WRAP-PAD", kek_len * 8);
	c = EVP_CIPHER_fetch(NULL, name, NULL);
	if (!ctx || !c || !EVP_CipherInit_ex2(ctx, c, kek, NULL, enc, NULL) ||
	    EVP_CipherUpdate(ctx, out, &n, in, len) <= 0)
		n = -1;
	EVP_CIPHER_free(c);
	EVP_CIPHER_CTX_free(ctx);
	return n;
}

static int all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return !acc;
}

static void run_rfc(struct cc_conn *conn, const char *eng)
{
	for (size_t i = 0; i < sizeof(rfc5649) / sizeof(rfc5649[0]); i++) {
		uint8_t kek[24], data[24], want[32], ct[24], tag[16], pt[24];
		unsigned kl = (unsigned)unhex(rfc5649[i].kek, kek);
		size_t n = unhex(rfc5649[i].data, data);
		size_t wl = unhex(rfc5649[i].wrapped, want);
		unsigned tl = tag_for(n);
		int err;

		CHECK(tl + n == wl, "[%s] vector %zu: %u + %zu is not %zu", eng,
		      i + 1, tl, n, wl);
		uint32_t sid = session(conn, eng, kek, kl, tl, &err);
		CHECK(sid, "[%s] RFC 5649 vector %zu: session: %s", eng, i + 1,
		      cc_strerror(err));
		if (!sid)
			continue;
		err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data,
			       ct, n, tag);
		CHECK(!err && !memcmp(tag, want, tl) &&
			      !memcmp(ct, want + tl, n),
		      "[%s] RFC 5649 vector %zu (%zu bytes) wrap: %s", eng,
		      i + 1, n, cc_strerror(err));
		memset(pt, 0xaa, sizeof(pt));
		err = fx_crypt(conn, sid, CC_DECRYPT, NULL, 0, NULL, 0,
			       want + tl, pt, n, want);
		CHECK(!err && !memcmp(pt, data, n),
		      "[%s] RFC 5649 vector %zu unwrap: %s", eng, i + 1,
		      cc_strerror(err));
		/* and OpenSSL agrees with the RFC */
		uint8_t ref[32];
		CHECK(ref_wrap(1, kek, kl, data, (int)n, ref) == (int)wl &&
			      !memcmp(ref, want, wl),
		      "OpenSSL's wrap of RFC 5649 vector %zu differs", i + 1);
		cc_session_destroy(conn, sid);
	}
}

static void run_openssl(struct cc_conn *conn, const char *eng)
{
	static uint8_t data[KWP_MAX], ct[KWP_MAX], pt[KWP_MAX],
		ref[KWP_MAX + 16];
	static const unsigned kls[] = { 16, 24, 32 };

	for (unsigned round = 0; round < 60; round++) {
		uint8_t kek[32], tag[16];
		unsigned kl = kls[round % 3], r;
		int err;

		if (getrandom(kek, sizeof(kek), 0) != sizeof(kek) ||
		    getrandom(&r, sizeof(r), 0) != sizeof(r) ||
		    getrandom(data, sizeof(data), 0) != sizeof(data))
			abort();
		/* 1..33 bytes (every padding, the one-block case), the
		 * bound and below it, then at random */
		size_t n = round < 33	? round + 1
			   : round < 36 ? KWP_MAX
			   : round < 39 ? KWP_MAX - 1
					: 1 + r % KWP_MAX;
		unsigned tl = tag_for(n);
		uint32_t sid = session(conn, eng, kek, kl, tl, &err);
		CHECK(sid, "[%s] session (tag %u): %s", eng, tl,
		      cc_strerror(err));
		if (!sid)
			continue;
		err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data,
			       ct, n, tag);
		int m = ref_wrap(1, kek, kl, data, (int)n, ref);
		CHECK(!err && m == (int)(tl + n) && !memcmp(ref, tag, tl) &&
			      !memcmp(ref + tl, ct, n),
		      "[%s] wrap of %zu bytes under a %u-byte KEK differs "
		      "from OpenSSL's (%s)",
		      eng, n, kl, cc_strerror(err));
		/* OpenSSL unwraps ours, we unwrap OpenSSL's */
		memcpy(ref, tag, tl);
		memcpy(ref + tl, ct, n);
		m = ref_wrap(0, kek, kl, ref, (int)(tl + n), pt);
		CHECK(m == (int)n && !memcmp(pt, data, n),
		      "[%s] OpenSSL cannot unwrap our %zu bytes", eng, n);
		memset(pt, 0xaa, n);
		err = fx_crypt(conn, sid, CC_DECRYPT, NULL, 0, NULL, 0, ct, pt,
			       n, tag);
		CHECK(!err && !memcmp(pt, data, n),
		      "[%s] unwrap of %zu bytes: %s", eng, n, cc_strerror(err));
		cc_session_destroy(conn, sid);
	}
}

static void run_negative(struct cc_conn *conn, const char *eng)
{
	uint8_t kek[32] = { 1 }, other[16] = { 2 }, data[KWP_MAX + 8] = { 3 };
	uint8_t ct[KWP_MAX + 8], pt[KWP_MAX + 8], tag[16], iv[16] = { 0 };
	int err;
	/* tag 12: lengths of 4 mod 8 */
	uint32_t sid = session(conn, eng, kek, 16, 12, &err);

	CHECK(sid, "[%s] session: %s", eng, cc_strerror(err));
	if (!sid)
		return;
	/* lengths: none, past the bound, not 4 mod 8 (the tag's) */
	static const size_t bad[] = { 0, KWP_MAX + 4, 8, 16, 21, 23 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data,
			       ct, bad[i], tag);
		CHECK(err == CC_ERR_BAD_PARAM,
		      "[%s] wrap of %zu bytes with a 12-byte tag: want "
		      "refused, got %s",
		      eng, bad[i], cc_strerror(err));
	}
	err = fx_crypt(conn, sid, CC_ENCRYPT, iv, 16, NULL, 0, data, ct, 20,
		       tag);
	CHECK(err == CC_ERR_BAD_PARAM, "[%s] an IV: want refused, got %s", eng,
	      cc_strerror(err));
	/* the largest length for this tag is fine */
	err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data, ct,
		       KWP_MAX - 4, tag);
	CHECK(!err, "[%s] wrap of %d bytes: %s", eng, KWP_MAX - 4,
	      cc_strerror(err));

	/* a tampered tag, a tampered body, the wrong KEK */
	err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data, ct, 20,
		       tag);
	CHECK(!err, "[%s] wrap: %s", eng, cc_strerror(err));
	for (int t = 0; t < 2; t++) {
		uint8_t *b = t ? ct + 13 : tag + 10;

		*b ^= 0x40;
		memset(pt, 0xaa, 20);
		err = fx_crypt(conn, sid, CC_DECRYPT, NULL, 0, NULL, 0, ct, pt,
			       20, tag);
		CHECK(err == CC_ERR_AUTH_FAILED && all_zero(pt, 20),
		      "[%s] unwrap of a tampered %s: want auth failure and "
		      "zeroes, got %s",
		      eng, t ? "body" : "tag", cc_strerror(err));
		*b ^= 0x40;
	}
	uint32_t wrong = session(conn, eng, other, 16, 12, &err);
	CHECK(wrong, "[%s] session: %s", eng, cc_strerror(err));
	if (wrong) {
		memset(pt, 0xaa, 20);
		err = fx_crypt(conn, wrong, CC_DECRYPT, NULL, 0, NULL, 0, ct,
			       pt, 20, tag);
		CHECK(err == CC_ERR_AUTH_FAILED && all_zero(pt, 20),
		      "[%s] unwrap under the wrong KEK: got %s", eng,
		      cc_strerror(err));
		cc_session_destroy(conn, wrong);
	}
	/* the same 32 bytes unwrapped as 19 (tag 13): its MLI says 20 */
	uint32_t as19 = session(conn, eng, kek, 16, 13, &err);
	CHECK(as19, "[%s] session: %s", eng, cc_strerror(err));
	if (as19) {
		uint8_t blob[32];
		memcpy(blob, tag, 12);
		memcpy(blob + 12, ct, 20);
		memset(pt, 0xaa, 19);
		err = fx_crypt(conn, as19, CC_DECRYPT, NULL, 0, NULL, 0,
			       blob + 13, pt, 19, blob);
		CHECK(err == CC_ERR_AUTH_FAILED && all_zero(pt, 19),
		      "[%s] a 20-byte wrap unwrapped as 19 bytes: got %s", eng,
		      cc_strerror(err));
		cc_session_destroy(conn, as19);
	}
	cc_session_destroy(conn, sid);
	/* tags: 8 to 15 */
	CHECK(!session(conn, eng, kek, 16, 7, &err) && err,
	      "[%s] a 7-byte tag: want refused", eng);
	CHECK(!session(conn, eng, kek, 16, 16, &err) && err,
	      "[%s] a 16-byte tag: want refused", eng);
	CHECK(!session(conn, eng, kek, 20, 8, &err) && err,
	      "[%s] a 20-byte KEK: want refused", eng);
}

enum { WATCH_ROUNDS = 300, WATCH_LEN = KWP_MAX - 3 };

struct watch {
	const volatile uint8_t *dst;
	atomic_int stop, seen;
};

static void *watch_dst(void *arg)
{
	struct watch *wt = arg;
	while (!atomic_load(&wt->stop))
		for (size_t i = 0; i < WATCH_LEN; i += 8)
			if (wt->dst[i]) {
				atomic_store(&wt->seen, 1);
				return NULL;
			}
	return NULL;
}

/* Unwraps under the wrong KEK: their output, raw AES decryptions under
 * it, must never show in the arena. */
static void run_wrong_kek_watched(struct cc_conn *conn, struct cc_queue *q,
				  const char *eng)
{
	uint8_t kek[16] = { 7 }, other[16] = { 8 }, data[WATCH_LEN];
	unsigned tl = tag_for(WATCH_LEN);
	int err;
	uint32_t sid = session(conn, eng, kek, 16, tl, &err);
	uint32_t wrong = session(conn, eng, other, 16, tl, &err);

	CHECK(sid && wrong, "[%s] sessions: %s", eng, cc_strerror(err));
	uint8_t *src = cc_buf_alloc(q, WATCH_LEN);
	uint8_t *dst = cc_buf_alloc(q, WATCH_LEN);
	uint8_t *tag = cc_buf_alloc(q, 64);
	CHECK(src && dst && tag, "[%s] arena", eng);
	if (!sid || !wrong || !src || !dst || !tag)
		goto out;
	memset(data, 0x5c, sizeof(data));
	err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data, src,
		       WATCH_LEN, tag);
	CHECK(!err, "[%s] wrap: %s", eng, cc_strerror(err));
	memset(dst, 0, WATCH_LEN);
	struct watch wt = { .dst = dst };
	pthread_t th;
	if (pthread_create(&th, NULL, watch_dst, &wt)) {
		CHECK(0, "[%s] pthread_create", eng);
		goto out;
	}
	int bad = 0;
	for (int r = 0; r < WATCH_ROUNDS && !bad; r++) {
		struct cc_op op = { .user_data = (uint64_t)r,
				    .session = wrong,
				    .dir = CC_DECRYPT,
				    .src = src,
				    .dst = dst,
				    .len = WATCH_LEN,
				    .tag = tag };
		struct cc_completion c;
		err = fx_run_burst(q, &op, 1, &c, 30000);
		if (err || c.status != CC_ERR_AUTH_FAILED) {
			CHECK(0, "[%s] wrong-KEK unwrap %d: %s, status %s", eng,
			      r, cc_strerror(err), cc_strerror(c.status));
			bad = 1;
		}
	}
	atomic_store(&wt.stop, 1);
	pthread_join(th, NULL);
	CHECK(!atomic_load(&wt.seen) && all_zero(dst, WATCH_LEN),
	      "[%s] a wrong KEK's unwrap showed in the arena", eng);
out:
	if (tag)
		cc_buf_free(q, tag);
	if (dst)
		cc_buf_free(q, dst);
	if (src)
		cc_buf_free(q, src);
	if (wrong)
		cc_session_destroy(conn, wrong);
	if (sid)
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
	if (fx_setup(&d, &dp, "test_keywrap_pad_op", &qp, &conn, &q))
		return FX_EXIT_FAIL;
	int n = fx_engines_for(conn, CC_ALG_AES_KWP, engines, 8);
	CHECK(n > 0, "no engine lists aes-kwp");
	for (int e = 0; e < n; e++) {
		int before = fails;

		run_rfc(conn, engines[e]);
		run_openssl(conn, engines[e]);
		run_negative(conn, engines[e]);
		run_wrong_kek_watched(conn, q, engines[e]);
		printf("aes-kwp [%s]: %s\n", engines[e],
		       fails == before ? "passed" : "FAILED");
	}
	if (fx_teardown(&d, conn, q))
		fails++;
	printf("TOTAL: %s\n", fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
