/* SPDX-License-Identifier: MIT */
/*
 * What the test_named_keys_* programs share (named_keys.c): a private key
 * directory and a KEK as a systemd-style credential, a daemon on them,
 * sessions on named keys, OpenSSL's answers to hold them against, and the
 * end of a run.
 */
#ifndef CRYPTOD_TEST_NAMED_KEYS_H
#define CRYPTOD_TEST_NAMED_KEYS_H

#include <stdint.h>
#include <stdio.h>

#include "fixture.h"
#include "memscan.h"

extern int fails;
#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,          \
				__LINE__, #c);                                 \
			fails++;                                               \
		}                                                              \
	} while (0)

extern char tmp[64], keydir[128], creddir[128];
/* The daemon's arguments: keys.kek from the credential, keys.dir. */
extern const char *args[8];
extern const uint8_t iv[12];
extern uint8_t msg[256];

int setup_dirs(void);
struct cc_key_spec spec(const char *name, unsigned usage, int exp,
			const uint32_t *uid);
int session_on(struct cc_conn *c, const char *name, uint32_t version,
	       uint32_t *sid);
void ossl_gcm(const uint8_t *key, const uint8_t *nonce, const uint8_t *in,
	      int n, uint8_t *out, uint8_t *tag);
int ossl_unwrap(const uint8_t *wkek, const uint8_t *blob, int n, uint8_t *out);
int enc_matches(struct cc_conn *c, uint32_t sid, const uint8_t *key);
int learn(struct cc_conn *c, const char *name, uint32_t version,
	  uint8_t key[32]);

/* Make the directories and the KEK, start the daemon on them (one
 * worker): 0, or -1 (reported). */
int nk_start(struct fx_daemon *d, struct fx_daemon_params *dp);
/* Stop d (if running), remove the directories, say PASS or FAIL: the exit
 * status. */
int nk_finish(struct fx_daemon *d);

#endif
