/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl engines: what the daemon can do, from cc_capabilities_get():
 * per algorithm and engine, whether it is available (and why not), and
 * the key, IV, tag, AAD and data sizes it takes, written as DPDK's
 * {min, max, increment} ranges: "16-32/8", "12", "4,8,12-16".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cryptod/ring_abi.h>

#include "cli.h"
#include "commands.h"
#include "table.h"

static const char usage_engines[] =
	"Usage: cryptoctl engines [--all] [--json | --wide | --names]\n"
	"                        [--socket PATH]\n"
	"\n"
	"List the algorithms cryptod knows and the engines that run them,\n"
	"one row each: whether the engine is the one a session gets when it\n"
	"names none (DEFAULT), whether it is available, and the sizes it\n"
	"takes in bytes: KEY, AUTH-KEY (the HMAC key of authenc), IV, TAG,\n"
	"AAD and LENGTH (of the data). A size reads as a list of ranges:\n"
	"'12' one value, '12-16' every value between, '16-32/8' every 8th,\n"
	"'-' none; in LENGTH, K and M are KiB and MiB and /N a multiple of\n"
	"N. Below the table, why each unavailable row is so.\n"
	"\n"
	"  -a, --all          every engine of every algorithm; by default an\n"
	"                     algorithm's unavailable engines are left out\n"
	"                     when another one runs it\n"
	"      --wide         the AAD column too (lengths of additional data),\n"
	"                     and each reason on one line (else wrapped)\n"
	"  -j, --json         every row as JSON: {\"algorithms\": [{alg, id,\n"
	"                     kind (aead, cipher, authenc, mac, hash or\n"
	"                     none), engine, default, available, reason,\n"
	"                     sgl, sessionless, stream, key_sizes,\n"
	"                     auth_key_sizes,\n"
	"                     iv_sizes, tag_sizes (lists of {min, max,\n"
	"                     increment}), aad_sizes ({min, max,\n"
	"                     increment}), min_len, max_len, block_size}]}\n"
	"      --names        one line per row: ALGORITHM KIND ENGINE, for\n"
	"                     scripts and shell completion (available rows;\n"
	"                     with --all every row)\n"
	"  -s, --socket PATH  daemon socket\n"
	"  -h, --help         this text\n";

enum { RANGE_TEXT = 48 };

/* Bytes, shortened to K or M when exact (LENGTH only). */
static void fmt_size(char *out, size_t len, uint32_t v, int human)
{
	if (human && v >= (1u << 20) && !(v % (1u << 20)))
		snprintf(out, len, "%uM", v >> 20);
	else if (human && v >= (1u << 10) && !(v % (1u << 10)))
		snprintf(out, len, "%uK", v >> 10);
	else
		snprintf(out, len, "%u", v);
}

/* One range: "12", "12-16" or "16-32/8". */
static void fmt_range(char *out, size_t len, const struct cc_range *r,
		      int human)
{
	char lo[16], hi[16];

	fmt_size(lo, sizeof(lo), r->min, human);
	fmt_size(hi, sizeof(hi), r->max, human);
	if (r->max == r->min)
		snprintf(out, len, "%s", lo);
	else if (r->increment > 1)
		snprintf(out, len, "%s-%s/%u", lo, hi, r->increment);
	else
		snprintf(out, len, "%s-%s", lo, hi);
}

/* A list of ranges, comma-separated; "-" for none. */
static void fmt_ranges(char *out, size_t len, const struct cc_range *r,
		       unsigned n, unsigned max)
{
	char one[RANGE_TEXT];
	size_t used;
	unsigned i;

	if (n > max)
		n = max; /* the library fills at most max */
	snprintf(out, len, "%s", n ? "" : "-");
	for (i = 0; i < n; i++) {
		fmt_range(one, sizeof(one), &r[i], 0);
		used = strlen(out);
		snprintf(out + used, len - used, "%s%s", i ? "," : "", one);
	}
}

