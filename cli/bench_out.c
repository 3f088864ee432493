/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl bench's one report writer: the table per algorithm (paths
 * side by side: Gbps within 100 columns, or every figure with
 * --wide), the dm-crypt table, CSV, JSON and the PNG chart
 * (gnuplot) of the throughput modes, and the worker pool modes' sheets as
 * text tables, CSV or JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_cli.h"
#include "bench_sheet.h"
#include "cli.h"
#include "table.h"
#include "poolbench.h"

static const struct bp_result *bp_find(const struct bp_report *r, unsigned alg,
				       unsigned path, uint32_t size)
{
	for (unsigned i = 0; i < r->n_res; i++)
		if (r->res[i].alg == alg && r->res[i].path == path &&
		    r->res[i].size == size)
			return &r->res[i];
	return NULL;
}

static const char *bp_dir(const struct bp_report *r)
{
	return r->cfg->dir == CC_ENCRYPT ? "encrypt" : "decrypt";
}

/* The in-process twin's name: the path the others are compared with. */
static const char *bp_twin(const struct bp_alg *pa)
{
	return pa->twin >= 0 ? pa->paths[pa->twin].name : "twin";
}

/*
 * The default table, within 100 columns: Gbps per path side by side, and
 * the daemon against the in-process twin. --wide prints the wide
 * table (the rest of bp_print_table).
 */
static void bp_print_narrow(const struct bp_report *r, unsigned ai,
			    const uint32_t *sizes, unsigned rows)
{
	const struct bp_alg *pa = &r->algs[ai];
	const char *titles[BP_MAX_PATHS + 2];
	char vs[64];
	unsigned p, i, cols = 0;
	bool ratio = false;
	struct tbl t;

	titles[cols++] = "SIZE(B)";
	for (p = 0; p < pa->n_paths; p++)
		titles[cols++] = pa->paths[p].name;
	for (i = 0; i < rows && pa->twin > 0; i++) {
		const struct bp_result *v = bp_find(r, ai, 0, sizes[i]);

		if (v && v->ratio > 0)
			ratio = true;
	}
	if (ratio) {
		snprintf(vs, sizeof(vs), "%s/%s", pa->paths[0].name,
			 bp_twin(pa));
		titles[cols++] = vs;
	}
	printf("Throughput in Gbps (10^9 bit/s of payload) per buffer "
	       "size%s\n",
	       ratio ? "," : ":");
	if (ratio)
		printf("and %s: the daemon's share of the same engine "
		       "in-process (1.00: as fast):\n",
		       vs);
	if (tbl_init(&t, rows, titles, cols))
		return;
	for (i = 0; i < rows; i++) {
		unsigned c = 1;

		tbl_u64(&t, i, 0, sizes[i]);
		for (p = 0; p < pa->n_paths; p++) {
			const struct bp_result *v = bp_find(r, ai, p, sizes[i]);

			snprintf(tbl_cell(&t, i, c++), TBL_CELL,
				 v ? "%.2f" : "-", v ? v->gbps : 0);
		}
		if (ratio) {
			const struct bp_result *v = bp_find(r, ai, 0, sizes[i]);

			snprintf(tbl_cell(&t, i, c++), TBL_CELL,
				 v && v->ratio > 0 ? "%.2f" : "-",
				 v ? v->ratio : 0);
		}
	}
	tbl_print(&t);
	tbl_fini(&t);
	fflush(stdout);
}

