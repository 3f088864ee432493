/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl bench's throughput mode: for each algorithm and buffer size,
 * the daemon's output is verified against an in-process reference, then
 * the paths are alternated for --rounds rounds: through cryptod (one
 * client thread per --queues queue), through cryptod's kernel (AF_ALG)
 * engine when the daemon reports it available, and the in-process
 * engines (the twin of the daemon's engine, and OpenSSL EVP). The
 * measuring is bench/'s core; the reports are bench_out.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_cli.h"
#include "cli.h"

/* One queue's client thread. */
struct bp_qthread {
	struct bench_daemon *d;
	const struct bench_cfg *cfg;
	pthread_barrier_t *start;
	unsigned ms;
	struct bench_sample s;
	int rc;
	pthread_t th;
};

/* Per-round figures of every path at one size. */
struct bp_rounds {
	double ops[BP_MAX_PATHS][BENCH_MAX_ROUNDS];
	double gb[BP_MAX_PATHS][BENCH_MAX_ROUNDS];
	double mbs[BP_MAX_PATHS][BENCH_MAX_ROUNDS];
	double ratio[BP_MAX_PATHS][BENCH_MAX_ROUNDS];
	double vs_dpdk[BENCH_MAX_ROUNDS]; /* cryptod / dpdk */
	double vs_zc[BENCH_MAX_ROUNDS];	  /* cryptod-submit / cryptod */
};

static void *bp_qmain(void *arg)
{
	struct bp_qthread *t = arg;

	pthread_barrier_wait(t->start);
	t->rc = bench_daemon_run(t->d, t->cfg, t->ms, &t->s);
	return NULL;
}

/* Every queue at once, each on its own thread; the first on this one.
 * Ops and bytes add up; the time is the longest. */
static int bp_run_daemon(struct bp_ctx *x, unsigned ms,
			 struct bench_sample *out)
{
	struct bp_qthread t[BP_MAX_QUEUES];
	pthread_barrier_t start;
	unsigned i, n = x->n_extra + 1, started = 1;
	int rc;

	if (n == 1)
		return bench_daemon_run(&x->b.d, &x->b.cfg, ms, out);
	memset(t, 0, sizeof(t));
	if (pthread_barrier_init(&start, NULL, n))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		t[i].d = i ? &x->extra[i - 1] : &x->b.d;
		t[i].cfg = &x->b.cfg;
		t[i].start = &start;
		t[i].ms = ms;
	}
	for (i = 1; i < n; i++) {
		if (pthread_create(&t[i].th, NULL, bp_qmain, &t[i]))
			break;
		started++;
	}
	if (started < n) {
		/* The barrier counts n: it would never open. */
		bench_err("cannot start %u client threads\n", n);
		abort();
	}
	bp_qmain(&t[0]);
	memset(out, 0, sizeof(*out));
	rc = 0;
	for (i = 0; i < n; i++) {
		if (i)
			pthread_join(t[i].th, NULL);
		if (t[i].rc < 0 && !rc)
			rc = t[i].rc;
		out->ops += t[i].s.ops;
		out->bytes += t[i].s.bytes;
		out->retries += t[i].s.retries;
		out->empty_polls += t[i].s.empty_polls;
		if (t[i].s.secs > out->secs)
			out->secs = t[i].s.secs;
	}
	pthread_barrier_destroy(&start);
	return rc;
}

static void bp_progress(struct bp_ctx *x, const char *alg, uint32_t len,
			unsigned round)
{
	if (round == 0)
		x->step++;
	fprintf(stderr, "%s[%u/%u] %s %u B: %s%s", isatty(2) ? "\r\033[K" : "",
		x->step, x->steps, alg, len, round ? "round " : "verifying",
		isatty(2) ? "" : (round ? "" : "\n"));
	if (round)
		fprintf(stderr, "%u/%u%s", round, x->b.cfg.rounds,
			isatty(2) ? "" : "\n");
	fflush(stderr);
}

