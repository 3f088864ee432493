/* SPDX-License-Identifier: MIT */
/* The CapabilitiesReply: every algorithm on every engine, in DPDK's
 * {min, max, increment} style, with the reason when unavailable. */
#include <errno.h>
#include <string.h>
#include <stdlib.h>

#include "client.h"
#include "caps.h"
#include "engine.h"
#include "wire.h"

enum { CAPS_MAX = CRD_ALG_MAX_ * ENGINE_MAX, CAPS_RANGES_MAX = CAPS_MAX * 5 };

struct caps_buf {
	Cryptod__AlgCaps caps[CAPS_MAX];
	Cryptod__AlgCaps *capp[CAPS_MAX];
	Cryptod__Range ranges[CAPS_RANGES_MAX * CAP_RANGES];
	Cryptod__Range *rangep[CAPS_RANGES_MAX * CAP_RANGES];
	unsigned nc, nr;
};

/* Append n ranges; returns the pointer array for the message. */
static Cryptod__Range **caps_ranges(struct caps_buf *b, const struct range *r,
				    unsigned n)
{
	Cryptod__Range **first = &b->rangep[b->nr];
	for (unsigned i = 0; i < n; i++) {
		Cryptod__Range *d = &b->ranges[b->nr];
		cryptod__range__init(d);
		d->min = r[i].min;
		d->max = r[i].max;
		d->increment = r[i].inc;
		b->rangep[b->nr++] = d;
	}
	return first;
}

static void caps_one(struct caps_buf *b, unsigned alg, unsigned eng)
{
	const struct alg_cap *cap = engine_cap(eng, alg);
	Cryptod__AlgCaps *c = &b->caps[b->nc];
	cryptod__alg_caps__init(c);
	c->alg = alg;
	c->alg_name = (char *)alg_name(alg);
	c->engine = (char *)engine_get(eng)->name;
	const char *why;
	c->available = engine_alg_available(eng, alg, &why);
	c->reason = (char *)why;
	c->default_engine = engine_select(alg, NULL) == (int)eng;
	const char *route = engine_route_get(alg);
	c->routed = route && !strcmp(route, engine_get(eng)->name);
	c->key_sizes = caps_ranges(b, cap->key, cap->n_key);
	c->n_key_sizes = cap->n_key;
	c->auth_key_sizes = caps_ranges(b, cap->auth_key, cap->n_auth_key);
	c->n_auth_key_sizes = cap->n_auth_key;
	c->iv_sizes = caps_ranges(b, cap->iv, cap->n_iv);
	c->n_iv_sizes = cap->n_iv;
	c->tag_sizes = caps_ranges(b, cap->tag, cap->n_tag);
	c->n_tag_sizes = cap->n_tag;
	c->aad_sizes = *caps_ranges(b, &cap->aad, 1);
	c->max_len = cap->max_len;
	c->min_len = cap->min_len;
	c->block_size = cap->block;
	c->sgl = 1;
	c->sessionless = !engine_get(eng)->no_sessionless;
	c->stream = engine_streams(engine_get(eng), cap->alg);
	b->capp[b->nc++] = c;
}

int caps_reply(struct client *cl, uint32_t seq)
{
	struct caps_buf *b = calloc(1, sizeof(*b)); /* control plane only */
	if (!b)
		return -ENOMEM;
	for (unsigned alg = 1; alg < CRD_ALG_MAX_; alg++)
		for (unsigned e = 0; e < engine_count(); e++)
			if (engine_cap(e, alg))
				caps_one(b, alg, e);

	Cryptod__CapabilitiesReply r = CRYPTOD__CAPABILITIES_REPLY__INIT;
	r.n_caps = b->nc;
	r.caps = b->capp;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_CAPABILITIES_REPLY;
	env.capabilities_reply = &r;
	int err = wire_send(cl->fd, &env, NULL, 0);
	free(b);
	return err;
}