void bp_print_table(const struct bp_report *r, unsigned ai)
{
	const struct bp_alg *pa = &r->algs[ai];
	char title[BP_MAX_PATHS * 3 + 3][48];
	const char *titles[BP_MAX_PATHS * 3 + 3];
	unsigned p, i, rows = 0, cols = 1;
	uint32_t sizes[BENCH_MAX_SIZES];
	struct tbl t;

	for (i = 0; i < r->n_res; i++)
		if (r->res[i].alg == ai && r->res[i].path == 0)
			sizes[rows++] = r->res[i].size;
	printf("\n== %s %s ==\n", pa->a->name, bp_dir(r));
	for (p = 0; p < pa->n_paths; p++)
		printf("%-15s %s\n", pa->paths[p].name, pa->paths[p].desc);
	if (!rows) {
		puts("(nothing measured)");
		return;
	}
	if (!r->wide) {
		bp_print_narrow(r, ai, sizes, rows);
		return;
	}
	titles[0] = "Buffer Size(B)";
	for (p = 0; p < pa->n_paths; p++) {
		snprintf(title[cols], sizeof(title[0]), "%s OPS(M)",
			 pa->paths[p].name);
		titles[cols] = title[cols];
		cols++;
		snprintf(title[cols], sizeof(title[0]), "%s Throughput(Gbps)",
			 pa->paths[p].name);
		titles[cols] = title[cols];
		cols++;
	}
	/* Each path against the in-process twin (the third kind of path). */
	for (p = 0; p < pa->n_paths; p++) {
		const struct bp_result *v = bp_find(r, ai, p, sizes[0]);

		if (v && v->ratio > 0 && cols < BP_MAX_PATHS * 3 + 1) {
			snprintf(title[cols], sizeof(title[0]), "%s/%s",
				 pa->paths[p].name, bp_twin(pa));
			titles[cols] = title[cols];
			cols++;
		}
	}
	/* And the daemon against DPDK's PMD, and one op at a time against
	 * bursts, when those were measured. */
	const struct bp_result *d0 = bp_find(r, ai, 0, sizes[0]);
	const struct bp_result *s0 =
		pa->n_paths > 1 ? bp_find(r, ai, 1, sizes[0]) : NULL;
	bool vs_dpdk = d0 && d0->ratio_dpdk > 0;
	bool vs_zc = s0 && s0->ratio_zc > 0;

	if (vs_zc) {
		snprintf(title[cols], sizeof(title[0]), "%s/%s",
			 pa->paths[1].name, pa->paths[0].name);
		titles[cols] = title[cols];
		cols++;
	}
	if (vs_dpdk) {
		snprintf(title[cols], sizeof(title[0]), "%s/dpdk",
			 pa->paths[0].name);
		titles[cols] = title[cols];
		cols++;
	}
	if (tbl_init(&t, rows, titles, cols))
		return;
	for (i = 0; i < rows; i++) {
		unsigned c = 1;

		tbl_u64(&t, i, 0, sizes[i]);
		for (p = 0; p < pa->n_paths; p++) {
			const struct bp_result *v = bp_find(r, ai, p, sizes[i]);

			snprintf(tbl_cell(&t, i, c++), TBL_CELL,
				 v ? "%.2f" : "-", v ? v->ops_m : 0);
			snprintf(tbl_cell(&t, i, c++), TBL_CELL,
				 v ? "%.2f" : "-", v ? v->gbps : 0);
		}
		for (p = 0; p < pa->n_paths && c < cols; p++) {
			const struct bp_result *v0 =
				bp_find(r, ai, p, sizes[0]);
			const struct bp_result *v = bp_find(r, ai, p, sizes[i]);

			if (!v0 || v0->ratio <= 0)
				continue;
			snprintf(tbl_cell(&t, i, c++), TBL_CELL,
				 v ? "%.2f" : "-", v ? v->ratio : 0);
		}
		if (vs_zc) {
			const struct bp_result *v = bp_find(r, ai, 1, sizes[i]);

			snprintf(tbl_cell(&t, i, c++), TBL_CELL,
				 v && v->ratio_zc > 0 ? "%.2f" : "-",
				 v ? v->ratio_zc : 0);
		}
		if (vs_dpdk) {
			const struct bp_result *v = bp_find(r, ai, 0, sizes[i]);

			snprintf(tbl_cell(&t, i, c++), TBL_CELL,
				 v && v->ratio_dpdk > 0 ? "%.2f" : "-",
				 v ? v->ratio_dpdk : 0);
		}
	}
	tbl_print(&t);
	tbl_fini(&t);
	fflush(stdout);
}

