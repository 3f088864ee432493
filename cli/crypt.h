/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl encrypt / decrypt / digest / mac, shared between their files:
 * cmd_crypt.c (encrypt and decrypt: options, help), cmd_digest.c (digest
 * and mac), crypt_args.c (the options they share: keys, files), crypt_alg.c
 * (what each algorithm accepts), crypt_io.c (input, output, temporary
 * files), crypt_op.c (the session and the one-shot operation),
 * crypt_stream.c (a message of any length as a stream of updates) and
 * crypt_run.c (which of the two runs, over input and output).
 */
#ifndef CRYPTOCTL_CRYPT_H
#define CRYPTOCTL_CRYPT_H

#include <getopt.h>
#include <string.h>

#include <cryptod/ring_abi.h>

#include "cli.h"

enum crypt_key {
	CRYPT_KEY_NONE, /* null: a key would suggest the output is secret */
	CRYPT_KEY_AES,	/* 16, 24 or 32 bytes */
	CRYPT_KEY_XTS,	/* 32 or 64: data key || tweak key, halves differ */
	CRYPT_KEY_ANY,	/* 1..CLI_KEY_MAX: the daemon judges (LRW) */
};

enum crypt_tag {
	CRYPT_TAG_NONE,
	CRYPT_TAG_CAPS, /* AEAD, authenc: the sizes the daemon reports */
	CRYPT_TAG_MAC,	/* MACs and digests: 4..tag_max, truncated */
};

/* The command an algorithm belongs to. */
enum crypt_cmd {
	CRYPT_CMD_CRYPT, /* encrypt and decrypt */
	CRYPT_CMD_DIGEST,
	CRYPT_CMD_MAC,
};

/*
 * What encrypt and decrypt know of an algorithm: its row of the algorithm
 * table (<cryptod/algs.h>, crypt_alg.c's rules_of()), then the sizes the
 * daemon's engines take (cc_capabilities_get(), crypt_caps_check()):
 * enough to refuse a bad argument or input length with one line and exit
 * status 2 before an operation reaches the daemon. The daemon checks
 * again; these rules only make the message clear.
 */
struct crypt_rules {
	enum cc_alg alg;
	enum crypt_key key;
	enum crypt_tag tag;
	unsigned iv_len;       /* 1: it takes an IV; 0: none */
	unsigned iv_max;       /* the longest the command line takes */
	unsigned aad : 1;      /* takes --aad */
	unsigned auth_key : 1; /* needs --auth-key (authenc with HMAC) */
	unsigned mac_only : 1; /* GMAC, 3GPP MACs: the output is the tag */
	unsigned any_iv : 1;   /* null: an IV is accepted and ignored */
	unsigned stream : 1;   /* cc_stream_*: messages of any length */
	unsigned tag_max;      /* CRYPT_TAG_MAC: the longest tag */
};

/* What the daemon's engines report for the algorithm (crypt_caps_check);
 * known 0: the daemon could not be asked, and it judges alone. */
struct crypt_caps {
	int known;
	int stream;		   /* the chosen engine streams it */
	uint32_t block;		   /* data length multiple (1: any) */
	uint32_t min_len, max_len; /* bytes, or bits (crd_alg_bit_len) */
};

/* --progress (crypt_progress.c): bytes through, rate, ETA on stderr. */
struct crypt_progress {
	int on;	      /* --progress, and (auto) stderr a terminal */
	int tty;      /* redraw in place, else a line per update */
	int64_t size; /* the input's bytes, or -1: unknown (a pipe) */
	uint64_t done;
	uint64_t t0, last; /* CLOCK_MONOTONIC ns: start, last line */
};

