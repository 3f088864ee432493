/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl encrypt / decrypt: messages in cryptod, in the spirit of
 * kcapi-enc and openssl enc: options and help here; what each algorithm
 * accepts in crypt_alg.c; input and output in crypt_io.c; a message of
 * any length as a stream in crypt_stream.c; the session and the one-shot
 * operation (algorithms that do not stream, at most 16 MiB) in crypt_op.c.
 *
 * Key hygiene: the keys are parsed into fixed buffers that are wiped as
 * soon as the daemon holds them (the library copies them into the request
 * and wipes that; --sessionless: as soon as they are in the op's arena
 * buffer, itself wiped after the op); the hex strings in argv are wiped in
 * place as soon as they are parsed so ps stops showing them; the process
 * is made non-dumpable so neither a core file nor a same-user ptrace can
 * read keys or plaintext.
 *
 * Decrypt releases no plaintext before the tag verified: one operation's
 * output is written only on success; a stream's goes to a temporary file
 * (beside --out FILE, renamed over it; for stdout, unlinked and copied
 * out) until cc_stream_final() verified the tag, unless
 * --release-unverified.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "crypt.h"

/* Help text in pieces: encrypt and decrypt share the option lines
 * around their own. */
static const char usage_encrypt_head[] =
	"Usage: cryptoctl encrypt [-a ALG] -k HEX [-i HEX] [OPTIONS] "
	"<plain >cipher\n"
	"\n"
	"Encrypt stdin (or --in FILE) in cryptod and write the ciphertext to\n"
	"stdout (or --out FILE), followed by the tag if ALG has one; aes-gmac\n"
	"writes the tag alone. Algorithms marked * stream: input of any\n"
	"length, read 1 MiB at a time, in constant memory; the others take at\n"
	"most 16 MiB, as one operation. Never use an IV twice with the same\n"
	"key.\n"
	"\n";

static const char usage_decrypt_head[] =
	"Usage: cryptoctl decrypt [-a ALG] -k HEX [-i HEX] [OPTIONS] "
	"<cipher >plain\n"
	"\n"
	"Decrypt stdin (or --in FILE) in cryptod to stdout (or --out FILE).\n"
	"If ALG has a tag, no plaintext reaches stdout or FILE before the tag\n"
	"verified: a streamed message's plaintext waits in an unlinked\n"
	"temporary file in $TMPDIR (default /tmp), copied to stdout once the\n"
	"tag verified; FILE is replaced only then. On a mismatch nothing is\n"
	"written, FILE is left as it was, and the exit status is 3. aes-gmac\n"
	"verifies the tag over the input and writes nothing: exit status 0\n"
	"means the tag verified. Algorithms marked * stream, as for encrypt.\n"
	"\n";

static const char usage_key_opts[] =
	"  -a, --alg ALG        the algorithm, aes-gcm by default. The key\n"
	"                       length picks AES-128, -192 or -256 unless ALG\n"
	"                       names it, as in aes-128-cbc or aes-256-xts;\n"
	"                       * marks those that stream:\n"
	"                       * aes-gcm      AEAD; IV 12; tag 4, 8, 12..16\n"
	"                         aes-gmac     a MAC of the input; IV 12; tag\n"
	"                                      as aes-gcm\n"
	"                       * aes-cbc      IV 16; length a multiple of 16\n"
	"                       * aes-ctr      IV 16, the first counter block\n"
	"                       * aes-ecb      no IV; length a multiple of 16\n"
	"                       * aes-xts      key 32 or 64 bytes: data key,\n"
	"                                      then tweak key; IV 16, the\n"
	"                                      tweak; length at least 16;\n"
	"                                      streams with --data-unit\n"
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
	"                       * aes-ccm      IV 7..13, the nonce; tag 4..16\n"
	"                                      even (default 16)\n"
	"                       * chacha20-poly1305\n"
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
	"      --key-name NAME  a named key the daemon holds (cryptoctl\n"
	"                       key), instead of -k: its bytes never reach\n"
	"                       cryptoctl; -a must be the key's algorithm\n"
	"      --auth-key HEX   the HMAC key of aes-cbc-hmac-*, 1..64 bytes\n"
	"      --auth-key-file FILE\n"
	"                       read the HMAC key, in hex, from FILE\n"
	"  -i, --iv HEX         the IV, as -a says (aes-gcm, aes-gmac: 1..128\n"
	"                       bytes; 12 on every engine, the others as\n"
	"                       'cryptoctl engines' lists)\n"
	"      --aad HEX        additional authenticated data, <= 65535 B\n"
	"                       (aes-gcm, aes-gcm-rfc4106, aes-ccm,\n"
	"                       chacha20-poly1305 and aes-cbc-hmac-*\n"
	"                       only)\n"
	"      --in FILE        read FILE instead of stdin (-: stdin)\n"
	"      --out FILE       write FILE instead of stdout: a temporary\n"
	"                       file beside it (mode 0600) replaces it once\n"
	"                       all went well, so FILE is never half written\n"
	"                       (a FIFO or a device is written like stdout)\n"
	"      --data-unit N    aes-xts: encrypt in data units of N bytes\n"
	"                       (16..1048576; 4096 for disk sectors) and\n"
	"                       stream. Unit k's tweak is the IV plus k, as a\n"
	"                       128-bit little-endian number: the IV is the\n"
	"                       first unit's number. Without it the message\n"
	"                       is one data unit, at most 16 MiB\n";

