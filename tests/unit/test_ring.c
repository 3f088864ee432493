/* SPDX-License-Identifier: MIT */
/*
 * Ring ABI (include/cryptod/ring_abi.h): the index arithmetic both sides
 * share, and the region the daemon builds for a queue (daemon/data/queue.c):
 * geometry, sealing, and a producer/consumer run over a real region seen
 * through two mappings, as the client and the daemon see it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cryptod/ring_abi.h>

#include "doorbell.h"
#include "queue.h"

/* ---- Index arithmetic ---- */

static void test_is_pow2(void **state)
{
	assert_false(crd_is_pow2(0));
	for (unsigned b = 0; b < 32; b++) {
		uint32_t v = 1u << b;
		assert_true(crd_is_pow2(v));
		if (b > 1)
			assert_false(crd_is_pow2(v - 1));
		if (b > 0)
			assert_false(crd_is_pow2(v + 1));
		assert_false(crd_is_pow2(v | 6u)); /* two bits or more */
	}
	assert_false(crd_is_pow2(3));
	assert_false(crd_is_pow2(6));
	assert_false(crd_is_pow2(12));
	assert_false(crd_is_pow2(0xFFFFFFFFu));
	assert_false(crd_is_pow2(0x80000001u));
}

static void test_used_free_plain(void **state)
{
	/* Empty. */
	assert_int_equal(crd_ring_used(0, 0), 0);
	assert_int_equal(crd_ring_free(0, 0, 64), 64);
	assert_int_equal(crd_ring_used(1234, 1234), 0);
	assert_int_equal(crd_ring_free(1234, 1234, 8), 8);
	/* Partly used. */
	assert_int_equal(crd_ring_used(10, 15), 5);
	assert_int_equal(crd_ring_free(10, 15, 8), 3);
	/* Full. */
	assert_int_equal(crd_ring_used(100, 164), 64);
	assert_int_equal(crd_ring_free(100, 164, 64), 0);
}

static void test_used_free_wrap(void **state)
{
	/* Free-running u32 indices: the producer has wrapped past zero. */
	assert_int_equal(crd_ring_used(0xFFFFFFF0u, 0x10u), 0x20);
	assert_int_equal(crd_ring_free(0xFFFFFFF0u, 0x10u, 64), 32);
	assert_int_equal(crd_ring_free(0xFFFFFFF0u, 0x10u, 0x20), 0);
	assert_int_equal(crd_ring_used(0xFFFFFFFFu, 0), 1);
	assert_int_equal(crd_ring_used(0xFFFFFFFFu, 0xFFFFFFFFu), 0);
	assert_int_equal(crd_ring_free(0xFFFFFFFFu, 0xFFFFFFFFu, 8), 8);

	/* Full exactly at the wrap: tail = head + entries = 0. */
	assert_int_equal(crd_ring_used(0xFFFFFFF8u, 0), 8);
	assert_int_equal(crd_ring_free(0xFFFFFFF8u, 0, 8), 0);

	/* A lying or reversed pair shows up as used > entries, which both
	 * sides must check before trusting crd_ring_free(). */
	assert_true(crd_ring_used(0x10u, 0xFFFFFFF0u) > CRD_RING_MAX_ENTRIES);
	assert_true(crd_ring_used(5, 4) > CRD_RING_MAX_ENTRIES);
}

static void test_slot_continuity_across_wrap(void **state)
{
	/* Because entries is a power of two it divides 2^32, so slot
	 * numbers stay consecutive when the index wraps. */
	for (uint32_t entries = CRD_RING_MIN_ENTRIES;
	     entries <= CRD_RING_MAX_ENTRIES; entries <<= 1) {
		uint32_t mask = entries - 1;
		for (uint32_t i = 0xFFFFFFF0u; i != 0x10u; i++)
			assert_int_equal((i + 1) & mask,
					 ((i & mask) + 1) % entries);
	}
}

