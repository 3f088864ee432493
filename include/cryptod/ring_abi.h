/* SPDX-License-Identifier: MIT */
/*
 * cryptod ring ABI: the one definition of the shared-memory queue region.
 *
 * Both the daemon and libcryptoclient include this header; nothing else
 * defines the layout. Every field has a fixed width; sizes and offsets are
 * pinned by _Static_assert. Fields that live in shared memory carry a 'k'
 * prefix: the other side may change them at any time, so each is read once
 * into a private copy and validated before use.
 *
 * Region layout (the daemon creates it, seals it and hands the fd over):
 *
 *   [0, 4096)                 struct crd_region_hdr
 *   [sq_off, +sq_entries*64)  submission ring (struct crd_sqe)
 *   [cq_off, +cq_entries*16)  completion ring (struct crd_cqe)
 *   [arena_off, +arena_size)  data arena: buffers, IVs, AAD, tags
 *
 * Indices are free-running u32; a slot is index & (entries - 1).
 * Producer and consumer indices each own a cache line so that the two
 * sides never write to the same line.
 */
#ifndef CRYPTOD_RING_ABI_H
#define CRYPTOD_RING_ABI_H

#include <errno.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "algs.h"

/* 2: each queue has doorbells of its own: the submission doorbell is an
 * eventfd per queue, the completion doorbell a SOCK_STREAM socket (each
 * byte read is a wake-up) instead of an eventfd.
 * The version changes when a layout changes or a field's meaning does; an
 * addition that an older peer never produces (a new crd_sqe.flags bit, as
 * the stream flags and CRD_SQE_F_ARENA_IV were) keeps it: an older daemon
 * completes such a descriptor with CRD_ST_BAD_DESC, an older client never
 * sends one. */
#define CRD_ABI_VERSION 2u
#define CRD_REGION_MAGIC 0x43525944u /* "CRYD" */
#define CRD_CACHELINE 64u
#define CRD_HDR_SIZE 4096u

/* All bounds of the ring ABI live here. */
enum crd_limits {
	CRD_RING_MIN_ENTRIES = 8,
	CRD_RING_MAX_ENTRIES = 1u << 16,
	CRD_RING_DEFAULT_ENTRIES = 1024,
	CRD_IV_MAX = 16,	/* inline IV bytes in a descriptor */
	CRD_IV_ARENA_MAX = 128, /* IV bytes in the arena: GCM's longest in
				 * OpenSSL (GCM_IV_MAX_SIZE) */
	CRD_TAG_MAX = 64,	/* largest tag/ICV/digest (SHA-512) */
	CRD_AAD_MAX = 65535,	/* largest AAD, bytes */
	CRD_ARENA_ALIGN = 4096, /* arena size granularity */
};

#define CRD_ARENA_MIN_SIZE (64ull << 10)
#define CRD_ARENA_DEFAULT_SIZE (16ull << 20)
#define CRD_ARENA_MAX_SIZE (1ull << 30)
#define CRD_OP_MAX_LEN (16u << 20) /* largest single op, bytes */

/* crd_sqe.op */
enum crd_op {
	CRD_OP_ENCRYPT = 1,
	CRD_OP_DECRYPT = 2,
	/* The public-key rows (CRD_KIND_PKEY; below, and
	 * docs/asymmetric.md). ENCRYPT and DECRYPT are RSA-OAEP there. */
	CRD_OP_SIGN = 3,
	CRD_OP_VERIFY = 4,
	CRD_OP_DERIVE = 5,
};

/* Algorithms: the list is include/cryptod/algs.h. CRD_ALG_NO (0) is no
 * algorithm: the cipher column of a row that has no cipher half. */
enum crd_alg {
	CRD_ALG_NO = 0,
#define CRD_X(id, num, ...) CRD_ALG_##id = num,
	CRD_ALGORITHMS(CRD_X)
#undef CRD_X
		CRD_ALG_MAX_,
};

/* What an algorithm's op does (the kind column of algs.h). */
enum crd_alg_kind {
	CRD_KIND_NONE,
	CRD_KIND_AEAD,
	CRD_KIND_CIPHER,
	CRD_KIND_AUTHENC,
	CRD_KIND_MAC,
	CRD_KIND_HASH,
	CRD_KIND_PKEY,
};

