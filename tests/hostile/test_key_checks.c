/* SPDX-License-Identifier: MIT */
/*
 * The checks a key meets on its way into the daemon (issue 25), against a
 * real daemon with named keys on and the default key policy
 * (keys.min_bits = 128):
 *  - a key name with a NUL inside ("a\0/../../evil") is refused whole in
 *    create, show, a session and delete, and key "a" is left alone;
 *  - unwrap makes the checks create and import make: lengths no engine
 *    takes (1-byte AES-GCM, 5-byte CBC, 33-byte XTS, 200-byte CMAC), a
 *    key shorter than the policy (an 8-byte HMAC key), a wrap that holds
 *    16 bytes where the request says 32, and usage rules that would not
 *    hold; nothing of them is stored;
 *  - usage bits of another kind than the algorithm's (a CBC key that may
 *    make MACs, an HMAC key that may encrypt) are refused, in create,
 *    import and unwrap, with a message that says so;
 *  - an authenc auth_key is held to keys.min_bits as an HMAC key is
 *    (sessions and session-less ops);
 *  - a decrypt-only AES-GCM key releases nothing before its tag is
 *    verified: a stream on it (first piece, one-piece stream, clone onto
 *    it) completes with CC_ERR_POLICY and writes nothing, one-shot
 *    decrypts verify first; a key that may encrypt streams as before.
 *
 * Measured 0.3 s (gcc), 1.3 s (ASan+UBSan), 0.9 s (TSan); ctest gives
 * it 120, some 100 times that.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "fixture.h"
#include "rawclient.h"

static int fails;
#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,          \
				__LINE__, #c);                                 \
			fails++;                                               \
		}                                                              \
	} while (0)
/* CHECK that got == want, saying both and the daemon's reason. */
#define EXPECT(c, what, got, want)                                             \
	do {                                                                   \
		int g_ = (got), w_ = (want);                                   \
		if (g_ != w_) {                                                \
			fprintf(stderr,                                        \
				"FAIL %s:%d: %s: got %d (%s), want %d (%s); "  \
				"daemon: %s\n",                                \
				__FILE__, __LINE__, (what), g_,                \
				cc_strerror(g_), w_, cc_strerror(w_),          \
				cc_conn_last_error(c));                        \
			fails++;                                               \
		}                                                              \
	} while (0)

static uint32_t me;

static struct cc_key_spec spec(const char *name, enum cc_alg alg,
			       unsigned key_len, unsigned usage)
{
	struct cc_key_spec s = { .name = name,
				 .alg = alg,
				 .key_len = key_len,
				 .usage = usage,
				 .uids = &me,
				 .nuids = 1 };
	return s;
}

/* RFC 5649 wrap with OpenSSL: the blob's length. */
static int wrap(const uint8_t *wkek, const uint8_t *key, int n, uint8_t *out)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l = 0, f = 0;
	EVP_CIPHER_CTX_set_flags(x, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	int ok = EVP_EncryptInit_ex(x, EVP_aes_256_wrap_pad(), NULL, wkek,
				    NULL) &&
		 EVP_EncryptUpdate(x, out, &l, key, n) &&
		 EVP_EncryptFinal_ex(x, out + l, &f);
	EVP_CIPHER_CTX_free(x);
	return ok ? l + f : -1;
}

static const uint8_t wkek[32] = { 0x77, 0x66, 0x55 };

static int unwrap_as(struct cc_conn *c, struct cc_key_spec *s, unsigned n)
{
	uint8_t key[300], blob[320];
	for (unsigned i = 0; i < n; i++)
		key[i] = (uint8_t)(0x31 + i * 7); /* XTS halves differ */
	int bn = wrap(wkek, key, (int)n, blob);
	CHECK(bn > 0);
	return cc_key_unwrap(c, s, wkek, sizeof(wkek), blob, (size_t)bn, NULL);
}

/* ---- a NUL inside a key name ---- */

