/* SPDX-License-Identifier: MIT */
/*
 * Control-socket framing (proto/wire.c) over a real
 * socketpair(AF_UNIX, SOCK_SEQPACKET): envelopes round trip, descriptors
 * travel with SCM_RIGHTS and excess ones are closed, every size cap holds,
 * malformed bytes are refused, end of stream is reported.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cryptod/ring_abi.h>

#include "scm.h"
#include "wire.h"

struct pair {
	int a, b;
	uint8_t *buf; /* CTL_MSG_MAX bytes, as wire_recv wants */
};

static int pair_setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	int sv[2];

	if (!p)
		return -1;
	p->buf = malloc(CTL_MSG_MAX);
	if (!p->buf || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
		free(p->buf);
		free(p);
		return -1;
	}
	p->a = sv[0];
	p->b = sv[1];
	*state = p;
	return 0;
}

static int pair_teardown(void **state)
{
	struct pair *p = *state;

	if (p->a >= 0)
		close(p->a);
	if (p->b >= 0)
		close(p->b);
	free(p->buf);
	free(p);
	return 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Send env from a to b and decode it there; no fds expected. */
static Cryptod__Envelope *round_trip(struct pair *p,
				     const Cryptod__Envelope *env)
{
	int fds[CTL_MAX_FDS];
	unsigned nfds = 99;

	assert_int_equal(wire_send(p->a, env, NULL, 0), 0);
	ssize_t n = wire_recv(p->b, p->buf, fds, CTL_MAX_FDS, &nfds);
	assert_true(n >= 0);
	assert_int_equal((size_t)n, cryptod__envelope__get_packed_size(env));
	assert_int_equal(nfds, 0);
	Cryptod__Envelope *r = wire_decode(p->buf, (size_t)n);
	assert_non_null(r);
	assert_int_equal(r->seq, env->seq);
	assert_int_equal(r->body_case, env->body_case);
	return r;
}

/* ---- Round trips ---- */

static void test_round_trip_hello(void **state)
{
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__Hello h = CRYPTOD__HELLO__INIT;

	h.abi_version = 1;
	h.client_name = "unit-test";
	env.seq = 1;
	env.body_case = CRYPTOD__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	Cryptod__Envelope *r = round_trip(*state, &env);
	assert_int_equal(r->hello->abi_version, 1);
	assert_string_equal(r->hello->client_name, "unit-test");
	wire_free(r);
}

static void test_round_trip_open_queue_reply(void **state)
{
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__OpenQueueReply m = CRYPTOD__OPEN_QUEUE_REPLY__INIT;

	m.queue_id = 77;
	m.sq_entries = 1024;
	m.cq_entries = 2048;
	m.region_size = (1ull << 30) + 86016;
	m.sq_off = 4096;
	m.cq_off = 69632;
	m.arena_off = 86016;
	m.arena_size = 1ull << 30;
	env.seq = 0xFFFFFFFFu;
	env.body_case = CRYPTOD__ENVELOPE__BODY_OPEN_QUEUE_REPLY;
	env.open_queue_reply = &m;
	Cryptod__Envelope *r = round_trip(*state, &env);
	const Cryptod__OpenQueueReply *g = r->open_queue_reply;
	assert_int_equal(g->queue_id, 77);
	assert_int_equal(g->sq_entries, 1024);
	assert_int_equal(g->cq_entries, 2048);
	assert_true(g->region_size == m.region_size);
	assert_true(g->sq_off == 4096 && g->cq_off == 69632);
	assert_true(g->arena_off == 86016 && g->arena_size == 1ull << 30);
	wire_free(r);
}

static void test_round_trip_create_session(void **state)
{
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__CreateSession m = CRYPTOD__CREATE_SESSION__INIT;
	uint8_t key[32];

	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(i * 7 + 1);
	m.alg = CRYPTOD__ALGORITHM__ALG_AES_GCM;
	m.key.data = key;
	m.key.len = sizeof(key);
	m.tag_len = 12;
	m.engine = "aesni";
	env.seq = 3;
	env.body_case = CRYPTOD__ENVELOPE__BODY_CREATE_SESSION;
	env.create_session = &m;
	Cryptod__Envelope *r = round_trip(*state, &env);
	assert_int_equal(r->create_session->alg,
			 CRYPTOD__ALGORITHM__ALG_AES_GCM);
	assert_int_equal(r->create_session->key.len, 32);
	assert_memory_equal(r->create_session->key.data, key, 32);
	assert_int_equal(r->create_session->tag_len, 12);
	assert_string_equal(r->create_session->engine, "aesni");
	wire_free(r);
}

static void test_round_trip_stats_reply(void **state)
{
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__StatsReply m = CRYPTOD__STATS_REPLY__INIT;
	Cryptod__EngineStats e0 = CRYPTOD__ENGINE_STATS__INIT;
	Cryptod__EngineStats e1 = CRYPTOD__ENGINE_STATS__INIT;
	Cryptod__Counters c0 = CRYPTOD__COUNTERS__INIT;
	Cryptod__EngineStats *engines[] = { &e0, &e1 };

	c0.ops = 1ull << 40;
	c0.bytes = UINT64_MAX;
	c0.auth_failures = 5;
	e0.name = "aesni";
	e0.counters = &c0;
	e1.name = "null";
	m.uptime_ms = 123456;
	m.workers = 2;
	m.n_engines = 2;
	m.engines = engines;
	env.seq = 4;
	env.body_case = CRYPTOD__ENVELOPE__BODY_STATS_REPLY;
	env.stats_reply = &m;
	Cryptod__Envelope *r = round_trip(*state, &env);
	const Cryptod__StatsReply *g = r->stats_reply;
	assert_true(g->uptime_ms == 123456);
	assert_int_equal(g->workers, 2);
	assert_int_equal(g->n_engines, 2);
	assert_int_equal(g->n_queues, 0);
	assert_string_equal(g->engines[0]->name, "aesni");
	assert_true(g->engines[0]->counters->ops == 1ull << 40);
	assert_true(g->engines[0]->counters->bytes == UINT64_MAX);
	assert_true(g->engines[0]->counters->auth_failures == 5);
	assert_string_equal(g->engines[1]->name, "null");
	assert_null(g->engines[1]->counters);
	wire_free(r);
}

static void test_round_trip_error_and_ack(void **state)
{
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__Error err = CRYPTOD__ERROR__INIT;
	Cryptod__Ack ack = CRYPTOD__ACK__INIT;
	Cryptod__StatsRequest sr = CRYPTOD__STATS_REQUEST__INIT;

	err.code = -ENOSPC;
	err.message = "key store full";
	env.seq = 5;
	env.body_case = CRYPTOD__ENVELOPE__BODY_ERROR;
	env.error = &err;
	Cryptod__Envelope *r = round_trip(*state, &env);
	assert_int_equal(r->error->code, -ENOSPC);
	assert_string_equal(r->error->message, "key store full");
	wire_free(r);

	/* Empty bodies still name their case on the wire. */
	env = (Cryptod__Envelope)CRYPTOD__ENVELOPE__INIT;
	env.seq = 6;
	env.body_case = CRYPTOD__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	r = round_trip(*state, &env);
	assert_non_null(r->ack);
	wire_free(r);

	env = (Cryptod__Envelope)CRYPTOD__ENVELOPE__INIT;
	env.seq = 0;
	env.body_case = CRYPTOD__ENVELOPE__BODY_STATS_REQUEST;
	env.stats_request = &sr;
	r = round_trip(*state, &env);
	assert_non_null(r->stats_request);
	wire_free(r);
}

static void test_packets_keep_boundaries(void **state)
{
	struct pair *p = *state;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__CloseQueue cq = CRYPTOD__CLOSE_QUEUE__INIT;
	int fds[1];
	unsigned nfds;

	/* Several queued messages come out one per wire_recv, in order. */
	env.body_case = CRYPTOD__ENVELOPE__BODY_CLOSE_QUEUE;
	env.close_queue = &cq;
	for (uint32_t i = 1; i <= 5; i++) {
		env.seq = i;
		cq.queue_id = 100 + i;
		assert_int_equal(wire_send(p->a, &env, NULL, 0), 0);
	}
	for (uint32_t i = 1; i <= 5; i++) {
		ssize_t n = wire_recv(p->b, p->buf, fds, 1, &nfds);
		assert_true(n > 0);
		Cryptod__Envelope *r = wire_decode(p->buf, (size_t)n);
		assert_non_null(r);
		assert_int_equal(r->seq, i);
		assert_int_equal(r->close_queue->queue_id, 100 + i);
		wire_free(r);
	}
	/* Nothing left: non-blocking, so -EAGAIN rather than a hang. */
	assert_int_equal(wire_recv(p->b, p->buf, fds, 1, &nfds), -EAGAIN);
	assert_int_equal(nfds, 0);
}

/* ---- Descriptors ---- */

static void test_fds_arrive_and_work(void **state)
{
	struct pair *p = *state;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__Ack ack = CRYPTOD__ACK__INIT;
	int pipefd[2], efd, memfd, got[CTL_MAX_FDS];
	unsigned nfds = 0;

	assert_int_equal(pipe(pipefd), 0);
	efd = eventfd(0, 0);
	memfd = memfd_create("wire-test", 0);
	assert_true(efd >= 0 && memfd >= 0);
	assert_int_equal(ftruncate(memfd, 4096), 0);

	env.seq = 9;
	env.body_case = CRYPTOD__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	int send_fds[3] = { pipefd[1], efd, memfd };
	assert_int_equal(wire_send(p->a, &env, send_fds, 3), 0);

	ssize_t n = wire_recv(p->b, p->buf, got, CTL_MAX_FDS, &nfds);
	assert_true(n > 0);
	assert_int_equal(nfds, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_true(got[i] >= 0);
		/* New numbers for the same files, close-on-exec. */
		for (unsigned j = 0; j < 3; j++)
			assert_int_not_equal(got[i], send_fds[j]);
		assert_true(fcntl(got[i], F_GETFD) & FD_CLOEXEC);
	}

	/* They refer to the same open files, in the order sent. */
	assert_int_equal(write(got[0], "ok", 2), 2);
	char b[2];
	assert_int_equal(read(pipefd[0], b, 2), 2);
	assert_memory_equal(b, "ok", 2);

	assert_int_equal(eventfd_write(got[1], 42), 0);
	eventfd_t v = 0;
	assert_int_equal(eventfd_read(efd, &v), 0);
	assert_true(v == 42);

	uint8_t *m =
		mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, got[2], 0);
	assert_true(m != MAP_FAILED);
	m[10] = 0x77;
	uint8_t c = 0;
	assert_int_equal(pread(memfd, &c, 1, 10), 1);
	assert_int_equal(c, 0x77);
	munmap(m, 4096);

	wire_close_fds(got, nfds);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(got[i], -1);
	close(pipefd[0]);
	close(pipefd[1]);
	close(efd);
	close(memfd);
}

