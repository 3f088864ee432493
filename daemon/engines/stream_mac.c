/* SPDX-License-Identifier: MIT */
/*
 * Stream pieces of HMAC-SHA-n and SHA-n for any engine (the aesni and
 * openssl engines' sessions), and of AES-CMAC on the aesni engine's
 * (stream.h). A piece writes nothing; LAST writes the tag (encrypt) or
 * checks it in constant time (decrypt).
 *
 * The running state must live in the daemon's locked stream state, so
 * the hashes are OpenSSL's low-level SHA contexts, plain structs (the
 * EVP contexts allocate on OpenSSL's heap); ipsec-mb's hashes cannot be
 * resumed. HMAC (RFC 2104): FIRST sets up the inner context after the
 * block K ^ ipad and the outer one after K ^ opad, both in the state, from
 * the key the session keeps (hashed when longer than a block); LAST ends
 * with H((K ^ opad) || inner digest). Deriving them per stream, not per
 * session, leaves session set-up (which session-less one-shot ops pay
 * per op) as it was.
 *
 * CMAC (RFC 4493) is a CBC-MAC with the session's ipsec-mb key schedule
 * and subkeys: whole blocks run as CBC encryption jobs from the running
 * block into a scratch buffer whose last block is the new running block;
 * the message's last block (possibly a full one) is held back until LAST,
 * which XORs it with K1, or pads it and XORs it with K2.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
/* before intel-ipsec-mb.h, whose compatibility macros name SHA1 & co */
#include <openssl/sha.h>

#include "aesni.h"
#include "auth.h"
#include "stream.h"
#include "session.h"

#include <string.h>

#include <intel-ipsec-mb.h>

#include <cryptod/ring_abi.h>

union sm_hash {
	SHA_CTX s1;
	SHA256_CTX s256; /* SHA-224 too */
	SHA512_CTX s512; /* SHA-384 too */
};

struct sm_state {
	union sm_hash h; /* SHA-n; HMAC: the inner hash */
	union {
		union sm_hash outer; /* HMAC: after K ^ opad */
		struct {
			uint8_t x[16];	  /* the CBC-MAC of the blocks so far */
			uint8_t last[16]; /* the block held back */
			uint8_t last_len;
		} cmac;
	};
};
_Static_assert(sizeof(struct sm_state) <= STREAM_STATE_SIZE,
	       "MAC stream state fits");

/* The most CBC-MAC bytes one job runs: the scratch its output goes to. */
enum { SM_CBC_CHUNK = 4096 };

/* ---- SHA-n by auth_sha_idx(): 0 SHA-1 .. 4 SHA-512 ---- */

static void sm_init(int idx, union sm_hash *h)
{
	switch (idx) {
	case 0:
		SHA1_Init(&h->s1);
		break;
	case 1:
		SHA224_Init(&h->s256);
		break;
	case 2:
		SHA256_Init(&h->s256);
		break;
	case 3:
		SHA384_Init(&h->s512);
		break;
	default:
		SHA512_Init(&h->s512);
		break;
	}
}

static void sm_update(int idx, union sm_hash *h, const void *p, size_t n)
{
	switch (idx) {
	case 0:
		SHA1_Update(&h->s1, p, n);
		break;
	case 1:
	case 2:
		SHA256_Update(&h->s256, p, n);
		break;
	default:
		SHA512_Update(&h->s512, p, n);
		break;
	}
}

/* The digest (its size is the context's) into md. */
static void sm_final(int idx, union sm_hash *h, uint8_t *md)
{
	switch (idx) {
	case 0:
		SHA1_Final(md, &h->s1);
		break;
	case 1:
	case 2:
		SHA256_Final(md, &h->s256);
		break;
	default:
		SHA512_Final(md, &h->s512);
		break;
	}
}

/* HMAC's two contexts into st from the session's key (RFC 2104: K
 * zero-padded to the block; the engine's session set-up hashed a longer
 * one). */
static void sm_hmac_start(const uint8_t *key, unsigned key_len, unsigned alg,
			  struct sm_state *st)
{
	int idx = auth_sha_idx(alg);
	unsigned bl = auth_block_len(alg);
	uint8_t pad[128];

	for (int j = 0; j < 2; j++) {
		union sm_hash *h = j ? &st->outer : &st->h;
		for (unsigned i = 0; i < bl; i++)
			pad[i] = (i < key_len ? key[i] : 0) ^ (j ? 0x5c : 0x36);
		sm_init(idx, h);
		sm_update(idx, h, pad, bl);
	}
	explicit_bzero(pad, sizeof(pad));
	/* The compressions' message schedules (the padded key, expanded)
	 * stay in their dead frames. */
	engine_burn_stack();
}

/* ---- CMAC ---- */

/*
 * x = the CBC-MAC of n bytes (a whole number of blocks) at p, from x:
 * the last block of their CBC encryption with x as IV. The ciphertext
 * goes through a scratch buffer, wiped after (its blocks are CBC-MAC
 * values). 1 when done.
 */
