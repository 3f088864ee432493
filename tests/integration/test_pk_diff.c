// SPDX-License-Identifier: MIT
/*
 * Key pairs against in-process OpenSSL (docs/asymmetric.md), on a fresh
 * key of every PKEY row:
 *
 * - signatures both ways: the daemon signs and EVP verifies, EVP signs
 *   and the daemon verifies, for every digest and, on RSA, every padding
 *   (PKCS#1 v1.5; PSS with the digest's salt, the longest, 20 bytes, and
 *   MGF1 over another digest); EdDSA's are deterministic, so the bytes
 *   must be EVP's;
 * - derives both ways agree (ECDH, X25519, X448);
 * - RSA-OAEP both ways, with and without a label, over each digest;
 * - a public key's session verifies and encrypts;
 * - async: 128 Ed25519 signatures in flight on one queue complete in
 *   submission order, each the signature of its own message.
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

static const enum cc_alg rows[] = {
	CC_ALG_RSA_2048, CC_ALG_RSA_3072, CC_ALG_RSA_4096, CC_ALG_EC_P256,
	CC_ALG_EC_P384,	 CC_ALG_EC_P521,  CC_ALG_ED25519,  CC_ALG_ED448,
	CC_ALG_X25519,	 CC_ALG_X448,
};

/* EVP's side of a signature scheme (as the daemon's openssl_pkey.c). */
static int evp_sig_set(EVP_PKEY_CTX *c, const struct cc_pk_params *pp, int rsa,
		       int sign)
{
	if (EVP_PKEY_CTX_set_signature_md(c, pk_md(pp->md)) <= 0)
		return 0;
	if (!rsa)
		return 1;
	if (pp->pad != CC_PK_PAD_PSS)
		return EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_PADDING) > 0;
	int salt = pp->salt_len == CC_PK_SALT_DIGEST ? RSA_PSS_SALTLEN_DIGEST
		   : pp->salt_len == CC_PK_SALT_MAX
			   ? (sign ? RSA_PSS_SALTLEN_MAX : RSA_PSS_SALTLEN_AUTO)
			   : pp->salt_len;
	return EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_PSS_PADDING) > 0 &&
	       EVP_PKEY_CTX_set_rsa_mgf1_md(
		       c, pk_md(pp->mgf1_md ? pp->mgf1_md : pp->md)) > 0 &&
	       EVP_PKEY_CTX_set_rsa_pss_saltlen(c, salt) > 0;
}

/* One scheme over a digest, both ways. */
static void sig_digest(struct cc_conn *conn, uint32_t sid, enum cc_alg alg,
		       EVP_PKEY *k, const struct cc_pk_params *pp)
{
	const char *name = cc_alg_name(alg);
	int rsa = cc_alg_tag_len(alg) >= 256;
	uint8_t dg[64], sig[600];
	size_t dlen = (size_t)EVP_MD_get_size(pk_md(pp->md)),
	       slen = sizeof(sig);
	RAND_bytes(dg, (int)dlen);

	int st = cc_pk_sign(conn, sid, pp, dg, dlen, sig, &slen);
	PK_CHECK(st == 0, "%s md %u pad %u salt %d: sign: %s", name, pp->md,
		 pp->pad, pp->salt_len, cc_strerror(st));
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(k, NULL);
	PK_CHECK(c && EVP_PKEY_verify_init(c) > 0 && evp_sig_set(c, pp, rsa, 0),
		 "%s: EVP verify set-up", name);
	if (st == 0)
		PK_CHECK(EVP_PKEY_verify(c, sig, slen, dg, dlen) == 1,
			 "%s md %u pad %u: EVP refuses the daemon's signature",
			 name, pp->md, pp->pad);
	EVP_PKEY_CTX_free(c);

	c = EVP_PKEY_CTX_new(k, NULL);
	slen = sizeof(sig);
	PK_CHECK(c && EVP_PKEY_sign_init(c) > 0 && evp_sig_set(c, pp, rsa, 1) &&
			 EVP_PKEY_sign(c, sig, &slen, dg, dlen) > 0,
		 "%s: EVP sign", name);
	EVP_PKEY_CTX_free(c);
	st = cc_pk_verify(conn, sid, pp, dg, dlen, sig, slen);
	PK_CHECK(st == 0, "%s md %u pad %u: daemon refuses EVP's: %s", name,
		 pp->md, pp->pad, cc_strerror(st));
	sig[slen / 2] ^= 1;
	st = cc_pk_verify(conn, sid, pp, dg, dlen, sig, slen);
	PK_CHECK(st == CC_ERR_BAD_SIGNATURE, "%s: a flipped bit verifies: %s",
		 name, cc_strerror(st));
}

