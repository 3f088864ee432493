/* SPDX-License-Identifier: MIT */
/*
 * Fair by cost (docs/asymmetric.md, daemon/data/fair.h): one uid sends
 * RSA-4096 signatures as fast as it can, 64 in flight; another uid's
 * 1 KiB AES-GCM encryptions must keep a fair share of the workers.
 *
 * A signature's bytes are 32 in and 512 out, but its work is that of
 * megabytes of AES: charged by its bytes, one turn of the signing uid
 * would run a whole run of signatures (tens of them, a few milliseconds
 * each) against one run of the other uid's small ops, and the small ops
 * would get around 1% of what they get alone. Charged by the engine row's
 * cost, a signature is more than a turn's quantum: the signer runs one
 * and sits out turns while the other uid's runs go on.
 *
 * A worker runs one op at a time, so with 64 ops in flight the GCM
 * client's rate beside the signer is bounded by a signature's time
 * whatever the scheduler does; what the scheduler decides is how many
 * signatures run between two of the GCM client's runs. So the check is
 * GCM ops completed per signature completed, which no machine's speed
 * changes: charged by cost, one run of the GCM client (up to its 64 ops)
 * beside each signature (measured 45 to 62 on a loaded 2-core host);
 * charged by bytes, one beside each run of 32 signatures (measured 0 to
 * 9, and once, when the signer had not got going, thousands). The pass
 * mark is 20. Both clients are other uids (setresuid): needs root, else
 * skipped. The rates alone and beside are printed.
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "fixture.h"

enum { UID_SIGN = 4601, UID_GCM = 4602, DEPTH = 64, OP = 1024 };

struct shared {
	_Atomic uint64_t gcm_bytes, signs;
	_Atomic int stop, ready;
};

static struct fx_daemon d;
static struct shared *sh;
static uint8_t der[4096];
static size_t der_len;

static void drop_to(uid_t uid)
{
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		_exit(90);
}

/* Keep DEPTH ops in flight on q; count what completes OK. */
static void pump(struct cc_queue *q, struct cc_op *ops, _Atomic uint64_t *ctr,
		 uint64_t per_op)
{
	struct cc_completion c[DEPTH];
	if (cc_enqueue_burst(q, ops, DEPTH) != DEPTH)
		_exit(95);
	atomic_fetch_add(&sh->ready, 1);
	while (!atomic_load(&sh->stop)) {
		if (cc_wait(q, 1000) < 0)
			_exit(96);
		int n = cc_dequeue_burst(q, c, DEPTH);
		for (int i = 0; i < n; i++) {
			if (c[i].status)
				_exit(97);
			atomic_fetch_add(ctr, per_op);
			/* resubmit the op whose completion this is */
			if (cc_enqueue_burst(q, &ops[c[i].user_data], 1) != 1)
				_exit(98);
		}
	}
	_exit(0);
}

static pid_t client(int sign)
{
	pid_t pid = fork();
	if (pid)
		return pid;
	drop_to(sign ? UID_SIGN : UID_GCM);
	struct cc_conn *conn;
	struct cc_queue *q;
	uint32_t sid;
	static const uint8_t key[16] = { 1, 2, 3 };
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 16 };
	if (sign)
		sp = (struct cc_session_params){ .alg = CC_ALG_RSA_4096,
						 .key = der,
						 .key_len = der_len };
	struct cc_queue_params qp = { .sq_entries = DEPTH,
				      .cq_entries = DEPTH,
				      .arena_size = 1 << 20 };
	if (cc_connect(d.sock, sign ? "pk-signer" : "pk-gcm", &conn) ||
	    cc_session_create(conn, &sp, &sid) || cc_queue_open(conn, &qp, &q))
		_exit(91);
	uint8_t *b = cc_buf_alloc(q, DEPTH * (OP + 64 + 512));
	static struct cc_op ops[DEPTH];
	static const struct cc_pk_params pp = { .md = CC_PK_MD_SHA256 };
	static const uint8_t iv[12];
	if (!b)
		_exit(92);
	for (unsigned i = 0; i < DEPTH; i++) {
		uint8_t *p = b + i * (OP + 64 + 512);
		ops[i] = (struct cc_op){ .user_data = i,
					 .session = sid,
					 .dir = sign ? CC_SIGN : CC_ENCRYPT,
					 .src = p,
					 .len = sign ? 32 : OP,
					 .dst = sign ? p + 64 : NULL,
					 .tag = sign ? NULL : p + OP,
					 .iv = sign ? (const void *)&pp : iv,
					 .iv_len = sign ? sizeof(pp) : 12 };
	}
	pump(q, ops, sign ? &sh->signs : &sh->gcm_bytes, sign ? 1 : OP);
	return 0;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The GCM client's bytes per second over secs. */
