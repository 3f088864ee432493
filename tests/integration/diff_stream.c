// SPDX-License-Identifier: MIT
/*
 * What the test_diff_stream* programs share (diff_stream.h).
 */
#include "diff_stream.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

int sanitized;
int allow_missing;
uint64_t seed;

unsigned var_index(const struct sc_var *v)
{
	return (unsigned)(v - sc_vars);
}

void fail(struct client *c, const char *ctx, const char *fmt, ...)
{
	va_list ap;

	c->failed++;
	if (c->shown++ >= SHOW_MAX)
		return;
	fprintf(stderr, "FAIL client %u: %s: ", c->id, ctx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void show_stream(struct client *c, const struct sc_stream *s)
{
	char d[160];

	if (c->shown > SHOW_MAX)
		return;
	sc_msg_desc(s->m, d, sizeof(d));
	fprintf(stderr, "  stream %s, %s, %s, handle 0x%x\n", d,
		s->dir == CC_ENCRYPT ? "encrypt" : "decrypt",
		s->inplace ? "in place" : "out of place", s->handle);
	sc_print_cuts(stderr, s->cuts, s->n);
}

/* A FIRST that failed -EOPNOTSUPP: the algorithm does not stream (yet). */
void note_missing(struct client *c, const struct sc_var *v)
{
	if (c->missing[var_index(v)])
		return;
	c->missing[var_index(v)] = 1;
	c->missing_n++;
	if (allow_missing) {
		printf("client %u: %s does not stream yet (FIRST: %s): "
		       "skipped (STREAM_ALLOW_MISSING=1)\n",
		       c->id, v->name, cc_strerror(-EOPNOTSUPP));
	} else {
		fail(c, v->name,
		     "FIRST piece failed with %s: the algorithm must stream "
		     "(STREAM_ALLOW_MISSING=1 skips it)",
		     cc_strerror(-EOPNOTSUPP));
	}
}

uint32_t rnd_msg_len(void)
{
	uint32_t r = mc_below(100), div = sanitized ? 4 : 1;

	if (r < 20)
		return mc_below(257);
	if (r < 50)
		return mc_below(8193);
	if (r < 85)
		return mc_below((256u << 10) / div + 1);
	return (256u << 10) / div + mc_below((3u << 20) / div);
}

/* ---- Rounds: several streams in one queue, pieces interleaved ---- */

void ds_begin(const char *extra)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	sanitized = sc_sanitized();
	allow_missing = sc_allow_missing();
	seed = sc_seed(SC_SEED_DEFAULT);
	sc_engine_init();
	printf("seed 0x%016llx (set STREAM_SEED to reproduce)%s%s%s%s%s\n",
	       (unsigned long long)seed,
	       sanitized ? "; sanitizer build: sizes scaled down" : "",
	       allow_missing ? "; STREAM_ALLOW_MISSING=1" : "",
	       sc_engine ? "; STREAM_ENGINE=" : "", sc_engine ? sc_engine : "",
	       extra);
}

int ds_client_open(const struct fx_daemon *d, unsigned id, struct client *c)
{
	struct cc_queue_params qp = {
		.sq_entries = SQ_ENTRIES,
		.arena_size = ARENA,
	};
	unsigned k;
	int r;

	*c = (struct client){ .id = id };
	mc_srand(seed ^ (0x1000003ull * (id + 1)));
	r = cc_connect(d->sock, "test_diff_stream", &c->conn);
	for (k = 0; !r && k < QUEUES; k++)
		r = cc_queue_open(c->conn, &qp, &c->q[k]);
	if (r) {
		fprintf(stderr, "FAIL client %u: connect or queue: %s\n", id,
			cc_strerror(r));
		return -1;
	}
	/* A named engine runs what its capabilities say it streams; the
	 * rest is left out (and said), not failed. */
	for (k = 0; k < sc_n_vars && sc_engine; k++) {
		c->skip[k] = !sc_engine_streams(c->conn, sc_vars[k].alg);
		if (c->skip[k] && k % STREAM_CLIENTS == id)
			printf("client %u: %s does not stream on %s: "
			       "skipped\n",
			       id, sc_vars[k].name, sc_engine);
	}
	return 0;
}

int ds_client_close(struct client *c, uint64_t t0)
{
	unsigned vi, k, missing = 0;

	for (k = 0; k < QUEUES; k++)
		cc_queue_close(c->q[k]);
	cc_disconnect(c->conn);
	for (vi = 0; vi < sc_n_vars; vi++)
		missing += c->missing[vi];
	printf("client %u: %lu checks, %lu failed (%lu of them pieces that "
	       "completed OK with a wrong length)%s, %u algorithms skipped "
	       "(%llu ms)\n",
	       c->id, c->checked, c->failed, c->len_bad,
	       c->fatal ? " (stopped early)" : "", missing,
	       (unsigned long long)(fx_now_ms() - t0));
	if (c->failed || c->fatal || (!c->checked && !missing))
		return FX_EXIT_FAIL;
	if (missing && !allow_missing)
		return FX_EXIT_FAIL;
	return FX_EXIT_PASS;
}

int ds_run(unsigned n, int (*child)(const struct fx_daemon *d, unsigned k))
{
	/* HMAC keys shorter than 16 bytes are legal, and SHA has none. */
	static const char *const args[] = { "--set", "keys.min_bits=0", NULL };
	struct fx_daemon_params dp = { .workers = 2, .args = args };
	struct fx_daemon d;
	pid_t pid[8];
	unsigned k;
	uint64_t t0 = fx_now_ms();
	int fails = 0, st;

	if (n > 8 || fx_daemon_start(&d, &dp))
		return FX_EXIT_FAIL;
	fflush(NULL);
	for (k = 0; k < n; k++) {
		pid[k] = fork();
		if (pid[k] == 0)
			_exit(child(&d, k));
		if (pid[k] < 0) {
			fprintf(stderr, "FAIL: fork: %s\n", strerror(errno));
			fails++;
		}
	}
	for (k = 0; k < n; k++) {
		if (pid[k] <= 0)
			continue;
		if (waitpid(pid[k], &st, 0) != pid[k] || !WIFEXITED(st)) {
			fprintf(stderr, "FAIL: client %u died (status 0x%x)\n",
				k, st);
			fails++;
		} else if (WEXITSTATUS(st) != FX_EXIT_PASS &&
			   WEXITSTATUS(st) != FX_EXIT_SKIP) {
			fails++;
		}
	}
	if (fx_daemon_stop(&d)) {
		fprintf(stderr, "FAIL: the daemon did not stop cleanly\n");
		fails++;
	}
	printf("%s (%llu ms)\n", fails ? "FAILED" : "PASSED",
	       (unsigned long long)(fx_now_ms() - t0));
	if (fails)
		printf("replay with STREAM_SEED=0x%016llx\n",
		       (unsigned long long)seed);
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
