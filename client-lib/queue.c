/* SPDX-License-Identifier: MIT */
/*
 * Queues: fill submission entries privately, publish the tail once per
 * burst, ring the doorbell only when the worker asked for it; take
 * completions, wait for them. Opening and closing: queue_open.c.
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cryptod/clock.h>

size_t cc_arena_size(const struct cc_queue *q)
{
	return q->arena_size;
}

void *cc_buf_alloc(struct cc_queue *q, size_t len)
{
	if (len > q->arena_size)
		return NULL;
	int64_t off = arena_alloc(&q->alloc, len);
	return off < 0 ? NULL : q->arena + off;
}

void cc_buf_free(struct cc_queue *q, void *buf)
{
	if (!buf)
		return;
	uint8_t *b = buf;
	if (b < q->arena || b >= q->arena + q->arena_size)
		return;
	arena_free(&q->alloc, (uint64_t)(b - q->arena));
}

/* Pointer + length inside the arena -> offset; -1 when outside. */
static int64_t queue_off(const struct cc_queue *q, const void *p, uint64_t len)
{
	if (!len && !p)
		return 0;
	const uint8_t *b = p;
	if (b < q->arena || b > q->arena + q->arena_size)
		return -1;
	uint64_t off = (uint64_t)(b - q->arena);
	if (off + len > q->arena_size)
		return -1;
	return (int64_t)off;
}

/* An arena list of n segments -> its offset; -1 when outside. */
static int64_t queue_list(const struct cc_queue *q,
			  const struct cc_sgl_entry *l, unsigned n)
{
	/* The count's limit is the daemon's to enforce, per op; only the
	 * ABI field's width is ours. */
	if (!l || n == 0 || n > UINT16_MAX)
		return -1;
	return queue_off(q, l, (uint64_t)n * sizeof(*l));
}

/* The tag length the daemon will use for op. */
static unsigned queue_tag_len(const struct cc_queue *q, const struct cc_op *op)
{
	if (op->sessionless) /* a key pair's has none (the daemon refuses
			      * session-less ones) */
		return op->sessionless->tag_len ? op->sessionless->tag_len
		       : crd_alg_pkey(op->sessionless->alg)
			       ? 0
			       : cc_alg_tag_len(op->sessionless->alg);
	return op->session <= q->conn->max_sessions
		       ? q->conn->tag_len[op->session]
		       : 0;
}

/* The algorithm of op's session (0 when unknown). */
static unsigned queue_alg(const struct cc_queue *q, const struct cc_op *op)
{
	return op->sessionless ? op->sessionless->alg
	       : op->session <= q->conn->max_sessions
		       ? q->conn->sess_alg[op->session]
		       : 0;
}

/* The bytes op's buffers hold: op->len counts bits for the 3GPP
 * algorithms (crd_alg_bit_len). */
static uint32_t queue_len_bytes(const struct cc_queue *q,
				const struct cc_op *op)
{
	return crd_len_bytes(queue_alg(q, op), op->len);
}

/* The bytes op's destination holds: a key pair's op's room for its
 * longest output (none for verify), else the source's. */
static uint32_t queue_dst_len(const struct cc_queue *q, const struct cc_op *op,
			      uint32_t len)
{
	unsigned alg = queue_alg(q, op);
	if (!crd_alg_pkey(alg))
		return len;
	return op->dir == CC_VERIFY ? 0 : cc_alg_tag_len((enum cc_alg)alg);
}

/*
 * An entry as four pairs of 64-bit words, packed the way struct crd_sqe
 * lays its fields out on a little-endian machine (the asserts check the
 * offsets the packing assumes).
 */
