/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl clients / sessions: who is connected and which sessions they
 * hold. The daemon decides visibility: root and the daemon's own user see
 * everything, anyone else only their own connection (this cryptoctl's,
 * so an empty session list).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "stats_view.h"
#include "table.h"

static const char usage_clients[] =
	"Usage: cryptoctl clients [--json | --wide] [--exact] [--socket PATH]\n"
	"\n"
	"List the daemon's client connections: client id, pid, uid and user\n"
	"name, gid and group name, how\n"
	"long connected, open queues, sessions, ops completed and bytes over\n"
	"its open queues, ops in flight, arena memory, the messages the client\n"
	"reported it had the daemon run (OFFLOAD), ran elsewhere because the\n"
	"daemon could not (FALLBACK) and kept in-process by choice (IN-PROC;\n"
	"'-' when it reports nothing: only the OpenSSL provider does), and the\n"
	"name the client gave. cryptoctl's own connection is one of them.\n"
	"Unless you are root or the daemon's user, only your own connection\n"
	"is listed.\n"
	"\n"
	"      --wide         every column: USER, GID, GROUP, ARENA, OFFLOAD,\n"
	"                     FALLBACK, IN-PROC too, and whole names (else\n"
	"                     cut to 20 characters, ending in ~)\n"
	"      --exact        BYTES and ARENA as exact integers (else\n"
	"                     1024-based units: 850, 3.5K, 16.6G)\n"
	"  -j, --json         {\"clients\": [{client_id, pid, uid, gid, user,\n"
	"                     group (null: no name), name,\n"
	"                     connected_ms, queues, sessions, ops, bytes,\n"
	"                     in_flight, arena_bytes, streams,\n"
	"                     usage_reported, offloaded, fallbacks,\n"
	"                     inprocess}]}\n"
	"  -s, --socket PATH  daemon socket\n"
	"  -h, --help         this text\n";

static const char usage_sessions[] =
	"Usage: cryptoctl sessions [--json | --wide] [--exact] [--socket PATH]\n"
	"\n"
	"List the sessions clients hold: client id, session id (per client),\n"
	"owner pid, uid and user name, algorithm, key size in bits (XTS: both halves),\n"
	"engine, tag length, and the ops completed successfully (OK-OPS;\n"
	"JSON: ops), bytes, errors and authentication failures. Never any key material. Unless you are root or the\n"
	"daemon's user, only your own connection's sessions are listed (and\n"
	"cryptoctl holds none).\n"
	"\n"
	"      --wide         whole algorithm and engine names\n"
	"      --exact        BYTES as exact integers (else 1024-based\n"
	"                     units: 850, 3.5K, 16.6G)\n"
	"  -j, --json         {\"sessions\": [{client_id, session_id, pid, uid,\n"
	"                     user (null: no name), alg, key_bits, engine, tag_len, ops, bytes,\n"
	"                     errors, auth_failures}]}\n"
	"  -s, --socket PATH  daemon socket\n"
	"  -h, --help         this text\n";

static void fmt_dur(char *buf, size_t len, uint64_t ms)
{
	uint64_t s = ms / 1000;

	if (s >= 86400)
		snprintf(buf, len, "%" PRIu64 "d%02uh", s / 86400,
			 (unsigned)(s / 3600 % 24));
	else
		snprintf(buf, len, "%02u:%02u:%02u", (unsigned)(s / 3600),
			 (unsigned)(s / 60 % 60), (unsigned)(s % 60));
}

