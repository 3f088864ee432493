/* SPDX-License-Identifier: MIT */
/* A client that speaks the control protocol and the ring ABI by hand,
 * for tests that must do what libcryptoclient never would. */
#include "rawclient.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"

void raw_connect(struct raw *r, const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	r->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(r->fd >= 0);
	assert_int_equal(connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	r->seq = 0;
}

/* Wait for one packet; returns its length, 0 at EOF, -errno. */
ssize_t raw_recv(struct raw *r, int *fds, unsigned *nfds)
{
	struct pollfd p = { .fd = r->fd, .events = POLLIN };
	if (poll(&p, 1, 5000) != 1)
		return -ETIMEDOUT;
	int lf[CTL_MAX_FDS];
	unsigned ln = 0;
	ssize_t n = wire_recv(r->fd, r->rx, fds ? fds : lf, CTL_MAX_FDS,
			      nfds ? nfds : &ln);
	if (!fds)
		wire_close_fds(lf, ln);
	if (n == -EPIPE || n == -ECONNRESET)
		return 0;
	return n;
}

Cryptod__Envelope *raw_call(struct raw *r, Cryptod__Envelope *req, int *fds,
			    unsigned *nfds)
{
	req->seq = ++r->seq;
	assert_int_equal(wire_send(r->fd, req, NULL, 0), 0);
	ssize_t n = raw_recv(r, fds, nfds);
	assert_true(n > 0);
	Cryptod__Envelope *env = wire_decode(r->rx, (size_t)n);
	assert_non_null(env);
	assert_int_equal(env->seq, req->seq);
	return env;
}

void raw_hello(struct raw *r, uint32_t abi)
{
	Cryptod__Hello h = CRYPTOD__HELLO__INIT;
	h.abi_version = abi;
	h.client_name = "badinput";
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_HELLO;
	req.hello = &h;
	Cryptod__Envelope *rep = raw_call(r, &req, NULL, NULL);
	assert_int_equal(rep->body_case, CRYPTOD__ENVELOPE__BODY_HELLO_REPLY);
	wire_free(rep);
}

int raw_send_nul(struct raw *r, Cryptod__Envelope *env, const char *marker)
{
	static uint8_t buf[CTL_MSG_MAX];
	env->seq = ++r->seq;
	size_t n = cryptod__envelope__get_packed_size(env), ml = strlen(marker);
	if (n > sizeof(buf))
		return -EMSGSIZE;
	cryptod__envelope__pack(env, buf);
	uint8_t *at = memmem(buf, n, marker, ml);
	if (!at)
		return -EPROTO;
	for (size_t i = 0; i < ml; i++)
		if (at[i] == 0x01)
			at[i] = 0;
	return send(r->fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -errno;
}

int rc_keys_init(struct rc_keys *k)
{
	uint8_t kek[32];
	char p[160];
	snprintf(k->dir, sizeof(k->dir), "/tmp/cryptod-keys.XXXXXX");
	if (!mkdtemp(k->dir))
		return -errno;
	snprintf(k->creds, sizeof(k->creds), "%s/creds", k->dir);
	snprintf(k->kd_arg, sizeof(k->kd_arg), "keys.dir=%s/keys", k->dir);
	snprintf(p, sizeof(p), "%s/kek", k->creds);
	if (mkdir(k->creds, 0700))
		return -errno;
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
	if (fd < 0)
		return -errno;
	int ok = getrandom(kek, sizeof(kek), 0) == (ssize_t)sizeof(kek) &&
		 write(fd, kek, sizeof(kek)) == (ssize_t)sizeof(kek);
	explicit_bzero(kek, sizeof(kek));
	close(fd);
	if (!ok)
		return -EIO;
	setenv("CREDENTIALS_DIRECTORY", k->creds, 1);
	k->args[0] = "--set";
	k->args[1] = "keys.kek=credential:kek";
	k->args[2] = "--set";
	k->args[3] = k->kd_arg;
	k->args[4] = NULL;
	return 0;
}

void rc_keys_fini(struct rc_keys *k)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", k->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "rc_keys_fini: %s left behind\n", k->dir);
}

/* Returns the session id, or the (negative) error code of the reply. */
int raw_session(struct raw *r, int alg, const void *key, size_t len,
		const char *engine)
{
	Cryptod__CreateSession m = CRYPTOD__CREATE_SESSION__INIT;
	m.alg = alg;
	m.key.data = (uint8_t *)key;
	m.key.len = len;
	m.engine = (char *)(engine ? engine : "");
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_CREATE_SESSION;
	req.create_session = &m;
	Cryptod__Envelope *rep = raw_call(r, &req, NULL, NULL);
	int ret;
	if (rep->body_case == CRYPTOD__ENVELOPE__BODY_ERROR) {
		ret = rep->error->code;
		assert_true(ret < 0);
		assert_true(rep->error->message && *rep->error->message);
	} else {
		assert_int_equal(rep->body_case,
				 CRYPTOD__ENVELOPE__BODY_CREATE_SESSION_REPLY);
		ret = rep->create_session_reply->session_id;
	}
	wire_free(rep);
	return ret;
}

void raw_open_queue(struct raw *r, struct rawq *q)
{
	Cryptod__OpenQueue m = CRYPTOD__OPEN_QUEUE__INIT;
	m.sq_entries = 64;
	m.arena_size = 1 << 20;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_OPEN_QUEUE;
	req.open_queue = &m;
	int fds[CTL_MAX_FDS];
	unsigned nfds = 0;
	Cryptod__Envelope *rep = raw_call(r, &req, fds, &nfds);
	assert_int_equal(rep->body_case,
			 CRYPTOD__ENVELOPE__BODY_OPEN_QUEUE_REPLY);
	assert_int_equal(nfds, 3);
	const Cryptod__OpenQueueReply *o = rep->open_queue_reply;
	memset(q, 0, sizeof(*q));
	q->size = o->region_size;
	q->base = mmap(NULL, q->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fds[0], 0);
	assert_true(q->base != MAP_FAILED);
	q->hdr = (struct crd_region_hdr *)q->base;
	q->sq = (struct crd_sqe *)(q->base + o->sq_off);
	q->cq = (struct crd_cqe *)(q->base + o->cq_off);
	q->arena_off = o->arena_off;
	q->arena_size = o->arena_size;
	q->sq_entries = o->sq_entries;
	q->cq_entries = o->cq_entries;
	q->memfd = fds[0];
	q->sq_efd = fds[1];
	q->cq_efd = fds[2];
	wire_free(rep);
}

void raw_close_queue(struct rawq *q)
{
	munmap(q->base, q->size);
	close(q->memfd);
	close(q->sq_efd);
	close(q->cq_efd);
}

/* Publish n entries already written at tail.., wake the worker. */
void rawq_submit(struct rawq *q, unsigned n)
{
	q->tail += n;
	__atomic_store_n(&q->hdr->ksq_tail.k, q->tail, __ATOMIC_RELEASE);
	uint64_t one = 1;
	assert_int_equal(write(q->sq_efd, &one, sizeof(one)), sizeof(one));
}

/* Wait (bounded) for n completions and copy them out. */
void rawq_reap(struct rawq *q, struct crd_cqe *out, unsigned n)
{
	for (int i = 0; i < 5000; i++) {
		uint32_t t =
			__atomic_load_n(&q->hdr->kcq_tail.k, __ATOMIC_ACQUIRE);
		if (t - q->head >= n)
			break;
		usleep(1000);
	}
	uint32_t t = __atomic_load_n(&q->hdr->kcq_tail.k, __ATOMIC_ACQUIRE);
	assert_true(t - q->head >= n);
	for (unsigned i = 0; i < n; i++)
		out[i] = q->cq[(q->head + i) & (q->cq_entries - 1)];
	q->head += n;
	__atomic_store_n(&q->hdr->kcq_head.k, q->head, __ATOMIC_RELEASE);
}

struct crd_sqe *rawq_sqe(struct rawq *q, unsigned i)
{
	struct crd_sqe *e = &q->sq[(q->tail + i) & (q->sq_entries - 1)];
	memset(e, 0, sizeof(*e));
	return e;
}

/* A valid 64-byte in-place GCM encrypt at arena offset off. */
void sqe_valid(struct crd_sqe *e, uint32_t session, uint32_t off, uint64_t ud)
{
	e->user_data = ud;
	e->session = session;
	e->op = CRD_OP_ENCRYPT;
	e->iv_len = 12;
	e->src_off = e->dst_off = off;
	e->len = 64;
	e->tag_off = off + 64;
}

int rc_count_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

int rc_pid_fds(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/fd", (int)pid);
	return rc_count_dir(p);
}

int rc_pid_queue_maps(pid_t pid)
{
	char p[64], line[512];
	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	int n = 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "cryptod-queue") != NULL;
	fclose(f);
	return n;
}

