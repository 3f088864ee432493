/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl sign / verify / derive: a key pair's ops in cryptod
 * (docs/asymmetric.md), as 'openssl pkeyutl' does them in-process. The
 * key is a named key the daemon holds (-k NAME), or a PEM or DER file
 * (--key-file) that cryptoctl reads with OpenSSL and sends as DER, wiped
 * once the session holds it. RSA and ECDSA sign a digest: cryptoctl
 * hashes the input (-d) unless --prehashed; EdDSA signs the input.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cryptod/pkey_row.h>

#include "commands.h"

static const char usage_sign[] =
	"Usage: cryptoctl sign (-k NAME -a ALG | --key-file FILE) [OPTIONS]\n"
	"\n"
	"Sign stdin (or --in FILE) in cryptod and write the signature's\n"
	"bytes to stdout (or -o FILE): as 'openssl pkeyutl -sign' (RSA,\n"
	"ECDSA: of the input's digest, which cryptoctl computes; a DER\n"
	"ECDSA signature) and 'openssl pkeyutl -sign -rawin' (Ed25519,\n"
	"Ed448: of the input itself).\n"
	"\n"
	"  -k, --key-name NAME  a named key pair the daemon holds; -a says\n"
	"                       its algorithm\n"
	"  -a, --alg ALG        rsa-2048, rsa-3072, rsa-4096, ec-p256,\n"
	"                       ec-p384, ec-p521, ed25519, ed448 (with\n"
	"                       --key-file: the key's own, which is the\n"
	"                       default)\n"
	"      --key-file FILE  a private key, PEM or DER (PKCS#8 or the\n"
	"                       key type's own); verify takes a public key\n"
	"  -d, --digest MD      sha1, sha224, sha256 (default), sha384,\n"
	"                       sha512 (RSA, ECDSA)\n"
	"      --prehashed      the input is the digest already (its length\n"
	"                       the digest's)\n"
	"      --pss            RSA: PSS with MGF1 over the digest (default:\n"
	"                       PKCS#1 v1.5)\n"
	"      --saltlen N      PSS's salt: bytes, 'digest' (the default) or\n"
	"                       'max' (verify: any length)\n"
	"      --in FILE        read FILE instead of stdin (at most 16 MiB)\n"
	"  -o, --out FILE       write FILE instead of stdout\n"
	"  -s, --socket PATH    daemon socket\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: 0 success; 1 failure (daemon unreachable or refused,\n"
	"I/O error); 2 bad arguments or a key of another algorithm.\n";

static const char usage_verify[] =
	"Usage: cryptoctl verify (-k NAME -a ALG | --key-file FILE) --sig FILE\n"
	"                        [OPTIONS]\n"
	"\n"
	"Verify the signature in --sig FILE over stdin (or --in FILE) in\n"
	"cryptod; print nothing: the exit status says. The options are\n"
	"sign's (cryptoctl sign --help); --key-file may hold the public key\n"
	"alone (PEM or DER SubjectPublicKeyInfo).\n"
	"\n"
	"      --sig FILE       the signature's bytes\n"
	"\n"
	"Exit status: 0 the signature verifies; 1 failure; 2 bad arguments;\n"
	"3 the signature does not verify.\n";

static const char usage_derive[] =
	"Usage: cryptoctl derive (-k NAME -a ALG | --key-file FILE) --peer FILE\n"
	"                        [-o FILE]\n"
	"\n"
	"Derive the secret shared with the peer's public key in cryptod and\n"
	"write its bytes to stdout (or -o FILE), as 'openssl pkeyutl\n"
	"-derive -peerkey'. Keys: ec-p256, ec-p384, ec-p521 (ECDH, the\n"
	"secret the shared point's x), x25519, x448.\n"
	"\n"
	"      --peer FILE      the peer's public key: PEM or DER\n"
	"                       SubjectPublicKeyInfo, or its raw bytes as\n"
	"                       TLS carries them (an uncompressed EC point;\n"
	"                       X25519's 32, X448's 56 bytes)\n"
	"  Other options as sign's (cryptoctl sign --help).\n"
	"\n"
	"Exit status: 0 success; 1 failure (a peer key not on the curve: the\n"
	"daemon refuses it); 2 bad arguments.\n";

