/* SPDX-License-Identifier: MIT */
/*
 * The client library's arena allocator (client-lib/arena.c, private API in
 * client-lib/internal.h): 64-byte granules, first fit, coalescing free,
 * refusal of frees that do not name an allocation, and a long random run
 * against a shadow bitmap of the arena.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define KIB 1024u

static void test_alignment_and_rounding(void **state)
{
	struct arena_alloc a;

	assert_int_equal(arena_init(&a, 64 * KIB), 0);
	/* Sizes round up to whole granules; offsets are granule aligned. */
	assert_int_equal(arena_alloc(&a, 1), 0);
	assert_int_equal(arena_alloc(&a, 64), 64);
	assert_int_equal(arena_alloc(&a, 65), 128);
	assert_int_equal(arena_alloc(&a, 127), 256);
	assert_int_equal(arena_alloc(&a, 128), 384);
	/* Zero bytes still gets a distinct granule (a unique handle). */
	assert_int_equal(arena_alloc(&a, 0), 512);
	assert_int_equal(arena_alloc(&a, 0), 576);

	for (uint64_t sz = 1; sz < 5000; sz += 37) {
		int64_t off = arena_alloc(&a, sz);
		assert_true(off >= 0);
		assert_int_equal(off % ARENA_GRANULE, 0);
		assert_true((uint64_t)off + sz <= 64 * KIB);
		if (sz > 1000)
			assert_int_equal(arena_free(&a, (uint64_t)off), 0);
	}
	arena_fini(&a);
}

static void test_exhaustion(void **state)
{
	struct arena_alloc a;

	assert_int_equal(arena_init(&a, 4096), 0);
	assert_int_equal(arena_alloc(&a, 4097), -1); /* larger than it all */
	assert_int_equal(arena_alloc(&a, 4096), 0);
	assert_int_equal(arena_alloc(&a, 1), -1);
	assert_int_equal(arena_alloc(&a, 0), -1);
	assert_int_equal(arena_free(&a, 0), 0);

	/* Granule by granule: exactly 64, then none. */
	for (int i = 0; i < 64; i++)
		assert_int_equal(arena_alloc(&a, 64), i * 64);
	assert_int_equal(arena_alloc(&a, 1), -1);
	arena_fini(&a);
}

/*
 * Sizes that cannot fit in any arena must be refused, including those
 * whose granule count overflows a naive 64-bit round-up
 * ((bytes + 63) / 64 wraps to 0 for bytes > UINT64_MAX - 63).
 *
 * Known failure (reported, not fixed here): arena_alloc() rounds up in 64
 * bits, so bytes > UINT64_MAX - 63 yields 0 granules and returns the
 * first free offset as a zero-length block that arena_free() then
 * refuses and the next allocation hands out again. cc_buf_alloc() bounds
 * len by the arena size first, so the public API cannot reach it.
 */
static void test_huge_sizes(void **state)
{
	static const uint64_t huge[] = {
		1ull << 32,
		(1ull << 32) * ARENA_GRANULE,
		(1ull << 38) + 1,
		UINT64_MAX / 2,
		UINT64_MAX - ARENA_GRANULE * 2,
		UINT64_MAX - ARENA_GRANULE + 2, /* + 63 wraps to 0 */
		UINT64_MAX,
	};
	struct arena_alloc a;

	assert_int_equal(arena_init(&a, 1 << 20), 0);
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		int64_t off = arena_alloc(&a, huge[i]);
		if (off != -1)
			fail_msg("arena_alloc(%#llx) = %lld, want -1",
				 (unsigned long long)huge[i], (long long)off);
	}
	/* Nothing was taken: the whole arena is still there. */
	assert_int_equal(arena_alloc(&a, 1 << 20), 0);
	arena_fini(&a);
}