static void test_seq_before(void **state)
{
	assert_true(crd_seq_before(1, 2));
	assert_false(crd_seq_before(2, 1));
	assert_false(crd_seq_before(7, 7));
	/* Across the wrap. */
	assert_true(crd_seq_before(0xFFFFFFFFu, 0));
	assert_false(crd_seq_before(0, 0xFFFFFFFFu));
	assert_true(crd_seq_before(0xFFFFFFF0u, 0x10u));
	assert_false(crd_seq_before(0x10u, 0xFFFFFFF0u));
	/* Largest unambiguous distance. */
	assert_true(crd_seq_before(0, 0x7FFFFFFFu));
	assert_false(crd_seq_before(0x7FFFFFFFu, 0));

	/* Antisymmetric for every distance below 2^31. */
	srand(1);
	for (int i = 0; i < 100000; i++) {
		uint32_t a = (uint32_t)rand() << 16 ^ (uint32_t)rand();
		uint32_t d = ((uint32_t)rand() << 16 ^ (uint32_t)rand()) &
			     0x7FFFFFFFu;
		if (!d)
			d = 1;
		assert_true(crd_seq_before(a, a + d));
		assert_false(crd_seq_before(a + d, a));
	}
}

static void test_align_up(void **state)
{
	assert_int_equal(crd_align_up(0, 64), 0);
	assert_int_equal(crd_align_up(1, 64), 64);
	assert_int_equal(crd_align_up(63, 64), 64);
	assert_int_equal(crd_align_up(64, 64), 64);
	assert_int_equal(crd_align_up(65, 64), 128);
	assert_int_equal(crd_align_up(4095, 4096), 4096);
	assert_int_equal(crd_align_up(4097, 4096), 8192);
	assert_int_equal(crd_align_up(5, 1), 5);
	/* 64-bit: nothing is truncated to 32 bits. */
	assert_true(crd_align_up((1ull << 32) + 1, 4096) ==
		    (1ull << 32) + 4096);
	assert_true(crd_align_up(CRD_ARENA_MAX_SIZE - 1, CRD_ARENA_ALIGN) ==
		    CRD_ARENA_MAX_SIZE);
}

static void test_abi_layout(void **state)
{
	/* The _Static_asserts pin some of this; the rest is checked here so
	 * that a layout change fails a test, not only a build. */
	assert_int_equal(sizeof(struct crd_sqe), 64);
	assert_int_equal(sizeof(struct crd_cqe), 16);
	assert_int_equal(offsetof(struct crd_region_hdr, ksq_tail), 64);
	assert_int_equal(offsetof(struct crd_region_hdr, ksq_head), 128);
	assert_int_equal(offsetof(struct crd_region_hdr, kcq_tail), 192);
	assert_int_equal(offsetof(struct crd_region_hdr, kcq_head), 256);
	assert_int_equal(offsetof(struct crd_region_hdr, daemon), 320);
	assert_int_equal(offsetof(struct crd_region_hdr, client), 384);
	assert_true(sizeof(struct crd_region_hdr) <= CRD_HDR_SIZE);
	assert_int_equal(sizeof(struct crd_region_hdr) % CRD_CACHELINE, 0);
	assert_true(crd_is_pow2(CRD_RING_MIN_ENTRIES));
	assert_true(crd_is_pow2(CRD_RING_MAX_ENTRIES));
	assert_true(crd_is_pow2(CRD_RING_DEFAULT_ENTRIES));
	assert_int_equal(CRD_ARENA_MIN_SIZE % CRD_ARENA_ALIGN, 0);
	assert_int_equal(CRD_ARENA_MAX_SIZE % CRD_ARENA_ALIGN, 0);
}

