/* SPDX-License-Identifier: MIT */
/*
 * Daemon-held key pairs through EVP (provider/prov_pkey_*.c): keys loaded
 * as cryptod:NAME (OSSL_STORE) have the parameters OpenSSL asks for,
 * equal their public key (EVP_PKEY_eq, X509_check_private_key on a
 * certificate of the public key, and not on another's); EVP_DigestSign
 * with them (RSA PKCS#1 v1.5 and PSS with SHA-256/384/512 and salt
 * lengths as OpenSSL passes them, ECDSA, Ed25519) verifies in-process
 * against the public key, and the daemon counted each signature on the
 * key; signing jobs (ASYNC_JOB) pause while the daemon signs; a key
 * that signed before fork() signs in the child; derives
 * agree with in-process keys both ways; RSA-OAEP (SHA-1/256/384, with
 * and without a label) decrypts in the daemon what the default provider
 * encrypted, and not with the wrong label or a changed ciphertext.
 * With cryptod loaded first (pfx_start_with, then the default provider),
 * keys made by type name are the program's own, made in-process by our
 * key management: they derive with daemon keys, sign, decrypt and are
 * written out as PEM. Refusals name cryptod: no such key, a sign-only
 * key asked to derive or decrypt, PKCS#1 v1.5 decryption.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/rsa.h>
#include <openssl/store.h>
#include <openssl/x509.h>

#include "prov_fixture.h"

static int create(struct cc_conn *c, const char *name, const char *alg,
		  unsigned usage)
{
	uint32_t uid = getuid(); /* on the key's ACL */
	struct cc_key_spec s = { .name = name,
				 .alg = (enum cc_alg)cc_alg_from_name(alg),
				 .usage = usage,
				 .uids = &uid,
				 .nuids = 1 };
	int err = cc_key_create(c, &s, NULL);
	if (err)
		FAIL("create %s (%s): %s", name, alg, cc_strerror(err));
	return err;
}

/* The public key, in-process on the default provider. */
static EVP_PKEY *pub(struct cc_conn *c, const char *name)
{
	uint8_t der[1024];
	int n = cc_key_pub(c, name, 0, der, sizeof(der));
	const unsigned char *p = der;
	return n > 0 ? d2i_PUBKEY(NULL, &p, n) : NULL;
}

static uint64_t key_ops(struct cc_conn *c, const char *name)
{
	struct cc_key_info i;
	return cc_key_show(c, name, &i) ? 0 : i.ops;
}

/* A certificate of pk's, self-signed in-process with signer (any
 * provider's), or NULL. */
static X509 *cert_of(EVP_PKEY *pk, EVP_PKEY *signer, OSSL_LIB_CTX *lib)
{
	X509 *x = X509_new_ex(lib, NULL);
	X509_NAME *n = X509_NAME_new();
	int ok = x && n && X509_set_version(x, 2) &&
		 ASN1_INTEGER_set(X509_get_serialNumber(x), 1) &&
		 X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
					    (const unsigned char *)"t", -1, -1,
					    0) &&
		 X509_set_subject_name(x, n) && X509_set_issuer_name(x, n) &&
		 X509_gmtime_adj(X509_getm_notBefore(x), 0) &&
		 X509_gmtime_adj(X509_getm_notAfter(x), 3600) &&
		 X509_set_pubkey(x, pk) &&
		 X509_sign(x, signer,
			   EVP_PKEY_is_a(signer, "ED25519") ? NULL
							    : EVP_sha256()) > 0;
	X509_NAME_free(n);
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* Sign msg with k through the provider (lib), verify with p in-process;
 * pad 0: the key's default; salt: PSS's, as OpenSSL takes it. */
