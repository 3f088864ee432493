/* SPDX-License-Identifier: MIT */
/*
 * IVs in the arena (CRD_SQE_F_ARENA_IV) against a client that rewrites
 * them, with descriptors written straight into the ring (rawclient), on
 * the aesni and the openssl engine, results checked against OpenSSL:
 *
 * - read once, when the op is validated: op 2's IV lies inside op 1's
 *   destination, both in one burst to a lone worker, which validates a
 *   run before it runs any of it; op 2 must have used the IV as it was
 *   submitted, not op 1's ciphertext (what reading it again when the op
 *   runs would give);
 * - an IV inside its own op's destination (in place): the IV as it was;
 * - a racing writer flips an aligned word of a 64-byte IV between two
 *   values while bursts run: every result is the encryption under one
 *   of the two IVs, never anything else;
 * - refusals, each between good ops of the same burst, which must come
 *   back right: past the arena, past CRD_IV_ARENA_MAX, iv[4..15] not
 *   zero, no length; and a stream of one piece (the poster's path).
 */
#include <pthread.h>
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

enum {
	LEN = 64,	    /* every op's data */
	IV_LEN = 64,	    /* the long IV */
	IV_OFF = 0x40000,   /* the racing IV, apart from the ops */
	RACE_WORD = 24,	    /* the flipped 8 bytes of it */
	RACE_BURSTS = 1000, /* of 32 ops */
};

static struct fx_daemon daemon_;
static const uint8_t key[16] = { 0x10, 0x32, 0x54, 0x76, 1, 2,	3,  4,
				 5,    6,    7,	   8,	 9, 10, 11, 12 };
static const char *const engines[] = { "aesni", "openssl" };

/* OpenSSL's AES-128-GCM of pt[LEN] under iv[iv_len]: ct and a 16-byte
 * tag. */
static void ref_gcm(const uint8_t *iv, unsigned iv_len, const uint8_t *pt,
		    uint8_t *ct, uint8_t *tag)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int n, m;
	assert_non_null(x);
	assert_true(
		EVP_EncryptInit_ex(x, EVP_aes_128_gcm(), NULL, NULL, NULL) &&
		EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IVLEN, (int)iv_len,
				    NULL) &&
		EVP_EncryptInit_ex(x, NULL, NULL, key, iv) &&
		EVP_EncryptUpdate(x, ct, &n, pt, LEN) &&
		EVP_EncryptFinal_ex(x, ct + n, &m) &&
		EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag));
	EVP_CIPHER_CTX_free(x);
}

static uint8_t *arena(struct rawq *q)
{
	return q->base + q->arena_off;
}

/* An in-place encrypt of LEN bytes at off, its tag after them, with an
 * iv_len-byte IV at arena offset iv_off. */
static void sqe_arena_iv(struct crd_sqe *e, int sid, uint32_t off,
			 uint32_t iv_off, unsigned iv_len, uint64_t ud)
{
	sqe_valid(e, (uint32_t)sid, off, ud);
	e->flags = CRD_SQE_F_ARENA_IV;
	e->iv_len = (uint8_t)iv_len;
	memcpy(e->iv, &(uint32_t){ iv_off }, 4); /* little-endian */
}

struct conn {
	struct raw r;
	struct rawq q;
	int sid;
};

static void conn_open(struct conn *c, const char *engine)
{
	raw_connect(&c->r, daemon_.sock);
	raw_hello(&c->r, CRD_ABI_VERSION);
	c->sid = raw_session(&c->r, CRYPTOD__ALGORITHM__ALG_AES_GCM, key,
			     sizeof(key), engine);
	assert_true(c->sid > 0);
	raw_open_queue(&c->r, &c->q);
}

static void conn_close(struct conn *c)
{
	raw_close_queue(&c->q);
	close(c->r.fd);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + 37 * i);
}

/* ---- read when validated, not when run ---- */

