/* SPDX-License-Identifier: MIT */
/*
 * Configuration values by type: parse a value into its field of struct
 * config (config_store), built-in defaults, copy a key, print it as the
 * file would spell it. Which keys there are, and each key's type, bounds,
 * default and field, is config_keys.c's table.
 */
#include "config_keys.h"
#include "decimal.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bounds.h"
#include "engine.h"

/* Scalar fields, whatever their width (unsigned, int, mode_t, enums,
 * uint64_t). */
static void field_put(struct config *c, unsigned k, uint64_t v)
{
	uint8_t *p = (uint8_t *)c + config_keys[k].off;
	if (config_keys[k].size == sizeof(uint64_t)) {
		memcpy(p, &v, sizeof(v));
	} else {
		uint32_t w = (uint32_t)v;
		_Static_assert(sizeof(unsigned) == sizeof(uint32_t) &&
				       sizeof(mode_t) == sizeof(uint32_t) &&
				       sizeof(enum log_level) ==
					       sizeof(uint32_t),
			       "scalar config fields are 32 or 64 bits");
		memcpy(p, &w, sizeof(w));
	}
}

static uint64_t field_get(const struct config *c, unsigned k)
{
	const uint8_t *p = (const uint8_t *)c + config_keys[k].off;
	if (config_keys[k].size == sizeof(uint64_t)) {
		uint64_t v;
		memcpy(&v, p, sizeof(v));
		return v;
	}
	uint32_t w;
	memcpy(&w, p, sizeof(w));
	return w;
}

static int key_is_scalar(unsigned k)
{
	switch (config_keys[k].type) {
	case KT_PATH:
	case KT_GROUP:
	case KT_USERS:
	case KT_GROUPS:
	case KT_ALGLIST:
	case KT_ROUTE:
		return 0;
	default:
		return 1;
	}
}

