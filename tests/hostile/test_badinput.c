/* SPDX-License-Identifier: MIT */
/*
 * Bad input from clients, against a real daemon: malformed and oversized
 * control messages, stray fds, requests out of order, bad parameters,
 * descriptors written straight into the shared ring (out of the arena,
 * 32-bit wrap, unknown and foreign sessions, bad opcodes, lying ring
 * indices), truncation of the region, and clients that die mid-batch.
 * Each case checks that the offender gets a clear error and the daemon
 * keeps serving everybody else with nothing leaked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <cryptod/ring_abi.h>

#include "fixture.h"
#include "rawclient.h"
#include "wire.h"

static struct fx_daemon daemon_;

static const uint8_t key128[16] = { 1, 2,  3,  4,  5,  6,  7,  8,
				    9, 10, 11, 12, 13, 14, 15, 16 };

static int daemon_fds(void)
{
	return rc_pid_fds(daemon_.pid);
}

static int daemon_queue_maps(void)
{
	return rc_pid_queue_maps(daemon_.pid);
}

/* The daemon's fd count once it is want (-1: once it stops moving): the
 * sockets of clients that went away may still be with its reaper. */
static int daemon_fds_settled(int want)
{
	int n = daemon_fds(), last = -2;
	for (int i = 0; i < 300 && n != want; i++) {
		if (want < 0 && n == last)
			break;
		last = n;
		usleep(10000);
		n = daemon_fds();
	}
	return n;
}

/* Poll stats until clients == want_clients (the daemon notices hang-ups
 * asynchronously). Fills *st. */
static void stats_settle(struct cc_conn *c, unsigned want_clients,
			 struct cc_stats *st)
{
	for (int i = 0; i < 500; i++) {
		assert_int_equal(cc_stats_get(c, st), 0);
		if (st->clients == want_clients)
			return;
		cc_stats_free(st);
		usleep(10000);
	}
	fail_msg("daemon still has %u clients, want %u", st->clients,
		 want_clients);
}

/* The daemon must still answer a full client round trip. */
static void daemon_serves(void)
{
	struct cc_conn *c;
	assert_int_equal(cc_connect(daemon_.sock, "probe", &c), 0);
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key128,
					.key_len = 16 };
	uint32_t sid;
	assert_int_equal(cc_session_create(c, &sp, &sid), 0);
	uint8_t iv[12] = { 0 }, buf[16] = { 0 }, tag[16];
	assert_int_equal(cc_crypt(c, sid, CC_ENCRYPT, iv, 12, NULL, 0, buf, buf,
				  sizeof(buf), tag),
			 0);
	cc_disconnect(c);
}

/* ---- tests ---- */

static void garbage_closes_only_that_connection(void **state)
{
	struct raw r;
	raw_connect(&r, daemon_.sock);
	uint8_t junk[64];
	memset(junk, 0xff, sizeof(junk)); /* not a valid protobuf */
	assert_int_equal(send(r.fd, junk, sizeof(junk), 0), sizeof(junk));
	assert_int_equal(raw_recv(&r, NULL, NULL), 0); /* hung up on */
	close(r.fd);
	daemon_serves();
}

