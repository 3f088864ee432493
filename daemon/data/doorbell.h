/* SPDX-License-Identifier: MIT */
/*
 * Doorbells: how a client and the daemon wake each other, one pair per
 * queue, without either side being able to turn the other's call into
 * one that blocks.
 *
 * client -> daemon: an eventfd. The client writes it; the daemon never
 *   reads or writes it, so the flags the client may set on the shared
 *   open file (O_NONBLOCK) and the counter it may fill change nothing for
 *   us. The worker pool's private epoll watches it edge-triggered: every
 *   write is an edge, whatever the counter holds.
 * daemon -> client: a socketpair (SOCK_STREAM). The daemon's end is its
 *   own open file, shut for reading (so the client cannot send it bytes
 *   or descriptors), with a small send buffer, and written with
 *   MSG_DONTWAIT: a client that never reads only gets -EAGAIN back (a
 *   wake-up is pending anyway). Sending takes no lock the reader holds.
 */
#ifndef CRYPTOD_DOORBELL_H
#define CRYPTOD_DOORBELL_H

#include <cryptod/compiler.h>

/*
 * Create a queue's doorbells: *sq_efd (its copy goes to the client),
 * *cq_sock (ours) and *cq_peer (the client's end, to hand over and
 * close). 0 or -errno; on failure all three are -1.
 */
CRD_MUST_CHECK int doorbell_pair(int *sq_efd, int *cq_sock, int *cq_peer);

/* Close whichever of the three are open and set them to -1. */
void doorbell_close(int *sq_efd, int *cq_sock, int *cq_peer);

/*
 * Wake the client. Never blocks. 0, or -EAGAIN (a wake-up is already
 * waiting to be read), -EPIPE (the client closed its end): both harmless.
 */
int doorbell_ring_client(int cq_sock);

/*
 * Refuse SCM_RIGHTS on a socket we receive from, where the kernel can
 * (SO_PASSRIGHTS, Linux 6.16). 0, or -errno (-ENOPROTOOPT on older
 * kernels: descriptors that arrive must then be closed by fdreap).
 */
int doorbell_refuse_fds(int sock);

#endif
