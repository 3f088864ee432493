/* SPDX-License-Identifier: MIT */
/*
 * The provider's data path beyond one blocking call at a time
 * (provider/prov_io.c), against OpenSSL's default provider:
 *
 * - async: JOBS ASYNC_JOBs on one thread, each running AES-GCM, AES-CBC
 *   and SHA-256 messages through cryptod. Each op must pause its job
 *   (the wait fd is the queue's doorbell) rather than block, so that
 *   many jobs are paused at once, which is one thread with many ops in
 *   flight; every result must equal the default provider's.
 * - fork: a child of a process that has used the provider gets its own
 *   connection, and the parent's still works after the child is gone.
 * - dup: a context duplicated in mid-message (EVP_CIPHER_CTX_copy,
 *   EVP_MD_CTX_copy, EVP_MAC_CTX_dup past the provider's 64 KiB buffer):
 *   the daemon copies the stream's state, and the original and the copy,
 *   each finished with different data, equal the default provider's.
 * - burst: 32 jobs, each encrypting AES-128-CBC 1 KiB updates as openssl
 *   speed does: every result equals the default provider's, and the
 *   daemon takes most of the ops in runs of 4 or more (its batch
 *   histogram for this process's queues), as the provider sends the ops
 *   of a thread's jobs together.
 * - wakeup: a job whose completion another job took (and whose doorbell
 *   that job drained) is still woken.
 * - restart: the daemon stopped with a job's op in flight, then killed
 *   and restarted: a one-shot op is sent again on a new connection, a
 *   stream's piece fails with a reason naming cryptod, and the next
 *   message works.
 *
 * Exit 0 pass, 1 fail, 77 skip. TEST_SEED replays a run.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "prov_fixture.h"

enum {
	JOBS = 16,
	ROUNDS = 12,
	MAX_LEN = 48 << 10,
	DIGEST_LEN = 100 << 10,
	BURST_JOBS = 32, /* burst: as openssl speed -async_jobs 32 */
	BURST_OPS = 64,	 /* updates per job */
	BURST_LEN = 1024,
};

static OSSL_LIB_CTX *lib; /* cryptod alone */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	failures++;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void rnd_fill(uint64_t *s, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(s);
}

/* One message of cipher name through libctx l (NULL: the default
 * provider): out gets the ciphertext, tag the GCM tag. 1 or 0. */
static int encrypt(OSSL_LIB_CTX *l, const char *name, const uint8_t *key,
		   const uint8_t *iv, const uint8_t *in, size_t len,
		   uint8_t *out, size_t *outl, uint8_t *tag)
{
	EVP_CIPHER *c = EVP_CIPHER_fetch(l, name, NULL);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int n1 = 0, n2 = 0, gcm = EVP_CIPHER_get_mode(c) == EVP_CIPH_GCM_MODE;
	int ok = c && x && EVP_EncryptInit_ex2(x, c, key, iv, NULL) &&
		 (!gcm || EVP_EncryptUpdate(x, NULL, &n1, iv, 7)) &&
		 EVP_EncryptUpdate(x, out, &n1, in, (int)len) &&
		 EVP_EncryptFinal_ex(x, out + n1, &n2) &&
		 (!gcm ||
		  EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag));
	*outl = (size_t)n1 + (size_t)n2;
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(c);
	return ok;
}

static int digest(OSSL_LIB_CTX *l, const uint8_t *in, size_t len, uint8_t *md)
{
	EVP_MD *m = EVP_MD_fetch(l, "SHA256", NULL);
	EVP_MD_CTX *x = EVP_MD_CTX_new();
	unsigned n;
	/* Two updates: past the provider's 64 KiB buffer, a stream. */
	int ok = m && x && EVP_DigestInit_ex2(x, m, NULL) &&
		 EVP_DigestUpdate(x, in, len / 3) &&
		 EVP_DigestUpdate(x, in + len / 3, len - len / 3) &&
		 EVP_DigestFinal_ex(x, md, &n);
	EVP_MD_CTX_free(x);
	EVP_MD_free(m);
	return ok;
}

struct job_arg {
	uint64_t seed;
	int index;
	int bad; /* results that differed */
};