static void sign_check(OSSL_LIB_CTX *lib, EVP_PKEY *k, EVP_PKEY *p,
		       const char *what, const char *md, int pad, int salt)
{
	static const unsigned char msg[] = "a message signed in the daemon";
	unsigned char sig[1024];
	size_t siglen = sizeof(sig);
	EVP_MD_CTX *m = EVP_MD_CTX_new(), *v = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pc = NULL, *vc = NULL;
	int ok = m && v &&
		 EVP_DigestSignInit_ex(m, &pc, md, lib, NULL, k, NULL) == 1 &&
		 (!pad || EVP_PKEY_CTX_set_rsa_padding(pc, pad) > 0) &&
		 (pad != RSA_PKCS1_PSS_PADDING ||
		  EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, salt) > 0);
	if (!ok || EVP_DigestSign(m, sig, &siglen, msg, sizeof(msg)) != 1) {
		FAIL("%s: sign", what);
		goto out;
	}
	ok = EVP_DigestVerifyInit(v, &vc, md ? EVP_get_digestbyname(md) : NULL,
				  NULL, p) == 1 &&
	     (!pad || EVP_PKEY_CTX_set_rsa_padding(vc, pad) > 0) &&
	     (pad != RSA_PKCS1_PSS_PADDING ||
	      EVP_PKEY_CTX_set_rsa_pss_saltlen(vc, salt) > 0);
	if (!ok || EVP_DigestVerify(v, sig, siglen, msg, sizeof(msg)) != 1)
		FAIL("%s: the signature does not verify in-process", what);
	/* One bit off: no longer (the check can fail). */
	sig[siglen / 2] ^= 1;
	EVP_MD_CTX_reset(v);
	ok = EVP_DigestVerifyInit(v, &vc, md ? EVP_get_digestbyname(md) : NULL,
				  NULL, p) == 1 &&
	     (!pad || EVP_PKEY_CTX_set_rsa_padding(vc, pad) > 0) &&
	     (pad != RSA_PKCS1_PSS_PADDING ||
	      EVP_PKEY_CTX_set_rsa_pss_saltlen(vc, salt) > 0);
	if (ok && EVP_DigestVerify(v, sig, siglen, msg, sizeof(msg)) == 1)
		FAIL("%s: a changed signature verifies", what);
	ERR_clear_error();
out:
	EVP_MD_CTX_free(m);
	EVP_MD_CTX_free(v);
}

/* Signing inside ASYNC_JOBs: each job pauses while the daemon signs
 * (prov_io.c's pio_pk), and the signatures verify. */
struct job_arg {
	OSSL_LIB_CTX *lib;
	EVP_PKEY *k, *p;
};

static int job_fn(void *v)
{
	struct job_arg *a = *(struct job_arg **)v;
	static const unsigned char msg[] = "signed in a job";
	unsigned char sig[512];
	size_t n = sizeof(sig);
	EVP_MD_CTX *m = EVP_MD_CTX_new(), *w = EVP_MD_CTX_new();
	int ok = m && w &&
		 EVP_DigestSignInit_ex(m, NULL, "SHA256", a->lib, NULL, a->k,
				       NULL) == 1 &&
		 EVP_DigestSign(m, sig, &n, msg, sizeof(msg)) == 1 &&
		 EVP_DigestVerifyInit(w, NULL, EVP_sha256(), NULL, a->p) == 1 &&
		 EVP_DigestVerify(w, sig, n, msg, sizeof(msg)) == 1;
	EVP_MD_CTX_free(m);
	EVP_MD_CTX_free(w);
	return ok;
}

static void async_sign(OSSL_LIB_CTX *lib, EVP_PKEY *k, EVP_PKEY *p)
{
	enum { JOBS = 4 };
	struct job_arg a = { lib, k, p }, *ap = &a;
	ASYNC_JOB *job[JOBS] = { 0 };
	ASYNC_WAIT_CTX *wc[JOBS];
	int state[JOBS] = { 0 }; /* 0 running, 1 done */
	unsigned pauses = 0, done = 0;
	for (unsigned i = 0; i < JOBS; i++)
		wc[i] = ASYNC_WAIT_CTX_new();
	for (unsigned spins = 0; done < JOBS && spins < 1000000; spins++) {
		for (unsigned i = 0; i < JOBS; i++) {
			if (state[i])
				continue;
			int ret = 0;
			int r = ASYNC_start_job(&job[i], wc[i], &ret, job_fn,
						&ap, sizeof(ap));
			if (r == ASYNC_PAUSE) {
				pauses++;
				continue;
			}
			if (r != ASYNC_FINISH || !ret)
				FAIL("async job %u: %d/%d", i, r, ret);
			state[i] = 1;
			done++;
		}
	}
	if (done < JOBS)
		FAIL("async: %u of %d jobs finished", done, JOBS);
	if (!pauses)
		FAIL("async: no job paused while the daemon signed");
	for (unsigned i = 0; i < JOBS; i++)
		ASYNC_WAIT_CTX_free(wc[i]);
}

