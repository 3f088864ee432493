/* SPDX-License-Identifier: MIT */
/*
 * Named key pairs' OpenSSL side (docs/keys.md, docs/asymmetric.md): a key
 * pair is kept as its PKCS#8 PrivateKeyInfo DER, generated here from its
 * row's OpenSSL name ("RSA:2048", "EC:P-256", "ED25519"), or decoded
 * from what an import brings (PEM or DER; PKCS#8, encrypted PKCS#8, the
 * traditional RSA and EC forms) and re-encoded, and checked against its
 * row (type and size). In the store each version fills a slot of
 * kf_pk_slot_len() bytes: the DER, then zeros (its own length says where it
 * ends: pk_der_len()), so that a key file keeps one length for all of a
 * key's versions, as format 1 of keyfile.h has it.
 *
 * Control thread only. DER outputs go to the caller's buffers (locked
 * memory); OpenSSL's own copies are freed with its cleansing frees.
 * Errors are -errno; with why/wlen a reason (never a key byte).
 */
#ifndef CRYPTOD_PKEYS_H
#define CRYPTOD_PKEYS_H

#include <cryptod/compiler.h>

#include <stddef.h>
#include <stdint.h>

/* The length of the DER SEQUENCE at buf (its header and content), or 0
 * when buf[0..cap) holds none. */
size_t pk_der_len(const uint8_t *buf, size_t cap);

/* The usage bits (KF_USE_*) a key pair of alg may carry: sign and verify
 * for a SIGN row, derive for DERIVE, encrypt and decrypt for PKE. */
uint32_t pk_usage_allowed(unsigned alg);

/* A new pair for alg, as PKCS#8 DER into out (cap bytes): its length. */
CRD_MUST_CHECK int pk_generate(unsigned alg, uint8_t *out, size_t cap,
			       char *why, size_t wlen);

/*
 * Decode in[0..len) (PEM or DER: PKCS#8, encrypted PKCS#8 under pass,
 * traditional RSA or EC), check it against *alg (0: take the row the
 * key matches, set in *alg) and write it as PKCS#8 DER to out: its
 * length. -EINVAL (with why) for a public key, garbage, a wrong or
 * missing passphrase, or a key of another type or size than *alg;
 * -EOPNOTSUPP for a key no row takes.
 */
CRD_MUST_CHECK int pk_import(const uint8_t *in, size_t len, const uint8_t *pass,
			     size_t pass_len, uint16_t *alg, uint8_t *out,
			     size_t cap, char *why, size_t wlen);

/* The SubjectPublicKeyInfo DER of the PKCS#8 DER der: its length. */
CRD_MUST_CHECK int pk_public(const uint8_t *der, size_t len, uint8_t *out,
			     size_t cap);

#endif
