/* SPDX-License-Identifier: MIT */
/*
 * Hostile clients against the access policy and the limits: peers the
 * allow lists refuse (run as other users: forked children that drop to
 * another uid with setresuid, so this test needs root and skips without
 * it), floods of connections, sessions and queues, one user spreading a
 * flood over many connections, and a consumer that never reads its
 * completions. Each case checks the offender gets its defined error, the
 * daemon keeps serving everyone else, and nothing grows without bound.
 */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"

/* Users and groups that need not exist: the kernel takes any number. */
enum {
	UID_ALLOWED = 4321,
	UID_OTHER = 4999,
	UID_GROUPED = 4998,
	GID_ALLOWED = 4242,
	LOG_RATE_BURST = 10, /* daemon/bounds.h */
};

static const uint8_t key128[16] = { 1, 2,  3,  4,  5,  6,  7,  8,
				    9, 10, 11, 12, 13, 14, 15, 16 };
static const uint8_t key256[32] = { 1 };

struct daemon_log {
	struct fx_daemon d;
	char log[PATH_MAX + 16];
};

/* Start a daemon whose stderr goes to a file we can read, socket open to
 * every user (mode 0666, directory 0755), with extra arguments. */
static void start_nofile(struct daemon_log *dl, const char *const *args,
			 unsigned nofile)
{
	char tmpl[] = "/tmp/cryptod-limits-log.XXXXXX";
	int fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	snprintf(dl->log, sizeof(dl->log), "%s", tmpl);
	fflush(stderr);
	int saved = dup(2);
	dup2(fd, 2);
	close(fd);
	const char *all[24] = { "--socket-mode", "0666" };
	unsigned n = 2;
	for (unsigned i = 0; args && args[i]; i++)
		all[n++] = args[i];
	all[n] = NULL;
	struct fx_daemon_params p = {
		.workers = 2, .log_level = "info", .args = all, .nofile = nofile
	};
	int err = fx_daemon_start(&dl->d, &p);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(err, 0);
	assert_int_equal(chmod(dl->d.dir, 0755), 0);
}

static void start(struct daemon_log *dl, const char *const *args)
{
	start_nofile(dl, args, 0);
}

static void stop(struct daemon_log *dl)
{
	assert_int_equal(fx_daemon_stop(&dl->d), 0);
	unlink(dl->log);
}

static unsigned log_count(const struct daemon_log *dl, const char *needle)
{
	FILE *f = fopen(dl->log, "r");
	char line[1024];
	unsigned n = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* Run fn as uid/gid (with the given supplementary groups) in a child;
 * returns its exit status. fn returns 0 for success. */
static int as_user(uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups,
		   int (*fn)(const char *sock, void *arg), const char *sock,
		   void *arg)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(ngroups, groups) < 0 ||
		    setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0) {
			perror("drop privileges");
			_exit(90);
		}
		_exit(fn(sock, arg));
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* A served client: create a session and run one op. */
static int works(struct cc_conn *c)
{
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key128,
					.key_len = 16 };
	uint32_t sid;
	uint8_t iv[12] = { 0 }, buf[64] = { 0 }, tag[16];
	if (cc_session_create(c, &sp, &sid))
		return 1;
	return fx_crypt(c, sid, CC_ENCRYPT, iv, 12, NULL, 0, buf, buf,
			sizeof(buf), tag)
		       ? 2
		       : 0;
}

static void serves_root(const struct daemon_log *dl)
{
	struct cc_conn *c;
	assert_int_equal(cc_connect(dl->d.sock, "root", &c), 0);
	assert_int_equal(works(c), 0);
	cc_disconnect(c);
}

/* ---- access policy ---- */

static int child_connect_expect(const char *sock, void *arg)
{
	int want = *(int *)arg;
	struct cc_conn *c;
	int err = cc_connect(sock, "child", &c);
	if (err != want) {
		fprintf(stderr, "cc_connect: %d (%s), want %d\n", err,
			cc_strerror(err), want);
		return 10;
	}
	if (err)
		return 0;
	int r = works(c);
	cc_disconnect(c);
	return r;
}