void bp_print_dmcrypt(const struct bp_report *r)
{
	static const char *const titles[] = { "<Algorithm", "<Path", "Run 1",
					      "Run 2",	    "Run 3", "Run 4",
					      "Run 5",	    "Mean" };
	unsigned i, k, rows = 0, row = 0, runs = 0;
	struct tbl t;

	for (i = 0; i < r->n_res; i++) {
		rows++;
		if (r->res[i].n_runs > runs)
			runs = r->res[i].n_runs;
	}
	printf("\ndm-crypt comparison: %s, %u KiB chunks, MB/s (10^6 B/s) "
	       "per run and the mean\n",
	       bp_dir(r), BP_DMCRYPT_LEN >> 10);
	for (i = 0; i < r->n_algs; i++)
		for (k = 0; k < r->algs[i].n_paths; k++)
			printf("  %s %-15s %s\n", r->algs[i].a->name,
			       r->algs[i].paths[k].name,
			       r->algs[i].paths[k].desc);
	if (!rows)
		return;
	/* Five runs by default; more or fewer columns follow --rounds. */
	const char *tt[2 + BENCH_MAX_ROUNDS + 1];
	char rt[BENCH_MAX_ROUNDS][16];
	unsigned cols = 0;

	tt[cols++] = titles[0];
	tt[cols++] = titles[1];
	for (k = 0; k < runs && cols < TBL_COLS_MAX - 1; k++) {
		snprintf(rt[k], sizeof(rt[k]), "Run %u", k + 1);
		tt[cols++] = rt[k];
	}
	tt[cols++] = "Mean";
	if (tbl_init(&t, rows, tt, cols))
		return;
	for (i = 0; i < r->n_res; i++, row++) {
		const struct bp_result *v = &r->res[i];
		double sum = 0;
		unsigned c = 2;

		tbl_text(&t, row, 0, r->algs[v->alg].a->name);
		tbl_text(&t, row, 1, r->algs[v->alg].paths[v->path].name);
		for (k = 0; k < v->n_runs && c < cols - 1; k++) {
			snprintf(tbl_cell(&t, row, c++), TBL_CELL, "%.1f",
				 v->mbs[k]);
			sum += v->mbs[k];
		}
		while (c < cols - 1)
			snprintf(tbl_cell(&t, row, c++), TBL_CELL, "-");
		snprintf(tbl_cell(&t, row, c), TBL_CELL, "%.1f",
			 v->n_runs ? sum / v->n_runs : 0);
	}
	tbl_print(&t);
	tbl_fini(&t);
}

static double bp_mean(const struct bp_result *v)
{
	double sum = 0;

	for (unsigned k = 0; k < v->n_runs; k++)
		sum += v->mbs[k];
	return v->n_runs ? sum / v->n_runs : 0;
}

/* A ratio, or nothing (CSV) / null (JSON) where none was measured (0):
 * a ratio of 0.0 would read as "infinitely slower". */
static void bp_ratio(const char *pre, double v, int json)
{
	if (v > 0)
		printf("%s%.4f", pre, v);
	else
		printf("%s%s", pre, json ? "null" : "");
}

void bp_print_csv(const struct bp_report *r)
{
	printf("alg,dir,path,size,ops_m,gbps,ratio,mean_mbs,runs_mbs,"
	       "ratio_dpdk,ratio_zc\n");
	for (unsigned i = 0; i < r->n_res; i++) {
		const struct bp_result *v = &r->res[i];

		printf("%s,%s,%s,%u,%.4f,%.4f", r->algs[v->alg].a->name,
		       r->cfg->dir == CC_ENCRYPT ? "enc" : "dec",
		       r->algs[v->alg].paths[v->path].name, v->size, v->ops_m,
		       v->gbps);
		bp_ratio(",", v->ratio, 0);
		printf(",%.2f,", bp_mean(v));
		for (unsigned k = 0; k < v->n_runs; k++)
			printf("%s%.2f", k ? ";" : "", v->mbs[k]);
		bp_ratio(",", v->ratio_dpdk, 0);
		bp_ratio(",", v->ratio_zc, 0);
		putchar('\n');
	}
}

