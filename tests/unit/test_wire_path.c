/* SPDX-License-Identifier: MIT */
/*
 * The default control-socket path (wire_default_socket_path(),
 * proto/wire.c): $CRYPTOD_SOCKET, empty meaning unset, the root default,
 * the unprivileged defaults ($XDG_RUNTIME_DIR, then /tmp/cryptod-UID), and
 * -ENAMETOOLONG for a buffer too small.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wire.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_socket_path),
		cmocka_unit_test(test_default_socket_path_unprivileged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