typedef uint64_t sqe_words __attribute__((vector_size(16)));
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "sqe packing assumes little-endian");
_Static_assert(offsetof(struct crd_sqe, session) == 8 &&
		       offsetof(struct crd_sqe, op) == 12 &&
		       offsetof(struct crd_sqe, tag_len) == 15 &&
		       offsetof(struct crd_sqe, src_off) == 16 &&
		       offsetof(struct crd_sqe, len) == 20 &&
		       offsetof(struct crd_sqe, dst_off) == 24 &&
		       offsetof(struct crd_sqe, aad_off) == 28 &&
		       offsetof(struct crd_sqe, aad_len) == 32 &&
		       offsetof(struct crd_sqe, tag_off) == 36 &&
		       offsetof(struct crd_sqe, src_nseg) == 40 &&
		       offsetof(struct crd_sqe, dst_nseg) == 42 &&
		       offsetof(struct crd_sqe, sl_off) == 44,
	       "sqe layout the packing assumes");

static inline uint64_t sqe_pack32(uint32_t lo, uint32_t hi)
{
	return lo | (uint64_t)hi << 32;
}

static inline uint32_t sqe_pack16(uint16_t lo, uint16_t hi)
{
	return lo | (uint32_t)hi << 16;
}

static inline uint32_t sqe_pack8(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return a | (uint32_t)b << 8 | (uint32_t)c << 16 | (uint32_t)d << 24;
}

static inline void sqe_store(struct crd_sqe *e, sqe_words a, sqe_words b,
			     sqe_words c, sqe_words d)
{
	unsigned char *p = (unsigned char *)e;
	memcpy(p, &a, 16);
	memcpy(p + 16, &b, 16);
	memcpy(p + 32, &c, 16);
	memcpy(p + 48, &d, 16);
}

/*
 * A stream piece's number (ring_abi.h), from its handle's counter, which
 * *piece then points to: FIRST is 0, each piece after it one more (0
 * too while the taker's FIRST has not gone). A handle that is not its
 * slot's taker (a stale or a foreign one: the daemon refuses it) has
 * none and leaves the counter alone (*piece stays NULL); so does a
 * piece after FIRST that carries an IV (refused too).
 */
static uint32_t queue_piece_no(struct cc_queue *q, const struct cc_op *op,
			       uint32_t **piece)
{
	unsigned slot = crd_stream_slot(op->stream);
	int first = op->stream_flags & CC_STREAM_FIRST;
	if (slot >= CRD_STREAMS_PER_QUEUE ||
	    q->stream_handle[slot] != op->stream || (!first && op->iv_len))
		return 0;
	*piece = &q->stream_piece[slot];
	return first ? 0 : **piece;
}

/* The piece went into the ring: its stream's counter moves on past it
 * (a FIRST starts it, LAST ends it; a clone starts its new stream's). */
static void queue_piece_sent(struct cc_queue *q, const struct cc_op *op,
			     uint32_t *piece, uint32_t no)
{
	const unsigned fl = op->stream_flags;
	if (fl & CC_STREAM_LAST)
		*piece = 0;
	else if (fl & CC_STREAM_FIRST || no)
		*piece = crd_stream_piece_next(no);
	if (fl & CC_STREAM_CLONE) {
		unsigned slot = crd_stream_slot(op->stream_param);
		if (slot < CRD_STREAMS_PER_QUEUE &&
		    q->stream_handle[slot] == op->stream_param)
			q->stream_piece[slot] = crd_stream_piece_next(0);
	}
}

/*
 * Turn op's pointers into arena offsets in e. Only the library's own view
 * of the arena is checked here (a pointer outside it is a caller bug,
 * -EFAULT); lengths, overlaps and the algorithm's rules are the daemon's
 * to check, per op.
 */
