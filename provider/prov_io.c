/* SPDX-License-Identifier: MIT */
/*
 * The provider's data path: one queue per thread on the shared
 * connection, ops submitted zero-copy through its arena, and waiting that
 * pauses an OpenSSL ASYNC_JOB instead of blocking its thread.
 *
 * Each thread that runs an operation gets its own queue (a pthread key's
 * value, closed when the thread exits), so threads no longer take turns
 * on the connection's one copying queue. A stream (an AEAD message, a
 * digest or MAC past its buffer) is bound to the queue where it began:
 * a context that moves to another thread keeps sending its pieces
 * there, which is why a queue has a lock (uncontended in the common
 * case of one thread).
 *
 * Waiting: a thread spins briefly (small ops complete in microseconds;
 * a signature or derive longer, PIO_PK_SPIN_NS), then sleeps on the
 * queue's completion doorbell. Inside an ASYNC_JOB
 * (openssl speed -async_jobs, async-aware servers) it registers that
 * doorbell as the job's wait fd and pauses the job instead, so one
 * thread keeps many ops in flight; whoever holds the queue's lock next
 * takes every completion that arrived and files it in its op's result
 * slot (the slot index travels in user_data), where the paused job finds
 * it when it is resumed.
 *
 * Bigger ops than the arena comfortably holds (PIO_OP_MAX) and ops that
 * find no room take the library's copying cc_crypt() instead, which is
 * synchronous.
 *
 * fork(): a child must not touch its parent's socket or rings. The
 * library refuses (-ECHILD); here an atfork handler bumps a counter, and
 * connections and queues made before it are retired unused in the child
 * (prov_conn_get, pio_queue), so the child reconnects.
 */
#include "prov.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cryptod/clock.h>
#include <cryptod/pump.h>

#include <openssl/async.h>
#include <openssl/crypto.h>

enum {
	PIO_ENTRIES = 128,    /* ring entries per thread queue */
	PIO_SLOTS = 256,      /* result slots: ops submitted, not yet read */
	PIO_ARENA = 8 << 20,  /* per thread queue */
	PIO_OP_MAX = 2 << 20, /* longer one-shot ops take cc_crypt() */
	PIO_SPIN_NS = 20000,  /* spin before sleeping, outside a job */
	/* how long a job's op may wait on a doorbell left readable (the
	 * program's loop polling the thread's jobs) before it sleeps: a
	 * round of 32 jobs of 16 KiB ops takes about 100 us */
	PIO_JOB_SPIN_NS = 200000,
	/* how long a signature or derive spins before sleeping, outside a
	 * job: P-256, Ed25519 and X25519 take 20-60 us in the daemon, and
	 * arming the doorbell, the daemon's ring and the wake-up cost about
	 * as much again (bench/pkey-speed.sh); an RSA signature (~0.5 ms)
	 * sleeps after this */
	PIO_PK_SPIN_NS = 150000,
	/* ops of a thread's jobs sent to the daemon in one burst (pq_submit):
	 * one tail store and one line transfer for them all, and a worker
	 * that finds them together fills ipsec-mb's lanes with them */
	PIO_STAGE = 8,
	PIO_PREFETCH = 4096, /* an output's bytes fetched when it is reaped */
};

/* An op's outcome, filed by whoever reaps it. */
struct pio_res {
	int busy;   /* taken by a submitter, not read back yet */
	int staged; /* in pq->staged, not sent yet */
	int done;
	int32_t status;
	uint32_t len;
	/* where the op's output lands, to be fetched when it is reaped */
	const uint8_t *out;
	uint32_t out_len;
};

struct pio_q {
	struct prov *p;
	struct prov_conn *conn; /* a reference */
	struct cc_queue *q;
	unsigned forks;	      /* prov_forks when it was made */
	atomic_uint refs;     /* the thread's, and each bound stream's */
	atomic_int dead;      /* nothing in it can be trusted or reused */
	pthread_mutex_t lock; /* q, res, waiting, unread, poked */
	unsigned waiting;     /* sleepers armed on the doorbell */
	/* Whoever reaps files others' results too, and may drain the
	 * daemon's doorbell they sleep on: it then pokes efd, which every
	 * sleeper also waits on, and which stays readable until the results
	 * filed are all taken (level-triggered, so no sleeper misses it).
	 * Sleepers wait on epfd, an epoll set of both: one fd, as an
	 * ASYNC_JOB's waiter (openssl speed, QAT-style servers) expects one
	 * per job. */
	int efd, epfd;
	unsigned unread; /* results filed, not yet taken */
	int poked;
	unsigned free_hint; /* where to look for a free slot */
	/* how long a synchronous wait spins: PIO_SPIN_NS, PIO_PK_SPIN_NS
	 * while pio_pk waits (another op of the queue meanwhile spins as
	 * long: harmless) */
	uint64_t spin_ns;
	/* Ops of this thread's jobs not sent yet, oldest first (pq_submit),
	 * and how many went to the ring: in all, and before the doorbell was
	 * last armed (pq_sleep). */
	struct cc_op staged[PIO_STAGE];
	unsigned nstaged;
	unsigned sent, sent_at_arm;
	struct pio_res res[PIO_SLOTS];
	struct pio_q *next, **pprev; /* p->queues, under p->lock */
};

/* One stream: a message of many pieces on one queue. */
struct pio_stream {
	struct pio_q *pq; /* a reference */
	uint32_t session, handle;
	enum cc_dir dir;
	unsigned tag_len;
	int started; /* FIRST went */
	int open;    /* the daemon holds its state */
	uint8_t iv[CC_IV_MAX];
	unsigned iv_len;
	uint8_t *aad; /* owned until FIRST */
	size_t aad_len;
};

