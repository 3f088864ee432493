/* SPDX-License-Identifier: MIT */
/*
 * Configuration file parser. Format (docs/config.md):
 *
 *   # comment
 *   key = value          # a '#' after white space starts a comment too
 *
 * Keys are lower case; white space around key and value is dropped; a
 * value is everything up to the end of the line or an inline comment.
 * Every key may appear once. Nothing else is accepted.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bounds.h"
#include "engine.h"
#include "session.h"

_Static_assert(MAX_INFLIGHT_PER_CLIENT ==
		       MAX_QUEUES_PER_CLIENT * CRD_RING_MAX_ENTRIES,
	       "in-flight default: every completion ring at its largest");

enum ktype {
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

static const struct {
	const char *name;
	enum ktype type;
	uint64_t min, max; /* KT_UINT, KT_SIZE */
	int live;	   /* changes on SIGHUP */
} keys[CK_ROUTE] = {
	[CK_SOCKET] = { .name = "socket", .type = KT_PATH },
	[CK_SOCKET_MODE] = { .name = "socket_mode", .type = KT_MODE },
	[CK_SOCKET_GROUP] = { .name = "socket_group", .type = KT_GROUP },
	[CK_WORKERS] = { .name = "workers",
			 .type = KT_WORKERS,
			 .min = 1,
			 .max = MAX_WORKERS },
	[CK_POLL_MODE] = { .name = "poll_mode", .type = KT_POLL },
	[CK_SPIN_US] = { .name = "spin_us",
			 .type = KT_UINT,
			 .min = 0,
			 .max = 1000000 },
	[CK_PIN] = { .name = "pin", .type = KT_BOOL },
	[CK_LOG_LEVEL] = { .name = "log_level", .type = KT_LOG, .live = 1 },
	[CK_ALLOW_USERS] = { .name = "allow_users",
			     .type = KT_USERS,
			     .live = 1 },
	[CK_ALLOW_GROUPS] = { .name = "allow_groups",
			      .type = KT_GROUPS,
			      .live = 1 },
	[CK_LIM_CONNS] = { .name = "limits.connections_per_uid",
			   .type = KT_UINT,
			   .min = 1,
			   .max = MAX_CLIENTS,
			   .live = 1 },
	[CK_LIM_QUEUES] = { .name = "limits.queues_per_client",
			    .type = KT_UINT,
			    .min = 1,
			    .max = MAX_QUEUES_PER_CLIENT,
			    .live = 1 },
	[CK_LIM_SESSIONS] = { .name = "limits.sessions_per_client",
			      .type = KT_UINT,
			      .min = 1,
			      .max = MAX_SESSIONS_PER_CLIENT,
			      .live = 1 },
	[CK_LIM_ARENA] = { .name = "limits.arena_per_client",
			   .type = KT_SIZE,
			   .min = CRD_ARENA_MIN_SIZE,
			   .max = MAX_ARENA_PER_CLIENT,
			   .live = 1 },
	[CK_LIM_INFLIGHT] = { .name = "limits.inflight_per_client",
			      .type = KT_UINT,
			      .min = CRD_RING_MIN_ENTRIES,
			      .max = MAX_INFLIGHT_PER_CLIENT,
			      .live = 1 },
	[CK_LIM_UID_QUEUES] = { .name = "limits.queues_per_uid",
				.type = KT_UINT,
				.min = 1,
				.max = MAX_QUEUES,
				.live = 1 },
	[CK_LIM_UID_SESSIONS] = { .name = "limits.sessions_per_uid",
				  .type = KT_UINT,
				  .min = 1,
				  .max = MAX_SESSIONS,
				  .live = 1 },
	[CK_LIM_UID_ARENA] = { .name = "limits.arena_per_uid",
			       .type = KT_SIZE,
			       .min = CRD_ARENA_MIN_SIZE,
			       .max = (uint64_t)MAX_CLIENTS *
				      MAX_ARENA_PER_CLIENT,
			       .live = 1 },
	[CK_KEY_MIN_BITS] = { .name = "keys.min_bits",
			      .type = KT_BITS,
			      .live = 1 },
	[CK_KEY_SESSIONLESS] = { .name = "keys.sessionless",
				 .type = KT_BOOL,
				 .live = 1 },
	[CK_KEY_REQUIRE_MLOCK] = { .name = "keys.require_mlock",
				   .type = KT_BOOL },
	[CK_PCRYPT] = { .name = "kernel.pcrypt", .type = KT_PCRYPT },
	[CK_PCRYPT_ALGS] = { .name = "kernel.pcrypt_algs", .type = KT_ALGLIST },
};

