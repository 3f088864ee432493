/* SPDX-License-Identifier: MIT */
/*
 * The /proc/crypto reader the kernel engine binds by: it must pick the
 * highest-priority usable driver, keep pcrypt instances and the rest
 * apart, and ignore internal and failed entries and malformed lines.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kproc.h"

/* Shaped like Debian 6.1's /proc/crypto with pcrypt(gcm(aes)) made. */
static const char proc[] =
	"name         : gcm(aes)\n"
	"driver       : pcrypt(generic-gcm-aesni)\n"
	"module       : pcrypt\n"
	"priority     : 500\n"
	"refcnt       : 1\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : aead\n"
	"async        : yes\n"
	"\n"
	"name         : gcm(aes)\n"
	"driver       : generic-gcm-aesni\n"
	"module       : aesni_intel\n"
	"priority     : 400\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : aead\n"
	"\n"
	"name         : __gcm(aes)\n"
	"driver       : __generic-gcm-aesni\n"
	"priority     : 400\n"
	"selftest     : passed\n"
	"internal     : yes\n"
	"type         : aead\n"
	"\n"
	"name         : gcm(aes)\n"
	"driver       : gcm_base(ctr(aes-aesni),ghash-generic)\n"
	"priority     : 300\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : aead\n"
	"\n"
	"name         : gcm(aes)\n"
	"driver       : broken-gcm\n"
	"priority     : 9999\n"
	"selftest     : unknown\n"
	"internal     : no\n"
	"type         : aead\n"
	"\n"
	"name         : gcm(aes)\n"
	"driver       : internal-gcm\n"
	"priority     : 9999\n"
	"selftest     : passed\n"
	"internal     : yes\n"
	"type         : aead\n"
	"\n"
	"name         : cbc(aes)\n"
	"driver       : cbc-aes-aesni\n"
	"priority     : 400\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"\n"
	"name         : cbc(aes)\n"
	"driver       : cbc(aes-generic)\n"
	"priority     : 100\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"\n"
	"name         : aes\n"
	"driver       : aes-aesni\n"
	"priority     : 300\n"
	"type         : cipher\n"
	"\n"
	"name         : lrw(aes)\n"
	"driver       : lrw(ecb-aes-aesni)\n"
	"priority     : 500\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher"; /* no final newline: the last entry counts */

static void test_plain_highest_priority(void **state)
{
	(void)state;
	char d[KPROC_NAME_MAX];
	int prio = 0;
	assert_int_equal(kproc_find(proc, "gcm(aes)", "aead", KPROC_PLAIN, d,
				    sizeof(d), &prio),
			 0);
	assert_string_equal(d, "generic-gcm-aesni");
	assert_int_equal(prio, 400);
	assert_int_equal(kproc_find(proc, "cbc(aes)", "skcipher", KPROC_PLAIN,
				    d, sizeof(d), &prio),
			 0);
	assert_string_equal(d, "cbc-aes-aesni");
}

static void test_pcrypt_only(void **state)
{
	(void)state;
	char d[KPROC_NAME_MAX];
	int prio = 0;
	assert_int_equal(kproc_find(proc, "gcm(aes)", "aead", KPROC_PCRYPT, d,
				    sizeof(d), &prio),
			 0);
	assert_string_equal(d, "pcrypt(generic-gcm-aesni)");
	assert_int_equal(prio, 500);
	assert_int_equal(kproc_find(proc, "cbc(aes)", "skcipher", KPROC_PCRYPT,
				    d, sizeof(d), &prio),
			 -ENOENT);
}

static void test_last_entry_without_newline(void **state)
{
	(void)state;
	char d[KPROC_NAME_MAX];
	int prio = 0;
	assert_int_equal(kproc_find(proc, "lrw(aes)", "skcipher", KPROC_PLAIN,
				    d, sizeof(d), &prio),
			 0);
	assert_string_equal(d, "lrw(ecb-aes-aesni)");
}

static void test_negative(void **state)
{
	(void)state;
	char d[KPROC_NAME_MAX], tiny[4];
	int prio = 0;
	/* wrong type, unknown name, a cipher without selftest line */
	assert_int_equal(kproc_find(proc, "gcm(aes)", "skcipher", KPROC_PLAIN,
				    d, sizeof(d), &prio),
			 -ENOENT);
	assert_int_equal(kproc_find(proc, "xts(aes)", "skcipher", KPROC_PLAIN,
				    d, sizeof(d), &prio),
			 -ENOENT);
	assert_int_equal(kproc_find(proc, "aes", "cipher", KPROC_PLAIN, d,
				    sizeof(d), &prio),
			 0);
	assert_int_equal(kproc_find(proc, "gcm(aes)", "aead", KPROC_PLAIN, tiny,
				    sizeof(tiny), &prio),
			 -ENAMETOOLONG);
	assert_int_equal(kproc_find("", "gcm(aes)", "aead", KPROC_PLAIN, d,
				    sizeof(d), &prio),
			 -ENOENT);
	/* malformed: no colon, bad priority, prefix-only keys */
	static const char bad[] = "name gcm(aes)\n"
				  "driver       : x\n"
				  "priority     : 12z\n"
				  "type         : aead\n\n"
				  "names        : gcm(aes)\n"
				  "driver       : y\n"
				  "priority     : 5\n"
				  "type         : aead\n";
	assert_int_equal(kproc_find(bad, "gcm(aes)", "aead", KPROC_PLAIN, d,
				    sizeof(d), &prio),
			 -ENOENT);
}

static void test_read_file(void **state)
{
	(void)state;
	char path[] = "/tmp/cryptod-kproc-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	/* bigger than the first buffer, to exercise growth */
	for (int i = 0; i < 100; i++)
		assert_int_equal(write(fd, proc, sizeof(proc) - 1),
				 (ssize_t)sizeof(proc) - 1);
	close(fd);
	char *t = kproc_read(path);
	assert_non_null(t);
	assert_int_equal(strlen(t), 100 * (sizeof(proc) - 1));
	free(t);
	unlink(path);
	errno = 0;
	assert_null(kproc_read("/nonexistent/cryptod"));
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_highest_priority),
		cmocka_unit_test(test_pcrypt_only),
		cmocka_unit_test(test_last_entry_without_newline),
		cmocka_unit_test(test_negative),
		cmocka_unit_test(test_read_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
