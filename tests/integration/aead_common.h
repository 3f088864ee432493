/* SPDX-License-Identifier: MIT */
/*
 * AES-CCM, ChaCha20-Poly1305 and ChaCha20 test cases, shared by
 * test_nist_aead (published vectors), test_diff_aead (random cases
 * against OpenSSL) and test_bad_aead:
 *
 * - one case type (struct av) for all three, with parsers for the
 *   vector files of python3-cryptography-vectors (CAVP CCM .rsp files,
 *   the ChaCha20-Poly1305 and ChaCha20 .txt files);
 * - OpenSSL's answer for a case (the independent implementation);
 * - whether an engine's capability row (cc_capabilities_get()) takes a
 *   case, and the runner that puts a case through an engine: cc_crypt()
 *   both ways and a forgery, then one burst with flat and scatter-gather
 *   buffers, in and out of place, and a session-less op.
 *
 * Functions return 0 (or a count) or a negative errno.
 */
#ifndef CRYPTOD_TEST_AEAD_COMMON_H
#define CRYPTOD_TEST_AEAD_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include "fixture.h"
#include "modes_common.h"

#define AV_DATA_MAX (1u << 20) /* vectors are small; random cases 64 KiB */
#define AV_AAD_MAX 65535

struct av {
	enum cc_alg alg;
	const char *file; /* for messages */
	unsigned line;
	int fail; /* decrypt only: the tag must not verify */
	uint8_t key[32];
	unsigned key_len;
	uint8_t iv[16]; /* ChaCha20: LE block counter || nonce */
	unsigned iv_len;
	uint8_t tag[16];
	unsigned tag_len;	/* 0: ChaCha20 */
	uint8_t *aad, *pt, *ct; /* malloc'd (av_free) */
	uint32_t aad_len, len;
};

void av_free(struct av *v);

/* ---- Vector files ---- */

/* A reader of "Name = value" records: the CAVP CCM files (sections in
 * brackets, values that last until changed), and the NIST-style .txt
 * files of ChaCha20 and ChaCha20-Poly1305 (values hex or "quoted"). */
struct av_file {
	FILE *f;
	const char *name;
	enum cc_alg alg;
	int decrypt; /* CCM DVPT: Result = Pass / Fail */
	unsigned line;
	/* CCM: what the headers and the section say until changed */
	long alen, plen, nlen, tlen;
	uint8_t key[32];
	int key_len;
	uint8_t nonce[16];
	int nonce_len;
};

/* Open path (alg: CC_ALG_AES_CCM, CC_ALG_CHACHA20_POLY1305 or
 * CC_ALG_CHACHA20). 0 or -errno. */
int av_open(struct av_file *p, const char *path, enum cc_alg alg);
void av_close(struct av_file *p);
/* Next case: 1, 0 at the end, -EINVAL on a parse error (said on stderr). */
int av_next(struct av_file *p, struct av *v);

/* ---- OpenSSL ---- */

/* OpenSSL's encryption of v->pt: out (v->len bytes) and tag (v->tag_len).
 * 0 or -EIO. */
int av_ref_encrypt(const struct av *v, uint8_t *out, uint8_t *tag);

/* ---- Engines ---- */

/* NULL if the capability row takes v, else which parameter it refuses
 * ("key", "tag": refused at session creation; "iv", "aad", "length":
 * per op). */
const char *av_refused(const struct cc_alg_caps *cap, const struct av *v);

/* The rows of cc_capabilities_get() for alg (*def: the default engine's,
 * which takes the session-less ops). The count or -errno; free *caps
 * with cc_capabilities_free(). */
int av_caps(struct cc_conn *conn, enum cc_alg alg, struct cc_alg_caps **caps,
	    struct cc_alg_caps **rows, unsigned max,
	    const struct cc_alg_caps **def);

struct av_run {
	struct cc_conn *conn;
	struct cc_queue *q;
	const struct cc_alg_caps *cap; /* the engine under test */
	const struct cc_alg_caps *def; /* where session-less ops go */
	unsigned long checked, failed, na, sessionless;
	unsigned shown;
};

/*
 * Put v through r->cap's engine. A case the row refuses must be refused
 * with the defined error (session -EINVAL; op CC_ERR_BAD_PARAM) and
 * counts as not applicable. Failures are counted and the first few
 * printed. 0, or -errno when the queue broke (stop).
 */
int av_run_case(struct av_run *r, const struct av *v);

#endif /* CRYPTOD_TEST_AEAD_COMMON_H */