void config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->socket_mode = 0660;
	c->spin_us = WORKER_SPIN_US;
	c->log_level = LOG_INFO_;
	c->lim.conns_per_uid = DEFAULT_CONNS_PER_UID;
	c->lim.queues = MAX_QUEUES_PER_CLIENT;
	c->lim.sessions = MAX_SESSIONS_PER_CLIENT;
	c->lim.arena_bytes = MAX_ARENA_PER_CLIENT;
	c->lim.inflight = MAX_INFLIGHT_PER_CLIENT;
	c->lim.uid_queues = DEFAULT_QUEUES_PER_UID;
	c->lim.uid_sessions = DEFAULT_SESSIONS_PER_UID;
	c->lim.uid_arena_bytes = (uint64_t)DEFAULT_ARENA_PER_UID_MIB << 20;
	c->keys.min_bits = 128;
	c->keys.sessionless = 1;
	c->pcrypt = CONFIG_PCRYPT_AUTO;
}

const char *config_key_name(unsigned k)
{
	static char route_names[CRD_ALG_MAX_][32];
	if (k < CK_ROUTE)
		return keys[k].name;
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
	return k < CK_ROUTE ? keys[k].live : 1;
}

static int config_find_key(const char *name)
{
	for (unsigned k = 0; k < CK_ROUTE; k++)
		if (!strcmp(name, keys[k].name))
			return k;
	if (!strncmp(name, "route.", 6)) {
		int alg = alg_from_name(name + 6);
		if (alg > 0)
			return CK_ROUTE + alg;
	}
	return -1;
}

/* ---- values ---- */

static int parse_u64(const char *s, uint64_t *out, const char **end)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	uint64_t v = 0;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = *s - '0';
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	*end = s;
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	for (unsigned i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

/* 64K, 16M, 2G, 2GiB, or plain bytes. */
static int parse_size(const char *s, uint64_t *out)
{
	uint64_t v;
	const char *e;
	if (parse_u64(s, &v, &e))
		return -1;
	unsigned shift = 0;
	switch (*e) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	default:
		return -1;
	}
	if (shift) {
		e++;
		if (!strcmp(e, "iB") || !strcmp(e, "B"))
			e += strlen(e);
		if (*e || v > (UINT64_MAX >> shift))
			return -1;
	}
	*out = v << shift;
	return 0;
}

static int parse_uid(const char *s, uid_t *out)
{
	uint64_t v;
	const char *e;
	if (!parse_u64(s, &v, &e) && !*e) {
		if (v >= (uid_t)-1)
			return -1;
		*out = (uid_t)v;
		return 0;
	}
	struct passwd pw, *r = NULL;
	char buf[4096];
	if (getpwnam_r(s, &pw, buf, sizeof(buf), &r) || !r)
		return -1;
	*out = r->pw_uid;
	return 0;
}

static int parse_gid(const char *s, gid_t *out)
{
	uint64_t v;
	const char *e;
	if (!parse_u64(s, &v, &e) && !*e) {
		if (v >= (gid_t)-1)
			return -1;
		*out = (gid_t)v;
		return 0;
	}
	struct group gr, *r = NULL;
	char buf[16384];
	if (getgrnam_r(s, &gr, buf, sizeof(buf), &r) || !r)
		return -1;
	*out = r->gr_gid;
	return 0;
}

/* Split a comma and/or blank separated list in place; calls fn on each
 * item. Returns the first non-zero fn result, or -2 on an empty item
 * between commas. */
