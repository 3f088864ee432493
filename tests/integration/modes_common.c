// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the every-algorithm integration tests; see
 * modes_common.h.
 */
#include "modes_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cryptod/ring_abi.h>

#define TAGS_GCM                                                               \
	(1u << 4 | 1u << 8 | 1u << 12 | 1u << 13 | 1u << 14 | 1u << 15 |       \
	 1u << 16)
#define MC_OP_MAX_LEN (16u << 20)

/* An authenc row: AES keys, an HMAC key, IV 16, one ICV, any AAD; block
 * 16 (CBC) or 1 (CTR); then the engines. */
#define MC_SPEC_AUTHENC(id, name_, tag_, block_, ...)                          \
	{                                                                      \
		.alg = CC_ALG_##id, .name = (name_),                           \
		.key_lens = { 16, 24, 32 }, .n_key_lens = 3, .auth_key = 1,    \
		.iv_len = 16, .tag_def = (tag_), .tag_mask = 1ull << (tag_),   \
		.aad = MC_AAD_ANY, .block = (block_), .writes_data = 1,        \
		.engines = { __VA_ARGS__ },                                    \
	}

/* docs/algorithms.md, row by row. */
const struct mc_spec mc_specs[] = {
	{
		.alg = CC_ALG_AES_GCM,
		.name = "aes-gcm",
		.key_lens = { 16, 24, 32 },
		.n_key_lens = 3,
		.iv_len = 12,
		.tag_def = 16,
		.tag_mask = TAGS_GCM,
		.aad = MC_AAD_ANY,
		.block = 1,
		.writes_data = 1,
		.engines = { "aesni", "openssl" },
	},
	{
		.alg = CC_ALG_AES_GMAC,
		.name = "aes-gmac",
		.key_lens = { 16, 24, 32 },
		.n_key_lens = 3,
		.iv_len = 12,
		.tag_def = 16,
		.tag_mask = TAGS_GCM,
		.aad = MC_AAD_ZERO,
		.block = 1,
		.writes_data = 0,
		.engines = { "aesni", "openssl" },
	},
	{
		.alg = CC_ALG_AES_CBC,
		.name = "aes-cbc",
		.key_lens = { 16, 24, 32 },
		.n_key_lens = 3,
		.iv_len = 16,
		.aad = MC_AAD_ZERO,
		.block = 16,
		.writes_data = 1,
		.engines = { "aesni", "openssl" },
	},
	{
		.alg = CC_ALG_AES_CTR,
		.name = "aes-ctr",
		.key_lens = { 16, 24, 32 },
		.n_key_lens = 3,
		.iv_len = 16,
		.aad = MC_AAD_ZERO,
		.block = 1,
		.writes_data = 1,
		.engines = { "aesni", "openssl" },
	},
	{
		.alg = CC_ALG_AES_ECB,
		.name = "aes-ecb",
		.key_lens = { 16, 24, 32 },
		.n_key_lens = 3,
		.iv_len = 0,
		.aad = MC_AAD_ZERO,
		.block = 16,
		.writes_data = 1,
		.engines = { "aesni", "openssl" },
	},
	{
		.alg = CC_ALG_AES_XTS,
		.name = "aes-xts",
		.key_lens = { 32, 64 },
		.n_key_lens = 2,
		.iv_len = 16,
		.aad = MC_AAD_ZERO,
		.block = 1,
		.min_len = 16,
		.writes_data = 1,
		.xts_key = 1,
		.engines = { "openssl" },
	},
	MC_SPEC_AUTHENC(AES_CBC_HMAC_SHA1, "aes-cbc-hmac-sha1", 12, 16, "aesni",
			"openssl"),
	MC_SPEC_AUTHENC(AES_CBC_HMAC_SHA256, "aes-cbc-hmac-sha256", 16, 16,
			"aesni", "openssl"),
	MC_SPEC_AUTHENC(AES_CBC_HMAC_SHA384, "aes-cbc-hmac-sha384", 24, 16,
			"aesni", "openssl"),
	MC_SPEC_AUTHENC(AES_CBC_HMAC_SHA512, "aes-cbc-hmac-sha512", 32, 16,
			"aesni", "openssl"),
	MC_SPEC_AUTHENC(AES_CTR_HMAC_SHA1, "aes-ctr-hmac-sha1", 12, 1, "aesni",
			"openssl"),
	MC_SPEC_AUTHENC(AES_CTR_HMAC_SHA256, "aes-ctr-hmac-sha256", 16, 1,
			"aesni", "openssl"),
	{
		.alg = CC_ALG_AES_CBC_NULL,
		.name = "aes-cbc-null",
		.key_lens = { 16, 24, 32 },
		.n_key_lens = 3,
		.iv_len = 16,
		.aad = MC_AAD_IGNORED,
		.block = 16,
		.writes_data = 1,
		.engines = { "aesni", "openssl" },
	},
	{
		.alg = CC_ALG_NULL,
		.name = "null",
		.iv_ignored = 1,
		.aad = MC_AAD_IGNORED,
		.block = 1,
		.writes_data = 1,
		.engines = { "null" },
	},
};
const unsigned mc_n_specs = sizeof(mc_specs) / sizeof(mc_specs[0]);

