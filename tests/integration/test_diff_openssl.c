// SPDX-License-Identifier: MIT
/*
 * Differential test: AES-GCM through a real daemon against OpenSSL's EVP,
 * with random keys, IVs, AAD, payload and tag lengths; and the null
 * algorithm, which must hand back exactly what it was given.
 *
 * Each case goes through one mixed burst (encrypt in and out of place,
 * decrypt in and out of place, and three forgeries: a flipped bit in the
 * tag, the ciphertext and the AAD) and through cc_crypt(). The queue's ring
 * is smaller than a burst, so enqueue also runs into "ring full".
 *
 * Everything random comes from one seed, printed first; set TEST_SEED to
 * replay a failure. Keys are never printed: the seed reproduces them.
 *
 * Exit: 0 all passed, 1 any mismatch.
 */
#include "fixture.h"
#include "modes_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include <cryptod/ring_abi.h>

#define SEED_DEFAULT 0x63727970746f6431ull
#define RANDOM_CASES 1500 /* per engine, beside the fixed lengths */
#define NULL_RANDOM_CASES 300
#define QUEUE_ENTRIES 32 /* smaller than a burst, on purpose */
#define ARENA_SIZE (16u << 20)
#define GROUP_BYTES (6u << 20) /* arena bytes one burst may use */
#define GROUP_CASES 12
#define BURST_TIMEOUT_MS 20000
#define SHOW_FAILURES 20
#define MAX_ENGINES 8

static const unsigned fixed_lens[] = {
	0, 1, 15, 16, 17, 63, 64, 65, 4095, 4096, 65536,
};
static const unsigned tag_lens[] = { 4, 8, 12, 13, 14, 15, 16 };
static const unsigned key_lens[] = { 16, 24, 32 };

/* ---- Cases ---- */

struct gcase {
	unsigned idx;
	unsigned key_len, tag_len, aad_len, len;
	uint8_t key[32];
	uint8_t iv[12];
	uint8_t *pt, *aad, *ct; /* malloc'd; ct is OpenSSL's answer */
	uint8_t tag[16];	/* OpenSSL's full tag; tag_len of it count */
	uint32_t flip_tag, flip_ct, flip_aad; /* bit to flip in a forgery */
	uint32_t session;
	int has_session;
};

/* What one op of a case's burst does. */
enum kind {
	K_ENC_OOP,
	K_ENC_INPLACE,
	K_DEC_OOP,
	K_DEC_INPLACE,
	K_BAD_TAG, /* out of place */
	K_BAD_CT,  /* in place */
	K_BAD_AAD, /* out of place */
	K_NR,
};

static const char *const kind_name[K_NR] = {
	"encrypt out-of-place", "encrypt in-place", "decrypt out-of-place",
	"decrypt in-place",	"forged tag",	    "forged ciphertext",
	"forged AAD",
};

struct t {
	struct cc_conn *conn;
	struct cc_queue *q;
	const char *engine; /* NULL = daemon's choice */
	unsigned long checked, failed;
	unsigned shown;
	int fatal; /* the queue or connection broke: stop */
};

static void case_free(struct gcase *g)
{
	/* Test keys, but wipe them anyway: the habit is the point. */
	OPENSSL_cleanse(g->key, sizeof(g->key));
	free(g->pt);
	g->pt = NULL;
	free(g->aad);
	g->aad = NULL;
	free(g->ct);
	g->ct = NULL;
}

static int evp_encrypt(struct gcase *g)
{
	const EVP_CIPHER *ciph = g->key_len == 16   ? EVP_aes_128_gcm()
				 : g->key_len == 24 ? EVP_aes_192_gcm()
						    : EVP_aes_256_gcm();
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	uint8_t fin[16];
	int outl, ok;

	ok = x && EVP_EncryptInit_ex(x, ciph, NULL, NULL, NULL) &&
	     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) &&
	     EVP_EncryptInit_ex(x, NULL, NULL, g->key, g->iv) &&
	     (!g->aad_len ||
	      EVP_EncryptUpdate(x, NULL, &outl, g->aad, (int)g->aad_len)) &&
	     (!g->len ||
	      EVP_EncryptUpdate(x, g->ct, &outl, g->pt, (int)g->len)) &&
	     EVP_EncryptFinal_ex(x, fin, &outl) &&
	     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, g->tag);
	EVP_CIPHER_CTX_free(x);
	return ok ? 0 : -EIO;
}

