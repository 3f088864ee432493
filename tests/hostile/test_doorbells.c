/* SPDX-License-Identifier: MIT */
/*
 * Doorbell attacks. The fds a client gets for its queue must not let it
 * stop the daemon from serving anybody else: a client that makes its
 * completion doorbell blocking and full, one that steals wake-ups from
 * its submission doorbell, one that fills it so a write would block, and
 * one that punches holes in its own region while ops are in flight. A
 * well-behaved client runs through every attack and must never wait a
 * second; a fresh client must be served within a second; the daemon's
 * fds and mappings come back to where they were; and the daemon still
 * stops cleanly on SIGTERM (fx_daemon_stop) at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "rawclient.h"

#define STALL_MS rc_stall_ms()

static struct fx_daemon daemon_;
static struct good_client good;
static int base_fds, base_maps;
static pid_t hostile; /* killed by teardown if a check failed first */

static const uint8_t hkey[16] = { 0xee, 1, 2,  3,  4,  5,  6,  7,
				  8,	9, 10, 11, 12, 13, 14, 15 };

/* What a hostile child does once its queue is open. */
enum attack {
	CQ_BLOCKING_FULL, /* completion doorbell blocking, full, never read */
	SQ_STEAL,	  /* blocks reading its submission doorbell */
	SQ_FILL,	  /* submission doorbell blocking, kept full */
	PUNCH_HOLES,	  /* punches holes in its region under the daemon */
};

static void set_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	assert_true(fl >= 0);
	assert_int_equal(fcntl(fd, F_SETFL, fl & ~O_NONBLOCK), 0);
}

/* Fill an eventfd's counter to the brim; on a socket this fails (the
 * daemon's end takes nothing), which is the point. */
static void try_fill(int fd)
{
	uint64_t v = 0xfffffffffffffffeull;
	(void)!write(fd, &v, sizeof(v));
}

/* A process of its own (a thread started after a multi-threaded fork is
 * not allowed under TSan) that refills fd whenever anybody drains it. */
static void keep_full(int fd)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid)
		return;
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with the attacker */
	for (;;)			  /* blocks while the counter is full */
		try_fill(fd);
}

/* Write n valid GCM encrypts and publish them. */
static void submit_ops(struct rawq *q, int sid, unsigned n, int ring)
{
	for (unsigned i = 0; i < n; i++)
		sqe_valid(rawq_sqe(q, i), (uint32_t)sid, 4096 * i, 77 + i);
	if (ring) {
		rawq_submit(q, n);
		return;
	}
	q->tail += n;
	__atomic_store_n(&q->hdr->ksq_tail.k, q->tail, __ATOMIC_RELEASE);
}

static int served(struct rawq *q, unsigned n, unsigned ms)
{
	for (unsigned i = 0; i < ms; i++) {
		if (__atomic_load_n(&q->hdr->kcq_tail.k, __ATOMIC_ACQUIRE) -
			    q->head >=
		    n)
			return 1;
		usleep(1000);
	}
	return 0;
}

/* The hostile client: set up, attack, tell the parent, then stay. */
static void hostile_main(enum attack a, int ready)
{
	struct raw r;
	struct rawq q;
	signal(SIGPIPE, SIG_IGN); /* writes to the daemon's end: EPIPE */
	raw_connect(&r, daemon_.sock);
	raw_hello(&r, CRD_ABI_VERSION);
	int sid = raw_session(&r, CRYPTOD__ALGORITHM__ALG_AES_GCM, hkey, 16,
			      NULL);
	assert_true(sid > 0);
	raw_open_queue(&r, &q);
	char verdict = 'y';

	switch (a) {
	case CQ_BLOCKING_FULL:
		set_blocking(q.cq_efd);
		try_fill(q.cq_efd);
		__atomic_fetch_or(&q.hdr->client.kflags, CRD_F_NEED_WAKEUP,
				  __ATOMIC_SEQ_CST);
		for (int round = 0; round < 4; round++) {
			submit_ops(&q, sid, 8, 1);
			usleep(20000);
		}
		break;
	case SQ_STEAL:
		set_blocking(q.sq_efd);
		if (write(ready, &verdict, 1) != 1)
			_exit(3);
		for (;;) { /* every wake-up it can get, for ever */
			uint64_t v;
			if (read(q.sq_efd, &v, sizeof(v)) < 0 && errno != EINTR)
				_exit(4);
		}
	case SQ_FILL:
		set_blocking(q.sq_efd);
		keep_full(q.sq_efd);
		/* Work published without a ring (ours would block now):
		 * parked workers find it by themselves, in bounded time. */
		usleep(300000);
		submit_ops(&q, sid, 4, 0);
		verdict = served(&q, 4, STALL_MS) ? 'y' : 'n';
		break;
	case PUNCH_HOLES:
		for (int round = 0; round < 200; round++) {
			submit_ops(&q, sid, 16, 1);
			if (fallocate(q.memfd,
				      FALLOC_FL_PUNCH_HOLE |
					      FALLOC_FL_KEEP_SIZE,
				      0, (off_t)q.size) < 0)
				_exit(5);
			/* The punch zeroed our indices too: start over
			 * from what the region says now. */
			q.tail = q.head = 0;
		}
		break;
	}
	if (write(ready, &verdict, 1) != 1)
		_exit(3);
	pause();
	_exit(0);
}

