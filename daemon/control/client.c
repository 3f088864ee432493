/* SPDX-License-Identifier: MIT */
#include "client.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include <cryptod/ring_abi.h>

#include <cryptod/clock.h>

#include "config.h"
#include "fdreap.h"
#include "grace.h"
#include "log.h"
#include "queue.h"
#include "reply.h"
#include "fair.h"
#include "session.h"
#include "worker.h"
#include "wire.h"

#define container_of(p, type, member)                                          \
	((type *)((char *)(p)-offsetof(type, member)))

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
		crd_store_release_n(&c->sessions.s[i], s);
		c->n_sessions++;
		n_sessions_total++;
		return s->id;
	}
	return -ENOSPC;
}

/* Reading c stops while a reply waits for a grace period, so its
 * requests are answered in order; other connections are served. */
static void client_pause(struct client *c)
{
	if (c->ev && !c->paused && event_del(c->ev) == 0)
		c->paused = 1;
}

static void client_resume(struct client *c)
{
	if (c->ev && c->paused && event_add(c->ev, NULL) == 0)
		c->paused = 0;
}

/* The waiting request is done: answer it, read c again. */
static void client_answer(struct client *c)
{
	if (c->gone)
		return;
	if (reply_ack(c->fd, c->pending_seq)) {
		/* A peer that does not read: its next read sees the end. */
		log_peer(c->uid, LOG_INFO_, "client %u: reply not delivered",
			 c->id);
		shutdown(c->fd, SHUT_RDWR);
	}
	client_resume(c);
}

/* Does a queue of c still have to sweep its streams (streams.h)? A dead
 * queue is never served again: its streams go with it. */
static int client_sweeps_pending(struct client *c)
{
	if (c->gone || workers_stopped())
		return 0;
	for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++) {
		struct queue *q = c->queues[i];
		if (q && !atomic_load(&q->broken) &&
		    stream_sweep_pending(&q->streams))
			return 1;
	}
	return 0;
}

/*
 * A destroyed session's grace periods have passed. First no worker can
 * hold it; but its streams' state is wiped by the queues' posters (a
 * sweep at their next lock), so it waits until every sweep has begun,
 * then one more grace period, after which every sweep has ended.
 */
static void client_session_gone(struct grace_item *it)
{
	struct client *c = container_of(it, struct client, pending);
	if (!c->pending_swept) {
		if (client_sweeps_pending(c))
			worker_kick(); /* a worker asleep sweeps when it wakes */
		else
			c->pending_swept = 1;
		grace_defer(it, client_session_gone);
		return;
	}
	session_destroy(c->pending_session);
	c->pending_session = NULL;
	c->n_sessions--;
	client_answer(c);
}

int client_session_destroy(struct client *c, uint32_t id, uint32_t seq)
{
	if (id == 0 || id > MAX_SESSIONS_PER_CLIENT || !c->sessions.s[id - 1])
		return -ENOENT;
	struct session *s = c->sessions.s[id - 1];
	crd_store_release_n(&c->sessions.s[id - 1], NULL);
	n_sessions_total--; /* gone for listings; c->n_sessions when freed */
	/* Streams on s are wiped by the next poster of each queue. */
	for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++)
		if (c->queues[i])
			stream_sweep_request(&c->queues[i]->streams);
	worker_kick();
	/* An op already resolved against s may still be running. */
	c->pending_session = s;
	c->pending_seq = seq;
	c->pending_swept = 0;
	client_pause(c);
	grace_defer(&c->pending, client_session_gone);
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
	int user = fair_user_get(c->uid);
	if (user < 0) {
		queue_destroy(q);
		return -EMFILE;
	}
	q->user = (uint16_t)user;
	err = worker_attach(q);
	if (err) {
		fair_user_put(q->user);
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

/* No worker can touch q any more: its counts are final, free it. */
static void client_queue_free(struct client *c, struct queue *q)
{
	prog_counts_queue(&c->closed, q);
	c->arena_bytes -= q->arena_size;
	c->inflight_max -= q->cq_entries;
	fair_user_put(q->user);
	queue_destroy(q);
}

static void client_queue_gone(struct grace_item *it)
{
	struct client *c = container_of(it, struct client, pending);
	client_queue_free(c, c->pending_queue);
	c->pending_queue = NULL;
	client_answer(c);
}

int client_queue_close(struct client *c, uint32_t queue_id, uint32_t seq)
{
	for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++) {
		struct queue *q = c->queues[i];
		if (!q || q->id != queue_id)
			continue;
		worker_detach(q);
		c->queues[i] = NULL;
		c->n_queues--;
		n_queues_total--;
		c->pending_queue = q;
		c->pending_seq = seq;
		client_pause(c);
		grace_defer(&c->pending, client_queue_gone);
		return 0;
	}
	return -ENOENT;
}

