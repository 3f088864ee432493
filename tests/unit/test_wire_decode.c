/* SPDX-License-Identifier: MIT */
/*
 * Decoding control messages (wire_decode(), proto/wire.c): malformed
 * protobuf is refused, random bytes never crash the decoder, and
 * well-formed bytes decode.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "wire.h"

static void test_decode_garbage(void **state)
{
	/* Each is malformed protobuf, not merely unknown fields. (Strings
	 * are not checked for UTF-8 by protobuf-c: not a case here.) */
	static const struct {
		const char *what;
		uint8_t bytes[16];
		size_t len;
	} bad[] = {
		{ "unterminated varint",
		  { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		    0xff, 0xff },
		  12 },
		{ "truncated seq varint", { 0x08, 0x80 }, 2 },
		{ "field number 0", { 0x00, 0x01 }, 2 },
		{ "wire type 7", { 0x0f, 0x01 }, 2 },
		{ "length past end", { 0x52, 0x7f, 0x08, 0x01 }, 4 },
		{ "huge length", { 0x52, 0xff, 0xff, 0xff, 0xff, 0x0f }, 6 },
		{ "hello with bad inner varint",
		  { 0x52, 0x02, 0x08, 0x80 },
		  4 },
		{ "truncated fixed64", { 0x09, 0x01, 0x02 }, 3 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		Cryptod__Envelope *r = wire_decode(bad[i].bytes, bad[i].len);
		if (r) {
			wire_free(r);
			fail_msg("decoded garbage: %s", bad[i].what);
		}
	}

	/* Random bytes never crash the decoder (decode or NULL). */
	uint8_t rnd[256];
	srand(7);
	for (int i = 0; i < 20000; i++) {
		size_t len = (size_t)(rand() % (int)sizeof(rnd));
		for (size_t j = 0; j < len; j++)
			rnd[j] = (uint8_t)rand();
		wire_free(wire_decode(rnd, len));
	}
}

static void test_decode_sanity(void **state)
{
	/* The counterpart of the garbage cases: well-formed bytes decode. */
	static const uint8_t seq5[] = { 0x08, 0x05 };
	static const uint8_t hello[] = { 0x08, 0x02, 0x52, 0x02, 0x08, 0x01 };
	Cryptod__Envelope *r = wire_decode(seq5, sizeof(seq5));
	assert_non_null(r);
	assert_int_equal(r->seq, 5);
	assert_int_equal(r->body_case, CRYPTOD__ENVELOPE__BODY__NOT_SET);
	wire_free(r);
	r = wire_decode(hello, sizeof(hello));
	assert_non_null(r);
	assert_int_equal(r->seq, 2);
	assert_int_equal(r->body_case, CRYPTOD__ENVELOPE__BODY_HELLO);
	assert_int_equal(r->hello->abi_version, 1);
	wire_free(r);
	wire_free(NULL); /* no-op */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_garbage),
		cmocka_unit_test(test_decode_sanity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
