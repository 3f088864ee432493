/* SPDX-License-Identifier: MIT */
/*
 * Reader for the NIST CAVP AES-GCM response files (gcmEncryptExtIV*.rsp,
 * gcmDecrypt*.rsp): "[Name = bits]" section headers, then records of
 * "Count = n", "Key = hex", ... lines, decrypt records ending in either a
 * PT line or the word FAIL.
 *
 * The reader is strict: a record must agree with its section headers and
 * anything unexpected is a parse error, so that a slip in the parser shows
 * up as a failure rather than as vectors quietly not run.
 */
#ifndef CRYPTOD_TEST_CAVP_GCM_H
#define CRYPTOD_TEST_CAVP_GCM_H

#include <stdint.h>
#include <stdio.h>

/* Bounds of what the parser accepts; the files stay well inside them
 * (PT 51 bytes, AAD 90, IV 128). Larger values are a parse error, not a
 * silent truncation. */
#define V_KEY_MAX 32
#define V_IV_MAX 128
#define V_DATA_MAX 256
#define V_TAG_MAX 16
#define CAVP_LINE_MAX 1024

struct gcm_vec {
	unsigned line; /* of "Count", for diagnostics */
	unsigned count;
	int fail; /* decrypt: FAIL, authentication must fail */
	int has_key, has_iv, has_pt, has_ct, has_aad, has_tag;
	uint8_t key[V_KEY_MAX];
	unsigned key_len;
	uint8_t iv[V_IV_MAX];
	unsigned iv_len;
	uint8_t pt[V_DATA_MAX];
	unsigned pt_len;
	uint8_t ct[V_DATA_MAX];
	unsigned ct_len;
	uint8_t aad[V_DATA_MAX];
	unsigned aad_len;
	uint8_t tag[V_TAG_MAX];
	unsigned tag_len;

	/* Not parsed: the test's own state for this vector. */
	uint32_t session;
	int has_session;
};

struct cavp {
	FILE *f;
	const char *name; /* for diagnostics */
	unsigned line;
	int decrypt; /* gcmDecrypt: PT or FAIL; else PT required */
	/* Section headers, bits; -1 until seen. */
	long keylen, ivlen, ptlen, aadlen, taglen;
	char pending[CAVP_LINE_MAX];
	int has_pending;
	unsigned seen; /* records read, for sampling */
};

/* Open path; name is used in messages. 0 or -errno. */
int cavp_open(struct cavp *p, const char *path, const char *name, int decrypt);
void cavp_close(struct cavp *p);

/* Next record: 1, 0 at end of file, -EINVAL on a parse error (reported
 * on stderr with file and line). */
int cavp_next(struct cavp *p, struct gcm_vec *v);

/* N from $CRYPTOD_TEST_SAMPLE (default 1): cavp_next() and mv_next()
 * return only every Nth record, the first included. */
unsigned cavp_sample(void);

#endif /* CRYPTOD_TEST_CAVP_GCM_H */