enum {
	OPT_KEY_FILE = 256,
	OPT_PREHASHED,
	OPT_PSS,
	OPT_SALTLEN,
	OPT_IN,
	OPT_SIG,
	OPT_PEER
};

static const struct option pk_opts[] = {
	{ "key-name", required_argument, NULL, 'k' },
	{ "alg", required_argument, NULL, 'a' },
	{ "key-file", required_argument, NULL, OPT_KEY_FILE },
	{ "digest", required_argument, NULL, 'd' },
	{ "prehashed", no_argument, NULL, OPT_PREHASHED },
	{ "pss", no_argument, NULL, OPT_PSS },
	{ "saltlen", required_argument, NULL, OPT_SALTLEN },
	{ "in", required_argument, NULL, OPT_IN },
	{ "out", required_argument, NULL, 'o' },
	{ "sig", required_argument, NULL, OPT_SIG },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "socket", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct pk_args {
	const char *cmd, *key_name, *key_file, *in, *out, *sig, *peer;
	enum cc_dir op;
	int alg; /* enum cc_alg, or 0 */
	struct cc_pk_params pp;
	int prehashed;
};

/* A whole file (or stdin for NULL / "-"), at most max bytes: malloc'd,
 * its length in *len; NULL (reported) on failure. */
static uint8_t *pk_slurp(const char *path, size_t max, size_t *len)
{
	int std = !path || !strcmp(path, "-");
	FILE *f = std ? stdin : fopen(path, "rb");
	uint8_t *buf = malloc(max + 1);
	size_t n = 0;
	if (!f || !buf) {
		cli_err("%s: %s", std ? "stdin" : path, strerror(errno));
		goto err;
	}
	n = fread(buf, 1, max + 1, f);
	if (ferror(f) || n > max) {
		cli_err("%s: %s", std ? "stdin" : path,
			n > max ? "too large" : strerror(errno));
		goto err;
	}
	if (!std)
		fclose(f);
	*len = n;
	return buf;
err:
	if (f && !std)
		fclose(f);
	if (buf)
		OPENSSL_cleanse(buf, max + 1);
	free(buf);
	return NULL;
}

/* A PEM or DER key, private or public (pub: 1 when public only). */
static EVP_PKEY *pk_parse(const uint8_t *b, size_t n, int *pub)
{
	const unsigned char *p = b;
	EVP_PKEY *k = NULL;
	BIO *bio = BIO_new_mem_buf(b, (int)n);
	*pub = 0;
	if (bio && (k = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL)))
		goto out;
	if (bio && BIO_reset(bio) == 1 &&
	    (k = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL))) {
		*pub = 1;
		goto out;
	}
	if ((k = d2i_AutoPrivateKey(NULL, &p, (long)n)))
		goto out;
	p = b;
	k = d2i_PUBKEY(NULL, &p, (long)n);
	*pub = k != NULL;
out:
	BIO_free(bio);
	return k;
}

/* k as the DER the daemon takes: PKCS#8, or SubjectPublicKeyInfo. */
static int pk_der(EVP_PKEY *k, int pub, uint8_t **der)
{
	*der = NULL;
	if (pub)
		return i2d_PUBKEY(k, der);
	PKCS8_PRIV_KEY_INFO *p8 = EVP_PKEY2PKCS8(k);
	int n = p8 ? i2d_PKCS8_PRIV_KEY_INFO(p8, der) : -1;
	PKCS8_PRIV_KEY_INFO_free(p8);
	return n;
}

/* The session: a named key, or the key file's. 0 and *sid, or an exit
 * status. */