static int for_each_item(char *s, int (*fn)(void *, const char *), void *arg)
{
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return 0;
		if (*s == ',')
			return -2;
		char *e = s;
		while (*e && *e != ',' && *e != ' ' && *e != '\t')
			e++;
		char save = *e;
		*e = '\0';
		int r = fn(arg, s);
		*e = save;
		if (r)
			return r;
		s = e;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == ',') {
			s++;
			while (*s == ' ' || *s == '\t')
				s++;
			if (!*s || *s == ',')
				return -2;
		}
	}
}

struct id_list {
	unsigned *n;
	uint32_t *ids; /* uid_t and gid_t are both 32-bit on Linux */
	int users;
	const char *bad; /* the item that failed */
};
_Static_assert(sizeof(uid_t) == 4 && sizeof(gid_t) == 4, "32-bit ids");

static int add_id(void *arg, const char *item)
{
	struct id_list *l = arg;
	uint32_t id;
	int bad = l->users ? parse_uid(item, (uid_t *)&id)
			   : parse_gid(item, (gid_t *)&id);
	if (bad) {
		l->bad = item;
		return -1;
	}
	for (unsigned i = 0; i < *l->n; i++)
		if (l->ids[i] == id)
			return 0; /* listed twice: harmless */
	if (*l->n >= CONFIG_ALLOW_MAX)
		return -3;
	l->ids[(*l->n)++] = id;
	return 0;
}

/* Stands for a comma inside parentheses while a list is split; control
 * characters never reach the parser (config_line, config_set refuse
 * them). */
#define CONFIG_COMMA_MASK '\x1f'

/* Kernel crypto API names: letters, digits and "-_()," only. */
struct alg_list {
	char *out;
	size_t len, cap;
	const char *bad;
};

static int add_kalg(void *arg, const char *item)
{
	struct alg_list *l = arg;
	size_t n = strlen(item);
	int depth = 0, ok = n < 128 && isalpha((unsigned char)item[0]);
	for (const char *p = item; *p && ok; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			ok = --depth >= 0;
		else if (*p == CONFIG_COMMA_MASK)
			ok = depth > 0; /* a comma inside parentheses */
		else
			ok = isalnum((unsigned char)*p) || *p == '-' ||
			     *p == '_';
	}
	if (!ok || depth != 0) {
		l->bad = item;
		return -1;
	}
	if (l->len + n + 2 > l->cap)
		return -3;
	if (l->len)
		l->out[l->len++] = ',';
	memcpy(l->out + l->len, item, n + 1);
	l->len += n;
	return 0;
}

/* A kernel name may contain commas inside parentheses
 * ("authenc(hmac(sha256),cbc(aes))"): split only at top-level commas by
 * masking the inner ones first. */
static void mask_inner_commas(char *s, char mask)
{
	int depth = 0;
	for (; *s; s++) {
		if (*s == '(')
			depth++;
		else if (*s == ')' && depth > 0)
			depth--;
		else if (*s == ',' && depth > 0)
			*s = mask;
	}
}

static void unmask(char *s, char mask)
{
	for (; *s; s++)
		if (*s == mask)
			*s = ',';
}

static int route_check(unsigned alg, const char *engine)
{
	for (unsigned i = 0; i < engine_count(); i++) {
		if (strcmp(engine, engine_get(i)->name))
			continue;
		return engine_cap(i, alg) ? 0 : -EOPNOTSUPP;
	}
	return -ENOENT;
}

static void engine_names(char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < engine_count() && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
			      engine_get(i)->name);
}

/*
 * Store value (NUL-terminated, trimmed, writable) for key k. Returns 0
 * or -1 with a message (no location) in err.
 */
