/* SPDX-License-Identifier: MIT */
/*
 * cryptod-bench: for each algorithm, pick the engine the daemon serves it
 * with and the in-process twin of that engine; for each buffer size,
 * verify the daemon's output against that twin (and the twin against
 * OpenSSL), then alternate path A (the daemon, through libcryptoclient),
 * path B (the twin in this process) and, for CBC, path C (OpenSSL's
 * serial CBC) for --rounds rounds; report the median of each and the
 * median of the per-round ratios.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "bench.h"
#include "cryptod/ring_abi.h"

struct bench {
	struct bench_cfg cfg;
	struct bench_daemon d;
	uint8_t *priv_src, *priv_dst; /* in-process paths' blocks; owned */
	uint8_t *ver_src, *ver_dst;   /* the cross-check's blocks; owned */
	uint8_t (*iv)[BENCH_IV_MAX];  /* nslots IVs shared by all; owned */
	int32_t *status;	      /* verification statuses; owned */
};

/* One algorithm's run: its engine, references and keys. */
struct alg_run {
	const struct bench_alg *a;
	char engine[BENCH_ENGINE_MAX];
	struct bench_ref ref;	    /* B: the daemon engine's twin */
	struct bench_ref ossl;	    /* OpenSSL: cross-check, and C for CBC */
	bool time_ref;		    /* B is timed */
	bool cross, time_ossl;	    /* ossl created; C is timed */
	uint8_t key[BENCH_KEY_MAX]; /* wiped when done */
	uint8_t auth_key[BENCH_AUTH_KEY_MAX];
};

/* Whole run: what --alg all reports at the end. */
struct tally {
	unsigned measured, skipped, failed;
	char skipped_names[512], failed_names[512];
};

static void *alloc_block(size_t bytes)
{
	return aligned_alloc(4096, crd_align_up(bytes ? bytes : 1, 4096));
}

static int alloc_private(struct bench *b)
{
	const struct bench_cfg *cfg = &b->cfg;
	const size_t n = b->d.nslots;
	const size_t src = n * bench_layout_max_stride(cfg, false);
	const size_t dst = n * bench_layout_max_stride(cfg, true);

	b->priv_src = alloc_block(src);
	b->priv_dst = alloc_block(dst);
	b->ver_src = alloc_block(src);
	b->ver_dst = alloc_block(dst);
	b->iv = calloc(n, sizeof(*b->iv));
	b->status = calloc(n, sizeof(*b->status));
	if (!b->priv_src || !b->priv_dst || !b->ver_src || !b->ver_dst ||
	    !b->iv || !b->status)
		return -ENOMEM;
	return 0;
}

static void free_private(struct bench *b)
{
	free(b->priv_src);
	b->priv_src = NULL;
	free(b->priv_dst);
	b->priv_dst = NULL;
	free(b->ver_src);
	b->ver_src = NULL;
	free(b->ver_dst);
	b->ver_dst = NULL;
	free(b->iv);
	b->iv = NULL;
	free(b->status);
	b->status = NULL;
}

static double mops(const struct bench_sample *s)
{
	return s->secs > 0 ? (double)s->ops / s->secs / 1e6 : 0.0;
}

static double gbps(const struct bench_sample *s)
{
	return s->secs > 0 ? (double)s->bytes * 8 / s->secs / 1e9 : 0.0;
}

/* Per-round figures of every path, before the medians sort them. */
struct rounds {
	double a_ops[BENCH_MAX_ROUNDS], a_gb[BENCH_MAX_ROUNDS];
	double b_ops[BENCH_MAX_ROUNDS], b_gb[BENCH_MAX_ROUNDS];
	double c_ops[BENCH_MAX_ROUNDS], c_gb[BENCH_MAX_ROUNDS];
	double ab[BENCH_MAX_ROUNDS], ac[BENCH_MAX_ROUNDS];
};

