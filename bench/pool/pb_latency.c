/* SPDX-License-Identifier: MIT */
/*
 * Latency at low load: one 64-byte AES-128-GCM encrypt at a time, from
 * just before cc_enqueue_burst() to the completion in hand, per poll mode
 * of the daemon, with the client either busy-polling cc_dequeue_burst()
 * or sleeping in cc_wait(). "Warm": ops back to back. "Cold": a pause
 * longer than the daemon's --spin-us before each op, so that an adaptive
 * worker has gone to sleep and must be woken by the client's doorbell.
 *
 * Each configuration takes its share of samples in every round, the
 * configurations alternating in a rotating order; percentiles are over
 * all samples pooled.
 * The busy-poll daemon spins even when idle, so it is stopped (SIGSTOP)
 * while the adaptive configurations run.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poolbench.h"

enum {
	LAT_LEN = 64,
	LAT_CONFIGS = 8,
};

struct lat_cfg {
	bool busy, wait, cold;
	struct pb_daemon *d;
	struct pb_flow flow;
	bool open;
	double *us; /* samples; owned */
	unsigned n, want;
};

static const char *lat_load(const struct pb_cfg *cfg, const struct lat_cfg *l,
			    char *buf, size_t len)
{
	if (l->cold)
		snprintf(buf, len, "%u us pause first", cfg->pause_us);
	else
		snprintf(buf, len, "back to back");
	return buf;
}

/* One op, submit to completion. Returns its latency in us, or -1. */
static double lat_one(struct pb_flow *f)
{
	struct cc_completion c;
	struct cc_op op;
	uint64_t t0, t1, deadline;
	unsigned empty = 0;
	int n;

	pb_flow_op(f, f->next_sub, &op);
	t0 = pb_now_ns();
	n = cc_enqueue_burst(f->q, &op, 1);
	if (n != 1) {
		bench_err("%s: enqueue: %s\n", f->p.name,
			  n < 0 ? cc_strerror(n) : "ring full");
		f->stalls++;
		return -1;
	}
	f->next_sub++;
	deadline = t0 + (uint64_t)PB_DRAIN_MS * 1000000;
	for (;;) {
		if (f->p.wait) {
			n = cc_wait(f->q, 1000);
			if (n < 0) {
				bench_err("%s: wait: %s\n", f->p.name,
					  cc_strerror(n));
				f->stalls++;
				return -1;
			}
		}
		n = cc_dequeue_burst(f->q, &c, 1);
		if (n == 1)
			break;
		if (n < 0 || pb_now_ns() > deadline) {
			bench_err("%s: no completion within "
				  "%d ms\n",
				  f->p.name, PB_DRAIN_MS);
			f->stalls++;
			return -1;
		}
		if (!f->p.wait && ++empty >= PB_SPIN_YIELD) {
			empty = 0;
			sched_yield();
		}
	}
	t1 = pb_now_ns();
	pb_flow_check(f, &c);
	return (double)(t1 - t0) / 1e3;
}

/*
 * This round's share of samples for l. 0, or -1 on an error. Warm
 * configurations first run ops unrecorded for warm_ms: the previous
 * configuration may have left the client's thread on the worker's CPU (a
 * thread woken from cc_wait() or a pause lands beside its waker), and a
 * share of back-to-back samples lasts only a few ms, less than the
 * scheduler takes to spread them out again.
 */
static int lat_round(const struct pb_cfg *cfg, struct lat_cfg *l,
		     unsigned share)
{
	uint64_t settle = pb_now_ns() + (uint64_t)cfg->warm_ms * 1000000;

	while (!l->cold && pb_now_ns() < settle)
		if (lat_one(&l->flow) < 0)
			return -1;
	for (unsigned i = 0; i < share && l->n < l->want; i++) {
		double us;

		if (l->cold)
			pb_sleep_us(cfg->pause_us);
		us = lat_one(&l->flow);
		if (us < 0)
			return -1;
		l->us[l->n++] = us;
	}
	return 0;
}

static int lat_open(const struct pb_cfg *cfg, struct pb_daemons *ds,
		    struct lat_cfg *l)
{
	struct pb_flow_params p = {
		.alg = &pb_gcm128,
		.dir = CC_ENCRYPT,
		.len = LAT_LEN,
		.slots = 1,
		.burst = 1,
		.wait = l->wait,
	};
	int err = pb_daemon_get(ds, 1, l->busy, &l->d);

	if (err)
		return err;
	pb_daemon_resume(l->d);
	snprintf(p.name, sizeof(p.name), "poolbench-lat-%s-%s-%s",
		 l->busy ? "busy" : "adaptive", l->wait ? "wait" : "poll",
		 l->cold ? "cold" : "warm");
	err = pb_flow_open(&l->flow, l->d->sp.sock, &p);
	if (err)
		return err;
	l->open = true;
	l->want = l->cold ? cfg->lat_cold : cfg->lat_samples;
	l->us = calloc(l->want ? l->want : 1, sizeof(*l->us));
	if (!l->us)
		return -1;
	return pb_flow_verify(&l->flow);
}

