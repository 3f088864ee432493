/* SPDX-License-Identifier: MIT */
/*
 * How busy the machine was. The A/B rounds absorb steady noise, but a run
 * beside a build or a test suite on a 2-core machine is worth less, and
 * the reader should be told: CPU time of other processes is the busy time
 * of all CPUs (/proc/stat) minus ours and the spawned daemon's.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

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

/* utime + stime of a process, in ticks; 0 when unknown. */
static unsigned long long proc_ticks(int pid)
{
	char path[64], comm_end[256];
	unsigned long long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* Skip "pid (comm) state ppid ... minflt..." up to utime, field 14;
	 * comm may hold spaces, so resume after its closing ')'. */
	if (fscanf(f,
		   "%*d (%255[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
		   "%llu %llu",
		   comm_end, &ut, &st) != 3)
		ut = st = 0;
	fclose(f);
	return ut + st;
}

static unsigned long long ours(const struct bench_env *e)
{
	return proc_ticks((int)getpid()) +
	       (e->daemon_pid > 0 ? proc_ticks(e->daemon_pid) : 0);
}

void bench_env_start(struct bench_env *e, const struct bench_cfg *cfg,
		     int daemon_pid)
{
	struct timespec ts = { 0, 200 * 1000000L };
	unsigned long long i0, t0, i1, t1;
	double idle;

	e->ok = false;
	e->daemon_pid = daemon_pid;
	if (cpu_ticks(&i0, &t0))
		return;
	nanosleep(&ts, NULL);
	if (cpu_ticks(&i1, &t1) || t1 == t0)
		return;
	idle = (double)(i1 - i0) / (double)(t1 - t0);
	bench_note(
		cfg,
		"Machine: %ld CPUs online, %.0f%% idle just before the run%s\n",
		sysconf(_SC_NPROCESSORS_ONLN), idle * 100,
		idle < 0.9 ? ": WARNING, something else is running" : "");
	e->idle0 = i1;
	e->total0 = t1;
	e->ours0 = ours(e);
	e->ok = true;
}

void bench_env_end(const struct bench_env *e, const struct bench_cfg *cfg)
{
	unsigned long long idle, total, busy, mine;
	double others;

	if (!e->ok || cpu_ticks(&idle, &total) || total <= e->total0)
		return;
	busy = (total - e->total0) - (idle - e->idle0);
	mine = ours(e) - e->ours0;
	others =
		busy > mine ? (double)(busy - mine) / (total - e->total0) : 0.0;
	bench_note(
		cfg,
		"Machine: other processes used %.0f%% of all CPU time "
		"during the run%s%s\n",
		others * 100,
		e->daemon_pid > 0
			? ""
			: " (the daemon's share included: its pid is unknown)",
		others > 0.05 ? ": WARNING, figures disturbed; run again on "
				"a quiet machine"
			      : "");
}