void config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	for (unsigned k = 0; k < CK_ROUTE; k++)
		if (key_is_scalar(k))
			field_put(c, k, config_keys[k].def);
}
/* ---- values ---- */

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
	if (dec_parse(s, UINT64_MAX, &v, &e))
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
	if (!dec_parse_all(s, UINT64_MAX, &v)) {
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
	if (!dec_parse_all(s, UINT64_MAX, &v)) {
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
int config_is_set(const struct config *c, unsigned k)
{
	return (int)(c->set[k / 64] >> (k % 64) & 1);
}

void config_mark_set(struct config *c, unsigned k, int on)
{
	uint64_t b = 1ull << (k % 64);
	c->set[k / 64] = on ? c->set[k / 64] | b : c->set[k / 64] & ~b;
}

int config_store(struct config *c, unsigned k, char *v, char *err,
		 size_t errlen)
{
	uint64_t u;
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

	const char *name = config_keys[k].name;
	switch (config_keys[k].type) {
	case KT_PATH: {
		char *dst = (char *)c + config_keys[k].off;
		size_t cap = config_keys[k].size;
		if (!*v) { /* config_set only: back to the default */
			dst[0] = '\0';
			return 0;
		}
		/* keys.kek may name a systemd credential or a kernel
		 * keyring key instead. */
		int cred = k == CK_KEY_KEK &&
			   ((!strncmp(v, "credential:", 11) && v[11] &&
			     !strchr(v + 11, '/')) ||
			    (!strncmp(v, "keyring:", 8) && v[8]));
		if ((v[0] != '/' && !cred) || strlen(v) >= cap) {
			snprintf(err, errlen,
				 "%s: want an absolute path%s shorter than %zu "
				 "bytes",
				 name,
				 k == CK_KEY_KEK ? " or credential:NAME" : "",
				 cap);
			return -1;
		}
		snprintf(dst, cap, "%s", v);
	}
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
		field_put(c, k, m);
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
			field_put(c, k, 0);
			return 0;
		}
		if (dec_parse_all(v, config_keys[k].max, &u) ||
		    u < config_keys[k].min) {
			snprintf(err, errlen,
				 "%s: want auto or 1..%d, not '%s'", name,
				 MAX_WORKERS, v);
			return -1;
		}
		field_put(c, k, u);
		return 0;
	case KT_POLL:
		if (!strcmp(v, "adaptive") || !strcmp(v, "busy")) {
			field_put(c, k, v[0] == 'b');
			return 0;
		}
		snprintf(err, errlen, "%s: want adaptive or busy, not '%s'",
			 name, v);
		return -1;
	case KT_UINT:
		if (dec_parse_all(v, config_keys[k].max, &u) ||
		    u < config_keys[k].min) {
			snprintf(err, errlen,
				 "%s: want a number %llu..%llu, not '%s'", name,
				 (unsigned long long)config_keys[k].min,
				 (unsigned long long)config_keys[k].max, v);
			return -1;
		}
		field_put(c, k, u);
		return 0;
	case KT_SIZE:
		if (parse_size(v, &u) || u < config_keys[k].min ||
		    u > config_keys[k].max) {
			snprintf(err, errlen,
				 "%s: want a size %lluK..%lluM (suffix K, M "
				 "or G), not '%s'",
				 name,
				 (unsigned long long)config_keys[k].min >> 10,
				 (unsigned long long)config_keys[k].max >> 20,
				 v);
			return -1;
		}
		field_put(c, k, u);
		return 0;
	case KT_BOOL:
		if (parse_bool(v, &b)) {
			snprintf(err, errlen, "%s: want yes or no, not '%s'",
				 name, v);
			return -1;
		}
		field_put(c, k, (uint64_t)b);
		return 0;
	case KT_LOG: {
		enum log_level lvl;
		if (log_parse_level(v, &lvl)) {
			snprintf(err, errlen,
				 "%s: want error, warn, info or debug, not "
				 "'%s'",
				 name, v);
			return -1;
		}
		field_put(c, k, lvl);
		return 0;
	}
	case KT_USERS:
	case KT_GROUPS: {
		int users = config_keys[k].type == KT_USERS;
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
		if (dec_parse_all(v, UINT64_MAX, &u) ||
		    (u != 0 && u != 128 && u != 192 && u != 256)) {
			snprintf(err, errlen,
				 "%s: want 0, 128, 192 or 256, not '%s'", name,
				 v);
			return -1;
		}
		field_put(c, k, u);
		return 0;
	case KT_PCRYPT:
		if (!strcmp(v, "off"))
			field_put(c, k, CONFIG_PCRYPT_OFF);
		else if (!strcmp(v, "auto"))
			field_put(c, k, CONFIG_PCRYPT_AUTO);
		else if (!strcmp(v, "create"))
			field_put(c, k, CONFIG_PCRYPT_CREATE);
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

void config_copy_key(struct config *dst, const struct config *src, unsigned k)
{
	if (k >= CK_N)
		return;
	config_mark_set(dst, k, config_is_set(src, k));
	dst->line[k] = src->line[k];
	if (k >= CK_ROUTE) {
		memcpy(dst->route[k - CK_ROUTE], src->route[k - CK_ROUTE],
		       sizeof(dst->route[0]));
		return;
	}
	memcpy((uint8_t *)dst + config_keys[k].off,
	       (const uint8_t *)src + config_keys[k].off, config_keys[k].size);
	if (config_keys[k].size2)
		memcpy((uint8_t *)dst + config_keys[k].off2,
		       (const uint8_t *)src + config_keys[k].off2,
		       config_keys[k].size2);
}

void config_merge(struct config *dst, const struct config *src)
{
	for (unsigned k = 0; k < CK_N; k++)
		if (config_is_set(src, k))
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
	if (k >= CK_N)
		return;
	if (k >= CK_ROUTE) {
		const char *r = c->route[k - CK_ROUTE];
		snprintf(buf, len, "%s", r[0] ? r : "default");
		return;
	}
	uint64_t v = key_is_scalar(k) ? field_get(c, k) : 0;
	switch (config_keys[k].type) {
	case KT_PATH:
		snprintf(buf, len, "%s", (const char *)c + config_keys[k].off);
		break;
	case KT_ALGLIST:
		snprintf(buf, len, "%s", c->pcrypt_algs);
		break;
	case KT_MODE:
		snprintf(buf, len, "%04o", (unsigned)v);
		break;
	case KT_GROUP:
		if (c->has_socket_group)
			snprintf(buf, len, "%u", (unsigned)c->socket_group);
		break;
	case KT_WORKERS:
		if (v)
			snprintf(buf, len, "%u", (unsigned)v);
		else
			snprintf(buf, len, "auto");
		break;
	case KT_POLL:
		snprintf(buf, len, "%s", v ? "busy" : "adaptive");
		break;
	case KT_UINT:
	case KT_BITS:
		snprintf(buf, len, "%llu", (unsigned long long)v);
		break;
	case KT_SIZE:
		if (v % (1 << 20) == 0)
			snprintf(buf, len, "%lluM",
				 (unsigned long long)(v >> 20));
		else
			snprintf(buf, len, "%llu", (unsigned long long)v);
		break;
	case KT_BOOL:
		snprintf(buf, len, "%s", v ? "yes" : "no");
		break;
	case KT_LOG:
		snprintf(buf, len, "%s", log_level_name((enum log_level)v));
		break;
	case KT_USERS:
		list_ids(buf, len, c->allow_uids, c->n_allow_uids);
		break;
	case KT_GROUPS:
		list_ids(buf, len, c->allow_gids, c->n_allow_gids);
		break;
	case KT_PCRYPT:
		snprintf(buf, len, "%s", v < 3 ? pcrypt[v] : "?");
		break;
	case KT_ROUTE:
		break;
	}
}
