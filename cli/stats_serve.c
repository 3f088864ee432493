/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl stats --serve: a Prometheus exporter. GET /metrics answers
 * with the text 'stats --prometheus' prints (stats_prom.c, the one
 * formatter), taken from the daemon at that moment over a connection of
 * its own; 503 and cryptod_up 0 when the daemon does not answer.
 *
 * Why a process beside the daemon and not an HTTP endpoint in it: cryptod
 * holds keys and its control thread must never wait on a client; an HTTP
 * parser there is one more thing a network peer can reach in the process
 * that holds them. Here the worst a scraper can do is wedge an exporter
 * that holds nothing.
 *
 * One thread, one poll() loop: a connection that sends nothing, or sends
 * slowly, holds one of SERVE_CONNS_MAX slots until its SERVE_TIMEOUT_MS
 * deadline (to send its request, then again to take the answer) and
 * never delays another one. A request is its request line
 * and headers, at most SERVE_REQ_MAX bytes (431 beyond); every answer
 * closes its connection (Connection: close), after which the rest of what
 * the client sent is read and dropped (DRAIN) so that the close does not
 * reset the answer away. The one wait is the daemon's reply to a scrape,
 * which the library bounds by CRD_WAIT_MAX_MS.
 *
 * Listens on [ADDR:]PORT (loopback unless an address is given), or on the
 * sockets systemd passes (LISTEN_FDS: cryptod-metrics.socket).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cryptod/clock.h>

#include "cli.h"
#include "stats_view.h"

#define SERVE_DEFAULT_HOST "127.0.0.1"
#define SERVE_DEFAULT_PORT "9464"
#define PROM_CTYPE "text/plain; version=0.0.4; charset=utf-8"

enum serve_state { CONN_FREE, CONN_READ, CONN_WRITE, CONN_DRAIN };

struct serve_conn {
	enum serve_state state;
	int fd;
	uint64_t deadline_ms;
	size_t in_len;
	char in[SERVE_REQ_MAX + 1];
	char *out; /* owned: the whole answer, head and body */
	size_t out_len, out_off;
};

struct serve {
	struct cli *cli;
	int lfd[SERVE_LISTEN_MAX];
	unsigned n_lfd;
	uint64_t accept_after_ms; /* out of descriptors: pause accepting */
	int up;			  /* the daemon answered the last scrape */
	int told_view;		  /* said that we see only our connection */
	struct serve_conn conn[SERVE_CONNS_MAX];
};

static volatile sig_atomic_t serve_stop;

static void serve_on_signal(int sig)
{
	(void)sig;
	serve_stop = 1;
}

/*
 * "PORT", "ADDR:PORT", ":PORT" (every IPv4 address) or "[ADDR6]:PORT"
 * into host (NULL for every address) and port. 0 or -EINVAL.
 */
static int serve_split(const char *arg, char *host, size_t hl,
		       const char **hostp, const char **port)
{
	const char *colon = strrchr(arg, ':');
	const char *p;
	size_t n;
	char *end;
	unsigned long v;

	if (!colon) {
		*hostp = SERVE_DEFAULT_HOST;
		*port = arg;
	} else if (arg[0] == '[') {
		if (colon == arg || colon[-1] != ']')
			return -EINVAL;
		n = (size_t)(colon - 1 - (arg + 1));
		if (!n || n >= hl)
			return -EINVAL;
		memcpy(host, arg + 1, n);
		host[n] = '\0';
		*hostp = host;
		*port = colon + 1;
	} else {
		n = (size_t)(colon - arg);
		if (memchr(arg, ':', n) || n >= hl)
			return -EINVAL; /* an IPv6 address wants brackets */
		memcpy(host, arg, n);
		host[n] = '\0';
		*hostp = n ? host : "0.0.0.0";
		*port = colon + 1;
	}
	for (p = *port; *p; p++)
		if (*p < '0' || *p > '9')
			return -EINVAL;
	errno = 0;
	v = strtoul(*port, &end, 10);
	if (errno || end == *port || v > 65535)
		return -EINVAL;
	return 0;
}

