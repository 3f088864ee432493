/* SPDX-License-Identifier: MIT */
/*
 * Named keys: keys that clients use by name and never see. The registry
 * maps a name to its versions (the newest resolves for new sessions; an
 * older one only when asked for by number), its algorithm, usage rules,
 * uid/gid ACL, exportable flag and counters. Key bytes live only in
 * ks_map() memory (locked, undumpable), one mapping per key, wiped on
 * delete, on retiring a version and at shutdown. Every change is written
 * to the key directory (keyfile.h) before it takes effect in memory, so
 * what a restart loads is what the last successful request left.
 *
 * A session opened on a key takes its own copy of the version's bytes
 * (its engine's key schedule, in a keystore slot) and a reference on the
 * key for the counters: it keeps working after a rotation, retirement or
 * delete until it closes; the registry's copy is wiped at once.
 *
 * Control thread only, except nk_account(), which workers call.
 * Errors are -errno: -ENOENT no such key or version, -EEXIST name taken,
 * -EACCES the uid/gids are not on the key's ACL, -EPERM a usage the key
 * does not allow or an export of a non-exportable key, -ENOSPC registry
 * full, -EINVAL bad name/algorithm/length/flags.
 */
#ifndef CRYPTOD_NAMEDKEYS_H
#define CRYPTOD_NAMEDKEYS_H

#include <cryptod/compiler.h>

#include "keyfile.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum { NK_MAX_KEYS = 1024 };

/* What a caller says about a new key; the versions are the registry's. */
struct nk_spec {
	const char *name;
	uint16_t alg;	  /* crd_alg number */
	uint16_t key_len; /* bytes; a key pair's: its slot, kf_pk_slot_len() */
	uint32_t usage;	  /* KF_USE_* */
	uint8_t exportable;
	uint8_t nuids, ngids;
	const uint32_t *uids, *gids;
};

struct nk_key; /* opaque */

/* A key's public facts, for list/show: never any key byte. */
struct nk_info {
	char name[KF_NAME_MAX + 1];
	uint16_t alg, key_len;
	uint32_t usage;
	uint8_t exportable, nuids, ngids, nversions;
	uint32_t uids[KF_MAX_IDS], gids[KF_MAX_IDS];
	uint32_t versions[KF_MAX_VERSIONS]; /* oldest first */
	uint64_t created[KF_MAX_VERSIONS];
	uint64_t ops, bytes, last_use; /* last_use: seconds, 0 never */
};

/*
 * Open dir (created 0700 if missing) and load every "<name>.key" in it
 * under kek (copied into locked memory). A file that does not load is
 * logged with its name and reason and skipped; stale ".<name>.tmp" files
 * from an interrupted write are removed. Returns the number loaded.
 */
CRD_MUST_CHECK int nk_init(const char *dir, const uint8_t kek[KF_KEK_LEN]);
/* Wipe and release every key; nk_init may be called again. */
void nk_fini(void);
unsigned nk_count(void);

/*
 * Create with random bytes (getrandom), or import the given bytes (an
 * unwrap is an import of the unwrapped bytes). A key pair (crd_alg_pkey)
 * is always imported: its PKCS#8 DER, len <= s->key_len (the slot), made
 * or checked by pkeys.c. The registry checks only
 * that the spec is well-formed (name, an algorithm nk_alg_ok() takes,
 * len == s->key_len, usage bits, ACL sizes); whether the engines and the
 * key policy take the key and its usage rules hold is its caller's one
 * check (keyreq.c key_check()).
 */
CRD_MUST_CHECK int nk_create(const struct nk_spec *s);
CRD_MUST_CHECK int nk_import(const struct nk_spec *s, const uint8_t *key,
			     size_t len);
/* Does alg take a named key (one key: an AEAD, a cipher, a MAC or a key
 * pair)? */
int nk_alg_ok(unsigned alg);
/* A new random version; the oldest is retired (wiped) when the key
 * already holds KF_MAX_VERSIONS. Returns the new version number. */
CRD_MUST_CHECK int nk_rotate(const char *name);
/* The same with the new version's bytes given (a key pair's new DER). */
CRD_MUST_CHECK int nk_rotate_to(const char *name, const uint8_t *key,
				size_t len);
CRD_MUST_CHECK int nk_delete(const char *name);
/* RFC 5649 wrap of a version (0: newest) of an exportable key under
 * wkek (a key pair's PKCS#8 DER); returns the blob length (out_cap >=
 * KF_PKEY_MAX + 16 suffices). */
CRD_MUST_CHECK int nk_wrap(const char *name, uint32_t version,
			   const uint8_t *wkek, size_t wkek_len, uint8_t *out,
			   size_t out_cap);
/* A key pair's version (0: newest) public half, SubjectPublicKeyInfo DER,
 * into out: its length; -EINVAL for a key that is no key pair. No ACL
 * check: the caller's. */
CRD_MUST_CHECK int nk_pub(const char *name, uint32_t version, uint8_t *out,
			  size_t cap);

CRD_MUST_CHECK int nk_info(const char *name, struct nk_info *out);
/* The i-th key's name, or NULL past the end (for listing). */
const char *nk_name_at(unsigned i);

/* May uid (with primary gid and supplementary groups) use the key? */
int nk_allowed(const char *name, uid_t uid, gid_t gid, const gid_t *groups,
	       unsigned ngroups);

/*
 * For session creation: check the ACL and that the key allows every
 * usage in want (KF_USE_*), then copy version (0: newest) into key
 * (kf_key_max() bytes of its algorithm, KF_PKEY_MAX always suffices: the
 * caller's locked memory; a key pair's PKCS#8 DER without its slot's
 * padding) and take a reference.
 * On success *ref, *alg, *key_len and *version are set.
 */
CRD_MUST_CHECK int nk_open(const char *name, uint32_t version, uid_t uid,
			   gid_t gid, const gid_t *groups, unsigned ngroups,
			   uint32_t want, uint8_t *key, uint16_t *key_len,
			   uint16_t *alg, uint32_t *version_out,
			   struct nk_key **ref);
/* Drop a reference from nk_open; the last one frees a deleted key. */
void nk_close(struct nk_key *ref);
/* Count a burst on the key (any thread; relaxed atomics). */
void nk_account(struct nk_key *ref, uint64_t ops, uint64_t bytes);

#endif