int queue_fill(struct cc_queue *q, const struct cc_op *op, struct crd_sqe *e)
{
	unsigned tag_len = queue_tag_len(q, op);
	uint32_t len = queue_len_bytes(q, op);
	int64_t src, dst, sl = 0;
	uint8_t flags = 0;

	if (op->src_sgl) {
		src = queue_list(q, op->src_sgl, op->src_nseg);
		flags |= CRD_SQE_F_SRC_SGL;
	} else {
		src = queue_off(q, op->src, len);
	}
	if (op->dst_sgl) {
		dst = queue_list(q, op->dst_sgl, op->dst_nseg);
		flags |= CRD_SQE_F_DST_SGL;
	} else if (op->src_sgl && !op->dst) {
		dst = src; /* in place: the same list */
		flags |= CRD_SQE_F_DST_SGL;
	} else {
		dst = op->dst ? queue_off(q, op->dst, queue_dst_len(q, op, len))
			      : src;
	}
	if (op->sessionless) {
		if (op->session)
			return -EINVAL;
		sl = queue_off(q, op->sessionless, sizeof(*op->sessionless));
		flags |= CRD_SQE_F_SESSIONLESS;
	}
	int64_t aad = queue_off(q, op->aad, op->aad_len);
	int64_t tag;
	if (op->stream) {
		/* A piece (ring_abi.h): sl_off is the handle; the tag is
		 * LAST's, and a FIRST that is not LAST carries its parameter
		 * in tag_off. */
		/* A tag (LAST's) or a parameter (FIRST's) on another piece
		 * would be dropped without a word: refuse it. */
		const unsigned fl = op->stream_flags;
		const int clone = fl & CC_STREAM_CLONE;
		const unsigned short_tag = fl >> 8 & 0xffu;
		if (short_tag &&
		    (!(fl & CC_STREAM_LAST) || short_tag >= tag_len))
			return -EINVAL;
		if (short_tag)
			tag_len = short_tag;
		if (op->sessionless || op->src_sgl || op->dst_sgl ||
		    (fl & ~(CC_STREAM_FIRST | CC_STREAM_LAST | CC_STREAM_CLONE |
			    CC_STREAM_TAG_LEN(0xff))) ||
		    (op->tag && !(fl & CC_STREAM_LAST)) ||
		    (op->stream_param && !clone &&
		     (fl & (CC_STREAM_FIRST | CC_STREAM_LAST)) !=
			     CC_STREAM_FIRST) ||
		    (clone && ((fl & (CC_STREAM_FIRST | CC_STREAM_LAST)) ||
			       !op->stream_param || op->len || op->iv_len ||
			       op->aad_len)))
			return -EINVAL;
		flags |= CRD_SQE_F_STREAM;
		if (clone)
			flags |= CRD_SQE_F_CLONE;
		if (op->stream_flags & CC_STREAM_FIRST)
			flags |= CRD_SQE_F_FIRST;
		if (op->stream_flags & CC_STREAM_LAST)
			flags |= CRD_SQE_F_LAST;
		sl = op->stream;
		if (op->stream_flags & CC_STREAM_LAST)
			tag = queue_off(q, op->tag, tag_len);
		else
			tag = op->stream_flags & (CC_STREAM_FIRST |
						  CC_STREAM_CLONE)
				      ? op->stream_param
				      : 0;
	} else {
		if (op->stream_flags || op->stream_param)
			return -EINVAL; /* stream fields without a handle */
		tag = queue_off(q, op->tag, tag_len);
	}
	if (op->iv_len > CRD_IV_ARENA_MAX || (op->iv_len && !op->iv))
		return -EINVAL;
	/* A long IV is read from the arena, as the AAD is. */
	int64_t iv_off = 0;
	if (op->iv_len > CRD_IV_MAX) {
		iv_off = queue_off(q, op->iv, op->iv_len);
		flags |= CRD_SQE_F_ARENA_IV;
	}
	if (src < 0 || dst < 0 || aad < 0 || tag < 0 || sl < 0 || iv_off < 0)
		return -EFAULT;
	/* the op's code is the ABI's (alg.c): sign, verify and derive
	 * only on a key pair's session, which the daemon checks */
	if (op->dir < CC_ENCRYPT || op->dir > CC_DERIVE)
		return -EINVAL;

	/* Compose the entry in registers and store it as four 16-byte
	 * vectors. Building it in a stack copy first and copying that (as
	 * before) made the copy's wide loads wait for the narrow field stores
	 * under them, and so for every older store, including the previous
	 * entry's stores to a line the worker holds: one full line transfer
	 * per op, in series. Four stores from registers ask nothing of the
	 * store buffer, which overlaps the transfers of several entries. */
	uint32_t *piece = NULL; /* the stream's counter, to move on */
	uint32_t piece_no = op->stream ? queue_piece_no(q, op, &piece) : 0;
	uint8_t dir = (uint8_t)op->dir;
	uint16_t dst_nseg = op->dst_sgl		      ? op->dst_nseg
			    : op->src_sgl && !op->dst ? op->src_nseg
						      : 0;
	uint64_t iv[2] = { 0, 0 };
	if (op->iv_len == 12) { /* GCM's: two loads, not a memcpy call */
		uint32_t w;
		memcpy(&iv[0], op->iv, 8);
		memcpy(&w, op->iv + 8, 4);
		iv[1] = w;
	} else if (flags & CRD_SQE_F_ARENA_IV) {
		iv[0] = (uint32_t)iv_off; /* iv[0..3], little-endian */
	} else if (op->iv_len) {
		memcpy(iv, op->iv, op->iv_len);
	} else if (piece_no) {
		iv[0] = piece_no; /* iv[0..3], little-endian */
	}
	sqe_store(e,
		  (sqe_words){
			  op->user_data,
			  sqe_pack32(op->session,
				     sqe_pack8(dir, flags, op->iv_len,
					       /* 0: the session's */
					       op->stream
						       ? op->stream_flags >> 8 &
								 0xffu
						       : 0)) },
		  (sqe_words){ sqe_pack32((uint32_t)src, op->len),
			       sqe_pack32((uint32_t)dst, (uint32_t)aad) },
		  (sqe_words){
			  sqe_pack32(op->aad_len, (uint32_t)tag),
			  sqe_pack32(sqe_pack16(op->src_sgl ? op->src_nseg : 0,
						dst_nseg),
				     (uint32_t)sl) },
		  (sqe_words){ iv[0], iv[1] });
	if (piece)
		queue_piece_sent(q, op, piece, piece_no);
	return 0;
}

