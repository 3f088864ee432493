/* SPDX-License-Identifier: MIT */
/*
 * pkey_speed: private-key ops per second with one key, through whatever
 * providers OPENSSL_CONF loads, as an unmodified program does it
 * (libcrypto only). bench/pkey-speed.sh runs it with the key in a PEM
 * file (the default provider signs in-process) and with the same key
 * imported into the daemon, loaded from its key-reference file or as
 * cryptod:NAME (cryptod's provider signs in the daemon).
 *
 * An op is what a TLS server does for a handshake: a fresh EVP_MD_CTX,
 * EVP_DigestSignInit_ex (SHA-256; none for EdDSA; PSS with --pss) and
 * EVP_DigestSign of a 64-byte message; or, for X25519/X448 keys (and EC
 * keys with --derive), a fresh EVP_PKEY_CTX, derive_init, set_peer and
 * derive against a peer's public key made here. The first op is checked (the
 * signature verifies; the secret is the peer's) before the clock starts.
 *
 * Synchronous, or --jobs N ASYNC_JOBs on the one thread, as openssl
 * speed -async_jobs runs them: each job loops until the time is up,
 * pausing where the provider pauses it (cryptod's while the daemon
 * works); when every job is paused the thread polls their wait fds and
 * resumes those that are readable.
 *
 * Prints one line: "ops N seconds S per_second R".
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/async.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/store.h>

enum { JOBS_MAX = 256 };

struct run {
	EVP_PKEY *key;	    /* the private key (ours or the daemon's) */
	EVP_PKEY *peer;	    /* derive: the peer's key pair, in-process */
	EVP_PKEY *peer_pub; /* its public half, as TLS hands it over */
	int derive, pss;
	const char *md; /* NULL for EdDSA */
	double end;	/* CLOCK_MONOTONIC seconds */
};

struct job {
	struct run *r;
	uint64_t ops;
};

static const unsigned char msg[64] = "a TLS 1.3 CertificateVerify signs "
				     "about this much";

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "pkey_speed: %s\n", what);
	ERR_print_errors_fp(stderr);
	exit(1);
}

/* One signature into sig (room for 1024 bytes) or one derive. Returns
 * the output's length, 0 on failure. */
static size_t one_op(const struct run *r, unsigned char *out)
{
	size_t n = 1024;
	if (r->derive) {
		EVP_PKEY_CTX *c =
			EVP_PKEY_CTX_new_from_pkey(NULL, r->key, NULL);
		int ok = c && EVP_PKEY_derive_init(c) == 1 &&
			 EVP_PKEY_derive_set_peer(c, r->peer_pub) == 1 &&
			 EVP_PKEY_derive(c, out, &n) == 1;
		EVP_PKEY_CTX_free(c);
		return ok ? n : 0;
	}
	EVP_MD_CTX *m = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pc = NULL;
	int ok =
		m &&
		EVP_DigestSignInit_ex(m, &pc, r->md, NULL, NULL, r->key,
				      NULL) == 1 &&
		(!r->pss ||
		 (EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING) > 0 &&
		  EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, RSA_PSS_SALTLEN_DIGEST) >
			  0)) &&
		EVP_DigestSign(m, out, &n, msg, sizeof(msg)) == 1;
	EVP_MD_CTX_free(m);
	return ok ? n : 0;
}

/* k's public half alone, in-process (a private key's provider keeps
 * the private half; cryptod's key management takes no private key). */
static EVP_PKEY *pub_of(EVP_PKEY *k)
{
	unsigned char *der = NULL;
	int n = i2d_PUBKEY(k, &der);
	const unsigned char *p = der;
	EVP_PKEY *pub = n > 0 ? d2i_PUBKEY(NULL, &p, n) : NULL;
	OPENSSL_free(der);
	return pub;
}

/* The first op, checked: a signature verifies with the key's public
 * half, a secret equals the one the peer derives. */
