/* SPDX-License-Identifier: MIT */
/*
 * Scaling: 16 KiB AES-128-GCM encrypt from one client queue against
 * daemons with 1..N workers, alternating daemon by daemon each round; the
 * order and status of every completion checked; the daemon's histogram of
 * the runs its workers took from the queue. The null engine on the same
 * ops measures what one queue carries with no crypto at all (the client
 * thread, the descriptors, the in-order poster): the ceiling in the
 * many-core model.
 */
#include <stdio.h>
#include <string.h>

#include "poolbench.h"

enum { SCALE_LEN = 16384 };

struct scale_cfg {
	unsigned workers;
	const struct pb_alg *alg;
	struct pb_daemon *d;
	struct pb_flow flow;
	bool open;
	double gbps[PB_MAX_ROUNDS], mops[PB_MAX_ROUNDS];
	double ratio[PB_MAX_ROUNDS]; /* vs GCM with 1 worker, same round */
	uint64_t retries, empty_polls;
	struct cc_queue_stats before, delta;
	double med_gbps, med_mops, med_ratio;
};

static uint64_t hist_runs(const struct cc_queue_stats *s)
{
	uint64_t runs = 0;

	for (unsigned k = 0; k < PB_HIST; k++)
		runs += s->batch_hist[k];
	return runs;
}

static const char *scale_note(const struct pb_cfg *cfg, unsigned workers)
{
	if (workers > cfg->ncpu)
		return "oversubscribed";
	if (workers + 1 > cfg->ncpu) /* + the client's thread */
		return "client shares a core";
	return "";
}

/* The results: one sheet (the text table leaves out the raw counts), and
 * a text-only view of the run-size histogram in percent. */
static void scale_report(const struct pb_cfg *cfg, const struct scale_cfg *c,
			 unsigned ngcm, unsigned nall)
{
	static char hkey[PB_HIST][24];
	struct bench_sheet t, h;
	unsigned k;

	bench_sheet_init(&t, "scale", NULL);
	bench_sheet_col(&t, "alg", "Algorithm", SHEET_BOTH | SHEET_LEFT);
	bench_sheet_col(&t, "workers", "Workers", SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "cpus", "CPUs", SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "oversubscribed", NULL, SHEET_DATA | SHEET_NUM);
	bench_sheet_col(&t, "gbps", "Gbps", SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "mops", "Mops", SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "ratio_vs_1", "x 1 worker", SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "gbps_per_worker", "Gbps/worker",
			SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "order_errors", NULL, SHEET_DATA | SHEET_NUM);
	bench_sheet_col(&t, "status_errors", NULL, SHEET_DATA | SHEET_NUM);
	bench_sheet_col(&t, "checks", "Order+status", SHEET_TEXT | SHEET_WIDE);
	bench_sheet_col(&t, "retries", "Retries",
			SHEET_BOTH | SHEET_NUM | SHEET_WIDE);
	bench_sheet_col(&t, "runs", NULL, SHEET_DATA | SHEET_NUM);
	bench_sheet_col(&t, "mean_run", NULL, SHEET_DATA | SHEET_NUM);
	for (k = 0; k < PB_HIST; k++) {
		snprintf(hkey[k], sizeof(hkey[k]), "runs_%s", pb_hist_label(k));
		bench_sheet_col(&t, hkey[k], NULL, SHEET_DATA | SHEET_NUM);
	}
	bench_sheet_col(&t, "note", "Note", SHEET_TEXT | SHEET_LEFT);

	bench_sheet_init(&h, "scale_runs",
			 "\nRuns the workers took from the queue (cc_stats_get "
			 "batch_hist), % of runs by size:");
	h.text_only = true;
	bench_sheet_col(&h, "workers", "Workers", SHEET_BOTH);
	bench_sheet_col(&h, "runs", "Runs", SHEET_BOTH | SHEET_LEFT);
	for (k = 0; k < PB_HIST; k++)
		bench_sheet_col(&h, pb_hist_label(k), NULL, SHEET_BOTH);
	bench_sheet_col(&h, "ops_per_run", "Ops/run", SHEET_BOTH);

	for (unsigned i = 0; i < nall; i++) {
		const struct scale_cfg *s = &c[i];
		uint64_t runs = hist_runs(&s->delta);
		double per_run =
			runs ? (double)s->delta.c.ops / (double)runs : 0.0;
		unsigned col = 0;

		if (bench_sheet_row(&t))
			break;
		bench_sheet_set(&t, col++, "%s", s->alg->name);
		bench_sheet_set(&t, col++, "%u", s->workers);
		bench_sheet_set(&t, col++, "%u", cfg->ncpu);
		bench_sheet_set(&t, col++, "%d", s->workers > cfg->ncpu);
		bench_sheet_set(&t, col++, "%.2f", s->med_gbps);
		bench_sheet_set(&t, col++, "%.4f", s->med_mops);
		if (i < ngcm) /* the null engine is not compared */
			bench_sheet_set(&t, col, "%.2f", s->med_ratio);
		col++;
		bench_sheet_set(&t, col++, "%.2f", s->med_gbps / s->workers);
		bench_sheet_set(&t, col++, "%llu",
				(unsigned long long)s->flow.order_errors);
		bench_sheet_set(&t, col++, "%llu",
				(unsigned long long)s->flow.status_errors);
		bench_sheet_set(&t, col++, "%s",
				pb_flow_errors(&s->flow) ? "ERRORS" : "ok");
		bench_sheet_set(&t, col++, "%llu",
				(unsigned long long)s->retries);
		bench_sheet_set(&t, col++, "%llu", (unsigned long long)runs);
		bench_sheet_set(&t, col++, "%.2f", per_run);
		for (k = 0; k < PB_HIST; k++)
			bench_sheet_set(
				&t, col++, "%llu",
				(unsigned long long)s->delta.batch_hist[k]);
		bench_sheet_set(&t, col++, "%s", scale_note(cfg, s->workers));

		if (i >= ngcm || bench_sheet_row(&h))
			continue;
		col = 0;
		bench_sheet_set(&h, col++, "%u", s->workers);
		bench_sheet_set(&h, col++, "%llu", (unsigned long long)runs);
		for (k = 0; k < PB_HIST; k++)
			bench_sheet_set(
				&h, col++, "%.1f%%",
				runs ? 100.0 * (double)s->delta.batch_hist[k] /
						(double)runs
				     : 0.0);
		bench_sheet_set(&h, col++, "%.1f", per_run);
	}
	bench_sink_emit(&cfg->sink, &t);
	bench_sink_emit(&cfg->sink, &h);
	bench_sheet_fini(&t);
	bench_sheet_fini(&h);
}