int cc_stream_handle_get(struct cc_queue *q, uint32_t *handle)
{
	if (!q->stream_free)
		return CC_ERR_STREAM_LIMIT;
	unsigned slot = (unsigned)__builtin_ctz(q->stream_free);
	q->stream_free &= ~(1u << slot);
	/* The tag bits: a different value for every stream of this queue
	 * (and, mixed with its id, unlikely to be another queue's), so a
	 * stale or foreign handle is refused by the daemon. */
	uint32_t tag = (++q->stream_seq * 0x9e3779b1u ^ q->id) & 0xffffff;
	*handle = (tag ? tag : 1) << 8 | slot;
	q->stream_handle[slot] = *handle;
	q->stream_piece[slot] = 0;
	return 0;
}

void cc_stream_handle_put(struct cc_queue *q, uint32_t handle)
{
	unsigned slot = crd_stream_slot(handle);
	/* Only the handle that holds the slot frees it: a second put of a
	 * handle whose slot went to another stream since does nothing. */
	if (slot < CRD_STREAMS_PER_QUEUE && q->stream_handle[slot] == handle &&
	    !(q->stream_free & 1u << slot)) {
		q->stream_free |= 1u << slot;
		q->stream_handle[slot] = 0;
	}
}

int cc_sgl_set(struct cc_queue *q, struct cc_sgl_entry *sgl, unsigned i,
	       const void *buf, uint32_t len)
{
	int64_t off = queue_off(q, buf, len);
	if (off < 0 || queue_off(q, &sgl[i], sizeof(sgl[i])) < 0)
		return -EFAULT;
	sgl[i].off = (uint32_t)off;
	sgl[i].len = len;
	return 0;
}

static int queue_dead(const struct cc_queue *q)
{
	return crd_load_acquire(&q->hdr->daemon.kflags) & CRD_F_DEAD;
}

