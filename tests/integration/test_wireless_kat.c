// SPDX-License-Identifier: MIT
/*
 * The 3GPP algorithms (SNOW 3G UEA2/UIA2, ZUC EEA3/EIA3, KASUMI f8/f9)
 * against their published conformance vectors (wireless_vectors.c cites
 * each), through a real daemon, on every engine cc_capabilities_get()
 * lists as available for the algorithm:
 *
 * - cc_crypt(): encrypt (ciphertext, or MAC), decrypt (plaintext, or
 *   verify), a forged MAC (CC_ERR_AUTH_FAILED, nothing written), and the
 *   source's bits after the last one of the final byte set at random:
 *   a cipher must pass them through unchanged, a MAC must ignore them;
 * - one burst per vector with the op flat out of place, flat in place,
 *   as scatter-gather lists (out of place and in place) and session-less;
 *   canaries around every output, completion len = the byte extent.
 *
 * Lengths count bits (docs/algorithms.md); most vectors are not whole
 * bytes. Then what must be refused, and how: keys of 15 and 32 bytes, a
 * tag other than 4, IVs of the wrong size, lengths 0 and past the
 * maximum, a bit length whose bytes the buffers do not hold (the library
 * for a flat buffer, the daemon for a list).
 *
 * Exit: 0 all passed, 1 any failure, 77 no engine serves the algorithms.
 */
#include "fixture.h"
#include "modes_common.h"
#include "wireless_vectors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXB 1024 /* bytes of the largest vector */
#define TIMEOUT_MS 20000

enum path { P_FLAT, P_FLAT_INPLACE, P_SGL, P_SGL_INPLACE, P_SESSIONLESS, NP };
static const char *const path_name[NP] = { "flat", "flat in place", "sgl",
					   "sgl in place", "session-less" };

/* A vector, loaded: lengths in bits and bytes as an op takes them. */
struct kv {
	const struct wv *v;
	struct mc_key key;
	uint8_t iv[16];
	unsigned iv_len;
	uint8_t in[MAXB], out[MAXB]; /* trailing pad bits cleared */
	uint8_t mac[4];
	uint32_t bits, bytes;
	int is_mac;
};

static int fails;

#define FAIL(kv, eng, ...)                                                     \
	do {                                                                   \
		fails++;                                                       \
		fprintf(stderr, "FAIL %s on %s: ", (kv)->v->what, (eng));      \
		fprintf(stderr, __VA_ARGS__);                                  \
		fputc('\n', stderr);                                           \
	} while (0)

/* Mask of the bits of the last byte that are not data (0: none). */
static uint8_t pad_mask(uint32_t bits)
{
	return bits % 8 ? (uint8_t)(0xff >> (bits % 8)) : 0;
}

static int kv_load(const struct wv *v, struct kv *k)
{
	memset(k, 0, sizeof(*k));
	k->v = v;
	k->is_mac = cc_alg_kind(v->alg) == CC_KIND_MAC;
	k->key.alg = v->alg;
	int n = mc_unhex(v->key, k->key.key, sizeof(k->key.key));
	int iv = mc_unhex(v->iv, k->iv, sizeof(k->iv));
	int in = mc_unhex(v->in, k->in, MAXB);
	uint32_t msg_bytes = (v->bits + 7) / 8;
	if (n != 16 || iv < 0 || in < 0 || (uint32_t)in < msg_bytes) {
		fprintf(stderr, "FAIL %s: bad vector data\n", v->what);
		return -EINVAL;
	}
	k->key.key_len = 16;
	k->iv_len = (unsigned)iv;
	k->bits = v->bits;
	k->in[msg_bytes - 1] &= (uint8_t)~pad_mask(v->bits);
	memset(k->in + msg_bytes, 0, MAXB - msg_bytes);
	if (v->alg == CC_ALG_KASUMI_F9) { /* data = MESSAGE || DIRECTION */
		if (v->dir)
			k->in[v->bits / 8] |= (uint8_t)(0x80 >> (v->bits % 8));
		k->bits = v->bits + 1;
	}
	k->bytes = (k->bits + 7) / 8;
	if (k->is_mac)
		return mc_unhex(v->out, k->mac, 4) == 4 ? 0 : -EINVAL;
	if (mc_unhex(v->out, k->out, MAXB) != (int)k->bytes) {
		fprintf(stderr, "FAIL %s: bad ciphertext length\n", v->what);
		return -EINVAL;
	}
	k->out[k->bytes - 1] &= (uint8_t)~pad_mask(k->bits);
	return 0;
}

