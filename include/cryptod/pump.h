/* SPDX-License-Identifier: MIT */
/*
 * The piece pump: one call's bytes sent as the pieces of a stream (or as
 * one op), up to PUMP_DEPTH of them in flight, their output copied out in
 * order. Written once for the library's copying streams
 * (client-lib/stream.c) and the provider's per-thread queues
 * (provider/prov_io.c). What differs between the two is policy, and each
 * brings its own as a table of callbacks: where an op's result is filed
 * and how to wait for it, what to do when there is no room, what becomes
 * of a finished piece's buffer.
 *
 * Header-only and static inline: each caller passes a const table of its
 * own static functions, so the compiler calls them directly (the
 * provider's data path runs every TLS record through here). Internal to
 * this tree, not installed.
 */
#ifndef CRYPTOD_PUMP_H
#define CRYPTOD_PUMP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cryptoclient.h>
#include <cryptod/ring_abi.h> /* crd_align_up, CRD_TAG_MAX */

enum {
	PUMP_PIECE = 1 << 20, /* a stream's bytes per piece, at most */
	PUMP_DEPTH = 4,	      /* pieces of one call in flight; >= 2 */
};

/* One call. The input is a || b; a NULL a stands for na zero bytes (the
 * input of a keystream). */
struct pump_req {
	uint32_t session;
	enum cc_dir dir;
	uint32_t stream; /* the stream's handle; 0: one op of all the bytes */
	/* The call begins / ends the stream (one op: both). The first piece
	 * of a beginning carries FIRST, the IV, the AAD and, unless it is
	 * also the last, param; the last piece of an end carries LAST and
	 * the tag. */
	unsigned first, last;
	uint32_t param;
	const uint8_t *iv;
	unsigned iv_len;
	const uint8_t *aad;
	size_t aad_len;
	const uint8_t *a, *b;
	size_t na, nb;
	size_t piece;  /* a stream's bytes per piece, at most (> 0) */
	uint8_t *out;  /* the output, in order; NULL: none wanted */
	int out_if_ok; /* a failed piece leaves out alone (else: zeroed) */
	uint8_t *tag;  /* tag_len bytes: read (decrypt) or written */
	unsigned tag_len;
	unsigned short_tag; /* LAST: only this many of the tag's bytes */
};

/* A piece in flight: its arena buffer, and whatever the caller needs to
 * find its result (user_data, a result slot). */
struct pump_piece {
	uint8_t *buf;
	size_t len;
	uint64_t id;
};

/* "No room" reasons, submit's and room's */
enum { PUMP_NO_ROOM = 1, PUMP_RING_FULL = 2 };

struct pump_ops {
	/* len (>= 1) arena bytes, or NULL: no room. */
	uint8_t *(*alloc)(void *ctx, size_t len);
	/* A buffer back that no op in flight uses. */
	void (*free)(void *ctx, uint8_t *buf);
	/* Submit op, which reads pc->buf, setting pc->id. 0, PUMP_NO_ROOM
	 * (no place for its result), PUMP_RING_FULL, or -errno. */
	int (*submit)(void *ctx, struct cc_op *op, struct pump_piece *pc);
	/* No room (why: PUMP_NO_ROOM, for the arena too, or PUMP_RING_FULL)
	 * with in_flight of this call's pieces in flight: 0 to try again
	 * (after waiting for room), 1 to take this call's oldest piece
	 * first (only when in_flight), or -errno to give up. */
	int (*room)(void *ctx, int why, unsigned in_flight);
	/* The oldest piece's completion: 0 with its CC_OK / CC_ERR status in
	 * *st; or -errno when the queue cannot be trusted any more (ops may
	 * still write its buffers): the pump returns at once, abandoning
	 * its buffers with the queue (pump_out.dead). */
	int (*wait)(void *ctx, struct pump_piece *pc, int32_t *st);
	/* pc completed with st and its output is copied out: its buffer
	 * and result are the caller's to give back (or keep). */
	void (*done)(void *ctx, struct pump_piece *pc, int32_t st);
};

struct pump_out {
	size_t done;   /* bytes of the pieces that completed */
	unsigned sent; /* pieces submitted */
	int failed;    /* a piece completed with a status other than CC_OK */
	int last_sent; /* the piece that ends the stream went */
	int dead;      /* wait failed: everything abandoned */
};

/* Bytes [off, off + n) of a || b into dst. */
static inline void pump_gather(uint8_t *dst, const struct pump_req *r,
			       size_t off, size_t n)
{
	if (off < r->na) {
		size_t k = r->na - off < n ? r->na - off : n;
		if (r->a)
			memcpy(dst, r->a + off, k);
		else
			memset(dst, 0, k);
		dst += k;
		off += k;
		n -= k;
	}
	if (n)
		memcpy(dst, r->b + (off - r->na), n);
}

/* Where the side buffer's parts are (NULL: not there). */
struct pump_side {
	uint8_t *aad, *iv, *tag;
};

/*
 * One piece, pc->len bytes at offset off of the input, into a buffer of
 * its own and submitted. 0 (pc->buf in flight), PUMP_NO_ROOM or
 * PUMP_RING_FULL (pc->buf NULL), or -errno.
 */
