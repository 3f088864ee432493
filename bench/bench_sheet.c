/* SPDX-License-Identifier: MIT */
/* Sheets: results as rows of named cells (see bench_sheet.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_sheet.h"

void bench_sheet_init(struct bench_sheet *s, const char *section,
		      const char *title)
{
	memset(s, 0, sizeof(*s));
	s->section = section;
	s->title = title;
}

void bench_sheet_col(struct bench_sheet *s, const char *key, const char *head,
		     unsigned flags)
{
	if (s->cols == SHEET_COLS_MAX || s->rows)
		return; /* a programming error: the table stays as it is */
	s->key[s->cols] = key;
	s->head[s->cols] = head ? head : key;
	s->flags[s->cols] = flags;
	s->cols++;
}

int bench_sheet_row(struct bench_sheet *s)
{
	if (s->rows == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 16;
		void *n = realloc(s->cell, (size_t)cap * s->cols * SHEET_CELL);

		if (!n)
			return -ENOMEM;
		s->cell = n;
		s->cap = cap;
	}
	memset(s->cell[(size_t)s->rows * s->cols], 0,
	       (size_t)s->cols * SHEET_CELL);
	s->rows++;
	return 0;
}

void bench_sheet_set(struct bench_sheet *s, unsigned col, const char *fmt, ...)
{
	va_list ap;

	if (!s->rows || col >= s->cols)
		return;
	va_start(ap, fmt);
	vsnprintf(s->cell[(size_t)(s->rows - 1) * s->cols + col], SHEET_CELL,
		  fmt, ap);
	va_end(ap);
}

const char *bench_sheet_get(const struct bench_sheet *s, unsigned row,
			    unsigned col)
{
	return s->cell[(size_t)row * s->cols + col];
}

void bench_sheet_fini(struct bench_sheet *s)
{
	free(s->cell);
	s->cell = NULL;
	s->rows = s->cap = 0;
}