/* ---- cc_crypt() ---- */

static void sync_cipher(struct cc_conn *c, uint32_t sid, const struct kv *k,
			const char *eng)
{
	uint8_t in[MAXB], out[MAXB + MC_GUARD];
	uint8_t pad = pad_mask(k->bits);

	for (int dir = 0; dir < 2; dir++) {
		const uint8_t *src = dir ? k->out : k->in;
		const uint8_t *want = dir ? k->in : k->out;
		memset(out, MC_CANARY, sizeof(out));
		int r = fx_crypt(c, sid, dir ? CC_DECRYPT : CC_ENCRYPT, k->iv,
				 k->iv_len, NULL, 0, src, out, k->bits, NULL);
		if (r != CC_OK)
			FAIL(k, eng, "sync %s: %s", dir ? "decrypt" : "encrypt",
			     cc_strerror(r));
		else if (memcmp(out, want, k->bytes))
			FAIL(k, eng, "sync %s: wrong output at byte %ld",
			     dir ? "decrypt" : "encrypt",
			     mc_first_diff(out, want, k->bytes));
		else if (mc_first_not(out + k->bytes, MC_CANARY, MC_GUARD) >= 0)
			FAIL(k, eng, "sync: wrote past the last byte");
	}
	if (!pad)
		return;
	/* The bits after the last: the source's, whatever they are. */
	for (unsigned t = 0; t < 4; t++) {
		uint8_t r = (uint8_t)(mc_rnd() & pad);
		memcpy(in, k->in, k->bytes);
		in[k->bytes - 1] |= r;
		int st = fx_crypt(c, sid, CC_ENCRYPT, k->iv, k->iv_len, NULL, 0,
				  in, out, k->bits, NULL);
		uint8_t last = out[k->bytes - 1];
		if (st != CC_OK || memcmp(out, k->out, k->bytes - 1) ||
		    (last & ~pad) != (k->out[k->bytes - 1] & ~pad) ||
		    (last & pad) != r)
			FAIL(k, eng,
			     "trailing bits %02x: got last byte %02x (%s)", r,
			     last, cc_strerror(st));
	}
}

static void sync_mac(struct cc_conn *c, uint32_t sid, const struct kv *k,
		     const char *eng)
{
	uint8_t in[MAXB], out[64], tag[4 + MC_GUARD];

	memset(tag, MC_CANARY, sizeof(tag));
	int r = fx_crypt(c, sid, CC_ENCRYPT, k->iv, k->iv_len, NULL, 0, k->in,
			 NULL, k->bits, tag);
	if (r != CC_OK || memcmp(tag, k->mac, 4))
		FAIL(k, eng, "sync MAC: %s", r ? cc_strerror(r) : "mismatch");
	else if (mc_first_not(tag + 4, MC_CANARY, MC_GUARD) >= 0)
		FAIL(k, eng, "sync MAC: wrote past the 4-byte tag");
	/* Pad bits are not data: the MAC must not see them. */
	memcpy(in, k->in, k->bytes);
	in[k->bytes - 1] |= (uint8_t)(mc_rnd() & pad_mask(k->bits));
	r = fx_crypt(c, sid, CC_ENCRYPT, k->iv, k->iv_len, NULL, 0, in, NULL,
		     k->bits, tag);
	if (r != CC_OK || memcmp(tag, k->mac, 4))
		FAIL(k, eng, "sync MAC with pad bits set: %s",
		     r ? cc_strerror(r) : "mismatch");
	/* Verify: the right MAC passes; a forged one fails and nothing is
	 * written (out stays as it was, the tag as given). */
	memcpy(tag, k->mac, 4);
	r = fx_crypt(c, sid, CC_DECRYPT, k->iv, k->iv_len, NULL, 0, k->in, NULL,
		     k->bits, tag);
	if (r != CC_OK)
		FAIL(k, eng, "sync verify: %s", cc_strerror(r));
	for (unsigned bit = 0; bit < 32; bit += 11) {
		memcpy(tag, k->mac, 4);
		mc_flip(tag, bit);
		uint8_t forged[4];
		memcpy(forged, tag, 4);
		memset(out, MC_CANARY, sizeof(out));
		r = fx_crypt(c, sid, CC_DECRYPT, k->iv, k->iv_len, NULL, 0,
			     k->in, out, k->bits, tag);
		if (r != CC_ERR_AUTH_FAILED)
			FAIL(k, eng, "forged MAC (bit %u): %s", bit,
			     cc_strerror(r));
		else if (memcmp(tag, forged, 4) ||
			 mc_first_not(out, MC_CANARY, sizeof(out)) >= 0)
			FAIL(k, eng, "forged MAC: something was written");
	}
}