int cc_enqueue_burst(struct cc_queue *q, const struct cc_op *ops, unsigned n)
{
	if (conn_forked(q->conn))
		return -ECHILD;
	if (queue_dead(q))
		return -EPIPE;
	/* The head as last read is enough when it leaves room: reading
	 * the line the worker writes at every claim costs a transfer. */
	uint32_t space =
		crd_ring_free(q->sq_head_seen, q->sq_tail, q->sq_entries);
	if (n > space || space > q->sq_entries)
		space = queue_space(q);
	if (n > space) {
		queue_count_retries(q, n - space);
		n = space;
	}

	uint32_t mask = q->sq_entries - 1, i;
	/* The slots were last read by the worker. Ask for these and, as far
	 * as they are free already, as many more now: the transfers
	 * overlap with each other and with this fill, and the next burst
	 * finds its lines here. Never a slot the worker has yet to
	 * read: that would pull the line away from it. */
	uint32_t ahead = space - n < n ? space - n : n;
	for (i = 0; i < n + ahead; i++)
		__builtin_prefetch(&q->sq[(q->sq_tail + i) & mask]);
	for (i = 0; i < n; i++) {
		int err =
			queue_fill(q, &ops[i], &q->sq[(q->sq_tail + i) & mask]);
		if (err) {
			if (i == 0)
				return err;
			break;
		}
	}
	if (i == 0)
		return 0;
	q->sq_tail += i;
	q->sq_free_hint = 0; /* cc_submit looks again */
	queue_publish(q);    /* with anything cc_submit() staged before */
	return (int)i;
}

/* Read what the daemon's completion doorbell (a socket) holds. Each byte
 * is one wake-up; a short read means it is empty. */
static void queue_doorbell_drain(struct cc_queue *q)
{
	char b[64];
	ssize_t n;
	do {
		n = recv(q->cq_sock, b, sizeof(b), MSG_DONTWAIT);
		if (n > 0)
			q->bells_read += (uint32_t)n;
	} while (n == sizeof(b));
}

/* Does the doorbell hold a byte of a counted ring (ring_abi.h,
 * daemon.krung)? Counted after it was sent, so a count ahead of what we
 * read means unread bytes; a byte read before it was counted never
 * makes this say yes. */
static int queue_doorbell_full(const struct cc_queue *q)
{
	uint32_t rung = crd_load_acquire(&q->hdr->daemon.krung);
	return (int32_t)(rung - q->bells_read) > 0;
}

void queue_publish(struct cc_queue *q)
{
	q->staged = 0;
	/* Every op the tail shows must fit below the cq head the worker
	 * sees (queue_cq_head_publish). */
	queue_cq_head_publish(q, 0);
	/* Publish entries and the data they point at (release: pairs with
	 * the worker's acquire load of the tail). Need-wakeup handshake, our
	 * half: tail stored, then read the worker's flag (daemon/data/
	 * worker.c worker_park does the mirror). Between the two, a fence,
	 * unless the worker's membarrier stands in for it: the fence waited
	 * for this line and the data's to cross cores, at every publish. */
	uint32_t flags;
	if (q->sq_fenceless) {
		crd_store_release(&q->hdr->ksq_tail.k, q->sq_tail);
		crd_compiler_barrier();
		flags = crd_load_relaxed(&q->hdr->daemon.kflags);
	} else {
		crd_store_seq_cst(&q->hdr->ksq_tail.k, q->sq_tail);
		flags = crd_load_seq_cst(&q->hdr->daemon.kflags);
	}
	if (flags & CRD_F_NEED_WAKEUP)
		eventfd_write(q->sq_efd, 1);
}

uint32_t queue_space(struct cc_queue *q)
{
	/* Pairs with the worker's release store of its sq head: the slots
	 * it freed are no longer read. */
	uint32_t head = crd_load_acquire(&q->hdr->ksq_head.k);
	/* CRD_FEAT_CQE_SLOT: a completion we read was claimed, and the
	 * daemon copies an entry before it claims it, so its submission
	 * slot is free although ksq_head may not have passed it yet (the
	 * order lock's holder, a sibling worker, publishes that). */
	if (q->cqe_slot && crd_seq_before(head, q->cq_head))
		head = q->cq_head;
	uint32_t space = crd_ring_free(head, q->sq_tail, q->sq_entries);
	if (space <= q->sq_entries)
		q->sq_head_seen = head;
	return space > q->sq_entries ? 0 : space; /* the daemon never lies */
}

