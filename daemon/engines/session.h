/* SPDX-License-Identifier: MIT */
/*
 * Sessions: an algorithm, an engine and expanded key material. Each lives
 * in one locked keystore slot and belongs to one client connection.
 * Workers read sessions through the client's table (session_table_get);
 * the control thread unpublishes, and wipes once a grace period has
 * passed (grace.h; it never waits for one). Session-less ops build a session in a
 * worker's own locked scratch slot for one pass.
 */
#ifndef CRYPTOD_SESSION_H
#define CRYPTOD_SESSION_H

#include <cryptod/compiler.h>

#include <stdint.h>

#include "bounds.h"
#include "engine.h"
#include "keystore.h"

struct session {
	uint32_t id;
	/* Unique over the daemon's life (ids and slots are reused): what a
	 * stream checks its session by. Set by session_create. */
	uint64_t serial;
	uint8_t alg;	  /* enum crd_alg */
	uint8_t tag_len;  /* bytes; 0 when the algorithm has no tag */
	uint16_t key_len; /* bytes of the raw key (HMAC: up to 256) */
	const struct engine *eng;
	const struct alg_cap *cap; /* the engine's limits for alg */
	uint32_t iv_ok;	 /* bit n set: an n-byte IV is in cap->iv (n <= 16) */
	uint8_t eng_idx; /* engine registry index */
	/* bit n set: op n (enum crd_op) may run (a named key's usage
	 * rules; for a key the client gave, encrypt and decrypt, or the ops
	 * a key pair's row takes: crd_alg_pk_ops(), and of those only
	 * verify and encrypt for a public key alone) */
	uint8_t op_mask;
	/* The named key this session was opened on (a reference, dropped by
	 * session_destroy), for its counters; NULL for a client's key. */
	struct nk_key *named;
	/* Added to by the workers once per run (relaxed), read by
	 * SessionsReply; ops that completed OK, their bytes, other
	 * failures, tag mismatches. Zero while the slot is fresh. */
	_Atomic uint64_t ops, bytes, errors, auth_failures;
	/* Engine-private key material (expanded keys, GHASH tables, HMAC
	 * pads, or the raw key for OpenSSL). Wiped with the slot. */
	_Alignas(64) uint8_t key[KS_SLOT_SIZE - 128];
};
_Static_assert(sizeof(struct session) <= KS_SLOT_SIZE, "session fits a slot");

/*
 * A connection's sessions: s[i] has id i + 1. The control thread
 * publishes and unpublishes with release stores; workers look sessions up
 * with session_table_get() (a queue points at its owner's table).
 */
struct session_table {
	struct session *s[MAX_SESSIONS_PER_CLIENT];
};

/* Worker-side lookup: NULL for ids the table does not hold. */
static inline const struct session *
session_table_get(const struct session_table *t, uint32_t id)
{
	if (id == 0 || id > MAX_SESSIONS_PER_CLIENT)
		return NULL;
	/* Pairs with the release store in client_session_add(). */
	return crd_load_acquire_n(&t->s[id - 1]);
}

struct session_params {
	unsigned alg; /* enum crd_alg */
	const uint8_t *key;
	size_t key_len;
	const uint8_t *auth_key;
	size_t auth_key_len;
	unsigned tag_len;   /* 0 = the algorithm's default */
	const char *engine; /* NULL or "" = fastest available */
	unsigned op_mask;   /* 0 = every op the row takes (struct session) */
};

/*
 * Key policy (cryptod.conf keys.*), read by the control thread and by
 * workers (session-less ops): the shortest key in bits (XTS: one half;
 * cipher, AEAD and MAC keys and authenc's auth_key alike; 0 = any), and
 * whether session-less ops are allowed. A change
 * applies to sessions created afterwards; existing sessions keep working.
 */
void session_policy_set(unsigned min_bits, int sessionless);
int session_sessionless_allowed(void);

_Static_assert(ENGINE_OP_N <= 8, "op_mask holds every op");

/*
 * Validate p against the chosen engine's capabilities and expand the key
 * into s (zeroed, locked memory the caller owns). wctx: the calling
 * worker's engine context for that engine, NULL on the control thread.
 * Returns 0, or -EINVAL (bad key/tag length), -ENOENT/-EOPNOTSUPP/-ENODEV
 * (engine choice), -EPERM (key shorter than the key policy allows).
 */
CRD_MUST_CHECK int session_setup(struct session *s,
				 const struct session_params *p,
				 void *const *wctx);

/* session_setup() into a fresh keystore slot. The caller wipes its own
 * copy of the key. Also -ENOSPC when the key store is full. */
CRD_MUST_CHECK int session_create(const struct session_params *p,
				  struct session **out);
/* Wipe and free; the caller has ensured no worker can still see it. */
void session_destroy(struct session *s);

#endif