/* --verbose: every round. */
static void print_rounds(const struct bench_cfg *cfg, const struct alg_run *r,
			 uint32_t len, const struct rounds *x)
{
	unsigned i;

	for (i = 0; i < cfg->rounds; i++) {
		if (r->time_ossl)
			bench_note(cfg,
				   "  %u B round %u: A %.2f Mops, B %.2f Mops, "
				   "C %.2f Mops, A/B %.2f, A/C %.2f\n",
				   len, i + 1, x->a_ops[i], x->b_ops[i],
				   x->c_ops[i], x->ab[i], x->ac[i]);
		else if (r->time_ref)
			bench_note(cfg,
				   "  %u B round %u: A %.2f Mops, B %.2f Mops, "
				   "A/B %.2f\n",
				   len, i + 1, x->a_ops[i], x->b_ops[i],
				   x->ab[i]);
		else
			bench_note(cfg, "  %u B round %u: A %.2f Mops\n", len,
				   i + 1, x->a_ops[i]);
	}
}

/* Point a private copy of la's geometry at src/dst and fill it. */
static struct bench_layout private_layout(const struct bench_layout *la,
					  uint8_t *src, uint8_t *dst)
{
	struct bench_layout l = *la;

	l.src = src;
	l.dst = la->oop ? dst : src;
	bench_layout_fill(&l);
	return l;
}

/*
 * CTR: counter blocks whose low 32, 96 and all 128 bits wrap within the
 * op, in the slots the verification burst covers (and timed like any
 * other: a few ops in a hundred). ipsec-mb's counter carries only within
 * 32 bits, so these check the daemon's (and the reference's) 128-bit
 * increment against OpenSSL's.
 */
static void ctr_edge_ivs(const struct bench_alg *a, uint8_t (*iv)[BENCH_IV_MAX],
			 unsigned n)
{
	if (a->alg != CC_ALG_AES_CTR || n < 3)
		return;
	memset(iv[0] + 12, 0xff, 4);
	memset(iv[1] + 4, 0xff, 12);
	memset(iv[2], 0xff, 16);
}

static int prepare(struct bench *b, struct alg_run *r, uint32_t len,
		   struct bench_layout *la, struct bench_layout *lb)
{
	const struct bench_cfg *cfg = &b->cfg;
	struct bench_layout lx;
	struct bench_verify v = {
		.d = &b->d,
		.ref = &r->ref,
		.cross = r->cross ? &r->ossl : NULL,
		.la = la,
		.lb = lb,
		.lx = &lx,
		.dir = cfg->dir,
		.n = cfg->burst,
		.status = b->status,
		.alg = r->a->name,
	};
	int rc = 0;

	bench_layout_set(la, len, cfg, r->a, b->d.nslots);
	la->iv = b->iv;
	bench_daemon_bind(&b->d, la, cfg->dir);
	bench_layout_fill(la);
	*lb = private_layout(la, b->priv_src, b->priv_dst);
	lx = private_layout(la, b->ver_src, b->ver_dst);
	ctr_edge_ivs(r->a, b->iv, cfg->burst);
	if (cfg->dir == CC_DECRYPT) {
		/* The same ciphertext and tags everywhere: the reference's. */
		rc = bench_ref_seal(&r->ref, la);
		if (!rc)
			rc = bench_ref_seal(&r->ref, lb);
		if (!rc && r->cross)
			rc = bench_ref_seal(&r->ref, &lx);
		if (rc < 0) {
			fprintf(stderr, "cryptod-bench: %s: sealing: %s\n",
				r->ref.desc, strerror(-rc));
			return rc;
		}
	}
	return bench_verify_size(&v);
}

static int run_size(struct bench *b, struct alg_run *r, uint32_t len,
		    struct bench_row *row)
{
	const struct bench_cfg *cfg = &b->cfg;
	unsigned warm_ms = cfg->time_ms / 4 ? cfg->time_ms / 4 : 1, i;
	static struct rounds x;
	struct bench_layout la, lb;
	struct bench_sample sa, sb, sc;
	int rc;

	rc = prepare(b, r, len, &la, &lb);
	if (rc < 0)
		return rc;

	/* Warm caches, pages, branch predictors and the daemon's worker. */
	rc = bench_daemon_run(&b->d, cfg, warm_ms, &sa);
	if (!rc && r->time_ref)
		rc = bench_ref_run(&r->ref, &lb, cfg->dir, cfg->burst,
				   cfg->touch, warm_ms, &sb);
	if (!rc && r->time_ossl)
		rc = bench_ref_run(&r->ossl, &lb, cfg->dir, cfg->burst,
				   cfg->touch, warm_ms, &sc);
	if (rc < 0)
		return rc;

