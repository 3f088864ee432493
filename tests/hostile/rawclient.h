/* SPDX-License-Identifier: MIT */
/*
 * A hand-rolled client for hostile tests: the control protocol over a
 * raw SOCK_SEQPACKET socket and the ring ABI over the mapped region,
 * with nothing of libcryptoclient's care. Failures are cmocka asserts.
 */
#ifndef CRYPTOD_TEST_RAWCLIENT_H
#define CRYPTOD_TEST_RAWCLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <cryptod/ring_abi.h>

#include "wire.h"

struct raw {
	int fd;
	uint32_t seq;
	uint8_t rx[CTL_MSG_MAX];
};

void raw_connect(struct raw *r, const char *sock);
/* Wait (5 s) for one packet; its length, 0 at EOF, -errno. */
ssize_t raw_recv(struct raw *r, int *fds, unsigned *nfds);
/* Send req with the next seq and return the reply (asserts it came). */
Cryptod__Envelope *raw_call(struct raw *r, Cryptod__Envelope *req, int *fds,
			    unsigned *nfds);
void raw_hello(struct raw *r, uint32_t abi);
/*
 * Send env with the next seq, with every 0x01 byte of the string marker
 * (as packed, the first place it occurs) sent as a NUL: what protobuf-c's
 * C strings cannot say. The marker holds no other 0x01. 0 or -errno.
 */
int raw_send_nul(struct raw *r, Cryptod__Envelope *env, const char *marker);
/* The session id, or the (negative) error code of the reply. */
int raw_session(struct raw *r, int alg, const void *key, size_t len,
		const char *engine);

struct rawq {
	uint8_t *base;
	uint64_t size;
	struct crd_region_hdr *hdr;
	struct crd_sqe *sq;
	struct crd_cqe *cq;
	uint64_t arena_off, arena_size;
	uint32_t sq_entries, cq_entries, tail, head;
	int memfd, sq_efd, cq_efd; /* cq_efd: the completion doorbell */
};

/* OpenQueue (64 entries, 1 MiB arena) and map the region. */
void raw_open_queue(struct raw *r, struct rawq *q);
void raw_close_queue(struct rawq *q);
/* The entry at tail + i, zeroed. */
struct crd_sqe *rawq_sqe(struct rawq *q, unsigned i);
/* A valid 64-byte in-place GCM encrypt at arena offset off. */
void sqe_valid(struct crd_sqe *e, uint32_t session, uint32_t off, uint64_t ud);
/* Publish n entries already written at tail.., ring the doorbell. */
void rawq_submit(struct rawq *q, unsigned n);
/* Wait (5 s) for n completions and copy them out. */
void rawq_reap(struct rawq *q, struct crd_cqe *out, unsigned n);

/*
 * Named keys on for a daemon: a fresh temp dir holding a random 32-byte
 * KEK as a systemd credential ($CREDENTIALS_DIRECTORY is set to it) and
 * the key directory; args are the daemon's extra arguments (--set
 * keys.kek=credential:kek --set keys.dir=DIR, NULL-terminated), for
 * fx_daemon_params.args. 0 or -errno. rc_keys_fini removes the dir.
 */
struct rc_keys {
	char dir[64], creds[96], kd_arg[128];
	const char *args[5];
};
int rc_keys_init(struct rc_keys *k);
void rc_keys_fini(struct rc_keys *k);

/* Entries of a directory; fds and queue mappings of a process. */
int rc_count_dir(const char *path);
int rc_pid_fds(pid_t pid);
int rc_pid_queue_maps(pid_t pid);

#endif

/*
 * A well-behaved client running throughout an attack: a thread of its own
 * that encrypts 64 bytes through libcryptoclient every 2 ms (idle long
 * enough between ops for the workers to park, so every op takes the
 * wake-up path) and checks each result against the first.
 */
struct good_client {
	const char *sock;
	pthread_t thread;
	_Atomic int stop;
	_Atomic uint64_t ops, fails, max_gap_ms, last_ok_ms;
	_Atomic int started, exited;
};

void good_start(struct good_client *g, const char *sock);
/* Fail the test if an op failed or none completed for more than limit_ms
 * (including now: a thread stuck in an op is caught without joining). */
void good_check(struct good_client *g, unsigned limit_ms);
/* good_check, then stop and join. */
void good_stop(struct good_client *g, unsigned limit_ms);

/* How long a well-behaved client may wait at most: 1000 ms, or
 * $CRYPTOD_TEST_STALL_MS (the VM suite's emulated CPUs are slower). */
unsigned rc_stall_ms(void);

/* A fresh connection, a session, a queue and one op, within limit_ms (in
 * a child process: a daemon that never answers fails the test). */
void fresh_client_served(const char *sock, unsigned limit_ms);
