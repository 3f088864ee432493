// SPDX-License-Identifier: MIT
/*
 * Running the differential tests (diff_common.h): cases in shared bursts
 * and through cc_crypt(), an algorithm on an engine, zero-length
 * segments, the largest op, and the main loop over a family.
 */
#include "diff_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- Bursts ---- */

static void run_group_burst(struct t *t, struct dcase *cs, unsigned n)
{
	static struct dop dops[GROUP_CASES * OPS_PER_CASE];
	static struct cc_op ops[GROUP_CASES * OPS_PER_CASE];
	static struct cc_completion comps[GROUP_CASES * OPS_PER_CASE];
	unsigned nops = 0, i, k;
	int r = 0;

	for (i = 0; i < n && !r; i++) {
		unsigned nk = cs[i].s->tag_def ? 3 : 2;

		if (!cs[i].has_session)
			continue;
		for (k = 0; k < nk && !r; k++) {
			struct dop *o = &dops[nops];

			memset(o, 0, sizeof(*o));
			o->c = &cs[i];
			o->kind = (enum kind)k;
			o->sessionless = cs[i].sessionless_ok && !mc_below(4);
			r = diff_dop_fill(t, o, &ops[nops],
					  (uint64_t)cs[i].idx << 8 | k);
			nops++;
		}
	}
	if (r) {
		diff_fail(t, NULL, "burst", "arena exhausted building a burst",
			  r, -1);
		t->fatal = 1;
		goto out;
	}
	r = fx_run_burst(t->q, ops, nops, comps, BURST_TIMEOUT_MS);
	if (r) {
		diff_fail(t, NULL, "burst", "burst did not complete in order",
			  r, -1);
		t->fatal = 1;
		goto out;
	}
	for (i = 0; i < nops; i++)
		diff_judge(t, &dops[i], "burst", comps[i].status, comps[i].len);
out:
	for (i = 0; i < nops; i++)
		diff_dop_free(t->q, &dops[i]);
}

/* ---- cc_crypt() ---- */

static void sync_check(struct t *t, struct dcase *c, enum kind kind, int status,
		       const uint8_t *out, const uint8_t *tag)
{
	struct dop o = { .c = c, .kind = kind, .layout = L_FLAT_OOP };
	const char *why = NULL;
	unsigned tl = mc_tag_len(&c->key);
	long off = -1;

	t->checked++;
	t->n_sync++;
	if (kind == K_FORGE) {
		if (status != CC_ERR_AUTH_FAILED)
			why = "forgery not rejected with CC_ERR_AUTH_FAILED";
		else if (c->s->writes_data &&
			 (off = mc_first_not(out, 0, c->len)) >= 0)
			why = "output not zeroed after auth failure";
	} else if (status != CC_OK) {
		why = "op failed";
	} else if (c->s->writes_data &&
		   (off = mc_first_diff(out, kind == K_ENC ? c->ct : c->pt,
					c->len)) >= 0) {
		why = "output differs from OpenSSL";
	} else if (kind == K_ENC && tl &&
		   (off = mc_first_diff(tag, c->tag, tl)) >= 0) {
		why = "tag differs from OpenSSL";
	}
	if (!why && c->s->writes_data &&
	    (off = mc_first_not(out + c->len, MC_CANARY, MC_GUARD)) >= 0)
		why = "wrote past the end of the output", off += c->len;
	if (why)
		diff_fail(t, &o, "sync", why, status, off);
}

