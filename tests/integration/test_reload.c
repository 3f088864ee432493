/* SPDX-License-Identifier: MIT */
/*
 * The configuration file against a real daemon: command-line settings
 * beat the file, SIGHUP applies the live keys at once and logs the
 * restart-only ones without applying them, a broken file on reload keeps
 * the running configuration and names file and line,
 * --check-config answers 0 or 1, and a broken file at start exits 78
 * (EX_CONFIG, which the unit does not retry) with the reason at error
 * priority when stderr is the journal.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"

static const uint8_t key128[16] = { 1, 2,  3,  4,  5,  6,  7,  8,
				    9, 10, 11, 12, 13, 14, 15, 16 };

static char conf[64], log_path[64];

static void write_conf(const char *text)
{
	FILE *f = fopen(conf, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static unsigned log_count(const char *needle)
{
	FILE *f = fopen(log_path, "r");
	char line[1024];
	unsigned n = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* SIGHUP, then wait until the log shows the outcome (want more lines
 * containing needle than before). */
static void reload(const struct fx_daemon *d, const char *needle)
{
	unsigned before = log_count(needle);
	assert_int_equal(kill(d->pid, SIGHUP), 0);
	uint64_t end = fx_now_ms() + 10000;
	while (log_count(needle) == before && fx_now_ms() < end)
		usleep(10000);
	assert_true(log_count(needle) > before);
}

static int session(struct cc_conn *c, const void *key, size_t len,
		   uint32_t *sid)
{
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = len };
	return cc_session_create(c, &sp, sid);
}

static int check_config(const char *path, char *out, size_t len)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s --check-config --config %s 2>&1",
		 CRYPTOD_BIN, path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void flags_and_reload(void **state)
{
	struct fx_daemon d;
	struct cc_conn *c;
	struct cc_queue *q[3];
	uint32_t sid[4];
	char out[1024];

	write_conf("# test\n"
		   "log_level = info\n"
		   "workers = 1\n"
		   "limits.queues_per_client = 1\n"
		   "limits.sessions_per_client = 4\n");
	assert_int_equal(check_config(conf, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "configuration OK"));

	static const char *const args[] = { "--set",
					    "limits.sessions_per_client=2",
					    NULL };
	struct fx_daemon_params p = { .log_level = "info",
				      .config = conf,
				      .args = args };
	fflush(stderr);
	int saved = dup(2);
	FILE *lf = fopen(log_path, "w");
	assert_non_null(lf);
	dup2(fileno(lf), 2);
	fclose(lf);
	int err = fx_daemon_start(&d, &p);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(err, 0);
	assert_int_equal(cc_connect(d.sock, "reload", &c), 0);

	/* The flag (2) beats the file (4); the file's queue limit holds. */
	assert_int_equal(session(c, key128, 16, &sid[0]), 0);
	assert_int_equal(session(c, key128, 16, &sid[1]), 0);
	assert_int_equal(session(c, key128, 16, &sid[2]), -ENOSPC);
	struct cc_queue_params qp = { .sq_entries = 8, .arena_size = 1 << 16 };
	assert_int_equal(cc_queue_open(c, &qp, &q[0]), 0);
	assert_int_equal(cc_queue_open(c, &qp, &q[1]), -EMFILE);
	struct cc_stats st;
	assert_int_equal(cc_stats_get(c, &st), 0);
	assert_int_equal(st.workers, 1);
	cc_stats_free(&st);

	/* Good reload: live keys apply, restart-only ones are logged. */
	write_conf("log_level = info\n"
		   "workers = 2\n"
		   "limits.queues_per_client = 2\n"
		   "limits.sessions_per_client = 8\n"
		   "keys.min_bits = 256\n"
		   "route.aes-gcm = openssl\n"
		   "keys.kek = /nonexistent/kek.hex\n");
	reload(&d, "reloaded ");
	assert_int_equal(log_count("workers = 2 needs a restart; still 1"), 1);
	/* An unset key in effect is named so, not left blank. */
	assert_int_equal(log_count("keys.kek = /nonexistent/kek.hex needs a "
				   "restart; still unset"),
			 1);
	assert_int_equal(log_count("needs a restart; still \n"), 0);
	/* An engine with nothing to add: no empty parentheses. */
	assert_int_equal(log_count("engine null available\n"), 1);
	assert_int_equal(log_count("available ()"), 0);
	assert_int_equal(
		log_count("reload: limits.queues_per_client = 2 (was 1)"), 1);
	assert_int_equal(cc_queue_open(c, &qp, &q[1]), 0);
	assert_int_equal(cc_queue_open(c, &qp, &q[2]), -EMFILE);
	assert_int_equal(session(c, key128, 16, &sid[2]), -ENOSPC); /* flag */
	assert_int_equal(cc_stats_get(c, &st), 0);
	assert_int_equal(st.workers, 1);
	cc_stats_free(&st);
	/* cc_crypt() below opens the connection's own queue. */
	cc_queue_close(q[1]);
	/* Key policy: new 128-bit keys are refused, old sessions work. */
	assert_int_equal(cc_session_destroy(c, sid[1]), 0);
	assert_int_equal(session(c, key128, 16, &sid[1]), CC_ERR_POLICY);
	uint8_t key256[32] = { 7 }, iv[12] = { 0 }, buf[32] = { 0 }, tag[16];
	assert_int_equal(fx_crypt(c, sid[0], CC_ENCRYPT, iv, 12, NULL, 0, buf,
				  buf, sizeof(buf), tag),
			 0);
	/* Routing: the new session goes to openssl. */
	assert_int_equal(session(c, key256, 32, &sid[1]), 0);
	struct cc_session_info *si;
	unsigned n;
	assert_int_equal(cc_sessions_get(c, &si, &n), 0);
	int found = 0;
	for (unsigned i = 0; i < n; i++) {
		if (si[i].session_id == sid[1]) {
			assert_string_equal(si[i].engine, "openssl");
			found = 1;
		}
	}
	free(si);
	assert_true(found);

	/* Broken reload: logged with file:line, nothing changes. */
	write_conf("limits.queues_per_client = 1\n"
		   "bogus = 3\n");
	reload(&d, "keeping the running configuration");
	char where[128];
	snprintf(where, sizeof(where), "%s:2: unknown key 'bogus'", conf);
	assert_int_equal(log_count(where), 1);
	cc_queue_close(q[0]); /* leaves cc_crypt's queue: 1 of 2 */
	assert_int_equal(cc_queue_open(c, &qp, &q[0]), 0); /* still 2 */
	assert_int_equal(check_config(conf, out, sizeof(out)), 1);
	assert_non_null(strstr(out, where));

	cc_disconnect(c);
	assert_int_equal(fx_daemon_stop(&d), 0);
}

