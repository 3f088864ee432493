/* SPDX-License-Identifier: MIT */
/*
 * A flow: one connection, one session, one queue, and `slots` arena slots,
 * one per op kept in flight. Op number seq uses slot seq % slots and
 * carries seq as its user_data; completions must come back with
 * user_data 0, 1, 2, ... (the queue's order), each with status CC_OK and
 * the full length. Because they do, the slot of a completed op is free
 * for the op `slots` numbers later, and the client never tracks slots.
 *
 * Slot layout, like an ESP packet in a receive buffer:
 *
 *   [hdr: padding .. aad][payload: len, 64-aligned][tag][pad to 64]
 *
 * so that for authenc the AAD sits directly before the payload and the
 * daemon runs the op in place, in the arena, without staging.
 *
 * Encrypt flows re-encrypt their slots in place, with a fresh IV and ESP
 * sequence number per op, as a sender would. Decrypt flows replay the
 * ciphertext their verification pass produced: each op first copies its
 * slot's ciphertext back in (the packet "arrives"), so that every
 * decrypt verifies a genuine tag; after a run every slot must hold its
 * plaintext again.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poolbench.h"

static size_t align64(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

static uint8_t *slot_payload(const struct pb_flow *f, unsigned i)
{
	return f->slots + (size_t)i * f->stride + f->hdr;
}

static uint8_t *slot_aad(const struct pb_flow *f, unsigned i)
{
	return slot_payload(f, i) - f->p.alg->aad_len;
}

static uint8_t *slot_tag(const struct pb_flow *f, unsigned i)
{
	return slot_payload(f, i) + f->p.len;
}

/* Deterministic filler: xorshift64 seeded per slot. */
static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void pb_flow_close(struct pb_flow *f)
{
	/* Closes the queue (and its arena) and wipes the session. */
	if (f->conn)
		cc_disconnect(f->conn);
	f->conn = NULL;
	f->q = NULL;
	f->slots = NULL;
	free(f->pristine);
	f->pristine = NULL;
	free(f->plain);
	f->plain = NULL;
	free(f->iv);
	f->iv = NULL;
	free(f->ops);
	f->ops = NULL;
}

int pb_flow_open(struct pb_flow *f, const char *sock,
		 const struct pb_flow_params *p)
{
	const struct pb_alg *a = p->alg;
	unsigned ring = PB_RING_MIN;
	int err;

	memset(f, 0, sizeof(*f));
	f->p = *p;
	if (!p->slots || p->slots > PB_MAX_SLOTS || !p->burst ||
	    p->burst > PB_BURST || a->aad_len > PB_AAD_MAX)
		return -EINVAL;
	f->hdr = a->aad_len ? align64(a->aad_len) : 0;
	f->stride = f->hdr + align64((size_t)p->len + a->tag_len);
	while (ring < p->slots)
		ring <<= 1;
	/* Room for every op in flight, and an arena for the slots with a
	 * margin for the allocator's own rounding. */
	struct cc_queue_params qp = {
		.sq_entries = ring,
		.cq_entries = ring,
		.arena_size = (f->stride * p->slots + (1u << 20)) &
			      ~(size_t)((1u << 20) - 1),
	};

	for (unsigned i = 0; i < sizeof(f->key); i++)
		f->key[i] = (uint8_t)(0x10 + i);
	for (unsigned i = 0; i < sizeof(f->auth_key); i++)
		f->auth_key[i] = (uint8_t)(0xa0 + i);
	struct cc_session_params sp = {
		.alg = a->alg,
		.key = a->key_len ? f->key : NULL,
		.key_len = a->key_len,
		.auth_key = a->auth_key_len ? f->auth_key : NULL,
		.auth_key_len = a->auth_key_len,
		.tag_len = a->tag_len,
		.engine = a->engine,
	};

	err = cc_connect(sock, p->name, &f->conn);
	if (err) {
		bench_err("connect %s: %s\n", sock, cc_strerror(err));
		return err;
	}
	err = cc_session_create(f->conn, &sp, &f->session);
	if (err) {
		bench_err("%s session: %s (%s)\n", a->name, cc_strerror(err),
			  cc_conn_last_error(f->conn));
		goto err_close;
	}
	err = cc_queue_open(f->conn, &qp, &f->q);
	if (err) {
		bench_err("queue: %s (%s)\n", cc_strerror(err),
			  cc_conn_last_error(f->conn));
		goto err_close;
	}
	f->slots = cc_buf_alloc(f->q, f->stride * p->slots);
	f->iv = calloc(p->slots, sizeof(*f->iv));
	f->ops = calloc(p->burst, sizeof(*f->ops));
	f->plain = malloc((size_t)p->slots * p->len + 1);
	if (p->dir == CC_DECRYPT)
		f->pristine = malloc((size_t)p->slots * p->len + 1);
	if (!f->slots || !f->iv || !f->ops || !f->plain ||
	    (p->dir == CC_DECRYPT && !f->pristine)) {
		err = -ENOMEM;
		goto err_close;
	}
	memset(f->slots, 0, f->stride * p->slots);
	for (unsigned i = 0; i < p->slots; i++) {
		fill(f->plain + (size_t)i * p->len, p->len, i + 1);
		memcpy(slot_payload(f, i), f->plain + (size_t)i * p->len,
		       p->len);
		fill(f->iv[i], PB_IV_MAX, ~(uint64_t)i);
		if (a->aad_len) { /* ESP header: SPI, sequence number */
			put_be32(slot_aad(f, i), 0x1000);
			put_be32(slot_aad(f, i) + 4, i);
		}
	}
	return 0;

err_close:
	pb_flow_close(f);
	return err;
}

