// SPDX-License-Identifier: MIT
/*
 * What a stream must refuse, and how: limits and lifetimes (bad_stream.h
 * has the harness, and the background streams no failure may disturb):
 *
 * - the session destroyed under an open stream: the next piece fails
 *   (NO_SESSION or NO_STREAM), other streams unaffected;
 * - streams opened across 16 queues until the client's limit:
 *   STREAM_LIMIT from then on; closing one lets one more open; all of
 *   them again after closing;
 * - a queue closed, and streams abandoned, with streams open;
 * - clients that exit with streams open (and pieces in flight): the
 *   daemon keeps serving, its locked memory does not grow cycle after
 *   cycle, and a new client opens the full number of streams.
 *
 * Exit: 0 all passed, 1 any failure.
 */
#include "bad_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Pieces of 16 bytes on one stream slot of the limit test. */
static long listed_streams(struct t *t, const char *name, unsigned *nc)
{
	struct cc_client_info *ci;
	unsigned n, i;
	long sum = -1;
	int r = cc_clients_get(t->conn, &ci, &n);

	*nc = 0;
	if (r) {
		expect(t, 0, "listing", "cc_clients_get: %s", cc_strerror(r));
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ci[i].name, name)) {
			sum = (sum < 0 ? 0 : sum) + ci[i].streams;
			(*nc)++;
		}
	free(ci);
	return sum;
}

/* Queues closed with streams open give them back to the client. */
static struct cc_op lim_op(uint32_t sid, const struct sc_msg *m, uint8_t *buf,
			   uint8_t *tag, uint32_t handle, unsigned flags)
{
	struct cc_op op = {
		.session = sid,
		.dir = CC_ENCRYPT,
		.src = buf,
		.len = 16,
		.stream = handle,
		.stream_flags = flags,
	};

	if (flags & CC_STREAM_FIRST) {
		op.iv = m->iv;
		op.iv_len = m->iv_len;
		op.stream_param = m->v->ccm ? 16 : m->v->xts ? 16 : 0;
	} else {
		op.tag = tag;
	}
	return op;
}

/* A new client (its own connection) opens FIRSTs on 16 queues x 32
 * slots until its limit. */
