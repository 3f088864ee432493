// SPDX-License-Identifier: MIT
/*
 * Integration-test fixture: start and stop a real cryptod, run bursts.
 *
 * The daemon is a child process in its own temp dir. If a test bails out
 * with exit() while the daemon still runs, an atexit handler kills it and
 * removes the dir; PR_SET_PDEATHSIG covers the test being killed outright,
 * so a crashed test never leaves a daemon behind to confuse the next run.
 */
#include "fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CRYPTOD_BIN
#error "CRYPTOD_BIN must name the daemon binary (set by CMake)"
#endif

#define FX_POLL_MS 10

/* The one daemon the atexit handler must not leave behind. */
static struct fx_daemon *fx_running;
/* Early cc_wait() time-outs reported so far: a few tell the story. */
static unsigned fx_early_wait_notes;

uint64_t fx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void fx_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void fx_describe_status(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(st),
			 strsignal(WTERMSIG(st)),
			 WCOREDUMP(st) ? ", core dumped" : "");
	else
		snprintf(buf, len, "wait status 0x%x", st);
}

static int fx_rm_cb(const char *path, const struct stat *sb, int type,
		    struct FTW *ftw)
{
	if (remove(path) < 0)
		fprintf(stderr, "fixture: remove %s: %s\n", path,
			strerror(errno));
	return 0; /* keep going: remove as much as we can */
}