static void run_case_sync(struct t *t, struct dcase *c)
{
	uint8_t *buf = malloc(c->len + MC_GUARD);
	uint8_t tag[MC_TAG_MAX + MC_GUARD];
	unsigned tl = mc_tag_len(&c->key);
	int gmac = !c->s->writes_data;
	int r;

	if (!buf) {
		t->fatal = 1;
		return;
	}
	memset(buf, MC_CANARY, c->len + MC_GUARD);
	memset(tag, MC_CANARY, sizeof(tag));
	r = fx_crypt(t->conn, c->session, CC_ENCRYPT, c->iv, c->iv_len,
		     c->aad_len ? c->aad : NULL, c->aad_len,
		     c->len ? c->pt : NULL, c->len && !gmac ? buf : NULL,
		     c->len, tl ? tag : NULL);
	sync_check(t, c, K_ENC, r, buf, tag);

	/* Decrypt in place. */
	memcpy(buf, c->ct, c->len);
	memcpy(tag, c->tag, tl);
	r = fx_crypt(t->conn, c->session, CC_DECRYPT, c->iv, c->iv_len,
		     c->aad_len ? c->aad : NULL, c->aad_len,
		     c->len ? (gmac ? c->pt : buf) : NULL,
		     c->len && !gmac ? buf : NULL, c->len, tl ? tag : NULL);
	sync_check(t, c, K_DEC, r, buf, NULL);

	if (tl) {
		memcpy(buf, c->ct, c->len);
		mc_flip(tag, mc_below(8 * tl));
		r = fx_crypt(t->conn, c->session, CC_DECRYPT, c->iv, c->iv_len,
			     c->aad_len ? c->aad : NULL, c->aad_len,
			     c->len ? (gmac ? c->pt : buf) : NULL,
			     c->len && !gmac ? buf : NULL, c->len, tag);
		sync_check(t, c, K_FORGE, r, buf, NULL);
	}
	free(buf);
}

/* ---- One algorithm on one engine ---- */

static void run_group(struct t *t, struct dcase *cs, unsigned n)
{
	unsigned i;
	int r;

	for (i = 0; i < n; i++) {
		r = mc_session(t->conn, &cs[i].key, t->engine, &cs[i].session);
		cs[i].has_session = r == 0;
		if (r) {
			struct dop o = { .c = &cs[i] };

			diff_fail(t, &o, "session", "cc_session_create failed",
				  r, -1);
		}
	}
	run_group_burst(t, cs, n);
	for (i = 0; i < n && !t->fatal; i++)
		if (cs[i].has_session)
			run_case_sync(t, &cs[i]);
	for (i = 0; i < n; i++) {
		if (!cs[i].has_session)
			continue;
		r = cc_session_destroy(t->conn, cs[i].session);
		if (r)
			diff_fail(t, NULL, "session",
				  "cc_session_destroy failed", r, -1);
		cs[i].has_session = 0;
	}
}

static size_t case_bytes(const struct dcase *c)
{
	/* Per op at most two data blocks with gaps, tag, aad, lists. */
	return OPS_PER_CASE *
	       (2 * ((size_t)c->len + 64 * 80) + c->aad_len + 1024);
}

static void run_alg(struct t *t, const struct mc_spec *s, uint64_t seed)
{
	static struct dcase cs[GROUP_CASES];
	unsigned n_edge = diff_n_edge_lens;
	/* CTR, and CTR under a MAC: counter blocks about to carry. */
	unsigned n_carry = s->alg == CC_ALG_AES_CTR ||
					   s->alg == CC_ALG_AES_CTR_HMAC_SHA1 ||
					   s->alg == CC_ALG_AES_CTR_HMAC_SHA256
				   ? 4 * 3
				   : 0;
	unsigned total = n_edge + n_carry + RANDOM_CASES, idx, n = 0, i;
	size_t bytes = 0;

	/* The same cases for every engine of an algorithm. */
	mc_srand(seed ^ (uint64_t)s->alg << 56);
	for (idx = 0; idx < total && !t->fatal; idx++) {
		uint32_t len;
		int carry = -1;

		if (idx < n_edge) {
			len = diff_edge_lens[idx];
		} else if (idx < n_edge + n_carry) {
			/* Long enough to cross the carry, odd tails. */
			static const uint32_t carry_lens[3] = { 5 * 16 + 7,
								4096 + 3, 48 };

			carry = (int)((idx - n_edge) % 4);
			len = carry_lens[(idx - n_edge) / 4];
		} else {
			len = mc_rnd_len();
		}
		if (diff_case_make(t, &cs[n], s, idx, len, idx, carry)) {
			diff_case_free(&cs[n]);
			t->failed++;
			t->fatal = 1;
			break;
		}
		bytes += case_bytes(&cs[n]);
		n++;
		if (n == GROUP_CASES || bytes >= GROUP_BYTES ||
		    idx + 1 == total) {
			run_group(t, cs, n);
			for (i = 0; i < n; i++)
				diff_case_free(&cs[i]);
			n = 0;
			bytes = 0;
		}
	}
	for (i = 0; i < n; i++)
		diff_case_free(&cs[i]);
}

