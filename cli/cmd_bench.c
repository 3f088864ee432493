/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl bench: the benchmark for operators. For each algorithm and
 * buffer size, the daemon's output is verified against an in-process
 * reference, then the paths are alternated for --rounds rounds: through
 * cryptod (one client thread per --queues queue), through cryptod's
 * kernel (AF_ALG) engine when the daemon reports it available, and the
 * in-process engines (the twin of the daemon's engine, and OpenSSL EVP).
 * The measuring is bench/'s core, the same code as cryptod-bench's.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_cli.h"
#include "cryptoctl.h"

static const char usage_bench[] =
	"Usage: cryptoctl bench [OPTIONS]\n"
	"\n"
	"Measure throughput through cryptod side by side with the in-process\n"
	"engines, in the seed's table format (Buffer Size(B), OPS(M),\n"
	"Throughput(Gbps) per path). Paths: cryptod (libcryptoclient,\n"
	"zero-copy, the daemon's engine for the algorithm, one client thread\n"
	"per queue); cryptod-kernel (the daemon's AF_ALG engine, when the\n"
	"daemon reports it available for the algorithm); the in-process twin\n"
	"of the daemon's engine (ipsec-mb or OpenSSL); OpenSSL EVP\n"
	"in-process. Each size is first verified: the daemon's output must\n"
	"equal the reference's. Paths alternate in rounds; figures are\n"
	"medians, ratios the median of the per-round ratios. Progress goes\n"
	"to stderr.\n"
	"\n"
	"  -a, --alg LIST      algorithms, comma-separated, or all (default\n"
	"                      aes-128-gcm); --alg help lists them\n"
	"      --sizes LIST    buffer sizes in bytes (default\n"
	"                      64,128,256,512,1024,1536,2048,16384)\n"
	"      --burst N       ops per enqueue and per in-process burst\n"
	"                      (default 32)\n"
	"      --depth N       bursts in flight per queue (default 4)\n"
	"  -q, --queues N      daemon queues, one client thread each, run at\n"
	"                      once (default 1, at most 16)\n"
	"      --spawn-daemon BIN\n"
	"                      start BIN on a private socket for the run\n"
	"      --workers N     its worker threads (default 1)\n"
	"      --engine NAME   the daemon engine (default: its choice)\n"
	"      --no-kernel     skip the cryptod-kernel path\n"
	"      --no-inproc     skip the in-process paths\n"
	"      --dir enc|dec   direction (default enc)\n"
	"      --aad-len N     AAD bytes for GCM and CBC+HMAC (default 0)\n"
	"      --rounds N      rounds per size (default 5)\n"
	"      --time-ms N     each measurement (default 300)\n"
	"      --smoke         sizes 64,1024, 1 round of 50 ms\n"
	"      --oop           out of place (decrypt always is)\n"
	"      --ring N        submission ring entries, a power of two\n"
	"      --touch         the client writes each payload and reads each\n"
	"                      result, as an application would\n"
	"      --cpu N         pin the client thread(s) to CPU N; a spawned\n"
	"                      daemon runs on the other CPUs\n"
	"      --dmcrypt       the dm-crypt comparison: AES-256 ECB, CBC and\n"
	"                      XTS (and LRW when the kernel engine offers\n"
	"                      it), 1 MiB chunks, 5 runs each, MB/s per run\n"
	"                      and the mean, through the daemon and\n"
	"                      in-process (burst 4, depth 2, 1000 ms per\n"
	"                      run unless given)\n"
	"      --csv           CSV on stdout: alg,path,size,ops_m,gbps,\n"
	"                      ratio,runs_mbs (runs separated by ';')\n"
	"      --json          JSON on stdout: {config, results[]}\n"
	"      --png FILE      chart throughput vs buffer size (log x), one\n"
	"                      line per path (and algorithm), with gnuplot\n"
	"  -s, --socket PATH   daemon socket (unless --spawn-daemon)\n"
	"  -h, --help          this text\n"
	"\n"
	"Throughput counts payload bytes; 1 Gbps = 10^9 bit/s, 1 MB/s =\n"
	"10^6 B/s. Shared machines are noisy: compare the paths of one run.\n"
	"Exit status 0; 1 when the daemon is unreachable, a verification\n"
	"failed or the chart could not be drawn; 2 bad arguments.\n";

enum {
	OPT_QUEUES = OPT_BENCH_END_,
	OPT_JSON,
	OPT_PNG,
	OPT_DMCRYPT,
	OPT_NO_KERNEL,
};

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

struct bp_ctx {
	struct bench b; /* cfg, the first queue, private blocks */
	struct bench_daemon extra[BP_MAX_QUEUES - 1];
	unsigned n_extra;
	struct bench_daemon kd; /* the kernel engine's queue */
	struct bench_cfg kcfg;
	bool kd_open, no_kernel;
	char kernel_why[256]; /* no kernel queue: why */
	uint32_t kmax;	      /* the kernel engine's longest op, this alg */
	struct bp_report rep;
	unsigned steps, step;
	bool json, csv_out;
	const char *png;
};

/* Per-round figures of every path at one size. */
struct bp_rounds {
	double ops[BP_MAX_PATHS][BENCH_MAX_ROUNDS];
	double gb[BP_MAX_PATHS][BENCH_MAX_ROUNDS];
	double mbs[BP_MAX_PATHS][BENCH_MAX_ROUNDS];
	double ratio[BP_MAX_PATHS][BENCH_MAX_ROUNDS];
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
enum { P_DAEMON, P_KERNEL, P_TWIN, P_OSSL };
struct bp_paths {
	int col[4]; /* column of each path, or -1 */
};

static int bp_size(struct bp_ctx *x, struct bench_alg_run *ar, unsigned ai,
		   const struct bp_paths *p, bool *kern, uint32_t len)
{
	const struct bench_cfg *cfg = &x->b.cfg;
	unsigned warm = cfg->time_ms / 4 ? cfg->time_ms / 4 : 1, i, k;
	/* The kernel path at this size: longer ops than it takes are not
	 * measured ("-" in the table). */
	bool kl = *kern && len <= x->kmax;
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
	/* Fresh bytes for the in-process paths after the verifications. */
	bench_layout_fill(&lb);
	if (cfg->dir == CC_DECRYPT && (rc = bench_ref_seal(&ar->ref, &lb)) < 0)
		return rc;

	/* Warm caches, pages and the daemon's worker. */
	rc = bp_run_daemon(x, warm, &s);
	if (!rc && kl)
		rc = bench_daemon_run(&x->kd, &x->kcfg, warm, &s);
	if (!rc && p->col[P_TWIN] >= 0)
		rc = bench_ref_run(&ar->ref, &lb, cfg->dir, cfg->burst,
				   cfg->touch, warm, &s);
	if (!rc && p->col[P_OSSL] >= 0)
		rc = bench_ref_run(&ar->ossl, &lb, cfg->dir, cfg->burst,
				   cfg->touch, warm, &s);
	if (rc < 0)
		return rc;

	memset(&rd, 0, sizeof(rd));
	for (i = 0; i < cfg->rounds; i++) {
		bp_progress(x, ar->a->name, len, i + 1);
		for (k = 0; k < 4; k++) {
			int c = p->col[k];

			if (c < 0 || (k == P_KERNEL && !kl))
				continue;
			if (k == P_DAEMON)
				rc = bp_run_daemon(x, cfg->time_ms, &s);
			else if (k == P_KERNEL)
				rc = bench_daemon_run(&x->kd, &x->kcfg,
						      cfg->time_ms, &s);
			else
				rc = bench_ref_run(
					k == P_TWIN ? &ar->ref : &ar->ossl, &lb,
					cfg->dir, cfg->burst, cfg->touch,
					cfg->time_ms, &s);
			if (rc < 0)
				return rc;
			rd.ops[c][i] = bench_mops(&s);
			rd.gb[c][i] = bench_gbps(&s);
			rd.mbs[c][i] = s.secs > 0 ? s.bytes / s.secs / 1e6 : 0;
		}
		for (k = 0; k < 4; k++) {
			int c = p->col[k], t = p->col[P_TWIN];

			if (c >= 0 && t >= 0 && c != t && rd.ops[t][i] > 0)
				rd.ratio[c][i] = rd.ops[c][i] / rd.ops[t][i];
		}
	}
	for (k = 0; k < 4; k++) {
		struct bp_result v = { .alg = ai, .size = len };
		int c = p->col[k];

		if (c < 0 || (k == P_KERNEL && !kl))
			continue;
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
		bench_note(&x->b.cfg, "   no cryptod-kernel path: %s\n", why);
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
	struct bp_paths p = { { -1, -1, -1, -1 } };
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
static void bp_dmcrypt_setup(struct bench_cfg *cfg, bool burst_set,
			     bool depth_set, const struct bench_opts_set *set)
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

static int bp_parse(struct bp_ctx *x, int argc, char **argv)
{
	struct option opts[40];
	struct bench_opts_set set;
	struct bench_cfg *cfg = &x->b.cfg;
	bool dmcrypt = false, burst_set = false, depth_set = false;
	unsigned n = 0, v;
	char *end;
	int c, rc;

	while (bench_long_opts[n].name)
		n++;
	memcpy(opts, bench_long_opts, n * sizeof(opts[0]));
	opts[n++] = (struct option){ "queues", required_argument, NULL,
				     OPT_QUEUES };
	opts[n++] = (struct option){ "json", no_argument, NULL, OPT_JSON };
	opts[n++] = (struct option){ "png", required_argument, NULL, OPT_PNG };
	opts[n++] =
		(struct option){ "dmcrypt", no_argument, NULL, OPT_DMCRYPT };
	opts[n++] = (struct option){ "no-kernel", no_argument, NULL,
				     OPT_NO_KERNEL };
	opts[n] = (struct option){ NULL, 0, NULL, 0 };

	bench_cfg_init(cfg, &set);
	x->rep.queues = 1;
	optind = 0;
	while ((c = getopt_long(argc, argv, "a:q:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
		case OPT_HELP:
			fputs(usage_bench, stdout);
			return 1;
		case 'a':
			c = OPT_ALG;
			break;
		case 's':
			c = OPT_SOCKET;
			break;
		case 'q':
		case OPT_QUEUES:
			errno = 0;
			v = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || !v || v > BP_MAX_QUEUES) {
				cli_usage_err(
					"bench",
					"--queues wants 1 to %d, not '%s'",
					BP_MAX_QUEUES, optarg);
				return -EINVAL;
			}
			x->rep.queues = v;
			continue;
		case OPT_JSON:
			x->json = true;
			continue;
		case OPT_CSV:
			x->csv_out = true;
			continue;
		case OPT_PNG:
			x->png = optarg;
			continue;
		case OPT_DMCRYPT:
			dmcrypt = true;
			continue;
		case OPT_NO_KERNEL:
			x->no_kernel = true;
			continue;
		case OPT_BURST:
			burst_set = true;
			break;
		case OPT_DEPTH:
			depth_set = true;
			break;
		case OPT_VERBOSE: /* cryptod-bench's; rounds are not printed */
		case '?':
			if (c == OPT_VERBOSE)
				cli_usage_err("bench", "unrecognized option "
						       "'--verbose'");
			return -EINVAL;
		default:
			break;
		}
		rc = bench_opts_one(cfg, &set, c, optarg);
		if (rc)
			return rc; /* 1: --alg help */
	}
	if (cli_no_args("bench", argc, argv))
		return -EINVAL;
	if (x->json && x->csv_out) {
		cli_usage_err("bench", "--csv and --json exclude each other");
		return -EINVAL;
	}
	if (dmcrypt && (set.sizes || cfg->smoke)) {
		cli_usage_err("bench", "--dmcrypt sets the algorithms and "
				       "sizes itself");
		return -EINVAL;
	}
	if (dmcrypt)
		bp_dmcrypt_setup(cfg, burst_set, depth_set, &set);
	x->rep.dmcrypt = dmcrypt;
	/* Notes go to stderr whenever stdout carries data. */
	cfg->csv = x->json || x->csv_out;
	cfg->ossl_all = true;
	return bench_cfg_finish(cfg, &set);
}

int cmd_bench(struct cli *cli, int argc, char **argv)
{
	static struct bp_ctx x;
	struct bench_spawn spawn = { 0 };
	struct bench_cfg *cfg = &x.b.cfg;
	unsigned i, failed = 0;
	int rc, ret = CLI_EXIT_FAIL;

	memset(&x, 0, sizeof(x));
	bench_prog = "cryptoctl: bench";
	rc = bp_parse(&x, argc, argv);
	if (rc)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (!cfg->spawn && cli->socket)
		snprintf(cfg->socket, sizeof(cfg->socket), "%s", cli->socket);
	x.rep.cfg = cfg;
	x.rep.workers = cfg->spawn ? cfg->workers : 0;
	x.n_extra = x.rep.queues - 1;
	signal(SIGPIPE, SIG_IGN);

	if (cfg->spawn &&
	    bench_spawn_start(&spawn, cfg->spawn, cfg->workers, cfg->cpu,
			      cfg->socket, sizeof(cfg->socket)) < 0)
		return CLI_EXIT_FAIL;
	/* After the spawn: the daemon keeps the other CPUs. */
	if (cfg->cpu >= 0)
		bench_pin_cpu(cfg->cpu);
	rc = bp_open_queues(&x);
	if (rc < 0)
		goto out;
	rc = bench_alloc_private(&x.b);
	if (rc < 0) {
		bench_err("out of memory\n");
		goto out;
	}
	x.rep.daemon_version = cc_daemon_version(x.b.d.conn);
	for (i = 0; i < cfg->n_algs; i++)
		x.steps += bench_alg_sizes(cfg, cfg->algs[i],
					   (uint32_t[BENCH_MAX_SIZES]){ 0 });
	bench_note(cfg,
		   "cryptoctl bench: cryptod %s at %s; %s; burst %u x depth "
		   "%u, %u queue%s; %u round%s x %u ms per path and size\n",
		   x.rep.daemon_version, cfg->socket,
		   cfg->dir == CC_ENCRYPT ? "encrypt" : "decrypt", cfg->burst,
		   cfg->depth, x.rep.queues, x.rep.queues > 1 ? "s" : "",
		   cfg->rounds, cfg->rounds > 1 ? "s" : "", cfg->time_ms);
	if (x.kernel_why[0])
		bench_note(cfg, "no cryptod-kernel path: %s\n", x.kernel_why);

	for (i = 0; i < cfg->n_algs; i++) {
		rc = bp_alg(&x, cfg->algs[i]);
		if (rc == -ENOTSUP && (cfg->all || x.rep.dmcrypt))
			continue;
		if (rc == -EBADMSG || rc == -ENOTSUP || rc == -EINVAL) {
			failed++;
			continue;
		}
		if (rc < 0)
			goto out;
	}
	if (x.rep.dmcrypt)
		bp_lrw_note(&x);
	if (x.json)
		bp_print_json(&x.rep);
	else if (x.csv_out)
		bp_print_csv(&x.rep);
	else if (x.rep.dmcrypt)
		bp_print_dmcrypt(&x.rep);
	ret = failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	if (x.png && bp_png(&x.rep, x.png) < 0)
		ret = CLI_EXIT_FAIL;

out:
	bench_free_private(&x.b);
	bp_close_queues(&x);
	if (cfg->spawn && bench_spawn_stop(&spawn) != 0)
		ret = CLI_EXIT_FAIL;
	free(x.rep.res);
	x.rep.res = NULL;
	return ret;
}
