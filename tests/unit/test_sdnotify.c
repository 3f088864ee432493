/* SPDX-License-Identifier: MIT */
/*
 * sd_notify and socket activation without systemd: a receiver socket
 * stands in for the manager's $NOTIFY_SOCKET (path and abstract), and an
 * fd dup'ed onto 3 stands in for an inherited listener.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "sdnotify.h"

/* A datagram receiver bound to 'name' ('@...' abstract, else a path). */
static int receiver(const char *name)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	memcpy(sa.sun_path, name, len);
	socklen_t salen = offsetof(struct sockaddr_un, sun_path) + len;
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	else
		salen++;
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, salen), 0);
	return fd;
}

static void expect_msg(int fd, const char *want)
{
	char buf[512];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void notify_path_socket(void **state)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/sdn-test-%d.sock", (int)getpid());
	unlink(path);
	int fd = receiver(path);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(sdn_notify("READY=1"), 1);
	expect_msg(fd, "READY=1");
	assert_int_equal(sdn_notifyf("STATUS=%d workers", 2), 1);
	expect_msg(fd, "STATUS=2 workers");
	close(fd);
	unlink(path);
	/* The manager went away: an error, not a crash or a hang. */
	assert_int_equal(sdn_notify("WATCHDOG=1"), -ENOENT);
	unsetenv("NOTIFY_SOCKET");
}

static void notify_abstract_socket(void **state)
{
	char name[64];
	snprintf(name, sizeof(name), "@sdn-test-%d", (int)getpid());
	int fd = receiver(name);
	setenv("NOTIFY_SOCKET", name, 1);
	assert_int_equal(sdn_notify("STOPPING=1"), 1);
	expect_msg(fd, "STOPPING=1");
	close(fd);
	unsetenv("NOTIFY_SOCKET");
}

static void notify_without_manager(void **state)
{
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(sdn_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	assert_int_equal(sdn_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	assert_int_equal(sdn_notify("READY=1"), -EINVAL);
	char longname[200];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	setenv("NOTIFY_SOCKET", longname, 1);
	assert_int_equal(sdn_notify("READY=1"), -EINVAL);
	unsetenv("NOTIFY_SOCKET");
	char big[600];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(sdn_notifyf("STATUS=%s", big), -EMSGSIZE);
}

static void set_pid_env(const char *var, pid_t pid)
{
	char s[32];
	snprintf(s, sizeof(s), "%d", (int)pid);
	setenv(var, s, 1);
}

static void watchdog_interval(void **state)
{
	uint64_t us = 0;
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	assert_int_equal(sdn_watchdog_usec(&us), 0);

	setenv("WATCHDOG_USEC", "3000000", 1);
	assert_int_equal(sdn_watchdog_usec(&us), 1);
	assert_int_equal(us, 3000000);
	set_pid_env("WATCHDOG_PID", getpid());
	us = 0;
	assert_int_equal(sdn_watchdog_usec(&us), 1);
	assert_int_equal(us, 3000000);

	/* For another process (a parent that forked us): not ours. */
	set_pid_env("WATCHDOG_PID", getpid() + 1);
	assert_int_equal(sdn_watchdog_usec(&us), 0);
	setenv("WATCHDOG_PID", "12x", 1);
	assert_int_equal(sdn_watchdog_usec(&us), 0);
	unsetenv("WATCHDOG_PID");

	static const char *const bad[] = { "",	 "0",
					   "-5", "12s",
					   " 5", "99999999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("WATCHDOG_USEC", bad[i], 1);
		assert_int_equal(sdn_watchdog_usec(&us), -EINVAL);
	}
	unsetenv("WATCHDOG_USEC");
}

/* Put a socket of 'type' on fd 3, listening if asked; set LISTEN_*. */
static void inherit(int type, int listening, const char *fds, pid_t pid,
		    const char *names)
{
	int s = socket(AF_UNIX, type, 0);
	assert_true(s >= 0);
	if (listening) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		/* autobind: an abstract name the kernel picks */
		assert_int_equal(
			bind(s, (struct sockaddr *)&sa, sizeof(sa_family_t)),
			0);
		assert_int_equal(listen(s, 4), 0);
	}
	if (s != SDN_LISTEN_FDS_START) {
		assert_int_equal(dup2(s, SDN_LISTEN_FDS_START),
				 SDN_LISTEN_FDS_START);
		close(s);
	}
	setenv("LISTEN_FDS", fds, 1);
	set_pid_env("LISTEN_PID", pid);
	if (names)
		setenv("LISTEN_FDNAMES", names, 1);
	else
		unsetenv("LISTEN_FDNAMES");
}

static void assert_listen_env_cleared(void)
{
	assert_null(getenv("LISTEN_FDS"));
	assert_null(getenv("LISTEN_PID"));
	assert_null(getenv("LISTEN_FDNAMES"));
}

static void listen_fd_accepts_seqpacket(void **state)
{
	char name[16];
	inherit(SOCK_SEQPACKET, 1, "1", getpid(), "cryptod.socket:other");
	int fd = sdn_listen_fd(name, sizeof(name));
	assert_int_equal(fd, SDN_LISTEN_FDS_START);
	assert_string_equal(name, "cryptod.socket");
	assert_listen_env_cleared();
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	/* Called again (the env is gone): nothing to inherit. */
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -ENOENT);
	close(fd);

	/* A name longer than the buffer is cut, still terminated. */
	char small[5];
	inherit(SOCK_SEQPACKET, 1, "1", getpid(), "cryptod.socket");
	fd = sdn_listen_fd(small, sizeof(small));
	assert_int_equal(fd, SDN_LISTEN_FDS_START);
	assert_string_equal(small, "cryp");
	close(fd);
}