static int one_round(uint64_t *s, struct job_arg *a)
{
	static const char *const names[] = { "AES-128-GCM", "AES-256-GCM",
					     "AES-128-CBC" };
	uint8_t key[32], iv[16], tag[16], rtag[16];
	size_t len = 1 + rnd(s) % MAX_LEN, n, rn;
	uint8_t *in = malloc(DIGEST_LEN), *out = malloc(MAX_LEN + 16),
		*ref = malloc(MAX_LEN + 16);
	int ok = in && out && ref;
	if (ok) {
		rnd_fill(s, key, sizeof(key));
		rnd_fill(s, iv, sizeof(iv));
		rnd_fill(s, in, DIGEST_LEN);
		const char *name = names[rnd(s) % 3];
		ok = encrypt(lib, name, key, iv, in, len, out, &n, tag) &&
		     encrypt(NULL, name, key, iv, in, len, ref, &rn, rtag);
		if (!ok)
			fail("job %d: %s of %zu bytes failed", a->index, name,
			     len);
		else if (n != rn || memcmp(out, ref, n) ||
			 (strstr(name, "GCM") && memcmp(tag, rtag, 16))) {
			fail("job %d: %s of %zu bytes differs", a->index, name,
			     len);
			a->bad++;
		}
	}
	uint8_t md[32], rmd[32];
	if (ok && (!digest(lib, in, DIGEST_LEN, md) ||
		   !digest(NULL, in, DIGEST_LEN, rmd) || memcmp(md, rmd, 32))) {
		fail("job %d: SHA-256 differs or failed", a->index);
		a->bad++;
	}
	free(in);
	free(out);
	free(ref);
	return ok;
}

static int job_fn(void *v)
{
	struct job_arg *a = *(struct job_arg **)v;
	uint64_t s = a->seed;
	for (int i = 0; i < ROUNDS; i++)
		if (!one_round(&s, a))
			return 0;
	return 1;
}

/* Run n jobs of fn to the end on this thread, select()ing on the wait
 * fds of the paused ones. Returns the most that were paused at once. */
static unsigned run_jobs(struct job_arg *args, unsigned n, int (*fn)(void *),
			 unsigned *pauses)
{
	ASYNC_JOB *job[BURST_JOBS] = { 0 };
	ASYNC_WAIT_CTX *wc[BURST_JOBS];
	int state[BURST_JOBS]; /* 0 to start, 1 paused, 2 done */
	unsigned most = 0;
	*pauses = 0;
	for (unsigned i = 0; i < n; i++) {
		wc[i] = ASYNC_WAIT_CTX_new();
		state[i] = 0;
	}
	for (;;) {
		unsigned paused = 0, live = 0;
		for (unsigned i = 0; i < n; i++) {
			if (state[i] == 2)
				continue;
			if (state[i] == 1) {
				paused++;
				continue;
			}
			int ret = 0;
			struct job_arg *ap = &args[i];
			int r = ASYNC_start_job(&job[i], wc[i], &ret, fn, &ap,
						sizeof(ap));
			if (r == ASYNC_PAUSE) {
				state[i] = 1;
				paused++;
				(*pauses)++;
			} else {
				if (r != ASYNC_FINISH || !ret)
					fail("job %u ended with %d/%d", i, r,
					     ret);
				state[i] = 2;
			}
		}
		if (paused > most)
			most = paused;
		fd_set rd;
		FD_ZERO(&rd);
		int maxfd = -1;
		for (unsigned i = 0; i < n; i++) {
			if (state[i] != 1)
				continue;
			live++;
			size_t nfd = 0;
			OSSL_ASYNC_FD fds[4];
			if (!ASYNC_WAIT_CTX_get_all_fds(wc[i], NULL, &nfd) ||
			    nfd > 4 ||
			    !ASYNC_WAIT_CTX_get_all_fds(wc[i], fds, &nfd))
				nfd = 0;
			/* One fd per job: openssl speed refuses more ("Too
			 * many fds in ASYNC_WAIT_CTX"). */
			if (nfd > 1)
				fail("job %u paused with %zu wait fds", i, nfd);
			for (size_t k = 0; k < nfd; k++) {
				FD_SET(fds[k], &rd);
				if (fds[k] > maxfd)
					maxfd = fds[k];
			}
			if (!nfd)
				fail("job %u paused without a wait fd", i);
		}
		if (!live)
			break;
		struct timeval tv = { .tv_sec = 30 };
		if (maxfd >= 0 &&
		    select(maxfd + 1, &rd, NULL, NULL, &tv) <= 0) {
			fail("no wait fd became ready in 30 s");
			break;
		}
		/* Resume every paused job: one fd may serve several. */
		for (unsigned i = 0; i < n; i++)
			if (state[i] == 1)
				state[i] = 0;
	}
	for (unsigned i = 0; i < n; i++)
		ASYNC_WAIT_CTX_free(wc[i]);
	return most;
}