static void oversized_closes_only_that_connection(void **state)
{
	struct raw r;
	raw_connect(&r, daemon_.sock);
	raw_hello(&r, CRD_ABI_VERSION);
	size_t len = CTL_MSG_MAX + 1;
	uint8_t *big = calloc(1, len);
	assert_non_null(big);
	int sndbuf = 4 << 20;
	setsockopt(r.fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	assert_int_equal(send(r.fd, big, len, 0), (ssize_t)len);
	free(big);
	assert_int_equal(raw_recv(&r, NULL, NULL), 0);
	close(r.fd);
	daemon_serves();
}

static void request_before_hello_and_bad_abi(void **state)
{
	struct raw r;
	raw_connect(&r, daemon_.sock);
	Cryptod__StatsRequest m = CRYPTOD__STATS_REQUEST__INIT;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_STATS_REQUEST;
	req.stats_request = &m;
	Cryptod__Envelope *rep = raw_call(&r, &req, NULL, NULL);
	assert_int_equal(rep->body_case, CRYPTOD__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code, -EPROTO);
	wire_free(rep);

	Cryptod__Hello h = CRYPTOD__HELLO__INIT;
	h.abi_version = CRD_ABI_VERSION + 7;
	req = (Cryptod__Envelope)CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_HELLO;
	req.hello = &h;
	rep = raw_call(&r, &req, NULL, NULL);
	assert_int_equal(rep->body_case, CRYPTOD__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code, -EPROTO);
	wire_free(rep);

	/* A reply-type message from a client is refused, not obeyed. */
	raw_hello(&r, CRD_ABI_VERSION);
	Cryptod__Ack a = CRYPTOD__ACK__INIT;
	req = (Cryptod__Envelope)CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_ACK;
	req.ack = &a;
	rep = raw_call(&r, &req, NULL, NULL);
	assert_int_equal(rep->body_case, CRYPTOD__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code, -EOPNOTSUPP);
	wire_free(rep);
	close(r.fd);
}

static void bad_session_parameters(void **state)
{
	struct raw r;
	raw_connect(&r, daemon_.sock);
	raw_hello(&r, CRD_ABI_VERSION);
	uint8_t k[64] = { 0 };
	assert_int_equal(
		raw_session(&r, CRYPTOD__ALGORITHM__ALG_AES_GCM, k, 17, NULL),
		-EINVAL);
	assert_int_equal(
		raw_session(&r, CRYPTOD__ALGORITHM__ALG_AES_GCM, k, 0, NULL),
		-EINVAL);
	assert_int_equal(
		raw_session(&r, CRYPTOD__ALGORITHM__ALG_AES_GCM, k, 64, NULL),
		-EINVAL);
	assert_int_equal(raw_session(&r, CRYPTOD__ALGORITHM__ALG_AES_GCM, k, 16,
				     "no-such-engine"),
			 -ENOENT);
	assert_int_equal(
		raw_session(&r, CRYPTOD__ALGORITHM__ALG_AES_GCM, k, 16, "null"),
		-EOPNOTSUPP);
	assert_int_equal(
		raw_session(&r, CRYPTOD__ALGORITHM__ALG_NULL, k, 16, NULL),
		-EINVAL);
	assert_int_equal(raw_session(&r, 99, k, 16, NULL), -EOPNOTSUPP);

	/* Unknown ids in destroy/close are errors for this client only. */
	Cryptod__DestroySession d = CRYPTOD__DESTROY_SESSION__INIT;
	d.session_id = 4242;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_DESTROY_SESSION;
	req.destroy_session = &d;
	Cryptod__Envelope *rep = raw_call(&r, &req, NULL, NULL);
	assert_int_equal(rep->body_case, CRYPTOD__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code, -ENOENT);
	wire_free(rep);

	Cryptod__CloseQueue cq = CRYPTOD__CLOSE_QUEUE__INIT;
	cq.queue_id = 4242;
	req = (Cryptod__Envelope)CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_CLOSE_QUEUE;
	req.close_queue = &cq;
	rep = raw_call(&r, &req, NULL, NULL);
	assert_int_equal(rep->body_case, CRYPTOD__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code, -ENOENT);
	wire_free(rep);

	/* Bad queue geometry. */
	Cryptod__OpenQueue oq = CRYPTOD__OPEN_QUEUE__INIT;
	oq.sq_entries = 100; /* not a power of two */
	req = (Cryptod__Envelope)CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_OPEN_QUEUE;
	req.open_queue = &oq;
	rep = raw_call(&r, &req, NULL, NULL);
	assert_int_equal(rep->body_case, CRYPTOD__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code, -EINVAL);
	wire_free(rep);
	oq.sq_entries = 64;
	oq.arena_size = 1ull << 40;
	rep = raw_call(&r, &req, NULL, NULL);
	assert_int_equal(rep->body_case, CRYPTOD__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code, -EINVAL);
	wire_free(rep);
	close(r.fd);
}

/*
 * A client attaches a descriptor to a request. Where the kernel can
 * (SO_PASSRIGHTS, Linux 6.16) the daemon's socket refuses it and the send
 * fails with EPERM; elsewhere the daemon hangs up on the client and hands
 * the fd to its reaper, which closes it off the control thread. Either
 * way the daemon does not keep it, and goes on serving.
 */
static void stray_fds_are_closed(void **state)
{
	struct raw r;
	raw_connect(&r, daemon_.sock);
	raw_hello(&r, CRD_ABI_VERSION);
	int p[2];
	assert_int_equal(pipe(p), 0);

	/* A stats request with our pipe's write end attached. */
	Cryptod__StatsRequest m = CRYPTOD__STATS_REQUEST__INIT;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.seq = ++r.seq;
	req.body_case = CRYPTOD__ENVELOPE__BODY_STATS_REQUEST;
	req.stats_request = &m;
	int err = wire_send(r.fd, &req, &p[1], 1);
	if (err == -EPERM) {
		printf("the kernel refuses fds on the daemon's socket\n");
		/* Nothing arrived: the same connection still works. */
		Cryptod__Envelope *rep = raw_call(&r, &req, NULL, NULL);
		assert_int_equal(rep->body_case,
				 CRYPTOD__ENVELOPE__BODY_STATS_REPLY);
		wire_free(rep);
	} else {
		assert_int_equal(err, 0);
		assert_int_equal(raw_recv(&r, NULL, NULL), 0); /* hung up */
	}
	close(p[1]);
	/* EOF only once every write end is closed, the daemon's included. */
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	assert_int_equal(poll(&pf, 1, 5000), 1);
	char c;
	assert_int_equal(read(p[0], &c, 1), 0);
	close(p[0]);
	close(r.fd);
	daemon_serves();
}

/* Break a valid descriptor in the way case i of descriptors_are_validated
 * expects (its want[] table lists the resulting statuses). */
static void sqe_break(struct crd_sqe *e, unsigned i, uint32_t arena,
		      int foreign)
{
	switch (i) {
	case 1: /* past the end of the arena */
		e->src_off = e->dst_off = arena - 32;
		break;
	case 2: /* off + len wraps in 32 bits */
		e->src_off = e->dst_off = 0xffffffc0u;
		break;
	case 3:
		e->tag_off = 0xfffffff8u;
		break;
	case 4:
		e->aad_off = 0xfffffff0u;
		e->aad_len = 0x20;
		break;
	case 5: /* longer than any op may be */
		e->len = 0xffffffffu;
		break;
	case 6: /* source and destination partly overlap */
		e->dst_off = e->src_off + 16;
		e->tag_off = e->src_off + 256;
		break;
	case 7:
		e->session = 999;
		break;
	case 8: /* the other client's id space is not ours */
		e->session = foreign;
		break;
	case 9:
		e->op = 7;
		break;
	case 10: /* every flag bit means something now: an arena IV's
		  * iv[] holding more than its offset */
		e->flags = CRD_SQE_F_ARENA_IV;
		e->iv[8] = 1;
		break;
	case 11:
		e->dst_nseg = 1;
		break;
	case 12: /* GCM takes IVs of 1..128 bytes, never none */
		e->iv_len = 0;
		break;
	case 13: /* inline, past the descriptor's 16 bytes */
		e->iv_len = 200;
		break;
	case 14: /* not the session's tag length */
		e->tag_len = 12;
		break;
	}
}

static void descriptors_are_validated(void **state)
{
	struct raw r, other;
	raw_connect(&r, daemon_.sock);
	raw_hello(&r, CRD_ABI_VERSION);
	raw_connect(&other, daemon_.sock);
	raw_hello(&other, CRD_ABI_VERSION);
	int sid = raw_session(&r, CRYPTOD__ALGORITHM__ALG_AES_GCM, key128, 16,
			      NULL);
	assert_true(sid > 0);
	/* Another client's second session: that id names nothing of ours,
	 * since ids are per connection. */
	int foreign = 0;
	for (int i = 0; i < 2; i++)
		foreign = raw_session(&other, CRYPTOD__ALGORITHM__ALG_AES_GCM,
				      key128, 16, NULL);
	assert_true(foreign > sid);

	struct rawq q;
	raw_open_queue(&r, &q);
	/* The region is sealed: we cannot shrink it under the daemon. */
	assert_int_equal(ftruncate(q.memfd, 4096), -1);
	assert_int_equal(errno, EPERM);
	int seals = fcntl(q.memfd, F_GET_SEALS);
	assert_true((seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) ==
		    (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL));

	static const int32_t want[] = {
		CRD_ST_OK,	  CRD_ST_BAD_RANGE,  CRD_ST_BAD_RANGE,
		CRD_ST_BAD_RANGE, CRD_ST_BAD_RANGE,  CRD_ST_BAD_PARAM,
		CRD_ST_BAD_RANGE, CRD_ST_NO_SESSION, CRD_ST_NO_SESSION,
		CRD_ST_BAD_DESC,  CRD_ST_BAD_DESC,   CRD_ST_BAD_DESC,
		CRD_ST_BAD_PARAM, CRD_ST_BAD_PARAM,  CRD_ST_BAD_PARAM,
		CRD_ST_OK,
	};
	unsigned n = sizeof(want) / sizeof(want[0]);
	for (unsigned i = 0; i < n; i++) {
		struct crd_sqe *e = rawq_sqe(&q, i);
		sqe_valid(e, sid, 4096 * i, 1000 + i);
		sqe_break(e, i, (uint32_t)q.arena_size, foreign);
	}
	rawq_submit(&q, n);
	struct crd_cqe c[sizeof(want) / sizeof(want[0])];
	rawq_reap(&q, c, n);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(c[i].user_data, 1000 + i); /* in order */
		if (c[i].status != want[i])
			fail_msg("case %u: status %d, want %d", i, c[i].status,
				 want[i]);
	}

	/* A lying tail (more than a ring's worth) stops this queue only. */
	__atomic_store_n(&q.hdr->ksq_tail.k, q.tail + 10 * q.sq_entries,
			 __ATOMIC_RELEASE);
	uint64_t one = 1;
	assert_int_equal(write(q.sq_efd, &one, 8), 8);
	int dead = 0;
	for (int i = 0; i < 500 && !dead; i++, usleep(2000))
		dead = __atomic_load_n(&q.hdr->daemon.kflags,
				       __ATOMIC_ACQUIRE) &
		       CRD_F_DEAD;
	assert_true(dead);
	daemon_serves();

	raw_close_queue(&q);
	close(r.fd);
	close(other.fd);
}