/* ---- queues ---- */

static void pq_free(struct pio_q *pq)
{
	struct prov *p = pq->p;
	pthread_mutex_lock(&p->lock);
	if (pq->pprev) {
		*pq->pprev = pq->next;
		if (pq->next)
			pq->next->pprev = pq->pprev;
	}
	pthread_mutex_unlock(&p->lock);
	/* In a child of fork() the library only unmaps its copy. */
	cc_queue_close(pq->q);
	if (pq->efd >= 0)
		close(pq->efd);
	if (pq->epfd >= 0)
		close(pq->epfd);
	prov_conn_put(pq->conn);
	/* Not destroyed in a child: its holder may have been another of
	 * the parent's threads. */
	if (pq->forks == prov_fork_count())
		pthread_mutex_destroy(&pq->lock);
	free(pq);
}

static void pq_put(struct pio_q *pq)
{
	if (pq && atomic_fetch_sub(&pq->refs, 1) == 1)
		pq_free(pq);
}

static void pio_tls_dtor(void *v)
{
	pq_put(v); /* the exiting thread's reference */
}

int prov_io_init(struct prov *p)
{
	prov_fork_watch();
	if (pthread_key_create(&p->tls_key, pio_tls_dtor))
		return -EAGAIN;
	p->tls_key_ok = 1;
	return 0;
}

void prov_io_fini(struct prov *p)
{
	/* No destructor runs after this: the module may be unloaded. The
	 * queues threads still hold go now; nobody may use the provider
	 * any more. */
	if (p->tls_key_ok)
		pthread_key_delete(p->tls_key);
	p->tls_key_ok = 0;
	pthread_mutex_lock(&p->lock);
	struct pio_q *pq = p->queues;
	p->queues = NULL;
	for (struct pio_q *x = pq; x; x = x->next)
		x->pprev = NULL;
	pthread_mutex_unlock(&p->lock);
	while (pq) {
		struct pio_q *next = pq->next;
		pq_free(pq);
		pq = next;
	}
}

static int pq_usable(const struct pio_q *pq, const struct prov_conn *conn)
{
	return pq->conn == conn && pq->forks == prov_fork_count() &&
	       !atomic_load(&pq->dead) && !atomic_load(&conn->broken);
}

/* The calling thread's queue on conn, made on first use; a reference. */
static int pio_queue(struct prov *p, struct prov_conn *conn, struct pio_q **out)
{
	if (!p->tls_key_ok)
		return -ENODEV;
	struct pio_q *pq = pthread_getspecific(p->tls_key);
	if (pq && !pq_usable(pq, conn)) {
		(void)pthread_setspecific(p->tls_key, NULL);
		pq_put(pq);
		pq = NULL;
	}
	if (!pq) {
		pq = calloc(1, sizeof(*pq));
		if (!pq)
			return -ENOMEM;
		struct cc_queue_params qp = { .sq_entries = PIO_ENTRIES,
					      .cq_entries = PIO_ENTRIES,
					      .arena_size = PIO_ARENA,
					      .coalesce = 1 };
		pq->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (pq->efd < 0) {
			free(pq);
			return -errno;
		}
		int err = cc_queue_open(conn->cc, &qp, &pq->q);
		if (err) {
			close(pq->efd);
			free(pq);
			return err;
		}
		pq->epfd = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN };
		if (pq->epfd < 0 ||
		    epoll_ctl(pq->epfd, EPOLL_CTL_ADD, cc_queue_fd(pq->q),
			      &ev) ||
		    epoll_ctl(pq->epfd, EPOLL_CTL_ADD, pq->efd, &ev)) {
			err = -errno;
			cc_queue_close(pq->q);
			close(pq->efd);
			if (pq->epfd >= 0)
				close(pq->epfd);
			free(pq);
			return err;
		}
		pq->p = p;
		pq->spin_ns = PIO_SPIN_NS;
		pq->forks = prov_fork_count();
		atomic_fetch_add(&conn->refs, 1);
		pq->conn = conn;
		atomic_init(&pq->refs, 1); /* the thread's */
		pthread_mutex_init(&pq->lock, NULL);
		pthread_mutex_lock(&p->lock);
		pq->next = p->queues;
		if (pq->next)
			pq->next->pprev = &pq->next;
		pq->pprev = &p->queues;
		p->queues = pq;
		pthread_mutex_unlock(&p->lock);
		if (pthread_setspecific(p->tls_key, pq)) {
			pq_put(pq);
			return -ENOMEM;
		}
	}
	atomic_fetch_add(&pq->refs, 1);
	*out = pq;
	return 0;
}

/* Everything in flight is lost: buffers may still be written, so the
 * queue is never used again. Caller holds pq->lock. */
static int pq_kill(struct pio_q *pq, int err)
{
	atomic_store(&pq->dead, 1);
	prov_conn_check(pq->p, pq->conn, err == -EPROTO ? -EPIPE : err);
	return err;
}

/* ---- submission and completion ---- */

static int slot_take(struct pio_q *pq)
{
	for (unsigned i = 0; i < PIO_SLOTS; i++) {
		unsigned s = (pq->free_hint + i) % PIO_SLOTS;
		if (!pq->res[s].busy) {
			pq->res[s] = (struct pio_res){ .busy = 1 };
			pq->free_hint = (s + 1) % PIO_SLOTS;
			return (int)s;
		}
	}
	return -1;
}

