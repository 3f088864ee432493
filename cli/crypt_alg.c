/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl encrypt / decrypt / digest / mac: the algorithm names they
 * accept and what each algorithm takes (docs/algorithms.md), checked on
 * the command line so that a mistake costs one clear line instead of a
 * daemon error; and which of them stream (cryptoclient.h, "Streams").
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cryptod/ring_abi.h>

#include "crypt.h"

/*
 * What the command line can tell of alg from the algorithm table
 * (<cryptod/algs.h>): which key, whether an IV, AAD, a tag, an auth key,
 * whether it streams. The sizes each takes are the daemon's to say:
 * crypt_caps_check() asks cc_capabilities_get().
 */
static void rules_of(struct crypt_rules *r, enum cc_alg alg)
{
	unsigned f = crd_alg_flags(alg);
	enum crd_alg_kind k = crd_alg_kind(alg);
	const char *stem = crd_alg_ossl_stem(alg);

	memset(r, 0, sizeof(*r));
	r->alg = alg;
	/* AES keys of 16, 24 or 32 bytes, as "aes-128-..." names them:
	 * the row's EVP name has the key's size in it ("AES-*-GCM"). */
	int aes = !(f & CRD_AF_SALT) && stem && strchr(stem, '*');
	if (k == CRD_KIND_HASH || k == CRD_KIND_NONE)
		r->key = CRYPT_KEY_NONE;
	else if (f & CRD_AF_TWO_KEYS)
		r->key = CRYPT_KEY_XTS;
	else
		r->key = aes ? CRYPT_KEY_AES : CRYPT_KEY_ANY;
	r->any_iv = k == CRD_KIND_NONE; /* null: accepted and ignored */
	r->iv_len = f & CRD_AF_IV ? 1 : 0;
	r->iv_max = f & CRD_AF_IV ? CLI_IV_MAX : 0;
	r->aad = k == CRD_KIND_AEAD || k == CRD_KIND_AUTHENC;
	r->auth_key = k == CRD_KIND_AUTHENC;
	/* A MAC with an IV (GMAC, the 3GPP MACs): encrypt's, the tag its
	 * output. */
	r->mac_only = k == CRD_KIND_MAC && (f & CRD_AF_IV);
	r->stream = (f & CRD_AF_STREAM) && k != CRD_KIND_NONE;
	if (k == CRD_KIND_MAC || k == CRD_KIND_HASH) {
		r->tag = CRYPT_TAG_MAC;
		r->tag_max = cc_alg_tag_len(alg);
	} else if (k == CRD_KIND_AEAD || k == CRD_KIND_AUTHENC) {
		r->tag = CRYPT_TAG_CAPS;
	}
}

/* Names: cli_alg_lookup (alg_name.c), as every command takes them. */

/* The command an algorithm is for: GMAC, a MAC with an IV, is encrypt's
 * and decrypt's (as ever); the other MACs are mac's, digests digest's. */
static enum crypt_cmd cmd_of(const struct crypt_rules *r)
{
	if (r->mac_only)
		return CRYPT_CMD_CRYPT;
	switch (cc_alg_kind(r->alg)) {
	case CC_KIND_HASH:
		return CRYPT_CMD_DIGEST;
	case CC_KIND_MAC:
		return CRYPT_CMD_MAC;
	default:
		return CRYPT_CMD_CRYPT;
	}
}

static const char *const cmd_names[] = {
	[CRYPT_CMD_CRYPT] = "encrypt",
	[CRYPT_CMD_DIGEST] = "digest",
	[CRYPT_CMD_MAC] = "mac",
};

