/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl: main(), global options, command dispatch, the two commands
 * too small for a file of their own (ping, version), and bench, which
 * runs the benchmark's own program. What the commands share: cli.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cryptod/clock.h>

#include "cli.h"
#include "commands.h"
#include "table.h"

static const char usage_main[] =
	"Usage: cryptoctl [--socket PATH] COMMAND [OPTIONS]\n"
	"       cryptoctl --help | --version\n"
	"\n"
	"Operate cryptod, the crypto offload daemon.\n"
	"\n"
	"Commands:\n"
	"  stats      counters and service-time percentiles per engine,\n"
	"             worker, client queue and session (--json,\n"
	"             --prometheus, --watch for a live view)\n"
	"  clients    the daemon's client connections\n"
	"  sessions   the sessions clients hold (never key material)\n"
	"  engines    algorithms and the engines that run them: sizes,\n"
	"             availability (or --json)\n"
	"  bench      the benchmark: throughput through cryptod side by side\n"
	"             with the in-process engines and DPDK's PMD (tables,\n"
	"             --csv, --json, --png chart, --dmcrypt); modes scale,\n"
	"             pcrypt, latency and pool measure the worker pool\n"
	"  encrypt    encrypt stdin (or --in FILE) to stdout (or --out FILE):\n"
	"             AES-GCM, -CCM, ChaCha20-Poly1305, AES-CBC, -CTR, -ECB,\n"
	"             -XTS stream in constant memory; AES-GMAC, CBC+HMAC,\n"
	"             ... at most 16 MiB\n"
	"  decrypt    decrypt, releasing no plaintext before the tag has\n"
	"             verified (aes-gmac: verify the tag of the input)\n"
	"  digest     SHA-1 or SHA-2 digest of the input, in hex (streams)\n"
	"  mac        HMAC-SHA-1/2 or AES-CMAC of the input, in hex, or\n"
	"             --verify it (streams)\n"
	"  sign       sign the input with a key pair (RSA, ECDSA: its\n"
	"             digest; Ed25519, Ed448), as openssl pkeyutl -sign\n"
	"  verify     verify a signature of the input (exit 3: it does not)\n"
	"  derive     the secret shared with a peer's public key (ECDH,\n"
	"             X25519, X448)\n"
	"  key        named keys held by the daemon, used by name, never\n"
	"             seen by clients: create, import, list, show, rotate,\n"
	"             wrap, unwrap, delete (--json)\n"
	"  ping       health check: does the daemon answer, are the engines\n"
	"             the operator routes algorithms to available\n"
	"  version    print the version of cryptoctl (and of the daemon)\n"
	"  help [COMMAND]\n"
	"             this text, or the help of COMMAND\n"
	"\n"
	"Options:\n"
	"  -s, --socket PATH  the daemon's socket (also accepted after\n"
	"                     COMMAND). Default: $CRYPTOD_SOCKET, else\n"
	"                     /run/cryptod/cryptod.sock for root or when\n"
	"                     it exists (the system service), else\n"
	"                     $XDG_RUNTIME_DIR/cryptod.sock, else\n"
	"                     /tmp/cryptod-$UID/cryptod.sock\n"
	"  -h, --help         this text; 'cryptoctl COMMAND --help' for one\n"
	"  -V, --version      print the version\n"
	"\n"
	"Commands that print data take --json (one object; stats --watch:\n"
	"one a line); text fits 100 columns, --wide adds the rest; byte\n"
	"counts in tables are 1024-based (16.6G), --exact prints them whole.\n"
	"\n"
	"Exit status:\n"
	"  0  success (also version and stats --prometheus with no daemon)\n"
	"  1  failure: daemon unreachable, refused or permission denied; an\n"
	"     I/O error; a closed stdin or stdout the command needs; input\n"
	"     too large for one operation\n"
	"  2  bad arguments, or an input length the algorithm cannot take\n"
	"     (decrypt: shorter than the tag); --in/--out cannot be opened\n"
	"  3  authentication failed (decrypt: the tag did not verify, as for a\n"
	"     truncated or altered ciphertext; digest, mac --verify: mismatch)\n"
	"  4  degraded (ping: an engine an algorithm is routed to is\n"
	"     unavailable)\n";

