/* SPDX-License-Identifier: MIT */
/*
 * Key pairs' one-shot ops (cryptoclient.h, docs/asymmetric.md): sign,
 * verify, derive and RSA-OAEP, copied in and out of the connection's
 * one-shot queue as cc_crypt() does (sync.c). The async path is any op
 * with a key pair's session: queue.c.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

int cc_pk_op(struct cc_conn *c, uint32_t session, enum cc_dir dir,
	     const struct cc_pk_params *params, const void *in, size_t in_len,
	     const void *aad, size_t aad_len, void *out, size_t *out_len)
{
	if (session == 0 || session > c->max_sessions)
		return CC_ERR_NO_SESSION;
	enum cc_alg alg = (enum cc_alg)c->sess_alg[session];
	if (cc_alg_kind(alg) != CC_KIND_PKEY)
		return CC_ERR_BAD_PARAM; /* not a key pair's session */
	const int writes = dir != CC_VERIFY;
	const size_t room = writes ? cc_alg_tag_len(alg) : 0;
	if (dir < CC_ENCRYPT || dir > CC_DERIVE || in_len > CRD_OP_MAX_LEN ||
	    aad_len > CRD_AAD_MAX || (in_len && !in) || (aad_len && !aad) ||
	    (writes && (!out || !out_len)))
		return -EINVAL;

	/* Layout: in | aad | out, each 64-byte aligned. */
	uint64_t aad_off = crd_align_up(in_len, 64);
	uint64_t out_off = aad_off + crd_align_up(aad_len, 64);
	uint64_t need = out_off + crd_align_up(room ? room : 1, 64);

	uint8_t *base;
	int err = sync_begin(c, need, &base);
	if (err)
		return err;
	if (in_len)
		memcpy(base, in, in_len);
	if (aad_len)
		memcpy(base + aad_off, aad, aad_len);
	struct cc_op op = {
		.session = session,
		.dir = dir,
		.src = base,
		.len = (uint32_t)in_len,
		.dst = writes ? base + out_off : NULL,
		.aad = aad_len ? base + aad_off : NULL,
		.aad_len = (uint32_t)aad_len,
		.iv = params,
		.iv_len = params ? sizeof(*params) : 0,
	};
	uint32_t n = 0;
	err = sync_run(c, &op, &n);
	int lost = err < 0 && err > -1000;
	if (err == CC_OK && writes) {
		if (n > *out_len)
			err = -ENOSPC;
		else
			memcpy(out, base + out_off, n);
		*out_len = err ? 0 : n;
	}
	/* a shared secret or a plaintext does not linger there */
	return sync_end(c, base, need, lost, err);
}

int cc_pk_sign(struct cc_conn *c, uint32_t session,
	       const struct cc_pk_params *params, const void *in, size_t in_len,
	       void *sig, size_t *sig_len)
{
	return cc_pk_op(c, session, CC_SIGN, params, in, in_len, NULL, 0, sig,
			sig_len);
}

int cc_pk_verify(struct cc_conn *c, uint32_t session,
		 const struct cc_pk_params *params, const void *in,
		 size_t in_len, const void *sig, size_t sig_len)
{
	return cc_pk_op(c, session, CC_VERIFY, params, in, in_len, sig, sig_len,
			NULL, NULL);
}

int cc_pk_derive(struct cc_conn *c, uint32_t session, const void *peer,
		 size_t peer_len, void *secret, size_t *secret_len)
{
	return cc_pk_op(c, session, CC_DERIVE, NULL, peer, peer_len, NULL, 0,
			secret, secret_len);
}

int cc_pk_encrypt(struct cc_conn *c, uint32_t session,
		  const struct cc_pk_params *params, const void *label,
		  size_t label_len, const void *in, size_t in_len, void *out,
		  size_t *out_len)
{
	return cc_pk_op(c, session, CC_ENCRYPT, params, in, in_len, label,
			label_len, out, out_len);
}

int cc_pk_decrypt(struct cc_conn *c, uint32_t session,
		  const struct cc_pk_params *params, const void *label,
		  size_t label_len, const void *in, size_t in_len, void *out,
		  size_t *out_len)
{
	return cc_pk_op(c, session, CC_DECRYPT, params, in, in_len, label,
			label_len, out, out_len);
}