static void nul_request(const char *sock, Cryptod__Envelope *env,
			const char *marker, const char *what)
{
	struct raw r;
	raw_connect(&r, sock);
	raw_hello(&r, CRD_ABI_VERSION);
	CHECK(raw_send_nul(&r, env, marker) == 0);
	ssize_t n = raw_recv(&r, NULL, NULL);
	if (n != 0) {
		Cryptod__Envelope *rep =
			n > 0 ? wire_decode(r.rx, (size_t)n) : NULL;
		fprintf(stderr,
			"FAIL: %s with \"a\\0/../../evil\" was served (reply "
			"%d%s%s), not refused whole\n",
			what, rep ? (int)rep->body_case : -1,
			rep && rep->error ? ": " : "",
			rep && rep->error ? rep->error->message : "");
		wire_free(rep);
		fails++;
	}
	close(r.fd);
}

static void test_nul_name(const char *sock, struct cc_conn *c)
{
	static char evil[] = "a\x01/../../evil"; /* 0x01: sent as NUL */
	struct cc_key_spec s =
		spec("a", CC_ALG_AES_GCM, 32, CC_KEY_ENCRYPT | CC_KEY_DECRYPT);
	struct cc_key_info in;
	EXPECT(c, "create a", cc_key_create(c, &s, &in), 0);

	Cryptod__KeyRequest kr = CRYPTOD__KEY_REQUEST__INIT;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.body_case = CRYPTOD__ENVELOPE__BODY_KEY_REQUEST;
	env.key_request = &kr;
	kr.name = evil;
	kr.op = CRYPTOD__KEY_OP__KEY_DELETE;
	nul_request(sock, &env, evil, "delete");
	kr.op = CRYPTOD__KEY_OP__KEY_SHOW;
	nul_request(sock, &env, evil, "show");
	kr.op = CRYPTOD__KEY_OP__KEY_ROTATE;
	nul_request(sock, &env, evil, "rotate");
	Cryptod__CreateSession cs = CRYPTOD__CREATE_SESSION__INIT;
	cs.key_name = evil;
	env.body_case = CRYPTOD__ENVELOPE__BODY_CREATE_SESSION;
	env.create_session = &cs;
	nul_request(sock, &env, evil, "a session");
	/* Key "a" is as it was: there, one version. */
	EXPECT(c, "show a", cc_key_show(c, "a", &in), 0);
	CHECK(in.nversions == 1);
	EXPECT(c, "delete a", cc_key_delete(c, "a"), 0);

	/* Create with such a name makes no key "a". */
	kr.op = CRYPTOD__KEY_OP__KEY_CREATE;
	kr.alg = CRYPTOD__ALGORITHM__ALG_AES_GCM;
	kr.key_len = 32;
	kr.usage = CC_KEY_ENCRYPT | CC_KEY_DECRYPT;
	kr.n_uids = 1;
	kr.uids = &me;
	env.body_case = CRYPTOD__ENVELOPE__BODY_KEY_REQUEST;
	env.key_request = &kr;
	nul_request(sock, &env, evil, "create");
	EXPECT(c, "show a after create", cc_key_show(c, "a", &in), -ENOENT);
}

/* ---- unwrap and the other ways in: one set of checks ---- */

