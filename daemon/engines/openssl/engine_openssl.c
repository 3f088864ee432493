/* SPDX-License-Identifier: MIT */
/*
 * openssl: OpenSSL libcrypto's EVP interface. It serves what ipsec-mb 1.3
 * lacks (AES-XTS) and is a second, independent engine for the other
 * block modes and GCM, selectable per session.
 *
 * The session keeps the raw key in its locked slot; every op initialises
 * the worker's context with it (a key schedule per op: fine for
 * sector-sized XTS work, and the cost of having no OpenSSL state shared
 * between workers). Ciphers are fetched once per worker, not per op.
 */
#include "auth.h"
#include "aead.h"
#include "engine.h"
#include "stream.h"
#include "openssl.h"
#include "openssl_authenc.h"
#include "session.h"
#include "names.h"
#include "wire.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include <cryptod/ring_abi.h>

/*
 * A key pair's row (openssl_pkey.c; ring_abi.h's contract). key: DER up
 * to CTL_PKEY_MAX bytes; IV: none, or struct crd_pk_params' 16 bytes; tag:
 * the table's column, the room an output needs (no tag is written); AAD:
 * a signature or an OAEP label; len: what is signed (a digest, or EdDSA's
 * message), a peer's key, an OAEP message or ciphertext, whose exact
 * bounds desc.c and the engine check per op.
 *
 * cost (fair.h): the bytes of AES-128-GCM that take as long as one op.
 * Measured on the 2-core CI host (Debian 12, OpenSSL 3.0) with
 * `openssl speed -seconds 2 rsa2048 ... ecdhx448` against `openssl speed
 * -evp aes-128-gcm -bytes 1024` (1.66 GB/s): cost = GCM bytes/s divided
 * by the ops/s of the scheme, rounded (two runs agreed within 20%).
 * OAEP decryption is a private-key operation as a signature, encryption
 * a public one as a verification. The ratios are what matters; CPU
 * features move some (OpenSSL 3.0's AVX-512 IFMA code speeds RSA-2048
 * alone, so RSA-3072 costs 7x as much here, ~3.4x elsewhere), which
 * bends a share by that factor at worst, never starves anyone.
 */
