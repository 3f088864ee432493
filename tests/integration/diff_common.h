/* SPDX-License-Identifier: MIT */
/*
 * What the differential tests of the algorithm families share
 * (test_diff_gcm, test_diff_cipher, test_diff_authenc): each runs its
 * family's algorithms against OpenSSL (EVP ciphers and HMAC), on every
 * engine that claims them (cc_capabilities_get()), with random keys of
 * every size, IVs, AAD where the spec allows it (and where it says
 * "ignored", to check that it is), payload lengths from 0 to 64 KiB with
 * the edges of each algorithm's rules, and tag lengths.
 *
 * Each case becomes ops in a shared burst: encrypt, decrypt, and for the
 * authenticated algorithms (GCM, GMAC, authenc) a forgery (a flipped bit
 * in the tag, the data or the AAD) that must complete CC_ERR_AUTH_FAILED
 * with the output zeroed (GMAC writes nothing, so nothing may change).
 * IVs: the algorithm's, and for GCM and GMAC on the engines that take
 * them, a third of the cases 1..128 bytes (past 16, in the arena). Each
 * op picks a layout: flat or scatter-gather (1..16 segments at
 * random cut points, canary gaps between them), in place (both
 * spellings) or out of place, with a destination list split differently
 * from the source. A quarter of the ops are session-less (the key in a
 * struct cc_sessionless in the arena), mixed with session ops in the same
 * burst. Every case also goes through cc_crypt().
 *
 * Beside the random cases: zero-length segments, which the spec does not
 * forbid: they are run separately and what the service makes of them is
 * reported (accepted with the right answer, or refused with
 * CC_ERR_BAD_PARAM / CC_ERR_BAD_RANGE; anything else fails); and one
 * 16 MiB op each way, the spec's upper bound.
 *
 * Everything random comes from one seed, printed first; TEST_SEED
 * replays a run. Each algorithm draws from its own stream (the seed and
 * the algorithm), so a case is the same whichever program runs it. Keys
 * are never printed: the seed reproduces them.
 *
 * diff_case.c makes the cases, builds their ops and judges the results;
 * diff_run.c runs them and holds the main loop.
 */
#ifndef CRYPTOD_TEST_DIFF_COMMON_H
#define CRYPTOD_TEST_DIFF_COMMON_H

#include "fixture.h"
#include "modes_common.h"

#define SEED_DEFAULT 0x6d6f646573646966ull
/* Per algorithm and engine, beside the edges. A sanitized daemon runs
 * each op several times slower: a third of them there, every edge still
 * (the release pass runs them all). */
#ifdef CRYPTOD_TEST_SANITIZED
#define RANDOM_CASES 200
#else
#define RANDOM_CASES 600
#endif
#define AAD_MAX 65535
#define QUEUE_ENTRIES 64       /* smaller than a burst, on purpose */
#define ARENA_SIZE (80u << 20) /* two 16 MiB ops and then some */
#define OP_MAX_LEN (16u << 20)
#define GROUP_BYTES (12u << 20) /* arena bytes one burst may use */
#define GROUP_CASES 24
#define OPS_PER_CASE 3
#define BURST_TIMEOUT_MS 30000
#define SHOW_FAILURES 8 /* per algorithm and engine */
#define SEG_MAX_RANDOM 16

/* The edges of every rule (block multiples, XTS's 16 bytes, 64 KiB), and
 * a few larger ops: the spec allows up to 16 MiB (run_max_len()). */
extern const uint32_t diff_edge_lens[];
extern const unsigned diff_n_edge_lens;

/* The families, one program each (diff_main()). */
enum diff_family {
	DIFF_GCM,     /* aes-gcm, aes-gmac */
	DIFF_CIPHER,  /* aes-cbc, aes-ctr, aes-ecb, aes-xts, null */
	DIFF_AUTHENC, /* aes-cbc-hmac-sha*, aes-ctr-hmac-sha*, aes-cbc-null */
	DIFF_MAC, /* mc_mac_specs: hmac-sha*, sha*, aes-cmac, aes-xcbc-mac */
	DIFF_NR,
};

/* What one op of a case does. */
enum kind {
	K_ENC,
	K_DEC,
	K_FORGE, /* authenticated algorithms only */
};

