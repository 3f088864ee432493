// SPDX-License-Identifier: MIT
/*
 * Streams against OpenSSL: every algorithm that streams (stream_common.c's
 * table: AES-GCM 128/192/256, ChaCha20-Poly1305, AES-CCM with its length
 * up front, AES-CBC, AES-CTR, AES-ECB, AES-XTS per data unit, HMAC-SHA-1/
 * 224/256/384/512, SHA-1..512, AES-CMAC), each message encrypted and
 * decrypted (the tag verified, the plaintext back) as a stream of pieces
 * cut at random from 1 byte to 1 MiB (whole blocks or data units where the
 * algorithm wants them, now and then a LAST of no data), compared with
 * OpenSSL's one-shot answer.
 *
 * A daemon with two workers; STREAM_CLIENTS client processes at once,
 * each with its own connection and two queues busy at the same time; in
 * each queue, rounds of several streams open at once whose pieces are
 * interleaved at random in one submission sequence and sent in bursts
 * through the zero-copy API (cc_op.stream), so that several pieces of one
 * stream are in flight at once and the workers must keep each stream's
 * order between them. Encrypt and decrypt of a message share a session.
 * Then the copying API (cc_stream_open/update/final, random update sizes,
 * a forged tag). Messages longer than one op: test_diff_stream_long.
 *
 * Every piece must complete OK with the bytes it wrote: its length for a
 * cipher or AEAD, 0 for a MAC or digest (cryptoclient.h).
 *
 * Exit: 0 passed, 1 failed.
 */
#include "diff_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

struct round {
	struct sc_msg msg[ROUND_MSGS];
	uint32_t sid[ROUND_MSGS];
	int has_sid[ROUND_MSGS];
	unsigned nm;
	struct sc_stream st[ROUND_STREAMS];
	unsigned ns;
	struct cc_op ops[PIECES_MAX];
	struct cc_completion comps[PIECES_MAX];
	uint16_t owner[PIECES_MAX], piece[PIECES_MAX];
	unsigned nops;
	size_t bytes;
};

static void round_free(struct client *c, struct round *r)
{
	unsigned i;

	for (i = 0; i < r->ns; i++)
		sc_stream_free(&r->st[i]);
	for (i = 0; i < r->nm; i++) {
		if (r->has_sid[i])
			cc_session_destroy(c->conn, r->sid[i]);
		sc_msg_free(&r->msg[i]);
	}
	r->nm = r->ns = r->nops = 0;
	r->bytes = 0;
}

/* Add message m (already made) to r on q: a session, an encrypt and a
 * decrypt stream. 0, or -errno (the round is full or broke). */
static int round_add(struct client *c, struct round *r, struct cc_queue *q)
{
	struct sc_msg *m = &r->msg[r->nm];
	uint32_t cuts[PIECES_MAX / ROUND_STREAMS];
	unsigned k;
	int n, e;

	e = sc_session(c->conn, m, &r->sid[r->nm]);
	if (e) {
		char d[160];

		sc_msg_desc(m, d, sizeof(d));
		fail(c, "session", "%s: %s", d, cc_strerror(e));
		sc_msg_free(m);
		return 0; /* not fatal: the next message */
	}
	r->has_sid[r->nm] = 1;
	r->nm++;
	for (k = 0; k < 2; k++) {
		struct sc_stream *s = &r->st[r->ns];

		n = sc_cut(m, cuts, PIECES_MAX / ROUND_STREAMS);
		if (n < 0)
			return n;
		e = sc_stream_init(s, q, m, k ? CC_DECRYPT : CC_ENCRYPT,
				   r->sid[r->nm - 1], mc_below(3) == 0, cuts,
				   (unsigned)n);
		r->ns++;
		if (e) {
			fail(c, "stream", "set-up: %s", cc_strerror(e));
			return e;
		}
	}
	r->bytes += m->len;
	return 0;
}

/* The pieces of r's streams, interleaved at random (each stream's in
 * order). */
static void round_ops(struct round *r, unsigned rid)
{
	unsigned left = 0, i;

	for (i = 0; i < r->ns; i++)
		left += r->st[i].n;
	r->nops = 0;
	while (left) {
		unsigned pick = mc_below(left), s;

		/* stream with probability proportional to what it has left */
		for (s = 0; s < r->ns; s++) {
			unsigned rest = r->st[s].n - r->st[s].next;

			if (pick < rest)
				break;
			pick -= rest;
		}
		r->owner[r->nops] = (uint16_t)s;
		r->piece[r->nops] = (uint16_t)r->st[s].next;
		sc_stream_op(&r->st[s], &r->ops[r->nops],
			     (uint64_t)rid << 32 | r->nops);
		r->nops++;
		left--;
	}
}

