// SPDX-License-Identifier: MIT
/* The stream tests' shared parts (stream_common.h). */
#include "stream_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <cryptod/ring_abi.h>

int sc_sanitized(void)
{
#if defined(CRYPTOD_TEST_SANITIZED) || defined(__SANITIZE_ADDRESS__) ||        \
	defined(__SANITIZE_THREAD__)
	return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
	return 1;
#else
	return 0;
#endif
#else
	return 0;
#endif
}

uint64_t sc_seed(uint64_t def)
{
	return mc_seed_env("STREAM_SEED", def);
}

int sc_allow_missing(void)
{
	const char *s = getenv("STREAM_ALLOW_MISSING");

	return s && !strcmp(s, "1");
}

const char *sc_engine;

void sc_engine_init(void)
{
	const char *e = getenv("STREAM_ENGINE");

	sc_engine = e && *e ? e : NULL;
}

int sc_engine_streams(struct cc_conn *conn, enum cc_alg alg)
{
	struct cc_alg_caps *caps;
	unsigned n, i;
	int yes = 0;

	if (!sc_engine)
		return 1;
	if (cc_capabilities_get(conn, &caps, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (caps[i].alg == alg && !strcmp(caps[i].engine, sc_engine))
			yes = caps[i].available && caps[i].stream;
	cc_capabilities_free(caps);
	return yes;
}

/* ---- The algorithms ---- */

#define V_AEAD(a, n, kl, ivl, ccm_)                                            \
	{                                                                      \
		.alg = (a), .name = (n), .kind = SC_AEAD, .key_len = (kl),     \
		.iv_len = (ivl), .block = 1, .aad = 1, .ccm = (ccm_),          \
		.tag_def = 16                                                  \
	}
#define V_CIPH(a, n, kl, ivl, blk, xts_)                                       \
	{                                                                      \
		.alg = (a), .name = (n), .kind = SC_CIPHER, .key_len = (kl),   \
		.iv_len = (ivl), .block = (blk), .xts = (xts_)                 \
	}
#define V_MAC(a, n, kl, hmac_, sha_, def)                                      \
	{                                                                      \
		.alg = (a), .name = (n), .kind = SC_MAC, .key_len = (kl),      \
		.block = 1, .hmac = (hmac_), .sha = (sha_), .tag_def = (def)   \
	}

const struct sc_var sc_vars[] = {
	V_AEAD(CC_ALG_AES_GCM, "aes-gcm-128", 16, 12, 0),
	V_AEAD(CC_ALG_AES_GCM, "aes-gcm-192", 24, 12, 0),
	V_AEAD(CC_ALG_AES_GCM, "aes-gcm-256", 32, 12, 0),
	V_AEAD(CC_ALG_CHACHA20_POLY1305, "chacha20-poly1305", 32, 12, 0),
	V_AEAD(CC_ALG_AES_CCM, "aes-ccm-128", 16, 13, 1),
	V_AEAD(CC_ALG_AES_CCM, "aes-ccm-192", 24, 13, 1),
	V_AEAD(CC_ALG_AES_CCM, "aes-ccm-256", 32, 13, 1),
	V_CIPH(CC_ALG_AES_CBC, "aes-cbc-128", 16, 16, 16, 0),
	V_CIPH(CC_ALG_AES_CBC, "aes-cbc-192", 24, 16, 16, 0),
	V_CIPH(CC_ALG_AES_CBC, "aes-cbc-256", 32, 16, 16, 0),
	V_CIPH(CC_ALG_AES_CTR, "aes-ctr-128", 16, 16, 1, 0),
	V_CIPH(CC_ALG_AES_CTR, "aes-ctr-192", 24, 16, 1, 0),
	V_CIPH(CC_ALG_AES_CTR, "aes-ctr-256", 32, 16, 1, 0),
	V_CIPH(CC_ALG_AES_ECB, "aes-ecb-128", 16, 0, 16, 0),
	V_CIPH(CC_ALG_AES_ECB, "aes-ecb-192", 24, 0, 16, 0),
	V_CIPH(CC_ALG_AES_ECB, "aes-ecb-256", 32, 0, 16, 0),
	V_CIPH(CC_ALG_AES_XTS, "aes-xts-128", 32, 16, 1, 1),
	V_CIPH(CC_ALG_AES_XTS, "aes-xts-256", 64, 16, 1, 1),
	V_MAC(CC_ALG_HMAC_SHA1, "hmac-sha1", 0, 1, 0, 20),
	V_MAC(CC_ALG_HMAC_SHA224, "hmac-sha224", 0, 1, 0, 28),
	V_MAC(CC_ALG_HMAC_SHA256, "hmac-sha256", 0, 1, 0, 32),
	V_MAC(CC_ALG_HMAC_SHA384, "hmac-sha384", 0, 1, 0, 48),
	V_MAC(CC_ALG_HMAC_SHA512, "hmac-sha512", 0, 1, 0, 64),
	V_MAC(CC_ALG_SHA1, "sha1", 0, 0, 1, 20),
	V_MAC(CC_ALG_SHA224, "sha224", 0, 0, 1, 28),
	V_MAC(CC_ALG_SHA256, "sha256", 0, 0, 1, 32),
	V_MAC(CC_ALG_SHA384, "sha384", 0, 0, 1, 48),
	V_MAC(CC_ALG_SHA512, "sha512", 0, 0, 1, 64),
	V_MAC(CC_ALG_AES_CMAC, "aes-cmac-128", 16, 0, 0, 16),
	V_MAC(CC_ALG_AES_CMAC, "aes-cmac-192", 24, 0, 0, 16),
	V_MAC(CC_ALG_AES_CMAC, "aes-cmac-256", 32, 0, 0, 16),
	/* the null engine's copy: the stream machinery alone */
	V_CIPH(CC_ALG_NULL, "null", 0, 0, 1, 0),
};
const unsigned sc_n_vars = sizeof(sc_vars) / sizeof(sc_vars[0]);

const struct sc_var *sc_var_by_name(const char *name)
{
	for (unsigned i = 0; i < sc_n_vars; i++)
		if (!strcmp(sc_vars[i].name, name))
			return &sc_vars[i];
	return NULL;
}

/* ---- Messages ---- */

size_t sc_fix_len(const struct sc_var *v, size_t len, unsigned iv_len,
		  uint32_t unit)
{
	if (v->block > 1)
		len -= len % v->block;
	if (v->xts) {
		size_t r;

		if (len < 16)
			len = 16;
		r = len % unit;
		if (r && r < 16)
			len += 16 - r;
	}
	if (v->ccm) {
		unsigned l = 15 - iv_len; /* bytes of the length field */

		if (l < 8) {
			uint64_t max = (1ull << (8 * l)) - 1;

			if (len > max)
				len = (size_t)max;
		}
	}
	return len;
}

static const char *sc_sha_name(enum cc_alg alg)
{
	switch (alg) {
	case CC_ALG_HMAC_SHA1:
	case CC_ALG_SHA1:
		return "SHA1";
	case CC_ALG_HMAC_SHA224:
	case CC_ALG_SHA224:
		return "SHA224";
	case CC_ALG_HMAC_SHA256:
	case CC_ALG_SHA256:
		return "SHA256";
	case CC_ALG_HMAC_SHA384:
	case CC_ALG_SHA384:
		return "SHA384";
	case CC_ALG_HMAC_SHA512:
	case CC_ALG_SHA512:
		return "SHA512";
	default:
		return NULL;
	}
}

static const EVP_CIPHER *sc_evp(const struct sc_var *v, unsigned key_len)
{
	int i = key_len == 16 ? 0 : key_len == 24 ? 1 : 2;

	switch (v->alg) {
	case CC_ALG_AES_GCM:
		return i == 0	? EVP_aes_128_gcm()
		       : i == 1 ? EVP_aes_192_gcm()
				: EVP_aes_256_gcm();
	case CC_ALG_AES_CCM:
		return i == 0	? EVP_aes_128_ccm()
		       : i == 1 ? EVP_aes_192_ccm()
				: EVP_aes_256_ccm();
	case CC_ALG_CHACHA20_POLY1305:
		return EVP_chacha20_poly1305();
	case CC_ALG_AES_CBC:
		return i == 0	? EVP_aes_128_cbc()
		       : i == 1 ? EVP_aes_192_cbc()
				: EVP_aes_256_cbc();
	case CC_ALG_AES_CTR:
		return i == 0	? EVP_aes_128_ctr()
		       : i == 1 ? EVP_aes_192_ctr()
				: EVP_aes_256_ctr();
	case CC_ALG_AES_ECB:
		return i == 0	? EVP_aes_128_ecb()
		       : i == 1 ? EVP_aes_192_ecb()
				: EVP_aes_256_ecb();
	case CC_ALG_AES_XTS:
		return key_len == 32 ? EVP_aes_128_xts() : EVP_aes_256_xts();
	default:
		return NULL;
	}
}

#define SC_CHUNK (1u << 28) /* EVP takes int lengths */

static int sc_update(EVP_CIPHER_CTX *x, uint8_t *out, const uint8_t *in,
		     size_t len)
{
	while (len) {
		int n = (int)(len < SC_CHUNK ? len : SC_CHUNK), outl = 0;

		if (!EVP_EncryptUpdate(x, out, &outl, in, n) || outl != n)
			return 0;
		in += n;
		out += n;
		len -= (size_t)n;
	}
	return 1;
}

static int sc_ref_aead(struct sc_msg *m)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	const struct sc_var *v = m->v;
	uint8_t fin[16], tag[16];
	int outl = 0, ok;

	ok = x &&
	     EVP_EncryptInit_ex(x, sc_evp(v, m->key_len), NULL, NULL, NULL) &&
	     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, (int)m->iv_len,
				 NULL) &&
	     (!v->ccm || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG,
					     (int)m->tag_len, NULL)) &&
	     EVP_EncryptInit_ex(x, NULL, NULL, m->key, m->iv) &&
	     (!v->ccm ||
	      EVP_EncryptUpdate(x, NULL, &outl, NULL, (int)m->len)) &&
	     (!m->aad_len ||
	      EVP_EncryptUpdate(x, NULL, &outl, m->aad, (int)m->aad_len));
	if (ok && v->ccm) /* CCM: one update of the whole message */
		ok = EVP_EncryptUpdate(x, m->ct, &outl, m->pt, (int)m->len) &&
		     (size_t)outl == m->len;
	else if (ok)
		ok = sc_update(x, m->ct, m->pt, m->len);
	ok = ok && EVP_EncryptFinal_ex(x, fin, &outl) &&
	     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG,
				 v->ccm ? (int)m->tag_len : 16, tag);
	EVP_CIPHER_CTX_free(x);
	if (ok)
		memcpy(m->tag, tag, m->tag_len);
	return ok ? 0 : -EIO;
}