/* A key that signed before fork() signs in the child too: the child
 * opens its own connection and session. */
static void fork_sign(OSSL_LIB_CTX *lib, EVP_PKEY *k, EVP_PKEY *p)
{
	struct job_arg a = { lib, k, p }, *ap = &a;
	if (!job_fn(&ap)) {
		FAIL("fork: the parent's signature");
		return;
	}
	pid_t pid = fork();
	if (pid == 0)
		_exit(job_fn(&ap) ? 0 : 1);
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		FAIL("fork: the child's signature (status %d)", st);
	if (!job_fn(&ap))
		FAIL("fork: the parent's signature after the child's");
}

/* The shared secret of a and b's public key (a's library context). The
 * peer goes as its public half alone: cryptod's key management takes no
 * private key. */
static size_t derive(OSSL_LIB_CTX *lib, EVP_PKEY *a, EVP_PKEY *b,
		     unsigned char *out)
{
	unsigned char *der = NULL;
	int dl = i2d_PUBKEY(b, &der);
	const unsigned char *p = der;
	EVP_PKEY *bp = dl > 0 ? d2i_PUBKEY(NULL, &p, dl) : NULL;
	OPENSSL_free(der);
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, a, NULL);
	size_t n = 256;
	int ok = bp && c && EVP_PKEY_derive_init(c) == 1 &&
		 EVP_PKEY_derive_set_peer(c, bp) == 1 &&
		 EVP_PKEY_derive(c, out, &n) == 1;
	EVP_PKEY_CTX_free(c);
	EVP_PKEY_free(bp);
	return ok ? n : 0;
}

/* ctx set for RSA with pad, OAEP's md and mgf1 (NULL: as md's), label
 * (NULL: none). */
static int rsa_pad(EVP_PKEY_CTX *ctx, int pad, const char *md, const char *mgf1,
		   const char *label)
{
	if (EVP_PKEY_CTX_set_rsa_padding(ctx, pad) <= 0)
		return 0;
	if (pad != RSA_PKCS1_OAEP_PADDING)
		return 1;
	if (EVP_PKEY_CTX_set_rsa_oaep_md_name(ctx, md, NULL) <= 0 ||
	    (mgf1 && EVP_PKEY_CTX_set_rsa_mgf1_md_name(ctx, mgf1, NULL) <= 0))
		return 0;
	if (!label)
		return 1;
	void *l = OPENSSL_memdup(label, strlen(label));
	if (l &&
	    EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, l, (int)strlen(label)) > 0)
		return 1;
	OPENSSL_free(l);
	return 0;
}

/* in encrypted with k (lib: NULL in-process, or through the provider). */
static size_t rsa_enc(OSSL_LIB_CTX *lib, EVP_PKEY *k, int pad, const char *md,
		      const char *mgf1, const char *label,
		      const unsigned char *in, size_t inlen, unsigned char *out)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, k, NULL);
	size_t n = 512;
	int ok = c && EVP_PKEY_encrypt_init(c) == 1 &&
		 rsa_pad(c, pad, md, mgf1, label) &&
		 EVP_PKEY_encrypt(c, out, &n, in, inlen) == 1;
	EVP_PKEY_CTX_free(c);
	return ok ? n : 0;
}

/* ct decrypted with k through the provider: its length, or 0. */
static size_t rsa_dec(OSSL_LIB_CTX *lib, EVP_PKEY *k, int pad, const char *md,
		      const char *mgf1, const char *label,
		      const unsigned char *ct, size_t ctlen, unsigned char *out)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, k, NULL);
	size_t n = 0;
	int ok = c && EVP_PKEY_decrypt_init(c) == 1 &&
		 rsa_pad(c, pad, md, mgf1, label) &&
		 EVP_PKEY_decrypt(c, NULL, &n, ct, ctlen) == 1 && n >= 256 &&
		 EVP_PKEY_decrypt(c, out, &n, ct, ctlen) == 1;
	EVP_PKEY_CTX_free(c);
	return ok ? n : 0;
}