static void async_case(uint64_t seed)
{
	struct job_arg args[JOBS];
	for (unsigned i = 0; i < JOBS; i++)
		args[i] = (struct job_arg){ .seed = seed * 31 + i + 1,
					    .index = (int)i };
	unsigned pauses;
	unsigned most = run_jobs(args, JOBS, job_fn, &pauses);
	fprintf(stderr,
		"async: %d jobs x %d rounds, %u pauses, at most %u paused at "
		"once\n",
		JOBS, ROUNDS, pauses, most);
	if (most < 2)
		fail("async: ops did not overlap (at most %u job paused)",
		     most);
}

/* burst: one context per job, BURST_OPS updates of BURST_LEN bytes, each
 * checked against a default-provider context fed the same bytes. */
static int burst_fn(void *v)
{
	struct job_arg *a = *(struct job_arg **)v;
	uint64_t s = a->seed;
	uint8_t key[16], iv[16], in[BURST_LEN], out[BURST_LEN], ref[BURST_LEN];
	rnd_fill(&s, key, sizeof(key));
	rnd_fill(&s, iv, sizeof(iv));
	EVP_CIPHER *c = EVP_CIPHER_fetch(lib, "AES-128-CBC", NULL),
		   *rc = EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new(), *rx = EVP_CIPHER_CTX_new();
	int ok = c && rc && x && rx &&
		 EVP_EncryptInit_ex2(x, c, key, iv, NULL) &&
		 EVP_EncryptInit_ex2(rx, rc, key, iv, NULL);
	for (int i = 0; ok && i < BURST_OPS; i++) {
		int n = 0, rn = 0;
		rnd_fill(&s, in, sizeof(in));
		ok = EVP_EncryptUpdate(x, out, &n, in, BURST_LEN) &&
		     EVP_EncryptUpdate(rx, ref, &rn, in, BURST_LEN);
		if (ok && (n != rn || memcmp(out, ref, (size_t)n))) {
			fail("burst: job %d, update %d differs", a->index, i);
			a->bad++;
		}
	}
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_CTX_free(rx);
	EVP_CIPHER_free(c);
	EVP_CIPHER_free(rc);
	return ok;
}

/* This process's queues' batch histogram, summed (k: runs of 2^k ..
 * 2^(k+1)-1 ops taken at once by a worker). 0, or -1. */
static int batch_hist(const char *sock, uint64_t h[8])
{
	struct cc_conn *c;
	struct cc_stats st;
	memset(h, 0, 8 * sizeof(*h));
	if (cc_connect(sock, "test_prov_async", &c) < 0)
		return -1;
	int err = cc_stats_get(c, &st);
	if (!err) {
		for (unsigned i = 0; i < st.n_queues; i++)
			if (st.queues[i].pid == (uint32_t)getpid())
				for (int k = 0; k < 8; k++)
					h[k] += st.queues[i].batch_hist[k];
		cc_stats_free(&st);
	}
	cc_disconnect(c);
	return err ? -1 : 0;
}

