/* SPDX-License-Identifier: MIT */
#include "desc.h"
#include "names.h"
#include "session.h"

#include <string.h>

/* desc_fields(): a key pair's op, whose checks are desc_pkey()'s (not a
 * status: those are 0 or negative). */
enum { DESC_PKEY = 1 };

/* Copy a segment list out of the arena and check it: n in 1..CRD_SEG_MAX,
 * the list and every segment inside the arena, segments pairwise
 * disjoint, lengths summing to len. */
static int desc_list(const uint8_t *arena, uint64_t arena_size, uint32_t off,
		     unsigned n, uint32_t len, struct crd_seg *out)
{
	if (n == 0 || n > CRD_SEG_MAX)
		return CRD_ST_BAD_PARAM;
	if (!desc_range_ok(off, n * sizeof(struct crd_seg), arena_size))
		return CRD_ST_BAD_RANGE;
	memcpy(out, arena + off, n * sizeof(struct crd_seg));
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!desc_range_ok(out[i].off, out[i].len, arena_size))
			return CRD_ST_BAD_RANGE;
		sum += out[i].len;
		for (unsigned j = 0; j < i; j++)
			if (desc_overlap(out[i].off, out[i].len, out[j].off,
					 out[j].len))
				return CRD_ST_BAD_RANGE;
	}
	return sum == len ? CRD_ST_OK : CRD_ST_BAD_PARAM;
}

/* Does [off, off + len) overlap any segment of the list? */
static int desc_hits(uint32_t off, uint32_t len, const struct crd_seg *l,
		     unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (desc_overlap(off, len, l[i].off, l[i].len))
			return 1;
	return 0;
}

/* May e carry its iv_len-byte IV on s? Inline up to CRD_IV_MAX bytes, in
 * the arena up to CRD_IV_ARENA_MAX, and a length s's engine takes: up to
 * CRD_IV_MAX one bit test (s->iv_ok), longer ones off the fast path. */
static int desc_iv_len_ok(const struct crd_sqe *e, const struct session *s)
{
	const unsigned n = e->iv_len;
	if (n <= CRD_IV_MAX)
		return s->iv_ok >> n & 1;
	return (e->flags & CRD_SQE_F_ARENA_IV) && n <= CRD_IV_ARENA_MAX &&
	       range_has(s->cap->iv, s->cap->n_iv, n);
}

/* An arena IV's descriptor: a length, and iv[] nothing but the offset. */
static int desc_arena_iv_shape_ok(const struct crd_sqe *e)
{
	static const uint8_t zero[CRD_IV_MAX - 4];
	return e->iv_len && !memcmp(e->iv + 4, zero, sizeof(zero));
}

/* A stream piece: the IV and AAD on FIRST only, the tag on LAST only (a
 * FIRST's tag_off is its parameter), and any length up to an op's; the
 * engine checks what the whole message and its algorithm allow. */
static int desc_stream_fields(const struct crd_sqe *e, const struct session *s,
			      unsigned *tag_len, uint32_t *len)
{
	const int first = e->flags & CRD_SQE_F_FIRST;
	const int last = e->flags & CRD_SQE_F_LAST;
	const struct alg_cap *cap = s->cap;
	unsigned t = e->tag_len ? e->tag_len : s->tag_len;
	if (!last && e->tag_len)
		return CRD_ST_BAD_PARAM;
	/* LAST may make or verify a tag shorter than the session's (one
	 * known only at the end, as OpenSSL takes it), within the engine's
	 * sizes; not on a session that may not encrypt: a key that may only
	 * verify keeps its whole tag (a shorter one could be found by trial
	 * a byte at a time). */
	if (last && t != s->tag_len) {
		if (t > s->tag_len || !range_has(cap->tag, cap->n_tag, t))
			return CRD_ST_BAD_PARAM;
		if (!(s->op_mask & (1u << CRD_OP_ENCRYPT)))
			return CRD_ST_POLICY;
	}
	if ((e->flags & CRD_SQE_F_CLONE) && e->len)
		return CRD_ST_BAD_PARAM; /* a clone carries no data */
	if (e->len > CRD_OP_MAX_LEN || crd_alg_bit_len(s->alg))
		return CRD_ST_BAD_PARAM;
	if (first ? !desc_iv_len_ok(e, s) || e->aad_len < cap->aad.min ||
			    e->aad_len > cap->aad.max
		  : e->iv_len || e->aad_len)
		return CRD_ST_BAD_PARAM;
	*tag_len = last ? t : 0;
	*len = e->len;
	return CRD_ST_OK;
}