static void run_attack(enum attack a, const char *what)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		hostile_main(a, p[1]);
	}
	hostile = pid;
	close(p[1]);
	char verdict = 0;
	assert_int_equal(read(p[0], &verdict, 1), 1);
	close(p[0]);
	/* Let the attack sit while everybody else is served. */
	for (int i = 0; i < 4; i++) {
		usleep(250000);
		good_check(&good, STALL_MS);
		fresh_client_served(daemon_.sock, STALL_MS);
	}
	/* The hostile client dies without reading anything. */
	kill(pid, SIGKILL);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	hostile = 0;
	if (verdict != 'y')
		fail_msg("%s: the attacker's own published work was not "
			 "served within %u ms without a doorbell",
			 what, STALL_MS);
	fresh_client_served(daemon_.sock, STALL_MS);
	good_check(&good, STALL_MS);
	/* Everything the attacker had is gone (the daemon notices the
	 * hang-up asynchronously, and closes fds off its control thread). */
	int fds = -1, maps = -1;
	for (int i = 0; i < 300; i++, usleep(10000)) {
		fds = rc_pid_fds(daemon_.pid);
		maps = rc_pid_queue_maps(daemon_.pid);
		if (fds == base_fds && maps == base_maps)
			break;
	}
	if (fds != base_fds || maps != base_maps)
		fail_msg("%s: daemon holds %d fds and %d queue mappings, "
			 "%d and %d before",
			 what, fds, maps, base_fds, base_maps);
	printf("%s: daemon served everybody, back to %d fds\n", what, fds);
}

static void cq_doorbell_blocking_and_full(void **state)
{
	run_attack(CQ_BLOCKING_FULL, "completion doorbell blocking + full");
}

static void sq_doorbell_stolen(void **state)
{
	run_attack(SQ_STEAL, "submission doorbell read by a thief");
}

static void sq_doorbell_blocking_and_full(void **state)
{
	run_attack(SQ_FILL, "submission doorbell blocking + full");
}

static void holes_punched_in_region(void **state)
{
	run_attack(PUNCH_HOLES, "holes punched in the region");
}

static int setup_args(const char *const *args)
{
	/* Two workers: the attacks must hold for a pool, not only one. */
	struct fx_daemon_params p = { .workers = 2, .args = args };
	if (fx_daemon_start(&daemon_, &p))
		return -1;
	good_start(&good, daemon_.sock);
	base_fds = rc_pid_fds(daemon_.pid);
	base_maps = rc_pid_queue_maps(daemon_.pid);
	return 0;
}

static int setup(void **state)
{
	return setup_args(NULL);
}

/* Workers that never sleep never drain a doorbell either. */
static int setup_busy(void **state)
{
	static const char *const busy[] = { "--poll-mode", "busy", NULL };
	return setup_args(busy);
}

static int teardown(void **state)
{
	if (hostile > 0) {
		kill(hostile, SIGKILL);
		waitpid(hostile, NULL, 0);
		hostile = 0;
	}
	good_stop(&good, STALL_MS);
	/* SIGTERM must still stop it, in time and with status 0. */
	return fx_daemon_stop(&daemon_) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(cq_doorbell_blocking_and_full,
						setup, teardown),
		cmocka_unit_test_setup_teardown(sq_doorbell_stolen, setup,
						teardown),
		cmocka_unit_test_setup_teardown(sq_doorbell_blocking_and_full,
						setup_busy, teardown),
		cmocka_unit_test_setup_teardown(holes_punched_in_region, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
