/* SPDX-License-Identifier: MIT */
/*
 * Stream state hygiene: a stream's state is key-derived (an HMAC stream
 * holds the keyed inner hash state), so it must not outlive the stream in
 * the daemon's memory: not after LAST, not after its session is
 * destroyed, not after its client disconnects.
 *
 * The needle is the inner SHA-256 state of HMAC-SHA-256 after the key's
 * ipad block and 960 bytes of message (15 whole blocks): no session holds
 * it, only the stream, and the test computes it with OpenSSL. While the
 * stream is open the scanner must find it (it sees the state); after each
 * ending, nowhere. The scanner is test_key_hygiene's (memscan.c says what
 * it reads: all application memory in every build; under TSan not the
 * runtime's shadow, which holds no program data).
 *
 * Each ending is checked on a stream of the default engine and on one of
 * the openssl engine (which keeps its HMAC state in the same plain
 * SHA256_CTX, openssl_stream.c).
 *
 * The openssl engine's GCM streams carry their own GHASH, so H = E_K(0)
 * is in the state (as two native 64-bit words of its big-endian halves)
 * and nowhere else in the daemon (its sessions keep the raw key only):
 * the same three endings on a GCM stream there, with H in that form as
 * the needle. H as E_K gives it must never be found, not even while the
 * stream is open: the engine wipes its copies and burns the stack (a
 * weak check of those: the piece's later frames overwrite most of what
 * a missing wipe would leave).
 *
 * LAST wipes the state before its completion is posted: that scan is
 * made once. A destroyed session's streams are wiped by a worker's next
 * pass over the queue, a client's by the hang-up: those scans are
 * repeated for up to CLEAN_MS until nothing is found, so a slow machine
 * waits longer instead of failing.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "fixture.h"
#include "memscan.h"

enum { MSG = 960, CLEAN_MS = 10000 };

static int fails;

/* The inner state after K ^ ipad and msg, as the daemon's SHA256_CTX
 * holds it (h[], native words). */
static void inner_state(const uint8_t key[32], const uint8_t *msg,
			uint8_t out[32])
{
	uint8_t blk[64] = { 0 };
	memcpy(blk, key, 32);
	for (int i = 0; i < 64; i++)
		blk[i] ^= 0x36;
	SHA256_CTX c;
	SHA256_Init(&c);
	SHA256_Update(&c, blk, 64);
	SHA256_Update(&c, msg, MSG);
	memcpy(out, c.h, 32);
	OPENSSL_cleanse(&c, sizeof(c));
	OPENSSL_cleanse(blk, sizeof(blk));
}

/* want_some: must be found now. Else: must be gone, at once (wait_ms 0)
 * or within wait_ms. */
static void expect_hits(pid_t pid, const uint8_t *needle, size_t len,
			int want_some, unsigned wait_ms, const char *when)
{
	struct memscan_needle nd = { .key = needle, .len = len };
	int r = wait_ms ? memscan_until_clean(pid, &nd, 1, wait_ms)
			: memscan(pid, &nd, 1);
	long n = r < 0 ? -1 : nd.hits;
	printf("%s: the stream's state found %ld times\n", when, n);
	if (n < 0 || (want_some ? n == 0 : n != 0)) {
		fprintf(stderr, "FAIL %s: %s\n", when,
			want_some ? "the scanner does not see the state"
				  : "stream state left in the daemon");
		fails++;
	}
}

/* Open an HMAC-SHA-256 stream on a new session on engine (NULL: the
 * default) and send FIRST with the message; *needle gets its state. */
static int open_stream(struct cc_conn *c, struct cc_queue *q, uint8_t *buf,
		       const char *engine, uint32_t *sid, uint32_t *h,
		       uint8_t needle[32])
{
	uint8_t key[32];
	RAND_bytes(key, sizeof(key));
	RAND_bytes(buf, MSG);
	struct cc_session_params sp = { .alg = CC_ALG_HMAC_SHA256,
					.key = key,
					.key_len = 32,
					.engine = engine };
	if (cc_session_create(c, &sp, sid) || cc_stream_handle_get(q, h))
		return -1;
	inner_state(key, buf, needle);
	OPENSSL_cleanse(key, sizeof(key));
	struct cc_op op = { .session = *sid,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .len = MSG,
			    .stream = *h,
			    .stream_flags = CC_STREAM_FIRST };
	struct cc_completion cp;
	if (fx_run_burst(q, &op, 1, &cp, 10000) || cp.status != CC_OK)
		return -1;
	return 0;
}