/* Checks the op's length in its own unit (bits for crd_alg_bit_len
 * algorithms, whose capability lengths are bits too) and stores the bytes
 * it covers in *len: everything after this works on bytes. */
static int desc_fields(const struct crd_sqe *e, const struct session *s,
		       unsigned *tag_len, uint32_t *len)
{
	if (e->op < CRD_OP_ENCRYPT || e->op > CRD_OP_DERIVE)
		return CRD_ST_BAD_DESC;
	/* sign, verify and derive are a key pair's (its row's ops and the
	 * session's rules are in op_mask below) */
	if (s && e->op > CRD_OP_DECRYPT && !crd_alg_pkey(s->alg))
		return CRD_ST_BAD_DESC;
	/* an op the key pair's row does not take (x25519 sign) */
	if (s && crd_alg_pkey(s->alg) && !(crd_alg_pk_ops(s->alg) >> e->op & 1))
		return CRD_ST_BAD_PARAM;
	/* A named key's usage rules: encrypt/generate, decrypt/verify (a
	 * key pair's: the ops named; a public key's: verify, encrypt). */
	if (s && !(s->op_mask >> e->op & 1))
		return CRD_ST_POLICY;
	if (e->flags & ~CRD_SQE_FLAGS_KNOWN)
		return CRD_ST_BAD_DESC;
	const int stream = e->flags & CRD_SQE_F_STREAM;
	/* Fields a flag does not enable must be zero. A stream piece's
	 * sl_off is its handle; a piece is neither scatter-gather nor
	 * session-less. */
	if ((!(e->flags & CRD_SQE_F_SRC_SGL) && e->src_nseg) ||
	    (!(e->flags & CRD_SQE_F_DST_SGL) && e->dst_nseg) ||
	    (!(e->flags & CRD_SQE_F_SESSIONLESS) && !stream && e->sl_off) ||
	    ((e->flags & CRD_SQE_F_SESSIONLESS) && e->session) ||
	    (!stream && (e->flags & (CRD_SQE_F_FIRST | CRD_SQE_F_LAST |
				     CRD_SQE_F_CLONE))) ||
	    ((e->flags & CRD_SQE_F_CLONE) &&
	     (e->flags & (CRD_SQE_F_FIRST | CRD_SQE_F_LAST))) ||
	    (stream && (e->flags & (CRD_SQE_F_SRC_SGL | CRD_SQE_F_DST_SGL |
				    CRD_SQE_F_SESSIONLESS))) ||
	    ((e->flags & CRD_SQE_F_ARENA_IV) && !desc_arena_iv_shape_ok(e)))
		return CRD_ST_BAD_DESC;
	if (!s)
		return CRD_ST_NO_SESSION;
	if (crd_alg_pkey(s->alg))
		return DESC_PKEY; /* desc_pkey() */
	if (stream)
		return desc_stream_fields(e, s, tag_len, len);

	/* tag_len 0 means "the session's"; anything else must match it. */
	unsigned t = e->tag_len ? e->tag_len : s->tag_len;
	if (t != s->tag_len)
		return CRD_ST_BAD_PARAM;
	const struct alg_cap *cap = s->cap;
	uint32_t bytes = crd_len_bytes(s->alg, e->len);
	if (bytes > CRD_OP_MAX_LEN || !desc_iv_len_ok(e, s) ||
	    e->aad_len < cap->aad.min || e->aad_len > cap->aad.max ||
	    e->len < cap->min_len || e->len > cap->max_len ||
	    (cap->block > 1 && e->len % cap->block))
		return CRD_ST_BAD_PARAM;
	/* CCM: the length field is 15 - nonce bytes (SP 800-38C A.2); with
	 * nonces of 12 and 13 it is shorter than CRD_OP_MAX_LEN needs. */
	if (s->alg == CRD_ALG_AES_CCM && e->iv_len > 11 &&
	    e->len >> (8 * (15 - e->iv_len)))
		return CRD_ST_BAD_PARAM;
	*tag_len = t;
	*len = bytes;
	return CRD_ST_OK;
}

/* A key pair's op's parameters (struct crd_pk_params in the IV, checked
 * against the row: ring_abi.h). */
static int desc_pk_params(const struct crd_sqe *e, const struct session *s,
			  struct crd_pk_params *pp)
{
	static const uint8_t zero[sizeof(pp->reserved)];
	const unsigned f = crd_alg_flags(s->alg);
	const int sig = e->op == CRD_OP_SIGN || e->op == CRD_OP_VERIFY;
	const int pke = e->op == CRD_OP_ENCRYPT || e->op == CRD_OP_DECRYPT;

