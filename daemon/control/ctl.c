/* SPDX-License-Identifier: MIT */
#include "ctl.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>

#include <cryptod/clock.h>
#include <cryptod/ring_abi.h>

#include "caps.h"
#include "client.h"
#include "config.h"
#include "doorbell.h"
#include "engine.h"
#include "fdreap.h"
#include "keyreq.h"
#include "bounds.h"
#include "log.h"
#include "queue.h"
#include "sdnotify.h"
#include "session.h"
#include "listing.h"
#include "programs.h"
#include "reply.h"
#include "stats.h"
#include "worker.h"
#include "wire.h"

#ifndef CRYPTOD_VERSION
#define CRYPTOD_VERSION "0"
#endif

static struct {
	struct event_base *base; /* not owned */
	struct event *listen_ev; /* owned */
	int listen_fd;
	int inherited; /* socket-activated: the manager owns the file */
	/* The kernel refused fds on the listener before it listened, so on
	 * every connection it accepts: none can be in flight to them. Not
	 * for an inherited listener (connections may predate our choice). */
	int fds_refused;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
} ctl = { .listen_fd = -1 };

static int ctl_hello(struct client *c, uint32_t seq, const Cryptod__Hello *m)
{
	if (m->abi_version != CRD_ABI_VERSION)
		return reply_error(c->fd, seq, -EPROTO,
				   "ring ABI version mismatch");
	/* Keep a printable, bounded copy, escaped as the log escapes: it
	 * ends up in logs and listings. */
	log_escape(c->name, sizeof(c->name), m->client_name);
	c->hello_done = 1;
	log_peer(c->uid, LOG_INFO_, "client %u: hello from pid %d uid %u (%s)",
		 c->id, (int)c->pid, (unsigned)c->uid, c->name);

	Cryptod__HelloReply r = CRYPTOD__HELLO_REPLY__INIT;
	r.abi_version = CRD_ABI_VERSION;
	r.daemon_version = CRYPTOD_VERSION;
	r.max_queues = MAX_QUEUES_PER_CLIENT;
	r.max_sessions = MAX_SESSIONS_PER_CLIENT;
	r.max_arena_size = CRD_ARENA_MAX_SIZE;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_HELLO_REPLY;
	env.hello_reply = &r;
	return wire_send(c->fd, &env, NULL, 0);
}

static int ctl_open_queue(struct client *c, uint32_t seq,
			  const Cryptod__OpenQueue *m)
{
	struct queue *q;
	if (m->arena_size > CRD_ARENA_MAX_SIZE)
		return reply_error(c->fd, seq, -EINVAL, "arena too large");
	int err = client_queue_open(c, m->sq_entries, m->cq_entries,
				    m->arena_size, &q);
	if (err == -EINVAL)
		return reply_error(
			c->fd, seq, err,
			"bad queue geometry (ring sizes must be powers of two, "
			"cq >= sq; arena 64 KiB..1 GiB)");
	if (err == -EMFILE)
		return reply_error(
			c->fd, seq, err,
			"too many queues (limits.queues_per_client, "
			"limits.queues_per_uid, or the daemon's 1024)");
	if (err == -EDQUOT)
		return reply_error(c->fd, seq, err,
				   "arena memory limit reached "
				   "(limits.arena_per_client or "
				   "limits.arena_per_uid)");
	if (err == -ENOBUFS)
		return reply_error(c->fd, seq, err,
				   "in-flight limit for this client reached: "
				   "its completion rings would hold more "
				   "than limits.inflight_per_client ops");
	if (err)
		return reply_error(c->fd, seq, err, "cannot create queue");

	Cryptod__OpenQueueReply r = CRYPTOD__OPEN_QUEUE_REPLY__INIT;
	r.queue_id = q->id;
	r.sq_entries = q->sq_entries;
	r.cq_entries = q->cq_entries;
	r.region_size = q->region_size;
	r.sq_off = q->hdr->sq_off;
	r.cq_off = q->hdr->cq_off;
	r.arena_off = q->hdr->arena_off;
	r.arena_size = q->arena_size;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_OPEN_QUEUE_REPLY;
	env.open_queue_reply = &r;
	int fds[3] = { q->memfd, q->sq_efd, q->cq_peer };
	err = wire_send(c->fd, &env, fds, 3);
	if (err)
		return err; /* the connection ends, and the queue with it */
	/* The client's end is the client's now: keeping a copy would only
	 * keep the doorbell alive after the client closed it. */
	close(q->cq_peer);
	q->cq_peer = -1;
	return 0;
}

