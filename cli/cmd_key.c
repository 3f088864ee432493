/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl key: named keys, held by the daemon and used by name
 * (docs/keys.md). Nothing here ever prints a named key's bytes: they
 * never reach cryptoctl. Key material cryptoctl sends (import, a
 * wrapping key) is read from files in hex and wiped after use; a key
 * pair's private key (import --in) as the file holds it, PEM or DER,
 * which the daemon parses, wiped after use like its passphrase.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cryptod/ring_abi.h>

#include "cli.h"
#include "commands.h"
#include "hex.h"
#include "table.h"

static const char usage_key[] =
	"Usage: cryptoctl key create NAME --alg ALG [--bits N] [SPEC]\n"
	"       cryptoctl key import NAME --alg ALG --key-file FILE [SPEC]\n"
	"       cryptoctl key import NAME [--alg ALG] --in FILE\n"
	"                            [--passphrase-file FILE] [SPEC]\n"
	"       cryptoctl key unwrap NAME --alg ALG --wrapping-key-file FILE\n"
	"                            --wrapped-file FILE [SPEC]\n"
	"       cryptoctl key list [--json | --wide [--exact] | --names]\n"
	"       cryptoctl key show NAME [--json]\n"
	"       cryptoctl key rotate NAME [--json]\n"
	"       cryptoctl key wrap NAME --wrapping-key-file FILE [--version N]\n"
	"                          [--json]\n"
	"       cryptoctl key delete NAME\n"
	"       cryptoctl key pub NAME [--version N] [-o FILE]\n"
	"       cryptoctl key ref NAME [--version N] [-o FILE]\n"
	"\n"
	"Named keys live only in cryptod: clients use them by name\n"
	"(cc_session_params.key_name) and never see their bytes. create makes\n"
	"one from the daemon's randomness; import takes bytes once; unwrap\n"
	"imports a key wrapped (RFC 5649) under a key you give, which wrap\n"
	"produces from an exportable key, to move keys between hosts. rotate\n"
	"adds a version: new sessions get it, open ones keep theirs, older\n"
	"versions stay usable by number (up to 16). list and show print a\n"
	"key's facts and counters, never its bytes.\n"
	"\n"
	"Key pairs (--alg rsa-2048, rsa-3072, rsa-4096, ec-p256, ec-p384,\n"
	"ec-p521, ed25519, ed448, x25519, x448): create makes the pair in\n"
	"the daemon; import --in takes a private key as openssl writes it\n"
	"(PEM or DER: PKCS#8, encrypted PKCS#8 with --passphrase-file, or\n"
	"the traditional RSA and EC forms; --alg, when given, must match\n"
	"it); pub prints the public key (PEM), for anyone on the key's ACL;\n"
	"rotate makes a new pair; wrap exports an exportable pair's PKCS#8.\n"
	"ref prints a key-reference file (PEM, CRYPTOD KEY REFERENCE: the\n"
	"key's name, version and this daemon's socket, no secret) that a\n"
	"program loads as its private key file through cryptod's OpenSSL\n"
	"provider (docs/asymmetric.md); --version 0 (the default): the\n"
	"newest at each load.\n"
	"\n"
	"Access: create, import, unwrap, rotate, wrap and delete need root or\n"
	"the daemon's user. Using a key needs your uid, gid or a group of\n"
	"yours on its ACL; list and show give the keys you may use.\n"
	"\n"
	"SPEC:\n"
	"  --usage LIST       comma list of encrypt, decrypt, mac-generate,\n"
	"                     mac-verify, sign, verify, derive (default:\n"
	"                     encrypt,decrypt; MAC algorithms\n"
	"                     mac-generate,mac-verify; a key pair all its\n"
	"                     algorithm allows: RSA sign,verify,encrypt,\n"
	"                     decrypt, EC sign,verify,derive, EdDSA\n"
	"                     sign,verify, X25519/X448 derive)\n"
	"  --uid USER         may use the key (repeat; name or number)\n"
	"  --gid GROUP        members may use the key (repeat; name or\n"
	"                     number)\n"
	"                     (neither given: your own uid)\n"
	"  --exportable       wrap may export it (default: never)\n"
	"Options:\n"
	"  --alg ALG          as encrypt -a takes it: aes-gcm, aes-256-gcm\n"
	"                     (the size in the name is --bits), gcm(aes);\n"
	"                     or a key pair's: rsa-2048 ... x448\n"
	"  --bits N           create: key size (default 256, or the name's);\n"
	"                     import, unwrap: refuse a key of another size\n"
	"                     (not for key pairs: their --alg says it)\n"
	"  --key-file FILE    import: the key in hex (/dev/fd/N)\n"
	"  --in FILE          import: a key pair's private key, PEM or DER\n"
	"  --passphrase-file FILE  import --in: an encrypted key's\n"
	"                     passphrase (the first line)\n"
	"  -o, --out FILE     pub, ref: write the PEM there (default: stdout)\n"
	"  --wrapping-key-file FILE  16, 24 or 32 bytes in hex\n"
	"  --wrapped-file FILE       unwrap: the wrapped key in hex\n"
	"  --version N        wrap, pub: that version (default: the newest)\n"
	"      --names        list: the names alone, one a line (scripts,\n"
	"                     shell completion)\n"
	"      --wide         list: whole names and ACLs (else cut to 20\n"
	"                     characters, ending in ~)\n"
	"      --exact        list: BYTES as an exact integer (else\n"
	"                     1024-based units: 850, 3.5K, 16.6G)\n"
	"  -j, --json         list, show, create, import, unwrap, rotate:\n"
	"                     {\"keys\": [{name, alg, key_bits (null for a\n"
	"                     key pair, which has key_pair: \"RSA:2048\",\n"
	"                     \"EC:P-256\", \"ED25519\"...), usage,\n"
	"                     exportable, uids, gids, user_names,\n"
	"                     group_names (null: no name), versions, created,\n"
	"                     ops, bytes, last_use}]}; wrap: {name, version\n"
	"                     (0: the newest), wrapped (hex)}\n"
	"  -s, --socket PATH  daemon socket\n"
	"  -h, --help         this text\n"
	"wrap prints the wrapped key in hex on stdout.\n";