/* ---- Zero-length segments ---- */

struct zvariant {
	const char *name;
	uint32_t len;
	uint32_t src[5], dst[5];
	unsigned nsrc, ndst; /* ndst 0: in place */
};

static const struct zvariant zvariants[] = {
	{ "empty segments at both ends and between, out of place",
	  64,
	  { 0, 32, 0, 32, 0 },
	  { 16, 0, 48, 0 },
	  5,
	  4 },
	{ "an empty segment between two, in place",
	  64,
	  { 32, 0, 32 },
	  { 0 },
	  3,
	  0 },
	{ "an empty op as one empty segment each side", 0, { 0 }, { 0 }, 1, 1 },
};

/* Segments of 0 bytes, which the spec does not forbid. Accepted with the
 * right answer, or refused with BAD_PARAM / BAD_RANGE: either is
 * reported; anything else fails. */
static void run_zero_segs(struct t *t, const struct mc_spec *s,
			  const struct zvariant *z, unsigned *accepted,
			  unsigned *refused)
{
	struct dcase c;
	struct dop o;
	struct cc_op op;
	struct cc_completion comp;
	int r;

	if (!mc_len_ok(s, z->len))
		return;
	if (diff_case_make(t, &c, s, 9999, z->len, 0, -1)) {
		diff_case_free(&c);
		t->failed++;
		return;
	}
	r = mc_session(t->conn, &c.key, t->engine, &c.session);
	if (r) {
		diff_fail(t, NULL, "zero-length segments", "session", r, -1);
		diff_case_free(&c);
		return;
	}
	memset(&o, 0, sizeof(o));
	o.c = &c;
	o.kind = K_ENC;
	o.layout = z->ndst ? L_SGL_OOP : L_SGL_INPLACE_NULL;
	o.in = malloc(c.len + 1);
	o.aad = cc_buf_alloc(t->q, c.aad_len + 1);
	o.tag = cc_buf_alloc(t->q, MC_TAG_MAX + MC_GUARD);
	if (!o.in || !o.aad || !o.tag || diff_dop_iv(t, &o) ||
	    mc_layout_alloc_lens(t->q, &o.src, z->src, z->nsrc) ||
	    (z->ndst && mc_layout_alloc_lens(t->q, &o.dst, z->dst, z->ndst))) {
		diff_fail(t, NULL, "zero-length segments", "arena exhausted", 0,
			  -1);
		goto out;
	}
	memcpy(o.in, c.pt, c.len);
	memcpy(o.aad, c.aad, c.aad_len);
	memset(o.tag, MC_CANARY, MC_TAG_MAX + MC_GUARD);
	mc_layout_write(&o.src, o.in);
	op = (struct cc_op){
		.user_data = 0x7a65726fu,
		.session = c.session,
		.dir = CC_ENCRYPT,
		.len = c.len,
		.aad = o.aad,
		.aad_len = c.aad_len,
		.tag = o.tag,
		.iv = o.iv ? o.iv : c.iv,
		.iv_len = c.iv_len,
	};
	mc_layout_to_op(&o.src, &op, 0);
	if (z->ndst)
		mc_layout_to_op(&o.dst, &op, 1);
	r = fx_run_burst(t->q, &op, 1, &comp, BURST_TIMEOUT_MS);
	if (r) {
		diff_fail(t, NULL, "zero-length segments", "burst", r, -1);
		t->fatal = 1;
		goto out;
	}
	if (comp.status == CC_ERR_BAD_PARAM ||
	    comp.status == CC_ERR_BAD_RANGE) {
		t->checked++;
		(*refused)++;
		printf("  %s [%s]: %s: refused, %s\n", s->name, t->engine,
		       z->name, cc_strerror(comp.status));
	} else {
		diff_judge(t, &o, "zero-length segments", comp.status,
			   comp.len);
		(*accepted)++;
	}
out:
	diff_dop_free(t->q, &o);
	cc_session_destroy(t->conn, c.session);
	diff_case_free(&c);
}

/* ---- The largest op ---- */

/* One 16 MiB encryption out of place and its decryption in place, and
 * the same through cc_crypt(): the spec's upper bound. */
