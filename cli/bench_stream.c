/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl bench stream: one message of --total MiB as a stream of
 * --piece KiB pieces against the same bytes as one-shot ops of that size,
 * alternating round by round, through the zero-copy API with the same
 * queue depth. Before timing, a stream and a one-shot op are checked
 * against OpenSSL EVP (incremental for the stream).
 *
 * What it says: the cost of keeping a message's state in the daemon and
 * running its pieces in order. A stream runs on one worker at a time (its
 * pieces depend on each other); one-shot ops of a queue spread over every
 * worker, and so do the pieces of --streams messages at once on the
 * queue, so compare with one worker (the default) for the per-op cost,
 * with more for what parallel ops and streams gain.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>

#include "bench_cli.h"
#include "cli.h"

static const char bs_usage[] =
	"Usage: cryptoctl bench stream [OPTIONS]\n"
	"\n"
	"AES-GCM: one message of --total MiB as a stream of --piece KiB\n"
	"pieces (or --streams messages at once, their pieces interleaved\n"
	"on the queue) against one-shot ops of --piece KiB over the same\n"
	"bytes, alternating round by round, zero-copy, --depth ops in\n"
	"flight.\n"
	"Both are checked against OpenSSL first. Prints the machine, each\n"
	"round and the medians.\n"
	"\n"
	"      --spawn-daemon BIN  start BIN on a private socket for the run\n"
	"      --workers N         its workers (default 1: a stream runs on\n"
	"                          one worker at a time; the streams of one\n"
	"                          queue on several at once)\n"
	"      --poll-mode adaptive|busy\n"
	"      --cpu N             run the client on CPU N (the daemon keeps\n"
	"                          the others)\n"
	"      --key-bits 128|192|256  (default 128)\n"
	"      --total MIB         the message (default 1024)\n"
	"      --piece KIB         piece and op size (default 64)\n"
	"      --streams N         messages at once, --total MiB in all\n"
	"                          (default 1, at most 32)\n"
	"      --depth N           ops in flight (default 32)\n"
	"      --rounds N          (default 5)\n"
	"  -s, --socket PATH       a running daemon instead\n"
	"  -h, --help\n";

struct bs_cfg {
	const char *spawn, *poll_mode, *socket;
	unsigned workers, key_bits, total_mib, piece_kib, depth, rounds;
	unsigned streams;
	int cpu;
};

/* BS_STREAMS: a queue's open streams at most (cryptoclient.h) */
enum { BS_BUFS = 128, BS_TAG = 16, BS_STREAMS = 32 };

struct bs_run {
	struct cc_conn *conn;
	struct cc_queue *q;
	uint32_t sid;
	uint8_t *buf[BS_BUFS], *tag[BS_BUFS];
	uint32_t piece;
	unsigned streams; /* messages at once in a stream pass */
	uint8_t iv[12];
};

/* Push nops ops through q, depth in flight: one-shot ops, or
 * r->streams streams (op i a piece of stream i % r->streams; nops a
 * multiple of it). Returns Gbps, or < 0 on a failed op. */
static double bs_pass(struct bs_run *r, uint64_t nops, unsigned depth,
		      int stream)
{
	uint32_t handle[BS_STREAMS] = { 0 };
	unsigned ns = stream ? r->streams : 0;
	for (unsigned k = 0; k < ns; k++)
		if (cc_stream_handle_get(r->q, &handle[k])) {
			while (k--)
				cc_stream_handle_put(r->q, handle[k]);
			return -1;
		}
	uint64_t per = stream ? nops / ns : 0; /* pieces of each stream */
	uint64_t sent = 0, done = 0;
	int bad = 0;
	double t0 = bench_now();
	while (done < nops) {
		struct cc_op ops[16];
		unsigned n = 0;
		while (n < 16 && sent + n < nops && sent + n - done < depth) {
			uint64_t i = sent + n;
			struct cc_op *op = &ops[n++];
			memset(op, 0, sizeof(*op));
			op->user_data = i;
			op->session = r->sid;
			op->dir = CC_ENCRYPT;
			op->src = op->dst = r->buf[i % BS_BUFS];
			op->len = r->piece;
			/* the piece's place in its stream */
			uint64_t p = stream ? i / ns : 0;
			if (stream) {
				op->stream = handle[i % ns];
				op->stream_flags =
					(p == 0 ? CC_STREAM_FIRST : 0) |
					(p == per - 1 ? CC_STREAM_LAST : 0);
			}
			if (p == 0) {
				op->iv = r->iv;
				op->iv_len = sizeof(r->iv);
			}
			if (!stream || p == per - 1)
				op->tag = r->tag[i % BS_BUFS];
		}
		if (n) {
			int k = cc_enqueue_burst(r->q, ops, n);
			if (k < 0)
				return -1; /* the queue is dead: no handle to keep */
			sent += (unsigned)k;
		}
		struct cc_completion c[32];
		int k = cc_dequeue_burst(r->q, c, 32);
		if (k < 0)
			return -1;
		for (int j = 0; j < k; j++)
			bad |= c[j].status != CC_OK;
		done += (unsigned)k;
		if (!k && sent - done >= depth && cc_wait(r->q, 10000) < 0)
			return -1; /* the daemon is gone */
	}
	double dt = bench_now() - t0;
	for (unsigned k = 0; k < ns; k++)
		cc_stream_handle_put(r->q, handle[k]);
	return bad ? -1 : (double)nops * r->piece * 8 / dt / 1e9;
}