/* Bit i of the usage is usage_names[i] (CC_KEY_*). */
static const char *const usage_names[] = { "encrypt",	   "decrypt",
					   "mac-generate", "mac-verify",
					   "sign",	   "verify",
					   "derive" };
enum { N_USAGE = sizeof(usage_names) / sizeof(usage_names[0]) };
_Static_assert(CC_KEY_SIGN == 1u << 4 && CC_KEY_DERIVE == 1u << 6,
	       "usage_names follows the bits");

enum {
	OPT_ALG = 256,
	OPT_BITS,
	OPT_USAGE,
	OPT_UID,
	OPT_GID,
	OPT_EXPORTABLE,
	OPT_KEY_FILE,
	OPT_WKEY_FILE,
	OPT_WRAPPED_FILE,
	OPT_VERSION,
	OPT_NAMES,
	OPT_IN,
	OPT_PASS_FILE,
};

struct key_args {
	const char *sub, *name;
	struct cc_key_spec spec;
	uint32_t uids[CC_KEY_IDS_MAX], gids[CC_KEY_IDS_MAX];
	int have_alg, have_usage, have_bits, json, names;
	unsigned bits, version;
	unsigned alg_bits; /* the key bits --alg's name says (0: none) */
	const char *alg_arg;
	const char *key_file, *wkey_file, *wrapped_file;
	const char *in, *pass_file, *out;
};

static int parse_usage(const char *s, unsigned *out)
{
	char buf[128];
	*out = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save, *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		unsigned i;
		for (i = 0; i < N_USAGE && strcmp(t, usage_names[i]); i++)
			;
		if (i == N_USAGE)
			return -EINVAL;
		*out |= 1u << i;
	}
	return *out ? 0 : -EINVAL;
}