/* A child that sets up sessions and queues, submits batches, and is
 * SIGKILLed at a point chosen by 'where': during set-up (0-2) or after
 * where - 2 batches of 32 with nothing read back. */
static void child_dies_mid_batch(int where)
{
	struct cc_conn *c;
	if (cc_connect(daemon_.sock, "doomed", &c))
		_exit(2);
	if (where == 0)
		raise(SIGKILL);
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key128,
					.key_len = 16 };
	uint32_t sid = 0;
	for (int i = 0; i < 4; i++)
		if (cc_session_create(c, &sp, &sid))
			_exit(3);
	if (where == 1)
		raise(SIGKILL);
	struct cc_queue *q[2];
	struct cc_queue_params qp = { .sq_entries = 64,
				      .arena_size = 256 << 10 };
	for (int i = 0; i < 2; i++)
		if (cc_queue_open(c, &qp, &q[i]))
			_exit(4);
	if (where == 2)
		raise(SIGKILL);
	uint8_t iv[12] = { 0 };
	struct cc_op ops[2][32];
	for (int i = 0; i < 2; i++) {
		uint8_t *buf = cc_buf_alloc(q[i], 32 * 1024);
		for (int k = 0; k < 32; k++)
			ops[i][k] =
				(struct cc_op){ .session = sid,
						.dir = CC_ENCRYPT,
						.src = buf + k * 1024,
						.len = 1000,
						.tag = buf + k * 1024 + 1008,
						.iv = iv,
						.iv_len = 12 };
	}
	for (int b = 0; b < where - 2; b++)
		cc_enqueue_burst(q[b & 1], ops[b & 1], 32);
	raise(SIGKILL);
	_exit(5);
}