/*
 * The SHA of an algorithm that has one (the sha column): 0 SHA-1,
 * 1 SHA-224, 2 SHA-256, 3 SHA-384, 4 SHA-512 (the order of the HMAC and
 * SHA rows); CRD_SHA_NO (-1) for every other algorithm. Each layer maps
 * the index to its own names (OpenSSL's, ipsec-mb's).
 */
enum crd_sha {
	CRD_SHA_NO = -1,
	CRD_SHA_1,
	CRD_SHA_224,
	CRD_SHA_256,
	CRD_SHA_384,
	CRD_SHA_512,
	CRD_SHA_N
};
_Static_assert(CRD_ALG_HMAC_SHA512 - CRD_ALG_HMAC_SHA1 == CRD_SHA_N - 1 &&
		       CRD_ALG_SHA512 - CRD_ALG_SHA1 == CRD_SHA_N - 1,
	       "the HMAC and SHA rows run SHA-1 .. SHA-512");

/* The usage class of a named key (the use column): which of a key
 * file's usage bits apply (daemon/control/keyreq.c). */
enum crd_use {
	CRD_USE_NO,	/* no named key: no key, or two */
	CRD_USE_CIPHER, /* encrypt, decrypt */
	CRD_USE_MAC,	/* mac-generate, mac-verify */
	CRD_USE_PKEY,	/* what the row's flags name: sign, verify, derive,
			 * encrypt, decrypt */
};

/* One column of algs.h's row for alg, as a switch the compiler turns
 * into a table (the data path asks some per op). */
#define CRD_ALG_COLUMN_(alg, col, none)                                        \
	switch (alg) {                                                         \
		CRD_ALGORITHMS(col)                                            \
	}                                                                      \
	return none

#define CRD_COL_KIND_(id, num, name, kname, tag, kind, ...)                    \
	case num:                                                              \
		return CRD_KIND_##kind;
static inline enum crd_alg_kind crd_alg_kind(unsigned alg)
{
	CRD_ALG_COLUMN_(alg, CRD_COL_KIND_, CRD_KIND_NONE);
}

#define CRD_COL_TAG_(id, num, name, kname, tag, ...) CRD_TAG_##id = (tag),
/* The tag column as constants, for static initializers (the engines'
 * capability rows): CRD_TAG_AES_CBC_HMAC_SHA1 is 12. crd_alg_tag_len()
 * (proto/names.h) asks by number. */
enum crd_alg_tag { CRD_ALGORITHMS(CRD_COL_TAG_) };

#define CRD_COL_FLAGS_(id, num, name, kname, tag, kind, flags, ...)            \
	case num:                                                              \
		return (flags);
/* The flags column (enum crd_alg_flag); 0 for an unknown number. */
static inline unsigned crd_alg_flags(unsigned alg)
{
	CRD_ALG_COLUMN_(alg, CRD_COL_FLAGS_, 0);
}

#define CRD_COL_SHA_(id, num, name, kname, tag, kind, flags, sha, ...)         \
	case num:                                                              \
		return CRD_SHA_##sha;
/* The sha column: 0..CRD_SHA_N - 1, or -1 (CRD_SHA_NO). */
static inline int crd_alg_sha_idx(unsigned alg)
{
	CRD_ALG_COLUMN_(alg, CRD_COL_SHA_, CRD_SHA_NO);
}

#define CRD_COL_CIPHER_(id, num, name, kname, tag, kind, flags, sha, cipher,   \
			...)                                                   \
	case num:                                                              \
		return CRD_ALG_##cipher;
/* An authenc row's cipher half (CRD_ALG_AES_CBC, CRD_ALG_AES_CTR); 0 for
 * every other algorithm. */
static inline unsigned crd_alg_cipher_half(unsigned alg)
{
	CRD_ALG_COLUMN_(alg, CRD_COL_CIPHER_, CRD_ALG_NO);
}

/* An authenc row's MAC half (CRD_ALG_HMAC_SHA<sha>); 0 for every other
 * algorithm. */
static inline unsigned crd_alg_mac_half(unsigned alg)
{
	int sha = crd_alg_sha_idx(alg);

	return crd_alg_cipher_half(alg) && sha >= 0
		       ? (unsigned)(CRD_ALG_HMAC_SHA1 + sha)
		       : CRD_ALG_NO;
}

#define CRD_COL_USE_(id, num, name, kname, tag, kind, flags, sha, cipher, use, \
		     ...)                                                      \
	case num:                                                              \
		return CRD_USE_##use;
