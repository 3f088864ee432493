// SPDX-License-Identifier: MIT
/*
 * Key pairs' refusals (docs/asymmetric.md, ring_abi.h's contract), each
 * with the status the contract names, and the daemon still serving
 * after all of them:
 *
 * - CreateSession: a key of another type or size than the row's, an
 *   RSASSA-PSS key on an RSA row, a private key with bytes after it, 4 KiB of garbage, a key past
 *   CTL_PKEY_MAX;
 * - derive: a point off the curve, a compressed or short point, X25519's
 *   all-zero (small-order) point: CC_ERR_BAD_PARAM;
 * - ops the row lacks (x25519 sign, ed25519 derive, ECDSA encrypt):
 *   CC_ERR_BAD_PARAM; a public key's session signing, decrypting or
 *   deriving: CC_ERR_POLICY;
 * - RSA: a tampered OAEP ciphertext or the wrong label:
 *   CC_ERR_AUTH_FAILED; PKCS#1 v1.5 decryption asked for:
 *   CC_ERR_BAD_PARAM;
 * - parameters: reserved bytes, an unknown digest or padding, no digest
 *   for RSA, a digest for EdDSA, a salt off PSS, a 12-byte IV, a digest
 *   of the wrong length: CC_ERR_BAD_PARAM;
 * - descriptors: a tag, scatter-gather, a session-less key pair, an
 *   arena IV: CC_ERR_BAD_DESC; a stream piece: -EOPNOTSUPP, as on any
 *   algorithm that does not stream; a destination without the room of the
 *   longest output: CC_ERR_BAD_RANGE; the library's -ENOSPC for a short
 *   output buffer.
 *
 * Exit: 0 passed, 1 failed.
 */
#include "fixture.h"
#include "pk_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>
#include <openssl/rsa.h>

static struct cc_conn *conn;
static struct cc_queue *q;

/* One op through q; its completion's status. */
static int run(struct cc_op *op)
{
	struct cc_completion c;
	op->user_data = 42;
	int r = fx_run_burst(q, op, 1, &c, 30000);
	return r ? r : c.status;
}

#define WANT(got, want, what)                                                  \
	do {                                                                   \
		int g_ = (got);                                                \
		PK_CHECK(g_ == (want), "%s: got %d (%s), want %d", what, g_,   \
			 cc_strerror(g_), want);                               \
	} while (0)

static void bad_keys(void)
{
	static const enum cc_alg alg[] = { CC_ALG_RSA_2048, CC_ALG_EC_P256,
					   CC_ALG_X25519, CC_ALG_ED448 };
	static const enum cc_alg other[] = { CC_ALG_RSA_3072, CC_ALG_EC_P384,
					     CC_ALG_ED25519, CC_ALG_X448 };
	int err;
	for (unsigned i = 0; i < 4; i++) {
		EVP_PKEY *k = pk_keygen(other[i]);
		WANT(pk_session(conn, alg[i], k, 0, &err) ? 0 : err, -EINVAL,
		     "a key of another row");
		WANT(pk_session(conn, alg[i], k, 1, &err) ? 0 : err, -EINVAL,
		     "a public key of another row");
		EVP_PKEY_free(k);
	}
	/* An RSASSA-PSS key (id-RSASSA-PSS, its SPKI pinning PSS): the RSA
	 * rows take rsaEncryption keys alone (docs/asymmetric.md; Wycheproof's
	 * rsa_pss_*_params files). */
	EVP_PKEY *pss = NULL;
	EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_from_name(NULL, "RSA-PSS", NULL);
	if (kc && EVP_PKEY_keygen_init(kc) > 0 &&
	    EVP_PKEY_CTX_set_rsa_keygen_bits(kc, 2048) > 0)
		EVP_PKEY_keygen(kc, &pss);
	EVP_PKEY_CTX_free(kc);
	PK_CHECK(pss, "an RSA-PSS key");
	if (pss) {
		WANT(pk_session(conn, CC_ALG_RSA_2048, pss, 0, &err) ? 0 : err,
		     -EINVAL, "an RSASSA-PSS private key");
		WANT(pk_session(conn, CC_ALG_RSA_2048, pss, 1, &err) ? 0 : err,
		     -EINVAL, "an RSASSA-PSS public key");
		EVP_PKEY_free(pss);
	}
	/* the right key with a byte after it */
	EVP_PKEY *k = pk_keygen(CC_ALG_EC_P256);
	uint8_t *der, buf[9000];
	size_t n = pk_der(k, 0, &der);
	memcpy(buf, der, n);
	buf[n] = 0;
	struct cc_session_params p = { .alg = CC_ALG_EC_P256,
				       .key = buf,
				       .key_len = n + 1 };
	uint32_t sid;
	WANT(cc_session_create(conn, &p, &sid), -EINVAL, "a byte after DER");
	OPENSSL_clear_free(der, n);
	EVP_PKEY_free(k);
	RAND_bytes(buf, sizeof(buf));
	p.key_len = 4096;
	WANT(cc_session_create(conn, &p, &sid), -EINVAL, "4 KiB of garbage");
	p.alg = CC_ALG_RSA_4096;
	buf[0] = 0x30; /* a SEQUENCE of garbage */
	buf[1] = 0x82;
	buf[2] = 0x0f;
	buf[3] = 0xfc;
	WANT(cc_session_create(conn, &p, &sid), -EINVAL, "a garbage SEQUENCE");
	p.key_len = 8193;
	WANT(cc_session_create(conn, &p, &sid), -EINVAL, "past CTL_PKEY_MAX");
}