void bp_print_json(const struct bp_report *r)
{
	const struct bench_cfg *cfg = r->cfg;
	unsigned i, k;

	printf("{\n  \"config\": {\"daemon_version\": ");
	json_str(r->daemon_version ? r->daemon_version : "");
	printf(", \"dir\": \"%s\", \"burst\": %u, \"depth\": %u, "
	       "\"queues\": %u, \"workers\": %u, \"rounds\": %u, "
	       "\"time_ms\": %u, \"dmcrypt\": %s},\n  \"paths\": [",
	       cfg->dir == CC_ENCRYPT ? "enc" : "dec", cfg->burst, cfg->depth,
	       r->queues, r->workers, cfg->rounds, cfg->time_ms,
	       r->dmcrypt ? "true" : "false");
	for (i = 0, k = 0; i < r->n_algs; i++) {
		for (unsigned p = 0; p < r->algs[i].n_paths; p++, k++) {
			printf("%s\n    {\"alg\": \"%s\", \"path\": ",
			       k ? "," : "", r->algs[i].a->name);
			json_str(r->algs[i].paths[p].name);
			fputs(", \"desc\": ", stdout);
			json_str(r->algs[i].paths[p].desc);
			putchar('}');
		}
	}
	printf("%s],\n  \"results\": [", k ? "\n  " : "");
	for (i = 0; i < r->n_res; i++) {
		const struct bp_result *v = &r->res[i];

		printf("%s\n    {\"alg\": \"%s\", \"path\": ", i ? "," : "",
		       r->algs[v->alg].a->name);
		json_str(r->algs[v->alg].paths[v->path].name);
		printf(", \"size\": %u, \"ops_m\": %.4f, \"gbps\": %.4f",
		       v->size, v->ops_m, v->gbps);
		bp_ratio(", \"ratio\": ", v->ratio, 1);
		printf(", \"mean_mbs\": %.2f, \"runs_mbs\": [", bp_mean(v));
		for (k = 0; k < v->n_runs; k++)
			printf("%s%.2f", k ? ", " : "", v->mbs[k]);
		putchar(']');
		bp_ratio(", \"ratio_dpdk\": ", v->ratio_dpdk, 1);
		bp_ratio(", \"ratio_zc\": ", v->ratio_zc, 1);
		putchar('}');
	}
	printf("%s]\n}\n", r->n_res ? "\n  " : "");
}

/* gnuplot's strings are in double quotes: keep only what is safe. */
static void gp_text(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\' ? *s
									 : '?',
		      f);
}

/* Write the data (one gnuplot index per series) and the script; run
 * gnuplot on them. */
int bp_png(const struct bp_report *r, const char *file)
{
	char dir[] = "/tmp/cryptoctl-png.XXXXXX", data[64], script[64];
	unsigned i, p, series = 0, multi = r->n_algs > 1;
	FILE *fd, *fs;
	int st, rc = -EIO;
	pid_t pid;

	if (!mkdtemp(dir)) {
		cli_err("bench: --png: %s", strerror(errno));
		return -errno;
	}
	snprintf(data, sizeof(data), "%s/data", dir);
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	fd = fopen(data, "w");
	fs = fopen(script, "w");
	if (!fd || !fs)
		goto out;
	fprintf(fs,
		"set terminal pngcairo size 1100,650 noenhanced font ',11'\n"
		"set output \"");
	gp_text(fs, file);
	fprintf(fs,
		"\"\nset title \"%s %s: throughput vs buffer size, "
		"burst %u, %u queue%s\"\n"
		"set logscale x 2\nset xlabel \"Buffer size (bytes)\"\n"
		"set ylabel \"Throughput (Gbps)\"\nset yrange [0:*]\n"
		"set grid\nset key outside right top\n"
		"set format x \"%%.0f\"\nplot ",
		multi ? "cryptod" : r->algs[0].a->name, bp_dir(r),
		r->cfg->burst, r->queues, r->queues > 1 ? "s" : "");
	for (i = 0; i < r->n_algs; i++) {
		for (p = 0; p < r->algs[i].n_paths; p++) {
			unsigned pts = 0;

			for (unsigned k = 0; k < r->n_res; k++) {
				const struct bp_result *v = &r->res[k];

				if (v->alg != i || v->path != p)
					continue;
				fprintf(fd, "%u %.4f\n", v->size, v->gbps);
				pts++;
			}
			if (!pts)
				continue;
			fprintf(fd, "\n\n");
			fprintf(fs,
				"%s\"%s\" index %u using 1:2 with linespoints "
				"lw 2 pt 7 title \"",
				series ? ", \\\n     " : "", data, series);
			if (multi) {
				gp_text(fs, r->algs[i].a->name);
				fputc(' ', fs);
			}
			gp_text(fs, r->algs[i].paths[p].name);
			fputc('"', fs);
			series++;
		}
	}
	fputc('\n', fs);
	if (!series) {
		cli_err("bench: --png: nothing was measured");
		goto out;
	}
	if (fclose(fd) | fclose(fs)) {
		fd = fs = NULL;
		goto out;
	}
	fd = fs = NULL;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		fprintf(stderr,
			"cryptoctl: bench: --png: cannot run gnuplot (%s): "
			"install gnuplot-nox\n",
			strerror(errno));
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0 && access(file, R_OK) == 0) {
		rc = 0;
		fprintf(stderr, "cryptoctl: bench: chart written to %s\n",
			file);
	} else if (pid > 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 127)) {
		cli_err("bench: --png: gnuplot failed");
	}