static void refused_peers(void **state)
{
	static const char *const args[] = {
		"--set", "allow_users=4321", "--set", "allow_groups=4242", NULL,
	};
	struct daemon_log dl;
	start(&dl, args);
	int ok = 0, refused = CC_ERR_ACCESS;

	/* Not listed: refused with the access error, every time. */
	for (int i = 0; i < 30; i++)
		assert_int_equal(as_user(UID_OTHER, UID_OTHER, NULL, 0,
					 child_connect_expect, dl.d.sock,
					 &refused),
				 0);
	/* Listed user, primary group, supplementary group: served. */
	assert_int_equal(as_user(UID_ALLOWED, UID_ALLOWED, NULL, 0,
				 child_connect_expect, dl.d.sock, &ok),
			 0);
	assert_int_equal(as_user(UID_GROUPED, GID_ALLOWED, NULL, 0,
				 child_connect_expect, dl.d.sock, &ok),
			 0);
	gid_t sup[] = { 7, GID_ALLOWED };
	assert_int_equal(as_user(UID_GROUPED, UID_GROUPED, sup, 2,
				 child_connect_expect, dl.d.sock, &ok),
			 0);
	/* The refused peer never disturbed root (an admin). */
	serves_root(&dl);
	assert_string_equal(cc_strerror(CC_ERR_ACCESS),
			    "not allowed by cryptod's access policy");

	/* One line per refusal, with uid, gid and pid, but at most the
	 * per-uid burst of them for 30 refusals. */
	unsigned lines = log_count(&dl, "refusing pid");
	assert_true(lines >= 1 && lines <= LOG_RATE_BURST);
	assert_int_equal(log_count(&dl, "uid 4999 gid 4999"), lines);
	stop(&dl);
}

/* ---- connections per uid ---- */

static int child_conn_limit(const char *sock, void *arg)
{
	struct cc_conn *c[4];
	for (int i = 0; i < 3; i++)
		if (cc_connect(sock, "flood", &c[i]))
			return 1;
	int err = cc_connect(sock, "flood", &c[3]);
	if (err != -EUSERS) {
		fprintf(stderr, "4th connection: %s\n", cc_strerror(err));
		return 2;
	}
	if (works(c[0]))
		return 3; /* the ones it has still work */
	cc_disconnect(c[2]);
	/* A freed slot can be used again, once the daemon has seen the
	 * hang-up. */
	uint64_t end = fx_now_ms() + 5000;
	while ((err = cc_connect(sock, "again", &c[2])) == -EUSERS &&
	       fx_now_ms() < end)
		usleep(10000);
	if (err)
		return 4;
	for (int i = 0; i < 3; i++)
		cc_disconnect(c[i]);
	return 0;
}

static void connections_per_uid(void **state)
{
	static const char *const args[] = { "--set",
					    "limits.connections_per_uid=3",
					    NULL };
	struct daemon_log dl;
	start(&dl, args);
	assert_int_equal(as_user(UID_ALLOWED, UID_ALLOWED, NULL, 0,
				 child_conn_limit, dl.d.sock, NULL),
			 0);
	/* Root is exempt. */
	struct cc_conn *c[6];
	for (int i = 0; i < 6; i++)
		assert_int_equal(cc_connect(dl.d.sock, "root", &c[i]), 0);
	for (int i = 0; i < 6; i++)
		cc_disconnect(c[i]);
	assert_true(log_count(&dl, "limits.connections_per_uid") >= 1);
	stop(&dl);
}

/* A flood of connections up to the daemon's 256: the next one gets a
 * clear error, the connections it has keep working, and closing some
 * makes room again. */