/* ---- Bursts ---- */

struct slot {
	struct mc_layout src, dst;
	uint8_t *tag;
	struct cc_sessionless *sl;
};

static int slot_fill(struct cc_queue *q, const struct kv *k, uint32_t sid,
		     enum path p, struct slot *s, struct cc_op *op)
{
	unsigned nseg = p == P_SGL || p == P_SGL_INPLACE
				? (k->bytes < 3 ? k->bytes : 3)
				: 0;
	memset(s, 0, sizeof(*s));
	memset(op, 0, sizeof(*op));
	if (mc_layout_alloc(q, &s->src, k->bytes, nseg, 0))
		return -ENOMEM;
	mc_layout_write(&s->src, k->in);
	mc_layout_to_op(&s->src, op, 0);
	int inplace = p == P_FLAT_INPLACE || p == P_SGL_INPLACE;
	if (!k->is_mac && !inplace) {
		if (mc_layout_alloc(q, &s->dst, k->bytes, nseg, 0))
			return -ENOMEM;
		mc_layout_to_op(&s->dst, op, 1);
	}
	s->tag = cc_buf_alloc(q, 4 + MC_GUARD);
	if (!s->tag)
		return -ENOMEM;
	memset(s->tag, MC_CANARY, 4 + MC_GUARD);
	op->dir = CC_ENCRYPT;
	op->len = k->bits;
	op->iv = k->iv;
	op->iv_len = k->iv_len;
	op->tag = k->is_mac ? s->tag : NULL;
	op->user_data = p;
	if (p == P_SESSIONLESS) {
		s->sl = cc_buf_alloc(q, sizeof(*s->sl));
		if (!s->sl)
			return -ENOMEM;
		mc_sessionless_fill(s->sl, &k->key);
		op->sessionless = s->sl;
	} else {
		op->session = sid;
	}
	return 0;
}

static void slot_free(struct cc_queue *q, struct slot *s)
{
	mc_layout_free(q, &s->src);
	mc_layout_free(q, &s->dst);
	cc_buf_free(q, s->tag);
	if (s->sl) {
		explicit_bzero(s->sl, sizeof(*s->sl));
		cc_buf_free(q, s->sl);
	}
}

static void slot_judge(const struct kv *k, const char *eng, enum path p,
		       struct slot *s, const struct cc_completion *cpl)
{
	uint8_t got[MAXB];
	const struct mc_layout *out = s->dst.base ? &s->dst : &s->src;

	if (cpl->status != CC_OK) {
		FAIL(k, eng, "burst %s: %s", path_name[p],
		     cc_strerror(cpl->status));
		return;
	}
	if (cpl->len != k->bytes)
		FAIL(k, eng, "burst %s: completion len %u, want %u bytes",
		     path_name[p], cpl->len, k->bytes);
	if (k->is_mac) {
		if (memcmp(s->tag, k->mac, 4))
			FAIL(k, eng, "burst %s: MAC mismatch", path_name[p]);
		if (mc_first_not(s->tag + 4, MC_CANARY, MC_GUARD) >= 0)
			FAIL(k, eng, "burst %s: tag overrun", path_name[p]);
		mc_layout_read(&s->src, got);
		if (memcmp(got, k->in, k->bytes))
			FAIL(k, eng, "burst %s: MAC wrote its source",
			     path_name[p]);
		return;
	}
	mc_layout_read(out, got);
	if (memcmp(got, k->out, k->bytes))
		FAIL(k, eng, "burst %s: wrong output at byte %ld", path_name[p],
		     mc_first_diff(got, k->out, k->bytes));
	if (mc_layout_canary(out) >= 0)
		FAIL(k, eng, "burst %s: wrote outside the output",
		     path_name[p]);
}

