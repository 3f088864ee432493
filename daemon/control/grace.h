/* SPDX-License-Identifier: MIT */
/*
 * Deferred reclamation on the control thread, which never waits for a
 * worker: what it unpublished (a session, a queue, a whole connection) is
 * handed to grace_defer() with the function that frees it, and that
 * function runs from the event loop once every worker has passed a
 * quiescent state (worker.h), in the order the items came. Meanwhile the
 * control thread serves everybody else.
 */
#ifndef CRYPTOD_GRACE_H
#define CRYPTOD_GRACE_H

#include <cryptod/compiler.h>

#include <stdint.h>

struct event_base;

/* Embedded in what waits (container_of to get back to it). */
struct grace_item {
	struct grace_item *next;
	uint64_t epoch;
	void (*fn)(struct grace_item *it);
};

/* Watch the workers' grace eventfd on base. 0 or -errno. */
CRD_MUST_CHECK int grace_start(struct event_base *base);
/* After workers_stop(): run everything still waiting (no worker holds
 * anything any more), then stop watching. */
void grace_stop(void);

/* Control thread: run fn(it) once a grace period that begins now has
 * passed (at once if every worker sleeps). fn may defer again. */
void grace_defer(struct grace_item *it, void (*fn)(struct grace_item *it));

/* Items waiting (stats). */
unsigned grace_pending(void);

#endif