static void case_client_limit(struct t *t, const struct fx_daemon *d)
{
	const char *ctx = "the client's open streams";
	struct cc_queue_params qp = { .sq_entries = 64,
				      .arena_size = 1u << 20 };
	struct cc_conn *lc = NULL;
	struct cc_queue *qs[LIMIT_QUEUES];
	uint32_t h[LIMIT_QUEUES][CRD_STREAMS_PER_QUEUE];
	int open_[LIMIT_QUEUES][CRD_STREAMS_PER_QUEUE];
	unsigned nq = 0, nh[LIMIT_QUEUES], k, i, n_ok = 0, n_lim, order_bad;
	uint8_t *buf[LIMIT_QUEUES], *tagb[LIMIT_QUEUES];
	struct sc_msg m;
	uint32_t sid;
	int r, round;

	memset(open_, 0, sizeof(open_));
	memset(nh, 0, sizeof(nh));
	r = sc_msg_make_iv(&m, t->main_v, 16, t->main_v->ccm ? 12 : 0);
	if (!r)
		r = cc_connect(d->sock, "test_bad_stream limit", &lc);
	if (!r)
		r = sc_session(lc, &m, &sid);
	if (r) {
		expect(t, 0, ctx, "set-up: %d (%s)", r, cc_strerror(r));
		goto out;
	}
	for (k = 0; k < LIMIT_QUEUES; k++) {
		uint32_t extra;

		r = cc_queue_open(lc, &qp, &qs[k]);
		if (r) {
			printf("  %s: queue %u: %s\n", ctx, k, cc_strerror(r));
			break;
		}
		nq++;
		buf[k] = cc_buf_alloc(qs[k], 4096);
		tagb[k] = cc_buf_alloc(qs[k], 64 * CRD_STREAMS_PER_QUEUE);
		for (i = 0; i < CRD_STREAMS_PER_QUEUE; i++) {
			r = cc_stream_handle_get(qs[k], &h[k][i]);
			if (r) {
				expect(t, 0, ctx, "handle %u of queue %u: %s",
				       i, k, cc_strerror(r));
				goto close;
			}
			nh[k]++;
		}
		r = cc_stream_handle_get(qs[k], &extra);
		expect(t, r < 0, ctx,
		       "a 33rd handle on one queue: %d, want an error", r);
		if (!r)
			cc_stream_handle_put(qs[k], extra);
	}
	expect(t, nq == LIMIT_QUEUES, ctx, "only %u queues opened", nq);
	for (round = 0; round < 2 && !t->fatal; round++) {
		n_ok = n_lim = order_bad = 0;
		for (k = 0; k < nq && !t->fatal; k++) {
			struct item it[CRD_STREAMS_PER_QUEUE];
			unsigned n = 0;

			for (i = 0; i < CRD_STREAMS_PER_QUEUE; i++) {
				struct cc_op op =
					lim_op(sid, &m, buf[k] + 64 * i, NULL,
					       h[k][i], CC_STREAM_FIRST);

				item_add(it, &n, "FIRST", &op, 16, 0, 2, CC_OK,
					 CC_ERR_STREAM_LIMIT);
			}
			run_items(t, qs[k], ctx, it, n);
			for (i = 0; i < n; i++) {
				open_[k][i] = it[i].status == CC_OK;
				n_ok += it[i].status == CC_OK;
				if (it[i].status == CC_ERR_STREAM_LIMIT)
					n_lim++;
				else if (n_lim)
					order_bad++;
			}
		}
		printf("  %s (round %d): %u opened on %u queues, then %u "
		       "refused with STREAM_LIMIT\n",
		       ctx, round, n_ok, nq, n_lim);
		{
			unsigned nc;
			long listed =
				listed_streams(t, "test_bad_stream limit", &nc);

			expect(t, nc == 1 && listed == (long)n_ok, ctx,
			       "cc_clients_get lists %ld open streams (%u "
			       "clients), %u are open",
			       listed, nc, n_ok);
		}
		expect(t, n_lim > 0, ctx,
		       "%u streams opened on %u queues and no STREAM_LIMIT: "
		       "a client's open streams are not bounded below "
		       "16 x 32",
		       n_ok, nq);
		expect(t, !order_bad, ctx,
		       "%u streams opened after a STREAM_LIMIT with none "
		       "closed",
		       order_bad);
		if (round == 0)
			t->stream_limit = n_ok;
		else
			expect(t, n_ok == t->stream_limit, ctx,
			       "%u streams the second time, %u the first: "
			       "closing them did not give them all back",
			       n_ok, t->stream_limit);
		if (round == 0 && n_lim && n_ok) {
			/* close one: one more opens, the next is refused */
			unsigned ck = 0, ci = 0, rk[2], ri[2], nr = 0;
			struct item it[1];
			unsigned n = 0;
			struct cc_op op;

			for (k = 0; k < nq; k++)
				for (i = 0; i < CRD_STREAMS_PER_QUEUE; i++)
					if (open_[k][i])
						ck = k, ci = i;
			for (k = nq; k-- > 0 && nr < 2;)
				for (i = CRD_STREAMS_PER_QUEUE;
				     i-- > 0 && nr < 2;)
					if (!open_[k][i])
						rk[nr] = k, ri[nr++] = i;
			op = lim_op(sid, &m, buf[ck] + 64 * ci,
				    tagb[ck] + 64 * ci, h[ck][ci],
				    CC_STREAM_LAST);
			item_add(it, &n, "LAST of one", &op, 16, 0, 1, CC_OK);
			run_items(t, qs[ck], ctx, it, n);
			open_[ck][ci] = 0;
			for (i = 0; i < nr; i++) {
				n = 0;
				op = lim_op(sid, &m, buf[rk[i]] + 64 * ri[i],
					    NULL, h[rk[i]][ri[i]],
					    CC_STREAM_FIRST);
				item_add(it, &n,
					 i ? "another FIRST: past the limit "
					     "again"
					   : "a FIRST refused before, after "
					     "one closed",
					 &op, 16, 0, 1,
					 i ? CC_ERR_STREAM_LIMIT : CC_OK);
				run_items(t, qs[rk[i]], ctx, it, n);
				open_[rk[i]][ri[i]] = it[0].status == CC_OK;
			}
		}
		/* close them all */
		for (k = 0; k < nq && !t->fatal; k++) {
			struct item it[CRD_STREAMS_PER_QUEUE];
			unsigned n = 0;

			for (i = 0; i < CRD_STREAMS_PER_QUEUE; i++) {
				struct cc_op op;

				if (!open_[k][i])
					continue;
				op = lim_op(sid, &m, buf[k] + 64 * i,
					    tagb[k] + 64 * i, h[k][i],
					    CC_STREAM_LAST);
				item_add(it, &n, "LAST (closing)", &op, 16, 0,
					 1, CC_OK);
				open_[k][i] = 0;
			}
			run_items(t, qs[k], ctx, it, n);
		}
	}
close:
	for (k = 0; k < nq; k++) {
		for (i = 0; i < nh[k]; i++)
			cc_stream_handle_put(qs[k], h[k][i]);
		cc_queue_close(qs[k]);
	}
out:
	if (lc)
		cc_disconnect(lc);
	sc_msg_free(&m);
}