	memset(row, 0, sizeof(*row));
	row->size = len;
	for (i = 0; i < cfg->rounds; i++) {
		rc = bench_daemon_run(&b->d, cfg, cfg->time_ms, &sa);
		if (rc < 0)
			return rc;
		x.a_ops[i] = mops(&sa);
		x.a_gb[i] = gbps(&sa);
		row->retries += sa.retries;
		row->empty_polls += sa.empty_polls;
		if (!r->time_ref)
			continue;
		rc = bench_ref_run(&r->ref, &lb, cfg->dir, cfg->burst,
				   cfg->touch, cfg->time_ms, &sb);
		if (rc < 0)
			return rc;
		x.b_ops[i] = mops(&sb);
		x.b_gb[i] = gbps(&sb);
		x.ab[i] = x.b_ops[i] > 0 ? x.a_ops[i] / x.b_ops[i] : 0.0;
		if (!r->time_ossl)
			continue;
		rc = bench_ref_run(&r->ossl, &lb, cfg->dir, cfg->burst,
				   cfg->touch, cfg->time_ms, &sc);
		if (rc < 0)
			return rc;
		x.c_ops[i] = mops(&sc);
		x.c_gb[i] = gbps(&sc);
		x.ac[i] = x.c_ops[i] > 0 ? x.a_ops[i] / x.c_ops[i] : 0.0;
	}
	if (cfg->verbose)
		print_rounds(cfg, r, len, &x);
	row->ops_m = bench_median(x.a_ops, cfg->rounds);
	row->gbps = bench_median(x.a_gb, cfg->rounds);
	if (r->time_ref) {
		row->have_inproc = true;
		row->in_ops_m = bench_median(x.b_ops, cfg->rounds);
		row->in_gbps = bench_median(x.b_gb, cfg->rounds);
		row->ratio = bench_median(x.ab, cfg->rounds);
	}
	if (r->time_ossl) {
		row->have_openssl = true;
		row->os_ops_m = bench_median(x.c_ops, cfg->rounds);
		row->os_gbps = bench_median(x.c_gb, cfg->rounds);
		row->os_ratio = bench_median(x.ac, cfg->rounds);
	}
	return 0;
}

static int make_keys(struct alg_run *r)
{
	const unsigned half = r->a->key_len / 2;

	if (getrandom(r->key, sizeof(r->key), 0) != (ssize_t)sizeof(r->key) ||
	    getrandom(r->auth_key, sizeof(r->auth_key), 0) !=
		    (ssize_t)sizeof(r->auth_key))
		return -errno;
	/* XTS refuses equal halves. */
	if (r->a->alg == CC_ALG_AES_XTS && !memcmp(r->key, r->key + half, half))
		r->key[0] ^= 1;
	return 0;
}

static void alg_run_end(struct bench *b, struct alg_run *r)
{
	bench_ref_destroy(&r->ossl);
	bench_ref_destroy(&r->ref);
	bench_daemon_session_end(&b->d);
	explicit_bzero(r->key, sizeof(r->key));
	explicit_bzero(r->auth_key, sizeof(r->auth_key));
}

/* Engines, references and the session. -ENOTSUP: skip (reason printed). */
static int alg_run_begin(struct bench *b, struct alg_run *r,
			 const struct bench_alg *a)
{
	const struct bench_cfg *cfg = &b->cfg;
	enum bench_ref_kind kind;
	char why[256];
	int rc;

	memset(r, 0, sizeof(*r));
	r->a = a;
	rc = bench_daemon_engine(&b->d, cfg, a, r->engine, sizeof(r->engine),
				 why, sizeof(why));
	if (rc < 0) {
		bench_note(cfg, "\n== %s: skipped: %s ==\n", a->name, why);
		return rc;
	}
	rc = make_keys(r);
	if (rc < 0) {
		fprintf(stderr, "cryptod-bench: getrandom: %s\n",
			strerror(-rc));
		return rc;
	}
	kind = bench_ref_kind_for(r->engine, a);
	rc = bench_ref_create(&r->ref, kind, a, r->key, r->auth_key);
	if (rc < 0) {
		fprintf(stderr,
			"cryptod-bench: %s: no in-process reference for engine "
			"%s: %s\n",
			a->name, r->engine, strerror(-rc));
		goto err;
	}
	/* null in place: the reference does nothing, nothing to compare. */
	r->time_ref = cfg->inproc && (a->alg != CC_ALG_NULL || cfg->oop ||
				      cfg->dir == CC_DECRYPT);
	if (kind != BENCH_REF_OSSL && a->alg != CC_ALG_NULL) {
		rc = bench_ref_create(&r->ossl, BENCH_REF_OSSL, a, r->key,
				      r->auth_key);
		if (rc < 0)
			goto err;
		r->cross = true;
		r->time_ossl = cfg->inproc && bench_alg_is_cbc(a);
	}
	rc = bench_daemon_session(&b->d, cfg, a, r->key, r->auth_key);
	if (rc < 0)
		goto err;
	return 0;

err:
	alg_run_end(b, r);
	return rc;
}

