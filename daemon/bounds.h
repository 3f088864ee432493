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
	/* Streams open at once over a client's queues (each queue has
	 * CRD_STREAMS_PER_QUEUE slots). */
	MAX_STREAMS_PER_CLIENT = 128,
	MAX_SESSIONS = 8192, /* key store capacity */
	MAX_WORKERS = 64,
	MAX_ARENA_PER_CLIENT_MIB = 2048, /* arena memory a client may hold */
	WORKER_BURST = 64,		 /* descriptors taken per run */
	/* Fair shares (fair.h): a user's turn runs at most this many bytes
	 * (and at least one op), every op counting FAIR_OP_COST more for
	 * what it costs beyond its data; a user that overspent (one op
	 * larger than its turn) sits out turns until it has paid. */
	FAIR_OP_COST = 256,
	/* A full run of 16 KiB ops (full multi-buffer lanes): 1 MiB + 16 KiB */
	FAIR_QUANTUM = WORKER_BURST * ((16 << 10) + FAIR_OP_COST),
	MAX_USERS = 1024,     /* uids with queues at once: at most MAX_QUEUES */
	WORKER_MIN_CHUNK = 8, /* smallest run split off for a sibling */
	WORKER_SPIN_US = 200, /* busy-poll this long before sleeping */
	PARK_TIMEOUT_MS = 100, /* a parked worker looks at the rings anyway */
	DEFAULT_CONNS_PER_UID = 64, /* limits.connections_per_uid */
	DEFAULT_QUEUES_PER_UID = MAX_QUEUES / 8,     /* limits.queues_per_uid */
	DEFAULT_SESSIONS_PER_UID = MAX_SESSIONS / 4, /* ...sessions_per_uid */
	DEFAULT_ARENA_PER_UID_MIB = 4096,	     /* ...arena_per_uid */
	/* limits.inflight_per_client: what the ring geometry allows anyway
	 * (every queue's completion ring at its largest). */
	MAX_INFLIGHT_PER_CLIENT = MAX_QUEUES_PER_CLIENT * 65536,
	ACCEPT_PAUSE_MS = 100, /* out of fds: stop accepting this long */
	/* RLIMIT_MEMLOCK a daemon started as root raises before it drops to
	 * --user: the unit's LimitMEMLOCK=64M (the key store's slab plus
	 * per-worker scratch, with room). */
	PRIV_MEMLOCK_MIB = 64,
	/* OpenSSL's secure heap (locked, out of core dumps), where key
	 * pairs' private numbers live (main.c): an RSA-4096 key's d, p, q
	 * and CRT numbers take 1.8 KiB there, an EC or Ed25519 key well
	 * under 256 bytes, and a private op's temporaries a few KiB more per
	 * worker: 4 MiB holds ~2000 RSA-4096 keys or 16000 EC keys, within
	 * PRIV_MEMLOCK_MIB beside the key store's slab (MAX_SESSIONS slots
	 * of 1408 bytes). A power of two, as OpenSSL requires. */
	SECURE_HEAP_MIB = 4,
	SECURE_HEAP_MIN = 32,	/* its smallest block, bytes */
	LOG_RATE_BURST = 10,	/* client-caused log lines per uid... */
	LOG_RATE_WINDOW_S = 60, /* ...per this many seconds */
	/* Programs (client name, uid) whose history the daemon keeps after
	 * their connections closed, in all and per non-administrator uid
	 * (programs.h); the rest is summed in one "(other)" row. */
	MAX_PROGRAMS = 64,
	MAX_PROGRAMS_PER_UID = 8,
	/* A client's name (Hello, as logged and listed) with its NUL. */
	CLIENT_NAME_SIZE = 65,
};

#define MAX_ARENA_PER_CLIENT ((uint64_t)MAX_ARENA_PER_CLIENT_MIB << 20)

#endif
