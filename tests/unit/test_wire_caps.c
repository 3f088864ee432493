/* SPDX-License-Identifier: MIT */
/*
 * The control socket's size cap (CTL_MSG_MAX, proto/wire.c): a message
 * of exactly the cap is sent and received whole, one byte more is refused
 * before anything is sent; an oversized packet from a peer ignoring the
 * cap is dropped (its fds closed) and the stream goes on; wire_decode()
 * refuses well-formed bytes past the cap.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "scm.h"
#include "wire.h"
#include "wire_pair.h"

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
	int before = pair_count_fds();
	assert_int_equal(wire_recv(p->b, p->buf, fds, 1, &nfds), -EMSGSIZE);
	assert_int_equal(nfds, 0);
	assert_int_equal(pair_count_fds(), before);
	close(efd);
	free(big);
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

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pair_setup, pair_teardown)
	const struct CMUnitTest tests[] = {
		T(test_send_size_cap),
		T(test_recv_oversized_packet),
		cmocka_unit_test(test_decode_size_cap),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