static int store(struct config *c, unsigned k, char *v, char *err,
		 size_t errlen)
{
	uint64_t u;
	const char *e;
	int b;

	if (k >= CK_ROUTE) {
		unsigned alg = k - CK_ROUTE;
		if (!strcmp(v, "default") || !*v) {
			c->route[alg][0] = '\0';
			return 0;
		}
		int r = route_check(alg, v);
		if (r == -ENOENT) {
			char names[128];
			engine_names(names, sizeof(names));
			snprintf(err, errlen,
				 "%s: no engine '%s' (engines: %s, or default)",
				 config_key_name(k), v, names);
			return -1;
		}
		if (r) {
			snprintf(err, errlen,
				 "%s: engine '%s' does not offer %s",
				 config_key_name(k), v, alg_name(alg));
			return -1;
		}
		snprintf(c->route[alg], sizeof(c->route[alg]), "%s", v);
		return 0;
	}

	const char *name = keys[k].name;
	switch (keys[k].type) {
	case KT_PATH:
		if (!*v) { /* config_set only: back to the default */
			c->socket[0] = '\0';
			return 0;
		}
		if (v[0] != '/' || strlen(v) >= sizeof(c->socket)) {
			snprintf(err, errlen,
				 "%s: want an absolute path shorter than %zu "
				 "bytes",
				 name, sizeof(c->socket));
			return -1;
		}
		snprintf(c->socket, sizeof(c->socket), "%s", v);
		return 0;
	case KT_MODE: {
		char *end;
		unsigned long m = strtoul(v, &end, 8);
		if (!*v || *end || m > 0777 || !isdigit((unsigned char)*v)) {
			snprintf(err, errlen,
				 "%s: want octal permissions 0000..0777, not "
				 "'%s'",
				 name, v);
			return -1;
		}
		c->socket_mode = m;
		return 0;
	}
	case KT_GROUP:
		if (!*v) {
			c->has_socket_group = 0;
			return 0;
		}
		if (parse_gid(v, &c->socket_group)) {
			snprintf(err, errlen, "%s: no group '%s'", name, v);
			return -1;
		}
		c->has_socket_group = 1;
		return 0;
	case KT_WORKERS:
		if (!strcmp(v, "auto")) {
			c->workers = 0;
			return 0;
		}
		if (parse_u64(v, &u, &e) || *e || u < keys[k].min ||
		    u > keys[k].max) {
			snprintf(err, errlen,
				 "%s: want auto or 1..%d, not '%s'", name,
				 MAX_WORKERS, v);
			return -1;
		}
		c->workers = u;
		return 0;
	case KT_POLL:
		if (!strcmp(v, "adaptive") || !strcmp(v, "busy")) {
			c->busy_poll = v[0] == 'b';
			return 0;
		}
		snprintf(err, errlen, "%s: want adaptive or busy, not '%s'",
			 name, v);
		return -1;
	case KT_UINT:
		if (parse_u64(v, &u, &e) || *e || u < keys[k].min ||
		    u > keys[k].max) {
			snprintf(err, errlen,
				 "%s: want a number %llu..%llu, not '%s'", name,
				 (unsigned long long)keys[k].min,
				 (unsigned long long)keys[k].max, v);
			return -1;
		}
		switch (k) {
		case CK_SPIN_US:
			c->spin_us = u;
			break;
		case CK_LIM_CONNS:
			c->lim.conns_per_uid = u;
			break;
		case CK_LIM_QUEUES:
			c->lim.queues = u;
			break;
		case CK_LIM_SESSIONS:
			c->lim.sessions = u;
			break;
		case CK_LIM_INFLIGHT:
			c->lim.inflight = u;
			break;
		case CK_LIM_UID_QUEUES:
			c->lim.uid_queues = u;
			break;
		case CK_LIM_UID_SESSIONS:
			c->lim.uid_sessions = u;
			break;
		}
		return 0;
	case KT_SIZE:
		if (parse_size(v, &u) || u < keys[k].min || u > keys[k].max) {
			snprintf(err, errlen,
				 "%s: want a size %lluK..%lluM (suffix K, M "
				 "or G), not '%s'",
				 name, (unsigned long long)keys[k].min >> 10,
				 (unsigned long long)keys[k].max >> 20, v);
			return -1;
		}
		if (k == CK_LIM_ARENA)
			c->lim.arena_bytes = u;
		else
			c->lim.uid_arena_bytes = u;
		return 0;
	case KT_BOOL:
		if (parse_bool(v, &b)) {
			snprintf(err, errlen, "%s: want yes or no, not '%s'",
				 name, v);
			return -1;
		}
		if (k == CK_PIN)
			c->pin = b;
		else if (k == CK_KEY_SESSIONLESS)
			c->keys.sessionless = b;
		else
			c->keys.require_mlock = b;
		return 0;
	case KT_LOG:
		if (log_parse_level(v, &c->log_level)) {
			snprintf(err, errlen,
				 "%s: want error, warn, info or debug, not "
				 "'%s'",
				 name, v);
			return -1;
		}
		return 0;
	case KT_USERS:
	case KT_GROUPS: {
		int users = keys[k].type == KT_USERS;
		unsigned n = 0;
		uint32_t ids[CONFIG_ALLOW_MAX];
		struct id_list l = { &n, ids, users, NULL };
		int r = for_each_item(v, add_id, &l);
		if (r == -1)
			snprintf(err, errlen, "%s: no %s '%s'", name,
				 users ? "user" : "group", l.bad);
		else if (r == -2)
			snprintf(err, errlen, "%s: empty item in the list",
				 name);
		else if (r == -3)
			snprintf(err, errlen, "%s: more than %d entries", name,
				 CONFIG_ALLOW_MAX);
		if (r)
			return -1;
		if (users) {
			memcpy(c->allow_uids, ids, n * sizeof(ids[0]));
			c->n_allow_uids = n;
		} else {
			memcpy(c->allow_gids, ids, n * sizeof(ids[0]));
			c->n_allow_gids = n;
		}
		return 0;
	}
	case KT_BITS:
		if (parse_u64(v, &u, &e) || *e ||
		    (u != 0 && u != 128 && u != 192 && u != 256)) {
			snprintf(err, errlen,
				 "%s: want 0, 128, 192 or 256, not '%s'", name,
				 v);
			return -1;
		}
		c->keys.min_bits = u;
		return 0;
	case KT_PCRYPT:
		if (!strcmp(v, "off"))
			c->pcrypt = CONFIG_PCRYPT_OFF;
		else if (!strcmp(v, "auto"))
			c->pcrypt = CONFIG_PCRYPT_AUTO;
		else if (!strcmp(v, "create"))
			c->pcrypt = CONFIG_PCRYPT_CREATE;
		else {
			snprintf(err, errlen,
				 "%s: want off, auto or create, not '%s'", name,
				 v);
			return -1;
		}
		return 0;
	case KT_ALGLIST: {
		char out[CONFIG_PCRYPT_ALGS_MAX];
		struct alg_list l = { out, 0, sizeof(out), NULL };
		out[0] = '\0';
		mask_inner_commas(v, CONFIG_COMMA_MASK);
		int r = for_each_item(v, add_kalg, &l);
		if (r == -1) {
			unmask((char *)l.bad, CONFIG_COMMA_MASK);
			snprintf(err, errlen,
				 "%s: '%s' is not a kernel algorithm name",
				 name, l.bad);
		} else if (r == -2)
			snprintf(err, errlen, "%s: empty item in the list",
				 name);
		else if (r == -3)
			snprintf(err, errlen, "%s: list longer than %d bytes",
				 name, CONFIG_PCRYPT_ALGS_MAX - 1);
		if (r)
			return -1;
		unmask(out, CONFIG_COMMA_MASK);
		memcpy(c->pcrypt_algs, out, l.len + 1);
		return 0;
	}
	case KT_ROUTE:
		break;
	}
	snprintf(err, errlen, "%s: internal error", name);
	return -1;
}

