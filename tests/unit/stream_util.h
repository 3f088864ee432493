/* SPDX-License-Identifier: MIT */
/*
 * What test_stream_cipher.c and test_stream_mac.c share: a seeded PRNG
 * (STREAM_SEED overrides the fixed seed; the seed is printed), random
 * cuts of a message into pieces, and a driver that runs the pieces
 * through an engine's stream hook as daemon/data/streams.c does (the state
 * zeroed before FIRST, wiped after LAST or an error).
 */
#ifndef CRYPTOD_TEST_STREAM_UTIL_H
#define CRYPTOD_TEST_STREAM_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "session.h"

/* The PRNG (splitmix64): seed from STREAM_SEED or the default, printed. */
void su_seed(void);
uint64_t su_rand(void);
/* Uniform in [0, n) (n > 0). */
uint64_t su_below(uint64_t n);
void su_fill(void *p, size_t n);

/* Piece lengths (a growing list). */
struct su_cuts {
	size_t *len;
	size_t n, cap;
};
void su_cuts_free(struct su_cuts *c);

/*
 * Cut total bytes into random pieces whose lengths are multiples of gran
 * (the last piece takes whatever is left, gran or not): a style chosen at
 * random among 1-byte pieces (short messages), odd sizes up to 4 KiB,
 * sizes up to 1 MiB, and a mix; zero-length pieces now and then, first
 * and last included. typ > 0: pieces of about typ bytes instead.
 */
void su_cut(struct su_cuts *c, size_t total, size_t gran, size_t typ);

/* One piece as the daemon hands it over. */
struct su_piece {
	const struct session *s;
	int dir; /* CRD_OP_ENCRYPT / CRD_OP_DECRYPT */
	const uint8_t *iv;
	unsigned iv_len;
	const uint8_t *aad; /* FIRST's (AEADs) */
	unsigned aad_len;
	uint32_t param; /* FIRST's (FIRST|LAST: the daemon passes len) */
	uint8_t *tag;	/* LAST's, the session's tag_len bytes */
};

/*
 * Run src[0..total) through e's stream hook in the pieces of c, writing
 * dst (== src in place; NULL for MACs: dst = src, never written).
 * Returns the first status that is not CRD_ST_OK (and stops there), or
 * CRD_ST_OK; *failed_piece (if given) the index of that piece.
 */
int su_run(const struct engine *e, void *wctx, const struct su_piece *p,
	   const uint8_t *src, uint8_t *dst, const struct su_cuts *c,
	   size_t *failed_piece);

/* One piece that is FIRST and LAST (param = len, as the daemon sets). */
int su_run_one(const struct engine *e, void *wctx, const struct su_piece *p,
	       const uint8_t *src, uint8_t *dst, size_t len);

/* The same message as one op through e->process: the engine's own
 * one-shot result. Returns the op's status. */
int su_oneshot(const struct engine *e, void *wctx, const struct su_piece *p,
	       const uint8_t *src, uint8_t *dst, size_t len);

/* Engines probed, key store up (slots); 0 or -1. */
int su_setup(unsigned slots);
void su_teardown(void);

/* The random message sizes of a sweep: 0, small edges, then up to
 * max bytes, log-uniform. */
size_t su_size(unsigned i, size_t max);

#endif
