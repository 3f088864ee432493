/* SPDX-License-Identifier: MIT */
/* Medians, the results table (or CSV), the summary and the daemon's view. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* The targets the summary checks against (informational, never gating). */
#define TARGET_MOPS_64 8.0
#define TARGET_RATIO_1K 0.80

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, unsigned n)
{
	if (!n)
		return 0.0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_note(const struct bench_cfg *cfg, const char *fmt, ...)
{
	FILE *f = cfg->csv ? stderr : stdout;
	va_list ap;

	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fflush(f);
}

static const char *const cols[] = {
	"Buffer Size(B)", "OPS(M)",	   "Throughput(Gbps)", "Retries",
	"EmptyPolls",	  "InProc OPS(M)", "InProc(Gbps)",     "Ratio",
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

void bench_report_header(const struct bench_cfg *cfg)
{
	unsigned i;

	if (cfg->csv) {
		printf("size,ops_m,gbps,retries,empty_polls,inproc_ops_m,"
		       "inproc_gbps,ratio\n");
		fflush(stdout);
		return;
	}
	for (i = 0; i < NCOLS; i++)
		printf("%s%s", i ? "  " : "", cols[i]);
	printf("\n");
	fflush(stdout);
}

void bench_report_row(const struct bench_cfg *cfg, const struct bench_row *r)
{
	char in_ops[32] = "-", in_gbps[32] = "-", ratio[32] = "-";
	int w[NCOLS];
	unsigned i;

	if (cfg->csv) {
		printf("%u,%.3f,%.3f,%llu,%llu,", r->size, r->ops_m, r->gbps,
		       (unsigned long long)r->retries,
		       (unsigned long long)r->empty_polls);
		if (r->have_inproc)
			printf("%.3f,%.3f,%.3f\n", r->in_ops_m, r->in_gbps,
			       r->ratio);
		else
			printf(",,\n");
		fflush(stdout);
		return;
	}
	for (i = 0; i < NCOLS; i++)
		w[i] = (int)strlen(cols[i]);
	if (r->have_inproc) {
		snprintf(in_ops, sizeof(in_ops), "%.2f", r->in_ops_m);
		snprintf(in_gbps, sizeof(in_gbps), "%.2f", r->in_gbps);
		snprintf(ratio, sizeof(ratio), "%.2f", r->ratio);
	}
	printf("%*u  %*.2f  %*.2f  %*llu  %*llu  %*s  %*s  %*s\n", w[0],
	       r->size, w[1], r->ops_m, w[2], r->gbps, w[3],
	       (unsigned long long)r->retries, w[4],
	       (unsigned long long)r->empty_polls, w[5], in_ops, w[6], in_gbps,
	       w[7], ratio);
	fflush(stdout);
}

void bench_report_summary(const struct bench_cfg *cfg,
			  const struct bench_row *rows, unsigned n)
{
	char part64[96] = "", partk[128] = "";
	const struct bench_row *worst = NULL;
	unsigned i, nk = 0;

	for (i = 0; i < n; i++) {
		if (rows[i].size == 64)
			snprintf(part64, sizeof(part64),
				 "; 64 B: %.2f Mops (target >= %.0f: %s)",
				 rows[i].ops_m, TARGET_MOPS_64,
				 rows[i].ops_m >= TARGET_MOPS_64 ? "met"
								 : "below");
		if (rows[i].size >= 1024 && rows[i].have_inproc) {
			nk++;
			if (!worst || rows[i].ratio < worst->ratio)
				worst = &rows[i];
		}
	}
	if (worst)
		snprintf(partk, sizeof(partk),
			 "; >= 1 KiB: lowest ratio %.2f at %u B (target >= "
			 "%.2f: %s)",
			 worst->ratio, worst->size, TARGET_RATIO_1K,
			 worst->ratio >= TARGET_RATIO_1K ? "met" : "below");
	bench_note(cfg,
		   "Summary: %s %s, 1 client thread, burst %u x depth %u, %u "
		   "round%s x %u ms, medians; %u size%s verified%s%s\n",
		   bench_alg_name(cfg->alg),
		   cfg->dir == CC_ENCRYPT ? "enc" : "dec", cfg->burst,
		   cfg->depth, cfg->rounds, cfg->rounds == 1 ? "" : "s",
		   cfg->time_ms, n, n == 1 ? "" : "s", part64, partk);
}

static void print_counters(const struct bench_cfg *cfg,
			   const struct cc_counters *c)
{
	bench_note(cfg,
		   "ops %llu, bytes %llu, errors %llu, auth failures %llu, "
		   "retries %llu, empty polls %llu, wakeups %llu\n",
		   (unsigned long long)c->ops, (unsigned long long)c->bytes,
		   (unsigned long long)c->errors,
		   (unsigned long long)c->auth_failures,
		   (unsigned long long)c->retries,
		   (unsigned long long)c->empty_polls,
		   (unsigned long long)c->wakeups);
}

void bench_report_daemon_stats(const struct bench_cfg *cfg,
			       struct cc_conn *conn, const char *client_name)
{
	struct cc_stats st;
	unsigned i, found = 0;
	int rc;

	memset(&st, 0, sizeof(st));
	rc = cc_stats_get(conn, &st);
	if (rc < 0) {
		bench_note(cfg, "Daemon stats: unavailable: %s\n",
			   cc_strerror(rc));
		return;
	}
	bench_note(cfg,
		   "Daemon: %s, %u worker%s, up %.1f s, %u client%s, %u "
		   "session%s\n",
		   cc_daemon_version(conn) ? cc_daemon_version(conn) : "?",
		   st.workers, st.workers == 1 ? "" : "s",
		   (double)st.uptime_ms / 1000, st.clients,
		   st.clients == 1 ? "" : "s", st.sessions,
		   st.sessions == 1 ? "" : "s");
	for (i = 0; i < st.n_queues; i++) {
		const struct cc_queue_stats *qs = &st.queues[i];

		if (qs->pid != (uint32_t)getpid() ||
		    strcmp(qs->client_name, client_name))
			continue;
		found++;
		bench_note(cfg, "Daemon, bench queue %u.%u: ", qs->client_id,
			   qs->queue_id);
		print_counters(cfg, &qs->c);
	}
	if (!found)
		bench_note(cfg,
			   "Daemon: no queue of this process (pid %d) in its "
			   "stats\n",
			   (int)getpid());
	for (i = 0; i < st.n_engines; i++) {
		if (!st.engines[i].c.ops)
			continue;
		/* Engines count ops, not polls or retries. */
		const struct cc_counters *c = &st.engines[i].c;
		bench_note(
			cfg,
			"Daemon, engine %s: ops %llu, bytes %llu, errors %llu, "
			"auth failures %llu\n",
			st.engines[i].name, (unsigned long long)c->ops,
			(unsigned long long)c->bytes,
			(unsigned long long)c->errors,
			(unsigned long long)c->auth_failures);
	}
	cc_stats_free(&st);
}