static int pk_session(struct pk_args *a, struct cc_conn *conn, uint32_t *sid)
{
	struct cc_session_params p = { .alg = (enum cc_alg)a->alg,
				       .key_name = a->key_name };
	uint8_t *der = NULL;
	int n = 0, err;
	if (a->key_file) {
		size_t len;
		int pub;
		uint8_t *b = pk_slurp(a->key_file, 65536, &len);
		if (!b)
			return CLI_EXIT_FAIL;
		EVP_PKEY *k = pk_parse(b, len, &pub);
		OPENSSL_cleanse(b, len);
		free(b);
		if (!k) {
			cli_err("%s: no key there (PEM or DER)", a->key_file);
			return CLI_EXIT_USAGE;
		}
		int alg = (int)crd_pkey_row(k);
		if (!alg || (a->alg && a->alg != alg)) {
			cli_usage_err(a->cmd, "%s: %s", a->key_file,
				      alg ? "a key of another algorithm than -a"
					  : "no algorithm takes this key");
			EVP_PKEY_free(k);
			return CLI_EXIT_USAGE;
		}
		a->alg = alg;
		n = pk_der(k, pub, &der);
		EVP_PKEY_free(k);
		if (n <= 0) {
			cli_err("%s: cannot encode the key", a->key_file);
			return CLI_EXIT_FAIL;
		}
		p.alg = (enum cc_alg)alg;
		p.key = der;
		p.key_len = (size_t)n;
	}
	err = cc_session_create(conn, &p, sid);
	if (der)
		OPENSSL_clear_free(der, (size_t)n);
	if (err) {
		cli_err("%s: session: %s", a->cmd, cli_strerror(err));
		return CLI_EXIT_FAIL;
	}
	return 0;
}

/* The peer's public key as the derive takes it. */
static uint8_t *pk_peer(const char *path, size_t *len)
{
	size_t n;
	int pub;
	uint8_t *b = pk_slurp(path, 8192, &n);
	if (!b)
		return NULL;
	EVP_PKEY *k = pk_parse(b, n, &pub);
	if (!k) { /* raw bytes */
		*len = n;
		return b;
	}
	free(b);
	uint8_t *out = malloc(160);
	size_t m = 160;
	int ok =
		out && (EVP_PKEY_is_a(k, "EC")
				? EVP_PKEY_get_octet_string_param(
					  k, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY,
					  out, m, &m)
				: EVP_PKEY_get_raw_public_key(k, out, &m));
	EVP_PKEY_free(k);
	if (!ok) {
		cli_err("%s: not a public key a derive takes", path);
		free(out);
		return NULL;
	}
	*len = m;
	return out;
}

