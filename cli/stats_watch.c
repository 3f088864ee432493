/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl stats --watch: a top-like view. Every interval it takes a
 * snapshot and shows rates per second against the previous one, and the
 * service-time percentiles of that interval alone (the difference of the
 * two histograms), and per program its rates of ops, bytes and the
 * messages it reports. On a terminal it redraws in place and quits on q or
 * Ctrl-C; otherwise it prints one snapshot after another. When the daemon
 * goes away it says so and waits for it to come back (watch_reconnect).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "stats_view.h"
#include "table.h"

static volatile sig_atomic_t watch_stop;

static void watch_on_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

/* "1.23M", "456k", "12.0", "0" per second. */
static void fmt_rate(char *buf, size_t len, double v)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.2fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

static void tbl_rate(struct tbl *t, unsigned r, unsigned c, uint64_t now,
		     uint64_t before, double dt, int have_prev)
{
	if (!have_prev || dt <= 0 || now < before)
		snprintf(tbl_cell(t, r, c), TBL_CELL, "-");
	else
		fmt_rate(tbl_cell(t, r, c), TBL_CELL, (now - before) / dt);
}

static void tbl_gbps(struct tbl *t, unsigned r, unsigned c, uint64_t now,
		     uint64_t before, double dt, int have_prev)
{
	if (!have_prev || dt <= 0 || now < before)
		snprintf(tbl_cell(t, r, c), TBL_CELL, "-");
	else
		snprintf(tbl_cell(t, r, c), TBL_CELL, "%.2f",
			 (now - before) * 8 / dt / 1e9);
}

/* Percentile q of the interval: now's histogram minus before's (NULL:
 * since the start). */
static void tbl_pct(struct tbl *t, unsigned r, unsigned c,
		    const struct cc_latency *now,
		    const struct cc_latency *before, double q)
{
	uint64_t d[CC_LAT_BUCKETS], n = 0;

	for (unsigned b = 0; b < CC_LAT_BUCKETS; b++) {
		uint64_t p = before ? before->hist[b] : 0;

		d[b] = now->hist[b] >= p ? now->hist[b] - p : 0;
		n += d[b];
	}
	if (!n)
		snprintf(tbl_cell(t, r, c), TBL_CELL, "-");
	else
		fmt_ns(tbl_cell(t, r, c), TBL_CELL, cc_latency_quantile(d, q));
}

static const struct cc_queue_stats *find_queue(const struct cc_stats *st,
					       uint32_t client, uint32_t queue)
{
	for (unsigned i = 0; i < st->n_queues; i++)
		if (st->queues[i].client_id == client &&
		    st->queues[i].queue_id == queue)
			return &st->queues[i];
	return NULL;
}