static void case_session_destroyed(struct t *t, const struct fx_daemon *dm)
{
	const char *ctx = "session destroyed under an open stream";
	struct item it[8];
	unsigned n = 0;
	struct cs a, b;
	int r;

	memset(&b, 0, sizeof(b));
	if (cs_make(t, &a, t->main_v, t->q, CC_ENCRYPT, 3, 128) ||
	    cs_make(t, &b, t->main_v, t->q, CC_ENCRYPT, 3, 128))
		goto out;
	cs_next(&a, it, &n, "FIRST of the doomed stream");
	cs_next(&b, it, &n, "FIRST of the other");
	run_items(t, t->q, ctx, it, n);
	r = cc_session_destroy(t->conn, a.sid);
	expect(t, !r, ctx, "cc_session_destroy: %s", cc_strerror(r));
	a.has_sid = r != 0;
	n = 0;
	cs_piece(&a, it, &n, "MIDDLE after its session went", 0, 128, 2,
		 CC_ERR_NO_SESSION, CC_ERR_NO_STREAM);
	cs_next(&b, it, &n, "MIDDLE of the other");
	cs_piece(&a, it, &n, "LAST after its session went", CC_STREAM_LAST, 128,
		 2, CC_ERR_NO_SESSION, CC_ERR_NO_STREAM);
	cs_next(&b, it, &n, "LAST of the other");
	run_items(t, t->q, ctx, it, n);
	if (it[1].status == CC_OK && it[3].status == CC_OK)
		cs_check(t, &b, ctx);
out:
	cs_free(t, &a);
	cs_free(t, &b);
}

/* ---- What the daemon lists ---- */

/* The open streams cc_clients_get() lists for clients named name (-1:
 * none such), and how many such clients there are in *n. */
