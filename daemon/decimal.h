/* SPDX-License-Identifier: MIT */
/*
 * The daemon's one decimal parser, for numbers from its configuration and
 * its environment: digits only (no sign, no space, no base prefix, which
 * strtoull would take), at least one, and no more than a bound.
 */
#ifndef CRYPTOD_DECIMAL_H
#define CRYPTOD_DECIMAL_H

#include <errno.h>
#include <stdint.h>

/* The number at the start of s: 0 with *out, and *end at the first byte
 * after its digits; -EINVAL when s starts with no digit or the number is
 * above max. */
static inline int dec_parse(const char *s, uint64_t max, uint64_t *out,
			    const char **end)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	uint64_t v = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (max - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	*end = s;
	return 0;
}

/* The whole of s is such a number (dec_parse with nothing after it). */
static inline int dec_parse_all(const char *s, uint64_t max, uint64_t *out)
{
	const char *end;
	return dec_parse(s, max, out, &end) || *end ? -EINVAL : 0;
}

#endif