/* RSA-OAEP decryption in the daemon (k, through lib) of what the default
 * provider encrypted with the public key (p): with each digest, with
 * and without a label, MGF1's digest another; the wrong label, a
 * changed ciphertext refused; encryption through the provider (on the
 * public key, in-process) decrypts in the daemon. */
static void oaep_check(OSSL_LIB_CTX *lib, EVP_PKEY *k, EVP_PKEY *p)
{
	static const unsigned char pt[] = "a premaster secret of sorts";
	static const char *const mds[][2] = { { "SHA1", NULL },
					      { "SHA256", NULL },
					      { "SHA384", NULL },
					      { "SHA256", "SHA1" } };
	unsigned char ct[512], out[512];
	for (unsigned i = 0; i < 4; i++) {
		for (unsigned l = 0; l < 2; l++) {
			const char *md = mds[i][0], *mgf1 = mds[i][1];
			const char *label = l ? "a label" : NULL;
			size_t n = rsa_enc(NULL, p, RSA_PKCS1_OAEP_PADDING, md,
					   mgf1, label, pt, sizeof(pt), ct);
			size_t m = n ? rsa_dec(lib, k, RSA_PKCS1_OAEP_PADDING,
					       md, mgf1, label, ct, n, out)
				     : 0;
			if (m != sizeof(pt) || memcmp(out, pt, m))
				FAIL("oaep %s mgf1 %s label %s: %zu bytes", md,
				     mgf1 ? mgf1 : "-", label ? label : "-", m);
			/* The wrong label; a changed ciphertext. */
			if (n &&
			    rsa_dec(lib, k, RSA_PKCS1_OAEP_PADDING, md, mgf1,
				    l ? "another" : "a label", ct, n, out))
				FAIL("oaep %s: the wrong label decrypts", md);
			ct[n / 2] ^= 1;
			if (n && rsa_dec(lib, k, RSA_PKCS1_OAEP_PADDING, md,
					 mgf1, label, ct, n, out))
				FAIL("oaep %s: a changed ciphertext decrypts",
				     md);
			ERR_clear_error();
		}
	}
	size_t n = rsa_enc(lib, k, RSA_PKCS1_OAEP_PADDING, "SHA256", NULL, "x",
			   pt, sizeof(pt), ct);
	size_t m = n ? rsa_dec(lib, k, RSA_PKCS1_OAEP_PADDING, "SHA256", NULL,
			       "x", ct, n, out)
		     : 0;
	if (m != sizeof(pt) || memcmp(out, pt, m))
		FAIL("oaep: encrypted through the provider: %zu bytes", m);
}

/* k's public key as DER, into der (room for 1024 bytes): its length. */
static int pub_der(EVP_PKEY *k, unsigned char *der)
{
	unsigned char *p = der;
	int n = i2d_PUBKEY(k, NULL);
	return n > 0 && n <= 1024 ? i2d_PUBKEY(k, &p) : -1;
}

/* k (any provider's) written as PEM and read back in-process on the
 * default provider, or NULL. */
static EVP_PKEY *pem_copy(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	EVP_PKEY *d = NULL;
	if (b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL))
		d = PEM_read_bio_PrivateKey_ex(b, NULL, NULL, NULL, NULL, NULL);
	BIO_free(b);
	return d;
}

/* With cryptod loaded before the default provider (lib), a key made by
 * type name with no key yet (a handshake's ephemeral X25519 or P-256
 * key, genpkey) is made by our key management, in-process: the
 * program's own key. It derives with a daemon key both ways, the daemon
 * counting only the daemon key's side; it signs and decrypts
 * in-process; it is written out whole as PEM. */
