/* SPDX-License-Identifier: MIT */
/* The aesni engine's stream hook: each kind of algorithm to the file that
 * streams it (stream.h). Which algorithms reach it is the capability
 * rows' say (engine_streams()). */
#include "aesni.h"
#include "stream.h"
#include "session.h"

void aesni_stream(void *wctx, struct engine_op *op, void *state)
{
	switch (crd_alg_kind(op->sess->alg)) {
	case CRD_KIND_AEAD:
		aesni_stream_aead(wctx, op, state);
		break;
	case CRD_KIND_CIPHER:
		aesni_stream_cipher(wctx, op, state);
		break;
	case CRD_KIND_MAC:
	case CRD_KIND_HASH:
		aesni_stream_mac(wctx, op, state);
		break;
	default:
		op->status = CRD_ST_BAD_PARAM;
	}
}
