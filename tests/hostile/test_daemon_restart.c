/* SPDX-License-Identifier: MIT */
/*
 * The daemon SIGKILLed under load and restarted on the same socket:
 * ops in flight end with a clear error (-EPIPE from cc_wait, cc_crypt
 * and control calls), the client reconnects to the new daemon and goes
 * on, and no completion it ever receives is wrong: every one is checked
 * against OpenSSL.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "fixture.h"

#define RESTARTS 6
#define BURST 32
#define LEN 1024

static const uint8_t key[16] = { 0xc0, 0xff, 0xee, 1, 2,  3,  4,  5,
				 6,    7,    8,	   9, 10, 11, 12, 13 };

struct client {
	struct cc_conn *c;
	struct cc_queue *q;
	uint32_t sid;
	uint8_t *buf; /* BURST * 2 slots of LEN + 16 */
};

static int client_open(struct client *k, const char *sock)
{
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 16 };
	struct cc_queue_params qp = { .sq_entries = 2 * BURST,
				      .arena_size = 1 << 20 };
	int r = cc_connect(sock, "restart", &k->c);
	if (!r)
		r = cc_session_create(k->c, &sp, &k->sid);
	if (!r)
		r = cc_queue_open(k->c, &qp, &k->q);
	if (!r && !(k->buf = cc_buf_alloc(k->q, 2 * BURST * (LEN + 16))))
		r = -ENOMEM;
	return r;
}

/* Data and IV of op number n, so any completion can be checked. */
static void fill(uint8_t *p, uint8_t iv[12], uint64_t n)
{
	memset(iv, 0, 12);
	memcpy(iv, &n, sizeof(n));
	for (int i = 0; i < LEN; i++)
		p[i] = (uint8_t)(n * 31 + i);
}

static int check(const uint8_t *ct, const uint8_t *tag, uint64_t n)
{
	uint8_t pt[LEN], ref[LEN], rtag[16], iv[12];
	int l;
	fill(pt, iv, n);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	EVP_EncryptInit_ex(x, EVP_aes_128_gcm(), NULL, key, iv);
	EVP_EncryptUpdate(x, ref, &l, pt, LEN);
	EVP_EncryptFinal_ex(x, ref + l, &l);
	EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, rtag);
	EVP_CIPHER_CTX_free(x);
	return memcmp(ct, ref, LEN) || memcmp(tag, rtag, 16);
}

int main(void)
{
	struct fx_daemon d;
	struct fx_daemon_params dp = { .workers = 2 };
	int fails = 0;
	unsigned long good = 0, lost = 0;
	uint64_t n = 0;
	if (fx_daemon_start(&d, &dp))
		return FX_EXIT_FAIL;

	for (int round = 0; round <= RESTARTS && !fails; round++) {
		struct client k;
		if (client_open(&k, d.sock)) {
			fprintf(stderr, "FAIL: reconnect after restart %d\n",
				round);
			fails++;
			break;
		}
		/* Bursts through a live daemon, one half of the slots each. */
		uint8_t ivs[2 * BURST][12];
		uint64_t ids[2 * BURST];
		for (int b = 0; b < 20 + round; b++) {
			struct cc_op ops[BURST];
			int half = b & 1;
			for (int i = 0; i < BURST; i++) {
				int s = half * BURST + i;
				uint8_t *p = k.buf + s * (LEN + 16);
				ids[s] = n;
				fill(p, ivs[s], n++);
				ops[i] = (struct cc_op){ .user_data = ids[s],
							 .session = k.sid,
							 .dir = CC_ENCRYPT,
							 .src = p,
							 .len = LEN,
							 .tag = p + LEN,
							 .iv = ivs[s],
							 .iv_len = 12 };
			}
			/* The last burst of a round meets the crash. */
			int crash = round < RESTARTS && b == 19 + round;
			int r = cc_enqueue_burst(k.q, ops, BURST);
			if (r != BURST) {
				fprintf(stderr, "FAIL: enqueue: %d\n", r);
				fails++;
				break;
			}
			if (crash && fx_daemon_restart(&d, &dp)) {
				fprintf(stderr, "FAIL: restart\n");
				fails++;
				break;
			}
			struct cc_completion c[BURST];
			int got = 0;
			while (got < BURST) {
				int m = cc_dequeue_burst(k.q, c + got,
							 BURST - got);
				if (m > 0) {
					got += m;
					continue;
				}
				int w = cc_wait(k.q, 5000);
				if (w == 1)
					continue;
				if (crash && w == -EPIPE)
					break; /* the clear error we expect */
				fprintf(stderr, "FAIL: wait: %s%s\n",
					cc_strerror(w),
					crash ? " (want EPIPE)" : "");
				fails++;
				break;
			}
			/* Whatever did complete must be right. */
			for (int i = 0; i < got; i++) {
				int s = half * BURST + i;
				uint8_t *p = k.buf + s * (LEN + 16);
				if (c[i].user_data != ids[s] || c[i].status ||
				    check(p, p + LEN, ids[s])) {
					fprintf(stderr,
						"FAIL: wrong completion for op %llu\n",
						(unsigned long long)ids[s]);
					fails++;
				}
				good++;
			}
			lost += BURST - got;
			if (crash) {
				/* The dead daemon's other paths fail clearly too. */
				uint8_t iv[12] = { 0 }, b2[16], t2[16];
				int r2 = cc_crypt(k.c, k.sid, CC_ENCRYPT, iv,
						  12, NULL, 0, b2, b2, 16, t2);
				struct cc_stats st;
				int r3 = cc_stats_get(k.c, &st);
				if (r2 != -EPIPE || r3 != -EPIPE) {
					fprintf(stderr,
						"FAIL: after the crash: cc_crypt %d, stats %d (want -EPIPE)\n",
						r2, r3);
					fails++;
				}
				break;
			}
		}
		cc_disconnect(k.c);
	}
	printf("%d restarts under load: %lu completions, all checked right; %lu ops ended by the crash with -EPIPE\n",
	       RESTARTS, good, lost);
	if (fx_daemon_stop(&d))
		fails++;
	printf("%s\n", fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
