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
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/async.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "../integration/fixture.h"

enum { JOBS = 16, ROUNDS = 12, MAX_LEN = 48 << 10, DIGEST_LEN = 100 << 10 };

static OSSL_LIB_CTX *lib; /* cryptod alone */
static int failures;

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
static unsigned run_jobs(struct job_arg *args, unsigned n, unsigned *pauses)
{
	ASYNC_JOB *job[JOBS] = { 0 };
	ASYNC_WAIT_CTX *wc[JOBS];
	int state[JOBS]; /* 0 to start, 1 paused, 2 done */
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
			int r = ASYNC_start_job(&job[i], wc[i], &ret, job_fn,
						&ap, sizeof(ap));
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
	unsigned most = run_jobs(args, JOBS, &pauses);
	fprintf(stderr,
		"async: %d jobs x %d rounds, %u pauses, at most %u paused at "
		"once\n",
		JOBS, ROUNDS, pauses, most);
	if (most < 2)
		fail("async: ops did not overlap (at most %u job paused)",
		     most);
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

static int err_names_cryptod(void)
{
	char buf[256] = "";
	unsigned long e = ERR_peek_last_error();
	ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return strstr(buf, "cryptod") != NULL;
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
	kill(d->pid, SIGSTOP);
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
	} else if (!err_names_cryptod()) {
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

int main(void)
{
	if (access(CRYPTOD_BIN, X_OK) && !getenv("CRYPTOD_BIN")) {
		fprintf(stderr, "SKIP: no daemon at %s\n", CRYPTOD_BIN);
		return FX_EXIT_SKIP;
	}
	uint64_t seed = getenv("TEST_SEED")
				? strtoull(getenv("TEST_SEED"), NULL, 0)
				: (uint64_t)time(NULL);
	fprintf(stderr, "TEST_SEED=%llu\n", (unsigned long long)seed);
	struct fx_daemon d;
	if (fx_daemon_start(&d, NULL))
		return FX_EXIT_FAIL;
	setenv("CRYPTOD_SOCKET", d.sock, 1);
	lib = OSSL_LIB_CTX_new();
	OSSL_PROVIDER_set_default_search_path(lib, CRYPTOD_PROVIDER_DIR);
	OSSL_PROVIDER *prov = OSSL_PROVIDER_load(lib, "cryptod");
	if (!prov) {
		ERR_print_errors_fp(stderr);
		fx_daemon_stop(&d);
		return FX_EXIT_FAIL;
	}
	async_case(seed | 1);
	fork_case(seed | 1);
	restart_case(&d, "AES-128-CBC", 1);
	restart_case(&d, "AES-128-GCM", 0);
	OSSL_PROVIDER_unload(prov);
	OSSL_LIB_CTX_free(lib);
	int st = fx_daemon_stop(&d);
	if (failures || st) {
		fprintf(stderr, "FAIL: %d failures (TEST_SEED=%llu)\n",
			failures, (unsigned long long)seed);
		return FX_EXIT_FAIL;
	}
	fprintf(stderr, "PASS\n");
	return FX_EXIT_PASS;
}