static void burst(struct cc_queue *q, uint32_t sid, const struct kv *k,
		  const char *eng)
{
	struct slot s[NP];
	struct cc_op ops[NP];
	struct cc_completion cpl[NP];
	unsigned n = 0;

	for (; n < NP; n++)
		if (slot_fill(q, k, sid, (enum path)n, &s[n], &ops[n])) {
			FAIL(k, eng, "arena full");
			goto out;
		}
	int r = fx_run_burst(q, ops, NP, cpl, TIMEOUT_MS);
	if (r < 0) {
		FAIL(k, eng, "burst: %s", cc_strerror(r));
		goto out;
	}
	for (unsigned i = 0; i < NP; i++)
		slot_judge(k, eng, (enum path)i, &s[i], &cpl[i]);
out:
	for (unsigned i = 0; i < n + (n < NP); i++)
		slot_free(q, &s[i]);
}

/* ---- What must be refused ---- */

static int session_with(struct cc_conn *c, enum cc_alg alg, const char *eng,
			unsigned key_len, unsigned tag_len, uint32_t *sid)
{
	struct mc_key k = { .alg = alg,
			    .key_len = key_len,
			    .tag_len = tag_len };
	memset(k.key, 0x11, sizeof(k.key));
	return mc_session(c, &k, eng, sid);
}

/* One op of bits over segments of lens (nseg 0: flat, lens[0] bytes). */
static int one_op(struct cc_queue *q, uint32_t sid, const struct kv *k,
		  uint32_t bits, const uint32_t *lens, unsigned nseg)
{
	struct mc_layout l = { 0 };
	struct cc_completion cpl;
	uint8_t *tag = cc_buf_alloc(q, 4);
	int r = nseg ? mc_layout_alloc_lens(q, &l, lens, nseg)
		     : mc_layout_alloc(q, &l, lens[0], 0, 0);
	if (r || !tag) {
		cc_buf_free(q, tag);
		return -ENOMEM;
	}
	struct cc_op op = { .session = sid,
			    .dir = CC_ENCRYPT,
			    .len = bits,
			    .iv = k->iv,
			    .iv_len = k->iv_len,
			    .tag = k->is_mac ? tag : NULL };
	mc_layout_to_op(&l, &op, 0);
	r = fx_run_burst(q, &op, 1, &cpl, TIMEOUT_MS);
	mc_layout_free(q, &l);
	cc_buf_free(q, tag);
	return r < 0 ? r : cpl.status;
}

static void refusals(struct cc_conn *c, struct cc_queue *q, const struct kv *k,
		     const char *eng)
{
	uint32_t sid;
	int r;

	for (unsigned key_len = 15; key_len <= 32; key_len += 17)
		if ((r = session_with(c, k->v->alg, eng, key_len, 0, &sid)) !=
		    -EINVAL)
			FAIL(k, eng, "key of %u bytes: %d, want -EINVAL",
			     key_len, r);
	r = session_with(c, k->v->alg, eng, 16, k->is_mac ? 8 : 4, &sid);
	if (r != -EINVAL)
		FAIL(k, eng, "tag of %u bytes: %d, want -EINVAL",
		     k->is_mac ? 8 : 4, r);
	if (mc_session(c, &k->key, eng, &sid)) {
		FAIL(k, eng, "session");
		return;
	}
	uint8_t buf[MAXB], tag[4];
	unsigned bad_iv = k->iv_len == 16 ? 8 : 16;
	r = fx_crypt(c, sid, CC_ENCRYPT, k->iv, bad_iv, NULL, 0, k->in, buf,
		     k->bits, tag);
	if (r != CC_ERR_BAD_PARAM)
		FAIL(k, eng, "IV of %u bytes: %s", bad_iv, cc_strerror(r));
	const struct cc_alg_caps *cap = NULL;
	struct cc_alg_caps *caps;
	unsigned n;
	uint32_t max = 0;
	if (!cc_capabilities_get(c, &caps, &n)) {
		for (unsigned i = 0; i < n; i++)
			if (caps[i].alg == k->v->alg &&
			    !strcmp(caps[i].engine, eng))
				cap = &caps[i];
		max = cap ? cap->max_len : 0;
		cc_capabilities_free(caps);
	}
	uint32_t min = k->v->alg == CC_ALG_KASUMI_F9 ? 2 : 1;
	uint32_t lens[2] = { 1, 1 };
	if ((r = one_op(q, sid, k, min - 1, lens, 0)) != CC_ERR_BAD_PARAM)
		FAIL(k, eng, "%u bits: %s", min - 1, cc_strerror(r));
	lens[0] = (max + 1 + 7) / 8;
	if (max && max < 1u << 20 &&
	    (r = one_op(q, sid, k, max + 1, lens, 0)) != CC_ERR_BAD_PARAM)
		FAIL(k, eng, "%u bits (max %u): %s", max + 1, max,
		     cc_strerror(r));
	/* 17 bits need 3 bytes: lists of 2 and of 4 are refused. */
	lens[0] = 1;
	if ((r = one_op(q, sid, k, 17, lens, 2)) != CC_ERR_BAD_PARAM)
		FAIL(k, eng, "17 bits over 2 bytes of list: %s",
		     cc_strerror(r));
	lens[0] = lens[1] = 2;
	if ((r = one_op(q, sid, k, 17, lens, 2)) != CC_ERR_BAD_PARAM)
		FAIL(k, eng, "17 bits over 4 bytes of list: %s",
		     cc_strerror(r));
	/* A flat buffer ending 2 bytes before the arena does: the library
	 * sees the third byte would be outside. */
	size_t size = cc_arena_size(q);
	uint8_t *all = cc_buf_alloc(q, size);
	if (all) {
		struct cc_op op = { .session = sid,
				    .dir = CC_ENCRYPT,
				    .src = all + size - 2,
				    .len = 17,
				    .iv = k->iv,
				    .iv_len = k->iv_len,
				    .tag = k->is_mac ? all : NULL };
		if ((r = cc_enqueue_burst(q, &op, 1)) != -EFAULT)
			FAIL(k, eng,
			     "17 bits in 2 bytes at the arena's end: %d", r);
		cc_buf_free(q, all);
	}
	cc_session_destroy(c, sid);
}