static inline int pump_send(const struct pump_ops *ops, void *ctx,
			    const struct pump_req *r, struct pump_piece *pc,
			    size_t off, int is_first, int is_last,
			    const struct pump_side *sd)
{
	pc->buf = ops->alloc(ctx, pc->len ? pc->len : 1);
	if (!pc->buf)
		return PUMP_NO_ROOM;
	pump_gather(pc->buf, r, off, pc->len);
	struct cc_op op = {
		.session = r->session,
		.dir = r->dir,
		.src = pc->buf,
		.len = (uint32_t)pc->len,
		.stream = r->stream,
	};
	if (r->stream)
		op.stream_flags =
			(is_first ? CC_STREAM_FIRST : 0) |
			(is_last ? CC_STREAM_LAST |
					   CC_STREAM_TAG_LEN(r->short_tag)
				 : 0);
	if (is_first) {
		op.iv = sd->iv ? sd->iv : r->iv;
		op.iv_len = r->iv_len;
		op.aad = r->aad_len ? sd->aad : NULL;
		op.aad_len = (uint32_t)r->aad_len;
		if (r->stream && !is_last)
			op.stream_param = r->param;
	}
	if (is_last && r->tag_len)
		op.tag = sd->tag;
	int rc = ops->submit(ctx, &op, pc);
	if (rc) {
		ops->free(ctx, pc->buf);
		pc->buf = NULL;
	}
	return rc;
}

/*
 * Send r's bytes as pieces, PUMP_DEPTH in flight, writing their output to
 * r->out in order. 0, the first failed piece's CC_ERR status, or -errno;
 * o says what went and what completed.
 *
 * The loop fills the pipeline before it waits, unless room says to take
 * the oldest piece first. So with a room that never does, out may be b
 * in place while na < a piece (the library's streams, whose held-back
 * partial unit is a): a piece's output lands on input bytes up to na
 * further on, and it is copied out only once the next piece, which holds
 * them, is copied in. A side buffer carries the AAD, an IV the
 * descriptor cannot hold and the tag; it is wiped before it goes back. A
 * forged message (CC_ERR_AUTH_FAILED) releases none of its output.
 */
static inline int pump_run(const struct pump_ops *ops, void *ctx,
			   const struct pump_req *r, struct pump_out *o)
{
	_Static_assert(PUMP_DEPTH >= 2, "the pipeline fills before a wait");
	const size_t total = r->na + r->nb;
	const size_t piece = r->stream ? r->piece : total;
	const size_t iv_arena = r->iv_len > CC_IV_INLINE ? r->iv_len : 0;
	const size_t aad_room = crd_align_up(r->aad_len, 64),
		     iv_room = crd_align_up(iv_arena, 64),
		     side_len = aad_room + iv_room + CRD_TAG_MAX;
	struct pump_piece fl[PUMP_DEPTH];
	unsigned head = 0, n_in = 0;
	size_t sent = 0;
	int err = 0;

	*o = (struct pump_out){ 0 };
	uint8_t *side = NULL; /* the AAD, the IV, then the tag */
	if (r->aad_len || iv_arena || r->tag_len) {
		while (!(side = ops->alloc(ctx, side_len)))
			if ((err = ops->room(ctx, PUMP_NO_ROOM, 0)))
				return err;
	}
	const struct pump_side sd = {
		.aad = side,
		.iv = iv_arena ? side + aad_room : NULL,
		.tag = side ? side + aad_room + iv_room : NULL,
	};
	if (r->aad_len)
		memcpy(side, r->aad, r->aad_len);
	if (iv_arena)
		memcpy(sd.iv, r->iv, iv_arena);
	if (r->tag_len && r->dir == CC_DECRYPT)
		memcpy(sd.tag, r->tag, r->tag_len);

	for (;;) {
		while (!err && n_in < PUMP_DEPTH &&
		       (sent < total || (r->last && !o->last_sent))) {
			struct pump_piece pc = {
				.len = total - sent < piece ? total - sent
							    : piece,
			};
			const int is_first = r->first && sent == 0,
				  is_last = r->last && sent + pc.len == total;
			int rc = pump_send(ops, ctx, r, &pc, sent, is_first,
					   is_last, &sd);
			if (rc > 0)
				rc = ops->room(ctx, rc, n_in);
			if (rc > 0)
				break; /* take ours first */
			if (rc) {
				err = rc;
				break;
			}
			if (!pc.buf)
				continue; /* there may be room now */
			fl[(head + n_in) % PUMP_DEPTH] = pc;
			n_in++;
			o->sent++;
			sent += pc.len;
			o->last_sent |= is_last;
		}
		if (!n_in)
			break;

		struct pump_piece *pc = &fl[head];
		int32_t st;
		int w = ops->wait(ctx, pc, &st);
		if (w) {
			o->dead = 1;
			return w;
		}
		if (st != CC_OK) {
			o->failed = 1;
			if (!err)
				err = st;
		}
		if (r->out) {
			if (st == CC_OK)
				memcpy(r->out + o->done, pc->buf, pc->len);
			else if (!r->out_if_ok)
				memset(r->out + o->done, 0, pc->len);
		}
		o->done += pc->len;
		ops->done(ctx, pc, st);
		head = (head + 1) % PUMP_DEPTH;
		n_in--;
	}
	if (!err && r->tag_len && r->dir == CC_ENCRYPT)
		memcpy(r->tag, sd.tag, r->tag_len);
	if (err == CC_ERR_AUTH_FAILED && r->out && !r->out_if_ok)
		memset(r->out, 0, o->done); /* forged: release none of it */
	if (side) {
		memset(side, 0, side_len);
		ops->free(ctx, side);
	}
	return err;
}

#endif