/* Tweak of unit k: the IV plus k, a 128-bit little-endian number. */
static void sc_tweak(const uint8_t *iv, uint64_t k, uint8_t *out)
{
	unsigned carry = 0, i;

	for (i = 0; i < 16; i++) {
		unsigned s = iv[i] +
			     (unsigned)(i < 8 ? (k >> (8 * i)) & 0xff : 0) +
			     carry;

		out[i] = (uint8_t)s;
		carry = s >> 8;
	}
}

static int sc_ref_cipher(struct sc_msg *m)
{
	const EVP_CIPHER *c = sc_evp(m->v, m->key_len);
	EVP_CIPHER_CTX *x;
	int ok;

	if (m->v->alg == CC_ALG_NULL) {
		memcpy(m->ct, m->pt, m->len);
		return 0;
	}
	x = EVP_CIPHER_CTX_new();
	ok = x != NULL;
	if (ok && m->v->xts) {
		uint8_t tw[16];
		size_t off = 0;
		uint64_t k = 0;

		while (ok && off < m->len) {
			size_t n =
				m->len - off < m->unit ? m->len - off : m->unit;
			int outl = 0;

			sc_tweak(m->iv, k++, tw);
			ok = EVP_EncryptInit_ex(x, c, NULL, m->key, tw) &&
			     EVP_EncryptUpdate(x, m->ct + off, &outl,
					       m->pt + off, (int)n) &&
			     (size_t)outl == n;
			off += n;
		}
	} else if (ok && m->len) {
		int finl = 0;

		ok = EVP_EncryptInit_ex(x, c, NULL, m->key,
					m->iv_len ? m->iv : NULL) &&
		     EVP_CIPHER_CTX_set_padding(x, 0) &&
		     sc_update(x, m->ct, m->pt, m->len) &&
		     EVP_EncryptFinal_ex(x, m->ct + m->len, &finl) && !finl;
	}
	EVP_CIPHER_CTX_free(x);
	return ok ? 0 : -EIO;
}

