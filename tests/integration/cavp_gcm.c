// SPDX-License-Identifier: MIT
/*
 * Strict reader for NIST CAVP AES-GCM response files; see cavp_gcm.h.
 */
#include "cavp_gcm.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cavp_open(struct cavp *p, const char *path, const char *name, int decrypt)
{
	memset(p, 0, sizeof(*p));
	p->f = fopen(path, "r");
	if (!p->f)
		return -errno;
	p->name = name;
	p->decrypt = decrypt;
	p->keylen = p->ivlen = p->ptlen = p->aadlen = p->taglen = -1;
	return 0;
}

void cavp_close(struct cavp *p)
{
	if (p->f)
		fclose(p->f);
	p->f = NULL;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Returns the byte count or -EINVAL (odd length, bad digit, too long). */
static int hex_decode(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s), i;

	if (n % 2 || n / 2 > max)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

static void strip(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* Next line without line ending; 1, or 0 at EOF. */
static int cavp_line(struct cavp *p, char *buf)
{
	if (p->has_pending) {
		p->has_pending = 0;
		strcpy(buf, p->pending);
		return 1;
	}
	if (!fgets(buf, CAVP_LINE_MAX, p->f))
		return 0;
	p->line++;
	strip(buf);
	return 1;
}

static void cavp_unread(struct cavp *p, const char *buf)
{
	strcpy(p->pending, buf);
	p->has_pending = 1;
	p->line--;
}

static int cavp_err(const struct cavp *p, const char *what)
{
	fprintf(stderr, "%s:%u: parse error: %s\n", p->name, p->line, what);
	return -EINVAL;
}

/* "[Name = value]" */
static int cavp_header(struct cavp *p, char *s)
{
	char name[32];
	long val;

	if (sscanf(s, "[%31[A-Za-z] = %ld]", name, &val) != 2 || val < 0)
		return cavp_err(p, "bad section header");
	if (!strcmp(name, "Keylen"))
		p->keylen = val;
	else if (!strcmp(name, "IVlen"))
		p->ivlen = val;
	else if (!strcmp(name, "PTlen"))
		p->ptlen = val;
	else if (!strcmp(name, "AADlen"))
		p->aadlen = val;
	else if (!strcmp(name, "Taglen"))
		p->taglen = val;
	else
		return cavp_err(p, "unknown section header");
	return 0;
}

static int cavp_field(struct cavp *p, struct gcm_vec *v, const char *name,
		      const char *val)
{
	struct {
		const char *name;
		int *has;
		uint8_t *buf;
		unsigned *len;
		size_t max;
	} f[] = {
		{ "Key", &v->has_key, v->key, &v->key_len, V_KEY_MAX },
		{ "IV", &v->has_iv, v->iv, &v->iv_len, V_IV_MAX },
		{ "PT", &v->has_pt, v->pt, &v->pt_len, V_DATA_MAX },
		{ "CT", &v->has_ct, v->ct, &v->ct_len, V_DATA_MAX },
		{ "AAD", &v->has_aad, v->aad, &v->aad_len, V_DATA_MAX },
		{ "Tag", &v->has_tag, v->tag, &v->tag_len, V_TAG_MAX },
	};
	size_t i;
	int n;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (strcmp(name, f[i].name))
			continue;
		if (*f[i].has)
			return cavp_err(p, "field repeated in a record");
		n = hex_decode(val, f[i].buf, f[i].max);
		if (n < 0)
			return cavp_err(p, "bad or oversized hex value");
		*f[i].has = 1;
		*f[i].len = (unsigned)n;
		return 0;
	}
	return cavp_err(p, "unknown field");
}

/* Check a finished record against its section headers, so that a parser
 * slip shows up as an error rather than as vectors quietly not run. */
static int cavp_validate(struct cavp *p, const struct gcm_vec *v)
{
	if (!v->has_key || !v->has_iv || !v->has_ct || !v->has_aad ||
	    !v->has_tag)
		return cavp_err(p, "record lacks Key/IV/CT/AAD/Tag");
	if (!p->decrypt && (!v->has_pt || v->fail))
		return cavp_err(p, "encrypt record without PT");
	if (p->decrypt && v->has_pt == v->fail)
		return cavp_err(p,
				"decrypt record needs exactly one of PT, FAIL");
	if (p->keylen < 0 || p->ivlen < 0 || p->ptlen < 0 || p->aadlen < 0 ||
	    p->taglen < 0)
		return cavp_err(p, "record before all section headers");
	if (v->key_len * 8 != p->keylen || v->iv_len * 8 != p->ivlen ||
	    v->ct_len * 8 != p->ptlen || v->aad_len * 8 != p->aadlen ||
	    v->tag_len * 8 != p->taglen)
		return cavp_err(p, "record length disagrees with its section");
	if (v->has_pt && v->pt_len != v->ct_len)
		return cavp_err(p, "PT and CT lengths differ");
	return 0;
}

static int cavp_next_one(struct cavp *p, struct gcm_vec *v);

/* $CRYPTOD_TEST_SAMPLE=N keeps every Nth vector of a file (the VM suite,
 * whose emulated CPUs cannot run all of them in CI's time). */
unsigned cavp_sample(void)
{
	const char *e = getenv("CRYPTOD_TEST_SAMPLE");
	long n = e ? strtol(e, NULL, 10) : 1;
	return n > 1 ? (unsigned)n : 1;
}

int cavp_next(struct cavp *p, struct gcm_vec *v)
{
	unsigned n = cavp_sample();
	int r;
	do
		r = cavp_next_one(p, v);
	while (r > 0 && p->seen++ % n != 0);
	return r;
}

static int cavp_next_one(struct cavp *p, struct gcm_vec *v)
{
	char buf[CAVP_LINE_MAX], name[16];
	int in_rec = 0, r;

	memset(v, 0, sizeof(*v));
	while (cavp_line(p, buf)) {
		char *eq;

		if (!buf[0] || buf[0] == '#') {
			if (in_rec && !buf[0])
				break;
			continue;
		}
		if (buf[0] == '[') {
			if (in_rec) {
				cavp_unread(p, buf);
				break;
			}
			r = cavp_header(p, buf);
			if (r)
				return r;
			continue;
		}
		if (!strcmp(buf, "FAIL")) {
			if (!in_rec || v->fail)
				return cavp_err(p, "stray FAIL");
			v->fail = 1;
			continue;
		}
		eq = strchr(buf, '=');
		if (!eq || sscanf(buf, "%15[A-Za-z] =", name) != 1)
			return cavp_err(p, "expected 'Name = value'");
		eq++;
		while (*eq == ' ')
			eq++;
		if (!strcmp(name, "Count")) {
			if (in_rec) {
				cavp_unread(p, buf);
				break;
			}
			in_rec = 1;
			v->line = p->line;
			v->count = (unsigned)strtoul(eq, NULL, 10);
			continue;
		}
		if (!in_rec)
			return cavp_err(p, "field outside a record");
		r = cavp_field(p, v, name, eq);
		if (r)
			return r;
	}
	if (ferror(p->f))
		return cavp_err(p, "read error");
	if (!in_rec)
		return 0;
	r = cavp_validate(p, v);
	return r ? r : 1;
}