unsigned rc_stall_ms(void)
{
	const char *e = getenv("CRYPTOD_TEST_STALL_MS");
	int v = e ? atoi(e) : 0;
	return v > 0 ? (unsigned)v : 1000;
}

static const uint8_t good_key[16] = { 0x60, 0x61, 0x62, 0x63, 0x64, 0x65,
				      0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b,
				      0x6c, 0x6d, 0x6e, 0x6f };

static void *good_main(void *arg)
{
	struct good_client *g = arg;
	struct cc_conn *c;
	uint32_t sid;
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = good_key,
					.key_len = 16 };
	if (cc_connect(g->sock, "good-client", &c)) {
		atomic_fetch_add(&g->fails, 1);
		atomic_store(&g->started, 1);
		return NULL;
	}
	if (cc_session_create(c, &sp, &sid)) {
		atomic_fetch_add(&g->fails, 1);
		atomic_store(&g->started, 1);
		cc_disconnect(c);
		return NULL;
	}
	uint8_t iv[12] = { 0 }, ref[64 + 16], out[64 + 16];
	int have_ref = 0;
	atomic_store(&g->last_ok_ms, fx_now_ms());
	atomic_store(&g->started, 1);
	while (!atomic_load(&g->stop)) {
		uint8_t in[64] = { 0 };
		uint64_t t0 = fx_now_ms();
		int err = cc_crypt(c, sid, CC_ENCRYPT, iv, 12, NULL, 0, in, out,
				   64, out + 64);
		uint64_t t1 = fx_now_ms();
		if (!err && !have_ref) {
			memcpy(ref, out, sizeof(ref));
			have_ref = 1;
		}
		if (err || memcmp(out, ref, sizeof(ref))) {
			atomic_fetch_add(&g->fails, 1);
		} else {
			atomic_fetch_add(&g->ops, 1);
			atomic_store(&g->last_ok_ms, t1);
		}
		if (t1 - t0 > atomic_load(&g->max_gap_ms))
			atomic_store(&g->max_gap_ms, t1 - t0);
		usleep(2000);
	}
	cc_session_destroy(c, sid);
	cc_disconnect(c);
	atomic_store(&g->exited, 1);
	return NULL;
}