out:
	if (fd)
		fclose(fd);
	if (fs)
		fclose(fs);
	unlink(data);
	unlink(script);
	rmdir(dir);
	return rc;
}

/*
 * The worker pool modes' sheets (bench/bench_sheet.h): each as a text
 * table when it comes, or as CSV (a header line per sheet, the section
 * first), or all as one JSON document {"mode", "sheets": [...]}.
 */
static struct {
	bool csv, json;
	unsigned n; /* sheets printed */
} bp_sheets;

bool bp_sheets_wide;

static void bp_sheet_text(const struct bench_sheet *s)
{
	char heads[SHEET_COLS_MAX][SHEET_CELL + 1];
	const char *titles[SHEET_COLS_MAX];
	unsigned map[SHEET_COLS_MAX], cols = 0, i, c;
	struct tbl t;

	for (c = 0; c < s->cols && cols < TBL_COLS_MAX; c++) {
		if (!(s->flags[c] & SHEET_TEXT))
			continue;
		if ((s->flags[c] & SHEET_WIDE) && !bp_sheets_wide)
			continue; /* keeps the table within 100 columns */
		snprintf(heads[cols], sizeof(heads[0]), "%s%s",
			 s->flags[c] & SHEET_LEFT ? "<" : "", s->head[c]);
		titles[cols] = heads[cols];
		map[cols++] = c;
	}
	if (s->title)
		printf("%s\n", s->title);
	if (!s->rows || tbl_init(&t, s->rows, titles, cols))
		return;
	for (i = 0; i < s->rows; i++)
		for (c = 0; c < cols; c++) {
			const char *v = bench_sheet_get(s, i, map[c]);

			tbl_text(&t, i, c, *v ? v : "-");
		}
	tbl_print(&t);
	tbl_fini(&t);
}

static void bp_sheet_csv(const struct bench_sheet *s)
{
	unsigned i, c;

	fputs("section", stdout);
	for (c = 0; c < s->cols; c++)
		if (s->flags[c] & SHEET_DATA)
			printf(",%s", s->key[c]);
	putchar('\n');
	for (i = 0; i < s->rows; i++) {
		fputs(s->section, stdout);
		for (c = 0; c < s->cols; c++)
			if (s->flags[c] & SHEET_DATA)
				printf(",%s", bench_sheet_get(s, i, c));
		putchar('\n');
	}
}

static void bp_sheet_json(const struct bench_sheet *s)
{
	unsigned i, c;

	printf("%s\n    {\"section\": ", bp_sheets.n ? "," : "");
	json_str(s->section);
	fputs(", \"rows\": [", stdout);
	for (i = 0; i < s->rows; i++) {
		const char *sep = "";

		printf("%s\n      {", i ? "," : "");
		for (c = 0; c < s->cols; c++) {
			const char *v = bench_sheet_get(s, i, c);

			if (!(s->flags[c] & SHEET_DATA))
				continue;
			printf("%s", sep);
			json_str(s->key[c]);
			fputs(": ", stdout);
			if (!(s->flags[c] & SHEET_NUM))
				json_str(v);
			else
				fputs(*v ? v : "null", stdout);
			sep = ", ";
		}
		putchar('}');
	}
	printf("%s]}", s->rows ? "\n    " : "");
}

static void bp_sheet_emit(void *arg, const struct bench_sheet *s)
{
	(void)arg;
	if (!bp_sheets.csv && !bp_sheets.json)
		bp_sheet_text(s);
	else if (s->text_only)
		return;
	else if (bp_sheets.csv)
		bp_sheet_csv(s);
	else
		bp_sheet_json(s);
	bp_sheets.n++;
	fflush(stdout);
}

void bp_sheets_begin(struct pb_cfg *cfg, const char *mode)
{
	bp_sheets.csv = cfg->csv;
	bp_sheets.json = cfg->json;
	bp_sheets.n = 0;
	cfg->sink.emit = bp_sheet_emit;
	cfg->sink.arg = NULL;
	if (cfg->json) {
		fputs("{\n  \"mode\": ", stdout);
		json_str(mode);
		fputs(",\n  \"sheets\": [", stdout);
	}
}

void bp_sheets_end(const struct pb_cfg *cfg)
{
	if (cfg->json)
		printf("%s]\n}\n", bp_sheets.n ? "\n  " : "");
	fflush(stdout);
}