struct crypt_args {
	const char *cmd; /* "encrypt", "decrypt", "digest", "mac" */
	enum crypt_cmd what;
	/* digest and mac: CC_ENCRYPT computes, CC_DECRYPT (--verify)
	 * verifies */
	enum cc_dir dir;
	const struct crypt_rules *r; /* &rules once -a is known */
	struct crypt_rules rules;
	struct crypt_caps caps;
	char alg_name[40]; /* as given with -a, lower case, for messages */
	unsigned key_need; /* aes-N-...: the key length it demands; 0 = any */
	int have_key, have_auth_key, have_iv, have_tag, tag_len_set;
	int tag_out_set, tag_hex, sessionless;
	int release_unverified;		 /* decrypt: no spool before the tag */
	int binary;			 /* digest, mac: raw bytes, not hex */
	int stdin_closed, stdout_closed; /* when the command started */
	unsigned key_len, auth_key_len, iv_len, aad_len, tag_len, tag_given;
	unsigned key_max;   /* the longest -k this command takes */
	unsigned data_unit; /* aes-xts --data-unit; 0: the message is one */
	const char *engine;
	const char *key_name; /* --key-name: a named key the daemon holds */
	const char *in_path, *out_path; /* --in, --out; NULL: stdin, stdout */
	uint8_t key[CLI_MAC_KEY_MAX];	/* wiped by crypt_args_wipe() */
	uint8_t auth_key[CLI_AUTH_KEY_MAX]; /* likewise */
	uint8_t iv[CLI_IV_MAX];
	uint8_t tag[CLI_TAG_MAX]; /* decrypt: expected; encrypt: computed */
	uint8_t aad[CLI_AAD_MAX];
	struct crypt_progress prog;
};

/* A connection and, unless --sessionless, the session holding the keys. */
struct crypt_conn {
	struct cc_conn *conn;
	uint32_t sid; /* 0 with --sessionless */
};

static inline void crypt_args_wipe(struct crypt_args *a)
{
	explicit_bzero(a->key, sizeof(a->key));
	explicit_bzero(a->auth_key, sizeof(a->auth_key));
	a->key_len = 0;
	a->auth_key_len = 0;
}

/* The tag is the last tag_len bytes of the input (decrypt without -t). */
static inline int crypt_tag_in_data(const struct crypt_args *a)
{
	return a->dir == CC_DECRYPT && !a->have_tag && a->tag_len &&
	       a->what == CRYPT_CMD_CRYPT;
}

/* The op writes data (not GMAC, MACs, digests). */
static inline int crypt_writes(const struct crypt_args *a)
{
	return a->what == CRYPT_CMD_CRYPT && !a->r->mac_only;
}

/* The options encrypt, decrypt, digest and mac share (-a, -k, -s and
 * these; crypt_args.c parses them): their codes, past every short
 * option's. A command's own codes start at CRYPT_OPT_OWN. */
enum {
	CRYPT_OPT_KEY_FILE = 0x100,
	CRYPT_OPT_KEY_NAME,
	CRYPT_OPT_TAG_LEN,
	CRYPT_OPT_IN,
	CRYPT_OPT_OUT,
	CRYPT_OPT_ENGINE,
	CRYPT_OPT_PROGRESS,
	CRYPT_OPT_OWN,
};
/* One command's front end: init sets what the command is and its default
 * algorithm; opt parses c (with arg) when it is the command's own, or
 * refuses a shared one the command does not take: 0, 1 help printed,
 * -EINVAL (reported), or -ENOENT: a shared option, for crypt_main; check
 * (may be NULL) judges the options together (0 or -EINVAL, reported). */
struct crypt_front {
	const struct option *opts;
	const char *shortopts;
	void (*init)(struct crypt_args *a);
	int (*opt)(struct crypt_args *a, int c, char *arg);
	int (*check)(struct crypt_args *a);
};

/* Parse argv with f and the shared options, then run the command
 * (crypt_run): the exit status. */
int crypt_main(struct cli *cli, const struct crypt_front *f, int argc,
	       char **argv);

/* crypt_args.c: each returns 0, or -EINVAL once the error is reported. */
int crypt_parse_hex(struct crypt_args *a, const char *opt, const char *hex,
		    uint8_t *out, size_t max, unsigned *len);
int crypt_parse_key_arg(struct crypt_args *a, int auth, char *hex);
int crypt_parse_key_file(struct crypt_args *a, int auth, const char *path);
int crypt_parse_uint(const char *s, unsigned max, unsigned *out);
/* --tag-len N, or digest's and mac's --truncate N (named opt). */
int crypt_opt_tag_len(struct crypt_args *a, const char *opt, const char *arg);
/* Start of a command: no core file, closed standard descriptors noted and
 * plugged with /dev/null (a socket must never become stdin). */
void crypt_begin(struct crypt_args *a);

/* crypt_alg.c: each returns 0, or -EINVAL once the error is reported.
 * Names: cli_alg_lookup (alg_name.c). */
int crypt_alg_parse(struct crypt_args *a, const char *name);
int crypt_args_check(struct crypt_args *a);
/* The key, IV, tag and AAD sizes against the rows the daemon reports
 * (cc_capabilities_get(): --engine's, or any available engine's); fills
 * a->caps. Silent when the daemon cannot be asked (crypt_run says why). */
