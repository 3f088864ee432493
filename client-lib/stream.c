/* SPDX-License-Identifier: MIT */
/*
 * Copying streams (cc_stream_*): a message of any length as the pieces of
 * one stream on the connection's stream queue. Each call copies its input
 * into arena buffers piece by piece, keeps up to STREAM_DEPTH pieces in
 * flight (the daemon runs one while the next is copied in) and copies
 * each piece's output out as it completes, in order. CBC and ECB pieces
 * must be whole blocks, XTS pieces whole data units: the library holds a
 * partial one back until more input or the end.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cryptod/clock.h>

enum {
	STREAM_PIECE = 1 << 20, /* bytes per piece (XTS: whole units) */
	STREAM_DEPTH = 4,	/* pieces in flight; >= 2, see stream_run */
	STREAM_ARENA = 8 << 20, /* DEPTH pieces, the AAD and a tag */
	STREAM_ENTRIES = 16,
	STREAM_XTS_UNIT = 4096,	    /* data_unit 0 */
	STREAM_UNIT_MAX = 1u << 20, /* a unit must fit a piece */
};
_Static_assert(STREAM_DEPTH >= 2 && STREAM_DEPTH < STREAM_ENTRIES,
	       "depth fits the ring");

struct cc_stream {
	struct cc_conn *conn; /* not owned */
	uint64_t gen;	      /* conn->stream_gen its handle belongs to */
	uint32_t session, handle, param;
	enum cc_dir dir;
	unsigned tag_len;
	unsigned unit; /* the input is sent in whole units of this */
	int writes;    /* a cipher or AEAD: it has output */
	int ccm, xts;  /* param is CCM's message length / XTS's unit */
	int started;   /* FIRST was sent */
	int open;      /* the daemon holds its state */
	int err;       /* the error that ended it, or 0 */
	uint8_t iv[CRD_IV_ARENA_MAX];
	unsigned iv_len;
	uint8_t *aad; /* owned copy, until FIRST */
	size_t aad_len;
	uint8_t *hold, *hold2; /* owned [unit]: a partial unit, and a spare */
	size_t held;
};

/* The connection's stream queue, opened on first use. Caller holds
 * stream_lock. */
static int stream_queue(struct cc_conn *c)
{
	if (c->stream_q)
		return 0;
	struct cc_queue_params p = { .sq_entries = STREAM_ENTRIES,
				     .cq_entries = STREAM_ENTRIES,
				     .arena_size = STREAM_ARENA };
	int err = cc_queue_open(c, &p, &c->stream_q);
	if (!err)
		c->stream_gen++;
	return err;
}

/* The daemon is gone or an op went missing: nothing in the queue can be
 * trusted or reused. Every stream on it is dead (its generation). */
static void stream_queue_drop(struct cc_conn *c)
{
	cc_queue_close(c->stream_q);
	c->stream_q = NULL;
}

/* Give the slot back once the daemon holds nothing for it. */
static void stream_closed(struct cc_stream *s)
{
	struct cc_conn *c = s->conn;
	if (s->open || !s->handle)
		return;
	if (c->stream_q && c->stream_gen == s->gen)
		cc_stream_handle_put(c->stream_q, s->handle);
	s->handle = 0;
}

/* Take the oldest piece's completion. 0, or -errno (queue dropped). */
static int stream_reap(struct cc_queue *q, struct cc_completion *cpl)
{
	for (;;) {
		int n = cc_dequeue_burst(q, cpl, 1);
		if (n < 0)
			return n;
		if (n == 1)
			return 0;
		int w = cc_wait(q, CRD_WAIT_MAX_MS);
		if (w < 0)
			return w;
		if (w == 0)
			return -ETIMEDOUT;
	}
}

struct stream_piece {
	uint8_t *buf;
	size_t len;
	uint64_t user_data;
};

/* Bytes [off, off + n) of a || b into dst. */
static void stream_gather(uint8_t *dst, const uint8_t *a, size_t na,
			  const uint8_t *b, size_t off, size_t n)
{
	if (off < na) {
		size_t k = na - off < n ? na - off : n;
		memcpy(dst, a + off, k);
		dst += k;
		off += k;
		n -= k;
	}
	if (n)
		memcpy(dst, b + (off - na), n);
}

