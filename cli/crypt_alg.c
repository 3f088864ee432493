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

#include "crypt.h"

static const struct crypt_rules rules[] = {
	/* IVs of 1..128 bytes (12 is GCM's own, every engine takes it; the
	 * others are hashed into J0, SP 800-38D): the engine's row judges */
	{ .alg = CC_ALG_AES_GCM,
	  .key = CRYPT_KEY_AES,
	  .tag = CRYPT_TAG_GCM,
	  .iv_len = 1,
	  .iv_max = CLI_IV_MAX,
	  .aad = 1,
	  .stream = 1 },
	{ .alg = CC_ALG_AES_GMAC,
	  .key = CRYPT_KEY_AES,
	  .tag = CRYPT_TAG_GCM,
	  .iv_len = 1,
	  .iv_max = CLI_IV_MAX,
	  .mac_only = 1 },
	{ .alg = CC_ALG_AES_CBC,
	  .key = CRYPT_KEY_AES,
	  .len = CRYPT_LEN_BLOCKS,
	  .iv_len = CLI_BLOCK,
	  .stream = 1 },
	{ .alg = CC_ALG_AES_CTR,
	  .key = CRYPT_KEY_AES,
	  .iv_len = CLI_BLOCK,
	  .stream = 1 },
	{ .alg = CC_ALG_AES_ECB,
	  .key = CRYPT_KEY_AES,
	  .len = CRYPT_LEN_BLOCKS,
	  .stream = 1 },
	/* streams with --data-unit only: else the message is one unit */
	{ .alg = CC_ALG_AES_XTS,
	  .key = CRYPT_KEY_XTS,
	  .len = CRYPT_LEN_MIN_BLOCK,
	  .iv_len = CLI_BLOCK,
	  .stream = 1 },
/* authenc: a cipher and an HMAC key; the ICV is the row's */
#define AUTHENC_RULES(a, len_)                                                 \
	{                                                                      \
		.alg = (a), .key = CRYPT_KEY_AES, .tag = CRYPT_TAG_FIXED,      \
		.len = (len_), .iv_len = CLI_BLOCK, .aad = 1, .auth_key = 1    \
	}
	AUTHENC_RULES(CC_ALG_AES_CBC_HMAC_SHA1, CRYPT_LEN_BLOCKS),
	AUTHENC_RULES(CC_ALG_AES_CBC_HMAC_SHA256, CRYPT_LEN_BLOCKS),
	AUTHENC_RULES(CC_ALG_AES_CBC_HMAC_SHA384, CRYPT_LEN_BLOCKS),
	AUTHENC_RULES(CC_ALG_AES_CBC_HMAC_SHA512, CRYPT_LEN_BLOCKS),
	AUTHENC_RULES(CC_ALG_AES_CTR_HMAC_SHA1, CRYPT_LEN_ANY),
	AUTHENC_RULES(CC_ALG_AES_CTR_HMAC_SHA256, CRYPT_LEN_ANY),
#undef AUTHENC_RULES
	/* The spec says the AAD is ignored: refusing it keeps anyone from
	 * believing it is authenticated. */
	{ .alg = CC_ALG_AES_CBC_NULL,
	  .key = CRYPT_KEY_AES,
	  .len = CRYPT_LEN_BLOCKS,
	  .iv_len = CLI_BLOCK },
	/* Only the kernel engine has it: the daemon explains. */
	{ .alg = CC_ALG_AES_LRW, .key = CRYPT_KEY_ANY, .iv_len = CLI_BLOCK },
	/* key = AES key || 4-byte salt; the daemon judges key and tag */
	{ .alg = CC_ALG_AES_GCM_RFC4106,
	  .key = CRYPT_KEY_ANY,
	  .tag = CRYPT_TAG_GCM,
	  .iv_len = 8,
	  .aad = 1 },
	/* the nonce is the IV */
	{ .alg = CC_ALG_AES_CCM,
	  .key = CRYPT_KEY_AES,
	  .tag = CRYPT_TAG_CCM,
	  .iv_len = 7,
	  .iv_max = 13,
	  .aad = 1,
	  .stream = 1 },
	/* 32-byte keys: the daemon judges */
	{ .alg = CC_ALG_CHACHA20_POLY1305,
	  .key = CRYPT_KEY_ANY,
	  .tag = CRYPT_TAG_FIXED,
	  .iv_len = 12,
	  .aad = 1,
	  .stream = 1 },
	/* IV = 32-bit little-endian block counter || 12-byte nonce */
	{ .alg = CC_ALG_CHACHA20, .key = CRYPT_KEY_ANY, .iv_len = CLI_BLOCK },
	{ .alg = CC_ALG_NULL, .key = CRYPT_KEY_NONE, .any_iv = 1 },
/* digest and mac: a tag over the input, truncated to 4..max bytes */
#define MAC_RULES(a, key_, max, stream_)                                       \
	{                                                                      \
		.alg = (a), .key = (key_), .tag = CRYPT_TAG_MAC,               \
		.tag_max = (max), .stream = (stream_)                          \
	}
	MAC_RULES(CC_ALG_SHA1, CRYPT_KEY_NONE, 20, 1),
	MAC_RULES(CC_ALG_SHA224, CRYPT_KEY_NONE, 28, 1),
	MAC_RULES(CC_ALG_SHA256, CRYPT_KEY_NONE, 32, 1),
	MAC_RULES(CC_ALG_SHA384, CRYPT_KEY_NONE, 48, 1),
	MAC_RULES(CC_ALG_SHA512, CRYPT_KEY_NONE, 64, 1),
	/* HMAC keys of any length: the daemon judges (CRD_MAC_KEY_MAX) */
	MAC_RULES(CC_ALG_HMAC_SHA1, CRYPT_KEY_ANY, 20, 1),
	MAC_RULES(CC_ALG_HMAC_SHA224, CRYPT_KEY_ANY, 28, 1),
	MAC_RULES(CC_ALG_HMAC_SHA256, CRYPT_KEY_ANY, 32, 1),
	MAC_RULES(CC_ALG_HMAC_SHA384, CRYPT_KEY_ANY, 48, 1),
	MAC_RULES(CC_ALG_HMAC_SHA512, CRYPT_KEY_ANY, 64, 1),
	MAC_RULES(CC_ALG_AES_CMAC, CRYPT_KEY_AES, 16, 1),
	/* key 16: the daemon judges */
	MAC_RULES(CC_ALG_AES_XCBC_MAC, CRYPT_KEY_ANY, 16, 0),
#undef MAC_RULES
};