static void connection_flood(void **state)
{
	struct daemon_log dl;
	start(&dl, NULL);
	struct cc_conn *keep, *c[256];
	assert_int_equal(cc_connect(dl.d.sock, "keep", &keep), 0);
	unsigned n = 0;
	int err = 0;
	while (n < 256 && !(err = cc_connect(dl.d.sock, "flood", &c[n])))
		n++;
	assert_int_equal(err, -EUSERS);
	/* 256 with keep, less the fixture's probe if the daemon has not
	 * seen it go yet. */
	assert_true(n >= 250 && n <= 255);
	assert_int_equal(works(keep), 0);
	for (unsigned i = 0; i < 16; i++)
		cc_disconnect(c[--n]);
	uint64_t end = fx_now_ms() + 5000;
	while ((err = cc_connect(dl.d.sock, "after", &c[n])) == -EUSERS &&
	       fx_now_ms() < end)
		usleep(10000);
	assert_int_equal(err, 0);
	n++;
	while (n)
		cc_disconnect(c[--n]);
	cc_disconnect(keep);
	serves_root(&dl);
	stop(&dl);
}

/* ---- sessions, queues, arena, in flight ---- */

static int session(struct cc_conn *c, uint32_t *sid)
{
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key128,
					.key_len = 16 };
	uint32_t tmp;
	return cc_session_create(c, &sp, sid ? sid : &tmp);
}

static int child_session_flood(const char *sock, void *arg)
{
	struct cc_conn *a, *b;
	if (cc_connect(sock, "a", &a) || cc_connect(sock, "b", &b))
		return 1;
	for (int i = 0; i < 8; i++)
		if (session(a, NULL))
			return 2;
	if (session(a, NULL) != -ENOSPC ||
	    !strstr(cc_conn_last_error(a), "limits.sessions_per_client"))
		return 3;
	/* The same user on another connection: the per-uid limit (12). */
	for (int i = 0; i < 4; i++)
		if (session(b, NULL))
			return 4;
	if (session(b, NULL) != -ENOSPC ||
	    !strstr(cc_conn_last_error(b), "limits.sessions_per_uid"))
		return 5;
	/* Queues: 3 per uid over both connections; arena 1M per uid. */
	struct cc_queue_params qp = { .sq_entries = 8,
				      .arena_size = 256 << 10 };
	struct cc_queue *q[4];
	if (cc_queue_open(a, &qp, &q[0]) || cc_queue_open(a, &qp, &q[1]) ||
	    cc_queue_open(b, &qp, &q[2]))
		return 6;
	if (cc_queue_open(b, &qp, &q[3]) != -EMFILE)
		return 7;
	cc_queue_close(q[2]);
	qp.arena_size = 768 << 10; /* 256K + 256K + 768K > 1M */
	if (cc_queue_open(b, &qp, &q[2]) != -EDQUOT)
		return 8;
	cc_disconnect(a);
	cc_disconnect(b);
	return 0;
}

static int child_other_user(const char *sock, void *arg)
{
	struct cc_conn *c;
	if (cc_connect(sock, "other", &c))
		return 1;
	for (int i = 0; i < 8; i++)
		if (session(c, NULL))
			return 2;
	cc_disconnect(c);
	return 0;
}

/* The flooding user holds its sessions (it waits on a pipe) while
 * another user creates its own: the per-uid limit charges only the
 * flooder. */
static int child_flood_and_hold(const char *sock, void *arg)
{
	int *fds = arg; /* [0]: wait for a byte, [1]: say ready */
	struct cc_conn *c[2];
	if (cc_connect(sock, "h0", &c[0]) || cc_connect(sock, "h1", &c[1]))
		return 1;
	for (int i = 0; i < 12; i++)
		if (session(c[i % 2], NULL))
			return 2;
	if (session(c[0], NULL) != -ENOSPC)
		return 3;
	char b = 1;
	if (write(fds[1], &b, 1) != 1 || read(fds[0], &b, 1) != 1)
		return 4;
	cc_disconnect(c[0]);
	cc_disconnect(c[1]);
	return 0;
}

