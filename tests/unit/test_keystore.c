/* SPDX-License-Identifier: MIT */
/*
 * Key store (daemon/keys/keystore.c): fixed 64-byte aligned slots in one
 * locked, undumpable mapping; zeroed on alloc, wiped on free; a full store
 * refuses. The mapping stays in place until ks_fini(), so freed slots can
 * be inspected.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keystore.h"
#include "log.h"

enum { NSLOTS = 8 };

static int quiet_setup(void **state)
{
	log_init(LOG_ERR_); /* mlock may fail in a container: a warning */
	return 0;
}

static int store_setup(void **state)
{
	return ks_init(NSLOTS);
}

static int store_teardown(void **state)
{
	ks_fini();
	return 0;
}

static int all_bytes(const void *p, size_t n, uint8_t v)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return 0;
	return 1;
}

static void test_alloc_all(void **state)
{
	void *s[NSLOTS];

	assert_int_equal(ks_in_use(), 0);
	for (unsigned i = 0; i < NSLOTS; i++) {
		s[i] = ks_alloc();
		assert_non_null(s[i]);
		assert_int_equal((uintptr_t)s[i] % 64, 0);
		assert_true(all_bytes(s[i], KS_SLOT_SIZE, 0));
		assert_int_equal(ks_in_use(), i + 1);
		/* Usable end to end. */
		memset(s[i], 0x40 + i, KS_SLOT_SIZE);
	}
	/* Distinct and disjoint: nobody's writes reached another slot. */
	for (unsigned i = 0; i < NSLOTS; i++) {
		assert_true(all_bytes(s[i], KS_SLOT_SIZE, 0x40 + i));
		for (unsigned j = i + 1; j < NSLOTS; j++) {
			uintptr_t a = (uintptr_t)s[i], b = (uintptr_t)s[j];
			assert_true(a + KS_SLOT_SIZE <= b ||
				    b + KS_SLOT_SIZE <= a);
		}
	}

	/* Full. */
	assert_null(ks_alloc());
	assert_null(ks_alloc());
	assert_int_equal(ks_in_use(), NSLOTS);

	/* One back: exactly that one comes out again, zeroed. */
	ks_free(s[3]);
	assert_int_equal(ks_in_use(), NSLOTS - 1);
	void *again = ks_alloc();
	assert_ptr_equal(again, s[3]);
	assert_true(all_bytes(again, KS_SLOT_SIZE, 0));
	assert_null(ks_alloc());

	for (unsigned i = 0; i < NSLOTS; i++)
		ks_free(s[i]);
	assert_int_equal(ks_in_use(), 0);
}

/* A freed slot holds at most a free-list link in its first word; the
 * rest must be zero. The link, if any, points at another slot. */
static void check_wiped(void *slot, void *const *slots, unsigned n)
{
	void *link;

	memcpy(&link, slot, sizeof(link));
	assert_true(all_bytes((uint8_t *)slot + sizeof(link),
			      KS_SLOT_SIZE - sizeof(link), 0));
	if (!link)
		return;
	for (unsigned i = 0; i < n; i++)
		if (link == slots[i])
			return;
	fail_msg("freed slot %p starts with %p: not a slot, key bytes left?",
		 slot, link);
}

static void test_wiped_on_free(void **state)
{
	void *s[NSLOTS];

	for (unsigned i = 0; i < NSLOTS; i++) {
		s[i] = ks_alloc();
		assert_non_null(s[i]);
		/* Key-like bytes everywhere, no zero byte at all. */
		for (unsigned j = 0; j < KS_SLOT_SIZE; j++)
			((uint8_t *)s[i])[j] = (uint8_t)(0x80 | (i * 31 + j));
	}
	/* Free in a scattered order; each is wiped at once, while the
	 * others keep their contents. */
	static const unsigned order[NSLOTS] = { 5, 0, 7, 2, 1, 6, 3, 4 };
	for (unsigned k = 0; k < NSLOTS; k++) {
		ks_free(s[order[k]]);
		assert_int_equal(ks_in_use(), NSLOTS - 1 - k);
		for (unsigned m = 0; m <= k; m++)
			check_wiped(s[order[m]], s, NSLOTS);
		for (unsigned m = k + 1; m < NSLOTS; m++) {
			const uint8_t *b = s[order[m]];
			assert_int_equal(b[KS_SLOT_SIZE - 1],
					 (uint8_t)(0x80 | (order[m] * 31 +
							   KS_SLOT_SIZE - 1)));
		}
	}
}

static void test_free_null(void **state)
{
	void *s = ks_alloc();

	assert_int_equal(ks_in_use(), 1);
	ks_free(NULL); /* no-op */
	assert_int_equal(ks_in_use(), 1);
	ks_free(s);
	assert_int_equal(ks_in_use(), 0);
	ks_free(NULL);
	assert_int_equal(ks_in_use(), 0);
}