/* Base names: ours and the kernel's crypto API names, as
 * cc_alg_from_name() takes them (the table is <cryptod/algs.h>).
 * "aes-N-BASE" names the key size too (openssl enc style). */

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

static const struct crypt_rules *rules_of(enum cc_alg alg)
{
	size_t i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].alg == alg)
			return &rules[i];
	return NULL;
}

/* "aes-128-cbc" -> "aes-cbc" and 128; anything else: bits 0. */
static void split_size(const char *name, char *base, size_t len, unsigned *bits)
{
	*bits = 0;
	if (!strncasecmp(name, "aes-128-", 8))
		*bits = 128;
	else if (!strncasecmp(name, "aes-192-", 8))
		*bits = 192;
	else if (!strncasecmp(name, "aes-256-", 8))
		*bits = 256;
	if (*bits)
		snprintf(base, len, "aes-%s", name + 8);
	else
		snprintf(base, len, "%s", name);
}

int crypt_alg_parse(struct crypt_args *a, const char *name)
{
	char base[sizeof(a->alg_name)];
	unsigned bits;
	size_t j;

	if (strlen(name) >= sizeof(base))
		goto unknown;
	split_size(name, base, sizeof(base), &bits);
	int alg = cc_alg_from_name(base);
	a->r = alg > 0 ? rules_of((enum cc_alg)alg) : NULL;
	if (!a->r ||
	    (bits && a->r->key != CRYPT_KEY_AES && a->r->key != CRYPT_KEY_XTS))
		goto unknown;
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
	/* XTS-128 is two AES-128 keys; there is no XTS-192. */
	if (bits && a->r->key == CRYPT_KEY_XTS && bits == 192)
		goto unknown;
	a->key_need = bits / 8;
	if (a->r->key == CRYPT_KEY_XTS)
		a->key_need *= 2;
	for (j = 0; name[j]; j++)
		a->alg_name[j] = (char)tolower((unsigned char)name[j]);
	a->alg_name[j] = '\0';
	return 0;
unknown:
	a->r = NULL;
	char known[512] = "";
	size_t k = 0;
	for (unsigned n = 1; cc_alg_name((enum cc_alg)n); n++)
		if (rules_of((enum cc_alg)n) &&
		    cmd_of(rules_of((enum cc_alg)n)) == a->what &&
		    k < sizeof(known))
			k += (size_t)snprintf(known + k, sizeof(known) - k,
					      "%s%s", k ? ", " : "",
					      cc_alg_name((enum cc_alg)n));
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
	const char *n = a->alg_name;
	unsigned need = a->r->iv_len;

	if (a->r->any_iv)
		return 0;
	if (!need) {
		if (a->have_iv)
			return cli_usage_err(a->cmd, "%s takes no IV", n);
		return 0;
	}
	if (!a->have_iv)
		return cli_usage_err(a->cmd, "an IV is required (-i HEX)");
	if (a->r->iv_max && (a->iv_len < need || a->iv_len > a->r->iv_max))
		return cli_usage_err(a->cmd,
				     "%s needs a %u..%u-byte IV, got %u", n,
				     need, a->r->iv_max, a->iv_len);
	if (!a->r->iv_max && a->iv_len != need)
		return cli_usage_err(a->cmd, "%s needs a %u-byte IV, got %u", n,
				     need, a->iv_len);
	return 0;
}

