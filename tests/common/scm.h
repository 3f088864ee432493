/* SPDX-License-Identifier: MIT */
/*
 * Descriptors passed by hand, for tests that go where wire_send() will
 * not: more descriptors than CTL_MAX_FDS, packets past CTL_MSG_MAX, or
 * fds pushed at the daemon outside the control protocol's rules.
 */
#ifndef CRYPTOD_TEST_SCM_H
#define CRYPTOD_TEST_SCM_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Send one packet of len bytes from buf on sock with fds[0..n) attached
 * in a single SCM_RIGHTS message (n 0: none), by one sendmsg() that never
 * raises SIGPIPE. n may be at most WIRE_SCM_MAX_FD, the most the kernel
 * takes in one message. Returns the bytes sent, or -errno (-EINVAL for
 * too many fds).
 */
ssize_t scm_send(int sock, const void *buf, size_t len, const int *fds,
		 unsigned n);

#endif /* CRYPTOD_TEST_SCM_H */
