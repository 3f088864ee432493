// SPDX-License-Identifier: MIT
/*
 * Named key pairs (issue 28; docs/keys.md, "Named key pairs" in
 * docs/asymmetric.md): the daemon generates each of the ten algorithms;
 * imports every form `openssl genpkey`/`openssl pkey` writes (PKCS#8 PEM
 * and DER, encrypted PKCS#8 with the right and a wrong passphrase, the
 * traditional RSA and EC PEM), and key pub equals `openssl pkey -pubout`
 * of what was imported; a public key, garbage, a truncated PEM and one
 * whose DER claims 4 GiB are refused with a reason; an algorithm that
 * does not match the key is refused naming both; the usage rules; wrap
 * of an exportable pair (checked against OpenSSL's AES-256-WRAP-PAD) and
 * unwrap back, a non-exportable one never; the same public keys after a
 * restart; no 8-byte window of a private key in the sealed key files or
 * in the daemon's log; another uid (root runs: nobody) can neither pub
 * nor use a key it is not allowed, nor tell it from a missing one; a
 * deleted pair's secret is gone from the daemon's memory. Sessions on
 * named pairs: the daemon's signatures verify in-process under `key
 * pub`'s key, X25519 derives OpenSSL's secret, usage bounds the ops.
 * Generation runs off the control thread (others are answered meanwhile).
 */
#include "named_keys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <cryptoclient.h>

static const uint32_t me = 0;
static char work[192], logpath[224];
static int saved = -1, lfd = -1;

static const struct {
	enum cc_alg alg;
	const char *type; /* EVP_PKEY_is_a() */
	int bits;
	unsigned usage; /* the default: all the row allows */
} algs[] = {
	{ CC_ALG_RSA_2048, "RSA", 2048, 16 | 32 | 1 | 2 },
	{ CC_ALG_RSA_3072, "RSA", 3072, 16 | 32 | 1 | 2 },
	{ CC_ALG_RSA_4096, "RSA", 4096, 16 | 32 | 1 | 2 },
	{ CC_ALG_EC_P256, "EC", 256, 16 | 32 | 64 },
	{ CC_ALG_EC_P384, "EC", 384, 16 | 32 | 64 },
	{ CC_ALG_EC_P521, "EC", 521, 16 | 32 | 64 },
	{ CC_ALG_ED25519, "ED25519", 256, 16 | 32 },
	{ CC_ALG_ED448, "ED448", 456, 16 | 32 },
	{ CC_ALG_X25519, "X25519", 253, 64 },
	{ CC_ALG_X448, "X448", 448, 64 },
};

static struct cc_key_spec pspec(const char *name, enum cc_alg alg,
				unsigned usage, int exp, const uint32_t *uid)
{
	struct cc_key_spec s = { .name = name,
				 .alg = alg,
				 .usage = usage,
				 .exportable = exp,
				 .uids = uid,
				 .nuids = 1 };
	return s;
}

static int sh(const char *fmt, const char *a)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), fmt, work, a, work, a);
	return system(cmd);
}

