/* SPDX-License-Identifier: MIT */
/*
 * A sheet: one table of results as a mode measured it, named columns and
 * rows of formatted cells, handed to the front end's one report writer
 * (cli/bench_out.c), which prints it as an aligned text table, CSV or
 * JSON. The modes say what they measured; they never format output.
 */
#ifndef CRYPTOD_BENCH_SHEET_H
#define CRYPTOD_BENCH_SHEET_H

#include <stdbool.h>

enum bench_sheet_limits {
	SHEET_COLS_MAX = 24,
	SHEET_CELL = 40,
};

/* Where a column appears. */
enum bench_sheet_col_flags {
	SHEET_TEXT = 1, /* in the text table */
	SHEET_DATA = 2, /* in CSV and JSON */
	SHEET_BOTH = 3,
	SHEET_NUM = 4,	 /* JSON: a number, not a string (empty: null) */
	SHEET_LEFT = 8,	 /* text table: left-aligned */
	SHEET_WIDE = 16, /* text table: only with --wide (100 columns) */
};

struct bench_sheet {
	const char *section; /* "scale": CSV's first column, JSON's name */
	const char *title;   /* a line above the text table, or NULL */
	bool text_only;	     /* a view of another sheet: no CSV/JSON */
	unsigned cols, rows, cap;
	const char *key[SHEET_COLS_MAX];  /* CSV header, JSON member */
	const char *head[SHEET_COLS_MAX]; /* text table heading */
	unsigned flags[SHEET_COLS_MAX];
	char (*cell)[SHEET_CELL]; /* rows * cols; owned */
};

void bench_sheet_init(struct bench_sheet *s, const char *section,
		      const char *title);
/* Columns first, then rows. head NULL: the key. */
void bench_sheet_col(struct bench_sheet *s, const char *key, const char *head,
		     unsigned flags);
/* A new row; its cells start empty. 0 or -ENOMEM. */
int bench_sheet_row(struct bench_sheet *s);
/* Set cell col of the last row. */
void bench_sheet_set(struct bench_sheet *s, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *bench_sheet_get(const struct bench_sheet *s, unsigned row,
			    unsigned col);
void bench_sheet_fini(struct bench_sheet *s);

/* Where a mode hands its sheets. */
struct bench_sink {
	void (*emit)(void *arg, const struct bench_sheet *s);
	void *arg;
};

static inline void bench_sink_emit(const struct bench_sink *k,
				   const struct bench_sheet *s)
{
	if (k && k->emit)
		k->emit(k->arg, s);
}

#endif
