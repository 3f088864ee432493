/* SPDX-License-Identifier: MIT */
/*
 * Reading the kernel's crypto registry: /proc/crypto text and the sysfs
 * entries kmod-shim's cryptoshim.ko publishes. Pure text parsing, so the
 * unit tests run on any kernel.
 */
#ifndef CRYPTOD_KPROC_H
#define CRYPTOD_KPROC_H

#include <stddef.h>

enum { KPROC_NAME_MAX = 128 };

/* Which implementations of an algorithm name to consider. */
enum kproc_want {
	KPROC_PLAIN,  /* anything but pcrypt(...) instances */
	KPROC_PCRYPT, /* only pcrypt(...) instances */
};

/*
 * In /proc/crypto text, the highest-priority driver whose "name" is name,
 * whose "type" is type ("aead", "skcipher"), that is not internal, not
 * failing its self-test, and matches want. Copies the driver name into
 * driver (size n) and its priority into *prio. 0, or -ENOENT.
 */
int kproc_find(const char *text, const char *name, const char *type,
	       enum kproc_want want, char *driver, size_t n, int *prio);

/* kproc_find() on the running kernel's /proc/crypto (unreadable: as if
 * empty, -ENOENT). */
int kproc_find_now(const char *name, const char *type, enum kproc_want want,
		   char *driver, size_t n, int *prio);

/* Read a whole (small) file into a NUL-terminated malloc'd buffer; NULL
 * with errno set on failure. */
char *kproc_read(const char *path);

#endif