/* A file under work: its bytes (malloc'd), *n its length; NULL if none. */
static uint8_t *slurp(const char *name, size_t *n)
{
	char p[320];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", work, name);
	int fd = open(p, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	uint8_t *b = malloc((size_t)st.st_size + 1);
	ssize_t r = b ? read(fd, b, (size_t)st.st_size) : -1;
	close(fd);
	if (r != st.st_size) {
		free(b);
		return NULL;
	}
	*n = (size_t)r;
	return b;
}

static int same_file(const char *name, const uint8_t *b, int n)
{
	size_t fl;
	uint8_t *f = slurp(name, &fl);
	int same = f && n > 0 && fl == (size_t)n && !memcmp(f, b, fl);
	free(f);
	return same;
}

/* Any 8-byte window of secret[0..n) in hay[0..m)? */
static long windows_in(const uint8_t *hay, size_t m, const uint8_t *secret,
		       size_t n)
{
	long hits = 0;
	for (size_t i = 0; i + WINDOW <= n; i++)
		for (size_t j = 0; j + WINDOW <= m; j++)
			if (!memcmp(hay + j, secret + i, WINDOW)) {
				hits++;
				break;
			}
	return hits;
}

/* Create each algorithm; its public key is what its row says. */
static void test_create_all(struct cc_conn *c)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		char name[32];
		struct cc_key_info in;
		uint8_t pub[1024];
		snprintf(name, sizeof(name), "gen-%s",
			 cc_alg_name(algs[i].alg));
		struct cc_key_spec s = pspec(name, algs[i].alg, 0, 0, &me);
		int err = cc_key_create(c, &s, &in);
		if (err)
			fprintf(stderr, "FAIL create %s: %d %s\n", name, err,
				cc_conn_last_error(c));
		CHECK(err == 0);
		CHECK(in.alg == algs[i].alg && in.usage == algs[i].usage);
		CHECK(in.key_len == 0 && in.nversions == 1);
		int n = cc_key_pub(c, name, 0, pub, sizeof(pub));
		CHECK(n > 0);
		const uint8_t *p = pub;
		EVP_PKEY *pk = n > 0 ? d2i_PUBKEY(NULL, &p, n) : NULL;
		CHECK(pk && EVP_PKEY_is_a(pk, algs[i].type));
		if (pk && strcmp(algs[i].type, "X25519") &&
		    strcmp(algs[i].type, "ED25519") &&
		    strcmp(algs[i].type, "ED448"))
			CHECK(EVP_PKEY_get_bits(pk) == algs[i].bits);
		EVP_PKEY_free(pk);
	}
	/* Rotation makes a new pair: another public key, version 2. */
	uint8_t a[1024], b[1024];
	int na = cc_key_pub(c, "gen-ec-p256", 0, a, sizeof(a));
	CHECK(cc_key_rotate(c, "gen-ec-p256", NULL) == 2);
	int nb = cc_key_pub(c, "gen-ec-p256", 0, b, sizeof(b));
	CHECK(na > 0 && nb > 0 && (na != nb || memcmp(a, b, (size_t)na)));
	CHECK(cc_key_pub(c, "gen-ec-p256", 1, b, sizeof(b)) == na &&
	      !memcmp(a, b, (size_t)na));
	CHECK(cc_key_pub(c, "gen-ec-p256", 3, b, sizeof(b)) < 0);
	/* pub of a cipher's key: it has none */
	struct cc_key_spec s =
		spec("sym", CC_KEY_ENCRYPT | CC_KEY_DECRYPT, 0, &me);
	CHECK(cc_key_create(c, &s, NULL) == 0);
	CHECK(cc_key_pub(c, "sym", 0, b, sizeof(b)) < 0);
	CHECK(strstr(cc_conn_last_error(c), "no key pair") != NULL);
}

/* Import name from work/file (under pass); 0 or the error. */
static int import(struct cc_conn *c, const char *name, enum cc_alg alg,
		  const char *file, const char *pass)
{
	size_t n;
	uint8_t *k = slurp(file, &n);
	if (!k)
		return -ENOENT;
	struct cc_key_spec s = pspec(name, alg, 0, 1, &me);
	int err = cc_key_import_pair(c, &s, k, n, pass, pass ? strlen(pass) : 0,
				     NULL);
	explicit_bzero(k, n);
	free(k);
	return err;
}

/* key pub of name equals work/pubfile (openssl pkey -pubout -outform DER) */
static int pub_is(struct cc_conn *c, const char *name, const char *pubfile)
{
	uint8_t pub[1024];
	int n = cc_key_pub(c, name, 0, pub, sizeof(pub));
	return same_file(pubfile, pub, n);
}

