/* SPDX-License-Identifier: MIT */
/*
 * Scanning a process's memory for runs of secret bytes (memscan.h).
 *
 * What is read: every readable mapping in /proc/PID/maps, through
 * /proc/PID/mem, in one pass for all the needles of a call, except
 *  - [vvar] and [vsyscall]: the kernel's pages, not readable this way;
 *  - private anonymous mappings of 1 GiB and more: sanitizer shadow and
 *    allocator reserves (terabytes, mostly unbacked). The daemon's own
 *    largest are its staging buffers (CRD_OP_MAX_LEN); its clients'
 *    arenas (shared, up to CRD_ARENA_MAX_SIZE) are read whatever their
 *    size;
 *  - in a ThreadSanitizer process (recognised by its meta shadow mapped
 *    at 0x300000000000, LLVM 14's x86_64 Linux layout), the runtime's
 *    shadow [0x010000000000, 0x100000000000) and meta shadow
 *    [0x300000000000, 0x340000000000), whatever the size of the mapping.
 *    Shadow cells hold access history (thread slots, epochs, access
 *    sizes) for each 8 application bytes, meta cells hold indices of heap
 *    blocks and sync objects: no byte the program stores is ever copied
 *    there. The daemon touches much memory, so its shadow is hundreds of
 *    MiB of present pages: reading it was most of the scans' time;
 *  - in private anonymous mappings (no file, or [heap], [stack]), pages
 *    that /proc/PID/pagemap shows neither present nor swapped: never
 *    touched, they read as zeros. Reading one through /proc/PID/mem
 *    faults it in (the zero page, or on some kernels, this test machine's
 *    among them, a fresh zeroed page): slow, and it leaves the page
 *    present for every later scan and grows the daemon. They are scanned
 *    as zeros, so windows across their edges are still checked. File and
 *    shared mappings are read whole: a page absent from the page tables
 *    can still hold data in the page cache (a client's arena memfd).
 *
 * What that covers, per build. Release and ASan: every byte of the
 * daemon's code, libraries, heaps, stacks, static data and arenas. TSan:
 * the same application memory, all of it (heap 0x7b.., binary and its
 * .bss 0x55.., libraries, stacks and mmaps 0x7f..); only the runtime's
 * bookkeeping is left out, and it never holds program data. So a key left
 * anywhere the daemon can store it is found in all three builds. What
 * differs is the allocator: ASan quarantines freed blocks (by default up
 * to 256 MiB), so a block freed without a wipe keeps its bytes for the
 * rest of the test; glibc and TSan's allocator hand blocks out again
 * sooner, and glibc writes its list pointers over a freed block's first
 * 16 bytes. The ASan pass is the strict one for "wiped before free"; the
 * release and TSan passes check the same paths with other allocators and
 * other timings.
 *
 * An eight-byte window of zeros is never looked for: untouched memory is
 * zeros, so such a window would be found everywhere (random keys have
 * none). The inner loop is compiled optimised and without sanitizers
 * (tests/hostile/CMakeLists.txt): it is the test's instrument, not code
 * under test, and instrumented it costs a call per byte.
 */
#include "memscan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
	PAGE = 4096,
	CHUNK = 1 << 20, /* bytes per pread of /proc/PID/mem */
	PM_BATCH = 4096, /* pagemap entries per pread: 16 MiB */
	MAX_WINDOWS = MEMSCAN_MAX_NEEDLES * (MEMSCAN_MAX_LEN - WINDOW + 1),
};

#define BIG_MAPPING (1ul << 30)
#define TSAN_SHADOW_BEG 0x010000000000ul
#define TSAN_SHADOW_END 0x100000000000ul
#define TSAN_META_BEG 0x300000000000ul
#define TSAN_META_END 0x340000000000ul
#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)

/* Every needle's windows as sorted unique words, each with the set of
 * needles it belongs to, and a bitmap of their low 16 bits that turns
 * most positions away with one load. */
struct table {
	uint64_t w[MAX_WINDOWS];
	uint32_t who[MAX_WINDOWS];
	size_t n;
	uint8_t filter[65536 / 8];
};

struct entry {
	uint64_t w;
	uint32_t who;
};

static int cmp_entry(const void *a, const void *b)
{
	uint64_t x = ((const struct entry *)a)->w;
	uint64_t y = ((const struct entry *)b)->w;
	return x < y ? -1 : x > y;
}