/*
 * Send a || b as pieces (the last one LAST when last), writing their
 * output to out in order. Returns the bytes written in *done and 0 or
 * the first failure. Caller holds stream_lock.
 *
 * out may be b itself (in place): a piece's output lands on input bytes
 * up to s->held further on, and it is copied out only once the next
 * piece, which holds those bytes (held < unit <= a piece), is copied in:
 * the loop fills the pipeline before it waits.
 */
static int stream_run(struct cc_stream *s, const uint8_t *a, size_t na,
		      const uint8_t *b, size_t nb, uint8_t *out, int last,
		      uint8_t *tag, size_t *done)
{
	struct cc_conn *c = s->conn;
	struct cc_queue *q = c->stream_q;
	*done = 0;
	if (!q || c->stream_gen != s->gen)
		return -EPIPE;
	/* A stream of one piece tells the daemon no length of its own (the
	 * piece's is CCM's message length then): check the declared one. */
	if (s->ccm && last && !s->started && na + nb != s->param)
		return CC_ERR_BAD_PARAM;

	const size_t total = na + nb;
	size_t piece_max =
		s->unit > 1 ? STREAM_PIECE / s->unit * s->unit : STREAM_PIECE;
	if (s->xts && piece_max / s->unit > CRD_XTS_STREAM_UNITS_MAX)
		piece_max = (size_t)CRD_XTS_STREAM_UNITS_MAX * s->unit;
	struct stream_piece fl[STREAM_DEPTH];
	unsigned head = 0, n_in = 0;
	size_t sent = 0;
	int last_sent = 0, err = 0;
	/* Owned arena buffer: the AAD, an IV the descriptor cannot hold
	 * (both FIRST's), then the tag (LAST's). */
	uint8_t *side = NULL;
	const size_t iv_arena =
		!s->started && s->iv_len > CRD_IV_MAX ? s->iv_len : 0;
	const size_t aad_room = crd_align_up(s->aad_len, 64),
		     side_len = aad_room + crd_align_up(iv_arena, 64) + 64;

	if ((!s->started && (s->aad_len || iv_arena)) || last) {
		side = cc_buf_alloc(q, side_len);
		if (!side)
			return -ENOMEM;
	}
	uint8_t *aad_buf = side;
	uint8_t *iv_buf = iv_arena ? side + aad_room : NULL;
	uint8_t *tag_buf =
		side ? side + aad_room + crd_align_up(iv_arena, 64) : NULL;
	if (!s->started && s->aad_len)
		memcpy(aad_buf, s->aad, s->aad_len);
	if (iv_arena)
		memcpy(iv_buf, s->iv, iv_arena);
	if (last && s->tag_len && s->dir == CC_DECRYPT)
		memcpy(tag_buf, tag, s->tag_len);

	for (;;) {
		while (!err && n_in < STREAM_DEPTH &&
		       (sent < total || (last && !last_sent))) {
			size_t plen = total - sent < piece_max ? total - sent
							       : piece_max;
			int is_last = last && sent + plen == total;
			uint8_t *buf = cc_buf_alloc(q, plen ? plen : 1);
			if (!buf) {
				err = -ENOMEM;
				break;
			}
			stream_gather(buf, a, na, b, sent, plen);
			unsigned fl_flags = (s->started ? 0 : CC_STREAM_FIRST) |
					    (is_last ? CC_STREAM_LAST : 0);
			struct cc_op op = {
				.user_data = ++c->stream_seq,
				.session = s->session,
				.dir = s->dir,
				.src = buf,
				.len = (uint32_t)plen,
				.stream = s->handle,
				.stream_flags = fl_flags,
			};
			if (!s->started) {
				op.iv = iv_buf ? iv_buf : s->iv;
				op.iv_len = s->iv_len;
				op.aad = s->aad_len ? aad_buf : NULL;
				op.aad_len = (uint32_t)s->aad_len;
				op.stream_param = is_last ? 0 : s->param;
			}
			if (is_last)
				op.tag = tag_buf;
			int n = cc_enqueue_burst(q, &op, 1);
			if (n != 1) {
				cc_buf_free(q, buf);
				err = n < 0 ? n : -EBUSY;
				break;
			}
			s->started = s->open = 1;
			fl[(head + n_in) % STREAM_DEPTH] =
				(struct stream_piece){ buf, plen,
						       op.user_data };
			n_in++;
			sent += plen;
			last_sent |= is_last;
		}
		if (!n_in)
			break;

		struct cc_completion cpl;
		struct stream_piece *p = &fl[head];
		int r = stream_reap(q, &cpl);
		if (r == 0 && cpl.user_data != p->user_data)
			r = -EPROTO;
		if (r < 0) {
			/* Pieces may still be in flight, into buffers we
			 * must not reuse: drop the whole queue. */
			stream_queue_drop(c);
			s->open = 0;
			s->handle = 0;
			return r;
		}
		if (cpl.status != CC_OK) {
			if (!err)
				err = cpl.status;
			s->open = 0; /* a failed piece ends the stream */
		}
		if (s->writes && out) {
			if (cpl.status == CC_OK)
				memcpy(out + *done, p->buf, p->len);
			else
				memset(out + *done, 0, p->len);
		}
		*done += p->len;
		/* Plaintext does not linger in shared memory. */
		memset(p->buf, 0, p->len);
		cc_buf_free(q, p->buf);
		head = (head + 1) % STREAM_DEPTH;
		n_in--;
	}
	if (last_sent)
		s->open = 0;
	if (!err && last && s->tag_len && s->dir == CC_ENCRYPT)
		memcpy(tag, tag_buf, s->tag_len);
	if (err == CC_ERR_AUTH_FAILED && s->writes && out)
		memset(out, 0, *done); /* forged: release nothing of it */
	if (side) {
		memset(side, 0, side_len);
		cc_buf_free(q, side);
	}
	return err;
}