/* The stream of n pieces and one-shot ops out of place against OpenSSL:
 * 0 when both agree byte for byte. */
static int bs_verify(struct bs_run *r, const uint8_t *key, unsigned klen)
{
	const unsigned n = 8;
	const EVP_CIPHER *c = klen == 16   ? EVP_aes_128_gcm()
			      : klen == 24 ? EVP_aes_192_gcm()
					   : EVP_aes_256_gcm();
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	uint8_t *in = cc_buf_alloc(r->q, (size_t)n * r->piece);
	uint8_t *out = cc_buf_alloc(r->q, (size_t)n * r->piece);
	uint8_t *ref = malloc((size_t)n * r->piece);
	int bad = !x || !in || !out || !ref;
	uint8_t tag[BS_TAG], *dtag = r->tag[0];
	uint32_t handle;
	if (!bad)
		bad = cc_stream_handle_get(r->q, &handle) != 0;
	if (!bad) {
		(void)getrandom(in, (size_t)n * r->piece, 0);
		struct cc_op ops[8];
		memset(ops, 0, sizeof(ops));
		for (unsigned i = 0; i < n; i++) {
			ops[i] = (struct cc_op){
				.user_data = i,
				.session = r->sid,
				.dir = CC_ENCRYPT,
				.src = in + (size_t)i * r->piece,
				.dst = out + (size_t)i * r->piece,
				.len = r->piece,
				.stream = handle,
				.stream_flags =
					(i == 0 ? CC_STREAM_FIRST : 0) |
					(i == n - 1 ? CC_STREAM_LAST : 0),
				.iv = i == 0 ? r->iv : NULL,
				.iv_len = i == 0 ? sizeof(r->iv) : 0,
				.tag = i == n - 1 ? dtag : NULL,
			};
		}
		bad = cc_enqueue_burst(r->q, ops, n) != (int)n;
		for (unsigned got = 0; !bad && got < n;) {
			struct cc_completion cp[8];
			int k = cc_dequeue_burst(r->q, cp, 8);
			for (int j = 0; j < k; j++)
				bad |= cp[j].status != CC_OK ||
				       cp[j].len != r->piece;
			got += k > 0 ? (unsigned)k : 0;
			if (k <= 0 && cc_wait(r->q, 10000) <= 0)
				bad = 1;
		}
		if (!bad) /* every piece completed: the stream is over */
			cc_stream_handle_put(r->q, handle);
	}
	int outl;
	if (!bad)
		bad = !EVP_EncryptInit_ex(x, c, NULL, key, r->iv) ||
		      !EVP_EncryptUpdate(x, ref, &outl, in,
					 (int)(n * r->piece)) ||
		      !EVP_EncryptFinal_ex(x, ref + outl, &outl) ||
		      !EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, BS_TAG,
					   tag) ||
		      memcmp(ref, out, (size_t)n * r->piece) ||
		      memcmp(tag, dtag, BS_TAG);
	/* One-shot: the first piece alone. */
	if (!bad) {
		uint8_t t1[BS_TAG];
		int r1 =
			cc_crypt(r->conn, r->sid, CC_ENCRYPT, r->iv,
				 sizeof(r->iv), NULL, 0, in, out, r->piece, t1);
		bad = r1 != 0 || !EVP_EncryptInit_ex(x, c, NULL, key, r->iv) ||
		      !EVP_EncryptUpdate(x, ref, &outl, in, (int)r->piece) ||
		      !EVP_EncryptFinal_ex(x, ref + outl, &outl) ||
		      !EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, BS_TAG,
					   tag) ||
		      memcmp(ref, out, r->piece) || memcmp(tag, t1, BS_TAG);
	}
	EVP_CIPHER_CTX_free(x);
	free(ref);
	cc_buf_free(r->q, in);
	cc_buf_free(r->q, out);
	return bad ? -1 : 0;
}