static void round_judge(struct client *c, struct round *r)
{
	unsigned j, i;

	for (j = 0; j < r->nops; j++) {
		struct sc_stream *s = &r->st[r->owner[j]];
		unsigned p = r->piece[j];
		const struct cc_completion *cp = &r->comps[j];
		/* As a one-shot op: its length, MACs and digests too. */
		uint32_t want_len = s->cuts[p];

		c->pieces++;
		if (s->missing) {
			/* after a FIRST the daemon refused */
			if (cp->status != CC_ERR_NO_STREAM &&
			    cp->status != -EOPNOTSUPP) {
				fail(c, s->m->v->name,
				     "piece %u of a stream whose FIRST failed: "
				     "%d (%s), want NO_STREAM",
				     p, cp->status, cc_strerror(cp->status));
				show_stream(c, s);
			}
			continue;
		}
		if (p == 0 && cp->status == -EOPNOTSUPP) {
			s->missing = 1;
			note_missing(c, s->m->v);
			continue;
		}
		if (s->failed)
			continue;
		c->checked++;
		if (cp->status != CC_OK) {
			s->failed = 1;
			fail(c, s->m->v->name,
			     "piece %u of %u (%u bytes, op %u of the round): "
			     "status %d (%s), len %u; want OK, len %u",
			     p, s->n, s->cuts[p], j, cp->status,
			     cc_strerror(cp->status), cp->len, want_len);
			show_stream(c, s);
		} else if (cp->len != want_len) {
			/* counted, said once per algorithm; the stream's
			 * output and tag are still checked */
			c->failed++;
			c->len_bad++;
			if (!c->len_said[var_index(s->m->v)]++)
				fprintf(stderr,
					"FAIL client %u: %s: piece %u of %u "
					"(%u bytes) completed OK with len %u; "
					"want %u (%s)\n",
					c->id, s->m->v->name, p, s->n,
					s->cuts[p], cp->len, want_len,
					"the piece's length");
		}
	}
	for (i = 0; i < r->ns; i++) {
		struct sc_stream *s = &r->st[i];
		const char *why;
		long off;

		c->streams++;
		if (s->missing || s->failed)
			continue;
		c->checked++;
		why = sc_stream_check(s, &off);
		if (why) {
			fail(c, s->m->v->name, "%s at byte %ld", why, off);
			show_stream(c, s);
		}
	}
}

/* The variants client c runs (share k of STREAM_CLIENTS). */
static int mine(const struct client *c, unsigned vi)
{
	return vi % STREAM_CLIENTS == c->id && !c->skip[vi];
}

/* One short two-piece stream per variant first: an algorithm that does
 * not stream shows here, not in the middle of a round. */
static void probe(struct client *c, const struct sc_var *v)
{
	struct round *r = calloc(1, sizeof(*r));
	struct sc_qrun qr;

	if (!r) {
		c->fatal = 1;
		return;
	}
	if (sc_msg_make(&r->msg[0], v, 64)) {
		fail(c, v->name, "OpenSSL refused the probe");
		sc_msg_free(&r->msg[0]);
		free(r);
		return;
	}
	if (round_add(c, r, c->q[0]) || !r->nm) {
		round_free(c, r);
		free(r);
		return;
	}
	round_ops(r, 0xfffe);
	qr = (struct sc_qrun){ c->q[0], r->ops, r->comps, r->nops, 0, 0 };
	if (sc_run_queues(&qr, 1, TIMEOUT_MS)) {
		fail(c, v->name, "probe did not complete");
		c->fatal = 1;
	} else {
		round_judge(c, r);
	}
	round_free(c, r);
	free(r);
}

