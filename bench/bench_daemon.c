/* SPDX-License-Identifier: MIT */
/*
 * Path A: one queue, one client thread, zero-copy. Slot buffers are carved
 * once out of two arena blocks; ops are built once per size and submitted
 * straight from that array. The loop keeps up to burst*depth ops in
 * flight, enqueues a burst whenever one fits and takes completions as they
 * come. Nothing is allocated and no syscall is made per op by this code.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cryptod/ring_abi.h"

/* How long a silent daemon is tolerated while draining or verifying. */
#define BENCH_DRAIN_MS 10000
/* Consecutive empty polls (a few ns each) before the loop yields. */
#define BENCH_IDLE_SPINS 1024u

int bench_daemon_open(struct bench_daemon *d, const struct bench_cfg *cfg)
{
	struct cc_queue_params qp = { 0 };
	size_t src_bytes, dst_bytes;
	uint64_t arena;
	int rc;

	memset(d, 0, sizeof(*d));
	d->nslots = cfg->burst * cfg->depth;
	d->ring = cfg->ring;
	src_bytes = d->nslots * bench_layout_max_stride(cfg, false);
	dst_bytes = cfg->oop || cfg->dir == CC_DECRYPT
			    ? d->nslots * bench_layout_max_stride(cfg, true)
			    : 0;
	/* Room for the allocator's own bookkeeping and alignment. */
	arena = crd_align_up(src_bytes + dst_bytes + (64u << 10),
			     CRD_ARENA_ALIGN);
	if (arena < CRD_ARENA_MIN_SIZE)
		arena = CRD_ARENA_MIN_SIZE;
	if (arena > CRD_ARENA_MAX_SIZE) {
		bench_err("%llu arena bytes needed, the most is "
			  "%llu: lower --burst, --depth or --sizes\n",
			  (unsigned long long)arena,
			  (unsigned long long)CRD_ARENA_MAX_SIZE);
		return -E2BIG;
	}

	d->ops = calloc(d->nslots, sizeof(*d->ops));
	d->comps = calloc(d->nslots, sizeof(*d->comps));
	if (!d->ops || !d->comps) {
		rc = -ENOMEM;
		goto err;
	}

	rc = cc_connect(cfg->socket, BENCH_CLIENT_NAME, &d->conn);
	if (rc < 0) {
		bench_err("connect %s: %s\n", cfg->socket, cc_strerror(rc));
		goto err;
	}
	/* Which engine serves each algorithm, and at which sizes, is the
	 * daemon's to say: the bench keeps no list of its own. */
	rc = cc_capabilities_get(d->conn, &d->caps, &d->n_caps);
	if (rc < 0) {
		bench_err("capabilities: %s\n", cc_strerror(rc));
		goto err;
	}

	qp.sq_entries = d->ring;
	qp.cq_entries = d->ring;
	qp.arena_size = arena;
	rc = cc_queue_open(d->conn, &qp, &d->q);
	if (rc < 0) {
		bench_err("queue (%u entries, %llu B arena): %s\n", d->ring,
			  (unsigned long long)arena, cc_strerror(rc));
		goto err;
	}

	d->src_block = cc_buf_alloc(d->q, src_bytes);
	if (dst_bytes)
		d->dst_block = cc_buf_alloc(d->q, dst_bytes);
	if (!d->src_block || (dst_bytes && !d->dst_block)) {
		bench_err("cc_buf_alloc failed in a %llu B "
			  "arena\n",
			  (unsigned long long)cc_arena_size(d->q));
		rc = -ENOMEM;
		goto err;
	}
	return 0;

err:
	bench_daemon_close(d);
	return rc;
}

static bool ranges_have(const struct cc_range *rs, unsigned n, unsigned v)
{
	for (unsigned i = 0; i < n; i++) {
		const struct cc_range *r = &rs[i];
		if (v >= r->min && v <= r->max &&
		    (v == r->min ||
		     (r->increment && (v - r->min) % r->increment == 0)))
			return true;
	}
	return false;
}

