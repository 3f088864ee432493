/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl encrypt / decrypt / digest / mac: the session (created before
 * the input is read, so the key leaves this process early) and the one
 * operation, either through the session (cc_crypt()) or session-less (the
 * keys travel with the op, through the burst API on a queue of our own).
 * What runs in the session (a stream or one operation) is crypt_run.c's
 * choice, above this file and crypt_stream.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cryptod/clock.h>

#include "crypt.h"
#include "hex.h"

/*
 * Connect and, unless --sessionless, hand the keys to the daemon. On
 * failure the reason is reported and -errno returned.
 */
int crypt_open(struct cli *cli, struct crypt_args *a, struct crypt_conn *c)
{
	struct cc_session_params sp = {
		.alg = a->r->alg,
		.key = a->key,
		.key_len = a->key_len,
		.auth_key = a->have_auth_key ? a->auth_key : NULL,
		.auth_key_len = a->auth_key_len,
		.tag_len = a->tag_len,
		.engine = a->engine,
		.key_name = a->key_name,
	};
	const char *why;
	int ret;

	c->sid = 0;
	ret = cli_connect(cli, &c->conn);
	if (ret < 0)
		return ret;
	if (a->sessionless)
		return 0; /* the keys stay here until the op carries them */

	ret = cc_session_create(c->conn, &sp, &c->sid);
	crypt_args_wipe(a);
	if (!ret)
		return 0;

	why = cc_conn_last_error(c->conn);
	cli_err("%s: cannot create the session: %s%s%s", a->cmd,
		cli_strerror(ret), *why ? ": " : "", why);
	cc_disconnect(c->conn);
	c->conn = NULL;
	return ret;
}

void crypt_close(struct crypt_conn *c)
{
	if (!c->conn)
		return;
	/* The daemon drops the session with the connection anyway; destroy
	 * it explicitly so that its key is wiped now. */
	if (c->sid)
		cc_session_destroy(c->conn, c->sid);
	cc_disconnect(c->conn);
	c->conn = NULL;
}

static size_t align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* The completion of our single op: 0 and *cpl, or -errno. */
static int wait_one(struct cc_queue *q, struct cc_completion *cpl)
{
	int n;

	for (;;) {
		n = cc_dequeue_burst(q, cpl, 1);
		if (n < 0)
			return n;
		if (n == 1)
			return 0;
		n = cc_wait(q, CRD_WAIT_MAX_MS);
		if (n < 0)
			return n;
		if (!n)
			return -ETIMEDOUT;
	}
}

/*
 * One session-less op on a queue opened for it, its arena laid out as
 * params | data | aad | iv | tag, each 64-byte aligned (the IV there only
 * when the descriptor cannot hold it). Every byte of it is wiped before
 * the queue is closed: the params hold both keys.
 */
static int op_sessionless(struct cc_conn *conn, struct crypt_args *a,
			  uint8_t *data, size_t len)
{
	const size_t data_off = align64(sizeof(struct cc_sessionless));
	const size_t aad_off = data_off + align64(len ? len : 1);
	const size_t iv_arena = a->iv_len > CC_IV_INLINE ? a->iv_len : 0;
	const size_t iv_off = aad_off + align64(a->aad_len);
	const size_t tag_off = iv_off + align64(iv_arena);
	const size_t need = tag_off + align64(CLI_TAG_MAX);
	/* 8: the smallest ring the daemon makes (CRD_RING_MIN_ENTRIES). */
	struct cc_queue_params qp = { .sq_entries = 8, .cq_entries = 8 };
	struct cc_completion cpl;
	struct cc_sessionless *sl;
	struct cc_queue *q;
	struct cc_op op;
	uint8_t *base;
	int ret;

	/* The daemon's smallest arena is 64 KiB; it rounds up to pages. */
	qp.arena_size = need < (64u << 10) ? 64u << 10 : need + 4096;
	ret = cc_queue_open(conn, &qp, &q);
	if (ret < 0)
		return ret;
	base = cc_buf_alloc(q, need);
	if (!base) {
		ret = -ENOMEM;
		goto out_close;
	}

	sl = (struct cc_sessionless *)base;
	memset(sl, 0, sizeof(*sl));
	sl->alg = (uint8_t)a->r->alg;
	sl->key_len = (uint8_t)a->key_len;
	sl->auth_key_len = (uint8_t)a->auth_key_len;
	sl->tag_len = (uint8_t)a->tag_len;
	memcpy(sl->key, a->key, a->key_len);
	memcpy(sl->auth_key, a->auth_key, a->auth_key_len);
	crypt_args_wipe(a);
	memcpy(base + data_off, data, len);
	memcpy(base + aad_off, a->aad, a->aad_len);
	memcpy(base + iv_off, a->iv, iv_arena);
	if (a->dir == CC_DECRYPT)
		memcpy(base + tag_off, a->tag, a->tag_len);

	op = (struct cc_op){
		.user_data = 1,
		.dir = a->dir,
		.src = base + data_off,
		.dst = base + data_off,
		.len = (uint32_t)len,
		.aad = a->aad_len ? base + aad_off : NULL,
		.aad_len = a->aad_len,
		.tag = base + tag_off,
		.iv = iv_arena ? base + iv_off : a->iv,
		.iv_len = a->iv_len,
		.sessionless = sl,
	};
	ret = cc_enqueue_burst(q, &op, 1);
	if (ret == 0)
		ret = -EBUSY; /* cannot happen: a fresh queue */
	if (ret < 0)
		goto out_wipe;
	ret = wait_one(q, &cpl);
	if (ret < 0)
		goto out_wipe;

	ret = cpl.status;
	if (ret == CC_OK && !a->r->mac_only)
		memcpy(data, base + data_off, len);
	if (ret == CC_OK && a->dir == CC_ENCRYPT)
		memcpy(a->tag, base + tag_off, a->tag_len);
out_wipe:
	/* After a time-out the daemon may still be at it: closing the
	 * queue stops it; wiping first costs nothing. */
	explicit_bzero(base, need);
	cc_buf_free(q, base);
out_close:
	cc_queue_close(q);
	return ret;
}

