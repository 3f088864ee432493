/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl digest / mac: a SHA digest or a MAC of the input, computed in
 * cryptod as a stream (crypt_stream.c), so any length in constant memory;
 * printed in hex, written raw (--binary), or verified (--verify: exit 0
 * or 3; the daemon compares). They share encrypt's input and output
 * (crypt_io.c), its session (crypt_op.c) and its key hygiene (cmd_crypt.c's
 * comment): keys wiped once the session holds them, the argv hex wiped in
 * place, the process non-dumpable.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "crypt.h"

static const char usage_digest[] =
	"Usage: cryptoctl digest [-a ALG] [OPTIONS] <input\n"
	"\n"
	"Hash stdin (or --in FILE) in cryptod, streamed in constant memory,\n"
	"and print the digest in lower-case hex and a newline: the first\n"
	"field of sha256sum's line. --verify HEX prints nothing: the exit\n"
	"status says whether the digest matches. HEX is the whole digest\n"
	"(sha256: 32 bytes, 64 hex digits), as sha256sum -c wants it,\n"
	"unless --truncate N says it is the first N bytes.\n"
	"\n"
	"  -a, --alg ALG        sha1, sha224, sha256 (default), sha384 or\n"
	"                       sha512\n"
	"      --in FILE        read FILE instead of stdin (-: stdin)\n"
	"      --out FILE       write FILE instead of stdout (through a\n"
	"                       temporary file beside it, mode 0600)\n"
	"      --binary         write the digest's bytes, no hex, no newline\n"
	"      --verify HEX     compare the digest with HEX, in cryptod;\n"
	"                       another length than the digest's (or\n"
	"                       --truncate's) is a usage error\n"
	"      --truncate N     the digest's first N bytes (4..its full\n"
	"                       length): printed, or what --verify has\n"
	"      --engine NAME    run on this engine (default: daemon's pick)\n"
	"      --progress[=WHEN]\n"
	"                       bytes done, rate and (input a file) share\n"
	"                       and time left on stderr, twice a second,\n"
	"                       and a last line; WHEN: auto (the default:\n"
	"                       only when stderr is a terminal), always,\n"
	"                       never\n"
	"  -s, --socket PATH    daemon socket\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: 0 success (--verify: the digest matches); 1 failure\n"
	"(daemon unreachable or refused, I/O error, stdin or stdout closed);\n"
	"2 bad arguments; 3 --verify: the digest does not match.\n";

static const char usage_mac[] =
	"Usage: cryptoctl mac [-a ALG] -k HEX [OPTIONS] <input\n"
	"\n"
	"Compute the MAC of stdin (or --in FILE) in cryptod and print it in\n"
	"lower-case hex and a newline. The HMACs and aes-cmac stream: any\n"
	"length, in constant memory; aes-xcbc-mac takes at most 16 MiB (else\n"
	"exit status 1). --verify HEX prints nothing: the exit status says\n"
	"whether the MAC matches. (aes-gmac, which takes an IV, is\n"
	"'cryptoctl encrypt -a aes-gmac'.)\n"
	"\n"
	"  -a, --alg ALG        hmac-sha1, hmac-sha224, hmac-sha256\n"
	"                       (default), hmac-sha384, hmac-sha512: key of\n"
	"                       1..256 bytes (longer than a block: hashed);\n"
	"                       aes-cmac: key 16, 24 or 32 (or aes-128-cmac,\n"
	"                       aes-192-cmac, aes-256-cmac); aes-xcbc-mac:\n"
	"                       key 16, MAC 12 bytes by default\n"
	"  -k, --key HEX        the key; other users may see it in ps until\n"
	"                       cryptoctl wipes it: prefer --key-file\n"
	"      --key-file FILE  read the key, in hex, from FILE (/dev/fd/N)\n"
	"      --key-name NAME  a named key the daemon holds (cryptoctl\n"
	"                       key), instead of -k; -a must be its\n"
	"                       algorithm\n"
	"      --truncate N     the MAC's first N bytes (4..its full\n"
	"                       length): printed, or what --verify has\n"
	"      --tag-len N      the same as --truncate\n"
	"      --in FILE        read FILE instead of stdin (-: stdin)\n"
	"      --out FILE       write FILE instead of stdout (through a\n"
	"                       temporary file beside it, mode 0600)\n"
	"      --binary         write the MAC's bytes, no hex, no newline\n"
	"      --verify HEX     compare the MAC with HEX, in cryptod: the\n"
	"                       whole MAC unless --truncate N; another\n"
	"                       length is a usage error\n"
	"      --engine NAME    run on this engine (default: daemon's pick)\n"
	"      --progress[=WHEN]\n"
	"                       bytes done, rate and (input a file) share\n"
	"                       and time left on stderr, twice a second,\n"
	"                       and a last line; WHEN: auto (the default:\n"
	"                       only when stderr is a terminal), always,\n"
	"                       never\n"
	"  -s, --socket PATH    daemon socket\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: 0 success (--verify: the MAC matches); 1 failure\n"
	"(daemon unreachable or refused, I/O error, stdin or stdout closed,\n"
	"aes-xcbc-mac input too large); 2 bad arguments; 3 --verify: the MAC\n"
	"does not match.\n";

