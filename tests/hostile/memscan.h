/* SPDX-License-Identifier: MIT */
/*
 * Key-hygiene tests' scanner: occurrences, in the memory of a process
 * (through /proc/PID/mem), of any WINDOW bytes in a row of a secret. Any
 * run counts: the first bytes of a freed heap block are overwritten by
 * the allocator's own pointers, so a scan for a secret's head alone would
 * miss the rest of it. What is read, and what is not (a ThreadSanitizer
 * runtime's shadow, pages never backed), is explained in memscan.c.
 */
#ifndef CRYPTOD_TEST_MEMSCAN_H
#define CRYPTOD_TEST_MEMSCAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
	WINDOW = 8,
	MEMSCAN_MAX_LEN = 135, /* 128 windows */
	MEMSCAN_MAX_NEEDLES = 16,
};

/* One secret to look for: key[0..len), WINDOW <= len <= MEMSCAN_MAX_LEN.
 * hits is memscan()'s answer: positions where one of its windows is. */
struct memscan_needle {
	const uint8_t *key;
	size_t len;
	long hits;
};

/* One pass over pid's memory for every needle at once (n <=
 * MEMSCAN_MAX_NEEDLES); prints what it read and how long it took.
 * Returns 0, or -errno when the memory cannot be read. */
int memscan(pid_t pid, struct memscan_needle *nd, unsigned n);

/* memscan() again and again until no needle is found, for at most ms:
 * what the daemon wipes once it notices a hang-up, or once a worker next
 * passes by, is not left behind. Returns as memscan(); the hits are the
 * last scan's. */
int memscan_until_clean(pid_t pid, struct memscan_needle *nd, unsigned n,
			unsigned ms);

/* Hits of key[0..n) in pid's memory; -1 when unreadable. */
long scan_windows(pid_t pid, const uint8_t *key, size_t n);

#endif