const struct mc_spec *mc_spec_of(enum cc_alg alg)
{
	unsigned i;

	for (i = 0; i < mc_n_specs; i++)
		if (mc_specs[i].alg == alg)
			return &mc_specs[i];
	for (i = 0; i < mc_n_mac_specs; i++)
		if (mc_mac_specs[i].alg == alg)
			return &mc_mac_specs[i];
	return NULL;
}

int mc_iv_ok(const struct mc_spec *s, const char *engine, unsigned iv_len)
{
	if (s->iv_ignored)
		return iv_len <= MC_IV_MAX;
	/* "12 (aesni, openssl: 1-128)" */
	if ((s->alg == CC_ALG_AES_GCM || s->alg == CC_ALG_AES_GMAC) && engine &&
	    (!strcmp(engine, "openssl") || !strcmp(engine, "aesni")))
		return iv_len >= 1 && iv_len <= MC_IV_MAX;
	return iv_len == s->iv_len;
}

int mc_tag_ok(const struct mc_spec *s, unsigned tag_len)
{
	return tag_len < 64 && (s->tag_mask >> tag_len & 1);
}

int mc_len_ok(const struct mc_spec *s, uint32_t len)
{
	return len <= MC_OP_MAX_LEN && len % s->block == 0 && len >= s->min_len;
}

unsigned mc_tag_len(const struct mc_key *k)
{
	const struct mc_spec *s = mc_spec_of(k->alg);

	if (!s || !s->tag_def)
		return 0;
	return k->tag_len ? k->tag_len : s->tag_def;
}

/* ---- OpenSSL reference ---- */

static const EVP_CIPHER *mc_evp(enum cc_alg alg, unsigned key_len)
{
	int i = key_len == 16 ? 0 : key_len == 24 ? 1 : key_len == 32 ? 2 : -1;

	switch (alg) {
	case CC_ALG_AES_GCM:
	case CC_ALG_AES_GMAC:
		return i == 0	? EVP_aes_128_gcm()
		       : i == 1 ? EVP_aes_192_gcm()
		       : i == 2 ? EVP_aes_256_gcm()
				: NULL;
	case CC_ALG_AES_CBC:
	case CC_ALG_AES_CBC_NULL:
	case CC_ALG_AES_CBC_HMAC_SHA1:
	case CC_ALG_AES_CBC_HMAC_SHA256:
	case CC_ALG_AES_CBC_HMAC_SHA384:
	case CC_ALG_AES_CBC_HMAC_SHA512:
		return i == 0	? EVP_aes_128_cbc()
		       : i == 1 ? EVP_aes_192_cbc()
		       : i == 2 ? EVP_aes_256_cbc()
				: NULL;
	case CC_ALG_AES_CTR:
	case CC_ALG_AES_CTR_HMAC_SHA1:
	case CC_ALG_AES_CTR_HMAC_SHA256:
		return i == 0	? EVP_aes_128_ctr()
		       : i == 1 ? EVP_aes_192_ctr()
		       : i == 2 ? EVP_aes_256_ctr()
				: NULL;
	case CC_ALG_AES_ECB:
		return i == 0	? EVP_aes_128_ecb()
		       : i == 1 ? EVP_aes_192_ecb()
		       : i == 2 ? EVP_aes_256_ecb()
				: NULL;
	case CC_ALG_AES_XTS:
		return key_len == 32   ? EVP_aes_128_xts()
		       : key_len == 64 ? EVP_aes_256_xts()
				       : NULL;
	default:
		return NULL;
	}
}

