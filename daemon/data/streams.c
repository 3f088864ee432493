/* SPDX-License-Identifier: MIT */
#include "streams.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bounds.h"
#include "log.h"
#include "session.h"

int stream_table_init(struct stream_table *t, uint32_t cq_entries)
{
	memset(t, 0, sizeof(*t));
	/* Stream state is key-derived (GHASH and HMAC states, CBC-MAC):
	 * locked, out of core dumps, wiped, as the key store is. */
	t->map_size = crd_align_up(
		CRD_STREAMS_PER_QUEUE * sizeof(struct stream_slot), 4096);
	void *p = mmap(NULL, t->map_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	(void)madvise(p, t->map_size, MADV_DONTDUMP);
	if (mlock(p, t->map_size) < 0) {
		static int warned; /* control thread only */
		if (!warned++)
			log_warn("streams: mlock failed (%s): stream state may "
				 "be swapped out; raise LimitMEMLOCK",
				 strerror(errno));
	}
	t->slot = p;
	t->pend = calloc(cq_entries, sizeof(*t->pend));
	if (!t->pend) {
		stream_table_fini(t);
		return -ENOMEM;
	}
	t->pend_mask = cq_entries - 1;
	return 0;
}

/* The gate's busy bit; the rest is the next piece's number << 1. */
enum { GATE_BUSY = 1 };

static uint64_t gate_word(uint32_t next)
{
	return (uint64_t)next << 1;
}

/* Take slot's gate whatever number it shows: its previous word, with
 * GATE_BUSY set if another worker holds it (then it stays theirs). */
static uint64_t gate_take(struct stream_table *t, unsigned slot)
{
	return atomic_fetch_or_explicit(&t->gate[slot], GATE_BUSY,
					memory_order_acquire);
}

/* Let the gate go, showing word: everything written to the slot before
 * is the next holder's to see. */
static void gate_give(struct stream_table *t, unsigned slot, uint64_t word)
{
	atomic_store_explicit(&t->gate[slot], word, memory_order_release);
}

static void stream_close(struct stream_table *t, struct stream_slot *ss)
{
	explicit_bzero(ss, sizeof(*ss)); /* state, handle, open */
	atomic_fetch_sub_explicit(&t->nopen, 1, memory_order_relaxed);
	if (t->client_open)
		atomic_fetch_sub_explicit(t->client_open, 1,
					  memory_order_relaxed);
}

void stream_table_fini(struct stream_table *t)
{
	if (t->slot) {
		for (unsigned i = 0; i < CRD_STREAMS_PER_QUEUE; i++)
			if (t->slot[i].open)
				stream_close(t, &t->slot[i]);
		explicit_bzero(t->slot, t->map_size);
		munmap(t->slot, t->map_size);
		t->slot = NULL;
	}
	free(t->pend);
	t->pend = NULL;
}

void stream_sweep_request(struct stream_table *t)
{
	atomic_store_explicit(&t->sweep, 1, memory_order_release);
}

void stream_sweep(struct stream_table *t, const struct session_table *st)
{
	if (!atomic_exchange_explicit(&t->sweep, 0, memory_order_acquire))
		return;
	for (unsigned i = 0;
	     i < CRD_STREAMS_PER_QUEUE &&
	     atomic_load_explicit(&t->nopen, memory_order_relaxed);
	     i++) {
		uint64_t g = gate_take(t, i);
		if (g & GATE_BUSY) {
			/* Its piece runs: the worker that ran it posts next
			 * (order_done, then worker_post), and sweeps. */
			stream_sweep_request(t);
			continue;
		}
		struct stream_slot *ss = &t->slot[i];
		if (ss->open) {
			const struct session *s =
				session_table_get(st, ss->session_id);
			if (!s || s->serial != ss->session_serial)
				stream_close(t, ss);
		}
		gate_give(t, i, ss->open ? g : 0);
	}
}

/* FIRST: take the slot for handle, within the owner's bound. */
static int stream_open(struct stream_table *t, struct stream_slot *ss,
		       uint32_t handle, const struct crd_sqe *e,
		       const struct session *s)
{
	if (t->client_open && atomic_fetch_add_explicit(t->client_open, 1,
							memory_order_relaxed) >=
				      MAX_STREAMS_PER_CLIENT) {
		atomic_fetch_sub_explicit(t->client_open, 1,
					  memory_order_relaxed);
		return CRD_ST_STREAM_LIMIT;
	}
	memset(ss->state, 0, sizeof(ss->state));
	ss->handle = handle;
	ss->session_id = e->session;
	ss->session_serial = s->serial;
	ss->dir = e->op;
	ss->open = 1;
	atomic_fetch_add_explicit(&t->nopen, 1, memory_order_relaxed);
	return CRD_ST_OK;
}

/* Is the stream in ss over, its session gone (even if no sweep came by
 * yet: one only runs at a lock acquisition)? Then close it. */
static int stream_live(struct stream_table *t,
		       const struct session_table *sessions,
		       struct stream_slot *ss)
{
	const struct session *os = session_table_get(sessions, ss->session_id);
	if (os && os->serial == ss->session_serial)
		return 1;
	stream_close(t, ss);
	return 0;
}

/*
 * CLONE: open the stream tag_off names as a copy of ss, on the clone's
 * session s (ring_abi.h). s may be another session than the source's (the
 * copy of a context makes its own, with the same key) but must be of the
 * same algorithm, engine and tag length: the engine then reads only state
 * its own pieces wrote, in its own layout. A failure on the new handle's
 * side leaves the source going on.
 */
static int stream_clone(struct stream_table *t,
			const struct session_table *sessions,
			struct stream_slot *ss, const struct crd_sqe *e,
			const struct session *s)
{
	if (!stream_live(t, sessions, ss))
		return CRD_ST_NO_STREAM;
	const struct session *src = session_table_get(sessions, ss->session_id);
	if (s->alg != src->alg || s->eng != src->eng ||
	    s->tag_len != src->tag_len || e->op != ss->dir)
		return CRD_ST_BAD_PARAM;
	uint32_t handle = e->tag_off;
	unsigned slot = crd_stream_slot(handle);
	if (slot >= CRD_STREAMS_PER_QUEUE)
		return CRD_ST_STREAM_LIMIT;
	struct stream_slot *ns = &t->slot[slot];
	if (ns == ss)
		return CRD_ST_STREAM_BUSY;
	uint64_t g = gate_take(t, slot);
	if (g & GATE_BUSY)
		return CRD_ST_STREAM_BUSY; /* another worker's, in use */
	int st = ns->open && stream_live(t, sessions, ns)
			 ? CRD_ST_STREAM_BUSY
			 : stream_open(t, ns, handle, e, s);
	if (st == CRD_ST_OK) {
		memcpy(ns->state, ss->state, sizeof(ns->state));
		/* memcpy moves the state through the vector registers. */
		engine_clear_vector_regs();
		g = gate_word(crd_stream_piece_next(0)); /* as after FIRST */
	}
	gate_give(t, slot, ns->open ? g : 0);
	return st;
}

/*
 * May s run stream pieces? Not when it may decrypt but not encrypt an
 * authenticated keystream cipher (a decrypt-only named key of a
 * counter-mode AEAD): a piece before LAST releases plaintext before the
 * tag is checked, and plaintext of chosen ciphertext (zeros) under a
 * chosen IV is the keystream, which encrypts anything. Such a key does
 * one-shot decrypts only, which verify first and release nothing on a
 * bad tag (docs/keys.md).
 */
static int stream_allowed(const struct session *s)
{
	enum crd_alg_kind k = crd_alg_kind(s->alg);
	int dec_only = (s->op_mask & (1u << CRD_OP_DECRYPT)) &&
		       !(s->op_mask & (1u << CRD_OP_ENCRYPT));
	return !(dec_only && crd_alg_keystream(s->alg) &&
		 (k == CRD_KIND_AEAD || k == CRD_KIND_AUTHENC));
}

/* stream_piece's work, holding ss's gate. */
static int stream_run(struct stream_table *t,
		      const struct session_table *sessions, uint8_t *arena,
		      uint64_t arena_size, const struct crd_sqe *e,
		      struct engine_op *op, void *const *eng_ctx,
		      struct desc_sgl *sg, struct stream_slot *ss)
{
	uint32_t handle = e->sl_off;
	int first = e->flags & CRD_SQE_F_FIRST,
	    last = e->flags & CRD_SQE_F_LAST;
	if (first && ss->open && stream_live(t, sessions, ss))
		return op->status = CRD_ST_STREAM_BUSY; /* it goes on */
	if (!first && (!ss->open || ss->handle != handle))
		return op->status = CRD_ST_NO_STREAM;

	const struct session *s = session_table_get(sessions, e->session);
	/* An algorithm that does not stream says so, whatever else is
	 * wrong with its first piece. */
	if (first && s && !engine_streams(s->eng, s->alg))
		return op->status = -EOPNOTSUPP;
	int st = desc_resolve(e, arena, arena_size, s, op, sg);
	if (st == CRD_ST_OK && op->sgl)
		st = CRD_ST_BAD_DESC; /* never flat: not a stream's shape */
	/* A clone onto such a session is refused like a FIRST on it; the
	 * source goes on. */
	if (st == CRD_ST_OK && (e->flags & CRD_SQE_F_CLONE))
		return op->status =
			       stream_allowed(s)
				       ? stream_clone(t, sessions, ss, e, s)
				       : CRD_ST_POLICY;
	if (st == CRD_ST_OK && !stream_allowed(s))
		st = CRD_ST_POLICY;
	if (st == CRD_ST_OK && !first &&
	    (s->serial != ss->session_serial || e->op != ss->dir))
		st = s->serial != ss->session_serial ? CRD_ST_NO_SESSION
						     : CRD_ST_BAD_PARAM;
	if (st == CRD_ST_OK && first)
		st = stream_open(t, ss, handle, e, s);
	if (st != CRD_ST_OK) {
		op->status = st;
		op->len = 0;
		/* A FIRST that failed opened nothing; any other failure ends
		 * the stream it named (open, with this handle: checked). */
		if (!first)
			stream_close(t, ss);
		return st;
	}

	op->pos = (uint8_t)((first ? ENGINE_FIRST : 0) |
			    (last ? ENGINE_LAST : 0));
	op->param = first ? (last ? op->len : e->tag_off) : 0;
	s->eng->stream(eng_ctx[s->eng_idx], op, ss->state);
	/* The engine's frames held the stream's state (hash words, GHASH
	 * values) and this worker may never run the stream's LAST: its
	 * dead stack must not keep them. */
	engine_burn_stack_n(STREAM_BURN_STACK);
	engine_clear_vector_regs();
	if (op->status != CRD_ST_OK || last)
		stream_close(t, ss);
	return op->status;
}

int stream_piece(struct stream_table *t, const struct session_table *sessions,
		 uint8_t *arena, uint64_t arena_size, const struct crd_sqe *e,
		 struct engine_op *op, void *const *eng_ctx,
		 struct desc_sgl *sg, int claim)
{
	unsigned slot = crd_stream_slot(e->sl_off);
	int first = e->flags & CRD_SQE_F_FIRST;
	/* FIRST is piece 0; a clone's own number is in its source. */
	uint32_t no = first ? 0 : crd_stream_piece_no(e->iv);

	memset(op, 0, sizeof(*op));
	if (slot >= CRD_STREAMS_PER_QUEUE)
		return op->status = CRD_ST_STREAM_LIMIT;
	uint64_t g;
	if (claim) {
		/*
		 * Only a numbered piece, the one the gate waits for. Never a
		 * FIRST: pieces submitted before it for the same slot (of an
		 * ended stream, or a MIDDLE without FIRST) may still wait
		 * for the poster, and must meet the slot as it was; the
		 * poster runs the FIRST after them. From there on the
		 * numbers order the stream's pieces. Never a clone either:
		 * it opens a second slot.
		 */
		g = gate_word(no);
		if ((e->flags & (CRD_SQE_F_FIRST | CRD_SQE_F_CLONE)) || !no ||
		    !atomic_compare_exchange_strong_explicit(
			    &t->gate[slot], &g, g | GATE_BUSY,
			    memory_order_acquire, memory_order_relaxed))
			return op->status = STREAM_DEFERRED;
	} else {
		g = gate_take(t, slot);
		if (g & GATE_BUSY) /* not this piece's turn: a stale one */
			return op->status = first ? CRD_ST_STREAM_BUSY
						  : CRD_ST_NO_STREAM;
	}
	struct stream_slot *ss = &t->slot[slot];
	/* Does the piece belong to the stream in the slot, or open it? Then
	 * the gate moves on past it. A piece turned away (a stale one of an
	 * earlier stream, another handle's, a FIRST on a busy slot) leaves
	 * the gate as it was: it must not let the slot's own next piece
	 * skip one. */
	int owns = !first && ss->open && ss->handle == e->sl_off;
	int st = stream_run(t, sessions, arena, arena_size, e, op, eng_ctx, sg,
			    ss);
	if (first)
		owns = st != CRD_ST_STREAM_BUSY;
	gate_give(t, slot,
		  !ss->open ? 0
		  : owns    ? gate_word(crd_stream_piece_next(no))
			    : g);
	return st;
}
