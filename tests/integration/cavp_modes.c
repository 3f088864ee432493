// SPDX-License-Identifier: MIT
/*
 * Strict reader for the NIST CAVP AES block-mode files; see cavp_modes.h.
 */
#include "cavp_modes.h"
#include "cavp_gcm.h"
#include "modes_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mv_open(struct mv_reader *r, const char *path, const char *name,
	    enum mv_kind kind, unsigned key_len)
{
	memset(r, 0, sizeof(*r));
	r->f = fopen(path, "r");
	if (!r->f)
		return -errno;
	r->name = name;
	r->kind = kind;
	r->key_len = key_len;
	r->section = -1;
	return 0;
}

void mv_close(struct mv_reader *r)
{
	if (r->f)
		fclose(r->f);
	r->f = NULL;
}

static int mv_err(const struct mv_reader *r, const char *what)
{
	fprintf(stderr, "%s:%u: parse error: %s\n", r->name, r->line, what);
	return -EINVAL;
}

/* Next line without its ending (the XTS files use CRLF); 1, or 0 at EOF.
 * A line longer than the buffer is an error, not two lines. */
static int mv_line(struct mv_reader *r, char *buf)
{
	size_t n;

	if (r->has_pending) {
		r->has_pending = 0;
		r->line++;
		strcpy(buf, r->pending);
		return 1;
	}
	if (!fgets(buf, MV_LINE_MAX, r->f))
		return 0;
	r->line++;
	n = strlen(buf);
	if (n == MV_LINE_MAX - 1 && buf[n - 1] != '\n')
		return -1;
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 1;
}

static void mv_unread(struct mv_reader *r, const char *buf)
{
	strcpy(r->pending, buf);
	r->has_pending = 1;
	r->line--;
}

static int mv_hex(struct mv_reader *r, const char *val, uint8_t *out,
		  size_t max, unsigned *len, int *has)
{
	int n;

	if (*has)
		return mv_err(r, "field repeated in a record");
	n = mc_unhex(val, out, max);
	if (n < 0)
		return mv_err(r, "bad or oversized hex value");
	*len = (unsigned)n;
	*has = 1;
	return 0;
}

static int mv_decimal(struct mv_reader *r, const char *val, uint64_t max,
		      uint64_t *out, int *has)
{
	char *end;
	unsigned long long x;

	if (*has)
		return mv_err(r, "field repeated in a record");
	if (!isdigit((unsigned char)*val))
		return mv_err(r, "expected a decimal number");
	errno = 0;
	x = strtoull(val, &end, 10);
	if (errno || *end || x > max)
		return mv_err(r, "bad decimal number");
	*out = x;
	*has = 1;
	return 0;
}

static int mv_field(struct mv_reader *r, struct mode_vec *v, const char *name,
		    const char *val)
{
	int xts = r->kind == MV_XTS;
	unsigned pt_len = 0, ct_len = 0, i;
	uint64_t x;
	int rc;

	if (!strcmp(name, xts ? "Key" : "KEY"))
		return mv_hex(r, val, v->key, MV_KEY_MAX, &v->key_len,
			      &v->has_key);
	if ((!xts && r->kind == MV_BLOCK_IV && !strcmp(name, "IV")) ||
	    (xts && !strcmp(name, "i"))) {
		if (v->has_seqno)
			return mv_err(r, "both i and DataUnitSeqNumber");
		return mv_hex(r, val, v->iv, sizeof(v->iv), &v->iv_len,
			      &v->has_iv);
	}
	if (!strcmp(name, xts ? "PT" : "PLAINTEXT")) {
		rc = mv_hex(r, val, v->pt, MV_DATA_MAX, &pt_len, &v->has_pt);
		if (!rc && v->has_ct && pt_len != v->len)
			return mv_err(r, "plaintext and ciphertext lengths "
					 "differ");
		v->len = pt_len;
		return rc;
	}
	if (!strcmp(name, xts ? "CT" : "CIPHERTEXT")) {
		rc = mv_hex(r, val, v->ct, MV_DATA_MAX, &ct_len, &v->has_ct);
		if (!rc && v->has_pt && ct_len != v->len)
			return mv_err(r, "plaintext and ciphertext lengths "
					 "differ");
		v->len = ct_len;
		return rc;
	}
	if (xts && !strcmp(name, "DataUnitLen")) {
		rc = mv_decimal(r, val, 8u * MV_DATA_MAX, &x, &v->has_bits);
		v->bits = (long)x;
		return rc;
	}
	if (xts && !strcmp(name, "DataUnitSeqNumber")) {
		if (v->has_iv)
			return mv_err(r, "both i and DataUnitSeqNumber");
		rc = mv_decimal(r, val, UINT64_MAX, &v->seqno, &v->has_seqno);
		if (rc)
			return rc;
		/* The tweak is the little-endian 128-bit sequence number
		 * (IEEE 1619; dm-crypt's plain64). */
		memset(v->iv, 0, sizeof(v->iv));
		for (i = 0; i < 8; i++)
			v->iv[i] = (uint8_t)(v->seqno >> (8 * i));
		v->iv_len = 16;
		return 0;
	}
	return mv_err(r, "unknown field");
}

