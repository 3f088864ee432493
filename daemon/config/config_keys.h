/* SPDX-License-Identifier: MIT */
/*
 * The configuration key table, private to the configuration files:
 * config_keys.c holds the table (which keys exist, their bounds,
 * defaults, live or restart, where each value lives in struct config),
 * config_types.c parses, stores, copies and prints a value by its type.
 */
#ifndef CRYPTOD_CONFIG_KEYS_H
#define CRYPTOD_CONFIG_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* How a key's value is parsed and printed. */
enum config_ktype {
	KT_PATH,
	KT_MODE,
	KT_GROUP,
	KT_WORKERS,
	KT_POLL,
	KT_UINT,
	KT_BOOL,
	KT_LOG,
	KT_USERS,
	KT_GROUPS,
	KT_SIZE,
	KT_BITS,
	KT_PCRYPT,
	KT_ALGLIST,
	KT_ROUTE,
};

/* One row per key: its name, how its value is parsed and printed, its
 * bounds, its default, whether SIGHUP applies it, and where it lives.
 * Parse (config_store), copy (config_copy_key), print
 * (config_value_str), defaults and reload all work from this table. */
struct config_keydef {
	const char *name;
	enum config_ktype type;
	uint64_t min, max; /* KT_UINT, KT_SIZE, KT_WORKERS */
	uint64_t def;	   /* the built-in default (scalars) */
	int live;	   /* changes on SIGHUP */
	int empty_ok;	   /* "key =" is allowed: the empty list, no group */
	/* The value's field in struct config, and for some a second one
	 * that goes with it (a count, a "given" flag; size2 0: none). */
	size_t off, size, off2, size2;
};

/* Every key below CK_ROUTE (route.<alg> keys are not in the table: they
 * are all alike). config_keys.c. */
extern const struct config_keydef config_keys[CK_ROUTE];

#endif