static void per_client_and_per_uid(void **state)
{
	static const char *const args[] = {
		"--set", "limits.sessions_per_client=8",
		"--set", "limits.sessions_per_uid=12",
		"--set", "limits.queues_per_uid=3",
		"--set", "limits.arena_per_uid=1M",
		NULL,
	};
	struct daemon_log dl;
	start(&dl, args);
	assert_int_equal(as_user(UID_ALLOWED, UID_ALLOWED, NULL, 0,
				 child_session_flood, dl.d.sock, NULL),
			 0);

	int go[2], ready[2];
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fds[2] = { go[0], ready[1] };
		if (setresgid(UID_ALLOWED, UID_ALLOWED, UID_ALLOWED) < 0 ||
		    setresuid(UID_ALLOWED, UID_ALLOWED, UID_ALLOWED) < 0)
			_exit(90);
		_exit(child_flood_and_hold(dl.d.sock, fds));
	}
	char b;
	assert_int_equal(read(ready[0], &b, 1), 1);
	/* The flooder holds 12 sessions: another user is not charged. */
	assert_int_equal(as_user(UID_OTHER, UID_OTHER, NULL, 0,
				 child_other_user, dl.d.sock, NULL),
			 0);
	serves_root(&dl);
	assert_int_equal(write(go[1], &b, 1), 1);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	stop(&dl);
}

static void inflight_limit(void **state)
{
	static const char *const args[] = {
		"--set", "limits.inflight_per_client=64",
		"--set", "limits.queues_per_client=3",
		NULL,
	};
	struct daemon_log dl;
	start(&dl, args);
	struct cc_conn *c;
	struct cc_queue *q[4];
	assert_int_equal(cc_connect(dl.d.sock, "inflight", &c), 0);
	struct cc_queue_params qp = { .sq_entries = 16,
				      .cq_entries = 32,
				      .arena_size = 64 << 10 };
	assert_int_equal(cc_queue_open(c, &qp, &q[0]), 0);
	qp.cq_entries = 64;
	assert_int_equal(cc_queue_open(c, &qp, &q[1]), -ENOBUFS);
	assert_non_null(
		strstr(cc_conn_last_error(c), "limits.inflight_per_client"));
	qp.cq_entries = 32;
	assert_int_equal(cc_queue_open(c, &qp, &q[1]), 0);
	cc_queue_close(q[0]); /* frees its 32 */
	assert_int_equal(cc_queue_open(c, &qp, &q[0]), 0);
	/* queues_per_client = 3 */
	qp.cq_entries = 0;
	qp.sq_entries = 8;
	assert_int_equal(cc_queue_open(c, &qp, &q[2]), -ENOBUFS);
	cc_queue_close(q[1]);
	assert_int_equal(cc_queue_open(c, &qp, &q[1]), 0);
	assert_int_equal(cc_queue_open(c, &qp, &q[2]), 0);
	assert_int_equal(cc_queue_open(c, &qp, &q[3]), -EMFILE);
	cc_disconnect(c);
	serves_root(&dl);
	stop(&dl);
}

/* ---- key policy ---- */