/* The use column: a named key's usage class. */
static inline enum crd_use crd_alg_use(unsigned alg)
{
	CRD_ALG_COLUMN_(alg, CRD_COL_USE_, CRD_USE_NO);
}

/* Why alg has no named key (its use column is NO), from its kind: "" if
 * it has one. One text for the daemon's refusal and cryptoctl's. */
static inline const char *crd_alg_no_named_key(unsigned alg)
{
	if (crd_alg_use(alg) != CRD_USE_NO)
		return "";
	switch (crd_alg_kind(alg)) {
	case CRD_KIND_HASH:
		return "is a digest: it takes no key at all (cryptoctl digest)";
	case CRD_KIND_AUTHENC:
		return "takes two keys (a cipher key and an HMAC key); a named "
		       "key is one";
	case CRD_KIND_NONE:
		return "copies data in the clear: it takes no key at all";
	default:
		return "takes no named key";
	}
}

#define CRD_COL_OSSL_(id, num, name, kname, tag, kind, flags, sha, cipher,     \
		      use, ossl)                                               \
	case num:                                                              \
		return ossl;
/* The OpenSSL name column: the EVP cipher or digest that does the work,
 * '*' standing for one AES key's bits ("AES-*-GCM"), or NULL;
 * crd_alg_ossl_name() (proto/names.h) spells it for a key size. */
static inline const char *crd_alg_ossl_stem(unsigned alg)
{
	CRD_ALG_COLUMN_(alg, CRD_COL_OSSL_, NULL);
}

/* A keystream cipher under a client-chosen IV (CRD_AF_KEYSTREAM)? */
static inline int crd_alg_keystream(unsigned alg)
{
	return !!(crd_alg_flags(alg) & CRD_AF_KEYSTREAM);
}

/* Does some engine run alg as a stream (CRD_AF_STREAM)? Which engine
 * does is its own row's business (engine.h, alg_cap.stream). */
static inline int crd_alg_streams(unsigned alg)
{
	return !!(crd_alg_flags(alg) & CRD_AF_STREAM);
}

/* A key pair's row (sign, verify, derive, RSA-OAEP)? */
static inline int crd_alg_pkey(unsigned alg)
{
	return crd_alg_kind(alg) == CRD_KIND_PKEY;
}

/* The ops (bits 1 << enum crd_op) a key pair's row takes, from its
 * flags: sign and verify (SIGN), derive (DERIVE), RSA-OAEP's encrypt and
 * decrypt (PKE); 0 for any other row. */
static inline unsigned crd_alg_pk_ops(unsigned alg)
{
	unsigned f = crd_alg_pkey(alg) ? crd_alg_flags(alg) : 0;
	return (f & CRD_AF_SIGN ? 1u << CRD_OP_SIGN | 1u << CRD_OP_VERIFY : 0) |
	       (f & CRD_AF_DERIVE ? 1u << CRD_OP_DERIVE : 0) |
	       (f & CRD_AF_PKE ? 1u << CRD_OP_ENCRYPT | 1u << CRD_OP_DECRYPT
			       : 0);
}

/*
 * A key pair's row (CRD_KIND_PKEY): its OpenSSL name column split into
 * the EVP_PKEY type, written to type ("RSA", "EC", "ED25519"), and its
 * one parameter in *param (the RSA modulus bits "2048", the EC group
 * "P-256"; NULL when the column has none). 0, -ENOENT (not a key pair's
 * row) or -ENOSPC. Checking a key against a row is cryptod/pkey_row.h's.
 */
static inline int crd_alg_pkey_type(unsigned alg, char *type, size_t len,
				    const char **param)
{
	const char *stem = crd_alg_pkey(alg) ? crd_alg_ossl_stem(alg) : NULL;
	if (!stem || !len)
		return -ENOENT;
	const char *colon = strchr(stem, ':');
	size_t n = colon ? (size_t)(colon - stem) : strlen(stem);
	if (n >= len)
		return -ENOSPC;
	memcpy(type, stem, n);
	type[n] = '\0';
	*param = colon ? colon + 1 : NULL;
	return 0;
}

/* Authentication only (MAC, HASH): a tag over the source, no destination;
 * encrypt generates the tag, decrypt verifies it. */
static inline int crd_alg_auth_only(unsigned alg)
{
	enum crd_alg_kind k = crd_alg_kind(alg);
	return k == CRD_KIND_MAC || k == CRD_KIND_HASH;
}

