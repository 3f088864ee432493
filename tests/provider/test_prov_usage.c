/* SPDX-License-Identifier: MIT */
/*
 * The provider reports its counters to the daemon (cc_report_usage):
 * fallbacks counted while the daemon was unreachable reach the first
 * connection that works; reports from the op path come at most once a
 * second; after a reconnection the new connection is told only what the
 * old one did not take, so that a program's sums count every message
 * once; teardown reports the rest. The output of every message is checked
 * against OpenSSL's default provider, and no report leaves an error on
 * the stack.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "prov_fixture.h"

#define NAME "openssl/test_prov_usage"

static const uint8_t key[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
static const uint8_t iv[16] = { 0xf0, 0xf1, 0xf2 };

/* One AES-256-CTR message of len bytes through l, compared with the
 * default provider's. */
static void message(OSSL_LIB_CTX *l, size_t len, const char *what)
{
	static uint8_t in[4096], ref[4096], got[4096];
	int n, m;
	for (size_t i = 0; i < len; i++)
		in[i] = (uint8_t)(i * 7 + len);
	EVP_CIPHER *rc = EVP_CIPHER_fetch(NULL, "AES-256-CTR", NULL);
	EVP_CIPHER *cc = EVP_CIPHER_fetch(l, "AES-256-CTR", "provider=cryptod");
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	ERR_clear_error();
	if (!rc || !cc || !x || !EVP_EncryptInit_ex2(x, rc, key, iv, NULL) ||
	    !EVP_EncryptUpdate(x, ref, &n, in, (int)len) ||
	    !EVP_EncryptFinal_ex(x, ref + n, &m))
		FAIL("%s: reference", what);
	else if (!EVP_EncryptInit_ex2(x, cc, key, iv, NULL) ||
		 !EVP_EncryptUpdate(x, got, &n, in, (int)len) ||
		 !EVP_EncryptFinal_ex(x, got + n, &m))
		FAIL("%s: through cryptod", what);
	else if (memcmp(ref, got, len))
		FAIL("%s: ciphertext differs", what);
	else if (ERR_peek_error())
		FAIL("%s: an error was left on the stack", what);
	ERR_print_errors_fp(stderr);
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(rc);
	EVP_CIPHER_free(cc);
}

static void want_counters(OSSL_LIB_CTX *l, uint64_t d, uint64_t f, uint64_t i,
			  const char *when)
{
	uint64_t v[3];
	if (pfx_counters(l, &v[0], &v[1], &v[2]))
		FAIL("%s: the provider's counters", when);
	else if (v[0] != d || v[1] != f || v[2] != i)
		FAIL("%s: provider counts %llu/%llu/%llu, want %llu/%llu/%llu",
		     when, (unsigned long long)v[0], (unsigned long long)v[1],
		     (unsigned long long)v[2], (unsigned long long)d,
		     (unsigned long long)f, (unsigned long long)i);
}

/* What the daemon holds for the provider's connection (its latest
 * report), or for its program when open is 0. */
static void want_daemon(const char *sock, int open, uint64_t d, uint64_t f,
			uint64_t i, const char *when)
{
	struct cc_conn *c;
	struct cc_usage u = { 0 };
	int found = 0;
	if (cc_connect(sock, "checker", &c)) {
		FAIL("%s: checker cannot connect", when);
		return;
	}
	if (open) {
		struct cc_client_info *v;
		unsigned n;
		if (!cc_clients_get(c, &v, &n)) {
			for (unsigned k = 0; k < n; k++)
				if (!strcmp(v[k].name, NAME) &&
				    v[k].usage_reported) {
					u = v[k].usage;
					found++;
				}
			free(v);
		}
	} else {
		struct cc_program_stats *v;
		unsigned n;
		if (!cc_programs_get(c, &v, &n)) {
			for (unsigned k = 0; k < n; k++)
				if (!strcmp(v[k].name, NAME) &&
				    v[k].uid == geteuid() &&
				    !v[k].connections) {
					u = v[k].usage;
					found++;
				}
			free(v);
		}
	}
	cc_disconnect(c);
	if (found != 1 || u.offloaded != d || u.fallbacks != f ||
	    u.inprocess != i)
		FAIL("%s: the daemon has %d entries, %llu/%llu/%llu, want "
		     "%llu/%llu/%llu",
		     when, found, (unsigned long long)u.offloaded,
		     (unsigned long long)u.fallbacks,
		     (unsigned long long)u.inprocess, (unsigned long long)d,
		     (unsigned long long)f, (unsigned long long)i);
}

/* The provider as an operator configures it: this daemon's socket,
 * fallback, and messages under 64 bytes in-process. */
static OSSL_LIB_CTX *conf_libctx(const char *dir, const char *sock)
{
	char body[sizeof(((struct fx_daemon *)0)->sock) + 64];
	snprintf(body, sizeof(body),
		 "socket = %s\nfallback = default-provider\nmin_size = 64\n",
		 sock);
	return pfx_conf_libctx(dir, body);
}

int main(void)
{
	struct fx_daemon d;
	if (fx_daemon_start(&d, NULL))
		return FX_EXIT_FAIL;
	/* The daemon goes away before the provider ever reaches it. */
	kill(d.pid, SIGKILL);
	waitpid(d.pid, NULL, 0);
	d.pid = 0;

	OSSL_LIB_CTX *l = conf_libctx(d.dir, d.sock);
	if (!l) {
		fx_daemon_stop(&d);
		return FX_EXIT_FAIL;
	}
	message(l, 1000, "unreachable: fallback");
	message(l, 10, "below min_size");
	want_counters(l, 0, 1, 1, "daemon down");

	if (fx_daemon_restart(&d, NULL)) {
		OSSL_LIB_CTX_free(l);
		return FX_EXIT_FAIL;
	}
	message(l, 1000, "first on the daemon");
	usleep(1100 * 1000);
	/* A second on: this message's start reports 1/1/1. */
	message(l, 1000, "second on the daemon");
	want_daemon(d.sock, 1, 1, 1, 1, "after a second");
	/* Within the second: no report, whatever the counters did. */
	message(l, 1000, "third on the daemon");
	want_counters(l, 3, 1, 1, "daemon up");
	want_daemon(d.sock, 1, 1, 1, 1, "within the second");

	/* The daemon restarts: the old connection took 1/1/1, the new one
	 * is told only what came after. */
	if (fx_daemon_restart(&d, NULL)) {
		OSSL_LIB_CTX_free(l);
		return FX_EXIT_FAIL;
	}
	usleep(1100 * 1000);
	message(l, 1000, "after the restart"); /* reports on the dead one */
	usleep(1100 * 1000);
	message(l, 1000, "after the restart, a second on");
	want_counters(l, 5, 1, 1, "after the restart");
	want_daemon(d.sock, 1, 3, 0, 0, "the new connection");

	/* Teardown reports the rest: the fifth message. */
	OSSL_LIB_CTX_free(l);
	usleep(200 * 1000); /* the daemon sees the connection go */
	want_daemon(d.sock, 0, 4, 0, 0, "the program, after teardown");

	int st = fx_daemon_stop(&d);
	return pfx_verdict(st, 0);
}
