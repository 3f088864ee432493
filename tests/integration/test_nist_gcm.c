// SPDX-License-Identifier: MIT
/*
 * NIST CAVP AES-GCM vectors (gcmEncryptExtIV*.rsp, gcmDecrypt*.rsp, as
 * shipped by Debian's python3-cryptography-vectors) through a real daemon,
 * once through cc_crypt() and once through the zero-copy burst path, for
 * every engine that takes AES-GCM sessions.
 *
 * Every IV length in the files (8, 96 and 1024 bits) runs on every engine
 * whose capability table lists it (aesni and openssl: 8..1024 bits; up to
 * 128 bits they travel in the descriptor, longer ones in the arena);
 * vectors with lengths an engine does not list (the kernel engine's
 * gcm(aes) takes 96 bits only) must be refused, never answered: the
 * daemon fails the op with CC_ERR_BAD_PARAM.
 *
 * Exit: 0 all passed, 1 any mismatch, 77 vectors not installed.
 */
#include "cavp_gcm.h"
#include "fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NIST_DIR_DEFAULT                                                       \
	"/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES/GCM"

#define BATCH 96 /* vectors per burst: one go, ring holds them */
#define QUEUE_ENTRIES 128
#define GUARD 16 /* canary bytes after every output */
#define CANARY 0xa5
#define BURST_TIMEOUT_MS 20000
#define SHOW_FAILURES 10 /* full diagnostics for the first few only */
#define MAX_ENGINES 8

/* What the service is expected to do with a vector. */
enum v_class {
	V_SUPPORTED,	 /* IV length the engine lists: exact result */
	V_DAEMON_REJECT, /* one it does not: per-op CC_ERR_BAD_PARAM */
};

struct counts {
	unsigned long run, passed, failed, rejected;
};

struct ctx {
	struct cc_conn *conn;
	struct cc_queue *q;
	const char *engine; /* NULL = daemon's choice */
	const char *file;
	enum cc_dir dir;
	struct counts sync, burst;
	unsigned long batches;
	unsigned shown;	  /* failures printed in full so far */
	int other_errors; /* session destroy etc. */
};

/* ---- Checking ---- */

/* iv_ok[n]: the engine under test serves n-byte IVs (its capability);
 * passed_iv[n]: vectors with n-byte IVs that passed on it, both paths. */
static uint8_t iv_ok[V_IV_MAX + 1];
static unsigned long passed_iv[V_IV_MAX + 1];

static enum v_class classify(const struct gcm_vec *v)
{
	return iv_ok[v->iv_len] ? V_SUPPORTED : V_DAEMON_REJECT;
}

static void print_hex(const char *label, const uint8_t *p, size_t n)
{
	size_t i;

	fprintf(stderr, "    %-9s= ", label);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%02x", p[i]);
	fputc('\n', stderr);
}

/* The vectors are public, so a failure prints all of the record. */
static void show_failure(struct ctx *c, const char *path,
			 const struct gcm_vec *v, const char *why, int status,
			 const uint8_t *out, const uint8_t *tag)
{
	unsigned len = v->ct_len;

	if (c->shown++ >= SHOW_FAILURES)
		return;
	fprintf(stderr,
		"FAIL %s:%u Count=%u engine=%s path=%s: %s (status %d: %s)\n",
		c->file, v->line, v->count, c->engine ? c->engine : "default",
		path, why, status, cc_strerror(status));
	print_hex("Key", v->key, v->key_len);
	print_hex("IV", v->iv, v->iv_len);
	print_hex("AAD", v->aad, v->aad_len);
	if (v->has_pt)
		print_hex("PT", v->pt, v->pt_len);
	else
		fprintf(stderr, "    PT       = FAIL (auth must fail)\n");
	print_hex("CT", v->ct, v->ct_len);
	print_hex("Tag", v->tag, v->tag_len);
	if (out)
		print_hex("got out", out, len);
	if (tag && c->dir == CC_ENCRYPT)
		print_hex("got tag", tag, v->tag_len);
}

static int canary_intact(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != CANARY)
			return 0;
	return 1;
}

static int all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/*
 * Judge one result. out holds len + GUARD bytes (the output, then the
 * canary); tag holds V_TAG_MAX + GUARD bytes. comp_len < 0 when the path
 * reports no length. Updates the counts of the path.
 */