static void run_max_len(struct t *t, const struct mc_spec *s)
{
	struct dcase c;
	struct dop o[2];
	struct cc_op ops[2];
	struct cc_completion comps[2];
	unsigned i;
	int r;

	memset(o, 0, sizeof(o));
	if (diff_case_make(t, &c, s, 8888, OP_MAX_LEN, 2, -1)) {
		diff_case_free(&c);
		t->failed++;
		return;
	}
	r = mc_session(t->conn, &c.key, t->engine, &c.session);
	if (r) {
		diff_fail(t, NULL, "16 MiB op", "session", r, -1);
		diff_case_free(&c);
		return;
	}
	for (i = 0; i < 2; i++) {
		o[i].c = &c;
		o[i].kind = i ? K_DEC : K_ENC;
		o[i].in = malloc(c.len + 1);
		o[i].aad = cc_buf_alloc(t->q, c.aad_len + 1);
		o[i].tag = cc_buf_alloc(t->q, MC_TAG_MAX + MC_GUARD);
		o[i].layout = i ? L_FLAT_INPLACE_NULL : L_FLAT_OOP;
		if (!o[i].in || !o[i].aad || !o[i].tag ||
		    diff_dop_iv(t, &o[i]) ||
		    mc_layout_alloc(t->q, &o[i].src, c.len, 0, 0) ||
		    (!i && mc_layout_alloc(t->q, &o[i].dst, c.len, 0, 0))) {
			diff_fail(t, NULL, "16 MiB op", "arena exhausted", 0,
				  -1);
			goto out;
		}
		memcpy(o[i].in, i && s->writes_data ? c.ct : c.pt, c.len);
		mc_layout_write(&o[i].src, o[i].in);
		memcpy(o[i].aad, c.aad, c.aad_len);
		memset(o[i].tag, MC_CANARY, MC_TAG_MAX + MC_GUARD);
		if (i)
			memcpy(o[i].tag, c.tag, mc_tag_len(&c.key));
		ops[i] = (struct cc_op){
			.user_data = 0x6d6178u << 4 | i,
			.session = c.session,
			.dir = i ? CC_DECRYPT : CC_ENCRYPT,
			.src = o[i].src.base,
			.dst = i ? NULL : o[i].dst.base,
			.len = c.len,
			.aad = o[i].aad,
			.aad_len = c.aad_len,
			.tag = o[i].tag,
			.iv = o[i].iv ? o[i].iv : c.iv,
			.iv_len = c.iv_len,
		};
	}
	r = fx_run_burst(t->q, ops, 2, comps, BURST_TIMEOUT_MS);
	if (r) {
		diff_fail(t, NULL, "16 MiB op", "burst", r, -1);
		t->fatal = 1;
		goto out;
	}
	for (i = 0; i < 2; i++)
		diff_judge(t, &o[i], "burst, 16 MiB", comps[i].status,
			   comps[i].len);
out:
	for (i = 0; i < 2; i++)
		diff_dop_free(t->q, &o[i]);
	if (!t->fatal)
		run_case_sync(t, &c);
	cc_session_destroy(t->conn, c.session);
	diff_case_free(&c);
}

/* ---- Main ---- */

static const char *const family_prog[DIFF_NR] = {
	[DIFF_GCM] = "test_diff_gcm",
	[DIFF_CIPHER] = "test_diff_cipher",
	[DIFF_AUTHENC] = "test_diff_authenc",
	[DIFF_MAC] = "test_diff_mac",
};

/* Which program runs alg: every row of mc_specs in one (DIFF_NR: none,
 * which every program reports as a failure). */
static enum diff_family family_of(enum cc_alg alg)
{
	switch (alg) {
	case CC_ALG_AES_GCM:
	case CC_ALG_AES_GMAC:
		return DIFF_GCM;
	case CC_ALG_AES_CBC:
	case CC_ALG_AES_CTR:
	case CC_ALG_AES_ECB:
	case CC_ALG_AES_XTS:
	case CC_ALG_NULL:
		return DIFF_CIPHER;
	case CC_ALG_AES_CBC_HMAC_SHA1:
	case CC_ALG_AES_CBC_HMAC_SHA256:
	case CC_ALG_AES_CBC_HMAC_SHA384:
	case CC_ALG_AES_CBC_HMAC_SHA512:
	case CC_ALG_AES_CTR_HMAC_SHA1:
	case CC_ALG_AES_CTR_HMAC_SHA256:
	case CC_ALG_AES_CBC_NULL:
		return DIFF_AUTHENC;
	default:
		for (unsigned i = 0; i < mc_n_mac_specs; i++)
			if (mc_mac_specs[i].alg == alg)
				return DIFF_MAC;
		return DIFF_NR;
	}
}