	memset(pp, 0, sizeof(*pp));
	if (e->iv_len == sizeof(*pp))
		memcpy(pp, e->iv, sizeof(*pp));
	else if (e->iv_len)
		return CRD_ST_BAD_PARAM;
	if (pp->reserved0 || memcmp(pp->reserved, zero, sizeof(zero)) ||
	    pp->md > CRD_SHA_N || pp->mgf1_md > CRD_SHA_N ||
	    pp->salt_len < CRD_PK_SALT_MAX)
		return CRD_ST_BAD_PARAM;
	/* the scheme: RSA's signature paddings and OAEP; every other row's
	 * one scheme is the default */
	switch (pp->pad) {
	case CRD_PK_PAD_DEFAULT:
		break;
	case CRD_PK_PAD_PKCS1:
	case CRD_PK_PAD_PSS:
		if (!sig || !(f & CRD_AF_PKE))
			return CRD_ST_BAD_PARAM;
		break;
	case CRD_PK_PAD_OAEP:
		if (!pke)
			return CRD_ST_BAD_PARAM;
		break;
	default:
		return CRD_ST_BAD_PARAM;
	}
	const int mgf1 = pp->pad == CRD_PK_PAD_PSS || pke;
	if ((!mgf1 && pp->mgf1_md) ||
	    (pp->pad != CRD_PK_PAD_PSS && pp->salt_len))
		return CRD_ST_BAD_PARAM;
	/* a digest: a CRD_AF_DIGEST row signs one (and needs it), OAEP may
	 * name one; EdDSA and the derives take none */
	if (sig && (f & CRD_AF_DIGEST) ? !pp->md : !pke && pp->md)
		return CRD_ST_BAD_PARAM;
	return CRD_ST_OK;
}

/*
 * A key pair's op (ring_abi.h's contract): the parameters, the source's
 * length, and the buffers' ranges. Flat buffers only, the IV inline, and
 * no tag: what a flag or field beyond that asks for is BAD_DESC.
 */
static int desc_pkey(const struct crd_sqe *e, uint8_t *arena,
		     uint64_t arena_size, const struct session *s,
		     struct engine_op *op)
{
	struct crd_pk_params pp;
	if (e->flags || e->tag_len || e->tag_off)
		return op->status = CRD_ST_BAD_DESC;
	int st = desc_pk_params(e, s, &pp);
	if (st)
		return op->status = st;
	const struct alg_cap *cap = s->cap;
	const int sig = e->op == CRD_OP_SIGN || e->op == CRD_OP_VERIFY;
	/* a digest signed is exactly its digest's length */
	if (sig && (crd_alg_flags(s->alg) & CRD_AF_DIGEST)
		    ? e->len != crd_alg_tag_len(CRD_ALG_SHA1 + pp.md - 1)
		    : e->len < cap->min_len || e->len > cap->max_len)
		return op->status = CRD_ST_BAD_PARAM;
	/* the AAD: a signature to verify, an OAEP label; nothing else */
	const uint32_t room = crd_alg_tag_len(s->alg);
	if (e->op == CRD_OP_VERIFY ? !e->aad_len || e->aad_len > room
	    : e->op == CRD_OP_SIGN || e->op == CRD_OP_DERIVE ? e->aad_len != 0
							     : 0)
		return op->status = CRD_ST_BAD_PARAM;
	/* dst: room for the longest output; verify writes nothing */
	const uint32_t dst_len = e->op == CRD_OP_VERIFY ? 0 : room;
	if (!desc_range_ok(e->src_off, e->len, arena_size) ||
	    !desc_range_ok(e->dst_off, dst_len, arena_size) ||
	    !desc_range_ok(e->aad_off, e->aad_len, arena_size) ||
	    desc_overlap(e->dst_off, dst_len, e->src_off, e->len) ||
	    desc_overlap(e->dst_off, dst_len, e->aad_off, e->aad_len))
		return op->status = CRD_ST_BAD_RANGE;
	op->status = CRD_ST_OK;
	op->sess = s;
	op->src = arena + e->src_off;
	op->dst = dst_len ? arena + e->dst_off : NULL;
	op->aad = arena + e->aad_off;
	op->tag = NULL;
	op->iv = e->iv;
	op->len = e->len;
	op->bits = 0;
	op->aad_len = e->aad_len;
	op->iv_len = e->iv_len;
	op->tag_len = 0;
	op->op = e->op;
	op->sgl = 0;
	return CRD_ST_OK;
}