static int table_build(struct table *t, const struct memscan_needle *nd,
		       unsigned n)
{
	static struct entry e[MAX_WINDOWS];
	size_t ne = 0;
	memset(t, 0, sizeof(*t));
	for (unsigned k = 0; k < n; k++) {
		if (nd[k].len < WINDOW || nd[k].len > MEMSCAN_MAX_LEN)
			return -EINVAL;
		for (size_t i = 0; i + WINDOW <= nd[k].len; i++) {
			uint64_t v;
			memcpy(&v, nd[k].key + i, sizeof(v));
			if (v) /* see the top of this file */
				e[ne++] = (struct entry){ v, 1u << k };
		}
	}
	qsort(e, ne, sizeof(e[0]), cmp_entry);
	for (size_t i = 0; i < ne; i++) {
		if (t->n && t->w[t->n - 1] == e[i].w) {
			t->who[t->n - 1] |= e[i].who;
			continue;
		}
		t->w[t->n] = e[i].w;
		t->who[t->n++] = e[i].who;
		t->filter[(e[i].w & 0xffff) >> 3] |= 1u << (e[i].w & 7);
	}
	return 0;
}

/* A word that passed the filter: which needles have it? */
static uint32_t table_who(const struct table *t, uint64_t v)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->w[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->w[lo] == v ? t->who[lo] : 0;
}

/* Count the windows that start in p[0 .. n - WINDOW]. */
static void table_scan(const struct table *t, const uint8_t *p, size_t n,
		       long *hits)
{
	for (size_t i = 0; i + WINDOW <= n; i++) {
		uint64_t v;
		memcpy(&v, p + i, sizeof(v));
		if (!(t->filter[(v & 0xffff) >> 3] & (1u << (v & 7))))
			continue;
		for (uint32_t who = table_who(t, v); who; who &= who - 1)
			hits[__builtin_ctz(who)]++;
	}
}

/* One pass: the table, the read buffer and what has been read so far.
 * buf holds WINDOW - 1 bytes of carry (the end of the previous piece of
 * the same mapping, for windows across pieces), then CHUNK bytes. */
struct scan {
	const struct table *t;
	long hits[MEMSCAN_MAX_NEEDLES];
	int mem, pagemap; /* pagemap < 0: every page counts as backed */
	uint8_t *buf;	  /* owned */
	size_t carry;
	uint64_t read, unbacked;
	unsigned mappings, shadow, big;
};

/* len new bytes are at buf + WINDOW - 1: scan them after the carry. */
static void scan_piece(struct scan *s, size_t len)
{
	uint8_t *p = s->buf + (WINDOW - 1) - s->carry;
	size_t n = s->carry + len;
	table_scan(s->t, p, n, s->hits);
	size_t keep = n < WINDOW - 1 ? n : WINDOW - 1;
	memmove(s->buf + (WINDOW - 1) - keep, p + n - keep, keep);
	s->carry = keep;
}

/* Pages [a, a + len) read as zeros: only the windows across their
 * leading edge can hold a needle's bytes. */
static void scan_zeros(struct scan *s, size_t len)
{
	size_t z = len < WINDOW - 1 ? len : WINDOW - 1;
	memset(s->buf + WINDOW - 1, 0, z);
	scan_piece(s, z);
}

static void scan_read(struct scan *s, unsigned long a, size_t len)
{
	while (len) {
		size_t want = len < CHUNK ? len : CHUNK;
		ssize_t got =
			pread(s->mem, s->buf + WINDOW - 1, want, (off_t)a);
		if (got <= 0) {
			/* Gone or unreadable (an I/O mapping): no window
			 * spans the hole. */
			s->carry = 0;
			got = (ssize_t)(want < PAGE ? want : PAGE);
		} else {
			s->read += (uint64_t)got;
			scan_piece(s, (size_t)got);
		}
		a += (size_t)got;
		len -= (size_t)got;
	}
}

static void scan_run(struct scan *s, int backed, unsigned long lo,
		     unsigned long hi)
{
	if (backed) {
		scan_read(s, lo, hi - lo);
		return;
	}
	scan_zeros(s, hi - lo);
	s->unbacked += hi - lo;
}

/* A private anonymous mapping: read its backed pages, scan the others
 * as the zeros they are. */
static void scan_anon(struct scan *s, unsigned long lo, unsigned long hi)
{
	static uint64_t pm[PM_BATCH];
	unsigned long run = lo; /* start of the pages not handled yet */
	int backed = 1;		/* what they are */
	for (unsigned long a = lo; a < hi;
	     a += (unsigned long)PM_BATCH * PAGE) {
		size_t np =
			(hi - a) / PAGE < PM_BATCH ? (hi - a) / PAGE : PM_BATCH;
		ssize_t got = pread(s->pagemap, pm, np * sizeof(pm[0]),
				    (off_t)(a / PAGE * sizeof(pm[0])));
		size_t have = got > 0 ? (size_t)got / sizeof(pm[0]) : 0;
		for (size_t i = 0; i < np; i++) {
			/* Unknown entries are read, to be safe. */
			int b = i >= have ||
				(pm[i] & (PM_PRESENT | PM_SWAPPED));
			unsigned long pa = a + i * PAGE;
			if (b == backed)
				continue;
			scan_run(s, backed, run, pa);
			run = pa;
			backed = b;
		}
	}
	scan_run(s, backed, run, hi);
}

