/* SPDX-License-Identifier: MIT */
/*
 * Programs: connections grouped by (client name, uid), so an operator sees
 * which program sends what, also after its connections closed.
 *
 * A connection's counters are its queues' (open ones read live, closed ones
 * added to client->closed when they close) and its own UsageReport (the
 * provider's messages: offloaded, fallbacks, in-process): client_counts().
 * When it closes, client.c adds all of it to its program's record here;
 * listing.c builds the ProgramsReply from these records and the live
 * connections. This file knows no client: it is below both. Records are kept for at most
 * MAX_PROGRAMS programs, MAX_PROGRAMS_PER_UID per non-administrator uid;
 * beyond that, and when the least recently active record is evicted to make
 * room, the counts go to one "(other)" row so that the sums stay whole.
 * Control thread only.
 */
#ifndef CRYPTOD_PROGRAMS_H
#define CRYPTOD_PROGRAMS_H

#include <cryptod/compiler.h>

#include <stdint.h>
#include <sys/types.h>

#include "bounds.h"

struct queue;

/* What a client says about its own messages (UsageReport). */
struct prog_usage {
	uint64_t offloaded, fallbacks, inprocess;
};

struct prog_counts {
	uint64_t ops, bytes, errors, auth_failures;
	struct prog_usage u;
};

/* A program whose connections all closed, or some did. */
struct prog_rec {
	char name[CLIENT_NAME_SIZE];
	uid_t uid;
	int used;
	uint64_t conns;	  /* connections closed */
	uint64_t last_ms; /* crd_now_ms() when the last one closed */
	struct prog_counts k;
};

/* Sums of counters a client chose may not wrap: they stick at the top. */
uint64_t prog_sat_add(uint64_t a, uint64_t b);
void prog_counts_add(struct prog_counts *d, const struct prog_counts *s);
/* d -= s, for counts that only grow (s was taken before d). */
void prog_counts_sub(struct prog_counts *d, const struct prog_counts *s);
/* d += q's counters (read live: a worker may still add to them). */
void prog_counts_queue(struct prog_counts *d, const struct queue *q);
/* A connection of (name, uid) ended having done k so far: add it to its
 * program's record (admin: may evict another uid's record). */
void programs_retire(const char *name, uid_t uid, int admin,
		     const struct prog_counts *k);
/* Its queues are freed now: add k, what they counted after
 * programs_retire (ops that were running when the connection ended). */
void programs_settle(const char *name, uid_t uid, const struct prog_counts *k);
/* Record i (< MAX_PROGRAMS) or, i == MAX_PROGRAMS, "(other)": NULL when
 * not in use. */
const struct prog_rec *programs_rec(unsigned i);
/* Forget every record (tests). */
void programs_reset(void);

#endif
