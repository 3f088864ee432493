// SPDX-License-Identifier: MIT
/*
 * Parameters the service must refuse, and how it refuses them.
 *
 * - Session parameters: bad key lengths (-EINVAL, as documented) and bad
 *   tag lengths (some -errno).
 * - Ops the library must refuse at enqueue (documented: a pointer outside
 *   the arena, a direction that does not exist), leaving nothing in flight.
 * - Ops only the daemon can refuse, because they fit a descriptor: IVs of
 *   0, 8 and 16 bytes. Each must fail alone, with CC_ERR_BAD_PARAM, in its
 *   own slot, without stalling or reordering the good ops around it.
 * - AAD one byte past CRD_AAD_MAX, and sessions that were destroyed or
 *   never existed: refused by the library or the daemon, never run.
 *
 * Exit: 0 all passed, 1 any failure.
 */
#include "fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cryptod/ring_abi.h>

#define LEN 64
#define TAG_LEN 16
#define QUEUE_ENTRIES 32
#define TIMEOUT_MS 20000
#define MAX_ENGINES 8

struct t {
	struct cc_conn *conn;
	struct cc_queue *q;
	const char *engine; /* NULL = daemon's choice */
	unsigned long checked, failed;
	int fatal; /* the queue broke: stop */
};

/* Not secret: a fixed test key. */
static const uint8_t test_key[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
static const uint8_t test_iv[CRD_IV_MAX] = { 0xc0, 0xff, 0xee };

static void expect(struct t *t, int ok, const char *what, int got)
{
	t->checked++;
	if (ok)
		return;
	t->failed++;
	fprintf(stderr, "FAIL engine=%s: %s (got %d: %s)\n",
		t->engine ? t->engine : "default", what, got, cc_strerror(got));
}

static void run_bad_sessions(struct t *t)
{
	static const struct {
		size_t key_len;
		unsigned tag_len;
		const char *what;
	} bad[] = {
		{ 0, 16, "empty key" },	     { 15, 16, "15-byte key" },
		{ 17, 16, "17-byte key" },   { 33, 16, "33-byte key" },
		{ 16, 1, "1-byte tag" },     { 16, 5, "5-byte tag" },
		{ 16, 11, "11-byte tag" },   { 16, 17, "17-byte tag" },
		{ 16, 255, "255-byte tag" },
	};
	static const uint8_t key33[33];
	char what[96];
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cc_session_params sp = {
			.alg = CC_ALG_AES_GCM,
			.key = key33,
			.key_len = bad[i].key_len,
			.tag_len = bad[i].tag_len,
			.engine = t->engine,
		};
		uint32_t sid;
		int r = cc_session_create(t->conn, &sp, &sid);

		/* cc_session_create() documents -EINVAL for a bad key
		 * length; for a bad tag length any -errno will do. */
		snprintf(what, sizeof(what), "AES-GCM session with %s: want %s",
			 bad[i].what,
			 bad[i].key_len == 16 ? "a -errno" : "-EINVAL");
		expect(t, r == -EINVAL || (r < 0 && bad[i].key_len == 16), what,
		       r);
		if (r == 0)
			cc_session_destroy(t->conn, sid);
	}
}

/* Submit one op alone: its completion status, or the enqueue error if
 * the library refused it (then nothing may be left in flight). */
static int submit_one(struct t *t, const struct cc_op *op)
{
	struct cc_completion comp;
	unsigned before = cc_in_flight(t->q);
	int r = cc_enqueue_burst(t->q, op, 1);

	if (r < 0)
		return cc_in_flight(t->q) == before ? r : -EPROTO;
	if (r == 0)
		return -EAGAIN; /* an idle ring refused one op: wrong too */
	for (;;) {
		r = cc_dequeue_burst(t->q, &comp, 1);
		if (r != 0)
			break;
		r = cc_wait(t->q, TIMEOUT_MS);
		if (r < 0) {
			t->fatal = 1;
			return r;
		}
	}
	return r < 0 ? r : comp.status;
}

struct bufs {
	uint8_t *src[6], *dst[6], *tag[6], *aad;
};

static void buf_free(struct cc_queue *q, uint8_t **p)
{
	if (*p)
		cc_buf_free(q, *p);
	*p = NULL;
}