static void test_unwrap_checks(struct cc_conn *c)
{
	static const struct {
		const char *name;
		enum cc_alg alg;
		unsigned len, asked, usage;
		int want;
	} cases[] = {
		{ "gcm-1", CC_ALG_AES_GCM, 1, 0, 3, -EINVAL },
		{ "cbc-5", CC_ALG_AES_CBC, 5, 0, 3, -EINVAL },
		{ "xts-33", CC_ALG_AES_XTS, 33, 0, 3, -EINVAL },
		{ "cmac-200", CC_ALG_AES_CMAC, 200, 0, 12, -EINVAL },
		{ "hmac-8", CC_ALG_HMAC_SHA256, 8, 0, 12, CC_ERR_POLICY },
		{ "gcm-16-for-32", CC_ALG_AES_GCM, 16, 32, 3, -EINVAL },
		{ "cbc-mac", CC_ALG_AES_CBC, 32, 0, CC_KEY_MAC_GENERATE,
		  -EINVAL },
		{ "hmac-enc", CC_ALG_HMAC_SHA256, 32, 0, CC_KEY_ENCRYPT,
		  -EINVAL },
		{ "ctr-dec", CC_ALG_AES_CTR, 16, 0, CC_KEY_DECRYPT, -EINVAL },
		{ "gcm-enc", CC_ALG_AES_GCM, 16, 0, CC_KEY_ENCRYPT, -EINVAL },
		/* and what is right goes in */
		{ "gcm-16", CC_ALG_AES_GCM, 16, 16, 3, 0 },
		{ "gcm-any", CC_ALG_AES_GCM, 24, 0, 3, 0 },
		{ "xts-64", CC_ALG_AES_XTS, 64, 64, 3, 0 },
		{ "hmac-16", CC_ALG_HMAC_SHA256, 16, 0, 12, 0 },
		{ "cmac-32", CC_ALG_AES_CMAC, 32, 32, 8, 0 },
	};
	struct cc_key_info in;
	char what[96];
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct cc_key_spec s = spec(cases[i].name, cases[i].alg,
					    cases[i].asked, cases[i].usage);
		snprintf(what, sizeof(what), "unwrap %s (%u bytes)",
			 cases[i].name, cases[i].len);
		EXPECT(c, what, unwrap_as(c, &s, cases[i].len), cases[i].want);
		int there = cc_key_show(c, cases[i].name, &in);
		EXPECT(c, "show after unwrap", there,
		       cases[i].want ? -ENOENT : 0);
		if (!there) {
			CHECK(in.key_len == cases[i].len);
			CHECK(cc_key_delete(c, cases[i].name) == 0);
		}
	}
	/* A wrap under another key is still just that. */
	struct cc_key_spec s = spec("other-wrap", CC_ALG_AES_GCM, 0, 3);
	uint8_t key[16] = { 1 }, blob[40], other[32] = { 9 };
	int bn = wrap(other, key, 16, blob);
	EXPECT(c, "unwrap under another key",
	       cc_key_unwrap(c, &s, wkek, 32, blob, (size_t)bn, NULL),
	       -EBADMSG);
}

static void test_usage_kinds(struct cc_conn *c)
{
	static const uint8_t k32[32] = { 3, 1, 4, 1, 5, 9, 2, 6 };
	struct cc_key_spec s;

	s = spec("cbc-mac", CC_ALG_AES_CBC, 32, CC_KEY_MAC_GENERATE);
	EXPECT(c, "create a CBC key for MACs", cc_key_create(c, &s, NULL),
	       -EINVAL);
	CHECK(strstr(cc_conn_last_error(c), "encrypt") != NULL);
	s.usage = CC_KEY_ENCRYPT | CC_KEY_MAC_VERIFY;
	EXPECT(c, "create a CBC key for encrypt and MAC verify",
	       cc_key_create(c, &s, NULL), -EINVAL);
	s = spec("gcm-mac", CC_ALG_AES_GCM, 32, CC_KEY_MAC_GENERATE);
	EXPECT(c, "create a GCM key for MACs", cc_key_create(c, &s, NULL),
	       -EINVAL);
	s = spec("hmac-enc", CC_ALG_HMAC_SHA256, 32, CC_KEY_ENCRYPT);
	EXPECT(c, "create an HMAC key for encryption",
	       cc_key_create(c, &s, NULL), -EINVAL);
	CHECK(strstr(cc_conn_last_error(c), "mac-generate") != NULL);
	s.usage = CC_KEY_DECRYPT;
	EXPECT(c, "import an HMAC key for decryption",
	       cc_key_import(c, &s, k32, 32, NULL), -EINVAL);
	s.usage = 0;
	EXPECT(c, "create with no usage", cc_key_create(c, &s, NULL), -EINVAL);
	s.usage = 16;
	EXPECT(c, "create with an unknown usage bit",
	       cc_key_create(c, &s, NULL), -EINVAL);
	/* The kinds' own usages go in. */
	s = spec("hmac-ok", CC_ALG_HMAC_SHA256, 32,
		 CC_KEY_MAC_GENERATE | CC_KEY_MAC_VERIFY);
	EXPECT(c, "create an HMAC key for MACs", cc_key_create(c, &s, NULL), 0);
	s = spec("gmac-ok", CC_ALG_AES_GMAC, 16, CC_KEY_MAC_VERIFY);
	EXPECT(c, "create a GMAC key to verify", cc_key_create(c, &s, NULL), 0);
	s = spec("cbc-ok", CC_ALG_AES_CBC, 32, CC_KEY_DECRYPT);
	EXPECT(c, "import a decrypt-only CBC key",
	       cc_key_import(c, &s, k32, 32, NULL), 0);
	CHECK(cc_key_delete(c, "hmac-ok") == 0);
	CHECK(cc_key_delete(c, "gmac-ok") == 0);
	CHECK(cc_key_delete(c, "cbc-ok") == 0);
}

