/* SPDX-License-Identifier: MIT */
/*
 * The per-program view (programs.h): what clients report about their own
 * messages, the records of programs whose connections closed, and the
 * ProgramsReply. Control thread only.
 */
#include "programs.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "client.h"
#include "queue.h"
#include "stats.h"
#include "wire.h"

/* A program whose connections all closed, or some did. */
struct prog_rec {
	char name[sizeof(((struct client *)0)->name)];
	uid_t uid;
	int used;
	uint64_t conns;	  /* connections closed */
	uint64_t last_ms; /* stats_now_ms() when the last one closed */
	struct prog_counts k;
};

static struct prog_rec recs[MAX_PROGRAMS];
/* Programs the table let go, and those past a uid's share. */
static struct prog_rec other = { .name = "(other)", .uid = (uid_t)-1 };

/* Sums of counters a client chose may not wrap: they stick at the top. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static void counts_add(struct prog_counts *d, const struct prog_counts *s)
{
	d->ops = sat_add(d->ops, s->ops);
	d->bytes = sat_add(d->bytes, s->bytes);
	d->errors = sat_add(d->errors, s->errors);
	d->auth_failures = sat_add(d->auth_failures, s->auth_failures);
	d->u.offloaded = sat_add(d->u.offloaded, s->u.offloaded);
	d->u.fallbacks = sat_add(d->u.fallbacks, s->u.fallbacks);
	d->u.inprocess = sat_add(d->u.inprocess, s->u.inprocess);
}

static uint64_t ld(const _Atomic uint64_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

static void queue_counts(struct prog_counts *d, const struct queue *q)
{
	const struct prog_counts k = {
		.ops = ld(&q->st.ops),
		.bytes = ld(&q->st.bytes),
		.errors = ld(&q->st.errors),
		.auth_failures = ld(&q->st.auth_failures),
	};
	counts_add(d, &k);
}

int programs_usage_report(struct client *c, const struct prog_usage *u)
{
	if (u->offloaded > CTL_USAGE_MAX || u->fallbacks > CTL_USAGE_MAX ||
	    u->inprocess > CTL_USAGE_MAX)
		return -ERANGE;
	if (u->offloaded < c->usage.offloaded ||
	    u->fallbacks < c->usage.fallbacks ||
	    u->inprocess < c->usage.inprocess)
		return -EINVAL;
	c->usage = *u;
	c->usage_reported = 1;
	return 0;
}

void programs_queue_closed(struct client *c, const struct queue *q)
{
	queue_counts(&c->closed, q);
}

/* Everything c did so far: closed queues, open ones, its report. */
static void client_counts(const struct client *c, struct prog_counts *k)
{
	*k = c->closed;
	k->u = (struct prog_usage){ 0 };
	for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++)
		if (c->queues[i])
			queue_counts(k, c->queues[i]);
	const struct prog_counts rep = { .u = c->usage };
	counts_add(k, &rep);
}

static struct prog_rec *rec_find(const char *name, uid_t uid)
{
	for (unsigned i = 0; i < MAX_PROGRAMS; i++)
		if (recs[i].used && recs[i].uid == uid &&
		    !strcmp(recs[i].name, name))
			return &recs[i];
	return NULL;
}

static void rec_fold_other(struct prog_rec *r)
{
	counts_add(&other.k, &r->k);
	other.conns = sat_add(other.conns, r->conns);
	if (r->last_ms > other.last_ms)
		other.last_ms = r->last_ms;
	other.used = 1;
	memset(r, 0, sizeof(*r));
}

/* A record for (name, uid): a free one, else the least recently active
 * one evicted to "(other)". NULL when a non-administrator uid holds its
 * share already. A non-administrator evicts only its own records: one
 * user's (or a few users') stream of made-up names cannot push every
 * other program's history out. */
static struct prog_rec *rec_new(const char *name, uid_t uid, int admin)
{
	struct prog_rec *free_rec = NULL, *lru = NULL, *lru_mine = NULL;
	unsigned mine = 0;
	for (unsigned i = 0; i < MAX_PROGRAMS; i++) {
		struct prog_rec *r = &recs[i];
		if (!r->used) {
			if (!free_rec)
				free_rec = r;
			continue;
		}
		if (r->uid == uid) {
			mine++;
			if (!lru_mine || r->last_ms < lru_mine->last_ms)
				lru_mine = r;
		}
		if (!lru || r->last_ms < lru->last_ms)
			lru = r;
	}
	if (!admin && mine >= MAX_PROGRAMS_PER_UID)
		return NULL;
	struct prog_rec *r = free_rec ? free_rec : admin ? lru : lru_mine;
	if (!r)
		return NULL; /* no table at all */
	if (!free_rec)
		rec_fold_other(r); /* clears it */
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->uid = uid;
	r->used = 1;
	return r;
}

/* d -= s, for counts that only grow (s was taken before d). */
static void counts_sub(struct prog_counts *d, const struct prog_counts *s)
{
	d->ops -= s->ops;
	d->bytes -= s->bytes;
	d->errors -= s->errors;
	d->auth_failures -= s->auth_failures;
	d->u.offloaded -= s->u.offloaded;
	d->u.fallbacks -= s->u.fallbacks;
	d->u.inprocess -= s->u.inprocess;
}