static void test_excess_fds_closed(void **state)
{
	struct pair *p = *state;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__Ack ack = CRYPTOD__ACK__INIT;
	int send_fds[CTL_MAX_FDS], got[CTL_MAX_FDS];
	unsigned nfds = 0;

	for (int i = 0; i < CTL_MAX_FDS; i++) {
		send_fds[i] = eventfd(0, EFD_CLOEXEC);
		assert_true(send_fds[i] >= 0);
	}
	env.body_case = CRYPTOD__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	assert_int_equal(wire_send(p->a, &env, send_fds, CTL_MAX_FDS), 0);

	int before = count_fds();
	/* Room for one only: the other three must not leak. */
	memset(got, 0xff, sizeof(got));
	ssize_t n = wire_recv(p->b, p->buf, got, 1, &nfds);
	assert_true(n >= 0);
	assert_int_equal(nfds, 1);
	assert_int_equal(got[1], -1); /* nothing stored past max_fds */
	assert_int_equal(count_fds(), before + 1);
	/* The kept one works: it is the first one sent. */
	assert_int_equal(eventfd_write(got[0], 5), 0);
	eventfd_t v;
	assert_int_equal(eventfd_read(send_fds[0], &v), 0);
	assert_true(v == 5);
	wire_close_fds(got, 1);

	/* max_fds 0: every descriptor is closed, the message still comes. */
	assert_int_equal(wire_send(p->a, &env, send_fds, 2), 0);
	before = count_fds();
	n = wire_recv(p->b, p->buf, NULL, 0, &nfds);
	assert_true(n >= 0);
	assert_int_equal(nfds, 0);
	assert_int_equal(count_fds(), before);

	for (int i = 0; i < CTL_MAX_FDS; i++)
		close(send_fds[i]);
}