static void read_when_validated(void **state)
{
	for (unsigned k = 0; k < 2; k++) {
		struct conn c;
		conn_open(&c, engines[k]);
		uint8_t *a = arena(&c.q), pt1[LEN], pt2[LEN], iv1[IV_LEN];
		uint8_t ct[LEN], tag[16], ct1[LEN], tag1[16];
		/* op 1 in place at [0, 64), its tag at [64, 80), its IV at
		 * 8192; op 2 in place at 4096, its IV at [0, 64): op 1's
		 * plaintext, which op 1 overwrites with ciphertext. */
		fill(pt1, LEN, 1);
		fill(pt2, LEN, 2);
		fill(iv1, IV_LEN, 9);
		_Static_assert(IV_LEN == LEN, "op 2's IV is op 1's data");
		memcpy(a, pt1, LEN);
		memcpy(a + 4096, pt2, LEN);
		memcpy(a + 8192, iv1, IV_LEN);
		sqe_arena_iv(rawq_sqe(&c.q, 0), c.sid, 0, 8192, IV_LEN, 1);
		sqe_arena_iv(rawq_sqe(&c.q, 1), c.sid, 4096, 0, IV_LEN, 2);
		rawq_submit(&c.q, 2);
		struct crd_cqe cq[2];
		rawq_reap(&c.q, cq, 2);
		assert_int_equal(cq[0].status, CRD_ST_OK);
		assert_int_equal(cq[1].status, CRD_ST_OK);
		ref_gcm(iv1, IV_LEN, pt1, ct1, tag1);
		assert_memory_equal(a, ct1, LEN);
		assert_memory_equal(a + LEN, tag1, 16);
		/* op 2 under pt1, what [0, 64) held when it was submitted */
		ref_gcm(pt1, IV_LEN, pt2, ct, tag);
		if (memcmp(a + 4096, ct, LEN) ||
		    memcmp(a + 4096 + LEN, tag, 16))
			fail_msg("%s: op 2 did not run under the IV it was "
				 "submitted with",
				 engines[k]);

		/* An IV inside its own destination. */
		fill(a, LEN, 5);
		memcpy(pt1, a, LEN);
		sqe_arena_iv(rawq_sqe(&c.q, 0), c.sid, 0, 16, 40, 3);
		rawq_submit(&c.q, 1);
		rawq_reap(&c.q, cq, 1);
		assert_int_equal(cq[0].status, CRD_ST_OK);
		ref_gcm(pt1 + 16, 40, pt1, ct, tag);
		assert_memory_equal(a, ct, LEN);
		assert_memory_equal(a + LEN, tag, 16);
		conn_close(&c);
	}
}

/* ---- a racing writer ---- */

struct racer {
	uint64_t *word; /* the IV's aligned word in the arena */
	uint64_t a, b;
	volatile int stop;
	uint64_t flips;
};

/* The race with the daemon's workers is the point: hidden from TSan. */
__attribute__((no_sanitize("thread"))) static void *racer_main(void *arg)
{
	struct racer *r = arg;
	while (!r->stop) {
		__atomic_store_n(r->word, r->flips & 1 ? r->a : r->b,
				 __ATOMIC_RELAXED);
		r->flips++;
	}
	return NULL;
}

static void racing_writer(void **state)
{
	const unsigned bursts = getenv("RACE_BURSTS")
					? (unsigned)atoi(getenv("RACE_BURSTS"))
					: RACE_BURSTS;
	for (unsigned k = 0; k < 2; k++) {
		struct conn c;
		conn_open(&c, engines[k]);
		uint8_t *a = arena(&c.q), pt[LEN], iv[2][IV_LEN];
		uint8_t ct[2][LEN], tag[2][16];
		fill(pt, LEN, 7);
		fill(iv[0], IV_LEN, 11);
		memcpy(iv[1], iv[0], IV_LEN);
		for (unsigned i = 0; i < 8; i++)
			iv[1][RACE_WORD + i] ^= 0xff;
		for (unsigned i = 0; i < 2; i++)
			ref_gcm(iv[i], IV_LEN, pt, ct[i], tag[i]);
		memcpy(a + IV_OFF, iv[0], IV_LEN);
		struct racer rc = { .word = (uint64_t *)(a + IV_OFF +
							 RACE_WORD) };
		memcpy(&rc.a, iv[0] + RACE_WORD, 8);
		memcpy(&rc.b, iv[1] + RACE_WORD, 8);
		pthread_t th;
		assert_int_equal(pthread_create(&th, NULL, racer_main, &rc), 0);

		unsigned long seen[2] = { 0, 0 };
		for (unsigned b = 0; b < bursts; b++) {
			for (unsigned i = 0; i < 32; i++) {
				memcpy(a + 256 * i, pt, LEN);
				sqe_arena_iv(rawq_sqe(&c.q, i), c.sid, 256 * i,
					     IV_OFF, IV_LEN, i);
			}
			rawq_submit(&c.q, 32);
			struct crd_cqe cq[32];
			rawq_reap(&c.q, cq, 32);
			for (unsigned i = 0; i < 32; i++) {
				const uint8_t *o = a + 256 * i;
				assert_int_equal(cq[i].status, CRD_ST_OK);
				unsigned w = !memcmp(o, ct[1], LEN) &&
					     !memcmp(o + LEN, tag[1], 16);
				if (!w && (memcmp(o, ct[0], LEN) ||
					   memcmp(o + LEN, tag[0], 16)))
					fail_msg("%s: a result under neither "
						 "IV (burst %u, op %u)",
						 engines[k], b, i);
				seen[w]++;
			}
		}
		rc.stop = 1;
		pthread_join(th, NULL);
		printf("%s: %u ops under %llu flips of the IV: %lu under one, "
		       "%lu under the other\n",
		       engines[k], 32 * bursts, (unsigned long long)rc.flips,
		       seen[0], seen[1]);
		conn_close(&c);
	}
}

