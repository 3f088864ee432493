/* SPDX-License-Identifier: MIT */
/*
 * AES key wrap: RFC 3394 (KW, input a multiple of 8 bytes, at least 16)
 * and RFC 5649 (KWP, any length from 1 byte, zero-padded, the length in
 * the integrity value). KEKs of 16, 24 or 32 bytes. The block cipher is
 * OpenSSL's AES-ECB; the wrapping function W, its inverse and the
 * integrity checks are ours. Control thread only (not the data path).
 *
 * All return the output length on success, or -errno:
 *   -EINVAL   KEK or input length not allowed
 *   -ENOSPC   out_cap too small (see kw_wrapped_len / kwp_wrapped_len)
 *   -EBADMSG  unwrap: integrity check failed (the output is wiped)
 *   -ENOMEM   the block cipher could not be set up
 * The integrity check of an unwrap runs in constant time in the secret
 * values; only its single yes/no outcome is branched on.
 */
#ifndef CRYPTOD_KEYWRAP_H
#define CRYPTOD_KEYWRAP_H

#include <cryptod/compiler.h>

#include <stddef.h>
#include <stdint.h>

enum {
	KW_SEMIBLOCK = 8,
	KW_MAX_INPUT = 4096, /* keys, not bulk data: one bound for all */
};

/* Wrapped size of n plaintext bytes, or 0 when n is not allowed. */
size_t kw_wrapped_len(size_t n);
size_t kwp_wrapped_len(size_t n);

CRD_MUST_CHECK int kw_wrap(const uint8_t *kek, size_t kek_len,
			   const uint8_t *in, size_t in_len, uint8_t *out,
			   size_t out_cap);
/* out needs in_len - 8 bytes. */
CRD_MUST_CHECK int kw_unwrap(const uint8_t *kek, size_t kek_len,
			     const uint8_t *in, size_t in_len, uint8_t *out,
			     size_t out_cap);
CRD_MUST_CHECK int kwp_wrap(const uint8_t *kek, size_t kek_len,
			    const uint8_t *in, size_t in_len, uint8_t *out,
			    size_t out_cap);
/* out needs in_len - 8 bytes (the padded length); returns the unpadded. */
CRD_MUST_CHECK int kwp_unwrap(const uint8_t *kek, size_t kek_len,
			      const uint8_t *in, size_t in_len, uint8_t *out,
			      size_t out_cap);

#endif
