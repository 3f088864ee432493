/* SPDX-License-Identifier: MIT */
/*
 * The one environment capture of every bench mode: the machine (CPU
 * model, the flags the engines care about, the ipsec-mb code path it
 * picks) and how busy it was. Rounds absorb steady noise, but a run beside
 * a build on a 2-core machine is worth less, and the reader should be
 * told: CPU time of other processes is the busy time of all CPUs
 * (/proc/stat) minus ours and the daemons'.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* utime + stime (+ cutime + cstime: children already reaped) in ticks;
 * 0 when unknown. */
static unsigned long long proc_ticks(int pid, bool children)
{
	unsigned long long ut = 0, st = 0, cut = 0, cst = 0;
	char path[64], line[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* comm may hold spaces and parentheses: resume after the last ')'. */
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	if (!p ||
	    sscanf(p + 1,
		   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
		   "%llu %llu",
		   &ut, &st, &cut, &cst) != 4)
		return 0;
	return ut + st + (children ? cut + cst : 0);
}

static unsigned long long ours(const int *pids, unsigned n)
{
	unsigned long long t = proc_ticks((int)getpid(), true);

	for (unsigned i = 0; i < n; i++)
		if (pids[i] > 0)
			t += proc_ticks(pids[i], false);
	return t;
}

/* The CPU flags that decide which engine code runs. */
static const char *const cpu_flags[] = {
	"aes",	    "pclmulqdq", "avx",	       "avx2", "avx512f",
	"avx512bw", "vaes",	 "vpclmulqdq", "gfni", "sha_ni",
};

static void cpu_model(char *model, size_t mlen, char *flags, size_t flen)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");
	size_t used = 0;

	snprintf(model, mlen, "unknown CPU");
	flags[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		v += 2;
		v[strcspn(v, "\n")] = 0;
		if (!strncmp(line, "model name", 10)) {
			snprintf(model, mlen, "%s", v);
		} else if (!strncmp(line, "flags", 5)) {
			/* Whole words: pad the list and each flag. */
			static char padded[sizeof(line) + 2];
			snprintf(padded, sizeof(padded), " %s ", v);
			for (size_t i = 0;
			     i < sizeof(cpu_flags) / sizeof(cpu_flags[0]);
			     i++) {
				char want[32];

				snprintf(want, sizeof(want), " %s ",
					 cpu_flags[i]);
				if (strstr(padded, want) && used < flen)
					used += (size_t)snprintf(
						flags + used, flen - used,
						"%s%s", used ? " " : "",
						cpu_flags[i]);
			}
			break; /* the first CPU's flags stand for all */
		}
	}
	fclose(f);
}

/*
 * What one cache line costs to cross between CPU 0 and CPU 1 and back:
 * the floor under every round trip to the daemon. It moves with where
 * the hypervisor puts the vCPUs (seen here: a synchronous 1 KiB AES-GCM
 * through the provider at 360 MB/s on one placement, 780 on another),
 * so a reader comparing two runs needs it. Two threads pinned to the
 * two CPUs pass a counter back and forth; the median of 5 batches.
 */
enum { PING_ROUNDS = 4000, PING_BATCHES = 5 };

struct ping {
	_Alignas(64) _Atomic uint32_t v;
	uint32_t rounds;
};

