// SPDX-License-Identifier: MIT
/*
 * Named keys against a real daemon (docs/keys.md), in use (named_keys.h
 * has the daemon, its KEK a systemd-style credential):
 *  - a key created in the daemon, exported once by RFC 5649 wrap and
 *    unwrapped here with OpenSSL: sessions on it by name encrypt exactly
 *    as OpenSSL does with those bytes, and decrypt;
 *  - a client process using a named key holds none of its bytes (its
 *    whole memory scanned through /proc/PID/mem), nor does the daemon
 *    after the key is deleted and its sessions closed;
 *  - the rules: not on the ACL, a forbidden direction, a deleted key, an
 *    unknown version, a non-exportable key's wrap, management by a
 *    non-administrator (another uid: needs root) all give defined errors;
 *  - rotation: the old session keeps its key, new ones get the new
 *    version, the old version stays usable by number.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/keyctl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "named_keys.h"

static void test_use_and_rules(struct fx_daemon *d, struct cc_conn *c)
{
	uint32_t me = getuid(), other = 54321;
	uint8_t k1[32], k2[32];
	uint32_t s1, s2, s3;
	struct cc_key_info in;

	struct cc_key_spec s =
		spec("gcm1", CC_KEY_ENCRYPT | CC_KEY_DECRYPT, 1, &me);
	CHECK(cc_key_create(c, &s, &in) == 0);
	CHECK(in.nversions == 1 && in.versions[0] == 1 && in.key_len == 32);
	CHECK(cc_key_create(c, &s, NULL) == -EEXIST);
	CHECK(learn(c, "gcm1", 0, k1) == 0);

	/* A session by name runs what OpenSSL runs with those bytes. */
	CHECK(session_on(c, "gcm1", 0, &s1) == 0);
	CHECK(enc_matches(c, s1, k1) == 0);
	uint8_t ct[256], tag[16], back[256];
	CHECK(fx_crypt(c, s1, CC_ENCRYPT, iv, 12, NULL, 0, msg, ct, sizeof(msg),
		       tag) == 0);
	CHECK(fx_crypt(c, s1, CC_DECRYPT, iv, 12, NULL, 0, ct, back, sizeof(ct),
		       tag) == 0);
	CHECK(!memcmp(back, msg, sizeof(msg)));

	/* Rotation: the open session keeps version 1. */
	CHECK(cc_key_rotate(c, "gcm1", &in) == 2);
	CHECK(in.nversions == 2);
	CHECK(learn(c, "gcm1", 2, k2) == 0);
	CHECK(memcmp(k1, k2, 32) != 0);
	CHECK(enc_matches(c, s1, k1) == 0);
	CHECK(session_on(c, "gcm1", 0, &s2) == 0);
	CHECK(enc_matches(c, s2, k2) == 0);
	CHECK(session_on(c, "gcm1", 1, &s3) == 0);
	CHECK(enc_matches(c, s3, k1) == 0);
	CHECK(session_on(c, "gcm1", 9, &s3) == -ENOENT);
	CHECK(cc_key_show(c, "gcm1", &in) == 0 && in.ops >= 6);

	/* Encrypt only, on a counter-mode AEAD: refused, since encrypting
	 * under a captured ciphertext's IV yields its keystream. */
	s = spec("enc-only", CC_KEY_ENCRYPT, 0, &me);
	CHECK(cc_key_create(c, &s, NULL) == -EINVAL);
	/* Decrypt only: encrypt completes with CC_ERR_POLICY, and the
	 * session keeps the whole tag (a short one could be found a few
	 * bytes at a time, and so made). */
	s = spec("dec-only", CC_KEY_DECRYPT, 0, &me);
	CHECK(cc_key_create(c, &s, NULL) == 0);
	struct cc_session_params short_tag = { .key_name = "dec-only",
					       .tag_len = 4 };
	CHECK(cc_session_create(c, &short_tag, &s3) == CC_ERR_POLICY);
	CHECK(session_on(c, "dec-only", 0, &s3) == 0);
	CHECK(fx_crypt(c, s3, CC_ENCRYPT, iv, 12, NULL, 0, msg, ct, sizeof(msg),
		       tag) == CC_ERR_POLICY);
	/* A counter-mode cipher: either direction alone gives the other. */
	s = spec("ctr-dec", CC_KEY_DECRYPT, 0, &me);
	s.alg = CC_ALG_AES_CTR;
	CHECK(cc_key_create(c, &s, NULL) == -EINVAL);
	/* A MAC key that may only verify: its whole tag only. */
	s = spec("mac-verify", CC_KEY_MAC_VERIFY, 0, &me);
	s.alg = CC_ALG_HMAC_SHA256;
	CHECK(cc_key_create(c, &s, NULL) == 0);
	struct cc_session_params short_mac = { .key_name = "mac-verify",
					       .tag_len = 8 };
	CHECK(cc_session_create(c, &short_mac, &s3) == CC_ERR_POLICY);
	CHECK(session_on(c, "mac-verify", 0, &s3) == 0);
	/* Not exportable. */
	uint8_t wkek[16] = { 0 }, blob[300];
	CHECK(cc_key_wrap(c, "dec-only", 0, wkek, 16, blob, sizeof(blob)) ==
	      -EPERM);
	/* MAC usages, on a cipher: refused at create (test_key_checks has
	 * the other kinds and ways in). */
	s = spec("mac-rules", CC_KEY_MAC_GENERATE, 0, &me);
	CHECK(cc_key_create(c, &s, NULL) == -EINVAL);
	/* Not on the ACL. */
	s = spec("theirs", CC_KEY_ENCRYPT | CC_KEY_DECRYPT, 0, &other);
	CHECK(cc_key_create(c, &s, NULL) == 0);
	CHECK(session_on(c, "theirs", 0, &s3) == CC_ERR_ACCESS);
	/* Key bytes and a name together: refused. */
	struct cc_session_params both = { .key_name = "gcm1",
					  .key = k1,
					  .key_len = 32 };
	CHECK(cc_session_create(c, &both, &s3) == -EINVAL);
	CHECK(session_on(c, "no-such-key", 0, &s3) == -ENOENT);

	/* Delete: new sessions refused; after the open ones close, the
	 * daemon holds no byte of either version. */
	CHECK(scan_windows(d->pid, k1, 32) > 0); /* the scanner sees it */
	CHECK(cc_key_delete(c, "gcm1") == 0);
	CHECK(cc_key_delete(c, "gcm1") == -ENOENT);
	CHECK(session_on(c, "gcm1", 0, &s3) == -ENOENT);
	CHECK(enc_matches(c, s1, k1) == 0); /* open sessions go on */
	CHECK(cc_session_destroy(c, s1) == 0);
	CHECK(cc_session_destroy(c, s2) == 0);
	/* s3 of the version-1 session was replaced above: list and close
	 * every session left on gcm1 by destroying all ids we made. */
	for (uint32_t id = 1; id < 16; id++)
		(void)cc_session_destroy(c, id);
	long h1 = scan_windows(d->pid, k1, 32),
	     h2 = scan_windows(d->pid, k2, 32);
	if (h1 || h2)
		fprintf(stderr, "FAIL: deleted key in daemon memory: %ld/%ld\n",
			h1, h2);
	CHECK(h1 == 0 && h2 == 0);
	explicit_bzero(k1, 32);
	explicit_bzero(k2, 32);
}

