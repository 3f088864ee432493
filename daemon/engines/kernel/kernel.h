/* SPDX-License-Identifier: MIT */
/*
 * What the two kernel engines share between their data path
 * (engine_kernel.c) and their probing and pcrypt discovery
 * (kernel_probe.c). Each engine's priv is its struct kern_state.
 */
#ifndef CRYPTOD_KERNEL_H
#define CRYPTOD_KERNEL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cryptod/ring_abi.h>

#include "engine.h"
#include "kproc.h"

struct kcapi_handle;

enum {
	KERN_MAX_LEN = 65536,
	KERN_TAG_MAX = CRD_TAG_MAX, /* authenc SHA-512: 32; not 16 */
	/* AAD || data || tag, for input and output each */
	KERN_SCRATCH = CRD_AAD_MAX + 1 + KERN_MAX_LEN + KERN_TAG_MAX,
	KERN_WHY = 192,
};

/* The kernel's name for each algorithm we serve, and its AF_ALG type. */
struct kern_alg {
	const char *kname;
	int aead;
};
extern const struct kern_alg kern_algs[CRD_ALG_MAX_];

/* What probing found, per algorithm: an engine's priv. */
struct kern_state {
	struct {
		int ok;
		int prio;
		char driver[KPROC_NAME_MAX];
		char why[KERN_WHY];
	} a[CRD_ALG_MAX_];
	atomic_uint next_worker_id;
};

/* A transform bound to name (an AEAD or a cipher). 0 or -errno. */
int kern_handle_init(struct kcapi_handle **h, int aead, const char *name);

/* The authenc key blob the kernel wants into blob: rtattr{len 8, type
 * CRYPTO_AUTHENC_KEYA_PARAM}, be32 cipher key length, the HMAC key, the
 * AES key. blob holds 8 + CRD_AUTH_KEY_MAX + CRD_KEY_MAX bytes; returns
 * the length used. The caller wipes it. */
size_t kern_authenc_blob(uint8_t *blob, const uint8_t *auth_key,
			 size_t auth_key_len, const uint8_t *key,
			 size_t key_len);

/* kernel_probe.c: the engines' probe and alg_unavailable ops. */
int kern_probe(const struct engine *e, char *why, size_t why_len);
int kern_pcrypt_probe(const struct engine *e, char *why, size_t why_len);
const char *kern_alg_unavailable(const struct engine *e, unsigned alg);

#endif