void pb_flow_op(struct pb_flow *f, uint64_t seq, struct cc_op *op)
{
	const struct pb_alg *a = f->p.alg;
	unsigned i = (unsigned)(seq % f->p.slots);
	uint8_t *payload = slot_payload(f, i);

	if (f->p.dir == CC_DECRYPT) {
		/* The packet arrives: its ciphertext lands in the slot. */
		memcpy(payload, f->pristine + (size_t)i * f->p.len, f->p.len);
	} else {
		/* A sender's fresh IV and ESP sequence number. */
		if (a->iv_len)
			memcpy(f->iv[i], &seq, sizeof(seq));
		if (a->aad_len)
			put_be32(slot_aad(f, i) + 4, (uint32_t)seq);
	}
	*op = (struct cc_op){
		.user_data = seq,
		.session = f->session,
		.dir = f->p.dir,
		.src = payload,
		.dst = NULL, /* in place */
		.len = f->p.len,
		.aad = a->aad_len ? slot_aad(f, i) : NULL,
		.aad_len = a->aad_len,
		.tag = a->tag_len ? slot_tag(f, i) : NULL,
		.iv = a->iv_len ? f->iv[i] : NULL,
		.iv_len = a->iv_len,
	};
}

void pb_flow_check(struct pb_flow *f, const struct cc_completion *c)
{
	uint64_t want = f->next_done++;

	if (c->user_data != want && !f->order_errors++)
		bench_err("%s: completion of op %llu arrived where op "
			  "%llu was due (out of order)\n",
			  f->p.name, (unsigned long long)c->user_data,
			  (unsigned long long)want);
	if ((c->status != CC_OK || c->len != f->p.len) && !f->status_errors++) {
		f->first_status = c->status;
		bench_err("%s: op %llu completed with status %d (%s), "
			  "len %u of %u\n",
			  f->p.name, (unsigned long long)c->user_data,
			  c->status, cc_strerror(c->status), c->len, f->p.len);
	}
}

/* Submit a burst if one fits (or the queue runs low), never op `end` or
 * later. Returns how many were taken, or -errno. */
static int flow_refill(struct pb_flow *f, uint64_t end)
{
	unsigned inflight = (unsigned)(f->next_sub - f->next_done);
	unsigned room = f->p.slots - inflight, k;
	int r;

	if (!room || (room < f->p.burst && inflight >= f->p.burst))
		return 0;
	k = room < f->p.burst ? room : f->p.burst;
	if (end - f->next_sub < k)
		k = (unsigned)(end - f->next_sub);
	if (!k)
		return 0;
	for (unsigned i = 0; i < k; i++)
		pb_flow_op(f, f->next_sub + i, &f->ops[i]);
	r = cc_enqueue_burst(f->q, f->ops, k);
	if (r < 0)
		return r;
	f->retries += k - (unsigned)r; /* the ring refused the rest */
	f->next_sub += (unsigned)r;
	return r;
}

