/* SPDX-License-Identifier: MIT */
/* The monotonic clock, for the daemon, the library and the tools alike
 * (not installed). With the TSC clocksource clock_gettime is a vDSO call,
 * no syscall; still, the data path reads it per run, never per op. */
#ifndef CRYPTOD_CLOCK_H
#define CRYPTOD_CLOCK_H

#include <stdint.h>
#include <time.h>

/* How long a client (the library, the provider, cryptoctl) waits for the
 * daemon, a reply or a completion, before it gives up (-ETIMEDOUT). */
enum { CRD_WAIT_MAX_MS = 30000 };

static inline uint64_t crd_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t crd_now_us(void)
{
	return crd_now_ns() / 1000u;
}

static inline uint64_t crd_now_ms(void)
{
	return crd_now_ns() / 1000000u;
}

/* Waiters that spin (the daemon's idle workers, the library's cc_wait,
 * the provider's synchronous ops) pause between looks, and give up their
 * CPU with sched_yield() once per CRD_SPIN_YIELD_NS: often enough that a
 * waiter sharing a core with the one it waits for soon lets it run,
 * seldom enough that one with a core to itself is rarely inside that
 * system call (1-3 us under a hypervisor, as long as a short op's whole
 * round trip) when its answer lands. */
enum { CRD_SPIN_YIELD_NS = 5000 };

static inline void crd_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Milliseconds of the coarse clock (the last tick: a few ms old, and
 * cheaper still), for once-a-second decisions on a hot path. */
static inline uint64_t crd_now_coarse_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif
