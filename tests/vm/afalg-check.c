/* SPDX-License-Identifier: MIT */
/*
 * afalg-check: a known-answer test of one AEAD through raw AF_ALG, for the
 * VM suite. No libkcapi, so it also tells whether a failure is the kernel's
 * or the library's.
 *
 *   afalg-check NAME [COUNT]
 *
 * NAME is a gcm(aes) implementation, by cra_name ("gcm(aes)") or driver
 * name ("pcrypt(generic-gcm-aesni)"). Runs COUNT (default 1) rounds of:
 * encrypt test case 4 of the GCM specification and compare ciphertext and
 * tag, decrypt it back, and check that a flipped tag bit is refused with
 * EBADMSG. Prints the driver's answer on success; exits 0 (pass), 1 (fail).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <linux/if_alg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

static const uint8_t key[16] = {
	0xfe, 0xff, 0xe9, 0x92, 0x86, 0x65, 0x73, 0x1c,
	0x6d, 0x6a, 0x8f, 0x94, 0x67, 0x30, 0x83, 0x08
};
static const uint8_t iv[12] = { 0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce,
				0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88 };
static const uint8_t aad[20] = { 0xfe, 0xed, 0xfa, 0xce, 0xde, 0xad, 0xbe,
				 0xef, 0xfe, 0xed, 0xfa, 0xce, 0xde, 0xad,
				 0xbe, 0xef, 0xab, 0xad, 0xda, 0xd2 };
static const uint8_t pt[60] = {
	0xd9, 0x31, 0x32, 0x25, 0xf8, 0x84, 0x06, 0xe5, 0xa5, 0x59, 0x09, 0xc5,
	0xaf, 0xf5, 0x26, 0x9a, 0x86, 0xa7, 0xa9, 0x53, 0x15, 0x34, 0xf7, 0xda,
	0x2e, 0x4c, 0x30, 0x3d, 0x8a, 0x31, 0x8a, 0x72, 0x1c, 0x3c, 0x0c, 0x95,
	0x95, 0x68, 0x09, 0x53, 0x2f, 0xcf, 0x0e, 0x24, 0x49, 0xa6, 0xb5, 0x25,
	0xb1, 0x6a, 0xed, 0xf5, 0xaa, 0x0d, 0xe6, 0x57, 0xba, 0x63, 0x7b, 0x39
};
/* ciphertext || tag */
static const uint8_t ct[76] = {
	0x42, 0x83, 0x1e, 0xc2, 0x21, 0x77, 0x74, 0x24, 0x4b, 0x72, 0x21,
	0xb7, 0x84, 0xd0, 0xd4, 0x9c, 0xe3, 0xaa, 0x21, 0x2f, 0x2c, 0x02,
	0xa4, 0xe0, 0x35, 0xc1, 0x7e, 0x23, 0x29, 0xac, 0xa1, 0x2e, 0x21,
	0xd5, 0x14, 0xb2, 0x54, 0x66, 0x93, 0x1c, 0x7d, 0x8f, 0x6a, 0x5a,
	0xac, 0x84, 0xaa, 0x05, 0x1b, 0xa3, 0x0b, 0x39, 0x6a, 0x0a, 0xac,
	0x97, 0x3d, 0x58, 0xe0, 0x91, 0x5b, 0xc9, 0x4f, 0xbc, 0x32, 0x21,
	0xa5, 0xdb, 0x94, 0xfa, 0xe9, 0x5a, 0xe7, 0x12, 0x1a, 0x47
};
enum { TAG_LEN = 16, BUF_MAX = sizeof(aad) + sizeof(ct) };

/*
 * Returns the number of bytes read back, or -errno. outlen must be exactly
 * the output's length: algif_aead's recvmsg loops until the buffer is full,
 * and with no more input it waits for more forever.
 */
static ssize_t aead_op(int tfm, uint32_t op, const uint8_t *in, size_t inlen,
		       uint8_t *out, size_t outlen)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) * 2 +
			 CMSG_SPACE(sizeof(struct af_alg_iv) + sizeof(iv))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = (void *)in, .iov_len = inlen };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = c.buf,
			      .msg_controllen = sizeof(c.buf) };
	struct cmsghdr *cm;
	struct af_alg_iv *aiv;
	uint32_t assoclen = sizeof(aad);
	ssize_t n;
	int opfd;

	memset(&c, 0, sizeof(c));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_ALG;
	cm->cmsg_type = ALG_SET_OP;
	cm->cmsg_len = CMSG_LEN(sizeof(op));
	memcpy(CMSG_DATA(cm), &op, sizeof(op));
	cm = CMSG_NXTHDR(&msg, cm);
	cm->cmsg_level = SOL_ALG;
	cm->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
	cm->cmsg_len = CMSG_LEN(sizeof(assoclen));
	memcpy(CMSG_DATA(cm), &assoclen, sizeof(assoclen));
	cm = CMSG_NXTHDR(&msg, cm);
	cm->cmsg_level = SOL_ALG;
	cm->cmsg_type = ALG_SET_IV;
	cm->cmsg_len = CMSG_LEN(sizeof(*aiv) + sizeof(iv));
	aiv = (struct af_alg_iv *)(void *)CMSG_DATA(cm);
	aiv->ivlen = sizeof(iv);
	memcpy(aiv->iv, iv, sizeof(iv));

	opfd = accept(tfm, NULL, 0);
	if (opfd < 0)
		return -errno;
	if (sendmsg(opfd, &msg, 0) != (ssize_t)inlen) {
		n = -errno;
		close(opfd);
		return n;
	}
	n = read(opfd, out, outlen);
	if (n < 0)
		n = -errno;
	close(opfd);
	return n;
}

static int round_trip(int tfm)
{
	uint8_t in[BUF_MAX], out[BUF_MAX];
	ssize_t n;

	/* encrypt: AAD || PT in, AAD || CT || TAG out */
	memcpy(in, aad, sizeof(aad));
	memcpy(in + sizeof(aad), pt, sizeof(pt));
	n = aead_op(tfm, ALG_OP_ENCRYPT, in, sizeof(aad) + sizeof(pt), out,
		    sizeof(out));
	if (n != (ssize_t)BUF_MAX) {
		fprintf(stderr, "encrypt: %s\n",
			n < 0 ? strerror((int)-n) : "short read");
		return -1;
	}
	if (memcmp(out + sizeof(aad), ct, sizeof(ct)) != 0) {
		fprintf(stderr, "encrypt: ciphertext or tag differs\n");
		return -1;
	}
	/* decrypt: AAD || CT || TAG in, AAD || PT out */
	memcpy(in + sizeof(aad), ct, sizeof(ct));
	n = aead_op(tfm, ALG_OP_DECRYPT, in, BUF_MAX, out,
		    sizeof(aad) + sizeof(pt));
	if (n != (ssize_t)(sizeof(aad) + sizeof(pt)) ||
	    memcmp(out + sizeof(aad), pt, sizeof(pt)) != 0) {
		fprintf(stderr, "decrypt: %s\n",
			n < 0 ? strerror((int)-n) : "wrong plaintext");
		return -1;
	}
	in[BUF_MAX - 1] ^= 1;
	n = aead_op(tfm, ALG_OP_DECRYPT, in, BUF_MAX, out,
		    sizeof(aad) + sizeof(pt));
	if (n != -EBADMSG) {
		fprintf(stderr, "decrypt with a bad tag: got %zd, want %d\n", n,
			-EBADMSG);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	/* sockaddr_alg's salg_name is 64 bytes, but the kernel takes a
	 * longer name (pcrypt(authenc(...)) driver names can be) if the
	 * address is longer, up to sizeof(struct sockaddr_storage). */
	union {
		struct sockaddr_alg sa;
		char buf[sizeof(struct sockaddr_storage)];
	} addr;
	const size_t name_max =
		sizeof(addr.buf) - offsetof(struct sockaddr_alg, salg_name);
	long count = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
	int tfm;

	if (argc < 2 || argc > 3 || count < 1) {
		fprintf(stderr, "usage: afalg-check NAME [COUNT]\n");
		return 2;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sa.salg_family = AF_ALG;
	strcpy((char *)addr.sa.salg_type, "aead");
	if (strlen(argv[1]) >= name_max) {
		fprintf(stderr, "name too long\n");
		return 2;
	}
	/* memcpy into the union, not the 64-byte member: see above */
	memcpy(addr.buf + offsetof(struct sockaddr_alg, salg_name), argv[1],
	       strlen(argv[1]) + 1);

	tfm = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (tfm < 0) {
		fprintf(stderr, "socket(AF_ALG): %s\n", strerror(errno));
		return 1;
	}
	if (bind(tfm, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		fprintf(stderr, "bind %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, sizeof(key)) != 0 ||
	    setsockopt(tfm, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, TAG_LEN) !=
		    0) {
		fprintf(stderr, "setsockopt: %s\n", strerror(errno));
		return 1;
	}
	for (long i = 0; i < count; i++)
		if (round_trip(tfm) != 0) {
			fprintf(stderr, "%s: round %ld failed\n", argv[1], i);
			return 1;
		}
	printf("%s: %ld round(s) of GCM test case 4 ok\n", argv[1], count);
	close(tfm);
	return 0;
}
