/* SPDX-License-Identifier: MIT */
/*
 * The configuration once parsed (config.c parses): command line over
 * file (merge), printing values for reload diffs, the access decision,
 * and the active configuration with what a reload applies live.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "log.h"
#include "session.h"

int config_peer_allowed(const struct config *c, uid_t uid, gid_t gid,
			const gid_t *groups, unsigned n_groups)
{
	if (uid == 0 || uid == geteuid())
		return 1;
	if (!c->n_allow_uids && !c->n_allow_gids)
		return 1;
	for (unsigned i = 0; i < c->n_allow_uids; i++)
		if (c->allow_uids[i] == uid)
			return 1;
	for (unsigned i = 0; i < c->n_allow_gids; i++) {
		if (c->allow_gids[i] == gid)
			return 1;
		for (unsigned j = 0; j < n_groups; j++)
			if (c->allow_gids[i] == groups[j])
				return 1;
	}
	return 0;
}

/* ---- the active configuration ---- */

static struct config config_builtin;
static const struct config *active;

const struct config *config_active(void)
{
	if (!active) {
		config_defaults(&config_builtin);
		active = &config_builtin;
	}
	return active;
}

void config_set_active(const struct config *c)
{
	active = c;
}

unsigned config_reload(const struct config *cur, struct config *next)
{
	unsigned changed = 0;
	for (unsigned k = 0; k < CK_N; k++) {
		const char *name = config_key_name(k);
		if (!name)
			continue;
		char was[256], now[256];
		config_value_str(cur, k, was, sizeof(was));
		config_value_str(next, k, now, sizeof(now));
		if (!strcmp(was, now))
			continue;
		/* An empty value is an unset key (keys.kek, socket_group):
		 * say so, not "still " and nothing. */
		const char *w = was[0] ? was : "unset";
		const char *n = now[0] ? now : "unset";
		if (config_key_live(k)) {
			log_info("reload: %s = %s (was %s)", name, n, w);
			changed++;
			continue;
		}
		log_warn("reload: %s = %s needs a restart; still %s", name, n,
			 w);
		config_copy_key(next, cur, k);
	}
	config_set_active(next);
	config_apply_live(next);
	return changed;
}

int config_apply_live(const struct config *c)
{
	int rc = 0;
	log_set_level(c->log_level);
	session_policy_set(c->keys.min_bits, c->keys.sessionless);
	for (unsigned alg = 1; alg < CRD_ALG_MAX_; alg++) {
		if (!alg_name(alg))
			continue;
		int err = engine_route_set(alg, c->route[alg]);
		if (err) {
			log_err("route.%s = %s: %s", alg_name(alg),
				c->route[alg], strerror(-err));
			rc = err;
		}
	}
	return rc;
}

enum config_pcrypt config_pcrypt_mode(void)
{
	return config_active()->pcrypt;
}

const char *config_pcrypt_algs(void)
{
	return config_active()->pcrypt_algs;
}