static const char usage_encrypt_tag[] =
	"      --tag-out MODE   append: the tag follows the ciphertext on\n"
	"                       stdout (default); hex: stdout gets only the\n"
	"                       ciphertext; stderr, the tag in hex\n";

static const char usage_decrypt_tag[] =
	"  -t, --tag HEX        the expected tag; sets --tag-len. Without it\n"
	"                       the tag is the last tag-len bytes of the\n"
	"                       input, where 'cryptoctl encrypt' appends it\n"
	"      --release-unverified\n"
	"                       write a streamed message's plaintext as it is\n"
	"                       decrypted, before the tag is checked at the\n"
	"                       end, instead of holding it back in a\n"
	"                       temporary file. RISK: the output may be\n"
	"                       forged; whatever reads it must discard it\n"
	"                       unless the exit status is 0 (3: forged, and\n"
	"                       written already). --out FILE is still only\n"
	"                       replaced once the tag verified\n";

static const char usage_tail_opts[] =
	"      --tag-len N      tag bytes: aes-gcm and aes-gmac 4, 8 or\n"
	"                       12..16 (default 16); aes-ccm 4..16, even\n"
	"                       (default 16); chacha20-poly1305 16;\n"
	"                       aes-cbc-hmac-sha1 12; aes-cbc-hmac-sha256 16\n"
	"      --engine NAME    run on this engine (default: daemon's pick);\n"
	"                       one that does not stream ALG takes at most\n"
	"                       16 MiB\n"
	"      --sessionless    create no session: the keys travel with the\n"
	"                       op, which expands them itself (no --engine);\n"
	"                       one operation, at most 16 MiB\n"
	"      --progress[=WHEN]\n"
	"                       bytes done, rate and (input a file) share\n"
	"                       and time left on stderr, twice a second,\n"
	"                       and a last line; WHEN: auto (the default:\n"
	"                       only when stderr is a terminal), always,\n"
	"                       never\n"
	"  -s, --socket PATH    daemon socket\n"
	"  -h, --help           this text\n";

static const char usage_foot[] =
	"\n"
	"Input: aes-cbc, aes-ecb, aes-cbc-hmac-* and aes-cbc-null need a\n"
	"multiple of 16 bytes (of ciphertext: without the tag), aes-xts at\n"
	"least 16, in the last data unit too (else exit status 2; checked at\n"
	"the end of input from a pipe, when more than 1 MiB of output may\n"
	"have gone to stdout). aes-ccm needs the length up front: input from\n"
	"a pipe is first copied to an unlinked temporary file in $TMPDIR\n"
	"(--in FILE or <FILE does without). The other algorithms, and\n"
	"aes-xts without --data-unit, take at most 16 MiB (else exit status\n"
	"1).\n"
	"\n"
	"Exit status: 0 success; 1 failure (daemon unreachable or refused,\n"
	"I/O error, stdin or stdout closed, input too large); 2 bad arguments\n"
	"or input length (decrypt: shorter than the tag); 3 (decrypt) the\n"
	"tag did not verify (a truncated or altered ciphertext).\n";

static void print_usage(enum cc_dir dir)
{
	const int enc = dir == CC_ENCRYPT;

	fputs(enc ? usage_encrypt_head : usage_decrypt_head, stdout);
	fputs(usage_key_opts, stdout);
	fputs(enc ? usage_encrypt_tag : usage_decrypt_tag, stdout);
	fputs(usage_tail_opts, stdout);
	fputs(usage_foot, stdout);
}

enum {
	OPT_AAD = CRYPT_OPT_OWN,
	OPT_TAG_OUT,
	OPT_AUTH_KEY,
	OPT_AUTH_KEY_FILE,
	OPT_SESSIONLESS,
	OPT_DATA_UNIT,
	OPT_RELEASE,
};

