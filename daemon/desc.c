/* SPDX-License-Identifier: MIT */
#include "desc.h"
#include "session.h"

static int desc_check(const struct crd_sqe *e, uint64_t arena_size,
		      const struct session *s, unsigned *tag_len)
{
	if (e->op != CRD_OP_ENCRYPT && e->op != CRD_OP_DECRYPT)
		return CRD_ST_BAD_DESC;
	if (e->flags & ~CRD_SQE_FLAGS_KNOWN)
		return CRD_ST_BAD_DESC;
	if (e->flags || e->src_nseg || e->dst_nseg ||
	    e->sl_off) /* not yet served */
		return CRD_ST_BAD_DESC;
	if (!s)
		return CRD_ST_NO_SESSION;

	/* tag_len 0 means "the session's"; anything else must match it. */
	unsigned t = e->tag_len ? e->tag_len : s->tag_len;
	if (t != s->tag_len)
		return CRD_ST_BAD_PARAM;
	if (e->iv_len > CRD_IV_MAX || e->aad_len > CRD_AAD_MAX ||
	    e->len > CRD_OP_MAX_LEN)
		return CRD_ST_BAD_PARAM;

	if (!desc_range_ok(e->src_off, e->len, arena_size) ||
	    !desc_range_ok(e->dst_off, e->len, arena_size) ||
	    !desc_range_ok(e->aad_off, e->aad_len, arena_size) ||
	    !desc_range_ok(e->tag_off, t, arena_size))
		return CRD_ST_BAD_RANGE;

	/* In place, or source and destination disjoint. What the daemon
	 * writes (dst, and the tag on encrypt) must not overlap what it
	 * reads besides that, or the result would depend on engine
	 * internals. */
	if (e->dst_off != e->src_off &&
	    desc_overlap(e->src_off, e->len, e->dst_off, e->len))
		return CRD_ST_BAD_RANGE;
	if (desc_overlap(e->tag_off, t, e->dst_off, e->len) ||
	    desc_overlap(e->tag_off, t, e->src_off, e->len) ||
	    desc_overlap(e->aad_off, e->aad_len, e->dst_off, e->len) ||
	    desc_overlap(e->aad_off, e->aad_len, e->tag_off, t))
		return CRD_ST_BAD_RANGE;

	*tag_len = t;
	return s->eng->op_check(s, e->iv_len, e->aad_len);
}

int desc_resolve(const struct crd_sqe *e, uint8_t *arena, uint64_t arena_size,
		 const struct session *s, struct engine_op *op)
{
	unsigned tag_len = 0;
	int st = desc_check(e, arena_size, s, &tag_len);
	op->status = st;
	if (st != CRD_ST_OK)
		return st;

	op->sess = s;
	op->src = arena + e->src_off;
	op->dst = arena + e->dst_off;
	op->aad = arena + e->aad_off;
	op->tag = arena + e->tag_off;
	op->iv = e->iv;
	op->len = e->len;
	op->aad_len = e->aad_len;
	op->iv_len = e->iv_len;
	op->tag_len = tag_len;
	op->op = e->op;
	return CRD_ST_OK;
}
