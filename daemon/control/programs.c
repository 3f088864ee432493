/* SPDX-License-Identifier: MIT */
/*
 * The per-program records (programs.h) of programs whose connections
 * closed. Below client.c, which hands it a closing connection's counts,
 * and listing.c, which reads it for the ProgramsReply. Control thread
 * only.
 */
#include "programs.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cryptod/clock.h>

#include "bounds.h"
#include "queue.h"

static struct prog_rec recs[MAX_PROGRAMS];
/* Programs the table let go, and those past a uid's share. */
static struct prog_rec other = { .name = "(other)", .uid = (uid_t)-1 };

/* Sums of counters a client chose may not wrap: they stick at the top. */
uint64_t prog_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

void prog_counts_add(struct prog_counts *d, const struct prog_counts *s)
{
	d->ops = prog_sat_add(d->ops, s->ops);
	d->bytes = prog_sat_add(d->bytes, s->bytes);
	d->errors = prog_sat_add(d->errors, s->errors);
	d->auth_failures = prog_sat_add(d->auth_failures, s->auth_failures);
	d->u.offloaded = prog_sat_add(d->u.offloaded, s->u.offloaded);
	d->u.fallbacks = prog_sat_add(d->u.fallbacks, s->u.fallbacks);
	d->u.inprocess = prog_sat_add(d->u.inprocess, s->u.inprocess);
}

static uint64_t ld(const _Atomic uint64_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

void prog_counts_queue(struct prog_counts *d, const struct queue *q)
{
	const struct prog_counts k = {
		.ops = ld(&q->st.ops),
		.bytes = ld(&q->st.bytes),
		.errors = ld(&q->st.errors),
		.auth_failures = ld(&q->st.auth_failures),
	};
	prog_counts_add(d, &k);
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
	prog_counts_add(&other.k, &r->k);
	other.conns = prog_sat_add(other.conns, r->conns);
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
void prog_counts_sub(struct prog_counts *d, const struct prog_counts *s)
{
	d->ops -= s->ops;
	d->bytes -= s->bytes;
	d->errors -= s->errors;
	d->auth_failures -= s->auth_failures;
	d->u.offloaded -= s->u.offloaded;
	d->u.fallbacks -= s->u.fallbacks;
	d->u.inprocess -= s->u.inprocess;
}

void programs_reset(void)
{
	memset(recs, 0, sizeof(recs));
	memset(&other.k, 0, sizeof(other.k));
	other.conns = other.last_ms = 0;
	other.used = 0;
}

/* The record of (name, uid): its own, a new one, or "(other)". */
static struct prog_rec *rec_of(const char *name, uid_t uid, int make, int admin)
{
	struct prog_rec *r = rec_find(name, uid);
	if (!r && make)
		r = rec_new(name, uid, admin);
	return r ? r : &other;
}

void programs_retire(const char *name, uid_t uid, int admin,
		     const struct prog_counts *k)
{
	struct prog_rec *r = rec_of(name, uid, 1, admin);
	prog_counts_add(&r->k, k);
	r->conns = prog_sat_add(r->conns, 1);
	r->last_ms = crd_now_ms();
	r->used = 1;
}

void programs_settle(const char *name, uid_t uid, const struct prog_counts *k)
{
	struct prog_rec *r = rec_of(name, uid, 0, 0); /* evicted since:
							 "(other)" */
	prog_counts_add(&r->k, k);
	if (r == &other && (k->ops || k->errors))
		other.used = 1;
}

const struct prog_rec *programs_rec(unsigned i)
{
	if (i == MAX_PROGRAMS)
		return other.used ? &other : NULL;
	return i < MAX_PROGRAMS && recs[i].used ? &recs[i] : NULL;
}
