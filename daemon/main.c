/* SPDX-License-Identifier: MIT */
/*
 * cryptod: straight-line set-up (engines, key store, workers, listener,
 * signals), dispatch, teardown in reverse.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "ctl.h"
#include "engine.h"
#include "keystore.h"
#include "bounds.h"
#include "log.h"
#include "sdnotify.h"
#include "worker.h"
#include "wire.h"

#ifndef CRYPTOD_VERSION
#define CRYPTOD_VERSION "0"
#endif

struct options {
	char socket[108];
	struct worker_config wc;
	mode_t mode;
	enum log_level level;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cryptod [OPTIONS]\n"
		"Crypto offload daemon: serves encrypt/decrypt batches to local\n"
		"processes over a Unix socket and shared-memory rings.\n"
		"\n"
		"  -s, --socket PATH      control socket (default: $CRYPTOD_SOCKET, else\n"
		"                         /run/cryptod/cryptod.sock as root, else\n"
		"                         $XDG_RUNTIME_DIR/cryptod.sock or\n"
		"                         /tmp/cryptod-$UID/cryptod.sock)\n"
		"  -m, --socket-mode MODE octal permissions of the socket (default 0660)\n"
		"  -w, --workers N        worker threads, 1..%d (default: online CPUs);\n"
		"                         every worker serves every queue\n"
		"  -p, --poll-mode MODE   adaptive (default): busy-poll while work flows,\n"
		"                         sleep when idle; busy: never sleep (lowest\n"
		"                         latency, a whole core per worker)\n"
		"      --spin-us N        adaptive: busy-poll N us before sleeping\n"
		"                         (default %d)\n"
		"      --pin              pin worker i to online CPU i\n"
		"  -l, --log-level LEVEL  error, warn, info or debug (default info)\n"
		"  -h, --help             this text\n"
		"  -V, --version          print the version\n"
		"\n"
		"Runs in the foreground and logs to stderr. SIGTERM or SIGINT stops\n"
		"accepting clients, completes submitted work, wipes keys and exits 0.\n"
		"Under systemd it reports readiness and pings the watchdog\n"
		"($NOTIFY_SOCKET, $WATCHDOG_USEC), and serves a socket passed by\n"
		"socket activation ($LISTEN_FDS) instead of --socket. See cryptod(8).\n",
		MAX_WORKERS, WORKER_SPIN_US);
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "socket-mode", required_argument, NULL, 'm' },
		{ "workers", required_argument, NULL, 'w' },
		{ "poll-mode", required_argument, NULL, 'p' },
		{ "spin-us", required_argument, NULL, 'S' },
		{ "pin", no_argument, NULL, 'P' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	o->wc.n = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : cpus;
	o->wc.spin_us = WORKER_SPIN_US;
	o->mode = 0660;
	o->level = LOG_INFO_;
	if (wire_default_socket_path(o->socket, sizeof(o->socket)))
		o->socket[0] = '\0';

	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "s:m:w:p:l:hV", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 's':
			if (strlen(optarg) >= sizeof(o->socket)) {
				fprintf(stderr,
					"cryptod: socket path too long\n");
				return 2;
			}
			snprintf(o->socket, sizeof(o->socket), "%s", optarg);
			break;
		case 'm':
			o->mode = strtoul(optarg, &end, 8);
			if (*end || o->mode > 0777) {
				fprintf(stderr,
					"cryptod: bad socket mode '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'w': {
			unsigned long n = strtoul(optarg, &end, 10);
			if (*end || n < 1 || n > MAX_WORKERS) {
				fprintf(stderr,
					"cryptod: workers must be 1..%d\n",
					MAX_WORKERS);
				return 2;
			}
			o->wc.n = n;
			break;
		}
		case 'p':
			if (!strcmp(optarg, "busy")) {
				o->wc.busy_poll = 1;
			} else if (!strcmp(optarg, "adaptive")) {
				o->wc.busy_poll = 0;
			} else {
				fprintf(stderr,
					"cryptod: poll mode must be adaptive or busy\n");
				return 2;
			}
			break;
		case 'S': {
			unsigned long us = strtoul(optarg, &end, 10);
			if (*end || !*optarg || us > 1000000) {
				fprintf(stderr,
					"cryptod: spin-us must be 0..1000000\n");
				return 2;
			}
			o->wc.spin_us = us;
			break;
		}
		case 'P':
			o->wc.pin = 1;
			break;
		case 'l':
			if (log_parse_level(optarg, &o->level)) {
				fprintf(stderr, "cryptod: bad log level '%s'\n",
					optarg);
				return 2;
			}
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
	if (optind < argc) {
		fprintf(stderr, "cryptod: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (!o->socket[0]) {
		fprintf(stderr, "cryptod: default socket path too long\n");
		return 2;
	}
	return 0;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct event_base *base = arg;
	log_info("signal %d: shutting down", (int)sig);
	event_base_loopbreak(base);
}

int main(int argc, char **argv)
{
	struct options o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	log_init(o.level);
	signal(SIGPIPE, SIG_IGN);

	if (engine_probe_all() <= 0) {
		log_err("no crypto engine available");
		return 1;
	}
	int err = ks_init(MAX_SESSIONS);
	if (err) {
		log_err("key store: %s", strerror(-err));
		goto out_engines;
	}
	err = workers_start(&o.wc);
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
	err = ctl_start(base, o.socket, o.mode);
	if (err) {
		log_err("cannot listen on %s: %s%s", o.socket, strerror(-err),
			err == -EADDRINUSE ? " (another cryptod is serving it)"
					   : "");
		goto out_base;
	}
	struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	struct event *sigint = evsignal_new(base, SIGINT, on_signal, base);
	if (!sigterm || !sigint || event_add(sigterm, NULL) ||
	    event_add(sigint, NULL)) {
		err = -ENOMEM;
		goto out_signals;
	}

	log_info(
		"cryptod %s listening on %s with %u worker(s), %s polling, key store %s",
		CRYPTOD_VERSION, ctl_socket_path(), workers_count(),
		workers_poll_mode(),
		ks_locked() ? "locked in RAM" : "NOT locked");
	char status[160];
	snprintf(status, sizeof(status), "serving %s with %u worker(s)",
		 ctl_socket_path(), workers_count());
	err = sdn_ready(base, status); /* no-op without systemd */
	if (err)
		goto out_signals;
	event_base_dispatch(base);
	sdn_stopping("stopping: finishing submitted work, wiping keys");

	/* Teardown in reverse: stop accepting, let workers finish what was
	 * submitted, then drop every client (keys wiped, regions unmapped). */
	ctl_stop_listening();
	workers_stop();
	ctl_close_all();
	err = 0;
	log_info("stopped");

out_signals:
	if (sigterm)
		event_free(sigterm);
	if (sigint)
		event_free(sigint);
	if (err)
		ctl_stop_listening();
out_base:
	event_base_free(base);
out_workers:
	workers_stop();
	workers_destroy();
out_keystore:
	ks_fini();
out_engines:
	engine_fini_all();
	return err ? 1 : 0;
}
