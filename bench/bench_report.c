/* SPDX-License-Identifier: MIT */
/* Medians, messages and notes, and the daemon's view of the run (its
 * counters for our queue, the runs its workers took). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_sort(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

double bench_median(double *v, unsigned n)
{
	if (!n)
		return 0.0;
	bench_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_percentile_sorted(const double *v, unsigned n, double p)
{
	if (!n)
		return 0.0;
	/* Nearest rank: the smallest sample with at least p% at or below. */
	double rank = p / 100.0 * n;
	unsigned i = (unsigned)rank;

	if ((double)i < rank)
		i++;
	return v[i ? i - 1 : 0];
}

const char *bench_prog = "cryptoctl: bench";

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

static void print_counters(const struct bench_cfg *cfg,
			   const struct cc_counters *c)
{
	/* Two lines: a report line stays within 100 columns. */
	bench_note(cfg,
		   "ops %llu, bytes %llu, errors %llu, auth failures %llu,\n"
		   "  retries %llu, empty polls %llu, wakeups %llu\n",
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
		/* what rounds to 0% is noise here */
		if (!d[k] || 100.0 * (double)d[k] / (double)runs < 0.5)
			continue;
		used += (size_t)snprintf(hist + used, sizeof(hist) - used,
					 "%s%u-%u: %.0f%%", used ? ", " : "",
					 1u << k, (2u << k) - 1,
					 100.0 * (double)d[k] / (double)runs);
	}
	bench_note(cfg,
		   "Daemon, %s: %.1f ops per worker pass\n"
		   "  passes by size: %s\n",
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
		   "Daemon: %s, %u worker%s, up %02u:%02u:%02u, %u client%s, "
		   "%u session%s\n",
		   cc_daemon_version(conn) ? cc_daemon_version(conn) : "?",
		   st.workers, st.workers == 1 ? "" : "s",
		   (unsigned)(st.uptime_ms / 3600000),
		   (unsigned)(st.uptime_ms / 60000 % 60),
		   (unsigned)(st.uptime_ms / 1000 % 60), st.clients,
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
		bench_note(cfg,
			   "Daemon, engine %s: ok ops %llu, bytes %llu, errors "
			   "%llu, auth failures %llu\n",
			   st.engines[i].name, (unsigned long long)c->ops,
			   (unsigned long long)c->bytes,
			   (unsigned long long)c->errors,
			   (unsigned long long)c->auth_failures);
	}
	cc_stats_free(&st);
}
