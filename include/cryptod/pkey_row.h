/* SPDX-License-Identifier: MIT */
/*
 * Which row of the algorithm table an OpenSSL key is (docs/
 * asymmetric.md): the one check, from the row's OpenSSL name column
 * (crd_alg_pkey_type), for the files that hold an EVP_PKEY: the openssl
 * engine's sessions, the key store's generation and import, cryptoctl's
 * key files. Header-only (as pump.h: the library exports no OpenSSL
 * calls); not installed.
 */
#ifndef CRYPTOD_PKEY_ROW_H
#define CRYPTOD_PKEY_ROW_H

#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/objects.h>

#include <cryptod/ring_abi.h>

/* The NID of an EC group as NIST or OpenSSL names it ("P-256",
 * "prime256v1"), or NID_undef. */
static inline int crd_pkey_group_nid(const char *name)
{
	int nid = EC_curve_nist2nid(name);
	return nid != NID_undef ? nid : OBJ_sn2nid(name);
}

/* Is k of the type and size alg's row says: the type, and the RSA
 * modulus's bits or the EC group? */
static inline int crd_pkey_matches(const EVP_PKEY *k, unsigned alg)
{
	char type[16], group[64];
	const char *param;
	if (crd_alg_pkey_type(alg, type, sizeof(type), &param) ||
	    !EVP_PKEY_is_a(k, type))
		return 0;
	if (!param)
		return 1;
	if (!strcmp(type, "RSA"))
		return EVP_PKEY_get_bits(k) == atoi(param);
	if (!EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME,
					    group, sizeof(group), NULL))
		return 0;
	int nid = crd_pkey_group_nid(group);
	return nid != NID_undef && nid == crd_pkey_group_nid(param);
}

/* The row k is (enum crd_alg), or 0 when none takes it. */
static inline unsigned crd_pkey_row(const EVP_PKEY *k)
{
	for (unsigned a = 1; a < CRD_ALG_MAX_; a++)
		if (crd_alg_pkey(a) && crd_pkey_matches(k, a))
			return a;
	return 0;
}

#endif
