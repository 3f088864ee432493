/* SPDX-License-Identifier: MIT */
/*
 * null: copies source to destination and nothing else, so that a
 * benchmark through it measures the service's own per-op cost.
 */
#include "engine.h"
#include "session.h"

#include <string.h>

#include <cryptod/ring_abi.h>

static const struct alg_cap null_caps[] = {
	{ .alg = CRD_ALG_NULL,
	  .n_key = 1,
	  .key = { RANGE1(0) },
	  /* any IV the ring ABI carries, ignored (arena IVs cost what
	   * they cost the service) */
	  .n_iv = 1,
	  .iv = { { 0, CRD_IV_ARENA_MAX, 1 } },
	  NO_TAG,
	  .aad = { 0, CRD_AAD_MAX, 1 },
	  .min_len = 0,
	  .max_len = CRD_OP_MAX_LEN,
	  .block = 1,
	  .stream = 1 },
};

static int null_probe(const struct engine *e, char *why, size_t len)
{
	why[0] = '\0';
	return 0;
}

static int null_session_init(struct session *s, void *wctx, const uint8_t *key,
			     size_t key_len, const uint8_t *auth_key,
			     size_t auth_key_len)
{
	return 0;
}

static void *null_worker_init(const struct engine *e)
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

/* Streams of the null algorithm copy too: the stream machinery's own
 * cost, as the one-shot path measures the service's. */
static void null_stream(void *wctx, struct engine_op *op, void *state)
{
	null_process(wctx, op, 1);
}

const struct engine engine_null = {
	.name = "null",
	.caps = null_caps,
	.n_caps = sizeof(null_caps) / sizeof(null_caps[0]),
	.probe = null_probe,
	.session_init = null_session_init,
	.worker_init = null_worker_init,
	.worker_fini = null_worker_fini,
	.process = null_process,
	.stream = null_stream,
};
