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
 *
 * Then the copying API (cc_stream_open/update/final, random update sizes,
 * a forged tag), cc_crypt() with messages longer than 16 MiB (the sync
 * call streams them), and one AES-GCM message of 1 GiB (STREAM_BIG=0
 * leaves it out, STREAM_BIG_MIB sets its size; under sanitizers, where
 * every size shrinks, it is 64 MiB unless STREAM_BIG=1) streamed through
 * a 64 MiB arena against an incremental EVP context, encrypted and
 * decrypted at once.
 *
 * Every piece must complete OK with the bytes it wrote: its length for a
 * cipher or AEAD, 0 for a MAC or digest (cryptoclient.h).
 *
 * STREAM_SEED replays a run; STREAM_ALLOW_MISSING=1 skips (and names) an
 * algorithm whose FIRST piece fails with -EOPNOTSUPP.
 *
 * Exit: 0 passed, 1 failed.
 */
#include "stream_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#define STREAM_CLIENTS 3
#define QUEUES 2
#define SQ_ENTRIES 64
#define ARENA (64u << 20)
#define ROUND_MSGS 5 /* two streams each */
#define ROUND_STREAMS (2 * ROUND_MSGS)
#define PIECES_MAX 4096
#define TIMEOUT_MS 60000
#define SHOW_MAX 10

static int sanitized;
static int allow_missing;
static uint64_t seed;

struct client {
	unsigned id;
	struct cc_conn *conn;
	struct cc_queue *q[QUEUES];
	unsigned long checked, failed, streams, pieces, missing_n;
	unsigned shown;
	int missing[64]; /* by sc_vars index */
	unsigned len_said[64];
	unsigned long len_bad; /* pieces OK with a wrong length */
	int fatal;
};

static unsigned var_index(const struct sc_var *v)
{
	return (unsigned)(v - sc_vars);
}

