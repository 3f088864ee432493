/* SPDX-License-Identifier: MIT */
/*
 * Shared by the every-algorithm integration tests (test_nist_modes,
 * test_authenc_kat, test_diff_*, test_bad_*):
 *
 * - the table of docs/algorithms.md, written out as data, so that every
 *   test judges the service against the same reading of the spec;
 * - OpenSSL references for every algorithm (EVP ciphers, HMAC);
 * - the engines that claim an algorithm, from cc_capabilities_get();
 * - arena buffers laid out flat or as scatter-gather lists with canary
 *   gaps between segments, so that a write outside a segment shows;
 * - a reproducible random stream and a few comparison helpers.
 *
 * Functions return 0 (or a count) or a negative errno, as in the library.
 */
#ifndef CRYPTOD_TEST_MODES_COMMON_H
#define CRYPTOD_TEST_MODES_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fixture.h"

#define MC_KEY_MAX 256 /* HMAC keys (session-less: 64) */
#define MC_TAG_MAX 64  /* SHA-512 */
#define MC_IV_MAX 128  /* CC_IV_MAX: longer than 16 bytes, in the arena */
#define MC_SEG_MAX 64  /* segments per list, as the header promises */
#define MC_GUARD 16    /* canary bytes after every output */
#define MC_CANARY 0xa5
#define MC_MAX_ENGINES 8

/* ---- The spec (docs/algorithms.md), as data ---- */

enum mc_aad_rule {
	MC_AAD_ANY,	/* 0..65535 bytes, authenticated */
	MC_AAD_ZERO,	/* must be 0: anything else is CC_ERR_BAD_PARAM */
	MC_AAD_IGNORED, /* accepted and without effect */
};

struct mc_spec {
	enum cc_alg alg;
	const char *name; /* cc_alg_name() must agree */
	unsigned key_lens[3];
	unsigned n_key_lens; /* 0: no key (null) */
	int auth_key;	     /* authenc: HMAC key of 1..64 bytes */
	unsigned iv_len;     /* the one IV length every engine takes */
	int iv_ignored;	     /* null: any IV, without effect */
	unsigned tag_def;    /* default tag length, 0 = no tag */
	uint64_t tag_mask;   /* bit t: tag_len t is allowed */
	enum mc_aad_rule aad;
	unsigned block;		/* length must be a multiple of this */
	unsigned min_len;	/* XTS: 16 */
	int writes_data;	/* GMAC writes the tag only */
	int xts_key;		/* two halves that must differ */
	const char *engines[3]; /* the spec's list, default first */
	/* MACs and digests (mc_mac_specs): keys of any length up to
	 * key_any (HMAC; else key_lens, or none), tags tag_lo..tag_hi. */
	unsigned key_any, tag_lo, tag_hi;
};

extern const struct mc_spec mc_specs[];
extern const unsigned mc_n_specs;

/*
 * The MACs and digests (mac_common.c): GMAC's op shape (writes_data 0, no
 * IV, no AAD), iterated by test_diff_mac and test_nist_mac only; the
 * cipher-shaped tests iterate mc_specs.
 */
extern const struct mc_spec mc_mac_specs[];
extern const unsigned mc_n_mac_specs;

/* NULL for algorithms outside both tables (LRW is not served). */
const struct mc_spec *mc_spec_of(enum cc_alg alg);

/* Whether the spec allows iv_len for alg on engine (GCM and GMAC on aesni
 * and openssl also take 1..128 bytes). */
int mc_iv_ok(const struct mc_spec *s, const char *engine, unsigned iv_len);

/* Whether the spec allows tag_len (as a session's tag length). */
int mc_tag_ok(const struct mc_spec *s, unsigned tag_len);

/* Whether the spec allows a payload of len bytes. */
int mc_len_ok(const struct mc_spec *s, uint32_t len);

/* ---- Keys and the OpenSSL reference ---- */

struct mc_key {
	enum cc_alg alg;
	uint8_t key[MC_KEY_MAX];
	unsigned key_len;
	uint8_t auth_key[MC_KEY_MAX];
	unsigned auth_key_len;
	unsigned tag_len; /* as given to the session; 0 = default */
};

/* The tag length an op of this key writes or verifies. */
unsigned mc_tag_len(const struct mc_key *k);

/*
 * What the service must compute for an encryption: out gets len bytes
 * (not touched for GMAC), tag gets the full tag (GCM 16 bytes, HMAC the
 * whole digest, MACs and digests up to 64; compare its first mc_tag_len()
 * bytes). For GMAC, the MACs and digests, in is the data that is
 * authenticated. 0 or -EIO (OpenSSL refused).
 */
int mc_ref_encrypt(const struct mc_key *k, const uint8_t *iv, unsigned iv_len,
		   const uint8_t *aad, unsigned aad_len, const uint8_t *in,
		   uint32_t len, uint8_t *out, uint8_t *tag);

/* The whole MAC or digest of in (OpenSSL; XCBC written out on AES-ECB)
 * into md (up to 64 bytes). 0 or -EIO. */