/* ---- The queue region ---- */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* What a client checks on the header it is handed (cf. client-lib). */
static void check_geometry(const struct queue *q, uint32_t sq, uint32_t cq,
			   uint64_t arena)
{
	const struct crd_region_hdr *h = q->hdr;

	assert_int_equal(q->sq_entries, sq);
	assert_int_equal(q->cq_entries, cq);
	assert_true(q->arena_size == arena);
	assert_ptr_equal(q->hdr, q->base);

	assert_int_equal(h->magic, CRD_REGION_MAGIC);
	assert_int_equal(h->abi_version, CRD_ABI_VERSION);
	assert_int_equal(h->sq_entries, sq);
	assert_int_equal(h->cq_entries, cq);
	assert_true(h->arena_size == arena);
	assert_true(h->region_size == q->region_size);

	/* Header, then sq, cq and arena, page aligned, disjoint, in order,
	 * filling the region exactly. */
	assert_true(h->sq_off == CRD_HDR_SIZE);
	assert_int_equal(h->cq_off % 4096, 0);
	assert_int_equal(h->arena_off % 4096, 0);
	assert_true(h->sq_off + (uint64_t)sq * sizeof(struct crd_sqe) <=
		    h->cq_off);
	assert_true(h->cq_off + (uint64_t)cq * sizeof(struct crd_cqe) <=
		    h->arena_off);
	assert_true(h->arena_off + h->arena_size == h->region_size);
	/* No more padding than page rounding needs. */
	assert_true(h->cq_off ==
		    crd_align_up(h->sq_off + (uint64_t)sq * 64, 4096));
	assert_true(h->arena_off ==
		    crd_align_up(h->cq_off + (uint64_t)cq * 16, 4096));

	assert_ptr_equal(q->sq, q->base + h->sq_off);
	assert_ptr_equal(q->cq, q->base + h->cq_off);
	assert_ptr_equal(q->arena, q->base + h->arena_off);

	/* Fresh indices and flags. */
	assert_int_equal(h->ksq_tail.k, 0);
	assert_int_equal(h->ksq_head.k, 0);
	assert_int_equal(h->kcq_tail.k, 0);
	assert_int_equal(h->kcq_head.k, 0);
	assert_int_equal(h->daemon.kflags, 0);
	assert_int_equal(h->client.kflags, 0);
	/* Every completion slot empty (CRD_FEAT_CQE_SLOT), and nothing else
	 * in it: a client polls the status. */
	for (uint32_t i = 0; i < cq; i++) {
		assert_int_equal(q->cq[i].status, CRD_CQE_EMPTY);
		assert_true(q->cq[i].user_data == 0 && q->cq[i].len == 0);
	}

	struct stat st;
	assert_int_equal(fstat(q->memfd, &st), 0);
	assert_true((uint64_t)st.st_size == q->region_size);
	/* fallocate'd: every page is backed already. */
	assert_true((uint64_t)st.st_blocks * 512 >= q->region_size);
}

static void test_queue_default_geometry(void **state)
{
	struct queue *q = NULL;

	assert_int_equal(queue_create(1, 0, 0, 0, &q), 0);
	assert_non_null(q);
	assert_int_equal(q->id, 1);
	assert_null(q->sessions); /* client_queue_open() sets it */
	check_geometry(q, CRD_RING_DEFAULT_ENTRIES, CRD_RING_DEFAULT_ENTRIES,
		       CRD_ARENA_DEFAULT_SIZE);
	queue_destroy(q);
}

static void test_queue_custom_geometry(void **state)
{
	static const struct {
		uint32_t sq, cq;
		uint64_t arena, want_sq, want_cq, want_arena;
	} cases[] = {
		{ 8, 8, CRD_ARENA_MIN_SIZE, 8, 8, CRD_ARENA_MIN_SIZE },
		{ 8, 0, CRD_ARENA_MIN_SIZE, 8, 8, CRD_ARENA_MIN_SIZE },
		{ 16, 64, CRD_ARENA_MIN_SIZE, 16, 64, CRD_ARENA_MIN_SIZE },
		/* Arena rounded up to CRD_ARENA_ALIGN. */
		{ 8, 8, CRD_ARENA_MIN_SIZE + 1, 8, 8,
		  CRD_ARENA_MIN_SIZE + CRD_ARENA_ALIGN },
		{ 32, 32, 100000, 32, 32, 102400 },
		{ CRD_RING_MAX_ENTRIES, CRD_RING_MAX_ENTRIES,
		  CRD_ARENA_MIN_SIZE, CRD_RING_MAX_ENTRIES,
		  CRD_RING_MAX_ENTRIES, CRD_ARENA_MIN_SIZE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct queue *q = NULL;
		assert_int_equal(queue_create(7, cases[i].sq, cases[i].cq,
					      cases[i].arena, &q),
				 0);
		check_geometry(q, cases[i].want_sq, cases[i].want_cq,
			       cases[i].want_arena);
		queue_destroy(q);
	}
}

static void test_queue_bad_geometry(void **state)
{
	static const struct {
		uint32_t sq, cq;
		uint64_t arena;
	} bad[] = {
		{ 3, 8, 0 }, /* sq not a power of two */
		{ 12, 16, 0 },
		{ 8, 24, 0 }, /* cq not a power of two */
		{ 16, 8, 0 }, /* cq < sq */
		{ 0, 8, 0 },  /* default sq (1024) > cq */
		{ CRD_RING_MIN_ENTRIES / 2, CRD_RING_MIN_ENTRIES / 2, 0 },
		{ CRD_RING_MIN_ENTRIES, CRD_RING_MAX_ENTRIES * 2, 0 },
		{ CRD_RING_MAX_ENTRIES * 2, CRD_RING_MAX_ENTRIES * 2, 0 },
		{ 0x80000000u, 0x80000000u, 0 },
		{ 8, 8, CRD_ARENA_MIN_SIZE - 1 }, /* arena too small */
		{ 8, 8, 1 },
		{ 8, 8, CRD_ARENA_MAX_SIZE + 1 }, /* arena too large */
		{ 8, 8, UINT64_MAX },
		{ 8, 8, UINT64_MAX - CRD_ARENA_ALIGN + 2 }, /* would wrap */
	};
	int fds = count_fds();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct queue *q = (struct queue *)&bad[i]; /* sentinel */
		int rc =
			queue_create(9, bad[i].sq, bad[i].cq, bad[i].arena, &q);
		if (rc != -EINVAL)
			fail_msg("case %zu (sq %u cq %u arena %llu): got %d, "
				 "want -EINVAL",
				 i, bad[i].sq, bad[i].cq,
				 (unsigned long long)bad[i].arena, rc);
		assert_ptr_equal(q, &bad[i]); /* *out untouched */
	}
	assert_int_equal(count_fds(), fds); /* nothing leaked */
}

