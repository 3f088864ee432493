/* SPDX-License-Identifier: MIT */
/*
 * UsageReport and the programs view (daemon/control/programs.c): a client's own
 * account of its messages is kept per connection, may only grow, is
 * bounded, and touches nobody else's numbers; programs keep their totals
 * after their connections close, in a bounded table whose overflow is
 * summed in one "(other)" row. The parts that run as other uids
 * (setresuid) need root and are skipped without it.
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

#include "bounds.h"
#include "fixture.h"
#include "rawclient.h"

enum { UID_LIAR = 4411, UID_CHURN = 4412 };

static struct fx_daemon daemon_;
static const uint8_t key[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

static struct cc_conn *conn_as(const char *name)
{
	struct cc_conn *c = NULL;
	assert_int_equal(cc_connect(daemon_.sock, name, &c), 0);
	return c;
}

static int report(struct cc_conn *c, uint64_t o, uint64_t f, uint64_t i)
{
	const struct cc_usage u = { .offloaded = o,
				    .fallbacks = f,
				    .inprocess = i };
	return cc_report_usage(c, &u);
}

/* The listing entry of the connection named name (exactly one). */
static struct cc_client_info client_named(struct cc_conn *viewer,
					  const char *name)
{
	struct cc_client_info *v, found = { 0 };
	unsigned n, hits = 0;
	assert_int_equal(cc_clients_get(viewer, &v, &n), 0);
	for (unsigned i = 0; i < n; i++) {
		if (!strcmp(v[i].name, name)) {
			found = v[i];
			hits++;
		}
	}
	free(v);
	assert_int_equal(hits, 1);
	return found;
}

static void assert_usage(const struct cc_usage *u, uint64_t o, uint64_t f,
			 uint64_t i)
{
	assert_int_equal(u->offloaded, o);
	assert_int_equal(u->fallbacks, f);
	assert_int_equal(u->inprocess, i);
}

/* The program row (name, uid), or NULL; *v is the caller's to free. */
static const struct cc_program_stats *program(struct cc_conn *viewer,
					      struct cc_program_stats **v,
					      unsigned *n, const char *name,
					      uint32_t uid)
{
	assert_int_equal(cc_programs_get(viewer, v, n), 0);
	for (unsigned i = 0; i < *n; i++)
		if (!(*v)[i].other && (*v)[i].uid == uid &&
		    !strcmp((*v)[i].name, name))
			return &(*v)[i];
	return NULL;
}

static void reports_kept_per_connection(void **state)
{
	struct cc_conn *a = conn_as("prog-a"), *b = conn_as("prog-b"),
		       *adm = conn_as("admin");
	assert_int_equal(report(a, 5, 2, 3), 0);
	struct cc_client_info ia = client_named(adm, "prog-a"),
			      ib = client_named(adm, "prog-b");
	assert_true(ia.usage_reported);
	assert_usage(&ia.usage, 5, 2, 3);
	assert_false(ib.usage_reported);
	assert_usage(&ib.usage, 0, 0, 0);

	/* The same totals again, and more of them, are fine. */
	assert_int_equal(report(a, 5, 2, 3), 0);
	assert_int_equal(report(a, 6, 2, 30), 0);
	ia = client_named(adm, "prog-a");
	assert_usage(&ia.usage, 6, 2, 30);
	/* The largest allowed total. */
	assert_int_equal(report(b, 1ull << 56, 1ull << 56, 1ull << 56), 0);
	ib = client_named(adm, "prog-b");
	assert_usage(&ib.usage, 1ull << 56, 1ull << 56, 1ull << 56);
	cc_disconnect(a);
	cc_disconnect(b);
	cc_disconnect(adm);
}