static int watch_engines(const struct cc_stats *a, const struct cc_stats *p,
			 double dt)
{
	static const char *const titles[] = { "<ENGINE", "OK-OPS/s", "Gbps",
					      "ERR/s", "AUTH-FAIL/s" };
	struct tbl t;

	if (tbl_init(&t, a->n_engines, titles, 5))
		return -ENOMEM;
	for (unsigned i = 0; i < a->n_engines; i++) {
		const struct cc_counters *c = &a->engines[i].c;
		int hp = p && i < p->n_engines &&
			 !strcmp(p->engines[i].name, a->engines[i].name);
		const struct cc_counters *o = hp ? &p->engines[i].c : c;

		tbl_text(&t, i, 0, a->engines[i].name);
		tbl_rate(&t, i, 1, c->ops, o->ops, dt, hp);
		tbl_gbps(&t, i, 2, c->bytes, o->bytes, dt, hp);
		tbl_rate(&t, i, 3, c->errors, o->errors, dt, hp);
		tbl_rate(&t, i, 4, c->auth_failures, o->auth_failures, dt, hp);
	}
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

static int watch_workers(const struct cc_stats *a, const struct cc_stats *p,
			 double dt)
{
	static const char *const titles[] = { "WORKER", "<STATE",  "OPS/s",
					      "Gbps",	"EMPTY/s", "WAKE/s",
					      "P50",	"P99",	   "P99.9" };
	struct tbl t;

	if (tbl_init(&t, a->n_workers_stats, titles, 9))
		return -ENOMEM;
	for (unsigned i = 0; i < a->n_workers_stats; i++) {
		const struct cc_worker_stats *w = &a->worker_stats[i];
		int hp = p && i < p->n_workers_stats;
		const struct cc_worker_stats *o = hp ? &p->worker_stats[i] : w;

		tbl_u64(&t, i, 0, w->index);
		/* asleep is the state at the instant of the snapshot: a
		 * worker that completed ops in the interval was busy, even
		 * if it had just gone to sleep. */
		tbl_text(&t, i, 1,
			 hp && w->c.ops > o->c.ops ? "busy"
			 : w->asleep		   ? "asleep"
						   : "polling");
		tbl_rate(&t, i, 2, w->c.ops, o->c.ops, dt, hp);
		tbl_gbps(&t, i, 3, w->c.bytes, o->c.bytes, dt, hp);
		tbl_rate(&t, i, 4, w->c.empty_polls, o->c.empty_polls, dt, hp);
		tbl_rate(&t, i, 5, w->c.wakeups, o->c.wakeups, dt, hp);
		tbl_pct(&t, i, 6, &w->lat, hp ? &o->lat : NULL, 0.5);
		tbl_pct(&t, i, 7, &w->lat, hp ? &o->lat : NULL, 0.99);
		tbl_pct(&t, i, 8, &w->lat, hp ? &o->lat : NULL, 0.999);
	}
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

static int watch_queues(const struct cc_stats *a, const struct cc_stats *p,
			double dt)
{
	static const char *const titles[] = {
		"CLIENT",   "QUEUE",	 "PID", "OPS/s", "Gbps",  "ERR/s",
		"+RETRY/s", "IN-FLIGHT", "P50", "P99",	 "P99.9", "<NAME",
	};
	enum { N_COLS = 12 };
	struct tbl t;

	if (!a->n_queues) {
		puts("no client queues");
		return 0;
	}
	if (tbl_init(&t, a->n_queues, titles, N_COLS))
		return -ENOMEM;
	for (unsigned i = 0; i < a->n_queues; i++) {
		const struct cc_queue_stats *q = &a->queues[i];
		const struct cc_queue_stats *o =
			p ? find_queue(p, q->client_id, q->queue_id) : NULL;
		int hp = o != NULL;

		if (!o)
			o = q;
		tbl_u64(&t, i, 0, q->client_id);
		tbl_u64(&t, i, 1, q->queue_id);
		tbl_u64(&t, i, 2, q->pid);
		tbl_rate(&t, i, 3, q->c.ops, o->c.ops, dt, hp);
		tbl_gbps(&t, i, 4, q->c.bytes, o->c.bytes, dt, hp);
		tbl_rate(&t, i, 5, q->c.errors, o->c.errors, dt, hp);
		tbl_rate(&t, i, 6, q->c.retries, o->c.retries, dt, hp);
		tbl_u64(&t, i, 7, q->in_flight);
		tbl_pct(&t, i, 8, &q->lat, hp ? &o->lat : NULL, 0.5);
		tbl_pct(&t, i, 9, &q->lat, hp ? &o->lat : NULL, 0.99);
		tbl_pct(&t, i, 10, &q->lat, hp ? &o->lat : NULL, 0.999);
		tbl_text(&t, i, 11, q->client_name);
	}
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

static const struct cc_program_stats *
find_program(const struct stats_snap *s, const struct cc_program_stats *x)
{
	for (unsigned i = 0; i < s->n_progs; i++)
		if (s->progs[i].other == x->other &&
		    s->progs[i].uid == x->uid &&
		    !strcmp(s->progs[i].name, x->name))
			return &s->progs[i];
	return NULL;
}

/* Per program: names cut to WATCH_NAME bytes so a row fits 100 columns
 * (rates are at most 6 characters). */
static int watch_programs(const struct stats_snap *a,
			  const struct stats_snap *p, double dt)
{
	static const char *const titles[] = {
		"<PROGRAM", "UID",	 "CONNS",      "OPS/s",	    "Gbps",
		"ERR/s",    "OFFLOAD/s", "FALLBACK/s", "IN-PROC/s",
	};
	enum { N_COLS = 9, WATCH_NAME = 28 };
	struct tbl t;

	if (!a->n_progs)
		return 0;
	if (tbl_init(&t, a->n_progs, titles, N_COLS))
		return -ENOMEM;
	for (unsigned i = 0; i < a->n_progs; i++) {
		const struct cc_program_stats *x = &a->progs[i];
		const struct cc_program_stats *o =
			p ? find_program(p, x) : NULL;
		int hp = o != NULL;
		char *name = tbl_cell(&t, i, 0);

		if (!o)
			o = x;
		tbl_text(&t, i, 0, x->name);
		if (strlen(name) > WATCH_NAME)
			strcpy(name + WATCH_NAME - 1, "~");
		if (x->other)
			snprintf(tbl_cell(&t, i, 1), TBL_CELL, "-");
		else
			tbl_u64(&t, i, 1, x->uid);
		tbl_u64(&t, i, 2, x->connections);
		tbl_rate(&t, i, 3, x->ops, o->ops, dt, hp);
		tbl_gbps(&t, i, 4, x->bytes, o->bytes, dt, hp);
		tbl_rate(&t, i, 5, x->errors, o->errors, dt, hp);
		tbl_rate(&t, i, 6, x->usage.offloaded, o->usage.offloaded, dt,
			 hp);
		tbl_rate(&t, i, 7, x->usage.fallbacks, o->usage.fallbacks, dt,
			 hp);
		tbl_rate(&t, i, 8, x->usage.inprocess, o->usage.inprocess, dt,
			 hp);
	}
	putchar('\n');
	tbl_print(&t);
	tbl_fini(&t);
	return 0;
}

static int watch_frame(const struct stats_snap *s, const struct stats_snap *p,
		       double interval, unsigned n, int tty)
{
	const struct cc_stats *st = &s->st;
	double dt = p ? s->t - p->t : 0;

	if (tty)
		fputs("\033[H\033[J", stdout); /* home, clear to the end */
	else
		printf("--- snapshot %u\n", n);
	print_stats_head(st);
	printf("; every %.1fs%s\n\n", interval, tty ? ", q quits" : "");
	if (watch_engines(st, p ? &p->st : NULL, dt))
		return -ENOMEM;
	putchar('\n');
	if (watch_workers(st, p ? &p->st : NULL, dt))
		return -ENOMEM;
	putchar('\n');
	if (watch_queues(st, p ? &p->st : NULL, dt))
		return -ENOMEM;
	if (watch_programs(s, p, dt))
		return -ENOMEM;
	if (!tty)
		putchar('\n');
	fflush(stdout);
	return 0;
}

/*
 * stats_print_json() on one line: into a memory stream (glibc's stdout is
 * a variable a program may set), then without its layout. JSON strings
 * carry no raw newline (json_str escapes it), so every '\n' and the
 * indent after it are layout.
 */
static int watch_json_line(const struct stats_snap *s, double interval,
			   unsigned n)
{
	FILE *saved = stdout, *mem;
	char *buf = NULL, *p;
	size_t len = 0;

	fflush(stdout);
	mem = open_memstream(&buf, &len);
	if (!mem)
		return -ENOMEM;
	stdout = mem;
	stats_print_json(s);
	stdout = saved;
	if (fclose(mem) || !buf || buf[0] != '{') {
		free(buf);
		return -ENOMEM;
	}
	printf("{\"snapshot\": %u, \"interval_s\": %g, ", n, interval);
	for (p = buf + 1; *p; p++) {
		if (*p != '\n') {
			putchar(*p);
			continue;
		}
		while (p[1] == ' ')
			p++;
	}
	putchar('\n');
	free(buf);
	fflush(stdout);
	return 0;
}

/* Wait up to ms for q on the terminal, or a signal. 1: quit. */
static int watch_wait(int keys, int ms)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	char c;

	if (watch_stop)
		return 1;
	if (!keys) {
		/* poll with no fd: a sleep a signal cuts short */
		poll(NULL, 0, ms);
		return watch_stop;
	}
	if (poll(&pfd, 1, ms) > 0 && read(STDIN_FILENO, &c, 1) == 1 &&
	    (c == 'q' || c == 'Q' || c == 3))
		return 1;
	return watch_stop;
}

/*
 * The daemon went away (stopped, restarted, upgraded): say so once on
 * stderr, then try to connect again, every 0.1 s at first and at most
 * every second, until it answers or q, Ctrl-C or SIGTERM. 0: connected
 * again (*conn is the new connection), 1: quit.
 */
static int watch_reconnect(struct cli *cli, struct cc_conn **conn, int keys)
{
	int ms = 100;

	cc_disconnect(*conn);
	*conn = NULL;
	cli_err("stats: %s; waiting for it to come back (q or Ctrl-C quits)",
		cli_strerror(-EPIPE));
	for (;;) {
		if (watch_wait(keys, ms))
			return 1;
		if (!cli_connect_quiet(cli, conn))
			break;
		ms = ms * 2 > WATCH_RETRY_MAX_MS ? WATCH_RETRY_MAX_MS : ms * 2;
	}
	cli_err("stats: connected to %s again", cli->path);
	return 0;
}

int stats_watch(struct cli *cli, struct cc_conn **conn, double interval,
		unsigned count, int json)
{
	struct stats_snap snap[2];
	struct termios saved, raw;
	struct sigaction sa;
	int tty = !json && isatty(STDOUT_FILENO), keys = 0;
	int ret = CLI_EXIT_OK;
	unsigned n, cur = 0;
	int have_prev = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watch_on_signal; /* no SA_RESTART: poll returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (tty && isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &saved)) {
		raw = saved;
		raw.c_lflag &= ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		keys = !tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	if (tty)
		fputs("\033[?25l\033[2J", stdout); /* hide the cursor, clear */

	for (n = 1; !count || n <= count; n++) {
		int err = stats_snap_take(*conn, &snap[cur]);

		if (cli_conn_lost(err)) {
			fflush(stdout);
			if (watch_reconnect(cli, conn, keys))
				break;
			/* A new daemon counts from zero: no rates against
			 * the old one's last snapshot. */
			if (have_prev)
				stats_snap_free(&snap[!cur]);
			have_prev = 0;
			n--; /* the snapshot is still to be shown */
			continue;
		}
		if (err < 0) {
			cli_err("stats: %s", cli_strerror(err));
			ret = CLI_EXIT_FAIL;
			break;
		}
		if (json)
			err = watch_json_line(&snap[cur], interval, n);
		else
			err = watch_frame(&snap[cur],
					  have_prev ? &snap[!cur] : NULL,
					  interval, n, tty);
		if (have_prev)
			stats_snap_free(&snap[!cur]);
		have_prev = 1;
		cur = !cur;
		if (err < 0) {
			cli_err("stats: %s", strerror(-err));
			ret = CLI_EXIT_FAIL;
			break;
		}
		if ((count && n == count) ||
		    watch_wait(keys, (int)(interval * 1000)))
			break;
	}
	if (have_prev)
		stats_snap_free(&snap[!cur]);
	if (keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	if (tty)
		fputs("\033[?25h", stdout); /* the cursor back */
	return ret;
}
