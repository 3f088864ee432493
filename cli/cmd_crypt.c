/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl encrypt / decrypt: one AEAD operation in cryptod on stdin,
 * in the spirit of kcapi-enc and openssl enc.
 *
 * Key hygiene: the key is parsed into one fixed buffer that is wiped as
 * soon as the daemon holds it (the library copies it into the request and
 * wipes that); the hex string in argv is wiped in place as soon as it is
 * parsed so ps stops showing it; the process is made non-dumpable so
 * neither a core file nor a same-user ptrace can read key or plaintext.
 *
 * Decrypt writes nothing before the tag verified: all of the input is read
 * first, processed in one operation, and written only on success.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cryptoctl.h"

/* Help text in pieces: encrypt and decrypt share the option lines
 * around their tag options. */
static const char usage_encrypt_head[] =
	"Usage: cryptoctl encrypt -k HEX -i HEX [OPTIONS] <plain >cipher\n"
	"\n"
	"Encrypt stdin (at most 16 MiB) with one AEAD operation in cryptod;\n"
	"write the ciphertext to stdout, followed by the tag. Never use an IV\n"
	"twice with the same key.\n"
	"\n";

static const char usage_decrypt_head[] =
	"Usage: cryptoctl decrypt -k HEX -i HEX [OPTIONS] <cipher >plain\n"
	"\n"
	"Decrypt stdin with one AEAD operation in cryptod and verify the tag.\n"
	"The plaintext goes to stdout only once the tag has verified; on a\n"
	"mismatch nothing is written and the exit status is 3.\n"
	"\n";

static const char usage_key_opts[] =
	"  -a, --alg ALG        aes-gcm (default; AES-128/192/256 by the key\n"
	"                       length); aes-128-gcm, aes-192-gcm and\n"
	"                       aes-256-gcm also check the key length;\n"
	"                       null copies the data (no key, no tag)\n"
	"  -k, --key HEX        the key; other users may see it in ps until\n"
	"                       cryptoctl wipes it: prefer --key-file\n"
	"      --key-file FILE  read the key, in hex, from FILE (/dev/fd/N)\n"
	"  -i, --iv HEX         the IV, 12 bytes for AES-GCM\n"
	"      --aad HEX        additional authenticated data, <= 65535 B\n";

static const char usage_encrypt_tag[] =
	"      --tag-out MODE   append: the tag follows the ciphertext on\n"
	"                       stdout (default); hex: stdout gets only the\n"
	"                       ciphertext; stderr, the tag in hex\n";

static const char usage_decrypt_tag[] =
	"  -t, --tag HEX        the expected tag; sets --tag-len. Without it\n"
	"                       the tag is the last tag-len bytes of stdin,\n"
	"                       where 'cryptoctl encrypt' appends it\n";

static const char usage_tail_opts[] =
	"      --tag-len N      tag bytes: 4, 8 or 12..16 (default 16)\n"
	"      --engine NAME    run on this engine (default: daemon's pick)\n"
	"  -s, --socket PATH    daemon socket\n"
	"  -h, --help           this text\n";

static const char usage_decrypt_foot[] =
	"\n"
	"Input: at most 16 MiB of ciphertext, plus the tag if appended.\n";

static void print_usage(enum cc_dir dir)
{
	const int enc = dir == CC_ENCRYPT;

	fputs(enc ? usage_encrypt_head : usage_decrypt_head, stdout);
	fputs(usage_key_opts, stdout);
	fputs(enc ? usage_encrypt_tag : usage_decrypt_tag, stdout);
	fputs(usage_tail_opts, stdout);
	if (!enc)
		fputs(usage_decrypt_foot, stdout);
}

enum {
	OPT_AAD = 0x100,
	OPT_TAG_LEN,
	OPT_TAG_OUT,
	OPT_ENGINE,
	OPT_KEY_FILE,
};