static void bad_reports_refused(void **state)
{
	struct cc_conn *a = conn_as("prog-a"), *adm = conn_as("admin");
	assert_int_equal(report(a, 5, 2, 3), 0);

	/* Any total that goes down: refused, nothing stored. */
	assert_int_equal(report(a, 4, 9, 9), -EINVAL);
	assert_non_null(strstr(cc_conn_last_error(a), "only grow"));
	assert_int_equal(report(a, 9, 1, 9), -EINVAL);
	assert_int_equal(report(a, 9, 9, 2), -EINVAL);
	struct cc_client_info ia = client_named(adm, "prog-a");
	assert_usage(&ia.usage, 5, 2, 3);

	/* Above 2^56 in any field: refused, nothing stored. */
	assert_int_equal(report(a, (1ull << 56) + 1, 2, 3), -ERANGE);
	assert_int_equal(report(a, 5, UINT64_MAX, 3), -ERANGE);
	assert_int_equal(report(a, 5, 2, (1ull << 56) + 1), -ERANGE);
	assert_non_null(strstr(cc_conn_last_error(a), "range"));
	ia = client_named(adm, "prog-a");
	assert_usage(&ia.usage, 5, 2, 3);

	/* The connection still works. */
	assert_int_equal(report(a, 7, 2, 3), 0);
	ia = client_named(adm, "prog-a");
	assert_usage(&ia.usage, 7, 2, 3);
	cc_disconnect(a);
	cc_disconnect(adm);
}

static int raw_report(struct raw *r, const Cryptod__Usage *u)
{
	Cryptod__UsageReport m = CRYPTOD__USAGE_REPORT__INIT;
	m.usage = (Cryptod__Usage *)u;
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_USAGE_REPORT;
	req.usage_report = &m;
	Cryptod__Envelope *rep = raw_call(r, &req, NULL, NULL);
	int ret = 0;
	if (rep->body_case == CRYPTOD__ENVELOPE__BODY_ERROR)
		ret = rep->error->code;
	else
		assert_int_equal(rep->body_case, CRYPTOD__ENVELOPE__BODY_ACK);
	wire_free(rep);
	return ret;
}

/* What a hand-rolled client may send: no hello, no usage at all. */
static void raw_reports(void **state)
{
	struct raw r;
	raw_connect(&r, daemon_.sock);
	Cryptod__Usage one = CRYPTOD__USAGE__INIT;
	one.offloaded = one.fallbacks = one.inprocess = 1;
	assert_int_equal(raw_report(&r, &one), -EPROTO); /* hello first */
	raw_hello(&r, CRD_ABI_VERSION);
	assert_int_equal(raw_report(&r, NULL), 0); /* absent: zeros */
	assert_int_equal(raw_report(&r, &one), 0);
	assert_int_equal(raw_report(&r, NULL), -EINVAL); /* zeros < 1 */

	struct cc_conn *adm = conn_as("admin");
	struct cc_client_info ib = client_named(adm, "badinput");
	assert_usage(&ib.usage, 1, 1, 1);
	cc_disconnect(adm);
	close(r.fd);
}

/* A program's totals: queues (open and closed) and reports of every
 * connection, also after they closed. */
static void programs_keep_history(void **state)
{
	struct cc_conn *adm = conn_as("admin");
	struct cc_conn *h = conn_as("hist");
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = 16 };
	uint32_t sid;
	assert_int_equal(cc_session_create(h, &sp, &sid), 0);
	uint8_t iv[12] = { 0 }, buf[64] = { 0 }, tag[16];
	for (int i = 0; i < 3; i++)
		assert_int_equal(cc_crypt(h, sid, CC_ENCRYPT, iv, 12, NULL, 0,
					  buf, buf, sizeof(buf), tag),
				 0);
	assert_int_equal(report(h, 3, 1, 2), 0);

	struct cc_program_stats *v;
	unsigned n;
	const struct cc_program_stats *p = program(adm, &v, &n, "hist", 0);
	assert_non_null(p);
	assert_int_equal(p->connections, 1);
	assert_int_equal(p->connections_total, 1);
	assert_int_equal(p->ops, 3);
	assert_int_equal(p->bytes, 3 * sizeof(buf));
	assert_int_equal(p->idle_ms, 0);
	assert_usage(&p->usage, 3, 1, 2);
	free(v);

	cc_disconnect(h);
	h = conn_as("hist");
	assert_int_equal(report(h, 1, 0, 0), 0);
	p = program(adm, &v, &n, "hist", 0);
	assert_non_null(p);
	assert_int_equal(p->connections, 1);
	assert_int_equal(p->connections_total, 2);
	assert_int_equal(p->queues, 0);
	assert_int_equal(p->ops, 3); /* the first connection's, kept */
	assert_usage(&p->usage, 4, 1, 2);
	free(v);

	cc_disconnect(h);
	usleep(20000);
	p = program(adm, &v, &n, "hist", 0);
	assert_non_null(p);
	assert_int_equal(p->connections, 0);
	assert_int_equal(p->connections_total, 2);
	assert_true(p->idle_ms > 0);
	assert_usage(&p->usage, 4, 1, 2);
	/* Sorted by name: admin, hist. */
	assert_true(n >= 2);
	assert_string_equal(v[0].name, "admin");
	free(v);
	cc_disconnect(adm);
}