static void check(const struct run *r)
{
	unsigned char out[1024], want[1024];
	size_t n = one_op(r, out), wn = sizeof(want);
	if (!n)
		die("the first op failed");
	int ok;
	if (r->derive) {
		EVP_PKEY *pub = pub_of(r->key);
		EVP_PKEY_CTX *c =
			EVP_PKEY_CTX_new_from_pkey(NULL, r->peer, NULL);
		ok = pub && c && EVP_PKEY_derive_init(c) == 1 &&
		     EVP_PKEY_derive_set_peer(c, pub) == 1 &&
		     EVP_PKEY_derive(c, want, &wn) == 1 && wn == n &&
		     !memcmp(want, out, n);
		EVP_PKEY_CTX_free(c);
		EVP_PKEY_free(pub);
	} else {
		EVP_MD_CTX *m = EVP_MD_CTX_new();
		EVP_PKEY_CTX *pc = NULL;
		ok = m &&
		     EVP_DigestVerifyInit_ex(m, &pc, r->md, NULL, NULL, r->key,
					     NULL) == 1 &&
		     (!r->pss || (EVP_PKEY_CTX_set_rsa_padding(
					  pc, RSA_PKCS1_PSS_PADDING) > 0 &&
				  EVP_PKEY_CTX_set_rsa_pss_saltlen(
					  pc, RSA_PSS_SALTLEN_DIGEST) > 0)) &&
		     EVP_DigestVerify(m, out, n, msg, sizeof(msg)) == 1;
		EVP_MD_CTX_free(m);
	}
	if (!ok)
		die(r->derive ? "the secret differs from the peer's"
			      : "the signature does not verify");
}

static int job_fn(void *arg)
{
	struct job *j = *(struct job **)arg;
	unsigned char out[1024];
	while (now() < j->r->end) {
		if (!one_op(j->r, out))
			return 0;
		j->ops++;
	}
	return 1;
}

/* N jobs round-robin on this thread; the ops all of them did. */
static uint64_t run_jobs(struct run *r, unsigned n)
{
	static struct job jobs[JOBS_MAX];
	static ASYNC_JOB *aj[JOBS_MAX];
	static ASYNC_WAIT_CTX *wc[JOBS_MAX];
	struct pollfd pf[JOBS_MAX];
	unsigned running = 0;
	uint64_t ops = 0;
	if (!ASYNC_init_thread(n, n))
		die("ASYNC_init_thread");
	for (unsigned i = 0; i < n; i++) {
		jobs[i] = (struct job){ .r = r };
		if (!(wc[i] = ASYNC_WAIT_CTX_new()))
			die("ASYNC_WAIT_CTX_new");
	}
	/* state: 1 running (paused), 0 finished; slot: the job's entry
	 * in pf, or -1 when it left no wait fd (resumed at once) */
	int state[JOBS_MAX], slot[JOBS_MAX];
	for (unsigned i = 0; i < n; i++)
		state[i] = 1, slot[i] = -1, running++;
	for (int first = 1; running; first = 0) {
		if (!first) {
			/* Every job paused: wait for one of their fds. */
			unsigned np = 0, nofd = 0;
			for (unsigned i = 0; i < n; i++) {
				OSSL_ASYNC_FD fd;
				size_t nfd = 0;
				slot[i] = -1;
				if (!state[i])
					continue;
				ASYNC_WAIT_CTX_get_all_fds(wc[i], NULL, &nfd);
				if (nfd != 1) {
					nofd++;
					continue;
				}
				ASYNC_WAIT_CTX_get_all_fds(wc[i], &fd, &nfd);
				slot[i] = (int)np;
				pf[np++] = (struct pollfd){ .fd = fd,
							    .events = POLLIN };
			}
			if (poll(pf, np, nofd ? 0 : 10000) < 0 &&
			    errno != EINTR)
				die("poll");
		}
		for (unsigned i = 0; i < n; i++) {
			if (!state[i] || (slot[i] >= 0 && !pf[slot[i]].revents))
				continue;
			int ret = 0;
			struct job *jp = &jobs[i];
			switch (ASYNC_start_job(&aj[i], wc[i], &ret, job_fn,
						&jp, sizeof(jp))) {
			case ASYNC_PAUSE:
				break;
			case ASYNC_FINISH:
				if (!ret)
					die("an op in a job failed");
				ops += jobs[i].ops;
				state[i] = 0;
				running--;
				break;
			default:
				die("ASYNC_start_job");
			}
		}
	}
	for (unsigned i = 0; i < n; i++)
		ASYNC_WAIT_CTX_free(wc[i]);
	ASYNC_cleanup_thread();
	return ops;
}