/* An op's outcome, for its submitter to find; sleepers are told (efd). */
static void res_file(struct pio_q *pq, int s, int32_t status, uint32_t len)
{
	pq->res[s].status = status;
	pq->res[s].len = len;
	pq->res[s].done = 1;
	/* Its output was written on the worker's core: ask for its lines
	 * now, so that they cross while this thread goes on (the job that
	 * copies them out runs later, mostly another one). */
	const uint8_t *o = pq->res[s].out;
	uint32_t n = pq->res[s].out_len < PIO_PREFETCH ? pq->res[s].out_len
						       : PIO_PREFETCH;
	for (uint32_t i = 0; i < n; i += 64)
		__builtin_prefetch(o + i, 0, 2);
	pq->unread++;
	if (pq->waiting && !pq->poked) {
		(void)eventfd_write(pq->efd, 1);
		pq->poked = 1;
	}
}

/* File every completion that arrived. Caller holds the lock. */
static int pq_reap(struct pio_q *pq)
{
	struct cc_completion cpl[32];
	for (;;) {
		int n = cc_dequeue_burst(pq->q, cpl, 32);
		if (n < 0)
			return pq_kill(pq, n);
		for (int i = 0; i < n; i++) {
			uint64_t s = cpl[i].user_data;
			if (s >= PIO_SLOTS || !pq->res[s].busy ||
			    pq->res[s].done || pq->res[s].staged)
				return pq_kill(pq, -EPROTO);
			res_file(pq, (int)s, cpl[i].status, cpl[i].len);
		}
		if (n < 32)
			return 0;
	}
}

/*
 * Send the staged ops, oldest first, as far as the ring takes them (what
 * it does not stays staged). An op the library refuses (a bad pointer or
 * field: a bug here) completes at once with the library's error as its
 * status. 0, or -errno when the queue is dead. Caller holds the lock.
 */
static int pq_send(struct pio_q *pq)
{
	unsigned i = 0;
	while (i < pq->nstaged && !atomic_load(&pq->dead)) {
		int n = cc_enqueue_burst(pq->q, pq->staged + i,
					 pq->nstaged - i);
		if (n == -EPIPE || n == -ECHILD)
			return pq_kill(pq, n);
		if (n == 0)
			break; /* the ring is full */
		unsigned k = n < 0 ? 1 : (unsigned)n;
		for (unsigned j = i; j < i + k; j++)
			pq->res[pq->staged[j].user_data].staged = 0;
		if (n < 0)
			res_file(pq, (int)pq->staged[i].user_data, n, 0);
		else
			pq->sent += k;
		i += k;
	}
	pq->nstaged -= i;
	memmove(pq->staged, pq->staged + i, pq->nstaged * sizeof(*pq->staged));
	return atomic_load(&pq->dead) ? -EPIPE : 0;
}

/*
 * One call's waiting, across its pq_sleep()s: the ASYNC_JOB it runs in
 * (NULL: none), looked up once per call, and when its wait began: 0
 * before the first, PIO_UNTIMED after a job's first pause, which reads
 * no clock (most ops are done when their job is next resumed); the
 * clock starts at its second.
 */
struct pio_wait {
	ASYNC_JOB *job;
	uint64_t since;
};

enum { PIO_UNTIMED = 1 };

static struct pio_wait pio_wait_here(void)
{
	return (struct pio_wait){ .job = ASYNC_get_current_job() };
}

/* Wait until one more completion may have arrived: a job pauses, a
 * thread spins briefly, then sleeps. Caller holds the lock, which is let
 * go meanwhile. */
