/* SPDX-License-Identifier: MIT */
/*
 * Programs: connections grouped by (client name, uid), so an operator sees
 * which program sends what, also after its connections closed.
 *
 * A connection's counters are its queues' (open ones read live, closed ones
 * added to client->closed when they close) and its own UsageReport (the
 * provider's messages: offloaded, fallbacks, in-process). When it closes,
 * all of it is added to its program's record. Records are kept for at most
 * MAX_PROGRAMS programs, MAX_PROGRAMS_PER_UID per non-administrator uid;
 * beyond that, and when the least recently active record is evicted to make
 * room, the counts go to one "(other)" row so that the sums stay whole.
 * Control thread only.
 */
#ifndef CRYPTOD_PROGRAMS_H
#define CRYPTOD_PROGRAMS_H

#include <cryptod/compiler.h>

#include <stdint.h>

struct client;
struct queue;

/* What a client says about its own messages (UsageReport). */
struct prog_usage {
	uint64_t offloaded, fallbacks, inprocess;
};

struct prog_counts {
	uint64_t ops, bytes, errors, auth_failures;
	struct prog_usage u;
};

/* Store c's report: 0; -ERANGE a total above CTL_USAGE_MAX; -EINVAL a total
 * below the one it reported before. Nothing is stored on an error. */
CRD_MUST_CHECK int programs_usage_report(struct client *c,
					 const struct prog_usage *u);
/* Add q's final counters to its client's closed-queue sums (q detached). */
void programs_queue_closed(struct client *c, const struct queue *q);
/* c's connection ended: add what it did so far to its program's record
 * (and remember in c what was added). */
void programs_retire(struct client *c);
/* c's queues are freed now: add what they counted after programs_retire
 * (ops that were running when the connection ended). */
void programs_settle(struct client *c);
/* Build and send a ProgramsReply for viewer. 0 or -errno. */
CRD_MUST_CHECK int programs_reply(struct client *viewer, uint32_t seq);
/* Forget every record (tests). */
void programs_reset(void);

#endif
