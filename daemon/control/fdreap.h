/* SPDX-License-Identifier: MIT */
/*
 * The reaper: closes descriptors that clients pushed at us, on a thread of
 * its own. close() can block for as long as the file's owner likes (a TCP
 * socket with SO_LINGER and unsent data, a FUSE file's flush): it must
 * never run on the control thread or a worker. Only the reaper itself can
 * be slowed, and it holds nothing anybody waits for.
 */
#ifndef CRYPTOD_FDREAP_H
#define CRYPTOD_FDREAP_H

#include <cryptod/compiler.h>

/* Start the thread. 0 or -errno. */
CRD_MUST_CHECK int fdreap_start(void);

/*
 * Hand fd over to be closed. Never blocks (a mutex held for a few
 * instructions). If the reaper is not running or out of memory, fd is
 * closed here after its lingering is switched off.
 */
void fdreap_push(int fd);

/* Descriptors waiting to be closed. */
unsigned fdreap_backlog(void);

/* Let the thread go; what is still queued is closed by process exit.
 * Never waits for a slow close. */
void fdreap_stop(void);

#endif
