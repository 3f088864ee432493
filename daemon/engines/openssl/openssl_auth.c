/* SPDX-License-Identifier: MIT */
/*
 * The openssl engine's authentication-only algorithms (auth.h): HMAC and
 * CMAC through EVP_MAC, digests through EVP_Digest, and AES-XCBC-MAC
 * (RFC 3566), which OpenSSL lacks, on EVP AES-128. Also the pieces both
 * engines share: digest sizes, the generate/verify step and XCBC (aesni
 * uses it for messages longer than an ipsec-mb job).
 *
 * The session's slot holds the key (HMAC: hashed first when longer than
 * the hash block, RFC 2104; XCBC: the derived k1 || k2 || k3); each op
 * keys the worker's context with it, and the contexts are rekeyed with
 * zeros at the end of a burst so that no session's key state outlives it.
 */
#include "auth.h"
#include "session.h"

#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

enum { AUTH_N_SHA = 5, AUTH_N_CMAC = 3, AUTH_KEY_RAW = 128 };

struct ossl_auth_key {
	uint8_t key[AUTH_KEY_RAW];
	uint16_t len;
};
_Static_assert(sizeof(struct ossl_auth_key) <=
		       sizeof(((struct session *)0)->key),
	       "auth key fits the session");

/* HMAC-SHA-n and SHA-n share an index: 0 SHA-1 .. 4 SHA-512. */
static const struct {
	const char *name;
	uint8_t digest, block;
} auth_sha[AUTH_N_SHA] = {
	{ "SHA1", 20, 64 },    { "SHA224", 28, 64 },  { "SHA256", 32, 64 },
	{ "SHA384", 48, 128 }, { "SHA512", 64, 128 },
};

int auth_sha_idx(unsigned alg)
{
	return crd_alg_auth_only(alg) ? crd_alg_sha_idx(alg) : -1;
}

const char *auth_md_name(unsigned alg)
{
	int i = auth_sha_idx(alg);
	return i < 0 ? NULL : auth_sha[i].name;
}

unsigned auth_digest_len(unsigned alg)
{
	int i = auth_sha_idx(alg);
	return i < 0 ? 0 : auth_sha[i].digest;
}

unsigned auth_block_len(unsigned alg)
{
	int i = auth_sha_idx(alg);
	return i < 0 ? 0 : auth_sha[i].block;
}

int auth_finish(struct engine_op *op, const uint8_t *mac)
{
	if (op->op == CRD_OP_ENCRYPT) {
		memcpy(op->tag, mac, op->tag_len);
		return CRD_ST_OK;
	}
	return engine_ct_memcmp(mac, op->tag, op->tag_len) ? CRD_ST_AUTH_FAILED
							   : CRD_ST_OK;
}

/* ---- RFC 3566 ---- */

int auth_xcbc_derive(EVP_CIPHER_CTX *ctx, const uint8_t key[16], uint8_t k[48])
{
	uint8_t in[48];
	int n = 0, ok;
	/* K1 = E(K, 0x01^16), K2 = E(K, 0x02^16), K3 = E(K, 0x03^16) */
	memset(in, 1, 16);
	memset(in + 16, 2, 16);
	memset(in + 32, 3, 16);
	ok = EVP_EncryptInit_ex2(ctx, EVP_aes_128_ecb(), key, NULL, NULL) &&
	     EVP_CIPHER_CTX_set_padding(ctx, 0) &&
	     EVP_EncryptUpdate(ctx, k, &n, in, sizeof(in)) && n == 48;
	EVP_CIPHER_CTX_reset(ctx);
	return ok ? 0 : -EIO;
}

/*
 * XCBC is CBC-MAC under K1 whose last block is first XORed with K2
 * (complete) or padded with 10* and XORed with K3: a CBC encryption
 * under K1 from a zero IV of that message, whose last ciphertext block
 * is the MAC. The ciphertext goes through a small buffer.
 */