static void burst_case(struct fx_daemon *d, uint64_t seed)
{
	struct job_arg args[BURST_JOBS];
	uint64_t h0[8], h1[8];
	for (unsigned i = 0; i < BURST_JOBS; i++)
		args[i] = (struct job_arg){ .seed = seed * 17 + i + 1,
					    .index = (int)i };
	unsigned pauses;
	if (batch_hist(d->sock, h0)) {
		fail("burst: no stats from the daemon");
		return;
	}
	(void)run_jobs(args, BURST_JOBS, burst_fn, &pauses);
	if (batch_hist(d->sock, h1)) {
		fail("burst: no stats from the daemon");
		return;
	}
	/* Ops in runs of 4 or more, at least (a run of bucket k has 2^k
	 * ops or more), of the jobs' BURST_JOBS x BURST_OPS. */
	uint64_t runs = 0, in4 = 0;
	for (int k = 0; k < 8; k++) {
		runs += h1[k] - h0[k];
		if (k >= 2)
			in4 += (h1[k] - h0[k]) << k;
	}
	const uint64_t ops = (uint64_t)BURST_JOBS * BURST_OPS;
	fprintf(stderr,
		"burst: %u jobs x %u ops of %u bytes, %u pauses; the daemon "
		"took them in %llu runs, %llu ops or more in runs of 4+\n",
		BURST_JOBS, BURST_OPS, BURST_LEN, pauses,
		(unsigned long long)runs, (unsigned long long)in4);
	if (in4 < ops / 2)
		fail("burst: the jobs' ops did not go to the daemon together "
		     "(%llu of %llu in runs of 4 or more)",
		     (unsigned long long)in4, (unsigned long long)ops);
}

static void fork_case(uint64_t seed)
{
	uint64_t s = seed + 77;
	struct job_arg a = { .index = -1 };
	if (!one_round(&s, &a)) /* the parent's connection and queue */
		return;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct job_arg c = { .index = -2 };
		uint64_t cs = seed + 99;
		int ok = one_round(&cs, &c) && one_round(&cs, &c) && !c.bad &&
			 !failures;
		_exit(ok ? 0 : 1);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		fail("fork: the child's ops failed (status %#x)", st);
	if (!one_round(&s, &a) || a.bad)
		fail("fork: the parent's ops failed after the child");
	else
		fprintf(stderr, "fork: child and parent both served\n");
}

/* One update in a job while the daemon is stopped: the job pauses. The
 * context's session was made before (a control call, which does not
 * pause), and a GCM context's stream began. */
static uint8_t stuck_in[64 << 10], stuck_out[(64 << 10) + 16];

static int stuck_fn(void *v)
{
	EVP_CIPHER_CTX *x = *(EVP_CIPHER_CTX **)v;
	int n;
	return EVP_EncryptUpdate(x, stuck_out, &n, stuck_in,
				 (int)sizeof(stuck_in));
}

/* Is one of the job's wait fds readable within ms? */
/* Is every thread of pid stopped (state T in /proc/pid/task/N/stat)? */
static int all_stopped(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int all = 1;
	struct dirent *e;
	while (all && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat",
			 (int)pid, e->d_name);
		FILE *f = fopen(path, "r");
		const char *st = f && fgets(line, sizeof(line), f)
					 ? strrchr(line, ')')
					 : NULL;
		if (f)
			fclose(f);
		all = st && (st[2] == 'T' || st[2] == 't');
	}
	closedir(d);
	return all;
}

/*
 * SIGSTOP the daemon and wait until it has stopped. kill() returns before
 * the stop: one thread is woken to begin the group stop, and until it has
 * run, a worker woken by a doorbell can still serve an op (seen on a
 * loaded 2-vCPU machine: an op that "completed while the daemon was
 * stopped").
 */
static void daemon_stop_now(pid_t pid)
{
	kill(pid, SIGSTOP);
	for (int i = 0; i < 5000 && !all_stopped(pid); i++)
		usleep(1000);
}

static int job_ready(ASYNC_WAIT_CTX *wc, int ms)
{
	size_t n = 0;
	OSSL_ASYNC_FD fds[4];
	if (!ASYNC_WAIT_CTX_get_all_fds(wc, NULL, &n) || n == 0 || n > 4 ||
	    !ASYNC_WAIT_CTX_get_all_fds(wc, fds, &n))
		return 0;
	fd_set rd;
	FD_ZERO(&rd);
	int maxfd = -1;
	for (size_t i = 0; i < n; i++) {
		FD_SET(fds[i], &rd);
		if (fds[i] > maxfd)
			maxfd = fds[i];
	}
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };
	return select(maxfd + 1, &rd, NULL, NULL, &tv) > 0;
}

