/* SPDX-License-Identifier: MIT */
/*
 * cryptod: straight-line set-up (engines, key store, workers, listener,
 * signals), dispatch, teardown in reverse.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/crypto.h>

#include "config.h"
#include "ctl.h"
#include "engine.h"
#include "keyreq.h"
#include "keystore.h"
#include "bounds.h"
#include "log.h"
#include "privdrop.h"
#include "sdnotify.h"
#include "fdreap.h"
#include "grace.h"
#include "stats.h"
#include "worker.h"
#include "wire.h"

#ifndef CRYPTOD_VERSION
#define CRYPTOD_VERSION "0"
#endif

struct options {
	const char *config_path; /* NULL: CONFIG_DEFAULT_PATH if it exists */
	int no_config;
	int check;
	const char *user;  /* --user: drop to it when started as root */
	struct config cli; /* keys the command line set */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cryptod [OPTIONS]\n"
		"Crypto offload daemon: serves encrypt/decrypt batches to local\n"
		"processes over a Unix socket and shared-memory rings.\n"
		"\n"
		"  -c, --config PATH      configuration file (default %s\n"
		"                         if it exists; see cryptod.conf(5))\n"
		"      --no-config        read no configuration file\n"
		"      --check-config     check the configuration (file and flags),\n"
		"                         print the result, exit 0 if valid, 1 if not\n"
		"  -o, --set KEY=VALUE    set any configuration key, as in the file\n"
		"                         (repeatable; for example\n"
		"                         --set limits.sessions_per_client=64)\n"
		"  -s, --socket PATH      control socket (default: $CRYPTOD_SOCKET, else\n"
		"                         /run/cryptod/cryptod.sock as root, else\n"
		"                         $XDG_RUNTIME_DIR/cryptod.sock or\n"
		"                         /tmp/cryptod-$UID/cryptod.sock)\n"
		"  -m, --socket-mode MODE octal permissions of the socket (default 0660)\n"
		"  -g, --socket-group GRP group owning the socket (name or number)\n"
		"  -w, --workers N        worker threads, 1..%d (default: online CPUs);\n"
		"                         every worker serves every queue\n"
		"  -p, --poll-mode MODE   adaptive (default): busy-poll while work flows,\n"
		"                         sleep when idle; busy: never sleep (lowest\n"
		"                         latency, a whole core per worker)\n"
		"      --spin-us N        adaptive: busy-poll N us before sleeping\n"
		"                         (default %d)\n"
		"      --pin              pin worker i to online CPU i\n"
		"  -l, --log-level LEVEL  error, warn, info or debug (default info)\n"
		"  -u, --user USER        started as root (without systemd): create\n"
		"                         the socket's directory, bind the socket\n"
		"                         (group: USER's unless socket_group says),\n"
		"                         raise RLIMIT_MEMLOCK, create /var/lib/cryptod\n"
		"                         (named keys on),\n"
		"                         then run as USER (name or number) and its\n"
		"                         primary group, no supplementary groups;\n"
		"                         'root' stays root. The package's user is\n"
		"                         cryptod. Not started as root: USER must be\n"
		"                         the user it runs as\n"
		"  -h, --help             this text\n"
		"  -V, --version          print the version\n"
		"\n"
		"Command-line settings override the file. Runs in the foreground and\n"
		"logs to stderr (with <N> priorities when stderr is the journal).\n"
		"SIGHUP re-reads the file: log level, allow lists, limits, routing and\n"
		"key policy change at once; other changes are logged and wait for a\n"
		"restart; a broken file is logged and the running configuration kept.\n"
		"SIGTERM or SIGINT stops accepting clients, completes submitted work,\n"
		"wipes keys and exits 0. A configuration it cannot use exits 78\n"
		"(EX_CONFIG, also an unknown --user), bad arguments 2, other start-up\n"
		"failures 1. Started as root without --user it warns: run it with\n"
		"--user cryptod (cryptod(8), WITHOUT SYSTEMD).\n"
		"Under systemd it reports readiness and pings the watchdog\n"
		"($NOTIFY_SOCKET, $WATCHDOG_USEC), and serves a socket passed by\n"
		"socket activation ($LISTEN_FDS) instead of --socket. See cryptod(8)\n"
		"and cryptod.conf(5).\n",
		CONFIG_DEFAULT_PATH, MAX_WORKERS, WORKER_SPIN_US);
}

