/* SPDX-License-Identifier: MIT */
/*
 * Copying streams (cc_stream_*): a message of any length as the pieces of
 * one stream on the connection's stream queue. Each call copies its input
 * into arena buffers piece by piece, keeps up to PUMP_DEPTH pieces in
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
#include <cryptod/pump.h>

enum {
	STREAM_ARENA = 8 << 20, /* DEPTH pieces, the AAD and a tag */
	STREAM_ENTRIES = 16,
	STREAM_XTS_UNIT = 4096,	      /* data_unit 0 */
	STREAM_UNIT_MAX = PUMP_PIECE, /* a unit must fit a piece */
};
_Static_assert((int)PUMP_DEPTH < (int)STREAM_ENTRIES, "depth fits the ring");
_Static_assert((size_t)STREAM_ARENA >=
		       (size_t)PUMP_DEPTH * PUMP_PIECE + CRD_AAD_MAX + 64 +
			       CRD_IV_ARENA_MAX + 64 + CRD_TAG_MAX,
	       "the arena holds a call's pieces and its side buffer");

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

/*
 * The pump's policies here (cryptod/pump.h). The queue is the
 * connection's, used by one stream_run at a time (stream_lock), so a
 * piece's result is simply the next completion, and there is no room to
 * wait for: nobody else holds any (stream_room). Pieces are wiped before they go back:
 * the library does not know what its caller streams, and the arena keeps
 * what is left in it until the next stream, which may be long in coming
 * (the provider's arena is reused by the next TLS record at once, and it
 * does not wipe: see piece_release in provider/prov_io.c).
 */
static uint8_t *stream_alloc(void *ctx, size_t len)
{
	struct cc_stream *s = ctx;
	return cc_buf_alloc(s->conn->stream_q, len);
}

static void stream_free(void *ctx, uint8_t *buf)
{
	struct cc_stream *s = ctx;
	cc_buf_free(s->conn->stream_q, buf);
}

static int stream_submit(void *ctx, struct cc_op *op, struct pump_piece *pc)
{
	struct cc_stream *s = ctx;
	struct cc_conn *c = s->conn;
	op->user_data = pc->id = ++c->stream_seq;
	int n = cc_enqueue_burst(c->stream_q, op, 1);
	if (n == 1)
		return 0;
	return n < 0 ? n : PUMP_RING_FULL;
}

/* The arena and ring hold a call's pieces (STREAM_ARENA, STREAM_ENTRIES)
 * and nobody else's: no room is an error. Nor is a piece reaped early,
 * which in place would copy out over input not yet copied in. */
static int stream_room(void *ctx, int why, unsigned in_flight)
{
	(void)ctx;
	(void)in_flight;
	return why == PUMP_RING_FULL ? -EBUSY : -ENOMEM;
}

/* The oldest piece's completion is the next one. */
static int stream_wait(void *ctx, struct pump_piece *pc, int32_t *st)
{
	struct cc_stream *s = ctx;
	struct cc_queue *q = s->conn->stream_q;
	struct cc_completion cpl;
	for (;;) {
		int n = cc_dequeue_burst(q, &cpl, 1);
		if (n < 0)
			return n;
		if (n == 1)
			break;
		int w = cc_wait(q, CRD_WAIT_MAX_MS);
		if (w < 0)
			return w;
		if (w == 0)
			return -ETIMEDOUT;
	}
	if (cpl.user_data != pc->id)
		return -EPROTO;
	*st = cpl.status;
	return 0;
}

/* Plaintext does not linger in shared memory. */
static void stream_done(void *ctx, struct pump_piece *pc, int32_t st)
{
	struct cc_stream *s = ctx;
	(void)st;
	memset(pc->buf, 0, pc->len);
	cc_buf_free(s->conn->stream_q, pc->buf);
}

static const struct pump_ops stream_pump = {
	.alloc = stream_alloc,
	.free = stream_free,
	.submit = stream_submit,
	.room = stream_room,
	.wait = stream_wait,
	.done = stream_done,
};

/*
 * Send a || b as pieces (the last one LAST when last), writing their
 * output to out in order. Returns the bytes written in *done and 0 or
 * the first failure. Caller holds stream_lock.
 *
 * out may be b itself (in place): a piece's output lands on input bytes
 * up to s->held further on, which the pump allows (held < unit <= a
 * piece).
 */
static int stream_run(struct cc_stream *s, const uint8_t *a, size_t na,
		      const uint8_t *b, size_t nb, uint8_t *out, int last,
		      uint8_t *tag, size_t *done)
{
	struct cc_conn *c = s->conn;
	*done = 0;
	if (!c->stream_q || c->stream_gen != s->gen)
		return -EPIPE;
	/* A stream of one piece tells the daemon no length of its own (the
	 * piece's is CCM's message length then): check the declared one. */
	if (s->ccm && last && !s->started && na + nb != s->param)
		return CC_ERR_BAD_PARAM;

	size_t piece =
		s->unit > 1 ? PUMP_PIECE / s->unit * s->unit : PUMP_PIECE;
	if (s->xts && piece / s->unit > CRD_XTS_STREAM_UNITS_MAX)
		piece = (size_t)CRD_XTS_STREAM_UNITS_MAX * s->unit;
	const int first = !s->started;
	const struct pump_req r = {
		.session = s->session,
		.dir = s->dir,
		.stream = s->handle,
		.first = first,
		.last = last,
		.param = s->param,
		.iv = s->iv,
		.iv_len = first ? s->iv_len : 0,
		.aad = s->aad,
		.aad_len = first ? s->aad_len : 0,
		.a = a,
		.na = na,
		.b = b,
		.nb = nb,
		.piece = piece,
		.out = s->writes ? out : NULL,
		.tag = tag,
		.tag_len = last ? s->tag_len : 0,
	};
	struct pump_out o;
	int err = pump_run(&stream_pump, s, &r, &o);
	*done = o.done;
	if (o.dead) {
		/* Pieces may still be in flight, into buffers we must not
		 * reuse: drop the whole queue. */
		stream_queue_drop(c);
		s->open = 0;
		s->handle = 0;
		return err;
	}
	if (o.sent)
		s->started = s->open = 1;
	if (o.failed || o.last_sent)
		s->open = 0; /* a failed piece ends the stream, as LAST does */
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
