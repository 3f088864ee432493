/* SPDX-License-Identifier: MIT */
/*
 * cc_crypt(): one op, copied in and out of a small queue the connection
 * opens on first use. For callers who want no batching; the zero-copy
 * burst API is the fast path.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

#include <cryptod/clock.h>

enum { SYNC_MIN_ARENA = 256 << 10 };

/* Make sure the sync queue's arena holds need bytes. */
int sync_queue(struct cc_conn *c, uint64_t need)
{
	if (c->sync_q && cc_arena_size(c->sync_q) >= need)
		return 0;
	uint64_t size = SYNC_MIN_ARENA;
	while (size < need && size < CRD_ARENA_MAX_SIZE)
		size *= 2;
	if (size < need)
		return -E2BIG;
	cc_queue_close(c->sync_q);
	c->sync_q = NULL;
	struct cc_queue_params p = { .sq_entries = 8,
				     .cq_entries = 8,
				     .arena_size = size };
	return cc_queue_open(c, &p, &c->sync_q);
}

/*
 * Run op and wait for its own completion. Each call tags its op with a
 * fresh sequence number and ignores any other completion, so a
 * completion left over from an abandoned call can never be taken for
 * this one.
 */
int sync_run(struct cc_conn *c, struct cc_op *op, uint32_t *out_len)
{
	struct cc_queue *q = c->sync_q;
	op->user_data = ++c->sync_seq;
	int n = cc_enqueue_burst(q, op, 1);
	if (n < 0)
		return n;
	if (n == 0)
		return -EBUSY; /* only after an abandoned call: the caller resets */
	struct cc_completion cpl;
	for (;;) {
		n = cc_dequeue_burst(q, &cpl, 1);
		if (n < 0)
			return n;
		if (n == 1) {
			if (cpl.user_data == op->user_data) {
				if (out_len)
					*out_len = cpl.len;
				return cpl.status;
			}
			continue; /* stale: from an abandoned call */
		}
		int w = cc_wait(q, CRD_WAIT_MAX_MS);
		if (w < 0)
			return w;
		if (w == 0)
			return -ETIMEDOUT;
	}
}

/* A message longer than one op: the pieces of a stream (stream.c).
 * XTS is not among them: its one-shot op is one data unit. */
static int sync_stream(struct cc_conn *c, uint32_t session, enum cc_dir dir,
		       const void *iv, unsigned iv_len, const void *aad,
		       size_t aad_len, const void *in, void *out, size_t len,
		       void *tag)
{
	if (c->sess_alg[session] == CC_ALG_AES_XTS)
		return -E2BIG;
	struct cc_stream_params p = { .session = session,
				      .dir = dir,
				      .iv = iv,
				      .iv_len = iv_len,
				      .aad = aad,
				      .aad_len = aad_len,
				      .msg_len = len };
	struct cc_stream *s;
	int err = cc_stream_open(c, &p, &s);
	if (err)
		return err;
	int writes = !crd_alg_auth_only(c->sess_alg[session]);
	size_t n1 = 0, n2 = 0;
	err = cc_stream_update(s, in, len, out, &n1);
	if (!err)
		err = cc_stream_final(s, writes ? (uint8_t *)out + n1 : NULL,
				      &n2, tag);
	if (err && writes)
		memset(out, 0, len); /* forged or failed: release nothing */
	cc_stream_free(s);
	return err;
}

int cc_crypt(struct cc_conn *c, uint32_t session, enum cc_dir dir,
	     const void *iv, unsigned iv_len, const void *aad, size_t aad_len,
	     const void *in, void *out, size_t len, void *tag)
{
	if (session == 0 || session > c->max_sessions)
		return CC_ERR_NO_SESSION;
	unsigned tag_len = c->tag_len[session];
	/* Authentication only (GMAC, MACs, digests): in is read, nothing
	 * is written but the tag. */
	int writes = !crd_alg_auth_only(c->sess_alg[session]);
	/* The 3GPP algorithms count len in bits: in and out hold
	 * ceil(len / 8) bytes, which are copied whole. */
	if (aad_len > CRD_AAD_MAX || iv_len > CRD_IV_ARENA_MAX ||
	    (iv_len && !iv))
		return -EINVAL;
	if (len > CRD_OP_MAX_LEN && !crd_alg_bit_len(c->sess_alg[session])) {
		if ((!in || (writes && !out)) || (aad_len && !aad) ||
		    (tag_len && !tag))
			return -EINVAL;
		return sync_stream(c, session, dir, iv, iv_len, aad, aad_len,
				   in, out, len, tag);
	}
	if (len > (uint64_t)CRD_OP_MAX_LEN * 8)
		return -EINVAL;
	size_t bytes = crd_len_bytes(c->sess_alg[session], (uint32_t)len);
	if (bytes > CRD_OP_MAX_LEN)
		return -EINVAL;
	if ((len && (!in || (writes && !out))) || (aad_len && !aad) ||
	    (tag_len && !tag))
		return -EINVAL;

	/* Layout: data | aad | iv | tag, each 64-byte aligned; the IV only
	 * when the descriptor cannot hold it. */
	const unsigned iv_arena = iv_len > CRD_IV_MAX ? iv_len : 0;
	uint64_t aad_off = crd_align_up(bytes, 64);
	uint64_t iv_off = aad_off + crd_align_up(aad_len, 64);
	uint64_t tag_off = iv_off + crd_align_up(iv_arena, 64);
	uint64_t need = tag_off + 64;

	uint8_t *base;
	int err = sync_begin(c, need, &base);
	if (err)
		return err;
	if (bytes)
		memcpy(base, in, bytes);
	if (aad_len)
		memcpy(base + aad_off, aad, aad_len);
	if (iv_arena)
		memcpy(base + iv_off, iv, iv_arena);
	if (tag_len && dir == CC_DECRYPT)
		memcpy(base + tag_off, tag, tag_len);

	struct cc_op op = {
		.session = session,
		.dir = dir,
		.src = base,
		.len = len,
		.aad = aad_len ? base + aad_off : NULL,
		.aad_len = aad_len,
		.tag = base + tag_off,
		.iv = iv_arena ? base + iv_off : iv,
		.iv_len = iv_len,
	};
	err = sync_run(c, &op, NULL);
	if (err == CC_OK) {
		if (bytes && writes)
			memcpy(out, base, bytes);
		if (tag_len && dir == CC_ENCRYPT)
			memcpy(tag, base + tag_off, tag_len);
	} else if (err == CC_ERR_AUTH_FAILED && bytes && writes) {
		memset(out, 0, bytes); /* forged: release no plaintext */
	}
	return sync_end(c, base, need, err < 0 && err > -1000, err);
}

int sync_begin(struct cc_conn *c, uint64_t need, uint8_t **base)
{
	pthread_mutex_lock(&c->sync_lock);
	int err = sync_queue(c, need);
	if (!err && !(*base = cc_buf_alloc(c->sync_q, need)))
		err = -ENOMEM;
	if (err)
		pthread_mutex_unlock(&c->sync_lock);
	return err;
}

int sync_end(struct cc_conn *c, uint8_t *base, uint64_t need, int lost, int err)
{
	if (lost) {
		/* The buffer is not ours to reuse. */
		cc_queue_close(c->sync_q);
		c->sync_q = NULL;
	} else {
		memset(base, 0, need);
		cc_buf_free(c->sync_q, base);
	}
	pthread_mutex_unlock(&c->sync_lock);
	return err;
}