/* One command-line setting; 0 or exit status 2 after saying why. */
static int cli_set(struct options *o, const char *key, const char *value,
		   const char *flag)
{
	char err[CONFIG_ERR_MAX];
	if (!config_set(&o->cli, key, value, flag, err, sizeof(err)))
		return 0;
	fprintf(stderr, "cryptod: %s\n", err);
	return 2;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "no-config", no_argument, NULL, 'N' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "set", required_argument, NULL, 'o' },
		{ "socket", required_argument, NULL, 's' },
		{ "socket-mode", required_argument, NULL, 'm' },
		{ "socket-group", required_argument, NULL, 'g' },
		{ "workers", required_argument, NULL, 'w' },
		{ "poll-mode", required_argument, NULL, 'p' },
		{ "spin-us", required_argument, NULL, 'S' },
		{ "pin", no_argument, NULL, 'P' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "user", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	memset(o, 0, sizeof(*o));
	config_defaults(&o->cli);

	int c, rc = 0;
	while (!rc && (c = getopt_long(argc, argv, "c:o:s:m:g:w:p:l:u:hV",
				       longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config_path = optarg;
			break;
		case 'N':
			o->no_config = 1;
			break;
		case 'C':
			o->check = 1;
			break;
		case 'o': {
			char key[128];
			const char *eq = strchr(optarg, '=');
			if (!eq || (size_t)(eq - optarg) >= sizeof(key)) {
				fprintf(stderr,
					"cryptod: --set wants KEY=VALUE, not "
					"'%s'\n",
					optarg);
				return 2;
			}
			memcpy(key, optarg, eq - optarg);
			key[eq - optarg] = '\0';
			rc = cli_set(o, key, eq + 1, "--set");
			break;
		}
		case 's':
			rc = cli_set(o, "socket", optarg, "--socket");
			break;
		case 'm':
			rc = cli_set(o, "socket_mode", optarg, "--socket-mode");
			break;
		case 'g':
			rc = cli_set(o, "socket_group", optarg,
				     "--socket-group");
			break;
		case 'w':
			rc = cli_set(o, "workers", optarg, "--workers");
			break;
		case 'p':
			rc = cli_set(o, "poll_mode", optarg, "--poll-mode");
			break;
		case 'S':
			rc = cli_set(o, "spin_us", optarg, "--spin-us");
			break;
		case 'P':
			rc = cli_set(o, "pin", "yes", "--pin");
			break;
		case 'l':
			rc = cli_set(o, "log_level", optarg, "--log-level");
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("cryptod %s\n", CRYPTOD_VERSION);
			exit(0);
		default:
			fprintf(stderr, "Try 'cryptod --help'.\n");
			return 2;
		}
	}
	if (rc)
		return rc;
	if (optind < argc) {
		fprintf(stderr, "cryptod: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (o->no_config && o->config_path) {
		fprintf(stderr,
			"cryptod: --config and --no-config exclude each other\n");
		return 2;
	}
	return 0;
}

/* Fill what "unset" means: the default socket path and "auto" workers.
 * 0, or -ENAMETOOLONG. */
static int config_resolve(struct config *c)
{
	if (!c->socket[0] &&
	    wire_default_socket_path(c->socket, sizeof(c->socket)))
		return -ENAMETOOLONG;
	if (!c->workers) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		c->workers = cpus < 1		  ? 1
			     : cpus > MAX_WORKERS ? MAX_WORKERS
						  : (unsigned)cpus;
	}
	return 0;
}

/*
 * Defaults, then the file, then the command line. The file is the
 * explicit --config (which must exist) or CONFIG_DEFAULT_PATH if it
 * exists. Returns 0 or -errno with the reason in err; *path says which
 * file was read (NULL: none).
 */
static int config_build(const struct options *o, struct config *c,
			const char **path, char *err, size_t errlen)
{
	config_defaults(c);
	*path = NULL;
	if (!o->no_config) {
		const char *p =
			o->config_path ? o->config_path : CONFIG_DEFAULT_PATH;
		int rc = config_load(c, p, err, errlen);
		if (rc == -ENOENT && !o->config_path)
			rc = 0; /* no default file: defaults it is */
		else if (!rc)
			*path = p;
		if (rc)
			return rc;
	}
	config_merge(c, &o->cli);
	if (config_resolve(c)) {
		snprintf(err, errlen, "default socket path too long");
		return -ENAMETOOLONG;
	}
	return 0;
}

/* The running configuration and the one a reload builds; main owns both,
 * config_active() points at one of them. */
static struct config cfg_slots[2];
static struct options opts;

static void on_reload(evutil_socket_t sig, short what, void *arg)
{
	const struct config *cur = config_active();
	struct config *next =
		cur == &cfg_slots[0] ? &cfg_slots[1] : &cfg_slots[0];
	char err[CONFIG_ERR_MAX];
	const char *path;
	sdn_notify("RELOADING=1");
	if (config_build(&opts, next, &path, err, sizeof(err))) {
		log_err("reload: %s; keeping the running configuration", err);
		sdn_notifyf("READY=1\nSTATUS=reload failed: %s", err);
		return;
	}
	unsigned changed = config_reload(cur, next);
	log_info("reloaded %s: %u setting(s) changed",
		 path ? path : "(no file)", changed);
	sdn_notifyf("READY=1\nSTATUS=serving %s, configuration reloaded",
		    ctl_socket_path());
}

/*
 * Every client connection, queue memfd and doorbell is an fd: at the
 * bounds (bounds.h) that is more than the usual soft limit of 1024, and a
 * daemon out of fds cannot even accept a connection to refuse it. Raise
 * the soft limit to the hard one.
 */
static void raise_fd_limit(void)
{
	const rlim_t need = MAX_CLIENTS + 2 * MAX_QUEUES + 64 + 4 * MAX_WORKERS;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < need)
		log_warn("open files limit %llu is below the %llu the daemon's "
			 "bounds can use (LimitNOFILE=)",
			 (unsigned long long)rl.rlim_cur,
			 (unsigned long long)need);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct event_base *base = arg;
	log_info("signal %d: shutting down", (int)sig);
	event_base_loopbreak(base);
}