/* A GCM tag of length t is the first t bytes of the full tag, so
 * OpenSSL's 16-byte tag answers every tag length. */
static int case_make(struct gcase *g, unsigned idx, unsigned len,
		     unsigned key_len, int aad_len)
{
	memset(g, 0, sizeof(*g));
	g->idx = idx;
	g->len = len;
	g->key_len = key_len;
	g->tag_len = tag_lens[mc_below(sizeof(tag_lens) / sizeof(tag_lens[0]))];
	g->aad_len = aad_len < 0 ? mc_rnd_aad_len(10, 10) : (unsigned)aad_len;
	mc_rnd_bytes(g->key, key_len);
	mc_rnd_bytes(g->iv, sizeof(g->iv));
	g->pt = malloc(len ? len : 1);
	g->ct = malloc(len ? len : 1);
	g->aad = malloc(g->aad_len ? g->aad_len : 1);
	if (!g->pt || !g->ct || !g->aad)
		return -ENOMEM;
	mc_rnd_bytes(g->pt, len);
	mc_rnd_bytes(g->aad, g->aad_len);
	g->flip_tag = mc_below(g->tag_len * 8);
	g->flip_ct = len ? mc_below(len * 8) : 0;
	g->flip_aad = g->aad_len ? mc_below(g->aad_len * 8) : 0;
	return evp_encrypt(g);
}

/* ---- Checking ---- */

static void fail(struct t *t, const struct gcase *g, const char *path,
		 const char *what, const char *why, int status, long off)
{
	t->failed++;
	if (t->shown++ >= SHOW_FAILURES)
		return;
	fprintf(stderr, "FAIL case %u engine=%s path=%s op=%s: %s", g->idx,
		t->engine ? t->engine : "default", path, what, why);
	if (off >= 0)
		fprintf(stderr, " at byte %ld", off);
	if (g->key_len)
		fprintf(stderr,
			" (status %d: %s; AES-%u-GCM len %u aad %u tag %u)\n",
			status, cc_strerror(status), g->key_len * 8, g->len,
			g->aad_len, g->tag_len);
	else
		fprintf(stderr, " (status %d: %s; null len %u)\n", status,
			cc_strerror(status), g->len);
}

/*
 * Judge one AEAD result. out has len + MC_GUARD bytes, tag (encrypt only)
 * tag_len + MC_GUARD. want is the expected output, NULL for a forgery (the
 * output must then be zero). comp_len < 0 when the path has none.
 */
static void check(struct t *t, const struct gcase *g, const char *path,
		  const char *what, int status, long comp_len,
		  const uint8_t *out, const uint8_t *want, const uint8_t *tag)
{
	const char *why = NULL;
	long off = -1;

	t->checked++;
	if (!want && status != CC_ERR_AUTH_FAILED)
		why = "forgery not rejected with CC_ERR_AUTH_FAILED";
	else if (!want && (off = mc_first_not(out, 0, g->len)) >= 0)
		why = "output not zeroed after auth failure";
	else if (want && status != CC_OK)
		why = "op failed";
	else if (want && (off = mc_first_diff(out, want, g->len)) >= 0)
		why = "output differs from OpenSSL";
	else if (want && comp_len >= 0 && comp_len != g->len)
		why = "completion length differs from payload length";
	else if ((off = mc_first_not(out + g->len, MC_CANARY, MC_GUARD)) >= 0)
		why = "wrote past the end of the output", off += g->len;
	else if (tag && (off = mc_first_diff(tag, g->tag, g->tag_len)) >= 0)
		why = "tag differs from OpenSSL";
	else if (tag && (off = mc_first_not(tag + g->tag_len, MC_CANARY,
					    MC_GUARD)) >= 0)
		why = "wrote more than tag_len tag bytes", off += g->tag_len;
	if (why)
		fail(t, g, path, what, why, status, off);
}

/* ---- Burst path ---- */

