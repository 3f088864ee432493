/* SPDX-License-Identifier: MIT */
/*
 * Client connections. Sessions and queues belong to the connection that
 * made them and die with it. Ids are per connection, so one client can
 * never name another's session.
 */
#ifndef CRYPTOD_CLIENT_H
#define CRYPTOD_CLIENT_H

#include <cryptod/compiler.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bounds.h"
#include "grace.h"
#include "programs.h"
#include "session.h"

struct event;
struct session;
struct queue;

struct client {
	uint32_t id;
	int fd;		  /* owned: the control socket */
	int fd_clean;	  /* no fds can be in flight to fd: close it here,
			   * not through the reaper (ctl_accept) */
	struct event *ev; /* owned: read event on fd */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char name[CLIENT_NAME_SIZE];
	int hello_done;
	uint64_t connected_ms; /* CLOCK_MONOTONIC at accept (listings) */

	struct session_table sessions; /* slots owned (session.h) */
	unsigned n_sessions;
	struct queue *queues[MAX_QUEUES_PER_CLIENT]; /* owned */
	unsigned n_queues;
	uint64_t arena_bytes;  /* sum over its queues */
	uint64_t inflight_max; /* sum of its queues' completion ring sizes */
	/* Streams open over all its queues: added to by the posters
	 * (streams.c), bounded by MAX_STREAMS_PER_CLIENT. */
	_Atomic unsigned streams_open;

	/* For its program's record (programs.h): the counters of its closed
	 * queues (closed.u unused), and its own latest UsageReport. */
	struct prog_counts closed;
	struct prog_usage usage;
	int usage_reported;
	struct prog_counts retired; /* what programs_retire got */

	/* A request whose reply waits for a grace period (a session
	 * destroyed, a queue closed): at most one at a time, since the
	 * connection is not read until it is answered (client.c). */
	struct grace_item pending;
	uint32_t pending_seq;
	struct session *pending_session; /* owned while it waits */
	struct queue *pending_queue;	 /* owned while it waits */
	int pending_swept; /* its queues' stream sweeps were seen done */
	int paused;	   /* ev is off until the reply went out */
	/* The connection's end: out of the registry and unpublished at
	 * once, freed (queues, sessions, c) after a grace period. */
	struct grace_item end;
	int gone;

	struct client *next; /* registry list */
};

/* NULL if c may create another session, else the name of the limit it
 * reached ("limits.sessions_per_client" or "limits.sessions_per_uid"). */
const char *client_session_limit(const struct client *c);

/* Returns the new id (> 0) or -ENOSPC. */
CRD_MUST_CHECK int client_session_add(struct client *c, struct session *s);
/*
 * Unpublish session id. Once no worker can see it and its streams are
 * wiped it is destroyed and the Ack for seq sent; c is not read until
 * then. Never waits. 0 (the reply is on its way) or -ENOENT (nothing
 * sent: the caller replies).
 */
CRD_MUST_CHECK int client_session_destroy(struct client *c, uint32_t id,
					  uint32_t seq);

/* Create a queue, attach it to the workers. 0 or -errno. */
CRD_MUST_CHECK int client_queue_open(struct client *c, uint32_t sq, uint32_t cq,
				     uint64_t arena, struct queue **out);
/* Detach a queue; it is unmapped and the Ack for seq sent once no worker
 * can touch it, c not read until then. Never waits. 0 or -ENOENT (as
 * client_session_destroy). */
CRD_MUST_CHECK int client_queue_close(struct client *c, uint32_t queue_id,
				      uint32_t seq);

/* End the connection: out of the registry, its socket closed and its
 * queues detached now; its queues, sessions and c itself freed after a
 * grace period. Never waits. */
void client_destroy(struct client *c);

/*
 * Is the peer an administrator: uid 0 or the daemon's own uid? Admins
 * pass the allow lists and the per-uid connection limit and see every
 * client in stats, clients and sessions listings.
 */
int client_is_admin(const struct client *c);
/* Store c's UsageReport: 0; -ERANGE a total above CTL_USAGE_MAX; -EINVAL a
 * total below the one it reported before. Nothing is stored on an error. */
CRD_MUST_CHECK int client_usage_report(struct client *c,
				       const struct prog_usage *u);
/* Everything c did so far (programs.h): closed queues, open ones, its
 * report. */
void client_counts(const struct client *c, struct prog_counts *k);
/* May viewer see what k owns (its queues, sessions, counters)? Only its
 * own connection, unless the viewer is an administrator. */
int client_may_see(const struct client *viewer, const struct client *k);

/* Registry of live clients (control thread only). On success the client
 * owns fd; otherwise NULL and *err = -EUSERS (MAX_CLIENTS reached, or
 * limits.connections_per_uid for a non-admin uid) or -ENOMEM. */
struct client *client_new(int fd, pid_t pid, uid_t uid, gid_t gid, int *err);
struct client *client_first(void);
unsigned client_count(void);
unsigned client_sessions_total(void);

#endif
