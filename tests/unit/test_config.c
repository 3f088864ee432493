/* SPDX-License-Identifier: MIT */
/*
 * The configuration parser (daemon/config/config.c): every key, the defaults,
 * precedence (file, then command line), the allow-list decision, and
 * many ways a file can be wrong, each of which must be an error that
 * names the file and line.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bounds.h"
#include "config.h"
#include "engine.h"

static char err[CONFIG_ERR_MAX];

static int parse(struct config *c, const char *text)
{
	config_defaults(c);
	err[0] = '\0';
	return config_parse(c, text, strlen(text), "t.conf", err, sizeof(err));
}

static void defaults(void **state)
{
	struct config c;
	config_defaults(&c);
	assert_int_equal(c.socket_mode, 0660);
	assert_int_equal(c.workers, 0);
	assert_int_equal(c.spin_us, WORKER_SPIN_US);
	assert_int_equal(c.log_level, LOG_INFO_);
	assert_int_equal(c.lim.conns_per_uid, DEFAULT_CONNS_PER_UID);
	assert_int_equal(c.lim.queues, MAX_QUEUES_PER_CLIENT);
	assert_int_equal(c.lim.sessions, MAX_SESSIONS_PER_CLIENT);
	assert_true(c.lim.arena_bytes == MAX_ARENA_PER_CLIENT);
	assert_true(c.lim.inflight == MAX_INFLIGHT_PER_CLIENT);
	assert_int_equal(c.keys.min_bits, 128);
	assert_true(c.keys.sessionless);
	assert_false(c.keys.require_mlock);
	assert_int_equal(c.pcrypt, CONFIG_PCRYPT_AUTO);
	assert_string_equal(c.pcrypt_algs, "");
	for (unsigned w = 0; w < CONFIG_SET_WORDS; w++)
		assert_true(c.set[w] == 0);
	/* An empty file and one of comments only change nothing. */
	struct config d;
	assert_int_equal(parse(&d, ""), 0);
	assert_memory_equal(&c, &d, sizeof(c));
	assert_int_equal(parse(&d, "# nothing\n\n   \t\n# more\n"), 0);
	assert_memory_equal(&c, &d, sizeof(c));
}