static int pk_write(const char *path, const uint8_t *b, size_t n)
{
	FILE *f = path && strcmp(path, "-") ? fopen(path, "wb") : stdout;
	if (!f || fwrite(b, 1, n, f) != n || (f != stdout && fclose(f))) {
		cli_err("%s: %s", path ? path : "stdout", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int pk_parse_args(struct pk_args *a, int argc, char **argv,
			 struct cli *cli, const char *usage)
{
	int c;
	a->pp.md = CC_PK_MD_SHA256;
	a->pp.salt_len = CC_PK_SALT_DIGEST;
	optind = 1;
	while ((c = getopt_long(argc, argv, "k:a:d:o:s:h", pk_opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'k':
			a->key_name = optarg;
			break;
		case 'a':
			a->alg = cc_alg_from_name(optarg);
			if (a->alg <= 0 ||
			    cc_alg_kind((enum cc_alg)a->alg) != CC_KIND_PKEY)
				return cli_usage_err(a->cmd,
						     "-a %s: not a key pair's "
						     "algorithm",
						     optarg);
			break;
		case 'd': {
			static const char *const mds[] = { "sha1", "sha224",
							   "sha256", "sha384",
							   "sha512" };
			a->pp.md = 0;
			for (unsigned i = 0; i < 5; i++)
				if (!strcmp(optarg, mds[i]))
					a->pp.md = (uint8_t)(i + 1);
			if (!a->pp.md)
				return cli_usage_err(a->cmd, "-d %s?", optarg);
			break;
		}
		case OPT_KEY_FILE:
			a->key_file = optarg;
			break;
		case OPT_PREHASHED:
			a->prehashed = 1;
			break;
		case OPT_PSS:
			a->pp.pad = CC_PK_PAD_PSS;
			break;
		case OPT_SALTLEN: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (!strcmp(optarg, "digest"))
				v = CC_PK_SALT_DIGEST;
			else if (!strcmp(optarg, "max"))
				v = CC_PK_SALT_MAX;
			else if (*end || v < 0 || v > 1024)
				return cli_usage_err(a->cmd, "--saltlen %s?",
						     optarg);
			a->pp.salt_len = (int32_t)v;
			break;
		}
		case OPT_IN:
			a->in = optarg;
			break;
		case 'o':
			a->out = optarg;
			break;
		case OPT_SIG:
			a->sig = optarg;
			break;
		case OPT_PEER:
			a->peer = optarg;
			break;
		case 's':
			cli->socket = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc)
		return cli_usage_err(a->cmd, "unexpected '%s'", argv[optind]);
	if (!a->key_name == !a->key_file)
		return cli_usage_err(a->cmd, "give -k NAME or --key-file FILE");
	if (a->key_name && !a->alg)
		return cli_usage_err(a->cmd, "-k NAME needs -a ALG");
	if (a->op == CC_VERIFY && !a->sig)
		return cli_usage_err(a->cmd, "--sig FILE is the signature");
	if (a->op == CC_DERIVE && !a->peer)
		return cli_usage_err(a->cmd, "--peer FILE is the peer's key");
	if (a->pp.pad != CC_PK_PAD_PSS)
		a->pp.salt_len = 0;
	return 0;
}

static int pk_run(struct cli *cli, int argc, char **argv, enum cc_dir op,
		  const char *usage)
{
	struct pk_args a = { .cmd = argv[0] + strlen("cryptoctl: "), .op = op };
	int ret = pk_parse_args(&a, argc, argv, cli, usage);
	if (ret)
		return ret > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	struct cc_conn *conn;
	if (cli_connect(cli, &conn))
		return CLI_EXIT_FAIL;
	uint32_t sid = 0;
	uint8_t *in = NULL, *sig = NULL, out[1024], dg[64];
	size_t in_len = 0, sig_len = 0, out_len = sizeof(out);
	ret = pk_session(&a, conn, &sid);
	if (ret)
		goto out;
	int digest = cc_alg_kind((enum cc_alg)a.alg) == CC_KIND_PKEY &&
		     (a.alg <= CC_ALG_EC_P521);
	if (op == CC_DERIVE) {
		in = pk_peer(a.peer, &in_len);
	} else {
		in = pk_slurp(a.in, CLI_DATA_MAX, &in_len);
		if (op == CC_VERIFY && in)
			sig = pk_slurp(a.sig, 1024, &sig_len);
	}
	if (!in || (op == CC_VERIFY && !sig)) {
		ret = CLI_EXIT_FAIL;
		goto out;
	}
	if (!digest || op == CC_DERIVE) {
		a.pp.md = 0;
		a.pp.pad = 0;
		a.pp.salt_len = 0;
	} else if (!a.prehashed) { /* RSA and ECDSA sign a digest */
		static const char *const mds[] = {
			"", "SHA1", "SHA224", "SHA256", "SHA384", "SHA512"
		};
		unsigned n = 0;
		if (!EVP_Digest(in, in_len, dg, &n,
				EVP_get_digestbyname(mds[a.pp.md]), NULL)) {
			cli_err("%s: cannot hash the input", a.cmd);
			ret = CLI_EXIT_FAIL;
			goto out;
		}
		memcpy(in, dg, n);
		in_len = n;
	}
	int st = cc_pk_op(conn, sid, op, &a.pp, in, in_len, sig, sig_len,
			  op == CC_VERIFY ? NULL : out,
			  op == CC_VERIFY ? NULL : &out_len);
	if (st == CC_ERR_BAD_SIGNATURE) {
		ret = CLI_EXIT_AUTH;
	} else if (st) {
		cli_err("%s: %s", a.cmd, cli_strerror(st));
		ret = st == CC_ERR_BAD_PARAM ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	} else {
		ret = op == CC_VERIFY ? CLI_EXIT_OK
				      : pk_write(a.out, out, out_len);
	}
out:
	OPENSSL_cleanse(out, sizeof(out)); /* a shared secret */
	free(in);
	free(sig);
	if (sid)
		cc_session_destroy(conn, sid);
	cc_disconnect(conn);
	return ret;
}

int cmd_sign(struct cli *cli, int argc, char **argv)
{
	return pk_run(cli, argc, argv, CC_SIGN, usage_sign);
}

int cmd_verify(struct cli *cli, int argc, char **argv)
{
	return pk_run(cli, argc, argv, CC_VERIFY, usage_verify);
}

int cmd_derive(struct cli *cli, int argc, char **argv)
{
	return pk_run(cli, argc, argv, CC_DERIVE, usage_derive);
}
