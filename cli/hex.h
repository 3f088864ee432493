/* SPDX-License-Identifier: MIT */
/* Hexadecimal text and bytes (hex.c). */
#ifndef CRYPTOCTL_HEX_H
#define CRYPTOCTL_HEX_H

#include <stddef.h>
#include <stdint.h>

int hex_decode(const char *hex, uint8_t *out, size_t max);
void hex_encode(const uint8_t *in, size_t len, char *out);
/* Why hex_decode() refused hex (-EINVAL): what is valid, into buf. */
void hex_why(const char *hex, char *buf, size_t len);

#endif /* CRYPTOCTL_HEX_H */