struct crypt_args {
	const char *cmd; /* "encrypt" or "decrypt", for messages */
	enum cc_dir dir;
	enum cc_alg alg;
	unsigned key_need; /* aes-N-gcm: the key length it demands; 0 = any */
	int have_key, have_iv, have_tag, tag_len_set, tag_hex;
	unsigned key_len, iv_len, aad_len, tag_len;
	const char *engine;
	uint8_t key[CLI_KEY_MAX]; /* wiped by crypt_args_wipe() */
	uint8_t iv[CLI_IV_MAX];
	uint8_t tag[CLI_TAG_MAX]; /* decrypt: expected; encrypt: computed */
	uint8_t aad[CLI_AAD_MAX];
};

static void crypt_args_wipe(struct crypt_args *a)
{
	explicit_bzero(a->key, sizeof(a->key));
	a->key_len = 0;
}

static int gcm_tag_len_ok(unsigned n)
{
	return n == 4 || n == 8 || (n >= 12 && n <= 16);
}

static int parse_alg(struct crypt_args *a, const char *name)
{
	static const struct {
		const char *name;
		enum cc_alg alg;
		unsigned key_need;
	} algs[] = {
		{ "aes-gcm", CC_ALG_AES_GCM, 0 },
		{ "aes-128-gcm", CC_ALG_AES_GCM, 16 },
		{ "aes-192-gcm", CC_ALG_AES_GCM, 24 },
		{ "aes-256-gcm", CC_ALG_AES_GCM, 32 },
		{ "null", CC_ALG_NULL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		if (strcasecmp(name, algs[i].name))
			continue;
		a->alg = algs[i].alg;
		a->key_need = algs[i].key_need;
		return 0;
	}
	return cli_usage_err(a->cmd,
			     "unknown algorithm '%s' (aes-gcm, aes-128-gcm, "
			     "aes-192-gcm, aes-256-gcm, null)",
			     name);
}

/* Decode a hex option: 0, or -EINVAL once the error is reported. */
static int parse_hex(struct crypt_args *a, const char *opt, const char *hex,
		     uint8_t *out, size_t max, unsigned *len)
{
	int n = hex_decode(hex, out, max);

	if (n == -E2BIG)
		return cli_usage_err(a->cmd, "%s: longer than %zu bytes", opt,
				     max);
	if (n < 0)
		return cli_usage_err(a->cmd, "%s: not a hex string", opt);
	*len = (unsigned)n;
	return 0;
}

/*
 * The key, from argv. The string is wiped in place once decoded: argv
 * lives in /proc/PID/cmdline, readable by every user. getopt has finished
 * with an option's argument when it returns it, and only ever permutes
 * argv pointers, so writing into the string is safe.
 */
static int parse_key_arg(struct crypt_args *a, char *hex)
{
	int ret;

	ret = parse_hex(a, "--key", hex, a->key, sizeof(a->key), &a->key_len);
	explicit_bzero(hex, strlen(hex));
	a->have_key = !ret;
	return ret;
}

/* The key as hex text in a file; surrounding white space is ignored. */
static int parse_key_file(struct crypt_args *a, const char *path)
{
	char buf[CLI_KEYFILE_MAX + 1];
	char *s, *end;
	ssize_t n;
	size_t len = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cli_usage_err(a->cmd, "--key-file %s: %s", path,
				     strerror(errno));
	do {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n > 0)
			len += (size_t)n;
	} while ((n > 0 && len < sizeof(buf) - 1) || (n < 0 && errno == EINTR));
	ret = n < 0 ? -errno : 0;
	close(fd);
	buf[len] = '\0';
	if (ret < 0) {
		explicit_bzero(buf, sizeof(buf));
		return cli_usage_err(a->cmd, "--key-file %s: %s", path,
				     strerror(-ret));
	}

	s = buf + strspn(buf, " \t\r\n");
	end = s + strcspn(s, " \t\r\n");
	if (*(end + strspn(end, " \t\r\n"))) {
		explicit_bzero(buf, sizeof(buf));
		return cli_usage_err(a->cmd,
				     "--key-file %s: not one hex string", path);
	}
	*end = '\0';
	ret = parse_hex(a, "--key-file", s, a->key, sizeof(a->key),
			&a->key_len);
	explicit_bzero(buf, sizeof(buf));
	a->have_key = !ret;
	return ret;
}