static int sc_ref_mac(struct sc_msg *m)
{
	const struct sc_var *v = m->v;
	uint8_t md[64];
	int ok;

	if (v->sha) {
		EVP_MD_CTX *x = EVP_MD_CTX_new();
		unsigned n = 0;

		ok = x &&
		     EVP_DigestInit_ex(
			     x, EVP_get_digestbyname(sc_sha_name(v->alg)),
			     NULL) &&
		     (!m->len || EVP_DigestUpdate(x, m->pt, m->len)) &&
		     EVP_DigestFinal_ex(x, md, &n);
		EVP_MD_CTX_free(x);
	} else {
		static const char *const cbc[3] = { "AES-128-CBC",
						    "AES-192-CBC",
						    "AES-256-CBC" };
		char name[16];
		OSSL_PARAM params[2];
		EVP_MAC *mac =
			EVP_MAC_fetch(NULL, v->hmac ? "HMAC" : "CMAC", NULL);
		EVP_MAC_CTX *x = mac ? EVP_MAC_CTX_new(mac) : NULL;
		size_t outl = 0;

		snprintf(name, sizeof(name), "%s",
			 v->hmac ? sc_sha_name(v->alg)
				 : cbc[(m->key_len - 16) / 8]);
		params[0] = OSSL_PARAM_construct_utf8_string(
			v->hmac ? OSSL_MAC_PARAM_DIGEST : OSSL_MAC_PARAM_CIPHER,
			name, 0);
		params[1] = OSSL_PARAM_construct_end();
		ok = x && EVP_MAC_init(x, m->key, m->key_len, params) &&
		     (!m->len || EVP_MAC_update(x, m->pt, m->len)) &&
		     EVP_MAC_final(x, md, &outl, sizeof(md));
		EVP_MAC_CTX_free(x);
		EVP_MAC_free(mac);
	}
	if (ok)
		memcpy(m->tag, md, m->tag_len);
	return ok ? 0 : -EIO;
}