/* A broken configuration only an edit fixes: EX_CONFIG of sysexits(3), so
 * the unit's RestartPreventExitStatus= does not retry it. */
enum { EXIT_CONFIG = 78 };

/* Before log_init(): at error priority in the journal too (journald reads
 * a "<3>" prefix), so "journalctl -p warning" shows the reason. */
static void config_error(const char *why)
{
	fprintf(stderr, "%scryptod: %s\n", log_stderr_is_journal() ? "<3>" : "",
		why);
}

/* libcrypto's allocator, with every block wiped before it is freed (or
 * moved by a realloc): OpenSSL's own temporaries hold key bytes too
 * (Montgomery copies of an RSA key's primes, decoders' buffers, BN_CTX
 * pools), and freed memory keeps them until it is reused (ASan's
 * quarantine showed copies of deleted key pairs' primes). The secure
 * heap, for the keys' own numbers, wipes its blocks already. */
static void *ossl_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return malloc(n);
}

static void ossl_wipe_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	if (p) {
		explicit_bzero(p, malloc_usable_size(p));
		free(p);
	}
}

static void *ossl_realloc(void *p, size_t n, const char *file, int line)
{
	if (!p)
		return ossl_malloc(n, file, line);
	if (!n) {
		ossl_wipe_free(p, file, line);
		return NULL;
	}
	size_t old = malloc_usable_size(p);
	void *q = malloc(n);
	if (!q)
		return NULL; /* p stays, as realloc's */
	memcpy(q, p, old < n ? old : n);
	ossl_wipe_free(p, file, line);
	return q;
}

