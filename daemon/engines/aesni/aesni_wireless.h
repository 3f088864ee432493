/* SPDX-License-Identifier: MIT */
/*
 * The aesni engine's 3GPP algorithms (aesni_wireless.c): capability rows,
 * key schedules and the per-op path, kept apart from engine_aesni.c.
 */
#ifndef CRYPTOD_AESNI_WIRELESS_H
#define CRYPTOD_AESNI_WIRELESS_H

#include <stddef.h>
#include <stdint.h>

#include <intel-ipsec-mb.h>

#include "engine.h"

struct session;

/* Lengths count bits (crd_alg_bit_len): min_len/max_len are bits. The
 * bounds are the specifications' and ipsec-mb's: SNOW 3G any length (here
 * up to CRD_OP_MAX_LEN bytes), ZUC 65504 bits, KASUMI 20000 bits; KASUMI
 * f9's data is a message of 1..20000 bits and DIRECTION, one bit more. */
#define CAP_WIRELESS(id, iv_, min_, max_)                                      \
	{                                                                      \
		.alg = CRD_ALG_##id, .n_key = 1, .key = { RANGE1(16) },        \
		CAP_IVS(iv_, iv_), .n_tag = 1,                                 \
		.tag = { RANGE1(CRD_TAG_##id) }, .aad = RANGE1(0),             \
		.min_len = (min_), .max_len = (max_), .block = 1               \
	}
#define AESNI_WIRELESS_CAPS                                                    \
	CAP_WIRELESS(SNOW3G_UEA2, 16, 1, CRD_OP_MAX_LEN * 8),                  \
		CAP_WIRELESS(SNOW3G_UIA2, 16, 1, CRD_OP_MAX_LEN * 8),          \
		CAP_WIRELESS(ZUC_EEA3, 16, 1, 65504),                          \
		CAP_WIRELESS(ZUC_EIA3, 16, 1, 65504),                          \
		CAP_WIRELESS(KASUMI_F8, 8, 1, 20000),                          \
		CAP_WIRELESS(KASUMI_F9, 8, 2, 20001)

/* Expand key into s->key for s->alg (a crd_alg_bit_len algorithm).
 * 0 or -EINVAL. */
int aesni_wireless_init(IMB_MGR *m, struct session *s, const uint8_t *key,
			size_t key_len);

/* Run one op of a crd_alg_bit_len algorithm; sets op->status. */
/* Run ops[0] and, for ZUC, the ops of the same algorithm after it (up to
 * n in all) together; returns how many ops it ran (>= 1). */
unsigned aesni_wireless_run(IMB_MGR *m, struct engine_op *ops, unsigned n);
void aesni_wireless_one(IMB_MGR *m, struct engine_op *op);

#endif