/* Two updates: the second one's wait is where the queue's doorbell gets
 * drained. */
static int stuck2_fn(void *v)
{
	return stuck_fn(v) && stuck_fn(v);
}

/*
 * Jobs A and B paused on one queue with the daemon stopped; it runs both
 * ops and is stopped again; B, resumed, takes both completions and waits
 * for its second op, draining the doorbell A sleeps on. A's wait fd must
 * still become readable (the provider's own eventfd), or A would not be
 * resumed until some other op of the queue completed, and never if none
 * were left.
 */
static void wakeup_case(struct fx_daemon *d)
{
	static const uint8_t key[16], iv[16];
	uint8_t blk[32];
	int n;
	EVP_CIPHER *c = EVP_CIPHER_fetch(lib, "AES-128-CBC", NULL);
	EVP_CIPHER_CTX *x[2] = { EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_new() };
	ASYNC_WAIT_CTX *wc[2] = { ASYNC_WAIT_CTX_new(), ASYNC_WAIT_CTX_new() };
	ASYNC_JOB *job[2] = { NULL, NULL };
	int ret[2] = { 0, 0 }, r[2] = { 0, 0 };
	int stopped = 0;
	for (int i = 0; i < 2; i++)
		if (!c || !x[i] || !wc[i] ||
		    !EVP_EncryptInit_ex2(x[i], c, key, iv, NULL) ||
		    !EVP_EncryptUpdate(x[i], blk, &n, key, 16)) {
			fail("wakeup: no context");
			goto out;
		}
	daemon_stop_now(d->pid);
	stopped = 1;
	r[0] = ASYNC_start_job(&job[0], wc[0], &ret[0], stuck_fn, &x[0],
			       sizeof(x[0]));
	r[1] = ASYNC_start_job(&job[1], wc[1], &ret[1], stuck2_fn, &x[1],
			       sizeof(x[1]));
	if (r[0] != ASYNC_PAUSE || r[1] != ASYNC_PAUSE) {
		fail("wakeup: the jobs did not pause (%d, %d)", r[0], r[1]);
		goto out;
	}
	/* A job may pause with its op staged while its wait fd is readable
	 * (prov_io.c, pq_submit): one turn of a program's loop, which
	 * resumes the jobs whose fds are readable, sends both. */
	for (int k = 0; k < 2; k++)
		if (job_ready(wc[k], 0))
			r[k] = ASYNC_start_job(&job[k], wc[k], &ret[k],
					       k ? stuck2_fn : stuck_fn, &x[k],
					       sizeof(x[k]));
	if (r[0] != ASYNC_PAUSE || r[1] != ASYNC_PAUSE) {
		fail("wakeup: the jobs finished with the daemon stopped");
		goto out;
	}
	kill(d->pid, SIGCONT);
	usleep(300000); /* both ops done */
	daemon_stop_now(d->pid);
	r[1] = ASYNC_start_job(&job[1], wc[1], &ret[1], stuck2_fn, &x[1],
			       sizeof(x[1]));
	if (r[1] != ASYNC_PAUSE) {
		fail("wakeup: B's second op did not pause (%d)", r[1]);
		goto out;
	}
	/* A's op is done and filed by B; A must be told, daemon or not. */
	if (!job_ready(wc[0], 2000))
		fail("wakeup: A's wait fd did not become readable");
	kill(d->pid, SIGCONT);
	stopped = 0;
	for (int i = 0; i < 200 && (r[0] == ASYNC_PAUSE || r[1] == ASYNC_PAUSE);
	     i++) {
		for (int k = 0; k < 2; k++)
			if (r[k] == ASYNC_PAUSE && job_ready(wc[k], 50))
				r[k] = ASYNC_start_job(&job[k], wc[k], &ret[k],
						       k ? stuck2_fn : stuck_fn,
						       &x[k], sizeof(x[k]));
	}
	if (r[0] != ASYNC_FINISH || !ret[0] || r[1] != ASYNC_FINISH || !ret[1])
		fail("wakeup: the jobs did not finish (%d/%d, %d/%d)", r[0],
		     ret[0], r[1], ret[1]);
	else
		fprintf(stderr, "wakeup: a job whose completion another took "
				"was woken\n");
out:
	if (stopped)
		kill(d->pid, SIGCONT);
	for (int i = 0; i < 2; i++) {
		ASYNC_WAIT_CTX_free(wc[i]);
		EVP_CIPHER_CTX_free(x[i]);
	}
	EVP_CIPHER_free(c);
}