/* The end's grace period has passed: no worker can reach c's queues,
 * nor through them its sessions. */
static void client_end(struct grace_item *it)
{
	struct client *c = container_of(it, struct client, end);
	for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++) {
		if (!c->queues[i])
			continue;
		client_queue_free(c, c->queues[i]);
		c->queues[i] = NULL;
	}
	for (unsigned i = 0; i < MAX_SESSIONS_PER_CLIENT; i++) {
		if (!c->sessions.s[i])
			continue;
		session_destroy(c->sessions.s[i]);
		c->sessions.s[i] = NULL;
	}
	c->n_sessions = 0;
	if (c->hello_done) { /* no name: not a program */
		struct prog_counts k;
		client_counts(c, &k);
		prog_counts_sub(&k, &c->retired);
		programs_settle(c->name, c->uid, &k);
	}
	free(c);
}

void client_destroy(struct client *c)
{
	for (struct client **pp = &clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	n_clients--;
	c->gone = 1;
	/* Gone for listings now; held until freed. */
	n_sessions_total -=
		c->n_sessions - (c->pending_session ? 1 : 0); /* counted out */
	if (c->hello_done) { /* its program's record, as far as counted */
		client_counts(c, &c->retired);
		programs_retire(c->name, c->uid, client_is_admin(c),
				&c->retired);
	}
	if (c->ev)
		event_free(c->ev);
	c->ev = NULL;
	if (c->fd >= 0 && c->fd_clean)
		close(c->fd);
	else if (c->fd >= 0)
		fdreap_push(c->fd); /* its queue may hold fds in flight */
	c->fd = -1;
	/* Queues first: once no worker serves them, no worker can reach
	 * the sessions either (they are found only through a queue). */
	for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++) {
		if (!c->queues[i])
			continue;
		worker_detach(c->queues[i]);
		c->n_queues--;
		n_queues_total--;
	}
	log_peer(c->uid, LOG_INFO_, "client %u (pid %d) gone", c->id,
		 (int)c->pid);
	grace_defer(&c->end, client_end);
}

int client_usage_report(struct client *c, const struct prog_usage *u)
{
	if (u->offloaded > CTL_USAGE_MAX || u->fallbacks > CTL_USAGE_MAX ||
	    u->inprocess > CTL_USAGE_MAX)
		return -ERANGE;
	if (u->offloaded < c->usage.offloaded ||
	    u->fallbacks < c->usage.fallbacks ||
	    u->inprocess < c->usage.inprocess)
		return -EINVAL;
	c->usage = *u;
	c->usage_reported = 1;
	return 0;
}

/* Everything c did so far: closed queues, open ones, its report. */
void client_counts(const struct client *c, struct prog_counts *k)
{
	*k = c->closed;
	k->u = (struct prog_usage){ 0 };
	for (unsigned i = 0; i < MAX_QUEUES_PER_CLIENT; i++)
		if (c->queues[i])
			prog_counts_queue(k, c->queues[i]);
	const struct prog_counts rep = { .u = c->usage };
	prog_counts_add(k, &rep);
}