static void judge(struct ctx *c, struct counts *k, const char *path,
		  const struct gcm_vec *v, int status, const uint8_t *out,
		  const uint8_t *tag, long comp_len)
{
	unsigned len = v->ct_len;
	const char *why = NULL;

	k->run++;
	switch (classify(v)) {
	case V_DAEMON_REJECT:
		/* cc_crypt() may fold the status into -EINVAL; a completion
		 * must carry the daemon's own status. */
		if (status != CC_ERR_BAD_PARAM &&
		    !(status == -EINVAL && comp_len < 0))
			why = "unsupported IV length not rejected with "
			      "CC_ERR_BAD_PARAM";
		break;
	case V_SUPPORTED:
		if (c->dir == CC_DECRYPT && v->fail) {
			if (status != CC_ERR_AUTH_FAILED)
				why = "forged vector not rejected with "
				      "CC_ERR_AUTH_FAILED";
			else if (!all_zero(out, len))
				why = "output not zeroed after auth failure";
			else if (!canary_intact(out + len, GUARD))
				why = "wrote past the end of the output";
			break;
		}
		if (status != CC_OK)
			why = "operation failed";
		else if (memcmp(out, c->dir == CC_ENCRYPT ? v->ct : v->pt, len))
			why = c->dir == CC_ENCRYPT ? "ciphertext mismatch"
						   : "plaintext mismatch";
		else if (!canary_intact(out + len, GUARD))
			why = "wrote past the end of the output";
		else if (c->dir == CC_ENCRYPT &&
			 memcmp(tag, v->tag, v->tag_len))
			why = "tag mismatch";
		else if (c->dir == CC_ENCRYPT &&
			 !canary_intact(tag + v->tag_len,
					V_TAG_MAX + GUARD - v->tag_len))
			why = "wrote more than tag_len tag bytes";
		else if (comp_len >= 0 && comp_len != len)
			why = "completion length differs from payload length";
		break;
	}
	if (why) {
		k->failed++;
		show_failure(c, path, v, why, status, out, tag);
	} else if (classify(v) == V_SUPPORTED) {
		k->passed++;
		passed_iv[v->iv_len]++;
	} else {
		k->rejected++;
	}
}

/* ---- The two paths ---- */

static void run_sync(struct ctx *c, const struct gcm_vec *v)
{
	uint8_t out[V_DATA_MAX + GUARD], tag[V_TAG_MAX + GUARD];
	const uint8_t *in = c->dir == CC_ENCRYPT ? v->pt : v->ct;
	unsigned len = v->ct_len;
	int r;

	memset(out, CANARY, sizeof(out));
	memset(tag, CANARY, sizeof(tag));
	if (c->dir == CC_DECRYPT)
		memcpy(tag, v->tag, v->tag_len);
	/* Empty inputs as NULL: what a caller of the copying API writes. */
	r = fx_crypt(c->conn, v->session, c->dir, v->iv, v->iv_len,
		     v->aad_len ? v->aad : NULL, v->aad_len, len ? in : NULL,
		     len ? out : NULL, len, tag);
	judge(c, &c->sync, "sync", v, r, out, tag, -1);
}

struct slot {
	/* arena buffers, owned by the queue; iv only for IVs longer than a
	 * descriptor holds */
	uint8_t *src, *dst, *aad, *tag, *iv;
	int in_place;
};

static void free_slot(struct cc_queue *q, struct slot *s)
{
	if (s->dst && s->dst != s->src)
		cc_buf_free(q, s->dst);
	if (s->src)
		cc_buf_free(q, s->src);
	if (s->aad)
		cc_buf_free(q, s->aad);
	if (s->tag)
		cc_buf_free(q, s->tag);
	if (s->iv)
		cc_buf_free(q, s->iv);
	memset(s, 0, sizeof(*s));
}

/* Allocate and fill the arena buffers of one op; 0 or -ENOMEM. */
static int fill_slot(struct ctx *c, const struct gcm_vec *v, unsigned k,
		     struct slot *s, struct cc_op *op, uint64_t user_data)
{
	const uint8_t *in = c->dir == CC_ENCRYPT ? v->pt : v->ct;
	unsigned len = v->ct_len;

	memset(s, 0, sizeof(*s));
	s->in_place = k & 1;
	s->src = cc_buf_alloc(c->q, len + GUARD);
	s->aad = cc_buf_alloc(c->q, v->aad_len ? v->aad_len : 1);
	s->tag = cc_buf_alloc(c->q, V_TAG_MAX + GUARD);
	s->dst = s->in_place ? s->src : cc_buf_alloc(c->q, len + GUARD);
	if (v->iv_len > CC_IV_INLINE)
		s->iv = cc_buf_alloc(c->q, v->iv_len);
	if (!s->src || !s->aad || !s->tag || !s->dst ||
	    (v->iv_len > CC_IV_INLINE && !s->iv)) {
		free_slot(c->q, s);
		return -ENOMEM;
	}
	memcpy(s->src, in, len);
	memset(s->src + len, CANARY, GUARD);
	if (!s->in_place)
		memset(s->dst, CANARY, len + GUARD);
	memcpy(s->aad, v->aad, v->aad_len);
	if (s->iv)
		memcpy(s->iv, v->iv, v->iv_len);
	memset(s->tag, CANARY, V_TAG_MAX + GUARD);
	if (c->dir == CC_DECRYPT)
		memcpy(s->tag, v->tag, v->tag_len);

