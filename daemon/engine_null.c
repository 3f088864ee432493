/* SPDX-License-Identifier: MIT */
/*
 * null: copies source to destination and nothing else, so that a
 * benchmark through it measures the service's own per-op cost.
 */
#include "engine.h"
#include "session.h"

#include <string.h>

#include <cryptod/ring_abi.h>

static int null_probe(char *why, size_t len)
{
	why[0] = '\0';
	return 0;
}

static int null_supports(enum alg alg)
{
	return alg == ALG_NULL;
}

static int null_session_init(struct session *s, const uint8_t *key,
			     size_t key_len)
{
	return 0;
}

static int null_op_check(const struct session *s, uint8_t iv_len,
			 uint32_t aad_len)
{
	return CRD_ST_OK;
}

static void *null_worker_init(void)
{
	static char token; /* no state; non-NULL means ready */
	return &token;
}

static void null_worker_fini(void *wctx)
{
}

static void null_process(void *wctx, struct engine_op *ops, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		/* Validation guarantees identical or disjoint ranges. */
		if (ops[i].dst != ops[i].src)
			memcpy(ops[i].dst, ops[i].src, ops[i].len);
		ops[i].status = CRD_ST_OK;
	}
}

const struct engine engine_null = {
	.name = "null",
	.probe = null_probe,
	.supports = null_supports,
	.session_init = null_session_init,
	.op_check = null_op_check,
	.worker_init = null_worker_init,
	.worker_fini = null_worker_fini,
	.process = null_process,
};