struct pend {
	struct gcase *g;
	enum kind kind;
	uint8_t *src, *dst, *aad, *tag; /* arena; aad may be shared */
	int aad_own;
};

static uint8_t *abuf(struct cc_queue *q, size_t n)
{
	return cc_buf_alloc(q, n + MC_GUARD);
}

static void pend_free(struct cc_queue *q, struct pend *p)
{
	if (p->dst && p->dst != p->src)
		cc_buf_free(q, p->dst);
	if (p->src)
		cc_buf_free(q, p->src);
	if (p->tag)
		cc_buf_free(q, p->tag);
	if (p->aad && p->aad_own)
		cc_buf_free(q, p->aad);
	memset(p, 0, sizeof(*p));
}

/* Fill the arena buffers of one op. 0 or -ENOMEM. */
static int pend_fill(struct t *t, struct pend *p, struct cc_op *op,
		     uint8_t *shared_aad, uint64_t user_data)
{
	struct gcase *g = p->g;
	int enc = p->kind <= K_ENC_INPLACE;
	int in_place = p->kind == K_ENC_INPLACE || p->kind == K_DEC_INPLACE ||
		       p->kind == K_BAD_CT;

	p->src = abuf(t->q, g->len);
	p->dst = in_place ? p->src : abuf(t->q, g->len);
	p->tag = abuf(t->q, 16);
	if (p->kind == K_BAD_AAD) {
		p->aad = abuf(t->q, g->aad_len);
		p->aad_own = 1;
	} else {
		p->aad = shared_aad;
	}
	if (!p->src || !p->dst || !p->tag || !p->aad)
		return -ENOMEM;

	memcpy(p->src, enc ? g->pt : g->ct, g->len);
	memset(p->src + g->len, MC_CANARY, MC_GUARD);
	if (!in_place)
		memset(p->dst, MC_CANARY, g->len + MC_GUARD);
	memset(p->tag, MC_CANARY, 16 + MC_GUARD);
	if (!enc)
		memcpy(p->tag, g->tag, g->tag_len);
	if (p->aad_own)
		memcpy(p->aad, g->aad, g->aad_len);

	switch (p->kind) {
	case K_BAD_TAG:
		mc_flip(p->tag, g->flip_tag);
		break;
	case K_BAD_CT:
		mc_flip(p->src, g->flip_ct);
		break;
	case K_BAD_AAD:
		mc_flip(p->aad, g->flip_aad);
		break;
	default:
		break;
	}

	*op = (struct cc_op){
		.user_data = user_data,
		.session = g->session,
		.dir = enc ? CC_ENCRYPT : CC_DECRYPT,
		.src = p->src,
		.dst = p->dst,
		.len = g->len,
		.aad = p->aad,
		.aad_len = g->aad_len,
		.tag = p->tag,
		.iv = g->iv,
		.iv_len = sizeof(g->iv),
	};
	return 0;
}

static void run_group_burst(struct t *t, struct gcase *g, unsigned n)
{
	static struct cc_op ops[GROUP_CASES * K_NR];
	static struct cc_completion comps[GROUP_CASES * K_NR];
	static struct pend pend[GROUP_CASES * K_NR];
	uint8_t *aads[GROUP_CASES] = { 0 };
	unsigned nops = 0, i, k;
	int r = 0;

	for (i = 0; i < n && !r; i++) {
		if (!g[i].has_session)
			continue;
		aads[i] = abuf(t->q, g[i].aad_len);
		if (!aads[i]) {
			r = -ENOMEM;
			break;
		}
		memcpy(aads[i], g[i].aad, g[i].aad_len);
		for (k = 0; k < K_NR; k++) {
			struct pend *p = &pend[nops];

			if ((k == K_BAD_CT && !g[i].len) ||
			    (k == K_BAD_AAD && !g[i].aad_len))
				continue;
			memset(p, 0, sizeof(*p));
			p->g = &g[i];
			p->kind = (enum kind)k;
			r = pend_fill(t, p, &ops[nops], aads[i],
				      (uint64_t)g[i].idx << 8 | k);
			nops++;
			if (r)
				break;
		}
	}
	if (r) {
		fprintf(stderr,
			"FAIL: arena exhausted building a burst of %u ops\n",
			nops);
		t->failed++;
		t->fatal = 1;
		goto out;
	}

	r = fx_run_burst(t->q, ops, nops, comps, BURST_TIMEOUT_MS);
	if (r) {
		fprintf(stderr, "FAIL: burst of %u ops: %s\n", nops,
			cc_strerror(r));
		t->failed++;
		t->fatal = 1;
		goto out;
	}
	for (i = 0; i < nops; i++) {
		struct pend *p = &pend[i];
		int enc = p->kind <= K_ENC_INPLACE;
		int forged = p->kind >= K_BAD_TAG;

		check(t, p->g, "burst", kind_name[p->kind], comps[i].status,
		      comps[i].len, p->dst,
		      forged ? NULL
		      : enc  ? p->g->ct
			     : p->g->pt,
		      enc ? p->tag : NULL);
	}
out:
	for (i = 0; i < nops; i++)
		pend_free(t->q, &pend[i]);
	for (i = 0; i < n; i++)
		if (aads[i])
			cc_buf_free(t->q, aads[i]);
}

