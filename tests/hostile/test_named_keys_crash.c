// SPDX-License-Identifier: MIT
/*
 * Named keys against a real daemon (docs/keys.md), on disk (named_keys.h
 * has the daemon, its KEK a systemd-style credential):
 *  - persistence and crash safety: the daemon SIGKILLed again and again
 *    while a client imports, rotates and deletes; after every restart
 *    each key is wholly there (its first version still the bytes it was
 *    imported with) or wholly absent, and no file is refused;
 *  - a truncated and a bit-flipped key file: refused, the others load;
 *  - a KEK held in the kernel keyring: keys persist under it.
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
	struct fx_daemon_params dp;

	if (nk_start(&d, &dp))
		return FX_EXIT_FAIL;
	test_crash(&d, &dp);
	test_crash_model(&d, &dp);
	test_bad_files(&d, &dp);
	if (fx_daemon_stop(&d))
		fails++;
	test_keyring_kek();
	return nk_finish(NULL);
}