static void lat_report(const struct pb_cfg *cfg, struct lat_cfg *c)
{
	struct bench_sheet t;

	bench_sheet_init(&t, "latency", NULL);
	bench_sheet_col(&t, "poll_mode", "Poll mode", SHEET_BOTH | SHEET_LEFT);
	bench_sheet_col(&t, "workers", NULL, SHEET_DATA | SHEET_NUM);
	/* Narrow enough for 100 columns even when a slow machine (or a
	 * sanitizer) makes every figure milliseconds: 12345.6 us. */
	bench_sheet_col(&t, "client", "Client wait", SHEET_BOTH | SHEET_LEFT);
	bench_sheet_col(&t, "load", NULL, SHEET_DATA);
	bench_sheet_col(&t, "load_text", "Load", SHEET_TEXT | SHEET_LEFT);
	bench_sheet_col(&t, "pause_us", NULL, SHEET_DATA | SHEET_NUM);
	bench_sheet_col(&t, "samples", "Samples",
			SHEET_BOTH | SHEET_NUM | SHEET_WIDE);
	bench_sheet_col(&t, "p50_us", "p50 us", SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "p90_us", "p90 us", SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "p99_us", "p99 us", SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "p999_us", "p99.9 us", SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "max_us", "max us", SHEET_BOTH | SHEET_NUM);
	for (unsigned i = 0; i < LAT_CONFIGS; i++) {
		struct lat_cfg *l = &c[i];
		char load[48];
		unsigned col = 0;

		if (bench_sheet_row(&t))
			break;
		bench_sort(l->us, l->n);
		bench_sheet_set(&t, col++, "%s", l->busy ? "busy" : "adaptive");
		bench_sheet_set(&t, col++, "1");
		bench_sheet_set(&t, col++, "%s",
				l->wait ? "cc_wait()" : "polling");
		bench_sheet_set(&t, col++, "%s", l->cold ? "cold" : "warm");
		bench_sheet_set(&t, col++, "%s",
				lat_load(cfg, l, load, sizeof(load)));
		bench_sheet_set(&t, col++, "%u", l->cold ? cfg->pause_us : 0);
		bench_sheet_set(&t, col++, "%u", l->n);
		static const double pct[] = { 50, 90, 99, 99.9 };
		for (unsigned k = 0; k < 4; k++)
			bench_sheet_set(
				&t, col++, "%.1f",
				bench_percentile_sorted(l->us, l->n, pct[k]));
		bench_sheet_set(&t, col++, "%.0f", l->n ? l->us[l->n - 1] : 0);
	}
	bench_sink_emit(&cfg->sink, &t);
	bench_sheet_fini(&t);
}

int pb_latency_run(const struct pb_cfg *cfg, struct pb_daemons *ds)
{
	struct lat_cfg c[LAT_CONFIGS];
	struct pb_daemon *busy = NULL;
	uint64_t checked = 0;
	struct bench_env env;
	int rc = 0;

	memset(c, 0, sizeof(c));
	for (unsigned i = 0; i < LAT_CONFIGS; i++) {
		c[i].busy = i >= 4;
		c[i].cold = i & 2;
		c[i].wait = i & 1;
	}
	pb_note(cfg,
		"\n== Latency: one %u-byte %s encrypt at a time, --workers 1, "
		"enqueue to completion in hand ==\n"
		"   %u samples per configuration back to back (after %u ms "
		"unrecorded), %u after a pause\n"
		"   (> --spin-us %u); configurations alternated over %u "
		"rounds, percentiles of all samples\n",
		LAT_LEN, pb_gcm128.name, cfg->lat_samples, cfg->warm_ms,
		cfg->lat_cold, cfg->spin_us, cfg->rounds);
	for (unsigned i = 0; i < LAT_CONFIGS; i++)
		if (lat_open(cfg, ds, &c[i])) {
			bench_err("latency: set-up failed\n");
			rc = -1;
			goto out;
		}
	busy = c[LAT_CONFIGS - 1].d;
	pb_daemon_pause(busy);

	pb_env_mark(&env, ds);
	for (unsigned r = 0; r < cfg->rounds && !rc; r++) {
		for (unsigned k = 0; k < LAT_CONFIGS && !rc; k++) {
			struct lat_cfg *l = &c[(k + r) % LAT_CONFIGS];
			/* The last round takes what rounding left over. */
			unsigned share = r + 1 == cfg->rounds
						 ? l->want - l->n
						 : l->want / cfg->rounds;

			if (l->busy && pb_daemon_resume(l->d))
				rc = -1;
			if (!rc && lat_round(cfg, l, share))
				rc = -1;
			if (l->busy && pb_daemon_pause(l->d))
				rc = -1;
		}
	}
	if (!rc)
		lat_report(cfg, c);
	pb_env_end(&env, cfg, ds, "this section");

out:
	/* Closing a queue is a control call: the daemon must run. */
	if (busy)
		pb_daemon_resume(busy);
	for (unsigned i = 0; i < LAT_CONFIGS; i++) {
		if (c[i].open) {
			checked += c[i].flow.next_done;
			if (pb_flow_errors(&c[i].flow))
				rc = -1;
			pb_flow_close(&c[i].flow);
		}
		free(c[i].us);
	}
	/* It spins when idle: not a moment longer than needed. */
	if (busy && pb_daemon_stop(ds, busy))
		rc = -1;
	pb_note(cfg, "Checked: %llu completions, %s\n",
		(unsigned long long)checked,
		rc ? "SOME WRONG (see above)"
		   : "all in submission order with status OK");
	return rc;
}
