/* SPDX-License-Identifier: MIT */
/* Names and texts of the algorithms and statuses of include/cryptod/algs.h
 * (shared by the daemon and libcryptoclient). */
#ifndef CRYPTOD_NAMES_H
#define CRYPTOD_NAMES_H

#include <stddef.h>

#include <cryptod/ring_abi.h>

/* "aes-gcm", ...; NULL for an unknown number. */
const char *crd_alg_name(unsigned alg);
/* "gcm(aes)", ...; NULL when unknown or the kernel has no such name. */
const char *crd_alg_kernel_name(unsigned alg);
/* Which names crd_alg_from_name() takes. */
enum crd_name_match {
	CRD_NAME_EXACT, /* ours only, as spelled ("aes-gcm"): route.<alg> */
	CRD_NAME_ANY,	/* ours or the kernel's ("gcm(aes)"), in any case */
};
/* The algorithm called name (NULL: none); its number, or -1. The one
 * name-to-algorithm look-up: the daemon and libcryptoclient use it. */
int crd_alg_from_name(const char *name, enum crd_name_match how);
/* The default tag length; 0 for none or unknown. */
unsigned crd_alg_tag_len(unsigned alg);
/*
 * The OpenSSL name of the EVP cipher (or digest) that runs alg with a
 * key of key_len bytes (the OpenSSL name column: "AES-128-GCM", "SHA256",
 * "ChaCha20-Poly1305"; XTS's key is two, "AES-128-XTS" at 32 bytes),
 * written to buf. 0, -ENOENT (OpenSSL has none), -EINVAL (no AES key of
 * that size) or -ENOSPC.
 */
int crd_alg_ossl_name(unsigned alg, unsigned key_len, char *buf, size_t len);
/* "success", "authentication failed: tag mismatch", ...; NULL when
 * status is none of CRD_ST_*. */
const char *crd_status_text(int status);

#endif
