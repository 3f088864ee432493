/* SPDX-License-Identifier: MIT */
/*
 * The control protocol's Algorithm enum (proto/cryptod.proto) against
 * the list in include/cryptod/algs.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <cryptod/ring_abi.h>

#include "wire.h"

/* The control protocol's Algorithm enum is the list in algs.h: same
 * names (ALG_<ID>), same numbers, nothing more, nothing less. */
static void test_proto_algorithms_match_abi(void **state)
{
	const ProtobufCEnumDescriptor *d = &cryptod__algorithm__descriptor;
	unsigned n = 0;
#define X(id, num, ...)                                                        \
	do {                                                                   \
		const ProtobufCEnumValue *v =                                  \
			protobuf_c_enum_descriptor_get_value_by_name(          \
				d, "ALG_" #id);                                \
		if (!v)                                                        \
			fail_msg("cryptod.proto lacks ALG_" #id);              \
		if (v->value != num)                                           \
			fail_msg("ALG_" #id " is %d in cryptod.proto, "        \
				 "%d in algs.h",                               \
				 v->value, num);                               \
		n++;                                                           \
	} while (0);
	CRD_ALGORITHMS(X)
#undef X
	/* ALG_NONE (0) besides. */
	assert_int_equal(d->n_values, n + 1);
	assert_int_equal(n, CRD_ALG_MAX_ - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proto_algorithms_match_abi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
