/* SPDX-License-Identifier: MIT */
#include "kw_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>

int fails;

size_t kw_unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;

	for (size_t i = 0; i < n; i++)
		sscanf(h + 2 * i, "%2hhx", &out[i]);
	return n;
}

int kw_all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return !acc;
}

uint32_t kw_session(const struct kw_alg *a, struct cc_conn *conn,
		    const char *engine, const uint8_t *kek, unsigned kek_len,
		    unsigned tag_len, int *err)
{
	struct cc_session_params sp = { .alg = a->alg,
					.key = kek,
					.key_len = kek_len,
					.tag_len = tag_len,
					.engine = engine };
	uint32_t sid = 0;

	*err = cc_session_create(conn, &sp, &sid);
	return *err ? 0 : sid;
}

int kw_ref(const struct kw_alg *a, int enc, const uint8_t *kek,
	   unsigned kek_len, const uint8_t *in, int len, uint8_t *out)
{
	char name[32];
	EVP_CIPHER *c;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = -1;

	snprintf(name, sizeof(name), "AES-%u-%s", kek_len * 8, a->ossl);
	c = EVP_CIPHER_fetch(NULL, name, NULL);
	if (!ctx || !c || !EVP_CipherInit_ex2(ctx, c, kek, NULL, enc, NULL) ||
	    EVP_CipherUpdate(ctx, out, &n, in, len) <= 0)
		n = -1;
	EVP_CIPHER_free(c);
	EVP_CIPHER_CTX_free(ctx);
	return n;
}

/* The published vectors: wrapped and unwrapped, and OpenSSL agrees. */
static void run_vectors(const struct kw_alg *a, struct cc_conn *conn,
			const char *eng)
{
	for (size_t i = 0; i < a->n_vectors; i++) {
		const struct kw_vector *v = &a->vectors[i];
		uint8_t kek[32], data[64], want[80], ct[64], tag[16], pt[64],
			ref[80];
		unsigned kl = (unsigned)kw_unhex(v->kek, kek);
		size_t n = kw_unhex(v->data, data);
		size_t wl = kw_unhex(v->wrapped, want);
		unsigned tl = a->tag_for(n);
		int err;

		CHECK(tl + n == wl, "[%s] %s vector %zu: %u + %zu is not %zu",
		      eng, a->name, i + 1, tl, n, wl);
		uint32_t sid = kw_session(a, conn, eng, kek, kl, tl, &err);
		CHECK(sid, "[%s] %s vector %zu: session: %s", eng, a->name,
		      i + 1, cc_strerror(err));
		if (!sid)
			continue;
		err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data,
			       ct, n, tag);
		CHECK(!err && !memcmp(tag, want, tl) &&
			      !memcmp(ct, want + tl, n),
		      "[%s] %s vector %zu (%zu bytes) wrap: %s", eng, a->name,
		      i + 1, n, cc_strerror(err));
		memset(pt, 0xaa, sizeof(pt));
		err = fx_crypt(conn, sid, CC_DECRYPT, NULL, 0, NULL, 0,
			       want + tl, pt, n, want);
		CHECK(!err && !memcmp(pt, data, n),
		      "[%s] %s vector %zu unwrap: %s", eng, a->name, i + 1,
		      cc_strerror(err));
		CHECK(kw_ref(a, 1, kek, kl, data, (int)n, ref) == (int)wl &&
			      !memcmp(ref, want, wl),
		      "OpenSSL's wrap of %s vector %zu differs", a->name,
		      i + 1);
		cc_session_destroy(conn, sid);
	}
}

/* Random KEKs and lengths: our wrap equals OpenSSL's; each unwraps the
 * other's. */