int cc_stream_open(struct cc_conn *c, const struct cc_stream_params *p,
		   struct cc_stream **out)
{
	if (!p || p->session == 0 || p->session > c->max_sessions ||
	    !c->sess_alg[p->session])
		return CC_ERR_NO_SESSION;
	if ((p->dir != CC_ENCRYPT && p->dir != CC_DECRYPT) ||
	    p->iv_len > CRD_IV_ARENA_MAX || (p->iv_len && !p->iv) ||
	    p->aad_len > CRD_AAD_MAX || (p->aad_len && !p->aad))
		return -EINVAL;
	unsigned alg = c->sess_alg[p->session];
	unsigned unit = 1;
	uint32_t param = 0;
	if (alg == CC_ALG_AES_CBC || alg == CC_ALG_AES_ECB)
		unit = 16;
	if (alg == CC_ALG_AES_XTS) {
		unit = p->data_unit ? p->data_unit : STREAM_XTS_UNIT;
		if (unit < 16 || unit > STREAM_UNIT_MAX)
			return -EINVAL;
		param = unit;
	}
	if (alg == CC_ALG_AES_CCM) {
		if (p->msg_len > UINT32_MAX)
			return -EINVAL;
		param = (uint32_t)p->msg_len;
	}

	struct cc_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->conn = c;
	s->session = p->session;
	s->dir = p->dir;
	s->tag_len = c->tag_len[p->session];
	s->unit = unit;
	s->param = param;
	s->ccm = alg == CC_ALG_AES_CCM;
	s->xts = alg == CC_ALG_AES_XTS;
	s->writes = !crd_alg_auth_only(alg);
	s->iv_len = p->iv_len;
	if (p->iv_len)
		memcpy(s->iv, p->iv, p->iv_len);
	s->aad_len = p->aad_len;
	if (p->aad_len) {
		s->aad = malloc(p->aad_len);
		if (!s->aad)
			goto err_free;
		memcpy(s->aad, p->aad, p->aad_len);
	}
	if (unit > 1) {
		s->hold = malloc(unit);
		s->hold2 = malloc(unit);
		if (!s->hold || !s->hold2)
			goto err_free;
	}