/* Runs "sh -c SCRIPT" (stderr into out); its exit status. */
static int run_sh(const char *script, char *out, size_t len)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "exec 2>&1; %s", script);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A value the daemon cannot use stops it at once with 78; with
 * $JOURNAL_STREAM naming its stderr the line carries priority <3>, and
 * without it no prefix. */
static void broken_config_at_start(void **state)
{
	char cmd[768], out[1024];
	write_conf("workers = abc\n");
	snprintf(cmd, sizeof(cmd),
		 "%s --config %s --socket /tmp/cryptod-never.sock", CRYPTOD_BIN,
		 conf);
	assert_int_equal(run_sh(cmd, out, sizeof(out)), 78);
	assert_non_null(strstr(out, "cryptod: "));
	assert_non_null(strstr(out, "workers"));
	assert_null(strstr(out, "<3>"));

	snprintf(cmd, sizeof(cmd),
		 "JOURNAL_STREAM=$(stat -L -c %%d:%%i /proc/self/fd/2) "
		 "%s --config %s --socket /tmp/cryptod-never.sock",
		 CRYPTOD_BIN, conf);
	assert_int_equal(run_sh(cmd, out, sizeof(out)), 78);
	assert_int_equal(strncmp(out, "<3>cryptod: ", 12), 0);
	/* --check-config keeps its documented 1, at error priority too */
	snprintf(cmd, sizeof(cmd),
		 "JOURNAL_STREAM=$(stat -L -c %%d:%%i /proc/self/fd/2) "
		 "%s --check-config --config %s",
		 CRYPTOD_BIN, conf);
	assert_int_equal(run_sh(cmd, out, sizeof(out)), 1);
	assert_int_equal(strncmp(out, "<3>cryptod: ", 12), 0);
	/* a JOURNAL_STREAM that names another file is not trusted */
	snprintf(cmd, sizeof(cmd),
		 "JOURNAL_STREAM=$(stat -L -c %%d:%%i /dev/null) "
		 "%s --check-config --config %s",
		 CRYPTOD_BIN, conf);
	assert_int_equal(run_sh(cmd, out, sizeof(out)), 1);
	assert_int_equal(strncmp(out, "cryptod: ", 9), 0);
	unlink(conf);
}

/* An explicit --config that does not exist stops the daemon at once. */
static void missing_explicit_config(void **state)
{
	char cmd[512], out[512];
	snprintf(cmd, sizeof(cmd),
		 "%s --config /nonexistent/cryptod.conf --socket "
		 "/tmp/cryptod-never.sock 2>&1",
		 CRYPTOD_BIN);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 78);
	assert_non_null(strstr(out, "/nonexistent/cryptod.conf"));
	assert_int_equal(check_config("/nonexistent/x.conf", out, sizeof(out)),
			 1);
}

int main(void)
{
	snprintf(conf, sizeof(conf), "/tmp/cryptod-reload.%d.conf",
		 (int)getpid());
	snprintf(log_path, sizeof(log_path), "/tmp/cryptod-reload.%d.log",
		 (int)getpid());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flags_and_reload),
		cmocka_unit_test(missing_explicit_config),
		cmocka_unit_test(broken_config_at_start),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(conf);
	unlink(log_path);
	return rc;
}
