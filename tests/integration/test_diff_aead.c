// SPDX-License-Identifier: MIT
/*
 * Differential test of AES-CCM, ChaCha20-Poly1305 and ChaCha20 against
 * OpenSSL in-process (aead_common.h runs each case): random keys of
 * every size, nonces of every length, tags of every length, AAD and data
 * lengths from none to 64 KiB with the edges of every engine's row
 * (aesni's CCM: 46 / 47 bytes of AAD, 65534 / 65535 bytes of data; the
 * CCM length field of 12- and 13-byte nonces), and some 1 MiB ops.
 *
 * A daemon with 2 workers serves QUEUES client threads at once, each
 * with its own connection and queue, each running every case of its
 * share on every engine: cc_crypt() both ways and a forgery, then a
 * burst of flat / scatter-gather, in / out of place, forged and
 * session-less ops. Cases an engine's capability row refuses must be
 * refused with the defined error (counted as not applicable).
 *
 * TEST_SEED replays a run (each thread draws from seed + its index).
 * Exit: 0 passed, 1 any mismatch.
 */
#include "aead_common.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SEED_DEFAULT 0x6165616464696666ull
#define QUEUES 4
/* Per algorithm and thread; sanitized, a third (the edges are drawn half
 * of the time either way). */
#ifdef CRYPTOD_TEST_SANITIZED
#define CASES 100
#else
#define CASES 300
#endif
#define MAX_ENGINES 8
#define ARENA (32u << 20)

static const enum cc_alg algs[] = {
	CC_ALG_AES_CCM,
	CC_ALG_CHACHA20_POLY1305,
	CC_ALG_CHACHA20,
};
#define N_ALGS (sizeof(algs) / sizeof(algs[0]))

struct worker {
	unsigned idx;
	uint64_t seed;
	const char *sock;
	unsigned long checked, failed, na, sessionless, cases;
	int err;
};

/* An AAD length: the edges of aesni's CCM row half of the time. */
static uint32_t rnd_aad(void)
{
	static const uint32_t edges[] = { 0, 1, 15, 16, 17, 45, 46, 47, 65535 };

	if (mc_below(2))
		return edges[mc_below(sizeof(edges) / sizeof(edges[0]))];
	return mc_rnd_aad_len(10, 10);
}

static uint32_t rnd_len(enum cc_alg alg, unsigned iv_len)
{
	static const uint32_t edges[] = { 0,	 1,	16,	 63,
					  64,	 65,	4096,	 65534,
					  65535, 65536, 1u << 20 };
	uint32_t len =
		mc_below(3) ? mc_rnd_len()
			    : edges[mc_below(sizeof(edges) / sizeof(edges[0]))];

	/* A nonce of 13 leaves a 2-byte length field: its edge too */
	if (alg == CC_ALG_AES_CCM && iv_len == 13 && !mc_below(4))
		len = 65535 + mc_below(2);
	return len;
}