static bool caps_key_ok(const struct cc_alg_caps *c, unsigned key_len)
{
	return ranges_have(c->key_sizes, c->n_key_sizes, key_len);
}

int bench_daemon_engine(const struct bench_daemon *d,
			const struct bench_cfg *cfg, const struct bench_alg *a,
			char *engine, size_t engine_len, char *why,
			size_t why_len)
{
	const struct cc_alg_caps *c, *hit = NULL;
	unsigned i;

	snprintf(why, why_len, "no engine of the daemon serves %s",
		 cc_alg_name(a->alg) ? cc_alg_name(a->alg) : a->name);
	for (i = 0; i < d->n_caps; i++) {
		c = &d->caps[i];
		if (c->alg != a->alg)
			continue;
		if (cfg->engine ? strcmp(c->engine, cfg->engine) != 0
				: !c->default_engine)
			continue;
		hit = c;
		break;
	}
	/* The default engine lacks this key size (aesni's CCM and CMAC have
	 * no 192-bit keys): the daemon gives such a session the first
	 * available engine that takes it, and so does the bench. */
	for (i = 0; !cfg->engine && hit && !caps_key_ok(hit, a->key_len) &&
		    i < d->n_caps;
	     i++) {
		c = &d->caps[i];
		if (c->alg == a->alg && c->available &&
		    caps_key_ok(c, a->key_len))
			hit = c;
	}
	if (!hit) {
		if (cfg->engine)
			snprintf(why, why_len, "engine %s does not serve %s",
				 cfg->engine,
				 cc_alg_name(a->alg) ? cc_alg_name(a->alg)
						     : a->name);
		return -ENOTSUP;
	}
	if (!hit->available) {
		snprintf(why, why_len, "%s on %s unavailable: %s",
			 hit->alg_name, hit->engine, hit->reason);
		return -ENOTSUP;
	}
	/* The row's IV and authentication key are the bench's choice (a
	 * TLS-sized nonce, a digest-sized HMAC key); the daemon says whether
	 * this engine takes them. */
	if (!ranges_have(hit->iv_sizes, hit->n_iv_sizes, a->iv_len) ||
	    (a->auth_key_len &&
	     !ranges_have(hit->auth_key_sizes, hit->n_auth_key_sizes,
			  a->auth_key_len))) {
		snprintf(why, why_len,
			 "%s on %s takes no %u-byte IV with a %u-byte "
			 "authentication key",
			 hit->alg_name, hit->engine, a->iv_len,
			 a->auth_key_len);
		return -ENOTSUP;
	}
	snprintf(engine, engine_len, "%s", hit->engine);
	return 0;
}

int bench_daemon_session(struct bench_daemon *d, const struct bench_cfg *cfg,
			 const struct bench_alg *a, const uint8_t *key,
			 const uint8_t *auth_key)
{
	struct cc_session_params sp = { 0 };
	int rc;

	sp.alg = a->alg;
	sp.key = a->key_len ? key : NULL;
	sp.key_len = a->key_len;
	sp.auth_key = a->auth_key_len ? auth_key : NULL;
	sp.auth_key_len = a->auth_key_len;
	sp.tag_len = a->tag_len;
	sp.engine = cfg->engine;
	rc = cc_session_create(d->conn, &sp, &d->session);
	if (rc < 0) {
		const char *why = cc_conn_last_error(d->conn);

		bench_err("session %s%s%s: %s%s%s\n", a->name,
			  cfg->engine ? " on " : "",
			  cfg->engine ? cfg->engine : "", cc_strerror(rc),
			  why && *why ? ": " : "", why ? why : "");
		return rc;
	}
	d->have_session = true;
	return 0;
}

void bench_daemon_session_end(struct bench_daemon *d)
{
	if (d->have_session)
		cc_session_destroy(d->conn, d->session);
	d->have_session = false;
}

