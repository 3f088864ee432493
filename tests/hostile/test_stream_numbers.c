// SPDX-License-Identifier: MIT
/*
 * Stream pieces' numbers (ring_abi.h) written straight into the ring,
 * against a daemon with two workers: the worker that claims a numbered
 * piece runs it at once when its predecessor has run, so the numbers
 * decide what may run where. What they may not decide is anything
 * beyond the sender's own stream.
 *
 * - honest: AES-GCM streams, their pieces interleaved on one queue,
 *   numbered, unnumbered (as a library from before numbers sends them)
 *   and both mixed, each message against OpenSSL's one-shot encryption;
 * - stale: before every other piece of an honest stream, a piece of a
 *   stale handle of the same slot (another tag) that carries the number
 *   the honest piece will: refused (NO_STREAM), and the honest stream
 *   must not move past a piece it has not run (the gate stays where it
 *   was);
 * - liars: streams whose numbers repeat, skip, run backwards or are
 *   random, in the same bursts as honest streams: the liars get any
 *   status a piece may get, the honest streams stay right, and the
 *   daemon (sanitized in the ASan and TSan passes) keeps serving.
 *
 * A seed ($STREAM_SEED) makes a run repeatable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include <cryptod/ring_abi.h>

#include "fixture.h"
#include "rawclient.h"
#include "wire.h"

enum {
	NS = 8,		   /* streams per round */
	NP = 12,	   /* pieces per stream */
	REGION = 64 << 10, /* arena bytes per stream */
	TAGS = 1000000,	   /* arena offset of the tags (16 bytes each) */
	BURST = 32,
};

static struct fx_daemon daemon_;
static uint64_t rng;
static const uint8_t key128[16] = { 9, 8, 7, 6, 5, 4, 3, 2,
				    1, 0, 1, 2, 3, 4, 5, 6 };

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* How a stream numbers its pieces. */
enum numbering { HONEST, UNNUMBERED, REPEAT, SKIP, BACKWARDS, RANDOM };

struct msg {
	uint32_t handle, len[NP], total;
	enum numbering how;
	uint8_t iv[12];
	uint8_t plain[REGION];
};

struct conn {
	struct raw r;
	struct rawq q;
	int sid;
};

static uint32_t piece_no(const struct msg *m, unsigned j)
{
	switch (m->how) {
	case HONEST:
		return j;
	case UNNUMBERED:
		return 0;
	case REPEAT:
		return 1;
	case SKIP:
		return 2 * j + 1;
	case BACKWARDS:
		return NP - j;
	case RANDOM:
		return rnd();
	}
	return 0;
}

static uint8_t *arena(struct conn *c, uint32_t off)
{
	return c->q.base + c->q.arena_off + off;
}

/* Piece j of stream s (its FIRST when j == 0, its LAST when NP - 1). */
static void piece(struct conn *c, struct crd_sqe *e, const struct msg *m,
		  unsigned s, unsigned j, uint32_t handle, uint64_t ud)
{
	uint32_t off = s * REGION;
	for (unsigned k = 0; k < j; k++)
		off += m->len[k];
	memset(e, 0, sizeof(*e));
	e->user_data = ud;
	e->session = (uint32_t)c->sid;
	e->op = CRD_OP_ENCRYPT;
	e->flags = CRD_SQE_F_STREAM;
	e->src_off = e->dst_off = off;
	e->len = m->len[j];
	e->sl_off = handle;
	if (j == 0) {
		e->flags |= CRD_SQE_F_FIRST;
		e->iv_len = sizeof(m->iv);
		memcpy(e->iv, m->iv, sizeof(m->iv));
	} else {
		uint32_t no = piece_no(m, j);
		memcpy(e->iv, &no, sizeof(no)); /* little-endian */
	}
	if (j == NP - 1) {
		e->flags |= CRD_SQE_F_LAST;
		e->tag_off = TAGS + 16 * s;
	}
}

static void gcm_ref(const struct msg *m, uint8_t *ct, uint8_t tag[16])
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int n = 0;
	assert_non_null(x);
	assert_int_equal(
		EVP_EncryptInit_ex(x, EVP_aes_128_gcm(), NULL, key128, m->iv),
		1);
	assert_int_equal(EVP_EncryptUpdate(x, ct, &n, m->plain, (int)m->total),
			 1);
	assert_int_equal(EVP_EncryptFinal_ex(x, ct + n, &n), 1);
	assert_int_equal(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag),
			 1);
	EVP_CIPHER_CTX_free(x);
}

/* Any status a piece of a lying stream may get. */
static int liar_status_ok(int32_t st)
{
	return st == CRD_ST_OK || st == CRD_ST_NO_STREAM ||
	       st == CRD_ST_STREAM_BUSY;
}

/*
 * One round: NS streams (how[s] each; stale: a stale piece before each
 * honest piece after FIRST), their pieces interleaved, submitted in
 * bursts as the ring takes them. Checks every stream that numbers
 * honestly (or not at all) against OpenSSL.
 */
