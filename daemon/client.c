/* SPDX-License-Identifier: MIT */
#include "client.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <cryptod/ring_abi.h>

#include <cryptod/clock.h>

#include "config.h"
#include "fdreap.h"
#include "log.h"
#include "queue.h"
#include "session.h"
#include "worker.h"

/* Control thread only. */
static struct client *clients; /* owned list */
static unsigned n_clients;
static unsigned n_sessions_total;
static unsigned n_queues_total;
static uint32_t next_client_id = 1;
static uint32_t next_queue_id = 1;

static int uid_is_admin(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

int client_is_admin(const struct client *c)
{
	return uid_is_admin(c->uid);
}

int client_may_see(const struct client *viewer, const struct client *k)
{
	return viewer == k || client_is_admin(viewer);
}

static unsigned client_count_uid(uid_t uid)
{
	unsigned n = 0;
	for (struct client *c = clients; c; c = c->next)
		n += c->uid == uid;
	return n;
}

/* What all connections of uid hold (control thread). */
struct uid_usage {
	unsigned queues, sessions;
	uint64_t arena;
};

static void client_uid_usage(uid_t uid, struct uid_usage *u)
{
	memset(u, 0, sizeof(*u));
	for (struct client *c = clients; c; c = c->next) {
		if (c->uid != uid)
			continue;
		u->queues += c->n_queues;
		u->sessions += c->n_sessions;
		u->arena += c->arena_bytes;
	}
}

const char *client_session_limit(const struct client *c)
{
	const struct config_limits *lim = &config_active()->lim;
	if (c->n_sessions >= lim->sessions)
		return "limits.sessions_per_client";
	if (client_is_admin(c))
		return NULL;
	struct uid_usage u;
	client_uid_usage(c->uid, &u);
	return u.sessions >= lim->uid_sessions ? "limits.sessions_per_uid"
					       : NULL;
}

struct client *client_new(int fd, pid_t pid, uid_t uid, gid_t gid, int *err)
{
	*err = -EUSERS;
	if (n_clients >= MAX_CLIENTS)
		return NULL;
	if (!uid_is_admin(uid) &&
	    client_count_uid(uid) >= config_active()->lim.conns_per_uid)
		return NULL;
	*err = -ENOMEM;
	struct client *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	*err = 0;
	c->id = next_client_id++;
	c->fd = fd;
	c->pid = pid;
	c->uid = uid;
	c->gid = gid;
	c->connected_ms = crd_now_ms();
	c->next = clients;
	clients = c;
	n_clients++;
	return c;
}

struct client *client_first(void)
{
	return clients;
}

unsigned client_count(void)
{
	return n_clients;
}

unsigned client_sessions_total(void)
{
	return n_sessions_total;
}

int client_session_add(struct client *c, struct session *s)
{
	for (unsigned i = 0; i < MAX_SESSIONS_PER_CLIENT; i++) {
		if (c->sessions.s[i])
			continue;
		s->id = i + 1;
		/* Publish a fully built session; pairs with the acquire
		 * load in session_table_get(). */
		__atomic_store_n(&c->sessions.s[i], s, __ATOMIC_RELEASE);
		c->n_sessions++;
		n_sessions_total++;
		return s->id;
	}
	return -ENOSPC;
}

int client_session_destroy(struct client *c, uint32_t id)
{
	if (id == 0 || id > MAX_SESSIONS_PER_CLIENT || !c->sessions.s[id - 1])
		return -ENOENT;
	struct session *s = c->sessions.s[id - 1];
	__atomic_store_n(&c->sessions.s[id - 1], NULL, __ATOMIC_RELEASE);
	/* An op already resolved against s may still be running. */
	worker_synchronize();
	session_destroy(s);
	/* Streams on s are wiped by the next poster of each queue. */
	for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++)
		if (c->queues[i])
			stream_sweep_request(&c->queues[i]->streams);
	worker_kick();
	c->n_sessions--;
	n_sessions_total--;
	return 0;
}