static void test_import_forms(struct cc_conn *c)
{
	/* %1$s work dir, %2$s a base name: made once by openssl(1). */
	CHECK(sh("cd %s && openssl genpkey -algorithm RSA -pkeyopt "
		 "rsa_keygen_bits:2048 -out %s.pem 2>/dev/null && "
		 "openssl pkey -in %s/%s.pem -outform DER -out rsa.der && "
		 "openssl pkey -in rsa.pem -pubout -outform DER -out rsa.pub && "
		 "openssl pkey -in rsa.pem -traditional -out rsa-trad.pem && "
		 "openssl pkey -in rsa.pem -aes-256-cbc -passout pass:s3cret "
		 "-out rsa-enc.pem && openssl pkcs8 -topk8 -in rsa.pem "
		 "-v2 aes-128-cbc -passout pass:s3cret -outform DER "
		 "-out rsa-enc.der",
		 "rsa") == 0);
	CHECK(sh("cd %s && openssl genpkey -algorithm EC -pkeyopt "
		 "ec_paramgen_curve:P-256 -out %s.pem && "
		 "openssl pkey -in %s/%s.pem -pubout -outform DER -out ec.pub "
		 "&& openssl pkey -in ec.pem -traditional -out ec-trad.pem && "
		 "openssl pkey -in ec.pem -pubout -out ec-pub.pem && "
		 "openssl pkey -in ec.pem -outform DER -out ec.der",
		 "ec") == 0);
	CHECK(sh("cd %s && openssl genpkey -algorithm ED25519 -out %s.pem && "
		 "openssl pkey -in %s/%s.pem -pubout -outform DER -out ed.pub",
		 "ed") == 0);
	size_t n;
	uint8_t *t = slurp("rsa-trad.pem", &n);
	CHECK(t && memmem(t, n, "BEGIN RSA PRIVATE KEY", 21));
	free(t);
	t = slurp("ec-trad.pem", &n);
	CHECK(t && memmem(t, n, "BEGIN EC PRIVATE KEY", 20));
	free(t);

	static const struct {
		const char *name, *file, *pass, *pub;
		enum cc_alg alg;
	} ok[] = {
		{ "i-rsa-pem", "rsa.pem", NULL, "rsa.pub", CC_ALG_RSA_2048 },
		{ "i-rsa-der", "rsa.der", NULL, "rsa.pub", 0 },
		{ "i-rsa-trad", "rsa-trad.pem", NULL, "rsa.pub", 0 },
		{ "i-rsa-enc", "rsa-enc.pem", "s3cret", "rsa.pub", 0 },
		{ "i-rsa-encd", "rsa-enc.der", "s3cret", "rsa.pub",
		  CC_ALG_RSA_2048 },
		{ "i-ec-trad", "ec-trad.pem", NULL, "ec.pub", CC_ALG_EC_P256 },
		{ "i-ec-der", "ec.der", NULL, "ec.pub", 0 },
		{ "i-ed", "ed.pem", NULL, "ed.pub", 0 },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int err = import(c, ok[i].name, ok[i].alg, ok[i].file,
				 ok[i].pass);
		if (err)
			fprintf(stderr, "FAIL import %s: %d %s\n", ok[i].file,
				err, cc_conn_last_error(c));
		CHECK(err == 0);
		CHECK(pub_is(c, ok[i].name, ok[i].pub));
	}
	struct cc_key_info in;
	CHECK(cc_key_show(c, "i-rsa-der", &in) == 0 &&
	      in.alg == CC_ALG_RSA_2048 && in.usage == (16 | 32 | 1 | 2));

	/* Refused, each with its reason; nothing is left behind. */
	CHECK(import(c, "x", 0, "rsa-enc.pem", "wrong") < 0);
	CHECK(strstr(cc_conn_last_error(c), "wrong passphrase") != NULL);
	CHECK(import(c, "x", 0, "rsa-enc.der", NULL) < 0);
	CHECK(strstr(cc_conn_last_error(c), "no passphrase") != NULL);
	CHECK(import(c, "x", CC_ALG_RSA_3072, "rsa.pem", NULL) < 0);
	CHECK(strstr(cc_conn_last_error(c), "rsa-2048") &&
	      strstr(cc_conn_last_error(c), "rsa-3072"));
	CHECK(import(c, "x", CC_ALG_EC_P384, "ec.pem", NULL) < 0);
	CHECK(strstr(cc_conn_last_error(c), "ec-p256") != NULL);
	CHECK(import(c, "x", 0, "ec-pub.pem", NULL) < 0);
	CHECK(strstr(cc_conn_last_error(c), "public key") != NULL);
	CHECK(import(c, "x", 0, "ec.pub", NULL) < 0);
	CHECK(strstr(cc_conn_last_error(c), "public key") != NULL);
	/* an AES algorithm for a key pair's bytes */
	CHECK(import(c, "x", CC_ALG_AES_GCM, "ec.der", NULL) < 0);

	uint8_t junk[600];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	struct cc_key_spec s = pspec("x", 0, 0, 0, &me);
	CHECK(cc_key_import_pair(c, &s, junk, sizeof(junk), NULL, 0, NULL) < 0);
	CHECK(strstr(cc_conn_last_error(c), "not a private key") != NULL);
	/* truncated: the first half of a PEM */
	uint8_t *k = slurp("rsa.pem", &n);
	CHECK(k && cc_key_import_pair(c, &s, k, n / 2, NULL, 0, NULL) < 0);
	/* a DER that says it is 4 GiB long, in PEM */
	static const char huge[] = "-----BEGIN PRIVATE KEY-----\n"
				   "MIT/////AgEAMAUGAytlcAQiBCA=\n"
				   "-----END PRIVATE KEY-----\n";
	CHECK(cc_key_import_pair(c, &s, huge, sizeof(huge) - 1, NULL, 0, NULL) <
	      0);
	/* and as DER */
	CHECK(cc_key_import_pair(c, &s, "\x30\x84\xff\xff\xff\xff\x02\x01", 8,
				 NULL, 0, NULL) < 0);
	/* longer than any key pair: refused before it leaves */
	static uint8_t big[CC_KEY_PAIR_MAX + 1];
	CHECK(cc_key_import_pair(c, &s, big, sizeof(big), NULL, 0, NULL) ==
	      -EINVAL);
	free(k);
	CHECK(cc_key_show(c, "x", &in) < 0);
	/* the daemon is fine */
	CHECK(pub_is(c, "i-rsa-pem", "rsa.pub"));
}