static void test_queue_sealed(void **state)
{
	struct queue *q = NULL;

	assert_int_equal(queue_create(2, 8, 8, CRD_ARENA_MIN_SIZE, &q), 0);
	off_t size = (off_t)q->region_size;

	int seals = fcntl(q->memfd, F_GET_SEALS);
	assert_true(seals >= 0);
	assert_int_equal(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
			 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	/* Not write-sealed: the client must be able to write its rings. */
	assert_int_equal(seals & F_SEAL_WRITE, 0);

	/* What a hostile client would try with the fd it is handed. */
	errno = 0;
	assert_int_equal(ftruncate(q->memfd, 0), -1);
	assert_int_equal(errno, EPERM);
	errno = 0;
	assert_int_equal(ftruncate(q->memfd, size - 4096), -1);
	assert_int_equal(errno, EPERM);
	errno = 0;
	assert_int_equal(ftruncate(q->memfd, size + 4096), -1);
	assert_int_equal(errno, EPERM);
	assert_int_not_equal(fallocate(q->memfd, 0, size, 4096), 0);
	errno = 0;
	assert_int_equal(fcntl(q->memfd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	assert_int_equal(errno, EPERM);

	struct stat st;
	assert_int_equal(fstat(q->memfd, &st), 0);
	assert_true(st.st_size == size);

	/* Close-on-exec, as every fd the daemon holds. */
	assert_true(fcntl(q->memfd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(q->sq_efd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(q->cq_sock, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(q->cq_peer, F_GETFD) & FD_CLOEXEC);
	queue_destroy(q);
}

static void test_queue_client_view(void **state)
{
	struct queue *q = NULL;

	assert_int_equal(queue_create(3, 8, 16, CRD_ARENA_MIN_SIZE, &q), 0);
	/* The client maps the same fd: it sees the daemon's header and
	 * shares every byte with the daemon's mapping. */
	uint8_t *c = mmap(NULL, q->region_size, PROT_READ | PROT_WRITE,
			  MAP_SHARED, q->memfd, 0);
	assert_true(c != MAP_FAILED);
	const struct crd_region_hdr *ch = (const struct crd_region_hdr *)c;
	assert_int_equal(ch->magic, CRD_REGION_MAGIC);
	assert_int_equal(ch->sq_entries, 8);
	assert_int_equal(ch->cq_entries, 16);
	assert_true(ch->arena_off == (uint64_t)(q->arena - q->base));

	c[ch->arena_off + 100] = 0x5a;
	assert_int_equal(q->arena[100], 0x5a);
	q->arena[CRD_ARENA_MIN_SIZE - 1] = 0xa5;
	assert_int_equal(c[ch->region_size - 1], 0xa5);

	assert_int_equal(munmap(c, q->region_size), 0);
	queue_destroy(q);
}

static void test_queue_in_flight(void **state)
{
	struct queue *q = NULL;

	assert_int_equal(queue_create(4, 8, 16, CRD_ARENA_MIN_SIZE, &q), 0);
	assert_int_equal(queue_in_flight(q), 0);
	q->hdr->ksq_tail.k = 5;
	q->hdr->kcq_tail.k = 2;
	assert_int_equal(queue_in_flight(q), 3);
	/* Across the wrap. */
	q->hdr->ksq_tail.k = 0x4;
	q->hdr->kcq_tail.k = 0xFFFFFFF8u;
	assert_int_equal(queue_in_flight(q), 12);
	/* More than the cq holds (24): clamped. */
	q->hdr->ksq_tail.k = 0x10;
	q->hdr->kcq_tail.k = 0xFFFFFFF8u;
	assert_int_equal(queue_in_flight(q), 16);
	/* A client lying about its tail: clamped, never huge. */
	q->hdr->ksq_tail.k = 1;
	q->hdr->kcq_tail.k = 2;
	assert_int_equal(queue_in_flight(q), 16);
	queue_destroy(q);
}

static void test_queue_destroy_marks_dead(void **state)
{
	struct queue *q = NULL;
	int fds = count_fds();

	assert_int_equal(queue_create(5, 8, 8, CRD_ARENA_MIN_SIZE, &q), 0);
	/* Keep our own references, as a client holding the fds would. */
	int memfd = dup(q->memfd), efd = dup(q->cq_peer);
	uint64_t size = q->region_size;
	assert_true(memfd >= 0 && efd >= 0);

	queue_destroy(q);

	struct crd_region_hdr *h =
		mmap(NULL, size, PROT_READ, MAP_SHARED, memfd, 0);
	assert_true(h != MAP_FAILED);
	assert_true(h->daemon.kflags & CRD_F_DEAD);
	char b;
	assert_int_equal(recv(efd, &b, 1, MSG_DONTWAIT), 1); /* woken */
	munmap(h, size);
	close(memfd);
	close(efd);
	/* The daemon closed its memfd and doorbell. */
	assert_int_equal(count_fds(), fds);

	queue_destroy(NULL); /* no-op */
}

/*
 * The doorbells cannot be turned against the daemon: whatever the client
 * does to its ends, ringing it never blocks, and the client can put
 * nothing into the daemon's end.
 */
static void test_queue_doorbells_client_proof(void **state)
{
	struct queue *q = NULL;
	assert_int_equal(queue_create(6, 8, 8, CRD_ARENA_MIN_SIZE, &q), 0);
	int peer = q->cq_peer;

	/* The client clears O_NONBLOCK on its end and never reads: the
	 * daemon's rings still return at once (EAGAIN when it is full). */
	assert_int_equal(fcntl(peer, F_SETFL, 0), 0);
	int full = 0;
	for (int i = 0; i < 100000 && !full; i++) {
		int r = doorbell_ring_client(q->cq_sock);
		assert_true(r == 0 || r == -EAGAIN);
		full = r == -EAGAIN;
	}
	assert_true(full);
	/* Its send buffer is small: only a few wake-ups ever queue up. */
	int queued = 0;
	assert_int_equal(ioctl(peer, FIONREAD, &queued), 0);
	assert_true(queued > 0 && queued < 64);

	/* The client cannot send to the daemon's end: no bytes, no fds. */
	errno = 0;
	assert_int_equal(send(peer, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL), -1);
	assert_int_equal(errno, EPIPE);
	int efd = q->sq_efd;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &efd, sizeof(int));
	assert_int_equal(sendmsg(peer, &m, MSG_DONTWAIT | MSG_NOSIGNAL), -1);

	/* The client closes its end: ringing says so, still at once. */
	close(peer);
	q->cq_peer = -1;
	assert_int_equal(doorbell_ring_client(q->cq_sock), -EPIPE);

	/* The submission doorbell is an eventfd the client may fill to the
	 * brim and make blocking: the daemon never reads or writes it. */
	assert_int_equal(fcntl(q->sq_efd, F_SETFL, 0), 0);
	assert_int_equal(eventfd_write(q->sq_efd, 0xfffffffffffffffeull), 0);
	queue_destroy(q); /* rings the client: must not block either */
}

/* ---- Producer/consumer over a real region ---- */

/*
 * The client (producer of sqes, consumer of cqes) works through its own
 * mapping of the memfd; the daemon side works through q. Both keep
 * private indices and publish them with release stores, as the ABI says.
 */
struct sim {
	struct queue *q;
	uint8_t *cbase; /* client mapping */
	struct crd_region_hdr *ch;
	struct crd_sqe *csq;
	const struct crd_cqe *ccq;
	uint8_t *carena;
	uint32_t start; /* initial value of every index */
	/* The client's cq head when it reads completions at their slots
	 * (CRD_FEAT_CQE_SLOT): their submission slots are free too. */
	uint32_t read;
	uint32_t nops;
	uint64_t retries;
	const char *why; /* daemon side: first failed check */
	int stop;	 /* daemon thread: give up (atomic) */
};

static void sim_setup(struct sim *s, uint32_t sqn, uint32_t cqn, uint32_t start)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(queue_create(6, sqn, cqn, CRD_ARENA_MIN_SIZE, &s->q),
			 0);
	s->cbase = mmap(NULL, s->q->region_size, PROT_READ | PROT_WRITE,
			MAP_SHARED, s->q->memfd, 0);
	assert_true(s->cbase != MAP_FAILED);
	s->ch = (struct crd_region_hdr *)s->cbase;
	s->csq = (struct crd_sqe *)(s->cbase + s->ch->sq_off);
	s->ccq = (const struct crd_cqe *)(s->cbase + s->ch->cq_off);
	s->carena = s->cbase + s->ch->arena_off;
	/* Start just before the u32 wrap so the run crosses it. */
	s->start = s->read = start;
	s->ch->ksq_tail.k = s->ch->ksq_head.k = start;
	s->ch->kcq_tail.k = s->ch->kcq_head.k = start;
	atomic_store(&s->q->ord.claim, start);
	atomic_store(&s->q->ord.sq_head, start);
	atomic_store(&s->q->ord.cq_tail, start);
}

static void sim_teardown(struct sim *s)
{
	munmap(s->cbase, s->q->region_size);
	queue_destroy(s->q);
}

/* Payload for op seq: one 64-byte arena line per sq slot. */
static uint32_t payload_off(uint32_t seq, uint32_t sq_entries)
{
	return (seq & (sq_entries - 1)) * 64;
}

/* Client: submit up to n ops starting at *next; returns how many. */
static uint32_t client_submit(struct sim *s, uint32_t *tail, uint32_t *next,
			      uint32_t n)
{
	uint32_t entries = s->ch->sq_entries;
	uint32_t head = crd_load_acquire(&s->ch->ksq_head.k);
	/* Pairs with the daemon's release of ksq_head: the slots it
	 * released are no longer read. */
	if (crd_seq_before(head, s->read))
		head = s->read;
	uint32_t used = crd_ring_used(head, *tail);
	assert_true(used <= entries);
	uint32_t room = crd_ring_free(head, *tail, entries);
	if (n > room)
		n = room;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t seq = *next + i;
		struct crd_sqe *e = &s->csq[(*tail + i) & (entries - 1)];
		uint32_t off = payload_off(seq, entries);
		memset(e, 0, sizeof(*e));
		e->user_data = seq;
		e->op = CRD_OP_ENCRYPT;
		e->src_off = e->dst_off = off;
		e->len = 8;
		memcpy(s->carena + off, &seq, sizeof(seq));
	}
	*tail += n;
	*next += n;
	/* Publishes the entries and payloads written above; pairs with the
	 * daemon's acquire of ksq_tail. */
	crd_store_release(&s->ch->ksq_tail.k, *tail);
	return n;
}

static int sim_fail(struct sim *s, const char *why)
{
	s->why = why;
	return -1;
}

/*
 * Daemon: take what was submitted (as far as the cq has room) and
 * complete it in order. Returns how many, or -1 with s->why set: it runs
 * on its own thread in test_sim_threads, where cmocka's asserts (which
 * longjmp) must not be used.
 */
static int daemon_serve(struct sim *s, uint32_t max)
{
	struct queue *q = s->q;
	uint32_t tail = crd_load_acquire(&q->hdr->ksq_tail.k);
	uint32_t cq_head = crd_load_acquire(&q->hdr->kcq_head.k);
	uint32_t start, left;

	/* The daemon's own claim/post logic (daemon/data/order.c). */
	int got = order_claim(&q->ord, tail, cq_head, q->sq_entries,
			      q->cq_entries, max, &start, &left);
	if (got < 0)
		return sim_fail(s, "ring indices out of range");
	uint32_t n = (uint32_t)got;

	for (uint32_t i = 0; i < n; i++) {
		/* Copy once, then work on the private copy only. */
		struct crd_sqe e = q->sq[(start + i) & (q->sq_entries - 1)];
		uint32_t seq;
		if ((uint32_t)e.user_data != start + i - s->start)
			return sim_fail(s, "sqe out of order or torn");
		if ((uint64_t)e.src_off + e.len > q->arena_size)
			return sim_fail(s, "sqe payload outside the arena");
		memcpy(&seq, q->arena + e.src_off, sizeof(seq));
		if (seq != (uint32_t)e.user_data)
			return sim_fail(s, "payload not visible after acquire");

		struct crd_cqe *c = &q->cq[(start + i) & (q->cq_entries - 1)];
		c->user_data = e.user_data;
		c->status = CRD_ST_OK;
		c->len = e.len;
	}
	/* The run is copied out and completed: one mark each. */
	if (n) {
		order_copied(&q->ord, start, n);
		order_done(&q->ord, start, n);
	}
	/* Publishes both indices; each pairs with the client's acquire. */
	order_post(&q->ord, q->hdr, NULL);
	return (int)n;
}

/* daemon_serve() on the test's own thread. */
static int serve(struct sim *s, uint32_t max)
{
	int n = daemon_serve(s, max);
	if (n < 0)
		fail_msg("daemon side: %s", s->why);
	return n;
}

/* Client: reap completions, checking submission order. */
static uint32_t client_reap(struct sim *s, uint32_t *head, uint32_t *expect)
{
	uint32_t entries = s->ch->cq_entries;
	uint32_t tail = crd_load_acquire(&s->ch->kcq_tail.k);
	uint32_t n = crd_ring_used(*head, tail);
	assert_true(n <= entries);
	for (uint32_t i = 0; i < n; i++) {
		const struct crd_cqe *c = &s->ccq[(*head + i) & (entries - 1)];
		if ((uint32_t)c->user_data != *expect)
			fail_msg("completion %u out of order: got %u", *expect,
				 (uint32_t)c->user_data);
		assert_int_equal(c->status, CRD_ST_OK);
		assert_int_equal(c->len, 8);
		(*expect)++;
	}
	*head += n;
	crd_store_release(&s->ch->kcq_head.k, *head);
	return n;
}

static void test_sim_full_and_empty(void **state)
{
	struct sim s;
	uint32_t tail, next = 0, head, expect = 0;

	sim_setup(&s, 8, 8, 0xFFFFFFFAu);
	tail = head = s.start;

	/* Empty: nothing to serve, nothing to reap. */
	assert_int_equal(serve(&s, 64), 0);
	assert_int_equal(client_reap(&s, &head, &expect), 0);

	/* Fill the sq: exactly entries accepted, then refused. */
	assert_int_equal(client_submit(&s, &tail, &next, 100), 8);
	assert_int_equal(crd_ring_used(s.ch->ksq_head.k, s.ch->ksq_tail.k), 8);
	assert_int_equal(client_submit(&s, &tail, &next, 1), 0);

	/* Serve part, then the rest: the ring crosses the u32 wrap here. */
	assert_int_equal(serve(&s, 3), 3);
	assert_int_equal(client_submit(&s, &tail, &next, 100), 3);
	/* The cq holds 8: 3 + 5 fill it, the rest wait for the client. */
	assert_int_equal(serve(&s, 64), 5);
	assert_int_equal(serve(&s, 64), 0); /* cq full */
	assert_int_equal(client_reap(&s, &head, &expect), 8);
	assert_int_equal(serve(&s, 64), 3);
	assert_int_equal(client_reap(&s, &head, &expect), 3);
	assert_int_equal(expect, 11);

	/* Indices wrapped and the ring is empty again. */
	assert_true(crd_seq_before(s.start, s.ch->ksq_tail.k));
	assert_true(s.ch->ksq_tail.k < s.start);
	assert_int_equal(crd_ring_used(s.ch->ksq_head.k, s.ch->ksq_tail.k), 0);
	assert_int_equal(crd_ring_used(s.ch->kcq_head.k, s.ch->kcq_tail.k), 0);
	sim_teardown(&s);
}

/*
 * CRD_FEAT_CQE_SLOT: a client that read completions at their slots
 * refills their submission slots before ksq_head passes them, because
 * the poster lock's holder, a sibling worker, has not run since. The
 * daemon must neither call that a lie nor claim the refilled slots'
 * next lap before the poster has passed the last lap's copied marks:
 * the claim would overwrite a mark still unread, and the sq head would
 * stop short for good. A completion ring twice the submission ring's
 * size leaves the marks the only limit.
 */
static void test_sim_refill_before_sq_head(void **state)
{
	struct sim s;
	uint32_t tail, next = 0, head, expect = 0;

	sim_setup(&s, 8, 16, 0xFFFFFFFCu);
	tail = head = s.start;
	assert_int_equal(client_submit(&s, &tail, &next, 100), 8);

	atomic_store(&s.q->ord.lock, 1); /* a sibling posts, and stalls */
	assert_int_equal(serve(&s, 4), 4);
	assert_int_equal(s.ch->ksq_head.k, s.start); /* nothing posted */
	assert_int_equal(s.ch->kcq_tail.k, s.start);

	/* The client read the four completions at their slots. */
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(s.ccq[(s.start + i) & 15].user_data, i);
	s.read = s.start + 4;
	assert_int_equal(client_submit(&s, &tail, &next, 100), 4);

	/* The rest of the first lap, then nothing: the next lap's slots
	 * wait for the poster, and are not a lie. */
	assert_int_equal(serve(&s, 64), 4);
	uint32_t start, left;
	assert_int_equal(
		order_peek(&s.q->ord, tail, s.start, 8, 16, 64, &start, &left),
		0);
	assert_int_equal(left, 4);
	assert_int_equal(serve(&s, 64), 0);

	atomic_store(&s.q->ord.lock, 0); /* the sibling comes back */
	order_post(&s.q->ord, s.q->hdr, NULL);
	assert_int_equal(s.ch->ksq_head.k, s.start + 8);
	assert_int_equal(serve(&s, 64), 4);
	assert_int_equal(client_reap(&s, &head, &expect), 12);
	assert_int_equal(s.ch->ksq_head.k, tail);
	assert_int_equal(s.ch->kcq_tail.k, tail);
	sim_teardown(&s);
}

enum { SIM_THREAD_OPS = 300000 };

static void *sim_daemon_thread(void *arg)
{
	struct sim *s = arg;
	uint32_t done = 0;
	while (done < s->nops && !__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		int n = daemon_serve(s, 32);
		if (n < 0) {
			/* Publishes s->why to the client thread. */
			__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
			break;
		}
		if (!n)
			sched_yield();
		done += n;
	}
	return NULL;
}

static void test_sim_threads(void **state)
{
	struct sim s;
	pthread_t t;
	uint32_t tail, next = 0, head, expect = 0;

	/* Odd sizes: cq larger than sq, bursts that do not divide them. */
	sim_setup(&s, 16, 64, 0xFFFFFF00u);
	s.nops = SIM_THREAD_OPS;
	tail = head = s.start;
	assert_int_equal(pthread_create(&t, NULL, sim_daemon_thread, &s), 0);
	while (expect < s.nops && !__atomic_load_n(&s.stop, __ATOMIC_ACQUIRE)) {
		uint32_t want = s.nops - next < 7 ? s.nops - next : 7;
		if (want && client_submit(&s, &tail, &next, want) < want)
			s.retries++;
		if (!client_reap(&s, &head, &expect))
			sched_yield();
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (s.why)
		fail_msg("daemon side: %s", s.why);
	assert_int_equal(expect, SIM_THREAD_OPS);
	assert_int_equal(s.ch->ksq_tail.k, s.start + SIM_THREAD_OPS);
	assert_int_equal(s.ch->kcq_head.k, s.start + SIM_THREAD_OPS);
	sim_teardown(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_pow2),
		cmocka_unit_test(test_used_free_plain),
		cmocka_unit_test(test_used_free_wrap),
		cmocka_unit_test(test_slot_continuity_across_wrap),
		cmocka_unit_test(test_seq_before),
		cmocka_unit_test(test_align_up),
		cmocka_unit_test(test_abi_layout),
		cmocka_unit_test(test_queue_default_geometry),
		cmocka_unit_test(test_queue_custom_geometry),
		cmocka_unit_test(test_queue_bad_geometry),
		cmocka_unit_test(test_queue_sealed),
		cmocka_unit_test(test_queue_client_view),
		cmocka_unit_test(test_queue_in_flight),
		cmocka_unit_test(test_queue_destroy_marks_dead),
		cmocka_unit_test(test_queue_doorbells_client_proof),
		cmocka_unit_test(test_sim_full_and_empty),
		cmocka_unit_test(test_sim_refill_before_sq_head),
		cmocka_unit_test(test_sim_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