static int pq_sleep(struct pio_q *pq, struct pio_wait *pw)
{
	ASYNC_JOB *job = pw->job;
	const int first = !pw->since;
	uint64_t t = 0;
	if (!(job && first)) {
		t = crd_now_ns();
		if (first || pw->since == PIO_UNTIMED)
			pw->since = t;
	} else {
		pw->since = PIO_UNTIMED;
	}
	if (!job && pq->nstaged) {
		/* a thread's own wait, its paused jobs' ops staged: they go
		 * first (pq_submit sent them already, but for a full ring) */
		int err = pq_send(pq);
		if (err)
			return err;
	}
	if (!job && t - pw->since < pq->spin_ns) {
		/* Look at the ring, holding the lock (no other reaper
		 * could take what lands meanwhile), and let it go with a
		 * yield only once per CRD_SPIN_YIELD_NS (clock.h): a
		 * yield at every look cost a 1 KiB op's round trip as
		 * much again under a hypervisor. */
		for (unsigned i = 1; !cc_queue_ready(pq->q); i++) {
			crd_cpu_relax();
			if (i % 16 == 0 &&
			    crd_now_ns() - t >= CRD_SPIN_YIELD_NS) {
				pthread_mutex_unlock(&pq->lock);
				sched_yield();
				pthread_mutex_lock(&pq->lock);
				break;
			}
		}
		return 0;
	}
	/* Each sleep arms the doorbell for one ring (two system calls, and
	 * the daemon's core pays one of them), not for every completion.
	 * A job pauses without arming while the fd is readable already (a
	 * ring not yet drained) or will be at the next completion (an arm
	 * not yet answered): the program's loop then runs the thread's
	 * jobs round after round, one select() a round, as long as the
	 * daemon keeps up; the first pause for an op always may, later
	 * ones for PIO_JOB_SPIN_NS from the second. Past that the job
	 * drains and arms, so that it sleeps, and so that a daemon's going
	 * away (the doorbell's end of file) reaches cc_wait_prepare_once,
	 * which says -EPIPE, instead of waking the job for ever.
	 *
	 * Staged ops (pq_submit) stay staged through a pause only while the
	 * fd is sure to turn readable without them, so that the program's
	 * loop resumes their jobs, which send them (pq_wait): it is readable
	 * now, or it is armed and an op sent since will answer the arm (no
	 * one clears the arm while this job waits). Else they go first. */
	int hold = job && (first || t - pw->since < PIO_JOB_SPIN_NS) &&
		   cc_wait_pending(pq->q);
	if (pq->nstaged && !(hold && pq->sent != pq->sent_at_arm)) {
		int err = pq_send(pq);
		if (err)
			return err;
	}
	if (!hold)
		pq->sent_at_arm = pq->sent;
	int w = hold ? 0 : cc_wait_prepare_once(pq->q);
	if (w < 0)
		return pq_kill(pq, w);
	if (w == 1)
		return 0;
	/* Readable at the daemon's doorbell or a fellow reaper's poke. */
	int fd = pq->epfd;
	pq->waiting++;
	pthread_mutex_unlock(&pq->lock);
	int err = 0, paused = 0;
	if (job) {
		ASYNC_WAIT_CTX *wc = ASYNC_get_wait_ctx(job);
		if (wc && ASYNC_WAIT_CTX_set_wait_fd(wc, pq, fd, NULL, NULL)) {
			paused = ASYNC_pause_job();
			(void)ASYNC_WAIT_CTX_clear_fd(wc, pq);
			if (!paused)
				err = -EIO;
		}
	}
	if (!paused && !err) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (!t) /* a job's first pause, but no pause */
			t = pw->since = crd_now_ns();
		int64_t left =
			CRD_WAIT_MAX_MS - (int64_t)((t - pw->since) / 1000000);
		int r = left > 0 ? poll(&pf, 1, (int)left) : 0;
		if (r == 0)
			err = -ETIMEDOUT;
		else if (r < 0 && errno != EINTR)
			err = -errno;
	}
	pthread_mutex_lock(&pq->lock);
	if (--pq->waiting == 0)
		cc_wait_cancel(pq->q);
	return err ? pq_kill(pq, err) : 0;
}

/* Block until slot s is done. fresh: s was submitted just now, so a job
 * pauses before it first looks at the ring: the op cannot be there yet,
 * and the look reads a line the worker has most likely written since
 * (a transfer from its core, once per op). Caller holds the lock. */
static int pq_wait(struct pio_q *pq, int s, int fresh, ASYNC_JOB *job)
{
	struct pio_wait pw = { .job = job };
	int look = !fresh || !job;
	for (;; look = 1) {
		if (atomic_load(&pq->dead))
			return -EPIPE;
		/* back from a pause with s still staged: it goes now */
		int err = look && pq->res[s].staged ? pq_send(pq) : 0;
		if (!err && look)
			err = pq_reap(pq);
		if (err)
			return err;
		if (pq->res[s].done)
			return 0;
		err = pq_sleep(pq, &pw);
		if (err)
			return err;
	}
}

/*
 * Submit op in slot s (user_data set here). 0, 1 (no room in the ring:
 * wait for something and retry) or -errno.
 *
 * Inside an ASYNC_JOB (job) the op is staged, not sent: the
 * program's next job most likely brings another (openssl speed
 * -async_jobs, an async server's connections), and PIO_STAGE of them go
 * in one burst. Its pointers (the IV) stay valid, as its job waits for
 * it (pq_wait) before it leaves; a job back from a pause sends its own,
 * and pq_sleep says when a pause must send them first. job NULL also
 * where op's pointers do not outlive this call. A thread's own op sends
 * what its jobs staged with it, in order.
 */
static int pq_submit(struct pio_q *pq, struct cc_op *op, int s, ASYNC_JOB *job)
{
	op->user_data = (uint64_t)s;
	pq->res[s].out = op->dst ? op->dst : op->src;
	pq->res[s].out_len = op->len;
	if (job && pq->nstaged < PIO_STAGE) {
		pq->staged[pq->nstaged++] = *op;
		pq->res[s].staged = 1;
		return pq->nstaged == PIO_STAGE ? pq_send(pq) : 0;
	}
	int err = pq_send(pq);
	if (err)
		return err;
	if (pq->nstaged)
		return 1; /* the ring is full */
	int n = cc_enqueue_burst(pq->q, op, 1);
	if (n == 1) {
		pq->sent++;
		return 0;
	}
	if (n == 0)
		return 1;
	return n == -EPIPE || n == -ECHILD ? pq_kill(pq, n) : n;
}

static uint8_t *pq_alloc(struct pio_q *pq, size_t len)
{
	return cc_buf_alloc(pq->q, len ? len : 1);
}

/* No room (arena or result slots): wait for completions, unless nothing
 * is in flight, when only the paused jobs that hold the room could give
 * it back and none of them runs before we return: -ENOMEM (pio_crypt
 * then takes the copying path). */
static int pq_no_room(struct pio_q *pq, struct pio_wait *pw)
{
	int err = pq_send(pq);
	if (!err)
		err = pq_reap(pq);
	if (err)
		return err;
	if (!cc_in_flight(pq->q))
		return -ENOMEM;
	return pq_sleep(pq, pw);
}

