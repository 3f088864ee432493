/* SPDX-License-Identifier: MIT */
/* Medians, the results table (or CSV), the summary and the daemon's view. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* The targets the summary checks against (informational, never gating). */
#define TARGET_MOPS_64 8.0
#define TARGET_RATIO_1K 0.80
#define TARGET_CBC_VS_OPENSSL 3.0

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

const char *bench_prog = "cryptod-bench";

void bench_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", bench_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
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
	"OpenSSL OPS(M)", "OpenSSL(Gbps)", "Ratio vs OpenSSL",
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))
#define NCOLS_BASE 8 /* without the OpenSSL columns */

void bench_report_csv_header(const struct bench_cfg *cfg)
{
	printf("alg,size,ops_m,gbps,retries,empty_polls,inproc_ops_m,"
	       "inproc_gbps,ratio,openssl_ops_m,openssl_gbps,"
	       "ratio_openssl\n");
	fflush(stdout);
}

void bench_report_header(const struct bench_cfg *cfg, bool openssl)
{
	const unsigned n = openssl ? NCOLS : NCOLS_BASE;
	unsigned i;

	for (i = 0; i < n; i++)
		printf("%s%s", i ? "  " : "", cols[i]);
	printf("\n");
	fflush(stdout);
}

static void fmt2(char *buf, size_t len, bool have, double v)
{
	if (have)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "-");
}

void bench_report_row(const struct bench_cfg *cfg, const struct bench_alg *a,
		      const struct bench_row *r)
{
	char v[6][32];
	int w[NCOLS];
	unsigned i;

	if (cfg->csv) {
		printf("%s,%u,%.3f,%.3f,%llu,%llu,", a->name, r->size, r->ops_m,
		       r->gbps, (unsigned long long)r->retries,
		       (unsigned long long)r->empty_polls);
		if (r->have_inproc)
			printf("%.3f,%.3f,%.3f,", r->in_ops_m, r->in_gbps,
			       r->ratio);
		else
			printf(",,,");
		if (r->have_openssl)
			printf("%.3f,%.3f,%.3f\n", r->os_ops_m, r->os_gbps,
			       r->os_ratio);
		else
			printf(",,\n");
		fflush(stdout);
		return;
	}
	for (i = 0; i < NCOLS; i++)
		w[i] = (int)strlen(cols[i]);
	fmt2(v[0], sizeof(v[0]), r->have_inproc, r->in_ops_m);
	fmt2(v[1], sizeof(v[1]), r->have_inproc, r->in_gbps);
	fmt2(v[2], sizeof(v[2]), r->have_inproc, r->ratio);
	fmt2(v[3], sizeof(v[3]), r->have_openssl, r->os_ops_m);
	fmt2(v[4], sizeof(v[4]), r->have_openssl, r->os_gbps);
	fmt2(v[5], sizeof(v[5]), r->have_openssl, r->os_ratio);
	printf("%*u  %*.2f  %*.2f  %*llu  %*llu  %*s  %*s  %*s", w[0], r->size,
	       w[1], r->ops_m, w[2], r->gbps, w[3],
	       (unsigned long long)r->retries, w[4],
	       (unsigned long long)r->empty_polls, w[5], v[0], w[6], v[1], w[7],
	       v[2]);
	if (r->have_openssl)
		printf("  %*s  %*s  %*s", w[8], v[3], w[9], v[4], w[10], v[5]);
	printf("\n");
	fflush(stdout);
}

/* The bar: multi-buffer CBC encryption through the daemon at
 * least 3x OpenSSL's in-process serial CBC encryption from 1 KiB up. */
static void cbc_part(const struct bench_cfg *cfg, const struct bench_row *rows,
		     unsigned n, char *buf, size_t len)
{
	const struct bench_row *worst = NULL;
	unsigned i;

	buf[0] = '\0';
	if (cfg->dir != CC_ENCRYPT)
		return;
	for (i = 0; i < n; i++)
		if (rows[i].size >= 1024 && rows[i].have_openssl &&
		    (!worst || rows[i].os_ratio < worst->os_ratio))
			worst = &rows[i];
	if (worst)
		snprintf(buf, len,
			 "; CBC enc vs OpenSSL serial CBC, >= 1 KiB: lowest "
			 "%.2fx at %u B (target >= %.2fx: %s)",
			 worst->os_ratio, worst->size, TARGET_CBC_VS_OPENSSL,
			 worst->os_ratio >= TARGET_CBC_VS_OPENSSL ? "met"
								  : "below");
}