static void test_odd_arena_sizes(void **state)
{
	struct arena_alloc a;

	/* A partial trailing granule is not handed out. */
	assert_int_equal(arena_init(&a, 100), 0);
	assert_int_equal(arena_alloc(&a, 65), -1);
	assert_int_equal(arena_alloc(&a, 64), 0);
	assert_int_equal(arena_alloc(&a, 1), -1);
	arena_fini(&a);

	/* Smaller than a granule, and empty. */
	assert_int_equal(arena_init(&a, 63), 0);
	assert_int_equal(arena_alloc(&a, 1), -1);
	assert_int_equal(arena_free(&a, 0), -EINVAL);
	arena_fini(&a);
	assert_int_equal(arena_init(&a, 0), 0);
	assert_int_equal(arena_alloc(&a, 0), -1);
	assert_int_equal(arena_free(&a, 0), -EINVAL);
	arena_fini(&a);
}

/* Allocate four quarters, free them in the given order, then the whole
 * arena must be one extent again. */
static void coalesce_order(const int order[4])
{
	struct arena_alloc a;
	int64_t q[4];

	assert_int_equal(arena_init(&a, 4096), 0);
	for (int i = 0; i < 4; i++) {
		q[i] = arena_alloc(&a, 1024);
		assert_int_equal(q[i], i * 1024);
	}
	assert_int_equal(arena_alloc(&a, 1), -1);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(arena_free(&a, (uint64_t)q[order[i]]), 0);
		/* Until the last free, the whole arena is not available. */
		if (i < 3) {
			int64_t whole = arena_alloc(&a, 4096);
			assert_int_equal(whole, -1);
		}
	}
	assert_int_equal(a.nfree, 1);
	assert_int_equal(arena_alloc(&a, 4096), 0);
	arena_fini(&a);
}

static void test_coalescing(void **state)
{
	/* Every permutation: merges with the previous extent, the next, both,
	 * and neither, in every combination. */
	int o[4] = { 0, 1, 2, 3 };
	int n = 0;

	for (;;) {
		coalesce_order(o);
		n++;
		/* Next permutation (lexicographic). */
		int i = 2;
		while (i >= 0 && o[i] > o[i + 1])
			i--;
		if (i < 0)
			break;
		int j = 3;
		while (o[j] < o[i])
			j--;
		int tmp = o[i];
		o[i] = o[j];
		o[j] = tmp;
		for (int l = i + 1, r = 3; l < r; l++, r--) {
			tmp = o[l];
			o[l] = o[r];
			o[r] = tmp;
		}
	}
	assert_int_equal(n, 24);
}

static void test_hole_reuse(void **state)
{
	struct arena_alloc a;

	/* First fit: a freed hole is reused before the tail. */
	assert_int_equal(arena_init(&a, 64 * KIB), 0);
	int64_t x = arena_alloc(&a, 256), y = arena_alloc(&a, 256);
	int64_t z = arena_alloc(&a, 256);
	assert_int_equal(arena_free(&a, (uint64_t)y), 0);
	assert_int_equal(arena_alloc(&a, 512), 768); /* does not fit the hole */
	assert_int_equal(arena_alloc(&a, 128), y);
	assert_int_equal(arena_alloc(&a, 128), y + 128);
	assert_int_equal(arena_alloc(&a, 64), 1280);
	assert_int_equal(arena_free(&a, (uint64_t)x), 0);
	assert_int_equal(arena_free(&a, (uint64_t)z), 0);
	arena_fini(&a);
}

static void test_bad_free(void **state)
{
	struct arena_alloc a;

	assert_int_equal(arena_init(&a, 64 * KIB), 0);
	/* Nothing allocated yet. */
	assert_int_equal(arena_free(&a, 0), -EINVAL);
	assert_int_equal(arena_free(&a, 64), -EINVAL);

	int64_t x = arena_alloc(&a, 1000); /* 16 granules */
	int64_t y = arena_alloc(&a, 64);
	assert_true(x >= 0 && y >= 0);

	/* Unaligned, inside a block, a free granule, the arena's end. */
	assert_int_equal(arena_free(&a, (uint64_t)x + 1), -EINVAL);
	assert_int_equal(arena_free(&a, (uint64_t)x + 64), -EINVAL);
	assert_int_equal(arena_free(&a, (uint64_t)y + 64), -EINVAL);
	assert_int_equal(arena_free(&a, 64 * KIB), -EINVAL);

	/* None of that disturbed the live allocations. */
	assert_int_equal(arena_alloc(&a, 64 * KIB), -1);

	assert_int_equal(arena_free(&a, (uint64_t)x), 0);
	assert_int_equal(arena_free(&a, (uint64_t)x), -EINVAL); /* double */
	assert_int_equal(arena_free(&a, (uint64_t)y), 0);
	assert_int_equal(arena_free(&a, (uint64_t)y), -EINVAL);

	/* A double free must not have added the range twice. */
	assert_int_equal(a.nfree, 1);
	assert_int_equal(arena_alloc(&a, 64 * KIB), 0);
	assert_int_equal(arena_alloc(&a, 1), -1);
	arena_fini(&a);
}