static int mc_ref_gcm(const struct mc_key *k, const uint8_t *iv,
		      unsigned iv_len, const uint8_t *aad, unsigned aad_len,
		      const uint8_t *in, uint32_t len, uint8_t *out,
		      uint8_t *tag)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	uint8_t fin[16];
	int outl, ok;

	ok = x &&
	     EVP_EncryptInit_ex(x, mc_evp(k->alg, k->key_len), NULL, NULL,
				NULL) &&
	     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IVLEN, (int)iv_len,
				 NULL) &&
	     EVP_EncryptInit_ex(x, NULL, NULL, k->key, iv) &&
	     (!aad_len ||
	      EVP_EncryptUpdate(x, NULL, &outl, aad, (int)aad_len)) &&
	     (!len || EVP_EncryptUpdate(x, out, &outl, in, (int)len)) &&
	     EVP_EncryptFinal_ex(x, fin, &outl) &&
	     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(x);
	return ok ? 0 : -EIO;
}

/* A cipher without a tag, in one update (XTS cannot be streamed). */
static int mc_ref_plain(const struct mc_key *k, const uint8_t *iv,
			const uint8_t *in, uint32_t len, uint8_t *out)
{
	const EVP_CIPHER *c = mc_evp(k->alg, k->key_len);
	EVP_CIPHER_CTX *x;
	int outl = 0, finl = 0, ok;

	if (!c)
		return -EIO;
	if (!len)
		return 0;
	x = EVP_CIPHER_CTX_new();
	ok = x && EVP_EncryptInit_ex(x, c, NULL, k->key, iv) &&
	     EVP_CIPHER_CTX_set_padding(x, 0) &&
	     EVP_EncryptUpdate(x, out, &outl, in, (int)len) &&
	     EVP_EncryptFinal_ex(x, out + outl, &finl) &&
	     (uint32_t)(outl + finl) == len;
	EVP_CIPHER_CTX_free(x);
	return ok ? 0 : -EIO;
}

const char *mc_hmac_digest(enum cc_alg alg)
{
	static const char *const names[CRD_SHA_N] = { "SHA1", "SHA224",
						      "SHA256", "SHA384",
						      "SHA512" };
	int i = crd_alg_sha_idx(alg);
	return i < 0 ? NULL : names[i];
}

int mc_hmac2(const char *digest, const uint8_t *key, unsigned key_len,
	     const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len,
	     uint8_t *md)
{
	char name[8];
	OSSL_PARAM params[2];
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *x = mac ? EVP_MAC_CTX_new(mac) : NULL;
	size_t outl = 0;
	int ok;

	snprintf(name, sizeof(name), "%s", digest ? digest : "");
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						     name, 0);
	params[1] = OSSL_PARAM_construct_end();
	ok = digest && x && EVP_MAC_init(x, key, key_len, params) &&
	     (!a_len || EVP_MAC_update(x, a, a_len)) &&
	     (!b_len || EVP_MAC_update(x, b, b_len)) &&
	     EVP_MAC_final(x, md, &outl, EVP_MAX_MD_SIZE);
	EVP_MAC_CTX_free(x);
	EVP_MAC_free(mac);
	return ok ? (int)outl : -EIO;
}

