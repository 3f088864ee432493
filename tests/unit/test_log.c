/* SPDX-License-Identifier: MIT */
/*
 * Logging (daemon/log.c): levels, the "<N>" priority prefix only when
 * stderr really is the journal stream $JOURNAL_STREAM names, and the
 * per-uid rate limit on lines clients cause.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bounds.h"
#include "log.h"

static char path[] = "/tmp/test_log.XXXXXX";
static int saved_stderr = -1;

/* Point stderr at a fresh temp file. */
static void capture(void)
{
	fflush(stderr);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

/* Restore stderr; return how many lines of the capture contain needle
 * (all lines when needle is NULL) and copy the first into first. */
static unsigned release(const char *needle, char *first, size_t len)
{
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[1024];
	unsigned n = 0;
	if (first)
		first[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (needle && !strstr(line, needle))
			continue;
		if (first && !n)
			snprintf(first, len, "%.255s", line);
		n++;
	}
	fclose(f);
	unlink(path);
	memcpy(path + strlen(path) - 6, "XXXXXX", 6);
	return n;
}

static void levels_and_plain_prefix(void **state)
{
	char first[256];
	unsetenv("JOURNAL_STREAM");
	capture();
	log_init(LOG_INFO_);
	log_warn("w %d", 1);
	log_info("i %d", 2);
	log_debug("d %d", 3); /* below the level */
	assert_int_equal(release(NULL, first, sizeof(first)), 2);
	assert_string_equal(first, "cryptod[warn]: w 1\n");

	capture();
	log_set_level(LOG_ERR_);
	log_warn("hidden");
	log_err("shown");
	assert_int_equal(release(NULL, first, sizeof(first)), 1);
	assert_string_equal(first, "cryptod[error]: shown\n");
}

static void journal_prefix(void **state)
{
	char first[256], js[64];
	struct stat st;
	capture();
	assert_int_equal(fstat(2, &st), 0);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	log_init(LOG_INFO_);
	assert_true(log_stderr_is_journal());
	log_warn("to the journal");
	log_info("info too");
	assert_int_equal(release(NULL, first, sizeof(first)), 2);
	assert_string_equal(first, "<4>to the journal\n");

	/* Inherited by a process whose stderr is something else. */
	capture();
	setenv("JOURNAL_STREAM", "1:2", 1);
	log_init(LOG_INFO_);
	assert_false(log_stderr_is_journal());
	log_err("plain");
	assert_int_equal(release(NULL, first, sizeof(first)), 1);
	assert_string_equal(first, "cryptod[error]: plain\n");
	setenv("JOURNAL_STREAM", "garbage", 1);
	assert_false(log_stderr_is_journal());
	unsetenv("JOURNAL_STREAM");
}

static void per_uid_rate_limit(void **state)
{
	capture();
	log_init(LOG_INFO_);
	for (int i = 0; i < 3 * LOG_RATE_BURST; i++)
		log_peer(1001, LOG_WARN_, "flood from 1001 #%d", i);
	for (int i = 0; i < 3; i++)
		log_peer(1002, LOG_WARN_, "line from 1002 #%d", i);
	/* Below the level: neither printed nor counted. */
	for (int i = 0; i < 3 * LOG_RATE_BURST; i++)
		log_peer(1003, LOG_DEBUG_, "debug from 1003");
	log_peer(1003, LOG_WARN_, "warn from 1003");
	assert_int_equal(release("flood from 1001", NULL, 0), LOG_RATE_BURST);
	capture();
	log_peer(1002, LOG_WARN_, "again from 1002");
	log_peer(1001, LOG_WARN_, "still flooding");
	assert_int_equal(release(NULL, NULL, 0), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(levels_and_plain_prefix),
		cmocka_unit_test(journal_prefix),
		cmocka_unit_test(per_uid_rate_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
