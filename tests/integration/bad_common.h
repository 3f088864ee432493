/* SPDX-License-Identifier: MIT */
/*
 * What the refusal tests share (test_bad_modes, test_bad_sgl,
 * test_bad_sessionless, test_bad_caps): a daemon with one queue, a good
 * op checked against OpenSSL, and the "good, bad, good" sandwich every
 * refused op sits in, so a failure never wedges a queue.
 */
#ifndef CRYPTOD_TEST_BAD_COMMON_H
#define CRYPTOD_TEST_BAD_COMMON_H

#include "fixture.h"
#include "modes_common.h"

#define QUEUE_ENTRIES 32
#define ARENA_SIZE (40u << 20) /* holds one op past the 16 MiB limit */
#define OP_MAX_LEN (16u << 20)
#define TIMEOUT_MS 20000
#define GOOD_LEN 64
#define MAX_SGL_ENTRIES 72

/* What a refused (or tolerated) op may come back as. */
enum acc {
	ACC_OK,		     /* must succeed with the right answer */
	ACC_PARAM,	     /* per op CC_ERR_BAD_PARAM */
	ACC_PARAM_ENQ,	     /* that, or refused at enqueue */
	ACC_RANGE_PARAM,     /* per op CC_ERR_BAD_RANGE or _BAD_PARAM */
	ACC_RANGE_PARAM_ENQ, /* that, or refused at enqueue (documented) */
	ACC_OP_ERR,	     /* some per-op error */
	ACC_OP_ERR_ENQ,	     /* that, or refused at enqueue */
	ACC_AUTH,	     /* per op CC_ERR_AUTH_FAILED (a wrong tag) */
};

struct t {
	struct cc_conn *conn;
	struct cc_queue *q;
	uint8_t *arena_base; /* from cc_sgl_set(): arena offset 0 */
	size_t arena_size;
	unsigned long checked, failed;
	int fatal;
};

struct gop {
	struct mc_key key;
	uint8_t *src, *dst, *aad, *tag; /* arena */
	struct cc_sessionless *sl;	/* arena, session-less only */
	uint8_t iv[MC_IV_MAX];
	unsigned iv_len;
	uint32_t len, aad_len;
	uint8_t pt[GOOD_LEN], ct[GOOD_LEN], reftag[MC_TAG_MAX];
};

void expect(struct t *t, int ok, const char *ctx, const char *what, int got);
void gop_free(struct t *t, struct gop *g);
int gop_make(struct t *t, struct gop *g, const struct mc_key *k, uint32_t sid,
	     struct cc_op *op, uint64_t ud);
int gop_right(const struct gop *g, int status);
int accepted(enum acc a, int enq, int status);
const char *acc_text(enum acc a);
int submit(struct t *t, const struct cc_op *ops, unsigned n, int *enq,
	   int *status);
void sandwich(struct t *t, const char *ctx, const char *what, enum acc acc,
	      const struct mc_key *k, uint32_t sid, struct cc_op *bad,
	      const struct gop *bad_gop, int verbose);
void key_for(struct mc_key *k, const struct mc_spec *s, unsigned kl);

/* Start a daemon with one queue of QUEUE_ENTRIES entries and an arena of
 * ARENA_SIZE (name: the client name), find the arena's base. 0 or -1. */
int bad_setup(struct t *t, struct fx_daemon *d, const char *name);
/* Close, stop the daemon, print the TOTAL line; the exit code. */
int bad_finish(struct t *t, struct fx_daemon *d);

#endif