int sc_ref(struct sc_msg *m)
{
	switch (m->v->kind) {
	case SC_AEAD:
		return sc_ref_aead(m);
	case SC_CIPHER:
		return sc_ref_cipher(m);
	default:
		return sc_ref_mac(m);
	}
}

void sc_msg_free(struct sc_msg *m)
{
	free(m->aad);
	free(m->pt);
	free(m->ct);
	m->aad = m->pt = m->ct = NULL;
}

int sc_msg_make(struct sc_msg *m, const struct sc_var *v, size_t len)
{
	unsigned iv_len = 0;
	if (v->alg == CC_ALG_AES_GCM && mc_below(5) == 0)
		iv_len = 1 + mc_below(MC_IV_MAX);
	return sc_msg_make_iv(m, v, len, iv_len);
}

int sc_msg_make_iv(struct sc_msg *m, const struct sc_var *v, size_t len,
		   unsigned iv_len)
{
	static const uint32_t units[] = { 16,	32,  512,   4096,    4096,
					  4096, 100, 65536, 1u << 20 };

	memset(m, 0, sizeof(*m));
	m->v = v;
	m->key_len = v->key_len;
	if (v->hmac)
		m->key_len = 1 + mc_below(128);
	mc_rnd_bytes(m->key, m->key_len);
	if (v->xts) /* two halves that differ */
		m->key[m->key_len / 2] = (uint8_t)(m->key[0] ^ 0x5a);
	m->iv_len = v->iv_len;
	if (v->alg == CC_ALG_AES_GCM && mc_below(5) == 0)
		m->iv_len = 1 + mc_below(16);
	if (v->ccm)
		m->iv_len = 7 + mc_below(7);
	if (iv_len)
		m->iv_len = iv_len;
	mc_rnd_bytes(m->iv, sizeof(m->iv));
	/* CTR: now and then a counter block about to carry */
	if (v->alg == CC_ALG_AES_CTR && mc_below(4) == 0) {
		unsigned n = 1 + mc_below(12);

		memset(m->iv + 16 - n, 0xff, n);
	}
	if (v->xts)
		m->unit = units[mc_below(sizeof(units) / sizeof(units[0]))];
	m->tag_len = v->tag_def;
	if (v->tag_def && v->alg != CC_ALG_CHACHA20_POLY1305 &&
	    mc_below(5) == 0) {
		static const unsigned gcm[] = { 4, 8, 12, 13, 14, 15 };
		static const unsigned ccm[] = { 4, 6, 8, 10, 12, 14 };

		m->tag_trunc = 1;
		if (v->alg == CC_ALG_AES_GCM)
			m->tag_len = gcm[mc_below(6)];
		else if (v->ccm)
			m->tag_len = ccm[mc_below(6)];
		else
			m->tag_len = 4 + mc_below(v->tag_def - 4);
	}
	if (v->aad)
		m->aad_len = mc_below(4) == 0	 ? 0
			     : mc_below(20) == 0 ? mc_below(65536)
						 : mc_below(600);
	m->len = sc_fix_len(v, len, m->iv_len, m->unit);
	m->aad = malloc(m->aad_len + 1);
	m->pt = malloc(m->len + 16);
	if (v->kind != SC_MAC)
		m->ct = malloc(m->len + 16);
	if (!m->aad || !m->pt || (v->kind != SC_MAC && !m->ct))
		return -ENOMEM;
	mc_rnd_bytes(m->aad, m->aad_len);
	mc_rnd_bytes(m->pt, m->len);
	return sc_ref(m);
}

