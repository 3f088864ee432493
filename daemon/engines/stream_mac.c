/* SPDX-License-Identifier: MIT */
/* Stream pieces of HMAC, SHA and AES-CMAC (stream.h). Not written yet: no algorithm
 * streams here. */
#include "stream.h"

int aesni_stream_mac_alg(unsigned alg)
{
	(void)alg;
	return 0;
}

void aesni_stream_mac(void *wctx, struct engine_op *op, void *state)
{
	(void)wctx;
	(void)state;
	op->status = CRD_ST_BAD_PARAM;
}
