/* SPDX-License-Identifier: MIT */
/* Capabilities: what the daemon serves, by algorithm and engine
 * (algorithm names and facts: alg.c). */
#include "internal.h"

#include "names.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
