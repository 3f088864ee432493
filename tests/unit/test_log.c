/* SPDX-License-Identifier: MIT */
/*
 * Logging (daemon/log.c): levels, the "<N>" priority prefix only when
 * stderr really is the journal stream $JOURNAL_STREAM names, the
 * per-uid rate limit on lines clients cause, and the escaping that makes
 * every line one line of printable ASCII whatever a client sent.
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

/* Two uids that shared a bucket of the old hashed table, interleaved:
 * each took the bucket over from the other and reset its count, so 300
 * messages got 300 lines through. The limit holds per uid now. */
static void colliding_uids_share_nothing(void **state)
{
	uid_t a = 2000, b = a + 1;
	while (((a * 2654435761u) >> 26) != ((b * 2654435761u) >> 26))
		b++;
	capture();
	log_init(LOG_INFO_);
	for (int i = 0; i < 150; i++) {
		log_peer(a, LOG_WARN_, "flood from a #%d", i);
		log_peer(b, LOG_WARN_, "flood from b #%d", i);
	}
	assert_int_equal(release("flood from a", NULL, 0), LOG_RATE_BURST);
	capture();
	for (int i = 0; i < 10; i++)
		log_peer(b, LOG_WARN_, "flood from b, more");
	assert_int_equal(release("flood from b", NULL, 0), 0);
}

/* Any set of uids: more uids than the table has slots still get a
 * bounded number of lines, and none more than its limit plus the
 * shared overflow's. */
static void many_uids_bounded(void **state)
{
	enum { UIDS = 1000 };
	capture();
	log_init(LOG_INFO_);
	for (int round = 0; round < 3 * LOG_RATE_BURST; round++)
		for (uid_t u = 0; u < UIDS; u++)
			log_peer(50000 + u, LOG_WARN_, "many #%u", u);
	unsigned lines = release("many #", NULL, 0);
	assert_true(lines <= 256 * LOG_RATE_BURST + LOG_RATE_BURST);
	capture();
	for (int i = 0; i < 3 * LOG_RATE_BURST; i++)
		log_peer(50000 + 7, LOG_WARN_, "one of many #7");
	assert_true(release("one of many", NULL, 0) <= 2 * LOG_RATE_BURST);
}

/* The whole capture (at most cap - 1 bytes), NUL-terminated; stderr
 * restored. Its length. */
static size_t release_all(char *buf, size_t cap)
{
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	memcpy(path + strlen(path) - 6, "XXXXXX", 6);
	return n;
}

/* Every line of buf starts with prefix and holds printable ASCII only;
 * the number of lines. */
static unsigned lines_clean(const char *buf, size_t n, const char *prefix)
{
	unsigned lines = 0;
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(buf + i, '\n', n - i);
		assert_non_null(nl); /* every line ends */
		size_t len = (size_t)(nl - (buf + i));
		if (strncmp(buf + i, prefix, strlen(prefix)))
			fail_msg("line %u does not start with '%s': %.*s",
				 lines, prefix, (int)len, buf + i);
		for (size_t j = 0; j < len; j++) {
			unsigned char c = (unsigned char)buf[i + j];
			if (c < 0x20 || c >= 0x7f)
				fail_msg("line %u: byte 0x%02x at %zu", lines,
					 c, j);
		}
		lines++;
		i += len + 1;
	}
	return lines;
}

/*
 * A client's string in a log line cannot make a line of its own: the key
 * name of issue 25 (a newline, then a whole forged line), carriage
 * returns, terminal escapes (ESC [ and the one-byte C1 CSI 0x9b), DEL,
 * bytes >= 0x80, and 4 KiB of them, through log_msg and log_peer.
 */
static void client_strings_cannot_forge_lines(void **state)
{
	static char buf[1 << 16];
	const char *forged = "z\ncryptod[info]: keys: X deleted by uid 0\n";
	char big[4097];
	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = "\n\r\t\x1b\x9b\x7f\xff<3>"[i % 10];
	big[sizeof(big) - 1] = '\0';

	unsetenv("JOURNAL_STREAM");
	capture();
	log_init(LOG_INFO_);
	log_warn("refused named key '%s'", forged);
	log_peer(4242, LOG_WARN_, "client 1: refused named key '%.64s'",
		 forged);
	log_info("esc '%s'", "\x1b[2J\x1b]0;title\x07\x9b"
			     "31m\x7f\xc3\xa9\r");
	log_peer(4243, LOG_WARN_, "big '%s'", big);
	size_t n = release_all(buf, sizeof(buf));
	assert_int_equal(lines_clean(buf, n, "cryptod["), 4);
	assert_null(strstr(buf, "\ncryptod[info]: keys: X"));
	/* What was escaped is still there to read. */
	assert_non_null(strstr(buf, "'z\\ncryptod[info]: keys: X deleted by "
				    "uid 0\\n'"));
	assert_non_null(strstr(buf, "\\x1b[2J\\x1b]0;title\\x07\\x9b31m"
				    "\\x7f\\xc3\\xa9\\r'"));
}

/* Under journald a line's priority is the "<N>" at its start: a "<3>"
 * in a client's string, after a newline or not, never starts a line. */
static void journal_priority_cannot_be_chosen(void **state)
{
	static char buf[1 << 16];
	char js[64];
	struct stat st;
	capture();
	assert_int_equal(fstat(2, &st), 0);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	log_init(LOG_INFO_);
	log_peer(4244, LOG_INFO_, "hello from '%s'", "x\n<3>cryptod: forged");
	log_info("%s", "<0>at the start of the text");
	log_info("cr '%s'", "x\r<2>after a carriage return");
	size_t n = release_all(buf, sizeof(buf));
	unsetenv("JOURNAL_STREAM");
	log_init(LOG_INFO_);
	assert_int_equal(lines_clean(buf, n, "<6>"), 3);
	assert_null(strstr(buf, "\n<3>"));
	assert_null(strstr(buf, "\n<0>"));
	assert_null(strstr(buf, "\n<2>"));
}

/* log_escape(): the rule itself, bounded, idempotent. */
static void escape_rule(void **state)
{
	char out[64], again[64];
	assert_int_equal(
		log_escape(out, sizeof(out), "a\nb\r\t\x1b\x9b\x7f\xff"),
		strlen("a\\nb\\r\\t\\x1b\\x9b\\x7f\\xff"));
	assert_string_equal(out, "a\\nb\\r\\t\\x1b\\x9b\\x7f\\xff");
	/* Escaped text, and clean text with backslashes, pass unchanged. */
	log_escape(again, sizeof(again), out);
	assert_string_equal(again, out);
	log_escape(out, sizeof(out), "cli \"q\" \\back <3>");
	assert_string_equal(out, "cli \"q\" \\back <3>");
	/* Bounded, and an escape that does not fit is left out whole. */
	assert_int_equal(log_escape(out, 6, "abc\x01"), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(log_escape(out, 8, "abc\x01"), 7);
	assert_string_equal(out, "abc\\x01");
	assert_int_equal(log_escape(out, sizeof(out), NULL), 0);
	assert_string_equal(out, "");
	assert_int_equal(log_escape(out, 0, "x"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(levels_and_plain_prefix),
		cmocka_unit_test(journal_prefix),
		/* before the tests that fill the rate limit's slots */
		cmocka_unit_test(client_strings_cannot_forge_lines),
		cmocka_unit_test(journal_priority_cannot_be_chosen),
		cmocka_unit_test(escape_rule),
		cmocka_unit_test(per_uid_rate_limit),
		cmocka_unit_test(colliding_uids_share_nothing),
		cmocka_unit_test(many_uids_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