	*op = (struct cc_op){
		.user_data = user_data,
		.session = v->session,
		.dir = c->dir,
		.src = s->src,
		/* Both spellings of "in place": dst == src and dst NULL. */
		.dst = s->in_place ? ((k & 2) ? s->src : NULL) : s->dst,
		.len = len,
		.aad = s->aad,
		.aad_len = v->aad_len,
		.tag = s->tag,
		.iv = s->iv ? s->iv : v->iv,
		.iv_len = v->iv_len,
	};
	return 0;
}

static void run_burst(struct ctx *c, struct gcm_vec *v, unsigned n)
{
	struct cc_op ops[BATCH];
	struct cc_completion comps[BATCH];
	struct slot slots[BATCH];
	unsigned idx[BATCH]; /* op -> vector */
	unsigned nops = 0, i;
	int r;

	for (i = 0; i < n; i++) {
		uint64_t ud;

		if (!v[i].has_session)
			continue;
		/* Unique and not a small counter, so a completion echoing
		 * the wrong descriptor cannot match by accident. */
		ud = 0x6e697374ull << 32 | (c->batches & 0xffff) << 16 | i;
		if (fill_slot(c, &v[i], nops, &slots[nops], &ops[nops], ud)) {
			c->burst.run++;
			c->burst.failed++;
			show_failure(c, "burst", &v[i], "arena exhausted",
				     -ENOMEM, NULL, NULL);
			continue;
		}
		idx[nops++] = i;
	}
	c->batches++;

	r = fx_run_burst(c->q, ops, nops, comps, BURST_TIMEOUT_MS);
	for (i = 0; i < nops; i++) {
		const struct gcm_vec *vv = &v[idx[i]];

		if (r < 0) {
			/* Without trustworthy completions nothing passes;
			 * fx_run_burst() said why. */
			c->burst.run++;
			c->burst.failed++;
		} else {
			judge(c, &c->burst, "burst", vv, comps[i].status,
			      slots[i].dst, slots[i].tag, comps[i].len);
		}
		free_slot(c->q, &slots[i]);
	}
	if (r < 0) {
		fprintf(stderr,
			"FAIL %s: burst of %u ops: %s; the queue is unusable, "
			"stopping\n",
			c->file, nops, cc_strerror(r));
		c->other_errors++;
	}
}

static void run_batch(struct ctx *c, struct gcm_vec *v, unsigned n)
{
	unsigned i;
	int r;

	for (i = 0; i < n; i++) {
		struct cc_session_params sp = {
			.alg = CC_ALG_AES_GCM,
			.key = v[i].key,
			.key_len = v[i].key_len,
			.tag_len = v[i].tag_len,
			.engine = c->engine,
		};

		r = cc_session_create(c->conn, &sp, &v[i].session);
		if (r == 0) {
			v[i].has_session = 1;
			continue;
		}
		/* Every key and tag length in the files is supported. */
		c->sync.run++;
		c->sync.failed++;
		c->burst.run++;
		c->burst.failed++;
		show_failure(c, "session", &v[i], "cc_session_create failed", r,
			     NULL, NULL);
	}

	for (i = 0; i < n; i++)
		if (v[i].has_session)
			run_sync(c, &v[i]);
	if (!c->other_errors)
		run_burst(c, v, n);

	for (i = 0; i < n; i++) {
		if (!v[i].has_session)
			continue;
		r = cc_session_destroy(c->conn, v[i].session);
		if (r) {
			fprintf(stderr,
				"FAIL %s:%u: cc_session_destroy(%u): %s\n",
				c->file, v[i].line, v[i].session,
				cc_strerror(r));
			c->other_errors++;
		}
		v[i].has_session = 0;
	}
}

/* Returns the number of records parsed, or -errno. */
static long run_file(struct ctx *c, const char *dir, const char *file,
		     enum cc_dir d)
{
	static struct gcm_vec v[BATCH];
	char path[4096];
	struct cavp p;
	long total = 0;
	unsigned n = 0;
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	r = cavp_open(&p, path, file, d == CC_DECRYPT);
	if (r) {
		fprintf(stderr, "FAIL %s: %s\n", path, strerror(-r));
		return r;
	}
	c->file = file;
	c->dir = d;
	for (;;) {
		r = cavp_next(&p, &v[n]);
		if (r < 0)
			break;
		if (r > 0) {
			n++;
			total++;
		}
		if (n == BATCH || (r == 0 && n)) {
			run_batch(c, v, n);
			n = 0;
		}
		if (r == 0 || c->other_errors)
			break;
	}
	cavp_close(&p);
	return r < 0 ? r : total;
}

