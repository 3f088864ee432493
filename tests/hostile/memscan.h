/* SPDX-License-Identifier: MIT */
/*
 * Key-hygiene tests' scanner: occurrences, in every readable mapping of a
 * process (through /proc/PID/mem), of any WINDOW bytes in a row of a
 * secret. Any run counts: the first bytes of a freed heap block are
 * overwritten by the allocator's own pointers, so a scan for a secret's
 * head alone would miss the rest of it.
 */
#ifndef CRYPTOD_TEST_MEMSCAN_H
#define CRYPTOD_TEST_MEMSCAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum { WINDOW = 8 };

/* Hits of key[0..n) (n <= 135) in pid's memory; -1 when unreadable. */
long scan_windows(pid_t pid, const uint8_t *key, size_t n);

#endif
