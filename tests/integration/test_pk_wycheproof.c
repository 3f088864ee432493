// SPDX-License-Identifier: MIT
/*
 * Wycheproof's key pair vectors through the library (docs/asymmetric.md,
 * Tests): RSA PKCS#1 v1.5 and PSS verify, RSA-OAEP decrypt, ECDSA (DER)
 * verify, Ed25519 and Ed448 verify, ECDH P-256/P-384 (points as TLS
 * carries them), X25519 and X448. Each test's key becomes a session of
 * its row (the vectors' DER keys; ECDH's and XDH's private values made
 * PKCS#8 by wycheproof_cases.py, which reads the JSON and writes the
 * cases this program runs).
 *
 * The vectors are not in Debian: the directory is $WYCHEPROOF_DIR (a
 * checkout's testvectors_v1), and without it the test is skipped (77).
 *
 * Each test's result must hold: "valid" succeeds with the vector's
 * output; "invalid" is refused (a status the daemon or library gives for
 * a bad input: a bad signature, a failed decryption, a bad parameter);
 * "acceptable" may go either way (counted both ways), but an output it
 * gives must be the vector's. What no row serves (a key size, digest,
 * signature form) is counted as skipped; a key the daemon refuses to load
 * is listed apart and fails the run, unless its form is one the daemon
 * refuses by design (RSASSA-PSS keys: docs/asymmetric.md), whose tests
 * are counted apart (and run, should the daemon ever load such a key).
 *
 * Exit: 0 passed, 1 failed, 77 skipped.
 */
#include "fixture.h"
#include "pk_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { FIELDS = 15, BUF = 16384, SHOW = 10 };

static const char *const ops[] = { "",	   "encrypt", "decrypt",
				   "sign", "verify",  "derive" };

/* One file's counts. */
struct tally {
	char name[128];
	unsigned pass, fail, skip, acc_yes, acc_no;
	unsigned key_refused; /* tests whose key should have loaded */
	unsigned key_design;  /* ... of a form refused by design */
};

static struct tally file, all;
static unsigned shown_fail, shown_key;

static void tally_end(void)
{
	if (!file.name[0])
		return;
	printf("%-52s %5u passed %3u failed %4u skipped", file.name, file.pass,
	       file.fail, file.skip);
	if (file.acc_yes || file.acc_no)
		printf(" (acceptable: %u taken, %u refused)", file.acc_yes,
		       file.acc_no);
	if (file.key_refused)
		printf(" KEY REFUSED: %u tests", file.key_refused);
	if (file.key_design)
		printf(" (key refused by design: %u tests)", file.key_design);
	putchar('\n');
	all.pass += file.pass;
	all.fail += file.fail;
	all.skip += file.skip;
	all.acc_yes += file.acc_yes;
	all.acc_no += file.acc_no;
	all.key_refused += file.key_refused;
	all.key_design += file.key_design;
	memset(&file, 0, sizeof(file));
}

/*
 * A status that refuses a bad input: the daemon's for a signature that
 * does not verify, a decryption that fails, a point or length it does
 * not take, or the library's -EINVAL (an empty signature). A lost
 * connection or a time-out is no refusal: it fails the test.
 */
static int refusal(int st)
{
	return st == CC_ERR_BAD_SIGNATURE || st == CC_ERR_AUTH_FAILED ||
	       st == CC_ERR_BAD_PARAM || st == -EINVAL;
}

/* Runs python3 wycheproof_cases.py dir; its stdout, and *pid. */
static FILE *cases_open(const char *dir, pid_t *pid)
{
	int fd[2];
	if (pipe(fd))
		return NULL;
	*pid = fork();
	if (*pid < 0)
		return NULL;
	if (!*pid) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execlp("python3", "python3", WYCHEPROOF_CASES, dir, (char *)0);
		_exit(127);
	}
	close(fd[1]);
	return fdopen(fd[0], "r");
}

struct bufs {
	uint8_t key[BUF], in[BUF], aad[BUF], want[BUF], out[BUF];
};

/* Hex or "-" into b: its length (0 for "-"), or -1. */
static int field(const char *hex, uint8_t *b)
{
	return strcmp(hex, "-") ? pk_unhex(hex, b, BUF) : 0;
}

/* One T line's fields (after the "T"): tcId result alg op key keyok pad
 * md mgf1 salt in aad out comment. */
