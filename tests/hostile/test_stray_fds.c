/* SPDX-License-Identifier: MIT */
/*
 * Descriptors pushed at the daemon. A client attaches to its control
 * messages fds whose last close() blocks: TCP sockets with SO_LINGER and
 * data the peer never reads. The daemon must never close such a file on
 * its control thread or a worker: where the kernel can it refuses them
 * (SO_PASSRIGHTS, Linux 6.16), elsewhere it receives every one and hands
 * it to its reaper thread. A well-behaved client runs throughout and
 * must never wait a second, and a fresh client is served within one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "rawclient.h"
#include "scm.h"

#define STALL_MS rc_stall_ms()
enum { LINGER_S = 5 };

static struct fx_daemon daemon_;
static struct good_client good;
static int base_fds;
static int tcp_listener = -1; /* accepts nothing, reads nothing */

/* A TCP socket whose close() waits LINGER_S for data nobody reads. */
static int lingering_socket(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	assert_int_equal(
		getsockname(tcp_listener, (struct sockaddr *)&sa, &len), 0);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	int small = 4096;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* Fill the peer's window and our send buffer: the rest stays
	 * unsent, so a lingering close must wait. */
	static char junk[65536];
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (send(fd, junk, sizeof(junk), MSG_NOSIGNAL) > 0)
		;
	struct linger l = { .l_onoff = 1, .l_linger = LINGER_S };
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)),
			 0);
	return fd;
}

/* Send a stats request carrying n fds; our copies are closed, so the
 * daemon's is the last reference. Returns wire_send's result. */
static int push_fds(struct raw *r, int fd, unsigned n)
{
	Cryptod__StatsRequest m = CRYPTOD__STATS_REQUEST__INIT;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = ++r->seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_STATS_REQUEST;
	env.stats_request = &m;
	size_t len = cryptod__envelope__get_packed_size(&env);
	uint8_t buf[64];
	assert_true(len <= sizeof(buf));
	cryptod__envelope__pack(&env, buf);
	static int fds[WIRE_SCM_MAX_FD];
	for (unsigned i = 0; i < n; i++)
		fds[i] = i ? dup(fd) : fd;
	ssize_t sent = scm_send(r->fd, buf, len, fds, n);
	int err = sent < 0 ? (int)sent : 0;
	if (err) { /* ours are the last: do not wait out the linger */
		struct linger off = { 0 };
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &off, sizeof(off));
	}
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
	return err;
}

static void settle(const char *what, int err)
{
	printf("%s: %s\n", what,
	       err == -EPERM ? "refused by the kernel (SO_PASSRIGHTS)"
	       : err	     ? strerror(-err)
			     : "delivered");
	assert_true(err == 0 || err == -EPERM);
	for (int i = 0; i < 4; i++) {
		fresh_client_served(daemon_.sock, STALL_MS);
		good_check(&good, STALL_MS);
		usleep(100000);
	}
	int fds = -1;
	for (int i = 0; i < 100 * (LINGER_S + 2); i++, usleep(10000))
		if ((fds = rc_pid_fds(daemon_.pid)) == base_fds)
			break;
	if (fds != base_fds)
		fail_msg("%s: the daemon holds %d fds, %d before", what, fds,
			 base_fds);
	good_check(&good, STALL_MS);
}

/* After hello, like a client that has been served for a while. */
static void lingering_fd_in_a_request(void **state)
{
	struct raw r;
	raw_connect(&r, daemon_.sock);
	raw_hello(&r, CRD_ABI_VERSION);
	int err = push_fds(&r, lingering_socket(), 1);
	if (!err) /* the daemon hangs up on a client that sends fds */
		assert_int_equal(raw_recv(&r, NULL, NULL), 0);
	close(r.fd);
	settle("a lingering TCP socket in a request", err);
}

/* Before the daemon has even accepted the connection. */
static void lingering_fd_before_accept(void **state)
{
	struct raw r;
	raw_connect(&r, daemon_.sock);
	int err = push_fds(&r, lingering_socket(), 1);
	close(r.fd); /* and gone: the fds may still sit in its queue */
	settle("a lingering TCP socket in the first packet", err);
}

/* As many as the kernel passes in one message. */
static void scm_max_fds(void **state)
{
	struct raw r;
	raw_connect(&r, daemon_.sock);
	raw_hello(&r, CRD_ABI_VERSION);
	int err = push_fds(&r, lingering_socket(), WIRE_SCM_MAX_FD);
	close(r.fd);
	settle("253 fds of a lingering TCP socket", err);
}

static int setup(void **state)
{
	struct fx_daemon_params p = { .workers = 2 };
	if (fx_daemon_start(&daemon_, &p))
		return -1;
	good_start(&good, daemon_.sock);
	base_fds = rc_pid_fds(daemon_.pid);
	return 0;
}

static int teardown(void **state)
{
	good_stop(&good, STALL_MS);
	return fx_daemon_stop(&daemon_) ? -1 : 0;
}

int main(void)
{
	tcp_listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int small = 4096;
	setsockopt(tcp_listener, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (tcp_listener < 0 ||
	    bind(tcp_listener, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(tcp_listener, 16) < 0)
		return FX_EXIT_FAIL;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(lingering_fd_in_a_request,
						setup, teardown),
		cmocka_unit_test_setup_teardown(lingering_fd_before_accept,
						setup, teardown),
		cmocka_unit_test_setup_teardown(scm_max_fds, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