/* The 3GPP algorithms, as DPDK's cryptodev takes them: an op's length
 * (crd_sqe.len) counts bits, and its buffers hold crd_len_bytes() bytes
 * (CRD_AF_BITS). */
static inline int crd_alg_bit_len(unsigned alg)
{
	return !!(crd_alg_flags(alg) & CRD_AF_BITS);
}

/* The bytes an op of len (bits or bytes, as alg counts) covers. */
static inline uint32_t crd_len_bytes(unsigned alg, uint32_t len)
{
	return crd_alg_bit_len(alg) ? (uint32_t)(((uint64_t)len + 7) / 8) : len;
}

/*
 * Public-key ops (a CRD_KIND_PKEY session; docs/asymmetric.md). The op
 * (crd_sqe.op) and its buffers:
 *   SIGN     src: what is signed (len bytes): the digest, for a
 *            CRD_AF_DIGEST row (its length the md's), else the message;
 *            dst: the signature, room for crd_alg_tag_len() bytes; the
 *            completion's len is its length.
 *   VERIFY   src as SIGN's; aad: the signature (aad_len bytes); nothing
 *            written; CRD_ST_BAD_SIGNATURE when it does not verify.
 *   DERIVE   src: the peer's public key as TLS carries it (an EC point
 *            uncompressed, 0x04 || x || y; X25519 and X448 the raw
 *            u-coordinate); dst: the shared secret, room for
 *            crd_alg_tag_len() bytes; a point not on the curve (or of
 *            small order) is CRD_ST_BAD_PARAM.
 *   ENCRYPT  RSA-OAEP: src the message; dst the ciphertext, room for the
 *            modulus's bytes; aad the OAEP label (may be empty).
 *   DECRYPT  RSA-OAEP: src the ciphertext; dst the message, room for the
 *            modulus's bytes; aad the label; a bad ciphertext is
 *            CRD_ST_AUTH_FAILED, whatever its cause, and nothing else is
 *            told (no padding oracle).
 * The op's parameters are struct crd_pk_params in iv[] (iv_len 16; 0
 * means all zero). Scatter-gather, arena IVs and session-less ops are
 * refused (CRD_ST_BAD_DESC), a stream's first piece as on every
 * algorithm that does not stream (-EOPNOTSUPP); tag_off and tag_len
 * must be 0.
 */
enum crd_pk_pad {
	CRD_PK_PAD_DEFAULT = 0, /* the key type's own scheme: ECDSA, EdDSA,
				 * ECDH, X25519; for RSA signatures PKCS#1
				 * v1.5, for RSA encryption OAEP */
	CRD_PK_PAD_PKCS1 = 1,	/* RSA signatures: PKCS#1 v1.5 */
	CRD_PK_PAD_PSS = 2,	/* RSA signatures: PSS, MGF1 */
	CRD_PK_PAD_OAEP = 3,	/* RSA encryption: OAEP, MGF1 */
};
enum {
	/* crd_pk_params.salt_len: PSS's salt as long as the digest (TLS's
	 * rule), or the longest the key allows (verify: any length) */
	CRD_PK_SALT_DIGEST = -1,
	CRD_PK_SALT_MAX = -2,
};
struct crd_pk_params {
	uint8_t pad;	 /* enum crd_pk_pad */
	uint8_t md;	 /* the digest: 1 + enum crd_sha (CRD_SHA_256 + 1 is
			  * SHA-256); 0 none (EdDSA, ECDH); a CRD_AF_DIGEST
			  * row's sign and verify need one, OAEP's defaults
			  * to SHA-1 as RFC 8017's */
	uint8_t mgf1_md; /* PSS, OAEP: MGF1's digest, as md; 0 = md's */
	uint8_t reserved0;
	int32_t salt_len;    /* PSS: bytes, or CRD_PK_SALT_* */
	uint8_t reserved[8]; /* must be zero */
};
_Static_assert(sizeof(struct crd_pk_params) == CRD_IV_MAX,
	       "pk params fill the sqe's IV");

