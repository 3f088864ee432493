/* SPDX-License-Identifier: MIT */
/* Clocks, notes, run histograms, and how busy the machine was while we
 * measured (bench_env over the daemons). */
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

FILE *pb_note_out(const struct pb_cfg *cfg)
{
	return cfg->csv || cfg->json ? stderr : stdout;
}

void pb_note(const struct pb_cfg *cfg, const char *fmt, ...)
{
	FILE *f = pb_note_out(cfg);
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

void pb_env_start(struct bench_env *e, const struct pb_cfg *cfg,
		  const struct pb_daemons *ds)
{
	int pids[PB_MAX_DAEMONS];
	unsigned n = pb_daemons_pids(ds, pids, PB_MAX_DAEMONS);

	bench_env_start(e, pb_note_out(cfg), pids, n);
}

void pb_env_mark(struct bench_env *e, const struct pb_daemons *ds)
{
	int pids[PB_MAX_DAEMONS];
	unsigned n = pb_daemons_pids(ds, pids, PB_MAX_DAEMONS);

	bench_env_mark(e, pids, n);
}

void pb_env_end(const struct bench_env *e, const struct pb_cfg *cfg,
		const struct pb_daemons *ds, const char *during)
{
	int pids[PB_MAX_DAEMONS];
	unsigned n = pb_daemons_pids(ds, pids, PB_MAX_DAEMONS);

	bench_env_end(e, pb_note_out(cfg), pids, n, during);
}