/* ---- Synchronous path ---- */

static void run_case_sync(struct t *t, struct gcase *g)
{
	uint8_t *buf = malloc(g->len + MC_GUARD);
	uint8_t tag[16 + MC_GUARD];
	int r;

	if (!buf) {
		t->fatal = 1;
		return;
	}

	/* Encrypt out of place. */
	memset(buf, MC_CANARY, g->len + MC_GUARD);
	memset(tag, MC_CANARY, sizeof(tag));
	r = fx_crypt(t->conn, g->session, CC_ENCRYPT, g->iv, sizeof(g->iv),
		     g->aad, g->aad_len, g->pt, buf, g->len, tag);
	check(t, g, "sync", "encrypt out-of-place", r, -1, buf, g->ct, tag);

	/* Decrypt in place (in == out). */
	memcpy(buf, g->ct, g->len);
	memset(buf + g->len, MC_CANARY, MC_GUARD);
	memcpy(tag, g->tag, g->tag_len);
	r = fx_crypt(t->conn, g->session, CC_DECRYPT, g->iv, sizeof(g->iv),
		     g->aad, g->aad_len, buf, buf, g->len, tag);
	check(t, g, "sync", "decrypt in-place", r, -1, buf, g->pt, NULL);

	/* A forged tag: rejected, and the caller's buffer wiped. */
	memcpy(buf, g->ct, g->len);
	memset(buf + g->len, MC_CANARY, MC_GUARD);
	memcpy(tag, g->tag, g->tag_len);
	mc_flip(tag, g->flip_tag);
	r = fx_crypt(t->conn, g->session, CC_DECRYPT, g->iv, sizeof(g->iv),
		     g->aad, g->aad_len, buf, buf, g->len, tag);
	check(t, g, "sync", "forged tag", r, -1, buf, NULL, NULL);

	free(buf);
}

/* ---- AES-GCM over all cases, for one engine ---- */

static void run_group(struct t *t, struct gcase *g, unsigned n)
{
	unsigned i;
	int r;

	for (i = 0; i < n; i++) {
		struct cc_session_params sp = {
			.alg = CC_ALG_AES_GCM,
			.key = g[i].key,
			.key_len = g[i].key_len,
			.tag_len = g[i].tag_len,
			.engine = t->engine,
		};

		r = cc_session_create(t->conn, &sp, &g[i].session);
		if (r) {
			fail(t, &g[i], "session", "create",
			     "cc_session_create failed", r, -1);
			continue;
		}
		g[i].has_session = 1;
	}

	run_group_burst(t, g, n);
	for (i = 0; i < n && !t->fatal; i++)
		if (g[i].has_session)
			run_case_sync(t, &g[i]);

	for (i = 0; i < n; i++) {
		if (!g[i].has_session)
			continue;
		r = cc_session_destroy(t->conn, g[i].session);
		if (r)
			fail(t, &g[i], "session", "destroy",
			     "cc_session_destroy failed", r, -1);
		g[i].has_session = 0;
	}
}

