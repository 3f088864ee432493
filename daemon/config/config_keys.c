/* SPDX-License-Identifier: MIT */
/*
 * The configuration keys: one table (name, type, bounds, default, live or
 * restart, where the value lives) and the look-ups by name and index.
 * config_types.c parses, stores, copies and prints values from it;
 * config.c reads lines and files; config_live.c holds the active
 * configuration.
 */
#include "config_keys.h"

#include <stdio.h>
#include <string.h>

#include "bounds.h"
#include "engine.h"
#include "names.h"

_Static_assert(MAX_INFLIGHT_PER_CLIENT ==
		       MAX_QUEUES_PER_CLIENT * CRD_RING_MAX_ENTRIES,
	       "in-flight default: every completion ring at its largest");

/* Where a key's value lives in struct config: a field, and for some a
 * second one that goes with it (a count, a "given" flag). */
#define FIELD(f)                                                               \
	.off = offsetof(struct config, f),                                     \
	.size = sizeof(((struct config *)0)->f)
#define FIELD2(f)                                                              \
	.off2 = offsetof(struct config, f),                                    \
	.size2 = sizeof(((struct config *)0)->f)

const struct config_keydef config_keys[CK_ROUTE] = {
	[CK_SOCKET] = { .name = "socket", .type = KT_PATH, FIELD(socket) },
	[CK_SOCKET_MODE] = { .name = "socket_mode",
			     .type = KT_MODE,
			     FIELD(socket_mode),
			     .def = 0660 },
	[CK_SOCKET_GROUP] = { .name = "socket_group",
			      .type = KT_GROUP,
			      FIELD(socket_group),
			      FIELD2(has_socket_group),
			      .empty_ok = 1 },
	[CK_WORKERS] = { .name = "workers",
			 .type = KT_WORKERS,
			 .min = 1,
			 .max = MAX_WORKERS,
			 FIELD(workers) },
	[CK_POLL_MODE] = { .name = "poll_mode",
			   .type = KT_POLL,
			   FIELD(busy_poll) },
	[CK_SPIN_US] = { .name = "spin_us",
			 .type = KT_UINT,
			 .min = 0,
			 .max = 1000000,
			 FIELD(spin_us),
			 .def = WORKER_SPIN_US },
	[CK_PIN] = { .name = "pin", .type = KT_BOOL, FIELD(pin) },
	[CK_LOG_LEVEL] = { .name = "log_level",
			   .type = KT_LOG,
			   .live = 1,
			   FIELD(log_level),
			   .def = LOG_INFO_ },
	[CK_ALLOW_USERS] = { .name = "allow_users",
			     .type = KT_USERS,
			     .live = 1,
			     FIELD(allow_uids),
			     FIELD2(n_allow_uids),
			     .empty_ok = 1 },
	[CK_ALLOW_GROUPS] = { .name = "allow_groups",
			      .type = KT_GROUPS,
			      .live = 1,
			      FIELD(allow_gids),
			      FIELD2(n_allow_gids),
			      .empty_ok = 1 },
	[CK_LIM_CONNS] = { .name = "limits.connections_per_uid",
			   .type = KT_UINT,
			   .min = 1,
			   .max = MAX_CLIENTS,
			   .live = 1,
			   FIELD(lim.conns_per_uid),
			   .def = DEFAULT_CONNS_PER_UID },
	[CK_LIM_QUEUES] = { .name = "limits.queues_per_client",
			    .type = KT_UINT,
			    .min = 1,
			    .max = MAX_QUEUES_PER_CLIENT,
			    .live = 1,
			    FIELD(lim.queues),
			    .def = MAX_QUEUES_PER_CLIENT },
	[CK_LIM_SESSIONS] = { .name = "limits.sessions_per_client",
			      .type = KT_UINT,
			      .min = 1,
			      .max = MAX_SESSIONS_PER_CLIENT,
			      .live = 1,
			      FIELD(lim.sessions),
			      .def = MAX_SESSIONS_PER_CLIENT },
	[CK_LIM_ARENA] = { .name = "limits.arena_per_client",
			   .type = KT_SIZE,
			   .min = CRD_ARENA_MIN_SIZE,
			   .max = MAX_ARENA_PER_CLIENT,
			   .live = 1,
			   FIELD(lim.arena_bytes),
			   .def = MAX_ARENA_PER_CLIENT },
	[CK_LIM_INFLIGHT] = { .name = "limits.inflight_per_client",
			      .type = KT_UINT,
			      .min = CRD_RING_MIN_ENTRIES,
			      .max = MAX_INFLIGHT_PER_CLIENT,
			      .live = 1,
			      FIELD(lim.inflight),
			      .def = MAX_INFLIGHT_PER_CLIENT },
	[CK_LIM_UID_QUEUES] = { .name = "limits.queues_per_uid",
				.type = KT_UINT,
				.min = 1,
				.max = MAX_QUEUES,
				.live = 1,
				FIELD(lim.uid_queues),
				.def = DEFAULT_QUEUES_PER_UID },
	[CK_LIM_UID_SESSIONS] = { .name = "limits.sessions_per_uid",
				  .type = KT_UINT,
				  .min = 1,
				  .max = MAX_SESSIONS,
				  .live = 1,
				  FIELD(lim.uid_sessions),
				  .def = DEFAULT_SESSIONS_PER_UID },
	[CK_LIM_UID_ARENA] = { .name = "limits.arena_per_uid",
			       .type = KT_SIZE,
			       .min = CRD_ARENA_MIN_SIZE,
			       .max = (uint64_t)MAX_CLIENTS *
				      MAX_ARENA_PER_CLIENT,
			       .live = 1,
			       FIELD(lim.uid_arena_bytes),
			       .def = (uint64_t)DEFAULT_ARENA_PER_UID_MIB
				      << 20 },
	[CK_KEY_MIN_BITS] = { .name = "keys.min_bits",
			      .type = KT_BITS,
			      .live = 1,
			      FIELD(keys.min_bits),
			      .def = 128 },
	[CK_KEY_SESSIONLESS] = { .name = "keys.sessionless",
				 .type = KT_BOOL,
				 .live = 1,
				 FIELD(keys.sessionless),
				 .def = 1 },
	[CK_KEY_REQUIRE_MLOCK] = { .name = "keys.require_mlock",
				   .type = KT_BOOL,
				   FIELD(keys.require_mlock) },
	[CK_KEY_DIR] = { .name = "keys.dir",
			 .type = KT_PATH,
			 FIELD(keys.dir),
			 .empty_ok = 1 },
	[CK_KEY_KEK] = { .name = "keys.kek",
			 .type = KT_PATH,
			 FIELD(keys.kek),
			 .empty_ok = 1 },
	[CK_PCRYPT] = { .name = "kernel.pcrypt",
			.type = KT_PCRYPT,
			FIELD(pcrypt),
			.def = CONFIG_PCRYPT_AUTO },
	[CK_PCRYPT_ALGS] = { .name = "kernel.pcrypt_algs",
			     .type = KT_ALGLIST,
			     FIELD(pcrypt_algs),
			     .empty_ok = 1 },
};

const char *config_key_name(unsigned k)
{
	static char route_names[CRD_ALG_MAX_][32];
	if (k < CK_ROUTE)
		return config_keys[k].name;
	if (k >= CK_N || !alg_name(k - CK_ROUTE))
		return NULL;
	char *n = route_names[k - CK_ROUTE];
	if (!n[0])
		snprintf(n, sizeof(route_names[0]), "route.%s",
			 alg_name(k - CK_ROUTE));
	return n;
}

int config_key_live(unsigned k)
{
	return k < CK_ROUTE ? config_keys[k].live : 1;
}

int config_key_find(const char *name)
{
	for (unsigned k = 0; k < CK_ROUTE; k++)
		if (!strcmp(name, config_keys[k].name))
			return k;
	if (!strncmp(name, "route.", 6)) {
		/* Our names only, exactly: no kernel names. */
		int alg = crd_alg_from_name(name + 6, CRD_NAME_EXACT);
		if (alg > 0)
			return CK_ROUTE + alg;
	}
	return -1;
}

int config_key_empty_ok(unsigned k)
{
	return k >= CK_ROUTE || config_keys[k].empty_ok;
}
