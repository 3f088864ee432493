/* SPDX-License-Identifier: MIT */
/*
 * Named keys against a real daemon (docs/keys.md), its KEK a systemd-
 * style credential in a private $CREDENTIALS_DIRECTORY:
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
 *    version, the old version stays usable by number;
 *  - persistence and crash safety: the daemon SIGKILLed again and again
 *    while a client imports, rotates and deletes; after every restart
 *    each key is wholly there (its first version still the bytes it was
 *    imported with) or wholly absent, and no file is refused;
 *  - a truncated and a bit-flipped key file: refused, the others load.
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

#include "fixture.h"
#include "memscan.h"

static int fails;
#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,          \
				__LINE__, #c);                                 \
			fails++;                                               \
		}                                                              \
	} while (0)

static char tmp[64], keydir[128], creddir[128];
static const char *args[8];
static char kd_arg[192];

static int setup_dirs(void)
{
	uint8_t kek[32];

	strcpy(tmp, "/tmp/test_named_keys.XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(keydir, sizeof(keydir), "%s/keys", tmp);
	snprintf(creddir, sizeof(creddir), "%s/creds", tmp);
	if (mkdir(creddir, 0700))
		return -1;
	char p[192];
	snprintf(p, sizeof(p), "%s/kek", creddir);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0400);
	if (fd < 0 || RAND_bytes(kek, 32) != 1 || write(fd, kek, 32) != 32)
		return -1;
	close(fd);
	explicit_bzero(kek, sizeof(kek));
	setenv("CREDENTIALS_DIRECTORY", creddir, 1);
	snprintf(kd_arg, sizeof(kd_arg), "keys.dir=%s", keydir);
	args[0] = "--set";
	args[1] = "keys.kek=credential:kek";
	args[2] = "--set";
	args[3] = kd_arg;
	args[4] = NULL;
	return 0;
}

static struct cc_key_spec spec(const char *name, unsigned usage, int exp,
			       const uint32_t *uid)
{
	struct cc_key_spec s = {
		.name = name,
		.alg = CC_ALG_AES_GCM,
		.key_len = 32,
		.usage = usage,
		.exportable = exp,
		.uids = uid,
		.nuids = 1,
	};
	return s;
}

static int session_on(struct cc_conn *c, const char *name, uint32_t version,
		      uint32_t *sid)
{
	struct cc_session_params p = { .key_name = name,
				       .key_version = version };
	return cc_session_create(c, &p, sid);
}

/* OpenSSL's AES-256-GCM of msg under key: the independent reference. */
static void ossl_gcm(const uint8_t *key, const uint8_t *iv, const uint8_t *in,
		     int n, uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l;
	EVP_EncryptInit_ex(x, EVP_aes_256_gcm(), NULL, key, iv);
	EVP_EncryptUpdate(x, out, &l, in, n);
	EVP_EncryptFinal_ex(x, out + l, &l);
	EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(x);
}

static int ossl_unwrap(const uint8_t *wkek, const uint8_t *blob, int n,
		       uint8_t *out)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l = 0, f = 0;
	EVP_CIPHER_CTX_set_flags(x, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	int ok = EVP_DecryptInit_ex(x, EVP_aes_256_wrap_pad(), NULL, wkek,
				    NULL) &&
		 EVP_DecryptUpdate(x, out, &l, blob, n) &&
		 EVP_DecryptFinal_ex(x, out + l, &f);
	EVP_CIPHER_CTX_free(x);
	return ok ? l + f : -1;
}