static void run_openssl(const struct kw_alg *a, struct cc_conn *conn,
			const char *eng)
{
	static uint8_t data[KW_DATA_MAX], ct[KW_DATA_MAX], pt[KW_DATA_MAX],
		ref[KW_DATA_MAX + 16];
	static const unsigned kls[] = { 16, 24, 32 };

	for (unsigned round = 0; round < a->rounds; round++) {
		uint8_t kek[32], tag[16];
		unsigned kl = kls[round % 3], r;
		int err;

		if (getrandom(kek, sizeof(kek), 0) != sizeof(kek) ||
		    getrandom(&r, sizeof(r), 0) != sizeof(r) ||
		    getrandom(data, sizeof(data), 0) != sizeof(data))
			abort();
		size_t n = a->length(round, r);
		unsigned tl = a->tag_for(n);
		uint32_t sid = kw_session(a, conn, eng, kek, kl, tl, &err);
		CHECK(sid, "[%s] session (tag %u): %s", eng, tl,
		      cc_strerror(err));
		if (!sid)
			continue;
		err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data,
			       ct, n, tag);
		int m = kw_ref(a, 1, kek, kl, data, (int)n, ref);
		CHECK(!err && m == (int)(tl + n) && !memcmp(ref, tag, tl) &&
			      !memcmp(ref + tl, ct, n),
		      "[%s] %s of %zu bytes under a %u-byte KEK differs "
		      "from OpenSSL's (%s)",
		      eng, a->name, n, kl, cc_strerror(err));
		memcpy(ref, tag, tl);
		memcpy(ref + tl, ct, n);
		m = kw_ref(a, 0, kek, kl, ref, (int)(tl + n), pt);
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

enum { WATCH_ROUNDS = 150 };

struct watch {
	const volatile uint8_t *dst;
	size_t len;
	atomic_int stop, seen;
};

static void *watch_dst(void *arg)
{
	struct watch *wt = arg;
	while (!atomic_load(&wt->stop))
		for (size_t i = 0; i < wt->len; i += 8)
			if (wt->dst[i]) {
				atomic_store(&wt->seen, 1);
				return NULL;
			}
	return NULL;
}

/*
 * Unwraps that fail only at their end, a tampered tag (wrong_kek 0) or
 * a wrong KEK (1): their output, raw AES decryptions under a KEK, must
 * never show in the shared arena, not even while they run (it did when
 * the engine unwrapped straight into it). A thread watches the zeroed
 * destination while WATCH_ROUNDS of them run through the queue.
 */
static void run_watched(const struct kw_alg *a, struct cc_conn *conn,
			struct cc_queue *q, const char *eng, int wrong_kek)
{
	const size_t len = a->watch_len;
	uint8_t kek[16] = { 7 }, other[16] = { 8 }, data[KW_DATA_MAX];
	unsigned tl = a->tag_for(len);
	int err;
	uint32_t sid = kw_session(a, conn, eng, kek, 16, tl, &err);
	uint32_t un =
		wrong_kek ? kw_session(a, conn, eng, other, 16, tl, &err) : sid;
	const char *what = wrong_kek ? "wrong-KEK" : "tampered";

	CHECK(sid && un, "[%s] sessions: %s", eng, cc_strerror(err));
	uint8_t *src = cc_buf_alloc(q, len);
	uint8_t *dst = cc_buf_alloc(q, len);
	uint8_t *tag = cc_buf_alloc(q, 64);
	CHECK(src && dst && tag, "[%s] arena", eng);
	if (!sid || !un || !src || !dst || !tag)
		goto out;
	memset(data, 0x5c, sizeof(data));
	err = fx_crypt(conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, data, src, len,
		       tag);
	CHECK(!err, "[%s] wrap: %s", eng, cc_strerror(err));
	if (!wrong_kek)
		tag[0] ^= 1; /* fails only at the end of the unwrap */
	memset(dst, 0, len);
	struct watch wt = { .dst = dst, .len = len };
	pthread_t th;
	if (pthread_create(&th, NULL, watch_dst, &wt)) {
		CHECK(0, "[%s] pthread_create", eng);
		goto out;
	}
	int bad = 0;
	for (int r = 0; r < WATCH_ROUNDS && !bad; r++) {
		struct cc_op op = { .user_data = (uint64_t)r,
				    .session = un,
				    .dir = CC_DECRYPT,
				    .src = src,
				    .dst = dst,
				    .len = (uint32_t)len,
				    .tag = tag };
		struct cc_completion c;
		err = fx_run_burst(q, &op, 1, &c, 30000);
		if (err || c.status != CC_ERR_AUTH_FAILED) {
			CHECK(0, "[%s] %s unwrap %d: %s, status %s", eng, what,
			      r, cc_strerror(err), cc_strerror(c.status));
			bad = 1;
		}
	}
	atomic_store(&wt.stop, 1);
	pthread_join(th, NULL);
	CHECK(!atomic_load(&wt.seen) && kw_all_zero(dst, len),
	      "[%s] a %s unwrap's output showed in the arena", eng, what);
out:
	if (tag)
		cc_buf_free(q, tag);
	if (dst)
		cc_buf_free(q, dst);
	if (src)
		cc_buf_free(q, src);
	if (un && un != sid)
		cc_session_destroy(conn, un);
	if (sid)
		cc_session_destroy(conn, sid);
}

int kw_main(const struct kw_alg *a, const char *prog)
{
	struct fx_daemon_params dp = { .workers = 1 };
	struct cc_queue_params qp = { .sq_entries = 64,
				      .arena_size = 1u << 20 };
	char engines[8][FX_ENGINE_NAME_MAX];
	struct cc_conn *conn;
	struct cc_queue *q;
	struct fx_daemon d;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (fx_setup(&d, &dp, prog, &qp, &conn, &q))
		return FX_EXIT_FAIL;
	int n = fx_engines_for(conn, a->alg, engines, 8);
	CHECK(n > 0, "no engine lists %s", a->name);
	for (int e = 0; e < n; e++) {
		int before = fails;

		run_vectors(a, conn, engines[e]);
		run_openssl(a, conn, engines[e]);
		a->negative(conn, engines[e]);
		run_watched(a, conn, q, engines[e], 0);
		run_watched(a, conn, q, engines[e], 1);
		printf("%s [%s]: %s\n", a->name, engines[e],
		       fails == before ? "passed" : "FAILED");
	}
	if (fx_teardown(&d, conn, q))
		fails++;
	printf("TOTAL: %s\n", fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