/*
 * The model: a worker with a core to itself does g1 Gbps; one queue can
 * carry no more than the null engine's rate (client thread + poster, no
 * crypto). With a core per worker and one for the client, N cores give
 * about min((N - 1) * g1, ceiling).
 */
static void scale_model(const struct pb_cfg *cfg, const struct scale_cfg *c,
			unsigned ngcm, unsigned nall)
{
	double g1 = c[0].med_gbps, ceil_mops = 0, ceil_gbps;
	const unsigned cores[] = { 16, 64 };

	for (unsigned i = ngcm; i < nall; i++)
		if (c[i].med_mops > ceil_mops)
			ceil_mops = c[i].med_mops;
	ceil_gbps = ceil_mops * 1e6 * SCALE_LEN * 8 / 1e9;
	pb_note(cfg,
		"\nModel: one worker with a core to itself: %.1f Gbps of "
		"16 KiB GCM.",
		g1);
	if (ngcm > 1 && g1 > 0) {
		double lin = c[1].med_gbps / (2 * g1);

		pb_note(cfg,
			"\n       %u workers on %u CPUs: %.1f Gbps = %.0f%% of "
			"linear%s.",
			c[1].workers, cfg->ncpu, c[1].med_gbps, 100 * lin,
			lin < 0.9 ? " (the client's thread needs CPU too)"
				  : "");
	}
	if (g1 <= 0 || ceil_mops <= 0) {
		pb_note(cfg, "\n");
		return;
	}
	pb_note(cfg,
		"\n       One queue without crypto (null engine) carries %.2f "
		"Mops = %.0f Gbps of 16 KiB ops:\n       the client's single "
		"thread and the in-order poster bind at about %.0f workers.\n",
		ceil_mops, ceil_gbps, ceil_gbps / g1);
	for (unsigned k = 0; k < sizeof(cores) / sizeof(cores[0]); k++) {
		double lin = (cores[k] - 1) * g1;

		pb_note(cfg,
			"       %u cores (%u workers + the client): ~%.0f "
			"Gbps, %s-bound%s\n",
			cores[k], cores[k] - 1,
			lin < ceil_gbps ? lin : ceil_gbps,
			lin < ceil_gbps ? "worker" : "client/poster",
			lin < ceil_gbps ? "" : " (use more queues)");
	}
	pb_note(cfg,
		"       Not measurable on %u CPUs: contention on the queue's "
		"claim counter and poster lock\n       among many workers, "
		"and memory bandwidth (each op reads and writes 16 KiB:"
		"\n       %.0f Gbps of GCM moves %.0f GB/s).\n",
		cfg->ncpu, 63 * g1, 63 * g1 * 2 / 8);
}