static int bs_parse(struct bs_cfg *c, int argc, char **argv)
{
	enum {
		O_SPAWN = 256,
		O_WORKERS,
		O_POLL,
		O_CPU,
		O_BITS,
		O_TOTAL,
		O_PIECE,
		O_DEPTH,
		O_ROUNDS,
		O_STREAMS
	};
	static const struct option lo[] = {
		{ "spawn-daemon", required_argument, NULL, O_SPAWN },
		{ "workers", required_argument, NULL, O_WORKERS },
		{ "poll-mode", required_argument, NULL, O_POLL },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "key-bits", required_argument, NULL, O_BITS },
		{ "total", required_argument, NULL, O_TOTAL },
		{ "piece", required_argument, NULL, O_PIECE },
		{ "depth", required_argument, NULL, O_DEPTH },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "streams", required_argument, NULL, O_STREAMS },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	*c = (struct bs_cfg){ .workers = 1,
			      .key_bits = 128,
			      .total_mib = 1024,
			      .piece_kib = 64,
			      .depth = 32,
			      .rounds = 5,
			      .streams = 1,
			      .cpu = -1 };
	optind = 1;
	int o;
	unsigned v;
	while ((o = getopt_long(argc, argv, "s:h", lo, NULL)) != -1) {
		switch (o) {
		case O_SPAWN:
			c->spawn = optarg;
			continue;
		case O_POLL:
			c->poll_mode = optarg;
			continue;
		case 's':
			c->socket = optarg;
			continue;
		case 'h':
			fputs(bs_usage, stdout);
			return 1;
		case '?':
			return -EINVAL;
		}
		static const struct {
			int o;
			const char *name;
			unsigned lo, hi;
		} lim[] = { { O_WORKERS, "--workers", 1, 64 },
			    { O_CPU, "--cpu", 0, 4095 },
			    { O_BITS, "--key-bits", 128, 256 },
			    { O_TOTAL, "--total", 1, 1u << 20 },
			    { O_PIECE, "--piece", 1, 16384 },
			    { O_DEPTH, "--depth", 1, 128 },
			    { O_ROUNDS, "--rounds", 1, 99 },
			    { O_STREAMS, "--streams", 1, BS_STREAMS } };
		for (unsigned i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
			if (lim[i].o == o &&
			    bench_parse_uint(lim[i].name, optarg, lim[i].lo,
					     lim[i].hi, &v))
				return -EINVAL;
		switch (o) {
		case O_WORKERS:
			c->workers = v;
			break;
		case O_CPU:
			c->cpu = (int)v;
			break;
		case O_BITS:
			if (v != 128 && v != 192 && v != 256) {
				cli_usage_err("bench", "--key-bits: 128, 192 "
						       "or 256");
				return -EINVAL;
			}
			c->key_bits = v;
			break;
		case O_TOTAL:
			c->total_mib = v;
			break;
		case O_PIECE:
			c->piece_kib = v;
			break;
		case O_DEPTH:
			c->depth = v;
			break;
		case O_ROUNDS:
			c->rounds = v;
			break;
		case O_STREAMS:
			c->streams = v;
			break;
		}
	}
	return cli_no_args("bench", argc, argv) ? -EINVAL : 0;
}