/* ---- one key policy for every MAC key ---- */

static void test_authenc_policy(struct cc_conn *c)
{
	static const uint8_t key[16] = { 1, 2, 3, 4 }, auth[32] = { 5, 6, 7 };
	uint32_t sid;
	struct cc_session_params hmac = { .alg = CC_ALG_HMAC_SHA256,
					  .key = auth,
					  .key_len = 10 };
	EXPECT(c, "an 80-bit HMAC key", cc_session_create(c, &hmac, &sid),
	       CC_ERR_POLICY);
	static const enum cc_alg authenc[] = { CC_ALG_AES_CBC_HMAC_SHA1,
					       CC_ALG_AES_CBC_HMAC_SHA256,
					       CC_ALG_AES_CTR_HMAC_SHA256 };
	for (size_t i = 0; i < sizeof(authenc) / sizeof(*authenc); i++) {
		struct cc_session_params p = { .alg = authenc[i],
					       .key = key,
					       .key_len = 16,
					       .auth_key = auth,
					       .auth_key_len = 10 };
		char what[80];
		snprintf(what, sizeof(what), "%s with an 80-bit auth_key",
			 cc_alg_name(authenc[i]));
		EXPECT(c, what, cc_session_create(c, &p, &sid), CC_ERR_POLICY);
		p.auth_key_len = 16;
		snprintf(what, sizeof(what), "%s with a 128-bit auth_key",
			 cc_alg_name(authenc[i]));
		int r = cc_session_create(c, &p, &sid);
		EXPECT(c, what, r, 0);
		if (!r)
			CHECK(cc_session_destroy(c, sid) == 0);
	}

	/* Session-less: the same rule, per op. */
	struct cc_queue *q;
	EXPECT(c, "a queue", cc_queue_open(c, NULL, &q), 0);
	struct cc_sessionless *sl = cc_buf_alloc(q, sizeof(*sl));
	uint8_t *buf = cc_buf_alloc(q, 256), iv[16] = { 0 };
	memset(sl, 0, sizeof(*sl));
	sl->alg = CC_ALG_AES_CBC_HMAC_SHA256;
	sl->key_len = 16;
	memcpy(sl->key, key, 16);
	sl->auth_key_len = 10;
	memcpy(sl->auth_key, auth, 10);
	struct cc_op op = { .dir = CC_ENCRYPT,
			    .src = buf,
			    .len = 64,
			    .tag = buf + 128,
			    .iv = iv,
			    .iv_len = 16,
			    .sessionless = sl };
	struct cc_completion comp;
	CHECK(fx_run_burst(q, &op, 1, &comp, 10000) == 0);
	EXPECT(c, "session-less authenc, 80-bit auth_key", comp.status,
	       CC_ERR_POLICY);
	sl->auth_key_len = 16;
	CHECK(fx_run_burst(q, &op, 1, &comp, 10000) == 0);
	EXPECT(c, "session-less authenc, 128-bit auth_key", comp.status, 0);
	explicit_bzero(sl, sizeof(*sl));
	cc_queue_close(q);
}

/* ---- a decrypt-only AEAD key releases nothing unverified ---- */

static void ossl_gcm(const uint8_t *key, const uint8_t *iv, const uint8_t *in,
		     int n, uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l;
	EVP_EncryptInit_ex(x, EVP_aes_256_gcm(), NULL, key, iv);
	EVP_EncryptUpdate(x, out, &l, in, n);
	EVP_EncryptFinal_ex(x, out + l, &l);
	EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(x);
}