static void test_usage_rules(struct cc_conn *c)
{
	static const struct {
		enum cc_alg alg;
		unsigned usage;
		const char *why;
	} bad[] = {
		{ CC_ALG_ED25519, CC_KEY_DERIVE, "EdDSA" },
		{ CC_ALG_ED448, CC_KEY_DECRYPT, "EdDSA" },
		{ CC_ALG_X25519, CC_KEY_SIGN, "X25519" },
		{ CC_ALG_EC_P256, CC_KEY_ENCRYPT, "EC key" },
		{ CC_ALG_RSA_2048, CC_KEY_DERIVE | CC_KEY_SIGN, "RSA key" },
		{ CC_ALG_RSA_2048, CC_KEY_MAC_GENERATE, "RSA key" },
		{ CC_ALG_AES_GCM, CC_KEY_SIGN, "sign, verify, derive" },
		{ CC_ALG_HMAC_SHA256, CC_KEY_VERIFY, "sign, verify, derive" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cc_key_spec s =
			pspec("u", bad[i].alg, bad[i].usage, 0, &me);
		if (bad[i].alg == CC_ALG_AES_GCM ||
		    bad[i].alg == CC_ALG_HMAC_SHA256)
			s.key_len = 32;
		CHECK(cc_key_create(c, &s, NULL) < 0);
		const char *e = cc_conn_last_error(c);
		if (!strstr(e, bad[i].why))
			fprintf(stderr, "FAIL usage %zu: '%s'\n", i, e);
		CHECK(strstr(e, bad[i].why) != NULL);
	}
	/* sign alone, derive alone, decrypt alone: taken as given */
	struct cc_key_info in;
	struct cc_key_spec s =
		pspec("u-sign", CC_ALG_ED25519, CC_KEY_SIGN, 0, &me);
	CHECK(cc_key_create(c, &s, &in) == 0 && in.usage == CC_KEY_SIGN);
	s = pspec("u-derive", CC_ALG_EC_P384, CC_KEY_DERIVE, 0, &me);
	CHECK(cc_key_create(c, &s, &in) == 0 && in.usage == CC_KEY_DERIVE);
	s = pspec("u-dec", CC_ALG_RSA_2048, CC_KEY_DECRYPT, 0, &me);
	CHECK(cc_key_create(c, &s, &in) == 0 && in.usage == CC_KEY_DECRYPT);
}

/* Wrap of an exportable pair: OpenSSL unwraps it to the PKCS#8 DER of
 * the same key; unwrap imports it back. A non-exportable one: never. */
static void test_wrap(struct cc_conn *c)
{
	uint8_t wkek[32], blob[3000], der[3000], pub[1024];
	memset(wkek, 0x5c, sizeof(wkek));
	int n = cc_key_wrap(c, "i-rsa-pem", 0, wkek, 32, blob, sizeof(blob));
	CHECK(n > 0);
	int dl = n > 0 ? ossl_unwrap(wkek, blob, n, der) : -1;
	CHECK(dl > 0);
	const uint8_t *p = der;
	PKCS8_PRIV_KEY_INFO *p8 =
		dl > 0 ? d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, dl) : NULL;
	EVP_PKEY *pk = p8 ? EVP_PKCS82PKEY(p8) : NULL;
	CHECK(pk != NULL);
	uint8_t *q = pub;
	int pl = pk ? i2d_PUBKEY(pk, &q) : -1;
	CHECK(same_file("rsa.pub", pub, pl));
	PKCS8_PRIV_KEY_INFO_free(p8);
	EVP_PKEY_free(pk);
	explicit_bzero(der, sizeof(der));

	struct cc_key_spec s = pspec("rewrapped", 0, 0, 0, &me);
	CHECK(cc_key_unwrap(c, &s, wkek, 32, blob, (size_t)n, NULL) == 0);
	CHECK(pub_is(c, "rewrapped", "rsa.pub"));
	s = pspec("rewrapped2", CC_ALG_EC_P256, 0, 0, &me);
	CHECK(cc_key_unwrap(c, &s, wkek, 32, blob, (size_t)n, NULL) < 0);

	/* created, generated or imported without --exportable: never */
	CHECK(cc_key_wrap(c, "gen-rsa-2048", 0, wkek, 32, blob, sizeof(blob)) <
	      0);
	CHECK(strstr(cc_conn_last_error(c), "not exportable") != NULL);
	CHECK(cc_key_wrap(c, "rewrapped", 0, wkek, 32, blob, sizeof(blob)) < 0);
}