static int ping_pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *ping_peer(void *arg)
{
	struct ping *p = arg;
	(void)ping_pin(1); /* the caller checked that CPU 1 is ours */
	for (uint32_t i = 0; i < p->rounds; i++) {
		while (atomic_load_explicit(&p->v, memory_order_acquire) !=
		       2 * i + 1)
			if (atomic_load_explicit(&p->v, memory_order_relaxed) ==
			    UINT32_MAX)
				return NULL; /* the caller gave up */
		atomic_store_explicit(&p->v, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

/* ns per round trip CPU 0 -> 1 -> 0, or -1 (CPU 0 or 1 not ours, no
 * pinning, or a peer that never answered). */
static double ping_ns(void)
{
	cpu_set_t old;
	double ns[PING_BATCHES];
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 ||
	    pthread_getaffinity_np(pthread_self(), sizeof(old), &old) ||
	    !CPU_ISSET(0, &old) || !CPU_ISSET(1, &old) || ping_pin(0))
		return -1;
	double r = -1;
	unsigned b;
	for (b = 0; b < PING_BATCHES; b++) {
		struct ping p = { .rounds = PING_ROUNDS };
		pthread_t t;
		if (pthread_create(&t, NULL, ping_peer, &p))
			break;
		double t0 = 0;
		int lost = 0;
		for (uint32_t i = 0; i < p.rounds && !lost; i++) {
			if (i == 1)
				t0 = (double)crd_now_ns(); /* the peer is up */
			atomic_store_explicit(&p.v, 2 * i + 1,
					      memory_order_release);
			uint64_t spins = 0;
			while (atomic_load_explicit(
				       &p.v, memory_order_acquire) != 2 * i + 2)
				if (++spins == 100000000) { /* seconds */
					atomic_store(&p.v, UINT32_MAX);
					lost = 1;
					break;
				}
		}
		ns[b] = ((double)crd_now_ns() - t0) / (p.rounds - 1);
		pthread_join(t, NULL);
		if (lost)
			break;
	}
	if (b == PING_BATCHES)
		r = bench_median(ns, PING_BATCHES);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	return r;
}

void bench_env_start(struct bench_env *e, FILE *out, const int *pids,
		     unsigned n)
{
	struct timespec ts = { 0, 200 * 1000000L };
	unsigned long long i0, t0, i1, t1;
	char model[128], flags[128];
	double idle;

	cpu_model(model, sizeof(model), flags, sizeof(flags));
	/* Two lines, each within 100 columns. */
	fprintf(out,
		"Machine: %s, %ld CPUs online; intel-ipsec-mb %s picks its %s "
		"code\nMachine flags: %s\n",
		model, sysconf(_SC_NPROCESSORS_ONLN), bench_imb_version(),
		bench_imb_arch_name(),
		flags[0] ? flags : "none of aes avx2 avx512f vaes gfni");
	/* What a daemon started from this environment runs instead, and
	 * whose code OpenSSL is kept from (a Zen 3 emulated on a Zen 4:
	 * docs/provider.md) */
	const char *arch = getenv("CRYPTOD_IMB_ARCH"),
		   *cap = getenv("OPENSSL_ia32cap");
	if (arch && *arch)
		fprintf(out,
			"Machine: CRYPTOD_IMB_ARCH=%.16s: a daemon started "
			"here runs that code instead\n",
			arch);
	if (cap && *cap)
		fprintf(out,
			"Machine: OPENSSL_ia32cap=%.40s: OpenSSL's CPU "
			"features masked so\n",
			cap);
	e->ok = false;
	if (cpu_ticks(&i0, &t0))
		return;
	unsigned long long o0 = ours(pids, n);
	nanosleep(&ts, NULL);
	if (cpu_ticks(&i1, &t1) || t1 == t0)
		return;
	/* Ours and the daemons' time counts as idle: a busy-polling daemon
	 * keeps its core at 100% and is not "something else". */
	unsigned long long o1 = ours(pids, n);
	idle = (double)(i1 - i0 + (o1 - o0)) / (double)(t1 - t0);
	if (idle > 1)
		idle = 1;
	fprintf(out, "Machine: %.0f%% idle just before the run%s\n", idle * 100,
		idle < 0.9 ? "; something else is running, figures may be low"
			   : "");
	double ping = ping_ns();
	if (ping > 0)
		fprintf(out,
			"Machine: a cache line from CPU 0 to CPU 1 and back: "
			"%.0f ns (placement of the vCPUs)\n",
			ping);
	fflush(out);
	bench_env_mark(e, pids, n);
}

void bench_env_mark(struct bench_env *e, const int *pids, unsigned n)
{
	e->ok = !cpu_ticks(&e->idle0, &e->total0);
	e->ours0 = ours(pids, n);
}

double bench_env_others(const struct bench_env *e, const int *pids, unsigned n)
{
	unsigned long long idle, total, busy, mine;

	if (!e->ok || cpu_ticks(&idle, &total) || total <= e->total0)
		return -1;
	busy = (total - e->total0) - (idle - e->idle0);
	mine = ours(pids, n) - e->ours0;
	return busy > mine ? 100.0 * (double)(busy - mine) /
				     (double)(total - e->total0)
			   : 0.0;
}

void bench_env_end(const struct bench_env *e, FILE *out, const int *pids,
		   unsigned n, const char *during)
{
	double others = bench_env_others(e, pids, n);

	if (others < 0)
		return;
	fprintf(out,
		"Machine: other processes used %.0f%% of all CPU time during "
		"%s%s\n",
		others, during, n ? "" : " (the daemon's share included)");
	if (others > 5)
		fputs("Other programs competed for the CPU: the figures may be "
		      "low; run again on a\nquiet machine to compare.\n",
		      out);
	fflush(out);
}