void bench_daemon_close(struct bench_daemon *d)
{
	if (d->q) {
		if (d->dst_block)
			cc_buf_free(d->q, d->dst_block);
		if (d->src_block)
			cc_buf_free(d->q, d->src_block);
		cc_queue_close(d->q);
	}
	d->q = NULL;
	d->src_block = NULL;
	d->dst_block = NULL;
	bench_daemon_session_end(d);
	if (d->caps)
		cc_capabilities_free(d->caps);
	d->caps = NULL;
	d->n_caps = 0;
	if (d->conn)
		cc_disconnect(d->conn);
	d->conn = NULL;
	free(d->ops);
	d->ops = NULL;
	free(d->comps);
	d->comps = NULL;
}

void bench_daemon_bind(struct bench_daemon *d, struct bench_layout *l,
		       enum cc_dir dir)
{
	unsigned i;

	l->src = d->src_block;
	l->dst = l->oop ? d->dst_block : d->src_block;
	for (i = 0; i < d->nslots; i++) {
		struct cc_op *op = &d->ops[i];

		memset(op, 0, sizeof(*op));
		op->user_data =
			i; /* completions must come back in this order */
		op->session = d->session;
		op->dir = dir;
		op->src = bench_slot_src(l, i);
		/* GMAC writes nothing but the tag: no destination. */
		op->dst = l->tag_only ? NULL : bench_slot_dst(l, i);
		op->len = l->bits ? l->len * 8 : l->len;
		op->aad = l->aad_len ? bench_slot_aad(l, i) : NULL;
		op->aad_len = l->aad_len;
		op->tag = l->tag_len ? bench_slot_tag(l, i) : NULL;
		op->iv = l->iv_len ? l->iv[i] : NULL;
		op->iv_len = l->iv_len;
	}
	d->l = *l;
}

/* Take completions until none is in flight: verification and the end of a
 * measurement. Statuses are stored when status_out is not NULL. */
static int drain(struct bench_daemon *d, unsigned *in_flight, uint32_t *expect,
		 int32_t *status_out, unsigned *bad)
{
	double deadline = bench_now() + BENCH_DRAIN_MS * 1e-3;
	unsigned spins = 0;
	int n, i, rc;

	while (*in_flight) {
		n = cc_dequeue_burst(d->q, d->comps, d->nslots);
		if (n < 0) {
			bench_err("dequeue: %s\n", cc_strerror(n));
			return n;
		}
		if (n == 0) {
			if (++spins < 1024)
				continue;
			spins = 0;
			if (bench_now() > deadline) {
				bench_err("%u ops still in flight "
					  "after %d ms: the daemon stopped "
					  "completing them\n",
					  *in_flight, BENCH_DRAIN_MS);
				return -ETIMEDOUT;
			}
			rc = cc_wait(d->q, 10);
			if (rc < 0) {
				bench_err("wait: %s\n", cc_strerror(rc));
				return rc;
			}
			continue;
		}
		for (i = 0; i < n; i++) {
			const struct cc_completion *c = &d->comps[i];

			if (c->user_data != *expect) {
				bench_err("completion out of "
					  "order: got op %llu, expected %u\n",
					  (unsigned long long)c->user_data,
					  *expect);
				return -EPROTO;
			}
			if (status_out)
				status_out[*expect] = c->status;
			else if (c->status)
				(*bad)++;
			if (++*expect == d->nslots)
				*expect = 0;
		}
		*in_flight -= (unsigned)n;
	}
	return 0;
}

int bench_daemon_run_once(struct bench_daemon *d, unsigned n,
			  int32_t *status_out)
{
	unsigned sent = 0, in_flight = 0, bad = 0;
	uint32_t expect = 0;
	double deadline = bench_now() + BENCH_DRAIN_MS * 1e-3;
	int rc;

	while (sent < n) {
		rc = cc_enqueue_burst(d->q, &d->ops[sent], n - sent);
		if (rc < 0) {
			bench_err("enqueue: %s\n", cc_strerror(rc));
			return rc;
		}
		sent += (unsigned)rc;
		in_flight += (unsigned)rc;
		if (rc == 0 && bench_now() > deadline) {
			bench_err("the ring stayed full for %d "
				  "ms\n",
				  BENCH_DRAIN_MS);
			return -ETIMEDOUT;
		}
	}
	return drain(d, &in_flight, &expect, status_out, &bad);
}