static int bp_result_add(struct bp_report *r, const struct bp_result *v)
{
	if (r->n_res == r->cap) {
		unsigned cap = r->cap ? r->cap * 2 : 64;
		struct bp_result *n = realloc(r->res, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->res = n;
		r->cap = cap;
	}
	r->res[r->n_res++] = *v;
	return 0;
}

/* Bind one more layout of this size into queue d's arena, with the same
 * bytes (and, for decrypt, the reference's ciphertext and tags). */
static int bp_bind(struct bp_ctx *x, struct bench_alg_run *ar,
		   struct bench_daemon *d, uint32_t len, struct bench_layout *l)
{
	const struct bench_cfg *cfg = &x->b.cfg;

	bench_layout_set(l, len, cfg, ar->a, d->nslots);
	l->iv = x->b.iv;
	bench_daemon_bind(d, l, cfg->dir);
	bench_layout_fill(l);
	if (cfg->dir == CC_DECRYPT)
		return bench_ref_seal(&ar->ref, l);
	return 0;
}

/* The kernel path's output must match the reference too. */
static int bp_verify_kernel(struct bp_ctx *x, struct bench_alg_run *ar,
			    uint32_t len, struct bench_layout *lb)
{
	struct bench_layout lk;
	struct bench_verify v = {
		.d = &x->kd,
		.ref = &ar->ref,
		.la = &lk,
		.lb = lb,
		.lx = lb,
		.dir = x->b.cfg.dir,
		.n = x->b.cfg.burst,
		.status = x->b.status,
		.alg = ar->a->name,
	};
	int rc = bp_bind(x, ar, &x->kd, len, &lk);

	if (rc < 0)
		return rc;
	/* The reference runs on lb again: the same bytes as lk. */
	bench_layout_fill(lb);
	if (x->b.cfg.dir == CC_DECRYPT) {
		rc = bench_ref_seal(&ar->ref, lb);
		if (rc < 0)
			return rc;
	}
	return bench_verify_size(&v);
}

/* Which paths an algorithm has, in column order. */
enum { P_DAEMON, P_SUBMIT, P_KERNEL, P_TWIN, P_DPDK, P_OSSL, P_N };
struct bp_paths {
	int col[P_N]; /* column of each path, or -1 */
};

/* --verbose: one round's figures, path by path. */
static void bp_round_note(const struct bp_ctx *x, const char *alg, uint32_t len,
			  unsigned round, const struct bp_paths *p,
			  const struct bp_rounds *rd, bool kl, bool dl)
{
	static const char *const names[] = { "cryptod",	       "cryptod-submit",
					     "cryptod-kernel", "twin",
					     "dpdk",	       "openssl" };
	char line[256];
	size_t used = 0;

	for (unsigned k = 0; k < P_N && used < sizeof(line); k++) {
		int c = p->col[k];

		if (c < 0 || (k == P_KERNEL && !kl) || (k == P_DPDK && !dl))
			continue;
		used += (size_t)snprintf(line + used, sizeof(line) - used,
					 "  %s %.2f Mops %.2f Gbps", names[k],
					 rd->ops[c][round], rd->gb[c][round]);
	}
	bench_note(&x->b.cfg, "   round %u %s %u B:%s\n", round + 1, alg, len,
		   line);
}

/* The in-process path of kind k (twin, DPDK, OpenSSL). */
static struct bench_ref *bp_ref(struct bench_alg_run *ar, unsigned k)
{
	return k == P_TWIN ? &ar->ref : k == P_DPDK ? &ar->dpdk : &ar->ossl;
}

static int bp_size(struct bp_ctx *x, struct bench_alg_run *ar, unsigned ai,
		   const struct bp_paths *p, bool *kern, uint32_t len)
{
	const struct bench_cfg *cfg = &x->b.cfg;
	unsigned warm = cfg->time_ms / 4 ? cfg->time_ms / 4 : 1, i, k;
	/* The kernel and DPDK paths at this size: longer ops than they take
	 * are not measured ("-" in the table). */
	bool kl = *kern && len <= x->kmax;
	bool dl = p->col[P_DPDK] >= 0 && ar->time_dpdk &&
		  len <= BENCH_DPDK_MAX_LEN;
	static struct bp_rounds rd;
	struct bench_layout la, lb, lq;
	struct bench_sample s;
	int rc;

	bp_progress(x, ar->a->name, len, 0);
	rc = bench_prepare(&x->b, ar, len, &la, &lb);
	for (i = 0; !rc && i < x->n_extra; i++)
		rc = bp_bind(x, ar, &x->extra[i], len, &lq);
	if (rc < 0)
		return rc;
	if (kl && bp_verify_kernel(x, ar, len, &lb) < 0) {
		bench_err("%s: the kernel path is dropped\n", ar->a->name);
		*kern = kl = false;
	}
	if (dl && bench_verify_peer(&x->b, ar, &ar->dpdk, &lb) < 0) {
		bench_err("%s: the DPDK path is dropped\n", ar->a->name);
		ar->time_dpdk = dl = false;
	}
	/* Fresh bytes for the in-process paths after the verifications. */
	bench_layout_fill(&lb);
	if (cfg->dir == CC_DECRYPT && (rc = bench_ref_seal(&ar->ref, &lb)) < 0)
		return rc;

	/* Warm caches, pages and the daemon's worker. */
	rc = bp_run_daemon(x, warm, &s);
	if (!rc && p->col[P_SUBMIT] >= 0)
		rc = bench_daemon_run_submit(&x->b.d, cfg, warm, &s);
	if (!rc && kl)
		rc = bench_daemon_run(&x->kd, &x->kcfg, warm, &s);
	for (k = P_TWIN; !rc && k < P_N; k++)
		if (p->col[k] >= 0 && (k != P_DPDK || dl))
			rc = bench_ref_run(bp_ref(ar, k), &lb, cfg->dir,
					   cfg->burst, cfg->touch, warm, &s);
	if (rc < 0)
		return rc;

	memset(&rd, 0, sizeof(rd));
	for (i = 0; i < cfg->rounds; i++) {
		bp_progress(x, ar->a->name, len, i + 1);
		for (k = 0; k < P_N; k++) {
			int c = p->col[k];

			if (c < 0 || (k == P_KERNEL && !kl) ||
			    (k == P_DPDK && !dl))
				continue;
			if (k == P_DAEMON)
				rc = bp_run_daemon(x, cfg->time_ms, &s);
			else if (k == P_SUBMIT)
				rc = bench_daemon_run_submit(&x->b.d, cfg,
							     cfg->time_ms, &s);
			else if (k == P_KERNEL)
				rc = bench_daemon_run(&x->kd, &x->kcfg,
						      cfg->time_ms, &s);
			else
				rc = bench_ref_run(bp_ref(ar, k), &lb, cfg->dir,
						   cfg->burst, cfg->touch,
						   cfg->time_ms, &s);
			if (rc < 0)
				return rc;
			rd.ops[c][i] = bench_mops(&s);
			rd.gb[c][i] = bench_gbps(&s);
			rd.mbs[c][i] = s.secs > 0 ? s.bytes / s.secs / 1e6 : 0;
		}
		for (k = 0; k < P_N; k++) {
			int c = p->col[k], t = p->col[P_TWIN];

			if (c >= 0 && t >= 0 && c != t && rd.ops[t][i] > 0)
				rd.ratio[c][i] = rd.ops[c][i] / rd.ops[t][i];
		}
		/* One op at a time through cc_submit against bursts. */
		if (p->col[P_SUBMIT] >= 0 && rd.ops[p->col[P_DAEMON]][i] > 0)
			rd.vs_zc[i] = rd.ops[p->col[P_SUBMIT]][i] /
				      rd.ops[p->col[P_DAEMON]][i];
		/* The daemon against DPDK's PMD in-process, round by round. */
		if (dl && rd.ops[p->col[P_DPDK]][i] > 0)
			rd.vs_dpdk[i] = rd.ops[p->col[P_DAEMON]][i] /
					rd.ops[p->col[P_DPDK]][i];
		if (cfg->verbose)
			bp_round_note(x, ar->a->name, len, i, p, &rd, kl, dl);
	}
	for (k = 0; k < P_N; k++) {
		struct bp_result v = { .alg = ai, .size = len };
		int c = p->col[k];

		if (c < 0 || (k == P_KERNEL && !kl) || (k == P_DPDK && !dl))
			continue;
		if (k == P_DAEMON && dl)
			v.ratio_dpdk = bench_median(rd.vs_dpdk, cfg->rounds);
		if (k == P_SUBMIT)
			v.ratio_zc = bench_median(rd.vs_zc, cfg->rounds);
		v.path = (unsigned)c;
		v.n_runs = cfg->rounds;
		memcpy(v.mbs, rd.mbs[c], sizeof(v.mbs));
		v.ops_m = bench_median(rd.ops[c], cfg->rounds);
		v.gbps = bench_median(rd.gb[c], cfg->rounds);
		if (p->col[P_TWIN] >= 0 && c != p->col[P_TWIN])
			v.ratio = bench_median(rd.ratio[c], cfg->rounds);
		rc = bp_result_add(&x->rep, &v);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void bp_path_set(struct bp_alg *pa, struct bp_paths *p, int kind,
			const char *name, const char *desc)
{
	struct bp_path *q = &pa->paths[pa->n_paths];

	snprintf(q->name, sizeof(q->name), "%s", name);
	snprintf(q->desc, sizeof(q->desc), "%s", desc);
	p->col[kind] = (int)pa->n_paths++;
}

static const char *bp_twin_name(enum bench_ref_kind k)
{
	return k == BENCH_REF_IMB    ? "ipsec-mb"
	       : k == BENCH_REF_OSSL ? "openssl"
				     : "memcpy";
}

/* A note of prefix and text, wrapped at spaces to lines of at most 100
 * columns, continued with an indent of two. */
static void bp_note_wrapped(const struct bench_cfg *cfg, const char *prefix,
			    const char *text)
{
	enum { WIDTH = 100 };
	char line[WIDTH + 1];
	size_t used, n;

	used = (size_t)snprintf(line, sizeof(line), "%s", prefix);
	while (*text) {
		const char *sp = strchr(text, ' ');

		n = sp ? (size_t)(sp - text) : strlen(text);
		if (used + 1 + n > WIDTH && used > 2) {
			bench_note(cfg, "%s\n", line);
			used = (size_t)snprintf(line, sizeof(line), " ");
		}
		if (n > WIDTH - used - 1)
			n = WIDTH - used - 1; /* one word longer than a line */
		used += (size_t)snprintf(
			line + used, sizeof(line) - used, "%s%.*s",
			used && line[used - 1] != ' ' ? " " : "", (int)n, text);
		text += n;
		while (*text == ' ')
			text++;
	}
	bench_note(cfg, "%s\n", line);
}

/* Sessions on the other queues and on the kernel engine. */
/* The kernel engine's longest op for a (AF_ALG takes 64 KiB at once). */
static uint32_t bp_kernel_max(const struct bench_daemon *kd,
			      const struct bench_alg *a)
{
	for (unsigned i = 0; i < kd->n_caps; i++)
		if (kd->caps[i].alg == a->alg &&
		    !strcmp(kd->caps[i].engine, "kernel"))
			return kd->caps[i].max_len;
	return UINT32_MAX; /* no table: let the daemon say */
}

static int bp_sessions(struct bp_ctx *x, struct bench_alg_run *ar,
		       const uint32_t *sizes, unsigned n, bool *kern)
{
	char eng[BENCH_ENGINE_MAX], why[256];
	unsigned i;
	int rc;

	for (i = 0; i < x->n_extra; i++) {
		rc = bench_daemon_session(&x->extra[i], &x->b.cfg, ar->a,
					  ar->key, ar->auth_key);
		if (rc < 0)
			return rc;
	}
	*kern = false;
	if (!x->kd_open ||
	    (x->b.cfg.engine && !strcmp(x->b.cfg.engine, "kernel")))
		return 0;
	if (bench_daemon_engine(&x->kd, &x->kcfg, ar->a, eng, sizeof(eng), why,
				sizeof(why)) < 0) {
		bp_note_wrapped(&x->b.cfg, "   no cryptod-kernel path:", why);
		return 0;
	}
	x->kmax = bp_kernel_max(&x->kd, ar->a);
	for (i = 0; i < n && sizes[i] > x->kmax; i++)
		;
	if (i == n) {
		bench_note(
			&x->b.cfg,
			"   no cryptod-kernel path for %s: the kernel engine "
			"takes at most %u B per op\n",
			ar->a->name, x->kmax);
		return 0;
	}
	if (bench_daemon_session(&x->kd, &x->kcfg, ar->a, ar->key,
				 ar->auth_key) == 0)
		*kern = true;
	return 0;
}

static void bp_sessions_end(struct bp_ctx *x)
{
	for (unsigned i = 0; i < x->n_extra; i++)
		bench_daemon_session_end(&x->extra[i]);
	if (x->kd_open)
		bench_daemon_session_end(&x->kd);
}

/* 0, -ENOTSUP (skipped), -EBADMSG (verification failed), or -errno. */
static int bp_alg(struct bp_ctx *x, const struct bench_alg *a)
{
	const struct bench_cfg *cfg = &x->b.cfg;
	struct bp_alg *pa = &x->rep.algs[x->rep.n_algs];
	uint32_t sizes[BENCH_MAX_SIZES];
	struct bench_alg_run ar;
	struct bp_paths p = { { -1, -1, -1, -1, -1, -1 } };
	char desc[128];
	unsigned n, i, ai = x->rep.n_algs;
	bool kern = false;
	int rc;

	memset(pa, 0, sizeof(*pa));
	pa->a = a;
	pa->twin = -1;
	x->rep.n_algs++;
	n = bench_alg_sizes(cfg, a, sizes);
	if (!n) {
		snprintf(pa->skipped, sizeof(pa->skipped),
			 "no size it can take");
		return -ENOTSUP;
	}
	rc = bench_alg_begin(&x->b, &ar, a);
	if (rc < 0) {
		snprintf(pa->skipped, sizeof(pa->skipped), "%s",
			 rc == -ENOTSUP ? "the daemon cannot serve it"
					: strerror(-rc));
		return rc;
	}
	rc = bp_sessions(x, &ar, sizes, n, &kern);
	if (rc < 0)
		goto out;

	snprintf(desc, sizeof(desc),
		 "through cryptod, engine %s, %u queue%s, burst %u x depth %u",
		 ar.engine, x->n_extra + 1, x->n_extra ? "s" : "", cfg->burst,
		 cfg->depth);
	bp_path_set(pa, &p, P_DAEMON, "cryptod", desc);
	if (cfg->submit)
		bp_path_set(pa, &p, P_SUBMIT, "cryptod-submit",
			    "through cryptod, the same ops one at a time: "
			    "cc_submit(), completions by cc_poll()");
	if (kern) {
		snprintf(desc, sizeof(desc),
			 "through cryptod, engine kernel (AF_ALG), ops up to "
			 "%u B",
			 x->kmax);
		bp_path_set(pa, &p, P_KERNEL, "cryptod-kernel", desc);
	}
	if (ar.time_ref)
		bp_path_set(pa, &p, P_TWIN, bp_twin_name(ar.ref.kind),
			    ar.ref.desc);
	if (ar.time_dpdk)
		bp_path_set(pa, &p, P_DPDK, "dpdk", ar.dpdk.desc);
	if (ar.time_ossl)
		bp_path_set(pa, &p, P_OSSL, "openssl", ar.ossl.desc);

	pa->twin = p.col[P_TWIN];
	for (i = 0; i < n; i++) {
		rc = bp_size(x, &ar, ai, &p, &kern, sizes[i]);
		if (rc < 0)
			break;
	}
	if (!kern && p.col[P_KERNEL] >= 0)
		snprintf(pa->paths[p.col[P_KERNEL]].desc,
			 sizeof(pa->paths[0].desc),
			 "through cryptod, engine kernel: dropped (did not "
			 "verify)");
out:
	bp_sessions_end(x);
	bench_alg_end(&x->b, &ar);
	if (isatty(2))
		fputs("\r\033[K", stderr);
	if (rc >= 0 && !x->json && !x->csv_out && !x->rep.dmcrypt)
		bp_print_table(&x->rep, ai);
	return rc;
}

static int bp_open_queues(struct bp_ctx *x)
{
	char eng[BENCH_ENGINE_MAX], why[256];
	unsigned i;
	int rc;

	rc = bench_daemon_open(&x->b.d, &x->b.cfg);
	if (rc < 0)
		return rc;
	for (i = 0; i < x->n_extra; i++) {
		rc = bench_daemon_open(&x->extra[i], &x->b.cfg);
		if (rc < 0) {
			x->n_extra = i;
			return rc;
		}
	}
	if (x->no_kernel)
		return 0;
	/* A kernel queue only when some algorithm has it available. */
	x->kcfg = x->b.cfg;
	x->kcfg.engine = "kernel";
	for (i = 0; i < x->b.cfg.n_algs; i++)
		if (!bench_daemon_engine(&x->b.d, &x->kcfg, x->b.cfg.algs[i],
					 eng, sizeof(eng), why, sizeof(why)))
			break;
	if (i == x->b.cfg.n_algs) {
		bench_daemon_engine(&x->b.d, &x->kcfg, x->b.cfg.algs[0], eng,
				    sizeof(eng), x->kernel_why,
				    sizeof(x->kernel_why));
		return 0;
	}
	rc = bench_daemon_open(&x->kd, &x->kcfg);
	if (rc == 0)
		x->kd_open = true;
	return 0;
}

static void bp_close_queues(struct bp_ctx *x)
{
	if (x->kd_open)
		bench_daemon_close(&x->kd);
	for (unsigned i = 0; i < x->n_extra; i++)
		bench_daemon_close(&x->extra[i]);
	bench_daemon_close(&x->b.d);
}

/* --dmcrypt: the seeds' comparison. */
void bp_dmcrypt_setup(struct bench_cfg *cfg, bool burst_set, bool depth_set,
		      const struct bench_opts_set *set)
{
	static const char *const names[] = { "aes-256-ecb", "aes-256-cbc",
					     "aes-256-xts" };
	unsigned i;

	for (i = 0; i < 3; i++)
		cfg->algs[i] = bench_alg_find(names[i]);
	cfg->n_algs = 3;
	cfg->all = false;
	cfg->sizes[0] = BP_DMCRYPT_LEN;
	cfg->n_sizes = 1;
	cfg->sizes_set = true;
	if (!set->rounds)
		cfg->rounds = BP_DMCRYPT_RUNS;
	/* A run of 1 MiB ops needs time to mean anything. */
	if (!set->time)
		cfg->time_ms = BP_DMCRYPT_RUN_MS;
	if (!burst_set)
		cfg->burst = 4;
	if (!depth_set)
		cfg->depth = 2;
	/* DPDK's mbufs take at most 64 KiB: no path at 1 MiB. */
	cfg->dpdk = false;
}

static void bp_lrw_note(struct bp_ctx *x)
{
	const struct bench_daemon *d = &x->b.d;

	for (unsigned i = 0; i < d->n_caps; i++)
		if (d->caps[i].alg == CC_ALG_AES_LRW && d->caps[i].available) {
			bench_note(
				&x->b.cfg,
				"aes-lrw: offered by engine %s, not measured "
				"(no in-process reference to verify it "
				"against)\n",
				d->caps[i].engine);
			return;
		}
	bench_note(&x->b.cfg,
		   "aes-lrw: no engine of the daemon offers it here\n");
}

int bp_tput(struct bp_ctx *x, int daemon_pid)
{
	struct bench_cfg *cfg = &x->b.cfg;
	struct bench_passes passes = { 0 };
	struct bench_env env = { 0 };
	unsigned i, failed = 0;
	int rc, ret = CLI_EXIT_FAIL;

	x->rep.cfg = cfg;
	x->rep.workers = cfg->spawn ? cfg->workers : 0;
	x->n_extra = x->rep.queues - 1;
	rc = bp_open_queues(x);
	if (rc < 0)
		goto out;
	rc = bench_alloc_private(&x->b);
	if (rc < 0) {
		bench_err("out of memory\n");
		goto out;
	}
	x->rep.daemon_version = cc_daemon_version(x->b.d.conn);
	for (i = 0; i < cfg->n_algs; i++)
		x->steps += bench_alg_sizes(cfg, cfg->algs[i],
					    (uint32_t[BENCH_MAX_SIZES]){ 0 });
	bench_note(cfg,
		   "cryptoctl bench: cryptod %s at %s\n%s; burst %u x depth "
		   "%u, %u queue%s; %u round%s x %u ms per path and size\n",
		   x->rep.daemon_version, cfg->socket,
		   cfg->dir == CC_ENCRYPT ? "encrypt" : "decrypt", cfg->burst,
		   cfg->depth, x->rep.queues, x->rep.queues > 1 ? "s" : "",
		   cfg->rounds, cfg->rounds > 1 ? "s" : "", cfg->time_ms);
	/* The daemon's CPU time counts as ours, spawned or not. */
	if (daemon_pid <= 0)
		daemon_pid = cc_daemon_pid(x->b.d.conn);
	bench_env_start(&env, bench_note_out(cfg), &daemon_pid, daemon_pid > 0);
	if (x->kernel_why[0])
		bp_note_wrapped(cfg, "no cryptod-kernel path:", x->kernel_why);

	bench_report_passes(cfg, x->b.d.conn, NULL, &passes);
	for (i = 0; i < cfg->n_algs; i++) {
		rc = bp_alg(x, cfg->algs[i]);
		if (rc != -ENOTSUP)
			bench_report_passes(cfg, x->b.d.conn,
					    cfg->algs[i]->name, &passes);
		if (rc == -ENOTSUP && (cfg->all || x->rep.dmcrypt))
			continue;
		if (rc == -EBADMSG || rc == -ENOTSUP || rc == -EINVAL) {
			failed++;
			continue;
		}
		if (rc < 0)
			goto out;
	}
	if (x->rep.dmcrypt)
		bp_lrw_note(x);
	if (x->json)
		bp_print_json(&x->rep);
	else if (x->csv_out)
		bp_print_csv(&x->rep);
	else if (x->rep.dmcrypt)
		bp_print_dmcrypt(&x->rep);
	ret = failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	if (x->png && bp_png(&x->rep, x->png) < 0)
		ret = CLI_EXIT_FAIL;
	bench_report_daemon_stats(cfg, x->b.d.conn, BENCH_CLIENT_NAME);
	bench_env_end(&env, bench_note_out(cfg), &daemon_pid, daemon_pid > 0,
		      "the run");

out:
	bench_free_private(&x->b);
	bp_close_queues(x);
	free(x->rep.res);
	x->rep.res = NULL;
	return ret;
}
