/* SPDX-License-Identifier: MIT */
/*
 * ClientsReply and SessionsReply: who is connected and which sessions
 * they hold (algorithm, key size, engine, counters; never a key byte).
 * Control thread only.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "bounds.h"
#include "client.h"
#include "listing.h"
#include "queue.h"
#include "session.h"
#include "stats.h"
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

	uint64_t now = stats_now_ms();
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