/* The sealed files and the log hold no window of a private key. */
static void test_files_sealed(void)
{
	size_t kl, ll;
	uint8_t *der = slurp("rsa.der", &kl), *ec = NULL;
	size_t el;
	ec = slurp("ec.der", &el);
	CHECK(der && ec);
	DIR *d = opendir(keydir);
	CHECK(d != NULL);
	unsigned files = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char p[400];
		snprintf(p, sizeof(p), "../keys/%s", e->d_name);
		size_t fl;
		uint8_t *f = slurp(p, &fl);
		CHECK(f != NULL);
		if (f && der && ec) {
			long h = windows_in(f, fl, der, kl) +
				 windows_in(f, fl, ec, el);
			if (h)
				fprintf(stderr, "FAIL: %s: %ld windows\n",
					e->d_name, h);
			CHECK(h == 0);
		}
		free(f);
		files++;
	}
	if (d)
		closedir(d);
	CHECK(files > 20);
	uint8_t *log = slurp("../daemon.log", &ll);
	/* the log is there: it says what was made, never of what */
	CHECK(log &&
	      memmem(log, ll, "keys: i-rsa-enc (rsa-2048) imported", 35));
	if (log && der && ec)
		CHECK(windows_in(log, ll, der, kl) +
			      windows_in(log, ll, ec, el) ==
		      0);
	free(log);
	free(der);
	free(ec);
}

/* Every key's public half, for comparing across a restart. */
static const char *const kept[] = {
	"gen-rsa-4096", "gen-ec-p256", "gen-ed448",
	"gen-x25519",	"i-rsa-enc",   "i-ec-trad"
};
static uint8_t kept_pub[6][1024];
static int kept_len[6];

static void pubs_save(struct cc_conn *c)
{
	for (int i = 0; i < 6; i++) {
		kept_len[i] = cc_key_pub(c, kept[i], 0, kept_pub[i], 1024);
		CHECK(kept_len[i] > 0);
	}
}

static void pubs_same(struct cc_conn *c)
{
	uint8_t pub[1024];
	for (int i = 0; i < 6; i++)
		CHECK(cc_key_pub(c, kept[i], 0, pub, sizeof(pub)) ==
			      kept_len[i] &&
		      !memcmp(pub, kept_pub[i], (size_t)kept_len[i]));
}

/* Verify sig over in (a SHA-256 digest, or the message for EdDSA) with
 * the public key name's pub gives, in-process. */
static int ossl_verifies(struct cc_conn *c, const char *name, int pss,
			 const uint8_t *in, size_t n, const uint8_t *sig,
			 size_t sl)
{
	uint8_t pub[1024];
	int pl = cc_key_pub(c, name, 0, pub, sizeof(pub));
	const uint8_t *p = pub;
	EVP_PKEY *pk = pl > 0 ? d2i_PUBKEY(NULL, &p, pl) : NULL;
	int ok = 0;
	if (pk &&
	    (EVP_PKEY_is_a(pk, "ED25519") || EVP_PKEY_is_a(pk, "ED448"))) {
		EVP_MD_CTX *m = EVP_MD_CTX_new();
		ok = m && EVP_DigestVerifyInit(m, NULL, NULL, NULL, pk) == 1 &&
		     EVP_DigestVerify(m, sig, sl, in, n) == 1;
		EVP_MD_CTX_free(m);
	} else if (pk) {
		EVP_PKEY_CTX *x = EVP_PKEY_CTX_new(pk, NULL);
		ok = x && EVP_PKEY_verify_init(x) == 1 &&
		     EVP_PKEY_CTX_set_signature_md(x, EVP_sha256()) == 1 &&
		     (!EVP_PKEY_is_a(pk, "RSA") ||
		      EVP_PKEY_CTX_set_rsa_padding(
			      x, pss ? RSA_PKCS1_PSS_PADDING
				     : RSA_PKCS1_PADDING) == 1) &&
		     EVP_PKEY_verify(x, sig, sl, in, n) == 1;
		EVP_PKEY_CTX_free(x);
	}
	EVP_PKEY_free(pk);
	return ok;
}

