// SPDX-License-Identifier: MIT
/*
 * Vector files and OpenSSL references for aead_common.h: the CAVP CCM
 * response files and the NIST-style ChaCha20(-Poly1305) files. The reader
 * is strict: an unknown field, a value that disagrees with its section or
 * a record missing a field is a parse error, so that a slip shows up as
 * a failure rather than as vectors quietly not run.
 */
#include "aead_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

void av_free(struct av *v)
{
	free(v->aad);
	free(v->pt);
	free(v->ct);
	v->aad = v->pt = v->ct = NULL;
}

int av_open(struct av_file *p, const char *path, enum cc_alg alg)
{
	memset(p, 0, sizeof(*p));
	p->f = fopen(path, "r");
	if (!p->f)
		return -errno;
	p->name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	p->alg = alg;
	p->decrypt = alg == CC_ALG_AES_CCM && strstr(p->name, "DVPT") != NULL;
	p->alen = p->plen = p->nlen = p->tlen = -1;
	p->key_len = p->nonce_len = -1;
	return 0;
}

void av_close(struct av_file *p)
{
	if (p->f)
		fclose(p->f);
	p->f = NULL;
}

/* A value: hex, "a quoted string" or nothing. Its length, or -EINVAL. */
static int av_value(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s);

	if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
		if (n - 2 > max)
			return -EINVAL;
		memcpy(out, s + 1, n - 2);
		return (int)(n - 2);
	}
	if (!n)
		return 0;
	return mc_unhex(s, out, max);
}

enum { F_MAX = 8 };

struct rec {
	char *name[F_MAX], *val[F_MAX];
	unsigned n;
};

static void rec_clear(struct rec *r)
{
	for (unsigned i = 0; i < r->n; i++) {
		free(r->name[i]);
		free(r->val[i]);
	}
	r->n = 0;
}

static const char *rec_get(const struct rec *r, const char *name)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!strcasecmp(r->name[i], name))
			return r->val[i];
	return NULL;
}

/* A field as bytes into a fresh buffer of at least one byte. */
static int rec_bytes(const struct rec *r, const char *name, uint8_t **out)
{
	const char *s = rec_get(r, name);
	int n;

	*out = malloc(s ? strlen(s) + 1 : 1); /* hex or "text" */
	if (!*out)
		return -ENOMEM;
	if (!s)
		return -EINVAL;
	n = av_value(s, *out, strlen(s));
	return n;
}

static int av_err(const struct av_file *p, const char *why)
{
	fprintf(stderr, "%s:%u: parse error: %s\n", p->name, p->line, why);
	return -EINVAL;
}

/* "[Alen = 0, Plen = 0, Nlen = 7, Tlen = 4]" or "Alen = 32" (CCM). */
static int av_param(struct av_file *p, const char *name, const char *val)
{
	long v = strtol(val, NULL, 10);

	if (!strcasecmp(name, "Alen"))
		p->alen = v;
	else if (!strcasecmp(name, "Plen"))
		p->plen = v;
	else if (!strcasecmp(name, "Nlen"))
		p->nlen = v;
	else if (!strcasecmp(name, "Tlen"))
		p->tlen = v;
	else if (!strcasecmp(name, "Key"))
		p->key_len = av_value(val, p->key, sizeof(p->key));
	else if (!strcasecmp(name, "Nonce"))
		p->nonce_len = av_value(val, p->nonce, sizeof(p->nonce));
	else
		return av_err(p, "unknown field outside a record");
	return 0;
}

