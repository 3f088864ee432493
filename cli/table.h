/* SPDX-License-Identifier: MIT */
#ifndef CRYPTOCTL_TABLE_H
#define CRYPTOCTL_TABLE_H

#include <stdint.h>

#include "cli.h"

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
/* --exact: byte counts as integers in tables, not "16.6G". */
extern int tbl_exact;
/* A title starting with '<' makes a left-aligned column, with '+' (then
 * maybe '<') a column of --wide only. 0 or -ENOMEM. */
int tbl_init(struct tbl *t, unsigned rows, const char *const *titles,
	     unsigned cols);
char *tbl_cell(struct tbl *t, unsigned row, unsigned col);
void tbl_u64(struct tbl *t, unsigned row, unsigned col, uint64_t v);
/* A byte count for people, 1024-based as df -h: "850", "16.6G" (K, M, G,
 * T, P, E, one decimal); into buf (>= 16 bytes). */
void fmt_bytes(char *buf, size_t len, uint64_t v);
/* fmt_bytes() in a cell, or the exact integer with --exact. */
void tbl_bytes(struct tbl *t, unsigned row, unsigned col, uint64_t v);
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

#endif /* CRYPTOCTL_TABLE_H */