/* crd_sqe.flags */
#define CRD_SQE_F_SRC_SGL 1u	 /* src_off: a struct crd_seg[src_nseg] */
#define CRD_SQE_F_DST_SGL 2u	 /* dst_off: a struct crd_seg[dst_nseg] */
#define CRD_SQE_F_SESSIONLESS 4u /* sl_off: a struct crd_sessionless */
#define CRD_SQE_F_STREAM 8u	 /* a piece of a stream; sl_off: its handle */
#define CRD_SQE_F_FIRST 16u	 /* with STREAM: opens the stream */
#define CRD_SQE_F_LAST 32u	 /* with STREAM: ends it; the tag is its */
#define CRD_SQE_F_CLONE 64u	 /* with STREAM alone: copy it (below) */
#define CRD_SQE_F_ARENA_IV 128u	 /* the IV is in the arena (below) */
#define CRD_SQE_FLAGS_KNOWN                                                    \
	(CRD_SQE_F_SRC_SGL | CRD_SQE_F_DST_SGL | CRD_SQE_F_SESSIONLESS |       \
	 CRD_SQE_F_STREAM | CRD_SQE_F_FIRST | CRD_SQE_F_LAST |                 \
	 CRD_SQE_F_CLONE | CRD_SQE_F_ARENA_IV)
/* Every bit of the u8 is taken now: the next flag needs a field. */
_Static_assert(CRD_SQE_FLAGS_KNOWN == 0xff, "sqe flags: one bit each");

/*
 * IVs longer than a descriptor holds (AES-GCM and AES-GMAC take 1..128
 * bytes on the engines whose capability rows say so): with
 * CRD_SQE_F_ARENA_IV, iv_len (1..CRD_IV_ARENA_MAX) gives the IV's length
 * and iv[] holds its arena offset, a little-endian u32 in iv[0..3], with
 * iv[4..15] zero (else CRD_ST_BAD_DESC). The daemon checks the range
 * against the arena (CRD_ST_BAD_RANGE) and copies the IV once, when it
 * validates the descriptor, before anything of the op is written, so the
 * IV may share bytes with anything, and what the client writes there
 * later changes nothing. The flag may carry any length the capability
 * takes, a short one too; without it an IV is inline, as before. On a
 * stream, only a FIRST piece carries an IV; a session-less op may carry
 * one like any other.
 */
static inline uint32_t crd_le32(const uint8_t p[4])
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint32_t crd_sqe_iv_off(const uint8_t iv[4])
{
	return crd_le32(iv);
}

/*
 * Streams: a message that spans many ops of one queue. Each piece is an
 * op with CRD_SQE_F_STREAM, FIRST on the first, LAST on the last (both on
 * a stream of one piece, neither on a middle one), all of one session and
 * one direction. The daemon keeps the running state (GHASH, Poly1305,
 * CBC-MAC, hash states, chaining and counter blocks) in its locked memory
 * between pieces and runs each stream's pieces in submission order, one
 * at a time, whichever workers claimed them (pieces of different streams
 * may run at once on different workers); each piece completes in its own
 * slot with its length, as a one-shot op does (a piece's output is as
 * long as its input; MACs and digests write nothing but the tag).
 *
 * Fields of a piece:
 *   sl_off    the handle: bits 0..7 a slot of the queue's stream table
 *             (< CRD_STREAMS_PER_QUEUE), bits 8..31 a tag of the client's
 *             choosing that every piece must repeat (catches a handle of
 *             another stream, queue or lap).
 *   iv, aad   on FIRST only (iv_len and aad_len 0 on the others).
 *   iv[0..3]  on the others, with iv_len 0: the piece's number in its
 *             stream, little-endian (crd_stream_piece_no): 1 for the
 *             piece after FIRST, one more for each piece after it,
 *             clones included, from 0xffffffff on to 1; 0 = not
 *             numbered. The worker that claims a numbered piece may run
 *             it at once when the stream's previous piece has run; any
 *             other piece waits for its queue's poster, which runs the
 *             pieces it meets in submission order. A number that lies
 *             can only disorder the liar's own stream. (A daemon from
 *             before numbers ignores them; pieces without them run as
 *             before.)
 *   tag       on LAST only (tag_len 0 on the others).
 *   tag_off   on a FIRST that is not LAST: the stream's parameter, 0 if
 *             the algorithm takes none: CCM's message length in bytes
 *             (the pieces must add up to it), XTS's data-unit length
 *             (each unit's tweak is the IV plus the unit's index as a
 *             128-bit little-endian number; pieces other than the last
 *             hold whole units, the last a remainder of 0 or >= 16
 *             bytes; at most CRD_XTS_STREAM_UNITS_MAX units a piece).
 *             With FIRST and LAST both, the op's own length.
 *
 * A clone (CRD_SQE_F_STREAM | CRD_SQE_F_CLONE, neither FIRST nor LAST)
 * is a piece of no data (len, iv, aad, tag 0) of the stream sl_off names
 * that opens a second stream, whose handle is in tag_off, in the same
 * state and direction, on the op's session: the source's, or another of
 * the same algorithm, engine and tag length (else BAD_PARAM), normally
 * with the same key. From there the two go on independently (EVP's
 * dupctx of a digest, MAC or AEAD in mid-message). The new handle's slot
 * must be free (else STREAM_BUSY); the new stream counts towards the
 * client's bound (STREAM_LIMIT). On these three errors the source goes
 * on; any other (a clone with data, say) ends it, as for any piece.
 *
 * Any error in a piece of an open stream (bad tag included) ends that
 * stream and wipes its state; later pieces fail with NO_STREAM. A FIRST
 * on an open slot fails with STREAM_BUSY and leaves that stream alone.
 * Scatter-gather and session-less pieces are refused (BAD_DESC).
 */