/* A done result taken: its slot is free again. */
static void res_take(struct pio_q *pq, int s)
{
	pq->res[s].busy = 0;
	if (--pq->unread == 0 && pq->poked) {
		eventfd_t v;
		(void)eventfd_read(pq->efd, &v);
		pq->poked = 0;
	}
}

/* A piece is done: its buffer back to the arena, as it is. The arena is
 * this process's own memory, shared with the daemon only, which saw the
 * data anyway; the program holds the same bytes in its own buffers. A
 * wipe would be a third pass over every byte (the bound is a
 * copy in and a copy out), for nothing the program's own copies do not
 * give away: buffers are reused by the next ops. Keys never travel in
 * it (they go with the session, over the control socket). The library's
 * streams wipe theirs (client-lib/stream.c): their arena may sit idle
 * with what is left in it until the next stream. */
static void piece_release(struct pio_q *pq, uint8_t *buf, int slot)
{
	cc_buf_free(pq->q, buf);
	res_take(pq, slot);
}

/*
 * The pump's policies here (cryptod/pump.h): results are filed in slots
 * by whoever reaps (the slot travels in user_data), waiting pauses an
 * ASYNC_JOB, no room means waiting for the ops of others on this queue,
 * and a one-shot op's output may stay in the arena (keep).
 */
struct pio_pump {
	struct pio_q *pq;
	struct pio_wait w; /* pq_sleep's, across the call */
	/* A one-shot op whose buffer the caller keeps (pio_crypt_keep):
	 * the output stays in the arena, *keep gets it. */
	uint8_t **keep;
};

static uint8_t *pio_pump_alloc(void *ctx, size_t len)
{
	struct pio_pump *pp = ctx;
	return cc_buf_alloc(pp->pq->q, len);
}

static void pio_pump_free(void *ctx, uint8_t *buf)
{
	struct pio_pump *pp = ctx;
	cc_buf_free(pp->pq->q, buf);
}

static int pio_pump_submit(void *ctx, struct cc_op *op, struct pump_piece *pc)
{
	struct pio_pump *pp = ctx;
	int s = slot_take(pp->pq);
	if (s < 0)
		return PUMP_NO_ROOM;
	int rc = pq_submit(pp->pq, op, s, pp->w.job);
	if (rc) {
		pp->pq->res[s].busy = 0;
		return rc < 0 ? rc : PUMP_RING_FULL;
	}
	pc->id = (uint64_t)s;
	return 0;
}

/* Our own pieces complete without help: take them first. Else a full
 * ring empties as the daemon works (sleep); other room is held by others'
 * ops, or by paused jobs (pq_no_room). */
static int pio_pump_room(void *ctx, int why, unsigned in_flight)
{
	struct pio_pump *pp = ctx;
	if (in_flight)
		return 1;
	return why == PUMP_RING_FULL ? pq_sleep(pp->pq, &pp->w)
				     : pq_no_room(pp->pq, &pp->w);
}

/* An error: the queue is dead, its buffers abandoned with it. */
static int pio_pump_wait(void *ctx, struct pump_piece *pc, int32_t *st)
{
	struct pio_pump *pp = ctx;
	/* pump_run: the oldest */
	int w = pq_wait(pp->pq, (int)pc->id, 1, pp->w.job);
	if (!w)
		*st = pp->pq->res[pc->id].status;
	return w;
}

static void pio_pump_done(void *ctx, struct pump_piece *pc, int32_t st)
{
	struct pio_pump *pp = ctx;
	if (pp->keep && st == CC_OK) {
		*pp->keep = pc->buf; /* the caller's now */
		res_take(pp->pq, (int)pc->id);
	} else {
		piece_release(pp->pq, pc->buf, (int)pc->id);
	}
}

static const struct pump_ops pio_pump_ops = {
	.alloc = pio_pump_alloc,
	.free = pio_pump_free,
	.submit = pio_pump_submit,
	.room = pio_pump_room,
	.wait = pio_pump_wait,
	.done = pio_pump_done,
};

/* One call's pieces (pump_run). Caller holds the lock. 0, a CC_ERR
 * status of a piece, or -errno; *done counts the bytes of the pieces
 * that completed. */
static int pq_run(struct pio_q *pq, const struct pump_req *r, uint8_t **keep,
		  size_t *done)
{
	struct pio_pump pp = { .pq = pq, .w = pio_wait_here(), .keep = keep };
	struct pump_out o;
	int err = pump_run(&pio_pump_ops, &pp, r, &o);
	*done = o.done;
	return err;
}

/* Submit op (its buffer buf) in slot s, retried while the ring is full,
 * and wait for it. On an error buf and the slot go back, except on a
 * dead queue, whose buffers and slots stay as they are (the daemon may
 * still write them). Caller holds the lock. */
static int pq_run_op(struct pio_q *pq, struct cc_op *op, int s, uint8_t *buf,
		     struct pio_wait *pw)
{
	int err;
	for (;;) {
		err = pq_submit(pq, op, s, pw->job);
		if (err != 1)
			break;
		err = pq_sleep(pq, pw);
		if (err)
			break;
	}
	if (!err)
		err = pq_wait(pq, s, 1, pw->job);
	if (err && err != -EPIPE && !atomic_load(&pq->dead)) {
		cc_buf_free(pq->q, buf);
		pq->res[s].busy = 0;
	}
	return err;
}

/* The clone op (CC_STREAM_CLONE): src's state into dst's handle, on dst's
 * session. Caller holds the lock; dst->handle is taken. */
