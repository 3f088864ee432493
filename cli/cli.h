/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl: the operator's command-line tool for cryptod.
 *
 * What every command file shares (cli.c): exit statuses, the CLI's
 * bounds, the connection options, diagnostics. Below the dispatcher
 * (cryptoctl.c) and the commands (commands.h); hex.h, table.h and
 * stats_view.h hold the other shared helpers.
 */
#ifndef CRYPTOCTL_CLI_H
#define CRYPTOCTL_CLI_H

#include <stddef.h>
#include <stdint.h>

#include <cryptoclient.h>

#ifndef CRYPTOCTL_VERSION
#define CRYPTOCTL_VERSION "0.0.0-dev"
#endif

/* Exit statuses, documented in the usage text. */
enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAIL = 1,     /* daemon unreachable or refused, I/O error */
	CLI_EXIT_USAGE = 2,    /* bad arguments */
	CLI_EXIT_AUTH = 3,     /* decrypt: tag mismatch, nothing written;
				* digest, mac --verify: mismatch */
	CLI_EXIT_DEGRADED = 4, /* ping: answers, but an engine the operator
				* routes an algorithm to is unavailable */
};

/* All bounds of the CLI live here. */
enum cli_limits {
	CLI_DATA_MAX = 16u << 20, /* one-shot input bytes, as CRD_OP_MAX_LEN */
	CLI_CHUNK = 1u << 20,	  /* a stream's input bytes per update */
	CLI_XTS_UNIT_MAX = 1u << 20, /* --data-unit, as the library's */
	CLI_KEY_MAX = 64,	     /* AES-256-XTS: two 32-byte halves */
	CLI_MAC_KEY_MAX = 256,	     /* an HMAC key, as CRD_MAC_KEY_MAX */
	CLI_AUTH_KEY_MAX = 64,	     /* HMAC key, one SHA block */
	CLI_IV_MAX = 128,	     /* GCM's longest, as CRD_IV_ARENA_MAX */
	CLI_BLOCK = 16,		     /* AES block: CBC/ECB lengths, IVs */
	CLI_TAG_MAX = 64,	     /* as CRD_TAG_MAX: a SHA-512 digest */
	CLI_TAG_MIN = 4, /* a truncated digest's or MAC's least (--truncate) */
	CLI_AAD_MAX = 65535,	/* as CRD_AAD_MAX */
	CLI_KEYFILE_MAX = 1024, /* bytes read from --key-file */
	CLI_PATH_MAX = 108,	/* sun_path */
	TBL_COLS_MAX = 24,	/* columns of a text table */
	TBL_CELL = 72,		/* a client name (64) plus room to spare */
	TBL_NARROW = 20,	/* text cells without --wide */
	WATCH_MAX_S = 3600,	/* --watch interval */
	WATCH_MAX_COUNT = 1000000,
	WATCH_RETRY_MAX_MS = 1000, /* --watch: the longest wait between
				    * tries to reach a daemon that went */
	/* stats --serve (stats_serve.c) */
	SERVE_REQ_MAX = 8192,	 /* request line and headers, bytes */
	SERVE_CONNS_MAX = 32,	 /* connections at once; more wait */
	SERVE_TIMEOUT_MS = 5000, /* to send a request; again, to read */
	SERVE_DRAIN_MS = 500,	 /* reading what follows a request */
	SERVE_LISTEN_MAX = 8,	 /* sockets systemd may pass */
};

/* The benchmark, a program of its own beside cryptoctl ('cryptoctl bench'
 * runs it), and how cryptoctl hands it the global --socket. */
#define CLI_BENCH_BIN "cryptod-bench"
#define CLI_BENCH_SOCKET_ENV "CRYPTOCTL_BENCH_SOCKET"

struct cli {
	const char *socket; /* --socket, or NULL for cc_default_socket_path() */
	char path[CLI_PATH_MAX]; /* the socket cli_connect() used */
};

/* alg_name.c. An algorithm's name as every command takes it ("aes-gcm",
 * "aes-256-gcm", "gcm(aes)"): the algorithm and the key bits the name
 * says (0: none; XTS: both halves). 0 or -EINVAL, silently. */
int cli_alg_lookup(const char *name, enum cc_alg *alg, unsigned *key_bits);

/* ids.c. A user or group as a name or a decimal number: 0, -ENOENT (no
 * such name) or -EINVAL (empty, or a number out of range). */
int cli_parse_uid(const char *s, uint32_t *out);
int cli_parse_gid(const char *s, uint32_t *out);
/* The name of an id into buf, "" when it has none; returns buf. */
enum { CLI_NAME_MAX = 64 };
const char *cli_user_name(uint32_t uid, char *buf, size_t len);
const char *cli_group_name(uint32_t gid, char *buf, size_t len);
/* A name as a JSON string, or null for "". */
void cli_json_name(const char *name);

/* cli.c */
/* Bit fd set: descriptor fd (0, 1, 2) was closed when cryptoctl started
 * and is /dev/null now. */
extern unsigned cli_closed_fds;
/* Before anything else: fill a closed 0, 1 or 2 with /dev/null, noting it
 * in cli_closed_fds. */
void cli_guard_std_fds(void);
/* 1: a line redrawn in place (--progress on a terminal) is on stderr,
 * unended; cli_end_line() ends it before anything else goes there
 * (cli_err does). */
extern int cli_line_open;
void cli_end_line(void);
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Report a bad argument on one line; returns -EINVAL. */
int cli_usage_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Commands take no operands: 0, or -EINVAL (reported). */
int cli_no_args(const char *cmd, int argc, char **argv);
int cli_connect(struct cli *cli, struct cc_conn **conn);
/* The daemon went away under a call (-EPIPE, -ECONNRESET, ...): 1. */
int cli_conn_lost(int err);
/* cc_strerror(), but one text that says so for a daemon that went away:
 * every command reports errors from the daemon with it. */
const char *cli_strerror(int err);
/* Options --help, --socket (and --json when json is not NULL): 0 go on,
 * 1 help printed, -EINVAL (reported). */
int cli_parse_simple(struct cli *cli, int argc, char **argv, const char *cmd,
		     const char *usage, int *json);
/* The same without a word on stderr when it fails (version). */
int cli_connect_quiet(struct cli *cli, struct cc_conn **conn);

#endif /* CRYPTOCTL_CLI_H */