static void round_run(struct conn *c, const enum numbering *how, int stale)
{
	static struct msg m[NS];
	struct crd_sqe all[NS * NP * 2];
	unsigned n = 0, owner[NS * NP * 2];
	for (unsigned s = 0; s < NS; s++) {
		m[s].how = how[s];
		m[s].handle = (rnd() & 0xfffffe) << 8 | 0x100 | s;
		m[s].total = 0;
		for (unsigned j = 0; j < NP; j++) {
			/* any length: the pieces of GCM take any */
			m[s].len[j] = 1 + rnd() % (REGION / NP - 1);
			m[s].total += m[s].len[j];
		}
		for (unsigned k = 0; k < 12; k++)
			m[s].iv[k] = (uint8_t)rnd();
		for (uint32_t k = 0; k < m[s].total; k++)
			m[s].plain[k] = (uint8_t)rnd();
		memcpy(arena(c, s * REGION), m[s].plain, m[s].total);
	}
	/* Round-robin: piece j of every stream, then piece j + 1. */
	for (unsigned j = 0; j < NP; j++)
		for (unsigned s = 0; s < NS; s++) {
			if (stale && j % 2 == 1 && how[s] == HONEST) {
				/* the same slot, another tag, the number
				 * the honest piece is about to carry; only
				 * before every other piece, so that a gate
				 * it moved would let the next one run
				 * before this one */
				piece(c, &all[n], &m[s], s, j,
				      m[s].handle ^ 0x200, n);
				all[n].len = 16;
				all[n].src_off = all[n].dst_off =
					TAGS + 4096 + 16 * s;
				owner[n++] = ~0u;
			}
			piece(c, &all[n], &m[s], s, j, m[s].handle, n);
			owner[n++] = s;
		}
	for (unsigned done = 0; done < n;) {
		unsigned k = n - done < BURST ? n - done : BURST;
		for (unsigned i = 0; i < k; i++)
			*rawq_sqe(&c->q, i) = all[done + i];
		rawq_submit(&c->q, k);
		struct crd_cqe cqe[BURST];
		rawq_reap(&c->q, cqe, k);
		for (unsigned i = 0; i < k; i++) {
			uint64_t ud = cqe[i].user_data;
			assert_true(ud < n);
			unsigned s = owner[ud];
			if (s == ~0u) {
				if (cqe[i].status != CRD_ST_NO_STREAM)
					fail_msg("stale piece: status %d",
						 cqe[i].status);
			} else if (how[s] == HONEST || how[s] == UNNUMBERED) {
				if (cqe[i].status != CRD_ST_OK)
					fail_msg("stream %u (%s): piece status "
						 "%d",
						 s,
						 how[s] == HONEST
							 ? "numbered"
							 : "unnumbered",
						 cqe[i].status);
			} else if (!liar_status_ok(cqe[i].status)) {
				fail_msg("lying stream %u: status %d", s,
					 cqe[i].status);
			}
		}
		done += k;
	}
	for (unsigned s = 0; s < NS; s++) {
		if (how[s] != HONEST && how[s] != UNNUMBERED)
			continue;
		static uint8_t ct[REGION];
		uint8_t tag[16];
		gcm_ref(&m[s], ct, tag);
		if (memcmp(arena(c, s * REGION), ct, m[s].total) ||
		    memcmp(arena(c, TAGS + 16 * s), tag, 16))
			fail_msg(
				"stream %u (%s, stale pieces %s): differs from "
				"OpenSSL",
				s, how[s] == HONEST ? "numbered" : "unnumbered",
				stale ? "on" : "off");
	}
}

static void conn_open(struct conn *c)
{
	raw_connect(&c->r, daemon_.sock);
	raw_hello(&c->r, CRD_ABI_VERSION);
	c->sid = raw_session(&c->r, CRYPTOD__ALGORITHM__ALG_AES_GCM, key128, 16,
			     NULL);
	assert_true(c->sid > 0);
	raw_open_queue(&c->r, &c->q);
	assert_true(c->q.arena_size >= TAGS + 8192);
}

static void conn_close(struct conn *c)
{
	raw_close_queue(&c->q);
	close(c->r.fd);
}

/* How stream s numbers its pieces in round r of a case. */
typedef enum numbering pick_fn(unsigned r, unsigned s);

/* rounds rounds on a connection of their own (stale: stale pieces
 * before every other honest piece). */
static void run_rounds(unsigned rounds, int stale, pick_fn *pick)
{
	struct conn c;
	conn_open(&c);
	for (unsigned r = 0; r < rounds; r++) {
		enum numbering how[NS];
		for (unsigned s = 0; s < NS; s++)
			how[s] = pick(r, s);
		round_run(&c, how, stale);
	}
	conn_close(&c);
}

/* numbered, unnumbered, then both mixed */
static enum numbering pick_honest(unsigned r, unsigned s)
{
	(void)s;
	if (r % 3 == 2)
		return rnd() & 1 ? HONEST : UNNUMBERED;
	return r % 3 == 0 ? HONEST : UNNUMBERED;
}

static enum numbering pick_numbered(unsigned r, unsigned s)
{
	(void)r;
	(void)s;
	return HONEST;
}

/* every other stream lies, each round its own way */
static enum numbering pick_liars(unsigned r, unsigned s)
{
	(void)r;
	return s % 2 ? HONEST : (enum numbering)(REPEAT + rnd() % 4);
}

static void honest(void **state)
{
	(void)state;
	run_rounds(60, 0, pick_honest);
}

static void stale_numbers(void **state)
{
	(void)state;
	run_rounds(40, 1, pick_numbered);
}

static void liars(void **state)
{
	(void)state;
	run_rounds(120, 0, pick_liars);
	/* Everyone else is still served. */
	fresh_client_served(daemon_.sock, 5000);
}

static int group_setup(void **state)
{
	(void)state;
	const char *seed = getenv("STREAM_SEED");
	rng = seed ? strtoull(seed, NULL, 0) : 0x6e756d6265727321ull;
	printf("seed 0x%llx (set STREAM_SEED to reproduce)\n",
	       (unsigned long long)rng);
	struct fx_daemon_params p = { .workers = 2 };
	return fx_daemon_start(&daemon_, &p) ? -1 : 0;
}

static int group_teardown(void **state)
{
	(void)state;
	/* Exit status 0 after all of the above: nothing crashed it. */
	return fx_daemon_stop(&daemon_) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(honest),
		cmocka_unit_test(stale_numbers),
		cmocka_unit_test(liars),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