static void keygen_check(OSSL_LIB_CTX *lib, struct cc_conn *c, EVP_PKEY *x,
			 EVP_PKEY *xp)
{
	EVP_PKEY *eph = EVP_PKEY_Q_keygen(lib, NULL, "X25519");
	EVP_PKEY *ec = EVP_PKEY_Q_keygen(lib, NULL, "EC", "P-256");
	EVP_PKEY *rsa = EVP_PKEY_Q_keygen(lib, NULL, "RSA", (size_t)2048);
	EVP_PKEY *ecd = ec ? pem_copy(ec) : NULL;
	EVP_PKEY *rsad = rsa ? pem_copy(rsa) : NULL;
	if (!eph || !ec || !rsa || !ecd || !rsad) {
		FAIL("keygen by name with cryptod first, or its PEM");
		goto out;
	}
	/* Ours, not the default provider's: else this tests nothing. */
	const OSSL_PROVIDER *pv = EVP_PKEY_get0_provider(eph);
	if (!pv || strcmp(OSSL_PROVIDER_get0_name(pv), "cryptod"))
		FAIL("keygen: made by %s, not cryptod",
		     pv ? OSSL_PROVIDER_get0_name(pv) : "?");
	unsigned char d1[1024], d2[1024];
	int n1 = pub_der(ec, d1), n2 = pub_der(ecd, d2);
	if (n1 <= 0 || n1 != n2 || memcmp(d1, d2, n1))
		FAIL("keygen: the PEM is not the key's");
	uint64_t before = key_ops(c, "x");
	unsigned char s1[64], s2[64];
	size_t m1 = derive(lib, eph, xp, s1), m2 = derive(lib, x, eph, s2);
	if (!m1 || m1 != m2 || memcmp(s1, s2, m1))
		FAIL("keygen: derive with a daemon key: %zu and %zu bytes, or "
		     "differ",
		     m1, m2);
	if (key_ops(c, "x") != before + 1)
		FAIL("keygen: the daemon counted %llu derives, want 1",
		     (unsigned long long)(key_ops(c, "x") - before));
	sign_check(lib, ec, ecd, "own ecdsa", "SHA256", 0, 0);
	sign_check(lib, rsa, rsad, "own rsa pss", "SHA384",
		   RSA_PKCS1_PSS_PADDING, RSA_PSS_SALTLEN_DIGEST);
	static const unsigned char pt[] = "own";
	unsigned char ct[512], out[512];
	for (int pad = 0; pad < 2; pad++) {
		int p = pad ? RSA_PKCS1_PADDING : RSA_PKCS1_OAEP_PADDING;
		size_t n = rsa_enc(NULL, rsad, p, "SHA256", NULL, NULL, pt,
				   sizeof(pt), ct);
		size_t m = n ? rsa_dec(lib, rsa, p, "SHA256", NULL, NULL, ct, n,
				       out)
			     : 0;
		if (m != sizeof(pt) || memcmp(out, pt, m))
			FAIL("own rsa: decrypt (padding %d): %zu bytes", p, m);
	}
out:
	EVP_PKEY_free(eph);
	EVP_PKEY_free(ec);
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(ecd);
	EVP_PKEY_free(rsad);
}

static void check_params(EVP_PKEY *k, const char *name, int bits, int sec,
			 int size, const char *group)
{
	if (EVP_PKEY_get_bits(k) != bits ||
	    EVP_PKEY_get_security_bits(k) != sec ||
	    EVP_PKEY_get_size(k) != size)
		FAIL("%s: bits %d security %d size %d, want %d %d %d", name,
		     EVP_PKEY_get_bits(k), EVP_PKEY_get_security_bits(k),
		     EVP_PKEY_get_size(k), bits, sec, size);
	char g[64] = "";
	if (group && (!EVP_PKEY_get_group_name(k, g, sizeof(g), NULL) ||
		      strcmp(g, group)))
		FAIL("%s: group %s, want %s", name, g, group);
	char md[64] = "";
	if (EVP_PKEY_is_a(k, "RSA") &&
	    (EVP_PKEY_get_default_digest_name(k, md, sizeof(md)) <= 0 ||
	     strcmp(md, "SHA256")))
		FAIL("%s: default digest %s", name, md);
}

