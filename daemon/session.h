/* SPDX-License-Identifier: MIT */
/*
 * Sessions: an algorithm, an engine and expanded key material. Each lives
 * in one locked keystore slot and belongs to one client connection.
 * Workers read sessions through the client's table (acquire loads);
 * the control thread unpublishes, waits for a grace period
 * (worker_synchronize), then wipes.
 */
#ifndef CRYPTOD_SESSION_H
#define CRYPTOD_SESSION_H

#include <stdint.h>

#include "engine.h"
#include "keystore.h"

struct session {
	uint32_t id;
	uint8_t alg;	 /* enum alg */
	uint8_t tag_len; /* bytes; 0 for ALG_NULL */
	uint8_t key_len; /* bytes of the raw key (the raw key is not kept) */
	uint8_t eng_idx; /* engine registry index */
	const struct engine *eng;
	/* Engine-private expanded key (ipsec-mb gcm_key_data, ...). Wiped
	 * together with the slot. */
	_Alignas(64) uint8_t key[KS_SLOT_SIZE - 64];
};
_Static_assert(sizeof(struct session) <= KS_SLOT_SIZE, "session fits a slot");

/*
 * Create a session from a raw key; the caller wipes its own copy of the
 * key. Returns 0 and *out, or -errno: -EINVAL bad key/tag length,
 * -ENOSPC key store full, -ENOENT/-EOPNOTSUPP/-ENODEV engine choice.
 */
int session_create(enum alg alg, const uint8_t *key, size_t key_len,
		   unsigned tag_len, const char *engine, struct session **out);
/* Wipe and free; the caller has ensured no worker can still see it. */
void session_destroy(struct session *s);

#endif