static void sig_rows(struct cc_conn *conn, uint32_t sid, enum cc_alg alg,
		     EVP_PKEY *k)
{
	int rsa = cc_alg_tag_len(alg) >= 256;
	for (unsigned md = CC_PK_MD_SHA1; md <= CC_PK_MD_SHA512; md++) {
		struct cc_pk_params pp = { .md = (uint8_t)md };
		sig_digest(conn, sid, alg, k, &pp);
		if (!rsa)
			continue;
		pp.pad = CC_PK_PAD_PKCS1;
		sig_digest(conn, sid, alg, k, &pp);
		pp.pad = CC_PK_PAD_PSS;
		static const int32_t salts[] = { CC_PK_SALT_DIGEST,
						 CC_PK_SALT_MAX, 20, 0 };
		for (unsigned i = 0; i < 4; i++) {
			pp.salt_len = salts[i];
			sig_digest(conn, sid, alg, k, &pp);
		}
		pp.mgf1_md =
			md == CC_PK_MD_SHA1 ? CC_PK_MD_SHA256 : CC_PK_MD_SHA1;
		pp.salt_len = CC_PK_SALT_DIGEST;
		sig_digest(conn, sid, alg, k, &pp);
	}
}

/* EdDSA: deterministic, so the daemon's bytes are EVP's. */
static void sig_eddsa(struct cc_conn *conn, uint32_t sid, enum cc_alg alg,
		      EVP_PKEY *k)
{
	static const size_t lens[] = { 0, 1, 32, 1000, 70000 };
	uint8_t *msg = malloc(70000), a[128], b[128];
	RAND_bytes(msg, 70000);
	for (unsigned i = 0; i < 5; i++) {
		size_t al = sizeof(a), bl = sizeof(b);
		int st = cc_pk_sign(conn, sid, NULL, msg, lens[i], a, &al);
		EVP_MD_CTX *m = EVP_MD_CTX_new();
		PK_CHECK(EVP_DigestSignInit(m, NULL, NULL, NULL, k) == 1 &&
				 EVP_DigestSign(m, b, &bl, msg, lens[i]) == 1,
			 "EVP EdDSA");
		EVP_MD_CTX_free(m);
		PK_CHECK(st == 0 && al == bl && !memcmp(a, b, al),
			 "%s %zu bytes: signature differs from EVP's (%s)",
			 cc_alg_name(alg), lens[i], cc_strerror(st));
		st = cc_pk_verify(conn, sid, NULL, msg, lens[i], b, bl);
		PK_CHECK(st == 0, "%s: verify: %s", cc_alg_name(alg),
			 cc_strerror(st));
		if (lens[i]) {
			msg[0] ^= 1;
			st = cc_pk_verify(conn, sid, NULL, msg, lens[i], b, bl);
			PK_CHECK(st == CC_ERR_BAD_SIGNATURE,
				 "%s: another message verifies: %s",
				 cc_alg_name(alg), cc_strerror(st));
		}
	}
	free(msg);
}

static void derive_row(struct cc_conn *conn, uint32_t sid, enum cc_alg alg,
		       EVP_PKEY *k)
{
	EVP_PKEY *peer = pk_keygen(alg);
	uint8_t pub[160], a[160], b[160];
	size_t pl = pk_peer_bytes(peer, pub, sizeof(pub)), al = sizeof(a),
	       bl = sizeof(b);
	int st = cc_pk_derive(conn, sid, pub, pl, a, &al);
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(peer, NULL);
	PK_CHECK(c && EVP_PKEY_derive_init(c) > 0 &&
			 EVP_PKEY_derive_set_peer(c, k) > 0 &&
			 EVP_PKEY_derive(c, b, &bl) > 0,
		 "EVP derive");
	EVP_PKEY_CTX_free(c);
	PK_CHECK(st == 0 && al == bl && !memcmp(a, b, al),
		 "%s: the shared secrets differ (%s, %zu vs %zu bytes)",
		 cc_alg_name(alg), cc_strerror(st), al, bl);
	EVP_PKEY_free(peer);
}

