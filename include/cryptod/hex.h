/* SPDX-License-Identifier: MIT */
/* Hex digits, for the daemon (key files) and the tools alike (not
 * installed): the one place that reads them. */
#ifndef CRYPTOD_HEX_H
#define CRYPTOD_HEX_H

/* The value of hex digit c (0-9, a-f, A-F), or -1. */
static inline int crd_hex_val(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
