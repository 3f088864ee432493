/* SPDX-License-Identifier: MIT */
/*
 * Control-socket framing shared by cryptod and libcryptoclient: one
 * protobuf-c Envelope per SOCK_SEQPACKET packet, at most CTL_MSG_MAX bytes,
 * optionally with file descriptors as SCM_RIGHTS.
 */
#ifndef CRYPTOD_WIRE_H
#define CRYPTOD_WIRE_H

#include <cryptod/compiler.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cryptod.pb-c.h"

enum wire_limits {
	CTL_MSG_MAX = 65536, /* bytes per packet, both directions */
	CTL_MAX_FDS = 4,     /* fds per packet */
	CTL_NAME_MAX = 64,   /* client_name bytes */
	CTL_KEY_MAX = 256,   /* key bytes in CreateSession (CRD_MAC_KEY_MAX) */
	/* A key pair's key bytes: DER in CreateSession (PKCS#8 of RSA-4096
	 * is about 2.4 KB), PEM or DER, perhaps encrypted, in a KeyRequest's
	 * import (docs/asymmetric.md) */
	CTL_PKEY_MAX = 8192,
	WIRE_SCM_MAX_FD = 253, /* the kernel's SCM_MAX_FD: most per message */
};

/* The largest total a UsageReport may carry (2^56 messages: centuries at
 * a billion a second), so that the daemon's sums over many connections
 * stay far from wrapping. */
#define CTL_USAGE_MAX ((uint64_t)1 << 56)

/*
 * Pack env and send it as one packet with nfds descriptors attached.
 * The packed bytes are wiped before they are freed (they may carry a key).
 * Returns 0 or -errno (-EMSGSIZE when the packed message exceeds the cap).
 */
CRD_MUST_CHECK int wire_send(int sock, const Cryptod__Envelope *env,
			     const int *fds, unsigned nfds);

/*
 * Receive one packet into buf (CTL_MSG_MAX bytes). Descriptors that arrive are
 * stored in fds[] up to max_fds and counted in *nfds; any beyond that are
 * closed. Returns the packet length, -EPIPE at end of stream, -EMSGSIZE for
 * a truncated (oversized) packet or truncated control data (fds closed),
 * or another -errno.
 */
CRD_MUST_CHECK ssize_t wire_recv(int sock, uint8_t *buf, int *fds,
				 unsigned max_fds, unsigned *nfds);

/*
 * wire_recv(), but descriptors beyond max_fds go to sink (NULL: close)
 * and are counted in *nsunk (may be NULL). Every descriptor the kernel
 * passes with a message is received: none is dropped by the kernel in
 * the caller's thread.
 */
CRD_MUST_CHECK ssize_t wire_recv_sink(int sock, uint8_t *buf, int *fds,
				      unsigned max_fds, unsigned *nfds,
				      void (*sink)(int fd), unsigned *nsunk);

/* Unpack; NULL when malformed, which includes a string field (of any
 * message, at any depth) with a NUL inside: protobuf-c would cut it
 * there, so the name acted on would not be the name sent. Free with
 * wire_free(). Every allocation the message owns is wiped when it is
 * freed, by wire_free() or by the parser itself (a replaced oneof
 * member, a failed parse). */
Cryptod__Envelope *wire_decode(const uint8_t *buf, size_t len);

/* Free a message from wire_decode(), every byte of it wiped. NULL is a
 * no-op. */
void wire_free(Cryptod__Envelope *env);

/*
 * The socket path used when none is given: $CRYPTOD_SOCKET, else
 * /run/cryptod/cryptod.sock for root, else $XDG_RUNTIME_DIR/cryptod.sock,
 * else /tmp/cryptod-$UID/cryptod.sock. Returns 0 or -ENAMETOOLONG.
 */
CRD_MUST_CHECK int wire_default_socket_path(char *buf, size_t len);

/* Close every fd in fds[0..n). */
void wire_close_fds(int *fds, unsigned n);

#endif /* CRYPTOD_WIRE_H */
