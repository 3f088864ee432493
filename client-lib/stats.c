/* SPDX-License-Identifier: MIT */
/* Observability calls: stats, the client, session and program listings,
 * and a client's report of its own usage. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lathist.h"

_Static_assert(CC_LAT_BUCKETS == LAT_BUCKETS, "one histogram geometry");

uint64_t cc_latency_quantile(const uint64_t *hist, double q)
{
	return lat_quantile(hist, CC_LAT_BUCKETS, q);
}

static void counters_copy(struct cc_counters *d, const Cryptod__Counters *s)
{
	if (!s)
		return;
	d->ops = s->ops;
	d->bytes = s->bytes;
	d->errors = s->errors;
	d->auth_failures = s->auth_failures;
	d->retries = s->retries;
	d->empty_polls = s->empty_polls;
	d->wakeups = s->wakeups;
}

static void latency_copy(struct cc_latency *d, const Cryptod__Latency *s)
{
	if (!s)
		return;
	d->count = s->count;
	d->sum_ns = s->sum_ns;
	d->p50_ns = s->p50_ns;
	d->p90_ns = s->p90_ns;
	d->p99_ns = s->p99_ns;
	d->p999_ns = s->p999_ns;
	for (size_t b = 0; b < s->n_hist && b < CC_LAT_BUCKETS; b++)
		d->hist[b] = s->hist[b];
}

/* One request with an empty body, its reply checked for the expected
 * kind. 0 or -errno; *rep freed by the caller with wire_free(). */
static int stats_call(struct cc_conn *c, Cryptod__Envelope *req,
		      Cryptod__Envelope__BodyCase want, Cryptod__Envelope **rep)
{
	pthread_mutex_lock(&c->lock);
	int err = conn_call(c, req, rep, NULL, NULL);
	pthread_mutex_unlock(&c->lock);
	if (err)
		return err;
	if ((*rep)->body_case != want) {
		wire_free(*rep);
		return -EPROTO;
	}
	return 0;
}

static void queue_copy(struct cc_queue_stats *d, const Cryptod__QueueStats *q)
{
	d->client_id = q->client_id;
	d->queue_id = q->queue_id;
	d->pid = q->pid;
	d->uid = q->uid;
	d->in_flight = q->in_flight;
	d->sessions = q->sessions;
	d->connected_ms = q->connected_ms;
	snprintf(d->client_name, sizeof(d->client_name), "%s",
		 q->client_name ? q->client_name : "");
	counters_copy(&d->c, q->counters);
	latency_copy(&d->lat, q->latency);
	for (size_t b = 0; b < q->n_batch_hist && b < 8; b++)
		d->batch_hist[b] = q->batch_hist[b];
}

