// SPDX-License-Identifier: MIT
/*
 * Published vectors for the authentication-only algorithms, through a
 * real daemon, on every engine cc_capabilities_get() lists for each:
 *
 * - HMAC/rfc-2202-sha1.txt, HMAC/rfc-4231-sha{224,256,384,512}.txt
 *   (keys up to 131 bytes: longer than a block, hashed first) as
 *   hmac-sha*;
 * - hashes/SHA1/SHA1{Short,Long}Msg.rsp, hashes/SHA2/SHA{224,256,384,
 *   512}{Short,Long}Msg.rsp as sha*; records whose Len is not a multiple
 *   of 8 (bit-oriented) cannot be expressed in bytes and are counted n/a;
 * - CMAC/nist-800-38b-aes{128,192,256}.txt as aes-cmac;
 * - the AES-XCBC-MAC test cases of RFC 3566 section 4.6 (below) as
 *   aes-xcbc-mac.
 *
 * Every vector runs with the full tag and truncated to a shorter one
 * (the default, as -96, or 4 + something): generate through cc_crypt()
 * and compare, verify, verify with one flipped tag bit (must be
 * CC_ERR_AUTH_FAILED); then the same three as one burst, with the message
 * flat or as a scatter-gather list and the verification session-less
 * (keys of at most 64 bytes). The message must never change and nothing
 * but tag_len tag bytes may be written.
 *
 * Exit: 0 all passed, 1 any mismatch, 77 vectors not installed.
 */
#include "fixture.h"
#include "mac_vectors.h"
#include "modes_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VEC_DIR_DEFAULT "/usr/lib/python3/dist-packages/cryptography_vectors"
#define QUEUE_ENTRIES 64
#define BURST_TIMEOUT_MS 20000
#define SHOW_FAILURES 12
#define TAG_BUF (MAC_MD_MAX + MC_GUARD)
#define MAX_ROWS 16 /* >= mc_n_mac_specs */

struct tally {
	enum cc_alg alg;
	char engine[FX_ENGINE_NAME_MAX];
	unsigned long vectors, na, not_offered, run, passed, failed;
};

struct ctx {
	struct cc_conn *conn;
	struct cc_queue *q;
	const char *engine;
	struct tally *t;
	const char *file;
	unsigned shown;
};

/* [row of mc_mac_specs][engine, in mc_engines_for() order]; alg 0 while
 * unused. */
static struct tally tallies[MAX_ROWS][MC_MAX_ENGINES];
static int fails;

/* One check of one vector: counted, and shown when it failed. */
static void verdict(struct ctx *c, const struct mac_vec *v, unsigned tl,
		    const char *path, const char *why, int status)
{
	c->t->run++;
	if (!why) {
		c->t->passed++;
		return;
	}
	c->t->failed++;
	if (c->shown++ >= SHOW_FAILURES)
		return;
	fprintf(stderr,
		"FAIL %s:%u COUNT=%ld %s [%s] tag_len=%u %s: %s (status %d: "
		"%s)\n",
		c->file, v->line, v->count, cc_alg_name(c->t->alg), c->engine,
		tl, path, why, status, cc_strerror(status));
	mc_print_hex(stderr, "msg", v->msg, v->msg_len);
	mc_print_hex(stderr, "want", v->md, tl);
}

/* What a generation must have left in tag (TAG_BUF bytes). */
static const char *tag_check(const uint8_t *tag, const struct mac_vec *v,
			     unsigned tl)
{
	if (memcmp(tag, v->md, tl))
		return "tag mismatch";
	if (mc_first_not(tag + tl, MC_CANARY, TAG_BUF - tl) >= 0)
		return "wrote more than tag_len tag bytes";
	return NULL;
}

/* Expected status of generate, verify, forged. */
static const int want_st[3] = { CC_OK, CC_OK, CC_ERR_AUTH_FAILED };
static const char *const what[3] = { "generate", "verify", "forged" };

/* Fill tag for check i (0 generate, 1 verify, 2 forged). */
static void tag_prep(uint8_t *tag, const struct mac_vec *v, unsigned tl, int i)
{
	memset(tag, MC_CANARY, TAG_BUF);
	if (i)
		memcpy(tag, v->md, tl);
	if (i == 2)
		mc_flip(tag, (v->line * 7 + tl) % (8 * tl));
}

