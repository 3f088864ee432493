/* SPDX-License-Identifier: MIT */
/*
 * The connection every context and thread of a provider instance shares,
 * opened on first use, and the sessions contexts create on it.
 *
 * A connection that fails (the daemon restarted or went away) is retired:
 * the next user opens a new one, and contexts re-create their sessions
 * there from the keys they keep. Holders of the old one keep it alive by
 * their reference until they let go, so nobody frees a cc_conn another
 * thread is inside.
 *
 * libcryptoclient serialises control calls (sessions) per connection;
 * the ops themselves run on each thread's own queue (prov_io.c).
 *
 * After fork() the connection is the parent's: prov_conn_get retires it
 * unused in the child (prov_fork_count) and opens the child's own.
 */
#include "prov.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void conn_free(struct prov_conn *c)
{
	/* The daemon wipes the connection's sessions when it closes. */
	cc_disconnect(c->cc);
	if (c->forks == prov_fork_count())
		pthread_mutex_destroy(&c->lock); /* else a parent's thread's */
	free(c);
}

void prov_conn_put(struct prov_conn *c)
{
	if (c && atomic_fetch_sub(&c->refs, 1) == 1)
		conn_free(c);
}

int prov_conn_get(struct prov *p, struct prov_conn **out)
{
	pthread_mutex_lock(&p->lock);
	struct prov_conn *c = p->conn;
	if (c && c->forks != prov_fork_count()) {
		/* We are a child of fork(): that connection is the parent's.
		 * Retire it unused (the library sends nothing from a child)
		 * and open our own. */
		atomic_store(&c->broken, 1);
		p->conn = NULL;
		prov_conn_put(c);
		c = NULL;
	}
	if (c) {
		atomic_fetch_add(&c->refs, 1);
		pthread_mutex_unlock(&p->lock);
		*out = c;
		return 0;
	}
	/* Connect under the lock: concurrent first users wait for one
	 * connection rather than each opening their own. */
	c = calloc(1, sizeof(*c));
	if (!c) {
		pthread_mutex_unlock(&p->lock);
		return -ENOMEM;
	}
	/* Named after the program (p->name, taken when the provider was
	 * loaded), so that cryptoctl clients and stats show which program
	 * sends what ("openssl/curl"). */
	char name[64];
	snprintf(name, sizeof(name), "openssl/%s", p->name);
	int err = cc_connect(p->socket, name, &c->cc);
	if (err) {
		pthread_mutex_unlock(&p->lock);
		free(c);
		char path[108] = "";
		if (!p->socket)
			(void)cc_default_socket_path(path, sizeof(path));
		PROV_ERR(p, PROV_R_UNREACHABLE, "%s: %s",
			 p->socket ? p->socket : path, cc_strerror(err));
		return err;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->forks = prov_fork_count();
	atomic_init(&c->refs, 2); /* p->conn's, and the caller's */
	p->conn = c;
	pthread_mutex_unlock(&p->lock);
	*out = c;
	return 0;
}

/* Errors that leave the connection (or its shared queues) unusable. */
static int conn_dead(int err)
{
	return err == -EPIPE || err == -ECONNRESET || err == -ENOTCONN ||
	       err == -ETIMEDOUT || err == -EBADF || err == CC_ERR_SHUTDOWN;
}

int prov_op_reason(int err)
{
	/* An op sent again on a new connection finds no daemon. */
	if (err == -ECONNREFUSED || err == -ENOENT || err == -EACCES)
		return PROV_R_UNREACHABLE;
	return conn_dead(err) ? PROV_R_GONE : PROV_R_OP;
}

int prov_conn_check(struct prov *p, struct prov_conn *c, int err)
{
	if (!c || !conn_dead(err))
		return 0;
	atomic_store(&c->broken, 1);
	pthread_mutex_lock(&p->lock);
	int mine = p->conn == c;
	if (mine)
		p->conn = NULL;
	pthread_mutex_unlock(&p->lock);
	if (mine)
		prov_conn_put(c); /* p->conn's reference */
	return 1;
}

void prov_conn_fini(struct prov *p)
{
	struct prov_conn *c = p->conn;
	p->conn = NULL;
	prov_conn_put(c);
}

void prov_sess_close(struct prov_sess *s)
{
	if (s->conn) {
		if (s->id && !atomic_load(&s->conn->broken)) {
			/* libcryptoclient clears its per-session table entry
			 * after the daemon's reply, outside its own lock: a
			 * create on another thread that got the freed id in
			 * the meantime would lose its entry. Creates and
			 * destroys are serialised here until it is fixed. */
			pthread_mutex_lock(&s->conn->lock);
			(void)cc_session_destroy(s->conn->cc, s->id);
			pthread_mutex_unlock(&s->conn->lock);
		}
		prov_conn_put(s->conn);
	}
	s->conn = NULL;
	s->id = 0;
}

int prov_sess_open(struct prov *p, struct prov_sess *s, enum cc_alg alg,
		   const void *key, size_t key_len, unsigned tag_len)
{
	if (s->id && s->conn && !atomic_load(&s->conn->broken) &&
	    s->alg == alg && s->tag_len == tag_len)
		return 0;
	prov_sess_close(s);
	struct prov_conn *c;
	int err = prov_conn_get(p, &c);
	if (err)
		return err;
	struct cc_session_params sp = {
		.alg = alg,
		.key = key,
		.key_len = key_len,
		.tag_len = tag_len,
	};
	uint32_t id;
	pthread_mutex_lock(&c->lock); /* see prov_sess_close */
	err = cc_session_create(c->cc, &sp, &id);
	pthread_mutex_unlock(&c->lock);
	if (err) {
		prov_conn_check(p, c, err);
		prov_conn_put(c);
		return err;
	}
	s->conn = c;
	s->id = id;
	s->alg = alg;
	s->tag_len = tag_len;
	return 0;
}

int prov_hash_sess(struct prov *p, struct prov_conn **conn, enum cc_alg alg,
		   uint32_t *id)
{
	if (alg < CC_ALG_SHA1 || alg > CC_ALG_SHA512)
		return -EINVAL;
	struct prov_conn *c;
	int err = prov_conn_get(p, &c);
	if (err)
		return err;
	/* One keyless session per digest and connection, kept until the
	 * connection goes: digests are many and short. */
	pthread_mutex_lock(&c->lock);
	if (!c->hash_sess[alg]) {
		struct cc_session_params sp = { .alg = alg };
		err = cc_session_create(c->cc, &sp, &c->hash_sess[alg]);
	}
	*id = c->hash_sess[alg];
	pthread_mutex_unlock(&c->lock);
	if (err) {
		prov_conn_check(p, c, err);
		prov_conn_put(c);
		return err;
	}
	*conn = c;
	return 0;
}
