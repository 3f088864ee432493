/* SPDX-License-Identifier: MIT */
/*
 * Key pairs' integration tests (docs/asymmetric.md): keys made and
 * encoded in-process with OpenSSL, sessions over them, one op through
 * the library. Shared by test_pk_diff, test_pk_neg and pk_run.
 */
#ifndef CRYPTOD_TEST_PK_COMMON_H
#define CRYPTOD_TEST_PK_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <openssl/evp.h>

#include <cryptoclient.h>

extern int pk_fails;

#define PK_CHECK(cond, ...)                                                    \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);   \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			pk_fails++;                                            \
		}                                                              \
	} while (0)

/* A fresh key of alg's row (its OpenSSL name column: "RSA:2048",
 * "EC:P-256", "ED25519"), or NULL. */
EVP_PKEY *pk_keygen(enum cc_alg alg);
/* k as PKCS#8 PrivateKeyInfo (pub 0) or SubjectPublicKeyInfo (pub 1)
 * DER, malloc'd into *der; its length, or 0 on failure. */
size_t pk_der(EVP_PKEY *k, int pub, uint8_t **der);
/* A session of alg over k (pub: its public half alone). 0 and *err on
 * failure. */
uint32_t pk_session(struct cc_conn *c, enum cc_alg alg, EVP_PKEY *k, int pub,
		    int *err);
/* The EVP digest of enum cc_pk_md md, or NULL. */
const EVP_MD *pk_md(unsigned md);
/* The peer's public key as a derive takes it (an uncompressed EC point,
 * X25519's raw bytes) in buf; its length, or 0. */
size_t pk_peer_bytes(EVP_PKEY *k, uint8_t *buf, size_t len);
/* Hex to bytes: the count, or -1. */
int pk_unhex(const char *hex, uint8_t *out, size_t max);

#endif