static size_t case_arena_bytes(const struct gcase *g)
{
	/* Per op: src, dst, tag, each rounded to the 64-byte allocation
	 * unit; plus the shared and the forged AAD. */
	return K_NR * 3 * (crd_align_up(g->len + MC_GUARD, 64) + 64) +
	       2 * crd_align_up(g->aad_len + MC_GUARD, 64);
}

static int run_gcm(struct t *t, uint64_t seed)
{
	static struct gcase g[GROUP_CASES];
	unsigned n_fixed = sizeof(fixed_lens) / sizeof(fixed_lens[0]) * 3;
	unsigned total = n_fixed + RANDOM_CASES, idx = 0, n = 0;
	size_t bytes = 0;
	int r;

	/* Same seed, same cases, whatever the engine. */
	mc_srand(seed);
	while (idx < total && !t->fatal) {
		unsigned len =
			idx < n_fixed ? fixed_lens[idx / 3] : mc_rnd_len();
		unsigned key_len = idx < n_fixed ? key_lens[idx % 3]
						 : key_lens[mc_below(3)];

		/* The last fixed case has the largest payload and, once
		 * for sure, the largest AAD the ABI allows. */
		r = case_make(&g[n], idx, len, key_len,
			      idx == n_fixed - 1 ? CRD_AAD_MAX : -1);
		if (r) {
			fprintf(stderr, "FAIL: case %u: cannot build (%s)\n",
				idx, cc_strerror(r));
			case_free(&g[n]);
			return r;
		}
		bytes += case_arena_bytes(&g[n]);
		n++;
		idx++;
		if (n == GROUP_CASES || bytes >= GROUP_BYTES || idx == total) {
			run_group(t, g, n);
			while (n)
				case_free(&g[--n]);
			bytes = 0;
		}
	}
	while (n)
		case_free(&g[--n]);
	return 0;
}

/* ---- Null algorithm: a copy, in and out of place ---- */

static void null_check(struct t *t, unsigned idx, const char *path,
		       const char *what, int status, long comp_len,
		       const uint8_t *out, const uint8_t *want, unsigned len)
{
	struct gcase g = { .idx = idx, .len = len };
	const char *why = NULL;
	long off = -1;

	t->checked++;
	if (status != CC_OK)
		why = "null op failed";
	else if ((off = mc_first_diff(out, want, len)) >= 0)
		why = "null output differs from input";
	else if (comp_len >= 0 && comp_len != len)
		why = "completion length differs from payload length";
	else if ((off = mc_first_not(out + len, MC_CANARY, MC_GUARD)) >= 0)
		why = "wrote past the end of the output", off += len;
	if (why)
		fail(t, &g, path, what, why, status, off);
}

static void run_null_one(struct t *t, uint32_t sid, unsigned idx, unsigned len)
{
	static const char *const what[3] = {
		"copy out-of-place",
		"copy in-place",
		"decrypt out-of-place",
	};
	struct cc_op ops[3];
	struct cc_completion comps[3];
	uint8_t *src[3] = { 0 }, *dst[3] = { 0 };
	uint8_t *ref = malloc(len + MC_GUARD), *out = malloc(len + MC_GUARD);
	unsigned i;
	int r;

	if (!ref || !out)
		goto nomem;
	mc_rnd_bytes(ref, len);

	for (i = 0; i < 3; i++) {
		src[i] = abuf(t->q, len);
		dst[i] = i == 1 ? src[i] : abuf(t->q, len);
		if (!src[i] || !dst[i])
			goto nomem;
		memcpy(src[i], ref, len);
		memset(src[i] + len, MC_CANARY, MC_GUARD);
		if (i != 1)
			memset(dst[i], MC_CANARY, len + MC_GUARD);
		/* No key, no IV, no AAD, no tag. */
		ops[i] = (struct cc_op){
			.user_data = 0x6e756c6cull << 32 | idx << 2 | i,
			.session = sid,
			.dir = i == 2 ? CC_DECRYPT : CC_ENCRYPT,
			.src = src[i],
			.dst = dst[i],
			.len = len,
		};
	}
	r = fx_run_burst(t->q, ops, 3, comps, BURST_TIMEOUT_MS);
	if (r) {
		fprintf(stderr, "FAIL: null burst: %s\n", cc_strerror(r));
		t->failed++;
		t->fatal = 1;
		goto out;
	}
	for (i = 0; i < 3; i++)
		null_check(t, idx, "burst", what[i], comps[i].status,
			   comps[i].len, dst[i], ref, len);

	memset(out, MC_CANARY, len + MC_GUARD);
	r = fx_crypt(t->conn, sid, CC_ENCRYPT, NULL, 0, NULL, 0, ref, out, len,
		     NULL);
	null_check(t, idx, "sync", "copy out-of-place", r, -1, out, ref, len);
	goto out;

nomem:
	fprintf(stderr, "FAIL: null case %u: out of memory\n", idx);
	t->failed++;
	t->fatal = 1;
out:
	for (i = 0; i < 3; i++) {
		if (dst[i] && dst[i] != src[i])
			cc_buf_free(t->q, dst[i]);
		if (src[i])
			cc_buf_free(t->q, src[i]);
	}
	free(ref);
	free(out);
}

