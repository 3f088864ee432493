/* SPDX-License-Identifier: MIT */
/* Stream pieces of AES-XTS per data unit (stream.h). Not written yet: no algorithm
 * streams here. */
#include "stream.h"

int ossl_stream_alg(unsigned alg)
{
	(void)alg;
	return 0;
}

void ossl_stream(void *wctx, struct engine_op *op, void *state)
{
	(void)wctx;
	(void)state;
	op->status = CRD_ST_BAD_PARAM;
}
