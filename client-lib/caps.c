/* SPDX-License-Identifier: MIT */
/* Capabilities and algorithm names. */
#include "internal.h"

#include "names.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The public types mirror the ring ABI (the library hands the caller's
 * cc_sessionless and cc_sgl_entry to the daemon as they are). */
#define CC_X(id, num, ...)                                                     \
	_Static_assert((int)CC_ALG_##id == (int)CRD_ALG_##id,                  \
		       "cc_alg " #id " is the ABI's");
CRD_ALGORITHMS(CC_X)
#undef CC_X
#define CC_X(id, val, msg)                                                     \
	_Static_assert((int)CC_ERR_##id == (int)CRD_ST_##id,                   \
		       "cc_status " #id " is the ABI's");
CRD_STATUSES(CC_X)
#undef CC_X
_Static_assert(sizeof(struct cc_sessionless) == sizeof(struct crd_sessionless),
	       "cc_sessionless is crd_sessionless");
#define CC_SAME_FIELD(a, b, f)                                                 \
	_Static_assert(offsetof(struct a, f) == offsetof(struct b, f) &&       \
			       sizeof(((struct a *)0)->f) ==                   \
				       sizeof(((struct b *)0)->f),             \
		       #a "." #f " is " #b "." #f)
CC_SAME_FIELD(cc_sessionless, crd_sessionless, alg);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, key_len);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, auth_key_len);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, tag_len);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, reserved);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, key);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, auth_key);
_Static_assert(sizeof(struct cc_sgl_entry) == sizeof(struct crd_seg),
	       "cc_sgl_entry is crd_seg");
CC_SAME_FIELD(cc_sgl_entry, crd_seg, off);
CC_SAME_FIELD(cc_sgl_entry, crd_seg, len);
_Static_assert(CC_IV_INLINE == CRD_IV_MAX && CC_IV_MAX == CRD_IV_ARENA_MAX,
	       "the public IV bounds are the ring ABI's");

const char *cc_alg_name(enum cc_alg alg)
{
	return crd_alg_name((unsigned)alg);
}

int cc_alg_from_name(const char *name)
{
	int alg = crd_alg_from_name(name, CRD_NAME_ANY);
	return alg > 0 ? alg : -EINVAL;
}

unsigned cc_alg_tag_len(enum cc_alg alg)
{
	return crd_alg_tag_len((unsigned)alg);
}

_Static_assert((int)CC_KIND_NONE == (int)CRD_KIND_NONE &&
		       (int)CC_KIND_AEAD == (int)CRD_KIND_AEAD &&
		       (int)CC_KIND_CIPHER == (int)CRD_KIND_CIPHER &&
		       (int)CC_KIND_AUTHENC == (int)CRD_KIND_AUTHENC &&
		       (int)CC_KIND_MAC == (int)CRD_KIND_MAC &&
		       (int)CC_KIND_HASH == (int)CRD_KIND_HASH,
	       "cc_alg_kind is the ABI's");

enum cc_alg_kind cc_alg_kind(enum cc_alg alg)
{
	return (enum cc_alg_kind)crd_alg_kind((unsigned)alg);
}

const char *cc_alg_kind_name(enum cc_alg_kind kind)
{
	static const char *const names[] = {
		[CC_KIND_NONE] = "none",     [CC_KIND_AEAD] = "aead",
		[CC_KIND_CIPHER] = "cipher", [CC_KIND_AUTHENC] = "authenc",
		[CC_KIND_MAC] = "mac",	     [CC_KIND_HASH] = "hash",
	};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind]
								 : "none";
}

static unsigned caps_ranges(struct cc_range *d, unsigned max,
			    Cryptod__Range *const *s, size_t n)
{
	unsigned k = 0;
	for (size_t i = 0; i < n && k < max; i++) {
		if (!s[i])
			continue;
		d[k++] = (struct cc_range){ s[i]->min, s[i]->max,
					    s[i]->increment };
	}
	return k;
}

int cc_capabilities_get(struct cc_conn *c, struct cc_alg_caps **out,
			unsigned *n)
{
	Cryptod__CapabilitiesRequest m = CRYPTOD__CAPABILITIES_REQUEST__INIT;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_CAPABILITIES_REQUEST;
	req.capabilities_request = &m;

	pthread_mutex_lock(&c->lock);
	Cryptod__Envelope *rep;
	int err = conn_call(c, &req, &rep, NULL, NULL);
	pthread_mutex_unlock(&c->lock);
	if (err)
		return err;
	if (rep->body_case != CRYPTOD__ENVELOPE__BODY_CAPABILITIES_REPLY) {
		wire_free(rep);
		return -EPROTO;
	}
	const Cryptod__CapabilitiesReply *r = rep->capabilities_reply;
	struct cc_alg_caps *caps =
		calloc(r->n_caps ? r->n_caps : 1, sizeof(*caps));
	if (!caps) {
		wire_free(rep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n_caps; i++) {
		const Cryptod__AlgCaps *s = r->caps[i];
		struct cc_alg_caps *d = &caps[i];
		d->alg = (enum cc_alg)s->alg;
		snprintf(d->alg_name, sizeof(d->alg_name), "%s",
			 s->alg_name ? s->alg_name : "");
		snprintf(d->engine, sizeof(d->engine), "%s",
			 s->engine ? s->engine : "");
		snprintf(d->reason, sizeof(d->reason), "%s",
			 s->reason ? s->reason : "");
		d->available = s->available;
		d->default_engine = s->default_engine;
		d->routed = s->routed;
		d->sgl = s->sgl;
		d->sessionless = s->sessionless;
		d->stream = s->stream;
		d->n_key_sizes = caps_ranges(d->key_sizes, 4, s->key_sizes,
					     s->n_key_sizes);
		d->n_auth_key_sizes =
			caps_ranges(d->auth_key_sizes, 2, s->auth_key_sizes,
				    s->n_auth_key_sizes);
		d->n_iv_sizes =
			caps_ranges(d->iv_sizes, 4, s->iv_sizes, s->n_iv_sizes);
		d->n_tag_sizes = caps_ranges(d->tag_sizes, 4, s->tag_sizes,
					     s->n_tag_sizes);
		if (s->aad_sizes)
			caps_ranges(&d->aad_sizes, 1, &s->aad_sizes, 1);
		d->min_len = s->min_len;
		d->max_len = s->max_len;
		d->block_size = s->block_size;
	}
	*n = r->n_caps;
	*out = caps;
	wire_free(rep);
	return 0;
}

void cc_capabilities_free(struct cc_alg_caps *caps)
{
	free(caps);
}
