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
#include "session.h"

void config_copy_key(struct config *dst, const struct config *src, unsigned k)
{
	if (k >= CK_N)
		return;
	dst->set = (dst->set & ~(1ull << k)) | (src->set & (1ull << k));
	dst->line[k] = src->line[k];
	switch (k) {
	case CK_SOCKET:
		memcpy(dst->socket, src->socket, sizeof(dst->socket));
		break;
	case CK_SOCKET_MODE:
		dst->socket_mode = src->socket_mode;
		break;
	case CK_SOCKET_GROUP:
		dst->socket_group = src->socket_group;
		dst->has_socket_group = src->has_socket_group;
		break;
	case CK_WORKERS:
		dst->workers = src->workers;
		break;
	case CK_POLL_MODE:
		dst->busy_poll = src->busy_poll;
		break;
	case CK_SPIN_US:
		dst->spin_us = src->spin_us;
		break;
	case CK_PIN:
		dst->pin = src->pin;
		break;
	case CK_LOG_LEVEL:
		dst->log_level = src->log_level;
		break;
	case CK_ALLOW_USERS:
		memcpy(dst->allow_uids, src->allow_uids,
		       sizeof(dst->allow_uids));
		dst->n_allow_uids = src->n_allow_uids;
		break;
	case CK_ALLOW_GROUPS:
		memcpy(dst->allow_gids, src->allow_gids,
		       sizeof(dst->allow_gids));
		dst->n_allow_gids = src->n_allow_gids;
		break;
	case CK_LIM_CONNS:
		dst->lim.conns_per_uid = src->lim.conns_per_uid;
		break;
	case CK_LIM_QUEUES:
		dst->lim.queues = src->lim.queues;
		break;
	case CK_LIM_SESSIONS:
		dst->lim.sessions = src->lim.sessions;
		break;
	case CK_LIM_ARENA:
		dst->lim.arena_bytes = src->lim.arena_bytes;
		break;
	case CK_LIM_INFLIGHT:
		dst->lim.inflight = src->lim.inflight;
		break;
	case CK_LIM_UID_QUEUES:
		dst->lim.uid_queues = src->lim.uid_queues;
		break;
	case CK_LIM_UID_SESSIONS:
		dst->lim.uid_sessions = src->lim.uid_sessions;
		break;
	case CK_LIM_UID_ARENA:
		dst->lim.uid_arena_bytes = src->lim.uid_arena_bytes;
		break;
	case CK_KEY_MIN_BITS:
		dst->keys.min_bits = src->keys.min_bits;
		break;
	case CK_KEY_SESSIONLESS:
		dst->keys.sessionless = src->keys.sessionless;
		break;
	case CK_KEY_REQUIRE_MLOCK:
		dst->keys.require_mlock = src->keys.require_mlock;
		break;
	case CK_PCRYPT:
		dst->pcrypt = src->pcrypt;
		break;
	case CK_PCRYPT_ALGS:
		memcpy(dst->pcrypt_algs, src->pcrypt_algs,
		       sizeof(dst->pcrypt_algs));
		break;
	default:
		memcpy(dst->route[k - CK_ROUTE], src->route[k - CK_ROUTE],
		       sizeof(dst->route[0]));
		break;
	}
}

void config_merge(struct config *dst, const struct config *src)
{
	for (unsigned k = 0; k < CK_N; k++)
		if (src->set & (1ull << k))
			config_copy_key(dst, src, k);
}

static void list_ids(char *buf, size_t len, const uint32_t *ids, unsigned n)
{
	size_t o = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < n && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%u", i ? ", " : "", ids[i]);
}

void config_value_str(const struct config *c, unsigned k, char *buf, size_t len)
{
	static const char *const pcrypt[] = { "off", "auto", "create" };
	buf[0] = '\0';
	switch (k) {
	case CK_SOCKET:
		snprintf(buf, len, "%s", c->socket);
		break;
	case CK_SOCKET_MODE:
		snprintf(buf, len, "%04o", (unsigned)c->socket_mode);
		break;
	case CK_SOCKET_GROUP:
		if (c->has_socket_group)
			snprintf(buf, len, "%u", (unsigned)c->socket_group);
		break;
	case CK_WORKERS:
		if (c->workers)
			snprintf(buf, len, "%u", c->workers);
		else
			snprintf(buf, len, "auto");
		break;
	case CK_POLL_MODE:
		snprintf(buf, len, "%s", c->busy_poll ? "busy" : "adaptive");
		break;
	case CK_SPIN_US:
		snprintf(buf, len, "%u", c->spin_us);
		break;
	case CK_PIN:
		snprintf(buf, len, "%s", c->pin ? "yes" : "no");
		break;
	case CK_LOG_LEVEL:
		snprintf(buf, len, "%s", log_level_name(c->log_level));
		break;
	case CK_ALLOW_USERS:
		list_ids(buf, len, c->allow_uids, c->n_allow_uids);
		break;
	case CK_ALLOW_GROUPS:
		list_ids(buf, len, c->allow_gids, c->n_allow_gids);
		break;
	case CK_LIM_CONNS:
		snprintf(buf, len, "%u", c->lim.conns_per_uid);
		break;
	case CK_LIM_QUEUES:
		snprintf(buf, len, "%u", c->lim.queues);
		break;
	case CK_LIM_SESSIONS:
		snprintf(buf, len, "%u", c->lim.sessions);
		break;
	case CK_LIM_ARENA:
	case CK_LIM_UID_ARENA: {
		uint64_t v = k == CK_LIM_ARENA ? c->lim.arena_bytes
					       : c->lim.uid_arena_bytes;
		if (v % (1 << 20) == 0)
			snprintf(buf, len, "%lluM",
				 (unsigned long long)(v >> 20));
		else
			snprintf(buf, len, "%llu", (unsigned long long)v);
		break;
	}
	case CK_LIM_UID_QUEUES:
		snprintf(buf, len, "%u", c->lim.uid_queues);
		break;
	case CK_LIM_UID_SESSIONS:
		snprintf(buf, len, "%u", c->lim.uid_sessions);
		break;
	case CK_LIM_INFLIGHT:
		snprintf(buf, len, "%llu", (unsigned long long)c->lim.inflight);
		break;
	case CK_KEY_MIN_BITS:
		snprintf(buf, len, "%u", c->keys.min_bits);
		break;
	case CK_KEY_SESSIONLESS:
		snprintf(buf, len, "%s", c->keys.sessionless ? "yes" : "no");
		break;
	case CK_KEY_REQUIRE_MLOCK:
		snprintf(buf, len, "%s", c->keys.require_mlock ? "yes" : "no");
		break;
	case CK_PCRYPT:
		snprintf(buf, len, "%s", pcrypt[c->pcrypt]);
		break;
	case CK_PCRYPT_ALGS:
		snprintf(buf, len, "%s", c->pcrypt_algs);
		break;
	default:
		if (k < CK_N)
			snprintf(buf, len, "%s",
				 c->route[k - CK_ROUTE][0]
					 ? c->route[k - CK_ROUTE]
					 : "default");
		break;
	}
}

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