static int ctl_create_session(struct client *c, uint32_t seq,
			      const Cryptod__CreateSession *m)
{
	/* a key pair's DER is longer than any other key (wire.h) */
	size_t key_max = crd_alg_pkey(m->alg) ? CTL_PKEY_MAX : CTL_KEY_MAX;
	if (m->key.len > key_max || m->auth_key.len > CTL_KEY_MAX)
		return reply_error(c->fd, seq, -EINVAL, "key too long");
	const char *limit = client_session_limit(c);
	if (limit) {
		char msg[96];
		snprintf(msg, sizeof(msg), "too many sessions (%s)", limit);
		return reply_error(c->fd, seq, -ENOSPC, msg);
	}

	struct session_params p = {
		.alg = m->alg,
		.key = m->key.data,
		.key_len = m->key.len,
		.auth_key = m->auth_key.data,
		.auth_key_len = m->auth_key.len,
		.tag_len = m->tag_len,
		.engine = m->engine,
	};
	struct session *s;
	uint32_t key_version = 0;
	if (m->key_name && *m->key_name) {
		char msg[160];
		int err = keyreq_session(c, m, &s, &key_version, msg,
					 sizeof(msg));
		if (err)
			return reply_error(c->fd, seq, err, msg);
		goto add;
	}
	int err = session_create(&p, &s);
	switch (err) {
	case 0:
		break;
	case -EINVAL:
		return reply_error(
			c->fd, seq, err,
			"bad key, auth key or tag length for this algorithm "
			"(see cryptoctl engines)");
	case -EOPNOTSUPP:
		return reply_error(c->fd, seq, err,
				   "algorithm not supported by the chosen "
				   "engine (see cryptoctl engines)");
	case -ENOENT:
		return reply_error(c->fd, seq, err, "no such engine");
	case -ENODEV: {
		const char *eng = "",
			   *why = engine_select_why(p.alg, p.engine, &eng);
		char msg[384];
		snprintf(msg, sizeof(msg), "%s: no engine available%s%s%s%s",
			 alg_name(p.alg) ? alg_name(p.alg) : "this algorithm",
			 why ? ": " : " (see cryptoctl engines)",
			 why ? eng : "", why ? " unavailable: " : "",
			 why ? why : "");
		return reply_error(c->fd, seq, err, msg);
	}
	case -ENOSPC:
		return reply_error(c->fd, seq, err, "key store full");
	case -EPERM:
		return reply_error(c->fd, seq, CRD_ST_POLICY,
				   "key shorter than the daemon's key "
				   "policy allows (keys.min_bits)");
	default:
		return reply_error(c->fd, seq, err, "cannot create session");
	}
add:;
	int id = client_session_add(c, s);
	if (id < 0) {
		session_destroy(s);
		return reply_error(c->fd, seq, id, "too many sessions");
	}

	Cryptod__CreateSessionReply r = CRYPTOD__CREATE_SESSION_REPLY__INIT;
	r.session_id = id;
	r.engine = (char *)s->eng->name;
	r.key_version = key_version;
	r.alg = (Cryptod__Algorithm)s->alg;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_CREATE_SESSION_REPLY;
	env.create_session_reply = &r;
	return wire_send(c->fd, &env, NULL, 0);
}

/* The client's account of its own messages: it can only say something
 * about itself (the report names no connection), and only more of it. */
static int ctl_usage_report(struct client *c, uint32_t seq,
			    const Cryptod__UsageReport *m)
{
	struct prog_usage u = { 0 };
	if (m->usage) {
		u.offloaded = m->usage->offloaded;
		u.fallbacks = m->usage->fallbacks;
		u.inprocess = m->usage->inprocess;
	}
	switch (client_usage_report(c, &u)) {
	case 0:
		return reply_ack(c->fd, seq);
	case -ERANGE:
		return reply_error(c->fd, seq, -ERANGE,
				   "usage total out of range (above 2^56)");
	default:
		return reply_error(c->fd, seq, -EINVAL,
				   "usage totals may only grow");
	}
}

