/* SPDX-License-Identifier: MIT */
/* Scanning a process's memory for runs of secret bytes (memscan.h). */
#include "memscan.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The WINDOW-byte runs of one key, as sorted words, with a bitmap of
 * their low 16 bits to turn most positions away with one load. */
struct windows {
	uint64_t w[128];
	size_t n;
	uint8_t bits[65536 / 8];
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void windows_of(struct windows *t, const uint8_t *key, size_t n)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i + WINDOW <= n && t->n < 128; i++) {
		uint64_t v;
		memcpy(&v, key + i, sizeof(v));
		t->w[t->n++] = v;
		t->bits[(v & 0xffff) >> 3] |= 1u << (v & 7);
	}
	qsort(t->w, t->n, sizeof(t->w[0]), cmp_u64);
}

static int windows_has(const struct windows *t, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	if (!(t->bits[(v & 0xffff) >> 3] & (1u << (v & 7))))
		return 0;
	return bsearch(&v, t->w, t->n, sizeof(v), cmp_u64) != NULL;
}

/* Occurrences of any WINDOW bytes in a row of key[0..n) in every
 * readable mapping of pid; -1 when the memory cannot be read. */
long scan_windows(pid_t pid, const uint8_t *key, size_t n)
{
	static struct windows t;
	windows_of(&t, key, n);
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *maps = fopen(path, "r");
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int mem = open(path, O_RDONLY);
	if (!maps || mem < 0) {
		if (maps)
			fclose(maps);
		if (mem >= 0)
			close(mem);
		return -1;
	}
	long hits = 0;
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap + WINDOW);
	while (buf && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perm[8];
		/* Mappings of a GiB and more are sanitizer shadow memory
		 * (terabytes, mostly unbacked): no key lives there, and
		 * reading them would take the test's whole time. */
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 ||
		    perm[0] != 'r' || strstr(line, "[vvar]") ||
		    strstr(line, "[vsyscall]") || hi - lo >= (1ul << 30))
			continue;
		for (unsigned long a = lo; a < hi; a += cap) {
			size_t want =
				hi - a < cap + WINDOW ? hi - a : cap + WINDOW;
			ssize_t got = pread(mem, buf, want, (off_t)a);
			/* Positions past cap are the next chunk's. */
			for (ssize_t i = 0;
			     i + WINDOW <= got && (size_t)i < cap; i++)
				hits += windows_has(&t, buf + i);
		}
	}
	free(buf);
	fclose(maps);
	close(mem);
	return hits;
}