/* The table holds MAX_PROGRAMS programs; the least recently active go
 * to "(other)", and no count is lost on the way. */
static void programs_bounded(void **state)
{
	enum { N = MAX_PROGRAMS + 3 };
	for (unsigned i = 0; i < N; i++) {
		char name[32];
		snprintf(name, sizeof(name), "many-%03u", i);
		struct cc_conn *c = conn_as(name);
		assert_int_equal(report(c, 1, i, 0), 0);
		cc_disconnect(c);
		usleep(2000); /* distinct closing times: a clear LRU order */
	}
	struct cc_conn *adm = conn_as("admin");
	struct cc_program_stats *v;
	unsigned n;
	assert_int_equal(cc_programs_get(adm, &v, &n), 0);
	uint64_t offl = 0, conns = 0, closed_rows = 0;
	const struct cc_program_stats *other = NULL;
	for (unsigned i = 0; i < n; i++) {
		offl += v[i].usage.offloaded;
		conns += v[i].connections_total;
		if (v[i].other)
			other = &v[i];
		else if (!v[i].connections)
			closed_rows++;
		/* The oldest went first. */
		assert_true(strcmp(v[i].name, "many-000") != 0);
	}
	assert_true(closed_rows <= MAX_PROGRAMS);
	assert_non_null(other);
	assert_string_equal(other->name, "(other)");
	assert_int_equal(other->uid, UINT32_MAX);
	assert_true(other == &v[n - 1]); /* last */
	assert_true(other->connections_total >= N - MAX_PROGRAMS);
	/* many-000 (fallbacks 0), many-001 (1), many-002 (2) at least. */
	assert_true(other->usage.fallbacks >= 3);
	assert_int_equal(offl, N);
	assert_true(conns >= N + 2); /* admin's own, the fixture's probe */
	free(v);
	cc_disconnect(adm);
}

static void drop_to(uid_t uid)
{
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		_exit(90);
}

/* A non-administrator named like someone else's program, reporting huge
 * numbers: its own row only; and it sees its own row only. */
static int liar(void)
{
	drop_to(UID_LIAR);
	struct cc_conn *c;
	if (cc_connect(daemon_.sock, "prog-b", &c))
		return 1;
	if (report(c, 1000, 1000, 1000))
		return 2;
	struct cc_program_stats *v;
	unsigned n;
	if (cc_programs_get(c, &v, &n))
		return 3;
	int ok = n == 1 && v[0].uid == UID_LIAR &&
		 !strcmp(v[0].name, "prog-b") && v[0].usage.offloaded == 1000;
	free(v);
	/* Its clients listing: itself only. */
	struct cc_client_info *ci;
	if (cc_clients_get(c, &ci, &n))
		return 4;
	ok = ok && n == 1 && ci[0].usage.fallbacks == 1000;
	free(ci);
	cc_disconnect(c);
	return ok ? 0 : 5;
}

/* One uid with a stream of made-up names: MAX_PROGRAMS_PER_UID records,
 * the rest in "(other)". */
