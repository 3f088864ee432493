/* SPDX-License-Identifier: MIT */
/*
 * What test_stream_aead.c and test_stream_ccm.c share: the engines under
 * test (aesni, or openssl after on_openssl()), a seeded PRNG (the seed is
 * printed; STREAM_SEED=<n> replays a run), OpenSSL's EVP one-shot
 * reference, a driver that feeds pieces as the daemon feeds them
 * (engines/stream.h: IV, AAD and param on FIRST only, the tag on LAST
 * only, a zeroed 64-byte aligned state before FIRST, wiped after LAST or
 * an error), random messages checked against the reference, and the
 * cases both programs run (single pieces, empty pieces, forged tags of
 * every AEAD that streams).
 */
#ifndef CRYPTOD_TEST_STREAM_AEAD_COMMON_H
#define CRYPTOD_TEST_STREAM_AEAD_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <cryptod/ring_abi.h>

#include "engine.h"
#include "session.h"

#define MIB (1u << 20)

struct stream_aead_test {
	void *mgr;		  /* the aesni engine's worker context */
	void *ossl;		  /* the openssl engine's */
	const struct engine *eng; /* under test: aesni, or openssl */
	void *w;		  /* its worker context */
	void *state;		  /* STREAM_STATE_SIZE, 64-byte aligned */
	uint64_t rng;		  /* splitmix64 */
};
extern struct stream_aead_test t;

/* ---- deterministic randomness (splitmix64 over t.rng) ---- */

uint64_t rnd(void);
/* Uniform in [lo, hi]. */
uint64_t rnd_in(uint64_t lo, uint64_t hi);
void rnd_fill(uint8_t *p, size_t n);
/* malloc, or the test fails. */
void *xmalloc(size_t n);

/* ---- set-up ---- */

/* The group's: seed, engines, key store, state; both workers. */
int group_setup(void **state);
int group_teardown(void **state);
/* Skip without AES-NI. */
void need_aesni(void);
/* Does the engine under test stream alg? (Its rows say.) */
int streams(unsigned alg);
/* A session of alg on the engine under test, or the test fails. */
struct session *new_session(unsigned alg, const uint8_t *key, size_t key_len,
			    unsigned tag_len);

/* Switch to the openssl engine (skip if it has no worker); on_aesni(),
 * the openssl cases' teardown (failed ones too), switches back. */
void on_openssl(void);
int on_aesni(void **state);

/* ---- the reference: OpenSSL EVP, one shot ---- */

struct msg {
	unsigned alg;
	uint8_t key[32], iv[CRD_IV_ARENA_MAX], tag[16];
	size_t key_len, iv_len, tag_len;
	const uint8_t *aad;
	size_t aad_len;
};

/* Encrypt pt (len bytes) to ct and m->tag. */
void ref_seal(struct msg *m, const uint8_t *pt, uint8_t *ct, size_t len);

/* ---- streams, fed as the daemon feeds them ---- */

/* How a stream is cut. */
enum cut {
	CUT_RANDOM, /* empty, 1-byte, odd, up to 1 MiB pieces */
	CUT_MIB,    /* about 1 MiB each */
	CUT_ONE,    /* one FIRST|LAST piece */
	CUT_ZEROS,  /* random, and about every other piece empty */
};

struct run {
	int status;	   /* of the last piece run */
	uint64_t last_off; /* where that piece started */
	uint32_t last_len; /* and its length */
	unsigned pieces;   /* run */
};

/* Run one piece; the state is wiped as the daemon wipes it. */
int piece(const struct session *s, struct engine_op *op);
/* Stream len bytes of src to dst (== src in place) in direction dir,
 * with m's IV, AAD and (LAST) tag; stops at the first failing piece. */
struct run stream(const struct session *s, struct msg *m, uint8_t dir,
		  const uint8_t *src, uint8_t *dst, uint64_t len, enum cut how);
/* A random tag length of those alg takes on aesni. */
size_t pick_tag(unsigned alg);

/*
 * One message: a random key of key_len bytes, IV, AAD and tag length
 * (or the given ones, iv_len/tag_len > 0), the reference encryption,
 * then the stream's encryption and decryption (each cut its own way, in
 * place or not) compared with it byte for byte.
 */
void check_msg(unsigned alg, size_t key_len, size_t iv_len, size_t tag_len,
	       uint64_t len, enum cut how);

/* AES's key lengths. */
extern const size_t aes_keys[3];

/* per_key random messages of alg for each of its key lengths. */
void random_msgs(unsigned alg, unsigned per_key);

/* ---- cases both programs run (on the engine under test) ---- */

/* One FIRST|LAST piece per message, for each AEAD. */
void test_single_piece(void **state);
/* Empty messages and empty pieces, for each AEAD. */
void test_empty_pieces(void **state);
/* A forged tag, for each AEAD. */
void test_bad_tag(void **state);

#endif
