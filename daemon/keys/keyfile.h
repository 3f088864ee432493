/* SPDX-License-Identifier: MIT */
/*
 * The on-disk form of one named key: one file per key, "<name>.key" in
 * the key directory, holding every live version of it, so that create,
 * rotate and delete are each one atomic rename or unlink and a crash
 * leaves the whole key old or the whole key new, never a mix.
 *
 * File (all integers big-endian):
 *   header, 32 bytes, authenticated as the AAD:
 *     0  magic "CRYPTODK"
 *     8  u16 format version (KF_FORMAT_VERSION)
 *    10  u16 header length (32)
 *    12  u32 sealed record length (n)
 *    16  12-byte GCM nonce (random per write)
 *    28  u32 reserved, zero
 *   32  n bytes: the record, AES-256-GCM under the KEK
 *   32+n  16-byte tag; the file ends there
 * Record (plaintext, only ever in ks_map memory):
 *   u8 name length, name; u16 algorithm (crd_alg number); u16 key bytes
 *   (a key pair's: its slot, pkeys.h: each version is its PKCS#8 DER
 *   padded with zeros to that length);
 *   u32 usage (KF_USE_*); u8 exportable; u8 n, n * u32 uids; u8 n,
 *   n * u32 gids; u8 versions, then per version: u32 version number,
 *   u64 created (seconds since the epoch), the key bytes.
 * Every field is checked on read; the name inside must match the file's.
 * Writes go to ".<name>.tmp" in the same directory (mode 0600), then
 * fsync, rename, fsync of the directory; the loader ignores and removes
 * dot files.
 *
 * Errors are -errno; a function that takes why/why_len also leaves a
 * reason there (never any key byte) for the caller to log with the path.
 */
#ifndef CRYPTOD_KEYFILE_H
#define CRYPTOD_KEYFILE_H

#include <cryptod/compiler.h>
#include <cryptod/ring_abi.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum kf_limits {
	KF_FORMAT_VERSION = 1,
	KF_HEADER_LEN = 32,
	KF_TAG_LEN = 16,
	KF_KEK_LEN = 32, /* AES-256 */
	KF_NAME_MAX = 64,
	KF_KEY_MAX = 256, /* as CTL_KEY_MAX: a cipher's or MAC's key */
	/* A key pair's slot (kf_pk_slot_len()): RSA-4096's PKCS#8 DER is about
	 * 2.4 KB; at most CTL_PKEY_MAX */
	KF_PKEY_MAX = 2432,
	KF_MAX_IDS = 16, /* uids, and gids, per key */
	KF_MAX_VERSIONS = 16,
	/* the largest record (16 versions of RSA-4096), rounded up to
	 * pages; files of the 8192-byte bound of before are all under it */
	KF_RECORD_MAX = 40960,
	KF_FILE_MAX = KF_HEADER_LEN + KF_RECORD_MAX + KF_TAG_LEN,
};

enum kf_usage {
	KF_USE_ENCRYPT = 1u << 0,
	KF_USE_DECRYPT = 1u << 1,
	KF_USE_MAC_GENERATE = 1u << 2,
	KF_USE_MAC_VERIFY = 1u << 3,
	KF_USE_SIGN = 1u << 4, /* key pairs (pk_usage_allowed()) */
	KF_USE_VERIFY = 1u << 5,
	KF_USE_DERIVE = 1u << 6,
	KF_USE_ALL = 0x7fu,
};

/* The op (enum crd_op) each usage bit allows: a MAC's generate and
 * verify are its encrypt and decrypt; the one list both directions are
 * read from. */
#define KF_USE_OPS(X)                                                          \
	X(ENCRYPT, ENCRYPT)                                                    \
	X(DECRYPT, DECRYPT)                                                    \
	X(MAC_GENERATE, ENCRYPT)                                               \
	X(MAC_VERIFY, DECRYPT) X(SIGN, SIGN) X(VERIFY, VERIFY) X(DERIVE, DERIVE)

