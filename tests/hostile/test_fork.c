/* SPDX-License-Identifier: MIT */
/*
 * A child of fork() must not use its parent's connection: every call
 * on it fails with -ECHILD and nothing reaches the parent's socket or
 * rings, so the parent's connection, session and queue go on working
 * after the child has tried and disconnected. The child's own new
 * connection works.
 *
 * Exit 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

static int child(struct cc_conn *conn, struct cc_queue *q, uint32_t sid,
		 const char *sock)
{
	uint8_t key[16] = { 1 }, buf[64] = { 0 }, iv[16] = { 0 };
	struct cc_session_params sp = { .alg = CC_ALG_AES_CTR,
					.key = key,
					.key_len = sizeof(key) };
	uint32_t id;
	int bad = 0;
#define EXPECT_ECHILD(what, expr)                                              \
	do {                                                                   \
		int r_ = (expr);                                               \
		if (r_ != -ECHILD) {                                           \
			fprintf(stderr, "FAIL: child: %s gave %d\n", what,     \
				r_);                                           \
			bad = 1;                                               \
		}                                                              \
	} while (0)
	EXPECT_ECHILD("cc_session_create", cc_session_create(conn, &sp, &id));
	EXPECT_ECHILD("cc_session_destroy", cc_session_destroy(conn, sid));
	EXPECT_ECHILD("cc_crypt", cc_crypt(conn, sid, CC_ENCRYPT, iv, 16, NULL,
					   0, buf, buf, sizeof(buf), NULL));
	struct cc_op op = { .session = sid, .dir = CC_ENCRYPT };
	EXPECT_ECHILD("cc_enqueue_burst", cc_enqueue_burst(q, &op, 1));
	EXPECT_ECHILD("cc_submit", cc_submit(q, &op));
	struct cc_completion c;
	EXPECT_ECHILD("cc_dequeue_burst", cc_dequeue_burst(q, &c, 1));
	EXPECT_ECHILD("cc_wait", cc_wait(q, 0));
	EXPECT_ECHILD("cc_wait_prepare", cc_wait_prepare(q));
	/* Frees the child's copies only. */
	cc_queue_close(q);
	cc_disconnect(conn);
	/* Its own connection works. */
	struct cc_conn *own;
	if (cc_connect(sock, "fork-child", &own) ||
	    cc_session_create(own, &sp, &id) ||
	    cc_crypt(own, id, CC_ENCRYPT, iv, 16, NULL, 0, buf, buf,
		     sizeof(buf), NULL)) {
		fprintf(stderr, "FAIL: child: its own connection failed\n");
		bad = 1;
	}
	return bad;
}

int main(void)
{
	struct fx_daemon d;
	struct cc_conn *conn;
	struct cc_queue *q;
	if (fx_setup(&d, NULL, "fork-parent", NULL, &conn, &q))
		return FX_EXIT_FAIL;
	uint8_t key[16] = { 2 }, iv[16] = { 0 }, a[256], b[256];
	struct cc_session_params sp = { .alg = CC_ALG_AES_CTR,
					.key = key,
					.key_len = sizeof(key) };
	uint32_t sid;
	int fails = 0;
	memset(a, 7, sizeof(a));
	memcpy(b, a, sizeof(b));
	if (cc_session_create(conn, &sp, &sid) ||
	    fx_crypt(conn, sid, CC_ENCRYPT, iv, 16, NULL, 0, a, a, sizeof(a),
		     NULL)) {
		fprintf(stderr, "FAIL: parent: set-up\n");
		fx_teardown(&d, conn, q);
		return FX_EXIT_FAIL;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(child(conn, q, sid, d.sock));
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		fprintf(stderr, "FAIL: the child failed (status %#x)\n", st);
		fails++;
	}
	/* The parent's session, sync queue and own queue still work. */
	uint8_t *buf = cc_buf_alloc(q, sizeof(b));
	struct cc_op op = { .user_data = 1,
			    .session = sid,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .len = sizeof(b),
			    .iv = iv,
			    .iv_len = 16 };
	struct cc_completion c;
	if (buf)
		memcpy(buf, b, sizeof(b));
	if (!buf || fx_run_burst(q, &op, 1, &c, 10000) ||
	    c.status != CC_OK || memcmp(buf, a, sizeof(a))) {
		fprintf(stderr, "FAIL: parent: its queue failed after fork\n");
		fails++;
	}
	if (fx_crypt(conn, sid, CC_DECRYPT, iv, 16, NULL, 0, a, a, sizeof(a),
		     NULL) ||
	    memcmp(a, b, sizeof(a))) {
		fprintf(stderr,
			"FAIL: parent: its session failed after fork\n");
		fails++;
	}
	if (fx_teardown(&d, conn, q))
		fails++;
	if (fails)
		return FX_EXIT_FAIL;
	fprintf(stderr, "PASS\n");
	return FX_EXIT_PASS;
}
