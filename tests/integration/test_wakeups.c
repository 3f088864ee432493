// SPDX-License-Identifier: MIT
/*
 * The completion doorbell's arms (ring_abi.h: client.karm, daemon.krung;
 * cc_wait_prepare(3)):
 *
 * - armed for every batch (cc_wait_prepare), the daemon rings once per
 *   post while the flag is set: N ops posted one at a time (each waited
 *   for by spinning on the ring, never on the fd) leave N bytes in the
 *   doorbell;
 * - armed once (cc_wait_prepare_once), the same N posts leave 1 byte;
 * - cc_wait_pending() says 1 while the arm is unanswered and while its
 *   byte is unread, 0 after the drain and cancel; re-arming after a drain
 *   rings again (one byte more);
 * - cc_queue_ready() says 1 exactly while a completion waits: 0 with
 *   nothing in flight, 1 once the op completed, 0 after its dequeue;
 * - the cq head the library lets lag (client-lib/queue.c,
 *   queue_cq_head_publish) never holds an op back: on a queue of 8 + 8
 *   entries, bursts of random counts submitted and completions taken a
 *   random few at a time, waited for only by spinning on the ring (no
 *   call that publishes the head before it sleeps), 20000 ops, all in
 *   order and OK; a head that does not reach the worker leaves its ops
 *   unclaimed, which hangs here (10 s) and fails (tried: a library that
 *   never publishes it fails so);
 * - no wake-up is lost: ops of random sizes submitted at random moments,
 *   each waited for in poll(2) on the fd, after arming once or, at
 *   random, without arming when cc_wait_pending() says the fd is or will
 *   be readable (as the provider's jobs do): 20000 ops, all completed,
 *   none waited for 10 s.
 *
 * Exit: 0 passed, 1 failed.
 */
#include "fixture.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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

/* Bytes waiting in the queue's doorbell (peeked, not read). */
static int bells(struct cc_queue *q)
{
	int n = -1;
	return ioctl(cc_queue_fd(q), FIONREAD, &n) < 0 ? -1 : n;
}

/* One null op of len bytes, waited for by spinning on the ring. */
static int one_op(struct cc_queue *q, uint32_t sid, uint8_t *buf, size_t len)
{
	struct cc_op op = { .user_data = 7,
			    .session = sid,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .dst = buf,
			    .len = (uint32_t)len };
	struct cc_completion c;
	uint64_t t0 = fx_now_ms();
	int n;

	if (cc_enqueue_burst(q, &op, 1) != 1)
		return -EAGAIN;
	while ((n = cc_dequeue_burst(q, &c, 1)) == 0)
		if (fx_now_ms() - t0 > 10000)
			return -ETIMEDOUT;
	return n == 1 ? c.status : n;
}

/* Keep a small queue full by bursts and drain it a few at a time,
 * spinning only: every op the tail shows must be claimable by the cq
 * head the worker sees. Returns 0, or -ETIMEDOUT / -errno. */
static int lagging_head(struct cc_conn *conn, uint32_t sid, unsigned total)
{
	struct cc_queue *q;
	struct cc_queue_params qp = { .sq_entries = 8,
				      .cq_entries = 8,
				      .arena_size = 64 << 10 };
	int err = cc_queue_open(conn, &qp, &q);
	if (err)
		return err;
	uint8_t *buf = cc_buf_alloc(q, 64);
	unsigned seed = 7, sent = 0, got = 0;
	uint64_t next = 0;
	err = buf ? 0 : -ENOMEM;
	while (!err && got < total) {
		struct cc_op ops[16];
		unsigned n = 1 + (unsigned)(rand_r(&seed) % 16);
		if (n > total - sent)
			n = total - sent;
		for (unsigned i = 0; i < n; i++)
			ops[i] = (struct cc_op){ .user_data = sent + i,
						 .session = sid,
						 .dir = CC_ENCRYPT,
						 .src = buf,
						 .dst = buf,
						 .len = 64 };
		int r = n ? cc_enqueue_burst(q, ops, n) : 0;
		if (r < 0) {
			err = r;
			break;
		}
		sent += (unsigned)r;
		/* Take a random few; spin while none came and ops are out. */
		struct cc_completion c[4];
		unsigned want = 1 + (unsigned)(rand_r(&seed) % 4);
		uint64_t t0 = fx_now_ms();
		int m;
		while ((m = cc_dequeue_burst(q, c, want)) == 0 &&
		       cc_in_flight(q))
			if (fx_now_ms() - t0 > 10000) {
				err = -ETIMEDOUT;
				break;
			}
		for (int i = 0; m > 0 && i < m; i++, next++) {
			if (c[i].user_data != next || c[i].status != CC_OK)
				err = -EPROTO;
		}
		if (m > 0)
			got += (unsigned)m;
		else if (m < 0)
			err = m;
	}
	cc_buf_free(q, buf);
	cc_queue_close(q);
	return err;
}

