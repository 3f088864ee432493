/* SPDX-License-Identifier: MIT */
/* The aesni engine's session key material, shared by engine_aesni.c and
 * the files that serve its streams (aesni_stream_*.c, stream_mac.c). */
#ifndef CRYPTOD_ENGINE_AESNI_H
#define CRYPTOD_ENGINE_AESNI_H

#include <stdint.h>

#include <intel-ipsec-mb.h>

#include "session.h"

/* Session key material, in the session's locked slot. */
struct aesni_key {
	union {
		struct gcm_key_data gcm; /* expanded keys + GHASH tables */
		uint8_t chacha[32];	 /* ChaCha20-Poly1305: the raw key */
		struct {
			DECLARE_ALIGNED(uint8_t enc[16 * 15], 16);
			DECLARE_ALIGNED(uint8_t dec[16 * 15], 16);
			/* HMAC states: SHA-384 and SHA-512 keep all eight
			 * 64-bit words */
			DECLARE_ALIGNED(uint8_t ipad[64], 16);
			DECLARE_ALIGNED(uint8_t opad[64], 16);
			/* HMAC of the empty message: ipsec-mb refuses jobs
			 * that hash nothing. */
			uint8_t empty_mac[64];
			/* The raw HMAC key, for messages longer than an
			 * ipsec-mb job can hash (aesni_authenc_big); CCM:
			 * the raw AES key, for ops ipsec-mb cannot take
			 * (aesni_ccm_evp). */
			uint8_t auth_raw[64];
			uint8_t auth_len;
		} blk;
	};
};
_Static_assert(sizeof(struct aesni_key) <= sizeof(((struct session *)0)->key),
	       "expanded key fits the session");

/*
 * Run one cipher-only AES job to completion on m, for the stream files:
 * mode, direction, the expanded keys (key_len bytes of key), n bytes src
 * -> dst, iv a 16-byte block or NULL. Stream pieces run outside any burst,
 * so m holds no other job and what it returns is this one. 0, or -EIO
 * when ipsec-mb refused or failed it.
 */
int aesni_job_run(IMB_MGR *m, IMB_CIPHER_MODE mode, int encrypt,
		  const void *enc_keys, const void *dec_keys, unsigned key_len,
		  const uint8_t *src, uint8_t *dst, uint64_t n,
		  const uint8_t *iv);

#endif
