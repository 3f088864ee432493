/* SPDX-License-Identifier: MIT */
/*
 * Reader for the MAC and digest vector files of python3-cryptography-
 * vectors, which share one layout: records of "Name = hex" lines
 * separated by blank lines, "#" comments and "[L = 20]" headers.
 *
 * - HMAC/rfc-2202-sha1.txt, HMAC/rfc-4231-sha*.txt: Len (bits of Msg),
 *   Key, Msg, MD;
 * - CMAC/nist-800-38b-aes*.txt: COUNT, KEY, MESSAGE (may be empty),
 *   OUTPUT;
 * - hashes/SHA1, SHA2 *ShortMsg.rsp / *LongMsg.rsp: Len (bits), Msg
 *   ("00" when Len is 0), MD.
 *
 * Strict: an unknown or repeated field, a record without message or
 * digest, or a Len that disagrees with Msg is a parse error. A record
 * whose Len is not a multiple of 8 (bit-oriented) cannot be expressed
 * in bytes: it is returned with bits set and the caller skips it.
 */
#ifndef CRYPTOD_TEST_MAC_VECTORS_H
#define CRYPTOD_TEST_MAC_VECTORS_H

#include <stdint.h>
#include <stdio.h>

#define MAC_KEY_MAX 256
#define MAC_MSG_MAX (32u << 10) /* LongMsg files: up to 17 KiB */
#define MAC_MD_MAX 64

struct mac_vec {
	unsigned line; /* of the record's first field */
	long count;    /* COUNT, or the record's index in the file */
	long bits;     /* Len, or -1 when the file has none */
	uint8_t key[MAC_KEY_MAX];
	unsigned key_len;
	uint8_t msg[MAC_MSG_MAX];
	unsigned msg_len;
	uint8_t md[MAC_MD_MAX];
	unsigned md_len;
};

struct mac_reader {
	FILE *f;
	const char *name; /* for diagnostics */
	unsigned line;
	long records;
	char *buf; /* getline's */
	size_t cap;
};

/* 0 or -errno. */
int mac_open(struct mac_reader *r, const char *path, const char *name);
void mac_close(struct mac_reader *r);
/* Next record: 1, 0 at end of file, -EINVAL on a parse error (said on
 * stderr with file and line). */
int mac_next(struct mac_reader *r, struct mac_vec *v);

#endif /* CRYPTOD_TEST_MAC_VECTORS_H */