/*
 * Sessions on named key pairs, end to end: the daemon signs with the key
 * it holds and OpenSSL verifies in-process with `key pub`'s public key;
 * X25519 derives what OpenSSL derives; each key's usage rules bound its
 * session's ops.
 */
static void test_sessions(struct cc_conn *c)
{
	static const struct {
		const char *name;
		int md, pss;
	} signers[] = {
		{ "gen-rsa-2048", 1, 0 }, { "gen-rsa-3072", 1, 1 },
		{ "gen-ec-p256", 1, 0 },  { "gen-ec-p521", 1, 0 },
		{ "gen-ed25519", 0, 0 },  { "gen-ed448", 0, 0 },
		{ "u-sign", 0, 0 },
	};
	uint8_t dg[32], sig[600];
	unsigned dl;
	EVP_Digest(msg, sizeof(msg), dg, &dl, EVP_sha256(), NULL);
	for (size_t i = 0; i < sizeof(signers) / sizeof(signers[0]); i++) {
		uint32_t sid;
		struct cc_pk_params pp = { 0 };
		const uint8_t *in = signers[i].md ? dg : msg;
		size_t n = signers[i].md ? 32 : sizeof(msg), sl = sizeof(sig);
		if (signers[i].md)
			pp.md = CC_PK_MD_SHA256;
		if (signers[i].pss) {
			pp.pad = CC_PK_PAD_PSS;
			pp.salt_len = CC_PK_SALT_DIGEST;
		}
		int err = session_on(c, signers[i].name, 0, &sid);
		if (err)
			fprintf(stderr, "FAIL session on %s: %d %s\n",
				signers[i].name, err, cc_conn_last_error(c));
		CHECK(err == 0);
		if (err)
			continue;
		err = cc_pk_sign(c, sid, &pp, in, n, sig, &sl);
		CHECK(err == 0);
		int ok = !err && ossl_verifies(c, signers[i].name,
					       signers[i].pss, in, n, sig, sl);
		if (!ok)
			fprintf(stderr, "FAIL: %s: sign %d, OpenSSL verify\n",
				signers[i].name, err);
		CHECK(ok);
		/* usage sign alone: the session does not verify */
		int v = cc_pk_verify(c, sid, &pp, in, n, sig, sl);
		CHECK(strcmp(signers[i].name, "u-sign") ? v == 0
							: v == CC_ERR_POLICY);
		CHECK(cc_session_destroy(c, sid) == 0);
	}

	/* X25519: the daemon's secret is OpenSSL's */
	uint32_t sid;
	uint8_t pub[128], ppub[64], s1[64], s2[64];
	size_t pl = sizeof(ppub), l1 = sizeof(s1), l2 = sizeof(s2);
	EVP_PKEY *peer = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
	CHECK(peer && EVP_PKEY_get_raw_public_key(peer, ppub, &pl) == 1);
	CHECK(session_on(c, "gen-x25519", 0, &sid) == 0);
	CHECK(cc_pk_derive(c, sid, ppub, pl, s1, &l1) == 0);
	int n = cc_key_pub(c, "gen-x25519", 0, pub, sizeof(pub));
	const uint8_t *p = pub;
	EVP_PKEY *ours = n > 0 ? d2i_PUBKEY(NULL, &p, n) : NULL;
	EVP_PKEY_CTX *x = peer ? EVP_PKEY_CTX_new(peer, NULL) : NULL;
	CHECK(x && ours && EVP_PKEY_derive_init(x) == 1 &&
	      EVP_PKEY_derive_set_peer(x, ours) == 1 &&
	      EVP_PKEY_derive(x, s2, &l2) == 1);
	CHECK(l1 == 32 && l2 == 32 && !memcmp(s1, s2, 32));
	EVP_PKEY_CTX_free(x);
	EVP_PKEY_free(ours);
	EVP_PKEY_free(peer);
	CHECK(cc_session_destroy(c, sid) == 0);

	/* decrypt-only RSA and derive-only EC sessions do not sign */
	static const char *const nosign[] = { "u-dec", "u-derive" };
	for (int i = 0; i < 2; i++) {
		struct cc_pk_params pp = { .md = CC_PK_MD_SHA256 };
		size_t sl = sizeof(sig);
		CHECK(session_on(c, nosign[i], 0, &sid) == 0);
		CHECK(cc_pk_sign(c, sid, &pp, dg, 32, sig, &sl) ==
		      CC_ERR_POLICY);
		CHECK(cc_session_destroy(c, sid) == 0);
	}
	explicit_bzero(s1, sizeof(s1));
	explicit_bzero(s2, sizeof(s2));
}