static const char usage_ping[] =
	"Usage: cryptoctl ping [--json | --wide] [--socket PATH]\n"
	"\n"
	"Health check for scripts and monitoring. Connect to cryptod, exchange\n"
	"hello, ask for its capabilities, and print the daemon's version and\n"
	"how long connecting and hello took. Then check every algorithm the\n"
	"operator's configuration routes to a named engine: if that engine is\n"
	"unavailable (the daemon falls back to another, or serves nothing),\n"
	"say which and why.\n"
	"\n"
	"  -j, --json         one JSON object: daemon_version, socket,\n"
	"                     hello_ms, degraded[] (alg, engine, reason) and\n"
	"                     status (healthy, degraded); unreachable:\n"
	"                     {status: \"unreachable\", socket, error}\n"
	"      --wide         each reason on one line (else wrapped within\n"
	"                     100 columns)\n"
	"\n"
	"Exit status:\n"
	"  0  healthy: the daemon answered and every routed engine is available\n"
	"  1  unreachable: no daemon at the socket, or it did not answer\n"
	"  2  bad arguments\n"
	"  4  degraded: the daemon answered, but an engine the configuration\n"
	"     routes an algorithm to is unavailable\n";

static const char usage_version[] =
	"Usage: cryptoctl version [--json] [--socket PATH]\n"
	"\n"
	"Print the version of cryptoctl and of the client API it was built\n"
	"against, then the daemon's if it answers, else that it did not.\n"
	"Exit status 0 either way ('cryptoctl --version' asks no daemon).\n"
	"\n"
	"  -j, --json         one JSON object: cryptoctl, api, socket, daemon\n"
	"                     (its version, or null and error)\n";

static double now_ms(void)
{
	return (double)crd_now_ns() / 1e6;
}

/* ping's degraded rows, as text or as the items of a JSON array. */
static unsigned ping_degraded(const struct cc_alg_caps *caps, unsigned n,
			      int json)
{
	unsigned i, degraded = 0;

	for (i = 0; i < n; i++) {
		const char *why =
			caps[i].reason[0] ? caps[i].reason : "no reason given";

		if (!caps[i].routed || caps[i].available)
			continue;
		if (json) {
			fputs(degraded ? ",\n    {\"alg\": "
				       : "\n    {\"alg\": ",
			      stdout);
			json_str(caps[i].alg_name);
			fputs(", \"engine\": ", stdout);
			json_str(caps[i].engine);
			fputs(", \"reason\": ", stdout);
			json_str(why);
			putchar('}');
		} else {
			int used =
				printf("degraded: %s is routed to engine %s, "
				       "which is unavailable:",
				       caps[i].alg_name, caps[i].engine);

			tbl_puts_wrapped(why, used > 0 ? (unsigned)used : 0);
			putchar('\n');
		}
		degraded++;
	}
	return degraded;
}

static int cmd_ping(struct cli *cli, int argc, char **argv)
{
	struct cc_alg_caps *caps;
	struct cc_conn *conn;
	unsigned n, degraded;
	double t0, hello_ms;
	int ret, json = 0;

	ret = cli_parse_simple(cli, argc, argv, "ping", usage_ping, &json);
	if (ret)
		return ret > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;

	t0 = now_ms();
	ret = cli_connect(cli, &conn);
	if (ret) {
		if (json) {
			fputs("{\"status\": \"unreachable\", \"socket\": ",
			      stdout);
			json_str(cli->path);
			fputs(", \"error\": ", stdout);
			json_str(cli_strerror(ret));
			fputs("}\n", stdout);
		}
		return CLI_EXIT_FAIL;
	}
	hello_ms = now_ms() - t0;
	ret = cc_capabilities_get(conn, &caps, &n);
	if (ret < 0) {
		cli_err("ping: capabilities: %s", cli_strerror(ret));
		cc_disconnect(conn);
		return CLI_EXIT_FAIL;
	}
	if (!json) {
		printf("cryptod %s at %s: hello in %.3f ms\n",
		       cc_daemon_version(conn), cli->path, hello_ms);
		degraded = ping_degraded(caps, n, 0);
		if (!degraded)
			puts("healthy");
	} else {
		fputs("{\"daemon_version\": ", stdout);
		json_str(cc_daemon_version(conn));
		fputs(", \"socket\": ", stdout);
		json_str(cli->path);
		printf(", \"hello_ms\": %.3f,\n  \"degraded\": [", hello_ms);
		degraded = ping_degraded(caps, n, 1);
		printf("%s],\n  \"status\": \"%s\"}\n", degraded ? "\n  " : "",
		       degraded ? "degraded" : "healthy");
	}
	cc_disconnect(conn);
	cc_capabilities_free(caps);
	return degraded ? CLI_EXIT_DEGRADED : CLI_EXIT_OK;
}