int cc_stats_get(struct cc_conn *c, struct cc_stats *st)
{
	memset(st, 0, sizeof(*st));
	Cryptod__StatsRequest m = CRYPTOD__STATS_REQUEST__INIT;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_STATS_REQUEST;
	req.stats_request = &m;
	Cryptod__Envelope *rep;
	int err =
		stats_call(c, &req, CRYPTOD__ENVELOPE__BODY_STATS_REPLY, &rep);
	if (err)
		return err;
	const Cryptod__StatsReply *r = rep->stats_reply;
	st->uptime_ms = r->uptime_ms;
	st->workers = r->workers;
	st->clients = r->clients;
	st->sessions = r->sessions;
	snprintf(st->poll_mode, sizeof(st->poll_mode), "%s",
		 r->poll_mode ? r->poll_mode : "");
	st->engines =
		calloc(r->n_engines ? r->n_engines : 1, sizeof(*st->engines));
	st->queues = calloc(r->n_queues ? r->n_queues : 1, sizeof(*st->queues));
	st->worker_stats = calloc(r->n_worker_stats ? r->n_worker_stats : 1,
				  sizeof(*st->worker_stats));
	if (!st->engines || !st->queues || !st->worker_stats) {
		wire_free(rep);
		cc_stats_free(st);
		return -ENOMEM;
	}
	st->n_engines = r->n_engines;
	for (size_t i = 0; i < r->n_engines; i++) {
		snprintf(st->engines[i].name, sizeof(st->engines[i].name), "%s",
			 r->engines[i]->name ? r->engines[i]->name : "");
		counters_copy(&st->engines[i].c, r->engines[i]->counters);
	}
	st->n_queues = r->n_queues;
	for (size_t i = 0; i < r->n_queues; i++)
		queue_copy(&st->queues[i], r->queues[i]);
	/* An older daemon sends no total. */
	st->total_queues =
		r->total_queues > r->n_queues ? r->total_queues : r->n_queues;
	st->n_workers_stats = r->n_worker_stats;
	for (size_t i = 0; i < r->n_worker_stats; i++) {
		const Cryptod__WorkerStats *w = r->worker_stats[i];
		struct cc_worker_stats *d = &st->worker_stats[i];
		d->index = w->index;
		d->asleep = w->asleep;
		d->passes = w->passes;
		d->runs = w->runs;
		counters_copy(&d->c, w->counters);
		latency_copy(&d->lat, w->latency);
	}
	pthread_mutex_lock(&c->lock);
	c->n_last_pk = 0;
	for (size_t i = 0; i < r->n_key_pair_ops && i < CC_KEY_PAIR_ALGS; i++) {
		const Cryptod__KeyPairOps *k = r->key_pair_ops[i];
		c->last_pk[c->n_last_pk++] = (struct cc_key_pair_ops){
			.alg = (enum cc_alg)k->alg,
			.sign = k->sign,
			.verify = k->verify,
			.derive = k->derive,
			.encrypt = k->encrypt,
			.decrypt = k->decrypt,
		};
	}
	pthread_mutex_unlock(&c->lock);
	wire_free(rep);
	return 0;
}

int cc_stats_key_pairs(struct cc_conn *c, struct cc_key_pair_ops *out,
		       unsigned cap)
{
	pthread_mutex_lock(&c->lock);
	unsigned n = c->n_last_pk;
	if (out && cap)
		memcpy(out, c->last_pk, (n < cap ? n : cap) * sizeof(*out));
	pthread_mutex_unlock(&c->lock);
	return (int)n;
}

void cc_stats_free(struct cc_stats *st)
{
	free(st->engines);
	free(st->queues);
	free(st->worker_stats);
	st->engines = NULL;
	st->queues = NULL;
	st->worker_stats = NULL;
	st->n_engines = st->n_queues = st->n_workers_stats = 0;
}