static EVP_PKEY *load(const char *spec)
{
	EVP_PKEY *k = NULL;
	if (!strncmp(spec, "cryptod:", 8)) {
		OSSL_STORE_CTX *st = OSSL_STORE_open_ex(spec, NULL, NULL, NULL,
							NULL, NULL, NULL, NULL);
		while (st && !k && !OSSL_STORE_eof(st)) {
			OSSL_STORE_INFO *i = OSSL_STORE_load(st);
			if (i &&
			    OSSL_STORE_INFO_get_type(i) == OSSL_STORE_INFO_PKEY)
				k = OSSL_STORE_INFO_get1_PKEY(i);
			OSSL_STORE_INFO_free(i);
			if (!i)
				break;
		}
		OSSL_STORE_close(st);
		return k;
	}
	/* As nginx's ssl_certificate_key reads a file: a PEM private key,
	 * or a key-reference file, which cryptod's decoder turns into its
	 * key object. */
	FILE *f = fopen(spec, "r");
	if (!f)
		return NULL;
	k = PEM_read_PrivateKey_ex(f, NULL, NULL, NULL, NULL, NULL);
	fclose(f);
	return k;
}

static const char usage[] =
	"usage: pkey_speed [--seconds S] [--jobs N] [--pss] [--derive] KEY\n"
	"  KEY: a PEM private key file, a key-reference file (cryptoctl key\n"
	"  ref) or cryptod:NAME, loaded through the providers OPENSSL_CONF\n"
	"  names. Signs a 64-byte message with SHA-256 (EdDSA: pure), a new\n"
	"  context per signature as a TLS server does; X25519/X448 keys (EC\n"
	"  keys with --derive) derive against a peer instead. --jobs N: N\n"
	"  ASYNC_JOBs round-robin on one thread (as openssl speed\n"
	"  -async_jobs); 0 (the default): synchronous. --seconds: 2.\n"
	"  Prints: ops N seconds S per_second R\n";

int main(int argc, char **argv)
{
	double secs = 2;
	unsigned jobs = 0;
	struct run r = { .md = "SHA256" };
	const char *spec = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
			jobs = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pss"))
			r.pss = 1;
		else if (!strcmp(argv[i], "--derive"))
			r.derive = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (argv[i][0] != '-' && !spec)
			spec = argv[i];
		else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!spec || secs <= 0 || jobs > JOBS_MAX) {
		fputs(usage, stderr);
		return 2;
	}
	if (!(r.key = load(spec)))
		die("cannot load the key");
	if (EVP_PKEY_is_a(r.key, "X25519") || EVP_PKEY_is_a(r.key, "X448"))
		r.derive = 1;
	if (EVP_PKEY_is_a(r.key, "ED25519") || EVP_PKEY_is_a(r.key, "ED448"))
		r.md = NULL;
	if (r.pss && !EVP_PKEY_is_a(r.key, "RSA"))
		die("--pss: not an RSA key");
	if (r.derive) {
		char group[64] = "";
		size_t gl = 0;
		if (EVP_PKEY_is_a(r.key, "EC") &&
		    !EVP_PKEY_get_group_name(r.key, group, sizeof(group), &gl))
			die("the key's group");
		r.peer =
			group[0]
				? EVP_PKEY_Q_keygen(NULL, NULL, "EC", group)
				: EVP_PKEY_Q_keygen(NULL, NULL,
						    EVP_PKEY_is_a(r.key, "X448")
							    ? "X448"
							    : "X25519");
		if (!r.peer || !(r.peer_pub = pub_of(r.peer)))
			die("cannot make the peer's key");
	}
	check(&r);
	uint64_t ops = 0;
	unsigned char out[1024];
	double t0 = now();
	r.end = t0 + secs;
	if (jobs) {
		ops = run_jobs(&r, jobs);
	} else {
		while (now() < r.end) {
			if (!one_op(&r, out))
				die("an op failed");
			ops++;
		}
	}
	double t = now() - t0;
	printf("ops %llu seconds %.3f per_second %.1f\n",
	       (unsigned long long)ops, t, (double)ops / t);
	EVP_PKEY_free(r.peer_pub);
	EVP_PKEY_free(r.peer);
	EVP_PKEY_free(r.key);
	return 0;
}