static const char *default_engine(struct cc_conn *conn, enum cc_alg alg,
				  char *buf)
{
	struct cc_alg_caps *caps;
	unsigned n, i;
	const char *r = NULL;

	if (cc_capabilities_get(conn, &caps, &n))
		return NULL;
	for (i = 0; i < n; i++)
		if (caps[i].alg == alg && caps[i].available &&
		    caps[i].default_engine && caps[i].sessionless) {
			snprintf(buf, FX_ENGINE_NAME_MAX, "%.*s",
				 FX_ENGINE_NAME_MAX - 1, caps[i].engine);
			r = buf;
		}
	cc_capabilities_free(caps);
	return r;
}

/* Every algorithm of family f whose index is share modulo of, on every
 * engine; the number of failures besides t's counts. */
static int run_specs(struct t *t, enum diff_family f, unsigned share,
		     unsigned of, uint64_t seed, unsigned *zacc, unsigned *zref)
{
	const struct mc_spec *specs = f == DIFF_MAC ? mc_mac_specs : mc_specs;
	unsigned n = f == DIFF_MAC ? mc_n_mac_specs : mc_n_specs, a, z;
	char engines[MC_MAX_ENGINES][FX_ENGINE_NAME_MAX];
	char def[FX_ENGINE_NAME_MAX];
	int n_eng, e, fails = 0;
	unsigned unit = 0;
	uint64_t t0;

	for (a = 0; a < n && !t->fatal; a++) {
		const struct mc_spec *s = &specs[a];

		if (family_of(s->alg) == DIFF_NR) {
			fprintf(stderr,
				"FAIL %s: in no test_diff_* program "
				"(family_of() in diff_run.c)\n",
				s->name);
			fails++;
		}
		if (family_of(s->alg) != f)
			continue;

		n_eng = mc_engines_for(t->conn, s->alg, engines,
				       MC_MAX_ENGINES);
		if (n_eng <= 0) {
			fprintf(stderr, "FAIL %s: no available engine (%s)\n",
				s->name,
				n_eng < 0 ? cc_strerror(n_eng) : "none listed");
			fails++;
			continue;
		}
		t->def_engine = default_engine(t->conn, s->alg, def);
		if (!t->def_engine) {
			fprintf(stderr,
				"FAIL %s: no default engine that takes "
				"session-less ops\n",
				s->name);
			fails++;
		}
		for (e = 0; e < n_eng && !t->fatal; e++) {
			unsigned long c0 = t->checked, f0 = t->failed;
			unsigned long sl0 = t->n_sessionless, fo0 = t->n_forge,
				      iv0 = t->n_arena_iv;

			/* The family's (algorithm, engine) pairs are dealt
			 * out to the clients in turn. */
			if (unit++ % of != share)
				continue;

			t->engine = engines[e];
			t->shown = 0;
			t0 = fx_now_ms();
			run_alg(t, s, seed);
			for (z = 0;
			     z < sizeof(zvariants) / sizeof(zvariants[0]) &&
			     !t->fatal;
			     z++)
				run_zero_segs(t, s, &zvariants[z], zacc, zref);
			if (!t->fatal)
				run_max_len(t, s);
			printf("%-20s [%s]: %lu checks, %lu failed (%lu "
			       "session-less ops, %lu forgeries, %lu IVs in "
			       "the arena; %llu ms)\n",
			       s->name, t->engine, t->checked - c0,
			       t->failed - f0, t->n_sessionless - sl0,
			       t->n_forge - fo0, t->n_arena_iv - iv0,
			       (unsigned long long)(fx_now_ms() - t0));
			diff_fsum_print();
		}
	}
	return fails;
}