static int parse_id(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* Hex from a file into out[0..max): the byte count or -errno. */
static int read_hex_file(const char *path, uint8_t *out, size_t max)
{
	char buf[CLI_KEYFILE_MAX + 1];
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n > 0)
			len += (size_t)n;
	} while ((n > 0 && len < sizeof(buf) - 1) || (n < 0 && errno == EINTR));
	close(fd);
	buf[len] = '\0';
	char *s = buf + strspn(buf, " \t\r\n");
	s[strcspn(s, " \t\r\n")] = '\0';
	int ret = n < 0 ? -EIO : hex_decode(s, out, max);
	explicit_bzero(buf, sizeof(buf));
	return ret;
}

static int parse(struct cli *cli, struct key_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "alg", required_argument, NULL, OPT_ALG },
		{ "bits", required_argument, NULL, OPT_BITS },
		{ "usage", required_argument, NULL, OPT_USAGE },
		{ "uid", required_argument, NULL, OPT_UID },
		{ "gid", required_argument, NULL, OPT_GID },
		{ "exportable", no_argument, NULL, OPT_EXPORTABLE },
		{ "key-file", required_argument, NULL, OPT_KEY_FILE },
		{ "wrapping-key-file", required_argument, NULL, OPT_WKEY_FILE },
		{ "wrapped-file", required_argument, NULL, OPT_WRAPPED_FILE },
		{ "version", required_argument, NULL, OPT_VERSION },
		{ "wide", no_argument, NULL, 'W' },
		{ "exact", no_argument, NULL, 'X' },
		{ "names", no_argument, NULL, OPT_NAMES },
		{ "in", required_argument, NULL, OPT_IN },
		{ "passphrase-file", required_argument, NULL, OPT_PASS_FILE },
		{ "out", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t id;
	int c;

	a->bits = 256;
	optind = 0;
	while ((c = getopt_long(argc, argv, "hs:jo:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_key, stdout);
			return 1;
		case 's':
			cli->socket = optarg;
			break;
		case 'j':
			a->json = 1;
			break;
		case 'W':
			tbl_wide = 1;
			break;
		case 'X':
			tbl_exact = 1;
			break;
		case OPT_NAMES:
			a->names = 1;
			break;
		case OPT_IN:
			a->in = optarg;
			break;
		case OPT_PASS_FILE:
			a->pass_file = optarg;
			break;
		case 'o':
			a->out = optarg;
			break;
		case OPT_ALG: {
			enum cc_alg alg;
			if (cli_alg_lookup(optarg, &alg, &a->alg_bits))
				return cli_usage_err(
					"key",
					"--alg %s: unknown ('cryptoctl "
					"engines' lists the "
					"algorithms)",
					optarg);
			a->spec.alg = alg;
			a->alg_arg = optarg;
			a->have_alg = 1;
			break;
		}
		case OPT_BITS:
			if (parse_id(optarg, &id) || !id || id % 8 ||
			    id > 8 * CLI_MAC_KEY_MAX)
				return cli_usage_err("key",
						     "--bits %s: a multiple of "
						     "8, 8..2048",
						     optarg);
			a->bits = id;
			a->have_bits = 1;
			break;
		case OPT_USAGE:
			if (parse_usage(optarg, &a->spec.usage))
				return cli_usage_err(
					"key",
					"--usage %s: want a comma list of "
					"encrypt, decrypt, mac-generate, "
					"mac-verify, sign, verify, derive",
					optarg);
			a->have_usage = 1;
			break;
		case OPT_UID:
		case OPT_GID: {
			const char *opt = c == OPT_UID ? "--uid" : "--gid";
			unsigned *n =
				c == OPT_UID ? &a->spec.nuids : &a->spec.ngids;
			uint32_t *v = c == OPT_UID ? a->uids : a->gids;
			if (*n == CC_KEY_IDS_MAX)
				return cli_usage_err("key", "%s: at most %d",
						     opt, CC_KEY_IDS_MAX);
			int r = c == OPT_UID ? cli_parse_uid(optarg, &id)
					     : cli_parse_gid(optarg, &id);
			if (r)
				return cli_usage_err(
					"key", "%s %s: %s", opt, optarg,
					r == -ENOENT
						? (c == OPT_UID
							   ? "no such user"
							   : "no such group")
						: "not a name or number");
			v[(*n)++] = id;
			break;
		}
		case OPT_EXPORTABLE:
			a->spec.exportable = 1;
			break;
		case OPT_KEY_FILE:
			a->key_file = optarg;
			break;
		case OPT_WKEY_FILE:
			a->wkey_file = optarg;
			break;
		case OPT_WRAPPED_FILE:
			a->wrapped_file = optarg;
			break;
		case OPT_VERSION:
			if (parse_id(optarg, &id))
				return cli_usage_err("key", "--version %s",
						     optarg);
			a->version = id;
			break;
		default:
			return -EINVAL;
		}
	}
	/* "aes-256-gcm" is --bits 256; both given must agree. */
	if (a->alg_bits && a->have_bits && a->bits != a->alg_bits)
		return cli_usage_err("key",
				     "--bits %u conflicts with --alg %s (%u "
				     "bits): give one",
				     a->bits, a->alg_arg, a->alg_bits);
	if (a->alg_bits) {
		a->bits = a->alg_bits;
		a->have_bits = 1;
	}
	if (optind >= argc)
		return cli_usage_err("key", "which subcommand? (see --help)");
	a->sub = argv[optind++];
	if (optind < argc)
		a->name = argv[optind++];
	if (optind < argc)
		return cli_usage_err("key", "unexpected argument '%s'",
				     argv[optind]);
	int needs_name = strcmp(a->sub, "list") != 0;
	if (needs_name != (a->name != NULL))
		return cli_usage_err("key", "%s %s", a->sub,
				     needs_name ? "needs a NAME"
						: "takes no NAME");
	return 0;
}

static void print_json(const struct cc_key_info *v, unsigned n)
{
	char nm[CLI_NAME_MAX];

	fputs("{\"keys\": [", stdout);
	for (unsigned i = 0; i < n; i++) {
		const struct cc_key_info *k = &v[i];
		const char *alg = cc_alg_name(k->alg);
		printf("%s\n  {\"name\": ", i ? "," : "");
		json_str(k->name);
		fputs(", \"alg\": ", stdout);
		json_str(alg ? alg : "?");
		if (crd_alg_pkey(k->alg)) {
			fputs(", \"key_bits\": null, \"key_pair\": ", stdout);
			json_str(crd_alg_ossl_stem(k->alg));
			fputs(", \"usage\": [", stdout);
		} else {
			printf(", \"key_bits\": %u, \"usage\": [",
			       8 * k->key_len);
		}
		for (unsigned b = 0, f = 0; b < N_USAGE; b++)
			if (k->usage >> b & 1)
				printf("%s\"%s\"", f++ ? ", " : "",
				       usage_names[b]);
		printf("], \"exportable\": %s, \"uids\": [",
		       k->exportable ? "true" : "false");
		for (unsigned j = 0; j < k->nuids; j++)
			printf("%s%u", j ? ", " : "", k->uids[j]);
		fputs("], \"gids\": [", stdout);
		for (unsigned j = 0; j < k->ngids; j++)
			printf("%s%u", j ? ", " : "", k->gids[j]);
		/* The names beside them, null where an id has none. */
		fputs("], \"user_names\": [", stdout);
		for (unsigned j = 0; j < k->nuids; j++) {
			fputs(j ? ", " : "", stdout);
			cli_json_name(
				cli_user_name(k->uids[j], nm, sizeof(nm)));
		}
		fputs("], \"group_names\": [", stdout);
		for (unsigned j = 0; j < k->ngids; j++) {
			fputs(j ? ", " : "", stdout);
			cli_json_name(
				cli_group_name(k->gids[j], nm, sizeof(nm)));
		}
		fputs("], \"versions\": [", stdout);
		for (unsigned j = 0; j < k->nversions; j++)
			printf("%s%u", j ? ", " : "", k->versions[j]);
		fputs("], \"created\": [", stdout);
		for (unsigned j = 0; j < k->nversions; j++)
			printf("%s%" PRIu64, j ? ", " : "", k->created[j]);
		printf("], \"ops\": %" PRIu64 ", \"bytes\": %" PRIu64
		       ", \"last_use\": %" PRIu64 "}",
		       k->ops, k->bytes, k->last_use);
	}
	printf("%s]}\n", n ? "\n" : "");
}

static void fmt_usage(char *buf, size_t len, unsigned usage)
{
	size_t o = 0;
	buf[0] = '\0';
	for (unsigned b = 0; b < N_USAGE && o < len; b++)
		if (usage >> b & 1)
			o += (size_t)snprintf(buf + o, len - o, "%s%s",
					      o ? "," : "", usage_names[b]);
}

/* "uid 1000(alice),gid 27(sudo)": ids as id(1) prints them. */
static void fmt_ids(char *buf, size_t len, const uint32_t *u, unsigned nu,
		    const uint32_t *g, unsigned ng)
{
	char nm[CLI_NAME_MAX];
	size_t o = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < nu + ng && o < len; i++) {
		int user = i < nu;
		uint32_t id = user ? u[i] : g[i - nu];
		const char *name = user ? cli_user_name(id, nm, sizeof(nm))
					: cli_group_name(id, nm, sizeof(nm));
		o += (size_t)snprintf(buf + o, len - o, "%s%s %u%s%s%s",
				      o ? "," : "", user ? "uid" : "gid", id,
				      *name ? "(" : "", name, *name ? ")" : "");
	}
}

