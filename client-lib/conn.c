/* SPDX-License-Identifier: MIT */
/* Connection: connect and hello, disconnect (closing what is left open),
 * sessions. The round trip itself is call.c's; stats: stats.c. */
#include "internal.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

enum { FORK_GUARD_SIZE = 4096 };

#define CC_SYSTEM_SOCKET "/run/cryptod/cryptod.sock"

/* A user's client finds the system service (cryptod.socket, group cryptod)
 * when it is there; the daemon's own default stays per user
 * (wire_default_socket_path), so a user's daemon never competes for it. */
int cc_default_socket_path(char *buf, size_t len)
{
	const char *env = getenv("CRYPTOD_SOCKET");
	if ((!env || !*env) && geteuid() != 0 &&
	    access(CC_SYSTEM_SOCKET, F_OK) == 0) {
		int n = snprintf(buf, len, "%s", CC_SYSTEM_SOCKET);
		return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
	}
	return wire_default_socket_path(buf, len);
}

const char *cc_daemon_version(const struct cc_conn *conn)
{
	return conn->version;
}

int cc_daemon_pid(const struct cc_conn *conn)
{
	return conn->daemon_pid;
}

const char *cc_conn_last_error(const struct cc_conn *conn)
{
	return conn->last_error;
}

static int conn_hello(struct cc_conn *c, const char *name)
{
	Cryptod__Hello h = CRYPTOD__HELLO__INIT;
	h.abi_version = CRD_ABI_VERSION;
	h.client_name = (char *)(name ? name : "");
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_HELLO;
	req.hello = &h;
	Cryptod__Envelope *rep;
	int err = conn_call(c, &req, &rep, NULL, NULL);
	if (err)
		return err;
	if (rep->body_case != CRYPTOD__ENVELOPE__BODY_HELLO_REPLY) {
		wire_free(rep);
		return -EPROTO;
	}
	snprintf(c->version, sizeof(c->version), "%s",
		 rep->hello_reply->daemon_version);
	c->max_sessions = rep->hello_reply->max_sessions;
	wire_free(rep);
	if (c->max_sessions == 0 || c->max_sessions > 65536)
		return -EPROTO;
	c->tag_len = calloc(c->max_sessions + 1, 1);
	c->sess_alg = calloc(c->max_sessions + 1, 1);
	return c->tag_len && c->sess_alg ? 0 : -ENOMEM;
}

int cc_connect(const char *path, const char *client_name, struct cc_conn **out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char def[sizeof(sa.sun_path)];
	if (!path) {
		if (cc_default_socket_path(def, sizeof(def)))
			return -ENAMETOOLONG;
		path = def;
	}
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);

	struct cc_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	int err;
	c->rx = malloc(CTL_MSG_MAX);
	if (!c->rx) {
		free(c);
		return -ENOMEM;
	}
	c->fork_guard = mmap(NULL, FORK_GUARD_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->fork_guard == MAP_FAILED ||
	    madvise((void *)c->fork_guard, FORK_GUARD_SIZE, MADV_WIPEONFORK)) {
		err = c->fork_guard == MAP_FAILED ? -ENOMEM : -errno;
		if (c->fork_guard != MAP_FAILED)
			munmap((void *)c->fork_guard, FORK_GUARD_SIZE);
		free(c->rx);
		free(c);
		return err;
	}
	c->fork_guard[0] = 1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->sync_lock, NULL);
	pthread_mutex_init(&c->stream_lock, NULL);
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		err = -errno;
		goto err_free;
	}
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto err_close;
	}
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
		c->daemon_pid = cred.pid;
	/* Once per process is enough, but a forked child that connects
	 * anew must not count on its parent's; again is free. */
	c->membarrier =
		syscall(__NR_membarrier,
			MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
	err = conn_hello(c, client_name);
	if (err)
		goto err_close;
	*out = c;
	return 0;

err_close:
	close(c->fd);
err_free:
	free(c->tag_len);
	free(c->sess_alg);
	free(c->rx);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->sync_lock);
	pthread_mutex_destroy(&c->stream_lock);
	munmap((void *)c->fork_guard, FORK_GUARD_SIZE);
	free(c);
	return err;
}