/* ---- Main ---- */

static void run_alg(struct cc_conn *c, struct cc_queue *q, enum cc_alg alg,
		    unsigned *tested)
{
	char engines[MC_MAX_ENGINES][FX_ENGINE_NAME_MAX];
	int ne = mc_engines_for(c, alg, engines, MC_MAX_ENGINES);
	struct kv k;

	for (int e = 0; e < ne; e++) {
		unsigned nv = 0, f0 = (unsigned)fails;
		for (unsigned i = 0; i < wv_n_vectors; i++) {
			if (wv_vectors[i].alg != alg)
				continue;
			if (kv_load(&wv_vectors[i], &k)) {
				fails++;
				continue;
			}
			uint32_t sid;
			int r = mc_session(c, &k.key, engines[e], &sid);
			if (r) {
				FAIL(&k, engines[e], "session: %s",
				     cc_strerror(r));
				continue;
			}
			if (k.is_mac)
				sync_mac(c, sid, &k, engines[e]);
			else
				sync_cipher(c, sid, &k, engines[e]);
			burst(q, sid, &k, engines[e]);
			cc_session_destroy(c, sid);
			if (nv++ == 0)
				refusals(c, q, &k, engines[e]);
			(*tested)++;
		}
		printf("  %s on %s: %u vectors, %u failures\n",
		       cc_alg_name(alg), engines[e], nv, (unsigned)fails - f0);
	}
}

int main(void)
{
	static const enum cc_alg algs[] = {
		CC_ALG_SNOW3G_UEA2, CC_ALG_SNOW3G_UIA2, CC_ALG_ZUC_EEA3,
		CC_ALG_ZUC_EIA3,    CC_ALG_KASUMI_F8,	CC_ALG_KASUMI_F9,
	};
	struct fx_daemon d;
	struct cc_conn *c;
	struct cc_queue *q;
	unsigned tested = 0;

	mc_srand(mc_seed_from_env(0x3699));
	if (fx_setup(&d, NULL, "test_wireless_kat", NULL, &c, &q))
		return FX_EXIT_FAIL;
	for (unsigned a = 0; a < sizeof(algs) / sizeof(algs[0]); a++)
		run_alg(c, q, algs[a], &tested);
	if (fx_teardown(&d, c, q))
		fails++;
	if (!tested && !fails) {
		printf("SKIP: no engine serves the 3GPP algorithms\n");
		return FX_EXIT_SKIP;
	}
	printf("%u vector runs, %d failures\n", tested, fails);
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
