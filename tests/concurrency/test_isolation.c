/* SPDX-License-Identifier: MIT */
/*
 * Isolation between clients: a flooder keeps its ring full of 1 MiB ops,
 * a stuck client fills its completion ring and never reads it, and a
 * latency-sensitive client runs single 64-byte ops beside them. The
 * latency client must keep completing (no head-of-line blocking behind
 * either), the flooder must keep completing, and the stuck client must
 * find every completion, in order, once it reads. Three real processes.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

#define WINDOW_MS 3000
#define LAT_OPS_MIN 200 /* the latency client must do at least this many */
#define LAT_MAX_MS 2000 /* and no single op may take longer */

static const uint8_t key[16] = {
	7, 6, 5, 4, 3, 2, 1, 0, 9, 9, 9, 9, 1, 2, 3, 4
};
static const uint8_t iv[12] = { 1 };

static int open_client(const char *sock, const char *name, unsigned entries,
		       size_t arena, struct cc_conn **c, struct cc_queue **q,
		       uint32_t *sid)
{
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 16 };
	struct cc_queue_params qp = { .sq_entries = entries,
				      .arena_size = arena };
	int r = cc_connect(sock, name, c);
	if (!r)
		r = cc_session_create(*c, &sp, sid);
	if (!r)
		r = cc_queue_open(*c, &qp, q);
	return r;
}

/* Child: keep the ring full of 1 MiB encrypts for WINDOW_MS. */
static int flooder(const char *sock)
{
	struct cc_conn *c;
	struct cc_queue *q;
	uint32_t sid;
	if (open_client(sock, "flooder", 16, 40u << 20, &c, &q, &sid))
		return 2;
	struct cc_op ops[16];
	for (int i = 0; i < 16; i++) {
		uint8_t *b = cc_buf_alloc(q, (1u << 20) + 64);
		if (!b)
			return 3;
		ops[i] = (struct cc_op){ .session = sid,
					 .dir = CC_ENCRYPT,
					 .src = b,
					 .len = 1u << 20,
					 .tag = b + (1u << 20),
					 .iv = iv,
					 .iv_len = 12 };
	}
	uint64_t end = fx_now_ms() + WINDOW_MS, ud = 0, expect = 0;
	unsigned in_flight = 0, slot = 0;
	struct cc_completion comp[16];
	while (fx_now_ms() < end || in_flight) {
		while (fx_now_ms() < end && in_flight < 16) {
			ops[slot].user_data = ud;
			if (cc_enqueue_burst(q, &ops[slot], 1) != 1)
				break;
			ud++;
			slot = (slot + 1) % 16;
			in_flight++;
		}
		int n = cc_dequeue_burst(q, comp, 16);
		if (n < 0)
			return 4;
		if (n == 0 && cc_wait(q, 1000) < 0)
			return 5;
		for (int i = 0; i < n; i++)
			if (comp[i].user_data != expect++ || comp[i].status)
				return 6;
		in_flight -= (unsigned)n;
	}
	printf("flooder: %llu ops of 1 MiB\n", (unsigned long long)expect);
	cc_disconnect(c);
	return expect > 0 ? 0 : 7;
}

/* Child: fill the rings, read nothing for WINDOW_MS, then read it all. */
static int stuck(const char *sock)
{
	struct cc_conn *c;
	struct cc_queue *q;
	uint32_t sid;
	if (open_client(sock, "stuck", 64, 1u << 20, &c, &q, &sid))
		return 2;
	uint8_t *b = cc_buf_alloc(q, 128 * 128);
	uint64_t ud = 0;
	for (;;) { /* until the daemon stops taking: both rings full */
		struct cc_op op = { .user_data = ud,
				    .session = sid,
				    .dir = CC_ENCRYPT,
				    .src = b + (ud % 128) * 128,
				    .len = 64,
				    .tag = b + (ud % 128) * 128 + 64,
				    .iv = iv,
				    .iv_len = 12 };
		if (cc_enqueue_burst(q, &op, 1) == 1) {
			ud++;
			continue;
		}
		usleep(20000);
		if (cc_enqueue_burst(q, &op, 1) != 1)
			break;
		ud++;
	}
	usleep(WINDOW_MS * 1000);
	struct cc_completion comp[64];
	uint64_t expect = 0, deadline = fx_now_ms() + 10000;
	while (expect < ud && fx_now_ms() < deadline) {
		int n = cc_dequeue_burst(q, comp, 64);
		if (n < 0)
			return 4;
		if (n == 0)
			cc_wait(q, 100);
		for (int i = 0; i < n; i++)
			if (comp[i].user_data != expect++ || comp[i].status)
				return 6;
	}
	printf("stuck: %llu ops submitted, all completed in order after the "
	       "stall\n",
	       (unsigned long long)ud);
	cc_disconnect(c);
	return expect == ud ? 0 : 7;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	struct fx_daemon d;
	struct fx_daemon_params dp = { .workers = 2 };
	if (fx_daemon_start(&d, &dp))
		return FX_EXIT_FAIL;
	fflush(stdout);

	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			int rc = k == 0 ? flooder(d.sock) : stuck(d.sock);
			fflush(stdout);
			_exit(rc);
		}
	}
	usleep(200000); /* let them fill their rings */

	struct cc_conn *c;
	struct cc_queue *q;
	uint32_t sid;
	int fails = 0;
	if (open_client(d.sock, "latency", 8, 64u << 10, &c, &q, &sid)) {
		fprintf(stderr, "FAIL: latency client set-up\n");
		fails++;
	}
	static uint64_t lat_us[1 << 16];
	unsigned n_lat = 0;
	uint8_t *b = fails ? NULL : cc_buf_alloc(q, 128);
	uint64_t end = fx_now_ms() + WINDOW_MS - 400;
	while (!fails && fx_now_ms() < end && n_lat < (1 << 16)) {
		struct cc_op op = { .user_data = n_lat,
				    .session = sid,
				    .dir = CC_ENCRYPT,
				    .src = b,
				    .len = 64,
				    .tag = b + 64,
				    .iv = iv,
				    .iv_len = 12 };
		struct cc_completion comp;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int r = fx_run_burst(q, &op, 1, &comp, LAT_MAX_MS);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (r || comp.status) {
			fprintf(stderr, "FAIL: latency op %u: %s\n", n_lat,
				cc_strerror(r ? r : comp.status));
			fails++;
			break;
		}
		lat_us[n_lat++] = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000 +
				  (t1.tv_nsec - t0.tv_nsec) / 1000;
	}
	if (n_lat) {
		qsort(lat_us, n_lat, sizeof(lat_us[0]), cmp_u64);
		printf("latency client: %u ops of 64 B beside the others: p50 %llu us, p99 %llu us, max %llu us\n",
		       n_lat, (unsigned long long)lat_us[n_lat / 2],
		       (unsigned long long)lat_us[n_lat * 99 / 100],
		       (unsigned long long)lat_us[n_lat - 1]);
	}
	if (n_lat < LAT_OPS_MIN) {
		fprintf(stderr, "FAIL: latency client did only %u ops\n",
			n_lat);
		fails++;
	}
	if (!fails)
		cc_disconnect(c);

	for (int k = 0; k < 2; k++) {
		int st;
		if (waitpid(kids[k], &st, 0) != kids[k] || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			fprintf(stderr, "FAIL: %s child exited with %d\n",
				k ? "stuck" : "flooder",
				WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			fails++;
		}
	}
	if (fx_daemon_stop(&d))
		fails++;
	printf("%s\n", fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
