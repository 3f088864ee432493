/* SPDX-License-Identifier: MIT */
#include "session.h"

#include <errno.h>
#include <string.h>

#include <cryptod/ring_abi.h>

int session_setup(struct session *s, const struct session_params *p,
		  void *const *wctx)
{
	int idx = engine_select(p->alg, p->engine);
	if (idx < 0)
		return idx;
	const struct alg_cap *cap = engine_cap(idx, p->alg);

	unsigned tag = p->tag_len ? p->tag_len : cap->default_tag;
	if (p->key_len > CRD_KEY_MAX || p->auth_key_len > CRD_AUTH_KEY_MAX ||
	    !range_has(cap->key, cap->n_key, p->key_len) ||
	    !range_has(cap->tag, cap->n_tag, tag))
		return -EINVAL;
	if (cap->n_auth_key ? !range_has(cap->auth_key, cap->n_auth_key,
					 p->auth_key_len)
			    : p->auth_key_len != 0)
		return -EINVAL;

	s->alg = p->alg;
	s->tag_len = tag;
	s->key_len = p->key_len;
	s->eng_idx = idx;
	s->eng = engine_get(idx);
	s->cap = cap;
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
	*out = s;
	return 0;
}

void session_destroy(struct session *s)
{
	if (s->eng && s->eng->session_fini)
		s->eng->session_fini(s);
	ks_free(s); /* wipes the expanded key with the slot */
}
