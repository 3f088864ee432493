/* SPDX-License-Identifier: MIT */
/* Control plane: the SOCK_SEQPACKET listener and per-client message
 * handling, all on the libevent thread. */
#ifndef CRYPTOD_CTL_H
#define CRYPTOD_CTL_H

#include <cryptod/compiler.h>

#include <stdint.h>
#include <sys/types.h>

struct event_base;

/* Bind and listen on path (creating its directory), socket mode 'mode'.
 * Refuses to steal a socket another daemon is serving. Under socket
 * activation ($LISTEN_FDS) serves the inherited listener instead and
 * ignores path and mode. 0 or -errno. */
CRD_MUST_CHECK int ctl_start(struct event_base *base, const char *path,
			     mode_t mode);
/* Only the first half of ctl_start, for a daemon that drops root before
 * it serves (privdrop.h): create path's directory, bind and listen, mode
 * 'mode'. ctl_start then serves this socket. Not under socket
 * activation. 0 or -errno. */
CRD_MUST_CHECK int ctl_bind(const char *path, mode_t mode);
/* The path served (for logs): ours, or the one systemd passed. */
const char *ctl_socket_path(void);
/* Give the socket file to group gid (socket_group); a no-op under socket
 * activation, where the unit decides. 0 or -errno. */
CRD_MUST_CHECK int ctl_set_group(gid_t gid);
/* One line for the service manager's STATUS=: socket, clients, sessions. */
void ctl_status(char *buf, size_t len);
/* Stop accepting and remove the socket file (unless systemd owns it). */
void ctl_stop_listening(void);
/* Disconnect every client, freeing what they own. */
void ctl_close_all(void);

#endif
