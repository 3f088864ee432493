/* SPDX-License-Identifier: MIT */
#include "grace.h"

#include <errno.h>
#include <stddef.h>
#include <sys/eventfd.h>

#include <event2/event.h>

#include "bounds.h"
#include "worker.h"

/* Control thread only. */
static struct {
	struct event *ev;    /* owned: the workers' grace eventfd */
	struct event *timer; /* owned: the look at the workers every
			      * PARK_TIMEOUT_MS while items wait */
	struct grace_item *head, **tail;
	unsigned n;
	int running; /* in grace_run: a grace_defer from an fn only queues */
} g = { .tail = &g.head };

/*
 * Run every item whose grace period has passed, oldest first: epochs grow
 * along the list, and a later epoch passed means every earlier one did.
 * Only the items there when it began: one that an fn deferred again
 * waits for the next ring (a worker passing a quiescent state), so an fn
 * that waits for something the workers do never spins here.
 */
static void grace_run(void)
{
	if (g.running)
		return;
	g.running = 1;
	for (unsigned todo = g.n; todo && worker_grace_done(g.head->epoch);
	     todo--) {
		struct grace_item *it = g.head;
		g.head = it->next;
		if (!g.head)
			g.tail = &g.head;
		g.n--;
		it->next = NULL;
		it->fn(it);
	}
	g.running = 0;
	if (!g.timer || !g.head)
		return;
	/* An item an fn deferred again may be done already (every worker
	 * asleep: none will ring): look again on the loop's next turn, after
	 * the other clients' events. */
	if (worker_grace_done(g.head->epoch)) {
		event_active(g.timer, EV_TIMEOUT, 0);
		return;
	}
	/* A ring that was lost (none should be) costs at most this. */
	if (!evtimer_pending(g.timer, NULL)) {
		struct timeval tv = { 0, PARK_TIMEOUT_MS * 1000 };
		evtimer_add(g.timer, &tv);
	}
}

static void grace_on_ring(evutil_socket_t fd, short what, void *arg)
{
	eventfd_t v;
	(void)what;
	(void)arg;
	if (fd >= 0) /* the eventfd; the timer has none */
		(void)eventfd_read(fd, &v); /* non-blocking */
	grace_run();
}

int grace_start(struct event_base *base)
{
	g.ev = event_new(base, worker_grace_fd(), EV_READ | EV_PERSIST,
			 grace_on_ring, NULL);
	g.timer = evtimer_new(base, grace_on_ring, NULL);
	if (!g.ev || !g.timer || event_add(g.ev, NULL) < 0) {
		grace_stop();
		return -ENOMEM;
	}
	return 0;
}

void grace_stop(void)
{
	/* Workers have exited: every grace period has passed (and what
	 * waits for their sweeps waits no more: workers_stopped). */
	while (g.head && workers_stopped())
		grace_run();
	if (g.ev)
		event_free(g.ev);
	if (g.timer)
		event_free(g.timer);
	g.ev = g.timer = NULL;
}

void grace_defer(struct grace_item *it, void (*fn)(struct grace_item *it))
{
	it->fn = fn;
	it->next = NULL;
	it->epoch = worker_grace_begin();
	*g.tail = it;
	g.tail = &it->next;
	g.n++;
	grace_run(); /* every worker asleep: now */
}

unsigned grace_pending(void)
{
	return g.n;
}