static void run_null(struct t *t, uint64_t seed)
{
	struct cc_session_params sp = {
		.alg = CC_ALG_NULL,
		.engine = t->engine,
	};
	unsigned n_fixed = sizeof(fixed_lens) / sizeof(fixed_lens[0]), i;
	uint32_t sid;
	int r;

	mc_srand(seed ^ 0x6e756c6cull);
	r = cc_session_create(t->conn, &sp, &sid);
	if (r) {
		fprintf(stderr, "FAIL: null session: %s\n", cc_strerror(r));
		t->failed++;
		return;
	}
	for (i = 0; i < n_fixed + NULL_RANDOM_CASES && !t->fatal; i++)
		run_null_one(t, sid, i,
			     i < n_fixed ? fixed_lens[i] : mc_rnd_len());
	r = cc_session_destroy(t->conn, sid);
	if (r) {
		fprintf(stderr, "FAIL: null session destroy: %s\n",
			cc_strerror(r));
		t->failed++;
	}
}

int main(void)
{
	struct fx_daemon_params dp = { .workers = 2 };
	struct cc_queue_params qp = {
		.sq_entries = QUEUE_ENTRIES,
		.arena_size = ARENA_SIZE,
	};
	char engines[MAX_ENGINES][FX_ENGINE_NAME_MAX];
	uint64_t seed = mc_seed_from_env(SEED_DEFAULT), t0;
	struct t t = { 0 };
	struct fx_daemon d;
	unsigned n_eng, e;
	int r, fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed 0x%016llx (set TEST_SEED to reproduce)\n",
	       (unsigned long long)seed);

	if (fx_setup(&d, &dp, "test_diff_openssl", &qp, &t.conn, &t.q))
		return FX_EXIT_FAIL;

	r = fx_engines_for(t.conn, CC_ALG_AES_GCM, engines, MAX_ENGINES);
	if (r < 0)
		fails++;
	n_eng = r > 0 ? (unsigned)r : 0;
	for (e = 0; e < (n_eng ? n_eng : 1) && !t.fatal; e++) {
		unsigned long c0 = t.checked, f0 = t.failed;

		t.engine = n_eng ? engines[e] : NULL;
		t0 = fx_now_ms();
		if (run_gcm(&t, seed))
			fails++;
		printf("aes-gcm [%s]: %lu checks, %lu failed (%llu ms)\n",
		       t.engine ? t.engine : "default", t.checked - c0,
		       t.failed - f0, (unsigned long long)(fx_now_ms() - t0));
	}

	if (!t.fatal) {
		unsigned long c0 = t.checked, f0 = t.failed;

		/* The null algorithm on the daemon's choice of engine. */
		t.engine = NULL;
		run_null(&t, seed);
		printf("null: %lu checks, %lu failed\n", t.checked - c0,
		       t.failed - f0);
	}

	if (fx_teardown(&d, t.conn, t.q))
		fails++;
	if (t.failed || !t.checked)
		fails++;
	printf("TOTAL: %lu checks, %lu failed%s\n%s\n", t.checked, t.failed,
	       t.shown > SHOW_FAILURES ? " (only the first shown)" : "",
	       fails ? "FAILED" : "PASSED");
	if (fails)
		printf("replay with TEST_SEED=0x%016llx\n",
		       (unsigned long long)seed);
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
