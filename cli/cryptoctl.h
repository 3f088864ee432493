/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl: the operator's command-line tool for cryptod.
 *
 * Shared declarations of the command files. Every command is
 * int cmd_x(struct cli *cli, int argc, char **argv) and returns the
 * process exit status (enum cli_exit). Its argv[0] is "cryptoctl: x" so
 * that getopt's own one-line diagnostics carry the command name.
 */
#ifndef CRYPTOCTL_H
#define CRYPTOCTL_H

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
	CLI_AAD_MAX = 65535,	     /* as CRD_AAD_MAX */
	CLI_KEYFILE_MAX = 1024,	     /* bytes read from --key-file */
	CLI_PATH_MAX = 108,	     /* sun_path */
	CLI_WAIT_MS = 30000, /* --sessionless: longest wait for the op */
	TBL_COLS_MAX = 24,   /* columns of a text table */
	TBL_CELL = 72,	     /* a client name (64) plus room to spare */
	TBL_NARROW = 20,     /* text cells without --wide */
	WATCH_MAX_S = 3600,  /* --watch interval */
	WATCH_MAX_COUNT = 1000000,
};

struct cli {
	const char *socket; /* --socket, or NULL for cc_default_socket_path() */
	char path[CLI_PATH_MAX]; /* the socket cli_connect() used */
};

/* cryptoctl.c */
/* Bit fd set: descriptor fd (0, 1, 2) was closed when cryptoctl started
 * and is /dev/null now. */
extern unsigned cli_closed_fds;
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Report a bad argument on one line; returns -EINVAL. */
int cli_usage_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Commands take no operands: 0, or -EINVAL (reported). */
int cli_no_args(const char *cmd, int argc, char **argv);
int cli_connect(struct cli *cli, struct cc_conn **conn);
/* Options --help, --socket (and --json when json is not NULL): 0 go on,
 * 1 help printed, -EINVAL (reported). */
int cli_parse_simple(struct cli *cli, int argc, char **argv, const char *cmd,
		     const char *usage, int *json);
/* The same without a word on stderr when it fails (version). */
int cli_connect_quiet(struct cli *cli, struct cc_conn **conn);

/* hex.c */
int hex_decode(const char *hex, uint8_t *out, size_t max);
void hex_encode(const uint8_t *in, size_t len, char *out);
/* Why hex_decode() refused hex (-EINVAL): what is valid, into buf. */
void hex_why(const char *hex, char *buf, size_t len);

/* table.c: aligned text tables for people, JSON strings for scripts */
struct tbl {
	unsigned cols, rows;
	const char *title[TBL_COLS_MAX];
	int left[TBL_COLS_MAX]; /* left-aligned (text) column */
	int hide[TBL_COLS_MAX]; /* a --wide column, without --wide */
	char (*cell)[TBL_CELL]; /* rows * cols cells, owned */
};

/* --wide: every column and whole text cells. Without it a table stays
 * within 100 columns: '+' columns are left out, text cut to TBL_NARROW. */
extern int tbl_wide;
/* A title starting with '<' makes a left-aligned column, with '+' (then
 * maybe '<') a column of --wide only. 0 or -ENOMEM. */
int tbl_init(struct tbl *t, unsigned rows, const char *const *titles,
	     unsigned cols);
char *tbl_cell(struct tbl *t, unsigned row, unsigned col);
void tbl_u64(struct tbl *t, unsigned row, unsigned col, uint64_t v);
/* Text from the daemon or a client: non-printable bytes become '?'. */
void tbl_text(struct tbl *t, unsigned row, unsigned col, const char *s);
void tbl_print(struct tbl *t);
/* s on stdout under the rule of tbl_text(). */
void tbl_puts(const char *s);
/* The same after a space, wrapped at spaces within 100 columns and
 * continued indented by two (--wide: one line); used: the columns the
 * line holds already. */
void tbl_puts_wrapped(const char *s, unsigned used);
void tbl_fini(struct tbl *t);
/* A quoted JSON string on stdout; invalid UTF-8 becomes U+FFFD. */
void json_str(const char *s);

/* A point-in-time view of the daemon: cmd_stats.c, stats_prom.c,
 * stats_watch.c. */
struct stats_snap {
	struct cc_stats st;
	struct cc_session_info *sess; /* owned */
	unsigned n_sess;
	struct cc_program_stats *progs; /* owned */
	unsigned n_progs;
	double t; /* CLOCK_MONOTONIC seconds when taken */
};

int stats_snap_take(struct cc_conn *conn, struct stats_snap *s);
void stats_snap_free(struct stats_snap *s);
/* "02:03:04" or "5d 02:03:04": the one uptime format of every view. */
void fmt_uptime(char *buf, size_t len, uint64_t ms);
/* one when n is 1, else many: "1 client", "2 clients". */
const char *plural(uint64_t n, const char *one, const char *many);
/* "cryptod: up 00:01:02, 2 workers (adaptive polling), 1 client, ..."
 * without the newline. */
void print_stats_head(const struct cc_stats *st);
/* "850ns", "12.3us", "1.50ms", "2.00s" into buf (>= 16 bytes). */
void fmt_ns(char *buf, size_t len, uint64_t ns);
/* The tables of 'cryptoctl stats'. 0 or -ENOMEM. */
int stats_print_tables(const struct stats_snap *s);
/* stats_programs.c: the programs view, a table (0 or -ENOMEM) and the
 * items of a JSON array, one a line after indent. */
int programs_table(const struct cc_program_stats *v, unsigned n);
void programs_json_items(const struct cc_program_stats *v, unsigned n,
			 const char *indent);
/* Prometheus text exposition format (version 0.0.4). */
void stats_print_prom(const struct stats_snap *s);
/* The same when the daemon did not answer: cryptod_up 0 alone. */
void stats_print_prom_down(void);
/* One JSON object, the fields docs/observability.md lists. */
void stats_print_json(const struct stats_snap *s);
/* Refresh every interval seconds, count times (0: until q or Ctrl-C);
 * json: one stats_print_json() object a line instead of the view.
 * Returns an exit status. */
int stats_watch(struct cc_conn *conn, double interval, unsigned count,
		int json);

/* cmd_list.c: the session list, shared with stats */
int sessions_table(const struct cc_session_info *v, unsigned n);
void sessions_json_items(const struct cc_session_info *v, unsigned n,
			 const char *indent);

/* commands */
int cmd_stats(struct cli *cli, int argc, char **argv);
int cmd_engines(struct cli *cli, int argc, char **argv);
int cmd_encrypt(struct cli *cli, int argc, char **argv);
int cmd_decrypt(struct cli *cli, int argc, char **argv);
int cmd_digest(struct cli *cli, int argc, char **argv);
int cmd_mac(struct cli *cli, int argc, char **argv);
int cmd_clients(struct cli *cli, int argc, char **argv);
int cmd_sessions(struct cli *cli, int argc, char **argv);
int cmd_bench(struct cli *cli, int argc, char **argv);
int cmd_key(struct cli *cli, int argc, char **argv);

#endif /* CRYPTOCTL_H */