void queue_count_retries(struct cc_queue *q, unsigned n)
{
	q->retries += n;
	crd_store_relaxed_n(&q->hdr->client.kretries, q->retries);
}

/*
 * Tell the worker which completion slots it may reuse: our cq head. It
 * reads the line at every poll, so a store at every dequeue made the
 * line cross cores twice per op. The worker claims an op only when its
 * completion slot is free by the head it sees, so the head it sees may
 * lag ours by fewer than a quarter of the ring (at most CQ_HEAD_LAG):
 * our oldest op is then always claimable, so a client that spins on
 * the ring is never stuck, and the lag is published as soon as it
 * reaches that. Besides, while any op the tail shows would not fit
 * below the lagging head, the head goes out at once, so that no op
 * waits on it. force: publish whatever the lag (before a sleep).
 */
enum { CQ_HEAD_LAG = 32 };

void queue_cq_head_publish(struct cc_queue *q, int force)
{
	uint32_t lag = q->cq_head - q->cq_head_pub;
	if (!lag)
		return;
	uint32_t lim = q->cq_entries / 4 < CQ_HEAD_LAG ? q->cq_entries / 4
						       : CQ_HEAD_LAG;
	if (!force && lag < lim && q->sq_tail - q->cq_head_pub <= q->cq_entries)
		return;
	uint32_t head = q->cq_head;
	if (q->cqe_slot) {
		/* Slots fill before the daemon posts them: never publish a
		 * head past its tail (ring_abi.h). The rest goes out at a
		 * later call; cc_wait publishes before each sleep. */
		uint32_t tail = crd_load_acquire(&q->hdr->kcq_tail.k);
		if (crd_seq_before(tail, head))
			head = tail;
		if (head == q->cq_head_pub)
			return;
	}
	q->cq_head_pub = head;
	/* Slots read (and emptied); the worker may reuse them. */
	crd_store_release(&q->hdr->kcq_head.k, head);
}

/* CRD_FEAT_CQE_SLOT: the completion at index i, if its slot is filled.
 * The status is loaded first (acquire: the daemon's single 16-byte store
 * makes the rest visible with it). */
static inline struct crd_cqe *cqe_filled(const struct cc_queue *q, uint32_t i)
{
	struct crd_cqe *c = &q->cq[i & (q->cq_entries - 1)];
	return __atomic_load_n(&c->status, __ATOMIC_ACQUIRE) != CRD_CQE_EMPTY
		       ? c
		       : NULL;
}

/* Up to n completions by their slots, each emptied as it is read. */
static unsigned dequeue_slots(struct cc_queue *q, struct cc_completion *out,
			      unsigned n)
{
	uint32_t in_flight = q->sq_tail - q->cq_head;
	if (n > in_flight)
		n = in_flight;
	unsigned i = 0;
	for (struct crd_cqe *c; i < n && (c = cqe_filled(q, q->cq_head + i));
	     i++) {
		out[i].user_data = c->user_data;
		out[i].status = c->status;
		out[i].len = c->len;
		__atomic_store_n(&c->status, CRD_CQE_EMPTY, __ATOMIC_RELAXED);
	}
	return i;
}