/* The ops (bits 1 << enum crd_op) the usage bits allow. */
static inline unsigned kf_usage_ops(uint32_t usage)
{
	unsigned m = 0;
#define KF_X_(u, op)                                                           \
	if (usage & KF_USE_##u)                                                \
		m |= 1u << CRD_OP_##op;
	KF_USE_OPS(KF_X_)
#undef KF_X_
	return m;
}

/* The usage bits of a key pair that allow the ops (1 << enum crd_op):
 * the inverse, without the MAC's bits. */
static inline uint32_t kf_pk_ops_usage(unsigned ops)
{
	uint32_t u = 0;
#define KF_X_(use, op)                                                         \
	if (ops >> CRD_OP_##op & 1)                                            \
		u |= KF_USE_##use;
	KF_USE_OPS(KF_X_)
#undef KF_X_
	return u & ~(uint32_t)(KF_USE_MAC_GENERATE | KF_USE_MAC_VERIFY);
}

struct kf_version {
	uint32_t version;
	uint64_t created;
	uint8_t *key; /* key_len bytes; not owned (see kf_record) */
};

struct kf_record {
	char name[KF_NAME_MAX + 1];
	uint16_t alg;
	uint16_t key_len;
	uint32_t usage;
	uint8_t exportable;
	uint8_t nuids, ngids, nversions;
	uint32_t uids[KF_MAX_IDS];
	uint32_t gids[KF_MAX_IDS];
	struct kf_version v[KF_MAX_VERSIONS]; /* oldest first */
	/* kf_read: the key bytes live here, ks_map()ped, KF_RECORD_MAX
	 * bytes; kf_record_fini() wipes it. NULL for a record the caller
	 * built over its own key memory. */
	uint8_t *secret;
};

/* The bytes a version of a key pair of alg takes in the store: a bound
 * on its PKCS#8 DER (at most KF_PKEY_MAX); 0 for no key-pair row. */
unsigned kf_pk_slot_len(unsigned alg);

/* The longest key (its slot, for a key pair) a record of alg holds. */
unsigned kf_key_max(unsigned alg);

/* [A-Za-z0-9][A-Za-z0-9._-]*, at most KF_NAME_MAX bytes. */
int kf_name_ok(const char *name);

/* Leave a reason in why (len bytes; NULL or 0: none): never a key byte. */
void kf_why(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Seal rec under kek and replace dir_fd/<name>.key atomically. */
CRD_MUST_CHECK int kf_write(int dir_fd, const struct kf_record *rec,
			    const uint8_t kek[KF_KEK_LEN]);

/*
 * Read and open dir_fd/file. On success rec is complete and owns its
 * key memory (kf_record_fini); on failure rec holds nothing and why says
 * what is wrong: -EBADMSG for a file that is not a whole, authentic key
 * file (truncated, extended, corrupted, wrong KEK, malformed), or the
 * errno of the I/O.
 */
CRD_MUST_CHECK int kf_read(int dir_fd, const char *file,
			   const uint8_t kek[KF_KEK_LEN], struct kf_record *rec,
			   char *why, size_t why_len);

/* kf_read on the bytes of a file named file, already read. */
CRD_MUST_CHECK int kf_parse(const uint8_t *buf, size_t len, const char *file,
			    const uint8_t kek[KF_KEK_LEN],
			    struct kf_record *rec, char *why, size_t why_len);

/* The record parser alone, on an opened record (tests and fuzzing): key
 * pointers point into plain; rec owns nothing (no kf_record_fini). */
CRD_MUST_CHECK int kf_record_parse(uint8_t *plain, size_t n,
				   struct kf_record *rec, char *why,
				   size_t why_len);

/* Unlink dir_fd/<name>.key and fsync the directory. */
CRD_MUST_CHECK int kf_delete(int dir_fd, const char *name);

/* Wipe the record's key memory and its fields. */
void kf_record_fini(struct kf_record *rec);

/*
 * The key-encryption key from a file: 32 raw bytes, or 64 hex digits
 * and an optional newline. A plain file (credential 0) must be a regular
 * file owned by owner (root) and not readable or writable by group or
 * others. A systemd credential (credential 1) may be owned by owner (the
 * daemon's uid) or by root: systemd writes credentials root-owned 0400
 * with an ACL entry for the service user, which shows as a group read
 * bit; only bits for others are refused there. Otherwise -EPERM and why
 * says which.
 */
CRD_MUST_CHECK int kf_kek_read(const char *path, uid_t owner, int credential,
			       uint8_t kek[KF_KEK_LEN], char *why,
			       size_t why_len);

/*
 * The key-encryption key from the kernel keyring: a "user" key with this
 * description, found by request_key(2) in the daemon's thread, process,
 * session (and through it user) keyrings, read with KEYCTL_READ; the same
 * two forms as a file. "logon" keys cannot be read from user space, so
 * they cannot serve. -ENOKEY (why: not found) or -EINVAL (bad payload).
 */
CRD_MUST_CHECK int kf_kek_keyring(const char *desc, uint8_t kek[KF_KEK_LEN],
				  char *why, size_t why_len);

#endif
