/* SPDX-License-Identifier: MIT */
/* Clocks, medians and percentiles, run histograms, and how busy the
 * machine was while we measured. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cryptod/clock.h>

#include "poolbench.h"

uint64_t pb_now_ns(void)
{
	return crd_now_ns();
}

void pb_sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void pb_sort(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

double pb_median(double *v, unsigned n)
{
	if (!n)
		return 0.0;
	pb_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double pb_percentile_sorted(const double *v, unsigned n, double p)
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

void pb_note(const struct pb_cfg *cfg, const char *fmt, ...)
{
	FILE *f = cfg->csv ? stderr : stdout;
	va_list ap;

	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fflush(f);
}

const char *pb_hist_label(unsigned k)
{
	static const char *const labels[PB_HIST] = {
		"1", "2-3", "4-7", "8-15", "16-31", "32-63", "64-127", "128+",
	};

	return k < PB_HIST ? labels[k] : "?";
}

void pb_qstats_sub(struct cc_queue_stats *d, const struct cc_queue_stats *a,
		   const struct cc_queue_stats *b)
{
	*d = *a;
	d->c.ops = a->c.ops - b->c.ops;
	d->c.bytes = a->c.bytes - b->c.bytes;
	d->c.errors = a->c.errors - b->c.errors;
	d->c.auth_failures = a->c.auth_failures - b->c.auth_failures;
	d->c.retries = a->c.retries - b->c.retries;
	d->c.empty_polls = a->c.empty_polls - b->c.empty_polls;
	d->c.wakeups = a->c.wakeups - b->c.wakeups;
	for (unsigned k = 0; k < PB_HIST; k++)
		d->batch_hist[k] = a->batch_hist[k] - b->batch_hist[k];
}

/* Idle and total ticks of all CPUs, from /proc/stat's first line. */
static int cpu_ticks(unsigned long long *idle, unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5)
		return -EINVAL;
	*idle = v[3] + v[4];
	*total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	return 0;
}

/* utime + stime (+ cutime + cstime: daemons already reaped) in ticks. */
static unsigned long long proc_ticks(pid_t pid, bool children)
{
	char path[64];
	unsigned long long ut = 0, st = 0, cut = 0, cst = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* comm may hold spaces and parentheses: resume after the last ')'. */
	char line[1024];
	char *p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;

	fclose(f);
	if (!p ||
	    sscanf(p + 1,
		   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
		   "%llu %llu",
		   &ut, &st, &cut, &cst) != 4)
		return 0;
	return ut + st + (children ? cut + cst : 0);
}

static unsigned long long ours(const struct pb_daemons *ds)
{
	pid_t pids[PB_MAX_DAEMONS];
	unsigned n = ds ? pb_daemons_pids(ds, pids, PB_MAX_DAEMONS) : 0;
	unsigned long long t = proc_ticks(getpid(), true);

	for (unsigned i = 0; i < n; i++)
		t += proc_ticks(pids[i], false);
	return t;
}

void pb_env_start(struct pb_env *e, const struct pb_daemons *ds)
{
	e->ok = !cpu_ticks(&e->idle0, &e->total0);
	e->ours0 = ours(ds);
}

double pb_env_others(const struct pb_env *e, const struct pb_daemons *ds)
{
	unsigned long long idle, total, busy, mine;

	if (!e->ok || cpu_ticks(&idle, &total) || total <= e->total0)
		return -1;
	busy = (total - e->total0) - (idle - e->idle0);
	mine = ours(ds) - e->ours0;
	return busy > mine ? 100.0 * (double)(busy - mine) /
				     (double)(total - e->total0)
			   : 0.0;
}

double pb_env_idle_now(void)
{
	unsigned long long i0, t0, i1, t1;

	if (cpu_ticks(&i0, &t0))
		return -1;
	pb_sleep_us(300000);
	if (cpu_ticks(&i1, &t1) || t1 == t0)
		return -1;
	return 100.0 * (double)(i1 - i0) / (double)(t1 - t0);
}