/* Bind and listen on host:port: the descriptor, or -errno (reported). */
static int serve_bind(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai, *a;
	int fd = -1, one = 1, err = -EADDRNOTAVAIL, r;

	r = getaddrinfo(host, port, &hints, &ai);
	if (r) {
		cli_err("stats: --serve %s: %s", host, gai_strerror(r));
		return -EINVAL;
	}
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family,
			    a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				 sizeof(one));
		if (!bind(fd, a->ai_addr, a->ai_addrlen) &&
		    !listen(fd, SOMAXCONN))
			break;
		err = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		cli_err("stats: --serve: cannot listen on %s port %s: %s", host,
			port, strerror(-err));
	return fd < 0 ? err : fd;
}

/*
 * The listening sockets systemd passed (sd_listen_fds(3): LISTEN_PID is
 * ours, LISTEN_FDS of them from descriptor 3): their number, 0 when none
 * were passed, or -EINVAL (reported) when they are not listening stream
 * sockets or too many.
 */
static int serve_inherited(struct serve *sv)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	long n;
	char *end;

	if (!pid || !fds || strtol(pid, &end, 10) != (long)getpid() || *end)
		return 0;
	n = strtol(fds, &end, 10);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (*end || n < 1 || n > SERVE_LISTEN_MAX) {
		cli_err("stats: --serve: LISTEN_FDS=%s: 1 to %u sockets", fds,
			SERVE_LISTEN_MAX);
		return -EINVAL;
	}
	for (int fd = 3; fd < 3 + n; fd++) {
		int acc = 0, type = 0;
		socklen_t l = sizeof(acc), lt = sizeof(type);

		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) ||
		    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &lt) || !acc ||
		    type != SOCK_STREAM) {
			cli_err("stats: --serve: descriptor %d from systemd is "
				"not a listening stream socket (Accept=no, "
				"ListenStream=)",
				fd);
			return -EINVAL;
		}
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		sv->lfd[sv->n_lfd++] = fd;
	}
	return (int)n;
}

/* "ADDR:PORT" of a listening socket, for the start-up line. */
static void serve_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char h[NI_MAXHOST], p[NI_MAXSERV];

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), p, sizeof(p),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(buf, len, "descriptor %d", fd);
		return;
	}
	snprintf(buf, len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h,
		 p);
}

static void conn_close(struct serve_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->out);
	c->out = NULL;
	c->state = CONN_FREE;
}

/* Queue an answer: the head, then body (none for HEAD). Out of memory,
 * the connection is closed without one. */
static void conn_answer(struct serve_conn *c, int head_only, const char *status,
			const char *ctype, const char *extra, const char *body,
			size_t body_len)
{
	char *h = NULL;
	int hl;

	hl = asprintf(&h,
		      "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
		      "Content-Length: %zu\r\n%sConnection: close\r\n\r\n",
		      status, ctype, body_len, extra ? extra : "");
	if (hl < 0) {
		conn_close(c);
		return;
	}
	c->out_len = (size_t)hl + (head_only ? 0 : body_len);
	c->out = malloc(c->out_len);
	if (!c->out) {
		free(h);
		conn_close(c);
		return;
	}
	memcpy(c->out, h, (size_t)hl);
	if (!head_only)
		memcpy(c->out + hl, body, body_len);
	free(h);
	c->out_off = 0;
	c->state = CONN_WRITE;
	/* The time to take the answer counts from now: a scrape that waited
	 * on the daemon does not eat into it. */
	c->deadline_ms = crd_now_ms() + SERVE_TIMEOUT_MS;
}

static void conn_text(struct serve_conn *c, int head_only, const char *status,
		      const char *extra, const char *text)
{
	conn_answer(c, head_only, status, "text/plain; charset=utf-8", extra,
		    text, strlen(text));
}