static const uint8_t iv[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
static uint8_t msg[256];

/* Encrypt msg on sid; compare with OpenSSL under key (NULL: just run). */
static int enc_matches(struct cc_conn *c, uint32_t sid, const uint8_t *key)
{
	uint8_t out[256], tag[16], ref[256], rtag[16];
	int err = fx_crypt(c, sid, CC_ENCRYPT, iv, 12, NULL, 0, msg, out,
			   sizeof(msg), tag);
	if (err)
		return err;
	if (!key)
		return 0;
	ossl_gcm(key, iv, msg, sizeof(msg), ref, rtag);
	return memcmp(out, ref, sizeof(out)) || memcmp(tag, rtag, 16) ? 1 : 0;
}

/* The key's bytes, learnt once through an export (the test's only
 * way to know them). */
static int learn(struct cc_conn *c, const char *name, uint32_t version,
		 uint8_t key[32])
{
	uint8_t wkek[32], blob[300];
	memset(wkek, 0x77, sizeof(wkek));
	int n = cc_key_wrap(c, name, version, wkek, 32, blob, sizeof(blob));
	if (n < 0)
		return n;
	return ossl_unwrap(wkek, blob, n, key) == 32 ? 0 : -EBADMSG;
}

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
static void crash_key(int i, uint8_t k[32])
{
	for (int j = 0; j < 32; j++)
		k[j] = (uint8_t)(0x5a ^ (i * 31 + j * 7));
}

enum { CRASH_KEYS = 6, CRASH_ROUNDS = 25 };

/* A client that imports, rotates and deletes until it is cut off. */
static void churn(const char *sock)
{
	struct cc_conn *c;
	uint32_t me = getuid();
	if (cc_connect(sock, "churn", &c))
		_exit(0);
	for (unsigned n = 0;; n++) {
		int i = (int)(n % CRASH_KEYS);
		char name[16];
		uint8_t k[32];
		snprintf(name, sizeof(name), "c%d", i);
		crash_key(i, k);
		struct cc_key_spec s =
			spec(name, CC_KEY_ENCRYPT | CC_KEY_DECRYPT, 1, &me);
		int e = cc_key_import(c, &s, k, 32, NULL);
		if (e == -EEXIST)
			e = (n / CRASH_KEYS) % 2 ? cc_key_delete(c, name)
						 : cc_key_rotate(c, name, NULL);
		if (e == -EPIPE || e == -ECONNRESET || e == -ENOTCONN)
			_exit(0);
	}
}

static int files_in(const char *dir)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "ls %s/*.key 2>/dev/null | wc -l", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

/*
 * Crash safety against a model: this process changes keys itself while
 * a killer child SIGKILLs the daemon at a random moment. Every change
 * the daemon acknowledged must survive the restart with the same bytes;
 * the one in flight may have happened or not, but wholly.
 */
enum { MODEL_KEYS = 4, MODEL_ROUNDS = 20, MODEL_VERSIONS = 16 };

struct mkey {
	int present;
	unsigned nv;				/* versions 1..nv live */
	unsigned first;				/* the oldest live version */
	uint8_t bytes[MODEL_VERSIONS + 64][32]; /* by version number */
	uint8_t known[MODEL_VERSIONS + 64];
};

static struct mkey model[MODEL_KEYS];

enum mop { M_NONE, M_CREATE, M_ROTATE, M_DELETE };

/* After a restart: the daemon's state of key i against the model, with
 * op (M_NONE or the one in doubt) allowed to have happened or not. */
static void model_check(struct cc_conn *c, int i, enum mop op,
			const uint8_t *created)
{
	struct mkey *m = &model[i];
	struct cc_key_info in;
	char name[8];
	snprintf(name, sizeof(name), "m%d", i);
	int there = cc_key_show(c, name, &in) == 0;

	if (!there) {
		/* Absent: right if it was, or a delete/create in doubt. */
		CHECK(!m->present || op == M_DELETE);
		if (m->present && op != M_DELETE)
			fprintf(stderr, "FAIL: m%d lost\n", i);
		m->present = 0;
		return;
	}
	if (!m->present) {
		/* Present: only a create in doubt, with the bytes it sent. */
		CHECK(op == M_CREATE);
		uint8_t got[32];
		CHECK(in.nversions == 1 && learn(c, name, 1, got) == 0 &&
		      created && !memcmp(got, created, 32));
		m->present = 1;
		m->nv = m->first = 1;
		/* A new key: what the model knew of an earlier one of this
		 * name (deleted) is not about it. */
		memset(m->known, 0, sizeof(m->known));
		memcpy(m->bytes[1], got, 32);
		m->known[1] = 1;
		return;
	}
	unsigned newest = in.versions[in.nversions - 1];
	/* The acknowledged versions all there; one more only if a rotate
	 * was in doubt. */
	CHECK(newest == m->nv || (op == M_ROTATE && newest == m->nv + 1));
	if (newest != m->nv && newest != m->nv + 1)
		fprintf(stderr, "FAIL: m%d newest %u, model %u\n", i, newest,
			m->nv);
	m->nv = newest;
	m->first = in.versions[0];
	for (unsigned v = m->first; v <= m->nv; v++) {
		uint8_t got[32];
		CHECK(learn(c, name, v, got) == 0);
		if (m->known[v])
			CHECK(!memcmp(got, m->bytes[v], 32));
		memcpy(m->bytes[v], got, 32);
		m->known[v] = 1;
	}
}

static void test_crash_model(struct fx_daemon *d,
			     const struct fx_daemon_params *dp)
{
	uint32_t me = getuid();
	unsigned ops_acked = 0;
	srand((unsigned)time(NULL) ^ 0x5eed);
	memset(model, 0, sizeof(model));
	for (int r = 0; r < MODEL_ROUNDS && !fails; r++) {
		struct cc_conn *c;
		CHECK(cc_connect(d->sock, "model", &c) == 0);
		pid_t daemon = d->pid;
		pid_t killer = fork();
		if (killer == 0) {
			struct timespec ts = { 0,
					       (long)(rand() % 60) * 1000000L };
			nanosleep(&ts, NULL);
			kill(daemon, SIGKILL);
			_exit(0);
		}
		enum mop op = M_NONE;
		int i = 0;
		uint8_t created[32];
		for (;;) {
			i = rand() % MODEL_KEYS;
			struct mkey *m = &model[i];
			char name[8];
			snprintf(name, sizeof(name), "m%d", i);
			int e;
			if (!m->present) {
				op = M_CREATE;
				RAND_bytes(created, 32);
				struct cc_key_spec s = spec(
					name, CC_KEY_ENCRYPT | CC_KEY_DECRYPT,
					1, &me);
				e = cc_key_import(c, &s, created, 32, NULL);
				if (!e) {
					m->present = 1;
					m->nv = m->first = 1;
					memset(m->known, 0, sizeof(m->known));
					memcpy(m->bytes[1], created, 32);
					m->known[1] = 1;
				}
			} else if (rand() % 4 && m->nv < MODEL_VERSIONS + 60) {
				op = M_ROTATE;
				e = cc_key_rotate(c, name, NULL);
				if (e > 0) {
					m->nv = (unsigned)e;
					if (m->nv - m->first >= MODEL_VERSIONS)
						m->first = m->nv -
							   MODEL_VERSIONS + 1;
					e = 0;
				}
			} else {
				op = M_DELETE;
				e = cc_key_delete(c, name);
				if (!e)
					m->present = 0;
			}
			if (e) /* cut off: this op is in doubt */
				break;
			ops_acked++;
			op = M_NONE;
		}
		waitpid(killer, NULL, 0);
		cc_disconnect(c);
		CHECK(fx_daemon_restart(d, dp) == 0);
		CHECK(cc_connect(d->sock, "check", &c) == 0);
		for (int k = 0; k < MODEL_KEYS; k++)
			model_check(c, k, k == i ? op : M_NONE,
				    k == i && op == M_CREATE ? created : NULL);
		cc_disconnect(c);
	}
	printf("crash model: %u acknowledged changes over %d kills\n",
	       ops_acked, MODEL_ROUNDS);
	CHECK(ops_acked > MODEL_ROUNDS);
}

static void test_crash(struct fx_daemon *d, const struct fx_daemon_params *dp)
{
	srand((unsigned)time(NULL));
	for (int r = 0; r < CRASH_ROUNDS && !fails; r++) {
		pid_t pid = fork();
		if (pid == 0)
			churn(d->sock);
		struct timespec ts = { 0, (long)(1 + rand() % 40) * 1000000L };
		nanosleep(&ts, NULL);
		CHECK(fx_daemon_restart(d, dp) == 0); /* SIGKILL, start */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);

		struct cc_conn *c;
		struct cc_key_info *list;
		unsigned n;
		CHECK(cc_connect(d->sock, "check", &c) == 0);
		CHECK(cc_key_list(c, &list, &n) == 0);
		/* Every file loaded: none torn. */
		CHECK((int)n == files_in(keydir));
		for (unsigned j = 0; j < n; j++) {
			int i = list[j].name[0] == 'c' ? atoi(list[j].name + 1)
						       : -1;
			if (i < 0)
				continue;
			uint8_t want[32], got[32];
			crash_key(i, want);
			if (list[j].versions[0] == 1) {
				CHECK(learn(c, list[j].name, 1, got) == 0);
				CHECK(!memcmp(got, want, 32));
			}
			uint32_t sid;
			CHECK(session_on(c, list[j].name, 0, &sid) == 0);
			CHECK(enc_matches(c, sid, NULL) == 0);
		}
		cc_key_list_free(list);
		cc_disconnect(c);
	}
}