/* H = E_K(0) under an AES-128 key: raw, and as the openssl engine's GCM
 * stream state holds it (ghash.h: each 8-byte half a big-endian number,
 * stored as a native, little-endian, word). */
static void gcm_h(const uint8_t key[16], uint8_t raw[16], uint8_t held[16])
{
	static const uint8_t zero[16];
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int n = 0;
	if (!x || !EVP_EncryptInit_ex(x, EVP_aes_128_ecb(), NULL, key, NULL) ||
	    !EVP_EncryptUpdate(x, raw, &n, zero, 16))
		fails++;
	EVP_CIPHER_CTX_free(x);
	for (int i = 0; i < 16; i++)
		held[i] = raw[(i / 8) * 8 + 7 - i % 8];
}

/* Open a GCM stream on a new openssl session and send FIRST (12-byte IV,
 * AAD, data); needle gets H as the state holds it, raw as E_K gives it. */
static int open_gcm_stream(struct cc_conn *c, struct cc_queue *q, uint8_t *buf,
			   uint32_t *sid, uint32_t *h, uint8_t needle[16],
			   uint8_t raw[16])
{
	uint8_t key[16];
	RAND_bytes(key, sizeof(key));
	RAND_bytes(buf, MSG + 64);
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 16,
					.engine = "openssl" };
	if (cc_session_create(c, &sp, sid) || cc_stream_handle_get(q, h))
		return -1;
	gcm_h(key, raw, needle);
	OPENSSL_cleanse(key, sizeof(key));
	struct cc_op op = { .session = *sid,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .len = MSG - 7, /* a partial block in the state */
			    .iv = buf + MSG,
			    .iv_len = 12,
			    .aad = buf + MSG + 16,
			    .aad_len = 33,
			    .stream = *h,
			    .stream_flags = CC_STREAM_FIRST };
	struct cc_completion cp;
	if (fx_run_burst(q, &op, 1, &cp, 10000) || cp.status != CC_OK)
		return -1;
	return 0;
}

/* H raw must never be found; the state's form as want_some says. */
static void expect_h(pid_t pid, const uint8_t *held, const uint8_t *raw,
		     int want_some, unsigned wait_ms, const char *when)
{
	struct memscan_needle raw_nd = { .key = raw, .len = 16 };
	expect_hits(pid, held, 16, want_some, wait_ms, when);
	long n = memscan(pid, &raw_nd, 1) < 0 ? -1 : raw_nd.hits;
	printf("%s: H as E_K gives it found %ld times\n", when, n);
	if (n != 0) {
		fprintf(stderr, "FAIL %s: H left in the daemon\n", when);
		fails++;
	}
}

/* The three endings of an openssl GCM stream. */
static void gcm_endings(struct fx_daemon *d, struct cc_conn *c,
			struct cc_queue *q, uint8_t *buf)
{
	uint8_t needle[16], raw[16];
	uint32_t sid, h;
	struct cc_completion cp;
	printf("engine openssl, AES-GCM:\n");
	/* 1. Ended by LAST. */
	if (open_gcm_stream(c, q, buf, &sid, &h, needle, raw)) {
		fails++;
		return;
	}
	expect_h(d->pid, needle, raw, 1, 0, "GCM open");
	struct cc_op last = { .session = sid,
			      .dir = CC_ENCRYPT,
			      .src = buf,
			      .len = 7,
			      .tag = buf + MSG + 64,
			      .stream = h,
			      .stream_flags = CC_STREAM_LAST };
	if (fx_run_burst(q, &last, 1, &cp, 10000) || cp.status != CC_OK)
		fails++;
	cc_stream_handle_put(q, h);
	expect_h(d->pid, needle, raw, 0, 0, "GCM after LAST");
	(void)cc_session_destroy(c, sid);