static void every_key(void **state)
{
	struct config c;
	const char *text = "# every key\n"
			   "socket = /run/x/cryptod.sock\n"
			   "socket_mode = 0600\n"
			   "socket_group = 0\n"
			   "workers = 3   # inline comment\n"
			   "poll_mode = busy\n"
			   "spin_us = 50\n"
			   "pin = yes\n"
			   "log_level = debug\n"
			   "allow_users = root, 1000 1001,1002\n"
			   "allow_groups = 0\n"
			   "limits.connections_per_uid = 4\n"
			   "limits.queues_per_client = 2\n"
			   "limits.sessions_per_client = 10\n"
			   "limits.arena_per_client = 64M\n"
			   "limits.inflight_per_client = 4096\n"
			   "limits.queues_per_uid = 5\n"
			   "limits.sessions_per_uid = 6\n"
			   "limits.arena_per_uid = 1G\n"
			   "keys.min_bits = 256\n"
			   "keys.sessionless = no\n"
			   "keys.require_mlock = on\n"
			   "kernel.pcrypt = create\n"
			   "kernel.pcrypt_algs = gcm(aes) , "
			   "authenc(hmac(sha256),cbc(aes))\n"
			   "route.aes-gcm = openssl\n"
			   "route.aes-xts = default\n";
	assert_int_equal(parse(&c, text), 0);
	assert_string_equal(c.socket, "/run/x/cryptod.sock");
	assert_int_equal(c.socket_mode, 0600);
	assert_true(c.has_socket_group);
	assert_int_equal(c.socket_group, 0);
	assert_int_equal(c.workers, 3);
	assert_true(c.busy_poll);
	assert_int_equal(c.spin_us, 50);
	assert_true(c.pin);
	assert_int_equal(c.log_level, LOG_DEBUG_);
	assert_int_equal(c.n_allow_uids, 4);
	assert_int_equal(c.allow_uids[0], 0);
	assert_int_equal(c.allow_uids[3], 1002);
	assert_int_equal(c.n_allow_gids, 1);
	assert_int_equal(c.lim.conns_per_uid, 4);
	assert_int_equal(c.lim.queues, 2);
	assert_int_equal(c.lim.sessions, 10);
	assert_true(c.lim.arena_bytes == 64ull << 20);
	assert_true(c.lim.inflight == 4096);
	assert_int_equal(c.lim.uid_queues, 5);
	assert_int_equal(c.lim.uid_sessions, 6);
	assert_true(c.lim.uid_arena_bytes == 1ull << 30);
	assert_int_equal(c.keys.min_bits, 256);
	assert_false(c.keys.sessionless);
	assert_true(c.keys.require_mlock);
	assert_int_equal(c.pcrypt, CONFIG_PCRYPT_CREATE);
	assert_string_equal(c.pcrypt_algs,
			    "gcm(aes),authenc(hmac(sha256),cbc(aes))");
	assert_string_equal(c.route[CRD_ALG_AES_GCM], "openssl");
	assert_string_equal(c.route[CRD_ALG_AES_XTS], "");
	assert_true(config_is_set(&c, CK_PCRYPT_ALGS));
	assert_int_equal(c.line[CK_WORKERS], 5);
	assert_int_equal(c.line[CK_ROUTE + CRD_ALG_AES_GCM], 25);
	assert_int_equal(config_pcrypt_mode(), CONFIG_PCRYPT_AUTO);
	config_set_active(&c);
	assert_int_equal(config_pcrypt_mode(), CONFIG_PCRYPT_CREATE);
	assert_string_equal(config_pcrypt_algs(), c.pcrypt_algs);
	config_set_active(NULL);
}

static void syntax_variants(void **state)
{
	struct config c;
	/* CRLF, tabs, no final newline, no spaces around '='. */
	assert_int_equal(parse(&c, "workers=2\r\n\tspin_us\t=\t7\t\r\npin=off"),
			 0);
	assert_int_equal(c.workers, 2);
	assert_int_equal(c.spin_us, 7);
	assert_false(c.pin);
	/* A '#' inside a value (no space before it) is part of the value. */
	assert_int_equal(parse(&c, "socket = /tmp/a#b.sock # comment\n"), 0);
	assert_string_equal(c.socket, "/tmp/a#b.sock");
	/* Sizes and booleans in their spellings. */
	const char *sizes[] = { "65536", "64K",	 "64k",	 "64KiB",
				"1G",	 "1GiB", "2048M" };
	uint64_t want[] = { 65536,	65536,	    65536,	  65536,
			    1ull << 30, 1ull << 30, 2048ull << 20 };
	for (unsigned i = 0; i < 7; i++) {
		char line[64];
		snprintf(line, sizeof(line), "limits.arena_per_client = %s\n",
			 sizes[i]);
		assert_int_equal(parse(&c, line), 0);
		assert_true(c.lim.arena_bytes == want[i]);
	}
	assert_int_equal(parse(&c, "workers = auto\nkeys.sessionless = TRUE\n"),
			 0);
	assert_int_equal(c.workers, 0);
	/* Lists: empty clears, duplicates collapse. */
	assert_int_equal(parse(&c, "allow_users = 5,5, 5\nallow_groups =\n"),
			 0);
	assert_int_equal(c.n_allow_uids, 1);
	assert_int_equal(c.n_allow_gids, 0);
}