/*
 * The wire: a SOCK_SEQPACKET proxy between a client and the daemon that
 * forwards every packet (and the fds beside it) and keeps a copy of
 * every byte, both directions.
 */
static struct {
	int listen_fd;
	char daemon[108];
	uint8_t rec[1 << 20];
	size_t len;
} wire;

static int forward(int from, int to)
{
	uint8_t buf[65536];
	union {
		char b[CMSG_SPACE(16 * sizeof(int))];
		struct cmsghdr align;
	} cb;
	struct iovec io = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &io,
			    .msg_iovlen = 1,
			    .msg_control = cb.b,
			    .msg_controllen = sizeof(cb.b) };
	ssize_t n = recvmsg(from, &m, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return -1;
	if (wire.len + (size_t)n <= sizeof(wire.rec)) {
		memcpy(wire.rec + wire.len, buf, (size_t)n);
		wire.len += (size_t)n;
	}
	io.iov_len = (size_t)n;
	m.msg_controllen = m.msg_controllen ? m.msg_controllen : 0;
	if (!m.msg_controllen)
		m.msg_control = NULL;
	int ok = sendmsg(to, &m, MSG_NOSIGNAL) == n;
	for (struct cmsghdr *c = m.msg_controllen ? CMSG_FIRSTHDR(&m) : NULL; c;
	     c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_type == SCM_RIGHTS) {
			int *fds = (int *)CMSG_DATA(c);
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++)
				close(fds[i]);
		}
	return ok ? 0 : -1;
}

static void *proxy(void *arg)
{
	(void)arg;
	int c = accept(wire.listen_fd, NULL, NULL);
	int d = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", wire.daemon);
	if (c < 0 || d < 0 || connect(d, (struct sockaddr *)&a, sizeof(a)))
		return NULL;
	for (;;) {
		struct pollfd p[2] = { { c, POLLIN, 0 }, { d, POLLIN, 0 } };
		if (poll(p, 2, 10000) <= 0)
			break;
		if ((p[0].revents && forward(c, d)) ||
		    (p[1].revents && forward(d, c)))
			break;
	}
	close(c);
	close(d);
	return NULL;
}

static int proxy_start(const char *daemon_sock, char *path, size_t len,
		       pthread_t *t)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(path, len, "%s/wire.sock", tmp);
	if (strlen(path) >= sizeof(a.sun_path))
		return -1;
	memcpy(a.sun_path, path, strlen(path) + 1);
	snprintf(wire.daemon, sizeof(wire.daemon), "%s", daemon_sock);
	wire.len = 0;
	wire.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (wire.listen_fd < 0 ||
	    bind(wire.listen_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(wire.listen_fd, 1))
		return -1;
	return pthread_create(t, NULL, proxy, NULL) ? -1 : 0;
}

/* A client process that uses a named key holds no byte of it, and none
 * crosses its control socket: the parent learns the bytes, the child
 * (forked before) only uses them, through the recording proxy. */