/* N posts one at a time under one arm: how many bytes they rang. */
static int posts_under_one_arm(struct cc_queue *q, uint32_t sid, uint8_t *buf,
			       int once, unsigned n)
{
	int r = once ? cc_wait_prepare_once(q) : cc_wait_prepare(q);
	CHECK(r == 0, "arm: %d", r);
	for (unsigned i = 0; i < n; i++) {
		int st = one_op(q, sid, buf, 64);
		CHECK(st == 0, "op %u: %d", i, st);
	}
	usleep(20000); /* a ring is sent after the tail is stored */
	int b = bells(q);
	cc_wait_cancel(q);
	return b;
}

struct waiter {
	struct cc_queue *q;
	uint32_t sid;
	uint8_t *buf;
	unsigned n;
	atomic_uint done;
	int err;
};

/* Submit ops of random sizes, at random moments, n in all; wait for
 * each in poll(2), never by spinning: a lost wake-up hangs here (poll's
 * 10 s) and fails. */
static void *submit_and_sleep(void *arg)
{
	struct waiter *w = arg;
	unsigned seed = 1;

	for (unsigned i = 0; i < w->n; i++) {
		uint32_t len = 1 + (uint32_t)(rand_r(&seed) % 8192);
		struct cc_op op = { .user_data = i,
				    .session = w->sid,
				    .dir = CC_ENCRYPT,
				    .src = w->buf,
				    .dst = w->buf,
				    .len = len };
		struct cc_completion c;
		if (cc_enqueue_burst(w->q, &op, 1) != 1) {
			w->err = -EAGAIN;
			return NULL;
		}
		if (rand_r(&seed) % 4 == 0)
			usleep(rand_r(&seed) % 50);
		for (;;) {
			struct pollfd p = { .fd = cc_queue_fd(w->q),
					    .events = POLLIN };
			if (cc_dequeue_burst(w->q, &c, 1) == 1)
				break;
			/* Pending: the fd is readable, or will be at the
			 * next completion, without an arm of our own. */
			if (cc_wait_pending(w->q) && rand_r(&seed) % 2) {
				if (poll(&p, 1, 10000) == 0) {
					w->err = -ETIMEDOUT;
					return NULL;
				}
				continue;
			}
			int r = cc_wait_prepare_once(w->q);
			if (r < 0) {
				w->err = r;
				return NULL;
			}
			if (r == 0 && poll(&p, 1, 10000) == 0) {
				w->err = -ETIMEDOUT;
				return NULL;
			}
		}
		if (c.status || c.user_data != i) {
			w->err = -EIO;
			return NULL;
		}
		atomic_fetch_add(&w->done, 1);
	}
	cc_wait_cancel(w->q);
	return NULL;
}

