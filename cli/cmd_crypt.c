/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl encrypt / decrypt: one operation in cryptod on stdin, in the
 * spirit of kcapi-enc and openssl enc: options, input and output here;
 * what each algorithm accepts in crypt_alg.c; the op in crypt_op.c.
 *
 * Key hygiene: the keys are parsed into fixed buffers that are wiped as
 * soon as the daemon holds them (the library copies them into the request
 * and wipes that; --sessionless: as soon as they are in the op's arena
 * buffer, itself wiped after the op); the hex strings in argv are wiped in
 * place as soon as they are parsed so ps stops showing them; the process
 * is made non-dumpable so neither a core file nor a same-user ptrace can
 * read keys or plaintext.
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

#include "crypt.h"

/* Help text in pieces: encrypt and decrypt share the option lines
 * around their tag options. */
static const char usage_encrypt_head[] =
	"Usage: cryptoctl encrypt [-a ALG] -k HEX [-i HEX] [OPTIONS] "
	"<plain >cipher\n"
	"\n"
	"Encrypt stdin (at most 16 MiB) with one operation in cryptod and\n"
	"write the ciphertext to stdout, followed by the tag if ALG has one;\n"
	"aes-gmac writes the tag alone. Never use an IV twice with the same\n"
	"key.\n"
	"\n";

static const char usage_decrypt_head[] =
	"Usage: cryptoctl decrypt [-a ALG] -k HEX [-i HEX] [OPTIONS] "
	"<cipher >plain\n"
	"\n"
	"Decrypt stdin with one operation in cryptod. If ALG has a tag, it is\n"
	"verified first: the plaintext goes to stdout only once it has; on a\n"
	"mismatch nothing is written and the exit status is 3. aes-gmac\n"
	"verifies the tag over stdin and writes nothing: exit status 0 means\n"
	"the tag verified.\n"
	"\n";

static const char usage_key_opts[] =
	"  -a, --alg ALG        the algorithm, aes-gcm by default. The key\n"
	"                       length picks AES-128, -192 or -256 unless ALG\n"
	"                       names it, as in aes-128-cbc or aes-256-xts:\n"
	"                         aes-gcm      AEAD; IV 12; tag 4, 8, 12..16\n"
	"                         aes-gmac     a MAC of stdin; IV 12; tag as\n"
	"                                      aes-gcm\n"
	"                         aes-cbc      IV 16; length a multiple of 16\n"
	"                         aes-ctr      IV 16, the first counter block\n"
	"                         aes-ecb      no IV; length a multiple of 16\n"
	"                         aes-xts      key 32 or 64 bytes: data key,\n"
	"                                      then tweak key; IV 16, the\n"
	"                                      tweak; length at least 16\n"
	"                         aes-cbc-hmac-sha1, aes-cbc-hmac-sha256\n"
	"                                      CBC, then HMAC over AAD and\n"
	"                                      ciphertext (tag 12 or 16 "
	"bytes);\n"
	"                                      IV 16; needs --auth-key; "
	"length\n"
	"                                      a multiple of 16\n"
	"                         aes-cbc-null CBC, null digest: no tag\n"
	"                         aes-gcm-rfc4106\n"
	"                                      IPsec ESP GCM: key = AES key\n"
	"                                      and a 4-byte salt; IV 8; AAD\n"
	"                                      8 or 12; tag 8, 12 or 16\n"
	"                         aes-lrw      key = AES key and a 16-byte\n"
	"                                      tweak key; IV 16, the first\n"
	"                                      block's index; length a\n"
	"                                      multiple of 16 (kernel\n"
	"                                      engine only)\n"
	"                         aes-ccm      IV 7..13, the nonce; tag 4..16\n"
	"                                      even (default 16)\n"
	"                         chacha20-poly1305\n"
	"                                      key 32; IV 12; tag 16\n"
	"                         chacha20     key 32; IV 16: 32-bit little-\n"
	"                                      endian block counter, then\n"
	"                                      the 12-byte nonce\n"
	"                         null         copies the data (no key, no\n"
	"                                      tag; an IV is ignored)\n"
	"                       The kernel's names work too: gcm(aes),\n"
	"                       cbc(aes), ctr(aes), ecb(aes), xts(aes),\n"
	"                       authenc(hmac(sha1),cbc(aes)),\n"
	"                       authenc(hmac(sha256),cbc(aes)),\n"
	"                       authenc(digest_null,cbc(aes)),\n"
	"                       rfc4106(gcm(aes)), lrw(aes). 'cryptoctl\n"
	"                       engines' shows what the daemon offers\n"
	"  -k, --key HEX        the key; other users may see it in ps until\n"
	"                       cryptoctl wipes it: prefer --key-file\n"
	"      --key-file FILE  read the key, in hex, from FILE (/dev/fd/N)\n"
	"      --auth-key HEX   the HMAC key of aes-cbc-hmac-*, 1..64 bytes\n"
	"      --auth-key-file FILE\n"
	"                       read the HMAC key, in hex, from FILE\n"
	"  -i, --iv HEX         the IV, as -a says (aes-gcm with --engine\n"
	"                       aesni or openssl: 1..16 bytes)\n"
	"      --aad HEX        additional authenticated data, <= 65535 B\n"
	"                       (aes-gcm, aes-gcm-rfc4106, aes-ccm,\n"
	"                       chacha20-poly1305 and aes-cbc-hmac-*\n"
	"                       only)\n";

