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

/* Milliseconds of the coarse clock (the last tick: a few ms old, and
 * cheaper still), for once-a-second decisions on a hot path. */
static inline uint64_t crd_now_coarse_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif
