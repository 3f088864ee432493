/* SPDX-License-Identifier: MIT */
/*
 * The StatsReply: per engine (summed over workers), per worker and per
 * client queue, with service-time percentiles for workers and queues.
 * An administrator sees the whole daemon; anyone else its own connection
 * only (client_may_see), in every section: engine counters from its own
 * sessions, no worker section, itself as the only client.
 * Control thread only; reads the workers' counters with relaxed loads
 * (a snapshot may be a pass behind: fine for statistics).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cryptod/clock.h>

#include "client.h"
#include "engine.h"
#include "lathist.h"
#include "queue.h"
#include "session.h"
#include "stats.h"
#include "worker.h"
#include "wire.h"

static uint64_t stats_start_ms;

void stats_init(void)
{
	stats_start_ms = crd_now_ms();
}

static uint64_t ld(_Atomic uint64_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

/* Fill m from a histogram of LAT_BUCKETS buckets; m->hist points into h
 * (trailing zeros cut), which must outlive the message. */
void stats_latency(Cryptod__Latency *m, uint64_t *h, uint64_t sum_ns)
{
	cryptod__latency__init(m);
	unsigned used = 0;
	uint64_t count = 0;
	for (unsigned b = 0; b < LAT_BUCKETS; b++) {
		count += h[b];
		if (h[b])
			used = b + 1;
	}
	m->count = count;
	m->sum_ns = sum_ns;
	m->p50_ns = lat_quantile(h, LAT_BUCKETS, 0.50);
	m->p90_ns = lat_quantile(h, LAT_BUCKETS, 0.90);
	m->p99_ns = lat_quantile(h, LAT_BUCKETS, 0.99);
	m->p999_ns = lat_quantile(h, LAT_BUCKETS, 0.999);
	m->hist = h;
	m->n_hist = used;
}

/* Everything one StatsReply points to; control-plane allocations,
 * bounded by MAX_QUEUES and MAX_WORKERS. */
struct stats_buf {
	Cryptod__EngineStats *es, **esp;
	Cryptod__WorkerStats *ws, **wsp;
	Cryptod__QueueStats *qs, **qsp;
	Cryptod__Counters *cnt;
	Cryptod__Latency *lat;
	uint64_t (*lhist)[LAT_BUCKETS];
	uint64_t (*bhist)[QUEUE_HIST];
	struct worker_snapshot *snap;
	Cryptod__KeyPairOps pk[CRD_ALG_MAX_], *pkp[CRD_ALG_MAX_];
};

static void stats_buf_free(struct stats_buf *b)
{
	free(b->es);
	free(b->esp);
	free(b->ws);
	free(b->wsp);
	free(b->qs);
	free(b->qsp);
	free(b->cnt);
	free(b->lat);
	free(b->lhist);
	free(b->bhist);
	free(b->snap);
}

static int stats_buf_alloc(struct stats_buf *b, unsigned ne, unsigned nw,
			   unsigned nq)
{
	unsigned n1q = nq ? nq : 1, n1w = nw ? nw : 1;
	b->es = calloc(ne, sizeof(*b->es));
	b->esp = calloc(ne, sizeof(*b->esp));
	b->ws = calloc(n1w, sizeof(*b->ws));
	b->wsp = calloc(n1w, sizeof(*b->wsp));
	b->qs = calloc(n1q, sizeof(*b->qs));
	b->qsp = calloc(n1q, sizeof(*b->qsp));
	b->cnt = calloc(ne + nw + nq + 1, sizeof(*b->cnt));
	b->lat = calloc(nw + nq + 1, sizeof(*b->lat));
	b->lhist = calloc(nw + nq + 1, sizeof(*b->lhist));
	b->bhist = calloc(n1q, sizeof(*b->bhist));
	b->snap = calloc(1, sizeof(*b->snap));
	if (!b->es || !b->esp || !b->ws || !b->wsp || !b->qs || !b->qsp ||
	    !b->cnt || !b->lat || !b->lhist || !b->bhist || !b->snap)
		return -ENOMEM;
	return 0;
}

