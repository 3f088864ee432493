/* SPDX-License-Identifier: MIT */
/*
 * Ordering under parallelism: one queue served by four workers (more
 * than this machine's cores, so claims interleave and preempt), bursts of
 * mixed sizes from 16 B to 1 MiB, forged tags mixed in. Every completion
 * must come back in submission order with the right status; encrypt
 * results up to 4 KiB are checked against OpenSSL. Three submission
 * styles: bursts, coalesced single ops (cc_submit), and a callback
 * (cc_poll).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "fixture.h"

#define ROUNDS_DEFAULT 600
#define MAX_BURST 48
#define SLOT (1u << 20) /* largest op */
#define BIG_SLOTS 4
#define SMALL_SLOT 4096

struct t {
	struct cc_queue *q;
	uint32_t sid;
	uint8_t key[16];
	uint8_t *big[BIG_SLOTS]; /* arena */
	uint8_t *small[MAX_BURST];
	uint8_t *tag[MAX_BURST];
	uint64_t next_ud, expect_ud;
	unsigned long ops, forged, checked, failed;
	/* per op in flight, by position */
	struct want {
		int32_t status;
		uint32_t len;
		uint8_t *out, *tag;
		uint8_t ref_tag[16];
		int check;
	} want[MAX_BURST];
	unsigned nwant, got;
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fail(struct t *t, const char *what, unsigned i, long v)
{
	if (t->failed++ < 10)
		fprintf(stderr, "FAIL: %s (op %u of the burst: %ld)\n", what, i,
			v);
}

/* The size mix: mostly small, some medium, a few of 1 MiB. */
static uint32_t pick_len(void)
{
	uint64_t r = rnd() % 100;
	if (r < 60)
		return 16 + rnd() % 1024;
	if (r < 90)
		return 1024 + rnd() % (SMALL_SLOT - 1024 - 16);
	if (r < 97)
		return 64 * 1024 + rnd() % (192 * 1024);
	return SLOT;
}

static void ossl_gcm(const uint8_t *key, const uint8_t *iv, const uint8_t *in,
		     uint32_t len, uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l;
	EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, iv);
	EVP_EncryptUpdate(c, out, &l, in, (int)len);
	EVP_EncryptFinal_ex(c, out + l, &l);
	EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(c);
}

static void on_completion(void *arg, const struct cc_completion *c);

static void check_one(struct t *t, unsigned i, const struct cc_completion *c)
{
	struct want *w = &t->want[i];
	if (c->user_data != t->expect_ud)
		fail(t, "completion out of order", i,
		     (long)(c->user_data - t->expect_ud));
	t->expect_ud++;
	if (c->status != w->status) {
		fail(t, "wrong status", i, c->status);
		return;
	}
	if (w->status == CC_ERR_AUTH_FAILED) {
		if (w->out[0] || w->out[w->len - 1])
			fail(t, "forged op left plaintext behind", i, w->len);
		return;
	}
	if (w->check) {
		t->checked++;
		if (memcmp(w->tag, w->ref_tag, 16))
			fail(t, "tag differs from OpenSSL", i, w->len);
	}
}

static void on_completion(void *arg, const struct cc_completion *c)
{
	struct t *t = arg;
	if (t->got < t->nwant)
		check_one(t, t->got, c);
	t->got++;
}

/* Build one burst of n ops in the arena; expectations in t->want. */
static void build(struct t *t, struct cc_op *ops, unsigned n, uint8_t *iv)
{
	unsigned big_used = 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = pick_len();
		uint8_t *buf;
		if (len > SMALL_SLOT - 16) {
			if (big_used == BIG_SLOTS)
				len = 1 + rnd() % (SMALL_SLOT - 16);
		}
		buf = len > SMALL_SLOT - 16 ? t->big[big_used++] : t->small[i];
		for (uint32_t k = 0; k < len; k += 64)
			buf[k] = (uint8_t)rnd();
		int forge = rnd() % 8 == 0;
		struct want *w = &t->want[i];
		w->len = len;
		w->out = buf;
		w->tag = t->tag[i];
		w->check = 0;
		ops[i] = (struct cc_op){
			.user_data = t->next_ud++,
			.session = t->sid,
			.dir = forge ? CC_DECRYPT : CC_ENCRYPT,
			.src = buf,
			.len = len,
			.tag = t->tag[i],
			.iv = iv,
			.iv_len = 12,
		};
		if (forge) {
			for (int k = 0; k < 16; k++)
				t->tag[i][k] = (uint8_t)rnd();
			w->status = CC_ERR_AUTH_FAILED;
			t->forged++;
		} else {
			w->status = CC_OK;
			if (len <= SMALL_SLOT - 16) {
				uint8_t tmp[SMALL_SLOT];
				ossl_gcm(t->key, iv, buf, len, tmp, w->ref_tag);
				w->check = 1;
			}
		}
	}
	t->nwant = n;
	t->got = 0;
	t->ops += n;
}