int mc_ref_mac(const struct mc_key *k, const uint8_t *in, uint32_t len,
	       uint8_t *md);

/* Do engine's capability rows for alg take key_len and tag_len (0: the
 * default)? 1 or 0. The table is fetched once per process. */
int mc_engine_takes(struct cc_conn *conn, enum cc_alg alg, const char *engine,
		    unsigned key_len, unsigned tag_len);

/* The SHA of an algorithm (an authenc row's HMAC, HMAC-n, SHA-n;
 * crd_alg_sha_idx()) as OpenSSL names it ("SHA1", "SHA256", ...), or
 * NULL for one without. */
const char *mc_hmac_digest(enum cc_alg alg);

/* HMAC(key, a || b) with digest (OpenSSL's name) into md (up to 64
 * bytes); returns the digest length or -EIO. */
int mc_hmac2(const char *digest, const uint8_t *key, unsigned key_len,
	     const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len,
	     uint8_t *md);

/* ---- Engines and sessions ---- */

/*
 * The engines cc_capabilities_get() lists as available for alg, the
 * default one first; unavailable entries are printed with their reason.
 * Returns the count (at most max) or -errno.
 */
int mc_engines_for(struct cc_conn *conn, enum cc_alg alg,
		   char names[][FX_ENGINE_NAME_MAX], unsigned max);

/* A session for k on engine (NULL = the daemon's choice). */
int mc_session(struct cc_conn *conn, const struct mc_key *k, const char *engine,
	       uint32_t *sid);

/* Fill an arena struct cc_sessionless from k (reserved = 0). */
void mc_sessionless_fill(struct cc_sessionless *sl, const struct mc_key *k);

/* ---- Arena layouts: flat or scatter-gather ---- */

/*
 * One side of an op in the arena. Flat (nseg 0): one buffer of len bytes
 * then MC_GUARD canary bytes. Listed: nseg segments of one block, each
 * followed by a gap of 0..63 canary bytes, and an arena segment list.
 */
struct mc_layout {
	unsigned nseg; /* 0 = flat */
	uint32_t len;
	uint8_t *base;		  /* arena; owned */
	size_t base_len;	  /* bytes of base, gaps and guard included */
	struct cc_sgl_entry *sgl; /* arena; owned; NULL when flat */
	uint8_t *seg[MC_SEG_MAX];
	uint32_t seg_len[MC_SEG_MAX];
};

/*
 * Allocate len bytes as nseg segments (0 = flat) with random cut points
 * (each segment at least one byte unless zero_segs) and random gaps; the
 * whole block is set to MC_CANARY. 0, -EINVAL (nseg > len or >
 * MC_SEG_MAX) or -ENOMEM.
 */
int mc_layout_alloc(struct cc_queue *q, struct mc_layout *l, uint32_t len,
		    unsigned nseg, int zero_segs);
/* The same with the segment lengths given (their sum is the length). */
int mc_layout_alloc_lens(struct cc_queue *q, struct mc_layout *l,
			 const uint32_t *lens, unsigned nseg);
void mc_layout_free(struct cc_queue *q, struct mc_layout *l);
void mc_layout_write(struct mc_layout *l, const uint8_t *data);
void mc_layout_read(const struct mc_layout *l, uint8_t *data);
/* Offset of the first canary byte (gap or guard) that changed, or -1. */
long mc_layout_canary(const struct mc_layout *l);
/* Set op->src/src_sgl (is_dst 0) or op->dst/dst_sgl (is_dst 1). */
void mc_layout_to_op(const struct mc_layout *l, struct cc_op *op, int is_dst);

/* ---- Random numbers: splitmix64, reproducible from a printed seed ---- */

/* A seed from the environment variable var (TEST_SEED for
 * mc_seed_from_env), else def. */
uint64_t mc_seed_env(const char *var, uint64_t def);
uint64_t mc_seed_from_env(uint64_t def);
void mc_srand(uint64_t seed);
uint64_t mc_rnd(void);
uint32_t mc_below(uint32_t n); /* [0, n), n > 0 */
void mc_rnd_bytes(uint8_t *p, size_t n);
/* A payload length: 0..256 half of the time, 0..4096 three times in ten,
 * else 0..64 KiB. */
uint32_t mc_rnd_len(void);
/* An AAD length: none pct_empty percent of the time, the largest
 * (CRD_AAD_MAX) 2 percent, any up to the largest pct_long percent, else
 * 0..1024 (short, as protocols use it). */
uint32_t mc_rnd_aad_len(unsigned pct_empty, unsigned pct_long);

/* ---- Comparison and printing ---- */

long mc_first_diff(const uint8_t *a, const uint8_t *b, size_t n);
long mc_first_not(const uint8_t *p, uint8_t v, size_t n);
void mc_print_hex(FILE *f, const char *label, const uint8_t *p, size_t n);
void mc_flip(uint8_t *p, uint32_t bit);

/* Hex string to bytes; the byte count or -EINVAL. */
int mc_unhex(const char *s, uint8_t *out, size_t max);

#endif /* CRYPTOD_TEST_MODES_COMMON_H */