static void print_version(void)
{
	printf("cryptoctl %s (libcryptoclient API %d.%d)\n", CRYPTOCTL_VERSION,
	       CC_VERSION_MAJOR, CC_VERSION_MINOR);
}

static int cmd_version(struct cli *cli, int argc, char **argv)
{
	struct cc_conn *conn;
	int ret, json = 0;

	ret = cli_parse_simple(cli, argc, argv, "version", usage_version,
			       &json);
	if (ret)
		return ret > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	/* A daemon that does not answer is news, not an error, here. */
	ret = cli_connect_quiet(cli, &conn);
	if (!json) {
		print_version();
		if (ret < 0)
			printf("cryptod: no answer at %s (%s)\n", cli->path,
			       cli_strerror(ret));
		else
			printf("cryptod %s at %s\n", cc_daemon_version(conn),
			       cli->path);
	} else {
		printf("{\"cryptoctl\": \"%s\", \"api\": \"%d.%d\", "
		       "\"socket\": ",
		       CRYPTOCTL_VERSION, CC_VERSION_MAJOR, CC_VERSION_MINOR);
		json_str(cli->path);
		fputs(", \"daemon\": ", stdout);
		if (ret < 0)
			fputs("null", stdout);
		else
			json_str(cc_daemon_version(conn));
		if (ret < 0) {
			fputs(", \"error\": ", stdout);
			json_str(cli_strerror(ret));
		}
		fputs("}\n", stdout);
	}
	if (ret >= 0)
		cc_disconnect(conn);
	return CLI_EXIT_OK;
}

/*
 * 'cryptoctl bench' is a program of its own, cryptod-bench, beside this
 * one: the benchmark links the engines it compares with (ipsec-mb and
 * OpenSSL in-process, DPDK as a plugin), which cryptoctl need not load to
 * print stats. Its arguments go as they are; the global --socket goes in
 * CLI_BENCH_SOCKET_ENV, read as 'cryptoctl bench' read it before.
 */