static void run_sync(struct ctx *c, const struct mac_vec *v, uint32_t sid,
		     unsigned tl)
{
	static uint8_t msg[MAC_MSG_MAX];
	uint8_t tag[TAG_BUF], out[64];

	for (int i = 0; i < 3; i++) {
		const char *why = NULL;
		int r;

		memcpy(msg, v->msg, v->msg_len);
		tag_prep(tag, v, tl, i);
		memset(out, MC_CANARY, sizeof(out));
		/* Nothing is written: out may be NULL or not. */
		r = fx_crypt(c->conn, sid, i ? CC_DECRYPT : CC_ENCRYPT, NULL, 0,
			     NULL, 0, v->msg_len ? msg : NULL,
			     v->line & 1 ? out : NULL, v->msg_len, tag);
		if (r != want_st[i])
			why = i == 2 ? "forgery not rejected" : "op failed";
		else if (!i)
			why = tag_check(tag, v, tl);
		if (!why && memcmp(msg, v->msg, v->msg_len))
			why = "the message changed";
		if (!why && mc_first_not(out, MC_CANARY, sizeof(out)) >= 0)
			why = "wrote to the output buffer";
		verdict(c, v, tl, what[i], why, r);
	}
}

struct slot {
	struct mc_layout src;
	uint8_t *tag;
	struct cc_sessionless *sl;
};

static void run_burst(struct ctx *c, const struct mac_vec *v, uint32_t sid,
		      unsigned tl, unsigned idx)
{
	struct slot s[3] = { 0 };
	struct cc_op ops[3];
	struct cc_completion comps[3];
	int r = 0;

	for (int i = 0; i < 3 && !r; i++) {
		unsigned nseg = (idx + i) % 3 && v->msg_len >= 2
					? 2 + (idx + i) % 5
					: 0;
		if (nseg > v->msg_len)
			nseg = v->msg_len;
		r = mc_layout_alloc(c->q, &s[i].src, v->msg_len, nseg, 0);
		s[i].tag = r ? NULL : cc_buf_alloc(c->q, TAG_BUF);
		if (!s[i].tag) {
			r = -ENOMEM;
			break;
		}
		mc_layout_write(&s[i].src, v->msg);
		tag_prep(s[i].tag, v, tl, i);
		ops[i] = (struct cc_op){
			.user_data = 0x6d6163ull << 8 | (unsigned)i,
			.session = sid,
			.dir = i ? CC_DECRYPT : CC_ENCRYPT,
			.len = v->msg_len,
			.tag = s[i].tag,
		};
		mc_layout_to_op(&s[i].src, &ops[i], 0);
		if (i == 1 && v->key_len <= sizeof(s[i].sl->key)) {
			struct mc_key k = { .alg = c->t->alg,
					    .key_len = v->key_len,
					    .tag_len = tl };

			memcpy(k.key, v->key, v->key_len);
			s[i].sl = cc_buf_alloc(c->q, sizeof(*s[i].sl));
			if (!s[i].sl) {
				r = -ENOMEM;
				break;
			}
			mc_sessionless_fill(s[i].sl, &k);
			explicit_bzero(&k, sizeof(k));
			ops[i].session = 0;
			ops[i].sessionless = s[i].sl;
		}
	}
	if (!r)
		r = fx_run_burst(c->q, ops, 3, comps, BURST_TIMEOUT_MS);
	for (int i = 0; i < 3; i++) {
		static uint8_t msg[MAC_MSG_MAX];
		const char *why = NULL;
		int st = r ? r : comps[i].status;

		if (r)
			why = "burst failed";
		else if (st != want_st[i])
			why = i == 2 ? "forgery not rejected" : "op failed";
		else if (!i)
			why = tag_check(s[i].tag, v, tl);
		if (!why) {
			mc_layout_read(&s[i].src, msg);
			if (memcmp(msg, v->msg, v->msg_len))
				why = "the message changed";
			else if (mc_layout_canary(&s[i].src) >= 0)
				why = "wrote outside the message segments";
		}
		verdict(c, v, tl,
			i == 1 && s[i].sl ? "burst verify session-less"
			: s[i].src.nseg	  ? "burst sgl"
					  : "burst flat",
			why, st);
		mc_layout_free(c->q, &s[i].src);
		if (s[i].tag)
			cc_buf_free(c->q, s[i].tag);
		if (s[i].sl)
			cc_buf_free(c->q, s[i].sl);
	}
}

/* A truncated tag length for a vector: the algorithm's default when it
 * is shorter than the full MAC (XCBC-MAC-96), else 4 + some. */
static unsigned short_tag(enum cc_alg alg, const struct mac_vec *v)
{
	unsigned def = cc_alg_tag_len(alg);

	if (def < v->md_len)
		return def;
	return 4 + (v->line + (unsigned)v->count) % (v->md_len - 4);
}