/* Take every completion still due. 0, or -1 when the queue stalls. */
static int flow_drain(struct pb_flow *f)
{
	uint64_t deadline = pb_now_ns() + (uint64_t)PB_DRAIN_MS * 1000000;
	struct cc_completion c[PB_DEQ_MAX];

	while (f->next_done != f->next_sub) {
		int n = cc_dequeue_burst(f->q, c, PB_DEQ_MAX);

		if (n < 0) {
			bench_err("%s: dequeue: %s\n", f->p.name,
				  cc_strerror(n));
			f->stalls++;
			return -1;
		}
		for (int i = 0; i < n; i++)
			pb_flow_check(f, &c[i]);
		if (n)
			continue;
		if (pb_now_ns() > deadline) {
			bench_err("%s: %llu ops never completed "
				  "within %d ms\n",
				  f->p.name,
				  (unsigned long long)(f->next_sub -
						       f->next_done),
				  PB_DRAIN_MS);
			f->stalls++;
			return -1;
		}
		n = cc_wait(f->q, 100);
		if (n < 0) {
			bench_err("%s: wait: %s\n", f->p.name, cc_strerror(n));
			f->stalls++;
			return -1;
		}
	}
	return 0;
}

int pb_flow_verify(struct pb_flow *f)
{
	const struct pb_alg *a = f->p.alg;
	enum cc_dir dir = f->p.dir;
	uint8_t *out = malloc(f->p.len + 1);
	uint8_t tag[PB_TAG_MAX];
	uint64_t base = f->next_sub, errors = pb_flow_errors(f);
	int rc = 0;

	if (!out)
		return -1;
	if (base % f->p.slots) { /* slot i must be op base + i */
		free(out);
		return -1;
	}
	/* One encrypt per slot, whatever the flow's direction. */
	f->p.dir = CC_ENCRYPT;
	while (f->next_sub < base + f->p.slots) {
		int n = flow_refill(f, base + f->p.slots);

		if (n < 0) {
			bench_err("%s: enqueue: %s\n", f->p.name,
				  cc_strerror(n));
			rc = -1;
			break;
		}
		if (flow_drain(f)) {
			rc = -1;
			break;
		}
	}
	f->p.dir = dir;
	if (rc || pb_flow_errors(f) != errors) {
		free(out);
		return -1;
	}

	for (unsigned i = 0; i < f->p.slots && !rc; i++) {
		const uint8_t *plain = f->plain + (size_t)i * f->p.len;

		if (pb_ref_encrypt(a, f->key, f->auth_key, f->iv[i],
				   slot_aad(f, i), plain, out, f->p.len, tag)) {
			bench_err("OpenSSL failed on %s\n", a->name);
			rc = -1;
		} else if (memcmp(out, slot_payload(f, i), f->p.len) ||
			   memcmp(tag, slot_tag(f, i), a->tag_len)) {
			bench_err("%s: the daemon's %s output for op "
				  "%u differs from OpenSSL's\n",
				  f->p.name, a->name, i);
			rc = -1;
		}
		if (f->pristine)
			memcpy(f->pristine + (size_t)i * f->p.len,
			       slot_payload(f, i), f->p.len);
	}
	free(out);
	/* Decrypts start here: slots decrypted since must hold plaintext. */
	f->dec_from = f->next_sub;
	return rc;
}

/* After a decrypt run: every slot whose last op was a decrypt (all since
 * the verification pass) holds its plaintext again. */
static int flow_check_plain(struct pb_flow *f)
{
	uint64_t from = f->next_done - f->dec_from > f->p.slots
				? f->next_done - f->p.slots
				: f->dec_from;

	for (uint64_t s = from; s < f->next_done; s++) {
		unsigned i = (unsigned)(s % f->p.slots);

		if (memcmp(slot_payload(f, i), f->plain + (size_t)i * f->p.len,
			   f->p.len)) {
			bench_err("%s: op %llu decrypted to the wrong "
				  "plaintext\n",
				  f->p.name, (unsigned long long)s);
			f->status_errors++;
			return -1;
		}
	}
	return 0;
}

struct flow_run {
	struct pb_flow *f;
	_Atomic uint64_t *go; /* start time, 0 until every flow may start */
	uint64_t warm_ns, time_ns;
	const struct pb_daemon *probe; /* NULL: none */
	int rc;
};