int mc_ref_encrypt(const struct mc_key *k, const uint8_t *iv, unsigned iv_len,
		   const uint8_t *aad, unsigned aad_len, const uint8_t *in,
		   uint32_t len, uint8_t *out, uint8_t *tag)
{
	int r;

	switch (k->alg) {
	case CC_ALG_AES_GCM:
		return mc_ref_gcm(k, iv, iv_len, aad, aad_len, in, len, out,
				  tag);
	case CC_ALG_AES_GMAC:
		/* The data is the AAD of a GCM with no plaintext. */
		return mc_ref_gcm(k, iv, iv_len, in, len, NULL, 0, NULL, tag);
	case CC_ALG_AES_CBC:
	case CC_ALG_AES_CBC_NULL:
	case CC_ALG_AES_CTR:
	case CC_ALG_AES_ECB:
	case CC_ALG_AES_XTS:
		return mc_ref_plain(k, iv, in, len, out);
	case CC_ALG_AES_CBC_HMAC_SHA1:
	case CC_ALG_AES_CBC_HMAC_SHA256:
	case CC_ALG_AES_CBC_HMAC_SHA384:
	case CC_ALG_AES_CBC_HMAC_SHA512:
	case CC_ALG_AES_CTR_HMAC_SHA1:
	case CC_ALG_AES_CTR_HMAC_SHA256:
		/* Encrypt, then MAC AAD || ciphertext. */
		r = mc_ref_plain(k, iv, in, len, out);
		if (r)
			return r;
		r = mc_hmac2(mc_hmac_digest(k->alg), k->auth_key,
			     k->auth_key_len, aad, aad_len, out, len, tag);
		return r < 0 ? r : 0;
	case CC_ALG_NULL:
		if (len)
			memmove(out, in, len);
		return 0;
	default:
		return mc_spec_of(k->alg) && mc_spec_of(k->alg)->tag_hi
			       ? mc_ref_mac(k, in, len, tag)
			       : -EIO;
	}
}

/* ---- Engines and sessions ---- */

int mc_engines_for(struct cc_conn *conn, enum cc_alg alg,
		   char names[][FX_ENGINE_NAME_MAX], unsigned max)
{
	struct cc_alg_caps *caps;
	unsigned n = 0, i, pass;
	int r;

	r = cc_capabilities_get(conn, &caps, &n);
	if (r) {
		fprintf(stderr, "cc_capabilities_get: %s\n", cc_strerror(r));
		return r;
	}
	r = 0;
	/* Two passes: the default engine first, then the others. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n && (unsigned)r < max; i++) {
			int want_default = pass == 0;

			if (caps[i].alg != alg || !caps[i].available ||
			    !!caps[i].default_engine != want_default ||
			    !fx_engine_wanted(caps[i].engine))
				continue;
			snprintf(names[r++], FX_ENGINE_NAME_MAX, "%s",
				 caps[i].engine);
		}
	}
	for (i = 0; i < n; i++)
		if (caps[i].alg == alg && !caps[i].available)
			printf("  %s on %s: unavailable (%s), not tested\n",
			       caps[i].alg_name, caps[i].engine,
			       caps[i].reason);
	cc_capabilities_free(caps);
	return r;
}

int mc_session(struct cc_conn *conn, const struct mc_key *k, const char *engine,
	       uint32_t *sid)
{
	struct cc_session_params sp = {
		.alg = k->alg,
		.key = k->key_len ? k->key : NULL,
		.key_len = k->key_len,
		.auth_key = k->auth_key_len ? k->auth_key : NULL,
		.auth_key_len = k->auth_key_len,
		.tag_len = k->tag_len,
		.engine = engine,
	};

	return cc_session_create(conn, &sp, sid);
}

void mc_sessionless_fill(struct cc_sessionless *sl, const struct mc_key *k)
{
	memset(sl, 0, sizeof(*sl));
	sl->alg = (uint8_t)k->alg;
	sl->key_len = (uint8_t)k->key_len;
	sl->auth_key_len = (uint8_t)k->auth_key_len;
	sl->tag_len = (uint8_t)k->tag_len;
	memcpy(sl->key, k->key, k->key_len);
	memcpy(sl->auth_key, k->auth_key, k->auth_key_len);
}

/* ---- Arena layouts ---- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int mc_layout_alloc_lens(struct cc_queue *q, struct mc_layout *l,
			 const uint32_t *lens, unsigned nseg)
{
	uint32_t gap[MC_SEG_MAX];
	size_t pos = 0;
	unsigned i;

	memset(l, 0, sizeof(*l));
	if (!nseg || nseg > MC_SEG_MAX)
		return -EINVAL;
	for (i = 0; i < nseg; i++) {
		l->seg_len[i] = lens[i];
		l->len += lens[i];
		/* Adjacent segments half of the time: legal, and the case
		 * where an off-by-one overwrites a neighbour. */
		gap[i] = mc_below(2) ? 0 : 1 + mc_below(63);
		l->base_len += lens[i] + gap[i];
	}
	l->base_len += MC_GUARD;
	l->nseg = nseg;
	l->base = cc_buf_alloc(q, l->base_len);
	l->sgl = cc_buf_alloc(q, nseg * sizeof(*l->sgl));
	if (!l->base || !l->sgl) {
		mc_layout_free(q, l);
		return -ENOMEM;
	}
	memset(l->base, MC_CANARY, l->base_len);
	for (i = 0; i < nseg; i++) {
		l->seg[i] = l->base + pos;
		if (cc_sgl_set(q, l->sgl, i, l->seg[i], l->seg_len[i])) {
			mc_layout_free(q, l);
			return -EFAULT;
		}
		pos += l->seg_len[i] + gap[i];
	}
	return 0;
}