static int churner(void)
{
	drop_to(UID_CHURN);
	for (unsigned i = 0; i < MAX_PROGRAMS_PER_UID + 4; i++) {
		char name[32];
		struct cc_conn *c;
		snprintf(name, sizeof(name), "churn-%u", i);
		if (cc_connect(daemon_.sock, name, &c))
			return 1;
		if (report(c, 0, 0, 1))
			return 2;
		cc_disconnect(c);
	}
	return 0;
}

/* Another uid filling its share with made-up names: with enough of
 * them the table is full, and they must fold into "(other)" rather than
 * evict anyone else's history. */
static uid_t crowd_uid;

static int crowd(void)
{
	drop_to(crowd_uid);
	for (unsigned i = 0; i < MAX_PROGRAMS_PER_UID; i++) {
		char name[32];
		struct cc_conn *c;
		snprintf(name, sizeof(name), "crowd-%u", i);
		if (cc_connect(daemon_.sock, name, &c))
			return 1;
		if (report(c, 0, 0, 1))
			return 2;
		cc_disconnect(c);
	}
	return 0;
}

static void run_child(int (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st))
		fail_msg("child check %d failed", WEXITSTATUS(st));
}

static void other_users(void **state)
{
	if (geteuid() != 0) {
		skip();
		return;
	}
	/* prog-b of uid 0: one closed connection (a record) and one open. */
	struct cc_conn *b = conn_as("prog-b"), *adm = conn_as("admin");
	assert_int_equal(report(b, 1, 0, 0), 0);
	cc_disconnect(b);
	b = conn_as("prog-b");
	assert_int_equal(report(b, 0, 2, 0), 0);
	run_child(liar);
	run_child(churner);
	usleep(20000); /* the daemon saw the children's connections go */

	/* prog-b of uid 0 kept its own numbers, open and closed. */
	struct cc_client_info ib = client_named(adm, "prog-b");
	assert_usage(&ib.usage, 0, 2, 0);
	struct cc_program_stats *v;
	unsigned n;
	const struct cc_program_stats *p = program(adm, &v, &n, "prog-b", 0);
	assert_non_null(p);
	assert_usage(&p->usage, 1, 2, 0);
	assert_int_equal(p->connections, 1);
	assert_int_equal(p->connections_total, 2);
	free(v);
	p = program(adm, &v, &n, "prog-b", UID_LIAR);
	assert_non_null(p);
	assert_usage(&p->usage, 1000, 1000, 1000);
	assert_int_equal(p->connections, 0);

	unsigned churn_rows = 0;
	uint64_t churn_in = 0;
	for (unsigned i = 0; i < n; i++) {
		if (v[i].other) {
			churn_in += v[i].usage.inprocess;
			continue;
		}
		if (v[i].uid == UID_CHURN) {
			churn_rows++;
			churn_in += v[i].usage.inprocess;
		}
	}
	assert_int_equal(churn_rows, MAX_PROGRAMS_PER_UID);
	assert_int_equal(churn_in, MAX_PROGRAMS_PER_UID + 4);
	free(v);

	/* Enough other uids to fill the table twice over: uid 0's prog-b
	 * (the least recently active record) must survive them. */
	for (unsigned k = 0; k < 2 * MAX_PROGRAMS / MAX_PROGRAMS_PER_UID; k++) {
		crowd_uid = UID_CHURN + 100 + k;
		run_child(crowd);
	}
	usleep(20000);
	p = program(adm, &v, &n, "prog-b", 0);
	assert_non_null(p);
	assert_usage(&p->usage, 1, 2, 0);
	free(v);
	cc_disconnect(b);
	cc_disconnect(adm);
}

static int setup(void **state)
{
	static const char *const args[] = { "--socket-mode", "0666", NULL };
	struct fx_daemon_params p = { .workers = 1, .args = args };
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
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(reports_kept_per_connection,
						setup, teardown),
		cmocka_unit_test_setup_teardown(bad_reports_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(raw_reports, setup, teardown),
		cmocka_unit_test_setup_teardown(programs_keep_history, setup,
						teardown),
		cmocka_unit_test_setup_teardown(programs_bounded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(other_users, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