/* A viewer who is not an administrator sees its own connection only,
 * everywhere: its "engine" counters are those of its own sessions,
 * summed per engine. Daemon-wide counters would move with other users'
 * traffic, and tell an idle observer their op counts, lengths and
 * authentication failures. */
static void stats_own_engines(const struct client *viewer,
			      struct counters own[ENGINE_MAX])
{
	memset(own, 0, ENGINE_MAX * sizeof(own[0]));
	for (unsigned i = 0; i < MAX_SESSIONS_PER_CLIENT; i++) {
		struct session *s = viewer->sessions.s[i];
		if (!s || s->eng_idx >= ENGINE_MAX)
			continue;
		struct counters *k = &own[s->eng_idx];
		k->ops += ld(&s->ops);
		k->bytes += ld(&s->bytes);
		k->errors += ld(&s->errors);
		k->auth_failures += ld(&s->auth_failures);
	}
}

/* all: the viewer is an administrator (daemon-wide counters). */
static void stats_engines(struct stats_buf *b, const struct client *viewer,
			  int all, unsigned ne)
{
	struct counters own[ENGINE_MAX];
	if (!all)
		stats_own_engines(viewer, own);
	for (unsigned i = 0; i < ne; i++) {
		struct counters k;
		if (all)
			worker_engine_counters(i, &k);
		else
			k = own[i];
		Cryptod__Counters *ct = &b->cnt[i];
		cryptod__counters__init(ct);
		ct->ops = k.ops;
		ct->bytes = k.bytes;
		ct->errors = k.errors;
		ct->auth_failures = k.auth_failures;
		cryptod__engine_stats__init(&b->es[i]);
		b->es[i].name = (char *)engine_get(i)->name;
		b->es[i].counters = ct;
		b->esp[i] = &b->es[i];
	}
}

/* Counters and latency slots: [0, ne) engines, [ne, ne + nw) workers,
 * then queues. */
static void stats_workers(struct stats_buf *b, unsigned ne, unsigned nw)
{
	for (unsigned i = 0; i < nw; i++) {
		struct worker_snapshot *s = b->snap;
		if (worker_stats_get(i, s))
			break;
		Cryptod__Counters *ct = &b->cnt[ne + i];
		cryptod__counters__init(ct);
		ct->ops = s->c.ops;
		ct->bytes = s->c.bytes;
		ct->errors = s->c.errors;
		ct->auth_failures = s->c.auth_failures;
		ct->empty_polls = s->c.empty_polls;
		ct->wakeups = s->c.wakeups;
		memcpy(b->lhist[i], s->lat_hist, sizeof(b->lhist[i]));
		stats_latency(&b->lat[i], b->lhist[i], s->lat_sum_ns);
		Cryptod__WorkerStats *w = &b->ws[i];
		cryptod__worker_stats__init(w);
		w->index = i;
		w->counters = ct;
		w->latency = &b->lat[i];
		w->passes = s->passes;
		w->runs = s->runs;
		w->asleep = s->asleep != 0;
		b->wsp[i] = w;
	}
}