int mc_layout_alloc(struct cc_queue *q, struct mc_layout *l, uint32_t len,
		    unsigned nseg, int zero_segs)
{
	uint32_t cut[MC_SEG_MAX], lens[MC_SEG_MAX], room;
	unsigned i;

	memset(l, 0, sizeof(*l));
	if (!nseg) {
		l->len = len;
		l->base_len = (size_t)len + MC_GUARD;
		l->base = cc_buf_alloc(q, l->base_len);
		if (!l->base)
			return -ENOMEM;
		memset(l->base, MC_CANARY, l->base_len);
		return 0;
	}
	if (nseg > MC_SEG_MAX || (!zero_segs && nseg > len))
		return -EINVAL;

	/* Stars and bars: nseg - 1 sorted cuts in [0, room]; each segment
	 * is the distance between cuts, plus one unless empty ones are
	 * wanted. */
	room = zero_segs ? len : len - nseg;
	for (i = 0; i + 1 < nseg; i++)
		cut[i] = mc_below(room + 1);
	qsort(cut, nseg - 1, sizeof(cut[0]), cmp_u32);
	for (i = 0; i < nseg; i++) {
		uint32_t lo = i ? cut[i - 1] : 0;
		uint32_t hi = i + 1 < nseg ? cut[i] : room;

		lens[i] = hi - lo + (zero_segs ? 0 : 1);
	}
	return mc_layout_alloc_lens(q, l, lens, nseg);
}

void mc_layout_free(struct cc_queue *q, struct mc_layout *l)
{
	if (l->base)
		cc_buf_free(q, l->base);
	if (l->sgl)
		cc_buf_free(q, l->sgl);
	l->base = NULL;
	l->sgl = NULL;
}

void mc_layout_write(struct mc_layout *l, const uint8_t *data)
{
	size_t pos = 0;
	unsigned i;

	if (!l->nseg) {
		if (l->len)
			memcpy(l->base, data, l->len);
		return;
	}
	for (i = 0; i < l->nseg; i++) {
		if (l->seg_len[i])
			memcpy(l->seg[i], data + pos, l->seg_len[i]);
		pos += l->seg_len[i];
	}
}