static void key_policy(void **state)
{
	static const char *const args[] = { "--set", "keys.min_bits=256",
					    "--set", "keys.sessionless=no",
					    NULL };
	struct daemon_log dl;
	start(&dl, args);
	struct cc_conn *c;
	struct cc_queue *q;
	assert_int_equal(cc_connect(dl.d.sock, "policy", &c), 0);
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key128,
					.key_len = 16 };
	uint32_t sid;
	assert_int_equal(cc_session_create(c, &sp, &sid), CC_ERR_POLICY);
	assert_non_null(strstr(cc_conn_last_error(c), "keys.min_bits"));
	sp.key = key256;
	sp.key_len = 32;
	assert_int_equal(cc_session_create(c, &sp, &sid), 0);
	/* XTS counts per half: two 128-bit halves are 128 bits. */
	uint8_t xts[32];
	for (int i = 0; i < 32; i++)
		xts[i] = i;
	sp.alg = CC_ALG_AES_XTS;
	sp.key = xts;
	assert_int_equal(cc_session_create(c, &sp, &sid), CC_ERR_POLICY);

	/* Session-less ops complete with the policy status. */
	struct cc_queue_params qp = { .sq_entries = 8, .arena_size = 1 << 16 };
	assert_int_equal(cc_queue_open(c, &qp, &q), 0);
	struct cc_sessionless *sl = cc_buf_alloc(q, sizeof(*sl));
	uint8_t *buf = cc_buf_alloc(q, 64), *tag = cc_buf_alloc(q, 16);
	assert_non_null(sl);
	memset(sl, 0, sizeof(*sl));
	sl->alg = CC_ALG_AES_GCM;
	sl->key_len = 32;
	uint8_t iv[12] = { 0 };
	struct cc_op op = { .user_data = 7,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .len = 64,
			    .tag = tag,
			    .iv = iv,
			    .iv_len = 12,
			    .sessionless = sl };
	struct cc_completion comp;
	assert_int_equal(fx_run_burst(q, &op, 1, &comp, 10000), 0);
	assert_int_equal(comp.status, CC_ERR_POLICY);
	assert_string_equal(cc_strerror(CC_ERR_POLICY),
			    "refused by cryptod's key policy");
	cc_disconnect(c);
	stop(&dl);
}

/* ---- a consumer that never reads its completions ---- */

static long daemon_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void never_reads_completions(void **state)
{
	struct daemon_log dl;
	start(&dl, NULL);
	struct cc_conn *bad;
	struct cc_queue *q;
	assert_int_equal(cc_connect(dl.d.sock, "deaf", &bad), 0);
	struct cc_session_params sp = { .alg = CC_ALG_NULL };
	uint32_t sid;
	assert_int_equal(cc_session_create(bad, &sp, &sid), 0);
	struct cc_queue_params qp = { .sq_entries = 64,
				      .cq_entries = 64,
				      .arena_size = 1 << 16 };
	assert_int_equal(cc_queue_open(bad, &qp, &q), 0);
	uint8_t *buf = cc_buf_alloc(q, 256);
	assert_non_null(buf);
	struct cc_op ops[32];
	for (unsigned i = 0; i < 32; i++)
		ops[i] = (struct cc_op){ .session = sid,
					 .dir = CC_ENCRYPT,
					 .src = buf,
					 .len = 256 };

	/* Fill the rings, then keep pushing for a while without ever
	 * taking a completion, while a well-behaved client runs. */
	struct cc_conn *good;
	assert_int_equal(cc_connect(dl.d.sock, "good", &good), 0);
	struct cc_session_params gp = { .alg = CC_ALG_AES_GCM,
					.key = key128,
					.key_len = 16 };
	uint32_t gsid;
	assert_int_equal(cc_session_create(good, &gp, &gsid), 0);
	uint8_t iv0[12] = { 0 }, data0[64] = { 0 }, tag0[16];
	assert_int_equal(fx_crypt(good, gsid, CC_ENCRYPT, iv0, 12, NULL, 0,
				  data0, data0, sizeof(data0), tag0),
			 0); /* its queue is set up before we measure */
	long rss0 = daemon_rss_kib(dl.d.pid);
	uint64_t accepted = 0, refused = 0, end = fx_now_ms() + 1500;
	unsigned good_ops = 0;
	while (fx_now_ms() < end) {
		for (unsigned i = 0; i < 32; i++)
			ops[i].user_data = accepted + i;
		int n = cc_enqueue_burst(q, ops, 32);
		assert_true(n >= 0);
		accepted += n;
		refused += 32 - n;
		uint8_t iv[12] = { 0 }, data[64] = { 0 }, tag[16];
		assert_int_equal(fx_crypt(good, gsid, CC_ENCRYPT, iv, 12, NULL,
					  0, data, data, sizeof(data), tag),
				 0);
		good_ops++;
	}
	/* The daemon took no more than the completion ring holds plus what
	 * the submission ring holds, and refused the rest. */
	assert_true(accepted <= 64 + 64);
	assert_true(refused > 0);
	assert_true(good_ops > 10);
	long rss1 = daemon_rss_kib(dl.d.pid);
	assert_true(rss0 > 0 && rss1 > 0);
	assert_true(rss1 - rss0 < 16 * 1024); /* no growth to speak of */

	/* Now read: every accepted op completes, in order, nothing lost. */
	uint64_t next = 0;
	uint64_t deadline = fx_now_ms() + 10000;
	while (next < accepted && fx_now_ms() < deadline) {
		struct cc_completion comp[64];
		int n = cc_dequeue_burst(q, comp, 64);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++) {
			assert_int_equal(comp[i].status, CC_OK);
			assert_true(comp[i].user_data == next);
			next++;
		}
		if (!n)
			cc_wait(q, 100);
	}
	assert_true(next == accepted);
	cc_disconnect(good);
	cc_disconnect(bad);
	stop(&dl);
}