int main(void)
{
	struct fx_daemon d;
	struct cc_conn *conn;
	struct cc_queue *q;
	struct cc_queue_params qp = { 0 };
	uint32_t sid;

	if (fx_setup_null(&d, &(struct fx_daemon_params){ .workers = 2 },
			  "wakeups", &qp, &conn, &q, &sid))
		return FX_EXIT_FAIL;
	uint8_t *buf = cc_buf_alloc(q, 8192);
	CHECK(buf != NULL, "buffer");
	if (!buf)
		goto out;
	memset(buf, 0x5a, 8192);

	/* Every batch: one byte per post. */
	int b = posts_under_one_arm(q, sid, buf, 0, 5);
	CHECK(b == 5, "armed for every batch, 5 posts rang %d bytes", b);
	CHECK(cc_wait_prepare_once(q) == 0, "drain and arm once");
	CHECK(bells(q) == 0, "the drain left %d bytes", bells(q));
	cc_wait_cancel(q);

	/* Once: one byte for the same five posts. */
	b = posts_under_one_arm(q, sid, buf, 1, 5);
	CHECK(b == 1, "armed once, 5 posts rang %d bytes", b);

	/* What cc_wait_pending says along the way. */
	CHECK(cc_wait_pending(q) == 1, "an unread ring: pending");
	CHECK(cc_wait_prepare_once(q) == 0, "drain, then arm once");
	CHECK(bells(q) == 0, "drained");
	CHECK(cc_wait_pending(q) == 1, "armed, unanswered: pending");
	CHECK(one_op(q, sid, buf, 16) == 0, "op");
	usleep(20000);
	CHECK(bells(q) == 1, "the arm rang once: %d", bells(q));
	CHECK(cc_wait_pending(q) == 1, "answered, unread: pending");
	CHECK(one_op(q, sid, buf, 16) == 0, "op");
	usleep(20000);
	CHECK(bells(q) == 1, "no second ring for one arm: %d", bells(q));
	CHECK(cc_wait_prepare_once(q) == 0, "drain and re-arm");
	CHECK(one_op(q, sid, buf, 16) == 0, "op");
	usleep(20000);
	CHECK(bells(q) == 1, "the new arm rang: %d", bells(q));
	CHECK(cc_wait_prepare_once(q) == 0, "drain and arm");
	cc_wait_cancel(q);
	CHECK(cc_wait_pending(q) == 0, "cancelled, nothing unread");
	CHECK(one_op(q, sid, buf, 16) == 0, "op");
	usleep(20000);
	CHECK(bells(q) == 0, "no ring once cancelled: %d", bells(q));
	CHECK(cc_wait_pending(q) == 0, "still nothing pending");

	/* cc_queue_ready: 1 exactly while a completion waits. */
	CHECK(cc_queue_ready(q) == 0, "nothing in flight: not ready");
	struct cc_op op = { .user_data = 9,
			    .session = sid,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .dst = buf,
			    .len = 16 };
	CHECK(cc_enqueue_burst(q, &op, 1) == 1, "op");
	uint64_t t0 = fx_now_ms();
	while (!cc_queue_ready(q) && fx_now_ms() - t0 < 10000)
		;
	CHECK(cc_queue_ready(q) == 1, "its completion: ready");
	struct cc_completion c = { 0 };
	CHECK(cc_dequeue_burst(q, &c, 1) == 1 && c.user_data == 9,
	      "dequeued after ready");
	CHECK(cc_queue_ready(q) == 0, "dequeued: not ready");

	/* The lagging cq head holds nothing back. */
	int lr = lagging_head(conn, sid, 20000);
	CHECK(lr == 0, "a small queue kept full, spinning only: %d", lr);

	/* No lost wake-up. */
	struct waiter w = { .q = q, .sid = sid, .buf = buf, .n = 20000 };
	pthread_t t;
	CHECK(pthread_create(&t, NULL, submit_and_sleep, &w) == 0, "thread");
	pthread_join(t, NULL);
	CHECK(w.err == 0 && atomic_load(&w.done) == w.n,
	      "arm-once waits: %u of %u ops, error %d", atomic_load(&w.done),
	      w.n, w.err);

	cc_buf_free(q, buf);
out:
	cc_session_destroy(conn, sid);
	fx_teardown(&d, conn, q);
	if (fails)
		fprintf(stderr, "test_wakeups: %d checks failed\n", fails);
	else
		printf("test_wakeups: passed\n");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
