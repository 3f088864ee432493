/* SPDX-License-Identifier: MIT */
/*
 * Every engine's capability rows against the algorithm table
 * (include/cryptod/algs.h): a row is for a known algorithm, appears once
 * per engine, takes the table's default tag (a session that names no tag
 * gets it, engines/session.c), and has an IV range exactly when the
 * table's IV flag says the algorithm takes one, and says it streams only
 * what the table says can (CRD_AF_STREAM). The openssl engine streams
 * every algorithm it serves that can stream (issue 27: a session routed
 * there streams as one on aesni does). A new row that disagrees
 * with the table fails here by engine and algorithm name, before any
 * client sees a capability the daemon cannot honour.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <cryptod/ring_abi.h>

#include "engine.h"
#include "names.h"

static void test_rows_agree_with_table(void **state)
{
	(void)state;
	assert_true(engine_count() >= 4);
	for (unsigned e = 0; e < engine_count(); e++) {
		const struct engine *eng = engine_get(e);
		uint8_t seen[256] = { 0 };

		for (unsigned i = 0; i < eng->n_caps; i++) {
			const struct alg_cap *c = &eng->caps[i];
			const char *n = crd_alg_name(c->alg);
			unsigned tag = crd_alg_tag_len(c->alg);
			int has_iv = !range_has(c->iv, c->n_iv, 0);

			if (!n)
				fail_msg("%s: row %u has unknown algorithm %u",
					 eng->name, i, c->alg);
			if (seen[c->alg]++)
				fail_msg("%s: two rows for %s", eng->name, n);
			if (!range_has(c->tag, c->n_tag, tag))
				fail_msg("%s: %s refuses the table's tag %u",
					 eng->name, n, tag);
			if (has_iv != !!(crd_alg_flags(c->alg) & CRD_AF_IV))
				fail_msg("%s: %s %s an IV, the table says "
					 "otherwise",
					 eng->name, n,
					 has_iv ? "requires" : "takes no");
			if (!c->n_key || !c->block)
				fail_msg("%s: %s has no key range or block",
					 eng->name, n);
		}
	}
}

/* The constants for static rows are the table's column. */
static void test_tag_constants(void **state)
{
	(void)state;
	assert_int_equal(CRD_TAG_AES_CBC_HMAC_SHA1,
			 crd_alg_tag_len(CRD_ALG_AES_CBC_HMAC_SHA1));
	assert_int_equal(CRD_TAG_SHA384, 48);
	assert_int_equal(CRD_TAG_AES_KW, crd_alg_tag_len(CRD_ALG_AES_KW));
	assert_int_equal(CRD_TAG_NULL, 0);
}

/* Streams: a row's .stream only where the table allows it; on openssl,
 * wherever the table allows it. */
static void test_stream_rows(void **state)
{
	(void)state;
	for (unsigned e = 0; e < engine_count(); e++) {
		const struct engine *eng = engine_get(e);
		int ossl = !strcmp(eng->name, "openssl");
		for (unsigned i = 0; i < eng->n_caps; i++) {
			unsigned alg = eng->caps[i].alg;
			if (eng->caps[i].stream && !crd_alg_streams(alg))
				fail_msg("%s: %s streams, the table says it "
					 "cannot",
					 eng->name, crd_alg_name(alg));
			if (ossl && crd_alg_streams(alg) &&
			    !engine_streams(eng, alg))
				fail_msg("openssl serves %s but does not "
					 "stream it",
					 crd_alg_name(alg));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_agree_with_table),
		cmocka_unit_test(test_tag_constants),
		cmocka_unit_test(test_stream_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