static void bufs_free(struct cc_queue *q, struct bufs *b)
{
	unsigned i;

	for (i = 0; i < 6; i++) {
		buf_free(q, &b->src[i]);
		buf_free(q, &b->dst[i]);
		buf_free(q, &b->tag[i]);
	}
	buf_free(q, &b->aad);
}

static void run_bad_ops(struct t *t)
{
	/* Good ops between bad ones, one burst; the bad IV lengths all fit
	 * a descriptor, so the daemon sees and must judge them. */
	static const unsigned iv_len[6] = { 12, 8, 12, 0, 16, 12 };
	static const enum cc_dir dir[6] = {
		CC_ENCRYPT, CC_ENCRYPT, CC_ENCRYPT,
		CC_ENCRYPT, CC_DECRYPT, CC_ENCRYPT
	};
	struct cc_session_params sp = {
		.alg = CC_ALG_AES_GCM,
		.key = test_key,
		.key_len = 16,
		.tag_len = TAG_LEN,
		.engine = t->engine,
	};
	struct cc_op ops[6], op;
	struct cc_completion comps[6];
	struct bufs b = { 0 };
	uint8_t stack_buf[LEN], out[LEN], tag[TAG_LEN];
	char what[96];
	uint32_t sid;
	unsigned i;
	int r;

	memset(stack_buf, 0x5a, sizeof(stack_buf));
	r = cc_session_create(t->conn, &sp, &sid);
	expect(t, r == 0, "AES-128-GCM session", r);
	if (r)
		return;

	b.aad = cc_buf_alloc(t->q, CRD_AAD_MAX + 1);
	if (!b.aad)
		goto nomem;
	memset(b.aad, 0x41, CRD_AAD_MAX + 1);
	for (i = 0; i < 6; i++) {
		b.src[i] = cc_buf_alloc(t->q, LEN);
		b.dst[i] = cc_buf_alloc(t->q, LEN);
		b.tag[i] = cc_buf_alloc(t->q, TAG_LEN);
		if (!b.src[i] || !b.dst[i] || !b.tag[i])
			goto nomem;
		memset(b.src[i], i, LEN);
		memset(b.tag[i], 0, TAG_LEN);
		ops[i] = (struct cc_op){
			.user_data = 0xbad00 + i,
			.session = sid,
			.dir = dir[i],
			.src = b.src[i],
			.dst = b.dst[i],
			.len = LEN,
			.aad = b.aad,
			.aad_len = 16,
			.tag = b.tag[i],
			.iv = test_iv,
			.iv_len = iv_len[i],
		};
	}
	r = fx_run_burst(t->q, ops, 6, comps, TIMEOUT_MS);
	expect(t, r == 0, "burst of good and bad ops completes in order", r);
	if (r) {
		t->fatal = 1;
		goto out;
	}
	for (i = 0; i < 6; i++) {
		/* IV lengths the engine lists in its capabilities are
		 * served (a decrypt of these made-up tags then fails its
		 * tag check); every other length must be refused. */
		if (iv_len[i] != 12 && fx_iv_ok(t->conn, CC_ALG_AES_GCM,
						t->engine, iv_len[i]) == 1) {
			snprintf(what, sizeof(what),
				 "op %u with a %u-byte IV the engine lists: "
				 "want it served",
				 i, iv_len[i]);
			expect(t,
			       comps[i].status == CC_OK ||
				       (dir[i] == CC_DECRYPT &&
					comps[i].status == CC_ERR_AUTH_FAILED),
			       what, comps[i].status);
			continue;
		}
		if (iv_len[i] == 12) {
			snprintf(what, sizeof(what),
				 "good op %u between bad ones: want CC_OK", i);
			expect(t, comps[i].status == CC_OK, what,
			       comps[i].status);
			expect(t, comps[i].status || comps[i].len == LEN,
			       "good op: completion length", (int)comps[i].len);
			continue;
		}
		snprintf(what, sizeof(what),
			 "%s with a %u-byte IV: want CC_ERR_BAD_PARAM",
			 dir[i] == CC_ENCRYPT ? "encrypt" : "decrypt",
			 iv_len[i]);
		expect(t, comps[i].status == CC_ERR_BAD_PARAM, what,
		       comps[i].status);
	}

	/* The copying API refuses a bad IV as well; the library may fold
	 * the status into -EINVAL. */
	r = fx_crypt(t->conn, sid, CC_ENCRYPT, test_iv, 0, NULL, 0, stack_buf,
		     out, LEN, tag);
	expect(t, r == CC_ERR_BAD_PARAM || r == -EINVAL,
	       "cc_crypt with no IV: want CC_ERR_BAD_PARAM or -EINVAL", r);

	/* Documented enqueue refusals: nothing may be left in flight. */
	op = ops[0];
	op.src = stack_buf;
	r = submit_one(t, &op);
	expect(t, r < 0 && r > -1000,
	       "src outside the arena: want a -errno from enqueue", r);
	op = ops[0];
	op.iv_len = CRD_IV_MAX + 1;
	r = submit_one(t, &op);
	expect(t, r < 0 && r > -1000, "17-byte IV: want a -errno from enqueue",
	       r);
	op = ops[0];
	op.dir = (enum cc_dir)(CC_DERIVE + 1); /* past the last op */
	r = submit_one(t, &op);
	expect(t, r < 0 && r > -1000, "direction 6: want a -errno from enqueue",
	       r);

	/* AAD one byte past the limit: the library or the daemon refuses. */
	op = ops[0];
	op.aad_len = CRD_AAD_MAX + 1;
	r = submit_one(t, &op);
	expect(t, r < 0 && r != CC_ERR_AUTH_FAILED && !t->fatal,
	       "AAD of CRD_AAD_MAX + 1 bytes: want it refused", r);

	/* Sessions that do not exist, for the data path too. */
	r = cc_session_destroy(t->conn, sid);
	expect(t, r == 0, "cc_session_destroy", r);
	op = ops[0];
	r = submit_one(t, &op);
	expect(t, r == CC_ERR_NO_SESSION || (r < 0 && r > -1000 && !t->fatal),
	       "op on a destroyed session: want CC_ERR_NO_SESSION or -errno",
	       r);
	op.session = 0x7ffffff0;
	r = submit_one(t, &op);
	expect(t, r == CC_ERR_NO_SESSION || (r < 0 && r > -1000 && !t->fatal),
	       "op on a session never created: want CC_ERR_NO_SESSION or "
	       "-errno",
	       r);
	r = cc_session_destroy(t->conn, sid);
	expect(t, r < 0, "destroying a session twice: want a -errno", r);
	goto out_nosession;

nomem:
	fprintf(stderr, "FAIL: arena exhausted\n");
	t->failed++;
	t->fatal = 1;
out:
	cc_session_destroy(t->conn, sid);
out_nosession:
	bufs_free(t->q, &b);
}

