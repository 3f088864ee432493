/* SPDX-License-Identifier: MIT */
/*
 * obs_load: a client with a known workload, so that test_obs.sh can check
 * the daemon's counters exactly. On one AES-128-GCM session it runs N
 * encrypts of LEN bytes, then F decrypts with a wrong tag (authentication
 * failures), then E ops naming a session it does not have (errors); prints
 * "ready" and holds its queue and session until stdin reaches EOF.
 *
 *   obs_load SOCKET NAME N F E LEN
 *   obs_load --as-nobody PROGRAM ARGS...
 *
 * The second form forks, drops to nobody (setresgid/setresuid) in the
 * child, runs PROGRAM there and exits with its status: the tests run as
 * root and need a client that is not an administrator.
 */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cryptoclient.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "obs_load: %s: %s\n", what, cc_strerror(err));
	return 1;
}

static int as_nobody(char **argv)
{
	struct passwd *pw = getpwnam("nobody");
	pid_t pid;
	int st;

	if (!pw) {
		fprintf(stderr, "obs_load: no user nobody\n");
		return 77;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (setgroups(0, NULL) ||
		    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) ||
		    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid)) {
			perror("obs_load: dropping to nobody");
			_exit(126);
		}
		execv(argv[0], argv);
		perror("obs_load: exec");
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Submit one op and wait for its completion; its status in *status. */
static int run_one(struct cc_queue *q, const struct cc_op *op, int *status)
{
	struct cc_completion cqe;
	int ret = cc_enqueue_burst(q, op, 1);

	if (ret != 1)
		return ret < 0 ? ret : -11;
	while ((ret = cc_dequeue_burst(q, &cqe, 1)) == 0) {
		ret = cc_wait(q, 1000);
		if (ret < 0)
			return ret;
	}
	if (ret < 0)
		return ret;
	*status = cqe.status;
	return 0;
}

int main(int argc, char **argv)
{
	static const uint8_t key[16] = { 1, 2,	3,  4,	5,  6,	7,  8,
					 9, 10, 11, 12, 13, 14, 15, 16 };
	struct cc_session_params sp = {
		.alg = CC_ALG_AES_GCM,
		.key = key,
		.key_len = sizeof(key),
	};
	uint8_t iv[12] = { 0 };
	struct cc_queue *q;
	struct cc_conn *conn;
	struct cc_op op;
	unsigned n, nf, ne, len, i;
	uint32_t sid;
	uint8_t *buf, *tag;
	int ret, st;

	if (argc >= 3 && !strcmp(argv[1], "--as-nobody"))
		return as_nobody(argv + 2);
	if (argc != 7)
		return 2;
	n = (unsigned)atoi(argv[3]);
	nf = (unsigned)atoi(argv[4]);
	ne = (unsigned)atoi(argv[5]);
	len = (unsigned)atoi(argv[6]);

	ret = cc_connect(argv[1], argv[2], &conn);
	if (ret < 0)
		return fail("connect", ret);
	ret = cc_session_create(conn, &sp, &sid);
	if (ret < 0)
		return fail("session", ret);
	ret = cc_queue_open(conn, NULL, &q);
	if (ret < 0)
		return fail("queue", ret);
	buf = cc_buf_alloc(q, len);
	tag = cc_buf_alloc(q, 16);
	if (!buf || !tag)
		return fail("buf", -12);
	memset(buf, 0x5a, len);

	memset(&op, 0, sizeof(op));
	op.session = sid;
	op.src = buf;
	op.len = len;
	op.iv = iv;
	op.iv_len = sizeof(iv);
	op.tag = tag;
	op.dir = CC_ENCRYPT;
	for (i = 0; i < n; i++) {
		op.user_data = i;
		ret = run_one(q, &op, &st);
		if (ret < 0 || st != CC_OK)
			return fail("encrypt", ret < 0 ? ret : st);
	}
	op.dir = CC_DECRYPT;
	for (i = 0; i < nf; i++) {
		memset(tag, 0xee, 16); /* never the right tag */
		ret = run_one(q, &op, &st);
		if (ret < 0 || st != CC_ERR_AUTH_FAILED)
			return fail("forged decrypt", ret < 0 ? ret : st);
	}
	op.dir = CC_ENCRYPT;
	op.session = sid + 100; /* not ours */
	for (i = 0; i < ne; i++) {
		ret = run_one(q, &op, &st);
		if (ret < 0 || st == CC_OK)
			return fail("bad session", ret < 0 ? ret : -22);
	}

	printf("ready\n");
	fflush(stdout);
	while (getchar() != EOF)
		;
	cc_queue_close(q);
	cc_session_destroy(conn, sid);
	cc_disconnect(conn);
	return 0;
}
