/* SPDX-License-Identifier: MIT */
/*
 * Statistics are no side channel. An idle observer (a uid that is not an
 * administrator) reads the daemon's statistics before and after another
 * user's traffic, authentication failure included: nothing it sees may
 * move. It sees its own connection only, in every section: engine
 * counters from its own sessions, no worker section, one client, its own
 * sessions. Runs as other uids (setresuid): needs root, else skipped.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"

enum { UID_OBSERVER = 4401, UID_VICTIM = 4402 };

static struct fx_daemon daemon_;
static const uint8_t key[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1 };

static void drop_to(uid_t uid)
{
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		_exit(90);
}

/* Everything an observer can see, flattened for comparison. */
struct view {
	uint32_t clients, sessions;
	unsigned n_workers, n_queues;
	uint64_t eng[8][4];
	unsigned n_engines;
};

static int take_view(struct cc_conn *c, struct view *v)
{
	struct cc_stats st;
	if (cc_stats_get(c, &st))
		return -1;
	memset(v, 0, sizeof(*v));
	v->clients = st.clients;
	v->sessions = st.sessions;
	v->n_workers = st.n_workers_stats;
	v->n_queues = st.n_queues;
	v->n_engines = st.n_engines < 8 ? st.n_engines : 8;
	for (unsigned i = 0; i < v->n_engines; i++) {
		const struct cc_counters *k = &st.engines[i].c;
		v->eng[i][0] = k->ops;
		v->eng[i][1] = k->bytes;
		v->eng[i][2] = k->errors;
		v->eng[i][3] = k->auth_failures;
	}
	cc_stats_free(&st);
	return 0;
}

/* Drop to uid, connect as name and make a GCM session. 0 or -1. */
static int user_session(uid_t uid, const char *name, struct cc_conn **c,
			uint32_t *sid)
{
	drop_to(uid);
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 16 };
	if (cc_connect(daemon_.sock, name, c))
		return -1;
	return cc_session_create(*c, &sp, sid) ? -1 : 0;
}

/* The observer: one op of its own, a view, wait, another view. Exit 0
 * when nothing moved and it saw only itself. */
static int observer(int ready, int go)
{
	struct cc_conn *c;
	uint32_t sid;
	uint8_t iv[12] = { 0 }, buf[32] = { 0 }, tag[16];
	if (user_session(UID_OBSERVER, "observer", &c, &sid) ||
	    cc_crypt(c, sid, CC_ENCRYPT, iv, 12, NULL, 0, buf, buf, 32, tag))
		return 1;
	struct view a, b;
	if (take_view(c, &a))
		return 2;
	char x = 'r';
	if (write(ready, &x, 1) != 1 || read(go, &x, 1) != 1)
		return 3;
	if (take_view(c, &b))
		return 4;
	if (a.clients != 1 || a.sessions != 1 || a.n_workers != 0 ||
	    a.n_queues > 1) {
		fprintf(stderr,
			"observer sees %u clients, %u sessions, %u workers, "
			"%u queues\n",
			a.clients, a.sessions, a.n_workers, a.n_queues);
		return 5;
	}
	/* Its own op, on its engine; nobody else's. */
	uint64_t own = 0;
	for (unsigned i = 0; i < a.n_engines; i++)
		own += a.eng[i][0];
	if (own != 1) {
		fprintf(stderr, "observer's engines count %llu ops, want 1\n",
			(unsigned long long)own);
		return 6;
	}
	if (memcmp(&a, &b, sizeof(a))) {
		fprintf(stderr, "another user's traffic moved what the "
				"observer sees\n");
		for (unsigned i = 0; i < a.n_engines; i++)
			fprintf(stderr,
				"  engine %u: ops %llu -> %llu, auth "
				"failures %llu -> %llu\n",
				i, (unsigned long long)a.eng[i][0],
				(unsigned long long)b.eng[i][0],
				(unsigned long long)a.eng[i][3],
				(unsigned long long)b.eng[i][3]);
		return 7;
	}
	cc_disconnect(c);
	return 0;
}

/* The victim: traffic of known shape, one forgery among it. */
static int victim(void)
{
	struct cc_conn *c;
	uint32_t sid;
	static uint8_t buf[1000];
	uint8_t iv[12] = { 0 }, tag[16];
	if (user_session(UID_VICTIM, "victim", &c, &sid))
		return 1;
	for (int i = 0; i < 37; i++)
		if (cc_crypt(c, sid, CC_ENCRYPT, iv, 12, NULL, 0, buf, buf,
			     sizeof(buf), tag))
			return 2;
	tag[0] ^= 1;
	int err = cc_crypt(c, sid, CC_DECRYPT, iv, 12, NULL, 0, buf, buf,
			   sizeof(buf), tag);
	if (err != CC_ERR_AUTH_FAILED) {
		fprintf(stderr, "victim: forged decrypt returned %d\n", err);
		return 3;
	}
	cc_disconnect(c);
	return 0;
}

static void idle_observer_sees_nothing_move(void **state)
{
	int ready[2], go[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	fflush(NULL);
	pid_t obs = fork();
	assert_true(obs >= 0);
	if (obs == 0) {
		close(ready[0]);
		close(go[1]);
		_exit(observer(ready[1], go[0]));
	}
	close(ready[1]);
	close(go[0]);
	char x;
	if (read(ready[0], &x, 1) != 1) { /* the observer failed early */
		int st;
		waitpid(obs, &st, 0);
		fail_msg("observer set-up failed (%d)",
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}

	pid_t vic = fork();
	assert_true(vic >= 0);
	if (vic == 0)
		_exit(victim());
	int st;
	assert_int_equal(waitpid(vic, &st, 0), vic);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	usleep(100000); /* counters are published once per pass */

	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	close(ready[0]);
	assert_int_equal(waitpid(obs, &st, 0), obs);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st))
		fail_msg("observer check %d failed", WEXITSTATUS(st));

	/* An administrator still sees the whole daemon. */
	struct cc_conn *c;
	struct cc_stats s;
	assert_int_equal(cc_connect(daemon_.sock, "admin", &c), 0);
	assert_int_equal(cc_stats_get(c, &s), 0);
	assert_true(s.n_workers_stats > 0);
	uint64_t ops = 0, auth = 0;
	for (unsigned i = 0; i < s.n_engines; i++) {
		ops += s.engines[i].c.ops;
		auth += s.engines[i].c.auth_failures;
	}
	assert_true(ops >= 38 && auth >= 1);
	cc_stats_free(&s);
	cc_disconnect(c);
}

static int setup(void **state)
{
	static const char *const args[] = { "--socket-mode", "0666", NULL };
	struct fx_daemon_params p = { .workers = 2, .args = args };
	if (fx_daemon_start(&daemon_, &p))
		return -1;
	return chmod(daemon_.dir, 0755);
}

static int teardown(void **state)
{
	return fx_daemon_stop(&daemon_) ? -1 : 0;
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: needs root (setresuid to other "
				"users)\n");
		return FX_EXIT_SKIP;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(idle_observer_sees_nothing_move,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