static int print_table(const struct cc_key_info *v, unsigned n)
{
	static const char *const titles[] = {
		"<NAME",  "<ALG", "BITS",  "VERSION",	"<USAGE",
		"EXPORT", "OPS",  "BYTES", "<LAST-USE", "<ACL",
	};
	enum { N_COLS = 10 };
	struct tbl t;

	if (tbl_init(&t, n, titles, N_COLS))
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const struct cc_key_info *k = &v[i];
		const char *alg = cc_alg_name(k->alg);
		tbl_text(&t, i, 0, k->name);
		tbl_text(&t, i, 1, alg ? alg : "?");
		if (crd_alg_pkey(k->alg)) /* its ALG says its size */
			tbl_text(&t, i, 2, "-");
		else
			tbl_u64(&t, i, 2, 8 * k->key_len);
		tbl_u64(&t, i, 3,
			k->nversions ? k->versions[k->nversions - 1] : 0);
		fmt_usage(tbl_cell(&t, i, 4), TBL_CELL, k->usage);
		tbl_text(&t, i, 5, k->exportable ? "yes" : "no");
		tbl_u64(&t, i, 6, k->ops);
		tbl_bytes(&t, i, 7, k->bytes);
		if (k->last_use) {
			time_t s = (time_t)k->last_use;
			struct tm tm;
			strftime(tbl_cell(&t, i, 8), TBL_CELL,
				 "%Y-%m-%d %H:%M:%S", gmtime_r(&s, &tm));
		} else {
			tbl_text(&t, i, 8, "never");
		}
		fmt_ids(tbl_cell(&t, i, 9), TBL_CELL, k->uids, k->nuids,
			k->gids, k->ngids);
	}
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

