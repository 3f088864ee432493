/* SPDX-License-Identifier: MIT */
/*
 * hold_queue: a client that keeps a queue open, so test_cryptoctl.sh can
 * see a row in 'cryptoctl stats'. It runs N null ops of LEN bytes on its
 * queue, reports USAGE (offloaded,fallbacks,inprocess: cc_report_usage)
 * when given, prints "ready" and holds the queue until stdin reaches EOF.
 *
 *   hold_queue SOCKET NAME N LEN [USAGE]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cryptoclient.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "hold_queue: %s: %s\n", what, cc_strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	struct cc_session_params sp = { .alg = CC_ALG_NULL };
	struct cc_completion cqe;
	struct cc_queue *q;
	struct cc_conn *conn;
	struct cc_op op;
	uint32_t sid;
	unsigned n, len, i;
	void *buf;
	int ret;

	if (argc != 5 && argc != 6)
		return 2;
	n = (unsigned)atoi(argv[3]);
	len = (unsigned)atoi(argv[4]);

	ret = cc_connect(argv[1], argv[2], &conn);
	if (ret < 0)
		return fail("connect", ret);
	ret = cc_session_create(conn, &sp, &sid);
	if (ret < 0)
		return fail("session", ret);
	ret = cc_queue_open(conn, NULL, &q);
	if (ret < 0)
		return fail("queue", ret);
	buf = cc_buf_alloc(q, len);
	if (!buf)
		return fail("buf", -12);
	memset(buf, 0x5a, len);

	for (i = 0; i < n; i++) {
		memset(&op, 0, sizeof(op));
		op.user_data = i;
		op.session = sid;
		op.dir = CC_ENCRYPT;
		op.src = buf;
		op.len = len;
		ret = cc_enqueue_burst(q, &op, 1);
		if (ret != 1)
			return fail("enqueue", ret < 0 ? ret : -11);
		while ((ret = cc_dequeue_burst(q, &cqe, 1)) == 0) {
			ret = cc_wait(q, 1000);
			if (ret < 0)
				return fail("wait", ret);
		}
		if (ret < 0)
			return fail("dequeue", ret);
		if (cqe.status != CC_OK || cqe.user_data != i)
			return fail("completion", cqe.status);
	}

	if (argc == 6) {
		struct cc_usage u;

		if (sscanf(argv[5], "%" SCNu64 ",%" SCNu64 ",%" SCNu64,
			   &u.offloaded, &u.fallbacks, &u.inprocess) != 3)
			return 2;
		ret = cc_report_usage(conn, &u);
		if (ret < 0)
			return fail("report", ret);
	}

	printf("ready\n");
	fflush(stdout);
	while (getchar() != EOF)
		;
	cc_queue_close(q);
	cc_session_destroy(conn, sid);
	cc_disconnect(conn);
	return 0;
}