/*
 * The op's IV: inline in the private copy e, or (CRD_SQE_F_ARENA_IV, its
 * length already checked) copied out of the arena into sg->iv, once,
 * here: the client may rewrite the arena at any moment, and nothing reads
 * the arena's copy again.
 */
static int desc_iv(const struct crd_sqe *e, const uint8_t *arena,
		   uint64_t arena_size, struct desc_sgl *sg, const uint8_t **iv)
{
	*iv = e->iv;
	if (!(e->flags & CRD_SQE_F_ARENA_IV))
		return CRD_ST_OK;
	const uint32_t off = crd_sqe_iv_off(e->iv);
	if (!desc_range_ok(off, e->iv_len, arena_size))
		return CRD_ST_BAD_RANGE;
	memcpy(sg->iv, arena + off, e->iv_len);
	*iv = sg->iv;
	return CRD_ST_OK;
}

/* Build and check the source and destination lists. */
static int desc_lists(const struct crd_sqe *e, const uint8_t *arena,
		      uint64_t arena_size, int gmac, uint32_t len,
		      struct desc_sgl *sg)
{
	int st;
	int src_sgl = e->flags & CRD_SQE_F_SRC_SGL;
	int dst_sgl = e->flags & CRD_SQE_F_DST_SGL;

	if (src_sgl) {
		st = desc_list(arena, arena_size, e->src_off, e->src_nseg, len,
			       sg->src);
		if (st)
			return st;
		sg->nsrc = e->src_nseg;
	} else {
		if (!desc_range_ok(e->src_off, len, arena_size))
			return CRD_ST_BAD_RANGE;
		sg->src[0] = (struct crd_seg){ e->src_off, len };
		sg->nsrc = 1;
	}

	sg->in_place = 0;
	sg->ndst = 0;
	if (gmac) /* authentication only (GMAC, MACs, digests): no destination */
		return CRD_ST_OK;

	if (e->dst_off == e->src_off && !src_sgl == !dst_sgl &&
	    e->dst_nseg == e->src_nseg) {
		memcpy(sg->dst, sg->src, sg->nsrc * sizeof(sg->src[0]));
		sg->ndst = sg->nsrc;
		sg->in_place = 1;
		return CRD_ST_OK;
	}
	if (dst_sgl) {
		st = desc_list(arena, arena_size, e->dst_off, e->dst_nseg, len,
			       sg->dst);
		if (st)
			return st;
		sg->ndst = e->dst_nseg;
	} else {
		if (!desc_range_ok(e->dst_off, len, arena_size))
			return CRD_ST_BAD_RANGE;
		sg->dst[0] = (struct crd_seg){ e->dst_off, len };
		sg->ndst = 1;
	}
	/* Out of place: no destination byte may be a source byte. */
	for (unsigned i = 0; i < sg->ndst; i++)
		if (desc_hits(sg->dst[i].off, sg->dst[i].len, sg->src,
			      sg->nsrc))
			return CRD_ST_BAD_RANGE;
	return CRD_ST_OK;
}

/* Where the tag is: a stream piece without one (not LAST) carries its
 * parameter in tag_off, which is then no offset at all. */
static inline uint32_t desc_tag_off(const struct crd_sqe *e, unsigned tag_len)
{
	return (e->flags & CRD_SQE_F_STREAM) && !tag_len ? 0 : e->tag_off;
}

/* Fill the fields every valid op has. */
static void desc_fill(const struct crd_sqe *e, uint8_t *arena,
		      const struct session *s, const uint8_t *iv,
		      unsigned tag_len, uint32_t len, struct engine_op *op)
{
	op->sess = s;
	op->aad = arena + e->aad_off;
	op->tag = arena + desc_tag_off(e, tag_len);
	op->iv = iv;
	op->len = len;
	op->bits = crd_alg_bit_len(s->alg) ? e->len : 0;
	op->aad_len = e->aad_len;
	op->iv_len = e->iv_len;
	op->tag_len = tag_len;
	op->op = e->op;
}

/*
 * The common case without building lists: one flat source, one flat
 * destination (or none, GMAC), runnable on arena pointers. The checks
 * are those of the general path below for a list of one segment each,
 * all of which fail with CRD_ST_BAD_RANGE, so the status of any entry is
 * the same on either path. Returns 1 when e is not such an op (the
 * general path decides), else its status.
 */