	/* 2. Ended by its session's destruction. */
	if (open_gcm_stream(c, q, buf, &sid, &h, needle, raw)) {
		fails++;
		return;
	}
	expect_h(d->pid, needle, raw, 1, 0, "GCM open");
	if (cc_session_destroy(c, sid))
		fails++;
	expect_h(d->pid, needle, raw, 0, CLEAN_MS,
		 "GCM after its session was destroyed");
	cc_stream_handle_put(q, h);
}

int main(void)
{
	if (access("/proc/self/mem", R_OK))
		return FX_EXIT_SKIP;
	struct fx_daemon d;
	struct cc_conn *c;
	struct cc_queue *q;
	struct fx_daemon_params dp = { .workers = 2 };
	if (fx_setup(&d, &dp, "stream-hygiene", NULL, &c, &q) < 0)
		return FX_EXIT_FAIL;
	uint8_t *buf = cc_buf_alloc(q, 3 * MSG + 128), needle[32], needle2[32];
	uint32_t sid, h, sid2, h2;
	static const char *const engines[] = { NULL, "openssl" };
	if (!buf)
		return FX_EXIT_FAIL;

	for (int e = 0; e < 2; e++) {
		const char *eng = engines[e];
		printf("engine %s:\n", eng ? eng : "(default)");
		/* 1. Ended by LAST. */
		if (open_stream(c, q, buf, eng, &sid, &h, needle))
			return FX_EXIT_FAIL;
		expect_hits(d.pid, needle, 32, 1, 0, "open");
		struct cc_op last = { .session = sid,
				      .dir = CC_ENCRYPT,
				      .src = buf,
				      .len = 0,
				      .tag = buf + MSG,
				      .stream = h,
				      .stream_flags = CC_STREAM_LAST };
		struct cc_completion cp;
		if (fx_run_burst(q, &last, 1, &cp, 10000) || cp.status != CC_OK)
			fails++;
		cc_stream_handle_put(q, h);
		expect_hits(d.pid, needle, 32, 0, 0,
			    "after LAST (its session alive)");
		(void)cc_session_destroy(c, sid);

		/* 2. Ended by its session's destruction. */
		if (open_stream(c, q, buf, eng, &sid, &h, needle))
			return FX_EXIT_FAIL;
		expect_hits(d.pid, needle, 32, 1, 0, "open");
		if (cc_session_destroy(c, sid))
			fails++;
		/* the next poster's sweep */
		expect_hits(d.pid, needle, 32, 0, CLEAN_MS,
			    "after its session was destroyed");
		cc_stream_handle_put(q, h);
	}

	gcm_endings(&d, c, q, buf);

	/* 3. Ended by the client's disconnect: one stream of each. */
	uint8_t gcm_needle[16], gcm_raw[16];
	uint32_t sid3, h3;
	if (open_stream(c, q, buf, NULL, &sid, &h, needle) ||
	    open_stream(c, q, buf + MSG, "openssl", &sid2, &h2, needle2) ||
	    open_gcm_stream(c, q, buf + 2 * MSG, &sid3, &h3, gcm_needle,
			    gcm_raw))
		return FX_EXIT_FAIL;
	expect_hits(d.pid, needle, 32, 1, 0, "open");
	expect_hits(d.pid, needle2, 32, 1, 0, "open (openssl)");
	expect_h(d.pid, gcm_needle, gcm_raw, 1, 0, "open (openssl GCM)");
	cc_queue_close(q);
	cc_disconnect(c);
	expect_hits(d.pid, needle, 32, 0, CLEAN_MS,
		    "after its client disconnected");
	expect_hits(d.pid, needle2, 32, 0, CLEAN_MS,
		    "after its client disconnected (openssl)");
	expect_h(d.pid, gcm_needle, gcm_raw, 0, CLEAN_MS,
		 "after its client disconnected (openssl GCM)");

	if (fx_daemon_stop(&d))
		fails++;
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