static int parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-')
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/* Cross-option checks once everything is parsed. */
static int check_args(struct crypt_args *a)
{
	if (a->alg == CC_ALG_NULL) {
		/* Silently ignoring a key would let someone believe the
		 * output is encrypted. */
		if (a->have_key)
			return cli_usage_err(a->cmd, "null copies data in the "
						     "clear: it takes no key");
		if (a->have_tag || a->tag_len_set)
			return cli_usage_err(a->cmd, "null has no tag");
		a->tag_len = 0;
		return 0;
	}

	if (!a->have_key)
		return cli_usage_err(a->cmd, "a key is required (-k HEX or "
					     "--key-file FILE)");
	if (a->key_need && a->key_len != a->key_need)
		return cli_usage_err(a->cmd,
				     "aes-%u-gcm needs a %u-byte key, got %u",
				     a->key_need * 8, a->key_need, a->key_len);
	if (a->key_len != 16 && a->key_len != 24 && a->key_len != 32)
		return cli_usage_err(a->cmd,
				     "AES keys are 16, 24 or 32 bytes, got %u",
				     a->key_len);
	if (!a->have_iv)
		return cli_usage_err(a->cmd, "an IV is required (-i HEX)");
	if (a->iv_len != CLI_GCM_IV_LEN)
		return cli_usage_err(a->cmd,
				     "AES-GCM needs a %d-byte IV, got %u",
				     CLI_GCM_IV_LEN, a->iv_len);

	return 0;
}

static int check_tag(struct crypt_args *a, unsigned given_len)
{
	if (a->have_tag) {
		if (a->tag_len_set && given_len != a->tag_len)
			return cli_usage_err(a->cmd,
					     "--tag has %u bytes but --tag-len "
					     "is %u",
					     given_len, a->tag_len);
		a->tag_len = given_len;
	}
	if (a->alg != CC_ALG_NULL && !gcm_tag_len_ok(a->tag_len))
		return cli_usage_err(a->cmd,
				     "AES-GCM tags are 4, 8 or 12..16 bytes, "
				     "got %u",
				     a->tag_len);
	return 0;
}

static int parse_args(struct crypt_args *a, struct cli *cli, int argc,
		      char **argv)
{
	static const struct option opts[] = {
		{ "alg", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, 'k' },
		{ "key-file", required_argument, NULL, OPT_KEY_FILE },
		{ "iv", required_argument, NULL, 'i' },
		{ "aad", required_argument, NULL, OPT_AAD },
		{ "tag", required_argument, NULL, 't' },
		{ "tag-len", required_argument, NULL, OPT_TAG_LEN },
		{ "tag-out", required_argument, NULL, OPT_TAG_OUT },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const int enc = a->dir == CC_ENCRYPT;
	unsigned tag_given = 0;
	int c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, "a:k:i:t:hs:", opts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'a':
			ret = parse_alg(a, optarg);
			break;
		case 'k':
			ret = parse_key_arg(a, optarg);
			break;
		case OPT_KEY_FILE:
			ret = parse_key_file(a, optarg);
			break;
		case 'i':
			ret = parse_hex(a, "--iv", optarg, a->iv, sizeof(a->iv),
					&a->iv_len);
			a->have_iv = !ret;
			break;
		case OPT_AAD:
			ret = parse_hex(a, "--aad", optarg, a->aad,
					sizeof(a->aad), &a->aad_len);
			break;
		case 't':
			if (enc)
				return cli_usage_err(
					a->cmd, "--tag is for decrypt; "
						"encrypt computes the tag");
			ret = parse_hex(a, "--tag", optarg, a->tag,
					sizeof(a->tag), &tag_given);
			a->have_tag = !ret;
			break;
		case OPT_TAG_LEN:
			if (parse_uint(optarg, CLI_TAG_MAX, &a->tag_len))
				return cli_usage_err(a->cmd,
						     "--tag-len: '%s' is not "
						     "a number up to %d",
						     optarg, CLI_TAG_MAX);
			a->tag_len_set = 1;
			break;
		case OPT_TAG_OUT:
			if (!enc)
				return cli_usage_err(
					a->cmd, "--tag-out is for encrypt");
			if (!strcmp(optarg, "hex"))
				a->tag_hex = 1;
			else if (!strcmp(optarg, "append"))
				a->tag_hex = 0;
			else
				return cli_usage_err(a->cmd,
						     "--tag-out: 'append' or "
						     "'hex', not '%s'",
						     optarg);
			break;
		case OPT_ENGINE:
			a->engine = optarg;
			break;
		case 'h':
			print_usage(a->dir);
			return 1;
		case 's':
			cli->socket = optarg;
			break;
		default:
			return -EINVAL; /* getopt said why */
		}
		if (ret)
			return ret;
	}
	ret = cli_no_args(a->cmd, argc, argv);
	if (!ret)
		ret = check_args(a);
	if (!ret)
		ret = check_tag(a, tag_given);
	return ret;
}