void good_start(struct good_client *g, const char *sock)
{
	memset(g, 0, sizeof(*g));
	g->sock = sock;
	assert_int_equal(pthread_create(&g->thread, NULL, good_main, g), 0);
	while (!atomic_load(&g->started))
		usleep(1000);
	usleep(50000);
	assert_int_equal(atomic_load(&g->fails), 0);
}

void good_check(struct good_client *g, unsigned limit_ms)
{
	/* The last success first, then the clock: now is never before it
	 * (the thread may finish an op between the two reads). */
	uint64_t last = atomic_load(&g->last_ok_ms), now = fx_now_ms();
	uint64_t gap = now > last ? now - last : 0;
	uint64_t worst = atomic_load(&g->max_gap_ms);
	if (gap > worst)
		worst = gap;
	if (atomic_load(&g->fails) || worst > limit_ms) {
		fprintf(stderr,
			"good client: %llu ops, %llu failed, longest wait "
			"%llu ms (limit %u)\n",
			(unsigned long long)atomic_load(&g->ops),
			(unsigned long long)atomic_load(&g->fails),
			(unsigned long long)worst, limit_ms);
		fail_msg("the well-behaved client was disturbed");
	}
}

void good_stop(struct good_client *g, unsigned limit_ms)
{
	good_check(g, limit_ms);
	atomic_store(&g->stop, 1);
	/* A thread stuck in an op is not joined: the test fails instead. */
	for (int i = 0; i < 2000 && !atomic_load(&g->exited); i++)
		usleep(1000);
	if (!atomic_load(&g->exited))
		fail_msg("the well-behaved client is stuck in an op");
	pthread_join(g->thread, NULL);
	printf("good client: %llu ops, longest %llu ms\n",
	       (unsigned long long)atomic_load(&g->ops),
	       (unsigned long long)atomic_load(&g->max_gap_ms));
}

/* In a child of its own, so that a daemon that does not answer fails the
 * test instead of hanging it. Exit 0 when served. */
static int fresh_client_main(const char *sock)
{
	struct cc_conn *c;
	struct cc_queue *q;
	uint32_t sid;
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = good_key,
					.key_len = 16 };
	uint8_t iv[12] = { 0 }, buf[64] = { 0 }, tag[16];
	if (cc_connect(sock, "fresh-client", &c))
		return 1;
	if (cc_queue_open(c, NULL, &q))
		return 2;
	if (cc_session_create(c, &sp, &sid))
		return 3;
	if (cc_crypt(c, sid, CC_ENCRYPT, iv, 12, NULL, 0, buf, buf, 64, tag))
		return 4;
	cc_queue_close(q);
	cc_disconnect(c);
	return 0;
}

void fresh_client_served(const char *sock, unsigned limit_ms)
{
	uint64_t t0 = fx_now_ms();
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fresh_client_main(sock));
	int st = 0, done = 0;
	while (!done && fx_now_ms() - t0 < limit_ms + 2000) {
		done = waitpid(pid, &st, WNOHANG) == pid;
		if (!done)
			usleep(1000);
	}
	uint64_t dt = fx_now_ms() - t0;
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		fail_msg("a fresh client was not served in %llu ms",
			 (unsigned long long)dt);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("a fresh client failed (step %d)",
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	if (dt > limit_ms)
		fail_msg("a fresh client took %llu ms to be served (limit %u)",
			 (unsigned long long)dt, limit_ms);
}