void mc_layout_read(const struct mc_layout *l, uint8_t *data)
{
	size_t pos = 0;
	unsigned i;

	if (!l->nseg) {
		if (l->len)
			memcpy(data, l->base, l->len);
		return;
	}
	for (i = 0; i < l->nseg; i++) {
		if (l->seg_len[i])
			memcpy(data + pos, l->seg[i], l->seg_len[i]);
		pos += l->seg_len[i];
	}
}

long mc_layout_canary(const struct mc_layout *l)
{
	size_t pos = 0, end;
	unsigned i;
	long off;

	if (!l->nseg) {
		off = mc_first_not(l->base + l->len, MC_CANARY, MC_GUARD);
		return off < 0 ? -1 : off + (long)l->len;
	}
	for (i = 0; i <= l->nseg; i++) {
		/* Canary from the end of segment i - 1 to the start of
		 * segment i (or the end of the block). */
		end = i < l->nseg ? (size_t)(l->seg[i] - l->base) : l->base_len;
		off = mc_first_not(l->base + pos, MC_CANARY, end - pos);
		if (off >= 0)
			return (long)pos + off;
		if (i < l->nseg)
			pos = end + l->seg_len[i];
	}
	return -1;
}

void mc_layout_to_op(const struct mc_layout *l, struct cc_op *op, int is_dst)
{
	if (is_dst) {
		op->dst = l->nseg ? NULL : l->base;
		op->dst_sgl = l->nseg ? l->sgl : NULL;
		op->dst_nseg = l->nseg;
	} else {
		op->src = l->nseg ? NULL : l->base;
		op->src_sgl = l->nseg ? l->sgl : NULL;
		op->src_nseg = l->nseg;
	}
}

/* ---- Random numbers ---- */

/* Per thread: a test that runs queues from several threads gives each
 * its own stream (mc_srand() in the thread). */
static _Thread_local uint64_t mc_rng;

uint64_t mc_seed_env(const char *var, uint64_t def)
{
	const char *s = getenv(var);
	char *end;
	uint64_t v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "%s=%s is not a number; using the default\n",
			var, s);
		return def;
	}
	return v;
}

uint64_t mc_seed_from_env(uint64_t def)
{
	return mc_seed_env("TEST_SEED", def);
}

void mc_srand(uint64_t seed)
{
	mc_rng = seed;
}

uint64_t mc_rnd(void)
{
	uint64_t z = (mc_rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t mc_below(uint32_t n)
{
	return (uint32_t)(mc_rnd() % n);
}

void mc_rnd_bytes(uint8_t *p, size_t n)
{
	while (n) {
		uint64_t x = mc_rnd();
		size_t k = n < 8 ? n : 8;

		memcpy(p, &x, k);
		p += k;
		n -= k;
	}
}

uint32_t mc_rnd_len(void)
{
	uint32_t d = mc_below(100);

	if (d < 50)
		return mc_below(257);
	if (d < 80)
		return mc_below(4097);
	return mc_below((64u << 10) + 1);
}

uint32_t mc_rnd_aad_len(unsigned pct_empty, unsigned pct_long)
{
	uint32_t d = mc_below(100);

	if (d < pct_empty)
		return 0;
	if (d < pct_empty + 2)
		return CRD_AAD_MAX;
	if (d < pct_empty + 2 + pct_long)
		return mc_below(CRD_AAD_MAX + 1);
	return mc_below(1025);
}

/* ---- Comparison and printing ---- */

long mc_first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

long mc_first_not(const uint8_t *p, uint8_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

void mc_print_hex(FILE *f, const char *label, const uint8_t *p, size_t n)
{
	size_t i;

	fprintf(f, "    %-9s= ", label);
	for (i = 0; i < n && i < 256; i++)
		fprintf(f, "%02x", p[i]);
	if (n > 256)
		fprintf(f, "... (%zu bytes)", n);
	fputc('\n', f);
}

void mc_flip(uint8_t *p, uint32_t bit)
{
	p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
}

static int mc_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int mc_unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s), i;

	if (n % 2 || n / 2 > max)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		int hi = mc_hexval(s[2 * i]), lo = mc_hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}
