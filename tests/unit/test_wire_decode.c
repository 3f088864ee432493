/* SPDX-License-Identifier: MIT */
/*
 * Decoding control messages (wire_decode(), proto/wire.c): malformed
 * protobuf is refused, random bytes never crash the decoder, well-formed
 * bytes decode, and a string field with a NUL inside is refused whole
 * (protobuf-c would hand it over cut at the NUL).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

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

/* Pack env, whose strings hold 0x01 where the wire is to carry a NUL,
 * and turn every 0x01 inside the packed string marker into a NUL. */
static size_t pack_nul(const Cryptod__Envelope *env, const char *marker,
		       uint8_t *buf)
{
	size_t n = cryptod__envelope__pack(env, buf);
	size_t ml = strlen(marker);
	uint8_t *at = memmem(buf, n, marker, ml);
	assert_non_null(at);
	for (size_t i = 0; i < ml; i++)
		if (at[i] == 0x01)
			at[i] = 0;
	return n;
}

/* The key name, "a\0/../../evil" (13 bytes on the wire, the
 * name field of a KeyRequest), and NULs in strings at every depth. */
static void test_decode_nul_in_string(void **state)
{
	static uint8_t buf[4096];
	static char evil[] = "a\x01/../../evil";
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = 9;

	/* KeyRequest.name */
	Cryptod__KeyRequest kr = CRYPTOD__KEY_REQUEST__INIT;
	kr.op = CRYPTOD__KEY_OP__KEY_DELETE;
	kr.name = evil;
	env.body_case = CRYPTOD__ENVELOPE__BODY_KEY_REQUEST;
	env.key_request = &kr;
	size_t n = pack_nul(&env, evil, buf);
	assert_null(wire_decode(buf, n));
	/* ...and the same bytes without the NUL decode, name whole. */
	n = cryptod__envelope__pack(&env, buf);
	Cryptod__Envelope *r = wire_decode(buf, n);
	assert_non_null(r);
	assert_string_equal(r->key_request->name, evil);
	wire_free(r);

	/* Hello.client_name, CreateSession.engine and .key_name */
	Cryptod__Hello h = CRYPTOD__HELLO__INIT;
	h.client_name = evil;
	env.body_case = CRYPTOD__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	assert_null(wire_decode(buf, pack_nul(&env, evil, buf)));
	Cryptod__CreateSession cs = CRYPTOD__CREATE_SESSION__INIT;
	cs.engine = evil;
	env.body_case = CRYPTOD__ENVELOPE__BODY_CREATE_SESSION;
	env.create_session = &cs;
	assert_null(wire_decode(buf, pack_nul(&env, evil, buf)));
	cs.engine = "";
	cs.key_name = evil;
	assert_null(wire_decode(buf, pack_nul(&env, evil, buf)));

	/* Two levels down, in a repeated message: KeyReply.keys[1].name */
	Cryptod__KeyInfo k0 = CRYPTOD__KEY_INFO__INIT,
			 k1 = CRYPTOD__KEY_INFO__INIT, *ks[2] = { &k0, &k1 };
	k0.name = "fine";
	k1.name = evil;
	Cryptod__KeyReply kp = CRYPTOD__KEY_REPLY__INIT;
	kp.n_keys = 2;
	kp.keys = ks;
	env.body_case = CRYPTOD__ENVELOPE__BODY_KEY_REPLY;
	env.key_reply = &kp;
	assert_null(wire_decode(buf, pack_nul(&env, evil, buf)));
	k1.name = "fine too";
	r = wire_decode(buf, cryptod__envelope__pack(&env, buf));
	assert_non_null(r);
	assert_int_equal(r->key_reply->n_keys, 2);
	wire_free(r);

	/* NULs in bytes fields are data: a key of zeros decodes. */
	static uint8_t zeros[32];
	cs.key_name = "";
	cs.key.data = zeros;
	cs.key.len = sizeof(zeros);
	env.body_case = CRYPTOD__ENVELOPE__BODY_CREATE_SESSION;
	env.create_session = &cs;
	r = wire_decode(buf, cryptod__envelope__pack(&env, buf));
	assert_non_null(r);
	assert_int_equal(r->create_session->key.len, 32);
	wire_free(r);

	/* An unknown field (number 1000, length-delimited) with NULs: not
	 * a string of ours, skipped as protobuf-c skips it. */
	n = cryptod__envelope__pack(&env, buf);
	static const uint8_t unknown[] = { 0xc2, 0x3e, 0x03, 0x00, 0x00, 0x00 };
	memcpy(buf + n, unknown, sizeof(unknown));
	r = wire_decode(buf, n + sizeof(unknown));
	assert_non_null(r);
	wire_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_garbage),
		cmocka_unit_test(test_decode_sanity),
		cmocka_unit_test(test_decode_nul_in_string),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
