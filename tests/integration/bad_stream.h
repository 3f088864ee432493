/* SPDX-License-Identifier: MIT */
/*
 * What the test_bad_stream_* programs share (bad_stream.c): the daemon and
 * two queues, the ops of a case with the statuses each may complete with,
 * the case's own streams, descriptors edited in the ring, and background
 * streams (AES-GCM encrypt, AES-CBC decrypt, HMAC-SHA-512 verify) that get
 * a piece before and after every refused op and are checked against
 * OpenSSL at the end: a failure never disturbs another stream.
 *
 * STREAM_SEED replays the random data; STREAM_ALLOW_MISSING=1 skips an
 * algorithm whose FIRST fails with -EOPNOTSUPP.
 */
#ifndef CRYPTOD_TEST_BAD_STREAM_H
#define CRYPTOD_TEST_BAD_STREAM_H

#include "stream_common.h"

#define SQ_ENTRIES 64
#define ARENA (16u << 20)
#define TIMEOUT_MS 20000
#define ITEMS_MAX 160
#define BG_N 3
#define BG_PIECES 400
#define LIMIT_QUEUES 16
#define ACC_MAX 4

struct t {
	struct cc_conn *conn;
	struct cc_queue *q, *q2;
	unsigned long checked, failed;
	int fatal;
	int allow_missing;
	const struct sc_var *main_v; /* the algorithm of most cases */
	int missing[64];
	unsigned stream_limit; /* measured; 0 = not reached */
	/* background streams */
	struct sc_msg bg_msg[BG_N];
	uint32_t bg_sid[BG_N];
	struct sc_stream bg[BG_N];
	int bg_on[BG_N];
	unsigned bg_used; /* bursts so far */
	uint64_t ud;
};

/* ---- Items: an op and what it may complete with ---- */

enum { ANY_ERROR = 1 }; /* in acc[]: any status but OK */

struct item {
	struct cc_op op;
	int acc[ACC_MAX]; /* statuses accepted (ANY_ERROR: any error) */
	unsigned nacc;
	long want_len; /* with CC_OK; -1: not checked */
	int enq_ok;    /* a refusal at enqueue is accepted too */
	const char *what;
	/* results */
	int enq;    /* cc_enqueue_burst's error, 0 if it took the op */
	int status; /* completion's */
	uint32_t len;
	struct sc_stream *bg; /* a background piece */
	int from;	      /* run_items: index in the caller's array */
};

/* ---- Streams of the cases ---- */

struct cs {
	struct sc_msg m;
	uint32_t sid;
	int has_sid;
	struct sc_stream s;
	uint32_t cut;
};

/* ring edits */
struct edit {
	uint32_t handle; /* sl_off, if set */
	int set_handle;
	uint8_t flags_or;
	uint8_t iv_len, tag_len;
	uint32_t aad_off, aad_len, tag_off;
	uint32_t src_off; /* with SRC_SGL: a list */
	uint16_t src_nseg;
	uint32_t len; /* if not 0 */
};

void expect(struct t *t, int ok, const char *ctx, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
struct item *item_add(struct item *it, unsigned *n, const char *what,
		      const struct cc_op *op, long want_len, int enq_ok,
		      unsigned nacc, ...);
int item_accepts(const struct item *x, int status);
long piece_len(const struct sc_stream *s, uint32_t len);
void bg_add(struct t *t, struct item *it, unsigned *n);
void run_items(struct t *t, struct cc_queue *q, const char *ctx,
	       struct item *items, unsigned n);
void cs_free(struct t *t, struct cs *c);
int cs_make(struct t *t, struct cs *c, const struct sc_var *v,
	    struct cc_queue *q, enum cc_dir dir, unsigned n, uint32_t cut);
struct item *cs_next(struct cs *c, struct item *it, unsigned *n,
		     const char *what);
struct item *cs_piece(struct cs *c, struct item *it, unsigned *n,
		      const char *what, unsigned flags, uint32_t len, int nacc,
		      int a0, int a1);
void cs_check(struct t *t, struct cs *c, const char *ctx);
int usable(const struct t *t, const struct sc_var *v);
void probe(struct t *t, const struct sc_var *v);
void bg_start(struct t *t);
void bg_finish(struct t *t);
void do_edit(struct crd_sqe *e, void *arg);
uint32_t arena_off(struct cc_queue *q, const void *p);
int edited(struct t *t, const char *ctx, const struct cc_op *op,
	   struct edit *x);

/* A case of a program, run by bs_main in order. */
struct bs_case {
	const char *name;
	void (*run)(struct t *t, const struct fx_daemon *d);
};

/* Start the daemon and the queues, probe the algorithms, start the
 * background streams, run the cases, check the background streams, and
 * print the total: the exit status. */
int bs_main(const struct bs_case *cases, unsigned n);

#endif