static void bad_derives(void)
{
	int err;
	EVP_PKEY *k = pk_keygen(CC_ALG_EC_P256);
	uint32_t sid = pk_session(conn, CC_ALG_EC_P256, k, 0, &err);
	uint8_t pt[80], out[160];
	size_t n = pk_peer_bytes(k, pt, sizeof(pt)), ol = sizeof(out);
	pt[n - 1] ^= 1; /* y + 1: off the curve */
	WANT(cc_pk_derive(conn, sid, pt, n, out, &ol), CC_ERR_BAD_PARAM,
	     "a point off the curve");
	pt[n - 1] ^= 1;
	ol = sizeof(out);
	WANT(cc_pk_derive(conn, sid, pt, n, out, &ol), 0, "the point itself");
	ol = sizeof(out);
	WANT(cc_pk_derive(conn, sid, pt, n - 1, out, &ol), CC_ERR_BAD_PARAM,
	     "a short point");
	pt[0] = 2; /* compressed (x only) */
	ol = sizeof(out);
	WANT(cc_pk_derive(conn, sid, pt, 33, out, &ol), CC_ERR_BAD_PARAM,
	     "a compressed point");
	cc_session_destroy(conn, sid);
	EVP_PKEY_free(k);

	k = pk_keygen(CC_ALG_X25519);
	sid = pk_session(conn, CC_ALG_X25519, k, 0, &err);
	memset(pt, 0, 32);
	ol = sizeof(out);
	WANT(cc_pk_derive(conn, sid, pt, 32, out, &ol), CC_ERR_BAD_PARAM,
	     "X25519's zero point");
	ol = sizeof(out);
	WANT(cc_pk_derive(conn, sid, pt, 31, out, &ol), CC_ERR_BAD_PARAM,
	     "a 31-byte X25519 key");
	uint8_t sig[64];
	size_t sl = sizeof(sig);
	WANT(cc_pk_sign(conn, sid, NULL, pt, 32, sig, &sl), CC_ERR_BAD_PARAM,
	     "x25519 sign");
	uint32_t pub = pk_session(conn, CC_ALG_X25519, k, 1, &err);
	n = pk_peer_bytes(k, pt, sizeof(pt));
	ol = sizeof(out);
	WANT(pub ? cc_pk_derive(conn, pub, pt, n, out, &ol) : err,
	     CC_ERR_POLICY, "a public X25519 key derives");
	cc_session_destroy(conn, pub);
	cc_session_destroy(conn, sid);
	EVP_PKEY_free(k);

	k = pk_keygen(CC_ALG_ED25519);
	sid = pk_session(conn, CC_ALG_ED25519, k, 0, &err);
	ol = sizeof(out);
	WANT(cc_pk_derive(conn, sid, pt, 32, out, &ol), CC_ERR_BAD_PARAM,
	     "ed25519 derive");
	struct cc_pk_params pp = { .md = CC_PK_MD_SHA256 };
	sl = sizeof(sig);
	WANT(cc_pk_sign(conn, sid, &pp, pt, 32, sig, &sl), CC_ERR_BAD_PARAM,
	     "a digest for EdDSA");
	cc_session_destroy(conn, sid);
	EVP_PKEY_free(k);
}