static int scale_open(const struct pb_cfg *cfg, struct pb_daemons *ds,
		      struct scale_cfg *s)
{
	struct pb_flow_params p = {
		.alg = s->alg,
		.dir = CC_ENCRYPT,
		.len = SCALE_LEN,
		.slots = cfg->slots,
		.burst = PB_BURST,
	};
	int err = pb_daemon_get(ds, s->workers, false, &s->d);

	if (err)
		return err;
	snprintf(p.name, sizeof(p.name), "poolbench-scale-%s-w%u", s->alg->name,
		 s->workers);
	err = pb_flow_open(&s->flow, s->d->sp.sock, &p);
	if (err)
		return err;
	s->open = true;
	if (pb_flow_verify(&s->flow))
		return -1;
	return pb_flow_stats(&s->flow, &s->before);
}

int pb_scale_run(const struct pb_cfg *cfg, struct pb_daemons *ds)
{
	struct scale_cfg c[PB_MAX_SCALE_WORKERS + 2];
	unsigned ngcm = cfg->max_workers, nall = ngcm, r, i;
	uint64_t checked = 0;
	struct bench_env env;
	int rc = 0;

	memset(c, 0, sizeof(c));
	for (i = 0; i < ngcm; i++) {
		c[i].workers = i + 1;
		c[i].alg = &pb_gcm128;
	}
	for (unsigned w = 1; w <= 2 && w <= ngcm; w++) {
		c[nall].workers = w;
		c[nall++].alg = &pb_null;
	}

	pb_note(cfg,
		"\n== Scaling: %s encrypt, %u B in place, 1 client queue, "
		"%u in flight, bursts of %u ==\n"
		"   daemons --workers 1..%u (adaptive), alternated each round; "
		"median of %u rounds x %u ms\n",
		pb_gcm128.name, SCALE_LEN, cfg->slots, PB_BURST, ngcm,
		cfg->rounds, cfg->time_ms);
	for (i = 0; i < nall; i++)
		if (scale_open(cfg, ds, &c[i])) {
			bench_err("scale: set-up failed\n");
			rc = -1;
			goto out;
		}

	pb_env_mark(&env, ds);
	for (r = 0; r < cfg->rounds; r++) {
		/* Rotate the order so no configuration always follows the
		 * same one. */
		for (unsigned k = 0; k < nall; k++) {
			struct scale_cfg *s = &c[(k + r) % nall];
			struct pb_flow *f = &s->flow;

			if (pb_flow_measure(&f, 1, cfg->warm_ms, cfg->time_ms,
					    cfg->verbose ? s->d : NULL))
				rc = -1;
			s->mops[r] = pb_flow_ops_per_s(f) / 1e6;
			s->gbps[r] = s->mops[r] * 1e6 * SCALE_LEN * 8 / 1e9;
			s->retries += f->retries;
			s->empty_polls += f->empty_polls;
			if (cfg->verbose) {
				pb_note(cfg,
					"   round %u %s w%u: %.2f Gbps; client "
					"on CPU %d, workers %s\n",
					r + 1, s->alg->name, s->workers,
					s->gbps[r], f->cpu, f->worker_cpus);
			}
		}
		for (i = 0; i < ngcm; i++)
			c[i].ratio[r] = c[0].gbps[r] > 0
						? c[i].gbps[r] / c[0].gbps[r]
						: 0;
	}

	for (i = 0; i < nall; i++) {
		struct cc_queue_stats after;

		if (pb_flow_stats(&c[i].flow, &after) == 0)
			pb_qstats_sub(&c[i].delta, &after, &c[i].before);
		c[i].med_gbps = bench_median(c[i].gbps, cfg->rounds);
		c[i].med_mops = bench_median(c[i].mops, cfg->rounds);
		c[i].med_ratio = bench_median(c[i].ratio, cfg->rounds);
	}
	scale_report(cfg, c, ngcm, nall);
	scale_model(cfg, c, ngcm, nall);
	pb_env_end(&env, cfg, ds, "this section");
out:
	for (i = 0; i < nall; i++) {
		if (!c[i].open)
			continue;
		checked += c[i].flow.next_done;
		if (pb_flow_errors(&c[i].flow))
			rc = -1;
		pb_flow_close(&c[i].flow);
	}
	pb_note(cfg, "Checked: %llu completions, %s\n",
		(unsigned long long)checked,
		rc ? "SOME WRONG (see above)"
		   : "all in submission order with status OK");
	return rc;
}