int main(void)
{
	struct fx_daemon_params dp = { .workers = 2 };
	struct cc_queue_params qp = { .sq_entries = QUEUE_ENTRIES };
	char engines[MAX_ENGINES][FX_ENGINE_NAME_MAX];
	struct t t = { 0 };
	struct fx_daemon d;
	unsigned n_eng, e;
	int r, fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (fx_setup(&d, &dp, "test_bad_params", &qp, &t.conn, &t.q))
		return FX_EXIT_FAIL;

	r = fx_engines_for(t.conn, CC_ALG_AES_GCM, engines, MAX_ENGINES);
	if (r < 0)
		fails++;
	n_eng = r > 0 ? (unsigned)r : 0;
	for (e = 0; e < (n_eng ? n_eng : 1) && !t.fatal; e++) {
		unsigned long c0 = t.checked, f0 = t.failed;

		t.engine = n_eng ? engines[e] : NULL;
		run_bad_sessions(&t);
		run_bad_ops(&t);
		printf("aes-gcm [%s]: %lu checks, %lu failed\n",
		       t.engine ? t.engine : "default", t.checked - c0,
		       t.failed - f0);
	}

	if (fx_teardown(&d, t.conn, t.q))
		fails++;
	if (t.failed || !t.checked)
		fails++;
	printf("TOTAL: %lu checks, %lu failed\n%s\n", t.checked, t.failed,
	       fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
