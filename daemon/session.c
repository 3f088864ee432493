/* SPDX-License-Identifier: MIT */
#include "session.h"

#include <errno.h>
#include <string.h>

#include <cryptod/ring_abi.h>

/* GCM tag lengths allowed by NIST SP 800-38D. */
static int gcm_tag_len_ok(unsigned t)
{
	return t == 4 || t == 8 || (t >= 12 && t <= 16);
}

int session_create(enum alg alg, const uint8_t *key, size_t key_len,
		   unsigned tag_len, const char *engine, struct session **out)
{
	switch (alg) {
	case ALG_AES_GCM:
		if (key_len != 16 && key_len != 24 && key_len != 32)
			return -EINVAL;
		if (tag_len == 0)
			tag_len = 16;
		if (!gcm_tag_len_ok(tag_len))
			return -EINVAL;
		break;
	case ALG_NULL:
		if (key_len != 0 || tag_len != 0)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}

	int idx = engine_select(alg, engine);
	if (idx < 0)
		return idx;

	struct session *s = ks_alloc();
	if (!s)
		return -ENOSPC;
	s->alg = alg;
	s->tag_len = tag_len;
	s->key_len = key_len;
	s->eng_idx = idx;
	s->eng = engine_get(idx);
	int err = s->eng->session_init(s, key, key_len);
	if (err) {
		ks_free(s);
		return err;
	}
	*out = s;
	return 0;
}

void session_destroy(struct session *s)
{
	ks_free(s); /* wipes the expanded key with the slot */
}
