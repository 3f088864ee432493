/* SPDX-License-Identifier: MIT */
/*
 * A message of any length as a stream (cryptoclient.h, "Streams"): the
 * input is read CLI_CHUNK bytes at a time, each chunk goes through
 * cc_stream_update() and its output to the sink, so memory stays constant
 * whatever the input's size.
 *
 * Decrypt with the tag appended: the last tag_len bytes of the input are
 * the tag, but a pipe does not say which bytes are the last. The input
 * buffer holds CLI_CHUNK + tag_len bytes and only its first CLI_CHUNK are
 * processed while more input follows; the tag_len bytes held back move
 * to the front. At the end, what is held back is the tag, for
 * cc_stream_final().
 *
 * Length rules (CBC and ECB: whole blocks; XTS: at least a block, in the
 * last data unit too) are checked before anything is processed when the
 * input's size is known (a file), else at the end of the input: input of
 * at most one chunk still writes nothing before the check; from a pipe,
 * a longer one has had its output written to stdout up to there.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "crypt.h"

struct stream_buf {
	uint8_t *p;
	size_t cap;
};

/* Room for need bytes; the old contents need not survive. */
static int buf_reserve(struct stream_buf *b, size_t need)
{
	if (b->cap >= need)
		return 0;
	crypt_buf_free(b->p, b->cap);
	b->cap = 0;
	b->p = crypt_buf_alloc(need);
	if (!b->p)
		return -ENOMEM;
	b->cap = need;
	return 0;
}

/* One update or the final, its output (if any) to the sink. 0, or an
 * op status or -errno (reported when it is not the daemon's). */
static int step(struct cc_stream *s, struct crypt_args *a,
		struct crypt_sink *out, struct stream_buf *ob, const void *in,
		size_t len, int final)
{
	const int writes = crypt_writes(a);
	size_t olen = 0;
	int ret;

	if (writes && buf_reserve(ob, cc_stream_out_max(s, final ? 0 : len))) {
		cli_err("%s: out of memory", a->cmd);
		return 1;
	}
	if (final)
		ret = cc_stream_final(s, writes ? ob->p : NULL, &olen, a->tag);
	else
		ret = cc_stream_update(s, in, len, writes ? ob->p : NULL,
				       &olen);
	if (ret)
		return ret;
	if (writes && olen && crypt_sink_write(a, out, ob->p, olen) < 0)
		return 1; /* reported */
	return 0;
}

static int short_input(struct crypt_args *a, unsigned long long len)
{
	cli_err("%s: %llu bytes of input, less than the %u-byte tag "
		"(truncated?)",
		a->cmd, len, a->tag_len);
	return CLI_EXIT_USAGE; /* an input length, as the help says */
}

/*
 * Does the daemon refuse to stream this message where one operation would
 * do: the engine does not stream the algorithm (-EOPNOTSUPP), or the key
 * is a named AEAD key that may decrypt but not encrypt, whose plaintext
 * the daemon releases only after the tag verified (CC_ERR_POLICY at a
 * decrypt's first piece)? Why, or NULL.
 */
static const char *stream_refused(const struct crypt_args *a, int ret)
{
	if (ret == -EOPNOTSUPP)
		return "does not stream on this engine";
	if (ret == CC_ERR_POLICY && a->key_name && a->dir == CC_DECRYPT)
		return "with a decrypt-only key releases nothing before its "
		       "tag verified";
	return NULL;
}

int crypt_stream(struct crypt_conn *c, struct crypt_args *a,
		 struct crypt_src *in, struct crypt_sink *out)
{
	const char *why = NULL;
	const unsigned hold = crypt_tag_in_data(a) ? a->tag_len : 0;
	struct cc_stream_params p = {
		.session = c->sid,
		.dir = a->dir,
		.iv = a->iv_len ? a->iv : NULL,
		.iv_len = a->iv_len,
		.aad = a->aad_len ? a->aad : NULL,
		.aad_len = a->aad_len,
		.data_unit = a->data_unit,
	};
	struct stream_buf ib = { 0 }, ob = { 0 };
	struct cc_stream *s = NULL;
	uint64_t total = 0; /* data bytes through the stream */
	size_t have = 0, got, n;
	int ret, status = CLI_EXIT_FAIL;

	/* A known size passed crypt_len_check() in crypt_run(). */
	if (in->size >= 0) {
		if ((uint64_t)in->size < hold)
			return short_input(a, (unsigned long long)in->size);
		if (a->r->alg == CC_ALG_AES_CCM)
			p.msg_len = (uint64_t)in->size - hold;
	}
	ret = cc_stream_open(c->conn, &p, &s);
	if (ret < 0) {
		cli_err("%s: cannot open a stream: %s", a->cmd,
			cli_strerror(ret));
		return CLI_EXIT_FAIL;
	}
	if (buf_reserve(&ib, CLI_CHUNK + hold)) {
		cli_err("%s: out of memory", a->cmd);
		goto out;
	}

	for (;;) {
		ret = crypt_read_full(in->fd, ib.p + have, ib.cap - have, &got);
		if (ret < 0) {
			cli_err("%s: reading %s: %s", a->cmd,
				a->in_path ? a->in_path : "stdin",
				strerror(-ret));
			goto out;
		}
		have += got;
		if (have == ib.cap) {
			/* More may follow: the last hold bytes wait. */
			n = have - hold;
			ret = step(s, a, out, &ob, ib.p, n, 0);
			why = total ? NULL : stream_refused(a, ret);
			if (why)
				goto one_op;
			if (ret) {
				status = ret == 1 ? CLI_EXIT_FAIL
						  : crypt_status(a, ret);
				goto out;
			}
			total += n;
			crypt_progress_add(a, n);
			memmove(ib.p, ib.p + n, hold);
			have = hold;
			continue;
		}
		/* The end: what is held back is the tag. */
		if (have < hold) {
			status = short_input(a, total + have);
			goto out;
		}
		n = have - hold;
		if (in->size < 0 && crypt_len_check(a, total + n)) {
			status = CLI_EXIT_USAGE;
			goto out;
		}
		memcpy(a->tag, ib.p + n, hold);
		ret = n ? step(s, a, out, &ob, ib.p, n, 0) : 0;
		if (!ret)
			ret = step(s, a, out, &ob, NULL, 0, 1);
		/* total 0: all the input so far is in ib, nothing written */
		why = total ? NULL : stream_refused(a, ret);
		if (why)
			goto one_op;
		if (!ret)
			crypt_progress_add(a, n);
		status = ret == 1 ? CLI_EXIT_FAIL : crypt_status(a, ret);
		break;
	}
	if (status == CLI_EXIT_OK && a->dir == CC_ENCRYPT && a->tag_len &&
	    crypt_put_tag(a, out) < 0)
		status = CLI_EXIT_FAIL;
	goto out;

one_op:
	/* The daemon said at the first piece that it does not stream this
	 * (stream_refused). One operation does the same, up to 16 MiB,
	 * except XTS in data units: one operation is one unit. */
	cc_stream_free(s);
	s = NULL;
	if (a->data_unit)
		cli_err("%s: the engine does not stream %s, and --data-unit "
			"needs a stream",
			a->cmd, a->alg_name);
	else
		status = crypt_oneshot(c, a, in, out, why, ib.p, have);
out:
	cc_stream_free(s);
	crypt_buf_free(ib.p, ib.cap);
	crypt_buf_free(ob.p, ob.cap);
	return status;
}