static int av_section(struct av_file *p, char *s)
{
	char *save = NULL, *tok;

	s[strlen(s) - 1] = '\0';
	for (tok = strtok_r(s + 1, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *name = tok, *val;

		if (!eq)
			return av_err(p, "section without '='");
		*eq = '\0';
		val = eq + 1;
		while (isspace((unsigned char)*name))
			name++;
		for (char *e = eq - 1; e >= name && isspace((unsigned char)*e);
		     e--)
			*e = '\0';
		while (isspace((unsigned char)*val))
			val++;
		if (av_param(p, name, val))
			return -EINVAL;
	}
	return 0;
}

/* A CCM record: Adata, Payload, CT = ciphertext || tag, Result. */
static int av_ccm(struct av_file *p, const struct rec *r, struct av *v)
{
	uint8_t *ctt = NULL;
	const char *res = rec_get(r, "Result");
	int n, pl;

	if (rec_get(r, "Key"))
		p->key_len = av_value(rec_get(r, "Key"), p->key, 32);
	if (rec_get(r, "Nonce"))
		p->nonce_len = av_value(rec_get(r, "Nonce"), p->nonce, 16);
	if (p->alen < 0 || p->plen < 0 || p->nlen < 0 || p->tlen < 0 ||
	    p->key_len <= 0 || p->nonce_len != p->nlen)
		return av_err(p, "record without key, nonce or lengths");
	memcpy(v->key, p->key, p->key_len);
	v->key_len = p->key_len;
	memcpy(v->iv, p->nonce, p->nonce_len);
	v->iv_len = p->nonce_len;
	v->tag_len = p->tlen;
	v->aad_len = p->alen;
	v->len = p->plen;
	/* "00" stands for an empty AAD or payload */
	n = rec_bytes(r, "Adata", &v->aad);
	if (n < (int)v->aad_len || (v->aad_len && n != (int)v->aad_len))
		return av_err(p, "Adata disagrees with Alen");
	n = rec_bytes(r, "CT", &ctt);
	if (n != (int)(v->len + v->tag_len)) {
		free(ctt);
		return av_err(p, "CT is not Plen + Tlen bytes");
	}
	v->ct = ctt;
	memcpy(v->tag, ctt + v->len, v->tag_len);
	if (p->decrypt &&
	    (!res || (strcasecmp(res, "Pass") && strcasecmp(res, "Fail"))))
		return av_err(p, "decrypt record without Result");
	v->fail = res && !strcasecmp(res, "Fail");
	if (v->fail) {
		v->pt = calloc(1, v->len + 1);
		return v->pt ? 0 : -ENOMEM;
	}
	pl = rec_bytes(r, "Payload", &v->pt);
	if (pl < (int)v->len || (v->len && pl != (int)v->len))
		return av_err(p, "Payload disagrees with Plen");
	return 0;
}

/* ChaCha20-Poly1305 (OpenSSL's and BoringSSL's spelling) and ChaCha20. */
static int av_chacha(struct av_file *p, const struct rec *r, struct av *v)
{
	int poly = p->alg == CC_ALG_CHACHA20_POLY1305;
	const char *k = rec_get(r, "Key"), *res = rec_get(r, "Result");
	const char *iv =
		rec_get(r, "IV") ? rec_get(r, "IV") : rec_get(r, "NONCE");
	const char *pt = rec_get(r, "Plaintext") ? "Plaintext" : "IN";
	const char *ct = rec_get(r, "Ciphertext") ? "Ciphertext" : "CT";
	int n, m;

	if (!k || !iv || (n = av_value(k, v->key, 32)) != 32)
		return av_err(p, "record without a 32-byte key or a nonce");
	v->key_len = 32;
	if (poly) {
		const char *tag = rec_get(r, "Tag");
		const char *aad = rec_get(r, "AAD") ? "AAD" : "AD";

		if (av_value(iv, v->iv, 16) != 12 || !tag ||
		    (m = av_value(tag, v->tag, 16)) <= 0)
			return av_err(p, "nonce not 12 bytes, or no tag");
		v->iv_len = 12;
		v->tag_len = m;
		n = rec_bytes(r, aad, &v->aad);
		if (n < 0)
			return av_err(p, "no AAD");
		v->aad_len = n;
		v->fail = res && !strcasecmp(res, "CIPHERFINAL_ERROR");
		if (res && !v->fail)
			return av_err(p, "unknown Result");
	} else {
		const char *ctr = rec_get(r, "INITIAL_BLOCK_COUNTER");
		unsigned long c = ctr ? strtoul(ctr, NULL, 10) : 0;

		if (!ctr || av_value(iv, v->iv + 4, 12) != 12)
			return av_err(p, "no counter, or nonce not 12 bytes");
		for (int i = 0; i < 4; i++)
			v->iv[i] = (uint8_t)(c >> (8 * i));
		v->iv_len = 16;
		pt = "PLAINTEXT";
		ct = "CIPHERTEXT";
	}
	n = rec_bytes(r, pt, &v->pt);
	m = rec_bytes(r, ct, &v->ct);
	if (n < 0 || m != n)
		return av_err(p, "plaintext and ciphertext lengths differ");
	v->len = n;
	return 0;
}

int av_next(struct av_file *p, struct av *v)
{
	static const char *const known[] = {
		"Count",
		"Adata",
		"Payload",
		"CT",
		"Result",
		"Key",
		"Nonce",
		"IV",
		"AAD",
		"AD",
		"Tag",
		"Plaintext",
		"Ciphertext",
		"IN",
		"PLAINTEXT",
		"CIPHERTEXT",
		"INITIAL_BLOCK_COUNTER",
	};
	struct rec r = { .n = 0 };
	char *line = NULL;
	size_t cap = 0;
	int in_rec = 0, st = 0;
	unsigned start = 0;

	memset(v, 0, sizeof(*v));
	v->alg = p->alg;
	v->file = p->name;
	for (;;) {
		ssize_t got = getline(&line, &cap, p->f);
		char *s = line, *eq, *name, *val;

		if (got >= 0)
			p->line++;
		while (got > 0 && isspace((unsigned char)line[got - 1]))
			line[--got] = '\0';
		if (got <= 0) { /* blank line or the end */
			if (in_rec)
				break;
			if (got < 0)
				goto out;
			continue;
		}
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '#')
			continue;
		if (*s == '[') {
			if (in_rec || s[strlen(s) - 1] != ']') {
				st = av_err(p, "bad section header");
				goto out;
			}
			if ((st = av_section(p, s)))
				goto out;
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			st = av_err(p, "a line without '='");
			goto out;
		}
		*eq = '\0';
		name = s;
		val = eq + 1;
		for (char *e = eq - 1; e >= name && isspace((unsigned char)*e);
		     e--)
			*e = '\0';
		while (isspace((unsigned char)*val))
			val++;
		if (!strcasecmp(name, "Count")) {
			if (in_rec) {
				st = av_err(p, "two records without a blank");
				goto out;
			}
			in_rec = 1;
			start = p->line;
			continue;
		}
		if (!in_rec) {
			if ((st = av_param(p, name, val)))
				goto out;
			continue;
		}
		unsigned i;
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcasecmp(name, known[i]))
				break;
		if (i == sizeof(known) / sizeof(known[0]) || r.n == F_MAX) {
			st = av_err(p, "unknown field in a record");
			goto out;
		}
		r.name[r.n] = strdup(name);
		r.val[r.n++] = strdup(val);
	}
	v->line = start;
	st = p->alg == CC_ALG_AES_CCM ? av_ccm(p, &r, v) : av_chacha(p, &r, v);
	if (!st)
		st = 1;
