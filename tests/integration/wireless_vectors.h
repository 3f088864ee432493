/* SPDX-License-Identifier: MIT */
/*
 * The published 3GPP conformance vectors for SNOW 3G UEA2/UIA2, ZUC
 * EEA3/EIA3 and KASUMI f8/f9 (wireless_vectors.c says which document and
 * test set each one is), as hex strings, for test_wireless_kat.
 */
#ifndef CRYPTOD_TEST_WIRELESS_VECTORS_H
#define CRYPTOD_TEST_WIRELESS_VECTORS_H

#include <cryptoclient.h>

struct wv {
	enum cc_alg alg;
	const char *what; /* document and test set */
	const char *key, *iv;
	uint32_t bits;	 /* LENGTH: of the data, or of f9's MESSAGE */
	const char *in;	 /* plaintext, or the message */
	const char *out; /* ciphertext, or the 4-byte MAC */
	int dir;	 /* KASUMI f9: DIRECTION (data = MESSAGE || it) */
};

extern const struct wv wv_vectors[];
extern const unsigned wv_n_vectors;

#endif
