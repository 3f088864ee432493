/* SPDX-License-Identifier: MIT */
/*
 * TLS CBC records: AES-CBC with libssl's tls-version and tls-mac-size set
 * (OpenSSL 3.0's default provider semantics). Each update is one whole
 * record, in place:
 *
 * - sealing, libssl hands over header-less content || MAC (TLS >= 1.1:
 *   after an explicit IV block it filled with random bytes); the cipher
 *   appends the TLS padding (n + 1 bytes of value n, 1 .. 16 bytes) and
 *   encrypts it all through the daemon, chaining the IV across records
 *   (TLS 1.0's implicit IV);
 * - opening, the record is decrypted through the daemon, the explicit IV
 *   block dropped (TLS >= 1.1), the padding checked and the MAC copied
 *   out in constant time; the length returned excludes IV, padding and
 *   MAC, and tls-mac points at the MAC. libssl computes the HMAC itself
 *   and compares. A bad padding is not an error here: it makes the MAC a
 *   random one that will not verify, so a peer sees one failure, "bad
 *   record MAC", whatever was wrong, and in the same time (Lucky 13,
 *   POODLE for TLS). With encrypt-then-MAC (tls-mac-size 0) the MAC was
 *   checked before decryption and a bad padding fails the update.
 *
 * "Constant time" here: no branch and no memory index depends on a
 * decrypted byte or on anything derived from one (the padding length,
 * the MAC's position, whether the padding is good). Loops run over
 * bounds that depend only on the record length and the MAC size, which
 * the peer already knows. The masks are all-ones or zero size_t values
 * made with arithmetic; ct_hide stops the compiler from turning them
 * back into branches.
 */
#include "prov_cipher.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include <openssl/prov_ssl.h>
#include <openssl/rand.h>

enum {
	BLK = 16,
	PAD_MAX = 256, /* the padding length byte and up to 255 more */
};

/* ---- Constant-time helpers (operands below 2^63) ---- */

static inline size_t ct_hide(size_t v)
{
	__asm__("" : "+r"(v));
	return v;
}

/* All ones if a < b, else 0. a - b wraps to above 2^63 exactly when a < b. */
static inline size_t ct_lt(size_t a, size_t b)
{
	return ct_hide((size_t)0 -
		       ((a - b) >> (sizeof(size_t) * CHAR_BIT - 1)));
}

static inline size_t ct_ge(size_t a, size_t b)
{
	return ~ct_lt(a, b);
}

/* All ones if a == b: x = a ^ b is 0 exactly when both x - 1 and ~x
 * have the top bit set. */
static inline size_t ct_eq(size_t a, size_t b)
{
	size_t x = a ^ b;
	return ct_hide((size_t)0 -
		       (((x - 1) & ~x) >> (sizeof(size_t) * CHAR_BIT - 1)));
}

/* ---- Parameters ---- */

static int tls_version_ok(unsigned v)
{
	switch (v) {
	case TLS1_VERSION:
	case TLS1_1_VERSION:
	case TLS1_2_VERSION:
	case DTLS1_VERSION:
	case DTLS1_2_VERSION:
	case DTLS1_BAD_VER:
		return 1;
	default:
		return 0;
	}
}

/* TLS >= 1.1 (and every DTLS): each record starts with its own IV. */
static int explicit_iv(unsigned v)
{
	return v != TLS1_VERSION;
}

int pct_set_ctx_params(struct pc_ctx *c, const OSSL_PARAM params[])
{
	const OSSL_PARAM *p;
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_TLS_VERSION))) {
		unsigned v;
		if (!OSSL_PARAM_get_uint(p, &v)) {
			PROV_ERR(c->p, PROV_R_BAD_PARAM, "%s", p->key);
			return 0;
		}
		if (v && (c->ci->kind != PC_CBC || !tls_version_ok(v))) {
			PROV_ERR(c->p, PROV_R_UNSUPPORTED,
				 "TLS records with protocol version 0x%04x on "
				 "this cipher (AES-CBC with TLS 1.0 .. 1.2 and "
				 "DTLS only)",
				 v);
			return 0;
		}
		c->tls_version = v;
	}
	if ((p = prov_param_const(params, OSSL_CIPHER_PARAM_TLS_MAC_SIZE))) {
		size_t v;
		if (!OSSL_PARAM_get_size_t(p, &v) || v > PC_TLS_MAC_MAX) {
			PROV_ERR(c->p, PROV_R_BAD_PARAM, "%s", p->key);
			return 0;
		}
		c->tls_mac_size = v;
	}
	return 1;
}

int pct_get_ctx_params(struct pc_ctx *c, OSSL_PARAM params[])
{
	OSSL_PARAM *p = prov_param(params, OSSL_CIPHER_PARAM_TLS_MAC);
	/* Valid until the next update, as the default provider's. */
	if (p && !OSSL_PARAM_set_octet_ptr(p, c->tls_mac, c->tls_mac_size))
		return 0;
	return 1;
}

/* ---- Opening ---- */

/* rec[0 .. len) is a decrypted record without its explicit IV, whose
 * last m bytes before the padding are the MAC. *outl: the content's
 * length; mac[0 .. m): the MAC, or random bytes when the padding is bad.
 * 0, or -EBADMSG when the record is publicly invalid (too short for a
 * padding byte and a MAC) or, without a MAC (encrypt-then-MAC, where
 * the record was authenticated already), its padding is bad. */
