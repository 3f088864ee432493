/* SPDX-License-Identifier: MIT */
#include "session.h"
#include "namedkeys.h"

#include <errno.h>
#include <string.h>

#include <cryptod/ring_abi.h>

#include "names.h"
#include "wire.h"

/* Relaxed: a reload racing with a session-less op may apply either way. */
static unsigned policy_min_bits;
static int policy_sessionless = 1;

void session_policy_set(unsigned min_bits, int sessionless)
{
	crd_store_relaxed_n(&policy_min_bits, min_bits);
	crd_store_relaxed_n(&policy_sessionless, sessionless);
}

int session_sessionless_allowed(void)
{
	return crd_load_relaxed_n(&policy_sessionless);
}

/*
 * The key policy (keys.min_bits), the one rule for every key a session
 * takes: the key's strength in bits (XTS keys are two halves; the null
 * algorithm and digests have none), and an authenc auth_key's, which is
 * an HMAC key like a MAC session's key and so held to the same bound.
 */
static int session_key_ok(unsigned alg, size_t key_len, size_t auth_key_len)
{
	unsigned min = crd_load_relaxed_n(&policy_min_bits);
	/* a key pair's strength is its row's (rsa-2048 ...), not its DER's
	 * length */
	if (alg == CRD_ALG_NULL || crd_alg_kind(alg) == CRD_KIND_HASH ||
	    crd_alg_pkey(alg) || !min)
		return 1;
	/* two keys (XTS): the policy holds one half to min */
	size_t bits =
		key_len * 8 / (crd_alg_flags(alg) & CRD_AF_TWO_KEYS ? 2 : 1);
	if (crd_alg_kind(alg) == CRD_KIND_AUTHENC && auth_key_len * 8 < min)
		return 0;
	return bits >= min;
}

/* Are a two-key algorithm's halves (XTS) equal? Without a branch on the
 * key's bytes. */
static int session_halves_equal(unsigned alg, const uint8_t *key,
				size_t key_len)
{
	if (!(crd_alg_flags(alg) & CRD_AF_TWO_KEYS))
		return 0;
	uint8_t d = 0;
	for (size_t i = 0; i < key_len / 2; i++)
		d |= key[i] ^ key[key_len / 2 + i];
	return d == 0;
}

/* Do the rows of cap take p's key, authentication key and tag lengths? */
static int session_fits(const struct alg_cap *cap,
			const struct session_params *p)
{
	unsigned tag = p->tag_len ? p->tag_len : crd_alg_tag_len(p->alg);
	return range_has(cap->key, cap->n_key, p->key_len) &&
	       range_has(cap->tag, cap->n_tag, tag) &&
	       (cap->n_auth_key ? range_has(cap->auth_key, cap->n_auth_key,
					    p->auth_key_len)
				: p->auth_key_len == 0);
}

int session_setup(struct session *s, const struct session_params *p,
		  void *const *wctx)
{
	int idx = engine_select(p->alg, p->engine);
	/* A session-less op (wctx) routed to an engine that takes only
	 * sessions goes to the fastest engine that takes it instead. */
	if (idx >= 0 && wctx && engine_get(idx)->no_sessionless)
		idx = engine_select_sessionless(p->alg);
	if (idx < 0)
		return idx;
	const struct alg_cap *cap = engine_cap(idx, p->alg);
	/* Named no engine: when the first one's rows do not take this key
	 * or tag (aesni has no CMAC-192 and XCBC tags up to 12 only), the
	 * next available one that does. */
	if ((!p->engine || !*p->engine) && !session_fits(cap, p)) {
		for (unsigned i = idx + 1; i < engine_count(); i++) {
			const struct alg_cap *c = engine_cap(i, p->alg);
			if (c && engine_alg_available(i, p->alg, NULL) &&
			    !(wctx && engine_get(i)->no_sessionless) &&
			    session_fits(c, p)) {
				idx = i;
				cap = c;
				break;
			}
		}
	}

	unsigned tag = p->tag_len ? p->tag_len : crd_alg_tag_len(p->alg);
	const int pkey = crd_alg_pkey(p->alg);
	if (p->key_len > (pkey ? CTL_PKEY_MAX : CRD_MAC_KEY_MAX) ||
	    p->auth_key_len > CRD_AUTH_KEY_MAX ||
	    !range_has(cap->key, cap->n_key, p->key_len) ||
	    !range_has(cap->tag, cap->n_tag, tag))
		return -EINVAL;
	if (cap->n_auth_key ? !range_has(cap->auth_key, cap->n_auth_key,
					 p->auth_key_len)
			    : p->auth_key_len != 0)
		return -EINVAL;
	if (!session_key_ok(p->alg, p->key_len, p->auth_key_len))
		return -EPERM;

	s->alg = p->alg;
	/* A key pair writes no tag: its tag column is the room an output
	 * needs (crd_alg_tag_len), beyond what tag_len holds. */
	s->tag_len = pkey ? 0 : tag;
	s->key_len = p->key_len;
	s->eng_idx = idx;
	s->op_mask = p->op_mask ? p->op_mask
				: 1u << CRD_OP_ENCRYPT | 1u << CRD_OP_DECRYPT;
	if (pkey) /* the ops its row takes (the engine may narrow them) */
		s->op_mask = (p->op_mask ? p->op_mask : 0xff) &
			     crd_alg_pk_ops(p->alg);
	/* XTS with equal halves (algs.h): decrypt only, as OpenSSL's
	 * default provider, which reads such data but writes none. */
	if (session_halves_equal(p->alg, p->key, p->key_len) &&
	    !(s->op_mask &= 1u << CRD_OP_DECRYPT))
		return -EINVAL;
	s->eng = engine_get(idx);
	s->cap = cap;
	/* The IV check of every op, as one bit test. */
	s->iv_ok = 0;
	for (unsigned n = 0; n <= CRD_IV_MAX; n++)
		if (range_has(cap->iv, cap->n_iv, n))
			s->iv_ok |= 1u << n;
	return s->eng->session_init(s, wctx ? wctx[idx] : NULL, p->key,
				    p->key_len, p->auth_key, p->auth_key_len);
}

int session_create(const struct session_params *p, struct session **out)
{
	/* Refuse what no engine could take before spending a slot. */
	if (p->alg == 0 || p->alg >= CRD_ALG_MAX_)
		return -EOPNOTSUPP;
	struct session *s = ks_alloc();
	if (!s)
		return -ENOSPC;
	int err = session_setup(s, p, NULL);
	if (err) {
		ks_free(s); /* session_init cleans up after itself on failure */
		return err;
	}
	static uint64_t serial; /* control thread only */
	s->serial = ++serial;
	*out = s;
	return 0;
}

void session_destroy(struct session *s)
{
	if (s->eng && s->eng->session_fini)
		s->eng->session_fini(s);
	nk_close(s->named);
	ks_free(s); /* wipes the expanded key with the slot */
}