static int flow_run(struct flow_run *r)
{
	struct pb_flow *f = r->f;
	struct cc_completion c[PB_DEQ_MAX];
	uint64_t start, t_warm, t_mid, t_end, t0 = 0, ops0 = 0;
	unsigned empty = 0;
	bool timing = false, probed = false;

	f->win_ops = 0;
	f->win_s = 0;
	f->retries = 0;
	f->empty_polls = 0;
	while (!(start = atomic_load(r->go)))
		sched_yield();
	t_warm = start + r->warm_ns;
	t_mid = t_warm + r->time_ns / 2;
	t_end = t_warm + r->time_ns;
	f->cpu = -1;
	f->worker_cpus[0] = '\0';

	for (;;) {
		int sub = flow_refill(f, UINT64_MAX), got;
		uint64_t now;

		if (sub < 0) {
			bench_err("%s: enqueue: %s\n", f->p.name,
				  cc_strerror(sub));
			f->stalls++;
			return -1;
		}
		got = cc_dequeue_burst(f->q, c, PB_DEQ_MAX);
		if (got < 0) {
			bench_err("%s: dequeue: %s\n", f->p.name,
				  cc_strerror(got));
			f->stalls++;
			return -1;
		}
		for (int i = 0; i < got; i++)
			pb_flow_check(f, &c[i]);
		now = pb_now_ns();
		if (!timing && now >= t_warm) {
			timing = true;
			t0 = now;
			ops0 = f->next_done;
		}
		if (!probed && now >= t_mid) {
			/* Once, and cheap next to the window: where did
			 * the scheduler put us and the workers? */
			probed = true;
			f->cpu = sched_getcpu();
			if (r->probe)
				pb_daemon_worker_cpus(r->probe, f->worker_cpus,
						      sizeof(f->worker_cpus));
		}
		if (now >= t_end) {
			f->win_ops = f->next_done - ops0;
			f->win_s = (double)(now - t0) / 1e9;
			break;
		}
		if (got || sub) {
			empty = 0;
			continue;
		}
		f->empty_polls++;
		if (f->p.wait) {
			int w = cc_wait(f->q, 10);

			if (w < 0) {
				bench_err("%s: wait: %s\n", f->p.name,
					  cc_strerror(w));
				f->stalls++;
				return -1;
			}
		} else if (++empty >= PB_SPIN_YIELD) {
			/* On two cores the workers need this CPU. */
			empty = 0;
			sched_yield();
		}
	}
	if (flow_drain(f))
		return -1;
	if (f->p.dir == CC_DECRYPT)
		return flow_check_plain(f);
	return 0;
}

static void *flow_thread(void *arg)
{
	struct flow_run *r = arg;

	r->rc = flow_run(r);
	return NULL;
}

int pb_flow_measure(struct pb_flow *const *flows, unsigned n, unsigned warm_ms,
		    unsigned time_ms, const struct pb_daemon *probe)
{
	struct flow_run runs[PB_MAX_FLOWS];
	pthread_t th[PB_MAX_FLOWS];
	_Atomic uint64_t go = 0;
	uint64_t errors[PB_MAX_FLOWS];
	unsigned started = 1;
	int rc = 0;

	if (!n || n > PB_MAX_FLOWS)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		runs[i] = (struct flow_run){
			.f = flows[i],
			.go = &go,
			.warm_ns = (uint64_t)warm_ms * 1000000,
			.time_ns = (uint64_t)time_ms * 1000000,
			.probe = i == 0 ? probe : NULL,
		};
		errors[i] = pb_flow_errors(flows[i]);
	}
	for (; started < n; started++)
		if (pthread_create(&th[started], NULL, flow_thread,
				   &runs[started])) {
			bench_err("cannot start a thread\n");
			rc = -1;
			break;
		}
	/* Flow 0 runs here; a flow whose thread failed is left alone. */
	atomic_store(&go, pb_now_ns());
	runs[0].rc = flow_run(&runs[0]);
	for (unsigned i = 1; i < started; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < started; i++)
		if (runs[i].rc || pb_flow_errors(flows[i]) != errors[i])
			rc = -1;
	return rc;
}

int pb_flow_stats(struct pb_flow *f, struct cc_queue_stats *out)
{
	struct cc_stats st;
	int err = cc_stats_get(f->conn, &st);

	if (err)
		return err;
	err = -ENOENT;
	for (unsigned i = 0; i < st.n_queues; i++)
		if (!strcmp(st.queues[i].client_name, f->p.name)) {
			*out = st.queues[i];
			err = 0;
			break;
		}
	cc_stats_free(&st);
	return err;
}