static int rnd_case(struct av *v, enum cc_alg alg, unsigned i)
{
	static const unsigned ccm_keys[] = { 16, 24, 32 };

	memset(v, 0, sizeof(*v));
	v->alg = alg;
	v->file = "random";
	v->line = i;
	switch (alg) {
	case CC_ALG_AES_CCM:
		v->key_len = ccm_keys[mc_below(3)];
		v->iv_len = 7 + mc_below(7);
		v->tag_len = 4 + 2 * mc_below(7);
		break;
	case CC_ALG_CHACHA20_POLY1305:
		v->key_len = 32;
		v->iv_len = 12;
		v->tag_len = 16;
		break;
	default:
		v->key_len = 32;
		v->iv_len = 16;
		break;
	}
	mc_rnd_bytes(v->key, v->key_len);
	mc_rnd_bytes(v->iv, v->iv_len);
	/* ChaCha20: counters near the 32-bit wrap as well */
	if (alg == CC_ALG_CHACHA20 && mc_below(4) == 0)
		v->iv[0] = v->iv[1] = v->iv[2] = v->iv[3] = 0xff;
	v->aad_len = alg == CC_ALG_CHACHA20 ? 0 : rnd_aad();
	v->len = rnd_len(alg, v->iv_len);
	v->aad = malloc(v->aad_len + 1);
	v->pt = malloc(v->len + 1);
	v->ct = malloc(v->len + 1);
	if (!v->aad || !v->pt || !v->ct)
		return -ENOMEM;
	mc_rnd_bytes(v->aad, v->aad_len);
	mc_rnd_bytes(v->pt, v->len);
	/* OpenSSL's answer; it takes every case (even the CCM ones too long
	 * for their nonce, which it refuses: those keep a zero answer) */
	if (av_ref_encrypt(v, v->ct, v->tag) &&
	    !(alg == CC_ALG_AES_CCM && v->iv_len > 11 &&
	      v->len >> (8 * (15 - v->iv_len))))
		return -EIO;
	return 0;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct cc_queue_params qp = { .sq_entries = 64, .arena_size = ARENA };
	struct cc_conn *conn = NULL;
	struct cc_queue *q = NULL;
	char name[32];

	mc_srand(w->seed + w->idx);
	snprintf(name, sizeof(name), "test_diff_aead.%u", w->idx);
	w->err = cc_connect(w->sock, name, &conn);
	if (!w->err)
		w->err = cc_queue_open(conn, &qp, &q);
	for (unsigned a = 0; a < N_ALGS && !w->err; a++) {
		struct cc_alg_caps *caps = NULL, *rows[MAX_ENGINES];
		const struct cc_alg_caps *def;
		int n = av_caps(conn, algs[a], &caps, rows, MAX_ENGINES, &def);

		if (n <= 0) {
			fprintf(stderr, "FAIL %s: no engine listed\n",
				cc_alg_name(algs[a]));
			w->failed++;
		}
		for (unsigned i = 0; i < CASES && n > 0 && !w->err; i++) {
			struct av v;

			w->err = rnd_case(&v, algs[a], i);
			for (int e = 0; e < n && !w->err; e++) {
				struct av_run r = { .conn = conn,
						    .q = q,
						    .cap = rows[e],
						    .def = def };

				w->err = av_run_case(&r, &v);
				w->checked += r.checked;
				w->failed += r.failed;
				w->na += r.na;
				w->sessionless += r.sessionless;
			}
			w->cases++;
			av_free(&v);
		}
		cc_capabilities_free(caps);
	}
	if (q)
		cc_queue_close(q);
	if (conn)
		cc_disconnect(conn);
	return NULL;
}

int main(void)
{
	struct fx_daemon_params dp = { .workers = 2 };
	uint64_t seed = mc_seed_from_env(SEED_DEFAULT);
	struct worker w[QUEUES];
	pthread_t th[QUEUES];
	struct fx_daemon d;
	unsigned long checked = 0, failed = 0, na = 0, sl = 0, cases = 0;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed 0x%016llx (set TEST_SEED to reproduce)\n",
	       (unsigned long long)seed);
	if (fx_daemon_start(&d, &dp))
		return FX_EXIT_FAIL;
	for (unsigned i = 0; i < QUEUES; i++) {
		w[i] = (struct worker){ .idx = i,
					.seed = seed,
					.sock = d.sock };
		if (pthread_create(&th[i], NULL, worker_run, &w[i])) {
			fprintf(stderr, "pthread_create failed\n");
			return FX_EXIT_FAIL;
		}
	}
	for (unsigned i = 0; i < QUEUES; i++) {
		pthread_join(th[i], NULL);
		if (w[i].err) {
			fprintf(stderr, "FAIL queue %u: %s\n", i,
				cc_strerror(w[i].err));
			fails++;
		}
		checked += w[i].checked;
		failed += w[i].failed;
		na += w[i].na;
		sl += w[i].sessionless;
		cases += w[i].cases;
	}
	if (fx_daemon_stop(&d))
		fails++;
	if (failed || !checked)
		fails++;
	printf("TOTAL: %u queues, %lu cases, %lu checks (%lu refused as "
	       "the rows say, %lu session-less ops), %lu failed\n%s\n",
	       QUEUES, cases, checked, na, sl, failed,
	       fails ? "FAILED" : "PASSED");
	if (fails)
		printf("replay with TEST_SEED=0x%016llx\n",
		       (unsigned long long)seed);
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