/*
 * Offsets far past the arena must be refused, not reduced modulo 2^32
 * granules onto a live allocation.
 *
 * Known failure (reported, not fixed here): arena_free() stores
 * off / ARENA_GRANULE in a uint32_t, so off = (k << 38) + x frees the
 * block at x. cc_buf_free() checks the pointer is inside the arena first,
 * so the public API cannot reach it.
 */
static void test_free_far_offset(void **state)
{
	struct arena_alloc a;

	assert_int_equal(arena_init(&a, 64 * KIB), 0);
	int64_t x = arena_alloc(&a, 1000);
	int64_t y = arena_alloc(&a, 64);
	assert_int_equal(x, 0);
	assert_int_equal(y, 1024);

	static const uint64_t far[] = {
		1ull << 40,			     /* 2^34 granules -> 0 */
		(1ull << 32) * ARENA_GRANULE,	     /* 2^32 granules -> 0 */
		(1ull << 32) * ARENA_GRANULE + 1024, /* -> y */
		UINT64_MAX & ~(uint64_t)(ARENA_GRANULE - 1),
	};
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		int rc = arena_free(&a, far[i]);
		if (rc != -EINVAL)
			fail_msg("arena_free(%#llx) = %d, want -EINVAL",
				 (unsigned long long)far[i], rc);
	}
	/* Both blocks are still allocated. */
	assert_int_equal(arena_free(&a, (uint64_t)x), 0);
	assert_int_equal(arena_free(&a, (uint64_t)y), 0);
	arena_fini(&a);
}

static void test_many_small(void **state)
{
	enum { N = 4096 };
	struct arena_alloc a;
	int64_t off[N];

	/* Enough live blocks to grow the map and the free-extent array many
	 * times over. */
	assert_int_equal(arena_init(&a, N * 64), 0);
	for (int i = 0; i < N; i++) {
		off[i] = arena_alloc(&a, 64);
		assert_int_equal(off[i], i * 64);
	}
	assert_int_equal(arena_alloc(&a, 1), -1);
	/* Every other one: N/2 separate extents. */
	for (int i = 0; i < N; i += 2)
		assert_int_equal(arena_free(&a, (uint64_t)off[i]), 0);
	assert_int_equal(a.nfree, N / 2);
	assert_int_equal(arena_alloc(&a, 128), -1); /* fragmented */
	for (int i = 1; i < N; i += 2)
		assert_int_equal(arena_free(&a, (uint64_t)off[i]), 0);
	assert_int_equal(a.nfree, 1);
	assert_int_equal(arena_alloc(&a, N * 64), 0);
	arena_fini(&a);
}

/* ---- Random run against a shadow model ---- */

enum { SHADOW_GRANULES = 4096 }; /* a 256 KiB arena */

struct live {
	uint64_t off, len; /* bytes */
};

/* Longest run of free granules in the shadow. */
static uint32_t shadow_longest_free(const uint8_t *used)
{
	uint32_t best = 0, run = 0;
	for (uint32_t i = 0; i < SHADOW_GRANULES; i++) {
		run = used[i] ? 0 : run + 1;
		if (run > best)
			best = run;
	}
	return best;
}

