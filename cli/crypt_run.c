/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl encrypt / decrypt / digest / mac, the driver: open input and
 * output, create the session (crypt_op.c), run the message as a stream
 * (crypt_stream.c) or as one operation (crypt_op.c), commit or abort the
 * output. Above both: neither calls back here.
 */
#include <errno.h>
#include <stdint.h>

#include "crypt.h"

/* Does the command write anything (not GMAC decrypt, not --verify)? */
static int has_output(const struct crypt_args *a)
{
	return crypt_writes(a) || a->dir == CC_ENCRYPT;
}

int crypt_run(struct cli *cli, struct crypt_args *a)
{
	const char *why = crypt_why_oneshot(a);
	/* Streamed, an AEAD's plaintext is out before its tag is checked. */
	const int verify =
		!why && a->dir == CC_DECRYPT && a->tag_len && crypt_writes(a);
	struct crypt_sink out = { .fd = -1, .dest = -1 };
	struct crypt_src in = { .fd = -1 };
	struct crypt_conn c = { 0 };
	int status = CLI_EXIT_USAGE, ret;
	int64_t hold;

	/* Files first: a wrong name costs nothing but one line. */
	ret = crypt_src_open(a, &in);
	if (ret == -EBADF)
		status = CLI_EXIT_FAIL;
	if (ret)
		return status;
	/* A file's length is known: a wrong one costs one line too. */
	hold = crypt_tag_in_data(a) ? a->tag_len : 0;
	if (in.size >= hold && crypt_len_check(a, (uint64_t)in.size - hold)) {
		crypt_src_close(&in);
		return CLI_EXIT_USAGE;
	}
	if (why && in.size > (int64_t)CLI_DATA_MAX + hold) {
		crypt_too_large(a, why);
		crypt_src_close(&in);
		return CLI_EXIT_FAIL;
	}
	ret = has_output(a) ? crypt_sink_open(a, &out, verify) : 0;
	if (ret) {
		crypt_src_close(&in);
		return ret == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	}

	/* Before the input: an unreachable daemon or a refused key fails at
	 * once, and the key leaves this process before input of unbounded
	 * duration. */
	status = CLI_EXIT_FAIL;
	if (crypt_open(cli, a, &c) < 0)
		goto out;
	/* CCM's first block holds the message length. */
	if (!why && a->r->alg == CC_ALG_AES_CCM && in.size < 0) {
		if (crypt_src_spool(a, &in) < 0)
			goto out;
		if (in.size >= hold &&
		    crypt_len_check(a, (uint64_t)in.size - hold)) {
			status = CLI_EXIT_USAGE;
			goto out;
		}
	}
	crypt_progress_start(a, in.size >= hold ? in.size - hold : in.size);
	if (why)
		status = crypt_oneshot(&c, a, &in, &out, why, NULL, 0);
	else
		status = crypt_stream(&c, a, &in, &out);
	crypt_progress_end(a, status == CLI_EXIT_OK);
	if (status == CLI_EXIT_OK && has_output(a))
		status = crypt_sink_commit(a, &out);
out:
	if (status != CLI_EXIT_OK)
		crypt_sink_abort(&out);
	crypt_close(&c);
	crypt_src_close(&in);
	return status;
}