/* c's program's record: its own, a new one, or "(other)". */
static struct prog_rec *rec_of(const struct client *c, int make)
{
	struct prog_rec *r = rec_find(c->name, c->uid);
	if (!r && make)
		r = rec_new(c->name, c->uid, client_is_admin(c));
	return r ? r : &other;
}

void programs_retire(struct client *c)
{
	if (!c->hello_done)
		return; /* no name: not a program yet */
	struct prog_rec *r = rec_of(c, 1);
	client_counts(c, &c->retired);
	counts_add(&r->k, &c->retired);
	r->conns = sat_add(r->conns, 1);
	r->last_ms = stats_now_ms();
	r->used = 1;
}

void programs_settle(struct client *c)
{
	if (!c->hello_done)
		return;
	struct prog_counts k;
	client_counts(c, &k);
	counts_sub(&k, &c->retired);
	struct prog_rec *r = rec_of(c, 0); /* evicted since: "(other)" */
	counts_add(&r->k, &k);
	if (r == &other && (k.ops || k.errors))
		other.used = 1;
}

void programs_reset(void)
{
	memset(recs, 0, sizeof(recs));
	memset(&other.k, 0, sizeof(other.k));
	other.conns = other.last_ms = 0;
	other.used = 0;
}

/* One row of the reply being built. */
struct prog_row {
	Cryptod__ProgramStats m;
	Cryptod__Usage u;
	struct prog_counts k;
	uint64_t conns_total;
	const char *name;
	uid_t uid;
	int other;
};

static struct prog_row *row_find(struct prog_row *rows, unsigned n,
				 const char *name, uid_t uid)
{
	for (unsigned i = 0; i < n; i++)
		if (!rows[i].other && rows[i].uid == uid &&
		    !strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

static int row_cmp(const void *a, const void *b)
{
	const struct prog_row *x = a, *y = b;
	if (x->other != y->other)
		return x->other - y->other; /* "(other)" last */
	int d = strcmp(x->name, y->name);
	if (d)
		return d;
	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static void row_from_rec(struct prog_row *w, const struct prog_rec *r,
			 uint64_t now)
{
	w->name = r->name;
	w->uid = r->uid;
	w->k = r->k;
	w->conns_total = r->conns;
	w->m.idle_ms = now - r->last_ms;
}

static void row_fill(struct prog_row *w)
{
	cryptod__usage__init(&w->u);
	w->u.offloaded = w->k.u.offloaded;
	w->u.fallbacks = w->k.u.fallbacks;
	w->u.inprocess = w->k.u.inprocess;
	Cryptod__ProgramStats *m = &w->m;
	m->name = (char *)w->name;
	m->uid = w->uid;
	m->connections_total = w->conns_total;
	m->ops = w->k.ops;
	m->bytes = w->k.bytes;
	m->errors = w->k.errors;
	m->auth_failures = w->k.auth_failures;
	m->usage = &w->u;
	m->other = w->other;
}

/* Send env; while it does not fit one packet, list half as many. */
static int programs_send(struct client *c, Cryptod__Envelope *env,
			 size_t *n_items)
{
	int err;
	while ((err = wire_send(c->fd, env, NULL, 0)) == -EMSGSIZE &&
	       *n_items > 0)
		*n_items /= 2;
	return err;
}

int programs_reply(struct client *viewer, uint32_t seq)
{
	unsigned cap = MAX_PROGRAMS + 1 + client_count();
	struct prog_row *rows = calloc(cap, sizeof(*rows));
	Cryptod__ProgramStats **mp = calloc(cap, sizeof(*mp));
	int err = -ENOMEM;
	if (!rows || !mp)
		goto out;

	/* History is the daemon's: an administrator's only, as the other
	 * daemon-wide counters (docs/observability.md). */
	int all = client_is_admin(viewer);
	uint64_t now = stats_now_ms();
	unsigned n = 0;
	for (unsigned i = 0; all && i < MAX_PROGRAMS; i++) {
		if (!recs[i].used)
			continue;
		cryptod__program_stats__init(&rows[n].m);
		row_from_rec(&rows[n++], &recs[i], now);
	}
	if (all && other.used) {
		cryptod__program_stats__init(&rows[n].m);
		row_from_rec(&rows[n], &other, now);
		rows[n++].other = 1;
	}
	for (struct client *k = client_first(); k; k = k->next) {
		if (!k->hello_done || !client_may_see(viewer, k))
			continue;
		struct prog_row *w = row_find(rows, n, k->name, k->uid);
		if (!w && n < cap) {
			w = &rows[n++];
			cryptod__program_stats__init(&w->m);
			w->name = k->name;
			w->uid = k->uid;
		}
		if (!w)
			continue;
		struct prog_counts kc;
		client_counts(k, &kc);
		counts_add(&w->k, &kc);
		w->conns_total = sat_add(w->conns_total, 1);
		w->m.connections++;
		w->m.queues += k->n_queues;
		w->m.idle_ms = 0;
	}
	qsort(rows, n, sizeof(*rows), row_cmp);
	for (unsigned i = 0; i < n; i++) {
		row_fill(&rows[i]);
		mp[i] = &rows[i].m;
	}

	Cryptod__ProgramsReply r = CRYPTOD__PROGRAMS_REPLY__INIT;
	r.programs = mp;
	r.n_programs = n;
	r.total = n;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_PROGRAMS_REPLY;
	env.programs_reply = &r;
	err = programs_send(viewer, &env, &r.n_programs);
out:
	free(rows);
	free(mp);
	return err;
}
