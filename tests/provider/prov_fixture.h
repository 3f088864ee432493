/* SPDX-License-Identifier: MIT */
/*
 * What every provider test program does at its start and end, written
 * once (prov_fixture.c): skip without a daemon, the run's seed, a daemon
 * with cryptod.so loaded into a library context of its own or one read
 * from a configuration file as an operator writes it, the provider's
 * counters, and whether an error names cryptod. Over the integration
 * fixture (tests/integration/fixture.h).
 */
#ifndef CRYPTOD_TEST_PROV_FIXTURE_H
#define CRYPTOD_TEST_PROV_FIXTURE_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "fixture.h"

/* The failures so far: FAIL() counts one, saying where and why, with
 * OpenSSL's error stack (which it empties). Any thread may. */
extern atomic_int failures;
#define FAIL(...)                                                              \
	do {                                                                   \
		fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__);           \
		fprintf(stderr, __VA_ARGS__);                                  \
		fputc('\n', stderr);                                           \
		ERR_print_errors_fp(stderr);                                   \
		atomic_fetch_add(&failures, 1);                                \
	} while (0)

/* The end of a program: PASS, or FAIL with the count (and the seed that
 * replays the run, when not 0). stop: what pfx_stop() returned. The exit
 * status. */
int pfx_verdict(int stop, uint64_t seed);

/* Exit FX_EXIT_SKIP, saying why, when the daemon binary is absent. */
void pfx_need_daemon(void);

/* $TEST_SEED, else the time; printed so that a failure can be replayed. */
uint64_t pfx_seed(void);

/*
 * Start a daemon (fx_daemon_start, no parameters), point CRYPTOD_SOCKET
 * at it (and unset the fallback and min_size variables: every message
 * goes to the daemon), and load cryptod.so into a new library context: *lib and *prov
 * are the caller's. On failure nothing is left running: -1.
 */
int pfx_start(struct fx_daemon *d, OSSL_LIB_CTX **lib, OSSL_PROVIDER **prov);
/* The same, the daemon started with p (its arguments, ...). */
int pfx_start_with(struct fx_daemon *d, const struct fx_daemon_params *p,
		   OSSL_LIB_CTX **lib, OSSL_PROVIDER **prov);

/* pfx_start() undone; returns what fx_daemon_stop() returned. */
int pfx_stop(struct fx_daemon *d, OSSL_LIB_CTX *lib, OSSL_PROVIDER *prov);

/*
 * A library context configured as an operator would: dir/prov.cnf loads
 * and activates cryptod.so, with body (the section's further lines:
 * socket, fallback, min_size...) appended. NULL on failure, said.
 */
OSSL_LIB_CTX *pfx_conf_libctx(const char *dir, const char *body);

/* The provider's counters in l: messages on the daemon, fallbacks, and
 * in-process (any pointer may be NULL). 0, or -1 when unreadable. */
int pfx_counters(OSSL_LIB_CTX *l, uint64_t *daemon, uint64_t *fallbacks,
		 uint64_t *inprocess);

/* Empties the thread's error stack; 1 if a reason or data on it named
 * cryptod. */
int pfx_err_names_cryptod(void);

/*
 * A key store for tests of named keys: a temp dir (/tmp/cryptod-TAG.*)
 * with a random KEK as a credential ($CREDENTIALS_DIRECTORY) and the
 * keys' directory; pfx_keys_args are the daemon's arguments that use
 * them (fx_daemon_params.args). 0, or -1 with errno.
 */
int pfx_keys_setup(const char *tag);
extern const char *pfx_keys_args[];
/* The temp dir removed. */
void pfx_keys_cleanup(void);

/* The key "cryptod:NAME" through OSSL_STORE in lib, or NULL. */
EVP_PKEY *pfx_load_key(OSSL_LIB_CTX *lib, const char *name);

#endif