int auth_xcbc_mac(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *aes128cbc,
		  const uint8_t k[48], const uint8_t *msg, size_t len,
		  uint8_t out[16])
{
	static const uint8_t zero[16];
	uint8_t buf[1024], last[16];
	size_t head = len ? (len - 1) / 16 * 16 : 0, rest = len - head;
	int n = 0, ok;

	ok = EVP_EncryptInit_ex2(ctx, aes128cbc, k, zero, NULL) &&
	     EVP_CIPHER_CTX_set_padding(ctx, 0);
	for (size_t off = 0; ok && off < head;) {
		size_t c = head - off < sizeof(buf) ? head - off : sizeof(buf);
		ok = EVP_EncryptUpdate(ctx, buf, &n, msg + off, (int)c);
		off += c;
	}
	memset(last, 0, sizeof(last));
	if (rest)
		memcpy(last, msg + head, rest);
	if (rest < 16)
		last[rest] = 0x80;
	const uint8_t *kx = rest == 16 ? k + 16 : k + 32;
	for (int i = 0; i < 16; i++)
		last[i] ^= kx[i];
	ok = ok && EVP_EncryptUpdate(ctx, out, &n, last, 16) && n == 16;
	explicit_bzero(buf, head < sizeof(buf) ? head : sizeof(buf));
	explicit_bzero(last, sizeof(last));
	return ok ? 0 : -EIO;
}

/* ---- Sessions ---- */

const uint8_t *ossl_auth_key_raw(const struct session *s, unsigned *len)
{
	const struct ossl_auth_key *k = (const struct ossl_auth_key *)s->key;
	*len = k->len;
	return k->key;
}

int ossl_auth_session_init(struct session *s, const uint8_t *key,
			   size_t key_len)
{
	struct ossl_auth_key *k = (struct ossl_auth_key *)s->key;
	int i = auth_sha_idx(s->alg);
	unsigned n = 0;

	if (crd_alg_kind(s->alg) == CRD_KIND_HASH)
		return key_len ? -EINVAL : 0;
	if (s->alg == CRD_ALG_AES_XCBC_MAC) {
		EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
		int r = ctx && key_len == 16
				? auth_xcbc_derive(ctx, key, k->key)
				: -EINVAL;
		EVP_CIPHER_CTX_free(ctx);
		k->len = 48;
		return r;
	}
	if (i >= 0 && key_len > auth_sha[i].block) { /* RFC 2104 */
		if (!EVP_Digest(key, key_len, k->key, &n,
				EVP_get_digestbyname(auth_sha[i].name), NULL))
			return -EINVAL;
		k->len = n;
		return 0;
	}
	if (key_len > sizeof(k->key))
		return -EINVAL;
	if (key_len) /* an empty HMAC key may come as NULL */
		memcpy(k->key, key, key_len);
	k->len = key_len;
	return 0;
}

/* ---- Workers ---- */

struct ossl_auth {
	EVP_MAC_CTX *hmac[AUTH_N_SHA];	/* digest set once */
	EVP_MAC_CTX *cmac[AUTH_N_CMAC]; /* AES-128/192/256-CBC set once */
	EVP_MD *md[AUTH_N_SHA];
	EVP_MD_CTX *mdctx;
	EVP_CIPHER *cbc128;
	EVP_CIPHER_CTX *xcbc;
	unsigned used; /* bit i: hmac[i]; bit 8 + i: cmac[i]; bit 16: xcbc */
};

void ossl_auth_free(struct ossl_auth *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < AUTH_N_SHA; i++) {
		EVP_MAC_CTX_free(a->hmac[i]); /* cleanses */
		EVP_MD_free(a->md[i]);
	}
	for (unsigned i = 0; i < AUTH_N_CMAC; i++)
		EVP_MAC_CTX_free(a->cmac[i]);
	EVP_MD_CTX_free(a->mdctx);
	EVP_CIPHER_CTX_free(a->xcbc);
	EVP_CIPHER_free(a->cbc128);
	OPENSSL_free(a);
}

static EVP_MAC_CTX *ossl_auth_mac(EVP_MAC *mac, const char *param,
				  const char *value)
{
	EVP_MAC_CTX *x = EVP_MAC_CTX_new(mac);
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_utf8_string(param, (char *)value, 0),
		OSSL_PARAM_construct_end(),
	};
	if (x && !EVP_MAC_CTX_set_params(x, p)) {
		EVP_MAC_CTX_free(x);
		x = NULL;
	}
	return x;
}