static void test_client_memory(struct fx_daemon *d, struct cc_conn *c)
{
	int go[2], done[2];
	uint32_t me = getuid();
	char wsock[128];
	pthread_t pt;
	CHECK(proxy_start(d->sock, wsock, sizeof(wsock), &pt) == 0);
	CHECK(pipe(go) == 0 && pipe(done) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		char b;
		struct cc_conn *cc;
		uint32_t sid;
		struct cc_key_info in;
		if (read(go[0], &b, 1) != 1 ||
		    cc_connect(wsock, "named-user", &cc))
			_exit(2);
		if (session_on(cc, "mem", 0, &sid) ||
		    enc_matches(cc, sid, NULL) || cc_key_show(cc, "mem", &in))
			_exit(3);
		/* Everything the library got stays mapped: scan now. */
		if (write(done[1], "x", 1) != 1)
			_exit(4);
		pause();
		_exit(0);
	}
	/* A failed child then reads as EOF here, not a hang. */
	close(go[0]);
	close(done[1]);
	struct cc_key_spec s =
		spec("mem", CC_KEY_ENCRYPT | CC_KEY_DECRYPT, 1, &me);
	uint8_t k[32];
	CHECK(cc_key_create(c, &s, NULL) == 0);
	CHECK(learn(c, "mem", 0, k) == 0);
	CHECK(write(go[1], "x", 1) == 1);
	char b;
	CHECK(read(done[0], &b, 1) == 1);
	long hits = scan_windows(pid, k, 32);
	if (hits)
		fprintf(stderr, "FAIL: named key in the client: %ld\n", hits);
	CHECK(hits == 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	pthread_join(pt, NULL);
	close(wire.listen_fd);
	/* The wire carried the session and the show, and no key window. */
	CHECK(wire.len > 100);
	long whits = 0;
	for (size_t i = 0; i + WINDOW <= wire.len; i++)
		for (size_t j = 0; j + WINDOW <= 32; j++)
			whits += !memcmp(wire.rec + i, k + j, WINDOW);
	if (whits)
		fprintf(stderr, "FAIL: named key on the wire: %ld\n", whits);
	CHECK(whits == 0);
	/* The recorder would have seen it: the name did cross. */
	CHECK(memmem(wire.rec, wire.len, "mem", 3) != NULL);
	explicit_bzero(k, 32);
	CHECK(cc_key_delete(c, "mem") == 0);
}

/* An imported key's bytes cross the administrator's wire once; after
 * its sessions close and it is deleted, the daemon holds none. */
static void test_import_wiped(struct fx_daemon *d, struct cc_conn *c)
{
	uint32_t me = getuid(), sid;
	uint8_t k[32];
	CHECK(RAND_bytes(k, 32) == 1);
	struct cc_key_spec s =
		spec("imported", CC_KEY_ENCRYPT | CC_KEY_DECRYPT, 0, &me);
	CHECK(cc_key_import(c, &s, k, 32, NULL) == 0);
	CHECK(session_on(c, "imported", 0, &sid) == 0);
	CHECK(enc_matches(c, sid, k) == 0);
	CHECK(scan_windows(d->pid, k, 32) > 0);
	CHECK(cc_session_destroy(c, sid) == 0);
	CHECK(cc_key_delete(c, "imported") == 0);
	long h = scan_windows(d->pid, k, 32);
	if (h)
		fprintf(stderr, "FAIL: imported key in the daemon: %ld\n", h);
	CHECK(h == 0);
}

/* Management and use as another uid (nobody): root only. */
static void test_other_uid(struct fx_daemon *d, struct cc_conn *c)
{
	if (geteuid() != 0) {
		printf("SKIP other uid: not root\n");
		return;
	}
	uint32_t nobody = 65534, me = 0;
	struct cc_key_spec s =
		spec("for-nobody", CC_KEY_ENCRYPT | CC_KEY_DECRYPT, 0, &nobody);
	struct cc_key_spec t =
		spec("root-only", CC_KEY_ENCRYPT | CC_KEY_DECRYPT, 0, &me);
	CHECK(cc_key_create(c, &s, NULL) == 0);
	CHECK(cc_key_create(c, &t, NULL) == 0);
	chmod(d->dir, 0755);
	chmod(d->sock, 0666);
	pid_t pid = fork();
	if (pid == 0) {
		struct cc_conn *cc;
		struct cc_key_info *list;
		unsigned n;
		uint32_t sid;
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		if (cc_connect(d->sock, "nobody", &cc))
			_exit(11);
		if (session_on(cc, "for-nobody", 0, &sid) ||
		    enc_matches(cc, sid, NULL))
			_exit(12);
		if (session_on(cc, "root-only", 0, &sid) != CC_ERR_ACCESS)
			_exit(13);
		/* Unknown names look the same as forbidden ones. */
		if (session_on(cc, "no-such", 0, &sid) != CC_ERR_ACCESS)
			_exit(14);
		if (cc_key_create(cc, &s, NULL) != CC_ERR_ACCESS ||
		    cc_key_rotate(cc, "for-nobody", NULL) != CC_ERR_ACCESS ||
		    cc_key_delete(cc, "for-nobody") != CC_ERR_ACCESS)
			_exit(15);
		/* list shows only what nobody may use */
		if (cc_key_list(cc, &list, &n) || n != 1 ||
		    strcmp(list[0].name, "for-nobody"))
			_exit(16);
		cc_key_list_free(list);
		struct cc_key_info in;
		if (cc_key_show(cc, "root-only", &in) != CC_ERR_ACCESS)
			_exit(17);
		_exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "FAIL: as nobody: step %d\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(cc_key_delete(c, "for-nobody") == 0);
	CHECK(cc_key_delete(c, "root-only") == 0);
}

/* The bytes key "c<i>" is imported with. */

int main(void)
{
	struct fx_daemon d;
	struct fx_daemon_params dp;
	struct cc_conn *c;

	if (nk_start(&d, &dp))
		return FX_EXIT_FAIL;
	if (cc_connect(d.sock, "named-keys", &c)) {
		fx_daemon_stop(&d);
		return FX_EXIT_FAIL;
	}
	test_use_and_rules(&d, c);
	test_client_memory(&d, c);
	test_import_wiped(&d, c);
	test_other_uid(&d, c);
	cc_disconnect(c);
	return nk_finish(&d);
}