/*
 * The daemon's figures now, into f: 0, or -errno with why (naming the
 * socket). A connection per scrape: a restarted daemon is found again
 * without any state to go stale.
 */
static int serve_scrape(struct serve *sv, FILE *f, char *why, size_t wl)
{
	struct cc_conn *conn;
	struct stats_snap snap;
	int ret;

	ret = cli_connect_quiet(sv->cli, &conn);
	if (ret < 0) {
		snprintf(why, wl, "cannot connect to %s: %s", sv->cli->path,
			 cc_strerror(ret));
		return ret;
	}
	ret = stats_snap_take(conn, &snap);
	cc_disconnect(conn);
	if (ret < 0) {
		snprintf(why, wl, "%s: %s", sv->cli->path, cli_strerror(ret));
		return ret;
	}
	/* Workers but no worker rows: the daemon shows this user only its
	 * own connection. Served as it is, but an operator looking at
	 * zeros should know why, once. */
	if (snap.st.workers && !snap.st.n_workers_stats && !sv->told_view) {
		cli_err("stats --serve: cryptod shows uid %u only its own "
			"connection's figures: run the exporter as root or as "
			"cryptod's user to see the whole daemon",
			(unsigned)getuid());
		sv->told_view = 1;
	}
	stats_print_prom(f, &snap);
	stats_snap_free(&snap);
	return 0;
}

/* GET /metrics: 200 with the metrics, or 503 with the reason as a comment
 * and cryptod_up 0 (Prometheus records the target down; a person with
 * curl reads why). The log says when the daemon goes and comes back, not
 * at every scrape. */
static void serve_metrics(struct serve *sv, struct serve_conn *c, int head_only)
{
	char why[CLI_PATH_MAX + 128];
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	int ret;

	if (!f) {
		conn_close(c);
		return;
	}
	ret = serve_scrape(sv, f, why, sizeof(why));
	if (ret < 0) {
		fprintf(f, "# cryptod did not answer: %s\n", why);
		stats_print_prom_down(f);
	}
	if (fclose(f)) {
		free(body);
		conn_close(c);
		return;
	}
	if (ret < 0 && sv->up)
		cli_err("stats --serve: cryptod did not answer (%s): answering "
			"503 until it does",
			why);
	else if (!ret && !sv->up)
		cli_err("stats --serve: cryptod answers at %s", sv->cli->path);
	sv->up = !ret;
	conn_answer(c, head_only, ret ? "503 Service Unavailable" : "200 OK",
		    PROM_CTYPE, NULL, body, len);
	free(body);
}

static const char serve_index[] =
	"<html><head><title>cryptod exporter</title></head><body>\n"
	"<h1>cryptod exporter</h1>\n"
	"<p><a href=\"/metrics\">/metrics</a>: cryptod's counters in the "
	"Prometheus text format (cryptoctl stats --serve; every metric is in "
	"cryptoctl(1) and docs/observability.md).</p>\n"
	"</body></html>\n";

/* A whole request head is in c->in: answer it. */
static void serve_request(struct serve *sv, struct serve_conn *c)
{
	char *line = c->in, *target, *version, *q;
	int head_only;

	line[strcspn(line, "\r\n")] = '\0';
	target = strchr(line, ' ');
	version = target ? strchr(target + 1, ' ') : NULL;
	if (!version || strncmp(version + 1, "HTTP/1.", 7) ||
	    strlen(version + 1) != 8) {
		conn_text(c, 0, "400 Bad Request", NULL,
			  "400 bad request: GET /metrics HTTP/1.1 expected\n");
		return;
	}
	*target++ = '\0';
	*version = '\0';
	head_only = !strcmp(line, "HEAD");
	if (!head_only && strcmp(line, "GET")) {
		conn_text(c, 0, "405 Method Not Allowed",
			  "Allow: GET, HEAD\r\n",
			  "405 method not allowed: GET or HEAD\n");
		return;
	}
	q = strchr(target, '?');
	if (q)
		*q = '\0';
	if (!strcmp(target, "/metrics"))
		serve_metrics(sv, c, head_only);
	else if (!strcmp(target, "/"))
		conn_answer(c, head_only, "200 OK", "text/html; charset=utf-8",
			    NULL, serve_index, sizeof(serve_index) - 1);
	else
		conn_text(c, head_only, "404 Not Found", NULL,
			  "404 not found: the metrics are at /metrics\n");
}

