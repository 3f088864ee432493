/* SPDX-License-Identifier: MIT */
/*
 * Descriptors over the control socket (proto/wire.c): they travel with
 * SCM_RIGHTS and arrive working and close-on-exec, in the order sent;
 * those past the receiver's room are closed, not leaked; the sender
 * refuses more than CTL_MAX_FDS, and a receiver given more by a raw
 * sendmsg keeps what it has room for and closes the rest itself, up to
 * the kernel's most per message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scm.h"
#include "wire.h"
#include "wire_pair.h"

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

	int before = pair_count_fds();
	/* Room for one only: the other three must not leak. */
	memset(got, 0xff, sizeof(got));
	ssize_t n = wire_recv(p->b, p->buf, got, 1, &nfds);
	assert_true(n >= 0);
	assert_int_equal(nfds, 1);
	assert_int_equal(got[1], -1); /* nothing stored past max_fds */
	assert_int_equal(pair_count_fds(), before + 1);
	/* The kept one works: it is the first one sent. */
	assert_int_equal(eventfd_write(got[0], 5), 0);
	eventfd_t v;
	assert_int_equal(eventfd_read(send_fds[0], &v), 0);
	assert_true(v == 5);
	wire_close_fds(got, 1);

	/* max_fds 0: every descriptor is closed, the message still comes. */
	assert_int_equal(wire_send(p->a, &env, send_fds, 2), 0);
	before = pair_count_fds();
	n = wire_recv(p->b, p->buf, NULL, 0, &nfds);
	assert_true(n >= 0);
	assert_int_equal(nfds, 0);
	assert_int_equal(pair_count_fds(), before);

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

	int before = pair_count_fds();
	assert_int_equal(wire_recv(p->b, p->buf, got, CTL_MAX_FDS, &nfds), 1);
	assert_int_equal(nfds, CTL_MAX_FDS);
	assert_int_equal(pair_count_fds(), before + CTL_MAX_FDS);
	wire_close_fds(got, nfds);
	assert_int_equal(pair_count_fds(), before);

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

	int before = pair_count_fds();
	unsigned nfds = 9, n_sunk = 0;
	sunk = 0;
	assert_int_equal(wire_recv_sink(p->b, p->buf, NULL, 0, &nfds,
					sink_count, &n_sunk),
			 1);
	assert_int_equal(nfds, 0);
	assert_int_equal(n_sunk, N);
	assert_int_equal(sunk, N);
	assert_int_equal(pair_count_fds(), before);
	close(efd);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pair_setup, pair_teardown)
	const struct CMUnitTest tests[] = {
		T(test_fds_arrive_and_work),
		T(test_excess_fds_closed),
		T(test_too_many_fds),
		T(test_sink_takes_scm_max),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