static void run_vec(struct ctx *c, const struct mac_vec *v, unsigned idx)
{
	unsigned tls[2] = { v->md_len, short_tag(c->t->alg, v) };

	for (int j = 0; j < 2; j++) {
		struct cc_session_params sp = {
			.alg = c->t->alg,
			.key = v->key_len ? v->key : NULL,
			.key_len = v->key_len,
			.tag_len = tls[j],
			.engine = c->engine,
		};
		uint32_t sid;
		int r = cc_session_create(c->conn, &sp, &sid);

		/* Outside the engine's rows (aesni: no CMAC-192, XCBC tags
		 * up to 12): must be refused, and is not run. */
		if (!mc_engine_takes(c->conn, c->t->alg, c->engine, v->key_len,
				     tls[j])) {
			c->t->not_offered++;
			if (r == -EINVAL)
				continue;
			if (!r)
				cc_session_destroy(c->conn, sid);
			verdict(c, v, tls[j], "session",
				"not refused with -EINVAL outside the rows", r);
			continue;
		}
		if (r) {
			verdict(c, v, tls[j], "session",
				"cc_session_create failed", r);
			continue;
		}
		run_sync(c, v, sid, tls[j]);
		run_burst(c, v, sid, tls[j], idx);
		r = cc_session_destroy(c->conn, sid);
		if (r) {
			fprintf(stderr, "FAIL: cc_session_destroy: %s\n",
				cc_strerror(r));
			fails++;
		}
	}
}

/* RFC 3566 section 4.6: key 000102..0f; the message is bytes 0, 1, 2..
 * of the given length (test case 7: 1000 zero bytes); the full 128-bit
 * AES-XCBC-MAC (its first 12 bytes are AES-XCBC-MAC-96). */
static const struct {
	unsigned len;
	int zeros;
	const char *mac;
} rfc3566[] = {
	{ 0, 0, "75f0251d528ac01c4573dfd584d79f29" },
	{ 3, 0, "5b376580ae2f19afe7219ceef172756f" },
	{ 16, 0, "d2a246fa349b68a79998a4394ff7a263" },
	{ 20, 0, "47f51b4564966215b8985c63055ed308" },
	{ 32, 0, "f54f0ec8d2b9f3d36807734bd5283fd4" },
	{ 34, 0, "becbb3bccdb518a30677d5481fb6b4d8" },
	{ 1000, 1, "f0dafee895db30253761103b5d84528f" },
};

/* Load vector i of a source: 1, 0 at the end, -EINVAL. */
static int next_vec(struct mac_reader *rd, unsigned i, struct mac_vec *v)
{
	if (rd)
		return mac_next(rd, v);
	if (i >= sizeof(rfc3566) / sizeof(rfc3566[0]))
		return 0;
	memset(v, 0, sizeof(*v));
	v->line = i + 1;
	v->count = i + 1;
	v->bits = -1;
	v->key_len = 16;
	for (unsigned b = 0; b < 16; b++)
		v->key[b] = (uint8_t)b;
	v->msg_len = rfc3566[i].len;
	for (unsigned b = 0; b < v->msg_len; b++)
		v->msg[b] = rfc3566[i].zeros ? 0 : (uint8_t)b;
	v->md_len = 16;
	return mc_unhex(rfc3566[i].mac, v->md, sizeof(v->md)) == 16 ? 1
								    : -EINVAL;
}

static void run_file(struct cc_conn *conn, struct cc_queue *q, const char *dir,
		     const char *path, enum cc_alg alg)
{
	static struct mac_vec v;
	char engines[MC_MAX_ENGINES][FX_ENGINE_NAME_MAX], full[4096];
	int n_eng = mc_engines_for(conn, alg, engines, MC_MAX_ENGINES);

	if (n_eng <= 0) {
		fprintf(stderr, "FAIL %s: no engine is available for %s\n",
			path, cc_alg_name(alg));
		fails++;
		return;
	}
	snprintf(full, sizeof(full), "%s/%s", dir, path ? path : "");
	for (int e = 0; e < n_eng; e++) {
		struct mac_reader rd;
		struct ctx c = {
			.conn = conn,
			.q = q,
			.engine = engines[e],
			.t = &tallies[mc_spec_of(alg) - mc_mac_specs][e],
			.file = path ? path : "RFC 3566 4.6",
		};
		unsigned long f0 = c.t->failed, n = 0, na = 0;

		c.t->alg = alg;
		snprintf(c.t->engine, sizeof(c.t->engine), "%.*s",
			 FX_ENGINE_NAME_MAX - 1, engines[e]);
		int r;

		if (path && (r = mac_open(&rd, full, path))) {
			fprintf(stderr, "FAIL %s: %s\n", full, strerror(-r));
			fails++;
			return;
		}
		for (unsigned i = 0;
		     (r = next_vec(path ? &rd : NULL, i, &v)) > 0; i++) {
			if (v.bits >= 0 && v.bits % 8) {
				na++;
				continue;
			}
			if (v.md_len < 4 || v.md_len > MAC_MD_MAX) {
				r = -EINVAL;
				break;
			}
			run_vec(&c, &v, i);
			n++;
		}
		if (path)
			mac_close(&rd);
		if (r < 0 || !n)
			fails++;
		c.t->vectors += n;
		c.t->na += na;
		printf("%-24s %-14s [%s]: %4lu vectors, %lu n/a, %lu failed\n",
		       c.file, cc_alg_name(alg), engines[e], n, na,
		       c.t->failed - f0);
	}
}