static int print_keys(const struct key_args *a, const struct cc_key_info *v,
		      unsigned n)
{
	if (a->json) {
		print_json(v, n);
		return 0;
	}
	if (a->names) {
		for (unsigned i = 0; i < n; i++)
			puts(v[i].name);
		return 0;
	}
	return print_table(v, n);
}

/* A usage error inside run(): reported, then 1 (CLI_EXIT_USAGE). */
#define KEY_USAGE(...) ((void)cli_usage_err("key", __VA_ARGS__), 1)

/* Default usage (by the algorithm's kind) and ACL, and the size: for
 * create the size to make; for import and unwrap the size the key must
 * have when --bits says one, else 0 (the key's own). */
static void spec_defaults(struct key_args *a, int create)
{
	a->spec.name = a->name;
	if (crd_alg_pkey(a->spec.alg) || (!a->have_alg && a->in)) {
		/* The daemon's defaults: all the row allows, the key's size */
		if (!a->have_usage)
			a->spec.usage = 0;
		a->spec.key_len = 0;
	} else if (!a->have_usage) {
		int mac = cc_alg_kind(a->spec.alg) == CC_KIND_MAC;
		a->spec.usage = mac ? CC_KEY_MAC_GENERATE | CC_KEY_MAC_VERIFY
				    : CC_KEY_ENCRYPT | CC_KEY_DECRYPT;
	}
	if (!a->spec.nuids && !a->spec.ngids) {
		a->uids[0] = (uint32_t)getuid();
		a->spec.nuids = 1;
	}
	a->spec.uids = a->uids;
	a->spec.gids = a->gids;
	if (!crd_alg_pkey(a->spec.alg) && !a->in)
		a->spec.key_len = create || a->have_bits ? a->bits / 8 : 0;
}