int crypt_alg_parse(struct crypt_args *a, const char *name)
{
	enum cc_alg alg;
	unsigned bits;
	size_t j;

	a->r = NULL;
	if (strlen(name) >= sizeof(a->alg_name) ||
	    cli_alg_lookup(name, &alg, &bits))
		goto unknown;
	rules_of(&a->rules, alg);
	a->r = &a->rules;
	if (cmd_of(a->r) != a->what) {
		enum crypt_cmd w = cmd_of(a->r);

		if (a->r->mac_only) {
			a->r = NULL;
			return cli_usage_err(a->cmd,
					     "%s takes an IV: use 'cryptoctl "
					     "encrypt -a %s'",
					     name, name);
		}
		a->r = NULL;
		return cli_usage_err(a->cmd, "%s is %s: use 'cryptoctl %s'",
				     name,
				     w == CRYPT_CMD_DIGEST ? "a digest"
				     : w == CRYPT_CMD_MAC  ? "a MAC"
							   : "a cipher",
				     cmd_names[w]);
	}
	a->key_need = bits / 8;
	for (j = 0; name[j]; j++)
		a->alg_name[j] = (char)tolower((unsigned char)name[j]);
	a->alg_name[j] = '\0';
	return 0;
unknown:
	a->r = NULL;
	char known[512] = "";
	size_t k = 0;
	for (unsigned n = 1; cc_alg_name((enum cc_alg)n); n++) {
		struct crypt_rules r;

		rules_of(&r, (enum cc_alg)n);
		if (cmd_of(&r) == a->what && k < sizeof(known))
			k += (size_t)snprintf(known + k, sizeof(known) - k,
					      "%s%s", k ? ", " : "",
					      cc_alg_name((enum cc_alg)n));
	}
	if (a->what != CRYPT_CMD_CRYPT)
		return cli_usage_err(a->cmd, "unknown algorithm '%s' (%s)",
				     name, known);
	return cli_usage_err(a->cmd,
			     "unknown algorithm '%s' (%s; sizes as in "
			     "aes-128-cbc; kernel names as in gcm(aes))",
			     name, known);
}

static int check_key(struct crypt_args *a)
{
	const char *n = a->alg_name;
	unsigned len = a->key_len, half = a->key_len / 2;

	switch (a->r->key) {
	case CRYPT_KEY_NONE:
		/* Silently ignoring a key would let someone believe the
		 * output is encrypted. */
		if (a->have_key)
			return cli_usage_err(a->cmd,
					     "%s copies data in the clear: it "
					     "takes no key",
					     n);
		return 0;
	case CRYPT_KEY_AES:
		if (a->key_need && len != a->key_need)
			return cli_usage_err(a->cmd,
					     "%s needs a %u-byte key, got %u",
					     n, a->key_need, len);
		if (len != 16 && len != 24 && len != 32)
			return cli_usage_err(a->cmd,
					     "AES keys are 16, 24 or 32 bytes, "
					     "got %u",
					     len);
		return 0;
	case CRYPT_KEY_XTS:
		if (a->key_need && len != a->key_need)
			return cli_usage_err(a->cmd,
					     "%s needs a %u-byte key (two "
					     "%u-byte halves), got %u",
					     n, a->key_need, a->key_need / 2,
					     len);
		if (len != 32 && len != 64)
			return cli_usage_err(a->cmd,
					     "AES-XTS keys are 32 or 64 bytes "
					     "(data key, then tweak key), got "
					     "%u",
					     len);
		/* IEEE 1619 wants independent halves; the daemon refuses
		 * equal ones too. */
		if (!memcmp(a->key, a->key + half, half))
			return cli_usage_err(a->cmd, "AES-XTS: the two key "
						     "halves must differ");
		return 0;
	case CRYPT_KEY_ANY:
		if (!len)
			return cli_usage_err(a->cmd, "the key is empty");
		return 0;
	}
	return 0;
}

