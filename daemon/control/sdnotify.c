/* SPDX-License-Identifier: MIT */
/*
 * sd_notify and socket activation, spoken directly: each is a handful of
 * environment variables and one datagram, not worth a libsystemd
 * dependency. The formats are systemd's (sd_notify(3), sd_listen_fds(3)).
 */
#include "sdnotify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>

#include "decimal.h"
#include "log.h"

int sdn_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	if (!path || !*path)
		return 0;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract: no terminating NUL */
	socklen_t salen = offsetof(struct sockaddr_un, sun_path) + len;
	if (path[0] == '/')
		salen++;

	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Datagram: all of it or nothing; the manager reads our pid from
	 * the credentials it asks the kernel to attach. */
	ssize_t n = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
			   (struct sockaddr *)&sa, salen);
	int err = n < 0 ? -errno : 1;
	close(fd);
	return err;
}

int sdn_notifyf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EMSGSIZE;
	return sdn_notify(buf);
}

/* 1 when $LISTEN_PID / $WATCHDOG_PID (if set) names this process. */
static int sdn_pid_is_us(const char *var, int required)
{
	const char *s = getenv(var);
	uint64_t pid;
	if (!s)
		return !required;
	return dec_parse_all(s, INT32_MAX, &pid) == 0 && (pid_t)pid == getpid();
}

int sdn_watchdog_usec(uint64_t *usec)
{
	const char *s = getenv("WATCHDOG_USEC");
	if (!s)
		return 0;
	if (!sdn_pid_is_us("WATCHDOG_PID", 0))
		return 0;
	uint64_t v;
	if (dec_parse_all(s, UINT64_MAX, &v) || v == 0)
		return -EINVAL;
	*usec = v;
	return 1;
}

static void sdn_unset_listen_env(void)
{
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

/* 0 when fd is a listening AF_UNIX SOCK_SEQPACKET socket. */
static int sdn_check_listener(int fd)
{
	int v;
	socklen_t len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0)
		return errno == ENOTSOCK ? -EPROTOTYPE : -errno;
	if (v != SOCK_SEQPACKET)
		return -EPROTOTYPE;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0 || v != AF_UNIX)
		return -EPROTOTYPE;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0 || !v)
		return -EPROTOTYPE;
	return 0;
}

int sdn_listen_fd(char *name, size_t name_len)
{
	if (name_len)
		name[0] = '\0';
	const char *fds = getenv("LISTEN_FDS");
	int ours = sdn_pid_is_us("LISTEN_PID", 1);
	uint64_t n = 0;
	int err = 0;
	if (!fds || !ours)
		err = -ENOENT;
	else if (dec_parse_all(fds, 1024, &n))
		err = -EINVAL;
	else if (n == 0)
		err = -ENOENT;
	else if (n > 1)
		err = -E2BIG;
	if (!err) {
		/* "name1:name2:..."; we take one fd, so the first name. */
		const char *names = getenv("LISTEN_FDNAMES");
		if (names && name_len) {
			size_t l = strcspn(names, ":");
			if (l >= name_len)
				l = name_len - 1;
			memcpy(name, names, l);
			name[l] = '\0';
		}
	}
	sdn_unset_listen_env();
	if (err)
		return err;

	int fd = SDN_LISTEN_FDS_START;
	err = sdn_check_listener(fd);
	if (err)
		return err;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	return fd;
}

static struct {
	struct event *tick_ev; /* owned: watchdog and status timer */
	int watchdog;
	sdn_status_fn *status;
	char last[256]; /* the STATUS= text last sent */
} sdn;

static void sdn_tick(evutil_socket_t fd, short what, void *arg)
{
	/* Runs on the control loop: if the loop stalls, pings stop and the
	 * manager restarts us (WatchdogSec=, Restart=on-failure). */
	char now[sizeof(sdn.last)];
	sdn.status(now, sizeof(now));
	int changed = strcmp(now, sdn.last) != 0;
	if (changed)
		memcpy(sdn.last, now, sizeof(now));
	if (sdn.watchdog && changed)
		sdn_notifyf("WATCHDOG=1\nSTATUS=%s", now);
	else if (sdn.watchdog)
		sdn_notify("WATCHDOG=1");
	else if (changed)
		sdn_notifyf("STATUS=%s", now);
}

int sdn_ready(struct event_base *base, sdn_status_fn *status)
{
	const char *ns = getenv("NOTIFY_SOCKET");
	if (!ns || !*ns)
		return 0; /* not under a service manager */
	uint64_t usec = (uint64_t)SDN_STATUS_MS * 1000;
	int wd = sdn_watchdog_usec(&usec);
	if (wd < 0)
		log_warn("ignoring malformed WATCHDOG_USEC");
	if (wd > 0) {
		usec /= 2;
		log_info("watchdog: pinging every %llu ms",
			 (unsigned long long)(usec / 1000));
	}
	sdn.watchdog = wd > 0;
	sdn.status = status;
	struct timeval tv = { .tv_sec = usec / 1000000,
			      .tv_usec = usec % 1000000 };
	sdn.tick_ev = event_new(base, -1, EV_PERSIST, sdn_tick, NULL);
	if (!sdn.tick_ev || event_add(sdn.tick_ev, &tv) < 0) {
		if (sdn.tick_ev)
			event_free(sdn.tick_ev);
		sdn.tick_ev = NULL;
		return -ENOMEM;
	}
	status(sdn.last, sizeof(sdn.last));
	int err = sdn_notifyf("READY=1\nSTATUS=%s\nMAINPID=%d", sdn.last,
			      (int)getpid());
	if (err < 0)
		log_warn("sd_notify READY failed: %s", strerror(-err));
	return 0;
}

void sdn_stopping(const char *status)
{
	if (sdn.tick_ev)
		event_free(sdn.tick_ev);
	sdn.tick_ev = NULL;
	sdn_notifyf("STOPPING=1\nSTATUS=%s", status);
}
