// SPDX-License-Identifier: MIT
/*
 * Strict reader for the MAC and digest vector files; see mac_vectors.h.
 */
#include "mac_vectors.h"
#include "modes_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mac_open(struct mac_reader *r, const char *path, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->f = fopen(path, "r");
	if (!r->f)
		return -errno;
	r->name = name;
	return 0;
}

void mac_close(struct mac_reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->buf);
	r->f = NULL;
	r->buf = NULL;
}

static int mac_err(const struct mac_reader *r, const char *what)
{
	fprintf(stderr, "%s:%u: parse error: %s\n", r->name, r->line, what);
	return -EINVAL;
}

/* The value of a "Name = value" line into out; its byte count. */
static int mac_field(const struct mac_reader *r, const char *val, uint8_t *out,
		     size_t max, unsigned *len, int *seen)
{
	int n = *val ? mc_unhex(val, out, max) : 0;

	if (*seen)
		return mac_err(r, "field repeated in a record");
	if (n < 0)
		return mac_err(r, "bad or oversized hex value");
	*seen = 1;
	*len = (unsigned)n;
	return 0;
}

/* The record is complete: check it. 1 or -EINVAL. */
static int mac_done(struct mac_reader *r, struct mac_vec *v, int has_msg,
		    int has_md)
{
	if (!has_msg || !has_md)
		return mac_err(r, "record without message or digest");
	if (v->bits >= 0 && v->bits % 8 == 0) {
		/* Len 0 is written "Msg = 00". */
		if ((unsigned long)v->bits / 8 > v->msg_len ||
		    (v->bits && (unsigned long)v->bits / 8 != v->msg_len))
			return mac_err(r, "Len disagrees with Msg");
		v->msg_len = (unsigned)(v->bits / 8);
	}
	if (v->count < 0)
		v->count = r->records;
	r->records++;
	return 1;
}

int mac_next(struct mac_reader *r, struct mac_vec *v)
{
	int has_msg = 0, has_md = 0, has_key = 0, in_rec = 0;
	ssize_t n;

	v->bits = -1;
	v->count = -1;
	v->key_len = v->msg_len = v->md_len = 0;
	while ((n = getline(&r->buf, &r->cap, r->f)) >= 0) {
		char *l = r->buf, *eq, *val, *end;
		int e = 0;

		r->line++;
		while (n && isspace((unsigned char)l[n - 1]))
			l[--n] = '\0';
		if (!n) {
			if (in_rec)
				return mac_done(r, v, has_msg, has_md);
			continue;
		}
		if (l[0] == '#' || l[0] == '[')
			continue;
		eq = strchr(l, '=');
		if (!eq)
			return mac_err(r, "not a Name = value line");
		for (end = eq; end > l && isspace((unsigned char)end[-1]);)
			end--;
		*end = '\0';
		for (val = eq + 1; isspace((unsigned char)*val);)
			val++;
		if (!in_rec)
			v->line = r->line;
		in_rec = 1;
		if (!strcmp(l, "Len") || !strcmp(l, "COUNT")) {
			char *p;
			long x = strtol(val, &p, 10);

			if (*p || x < 0)
				return mac_err(r, "bad number");
			if (l[0] == 'L')
				v->bits = x;
			else
				v->count = x;
		} else if (!strcmp(l, "Key") || !strcmp(l, "KEY")) {
			e = mac_field(r, val, v->key, sizeof(v->key),
				      &v->key_len, &has_key);
		} else if (!strcmp(l, "Msg") || !strcmp(l, "MESSAGE")) {
			e = mac_field(r, val, v->msg, sizeof(v->msg),
				      &v->msg_len, &has_msg);
		} else if (!strcmp(l, "MD") || !strcmp(l, "OUTPUT")) {
			e = mac_field(r, val, v->md, sizeof(v->md), &v->md_len,
				      &has_md);
		} else {
			return mac_err(r, "unknown field");
		}
		if (e)
			return e;
	}
	return in_rec ? mac_done(r, v, has_msg, has_md) : 0;
}