/* The end of a request head: a blank line. */
static int head_complete(const struct serve_conn *c)
{
	return strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n");
}

static void conn_read(struct serve *sv, struct serve_conn *c)
{
	ssize_t n =
		recv(c->fd, c->in + c->in_len, SERVE_REQ_MAX - c->in_len, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->in_len += (size_t)n;
	c->in[c->in_len] = '\0';
	if (memchr(c->in, '\0', c->in_len))
		conn_text(c, 0, "400 Bad Request", NULL,
			  "400 bad request: a NUL byte\n");
	else if (head_complete(c))
		serve_request(sv, c);
	else if (c->in_len == SERVE_REQ_MAX)
		conn_text(c, 0, "431 Request Header Fields Too Large", NULL,
			  "431 request too large\n");
}

static void conn_write(struct serve_conn *c, uint64_t now)
{
	ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		conn_close(c);
		return;
	}
	c->out_off += (size_t)n;
	if (c->out_off < c->out_len)
		return;
	/* All written: say so, then read what the client still sends until
	 * it closes, so that our close does not reset the answer away. */
	free(c->out);
	c->out = NULL;
	(void)shutdown(c->fd, SHUT_WR);
	c->state = CONN_DRAIN;
	if (c->deadline_ms > now + SERVE_DRAIN_MS)
		c->deadline_ms = now + SERVE_DRAIN_MS;
}

static void conn_drain(struct serve_conn *c)
{
	char sink[512];
	ssize_t n = recv(c->fd, sink, sizeof(sink), 0);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		conn_close(c);
}

static void serve_accept(struct serve *sv, int lfd, uint64_t now)
{
	for (unsigned i = 0; i < SERVE_CONNS_MAX; i++) {
		struct serve_conn *c = &sv->conn[i];
		int fd;

		if (c->state != CONN_FREE)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			/* Out of descriptors the listener stays readable:
			 * wait a little instead of spinning on it. */
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				sv->accept_after_ms = now + 100;
			return;
		}
		c->fd = fd;
		c->state = CONN_READ;
		c->in_len = 0;
		c->in[0] = '\0';
		c->deadline_ms = now + SERVE_TIMEOUT_MS;
	}
}

/* One round of the loop: wait for the next event or deadline, act.
 * SIGTERM and SIGINT are blocked but while waiting (waitmask), so that
 * one arriving between the caller's look at serve_stop and the wait
 * ends the wait instead of waiting for the next client. */