/* Each bad input must fail with "t.conf:<line>: " and the given words. */
static void bad_files(void **state)
{
	static const struct {
		const char *text;
		unsigned line;
		const char *says;
	} cases[] = {
		{ "bogus = 1\n", 1, "unknown key 'bogus'" },
		{ "# ok\nworkers = 2\nworkers = 3\n", 3, "duplicate key" },
		{ "route.aes-gcm = aesni\nroute.aes-gcm = null\n", 2,
		  "duplicate" },
		{ "[limits]\n", 1, "sections are not used" },
		{ "workers 4\n", 1, "expected 'key = value'" },
		{ "= 4\n", 1, "unknown key ''" },
		{ "workers =\n", 1, "empty value" },
		{ "workers = 0\n", 1, "workers" },
		{ "workers = 65\n", 1, "1..64" },
		{ "workers = -1\n", 1, "workers" },
		{ "workers = 4x\n", 1, "workers" },
		{ "workers = 99999999999999999999999\n", 1, "workers" },
		{ "spin_us = 1000001\n", 1, "0..1000000" },
		{ "socket = relative.sock\n", 1, "absolute path" },
		{ "socket = /"
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		  1, "shorter than" },
		{ "socket_mode = 0999\n", 1, "octal" },
		{ "socket_mode = 1777\n", 1, "octal" },
		{ "socket_mode = rw\n", 1, "octal" },
		{ "socket_group = no-such-group-here\n", 1, "no group" },
		{ "poll_mode = sometimes\n", 1, "adaptive or busy" },
		{ "pin = maybe\n", 1, "yes or no" },
		{ "log_level = loud\n", 1, "error, warn, info or debug" },
		{ "allow_users = no-such-user-here\n", 1, "no user" },
		{ "allow_users = 1,,2\n", 1, "empty item" },
		{ "allow_users = 1,\n", 1, "empty item" },
		{ "allow_users = ,1\n", 1, "empty item" },
		{ "allow_groups = 4294967295\n", 1, "no group" },
		{ "limits.connections_per_uid = 0\n", 1, "1..256" },
		{ "limits.queues_per_client = 17\n", 1, "1..16" },
		{ "limits.sessions_per_client = 1025\n", 1, "1..1024" },
		{ "limits.arena_per_client = 1K\n", 1, "size" },
		{ "limits.arena_per_client = 3T\n", 1, "size" },
		{ "limits.arena_per_client = 64Q\n", 1, "size" },
		{ "limits.arena_per_client = 99999999999G\n", 1, "size" },
		{ "limits.inflight_per_client = 7\n", 1, "8.." },
		{ "limits.inflight_per_client = 1048577\n", 1, "8..1048576" },
		{ "limits.queues_per_uid = 0\n", 1, "1..1024" },
		{ "limits.sessions_per_uid = 8193\n", 1, "1..8192" },
		{ "limits.arena_per_uid = 32K\n", 1, "size" },
		{ "keys.min_bits = 100\n", 1, "0, 128, 192 or 256" },
		{ "keys.sessionless = sometimes\n", 1, "yes or no" },
		{ "kernel.pcrypt = always\n", 1, "off, auto or create" },
		{ "kernel.pcrypt_algs = gcm(aes\n", 1,
		  "kernel algorithm name" },
		{ "kernel.pcrypt_algs = gcm(aes))\n", 1, "kernel algorithm" },
		{ "kernel.pcrypt_algs = gcm(aes);rm\n", 1, "kernel algorithm" },
		{ "kernel.pcrypt_algs = (aes)\n", 1, "kernel algorithm" },
		{ "kernel.pcrypt_algs = a,,b\n", 1, "empty item" },
		{ "route.aes-foo = aesni\n", 1, "unknown algorithm" },
		{ "route.aes-gcm = quantum\n", 1, "no engine 'quantum'" },
		{ "route.aes-xts = aesni\n", 1, "does not offer aes-xts" },
		{ "route. = aesni\n", 1, "unknown algorithm" },
		{ "\n\n\nWORKERS = 2\n", 4, "unknown key" },
		{ "workers = 2\n\x01\n", 2, "control character" },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config c;
		char where[32];
		int rc = parse(&c, cases[i].text);
		if (rc != -EINVAL)
			fail_msg("case %u (%s) parsed", i, cases[i].text);
		snprintf(where, sizeof(where), "t.conf:%u: ", cases[i].line);
		if (strncmp(err, where, strlen(where)) ||
		    !strstr(err, cases[i].says))
			fail_msg("case %u: got '%s', want '%s...%s'", i, err,
				 where, cases[i].says);
	}
}