static int desc_flat(const struct crd_sqe *e, uint8_t *arena,
		     uint64_t arena_size, const struct session *s,
		     const uint8_t *iv, unsigned tag_len, uint32_t len,
		     struct engine_op *op)
{
	const int gmac = crd_alg_auth_only(s->alg); /* no destination */
	const int in_place = e->dst_off == e->src_off;
	const uint32_t src = e->src_off, dst = e->dst_off;
	const uint32_t tag_off = desc_tag_off(e, tag_len);

	if (e->flags & (CRD_SQE_F_SRC_SGL | CRD_SQE_F_DST_SGL))
		return 1;
	/* authenc reads aad || data in one pass: only when they touch */
	if (desc_is_authenc(s->alg) &&
	    !(in_place &&
	      (!e->aad_len || (uint64_t)e->aad_off + e->aad_len == src)))
		return 1;
	if (!desc_range_ok(src, len, arena_size) ||
	    (!gmac && !in_place &&
	     (!desc_range_ok(dst, len, arena_size) ||
	      desc_overlap(dst, len, src, len))) ||
	    !desc_range_ok(e->aad_off, e->aad_len, arena_size) ||
	    !desc_range_ok(tag_off, tag_len, arena_size) ||
	    desc_overlap(tag_off, tag_len, src, len) ||
	    desc_overlap(e->aad_off, e->aad_len, tag_off, tag_len) ||
	    (!gmac && (desc_overlap(tag_off, tag_len, dst, len) ||
		       desc_overlap(e->aad_off, e->aad_len, dst, len))))
		return op->status = CRD_ST_BAD_RANGE;
	op->status = CRD_ST_OK;
	desc_fill(e, arena, s, iv, tag_len, len, op);
	op->sgl = 0;
	op->src = arena + src;
	/* GMAC: the destination is never written */
	op->dst = gmac ? (uint8_t *)op->src : arena + dst;
	return CRD_ST_OK;
}

int desc_resolve(const struct crd_sqe *e, uint8_t *arena, uint64_t arena_size,
		 const struct session *s, struct engine_op *op,
		 struct desc_sgl *sg)
{
	unsigned tag_len = 0;
	uint32_t len = 0; /* bytes */
	const uint8_t *iv = e->iv;
	int st = desc_fields(e, s, &tag_len, &len);
	if (st == DESC_PKEY)
		return desc_pkey(e, arena, arena_size, s, op);
	if (st == CRD_ST_OK)
		st = desc_iv(e, arena, arena_size, sg, &iv);
	if (st == CRD_ST_OK) {
		int flat = desc_flat(e, arena, arena_size, s, iv, tag_len, len,
				     op);
		if (flat != 1)
			return flat;
	}
	const uint32_t tag_off = desc_tag_off(e, tag_len);
	if (st == CRD_ST_OK)
		st = desc_lists(e, arena, arena_size, crd_alg_auth_only(s->alg),
				len, sg);
	if (st == CRD_ST_OK &&
	    (!desc_range_ok(e->aad_off, e->aad_len, arena_size) ||
	     !desc_range_ok(tag_off, tag_len, arena_size)))
		st = CRD_ST_BAD_RANGE;
	/* What the daemon writes (destination; the tag on encrypt) must not
	 * overlap what it reads besides, or the result would depend on
	 * engine internals. */
	if (st == CRD_ST_OK &&
	    (desc_hits(tag_off, tag_len, sg->dst, sg->ndst) ||
	     desc_hits(tag_off, tag_len, sg->src, sg->nsrc) ||
	     desc_hits(e->aad_off, e->aad_len, sg->dst, sg->ndst) ||
	     desc_overlap(e->aad_off, e->aad_len, tag_off, tag_len)))
		st = CRD_ST_BAD_RANGE;
	op->status = st;
	if (st != CRD_ST_OK)
		return st;

	desc_fill(e, arena, s, iv, tag_len, len, op);

	/* Flat pointers when the engine can use the arena directly. */
	int flat = sg->nsrc == 1 && sg->ndst <= 1;
	if (flat && desc_is_authenc(s->alg))
		flat = sg->in_place &&
		       (!e->aad_len ||
			(uint64_t)e->aad_off + e->aad_len == e->src_off);
	op->sgl = !flat;
	op->src = flat ? arena + sg->src[0].off : NULL;
	op->dst = flat && sg->ndst ? arena + sg->dst[0].off : NULL;
	if (flat && !sg->ndst)
		op->dst = (uint8_t *)op->src; /* GMAC: never written */
	return CRD_ST_OK;
}