void cc_disconnect(struct cc_conn *c)
{
	if (!c)
		return;
	/* In a child of fork() only our copies go: nothing is sent (see
	 * cc_queue_close), and closing our copy of the socket leaves the
	 * parent's connection open. */
	cc_queue_close(c->sync_q);
	c->sync_q = NULL;
	cc_queue_close(c->stream_q);
	c->stream_q = NULL;
	close(c->fd); /* the daemon drops our sessions and queues */
	/* Queues the caller left open go with the connection. */
	while (c->queues) {
		struct cc_queue *q = c->queues;
		c->queues = q->next;
		queue_free(q);
	}
	free(c->tag_len);
	free(c->sess_alg);
	free(c->rx);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->sync_lock);
	pthread_mutex_destroy(&c->stream_lock);
	munmap((void *)c->fork_guard, FORK_GUARD_SIZE);
	free(c);
}

int cc_session_create(struct cc_conn *c, const struct cc_session_params *p,
		      uint32_t *session_id)
{
	if (!p)
		return -EINVAL;
	/* a key pair's DER is longer than any other key (wire.h) */
	size_t key_max = cc_alg_kind(p->alg) == CC_KIND_PKEY ? CTL_PKEY_MAX
							     : CTL_KEY_MAX;
	if ((p->key_len && !p->key) || p->key_len > key_max ||
	    (p->auth_key_len && !p->auth_key) || p->auth_key_len > CTL_KEY_MAX)
		return -EINVAL;
	Cryptod__CreateSession m = CRYPTOD__CREATE_SESSION__INIT;
	m.alg = (Cryptod__Algorithm)p->alg;
	m.key.data = (uint8_t *)p->key;
	m.key.len = p->key_len;
	m.auth_key.data = (uint8_t *)p->auth_key;
	m.auth_key.len = p->auth_key_len;
	m.tag_len = p->tag_len;
	m.engine = (char *)(p->engine ? p->engine : "");
	m.key_name = (char *)(p->key_name ? p->key_name : "");
	m.key_version = p->key_version;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_CREATE_SESSION;
	req.create_session = &m;

	pthread_mutex_lock(&c->lock);
	Cryptod__Envelope *rep;
	int err = conn_call(c, &req, &rep, NULL, NULL);
	if (!err) {
		if (rep->body_case ==
			    CRYPTOD__ENVELOPE__BODY_CREATE_SESSION_REPLY &&
		    rep->create_session_reply->session_id > 0 &&
		    rep->create_session_reply->session_id <= c->max_sessions) {
			uint32_t id = rep->create_session_reply->session_id;
			/* A named key's session: the daemon says its alg. */
			enum cc_alg alg =
				p->alg ? p->alg
				       : (enum cc_alg)
						 rep->create_session_reply->alg;
			/* a key pair writes no tag (its tag column is the
			 * room an output needs: cc_pk.c) */
			unsigned t = cc_alg_kind(alg) == CC_KIND_PKEY ? 0
				     : p->tag_len ? p->tag_len
						  : cc_alg_tag_len(alg);
			c->tag_len[id] = t;
			c->sess_alg[id] = alg;
			*session_id = id;
		} else {
			err = -EPROTO;
		}
		wire_free(rep);
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

int cc_session_destroy(struct cc_conn *c, uint32_t session_id)
{
	Cryptod__DestroySession m = CRYPTOD__DESTROY_SESSION__INIT;
	m.session_id = session_id;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_DESTROY_SESSION;
	req.destroy_session = &m;
	/* The table entry goes under the same lock as the call: once the
	 * daemon freed the id, another thread's create may get it back and
	 * fill the entry, which must not be cleared after that. */
	pthread_mutex_lock(&c->lock);
	int err = conn_simple_locked(c, &req);
	if (!err && session_id <= c->max_sessions)
		c->tag_len[session_id] = c->sess_alg[session_id] = 0;
	pthread_mutex_unlock(&c->lock);
	return err;
}