static int mv_validate(struct mv_reader *r, struct mode_vec *v)
{
	if (r->section < 0)
		return mv_err(r, "record before [ENCRYPT] or [DECRYPT]");
	if (!v->has_key || !v->has_pt || !v->has_ct)
		return mv_err(r, "record lacks a key, plaintext or ciphertext");
	if (v->key_len != r->key_len)
		return mv_err(r, "key length disagrees with the file name");
	switch (r->kind) {
	case MV_BLOCK:
		v->bits = 8L * v->len;
		break;
	case MV_BLOCK_IV:
		if (!v->has_iv || v->iv_len != 16)
			return mv_err(r, "record lacks a 16-byte IV");
		v->bits = 8L * v->len;
		break;
	case MV_XTS:
		if (!v->has_bits)
			return mv_err(r, "record lacks DataUnitLen");
		if ((!v->has_iv && !v->has_seqno) || v->iv_len != 16)
			return mv_err(r, "record lacks a 16-byte tweak");
		/* Bit lengths round up to whole bytes in the hex. */
		if ((unsigned long)(v->bits + 7) / 8 != v->len)
			return mv_err(r, "DataUnitLen disagrees with the data");
		break;
	}
	v->decrypt = r->section;
	return 0;
}

static int mv_next_one(struct mv_reader *r, struct mode_vec *v);

int mv_next(struct mv_reader *r, struct mode_vec *v)
{
	unsigned n = cavp_sample();
	int rc;
	do
		rc = mv_next_one(r, v);
	while (rc > 0 && r->seen++ % n != 0);
	return rc;
}

static int mv_next_one(struct mv_reader *r, struct mode_vec *v)
{
	char buf[MV_LINE_MAX], name[24];
	int in_rec = 0, rc;

	memset(v, 0, sizeof(*v));
	while ((rc = mv_line(r, buf)) != 0) {
		char *eq;

		if (rc < 0)
			return mv_err(r, "line too long");
		if (!buf[0] || buf[0] == '#') {
			if (in_rec && !buf[0])
				break;
			continue;
		}
		if (buf[0] == '[') {
			if (in_rec) {
				mv_unread(r, buf);
				break;
			}
			if (!strcmp(buf, "[ENCRYPT]"))
				r->section = 0;
			else if (!strcmp(buf, "[DECRYPT]"))
				r->section = 1;
			else
				return mv_err(r, "unknown section header");
			continue;
		}
		eq = strchr(buf, '=');
		if (!eq || sscanf(buf, "%23[A-Za-z] =", name) != 1)
			return mv_err(r, "expected 'Name = value'");
		eq++;
		while (*eq == ' ')
			eq++;
		if (!strcmp(name, "COUNT")) {
			if (in_rec) {
				mv_unread(r, buf);
				break;
			}
			in_rec = 1;
			v->line = r->line;
			v->count = (unsigned)strtoul(eq, NULL, 10);
			continue;
		}
		if (!in_rec)
			return mv_err(r, "field outside a record");
		rc = mv_field(r, v, name, eq);
		if (rc)
			return rc;
	}
	if (ferror(r->f))
		return mv_err(r, "read error");
	if (!in_rec)
		return 0;
	rc = mv_validate(r, v);
	return rc ? rc : 1;
}