enum { LEN = 256 };

/* One stream op on q: its completion status; dst is left as it was when
 * nothing was written. */
static int stream_op(struct cc_queue *q, uint32_t sid, uint32_t handle,
		     unsigned flags, uint32_t param, const uint8_t *iv,
		     uint8_t *buf, unsigned len, uint8_t *tag)
{
	struct cc_op op = { .session = sid,
			    .dir = CC_DECRYPT,
			    .src = len ? buf : NULL,
			    .len = len,
			    .iv = iv,
			    .iv_len = iv ? 12 : 0,
			    .tag = tag,
			    .stream = handle,
			    .stream_flags = flags,
			    .stream_param = param };
	struct cc_completion comp;
	int r = fx_run_burst(q, &op, 1, &comp, 10000);
	return r ? r : comp.status;
}

static void test_decrypt_only_stream(struct cc_conn *c)
{
	uint8_t key[32], iv[12] = { 7, 7, 7 }, pt[LEN], ct[LEN], tag[16];
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(0xc3 ^ i * 13);
	for (int i = 0; i < LEN; i++)
		pt[i] = (uint8_t)i;
	ossl_gcm(key, iv, pt, LEN, ct, tag);
	struct cc_key_spec s =
		spec("dec-only", CC_ALG_AES_GCM, 32, CC_KEY_DECRYPT);
	EXPECT(c, "import a decrypt-only GCM key",
	       cc_key_import(c, &s, key, 32, NULL), 0);
	s = spec("both", CC_ALG_AES_GCM, 32, CC_KEY_ENCRYPT | CC_KEY_DECRYPT);
	EXPECT(c, "import it again, both ways",
	       cc_key_import(c, &s, key, 32, NULL), 0);
	uint32_t dsid, bsid, csid;
	struct cc_session_params dp = { .key_name = "dec-only" },
				 bp = { .key_name = "both" },
				 cp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 32 };
	EXPECT(c, "a session on dec-only", cc_session_create(c, &dp, &dsid), 0);
	EXPECT(c, "a session on both", cc_session_create(c, &bp, &bsid), 0);
	EXPECT(c, "a session on the bytes", cc_session_create(c, &cp, &csid),
	       0);

	/* One-shot: verified first, then released; a bad tag releases
	 * nothing. */
	uint8_t out[LEN], bad[16];
	EXPECT(c, "one-shot decrypt on dec-only",
	       fx_crypt(c, dsid, CC_DECRYPT, iv, 12, NULL, 0, ct, out, LEN,
			tag),
	       0);
	CHECK(!memcmp(out, pt, LEN));
	memcpy(bad, tag, 16);
	bad[0] ^= 1;
	EXPECT(c, "one-shot decrypt, bad tag",
	       fx_crypt(c, dsid, CC_DECRYPT, iv, 12, NULL, 0, ct, out, LEN,
			bad),
	       CC_ERR_AUTH_FAILED);

	struct cc_queue *q;
	EXPECT(c, "a queue", cc_queue_open(c, NULL, &q), 0);
	uint8_t *buf = cc_buf_alloc(q, LEN), *tb = cc_buf_alloc(q, 16);
	uint32_t h, h2;
	CHECK(cc_stream_handle_get(q, &h) == 0);
	CHECK(cc_stream_handle_get(q, &h2) == 0);

	/* The attack: zeros decrypted under a chosen IV are the
	 * keystream, which encrypts anything. */
	memset(buf, 0, LEN);
	EXPECT(c, "a stream's first piece on dec-only",
	       stream_op(q, dsid, h, CC_STREAM_FIRST, 0, iv, buf, 64, NULL),
	       CC_ERR_POLICY);
	uint8_t zeros[LEN] = { 0 };
	if (memcmp(buf, zeros, 64))
		fprintf(stderr, "FAIL: keystream released before any tag\n");
	CHECK(!memcmp(buf, zeros, 64));
	EXPECT(c, "its next piece: no stream",
	       stream_op(q, dsid, h, 0, 0, NULL, buf, 64, NULL),
	       CC_ERR_NO_STREAM);
	memcpy(buf, ct, LEN);
	memcpy(tb, tag, 16);
	EXPECT(c, "a stream of one piece on dec-only",
	       stream_op(q, dsid, h, CC_STREAM_FIRST | CC_STREAM_LAST, 0, iv,
			 buf, LEN, tb),
	       CC_ERR_POLICY);
	CHECK(!memcmp(buf, ct, LEN));

	/* A stream opened on a session that may encrypt, cloned onto the
	 * decrypt-only one: refused too, and the source goes on. */
	memcpy(buf, ct, LEN);
	EXPECT(c, "a stream on the bytes' session",
	       stream_op(q, csid, h, CC_STREAM_FIRST, 0, iv, buf, 64, NULL), 0);
	CHECK(!memcmp(buf, pt, 64));
	EXPECT(c, "a clone onto dec-only",
	       stream_op(q, dsid, h, CC_STREAM_CLONE, h2, NULL, NULL, 0, NULL),
	       CC_ERR_POLICY);
	EXPECT(c, "the clone's handle: no stream",
	       stream_op(q, dsid, h2, 0, 0, NULL, buf + 64, 64, NULL),
	       CC_ERR_NO_STREAM);
	CHECK(!memcmp(buf + 64, ct + 64, 64));
	EXPECT(c, "the source goes on to its tag",
	       stream_op(q, csid, h, CC_STREAM_LAST, 0, NULL, buf + 64,
			 LEN - 64, tb),
	       0);
	CHECK(!memcmp(buf, pt, LEN));

	/* The same key allowed to encrypt streams as before. */
	memcpy(buf, ct, LEN);
	EXPECT(c, "a stream on both",
	       stream_op(q, bsid, h, CC_STREAM_FIRST | CC_STREAM_LAST, 0, iv,
			 buf, LEN, tb),
	       0);
	CHECK(!memcmp(buf, pt, LEN));

	/* The copying streams say the same at their first piece. */
	struct cc_stream *st;
	struct cc_stream_params sp = {
		.session = dsid, .dir = CC_DECRYPT, .iv = iv, .iv_len = 12
	};
	EXPECT(c, "cc_stream_open on dec-only", cc_stream_open(c, &sp, &st), 0);
	size_t ol = 0;
	memset(out, 0, sizeof(out));
	EXPECT(c, "cc_stream_update on dec-only",
	       cc_stream_update(st, zeros, 64, out, &ol), CC_ERR_POLICY);
	CHECK(!memcmp(out, zeros, 64)); /* failed pieces: zeros */
	cc_stream_free(st);

	cc_stream_handle_put(q, h);
	cc_stream_handle_put(q, h2);
	cc_queue_close(q);
	CHECK(cc_session_destroy(c, dsid) == 0);
	CHECK(cc_session_destroy(c, bsid) == 0);
	CHECK(cc_session_destroy(c, csid) == 0);
	CHECK(cc_key_delete(c, "dec-only") == 0);
	CHECK(cc_key_delete(c, "both") == 0);
	explicit_bzero(key, sizeof(key));
}

int main(void)
{
	struct rc_keys keys;
	struct fx_daemon d;
	struct cc_conn *c;

	me = (uint32_t)getuid();
	if (rc_keys_init(&keys)) {
		perror("named keys");
		return FX_EXIT_FAIL;
	}
	struct fx_daemon_params dp = { .workers = 2, .args = keys.args };
	if (fx_daemon_start(&d, &dp))
		return FX_EXIT_FAIL;
	if (cc_connect(d.sock, "key-checks", &c)) {
		fx_daemon_stop(&d);
		return FX_EXIT_FAIL;
	}
	test_nul_name(d.sock, c);
	test_unwrap_checks(c);
	test_usage_kinds(c);
	test_authenc_policy(c);
	test_decrypt_only_stream(c);
	cc_disconnect(c);
	if (fx_daemon_stop(&d))
		fails++;
	rc_keys_fini(&keys);
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
