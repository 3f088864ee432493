// SPDX-License-Identifier: MIT
/*
 * aes-lrw: no session on any engine that does not list it (-ENODEV or
 * -EOPNOTSUPP), and the capability table lists it unavailable, with a
 * reason; then the capability table against the spec's table.
 *
 * Every refused op sits between two good ones in the same queue, which
 * must complete with the right answer: a failure never wedges a queue.
 *
 * Exit: 0 all passed, 1 any failure.
 */
#include "bad_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void run_lrw(struct t *t, char engines[][FX_ENGINE_NAME_MAX], unsigned n)
{
	struct cc_alg_caps *caps;
	unsigned nc = 0, i, listed = 0;
	uint8_t key[48] = { 1 };
	char what[96];
	uint32_t sid;
	int r;

	/* Every engine there is, the spec's "kernel", and the default. */
	for (i = 0; i <= n + 1; i++) {
		struct cc_session_params sp = {
			.alg = CC_ALG_AES_LRW,
			.key = key,
			.key_len = 48,
			.engine = i < n	   ? engines[i]
				  : i == n ? "kernel"
					   : NULL,
		};

		r = cc_session_create(t->conn, &sp, &sid);
		printf("  aes-lrw session on %s: %d (%s)\n",
		       sp.engine ? sp.engine : "the default engine", r,
		       cc_strerror(r));
		snprintf(what, sizeof(what),
			 "aes-lrw session on %s: want -ENODEV or -EOPNOTSUPP",
			 sp.engine ? sp.engine : "the default engine");
		/* An engine that is not built in may be unknown by name. */
		expect(t,
		       r == -ENODEV || r == -EOPNOTSUPP ||
			       (i == n && r == -ENOENT),
		       "aes-lrw", what, r);
		if (!r)
			cc_session_destroy(t->conn, sid);
	}
	r = cc_capabilities_get(t->conn, &caps, &nc);
	expect(t, r == 0, "capabilities", "cc_capabilities_get", r);
	if (r)
		return;
	for (i = 0; i < nc; i++) {
		if (caps[i].alg != CC_ALG_AES_LRW)
			continue;
		listed++;
		printf("  aes-lrw on %s: available %d, reason \"%s\"\n",
		       caps[i].engine, caps[i].available, caps[i].reason);
		expect(t, !caps[i].available, "aes-lrw", "listed as available",
		       0);
		expect(t, caps[i].reason[0] != '\0', "aes-lrw",
		       "unavailable without a reason", 0);
	}
	expect(t, listed > 0, "aes-lrw", "not listed in the capabilities", 0);
	cc_capabilities_free(caps);
}

