/* SPDX-License-Identifier: MIT */
/*
 * The provider's counters (messages run by the daemon, fallbacks, kept
 * in-process below min_size) and their reports to the daemon
 * (cc_report_usage), so that cryptoctl clients and stats show them per
 * connection and per program. Above the connection (prov_conn.c).
 */
#include "prov.h"

#include <cryptod/clock.h>

#include <errno.h>

#include <openssl/err.h>

int prov_small(struct prov *p, size_t len)
{
	prov_report(p, 0); /* every message starts here */
	if (!p->min_size || len >= p->min_size)
		return 0;
	atomic_fetch_add(&p->n_inprocess, 1);
	return 1;
}

int prov_fallback(struct prov *p, int err)
{
	if (p->fallback != PROV_FALLBACK_DEFAULT || !prov_err_fallback_ok(err))
		return 0;
	atomic_fetch_add(&p->n_fallback, 1);
	return 1;
}

/* ---- Reports to the daemon ---- */

enum { REPORT_EVERY_MS = 1000 };

/*
 * Each connection is told only what its predecessors did not take, so
 * that the daemon's per-program sums count every message once: its
 * totals are ours minus rep_base, what earlier connections acknowledged.
 * What was counted while no connection worked (fallbacks because the
 * daemon was unreachable) goes to the next one that does. Holding
 * rep_conn's reference keeps its address from being reused, so the
 * comparison below cannot mistake a new connection for it. Caller holds
 * rep_lock.
 */
static void report_locked(struct prov *p)
{
	const struct cc_usage now = {
		.offloaded = atomic_load(&p->n_daemon),
		.fallbacks = atomic_load(&p->n_fallback),
		.inprocess = atomic_load(&p->n_inprocess),
	};
	if (now.offloaded == p->rep_sent.offloaded &&
	    now.fallbacks == p->rep_sent.fallbacks &&
	    now.inprocess == p->rep_sent.inprocess)
		return; /* nothing new: no round trip */
	struct prov_conn *c;
	ERR_set_mark(); /* an unreachable daemon is not the op's error */
	int err = prov_conn_get(p, &c);
	ERR_pop_to_mark();
	if (err)
		return;
	if (c != p->rep_conn) {
		p->rep_base = p->rep_sent;
		prov_conn_put(p->rep_conn);
		p->rep_conn = c; /* takes c's reference */
	} else {
		prov_conn_put(c); /* rep_conn holds one already */
	}
	const struct cc_usage u = {
		.offloaded = now.offloaded - p->rep_base.offloaded,
		.fallbacks = now.fallbacks - p->rep_base.fallbacks,
		.inprocess = now.inprocess - p->rep_base.inprocess,
	};
	err = cc_report_usage(c->cc, &u);
	if (!err) {
		p->rep_sent = now;
		return;
	}
	if (err == -EOPNOTSUPP) /* an older daemon: stop asking */
		atomic_store(&p->rep_off, 1);
	prov_conn_check(p, c, err);
}

/* Every live instance, for the atfork child handler. */
static pthread_mutex_t provs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct prov *provs;

/* The atfork child handler, registered at the first load. */
static void prov_forked(void)
{
	/* The child is single-threaded here: whoever held these locks in
	 * the parent is not in it, so they are made anew, unheld. */
	pthread_mutex_init(&provs_lock, NULL);
	for (struct prov *p = provs; p; p = p->next_prov) {
		pthread_mutex_init(&p->lock, NULL);
		pthread_mutex_init(&p->rep_lock, NULL);
		/* The parent counts and reports what it did; the child
		 * starts from nothing (its connection is its own). */
		atomic_store(&p->n_daemon, 0);
		atomic_store(&p->n_fallback, 0);
		atomic_store(&p->n_inprocess, 0);
		p->rep_base = (struct cc_usage){ 0 };
		p->rep_sent = (struct cc_usage){ 0 };
		prov_conn_put(p->rep_conn); /* the parent's */
		p->rep_conn = NULL;
		atomic_store(&p->rep_next_ms, 0);
	}
}

static void forked_atfork(void)
{
	(void)pthread_atfork(NULL, NULL, prov_forked);
}

void prov_usage_add(struct prov *p)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, forked_atfork);
	pthread_mutex_lock(&provs_lock);
	p->next_prov = provs;
	provs = p;
	pthread_mutex_unlock(&provs_lock);
}

void prov_usage_remove(struct prov *p)
{
	pthread_mutex_lock(&provs_lock);
	for (struct prov **pp = &provs; *pp; pp = &(*pp)->next_prov)
		if (*pp == p) {
			*pp = p->next_prov;
			break;
		}
	pthread_mutex_unlock(&provs_lock);
}

void prov_report(struct prov *p, int final)
{
	if (atomic_load_explicit(&p->rep_off, memory_order_relaxed))
		return;
	if (final) {
		/* Try only: another thread may be reporting. */
		if (pthread_mutex_trylock(&p->rep_lock))
			return;
	} else {
		uint64_t now = crd_now_coarse_ms();
		if (now <
		    atomic_load_explicit(&p->rep_next_ms, memory_order_relaxed))
			return;
		/* Another thread is reporting: the op does not wait. */
		if (pthread_mutex_trylock(&p->rep_lock))
			return;
		atomic_store_explicit(&p->rep_next_ms, now + REPORT_EVERY_MS,
				      memory_order_relaxed);
	}
	report_locked(p);
	if (final) {
		prov_conn_put(p->rep_conn);
		p->rep_conn = NULL;
	}
	pthread_mutex_unlock(&p->rep_lock);
}
