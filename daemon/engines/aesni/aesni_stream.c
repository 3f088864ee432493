/* SPDX-License-Identifier: MIT */
/* The aesni engine's stream hooks: each algorithm to the file that
 * streams it (stream.h). */
#include "aesni.h"
#include "stream.h"
#include "session.h"

int aesni_stream_alg(unsigned alg)
{
	return aesni_stream_aead_alg(alg) || aesni_stream_cipher_alg(alg) ||
	       aesni_stream_mac_alg(alg);
}

void aesni_stream(void *wctx, struct engine_op *op, void *state)
{
	unsigned alg = op->sess->alg;
	if (aesni_stream_aead_alg(alg))
		aesni_stream_aead(wctx, op, state);
	else if (aesni_stream_cipher_alg(alg))
		aesni_stream_cipher(wctx, op, state);
	else if (aesni_stream_mac_alg(alg))
		aesni_stream_mac(wctx, op, state);
	else
		op->status = CRD_ST_BAD_PARAM;
}
