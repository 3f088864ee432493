/* SPDX-License-Identifier: MIT */
/*
 * What the control-socket framing tests (test_wire_*) share: a
 * socketpair(AF_UNIX, SOCK_SEQPACKET) and a receive buffer, set up and
 * torn down around each cmocka test, and a count of this process's open
 * descriptors, to see what a receive kept or closed.
 */
#ifndef CRYPTOD_TEST_WIRE_PAIR_H
#define CRYPTOD_TEST_WIRE_PAIR_H

#include <stdint.h>

struct pair {
	int a, b;
	uint8_t *buf; /* CTL_MSG_MAX bytes, as wire_recv wants */
};

/* cmocka setup and teardown: *state is the struct pair. A test may close
 * an end and set it to -1. */
int pair_setup(void **state);
int pair_teardown(void **state);

/* Entries of /proc/self/fd (the directory's own included). */
int pair_count_fds(void);

#endif /* CRYPTOD_TEST_WIRE_PAIR_H */