enum {
	CRD_STREAMS_PER_QUEUE = 32,
	CRD_STREAM_SLOT_MASK = 0xff,
	/* An XTS piece holds at most this many data units (the last one
	 * counted even when short): each unit is a cipher call of its own,
	 * so a 16 MiB piece of 16-byte units would cost the daemon some 60
	 * times what its bytes do. */
	CRD_XTS_STREAM_UNITS_MAX = 4096,
};
static inline unsigned crd_stream_slot(uint32_t handle)
{
	return handle & CRD_STREAM_SLOT_MASK;
}

/* The number of the piece after piece n of a stream (1 after FIRST's 0),
 * skipping 0, which means "not numbered". */
static inline uint32_t crd_stream_piece_next(uint32_t n)
{
	return n + 1 ? n + 1 : 1;
}

/* A piece's number (iv[0..3]; 0 on FIRST and on clones' new streams). */
static inline uint32_t crd_stream_piece_no(const uint8_t iv[4])
{
	return crd_le32(iv);
}

enum {
	CRD_SEG_MAX = 64, /* segments per list */
	CRD_KEY_MAX = 64, /* cipher key bytes (XTS-256: two 32-byte halves) */
	CRD_AUTH_KEY_MAX = 64, /* HMAC key bytes */
	/* A MAC key through a session (CreateSession): HMAC takes keys of
	 * any length and hashes those longer than a block (RFC 2104). In a
	 * session-less op's struct the limit is CRD_KEY_MAX. */
	CRD_MAC_KEY_MAX = 256,
};

/* One scatter-gather segment: [off, off + len) in the arena. Segments of
 * one list must not overlap; a destination list must be identical to the
 * source list (in place) or share no byte with it. */
struct crd_seg {
	uint32_t off;
	uint32_t len;
};
_Static_assert(sizeof(struct crd_seg) == 8, "seg size");

/*
 * Parameters of a session-less op, in the arena at sqe.sl_off. The daemon
 * copies the struct, expands the key for this op alone, and wipes its
 * copy; the client owns (and should wipe) the arena bytes.
 */
struct crd_sessionless {
	uint8_t alg; /* enum crd_alg */
	uint8_t key_len;
	uint8_t auth_key_len; /* authenc only */
	uint8_t tag_len;      /* 0 = the algorithm's default */
	uint32_t reserved;    /* must be zero */
	uint8_t key[CRD_KEY_MAX];
	uint8_t auth_key[CRD_AUTH_KEY_MAX];
};
_Static_assert(sizeof(struct crd_sessionless) == 136, "sessionless size");

/* crd_cqe.status: 0 on success, else a negative errno or one of these
 * (the list, with what each means, is include/cryptod/algs.h). */
enum crd_status {
	CRD_ST_OK = 0,
#define CRD_X(id, val, msg) CRD_ST_##id = val,
	CRD_STATUSES(CRD_X)
#undef CRD_X
};

/*
 * Submission entry, 64 bytes, written by the client, copied once by the
 * daemon. All data references are (offset, length) into the arena.
 * dst_off == src_off (and the same SGL flag) means in place; otherwise
 * source and destination must not overlap. The tag is read from (decrypt,
 * verify) or written to (encrypt, generate) [tag_off, tag_off + tag_len).
 * For GMAC the data is authenticated only and nothing is written but the
 * tag.
 */