static void print_alg(const struct bench *b, const struct alg_run *r,
		      unsigned n_sizes)
{
	const struct bench_cfg *cfg = &b->cfg;
	const struct bench_alg *a = r->a;
	const bool oop = cfg->oop && !a->tag_only;

	bench_note(cfg,
		   "\n== %s %s, %s, AAD %u B, tag %u B, IV %u B, key %u B%s "
		   "==\n",
		   a->name, cfg->dir == CC_ENCRYPT ? "enc" : "dec",
		   oop ? (cfg->touch ? "out of place, touched" : "out of place")
		       : (cfg->touch ? "in place, touched" : "in place"),
		   bench_aad_len(cfg, a), a->tag_len, a->iv_len, a->key_len,
		   a->auth_key_len ? " + HMAC key" : "");
	bench_note(cfg, "A: cryptod, engine %s\n", r->engine);
	bench_note(cfg, "B: %s%s\n", r->ref.desc,
		   r->time_ref ? ""
		   : cfg->inproc
			   ? " (reference only: null in place does nothing)"
			   : " (reference only: --no-inproc)");
	if (r->time_ossl)
		bench_note(cfg, "C: %s\n", r->ossl.desc);
	else if (r->cross)
		bench_note(cfg, "   checked against %s\n", r->ossl.desc);
	if (n_sizes < cfg->n_sizes && cfg->sizes_set)
		bench_note(cfg, "   (sizes %s cannot take are skipped)\n",
			   a->name);
}

static void tally_add(char *list, size_t len, const char *name)
{
	size_t used = strlen(list);

	snprintf(list + used, len - used, "%s%s", used ? ", " : "", name);
}

/* 0, -ENOTSUP (skipped), -EBADMSG (this algorithm failed; go on), or
 * another -errno (stop: the daemon is gone or stuck). */
static int run_alg(struct bench *b, const struct bench_alg *a)
{
	const struct bench_cfg *cfg = &b->cfg;
	uint32_t sizes[BENCH_MAX_SIZES];
	struct bench_row rows[BENCH_MAX_SIZES];
	struct alg_run r;
	unsigned n, i;
	int rc;

	n = bench_alg_sizes(cfg, a, sizes);
	if (!n) {
		bench_note(cfg, "\n== %s: skipped: no size it can take ==\n",
			   a->name);
		return -ENOTSUP;
	}
	rc = alg_run_begin(b, &r, a);
	if (rc < 0)
		return rc;
	print_alg(b, &r, n);
	if (!cfg->csv)
		bench_report_header(cfg, r.time_ossl);
	for (i = 0; i < n; i++) {
		rc = run_size(b, &r, sizes[i], &rows[i]);
		if (rc < 0)
			break;
		bench_report_row(cfg, a, &rows[i]);
	}
	if (i)
		bench_report_summary(cfg, a, rows, i);
	alg_run_end(b, &r);
	return rc;
}

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "cryptod-bench: --cpu %d: %s (not pinned)\n",
			cpu, strerror(errno));
}