/* A whole file into buf (cap bytes): its length, -EFBIG past cap. */
static int read_raw_file(const char *path, uint8_t *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		n = read(fd, buf + len, cap - len);
		if (n > 0)
			len += (size_t)n;
	} while ((n > 0 && len < cap) || (n < 0 && errno == EINTR));
	if (n >= 0 && len == cap) {
		uint8_t more;
		n = read(fd, &more, 1);
		if (n > 0) {
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	return n < 0 ? -EIO : (int)len;
}

/* key import --in: the file as it is (the daemon parses it), and the
 * passphrase's first line; both wiped. */
static int import_pair(struct key_args *a, struct cc_conn *conn,
		       struct cc_key_info *info)
{
	static uint8_t key[CC_KEY_PAIR_MAX], pass[1024];
	int n, pl = 0, ret;

	if (a->key_file || a->have_bits)
		return KEY_USAGE("import --in: a key pair's file says its "
				 "size (no --key-file, no --bits)");
	n = read_raw_file(a->in, key, sizeof(key));
	if (n <= 0)
		return KEY_USAGE("--in %s: %s", a->in,
				 n == -EFBIG ? "longer than any key pair's "
					       "private key (8192 bytes)"
				 : n	     ? strerror(-n)
					     : "empty");
	if (a->pass_file) {
		pl = read_raw_file(a->pass_file, pass, sizeof(pass));
		if (pl < 0) {
			explicit_bzero(key, sizeof(key));
			return KEY_USAGE("--passphrase-file %s: %s",
					 a->pass_file,
					 pl == -EFBIG ? "longer than 1024 bytes"
						      : strerror(-pl));
		}
		/* the first line: up to a newline (CR LF too) */
		const uint8_t *nl = memchr(pass, '\n', (size_t)pl);
		if (nl)
			pl = (int)(nl - pass);
		if (pl && pass[pl - 1] == '\r')
			pl--;
	}
	ret = cc_key_import_pair(conn, &a->spec, key, (size_t)n,
				 pl ? pass : NULL, (size_t)pl, info);
	explicit_bzero(key, sizeof(key));
	explicit_bzero(pass, sizeof(pass));
	return ret;
}

/* der as PEM (label "PUBLIC KEY", ...) to f. */
static void pem_write(FILE *f, const char *label, const uint8_t *der, size_t n)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned col = 0;

	fprintf(f, "-----BEGIN %s-----\n", label);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)der[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)der[i + 1] << 8;
		if (i + 2 < n)
			v |= der[i + 2];
		char q[4] = { b64[v >> 18 & 63], b64[v >> 12 & 63],
			      i + 1 < n ? b64[v >> 6 & 63] : '=',
			      i + 2 < n ? b64[v & 63] : '=' };
		fwrite(q, 1, 4, f);
		col += 4;
		if (col == 64) {
			fputc('\n', f);
			col = 0;
		}
	}
	if (col)
		fputc('\n', f);
	fprintf(f, "-----END %s-----\n", label);
}