static void oaep_row(struct cc_conn *conn, uint32_t sid, uint32_t pub_sid,
		     enum cc_alg alg, EVP_PKEY *k)
{
	static const uint8_t label[] = "a label";
	for (unsigned md = CC_PK_MD_NONE; md <= CC_PK_MD_SHA512; md++) {
		for (unsigned l = 0; l < 2; l++) {
			struct cc_pk_params pp = {
				.pad = md & 1 ? CC_PK_PAD_OAEP : 0,
				.md = (uint8_t)md
			};
			uint8_t msg[32], ct[512], pt[512];
			size_t cl = sizeof(ct), ptl = sizeof(pt);
			const EVP_MD *d = md ? pk_md(md) : EVP_sha1();
			RAND_bytes(msg, sizeof(msg));
			int st = cc_pk_encrypt(conn, l ? pub_sid : sid, &pp,
					       l ? label : NULL,
					       l ? sizeof(label) : 0, msg,
					       sizeof(msg), ct, &cl);
			PK_CHECK(st == 0, "%s md %u: encrypt: %s",
				 cc_alg_name(alg), md, cc_strerror(st));
			EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(k, NULL);
			PK_CHECK(c && EVP_PKEY_decrypt_init(c) > 0 &&
					 EVP_PKEY_CTX_set_rsa_padding(
						 c, RSA_PKCS1_OAEP_PADDING) >
						 0 &&
					 EVP_PKEY_CTX_set_rsa_oaep_md(c, d) > 0,
				 "EVP OAEP");
			if (l)
				EVP_PKEY_CTX_set0_rsa_oaep_label(
					c, OPENSSL_memdup(label, sizeof(label)),
					sizeof(label));
			PK_CHECK(st || (EVP_PKEY_decrypt(c, pt, &ptl, ct, cl) >
						0 &&
					ptl == sizeof(msg) &&
					!memcmp(pt, msg, ptl)),
				 "%s md %u label %u: EVP cannot decrypt",
				 cc_alg_name(alg), md, l);
			/* and back: EVP encrypts, the daemon decrypts */
			cl = sizeof(ct);
			EVP_PKEY_encrypt_init(c);
			EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING);
			EVP_PKEY_CTX_set_rsa_oaep_md(c, d);
			if (l)
				EVP_PKEY_CTX_set0_rsa_oaep_label(
					c, OPENSSL_memdup(label, sizeof(label)),
					sizeof(label));
			PK_CHECK(EVP_PKEY_encrypt(c, ct, &cl, msg,
						  sizeof(msg)) > 0,
				 "EVP encrypt");
			EVP_PKEY_CTX_free(c);
			ptl = sizeof(pt);
			st = cc_pk_decrypt(conn, sid, &pp, l ? label : NULL,
					   l ? sizeof(label) : 0, ct, cl, pt,
					   &ptl);
			PK_CHECK(st == 0 && ptl == sizeof(msg) &&
					 !memcmp(pt, msg, ptl),
				 "%s md %u label %u: decrypt: %s",
				 cc_alg_name(alg), md, l, cc_strerror(st));
		}
	}
}

/* A public key's session verifies EVP's signature, and signs nothing. */
static void pub_verify(struct cc_conn *conn, uint32_t pub, enum cc_alg alg,
		       EVP_PKEY *k)
{
	int ed = alg == CC_ALG_ED25519 || alg == CC_ALG_ED448;
	struct cc_pk_params pp = { .md = ed ? 0 : CC_PK_MD_SHA256 };
	uint8_t in[32] = { 7 }, sig[600];
	size_t sl = sizeof(sig);
	EVP_MD_CTX *m = EVP_MD_CTX_new();
	/* EdDSA signs the 32 bytes; the others sign their SHA-256 */
	PK_CHECK(EVP_DigestSignInit(m, NULL, ed ? NULL : EVP_sha256(), NULL,
				    k) == 1 &&
			 EVP_DigestSign(m, sig, &sl, in, sizeof(in)) == 1,
		 "EVP sign");
	EVP_MD_CTX_free(m);
	uint8_t dg[32];
	unsigned dl = sizeof(dg);
	EVP_Digest(in, sizeof(in), dg, &dl, EVP_sha256(), NULL);
	int st =
		cc_pk_verify(conn, pub, &pp, ed ? in : dg, sizeof(dg), sig, sl);
	PK_CHECK(st == 0, "%s: public session refuses EVP's signature: %s",
		 cc_alg_name(alg), cc_strerror(st));
	sl = sizeof(sig);
	st = cc_pk_sign(conn, pub, &pp, dg, sizeof(dg), sig, &sl);
	PK_CHECK(st == CC_ERR_POLICY, "%s: a public key signs: %s",
		 cc_alg_name(alg), cc_strerror(st));
}