static void corrupt(const char *name, int truncate)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s.key", keydir, name);
	int fd = open(p, O_RDWR);
	CHECK(fd >= 0);
	struct stat st;
	CHECK(fstat(fd, &st) == 0);
	if (truncate) {
		CHECK(ftruncate(fd, st.st_size - 3) == 0);
	} else {
		uint8_t b;
		CHECK(pread(fd, &b, 1, st.st_size / 2) == 1);
		b ^= 0x01;
		CHECK(pwrite(fd, &b, 1, st.st_size / 2) == 1);
	}
	close(fd);
}

static void test_bad_files(struct fx_daemon *d,
			   const struct fx_daemon_params *dp)
{
	struct cc_conn *c;
	uint32_t me = getuid();
	CHECK(cc_connect(d->sock, "bad", &c) == 0);
	const char *names[] = { "ok-a", "torn", "flipped", "ok-b" };
	for (int i = 0; i < 4; i++) {
		struct cc_key_spec s =
			spec(names[i], CC_KEY_ENCRYPT | CC_KEY_DECRYPT, 0, &me);
		(void)cc_key_delete(c, names[i]);
		CHECK(cc_key_create(c, &s, NULL) == 0);
	}
	cc_disconnect(c);
	corrupt("torn", 1);
	corrupt("flipped", 0);
	CHECK(fx_daemon_restart(d, dp) == 0);
	CHECK(cc_connect(d->sock, "bad", &c) == 0);
	struct cc_key_info in;
	CHECK(cc_key_show(c, "ok-a", &in) == 0);
	CHECK(cc_key_show(c, "ok-b", &in) == 0);
	CHECK(cc_key_show(c, "torn", &in) == -ENOENT);
	CHECK(cc_key_show(c, "flipped", &in) == -ENOENT);
	cc_disconnect(c);
}

