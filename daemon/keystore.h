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

#endif