/*
 * The daemon stopped with an op in flight, then killed and restarted. A
 * one-shot op (CBC: its state is the provider's) is sent again on a new
 * connection and succeeds; a piece of an AEAD stream (its state died with
 * the daemon) fails with a reason naming cryptod. Either way the next
 * message works.
 */
static void restart_case(struct fx_daemon *d, const char *name, int survives)
{
	static const uint8_t key[16], iv[16];
	uint8_t blk[32], ref[sizeof(stuck_in) + 32];
	int n;
	EVP_CIPHER *c = EVP_CIPHER_fetch(lib, name, NULL);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	ASYNC_WAIT_CTX *wc = ASYNC_WAIT_CTX_new();
	if (!c || !x || !wc || !EVP_EncryptInit_ex2(x, c, key, iv, NULL) ||
	    !EVP_EncryptUpdate(x, blk, &n, key, 16)) {
		fail("restart %s: no context", name);
		goto out;
	}
	ASYNC_JOB *job = NULL;
	int ret = 0;
	daemon_stop_now(d->pid);
	int r = ASYNC_start_job(&job, wc, &ret, stuck_fn, &x, sizeof(x));
	if (r != ASYNC_PAUSE) {
		fail("restart %s: the op did not pause with the daemon "
		     "stopped (%d)",
		     name, r);
		kill(d->pid, SIGCONT);
		goto out;
	}
	if (fx_daemon_restart(d, NULL)) {
		fail("restart: no new daemon");
		goto out;
	}
	/* Its wait fd hangs up with the old daemon: resume until done. */
	for (int i = 0; i < 100 && r == ASYNC_PAUSE; i++) {
		usleep(10000);
		r = ASYNC_start_job(&job, wc, &ret, stuck_fn, &x, sizeof(x));
	}
	if (r != ASYNC_FINISH) {
		fail("restart %s: the job did not finish (%d)", name, r);
		goto out;
	}
	if (survives) {
		/* CBC from a zero IV over 16 zero bytes, then the rest. */
		size_t rn;
		uint8_t *whole = calloc(1, 16 + sizeof(stuck_in));
		int same = whole &&
			   encrypt(NULL, name, key, iv, whole,
				   16 + sizeof(stuck_in), ref, &rn, NULL) &&
			   !memcmp(ref + 16, stuck_out, sizeof(stuck_in));
		free(whole);
		if (!ret || !same)
			fail("restart %s: the op in flight was not served "
			     "again (%d)",
			     name, ret);
	} else if (ret) {
		fail("restart %s: the stream's op in flight did not fail",
		     name);
	} else if (!pfx_err_names_cryptod()) {
		fail("restart %s: the in-flight op's error does not name "
		     "cryptod",
		     name);
	}
	/* The same context goes on, on a new connection. */
	if (!EVP_EncryptInit_ex2(x, NULL, key, iv, NULL) ||
	    !EVP_EncryptUpdate(x, blk, &n, key, 16) || n != 16)
		fail("restart %s: the context failed on the new daemon", name);
	uint64_t s = 5;
	struct job_arg a = { .index = -3 };
	if (!one_round(&s, &a) || a.bad)
		fail("restart %s: the next ops failed on the new daemon", name);
	else
		fprintf(stderr, "restart %s: in-flight op %s, next served\n",
			name, survives ? "sent again" : "failed");
out:
	ASYNC_WAIT_CTX_free(wc);
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(c);
}

/* Two messages sharing a prefix: prefix || a and prefix || b. */
struct dupmsg {
	uint8_t key[32], iv[12], aad[20];
	uint8_t *pre, *a, *b;
	size_t npre, na, nb;
};