enum layout {
	L_FLAT_OOP,
	L_FLAT_INPLACE_NULL, /* dst NULL */
	L_FLAT_INPLACE_SAME, /* dst == src */
	L_SGL_OOP,	     /* src and dst lists, split differently */
	L_SGL_INPLACE_NULL,  /* dst_sgl NULL */
	L_SGL_INPLACE_SAME,  /* dst_sgl == src_sgl */
	L_SGL_TO_FLAT,	     /* src list, flat dst */
	L_FLAT_TO_SGL,	     /* flat src, dst list */
	L_NR,
};

extern const char *const diff_layout_name[L_NR];

struct dcase {
	unsigned idx;
	const struct mc_spec *s;
	struct mc_key key;
	uint8_t iv[MC_IV_MAX];
	unsigned iv_len;
	uint32_t len, aad_len;
	uint8_t *pt, *ct, *aad;	 /* malloc'd; ct is OpenSSL's answer */
	uint8_t tag[MC_TAG_MAX]; /* OpenSSL's full tag */
	int sessionless_ok;	 /* the default engine takes this IV */
	const char *note;	 /* "ctr carry 32" etc., or NULL */
	uint32_t session;
	int has_session;
};

struct dop {
	struct dcase *c;
	enum kind kind;
	enum layout layout;
	int sessionless;
	int forge;    /* 0 tag, 1 data, 2 aad */
	int pass_tag; /* no-tag algorithms: pass a buffer anyway */
	struct mc_layout src, dst;
	uint8_t *aad, *tag; /* arena */
	uint8_t *iv;	    /* arena: an IV longer than a descriptor holds */
	struct cc_sessionless *sl;
	uint8_t *in; /* malloc'd: what src held before the op */
};

struct t {
	struct cc_conn *conn;
	struct cc_queue *q;
	const char *engine;
	const char *def_engine; /* where session-less ops go */
	unsigned long checked, failed;
	unsigned long n_layout[L_NR], n_sessionless, n_forge, n_sync;
	unsigned long n_arena_iv; /* ops whose IV was in the arena */
	unsigned shown;
	int fatal;
};

/* ---- diff_case.c ---- */

/*
 * Case idx of s: a key of s->key_lens[key_pick % n], the nearest length to
 * len the algorithm takes, random IV, AAD and data, and OpenSSL's answer.
 * ctr_carry >= 0: a CTR counter block about to carry (0: 32 bits, 1: 64,
 * 2: 128, 3: 32 into a byte of 0xff). 0, -ENOMEM or -EIO; call
 * diff_case_free() either way.
 */
int diff_case_make(struct t *t, struct dcase *c, const struct mc_spec *s,
		   unsigned idx, uint32_t len, unsigned key_pick,
		   int ctr_carry);
void diff_case_free(struct dcase *c);

/* Count a failure and print the first SHOW_FAILURES of them (o may be
 * NULL); off >= 0 is the byte where it showed. */
void diff_fail(struct t *t, const struct dop *o, const char *path,
	       const char *why, int status, long off);
/* Print the failures since the last call by reason and status. */
void diff_fsum_print(void);

/* Judge an op's completion (comp_len < 0: the path has none). */
void diff_judge(struct t *t, struct dop *o, const char *path, int status,
		long comp_len);

/* Choose a layout for o (o->c, kind and sessionless set), fill its arena
 * buffers and op; 0 or -ENOMEM. */
int diff_dop_fill(struct t *t, struct dop *o, struct cc_op *op, uint64_t ud);
/* An IV longer than a descriptor holds: copied into o->iv, in the arena
 * (0 or -ENOMEM); shorter ones need nothing. */
int diff_dop_iv(struct t *t, struct dop *o);
void diff_dop_free(struct cc_queue *q, struct dop *o);

/* ---- diff_run.c ---- */

/* Start a daemon, run every algorithm of family f on every engine, print
 * the totals; the exit code. Every family runs DIFF_QUEUES client
 * processes at once, each with its own connection and queue and a share
 * of the algorithms, on a daemon with two workers. */
#define DIFF_QUEUES 3
int diff_main(enum diff_family f);

#endif /* CRYPTOD_TEST_DIFF_COMMON_H */