static void fx_rmdir(struct fx_daemon *d)
{
	if (!d->dir[0])
		return;
	nftw(d->dir, fx_rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	d->dir[0] = '\0';
}

/* Last resort on exit(): no status check, just leave nothing behind. */
static void fx_atexit(void)
{
	struct fx_daemon *d = fx_running;

	if (!d)
		return;
	fx_running = NULL;
	if (d->pid > 0) {
		fprintf(stderr,
			"fixture: test exited with the daemon running; killing "
			"pid %d\n",
			(int)d->pid);
		kill(d->pid, SIGKILL);
		waitpid(d->pid, NULL, 0);
		d->pid = 0;
	}
	fx_rmdir(d);
}

/* Reap the child, waiting at most timeout_ms. Returns 1 and the status,
 * 0 if it still runs, or -errno. */
static int fx_reap(pid_t pid, int *st, unsigned timeout_ms)
{
	uint64_t deadline = fx_now_ms() + timeout_ms;

	for (;;) {
		pid_t w = waitpid(pid, st, WNOHANG);

		if (w == pid)
			return 1;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (fx_now_ms() >= deadline)
			return 0;
		fx_sleep_ms(FX_POLL_MS);
	}
}

static void fx_kill_and_clean(struct fx_daemon *d)
{
	kill(d->pid, SIGKILL);
	waitpid(d->pid, NULL, 0);
	d->pid = 0;
	fx_running = NULL;
	fx_rmdir(d);
}

static const char *fx_log_level(const struct fx_daemon_params *p)
{
	const char *env = getenv("CRYPTOD_TEST_LOG_LEVEL");

	if (p && p->log_level)
		return p->log_level;
	/* warn by default: tests create tens of thousands of sessions, and
	 * per-session info lines would drown the test's own output. */
	return env && *env ? env : "warn";
}

static pid_t fx_spawn(const char *bin, char *const argv[], unsigned nofile)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	int fd;

	if (pid != 0)
		return pid < 0 ? -errno : pid;

	/* Child: die with the test, even if it is SIGKILLed. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0 && fd != STDIN_FILENO) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	if (nofile) {
		struct rlimit rl = { nofile, nofile };
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(126);
	}
	execv(bin, argv);
	fprintf(stderr, "fixture: exec %s: %s\n", bin, strerror(errno));
	_exit(127);
}

/* Start the daemon on d->sock (d->dir exists) and wait until a client
 * can connect. On failure nothing is left running and the dir is gone. */
static int fx_launch(struct fx_daemon *d, const struct fx_daemon_params *p,
		     const char *bin)
{
	char workers[16], why[96];
	char *argv[12 + FX_EXTRA_ARGS];
	uint64_t deadline;
	int argc = 0, st;

	argv[argc++] = (char *)bin;
	argv[argc++] = "--socket";
	argv[argc++] = d->sock;
	argv[argc++] = "--log-level";
	argv[argc++] = (char *)fx_log_level(p);
	if (p && p->workers) {
		snprintf(workers, sizeof(workers), "%u", p->workers);
		argv[argc++] = "--workers";
		argv[argc++] = workers;
	}
	if (p && p->config) {
		argv[argc++] = "--config";
		argv[argc++] = (char *)p->config;
	} else {
		argv[argc++] = "--no-config";
	}
	for (unsigned i = 0; p && p->args && p->args[i]; i++) {
		if (i == FX_EXTRA_ARGS) {
			fprintf(stderr, "fixture: more than %d extra args\n",
				FX_EXTRA_ARGS);
			fx_rmdir(d);
			return -E2BIG;
		}
		argv[argc++] = (char *)p->args[i];
	}
	argv[argc] = NULL;

	/* Flush first so buffered output is not duplicated by the child. */
	fflush(NULL);
	d->pid = fx_spawn(bin, argv, p ? p->nofile : 0);
	if (d->pid < 0) {
		int err = d->pid;

		fprintf(stderr, "fixture: fork: %s\n", strerror(-err));
		d->pid = 0;
		fx_rmdir(d);
		return err;
	}
	fx_running = d;

	/* Ready means "a client can connect", not "the socket file exists":
	 * the daemon may bind before it listens or before it answers Hello. */
	/* Emulated CPUs (the VM suite) start a daemon far more slowly. */
	uint64_t start_ms = getenv("CRYPTOD_VM") ? 10 * FX_START_TIMEOUT_MS
						 : FX_START_TIMEOUT_MS;
	deadline = fx_now_ms() + start_ms;
	for (;;) {
		struct cc_conn *c;
		int r = cc_connect(d->sock, "fixture-probe", &c);

		if (r == 0) {
			cc_disconnect(c);
			return 0;
		}
		if (fx_reap(d->pid, &st, 0) == 1) {
			fx_describe_status(st, why, sizeof(why));
			fprintf(stderr,
				"fixture: daemon %s during start-up (last "
				"cc_connect: %s)\n",
				why, cc_strerror(r));
			d->pid = 0;
			fx_running = NULL;
			fx_rmdir(d);
			return -ECHILD;
		}
		if (fx_now_ms() >= deadline) {
			fprintf(stderr,
				"fixture: daemon not accepting on %s after %llu "
				"ms (last cc_connect: %s)\n",
				d->sock, (unsigned long long)start_ms,
				cc_strerror(r));
			fx_kill_and_clean(d);
			return -ETIMEDOUT;
		}
		fx_sleep_ms(FX_POLL_MS);
	}
}

int fx_daemon_start(struct fx_daemon *d, const struct fx_daemon_params *p)
{
	static int atexit_done;
	const char *bin = getenv("CRYPTOD_BIN");
	const char *tmp = getenv("TMPDIR");
	int n;

	memset(d, 0, sizeof(*d));
	if (!bin || !*bin)
		bin = CRYPTOD_BIN;
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (access(bin, X_OK) < 0) {
		fprintf(stderr, "fixture: daemon %s: %s\n", bin,
			strerror(errno));
		return -ENOENT;
	}

	n = snprintf(d->dir, sizeof(d->dir), "%s/cryptod-test.XXXXXX", tmp);
	if (n < 0 || (size_t)n >= sizeof(d->dir))
		return -ENAMETOOLONG;
	if (!mkdtemp(d->dir)) {
		int err = -errno;

		fprintf(stderr, "fixture: mkdtemp %s: %s\n", d->dir,
			strerror(errno));
		d->dir[0] = '\0';
		return err;
	}
	n = snprintf(d->sock, sizeof(d->sock), "%s/cryptod.sock", d->dir);
	if (n < 0 || (size_t)n >= sizeof(d->sock)) {
		fprintf(stderr, "fixture: socket path under %s too long\n",
			d->dir);
		fx_rmdir(d);
		return -ENAMETOOLONG;
	}

	if (!atexit_done) {
		atexit(fx_atexit);
		atexit_done = 1;
	}
	return fx_launch(d, p, bin);
}

int fx_daemon_restart(struct fx_daemon *d, const struct fx_daemon_params *p)
{
	const char *bin = getenv("CRYPTOD_BIN");
	int st;

	if (!bin || !*bin)
		bin = CRYPTOD_BIN;
	if (d->pid > 0) {
		kill(d->pid, SIGKILL);
		/* Wait for the death, not 1 ms: until the kernel has torn the
		 * process down its listener still accepts, and the new daemon
		 * rightly refuses to take over a socket that is served. */
		if (fx_reap(d->pid, &st, FX_STOP_TIMEOUT_MS) != 1)
			fprintf(stderr,
				"fixture: killed daemon %d not reaped\n",
				(int)d->pid);
		d->pid = 0;
		fx_running = NULL;
	}
	/* The socket file stays behind: the new daemon must see it is stale
	 * and take it over. */
	return fx_launch(d, p, bin);
}

int fx_daemon_stop(struct fx_daemon *d)
{
	char why[96];
	int r, st;

	if (d->pid <= 0) {
		fx_rmdir(d);
		return -ESRCH;
	}
	if (kill(d->pid, SIGTERM) < 0)
		fprintf(stderr, "fixture: SIGTERM: %s\n", strerror(errno));
	r = fx_reap(d->pid, &st, FX_STOP_TIMEOUT_MS);
	if (r <= 0) {
		fprintf(stderr,
			"fixture: daemon did not exit within %d ms of SIGTERM; "
			"killing it\n",
			FX_STOP_TIMEOUT_MS);
		fx_kill_and_clean(d);
		return r < 0 ? r : -ETIMEDOUT;
	}
	d->pid = 0;
	fx_running = NULL;
	fx_rmdir(d);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	fx_describe_status(st, why, sizeof(why));
	fprintf(stderr, "fixture: daemon %s after SIGTERM (want exit 0)\n",
		why);
	return -EIO;
}

int fx_run_burst(struct cc_queue *q, const struct cc_op *ops, unsigned n,
		 struct cc_completion *comps, int timeout_ms)
{
	uint64_t deadline = fx_now_ms() + (uint64_t)timeout_ms;
	unsigned sent = 0, got = 0, i;
	int r;

	while (got < n) {
		if (sent < n) {
			r = cc_enqueue_burst(q, ops + sent, n - sent);
			if (r < 0) {
				fprintf(stderr,
					"fixture: enqueue of op %u: %s\n", sent,
					cc_strerror(r));
				return r;
			}
			if ((unsigned)r > n - sent) {
				fprintf(stderr,
					"fixture: enqueue took %d of %u ops\n",
					r, n - sent);
				return -EPROTO;
			}
			sent += (unsigned)r;
		}

		r = cc_dequeue_burst(q, comps + got, n - got);
		if (r < 0) {
			fprintf(stderr, "fixture: dequeue: %s\n",
				cc_strerror(r));
			return r;
		}
		if (got + (unsigned)r > sent) {
			fprintf(stderr,
				"fixture: %u completions for %u submitted "
				"ops\n",
				got + r, sent);
			return -EPROTO;
		}
		for (i = got; i < got + (unsigned)r; i++) {
			if (comps[i].user_data == ops[i].user_data)
				continue;
			fprintf(stderr,
				"fixture: completion %u of %u has user_data "
				"0x%llx, submitted 0x%llx: out of order\n",
				i, n, (unsigned long long)comps[i].user_data,
				(unsigned long long)ops[i].user_data);
			return -EPROTO;
		}
		got += (unsigned)r;
		if (got == n || r > 0)
			continue;

		uint64_t now = fx_now_ms();

		if (now >= deadline) {
			fprintf(stderr,
				"fixture: %u of %u completions after %d ms (%u "
				"submitted, in flight %u)\n",
				got, n, timeout_ms, sent, cc_in_flight(q));
			return -ETIMEDOUT;
		}
		r = cc_wait(q, (int)(deadline - now));
		if (r < 0) {
			fprintf(stderr, "fixture: cc_wait: %s\n",
				cc_strerror(r));
			return r;
		}
		/* 0 means "timed out"; a 0 long before the deadline is a
		 * library bug we tolerate here (the loop waits again) but
		 * name, because cc_crypt() takes it at its word. */
		if (r == 0 && fx_now_ms() + 100 < deadline &&
		    fx_early_wait_notes++ < 3)
			fprintf(stderr,
				"fixture: note: cc_wait(%llu ms) returned 0 "
				"(time-out) after %llu ms with ops in flight\n",
				(unsigned long long)(deadline - now),
				(unsigned long long)(fx_now_ms() - now));
	}
	return 0;
}

int fx_crypt(struct cc_conn *conn, uint32_t session, enum cc_dir dir,
	     const void *iv, unsigned iv_len, const void *aad, size_t aad_len,
	     const void *in, void *out, size_t len, void *tag)
{
	uint64_t t0 = fx_now_ms();
	int r = cc_crypt(conn, session, dir, iv, iv_len, aad, aad_len, in, out,
			 len, tag);

	if (r == -ETIMEDOUT)
		fprintf(stderr,
			"fixture: note: cc_crypt() returned -ETIMEDOUT "
			"after %llu ms\n",
			(unsigned long long)(fx_now_ms() - t0));
	return r;
}

int fx_engine_wanted(const char *name)
{
	const char *only = getenv("CRYPTOD_TEST_ENGINES");
	if (!only || !*only)
		return 1;
	size_t l = strlen(name);
	for (const char *p = only; (p = strstr(p, name)); p += l)
		if ((p == only || p[-1] == ',') &&
		    (p[l] == ',' || p[l] == '\0'))
			return 1;
	return 0;
}

int fx_engines_for(struct cc_conn *conn, enum cc_alg alg,
		   char names[][FX_ENGINE_NAME_MAX], unsigned max)
{
	static const uint8_t probe_key[16]; /* a probe, not a secret */
	struct cc_stats st;
	unsigned i, n = 0;
	int r;

	r = cc_stats_get(conn, &st);
	if (r) {
		fprintf(stderr, "fixture: cc_stats_get: %s\n", cc_strerror(r));
		return r;
	}
	for (i = 0; i < st.n_engines && n < max; i++) {
		if (!fx_engine_wanted(st.engines[i].name))
			continue;
		struct cc_session_params sp = {
			.alg = alg,
			.key = alg == CC_ALG_NULL ? NULL : probe_key,
			.key_len = alg == CC_ALG_NULL ? 0 : sizeof(probe_key),
			.engine = st.engines[i].name,
		};
		uint32_t sid;

		r = cc_session_create(conn, &sp, &sid);
		if (r) {
			printf("engine %s: refuses alg %d (%s), not tested\n",
			       st.engines[i].name, (int)alg, cc_strerror(r));
			continue;
		}
		r = cc_session_destroy(conn, sid);
		if (r) {
			fprintf(stderr, "fixture: cc_session_destroy: %s\n",
				cc_strerror(r));
			cc_stats_free(&st);
			return r;
		}
		snprintf(names[n++], FX_ENGINE_NAME_MAX, "%s",
			 st.engines[i].name);
	}
	cc_stats_free(&st);
	return (int)n;
}

int fx_iv_ok(struct cc_conn *conn, enum cc_alg alg, const char *engine,
	     unsigned iv_len)
{
	struct cc_alg_caps *caps;
	unsigned n;
	int r = cc_capabilities_get(conn, &caps, &n);
	if (r)
		return r;
	int ok = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct cc_alg_caps *c = &caps[i];
		if (c->alg != alg || !c->available ||
		    (engine ? strcmp(engine, c->engine) : !c->default_engine))
			continue;
		if (fx_range_has(c->iv_sizes, c->n_iv_sizes, iv_len))
			ok = 1;
	}
	cc_capabilities_free(caps);
	return ok;
}