/* min-max of the data, and the multiple it must be when there is one. */
static void fmt_length(char *out, size_t len, const struct cc_alg_caps *c)
{
	const struct cc_range r = { c->min_len, c->max_len, 1 };
	char range[RANGE_TEXT];

	if (!c->max_len) {
		snprintf(out, len, "-");
		return;
	}
	fmt_range(range, sizeof(range), &r, 1);
	if (c->block_size > 1)
		snprintf(out, len, "%s/%u", range, c->block_size);
	else if (crd_alg_bit_len(c->alg)) /* 3GPP: lengths count bits */
		snprintf(out, len, "%s bits", range);
	else
		snprintf(out, len, "%s", range);
}

/*
 * Row i is shown unless an algorithm another engine runs would list a
 * useless unavailable engine; with --all every row is.
 */
static int shown(const struct cc_alg_caps *caps, unsigned n, unsigned i,
		 int all)
{
	unsigned j;

	if (all || caps[i].available)
		return 1;
	for (j = 0; j < n; j++)
		if (caps[j].alg == caps[i].alg && caps[j].available)
			return 0;
	return 1;
}

static int print_table(const struct cc_alg_caps *caps, unsigned n, int all)
{
	static const char *const titles[] = {
		"<ALGORITHM", "<ENGINE", "<DEFAULT", "<AVAILABLE", "<KEY",
		"<AUTH-KEY",  "<IV",	 "<TAG",     "+<AAD",	   "<LENGTH",
	};
	enum { N_COLS = sizeof(titles) / sizeof(titles[0]) };
	struct tbl t;
	unsigned i, row = 0;

	for (i = 0; i < n; i++)
		row += (unsigned)shown(caps, n, i, all);
	if (tbl_init(&t, row, titles, N_COLS))
		return -ENOMEM;
	for (i = 0, row = 0; i < n; i++) {
		const struct cc_alg_caps *c = &caps[i];

		if (!shown(caps, n, i, all))
			continue;
		tbl_text(&t, row, 0, c->alg_name);
		tbl_text(&t, row, 1, c->engine);
		tbl_text(&t, row, 2, c->default_engine ? "yes" : "no");
		tbl_text(&t, row, 3, c->available ? "yes" : "no");
		fmt_ranges(tbl_cell(&t, row, 4), TBL_CELL, c->key_sizes,
			   c->n_key_sizes, 4);
		fmt_ranges(tbl_cell(&t, row, 5), TBL_CELL, c->auth_key_sizes,
			   c->n_auth_key_sizes, 2);
		fmt_ranges(tbl_cell(&t, row, 6), TBL_CELL, c->iv_sizes,
			   c->n_iv_sizes, 4);
		fmt_ranges(tbl_cell(&t, row, 7), TBL_CELL, c->tag_sizes,
			   c->n_tag_sizes, 4);
		/* An engine that is not there may know no sizes at all. */
		fmt_ranges(tbl_cell(&t, row, 8), TBL_CELL, &c->aad_sizes,
			   c->available || c->max_len, 1);
		fmt_length(tbl_cell(&t, row, 9), TBL_CELL, c);
		row++;
	}
	tbl_print(&t);
	tbl_fini(&t);

	/* The reasons go below: a column of sentences would make every
	 * row as wide as the longest one. */
	for (i = 0, row = 0; i < n; i++) {
		const struct cc_alg_caps *c = &caps[i];

		if (c->available || !shown(caps, n, i, all))
			continue;
		if (!row++)
			putchar('\n');
		tbl_puts(c->alg_name);
		fputs(" on ", stdout);
		tbl_puts(c->engine);
		fputs(": unavailable:", stdout);
		tbl_puts_wrapped(c->reason[0] ? c->reason : "no reason given",
				 (unsigned)(strlen(c->alg_name) +
					    strlen(c->engine) + 17));
		putchar('\n');
	}
	return 0;
}