/* ---- refusals between good ops ---- */

static void refusals(void **state)
{
	struct conn c;
	conn_open(&c, NULL);
	uint8_t *a = arena(&c.q), pt[LEN], ct[LEN], tag[16];
	fill(pt, LEN, 13);
	fill(a + IV_OFF, IV_LEN, 17);
	ref_gcm(a + IV_OFF, IV_LEN, pt, ct, tag);
	const int want[] = { CRD_ST_BAD_RANGE, CRD_ST_BAD_RANGE,
			     CRD_ST_BAD_PARAM, CRD_ST_BAD_DESC,
			     CRD_ST_BAD_DESC,  CRD_ST_OK };
	const unsigned nbad = sizeof(want) / sizeof(want[0]);
	for (unsigned i = 0; i < nbad; i++) {
		struct crd_sqe *e[3];
		for (unsigned j = 0; j < 3; j++) {
			memcpy(a + 256 * j, pt, LEN);
			e[j] = rawq_sqe(&c.q, j);
			sqe_arena_iv(e[j], c.sid, 256 * j, IV_OFF, IV_LEN, j);
		}
		switch (i) {
		case 0: /* one byte past the arena */
			memcpy(e[1]->iv,
			       &(uint32_t){ (uint32_t)(c.q.arena_size - IV_LEN +
						       1) },
			       4);
			break;
		case 1: /* the 32-bit sum wraps */
			memcpy(e[1]->iv, &(uint32_t){ 0xfffffff0u }, 4);
			break;
		case 2:
			e[1]->iv_len = CRD_IV_ARENA_MAX + 1;
			break;
		case 3:
			e[1]->iv[7] = 1;
			break;
		case 4:
			e[1]->iv_len = 0;
			break;
		case 5: /* a stream's FIRST carries it: one piece */
			e[1]->flags |= CRD_SQE_F_STREAM | CRD_SQE_F_FIRST |
				       CRD_SQE_F_LAST;
			e[1]->sl_off = 5 << 8 | 3;
			break;
		}
		rawq_submit(&c.q, 3);
		struct crd_cqe cq[3];
		rawq_reap(&c.q, cq, 3);
		if (cq[1].status != want[i])
			fail_msg("case %u: status %d, want %d", i, cq[1].status,
				 want[i]);
		for (unsigned j = 0; j < 3; j += want[i] ? 2 : 1) {
			assert_int_equal(cq[j].status, CRD_ST_OK);
			assert_memory_equal(a + 256 * j, ct, LEN);
			assert_memory_equal(a + 256 * j + LEN, tag, 16);
		}
	}
	conn_close(&c);
}

static int group_setup(void **state)
{
	/* One worker: a burst is one run, validated before it runs. */
	struct fx_daemon_params p = { .workers = 1 };
	return fx_daemon_start(&daemon_, &p) ? -1 : 0;
}

static int group_teardown(void **state)
{
	return fx_daemon_stop(&daemon_) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(read_when_validated),
		cmocka_unit_test(racing_writer),
		cmocka_unit_test(refusals),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