int cc_dequeue_burst(struct cc_queue *q, struct cc_completion *out, unsigned n)
{
	if (conn_forked(q->conn))
		return -ECHILD;
	/* Whoever looks for completions gets their staged ops sent. */
	if (q->staged)
		queue_publish(q);
	if (q->cqe_slot) {
		n = dequeue_slots(q, out, n);
	} else {
		/* Pairs with the worker's release store of the cq tail. */
		uint32_t tail = crd_load_acquire(&q->hdr->kcq_tail.k);
		uint32_t avail = crd_ring_used(q->cq_head, tail);
		if (avail > q->cq_entries)
			return -EPROTO;
		if (n > avail)
			n = avail;
		uint32_t mask = q->cq_entries - 1;
		for (uint32_t i = 0; i < n; i++) {
			const struct crd_cqe *c =
				&q->cq[(q->cq_head + i) & mask];
			out[i].user_data = c->user_data;
			out[i].status = c->status;
			out[i].len = c->len;
		}
	}
	q->cq_head += n;
	/* With CRD_FEAT_CQE_SLOT a head held back at the tail must go out
	 * once the daemon posts, or a client that only spins here may keep
	 * the op it waits for from being claimed: look whenever we come. */
	if (n || q->cqe_slot)
		queue_cq_head_publish(q, 0);
	return (int)n;
}

unsigned cc_in_flight(const struct cc_queue *q)
{
	return q->sq_tail - q->cq_head;
}

static int queue_ready(const struct cc_queue *q)
{
	if (q->cqe_slot)
		return q->sq_tail != q->cq_head && cqe_filled(q, q->cq_head);
	return crd_load_acquire(&q->hdr->kcq_tail.k) != q->cq_head;
}

/* queue_ready after an arm: the need-wakeup handshake's re-load of the
 * tail (the worker stores it, then loads our flag). With
 * CRD_FEAT_CQE_SLOT our head may be past the tail: a tail ahead of it,
 * or a slot ready, means a completion. And a head we held back at the
 * tail goes out now: a post from before the arm rang no one, and the op
 * we are about to sleep for may need the slots it frees. */
static int queue_ready_armed(struct cc_queue *q)
{
	uint32_t tail = crd_load_seq_cst(&q->hdr->kcq_tail.k);
	if (!q->cqe_slot)
		return tail != q->cq_head;
	if (q->cq_head_pub != q->cq_head)
		queue_cq_head_publish(q, 1);
	return crd_seq_before(q->cq_head, tail) || queue_ready(q);
}

enum { CC_WAIT_SPIN_NS = 20000 };

/*
 * Set NEED_WAKEUP for a sleep. once: the daemon rings for this arm only
 * (a fresh nonzero arm count); else for every batch while the flag stays
 * set (arm count 0). The count is written before the flag, and the
 * daemon's ring count read before both, so that cc_wait_pending() can
 * tell whether this arm was answered. Pairs with worker_post
 * (daemon/data/worker.c), which stores the cq tail, then reads the flag
 * and the count: the caller re-reads the tail after this.
 */
static void queue_arm(struct cc_queue *q, int once)
{
	uint32_t arm = 0;
	if (once) {
		arm = q->arm + 1;
		arm += !arm; /* 0 means "every batch" */
	}
	q->arm = arm;
	q->arm_rung = crd_load_acquire(&q->hdr->daemon.krung);
	crd_store_seq_cst(&q->hdr->client.karm, arm);
	crd_flag_set(&q->hdr->client.kflags, CRD_F_NEED_WAKEUP);
}