/* One byte with n fds attached, by raw sendmsg (wire_send caps n). */
static void send_raw_fds(int sock, const int *fds, unsigned n)
{
	assert_int_equal(scm_send(sock, "", 1, fds, n), 1);
}

static void test_too_many_fds(void **state)
{
	struct pair *p = *state;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__Ack ack = CRYPTOD__ACK__INIT;
	enum { N = CTL_MAX_FDS + 3 };
	int fds[N], got[CTL_MAX_FDS];
	unsigned nfds = 7;

	for (int i = 0; i < N; i++) {
		fds[i] = eventfd(0, EFD_CLOEXEC);
		assert_true(fds[i] >= 0);
	}
	env.body_case = CRYPTOD__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	/* The sender refuses more than the cap... */
	assert_int_equal(wire_send(p->a, &env, fds, N), -EINVAL);

	/* ...and a receiver given more (raw sendmsg) keeps what it has room
	 * for and closes the rest itself: none is left for the kernel to
	 * drop in the receiving thread (wire_recv_sink). */
	send_raw_fds(p->a, fds, N);

	int before = count_fds();
	assert_int_equal(wire_recv(p->b, p->buf, got, CTL_MAX_FDS, &nfds), 1);
	assert_int_equal(nfds, CTL_MAX_FDS);
	assert_int_equal(count_fds(), before + CTL_MAX_FDS);
	wire_close_fds(got, nfds);
	assert_int_equal(count_fds(), before);

	for (int i = 0; i < N; i++)
		close(fds[i]);
}