static void print_counts(const char *what, const struct counts *k)
{
	printf("%-8s run %6lu  passed %6lu  failed %6lu  "
	       "rejected-as-unsupported %6lu\n",
	       what, k->run, k->passed, k->failed, k->rejected);
}

int main(void)
{
	static const struct {
		const char *file;
		enum cc_dir dir;
	} files[] = {
		{ "gcmEncryptExtIV128.rsp", CC_ENCRYPT },
		{ "gcmEncryptExtIV192.rsp", CC_ENCRYPT },
		{ "gcmEncryptExtIV256.rsp", CC_ENCRYPT },
		{ "gcmDecrypt128.rsp", CC_DECRYPT },
		{ "gcmDecrypt192.rsp", CC_DECRYPT },
		{ "gcmDecrypt256.rsp", CC_DECRYPT },
	};
	const char *dir = getenv("NIST_GCM_DIR");
	struct fx_daemon_params dp = { .workers = 2 };
	struct cc_queue_params qp = { .sq_entries = QUEUE_ENTRIES };
	struct counts tsync = { 0 }, tburst = { 0 };
	char engines[MAX_ENGINES][FX_ENGINE_NAME_MAX];
	struct fx_daemon d;
	struct cc_conn *conn;
	struct cc_queue *q;
	unsigned n_eng, e, f;
	int fails = 0, r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!dir || !*dir)
		dir = NIST_DIR_DEFAULT;
	if (access(dir, R_OK | X_OK) < 0) {
		printf("SKIP: no NIST GCM vectors at %s (install "
		       "python3-cryptography-vectors)\n",
		       dir);
		return FX_EXIT_SKIP;
	}

	if (fx_setup(&d, &dp, "test_nist_gcm", &qp, &conn, &q))
		return FX_EXIT_FAIL;

	/* Every engine that takes AES-GCM sessions; the daemon's default
	 * is one of them. If it lists none, test the default alone. */
	r = fx_engines_for(conn, CC_ALG_AES_GCM, engines, MAX_ENGINES);
	if (r < 0)
		fails++;
	n_eng = r > 0 ? (unsigned)r : 0;
	for (e = 0; e < (n_eng ? n_eng : 1); e++) {
		const char *eng = n_eng ? engines[e] : NULL;

		for (unsigned l = 0; l <= V_IV_MAX; l++) {
			iv_ok[l] = fx_iv_ok(conn, CC_ALG_AES_GCM, eng, l) == 1;
			passed_iv[l] = 0;
		}
		if (!iv_ok[12]) {
			fprintf(stderr,
				"FAIL: engine %s does not list 96-bit IVs\n",
				eng ? eng : "default");
			fails++;
		}
		for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
			struct ctx c = {
				.conn = conn,
				.q = q,
				.engine = eng,
			};
			long parsed =
				run_file(&c, dir, files[f].file, files[f].dir);

			printf("%s [%s]: %ld vectors\n", files[f].file,
			       eng ? eng : "default", parsed);
			print_counts("  sync", &c.sync);
			print_counts("  burst", &c.burst);
			/* Every parsed vector must have been judged on both
			 * paths; a shortfall means something was skipped. */
			if (parsed <= 0 || c.other_errors || c.sync.failed ||
			    c.burst.failed ||
			    c.sync.run != (unsigned long)parsed ||
			    c.burst.run != (unsigned long)parsed)
				fails++;
			tsync.run += c.sync.run;
			tsync.passed += c.sync.passed;
			tsync.failed += c.sync.failed;
			tsync.rejected += c.sync.rejected;
			tburst.run += c.burst.run;
			tburst.passed += c.burst.passed;
			tburst.failed += c.burst.failed;
			tburst.rejected += c.burst.rejected;
		}
		/* Each IV length the files hold (8, 96 and 1024 bits) ran
		 * wherever the engine lists it, and only there. */
		static const unsigned file_ivs[] = { 1, 12, 128 };
		for (unsigned i = 0; i < 3; i++) {
			unsigned l = file_ivs[i];
			printf("  [%s] %4u-bit IVs: %s, %lu passed\n",
			       eng ? eng : "default", 8 * l,
			       iv_ok[l] ? "listed" : "not listed",
			       passed_iv[l]);
			if (iv_ok[l] != (passed_iv[l] != 0))
				fails++;
		}
	}

	printf("TOTAL over %u engine(s):\n", n_eng ? n_eng : 1);
	print_counts("  sync", &tsync);
	print_counts("  burst", &tburst);

	if (fx_teardown(&d, conn, q))
		fails++;
	if (!tsync.passed || !tburst.passed)
		fails++;
	printf("%s\n", fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