/*
 * Run the op in place on data[0..len): 0, CC_ERR_AUTH_FAILED (data
 * zeroed by the library or left as it was), another status or -errno.
 */
int crypt_do(struct crypt_conn *c, struct crypt_args *a, uint8_t *data,
	     size_t len)
{
	const void *aad = a->aad_len ? a->aad : NULL;

	if (a->sessionless)
		return op_sessionless(c->conn, a, data, len);
	/* the 3GPP algorithms count bits (whole bytes here) */
	return cc_crypt(c->conn, c->sid, a->dir, a->iv, a->iv_len, aad,
			a->aad_len, data, data,
			crd_alg_bit_len(a->r->alg) ? len * 8 : len, a->tag);
}

int crypt_put_tag(struct crypt_args *a, struct crypt_sink *out)
{
	char hex[2 * CLI_TAG_MAX + 2];
	int ret;

	if (a->what == CRYPT_CMD_CRYPT && !a->tag_hex)
		return crypt_sink_write(a, out, a->tag, a->tag_len);
	if (a->binary)
		return crypt_sink_write(a, out, a->tag, a->tag_len);
	hex_encode(a->tag, a->tag_len, hex);
	strcat(hex, "\n");
	if (a->what != CRYPT_CMD_CRYPT)
		return crypt_sink_write(a, out, hex, strlen(hex));
	cli_end_line(); /* after a --progress line drawn in place */
	ret = crypt_write_all(STDERR_FILENO, hex, strlen(hex));
	if (ret < 0)
		cli_err("%s: writing the tag to stderr: %s", a->cmd,
			strerror(-ret));
	return ret;
}

int crypt_status(struct crypt_args *a, int ret)
{
	if (ret == CC_ERR_AUTH_FAILED) {
		/* Not one byte of the forgery's plaintext goes out. */
		if (a->what == CRYPT_CMD_CRYPT)
			cli_err("authentication failed: tag mismatch");
		else
			cli_err("%s: verification failed: %s mismatch", a->cmd,
				a->what == CRYPT_CMD_MAC ? "MAC" : "digest");
		return CLI_EXIT_AUTH;
	}
	if (ret < 0) {
		cli_err("%s: %s", a->cmd, cli_strerror(ret));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

void crypt_too_large(const struct crypt_args *a, const char *why)
{
	cli_err("%s: input larger than %u MiB%s, one operation's most (%s %s)",
		a->cmd, CLI_DATA_MAX >> 20,
		crypt_tag_in_data(a) ? " plus the tag" : "", a->alg_name, why);
}

/*
 * The input buffer of the one-shot path: one private anonymous mapping of
 * the largest input, so reading never reallocates (which would leave
 * copies of the plaintext in freed memory) and only the pages actually
 * read are ever committed.
 */
int crypt_oneshot(struct crypt_conn *c, struct crypt_args *a,
		  struct crypt_src *in, struct crypt_sink *out, const char *why,
		  const uint8_t *pre, size_t pre_len)
{
	const int tag_in_data = crypt_tag_in_data(a);
	const size_t max = CLI_DATA_MAX + (tag_in_data ? a->tag_len : 0);
	/* One byte past max tells "exactly max" from "too large". */
	const size_t cap = max + 1;
	int ret, status = CLI_EXIT_FAIL;
	size_t len;
	uint8_t *p;

	p = crypt_buf_alloc(cap);
	if (!p) {
		cli_err("%s: out of memory", a->cmd);
		return CLI_EXIT_FAIL;
	}
	if (pre_len > cap)
		pre_len = cap; /* cannot happen: a stream reads 1 MiB first */
	if (pre_len)
		memcpy(p, pre, pre_len);
	ret = crypt_read_full(in->fd, p + pre_len, cap - pre_len, &len);
	len += pre_len;
	if (ret < 0) {
		cli_err("%s: reading %s: %s", a->cmd,
			a->in_path ? a->in_path : "stdin", strerror(-ret));
		goto out;
	}
	if (len > max) {
		crypt_too_large(a, why);
		goto out;
	}
	if (tag_in_data) {
		if (len < a->tag_len) {
			cli_err("%s: %zu bytes of input, less than the "
				"%u-byte tag (truncated?)",
				a->cmd, len, a->tag_len);
			status = CLI_EXIT_USAGE; /* an input length */
			goto out;
		}
		len -= a->tag_len;
		memcpy(a->tag, p + len, a->tag_len);
	}
	/* The op never reaches the daemon with a length it would refuse. */
	if (crypt_len_check(a, len)) {
		status = CLI_EXIT_USAGE;
		goto out;
	}
	status = crypt_status(a, crypt_do(c, a, p, len));
	if (status != CLI_EXIT_OK)
		goto out;
	crypt_progress_add(a, len);

	/* GMAC, MACs and digests authenticate the data without
	 * transforming it: encrypt writes the tag alone, decrypt and
	 * --verify nothing. */
	ret = 0;
	if (crypt_writes(a))
		ret = crypt_sink_write(a, out, p, len);
	if (!ret && a->dir == CC_ENCRYPT && a->tag_len)
		ret = crypt_put_tag(a, out);
	if (ret < 0)
		status = CLI_EXIT_FAIL;
out:
	crypt_buf_free(p, cap);
	return status;
}