static const char usage_encrypt_tag[] =
	"      --tag-out MODE   append: the tag follows the ciphertext on\n"
	"                       stdout (default); hex: stdout gets only the\n"
	"                       ciphertext; stderr, the tag in hex\n";

static const char usage_decrypt_tag[] =
	"  -t, --tag HEX        the expected tag; sets --tag-len. Without it\n"
	"                       the tag is the last tag-len bytes of stdin,\n"
	"                       where 'cryptoctl encrypt' appends it\n";

static const char usage_tail_opts[] =
	"      --tag-len N      tag bytes: aes-gcm and aes-gmac 4, 8 or\n"
	"                       12..16 (default 16); aes-ccm 4..16, even\n"
	"                       (default 16); chacha20-poly1305 16;\n"
	"                       aes-cbc-hmac-sha1 12; aes-cbc-hmac-sha256 16\n"
	"      --engine NAME    run on this engine (default: daemon's pick)\n"
	"      --sessionless    create no session: the keys travel with the\n"
	"                       op, which expands them itself (no --engine)\n"
	"  -s, --socket PATH    daemon socket\n"
	"  -h, --help           this text\n";

static const char usage_encrypt_foot[] =
	"\n"
	"Input: at most 16 MiB; aes-cbc, aes-ecb, aes-cbc-hmac-* and\n"
	"aes-cbc-null need a multiple of 16 bytes, aes-xts at least 16 (else\n"
	"exit status 2).\n";

static const char usage_decrypt_foot[] =
	"\n"
	"Input: at most 16 MiB of ciphertext, plus the tag if appended;\n"
	"aes-cbc, aes-ecb, aes-cbc-hmac-* and aes-cbc-null need a multiple of\n"
	"16 bytes of ciphertext, aes-xts at least 16 (else exit status 2).\n";

static void print_usage(enum cc_dir dir)
{
	const int enc = dir == CC_ENCRYPT;

	fputs(enc ? usage_encrypt_head : usage_decrypt_head, stdout);
	fputs(usage_key_opts, stdout);
	fputs(enc ? usage_encrypt_tag : usage_decrypt_tag, stdout);
	fputs(usage_tail_opts, stdout);
	fputs(enc ? usage_encrypt_foot : usage_decrypt_foot, stdout);
}

enum {
	OPT_AAD = 0x100,
	OPT_TAG_LEN,
	OPT_TAG_OUT,
	OPT_ENGINE,
	OPT_KEY_FILE,
	OPT_AUTH_KEY,
	OPT_AUTH_KEY_FILE,
	OPT_SESSIONLESS,
};

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

/* Where a key option goes: the cipher key or the HMAC key. */
struct key_slot {
	const char *opt;
	uint8_t *buf;
	size_t max;
	unsigned *len;
	int *have;
};

static struct key_slot key_slot(struct crypt_args *a, int auth, int file)
{
	if (auth)
		return (struct key_slot){ file ? "--auth-key-file"
					       : "--auth-key",
					  a->auth_key, sizeof(a->auth_key),
					  &a->auth_key_len, &a->have_auth_key };
	return (struct key_slot){ file ? "--key-file" : "--key", a->key,
				  sizeof(a->key), &a->key_len, &a->have_key };
}

/*
 * A key, from argv. The string is wiped in place once decoded: argv
 * lives in /proc/PID/cmdline, readable by every user. getopt has finished
 * with an option's argument when it returns it, and only ever permutes
 * argv pointers, so writing into the string is safe.
 */
static int parse_key_arg(struct crypt_args *a, int auth, char *hex)
{
	struct key_slot k = key_slot(a, auth, 0);
	int ret;

	ret = parse_hex(a, k.opt, hex, k.buf, k.max, k.len);
	explicit_bzero(hex, strlen(hex));
	*k.have = !ret;
	return ret;
}

