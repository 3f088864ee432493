// SPDX-License-Identifier: MIT
/*
 * Runs key pairs' known-answer cases against a fresh daemon: one case a
 * line, tab-separated, as pk_vectors.py writes them:
 *
 *   alg op key pad md mgf1 salt in aad expect out
 *
 * alg a row's name; op sign, verify, derive, encrypt or decrypt; key the
 * session's DER in hex (consecutive cases with one key share a session);
 * pad, md, mgf1, salt struct cc_pk_params' fields; in, aad and out hex
 * ("-": none); expect ok (status 0, and the output is out when given),
 * badsig (CC_ERR_BAD_SIGNATURE), authfail (CC_ERR_AUTH_FAILED), or notz
 * (a failure, or an output other than out: a false ECDH vector).
 *
 * Exit: 0 every case passed, 1 otherwise.
 */
#include "fixture.h"
#include "pk_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { FIELDS = 11, BUF = 16384 };

static const char *const ops[] = { "",	   "encrypt", "decrypt",
				   "sign", "verify",  "derive" };

int main(int argc, char **argv)
{
	struct fx_daemon d;
	struct cc_conn *conn;
	struct cc_queue *q;
	struct cc_queue_params qp = { .sq_entries = 8,
				      .cq_entries = 8,
				      .arena_size = 1 << 16 };
	FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
	if (!f) {
		fprintf(stderr, "usage: pk_run CASES\n");
		return FX_EXIT_FAIL;
	}
	if (fx_setup(&d, NULL, "pk_run", &qp, &conn, &q))
		return FX_EXIT_FAIL;
	char *line = malloc(1 << 16), *last_key = calloc(1, 1 << 16);
	uint8_t *key = malloc(BUF), *in = malloc(BUF), *aad = malloc(BUF),
		*want = malloc(BUF), *out = malloc(BUF);
	uint32_t sid = 0;
	unsigned n = 0, lineno = 0;
	while (fgets(line, 1 << 16, f)) {
		char *fld[FIELDS], *save = NULL;
		unsigned nf = 0;
		lineno++;
		line[strcspn(line, "\n")] = 0;
		for (char *t = strtok_r(line, "\t", &save); t && nf < FIELDS;
		     t = strtok_r(NULL, "\t", &save))
			fld[nf++] = t;
		if (nf != FIELDS) {
			PK_CHECK(0, "line %u: %u fields", lineno, nf);
			continue;
		}
		int alg = cc_alg_from_name(fld[0]);
		unsigned op = 0;
		for (unsigned i = 1; i < 6; i++)
			if (!strcmp(fld[1], ops[i]))
				op = i;
		if (alg <= 0 || !op) {
			PK_CHECK(0, "line %u: %s %s?", lineno, fld[0], fld[1]);
			continue;
		}
		if (strcmp(fld[2], last_key)) { /* a new key: a new session */
			int kl = pk_unhex(fld[2], key, BUF), err = 0;
			if (sid)
				cc_session_destroy(conn, sid);
			struct cc_session_params p = { .alg = alg,
						       .key = key,
						       .key_len = (size_t)kl };
			sid = 0;
			err = kl > 0 ? cc_session_create(conn, &p, &sid)
				     : -EINVAL;
			PK_CHECK(!err, "line %u: session: %s", lineno,
				 cc_strerror(err));
			strcpy(last_key, fld[2]);
		}
		if (!sid)
			continue;
		struct cc_pk_params pp = { .pad = (uint8_t)atoi(fld[3]),
					   .md = (uint8_t)atoi(fld[4]),
					   .mgf1_md = (uint8_t)atoi(fld[5]),
					   .salt_len = atoi(fld[6]) };
		int il = strcmp(fld[7], "-") ? pk_unhex(fld[7], in, BUF) : 0;
		int al = strcmp(fld[8], "-") ? pk_unhex(fld[8], aad, BUF) : 0;
		int wl = strcmp(fld[10], "-") ? pk_unhex(fld[10], want, BUF)
					      : -1;
		size_t ol = BUF;
		int st = cc_pk_op(conn, sid, (enum cc_dir)op, &pp, in,
				  (size_t)il, al ? aad : NULL, (size_t)al,
				  op == CC_VERIFY ? NULL : out,
				  op == CC_VERIFY ? NULL : &ol);
		int same = st == 0 && wl >= 0 && ol == (size_t)wl &&
			   !memcmp(out, want, ol);
		const char *ex = fld[9];
		int pass = !strcmp(ex, "ok")	   ? st == 0 && (wl < 0 || same)
			   : !strcmp(ex, "badsig") ? st == CC_ERR_BAD_SIGNATURE
			   : !strcmp(ex, "authfail") ? st == CC_ERR_AUTH_FAILED
			   : !strcmp(ex, "notz")     ? !same
						     : 0;
		PK_CHECK(pass, "line %u: %s %s: want %s, got %s%s", lineno,
			 fld[0], fld[1], ex, cc_strerror(st),
			 st == 0 && wl >= 0 && !same ? " (other bytes)" : "");
		n++;
	}
	fclose(f);
	printf("%u cases, %d failed\n", n, pk_fails);
	free(line);
	free(last_key);
	free(key);
	free(in);
	free(aad);
	free(want);
	free(out);
	int rc = fx_teardown(&d, conn, q);
	return pk_fails || rc || !n ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
