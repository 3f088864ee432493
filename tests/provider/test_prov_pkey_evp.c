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
 * agree with in-process keys both ways. Refusals name
 * cryptod: no such key, a sign-only key asked to derive.
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
	    create(c, "other", "ec-p256", 0))
		goto out;

	EVP_PKEY *r = pfx_load_key(lib, "r"), *e = pfx_load_key(lib, "e"),
		 *ed = pfx_load_key(lib, "ed"), *x = pfx_load_key(lib, "x"),
		 *so = pfx_load_key(lib, "so");
	EVP_PKEY *rp = pub(c, "r"), *ep = pub(c, "e"), *edp = pub(c, "ed"),
		 *xp = pub(c, "x"), *otherp = pub(c, "other");
	if (!r || !e || !ed || !x || !so || !rp || !ep || !edp || !xp ||
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
free:
	EVP_PKEY_free(r);
	EVP_PKEY_free(e);
	EVP_PKEY_free(ed);
	EVP_PKEY_free(x);
	EVP_PKEY_free(so);
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
