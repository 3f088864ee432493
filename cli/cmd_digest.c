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

#include "crypt.h"

static const char usage_digest[] =
	"Usage: cryptoctl digest [-a ALG] [OPTIONS] <input\n"
	"\n"
	"Hash stdin (or --in FILE) in cryptod, streamed in constant memory,\n"
	"and print the digest in lower-case hex and a newline: the first\n"
	"field of sha256sum's line. --verify HEX prints nothing: the exit\n"
	"status says whether the digest matches.\n"
	"\n"
	"  -a, --alg ALG        sha1, sha224, sha256 (default), sha384 or\n"
	"                       sha512\n"
	"      --in FILE        read FILE instead of stdin (-: stdin)\n"
	"      --out FILE       write FILE instead of stdout (through a\n"
	"                       temporary file beside it, mode 0600)\n"
	"      --binary         write the digest's bytes, no hex, no newline\n"
	"      --verify HEX     compare the digest with HEX, in cryptod; a\n"
	"                       HEX of 4 bytes or more but shorter than the\n"
	"                       digest is compared with its first bytes\n"
	"      --engine NAME    run on this engine (default: daemon's pick)\n"
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
	"      --tag-len N      truncate the MAC to its first N bytes\n"
	"                       (4..its full length)\n"
	"      --in FILE        read FILE instead of stdin (-: stdin)\n"
	"      --out FILE       write FILE instead of stdout (through a\n"
	"                       temporary file beside it, mode 0600)\n"
	"      --binary         write the MAC's bytes, no hex, no newline\n"
	"      --verify HEX     compare the MAC with HEX, in cryptod; sets\n"
	"                       --tag-len\n"
	"      --engine NAME    run on this engine (default: daemon's pick)\n"
	"  -s, --socket PATH    daemon socket\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: 0 success (--verify: the MAC matches); 1 failure\n"
	"(daemon unreachable or refused, I/O error, stdin or stdout closed,\n"
	"aes-xcbc-mac input too large); 2 bad arguments; 3 --verify: the MAC\n"
	"does not match.\n";

enum {
	OPT_KEY_FILE = 0x100,
	OPT_TAG_LEN,
	OPT_IN,
	OPT_OUT,
	OPT_BINARY,
	OPT_VERIFY,
	OPT_ENGINE,
	OPT_KEY_NAME,
};

static int parse_args(struct crypt_args *a, struct cli *cli, int argc,
		      char **argv)
{
	static const struct option opts[] = {
		{ "alg", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, 'k' },
		{ "key-file", required_argument, NULL, OPT_KEY_FILE },
		{ "key-name", required_argument, NULL, OPT_KEY_NAME },
		{ "tag-len", required_argument, NULL, OPT_TAG_LEN },
		{ "in", required_argument, NULL, OPT_IN },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "binary", no_argument, NULL, OPT_BINARY },
		{ "verify", required_argument, NULL, OPT_VERIFY },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const int mac = a->what == CRYPT_CMD_MAC;
	int c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, mac ? "a:k:hs:" : "a:hs:", opts,
				NULL)) != -1) {
		ret = 0;
		if (!mac &&
		    (c == 'k' || c == OPT_KEY_FILE || c == OPT_KEY_NAME))
			return cli_usage_err(a->cmd, "a digest takes no key "
						     "('cryptoctl mac' does)");
		if (!mac && c == OPT_TAG_LEN)
			return cli_usage_err(a->cmd, "--tag-len is for mac");
		switch (c) {
		case 'a':
			ret = crypt_alg_parse(a, optarg);
			break;
		case 'k':
			ret = crypt_parse_key_arg(a, 0, optarg);
			break;
		case OPT_KEY_FILE:
			ret = crypt_parse_key_file(a, 0, optarg);
			break;
		case OPT_KEY_NAME:
			a->key_name = optarg;
			break;
		case OPT_TAG_LEN:
			if (crypt_parse_uint(optarg, CLI_TAG_MAX, &a->tag_len))
				return cli_usage_err(a->cmd,
						     "--tag-len: '%s' is not "
						     "a number up to %d",
						     optarg, CLI_TAG_MAX);
			a->tag_len_set = 1;
			break;
		case OPT_IN:
			a->in_path = optarg;
			break;
		case OPT_OUT:
			a->out_path = optarg;
			break;
		case OPT_BINARY:
			a->binary = 1;
			break;
		case OPT_VERIFY:
			ret = crypt_parse_hex(a, "--verify", optarg, a->tag,
					      sizeof(a->tag), &a->tag_given);
			a->have_tag = !ret;
			a->dir = CC_DECRYPT;
			break;
		case OPT_ENGINE:
			a->engine = optarg;
			break;
		case 'h':
			fputs(mac ? usage_mac : usage_digest, stdout);
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
	if (!ret && a->binary && a->have_tag)
		ret = cli_usage_err(a->cmd, "--verify writes nothing: no "
					    "--binary");
	if (!ret)
		ret = crypt_args_check(a);
	if (!ret)
		ret = crypt_caps_check(cli, a);
	return ret;
}

static int cmd_auth(struct cli *cli, enum crypt_cmd what, int argc, char **argv)
{
	struct crypt_args *a;
	int ret;

	/* On the heap, as encrypt's (its AAD buffer). */
	a = calloc(1, sizeof(*a));
	if (!a) {
		cli_err("out of memory");
		return CLI_EXIT_FAIL;
	}
	a->what = what;
	a->cmd = what == CRYPT_CMD_MAC ? "mac" : "digest";
	a->dir = CC_ENCRYPT;
	a->key_max = CLI_MAC_KEY_MAX;
	crypt_begin(a);
	crypt_alg_parse(a, what == CRYPT_CMD_MAC ? "hmac-sha256" : "sha256");

	ret = parse_args(a, cli, argc, argv);
	if (ret)
		ret = ret > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	else
		ret = crypt_run(cli, a);
	crypt_args_wipe(a);
	free(a);
	return ret;
}

int cmd_digest(struct cli *cli, int argc, char **argv)
{
	return cmd_auth(cli, CRYPT_CMD_DIGEST, argc, argv);
}

int cmd_mac(struct cli *cli, int argc, char **argv)
{
	return cmd_auth(cli, CRYPT_CMD_MAC, argc, argv);
}