int main(int argc, char **argv)
{
	/* Before OpenSSL's first allocation, or it refuses. */
	int ossl_wipes = CRYPTO_set_mem_functions(ossl_malloc, ossl_realloc,
						  ossl_wipe_free);
	/* The daemon's OpenSSL must never route back to the daemon: an
	 * openssl.cnf ($OPENSSL_CONF, or the system's) that prefers cryptod's
	 * provider would send its own engines' work to itself (aesni found
	 * "OpenSSL lacks CCM, HMAC or CMAC" and ops hung). It runs on
	 * OpenSSL's default provider, whatever the configuration says. */
	OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
	int rc = parse_args(argc, argv, &opts);
	if (rc)
		return rc;
	if (!ossl_wipes)
		log_warn(
			"OpenSSL's allocator is not cryptod's: blocks it frees "
			"are not wiped first");
	struct config *cfg = &cfg_slots[0];
	char why[CONFIG_ERR_MAX];
	const char *path;
	rc = config_build(&opts, cfg, &path, why, sizeof(why));
	if (opts.check) {
		if (rc) {
			config_error(why);
			return 1;
		}
		printf("%s: configuration OK\n", path ? path : "(no file)");
		return 0;
	}
	if (rc) {
		config_error(why);
		return EXIT_CONFIG;
	}
	log_init(cfg->log_level);
	config_set_active(cfg);
	config_apply_live(cfg);
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	log_info("configuration: %s", path ? path : "built-in defaults");
	int bound = 0;
	rc = priv_start(opts.user, cfg, &bound);
	rc = rc == -EINVAL ? EXIT_CONFIG : rc ? 1 : 0;
	/* Started as a system user (runuser -u cryptod): the default path is
	 * a per-user one that clients of the system service never try. */
	if (!rc && geteuid() != 0 && !config_is_set(cfg, CK_SOCKET) &&
	    !getenv("CRYPTOD_SOCKET") && !getenv("LISTEN_FDS") &&
	    !strncmp(cfg->socket, "/tmp/cryptod-", 13))
		log_warn("serving the per-user path %s: clients of the system "
			 "service look for /run/cryptod/cryptod.sock; start "
			 "cryptod as root with --user (cryptod(8), WITHOUT "
			 "SYSTEMD)",
			 cfg->socket);
	if (rc) {
		if (bound) /* still root: the drop failed */
			unlink(cfg->socket);
		return rc;
	}

	struct worker_config wc = {
		.n = cfg->workers,
		.busy_poll = cfg->busy_poll,
		.spin_us = cfg->spin_us,
		.pin = cfg->pin,
	};
	/* kernel.pcrypt and kernel.pcrypt_algs, for the kernel-pcrypt probe */
	engine_kernel_configure(cfg->pcrypt == CONFIG_PCRYPT_OFF ? KPCRYPT_OFF
				: cfg->pcrypt == CONFIG_PCRYPT_CREATE
					? KPCRYPT_CREATE
					: KPCRYPT_AUTO,
				cfg->pcrypt_algs);
	if (engine_probe_all() <= 0) {
		log_err("no crypto engine available");
		return 1;
	}
	int fail_code = 1;
	int err = ks_init(MAX_SESSIONS);
	if (err) {
		log_err("key store: %s", strerror(-err));
		goto out_engines;
	}
	if (cfg->keys.require_mlock && !ks_locked()) {
		log_err("key memory cannot be locked in RAM and "
			"keys.require_mlock = yes (raise RLIMIT_MEMLOCK, "
			"LimitMEMLOCK= in the unit)");
		err = -ENOMEM;
		goto out_keystore;
	}
	/* Key pairs' private numbers in locked memory (bounds.h), before
	 * any key is parsed (named keys, sessions). Without it OpenSSL
	 * allocates them from the plain heap: still wiped on free, but
	 * swappable, so a warning rather than a failure. */
	switch (CRYPTO_secure_malloc_init((size_t)SECURE_HEAP_MIB << 20,
					  SECURE_HEAP_MIN)) {
	case 1:
		break;
	case 2:
		log_warn("OpenSSL secure heap not locked in RAM: key pairs' "
			 "private numbers may be swapped (raise "
			 "RLIMIT_MEMLOCK)");
		break;
	default:
		log_warn("no OpenSSL secure heap: key pairs' private numbers "
			 "are in ordinary memory");
		break;
	}
	err = keyreq_start(cfg); /* named keys: logs its own errors */
	if (err) {
		/* A missing or unreadable KEK, a key directory of the wrong
		 * owner or mode: the configuration's to fix, so not retried
		 * (RestartPreventExitStatus=78 in the unit). */
		if (err != -ENOMEM)
			fail_code = EXIT_CONFIG;
		goto out_keystore;
	}
	err = fdreap_start();
	if (err) {
		log_err("fd reaper: %s", strerror(-err));
		goto out_keystore;
	}
	err = workers_start(&wc);
	if (err) {
		log_err("workers: %s", strerror(-err));
		goto out_keystore;
	}

	struct event_base *base = event_base_new();
	if (!base) {
		err = -ENOMEM;
		goto out_workers;
	}
	stats_init();
	err = grace_start(base);
	if (err) {
		log_err("grace periods: %s", strerror(-err));
		goto out_base;
	}
	err = ctl_start(base, cfg->socket, cfg->socket_mode);
	if (err) {
		log_err("cannot listen on %s: %s%s", cfg->socket,
			strerror(-err),
			err == -EADDRINUSE ? " (another cryptod is serving it)"
					   : "");
		goto out_base;
	}
	struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	struct event *sigint = evsignal_new(base, SIGINT, on_signal, base);
	struct event *sighup = evsignal_new(base, SIGHUP, on_reload, NULL);
	if (cfg->has_socket_group && !bound &&
	    (err = ctl_set_group(cfg->socket_group))) {
		log_err("socket_group %u: %s", (unsigned)cfg->socket_group,
			strerror(-err));
		goto out_signals;
	}
	if (!sigterm || !sigint || !sighup || event_add(sigterm, NULL) ||
	    event_add(sigint, NULL) || event_add(sighup, NULL)) {
		err = -ENOMEM;
		goto out_signals;
	}

	log_info(
		"cryptod %s listening on %s with %u worker(s), %s polling%s, key store %s",
		CRYPTOD_VERSION, ctl_socket_path(), workers_count(),
		workers_poll_mode(),
		workers_sq_membarrier() ? ""
					: " (no membarrier: clients fence)",
		ks_locked() ? "locked in RAM" : "NOT locked");
	err = sdn_ready(base, ctl_status); /* no-op without systemd */
	if (err)
		goto out_signals;
	event_base_dispatch(base);
	sdn_stopping("stopping: finishing submitted work, wiping keys");

	/* Teardown in reverse: stop accepting, let workers finish what was
	 * submitted, then drop every client (keys wiped, regions unmapped). */
	ctl_stop_listening();
	workers_stop();
	ctl_close_all();
	grace_stop(); /* what waited for the workers: freed now */
	err = 0;
	log_info("stopped");

out_signals:
	if (sigterm)
		event_free(sigterm);
	if (sigint)
		event_free(sigint);
	if (sighup)
		event_free(sighup);
	if (err)
		ctl_stop_listening();
out_base:
	workers_stop();
	grace_stop();
	event_base_free(base);
out_workers:
	workers_stop();
	workers_destroy();
out_keystore:
	fdreap_stop();
	keyreq_stop(); /* every named key wiped */
	ks_fini();
out_engines:
	engine_fini_all();
	return err ? fail_code : 0;
}