static void dead_clients_leave_nothing(void **state)
{
	struct cc_conn *c;
	assert_int_equal(cc_connect(daemon_.sock, "watcher", &c), 0);
	struct cc_stats st;
	stats_settle(c, 1, &st);
	unsigned base_sessions = st.sessions;
	cc_stats_free(&st);
	int base_fds = daemon_fds_settled(-1), base_maps = daemon_queue_maps();
	assert_true(base_fds > 0);

	/* At least 1000 batches in all, dying at every point of a client's
	 * life, while the daemon keeps serving the watcher. */
	const int kids =
		getenv("KILL_CLIENTS") ? atoi(getenv("KILL_CLIENTS")) : 260;
	unsigned batches = 0;
	for (int i = 0; i < kids; i++) {
		int where = i % 13; /* 0-2: set-up; 3-12: 1-10 batches */
		batches += where > 2 ? where - 2 : 0;
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			child_dies_mid_batch(where);
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		if (i % 50 == 49)
			daemon_serves();
	}
	printf("%d clients killed with %u batches in flight in all\n", kids,
	       batches);
	stats_settle(c, 1, &st);
	assert_int_equal(st.sessions, base_sessions);
	assert_int_equal(st.n_queues, 0);
	cc_stats_free(&st);
	assert_int_equal(daemon_fds_settled(base_fds), base_fds);
	assert_int_equal(daemon_queue_maps(), base_maps);
	cc_disconnect(c);
	daemon_serves();
}

/* ---- double fetch: the client rewrites entries while the daemon reads ---- */

struct racer {
	struct rawq *q;
	volatile int stop;
	uint64_t flips;
};