static int pq_clone(struct pio_q *pq, const struct pio_stream *src,
		    struct pio_stream *dst)
{
	struct pio_wait pw = pio_wait_here();
	uint8_t *buf = NULL;
	int s = -1, err = 0;
	while (!err && !((buf = pq_alloc(pq, 1)) && (s = slot_take(pq)) >= 0)) {
		if (buf)
			cc_buf_free(pq->q, buf);
		err = pq_no_room(pq, &pw);
	}
	if (err)
		return err;
	struct cc_op op = {
		.session = dst->session,
		.dir = src->dir,
		.src = buf,
		.stream = src->handle,
		.stream_flags = CC_STREAM_CLONE,
		.stream_param = dst->handle,
	};
	err = pq_run_op(pq, &op, s, buf, &pw);
	if (err)
		return err;
	int32_t st = pq->res[s].status;
	cc_buf_free(pq->q, buf);
	res_take(pq, s);
	if (st == CC_OK)
		dst->open = 1;
	return st;
}

/* ---- one-shot ops ---- */

int pio_pk(struct prov *p, struct prov_conn *conn, uint32_t session,
	   enum cc_dir dir, const struct cc_pk_params *pp, const void *in,
	   size_t in_len, const void *aad, size_t aad_len, void *out,
	   size_t *out_len)
{
	/* Layout: in | aad | out, each 64-byte aligned (as cc_pk_op). */
	size_t room = dir == CC_VERIFY ? 0 : *out_len;
	size_t aad_off = (in_len + 63) & ~(size_t)63;
	size_t out_off = aad_off + ((aad_len + 63) & ~(size_t)63);
	if (in_len > PIO_OP_MAX || room > PIO_OP_MAX || aad_len > CRD_AAD_MAX)
		return -EINVAL;
	struct pio_q *pq;
	int err = pio_queue(p, conn, &pq);
	if (err)
		return err;
	pthread_mutex_lock(&pq->lock);
	struct pio_wait pw = pio_wait_here();
	uint8_t *buf = NULL;
	int s = -1;
	err = atomic_load(&pq->dead) ? -EPIPE : 0;
	while (!err && !((buf = pq_alloc(pq, out_off + (room ? room : 1))) &&
			 (s = slot_take(pq)) >= 0)) {
		if (buf)
			cc_buf_free(pq->q, buf);
		buf = NULL;
		err = pq_no_room(pq, &pw);
	}
	if (err)
		goto out;
	memcpy(buf, in, in_len);
	if (aad_len)
		memcpy(buf + aad_off, aad, aad_len);
	struct cc_op op = {
		.session = session,
		.dir = dir,
		.src = buf,
		.dst = room ? buf + out_off : NULL,
		.len = (uint32_t)in_len,
		.aad = aad_len ? buf + aad_off : NULL,
		.aad_len = (uint32_t)aad_len,
		.iv = pp,
		.iv_len = pp ? sizeof(*pp) : 0,
	};
	pq->spin_ns = PIO_PK_SPIN_NS;
	err = pq_run_op(pq, &op, s, buf, &pw);
	pq->spin_ns = PIO_SPIN_NS;
	if (err)
		goto out;
	err = pq->res[s].status;
	size_t n = pq->res[s].len;
	if (!err && room && n > room)
		err = -EPROTO;
	if (!err && room) {
		memcpy(out, buf + out_off, n);
		*out_len = n;
	}
	/* A derive's output is a shared secret. */
	explicit_bzero(buf, out_off + room);
	cc_buf_free(pq->q, buf);
	res_take(pq, s);
out:
	pthread_mutex_unlock(&pq->lock);
	pq_put(pq);
	return err;
}

int pio_crypt(struct prov *p, struct prov_conn *conn, uint32_t session,
	      unsigned tag_len, enum cc_dir dir, const void *iv,
	      unsigned iv_len, const void *aad, size_t aad_len, const void *in,
	      void *out, size_t len, void *tag, int writes)
{
	struct pio_q *pq = NULL;
	if (len <= PIO_OP_MAX && aad_len <= CRD_AAD_MAX &&
	    pio_queue(p, conn, &pq) == 0) {
		const struct pump_req r = {
			.session = session,
			.dir = dir,
			.first = 1,
			.last = 1,
			.iv = iv,
			.iv_len = iv_len,
			.aad = aad,
			.aad_len = aad_len,
			.a = in,
			.na = len,
			.out = writes ? out : NULL,
			.out_if_ok = writes == PIO_WRITES_IF_OK,
			.tag = tag,
			.tag_len = tag ? tag_len : 0,
		};
		size_t done;
		pthread_mutex_lock(&pq->lock);
		int err = atomic_load(&pq->dead) ? -EPIPE
						 : pq_run(pq, &r, NULL, &done);
		pthread_mutex_unlock(&pq->lock);
		pq_put(pq);
		if (err != -ENOMEM)
			return err;
	}
	/* The library's path would zero out on a failure. */
	if (writes == PIO_WRITES_IF_OK)
		return -ENOMEM;
	/* Too big for the thread's arena, or no queue: the library's
	 * copying path. */
	return cc_crypt(conn->cc, session, dir, iv, iv_len, aad, aad_len, in,
			out, len, tag);
}

