/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl's figures and words (cli/table.c, cli/cli.c): byte counts in
 * 1024-based units at their boundaries, --exact's integers, and the one
 * text for a daemon that went away.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "table.h"

static const char *bytes(uint64_t v)
{
	static char buf[16];

	fmt_bytes(buf, sizeof(buf), v);
	return buf;
}

static void test_units(void **state)
{
	(void)state;
	assert_string_equal(bytes(0), "0");
	assert_string_equal(bytes(1023), "1023");
	assert_string_equal(bytes(1024), "1.0K");
	assert_string_equal(bytes(1536), "1.5K");
	assert_string_equal(bytes(100000), "97.7K");
	/* 1023.95K and up round to 1024.0K: shown as the next unit */
	assert_string_equal(bytes(1048524), "1023.9K");
	assert_string_equal(bytes(1048525), "1.0M");
	assert_string_equal(bytes(1u << 20), "1.0M");
	assert_string_equal(bytes(17843112075ull), "16.6G");
	assert_string_equal(bytes(1ull << 40), "1.0T");
	assert_string_equal(bytes(1ull << 50), "1.0P");
	assert_string_equal(bytes(UINT64_MAX), "16.0E");
}

static void test_exact(void **state)
{
	static const char *const titles[] = { "BYTES" };
	struct tbl t;

	(void)state;
	assert_int_equal(tbl_init(&t, 1, titles, 1), 0);
	tbl_exact = 0;
	tbl_bytes(&t, 0, 0, 17843112075ull);
	assert_string_equal(tbl_cell(&t, 0, 0), "16.6G");
	tbl_exact = 1;
	tbl_bytes(&t, 0, 0, 17843112075ull);
	assert_string_equal(tbl_cell(&t, 0, 0), "17843112075");
	tbl_exact = 0;
	tbl_fini(&t);
}

static void test_lost(void **state)
{
	static const char lost[] =
		"cryptod closed the connection: it stopped or restarted";

	(void)state;
	assert_string_equal(cli_strerror(-EPIPE), lost);
	assert_string_equal(cli_strerror(-ECONNRESET), lost);
	assert_true(cli_conn_lost(-ENOTCONN));
	/* not the daemon going away: the library's own words */
	assert_false(cli_conn_lost(-ETIMEDOUT));
	assert_false(cli_conn_lost(0));
	assert_string_equal(cli_strerror(-ENOENT), cc_strerror(-ENOENT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_lost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