/* Returns < 0 only when the connection must close. */
static int ctl_dispatch(struct client *c, const Cryptod__Envelope *env)
{
	uint32_t seq = env->seq;
	if (!c->hello_done && env->body_case != CRYPTOD__ENVELOPE__BODY_HELLO)
		return reply_error(c->fd, seq, -EPROTO, "hello first");

	switch (env->body_case) {
	case CRYPTOD__ENVELOPE__BODY_HELLO:
		return ctl_hello(c, seq, env->hello);
	case CRYPTOD__ENVELOPE__BODY_OPEN_QUEUE:
		return ctl_open_queue(c, seq, env->open_queue);
	case CRYPTOD__ENVELOPE__BODY_CLOSE_QUEUE:
		/* Acked once no worker can touch the queue (client.h). */
		if (client_queue_close(c, env->close_queue->queue_id, seq))
			return reply_error(c->fd, seq, -ENOENT,
					   "no such queue");
		return 0;
	case CRYPTOD__ENVELOPE__BODY_CREATE_SESSION:
		return ctl_create_session(c, seq, env->create_session);
	case CRYPTOD__ENVELOPE__BODY_DESTROY_SESSION:
		/* Acked once the session and its streams are wiped. */
		if (client_session_destroy(c, env->destroy_session->session_id,
					   seq))
			return reply_error(c->fd, seq, -ENOENT,
					   "no such session");
		return 0;
	case CRYPTOD__ENVELOPE__BODY_STATS_REQUEST:
		return stats_reply(c, seq);
	case CRYPTOD__ENVELOPE__BODY_CAPABILITIES_REQUEST:
		return caps_reply(c, seq);
	case CRYPTOD__ENVELOPE__BODY_CLIENTS_REQUEST:
		return clients_reply(c, seq);
	case CRYPTOD__ENVELOPE__BODY_SESSIONS_REQUEST:
		return sessions_reply(c, seq);
	case CRYPTOD__ENVELOPE__BODY_USAGE_REPORT:
		return ctl_usage_report(c, seq, env->usage_report);
	case CRYPTOD__ENVELOPE__BODY_PROGRAMS_REQUEST:
		return programs_reply(c, seq);
	case CRYPTOD__ENVELOPE__BODY_KEY_REQUEST:
		return keyreq_handle(c, seq, env->key_request);
	default:
		return reply_error(c->fd, seq, -EOPNOTSUPP,
				   "not a request the daemon serves");
	}
}

static void ctl_client_read(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;
	static uint8_t buf[CTL_MSG_MAX]; /* control thread only */
	unsigned nfds, stray = 0;

	/* Clients have no reason to send fds (the kernel refuses them
	 * where it can: ctl_accept). Any that still came go to the reaper,
	 * never close()d here: a close can block (fdreap.h). */
	ssize_t n =
		wire_recv_sink(fd, buf, NULL, 0, &nfds, fdreap_push, &stray);
	if (n == -EAGAIN)
		return;
	if (stray) {
		log_peer(c->uid, LOG_WARN_,
			 "client %u: sent %u file descriptor%s, disconnecting",
			 c->id, stray, stray == 1 ? "" : "s");
		if (n > 0)
			explicit_bzero(buf, (size_t)n);
		client_destroy(c);
		return;
	}
	if (n < 0) {
		if (n == -EMSGSIZE)
			log_peer(c->uid, LOG_WARN_,
				 "client %u: oversized message, disconnecting",
				 c->id);
		client_destroy(c);
		return;
	}
	Cryptod__Envelope *env = wire_decode(buf, (size_t)n);
	explicit_bzero(buf, (size_t)n); /* may have carried a key */
	if (!env) {
		log_peer(c->uid, LOG_WARN_,
			 "client %u: malformed message, disconnecting", c->id);
		client_destroy(c);
		return;
	}
	int err = ctl_dispatch(c, env);
	wire_free(env);
	if (err < 0) {
		log_peer(c->uid, LOG_INFO_,
			 "client %u: reply failed (%s), disconnecting", c->id,
			 strerror(-err));
		client_destroy(c);
	}
}

/*
 * Tell a peer we will not serve why, then hang up. The Error carries seq 0
 * (it answers no request); the client library returns its code from
 * cc_connect(). The socket is non-blocking: a peer that does not read
 * loses the message, never stalls the daemon.
 */
static void ctl_refuse(int fd, int code, const char *msg)
{
	/* Best effort: a peer that does not read loses the message. */
	if (reply_error(fd, 0, code, msg))
		log_debug("refusal not delivered: the peer does not read");
	fdreap_push(fd); /* its queue may hold fds in flight */
}