static void bad_bytes(void **state)
{
	struct config c;
	config_defaults(&c);
	static const char nul[] = "workers = 2\nspin_us = 1\0\n";
	assert_int_equal(config_parse(&c, nul, sizeof(nul) - 1, "t.conf", err,
				      sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "t.conf:2: NUL byte"));

	size_t n = CONFIG_LINE_MAX + 10;
	char *big = malloc(n + 1);
	memset(big, 'a', n);
	memcpy(big, "# ", 2);
	big[n] = '\0';
	assert_int_equal(parse(&c, big), -EINVAL);
	assert_non_null(strstr(err, "t.conf:1: line longer"));
	free(big);

	/* More than CONFIG_ALLOW_MAX users. */
	char list[2048] = "allow_users = ";
	for (unsigned i = 0; i <= CONFIG_ALLOW_MAX; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%u,", 2000 + i);
	list[strlen(list) - 1] = '\n';
	assert_int_equal(parse(&c, list), -EINVAL);
	assert_non_null(strstr(err, "more than 64"));
}

/* A failed parse stops at the bad line; the caller throws the result
 * away, but nothing after the bad line may have been applied. */
static void stops_at_error(void **state)
{
	struct config c;
	assert_int_equal(parse(&c, "workers = 2\nbad\nspin_us = 3\n"), -EINVAL);
	assert_int_equal(c.spin_us, WORKER_SPIN_US);
}

/* The named-key paths: keys.dir a path, keys.kek a path or a systemd
 * credential's name; each its own field, not the socket's. */
static void key_paths(void **state)
{
	struct config c;
	char v[CONFIG_PATH_MAX];

	assert_int_equal(parse(&c, "keys.dir = /var/lib/k\n"
				   "keys.kek = credential:cryptod-kek\n"
				   "socket = /run/x.sock\n"),
			 0);
	assert_string_equal(c.keys.dir, "/var/lib/k");
	assert_string_equal(c.keys.kek, "credential:cryptod-kek");
	assert_string_equal(c.socket, "/run/x.sock");
	config_value_str(&c, CK_KEY_KEK, v, sizeof(v));
	assert_string_equal(v, "credential:cryptod-kek");
	config_value_str(&c, CK_KEY_DIR, v, sizeof(v));
	assert_string_equal(v, "/var/lib/k");
	assert_int_equal(parse(&c, "keys.kek = /etc/cryptod/kek\n"), 0);
	assert_string_equal(c.keys.kek, "/etc/cryptod/kek");
	assert_int_equal(parse(&c, "keys.kek = keyring:cryptod-kek\n"), 0);
	assert_string_equal(c.keys.kek, "keyring:cryptod-kek");
	assert_int_equal(parse(&c, "keys.kek = keyring:\n"), -EINVAL);
	assert_int_equal(parse(&c, "keys.kek =\n"), 0);
	assert_string_equal(c.keys.kek, "");
	/* Relative paths, a credential with no name or a path in it, and a
	 * credential: for the directory are refused. */
	assert_int_equal(parse(&c, "keys.kek = kek\n"), -EINVAL);
	assert_non_null(strstr(err, "credential:NAME"));
	assert_int_equal(parse(&c, "keys.kek = credential:\n"), -EINVAL);
	assert_int_equal(parse(&c, "keys.kek = credential:../x\n"), -EINVAL);
	assert_int_equal(parse(&c, "keys.dir = credential:x\n"), -EINVAL);
	assert_int_equal(parse(&c, "keys.dir = var/lib\n"), -EINVAL);
	char line[CONFIG_PATH_MAX + 32];
	snprintf(line, sizeof(line), "keys.dir = /%0*d\n", CONFIG_PATH_MAX, 0);
	assert_int_equal(parse(&c, line), -EINVAL);
}

static void command_line(void **state)
{
	struct config file, cli;
	assert_int_equal(parse(&file, "workers = 2\nlog_level = warn\n"
				      "route.aes-gcm = openssl\n"),
			 0);
	config_defaults(&cli);
	assert_int_equal(
		config_set(&cli, "workers", "4", "--workers", err, sizeof(err)),
		0);
	/* A later flag replaces an earlier one (no duplicate error). */
	assert_int_equal(
		config_set(&cli, "workers", "5", "--workers", err, sizeof(err)),
		0);
	assert_int_equal(config_set(&cli, "route.aes-gcm", "default", "--set",
				    err, sizeof(err)),
			 0);
	assert_int_equal(
		config_set(&cli, "workers", "x", "--workers", err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "--workers: workers"));
	assert_int_equal(
		config_set(&cli, "nope", "1", "--set", err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "--set: unknown key 'nope'"));
	assert_int_equal(config_set(&cli, "socket", "/a\nb", "--socket", err,
				    sizeof(err)),
			 -EINVAL);

	config_merge(&file, &cli);
	assert_int_equal(file.workers, 5);		      /* flag wins */
	assert_int_equal(file.log_level, LOG_WARN_);	      /* file kept */
	assert_string_equal(file.route[CRD_ALG_AES_GCM], ""); /* flag wins */
	assert_int_equal(file.line[CK_WORKERS], 0); /* not from the file */
	assert_int_equal(file.line[CK_LOG_LEVEL], 2);
}

/* Every key's printed value parses back to the same value. */
static void value_round_trip(void **state)
{
	struct config c, d;
	assert_int_equal(parse(&c, "workers = 7\nallow_users = 1, 2\n"
				   "socket_group = 0\nsocket = /x/y\n"
				   "limits.arena_per_client = 100000\n"
				   "route.aes-cbc = openssl\n"
				   "kernel.pcrypt_algs = gcm(aes)\n"),
			 0);
	config_defaults(&d);
	for (unsigned k = 0; k < CK_N; k++) {
		const char *name = config_key_name(k);
		char v[512], w[512];
		if (!name)
			continue;
		config_value_str(&c, k, v, sizeof(v));
		if (config_set(&d, name, v, "rt", err, sizeof(err)))
			fail_msg("%s = '%s': %s", name, v, err);
		config_value_str(&d, k, w, sizeof(w));
		assert_string_equal(v, w);
	}
	assert_null(config_key_name(CK_N));
	assert_string_equal(config_key_name(CK_ROUTE + CRD_ALG_AES_GCM),
			    "route.aes-gcm");
	assert_true(config_key_live(CK_LOG_LEVEL));
	assert_true(config_key_live(CK_LIM_SESSIONS));
	assert_true(config_key_live(CK_ROUTE + CRD_ALG_AES_GCM));
	assert_false(config_key_live(CK_SOCKET));
	assert_false(config_key_live(CK_WORKERS));
	assert_false(config_key_live(CK_PCRYPT));
}

static void peer_allowed(void **state)
{
	struct config c;
	uid_t me = geteuid();
	config_defaults(&c);
	/* No list: everyone who can open the socket. */
	assert_true(config_peer_allowed(&c, 1234, 1234, NULL, 0));
	assert_int_equal(parse(&c, "allow_users = 1000\n"
				   "allow_groups = 2000, 2001\n"),
			 0);
	assert_true(config_peer_allowed(&c, 1000, 1, NULL, 0));
	assert_true(config_peer_allowed(&c, 1, 2001, NULL, 0));
	gid_t sup[] = { 5, 6, 2000 };
	assert_true(config_peer_allowed(&c, 1, 1, sup, 3));
	assert_false(config_peer_allowed(&c, 1, 1, sup, 2));
	assert_false(config_peer_allowed(&c, 1001, 1001, NULL, 0));
	/* Admins always. */
	assert_true(config_peer_allowed(&c, 0, 99, NULL, 0));
	assert_true(config_peer_allowed(&c, me, 99, NULL, 0));
	/* Groups only: a user list is not implied. */
	assert_int_equal(parse(&c, "allow_groups = 2000\n"), 0);
	assert_false(config_peer_allowed(&c, 1000, 1000, NULL, 0));
}

static void load_file(void **state)
{
	struct config c;
	char path[] = "/tmp/test_config.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "workers = 2\nlog_level = banana\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	config_defaults(&c);
	assert_int_equal(config_load(&c, path, err, sizeof(err)), -EINVAL);
	char want[64];
	snprintf(want, sizeof(want), "%s:2: log_level", path);
	assert_non_null(strstr(err, want));

	/* Too big. */
	FILE *f = fopen(path, "w");
	for (unsigned i = 0; i < CONFIG_FILE_MAX / 8 + 1; i++)
		fputs("#######\n", f);
	fclose(f);
	config_defaults(&c);
	assert_int_equal(config_load(&c, path, err, sizeof(err)), -EFBIG);
	unlink(path);

	assert_int_equal(config_load(&c, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	assert_int_equal(config_load(&c, "/", err, sizeof(err)), -EISDIR);
}

/* Applying routes sets the engine table; an emptied route clears it. */
static void apply_routes(void **state)
{
	struct config c;
	assert_int_equal(parse(&c, "route.aes-gcm = openssl\n"), 0);
	assert_int_equal(config_apply_live(&c), 0);
	assert_string_equal(engine_route_get(CRD_ALG_AES_GCM), "openssl");
	config_defaults(&c);
	assert_int_equal(config_apply_live(&c), 0);
	assert_null(engine_route_get(CRD_ALG_AES_GCM));
}

/*
 * The shipped example (etc/cryptod.conf) parses as it is, every key it
 * shows is a real key, and uncommenting every "#key = value" line gives
 * exactly the defaults: the example documents the defaults truly.
 */
static void example_file(void **state)
{
	struct config c, d, def;
	config_defaults(&def);
	config_defaults(&c);
	assert_int_equal(
		config_load(&c, CRYPTOD_EXAMPLE_CONF, err, sizeof(err)), 0);
	memset(c.set, 0, sizeof(c.set));
	assert_memory_equal(&c, &def, sizeof(c));

	FILE *f = fopen(CRYPTOD_EXAMPLE_CONF, "r");
	assert_non_null(f);
	char line[512], text[16384] = "";
	unsigned keys_shown = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' && line[1] != ' ' && line[1] != '\n' &&
		    strchr(line, '=')) {
			strncat(text, line + 1,
				sizeof(text) - strlen(text) - 1);
			keys_shown++;
		}
	}
	fclose(f);
	config_defaults(&d);
	if (config_parse(&d, text, strlen(text), "uncommented", err,
			 sizeof(err)))
		fail_msg("%s", err);
	/* Every key appears (route.* for every algorithm with a name). */
	unsigned n_keys = 0;
	for (unsigned k = 0; k < CK_N; k++) {
		if (!config_key_name(k))
			continue;
		n_keys++;
		if (!config_is_set(&d, k))
			fail_msg("the example does not show %s",
				 config_key_name(k));
	}
	assert_int_equal(keys_shown, n_keys);
	/* ...with its default value (workers = auto is 0, socket_group
	 * empty, and so on). The socket line shows root's default path. */
	memcpy(d.socket, def.socket, sizeof(d.socket));
	memset(d.set, 0, sizeof(d.set));
	memset(d.line, 0, sizeof(d.line));
	assert_memory_equal(&d, &def, sizeof(d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(every_key),
		cmocka_unit_test(syntax_variants),
		cmocka_unit_test(bad_files),
		cmocka_unit_test(bad_bytes),
		cmocka_unit_test(stops_at_error),
		cmocka_unit_test(key_paths),
		cmocka_unit_test(command_line),
		cmocka_unit_test(value_round_trip),
		cmocka_unit_test(peer_allowed),
		cmocka_unit_test(load_file),
		cmocka_unit_test(apply_routes),
		cmocka_unit_test(example_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