/* A create of an RSA-4096 pair on its own connection, timed. */
struct slow_create {
	const char *sock;
	int err;
	uint64_t ms;
	_Atomic int done;
};

static void *slow_create_run(void *arg)
{
	struct slow_create *sc = arg;
	struct cc_conn *c;
	uint64_t t0 = fx_now_ms();
	sc->err = cc_connect(sc->sock, "slow-create", &c);
	if (!sc->err) {
		struct cc_key_spec s =
			pspec("slow", CC_ALG_RSA_4096, 0, 0, &me);
		sc->err = cc_key_create(c, &s, NULL);
		cc_disconnect(c);
	}
	sc->ms = fx_now_ms() - t0;
	sc->done = 1;
	return NULL;
}

/*
 * The pair is made off the control thread: while an RSA-4096 pair is
 * generated (seconds), another client's request is answered at once,
 * and another generation is refused (-EBUSY) rather than queued.
 */
static void test_generation_async(struct fx_daemon *d, struct cc_conn *c)
{
	struct slow_create sc = { .sock = d->sock };
	pthread_t t;
	struct cc_key_info in;
	CHECK(pthread_create(&t, NULL, slow_create_run, &sc) == 0);
	usleep(100 * 1000);
	uint64_t t0 = fx_now_ms();
	CHECK(cc_key_show(c, "gen-ed25519", &in) == 0);
	uint64_t show_ms = fx_now_ms() - t0;
	int pending = !sc.done;
	struct cc_key_spec s = pspec("second", CC_ALG_ED25519, 0, 0, &me);
	int busy = cc_key_create(c, &s, NULL);
	int still = !sc.done;
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(sc.err == 0);
	printf("rsa-4096 create: %llu ms; a show meanwhile: %llu ms\n",
	       (unsigned long long)sc.ms, (unsigned long long)show_ms);
	/* Blocked, the show would have waited for the rest of it. */
	if (sc.ms > 400)
		CHECK(show_ms < sc.ms / 2);
	if (pending && still)
		CHECK(busy == -EBUSY &&
		      strstr(cc_conn_last_error(c), "being generated"));
	CHECK(cc_key_show(c, "slow", &in) == 0 && in.alg == CC_ALG_RSA_4096);
	CHECK(cc_key_delete(c, "slow") == 0);
	if (!busy)
		CHECK(cc_key_delete(c, "second") == 0);
}

/* As nobody: pub, use and show of a key it may not use look like no
 * key; of one it may, pub works. */