static int sm_cbc_mac(IMB_MGR *m, const struct aesni_auth_key *k,
		      unsigned key_len, uint8_t x[16], const uint8_t *p,
		      size_t n)
{
	DECLARE_ALIGNED(uint8_t buf[SM_CBC_CHUNK], 16);
	size_t used = 0;
	int ok = 1;

	while (n && ok) {
		uint32_t c = n < SM_CBC_CHUNK ? (uint32_t)n : SM_CBC_CHUNK;
		/* dec keys: unused when encrypting */
		ok = !aesni_job_run(m, IMB_CIPHER_CBC, 1, k->enc, k->enc,
				    key_len, p, buf, c, x);
		memcpy(x, buf + c - 16, 16);
		if (c > used)
			used = c;
		p += c;
		n -= c;
	}
	explicit_bzero(buf, used);
	return ok;
}

/* Take n bytes: every block but the message's last (which may be a full
 * one) into the CBC-MAC; that last block stays in st->cmac.last. */
static int sm_cmac_update(IMB_MGR *m, const struct session *s,
			  struct sm_state *st, const uint8_t *p, size_t n)
{
	const struct aesni_auth_key *k = (const struct aesni_auth_key *)s->key;

	for (;;) {
		size_t room = 16u - st->cmac.last_len, c = room < n ? room : n;
		memcpy(st->cmac.last + st->cmac.last_len, p, c);
		st->cmac.last_len += (uint8_t)c;
		p += c;
		n -= c;
		if (!n)
			return 1;
		/* st->cmac.last is full and more follows: not the last block */
		if (!sm_cbc_mac(m, k, s->key_len, st->cmac.x, st->cmac.last,
				16))
			return 0;
		st->cmac.last_len = 0;
		size_t bulk = n > 16 ? (n - 1) / 16 * 16 : 0;
		if (bulk && !sm_cbc_mac(m, k, s->key_len, st->cmac.x, p, bulk))
			return 0;
		p += bulk;
		n -= bulk;
	}
}

/* The MAC into st->cmac.x. */
static int sm_cmac_final(IMB_MGR *m, const struct session *s,
			 struct sm_state *st)
{
	const struct aesni_auth_key *k = (const struct aesni_auth_key *)s->key;
	uint8_t blk[16];

	if (st->cmac.last_len == 16) {
		for (int i = 0; i < 16; i++)
			blk[i] = st->cmac.last[i] ^ k->sk1[i];
	} else {
		memset(blk, 0, sizeof(blk));
		memcpy(blk, st->cmac.last, st->cmac.last_len);
		blk[st->cmac.last_len] = 0x80;
		for (int i = 0; i < 16; i++)
			blk[i] ^= k->sk2[i];
	}
	int ok = sm_cbc_mac(m, k, s->key_len, st->cmac.x, blk, 16);
	explicit_bzero(blk, sizeof(blk));
	return ok;
}

/* ---- The hook ---- */

void aesni_stream_mac(void *wctx, struct engine_op *op, void *state)
{
	const struct session *s = op->sess;
	const struct aesni_auth_key *k = (const struct aesni_auth_key *)s->key;
	struct sm_state *st = state;

	if (s->alg != CRD_ALG_AES_CMAC) {
		stream_sha(op, state, k->raw, k->raw_len);
		return;
	}
	if (!sm_cmac_update(wctx, s, st, op->src, op->len) ||
	    (op->pos & ENGINE_LAST && !sm_cmac_final(wctx, s, st))) {
		op->status = CRD_ST_ENGINE;
		return;
	}
	op->status =
		op->pos & ENGINE_LAST ? auth_finish(op, st->cmac.x) : CRD_ST_OK;
}

void stream_sha(struct engine_op *op, void *state, const uint8_t *key,
		unsigned key_len)
{
	struct sm_state *st = state;
	unsigned alg = op->sess->alg;
	int idx = auth_sha_idx(alg);
	uint8_t md[64];

	if (idx < 0) {
		op->status = CRD_ST_BAD_PARAM;
		return;
	}
	int hmac = crd_alg_kind(alg) == CRD_KIND_MAC;
	if (op->pos & ENGINE_FIRST) {
		if (hmac)
			sm_hmac_start(key, key_len, alg, st);
		else
			sm_init(idx, &st->h);
	}
	if (op->len)
		sm_update(idx, &st->h, op->src, op->len);
	if (!(op->pos & ENGINE_LAST)) {
		op->status = CRD_ST_OK;
		return;
	}
	sm_final(idx, &st->h, md);
	if (hmac) { /* H((K ^ opad) || inner) */
		sm_update(idx, &st->outer, md, auth_digest_len(alg));
		sm_final(idx, &st->outer, md);
	}
	op->status = auth_finish(op, md);
	explicit_bzero(md, sizeof(md));
	/* The compressions of the keyed outer state left their words in
	 * the dead frames below. */
	if (hmac)
		engine_burn_stack();
}