static int check_keys(struct crypt_args *a)
{
	const char *n = a->alg_name;
	int ret;

	if (a->key_name) {
		/* The daemon holds the key and checks it against -a. */
		if (a->have_key || a->have_auth_key)
			return cli_usage_err(a->cmd, "--key-name or a key, "
						     "not both");
		if (a->sessionless)
			return cli_usage_err(a->cmd, "--key-name needs a "
						     "session: not with "
						     "--sessionless");
		if (a->r->key == CRYPT_KEY_NONE || a->r->auth_key)
			return cli_usage_err(a->cmd,
					     "%s takes no named key (one key "
					     "only, not none or two)",
					     n);
		return 0;
	}
	if (a->r->key != CRYPT_KEY_NONE && !a->have_key)
		return cli_usage_err(a->cmd, "a key is required (-k HEX or "
					     "--key-file FILE)");
	ret = check_key(a);
	if (ret)
		return ret;

	if (!a->r->auth_key) {
		if (a->have_auth_key)
			return cli_usage_err(a->cmd,
					     "%s takes no --auth-key (the "
					     "aes-cbc-hmac-* algorithms do)",
					     n);
		return 0;
	}
	if (!a->have_auth_key)
		return cli_usage_err(a->cmd,
				     "%s needs an HMAC key (--auth-key HEX or "
				     "--auth-key-file FILE)",
				     n);
	if (!a->auth_key_len)
		return cli_usage_err(a->cmd, "the HMAC key is empty");
	return 0;
}

static int check_iv(struct crypt_args *a)
{
	if (a->r->any_iv)
		return 0;
	if (!a->r->iv_len) {
		if (a->have_iv)
			return cli_usage_err(a->cmd, "%s takes no IV",
					     a->alg_name);
		return 0;
	}
	if (!a->have_iv)
		return cli_usage_err(a->cmd, "an IV is required (-i HEX)");
	return 0; /* its length: crypt_caps_check() */
}

static int check_tag(struct crypt_args *a)
{
	const char *n = a->alg_name;
	const char *what = a->what == CRYPT_CMD_DIGEST ? "digest" : "MAC";

	if (a->r->tag == CRYPT_TAG_NONE) {
		if (a->have_tag || a->tag_len_set || a->tag_out_set)
			return cli_usage_err(a->cmd, "%s has no tag", n);
		a->tag_len = 0;
		return 0;
	}
	if (!a->tag_len_set)
		a->tag_len = cc_alg_tag_len(a->r->alg);
	/* digest, mac --verify: the whole value, as sha256sum -c and
	 * openssl dgst compare, unless --truncate says how much of it. A
	 * cut .sha256 file must not pass. (decrypt -t keeps its rule: the
	 * tag given is the session's tag length, as for an AEAD.) */
	if (a->have_tag && a->r->tag == CRYPT_TAG_MAC &&
	    a->what != CRYPT_CMD_CRYPT && a->tag_given != a->tag_len) {
		if (a->tag_len_set)
			return cli_usage_err(a->cmd,
					     "--verify has %u bytes but "
					     "--truncate is %u",
					     a->tag_given, a->tag_len);
		if (a->tag_given < CLI_TAG_MIN || a->tag_given > a->tag_len)
			return cli_usage_err(a->cmd,
					     "--verify: %u bytes, but a %s %s "
					     "has %u (%u hex digits)",
					     a->tag_given, n, what, a->tag_len,
					     2 * a->tag_len);
		return cli_usage_err(a->cmd,
				     "--verify: %u bytes, but a %s %s has %u "
				     "(%u hex digits); for its first %u "
				     "bytes add --truncate %u",
				     a->tag_given, n, what, a->tag_len,
				     2 * a->tag_len, a->tag_given,
				     a->tag_given);
	}
	if (a->have_tag) {
		if (a->tag_len_set && a->tag_given != a->tag_len)
			return cli_usage_err(a->cmd,
					     "--tag has %u bytes but --tag-len "
					     "is %u",
					     a->tag_given, a->tag_len);
		a->tag_len = a->tag_given;
	}
	if (a->r->tag == CRYPT_TAG_MAC &&
	    (a->tag_len < CLI_TAG_MIN || a->tag_len > a->r->tag_max))
		return cli_usage_err(
			a->cmd, "%s: %s of %u..%u bytes, got %u", n,
			a->what == CRYPT_CMD_DIGEST ? "digests" : "MACs",
			CLI_TAG_MIN, a->r->tag_max, a->tag_len);
	return 0; /* an AEAD's or authenc's: crypt_caps_check() */
}