int main(void)
{
	pfx_need_daemon();
	if (pfx_keys_setup("pkey-evp")) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	struct fx_daemon d;
	OSSL_LIB_CTX *lib;
	OSSL_PROVIDER *prov;
	struct fx_daemon_params dp = { .args = pfx_keys_args };
	if (pfx_start_with(&d, &dp, &lib, &prov)) {
		pfx_keys_cleanup();
		return 1;
	}
	OSSL_PROVIDER *dflt = OSSL_PROVIDER_load(lib, "default");
	struct cc_conn *c = NULL;
	if (!dflt || cc_connect(d.sock, "test", &c)) {
		FAIL("default provider, or connect");
		goto out;
	}
	if (create(c, "r", "rsa-2048", 0) || create(c, "e", "ec-p256", 0) ||
	    create(c, "ed", "ed25519", 0) || create(c, "x", "x25519", 0) ||
	    create(c, "so", "ec-p256", CC_KEY_SIGN) ||
	    create(c, "rso", "rsa-2048", CC_KEY_SIGN) ||
	    create(c, "other", "ec-p256", 0))
		goto out;

	EVP_PKEY *r = pfx_load_key(lib, "r"), *e = pfx_load_key(lib, "e"),
		 *ed = pfx_load_key(lib, "ed"), *x = pfx_load_key(lib, "x"),
		 *so = pfx_load_key(lib, "so"), *rso = pfx_load_key(lib, "rso");
	EVP_PKEY *rp = pub(c, "r"), *ep = pub(c, "e"), *edp = pub(c, "ed"),
		 *xp = pub(c, "x"), *otherp = pub(c, "other");
	if (!r || !e || !ed || !x || !so || !rso || !rp || !ep || !edp || !xp ||
	    !otherp) {
		FAIL("loading the keys");
		goto free;
	}

	/* Parameters and matching, in-process. */
	check_params(r, "rsa-2048", 2048, 112, 256, NULL);
	check_params(e, "ec-p256", 256, 128, 72, "prime256v1");
	if (EVP_PKEY_eq(r, rp) != 1 || EVP_PKEY_eq(e, ep) != 1 ||
	    EVP_PKEY_eq(ed, edp) != 1 || EVP_PKEY_eq(x, xp) != 1)
		FAIL("a key is not equal to its public key");
	if (EVP_PKEY_eq(e, otherp) == 1)
		FAIL("a key equals another's public key");
	ERR_clear_error();
	/* Certificates signed by the daemon's keys; each key matches its
	 * own certificate and not another's. */
	X509 *rc = cert_of(rp, r, lib), *ec = cert_of(ep, e, lib),
	     *oc = cert_of(otherp, e, lib);
	if (!rc || !ec || !oc)
		FAIL("certificates signed through the provider");
	else if (X509_check_private_key(rc, r) != 1 ||
		 X509_check_private_key(ec, e) != 1)
		FAIL("X509_check_private_key: a key and its certificate");
	else if (X509_check_private_key(oc, e) == 1)
		FAIL("X509_check_private_key: another's certificate matches");
	if (rc && X509_verify(rc, rp) != 1)
		FAIL("the daemon-signed certificate does not verify");
	ERR_clear_error();
	X509_free(rc);
	X509_free(ec);
	X509_free(oc);

	/* Signatures, made in the daemon, counted there. */
	uint64_t before = key_ops(c, "r") + key_ops(c, "e") + key_ops(c, "ed");
	static const char *const mds[] = { "SHA256", "SHA384", "SHA512" };
	unsigned n = 0;
	for (unsigned i = 0; i < 3; i++) {
		char w[64];
		snprintf(w, sizeof(w), "rsa pkcs1 %s", mds[i]);
		sign_check(lib, r, rp, w, mds[i], RSA_PKCS1_PADDING, 0);
		snprintf(w, sizeof(w), "rsa pss %s digest", mds[i]);
		sign_check(lib, r, rp, w, mds[i], RSA_PKCS1_PSS_PADDING,
			   RSA_PSS_SALTLEN_DIGEST);
		snprintf(w, sizeof(w), "rsa pss %s salt 20", mds[i]);
		sign_check(lib, r, rp, w, mds[i], RSA_PKCS1_PSS_PADDING, 20);
		snprintf(w, sizeof(w), "rsa pss %s max", mds[i]);
		sign_check(lib, r, rp, w, mds[i], RSA_PKCS1_PSS_PADDING,
			   RSA_PSS_SALTLEN_MAX);
		snprintf(w, sizeof(w), "ecdsa %s", mds[i]);
		sign_check(lib, e, ep, w, mds[i], 0, 0);
		n += 5;
	}
	sign_check(lib, ed, edp, "ed25519", NULL, 0, 0);
	n++;
	uint64_t after = key_ops(c, "r") + key_ops(c, "e") + key_ops(c, "ed");
	if (after < before + n)
		FAIL("the daemon counted %llu signatures, want %u",
		     (unsigned long long)(after - before), n);

	async_sign(lib, r, rp);
	async_sign(lib, e, ep);
	fork_sign(lib, e, ep);

	/* Derives, both ways, against in-process keys. */
	static const char *const curves[][2] = { { "x", "X25519" },
						 { "e", "P-256" } };
	for (unsigned i = 0; i < 2; i++) {
		EVP_PKEY *peer =
			!strcmp(curves[i][1], "X25519")
				? EVP_PKEY_Q_keygen(NULL, NULL, "X25519")
				: EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		EVP_PKEY *mine = i ? e : x, *minep = i ? ep : xp;
		unsigned char s1[256], s2[256];
		size_t n1 = peer ? derive(lib, mine, peer, s1) : 0;
		size_t n2 = peer ? derive(NULL, peer, minep, s2) : 0;
		if (!n1 || n1 != n2 || memcmp(s1, s2, n1))
			FAIL("derive %s: %zu and %zu bytes, or differ",
			     curves[i][1], n1, n2);
		EVP_PKEY_free(peer);
	}

	/* RSA-OAEP decryption, in the daemon (counted there). */
	before = key_ops(c, "r");
	oaep_check(lib, r, rp);
	if (key_ops(c, "r") < before + 8)
		FAIL("the daemon counted %llu decryptions, want 8 or more",
		     (unsigned long long)(key_ops(c, "r") - before));

	keygen_check(lib, c, x, xp);

	/* Refusals naming cryptod. */
	ERR_clear_error();
	if (pfx_load_key(lib, "nope"))
		FAIL("cryptod:nope loaded");
	else if (!pfx_err_names_cryptod())
		FAIL("cryptod:nope: the error does not name cryptod");
	unsigned char s[256];
	EVP_PKEY *peer = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (peer && derive(lib, so, peer, s))
		FAIL("a sign-only key derived");
	else if (!pfx_err_names_cryptod())
		FAIL("sign-only derive: the error does not name cryptod");
	EVP_PKEY_free(peer);
	/* No PKCS#1 v1.5 decryption (docs/asymmetric.md); a sign-only key
	 * does not decrypt. */
	static const unsigned char pt[] = "pms";
	unsigned char ct[512], out[512];
	size_t ctn = rsa_enc(NULL, rp, RSA_PKCS1_PADDING, NULL, NULL, NULL, pt,
			     sizeof(pt), ct);
	ERR_clear_error();
	if (!ctn ||
	    rsa_dec(lib, r, RSA_PKCS1_PADDING, NULL, NULL, NULL, ct, ctn, out))
		FAIL("PKCS#1 v1.5 decryption: not refused");
	else if (!pfx_err_names_cryptod())
		FAIL("PKCS#1 v1.5 decryption: the error does not name cryptod");
	EVP_PKEY *rsop = pub(c, "rso");
	ctn = rsop ? rsa_enc(NULL, rsop, RSA_PKCS1_OAEP_PADDING, "SHA256", NULL,
			     NULL, pt, sizeof(pt), ct)
		   : 0;
	ERR_clear_error();
	if (!ctn || rsa_dec(lib, rso, RSA_PKCS1_OAEP_PADDING, "SHA256", NULL,
			    NULL, ct, ctn, out))
		FAIL("a sign-only key decrypted");
	else if (!pfx_err_names_cryptod())
		FAIL("sign-only decrypt: the error does not name cryptod");
	EVP_PKEY_free(rsop);
free:
	EVP_PKEY_free(r);
	EVP_PKEY_free(e);
	EVP_PKEY_free(ed);
	EVP_PKEY_free(x);
	EVP_PKEY_free(so);
	EVP_PKEY_free(rso);
	EVP_PKEY_free(rp);
	EVP_PKEY_free(ep);
	EVP_PKEY_free(edp);
	EVP_PKEY_free(xp);
	EVP_PKEY_free(otherp);
out:
	cc_disconnect(c);
	OSSL_PROVIDER_unload(dflt);
	int stop = pfx_stop(&d, lib, prov);
	pfx_keys_cleanup();
	return pfx_verdict(stop, 0);
}