/* A daemon whose KEK is a "user" key in the kernel keyring (its session
 * keyring, inherited from this process): keys persist under it through a
 * restart. Skipped where keyctl is refused. */
static void test_keyring_kek(void)
{
	uint8_t kek[32];
	char desc[64], kek_arg[96], dir_arg[192];
	CHECK(RAND_bytes(kek, 32) == 1);
	snprintf(desc, sizeof(desc), "cryptod-test-%d", (int)getpid());
	long id = syscall(SYS_add_key, "user", desc, kek, 32,
			  KEY_SPEC_SESSION_KEYRING);
	explicit_bzero(kek, sizeof(kek));
	if (id < 0) {
		printf("SKIP keyring KEK: add_key: %s\n", strerror(errno));
		return;
	}
	snprintf(kek_arg, sizeof(kek_arg), "keys.kek=keyring:%s", desc);
	snprintf(dir_arg, sizeof(dir_arg), "keys.dir=%s/kr-keys", tmp);
	const char *a[] = { "--set", kek_arg, "--set", dir_arg, NULL };
	struct fx_daemon_params dp = { .workers = 1, .args = a };
	struct fx_daemon d;
	struct cc_conn *c;
	uint32_t me = getuid(), sid;
	if (fx_daemon_start(&d, &dp) == 0) {
		struct cc_key_spec s =
			spec("kr", CC_KEY_ENCRYPT | CC_KEY_DECRYPT, 0, &me);
		CHECK(cc_connect(d.sock, "kr", &c) == 0);
		CHECK(cc_key_create(c, &s, NULL) == 0);
		cc_disconnect(c);
		CHECK(fx_daemon_restart(&d, &dp) == 0);
		CHECK(cc_connect(d.sock, "kr", &c) == 0);
		CHECK(session_on(c, "kr", 0, &sid) == 0);
		cc_disconnect(c);
		CHECK(fx_daemon_stop(&d) == 0);
	} else {
		fails++;
	}
	/* Without the key the daemon refuses to start. */
	CHECK(syscall(SYS_keyctl, KEYCTL_INVALIDATE, id) == 0);
	printf("(a refusal to start is expected next)\n");
	CHECK(fx_daemon_start(&d, &dp) != 0);
}

int main(void)
{
	struct fx_daemon d;
	struct cc_conn *c;

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	if (setup_dirs()) {
		perror("setup");
		return FX_EXIT_FAIL;
	}
	struct fx_daemon_params dp = { .workers = 1, .args = args };
	if (fx_daemon_start(&d, &dp))
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
	test_crash(&d, &dp);
	test_crash_model(&d, &dp);
	test_bad_files(&d, &dp);
	if (fx_daemon_stop(&d))
		fails++;
	test_keyring_kek();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fails++;
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