static int aead_ref(const char *name, const struct dupmsg *m, int second,
		    uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, NULL);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int n;
	int ok = c && x && EVP_EncryptInit_ex2(x, c, m->key, m->iv, NULL) &&
		 EVP_EncryptUpdate(x, NULL, &n, m->aad, sizeof(m->aad)) &&
		 EVP_EncryptUpdate(x, out, &n, m->pre, (int)m->npre) &&
		 EVP_EncryptUpdate(x, out + m->npre, &n, second ? m->b : m->a,
				   (int)(second ? m->nb : m->na)) &&
		 EVP_EncryptFinal_ex(x, out, &n) &&
		 EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(c);
	return ok;
}

static void dup_aead(uint64_t *s, const char *name)
{
	struct dupmsg m;
	rnd_fill(s, m.key, sizeof(m.key));
	rnd_fill(s, m.iv, sizeof(m.iv));
	rnd_fill(s, m.aad, sizeof(m.aad));
	m.npre = 1 + rnd(s) % 70000;
	m.na = rnd(s) % 5000;
	m.nb = 1 + rnd(s) % 5000;
	size_t tot = m.npre + m.na + m.nb;
	uint8_t *buf = malloc(tot), *o1 = malloc(tot), *o2 = malloc(tot),
		*r1 = malloc(tot), *r2 = malloc(tot);
	uint8_t t1[16], t2[16], rt1[16], rt2[16];
	EVP_CIPHER *c = EVP_CIPHER_fetch(lib, name, NULL);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new(), *y = EVP_CIPHER_CTX_new();
	int n, ok = buf && o1 && o2 && r1 && r2 && c && x && y;
	if (ok) {
		rnd_fill(s, buf, tot);
		m.pre = buf;
		m.a = buf + m.npre;
		m.b = m.a + m.na;
		ok = EVP_EncryptInit_ex2(x, c, m.key, m.iv, NULL) &&
		     EVP_EncryptUpdate(x, NULL, &n, m.aad, sizeof(m.aad)) &&
		     EVP_EncryptUpdate(x, o1, &n, m.pre, (int)m.npre) &&
		     EVP_CIPHER_CTX_copy(y, x);
		memcpy(o2, o1, m.npre);
		/* The copy first, then the original: both go on. */
		ok = ok &&
		     EVP_EncryptUpdate(y, o2 + m.npre, &n, m.b, (int)m.nb) &&
		     EVP_EncryptUpdate(x, o1 + m.npre, &n, m.a, (int)m.na) &&
		     EVP_EncryptFinal_ex(y, o2, &n) &&
		     EVP_EncryptFinal_ex(x, o1, &n) &&
		     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, t1) &&
		     EVP_CIPHER_CTX_ctrl(y, EVP_CTRL_AEAD_GET_TAG, 16, t2);
		if (!ok) {
			ERR_print_errors_fp(stderr);
			fail("dup %s: an EVP call failed", name);
		} else if (!aead_ref(name, &m, 0, r1, rt1) ||
			   !aead_ref(name, &m, 1, r2, rt2) ||
			   memcmp(o1, r1, m.npre + m.na) ||
			   memcmp(t1, rt1, 16) ||
			   memcmp(o2, r2, m.npre + m.nb) ||
			   memcmp(t2, rt2, 16)) {
			fail("dup %s (%zu + %zu / %zu bytes) differs", name,
			     m.npre, m.na, m.nb);
		}
	}
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_CTX_free(y);
	EVP_CIPHER_free(c);
	free(buf);
	free(o1);
	free(o2);
	free(r1);
	free(r2);
}