/* --in, --out, --data-unit, --release-unverified */
static int check_io(struct crypt_args *a)
{
	const char *n = a->alg_name;

	/* "-": stdin, stdout, as if not given */
	if (a->in_path && !strcmp(a->in_path, "-"))
		a->in_path = NULL;
	if (a->out_path && !strcmp(a->out_path, "-"))
		a->out_path = NULL;
	if (a->data_unit && a->r->alg != CC_ALG_AES_XTS)
		return cli_usage_err(a->cmd, "--data-unit is for aes-xts");
	/* One operation is one data unit: it cannot honour N. */
	if (a->data_unit && a->sessionless)
		return cli_usage_err(a->cmd, "--data-unit needs a stream, and "
					     "streams a session: no "
					     "--sessionless");
	if (a->data_unit &&
	    (a->data_unit < CLI_BLOCK || a->data_unit > CLI_XTS_UNIT_MAX))
		return cli_usage_err(a->cmd,
				     "--data-unit: %u..%u bytes, got %u",
				     CLI_BLOCK, CLI_XTS_UNIT_MAX, a->data_unit);
	if (a->release_unverified && (!a->tag_len || a->r->mac_only))
		return cli_usage_err(a->cmd,
				     "--release-unverified: %s has no "
				     "plaintext to hold back",
				     n);
	if (a->out_path && !crypt_writes(a) && a->dir == CC_DECRYPT)
		return cli_usage_err(a->cmd,
				     "--out: %s writes nothing here, the exit "
				     "status says whether the tag verified",
				     a->what == CRYPT_CMD_CRYPT ? n
								: "--verify");
	return 0;
}

int crypt_args_check(struct crypt_args *a)
{
	int ret;

	ret = check_keys(a);
	if (!ret)
		ret = check_iv(a);
	if (ret)
		return ret;
	if (!a->r->aad && a->aad_len)
		return cli_usage_err(a->cmd,
				     a->r->mac_only
					     ? "%s authenticates stdin itself: "
					       "it takes no --aad"
					     : "%s authenticates nothing: it "
					       "takes no --aad",
				     a->alg_name);
	if (a->sessionless && crd_alg_bit_len(a->r->alg))
		return cli_usage_err(a->cmd,
				     "%s with --sessionless: not "
				     "supported (its length counts "
				     "bits)",
				     a->alg_name);
	if (a->sessionless && a->engine)
		return cli_usage_err(a->cmd,
				     "--engine needs a session: the daemon "
				     "picks the engine of --sessionless ops");
	ret = check_tag(a);
	return ret ? ret : check_io(a);
}

int crypt_len_check(const struct crypt_args *a, uint64_t len)
{
	const char *what = a->dir == CC_ENCRYPT ? "plaintext" : "ciphertext";
	const unsigned long long n = (unsigned long long)len;
	const uint64_t last = a->data_unit ? len % a->data_unit : 0;

	const struct crypt_caps *c = &a->caps;
	/* The 3GPP algorithms count bits: whole bytes here. */
	const uint64_t units = crd_alg_bit_len(a->r->alg) ? len * 8 : len;
	const char *unit = crd_alg_bit_len(a->r->alg) ? " bits" : "";

	if (c->known && c->block > 1 && len % c->block)
		return cli_usage_err(a->cmd,
				     "%s: %llu bytes of %s, not a multiple of "
				     "%u",
				     a->alg_name, n, what, c->block);
	if (c->known && units < c->min_len)
		return cli_usage_err(a->cmd,
				     "%s: %llu bytes of %s, less than %u%s",
				     a->alg_name, n, what, c->min_len, unit);
	/* A longer message than one op takes is a stream's, if any. */
	if (c->known && crd_alg_bit_len(a->r->alg) && units > c->max_len)
		return cli_usage_err(a->cmd,
				     "%s: %llu bytes of %s, more than %u bits",
				     a->alg_name, n, what, c->max_len);
	/* CCM's counter field is 15 - nonce bytes long: it bounds the
	 * length (RFC 3610), 64 KiB with a 13-byte nonce. */
	const unsigned l = 15 - a->iv_len;
	if (a->r->alg == CC_ALG_AES_CCM && l < 8 && len >> (8 * l))
		return cli_usage_err(
			a->cmd,
			"%s: %llu bytes of %s, more than a %u-byte "
			"nonce allows (%llu)",
			a->alg_name, n, what, a->iv_len, (1ull << (8 * l)) - 1);
	/* The library's CCM streams count 32 bits (cc_stream_open). */
	if (a->r->alg == CC_ALG_AES_CCM && len > UINT32_MAX)
		return cli_usage_err(a->cmd,
				     "%s: %llu bytes of %s, more than a stream "
				     "takes (4 GiB - 1)",
				     a->alg_name, n, what);
	/* Their counters: SP 800-38D (2^39 - 256 bits), RFC 8439. */
	const uint64_t most = a->r->alg == CC_ALG_AES_GCM ? (1ull << 36) - 32
			      : a->r->alg == CC_ALG_CHACHA20_POLY1305
				      ? (1ull << 38) - 64
				      : UINT64_MAX;
	if (len > most)
		return cli_usage_err(a->cmd,
				     "%s: %llu bytes of %s, more than one "
				     "message may have (%llu)",
				     a->alg_name, n, what,
				     (unsigned long long)most);
	/* Ciphertext stealing needs a block in the last data unit too. */
	if (last && last < CLI_BLOCK)
		return cli_usage_err(a->cmd,
				     "%s: %llu bytes of %s leave %u in the "
				     "last %u-byte data unit, less than %d",
				     a->alg_name, n, what, (unsigned)last,
				     a->data_unit, CLI_BLOCK);
	return 0;
}

