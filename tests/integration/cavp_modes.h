/* SPDX-License-Identifier: MIT */
/*
 * Reader for the NIST CAVP AES block-mode response files shipped by
 * python3-cryptography-vectors:
 *
 * - CBC/ECB (*.rsp) and CTR (aes-*-ctr.txt, RFC 3686 vectors in the same
 *   layout): "[ENCRYPT]" / "[DECRYPT]" sections, records of COUNT, KEY,
 *   IV (not ECB), PLAINTEXT, CIPHERTEXT;
 * - XTS (XTSGenAES*.rsp): records of COUNT, DataUnitLen (bits), Key (both
 *   halves), either i (the tweak, hex) or DataUnitSeqNumber (decimal), PT,
 *   CT.
 *
 * Strict, like cavp_gcm.c: an unknown field, a missing one or a length
 * that disagrees with the record is a parse error, so that a parser slip
 * shows up as a failure rather than as vectors quietly not run.
 */
#ifndef CRYPTOD_TEST_CAVP_MODES_H
#define CRYPTOD_TEST_CAVP_MODES_H

#include <stdint.h>
#include <stdio.h>

#define MV_KEY_MAX 64
#define MV_DATA_MAX 512 /* the files stay under 160 bytes */
#define MV_LINE_MAX 2048

enum mv_kind {
	MV_BLOCK_IV, /* CBC, CTR: KEY, IV, PLAINTEXT, CIPHERTEXT */
	MV_BLOCK,    /* ECB: no IV */
	MV_XTS,
};

struct mode_vec {
	unsigned line; /* of COUNT, for diagnostics */
	unsigned count;
	int decrypt; /* the section: [DECRYPT] */
	int has_key, has_iv, has_pt, has_ct, has_seqno, has_bits;
	uint8_t key[MV_KEY_MAX];
	unsigned key_len;
	uint8_t iv[16]; /* XTS: the tweak, also built from the seqno */
	unsigned iv_len;
	uint64_t seqno;
	long bits; /* XTS DataUnitLen; else 8 * len */
	uint8_t pt[MV_DATA_MAX];
	uint8_t ct[MV_DATA_MAX];
	unsigned len; /* bytes of pt and of ct */
};

struct mv_reader {
	FILE *f;
	const char *name; /* for diagnostics */
	enum mv_kind kind;
	unsigned key_len; /* every record's, from the file name */
	unsigned line;
	int section; /* -1 before the first, else 0 encrypt, 1 decrypt */
	char pending[MV_LINE_MAX];
	int has_pending;
	unsigned seen; /* records read, for sampling */
};

/* Open path; name is used in messages. 0 or -errno. */
int mv_open(struct mv_reader *r, const char *path, const char *name,
	    enum mv_kind kind, unsigned key_len);
void mv_close(struct mv_reader *r);

/* Next record: 1, 0 at end of file, -EINVAL on a parse error (reported on
 * stderr with file and line). For XTS with DataUnitSeqNumber, iv is the
 * tweak that number stands for: its little-endian 128-bit encoding. */
int mv_next(struct mv_reader *r, struct mode_vec *v);

#endif /* CRYPTOD_TEST_CAVP_MODES_H */