static void case_queue_close(struct t *t, const struct fx_daemon *d)
{
	const char *ctx = "queues closed with streams open";
	struct cc_queue_params qp = { .sq_entries = 64,
				      .arena_size = 1u << 20 };
	unsigned want = t->stream_limit ? t->stream_limit : 64;
	unsigned nq =
		(want + CRD_STREAMS_PER_QUEUE - 1) / CRD_STREAMS_PER_QUEUE;
	struct cc_conn *lc = NULL;
	struct sc_msg m;
	uint32_t sid;
	unsigned cyc, k, i, nc;
	long listed;
	int r;

	if (nq > LIMIT_QUEUES)
		nq = LIMIT_QUEUES;
	r = sc_msg_make_iv(&m, t->main_v, 16, t->main_v->ccm ? 12 : 0);
	if (!r)
		r = cc_connect(d->sock, "test_bad_stream closer", &lc);
	if (!r)
		r = sc_session(lc, &m, &sid);
	if (r) {
		expect(t, 0, ctx, "set-up: %d (%s)", r, cc_strerror(r));
		goto out;
	}
	for (cyc = 0; cyc < 3 && !t->fatal; cyc++) {
		struct cc_queue *qs[LIMIT_QUEUES];
		unsigned opened = 0;

		for (k = 0; k < nq; k++) {
			struct item it[CRD_STREAMS_PER_QUEUE];
			unsigned n = 0;
			uint8_t *buf;

			r = cc_queue_open(lc, &qp, &qs[k]);
			if (r) {
				expect(t, 0, ctx, "queue: %s", cc_strerror(r));
				nq = k;
				break;
			}
			buf = cc_buf_alloc(qs[k], 4096);
			for (i = 0; i < CRD_STREAMS_PER_QUEUE &&
				    k * CRD_STREAMS_PER_QUEUE + i < want;
			     i++) {
				uint32_t h;
				struct cc_op op;

				if (cc_stream_handle_get(qs[k], &h))
					break;
				op = lim_op(sid, &m, buf + 64 * i, NULL, h,
					    CC_STREAM_FIRST);
				item_add(it, &n, "FIRST", &op, 16, 0, 1, CC_OK);
			}
			run_items(t, qs[k], ctx, it, n);
			for (i = 0; i < n; i++)
				opened += it[i].status == CC_OK;
		}
		listed = listed_streams(t, "test_bad_stream closer", &nc);
		expect(t, opened == want && listed == (long)want, ctx,
		       "cycle %u: %u of %u opened, %ld listed", cyc, opened,
		       want, listed);
		for (k = 0; k < nq; k++)
			cc_queue_close(qs[k]);
		listed = listed_streams(t, "test_bad_stream closer", &nc);
		expect(t, listed == 0, ctx,
		       "cycle %u: %ld streams listed after closing the queues",
		       cyc, listed);
	}
	printf("  %s: %u streams opened and given back by closing their "
	       "queues, 3 times\n",
	       ctx, want);
out:
	if (lc)
		cc_disconnect(lc);
	sc_msg_free(&m);
}

/* Copying streams freed while open (cc_stream_free: "the daemon wipes its
 * state") give their slots back: the client's listed count returns to
 * what it was, and a decrypt abandoned before its final released
 * nothing unverified past what update returned. */
static void case_abandon(struct t *t, const struct fx_daemon *dm)
{
	const char *ctx = "copying streams abandoned";
	const struct sc_var *v = t->main_v;
	unsigned nc, k;
	long before = listed_streams(t, "test_bad_stream", &nc), after;

	for (k = 0; k < 40 && !t->fatal; k++) {
		struct sc_msg m;
		struct cc_stream *s = NULL;
		uint32_t sid;
		uint8_t *out;
		size_t ol = 0;
		int r;

		if (sc_msg_make_iv(&m, v, 300000, v->ccm ? 12 : 0) ||
		    sc_session(t->conn, &m, &sid)) {
			expect(t, 0, ctx, "set-up");
			sc_msg_free(&m);
			return;
		}
		out = malloc(m.len + 64);
		{
			struct cc_stream_params p = {
				.session = sid,
				.dir = k & 1 ? CC_DECRYPT : CC_ENCRYPT,
				.iv = m.iv,
				.iv_len = m.iv_len,
				.aad = m.aad_len ? m.aad : NULL,
				.aad_len = m.aad_len,
				.msg_len = v->ccm ? m.len : 0,
				.data_unit = v->xts ? m.unit : 0,
			};

			r = cc_stream_open(t->conn, &p, &s);
		}
		if (!r && out)
			r = cc_stream_update(s, k & 1 ? m.ct : m.pt, 100000,
					     v->kind == SC_MAC ? NULL : out,
					     &ol);
		expect(t, r == 0 && out, ctx, "open and update: %d (%s)", r,
		       cc_strerror(r));
		cc_stream_free(s); /* open: abandoned */
		cc_session_destroy(t->conn, sid);
		free(out);
		sc_msg_free(&m);
	}
	after = listed_streams(t, "test_bad_stream", &nc);
	expect(t, after == before, ctx,
	       "the client lists %ld open streams after 40 streams were "
	       "abandoned, %ld before",
	       after, before);
	printf("  %s: 40, the client's open streams %ld before, %ld after\n",
	       ctx, before, after);
}

