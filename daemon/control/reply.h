/* SPDX-License-Identifier: MIT */
/* The replies every request handler sends: an Error or an Ack for seq, on
 * a client's non-blocking control socket. 0 or -errno (wire_send). */
#ifndef CRYPTOD_REPLY_H
#define CRYPTOD_REPLY_H

#include <cryptod/compiler.h>

#include <stdint.h>

/* code: a negative errno or a CRD_ST_* status; msg says why, for people. */
CRD_MUST_CHECK int reply_error(int fd, uint32_t seq, int code, const char *msg);
CRD_MUST_CHECK int reply_ack(int fd, uint32_t seq);

#endif
