/* SPDX-License-Identifier: MIT */
/*
 * ClientsReply, SessionsReply and ProgramsReply: who is connected, which
 * sessions they hold (algorithm, key size, engine, counters; never a key
 * byte), and what each program did (programs.h's records and the live
 * connections). Control thread only.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cryptod/clock.h>

#include "bounds.h"
#include "client.h"
#include "listing.h"
#include "programs.h"
#include "queue.h"
#include "session.h"
#include "wire.h"

static uint64_t ld(_Atomic uint64_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

/* Send env; while it does not fit one packet, list half as many. */
static int listing_send(struct client *c, Cryptod__Envelope *env,
			size_t *n_items)
{
	int err;
	while ((err = wire_send(c->fd, env, NULL, 0)) == -EMSGSIZE &&
	       *n_items > 0)
		*n_items /= 2;
	return err;
}

int clients_reply(struct client *c, uint32_t seq)
{
	unsigned n = client_count();
	Cryptod__ClientInfo *ci = calloc(n ? n : 1, sizeof(*ci));
	Cryptod__ClientInfo **cip = calloc(n ? n : 1, sizeof(*cip));
	Cryptod__Usage *us = calloc(n ? n : 1, sizeof(*us));
	int err = -ENOMEM;
	if (!ci || !cip || !us)
		goto out;

	uint64_t now = crd_now_ms();
	unsigned j = 0;
	for (struct client *k = client_first(); k && j < n; k = k->next) {
		if (!client_may_see(c, k))
			continue;
		Cryptod__ClientInfo *m = &ci[j];
		cryptod__client_info__init(m);
		m->client_id = k->id;
		m->pid = k->pid;
		m->uid = k->uid;
		m->gid = k->gid;
		m->name = k->name;
		m->connected_ms = now - k->connected_ms;
		m->queues = k->n_queues;
		m->sessions = k->n_sessions;
		m->arena_bytes = k->arena_bytes;
		m->streams = atomic_load_explicit(&k->streams_open,
						  memory_order_relaxed);
		cryptod__usage__init(&us[j]);
		us[j].offloaded = k->usage.offloaded;
		us[j].fallbacks = k->usage.fallbacks;
		us[j].inprocess = k->usage.inprocess;
		m->usage = &us[j];
		m->usage_reported = k->usage_reported != 0;
		for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++) {
			struct queue *q = k->queues[i];
			if (!q)
				continue;
			m->ops += ld(&q->st.ops);
			m->bytes += ld(&q->st.bytes);
			m->in_flight += queue_in_flight(q);
		}
		cip[j++] = m;
	}

	Cryptod__ClientsReply r = CRYPTOD__CLIENTS_REPLY__INIT;
	r.clients = cip;
	r.n_clients = j;
	r.total = j;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_CLIENTS_REPLY;
	env.clients_reply = &r;
	err = listing_send(c, &env, &r.n_clients);
out:
	free(ci);
	free(cip);
	free(us);
	return err;
}

int sessions_reply(struct client *c, uint32_t seq)
{
	unsigned n = client_sessions_total();
	Cryptod__SessionInfo *si = calloc(n ? n : 1, sizeof(*si));
	Cryptod__SessionInfo **sip = calloc(n ? n : 1, sizeof(*sip));
	Cryptod__Counters *cnt = calloc(n ? n : 1, sizeof(*cnt));
	int err = -ENOMEM;
	if (!si || !sip || !cnt)
		goto out;

	unsigned j = 0;
	for (struct client *k = client_first(); k; k = k->next) {
		if (!client_may_see(c, k))
			continue;
		for (unsigned i = 0; i < MAX_SESSIONS_PER_CLIENT && j < n;
		     i++) {
			struct session *s = k->sessions.s[i];
			if (!s)
				continue;
			Cryptod__Counters *ct = &cnt[j];
			cryptod__counters__init(ct);
			ct->ops = ld(&s->ops);
			ct->bytes = ld(&s->bytes);
			ct->errors = ld(&s->errors);
			ct->auth_failures = ld(&s->auth_failures);
			Cryptod__SessionInfo *m = &si[j];
			cryptod__session_info__init(m);
			m->client_id = k->id;
			m->session_id = s->id;
			m->pid = k->pid;
			m->uid = k->uid;
			m->alg = (Cryptod__Algorithm)s->alg;
			m->key_bits = (uint32_t)s->key_len * 8;
			m->engine = (char *)s->eng->name;
			m->tag_len = s->tag_len;
			m->counters = ct;
			sip[j++] = m;
		}
	}

	Cryptod__SessionsReply r = CRYPTOD__SESSIONS_REPLY__INIT;
	r.sessions = sip;
	r.n_sessions = j;
	r.total = j;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_SESSIONS_REPLY;
	env.sessions_reply = &r;
	err = listing_send(c, &env, &r.n_sessions);
out:
	free(si);
	free(sip);
	free(cnt);
	return err;
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
	uint64_t now = crd_now_ms();
	unsigned n = 0;
	for (unsigned i = 0; all && i <= MAX_PROGRAMS; i++) {
		const struct prog_rec *rec = programs_rec(i);
		if (!rec)
			continue;
		cryptod__program_stats__init(&rows[n].m);
		row_from_rec(&rows[n], rec, now);
		rows[n++].other = i == MAX_PROGRAMS; /* "(other)" */
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
		prog_counts_add(&w->k, &kc);
		w->conns_total = prog_sat_add(w->conns_total, 1);
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
	err = listing_send(viewer, &env, &r.n_programs);
out:
	free(rows);
	free(mp);
	return err;
}