int main(void)
{
	static const struct {
		const char *path; /* NULL: the RFC 3566 table */
		enum cc_alg alg;
	} files[] = {
		{ "HMAC/rfc-2202-sha1.txt", CC_ALG_HMAC_SHA1 },
		{ "HMAC/rfc-4231-sha224.txt", CC_ALG_HMAC_SHA224 },
		{ "HMAC/rfc-4231-sha256.txt", CC_ALG_HMAC_SHA256 },
		{ "HMAC/rfc-4231-sha384.txt", CC_ALG_HMAC_SHA384 },
		{ "HMAC/rfc-4231-sha512.txt", CC_ALG_HMAC_SHA512 },
		{ "hashes/SHA1/SHA1ShortMsg.rsp", CC_ALG_SHA1 },
		{ "hashes/SHA1/SHA1LongMsg.rsp", CC_ALG_SHA1 },
		{ "hashes/SHA2/SHA224ShortMsg.rsp", CC_ALG_SHA224 },
		{ "hashes/SHA2/SHA224LongMsg.rsp", CC_ALG_SHA224 },
		{ "hashes/SHA2/SHA256ShortMsg.rsp", CC_ALG_SHA256 },
		{ "hashes/SHA2/SHA256LongMsg.rsp", CC_ALG_SHA256 },
		{ "hashes/SHA2/SHA384ShortMsg.rsp", CC_ALG_SHA384 },
		{ "hashes/SHA2/SHA384LongMsg.rsp", CC_ALG_SHA384 },
		{ "hashes/SHA2/SHA512ShortMsg.rsp", CC_ALG_SHA512 },
		{ "hashes/SHA2/SHA512LongMsg.rsp", CC_ALG_SHA512 },
		{ "CMAC/nist-800-38b-aes128.txt", CC_ALG_AES_CMAC },
		{ "CMAC/nist-800-38b-aes192.txt", CC_ALG_AES_CMAC },
		{ "CMAC/nist-800-38b-aes256.txt", CC_ALG_AES_CMAC },
		{ NULL, CC_ALG_AES_XCBC_MAC },
	};
	const char *dir = getenv("NIST_VEC_DIR");
	/* RFC 2202/4231 have 4-byte keys: no key-length policy here. */
	static const char *const args[] = { "--set", "keys.min_bits=0", NULL };
	struct fx_daemon_params dp = { .workers = 2, .args = args };
	struct cc_queue_params qp = { .sq_entries = QUEUE_ENTRIES };
	struct fx_daemon d;
	struct cc_conn *conn;
	struct cc_queue *q;
	char probe[4096];
	unsigned rows = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!dir || !*dir)
		dir = VEC_DIR_DEFAULT;
	snprintf(probe, sizeof(probe), "%s/HMAC", dir);
	if (access(probe, R_OK | X_OK) < 0) {
		printf("SKIP: no MAC vectors at %s (install "
		       "python3-cryptography-vectors)\n",
		       dir);
		return FX_EXIT_SKIP;
	}
	if (mc_n_mac_specs > MAX_ROWS) {
		fprintf(stderr, "FAIL: MAX_ROWS < mc_n_mac_specs\n");
		return FX_EXIT_FAIL;
	}
	if (fx_setup(&d, &dp, "test_nist_mac", &qp, &conn, &q))
		return FX_EXIT_FAIL;
	for (unsigned f = 0; f < sizeof(files) / sizeof(files[0]); f++)
		run_file(conn, q, dir, files[f].path, files[f].alg);

	printf("\n%-14s %-8s %7s %5s %7s %9s %9s %7s\n", "algorithm", "engine",
	       "vectors", "n/a", "refused", "checks", "passed", "failed");
	for (unsigned i = 0; i < MAX_ROWS * MC_MAX_ENGINES; i++) {
		const struct tally *t = &tallies[0][0] + i;

		if (!t->alg)
			continue;
		printf("%-14s %-8s %7lu %5lu %7lu %9lu %9lu %7lu\n",
		       cc_alg_name(t->alg), t->engine, t->vectors, t->na,
		       t->not_offered, t->run, t->passed, t->failed);
		if (t->failed || !t->passed)
			fails++;
		rows++;
	}
	/* Every row of the table, each on one engine at least. */
	for (unsigned r = 0; r < mc_n_mac_specs; r++)
		if (!tallies[r][0].alg)
			fails++;
	if (!rows)
		fails++;
	if (fx_teardown(&d, conn, q))
		fails++;
	printf("%s\n", fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