/* The table of docs/algorithms.md against cc_capabilities_get(). */
static void run_caps(struct t *t)
{
	struct cc_alg_caps *caps;
	unsigned nc = 0, a, i, e, v;
	char ctx[96], what[128];
	int r;

	r = cc_capabilities_get(t->conn, &caps, &nc);
	expect(t, r == 0, "capabilities", "cc_capabilities_get", r);
	if (r)
		return;
	for (a = 0; a < mc_n_specs; a++) {
		const struct mc_spec *s = &mc_specs[a];
		const char *name = cc_alg_name(s->alg);

		snprintf(ctx, sizeof(ctx), "capabilities %s", s->name);
		expect(t, name && !strcmp(name, s->name), ctx,
		       "cc_alg_name() differs from the spec's name", 0);
		expect(t, cc_alg_tag_len(s->alg) == s->tag_def, ctx,
		       "cc_alg_tag_len() differs from the spec's default",
		       (int)cc_alg_tag_len(s->alg));
		/* Every engine the spec names is listed and available, the
		 * first one as the default; no other engine claims it. */
		for (e = 0; e < 3 && s->engines[e]; e++) {
			int found = 0;

			for (i = 0; i < nc; i++)
				if (caps[i].alg == s->alg &&
				    caps[i].available &&
				    !strcmp(caps[i].engine, s->engines[e])) {
					found = 1;
					snprintf(what, sizeof(what),
						 "%s: default engine flag",
						 s->engines[e]);
					expect(t,
					       !!caps[i].default_engine ==
						       (e == 0),
					       ctx, what,
					       caps[i].default_engine);
				}
			snprintf(what, sizeof(what),
				 "engine %s not listed as available",
				 s->engines[e]);
			expect(t, found, ctx, what, 0);
		}
		for (i = 0; i < nc; i++) {
			const struct cc_alg_caps *c = &caps[i];
			int named = 0;

			if (c->alg != s->alg || !c->available)
				continue;
			for (e = 0; e < 3 && s->engines[e]; e++)
				named |= !strcmp(c->engine, s->engines[e]);
			snprintf(what, sizeof(what),
				 "engine %s available but not in the spec",
				 c->engine);
			expect(t, named, ctx, what, 0);
			snprintf(what, sizeof(what),
				 "%s: scatter-gather and session-less flags",
				 c->engine);
			expect(t, c->sgl && c->sessionless, ctx, what, 0);
			for (v = 0; v < s->n_key_lens; v++) {
				snprintf(what, sizeof(what),
					 "%s: key size %u not listed",
					 c->engine, s->key_lens[v]);
				expect(t,
				       fx_range_has(c->key_sizes,
						    c->n_key_sizes,
						    s->key_lens[v]),
				       ctx, what, 0);
			}
			for (v = 0; v <= 16; v++) {
				if (s->iv_ignored || !mc_iv_ok(s, c->engine, v))
					continue;
				snprintf(what, sizeof(what),
					 "%s: IV size %u not listed", c->engine,
					 v);
				expect(t,
				       fx_range_has(c->iv_sizes, c->n_iv_sizes,
						    v),
				       ctx, what, 0);
			}
			for (v = 1; v <= 64; v++) {
				if (!mc_tag_ok(s, v))
					continue;
				snprintf(what, sizeof(what),
					 "%s: tag size %u not listed",
					 c->engine, v);
				expect(t,
				       fx_range_has(c->tag_sizes,
						    c->n_tag_sizes, v),
				       ctx, what, 0);
			}
			if (s->aad != MC_AAD_IGNORED) {
				snprintf(what, sizeof(what),
					 "%s: AAD sizes %u..%u, spec %s",
					 c->engine, c->aad_sizes.min,
					 c->aad_sizes.max,
					 s->aad == MC_AAD_ANY ? "0..65535"
							      : "0");
				expect(t,
				       c->aad_sizes.min == 0 &&
					       c->aad_sizes.max ==
						       (s->aad == MC_AAD_ANY
								? 65535u
								: 0u),
				       ctx, what, 0);
			}
			snprintf(what, sizeof(what), "%s: min_len %u, spec %u",
				 c->engine, c->min_len, s->min_len);
			expect(t, c->min_len == s->min_len, ctx, what, 0);
			/* The authenc rows name no upper bound. */
			if (s->auth_key || s->alg == CC_ALG_AES_CBC_NULL)
				continue;
			snprintf(what, sizeof(what),
				 "%s: max_len %u below the spec's 16 MiB",
				 c->engine, c->max_len);
			expect(t, c->max_len >= OP_MAX_LEN, ctx, what, 0);
		}
	}
	cc_capabilities_free(caps);
}

int main(void)
{
	struct t t;
	struct fx_daemon d;
	if (bad_setup(&t, &d, "test_bad_caps"))
		return FX_EXIT_FAIL;
	/* Every engine any algorithm is served by. */
	char engines[MC_MAX_ENGINES][FX_ENGINE_NAME_MAX];
	static char all[MC_MAX_ENGINES * 2][FX_ENGINE_NAME_MAX];
	unsigned n_all = 0;
	for (unsigned a = 0; a < mc_n_specs; a++) {
		int n = mc_engines_for(t.conn, mc_specs[a].alg, engines,
				       MC_MAX_ENGINES);
		for (int e = 0; e < n; e++) {
			unsigned j = 0;
			while (j < n_all && strcmp(all[j], engines[e]))
				j++;
			if (j == n_all && n_all < MC_MAX_ENGINES * 2)
				memcpy(all[n_all++], engines[e],
				       FX_ENGINE_NAME_MAX);
		}
	}
	if (!t.fatal)
		run_lrw(&t, all, n_all);
	if (!t.fatal)
		run_caps(&t);
	return bad_finish(&t, &d);
}