/* Ops between clock reads: about 64 KiB of payload, at least a burst. */
static uint64_t ops_per_check(unsigned burst, uint32_t len)
{
	uint64_t n = 65536 / len;

	return n < burst ? burst : n;
}

/* What one measurement of the daemon path reports. */
static void sample_set(struct bench_sample *out, uint64_t done, uint32_t len,
		       uint64_t retries, uint64_t empty, double secs)
{
	memset(out, 0, sizeof(*out));
	out->ops = done;
	out->bytes = done * len;
	out->retries = retries;
	out->empty_polls = empty;
	out->secs = secs;
}

/*
 * A poll that found nothing: true when the measurement is over. Every
 * BENCH_IDLE_SPINS in a row (microseconds: a burst of the largest ops),
 * give the core up, in case the worker shares it (spinning on would
 * starve it for a whole slice; with a core each this returns at once),
 * and look at the clock, which also bounds the wait on a stalled daemon.
 */
static bool idle_poll(unsigned *idle, double *t, double end)
{
	if (++*idle & (BENCH_IDLE_SPINS - 1))
		return false;
	sched_yield();
	*t = bench_now();
	return *t >= end;
}

int bench_daemon_run(struct bench_daemon *d, const struct bench_cfg *cfg,
		     unsigned time_ms, struct bench_sample *out)
{
	const unsigned burst = cfg->burst, cap = d->nslots;
	const uint32_t len = d->l.len; /* bytes (3GPP ops count bits) */
	const uint64_t check = ops_per_check(burst, len);
	const struct bench_layout *l = &d->l;
	const bool touch = cfg->touch;
	/* The tag is a result on encrypt only. */
	const uint32_t tag_read = cfg->dir == CC_ENCRYPT ? l->tag_len : 0;
	uint64_t acc = 0;
	struct cc_queue *q = d->q;
	struct cc_completion *comps = d->comps;
	unsigned next = 0, in_flight = 0, bad = 0, idle = 0, want;
	uint32_t expect = 0;
	uint64_t done = 0, since = 0, retries = 0, empty = 0;
	double t0, t, end;
	int n, i, rc;

	t0 = bench_now();
	t = t0;
	end = t0 + time_ms * 1e-3;
	for (;;) {
		if (cap - in_flight >= burst) {
			want = cap - next < burst ? cap - next : burst;
			if (touch)
				for (i = 0; i < (int)want; i++)
					bench_touch_write(
						bench_slot_src(l, next + i),
						len);
			n = cc_enqueue_burst(q, &d->ops[next], want);
			if (n < 0) {
				bench_err("enqueue: %s\n", cc_strerror(n));
				return n;
			}
			retries += want - (unsigned)n;
			in_flight += (unsigned)n;
			next += (unsigned)n;
			if (next == cap)
				next = 0;
		}

		n = cc_dequeue_burst(q, comps, cap);
		if (n <= 0) {
			if (n < 0) {
				bench_err("dequeue: %s\n", cc_strerror(n));
				return n;
			}
			empty++;
			if (idle_poll(&idle, &t, end))
				break;
			continue;
		}
		idle = 0;
		for (i = 0; i < n; i++) {
			bad += comps[i].status != 0;
			if (touch)
				acc ^= bench_touch_read(
					       bench_slot_dst(l, expect), len) ^
				       bench_touch_read(
					       bench_slot_tag(l, expect),
					       tag_read);
			if (comps[i].user_data != expect) {
				bench_err(
					"completion out of "
					"order: got op %llu, expected %u\n",
					(unsigned long long)comps[i].user_data,
					expect);
				return -EPROTO;
			}
			if (++expect == cap)
				expect = 0;
		}
		in_flight -= (unsigned)n;
		done += (unsigned)n;
		since += (unsigned)n;
		if (since >= check) {
			since = 0;
			t = bench_now();
			if (t >= end)
				break;
		}
	}

	bench_touch_sink ^= acc;
	/* Ops still in flight finish after the window: not counted. */
	rc = drain(d, &in_flight, &expect, NULL, &bad);
	if (rc < 0)
		return rc;
	if (bad) {
		bench_err("%u ops completed with an error "
			  "status\n",
			  bad);
		return -EBADMSG;
	}
	sample_set(out, done, len, retries, empty, t - t0);
	return 0;
}

