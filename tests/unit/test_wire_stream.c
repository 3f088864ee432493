/* SPDX-License-Identifier: MIT */
/*
 * Control-socket framing (proto/wire.c) over a real
 * socketpair(AF_UNIX, SOCK_SEQPACKET): envelopes of every kind round trip
 * with their fields, packets keep their boundaries and order, and end of
 * stream is reported (after what was sent before it) rather than hanging.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <unistd.h>

#include "wire.h"
#include "wire_pair.h"

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
		T(test_eof),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