const char *crypt_why_oneshot(const struct crypt_args *a)
{
	if (!a->r->stream)
		return "does not stream";
	if (a->caps.known && !a->caps.stream)
		return "does not stream on this engine";
	if (a->sessionless)
		return "with --sessionless is one operation";
	if (a->r->alg == CC_ALG_AES_XTS && !a->data_unit)
		return "without --data-unit is one data unit";
	return NULL;
}

/* Does v fall in one of n ranges ({min, max, increment}; increment 0:
 * min only)? */
static int in_ranges(const struct cc_range *r, unsigned n, unsigned v)
{
	for (unsigned i = 0; i < n; i++) {
		if (v < r[i].min || v > r[i].max)
			continue;
		if (r[i].increment ? (v - r[i].min) % r[i].increment == 0
				   : v == r[i].min)
			return 1;
	}
	return 0;
}

/* "16, 24, 32" or "1..128": the sizes of n ranges, for a message. */
static const char *ranges_text(const struct cc_range *r, unsigned n, char *buf,
			       size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < n && k < len; i++) {
		const char *sep = k ? ", " : "";

		if (r[i].min == r[i].max || !r[i].increment)
			k += (size_t)snprintf(buf + k, len - k, "%s%u", sep,
					      r[i].min);
		else if (r[i].increment == 1)
			k += (size_t)snprintf(buf + k, len - k, "%s%u..%u", sep,
					      r[i].min, r[i].max);
		else
			for (unsigned v = r[i].min; v <= r[i].max && k < len;
			     v += r[i].increment, sep = ", ")
				k += (size_t)snprintf(buf + k, len - k, "%s%u",
						      sep, v);
	}
	return buf;
}

/* Which sizes of a row a check reads. */
enum caps_what { CAPS_KEY, CAPS_AUTH_KEY, CAPS_IV, CAPS_TAG };

static const struct cc_range *caps_ranges(const struct cc_alg_caps *c,
					  enum caps_what w, unsigned *n)
{
	switch (w) {
	case CAPS_KEY:
		*n = c->n_key_sizes;
		return c->key_sizes;
	case CAPS_AUTH_KEY:
		*n = c->n_auth_key_sizes;
		return c->auth_key_sizes;
	case CAPS_IV:
		*n = c->n_iv_sizes;
		return c->iv_sizes;
	case CAPS_TAG:
		*n = c->n_tag_sizes;
		return c->tag_sizes;
	}
	*n = 0;
	return NULL;
}

/* Does some row of rows[0..n) take v as w? A size any engine the daemon
 * may pick takes is left to the daemon. */
