/* SPDX-License-Identifier: MIT */
/* Every daemon-side bound in one place (the ring ABI's own bounds live in
 * include/cryptod/ring_abi.h, the control protocol's in proto/wire.h). */
#ifndef CRYPTOD_BOUNDS_H
#define CRYPTOD_BOUNDS_H

#include <stdint.h>

enum daemon_limits {
	MAX_CLIENTS = 256, /* connections at once */
	MAX_QUEUES_PER_CLIENT = 16,
	MAX_QUEUES = 1024, /* all clients */
	MAX_SESSIONS_PER_CLIENT = 1024,
	MAX_SESSIONS = 8192, /* key store capacity */
	MAX_WORKERS = 64,
	MAX_ARENA_PER_CLIENT_MIB = 2048, /* arena memory a client may hold */
	WORKER_BURST = 64,		 /* descriptors taken per queue pass */
	WORKER_MIN_CHUNK = 8, /* smallest run split off for a sibling */
	WORKER_SPIN_US = 200, /* busy-poll this long before sleeping */
};

#define MAX_ARENA_PER_CLIENT ((uint64_t)MAX_ARENA_PER_CLIENT_MIB << 20)

#endif