static unsigned sunk;
static void sink_count(int fd)
{
	sunk++;
	close(fd);
}

/* The most the kernel passes in one message arrives whole: a receiver
 * that takes none hands every one to its sink. */
static void test_sink_takes_scm_max(void **state)
{
	struct pair *p = *state;
	enum { N = WIRE_SCM_MAX_FD };
	static int fds[N];
	int efd = eventfd(0, EFD_CLOEXEC);
	assert_true(efd >= 0);
	for (int i = 0; i < N; i++)
		fds[i] = efd;
	send_raw_fds(p->a, fds, N);

	int before = count_fds();
	unsigned nfds = 9, n_sunk = 0;
	sunk = 0;
	assert_int_equal(wire_recv_sink(p->b, p->buf, NULL, 0, &nfds,
					sink_count, &n_sunk),
			 1);
	assert_int_equal(nfds, 0);
	assert_int_equal(n_sunk, N);
	assert_int_equal(sunk, N);
	assert_int_equal(count_fds(), before);
	close(efd);
}

/* ---- Size caps ---- */

/* An Error envelope whose packed size is exactly want bytes. */
static void error_of_size(Cryptod__Envelope *env, Cryptod__Error *err,
			  char *text, size_t want)
{
	*env = (Cryptod__Envelope)CRYPTOD__ENVELOPE__INIT;
	*err = (Cryptod__Error)CRYPTOD__ERROR__INIT;
	env->seq = 1;
	env->body_case = CRYPTOD__ENVELOPE__BODY_ERROR;
	env->error = err;
	err->code = -EIO;
	err->message = text;
	/* Varint length prefixes make the size a step function: search. */
	for (size_t len = want; len > 0; len--) {
		memset(text, 'x', len);
		text[len] = '\0';
		if (cryptod__envelope__get_packed_size(env) == want)
			return;
	}
	fail_msg("no message of packed size %zu", want);
}