static unsigned stats_queues(struct stats_buf *b, struct client *viewer,
			     unsigned ne, unsigned nw)
{
	unsigned j = 0;
	uint64_t now = crd_now_ms();
	for (struct client *k = client_first(); k; k = k->next) {
		if (!client_may_see(viewer, k))
			continue;
		for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++) {
			struct queue *q = k->queues[i];
			if (!q)
				continue;
			Cryptod__Counters *ct = &b->cnt[ne + nw + j];
			cryptod__counters__init(ct);
			ct->ops = ld(&q->st.ops);
			ct->bytes = ld(&q->st.bytes);
			ct->errors = ld(&q->st.errors);
			ct->auth_failures = ld(&q->st.auth_failures);
			ct->empty_polls = ld(&q->st.empty_polls);
			ct->wakeups = ld(&q->st.wakeups);
			/* Reported by the client itself: informational. */
			ct->retries =
				crd_load_relaxed_n(&q->hdr->client.kretries);
			uint64_t *lh = b->lhist[nw + j];
			for (unsigned h = 0; h < LAT_BUCKETS; h++)
				lh[h] = ld(&q->st.lat_hist[h]);
			stats_latency(&b->lat[nw + j], lh,
				      ld(&q->st.lat_sum_ns));
			Cryptod__QueueStats *qs = &b->qs[j];
			cryptod__queue_stats__init(qs);
			qs->client_id = k->id;
			qs->queue_id = q->id;
			qs->pid = k->pid;
			qs->uid = k->uid;
			qs->client_name = k->name;
			qs->in_flight = queue_in_flight(q);
			qs->sessions = k->n_sessions;
			qs->counters = ct;
			qs->latency = &b->lat[nw + j];
			qs->connected_ms = now - k->connected_ms;
			for (unsigned h = 0; h < QUEUE_HIST; h++)
				b->bhist[j][h] = ld(&q->st.batch_hist[h]);
			qs->batch_hist = b->bhist[j];
			qs->n_batch_hist = QUEUE_HIST;
			b->qsp[j] = qs;
			j++;
		}
	}
	return j;
}

/* The key pair rows that did any op, into b->pkp; how many. */
static unsigned stats_key_pairs(struct stats_buf *b)
{
	static uint64_t n[CRD_ALG_MAX_][PK_OPS]; /* control thread only */
	worker_pk_counters(n);
	unsigned j = 0;
	for (unsigned a = 0; a < CRD_ALG_MAX_; a++) {
		uint64_t any = 0;
		for (unsigned o = 0; o < PK_OPS; o++)
			any |= n[a][o];
		if (!any)
			continue;
		Cryptod__KeyPairOps *k = &b->pk[j];
		cryptod__key_pair_ops__init(k);
		k->alg = (Cryptod__Algorithm)a;
		k->sign = n[a][CRD_OP_SIGN];
		k->verify = n[a][CRD_OP_VERIFY];
		k->derive = n[a][CRD_OP_DERIVE];
		k->encrypt = n[a][CRD_OP_ENCRYPT];
		k->decrypt = n[a][CRD_OP_DECRYPT];
		b->pkp[j++] = k;
	}
	return j;
}

int stats_reply(struct client *c, uint32_t seq)
{
	unsigned ne = engine_count(), nw = workers_count(), nq = 0;
	for (struct client *k = client_first(); k; k = k->next)
		nq += k->n_queues;

	struct stats_buf b = { 0 };
	int err = stats_buf_alloc(&b, ne, nw, nq);
	if (err)
		goto out;
	int all = client_is_admin(c);
	stats_engines(&b, c, all, ne);
	if (all) /* workers serve everybody: admins only */
		stats_workers(&b, ne, nw);
	unsigned j = stats_queues(&b, c, ne, nw);

	Cryptod__StatsReply r = CRYPTOD__STATS_REPLY__INIT;
	r.uptime_ms = crd_now_ms() - stats_start_ms;
	r.workers = nw;
	r.poll_mode = (char *)workers_poll_mode();
	r.clients = all ? client_count() : 1;
	r.sessions = all ? client_sessions_total() : c->n_sessions;
	r.n_engines = ne;
	r.engines = b.esp;
	r.n_worker_stats = all ? nw : 0;
	r.worker_stats = b.wsp;
	r.n_queues = j;
	r.queues = b.qsp;
	r.total_queues = j;
	if (all) { /* like the workers': everybody's ops */
		r.n_key_pair_ops = stats_key_pairs(&b);
		r.key_pair_ops = b.pkp;
	}
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_STATS_REPLY;
	env.stats_reply = &r;
	/* A reply must fit one packet: with very many queues, send the
	 * first ones rather than nothing (total_queues says so). */
	while ((err = wire_send(c->fd, &env, NULL, 0)) == -EMSGSIZE &&
	       r.n_queues > 0)
		r.n_queues /= 2;
out:
	stats_buf_free(&b);
	return err;
}