static int key_pub(struct key_args *a, struct cc_conn *conn)
{
	uint8_t der[2048];
	int n = cc_key_pub(conn, a->name, a->version, der, sizeof(der));
	if (n < 0)
		return n;
	FILE *f = a->out ? fopen(a->out, "w") : stdout;
	if (!f)
		return KEY_USAGE("-o %s: %s", a->out, strerror(errno));
	pem_write(f, "PUBLIC KEY", der, (size_t)n);
	if (a->out && fclose(f))
		return KEY_USAGE("-o %s: %s", a->out, strerror(errno));
	return 0;
}

/* A key-reference file (provider/prov_pkey_ref.c reads it): for a key
 * pair the caller may use (its public key is given), on the daemon at
 * path. */
static int key_ref(struct key_args *a, struct cc_conn *conn, const char *path)
{
	uint8_t der[2048];
	int n = cc_key_pub(conn, a->name, a->version, der, sizeof(der));
	if (n < 0)
		return n;
	char text[512];
	int tn = snprintf(text, sizeof(text),
			  "cryptod-key-ref 1\nname %s\nversion %u\nsocket %s\n",
			  a->name, a->version, path);
	if (tn < 0 || (size_t)tn >= sizeof(text))
		return -ENAMETOOLONG;
	FILE *f = a->out ? fopen(a->out, "w") : stdout;
	if (!f)
		return KEY_USAGE("-o %s: %s", a->out, strerror(errno));
	pem_write(f, "CRYPTOD KEY REFERENCE", (const uint8_t *)text,
		  (size_t)tn);
	if (a->out && fclose(f))
		return KEY_USAGE("-o %s: %s", a->out, strerror(errno));
	return 0;
}

