/* SPDX-License-Identifier: MIT */
/*
 * Integration-test fixture: a real cryptod on a socket in a private temp
 * directory, and a helper that pushes a burst through a queue and collects
 * its completions in order.
 *
 * Functions return 0 (or a count) on success and a negative errno on
 * failure, and print a one-line reason to stderr when they fail, so a test
 * can simply bail out.
 *
 * Exit codes used by the test programs (automake/ctest convention).
 */
#ifndef CRYPTOD_TEST_FIXTURE_H
#define CRYPTOD_TEST_FIXTURE_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include <cryptoclient.h>

#define FX_EXIT_PASS 0
#define FX_EXIT_FAIL 1
#define FX_EXIT_SKIP 77

/* How long a daemon gets to start (socket accepting) and to stop. */
#define FX_START_TIMEOUT_MS 10000
#define FX_STOP_TIMEOUT_MS 10000

struct fx_daemon_params {
	unsigned workers;      /* 0 = the daemon's default */
	const char *log_level; /* NULL = $CRYPTOD_TEST_LOG_LEVEL, else "warn" */
	/* --config FILE; NULL = --no-config (a file installed in /etc must
	 * not change what tests see). */
	const char *config;
	/* More arguments (NULL-terminated, at most FX_EXTRA_ARGS), or NULL. */
	const char *const *args;
	/* Soft and hard RLIMIT_NOFILE for the daemon; 0 = inherited. */
	unsigned nofile;
};

#define FX_EXTRA_ARGS 16

struct fx_daemon {
	pid_t pid; /* 0 when not running */
	char dir[PATH_MAX];
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/*
 * Create a temp dir, start cryptod (path from CRYPTOD_BIN, overridable by
 * $CRYPTOD_BIN) with its socket there, and wait until cc_connect() works.
 * p may be NULL. On failure nothing is left running and the dir is gone.
 */
int fx_daemon_start(struct fx_daemon *d, const struct fx_daemon_params *p);

/*
 * The usual start of a test: fx_daemon_start(), cc_connect() as name,
 * cc_queue_open() with qp. On failure it says which step failed, undoes
 * the others and returns -errno; on success the caller owns all three.
 */
int fx_setup(struct fx_daemon *d, const struct fx_daemon_params *p,
	     const char *name, const struct cc_queue_params *qp,
	     struct cc_conn **conn, struct cc_queue **q);

/*
 * fx_setup(), then a CC_ALG_NULL session (its ops copy): the start of a
 * test of the rings rather than of the crypto. On failure nothing is
 * left; on success the caller also owns *sid.
 */
int fx_setup_null(struct fx_daemon *d, const struct fx_daemon_params *p,
		  const char *name, const struct cc_queue_params *qp,
		  struct cc_conn **conn, struct cc_queue **q, uint32_t *sid);

/*
 * The usual end of a test, fx_setup() undone: cc_queue_close(q),
 * cc_disconnect(conn), fx_daemon_stop(d). Returns what fx_daemon_stop()
 * returned, after saying so on stderr when it failed.
 */
int fx_teardown(struct fx_daemon *d, struct cc_conn *conn, struct cc_queue *q);

/*
 * Crash and restart: SIGKILL the daemon, then start a new one with the
 * same parameters on the same socket (whose stale file it must take
 * over), and wait until a client can connect. 0 or -errno.
 */
int fx_daemon_restart(struct fx_daemon *d, const struct fx_daemon_params *p);

/*
 * SIGTERM the daemon and wait for it. Returns 0 only if it exited with
 * status 0 in time; -ETIMEDOUT (it was then SIGKILLed) or -EIO (non-zero
 * exit or killed by a signal) otherwise. Always removes the temp dir.
 */
int fx_daemon_stop(struct fx_daemon *d);

#define FX_ENGINE_NAME_MAX 32

/*
 * Should tests run engine name? Yes, unless $CRYPTOD_TEST_ENGINES (a comma
 * list) leaves it out: the VM suite runs the vector tests on the kernel
 * engines alone, as the host has already run them on the others.
 */
int fx_engine_wanted(const char *name);

/*
 * Names of the engines the daemon lists (cc_stats_get) that accept a
 * session of alg, probed by creating and destroying one with a throw-away
 * key. Engines that refuse are printed, with the reason, and left out.
 * Returns how many names were stored (at most max), or -errno.
 */
int fx_engines_for(struct cc_conn *conn, enum cc_alg alg,
		   char names[][FX_ENGINE_NAME_MAX], unsigned max);

/*
 * Does engine (NULL: the default one) take IVs of iv_len bytes for alg,
 * according to the daemon's capability table? 1 yes, 0 no, -errno.
 */
int fx_iv_ok(struct cc_conn *conn, enum cc_alg alg, const char *engine,
	     unsigned iv_len);

/* Is v in one of the n {min, max, increment} ranges of a capability row
 * (increment 0: min only)? */
int fx_range_has(const struct cc_range *r, unsigned n, uint32_t v);

/* Monotonic milliseconds. */
uint64_t fx_now_ms(void);

/*
 * Submit ops[0..n) on q and collect exactly n completions into comps,
 * enqueueing in pieces when the ring is full. Fails with -EPROTO if a
 * completion's user_data is not the one submitted in that position (the
 * library promises submission order), -ETIMEDOUT after timeout_ms, or the
 * error cc_enqueue_burst()/cc_wait() returned. Requires an idle queue.
 */
int fx_run_burst(struct cc_queue *q, const struct cc_op *ops, unsigned n,
		 struct cc_completion *comps, int timeout_ms);

/*
 * cc_crypt(), plus a note on stderr saying how long it took when it
 * returns -ETIMEDOUT: the library's sync time-out is long, so a quick
 * -ETIMEDOUT points at a spurious wake-up rather than a slow daemon.
 */
int fx_crypt(struct cc_conn *conn, uint32_t session, enum cc_dir dir,
	     const void *iv, unsigned iv_len, const void *aad, size_t aad_len,
	     const void *in, void *out, size_t len, void *tag);

#endif /* CRYPTOD_TEST_FIXTURE_H */