int bp_stream(int argc, char **argv)
{
	struct bs_cfg cfg;
	int rc = bs_parse(&cfg, argc, argv);
	if (rc)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	struct bench_spawn spawn = { 0 };
	char sock[BENCH_PATH_MAX] = "";
	if (cfg.socket)
		snprintf(sock, sizeof(sock), "%s", cfg.socket);
	if (cfg.spawn) {
		const struct bench_spawn_opts so = { .bin = cfg.spawn,
						     .workers = cfg.workers,
						     .poll_mode = cfg.poll_mode,
						     .avoid_cpu = cfg.cpu };
		if (bench_spawn_start(&spawn, &so) < 0)
			return CLI_EXIT_FAIL;
		snprintf(sock, sizeof(sock), "%s", spawn.sock);
	}
	if (cfg.cpu >= 0)
		bench_pin_cpu(cfg.cpu);
	struct bench_env env;
	bench_env_start(&env, stdout, &spawn.pid, spawn.pid ? 1 : 0);

	int ret = CLI_EXIT_FAIL;
	struct cc_conn *conn = NULL;
	struct bs_run r = { .piece = cfg.piece_kib << 10,
			    .streams = cfg.streams };
	uint8_t key[32];
	unsigned klen = cfg.key_bits / 8;
	(void)getrandom(key, sizeof(key), 0);
	(void)getrandom(r.iv, sizeof(r.iv), 0);
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = klen };
	struct cc_queue_params qp = {
		.sq_entries = 256,
		.arena_size = (size_t)(BS_BUFS + 16) * r.piece + (1 << 20),
	};
	rc = cc_connect(sock[0] ? sock : NULL, "cryptoctl-bench-stream", &conn);
	r.conn = conn;
	if (!rc)
		rc = cc_session_create(conn, &sp, &r.sid);
	if (!rc)
		rc = cc_queue_open(conn, &qp, &r.q);
	for (unsigned i = 0; !rc && i < BS_BUFS; i++) {
		r.buf[i] = cc_buf_alloc(r.q, r.piece);
		r.tag[i] = cc_buf_alloc(r.q, 64);
		if (!r.buf[i] || !r.tag[i])
			rc = -ENOMEM;
		else
			memset(r.buf[i], (int)i, r.piece);
	}
	if (rc) {
		cli_err("bench stream: %s", cli_strerror(rc));
		goto out;
	}
	if (bs_verify(&r, key, klen)) {
		cli_err("bench stream: the daemon's AES-GCM stream or op "
			"differs from OpenSSL's");
		goto out;
	}
	printf("verified: a stream of 8 pieces and a one-shot op match "
	       "OpenSSL\n\n");

	uint64_t nops = ((uint64_t)cfg.total_mib << 20) / r.piece;
	nops -= nops % cfg.streams;
	if (nops == 0) {
		cli_err("bench stream: --total %u MiB holds fewer than "
			"--streams %u pieces of %u KiB",
			cfg.total_mib, cfg.streams, cfg.piece_kib);
		goto out;
	}
	double one[99], str[99], ratio[99];
	printf("== aes-%u-gcm encrypt: %u MiB, %u KiB pieces/ops, %u "
	       "stream%s, %u in flight, %u worker%s ==\n",
	       cfg.key_bits, cfg.total_mib, cfg.piece_kib, cfg.streams,
	       cfg.streams == 1 ? "" : "s", cfg.depth, cfg.workers,
	       cfg.workers == 1 ? "" : "s");
	printf("%5s  %13s  %11s  %15s\n", "round", "one-shot Gbps",
	       "stream Gbps", "stream/one-shot");
	for (unsigned k = 0; k < cfg.rounds; k++) {
		/* Alternate which goes first. */
		int sfirst = k & 1;
		double a = bs_pass(&r, nops, cfg.depth, sfirst);
		double b = bs_pass(&r, nops, cfg.depth, !sfirst);
		one[k] = sfirst ? b : a;
		str[k] = sfirst ? a : b;
		if (one[k] < 0 || str[k] < 0) {
			cli_err("bench stream: an op failed");
			goto out;
		}
		ratio[k] = str[k] / one[k];
		printf("%5u  %13.2f  %11.2f  %15.2f\n", k + 1, one[k], str[k],
		       ratio[k]);
		fflush(stdout);
	}
	double mr = bench_median(ratio, cfg.rounds);
	printf("%5s  %13.2f  %11.2f  %15.2f\n", "median",
	       bench_median(one, cfg.rounds), bench_median(str, cfg.rounds),
	       mr);
	printf("\nstream/one-shot is the median of the per-round ratios "
	       "(1.00: a stream costs\nwhat one-shot ops of its piece size "
	       "cost).\n");
	bench_env_end(&env, stdout, &spawn.pid, spawn.pid ? 1 : 0,
		      "the rounds");
	ret = CLI_EXIT_OK;
out:
	explicit_bzero(key, sizeof(key));
	if (r.q)
		cc_queue_close(r.q);
	cc_disconnect(conn);
	if (cfg.spawn && bench_spawn_stop(&spawn) != 0)
		ret = CLI_EXIT_FAIL;
	return ret;
}
