/* SPDX-License-Identifier: MIT */
/*
 * The operations of a cipher mode, as prov_cipher.c reaches them: one
 * table per mode file (prov_block.c, prov_aead.c, prov_ccm.c), named by
 * each cipher's row (pc_info.ops). A mode file defines its table and
 * calls only prov_path.c (a message's path) below it; prov_cipher.c
 * calls a mode only through its table.
 */
#ifndef CRYPTOD_PROV_MODE_H
#define CRYPTOD_PROV_MODE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/core.h>

struct pc_ctx;

struct pc_mode {
	/* A new context (optional). */
	void (*newctx)(struct pc_ctx *c);
	/* After an init set the key and/or IV (optional): 0 or -errno, an
	 * error raised. */
	int (*init)(struct pc_ctx *c, int key_changed, int iv_changed);
	/* 0, -errno (an error raised) or PC_SW: the message just went
	 * in-process, repeat the call on swctx. */
	int (*update)(struct pc_ctx *c, uint8_t *out, size_t *outl,
		      size_t outsize, const uint8_t *in, size_t inl);
	/* As update; NULL: the data update did it all (CCM). */
	int (*final)(struct pc_ctx *c, uint8_t *out, size_t *outl,
		     size_t outsize);
	/* OSSL_FUNC_cipher_cipher (optional; NULL: final when in is NULL,
	 * else update): 0, or -errno. */
	int (*cipher)(struct pc_ctx *c, uint8_t *out, size_t *outl,
		      size_t outsize, const uint8_t *in, size_t inl);
	/* The context parameters (optional; NULL: the generic ones of
	 * prov_cipher.c): OpenSSL's 1 / 0. */
	int (*get_ctx_params)(struct pc_ctx *c, OSSL_PARAM params[]);
	int (*set_ctx_params)(struct pc_ctx *c, const OSSL_PARAM params[]);
	/* The end of a message (optional). */
	void (*reset)(struct pc_ctx *c);
	/* dupctx's part of the mode (optional): 0 or -errno. */
	int (*dup)(struct pc_ctx *dst, const struct pc_ctx *src);
	/* The one-shot call's output is its input's length (CCM: the update
	 * ran the whole message). */
	unsigned cipher_whole : 1;
};

extern const struct pc_mode pc_mode_block; /* prov_block.c */
extern const struct pc_mode pc_mode_aead;  /* prov_aead.c */
extern const struct pc_mode pc_mode_ccm;   /* prov_ccm.c */

#endif
