/* SPDX-License-Identifier: MIT */
/*
 * What the AES key wrap op tests share (kw_common.c): aes-kw (RFC 3394,
 * test_keywrap_op) and aes-kwp (RFC 5649, test_keywrap_pad_op) are one
 * op shape, the wrap's leading bytes as the op's tag and the rest as its
 * data, so the published vectors, the cross-check against OpenSSL's
 * AES-n-WRAP(-PAD), the watched failing unwraps and the program's frame
 * are written once; each test keeps its vectors, its lengths and its
 * refusals.
 */
#ifndef CRYPTOD_TEST_KW_COMMON_H
#define CRYPTOD_TEST_KW_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fixture.h"

extern int fails;
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);   \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			fails++;                                               \
		}                                                              \
	} while (0)

enum { KW_DATA_MAX = 4096 };

struct kw_vector {
	const char *kek, *data, *wrapped;
};

struct kw_alg {
	enum cc_alg alg;
	const char *name;	       /* "aes-kw" */
	const char *ossl;	       /* "WRAP": OpenSSL's AES-<bits>-<ossl> */
	unsigned (*tag_for)(size_t n); /* the tag of an n-byte wrap */
	const struct kw_vector *vectors;
	size_t n_vectors;
	/* The data length of random round r (of rounds), r a random word. */
	size_t (*length)(unsigned round, unsigned r);
	unsigned rounds;
	size_t watch_len; /* the watched unwraps' length */
	/* The algorithm's own refusals and failures. */
	void (*negative)(struct cc_conn *conn, const char *eng);
};

size_t kw_unhex(const char *h, uint8_t *out);
int kw_all_zero(const uint8_t *p, size_t n);
uint32_t kw_session(const struct kw_alg *a, struct cc_conn *conn,
		    const char *engine, const uint8_t *kek, unsigned kek_len,
		    unsigned tag_len, int *err);
/* OpenSSL's wrap (enc) or unwrap; the output length, or -1. */
int kw_ref(const struct kw_alg *a, int enc, const uint8_t *kek,
	   unsigned kek_len, const uint8_t *in, int len, uint8_t *out);

/* Every engine that lists a->alg: the vectors, OpenSSL both ways, the
 * negative cases, and failing unwraps (a tampered tag, a wrong KEK)
 * watched in the arena. The exit status. */
int kw_main(const struct kw_alg *a, const char *prog);

#endif