/* A key as hex text in a file; surrounding white space is ignored. */
static int parse_key_file(struct crypt_args *a, int auth, const char *path)
{
	struct key_slot k = key_slot(a, auth, 1);
	char buf[CLI_KEYFILE_MAX + 1];
	char *s, *end;
	ssize_t n;
	size_t len = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cli_usage_err(a->cmd, "%s %s: %s", k.opt, path,
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
		return cli_usage_err(a->cmd, "%s %s: %s", k.opt, path,
				     strerror(-ret));
	}

	s = buf + strspn(buf, " \t\r\n");
	end = s + strcspn(s, " \t\r\n");
	if (*(end + strspn(end, " \t\r\n"))) {
		explicit_bzero(buf, sizeof(buf));
		return cli_usage_err(a->cmd, "%s %s: not one hex string", k.opt,
				     path);
	}
	*end = '\0';
	ret = parse_hex(a, k.opt, s, k.buf, k.max, k.len);
	explicit_bzero(buf, sizeof(buf));
	*k.have = !ret;
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

static int parse_args(struct crypt_args *a, struct cli *cli, int argc,
		      char **argv)
{
	static const struct option opts[] = {
		{ "alg", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, 'k' },
		{ "key-file", required_argument, NULL, OPT_KEY_FILE },
		{ "auth-key", required_argument, NULL, OPT_AUTH_KEY },
		{ "auth-key-file", required_argument, NULL, OPT_AUTH_KEY_FILE },
		{ "iv", required_argument, NULL, 'i' },
		{ "aad", required_argument, NULL, OPT_AAD },
		{ "tag", required_argument, NULL, 't' },
		{ "tag-len", required_argument, NULL, OPT_TAG_LEN },
		{ "tag-out", required_argument, NULL, OPT_TAG_OUT },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "sessionless", no_argument, NULL, OPT_SESSIONLESS },
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const int enc = a->dir == CC_ENCRYPT;
	int c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, "a:k:i:t:hs:", opts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'a':
			ret = crypt_alg_parse(a, optarg);
			break;
		case 'k':
			ret = parse_key_arg(a, 0, optarg);
			break;
		case OPT_KEY_FILE:
			ret = parse_key_file(a, 0, optarg);
			break;
		case OPT_AUTH_KEY:
			ret = parse_key_arg(a, 1, optarg);
			break;
		case OPT_AUTH_KEY_FILE:
			ret = parse_key_file(a, 1, optarg);
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
					sizeof(a->tag), &a->tag_given);
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
			a->tag_out_set = 1;
			break;
		case OPT_ENGINE:
			a->engine = optarg;
			break;
		case OPT_SESSIONLESS:
			a->sessionless = 1;
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
		ret = crypt_args_check(a);
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

static int print_tag_hex(const uint8_t *tag, unsigned len)
{
	char hex[2 * CLI_TAG_MAX + 2];

	hex_encode(tag, len, hex);
	strcat(hex, "\n");
	return write_all(STDERR_FILENO, hex, strlen(hex));
}

/*
 * Connect, read stdin, run the op in place on it. Returns the exit status;
 * every failure is reported here.
 */
static int crypt_run(struct cli *cli, struct crypt_args *a, struct inbuf *in,
		     size_t *len)
{
	struct crypt_conn c = { 0 };
	int tag_in_data, ret, status = CLI_EXIT_FAIL;
	size_t max = CLI_DATA_MAX;

	/* Before stdin: an unreachable daemon or a refused key fails at
	 * once, and the key leaves this process before input of unbounded
	 * duration. */
	if (crypt_open(cli, a, &c) < 0)
		return CLI_EXIT_FAIL;

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
			cli_err("%s: %zu bytes of input, less than the tag",
				a->cmd, *len);
			goto out_close;
		}
		*len -= a->tag_len;
		memcpy(a->tag, in->p + *len, a->tag_len);
	}
	/* The op never reaches the daemon with a length it would refuse. */
	if (crypt_len_check(a, *len)) {
		status = CLI_EXIT_USAGE;
		goto out_close;
	}

	ret = crypt_do(&c, a, in->p, *len);
	if (ret == CC_ERR_AUTH_FAILED) {
		/* Not one byte of the forgery's plaintext goes out. */
		cli_err("authentication failed: tag mismatch");
		status = CLI_EXIT_AUTH;
	} else if (ret < 0) {
		cli_err("%s: %s", a->cmd, cc_strerror(ret));
	} else {
		status = CLI_EXIT_OK;
	}
out_close:
	crypt_close(&c);
	return status;
}

static int crypt_main(struct cli *cli, struct crypt_args *a, int argc,
		      char **argv)
{
	struct inbuf in = { 0 };
	size_t len = 0;
	int ret, status;

	ret = parse_args(a, cli, argc, argv);
	if (ret)
		return ret > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;

	status = crypt_run(cli, a, &in, &len);
	if (status != CLI_EXIT_OK)
		goto out_free;

	/* GMAC authenticates the data without transforming it: encrypt
	 * writes the tag alone, decrypt nothing. */
	ret = 0;
	if (!a->r->mac_only)
		ret = write_all(STDOUT_FILENO, in.p, len);
	if (!ret && a->dir == CC_ENCRYPT && a->tag_len) {
		if (a->tag_hex)
			ret = print_tag_hex(a->tag, a->tag_len);
		else
			ret = write_all(STDOUT_FILENO, a->tag, a->tag_len);
	}
	if (ret < 0) {
		cli_err("%s: writing output: %s", a->cmd, strerror(-ret));
		status = CLI_EXIT_FAIL;
	}
out_free:
	inbuf_free(&in);
	return status;
}

static int cmd_crypt(struct cli *cli, enum cc_dir dir, int argc, char **argv)
{
	struct crypt_args *a;
	int ret;

	/* No core file, no same-user ptrace: keys and plaintext stay here. */
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
	crypt_alg_parse(a, "aes-gcm");

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
