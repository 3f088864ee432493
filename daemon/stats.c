/* SPDX-License-Identifier: MIT */
/* The StatsReply: per engine (summed over workers) and per client queue. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "client.h"
#include "ctl.h"
#include "engine.h"
#include "queue.h"
#include "worker.h"
#include "wire.h"

static uint64_t stats_start_ms;

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void stats_init(void)
{
	stats_start_ms = mono_ms();
}

static uint64_t ld(_Atomic uint64_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

int stats_reply(struct client *c, uint32_t seq)
{
	unsigned ne = engine_count(), nq = 0;
	for (struct client *k = client_first(); k; k = k->next)
		nq += k->n_queues;

	/* Control-plane allocation, freed below; bounded by MAX_QUEUES. */
	Cryptod__EngineStats *es = calloc(ne, sizeof(*es));
	Cryptod__EngineStats **esp = calloc(ne, sizeof(*esp));
	Cryptod__Counters *cnt = calloc(ne + nq, sizeof(*cnt));
	Cryptod__QueueStats *qs = calloc(nq ? nq : 1, sizeof(*qs));
	Cryptod__QueueStats **qsp = calloc(nq ? nq : 1, sizeof(*qsp));
	uint64_t(*hist)[QUEUE_HIST] = calloc(nq ? nq : 1, sizeof(*hist));
	int err = -ENOMEM;
	if (!es || !esp || !cnt || !qs || !qsp || !hist)
		goto out;

	for (unsigned i = 0; i < ne; i++) {
		struct counters k;
		worker_engine_counters(i, &k);
		cryptod__counters__init(&cnt[i]);
		cnt[i].ops = k.ops;
		cnt[i].bytes = k.bytes;
		cnt[i].errors = k.errors;
		cnt[i].auth_failures = k.auth_failures;
		cryptod__engine_stats__init(&es[i]);
		es[i].name = (char *)engine_get(i)->name;
		es[i].counters = &cnt[i];
		esp[i] = &es[i];
	}

	unsigned j = 0;
	for (struct client *k = client_first(); k; k = k->next) {
		for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++) {
			struct queue *q = k->queues[i];
			if (!q)
				continue;
			Cryptod__Counters *ct = &cnt[ne + j];
			cryptod__counters__init(ct);
			ct->ops = ld(&q->st.ops);
			ct->bytes = ld(&q->st.bytes);
			ct->errors = ld(&q->st.errors);
			ct->auth_failures = ld(&q->st.auth_failures);
			ct->empty_polls = ld(&q->st.empty_polls);
			ct->wakeups = ld(&q->st.wakeups);
			/* Reported by the client itself: informational. */
			ct->retries = __atomic_load_n(&q->hdr->client.kretries,
						      __ATOMIC_RELAXED);
			cryptod__queue_stats__init(&qs[j]);
			qs[j].client_id = k->id;
			qs[j].queue_id = q->id;
			qs[j].pid = k->pid;
			qs[j].uid = k->uid;
			qs[j].client_name = k->name;
			qs[j].in_flight = queue_in_flight(q);
			qs[j].sessions = k->n_sessions;
			qs[j].counters = ct;
			for (unsigned b = 0; b < QUEUE_HIST; b++)
				hist[j][b] = ld(&q->st.batch_hist[b]);
			qs[j].batch_hist = hist[j];
			qs[j].n_batch_hist = QUEUE_HIST;
			qsp[j] = &qs[j];
			j++;
		}
	}

	Cryptod__StatsReply r = CRYPTOD__STATS_REPLY__INIT;
	r.uptime_ms = mono_ms() - stats_start_ms;
	r.workers = workers_count();
	r.poll_mode = (char *)workers_poll_mode();
	r.clients = client_count();
	r.sessions = client_sessions_total();
	r.n_engines = ne;
	r.engines = esp;
	r.n_queues = j;
	r.queues = qsp;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_STATS_REPLY;
	env.stats_reply = &r;
	/* A reply must fit one packet: with very many queues, send the
	 * first ones rather than nothing. */
	while ((err = wire_send(c->fd, &env, NULL, 0)) == -EMSGSIZE &&
	       r.n_queues > 0)
		r.n_queues /= 2;
out:
	free(es);
	free(esp);
	free(cnt);
	free(qs);
	free(qsp);
	free(hist);
	return err;
}