struct ossl_auth *ossl_auth_new(void)
{
	static const char *const cbc[AUTH_N_CMAC] = { "AES-128-CBC",
						      "AES-192-CBC",
						      "AES-256-CBC" };
	struct ossl_auth *a = OPENSSL_zalloc(sizeof(*a));
	EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC *cmac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	int ok = a && hmac && cmac;

	for (unsigned i = 0; ok && i < AUTH_N_SHA; i++) {
		a->hmac[i] = ossl_auth_mac(hmac, OSSL_MAC_PARAM_DIGEST,
					   auth_sha[i].name);
		a->md[i] = EVP_MD_fetch(NULL, auth_sha[i].name, NULL);
		ok = a->hmac[i] && a->md[i];
	}
	for (unsigned i = 0; ok && i < AUTH_N_CMAC; i++)
		ok = (a->cmac[i] = ossl_auth_mac(cmac, OSSL_MAC_PARAM_CIPHER,
						 cbc[i])) != NULL;
	if (ok) {
		a->mdctx = EVP_MD_CTX_new();
		a->xcbc = EVP_CIPHER_CTX_new();
		a->cbc128 = EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL);
		ok = a->mdctx && a->xcbc && a->cbc128;
	}
	EVP_MAC_free(hmac); /* the contexts hold their own references */
	EVP_MAC_free(cmac);
	if (!ok) {
		ossl_auth_free(a);
		return NULL;
	}
	return a;
}

void ossl_auth_burst_end(struct ossl_auth *a)
{
	static const uint8_t zero[32];
	for (unsigned i = 0; i < AUTH_N_SHA; i++)
		if (a->used & 1u << i)
			EVP_MAC_init(a->hmac[i], zero, sizeof(zero), NULL);
	for (unsigned i = 0; i < AUTH_N_CMAC; i++)
		if (a->used & 1u << (8 + i))
			EVP_MAC_init(a->cmac[i], zero, 16 + 8 * i, NULL);
	if (a->used & 1u << 16)
		EVP_CIPHER_CTX_reset(a->xcbc);
	a->used = 0;
}

/* One keyed MAC over the op's source into mac. 0 or -EIO. */
static int ossl_auth_mac_run(EVP_MAC_CTX *x, const struct ossl_auth_key *k,
			     const struct engine_op *op, uint8_t *mac)
{
	size_t n = 0;
	return EVP_MAC_init(x, k->key, k->len, NULL) &&
			       (!op->len ||
				EVP_MAC_update(x, op->src, op->len)) &&
			       EVP_MAC_final(x, mac, &n, EVP_MAX_MD_SIZE)
		       ? 0
		       : -EIO;
}

int ossl_auth_run(struct ossl_auth *a, struct engine_op *op)
{
	const struct session *s = op->sess;
	const struct ossl_auth_key *k = (const struct ossl_auth_key *)s->key;
	uint8_t mac[EVP_MAX_MD_SIZE];
	int i = auth_sha_idx(s->alg), r = -EIO;
	unsigned n = 0;

	if (crd_alg_kind(s->alg) == CRD_KIND_HASH) {
		r = EVP_DigestInit_ex2(a->mdctx, a->md[i], NULL) &&
				    (!op->len ||
				     EVP_DigestUpdate(a->mdctx, op->src,
						      op->len)) &&
				    EVP_DigestFinal_ex(a->mdctx, mac, &n)
			    ? 0
			    : -EIO;
	} else if (s->alg == CRD_ALG_AES_CMAC) {
		i = (k->len - 16) / 8;
		a->used |= 1u << (8 + i);
		r = ossl_auth_mac_run(a->cmac[i], k, op, mac);
	} else if (s->alg == CRD_ALG_AES_XCBC_MAC) {
		a->used |= 1u << 16;
		r = auth_xcbc_mac(a->xcbc, a->cbc128, k->key, op->src, op->len,
				  mac);
	} else { /* HMAC */
		a->used |= 1u << i;
		r = ossl_auth_mac_run(a->hmac[i], k, op, mac);
	}
	int st = r ? CRD_ST_ENGINE : auth_finish(op, mac);
	explicit_bzero(mac, sizeof(mac));
	return st;
}