static void test_churn(void **state)
{
	void *live[NSLOTS] = { 0 };
	unsigned n = 0;

	/* Random alloc/free: never the same slot twice while live, the
	 * count always right, every slot handed out zeroed. */
	srand(3);
	for (int step = 0; step < 20000; step++) {
		if (n < NSLOTS && (n == 0 || rand() % 2)) {
			void *p = ks_alloc();
			assert_non_null(p);
			assert_true(all_bytes(p, KS_SLOT_SIZE, 0));
			for (unsigned i = 0; i < n; i++)
				assert_ptr_not_equal(p, live[i]);
			memset(p, 0xff, KS_SLOT_SIZE);
			live[n++] = p;
		} else if (n == NSLOTS && rand() % 4 == 0) {
			assert_null(ks_alloc());
		} else {
			unsigned k = (unsigned)rand() % n;
			ks_free(live[k]);
			live[k] = live[--n];
		}
		assert_int_equal(ks_in_use(), n);
	}
	while (n)
		ks_free(live[--n]);
	assert_int_equal(ks_in_use(), 0);
}

/* The VmFlags line of the /proc/self/smaps entry that maps addr. */
static int vm_flags(const void *addr, char *flags, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, found = -1;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			size_t n = strlen(line + 8);
			if (n >= len)
				n = len - 1;
			memcpy(flags, line + 8, n);
			flags[n] = '\0';
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Is f one of the space-separated two-letter flags? */
static int has_flag(const char *flags, const char *f)
{
	size_t n = strlen(f);

	for (const char *p = flags; *p;) {
		p += strspn(p, " \t\n");
		size_t l = strcspn(p, " \t\n");
		if (l == n && !strncmp(p, f, n))
			return 1;
		p += l;
	}
	return 0;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_ASAN 1
#endif

static int running_under_asan(void)
{
#ifdef UNDER_ASAN
	return 1;
#else
	return 0;
#endif
}

static void test_mapping_flags(void **state)
{
	char flags[256];
	void *s = ks_alloc();

	assert_non_null(s);
	if (vm_flags(s, flags, sizeof(flags)))
		skip(); /* no smaps (not Linux /proc) */
	/* Excluded from core dumps. */
	if (!has_flag(flags, "dd"))
		fail_msg("key store not MADV_DONTDUMP: VmFlags%s", flags);
	/* Locked exactly when the store says so. (ASan and TSan intercept
	 * mlock and do nothing, yet report success.) */
	if (!running_under_asan())
		assert_int_equal(has_flag(flags, "lo"), ks_locked() ? 1 : 0);
	ks_free(s);
}

/* ks_map: zeroed, undumpable, locked when the limit allows; usable
 * without the slot store. */
static void test_map(void **state)
{
	char flags[256];
	enum { LEN = 8192 };
	uint8_t *p = ks_map(LEN);

	assert_non_null(p);
	assert_true(all_bytes(p, LEN, 0));
	memset(p, 0x9d, LEN);
	if (vm_flags(p, flags, sizeof(flags)) == 0 && !has_flag(flags, "dd"))
		fail_msg("ks_map not MADV_DONTDUMP: VmFlags%s", flags);
	ks_unmap(p, LEN);
	ks_unmap(NULL, LEN); /* no-op */
	/* Gone: the address is no longer mapped. */
	assert_int_not_equal(vm_flags(p, flags, sizeof(flags)), 0);
}

static void test_reinit(void **state)
{
	/* After fini the store is empty and can be set up again. */
	ks_fini();
	assert_int_equal(ks_in_use(), 0);
	assert_null(ks_alloc());
	ks_fini(); /* twice is harmless */

	assert_int_equal(ks_init(2), 0);
	void *a = ks_alloc(), *b = ks_alloc();
	assert_non_null(a);
	assert_non_null(b);
	assert_null(ks_alloc());
	assert_int_equal(ks_in_use(), 2);
	ks_free(a);
	ks_free(b);
	ks_fini();

	/* A store of no slots is refused. */
	assert_int_equal(ks_init(0), -EINVAL);
	assert_null(ks_alloc());
	ks_fini();

	assert_int_equal(ks_init(NSLOTS), 0); /* for the teardown */
}

static void test_large_store(void **state)
{
	enum { N = 8192 }; /* MAX_SESSIONS, as the daemon uses */
	void **s = calloc(N, sizeof(*s));

	assert_non_null(s);
	ks_fini();
	assert_int_equal(ks_init(N), 0);
	for (unsigned i = 0; i < N; i++) {
		s[i] = ks_alloc();
		assert_non_null(s[i]);
		assert_int_equal((uintptr_t)s[i] % 64, 0);
		if (i)
			assert_true((uintptr_t)s[i] != (uintptr_t)s[i - 1]);
	}
	assert_null(ks_alloc());
	assert_int_equal(ks_in_use(), N);
	for (unsigned i = 0; i < N; i++)
		ks_free(s[i]);
	assert_int_equal(ks_in_use(), 0);
	free(s);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, store_setup, store_teardown)
	const struct CMUnitTest tests[] = {
		T(test_alloc_all),   T(test_wiped_on_free), T(test_free_null),
		T(test_churn),	     T(test_mapping_flags), T(test_reinit),
		T(test_large_store), T(test_map),
	};
#undef T

	return cmocka_run_group_tests(tests, quiet_setup, NULL);
}