int pio_crypt_keep(struct prov *p, struct prov_conn *conn, uint32_t session,
		   unsigned tag_len, enum cc_dir dir, const void *iv,
		   unsigned iv_len, const void *aad, size_t aad_len,
		   const void *in, void *out, size_t len, void *tag,
		   struct pio_kept *k)
{
	memset(k, 0, sizeof(*k));
	if (!len || len > PIO_OP_MAX || aad_len > CRD_AAD_MAX)
		return -ENOMEM;
	struct pio_q *pq;
	int err = pio_queue(p, conn, &pq);
	if (err)
		return err;
	const struct pump_req r = {
		.session = session,
		.dir = dir,
		.first = 1,
		.last = 1,
		.iv = iv,
		.iv_len = iv_len,
		.aad = aad,
		.aad_len = aad_len,
		.a = in,
		.na = len,
		.out = out,
		.tag = tag,
		.tag_len = tag ? tag_len : 0,
	};
	size_t done;
	pthread_mutex_lock(&pq->lock);
	err = atomic_load(&pq->dead) ? -EPIPE : pq_run(pq, &r, &k->buf, &done);
	pthread_mutex_unlock(&pq->lock);
	if (!k->buf) {
		pq_put(pq);
		return err;
	}
	k->pq = pq; /* its reference, until pio_kept_release */
	k->len = len;
	return err;
}

int pio_ks_submit(struct prov *p, struct prov_conn *conn, uint32_t session,
		  const void *iv, unsigned iv_len, size_t len,
		  struct pio_ticket *t)
{
	memset(t, 0, sizeof(*t));
	if (!len || len > PIO_OP_MAX || iv_len > CC_IV_INLINE)
		return -EINVAL;
	struct pio_q *pq;
	int err = pio_queue(p, conn, &pq);
	if (err)
		return err;
	uint8_t *buf = NULL;
	int s = -1;
	pthread_mutex_lock(&pq->lock);
	if (atomic_load(&pq->dead))
		err = -EPIPE;
	else if (!(buf = pq_alloc(pq, len)) || (s = slot_take(pq)) < 0)
		err = -ENOMEM; /* no waiting here: the caller goes on without */
	if (!err) {
		memset(buf, 0, len);
		struct cc_op op = {
			.session = session,
			.dir = CC_ENCRYPT,
			.src = buf,
			.len = (uint32_t)len,
			.iv = iv,
			.iv_len = iv_len,
		};
		int rc = pq_submit(pq, &op, s, NULL); /* iv is the caller's */
		if (rc)
			err = rc < 0 ? rc : -EBUSY;
	}
	if (err) {
		if (s >= 0)
			pq->res[s].busy = 0;
		if (buf && !atomic_load(&pq->dead))
			cc_buf_free(pq->q, buf);
		pthread_mutex_unlock(&pq->lock);
		pq_put(pq);
		return err;
	}
	pthread_mutex_unlock(&pq->lock);
	*t = (struct pio_ticket){ pq, buf, len, s };
	return 0;
}

int pio_ks_wait(struct pio_ticket *t, struct pio_kept *k)
{
	struct pio_q *pq = t->pq;
	memset(k, 0, sizeof(*k));
	if (!pq)
		return -EINVAL;
	pthread_mutex_lock(&pq->lock);
	int err = pq_wait(pq, t->slot, 0, ASYNC_get_current_job());
	if (!err) {
		err = pq->res[t->slot].status;
		if (err == CC_OK) {
			*k = (struct pio_kept){ pq, t->buf, t->len };
			res_take(pq, t->slot);
		} else {
			memset(t->buf, 0, t->len);
			piece_release(pq, t->buf, t->slot);
		}
	} /* else the queue is dead: its arena is abandoned with it */
	pthread_mutex_unlock(&pq->lock);
	if (!k->buf)
		pq_put(pq);
	memset(t, 0, sizeof(*t));
	return err;
}

void pio_kept_release(struct pio_kept *k, int wipe)
{
	if (!k->buf)
		return;
	struct pio_q *pq = k->pq;
	pthread_mutex_lock(&pq->lock);
	if (wipe)
		memset(k->buf, 0, k->len);
	/* A dead queue's arena is abandoned with it. */
	if (!atomic_load(&pq->dead))
		cc_buf_free(pq->q, k->buf);
	pthread_mutex_unlock(&pq->lock);
	pq_put(pq);
	memset(k, 0, sizeof(*k));
}

int pio_kept_dup(const struct pio_kept *src, struct pio_kept *dst)
{
	memset(dst, 0, sizeof(*dst));
	if (!src->buf)
		return 0;
	struct pio_q *pq = src->pq;
	int err = 0;
	pthread_mutex_lock(&pq->lock);
	if (atomic_load(&pq->dead))
		err = -EPIPE;
	else if (!(dst->buf = pq_alloc(pq, src->len)))
		err = -ENOMEM;
	else
		memcpy(dst->buf, src->buf, src->len);
	pthread_mutex_unlock(&pq->lock);
	if (err)
		return err;
	atomic_fetch_add(&pq->refs, 1);
	dst->pq = pq;
	dst->len = src->len;
	return 0;
}

/* ---- streams ---- */