/* The allow lists, with the peer's supplementary groups (SO_PEERGROUPS)
 * fetched only when a group list must be consulted. */
static int ctl_peer_allowed(int fd, const struct ucred *cred)
{
	const struct config *cf = config_active();
	if (config_peer_allowed(cf, cred->uid, cred->gid, NULL, 0))
		return 1;
	if (!cf->n_allow_gids)
		return 0;
	gid_t small[64], *groups = small;
	socklen_t len = sizeof(small);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		if (errno != ERANGE || len > (1u << 20))
			return 0;
		groups = malloc(len);
		if (!groups || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups,
					  &len) < 0) {
			free(groups);
			return 0;
		}
	}
	int ok = config_peer_allowed(cf, cred->uid, cred->gid, groups,
				     len / sizeof(gid_t));
	if (groups != small)
		free(groups);
	return ok;
}

static void ctl_accept_resume(evutil_socket_t fd, short what, void *arg)
{
	if (ctl.listen_ev) /* NULL once we stopped listening */
		event_add(ctl.listen_ev, NULL);
}

/*
 * Out of fds (or memory) the pending connection stays in the backlog and
 * the listener stays readable: rather than spin on it, stop listening for
 * ACCEPT_PAUSE_MS and let clients that already have a connection be
 * served meanwhile.
 */
static void ctl_accept_pause(int err)
{
	static uint64_t last_ms;
	uint64_t now = crd_now_ms();
	if (now - last_ms >= 10000) {
		log_warn("accept: %s; pausing new connections for %d ms "
			 "(LimitNOFILE=, limits.connections_per_uid)",
			 strerror(err), ACCEPT_PAUSE_MS);
		last_ms = now;
	}
	struct timeval tv = { 0, ACCEPT_PAUSE_MS * 1000 };
	if (event_del(ctl.listen_ev) == 0 &&
	    event_base_once(ctl.base, -1, EV_TIMEOUT, ctl_accept_resume, NULL,
			    &tv) < 0)
		event_add(ctl.listen_ev, NULL); /* better spin than go deaf */
}

static void ctl_accept(evutil_socket_t lfd, short what, void *arg)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			ctl_accept_pause(errno);
		return;
	}
	(void)doorbell_refuse_fds(fd); /* inherited from the listener too */
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		fdreap_push(fd);
		return;
	}
	if (!ctl_peer_allowed(fd, &cred)) {
		log_peer(cred.uid, LOG_WARN_,
			 "refusing pid %d uid %u gid %u: not allowed by "
			 "allow_users/allow_groups",
			 (int)cred.pid, (unsigned)cred.uid, (unsigned)cred.gid);
		ctl_refuse(fd, CRD_ST_ACCESS,
			   "not allowed by cryptod's access policy "
			   "(allow_users, allow_groups)");
		return;
	}
	int err;
	struct client *c = client_new(fd, cred.pid, cred.uid, cred.gid, &err);
	if (!c) {
		int all = client_count() >= MAX_CLIENTS;
		log_peer(cred.uid, LOG_WARN_, "refusing pid %d uid %u: %s",
			 (int)cred.pid, (unsigned)cred.uid,
			 err == -ENOMEM ? "out of memory"
			 : all		? "too many clients"
					: "too many connections from this uid "
					  "(limits.connections_per_uid)");
		ctl_refuse(fd, err,
			   all ? "cryptod serves too many clients"
			       : "too many connections from this user "
				 "(limits.connections_per_uid)");
		return;
	}
	c->fd_clean = ctl.fds_refused;
	c->ev = event_new(ctl.base, fd, EV_READ | EV_PERSIST, ctl_client_read,
			  c);
	if (!c->ev || event_add(c->ev, NULL) < 0) {
		client_destroy(c);
		return;
	}
}

