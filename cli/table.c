/* SPDX-License-Identifier: MIT */
/*
 * Output helpers shared by the commands that print what the daemon said:
 * aligned text tables (stats, engines) and JSON strings.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "table.h"

int tbl_wide;
int tbl_exact;

void fmt_bytes(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	unsigned u = 0;

	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64, v);
		return;
	}
	/* 1023.96K would print as "1024.0K": the next unit then. */
	for (d /= 1024; d >= 1023.95 && u + 1 < sizeof(units) - 1; u++)
		d /= 1024;
	snprintf(buf, len, "%.1f%c", d, units[u]);
}

int tbl_init(struct tbl *t, unsigned rows, const char *const *titles,
	     unsigned cols)
{
	unsigned i;

	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->rows = rows;
	for (i = 0; i < cols; i++) {
		const char *s = titles[i];

		/* A leading '+' marks a column of --wide only, then '<' a
		 * left-aligned one. */
		t->hide[i] = s[0] == '+' && !tbl_wide;
		s += s[0] == '+';
		t->left[i] = s[0] == '<';
		t->title[i] = s + t->left[i];
	}
	t->cell = calloc((size_t)rows * cols + 1, TBL_CELL);
	return t->cell ? 0 : -ENOMEM;
}

char *tbl_cell(struct tbl *t, unsigned row, unsigned col)
{
	return t->cell[(size_t)row * t->cols + col];
}

void tbl_u64(struct tbl *t, unsigned row, unsigned col, uint64_t v)
{
	snprintf(tbl_cell(t, row, col), TBL_CELL, "%" PRIu64, v);
}

void tbl_bytes(struct tbl *t, unsigned row, unsigned col, uint64_t v)
{
	if (tbl_exact)
		tbl_u64(t, row, col, v);
	else
		fmt_bytes(tbl_cell(t, row, col), TBL_CELL, v);
}

/*
 * Text that came from a client (its name) goes to a terminal: anything but
 * printable ASCII becomes '?', so a name cannot carry escape sequences.
 */
void tbl_text(struct tbl *t, unsigned row, unsigned col, const char *s)
{
	char *out = tbl_cell(t, row, col);
	size_t i;

	for (i = 0; s[i] && i < TBL_CELL - 1; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[i] = '\0';
	if (!i)
		strcpy(out, "-");
}

/* The same rule for text printed outside a table. */
void tbl_puts(const char *s)
{
	for (; *s; s++)
		putchar(*s >= 0x20 && *s < 0x7f ? *s : '?');
}

static void tbl_print_row(const struct tbl *t, const unsigned *width,
			  const char *const *cells)
{
	unsigned c, last = 0;
	int first = 1;

	for (c = 0; c < t->cols; c++)
		if (!t->hide[c])
			last = c;
	for (c = 0; c < t->cols; c++) {
		int w = (int)width[c], n = (int)strlen(cells[c]);

		if (t->hide[c])
			continue;
		/* The last column is not padded: no trailing blanks. */
		if (c == last && t->left[c])
			w = 0;
		/* Without --wide, text is cut to TBL_NARROW ('~' marks it). */
		if (!tbl_wide && t->left[c] && n > TBL_NARROW)
			printf("%s%.*s~%*s", first ? "" : "  ", TBL_NARROW - 1,
			       cells[c], w > TBL_NARROW ? w - TBL_NARROW : 0,
			       "");
		else
			printf("%s%*s", first ? "" : "  ", t->left[c] ? -w : w,
			       cells[c]);
		first = 0;
	}
	putchar('\n');
}

void tbl_print(struct tbl *t)
{
	unsigned width[TBL_COLS_MAX];
	const char *cells[TBL_COLS_MAX];
	unsigned r, c;

	for (c = 0; c < t->cols; c++) {
		width[c] = strlen(t->title[c]);
		for (r = 0; r < t->rows; r++) {
			size_t len = strlen(tbl_cell(t, r, c));

			if (len > width[c])
				width[c] = len;
		}
		if (!tbl_wide && t->left[c] && width[c] > TBL_NARROW)
			width[c] = TBL_NARROW;
	}
	tbl_print_row(t, width, t->title);
	for (r = 0; r < t->rows; r++) {
		for (c = 0; c < t->cols; c++)
			cells[c] = tbl_cell(t, r, c);
		tbl_print_row(t, width, cells);
	}
}

void tbl_puts_wrapped(const char *s, unsigned used)
{
	if (tbl_wide) { /* --wide: one line, whatever its length */
		putchar(' ');
		tbl_puts(s);
		return;
	}
	while (*s) {
		const char *sp = strchr(s, ' ');
		size_t n = sp ? (size_t)(sp - s) : strlen(s);

		if (used > 2 && used + 1 + n > 100) {
			fputs("\n  ", stdout);
			used = 2;
		} else if (used) {
			putchar(' ');
			used++;
		}
		for (size_t i = 0; i < n; i++)
			putchar(s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
		used += (unsigned)n;
		s += n;
		while (*s == ' ')
			s++;
	}
}

void tbl_fini(struct tbl *t)
{
	free(t->cell);
	t->cell = NULL;
}

/* Length of the valid UTF-8 sequence at s, or 0 (RFC 3629 ranges). */
static int utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0; /* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f; /* surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90; /* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* A JSON string; invalid UTF-8 from a client becomes U+FFFD. */
void json_str(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	putchar('"');
	while (*s) {
		int n;

		if (*s == '"' || *s == '\\') {
			printf("\\%c", *s++);
		} else if (*s < 0x20 || *s == 0x7f) {
			printf("\\u%04x", *s++);
		} else if (*s < 0x80) {
			putchar(*s++);
		} else if ((n = utf8_len(s))) {
			fwrite(s, 1, (size_t)n, stdout);
			s += n;
		} else {
			fputs("\\ufffd", stdout);
			s++;
		}
	}
	putchar('"');
}