int pio_stream_open(struct prov *p, struct prov_conn *conn,
		    const struct cc_stream_params *sp, unsigned tag_len,
		    struct pio_stream **out)
{
	/* CCM and XTS do not stream here (prov_ccm.c, prov_block.c). */
	if (sp->msg_len || sp->data_unit)
		return -EOPNOTSUPP;
	if (sp->iv_len > CC_IV_MAX || sp->aad_len > CRD_AAD_MAX ||
	    (sp->iv_len && !sp->iv) || (sp->aad_len && !sp->aad))
		return -EINVAL;
	struct pio_stream *s = OPENSSL_zalloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	int err = pio_queue(p, conn, &s->pq);
	if (err) {
		OPENSSL_free(s);
		return err;
	}
	if (sp->aad_len) {
		s->aad = OPENSSL_memdup(sp->aad, sp->aad_len);
		if (!s->aad) {
			pio_stream_free(s);
			return -ENOMEM;
		}
		s->aad_len = sp->aad_len;
	}
	pthread_mutex_lock(&s->pq->lock);
	err = atomic_load(&s->pq->dead)
		      ? -EPIPE
		      : cc_stream_handle_get(s->pq->q, &s->handle);
	pthread_mutex_unlock(&s->pq->lock);
	if (err) {
		s->handle = 0;
		pio_stream_free(s);
		return err;
	}
	s->session = sp->session;
	s->dir = sp->dir;
	s->tag_len = tag_len;
	if (sp->iv_len)
		memcpy(s->iv, sp->iv, sp->iv_len);
	s->iv_len = sp->iv_len;
	*out = s;
	return 0;
}

static int stream_run(struct pio_stream *s, const void *in, void *out,
		      size_t len, int last, void *tag, unsigned short_tag,
		      int writes, size_t *done)
{
	struct pio_q *pq = s->pq;
	*done = 0;
	if (!s->handle)
		return CC_ERR_NO_STREAM; /* it ended */
	const struct pump_req r = {
		.session = s->session,
		.dir = s->dir,
		.stream = s->handle,
		.first = !s->started,
		.last = last,
		.iv = s->iv,
		.iv_len = s->started ? 0 : s->iv_len,
		.aad = s->started ? NULL : s->aad,
		.aad_len = s->started ? 0 : s->aad_len,
		.a = in,
		.na = len,
		.piece = PUMP_PIECE,
		.out = writes ? out : NULL,
		.tag = last ? tag : NULL,
		.tag_len = last ? s->tag_len : 0,
		.short_tag = last ? short_tag : 0,
	};
	pthread_mutex_lock(&pq->lock);
	int err = atomic_load(&pq->dead) ? -EPIPE : pq_run(pq, &r, NULL, done);
	if (err || last) {
		/* A failed piece ends the stream, as LAST does; a dead
		 * queue takes its handles with it. */
		if (!atomic_load(&pq->dead))
			cc_stream_handle_put(pq->q, s->handle);
		s->handle = 0;
		s->open = 0;
	} else {
		s->open = 1;
	}
	pthread_mutex_unlock(&pq->lock);
	if (!s->started && s->aad) {
		OPENSSL_clear_free(s->aad, s->aad_len);
		s->aad = NULL;
		s->aad_len = 0;
	}
	s->started = 1;
	return err;
}

int pio_stream_update(struct pio_stream *s, const void *in, size_t len,
		      void *out, size_t *out_len)
{
	size_t done = 0;
	int err = len ? stream_run(s, in, out, len, 0, NULL, 0, out != NULL,
				   &done)
		      : 0;
	if (out_len)
		*out_len = len && out ? done : 0;
	return err;
}

int pio_stream_final(struct pio_stream *s, void *out, size_t *out_len,
		     void *tag, unsigned tag_len)
{
	size_t done;
	int err = stream_run(s, NULL, out, 0, 1, tag,
			     tag_len && tag_len < s->tag_len ? tag_len : 0, 0,
			     &done);
	if (out_len)
		*out_len = 0;
	return err;
}

void pio_stream_free(struct pio_stream *s)
{
	if (!s)
		return;
	if (s->handle) {
		if (s->open) {
			/* Abandoned midway: an empty LAST ends it in the
			 * daemon (a decrypt fails on the zero tag, which is
			 * all it has to do). */
			uint8_t scratch[CRD_TAG_MAX] = { 0 };
			size_t done;
			(void)stream_run(s, NULL, NULL, 0, 1, scratch, 0, 0,
					 &done);
		} else {
			pthread_mutex_lock(&s->pq->lock);
			if (!atomic_load(&s->pq->dead))
				cc_stream_handle_put(s->pq->q, s->handle);
			pthread_mutex_unlock(&s->pq->lock);
		}
	}
	if (s->aad)
		OPENSSL_clear_free(s->aad, s->aad_len);
	pq_put(s->pq);
	OPENSSL_clear_free(s, sizeof(*s));
}

int pio_stream_dup(const struct pio_stream *src, uint32_t session,
		   struct pio_stream **out)
{
	if (!src->handle)
		return CC_ERR_NO_STREAM; /* it ended */
	struct pio_stream *s = OPENSSL_memdup(src, sizeof(*src));
	if (!s)
		return -ENOMEM;
	s->aad = NULL;
	s->handle = 0;
	s->session = session;
	atomic_fetch_add(&s->pq->refs, 1);
	int err = 0;
	if (src->aad_len && !(s->aad = OPENSSL_memdup(src->aad, src->aad_len)))
		err = -ENOMEM;
	struct pio_q *pq = s->pq;
	pthread_mutex_lock(&pq->lock);
	if (!err)
		err = atomic_load(&pq->dead)
			      ? -EPIPE
			      : cc_stream_handle_get(pq->q, &s->handle);
	if (err)
		s->handle = 0;
	if (!err && src->started)
		err = pq_clone(pq, src, s);
	pthread_mutex_unlock(&pq->lock);
	if (err) {
		s->open = 0;
		pio_stream_free(s);
		return err;
	}
	*out = s;
	return 0;
}

struct prov_conn *pio_stream_conn(const struct pio_stream *s)
{
	return s->pq->conn;
}