static void clients_json(const struct cc_client_info *v, unsigned n)
{
	char nm[CLI_NAME_MAX];

	fputs("{\"clients\": [", stdout);
	for (unsigned i = 0; i < n; i++) {
		const struct cc_client_info *c = &v[i];

		printf("%s\n  {\"client_id\": %u, \"pid\": %u, \"uid\": %u, "
		       "\"gid\": %u, \"user\": ",
		       i ? "," : "", c->client_id, c->pid, c->uid, c->gid);
		cli_json_name(cli_user_name(c->uid, nm, sizeof(nm)));
		fputs(", \"group\": ", stdout);
		cli_json_name(cli_group_name(c->gid, nm, sizeof(nm)));
		fputs(", \"name\": ", stdout);
		json_str(c->name);
		printf(", \"connected_ms\": %" PRIu64 ", \"queues\": %u, "
		       "\"sessions\": %u, \"ops\": %" PRIu64
		       ", \"bytes\": %" PRIu64 ", \"in_flight\": %u, "
		       "\"arena_bytes\": %" PRIu64 ", \"streams\": %u, "
		       "\"usage_reported\": %s, \"offloaded\": %" PRIu64
		       ", \"fallbacks\": %" PRIu64 ", \"inprocess\": %" PRIu64
		       "}",
		       c->connected_ms, c->queues, c->sessions, c->ops,
		       c->bytes, c->in_flight, c->arena_bytes, c->streams,
		       c->usage_reported ? "true" : "false", c->usage.offloaded,
		       c->usage.fallbacks, c->usage.inprocess);
	}
	printf("%s]}\n", n ? "\n" : "");
}

/* A user or group name, "-" for an id with none. */
static void name_cell(struct tbl *t, unsigned row, unsigned col,
		      const char *name)
{
	tbl_text(t, row, col, *name ? name : "-");
}

static int clients_table(const struct cc_client_info *v, unsigned n)
{
	char nm[CLI_NAME_MAX];
	static const char *const titles[] = {
		"CLIENT",   "PID",	 "UID",	   "+<USER",   "+GID",
		"+<GROUP",  "CONNECTED", "QUEUES", "SESSIONS", "OPS",
		"BYTES",    "IN-FLIGHT", "+ARENA", "+OFFLOAD", "+FALLBACK",
		"+IN-PROC", "<NAME",
	};
	enum { N_COLS = 17 };
	struct tbl t;

	if (tbl_init(&t, n, titles, N_COLS))
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const struct cc_client_info *c = &v[i];

		tbl_u64(&t, i, 0, c->client_id);
		tbl_u64(&t, i, 1, c->pid);
		tbl_u64(&t, i, 2, c->uid);
		name_cell(&t, i, 3, cli_user_name(c->uid, nm, sizeof(nm)));
		tbl_u64(&t, i, 4, c->gid);
		name_cell(&t, i, 5, cli_group_name(c->gid, nm, sizeof(nm)));
		fmt_dur(tbl_cell(&t, i, 6), TBL_CELL, c->connected_ms);
		tbl_u64(&t, i, 7, c->queues);
		tbl_u64(&t, i, 8, c->sessions);
		tbl_u64(&t, i, 9, c->ops);
		tbl_bytes(&t, i, 10, c->bytes);
		tbl_u64(&t, i, 11, c->in_flight);
		tbl_bytes(&t, i, 12, c->arena_bytes);
		if (c->usage_reported) {
			tbl_u64(&t, i, 13, c->usage.offloaded);
			tbl_u64(&t, i, 14, c->usage.fallbacks);
			tbl_u64(&t, i, 15, c->usage.inprocess);
		} else {
			for (unsigned k = 13; k < 16; k++)
				snprintf(tbl_cell(&t, i, k), TBL_CELL, "-");
		}
		tbl_text(&t, i, 16, c->name);
	}
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