static const struct option crypt_opts[] = {
	{ "alg", required_argument, NULL, 'a' },
	{ "key", required_argument, NULL, 'k' },
	{ "key-file", required_argument, NULL, CRYPT_OPT_KEY_FILE },
	{ "key-name", required_argument, NULL, CRYPT_OPT_KEY_NAME },
	{ "auth-key", required_argument, NULL, OPT_AUTH_KEY },
	{ "auth-key-file", required_argument, NULL, OPT_AUTH_KEY_FILE },
	{ "iv", required_argument, NULL, 'i' },
	{ "aad", required_argument, NULL, OPT_AAD },
	{ "tag", required_argument, NULL, 't' },
	{ "tag-len", required_argument, NULL, CRYPT_OPT_TAG_LEN },
	{ "tag-out", required_argument, NULL, OPT_TAG_OUT },
	{ "engine", required_argument, NULL, CRYPT_OPT_ENGINE },
	{ "sessionless", no_argument, NULL, OPT_SESSIONLESS },
	{ "in", required_argument, NULL, CRYPT_OPT_IN },
	{ "out", required_argument, NULL, CRYPT_OPT_OUT },
	{ "data-unit", required_argument, NULL, OPT_DATA_UNIT },
	{ "release-unverified", no_argument, NULL, OPT_RELEASE },
	{ "progress", optional_argument, NULL, CRYPT_OPT_PROGRESS },
	{ "help", no_argument, NULL, 'h' },
	{ "socket", required_argument, NULL, 's' },
	{ NULL, 0, NULL, 0 },
};

/* encrypt's and decrypt's own options (crypt.h: struct crypt_front). */
static int crypt_opt(struct crypt_args *a, int c, char *arg)
{
	const int enc = a->dir == CC_ENCRYPT;
	int ret;

	switch (c) {
	case OPT_AUTH_KEY:
		return crypt_parse_key_arg(a, 1, arg);
	case OPT_AUTH_KEY_FILE:
		return crypt_parse_key_file(a, 1, arg);
	case 'i':
		ret = crypt_parse_hex(a, "--iv", arg, a->iv, sizeof(a->iv),
				      &a->iv_len);
		a->have_iv = !ret;
		return ret;
	case OPT_AAD:
		return crypt_parse_hex(a, "--aad", arg, a->aad, sizeof(a->aad),
				       &a->aad_len);
	case 't':
		if (enc)
			return cli_usage_err(a->cmd,
					     "--tag is for decrypt; "
					     "encrypt computes the tag");
		ret = crypt_parse_hex(a, "--tag", arg, a->tag, sizeof(a->tag),
				      &a->tag_given);
		a->have_tag = !ret;
		return ret;
	case OPT_TAG_OUT:
		if (!enc)
			return cli_usage_err(a->cmd,
					     "--tag-out is for encrypt");
		if (!strcmp(arg, "hex"))
			a->tag_hex = 1;
		else if (!strcmp(arg, "append"))
			a->tag_hex = 0;
		else
			return cli_usage_err(a->cmd,
					     "--tag-out: 'append' or "
					     "'hex', not '%s'",
					     arg);
		a->tag_out_set = 1;
		return 0;
	case OPT_SESSIONLESS:
		a->sessionless = 1;
		return 0;
	case OPT_DATA_UNIT:
		if (crypt_parse_uint(arg, ~0u, &a->data_unit) || !a->data_unit)
			return cli_usage_err(a->cmd,
					     "--data-unit: '%s' is not "
					     "a byte count",
					     arg);
		return 0;
	case OPT_RELEASE:
		if (enc)
			return cli_usage_err(a->cmd, "--release-unverified is "
						     "for decrypt");
		a->release_unverified = 1;
		return 0;
	case 'h':
		print_usage(a->dir);
		return 1;
	default:
		return -ENOENT;
	}
}

static void crypt_init(struct crypt_args *a, enum cc_dir dir)
{
	a->cmd = dir == CC_ENCRYPT ? "encrypt" : "decrypt";
	a->what = CRYPT_CMD_CRYPT;
	a->dir = dir;
	a->key_max = CLI_KEY_MAX;
	crypt_alg_parse(a, "aes-gcm");
}

static void encrypt_init(struct crypt_args *a)
{
	crypt_init(a, CC_ENCRYPT);
}

static void decrypt_init(struct crypt_args *a)
{
	crypt_init(a, CC_DECRYPT);
}

int cmd_encrypt(struct cli *cli, int argc, char **argv)
{
	static const struct crypt_front f = { crypt_opts,
					      "a:k:i:t:hs:", encrypt_init,
					      crypt_opt, NULL };
	return crypt_main(cli, &f, argc, argv);
}

int cmd_decrypt(struct cli *cli, int argc, char **argv)
{
	static const struct crypt_front f = { crypt_opts,
					      "a:k:i:t:hs:", decrypt_init,
					      crypt_opt, NULL };
	return crypt_main(cli, &f, argc, argv);
}