enum {
	OPT_BINARY = CRYPT_OPT_OWN,
	OPT_VERIFY,
	OPT_TRUNCATE,
};

static const struct option auth_opts[] = {
	{ "alg", required_argument, NULL, 'a' },
	{ "key", required_argument, NULL, 'k' },
	{ "key-file", required_argument, NULL, CRYPT_OPT_KEY_FILE },
	{ "key-name", required_argument, NULL, CRYPT_OPT_KEY_NAME },
	{ "tag-len", required_argument, NULL, CRYPT_OPT_TAG_LEN },
	{ "in", required_argument, NULL, CRYPT_OPT_IN },
	{ "out", required_argument, NULL, CRYPT_OPT_OUT },
	{ "binary", no_argument, NULL, OPT_BINARY },
	{ "verify", required_argument, NULL, OPT_VERIFY },
	{ "truncate", required_argument, NULL, OPT_TRUNCATE },
	{ "progress", optional_argument, NULL, CRYPT_OPT_PROGRESS },
	{ "engine", required_argument, NULL, CRYPT_OPT_ENGINE },
	{ "help", no_argument, NULL, 'h' },
	{ "socket", required_argument, NULL, 's' },
	{ NULL, 0, NULL, 0 },
};

/* digest's and mac's own options (crypt.h: struct crypt_front). */
static int auth_opt(struct crypt_args *a, int c, char *arg)
{
	const int mac = a->what == CRYPT_CMD_MAC;
	int ret;

	if (!mac &&
	    (c == 'k' || c == CRYPT_OPT_KEY_FILE || c == CRYPT_OPT_KEY_NAME))
		return cli_usage_err(a->cmd, "a digest takes no key "
					     "('cryptoctl mac' does)");
	if (!mac && c == CRYPT_OPT_TAG_LEN)
		return cli_usage_err(a->cmd, "--tag-len is for mac");
	switch (c) {
	case OPT_BINARY:
		a->binary = 1;
		return 0;
	case OPT_VERIFY:
		ret = crypt_parse_hex(a, "--verify", arg, a->tag,
				      sizeof(a->tag), &a->tag_given);
		a->have_tag = !ret;
		a->dir = CC_DECRYPT;
		return ret;
	case OPT_TRUNCATE: /* mac's --tag-len, under the name both take */
		return crypt_opt_tag_len(a, "--truncate", arg);
	case 'h':
		fputs(mac ? usage_mac : usage_digest, stdout);
		return 1;
	default:
		return -ENOENT;
	}
}

static int auth_check(struct crypt_args *a)
{
	if (a->binary && a->have_tag)
		return cli_usage_err(a->cmd, "--verify writes nothing: no "
					     "--binary");
	return 0;
}

static void auth_init(struct crypt_args *a, enum crypt_cmd what)
{
	a->what = what;
	a->cmd = what == CRYPT_CMD_MAC ? "mac" : "digest";
	a->dir = CC_ENCRYPT;
	a->key_max = CLI_MAC_KEY_MAX;
	crypt_alg_parse(a, what == CRYPT_CMD_MAC ? "hmac-sha256" : "sha256");
}

static void digest_init(struct crypt_args *a)
{
	auth_init(a, CRYPT_CMD_DIGEST);
}

static void mac_init(struct crypt_args *a)
{
	auth_init(a, CRYPT_CMD_MAC);
}

int cmd_digest(struct cli *cli, int argc, char **argv)
{
	static const struct crypt_front f = { auth_opts, "a:hs:", digest_init,
					      auth_opt, auth_check };
	return crypt_main(cli, &f, argc, argv);
}

int cmd_mac(struct cli *cli, int argc, char **argv)
{
	static const struct crypt_front f = { auth_opts, "a:k:hs:", mac_init,
					      auth_opt, auth_check };
	return crypt_main(cli, &f, argc, argv);
}