int cc_wait(struct cc_queue *q, int timeout_ms)
{
	if (conn_forked(q->conn))
		return -ECHILD;
	if (q->staged)
		queue_publish(q);
	int64_t deadline =
		timeout_ms < 0 ? -1 : (int64_t)crd_now_ms() + timeout_ms;
	uint32_t *flags = &q->hdr->client.kflags;
	int ret = 0;

	/* Completions of small ops arrive within microseconds: spin a
	 * little before paying a sleep and a wake-up (tens of us). Yield
	 * now and then as we spin (clock.h), so a worker sharing our core
	 * is not starved. */
	if (timeout_ms != 0) {
		uint64_t t0 = crd_now_ns(), yielded = t0;
		for (unsigned i = 1;; i++) {
			if (queue_ready(q))
				return 1;
			crd_cpu_relax();
			if (i % 16)
				continue;
			uint64_t t = crd_now_ns();
			if (t - t0 >= CC_WAIT_SPIN_NS)
				break;
			if (t - yielded >= CRD_SPIN_YIELD_NS) {
				sched_yield();
				yielded = t;
			}
		}
	}

	for (;;) {
		/* About to sleep: no lag (with CRD_FEAT_CQE_SLOT, what the
		 * tail now allows: a post that lets more out wakes us). */
		queue_cq_head_publish(q, 1);
		if (queue_ready(q)) {
			ret = 1;
			break;
		}
		if (queue_dead(q)) {
			ret = -EPIPE;
			break;
		}
		/* Need-wakeup handshake, our half: flag, then re-check.
		 * Pairs with the worker's cq tail store, then flag load. */
		queue_arm(q, 1); /* each pass round the loop arms anew */
		if (queue_ready_armed(q)) {
			ret = 1;
			break;
		}
		int wait = -1;
		if (deadline >= 0) {
			int64_t left = deadline - (int64_t)crd_now_ms();
			if (left <= 0)
				break; /* timed out: ret 0 */
			wait = left > INT32_MAX ? INT32_MAX : (int)left;
		}
		/* The control socket hangs up when the daemon dies. */
		struct pollfd p[2] = {
			{ .fd = q->cq_sock, .events = POLLIN },
			{ .fd = q->conn->fd, .events = 0 },
		};
		int r = poll(p, 2, wait);
		if (r < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		/* A doorbell may be left over from a completion we had
		 * already seen: it only sends us round the loop again. */
		if (r > 0 && (p[0].revents & POLLIN))
			queue_doorbell_drain(q);
		if (r > 0 && (p[1].revents & (POLLHUP | POLLERR)) &&
		    !queue_ready(q)) {
			ret = -EPIPE;
			break;
		}
	}
	crd_flag_clear(flags, CRD_F_NEED_WAKEUP);
	return ret;
}

int cc_queue_fd(const struct cc_queue *q)
{
	return q->cq_sock;
}

static int wait_prepare(struct cc_queue *q, int once)
{
	if (conn_forked(q->conn))
		return -ECHILD;
	if (q->staged)
		queue_publish(q);
	queue_cq_head_publish(q, 1); /* the caller may sleep: no lag */
	/* Leftover doorbells first: after this, readable means new. The
	 * daemon counts the bytes its wake-up rings sent (krung): none
	 * unread, no system call. A count of 0 may be a daemon that does
	 * not count: drain. */
	if (!crd_load_relaxed(&q->hdr->daemon.krung) || queue_doorbell_full(q))
		queue_doorbell_drain(q);
	if (queue_ready(q))
		return 1;
	if (queue_dead(q))
		return -EPIPE;
	/* The need-wakeup handshake, as cc_wait's. */
	queue_arm(q, once);
	if (queue_ready_armed(q))
		return 1;
	struct pollfd p = { .fd = q->conn->fd, .events = 0 };
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
		return -EPIPE; /* the daemon went away */
	return 0;
}

int cc_wait_prepare(struct cc_queue *q)
{
	return wait_prepare(q, 0);
}

int cc_wait_prepare_once(struct cc_queue *q)
{
	return wait_prepare(q, 1);
}

int cc_queue_ready(const struct cc_queue *q)
{
	return !conn_forked(q->conn) && queue_ready(q);
}

int cc_wait_pending(const struct cc_queue *q)
{
	if (conn_forked(q->conn))
		return 0;
	if (queue_doorbell_full(q))
		return 1; /* readable now */
	/* Armed once, and not answered yet: readable at the next post. */
	return q->arm &&
	       (crd_load_relaxed(&q->hdr->client.kflags) & CRD_F_NEED_WAKEUP) &&
	       crd_load_acquire(&q->hdr->daemon.krung) == q->arm_rung;
}

void cc_wait_cancel(struct cc_queue *q)
{
	if (!conn_forked(q->conn))
		crd_flag_clear(&q->hdr->client.kflags, CRD_F_NEED_WAKEUP);
}
