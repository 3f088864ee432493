/* SPDX-License-Identifier: MIT */
#include "fdreap.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* The queue is a stack that grows: every entry is an open fd of ours, so
 * RLIMIT_NOFILE bounds it. Guarded by lock, which no one holds across a
 * syscall. The array is never freed: a detached reaper may still use it
 * at exit. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;
	int *fd; /* owned */
	unsigned n, cap;
	int running, stop;
} reap = { .lock = PTHREAD_MUTEX_INITIALIZER,
	   .more = PTHREAD_COND_INITIALIZER };

/* A socket then closes at once and sends what it still has in the
 * background, instead of waiting out the sender's SO_LINGER. */
static void fdreap_close(int fd)
{
	struct linger off = { 0 };
	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &off, sizeof(off));
	close(fd);
}

static void *fdreap_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&reap.lock);
	for (;;) {
		while (!reap.n && !reap.stop)
			pthread_cond_wait(&reap.more, &reap.lock);
		if (!reap.n)
			break;
		int fd = reap.fd[--reap.n];
		pthread_mutex_unlock(&reap.lock);
		fdreap_close(fd); /* may take long: that is what we are for */
		pthread_mutex_lock(&reap.lock);
	}
	reap.running = 0;
	pthread_mutex_unlock(&reap.lock);
	return NULL;
}

int fdreap_start(void)
{
	pthread_t t;
	pthread_attr_t a;
	if (pthread_attr_init(&a))
		return -ENOMEM;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&reap.lock);
	reap.stop = 0;
	int err = reap.running ? 0 : pthread_create(&t, &a, fdreap_main, NULL);
	if (!err) {
		reap.running = 1;
		pthread_setname_np(t, "cryptod-reap");
	}
	pthread_mutex_unlock(&reap.lock);
	pthread_attr_destroy(&a);
	return -err;
}

void fdreap_push(int fd)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&reap.lock);
	if (reap.running && reap.n == reap.cap) {
		unsigned cap = reap.cap ? 2 * reap.cap : 256;
		int *p = realloc(reap.fd, cap * sizeof(*p));
		if (p) {
			reap.fd = p;
			reap.cap = cap;
		}
	}
	int queued = reap.running && reap.n < reap.cap;
	if (queued) {
		reap.fd[reap.n++] = fd;
		pthread_cond_signal(&reap.more);
	}
	pthread_mutex_unlock(&reap.lock);
	if (!queued)
		fdreap_close(fd);
}

unsigned fdreap_backlog(void)
{
	pthread_mutex_lock(&reap.lock);
	unsigned n = reap.n;
	pthread_mutex_unlock(&reap.lock);
	return n;
}

void fdreap_stop(void)
{
	pthread_mutex_lock(&reap.lock);
	reap.stop = 1;
	pthread_cond_signal(&reap.more);
	pthread_mutex_unlock(&reap.lock);
}