/* The totals of one queue's run; the number of failures. */
static int report(const struct t *t, const char *who, unsigned zacc,
		  unsigned zref)
{
	unsigned a;

	printf("%slayouts:", who);
	for (a = 0; a < L_NR; a++)
		printf(" %s %lu%s", diff_layout_name[a], t->n_layout[a],
		       a + 1 < L_NR ? "," : "\n");
	printf("%szero-length segments: accepted %u times, refused %u times "
	       "(%zu layouts on every algorithm and engine)\n",
	       who, zacc, zref, sizeof(zvariants) / sizeof(zvariants[0]));
	printf("%s%lu checks (%lu through cc_crypt), %lu failed%s\n", who,
	       t->checked, t->n_sync, t->failed,
	       t->failed ? " (the first few of each algorithm shown)" : "");
	return t->failed || !t->checked || t->fatal;
}

/* Client process k of n: a connection and queue of its own on d, and its
 * share of the family. Its exit code. */
static int run_client(const struct fx_daemon *d, enum diff_family f, unsigned k,
		      unsigned n, uint64_t seed)
{
	struct cc_queue_params qp = {
		.sq_entries = QUEUE_ENTRIES,
		.arena_size = ARENA_SIZE,
	};
	struct t t = { 0 };
	unsigned zacc = 0, zref = 0;
	char who[32];
	int fails, r;

	snprintf(who, sizeof(who), "queue %u: ", k);
	r = cc_connect(d->sock, family_prog[f], &t.conn);
	if (!r)
		r = cc_queue_open(t.conn, &qp, &t.q);
	if (r) {
		fprintf(stderr, "FAIL %sconnect or queue: %s\n", who,
			cc_strerror(r));
		return FX_EXIT_FAIL;
	}
	fails = run_specs(&t, f, k, n, seed, &zacc, &zref);
	fails += report(&t, who, zacc, zref);
	cc_queue_close(t.q);
	cc_disconnect(t.conn);
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}

/* DIFF_QUEUES clients at once; the number that failed. */
static int run_clients(const struct fx_daemon *d, enum diff_family f,
		       uint64_t seed)
{
	pid_t pid[DIFF_QUEUES];
	int fails = 0, st;
	unsigned k;

	fflush(NULL);
	for (k = 0; k < DIFF_QUEUES; k++) {
		pid[k] = fork();
		if (pid[k] == 0)
			_exit(run_client(d, f, k, DIFF_QUEUES, seed));
		if (pid[k] < 0) {
			fprintf(stderr, "FAIL: fork: %s\n", strerror(errno));
			fails++;
		}
	}
	for (k = 0; k < DIFF_QUEUES; k++)
		if (pid[k] > 0 &&
		    (waitpid(pid[k], &st, 0) != pid[k] || !WIFEXITED(st) ||
		     WEXITSTATUS(st) != FX_EXIT_PASS))
			fails++;
	return fails;
}

int diff_main(enum diff_family f)
{
	/* HMAC keys of 0..15 bytes are legal, and what the key policy's
	 * default (128 bits) refuses, as a MAC's key and as authenc's
	 * auth_key alike. */
	static const char *const mac_args[] = { "--set", "keys.min_bits=0",
						NULL };
	struct fx_daemon_params dp = {
		.workers = 2,
		.args = f == DIFF_MAC || f == DIFF_AUTHENC ? mac_args : NULL,
	};
	struct cc_queue_params qp = {
		.sq_entries = QUEUE_ENTRIES,
		.arena_size = ARENA_SIZE,
	};
	uint64_t seed = mc_seed_from_env(SEED_DEFAULT);
	struct t t = { 0 };
	struct fx_daemon d;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed 0x%016llx (set TEST_SEED to reproduce)\n",
	       (unsigned long long)seed);
	if (fx_setup(&d, &dp, family_prog[f], &qp, &t.conn, &t.q))
		return FX_EXIT_FAIL;

	/* Every family: DIFF_QUEUES client processes with a queue each, at
	 * once, on the daemon's two workers. */
	fails += run_clients(&d, f, seed);
	if (fx_teardown(&d, t.conn, t.q))
		fails++;
	printf("%s\n", fails ? "FAILED" : "PASSED");
	if (fails)
		printf("replay with TEST_SEED=0x%016llx\n",
		       (unsigned long long)seed);
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
