// SPDX-License-Identifier: MIT
/*
 * Published vectors for AES-CCM, ChaCha20-Poly1305 and ChaCha20 from
 * python3-cryptography-vectors, on every engine cc_capabilities_get()
 * lists for each algorithm (aead_common.h runs each case):
 *
 * - CAVP CCM: VADT, VNT, VPT, VTT (encryption records: the ciphertext
 *   and tag must match, and decrypt back) and DVPT (decrypt-verify,
 *   Result = Fail records must complete CC_ERR_AUTH_FAILED with the
 *   output zeroed), all key sizes;
 * - ChaCha20-Poly1305: OpenSSL's and BoringSSL's files (RFC 7539 and
 *   edge cases; OpenSSL's CIPHERFINAL_ERROR record must fail);
 * - ChaCha20: RFC 7539 A.2 with its initial block counters.
 *
 * Every case is also checked against OpenSSL in-process first (a vector
 * OpenSSL disagrees with is a failure of the test). A case an engine's
 * capability row refuses (aesni's CCM: AES-192, AAD over 46 bytes) must
 * be refused with the defined error and counts as not applicable.
 *
 * Exit: 0 passed, 1 failed, 77 vectors absent.
 */
#include "aead_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VEC_DIR "/usr/lib/python3/dist-packages/cryptography_vectors/ciphers"
#define MAX_ENGINES 8

static const struct {
	const char *path;
	enum cc_alg alg;
} files[] = {
	{ "AES/CCM/VADT128.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VADT192.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VADT256.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VNT128.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VNT192.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VNT256.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VPT128.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VPT192.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VPT256.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VTT128.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VTT192.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/VTT256.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/DVPT128.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/DVPT192.rsp", CC_ALG_AES_CCM },
	{ "AES/CCM/DVPT256.rsp", CC_ALG_AES_CCM },
	{ "ChaCha20Poly1305/openssl.txt", CC_ALG_CHACHA20_POLY1305 },
	{ "ChaCha20Poly1305/boringssl.txt", CC_ALG_CHACHA20_POLY1305 },
	{ "ChaCha20/rfc7539.txt", CC_ALG_CHACHA20 },
};
#define N_FILES (sizeof(files) / sizeof(files[0]))

/* The vector against OpenSSL: encrypting its plaintext gives its
 * ciphertext and tag (a failing record: a different tag). */
static int check_ref(const struct av *v)
{
	uint8_t *out = malloc(v->len + 1), tag[16];
	int r = out ? av_ref_encrypt(v, out, tag) : -ENOMEM;
	int same = !r && !memcmp(out, v->ct, v->len) &&
		   !memcmp(tag, v->tag, v->tag_len);

	free(out);
	if (r || (v->fail ? (same || !v->tag_len) : !same)) {
		fprintf(stderr,
			"FAIL %s:%u: OpenSSL disagrees with the "
			"vector\n",
			v->file, v->line);
		return -1;
	}
	return 0;
}

static int run_file(struct cc_conn *conn, struct cc_queue *q, unsigned fi,
		    unsigned *vectors)
{
	struct cc_alg_caps *caps = NULL, *rows[MAX_ENGINES];
	const struct cc_alg_caps *def;
	char path[512];
	struct av_file f;
	int n_eng, fails = 0, st;

	snprintf(path, sizeof(path), "%s/%s", VEC_DIR, files[fi].path);
	n_eng = av_caps(conn, files[fi].alg, &caps, rows, MAX_ENGINES, &def);
	if (n_eng <= 0) {
		fprintf(stderr, "FAIL %s: no engine lists %s\n", files[fi].path,
			cc_alg_name(files[fi].alg));
		cc_capabilities_free(caps);
		return 1;
	}
	for (int e = 0; e < n_eng; e++) {
		struct av_run r = {
			.conn = conn, .q = q, .cap = rows[e], .def = def
		};
		struct av v;
		unsigned n = 0;

		if ((st = av_open(&f, path, files[fi].alg))) {
			fprintf(stderr, "FAIL %s: %s\n", path, strerror(-st));
			fails++;
			break;
		}
		while ((st = av_next(&f, &v)) == 1) {
			if (!e && check_ref(&v))
				fails++;
			n++;
			st = av_run_case(&r, &v);
			av_free(&v);
			if (st)
				break;
		}
		av_free(&v);
		av_close(&f);
		if (st < 0 || !n)
			fails++;
		*vectors += n;
		printf("%-32s %-18s [%s]: %u vectors, %lu checks, %lu not "
		       "applicable, %lu session-less, %lu failed\n",
		       files[fi].path, cc_alg_name(files[fi].alg),
		       rows[e]->engine, n, r.checked, r.na, r.sessionless,
		       r.failed);
		fails += r.failed != 0;
	}
	cc_capabilities_free(caps);
	return fails;
}

int main(void)
{
	struct fx_daemon_params dp = { .workers = 2 };
	struct cc_queue_params qp = { .sq_entries = 64,
				      .arena_size = 8u << 20 };
	struct cc_conn *conn;
	struct cc_queue *q;
	struct fx_daemon d;
	unsigned vectors = 0, fi;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access(VEC_DIR "/AES/CCM/VADT128.rsp", R_OK)) {
		printf("SKIP: vectors not found under %s "
		       "(python3-cryptography-vectors)\n",
		       VEC_DIR);
		return FX_EXIT_SKIP;
	}
	mc_srand(mc_seed_from_env(0x61656164766563ull));
	if (fx_setup(&d, &dp, "test_nist_aead", &qp, &conn, &q))
		return FX_EXIT_FAIL;
	for (fi = 0; fi < N_FILES; fi++)
		fails += run_file(conn, q, fi, &vectors);
	if (fx_teardown(&d, conn, q))
		fails++;
	printf("TOTAL: %u vector runs, %s\n", vectors,
	       fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