static int ctl_mkdir_parent(const char *path)
{
	char dir[sizeof(ctl.path)];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* A socket file is stale if nobody accepts on it. */
static int ctl_socket_in_use(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int used = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	close(fd);
	return used;
}

/* Serve a listener systemd passed us (socket activation). */
static int ctl_adopt(struct event_base *base, int fd, const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	memset(&sa, 0, sizeof(sa));
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 ||
	    len <= offsetof(struct sockaddr_un, sun_path) || !sa.sun_path[0])
		snprintf(ctl.path, sizeof(ctl.path), "fd %d", fd);
	else
		snprintf(ctl.path, sizeof(ctl.path), "%.*s",
			 (int)sizeof(sa.sun_path), sa.sun_path);
	ctl.base = base;
	ctl.inherited = 1;
	(void)doorbell_refuse_fds(fd); /* new connections inherit it */
	ctl.listen_ev =
		event_new(base, fd, EV_READ | EV_PERSIST, ctl_accept, NULL);
	if (!ctl.listen_ev || event_add(ctl.listen_ev, NULL) < 0) {
		if (ctl.listen_ev)
			event_free(ctl.listen_ev);
		ctl.listen_ev = NULL;
		close(fd);
		return -ENOMEM;
	}
	ctl.listen_fd = fd;
	log_info("socket activation: serving %s (fd %d%s%s)", ctl.path, fd,
		 *name ? ", " : "", name);
	return 0;
}

const char *ctl_socket_path(void)
{
	return ctl.path;
}

void ctl_status(char *buf, size_t len)
{
	unsigned n = client_count(), s = client_sessions_total();
	snprintf(buf, len, "serving %s: %u client%s, %u session%s, %u worker%s",
		 ctl.path, n, n == 1 ? "" : "s", s, s == 1 ? "" : "s",
		 workers_count(), workers_count() == 1 ? "" : "s");
}

int ctl_bind(const char *path, mode_t mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	snprintf(ctl.path, sizeof(ctl.path), "%s", path);

	int err = ctl_mkdir_parent(path);
	if (err)
		return err;
	if (ctl_socket_in_use(&sa))
		return -EADDRINUSE;
	unlink(path);

	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
			0);
	if (fd < 0)
		return -errno;
	/* Before listen: a client may send as soon as it has connected,
	 * before we accept, and connections inherit the listener's choice. */
	ctl.fds_refused = doorbell_refuse_fds(fd) == 0;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto err_close;
	if (chmod(path, mode) < 0)
		goto err_unlink;
	if (listen(fd, 64) < 0)
		goto err_unlink;
	ctl.listen_fd = fd;
	return 0;

err_unlink:
	err = -errno;
	unlink(path);
	close(fd);
	return err;
err_close:
	err = -errno;
	close(fd);
	return err;
}

int ctl_start(struct event_base *base, const char *path, mode_t mode)
{
	if (ctl.listen_fd < 0) { /* not bound before (ctl_bind) */
		char name[64];
		int fd = sdn_listen_fd(name, sizeof(name));
		if (fd >= 0)
			return ctl_adopt(base, fd, name);
		if (fd != -ENOENT) {
			log_err("socket activation: %s",
				fd == -EPROTOTYPE
					? "the inherited fd is not a listening "
					  "AF_UNIX SOCK_SEQPACKET socket "
					  "(ListenSequentialPacket=)"
				: fd == -E2BIG ? "more than one fd passed; "
						 "cryptod serves exactly one "
						 "socket"
					       : strerror(-fd));
			return fd;
		}
		int err = ctl_bind(path, mode);
		if (err)
			return err;
	}
	ctl.base = base;
	ctl.listen_ev = event_new(base, ctl.listen_fd, EV_READ | EV_PERSIST,
				  ctl_accept, NULL);
	if (!ctl.listen_ev || event_add(ctl.listen_ev, NULL) < 0) {
		if (ctl.listen_ev)
			event_free(ctl.listen_ev);
		ctl.listen_ev = NULL;
		unlink(ctl.path);
		close(ctl.listen_fd);
		ctl.listen_fd = -1;
		return -ENOMEM;
	}
	return 0;
}

int ctl_set_group(gid_t gid)
{
	if (ctl.listen_fd < 0)
		return -ENOTCONN;
	if (ctl.inherited)
		return 0; /* the .socket unit's SocketGroup= decides */
	return chown(ctl.path, (uid_t)-1, gid) < 0 ? -errno : 0;
}

void ctl_stop_listening(void)
{
	if (ctl.listen_ev)
		event_free(ctl.listen_ev);
	ctl.listen_ev = NULL;
	if (ctl.listen_fd >= 0) {
		/* Connections not yet accepted may hold fds in flight. */
		fdreap_push(ctl.listen_fd);
		if (!ctl.inherited) /* else the manager's to keep or remove */
			unlink(ctl.path);
	}
	ctl.listen_fd = -1;
}

void ctl_close_all(void)
{
	while (client_first())
		client_destroy(client_first());
}
