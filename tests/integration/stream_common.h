/* SPDX-License-Identifier: MIT */
/*
 * What the stream tests share (test_diff_stream, test_bad_stream_*): the
 * algorithms that stream, as data (their length rules from
 * daemon/engines/stream.h and ring_abi.h); messages with OpenSSL's
 * answer (one-shot EVP; AES-XTS one EVP op per data unit with the tweak
 * IV + k, 128-bit little-endian); a stream's pieces as zero-copy ops
 * (cc_op.stream, stream_flags, stream_param); a runner that keeps
 * several queues busy at once; and the "allowed missing" rule. The
 * refusal tests' access to a queue's submission ring: stream_ring.h.
 *
 * Functions return 0 (or a count) or a negative errno.
 */
#ifndef CRYPTOD_TEST_STREAM_COMMON_H
#define CRYPTOD_TEST_STREAM_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include <cryptod/ring_abi.h>

#include "fixture.h"
#include "modes_common.h"

#define SC_PIECE_MAX (1u << 20) /* the largest piece the tests cut */
#define SC_SEED_DEFAULT 0x73747265616d7331ull

/* Is this a sanitizer build (CMake: CRYPTOD_TEST_SANITIZED; else the
 * compilers' own macros)? */
int sc_sanitized(void);
/* The seed: $STREAM_SEED, else def. */
uint64_t sc_seed(uint64_t def);
/* $STREAM_ALLOW_MISSING=1: an algorithm whose FIRST fails with
 * -EOPNOTSUPP is skipped (printed), not failed. */
int sc_allow_missing(void);

/* $STREAM_ENGINE: the engine sc_session() names (NULL: none, the
 * default engine), read by sc_engine_init(). */
extern const char *sc_engine;
void sc_engine_init(void);
/* Does sc_engine stream alg, as the daemon's capabilities say? 1 when
 * no engine is named. */
int sc_engine_streams(struct cc_conn *conn, enum cc_alg alg);

enum sc_kind {
	SC_AEAD,   /* cipher and tag: GCM, ChaCha20-Poly1305, CCM */
	SC_CIPHER, /* CBC, CTR, ECB, XTS */
	SC_MAC,	   /* HMAC, SHA, CMAC: nothing written but the tag */
};

/* One algorithm and key size that streams. */
struct sc_var {
	enum cc_alg alg;
	const char *name; /* "aes-gcm-128", ... */
	enum sc_kind kind;
	unsigned key_len; /* 0: HMAC (random), SHA (none) */
	unsigned iv_len;  /* 0: none; GCM 12 (sometimes 1..128), CCM 7..13 */
	unsigned block;	  /* pieces' multiple: CBC, ECB 16; else 1 */
	int aad;	  /* takes AAD */
	int xts, ccm, hmac, sha;
	unsigned tag_def; /* the session's default tag length */
};

extern const struct sc_var sc_vars[];
extern const unsigned sc_n_vars;
const struct sc_var *sc_var_by_name(const char *name);

/* A message with OpenSSL's answer. */
struct sc_msg {
	const struct sc_var *v;
	uint8_t key[128];
	unsigned key_len;
	uint8_t iv[MC_IV_MAX];
	unsigned iv_len;
	uint8_t *aad; /* malloc'd */
	uint32_t aad_len;
	size_t len;
	uint8_t *pt, *ct; /* malloc'd; ct NULL for MACs */
	unsigned tag_len; /* the session's (0 in the session: default) */
	int tag_trunc;	  /* the session was given tag_len */
	uint8_t tag[64];  /* OpenSSL's, tag_len bytes */
	uint32_t unit;	  /* XTS data unit */
};

/* The message lengths v allows nearest len (block multiple, XTS >= 16
 * and no remainder 1..15 past whole units, CCM within the nonce's
 * length field). */
size_t sc_fix_len(const struct sc_var *v, size_t len, unsigned iv_len,
		  uint32_t unit);
/* Make a message of v about len bytes long (random key, IV, AAD, data,
 * XTS unit, truncated tag now and then; GCM's IV now and then of 1..128
 * bytes, past 16 in the arena) and its reference. 0, -ENOMEM or -EIO.
 * sc_msg_free() either way. */
int sc_msg_make(struct sc_msg *m, const struct sc_var *v, size_t len);
/* The same with the IV length given (0: random, GCM's 1..16 now and then:
 * for callers that pass m->iv itself, inline). */
int sc_msg_make_iv(struct sc_msg *m, const struct sc_var *v, size_t len,
		   unsigned iv_len);
void sc_msg_free(struct sc_msg *m);
/* OpenSSL's ct and tag for m (m->pt set). 0 or -EIO. */
int sc_ref(struct sc_msg *m);
/* A session for m on sc_engine (NULL: the default engine). */
int sc_session(struct cc_conn *conn, const struct sc_msg *m, uint32_t *sid);
/* "aes-gcm-128 len 1234 iv 12 aad 5 tag 16 unit 0" */
void sc_msg_desc(const struct sc_msg *m, char *buf, size_t n);

/* Random piece lengths for m: cuts[0..n) adds up to m->len, each at most
 * SC_PIECE_MAX, whole blocks (CBC, ECB) or units (XTS, but the last);
 * now and then a zero-length LAST. Returns n (<= max) or -E2BIG. */
int sc_cut(const struct sc_msg *m, uint32_t *cuts, unsigned max);
void sc_print_cuts(FILE *f, const uint32_t *cuts, unsigned n);

/*
 * One stream of a message on a queue: its arena buffers and its pieces.
 * Encrypt reads pt, decrypt reads ct (and the reference tag); out of
 * place (dst) or in place (dst == src); MACs have no dst.
 */
struct sc_stream {
	struct sc_msg *m;
	struct cc_queue *q;
	enum cc_dir dir;
	uint32_t sid, handle;
	int have_handle;
	int inplace;
	uint8_t *src, *dst, *aad, *tag; /* arena */
	uint8_t *iv;	/* arena: FIRST's IV when a descriptor cannot hold it */
	uint32_t *cuts; /* malloc'd */
	unsigned n, next; /* pieces, the next to build */
	size_t off;	  /* of the next piece */
	int missing;	  /* FIRST was -EOPNOTSUPP */
	int failed;
};

/* Arena buffers (data + MC_GUARD canary), copy the input in, take a
 * handle. 0 or -ENOMEM / the handle's error. */
int sc_stream_init(struct sc_stream *s, struct cc_queue *q, struct sc_msg *m,
		   enum cc_dir dir, uint32_t sid, int inplace,
		   const uint32_t *cuts, unsigned n);
void sc_stream_free(struct sc_stream *s);
/* The op of the next piece (advances). */
void sc_stream_op(struct sc_stream *s, struct cc_op *op, uint64_t ud);
/* The op of piece i with given flags, at offset off (the refusal test's
 * hand-made pieces). */
void sc_piece_op(const struct sc_stream *s, struct cc_op *op, uint64_t ud,
		 size_t off, uint32_t len, unsigned flags);
/* After every piece completed OK: the output, canaries and tag against
 * OpenSSL. NULL, or what is wrong (with *off where it showed). */
const char *sc_stream_check(const struct sc_stream *s, long *off);

/* Several queues at once: ops[0..n) of each submitted in bursts as the
 * ring takes them, completions in order (user_data checked). 0, -EPROTO
 * (order), -ETIMEDOUT or the library's error. */
struct sc_qrun {
	struct cc_queue *q;
	const struct cc_op *ops;
	struct cc_completion *comps;
	unsigned n, sent, got;
};
int sc_run_queues(struct sc_qrun *r, unsigned nq, int timeout_ms);

#endif