/* 128 signatures in flight at once complete in order, each its own. */
static void async_order(struct cc_conn *conn, struct cc_queue *q)
{
	enum { N = 128, MSG = 64, SIG = 64 };
	EVP_PKEY *k = pk_keygen(CC_ALG_ED25519);
	int err;
	uint32_t sid = pk_session(conn, CC_ALG_ED25519, k, 0, &err);
	uint8_t *buf = cc_buf_alloc(q, N * (MSG + SIG));
	struct cc_op *ops = calloc(N, sizeof(*ops));
	struct cc_completion *cpl = calloc(N, sizeof(*cpl));
	PK_CHECK(sid && buf && ops && cpl, "async set-up: %s",
		 cc_strerror(err));
	if (!sid || !buf || !ops || !cpl)
		goto out;
	RAND_bytes(buf, N * MSG);
	for (unsigned i = 0; i < N; i++)
		ops[i] = (struct cc_op){ .user_data = 1000 + i,
					 .session = sid,
					 .dir = CC_SIGN,
					 .src = buf + i * MSG,
					 .len = MSG,
					 .dst = buf + N * MSG + i * SIG };
	err = fx_run_burst(q, ops, N, cpl, 60000);
	PK_CHECK(err == 0, "async burst: %d", err);
	for (unsigned i = 0; err == 0 && i < N; i++) {
		uint8_t b[SIG];
		size_t bl = sizeof(b);
		EVP_MD_CTX *m = EVP_MD_CTX_new();
		EVP_DigestSignInit(m, NULL, NULL, NULL, k);
		EVP_DigestSign(m, b, &bl, buf + i * MSG, MSG);
		EVP_MD_CTX_free(m);
		PK_CHECK(cpl[i].user_data == 1000 + i && cpl[i].status == 0 &&
				 cpl[i].len == SIG &&
				 !memcmp(b, buf + N * MSG + i * SIG, SIG),
			 "async op %u: %d, len %u, or not its signature", i,
			 cpl[i].status, cpl[i].len);
	}
out:
	free(ops);
	free(cpl);
	cc_buf_free(q, buf);
	EVP_PKEY_free(k);
}

int main(void)
{
	struct fx_daemon d;
	struct cc_conn *conn;
	struct cc_queue *q;
	struct cc_queue_params qp = { .sq_entries = 64,
				      .cq_entries = 64,
				      .arena_size = 1 << 20 };
	if (fx_setup(&d, NULL, "test_pk_diff", &qp, &conn, &q))
		return FX_EXIT_FAIL;
	for (unsigned r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		enum cc_alg alg = rows[r];
		EVP_PKEY *k = pk_keygen(alg);
		int err;
		uint32_t sid = pk_session(conn, alg, k, 0, &err);
		PK_CHECK(sid, "%s: session: %s", cc_alg_name(alg),
			 cc_strerror(err));
		if (!sid) {
			EVP_PKEY_free(k);
			continue;
		}
		int ed = alg == CC_ALG_ED25519 || alg == CC_ALG_ED448;
		int x = alg == CC_ALG_X25519 || alg == CC_ALG_X448;
		if (ed)
			sig_eddsa(conn, sid, alg, k);
		else if (!x)
			sig_rows(conn, sid, alg, k);
		if (x || (alg >= CC_ALG_EC_P256 && alg <= CC_ALG_EC_P521))
			derive_row(conn, sid, alg, k);
		if (!x) { /* a public key's session verifies (and encrypts) */
			uint32_t pub = pk_session(conn, alg, k, 1, &err);
			PK_CHECK(pub, "%s: public session: %s",
				 cc_alg_name(alg), cc_strerror(err));
			if (pub && cc_alg_tag_len(alg) >= 256)
				oaep_row(conn, sid, pub, alg, k);
			if (pub)
				pub_verify(conn, pub, alg, k);
			cc_session_destroy(conn, pub);
		}
		cc_session_destroy(conn, sid);
		EVP_PKEY_free(k);
		printf("%s: done\n", cc_alg_name(alg));
	}
	async_order(conn, q);
	int rc = fx_teardown(&d, conn, q);
	if (pk_fails)
		fprintf(stderr, "%d checks failed\n", pk_fails);
	return pk_fails || rc ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
