/* SPDX-License-Identifier: MIT */
/*
 * aesni: the 3GPP algorithms (SNOW 3G UEA2/UIA2, ZUC EEA3/EIA3, KASUMI
 * f8/f9) through intel-ipsec-mb's single-buffer direct API, which takes
 * lengths in bits as DPDK's cryptodev does (docs/algorithms.md).
 *
 * An op's len is its byte extent, op->bits its length in bits. The
 * ciphers leave the bits after the last one of the final byte as they
 * were in the source. ipsec-mb's own bit-length functions keep the
 * destination's bits there instead, and in 1.3 the SNOW 3G one also
 * writes the byte after the last (measured): so UEA2 and EEA3 run on
 * whole bytes (keystream XOR: the same bits), KASUMI f8 on bits, and the
 * last byte is patched from a copy of the source taken before an
 * in-place op overwrites it.
 *
 * The MACs compute the 4-byte MAC into private memory; encrypt writes it
 * to the tag, decrypt compares in constant time and writes nothing.
 */
#include "aesni_wireless.h"

#include "session.h"

#include <errno.h>
#include <string.h>

/* Session key material, in the session's locked slot (s->key). */
struct aesni_wl_key {
	union {
		snow3g_key_schedule_t snow3g;
		kasumi_key_sched_t kasumi;
		uint8_t zuc[16]; /* EEA3/EIA3 take the raw key */
	};
};
_Static_assert(sizeof(struct aesni_wl_key) <=
		       sizeof(((struct session *)0)->key),
	       "3GPP key schedules fit the session");

enum { WL_KEY = 16, WL_MAC = 4 };

int aesni_wireless_init(IMB_MGR *m, struct session *s, const uint8_t *key,
			size_t key_len)
{
	struct aesni_wl_key *k = (struct aesni_wl_key *)s->key;

	if (key_len != WL_KEY) /* the capability rows say so too */
		return -EINVAL;
	switch (s->alg) {
	case CRD_ALG_SNOW3G_UEA2:
	case CRD_ALG_SNOW3G_UIA2:
		return IMB_SNOW3G_INIT_KEY_SCHED(m, key, &k->snow3g) ? -EINVAL
								     : 0;
	case CRD_ALG_ZUC_EEA3:
	case CRD_ALG_ZUC_EIA3:
		memcpy(k->zuc, key, WL_KEY);
		return 0;
	case CRD_ALG_KASUMI_F8:
		return IMB_KASUMI_INIT_F8_KEY_SCHED(m, key, &k->kasumi)
			       ? -EINVAL
			       : 0;
	case CRD_ALG_KASUMI_F9:
		return IMB_KASUMI_INIT_F9_KEY_SCHED(m, key, &k->kasumi)
			       ? -EINVAL
			       : 0;
	}
	return -EINVAL;
}

/* KASUMI takes its 8-byte IV as a 64-bit word holding the IV's bytes in
 * memory order (COUNT first). */
static uint64_t wl_iv64(const uint8_t *iv)
{
	uint64_t v;
	memcpy(&v, iv, sizeof(v));
	return v;
}

static void wl_cipher(IMB_MGR *m, struct engine_op *op)
{
	const struct aesni_wl_key *k = (const void *)op->sess->key;
	unsigned tail = op->bits % 8;	     /* bits used of the last byte */
	uint8_t last = op->src[op->len - 1]; /* before in place writes */

	switch (op->sess->alg) {
	case CRD_ALG_SNOW3G_UEA2: /* whole bytes; the tail patched below */
		IMB_SNOW3G_F8_1_BUFFER(m, &k->snow3g, op->iv, op->src, op->dst,
				       op->len);
		break;
	case CRD_ALG_ZUC_EEA3:
		IMB_ZUC_EEA3_1_BUFFER(m, k->zuc, op->iv, op->src, op->dst,
				      op->len);
		break;
	default: /* KASUMI f8 */
		IMB_KASUMI_F8_1_BUFFER_BIT(m, &k->kasumi, wl_iv64(op->iv),
					   op->src, op->dst, op->bits, 0);
		break;
	}
	if (tail) {
		uint8_t keep = 0xff >> tail; /* the bits after the last */
		op->dst[op->len - 1] =
			(uint8_t)((op->dst[op->len - 1] & ~keep) |
				  (last & keep));
	}
	op->status = CRD_ST_OK;
}

/* KASUMI f9's data is MESSAGE || DIRECTION: its last bit. */
static unsigned wl_f9_dir(const struct engine_op *op)
{
	uint32_t b = op->bits - 1;
	return op->src[b / 8] >> (7 - b % 8) & 1;
}