static int gcm_tag_len_ok(unsigned n)
{
	return n == 4 || n == 8 || (n >= 12 && n <= 16);
}

static int check_tag(struct crypt_args *a)
{
	const char *n = a->alg_name;
	unsigned fixed = cc_alg_tag_len(a->r->alg);

	if (a->r->tag == CRYPT_TAG_NONE) {
		if (a->have_tag || a->tag_len_set || a->tag_out_set)
			return cli_usage_err(a->cmd, "%s has no tag", n);
		a->tag_len = 0;
		return 0;
	}
	if (!a->tag_len_set)
		a->tag_len = fixed;
	if (a->have_tag) {
		if (a->tag_len_set && a->tag_given != a->tag_len)
			return cli_usage_err(a->cmd,
					     "--tag has %u bytes but --tag-len "
					     "is %u",
					     a->tag_given, a->tag_len);
		a->tag_len = a->tag_given;
	}
	if (a->r->tag == CRYPT_TAG_GCM && !gcm_tag_len_ok(a->tag_len))
		return cli_usage_err(a->cmd,
				     "%s tags are 4, 8 or 12..16 bytes, got %u",
				     n, a->tag_len);
	if (a->r->tag == CRYPT_TAG_CCM &&
	    (a->tag_len < 4 || a->tag_len > 16 || a->tag_len % 2))
		return cli_usage_err(a->cmd,
				     "%s tags are 4..16 bytes, even, got %u", n,
				     a->tag_len);
	if (a->r->tag == CRYPT_TAG_FIXED && a->tag_len != fixed)
		return cli_usage_err(a->cmd, "%s tags are %u bytes, got %u", n,
				     fixed, a->tag_len);
	if (a->r->tag == CRYPT_TAG_MAC &&
	    (a->tag_len < 4 || a->tag_len > a->r->tag_max))
		return cli_usage_err(a->cmd, "%s: %s of 4..%u bytes, got %u", n,
				     a->what == CRYPT_CMD_DIGEST ? "digests"
								 : "MACs",
				     a->r->tag_max, a->tag_len);
	return 0;
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

	if (a->r->len == CRYPT_LEN_BLOCKS && len % CLI_BLOCK)
		return cli_usage_err(a->cmd,
				     "%s: %llu bytes of %s, not a multiple of "
				     "%d",
				     a->alg_name, n, what, CLI_BLOCK);
	if (a->r->len == CRYPT_LEN_MIN_BLOCK && len < CLI_BLOCK)
		return cli_usage_err(a->cmd,
				     "%s: %llu bytes of %s, less than %d",
				     a->alg_name, n, what, CLI_BLOCK);
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
	if (a->sessionless)
		return "with --sessionless is one operation";
	if (a->r->alg == CC_ALG_AES_XTS && !a->data_unit)
		return "without --data-unit is one data unit";
	return NULL;
}