/* What the cc_poll() callback checks: order and status, as above. */
struct submit_state {
	uint32_t expect, cap;
	unsigned bad, out_of_order, done;
};

static void submit_cb(void *arg, const struct cc_completion *c)
{
	struct submit_state *st = arg;

	st->out_of_order += c->user_data != st->expect;
	st->bad += c->status != 0;
	if (++st->expect == st->cap)
		st->expect = 0;
	st->done++;
}

/*
 * The cryptod-submit path: the same ops one at a time through cc_submit()
 * (the library coalesces them into bursts) and their completions through
 * cc_poll()'s callback, as an application that has one op at hand at a
 * time would use the library.
 */
int bench_daemon_run_submit(struct bench_daemon *d, const struct bench_cfg *cfg,
			    unsigned time_ms, struct bench_sample *out)
{
	const unsigned cap = d->nslots;
	const uint32_t len = d->l.len; /* bytes (3GPP ops count bits) */
	const uint64_t check = ops_per_check(cfg->burst, len);
	struct submit_state st = { .cap = cap };
	struct cc_queue *q = d->q;
	unsigned next = 0, in_flight = 0, idle = 0, before;
	uint64_t since = 0, retries = 0, empty = 0, done = 0;
	double t0, t, end;
	int rc;

	cc_set_callback(q, submit_cb, &st);
	t0 = bench_now();
	t = t0;
	end = t0 + time_ms * 1e-3;
	for (;;) {
		while (in_flight < cap) {
			rc = cc_submit(q, &d->ops[next]);
			if (rc == -EAGAIN) {
				retries++;
				break;
			}
			if (rc < 0) {
				bench_err("submit: %s\n", cc_strerror(rc));
				goto out;
			}
			in_flight++;
			if (++next == cap)
				next = 0;
		}
		before = st.done;
		rc = cc_poll(q, cap);
		if (rc < 0) {
			bench_err("poll: %s\n", cc_strerror(rc));
			goto out;
		}
		in_flight -= st.done - before;
		if (st.done == before) {
			empty++;
			if (idle_poll(&idle, &t, end))
				break;
			continue;
		}
		idle = 0;
		since += st.done - before;
		if (since >= check) {
			since = 0;
			t = bench_now();
			if (t >= end)
				break;
		}
	}
	done = st.done;
	/* The rest completes after the window: not counted. */
	{
		double deadline = bench_now() + BENCH_DRAIN_MS * 1e-3;

		while (in_flight && bench_now() < deadline) {
			before = st.done;
			rc = cc_poll(q, cap);
			if (rc < 0)
				break;
			in_flight -= st.done - before;
		}
	}
	rc = 0;
	if (in_flight) {
		bench_err("%u ops still in flight after %d ms\n", in_flight,
			  BENCH_DRAIN_MS);
		rc = -ETIMEDOUT;
	} else if (st.out_of_order || st.bad) {
		bench_err("cc_submit path: %u completions out of order, %u "
			  "with an error status\n",
			  st.out_of_order, st.bad);
		rc = -EBADMSG;
	}
out:
	cc_set_callback(q, NULL, NULL);
	if (rc < 0)
		return rc;
	sample_set(out, done, len, retries, empty, t - t0);
	return 0;
}