/* ---- lines ---- */

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

static int config_line(struct config *c, char *line, const char *name,
		       unsigned lineno, char *err, size_t errlen)
{
	char msg[CONFIG_ERR_MAX - 64];
	/* A '#' at the start or after white space starts a comment. */
	for (char *p = line; *p; p++) {
		if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
	}
	char *s = trim(line);
	if (!*s)
		return 0;
	for (char *p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\t') {
			snprintf(msg, sizeof(msg), "control character in line");
			goto bad;
		}
	}
	char *eq = strchr(s, '=');
	if (!eq) {
		if (s[0] == '[')
			snprintf(msg, sizeof(msg),
				 "sections are not used: write "
				 "'section.key = value'");
		else
			snprintf(msg, sizeof(msg),
				 "expected 'key = value', got '%.64s'", s);
		goto bad;
	}
	*eq = '\0';
	char *key = trim(s), *val = trim(eq + 1);
	int k = config_find_key(key);
	if (k < 0) {
		if (!strncmp(key, "route.", 6))
			snprintf(msg, sizeof(msg),
				 "unknown algorithm in '%.64s' (see cryptoctl "
				 "engines)",
				 key);
		else
			snprintf(msg, sizeof(msg), "unknown key '%.64s'", key);
		goto bad;
	}
	if (c->set & (1ull << k) && c->line[k]) {
		snprintf(msg, sizeof(msg),
			 "duplicate key '%s' (first set on line %u)", key,
			 c->line[k]);
		goto bad;
	}
	if (!*val && k != CK_ALLOW_USERS && k != CK_ALLOW_GROUPS &&
	    k != CK_SOCKET_GROUP && k != CK_PCRYPT_ALGS && k < CK_ROUTE) {
		snprintf(msg, sizeof(msg), "%s: empty value", key);
		goto bad;
	}
	if (store(c, k, val, msg, sizeof(msg)))
		goto bad;
	c->set |= 1ull << k;
	c->line[k] = lineno;
	return 0;