int fx_range_has(const struct cc_range *r, unsigned n, uint32_t v)
{
	for (unsigned i = 0; i < n; i++)
		if (v >= r[i].min && v <= r[i].max &&
		    (v == r[i].min ||
		     (r[i].increment && (v - r[i].min) % r[i].increment == 0)))
			return 1;
	return 0;
}

int fx_setup(struct fx_daemon *d, const struct fx_daemon_params *p,
	     const char *name, const struct cc_queue_params *qp,
	     struct cc_conn **conn, struct cc_queue **q)
{
	int r = fx_daemon_start(d, p);
	if (r) {
		fprintf(stderr, "FAIL: cannot start the daemon: %s\n",
			cc_strerror(r));
		return r;
	}
	r = cc_connect(d->sock, name, conn);
	if (r) {
		fprintf(stderr, "FAIL: cc_connect: %s\n", cc_strerror(r));
		fx_daemon_stop(d);
		return r;
	}
	r = cc_queue_open(*conn, qp, q);
	if (r) {
		fprintf(stderr, "FAIL: cc_queue_open: %s\n", cc_strerror(r));
		cc_disconnect(*conn);
		fx_daemon_stop(d);
		return r;
	}
	return 0;
}

int fx_setup_null(struct fx_daemon *d, const struct fx_daemon_params *p,
		  const char *name, const struct cc_queue_params *qp,
		  struct cc_conn **conn, struct cc_queue **q, uint32_t *sid)
{
	int r = fx_setup(d, p, name, qp, conn, q);
	if (r)
		return r;
	struct cc_session_params sp = { .alg = CC_ALG_NULL };
	r = cc_session_create(*conn, &sp, sid);
	if (r) {
		fprintf(stderr, "FAIL: null session: %s\n", cc_strerror(r));
		fx_teardown(d, *conn, *q);
	}
	return r;
}

int fx_teardown(struct fx_daemon *d, struct cc_conn *conn, struct cc_queue *q)
{
	int r;

	cc_queue_close(q);
	cc_disconnect(conn);
	r = fx_daemon_stop(d);
	if (r)
		fprintf(stderr, "FAIL: daemon stop: %s\n", cc_strerror(r));
	return r;
}