/*
 * The input buffer: one private anonymous mapping of the largest input,
 * so reading never reallocates (which would leave copies of the plaintext
 * in freed memory) and only the pages actually read are ever committed.
 */
struct inbuf {
	uint8_t *p;
	size_t cap; /* bytes mapped */
	size_t len; /* bytes read */
};

static int inbuf_read(struct inbuf *b, int fd, size_t max)
{
	ssize_t n;

	/* One byte past max tells "exactly max" from "too large". */
	b->cap = max + 1;
	b->len = 0;
	b->p = mmap(NULL, b->cap, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->p == MAP_FAILED) {
		b->p = NULL;
		return -ENOMEM;
	}
	madvise(b->p, b->cap, MADV_DONTDUMP);

	while (b->len < b->cap) {
		n = read(fd, b->p + b->len, b->cap - b->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		b->len += (size_t)n;
	}
	return b->len > max ? -EFBIG : 0;
}

static void inbuf_free(struct inbuf *b)
{
	if (!b->p)
		return;
	explicit_bzero(b->p, b->len);
	munmap(b->p, b->cap);
	b->p = NULL;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Connect and hand the key to the daemon, before stdin is read: an
 * unreachable daemon or a refused key fails at once, and the key leaves
 * this process before input of unbounded duration. Returns 0 or -errno
 * (reported).
 */
static int session_open(struct cli *cli, struct crypt_args *a,
			struct cc_conn **conn, uint32_t *sid)
{
	struct cc_session_params sp = {
		.alg = a->alg,
		.key = a->key,
		.key_len = a->key_len,
		.tag_len = a->tag_len,
		.engine = a->engine,
	};
	const char *why;
	int ret;

	ret = cli_connect(cli, conn);
	if (ret < 0)
		return ret;
	ret = cc_session_create(*conn, &sp, sid);
	crypt_args_wipe(a);
	if (!ret)
		return 0;

	why = cc_conn_last_error(*conn);
	cli_err("%s: cannot create the session: %s%s%s", a->cmd,
		cc_strerror(ret), *why ? ": " : "", why);
	cc_disconnect(*conn);
	*conn = NULL;
	return ret;
}

static void session_close(struct cc_conn *conn, uint32_t sid)
{
	/* The daemon drops the session with the connection anyway; destroy
	 * it explicitly so that its key is wiped now. */
	cc_session_destroy(conn, sid);
	cc_disconnect(conn);
}

static int print_tag_hex(const uint8_t *tag, unsigned len)
{
	char hex[2 * CLI_TAG_MAX + 2];

	hex_encode(tag, len, hex);
	strcat(hex, "\n");
	return write_all(STDERR_FILENO, hex, strlen(hex));
}

/*
 * Run the operation in place on in: 0, CC_ERR_AUTH_FAILED or -errno
 * (reported, except for the tag mismatch).
 */
static int crypt_run(struct cli *cli, struct crypt_args *a, struct inbuf *in,
		     size_t *len)
{
	struct cc_conn *conn;
	uint32_t sid;
	int tag_in_data, ret;
	size_t max = CLI_DATA_MAX;

	ret = session_open(cli, a, &conn, &sid);
	if (ret < 0)
		return ret;

	tag_in_data = a->dir == CC_DECRYPT && !a->have_tag && a->tag_len;
	if (tag_in_data)
		max += a->tag_len;
	ret = inbuf_read(in, STDIN_FILENO, max);
	if (ret == -EFBIG) {
		cli_err("%s: input larger than %u MiB%s", a->cmd,
			CLI_DATA_MAX >> 20, tag_in_data ? " plus the tag" : "");
		goto out_close;
	}
	if (ret < 0) {
		cli_err("%s: reading stdin: %s", a->cmd, strerror(-ret));
		goto out_close;
	}
	*len = in->len;
	if (tag_in_data) {
		if (*len < a->tag_len) {
			ret = -EINVAL;
			cli_err("%s: %zu bytes of input, less than the tag",
				a->cmd, *len);
			goto out_close;
		}
		*len -= a->tag_len;
		memcpy(a->tag, in->p + *len, a->tag_len);
	}

	ret = cc_crypt(conn, sid, a->dir, a->iv, a->iv_len,
		       a->aad_len ? a->aad : NULL, a->aad_len, in->p, in->p,
		       *len, a->tag);
	if (ret < 0 && ret != CC_ERR_AUTH_FAILED)
		cli_err("%s: %s", a->cmd, cc_strerror(ret));
out_close:
	session_close(conn, sid);
	return ret;
}

static int crypt_main(struct cli *cli, struct crypt_args *a, int argc,
		      char **argv)
{
	struct inbuf in = { 0 };
	size_t len = 0;
	int ret, status = CLI_EXIT_FAIL;

	ret = parse_args(a, cli, argc, argv);
	if (ret)
		return ret > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;

	ret = crypt_run(cli, a, &in, &len);
	if (ret == CC_ERR_AUTH_FAILED) {
		/* Not one byte of the forgery's plaintext goes out. */
		cli_err("authentication failed: tag mismatch");
		status = CLI_EXIT_AUTH;
		goto out_free;
	}
	if (ret < 0)
		goto out_free;

	ret = write_all(STDOUT_FILENO, in.p, len);
	if (!ret && a->dir == CC_ENCRYPT && a->tag_len) {
		if (a->tag_hex)
			ret = print_tag_hex(a->tag, a->tag_len);
		else
			ret = write_all(STDOUT_FILENO, a->tag, a->tag_len);
	}
	if (ret < 0) {
		cli_err("%s: writing output: %s", a->cmd, strerror(-ret));
		goto out_free;
	}
	status = CLI_EXIT_OK;
out_free:
	inbuf_free(&in);
	return status;
}

static int cmd_crypt(struct cli *cli, enum cc_dir dir, int argc, char **argv)
{
	struct crypt_args *a;
	int ret;

	/* No core file, no same-user ptrace: key and plaintext stay here. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

	/* On the heap: 64 KiB of AAD buffer is too much for a stack frame
	 * in a tool that may run with a small ulimit -s. */
	a = calloc(1, sizeof(*a));
	if (!a) {
		cli_err("out of memory");
		return CLI_EXIT_FAIL;
	}
	a->cmd = dir == CC_ENCRYPT ? "encrypt" : "decrypt";
	a->dir = dir;
	a->alg = CC_ALG_AES_GCM;
	a->tag_len = CLI_TAG_DEFAULT;

	ret = crypt_main(cli, a, argc, argv);
	crypt_args_wipe(a);
	free(a);
	return ret;
}

int cmd_encrypt(struct cli *cli, int argc, char **argv)
{
	return cmd_crypt(cli, CC_ENCRYPT, argc, argv);
}

int cmd_decrypt(struct cli *cli, int argc, char **argv)
{
	return cmd_crypt(cli, CC_DECRYPT, argc, argv);
}
