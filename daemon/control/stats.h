/* SPDX-License-Identifier: MIT */
/*
 * The StatsReply, on the control thread. Who may see what is
 * client_may_see(): an administrator (root or the daemon's own uid) sees
 * every connection; any other client its own connection only.
 */
#ifndef CRYPTOD_STATS_H
#define CRYPTOD_STATS_H

#include <cryptod/compiler.h>

#include <stdint.h>

#include "wire.h"

struct client;

/* Note the daemon's start (uptime). */
void stats_init(void);

/* Fill m from h[LAT_BUCKETS] (lathist.h); m points into h. */
void stats_latency(Cryptod__Latency *m, uint64_t *h, uint64_t sum_ns);

/* Build and send a StatsReply. 0 or -errno. */
CRD_MUST_CHECK int stats_reply(struct client *c, uint32_t seq);

#endif