static void json_ranges(const char *key, const struct cc_range *r, unsigned n,
			unsigned max)
{
	unsigned i;

	if (n > max)
		n = max;
	printf(", \"%s\": [", key);
	for (i = 0; i < n; i++)
		printf("%s{\"min\": %u, \"max\": %u, \"increment\": %u}",
		       i ? ", " : "", r[i].min, r[i].max, r[i].increment);
	putchar(']');
}

static const char *json_bool(int v)
{
	return v ? "true" : "false";
}

static void print_json(const struct cc_alg_caps *caps, unsigned n)
{
	unsigned i;

	fputs("{\n  \"algorithms\": [", stdout);
	for (i = 0; i < n; i++) {
		const struct cc_alg_caps *c = &caps[i];

		printf("%s\n    {\"alg\": ", i ? "," : "");
		json_str(c->alg_name);
		printf(", \"id\": %d, \"kind\": \"%s\", \"engine\": ",
		       (int)c->alg, cc_alg_kind_name(cc_alg_kind(c->alg)));
		json_str(c->engine);
		printf(", \"default\": %s, \"available\": %s, \"reason\": ",
		       json_bool(c->default_engine), json_bool(c->available));
		json_str(c->reason);
		printf(", \"sgl\": %s, \"sessionless\": %s, \"stream\": %s",
		       json_bool(c->sgl), json_bool(c->sessionless),
		       json_bool(c->stream));
		json_ranges("key_sizes", c->key_sizes, c->n_key_sizes, 4);
		json_ranges("auth_key_sizes", c->auth_key_sizes,
			    c->n_auth_key_sizes, 2);
		json_ranges("iv_sizes", c->iv_sizes, c->n_iv_sizes, 4);
		json_ranges("tag_sizes", c->tag_sizes, c->n_tag_sizes, 4);
		printf(", \"aad_sizes\": {\"min\": %u, \"max\": %u, "
		       "\"increment\": %u}, \"min_len\": %u, \"max_len\": %u, "
		       "\"block_size\": %u}",
		       c->aad_sizes.min, c->aad_sizes.max,
		       c->aad_sizes.increment, c->min_len, c->max_len,
		       c->block_size);
	}
	printf("%s]\n}\n", n ? "\n  " : "");
}

/* --names: "aes-gcm aead aesni", a row a line, nothing else. */
static void print_names(const struct cc_alg_caps *caps, unsigned n, int all)
{
	for (unsigned i = 0; i < n; i++) {
		const char *alg = cc_alg_name(caps[i].alg);

		if (alg && (all || caps[i].available))
			printf("%s %s %s\n", alg,
			       cc_alg_kind_name(cc_alg_kind(caps[i].alg)),
			       caps[i].engine);
	}
}

int cmd_engines(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "wide", no_argument, NULL, 'W' },
		{ "names", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct cc_alg_caps *caps = NULL;
	struct cc_conn *conn;
	unsigned n = 0;
	int json = 0, names = 0, all = 0, c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, "ajhs:", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'W':
			tbl_wide = 1;
			break;
		case 'N':
			names = 1;
			break;
		case 'h':
			fputs(usage_engines, stdout);
			return CLI_EXIT_OK;
		case 's':
			cli->socket = optarg;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (cli_no_args("engines", argc, argv))
		return CLI_EXIT_USAGE;

	if (cli_connect(cli, &conn))
		return CLI_EXIT_FAIL;
	ret = cc_capabilities_get(conn, &caps, &n);
	cc_disconnect(conn);
	if (ret < 0) {
		cli_err("engines: %s", cli_strerror(ret));
		return CLI_EXIT_FAIL;
	}

	ret = 0;
	if (json)
		print_json(caps, n);
	else if (names)
		print_names(caps, n, all);
	else
		ret = print_table(caps, n, all);
	cc_capabilities_free(caps);
	if (ret < 0) {
		cli_err("engines: %s", strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}