int sc_session(struct cc_conn *conn, const struct sc_msg *m, uint32_t *sid)
{
	struct cc_session_params sp = {
		.alg = m->v->alg,
		.key = m->key_len ? m->key : NULL,
		.key_len = m->key_len,
		.tag_len = m->tag_trunc ? m->tag_len : 0,
		.engine = sc_engine,
	};
	return cc_session_create(conn, &sp, sid);
}

void sc_msg_desc(const struct sc_msg *m, char *buf, size_t n)
{
	snprintf(buf, n, "%s len %zu key %u iv %u aad %u tag %u%s unit %u",
		 m->v->name, m->len, m->key_len, m->iv_len, m->aad_len,
		 m->tag_len, m->tag_trunc ? " (session's)" : "", m->unit);
}

/* ---- Pieces ---- */

/* A piece length: each stream has a scale (its largest piece), from 16
 * bytes to SC_PIECE_MAX, so that some streams come in many tiny pieces
 * and others in a few large ones; now and then a tiny one anyway. */
static uint32_t sc_rnd_piece(uint32_t scale)
{
	if (mc_below(10) == 0)
		return 1 + mc_below(16);
	return 1 + mc_below(scale);
}

int sc_cut(const struct sc_msg *m, uint32_t *cuts, unsigned max)
{
	static const uint32_t scales[] = { 16, 256, 4096, 65536, SC_PIECE_MAX };
	uint32_t scale = scales[mc_below(5)];
	size_t rem = m->len;
	unsigned n = 0;

	/* XTS: at most CRD_XTS_STREAM_UNITS_MAX units a piece, the last
	 * one's short unit counted */
	const size_t cap = m->v->xts
				   ? (size_t)m->unit * CRD_XTS_STREAM_UNITS_MAX
				   : SC_PIECE_MAX;
	if (!max)
		return -E2BIG;
	/* about max / 4 pieces at most, on average */
	while (scale < SC_PIECE_MAX && m->len / (scale / 2 + 1) > max / 4)
		scale *= 2;
	if (!rem)
		cuts[n++] = 0;
	while (rem) {
		uint32_t p = sc_rnd_piece(scale);

		if (m->v->block > 1)
			p = p < m->v->block ? m->v->block : p - p % m->v->block;
		if (m->v->xts)
			p = p < m->unit ? m->unit : p - p % m->unit;
		if (p > cap)
			p = (uint32_t)cap;
		/* the last pieces the array holds take what is left */
		if ((p >= rem || n + 2 >= max) && rem <= SC_PIECE_MAX &&
		    rem <= cap)
			p = (uint32_t)rem;
		/* XTS: a stream of one piece is one data unit (its param
		 * is its length): cut a longer message in two, whole units
		 * first (a LAST of no data when nothing is left over) */
		if (m->v->xts && n == 0 && p == rem && rem > m->unit) {
			p = (uint32_t)(rem - rem % m->unit);
			if (p > cap)
				p = (uint32_t)cap;
			if (p == rem) {
				cuts[n++] = p;
				cuts[n++] = 0;
				return (int)n;
			}
		}
		if (n == max)
			return -E2BIG;
		cuts[n++] = p;
		rem -= p;
	}
	/* a LAST with no data (XTS: only after whole units, since the
	 * pieces before the last hold whole units) */
	if (n < max && mc_below(10) == 0 &&
	    (!m->v->xts || cuts[n - 1] % m->unit == 0))
		cuts[n++] = 0;
	return (int)n;
}