/* A digest (key NULL) or HMAC of prefix || tail through l. */
static int hash_ref(OSSL_LIB_CTX *l, const uint8_t *key, const uint8_t *pre,
		    size_t npre, const uint8_t *tail, size_t ntail, uint8_t *md,
		    EVP_MD_CTX **keep_md, EVP_MAC_CTX **keep_mac)
{
	size_t n;
	unsigned u;
	if (!key) {
		EVP_MD *d = EVP_MD_fetch(l, "SHA256", NULL);
		EVP_MD_CTX *x = EVP_MD_CTX_new();
		int ok = d && x && EVP_DigestInit_ex2(x, d, NULL) &&
			 EVP_DigestUpdate(x, pre, npre);
		EVP_MD_CTX *y = NULL;
		if (ok && keep_md) {
			y = EVP_MD_CTX_new();
			ok = y && EVP_MD_CTX_copy_ex(y, x);
		}
		ok = ok && EVP_DigestUpdate(x, tail, ntail) &&
		     EVP_DigestFinal_ex(x, md, &u);
		EVP_MD_CTX_free(x);
		EVP_MD_free(d);
		if (keep_md)
			*keep_md = y;
		return ok;
	}
	EVP_MAC *mac = EVP_MAC_fetch(l, "HMAC", NULL);
	EVP_MAC_CTX *x = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM ps[] = { OSSL_PARAM_utf8_string("digest", "SHA256", 0),
			    OSSL_PARAM_END };
	int ok = x && EVP_MAC_init(x, key, 32, ps) &&
		 EVP_MAC_update(x, pre, npre);
	EVP_MAC_CTX *y = NULL;
	if (ok && keep_mac)
		ok = (y = EVP_MAC_CTX_dup(x)) != NULL;
	ok = ok && EVP_MAC_update(x, tail, ntail) &&
	     EVP_MAC_final(x, md, &n, 32);
	EVP_MAC_CTX_free(x);
	EVP_MAC_free(mac);
	if (keep_mac)
		*keep_mac = y;
	return ok;
}

static void dup_hash(uint64_t *s, int hmac)
{
	uint8_t key[32], md1[32], md2[32], r1[32], r2[32];
	size_t npre = 70000 + rnd(s) % 200000, na = rnd(s) % 3000,
	       nb = rnd(s) % 3000;
	uint8_t *buf = malloc(npre + na + nb);
	if (!buf)
		return;
	rnd_fill(s, key, sizeof(key));
	rnd_fill(s, buf, npre + na + nb);
	const uint8_t *k = hmac ? key : NULL, *a = buf + npre, *b = a + na;
	EVP_MD_CTX *ym = NULL;
	EVP_MAC_CTX *yc = NULL;
	size_t n;
	unsigned u;
	/* Past the 64 KiB buffer, so the state is the daemon's. */
	int ok = hash_ref(lib, k, buf, npre, a, na, md1, hmac ? NULL : &ym,
			  hmac ? &yc : NULL) &&
		 (hmac ? EVP_MAC_update(yc, b, nb) &&
				  EVP_MAC_final(yc, md2, &n, 32)
		       : EVP_DigestUpdate(ym, b, nb) &&
				  EVP_DigestFinal_ex(ym, md2, &u));
	if (!ok) {
		ERR_print_errors_fp(stderr);
		fail("dup %s: an EVP call failed", hmac ? "HMAC" : "SHA-256");
	} else if (!hash_ref(NULL, k, buf, npre, a, na, r1, NULL, NULL) ||
		   !hash_ref(NULL, k, buf, npre, b, nb, r2, NULL, NULL) ||
		   memcmp(md1, r1, 32) || memcmp(md2, r2, 32)) {
		fail("dup %s (%zu + %zu / %zu bytes) differs",
		     hmac ? "HMAC" : "SHA-256", npre, na, nb);
	}
	EVP_MD_CTX_free(ym);
	EVP_MAC_CTX_free(yc);
	free(buf);
}

static void dup_case(uint64_t seed)
{
	uint64_t s = seed * 7 + 3;
	for (int i = 0; i < 8; i++) {
		dup_aead(&s, "AES-128-GCM");
		dup_aead(&s, "AES-256-GCM");
		dup_aead(&s, "ChaCha20-Poly1305");
		dup_hash(&s, 0);
		dup_hash(&s, 1);
	}
	fprintf(stderr, "dup: AEAD, SHA-256 and HMAC contexts copied "
			"mid-message\n");
}

int main(void)
{
	pfx_need_daemon();
	uint64_t seed = pfx_seed();
	struct fx_daemon d;
	OSSL_PROVIDER *prov;
	if (pfx_start(&d, &lib, &prov))
		return FX_EXIT_FAIL;
	async_case(seed | 1);
	burst_case(&d, seed | 1);
	fork_case(seed | 1);
	dup_case(seed | 1);
	wakeup_case(&d);
	restart_case(&d, "AES-128-CBC", 1);
	restart_case(&d, "AES-128-GCM", 0);
	int st = pfx_stop(&d, lib, prov);
	return pfx_verdict(st, seed);
}