/* ---- Clients that leave streams open ---- */

static long daemon_status_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	FILE *f;
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			v = strtol(line + strlen(field) + 1, NULL, 10);
	fclose(f);
	return v;
}

/* A child: open want streams (queues of 32), leave pieces in flight if
 * inflight, and exit without closing anything. Exit 0 if all opened
 * (want 0: as many as the limit lets, printed). */
static int leaver(const struct fx_daemon *d, const struct sc_var *v,
		  unsigned want, int inflight)
{
	struct cc_conn *conn;
	struct cc_queue *q[LIMIT_QUEUES];
	struct cc_queue_params qp = { .sq_entries = 64,
				      .arena_size = 4u << 20 };
	struct sc_msg m;
	uint32_t sid, h[LIMIT_QUEUES][CRD_STREAMS_PER_QUEUE];
	unsigned nq, k, i, opened = 0;

	if (cc_connect(d->sock, "test_bad_stream leaver", &conn))
		return 2;
	if (sc_msg_make_iv(&m, v, 16, v->ccm ? 12 : 0) ||
	    sc_session(conn, &m, &sid))
		return 3;
	nq = (want + CRD_STREAMS_PER_QUEUE - 1) / CRD_STREAMS_PER_QUEUE;
	for (k = 0; k < nq; k++) {
		struct cc_op ops[CRD_STREAMS_PER_QUEUE];
		struct cc_completion comps[CRD_STREAMS_PER_QUEUE];
		uint8_t *buf;
		unsigned nk = want - k * CRD_STREAMS_PER_QUEUE;

		if (nk > CRD_STREAMS_PER_QUEUE)
			nk = CRD_STREAMS_PER_QUEUE;
		if (cc_queue_open(conn, &qp, &q[k]))
			return 4;
		buf = cc_buf_alloc(q[k], 4096);
		for (i = 0; i < nk; i++) {
			if (cc_stream_handle_get(q[k], &h[k][i]))
				return 5;
			ops[i] = (struct cc_op){
				.user_data = i,
				.session = sid,
				.dir = CC_ENCRYPT,
				.src = buf + 64 * i,
				.len = 16,
				.iv = m.iv,
				.iv_len = m.iv_len,
				.stream = h[k][i],
				.stream_flags = CC_STREAM_FIRST,
				.stream_param = v->ccm	 ? 1u << 16
						: v->xts ? 16
							 : 0,
			};
		}
		if (fx_run_burst(q[k], ops, nk, comps, TIMEOUT_MS))
			return 6;
		for (i = 0; i < nk; i++) {
			opened += comps[i].status == CC_OK;
			if (comps[i].status != CC_OK) {
				fprintf(stderr,
					"leaver: FIRST %u of queue %u: %s\n", i,
					k, cc_strerror(comps[i].status));
				return 7;
			}
		}
	}
	if (inflight && nq) {
		/* big pieces of the first stream, not waited for */
		uint8_t *big = cc_buf_alloc(q[0], 3u << 20);
		struct cc_op op = {
			.session = sid,
			.dir = CC_ENCRYPT,
			.src = big,
			.len = 1u << 20,
			.stream = h[0][0],
		};

		for (i = 0; big && i < 3; i++) {
			op.src = big + (i << 20);
			op.user_data = 100 + i;
			cc_enqueue_burst(q[0], &op, 1);
		}
	}
	printf("  leaver: %u streams open%s, exiting without closing\n", opened,
	       inflight ? ", pieces in flight" : "");
	fflush(stdout);
	_exit(0);
}