static void test_send_size_cap(void **state)
{
	struct pair *p = *state;
	Cryptod__Envelope env;
	Cryptod__Error err;
	char *text = malloc(CTL_MSG_MAX + 2);
	int fds[1];
	unsigned nfds;

	assert_non_null(text);

	/* Exactly the cap: sent and received whole. */
	error_of_size(&env, &err, text, CTL_MSG_MAX);
	assert_int_equal(wire_send(p->a, &env, NULL, 0), 0);
	assert_int_equal(wire_recv(p->b, p->buf, fds, 1, &nfds), CTL_MSG_MAX);
	Cryptod__Envelope *r = wire_decode(p->buf, CTL_MSG_MAX);
	assert_non_null(r);
	assert_int_equal(strlen(r->error->message), strlen(text));
	wire_free(r);

	/* One byte more: refused before anything is sent. */
	error_of_size(&env, &err, text, CTL_MSG_MAX + 1);
	assert_int_equal(wire_send(p->a, &env, NULL, 0), -EMSGSIZE);
	assert_int_equal(wire_recv(p->b, p->buf, fds, 1, &nfds), -EAGAIN);
	free(text);
}

static void test_recv_oversized_packet(void **state)
{
	struct pair *p = *state;
	size_t len = CTL_MSG_MAX + 1;
	uint8_t *big = calloc(1, len);
	int fds[1];
	unsigned nfds;

	assert_non_null(big);
	/* A peer ignoring the cap: the packet is dropped, not truncated
	 * into something that might parse. */
	assert_int_equal(send(p->a, big, len, 0), (ssize_t)len);
	assert_int_equal(wire_recv(p->b, p->buf, fds, 1, &nfds), -EMSGSIZE);
	assert_int_equal(nfds, 0);

	/* The stream goes on: the next packet is intact. */
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__Ack ack = CRYPTOD__ACK__INIT;
	env.seq = 12;
	env.body_case = CRYPTOD__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	assert_int_equal(wire_send(p->a, &env, NULL, 0), 0);
	ssize_t n = wire_recv(p->b, p->buf, fds, 1, &nfds);
	assert_true(n > 0);
	Cryptod__Envelope *r = wire_decode(p->buf, (size_t)n);
	assert_non_null(r);
	assert_int_equal(r->seq, 12);
	wire_free(r);

	/* An oversized packet carrying fds: they are closed too. */
	int efd = eventfd(0, EFD_CLOEXEC);
	assert_int_equal(scm_send(p->a, big, len, &efd, 1), (ssize_t)len);
	int before = count_fds();
	assert_int_equal(wire_recv(p->b, p->buf, fds, 1, &nfds), -EMSGSIZE);
	assert_int_equal(nfds, 0);
	assert_int_equal(count_fds(), before);
	close(efd);
	free(big);
}

/* ---- Decoding ---- */

