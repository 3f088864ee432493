/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl encrypt / decrypt / digest / mac --progress: how much of the
 * input went through, the rate, and (a regular file's size being known)
 * the share and the time left, on stderr about twice a second, as pv and
 * dd status=progress show it; a last line at the end. On a terminal the
 * line is redrawn in place; elsewhere (--progress=always) each update is
 * a line of its own. Never a byte on stdout: that is the output.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cryptod/clock.h>

#include "crypt.h"
#include "table.h"

/* Every half second; a chunk (1 MiB) is the finest step. */
enum { PROGRESS_EVERY_NS = 500000000 };

int crypt_progress_parse(struct crypt_args *a, const char *arg)
{
	if (!arg || !strcmp(arg, "auto"))
		a->prog.on = isatty(STDERR_FILENO);
	else if (!strcmp(arg, "always"))
		a->prog.on = 1;
	else if (!strcmp(arg, "never"))
		a->prog.on = 0;
	else
		return cli_usage_err(a->cmd,
				     "--progress: auto, always or never, not "
				     "'%s'",
				     arg);
	return 0;
}

static void put_line(struct crypt_progress *p, const char *line, int last)
{
	if (p->tty) {
		/* back to the start, the line, clear what the last one
		 * left beyond it */
		fprintf(stderr, "\r%s\033[K%s", line, last ? "\n" : "");
		cli_line_open = !last;
	} else {
		fprintf(stderr, "%s\n", line);
	}
	fflush(stderr);
}

/* "00:03", "1:02:03" */
static void fmt_eta(char *buf, size_t len, double s)
{
	unsigned long t = (unsigned long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60,
			 t % 60);
	else
		snprintf(buf, len, "%02lu:%02lu", t / 60, t % 60);
}

void crypt_progress_start(struct crypt_args *a, int64_t size)
{
	struct crypt_progress *p = &a->prog;

	if (!p->on)
		return;
	p->tty = isatty(STDERR_FILENO);
	p->size = size;
	p->done = 0;
	p->t0 = crd_now_ns();
	p->last = p->t0;
}

void crypt_progress_add(struct crypt_args *a, uint64_t n)
{
	struct crypt_progress *p = &a->prog;
	char line[160], done[16], size[16], rate[16], eta[24];
	uint64_t now;
	double s, r;

	if (!p->on)
		return;
	p->done += n;
	now = crd_now_ns();
	if (now - p->last < PROGRESS_EVERY_NS)
		return;
	p->last = now;
	s = (now - p->t0) / 1e9;
	r = s > 0 ? p->done / s : 0;
	fmt_bytes(done, sizeof(done), p->done);
	fmt_bytes(rate, sizeof(rate), (uint64_t)r);
	if (p->size > 0) {
		fmt_bytes(size, sizeof(size), (uint64_t)p->size);
		if (r > 0 && (uint64_t)p->size > p->done)
			fmt_eta(eta, sizeof(eta),
				((uint64_t)p->size - p->done) / r);
		else
			strcpy(eta, "00:00");
		snprintf(line, sizeof(line),
			 "cryptoctl: %s: %s of %s (%u%%), %s/s, ETA %s", a->cmd,
			 done, size,
			 (unsigned)(p->done * 100 / (uint64_t)p->size), rate,
			 eta);
	} else {
		snprintf(line, sizeof(line), "cryptoctl: %s: %s, %s/s", a->cmd,
			 done, rate);
	}
	put_line(p, line, 0);
}

void crypt_progress_end(struct crypt_args *a, int ok)
{
	struct crypt_progress *p = &a->prog;
	char line[160], done[16], rate[16];
	double s;

	if (!p->on)
		return;
	s = (crd_now_ns() - p->t0) / 1e9;
	fmt_bytes(done, sizeof(done), p->done);
	fmt_bytes(rate, sizeof(rate), s > 0 ? (uint64_t)(p->done / s) : 0);
	snprintf(line, sizeof(line),
		 "cryptoctl: %s: %s %s (%llu bytes) in %.1fs, %s/s", a->cmd,
		 ok ? "done," : "stopped after", done,
		 (unsigned long long)p->done, s, rate);
	put_line(p, line, 1);
	p->on = 0;
}
