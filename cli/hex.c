/* SPDX-License-Identifier: MIT */
/*
 * Hex strings for keys, IVs, AAD and tags on the command line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cryptod/hex.h>

#include "hex.h"

/*
 * Decode hex (an optional "0x" prefix, then pairs of digits in either case)
 * into out[0..max). Returns the byte count, -EINVAL for an odd length or a
 * non-hex character, -E2BIG when it would not fit. On error out may hold
 * part of the value: callers wipe it either way.
 */
int hex_decode(const char *hex, uint8_t *out, size_t max)
{
	size_t len, i;

	if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
		hex += 2;
	len = strlen(hex);
	if (len % 2)
		return -EINVAL;
	if (len / 2 > max)
		return -E2BIG;

	for (i = 0; i < len / 2; i++) {
		int hi = crd_hex_val(hex[2 * i]);
		int lo = crd_hex_val(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)i;
}

void hex_why(const char *hex, char *buf, size_t len)
{
	size_t n, i;

	if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
		hex += 2;
	n = strlen(hex);
	/* The position, never the character: the string may be a key. */
	for (i = 0; i < n; i++)
		if (crd_hex_val(hex[i]) < 0) {
			snprintf(buf, len,
				 "character %zu is not a hex digit (0-9, a-f, "
				 "A-F; 0x in front is allowed)",
				 i + 1);
			return;
		}
	snprintf(buf, len,
		 "%zu hex digits, an odd number: two per byte (0f, not f)", n);
}

/* out must hold 2 * len + 1 bytes; it is NUL-terminated. */
void hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}