static void test_decode_garbage(void **state)
{
	/* Each is malformed protobuf, not merely unknown fields. (Strings
	 * are not checked for UTF-8 by protobuf-c: not a case here.) */
	static const struct {
		const char *what;
		uint8_t bytes[16];
		size_t len;
	} bad[] = {
		{ "unterminated varint",
		  { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		    0xff, 0xff },
		  12 },
		{ "truncated seq varint", { 0x08, 0x80 }, 2 },
		{ "field number 0", { 0x00, 0x01 }, 2 },
		{ "wire type 7", { 0x0f, 0x01 }, 2 },
		{ "length past end", { 0x52, 0x7f, 0x08, 0x01 }, 4 },
		{ "huge length", { 0x52, 0xff, 0xff, 0xff, 0xff, 0x0f }, 6 },
		{ "hello with bad inner varint",
		  { 0x52, 0x02, 0x08, 0x80 },
		  4 },
		{ "truncated fixed64", { 0x09, 0x01, 0x02 }, 3 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		Cryptod__Envelope *r = wire_decode(bad[i].bytes, bad[i].len);
		if (r) {
			wire_free(r);
			fail_msg("decoded garbage: %s", bad[i].what);
		}
	}

	/* Random bytes never crash the decoder (decode or NULL). */
	uint8_t rnd[256];
	srand(7);
	for (int i = 0; i < 20000; i++) {
		size_t len = (size_t)(rand() % (int)sizeof(rnd));
		for (size_t j = 0; j < len; j++)
			rnd[j] = (uint8_t)rand();
		wire_free(wire_decode(rnd, len));
	}
}

static void test_decode_size_cap(void **state)
{
	Cryptod__Envelope env;
	Cryptod__Error err;
	char *text = malloc(CTL_MSG_MAX + 2);
	uint8_t *buf = malloc(CTL_MSG_MAX + 1);

	assert_non_null(text);
	assert_non_null(buf);

	/* Well-formed bytes longer than any packet may be: refused, even
	 * though they would parse. */
	error_of_size(&env, &err, text, CTL_MSG_MAX + 1);
	assert_int_equal(cryptod__envelope__pack(&env, buf), CTL_MSG_MAX + 1);
	assert_null(wire_decode(buf, CTL_MSG_MAX + 1));

	/* At the cap they decode. */
	error_of_size(&env, &err, text, CTL_MSG_MAX);
	assert_int_equal(cryptod__envelope__pack(&env, buf), CTL_MSG_MAX);
	Cryptod__Envelope *r = wire_decode(buf, CTL_MSG_MAX);
	assert_non_null(r);
	assert_string_equal(r->error->message, text);
	wire_free(r);
	free(buf);
	free(text);
}

static void test_decode_sanity(void **state)
{
	/* The counterpart of the garbage cases: well-formed bytes decode. */
	static const uint8_t seq5[] = { 0x08, 0x05 };
	static const uint8_t hello[] = { 0x08, 0x02, 0x52, 0x02, 0x08, 0x01 };
	Cryptod__Envelope *r = wire_decode(seq5, sizeof(seq5));
	assert_non_null(r);
	assert_int_equal(r->seq, 5);
	assert_int_equal(r->body_case, CRYPTOD__ENVELOPE__BODY__NOT_SET);
	wire_free(r);
	r = wire_decode(hello, sizeof(hello));
	assert_non_null(r);
	assert_int_equal(r->seq, 2);
	assert_int_equal(r->body_case, CRYPTOD__ENVELOPE__BODY_HELLO);
	assert_int_equal(r->hello->abi_version, 1);
	wire_free(r);
	wire_free(NULL); /* no-op */
}

/* ---- End of stream ---- */

static void test_eof(void **state)
{
	struct pair *p = *state;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__Ack ack = CRYPTOD__ACK__INIT;
	int fds[1];
	unsigned nfds;

	/* What was sent before the close is still delivered first. */
	env.seq = 8;
	env.body_case = CRYPTOD__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	assert_int_equal(wire_send(p->a, &env, NULL, 0), 0);
	close(p->a);
	p->a = -1;
	assert_true(wire_recv(p->b, p->buf, fds, 1, &nfds) > 0);
	assert_int_equal(wire_recv(p->b, p->buf, fds, 1, &nfds), -EPIPE);
	assert_int_equal(nfds, 0);
	assert_int_equal(wire_recv(p->b, p->buf, fds, 1, &nfds), -EPIPE);

	/* Sending to a closed peer fails with an error, not SIGPIPE. */
	assert_int_equal(wire_send(p->b, &env, NULL, 0), -EPIPE);
}

/* ---- Default socket path ---- */

static void test_default_socket_path(void **state)
{
	char buf[108];
	const char *old = getenv("CRYPTOD_SOCKET");
	char *saved = old ? strdup(old) : NULL;

	assert_int_equal(setenv("CRYPTOD_SOCKET", "/tmp/x/ctl.sock", 1), 0);
	assert_int_equal(wire_default_socket_path(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/tmp/x/ctl.sock");

	/* Exactly fitting, and one byte short. */
	assert_int_equal(wire_default_socket_path(buf, 16), 0);
	assert_string_equal(buf, "/tmp/x/ctl.sock");
	assert_int_equal(wire_default_socket_path(buf, 15), -ENAMETOOLONG);
	assert_int_equal(wire_default_socket_path(buf, 4), -ENAMETOOLONG);
	assert_int_equal(wire_default_socket_path(buf, 1), -ENAMETOOLONG);

	/* Empty means unset. */
	assert_int_equal(setenv("CRYPTOD_SOCKET", "", 1), 0);
	assert_int_equal(wire_default_socket_path(buf, sizeof(buf)), 0);
	assert_int_not_equal(buf[0], '\0');
	unsetenv("CRYPTOD_SOCKET");
	if (geteuid() == 0) {
		assert_int_equal(wire_default_socket_path(buf, sizeof(buf)), 0);
		assert_string_equal(buf, "/run/cryptod/cryptod.sock");
		assert_int_equal(wire_default_socket_path(buf, 8),
				 -ENAMETOOLONG);
	}

	if (saved)
		setenv("CRYPTOD_SOCKET", saved, 1);
	free(saved);
}

/* The unprivileged defaults, checked in a child that drops its euid. */
static int child_unprivileged_paths(void)
{
	char buf[108], want[108];

	unsetenv("CRYPTOD_SOCKET");
	if (seteuid(65534))
		return 2;
	setenv("XDG_RUNTIME_DIR", "/run/user/65534", 1);
	if (wire_default_socket_path(buf, sizeof(buf)) ||
	    strcmp(buf, "/run/user/65534/cryptod.sock"))
		return 3;
	unsetenv("XDG_RUNTIME_DIR");
	snprintf(want, sizeof(want), "/tmp/cryptod-%u/cryptod.sock", 65534u);
	if (wire_default_socket_path(buf, sizeof(buf)) || strcmp(buf, want))
		return 4;
	if (wire_default_socket_path(buf, 10) != -ENAMETOOLONG)
		return 5;
	return 0;
}

static void test_default_socket_path_unprivileged(void **state)
{
	if (geteuid() != 0)
		skip(); /* cannot switch euid; the root case is the one missed */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_unprivileged_paths());
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st))
		fail_msg("unprivileged default path check %d failed",
			 WEXITSTATUS(st));
}