static int tls_open(struct prov *p, const uint8_t *rec, size_t len, size_t m,
		    uint8_t *mac, size_t *outl)
{
	if (len < 1 + m)
		return -EBADMSG; /* public: the length is on the wire */

	/* The padding: its last byte says how many bytes of that same value
	 * precede it. Every byte that could be padding is looked at. */
	size_t pad = rec[len - 1];
	size_t good = ct_ge(len, 1 + m + pad);
	size_t check = len < PAD_MAX ? len : PAD_MAX;
	for (size_t i = 1; i < check; i++) {
		size_t in_pad = ct_ge(pad, i);
		good &= ~(in_pad & ~ct_eq(rec[len - 1 - i], pad));
	}
	/* A bad padding is taken as none: the MAC is then the last m. */
	size_t end = len - (good & (pad + 1));

	if (m == 0) {
		if (!good)
			return -EBADMSG; /* authenticated before: public */
		*outl = end;
		return 0;
	}

	/* The MAC is rec[end - m .. end); end is secret but lies in the
	 * last m + 256 bytes. Gather it rotated: byte k of the MAC lands in
	 * rot[(r + k) % m], where r is its start's offset from scan (mod
	 * m), itself gathered with a mask; then undo the rotation reading
	 * every byte of rot for each output byte. */
	size_t start = end - m;
	size_t scan = len > m + PAD_MAX ? len - (m + PAD_MAX) : 0;
	uint8_t rot[PC_TLS_MAC_MAX] = { 0 }, rnd[PC_TLS_MAC_MAX];
	size_t r = 0, j = 0;
	for (size_t i = scan; i < len; i++) {
		size_t in_mac = ct_ge(i, start) & ct_lt(i, end);
		r |= j & ct_eq(i, start);
		rot[j] |= (uint8_t)(rec[i] & in_mac);
		j = j + 1 == m ? 0 : j + 1; /* public: i and m */
	}
	/* Drawn whether or not it is used. */
	if (prov_rand(p, rnd, m)) {
		OPENSSL_cleanse(rot, sizeof(rot));
		return -EIO;
	}
	for (size_t k = 0; k < m; k++) {
		size_t at = r + k;
		at -= m & ct_ge(at, m);
		size_t v = 0;
		for (size_t t = 0; t < m; t++)
			v |= rot[t] & ct_eq(t, at);
		mac[k] = (uint8_t)((v & good) | (rnd[k] & ~good));
	}
	OPENSSL_cleanse(rot, sizeof(rot));
	OPENSSL_cleanse(rnd, sizeof(rnd));
	*outl = start;
	return 0;
}

/* ---- The record update ---- */

int pct_update(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl)
{
	*outl = 0;
	if (!pc_keyed(c))
		return -EINVAL;
	if (!in || in != out || !c->pad || inl > INT_MAX) {
		PROV_ERR(
			c->p, PROV_R_BAD_PARAM,
			"a TLS record is one in-place update, with padding on");
		return -EINVAL;
	}
	if (!c->enc && inl % BLK) {
		PROV_ERR(c->p, PROV_R_BAD_DECRYPT,
			 "TLS record of %zu bytes: not whole blocks", inl);
		return -EBADMSG;
	}
	/* The padding goes on below, once the path is known: in-process,
	 * the default provider pads the record itself. */
	size_t padn = c->enc ? BLK - inl % BLK : 0;
	if (c->enc && outsize < inl + padn) {
		PROV_ERR(c->p, PROV_R_BAD_PARAM, "output buffer too small");
		return -ENOBUFS;
	}
	if (!c->started) {
		/* The whole connection is one message: min_size does not
		 * apply (its first record, Finished, is always small). */
		int r = pc_begin(c, SIZE_MAX, 0);
		if (r == PC_SW) {
			unsigned v = c->tls_version;
			size_t m = c->tls_mac_size;
			OSSL_PARAM t[] = {
				OSSL_PARAM_construct_uint(
					OSSL_CIPHER_PARAM_TLS_VERSION, &v),
				OSSL_PARAM_construct_size_t(
					OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &m),
				OSSL_PARAM_END
			};
			if (!EVP_CIPHER_CTX_set_params(c->swctx, t))
				return -EINVAL;
		}
		if (r)
			return r; /* -errno, or PC_SW */
	}

	if (c->enc) {
		memset(out + inl, (int)(padn - 1), padn);
		int err = pcb_crypt(c, out, out, inl + padn);
		if (!err)
			*outl = inl + padn;
		return err;
	}

	int err = pcb_crypt(c, out, out, inl);
	if (err)
		return err;
	const uint8_t *rec = out;
	size_t len = inl;
	if (explicit_iv(c->tls_version)) {
		if (len < BLK)
			goto bad;
		rec += BLK;
		len -= BLK;
	}
	err = tls_open(c->p, rec, len, c->tls_mac_size, c->tls_mac, outl);
	if (err == -EBADMSG)
		goto bad;
	if (err)
		PROV_ERR(c->p, PROV_R_OP, "TLS record: no random bytes");
	return err;
bad:
	/* Only what the peer knows already: the record's length, or (with
	 * encrypt-then-MAC) that its authenticated padding is wrong. */
	PROV_ERR(c->p, PROV_R_BAD_DECRYPT, "TLS record of %zu bytes", inl);
	return -EBADMSG;
}