static void wl_mac(IMB_MGR *m, struct engine_op *op)
{
	const struct aesni_wl_key *k = (const void *)op->sess->key;
	uint8_t mac[WL_MAC];
	uint32_t w;

	switch (op->sess->alg) {
	case CRD_ALG_SNOW3G_UIA2:
		IMB_SNOW3G_F9_1_BUFFER(m, &k->snow3g, op->iv, op->src, op->bits,
				       mac);
		break;
	case CRD_ALG_ZUC_EIA3:
		IMB_ZUC_EIA3_1_BUFFER(m, k->zuc, op->iv, op->src, op->bits, &w);
		memcpy(mac, &w, WL_MAC);
		break;
	default: /* KASUMI f9 */
		IMB_KASUMI_F9_1_BUFFER_USER(m, &k->kasumi, wl_iv64(op->iv),
					    op->src, op->bits - 1, mac,
					    wl_f9_dir(op));
		break;
	}
	if (op->op == CRD_OP_ENCRYPT) {
		memcpy(op->tag, mac, WL_MAC);
		op->status = CRD_ST_OK;
	} else {
		op->status = engine_ct_memcmp(mac, op->tag, WL_MAC)
				     ? CRD_ST_AUTH_FAILED
				     : CRD_ST_OK;
	}
	explicit_bzero(mac, sizeof(mac));
}

void aesni_wireless_one(IMB_MGR *m, struct engine_op *op)
{
	/* The capability rows keep bits in 1..max and tag_len at 4. */
	if (crd_alg_auth_only(op->sess->alg))
		wl_mac(m, op);
	else
		wl_cipher(m, op);
}

/*
 * A run of ZUC ops (all EEA3 or all EIA3) through the N-buffer calls,
 * which fill the vector lanes with several messages at once (the
 * single-buffer call leaves all but one idle); each op keeps its own
 * key, IV and length. EEA3 runs whole bytes and patches the last byte
 * as wl_cipher() does; EIA3 takes bit lengths.
 */
enum { WL_BATCH = 64 };
_Static_assert((int)WORKER_BURST <= (int)WL_BATCH,
	       "a burst's ZUC ops fit a batch");

static void wl_zuc_n(IMB_MGR *m, struct engine_op *ops, unsigned n)
{
	const void *key[WL_BATCH], *iv[WL_BATCH], *src[WL_BATCH];
	void *dst[WL_BATCH];
	uint32_t len[WL_BATCH], mac[WL_BATCH], *macp[WL_BATCH];
	uint8_t last[WL_BATCH];
	const int mac_op = ops[0].sess->alg == CRD_ALG_ZUC_EIA3;

	for (unsigned i = 0; i < n; i++) {
		const struct aesni_wl_key *k = (const void *)ops[i].sess->key;
		key[i] = k->zuc;
		iv[i] = ops[i].iv;
		src[i] = ops[i].src;
		dst[i] = ops[i].dst;
		len[i] = mac_op ? ops[i].bits : ops[i].len;
		macp[i] = &mac[i];
		if (!mac_op) /* before in place writes */
			last[i] = ops[i].src[ops[i].len - 1];
	}
	if (mac_op)
		IMB_ZUC_EIA3_N_BUFFER(m, key, iv, src, len, macp, n);
	else
		IMB_ZUC_EEA3_N_BUFFER(m, key, iv, src, dst, len, n);
	for (unsigned i = 0; i < n; i++) {
		struct engine_op *op = &ops[i];
		unsigned tail = op->bits % 8;

		op->status = CRD_ST_OK;
		if (mac_op && op->op == CRD_OP_ENCRYPT)
			memcpy(op->tag, &mac[i], WL_MAC);
		else if (mac_op)
			op->status = engine_ct_memcmp(&mac[i], op->tag, WL_MAC)
					     ? CRD_ST_AUTH_FAILED
					     : CRD_ST_OK;
		else if (tail) {
			uint8_t keep = 0xff >> tail;
			op->dst[op->len - 1] =
				(uint8_t)((op->dst[op->len - 1] & ~keep) |
					  (last[i] & keep));
		}
	}
	explicit_bzero(mac, sizeof(mac));
}

unsigned aesni_wireless_run(IMB_MGR *m, struct engine_op *ops, unsigned n)
{
	unsigned alg = ops[0].sess->alg, k = 1;

	if (alg == CRD_ALG_ZUC_EEA3 || alg == CRD_ALG_ZUC_EIA3)
		while (k < n && k < WL_BATCH && ops[k].sess->alg == alg)
			k++;
	if (k == 1)
		aesni_wireless_one(m, ops);
	else
		wl_zuc_n(m, ops, k);
	return k;
}