/* One line of /proc/PID/maps. */
struct mapping {
	unsigned long lo, hi;
	char perm[5];
	int anon; /* private, and no file behind it */
};

/* The readable mappings of pid: *out (malloc'd) and their count, or
 * -errno. */
static int maps_read(pid_t pid, struct mapping **out)
{
	char path[64], *line = NULL;
	size_t cap = 0, n = 0, size = 512;
	struct mapping *m = malloc(size * sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f) {
		int e = -errno;
		free(m);
		return e;
	}
	while (m && getline(&line, &cap, f) > 0) {
		struct mapping x = { 0 };
		int off = 0;
		if (sscanf(line, "%lx-%lx %4s %*x %*x:%*x %*u %n", &x.lo, &x.hi,
			   x.perm, &off) != 3 ||
		    !off)
			continue;
		const char *name = line + off;
		if (x.perm[0] != 'r' || !strncmp(name, "[vvar", 5) ||
		    !strncmp(name, "[vsyscall]", 10))
			continue;
		x.anon = x.perm[3] == 'p' && (!*name || *name == '\n' ||
					      !strncmp(name, "[heap]", 6) ||
					      !strncmp(name, "[stack", 6) ||
					      !strncmp(name, "[anon", 5));
		if (n == size) {
			size *= 2;
			struct mapping *r = realloc(m, size * sizeof(*m));
			if (!r) {
				free(m);
				m = NULL;
				break;
			}
			m = r;
		}
		m[n++] = x;
	}
	free(line);
	fclose(f);
	if (!m)
		return -ENOMEM;
	*out = m;
	return (int)n;
}

static int tsan_layout(const struct mapping *m, int n)
{
	for (int i = 0; i < n; i++)
		if (m[i].lo == TSAN_META_BEG)
			return 1;
	return 0;
}

static int in_tsan_shadow(const struct mapping *m)
{
	return (m->lo >= TSAN_SHADOW_BEG && m->hi <= TSAN_SHADOW_END) ||
	       (m->lo >= TSAN_META_BEG && m->hi <= TSAN_META_END);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int memscan(pid_t pid, struct memscan_needle *nd, unsigned n)
{
	static struct table t;
	struct scan s = { .t = &t, .mem = -1, .pagemap = -1 };
	struct mapping *m = NULL;
	double t0 = now_ms();
	char path[64];

	if (n > MEMSCAN_MAX_NEEDLES || table_build(&t, nd, n) < 0)
		return -EINVAL;
	int r = maps_read(pid, &m);
	if (r < 0)
		return r;
	int nm = r;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	s.mem = open(path, O_RDONLY);
	r = s.mem < 0 ? -errno : 0;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	s.pagemap = open(path, O_RDONLY);
	s.buf = malloc(WINDOW - 1 + CHUNK);
	if (!r && !s.buf)
		r = -ENOMEM;
	int tsan = tsan_layout(m, nm);
	for (int i = 0; !r && i < nm; i++) {
		unsigned long size = m[i].hi - m[i].lo;
		if (tsan && in_tsan_shadow(&m[i])) {
			s.shadow++;
			continue;
		}
		if (size >= BIG_MAPPING && m[i].anon) {
			s.big++;
			continue;
		}
		s.mappings++;
		s.carry = 0; /* windows never span two mappings */
		if (m[i].anon && s.pagemap >= 0)
			scan_anon(&s, m[i].lo, m[i].hi);
		else
			scan_read(&s, m[i].lo, size);
	}
	for (unsigned k = 0; k < n; k++)
		nd[k].hits = r ? -1 : s.hits[k];
	printf("memscan: pid %d, %u needle%s: read %.1f MiB in %u mappings, "
	       "%.0f ms; not read: %.1f MiB of untouched pages, %u mappings "
	       "of TSan shadow, %u private mappings of 1 GiB or more\n",
	       (int)pid, n, n == 1 ? "" : "s", s.read / 1048576.0, s.mappings,
	       now_ms() - t0, s.unbacked / 1048576.0, s.shadow, s.big);
	fflush(stdout);
	free(s.buf);
	free(m);
	if (s.mem >= 0)
		close(s.mem);
	if (s.pagemap >= 0)
		close(s.pagemap);
	return r;
}

int memscan_until_clean(pid_t pid, struct memscan_needle *nd, unsigned n,
			unsigned ms)
{
	double end = now_ms() + ms;
	for (;;) {
		int r = memscan(pid, nd, n);
		long left = 0;
		for (unsigned k = 0; !r && k < n; k++)
			left += nd[k].hits;
		if (r || !left || now_ms() >= end)
			return r;
		usleep(50000);
	}
}

long scan_windows(pid_t pid, const uint8_t *key, size_t n)
{
	struct memscan_needle nd = { .key = key, .len = n };
	return memscan(pid, &nd, 1) < 0 ? -1 : nd.hits;
}