	pthread_mutex_lock(&c->stream_lock);
	int err = stream_queue(c);
	if (!err)
		err = cc_stream_handle_get(c->stream_q, &s->handle);
	s->gen = c->stream_gen;
	pthread_mutex_unlock(&c->stream_lock);
	if (err) {
		s->handle = 0;
		cc_stream_free(s);
		return err;
	}
	*out = s;
	return 0;

err_free:
	cc_stream_free(s);
	return -ENOMEM;
}

size_t cc_stream_out_max(const struct cc_stream *s, size_t len)
{
	return s->writes ? s->held + len : 0;
}

int cc_stream_update(struct cc_stream *s, const void *in, size_t len, void *out,
		     size_t *out_len)
{
	size_t done = 0;
	if (out_len)
		*out_len = 0;
	if (s->err)
		return s->err;
	if (!s->handle)
		return -EPIPE;
	if (len && !in)
		return -EINVAL;
	if (s->writes && len && !out)
		return -EINVAL;

	const uint8_t *b = in;
	size_t total = s->held + len;
	size_t send = s->unit > 1 ? total / s->unit * s->unit : total;
	if (send == 0) { /* all of it fits the partial unit */
		if (len)
			memcpy(s->hold + s->held, in, len);
		s->held += len;
		return 0;
	}
	/* What stays back is copied aside first: out may be in. */
	size_t from_in = send - s->held, rest = len - from_in;
	if (rest)
		memcpy(s->hold2, b + from_in, rest);

	pthread_mutex_lock(&s->conn->stream_lock);
	int err = stream_run(s, s->hold, s->held, b, from_in, out, 0, NULL,
			     &done);
	if (err)
		stream_closed(s);
	pthread_mutex_unlock(&s->conn->stream_lock);

	uint8_t *t = s->hold;
	s->hold = s->hold2;
	s->hold2 = t;
	if (s->hold2)
		memset(s->hold2, 0, s->unit);
	s->held = rest;
	if (out_len)
		*out_len = s->writes ? done : 0;
	if (err)
		s->err = err;
	return err;
}

int cc_stream_final(struct cc_stream *s, void *out, size_t *out_len, void *tag)
{
	size_t done = 0;
	if (out_len)
		*out_len = 0;
	if (s->err)
		return s->err;
	if (!s->handle)
		return -EPIPE;
	if ((s->tag_len && !tag) || (s->writes && s->held && !out))
		return -EINVAL;
	pthread_mutex_lock(&s->conn->stream_lock);
	int err = stream_run(s, s->hold, s->held, NULL, 0, out, 1, tag, &done);
	stream_closed(s);
	pthread_mutex_unlock(&s->conn->stream_lock);
	if (s->hold)
		memset(s->hold, 0, s->unit);
	s->held = 0;
	if (out_len)
		*out_len = s->writes ? done : 0;
	s->err = err ? err : -EPIPE; /* ended either way */
	return err;
}

void cc_stream_free(struct cc_stream *s)
{
	if (!s)
		return;
	struct cc_conn *c = s->conn;
	pthread_mutex_lock(&c->stream_lock);
	if (s->open && c->stream_q && c->stream_gen == s->gen) {
		/* Abandoned midway: a LAST with nothing in it ends the stream
		 * and its state in the daemon (a decrypt fails on the empty
		 * tag, which is all it has to do). */
		uint8_t scratch[CRD_TAG_MAX] = { 0 };
		size_t done;
		s->held = 0;
		s->writes = 0;
		(void)stream_run(s, NULL, 0, NULL, 0, NULL, 1, scratch, &done);
	}
	s->open = 0;
	stream_closed(s);
	pthread_mutex_unlock(&c->stream_lock);
	if (s->hold)
		explicit_bzero(s->hold, s->unit);
	if (s->hold2)
		explicit_bzero(s->hold2, s->unit);
	if (s->aad)
		explicit_bzero(s->aad, s->aad_len);
	free(s->hold);
	free(s->hold2);
	free(s->aad);
	explicit_bzero(s, sizeof(*s));
	free(s);
}