static void run_rounds(struct client *c, unsigned msgs_per_var)
{
	struct round *r[QUEUES] = { 0 }; /* out: frees what calloc made */
	size_t round_bytes = sanitized ? (6u << 20) : (12u << 20);
	unsigned order[64 * 32], n = 0, next = 0, vi, k, rid = 0;

	for (vi = 0; vi < sc_n_vars; vi++)
		if (mine(c, vi) && !c->missing[vi])
			for (k = 0; k < msgs_per_var; k++)
				order[n++] = vi;
	for (k = n; k > 1; k--) { /* shuffle */
		unsigned j = mc_below(k), t = order[k - 1];

		order[k - 1] = order[j];
		order[j] = t;
	}
	for (k = 0; k < QUEUES; k++) {
		r[k] = calloc(1, sizeof(*r[k]));
		if (!r[k]) {
			c->fatal = 1;
			goto out;
		}
	}
	while (next < n && !c->fatal) {
		struct sc_qrun qr[QUEUES];
		unsigned nq = 0;

		for (k = 0; k < QUEUES && next < n; k++) {
			unsigned want = 1 + mc_below(ROUND_MSGS);

			while (r[k]->nm < want && next < n &&
			       r[k]->bytes < round_bytes) {
				const struct sc_var *v =
					&sc_vars[order[next++]];

				if (c->missing[var_index(v)])
					continue;
				if (sc_msg_make(&r[k]->msg[r[k]->nm], v,
						rnd_msg_len())) {
					fail(c, v->name,
					     "OpenSSL refused a message");
					sc_msg_free(&r[k]->msg[r[k]->nm]);
					continue;
				}
				if (round_add(c, r[k], c->q[k])) {
					c->fatal = 1;
					break;
				}
			}
			round_ops(r[k], ++rid);
			qr[nq++] = (struct sc_qrun){ c->q[k],	  r[k]->ops,
						     r[k]->comps, r[k]->nops,
						     0,		  0 };
		}
		if (!c->fatal && sc_run_queues(qr, nq, TIMEOUT_MS)) {
			fail(c, "rounds",
			     "the queues did not complete in "
			     "order (see above)");
			c->fatal = 1;
		}
		for (k = 0; k < nq; k++) {
			if (!c->fatal)
				round_judge(c, r[k]);
			round_free(c, r[k]);
		}
	}
out:
	for (k = 0; k < QUEUES; k++) {
		if (r[k])
			round_free(c, r[k]);
		free(r[k]);
	}
}

/* ---- The copying API ---- */

static int copy_run(struct client *c, struct sc_msg *m, uint32_t sid,
		    enum cc_dir dir, int forge, const char *ctx)
{
	int mac = m->v->kind == SC_MAC;
	const uint8_t *in = dir == CC_ENCRYPT || mac ? m->pt : m->ct;
	struct cc_stream_params p = {
		.session = sid,
		.dir = dir,
		.iv = m->iv_len ? m->iv : NULL,
		.iv_len = m->iv_len,
		.aad = m->aad_len ? m->aad : NULL,
		.aad_len = m->aad_len,
		.msg_len = m->v->ccm ? m->len : 0,
		.data_unit = m->v->xts ? m->unit : 0,
	};
	struct cc_stream *s = NULL;
	uint8_t *out = malloc(m->len + 64 + MC_GUARD), *tmp = NULL;
	uint8_t tag[64 + MC_GUARD];
	size_t pos = 0, done = 0, ol, room;
	unsigned calls = 0;
	int r;

