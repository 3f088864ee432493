/* SPDX-License-Identifier: MIT */
#include "doorbell.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

/* asm-generic/socket.h (x86, arm64, riscv, ...); older headers lack it. */
#if !defined(SO_PASSRIGHTS) &&                                                 \
	(defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) ||   \
	 defined(__arm__) || defined(__riscv) || defined(__loongarch__))
#define SO_PASSRIGHTS 83
#endif

/* The daemon's end holds at most a few pending wake-ups: the kernel
 * doubles this and enforces its own minimum. */
enum { DOORBELL_SNDBUF = 4096 };

int doorbell_refuse_fds(int sock)
{
#ifdef SO_PASSRIGHTS
	int off = 0;
	return setsockopt(sock, SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off)) <
			       0
		       ? -errno
		       : 0;
#else
	(void)sock;
	return -ENOPROTOOPT;
#endif
}

int doorbell_pair(int *sq_efd, int *cq_sock, int *cq_peer)
{
	int sv[2], err;
	*sq_efd = *cq_sock = *cq_peer = -1;

	*sq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (*sq_efd < 0)
		goto err;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
		       sv) < 0)
		goto err;
	*cq_sock = sv[0];
	*cq_peer = sv[1];
	/* Nothing may be sent to our end: the client's sends then fail
	 * with EPIPE, so no byte and no descriptor can ever queue here. */
	if (shutdown(*cq_sock, SHUT_RD) < 0)
		goto err;
	int sndbuf = DOORBELL_SNDBUF;
	if (setsockopt(*cq_sock, SOL_SOCKET, SO_SNDBUF, &sndbuf,
		       sizeof(sndbuf)) < 0)
		goto err;
	(void)doorbell_refuse_fds(*cq_sock); /* belt and braces */
	return 0;

err:
	err = -errno;
	doorbell_close(sq_efd, cq_sock, cq_peer);
	return err;
}

void doorbell_close(int *sq_efd, int *cq_sock, int *cq_peer)
{
	int *fds[3] = { sq_efd, cq_sock, cq_peer };
	for (int i = 0; i < 3; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int doorbell_ring_client(int cq_sock)
{
	static const char b = 1;
	if (send(cq_sock, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
		return 0;
	return -errno;
}
