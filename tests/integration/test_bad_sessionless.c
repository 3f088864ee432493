// SPDX-License-Identifier: MIT
/*
 * Session-less parameters: an unknown algorithm, a bad key length, a
 * non-zero reserved word, a bad tag length: a per-op error; session and
 * session-less both set: refused. Each outcome is printed.
 *
 * Every refused op sits between two good ones in the same queue, which
 * must complete with the right answer: a failure never wedges a queue.
 *
 * Exit: 0 all passed, 1 any failure.
 */
#include "bad_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void run_bad_sessionless(struct t *t)
{
	const char *ctx = "session-less";
	struct mc_key k;
	struct gop b;
	struct cc_op op;
	unsigned i;

	key_for(&k, mc_spec_of(CC_ALG_AES_CBC), 16);

#define BAD_SL(what_, acc_, ...)                                               \
	do {                                                                   \
		if (t->fatal || gop_make(t, &b, &k, 0, &op, 0))                \
			break;                                                 \
		__VA_ARGS__;                                                   \
		sandwich(t, ctx, what_, acc_, &k, 0, &op, NULL, 1);            \
		gop_free(t, &b);                                               \
	} while (0)

	BAD_SL("algorithm 0", ACC_OP_ERR, b.sl->alg = 0);
	BAD_SL("algorithm 12 (past the last)", ACC_OP_ERR, b.sl->alg = 12);
	BAD_SL("algorithm 200", ACC_OP_ERR, b.sl->alg = 200);
	BAD_SL("aes-lrw (not served)", ACC_OP_ERR, b.sl->alg = CC_ALG_AES_LRW);
	BAD_SL("aes-cbc with a 17-byte key", ACC_OP_ERR, b.sl->key_len = 17);
	BAD_SL("aes-cbc with a 0-byte key", ACC_OP_ERR, b.sl->key_len = 0);
	BAD_SL("aes-cbc with a 65-byte key (past key[])", ACC_OP_ERR,
	       b.sl->key_len = 65);
	BAD_SL("aes-cbc with a 255-byte key", ACC_OP_ERR, b.sl->key_len = 255);
	BAD_SL("reserved = 1", ACC_OP_ERR, b.sl->reserved = 1);
	BAD_SL("reserved = 0x80000000", ACC_OP_ERR,
	       b.sl->reserved = 0x80000000u);
	BAD_SL("aes-cbc with tag_len 16", ACC_OP_ERR, b.sl->tag_len = 16);
	BAD_SL("aes-xts with a 48-byte key", ACC_OP_ERR, {
		b.sl->alg = CC_ALG_AES_XTS;
		b.sl->key_len = 48;
	});
	BAD_SL("aes-xts with equal key halves, encrypting", ACC_OP_ERR, {
		b.sl->alg = CC_ALG_AES_XTS;
		b.sl->key_len = 32;
		memcpy(b.sl->key + 16, b.sl->key, 16);
	});
	BAD_SL("aes-gcm with tag_len 5", ACC_OP_ERR, {
		b.sl->alg = CC_ALG_AES_GCM;
		b.sl->tag_len = 5;
		op.iv_len = 12;
	});
	BAD_SL("aes-gcm with tag_len 17", ACC_OP_ERR, {
		b.sl->alg = CC_ALG_AES_GCM;
		b.sl->tag_len = 17;
		op.iv_len = 12;
	});
	for (i = 0; i < 6 * 4; i++) {
		static const enum cc_alg algs[6] = {
			CC_ALG_AES_CBC_HMAC_SHA1,   CC_ALG_AES_CBC_HMAC_SHA256,
			CC_ALG_AES_CBC_HMAC_SHA384, CC_ALG_AES_CBC_HMAC_SHA512,
			CC_ALG_AES_CTR_HMAC_SHA1,   CC_ALG_AES_CTR_HMAC_SHA256,
		};
		/* HMAC keys outside 1..64, then an ICV not the row's. */
		static const uint8_t alens[3] = { 0, 65, 255 };
		const struct mc_spec *s = mc_spec_of(algs[i / 4]);
		unsigned tl = s->tag_def == 16 ? 12 : 16;
		char what[64];

		if (i % 4 < 3)
			snprintf(what, sizeof(what), "%s, %u-byte HMAC key",
				 s->name, alens[i % 4]);
		else
			snprintf(what, sizeof(what), "%s with tag_len %u",
				 s->name, tl);
		BAD_SL(what, ACC_OP_ERR, {
			b.sl->alg = (uint8_t)s->alg;
			b.sl->auth_key_len = i % 4 < 3 ? alens[i % 4] : 20;
			b.sl->tag_len = i % 4 < 3 ? 0 : (uint8_t)tl;
		});
	}
	BAD_SL("a made-up session id as well", ACC_OP_ERR_ENQ,
	       op.session = 0x7ffffff0);
	if (!t->fatal && !gop_make(t, &b, &k, 0, &op, 0)) {
		uint32_t sid;
		int r = mc_session(t->conn, &k, NULL, &sid);

		expect(t, r == 0, ctx, "session", r);
		if (r == 0) {
			op.session = sid;
			sandwich(t, ctx, "a real session id as well",
				 ACC_OP_ERR_ENQ, &k, 0, &op, NULL, 1);
			cc_session_destroy(t->conn, sid);
		}
		gop_free(t, &b);
	}
	BAD_SL("sessionless pointer outside the arena", ACC_OP_ERR_ENQ, {
		static struct cc_sessionless outside;

		mc_sessionless_fill(&outside, &k);
		op.sessionless = &outside;
	});
#undef BAD_SL
}

int main(void)
{
	struct t t;
	struct fx_daemon d;
	if (bad_setup(&t, &d, "test_bad_sessionless"))
		return FX_EXIT_FAIL;
	if (!t.fatal)
		run_bad_sessionless(&t);
	return bad_finish(&t, &d);
}