bad:
	snprintf(err, errlen, "%s:%u: %s", name, lineno, msg);
	return -EINVAL;
}

int config_parse(struct config *c, const char *text, size_t len,
		 const char *name, char *err, size_t errlen)
{
	char line[CONFIG_LINE_MAX + 1];
	unsigned lineno = 0;
	size_t i = 0;
	/* Keys this text sets: duplicates are errors only within it. */
	uint64_t before = c->set;
	unsigned before_line[CK_N];
	memcpy(before_line, c->line, sizeof(before_line));
	memset(c->line, 0, sizeof(c->line));
	int rc = 0;

	while (i < len && !rc) {
		lineno++;
		size_t n = 0;
		while (i < len && text[i] != '\n') {
			if (text[i] == '\0') {
				snprintf(err, errlen, "%s:%u: NUL byte", name,
					 lineno);
				rc = -EINVAL;
				break;
			}
			if (n == CONFIG_LINE_MAX) {
				snprintf(err, errlen,
					 "%s:%u: line longer than %d bytes",
					 name, lineno, CONFIG_LINE_MAX);
				rc = -EINVAL;
				break;
			}
			line[n++] = text[i++];
		}
		if (rc)
			break;
		i++; /* the '\n' */
		line[n] = '\0';
		rc = config_line(c, line, name, lineno, err, errlen);
	}
	for (unsigned k = 0; k < CK_N; k++)
		if (!c->line[k] && (before & (1ull << k)))
			c->line[k] = before_line[k];
	explicit_bzero(line, sizeof(line));
	return rc;
}

int config_load(struct config *c, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	char *buf = malloc(CONFIG_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	size_t len = 0;
	int rc = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, CONFIG_FILE_MAX + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		len += n;
		if (len > CONFIG_FILE_MAX) {
			rc = -EFBIG;
			snprintf(err, errlen, "%s: larger than %d bytes", path,
				 CONFIG_FILE_MAX);
			break;
		}
	}
	close(fd);
	if (!rc)
		rc = config_parse(c, buf, len, path, err, errlen);
	free(buf);
	return rc;
}

int config_set(struct config *c, const char *key, const char *value,
	       const char *origin, char *err, size_t errlen)
{
	char msg[CONFIG_ERR_MAX - 64];
	int k = config_find_key(key);
	if (k < 0) {
		snprintf(err, errlen, "%s: unknown key '%.64s'", origin, key);
		return -EINVAL;
	}
	char v[CONFIG_LINE_MAX];
	if (strlen(value) >= sizeof(v)) {
		snprintf(err, errlen, "%s: value too long", origin);
		return -EINVAL;
	}
	for (const char *p = value; *p; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\t') {
			snprintf(err, errlen, "%s: control character in value",
				 origin);
			return -EINVAL;
		}
	}
	snprintf(v, sizeof(v), "%s", value);
	char *t = trim(v);
	if (store(c, k, t, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", origin, msg);
		return -EINVAL;
	}
	c->set |= 1ull << k;
	c->line[k] = 0;
	return 0;
}