int cc_clients_get(struct cc_conn *c, struct cc_client_info **out, unsigned *n)
{
	*out = NULL;
	*n = 0;
	Cryptod__ClientsRequest m = CRYPTOD__CLIENTS_REQUEST__INIT;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_CLIENTS_REQUEST;
	req.clients_request = &m;
	Cryptod__Envelope *rep;
	int err = stats_call(c, &req, CRYPTOD__ENVELOPE__BODY_CLIENTS_REPLY,
			     &rep);
	if (err)
		return err;
	const Cryptod__ClientsReply *r = rep->clients_reply;
	struct cc_client_info *v =
		calloc(r->n_clients ? r->n_clients : 1, sizeof(*v));
	if (!v) {
		wire_free(rep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n_clients; i++) {
		const Cryptod__ClientInfo *s = r->clients[i];
		struct cc_client_info *d = &v[i];
		d->client_id = s->client_id;
		d->pid = s->pid;
		d->uid = s->uid;
		d->gid = s->gid;
		d->queues = s->queues;
		d->sessions = s->sessions;
		d->in_flight = s->in_flight;
		snprintf(d->name, sizeof(d->name), "%s",
			 s->name ? s->name : "");
		d->connected_ms = s->connected_ms;
		d->ops = s->ops;
		d->bytes = s->bytes;
		d->arena_bytes = s->arena_bytes;
		d->streams = s->streams;
		d->usage_reported = s->usage_reported;
		if (s->usage) {
			d->usage.offloaded = s->usage->offloaded;
			d->usage.fallbacks = s->usage->fallbacks;
			d->usage.inprocess = s->usage->inprocess;
		}
	}
	*n = (unsigned)r->n_clients;
	*out = v;
	wire_free(rep);
	return 0;
}

int cc_sessions_get(struct cc_conn *c, struct cc_session_info **out,
		    unsigned *n)
{
	*out = NULL;
	*n = 0;
	Cryptod__SessionsRequest m = CRYPTOD__SESSIONS_REQUEST__INIT;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_SESSIONS_REQUEST;
	req.sessions_request = &m;
	Cryptod__Envelope *rep;
	int err = stats_call(c, &req, CRYPTOD__ENVELOPE__BODY_SESSIONS_REPLY,
			     &rep);
	if (err)
		return err;
	const Cryptod__SessionsReply *r = rep->sessions_reply;
	struct cc_session_info *v =
		calloc(r->n_sessions ? r->n_sessions : 1, sizeof(*v));
	if (!v) {
		wire_free(rep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n_sessions; i++) {
		const Cryptod__SessionInfo *s = r->sessions[i];
		struct cc_session_info *d = &v[i];
		d->client_id = s->client_id;
		d->session_id = s->session_id;
		d->pid = s->pid;
		d->uid = s->uid;
		d->key_bits = s->key_bits;
		d->tag_len = s->tag_len;
		d->alg = (enum cc_alg)s->alg;
		snprintf(d->engine, sizeof(d->engine), "%s",
			 s->engine ? s->engine : "");
		counters_copy(&d->c, s->counters);
	}
	*n = (unsigned)r->n_sessions;
	*out = v;
	wire_free(rep);
	return 0;
}

int cc_programs_get(struct cc_conn *c, struct cc_program_stats **out,
		    unsigned *n)
{
	*out = NULL;
	*n = 0;
	Cryptod__ProgramsRequest m = CRYPTOD__PROGRAMS_REQUEST__INIT;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_PROGRAMS_REQUEST;
	req.programs_request = &m;
	Cryptod__Envelope *rep;
	int err = stats_call(c, &req, CRYPTOD__ENVELOPE__BODY_PROGRAMS_REPLY,
			     &rep);
	if (err)
		return err;
	const Cryptod__ProgramsReply *r = rep->programs_reply;
	struct cc_program_stats *v =
		calloc(r->n_programs ? r->n_programs : 1, sizeof(*v));
	if (!v) {
		wire_free(rep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n_programs; i++) {
		const Cryptod__ProgramStats *s = r->programs[i];
		struct cc_program_stats *d = &v[i];
		snprintf(d->name, sizeof(d->name), "%s",
			 s->name ? s->name : "");
		d->uid = s->uid;
		d->connections = s->connections;
		d->queues = s->queues;
		d->connections_total = s->connections_total;
		d->ops = s->ops;
		d->bytes = s->bytes;
		d->errors = s->errors;
		d->auth_failures = s->auth_failures;
		if (s->usage) {
			d->usage.offloaded = s->usage->offloaded;
			d->usage.fallbacks = s->usage->fallbacks;
			d->usage.inprocess = s->usage->inprocess;
		}
		d->idle_ms = s->idle_ms;
		d->other = s->other;
	}
	*n = (unsigned)r->n_programs;
	*out = v;
	wire_free(rep);
	return 0;
}

int cc_report_usage(struct cc_conn *c, const struct cc_usage *u)
{
	Cryptod__Usage us = CRYPTOD__USAGE__INIT;
	us.offloaded = u->offloaded;
	us.fallbacks = u->fallbacks;
	us.inprocess = u->inprocess;
	Cryptod__UsageReport m = CRYPTOD__USAGE_REPORT__INIT;
	m.usage = &us;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_USAGE_REPORT;
	req.usage_report = &m;
	Cryptod__Envelope *rep;
	int err = stats_call(c, &req, CRYPTOD__ENVELOPE__BODY_ACK, &rep);
	if (err)
		return err;
	wire_free(rep);
	return 0;
}