void sc_print_cuts(FILE *f, const uint32_t *cuts, unsigned n)
{
	unsigned i;

	fprintf(f, "  %u pieces:", n);
	for (i = 0; i < n && i < 64; i++)
		fprintf(f, " %u", cuts[i]);
	fprintf(f, "%s\n", i < n ? " ..." : "");
}

/* ---- Streams ---- */

void sc_stream_free(struct sc_stream *s)
{
	if (s->q) {
		if (s->dst && s->dst != s->src)
			cc_buf_free(s->q, s->dst);
		if (s->src)
			cc_buf_free(s->q, s->src);
		if (s->aad)
			cc_buf_free(s->q, s->aad);
		if (s->iv)
			cc_buf_free(s->q, s->iv);
		if (s->tag)
			cc_buf_free(s->q, s->tag);
		if (s->have_handle)
			cc_stream_handle_put(s->q, s->handle);
	}
	free(s->cuts);
	memset(s, 0, sizeof(*s));
}

int sc_stream_init(struct sc_stream *s, struct cc_queue *q, struct sc_msg *m,
		   enum cc_dir dir, uint32_t sid, int inplace,
		   const uint32_t *cuts, unsigned n)
{
	int mac = m->v->kind == SC_MAC;
	const uint8_t *in = dir == CC_ENCRYPT || mac ? m->pt : m->ct;
	int r;

	memset(s, 0, sizeof(*s));
	s->m = m;
	s->q = q;
	s->dir = dir;
	s->sid = sid;
	s->inplace = inplace || mac;
	s->n = n;
	s->cuts = malloc(sizeof(*cuts) * (n ? n : 1));
	s->src = cc_buf_alloc(q, m->len + MC_GUARD);
	if (!mac)
		s->dst = s->inplace ? s->src
				    : cc_buf_alloc(q, m->len + MC_GUARD);
	if (m->aad_len)
		s->aad = cc_buf_alloc(q, m->aad_len);
	if (m->iv_len > CC_IV_INLINE)
		s->iv = cc_buf_alloc(q, m->iv_len);
	s->tag = cc_buf_alloc(q, 64 + MC_GUARD);
	if (!s->cuts || !s->src || (!mac && !s->dst) ||
	    (m->aad_len && !s->aad) || !s->tag ||
	    (m->iv_len > CC_IV_INLINE && !s->iv))
		return -ENOMEM;
	if (s->iv)
		memcpy(s->iv, m->iv, m->iv_len);
	memcpy(s->cuts, cuts, sizeof(*cuts) * n);
	memcpy(s->src, in, m->len);
	memset(s->src + m->len, MC_CANARY, MC_GUARD);
	if (s->dst && s->dst != s->src)
		memset(s->dst, MC_CANARY, m->len + MC_GUARD);
	if (m->aad_len)
		memcpy(s->aad, m->aad, m->aad_len);
	memset(s->tag, MC_CANARY, 64 + MC_GUARD);
	if (dir == CC_DECRYPT)
		memcpy(s->tag, m->tag, m->tag_len);
	r = cc_stream_handle_get(q, &s->handle);
	if (r)
		return r;
	s->have_handle = 1;
	return 0;
}

void sc_piece_op(const struct sc_stream *s, struct cc_op *op, uint64_t ud,
		 size_t off, uint32_t len, unsigned flags)
{
	const struct sc_msg *m = s->m;

	*op = (struct cc_op){
		.user_data = ud,
		.session = s->sid,
		.dir = s->dir,
		.src = s->src + off,
		.dst = s->dst && s->dst != s->src ? s->dst + off : NULL,
		.len = len,
		.stream = s->handle,
		.stream_flags = flags,
	};
	if (flags & CC_STREAM_FIRST) {
		op->iv = s->iv ? s->iv : m->iv_len ? m->iv : NULL;
		op->iv_len = m->iv_len;
		op->aad = s->aad;
		op->aad_len = m->aad_len;
		if (!(flags & CC_STREAM_LAST))
			op->stream_param = m->v->ccm   ? (uint32_t)m->len
					   : m->v->xts ? m->unit
						       : 0;
	}
	if (flags & CC_STREAM_LAST)
		op->tag = s->tag;
}

