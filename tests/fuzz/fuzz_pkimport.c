// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for a key pair's import (pk_import(), pkeys.c): what
 * an administrator's KeyRequest.key and .passphrase bring, PEM or DER in
 * any form OpenSSL's decoders take. Input: byte 0 picks the algorithm
 * the request names (0: none, else a key-pair row by index), byte 1 the
 * passphrase's length, then the passphrase and the key. Asserts that a
 * refusal says why; that what is taken is one whole PKCS#8 DER within its
 * row's slot, of a key-pair row (the one asked for, if any), whose public
 * half pk_public() gives.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cryptod/ring_abi.h>

#include "keyfile.h"
#include "pkeys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t der[KF_PKEY_MAX], pub[KF_PKEY_MAX];
	char why[200];

	if (size < 2)
		return 0;
	uint16_t alg = 0, want;
	for (unsigned a = 1, i = 0; a < CRD_ALG_MAX_ && data[0]; a++)
		if (crd_alg_pkey(a) && ++i == data[0])
			alg = (uint16_t)a;
	want = alg;
	size_t pl = data[1] < size - 2 ? data[1] : size - 2;
	const uint8_t *pass = data + 2, *key = data + 2 + pl;
	size_t kl = size - 2 - pl;
	why[0] = '\0';
	int n = pk_import(key, kl, pass, pl, &alg, der, sizeof(der), why,
			  sizeof(why));
	if (n < 0) {
		if (!why[0] || alg != want)
			abort(); /* a refusal says why and sets nothing */
		return 0;
	}
	if (!crd_alg_pkey(alg) || (want && alg != want) ||
	    (size_t)n > kf_pk_slot_len(alg) ||
	    pk_der_len(der, (size_t)n) != (size_t)n)
		abort();
	if (pk_public(der, (size_t)n, pub, sizeof(pub)) <= 0)
		abort();
	return 0;
}