static int cmd_bench_exec(struct cli *cli, int argc, char **argv)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;

	if (n > 0) {
		path[n] = '\0';
		slash = strrchr(path, '/');
	}
	if (n <= 0 || !slash ||
	    (size_t)(slash + 1 - path) + sizeof(CLI_BENCH_BIN) > sizeof(path)) {
		cli_err("bench: cannot find %s beside cryptoctl",
			CLI_BENCH_BIN);
		return CLI_EXIT_FAIL;
	}
	memcpy(slash + 1, CLI_BENCH_BIN, sizeof(CLI_BENCH_BIN));
	if (cli->socket && setenv(CLI_BENCH_SOCKET_ENV, cli->socket, 1)) {
		cli_err("bench: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	argv[0] = CLI_BENCH_BIN; /* argv[argc] is NULL */
	fflush(stdout);
	execv(path, argv);
	cli_err("bench: cannot run %s: %s", path, strerror(errno));
	return CLI_EXIT_FAIL;
}

static int cmd_help(struct cli *cli, int argc, char **argv);

static const struct cli_cmd {
	const char *name;
	int (*run)(struct cli *cli, int argc, char **argv);
} commands[] = {
	{ "stats", cmd_stats },	     { "engines", cmd_engines },
	{ "clients", cmd_clients },  { "sessions", cmd_sessions },
	{ "bench", cmd_bench_exec }, { "encrypt", cmd_encrypt },
	{ "decrypt", cmd_decrypt },  { "digest", cmd_digest },
	{ "mac", cmd_mac },	     { "ping", cmd_ping },
	{ "version", cmd_version },  { "help", cmd_help },
	{ "key", cmd_key },	     { "sign", cmd_sign },
	{ "verify", cmd_verify },    { "derive", cmd_derive },
};

static const struct cli_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/*
 * Run cmd with argv[0] replaced by "cryptoctl: NAME": getopt prefixes its
 * diagnostics with argv[0], which makes them the one-line
 * "cryptoctl: NAME: unrecognized option '--x'" every other error uses.
 * The new vector copies pointers only; option strings stay where they are
 * (encrypt wipes its key argument in place, hiding it from ps).
 */
static int run_cmd(struct cli *cli, const struct cli_cmd *cmd, int argc,
		   char **argv)
{
	char prog[64];
	char **sub;
	int ret;

	sub = calloc((size_t)argc + 1, sizeof(*sub));
	if (!sub) {
		cli_err("out of memory");
		return CLI_EXIT_FAIL;
	}
	snprintf(prog, sizeof(prog), "cryptoctl: %s", cmd->name);
	sub[0] = prog;
	memcpy(sub + 1, argv + 1, (size_t)(argc - 1) * sizeof(*sub));
	ret = cmd->run(cli, argc, sub);
	free(sub);
	return ret;
}

static int cmd_help(struct cli *cli, int argc, char **argv)
{
	const struct cli_cmd *cmd;
	char *help_argv[] = { argv[1], "--help", NULL };

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_main, stdout);
		return CLI_EXIT_OK;
	}
	if (argc > 2) {
		cli_usage_err("help", "unexpected argument '%s'", argv[2]);
		return CLI_EXIT_USAGE;
	}
	cmd = find_cmd(argv[1]);
	if (!cmd || cmd->run == cmd_help) {
		cli_usage_err("help", "unknown command '%s'", argv[1]);
		return CLI_EXIT_USAGE;
	}
	return run_cmd(cli, cmd, 2, help_argv);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_cmd *cmd;
	struct cli cli = { 0 };
	int c, ret;

	cli_guard_std_fds();
	argv[0] = "cryptoctl"; /* getopt's diagnostics: "cryptoctl: ..." */
	/* '+': stop at the command; its options are its own. */
	while ((c = getopt_long(argc, argv, "+hVs:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_main, stdout);
			return CLI_EXIT_OK;
		case 'V':
			print_version();
			return CLI_EXIT_OK;
		case 's':
			cli.socket = optarg;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		cli_err("no command given (try 'cryptoctl --help')");
		return CLI_EXIT_USAGE;
	}
	cmd = find_cmd(argv[optind]);
	if (!cmd) {
		cli_err("unknown command '%s' (try 'cryptoctl --help')",
			argv[optind]);
		return CLI_EXIT_USAGE;
	}

	/* encrypt, decrypt, digest, mac, sign, verify and derive say
	 * themselves when they need stdout (digest --verify, verify and -o
	 * do not); every other command prints. */
	if ((cli_closed_fds & 2) && cmd->run != cmd_encrypt &&
	    cmd->run != cmd_decrypt && cmd->run != cmd_digest &&
	    cmd->run != cmd_mac && cmd->run != cmd_sign &&
	    cmd->run != cmd_verify && cmd->run != cmd_derive) {
		cli_err("%s: stdout is closed: nowhere to print to", cmd->name);
		return CLI_EXIT_FAIL;
	}
	ret = run_cmd(&cli, cmd, argc - optind, argv + optind);
	if (fflush(stdout) || ferror(stdout)) {
		cli_err("write error on stdout: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	return ret;
}