/* The control protocol's Algorithm enum is the list in algs.h: same
 * names (ALG_<ID>), same numbers, nothing more, nothing less. */
static void test_proto_algorithms_match_abi(void **state)
{
	const ProtobufCEnumDescriptor *d = &cryptod__algorithm__descriptor;
	unsigned n = 0;
#define X(id, num, name, kname, tag)                                           \
	do {                                                                   \
		const ProtobufCEnumValue *v =                                  \
			protobuf_c_enum_descriptor_get_value_by_name(          \
				d, "ALG_" #id);                                \
		if (!v)                                                        \
			fail_msg("cryptod.proto lacks ALG_" #id);              \
		if (v->value != num)                                           \
			fail_msg("ALG_" #id " is %d in cryptod.proto, "        \
				 "%d in algs.h",                               \
				 v->value, num);                               \
		n++;                                                           \
	} while (0);
	CRD_ALGORITHMS(X)
#undef X
	/* ALG_NONE (0) besides. */
	assert_int_equal(d->n_values, n + 1);
	assert_int_equal(n, CRD_ALG_MAX_ - 1);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pair_setup, pair_teardown)
	const struct CMUnitTest tests[] = {
		T(test_round_trip_hello),
		T(test_round_trip_open_queue_reply),
		T(test_round_trip_create_session),
		T(test_round_trip_stats_reply),
		T(test_round_trip_error_and_ack),
		T(test_packets_keep_boundaries),
		T(test_fds_arrive_and_work),
		T(test_excess_fds_closed),
		T(test_too_many_fds),
		T(test_sink_takes_scm_max),
		T(test_send_size_cap),
		T(test_recv_oversized_packet),
		cmocka_unit_test(test_decode_garbage),
		cmocka_unit_test(test_decode_size_cap),
		cmocka_unit_test(test_decode_sanity),
		T(test_eof),
		cmocka_unit_test(test_default_socket_path),
		cmocka_unit_test(test_default_socket_path_unprivileged),
		cmocka_unit_test(test_proto_algorithms_match_abi),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