static void listen_fd_refuses_wrong_sockets(void **state)
{
	char name[16];
	/* A stream socket (ListenStream= instead of
	 * ListenSequentialPacket=) is refused, not served. */
	inherit(SOCK_STREAM, 1, "1", getpid(), NULL);
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -EPROTOTYPE);
	assert_listen_env_cleared();
	close(SDN_LISTEN_FDS_START);

	inherit(SOCK_DGRAM, 0, "1", getpid(), NULL);
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -EPROTOTYPE);
	close(SDN_LISTEN_FDS_START);

	/* Right type but not listening. */
	inherit(SOCK_SEQPACKET, 0, "1", getpid(), NULL);
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -EPROTOTYPE);
	close(SDN_LISTEN_FDS_START);

	/* Not a socket at all. */
	int p[2];
	assert_int_equal(pipe(p), 0);
	if (p[0] != SDN_LISTEN_FDS_START) {
		assert_int_equal(dup2(p[0], SDN_LISTEN_FDS_START),
				 SDN_LISTEN_FDS_START);
		close(p[0]);
	}
	close(p[1]);
	setenv("LISTEN_FDS", "1", 1);
	set_pid_env("LISTEN_PID", getpid());
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -EPROTOTYPE);
	close(SDN_LISTEN_FDS_START);
}

static void listen_fd_env_checks(void **state)
{
	char name[16];
	/* Meant for another process: ignored, and cleared. */
	inherit(SOCK_SEQPACKET, 1, "1", getpid() + 1, NULL);
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -ENOENT);
	assert_listen_env_cleared();

	setenv("LISTEN_FDS", "1", 1);
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -ENOENT);

	inherit(SOCK_SEQPACKET, 1, "0", getpid(), NULL);
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -ENOENT);
	inherit(SOCK_SEQPACKET, 1, "2", getpid(), NULL);
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -E2BIG);
	inherit(SOCK_SEQPACKET, 1, "x", getpid(), NULL);
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -EINVAL);
	inherit(SOCK_SEQPACKET, 1, "-1", getpid(), NULL);
	assert_int_equal(sdn_listen_fd(name, sizeof(name)), -EINVAL);
	assert_listen_env_cleared();
	close(SDN_LISTEN_FDS_START);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(notify_path_socket),
		cmocka_unit_test(notify_abstract_socket),
		cmocka_unit_test(notify_without_manager),
		cmocka_unit_test(watchdog_interval),
		cmocka_unit_test(listen_fd_accepts_seqpacket),
		cmocka_unit_test(listen_fd_refuses_wrong_sockets),
		cmocka_unit_test(listen_fd_env_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