int crypt_caps_check(struct cli *cli, struct crypt_args *a);
int crypt_len_check(const struct crypt_args *a, uint64_t len);
/* Why a's message must be one operation (16 MiB), after the algorithm's
 * name ("does not stream"), or NULL: it streams. */
const char *crypt_why_oneshot(const struct crypt_args *a);

/* crypt_io.c: the input and the output. */
struct crypt_src {
	int fd;
	int64_t size; /* bytes left to read, or -1: a pipe, a terminal */
	int owned;    /* fd is ours to close */
};

struct crypt_sink {
	int fd;		/* where the output goes while the op runs */
	int dest;	/* a spool's destination: stdout, or --out not a file */
	int spool;	/* fd is an unlinked temporary file, copied to dest
			* once the tag verified */
	int owned_dest; /* dest is ours to close */
	const char *path; /* --out as a file: fd is tmp, renamed to it */
	char tmp[4096];
};

int crypt_src_open(struct crypt_args *a, struct crypt_src *in);
/* Copy the rest of the input to an unlinked temporary file, which
 * becomes the input: its size is known then. 0 or -errno (reported). */
int crypt_src_spool(struct crypt_args *a, struct crypt_src *in);
void crypt_src_close(struct crypt_src *in);
/* verify: the output is unverified until the end (streamed AEAD
 * decrypt): it goes to a temporary file, not straight to stdout. */
int crypt_sink_open(struct crypt_args *a, struct crypt_sink *out, int verify);
int crypt_sink_write(struct crypt_args *a, struct crypt_sink *out,
		     const void *buf, size_t len);
/* Success: the output reaches its destination. An exit status. */
int crypt_sink_commit(struct crypt_args *a, struct crypt_sink *out);
/* Failure: nothing more reaches the destination. */
void crypt_sink_abort(struct crypt_sink *out);
/* Read until len bytes or the end: 0 and *got, or -errno. */
int crypt_read_full(int fd, void *buf, size_t len, size_t *got);
int crypt_write_all(int fd, const void *buf, size_t len);
/* Buffers for plaintext: not in a core file, wiped when freed. */
void *crypt_buf_alloc(size_t len);
void crypt_buf_free(void *buf, size_t len);

/* crypt_op.c */
int crypt_open(struct cli *cli, struct crypt_args *a, struct crypt_conn *c);
int crypt_do(struct crypt_conn *c, struct crypt_args *a, uint8_t *data,
	     size_t len);
void crypt_close(struct crypt_conn *c);
/* The tag encrypt computed, or the digest or MAC, to out: appended,
 * in hex on stderr, or in hex on a line of its own. 0 or -errno. */
int crypt_put_tag(struct crypt_args *a, struct crypt_sink *out);
/* The outcome of an op or a stream, 0 or a status: the exit status, the
 * failure reported. */
int crypt_status(struct crypt_args *a, int ret);
/* The one-shot path: at most CLI_DATA_MAX bytes of input, the first
 * pre_len of them already read into pre; why names the reason. */
int crypt_oneshot(struct crypt_conn *c, struct crypt_args *a,
		  struct crypt_src *in, struct crypt_sink *out, const char *why,
		  const uint8_t *pre, size_t pre_len);

/* Report input too large for one operation; why: why it must be one. */
void crypt_too_large(const struct crypt_args *a, const char *why);

/* crypt_stream.c: the message as a stream, or as one operation when the
 * engine turns out not to stream it. The exit status. */
int crypt_stream(struct crypt_conn *c, struct crypt_args *a,
		 struct crypt_src *in, struct crypt_sink *out);

/* crypt_progress.c: --progress[=auto|always|never] (0 or -EINVAL,
 * reported); then, when on, start with the input's size (-1: unknown),
 * add the bytes each step consumed, end with the last line. */
int crypt_progress_parse(struct crypt_args *a, const char *arg);
void crypt_progress_start(struct crypt_args *a, int64_t size);
void crypt_progress_add(struct crypt_args *a, uint64_t n);
void crypt_progress_end(struct crypt_args *a, int ok);

/* crypt_run.c: open input and output, create the session, run the
 * message as a stream or as one operation, report: the exit status. */
int crypt_run(struct cli *cli, struct crypt_args *a);

#endif /* CRYPTOCTL_CRYPT_H */