static void serve_round(struct serve *sv, const sigset_t *waitmask)
{
	struct pollfd p[SERVE_LISTEN_MAX + SERVE_CONNS_MAX];
	struct serve_conn *pc[SERVE_LISTEN_MAX + SERVE_CONNS_MAX];
	unsigned n = 0, nl = 0, busy = 0;
	uint64_t now = crd_now_ms(), next = UINT64_MAX;
	struct timespec ts, *tsp = NULL;

	for (unsigned i = 0; i < SERVE_CONNS_MAX; i++) {
		struct serve_conn *c = &sv->conn[i];

		if (c->state == CONN_FREE)
			continue;
		busy++;
		if (c->deadline_ms < next)
			next = c->deadline_ms;
		p[n] = (struct pollfd){
			.fd = c->fd,
			.events = c->state == CONN_WRITE ? POLLOUT : POLLIN,
		};
		pc[n++] = c;
	}
	/* With every slot taken, new clients wait in the backlog. */
	if (busy < SERVE_CONNS_MAX && now >= sv->accept_after_ms) {
		for (unsigned i = 0; i < sv->n_lfd; i++)
			p[n + nl++] = (struct pollfd){ .fd = sv->lfd[i],
						       .events = POLLIN };
	} else if (busy < SERVE_CONNS_MAX && sv->accept_after_ms < next) {
		next = sv->accept_after_ms;
	}
	if (next != UINT64_MAX) {
		uint64_t ms = next > now ? next - now : 0;

		ts = (struct timespec){ .tv_sec = (time_t)(ms / 1000),
					.tv_nsec =
						(long)(ms % 1000) * 1000000 };
		tsp = &ts;
	}
	if (ppoll(p, n + nl, tsp, waitmask) < 0)
		return; /* EINTR: the caller looks at serve_stop */
	now = crd_now_ms();
	for (unsigned i = 0; i < n; i++) {
		struct serve_conn *c = pc[i];

		if (p[i].revents & (POLLERR | POLLNVAL)) {
			conn_close(c);
			continue;
		}
		if (p[i].revents) {
			if (c->state == CONN_READ)
				conn_read(sv, c);
			if (c->state == CONN_WRITE)
				conn_write(c, now);
			else if (c->state == CONN_DRAIN)
				conn_drain(c);
		}
		/* A slow or silent client gets no more than its time. */
		if (c->state != CONN_FREE && now >= c->deadline_ms)
			conn_close(c);
	}
	for (unsigned i = 0; i < nl; i++)
		if (p[n + i].revents & POLLIN)
			serve_accept(sv, p[n + i].fd, now);
}

int stats_serve(struct cli *cli, const char *listen_on)
{
	char host[CLI_PATH_MAX], name[NI_MAXHOST + NI_MAXSERV + 4];
	const char *hostp, *port;
	struct sigaction sa = { .sa_handler = serve_on_signal };
	sigset_t stop, waitmask;
	struct serve *sv;
	int ret, fd;

	sv = calloc(1, sizeof(*sv));
	if (!sv) {
		cli_err("stats: %s", strerror(ENOMEM));
		return CLI_EXIT_FAIL;
	}
	sv->cli = cli;
	sv->up = 1;
	for (unsigned i = 0; i < SERVE_CONNS_MAX; i++)
		sv->conn[i].fd = -1;

	ret = serve_inherited(sv);
	if (ret > 0 && listen_on) {
		cli_usage_err("stats",
			      "--serve %s: systemd passed the sockets "
			      "to listen on (LISTEN_FDS)",
			      listen_on);
		ret = -EINVAL;
	}
	if (ret < 0) {
		free(sv);
		return CLI_EXIT_USAGE;
	}
	if (!ret) {
		if (!listen_on)
			listen_on = SERVE_DEFAULT_PORT;
		if (serve_split(listen_on, host, sizeof(host), &hostp, &port)) {
			cli_usage_err("stats",
				      "--serve wants [ADDR:]PORT, not '%s'",
				      listen_on);
			free(sv);
			return CLI_EXIT_USAGE;
		}
		fd = serve_bind(hostp, port);
		if (fd < 0) {
			free(sv);
			return fd == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
		}
		sv->lfd[sv->n_lfd++] = fd;
	}

	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, &waitmask);
	for (unsigned i = 0; i < sv->n_lfd; i++) {
		serve_name(sv->lfd[i], name, sizeof(name));
		printf("cryptoctl stats --serve: http://%s/metrics\n", name);
	}
	fflush(stdout);

	while (!serve_stop)
		serve_round(sv, &waitmask);

	for (unsigned i = 0; i < SERVE_CONNS_MAX; i++)
		conn_close(&sv->conn[i]);
	for (unsigned i = 0; i < sv->n_lfd; i++)
		close(sv->lfd[i]);
	free(sv);
	return CLI_EXIT_OK;
}
