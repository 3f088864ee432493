/* SPDX-License-Identifier: MIT */
/*
 * The service-time histogram shared by the daemon (which fills it) and
 * libcryptoclient (which turns it into percentiles): log-linear buckets
 * of nanoseconds, 8 per power of two, so every bucket is at most 12.5%
 * wide. Values below 8 ns have a bucket each; the last bucket also takes
 * everything from 2^37 ns (about 137 s) up.
 *
 * Adding to a bucket is one shift and one count-leading-zeros: cheap
 * enough to do once per run of ops, never per op.
 */
#ifndef CRYPTOD_LATHIST_H
#define CRYPTOD_LATHIST_H

#include <stdint.h>

enum {
	LAT_SUB_BITS = 3, /* 8 buckets per power of two */
	LAT_SUB = 1 << LAT_SUB_BITS,
	LAT_MAX_EXP = 36, /* largest exponent with buckets of its own */
	LAT_BUCKETS = LAT_SUB * (LAT_MAX_EXP - LAT_SUB_BITS + 2),
};

static inline unsigned lat_bucket(uint64_t ns)
{
	if (ns < LAT_SUB)
		return (unsigned)ns;
	unsigned e = 63 - (unsigned)__builtin_clzll(ns); /* >= LAT_SUB_BITS */
	unsigned b = (e - LAT_SUB_BITS + 1) * LAT_SUB +
		     (unsigned)((ns >> (e - LAT_SUB_BITS)) & (LAT_SUB - 1));
	return b < LAT_BUCKETS ? b : LAT_BUCKETS - 1;
}

/* The smallest value that lands in bucket b. */
static inline uint64_t lat_bucket_low(unsigned b)
{
	if (b < LAT_SUB)
		return b;
	unsigned e = b / LAT_SUB + LAT_SUB_BITS - 1;
	return (uint64_t)(LAT_SUB + b % LAT_SUB) << (e - LAT_SUB_BITS);
}

/* The largest value that lands in bucket b (the last is open-ended: its
 * low bound is all we can say). */
static inline uint64_t lat_bucket_high(unsigned b)
{
	if (b + 1 >= LAT_BUCKETS)
		return lat_bucket_low(b);
	return lat_bucket_low(b + 1) - 1;
}

/*
 * The q-quantile (0 < q <= 1) of the n buckets of h, as the upper bound
 * of the bucket that holds it (never an underestimate by more than a
 * bucket's width); 0 for an empty histogram.
 */
static inline uint64_t lat_quantile(const uint64_t *h, unsigned n, double q)
{
	uint64_t total = 0, seen = 0;
	for (unsigned b = 0; b < n; b++)
		total += h[b];
	if (!total)
		return 0;
	/* Rank of the sample wanted, 1-based, rounded up. */
	double r = q * (double)total;
	uint64_t rank = (uint64_t)r;
	if ((double)rank < r || rank == 0)
		rank++;
	for (unsigned b = 0; b < n; b++) {
		seen += h[b];
		if (seen >= rank)
			return lat_bucket_high(b);
	}
	return lat_bucket_high(n - 1);
}

#endif /* CRYPTOD_LATHIST_H */