static int run_leaver(struct t *t, const struct fx_daemon *d, unsigned want,
		      int inflight)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(leaver(d, t->main_v, want, inflight));
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void case_disconnect(struct t *t, const struct fx_daemon *d)
{
	const char *ctx = "clients that exit with streams open";
	unsigned want = t->stream_limit ? t->stream_limit : 64, cyc;
	long lck0 = -1, lck1, rss0 = -1, rss1;
	struct item it[4];
	unsigned n;
	struct cs c;
	int r;

	/* a stream of ours open across all of it */
	if (cs_make(t, &c, t->main_v, t->q, CC_ENCRYPT, 3, 4096))
		return;
	n = 0;
	cs_next(&c, it, &n, "FIRST (ours)");
	run_items(t, t->q, ctx, it, n);
	for (cyc = 0; cyc < 6 && !t->fatal; cyc++) {
		r = run_leaver(t, d, want, cyc & 1);
		expect(t, r == 0, ctx,
		       "cycle %u: a client could not open %u streams (exit "
		       "%d)",
		       cyc, want, r);
		if (cyc == 0) {
			usleep(200000);
			lck0 = daemon_status_kb(d->pid, "VmLck:");
			rss0 = daemon_status_kb(d->pid, "VmRSS:");
		}
		/* the daemon serves the rest meanwhile */
		n = 0;
		if (cyc == 2) {
			cs_next(&c, it, &n, "MIDDLE (ours)");
			run_items(t, t->q, ctx, it, n);
			c.s.failed |= it[0].status != CC_OK;
		}
	}
	{
		/* the daemon reaps the connections: give it 5 s */
		unsigned nc, w;
		long listed = 0;

		for (w = 0; w < 50; w++) {
			listed = listed_streams(t, "test_bad_stream leaver",
						&nc);
			if (!nc)
				break;
			usleep(100000);
		}

		expect(t, nc == 0, ctx,
		       "%u clients that exited still listed (%ld streams)", nc,
		       listed);
	}
	lck1 = daemon_status_kb(d->pid, "VmLck:");
	rss1 = daemon_status_kb(d->pid, "VmRSS:");
	printf("  %s: the daemon's VmLck %ld -> %ld kB, VmRSS %ld -> %ld kB "
	       "after 5 more clients left %u streams open each\n",
	       ctx, lck0, lck1, rss0, rss1, want);
	if (lck0 >= 0 && lck1 >= 0)
		expect(t, lck1 <= lck0 + 256, ctx,
		       "the daemon's locked memory grew from %ld to %ld kB "
		       "over 5 clients that left streams open",
		       lck0, lck1);
	/* a new client still opens them all */
	r = run_leaver(t, d, want, 0);
	expect(t, r == 0, ctx,
	       "after the others left, a new client could not open %u "
	       "streams (exit %d)",
	       want, r);
	n = 0;
	cs_next(&c, it, &n, "LAST (ours)");
	run_items(t, t->q, ctx, it, n);
	if (c.s.next == 3 && it[0].status == CC_OK && !c.s.failed)
		cs_check(t, &c, ctx);
	cs_free(t, &c);
}

int main(void)
{
	static const struct bs_case cases[] = {
		{ "case_session_destroyed", case_session_destroyed },
		{ "case_client_limit", case_client_limit },
		{ "case_queue_close", case_queue_close },
		{ "case_abandon", case_abandon },
		{ "case_disconnect", case_disconnect },
	};
	return bs_main(cases, sizeof(cases) / sizeof(cases[0]));
}