static void print_config(const struct bench *b)
{
	const struct bench_cfg *cfg = &b->cfg;

	bench_note(cfg,
		   "cryptod-bench: %u algorithm%s, %s; burst %u, depth %u (%u "
		   "ops in flight), ring %u; %u round%s x %u ms per path per "
		   "size\n",
		   cfg->n_algs, cfg->n_algs == 1 ? "" : "s",
		   cfg->dir == CC_ENCRYPT ? "encrypt" : "decrypt", cfg->burst,
		   cfg->depth, b->d.nslots, cfg->ring, cfg->rounds,
		   cfg->rounds == 1 ? "" : "s", cfg->time_ms);
	bench_note(cfg,
		   "A: cryptod %s at %s, libcryptoclient zero-copy, one queue, "
		   "one client thread\n",
		   cc_daemon_version(b->d.conn) ? cc_daemon_version(b->d.conn)
						: "?",
		   cfg->socket);
	if (cfg->spawn)
		bench_note(cfg, "   spawned %s --workers %u\n", cfg->spawn,
			   cfg->workers);
	if (cfg->engine)
		bench_note(cfg, "   engine %s\n", cfg->engine);
	if (cfg->cpu >= 0)
		bench_note(cfg, "   client thread pinned to CPU %d\n",
			   cfg->cpu);
	bench_note(cfg,
		   "B: in this process, one thread, the engine the daemon's "
		   "engine wraps (ipsec-mb arch %s, or OpenSSL EVP)\n",
		   bench_imb_arch_name());
}

static void print_tally(const struct bench_cfg *cfg, const struct tally *t)
{
	if (cfg->n_algs < 2 && !t->skipped && !t->failed)
		return;
	bench_note(cfg, "\nAll: %u algorithm%s measured", t->measured,
		   t->measured == 1 ? "" : "s");
	if (t->skipped)
		bench_note(cfg, "; %u skipped (%s)", t->skipped,
			   t->skipped_names);
	if (t->failed)
		bench_note(cfg, "; %u FAILED (%s)", t->failed, t->failed_names);
	bench_note(cfg, "\n");
}

int main(int argc, char **argv)
{
	static struct bench b;
	struct bench_spawn spawn = { 0 };
	struct bench_env env = { 0 };
	struct bench_cfg *cfg = &b.cfg;
	struct tally t = { 0 };
	struct bench_passes passes = { 0 };
	unsigned i;
	int rc, ret = 1;

	rc = bench_opts_parse(cfg, argc, argv);
	if (rc == 1)
		return 0;
	if (rc < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);

	if (cfg->spawn) {
		rc = bench_spawn_start(&spawn, cfg->spawn, cfg->workers,
				       cfg->cpu, cfg->socket,
				       sizeof(cfg->socket));
		if (rc < 0)
			return 1;
	}
	/* After the spawn: the daemon inherits our CPUs minus this one. */
	if (cfg->cpu >= 0)
		pin_cpu(cfg->cpu);
	rc = bench_daemon_open(&b.d, cfg);
	if (rc < 0)
		goto out_spawn;
	rc = alloc_private(&b);
	if (rc < 0) {
		fprintf(stderr, "cryptod-bench: out of memory\n");
		goto out_private;
	}

	print_config(&b);
	/* Count the daemon's CPU time as ours, spawned or not. */
	bench_env_start(&env, cfg,
			spawn.pid > 0 ? spawn.pid : cc_daemon_pid(b.d.conn));
	if (cfg->csv)
		bench_report_csv_header(cfg);
	bench_report_passes(cfg, b.d.conn, NULL, &passes);
	for (i = 0; i < cfg->n_algs; i++) {
		rc = run_alg(&b, cfg->algs[i]);
		bench_report_passes(cfg, b.d.conn, cfg->algs[i]->name, &passes);
		if (rc == -ENOTSUP && cfg->all) {
			t.skipped++;
			tally_add(t.skipped_names, sizeof(t.skipped_names),
				  cfg->algs[i]->name);
			continue;
		}
		if (rc == -EBADMSG || rc == -ENOTSUP || rc == -EINVAL) {
			/* This algorithm is wrong or refused; the others
			 * may still be measured. */
			t.failed++;
			tally_add(t.failed_names, sizeof(t.failed_names),
				  cfg->algs[i]->name);
			continue;
		}
		if (rc < 0) {
			print_tally(cfg, &t);
			goto out_private;
		}
		t.measured++;
	}
	print_tally(cfg, &t);
	bench_report_daemon_stats(cfg, b.d.conn, BENCH_CLIENT_NAME);
	bench_env_end(&env, cfg);
	ret = t.failed ? 1 : 0;

out_private:
	free_private(&b);
	bench_daemon_close(&b.d);
out_spawn:
	if (cfg->spawn && bench_spawn_stop(&spawn) != 0)
		ret = 1;
	return ret;
}