void bench_report_summary(const struct bench_cfg *cfg,
			  const struct bench_alg *a,
			  const struct bench_row *rows, unsigned n)
{
	char part64[96] = "", partk[128] = "", partc[192];
	const struct bench_row *worst = NULL;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (rows[i].size == 64)
			snprintf(part64, sizeof(part64),
				 "; 64 B: %.2f Mops (target >= %.0f: %s)",
				 rows[i].ops_m, TARGET_MOPS_64,
				 rows[i].ops_m >= TARGET_MOPS_64 ? "met"
								 : "below");
		if (rows[i].size >= 1024 && rows[i].have_inproc &&
		    (!worst || rows[i].ratio < worst->ratio))
			worst = &rows[i];
	}
	if (worst)
		snprintf(partk, sizeof(partk),
			 "; >= 1 KiB: lowest ratio %.2f at %u B (target >= "
			 "%.2f: %s)",
			 worst->ratio, worst->size, TARGET_RATIO_1K,
			 worst->ratio >= TARGET_RATIO_1K ? "met" : "below");
	cbc_part(cfg, rows, n, partc, sizeof(partc));
	bench_note(cfg,
		   "Summary: %s %s, 1 client thread, burst %u x depth %u, %u "
		   "round%s x %u ms, medians; %u size%s verified%s%s%s\n",
		   a->name, cfg->dir == CC_ENCRYPT ? "enc" : "dec", cfg->burst,
		   cfg->depth, cfg->rounds, cfg->rounds == 1 ? "" : "s",
		   cfg->time_ms, n, n == 1 ? "" : "s", part64, partk, partc);
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

_Static_assert(sizeof(((struct cc_queue_stats *)0)->batch_hist) ==
		       BENCH_HIST * sizeof(uint64_t),
	       "BENCH_HIST matches the daemon's histogram");

/* Our queue in the daemon's stats (0), or -ENOENT / -errno. */
static int our_queue(struct cc_conn *conn, const char *client_name,
		     struct cc_queue_stats *out)
{
	struct cc_stats st;
	unsigned i;
	int rc;

	memset(&st, 0, sizeof(st));
	rc = cc_stats_get(conn, &st);
	if (rc < 0)
		return rc;
	rc = -ENOENT;
	for (i = 0; i < st.n_queues; i++) {
		if (st.queues[i].pid == (uint32_t)getpid() &&
		    !strcmp(st.queues[i].client_name, client_name)) {
			*out = st.queues[i];
			rc = 0;
			break;
		}
	}
	cc_stats_free(&st);
	return rc;
}

void bench_report_passes(const struct bench_cfg *cfg, struct cc_conn *conn,
			 const char *alg, struct bench_passes *prev)
{
	struct cc_queue_stats qs;
	uint64_t runs = 0, ops, d[BENCH_HIST];
	char hist[256] = "";
	size_t used = 0;
	unsigned k;

	if (our_queue(conn, BENCH_CLIENT_NAME, &qs) < 0)
		return;
	for (k = 0; k < BENCH_HIST; k++) {
		d[k] = qs.batch_hist[k] - prev->hist[k];
		runs += d[k];
		prev->hist[k] = qs.batch_hist[k];
	}
	ops = qs.c.ops - prev->ops;
	prev->ops = qs.c.ops;
	if (!alg || !runs)
		return; /* the baseline */
	for (k = 0; k < BENCH_HIST && used < sizeof(hist); k++) {
		if (!d[k])
			continue;
		used += (size_t)snprintf(hist + used, sizeof(hist) - used,
					 "%s%u-%u: %.0f%%", used ? ", " : "",
					 1u << k, (2u << k) - 1,
					 100.0 * (double)d[k] / (double)runs);
	}
	bench_note(cfg,
		   "Daemon, %s: %.1f ops per worker pass (passes by size: "
		   "%s)\n",
		   alg, (double)ops / (double)runs, hist);
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