static int run_round(struct t *t, unsigned round)
{
	struct cc_op ops[MAX_BURST];
	struct cc_completion c[MAX_BURST];
	uint8_t iv[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, (uint8_t)round };
	unsigned n = 1 + rnd() % MAX_BURST;
	build(t, ops, n, iv);

	switch (round % 3) {
	case 0: { /* one burst */
		int r = fx_run_burst(t->q, ops, n, c, 30000);
		if (r) {
			fail(t, "burst did not complete", 0, r);
			return -1;
		}
		for (unsigned i = 0; i < n; i++)
			check_one(t, i, &c[i]);
		return 0;
	}
	case 1: /* coalesced single submissions, completions by callback */
	case 2:
		for (unsigned i = 0; i < n; i++) {
			int r;
			while ((r = cc_submit(t->q, &ops[i])) == -EAGAIN)
				cc_poll(t->q, MAX_BURST);
			if (r) {
				fail(t, "cc_submit", i, r);
				return -1;
			}
		}
		uint64_t deadline = fx_now_ms() + 30000;
		while (t->got < n) {
			int r = cc_poll(t->q, MAX_BURST);
			if (r < 0) {
				fail(t, "cc_poll", t->got, r);
				return -1;
			}
			if (r == 0 && cc_wait(t->q, 100) < 0)
				return -1;
			if (fx_now_ms() > deadline) {
				fail(t, "completions stopped coming", t->got,
				     n);
				return -1;
			}
		}
		return 0;
	}
	return 0;
}

int main(void)
{
	struct fx_daemon d;
	struct fx_daemon_params dp = { .workers = 4 };
	struct cc_conn *conn;
	struct t t = { 0 };
	unsigned rounds = ROUNDS_DEFAULT;
	const char *env = getenv("TEST_ROUNDS");
	if (env)
		rounds = (unsigned)strtoul(env, NULL, 10);
	env = getenv("TEST_SEED");
	if (env)
		rng = strtoull(env, NULL, 0) | 1;
	printf("seed 0x%llx, %u rounds, 4 workers\n", (unsigned long long)rng,
	       rounds);

	if (fx_daemon_start(&d, &dp))
		return FX_EXIT_FAIL;
	int r = cc_connect(d.sock, "test_order", &conn);
	if (r)
		goto out_stop;
	for (int i = 0; i < 16; i++)
		t.key[i] = (uint8_t)(i * 29 + 3);
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = t.key,
					.key_len = 16 };
	r = cc_session_create(conn, &sp, &t.sid);
	struct cc_queue_params qp = { .sq_entries = 64,
				      .arena_size = 8u << 20,
				      .coalesce = 8 };
	if (!r)
		r = cc_queue_open(conn, &qp, &t.q);
	if (r)
		goto out_conn;
	cc_set_callback(t.q, on_completion, &t);
	for (int i = 0; i < BIG_SLOTS; i++)
		t.big[i] = cc_buf_alloc(t.q, SLOT);
	for (int i = 0; i < MAX_BURST; i++) {
		t.small[i] = cc_buf_alloc(t.q, SMALL_SLOT);
		t.tag[i] = cc_buf_alloc(t.q, 64);
	}

	for (unsigned i = 0; i < rounds && !t.failed; i++)
		if (run_round(&t, i))
			break;

	struct cc_stats st;
	if (!cc_stats_get(conn, &st)) {
		for (unsigned i = 0; i < st.n_queues; i++) {
			printf("runs claimed by size:");
			for (int b = 0; b < 8; b++)
				printf(" %llu", (unsigned long long)st.queues[i]
							.batch_hist[b]);
			printf("\n");
		}
		cc_stats_free(&st);
	}
	printf("%lu ops (%lu forged, %lu checked against OpenSSL), %lu failed\n",
	       t.ops, t.forged, t.checked, t.failed);
	cc_queue_close(t.q);
out_conn:
	cc_disconnect(conn);
out_stop:
	if (fx_daemon_stop(&d))
		t.failed++;
	if (r) {
		fprintf(stderr, "FAIL: set-up: %s\n", cc_strerror(r));
		return FX_EXIT_FAIL;
	}
	printf("%s\n", t.failed ? "FAILED" : "PASSED");
	return t.failed ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
