/* SPDX-License-Identifier: MIT */
/* Annotations for the daemon's and the library's internals (not
 * installed: the public header stays plain C). */
#ifndef CRYPTOD_COMPILER_H
#define CRYPTOD_COMPILER_H

/* The result says whether it worked (0 / a count, or -errno): ignoring it
 * is a bug the compiler should point at (s2n's must-use results). */
#define CRD_MUST_CHECK __attribute__((warn_unused_result))

/*
 * Atomic access to a field of any width, or a pointer, beside the ring
 * ABI's u32 helpers (ring_abi.h: crd_load_acquire, crd_store_release, ...)
 * and named as they are, with _n: the one vocabulary, so that no file
 * writes __atomic_* itself, and each use says what it pairs with. A
 * release store pairs with an acquire load of the same field.
 */
#define crd_load_acquire_n(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define crd_store_release_n(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define crd_load_relaxed_n(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define crd_store_relaxed_n(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
/* Set bits, ordering every earlier store before them. */
#define crd_fetch_or_release_n(p, v)                                           \
	__atomic_fetch_or((p), (v), __ATOMIC_RELEASE)
/* Add, ordering every earlier store before the sum. */
#define crd_fetch_add_release_n(p, v)                                          \
	__atomic_fetch_add((p), (v), __ATOMIC_RELEASE)
/* Swap in v; the old value. Only the value matters (one winner among
 * racing swappers), no other memory. */
#define crd_exchange_relaxed_n(p, v)                                           \
	__atomic_exchange_n((p), (v), __ATOMIC_RELAXED)

#endif