#define KIB(n) ((n)*1024u)
#define CAP_PKEY(id, max_, sign_, verify_, derive_)                            \
	{                                                                      \
		.alg = CRD_ALG_##id, .n_key = 1,                               \
		.key = { { 1, CTL_PKEY_MAX, 1 } }, .n_iv = 2,                  \
		.iv = { RANGE1(0), RANGE1(CRD_IV_MAX) }, .n_tag = 1,           \
		.tag = { RANGE1(CRD_TAG_##id) }, .aad = { 0, CRD_AAD_MAX, 1 }, \
		.min_len = 0, .max_len = (max_), .block = 1, .cost = {         \
			[CRD_OP_ENCRYPT] = (verify_),                          \
			[CRD_OP_DECRYPT] = (sign_),                            \
			[CRD_OP_SIGN] = (sign_),                               \
			[CRD_OP_VERIFY] = (verify_),                           \
			[CRD_OP_DERIVE] = (derive_)                            \
		}                                                              \
	}
/* max_len: RSA's longest input is a ciphertext (the modulus's bytes);
 * EC's a peer's point (0x04 || x || y); EdDSA signs whole messages. */
#define CAP_PKEYS                                                              \
	CAP_PKEY(RSA_2048, 256, KIB(430), KIB(26), 0),                         \
		CAP_PKEY(RSA_3072, 384, KIB(3200), KIB(72), 0),                \
		CAP_PKEY(RSA_4096, 512, KIB(6500), KIB(100), 0),               \
		CAP_PKEY(EC_P256, 65, KIB(39), KIB(86), KIB(86)),              \
		CAP_PKEY(EC_P384, 97, KIB(1150), KIB(1000), KIB(1150)),        \
		CAP_PKEY(EC_P521, 133, KIB(480), KIB(780), KIB(420)),          \
		CAP_PKEY(ED25519, CRD_OP_MAX_LEN, KIB(50), KIB(135), 0),       \
		CAP_PKEY(ED448, CRD_OP_MAX_LEN, KIB(290), KIB(345), 0),        \
		CAP_PKEY(X25519, 32, 0, 0, KIB(49)),                           \
		CAP_PKEY(X448, 56, 0, 0, KIB(320))

static const struct alg_cap ossl_caps[] = {
	/* EVP takes any GCM IV length (AEAD_IVLEN, ossl_aead); streams
	 * carry the engine's own GHASH (openssl_stream_aead.c). */
	CAP_AES_GCM(CRD_ALG_AES_GCM, 1, CRD_IV_ARENA_MAX, CRD_AAD_MAX, 1),
	CAP_AES_GCM(CRD_ALG_AES_GMAC, 1, CRD_IV_ARENA_MAX, 0, 0),
	CAP_AES_MODE(CRD_ALG_AES_CBC, 16, 16),
	CAP_AES_MODE(CRD_ALG_AES_CTR, 16, 1),
	CAP_AES_MODE(CRD_ALG_AES_ECB, 0, 16),
	{ .alg = CRD_ALG_AES_XTS,
	  .n_key = 2,
	  .key = { RANGE1(32), RANGE1(64) },
	  .n_iv = 1,
	  .iv = { RANGE1(16) },
	  NO_TAG,
	  .aad = RANGE1(0),
	  .min_len = 16,
	  .max_len = CRD_OP_MAX_LEN,
	  .block = 1,
	  .stream = 1 },
	CAP_AES_CBC_NULL,
	CAP_AES_GCM_RFC4106(CRD_OP_MAX_LEN),
	/* authentication only: openssl_auth.c */
	CAP_HMACS,
	CAP_SHAS,
	CAP_CMAC(16, 32, 8),
	CAP_XCBC(16),
	CAP_AES_CCM(8, CRD_AAD_MAX, CRD_OP_MAX_LEN, 1),
	/* streams carry the engine's own Poly1305, as GCM's its GHASH */
	CAP_CHACHA20_POLY1305(1),
	/* RFC 8439 ChaCha20; IV = 32-bit LE block counter || nonce */
	{ .alg = CRD_ALG_CHACHA20,
	  .n_key = 1,
	  .key = { RANGE1(32) },
	  CAP_IVS(16, 16),
	  NO_TAG,
	  .aad = RANGE1(0),
	  .min_len = 0,
	  .max_len = CRD_OP_MAX_LEN,
	  .block = 1 },
	CAP_AES_AUTHENC_ROWS,
	/* RFC 3394 key wrap: the tag is the wrap's first semiblock */
	{ .alg = CRD_ALG_AES_KW,
	  KEYS_AES,
	  NO_IV,
	  .n_tag = 1,
	  .tag = { RANGE1(CRD_TAG_AES_KW) },
	  .aad = RANGE1(0),
	  .min_len = 16,
	  .max_len = OSSL_KW_MAX,
	  .block = 8 },
	/* RFC 5649 key wrap with padding: the tag is the wrap's first 8
	 * bytes and as many more as the padding (ossl_kwp) */
	{ .alg = CRD_ALG_AES_KWP,
	  KEYS_AES,
	  NO_IV,
	  .n_tag = 1,
	  .tag = { { 8, 15, 1 } },
	  .aad = RANGE1(0),
	  .min_len = 1,
	  .max_len = OSSL_KW_MAX,
	  .block = 1 },
	/* Key pairs: openssl_pkey.c. */
	CAP_PKEYS,
};

/* struct ossl_key, struct ossl_worker, ossl_key_idx(): openssl.h */

static int ossl_probe(const struct engine *e, char *why, size_t len)
{
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, "AES-256-XTS", NULL);
	if (!c) {
		snprintf(why, len, "OpenSSL has no AES-XTS provider");
		return -ENODEV;
	}
	EVP_CIPHER_free(c);
	snprintf(why, len, "%s", OpenSSL_version(OPENSSL_VERSION));
	return 0;
}

static int ossl_session_init(struct session *s, void *wctx, const uint8_t *key,
			     size_t key_len, const uint8_t *auth_key,
			     size_t auth_key_len)
{
	if (auth_alg(s->alg))
		return ossl_auth_session_init(s, key, key_len);
	if (crd_alg_pkey(s->alg))
		return ossl_pk_session_init(s, key, key_len);
	/* XTS with equal halves: a decrypt-only session (session.c). */
	struct ossl_key *k = (struct ossl_key *)s->key;
	memcpy(k->raw, key, key_len);
	if (auth_key_len) { /* the capability rows bound it: authenc only */
		memcpy(k->auth, auth_key, auth_key_len);
		k->auth_len = (uint8_t)auth_key_len;
	}
	return 0;
}

static void ossl_worker_fini(void *wctx)
{
	struct ossl_worker *w = wctx;
	if (!w)
		return;
	EVP_CIPHER_CTX_free(w->ctx); /* cleanses the key schedule */
	EVP_CIPHER_CTX_free(w->sctx);
	ossl_auth_free(w->auth);
	ossl_hmac_free(w->hmac); /* and the HMAC states */
	ossl_pk_worker_free(w->pk);
	for (unsigned a = 0; a < CRD_ALG_MAX_; a++)
		for (unsigned i = 0; i < 4; i++)
			EVP_CIPHER_free(w->cipher[a][i]);
	OPENSSL_free(w);
}

static void *ossl_worker_init(const struct engine *e)
{
	struct ossl_worker *w = OPENSSL_zalloc(sizeof(*w));
	if (!w)
		return NULL;
	w->ctx = EVP_CIPHER_CTX_new();
	w->sctx = EVP_CIPHER_CTX_new();
	w->auth = ossl_auth_new();
	w->hmac = ossl_hmac_new();
	w->pk = ossl_pk_worker_new();
	if (!w->ctx || !w->sctx || !w->auth || !w->hmac || !w->pk)
		goto err;
	static const unsigned key_lens[] = { 16, 24, 32, 64 };
	for (unsigned i = 0; i < sizeof(ossl_caps) / sizeof(ossl_caps[0]);
	     i++) {
		unsigned alg = ossl_caps[i].alg;
		if (crd_alg_pkey(alg))
			continue; /* no cipher: openssl_pkey.c */
		for (unsigned k = 0; k < 4 && !auth_alg(alg); k++) {
			unsigned salt =
				crd_alg_flags(alg) & CRD_AF_SALT ? 4 : 0;
			unsigned kl = key_lens[k] + salt;
			if (!range_has(ossl_caps[i].key, ossl_caps[i].n_key,
				       kl))
				continue;
			int idx = ossl_key_idx(alg, kl);
			char name[32];
			if (w->cipher[alg][idx])
				continue;
			/* The EVP cipher is the algorithm table's (an authenc
			 * row's names its cipher half); a salted key (RFC
			 * 4106) ends in the 4-byte salt. */
			if (crd_alg_ossl_name(alg, kl - salt, name,
					      sizeof(name)))
				goto err;
			w->cipher[alg][idx] =
				EVP_CIPHER_fetch(NULL, name, NULL);
			if (!w->cipher[alg][idx])
				goto err;
		}
	}
	return w;
err:
	ossl_worker_fini(w);
	return NULL;
}

/*
 * AES key wrap (RFC 3394) through EVP's AES-n-WRAP. The RFC's output is
 * A || R[1..n]: the op's tag is A (the integrity value) and its data
 * R[1..n], so wrap and unwrap have the AEAD shape (len in, len out, an
 * 8-byte tag). An unwrap that fails its check zeroes the output.
 * Returns CRD_ST_*.
 */
static int ossl_kw(struct ossl_worker *w, EVP_CIPHER *c, const uint8_t *key,
		   struct engine_op *op)
{
	EVP_CIPHER_CTX *ctx = w->ctx;
	int enc = op->op == CRD_OP_ENCRYPT;
	int n = 0;

	if (op->len < 16 || op->len > OSSL_KW_MAX || op->len % 8 ||
	    op->tag_len != 8)
		return CRD_ST_BAD_PARAM;
	EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	if (!EVP_CipherInit_ex2(ctx, c, key, NULL, enc, NULL))
		return CRD_ST_ENGINE;
	if (enc) {
		if (EVP_CipherUpdate(ctx, w->kw, &n, op->src, (int)op->len) <=
			    0 ||
		    n != (int)op->len + 8)
			return CRD_ST_ENGINE;
		memcpy(op->tag, w->kw, 8);
		memcpy(op->dst, w->kw + 8, op->len);
		OPENSSL_cleanse(w->kw, op->len + 8);
		return CRD_ST_OK;
	}
	/* src may be dst (in place): unwrap from a copy, into private
	 * memory. dst is the client's shared arena: an unwrap that fails
	 * its check must never be readable there, not even for the moment
	 * before it would be wiped (raw AES decryptions under the KEK). */
	memcpy(w->kw, op->tag, 8);
	memcpy(w->kw + 8, op->src, op->len);
	int ok = EVP_CipherUpdate(ctx, w->kw_out, &n, w->kw, (int)op->len + 8) >
			 0 &&
		 n == (int)op->len;
	OPENSSL_cleanse(w->kw, op->len + 8);
	if (ok)
		memcpy(op->dst, w->kw_out, op->len);
	else
		memset(op->dst, 0, op->len);
	OPENSSL_cleanse(w->kw_out, op->len);
	return ok ? CRD_ST_OK : CRD_ST_AUTH_FAILED;
}

/*
 * AES key wrap with padding (RFC 5649) through EVP's AES-n-WRAP-PAD. The
 * wrap of n bytes is 8 + n + pad bytes (pad = (8 - n % 8) % 8, the zeros
 * that fill the last semiblock): the op's tag is its first tag_len = 8 +
 * pad bytes and its data the other n, so tag || data is the RFC's
 * output, with the AEAD shape (len in, len out) of aes-kw. The session's
 * tag length thus says n mod 8, and an unwrap checks, besides the RFC's
 * integrity check, that the wrapped length (MLI) is len. An unwrap runs
 * in private memory as ossl_kw's does; a failing one zeroes the output.
 * Returns CRD_ST_*.
 */
static int ossl_kwp(struct ossl_worker *w, EVP_CIPHER *c, const uint8_t *key,
		    struct engine_op *op)
{
	EVP_CIPHER_CTX *ctx = w->ctx;
	int enc = op->op == CRD_OP_ENCRYPT;
	uint32_t pad = (8 - op->len % 8) % 8, total = 8 + op->len + pad;
	int n = 0;

	if (op->len < 1 || op->len > OSSL_KW_MAX || op->tag_len != 8 + pad)
		return CRD_ST_BAD_PARAM;
	EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	if (!EVP_CipherInit_ex2(ctx, c, key, NULL, enc, NULL))
		return CRD_ST_ENGINE;
	if (enc) {
		if (EVP_CipherUpdate(ctx, w->kw, &n, op->src, (int)op->len) <=
			    0 ||
		    n != (int)total)
			return CRD_ST_ENGINE;
		memcpy(op->tag, w->kw, op->tag_len);
		memcpy(op->dst, w->kw + op->tag_len, op->len);
		OPENSSL_cleanse(w->kw, total);
		return CRD_ST_OK;
	}
	/* as ossl_kw: from a copy (src may be dst), into private memory;
	 * EVP writes the padded length there before it checks */
	memcpy(w->kw, op->tag, op->tag_len);
	memcpy(w->kw + op->tag_len, op->src, op->len);
	int ok = EVP_CipherUpdate(ctx, w->kw_out, &n, w->kw, (int)total) > 0 &&
		 n == (int)op->len;
	OPENSSL_cleanse(w->kw, total);
	if (ok)
		memcpy(op->dst, w->kw_out, op->len);
	else
		memset(op->dst, 0, op->len);
	OPENSSL_cleanse(w->kw_out, op->len + pad);
	return ok ? CRD_ST_OK : CRD_ST_AUTH_FAILED;
}

/* CBC, CTR, ECB, XTS. Returns CRD_ST_*. */
/* CBC, CTR, ECB, XTS. keyed: the context already holds this session's
 * key for this direction (the previous op of the burst), so only the IV
 * is set: a key schedule per op costs as much as a 512-byte XTS sector.
 * Returns CRD_ST_*. */
static int ossl_cipher(struct ossl_worker *w, EVP_CIPHER *c, const uint8_t *key,
		       struct engine_op *op, int keyed)
{
	EVP_CIPHER_CTX *ctx = w->ctx;
	int enc = op->op == CRD_OP_ENCRYPT, n = 0, m = 0;
	const uint8_t *iv = op->iv_len ? op->iv : NULL;
	if (keyed) {
		if (!EVP_CipherInit_ex2(ctx, NULL, NULL, iv, enc, NULL))
			return CRD_ST_ENGINE;
	} else {
		if (!EVP_CipherInit_ex2(ctx, c, key, iv, enc, NULL))
			return CRD_ST_ENGINE;
		EVP_CIPHER_CTX_set_padding(ctx, 0);
	}
	/* XTS takes the whole data unit in one update. */
	if (op->len && !EVP_CipherUpdate(ctx, op->dst, &n, op->src, op->len))
		return CRD_ST_ENGINE;
	if (!EVP_CipherFinal_ex(ctx, op->dst + n, &m) ||
	    (uint32_t)(n + m) != op->len)
		return CRD_ST_ENGINE;
	return CRD_ST_OK;
}

/*
 * authenc: encrypt-then-MAC over aad || ciphertext; decrypt verifies the
 * MAC over aad || ciphertext first and, on a mismatch, releases nothing
 * but zeros. keyed as for ossl_cipher(). Returns CRD_ST_*.
 */
static int ossl_authenc(struct ossl_worker *w, EVP_CIPHER *c,
			const struct ossl_key *k, struct engine_op *op,
			int keyed)
{
	uint8_t mac[EVP_MAX_MD_SIZE];
	int st;
	if (op->op == CRD_OP_ENCRYPT) {
		st = ossl_cipher(w, c, k->raw, op, keyed);
		if (st == CRD_ST_OK)
			st = ossl_hmac_authenc(w->hmac, op, k->auth,
					       k->auth_len, op->dst, mac);
		if (st == CRD_ST_OK)
			memcpy(op->tag, mac, op->tag_len);
		return st;
	}
	st = ossl_hmac_authenc(w->hmac, op, k->auth, k->auth_len, op->src, mac);
	if (st == CRD_ST_OK && engine_ct_memcmp(mac, op->tag, op->tag_len)) {
		if (op->len)
			memset(op->dst, 0, op->len);
		return CRD_ST_AUTH_FAILED;
	}
	return st == CRD_ST_OK ? ossl_cipher(w, c, k->raw, op, keyed) : st;
}

static void ossl_process(void *wctx, struct engine_op *ops, unsigned n)
{
	struct ossl_worker *w = wctx;
	/* What the context is keyed with, within this burst only: sessions
	 * cannot be destroyed under a running burst (grace periods), and
	 * the context is reset at its end. */
	const struct session *keyed_sess = NULL;
	uint8_t keyed_op = 0;
	int hmac_used = 0, auth_used = 0, pk_used = 0;
	for (unsigned i = 0; i < n; i++) {
		struct engine_op *op = &ops[i];
		const struct session *s = op->sess;
		const struct ossl_key *k = (const struct ossl_key *)s->key;
		if (crd_alg_pkey(s->alg)) {
			op->status = ossl_pk_run(w->pk, op);
			pk_used = 1;
			continue;
		}
		if (auth_alg(s->alg)) {
			op->status = ossl_auth_run(w->auth, op);
			auth_used = 1;
			continue;
		}
		EVP_CIPHER *c =
			w->cipher[s->alg][ossl_key_idx(s->alg, s->key_len)];
		if (s->alg == CRD_ALG_AES_KW) {
			op->status = ossl_kw(w, c, k->raw, op);
			keyed_sess = NULL;
			continue;
		}
		if (s->alg == CRD_ALG_AES_KWP) {
			op->status = ossl_kwp(w, c, k->raw, op);
			keyed_sess = NULL;
			continue;
		}
		if (s->alg == CRD_ALG_AES_CCM) {
			op->status = ossl_ccm(w->ctx, c, k->raw, op);
			keyed_sess = NULL;
			continue;
		}
		/* ChaCha20-Poly1305 streams as GCM does */
		if (s->alg == CRD_ALG_AES_GCM || s->alg == CRD_ALG_AES_GMAC ||
		    s->alg == CRD_ALG_CHACHA20_POLY1305) {
			op->status = ossl_aead(w->ctx, c, k->raw, op);
			keyed_sess = NULL;
			continue;
		}
		if (s->alg == CRD_ALG_AES_GCM_RFC4106) {
			/* nonce = salt (the key's last 4 bytes) || IV */
			uint8_t nonce[12];
			const uint8_t *iv = op->iv;
			memcpy(nonce, k->raw + s->key_len - 4, 4);
			memcpy(nonce + 4, iv, 8);
			op->iv = nonce;
			op->iv_len = 12;
			op->status = ossl_aead(w->ctx, c, k->raw, op);
			op->iv = iv;
			op->iv_len = 8;
			keyed_sess = NULL;
			continue;
		}
		int keyed = keyed_sess == s && keyed_op == op->op;
		if (crd_alg_kind(s->alg) == CRD_KIND_AUTHENC) {
			op->status = ossl_authenc(w, c, k, op, keyed);
			hmac_used = 1;
		} else {
			op->status = ossl_cipher(w, c, k->raw, op, keyed);
		}
		keyed_sess = op->status == CRD_ST_OK ? s : NULL;
		keyed_op = op->op;
	}
	/* The context holds the last key schedule (which begins with the
	 * key itself): reset it, which cleanses and frees it, once per
	 * burst rather than leaving a session's key behind its destroy. */
	EVP_CIPHER_CTX_reset(w->ctx);
	ossl_auth_burst_end(w->auth);
	if (hmac_used)
		ossl_hmac_wipe(w->hmac);
	/* EVP_MAC_init's key set-up may leave key bytes below this frame,
	 * as authenc's does (openssl_authenc.c). */
	if (auth_used || pk_used) /* and the key pairs' bignum frames */
		engine_burn_stack();
}

static void ossl_session_fini(struct session *s)
{
	if (crd_alg_pkey(s->alg))
		ossl_pk_session_fini(s);
}

const struct engine engine_openssl = {
	.name = "openssl",
	.caps = ossl_caps,
	.n_caps = sizeof(ossl_caps) / sizeof(ossl_caps[0]),
	.probe = ossl_probe,
	.session_init = ossl_session_init,
	.worker_init = ossl_worker_init,
	.worker_fini = ossl_worker_fini,
	.process = ossl_process,
	.session_fini = ossl_session_fini,
	.stream = ossl_stream,
};