static void test_random_vs_shadow(void **state)
{
	enum { MAX_LIVE = 1024, STEPS = 200000 };
	struct arena_alloc a;
	static uint8_t used[SHADOW_GRANULES];
	static struct live live[MAX_LIVE];
	unsigned nlive = 0, fails = 0;
	unsigned seed = 12345;

	if (getenv("TEST_SEED"))
		seed = (unsigned)strtoul(getenv("TEST_SEED"), NULL, 0);
	srand(seed);
	memset(used, 0, sizeof(used));
	assert_int_equal(arena_init(&a, SHADOW_GRANULES * 64ull), 0);

	for (int step = 0; step < STEPS; step++) {
		int do_alloc =
			nlive == 0 || (nlive < MAX_LIVE && rand() % 100 < 55);
		if (do_alloc) {
			/* Mostly small, sometimes large. */
			uint64_t len = rand() % 8 ? 1 + rand() % 2048
						  : 1 + rand() % 65536;
			uint32_t g = (uint32_t)((len + 63) / 64);
			int64_t off = arena_alloc(&a, len);
			if (off < 0) {
				/* Only when no free run is long enough: the
				 * free list is fully coalesced. */
				if (shadow_longest_free(used) >= g)
					fail_msg("seed %u step %d: alloc %llu "
						 "failed with a free run of %u "
						 "granules",
						 seed, step,
						 (unsigned long long)len,
						 shadow_longest_free(used));
				fails++;
				continue;
			}
			if (off % 64 ||
			    (uint64_t)off + len > SHADOW_GRANULES * 64ull)
				fail_msg("seed %u step %d: bad offset %lld",
					 seed, step, (long long)off);
			for (uint32_t i = 0; i < g; i++) {
				if (used[off / 64 + i])
					fail_msg("seed %u step %d: [%lld, "
						 "+%llu) overlaps a live block",
						 seed, step, (long long)off,
						 (unsigned long long)len);
				used[off / 64 + i] = 1;
			}
			live[nlive++] = (struct live){ (uint64_t)off, len };
		} else {
			unsigned k = (unsigned)rand() % nlive;
			struct live l = live[k];
			live[k] = live[--nlive];
			assert_int_equal(arena_free(&a, l.off), 0);
			for (uint64_t i = 0; i < (l.len + 63) / 64; i++)
				used[l.off / 64 + i] = 0;
			/* A second free of the same block is refused. */
			if (rand() % 16 == 0)
				assert_int_equal(arena_free(&a, l.off),
						 -EINVAL);
		}
		/* The allocator's free extents are the shadow's free runs:
		 * sorted, disjoint, coalesced. */
		if (step % 512 == 0) {
			uint32_t free_g = 0;
			for (uint32_t i = 0; i < a.nfree; i++) {
				const struct arena_ext *e = &a.free[i];
				assert_true(e->len > 0);
				if (i)
					assert_true(a.free[i - 1].off +
							    a.free[i - 1].len <
						    e->off);
				for (uint32_t j = 0; j < e->len; j++)
					assert_int_equal(used[e->off + j], 0);
				free_g += e->len;
			}
			uint32_t shadow_free = 0;
			for (uint32_t i = 0; i < SHADOW_GRANULES; i++)
				shadow_free += !used[i];
			assert_int_equal(free_g, shadow_free);
		}
	}
	/* The run exercised both outcomes. */
	assert_true(fails > 0);

	while (nlive) {
		nlive--;
		assert_int_equal(arena_free(&a, live[nlive].off), 0);
	}
	assert_int_equal(a.nfree, 1);
	assert_int_equal(arena_alloc(&a, SHADOW_GRANULES * 64ull), 0);
	arena_fini(&a);
}

static void test_fini_resets(void **state)
{
	struct arena_alloc a;

	assert_int_equal(arena_init(&a, 4096), 0);
	assert_true(arena_alloc(&a, 100) >= 0);
	arena_fini(&a);
	assert_null(a.free);
	assert_null(a.keys);
	assert_null(a.vals);
	/* Reusable after fini. */
	assert_int_equal(arena_init(&a, 4096), 0);
	assert_int_equal(arena_alloc(&a, 4096), 0);
	arena_fini(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alignment_and_rounding),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_huge_sizes),
		cmocka_unit_test(test_odd_arena_sizes),
		cmocka_unit_test(test_coalescing),
		cmocka_unit_test(test_hole_reuse),
		cmocka_unit_test(test_bad_free),
		cmocka_unit_test(test_free_far_offset),
		cmocka_unit_test(test_many_small),
		cmocka_unit_test(test_random_vs_shadow),
		cmocka_unit_test(test_fini_resets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
