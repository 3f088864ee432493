/* SPDX-License-Identifier: MIT */
/*
 * Locked memory for key material. One mapping, made at start-up, locked in
 * RAM (mlock), excluded from core dumps (MADV_DONTDUMP), carved into fixed
 * slots. A slot is wiped when it is freed and the whole map is wiped at
 * shutdown. Allocation and free happen on the control thread only.
 */
#ifndef CRYPTOD_KEYSTORE_H
#define CRYPTOD_KEYSTORE_H

#include <cryptod/compiler.h>

#include <stddef.h>

enum { KS_SLOT_SIZE = 1408 }; /* a session with the largest expanded key */

CRD_MUST_CHECK int ks_init(unsigned nslots);
void ks_fini(void);
/* 64-byte aligned, zeroed slot, or NULL when full. */
void *ks_alloc(void);
/* Wipes and releases. NULL is a no-op. */
void ks_free(void *slot);
unsigned ks_in_use(void);
int ks_locked(void);

/*
 * A private mapping of len bytes (rounded up to pages), zeroed, excluded
 * from core dumps and locked when the rlimit allows: for key material
 * that is not a session (named keys, their serialised records). Any
 * thread; NULL (errno set) when the mapping fails. ks_unmap wipes it and
 * takes the same len; NULL is a no-op.
 */
void *ks_map(size_t len);
void ks_unmap(void *p, size_t len);

#endif