struct crd_sqe {
	uint64_t user_data; /* returned untouched in the completion */
	uint32_t session;   /* session id, per connection; 0 if sessionless */
	uint8_t op;	    /* enum crd_op */
	uint8_t flags;	    /* CRD_SQE_F_* */
	uint8_t iv_len;	    /* IV bytes: in iv[], or in the arena */
	uint8_t tag_len;    /* bytes of tag; 0 = the session's */
	uint32_t src_off;   /* data, or its crd_seg list (CRD_SQE_F_SRC_SGL) */
	uint32_t len;	    /* payload length (src and dst): bytes, or bits
			     * (crd_alg_bit_len) */
	uint32_t dst_off;   /* data, or its crd_seg list (CRD_SQE_F_DST_SGL) */
	uint32_t aad_off;
	uint32_t aad_len;
	uint32_t tag_off;  /* a stream's FIRST piece: its parameter */
	uint16_t src_nseg; /* segments, with CRD_SQE_F_SRC_SGL; else 0 */
	uint16_t dst_nseg; /* segments, with CRD_SQE_F_DST_SGL; else 0 */
	uint32_t sl_off;   /* struct crd_sessionless, with the flag; a
			    * stream piece's handle; else 0 */
	/* The IV, or its arena offset (CRD_SQE_F_ARENA_IV) */
	uint8_t iv[CRD_IV_MAX];
};
_Static_assert(sizeof(struct crd_sqe) == 64, "sqe is one cache line");
_Static_assert(offsetof(struct crd_sqe, iv) == 48, "sqe layout");

/* Completion entry, 16 bytes, written by the daemon in submission order. */
struct crd_cqe {
	uint64_t user_data;
	int32_t status; /* enum crd_status or -errno */
	uint32_t len;	/* bytes written to the destination */
};
_Static_assert(sizeof(struct crd_cqe) == 16, "cqe size");

/* A u32 index alone on its cache line. */
struct crd_idx {
	uint32_t k;
	uint32_t pad_[CRD_CACHELINE / 4 - 1];
};
_Static_assert(sizeof(struct crd_idx) == CRD_CACHELINE, "idx line");

/* crd_region_hdr.kflags_* bits */
#define CRD_F_NEED_WAKEUP 1u /* the reader sleeps: signal the doorbell */
#define CRD_F_DEAD 2u	     /* daemon side: queue is no longer served */

/*
 * crd_region_hdr.features bits: what the daemon promises for this queue,
 * written with line 0 (before the fd is passed, never again).
 *
 * CRD_FEAT_SQ_MEMBARRIER: a worker that sets daemon.kflags'
 * NEED_WAKEUP to sleep runs membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)
 * before it looks at the tail again (or it never sleeps). A client
 * process registered for such barriers
 * (MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) may then store its tail and
 * load the flag with no fence between them: either the barrier came
 * after its store, and the worker sees the tail, or before its load, and
 * it sees the flag. The fence cost a cross-core transfer at every
 * publish.
 */
#define CRD_FEAT_SQ_MEMBARRIER 1u
/*
 * CRD_FEAT_CQE_SLOT: every completion slot's status starts as
 * CRD_CQE_EMPTY (a status no completion carries), and the daemon writes
 * each completion as one aligned 16-byte store, after the op's output
 * and its counters. A client that writes CRD_CQE_EMPTY back into a
 * slot's status once it has read the slot (before it publishes a head
 * past it) may then poll the slot at its head instead of the cq tail:
 * one line from the worker's core per completion instead of two in
 * series (the tail's, then the entry's). Slots still fill out of order
 * behind the tail when several workers serve the queue, and the head a
 * client publishes must not pass the tail it has read: a head past what
 * the daemon posted is a lie (daemon/data/order.c), and ends the queue.
 * A completion read frees its op's submission slot even before
 * ksq_head passes it: the daemon copies an entry before it claims it,
 * and the sibling worker that holds the lock publishing ksq_head may not
 * have run since. The daemon claims a slot's next lap only once its own
 * head has passed the last one.
 */
#define CRD_FEAT_CQE_SLOT 2u
#define CRD_CQE_EMPTY INT32_MIN

struct crd_region_hdr {
	/* Line 0: geometry, written by the daemon before the fd is passed and
	 * never again. Informational for the client; the daemon keeps its own
	 * private copy and never reads these back. */
	uint32_t magic;
	uint32_t abi_version;
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint64_t sq_off;
	uint64_t cq_off;
	uint64_t arena_off;
	uint64_t arena_size;
	uint64_t region_size;
	uint32_t features; /* CRD_FEAT_* (0 from a daemon before them) */
	uint8_t pad0_[CRD_CACHELINE - 60];