	if (!out)
		return -ENOMEM;
	memset(out, MC_CANARY, m->len + 64 + MC_GUARD);
	memset(tag, MC_CANARY, sizeof(tag));
	if (dir == CC_DECRYPT) {
		memcpy(tag, m->tag, m->tag_len);
		if (forge)
			mc_flip(tag, mc_below(8 * m->tag_len));
	}
	r = cc_stream_open(c->conn, &p, &s);
	if (r == -EOPNOTSUPP) {
		note_missing(c, m->v);
		free(out);
		return 0;
	}
	if (r) {
		fail(c, ctx, "cc_stream_open: %s", cc_strerror(r));
		free(out);
		return 0;
	}
	while (done < m->len) {
		size_t n = mc_below(8) == 0   ? 0
			   : mc_below(3) == 0 ? 1 + mc_below(64)
			   : mc_below(2)      ? 1 + mc_below(70000)
					      : 1 + mc_below(3u << 20);
		int inplace = mc_below(4) == 0 && !mac;

		if (n > m->len - done)
			n = m->len - done;
		room = cc_stream_out_max(s, n);
		if (inplace) {
			free(tmp);
			tmp = malloc((n > room ? n : room) + 1);
			if (!tmp) {
				r = -ENOMEM;
				break;
			}
			memcpy(tmp, in + done, n);
		}
		ol = 0x7777777;
		r = cc_stream_update(s, inplace ? tmp : in + done, n,
				     mac       ? NULL
				     : inplace ? tmp
					       : out + pos,
				     &ol);
		calls++;
		if (r == -EOPNOTSUPP) {
			note_missing(c, m->v); /* at the first piece */
			goto out;
		}
		if (r) {
			fail(c, ctx, "cc_stream_update(%zu bytes) at %zu: %s",
			     n, done, cc_strerror(r));
			goto out;
		}
		if (ol > room || (mac && ol)) {
			fail(c, ctx,
			     "cc_stream_update(%zu) wrote %zu bytes, room %zu",
			     n, ol, mac ? 0 : room);
			goto out;
		}
		if (inplace)
			memcpy(out + pos, tmp, ol);
		pos += ol;
		done += n;
		if (pos > done) {
			fail(c, ctx, "%zu bytes out for %zu in", pos, done);
			goto out;
		}
	}
	room = cc_stream_out_max(s, 0);
	ol = 0x7777777;
	r = cc_stream_final(s, mac ? NULL : out + pos, &ol, tag);
	if (r == -EOPNOTSUPP) {
		note_missing(c, m->v); /* at the first piece */
		goto out;
	}
	if (forge) {
		c->checked++;
		if (r != CC_ERR_AUTH_FAILED)
			fail(c, ctx, "forged tag: cc_stream_final %d (%s)", r,
			     cc_strerror(r));
		else if (!mac && ol <= room &&
			 mc_first_not(out + pos, 0, ol) >= 0)
			fail(c, ctx, "forged tag: the final bytes not zeroed");
		goto out;
	}
	c->checked++;
	if (r) {
		fail(c, ctx, "cc_stream_final: %d (%s)", r, cc_strerror(r));
		goto out;
	}
	if (ol > room || (mac && ol)) {
		fail(c, ctx, "cc_stream_final wrote %zu bytes, room %zu", ol,
		     room);
		goto out;
	}
	pos += ol;
	if (!mac) {
		const uint8_t *want = dir == CC_ENCRYPT ? m->ct : m->pt;
		long off;

		if (pos != m->len)
			fail(c, ctx, "%zu bytes out for %zu in", pos, m->len);
		else if ((off = mc_first_diff(out, want, m->len)) >= 0)
			fail(c, ctx, "output differs at byte %ld", off);
		else if (mc_first_not(out + m->len, MC_CANARY, 64) >= 0)
			fail(c, ctx, "wrote past the output");
	}
	if (dir == CC_ENCRYPT && m->tag_len &&
	    mc_first_diff(tag, m->tag, m->tag_len) >= 0)
		fail(c, ctx, "tag differs from OpenSSL");
	if (mc_first_not(tag + m->tag_len, MC_CANARY,
			 sizeof(tag) - m->tag_len) >= 0)
		fail(c, ctx, "wrote past the tag");
out:
	(void)calls;
	cc_stream_free(s);
	free(tmp);
	free(out);
	return 0;
}

static void run_copying(struct client *c, unsigned per_var)
{
	unsigned vi, k;

	for (vi = 0; vi < sc_n_vars && !c->fatal; vi++) {
		const struct sc_var *v = &sc_vars[vi];

		if (!mine(c, vi) || c->missing[vi])
			continue;
		for (k = 0; k < per_var && !c->missing[vi]; k++) {
			struct sc_msg m;
			uint32_t sid;
			char ctx[200];

			if (sc_msg_make(
				    &m, v,
				    k == 0 ? mc_below(100)
					   : mc_below((sanitized ? 256u : 3072u)
						      << 10))) {
				fail(c, v->name, "OpenSSL refused a message");
				sc_msg_free(&m);
				continue;
			}
			sc_msg_desc(&m, ctx, sizeof(ctx));
			strncat(ctx, " (copying API)",
				sizeof(ctx) - strlen(ctx) - 1);
			if (sc_session(c->conn, &m, &sid)) {
				fail(c, ctx, "session");
				sc_msg_free(&m);
				continue;
			}
			copy_run(c, &m, sid, CC_ENCRYPT, 0, ctx);
			if (!c->missing[vi])
				copy_run(c, &m, sid, CC_DECRYPT, 0, ctx);
			if (!c->missing[vi] && m.tag_len)
				copy_run(c, &m, sid, CC_DECRYPT, 1, ctx);
			cc_session_destroy(c->conn, sid);
			sc_msg_free(&m);
		}
	}
}

/* ---- cc_crypt() past 16 MiB ---- */

static int run_client(const struct fx_daemon *d, unsigned id)
{
	struct client c;
	uint64_t t0 = fx_now_ms();
	unsigned vi;

	if (ds_client_open(d, id, &c))
		return FX_EXIT_FAIL;
	for (vi = 0; vi < sc_n_vars && !c.fatal; vi++)
		if (mine(&c, vi))
			probe(&c, &sc_vars[vi]);
	run_rounds(&c, sanitized ? 12 : 48);
	printf("client %u: rounds: %lu streams, %lu pieces (%llu ms)\n", id,
	       c.streams, c.pieces, (unsigned long long)(fx_now_ms() - t0));
	if (!c.fatal)
		run_copying(&c, sanitized ? 3 : 5);
	return ds_client_close(&c, t0);
}

int main(void)
{
	ds_begin("");
	return ds_run(STREAM_CLIENTS, run_client);
}
