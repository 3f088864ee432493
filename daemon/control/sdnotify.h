/* SPDX-License-Identifier: MIT */
/*
 * The two small systemd protocols the daemon speaks, without libsystemd:
 * sd_notify (readiness, status, watchdog, stopping) over $NOTIFY_SOCKET and
 * socket activation through $LISTEN_FDS/$LISTEN_PID/$LISTEN_FDNAMES. Without
 * systemd every call here is a no-op and the daemon binds its own socket.
 */
#ifndef CRYPTOD_SDNOTIFY_H
#define CRYPTOD_SDNOTIFY_H

#include <cryptod/compiler.h>

#include <stddef.h>
#include <stdint.h>

struct event_base;

/* First fd systemd passes (SD_LISTEN_FDS_START). */
enum { SDN_LISTEN_FDS_START = 3 };

/*
 * Send one notification ("READY=1", "STATUS=...", newline-separated
 * assignments) to $NOTIFY_SOCKET, a path or, with a leading '@', an
 * abstract socket. 1 if sent, 0 when $NOTIFY_SOCKET is unset, -errno.
 */
int sdn_notify(const char *state);
int sdn_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The watchdog interval systemd asked for ($WATCHDOG_USEC), in *usec:
 * 1 if enabled for this process, 0 when unset or meant for another pid
 * ($WATCHDOG_PID), -EINVAL when malformed.
 */
int sdn_watchdog_usec(uint64_t *usec);

/*
 * Socket activation: the inherited AF_UNIX SOCK_SEQPACKET listener, made
 * close-on-exec and non-blocking; its name from $LISTEN_FDNAMES (or "")
 * goes to name. Returns the fd, -ENOENT when nothing was passed to this
 * process, -EPROTOTYPE when the fd is not a listening AF_UNIX
 * SOCK_SEQPACKET socket, -E2BIG when more than one fd was passed, -EINVAL
 * for malformed variables. The LISTEN_* variables are removed from the
 * environment in every case, so nothing started later inherits them.
 */
CRD_MUST_CHECK int sdn_listen_fd(char *name, size_t name_len);

/* Writes a one-line status ("serving PATH: 3 clients, ...") into buf. */
typedef void sdn_status_fn(char *buf, size_t len);

/*
 * Service-manager glue on the control loop: READY=1 with status(), then a
 * libevent timer that pings WATCHDOG=1 at half the watchdog interval (so a
 * stuck control loop gets the service restarted) and sends STATUS= again
 * when it changed (what 'systemctl status' shows); every SDN_STATUS_MS
 * without a watchdog. No timer without $NOTIFY_SOCKET. 0 or -ENOMEM.
 */
enum { SDN_STATUS_MS = 5000 };
CRD_MUST_CHECK int sdn_ready(struct event_base *base, sdn_status_fn *status);
/* STOPPING=1 with status; stops the watchdog timer. */
void sdn_stopping(const char *status);

#endif