static void bad_rsa(void)
{
	int err;
	EVP_PKEY *k = pk_keygen(CC_ALG_RSA_2048);
	uint32_t sid = pk_session(conn, CC_ALG_RSA_2048, k, 0, &err);
	uint32_t pub = pk_session(conn, CC_ALG_RSA_2048, k, 1, &err);
	uint8_t msg[32] = { 1 }, ct[256], pt[256], sig[256];
	size_t cl = sizeof(ct), pl = sizeof(pt), sl = sizeof(sig);
	struct cc_pk_params pp = { .pad = CC_PK_PAD_OAEP };

	WANT(cc_pk_encrypt(conn, pub, &pp, "L", 1, msg, 32, ct, &cl), 0,
	     "OAEP encrypt");
	WANT(cc_pk_decrypt(conn, sid, &pp, "L", 1, ct, cl, pt, &pl), 0,
	     "OAEP decrypt");
	pl = sizeof(pt);
	WANT(cc_pk_decrypt(conn, sid, &pp, "M", 1, ct, cl, pt, &pl),
	     CC_ERR_AUTH_FAILED, "the wrong label");
	ct[100] ^= 4;
	pl = sizeof(pt);
	WANT(cc_pk_decrypt(conn, sid, &pp, "L", 1, ct, cl, pt, &pl),
	     CC_ERR_AUTH_FAILED, "a tampered ciphertext");
	pl = sizeof(pt);
	WANT(cc_pk_decrypt(conn, sid, &pp, "L", 1, ct, cl - 1, pt, &pl),
	     CC_ERR_AUTH_FAILED, "a short ciphertext");
	pp.pad = CC_PK_PAD_PKCS1;
	pl = sizeof(pt);
	WANT(cc_pk_decrypt(conn, sid, &pp, NULL, 0, ct, cl, pt, &pl),
	     CC_ERR_BAD_PARAM, "PKCS#1 v1.5 decryption");
	pl = sizeof(pt);
	WANT(cc_pk_decrypt(conn, pub, NULL, NULL, 0, ct, cl, pt, &pl),
	     CC_ERR_POLICY, "a public key decrypts");
	WANT(cc_pk_sign(conn, pub, &(struct cc_pk_params){ .md = 3 }, msg, 32,
			sig, &sl),
	     CC_ERR_POLICY, "a public key signs");

	/* parameters */
	static const struct {
		struct cc_pk_params pp;
		size_t len;
		const char *what;
	} bad[] = {
		{ { .md = 3, .reserved = { [7] = 1 } }, 32, "reserved" },
		{ { .md = 3, .reserved0 = 1 }, 32, "reserved0" },
		{ { .md = 6 }, 32, "digest 6" },
		{ { .md = 0 }, 32, "no digest" },
		{ { .md = 3, .pad = 4 }, 32, "padding 4" },
		{ { .md = 3, .pad = CC_PK_PAD_OAEP }, 32, "OAEP signature" },
		{ { .md = 3, .salt_len = 20 }, 32, "a salt off PSS" },
		{ { .md = 3, .mgf1_md = 1 }, 32, "MGF1 off PSS" },
		{ { .md = 3, .pad = 2, .salt_len = -3 }, 32, "salt -3" },
		{ { .md = 3, .pad = 2, .mgf1_md = 7 }, 32, "MGF1 digest 7" },
		{ { .md = 3 }, 20, "a 20-byte SHA-256" },
		{ { .md = 3, .pad = 2, .salt_len = 300 }, 32, "salt 300" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sl = sizeof(sig);
		WANT(cc_pk_sign(conn, sid, &bad[i].pp, msg, bad[i].len, sig,
				&sl),
		     CC_ERR_BAD_PARAM, bad[i].what);
	}
	pp = (struct cc_pk_params){ .md = CC_PK_MD_SHA256 };
	sl = sizeof(sig);
	WANT(cc_pk_sign(conn, sid, &pp, msg, 32, sig, &sl), 0, "sign");
	WANT(cc_pk_verify(conn, sid, &pp, msg, 32, sig, 0), CC_ERR_BAD_PARAM,
	     "an empty signature");
	uint8_t long_sig[257] = { 0 };
	WANT(cc_pk_verify(conn, sid, &pp, msg, 32, long_sig, 257),
	     CC_ERR_BAD_PARAM, "a signature past the modulus");
	sl = 255;
	WANT(cc_pk_sign(conn, sid, &pp, msg, 32, sig, &sl), -ENOSPC,
	     "an output buffer short of the signature");

	/* descriptors through the queue */
	uint8_t *b = cc_buf_alloc(q, 4096);
	struct cc_op op = { .session = sid,
			    .dir = CC_SIGN,
			    .src = b,
			    .len = 32,
			    .dst = b + 1024,
			    .iv = &pp,
			    .iv_len = sizeof(pp) };
	memset(b, 1, 32);
	WANT(run(&op), 0, "a queued signature");
	struct cc_op o = op;
	o.tag = b + 2048;
	WANT(run(&o), CC_ERR_BAD_DESC, "a tag");
	o = op;
	o.iv_len = 12;
	WANT(run(&o), CC_ERR_BAD_PARAM, "a 12-byte IV");
	o = op;
	uint8_t long_iv[20] = { 0 };
	memcpy(b + 3000, long_iv, sizeof(long_iv));
	o.iv = b + 3000;
	o.iv_len = 20;
	WANT(run(&o), CC_ERR_BAD_DESC, "an arena IV");
	o = op;
	o.dst = b + 16; /* overlaps the digest */
	WANT(run(&o), CC_ERR_BAD_RANGE, "a destination over the source");
	struct cc_sgl_entry *l = (void *)(b + 3072);
	cc_sgl_set(q, l, 0, b, 32);
	o = op;
	o.src_sgl = l;
	o.src_nseg = 1;
	WANT(run(&o), CC_ERR_BAD_DESC, "scatter-gather");
	/* a stream piece: a key pair does not stream, which the daemon
	 * says as for any algorithm that does not (streams.c) */
	uint32_t handle;
	if (cc_stream_handle_get(q, &handle) == 0) {
		o = op;
		o.stream = handle;
		o.stream_flags = CC_STREAM_FIRST | CC_STREAM_LAST;
		WANT(run(&o), -EOPNOTSUPP, "a stream piece");
		cc_stream_handle_put(q, handle);
	}
	cc_buf_free(q, b);
	/* room for 255 bytes only, at the arena's end: the library sees it
	 * (the daemon's check is the same: BAD_RANGE) */
	size_t arena = cc_arena_size(q);
	uint8_t *all = cc_buf_alloc(q, arena);
	PK_CHECK(all, "the whole arena");
	if (all) {
		o = op;
		o.src = all;
		o.dst = all + arena - 255;
		WANT(run(&o), -EFAULT, "a destination short of the room");
		o.dst = all + arena - 256;
		WANT(run(&o), 0, "a destination of the room exactly");
		cc_buf_free(q, all);
	}
	cc_session_destroy(conn, pub);
	cc_session_destroy(conn, sid);
	EVP_PKEY_free(k);
}

/* A session-less key pair: no (its key would outlive the pass). */
static void bad_sessionless(void)
{
	EVP_PKEY *k = pk_keygen(CC_ALG_ED25519);
	uint8_t *der;
	size_t n = pk_der(k, 0, &der);
	struct cc_sessionless *sl = cc_buf_alloc(q, sizeof(*sl) + 256);
	uint8_t *b = (uint8_t *)(sl + 1);
	memset(sl, 0, sizeof(*sl));
	sl->alg = CC_ALG_ED25519;
	PK_CHECK(n <= sizeof(sl->key), "ed25519 DER %zu bytes", n);
	memcpy(sl->key, der, n);
	sl->key_len = (uint8_t)n;
	struct cc_op op = { .sessionless = sl,
			    .dir = CC_SIGN,
			    .src = b,
			    .len = 32,
			    .dst = b + 64 };
	WANT(run(&op), CC_ERR_BAD_DESC, "a session-less key pair");
	memset(sl, 0, sizeof(*sl));
	cc_buf_free(q, sl);
	OPENSSL_clear_free(der, n);
	EVP_PKEY_free(k);
}

int main(void)
{
	struct fx_daemon d;
	struct cc_queue_params qp = { .sq_entries = 8,
				      .cq_entries = 8,
				      .arena_size = 1 << 16 };
	if (fx_setup(&d, NULL, "test_pk_neg", &qp, &conn, &q))
		return FX_EXIT_FAIL;
	bad_keys();
	bad_derives();
	bad_rsa();
	bad_sessionless();
	/* still serving */
	int err;
	EVP_PKEY *k = pk_keygen(CC_ALG_EC_P384);
	uint32_t sid = pk_session(conn, CC_ALG_EC_P384, k, 0, &err);
	uint8_t dg[48] = { 3 }, sig[104];
	size_t sl = sizeof(sig);
	struct cc_pk_params pp = { .md = CC_PK_MD_SHA384 };
	WANT(sid ? cc_pk_sign(conn, sid, &pp, dg, 48, sig, &sl) : err, 0,
	     "a signature after it all");
	EVP_PKEY_free(k);
	int rc = fx_teardown(&d, conn, q);
	if (pk_fails)
		fprintf(stderr, "%d checks failed\n", pk_fails);
	return pk_fails || rc ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