static void run_test(struct cc_conn *conn, char **f, struct bufs *b,
		     char **last_key, uint32_t *sid)
{
	const char *tc = f[0], *res = f[1], *comment = f[13];
	int alg = cc_alg_from_name(f[2]);
	unsigned op = 0;
	for (unsigned i = 1; i < 6; i++)
		if (!strcmp(f[3], ops[i]))
			op = i;
	if (alg <= 0 || !op) {
		PK_CHECK(0, "%s tcId %s: %s %s?", file.name, tc, f[2], f[3]);
		file.fail++;
		return;
	}
	static int key_err;
	if (!*last_key || strcmp(f[4], *last_key)) { /* a new key */
		int kl = pk_unhex(f[4], b->key, BUF);
		if (*sid)
			cc_session_destroy(conn, *sid);
		struct cc_session_params p = { .alg = alg,
					       .key = b->key,
					       .key_len = (size_t)kl };
		*sid = 0;
		key_err = kl > 0 ? cc_session_create(conn, &p, sid) : -EINVAL;
		OPENSSL_cleanse(b->key, BUF);
		free(*last_key);
		*last_key = strdup(f[4]);
		if (key_err && atoi(f[5]) && shown_key++ < SHOW)
			fprintf(stderr, "KEY REFUSED %s tcId %s (%s): %s\n",
				file.name, tc, f[2], cc_strerror(key_err));
	}
	if (key_err) {
		atoi(f[5]) ? file.key_refused++ : file.key_design++;
		return;
	}
	struct cc_pk_params pp = { .pad = (uint8_t)atoi(f[6]),
				   .md = (uint8_t)atoi(f[7]),
				   .mgf1_md = (uint8_t)atoi(f[8]),
				   .salt_len = atoi(f[9]) };
	int il = field(f[10], b->in), al = field(f[11], b->aad),
	    wl = strcmp(f[12], "-") ? pk_unhex(f[12], b->want, BUF) : -1;
	if (il < 0 || al < 0 || (wl < 0 && strcmp(f[12], "-"))) {
		PK_CHECK(0, "%s tcId %s: bad hex", file.name, tc);
		file.fail++;
		return;
	}
	size_t ol = BUF;
	int verify = op == CC_VERIFY;
	int st = cc_pk_op(conn, *sid, (enum cc_dir)op, &pp, b->in, (size_t)il,
			  al ? b->aad : NULL, (size_t)al,
			  verify ? NULL : b->out, verify ? NULL : &ol);
	/* an output, when there is one to compare, is the vector's */
	int right =
		st == 0 &&
		(wl < 0 || (ol == (size_t)wl && !memcmp(b->out, b->want, ol)));
	int pass;
	if (!strcmp(res, "valid")) {
		pass = right;
	} else if (!strcmp(res, "invalid")) {
		pass = refusal(st);
	} else { /* acceptable */
		pass = right || refusal(st);
		if (pass)
			st == 0 ? file.acc_yes++ : file.acc_no++;
	}
	if (pass) {
		file.pass++;
		return;
	}
	file.fail++;
	pk_fails++;
	if (shown_fail++ < SHOW)
		fprintf(stderr, "FAIL %s tcId %s (%s, %s): %s%s: %s\n",
			file.name, tc, f[2], res,
			st ? "refused: " : "succeeded",
			st ? cc_strerror(st)
			   : (wl >= 0 && !right ? " with other bytes" : ""),
			comment);
}

int main(void)
{
	const char *dir = getenv("WYCHEPROOF_DIR");
	setvbuf(stdout, NULL, _IOLBF, 0); /* in order with stderr's failures */
	struct stat sb;
	if (!dir || !*dir || stat(dir, &sb) || !S_ISDIR(sb.st_mode)) {
		printf("WYCHEPROOF_DIR (Wycheproof's testvectors_v1) not set "
		       "or not a directory: skipped\n");
		return FX_EXIT_SKIP;
	}
	struct fx_daemon d;
	struct cc_conn *conn;
	struct cc_queue *q;
	struct cc_queue_params qp = { .sq_entries = 8,
				      .cq_entries = 8,
				      .arena_size = 1 << 16 };
	if (fx_setup(&d, NULL, "test_pk_wycheproof", &qp, &conn, &q))
		return FX_EXIT_FAIL;
	pid_t pid;
	FILE *f = cases_open(dir, &pid);
	if (!f) {
		perror("python3 wycheproof_cases.py");
		fx_teardown(&d, conn, q);
		return FX_EXIT_FAIL;
	}
	struct bufs *b = malloc(sizeof(*b));
	char *line = NULL, *last_key = NULL;
	size_t cap = 0;
	uint32_t sid = 0;
	while (getline(&line, &cap, f) > 0) {
		char *fld[FIELDS + 1], *save = NULL;
		unsigned nf = 0;
		line[strcspn(line, "\n")] = 0;
		for (char *t = strtok_r(line, "\t", &save); t && nf <= FIELDS;
		     t = strtok_r(NULL, "\t", &save))
			fld[nf++] = t;
		if (nf == 2 && !strcmp(fld[0], "F")) {
			tally_end();
			snprintf(file.name, sizeof(file.name), "%s", fld[1]);
		} else if (nf == 3 && !strcmp(fld[0], "S")) {
			file.skip += (unsigned)atoi(fld[1]);
			printf("  %s: %s skipped: %s\n", file.name, fld[1],
			       fld[2]);
		} else if (nf == FIELDS && !strcmp(fld[0], "T")) {
			run_test(conn, fld + 1, b, &last_key, &sid);
		} else {
			PK_CHECK(0, "a line of %u fields from the cases", nf);
		}
	}
	tally_end();
	fclose(f);
	int ws = 0;
	waitpid(pid, &ws, 0);
	int py = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128;
	free(line);
	free(last_key);
	OPENSSL_clear_free(b, sizeof(*b));
	if (sid)
		cc_session_destroy(conn, sid);
	int rc = fx_teardown(&d, conn, q);
	if (py == FX_EXIT_SKIP) {
		printf("python3-cryptography missing: skipped\n");
		return FX_EXIT_SKIP;
	}
	printf("total: %u passed, %u failed, %u skipped (acceptable: %u "
	       "taken, %u refused); keys refused: %u tests, by design: %u "
	       "tests\n",
	       all.pass, all.fail, all.skip, all.acc_yes, all.acc_no,
	       all.key_refused, all.key_design);
	PK_CHECK(py == 0, "wycheproof_cases.py exited %d", py);
	PK_CHECK(all.pass, "no test ran");
	return pk_fails || all.key_refused || rc ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