int client_queue_open(struct client *c, uint32_t sq, uint32_t cq,
		      uint64_t arena, struct queue **out)
{
	const struct config_limits *lim = &config_active()->lim;
	struct uid_usage u = { 0 }; /* admins: per-client bounds only */
	if (!client_is_admin(c))
		client_uid_usage(c->uid, &u);
	uint64_t want = arena ? arena : CRD_ARENA_DEFAULT_SIZE;
	if (c->n_queues >= lim->queues || n_queues_total >= MAX_QUEUES ||
	    (!client_is_admin(c) && u.queues >= lim->uid_queues))
		return -EMFILE;
	/* Arena memory is the daemon's, held for the queue's life: a
	 * client may hold limits.arena_per_client of it in all, a user
	 * limits.arena_per_uid. */
	if (arena <= CRD_ARENA_MAX_SIZE &&
	    (c->arena_bytes + want > lim->arena_bytes ||
	     (!client_is_admin(c) && u.arena + want > lim->uid_arena_bytes)))
		return -EDQUOT;
	/* Ops held for a client: at most its completion rings' entries
	 * (queue.h); the ring sizes are checked by queue_create(). */
	uint64_t cq_n = cq ? cq : sq ? sq : CRD_RING_DEFAULT_ENTRIES;
	if (cq_n <= CRD_RING_MAX_ENTRIES &&
	    c->inflight_max + cq_n > lim->inflight)
		return -ENOBUFS;
	unsigned slot = 0;
	while (c->queues[slot])
		slot++;

	struct queue *q;
	int err = queue_create(next_queue_id, sq, cq, arena, &q);
	if (err)
		return err;
	q->sessions = &c->sessions;
	q->owner_id = c->id;
	q->owner_uid = c->uid;
	q->streams.client_open = &c->streams_open;
	err = worker_attach(q);
	if (err) {
		queue_destroy(q);
		return err;
	}
	next_queue_id++;
	c->arena_bytes += q->arena_size;
	c->inflight_max += q->cq_entries;
	c->queues[slot] = q;
	c->n_queues++;
	n_queues_total++;
	*out = q;
	return 0;
}

static void client_queue_drop(struct client *c, unsigned slot)
{
	struct queue *q = c->queues[slot];
	c->arena_bytes -= q->arena_size;
	c->inflight_max -= q->cq_entries;
	worker_detach(q);	     /* waits until no worker can touch q */
	programs_queue_closed(c, q); /* its counts are final now */
	queue_destroy(q);
	c->queues[slot] = NULL;
	c->n_queues--;
	n_queues_total--;
}

int client_queue_close(struct client *c, uint32_t queue_id)
{
	for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++) {
		if (c->queues[i] && c->queues[i]->id == queue_id) {
			client_queue_drop(c, i);
			return 0;
		}
	}
	return -ENOENT;
}

void client_destroy(struct client *c)
{
	/* Queues first: once no worker serves them, no worker can reach
	 * the sessions either (they are found only through a queue). */
	for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++)
		if (c->queues[i])
			client_queue_drop(c, i);
	for (unsigned i = 0; i < MAX_SESSIONS_PER_CLIENT; i++) {
		if (!c->sessions.s[i])
			continue;
		session_destroy(c->sessions.s[i]);
		c->sessions.s[i] = NULL;
		n_sessions_total--;
	}
	c->n_sessions = 0;
	programs_retire(c);

	for (struct client **pp = &clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	n_clients--;
	if (c->ev)
		event_free(c->ev);
	c->ev = NULL;
	if (c->fd >= 0 && c->fd_clean)
		close(c->fd);
	else if (c->fd >= 0)
		fdreap_push(c->fd); /* its queue may hold fds in flight */
	log_peer(c->uid, LOG_INFO_, "client %u (pid %d) gone", c->id,
		 (int)c->pid);
	free(c);
}