static void test_other_uid(struct fx_daemon *d, struct cc_conn *c)
{
	if (geteuid() != 0) {
		printf("SKIP other uid: not root\n");
		return;
	}
	uint32_t nobody = 65534;
	struct cc_key_spec s = pspec("nobodys", CC_ALG_EC_P256, 0, 0, &nobody);
	CHECK(cc_key_create(c, &s, NULL) == 0);
	uint8_t want[1024];
	int wl = cc_key_pub(c, "nobodys", 0, want, sizeof(want));
	chmod(d->dir, 0755);
	chmod(d->sock, 0666);
	pid_t pid = fork();
	if (pid == 0) {
		struct cc_conn *cc;
		uint8_t pub[1024];
		uint32_t sid;
		struct cc_key_info in;
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		if (cc_connect(d->sock, "nobody", &cc))
			_exit(11);
		if (cc_key_pub(cc, "nobodys", 0, pub, sizeof(pub)) != wl ||
		    memcmp(pub, want, (size_t)wl))
			_exit(12);
		if (cc_key_pub(cc, "gen-ec-p256", 0, pub, sizeof(pub)) !=
			    CC_ERR_ACCESS ||
		    cc_key_pub(cc, "no-such", 0, pub, sizeof(pub)) !=
			    CC_ERR_ACCESS)
			_exit(13);
		if (strcmp(cc_conn_last_error(cc),
			   "no key of that name that you may use"))
			_exit(14);
		if (session_on(cc, "gen-ec-p256", 0, &sid) != CC_ERR_ACCESS ||
		    session_on(cc, "no-such", 0, &sid) != CC_ERR_ACCESS)
			_exit(15);
		if (cc_key_show(cc, "gen-ec-p256", &in) != CC_ERR_ACCESS)
			_exit(16);
		struct cc_key_spec t =
			pspec("mine", CC_ALG_ED25519, 0, 0, &nobody);
		if (cc_key_create(cc, &t, NULL) != CC_ERR_ACCESS)
			_exit(17);
		_exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "FAIL: as nobody: step %d\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A deleted pair's secret (the EC scalar, RSA's first prime) leaves the
 * daemon's memory. */
static void test_delete_wipes(struct fx_daemon *d, struct cc_conn *c)
{
	size_t n;
	uint8_t *k = slurp("ec.der", &n), sc[32], pr[128];
	const uint8_t *p = k;
	EVP_PKEY *ec = k ? d2i_AutoPrivateKey(NULL, &p, (long)n) : NULL;
	free(k);
	k = slurp("rsa.der", &n);
	p = k;
	EVP_PKEY *rsa = k ? d2i_AutoPrivateKey(NULL, &p, (long)n) : NULL;
	free(k);
	BIGNUM *x = NULL, *f = NULL;
	CHECK(ec && EVP_PKEY_get_bn_param(ec, OSSL_PKEY_PARAM_PRIV_KEY, &x));
	CHECK(rsa &&
	      EVP_PKEY_get_bn_param(rsa, OSSL_PKEY_PARAM_RSA_FACTOR1, &f));
	CHECK(x && BN_bn2binpad(x, sc, 32) == 32);
	CHECK(f && BN_bn2binpad(f, pr, 128) == 128);
	BN_clear_free(x);
	BN_clear_free(f);
	EVP_PKEY_free(ec);
	EVP_PKEY_free(rsa);
	CHECK(scan_windows(d->pid, sc, 32) > 0);
	CHECK(scan_windows(d->pid, pr, 128) > 0);
	static const char *const del[] = { "i-rsa-pem",	 "i-rsa-der",
					   "i-rsa-trad", "i-rsa-enc",
					   "i-rsa-encd", "rewrapped",
					   "i-ec-trad",	 "i-ec-der" };
	for (size_t i = 0; i < sizeof(del) / sizeof(del[0]); i++)
		CHECK(cc_key_delete(c, del[i]) == 0);
	long hs = scan_windows(d->pid, sc, 32),
	     hp = scan_windows(d->pid, pr, 128);
	if (hs || hp)
		fprintf(stderr, "FAIL: after delete: %ld + %ld windows\n", hs,
			hp);
	CHECK(hs == 0 && hp == 0);
	CHECK(cc_key_pub(c, "i-ec-der", 0, sc, sizeof(sc)) < 0);
	explicit_bzero(sc, sizeof(sc));
	explicit_bzero(pr, sizeof(pr));
}

int main(void)
{
	struct fx_daemon d;
	struct fx_daemon_params dp;
	struct cc_conn *c;

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	if (setup_dirs()) {
		perror("setup");
		return FX_EXIT_FAIL;
	}
	snprintf(work, sizeof(work), "%s/work", tmp);
	snprintf(logpath, sizeof(logpath), "%s/daemon.log", tmp);
	if (mkdir(work, 0700)) {
		perror(work);
		return FX_EXIT_FAIL;
	}
	/* The daemon's log (the stderr it inherits) into a file we scan;
	 * ours stays where it was. */
	saved = dup(2);
	lfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (saved < 0 || lfd < 0)
		return FX_EXIT_FAIL;
	dp = (struct fx_daemon_params){ .workers = 1,
					.args = args,
					.log_level = "info" };
	dup2(lfd, 2);
	int err = fx_daemon_start(&d, &dp);
	dup2(saved, 2);
	if (!err && cc_connect(d.sock, "key-pairs", &c))
		err = -1;
	if (err) {
		fprintf(stderr, "FAIL: daemon start\n");
		return FX_EXIT_FAIL;
	}
	test_create_all(c);
	test_import_forms(c);
	test_usage_rules(c);
	test_wrap(c);
	pubs_save(c);
	cc_disconnect(c);
	dup2(lfd, 2);
	err = fx_daemon_restart(&d, &dp);
	dup2(saved, 2);
	CHECK(err == 0);
	CHECK(cc_connect(d.sock, "key-pairs", &c) == 0);
	pubs_same(c);
	test_sessions(c);
	test_generation_async(&d, c);
	test_other_uid(&d, c);
	test_files_sealed();
	test_delete_wipes(&d, c);
	cc_disconnect(c);
	close(saved);
	close(lfd);
	return nk_finish(&d);
}
