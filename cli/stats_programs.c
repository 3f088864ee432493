/* SPDX-License-Identifier: MIT */
/*
 * The programs view of 'cryptoctl stats': connections grouped by client
 * name and uid (cc_programs_get), with what their queues did and what
 * they reported about their own messages (cc_report_usage: an OpenSSL
 * provider's offloaded, fallback and in-process messages). A table that
 * fits STATS_WIDTH columns, and JSON items. The Prometheus families are
 * in stats_prom.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "stats_view.h"
#include "table.h"

/* The table's width: names are cut to fit (--json has them whole). */
enum { STATS_WIDTH = 100, NAME_MIN = 12 };

static const char *const prog_titles[] = {
	"<PROGRAM", "UID",    "CONNS",	 "QUEUES",   "OPS",
	"BYTES",    "ERRORS", "OFFLOAD", "FALLBACK", "IN-PROC",
};
enum { N_PROG_COLS = sizeof(prog_titles) / sizeof(prog_titles[0]) };

/* Cut every name so that the widest row is at most STATS_WIDTH wide (the
 * numbers keep every digit); a cut name ends in '~'. */
static void fit_names(struct tbl *t)
{
	size_t rest = 2 * (N_PROG_COLS - 1);
	for (unsigned c = 1; c < N_PROG_COLS; c++) {
		size_t w = strlen(prog_titles[c]);
		for (unsigned r = 0; r < t->rows; r++) {
			size_t len = strlen(tbl_cell(t, r, c));
			w = len > w ? len : w;
		}
		rest += w;
	}
	size_t room =
		rest + NAME_MIN < STATS_WIDTH ? STATS_WIDTH - rest : NAME_MIN;
	for (unsigned r = 0; r < t->rows; r++) {
		char *s = tbl_cell(t, r, 0);
		if (strlen(s) > room) {
			s[room - 1] = '~';
			s[room] = '\0';
		}
	}
}

int programs_table(const struct cc_program_stats *v, unsigned n)
{
	struct tbl t;

	if (!n) {
		puts("no programs");
		return 0;
	}
	if (tbl_init(&t, n, prog_titles, N_PROG_COLS))
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const struct cc_program_stats *p = &v[i];
		const uint64_t k[] = { p->connections,
				       p->queues,
				       p->ops,
				       p->bytes,
				       p->errors,
				       p->usage.offloaded,
				       p->usage.fallbacks,
				       p->usage.inprocess };

		tbl_text(&t, i, 0, p->name);
		char nm[64];
		if (p->other)
			snprintf(tbl_cell(&t, i, 1), TBL_CELL, "-");
		else if (*cli_user_name(p->uid, nm, sizeof(nm)))
			/* as id(1) and key list print it: 1000(alice) */
			snprintf(tbl_cell(&t, i, 1), TBL_CELL, "%u(%s)", p->uid,
				 nm);
		else
			tbl_u64(&t, i, 1, p->uid);
		for (unsigned c = 0; c < sizeof(k) / sizeof(k[0]); c++)
			tbl_u64(&t, i, 2 + c, k[c]);
		tbl_bytes(&t, i, 5, p->bytes);
	}
	fit_names(&t);
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

void programs_json_items(const struct cc_program_stats *v, unsigned n,
			 const char *indent)
{
	for (unsigned i = 0; i < n; i++) {
		const struct cc_program_stats *p = &v[i];

		char nm[64];
		printf("%s\n%s{\"name\": ", i ? "," : "", indent);
		json_str(p->name);
		printf(", \"user\": ");
		if (!p->other && *cli_user_name(p->uid, nm, sizeof(nm)))
			json_str(nm);
		else
			fputs("null", stdout);
		printf(", \"uid\": %u, \"other\": %s, \"connections\": %u, "
		       "\"connections_total\": %" PRIu64 ", \"queues\": %u, "
		       "\"idle_ms\": %" PRIu64 ", \"ops\": %" PRIu64
		       ", \"bytes\": %" PRIu64 ", \"errors\": %" PRIu64
		       ", \"auth_failures\": %" PRIu64
		       ", \"offloaded\": %" PRIu64 ", \"fallbacks\": %" PRIu64
		       ", \"inprocess\": %" PRIu64 "}",
		       p->uid, p->other ? "true" : "false", p->connections,
		       p->connections_total, p->queues, p->idle_ms, p->ops,
		       p->bytes, p->errors, p->auth_failures,
		       p->usage.offloaded, p->usage.fallbacks,
		       p->usage.inprocess);
	}
}