static double gcm_rate(double secs)
{
	uint64_t b0 = atomic_load(&sh->gcm_bytes);
	double t0 = now_s();
	usleep((useconds_t)(secs * 1e6));
	return (double)(atomic_load(&sh->gcm_bytes) - b0) / (now_s() - t0);
}

static void wait_ready(int n)
{
	for (int i = 0; i < 3000 && atomic_load(&sh->ready) < n; i++)
		usleep(10000);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: needs root (setresuid to other "
				"uids)\n");
		return FX_EXIT_SKIP;
	}
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)4096);
	PKCS8_PRIV_KEY_INFO *p8 = k ? EVP_PKEY2PKCS8(k) : NULL;
	uint8_t *p = der;
	int n = p8 ? i2d_PKCS8_PRIV_KEY_INFO(p8, NULL) : -1;
	if (n <= 0 || n > (int)sizeof(der) ||
	    i2d_PKCS8_PRIV_KEY_INFO(p8, &p) != n)
		return FX_EXIT_FAIL;
	der_len = (size_t)n;
	PKCS8_PRIV_KEY_INFO_free(p8);
	EVP_PKEY_free(k);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	static const char *const args[] = { "--socket-mode", "0666", NULL };
	struct fx_daemon_params dp = { .workers = 2, .args = args };
	if (sh == MAP_FAILED || fx_daemon_start(&d, &dp) ||
	    chmod(d.dir, 0755) < 0)
		return FX_EXIT_FAIL;

	pid_t gcm = client(0);
	wait_ready(1);
	usleep(300000);
	double alone = gcm_rate(1.5);
	pid_t signer = client(1);
	wait_ready(2);
	usleep(300000);
	uint64_t s0 = atomic_load(&sh->signs);
	double flood = gcm_rate(2.0);
	uint64_t signs = atomic_load(&sh->signs) - s0;
	atomic_store(&sh->stop, 1);
	int st_g = -1, st_s = -1;
	waitpid(gcm, &st_g, 0);
	waitpid(signer, &st_s, 0);
	int rc = fx_daemon_stop(&d);

	/* GCM ops per signature: a run of the GCM client's (its 64 in
	 * flight) beside each signature, when fair by cost; by bytes, one
	 * run beside each run of signatures (32 of them a worker) */
	double per_sign = signs ? flood * 2.0 / OP / (double)signs : 0;
	printf("1 KiB AES-GCM alone %.1f MB/s, beside RSA-4096 signatures "
	       "%.1f MB/s; %llu signatures in 2 s, %.1f GCM ops each\n",
	       alone / 1e6, flood / 1e6, (unsigned long long)signs, per_sign);
	if (!WIFEXITED(st_g) || WEXITSTATUS(st_g) || !WIFEXITED(st_s) ||
	    WEXITSTATUS(st_s)) {
		fprintf(stderr, "FAIL: a client failed (%d, %d)\n", st_g, st_s);
		return FX_EXIT_FAIL;
	}
	if (!signs) {
		fprintf(stderr, "FAIL: the signer was starved\n");
		return FX_EXIT_FAIL;
	}
	if (per_sign < 20) {
		fprintf(stderr,
			"FAIL: %.1f GCM ops per signature: "
			"signatures charged as their bytes?\n",
			per_sign);
		return FX_EXIT_FAIL;
	}
	return rc ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