static void fail(struct client *c, const char *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct client *c, const char *ctx, const char *fmt, ...)
{
	va_list ap;

	c->failed++;
	if (c->shown++ >= SHOW_MAX)
		return;
	fprintf(stderr, "FAIL client %u: %s: ", c->id, ctx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void show_stream(struct client *c, const struct sc_stream *s)
{
	char d[160];

	if (c->shown > SHOW_MAX)
		return;
	sc_msg_desc(s->m, d, sizeof(d));
	fprintf(stderr, "  stream %s, %s, %s, handle 0x%x\n", d,
		s->dir == CC_ENCRYPT ? "encrypt" : "decrypt",
		s->inplace ? "in place" : "out of place", s->handle);
	sc_print_cuts(stderr, s->cuts, s->n);
}

/* A FIRST that failed -EOPNOTSUPP: the algorithm does not stream (yet). */
static void note_missing(struct client *c, const struct sc_var *v)
{
	if (c->missing[var_index(v)])
		return;
	c->missing[var_index(v)] = 1;
	c->missing_n++;
	if (allow_missing) {
		printf("client %u: %s does not stream yet (FIRST: %s): "
		       "skipped (STREAM_ALLOW_MISSING=1)\n",
		       c->id, v->name, cc_strerror(-EOPNOTSUPP));
	} else {
		fail(c, v->name,
		     "FIRST piece failed with %s: the algorithm must stream "
		     "(STREAM_ALLOW_MISSING=1 skips it)",
		     cc_strerror(-EOPNOTSUPP));
	}
}

static uint32_t rnd_msg_len(void)
{
	uint32_t r = mc_below(100), div = sanitized ? 4 : 1;

	if (r < 20)
		return mc_below(257);
	if (r < 50)
		return mc_below(8193);
	if (r < 85)
		return mc_below((256u << 10) / div + 1);
	return (256u << 10) / div + mc_below((3u << 20) / div);
}

/* ---- Rounds: several streams in one queue, pieces interleaved ---- */

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
	return vi % STREAM_CLIENTS == c->id;
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
	struct round *r[QUEUES];
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

static void run_sync_long(struct client *c)
{
	static const struct {
		const char *var;
		size_t len;
		unsigned iv_len;
	} cases[] = {
		{ "aes-gcm-256", (16u << 20) + 12345, 12 },
		{ "aes-gcm-128", (16u << 20) + 4321,
		  128 }, /* IV in the arena */
		{ "aes-cbc-128", 17u << 20, 16 },
		{ "aes-ctr-192", (16u << 20) + 1, 16 },
		{ "chacha20-poly1305", (16u << 20) + 777, 12 },
		{ "aes-ccm-128", (16u << 20) + 99, 7 },
		{ "sha256", (16u << 20) + 1, 0 },
		{ "hmac-sha384", (17u << 20) + 3, 0 },
		{ "aes-cmac-256", (16u << 20) + 5, 0 },
		{ "null", (16u << 20) + 3, 0 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sc_var *v = sc_var_by_name(cases[i].var);
		int mac = v->kind == SC_MAC;
		struct sc_msg m;
		uint8_t tag[64 + MC_GUARD];
		uint8_t *out;
		uint32_t sid;
		char ctx[200];
		long off;
		int r;

		if (c->missing[var_index(v)])
			continue;
		if (sc_msg_make_iv(&m, v, cases[i].len, cases[i].iv_len) ||
		    m.len != cases[i].len) {
			fail(c, v->name, "OpenSSL refused a message");
			sc_msg_free(&m);
			continue;
		}
		sc_msg_desc(&m, ctx, sizeof(ctx));
		strncat(ctx, " (cc_crypt)", sizeof(ctx) - strlen(ctx) - 1);
		out = malloc(m.len + MC_GUARD);
		if (!out || sc_session(c->conn, &m, &sid)) {
			fail(c, ctx, "set-up");
			free(out);
			sc_msg_free(&m);
			continue;
		}
		memset(out, MC_CANARY, m.len + MC_GUARD);
		memset(tag, MC_CANARY, sizeof(tag));
		r = fx_crypt(c->conn, sid, CC_ENCRYPT, m.iv, m.iv_len,
			     m.aad_len ? m.aad : NULL, m.aad_len, m.pt,
			     mac ? NULL : out, m.len, m.tag_len ? tag : NULL);
		c->checked++;
		if (r == -EOPNOTSUPP) {
			note_missing(c, v);
		} else if (r) {
			fail(c, ctx, "encrypt: %d (%s)", r, cc_strerror(r));
		} else if (!mac &&
			   (off = mc_first_diff(out, m.ct, m.len)) >= 0) {
			fail(c, ctx, "encrypt: output differs at byte %ld",
			     off);
		} else if (!mac && mc_first_not(out + m.len, MC_CANARY,
						MC_GUARD) >= 0) {
			fail(c, ctx, "encrypt: wrote past the output");
		} else if (m.tag_len &&
			   mc_first_diff(tag, m.tag, m.tag_len) >= 0) {
			fail(c, ctx, "encrypt: tag differs from OpenSSL");
		} else {
			/* decrypt in place, then a forgery */
			if (!mac)
				memcpy(out, m.ct, m.len);
			memcpy(tag, m.tag, m.tag_len);
			r = fx_crypt(c->conn, sid, CC_DECRYPT, m.iv, m.iv_len,
				     m.aad_len ? m.aad : NULL, m.aad_len,
				     mac ? m.pt : out, mac ? NULL : out, m.len,
				     m.tag_len ? tag : NULL);
			c->checked++;
			if (r)
				fail(c, ctx, "decrypt: %d (%s)", r,
				     cc_strerror(r));
			else if (!mac &&
				 (off = mc_first_diff(out, m.pt, m.len)) >= 0)
				fail(c, ctx,
				     "decrypt: output differs at byte %ld",
				     off);
			if (m.tag_len) {
				if (!mac)
					memcpy(out, m.ct, m.len);
				mc_flip(tag, mc_below(8 * m.tag_len));
				r = fx_crypt(c->conn, sid, CC_DECRYPT, m.iv,
					     m.iv_len, m.aad_len ? m.aad : NULL,
					     m.aad_len, mac ? m.pt : out,
					     mac ? NULL : out, m.len, tag);
				c->checked++;
				if (r != CC_ERR_AUTH_FAILED)
					fail(c, ctx, "forgery: %d (%s)", r,
					     cc_strerror(r));
				else if (!mac && (off = mc_first_not(
							  out, 0, m.len)) >= 0)
					fail(c, ctx,
					     "forgery: output not zeroed "
					     "(byte %ld of %zu)",
					     off, m.len);
			}
		}
		printf("client %u: cc_crypt %s: done\n", c->id, ctx);
		cc_session_destroy(c->conn, sid);
		free(out);
		sc_msg_free(&m);
	}
}

/* cc_crypt() of AES-XTS past 16 MiB: -E2BIG (its one-shot op is one data
 * unit), as cryptoclient.h says. */
static void run_sync_xts_long(struct client *c)
{
	const struct sc_var *v = sc_var_by_name("aes-xts-128");
	size_t len = (16u << 20) + 16;
	uint8_t *buf = calloc(1, len);
	struct sc_msg m;
	uint32_t sid;
	int r;

	if (!buf || sc_msg_make(&m, v, 64) || sc_session(c->conn, &m, &sid)) {
		fail(c, v->name, "set-up");
		free(buf);
		sc_msg_free(&m);
		return;
	}
	r = fx_crypt(c->conn, sid, CC_ENCRYPT, m.iv, 16, NULL, 0, buf, buf, len,
		     NULL);
	c->checked++;
	if (r != -E2BIG)
		fail(c, "aes-xts-128 (cc_crypt)",
		     "%zu bytes: %d (%s), want -E2BIG", len, r, cc_strerror(r));
	cc_session_destroy(c->conn, sid);
	sc_msg_free(&m);
	free(buf);
}

/* ---- Clients ---- */

static int run_client(const struct fx_daemon *d, unsigned id)
{
	struct cc_queue_params qp = {
		.sq_entries = SQ_ENTRIES,
		.arena_size = ARENA,
	};
	struct client c = { .id = id };
	unsigned vi, k, missing = 0;
	uint64_t t0 = fx_now_ms();
	int r;

	mc_srand(seed ^ (0x1000003ull * (id + 1)));
	r = cc_connect(d->sock, "test_diff_stream", &c.conn);
	for (k = 0; !r && k < QUEUES; k++)
		r = cc_queue_open(c.conn, &qp, &c.q[k]);
	if (r) {
		fprintf(stderr, "FAIL client %u: connect or queue: %s\n", id,
			cc_strerror(r));
		return FX_EXIT_FAIL;
	}
	for (vi = 0; vi < sc_n_vars && !c.fatal; vi++)
		if (mine(&c, vi))
			probe(&c, &sc_vars[vi]);
	run_rounds(&c, sanitized ? 12 : 48);
	printf("client %u: rounds: %lu streams, %lu pieces (%llu ms)\n", id,
	       c.streams, c.pieces, (unsigned long long)(fx_now_ms() - t0));
	if (!c.fatal)
		run_copying(&c, sanitized ? 3 : 5);
	if (!c.fatal && id == 0) {
		run_sync_long(&c);
		run_sync_xts_long(&c);
	}
	for (k = 0; k < QUEUES; k++)
		cc_queue_close(c.q[k]);
	cc_disconnect(c.conn);
	for (vi = 0; vi < sc_n_vars; vi++)
		missing += c.missing[vi];
	printf("client %u: %lu checks, %lu failed (%lu of them pieces that "
	       "completed OK with a wrong length)%s, %u algorithms skipped "
	       "(%llu ms)\n",
	       id, c.checked, c.failed, c.len_bad,
	       c.fatal ? " (stopped early)" : "", missing,
	       (unsigned long long)(fx_now_ms() - t0));
	if (c.failed || c.fatal || (!c.checked && !missing))
		return FX_EXIT_FAIL;
	if (missing && !allow_missing)
		return FX_EXIT_FAIL;
	return FX_EXIT_PASS;
}

/* ---- The long message ---- */

#define BIG_SLOTS 24
#define BIG_PIECE (1u << 20)

struct big_op {
	int dec;
	unsigned slot;
	uint32_t len;
	unsigned flags;
	uint64_t piece;
};

/* AES-GCM-256 of mib MiB (plus a few bytes), encrypted and decrypted as
 * two streams in one queue at once: piece k of the decryption (in place
 * on piece k's ciphertext) goes in once piece k of the encryption has
 * completed and matched an incremental EVP context. */
static int run_big(const struct fx_daemon *d, uint64_t mib)
{
	struct cc_queue_params qp = {
		.sq_entries = SQ_ENTRIES,
		.arena_size = ARENA,
	};
	struct client c = { .id = 99 };
	struct cc_queue *q;
	uint64_t total = (mib << 20) + 13, enc_off = 0, dec_off = 0;
	uint64_t enc_done = 0;
	uint64_t t0 = fx_now_ms(), enc_pieces = 0, dec_pieces = 0;
	uint8_t key[32], iv[12], aad[1000], reftag[16], fin[16];
	uint8_t *src[BIG_SLOTS], *dst[BIG_SLOTS], *tag_enc, *tag_dec, *aad_a,
		*ref = malloc(BIG_PIECE);
	unsigned free_slots[BIG_SLOTS], nfree = 0;
	struct big_op fifo[2 * BIG_SLOTS + 4];
	unsigned fhead = 0, ftail = 0; /* in flight, submission order */
	struct cc_op pend[2 * BIG_SLOTS + 4];
	struct big_op pend_b[2 * BIG_SLOTS + 4];
	unsigned npend = 0;
	uint32_t sid, he, hd;
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	/* STREAM_BIG_NULL=1: the null algorithm (a copy), to measure or
	 * check the stream machinery alone */
	const char *nv = getenv("STREAM_BIG_NULL");
	int null = nv && !strcmp(nv, "1");
	struct cc_session_params sp = {
		.alg = null ? CC_ALG_NULL : CC_ALG_AES_GCM,
		.key = null ? NULL : key,
		.key_len = null ? 0 : 32,
	};
	int r, outl, done = 0, enc_last_done = 0;
	unsigned i;

	mc_srand(seed ^ 0xb16b16b16ull);
	mc_rnd_bytes(key, sizeof(key));
	mc_rnd_bytes(iv, sizeof(iv));
	mc_rnd_bytes(aad, sizeof(aad));
	r = cc_connect(d->sock, "test_diff_stream big", &c.conn);
	if (!r)
		r = cc_queue_open(c.conn, &qp, &q);
	if (!r)
		r = cc_session_create(c.conn, &sp, &sid);
	if (r || !x || !ref) {
		fprintf(stderr, "FAIL big: set-up: %s\n", cc_strerror(r));
		return FX_EXIT_FAIL;
	}
	if (!EVP_EncryptInit_ex(x, EVP_aes_256_gcm(), NULL, key, iv) ||
	    !EVP_EncryptUpdate(x, NULL, &outl, aad, sizeof(aad))) {
		fprintf(stderr, "FAIL big: OpenSSL\n");
		return FX_EXIT_FAIL;
	}
	for (i = 0; i < BIG_SLOTS; i++) {
		src[i] = cc_buf_alloc(q, BIG_PIECE);
		dst[i] = cc_buf_alloc(q, BIG_PIECE);
		if (!src[i] || !dst[i]) {
			fprintf(stderr, "FAIL big: arena\n");
			return FX_EXIT_FAIL;
		}
		free_slots[nfree++] = i;
	}
	tag_enc = cc_buf_alloc(q, 64);
	tag_dec = cc_buf_alloc(q, 64);
	aad_a = cc_buf_alloc(q, sizeof(aad));
	if (!tag_enc || !tag_dec || !aad_a || cc_stream_handle_get(q, &he) ||
	    cc_stream_handle_get(q, &hd)) {
		fprintf(stderr, "FAIL big: arena or handles\n");
		return FX_EXIT_FAIL;
	}
	memcpy(aad_a, aad, sizeof(aad));
	memset(tag_enc, MC_CANARY, 64);

	while (!done && !c.fatal) {
		struct cc_completion comps[2 * BIG_SLOTS];

		/* new encryption pieces into free slots */
		while (nfree && enc_off < total) {
			unsigned s = free_slots[--nfree];
			uint32_t len = mc_below(2) ? BIG_PIECE
						   : 1 + mc_below(BIG_PIECE);
			unsigned flags = 0;

			if (len > total - enc_off)
				len = (uint32_t)(total - enc_off);
			if (!enc_off)
				flags |= CC_STREAM_FIRST;
			if (enc_off + len == total)
				flags |= CC_STREAM_LAST;
			mc_rnd_bytes(src[s], len);
			pend[npend] = (struct cc_op){
				.user_data = enc_pieces << 1,
				.session = sid,
				.dir = CC_ENCRYPT,
				.src = src[s],
				.dst = dst[s],
				.len = len,
				.stream = he,
				.stream_flags = flags,
			};
			if (flags & CC_STREAM_FIRST) {
				pend[npend].iv = iv;
				pend[npend].iv_len = sizeof(iv);
				pend[npend].aad = aad_a;
				pend[npend].aad_len = sizeof(aad);
			}
			if (flags & CC_STREAM_LAST)
				pend[npend].tag = tag_enc;
			pend_b[npend++] = (struct big_op){ 0, s, len, flags,
							   enc_pieces++ };
			enc_off += len;
		}
		if (npend) {
			r = cc_enqueue_burst(q, pend, npend);
			if (r < 0) {
				fail(&c, "big", "enqueue: %s", cc_strerror(r));
				c.fatal = 1;
				break;
			}
			for (i = 0; i < (unsigned)r; i++)
				fifo[ftail++ % (2 * BIG_SLOTS + 4)] = pend_b[i];
			memmove(pend, pend + r, (npend - r) * sizeof(pend[0]));
			memmove(pend_b, pend_b + r,
				(npend - r) * sizeof(pend_b[0]));
			npend -= (unsigned)r;
		}
		r = cc_dequeue_burst(q, comps, 2 * BIG_SLOTS);
		if (r < 0) {
			fail(&c, "big", "dequeue: %s", cc_strerror(r));
			break;
		}
		if (r == 0) {
			if (cc_wait(q, 10000) <= 0) {
				fail(&c, "big", "no completion in 10 s");
				c.fatal = 1;
			}
			continue;
		}
		for (int j = 0; j < r && !c.fatal; j++) {
			struct big_op b = fifo[fhead++ % (2 * BIG_SLOTS + 4)];
			uint64_t want_ud = b.piece << 1 | (unsigned)b.dec;
			long off;

			c.checked++;
			if (b.piece == 0 && !b.dec &&
			    comps[j].status == -EOPNOTSUPP) {
				note_missing(&c, sc_var_by_name(
							 null ? "null"
							      : "aes-gcm-256"));
				c.fatal = 1;
				break;
			}
			if (comps[j].user_data != want_ud ||
			    comps[j].status != CC_OK || comps[j].len != b.len) {
				fail(&c, "big",
				     "%s piece %llu (%u bytes, flags %u): "
				     "user_data 0x%llx (want 0x%llx), status "
				     "%d (%s), len %u",
				     b.dec ? "decrypt" : "encrypt",
				     (unsigned long long)b.piece, b.len,
				     b.flags,
				     (unsigned long long)comps[j].user_data,
				     (unsigned long long)want_ud,
				     comps[j].status,
				     cc_strerror(comps[j].status),
				     comps[j].len);
				c.fatal = 1;
				break;
			}
			if (!b.dec && null) {
				memcpy(ref, src[b.slot], b.len);
			} else if (!b.dec && (!EVP_EncryptUpdate(x, ref, &outl,
								 src[b.slot],
								 (int)b.len) ||
					      (uint32_t)outl != b.len)) {
				fail(&c, "big", "OpenSSL update");
				c.fatal = 1;
				break;
			}
			if (!b.dec) {
				off = mc_first_diff(dst[b.slot], ref, b.len);
				if (off >= 0) {
					fail(&c, "big",
					     "ciphertext of piece %llu "
					     "(message byte %llu) differs "
					     "from OpenSSL",
					     (unsigned long long)b.piece,
					     (unsigned long long)(enc_done +
								  (uint64_t)
									  off));
					c.fatal = 1;
					break;
				}
				enc_done += b.len;
				if ((b.flags & CC_STREAM_LAST) && !null) {
					if (!EVP_EncryptFinal_ex(x, fin,
								 &outl) ||
					    !EVP_CIPHER_CTX_ctrl(
						    x, EVP_CTRL_GCM_GET_TAG, 16,
						    reftag) ||
					    memcmp(tag_enc, reftag, 16)) {
						fail(&c, "big",
						     "tag of the %llu-byte "
						     "message differs from "
						     "OpenSSL",
						     (unsigned long long)total);
						c.fatal = 1;
						break;
					}
				}
				if (b.flags & CC_STREAM_LAST) {
					memcpy(tag_dec, tag_enc, 16);
					enc_last_done = 1;
				}
				/* its decryption, in place */
				pend[npend] = (struct cc_op){
					.user_data = dec_pieces << 1 | 1,
					.session = sid,
					.dir = CC_DECRYPT,
					.src = dst[b.slot],
					.len = b.len,
					.stream = hd,
					.stream_flags = b.flags,
				};
				if (b.flags & CC_STREAM_FIRST) {
					pend[npend].iv = iv;
					pend[npend].iv_len = sizeof(iv);
					pend[npend].aad = aad_a;
					pend[npend].aad_len = sizeof(aad);
				}
				if (b.flags & CC_STREAM_LAST)
					pend[npend].tag = tag_dec;
				pend_b[npend++] = (struct big_op){
					1, b.slot, b.len, b.flags, dec_pieces++
				};
			} else {
				off = mc_first_diff(dst[b.slot], src[b.slot],
						    b.len);
				if (off >= 0) {
					fail(&c, "big",
					     "decryption of piece %llu differs "
					     "from the plaintext at byte "
					     "%llu of the message",
					     (unsigned long long)b.piece,
					     (unsigned long long)(dec_off +
								  (uint64_t)
									  off));
					c.fatal = 1;
					break;
				}
				dec_off += b.len;
				free_slots[nfree++] = b.slot;
				if (b.flags & CC_STREAM_LAST)
					done = 1;
			}
		}
	}
	(void)enc_last_done;
	if (c.missing_n && allow_missing) {
		printf("big: skipped\n");
		c.fatal = 0;
		c.failed = 0;
	} else if (!c.fatal && dec_off != total)
		fail(&c, "big", "decrypted %llu of %llu bytes",
		     (unsigned long long)dec_off, (unsigned long long)total);
	printf("big: %s message of %llu bytes, %llu pieces each way, "
	       "encrypted and decrypted at once: %s (%llu ms)\n",
	       null ? "null" : "AES-GCM-256", (unsigned long long)total,
	       (unsigned long long)enc_pieces, c.failed ? "FAILED" : "ok",
	       (unsigned long long)(fx_now_ms() - t0));
	EVP_CIPHER_CTX_free(x);
	free(ref);
	cc_stream_handle_put(q, he);
	cc_stream_handle_put(q, hd);
	cc_queue_close(q);
	cc_session_destroy(c.conn, sid);
	cc_disconnect(c.conn);
	return c.failed || c.fatal ? FX_EXIT_FAIL : FX_EXIT_PASS;
}

/* ---- Main ---- */

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

int main(void)
{
	/* HMAC keys shorter than 16 bytes are legal, and SHA has none. */
	static const char *const args[] = { "--set", "keys.min_bits=0", NULL };
	struct fx_daemon_params dp = { .workers = 2, .args = args };
	struct fx_daemon d;
	pid_t pid[STREAM_CLIENTS + 1];
	unsigned k, nproc = STREAM_CLIENTS, skipped = 0;
	uint64_t big_mib, t0 = fx_now_ms();
	int fails = 0, st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sanitized = sc_sanitized();
	allow_missing = sc_allow_missing();
	seed = sc_seed(SC_SEED_DEFAULT);
	/* the 1 GiB message: on by default, off under sanitizers, where a
	 * 64 MiB one still runs the pipeline (STREAM_BIG=1: 1 GiB there
	 * too; STREAM_BIG=0: none; STREAM_BIG_MIB: the size) */
	big_mib = env_u64("STREAM_BIG", 1)
			  ? env_u64("STREAM_BIG_MIB",
				    sanitized && !getenv("STREAM_BIG") ? 64
								       : 1024)
			  : 0;
	printf("seed 0x%016llx (set STREAM_SEED to reproduce)%s%s; long "
	       "message: %llu MiB\n",
	       (unsigned long long)seed,
	       sanitized ? "; sanitizer build: sizes scaled down" : "",
	       allow_missing ? "; STREAM_ALLOW_MISSING=1" : "",
	       (unsigned long long)big_mib);
	if (fx_daemon_start(&d, &dp))
		return FX_EXIT_FAIL;
	fflush(NULL);
	if (big_mib)
		nproc++;
	for (k = 0; k < nproc; k++) {
		pid[k] = fork();
		if (pid[k] == 0)
			_exit(k < STREAM_CLIENTS ? run_client(&d, k)
						 : run_big(&d, big_mib));
		if (pid[k] < 0) {
			fprintf(stderr, "FAIL: fork: %s\n", strerror(errno));
			fails++;
		}
	}
	for (k = 0; k < nproc; k++) {
		if (pid[k] <= 0)
			continue;
		if (waitpid(pid[k], &st, 0) != pid[k] || !WIFEXITED(st)) {
			fprintf(stderr, "FAIL: client %u died (status 0x%x)\n",
				k, st);
			fails++;
		} else if (WEXITSTATUS(st) == FX_EXIT_SKIP) {
			skipped++;
		} else if (WEXITSTATUS(st) != FX_EXIT_PASS) {
			fails++;
		}
	}
	if (fx_daemon_stop(&d)) {
		fprintf(stderr, "FAIL: the daemon did not stop cleanly\n");
		fails++;
	}
	printf("%s (%llu ms)\n", fails ? "FAILED" : "PASSED",
	       (unsigned long long)(fx_now_ms() - t0));
	if (fails)
		printf("replay with STREAM_SEED=0x%016llx\n",
		       (unsigned long long)seed);
	(void)skipped;
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