void sc_stream_op(struct sc_stream *s, struct cc_op *op, uint64_t ud)
{
	unsigned i = s->next++;
	unsigned flags = (i == 0 ? CC_STREAM_FIRST : 0) |
			 (i + 1 == s->n ? CC_STREAM_LAST : 0);

	sc_piece_op(s, op, ud, s->off, s->cuts[i], flags);
	s->off += s->cuts[i];
}

const char *sc_stream_check(const struct sc_stream *s, long *off)
{
	const struct sc_msg *m = s->m;
	int mac = m->v->kind == SC_MAC;
	const uint8_t *in = s->dir == CC_ENCRYPT || mac ? m->pt : m->ct;
	const uint8_t *want = mac ? in : s->dir == CC_ENCRYPT ? m->ct : m->pt;
	const uint8_t *out = mac ? s->src : s->dst;

	if ((*off = mc_first_diff(out, want, m->len)) >= 0)
		return mac ? "the source changed"
		       : s->dir == CC_ENCRYPT
			       ? "ciphertext differs from OpenSSL"
			       : "plaintext differs from the message";
	if ((*off = mc_first_not(out + m->len, MC_CANARY, MC_GUARD)) >= 0) {
		*off += (long)m->len;
		return "wrote past the end of the output";
	}
	if (!s->inplace && (*off = mc_first_diff(s->src, in, m->len)) >= 0)
		return "the source of an out-of-place stream changed";
	if (s->dir == CC_ENCRYPT && m->tag_len &&
	    (*off = mc_first_diff(s->tag, m->tag, m->tag_len)) >= 0)
		return "tag differs from OpenSSL";
	if ((*off = mc_first_not(s->tag + m->tag_len, MC_CANARY,
				 64 + MC_GUARD - m->tag_len)) >= 0) {
		*off += (long)m->tag_len;
		return "wrote past the tag";
	}
	*off = -1;
	return NULL;
}

/* ---- Several queues at once ---- */

int sc_run_queues(struct sc_qrun *r, unsigned nq, int timeout_ms)
{
	uint64_t deadline = fx_now_ms() + (uint64_t)timeout_ms;
	unsigned k, i;
	int rc;

	for (;;) {
		int progress = 0, left = 0;
		struct cc_queue *wait_q = NULL;

		for (k = 0; k < nq; k++) {
			struct sc_qrun *x = &r[k];

			if (x->got == x->n)
				continue;
			if (x->sent < x->n) {
				rc = cc_enqueue_burst(x->q, x->ops + x->sent,
						      x->n - x->sent);
				if (rc < 0) {
					fprintf(stderr,
						"enqueue of op %u: %s\n",
						x->sent, cc_strerror(rc));
					return rc;
				}
				x->sent += (unsigned)rc;
				progress |= rc > 0;
			}
			rc = cc_dequeue_burst(x->q, x->comps + x->got,
					      x->n - x->got);
			if (rc < 0) {
				fprintf(stderr, "dequeue: %s\n",
					cc_strerror(rc));
				return rc;
			}
			for (i = x->got; i < x->got + (unsigned)rc; i++) {
				if (i >= x->sent ||
				    x->comps[i].user_data !=
					    x->ops[i].user_data) {
					fprintf(stderr,
						"completion %u has user_data "
						"0x%llx, submitted 0x%llx: out "
						"of order\n",
						i,
						(unsigned long long)x->comps[i]
							.user_data,
						(unsigned long long)x->ops[i]
							.user_data);
					return -EPROTO;
				}
			}
			x->got += (unsigned)rc;
			progress |= rc > 0;
			if (x->got < x->n) {
				left = 1;
				if (!wait_q)
					wait_q = x->q;
			}
		}
		if (!left)
			return 0;
		if (progress)
			continue;
		if (fx_now_ms() >= deadline) {
			for (k = 0; k < nq; k++)
				fprintf(stderr,
					"queue %u: %u of %u completions, %u "
					"sent, in flight %u\n",
					k, r[k].got, r[k].n, r[k].sent,
					cc_in_flight(r[k].q));
			return -ETIMEDOUT;
		}
		rc = cc_wait(wait_q, nq > 1 ? 1 : 100);
		if (rc < 0) {
			fprintf(stderr, "cc_wait: %s\n", cc_strerror(rc));
			return rc;
		}
	}
}