int cmd_clients(struct cli *cli, int argc, char **argv)
{
	struct cc_client_info *v;
	struct cc_conn *conn;
	unsigned n;
	int json = 0, ret;

	ret = cli_parse_simple(cli, argc, argv, "clients", usage_clients,
			       &json);
	if (ret)
		return ret > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (cli_connect(cli, &conn))
		return CLI_EXIT_FAIL;
	ret = cc_clients_get(conn, &v, &n);
	cc_disconnect(conn);
	if (ret < 0) {
		cli_err("clients: %s", cli_strerror(ret));
		return CLI_EXIT_FAIL;
	}
	if (json)
		clients_json(v, n);
	else
		ret = clients_table(v, n);
	free(v);
	if (ret < 0) {
		cli_err("clients: %s", strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

/* The elements of a JSON array of sessions, one a line after indent. */
void sessions_json_items(const struct cc_session_info *v, unsigned n,
			 const char *indent)
{
	char nm[CLI_NAME_MAX];

	for (unsigned i = 0; i < n; i++) {
		const struct cc_session_info *s = &v[i];
		const char *alg = cc_alg_name(s->alg);

		printf("%s\n%s{\"client_id\": %u, \"session_id\": %u, "
		       "\"pid\": %u, \"uid\": %u, \"user\": ",
		       i ? "," : "", indent, s->client_id, s->session_id,
		       s->pid, s->uid);
		cli_json_name(cli_user_name(s->uid, nm, sizeof(nm)));
		fputs(", \"alg\": ", stdout);
		json_str(alg ? alg : "?");
		printf(", \"key_bits\": %u, \"engine\": ", s->key_bits);
		json_str(s->engine);
		printf(", \"tag_len\": %u, \"ops\": %" PRIu64
		       ", \"bytes\": %" PRIu64 ", \"errors\": %" PRIu64
		       ", \"auth_failures\": %" PRIu64 "}",
		       s->tag_len, s->c.ops, s->c.bytes, s->c.errors,
		       s->c.auth_failures);
	}
}

int sessions_table(const struct cc_session_info *v, unsigned n)
{
	char nm[CLI_NAME_MAX];
	static const char *const titles[] = {
		"CLIENT", "SESSION",  "PID",	   "UID", "<USER",
		"<ALG",	  "KEY-BITS", "<ENGINE",   "TAG", "OK-OPS",
		"BYTES",  "ERRORS",   "AUTH-FAIL",
	};
	enum { N_COLS = 13 };
	struct tbl t;

	if (!n) {
		puts("no sessions");
		return 0;
	}
	if (tbl_init(&t, n, titles, N_COLS))
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const struct cc_session_info *s = &v[i];
		const char *alg = cc_alg_name(s->alg);

		tbl_u64(&t, i, 0, s->client_id);
		tbl_u64(&t, i, 1, s->session_id);
		tbl_u64(&t, i, 2, s->pid);
		tbl_u64(&t, i, 3, s->uid);
		name_cell(&t, i, 4, cli_user_name(s->uid, nm, sizeof(nm)));
		tbl_text(&t, i, 5, alg ? alg : "?");
		tbl_u64(&t, i, 6, s->key_bits);
		tbl_text(&t, i, 7, s->engine);
		tbl_u64(&t, i, 8, s->tag_len);
		tbl_u64(&t, i, 9, s->c.ops);
		tbl_bytes(&t, i, 10, s->c.bytes);
		tbl_u64(&t, i, 11, s->c.errors);
		tbl_u64(&t, i, 12, s->c.auth_failures);
	}
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

int cmd_sessions(struct cli *cli, int argc, char **argv)
{
	struct cc_session_info *v;
	struct cc_conn *conn;
	unsigned n;
	int json = 0, ret;

	ret = cli_parse_simple(cli, argc, argv, "sessions", usage_sessions,
			       &json);
	if (ret)
		return ret > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (cli_connect(cli, &conn))
		return CLI_EXIT_FAIL;
	ret = cc_sessions_get(conn, &v, &n);
	cc_disconnect(conn);
	if (ret < 0) {
		cli_err("sessions: %s", cli_strerror(ret));
		return CLI_EXIT_FAIL;
	}
	if (json) {
		fputs("{\"sessions\": [", stdout);
		sessions_json_items(v, n, "  ");
		printf("%s]}\n", n ? "\n" : "");
	} else
		ret = sessions_table(v, n);
	free(v);
	if (ret < 0) {
		cli_err("sessions: %s", strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}