static int caps_take(const struct cc_alg_caps *const *rows, unsigned n,
		     enum caps_what w, unsigned v)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned nr;
		const struct cc_range *r = caps_ranges(rows[i], w, &nr);

		if (in_ranges(r, nr, v))
			return 1;
	}
	return 0;
}

static int caps_refuse(struct crypt_args *a, const struct cc_alg_caps *c,
		       enum caps_what w, const char *what, unsigned got)
{
	static const char *const names[] = {
		[CAPS_KEY] = "key",
		[CAPS_AUTH_KEY] = "HMAC key",
		[CAPS_IV] = "IV",
		[CAPS_TAG] = "tag",
	};
	char sizes[200];
	unsigned nr;
	const struct cc_range *r = caps_ranges(c, w, &nr);

	return cli_usage_err(
		a->cmd, "%s takes %ss of %s bytes%s%s, got %u%s%s", a->alg_name,
		names[w], ranges_text(r, nr, sizes, sizeof(sizes)),
		a->engine ? " on " : "", a->engine ? a->engine : "", got,
		what ? " " : "", what ? what : "");
}

enum { CAPS_ROWS_MAX = 8 };

int crypt_caps_check(struct cli *cli, struct crypt_args *a)
{
	const struct cc_alg_caps *rows[CAPS_ROWS_MAX], *first = NULL;
	struct cc_alg_caps *caps = NULL;
	struct cc_conn *conn = NULL;
	unsigned n = 0, nrows = 0;
	int ret = 0;

	memset(&a->caps, 0, sizeof(a->caps));
	if (cli_connect_quiet(cli, &conn) < 0)
		return 0; /* crypt_run() connects again and says why */
	if (cc_capabilities_get(conn, &caps, &n) < 0)
		goto out;
	/* --engine's row, or every available row: the daemon may pick any
	 * (routing, session-less ops), so a size one of them takes passes. */
	for (unsigned i = 0; i < n && nrows < CAPS_ROWS_MAX; i++) {
		const struct cc_alg_caps *c = &caps[i];

		if (c->alg != a->r->alg || !c->available)
			continue;
		if (a->engine && strcmp(a->engine, c->engine))
			continue;
		if (!first || c->default_engine)
			first = c;
		rows[nrows++] = c;
	}
	if (!nrows) /* no such engine, or unavailable: the daemon says why */
		goto out;
	if (a->have_key && a->r->key != CRYPT_KEY_NONE &&
	    !caps_take(rows, nrows, CAPS_KEY, a->key_len))
		ret = caps_refuse(a, first, CAPS_KEY, NULL, a->key_len);
	else if (a->have_auth_key && a->r->auth_key &&
		 !caps_take(rows, nrows, CAPS_AUTH_KEY, a->auth_key_len))
		ret = caps_refuse(a, first, CAPS_AUTH_KEY, NULL,
				  a->auth_key_len);
	else if (a->r->iv_len && !a->r->any_iv &&
		 !caps_take(rows, nrows, CAPS_IV, a->iv_len))
		ret = caps_refuse(a, first, CAPS_IV, NULL, a->iv_len);
	else if (a->r->tag != CRYPT_TAG_NONE &&
		 !caps_take(rows, nrows, CAPS_TAG, a->tag_len))
		ret = caps_refuse(a, first, CAPS_TAG, NULL, a->tag_len);
	if (ret)
		goto out;
	a->caps.known = 1;
	a->caps.block = first->block_size ? first->block_size : 1;
	a->caps.min_len = first->min_len;
	a->caps.max_len = first->max_len;
	for (unsigned i = 0; i < nrows; i++) {
		a->caps.stream |= rows[i]->stream;
		/* the loosest of the rows: the daemon judges the rest */
		if (rows[i]->min_len < a->caps.min_len)
			a->caps.min_len = rows[i]->min_len;
		if (rows[i]->max_len > a->caps.max_len)
			a->caps.max_len = rows[i]->max_len;
		if (rows[i]->block_size < a->caps.block)
			a->caps.block =
				rows[i]->block_size ? rows[i]->block_size : 1;
	}
out:
	cc_capabilities_free(caps);
	cc_disconnect(conn);
	return ret;
}
