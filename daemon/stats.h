/* SPDX-License-Identifier: MIT */
/*
 * Observability on the control thread: the StatsReply (stats.c) and the
 * client and session listings (listing.c). Who may see what: an
 * administrator (root or the daemon's own uid) sees every connection; any
 * other client sees only its own queues, sessions and connection.
 */
#ifndef CRYPTOD_STATS_H
#define CRYPTOD_STATS_H

#include <cryptod/compiler.h>

#include <stdint.h>

#include "wire.h"

struct client;

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t stats_now_ms(void);

/* May viewer see what k owns? */
int stats_may_see(const struct client *viewer, const struct client *k);

/* Fill m from h[LAT_BUCKETS] (lathist.h); m points into h. */
void stats_latency(Cryptod__Latency *m, uint64_t *h, uint64_t sum_ns);

/* Build and send a ClientsReply / SessionsReply. 0 or -errno. */
CRD_MUST_CHECK int clients_reply(struct client *c, uint32_t seq);
CRD_MUST_CHECK int sessions_reply(struct client *c, uint32_t seq);

#endif
