/* SPDX-License-Identifier: MIT */
/* The control round trip (send a request, wait for its reply) and the
 * calls answered by an Ack. Below every file that asks the daemon
 * something (conn.c, queue_open.c, caps.c, keys.c, stats.c). */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>

#include <cryptod/clock.h>

/*
 * A daemon that refuses a peer (access policy, connection limits) sends
 * an Error with seq 0 and hangs up, possibly before our request went out:
 * after a failed send or receive, look for that explanation before
 * reporting EPIPE.
 */
static int conn_refusal(struct cc_conn *c)
{
	int fds[CTL_MAX_FDS];
	unsigned nfds = 0;
	ssize_t n = wire_recv(c->fd, c->rx, fds, CTL_MAX_FDS, &nfds);
	wire_close_fds(fds, nfds);
	if (n == -ECONNRESET) { /* reported once, before the queued data */
		nfds = 0;
		n = wire_recv(c->fd, c->rx, fds, CTL_MAX_FDS, &nfds);
		wire_close_fds(fds, nfds);
	}
	if (n <= 0)
		return 0;
	Cryptod__Envelope *env = wire_decode(c->rx, (size_t)n);
	int code = 0;
	if (env && env->seq == 0 &&
	    env->body_case == CRYPTOD__ENVELOPE__BODY_ERROR &&
	    env->error->code < 0) {
		code = env->error->code;
		snprintf(c->last_error, sizeof(c->last_error), "%s",
			 env->error->message ? env->error->message : "");
	}
	wire_free(env);
	return code;
}

int conn_call(struct cc_conn *c, Cryptod__Envelope *req,
	      Cryptod__Envelope **reply, int *fds, unsigned *nfds)
{
	unsigned nfds_local = 0;
	int fds_local[CTL_MAX_FDS];
	if (!fds) {
		fds = fds_local;
		nfds = &nfds_local;
	}
	*nfds = 0;
	c->last_error[0] = '\0';
	if (conn_forked(c))
		return -ECHILD; /* the parent's socket */
	req->seq = ++c->seq;
	int err = wire_send(c->fd, req, NULL, 0);
	if (err == -EPIPE || err == -ECONNRESET) {
		int why = conn_refusal(c);
		return why ? why : -EPIPE;
	}
	if (err)
		return err;

	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int r = poll(&p, 1, CRD_WAIT_MAX_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		ssize_t n = wire_recv(c->fd, c->rx, fds, CTL_MAX_FDS, nfds);
		if (n == -EAGAIN)
			continue;
		if (n == -ECONNRESET || n == -EPIPE) {
			/* A daemon that closes with our request unread makes
			 * the kernel report ECONNRESET before the refusal it
			 * queued for us: read once more. */
			int why = conn_refusal(c);
			return why ? why : -EPIPE;
		}
		if (n < 0)
			return (int)n;
		Cryptod__Envelope *env = wire_decode(c->rx, (size_t)n);
		if (!env) {
			wire_close_fds(fds, *nfds);
			*nfds = 0;
			return -EBADMSG;
		}
		/* seq 0: the daemon refuses us (conn_refusal). */
		int refusal = env->seq == 0 &&
			      env->body_case == CRYPTOD__ENVELOPE__BODY_ERROR;
		if (env->seq != req->seq && !refusal) { /* stale: drop it */
			wire_free(env);
			wire_close_fds(fds, *nfds);
			*nfds = 0;
			continue;
		}
		if (env->body_case == CRYPTOD__ENVELOPE__BODY_ERROR) {
			int code =
				env->error->code < 0 ? env->error->code : -EIO;
			snprintf(c->last_error, sizeof(c->last_error), "%s",
				 env->error->message ? env->error->message
						     : "");
			wire_free(env);
			wire_close_fds(fds, *nfds);
			*nfds = 0;
			return code;
		}
		*reply = env;
		return 0;
	}
}

/* A call answered by an Ack; the caller holds c->lock. */
int conn_simple_locked(struct cc_conn *c, Cryptod__Envelope *req)
{
	Cryptod__Envelope *rep;
	int err = conn_call(c, req, &rep, NULL, NULL);
	if (!err) {
		if (rep->body_case != CRYPTOD__ENVELOPE__BODY_ACK)
			err = -EPROTO;
		wire_free(rep);
	}
	return err;
}

int conn_simple(struct cc_conn *c, Cryptod__Envelope *req)
{
	pthread_mutex_lock(&c->lock);
	int err = conn_simple_locked(c, req);
	pthread_mutex_unlock(&c->lock);
	return err;
}

int conn_close_queue(struct cc_conn *c, uint32_t queue_id)
{
	Cryptod__CloseQueue m = CRYPTOD__CLOSE_QUEUE__INIT;
	m.queue_id = queue_id;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_CLOSE_QUEUE;
	req.close_queue = &m;
	return conn_simple(c, &req);
}