/* Scribble over every submission slot and the segment-list area, as
 * fast as it can, while the daemon copies and validates them. The race
 * with our own submitting thread is the point: hidden from TSan. */
__attribute__((no_sanitize("thread"))) static void *racer_main(void *arg)
{
	struct racer *r = arg;
	uint64_t x = 0x2545f4914f6cdd1dull;
	uint8_t *lists = r->q->base + r->q->arena_off + 32768;
	while (!r->stop) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned slot = x % r->q->sq_entries;
		uint32_t *w = (uint32_t *)&r->q->sq[slot];
		w[2 + (x >> 32) % 12] ^= (uint32_t)(x >> 8); /* any field */
		((uint32_t *)lists)[(x >> 40) % 64] = (uint32_t)x;
		r->flips++;
	}
	return NULL;
}

static void double_fetch_race(void **state)
{
	struct raw r;
	raw_connect(&r, daemon_.sock);
	raw_hello(&r, CRD_ABI_VERSION);
	int sid = raw_session(&r, CRYPTOD__ALGORITHM__ALG_AES_GCM, key128, 16,
			      NULL);
	int nsid = raw_session(&r, CRYPTOD__ALGORITHM__ALG_NULL, NULL, 0, NULL);
	assert_true(sid > 0 && nsid > 0);
	struct rawq q;
	raw_open_queue(&r, &q);

	struct racer rc = { .q = &q };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, racer_main, &rc), 0);

	/* Good-looking descriptors, flat and scatter-gather, submitted in
	 * bursts; the racer turns many of them into garbage mid-read. */
	const unsigned total =
		getenv("RACE_OPS") ? atoi(getenv("RACE_OPS")) : 200000;
	unsigned done = 0, bad = 0;
	struct crd_cqe c[32];
	uint8_t *lists = q.base + q.arena_off + 32768;
	while (done < total) {
		for (unsigned i = 0; i < 32; i++) {
			struct crd_sqe *e = rawq_sqe(&q, i);
			sqe_valid(e, i & 1 ? sid : nsid, 256 * i, done + i);
			if (i % 4 == 3) { /* a two-segment source list */
				struct crd_seg seg[2] = {
					{ 256 * i, 32 }, { 256 * i + 128, 32 }
				};
				memcpy(lists + 16 * i, seg, sizeof(seg));
				e->flags =
					CRD_SQE_F_SRC_SGL | CRD_SQE_F_DST_SGL;
				e->src_off = e->dst_off = 32768 + 16 * i;
				e->src_nseg = e->dst_nseg = 2;
			}
		}
		rawq_submit(&q, 32);
		rawq_reap(&q, c, 32);
		for (unsigned i = 0; i < 32; i++) {
			switch (c[i].status) {
			case CRD_ST_OK:
			case CRD_ST_AUTH_FAILED:
			case CRD_ST_BAD_DESC:
			case CRD_ST_NO_SESSION:
			case CRD_ST_BAD_RANGE:
			case CRD_ST_BAD_PARAM:
			/* a flipped flag may make an entry a stream piece */
			case CRD_ST_NO_STREAM:
			case CRD_ST_STREAM_BUSY:
			case CRD_ST_STREAM_LIMIT:
			case -EOPNOTSUPP:
				break;
			default:
				fail_msg("undefined status %d", c[i].status);
			}
			bad += c[i].status != CRD_ST_OK;
		}
		done += 32;
	}
	rc.stop = 1;
	pthread_join(th, NULL);
	printf("double fetch: %u ops under %llu concurrent rewrites, %u refused\n",
	       done, (unsigned long long)rc.flips, bad);
	/* The queue may have been stopped for a lying index: either way
	 * the daemon serves everybody else. */
	daemon_serves();
	raw_close_queue(&q);
	close(r.fd);
}

static int group_setup(void **state)
{
	struct fx_daemon_params p = { .workers = 2 };
	return fx_daemon_start(&daemon_, &p) ? -1 : 0;
}

static int group_teardown(void **state)
{
	/* Exit status 0 after all of the above: nothing crashed it. */
	return fx_daemon_stop(&daemon_) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(garbage_closes_only_that_connection),
		cmocka_unit_test(oversized_closes_only_that_connection),
		cmocka_unit_test(request_before_hello_and_bad_abi),
		cmocka_unit_test(bad_session_parameters),
		cmocka_unit_test(stray_fds_are_closed),
		cmocka_unit_test(descriptors_are_validated),
		cmocka_unit_test(dead_clients_leave_nothing),
		cmocka_unit_test(double_fetch_race),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