	struct crd_idx ksq_tail; /* client produces */
	struct crd_idx ksq_head; /* daemon consumes */
	struct crd_idx kcq_tail; /* daemon produces */
	struct crd_idx kcq_head; /* client consumes */

	/* Written by the daemon only. */
	struct {
		uint32_t
			kflags; /* CRD_F_NEED_WAKEUP: worker sleeps on sq doorbell */
		/* The bytes the daemon's wake-up rings for the client's
		 * NEED_WAKEUP have put in its doorbell (free-running;
		 * counted after each is sent): whether the client's last
		 * arm has been answered, and, beside the bytes it has read,
		 * whether its doorbell holds one. */
		uint32_t krung;
		uint32_t pad_[CRD_CACHELINE / 4 - 2];
	} daemon;

	/* Written by the client only. */
	struct {
		uint32_t
			kflags; /* CRD_F_NEED_WAKEUP: client sleeps on cq doorbell */
		/* The arm count: 0, or bumped (skipping 0) each time the
		 * client sets NEED_WAKEUP to sleep. The daemon rings once
		 * per value: a post that finds the flag set rings unless it
		 * (or another) already rang for this karm, so a client whose
		 * jobs pause many times per wake-up costs one ring, not one
		 * per completion. 0 (a client that does not count, as
		 * before this field): every post rings while the flag is
		 * set. daemon/data/worker.c's worker_post rings. */
		uint32_t karm;
		uint64_t kretries; /* enqueue refused, ring full (for stats) */
		uint64_t pad_[CRD_CACHELINE / 8 - 2];
	} client;
};
_Static_assert(offsetof(struct crd_region_hdr, ksq_tail) == 64, "hdr layout");
_Static_assert(offsetof(struct crd_region_hdr, kcq_head) == 256, "hdr layout");
_Static_assert(offsetof(struct crd_region_hdr, daemon) == 320, "hdr layout");
_Static_assert(offsetof(struct crd_region_hdr, client) == 384, "hdr layout");
_Static_assert(sizeof(struct crd_region_hdr) <= CRD_HDR_SIZE, "hdr fits");

/* ---- Index arithmetic shared by both sides (pure functions) ---- */

static inline int crd_is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* Entries between a consumer and a producer index. */
static inline uint32_t crd_ring_used(uint32_t head, uint32_t tail)
{
	return tail - head;
}

/* Free slots; callers must first check used <= entries (indices may lie). */
static inline uint32_t crd_ring_free(uint32_t head, uint32_t tail,
				     uint32_t entries)
{
	return entries - (tail - head);
}

/* Signed sequence comparison: a before b. */
static inline int crd_seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* Round v up to a multiple of the power of two a (64-bit, no overflow for
 * the bounded sizes used here). */
static inline uint64_t crd_align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* ---- Memory ordering helpers (C11 atomics on plain shared fields) ---- */

/* Publish an index: orders every earlier store (entries, data) before it.
 * Pairs with crd_load_acquire() on the other side. */
static inline void crd_store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Read the other side's index: orders later loads of the entries it
 * covers after it. Pairs with crd_store_release(). */
static inline uint32_t crd_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline uint32_t crd_load_relaxed(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void crd_store_relaxed(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/*
 * The need-wakeup handshake (Dekker): the producer stores its index, then
 * loads the peer's NEED_WAKEUP; the sleeper sets NEED_WAKEUP, then re-loads
 * the index. With all four accesses sequentially consistent, at least one
 * side sees the other's store, so no wake-up is lost. (Sequentially
 * consistent accesses rather than a fence: ThreadSanitizer models them.)
 */
static inline void crd_store_seq_cst(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static inline uint32_t crd_load_seq_cst(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/* Keeps the compiler from moving accesses across it; the CPU may (the
 * peer's membarrier orders them: CRD_FEAT_SQ_MEMBARRIER). */
static inline void crd_compiler_barrier(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void crd_flag_set(uint32_t *p, uint32_t bit)
{
	__atomic_fetch_or(p, bit, __ATOMIC_SEQ_CST);
}

static inline void crd_flag_clear(uint32_t *p, uint32_t bit)
{
	__atomic_fetch_and(p, ~bit, __ATOMIC_RELAXED);
}

#endif /* CRYPTOD_RING_ABI_H */