out:
	rec_clear(&r);
	free(line);
	return st;
}

/* ---- OpenSSL ---- */

static const EVP_CIPHER *av_evp(const struct av *v)
{
	switch (v->alg) {
	case CC_ALG_AES_CCM:
		return v->key_len == 16	  ? EVP_aes_128_ccm()
		       : v->key_len == 24 ? EVP_aes_192_ccm()
					  : EVP_aes_256_ccm();
	case CC_ALG_CHACHA20_POLY1305:
		return EVP_chacha20_poly1305();
	default:
		return EVP_chacha20();
	}
}

int av_ref_encrypt(const struct av *v, uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int ccm = v->alg == CC_ALG_AES_CCM, n = 0, ok;
	uint8_t none[1] = { 0 };

	ok = x && EVP_EncryptInit_ex(x, av_evp(v), NULL, NULL, NULL);
	if (ok && v->tag_len)
		ok = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN,
					 (int)v->iv_len, NULL) &&
		     (!ccm || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG,
						  (int)v->tag_len, NULL));
	ok = ok && EVP_EncryptInit_ex(x, NULL, NULL, v->key, v->iv) &&
	     (!ccm || EVP_EncryptUpdate(x, NULL, &n, NULL, (int)v->len)) &&
	     (!v->aad_len ||
	      EVP_EncryptUpdate(x, NULL, &n, v->aad, (int)v->aad_len)) &&
	     EVP_EncryptUpdate(x, v->len ? out : none, &n,
			       v->len ? v->pt : none, (int)v->len) &&
	     EVP_EncryptFinal_ex(x, none, &n) &&
	     (!v->tag_len || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG,
						 (int)v->tag_len, tag));
	EVP_CIPHER_CTX_free(x);
	return ok ? 0 : -EIO;
}