/* ---- a daemon out of file descriptors ---- */

static double daemon_cpu_s(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the name may hold spaces */
	unsigned long ut, st;
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

static int raw_connect(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
			0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * The daemon started with only 64 fds: a flood of connections exhausts
 * them. It must not spin on the listener it cannot accept from, a client
 * already connected keeps being served, and once the flood goes new
 * clients get in again.
 */
static void out_of_fds(void **state)
{
	struct daemon_log dl;
	start_nofile(&dl, NULL, 64);

	struct cc_conn *keep;
	uint32_t sid;
	uint8_t iv[12] = { 0 }, buf[64] = { 0 }, tag[16];
	assert_int_equal(cc_connect(dl.d.sock, "keep", &keep), 0);
	assert_int_equal(session(keep, &sid), 0);
	/* Its queue (memfd, eventfd) exists before the flood. */
	assert_int_equal(fx_crypt(keep, sid, CC_ENCRYPT, iv, 12, NULL, 0, buf,
				  buf, sizeof(buf), tag),
			 0);

	int fds[100];
	unsigned n = 0;
	while (n < 100) {
		int fd = raw_connect(dl.d.sock);
		if (fd < 0)
			break; /* backlog full: EAGAIN */
		fds[n++] = fd;
	}
	assert_true(n > 64);
	usleep(200000);
	double cpu0 = daemon_cpu_s(dl.d.pid);
	uint64_t t0 = fx_now_ms();
	for (int i = 0; i < 20; i++) {
		assert_int_equal(fx_crypt(keep, sid, CC_ENCRYPT, iv, 12, NULL,
					  0, buf, buf, sizeof(buf), tag),
				 0);
		usleep(50000);
	}
	double cpu = daemon_cpu_s(dl.d.pid) - cpu0;
	double wall = (fx_now_ms() - t0) / 1000.0;
	fprintf(stderr, "out of fds: daemon CPU %.2f s in %.2f s\n", cpu, wall);
	/* Spinning on accept would burn the whole interval. */
	if (cpu > wall / 4)
		fail_msg("daemon used %.2f s of CPU in %.2f s out of fds", cpu,
			 wall);
	assert_true(log_count(&dl, "pausing new connections") >= 1);

	while (n)
		close(fds[--n]);
	struct cc_conn *after;
	int err;
	uint64_t end = fx_now_ms() + 10000;
	while ((err = cc_connect(dl.d.sock, "after", &after)) != 0 &&
	       fx_now_ms() < end)
		usleep(20000);
	assert_int_equal(err, 0);
	cc_disconnect(after);
	cc_disconnect(keep);
	stop(&dl);
}

static int need_root(void **state)
{
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: needs root (setresuid to other "
				"users)\n");
		exit(FX_EXIT_SKIP);
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refused_peers),
		cmocka_unit_test(connections_per_uid),
		cmocka_unit_test(connection_flood),
		cmocka_unit_test(per_client_and_per_uid),
		cmocka_unit_test(inflight_limit),
		cmocka_unit_test(key_policy),
		cmocka_unit_test(never_reads_completions),
		cmocka_unit_test(out_of_fds),
	};
	return cmocka_run_group_tests(tests, need_root, NULL);
}