static int run(struct key_args *a, struct cc_conn *conn, const char *path)
{
	struct cc_key_info info;
	uint8_t key[CLI_MAC_KEY_MAX], wkey[32], blob[CLI_MAC_KEY_MAX + 16];
	int ret, n, nw;
	const char *s = a->sub;

	if (!strcmp(s, "list")) {
		struct cc_key_info *v;
		unsigned cnt;
		ret = cc_key_list(conn, &v, &cnt);
		if (!ret) {
			ret = print_keys(a, v, cnt);
			cc_key_list_free(v);
		}
		return ret;
	}
	if (!strcmp(s, "show")) {
		ret = cc_key_show(conn, a->name, &info);
		return ret ? ret : print_keys(a, &info, 1);
	}
	if (!strcmp(s, "rotate")) {
		ret = cc_key_rotate(conn, a->name, &info);
		return ret < 0 ? ret : print_keys(a, &info, 1);
	}
	if (!strcmp(s, "delete"))
		return cc_key_delete(conn, a->name);
	if (!strcmp(s, "pub"))
		return key_pub(a, conn);
	if (!strcmp(s, "ref"))
		return key_ref(a, conn, path);
	if (!strcmp(s, "wrap")) {
		if (!a->wkey_file)
			return KEY_USAGE("wrap needs "
					 "--wrapping-key-file");
		nw = read_hex_file(a->wkey_file, wkey, sizeof(wkey));
		if (nw < 0)
			return KEY_USAGE("--wrapping-key-file %s: %s",
					 a->wkey_file, strerror(-nw));
		ret = cc_key_wrap(conn, a->name, a->version, wkey, (size_t)nw,
				  blob, sizeof(blob));
		explicit_bzero(wkey, sizeof(wkey));
		if (ret < 0)
			return ret;
		char hex[2 * sizeof(blob) + 1];
		hex_encode(blob, (size_t)ret, hex);
		if (a->json) {
			fputs("{\"name\": ", stdout);
			json_str(a->name);
			printf(", \"version\": %u, \"wrapped\": \"%s\"}\n",
			       a->version, hex);
		} else {
			puts(hex);
		}
		explicit_bzero(hex, sizeof(hex));
		return 0;
	}
	if (strcmp(s, "create") && strcmp(s, "import") && strcmp(s, "unwrap"))
		return KEY_USAGE("unknown subcommand '%s'", s);
	if (a->in && strcmp(s, "import"))
		return KEY_USAGE("--in is for import");
	if (!a->have_alg && !a->in)
		return KEY_USAGE("%s needs --alg", s);
	if (a->have_alg && *crd_alg_no_named_key(a->spec.alg))
		return KEY_USAGE("--alg %s %s", a->alg_arg,
				 crd_alg_no_named_key(a->spec.alg));
	if (a->have_alg && crd_alg_pkey(a->spec.alg) && a->have_bits)
		return KEY_USAGE("--alg %s says the key's size: no --bits",
				 a->alg_arg);
	if (a->have_alg && crd_alg_pkey(a->spec.alg) && !a->in &&
	    !strcmp(s, "import"))
		return KEY_USAGE("import of a key pair takes --in FILE (PEM "
				 "or DER), not --key-file");
	spec_defaults(a, !strcmp(s, "create"));
	if (!strcmp(s, "create")) {
		ret = cc_key_create(conn, &a->spec, &info);
	} else if (!strcmp(s, "import") && a->in) {
		ret = import_pair(a, conn, &info);
		if (ret > 0)
			return ret;
	} else if (!strcmp(s, "import")) {
		if (!a->key_file)
			return KEY_USAGE("import needs --key-file");
		n = read_hex_file(a->key_file, key, sizeof(key));
		if (n <= 0) {
			explicit_bzero(key, sizeof(key));
			return KEY_USAGE("--key-file %s: %s", a->key_file,
					 n ? strerror(-n) : "empty");
		}
		if (a->have_bits && (unsigned)n * 8 != a->bits) {
			explicit_bzero(key, sizeof(key));
			return KEY_USAGE("--key-file %s: %d bits, not the "
					 "%u --bits asks for",
					 a->key_file, 8 * n, a->bits);
		}
		ret = cc_key_import(conn, &a->spec, key, (size_t)n, &info);
		explicit_bzero(key, sizeof(key));
	} else {
		if (!a->wkey_file || !a->wrapped_file)
			return KEY_USAGE("unwrap needs "
					 "--wrapping-key-file and "
					 "--wrapped-file");
		nw = read_hex_file(a->wkey_file, wkey, sizeof(wkey));
		n = read_hex_file(a->wrapped_file, blob, sizeof(blob));
		if (nw < 0 || n <= 0) {
			explicit_bzero(wkey, sizeof(wkey));
			return KEY_USAGE("%s: not hex of the "
					 "right size",
					 nw < 0 ? a->wkey_file
						: a->wrapped_file);
		}
		ret = cc_key_unwrap(conn, &a->spec, wkey, (size_t)nw, blob,
				    (size_t)n, &info);
		explicit_bzero(wkey, sizeof(wkey));
	}
	return ret < 0 ? ret : print_keys(a, &info, 1);
}

int cmd_key(struct cli *cli, int argc, char **argv)
{
	struct key_args a = { 0 };
	struct cc_conn *conn;
	int ret;

	ret = parse(cli, &a, argc, argv);
	if (ret)
		return ret > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (cli_connect(cli, &conn))
		return CLI_EXIT_FAIL;
	ret = run(&a, conn, cli->path);
	if (ret < 0) {
		const char *why = cc_conn_last_error(conn);
		cli_err("key %s%s%s: %s%s%s", a.sub, a.name ? " " : "",
			a.name ? a.name : "", cli_strerror(ret),
			why && *why ? ": " : "", why ? why : "");
	}
	cc_disconnect(conn);
	if (ret > 0)
		return CLI_EXIT_USAGE;
	return ret < 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
